// SPDX-License-Identifier: GPL-2.0-only
/*
 * Detach and replace: every chain that holds a filter id is rebuilt
 * without it (or with the new program in its place), and every task on
 * such a chain is moved to the rebuilt one by compare-and-set, so that it
 * is never without its other filters. And the idle check: whether
 * anything can still be judged, and the on-demand programs detached when
 * not.
 */
#define _GNU_SOURCE
#include "internal.h"
#include "sfilter.skel.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <bpf/bpf.h>

/*
 * Filter ids are per chain node: identical attaches (same parent chain, same
 * program, same flags) share one node and so one id, and a node rebuilt
 * under a new parent by detach/replace keeps its id. An id therefore names
 * one attach request, or several identical ones onto the same chain, and
 * detach/replace act on every chain node carrying it.
 */

/* n's chain without id (repl NULL) or with repl in its place; *out NULL
 * when nothing is left. */
static int rebuild(struct sf_runtime *rt, struct sf_node *n, uint32_t id,
		   const struct sock_fprog *repl, struct sf_node **out)
{
	/* As many filters as the kernel's chain rule lets in. */
	struct sf_node *path[C2E_MAX_CHAIN_FILTERS + 1], *cur = NULL;
	size_t depth = 0;
	int err;

	for (; n; n = n->parent) {
		if (depth == sizeof(path) / sizeof(path[0]))
			return -E2BIG;
		path[depth++] = n;
	}
	while (depth--) {
		const struct sf_node *o = path[depth];
		const struct sock_filter *insns = o->insns;
		size_t len = o->len;
		int kcount;

		if (o->id == id) {
			if (!repl)
				continue;
			insns = repl->filter;
			len = repl->len;
		}
		kcount = sf_rt_filter_insns(insns, len, o->flags);
		if (kcount < 0)
			return kcount;
		if ((uint64_t)kcount + (cur ? cur->path_insns : 0) > C2E_MAX_CHAIN_INSNS)
			return -ENOMEM;
		cur = sf_rt_node_get(rt, cur, insns, len, o->flags, o->id, kcount);
		if (!cur)
			return -ENOMEM;
	}
	*out = cur;
	err = 0;
	return err;
}

/* Moves every task whose chain is a key of to[] (to[old] >= 0) to its new
 * chain, compare-and-set per task, until none is left (forks racing). An
 * armed task whose recv would still run under such a chain takes its armed
 * chain now instead (then moves, if that one is a key too). */
static int move_tasks(struct sf_runtime *rt, const int *to)
{
	int pfd = rt->fd_pending, round;

	for (round = 0; round < 16; round++) {
		struct sf_rt_recs r, after;
		size_t i, n = 0;
		int err = sf_rt_iter_run(rt, 0, false, &r);

		if (err)
			return err;
		for (i = 0; i < r.n; i++) {
			uint32_t c = r.r[i].chain, o = r.r[i].old, key = r.r[i].tid;
			struct sf_pending p = { 0 };

			if (o && o < SF_MAX_CHAINS && to[o] >= 0) {
				p.chain = SF_PENDING_SETTLE;
				p.expect = 0;
			} else if (c >= SF_MAX_CHAINS || to[c] < 0) {
				continue;
			} else {
				p.chain = to[c];
				p.expect = c;
			}
			if (bpf_map_update_elem(pfd, &key, &p, BPF_ANY)) {
				free(r.r);
				return -errno;
			}
			r.r[n++] = r.r[i];
		}
		if (n == 0) {
			free(r.r);
			return 0;
		}
		err = sf_rt_iter_run(rt, 0, false, &after);
		for (i = 0; i < n; i++) {
			uint32_t key = r.r[i].tid;

			bpf_map_delete_elem(pfd, &key);
		}
		free(r.r);
		if (err)
			return err;
		free(after.r);
	}
	return -EAGAIN;
}

/* A node that is still attached and carries id, or NULL. */
static const struct sf_node *id_node(struct sf_runtime *rt, uint32_t id)
{
	size_t i;

	for (i = 0; i < SF_RT_HASH_BUCKETS; i++) {
		struct sf_node *x;

		for (x = rt->buckets[i]; x; x = x->hnext)
			if (x->id == id && !x->dead)
				return x;
	}
	return NULL;
}

static bool id_in_use(struct sf_runtime *rt, uint32_t id)
{
	return id_node(rt, id) != NULL;
}

/* The loaded chains that contain id, into aff[] and busy; how many. Every
 * node carrying the id, loaded or not, is never reused. */
static size_t mark_affected(struct sf_runtime *rt, uint32_t id, struct sf_node **aff)
{
	size_t n = 0, i;

	for (i = 1; i < SF_MAX_CHAINS; i++)
		if (rt->slots[i] && sf_rt_path_has(rt->slots[i], id)) {
			rt->slots[i]->busy = true;
			aff[n++] = rt->slots[i];
		}
	for (i = 0; i < SF_RT_HASH_BUCKETS; i++) {
		struct sf_node *x;

		for (x = rt->buckets[i]; x; x = x->hnext)
			if (sf_rt_path_has(x, id))
				x->dead = true;
	}
	return n;
}

/* The attached cgroups' own chains, rebuilt and loaded. */
static int rebuild_cgroups(struct sf_runtime *rt, uint32_t id, const struct sock_fprog *repl)
{
	struct sf_cgroup *c;
	int err;

	for (c = rt->cgroups; c; c = c->next)
		if (sf_rt_path_has(c->base, id)) {
			struct sf_node *b;

			err = rebuild(rt, c->base, id, repl, &b);
			if (err)
				return err;
			if (b && !sf_rt_node_loaded(b) && (err = sf_rt_node_load(rt, b)))
				return err;
			c->base = b;
		}
	return 0;
}

static int change_locked(struct sf_runtime *rt, uint32_t id,
			 const struct sock_fprog *repl)
{
	struct sf_node *aff[SF_MAX_CHAINS], *nw[SF_MAX_CHAINS] = { 0 };
	int to[SF_MAX_CHAINS];
	struct sf_cgroup *c;
	size_t n, i;
	int err = 0;

	if (!id_in_use(rt, id))
		return -ENOENT;
	for (i = 0; i < SF_MAX_CHAINS; i++)
		to[i] = -1;
	n = mark_affected(rt, id, aff);
	for (i = 0; i < n; i++) {
		err = rebuild(rt, aff[i], id, repl, &nw[i]);
		if (err)
			goto out;
		if (nw[i] && !sf_rt_node_loaded(nw[i])) {
			err = sf_rt_node_load(rt, nw[i]);
			if (err)
				goto out;
		}
		if (nw[i])
			nw[i]->busy = true;
		to[aff[i]->slot] = nw[i] ? nw[i]->slot : 0;
	}
	err = rebuild_cgroups(rt, id, repl);
	if (err)
		goto out;
	/* The cgroups' prepared appends name old chains: start over. */
	for (c = rt->cgroups; c; c = c->next)
		sf_rt_cg_sync(rt, c);
	err = move_tasks(rt, to);
	if (err)
		goto out;
	/* A moved task may still be in its dispatcher with the old slot
	 * number in hand: let every such run end before the slot empties. */
	err = sf_rt_quiesce(rt);
	if (err)
		goto out;
	for (i = 0; i < n; i++) {
		aff[i]->busy = false;
		sf_rt_node_unload(rt, aff[i]);
	}
	n = 0;
out:
	for (i = 0; i < n; i++) {
		aff[i]->busy = false;
		if (nw[i])
			nw[i]->busy = false;
	}
	for (i = 1; i < SF_MAX_CHAINS; i++)
		if (rt->slots[i])
			rt->slots[i]->busy = false;
	sf_rt_save_state(rt);
	return err;
}

int sf_runtime_detach(struct sf_runtime *rt, uint32_t filter_id)
{
	int err;

	if (!filter_id)
		return -ENOENT;
	pthread_mutex_lock(&rt->lock);
	err = change_locked(rt, filter_id, NULL);
	pthread_mutex_unlock(&rt->lock);
	return err;
}

int sf_runtime_replace(struct sf_runtime *rt, uint32_t filter_id,
		       const struct sock_fprog *prog, struct c2e_error *cerr)
{
	const struct sf_node *n;
	int err;

	if (!filter_id)
		return -ENOENT;
	pthread_mutex_lock(&rt->lock);
	/* The replacement is judged by the ABI of the filter it replaces. */
	n = id_node(rt, filter_id);
	err = sf_runtime_filter_check(prog, n ? n->flags : 0, cerr);
	if (!err)
		err = change_locked(rt, filter_id, prog);
	pthread_mutex_unlock(&rt->lock);
	return err;
}

/* Whether nothing can be judged now: no task has a chain or an arm, no
 * program is handing one on, no cgroup that still exists has filters
 * (each container the OCI hook confined has one), no orphan waits for its
 * chain, no chain is being attached. The BPF side counts tasks with
 * chains as they get and lose them (settle() in sfilter.bpf.c), so no
 * walk over tasks decides this: a task can outrun a walk, by an exec from
 * a thread (which takes over its leader's lower tid) or a fork after the
 * pid counter wrapped. sf_handing is read first: a program that read a
 * chain before a detach counts its child before it lets go. Under
 * rt->lock, nothing else can give a task a chain meanwhile: attaches take
 * the lock, and forks and cgroup joins only pass on chains and filters
 * that exist. */
static int nothing_to_judge(struct sf_runtime *rt)
{
	const struct sf_cgroup *c;
	size_t i;

	for (c = rt->cgroups; c; c = c->next)
		if (c->base && sf_rt_cg_alive(c))
			return 0;
	if (__atomic_load_n(&rt->bss->sf_handing, __ATOMIC_SEQ_CST) ||
	    __atomic_load_n(&rt->bss->sf_live, __ATOMIC_SEQ_CST) ||
	    __atomic_load_n(&rt->bss->sf_orphans_pending, __ATOMIC_SEQ_CST) ||
	    __atomic_load_n(&rt->bss->sf_tsync_pending, __ATOMIC_SEQ_CST))
		return 0;
	for (i = 1; i < SF_MAX_CHAINS; i++)
		if (rt->slots[i] && rt->slots[i]->busy)
			return 0;
	return 1;
}

int sf_runtime_reap_chains(struct sf_runtime *rt)
{
	int nice = sf_rt_lock_unniced(rt), gone = sf_rt_slots_release_gone(rt), freed;

	freed = sf_rt_nodes_reap(rt);
	if (freed || gone > 0)
		sf_rt_save_state(rt);
	sf_rt_unlock_reniced(rt, nice);
	return freed;
}

/* Here, above the chains and the cgroup records it reads; the links
 * themselves are dispatch.c's (sf_rt_dispatch_idle()). */
int sf_runtime_idle_check(struct sf_runtime *rt)
{
	pthread_mutex_lock(&rt->lock);
	return sf_rt_dispatch_idle(rt, sf_rt_dispatch_attached(rt) ? nothing_to_judge(rt) : 0);
}
