// SPDX-License-Identifier: GPL-2.0-only
/*
 * Attach to a thread, or with TSYNC to its whole thread group, as
 * seccomp(2) would: the caller's chain plus the new filter becomes a chain
 * node (chains.c), and each thread is moved onto it by a compare-and-set
 * entry that an iterator pass applies (iter.c), so that a thread that
 * changed meanwhile is left alone and a failed attach can be rolled back.
 */
#define _GNU_SOURCE
#include "grow.h"
#include "internal.h"
#include "sfilter.skel.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>

/* ---- spans: where a timed attach's time goes (struct sf_target) ---------- */

static const char *const span_names[SF_SPANS] = {
	[SF_SPAN_CHECK] = "validate_rt", [SF_SPAN_READ] = "read",
	[SF_SPAN_CHAIN] = "chain", [SF_SPAN_DISPATCH] = "dispatch",
	[SF_SPAN_TRANSLATE] = "translate", [SF_SPAN_VERIFY] = "verify",
	[SF_SPAN_TABLE] = "table", [SF_SPAN_ARM] = "arm", [SF_SPAN_APPLY] = "apply",
};

/* sf_chain_build's ns[3], in the order sf_rt_build_run() takes them. */
_Static_assert(SF_SPAN_VERIFY == SF_SPAN_TRANSLATE + 1 && SF_SPAN_TABLE == SF_SPAN_TRANSLATE + 2,
	       "a new chain's three steps are consecutive");

const char *sf_runtime_span_name(enum sf_span s)
{
	return (unsigned int)s < SF_SPANS ? span_names[s] : "?";
}

/* Now, for a timed target; 0 (and no clock read) for one that is not. */
static uint64_t span_begin(const struct sf_target *tg)
{
	return tg->spans ? sf_rt_now_ns() : 0;
}

static void span_add(const struct sf_target *tg, enum sf_span s, uint64_t ns)
{
	if (tg->spans) {
		tg->spans->ns[s] += ns;
		tg->spans->n[s]++;
	}
}

/* Step s, begun at t0, ends now; less what step inner (whose sum was
 * inner0 at t0) took within it, so that the steps add up to the whole. */
static void span_end(const struct sf_target *tg, enum sf_span s, uint64_t t0,
		     enum sf_span inner, uint64_t inner0)
{
	if (tg->spans)
		span_add(tg, s, sf_rt_now_ns() - t0 - (tg->spans->ns[inner] - inner0));
}

static uint64_t span_sum(const struct sf_target *tg, enum sf_span s)
{
	return tg->spans ? tg->spans->ns[s] : 0;
}

/* The thread group of tid, from /proc (the daemon's pid namespace), or
 * -ESRCH. */
static pid_t tgid_of(pid_t tid)
{
	char path[64], line[256];
	pid_t tgid = -ESRCH;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return -ESRCH;
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

/* Thread tid's record alone (of group tgid; 0: any), by the kernel's
 * walk of one task (iter.c), which also applies its pending entry: NULL,
 * and r emptied, where that walk missed it. */
static const struct sf_iter_rec *one_thread(struct sf_runtime *rt, pid_t tgid, pid_t tid,
					    struct sf_rt_recs *r)
{
	const struct sf_iter_rec *me = NULL;

	if (sf_rt_iter_thread(rt, tgid, tid, r) == 0)
		me = find_rec(r, tid);
	if (!me) {
		free(r->r);
		r->r = NULL;
		r->n = 0;
	}
	return me;
}

/* Reads the chain slot of the target thread (*single: of it alone, when
 * the kernel can walk one task; else cleared) or of every thread in its
 * group. A target pinned to a process (tg->process) must still be that
 * process: its leader's start time tells a reused pid apart. */
static int read_group(struct sf_runtime *rt, const struct sf_target *tg, pid_t *tgid,
		      struct sf_rt_recs *r, bool *single)
{
	const struct sf_iter_rec *me;
	int err;

	/* Pinned to a process, only that group is reported. */
	if (*single &&
	    (me = one_thread(rt, tg->process ? tg->process->tgid : 0, tg->tid, r)) != NULL) {
		*tgid = tg->process ? tg->process->tgid : (pid_t)me->tgid;
		goto check;
	}
	*single = false;
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
check:
	if (!me || (pid_t)me->tgid != *tgid ||
	    (tg->process && me->leader_start != tg->process->leader_start)) {
		free(r->r);
		r->r = NULL;
		return -ESRCH;
	}
	return 0;
}

/* Whether chain a is chain of or one of its ancestors (NULL, no chain, is
 * everyone's). */
static bool is_ancestor_or_self(const struct sf_node *a, const struct sf_node *of)
{
	if (!a)
		return true;
	for (; of; of = of->parent)
		if (of == a)
			return true;
	return false;
}

/* The process pidfd refers to, read by the iterator, then checked alive:
 * a process still unreaped after the pass was unreaped during it, so its
 * pid was not yet anyone else's. */
int sf_runtime_identify(struct sf_runtime *rt, int pidfd, struct sf_identity *out)
{
	struct sf_rt_recs r = { 0 };
	size_t i;
	int err;

	pthread_mutex_lock(&rt->lock);
	err = sf_rt_iter_pidfd(rt, pidfd, &r);
	pthread_mutex_unlock(&rt->lock);
	if (err)
		return err == -EBADF || err == -EOPNOTSUPP ? err : -ESRCH;
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
	bool at_exec; /* the chain waits for the task's next execve */
};

/* One iterator pass that applies the pending entries of want[0..n):
 * single (n is 1), over that thread alone, and over the group if that
 * walk missed it (its entry is still pending then). */
static int apply_pass(struct sf_runtime *rt, pid_t tgid, const struct want *want,
		      size_t n, bool single, struct sf_rt_recs *after)
{
	if (single && n == 1 && one_thread(rt, tgid, want[0].tid, after))
		return 0;
	return sf_rt_iter_run(rt, tgid, true, after);
}

/* Writes the pending entries for want[0..n), runs one iterator pass over
 * the group (single: over the one thread) and deletes them. Returns how
 * many were applied, or -errno; after holds the tasks as the pass left
 * them. */
static int apply(struct sf_runtime *rt, pid_t tgid, const struct sf_target *tg,
		 uint32_t guard, const struct want *want, size_t n, int slot,
		 bool single, struct sf_rt_recs *after)
{
	int pfd = rt->fd_pending, err, applied = 0;
	size_t i;

	for (i = 0; i < n; i++)
		if (want[i].arm) {
			uint64_t t = span_begin(tg);

			sf_rt_reply_on(rt);
			span_add(tg, SF_SPAN_ARM, span_begin(tg) - t);
			break;
		}
	for (i = 0; i < n; i++) {
		struct sf_pending p = {
			.chain = (uint32_t)slot | (want[i].arm ? SF_PENDING_ARM : 0) |
				 (want[i].at_exec ? SF_PENDING_EXEC : 0),
			.expect = want[i].from,
			.guard = guard,
			.armed_fd = tg->reply_fd,
			.exec_id = tg->process ? tg->process->exec_id : 0,
			.leader_start = tg->process ? tg->process->leader_start : 0,
		};
		uint32_t key = (uint32_t)want[i].tid;

		if (bpf_map_update_elem(pfd, &key, &p, BPF_ANY))
			return -errno;
	}
	err = apply_pass(rt, tgid, want, n, single, after);
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

/* An attach in progress, from its first step to its last. */
struct attach_op {
	struct sf_runtime *rt;
	const struct sf_target *tg;
	unsigned int flags;
	bool tsync, tsync_set;
	bool single;                    /* passes over the caller's thread alone */
	pid_t tgid;
	struct sf_node *node;           /* the new chain, busy while we work */
	struct sf_chain_build *build;   /* its program, built without the lock */
	struct sf_rt_recs group, after; /* the group now, after a pass */
	struct want *want, *moved;      /* this round's changes, all made so far */
	size_t n_moved, cap_moved;
};

/* What the kernel must find true of a task installing a filter on itself,
 * in the step that applies it (see sf_iter): seccomp(2)'s rule, or the
 * 2012 prctl's, which asks CAP_SYS_ADMIN only of a filter marked
 * inheritable across exec. */
static uint32_t guard_of(const struct attach_op *op)
{
	if (!op->tg->self)
		return 0;
	if (!(op->flags & SF_FLAG_RFC2012))
		return SF_GUARD_SELF;
	return SF_GUARD_IMAGE | (op->flags & SF_FLAG_RFC_EXEC ? SF_GUARD_CAP : 0);
}

/* sf_rt_dispatch_on(), timed when it attaches (after the idle check
 * detached the dispatcher: every attach after the last confined task of
 * the machine exited). */
static int dispatch_on(struct attach_op *op)
{
	uint64_t t;
	int err;

	if (!op->tg->spans || sf_rt_dispatch_attached(op->rt))
		return sf_rt_dispatch_on(op->rt);
	t = sf_rt_now_ns();
	err = sf_rt_dispatch_on(op->rt);
	span_add(op->tg, SF_SPAN_DISPATCH, sf_rt_now_ns() - t);
	return err;
}

/* The new chain, loaded: the caller's chain plus prog, under the kernel's
 * rules. 0, -errno, or (TSYNC) the tid of a thread that blocks it. */
static int attach_node(struct attach_op *op, const struct sock_fprog *prog)
{
	struct sf_runtime *rt = op->rt;
	const struct sf_iter_rec *me = find_rec(&op->group, op->tg->tid);
	struct sf_node *parent = NULL;
	int kcount, err;

	if (me->chain) {
		parent = me->chain < SF_MAX_CHAINS ? rt->slots[me->chain] : NULL;
		if (!parent)
			return -EIO; /* a chain this runtime did not make */
	}
	/* A filter that waits for the exec and one that judges now never
	 * share a task: either would change when the other takes effect.
	 * The iterator checks the first case again when it applies. */
	if (me->chain && !me->at_exec != !(op->flags & SF_ATTACH_AT_EXEC))
		return -EBUSY;

	/* seccomp_attach_filter(): the size rule first, then TSYNC. */
	kcount = sf_rt_filter_insns(prog->filter, prog->len, op->flags);
	if (kcount < 0)
		return kcount;
	if ((uint64_t)kcount + (parent ? parent->path_insns : 0) > C2E_MAX_CHAIN_INSNS)
		return -ENOMEM;
	if (op->tsync &&
	    (err = tsync_conflict(rt, &op->group, op->tgid, op->tg->tid, parent)) != 0)
		return err;

	op->node = sf_rt_node_get(rt, parent, prog->filter, prog->len,
				  op->flags & ~(SF_ATTACH_ARM | SF_ATTACH_AT_EXEC |
						SF_ATTACH_LOADED | SF_ATTACH_STANDIN), 0, kcount);
	if (!op->node)
		return -ENOMEM;
	op->node->cgroup_only = false; /* a task's too now */
	/* A new chain is built without the lock (sf_runtime_attach_to()),
	 * and installed on the next round if this round, with everything
	 * read again, still wants that chain. */
	err = op->build->node == op->node ? sf_rt_build_install(rt, op->build) : -ESTALE;
	if (op->build->dispatch_ns) {
		span_add(op->tg, SF_SPAN_DISPATCH, op->build->dispatch_ns);
		op->build->dispatch_ns = 0;
	}
	/* A gated caller may be given a chain on its stand-in (standin.c);
	 * anyone else waits for its program. */
	if (!op->node->slot && (op->flags & SF_ATTACH_STANDIN) &&
	    (op->flags & SF_ATTACH_LOADED) && err == -ESTALE &&
	    sf_rt_standin_install(rt, op->node)) {
		/* Not eligible, or no stand-in to be had: the load, as for
		 * anyone. */
	}
	if (!op->node->slot || (op->node->standin && !(op->flags & SF_ATTACH_STANDIN))) {
		if (op->flags & SF_ATTACH_LOADED)
			return -EINPROGRESS;
		if (err != -ESTALE)
			return err;
		sf_rt_build_free(op->build);
		err = sf_rt_build_begin(rt, op->node, op->build);
		return err ? err : -EINPROGRESS;
	}
	op->node->busy = true;
	op->node->last_use = ++rt->uses;
	/* Before any task is given the chain, which may have been loaded
	 * before the dispatcher was last detached. */
	return dispatch_on(op);
}

/* Threads created from here on take the new chain at fork; after the wait
 * no fork that missed the entry is still under way, so each round of
 * converge() only has threads that exist. */
static int tsync_begin(struct attach_op *op)
{
	uint32_t key = (uint32_t)op->tgid, val = (uint32_t)op->node->slot |
		(op->flags & SF_ATTACH_AT_EXEC ? SF_PENDING_EXEC : 0);

	if (bpf_map_update_elem(op->rt->fd_tsync, &key, &val, BPF_ANY))
		return -errno;
	op->tsync_set = true;
	__atomic_fetch_add(&op->rt->bss->sf_tsync_pending, 1, __ATOMIC_SEQ_CST);
	return sf_rt_quiesce(op->rt);
}

/* This round's changes into op->want: the caller alone, or (TSYNC) every
 * thread of the group not on the new chain yet. How many. */
static size_t round_wants(struct attach_op *op)
{
	pid_t tid = op->tg->tid;
	size_t i, n = 0;

	for (i = 0; i < op->group.n; i++) {
		const struct sf_iter_rec *g = &op->group.r[i];

		if ((pid_t)g->tgid != op->tgid || g->chain == (uint32_t)op->node->slot)
			continue;
		if ((pid_t)g->tid != tid && !op->tsync)
			continue;
		op->want[n++] = (struct want){ (pid_t)g->tid, g->chain,
					       (op->flags & SF_ATTACH_ARM) && (pid_t)g->tid == tid,
					       !!(op->flags & SF_ATTACH_AT_EXEC) };
	}
	return n;
}

/* Adds the wants of this round (want[0..n)) that the pass applied to
 * op->moved, for a roll-back. 0, or -errno where a task refused. */
static int note_moved(struct attach_op *op, size_t n)
{
	size_t i;

	for (i = 0; i < op->after.n; i++) {
		const struct sf_iter_rec *a = &op->after.r[i];
		size_t k;

		if (a->refused)
			return -(int)a->refused;
		if (!a->applied)
			continue;
		for (k = 0; k < n && op->want[k].tid != (pid_t)a->tid; k++)
			;
		if (k == n)
			continue;
		if (C2E_GROW(op->moved, op->cap_moved, op->n_moved + 1))
			return -ENOMEM;
		op->moved[op->n_moved++] = op->want[k];
	}
	return 0;
}

/* Moves the caller, or (TSYNC) every thread of the group, onto the new
 * chain, round after round while threads come and go; threads that appear
 * meanwhile are born with the new chain. */
static int converge(struct attach_op *op)
{
	pid_t tid = op->tg->tid;
	const struct sf_iter_rec *me;
	size_t i;
	int round, err;

	op->want = calloc(op->group.n + 1, sizeof(*op->want));
	if (!op->want)
		return -ENOMEM;
	for (round = 0; round < 64; round++) {
		size_t n = round_wants(op);
		int applied;

		if (n == 0)
			break;
		applied = apply(op->rt, op->tgid, op->tg, guard_of(op), op->want, n,
				op->node->slot, op->single, &op->after);
		if (applied < 0)
			return applied;
		err = note_moved(op, n);
		if (err)
			return err;
		if (op->tsync && op->rt->test_tsync_fail)
			return -EIO;
		free(op->group.r);
		op->group = op->after;
		op->after.r = NULL;
		me = find_rec(&op->group, tid);
		if (!me)
			return -ESRCH;
		if (!op->tsync)
			return me->chain != (uint32_t)op->node->slot ? -EAGAIN : 0;
		/* A thread's chain changed under us to one that is not an
		 * ancestor (a cgroup join): give up whole. */
		err = tsync_conflict(op->rt, &op->group, op->tgid, tid, op->node);
		if (err)
			return err;
		{
			struct want *w = realloc(op->want, (op->group.n + 1) * sizeof(*w));

			if (!w)
				return -ENOMEM; /* op->want is still freed by the caller */
			op->want = w;
		}
	}
	for (i = 0; i < op->group.n; i++)
		if ((pid_t)op->group.r[i].tgid == op->tgid &&
		    op->group.r[i].chain != (uint32_t)op->node->slot)
			return -EAGAIN;
	return 0;
}

/* Puts threads that an unfinished attach moved back on the chain they
 * had (compare and set: a thread that changed since is left alone; each
 * moved task remembers its old chain, SF_PENDING_BACK). With TSYNC, so
 * are threads born on the new chain while the attach ran, which go back
 * to what their creator had: the group is read again, and again while
 * threads keep being born on the new chain from threads not yet put
 * back. No thread was on the new chain before (the ancestor rule refuses
 * a group where one is). A thread still on it after the last round keeps
 * it: stricter than asked, never looser. */
static void roll_back(struct attach_op *op)
{
	struct sf_runtime *rt = op->rt;
	struct sf_target plain = { .reply_fd = -1 };
	uint32_t slot = (uint32_t)op->node->slot;
	struct want *back = NULL;
	int round;

	for (round = 0; round < 16; round++) {
		struct sf_rt_recs r = { 0 }, after = { 0 };
		size_t i, n = 0;

		if (!op->tsync) {
			back = op->moved;
			n = op->n_moved;
		} else if (sf_rt_iter_run(rt, op->tgid, true, &r) == 0 &&
			   (back = calloc(r.n + 1, sizeof(*back))) != NULL) {
			for (i = 0; i < r.n; i++)
				if ((pid_t)r.r[i].tgid == op->tgid && r.r[i].chain == slot)
					back[n++] = (struct want){ .tid = (pid_t)r.r[i].tid,
								   .from = slot };
		}
		free(r.r);
		if (n)
			apply(rt, op->tgid, &plain, 0, back, n, SF_PENDING_BACK, !op->tsync,
			      &after);
		free(after.r);
		if (back != op->moved)
			free(back);
		back = NULL;
		if (!op->tsync || n == 0)
			return;
	}
}

/* Undoes what must not outlive the attach; on failure, puts every thread
 * it moved back on the chain it had: nothing half done. */
static int attach_end(struct attach_op *op, int err, uint32_t *filter_id)
{
	if (op->tsync_set) {
		uint32_t key = (uint32_t)op->tgid;

		bpf_map_delete_elem(op->rt->fd_tsync, &key);
		/* A roll-back reads the group once no fork that saw the
		 * entry is under way; sf_tsync_pending keeps the idle check
		 * off until then. */
		if (err)
			sf_rt_quiesce(op->rt);
		__atomic_fetch_sub(&op->rt->bss->sf_tsync_pending, 1, __ATOMIC_SEQ_CST);
	}
	if (err && op->node && op->node->slot && (op->n_moved || op->tsync_set))
		roll_back(op);
	if (!err && filter_id)
		*filter_id = op->node->id;
	if (!err && op->tg->stood_in)
		*op->tg->stood_in = op->node->standin;
	if (op->node && op->node->slot)
		op->node->busy = false;
	free(op->group.r);
	free(op->after.r);
	free(op->want);
	free(op->moved);
	return err;
}

static int attach_locked(struct sf_runtime *rt, const struct sf_target *tg,
			 const struct sock_fprog *prog, unsigned int flags,
			 uint32_t *filter_id, struct sf_chain_build *build)
{
	/* Without TSYNC only the caller's thread is read and changed: no
	 * pass needs to visit any other task on the machine. */
	struct attach_op op = { .rt = rt, .tg = tg, .flags = flags,
				.tsync = flags & SF_ATTACH_TSYNC,
				.single = !(flags & SF_ATTACH_TSYNC), .build = build };
	uint64_t t = span_begin(tg), inner;
	int err;

	err = read_group(rt, tg, &op.tgid, &op.group, &op.single);
	span_add(tg, SF_SPAN_READ, span_begin(tg) - t);
	if (err)
		return err;
	t = span_begin(tg);
	inner = span_sum(tg, SF_SPAN_DISPATCH);
	err = attach_node(&op, prog);
	span_end(tg, SF_SPAN_CHAIN, t, SF_SPAN_DISPATCH, inner);
	t = span_begin(tg);
	inner = span_sum(tg, SF_SPAN_ARM);
	if (!err && op.tsync)
		err = tsync_begin(&op);
	if (!err)
		err = converge(&op);
	if (op.node && op.node->slot)
		span_end(tg, SF_SPAN_APPLY, t, SF_SPAN_ARM, inner);
	return attach_end(&op, err, filter_id);
}

int sf_runtime_attach_to(struct sf_runtime *rt, const struct sf_target *tg,
			 const struct sock_fprog *prog, unsigned int flags,
			 uint32_t *filter_id, struct c2e_error *err)
{
	struct sf_chain_build build = SF_CHAIN_BUILD_INIT;
	uint64_t t;
	int ret, round, i;

	if (flags & ~(SF_ATTACH_ADMIN_FLAGS | SF_ATTACH_ARM | SF_ATTACH_LOADED |
		      SF_ATTACH_CHECKED | SF_ATTACH_STANDIN))
		return -EINVAL;
	t = span_begin(tg);
	ret = sf_runtime_filter_check(prog, flags, err);
	if (!(flags & SF_ATTACH_CHECKED))
		span_add(tg, SF_SPAN_CHECK, span_begin(tg) - t);
	if (ret)
		return -EINVAL;
	if (tg->tid <= 0)
		return -ESRCH;
	pthread_mutex_lock(&rt->lock);
	/* No save of the state file here: the one change of the chain tree
	 * that a task can come to depend on, a chain loaded into a slot, is
	 * saved by sf_rt_build_install() before any task is given the slot,
	 * and everything else an attach changes is in the kernel (task
	 * storage). A cached chain thus costs a pinned runtime no rewrite of
	 * the file. A new chain's program is loaded (verified) between two
	 * rounds, without the lock, so that no other operation waits for
	 * the kernel's verifier; the next round reads the thread again and
	 * installs it only if the thread still wants that chain. */
	for (round = 0;; round++) {
		ret = attach_locked(rt, tg, prog, flags, filter_id, &build);
		if (ret != -EINPROGRESS || (flags & SF_ATTACH_LOADED))
			break;
		ret = sf_rt_build_unlocked(rt, &build, round);
		for (i = 0; i < 3; i++)
			if (build.ns[i])
				span_add(tg, (enum sf_span)(SF_SPAN_TRANSLATE + i), build.ns[i]);
		memset(build.ns, 0, sizeof(build.ns)); /* counted once */
		if (ret)
			break;
	}
	sf_rt_build_free(&build);
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
