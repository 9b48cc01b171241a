// SPDX-License-Identifier: GPL-2.0-only
/*
 * sfilter's kernel side. CO-RE only: one vmlinux.h, field offsets relocated
 * by libbpf at load time, so the same object loads on 6.1 and 6.18.
 *
 *   sf_dispatch  tp_btf/sys_enter: every syscall of every task. Untracked
 *                tasks (no task storage at all) leave after one BTF load.
 *                Tracked tasks: the action table, else a tail call into
 *                their chain program (generated at attach time by
 *                loader/runtime/chain_emit.c), which records the verdict and
 *                tail-calls sf_enforce (slot 0).
 *   sf_enforce   acts on the verdict: SIGKILL, LOG, deny marks, events.
 *   sf_fork      tp_btf/sched_process_fork: the child gets the parent's
 *                chain before it first runs.
 *   sf_iter      iter/task: applies pending chain changes to tasks (this is
 *                how a non-leader thread gets a chain on 6.1, which has no
 *                PIDFD_THREAD) and reports tasks' chains.
 *   sf_lsm_*     lsm tier only: refuse the security-checked operations of a
 *                syscall the chain denied.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "sfilter.h"

char LICENSE[] SEC("license") = "GPL";

#define SIGKILL 9
#define SIGSYS  31
#define EPERM   1
#define EACCES  13
#define EBUSY   16
#define ENOSYS  38
#define MAX_ERRNO 4095
/* A recv that returns these is restarted or retried, not finished. */
#define EINTR                  4
#define EAGAIN                 11
#define ERESTARTSYS            512
#define ERESTARTNOINTR         513
#define ERESTARTNOHAND         514
#define ERESTART_RESTARTBLOCK  516

#define RET_ACTION_FULL 0xffff0000U
#define RET_DATA        0x0000ffffU
#define RET_KILL_PROCESS 0x80000000U
#define RET_KILL_THREAD  0x00000000U
#define RET_TRAP         0x00030000U
#define RET_ERRNO        0x00050000U
#define RET_USER_NOTIF   0x7fc00000U
#define RET_TRACE        0x7ff00000U
#define RET_LOG          0x7ffc0000U
#define RET_ALLOW        0x7fff0000U

const volatile __u32 sf_tier = SF_BPF_TIER_TRACEPOINT;

/* Iterator parameters, set by user space before each read (serialised). */
__u32 sf_iter_tid;   /* visit only this tid (0: any) */
__u32 sf_iter_tgid;  /* visit only this thread group (0: any) */
__u32 sf_iter_all;   /* report tasks that have no chain too */
/* sf_iter_listeners: the process whose files it reads, and its pass. */
__u32 sf_listeners_tgid;
__u32 sf_listeners_gen;

/* SF_ABI_VERSION, written by the runtime that loaded these programs and
 * read by one that adopts their pins. */
__u32 sf_abi;

/* Set by the runtime that tears everything down, before it releases
 * anything: from the next syscall on no task is judged, and an empty chain
 * slot is no longer a reason to kill (see sf_rt_stop_enforcing() in
 * loader/runtime/iter.c). Read only on paths that found task storage. */
__u32 sf_stopped;
/* Set by the runtime once sf_reply_* below are attached: the recv of
 * sf_attach()'s reply then decides the arm when it returns. The fexit
 * programs see x86-64 calls only; sf_reply_exit_tp sees i386 ones too
 * (sf_reply_exit_i386). */
__u32 sf_reply_exit;
__u32 sf_reply_exit_i386;
/* About how many tasks hold an arm (it drifts up when an armed task dies):
 * sf_reply_exit_tp, where it stands in for the fexit programs, looks at
 * nothing while it is 0. */
__u64 sf_armed;

/* The event budget of every account (struct sf_acct): one event per
 * interval on average, window / interval of them at once; no budget while
 * the interval is 0. Set by user space (sf_runtime_set_event_budget()). */
__u64 sf_ev_interval_ns;
__u64 sf_ev_window_ns;
/* Repeats folded (bpf/sfilter.h, struct sf_agg_key): for this long after a
 * key's event its calls only count; nothing is folded while it is 0. Set
 * by user space (sf_runtime_set_repeat_interval()). */
__u64 sf_agg_interval_ns;

/* Counters user space may read. */
__u64 sf_events_dropped;
__u64 sf_agg_folded;     /* calls counted under their key, no event made */
__u64 sf_fork_failed;
__u64 sf_tailcall_failed;
__u64 sf_cg_failed;
/* Entries in sf_orphans, and a gate: while it is 0 (nearly always) the
 * untracked path stays one BTF load and one .bss load. */
__u64 sf_orphans_pending;
/* Orphans killed at their first syscall: no storage even then. */
__u64 sf_orphans_killed;
/* Entries in sf_tsync (TSYNC attaches under way). */
__u64 sf_tsync_pending;
/* Tasks that have a chain or an arm and have not exited (sf_task.live),
 * and programs under way that may give a task a chain they read elsewhere
 * (a parent's at fork, a cgroup's at a join). sfilterd detaches the
 * dispatcher only when both are 0 (read in that order): no walk over
 * tasks, which a task can outrun by changing its tid (an exec from a
 * thread) or taking a lower one (a fork after the pid counter wraps). */
__u64 sf_live;
__u64 sf_handing;
/* Whether any cgroup has filters (set by user space): only then does an
 * exec look for its cgroup's (sf_exec). */
__u32 sf_cg_attached;
/* For the test suite only: task storage for a fork child, and (1) for an
 * orphan's adoption too or (2) not, "cannot be allocated" (see
 * sf_runtime_test_knob()). */
__u32 sf_test_no_storage;
/* Bumped on every sf_cg_pending write, so that user space looks at that map
 * (a 64k-bucket hash: finding its first key walks every bucket, ~0.2 ms)
 * only when something was put in it. */
__u64 sf_cg_pended;

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sf_task);
} sf_tasks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, SF_MAX_CHAINS);
	__type(key, __u32);
	__type(value, __u32);
} sf_progs SEC(".maps");

/* Written by user space through mmap at chain compile time. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, SF_MAX_CHAINS * SF_TABLE_PER_CHAIN);
	__type(key, __u32);
	__type(value, struct sf_const);
} sf_table SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct sf_pending);
} sf_pending SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct sf_cg);
} sf_cgroups SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct sf_cg_key);
	__type(value, __u32);
} sf_cg_append SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct sf_cg_pend);
} sf_cg_pending SEC(".maps");

/* Children of confined tasks that got no task storage at fork, by tid.
 * Preallocated: recording one never allocates. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct sf_orphan);
} sf_orphans SEC(".maps");

/* TSYNC under way in a thread group (tgid): the chain every thread gets,
 * which a thread created meanwhile takes at fork (sf_runtime_attach), with
 * SF_PENDING_EXEC when it waits for the thread's exec. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u32);
} sf_tsync SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, SF_EVENTS_BYTES);
} sf_events SEC(".maps");

/* Event budgets and what each account lost (bpf/sfilter.h). LRU: an entry
 * is made for an account at its first event, without ever failing. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SF_ACCOUNTS_MAX);
	__type(key, __u32);
	__type(value, struct sf_acct);
} sf_accounts SEC(".maps");

/* Written by chain programs of counted filters only (SF_FLAG_COUNT). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SF_HITS_MAX);
	__type(key, __u32);
	__type(value, __u64);
} sf_hits SEC(".maps");

/* Repeats folded: per key, its calls so far (bpf/sfilter.h). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SF_AGG_MAX);
	__type(key, struct sf_agg_key);
	__type(value, struct sf_agg_val);
} sf_agg SEC(".maps");

/* The filters of the listeners sfilterd holds (SF_GATED_OURS): each the
 * generation (sf_listeners_gen) of the last pass that saw it. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SF_GATE_FILTERS_MAX);
	__type(key, __u64);
	__type(value, __u32);
} sf_gate_filters SEC(".maps");

/* Counters for metrics (struct sf_stat_key). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SF_STATS_MAX);
	__type(key, struct sf_stat_key);
	__type(value, __u64);
} sf_stats SEC(".maps");

/*
 * Brings s->live's COUNTED bit, and sf_live with it, in line with whether
 * the task has a chain or an arm and has not exited. Called by every
 * program after it changes one of those, from any context: the task's own
 * (dispatcher, reply, exit), a parent's (fork), a cgroup writer's, the
 * iterator's. The bit changes only by compare-and-swap, so sf_live moves
 * once per change of the bit; and each round re-reads the chain after an
 * atomic operation (a full barrier), so a change made on another CPU
 * meanwhile is seen by this call or by that CPU's own call, whichever
 * comes last. A task with a chain is thus never left uncounted. The
 * bound: every round that does not settle follows a change by someone
 * else, who settles again.
 */
static __always_inline void settle(struct sf_task *s)
{
	int i;

	for (i = 0; i < 4; i++) {
		__u32 w = __sync_fetch_and_add(&s->live, 0);
		__u32 want = (s->chain || s->armed) && !(w & SF_LIVE_EXITED);

		if (want == (w & SF_LIVE_COUNTED))
			return;
		if (__sync_val_compare_and_swap(&s->live, w, w ^ SF_LIVE_COUNTED) == w)
			__sync_fetch_and_add(&sf_live, want ? 1 : -1);
	}
}

static __always_inline bool task_compat(struct task_struct *t)
{
	return t->thread_info.status & SF_TS_COMPAT;
}

static __always_inline struct sf_task *tracked(struct task_struct *t)
{
	/* A plain BTF load: tasks that never had task storage (nearly all of
	 * them) skip the helper call. */
	if (!t->bpf_storage)
		return 0;
	return bpf_task_storage_get(&sf_tasks, t, 0, 0);
}

/* The first syscall of a confined task's child that got no storage at
 * fork: it gets its storage and its chain now, and this call is judged;
 * if the storage still cannot be had, it dies. Never unjudged. */
static __always_inline struct sf_task *adopt_orphan(struct task_struct *t)
{
	__u32 tid = t->pid;
	struct sf_orphan *o = bpf_map_lookup_elem(&sf_orphans, &tid);
	struct sf_task *s = NULL;

	if (!o)
		return 0;
	/* A dead orphan's tid, reused, is not this task. Else the task is
	 * counted (settle()) before it stops being a pending orphan: the
	 * idle check never sees neither. */
	if (o->start_time == t->start_time) {
		if (sf_test_no_storage != 1)
			s = bpf_task_storage_get(&sf_tasks, t, 0,
						 BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (s) {
			s->chain = o->chain;
			s->at_exec = o->at_exec;
			settle(s);
		} else {
			__sync_fetch_and_add(&sf_orphans_killed, 1);
			bpf_send_signal(SIGKILL);
		}
	}
	if (bpf_map_delete_elem(&sf_orphans, &tid) == 0)
		__sync_fetch_and_add(&sf_orphans_pending, -1);
	return s;
}

/* After the chain the arm brings is in s->chain, if it is to be kept:
 * the task never looks chainless to settle() on another CPU meanwhile
 * (stores leave in program order on x86; the barrier keeps the compiler's
 * order too). */
static __always_inline void disarm(struct sf_task *s)
{
	asm volatile("" ::: "memory");
	if (s->armed) {
		s->armed = 0;
		__sync_fetch_and_add(&sf_armed, -1);
	}
}

/* The recv that brings sf_attach()'s reply: on the caller's socket. */
static __always_inline bool reply_recv(__u32 nr, struct pt_regs *regs, __s32 fd,
				       bool compat)
{
	if (compat)
		return (nr == SF_NR_I386_RECVFROM || nr == SF_NR_I386_RECVMSG) &&
		       (__s32)regs->bx == fd;
	return (nr == SF_NR_RECVFROM || nr == SF_NR_RECVMSG) && (__s32)regs->di == fd;
}

/* The tail call into a chain, by slot. A tail call whose key the verifier
 * cannot know is an indirect jump, through a retpoline where the kernel
 * mitigates Spectre v2 that way: 60-90 ns on this project's 6.18 machines,
 * most of what running a short filter costs. One call site per slot, each
 * with a constant key (bpf_tail_call_static()), lets the JIT emit direct
 * jumps that the kernel patches when a slot changes (prog array pokes);
 * reaching the right one is a compare tree of log2(SF_MAX_CHAINS) steps.
 * Returns only when the slot is empty. */
_Static_assert(SF_MAX_CHAINS == 256, "tail_call_chain() covers 256 slots");
/* Slot 0 is sf_enforce's, never a chain's: its case is empty. */
#define TC1(n)  case (n): if ((n) != SF_SLOT_ENFORCE) \
			bpf_tail_call_static(ctx, &sf_progs, (n)); break;
#define TC4(n)  TC1(n) TC1((n) + 1) TC1((n) + 2) TC1((n) + 3)
#define TC16(n) TC4(n) TC4((n) + 4) TC4((n) + 8) TC4((n) + 12)
#define TC64(n) TC16(n) TC16((n) + 16) TC16((n) + 32) TC16((n) + 48)
static __always_inline void tail_call_chain(void *ctx, __u32 chain)
{
	switch (chain) {
	TC64(0) TC64(64) TC64(128) TC64(192)
	}
}

SEC("tp_btf/sys_enter")
int BPF_PROG(sf_dispatch, struct pt_regs *regs, long id)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct sf_task *s;
	struct sf_const *c;
	__u32 chain, nr = (__u32)id, key;

	s = tracked(t);
	if (!s) {
		if (!sf_orphans_pending)
			return 0;
		s = adopt_orphan(t);
		if (!s)
			return 0;
	}
	if (s->deny)
		s->deny = 0;
	if (sf_stopped || s->at_exec)
		return 0;
	chain = s->chain;
	if (s->armed) {
		/* sfilterd armed the chain during sf_attach(). Its caller's
		 * recv of the reply on its socket to sfilterd is the last
		 * call under the old chain, as seccomp(2)'s caller makes none
		 * after the install; every other call, this one included,
		 * runs under the new chain. Where sf_reply_* are attached,
		 * that recv keeps the arm and decides it when it returns (a
		 * reply read: in force; the daemon gone: dropped, as the
		 * caller is told it failed); else the chain is in force from
		 * here. */
		__u32 next = s->armed;
		bool compat = task_compat(t);
		bool reply = reply_recv(nr, regs, s->armed_fd, compat);

		if (!reply || !(compat ? sf_reply_exit_i386 : sf_reply_exit)) {
			s->chain = next;
			disarm(s);
		}
		if (!reply)
			chain = next;
	}
	if (!chain || chain >= SF_MAX_CHAINS)
		return 0;

	if (task_compat(t))
		key = SF_ARCH_I386 * SF_TABLE_NR + nr;
	else if (nr & SF_X32_BIT) {
		nr &= ~SF_X32_BIT;
		key = SF_ARCH_X32 * SF_TABLE_NR + nr;
	} else {
		key = SF_ARCH_X86_64 * SF_TABLE_NR + nr;
	}
	if (nr < SF_TABLE_NR) {
		key += chain * SF_TABLE_PER_CHAIN;
		c = bpf_map_lookup_elem(&sf_table, &key);
		if (c && c->kind == SF_CONST_VALUE) {
			if ((c->ret & RET_ACTION_FULL) == RET_ALLOW)
				return 0;
			s->ret = c->ret;
			s->filter_id = c->filter_id;
			s->flags = c->flags;
			s->cfilter_id = 0;
			s->sfilter_id = 0;
			bpf_tail_call_static(ctx, &sf_progs, SF_SLOT_ENFORCE);
			goto fail;
		}
	}
	tail_call_chain(ctx, chain);
fail:
	/* No program in the slot: fail closed, unless the runtime is being
	 * torn down (then nothing is judged any more). */
	if (sf_stopped)
		return 0;
	__sync_fetch_and_add(&sf_tailcall_failed, 1);
	bpf_send_signal(SIGKILL);
	return 0;
}

/* The recv of sf_attach()'s reply, on socket fd, has returned (an i386
 * call only where sf_reply_exit_tp runs; else a compat task takes the arm
 * at its recv's entry). ret > 0: the reply was read,
 * the chain is in force from the next call. 0 or an error: the daemon went
 * away before replying, and the caller returns failure: the arm is dropped,
 * so that what the caller is told is what holds. Interrupted: the arm
 * waits for the restarted recv (or for another call, which takes it). */
static __always_inline void reply_done(__s32 fd, long ret)
{
	struct sf_task *s = tracked(bpf_get_current_task_btf());

	if (!s || !s->armed || sf_stopped || fd != s->armed_fd)
		return;
	if (ret > 0) {
		s->chain = s->armed;
		disarm(s);
	} else if (ret != -EINTR && ret != -EAGAIN && ret != -ERESTARTSYS &&
		   ret != -ERESTARTNOINTR && ret != -ERESTARTNOHAND &&
		   ret != -ERESTART_RESTARTBLOCK) {
		disarm(s);
		settle(s); /* a first filter's arm, dropped: no chain left */
	}
}

SEC("fexit/__x64_sys_recvfrom")
int BPF_PROG(sf_reply_recvfrom, struct pt_regs *regs, long ret)
{
	reply_done((__s32)regs->di, ret);
	return 0;
}

SEC("fexit/__x64_sys_recvmsg")
int BPF_PROG(sf_reply_recvmsg, struct pt_regs *regs, long ret)
{
	reply_done((__s32)regs->di, ret);
	return 0;
}

/* The same where the kernel refuses fexit programs (no BPF trampolines):
 * at every syscall's exit, but past one load while no task is armed. */
SEC("tp_btf/sys_exit")
int BPF_PROG(sf_reply_exit_tp, struct pt_regs *regs, long ret)
{
	long nr;

	if (!sf_armed)
		return 0;
	nr = regs->orig_ax;
	if (task_compat(bpf_get_current_task_btf())) {
		if (nr == SF_NR_I386_RECVFROM || nr == SF_NR_I386_RECVMSG)
			reply_done((__s32)regs->bx, (int)ret);
	} else if (nr == SF_NR_RECVFROM || nr == SF_NR_RECVMSG) {
		reply_done((__s32)regs->di, ret);
	}
	return 0;
}

#include "events.bpf.h"

/* bench/syscall_cost only: the sf_stats update made twice, to time one. */
__u32 sf_bench_stats_twice;

static __always_inline void emit_event_v(struct task_struct *t,
					 struct pt_regs *regs, long id, struct who *w,
					 __u32 ret, __u32 filter_id, __u16 flags,
					 __u16 taken, __u16 err, __u8 sig,
					 __u32 enforced, __u32 insn)
{
	__u32 cls = SF_EV_CLASS(taken);
	__u32 arch = task_compat(t) ? SF_AUDIT_ARCH_I386 : SF_AUDIT_ARCH_X86_64;
	struct agg_what aw = { .ret = ret, .filter_id = filter_id, .flags = flags,
			       .taken = taken, .err = err, .sig = sig };
	struct sf_stat_key k = {};
	__u64 one = 1, *c, total, first;
	struct sf_event *e;

	k.cgroup = bpf_get_current_cgroup_id();
	k.filter_id = filter_id;
	k.nr = (__s32)id;
	k.arch = arch;
	k.ret = ret;
	k.taken = taken;
	c = bpf_map_lookup_elem(&sf_stats, &k);
	if (c)
		__sync_fetch_and_add(c, 1);
	else if (bpf_map_update_elem(&sf_stats, &k, &one, BPF_NOEXIST) &&
		 (c = bpf_map_lookup_elem(&sf_stats, &k)))
		/* Another CPU made it first. */
		__sync_fetch_and_add(c, 1);
	if (sf_bench_stats_twice) {
		k.cgroup = bpf_get_current_cgroup_id();
		if ((c = bpf_map_lookup_elem(&sf_stats, &k)))
			__sync_fetch_and_add(c, 1);
	}
	/* Folded calls take no budget: only the events made do. */
	if (!agg_admit(t, w, id, arch, &aw, &total, &first))
		return;
	e = bpf_ringbuf_reserve(&sf_events, sizeof(*e), 0);
	if (!e) {
		if (w->a)
			__sync_fetch_and_add(&w->a->ring_dropped[cls & 1], 1);
		__sync_fetch_and_add(&sf_events_dropped, 1);
		return;
	}
	e->time_ns = bpf_ktime_get_boot_ns();
	e->pid = t->tgid;
	e->tid = t->pid;
	e->uid = (__u32)bpf_get_current_uid_gid();
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	e->nr = (__s32)id;
	e->ip = regs->ip;
	/* The same registers populate_seccomp_data() reads
	 * (syscall_get_arguments()). */
	if (task_compat(t)) {
		e->arch = SF_AUDIT_ARCH_I386;
		e->args[0] = (__u32)regs->bx;
		e->args[1] = (__u32)regs->cx;
		e->args[2] = (__u32)regs->dx;
		e->args[3] = (__u32)regs->si;
		e->args[4] = (__u32)regs->di;
		e->args[5] = (__u32)regs->bp;
	} else {
		e->arch = SF_AUDIT_ARCH_X86_64;
		e->args[0] = regs->di;
		e->args[1] = regs->si;
		e->args[2] = regs->dx;
		e->args[3] = regs->r10;
		e->args[4] = regs->r8;
		e->args[5] = regs->r9;
	}
	e->ret = ret;
	e->filter_id = filter_id;
	e->taken = taken;
	e->tier = sf_tier;
	e->flags = flags;
	e->err = err;
	e->signal = sig;
	e->repeat = 0;
	__builtin_memset(e->pad, 0, sizeof(e->pad));
	e->enforced = enforced;
	e->insn = insn;
	e->account = w->account;
	e->count = 0;
	e->start_ns = BPF_CORE_READ(t, group_leader, start_boottime);
	e->exec_id = BPF_CORE_READ(t, self_exec_id);
	e->agg_total = total;
	e->agg_first = first;
	bpf_ringbuf_submit(e, 0);
}

SEC("tp_btf/sys_enter")
int BPF_PROG(sf_enforce, struct pt_regs *regs, long id)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct sf_task *s = bpf_task_storage_get(&sf_tasks, t, 0, 0);
	__u32 ret, action, data;
	__u16 err = 0, taken;
	__u8 sig = 0;
	struct who w;

	if (!s)
		return 0;
	ret = s->ret;
	action = ret & RET_ACTION_FULL;
	data = ret & RET_DATA;
	if (action == RET_ALLOW && !s->cfilter_id && !s->sfilter_id)
		return 0;
	who_of(t, &w);
	if (s->cfilter_id) {
		/* A complain filter would have decided otherwise: log only. */
		emit_event_v(t, regs, id, &w, s->cret, s->cfilter_id,
			     SF_FLAG_COMPLAIN, SF_TAKEN_COMPLAIN, 0, 0, ret,
			     SF_INSN_NONE);
		s->cfilter_id = 0;
	}
	if (s->sfilter_id) {
		/* A shadow filter would have decided otherwise than what is
		 * enforced below: log only. */
		emit_event_v(t, regs, id, &w, s->sret, s->sfilter_id,
			     SF_FLAG_SHADOW, SF_TAKEN_SHADOW, 0, 0, ret, s->sinsn);
		s->sfilter_id = 0;
	}

	switch (action) {
	case RET_ALLOW:
		return 0;
	case RET_LOG:
		taken = SF_TAKEN_LOGGED;
		break;
	case RET_ERRNO:
	case RET_TRAP:
	case RET_TRACE:
	case RET_USER_NOTIF:
		if (sf_tier == SF_BPF_TIER_LSM) {
			if (action == RET_ERRNO)
				/* ERRNO(0) cannot be "return 0 without running"
				 * here: refuse with EPERM so nothing lands. */
				err = data > MAX_ERRNO ? MAX_ERRNO :
				      data ? data : EPERM;
			else
				err = ENOSYS;
			s->deny = err;
			if (action == RET_TRAP) {
				bpf_send_signal(SIGSYS);
				sig = SIGSYS;
			}
			taken = SF_TAKEN_DENIED;
			break;
		}
		if (s->flags & SF_FLAG_FALLBACK_LOG) {
			taken = SF_TAKEN_FALLBACK_LOGGED;
			break;
		}
		bpf_send_signal(SIGKILL);
		taken = SF_TAKEN_FALLBACK_KILLED;
		sig = SIGKILL;
		break;
	default:
		/* KILL_PROCESS, KILL_THREAD and unknown actions (which the
		 * kernel treats as KILL_PROCESS). SIGKILL: a catchable SIGSYS
		 * would let the task survive. */
		if (sf_tier == SF_BPF_TIER_LSM) {
			s->deny = EPERM;
			err = EPERM;
		}
		bpf_send_signal(SIGKILL);
		taken = SF_TAKEN_KILLED;
		sig = SIGKILL;
		break;
	}
	emit_event_v(t, regs, id, &w, ret, s->filter_id, s->flags, taken, err, sig, ret,
		     SF_INSN_NONE);
	return 0;
}

/* Cgroup joins, fork, exec and the task iterator. */
#include "tasks.bpf.h"

/* ---- lsm tier ------------------------------------------------------------
 * BPF LSM programs attach in "modify return" mode: the first non-zero return
 * ends the hook, so an earlier program's refusal never reaches these, and
 * none of them needs the hook's arguments (whose lists differ between
 * kernel versions). Hooks the running kernel lacks are not loaded
 * (loader/runtime/open.c checks vmlinux BTF for bpf_lsm_<hook>).
 */
static __always_inline int denied(void)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct sf_task *s = tracked(t);
	__u32 err;

	/* A task whose chain was taken away (detached, then idle) keeps the
	 * mark of its last denied call until its next sys_enter, which no
	 * dispatcher may see: unconfined, it is refused nothing. */
	if (!s || !s->chain)
		return 0;
	err = s->deny;
	if (!err || sf_stopped)
		return 0;
	if (err > MAX_ERRNO)
		err = MAX_ERRNO;
	return -(int)err;
}

#define SF_LSM(hook)                                                      \
	SEC("lsm/" #hook)                                                 \
	int sf_lsm_##hook(unsigned long long *ctx)                        \
	{                                                                 \
		return denied();                                          \
	}

/* files: open/create, read/write, metadata, links, directories */
SF_LSM(file_open)
SF_LSM(file_permission)
SF_LSM(file_truncate)
SF_LSM(file_ioctl)
SF_LSM(file_lock)
SF_LSM(file_fcntl)
SF_LSM(file_mprotect)
SF_LSM(mmap_file)
SF_LSM(inode_create)
SF_LSM(inode_link)
SF_LSM(inode_unlink)
SF_LSM(inode_symlink)
SF_LSM(inode_mkdir)
SF_LSM(inode_rmdir)
SF_LSM(inode_mknod)
SF_LSM(inode_rename)
SF_LSM(inode_setattr)
SF_LSM(inode_setxattr)
SF_LSM(inode_removexattr)
SF_LSM(inode_getattr)
SF_LSM(path_truncate)
SF_LSM(path_chmod)
SF_LSM(path_chown)
SF_LSM(path_chroot)
/* mounts */
SF_LSM(sb_mount)
SF_LSM(sb_umount)
SF_LSM(sb_pivotroot)
SF_LSM(move_mount)
/* sockets */
SF_LSM(socket_create)
SF_LSM(socket_connect)
SF_LSM(socket_bind)
SF_LSM(socket_listen)
SF_LSM(socket_accept)
SF_LSM(socket_sendmsg)
SF_LSM(socket_recvmsg)
SF_LSM(socket_setsockopt)
SF_LSM(socket_shutdown)
/* tasks: fork, exec, signals, ptrace, credentials, scheduling */
SF_LSM(task_alloc)
SF_LSM(bprm_check_security)
SF_LSM(task_kill)
SF_LSM(ptrace_access_check)
SF_LSM(ptrace_traceme)
SF_LSM(task_fix_setuid)
SF_LSM(task_fix_setgid)
SF_LSM(task_setnice)
SF_LSM(task_setscheduler)
SF_LSM(task_setrlimit)
SF_LSM(task_prctl)
SF_LSM(settime)
/* IPC, keys, bpf, namespaces */
SF_LSM(ipc_permission)
SF_LSM(msg_queue_msgsnd)
SF_LSM(shm_shmat)
SF_LSM(sem_semop)
SF_LSM(key_alloc)
SF_LSM(bpf)
SF_LSM(userns_create)
