// SPDX-License-Identifier: GPL-2.0-only
/*
 * Chain nodes and their programs. A node is (parent chain, filter, attach
 * flags), found again by hash, so that equal chains share one node, one
 * generated program (chain_emit.c) and one PROG_ARRAY slot. Loading a node
 * is built in three steps, so that the kernel's verifier, which can take
 * tens of milliseconds for one large filter, never runs under rt->lock:
 * begin (locked: the chain's filters as they are), run (unlocked: the
 * program emitted and loaded, and unless deferred its action table), and
 * install (locked: a slot, freeing those no task and no cgroup uses when
 * none is left, the table rows, the PROG_ARRAY entry, and the chain
 * recorded in the state file before any task can be given the slot).
 * Deferred tables are computed outside the lock too, a piece at a time.
 * With linear_first, a new chain is loaded in its linear form, which the
 * verifier checks faster, so that an attach waits less; its searched form
 * replaces it later in the same slot (sf_rt_build_swap(), upgrade.c).
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--)
		h = (h ^ *c++) * 0x100000001b3ULL;
	return h;
}

/* Whether n is the chain (parent, insns, flags) of that hash. */
static bool node_is(const struct sf_node *n, const struct sf_node *parent,
		    const struct sock_filter *insns, size_t len, unsigned int flags,
		    uint64_t hash)
{
	return n->hash == hash && n->parent == parent && n->len == len && n->flags == flags &&
	       !n->dead && memcmp(n->insns, insns, len * sizeof(*insns)) == 0;
}

static struct sf_node *node_find(struct sf_runtime *rt, struct sf_node *parent,
				 const struct sock_filter *insns, size_t len,
				 unsigned int flags, uint64_t hash, uint32_t id)
{
	struct sf_node *n;

	for (n = rt->buckets[hash % SF_RT_HASH_BUCKETS]; n; n = n->hnext)
		if (!n->spare && (!id || n->id == id) &&
		    node_is(n, parent, insns, len, flags, hash))
			return n;
	return NULL;
}

static uint64_t node_hash(const struct sf_node *parent, unsigned int flags,
			  const struct sock_filter *insns, size_t len)
{
	uint64_t h = fnv(parent ? parent->hash : 0xcbf29ce484222325ULL, &flags, sizeof(flags));

	return fnv(h, insns, len * sizeof(*insns));
}

/* The node (parent, insns, flags): an existing one, or a new one with id
 * (0: a fresh id). kcount: the filter's kernel instruction count. */
struct sf_node *sf_rt_node_get(struct sf_runtime *rt, struct sf_node *parent,
			       const struct sock_filter *insns, size_t len,
			       unsigned int flags, uint32_t id, int kcount)
{
	uint64_t hash = node_hash(parent, flags, insns, len);
	struct sf_node *node = node_find(rt, parent, insns, len, flags, hash, id);

	if (node) {
		node->released = false; /* asked for again: loaded anew, or a parent */
		return node;
	}
	node = calloc(1, sizeof(*node));
	if (!node)
		return NULL;
	node->insns = malloc(len * sizeof(*insns));
	if (!node->insns) {
		free(node);
		return NULL;
	}
	memcpy(node->insns, insns, len * sizeof(*insns));
	node->len = len;
	node->parent = parent;
	node->flags = flags;
	node->hash = hash;
	node->id = id ? id : rt->next_id++;
	if (node->id >= rt->next_id)
		rt->next_id = node->id + 1;
	node->depth = parent ? parent->depth + 1 : 1;
	node->path_insns = (parent ? parent->path_insns : 0) + kcount + C2E_CHAIN_PENALTY;
	node->hnext = rt->buckets[hash % SF_RT_HASH_BUCKETS];
	rt->buckets[hash % SF_RT_HASH_BUCKETS] = node;
	return node;
}

struct sf_node *sf_rt_spare_find(struct sf_runtime *rt, struct sf_node *parent,
				 const struct sock_filter *insns, size_t len, unsigned int flags)
{
	uint64_t hash = node_hash(parent, flags, insns, len);
	struct sf_node *n;

	for (n = rt->buckets[hash % SF_RT_HASH_BUCKETS]; n; n = n->hnext)
		if (n->spare && n->slot && node_is(n, parent, insns, len, flags, hash))
			return n;
	return NULL;
}

int sf_rt_nodes_reap(struct sf_runtime *rt)
{
	struct sf_node *n, **pp;
	struct sf_cgroup *c;
	size_t i, k;
	int freed = 0;

	/* Another thread's build may hold a node, or its parents' code,
	 * without the lock: the next reap then. */
	if (rt->reaped == rt->released || __atomic_load_n(&rt->building, __ATOMIC_SEQ_CST))
		return 0;
	rt->reaped = rt->released;
	for (i = 0; i < SF_RT_HASH_BUCKETS; i++)
		for (n = rt->buckets[i]; n; n = n->hnext)
			n->kept = !n->released || n->slot || n->busy || n->spare ||
				  n == rt->spare_of;
	for (i = 0; i < SF_RT_HASH_BUCKETS; i++)
		for (n = rt->buckets[i]; n; n = n->hnext)
			if (n->parent)
				n->parent->kept = true;
	for (c = rt->cgroups; c; c = c->next) {
		if (c->base)
			c->base->kept = true;
		for (k = 0; k < c->n_app; k++)
			c->app[k].to->kept = true;
	}
	for (i = 0; i < SF_RT_HASH_BUCKETS; i++)
		for (pp = &rt->buckets[i]; (n = *pp);) {
			if (n->kept) {
				pp = &n->hnext;
				continue;
			}
			*pp = n->hnext;
			if (n->prog_fd > 0)
				close(n->prog_fd);
			free(n->insns);
			free(n);
			freed++;
		}
	/* A parent freed nothing this round that a child kept: the next
	 * reap, after its child, frees it. */
	if (freed)
		rt->reaped--;
	return freed;
}

void sf_rt_spare_wish(struct sf_runtime *rt, struct sf_node *node, int kcount)
{
	rt->spare_of = node;
	rt->spare_kcount = kcount;
}

bool sf_rt_path_has(const struct sf_node *n, uint32_t id)
{
	for (; n; n = n->parent)
		if (n->id == id)
			return true;
	return false;
}

/* Gives n's slot back, its PROG_ARRAY entry left as it is. */
static void release_slot(struct sf_runtime *rt, struct sf_node *n)
{
	if (n->slot) {
		rt->slots[n->slot] = NULL;
		n->released = true;
		rt->released++;
	}
	n->slot = 0;
	n->linear = false;
	n->standin = false;
	n->settle_failed = false;
	if (n->prog_fd > 0)
		close(n->prog_fd);
	n->prog_fd = 0;
}

void sf_rt_node_unload(struct sf_runtime *rt, struct sf_node *n)
{
	if (n->slot && rt->fd_progs > 0) {
		int key = n->slot;

		bpf_map_delete_elem(rt->fd_progs, &key);
	}
	release_slot(rt, n);
}

/* Pinned: the PROG_ARRAY keeps the programs; only our fds go. */
void sf_rt_nodes_free(struct sf_runtime *rt)
{
	size_t i;

	for (i = 0; i < SF_RT_HASH_BUCKETS; i++) {
		struct sf_node *n = rt->buckets[i], *next;

		for (; n; n = next) {
			next = n->hnext;
			if (n->prog_fd > 0)
				close(n->prog_fd);
			free(n->insns);
			free(n);
		}
		rt->buckets[i] = NULL;
	}
	memset(rt->slots, 0, sizeof(rt->slots));
}

int sf_rt_slots_unused(struct sf_runtime *rt, bool unused[SF_MAX_CHAINS])
{
	bool used[SF_MAX_CHAINS] = { false };
	struct sf_rt_recs r;
	size_t i;
	int err, n = 0;

	/* A removed cgroup's record holds its chain's slot. */
	sf_rt_cg_prune(rt);
	err = sf_rt_iter_run(rt, 0, false, &r);
	if (err)
		return err;
	for (i = 0; i < r.n; i++) {
		if (r.r[i].chain < SF_MAX_CHAINS)
			used[r.r[i].chain] = true;
		if (r.r[i].old < SF_MAX_CHAINS)
			used[r.r[i].old] = true;
	}
	free(r.r);
	for (i = 0; i < SF_MAX_CHAINS; i++) {
		unused[i] = i && rt->slots[i] && !used[i] && !rt->slots[i]->busy &&
			    !sf_rt_cg_uses_slot(rt, i);
		n += unused[i];
	}
	return n;
}

static int by_last_use(const void *a, const void *b)
{
	const struct sf_node *x = *(struct sf_node *const *)a, *y = *(struct sf_node *const *)b;

	return x->last_use < y->last_use ? -1 : x->last_use > y->last_use;
}

/*
 * Gives back slots of chains no task and no cgroup has (an iteration over
 * all tasks). As slots run short: the older half of them by their last
 * attach, at least one, so that a chain attached again and again (a
 * service's, a container image's) stays loaded while another uid attaches
 * chain after chain that is never reused, and its next attach is not one
 * more verification; -ENOSPC when none is unused. gone_only: every one of
 * a gone cgroup's chain (made for a cgroup, given to no task's attach, not
 * a spare), whose id nothing can attach again. How many, or -errno.
 */
static int give_back(struct sf_runtime *rt, bool gone_only)
{
	bool unused[SF_MAX_CHAINS];
	struct sf_node *idle[SF_MAX_CHAINS];
	int err = sf_rt_slots_unused(rt, unused);
	size_t i, n = 0, k;

	if (err < 0)
		return err;
	for (i = 1; i < SF_MAX_CHAINS; i++)
		if (unused[i] && (!gone_only || (rt->slots[i]->cgroup_only &&
						 !rt->slots[i]->spare)))
			idle[n++] = rt->slots[i];
	if (!n)
		return gone_only ? 0 : -ENOSPC;
	/* A task the last attach moved away from a slot may still be in
	 * its dispatcher with the old slot number in hand. */
	err = sf_rt_quiesce(rt);
	if (err)
		return err;
	k = n;
	if (!gone_only) {
		qsort(idle, n, sizeof(*idle), by_last_use);
		k = (n + 1) / 2;
	}
	/* No task has these slots: their PROG_ARRAY entries stay until the
	 * slots' next installs replace them. Every change of an entry
	 * patches the dispatcher's direct tail call to it
	 * (prog_array_map_poke_run()): 0.7 ms an entry measured on 6.18,
	 * which for up to 255 entries at once, under rt->lock, made
	 * everyone wait for a fifth of a second. */
	for (i = 0; i < k; i++) {
		sf_rt_cg_forget_slot(rt, idle[i]->slot);
		release_slot(rt, idle[i]);
	}
	return (int)k;
}

int sf_rt_slots_release_gone(struct sf_runtime *rt)
{
	int r;

	/* Cgroups found gone by the attaches, which prune them: no stat of
	 * every cgroup at each call. */
	if (rt->cg_gone == rt->cg_gone_seen)
		return 0;
	r = give_back(rt, true);
	if (r >= 0)
		rt->cg_gone_seen = rt->cg_gone;
	return r;
}

static int alloc_slot(struct sf_runtime *rt)
{
	int i, pass, err;

	for (pass = 0; pass < 2; pass++) {
		for (i = 1; i < SF_MAX_CHAINS; i++)
			if (!rt->slots[i])
				return i;
		err = give_back(rt, false);
		if (err < 0)
			return err;
	}
	return -ENOSPC;
}

_Static_assert(SF_FLAGS_ABI(0) == C2E_ABI_SECCOMP &&
	       SF_FLAGS_ABI(SF_FLAG_RFC2012) == C2E_ABI_RFC_X86_64 &&
	       SF_FLAGS_ABI(SF_FLAG_RFC2012 | SF_FLAG_RFC_I386) == C2E_ABI_RFC_I386,
	       "SF_FLAGS_ABI() gives classic2ebpf's ABI numbers");

int sf_runtime_filter_check(const struct sock_fprog *prog, unsigned int flags,
			    struct c2e_error *err)
{
	if (!SF_FLAGS_RFC_OK(flags) || !SF_FLAGS_SIDE_OK(flags))
		return -EINVAL;
	if (!prog || !prog->filter || prog->len == 0 || prog->len > C2E_MAX_INSNS) {
		if (err) {
			memset(err, 0, sizeof(*err));
			err->index = -1;
			snprintf(err->msg, sizeof(err->msg), "program length %u not in 1..%d",
				 prog ? prog->len : 0, C2E_MAX_INSNS);
		}
		return -EINVAL;
	}
	if (flags & SF_ATTACH_CHECKED)
		return 0;
	if (c2e_validate_abi(prog->filter, prog->len,
			     (enum c2e_abi)SF_FLAGS_ABI(flags), err))
		return -EINVAL;
	return 0;
}

int sf_rt_filter_insns(const struct sock_filter *insns, size_t len,
		       unsigned int flags)
{
	if (flags & SF_FLAG_RFC2012)
		return (int)len;
	return c2e_kernel_insn_count(insns, len);
}

/* The chain of node as filter arrays, oldest first (malloc'd). */
static int node_filters(const struct sf_node *node, struct sf_chain_filter **cfp,
			struct sock_fprog **fpp)
{
	size_t i, n = node->depth;
	struct sf_chain_filter *cf = calloc(n, sizeof(*cf));
	struct sock_fprog *fp = calloc(n, sizeof(*fp));
	const struct sf_node *w;

	*cfp = cf;
	*fpp = fp;
	if (!cf || !fp)
		return -ENOMEM;
	for (w = node, i = n; w; w = w->parent) {
		i--;
		cf[i] = (struct sf_chain_filter){ w->insns, w->len, w->id,
						  (uint16_t)w->flags, w->hits_base };
		fp[i] = (struct sock_fprog){ (unsigned short)w->len, w->insns };
	}
	return 0;
}

/* Whether node's counters are in use: its program may still run. */
static bool hits_live(const struct sf_node *n)
{
	return n->hits_base && (!n->dead || n->slot);
}

/* The counters a node of its id and program already has, or the first
 * free range of sf_hits (zeroed: an earlier filter may have used it). */
static int hits_alloc(struct sf_runtime *rt, struct sf_node *node)
{
	uint32_t need = (uint32_t)node->len + 1, base = 1;
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *zero;
	bool moved = true;
	size_t i;
	struct sf_node *w;

	for (i = 0; i < SF_RT_HASH_BUCKETS; i++)
		for (w = rt->buckets[i]; w; w = w->hnext)
			if (hits_live(w) && w->id == node->id && w->len == node->len &&
			    !memcmp(w->insns, node->insns, w->len * sizeof(*w->insns))) {
				node->hits_base = w->hits_base;
				return 0;
			}
	while (moved) {
		moved = false;
		for (i = 0; i < SF_RT_HASH_BUCKETS; i++)
			for (w = rt->buckets[i]; w; w = w->hnext)
				if (hits_live(w) && w->hits_base < base + need &&
				    base < w->hits_base + w->len + 1) {
					base = w->hits_base + (uint32_t)w->len + 1;
					moved = true;
				}
	}
	if (base + need > SF_HITS_MAX || ncpu <= 0)
		return -ENOSPC;
	zero = calloc((size_t)ncpu, sizeof(*zero));
	if (!zero)
		return -ENOMEM;
	for (i = 0; i < need; i++) {
		uint32_t key = base + (uint32_t)i;

		if (bpf_map_update_elem(rt->fd_hits, &key, zero, BPF_ANY)) {
			free(zero);
			return -errno;
		}
	}
	free(zero);
	node->hits_base = base;
	return 0;
}

int sf_rt_build_begin(struct sf_runtime *rt, struct sf_node *node, struct sf_chain_build *b)
{
	int err = 0;

	if (!b->rt) {
		b->rt = rt;
		__atomic_add_fetch(&rt->building, 1, __ATOMIC_SEQ_CST);
	}
	b->node = node;
	b->n = node->depth;
	b->search = !rt->linear_first;
	if ((node->flags & SF_FLAG_COUNT) && !node->hits_base)
		err = hits_alloc(rt, node);
	return err ? err : node_filters(node, &b->cf, &b->fp);
}

/* Whether prog, a chain's searched form, is its linear form too (no run
 * was long enough to search): then there is nothing to swap in. */
static bool same_as_linear(struct sf_runtime *rt, const struct sf_chain_build *b,
			   const struct sf_chain_maps *maps, const struct c2e_ebpf *prog)
{
	struct c2e_ebpf lin = { 0 };
	bool same;

	same = !sf_chain_emit(&rt->layout, b->cf, b->n, maps, false, &lin) &&
	       lin.len == prog->len &&
	       !memcmp(lin.insns, prog->insns, lin.len * sizeof(*lin.insns));
	c2e_ebpf_free(&lin);
	return same;
}

int sf_rt_build_run(struct sf_runtime *rt, struct sf_chain_build *b)
{
	struct sf_chain_maps maps = { rt->fd_tasks, rt->fd_progs, rt->fd_hits };
	struct c2e_ebpf prog = { 0 };
	uint64_t t = sf_rt_now_ns(), t1;
	int err;

	err = sf_chain_emit(&rt->layout, b->cf, b->n, &maps, b->search, &prog);
	if (!err && b->upgrade)
		b->same = same_as_linear(rt, b, &maps, &prog);
	t1 = sf_rt_now_ns();
	b->ns[0] = t1 - t;
	if (!err && !b->same) {
		b->prog_fd = b->upgrade && __atomic_load_n(&rt->test_search_fail,
							   __ATOMIC_RELAXED) ? -E2BIG :
			     sf_chain_load(&rt->layout, &prog, rt->verbose);
		if (b->prog_fd < 0)
			err = b->prog_fd;
		b->ns[1] = sf_rt_now_ns() - t1;
	}
	c2e_ebpf_free(&prog);
	if (err || rt->defer_tables || b->upgrade)
		return err;
	t = sf_rt_now_ns();
	b->rows = calloc(SF_TABLE_PER_CHAIN, sizeof(*b->rows));
	if (!b->rows)
		return -ENOMEM;
	sf_rt_fill_rows(b->rows, b->cf, b->fp, b->n, 0, SF_TABLE_PER_CHAIN);
	b->ns[2] = sf_rt_now_ns() - t;
	return 0;
}

int sf_rt_build_unlocked(struct sf_runtime *rt, struct sf_chain_build *b, int round)
{
	int err;

	if (round == SF_RT_BUILD_ROUNDS)
		return -EAGAIN;
	pthread_mutex_unlock(&rt->lock);
	err = sf_rt_build_run(rt, b);
	pthread_mutex_lock(&rt->lock);
	return err;
}

/* Whether b was made from node's chain as it is: the code never changes,
 * but a counted filter's node gets its counters when it is first loaded. */
static bool build_current(const struct sf_chain_build *b)
{
	const struct sf_node *w;
	size_t i = b->n;

	for (w = b->node; w; w = w->parent)
		if (i == 0 || b->cf[--i].hits_base != w->hits_base)
			return false;
	return i == 0;
}

/* b's program into node's slot, in place of what is there: 0 or -1 with
 * errno (nothing changed). */
static int swap_prog(struct sf_runtime *rt, struct sf_node *node, struct sf_chain_build *b)
{
	int slot = node->slot;

	if (bpf_map_update_elem(rt->fd_progs, &slot, &b->prog_fd, BPF_ANY))
		return -1;
	if (node->prog_fd > 0)
		close(node->prog_fd);
	node->prog_fd = b->prog_fd;
	b->prog_fd = -1;
	return 0;
}

/* b, built for a node on its stand-in (standin.c), takes its slot's place:
 * a call in the slot meanwhile runs the stand-in or the program, each
 * right for the gated tasks that alone can have the chain till now. */
static int settle_standin(struct sf_runtime *rt, struct sf_chain_build *b)
{
	struct sf_node *node = b->node;

	if (!node->standin || rt->slots[node->slot] != node)
		return -ESTALE;
	if (swap_prog(rt, node, b))
		return -errno;
	node->linear = !b->search;
	node->standin = false;
	/* Loaded for everyone from here: a crash before this line leaves an
	 * adopting runtime one more load to make. */
	sf_rt_save_state(rt);
	return 0;
}

int sf_rt_build_install(struct sf_runtime *rt, struct sf_chain_build *b)
{
	struct sf_node *node = b->node;
	struct sf_const *row;
	bool detached;
	uint64_t t;
	int slot, err;

	if (sf_rt_node_loaded(node))
		return 0; /* loaded meanwhile: b is not needed */
	if (node->dead || (!b->standin && !build_current(b)))
		return -ESTALE;
	if (node->slot)
		return b->standin ? 0 : settle_standin(rt, b);
	/* Before any task can be given the chain: never one unjudged. The
	 * attach paths check again, as a chain loaded earlier is reused; a
	 * spare is given to nobody until such an attach takes it. */
	detached = !b->spare && !sf_rt_dispatch_attached(rt);
	t = detached ? sf_rt_now_ns() : 0;
	err = b->spare ? 0 : sf_rt_dispatch_on(rt);
	if (detached)
		b->dispatch_ns = sf_rt_now_ns() - t;
	if (err)
		return err;
	slot = alloc_slot(rt);
	if (slot < 0)
		return slot;
	row = &rt->table[(size_t)slot * SF_TABLE_PER_CHAIN];
	if (b->rows) {
		memcpy(row, b->rows, SF_TABLE_PER_CHAIN * sizeof(*row));
	} else {
		/* "Run the chain" everywhere until sf_runtime_fill_tables(). */
		memset(row, 0, SF_TABLE_PER_CHAIN * sizeof(*row));
		node->table_pending = true;
		node->table_next = 0;
	}
	__sync_synchronize();
	if (bpf_map_update_elem(rt->fd_progs, &slot, &b->prog_fd, 0))
		return -errno;
	node->slot = slot;
	node->prog_fd = b->prog_fd;
	node->linear = !b->standin && !b->search;
	node->standin = b->standin;
	b->prog_fd = -1;
	rt->slots[slot] = node;
	/* Recorded before any task gets the slot: an adopting runtime knows
	 * every chain a task can have. */
	sf_rt_save_state(rt);
	return 0;
}

int sf_rt_build_swap(struct sf_runtime *rt, struct sf_chain_build *b)
{
	struct sf_node *node = b->node;
	int slot = node->slot;

	if (!slot || !node->linear || rt->slots[slot] != node || !b->upgrade ||
	    !build_current(b))
		return -ESTALE;
	/* The entry is replaced, never deleted first: a call that
	 * tail-calls the slot meanwhile runs one form or the other, and one
	 * already running the linear form finishes it (the program is freed
	 * only after an RCU grace period). */
	if (!b->same && swap_prog(rt, node, b))
		return -errno;
	node->linear = false;
	/* The form is recorded, so that an adopting runtime swaps in what
	 * is still due; a crash before this line only costs it a swap
	 * that was done already. */
	sf_rt_save_state(rt);
	return 0;
}

void sf_rt_build_free(struct sf_chain_build *b)
{
	if (b->rt)
		__atomic_sub_fetch(&b->rt->building, 1, __ATOMIC_SEQ_CST);
	if (b->prog_fd >= 0)
		close(b->prog_fd);
	free(b->cf);
	free(b->fp);
	free(b->rows);
	*b = (struct sf_chain_build)SF_CHAIN_BUILD_INIT;
}

/* All three steps with rt->lock held: for the administration's rebuilds. */
int sf_rt_node_load(struct sf_runtime *rt, struct sf_node *node)
{
	struct sf_chain_build b = SF_CHAIN_BUILD_INIT;
	int err;

	err = sf_rt_build_begin(rt, node, &b);
	if (!err)
		err = sf_rt_build_run(rt, &b);
	if (!err)
		err = sf_rt_build_install(rt, &b);
	sf_rt_build_free(&b);
	return err;
}

/* The next piece of a deferred table: its chain's node and slot, its
 * index, and the chain's filters (pointers to the nodes' code, which never
 * changes). 1, 0 when none is left, or -ENOMEM. */
static int next_piece(struct sf_runtime *rt, struct sf_chain_build *b, int *slot, int *piece)
{
	int i;

	for (i = 1; i < SF_MAX_CHAINS; i++) {
		struct sf_node *node = rt->slots[i];

		if (!node || !node->table_pending || node->slot != i)
			continue;
		*slot = i;
		*piece = node->table_next;
		b->node = node;
		b->n = node->depth;
		return node_filters(node, &b->cf, &b->fp) ? -ENOMEM : 1;
	}
	return 0;
}

/*
 * rt->lock for a caller that fills tables or swaps in searched forms at a
 * low priority (sfilterd's filler runs at nice 19): it holds the lock at
 * its process's priority.
 * Otherwise a nice-19 holder preempted while two nice-0 threads keep the
 * CPUs busy waits for its next slice for hundreds of ms, and every attach
 * and STATUS waits behind it. Raising needs CAP_SYS_NICE; without it the
 * lock is taken as is. Returns the nice to restore, or INT_MIN.
 */
int sf_rt_lock_unniced(struct sf_runtime *rt)
{
	id_t tid = (id_t)syscall(SYS_gettid);
	int nice;

	errno = 0;
	nice = getpriority(PRIO_PROCESS, tid);
	if (errno || nice <= 0 || setpriority(PRIO_PROCESS, tid, 0))
		nice = INT_MIN;
	pthread_mutex_lock(&rt->lock);
	return nice;
}

void sf_rt_unlock_reniced(struct sf_runtime *rt, int nice)
{
	pthread_mutex_unlock(&rt->lock);
	if (nice != INT_MIN)
		setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), nice);
}

int sf_runtime_fill_tables(struct sf_runtime *rt, int max)
{
	int nice;
	struct sf_const rows[SF_TABLE_PIECE];
	int filled = 0, found = 0;

	while (!max || filled < max) {
		struct sf_chain_build b = SF_CHAIN_BUILD_INIT;
		int slot, piece;

		nice = sf_rt_lock_unniced(rt);
		found = next_piece(rt, &b, &slot, &piece);
		sf_rt_unlock_reniced(rt, nice);
		if (found <= 0) {
			sf_rt_build_free(&b);
			break;
		}
		/* The analysis is bounded per entry (consttable.c) but not
		 * short: computed unlocked, and kept only if the slot still
		 * holds that chain and nobody filled the piece meanwhile. */
		sf_rt_fill_rows(rows, b.cf, b.fp, b.n, piece * SF_TABLE_PIECE, SF_TABLE_PIECE);
		nice = sf_rt_lock_unniced(rt);
		if (rt->slots[slot] == b.node && b.node->table_pending &&
		    b.node->table_next == piece) {
			memcpy(&rt->table[(size_t)slot * SF_TABLE_PER_CHAIN +
					  (size_t)piece * SF_TABLE_PIECE], rows, sizeof(rows));
			__sync_synchronize();
			b.node->table_next = (uint16_t)(piece + 1);
			b.node->table_pending = piece + 1 < SF_TABLE_PER_CHAIN / SF_TABLE_PIECE;
		}
		sf_rt_unlock_reniced(rt, nice);
		sf_rt_build_free(&b);
		filled++;
	}
	return found < 0 ? found : filled;
}
