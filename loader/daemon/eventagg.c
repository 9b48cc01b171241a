// SPDX-License-Identifier: GPL-2.0-only
/*
 * Counted events. The kernel folds repeated calls (bpf/sfilter.h, struct
 * sf_agg_key): a key's first call makes its event, the calls in the
 * interval after it only count, and every event carries its key's total
 * so far. Here each event gets its count, the calls it stands for: its
 * total less what the key's earlier events carried. Once a key's interval
 * is over with calls that no event carried (a loop that stopped, or events
 * lost to a budget or a full ring), a "repeat" event says how many.
 *
 * What each key's events carried is kept in a table that mirrors sf_agg:
 * every walk of the map rebuilds it from the keys still there, so it never
 * holds many more entries than the map.
 *
 * The gate's calls are judged here, not in the kernel (gate.c, on the
 * gate's thread), so their repeats fold here, the same way, in a table of
 * GATE_SLOTS keys in place of sf_agg: a key that takes another's slot
 * evicts it, as the kernel's LRU would. Their keys are told from the
 * kernel's by pad (the kernel leaves it 0).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "daemon.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct seen {
	struct sf_agg_key key;
	uint64_t first;   /* the entry's first_ns: another is a new entry */
	uint64_t total;   /* what the key's events carried */
	bool used;
};

/* Open addressing, a power of two in size, at most half full. */
struct table {
	struct seen *s;
	size_t cap, n;
};

static struct table tab;

static struct {
	bool stock_taken;   /* an adopted runtime's totals are not news */
	bool pending;       /* the last walk left calls to report later */
	uint64_t folded;    /* the kernel's sf_agg_folded then */
	uint64_t dropped;   /* and its sf_events_dropped */
	uint64_t due_ns;    /* CLOCK_MONOTONIC: not before */
	uint64_t repeats;   /* repeat events made */
} walk;

/* Past this many keys between walks the table is pruned at once. */
#define TABLE_MAX (4 * SF_AGG_MAX)

#define GATE_SLOTS 4096
#define GATE_KEY   1      /* sf_agg_key.pad of the gate's keys */
static struct {
	pthread_mutex_t lock;
	struct sf_agg slot[GATE_SLOTS];
	bool used[GATE_SLOTS];
	uint64_t folded;  /* calls counted with no event of their own */
} gate = { .lock = PTHREAD_MUTEX_INITIALIZER };

static uint64_t mono_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static size_t hash(const struct sf_agg_key *k)
{
	const unsigned char *p = (const unsigned char *)k;
	uint64_t h = 1469598103934665603ULL;
	size_t i;

	for (i = 0; i < sizeof(*k); i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return (size_t)h;
}

/* The key's slot in t: its entry, or the free slot where it would go. */
static struct seen *slot(const struct table *t, const struct sf_agg_key *k)
{
	size_t i = hash(k) & (t->cap - 1);

	while (t->s[i].used && memcmp(&t->s[i].key, k, sizeof(*k)))
		i = (i + 1) & (t->cap - 1);
	return &t->s[i];
}

static int table_init(struct table *t, size_t want)
{
	size_t cap = 64;

	while (cap < 2 * want)
		cap *= 2;
	t->s = calloc(cap, sizeof(*t->s));
	if (!t->s)
		return -ENOMEM;
	t->cap = cap;
	t->n = 0;
	return 0;
}

static int table_grow(struct table *t)
{
	struct table g;
	size_t i;

	if (table_init(&g, t->cap) < 0)
		return -ENOMEM;
	for (i = 0; i < t->cap; i++)
		if (t->s[i].used) {
			*slot(&g, &t->s[i].key) = t->s[i];
			g.n++;
		}
	free(t->s);
	*t = g;
	return 0;
}

static void key_of(const struct sf_event *ev, struct sf_agg_key *k)
{
	memset(k, 0, sizeof(*k));
	k->start_ns = ev->start_ns;
	k->tgid = ev->pid;
	k->filter_id = ev->filter_id;
	k->nr = ev->nr;
	k->arch = ev->arch;
	k->ret = ev->ret;
	k->taken = ev->taken;
	k->pad = ev->tier == SF_BPF_TIER_GATE ? GATE_KEY : 0;
}

static void prune(void);

uint32_t eventagg_count(const struct sf_event *ev)
{
	struct sf_agg_key k;
	struct seen *s;
	uint64_t n;

	if (!ev->agg_total)
		return 0;
	if (tab.n >= TABLE_MAX)
		prune();
	if ((!tab.s && table_init(&tab, 64) < 0) ||
	    (2 * (tab.n + 1) > tab.cap && table_grow(&tab) < 0))
		/* No memory to remember it: the event stands for itself. */
		return 1;
	key_of(ev, &k);
	s = slot(&tab, &k);
	if (!s->used) {
		*s = (struct seen){ .key = k, .used = true };
		tab.n++;
	}
	if (s->first != ev->agg_first) {
		/* The entry was evicted and made again: it counts from 1. */
		s->first = ev->agg_first;
		s->total = 0;
	}
	/* Behind what a repeat event or a racing CPU's event carried: those
	 * counted this call already. */
	n = ev->agg_total > s->total ? ev->agg_total - s->total : 0;
	if (ev->agg_total > s->total)
		s->total = ev->agg_total;
	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/* A repeat event for the calls of entry a that no event carried. */
static void repeat_event(const struct sf_agg *a, uint64_t count)
{
	struct sf_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.time_ns = mono_ns(CLOCK_BOOTTIME);
	ev.pid = a->key.tgid;
	memcpy(ev.comm, a->val.comm, sizeof(ev.comm));
	ev.nr = a->key.nr;
	ev.arch = a->key.arch;
	ev.ret = a->key.ret;
	ev.enforced = a->key.ret;
	ev.insn = SF_INSN_NONE;
	ev.filter_id = a->key.filter_id;
	ev.taken = a->key.taken;
	ev.tier = a->val.tier;
	ev.flags = a->val.flags;
	ev.err = a->val.err;
	ev.signal = a->val.signal;
	ev.repeat = 1;
	ev.uid = a->val.uid;
	ev.account = a->val.account;
	ev.count = count > UINT32_MAX ? UINT32_MAX : (uint32_t)count;
	ev.start_ns = a->key.start_ns;
	ev.agg_total = a->val.total;
	ev.agg_first = a->val.first_ns;
	__atomic_add_fetch(&walk.repeats, 1, __ATOMIC_RELAXED);
	eventlog_event(&ev);
}

/* The gate's keys, appended to *all (n of them). 0 or -ENOMEM (*all
 * freed). */
static int gate_entries(struct sf_agg **all, size_t *n)
{
	struct sf_agg *more = realloc(*all, (*n + GATE_SLOTS) * sizeof(**all));
	size_t i;

	if (!more) {
		free(*all);
		*all = NULL;
		return -ENOMEM;
	}
	*all = more;
	pthread_mutex_lock(&gate.lock);
	for (i = 0; i < GATE_SLOTS; i++)
		if (gate.used[i])
			more[(*n)++] = gate.slot[i];
	pthread_mutex_unlock(&gate.lock);
	return 0;
}

bool eventagg_gate_fold(struct sf_event *ev)
{
	uint64_t interval = sf_runtime_repeat_interval(sfd.rt), now;
	struct sf_agg_key k;
	struct sf_agg *a;
	size_t i;

	if (!interval || !SF_AGG_FOLDS(ev->taken))
		return true;
	key_of(ev, &k);
	i = hash(&k) % GATE_SLOTS;
	now = mono_ns(CLOCK_MONOTONIC);
	pthread_mutex_lock(&gate.lock);
	a = &gate.slot[i];
	if (!gate.used[i] || memcmp(&a->key, &k, sizeof(k))) {
		/* A new key (evicting the slot's): its first call's event at once. */
		memset(a, 0, sizeof(*a));
		a->key = k;
		a->val.first_ns = now;
		a->val.uid = ev->uid;
		a->val.account = ev->account;
		a->val.flags = ev->flags;
		a->val.tier = ev->tier;
		a->val.err = ev->err;
		a->val.signal = ev->signal;
		memcpy(a->val.comm, ev->comm, sizeof(a->val.comm));
		gate.used[i] = true;
	}
	ev->agg_total = ++a->val.total;
	ev->agg_first = a->val.first_ns;
	if (now < a->val.next_ns) {
		gate.folded++;
		pthread_mutex_unlock(&gate.lock);
		return false;
	}
	a->val.next_ns = now + interval;
	pthread_mutex_unlock(&gate.lock);
	return true;
}

/* Also read by the metrics render, on the HTTP server's thread: the
 * kernel's .bss and the gate's count under its lock. */
uint64_t eventagg_folded(void)
{
	struct sf_counters cnt;
	uint64_t g;

	sf_runtime_counters(sfd.rt, &cnt);
	pthread_mutex_lock(&gate.lock);
	g = gate.folded;
	pthread_mutex_unlock(&gate.lock);
	return cnt.folded + g;
}

/* A key a repeat event is due for: its entry in the walk. */
struct due {
	uint32_t account;
	uint32_t cls;
	size_t i;
};

static int by_account(const void *a, const void *b)
{
	const struct due *x = a, *y = b;

	if (x->account != y->account)
		return x->account < y->account ? -1 : 1;
	if (x->cls != y->cls)
		return x->cls < y->cls ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/*
 * Repeat events are events of their account: they take from its budget
 * with the kernel's own (sf_runtime_charge_events()), one charge for each
 * account and class. A flood of keys over its budget would otherwise make
 * a repeat event for every key it holds each interval. ok[i]: due[i] may
 * be made; a key refused keeps its calls, for its next event or a later
 * walk's repeat.
 */
static void charge_due(struct due *due, size_t n, bool *ok)
{
	size_t i = 0, j, k;
	int fit;

	qsort(due, n, sizeof(*due), by_account);
	while (i < n) {
		for (j = i; j < n && due[j].account == due[i].account && due[j].cls == due[i].cls; j++)
			;
		fit = sf_runtime_charge_events(sfd.rt, due[i].account, (int)due[i].cls,
					       (uint32_t)(j - i), false);
		/* A charge that failed leaves the events unbudgeted, as the
		 * kernel does for an account it has no entry for. */
		if (fit < 0)
			fit = (int)(j - i);
		for (k = i; k < j; k++)
			ok[due[k].i] = (int)(k - i) < fit;
		i = j;
	}
}

/* What the budget kept from the last walk at stop: per account, one line. */
static void withheld_lines(const struct sf_agg *all, const struct due *due, size_t n,
			   const bool *ok, const uint64_t *carried)
{
	size_t i = 0, j;

	while (i < n) {
		unsigned long long keys = 0, calls = 0;
		char line[200];

		for (j = i; j < n && due[j].account == due[i].account; j++) {
			if (ok[due[j].i])
				continue;
			keys++;
			calls += all[due[j].i].val.total - carried[due[j].i];
		}
		if (keys) {
			snprintf(line, sizeof(line), "{\"sfilterd\":\"repeats_withheld\","
				 "\"uid\":%u,\"keys\":%llu,\"calls\":%llu}",
				 due[i].account, keys, calls);
			log_line(line);
			diag("uid %u: %llu calls of %llu keys had no repeat event: over its "
			     "event budget at stop", due[i].account, calls, keys);
		}
		i = j;
	}
}

/*
 * One walk of sf_agg and the gate's keys: the table rebuilt from the keys
 * the map holds, and a repeat event for every key whose interval is over
 * (all of them with every, at stop) and whose calls no event carried, as
 * far as its account's budget allows. take_stock: nothing is reported,
 * what the map holds counts as carried.
 */
static void walk_agg(bool every, bool take_stock)
{
	uint64_t now = mono_ns(CLOCK_MONOTONIC), *carried = NULL;
	struct table nt = { 0 };
	struct sf_agg *all;
	struct due *due = NULL;
	size_t n, i, ndue = 0;
	bool *ok = NULL;

	if (sf_runtime_agg(sfd.rt, &all, &n) < 0 || gate_entries(&all, &n) < 0)
		return;
	carried = calloc(n ? n : 1, sizeof(*carried));
	due = calloc(n ? n : 1, sizeof(*due));
	ok = calloc(n ? n : 1, sizeof(*ok));
	if (!carried || !due || !ok || table_init(&nt, n) < 0)
		goto out;
	walk.pending = false;
	for (i = 0; i < n; i++) {
		const struct sf_agg *a = &all[i];
		struct seen *old = tab.s ? slot(&tab, &a->key) : NULL;

		carried[i] = old && old->used && old->first == a->val.first_ns ? old->total : 0;
		if (take_stock || a->val.total <= carried[i]) {
			carried[i] = a->val.total;
		} else if (every || now >= a->val.next_ns) {
			due[ndue++] = (struct due){ .account = a->val.account,
						    .cls = SF_EV_CLASS(a->key.taken), .i = i };
		} else {
			walk.pending = true;
		}
	}
	charge_due(due, ndue, ok);
	for (i = 0; i < ndue; i++) {
		size_t k = due[i].i;

		if (ok[k]) {
			repeat_event(&all[k], all[k].val.total - carried[k]);
			carried[k] = all[k].val.total;
		} else {
			walk.pending = true;
		}
	}
	if (every)
		withheld_lines(all, due, ndue, ok, carried);
	for (i = 0; i < n; i++) {
		struct seen *s;

		if (!carried[i])
			continue;
		s = slot(&nt, &all[i].key);
		*s = (struct seen){ .key = all[i].key, .first = all[i].val.first_ns,
				    .total = carried[i], .used = true };
		nt.n++;
	}
	free(tab.s);
	tab = nt;
	nt.s = NULL;
out:
	free(nt.s);
	free(ok);
	free(due);
	free(carried);
	free(all);
}

static void prune(void)
{
	walk_agg(false, false);
}

void eventagg_tick(bool drained)
{
	uint64_t interval = sf_runtime_repeat_interval(sfd.rt), now, folded;
	struct sf_counters cnt;

	if (!interval)
		return;
	if (sfd.adopted && !walk.stock_taken) {
		/* What the keys counted before this daemon, earlier events
		 * carried or the last one reported when it stopped. */
		walk_agg(false, true);
		walk.stock_taken = true;
		return;
	}
	/* Events still in the ring carry totals a walk would report again. */
	if (!drained)
		return;
	now = mono_ns(CLOCK_MONOTONIC);
	if (now < walk.due_ns)
		return;
	sf_runtime_counters(sfd.rt, &cnt);
	folded = eventagg_folded();
	if (!walk.pending && folded == walk.folded && cnt.events_dropped == walk.dropped)
		return;
	walk.folded = folded;
	walk.dropped = cnt.events_dropped;
	walk_agg(false, false);
	log_flush();
	/* At most one walk an interval (and ten a second). */
	walk.due_ns = now + (interval > 100000000ULL ? interval : 100000000ULL);
}

void eventagg_stop(void)
{
	if (sf_runtime_repeat_interval(sfd.rt))
		walk_agg(true, false);
}

/* Read by the metrics render, on the HTTP server's thread. */
uint64_t eventagg_repeats(void)
{
	return __atomic_load_n(&walk.repeats, __ATOMIC_RELAXED);
}
