// SPDX-License-Identifier: GPL-2.0
/*
 * The runtime from user space (loader/runtime/runtime.h): loads bpf/sfilter.bpf.c,
 * detects the enforcement tier, compiles chains (loader/runtime/chain_emit.c),
 * gives tasks their chains through the task iterator, and reads events.
 * Cgroup attach is loader/runtime/cgroup.c.
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
#include "internal.h"
#include "sfilter.skel.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <dirent.h>
#include <limits.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

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

const char *sf_runtime_tier_reason(const struct sf_runtime *rt)
{
	return rt->tier_why;
}

void sf_runtime_counters(const struct sf_runtime *rt, struct sf_counters *out)
{
	*out = (struct sf_counters){
		.events_dropped = __atomic_load_n(&rt->bss->sf_events_dropped, __ATOMIC_RELAXED),
		.fork_failed = __atomic_load_n(&rt->bss->sf_fork_failed, __ATOMIC_RELAXED),
		.tailcall_failed = __atomic_load_n(&rt->bss->sf_tailcall_failed, __ATOMIC_RELAXED),
		.cg_failed = __atomic_load_n(&rt->bss->sf_cg_failed, __ATOMIC_RELAXED),
		.orphans_killed = __atomic_load_n(&rt->bss->sf_orphans_killed, __ATOMIC_RELAXED),
	};
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

/* An iterator link over the process pidfd refers to or, with none, over
 * every task. */
static int iter_link(struct sf_runtime *rt, int pidfd)
{
	LIBBPF_OPTS(bpf_link_create_opts, o);
	union bpf_iter_link_info li = {};

	if (pidfd >= 0) {
		li.task.pid_fd = (uint32_t)pidfd;
		o.iter_info = &li;
		o.iter_info_len = sizeof(li);
	}
	return bpf_link_create(rt->fd_iter, 0, BPF_TRACE_ITER, &o);
}

static int probe_iter_filter(struct sf_runtime *rt)
{
	int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0), fd;

	if (pidfd < 0)
		return 0;
	fd = iter_link(rt, pidfd);
	close(pidfd);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct sf_runtime *rt = ctx;

	/* Shorter records only wake the reader (cgroup joins to finish, see
	 * sf_runtime_process_pending()). */
	if (size < sizeof(struct sf_event) || !rt->fn)
		return 0;
	return rt->fn(rt->fn_ctx, data);
}

static void take_skel_fds(struct sf_runtime *rt)
{
	struct sfilter_bpf *k = rt->skel;

	rt->fd_tasks = bpf_map__fd(k->maps.sf_tasks);
	rt->fd_progs = bpf_map__fd(k->maps.sf_progs);
	rt->fd_table = bpf_map__fd(k->maps.sf_table);
	rt->fd_pending = bpf_map__fd(k->maps.sf_pending);
	rt->fd_events = bpf_map__fd(k->maps.sf_events);
	rt->fd_cgroups = bpf_map__fd(k->maps.sf_cgroups);
	rt->fd_cgapp = bpf_map__fd(k->maps.sf_cg_append);
	rt->fd_cgpend = bpf_map__fd(k->maps.sf_cg_pending);
	rt->fd_tsync = bpf_map__fd(k->maps.sf_tsync);
	rt->fd_bss = bpf_map__fd(k->maps.bss);
	rt->fd_iter = bpf_program__fd(k->progs.sf_iter);
	rt->bss = k->bss;
}

/* Loads (tier probe included) into rt->skel. */
static int load_fresh(struct sf_runtime *rt, const struct sf_runtime_opts *opts)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	int err = -ENOSYS;

	if (opts && opts->force_tracepoint) {
		snprintf(rt->tier_why, sizeof(rt->tier_why), "asked for the tracepoint tier");
	} else if (sf_rt_lsm_programs_run(vmlinux, rt->tier_why, sizeof(rt->tier_why))) {
		err = load_skel(rt, true, vmlinux);
		if (err)
			snprintf(rt->tier_why, sizeof(rt->tier_why),
				 "sfilter's LSM programs refused (%s)", strerror(-err));
	}
	if (err && rt->verbose)
		fprintf(stderr, "sfilter: tracepoint tier: %s\n", rt->tier_why);
	rt->tier = err ? SF_TIER_TRACEPOINT : SF_TIER_LSM;
	if (err)
		err = load_skel(rt, false, vmlinux);
	btf__free(vmlinux);
	if (err) {
		fprintf(stderr, "sfilter: loading BPF programs: %s\n", strerror(-err));
		return err;
	}
	take_skel_fds(rt);
	rt->bss->sf_abi = SF_ABI_VERSION;
	return 0;
}

static int finish_open(struct sf_runtime *rt)
{
	rt->iter_filter = probe_iter_filter(rt);
	rt->table_bytes = (size_t)SF_MAX_CHAINS * SF_TABLE_PER_CHAIN * sizeof(struct sf_const);
	rt->table = mmap(NULL, rt->table_bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
			 rt->fd_table, 0);
	if (rt->table == MAP_FAILED) {
		rt->table = NULL;
		return -errno;
	}
	rt->rb = ring_buffer__new(rt->fd_events, on_event, rt, NULL);
	if (!rt->rb)
		return -errno;
	return 0;
}

/* The map-in-map sf_rt_quiesce() writes to: an update of an ARRAY_OF_MAPS
 * from user space returns only after every BPF program run that started
 * before it has ended (maybe_wait_bpf_programs(), kernel/bpf/syscall.c). */
static int make_sync_maps(struct sf_runtime *rt)
{
	LIBBPF_OPTS(bpf_map_create_opts, o);

	rt->fd_sync_inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, "sf_sync_in", 4, 4, 1, NULL);
	if (rt->fd_sync_inner < 0)
		return -errno;
	o.inner_map_fd = rt->fd_sync_inner;
	rt->fd_sync = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "sf_sync", 4, 4, 1, &o);
	return rt->fd_sync < 0 ? -errno : 0;
}

int sf_rt_quiesce(struct sf_runtime *rt)
{
	int key = 0;

	if (rt->fd_sync < 0)
		return -EBADF;
	return bpf_map_update_elem(rt->fd_sync, &key, &rt->fd_sync_inner, BPF_ANY) ? -errno : 0;
}

static struct sf_runtime *rt_alloc(const struct sf_runtime_opts *opts)
{
	struct sf_runtime *rt = calloc(1, sizeof(*rt));
	int err;

	if (!rt)
		return NULL;
	rt->fd_sync = rt->fd_sync_inner = -1;
	err = make_sync_maps(rt);
	if (err) {
		if (rt->fd_sync_inner >= 0)
			close(rt->fd_sync_inner);
		free(rt);
		errno = -err;
		return NULL;
	}
	pthread_mutex_init(&rt->lock, NULL);
	rt->verbose = opts && opts->verbose;
	rt->defer_tables = opts && opts->defer_tables;
	rt->next_id = 1;
	g_verbose = rt->verbose;
	libbpf_set_print(print_fn);
	return rt;
}

int sf_runtime_open(struct sf_runtime **out, const struct sf_runtime_opts *opts)
{
	struct sf_runtime *rt;
	int err;

	*out = NULL;
	rt = rt_alloc(opts);
	if (!rt)
		return -errno;
	err = sf_layout_read(&rt->layout);
	if (err)
		goto fail;
	err = load_fresh(rt, opts);
	if (err)
		goto fail;
	err = finish_open(rt);
	if (err)
		goto fail;
	*out = rt;
	return 0;
fail:
	sf_runtime_close(rt);
	return err;
}

/*
 * The first step of every teardown. Sets the BPF side's sf_stopped, so that
 * from the next syscall on no task is judged and an empty chain slot no
 * longer kills, then waits until no program run that read it unset is left.
 * Only after this may the links and the chains (the PROG_ARRAY) go: the
 * kernel empties a PROG_ARRAY when its last user reference goes, and a
 * dispatcher still attached then (bpffs releases an unpinned link later,
 * from an RCU callback and a workqueue) would find every chain slot empty
 * and kill each confined task at its next syscall, allowed or not.
 */
static void stop_enforcing(struct sf_runtime *rt)
{
	int err;

	if (!rt->bss)
		return;
	__atomic_store_n(&rt->bss->sf_stopped, 1, __ATOMIC_SEQ_CST);
	err = sf_rt_quiesce(rt);
	if (err)
		fprintf(stderr, "sfilter: waiting for running BPF programs: %s\n",
			strerror(-err));
}

static void node_unload(struct sf_runtime *rt, struct sf_node *n)
{
	if (n->slot) {
		int key = n->slot;

		if (rt->fd_progs > 0)
			bpf_map_delete_elem(rt->fd_progs, &key);
		rt->slots[n->slot] = NULL;
		n->slot = 0;
	}
	if (n->prog_fd > 0)
		close(n->prog_fd);
	n->prog_fd = 0;
}

static void free_user_state(struct sf_runtime *rt)
{
	struct sf_cgroup *c, *cn;
	size_t i;

	for (i = 0; i < SF_RT_HASH_BUCKETS; i++) {
		struct sf_node *n = rt->buckets[i], *next;

		for (; n; n = next) {
			next = n->hnext;
			/* Pinned: the PROG_ARRAY keeps the programs; only
			 * our fds go. */
			if (n->prog_fd > 0)
				close(n->prog_fd);
			free(n->insns);
			free(n);
		}
		rt->buckets[i] = NULL;
	}
	memset(rt->slots, 0, sizeof(rt->slots));
	for (c = rt->cgroups; c; c = cn) {
		cn = c->next;
		free(c->path);
		free(c->app);
		free(c);
	}
	rt->cgroups = NULL;
}

static void close_fds(struct sf_runtime *rt)
{
	int *fds[] = { &rt->fd_tasks, &rt->fd_progs, &rt->fd_table, &rt->fd_pending,
		       &rt->fd_events, &rt->fd_cgroups, &rt->fd_cgapp, &rt->fd_cgpend,
		       &rt->fd_iter, &rt->fd_bss, &rt->fd_tsync };
	size_t i;

	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (rt->own_fds && *fds[i] > 0)
			close(*fds[i]);
		*fds[i] = 0;
	}
	if (rt->bss_map)
		munmap(rt->bss_map, 4096);
	rt->bss_map = NULL;
	rt->bss = NULL;
}

void sf_runtime_close(struct sf_runtime *rt)
{
	if (!rt)
		return;
	ring_buffer__free(rt->rb);
	rt->rb = NULL;
	/* Unpinned, closing is a teardown: nobody is judged from here on,
	 * and only then do the links and the chains go. */
	if (rt->skel && !rt->pin_dir)
		stop_enforcing(rt);
	if (rt->skel && rt->pin_dir) {
		/* Pinned: the pins hold the links. A disconnected link is not
		 * detached by its destruction, but libbpf then leaves its fd
		 * open too: close it, or this process keeps the links (and
		 * every syscall's cost) alive after an uninstall by another. */
		size_t i;

		for (i = 0; i < (size_t)rt->skel->skeleton->prog_cnt; i++) {
			struct bpf_link **l = rt->skel->skeleton->progs[i].link;

			if (l && *l) {
				bpf_link__disconnect(*l);
				close(bpf_link__fd(*l));
			}
		}
	}
	/* Unpinned: destroying the skeleton detaches the programs and frees
	 * the task storage map: every confined task is unconfined from here on. */
	free_user_state(rt);
	sfilter_bpf__destroy(rt->skel);
	rt->skel = NULL;
	close_fds(rt);
	if (rt->table)
		munmap(rt->table, rt->table_bytes);
	close(rt->fd_sync);
	close(rt->fd_sync_inner);
	free(rt->pin_dir);
	free(rt->state_path);
	pthread_mutex_destroy(&rt->lock);
	free(rt);
}

/* ---- the iterator ------------------------------------------------------- */

/*
 * One pass of sf_iter over the thread group tgid, or over the process pidfd
 * refers to (pidfd >= 0; the kernel's filter, from 6.1), or over every task
 * (neither), applying the pending entries and returning one record per
 * task it reports.
 *
 * A thread group is walked as every task, filtered in sf_iter, never with
 * the kernel's per-process walk: that one follows the thread list from the
 * thread it visited last and ends early when that thread exits meanwhile
 * (so a group whose threads come and go would look smaller than it is),
 * and on 6.1 it can follow a reused pid into another process. The walk of
 * every task goes by increasing tid and misses no task that lives through
 * it. Only the pidfd form uses the kernel's filter, and reads one record:
 * the leader, the walk's first task.
 */
static int iter_run(struct sf_runtime *rt, pid_t tgid, int pidfd, bool all,
		    struct sf_rt_recs *out)
{
	size_t cap = 0, bsize = pidfd >= 0 ? sizeof(struct sf_iter_rec) : 4096;
	char buf[4096];
	int fd, lfd, err = 0;
	ssize_t got;

	out->r = NULL;
	out->n = 0;
	if (pidfd >= 0 && !rt->iter_filter)
		return -EOPNOTSUPP;
	rt->bss->sf_iter_tid = 0;
	rt->bss->sf_iter_tgid = pidfd >= 0 ? 0 : tgid;
	rt->bss->sf_iter_all = all;
	lfd = iter_link(rt, pidfd);
	if (lfd < 0)
		return -errno;
	fd = bpf_iter_create(lfd);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	/* Records are never split across reads: each read returns whole
	 * seq_file chunks. A read of one record ends the kernel's walk one
	 * task later. */
	while ((got = read(fd, buf, bsize)) > 0) {
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
		if (pidfd >= 0)
			break;
	}
	if (got < 0)
		err = -errno;
	close(fd);
out:
	close(lfd);
	if (err) {
		free(out->r);
		out->r = NULL;
		out->n = 0;
	}
	return err;
}

int sf_rt_iter_run(struct sf_runtime *rt, pid_t tgid, bool all, struct sf_rt_recs *out)
{
	return iter_run(rt, tgid, -1, all, out);
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

static const struct sf_iter_rec *find_rec(const struct sf_rt_recs *r, pid_t tid)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if ((pid_t)r->r[i].tid == tid)
			return &r->r[i];
	return NULL;
}

/* Reads the chain slot of every thread in the target's group. A target
 * pinned to a process (tg->process) must still be that process: its
 * leader's start time tells a reused pid apart. */
static int read_group(struct sf_runtime *rt, const struct sf_target *tg, pid_t *tgid,
		      struct sf_rt_recs *r)
{
	const struct sf_iter_rec *me;
	int err;

	*tgid = tg->process ? tg->process->tgid : tgid_of(tg->tid);
	if (*tgid <= 0)
		return -ESRCH;
	err = sf_rt_iter_run(rt, *tgid, true, r);
	if (err)
		return err;
	me = find_rec(r, tg->tid);
	if (!me && !tg->process) {
		/* A kernel whose filtered iteration missed the thread: look
		 * at every task instead. */
		free(r->r);
		err = sf_rt_iter_run(rt, 0, true, r);
		if (err)
			return err;
		me = find_rec(r, tg->tid);
	}
	if (!me || (pid_t)me->tgid != *tgid ||
	    (tg->process && me->leader_start != tg->process->leader_start)) {
		free(r->r);
		r->r = NULL;
		return -ESRCH;
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
				 unsigned int flags, uint64_t hash, uint32_t id)
{
	struct sf_node *n;

	for (n = rt->buckets[hash % SF_RT_HASH_BUCKETS]; n; n = n->hnext)
		if (n->hash == hash && n->parent == parent && n->len == len &&
		    n->flags == flags && !n->dead && (!id || n->id == id) &&
		    memcmp(n->insns, insns, len * sizeof(*insns)) == 0)
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

	if (node)
		return node;
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
	bool used[SF_MAX_CHAINS] = { false }, unused[SF_MAX_CHAINS] = { false };
	struct sf_rt_recs r;
	size_t i;
	int err = sf_rt_iter_run(rt, 0, false, &r), freed = 0;

	if (err)
		return err;
	for (i = 0; i < r.n; i++) {
		if (r.r[i].chain < SF_MAX_CHAINS)
			used[r.r[i].chain] = true;
		if (r.r[i].old < SF_MAX_CHAINS)
			used[r.r[i].old] = true;
	}
	free(r.r);
	for (i = 1; i < SF_MAX_CHAINS; i++)
		if (rt->slots[i] && !used[i] && !rt->slots[i]->busy &&
		    !sf_rt_cg_uses_slot(rt, i)) {
			unused[i] = true;
			freed++;
		}
	if (!freed)
		return -ENOSPC;
	/* A task the last attach moved away from a slot may still be in
	 * its dispatcher with the old slot number in hand. */
	err = sf_rt_quiesce(rt);
	if (err)
		return err;
	for (i = 1; i < SF_MAX_CHAINS; i++)
		if (unused[i]) {
			sf_rt_cg_forget_slot(rt, i);
			node_unload(rt, rt->slots[i]);
		}
	return 0;
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

/* Fills the chain's rows of the action table. Complain filters never
 * decide: a number is constant only if the enforcing filters' verdict is
 * constant and every complain filter's is a constant ALLOW (else the chain
 * runs and logs). */
static void fill_table(struct sf_runtime *rt, int slot,
		       const struct sf_chain_filter *cf, const struct sock_fprog *fp,
		       size_t n, int arch_from, int arch_to)
{
	static const uint32_t arches[SF_TABLE_ARCHES] = {
		[SF_ARCH_X86_64] = SF_AUDIT_ARCH_X86_64,
		[SF_ARCH_I386] = SF_AUDIT_ARCH_I386,
		[SF_ARCH_X32] = SF_AUDIT_ARCH_X86_64,
	};
	struct sf_const *row = &rt->table[(size_t)slot * SF_TABLE_PER_CHAIN];
	struct sock_fprog *efp = NULL, *cfp = NULL;
	size_t *emap = NULL, ne = 0, nc = 0, i;
	int a, nr;

	for (i = 0; i < n; i++)
		if (cf[i].flags & SF_FLAG_COMPLAIN)
			nc++;
	if (nc) {
		efp = calloc(n, sizeof(*efp));
		cfp = calloc(n, sizeof(*cfp));
		emap = calloc(n, sizeof(*emap));
		if (!efp || !cfp || !emap) {
			/* Run the chain for these arches. */
			memset(&row[arch_from * SF_TABLE_NR], 0,
			       (size_t)(arch_to - arch_from) * SF_TABLE_NR * sizeof(*row));
			goto out;
		}
		nc = 0;
		for (i = 0; i < n; i++) {
			if (cf[i].flags & SF_FLAG_COMPLAIN) {
				cfp[nc++] = fp[i];
			} else {
				emap[ne] = i;
				efp[ne++] = fp[i];
			}
		}
	}
	for (a = arch_from; a < arch_to; a++) {
		for (nr = 0; nr < SF_TABLE_NR; nr++) {
			struct sf_const c = { .kind = SF_CONST_RUN };
			int snr = a == SF_ARCH_X32 ? (int)(SF_X32_BIT | nr) : nr;
			uint32_t ret;
			size_t w;

			if (!nc) {
				if (c2e_const_verdict_winner(fp, n, arches[a], snr, &ret, &w)) {
					c.kind = SF_CONST_VALUE;
					c.ret = ret;
					if (w < n) {
						c.filter_id = cf[w].id;
						c.flags = cf[w].flags;
					}
				}
			} else if (c2e_const_verdict_winner(cfp, nc, arches[a], snr, &ret, &w) &&
				   (ret & C2E_RET_ACTION_FULL) == SECCOMP_RET_ALLOW) {
				if (!ne) {
					c.kind = SF_CONST_VALUE;
					c.ret = SECCOMP_RET_ALLOW;
				} else if (c2e_const_verdict_winner(efp, ne, arches[a], snr,
								    &ret, &w)) {
					c.kind = SF_CONST_VALUE;
					c.ret = ret;
					if (w < ne) {
						c.filter_id = cf[emap[w]].id;
						c.flags = cf[emap[w]].flags;
					}
				}
			}
			row[a * SF_TABLE_NR + nr] = c;
		}
	}
out:
	__sync_synchronize();
	free(efp);
	free(cfp);
	free(emap);
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
						  (uint16_t)w->flags };
		fp[i] = (struct sock_fprog){ (unsigned short)w->len, w->insns };
	}
	return 0;
}

/* Generates, loads and installs the chain program of n. */
int sf_rt_node_load(struct sf_runtime *rt, struct sf_node *node)
{
	struct sf_chain_filter *cf;
	struct sock_fprog *fp;
	struct c2e_ebpf prog = { 0 };
	size_t n = node->depth;
	int slot, fd, err;

	err = node_filters(node, &cf, &fp);
	if (err)
		goto out;
	err = sf_chain_emit(&rt->layout, cf, n, rt->fd_tasks,
			    rt->fd_progs, &prog);
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
	if (rt->defer_tables) {
		/* "Run the chain" everywhere until sf_runtime_fill_tables(). */
		memset(&rt->table[(size_t)slot * SF_TABLE_PER_CHAIN], 0,
		       SF_TABLE_PER_CHAIN * sizeof(struct sf_const));
		__sync_synchronize();
		node->table_pending = true;
		node->table_next_arch = 0;
	} else {
		fill_table(rt, slot, cf, fp, n, 0, SF_TABLE_ARCHES);
	}
	if (bpf_map_update_elem(rt->fd_progs, &slot, &fd, 0)) {
		err = -errno;
		close(fd);
		goto out;
	}
	node->slot = slot;
	node->prog_fd = fd;
	rt->slots[slot] = node;
	/* Recorded before any task gets the slot: an adopting runtime knows
	 * every chain a task can have. */
	sf_rt_save_state(rt);
out:
	c2e_ebpf_free(&prog);
	free(cf);
	free(fp);
	return err;
}

int sf_runtime_fill_tables(struct sf_runtime *rt, int max)
{
	struct sf_chain_filter *cf;
	struct sock_fprog *fp;
	int slot, filled = 0, err = 0;

	pthread_mutex_lock(&rt->lock);
	for (slot = 1; slot < SF_MAX_CHAINS && !err && (!max || filled < max); slot++) {
		struct sf_node *node = rt->slots[slot];

		if (!node || !node->table_pending || node->slot != slot)
			continue;
		/* One arch per piece (a third of the table), so that a
		 * request arriving meanwhile waits a third as long. */
		err = node_filters(node, &cf, &fp);
		while (!err && node->table_pending && (!max || filled < max)) {
			int a = node->table_next_arch;

			fill_table(rt, slot, cf, fp, node->depth, a, a + 1);
			node->table_next_arch = (uint8_t)(a + 1);
			node->table_pending = a + 1 < SF_TABLE_ARCHES;
			filled++;
		}
		free(cf);
		free(fp);
	}
	pthread_mutex_unlock(&rt->lock);
	return err ? err : filled;
}

/* ---- attach ------------------------------------------------------------- */

/* The process pidfd refers to, read by the iterator, then checked alive:
 * a process still unreaped after the pass was unreaped during it, so its
 * pid was not yet anyone else's. */
int sf_runtime_identify(struct sf_runtime *rt, int pidfd, struct sf_identity *out)
{
	struct sf_rt_recs r = { 0 };
	size_t i;
	int err;

	pthread_mutex_lock(&rt->lock);
	err = iter_run(rt, 0, pidfd, true, &r);
	pthread_mutex_unlock(&rt->lock);
	if (err)
		return err == -EBADF ? -EBADF : -ESRCH;
	err = -ESRCH;
	for (i = 0; i < r.n; i++)
		if (r.r[i].tid == r.r[i].tgid) {
			*out = (struct sf_identity){ (pid_t)r.r[i].tgid, r.r[i].leader_start,
						     r.r[i].exec_id };
			err = 0;
		}
	free(r.r);
	if (err == 0 && syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0)
		err = -ESRCH;
	return err;
}

/* One change of the attach, for a thread: from its chain (expect) to slot,
 * armed or not, guarded or not. */
struct want {
	pid_t tid;
	uint32_t from;
	bool arm;
};

/* Writes the pending entries for want[0..n), runs one iterator pass over
 * the group and deletes them. Returns how many were applied, or -errno;
 * after holds the group as the pass left it. */
static int apply(struct sf_runtime *rt, pid_t tgid, const struct sf_target *tg,
		 const struct want *want, size_t n, int slot, struct sf_rt_recs *after)
{
	int pfd = rt->fd_pending, err, applied = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		struct sf_pending p = {
			.chain = (uint32_t)slot | (want[i].arm ? SF_PENDING_ARM : 0),
			.expect = want[i].from,
			.guard = tg->self ? SF_GUARD_SELF : 0,
			.armed_fd = tg->reply_fd,
			.exec_id = tg->process ? tg->process->exec_id : 0,
			.leader_start = tg->process ? tg->process->leader_start : 0,
		};
		uint32_t key = (uint32_t)want[i].tid;

		if (bpf_map_update_elem(pfd, &key, &p, BPF_ANY))
			return -errno;
	}
	err = iter_run(rt, tgid, -1, true, after);
	for (i = 0; i < n; i++) {
		uint32_t key = (uint32_t)want[i].tid;

		bpf_map_delete_elem(pfd, &key);
	}
	if (err)
		return err;
	for (i = 0; i < after->n; i++)
		applied += after->r[i].applied;
	return applied;
}

/* Puts threads that an unfinished attach moved back on the chain they
 * had (compare and set: a thread that changed since is left alone). */
static void roll_back(struct sf_runtime *rt, pid_t tgid, const struct want *moved,
		      size_t n, int slot)
{
	struct sf_target plain = { .reply_fd = -1 };
	size_t i;

	for (i = 0; i < n; i++) {
		struct want back = { moved[i].tid, (uint32_t)slot, false };
		struct sf_rt_recs after = { 0 };

		apply(rt, tgid, &plain, &back, 1, (int)moved[i].from, &after);
		free(after.r);
	}
}

/* seccomp_can_sync_threads(): every other thread's chain is the caller's
 * or an ancestor of it. 0, or the tid of the first that is not. */
static pid_t tsync_conflict(struct sf_runtime *rt, const struct sf_rt_recs *group,
			    pid_t tgid, pid_t tid, const struct sf_node *parent)
{
	size_t i;

	for (i = 0; i < group->n; i++) {
		const struct sf_iter_rec *g = &group->r[i];
		struct sf_node *t = g->chain < SF_MAX_CHAINS ? rt->slots[g->chain] : NULL;

		if ((pid_t)g->tid == tid || (pid_t)g->tgid != tgid)
			continue;
		if ((g->chain && !t) || !is_ancestor_or_self(t, parent))
			return (pid_t)g->tid;
	}
	return 0;
}

static int attach_locked(struct sf_runtime *rt, const struct sf_target *tg,
			 const struct sock_fprog *prog, unsigned int flags,
			 uint32_t *filter_id)
{
	struct sf_rt_recs group = { 0 }, after = { 0 };
	struct sf_node *parent = NULL, *node = NULL;
	const struct sf_iter_rec *me;
	struct want *want = NULL, *moved = NULL;
	size_t i, n_moved = 0, cap_moved = 0;
	bool tsync = flags & SF_ATTACH_TSYNC, tsync_set = false;
	pid_t tid = tg->tid, tgid;
	int kcount, err, round;

	err = read_group(rt, tg, &tgid, &group);
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
	if (tsync && (err = tsync_conflict(rt, &group, tgid, tid, parent)) != 0)
		goto out;

	node = sf_rt_node_get(rt, parent, prog->filter, prog->len, flags & ~SF_ATTACH_ARM, 0,
			      kcount);
	if (!node) {
		err = -ENOMEM;
		goto out;
	}
	if (!node->slot) {
		err = sf_rt_node_load(rt, node);
		if (err)
			goto out;
	}
	node->busy = true;

	if (tsync) {
		/* Threads created from here on take the new chain at fork;
		 * after the wait no fork that missed the entry is still under
		 * way, so each round below only has threads that exist. */
		uint32_t key = (uint32_t)tgid, val = (uint32_t)node->slot;

		if (bpf_map_update_elem(rt->fd_tsync, &key, &val, BPF_ANY)) {
			err = -errno;
			goto out;
		}
		tsync_set = true;
		__atomic_fetch_add(&rt->bss->sf_tsync_pending, 1, __ATOMIC_SEQ_CST);
		err = sf_rt_quiesce(rt);
		if (err)
			goto out;
	}
	want = calloc(group.n + 1, sizeof(*want));
	if (!want) {
		err = -ENOMEM;
		goto out;
	}
	/* The caller alone, or (TSYNC) every thread of the group; threads
	 * that appear meanwhile are born with the new chain. */
	for (round = 0; round < 64; round++) {
		size_t n = 0;
		int applied;

		for (i = 0; i < group.n; i++) {
			const struct sf_iter_rec *g = &group.r[i];

			if ((pid_t)g->tgid != tgid || g->chain == (uint32_t)node->slot)
				continue;
			if ((pid_t)g->tid != tid && !tsync)
				continue;
			want[n++] = (struct want){ (pid_t)g->tid, g->chain,
						   (flags & SF_ATTACH_ARM) && (pid_t)g->tid == tid };
		}
		if (n == 0)
			break;
		applied = apply(rt, tgid, tg, want, n, node->slot, &after);
		if (applied < 0) {
			err = applied;
			goto out;
		}
		for (i = 0; i < after.n; i++) {
			const struct sf_iter_rec *a = &after.r[i];
			size_t k;

			if (a->refused) {
				err = -(int)a->refused;
				goto out;
			}
			if (!a->applied)
				continue;
			for (k = 0; k < n && want[k].tid != (pid_t)a->tid; k++)
				;
			if (k == n)
				continue;
			if (n_moved == cap_moved) {
				struct want *m = realloc(moved, (cap_moved = 2 * cap_moved + 16) *
							 sizeof(*m));

				if (!m) {
					err = -ENOMEM;
					goto out;
				}
				moved = m;
			}
			moved[n_moved++] = want[k];
		}
		free(group.r);
		group = after;
		after.r = NULL;
		me = find_rec(&group, tid);
		if (!me) {
			err = -ESRCH;
			goto out;
		}
		if (!tsync) {
			if (me->chain != (uint32_t)node->slot)
				err = -EAGAIN;
			goto out;
		}
		if (tsync_conflict(rt, &group, tgid, tid, node) != 0) {
			/* A thread's chain changed under us to one that is
			 * not an ancestor (a cgroup join): give up whole. */
			err = tsync_conflict(rt, &group, tgid, tid, node);
			goto out;
		}
		want = realloc(want, (group.n + 1) * sizeof(*want));
		if (!want) {
			err = -ENOMEM;
			goto out;
		}
	}
	err = 0;
	for (i = 0; i < group.n; i++)
		if ((pid_t)group.r[i].tgid == tgid && group.r[i].chain != (uint32_t)node->slot)
			err = -EAGAIN;
out:
	if (tsync_set) {
		uint32_t key = (uint32_t)tgid;

		bpf_map_delete_elem(rt->fd_tsync, &key);
		__atomic_fetch_sub(&rt->bss->sf_tsync_pending, 1, __ATOMIC_SEQ_CST);
	}
	/* Nothing half done: a failed attach leaves every thread it moved
	 * on the chain it had. */
	if (err && n_moved)
		roll_back(rt, tgid, moved, n_moved, node ? node->slot : 0);
	if (!err && filter_id)
		*filter_id = node->id;
	if (node && node->slot)
		node->busy = false;
	free(group.r);
	free(after.r);
	free(want);
	free(moved);
	return err;
}

int sf_runtime_attach_to(struct sf_runtime *rt, const struct sf_target *tg,
			 const struct sock_fprog *prog, unsigned int flags,
			 uint32_t *filter_id, struct c2e_error *err)
{
	int ret;

	if (flags & ~(SF_ATTACH_ADMIN_FLAGS | SF_ATTACH_ARM))
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
	if (tg->tid <= 0)
		return -ESRCH;
	pthread_mutex_lock(&rt->lock);
	ret = attach_locked(rt, tg, prog, flags, filter_id);
	sf_rt_save_state(rt);
	pthread_mutex_unlock(&rt->lock);
	return ret;
}

int sf_runtime_attach(struct sf_runtime *rt, pid_t tid,
		      const struct sock_fprog *prog, unsigned int flags,
		      uint32_t *filter_id, struct c2e_error *err)
{
	struct sf_target tg = { .tid = tid, .reply_fd = -1 };

	return sf_runtime_attach_to(rt, &tg, prog, flags, filter_id, err);
}

int sf_runtime_test_knob(struct sf_runtime *rt, enum sf_test_knob knob, uint32_t value)
{
	switch (knob) {
	case SF_TEST_NO_STORAGE:
		__atomic_store_n(&rt->bss->sf_test_no_storage, value, __ATOMIC_SEQ_CST);
		return 0;
	}
	return -EINVAL;
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

/* ---- pinned state ----------------------------------------------------
 * Pins, under pin_dir: map_<name> for every map (the PROG_ARRAY above all:
 * it clears its entries when its last user reference goes), prog_<name> for
 * every loaded program, link_<name> for every attached one. The chain tree
 * (nodes: id, flags, owner, parent, slot, classic code) and the cgroup
 * attachments live in a state file, state_path(), rewritten (write + rename)
 * after every change, and before any task is given a newly loaded slot.
 */

static char *state_path_of(const char *pin_dir)
{
	const char *base = strrchr(pin_dir, '/');
	char *p;

	base = base && base[1] ? base + 1 : pin_dir;
	if (asprintf(&p, "/run/%s/state", base) < 0)
		return NULL;
	return p;
}

static void pin_name(char *buf, size_t size, const char *dir, const char *kind,
		     const char *name)
{
	char *c;

	snprintf(buf, size, "%s/%s_%s", dir, kind, name);
	for (c = buf + strlen(dir) + 1; *c; c++)
		if (*c == '.' || *c == '/')
			*c = '_';
}

static int pin_all(struct sf_runtime *rt)
{
	struct bpf_object_skeleton *sk = rt->skel->skeleton;
	struct bpf_program *p;
	struct bpf_map *m;
	char path[PATH_MAX];
	int i, err;

	if (mkdir(rt->pin_dir, 0700) && errno != EEXIST)
		return -errno;
	bpf_object__for_each_map(m, rt->skel->obj) {
		/* libbpf names internal maps after the object ("sfilter_.bss"):
		 * pin those under their section name alone. */
		const char *name = bpf_map__name(m), *dot = strchr(name, '.');

		pin_name(path, sizeof(path), rt->pin_dir, "map", dot ? dot + 1 : name);
		if (bpf_obj_pin(bpf_map__fd(m), path))
			return -errno;
	}
	bpf_object__for_each_program(p, rt->skel->obj) {
		if (bpf_program__fd(p) < 0)
			continue;
		pin_name(path, sizeof(path), rt->pin_dir, "prog", bpf_program__name(p));
		if (bpf_obj_pin(bpf_program__fd(p), path))
			return -errno;
	}
	for (i = 0; i < sk->prog_cnt; i++) {
		struct bpf_link *l = sk->progs[i].link ? *sk->progs[i].link : NULL;

		if (!l)
			continue;
		pin_name(path, sizeof(path), rt->pin_dir, "link", sk->progs[i].name);
		err = bpf_link__pin(l, path);
		if (err)
			return err;
	}
	return 0;
}

/* Unpins dir's links, the dispatcher's first, and stores their ids in
 * ids[] (*n of them, up to max) for wait_links_gone(). */
static int unpin_links(const char *pin_dir, uint32_t *ids, size_t max, size_t *n)
{
	char path[PATH_MAX];
	struct dirent *d;
	DIR *dir = opendir(pin_dir);
	int pass, err = 0;

	*n = 0;
	if (!dir)
		return errno == ENOENT ? 0 : -errno;
	for (pass = 0; pass < 2; pass++) {
		rewinddir(dir);
		while ((d = readdir(dir))) {
			bool disp = !strcmp(d->d_name, "link_sf_dispatch");
			struct bpf_link_info info = {};
			uint32_t len = sizeof(info);
			int fd;

			if (strncmp(d->d_name, "link_", 5) || disp != (pass == 0))
				continue;
			snprintf(path, sizeof(path), "%s/%s", pin_dir, d->d_name);
			fd = bpf_obj_get(path);
			if (fd >= 0) {
				if (!bpf_obj_get_info_by_fd(fd, &info, &len) && *n < max)
					ids[(*n)++] = info.id;
				close(fd);
			}
			if (unlink(path))
				err = -errno;
		}
	}
	closedir(dir);
	return err;
}

/* Returns once none of the links ids[] exists, or after about 5 s. An
 * unpinned link is released after an RCU grace period, from a workqueue
 * (bpf_free_inode(), bpf_link_put()): until then its program still runs. */
static void wait_links_gone(const uint32_t *ids, size_t n)
{
	size_t i = 0;
	int waited_ms = 0;

	while (i < n) {
		int fd = bpf_link_get_fd_by_id(ids[i]);

		if (fd < 0) {
			i++;
			continue;
		}
		close(fd);
		if (waited_ms >= 5000) {
			fprintf(stderr, "sfilter: link %u still attached after 5 s\n", ids[i]);
			return;
		}
		usleep(1000);
		waited_ms++;
	}
}

/* Everything in pin_dir but its links, and pin_dir itself. */
static int unpin_rest(const char *pin_dir)
{
	char path[PATH_MAX];
	struct dirent *d;
	DIR *dir = opendir(pin_dir);
	int err = 0;

	if (!dir)
		return errno == ENOENT ? 0 : -errno;
	while ((d = readdir(dir)))
		if (d->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", pin_dir, d->d_name);
			if (unlink(path) && errno != ENOENT)
				err = -errno;
		}
	closedir(dir);
	if (rmdir(pin_dir) && errno != ENOENT)
		err = -errno;
	return err;
}

static void rm_state_file(const char *pin_dir)
{
	char *sp = state_path_of(pin_dir), *slash;

	if (!sp)
		return;
	unlink(sp);
	slash = strrchr(sp, '/');
	*slash = 0;
	rmdir(sp);
	free(sp);
}

/*
 * Tears down what pin_dir holds, in the only order that never kills a task
 * wrongly: the links (the dispatcher first) are detached and gone before the
 * maps, the PROG_ARRAY among them, lose their pins. rt, when given, is the
 * runtime that owns them; it has stopped enforcing already, and its own
 * link fds are closed here, between the two steps.
 */
static int teardown_dir(const char *pin_dir, struct sf_runtime *rt)
{
	uint32_t ids[128];
	size_t n;
	int err, err2;

	err = unpin_links(pin_dir, ids, sizeof(ids) / sizeof(ids[0]), &n);
	if (rt && rt->skel) {
		struct bpf_object_skeleton *sk = rt->skel->skeleton;
		int i;

		for (i = 0; i < sk->prog_cnt; i++)
			if (sk->progs[i].link && *sk->progs[i].link) {
				bpf_link__destroy(*sk->progs[i].link);
				*sk->progs[i].link = NULL;
			}
	}
	wait_links_gone(ids, n);
	err2 = unpin_rest(pin_dir);
	rm_state_file(pin_dir);
	return err ? err : err2;
}

int sf_runtime_uninstall_dir(const char *pin_dir)
{
	return teardown_dir(pin_dir, NULL);
}

/* State file: header, nodes, cgroups. */
#define STATE_MAGIC 0x53465354u /* "SFST" */
#define STATE_VERSION 1

struct st_head {
	uint32_t magic, version, tier, next_id, n_nodes, n_cgroups;
};
struct st_node {
	int32_t idx, parent;
	uint32_t flags, id, owner, slot, len, dead, depth, path_insns;
	uint64_t hash;
};
struct st_cg {
	uint64_t id;
	int32_t base;
	uint32_t path_len, n_app, pad;
};
struct st_app {
	uint32_t from;
	int32_t to;
};

void sf_rt_save_state(struct sf_runtime *rt)
{
	struct st_head h = { STATE_MAGIC, STATE_VERSION, rt->tier, rt->next_id, 0, 0 };
	struct sf_cgroup *c;
	char tmp[PATH_MAX];
	FILE *f;
	size_t i;
	int idx = 0;

	if (!rt->state_path)
		return;
	for (i = 0; i < SF_RT_HASH_BUCKETS; i++) {
		struct sf_node *n;

		for (n = rt->buckets[i]; n; n = n->hnext)
			n->idx = idx++;
	}
	h.n_nodes = idx;
	for (c = rt->cgroups; c; c = c->next)
		h.n_cgroups++;
	snprintf(tmp, sizeof(tmp), "%s.tmp", rt->state_path);
	f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "sfilter: %s: %s\n", tmp, strerror(errno));
		return;
	}
	fwrite(&h, sizeof(h), 1, f);
	for (i = 0; i < SF_RT_HASH_BUCKETS; i++) {
		struct sf_node *n;

		for (n = rt->buckets[i]; n; n = n->hnext) {
			struct st_node r = {
				.idx = n->idx, .parent = n->parent ? n->parent->idx : -1,
				.flags = n->flags, .id = n->id, .owner = n->owner,
				.slot = n->slot, .len = n->len, .dead = n->dead,
				.depth = n->depth, .path_insns = n->path_insns,
				.hash = n->hash,
			};

			fwrite(&r, sizeof(r), 1, f);
			fwrite(n->insns, sizeof(*n->insns), n->len, f);
		}
	}
	for (c = rt->cgroups; c; c = c->next) {
		struct st_cg r = { .id = c->id, .base = c->base ? c->base->idx : -1,
				   .path_len = strlen(c->path), .n_app = c->n_app };

		fwrite(&r, sizeof(r), 1, f);
		fwrite(c->path, 1, r.path_len, f);
		for (i = 0; i < c->n_app; i++) {
			struct st_app a = { c->app[i].from, c->app[i].to->idx };

			fwrite(&a, sizeof(a), 1, f);
		}
	}
	if (fflush(f) || ferror(f)) {
		fprintf(stderr, "sfilter: writing %s failed\n", tmp);
		fclose(f);
		return;
	}
	fclose(f);
	if (rename(tmp, rt->state_path))
		fprintf(stderr, "sfilter: %s: %s\n", rt->state_path, strerror(errno));
}

static int load_state(struct sf_runtime *rt)
{
	struct sf_node **all = NULL;
	int32_t *parents = NULL;
	struct st_head h;
	FILE *f = fopen(rt->state_path, "r");
	uint32_t i, k;
	int err = -EIO;

	if (!f)
		return errno == ENOENT ? 0 : -errno; /* pinned, nothing attached yet */
	if (fread(&h, sizeof(h), 1, f) != 1 || h.magic != STATE_MAGIC ||
	    h.version != STATE_VERSION)
		goto out;
	rt->next_id = h.next_id;
	all = calloc(h.n_nodes + 1, sizeof(*all));
	parents = calloc(h.n_nodes + 1, sizeof(*parents));
	if (!all || !parents) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < h.n_nodes; i++) {
		struct st_node r;
		struct sf_node *n;

		if (fread(&r, sizeof(r), 1, f) != 1 || r.idx < 0 ||
		    (uint32_t)r.idx >= h.n_nodes || r.len > C2E_MAX_INSNS ||
		    r.slot >= SF_MAX_CHAINS)
			goto out;
		n = calloc(1, sizeof(*n));
		if (!n) {
			err = -ENOMEM;
			goto out;
		}
		n->insns = malloc(r.len * sizeof(*n->insns) + 1);
		if (!n->insns || fread(n->insns, sizeof(*n->insns), r.len, f) != r.len) {
			free(n->insns);
			free(n);
			goto out;
		}
		n->len = r.len;
		n->flags = r.flags;
		n->id = r.id;
		n->owner = r.owner;
		n->slot = r.slot;
		n->dead = r.dead;
		n->depth = r.depth;
		n->path_insns = r.path_insns;
		n->hash = r.hash;
		n->idx = r.idx;
		n->prog_fd = -1;
		if (n->slot)
			rt->slots[n->slot] = n;
		n->hnext = rt->buckets[n->hash % SF_RT_HASH_BUCKETS];
		rt->buckets[n->hash % SF_RT_HASH_BUCKETS] = n;
		all[r.idx] = n;
		parents[r.idx] = r.parent;
	}
	for (i = 0; i < h.n_nodes; i++) {
		if (!all[i])
			goto out;
		if (parents[i] >= 0) {
			if ((uint32_t)parents[i] >= h.n_nodes)
				goto out;
			all[i]->parent = all[parents[i]];
		}
	}
	for (i = 0; i < h.n_cgroups; i++) {
		struct sf_cgroup *c = calloc(1, sizeof(*c));
		struct st_cg r;

		if (!c) {
			err = -ENOMEM;
			goto out;
		}
		c->next = rt->cgroups;
		rt->cgroups = c;
		if (fread(&r, sizeof(r), 1, f) != 1 || r.path_len > PATH_MAX ||
		    r.base >= (int32_t)h.n_nodes)
			goto out;
		c->id = r.id;
		c->base = r.base >= 0 ? all[r.base] : NULL;
		c->path = calloc(1, r.path_len + 1);
		c->app = calloc(r.n_app + 1, sizeof(*c->app));
		if (!c->path || !c->app)
			goto out;
		c->cap_app = r.n_app + 1;
		if (fread(c->path, 1, r.path_len, f) != r.path_len)
			goto out;
		for (k = 0; k < r.n_app; k++) {
			struct st_app a;

			if (fread(&a, sizeof(a), 1, f) != 1 || a.to < 0 ||
			    a.to >= (int32_t)h.n_nodes)
				goto out;
			c->app[c->n_app++] = (struct sf_cg_app){ a.from, all[a.to] };
		}
	}
	err = 0;
out:
	if (err)
		fprintf(stderr, "sfilter: %s: unreadable state\n", rt->state_path);
	free(all);
	free(parents);
	fclose(f);
	return err;
}

static int obj_get(const char *dir, const char *kind, const char *name)
{
	char path[PATH_MAX];

	pin_name(path, sizeof(path), dir, kind, name);
	return bpf_obj_get(path);
}

/* A runtime that died between writing compare-and-set entries and the
 * iterator pass that applies them left them behind; a later pass would
 * apply them, perhaps onto a slot freed or reused since. No change is in
 * flight when a runtime adopts the pins, so none of them is wanted. */
static void clear_pending(struct sf_runtime *rt)
{
	uint32_t key;

	while (bpf_map_get_next_key(rt->fd_pending, NULL, &key) == 0)
		if (bpf_map_delete_elem(rt->fd_pending, &key))
			break;
}

/* Everything from the pins; nothing is loaded or attached. */
static int adopt(struct sf_runtime *rt)
{
	struct { int *fd; const char *kind, *name; } want[] = {
		{ &rt->fd_tasks, "map", "sf_tasks" },
		{ &rt->fd_progs, "map", "sf_progs" },
		{ &rt->fd_table, "map", "sf_table" },
		{ &rt->fd_pending, "map", "sf_pending" },
		{ &rt->fd_events, "map", "sf_events" },
		{ &rt->fd_cgroups, "map", "sf_cgroups" },
		{ &rt->fd_cgapp, "map", "sf_cg_append" },
		{ &rt->fd_cgpend, "map", "sf_cg_pending" },
		{ &rt->fd_tsync, "map", "sf_tsync" },
		{ &rt->fd_bss, "map", "bss" },
		{ &rt->fd_iter, "prog", "sf_iter" },
	};
	size_t i;
	void *m;

	rt->own_fds = true;
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		*want[i].fd = obj_get(rt->pin_dir, want[i].kind, want[i].name);
		if (*want[i].fd < 0) {
			int err = -errno;

			*want[i].fd = 0;
			fprintf(stderr, "sfilter: adopting %s/%s_%s: %s\n", rt->pin_dir,
				want[i].kind, want[i].name, strerror(-err));
			return err;
		}
	}
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, rt->fd_bss, 0);
	if (m == MAP_FAILED)
		return -errno;
	rt->bss_map = m;
	rt->bss = m;
	if (rt->bss->sf_abi != SF_ABI_VERSION) {
		/* Driving programs of another layout could loosen a filter
		 * (an arm read as a chain slot); they keep enforcing alone. */
		fprintf(stderr, "sfilter: %s holds the pinned state of another sfilter "
			"version (ABI %u, this one is %u): not adopting it. Its filters "
			"stay in force; stop with the sfilterd that made it, or "
			"sfilterd --uninstall to detach them all\n",
			rt->pin_dir, rt->bss->sf_abi, SF_ABI_VERSION);
		return -EPROTO;
	}
	clear_pending(rt);
	{
		char probe[PATH_MAX];

		pin_name(probe, sizeof(probe), rt->pin_dir, "link", "sf_lsm_file_open");
		rt->tier = access(probe, F_OK) == 0 ? SF_TIER_LSM : SF_TIER_TRACEPOINT;
		if (rt->tier == SF_TIER_TRACEPOINT)
			snprintf(rt->tier_why, sizeof(rt->tier_why),
				 "adopted pins of a tracepoint-tier runtime");
	}
	return load_state(rt);
}

int sf_runtime_open_pinned(struct sf_runtime **out,
			   const struct sf_runtime_opts *opts,
			   const char *pin_dir, bool *adopted)
{
	struct sf_runtime *rt;
	char probe[PATH_MAX], *dir;
	int err;

	*out = NULL;
	if (adopted)
		*adopted = false;
	if (!pin_dir)
		return sf_runtime_open(out, opts);
	err = sf_bpffs_ensure(pin_dir, probe, sizeof(probe));
	if (probe[0])
		fprintf(stderr, "sfilter: %s\n", probe);
	if (err)
		return err;
	rt = rt_alloc(opts);
	if (!rt)
		return -errno;
	rt->pin_dir = strdup(pin_dir);
	rt->state_path = state_path_of(pin_dir);
	if (!rt->pin_dir || !rt->state_path) {
		err = -ENOMEM;
		goto fail;
	}
	dir = strdup(rt->state_path);
	if (dir) {
		*strrchr(dir, '/') = 0;
		mkdir(dir, 0700);
		free(dir);
	}
	err = sf_layout_read(&rt->layout);
	if (err)
		goto fail;
	pin_name(probe, sizeof(probe), pin_dir, "link", "sf_dispatch");
	if (access(probe, F_OK) == 0) {
		err = adopt(rt);
		if (err)
			goto fail;
		if (adopted)
			*adopted = true;
	} else {
		/* Leftovers of a half-made install (no dispatcher link):
		 * nothing is confined by them. */
		sf_runtime_uninstall_dir(pin_dir);
		dir = strdup(rt->state_path);
		if (dir) {
			*strrchr(dir, '/') = 0;
			mkdir(dir, 0700);
			free(dir);
		}
		err = load_fresh(rt, opts);
		if (!err)
			err = pin_all(rt);
		if (err) {
			fprintf(stderr, "sfilter: pinning under %s: %s\n", pin_dir, strerror(-err));
			teardown_dir(pin_dir, NULL);
			goto fail;
		}
		sf_rt_save_state(rt);
	}
	err = finish_open(rt);
	if (err)
		goto fail;
	*out = rt;
	return 0;
fail:
	/* Keep whatever was adopted attached; a fresh load failing is
	 * detached by close (its pins are gone). */
	if (!(adopted && *adopted) && rt->skel) {
		free(rt->pin_dir);
		rt->pin_dir = NULL;
	}
	sf_runtime_close(rt);
	return err;
}

int sf_runtime_uninstall(struct sf_runtime *rt)
{
	int err;

	if (!rt->pin_dir)
		return -EINVAL;
	pthread_mutex_lock(&rt->lock);
	stop_enforcing(rt);
	err = teardown_dir(rt->pin_dir, rt);
	free(rt->state_path);
	rt->state_path = NULL;
	free(rt->pin_dir);
	rt->pin_dir = NULL;
	pthread_mutex_unlock(&rt->lock);
	return err;
}

/* ---- detach, replace -------------------------------------------------
 * Filter ids are per chain node: identical attaches (same parent chain, same
 * program, same flags) share one node and so one id, and a node rebuilt
 * under a new parent by detach/replace keeps its id. An id therefore names
 * one attach request, or several identical ones onto the same chain, and
 * detach/replace act on every chain node carrying it.
 */

bool sf_rt_path_has(const struct sf_node *n, uint32_t id)
{
	for (; n; n = n->parent)
		if (n->id == id)
			return true;
	return false;
}

/* n's chain without id (repl NULL) or with repl in its place; *out NULL
 * when nothing is left. */
static int rebuild(struct sf_runtime *rt, struct sf_node *n, uint32_t id,
		   const struct sock_fprog *repl, struct sf_node **out)
{
	struct sf_node *path[4096 + 8], *cur = NULL;
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
		kcount = c2e_kernel_insn_count(insns, len);
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

static int change_locked(struct sf_runtime *rt, uint32_t id,
			 const struct sock_fprog *repl)
{
	struct sf_node *aff[SF_MAX_CHAINS], *nw[SF_MAX_CHAINS];
	int to[SF_MAX_CHAINS];
	struct sf_cgroup *c;
	size_t n = 0, i;
	bool found = false;
	int err = 0;

	for (i = 0; i < SF_RT_HASH_BUCKETS; i++) {
		struct sf_node *x;

		for (x = rt->buckets[i]; x; x = x->hnext)
			if (x->id == id && !x->dead)
				found = true;
	}
	if (!found)
		return -ENOENT;
	for (i = 0; i < SF_MAX_CHAINS; i++)
		to[i] = -1;
	for (i = 1; i < SF_MAX_CHAINS; i++)
		if (rt->slots[i] && sf_rt_path_has(rt->slots[i], id)) {
			rt->slots[i]->busy = true;
			aff[n++] = rt->slots[i];
		}
	/* Every node carrying the id, loaded or not, is never reused. */
	for (i = 0; i < SF_RT_HASH_BUCKETS; i++) {
		struct sf_node *x;

		for (x = rt->buckets[i]; x; x = x->hnext)
			if (sf_rt_path_has(x, id))
				x->dead = true;
	}
	for (i = 0; i < n; i++) {
		err = rebuild(rt, aff[i], id, repl, &nw[i]);
		if (err)
			goto out;
		if (nw[i] && !nw[i]->slot) {
			err = sf_rt_node_load(rt, nw[i]);
			if (err)
				goto out;
		}
		if (nw[i])
			nw[i]->busy = true;
		to[aff[i]->slot] = nw[i] ? nw[i]->slot : 0;
	}
	for (c = rt->cgroups; c; c = c->next)
		if (sf_rt_path_has(c->base, id)) {
			struct sf_node *b;

			err = rebuild(rt, c->base, id, repl, &b);
			if (err)
				goto out;
			if (b && !b->slot && (err = sf_rt_node_load(rt, b)))
				goto out;
			c->base = b;
		}
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
		node_unload(rt, aff[i]);
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
	int err;

	if (!prog || !prog->filter || prog->len == 0 || prog->len > C2E_MAX_INSNS)
		return -EINVAL;
	if (c2e_validate(prog->filter, prog->len, cerr))
		return -EINVAL;
	if (!filter_id)
		return -ENOENT;
	pthread_mutex_lock(&rt->lock);
	err = change_locked(rt, filter_id, prog);
	pthread_mutex_unlock(&rt->lock);
	return err;
}

/* ---- introspection ---------------------------------------------------- */

int sf_runtime_for_each_task(struct sf_runtime *rt, sf_task_fn fn, void *ctx)
{
	struct sf_rt_recs r;
	size_t i;
	int err;

	pthread_mutex_lock(&rt->lock);
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

int sf_runtime_set_owner(struct sf_runtime *rt, uint32_t filter_id, uid_t owner)
{
	struct sf_node *n;
	size_t i;
	int found = 0;

	pthread_mutex_lock(&rt->lock);
	for (i = 0; i < SF_RT_HASH_BUCKETS; i++)
		for (n = rt->buckets[i]; n; n = n->hnext)
			if (n->id == filter_id) {
				n->owner = owner;
				found = 1;
			}
	if (found)
		sf_rt_save_state(rt);
	pthread_mutex_unlock(&rt->lock);
	return found ? 0 : -ENOENT;
}
