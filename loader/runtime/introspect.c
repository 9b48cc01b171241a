// SPDX-License-Identifier: GPL-2.0-only
/*
 * What sfctl and the tests read: confined tasks with their chains, a
 * filter's program and owner, the BPF side's counters; and the test
 * suite's knob on the BPF side.
 */
#define _GNU_SOURCE
#include "internal.h"
#include "sfilter.skel.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

void sf_runtime_counters(const struct sf_runtime *rt, struct sf_counters *out)
{
	*out = (struct sf_counters){
		.events_dropped = __atomic_load_n(&rt->bss->sf_events_dropped, __ATOMIC_RELAXED),
		.fork_failed = __atomic_load_n(&rt->bss->sf_fork_failed, __ATOMIC_RELAXED),
		.tailcall_failed = __atomic_load_n(&rt->bss->sf_tailcall_failed, __ATOMIC_RELAXED),
		.cg_failed = __atomic_load_n(&rt->bss->sf_cg_failed, __ATOMIC_RELAXED),
		.orphans_killed = __atomic_load_n(&rt->bss->sf_orphans_killed, __ATOMIC_RELAXED),
		.confined = __atomic_load_n(&rt->bss->sf_live, __ATOMIC_RELAXED),
		.folded = __atomic_load_n(&rt->bss->sf_agg_folded, __ATOMIC_RELAXED),
	};
}

int sf_runtime_test_knob(struct sf_runtime *rt, enum sf_test_knob knob, uint32_t value)
{
	switch (knob) {
	case SF_TEST_NO_STORAGE:
		__atomic_store_n(&rt->bss->sf_test_no_storage, value, __ATOMIC_SEQ_CST);
		return 0;
	case SF_TEST_GATE_DELAY_US:
		__atomic_store_n(&rt->test_gate_delay_us, value, __ATOMIC_SEQ_CST);
		return 0;
	case SF_TEST_TSYNC_FAIL:
		pthread_mutex_lock(&rt->lock);
		rt->test_tsync_fail = value != 0;
		pthread_mutex_unlock(&rt->lock);
		return 0;
	case SF_TEST_SEARCH_FAIL:
		__atomic_store_n(&rt->test_search_fail, value != 0, __ATOMIC_SEQ_CST);
		return 0;
	case SF_TEST_SETTLE_DELAY_MS:
		__atomic_store_n(&rt->test_settle_delay_ms, value, __ATOMIC_SEQ_CST);
		return 0;
	}
	return -EINVAL;
}

int sf_runtime_for_each_task(struct sf_runtime *rt, sf_task_fn fn, void *ctx)
{
	struct sf_rt_recs r;
	bool known;
	size_t i;
	int err;

	pthread_mutex_lock(&rt->lock);
	/* Without it, any listener reads as a gate, as it may be one. */
	known = sf_rt_gate_filters_refresh(rt) == 0;
	err = sf_rt_iter_run(rt, 0, false, &r);
	if (err) {
		pthread_mutex_unlock(&rt->lock);
		return err;
	}
	for (i = 0; i < r.n && !err; i++) {
		struct sf_task_info t = { .tid = r.r[i].tid, .tgid = r.r[i].tgid,
					  .uid = r.r[i].euid };
		struct sf_node *n = r.r[i].chain < SF_MAX_CHAINS ?
				    rt->slots[r.r[i].chain] : NULL, *w;
		uint32_t k;

		if (!r.r[i].chain)
			continue;
		memcpy(t.comm, r.r[i].comm, sizeof(t.comm));
		t.at_exec = r.r[i].at_exec != 0;
		t.gated = r.r[i].gated == SF_GATED_OURS || (!known && r.r[i].gated);
		t.user_notif = known && r.r[i].gated == SF_GATED_OTHER;
		t.n_filters = n ? n->depth : 0;
		/* Oldest first: the root of the path at index 0. */
		for (w = n; w; w = w->parent) {
			k = w->depth - 1;
			if (k < 64)
				t.filter_ids[k] = w->id;
		}
		err = fn(ctx, &t);
	}
	free(r.r);
	pthread_mutex_unlock(&rt->lock);
	return err;
}

int sf_runtime_slot_usage(struct sf_runtime *rt, bool count_reclaimable,
			  struct sf_slot_usage *out)
{
	bool unused[SF_MAX_CHAINS];
	int i, r = 0;

	*out = (struct sf_slot_usage){ .total = SF_MAX_CHAINS - 1 };
	pthread_mutex_lock(&rt->lock);
	for (i = 1; i < SF_MAX_CHAINS; i++)
		out->empty += !rt->slots[i];
	if (count_reclaimable) {
		r = sf_rt_slots_unused(rt, unused);
		out->reclaimable = r > 0 ? (uint32_t)r : 0;
	}
	pthread_mutex_unlock(&rt->lock);
	return r < 0 ? r : 0;
}

static struct sf_node *node_by_id(struct sf_runtime *rt, uint32_t id)
{
	struct sf_node *n, *dead = NULL;
	size_t i;

	for (i = 0; i < SF_RT_HASH_BUCKETS; i++)
		for (n = rt->buckets[i]; n; n = n->hnext)
			if (n->id == id) {
				if (!n->dead)
					return n;
				dead = n;
			}
	(void)dead;
	return NULL;
}

int sf_runtime_filter(struct sf_runtime *rt, uint32_t filter_id,
		      struct sf_filter_info *info, struct sock_filter **out)
{
	struct sf_node *n;
	int err = 0;

	pthread_mutex_lock(&rt->lock);
	n = node_by_id(rt, filter_id);
	if (!n) {
		err = -ENOENT;
		goto out;
	}
	if (info)
		*info = (struct sf_filter_info){ .id = n->id, .flags = n->flags,
						 .owner = n->owner, .len = n->len };
	if (out) {
		*out = malloc(n->len * sizeof(**out));
		if (!*out) {
			err = -ENOMEM;
			goto out;
		}
		memcpy(*out, n->insns, n->len * sizeof(**out));
	}
out:
	pthread_mutex_unlock(&rt->lock);
	return err;
}

int sf_runtime_filter_hits(struct sf_runtime *rt, uint32_t filter_id,
			   uint64_t **counts)
{
	int ncpu = libbpf_num_possible_cpus(), err = 0;
	uint64_t *per_cpu = NULL;
	struct sf_node *n;
	uint32_t i, k;

	*counts = NULL;
	pthread_mutex_lock(&rt->lock);
	n = node_by_id(rt, filter_id);
	if (!n || !(n->flags & SF_FLAG_COUNT)) {
		err = n ? -ENODATA : -ENOENT;
		goto out;
	}
	if (!n->hits_base) {
		/* not loaded yet: nothing counted */
		*counts = calloc(n->len + 1, sizeof(**counts));
		err = *counts ? (int)n->len + 1 : -ENOMEM;
		goto out;
	}
	per_cpu = calloc(ncpu > 0 ? (size_t)ncpu : 1, sizeof(*per_cpu));
	*counts = calloc(n->len + 1, sizeof(**counts));
	if (ncpu <= 0 || !per_cpu || !*counts) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i <= n->len; i++) {
		uint32_t key = n->hits_base + i;

		if (bpf_map_lookup_elem(rt->fd_hits, &key, per_cpu)) {
			err = -errno;
			goto out;
		}
		for (k = 0; k < (uint32_t)ncpu; k++)
			(*counts)[i] += per_cpu[k];
	}
	err = (int)n->len + 1;
out:
	pthread_mutex_unlock(&rt->lock);
	free(per_cpu);
	if (err < 0) {
		free(*counts);
		*counts = NULL;
	}
	return err;
}

int sf_runtime_set_owner(struct sf_runtime *rt, uint32_t filter_id, uid_t owner)
{
	struct sf_node *n;
	size_t i;
	int found = 0, changed = 0;

	pthread_mutex_lock(&rt->lock);
	for (i = 0; i < SF_RT_HASH_BUCKETS; i++)
		for (n = rt->buckets[i]; n; n = n->hnext)
			if (n->id == filter_id) {
				changed |= n->owner != owner;
				n->owner = owner;
				found = 1;
			}
	/* Every attach sets its filter's owner, mostly to what it was
	 * already: the state file is rewritten only for a change. */
	if (changed)
		sf_rt_save_state(rt);
	pthread_mutex_unlock(&rt->lock);
	return found ? 0 : -ENOENT;
}
