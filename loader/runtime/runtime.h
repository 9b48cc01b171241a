/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The runtime, from user space: loads and attaches sfilter's BPF programs,
 * compiles filter chains to eBPF, gives tasks their chains, and reads the
 * event ring buffer. sfilterd is its only long-lived user; tests and
 * benchmarks use it directly.
 *
 * Conventions: prefix sf_runtime_ / SF_; 0 or -errno.
 */
#ifndef SF_RUNTIME_H
#define SF_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "sfilter.h" /* bpf/sfilter.h: types shared with the BPF side */

/* How strongly the running kernel lets us enforce (see README). */
enum sf_tier {
	SF_TIER_TRACEPOINT, /* tp_btf/sys_enter + bpf_send_signal only */
	SF_TIER_LSM,        /* plus BPF LSM hooks that refuse side effects */
};

/* Attach flags: SF_ATTACH_TSYNC, SF_ATTACH_LOG (seccomp(2)'s own),
 * SF_ATTACH_FALLBACK_LOG (what to do with an action this tier cannot
 * reproduce: ERRNO, TRAP, TRACE, USER_NOTIF on the tracepoint tier;
 * default kill, which fails closed; with it, log the event and allow the
 * call) and SF_ATTACH_KNOWN_FLAGS come from bpf/sfilter_flags.h through
 * sfilter.h, the same header the public sfclient.h includes. */

struct sf_runtime;

struct sf_runtime_opts {
	bool verbose;          /* libbpf debug output on stderr */
	bool force_tracepoint; /* do not use LSM programs even if allowed */
	/* Attach returns before a new chain's action table is computed
	 * (every syscall runs the chain until sf_runtime_fill_tables()). The
	 * table is only a cache, so this changes speed, never verdicts. */
	bool defer_tables;
	/* A new chain is loaded in its linear form (each allowlist compared
	 * key by key), which the kernel's verifier checks faster than the
	 * searched form (a binary search over the keys), so that an attach
	 * waits less; sf_runtime_upgrade_chains() swaps the searched form in
	 * later. Changes speed, never verdicts. */
	bool linear_first;
};

int sf_runtime_open(struct sf_runtime **out, const struct sf_runtime_opts *opts);
/* Unpinned: detaches everything, and confined tasks are unconfined
 * afterwards. Teardown never kills: the BPF side first stops judging
 * anyone, every program run still under way ends, and only then do the
 * links (dispatcher first) and the chains go. Pinned: leaves everything in
 * force for the next runtime to adopt. */
void sf_runtime_close(struct sf_runtime *rt);

enum sf_tier sf_runtime_tier(const struct sf_runtime *rt);
/* Why the tier is not lsm, in a few words ("" when it is). */
const char *sf_runtime_tier_reason(const struct sf_runtime *rt);
const char *sf_tier_name(enum sf_tier tier); /* "tracepoint", "lsm" */

/* What the BPF side counts instead of failing a task (since it was loaded,
 * across restarts): each is a task, event or join sfilter could not handle. */
struct sf_counters {
	uint64_t events_dropped;  /* ring buffer full: an event not logged */
	uint64_t fork_failed;     /* a child of a confined task got no task
				     storage at fork: its first syscall adopts
				     the chain, or kills it (orphans_killed) */
	uint64_t orphans_killed;  /* such children that had no storage even then */
	uint64_t tailcall_failed; /* a chain slot was empty: the task killed */
	uint64_t cg_failed;       /* a cgroup join not finished in the kernel
				     (no storage, full queue, too deep) */
	uint64_t folded;          /* not a failure: calls counted under their
				     key with no event of their own (struct
				     sf_agg_key in bpf/sfilter.h) */
	uint64_t confined;        /* not a failure: the tasks (threads) with a
				     chain or an arm that have not exited, as
				     the kernel counts them; the dispatcher
				     stays while it is not 0 */
};
void sf_runtime_counters(const struct sf_runtime *rt, struct sf_counters *out);

/*
 * A process, pinned against pid reuse: its tgid with its leader's start
 * time (a reused pid has another; de_thread() keeps it across execve), and
 * its exec id (task->self_exec_id, which every execve bumps).
 */
struct sf_identity {
	pid_t tgid;
	uint64_t leader_start;
	uint64_t exec_id;
};
/* The identity of the process pidfd refers to: 0, or -ESRCH once it has
 * exited, -EBADF when pidfd is not a pidfd, or -EOPNOTSUPP on a kernel
 * whose task iterator takes no pidfd (before 6.1). */
int sf_runtime_identify(struct sf_runtime *rt, int pidfd, struct sf_identity *out);

/* Who gets a filter. */
struct sf_target {
	pid_t tid;                   /* the thread (TSYNC: its whole process) */
	/* tid's process as identified (sf_runtime_identify()); the change
	 * is applied only to a task of that very process, in the same step
	 * that applies it (-ESRCH otherwise). NULL: the process tid is in now. */
	const struct sf_identity *process;
	/* sf_attach(): the thread asks for itself, and gets the filter only
	 * as seccomp(2) would install it: the thread (with TSYNC, every
	 * thread) has no_new_privs or CAP_SYS_ADMIN (else -EACCES), and its
	 * process has not exec'd since process->exec_id was read (else
	 * -EPERM). Judged in the step that applies the change. */
	bool self;
	/* With SF_ATTACH_ARM: the caller's socket to sfilterd, whose recv
	 * of the reply is the one call still under the old chain (-1: none). */
	int reply_fd;
	/* Where the attach's time goes, added to (NULL: not timed). */
	struct sf_spans *spans;
	/* Set when the chain the attach gave is on a stand-in
	 * (SF_ATTACH_STANDIN): its program is due (NULL: not asked). */
	bool *stood_in;
};

/* The steps of sf_runtime_attach_to(), timed for a target that asks
 * (struct sf_target's spans): so that a caller can tell which step makes
 * an attach slower than seccomp(2)'s. */
enum sf_span {
	SF_SPAN_CHECK,     /* the filter validated, unless SF_ATTACH_CHECKED */
	SF_SPAN_READ,      /* iterator passes that read the caller's thread or group */
	SF_SPAN_CHAIN,     /* the chain found (deduplicated) or a new one installed */
	SF_SPAN_DISPATCH,  /* the dispatcher (and LSM programs) attached again */
	SF_SPAN_TRANSLATE, /* a new chain's eBPF emitted */
	SF_SPAN_VERIFY,    /* its load: the kernel's verifier */
	SF_SPAN_TABLE,     /* its action table, unless deferred */
	SF_SPAN_ARM,       /* the reply programs attached for the caller's arm */
	SF_SPAN_APPLY,     /* iterator passes that apply the chain */
	SF_SPANS
};
/* CLOCK_MONOTONIC nanoseconds each step took, and how many times it ran;
 * a step that did not run is 0 in both. */
struct sf_spans {
	uint64_t ns[SF_SPANS];
	uint32_t n[SF_SPANS];
};
/* A step's name, as STATUS shows it ("validate_rt", "read", ...). */
const char *sf_runtime_span_name(enum sf_span s);

/*
 * Appends a validated copy of prog to thread tid's chain, effective from
 * that thread's next syscall and before this call returns. With
 * SF_ATTACH_TSYNC, to every thread of tid's thread group, with the
 * kernel's ancestor rule. Returns 0 and the new filter's id, or:
 *   -EINVAL  invalid filter (err, if not NULL, says where) or bad flags
 *   -ENOMEM  the chain would exceed the kernel's 32768-instruction rule
 *   -ESRCH   no such thread
 *   > 0      TSYNC only: the tid of the first thread whose chain is not
 *            an ancestor of the caller's (as seccomp(2) reports it)
 * The caller (sfilterd) decides who may attach; this function does not.
 */
struct c2e_error;
/* Whether prog may be attached with flags, as seccomp(2) validates a
 * program (classic2ebpf, for the ABI that flags select): 0, or -EINVAL
 * with *err saying which instruction and why. The attaches below run it
 * themselves unless told with SF_ATTACH_CHECKED. */
int sf_runtime_filter_check(const struct sock_fprog *prog, unsigned int flags,
			    struct c2e_error *err);
int sf_runtime_attach(struct sf_runtime *rt, pid_t tid,
		      const struct sock_fprog *prog, unsigned int flags,
		      uint32_t *filter_id, struct c2e_error *err);
/* The same for a target (struct sf_target); also -EACCES, -EPERM as said
 * there. TSYNC converges while threads come and go (a thread created
 * meanwhile is born with the new chain), and an attach that fails leaves
 * no thread moved. */
int sf_runtime_attach_to(struct sf_runtime *rt, const struct sf_target *target,
			 const struct sock_fprog *prog, unsigned int flags,
			 uint32_t *filter_id, struct c2e_error *err);

/* Computes up to max (0: all) pieces of the action tables that
 * defer_tables left for later; a piece is 64 syscall numbers of one
 * chain's table (24 make a table), computed without the runtime's lock,
 * about 40 us for a 600-instruction chain and at most about 0.1 s for any
 * chain (the analysis is bounded per number). Returns how many pieces
 * were computed (0: none was left), or -errno. */
int sf_runtime_fill_tables(struct sf_runtime *rt, int max);

/* The chains linear_first loaded in their linear form, up to max of them
 * (0: all), get their searched form: loaded without the runtime's lock,
 * then put in the chain's slot by one PROG_ARRAY update, which every tail
 * call sees whole (the slot is never empty, and both forms judge alike).
 * A searched form the kernel refuses leaves the linear one in force, said
 * on stderr. Returns how many chains were settled (0: none was due), or
 * -errno; done, when given, adds up what became of them. */
struct sf_upgrades {
	uint64_t swapped;  /* the searched form is in the slot */
	uint64_t same;     /* no allowlist long enough to search: one form */
	uint64_t kept;     /* its load failed: the linear form stays */
};
int sf_runtime_upgrade_chains(struct sf_runtime *rt, int max, struct sf_upgrades *done);

/* The chains on a stand-in (SF_ATTACH_STANDIN) get their own program,
 * loaded without the runtime's lock and swapped into the slot by one
 * PROG_ARRAY update. Returns how many were settled, or -errno (the first
 * load that failed: its chain stays on its stand-in, its gate and the
 * judge still enforcing it). sf_runtime_standins() counts those left. */
int sf_runtime_settle_standins(struct sf_runtime *rt);
int sf_runtime_standins(struct sf_runtime *rt);

/* After a cgroup attach, its chain loaded once more under a fresh id, as
 * a spare that the next cgroup attach of the same filter (below the same
 * parent) takes instead of waiting for the kernel's verification; without
 * the runtime's lock but for a look and the install (spare.c). 1 when one
 * was loaded, 0 when none was due, or -errno. */
int sf_runtime_make_spares(struct sf_runtime *rt);

/* Events (struct sf_event in bpf/sfilter.h): every deny and every LOG
 * within its account's budget. */
typedef int (*sf_event_fn)(void *ctx, const struct sf_event *ev);
int sf_runtime_event_fd(const struct sf_runtime *rt);
int sf_runtime_poll_events(struct sf_runtime *rt, int timeout_ms,
			   sf_event_fn fn, void *ctx);
/* Hands at most max (> 0) of the events ready to fn, without waiting:
 * how many it handed over (max: more may be ready), or -errno. A reader
 * that serves others too drains this way, a bounded amount at a time. */
int sf_runtime_drain_events(struct sf_runtime *rt, int max, sf_event_fn fn, void *ctx);
/* As JSON, for the event log: sf_event_to_json() in loader/proto/event_json.h. */

/* Event budgets (bpf/sfilter.h, struct sf_acct): each account (a login
 * user) may have rate events a second logged, burst of them at once, per
 * class (denials and kills; calls only logged); rate 0: no budget. A fresh
 * load starts with the defaults; the budget lives with the pinned state. */
#define SF_EVENT_RATE_DEFAULT  1000
#define SF_EVENT_BURST_DEFAULT 5000
int sf_runtime_set_event_budget(struct sf_runtime *rt, uint32_t rate, uint32_t burst);
/* n events made in user space, of class cls (SF_EV_*), charged to account's
 * budget with the kernel's own (struct sf_charge): how many of them fit, or
 * -errno. With drop, the rest count as lost over the budget. Safe from any
 * thread. */
int sf_runtime_charge_events(struct sf_runtime *rt, uint32_t account, int cls, uint32_t n,
			     bool drop);
/* Repeats folded in the kernel (bpf/sfilter.h, struct sf_agg_key): for ns
 * after an event of a key, that key's calls only count; 0 (a fresh
 * load's): every call makes its event. The consumer then owes each event
 * its count (sf_event.agg_total) and the tails (sf_runtime_agg()). */
int sf_runtime_set_repeat_interval(struct sf_runtime *rt, uint64_t ns);
uint64_t sf_runtime_repeat_interval(const struct sf_runtime *rt);
/* Every key that folded calls, into *out (malloc'd, *n of them; the caller
 * frees it). 0 or -errno. */
struct sf_agg {
	struct sf_agg_key key;
	struct sf_agg_val val;
};
int sf_runtime_agg(struct sf_runtime *rt, struct sf_agg **out, size_t *n);
/* What an account lost, per class (SF_EV_ENFORCED, SF_EV_LOGGED), since
 * its entry was made (an entry unused for long may be recycled). */
struct sf_event_drops {
	uint32_t account;
	uint64_t budget[SF_EV_CLASSES]; /* over its budget */
	uint64_t ring[SF_EV_CLASSES];   /* no room in the ring buffer */
};
/* Every account that lost events, into *out (malloc'd, *n of them; the
 * caller frees it). 0 or -errno. */
int sf_runtime_event_drops(struct sf_runtime *rt, struct sf_event_drops **out, size_t *n);

/* The kernel's counters for metrics (struct sf_stat_key in bpf/sfilter.h):
 * every call that made or would have made an event, by cgroup, filter,
 * syscall and what was done, before any budget. */
struct sf_stat {
	uint64_t cgroup;     /* cgroup v2 id */
	uint32_t filter_id;
	int32_t nr;
	uint32_t arch;       /* AUDIT_ARCH_* */
	uint32_t ret;        /* the deciding (shadow: would-be) verdict */
	uint16_t taken;      /* enum sf_taken */
	uint64_t count;
};
/* Every counter, into *out (malloc'd, *n of them; the caller frees it).
 * 0 or -errno. */
int sf_runtime_stats(struct sf_runtime *rt, struct sf_stat **out, size_t *n);
/* The same for one account: 0 (all zero when it has no entry) or -errno. */
int sf_runtime_event_drops_of(struct sf_runtime *rt, uint32_t account,
			      struct sf_event_drops *out);

/* ---- administration ------------------------------------------------------
 * The daemon decides who may call these (admins only: docs/security.md).
 */

/* Verdicts are computed and logged as events; nothing is enforced. */
#define SF_ATTACH_COMPLAIN     SF_FLAG_COMPLAIN
/* sfilterd's, for sf_attach(): the caller takes the chain at its next
 * syscall, and if that is its recv of the reply on target->reply_fd, after
 * it (see struct sf_task.armed). sf_runtime_attach_to() only; not a
 * protocol flag (ADMIN_ATTACH refuses it). */
#define SF_ATTACH_ARM          0x10000
/* sfilterd's: where the attach needs a chain program that is not loaded
 * yet, return -EINPROGRESS having changed nothing, so that the caller can
 * make the call that loads it (the kernel's verifier: milliseconds to tens
 * of them for a large filter) on a thread of its own. Not a protocol
 * flag. Without it the load still runs without the runtime's lock.
 * sf_runtime_attach_to() and sf_runtime_attach_cgroup(). */
#define SF_ATTACH_LOADED       0x20000
/* sfilterd's: the caller has validated prog with sf_runtime_filter_check()
 * for these flags (it does so first, for seccomp(2)'s order of errors), so
 * the attach does not run the validator a second time. Not a protocol
 * flag. sf_runtime_attach_to() and sf_runtime_attach_cgroup(). */
#define SF_ATTACH_CHECKED      0x40000
/* sfilterd's, with SF_ATTACH_LOADED, for an ATTACH whose sender gated this
 * filter (SF_FLAG_GATED: a kernel seccomp filter built from it sends every
 * call it does not allow up to sfilterd's judge, which runs the classic
 * filters). A new chain that the judge can run exactly is then given its
 * slot at once with a stand-in program, its parent's (or one that allows
 * everything), instead of -EINPROGRESS: the gate and the judge enforce the
 * new filter meanwhile, the parent's program the rest of the chain.
 * sf_runtime_settle_standins() loads the chain's own program into the
 * slot. Only a request that says the same may be given a chain still on
 * its stand-in; every other attach loads its program first. Not a
 * protocol flag. sf_runtime_attach_to() only. */
#define SF_ATTACH_STANDIN      0x80000
/* A filter of the 2012 interface (PR_ATTACH_SECCOMP_FILTER): over struct
 * user_regs_struct, of the x86-64 ABI or, with SF_ATTACH_RFC_I386, the
 * i386 one; SF_ATTACH_RFC_EXEC: inheritable across execve (needs
 * CAP_SYS_ADMIN when the target installs it on itself). */
#define SF_ATTACH_RFC2012      SF_FLAG_RFC2012
#define SF_ATTACH_RFC_I386     SF_FLAG_RFC_I386
#define SF_ATTACH_RFC_EXEC     SF_FLAG_RFC_EXEC
/* Shadow mode: a candidate beside the enforced filters; a call where its
 * verdict differs from the enforced one is logged (SF_TAKEN_SHADOW), with
 * the classic index of its ret. Nothing else changes. */
#define SF_ATTACH_SHADOW       SF_FLAG_SHADOW
/* Per-ret hit counters (sf_runtime_filter_hits()). */
#define SF_ATTACH_COUNT        SF_FLAG_COUNT
/* Arm at exec: the filter is on the task (and on children it forks) from
 * now, and judges from the task's next successful execve on. Refused
 * (-EBUSY) for a task a filter already judges. For a cgroup, see
 * sf_runtime_attach_cgroup(). The flag is the attach's, not the
 * filter's: the chain does not keep it. */
#define SF_ATTACH_AT_EXEC      SF_FLAG_AT_EXEC
#define SF_ATTACH_ADMIN_FLAGS  (SF_ATTACH_KNOWN_FLAGS | SF_ATTACH_COMPLAIN | SF_FLAGS_RFC | \
				SF_ATTACH_SHADOW | SF_ATTACH_COUNT | SF_ATTACH_AT_EXEC)
_Static_assert(SF_ATTACH_ADMIN_FLAGS == SF_FLAGS_ADMIN &&
	       !((SF_ATTACH_ARM | SF_ATTACH_LOADED | SF_ATTACH_CHECKED) & SF_FLAGS_ADMIN),
	       "admin flags are bpf/sfilter.h's");

/* For the test suite only: SF_TEST_NO_STORAGE makes the BPF side behave as
 * if task storage could not be allocated for a fork child, nor at its
 * first system call (value 1), or only at the fork (value 2: the child is
 * adopted at its first sys_enter);
 * SF_TEST_TSYNC_FAIL makes a TSYNC attach fail (-EIO) after its first pass
 * has moved threads (value 1), to exercise its roll-back. */
/* SF_TEST_GATE_DELAY_US: sf_runtime_gate_answer() waits that long between
 * reading the chain and acting on its verdict (the window in which the
 * caller may die and its pid be reused). */
/* SF_TEST_SEARCH_FAIL: loading a chain's searched form fails (-E2BIG), as
 * when the kernel refuses it, so that sf_runtime_upgrade_chains() keeps the
 * linear one. */
enum sf_test_knob { SF_TEST_NO_STORAGE, SF_TEST_TSYNC_FAIL, SF_TEST_GATE_DELAY_US,
		    SF_TEST_SEARCH_FAIL, SF_TEST_SETTLE_DELAY_MS };
int sf_runtime_test_knob(struct sf_runtime *rt, enum sf_test_knob knob, uint32_t value);

/*
 * Pinned state. With opts->pin_dir set (sfilterd uses SF_PIN_DIR), open
 * adopts what an earlier runtime pinned there (programs, maps, links and
 * the chain/filter records) instead of loading anew, so a SIGKILLed daemon
 * can be restarted without any confined task ever being unconfined, and
 * close leaves everything attached. sf_runtime_uninstall() tears it down.
 * Pins made by another SF_ABI_VERSION are not adopted: -EPROTO, and they
 * stay as they are (sf_runtime_uninstall_dir() removes them).
 */
#define SF_PIN_DIR "/sys/fs/bpf/sfilter"
int sf_runtime_open_pinned(struct sf_runtime **out,
			   const struct sf_runtime_opts *opts,
			   const char *pin_dir, bool *adopted);
/*
 * Layout: under pin_dir, map_<name> for every map (the PROG_ARRAY among
 * them, which would clear its entries with its last user reference),
 * prog_<name> for every program, link_<name> for every attachment
 * (dispatcher, fork, cgroup migration, LSM hooks). bpffs holds no regular
 * files: the chain tree (filter ids, flags, owners, classic code, parent
 * chains, slots) and the cgroup attachments are in the state file
 * /run/<basename of pin_dir>/state (/run/sfilter/state for SF_PIN_DIR),
 * rewritten by write + rename after every change and before a newly
 * loaded chain slot is given to any task.
 * Uninstall stops judging anyone, waits for program runs under way, then
 * unpins the links (dispatcher first) and returns once the kernel has
 * released them, and only then unpins the maps and removes the state file:
 * every confined task is unconfined, and none is killed on the way. The
 * runtime stays valid (unpinned); sf_runtime_close() it afterwards.
 * sf_runtime_uninstall_dir() does the same without a runtime (cleanup of a
 * pin dir whose adoption failed; pins of another version cannot be told
 * to stop judging, so there the links' release is all it waits for).
 * Adopting drops compare-and-set entries a dead runtime left in sf_pending.
 */
int sf_runtime_uninstall(struct sf_runtime *rt);
int sf_runtime_uninstall_dir(const char *pin_dir);

/*
 * Pins need a bpf filesystem, which machines without systemd do not mount
 * at boot. Returns 0 when pin_dir's parent is on one, creating the
 * directories up to that parent; msg is then empty, or says that none was
 * mounted at SF_BPFFS_DIR and one has been (pin_dir below it, as root).
 * Otherwise -errno, and msg (one line, no newline) says what failed and
 * what to run. A pin_dir elsewhere is never mounted over: only named.
 * sf_runtime_open_pinned() calls it first and prints a non-empty msg.
 */
#define SF_BPFFS_DIR "/sys/fs/bpf"
int sf_bpffs_ensure(const char *pin_dir, char *msg, size_t size);

/* Every task in the cgroup (v2 path) and in its sub-cgroups now, and every
 * task that enters that subtree later, before its first syscall there.
 * Entering is seen by tp_btf/cgroup_attach_task (after a migration, in the
 * writer's context) and, for clone3(CLONE_INTO_CGROUP), by the fork hook
 * (before the child runs). The nearest attached cgroup at or above the
 * one entered decides; its chain holds the filters of every attached
 * cgroup above it (attaching re-bases the attached cgroups below, so the
 * order of attaches does not matter). A task with no chain gets that
 * chain; a task whose chain has a prepared "chain + cgroup filters" (made
 * for every chain seen entering so far) gets that. Any other entering
 * task, and the non-leader threads of a multi-threaded process moved by
 * cgroup.procs, are queued for sf_runtime_process_pending(), and the
 * queueing wakes whoever reads the event ring buffer (sfilterd): until
 * that call they run with their old chain, except that one of them that
 * execs first, with no chain, gets the cgroup's there (sf_exec).
 * With SF_ATTACH_AT_EXEC, as a container runtime's own seccomp filter
 * would judge its processes (installed just before the workload's
 * execve, `runc exec`'s too): a task in the subtree, now or when it
 * joins, that has no chain or whose chain waits for its exec, takes the
 * chain waiting for its next successful execve; a task a filter judges
 * already takes the cgroup's filters at once. Only while every filter
 * of the cgroup and of the attached cgroups above it was attached so:
 * one attached without the flag makes the chain judge from the join.
 * Attaching first forgets attached cgroups whose directory is gone.
 * With SF_ATTACH_LOADED, -EINPROGRESS having changed nothing when the
 * chain is neither loaded nor a spare. Returns 0 and the cgroup filter's
 * id. */
int sf_runtime_attach_cgroup(struct sf_runtime *rt, const char *cgroup_path,
			     const struct sock_fprog *prog, unsigned int flags,
			     uint32_t *filter_id, struct c2e_error *err);
/* Resolves queued cgroup joins. Returns how many, or -errno. */
int sf_runtime_process_pending(struct sf_runtime *rt);

/* Removes (detach) or swaps (replace) one attached filter everywhere it is
 * in force, atomically per task. -ENOENT for an unknown id.
 * Ids: one per chain node, i.e. per attach request, except that identical
 * attaches (same program, same flags, onto the same chain) share a node
 * and hence an id; detach/replace then act on all of them. Every chain
 * containing the id is rebuilt without it / with the new program at the
 * same position and flags, the other filters keeping their ids; each task
 * is moved from its old chain to the new one by compare-and-set in the task
 * iterator, so it is never without its other filters. Complain mode
 * (SF_ATTACH_COMPLAIN, accepted by sf_runtime_attach too): the filter runs
 * in its place in the chain, but its verdict never enters the fold; a
 * non-ALLOW one is logged as an event with taken = SF_TAKEN_COMPLAIN. */
int sf_runtime_detach(struct sf_runtime *rt, uint32_t filter_id);
int sf_runtime_replace(struct sf_runtime *rt, uint32_t filter_id,
		       const struct sock_fprog *prog, struct c2e_error *err);

/*
 * The gate (docs/protocol.md): what thread tid's chain, as it stands now,
 * decides for the call in sd, which a kernel seccomp filter sent up to
 * sfilterd. Exactly what the dispatcher would decide at that call's
 * sys_enter: the filters that enforce (not complain, not shadow), a task
 * whose chain waits for exec or that is armed and receiving sf_attach()'s
 * reply as the BPF side treats it. 0, or -ESRCH (no such task), -errno.
 */
struct sf_judgement {
	uint32_t ret;          /* the verdict: action | data */
	uint32_t filter_id;    /* the filter that decided it; 0: ALLOW by all */
	uint32_t flags;        /* that filter's attach flags */
	bool exact;            /* false: the chain has a filter this judge
				  cannot run over seccomp_data (a 2012 filter
				  that reads other registers), or a chain this
				  runtime does not know; ret is ALLOW and the
				  dispatcher is to decide */
	bool chainless;        /* the task has no chain (nor storage, maybe:
				  a fork child that takes its chain at its
				  first sys_enter); ret is ALLOW */
	pid_t tgid;            /* tid's process, as the kernel's walk saw it */
	uint64_t leader_start; /* with tgid, the process (struct sf_identity) */
	uint64_t leader_boot;  /* the same start on the boot clock
				  (struct sf_event.start_ns) */
	uint64_t exec_id;
	uid_t euid;
	uid_t uid;             /* real: whose the event is (sf_event.uid) */
	uint32_t account;      /* its login user (sf_event.account) */
	char comm[16];
};
int sf_runtime_judge(struct sf_runtime *rt, pid_t tid, const struct seccomp_data *sd,
		     struct sf_judgement *out);

/*
 * One notification from the seccomp listener fd: received, judged with
 * sf_runtime_judge() and answered as the kernel answers the verdict
 * (docs/protocol.md, "The gate"): ALLOW and LOG continue the call, ERRNO
 * fails it with its errno, TRACE and USER_NOTIF with ENOSYS, TRAP skips it
 * and sends SIGSYS, KILL_* kill the process; a task the judge cannot find
 * or a chain it cannot run continues, for the dispatcher to judge. killable:
 * the filter was installed with SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, so
 * that a TRAP's SIGSYS can be sent before the answer (it is then handled
 * as the call returns, as the kernel's is); else it follows the answer.
 * 0 with *out saying what was done, or -ENOENT when there was nothing to
 * receive (the task was interrupted or died), -errno.
 */
enum sf_gate_taken {
	SF_GATE_CONTINUED,  /* the chain allows (or logs) it */
	SF_GATE_UNJUDGED,   /* continued: not this judge's to decide */
	SF_GATE_DENIED,     /* failed with out->err */
	SF_GATE_TRAPPED,    /* skipped, SIGSYS sent */
	SF_GATE_KILLED,     /* the process killed */
	SF_GATE_GONE,       /* the task went away before the answer */
};
struct sf_gate_outcome {
	enum sf_gate_taken taken;
	int err;                   /* SF_GATE_DENIED: the errno */
	pid_t tid;                 /* the caller, as the listener names it */
	struct seccomp_data data;
	struct sf_judgement j;
};
int sf_runtime_gate_answer(struct sf_runtime *rt, int fd, bool killable,
			   struct sf_gate_outcome *out);
/* The same in two steps, for a caller that records the call in between
 * (sfilterd, so that a successor can answer a call it received and never
 * answered): the notification received (0, -ENOENT, -errno), then judged
 * and answered (as above; a call no longer pending is SF_GATE_GONE). */
struct sf_gate_call {
	uint64_t id;
	pid_t tid;
	struct seccomp_data data;
};
/* Room for the kernel's struct seccomp_notif (80 bytes in 6.x; the kernel
 * says its size, SECCOMP_GET_NOTIF_SIZES). */
#define SF_GATE_NOTIF_ROOM 128
/* buf (size bytes, zeroed here first): where the kernel writes the
 * notification itself, so that memory shared with a successor holds the
 * call from the instant it is received, whenever the receiver dies; NULL:
 * a private buffer. A kernel notification larger than size is received
 * privately and its known part copied to buf. */
int sf_runtime_gate_recv(int fd, void *buf, size_t size, struct sf_gate_call *call);
/* The call a buffer sf_runtime_gate_recv() filled holds: 0, or -ENOENT
 * when it holds none. */
int sf_runtime_gate_call_of(const void *buf, size_t size, struct sf_gate_call *call);
int sf_runtime_gate_decide(struct sf_runtime *rt, int fd, bool killable,
			   const struct sf_gate_call *call, struct sf_gate_outcome *out);
/* The event the log keeps for an outcome that refused or killed (tier
 * SF_BPF_TIER_GATE); false for one that makes none. */
struct sf_event;
bool sf_runtime_gate_event(const struct sf_gate_outcome *o, struct sf_event *ev);

/* Introspection for sfctl. */
struct sf_filter_info {
	uint32_t id;
	uint32_t flags;            /* SF_ATTACH_* it was attached with */
	uid_t owner;               /* uid that attached it (set by the daemon) */
	uint32_t len;              /* classic instructions */
};
struct sf_task_info {
	pid_t tid, tgid;
	uid_t uid;
	char comm[16];
	bool at_exec;              /* its filters wait for its next execve */
	bool gated;                /* under a gate whose listener this
				      process holds */
	bool user_notif;           /* under another supervisor's listener
				      (SECCOMP_RET_USER_NOTIF not ours) */
	uint32_t n_filters;        /* chain length, oldest first below */
	uint32_t filter_ids[64];   /* first 64 */
};
typedef int (*sf_task_fn)(void *ctx, const struct sf_task_info *t);
int sf_runtime_for_each_task(struct sf_runtime *rt, sf_task_fn fn, void *ctx);
/* Frees what the runtime keeps of chains whose slots were given back and
 * that nothing refers to any more (no task, cgroup, longer chain or build
 * has them): each container's chain has an id of its own, so without this
 * a daemon would keep, and write to its state file at every save, one
 * chain per container it ever started. Called by the thread that builds
 * spares, searched forms and tables, between them. How many it freed. */
int sf_runtime_reap_chains(struct sf_runtime *rt);
/* Detaches the sys_enter dispatcher when nothing can be judged (no task
 * has a chain, no cgroup has a filter), so that the machine's syscalls
 * cost what they cost without sfilter; the next chain attaches it again,
 * before any task has it. 1 when it detached it, 0 when it stays (or was
 * not attached), -errno. A daemon calls it now and then. */
int sf_runtime_idle_check(struct sf_runtime *rt);
/* The kernel's id of the dispatcher's link; 0 while it is detached. */
int sf_runtime_dispatch_link_id(struct sf_runtime *rt);
/* What of the programs attached only on demand is attached now. */
struct sf_lazy_links {
	int dispatcher;  /* the dispatcher's link id, 0: detached */
	int lsm;         /* LSM programs attached (lsm tier; 0 while idle) */
	bool reply;      /* the programs that decide an sf_attach()'s arm */
};
void sf_runtime_lazy_links(struct sf_runtime *rt, struct sf_lazy_links *out);
/* The chain slots (SF_MAX_CHAINS - 1 of them: slot 0 is the enforcer's):
 * every attach that makes a new chain takes one, and past the last one it
 * fails with -ENOSPC. empty: holding no chain; reclaimable: holding a
 * chain that no task and no cgroup uses any more, which the next attach
 * that finds none empty frees. Counting those takes an iteration over
 * every task: only with count_reclaimable (else 0). 0 or -errno. */
struct sf_slot_usage {
	uint32_t total, empty, reclaimable;
};
int sf_runtime_slot_usage(struct sf_runtime *rt, bool count_reclaimable,
			  struct sf_slot_usage *out);
/* Copies filter id's program (malloc'd *out; free it). */
int sf_runtime_filter(struct sf_runtime *rt, uint32_t filter_id,
		      struct sf_filter_info *info, struct sock_filter **out);
int sf_runtime_set_owner(struct sf_runtime *rt, uint32_t filter_id, uid_t owner);
/* How often each ret of a filter attached with SF_ATTACH_COUNT was taken,
 * summed over the CPUs: *counts (malloc'd) indexed by classic instruction,
 * the filter's length last (the implicit return 0 of a division by zero or
 * a failed load). Returns the number of entries (length + 1); -ENOENT for
 * an unknown id, -ENODATA for a filter attached without counting. Calls
 * answered by the action table are not counted: a chain with a counted
 * filter does not use the table. */
int sf_runtime_filter_hits(struct sf_runtime *rt, uint32_t filter_id,
			   uint64_t **counts);

#endif
