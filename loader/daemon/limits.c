// SPDX-License-Identifier: GPL-2.0
/*
 * Per-uid limits on what non-admin peers attach (docs/security.md): how
 * many filters a uid has, their classic instructions, and how fast it
 * asks. Only the asking uid is ever refused; admins are not counted.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "daemon.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Filters the daemon attached for non-admin peers, for the per-uid limits.
 * An entry whose filter is no longer in any task's chain is dropped when a
 * uid reaches a limit (refresh_accounts()). */
struct acct_filter { uint32_t id; uid_t uid; uint32_t len; };
static struct acct_filter *accts;
static size_t n_acct, cap_acct;
/* Token buckets for the attach rate, one per uid seen. */
struct rate { uid_t uid; double tokens; struct timespec last; };
static struct rate rates[1024];
static size_t n_rates;

void limits_account(uint32_t id, uid_t uid, uint32_t len)
{
	size_t i;

	for (i = 0; i < n_acct; i++)
		if (accts[i].id == id)
			return; /* deduplicated: the same filter counts once */
	if (n_acct == cap_acct) {
		size_t cap = cap_acct ? 2 * cap_acct : 64;
		struct acct_filter *a = realloc(accts, cap * sizeof(*a));

		if (!a)
			return;
		accts = a;
		cap_acct = cap;
	}
	accts[n_acct++] = (struct acct_filter){ id, uid, len };
}

void limits_forget(uint32_t id)
{
	size_t i;

	for (i = 0; i < n_acct; i++)
		if (accts[i].id == id) {
			accts[i] = accts[--n_acct];
			return;
		}
}

void limits_resize(uint32_t id, uint32_t len)
{
	size_t i;

	for (i = 0; i < n_acct; i++)
		if (accts[i].id == id)
			accts[i].len = len;
}

int id_list_add_task(void *ctx, const struct sf_task_info *t)
{
	struct id_list *l = ctx;
	uint32_t i, n = t->n_filters < 64 ? t->n_filters : 64;

	for (i = 0; i < n; i++) {
		if (l->n == l->cap) {
			size_t cap = l->cap ? 2 * l->cap : 256;
			uint32_t *p = realloc(l->ids, cap * sizeof(*p));

			if (!p)
				return -ENOMEM;
			l->ids = p;
			l->cap = cap;
		}
		l->ids[l->n++] = t->filter_ids[i];
	}
	return 0;
}

/* Forgets filters no task uses any more (their tasks exited). */
static void refresh_accounts(void)
{
	struct id_list l = { 0 };
	size_t i, j;

	if (sf_runtime_for_each_task(d.rt, id_list_add_task, &l) < 0) {
		free(l.ids);
		return;
	}
	for (i = 0; i < n_acct;) {
		for (j = 0; j < l.n && l.ids[j] != accts[i].id; j++)
			;
		if (j == l.n)
			accts[i] = accts[--n_acct];
		else
			i++;
	}
	free(l.ids);
}

static void usage_of(uid_t uid, uint32_t *progs, uint64_t *insns)
{
	size_t i;

	*progs = 0;
	*insns = 0;
	for (i = 0; i < n_acct; i++)
		if (accts[i].uid == uid) {
			(*progs)++;
			*insns += accts[i].len;
		}
}

/* 0, or EAGAIN when uid has asked more than d.max_rate times in the last
 * second (bursts of as many). */
static int check_rate(uid_t uid, char *msg, size_t msz)
{
	struct timespec now;
	struct rate *rt = NULL;
	size_t i;

	clock_gettime(CLOCK_MONOTONIC, &now);
	for (i = 0; i < n_rates; i++)
		if (rates[i].uid == uid)
			rt = &rates[i];
	if (!rt && n_rates < sizeof(rates) / sizeof(rates[0])) {
		rt = &rates[n_rates++];
		*rt = (struct rate){ uid, d.max_rate, now };
	}
	if (rt && d.max_rate) {
		double dt = (now.tv_sec - rt->last.tv_sec) +
			    (now.tv_nsec - rt->last.tv_nsec) / 1e9;

		rt->tokens += dt * d.max_rate;
		if (rt->tokens > d.max_rate)
			rt->tokens = d.max_rate;
		rt->last = now;
		if (rt->tokens < 1) {
			snprintf(msg, msz, "uid %u: more than %u attach requests per second",
				 uid, d.max_rate);
			return EAGAIN;
		}
		rt->tokens -= 1;
	}
	return 0;
}

int limits_check(uid_t uid, uint32_t n_insns, char *msg, size_t msz)
{
	uint32_t progs;
	uint64_t insns;
	int r;

	if ((r = check_rate(uid, msg, msz)) != 0)
		return r;
	usage_of(uid, &progs, &insns);
	if (progs + 1 > d.max_programs || insns + n_insns > d.max_insns) {
		refresh_accounts();
		usage_of(uid, &progs, &insns);
	}
	if (progs + 1 > d.max_programs) {
		snprintf(msg, msz, "uid %u already has %u filters (limit %u)",
			 uid, progs, d.max_programs);
		return ENOSPC;
	}
	if (insns + n_insns > d.max_insns) {
		snprintf(msg, msz, "uid %u: %" PRIu64 " + %u instructions exceed the limit of %u",
			 uid, insns, n_insns, d.max_insns);
		return ENOSPC;
	}
	return 0;
}
