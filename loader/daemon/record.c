// SPDX-License-Identifier: GPL-2.0-only
/*
 * Recordings (SF_MSG_RECORD, docs/protocol.md): which (arch, syscall) a
 * filter judged, for sfilter-oci-hook's io.sfilter.record, which attaches
 * a complain filter to a container's cgroup and writes the profile its
 * calls make once the container stops.
 *
 * The source is the kernel's counters (sf_stats): every call a complain
 * filter logs is counted there by filter, before folding and before any
 * budget, so a recording misses none of the calls the log drops. They are
 * an LRU map, which a flood of 16,384 other keys would turn over; the
 * loop reads them once a second while a recording runs, and a TAKE reads
 * them once more, so a key must come and go within a second to be missed.
 * A filter's counters outlive it (filter ids are never reused), so a
 * container whose cgroup is gone, and its filter with it, is still read.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "daemon.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <json-c/json.h>

/* Recordings at once: a START past it ends the oldest. */
#define RECORDS_MAX 256
/* Syscall numbers kept per arch; the rest are counted in "other". */
#define RECORD_NRS 1024
#define RECORD_ARCHES 3   /* x86_64, i386, x32 */

struct recording {
	uint32_t filter_id;        /* 0: a free slot */
	uint64_t started;          /* the order of STARTs */
	uint8_t seen[RECORD_ARCHES][RECORD_NRS / 8];
	uint64_t other;            /* calls of numbers past RECORD_NRS */
};

static struct {
	struct recording r[RECORDS_MAX];
	uint64_t starts;
	size_t n;
	struct timespec last;
} rec;

static const char *const arch_names[RECORD_ARCHES] = { "x86_64", "i386", "x32" };

static struct recording *find(uint32_t filter_id)
{
	size_t i;

	for (i = 0; i < RECORDS_MAX; i++)
		if (rec.r[i].filter_id == filter_id && filter_id)
			return &rec.r[i];
	return NULL;
}

/* Every counter of the recorded filters, into their recordings. */
static void scan(void)
{
	struct sf_stat *all;
	size_t n, i;

	if (!rec.n || sf_runtime_stats(sfd.rt, &all, &n) < 0)
		return;
	for (i = 0; i < n; i++) {
		struct recording *r = find(all[i].filter_id);
		uint32_t nr = (uint32_t)all[i].nr;
		int a = all[i].arch == C2E_AUDIT_ARCH_I386 ? 1 : (nr & C2E_X32_SYSCALL_BIT) ? 2 : 0;

		if (!r)
			continue;
		nr &= ~(uint32_t)C2E_X32_SYSCALL_BIT;
		if (nr < RECORD_NRS)
			r->seen[a][nr / 8] |= (uint8_t)(1u << (nr % 8));
		else
			r->other += all[i].count;
	}
	free(all);
}

void record_tick(void)
{
	struct timespec now;

	if (!rec.n)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec == rec.last.tv_sec)
		return;
	rec.last = now;
	scan();
}

static int start(uint32_t filter_id, char *msg, size_t msz)
{
	struct recording *r = find(filter_id), *oldest = NULL;
	size_t i;

	if (r) {
		snprintf(msg, msz, "filter %u is being recorded already", filter_id);
		return EEXIST;
	}
	for (i = 0; i < RECORDS_MAX && !r; i++) {
		if (!rec.r[i].filter_id)
			r = &rec.r[i];
		else if (!oldest || rec.r[i].started < oldest->started)
			oldest = &rec.r[i];
	}
	if (!r) {
		diag("recording of filter %u ended untaken: %d recordings at once at most",
		     oldest->filter_id, RECORDS_MAX);
		r = oldest;
		rec.n--;
	}
	memset(r, 0, sizeof(*r));
	r->filter_id = filter_id;
	r->started = ++rec.starts;
	rec.n++;
	snprintf(msg, msz, "recording the calls filter %u judges", filter_id);
	return 0;
}

static int take(uint32_t filter_id, struct json_object *o, char *msg, size_t msz)
{
	struct recording *r = find(filter_id);
	struct json_object *arches;
	size_t calls = 0;
	int a;
	uint32_t nr;

	if (!r) {
		snprintf(msg, msz, "filter %u is not being recorded", filter_id);
		return ENOENT;
	}
	scan();
	arches = json_object_new_object();
	for (a = 0; a < RECORD_ARCHES; a++) {
		struct json_object *list = json_object_new_array();

		for (nr = 0; nr < RECORD_NRS; nr++)
			if (r->seen[a][nr / 8] >> (nr % 8) & 1) {
				json_object_array_add(list, json_object_new_int((int)nr));
				calls++;
			}
		json_object_object_add(arches, arch_names[a], list);
	}
	json_object_object_add(o, "arches", arches);
	json_object_object_add(o, "other", json_object_new_uint64(r->other));
	snprintf(msg, msz, "recording of filter %u taken: %zu (arch, syscall) pairs", filter_id,
		 calls);
	memset(r, 0, sizeof(*r));
	rec.n--;
	return 0;
}

int record_request(const void *req, size_t n, uint32_t *id, struct json_object *o, char *msg,
		   size_t msz)
{
	const struct sf_record_req *r = req;

	if (n != SF_PROTO_RECORD_REQ_SIZE) {
		snprintf(msg, msz, "a record request is %u bytes, not %zu",
			 SF_PROTO_RECORD_REQ_SIZE, n);
		return EPROTO;
	}
	*id = r->filter_id;
	if (!r->filter_id) {
		snprintf(msg, msz, "filter 0: no such filter");
		return EINVAL;
	}
	if (r->op == SF_RECORD_START)
		return start(r->filter_id, msg, msz);
	if (r->op == SF_RECORD_TAKE)
		return take(r->filter_id, o, msg, msz);
	snprintf(msg, msz, "record: unknown op %u (1: start, 2: take)", r->op);
	return EINVAL;
}
