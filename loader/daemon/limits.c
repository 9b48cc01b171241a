// SPDX-License-Identifier: GPL-2.0-only
/*
 * Limits on what non-admin peers attach (docs/security.md): how many
 * filters a login user has (login.c: a uid, with the subordinate uids it
 * maps), their classic instructions, and how fast it asks; and the share
 * of the chain slots that non-admin filters may take at all. Only the
 * asking login user is ever refused, but that the last chain slots are
 * kept for admins, whose attaches start containers; admins are not
 * counted.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "daemon.h"
#include "grow.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Chain slots only an admin's attach may take: a quarter of them, so that
 * with every other user at its limit, containers still start. */
#define ADMIN_SLOTS (SF_MAX_CHAINS / 4)

/* Filters the daemon attached for non-admin peers, for the per-login-user
 * limits. An entry whose filter is no longer in any task's chain is
 * dropped when a login user reaches a limit (refresh_accounts()). */
struct acct_filter { uint32_t id; struct login who; uint32_t len; };
static struct acct_filter *accts;
static size_t n_acct, cap_acct;
/* Token buckets for the attach rate, one per login user that asked within
 * the last second: a bucket that has filled up again is the same as none,
 * and makes room for another (bucket_of()). */
struct rate { struct login who; double tokens; struct timespec last; };
static struct rate *rates;
static size_t n_rates, cap_rates;

void limits_account(uint32_t id, const struct client *c, uint32_t len)
{
	size_t i;

	for (i = 0; i < n_acct; i++)
		if (accts[i].id == id)
			return; /* deduplicated: the same filter counts once */
	if (C2E_GROW(accts, cap_acct, n_acct + 1))
		return;
	accts[n_acct++] = (struct acct_filter){ id, c->login, len };
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
		if (C2E_GROW(l->ids, l->cap, l->n + 1))
			return -ENOMEM;
		l->ids[l->n++] = t->filter_ids[i];
	}
	return 0;
}

/* Forgets filters no task uses any more (their tasks exited). */
static void refresh_accounts(void)
{
	struct id_list l = { 0 };
	size_t i, j;

	if (sf_runtime_for_each_task(sfd.rt, id_list_add_task, &l) < 0) {
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

static void usage_of(const struct login *who, uint32_t *progs, uint64_t *insns)
{
	size_t i;

	*progs = 0;
	*insns = 0;
	for (i = 0; i < n_acct; i++)
		if (login_eq(&accts[i].who, who)) {
			(*progs)++;
			*insns += accts[i].len;
		}
}

static double seconds_since(const struct timespec *then, const struct timespec *now)
{
	return (now->tv_sec - then->tv_sec) + (now->tv_nsec - then->tv_nsec) / 1e9;
}

/* who's bucket, or a new full one; NULL only when memory is short. */
static struct rate *bucket_of(const struct login *who, const struct timespec *now)
{
	size_t i, kept = 0;

	for (i = 0; i < n_rates; i++)
		if (login_eq(&rates[i].who, who))
			return &rates[i];
	if (n_rates == cap_rates) {
		/* Those that refilled since (at sfd.max_rate a second, to
		 * sfd.max_rate: in a second at most) are dropped. */
		for (i = 0; i < n_rates; i++)
			if (rates[i].tokens + seconds_since(&rates[i].last, now) * sfd.max_rate <
			    sfd.max_rate)
				rates[kept++] = rates[i];
		n_rates = kept;
	}
	if (C2E_GROW(rates, cap_rates, n_rates + 1))
		return NULL;
	rates[n_rates] = (struct rate){ *who, sfd.max_rate, *now };
	return &rates[n_rates++];
}

/* 0, or EAGAIN when who has asked more than sfd.max_rate times in the last
 * second (bursts of as many), or memory is short to tell. */
static int check_rate(const struct login *who, const char *name, char *msg, size_t msz)
{
	struct timespec now;
	struct rate *rt;

	if (!sfd.max_rate)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &now);
	rt = bucket_of(who, &now);
	if (!rt) {
		snprintf(msg, msz, "%s: out of memory to count its attach requests", name);
		return EAGAIN;
	}
	rt->tokens += seconds_since(&rt->last, &now) * sfd.max_rate;
	if (rt->tokens > sfd.max_rate)
		rt->tokens = sfd.max_rate;
	rt->last = now;
	if (rt->tokens < 1) {
		snprintf(msg, msz, "%s: more than %u attach requests per second", name,
			 sfd.max_rate);
		return EAGAIN;
	}
	rt->tokens -= 1;
	return 0;
}

/* 0, or ENOSPC when a non-admin filter could take one of the chain slots
 * kept for admins. Counting the slots that no task uses any more takes a
 * pass over every task: only when the empty ones are that few. */
static int check_slots(char *msg, size_t msz)
{
	struct sf_slot_usage u;
	int r = sf_runtime_slot_usage(sfd.rt, false, &u);

	if (r == 0 && u.empty > ADMIN_SLOTS)
		return 0;
	if (r == 0)
		r = sf_runtime_slot_usage(sfd.rt, true, &u);
	if (r == 0 && u.empty + u.reclaimable > ADMIN_SLOTS)
		return 0;
	if (r < 0)
		snprintf(msg, msz, "cannot count the chain slots in use: %s", strerror(-r));
	else
		snprintf(msg, msz, "%u of %u chain slots are in use: the last %u are kept "
			 "for administrators", u.total - u.empty - u.reclaimable, u.total,
			 ADMIN_SLOTS);
	return ENOSPC;
}

int limits_check(const struct client *c, uint32_t n_insns, char *msg, size_t msz)
{
	char name[128];
	uint32_t progs;
	uint64_t insns;
	int r;

	login_name(&c->login, c->uid, name, sizeof(name));
	if ((r = check_rate(&c->login, name, msg, msz)) != 0)
		return r;
	usage_of(&c->login, &progs, &insns);
	if (progs + 1 > sfd.max_programs || insns + n_insns > sfd.max_insns) {
		refresh_accounts();
		usage_of(&c->login, &progs, &insns);
	}
	if (progs + 1 > sfd.max_programs) {
		snprintf(msg, msz, "%s already has %u filters (limit %u)",
			 name, progs, sfd.max_programs);
		return ENOSPC;
	}
	if (insns + n_insns > sfd.max_insns) {
		snprintf(msg, msz, "%s: %" PRIu64 " + %u instructions exceed the limit of %u",
			 name, insns, n_insns, sfd.max_insns);
		return ENOSPC;
	}
	return check_slots(msg, msz);
}
