/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Part of sfilter.bpf.c, included once at its place there: one BPF object
 * holds every program and map, so this is not a header for anyone else.
 * What happens to tasks beside their syscalls: cgroup joins, fork
 * inheritance, exec (arm at exec), and the task iterator that applies the
 * runtime's compare-and-set changes.
 */
#ifndef SF_TASKS_BPF_H
#define SF_TASKS_BPF_H

static __always_inline void cg_pend(struct task_struct *task, __u64 cgid,
				    bool threadgroup)
{
	struct sf_cg_pend p = { .cgid = cgid, .tgid = task->tgid,
				.threadgroup = threadgroup };
	__u32 tid = task->pid;

	__u64 wake = 0;

	if (bpf_map_update_elem(&sf_cg_pending, &tid, &p, BPF_ANY)) {
		__sync_fetch_and_add(&sf_cg_failed, 1);
		return;
	}
	__sync_fetch_and_add(&sf_cg_pended, 1);
	/* Wakes the daemon now rather than at its next poll timeout: the
	 * task runs without the cgroup's filters until it has been seen.
	 * Records shorter than struct sf_event are not events. */
	bpf_ringbuf_output(&sf_events, &wake, sizeof(wake), BPF_RB_FORCE_WAKEUP);
}

/* The nearest cgroup at or above cg that has filters attached (its entry,
 * its id in *cgid), or NULL. Attaching to a cgroup covers its subtree;
 * user space makes an attached cgroup's chain contain the filters of every
 * attached cgroup above it, so the nearest one is all a joiner needs.
 * A join (joining) deeper than we look is counted: user space can see it. */
static __always_inline struct sf_cg *cg_attached_above(struct cgroup *cg, __u64 *cgid,
						       bool joining)
{
	struct sf_cg *e;
	int i;

	for (i = 0; i < SF_CG_MAX_DEPTH && cg; i++) {
		*cgid = BPF_CORE_READ(cg, kn, id);
		e = bpf_map_lookup_elem(&sf_cgroups, cgid);
		if (e && e->chain)
			return e;
		/* cgroup_parent(): self is the first member of struct cgroup. */
		cg = (struct cgroup *)BPF_CORE_READ(cg, self.parent);
	}
	if (cg && joining)
		__sync_fetch_and_add(&sf_cg_failed, 1);
	return NULL;
}

/*
 * task has just entered cgroup dst (migration or clone3(CLONE_INTO_CGROUP)),
 * or (joining false) execs in it with no chain. A task without a chain
 * gets the cgroup's chain here, before it returns to user space from
 * anything it was blocked in; a task with a chain gets the prepared
 * "chain + cgroup filters" if user space made one, else it is left for
 * sf_runtime_process_pending(). Other threads of a moved multi-threaded
 * group (threadgroup) are left to user space too.
 *
 * When the cgroup was attached at exec (sf_cg.at_exec), a task with no
 * chain, or one whose chain waits, waits for its next execve, as a
 * runtime's own seccomp filter, installed just before the workload's
 * execve, would judge it: a process `runc exec` starts joins the
 * container's cgroup as runc's init, not yet the command. A task a filter
 * judges already takes the cgroup's filters at once. Any other cgroup's
 * filters judge from the join: a chain waiting for the task's exec stops
 * waiting (stricter, never looser).
 */
static __always_inline void cg_join(struct task_struct *task, struct cgroup *dst,
				    bool threadgroup, bool joining)
{
	struct sf_cg_key k = {};
	struct sf_task *s;
	struct sf_cg *cg;
	__u64 cgid = 0;
	__u32 *to;

	cg = cg_attached_above(dst, &cgid, joining);
	if (!cg)
		return;
	s = bpf_task_storage_get(&sf_tasks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!s) {
		__sync_fetch_and_add(&sf_cg_failed, 1);
		cg_pend(task, cgid, threadgroup);
		return;
	}
	if (s->at_exec && !cg->at_exec)
		s->at_exec = 0;
	if (s->armed) {
		/* In the middle of sf_attach(): user space sorts it out. */
		cg_pend(task, cgid, false);
	} else if (!s->chain) {
		s->chain = cg->chain;
		s->at_exec = cg->at_exec ? 1 : 0;
		settle(s);
	} else {
		k.cgid = cgid;
		k.chain = s->chain;
		to = bpf_map_lookup_elem(&sf_cg_append, &k);
		if (to && *to)
			s->chain = *to;
		else
			cg_pend(task, cgid, false);
	}
	if (threadgroup && BPF_CORE_READ(task, signal, nr_threads) > 1)
		cg_pend(task, cgid, true);
}

/* cgroup_attach_task() fires this after a successful migration, in the
 * writer's context, for the leader when the whole group moved. */
SEC("tp_btf/cgroup_attach_task")
int BPF_PROG(sf_cgroup_attach, struct cgroup *dst, const char *path,
	     struct task_struct *task, bool threadgroup)
{
	/* Handing a chain read from sf_cgroups: the idle check waits. */
	__sync_fetch_and_add(&sf_handing, 1);
	cg_join(task, dst, threadgroup, true);
	__sync_fetch_and_add(&sf_handing, -1);
	return 0;
}

/* A child that must have chain but got no storage: recorded for its first
 * syscall (adopt_orphan()). With nowhere to record it (16384 orphans none
 * of which has made a call yet), the forking thread group is killed,
 * which takes a new thread with it (docs/security.md). */
static __always_inline void orphan(struct task_struct *child, __u32 chain, __u32 at_exec)
{
	struct sf_orphan o = { .start_time = child->start_time, .chain = chain,
			       .at_exec = at_exec };
	__u32 tid = child->pid;
	bool had = bpf_map_lookup_elem(&sf_orphans, &tid) != 0;

	__sync_fetch_and_add(&sf_fork_failed, 1);
	if (bpf_map_update_elem(&sf_orphans, &tid, &o, BPF_ANY) == 0) {
		if (!had)
			__sync_fetch_and_add(&sf_orphans_pending, 1);
		return;
	}
	bpf_send_signal(SIGKILL);
}

/* Runs in kernel_clone() before wake_up_new_task(): for fork, vfork,
 * clone and threads the child has its chain before its first instruction.
 * From reading the parent's chain to counting the child's, sf_handing
 * holds the idle check off: a detach meanwhile may have left the parent
 * chainless and uncounted. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(sf_fork, struct task_struct *parent, struct task_struct *child)
{
	struct cgroup *pcg = BPF_CORE_READ(parent, cgroups, dfl_cgrp);
	struct cgroup *ccg = BPF_CORE_READ(child, cgroups, dfl_cgrp);
	struct sf_task *s = tracked(parent), *c = 0;
	__u32 chain, at_exec, prev;

	if (!s && !sf_tsync_pending && pcg == ccg && !sf_cg_attached)
		return 0; /* nothing to hand on: nearly every fork */
	__sync_fetch_and_add(&sf_handing, 1);
	chain = s ? SF_TASK_CHAIN(s) : 0;
	at_exec = s ? s->at_exec : 0;
	prev = s ? s->prev : 0;
	if (sf_tsync_pending && child->tgid == parent->tgid) {
		/* A thread created while TSYNC moves its group: it takes the
		 * chain the group is moving to, waiting for its exec as that
		 * attach says, whatever its creator has; should the attach
		 * fail, it goes back to what its creator had before. */
		__u32 tgid = parent->tgid, *to = bpf_map_lookup_elem(&sf_tsync, &tgid);

		if (to && *to) {
			__u32 slot = *to & ~SF_PENDING_EXEC;

			if (chain != slot)
				prev = chain;
			chain = slot;
			at_exec = !!(*to & SF_PENDING_EXEC);
		}
	}
	if (chain) {
		if (!sf_test_no_storage)
			c = bpf_task_storage_get(&sf_tasks, child, 0,
						 BPF_LOCAL_STORAGE_GET_F_CREATE);
		/* A chain waiting for the parent's exec waits for the
		 * child's own. */
		if (c) {
			c->chain = chain;
			c->at_exec = at_exec;
			c->prev = prev;
			settle(c);
		} else {
			orphan(child, chain, at_exec);
		}
	}
	/* clone3(CLONE_INTO_CGROUP) puts the child in another cgroup without
	 * cgroup_attach_task(): the only way a new task's cgroup differs
	 * from its parent's. That is a join, seen here before the child runs. */
	/* A child with no chain in a cgroup with filters: its parent is a
	 * thread of a group that joined while multi-threaded, which user
	 * space (cg_pend) has not reached yet and never will for the child;
	 * it joins here, as its parent will. */
	if (pcg != ccg || (!chain && sf_cg_attached))
		cg_join(child, ccg, false, true);
	__sync_fetch_and_add(&sf_handing, -1);
	return 0;
}

/* do_exit(), for every thread: it makes no system call again, so it is no
 * longer counted, whatever its chain (which the task keeps: sfctl ps still
 * shows a zombie's). */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(sf_exit)
{
	struct sf_task *s = tracked(bpf_get_current_task_btf());

	if (s) {
		__sync_fetch_and_or(&s->live, SF_LIVE_EXITED);
		settle(s);
	}
	return 0;
}

/* Fires in exec_binprm() once the new image is loaded, past the point of
 * no return and before the task returns to user space: a chain that waited
 * for this exec judges the new image's first syscall. A failed execve
 * never gets here, and keeps waiting.
 *
 * A task with no chain in an attached cgroup gets the cgroup's here: a
 * thread of a process that joined while multi-threaded, which user space
 * (cg_pend) has not reached yet, or a child it forked meanwhile. Its new
 * image is judged from its first call, as every joiner's would be. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(sf_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct sf_task *s = tracked(t);

	if ((!s || !SF_TASK_CHAIN(s)) && sf_cg_attached) {
		__sync_fetch_and_add(&sf_handing, 1);
		cg_join(t, BPF_CORE_READ(t, cgroups, dfl_cgrp), false, false);
		__sync_fetch_and_add(&sf_handing, -1);
		s = tracked(t);
	}
	if (s && s->at_exec)
		s->at_exec = 0;
	return 0;
}

#define CAP_SYS_ADMIN     21
#define PFA_NO_NEW_PRIVS  0

/*
 * seccomp_prepare_filter()'s rule for a task installing a filter on
 * itself, judged here, in the same step that applies the change: the task
 * has no_new_privs or CAP_SYS_ADMIN (in its own user namespace: its
 * effective set), else EACCES (SF_GUARD_SELF). A 2012-interface filter
 * needs neither, as exec is refused under it instead (SF_GUARD_IMAGE), but
 * one marked inheritable across exec needs CAP_SYS_ADMIN, else EPERM
 * (SF_GUARD_CAP). In every case its process still runs the image that
 * asked: self_exec_id is still exec_id, which sfilterd read before the
 * request could be sent, else EPERM. The credentials are read before the
 * exec id: begin_new_exec() bumps self_exec_id before commit_creds(), so
 * credentials of a new image come with a new exec id.
 */
static __always_inline __u32 guard_refuses(struct task_struct *t, __u32 guard,
					   __u64 exec_id)
{
	/* The objective credentials: cred can be overridden for a moment
	 * (override_creds(), as access(2) does, clearing the effective set). */
	const struct cred *cred = BPF_CORE_READ(t, real_cred);
	__u32 caps = 0; /* the low word of kernel_cap_t: u32[2] on 6.1, u64 later */
	__u64 flags = BPF_CORE_READ(t, atomic_flags);
	bool admin;

	bpf_probe_read_kernel(&caps, sizeof(caps),
			      __builtin_preserve_access_index(&cred->cap_effective));
	asm volatile("" ::: "memory");
	admin = caps & (1U << CAP_SYS_ADMIN);
	if ((guard & SF_GUARD_SELF) && !(flags & (1UL << PFA_NO_NEW_PRIVS)) && !admin)
		return EACCES;
	if ((guard & SF_GUARD_CAP) && !admin)
		return EPERM;
	if (BPF_CORE_READ(t, self_exec_id) != exec_id)
		return EPERM;
	return 0;
}

/* Applies p to s (compare and set on the chain), into rec. A task moved
 * off a chain remembers it (prev) for SF_PENDING_BACK. */
static __always_inline void apply_pending(struct sf_task *s, const struct sf_pending *p,
					  struct sf_iter_rec *rec)
{
	__u32 chain = p->chain & ~(SF_PENDING_ARM | SF_PENDING_EXEC);

	if (p->chain == SF_PENDING_SETTLE) {
		if (s->armed) {
			s->chain = s->armed;
			disarm(s);
		}
		rec->applied = 1;
		return;
	}
	if (SF_TASK_CHAIN(s) != p->expect)
		return;
	if (p->chain == SF_PENDING_BACK) {
		s->chain = s->prev;
		if (!s->chain)
			s->at_exec = 0;
		disarm(s);
	} else if (p->chain & SF_PENDING_EXEC) {
		/* Never suspends a chain that judges the task already. */
		if (p->expect && !s->at_exec) {
			rec->refused = EBUSY;
			return;
		}
		s->prev = p->expect;
		s->chain = chain;
		s->at_exec = chain != 0;
	} else if (p->chain & SF_PENDING_ARM) {
		s->prev = p->expect;
		if (!s->armed)
			__sync_fetch_and_add(&sf_armed, 1);
		s->armed = chain;
		s->armed_fd = p->armed_fd;
	} else {
		s->prev = p->expect;
		s->chain = chain;
		disarm(s);
	}
	settle(s);
	rec->applied = 1;
}

/* Whether t's kernel seccomp stack has a filter with a listener, and
 * whose (SF_GATED_*): each filter, newest first, through its prev (a stack
 * only ever grows on top, and t is held by the iterator). The kernel
 * allows one listener on a stack (has_duplicate_listener()). */
static __always_inline __u32 under_listener(struct task_struct *t)
{
	struct seccomp_filter *f = BPF_CORE_READ(t, seccomp.filter);
	int i;

	for (i = 0; i < 64 && f; i++) {
		if (BPF_CORE_READ(f, notif)) {
			__u64 key = (__u64)f;

			return bpf_map_lookup_elem(&sf_gate_filters, &key) ? SF_GATED_OURS
									    : SF_GATED_OTHER;
		}
		f = BPF_CORE_READ(f, prev);
	}
	return SF_GATED_NONE;
}

#define SF_ANON_INODE_FS_MAGIC 0x09041934
#define SF_NOTIFY_NAME "seccomp notify"

/* Over one process's files (sf_listeners_tgid's): every seccomp listener
 * among them, a file of the anonymous inode filesystem named as
 * init_listener() names it (seccomp_notify_ops is static, so not a symbol
 * to compare f_op with), puts its filter in sf_gate_filters with this
 * pass's generation. */
SEC("iter/task_file")
int sf_iter_listeners(struct bpf_iter__task_file *ctx)
{
	struct task_struct *t = ctx->task;
	struct file *f = ctx->file;
	char name[sizeof(SF_NOTIFY_NAME)];
	__u32 gen = sf_listeners_gen;
	__u64 key;
	int i;

	if (!t || !f || (__u32)t->tgid != sf_listeners_tgid)
		return 0;
	if (BPF_CORE_READ(f, f_inode, i_sb, s_magic) != SF_ANON_INODE_FS_MAGIC)
		return 0;
	if (bpf_probe_read_kernel_str(name, sizeof(name),
				      BPF_CORE_READ(f, f_path.dentry, d_name.name)) !=
	    sizeof(name))
		return 0;
	for (i = 0; i < sizeof(name); i++)
		if (name[i] != SF_NOTIFY_NAME[i])
			return 0;
	key = (__u64)BPF_CORE_READ(f, private_data);
	if (key)
		bpf_map_update_elem(&sf_gate_filters, &key, &gen, BPF_ANY);
	return 0;
}

SEC("iter/task")
int sf_iter(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	struct sf_iter_rec rec = {};
	struct sf_pending *p;
	struct sf_task *s;
	__u32 tid;

	if (!t)
		return 0;
	tid = t->pid;
	if (sf_iter_tid && tid != sf_iter_tid)
		return 0;
	if (sf_iter_tgid && (__u32)t->tgid != sf_iter_tgid)
		return 0;
	rec.tid = tid;
	rec.tgid = t->tgid;
	rec.leader_start = BPF_CORE_READ(t, group_leader, start_time);
	p = bpf_map_lookup_elem(&sf_pending, &tid);
	if (p && p->leader_start && p->leader_start != rec.leader_start)
		p = 0; /* meant for a process that has gone, not this one */
	if (p && p->guard)
		rec.refused = guard_refuses(t, p->guard, p->exec_id);
	if (p && !rec.refused) {
		s = bpf_task_storage_get(&sf_tasks, t, 0,
					 BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (s)
			apply_pending(s, p, &rec);
	} else {
		s = bpf_task_storage_get(&sf_tasks, t, 0, 0);
	}
	rec.chain = s ? SF_TASK_CHAIN(s) : 0;
	rec.old = s && s->armed ? s->chain : 0;
	rec.at_exec = s ? s->at_exec : 0;
	rec.armed_fd = s && s->armed ? s->armed_fd : -1;
	rec.leader_boot = BPF_CORE_READ(t, group_leader, start_boottime);
	rec.gated = under_listener(t);
	rec.uid = BPF_CORE_READ(t, real_cred, uid.val);
	rec.account = account_of(t);
	rec.exec_id = BPF_CORE_READ(t, self_exec_id);
	rec.euid = BPF_CORE_READ(t, real_cred, euid.val);
	BPF_CORE_READ_STR_INTO(&rec.comm, t, comm);
	if (!rec.chain && !rec.applied && !rec.refused && !sf_iter_all && !sf_iter_tid)
		return 0;
	bpf_seq_write(ctx->meta->seq, &rec, sizeof(rec));
	return 0;
}

#endif
