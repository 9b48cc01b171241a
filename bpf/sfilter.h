/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Types and constants shared by the BPF side (bpf/sfilter.bpf.c and the
 * chain programs loader/runtime/chain_emit.c generates) and user space.
 * Included from BPF C (after vmlinux.h) and from user C (after <linux/types.h>).
 */
#ifndef SF_SFILTER_H
#define SF_SFILTER_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/*
 * PROG_ARRAY slots: slot 0 is the enforce program, slots 1.. hold one
 * generated chain program each. A task whose chain is 0 is untracked.
 */
#define SF_SLOT_ENFORCE 0
#define SF_MAX_CHAINS   256

/* What user space and the pinned BPF objects must agree on: the layout of
 * the maps' values and the meaning of sf_pending. A runtime refuses to
 * adopt pins of another ABI (their filters stay in force). Bump on any
 * change to a struct below or to what a program does with it.
 * 2: sf_task.armed, sf_event.uid, SF_PENDING_ARM/SETTLE.
 * 3: .bss sf_stopped (teardown), sf_iter_rec.old.
 * 4: sf_task.armed_fd, guarded pending entries, sf_orphans, sf_tsync.
 * 5: the reply's recv decides the arm at its exit (sf_reply_exit).
 * 6: 2012-interface filters (SF_FLAG_RFC*, SF_GUARD_IMAGE/CAP), i386
 *    reply recvs (sf_reply_exit_i386).
 * 7: shadow filters (sf_task.s*, sf_event.enforced/insn, SF_TAKEN_SHADOW),
 *    hit counts (sf_hits).
 * 8: arm at exec (sf_task.at_exec, sf_orphan.at_exec, sf_iter_rec.at_exec,
 *    SF_PENDING_EXEC, sf_exec).
 * 9: confined tasks counted in the kernel (sf_task.live, sf_live,
 *    sf_handing, sf_exit), sf_task.prev and SF_PENDING_BACK, sf_tsync
 *    values carry SF_PENDING_EXEC; cgroups attached at exec
 *    (sf_cg.at_exec); sf_exec gives a task with no chain its cgroup's,
 *    while sf_cg_attached.
 * 9: event budgets (sf_accounts, struct sf_acct, .bss sf_ev_*, ring room
 *    per kind SF_EVENTS_*_MAX), the process identity of an event
 *    (sf_event.account/start_ns/exec_id).
 * 10: the gate: sf_iter_rec.armed_fd, leader_boot, gated, uid, account; SF_BPF_TIER_GATE events (made by
 *    sfilterd, never by the BPF side).
 * 11: counters for metrics (sf_stats, struct sf_stat_key).
 * 12: repeats folded in the kernel (sf_agg, struct sf_agg_key/val, .bss
 *    sf_agg_interval_ns and sf_agg_folded; sf_event.repeat, count,
 *    agg_total, agg_first); .bss sf_bench_stats_twice (bench/syscall_cost).
 * 13: events made in user space charged to the budgets (sf_charge, struct
 *    sf_charge); the listeners sfilterd holds (sf_gate_filters,
 *    sf_iter_listeners, .bss sf_listeners_*), sf_iter_rec.gated SF_GATED_*. */
#define SF_ABI_VERSION  13

/* How far above the cgroup a task enters the BPF side looks for an
 * attached one (a bounded loop); user space walks the same depth. */
#define SF_CG_MAX_DEPTH 32

/* The action table: for every chain slot, 3 arches x 512 syscall numbers. */
#define SF_TABLE_NR    512
#define SF_ARCH_X86_64 0  /* AUDIT_ARCH_X86_64, nr < 512 */
#define SF_ARCH_I386   1  /* AUDIT_ARCH_I386 (TS_COMPAT), nr < 512 */
#define SF_ARCH_X32    2  /* AUDIT_ARCH_X86_64, nr = 0x40000000 | n */
#define SF_TABLE_ARCHES 3
#define SF_TABLE_PER_CHAIN (SF_TABLE_ARCHES * SF_TABLE_NR)

#define SF_TS_COMPAT   0x2        /* thread_info.status bit (x86) */
/* The UAPI's __X32_SYSCALL_BIT and AUDIT_ARCH_*, written out for the BPF
 * side (vmlinux.h carries no macros); user space uses the UAPI's own, and
 * loader/runtime/chain_emit.c asserts these equal them. */
#define SF_X32_BIT     0x40000000
#define SF_AUDIT_ARCH_X86_64 0xc000003eU
#define SF_AUDIT_ARCH_I386   0x40000003U

/* Attach flags. The ones a program may ask (sf_attach()) are set in
 * sfilter_flags.h, which the public client header includes too; the rest
 * are set here. The runtime's and the protocol's SF_ATTACH_* are these. */
#include "sfilter_flags.h"
#define SF_FLAG_TSYNC        SF_ATTACH_TSYNC        /* (user side) */
#define SF_FLAG_LOG          SF_ATTACH_LOG
#define SF_FLAG_FALLBACK_LOG SF_ATTACH_FALLBACK_LOG /* an action the tier cannot reproduce logs */
#define SF_FLAG_COMPLAIN     0x200 /* verdict logged, never enforced (admin) */
/* The 2012 interface (PR_ATTACH_SECCOMP_FILTER): the filter runs over
 * struct user_regs_struct, not struct seccomp_data. RFC_I386 records that
 * it was attached through the i386 ABI (the 68-byte layout; else the
 * 216-byte x86-64 one): calls through the other ABI are blocked. RFC_EXEC
 * marks it inheritable across execve: attached with CAP_SYS_ADMIN, which
 * the attach step checks in the kernel. */
#define SF_FLAG_RFC2012      0x400
#define SF_FLAG_RFC_I386     0x800
#define SF_FLAG_RFC_EXEC     0x1000
#define SF_FLAGS_RFC   (SF_FLAG_RFC2012 | SF_FLAG_RFC_I386 | SF_FLAG_RFC_EXEC)
/* A candidate filter run beside the enforced ones: it never decides; a
 * verdict that differs from the one enforced is logged with the classic
 * index of the candidate's ret (admin). */
#define SF_FLAG_SHADOW       0x2000
/* Count, per CPU, how often each of the filter's rets is taken (sf_hits,
 * from the base the runtime gives the filter); the chain then skips the
 * action table (admin). */
#define SF_FLAG_COUNT        0x4000
/* Arm at exec: the filter is put on the task now but judges nothing until
 * the task's next successful execve (children forked meanwhile wait for
 * their own). For a task with no filter, or one whose filters all wait
 * for its exec: a task already judged is never suspended (admin). */
#define SF_FLAG_AT_EXEC      0x8000
/* Neither applies to a 2012-interface filter, and shadow excludes complain. */
#define SF_FLAGS_SIDE_OK(f) (!((f) & (SF_FLAG_SHADOW | SF_FLAG_COUNT)) || \
			     (!((f) & SF_FLAG_RFC2012) && \
			      ((f) & (SF_FLAG_SHADOW | SF_FLAG_COMPLAIN)) != \
			      (SF_FLAG_SHADOW | SF_FLAG_COMPLAIN)))
/* What sf_attach() may ask, what sf_prctl_attach() may add, and what an
 * admin may ask. */
#define SF_FLAGS_SELF  (SF_FLAG_TSYNC | SF_FLAG_LOG | SF_FLAG_FALLBACK_LOG)
/* On an ATTACH only, set by libsfclient, never a filter's: the sender has
 * installed a gate built from this very filter (its calls the filter does
 * not allow in the kernel go up to sfilterd), with TSYNC when the attach
 * has it. Its one effect: sfilterd may answer before the chain's program
 * is verified (docs/security.md, "A new chain's stand-in"). */
#define SF_FLAG_GATED        0x100000
#define SF_FLAGS_ADMIN (SF_FLAGS_SELF | SF_FLAG_COMPLAIN | SF_FLAGS_RFC | \
			SF_FLAG_SHADOW | SF_FLAG_COUNT | SF_FLAG_AT_EXEC)
/* The filter ABI of a filter's flags: 0 seccomp_data, 1 x86-64 user_regs,
 * 2 i386 user_regs (classic2ebpf's enum c2e_abi, asserted in the runtime). */
#define SF_FLAGS_ABI(f) (!((f) & SF_FLAG_RFC2012) ? 0 : ((f) & SF_FLAG_RFC_I386) ? 2 : 1)
/* RFC_I386 and RFC_EXEC mean nothing without RFC2012. */
#define SF_FLAGS_RFC_OK(f) (((f) & SF_FLAG_RFC2012) || !((f) & SF_FLAGS_RFC))

/*
 * Per-task state, in a BPF_MAP_TYPE_TASK_STORAGE map (56 bytes). A task
 * has an entry once it has been given a chain (or inherited one); the
 * entry goes away with the task.
 */
struct sf_task {
	__u32 chain;     /* PROG_ARRAY slot of the task's chain, 0 = none */
	__u32 ret;       /* the current syscall's verdict (action | data) */
	__u32 filter_id; /* the filter that decided ret (0: none, ALLOW) */
	__u16 flags;     /* that filter's attach flags (SF_FLAG_*) */
	__u16 deny;      /* lsm tier: errno the LSM hooks return for the
			    current syscall; 0 = not denied. Cleared at the
			    next sys_enter. */
	__u32 cret;      /* complain filters' verdict for this syscall */
	__u32 cfilter_id;/* the complain filter that decided cret; 0: no
			    complain event pending (cleared by sf_enforce) */
	__u32 armed;     /* sf_attach() in progress: the chain the task takes
			    at its next sys_enter. A recvfrom/recvmsg on
			    armed_fd there (the one bringing sf_attach()'s
			    reply) still runs under the old chain; any other
			    call runs under this one. 0 = none. */
	__s32 armed_fd;  /* the caller's socket to sfilterd */
	__u32 sret;      /* a shadow filter's verdict that differs from ret */
	__u32 sfilter_id;/* that shadow filter; 0: no shadow event pending
			    (cleared by sf_enforce) */
	__u32 sinsn;     /* the classic index of its ret */
	__u32 at_exec;   /* chain judges nothing until the task's next
			    successful execve (SF_FLAG_AT_EXEC); inherited
			    at fork; cleared by sf_exec */
	__u32 live;      /* SF_LIVE_*: whether sf_live counts this task;
			    changed by atomic compare-and-swap only */
	__u32 prev;      /* TSYNC: the chain the task had before the attach
			    moved it (or, born during the attach, the one its
			    creator had): where a failed attach puts it back
			    (SF_PENDING_BACK) */
};
/* sf_task.live: the task is counted in sf_live (it has a chain, or an
 * arm); it has exited (do_exit(): it makes no more system calls, so it
 * counts no more whatever its chain). */
#define SF_LIVE_COUNTED 0x1
#define SF_LIVE_EXITED  0x2

/* x86_64 and i386 numbers of the calls sf_attach() waits for its reply in
 * (a 32-bit client calls recvmsg directly, never through socketcall). */
#define SF_NR_RECVFROM 45
#define SF_NR_RECVMSG  47
#define SF_NR_I386_RECVFROM 371
#define SF_NR_I386_RECVMSG  372

/* The chain a task is under, or will be from its next syscall. */
#define SF_TASK_CHAIN(s) ((s)->armed ? (s)->armed : (s)->chain)

/* An action table entry; the zeroed default means "run the chain". */
#define SF_CONST_RUN   0
#define SF_CONST_VALUE 1
struct sf_const {
	__u32 ret;
	__u32 filter_id;
	__u16 flags;
	__u16 kind;      /* SF_CONST_RUN or SF_CONST_VALUE */
	__u32 pad;       /* mmapable arrays use an 8-byte stride anyway */
};

/* What the enforce program did about a verdict. */
enum sf_taken {
	SF_TAKEN_NONE = 0,
	SF_TAKEN_KILLED = 1,         /* KILL_PROCESS, KILL_THREAD, unknown: SIGKILL */
	SF_TAKEN_LOGGED = 2,         /* LOG: logged and allowed */
	SF_TAKEN_DENIED = 3,         /* lsm tier: hooks refuse with errno */
	SF_TAKEN_FALLBACK_KILLED = 4,/* tracepoint tier, fallback kill */
	SF_TAKEN_FALLBACK_LOGGED = 5,/* tracepoint tier, fallback log: allowed */
	SF_TAKEN_COMPLAIN = 6,       /* complain filter: logged, not enforced */
	SF_TAKEN_SHADOW = 7,         /* shadow filter: would have decided ret
					where enforced was decided */
	SF_TAKEN_TRAPPED = 8,        /* gate: skipped, SIGSYS sent */
};

/* Tier values as the BPF side reports them (runtime.h's enum sf_tier). */
#define SF_BPF_TIER_TRACEPOINT 0
#define SF_BPF_TIER_LSM        1
/* Not the BPF side's: sfilterd judged a call its gate sent up (the call
 * never ran, so the dispatcher never saw it). */
#define SF_BPF_TIER_GATE       2

/* One ring buffer record: every deny and every LOG, within its account's
 * budget (struct sf_acct below). */
struct sf_event {
	__u64 time_ns;    /* bpf_ktime_get_boot_ns() */
	__u32 pid;        /* tgid */
	__u32 tid;
	char comm[16];
	__s32 nr;         /* as the filter saw it (x32 bit included) */
	__u32 arch;       /* AUDIT_ARCH_* */
	__u64 args[6];
	__u64 ip;
	__u32 ret;        /* the chain's verdict, action | data */
	__u32 filter_id;  /* the filter that decided it */
	__u16 taken;      /* enum sf_taken */
	__u16 tier;       /* SF_BPF_TIER_* */
	__u16 flags;      /* the deciding filter's attach flags */
	__u16 err;        /* lsm tier: errno the hooks return; else 0 */
	__u8 signal;      /* signal sent (9, 31) or 0 */
	__u8 repeat;      /* made by sfilterd from sf_agg: calls of one key
			     that no event carried (args, ip, tid, exec_id
			     and the shadow's enforced verdict are unknown) */
	__u8 pad[2];
	__u32 uid;        /* the task's real uid when it made the call: who
			     may read the event */
	__u32 enforced;   /* SF_TAKEN_SHADOW: the verdict enforced (else ret) */
	__u32 insn;       /* SF_TAKEN_SHADOW: the classic index of the shadow
			     filter's ret (its length: the implicit return 0);
			     else SF_INSN_NONE */
	__u32 account;    /* whose event budget it was charged to (struct
			     sf_acct): the login user */
	__u32 count;      /* written by the consumer: the calls this event
			     stands for, as agg_total minus what earlier
			     events of its key carried (0 when unfolded) */
	__u64 start_ns;   /* its thread-group leader's start_boottime (the
			     clock of time_ns): with pid, the process; a
			     reused pid has another (de_thread() keeps it
			     across exec) */
	__u64 exec_id;    /* task->self_exec_id: which image of the process
			     (every execve bumps it) */
	__u64 agg_total;  /* folded kinds: the calls of its sf_agg key so far,
			     this one included; 0: not folded */
	__u64 agg_first;  /* when that sf_agg entry was made (an entry
			     evicted and made again counts from 1 anew) */
};
#define SF_INSN_NONE 0xffffffffU

/*
 * Repeats folded in the kernel. The calls that make events of a kind that
 * is only refused or logged (not a kill) are counted per key: the process
 * (its leader's start and tgid), the deciding filter, syscall, arch,
 * verdict and what was done. The first call of a key makes its event at
 * once; the key's calls in the sf_agg_interval_ns after it only count
 * (sf_agg_folded); the first call after that makes an event again, and so
 * on. An event carries its key's total so far, so a dropped event or two
 * CPUs racing lose no count: the consumer writes each event's count as the
 * difference from what the key's events carried before, and walks sf_agg
 * for keys whose interval is over with calls no event carried (a "repeat"
 * event). An entry evicted from the LRU loses what no event carried yet.
 */
#define SF_AGG_MAX 16384
#define SF_AGG_FOLDS(taken) ((taken) != SF_TAKEN_KILLED && \
			     (taken) != SF_TAKEN_FALLBACK_KILLED)
struct sf_agg_key {
	__u64 start_ns;   /* the thread-group leader's start_boottime */
	__u32 tgid;
	__u32 filter_id;
	__s32 nr;
	__u32 arch;
	__u32 ret;
	__u16 taken;
	__u16 pad;
};
struct sf_agg_val {
	__u64 next_ns;    /* bpf_ktime_get_ns(): until then calls only count */
	__u64 total;      /* the key's calls so far */
	__u64 first_ns;   /* when the entry was made (bpf_ktime_get_ns()) */
	__u32 uid;        /* as sf_event, from the key's first call */
	__u32 account;
	__u16 flags;
	__u16 tier;
	__u16 err;
	__u8 signal;
	__u8 pad;
	char comm[16];
};

/*
 * Event budgets. Every event is charged to an account: the login user of
 * the task that made the call, which is its real uid, or for a task in a
 * user namespace the uid that created the outermost one below the initial
 * namespace (a user's containers, and the 65,536 subuids they run as, are
 * that user's). Each account may have SF_EV_* events logged at a rate, in
 * bursts of a bounded size, per class: a flood of calls that are only
 * logged never uses up what the same user's denials and kills may log.
 * Events that are only logged are moreover kept out of the upper half of
 * the ring buffer, which stays for denials and kills, and denials out of
 * its last quarter, which stays for kills. sf_accounts, an LRU
 * hash (account -> struct sf_acct), also counts what each account lost.
 */
#define SF_EV_ENFORCED 0  /* killed, denied, fallback-killed */
#define SF_EV_LOGGED   1  /* logged, fallback-logged, complain, shadow */
#define SF_EV_CLASSES  2
#define SF_EV_CLASS(taken) ((taken) == SF_TAKEN_KILLED || (taken) == SF_TAKEN_DENIED || \
			    (taken) == SF_TAKEN_FALLBACK_KILLED ? SF_EV_ENFORCED : SF_EV_LOGGED)
#define SF_ACCOUNTS_MAX   16384
#define SF_EVENTS_BYTES   (1U << 20)   /* the ring buffer sf_events */
/* How full the ring may be for an event of a call only logged to go in,
 * and for a denial: the first half for anything, the next quarter for
 * denials and kills, the last for kills alone. */
#define SF_EVENTS_LOGGED_MAX (SF_EVENTS_BYTES / 2)
#define SF_EVENTS_DENIED_MAX (SF_EVENTS_BYTES / 4 * 3)
/* How deep user namespaces nest: create_user_ns() refuses a parent whose
 * level is above 32. */
#define SF_USERNS_MAX_LEVEL 33
struct sf_acct {
	__u64 tat[SF_EV_CLASSES];     /* per class, the generic cell rate
					 algorithm's theoretical arrival time
					 (bpf_ktime_get_ns()): each event moves
					 it one interval on; an event that would
					 put it more than the window ahead of
					 now is dropped */
	__u64 budget_dropped[SF_EV_CLASSES]; /* events over the budget */
	__u64 ring_dropped[SF_EV_CLASSES];   /* events within it that found no
						room in the ring buffer */
};

/* Events sfilterd makes itself (repeat events, the gate's events) take
 * from the same budgets: the program sf_charge, run by BPF_PROG_TEST_RUN
 * with this as its context, charges n events of class cls to account and
 * returns how many fit. With drop, the rest are counted lost over the
 * budget, as the kernel's own; without, they are left for later. */
struct sf_charge {
	__u32 account;
	__u32 cls;   /* SF_EV_* */
	__u32 n;
	__u32 drop;
};

/* Counters for metrics: every call that makes or would make an event (a
 * denial, a kill, a LOG, a complain or shadow filter's), by cgroup (v2),
 * filter, syscall and what was done, before any budget: what the log
 * drops, these still count. Only the paths that make events count, so an
 * allowed call pays nothing. LRU: a key idle while SF_STATS_MAX newer ones
 * came starts again from 0, a counter reset to Prometheus. */
#define SF_STATS_MAX 16384
struct sf_stat_key {
	__u64 cgroup;     /* bpf_get_current_cgroup_id() */
	__u32 filter_id;
	__s32 nr;
	__u32 arch;       /* AUDIT_ARCH_* */
	__u32 ret;        /* the deciding verdict (shadow: the would-be one) */
	__u16 taken;      /* enum sf_taken */
	__u16 pad;
	__u32 pad2;
};

/* Hit counters: one per-CPU __u64 per ret of every filter attached with
 * SF_FLAG_COUNT, at the filter's base + the ret's classic index (+ its
 * length: the implicit return 0). Index 0 is never a base. */
#define SF_HITS_MAX 8192

/* Iterator output: one record per task it visits. */
struct sf_iter_rec {
	__u32 tid;
	__u32 tgid;
	__u32 chain;      /* SF_TASK_CHAIN(); 0 = no chain */
	__u32 applied;    /* a pending entry for this tid was applied */
	__u32 old;        /* armed: the chain its recv may still run under
			     (sf_task.chain), which must stay loaded; else 0 */
	__u32 refused;    /* a guarded pending entry was not applied: EACCES
			     (neither no_new_privs nor CAP_SYS_ADMIN) or
			     EPERM (its process exec'd since exec_id) */
	__u64 exec_id;    /* task->self_exec_id: bumped by every execve */
	__u64 leader_start; /* its thread-group leader's start_time: with the
			       tgid, the process's identity (a reused pid has
			       another; de_thread() keeps it across exec) */
	__u32 euid;       /* its effective uid: who may see it */
	char comm[16];
	__u32 at_exec;    /* its chain waits for its next execve */
	__s32 armed_fd;   /* armed (old != 0): the socket whose recv still
			     runs under old (struct sf_task.armed_fd) */
	__u64 leader_boot;/* its leader's start_boottime (sf_event.start_ns) */
	__u32 gated;      /* SF_GATED_*: under a kernel seccomp filter with a
			     listener, sfilterd's or another's */
	__u32 uid;        /* its real uid (sf_event.uid) */
	__u32 account;    /* its login user (sf_event.account, account_of()) */
};

/* sf_iter_rec.gated. sfilterd's listeners are told from another
 * supervisor's by their filter: sf_iter_listeners, run over sfilterd's own
 * files, puts the filter of each listener it holds (the listener file's
 * private_data, a struct seccomp_filter) in sf_gate_filters. */
#define SF_GATED_NONE  0
#define SF_GATED_OURS  1
#define SF_GATED_OTHER 2
#define SF_GATE_FILTERS_MAX 16384

/* A pending change, keyed by tid: applied by the iterator only when the
 * task's chain is still expect (compare and set). */
struct sf_pending {
	__u32 chain;     /* | SF_PENDING_ARM: arm it (sf_task.armed) instead */
	__u32 expect;    /* SF_TASK_CHAIN() the task must have */
	__u32 guard;     /* SF_GUARD_*: apply only as seccomp(2) (or the
			    2012 prctl) would install for the task itself,
			    see sf_iter */
	__s32 armed_fd;  /* with SF_PENDING_ARM: sf_task.armed_fd */
	__u64 exec_id;   /* SF_GUARD_SELF: the self_exec_id the task must
			    still have (its process has not exec'd) */
	__u64 leader_start; /* the leader start_time the task's process must
			       have (0: any): never a reused pid's task */
};
#define SF_PENDING_ARM    0x80000000U
/* chain == SF_PENDING_SETTLE: an armed chain takes effect now (expect
 * is ignored). */
#define SF_PENDING_SETTLE 0x40000000U
/* | SF_PENDING_EXEC: the chain waits for the task's next execve; applied
 * only to a task with no chain or one that waits too (else EBUSY). A
 * plain entry keeps a waiting task waiting. */
#define SF_PENDING_EXEC   0x20000000U
/* chain == SF_PENDING_BACK: a task whose chain is still expect goes back
 * to sf_task.prev (a failed TSYNC undone, threads born during it too). */
#define SF_PENDING_BACK   0x10000000U
#define SF_GUARD_SELF     0x1 /* no_new_privs or CAP_SYS_ADMIN; same image */
#define SF_GUARD_IMAGE    0x2 /* same image only (the 2012 prctl: exec is
				 refused instead, unless RFC_EXEC) */
#define SF_GUARD_CAP      0x4 /* CAP_SYS_ADMIN, else EPERM (RFC_EXEC) */

/* A child of a confined task that got no task storage at fork (the
 * allocation can fail): its first syscall adopts the chain or kills it. */
struct sf_orphan {
	__u64 start_time; /* task->start_time: a later task with the same tid
			     is not this one */
	__u32 chain;
	__u32 at_exec;    /* the parent's sf_task.at_exec */
};

/*
 * Cgroup attach (sf_runtime_attach_cgroup). sf_cgroups: cgroup id (the
 * kernfs node id = inode number of the cgroup v2 directory) -> the chain
 * slot of the cgroup's own filters, given to a joining task that has no
 * chain. sf_cg_append: (cgroup, the joining task's chain) -> that chain with
 * the cgroup's filters appended, prepared by user space. A joining task
 * with a chain that has no such entry, or a joining thread group with more
 * than one thread, is recorded in sf_cg_pending (key: tid) for user space
 * (sf_runtime_process_pending).
 */
struct sf_cg {
	__u32 chain;
	__u32 at_exec;     /* every filter of chain was attached at exec: a
			      joiner with no chain, or one whose chain waits,
			      waits for its next execve (sf_task.at_exec) */
};
struct sf_cg_key {
	__u64 cgid;
	__u32 chain;
	__u32 pad;
};
struct sf_cg_pend {
	__u64 cgid;
	__u32 tgid;
	__u32 threadgroup; /* the whole thread group moved */
};

#endif
