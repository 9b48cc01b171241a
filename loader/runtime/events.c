// SPDX-License-Identifier: GPL-2.0-only
/*
 * The event ring buffer (sf_events): every deny and every LOG within its
 * account's budget, as struct sf_event, handed to the caller's function,
 * all that are ready or a bounded number at a time; the budgets, and what
 * each account lost (sf_accounts). Turning events into text is the
 * caller's business (sfilterd logs them with loader/proto/event_json.c).
 */
#include "grow.h"
#include "internal.h"
#include "sfilter.skel.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

static int on_event(void *ctx, void *data, size_t size)
{
	struct sf_runtime *rt = ctx;
	int r;

	/* Shorter records only wake the reader (cgroup joins to finish, see
	 * sf_runtime_process_pending()). */
	if (size < sizeof(struct sf_event) || !rt->fn)
		return 0;
	r = rt->fn(rt->fn_ctx, data);
	/* A negative return stops libbpf after this record, which it counts
	 * as consumed (ringbuf_process_ring()): the next drain starts at the
	 * one after it. */
	if (r >= 0 && rt->fn_max && ++rt->fn_count >= rt->fn_max)
		return -EAGAIN;
	return r;
}

int sf_rt_events_open(struct sf_runtime *rt)
{
	rt->rb = ring_buffer__new(rt->fd_events, on_event, rt, NULL);
	return rt->rb ? 0 : -errno;
}

void sf_rt_events_close(struct sf_runtime *rt)
{
	ring_buffer__free(rt->rb);
	rt->rb = NULL;
}

int sf_runtime_event_fd(const struct sf_runtime *rt)
{
	return ring_buffer__epoll_fd(rt->rb);
}

int sf_runtime_poll_events(struct sf_runtime *rt, int timeout_ms,
			   sf_event_fn fn, void *ctx)
{
	int n;

	rt->fn = fn;
	rt->fn_ctx = ctx;
	n = ring_buffer__poll(rt->rb, timeout_ms);
	rt->fn = NULL;
	return n;
}

int sf_runtime_drain_events(struct sf_runtime *rt, int max, sf_event_fn fn, void *ctx)
{
	int r;

	if (max <= 0)
		return -EINVAL;
	rt->fn = fn;
	rt->fn_ctx = ctx;
	rt->fn_max = max;
	rt->fn_count = 0;
	r = ring_buffer__consume(rt->rb);
	rt->fn = NULL;
	rt->fn_max = 0;
	return r < 0 && rt->fn_count < max ? r : rt->fn_count;
}

int sf_runtime_set_event_budget(struct sf_runtime *rt, uint32_t rate, uint32_t burst)
{
	uint64_t interval = rate ? 1000000000ULL / rate : 0;

	if (rate && !burst)
		return -EINVAL;
	if (rate && !interval)
		interval = 1;
	/* The window first: a program that sees the new interval with the
	 * old window errs for one event, either way. */
	__atomic_store_n(&rt->bss->sf_ev_window_ns, interval * burst, __ATOMIC_RELAXED);
	__atomic_store_n(&rt->bss->sf_ev_interval_ns, interval, __ATOMIC_RELEASE);
	return 0;
}

int sf_runtime_charge_events(struct sf_runtime *rt, uint32_t account, int cls, uint32_t n,
			     bool drop)
{
	struct sf_charge c = { .account = account, .cls = (uint32_t)cls, .n = n, .drop = drop };
	LIBBPF_OPTS(bpf_test_run_opts, o, .ctx_in = &c, .ctx_size_in = sizeof(c));

	if (!n)
		return 0;
	if (n > INT32_MAX)
		return -EINVAL;
	if (bpf_prog_test_run_opts(rt->fd_charge, &o))
		return -errno;
	return (int)o.retval;
}

int sf_runtime_set_repeat_interval(struct sf_runtime *rt, uint64_t ns)
{
	__atomic_store_n(&rt->bss->sf_agg_interval_ns, ns, __ATOMIC_RELEASE);
	return 0;
}

uint64_t sf_runtime_repeat_interval(const struct sf_runtime *rt)
{
	return __atomic_load_n(&rt->bss->sf_agg_interval_ns, __ATOMIC_RELAXED);
}

static void drops_from(struct sf_event_drops *d, uint32_t account, const struct sf_acct *a)
{
	int c;

	d->account = account;
	for (c = 0; c < SF_EV_CLASSES; c++) {
		d->budget[c] = a->budget_dropped[c];
		d->ring[c] = a->ring_dropped[c];
	}
}

int sf_runtime_event_drops_of(struct sf_runtime *rt, uint32_t account,
			      struct sf_event_drops *out)
{
	struct sf_acct a = { 0 };

	if (bpf_map_lookup_elem(rt->fd_accounts, &account, &a) && errno != ENOENT)
		return -errno;
	drops_from(out, account, &a);
	return 0;
}

/* Entries read per batch; an LRU hash bucket never holds nearly as many. */
#define DROPS_BATCH 1024

static bool lost_any(const struct sf_acct *a)
{
	int c;

	for (c = 0; c < SF_EV_CLASSES; c++)
		if (a->budget_dropped[c] || a->ring_dropped[c])
			return true;
	return false;
}

/*
 * Every entry of a hash map, in batches (htab_map_lookup_batch(): they walk
 * the buckets; entries come and go meanwhile, and each is seen at most
 * once), each through take(ctx, key, value): 0 or -errno.
 */
static int walk_map(int fd, size_t ksize, size_t vsize,
		    int (*take)(void *ctx, const void *key, const void *val), void *ctx)
{
	char *keys = calloc(DROPS_BATCH, ksize), *vals = calloc(DROPS_BATCH, vsize);
	uint64_t token = 0; /* a bucket index */
	bool first = true, done = false;
	int err = 0;

	if (!keys || !vals) {
		err = -ENOMEM;
		goto out;
	}
	while (!done && !err) {
		__u32 count = DROPS_BATCH, i;

		err = bpf_map_lookup_batch(fd, first ? NULL : &token, &token, keys, vals,
					   &count, NULL);
		first = false;
		if (err == -ENOENT) {
			done = true;
			err = 0;
		}
		for (i = 0; !err && i < count; i++)
			err = take(ctx, keys + i * ksize, vals + i * vsize);
	}
out:
	free(keys);
	free(vals);
	return err;
}

/* A growing array of n entries of size bytes. */
struct grow {
	void *list;
	size_t n, cap, size;
};

static void *grow_next(struct grow *g)
{
	if (c2e_grow(&g->list, &g->cap, g->n + 1, g->size))
		return NULL;
	return (char *)g->list + g->size * g->n++;
}

static int take_drops(void *ctx, const void *key, const void *val)
{
	struct sf_event_drops *e;

	if (!lost_any(val))
		return 0;
	e = grow_next(ctx);
	if (!e)
		return -ENOMEM;
	drops_from(e, *(const uint32_t *)key, val);
	return 0;
}

/* walk_map() into a malloc'd array of what take() made, of size bytes
 * each: 0, or -errno and nothing. */
static int collect(int fd, size_t ksize, size_t vsize,
		   int (*take)(void *ctx, const void *key, const void *val), size_t size,
		   void **out, size_t *n)
{
	struct grow g = { .size = size };
	int err = walk_map(fd, ksize, vsize, take, &g);

	if (err) {
		free(g.list);
		g.list = NULL;
		g.n = 0;
	}
	*out = g.list;
	*n = g.n;
	return err;
}

int sf_runtime_event_drops(struct sf_runtime *rt, struct sf_event_drops **out, size_t *n)
{
	return collect(rt->fd_accounts, sizeof(uint32_t), sizeof(struct sf_acct), take_drops,
		       sizeof(**out), (void **)out, n);
}

static int take_stat(void *ctx, const void *key, const void *val)
{
	const struct sf_stat_key *k = key;
	struct sf_stat *s = grow_next(ctx);

	if (!s)
		return -ENOMEM;
	*s = (struct sf_stat){ .cgroup = k->cgroup, .filter_id = k->filter_id, .nr = k->nr,
			       .arch = k->arch, .ret = k->ret, .taken = k->taken,
			       .count = *(const uint64_t *)val };
	return 0;
}

int sf_runtime_stats(struct sf_runtime *rt, struct sf_stat **out, size_t *n)
{
	return collect(rt->fd_stats, sizeof(struct sf_stat_key), sizeof(uint64_t), take_stat,
		       sizeof(**out), (void **)out, n);
}

static int take_agg(void *ctx, const void *key, const void *val)
{
	struct sf_agg *a = grow_next(ctx);

	if (!a)
		return -ENOMEM;
	memcpy(&a->key, key, sizeof(a->key));
	memcpy(&a->val, val, sizeof(a->val));
	return 0;
}

int sf_runtime_agg(struct sf_runtime *rt, struct sf_agg **out, size_t *n)
{
	return collect(rt->fd_agg, sizeof(struct sf_agg_key), sizeof(struct sf_agg_val),
		       take_agg, sizeof(**out), (void **)out, n);
}
