// SPDX-License-Identifier: GPL-2.0
/*
 * The event ring buffer (sf_events): every deny and every LOG within its
 * account's budget, as struct sf_event, handed to the caller's function,
 * all that are ready or a bounded number at a time; the budgets, and what
 * each account lost (sf_accounts). Turning events into text is the
 * caller's business (sfilterd logs them with loader/proto/event_json.c).
 */
#include "internal.h"
#include "sfilter.skel.h"

#include <errno.h>
#include <stdlib.h>
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

int sf_runtime_event_drops(struct sf_runtime *rt, struct sf_event_drops **out, size_t *n)
{
	uint32_t *keys = calloc(DROPS_BATCH, sizeof(*keys));
	struct sf_acct *vals = calloc(DROPS_BATCH, sizeof(*vals));
	struct sf_event_drops *list = NULL, *grown;
	uint64_t token = 0;
	size_t cap = 0;
	bool first = true, done = false;
	int err = 0;

	*out = NULL;
	*n = 0;
	if (!keys || !vals) {
		err = -ENOMEM;
		goto out;
	}
	while (!done) {
		__u32 count = DROPS_BATCH, i;

		/* Batches walk the buckets (htab_map_lookup_batch()): entries
		 * come and go meanwhile, and each is seen at most once. */
		err = bpf_map_lookup_batch(rt->fd_accounts, first ? NULL : &token, &token,
					   keys, vals, &count, NULL);
		first = false;
		if (err == -ENOENT) {
			done = true;
			err = 0;
		} else if (err) {
			goto out;
		}
		for (i = 0; i < count; i++) {
			if (!lost_any(&vals[i]))
				continue;
			if (*n == cap) {
				cap = cap ? 2 * cap : 16;
				grown = realloc(list, cap * sizeof(*list));
				if (!grown) {
					err = -ENOMEM;
					goto out;
				}
				list = grown;
			}
			drops_from(&list[(*n)++], keys[i], &vals[i]);
		}
	}
out:
	free(keys);
	free(vals);
	if (err) {
		free(list);
		*n = 0;
		return err;
	}
	*out = list;
	return 0;
}
