// SPDX-License-Identifier: GPL-2.0
/*
 * The runtime from user space (loader/runtime.h): loads bpf/sfilter.bpf.c,
 * detects the enforcement tier, compiles chains (loader/runtime_chain.c),
 * gives tasks their chains through the task iterator, and reads events.
 *
 * Chains form a tree: a node is (parent chain, filter, attach flags), so
 * equal chains are one node, one generated program and one PROG_ARRAY slot
 * shared by every task that has it, and "ancestor" (TSYNC's rule) is a walk
 * up the parents. The kernel holds the truth of which task has which chain
 * (task storage, inherited across fork by sf_fork); user space reads it
 * back through the iterator before every change.
 */
#define _GNU_SOURCE
#include "runtime.h"
#include "runtime_internal.h"
#include "sfilter.skel.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <json-c/json.h>
#include <seccomp.h>

struct sf_node {
	struct sf_node *parent;
	struct sf_node *hnext;       /* hash bucket */
	struct sock_filter *insns;
	size_t len;
	unsigned int flags;
	uint32_t id;                 /* the filter's id */
	uint32_t depth;              /* filters in the chain */
	uint32_t path_insns;         /* sum of (kernel count + 4) over the chain */
	uint64_t hash;
	int slot;                    /* PROG_ARRAY slot, 0 when not loaded */
	int prog_fd;
};

#define HASH_BUCKETS 1024

struct sf_runtime {
	struct sfilter_bpf *skel;
	enum sf_tier tier;
	bool verbose;
	bool iter_filter;            /* the kernel takes bpf_iter_link_info.task */
	struct sf_layout layout;
	struct sf_const *table;      /* sf_table, mmap'd */
	size_t table_bytes;
	struct sf_node *slots[SF_MAX_CHAINS];
	struct sf_node *buckets[HASH_BUCKETS];
	uint32_t next_id;
	struct ring_buffer *rb;
	sf_event_fn fn;
	void *fn_ctx;
	pthread_mutex_t lock;
};

static bool g_verbose;

static int print_fn(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* Quiet unless verbose: probing the tier fails on purpose. */
	if (!g_verbose || level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

const char *sf_tier_name(enum sf_tier tier)
{
	return tier == SF_TIER_LSM ? "lsm" : "tracepoint";
}

enum sf_tier sf_runtime_tier(const struct sf_runtime *rt)
{
	return rt->tier;
}

int sf_runtime_event_fd(const struct sf_runtime *rt)
{
	return ring_buffer__epoll_fd(rt->rb);
}

/* ---- loading and the tier ------------------------------------------------ */

static bool is_lsm_prog(const struct bpf_program *p)
{
	return strncmp(bpf_program__section_name(p), "lsm/", 4) == 0;
}

/* Opens, loads and attaches the skeleton; with_lsm also loads the LSM
 * programs for hooks the kernel has. */
static int load_skel(struct sf_runtime *rt, bool with_lsm, const struct btf *vmlinux)
{
	struct sfilter_bpf *skel;
	struct bpf_program *p;
	int err, fd, key = SF_SLOT_ENFORCE;

	skel = sfilter_bpf__open();
	if (!skel)
		return -errno;
	skel->rodata->sf_tier = with_lsm ? SF_BPF_TIER_LSM : SF_BPF_TIER_TRACEPOINT;
	bpf_object__for_each_program(p, skel->obj) {
		char fn[128];

		if (!is_lsm_prog(p))
			continue;
		snprintf(fn, sizeof(fn), "bpf_lsm_%s", bpf_program__section_name(p) + 4);
		if (!with_lsm || !vmlinux ||
		    btf__find_by_name_kind(vmlinux, fn, BTF_KIND_FUNC) < 0)
			bpf_program__set_autoload(p, false);
	}
	bpf_program__set_autoattach(skel->progs.sf_iter, false);
	/* Reached by tail call only: attached, it would act on stale verdicts. */
	bpf_program__set_autoattach(skel->progs.sf_enforce, false);
	err = sfilter_bpf__load(skel);
	if (err)
		goto fail;
	fd = bpf_program__fd(skel->progs.sf_enforce);
	err = bpf_map_update_elem(bpf_map__fd(skel->maps.sf_progs), &key, &fd, 0);
	if (err) {
		err = -errno;
		goto fail;
	}
	err = sfilter_bpf__attach(skel);
	if (err)
		goto fail;
	rt->skel = skel;
	return 0;
fail:
	sfilter_bpf__destroy(skel);
	return err < 0 ? err : -EINVAL;
}

static int probe_iter_filter(struct sf_runtime *rt)
{
	DECLARE_LIBBPF_OPTS(bpf_iter_attach_opts, o);
	union bpf_iter_link_info li = {};
	struct bpf_link *link;

	li.task.pid = getpid();
	o.link_info = &li;
	o.link_info_len = sizeof(li);
	link = bpf_program__attach_iter(rt->skel->progs.sf_iter, &o);
	if (!link)
		return 0;
	bpf_link__destroy(link);
	return 1;
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct sf_runtime *rt = ctx;

	if (size < sizeof(struct sf_event) || !rt->fn)
		return 0;
	return rt->fn(rt->fn_ctx, data);
}

int sf_runtime_open(struct sf_runtime **out, const struct sf_runtime_opts *opts)
{
	struct sf_runtime *rt;
	struct btf *vmlinux;
	int err;

	*out = NULL;
	rt = calloc(1, sizeof(*rt));
	if (!rt)
		return -ENOMEM;
	pthread_mutex_init(&rt->lock, NULL);
	rt->verbose = opts && opts->verbose;
	rt->next_id = 1;
	g_verbose = rt->verbose;
	libbpf_set_print(print_fn);

	err = sf_layout_read(&rt->layout);
	if (err)
		goto fail;
	vmlinux = btf__load_vmlinux_btf();
	err = -ENOSYS;
	if (!(opts && opts->force_tracepoint)) {
		err = load_skel(rt, true, vmlinux);
		if (err && rt->verbose)
			fprintf(stderr, "sfilter: LSM programs refused (%s): tracepoint tier\n",
				strerror(-err));
	}
	rt->tier = err ? SF_TIER_TRACEPOINT : SF_TIER_LSM;
	if (err)
		err = load_skel(rt, false, vmlinux);
	btf__free(vmlinux);
	if (err) {
		fprintf(stderr, "sfilter: loading BPF programs: %s\n", strerror(-err));
		goto fail;
	}
	rt->iter_filter = probe_iter_filter(rt);

	rt->table_bytes = (size_t)SF_MAX_CHAINS * SF_TABLE_PER_CHAIN * sizeof(struct sf_const);
	rt->table = mmap(NULL, rt->table_bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
			 bpf_map__fd(rt->skel->maps.sf_table), 0);
	if (rt->table == MAP_FAILED) {
		rt->table = NULL;
		err = -errno;
		goto fail;
	}
	rt->rb = ring_buffer__new(bpf_map__fd(rt->skel->maps.sf_events), on_event, rt, NULL);
	if (!rt->rb) {
		err = -errno;
		goto fail;
	}
	*out = rt;
	return 0;
fail:
	sf_runtime_close(rt);
	return err;
}

static void node_unload(struct sf_runtime *rt, struct sf_node *n)
{
	if (n->slot) {
		int key = n->slot;

		if (rt->skel)
			bpf_map_delete_elem(bpf_map__fd(rt->skel->maps.sf_progs), &key);
		rt->slots[n->slot] = NULL;
		n->slot = 0;
	}
	if (n->prog_fd > 0)
		close(n->prog_fd);
	n->prog_fd = 0;
}

void sf_runtime_close(struct sf_runtime *rt)
{
	size_t i;

	if (!rt)
		return;
	ring_buffer__free(rt->rb);
	/* Destroying the skeleton detaches the programs and frees the task
	 * storage map: every confined task is unconfined from here on. */
	sfilter_bpf__destroy(rt->skel);
	rt->skel = NULL;
	for (i = 0; i < HASH_BUCKETS; i++) {
		struct sf_node *n = rt->buckets[i], *next;

		for (; n; n = next) {
			next = n->hnext;
			node_unload(rt, n);
			free(n->insns);
			free(n);
		}
	}
	if (rt->table)
		munmap(rt->table, rt->table_bytes);
	pthread_mutex_destroy(&rt->lock);
	free(rt);
}

/* ---- the iterator ------------------------------------------------------- */

struct recs {
	struct sf_iter_rec *r;
	size_t n;
};

/*
 * One pass of sf_iter over the thread group tgid (0: every task), applying
 * the pending entries and returning one record per task it reports.
 */
static int iter_run(struct sf_runtime *rt, pid_t tgid, bool all, struct recs *out)
{
	DECLARE_LIBBPF_OPTS(bpf_iter_attach_opts, o);
	union bpf_iter_link_info li = {};
	struct bpf_link *link;
	size_t cap = 0;
	char buf[4096];
	int fd, err = 0;
	ssize_t got;

	out->r = NULL;
	out->n = 0;
	rt->skel->bss->sf_iter_tid = 0;
	rt->skel->bss->sf_iter_tgid = tgid;
	rt->skel->bss->sf_iter_all = all;
	if (tgid && rt->iter_filter) {
		li.task.pid = tgid;
		o.link_info = &li;
		o.link_info_len = sizeof(li);
	}
	link = bpf_program__attach_iter(rt->skel->progs.sf_iter, &o);
	if (!link)
		return -errno;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	/* Records are never split across reads: each read returns whole
	 * seq_file chunks. */
	while ((got = read(fd, buf, sizeof(buf))) > 0) {
		size_t k, nrec = got / sizeof(struct sf_iter_rec);

		if (out->n + nrec > cap) {
			struct sf_iter_rec *r;

			cap = 2 * (out->n + nrec) + 16;
			r = realloc(out->r, cap * sizeof(*r));
			if (!r) {
				err = -ENOMEM;
				break;
			}
			out->r = r;
		}
		for (k = 0; k < nrec; k++)
			memcpy(&out->r[out->n++], buf + k * sizeof(struct sf_iter_rec),
			       sizeof(struct sf_iter_rec));
	}
	if (got < 0)
		err = -errno;
	close(fd);
out:
	bpf_link__destroy(link);
	if (err) {
		free(out->r);
		out->r = NULL;
		out->n = 0;
	}
	return err;
}

/* The thread group of tid, from /proc (the daemon's pid namespace). */
static pid_t tgid_of(pid_t tid)
{
	char path[64], line[256];
	pid_t tgid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

static const struct sf_iter_rec *find_rec(const struct recs *r, pid_t tid)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if ((pid_t)r->r[i].tid == tid)
			return &r->r[i];
	return NULL;
}

/* Reads the chain slot of every thread in tid's group. */
static int read_group(struct sf_runtime *rt, pid_t tid, pid_t *tgid, struct recs *r)
{
	int err;

	*tgid = tgid_of(tid);
	if (*tgid <= 0)
		return -ESRCH;
	err = iter_run(rt, *tgid, true, r);
	if (err)
		return err;
	if (!find_rec(r, tid)) {
		/* A kernel whose filtered iteration missed the thread: look
		 * at every task instead. */
		free(r->r);
		err = iter_run(rt, 0, true, r);
		if (err)
			return err;
		if (!find_rec(r, tid)) {
			free(r->r);
			r->r = NULL;
			return -ESRCH;
		}
	}
	return 0;
}

/* ---- chains ------------------------------------------------------------- */

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--)
		h = (h ^ *c++) * 0x100000001b3ULL;
	return h;
}

static struct sf_node *node_find(struct sf_runtime *rt, struct sf_node *parent,
				 const struct sock_filter *insns, size_t len,
				 unsigned int flags, uint64_t hash)
{
	struct sf_node *n;

	for (n = rt->buckets[hash % HASH_BUCKETS]; n; n = n->hnext)
		if (n->hash == hash && n->parent == parent && n->len == len &&
		    n->flags == flags &&
		    memcmp(n->insns, insns, len * sizeof(*insns)) == 0)
			return n;
	return NULL;
}

static bool is_ancestor_or_self(const struct sf_node *a, const struct sf_node *of)
{
	if (!a)
		return true;
	for (; of; of = of->parent)
		if (of == a)
			return true;
	return false;
}

/* Frees the slots of chains no task has (an iteration over all tasks). */
static int collect_slots(struct sf_runtime *rt)
{
	bool used[SF_MAX_CHAINS] = { false };
	struct recs r;
	size_t i;
	int err = iter_run(rt, 0, false, &r), freed = 0;

	if (err)
		return err;
	for (i = 0; i < r.n; i++)
		if (r.r[i].chain < SF_MAX_CHAINS)
			used[r.r[i].chain] = true;
	free(r.r);
	for (i = 1; i < SF_MAX_CHAINS; i++)
		if (rt->slots[i] && !used[i]) {
			node_unload(rt, rt->slots[i]);
			freed++;
		}
	return freed ? 0 : -ENOSPC;
}

static int alloc_slot(struct sf_runtime *rt)
{
	int i, pass, err;

	for (pass = 0; pass < 2; pass++) {
		for (i = 1; i < SF_MAX_CHAINS; i++)
			if (!rt->slots[i])
				return i;
		err = collect_slots(rt);
		if (err)
			return err;
	}
	return -ENOSPC;
}

/* Fills the chain's rows of the action table. */
static void fill_table(struct sf_runtime *rt, int slot,
		       const struct sf_chain_filter *cf, const struct sock_fprog *fp,
		       size_t n)
{
	static const uint32_t arches[SF_TABLE_ARCHES] = {
		[SF_ARCH_X86_64] = SF_AUDIT_ARCH_X86_64,
		[SF_ARCH_I386] = SF_AUDIT_ARCH_I386,
		[SF_ARCH_X32] = SF_AUDIT_ARCH_X86_64,
	};
	struct sf_const *row = &rt->table[(size_t)slot * SF_TABLE_PER_CHAIN];
	int a, nr;

	for (a = 0; a < SF_TABLE_ARCHES; a++) {
		for (nr = 0; nr < SF_TABLE_NR; nr++) {
			struct sf_const c = { .kind = SF_CONST_RUN };
			int snr = a == SF_ARCH_X32 ? (int)(SF_X32_BIT | nr) : nr;
			uint32_t ret;
			size_t w;

			if (c2e_const_verdict_winner(fp, n, arches[a], snr, &ret, &w)) {
				c.kind = SF_CONST_VALUE;
				c.ret = ret;
				if (w < n) {
					c.filter_id = cf[w].id;
					c.flags = cf[w].flags;
				}
			}
			row[a * SF_TABLE_NR + nr] = c;
		}
	}
	__sync_synchronize();
}

/* Generates, loads and installs the chain program of n. */
static int node_load(struct sf_runtime *rt, struct sf_node *node)
{
	struct sf_chain_filter *cf;
	struct sock_fprog *fp;
	struct c2e_ebpf prog = { 0 };
	struct sf_node *w;
	size_t i, n = node->depth;
	int slot, fd, err;

	cf = calloc(n, sizeof(*cf));
	fp = calloc(n, sizeof(*fp));
	if (!cf || !fp) {
		err = -ENOMEM;
		goto out;
	}
	for (w = node, i = n; w; w = w->parent) {
		i--;
		cf[i] = (struct sf_chain_filter){ w->insns, w->len, w->id,
						  (uint16_t)w->flags };
		fp[i] = (struct sock_fprog){ (unsigned short)w->len, w->insns };
	}
	err = sf_chain_emit(&rt->layout, cf, n, bpf_map__fd(rt->skel->maps.sf_tasks),
			    bpf_map__fd(rt->skel->maps.sf_progs), &prog);
	if (err)
		goto out;
	fd = sf_chain_load(&rt->layout, &prog, rt->verbose);
	if (fd < 0) {
		err = fd;
		goto out;
	}
	slot = alloc_slot(rt);
	if (slot < 0) {
		close(fd);
		err = slot;
		goto out;
	}
	fill_table(rt, slot, cf, fp, n);
	if (bpf_map_update_elem(bpf_map__fd(rt->skel->maps.sf_progs), &slot, &fd, 0)) {
		err = -errno;
		close(fd);
		goto out;
	}
	node->slot = slot;
	node->prog_fd = fd;
	rt->slots[slot] = node;
out:
	c2e_ebpf_free(&prog);
	free(cf);
	free(fp);
	return err;
}

/* ---- attach ------------------------------------------------------------- */

/* Moves every listed thread from its chain (expect) to slot, in one
 * iterator pass. Returns how many were applied, or -errno. */
static int apply(struct sf_runtime *rt, pid_t tgid, const struct sf_iter_rec *want,
		 size_t n, int slot, struct recs *after)
{
	int pfd = bpf_map__fd(rt->skel->maps.sf_pending), err, applied = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		struct sf_pending p = { .chain = slot, .expect = want[i].chain };
		uint32_t key = want[i].tid;

		if (bpf_map_update_elem(pfd, &key, &p, BPF_ANY))
			return -errno;
	}
	err = iter_run(rt, tgid, true, after);
	if (err == 0 && rt->iter_filter) {
		/* Some tid not visited by a filtered pass: look everywhere. */
		for (i = 0; i < n; i++)
			if (!find_rec(after, want[i].tid))
				break;
		if (i < n) {
			free(after->r);
			err = iter_run(rt, 0, true, after);
		}
	}
	for (i = 0; i < n; i++) {
		uint32_t key = want[i].tid;

		bpf_map_delete_elem(pfd, &key);
	}
	if (err)
		return err;
	for (i = 0; i < after->n; i++)
		applied += after->r[i].applied;
	return applied;
}

static int attach_locked(struct sf_runtime *rt, pid_t tid,
			 const struct sock_fprog *prog, unsigned int flags,
			 uint32_t *filter_id)
{
	struct recs group = { 0 }, after = { 0 };
	struct sf_node *parent = NULL, *node;
	const struct sf_iter_rec *me;
	pid_t tgid;
	uint64_t hash;
	int kcount, err, round;
	size_t i;

	err = read_group(rt, tid, &tgid, &group);
	if (err)
		return err;
	me = find_rec(&group, tid);
	if (me->chain) {
		parent = me->chain < SF_MAX_CHAINS ? rt->slots[me->chain] : NULL;
		if (!parent) {
			err = -EIO; /* a chain this runtime did not make */
			goto out;
		}
	}

	/* seccomp_attach_filter(): the size rule first, then TSYNC. */
	kcount = c2e_kernel_insn_count(prog->filter, prog->len);
	if (kcount < 0) {
		err = kcount;
		goto out;
	}
	if ((uint64_t)kcount + (parent ? parent->path_insns : 0) > C2E_MAX_CHAIN_INSNS) {
		err = -ENOMEM;
		goto out;
	}
	if (flags & SF_ATTACH_TSYNC) {
		/* seccomp_can_sync_threads(): every other thread's chain is
		 * the caller's or an ancestor of it. */
		for (i = 0; i < group.n; i++) {
			struct sf_node *t = group.r[i].chain < SF_MAX_CHAINS ?
					    rt->slots[group.r[i].chain] : NULL;

			if ((pid_t)group.r[i].tid == tid ||
			    (pid_t)group.r[i].tgid != tgid)
				continue;
			if ((group.r[i].chain && !t) || !is_ancestor_or_self(t, parent)) {
				err = group.r[i].tid;
				goto out;
			}
		}
	}

	hash = fnv(parent ? parent->hash : 0xcbf29ce484222325ULL, &flags, sizeof(flags));
	hash = fnv(hash, prog->filter, prog->len * sizeof(*prog->filter));
	node = node_find(rt, parent, prog->filter, prog->len, flags, hash);
	if (!node) {
		node = calloc(1, sizeof(*node));
		if (!node) {
			err = -ENOMEM;
			goto out;
		}
		node->insns = malloc(prog->len * sizeof(*prog->filter));
		if (!node->insns) {
			free(node);
			err = -ENOMEM;
			goto out;
		}
		memcpy(node->insns, prog->filter, prog->len * sizeof(*prog->filter));
		node->len = prog->len;
		node->parent = parent;
		node->flags = flags;
		node->hash = hash;
		node->id = rt->next_id++;
		node->depth = parent ? parent->depth + 1 : 1;
		node->path_insns = (parent ? parent->path_insns : 0) + kcount + C2E_CHAIN_PENALTY;
		node->hnext = rt->buckets[hash % HASH_BUCKETS];
		rt->buckets[hash % HASH_BUCKETS] = node;
	}
	if (!node->slot) {
		err = node_load(rt, node);
		if (err)
			goto out;
	}

	/* Give the chain: the caller alone, or (TSYNC) every thread of the
	 * group, retried while threads appear or change under us. */
	for (round = 0; round < 8; round++) {
		struct sf_iter_rec *want = group.r;
		size_t n = 0;

		for (i = 0; i < group.n; i++) {
			const struct sf_iter_rec *g = &group.r[i];

			if ((pid_t)g->tgid != tgid || g->chain == (uint32_t)node->slot)
				continue;
			if ((pid_t)g->tid != tid && !(flags & SF_ATTACH_TSYNC))
				continue;
			if ((pid_t)g->tid == tid && round > 0 && !(flags & SF_ATTACH_TSYNC))
				continue;
			want[n++] = *g;
		}
		if (n == 0)
			break;
		err = apply(rt, tgid, want, n, node->slot, &after);
		if (err < 0)
			goto out;
		free(group.r);
		group = after;
		after.r = NULL;
		me = find_rec(&group, tid);
		if (!me) {
			err = -ESRCH;
			goto out;
		}
		if (!(flags & SF_ATTACH_TSYNC)) {
			if (me->chain != (uint32_t)node->slot) {
				err = -EAGAIN;
				goto out;
			}
			break;
		}
		/* TSYNC: a thread that appeared meanwhile inherited some
		 * thread's old chain; the next round moves it too. */
	}
	err = 0;
	if (flags & SF_ATTACH_TSYNC)
		for (i = 0; i < group.n; i++)
			if ((pid_t)group.r[i].tgid == tgid &&
			    group.r[i].chain != (uint32_t)node->slot)
				err = -EAGAIN;
	if (!err && filter_id)
		*filter_id = node->id;
out:
	free(group.r);
	free(after.r);
	return err;
}

int sf_runtime_attach(struct sf_runtime *rt, pid_t tid,
		      const struct sock_fprog *prog, unsigned int flags,
		      uint32_t *filter_id, struct c2e_error *err)
{
	int ret;

	if (flags & ~SF_ATTACH_KNOWN_FLAGS)
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
	if (c2e_validate(prog->filter, prog->len, err))
		return -EINVAL;
	if (tid <= 0)
		return -ESRCH;
	pthread_mutex_lock(&rt->lock);
	ret = attach_locked(rt, tid, prog, flags, filter_id);
	pthread_mutex_unlock(&rt->lock);
	return ret;
}

/* ---- events ------------------------------------------------------------- */

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

static const char *taken_name(unsigned int t)
{
	switch (t) {
	case SF_TAKEN_KILLED: return "killed";
	case SF_TAKEN_LOGGED: return "logged";
	case SF_TAKEN_DENIED: return "denied";
	case SF_TAKEN_FALLBACK_KILLED: return "fallback-killed";
	case SF_TAKEN_FALLBACK_LOGGED: return "fallback-logged";
	default: return "none";
	}
}

int sf_event_to_json(const struct sf_event *ev, char *buf, size_t size)
{
	struct json_object *o = json_object_new_object(), *args;
	char comm[17], tmp[32];
	const char *name, *s;
	uint32_t action = c2e_effective_action(ev->ret);
	uint32_t scmp_arch;
	char *sysname = NULL;
	size_t len;
	int i, nr = ev->nr;

	if (!o)
		return -ENOMEM;
	memcpy(comm, ev->comm, 16);
	comm[16] = 0;
	json_object_object_add(o, "time_ns", json_object_new_int64((int64_t)ev->time_ns));
	json_object_object_add(o, "pid", json_object_new_int(ev->pid));
	json_object_object_add(o, "tid", json_object_new_int(ev->tid));
	json_object_object_add(o, "comm", json_object_new_string(comm));
	json_object_object_add(o, "nr", json_object_new_int(ev->nr));
	if (ev->arch == SF_AUDIT_ARCH_I386) {
		scmp_arch = SCMP_ARCH_X86;
		s = "i386";
	} else if (ev->nr & SF_X32_BIT) {
		scmp_arch = SCMP_ARCH_X32;
		s = "x32";
	} else {
		scmp_arch = SCMP_ARCH_X86_64;
		s = "x86_64";
	}
	json_object_object_add(o, "arch", json_object_new_string(s));
	sysname = seccomp_syscall_resolve_num_arch(scmp_arch, nr);
	if (sysname)
		json_object_object_add(o, "syscall", json_object_new_string(sysname));
	free(sysname);
	args = json_object_new_array();
	for (i = 0; i < 6; i++) {
		snprintf(tmp, sizeof(tmp), "0x%llx", (unsigned long long)ev->args[i]);
		json_object_array_add(args, json_object_new_string(tmp));
	}
	json_object_object_add(o, "args", args);
	snprintf(tmp, sizeof(tmp), "0x%llx", (unsigned long long)ev->ip);
	json_object_object_add(o, "ip", json_object_new_string(tmp));
	snprintf(tmp, sizeof(tmp), "0x%08x", ev->ret);
	json_object_object_add(o, "ret", json_object_new_string(tmp));
	name = c2e_action_name(action);
	json_object_object_add(o, "action", json_object_new_string(name ? name : "KILL_PROCESS"));
	json_object_object_add(o, "data", json_object_new_int(ev->ret & 0xffff));
	json_object_object_add(o, "filter", json_object_new_int64(ev->filter_id));
	json_object_object_add(o, "taken", json_object_new_string(taken_name(ev->taken)));
	json_object_object_add(o, "tier", json_object_new_string(
		sf_tier_name(ev->tier == SF_BPF_TIER_LSM ? SF_TIER_LSM : SF_TIER_TRACEPOINT)));
	if (ev->err)
		json_object_object_add(o, "errno", json_object_new_int(ev->err));
	if (ev->signal)
		json_object_object_add(o, "signal", json_object_new_int(ev->signal));
	if (ev->flags & SF_FLAG_LOG)
		json_object_object_add(o, "log_flag", json_object_new_boolean(1));
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	len = strlen(s);
	if (len + 1 > size) {
		json_object_put(o);
		return -ENOSPC;
	}
	memcpy(buf, s, len + 1);
	json_object_put(o);
	return (int)len;
}
