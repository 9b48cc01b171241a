// SPDX-License-Identifier: GPL-2.0-only
/*
 * Per-rule hits of counted filters (SF_ATTACH_COUNT) for --metrics: what
 * `sfctl show --hits` shows, served as sfilter_rule_hits_total{filter,
 * insn, action}, one series per ret instruction.
 *
 * Why the loop reads them and the render does not: the counters are
 * reached only through sf_runtime_filter_hits(), which takes the runtime's
 * lock (a filter's range of sf_hits is the runtime's own, chains.c), and
 * that lock is held by attaches, the gate's judge and the verifier's
 * install steps. Taken on the HTTP thread, a scrape would wait for them,
 * and while a scrape held it, for up to 64 filters' reads, an attach
 * would wait for the scrape. So the loop reads a few filters a turn (at
 * most HITS_TURN_ENTRIES counters, each filter once per HITS_PERIOD_MS:
 * a turn's share is a fraction of a millisecond) and publishes an
 * immutable snapshot; the render takes it by reference under a mutex held
 * only to copy a pointer. Neither waits for the other's work; the counts
 * served are at most about a second old.
 *
 * Which filters: those admin.c sees attached with the flag (at once), and
 * every HITS_SCAN_MS those that confined tasks run (an adopted pinned
 * install's, a cgroup's filter that a task joined). At most HITS_FILTERS
 * of them are followed; the counted filters seen beyond that are counted
 * in sfilter_rule_hits_filters_left_out. A filter replaced is read again
 * (its rets changed); one the runtime no longer has is dropped. The
 * profile rule an instruction came from is not known here (the daemon is
 * sent the classic program alone), so no label says it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "daemon.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HITS_FILTERS      64
#define HITS_PERIOD_MS    1000
#define HITS_SCAN_MS      5000
#define HITS_TURN_ENTRIES 1024
#define UNCOUNTED_MAX     4096

/* ---- the loop's ----------------------------------------------------------- */

struct followed {
	uint32_t id;
	uint32_t len;              /* instructions: counts has len + 1 */
	struct sock_filter *insns;
	uint64_t *counts;          /* NULL until read */
	uint64_t read_ms;
	bool stale;                /* replaced: its program is read again */
};
static struct followed fl[HITS_FILTERS];
static size_t n_fl;
static uint32_t left_out;        /* counted filters seen, not followed */
static uint64_t scanned_ms;
static bool scanned;
/* Filters seen without the flag, sorted: an id is never reused, and its
 * flags never change, so each is asked about once. */
static uint32_t uncounted[UNCOUNTED_MAX];
static size_t n_uncounted;

/* ---- published ------------------------------------------------------------ */

struct hits_row {
	uint32_t filter, insn;
	char action[24];
	uint64_t count;
};
struct hits_snap {
	unsigned int refs;         /* the current one holds one */
	uint32_t left_out;
	size_t n;
	struct hits_row rows[];
};
static pthread_mutex_t snap_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hits_snap *cur;

static void unref(struct hits_snap *s)
{
	bool last;

	if (!s)
		return;
	pthread_mutex_lock(&snap_lock);
	last = --s->refs == 0;
	pthread_mutex_unlock(&snap_lock);
	if (last)
		free(s);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static bool is_followed(uint32_t id)
{
	size_t i;

	for (i = 0; i < n_fl; i++)
		if (fl[i].id == id)
			return true;
	return false;
}

static void add_uncounted(uint32_t id)
{
	size_t i;

	if (n_uncounted == UNCOUNTED_MAX)
		n_uncounted = 0; /* a cache: start over */
	for (i = n_uncounted; i > 0 && uncounted[i - 1] > id; i--)
		uncounted[i] = uncounted[i - 1];
	uncounted[i] = id;
	n_uncounted++;
}

/* f's program, as the runtime has it now: 0, -ENODATA (not counted),
 * -ENOENT (gone), -errno. */
static int load(struct followed *f)
{
	struct sock_filter *insns = NULL;
	struct sf_filter_info info;
	int r = sf_runtime_filter(sfd.rt, f->id, &info, &insns);

	if (r)
		return r;
	if (!(info.flags & SF_FLAG_COUNT)) {
		free(insns);
		return -ENODATA;
	}
	free(f->insns);
	free(f->counts);
	f->insns = insns;
	f->len = info.len;
	f->counts = NULL;
	f->stale = false;
	return 0;
}

static void follow(uint32_t id)
{
	int r;

	if (n_fl == HITS_FILTERS) {
		left_out++;
		return;
	}
	fl[n_fl] = (struct followed){ .id = id };
	r = load(&fl[n_fl]);
	if (r == 0)
		n_fl++;
	else if (r == -ENODATA)
		add_uncounted(id);
	/* -ENOENT: a cgroup's filter no task has joined yet, found by a
	 * scan once one has. */
}

static void drop(size_t i)
{
	free(fl[i].insns);
	free(fl[i].counts);
	fl[i] = fl[--n_fl];
}

void metrics_hits_track(uint32_t id)
{
	size_t i;

	for (i = 0; i < n_fl; i++)
		if (fl[i].id == id) {
			fl[i].stale = true;
			return;
		}
	follow(id);
}

/* The counted filters that confined tasks run, followed while there is
 * room; the rest counted as left out. */
static void scan(void)
{
	struct id_list l = { 0 };
	uint32_t left = 0;
	size_t i;

	if (sf_runtime_for_each_task(sfd.rt, id_list_add_task, &l) < 0) {
		free(l.ids);
		return;
	}
	if (l.n)
		qsort(l.ids, l.n, sizeof(*l.ids), cmp_u32);
	for (i = 0; i < l.n; i++) {
		struct sf_filter_info info;
		uint32_t id = l.ids[i];

		if ((i && id == l.ids[i - 1]) || is_followed(id) ||
		    bsearch(&id, uncounted, n_uncounted, sizeof(id), cmp_u32))
			continue;
		if (sf_runtime_filter(sfd.rt, id, &info, NULL))
			continue;
		if (!(info.flags & SF_FLAG_COUNT))
			add_uncounted(id);
		else if (n_fl == HITS_FILTERS)
			left++;
		else
			follow(id);
	}
	left_out = left;
	free(l.ids);
}

/* Whether an error says the filter is gone or not counted: dropped. */
static int gone(int r)
{
	return r == -ENOENT || r == -ENODATA ? r : 0;
}

/* Reads f's counters: 0 (also when it could not now: the next period
 * tries again), or -ENOENT / -ENODATA when it is to be dropped. */
static int refresh(struct followed *f, uint64_t now)
{
	uint64_t *counts = NULL;
	int n, r;

	f->read_ms = now;
	if (f->stale && (r = load(f)))
		return gone(r);
	n = sf_runtime_filter_hits(sfd.rt, f->id, &counts);
	if (n > 0 && (uint32_t)n != f->len + 1) {
		/* Replaced by someone whose replace this loop did not see
		 * (an adopted predecessor's): its program again. */
		free(counts);
		counts = NULL;
		if ((r = load(f)))
			return gone(r);
		n = sf_runtime_filter_hits(sfd.rt, f->id, &counts);
		if (n > 0 && (uint32_t)n != f->len + 1)
			n = -EAGAIN;
	}
	if (n < 0) {
		free(counts);
		return gone(n);
	}
	free(f->counts);
	f->counts = counts;
	return 0;
}

static bool is_ret(const struct sock_filter *insn)
{
	return BPF_CLASS(insn->code) == BPF_RET;
}

static int by_row(const void *a, const void *b)
{
	const struct hits_row *x = a, *y = b;

	if (x->filter != y->filter)
		return x->filter < y->filter ? -1 : 1;
	return x->insn < y->insn ? -1 : x->insn > y->insn;
}

/* A ret's action as sfctl's text form writes it: "ERRNO(1)", "ALLOW";
 * "A" for `ret a` (the accumulator's value, known at run time); the
 * implicit return 0 is KILL_THREAD. */
static void action_of(const struct followed *f, uint32_t i, char *out, size_t size)
{
	char buf[64];
	const char *sp;

	if (i < f->len && BPF_RVAL(f->insns[i].code) == BPF_A) {
		snprintf(out, size, "A");
		return;
	}
	c2e_verdict_str(i < f->len ? f->insns[i].k : 0, buf, sizeof(buf));
	sp = strchr(buf, ' ');
	snprintf(out, size, "%.23s", sp ? sp + 1 : buf);
}

static void publish(void)
{
	struct hits_snap *s, *old;
	size_t rows = 0, i;
	uint32_t k;

	for (i = 0; i < n_fl; i++)
		for (k = 0; fl[i].counts && k <= fl[i].len; k++)
			rows += k < fl[i].len ? is_ret(&fl[i].insns[k]) : fl[i].counts[k] != 0;
	s = malloc(sizeof(*s) + rows * sizeof(s->rows[0]));
	if (!s)
		return;
	s->refs = 1;
	s->left_out = left_out;
	s->n = 0;
	for (i = 0; i < n_fl; i++)
		for (k = 0; fl[i].counts && k <= fl[i].len; k++) {
			struct hits_row *r = &s->rows[s->n];

			/* The implicit return 0 (a division by zero, a failed
			 * load) only once taken, as sfctl shows it. */
			if (k < fl[i].len ? !is_ret(&fl[i].insns[k]) : !fl[i].counts[k])
				continue;
			r->filter = fl[i].id;
			r->insn = k;
			r->count = fl[i].counts[k];
			action_of(&fl[i], k, r->action, sizeof(r->action));
			s->n++;
		}
	qsort(s->rows, s->n, sizeof(s->rows[0]), by_row);
	pthread_mutex_lock(&snap_lock);
	old = cur;
	cur = s;
	pthread_mutex_unlock(&snap_lock);
	unref(old);
}

void metrics_hits_tick(uint64_t now)
{
	size_t i = 0, budget = HITS_TURN_ENTRIES;
	bool changed = false;

	if (!scanned || now - scanned_ms >= HITS_SCAN_MS) {
		scan();
		scanned = true;
		scanned_ms = now;
		changed = true;
	}
	while (i < n_fl && budget > 0) {
		struct followed *f = &fl[i];

		if (f->counts && !f->stale && now - f->read_ms < HITS_PERIOD_MS) {
			i++;
			continue;
		}
		changed = true;
		if (refresh(f, now) < 0) {
			drop(i); /* the last one moved into i */
			continue;
		}
		budget -= budget < f->len + 1 ? budget : f->len + 1;
		i++;
	}
	if (changed)
		publish();
}

void metrics_hits_render(FILE *f)
{
	struct hits_snap *s;
	size_t i;

	pthread_mutex_lock(&snap_lock);
	if ((s = cur))
		s->refs++;
	pthread_mutex_unlock(&snap_lock);
	fprintf(f, "# HELP sfilter_rule_hits_total how often each ret of a counted filter "
		"(attached with --count) was taken, by filter, classic instruction index and "
		"the action it returns (A: the accumulator's); read every second, at most %d "
		"filters (see sfilter_rule_hits_filters_left_out)\n"
		"# TYPE sfilter_rule_hits_total counter\n", HITS_FILTERS);
	for (i = 0; s && i < s->n; i++)
		fprintf(f, "sfilter_rule_hits_total{filter=\"%u\",insn=\"%u\",action=\"%s\"} %llu\n",
			s->rows[i].filter, s->rows[i].insn, s->rows[i].action,
			(unsigned long long)s->rows[i].count);
	fprintf(f, "# HELP sfilter_rule_hits_filters_left_out counted filters whose rule hits "
		"are not served: past the first %d followed\n"
		"# TYPE sfilter_rule_hits_filters_left_out gauge\n"
		"sfilter_rule_hits_filters_left_out %u\n", HITS_FILTERS, s ? s->left_out : 0);
	unref(s);
}

void metrics_hits_stop(void)
{
	while (n_fl)
		drop(n_fl - 1);
	pthread_mutex_lock(&snap_lock);
	if (cur && --cur->refs == 0)
		free(cur);
	cur = NULL;
	pthread_mutex_unlock(&snap_lock);
}
