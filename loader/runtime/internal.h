/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Shared between the files of loader/runtime/ only; not an interface.
 *
 * The runtime is layered: a file calls only files of a lower level (and
 * the public API of classic2ebpf, libbpf and the skeleton), never one of its
 * own level or above, so that no change to a user-facing operation reaches
 * down into what it is built on. Lowest first:
 *
 *   0  tier.c          does the kernel run BPF LSM programs
 *      bpffs.c         a bpf filesystem for the pins
 *      layout.c        kernel layout from BTF (pt_regs, task_struct)
 *      chain_emit.c    a chain's program, emitted and loaded
 *   1  iter.c          task iterator passes; waiting for BPF program runs
 *      events.c        the event ring buffer
 *      dispatch.c      the programs attached on demand: dispatcher, LSM, reply
 *   2  cgroup_table.c  the attached cgroups as records, and the maps that mirror them
 *   3  state.c         the state file: chains and cgroups, saved and read back
 *      table.c         a chain's action table: each number's constant verdict
 *   4  chains.c        chain nodes, PROG_ARRAY slots, loading a chain, the action table
 *                      -> chain_emit, iter, cgroup_table, state, table
 *   5  standin.c       a gated attach's new chain on a stand-in until its program loads
 *                      -> chains and below
 *   6  attach.c        attach to a thread or a thread group (TSYNC)
 *      cgroup.c        attach to a cgroup; queued joins
 *      admin.c         detach, replace, the idle check
 *      introspect.c    tasks, filters, owners, counters, the test knob
 *      judge.c         the gate's judge: a notified call, by the task's chain
 *      upgrade.c       a chain's searched form swapped in for its linear one
 *      spare.c         a cgroup's chain loaded ahead for the next cgroup
 *                      -> standin, chains and below; never each other
 *   7  open.c          allocation, loading the skeleton (the tier), open, close
 *                      -> tier, chain_emit, iter, events, cgroup_table, chains, standin
 *   8  pins.c          pinning, adopting pins, uninstall
 *                      -> open, state, bpffs, iter, chain_emit (the layout)
 *
 * The cgroup records sit below the chains because freeing a chain slot must
 * know whether a cgroup still uses it, and detach/replace must reset the
 * cgroups' prepared chains; cgroup attach itself sits above the chains.
 *
 * Every operation that changes chains or cgroups holds rt->lock. What a new
 * chain costs in time, the kernel's verifier and the action table's
 * analysis, runs without it (chains.c), so that nobody else waits for it.
 */
#ifndef SF_RUNTIME_INTERNAL_H
#define SF_RUNTIME_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <linux/filter.h>

#include "c2e.h"
#include "runtime.h"

struct btf;
struct ring_buffer;
struct sfilter_bpf;
struct sfilter_bpf__bss;

/* ---- the runtime's records ---------------------------------------------- */

/*
 * Byte offsets, read from the running kernel's BTF (CO-RE by hand), of
 * what a chain program reads: struct pt_regs's registers and
 * task_struct.thread_info.status.
 */
#define SF_RFC_PT_REGS 21   /* user_regs_struct's registers from pt_regs */
#define SF_RFC_CS      17
#define SF_RFC_SS      20
#define SF_RFC_THREAD  6    /* fs_base gs_base ds es fs gs, from task->thread */
struct sf_layout {
	int di, si, dx, r10, r8, r9;   /* native arguments */
	int bx, cx, bp;                /* compat arguments (with dx, si, di) */
	int ip;
	int status;                    /* task_struct.thread_info.status */
	int sys_enter_btf_id;          /* typedef btf_trace_sys_enter */
	/* The 2012 interface's struct user_regs_struct (layout.c). */
	bool rfc_ok;
	int rfc_reg[SF_RFC_PT_REGS];   /* pt_regs offsets, user_regs order */
	int rfc_thread[SF_RFC_THREAD]; /* task_struct offsets */
};

/*
 * Chains form a tree: a node is (parent chain, filter, attach flags), so
 * equal chains are one node, one generated program and one PROG_ARRAY slot
 * shared by every task that has it, and "ancestor" (TSYNC's rule) is a walk
 * up the parents. The kernel holds the truth of which task has which chain
 * (task storage, inherited across fork by sf_fork); user space reads it
 * back through the iterator before every change.
 */
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
	uid_t owner;                 /* sf_runtime_set_owner() */
	bool dead;                   /* detached/replaced: never reused */
	bool table_pending;          /* defer_tables: the table's pieces from */
	uint16_t table_next;         /* table_next on are all "run" */
	bool busy;                   /* not collectable (an operation uses it) */
	uint64_t last_use;           /* rt->uses at its last attach: of the
					chains no task has, the least recently
					attached lose their slots first */
	int idx;                     /* state file index */
	uint32_t hits_base;          /* SF_FLAG_COUNT: its first sf_hits key
					(shared by the nodes of its id); 0: none */
	bool linear;                 /* its slot holds the linear form (allowlists
					compared one by one): the searched form
					is due (upgrade.c) */
	bool spare;                  /* loaded ahead for the next cgroup that
					gets this filter (spare.c): no task and
					no cgroup has it, node_find() skips it */
	bool released;               /* its slot was given back and nothing has
					asked for it since: once nothing refers
					to it, sf_rt_nodes_reap() frees it */
	bool kept;                   /* sf_rt_nodes_reap()'s mark */
	bool cgroup_only;            /* made for a cgroup attach and given to no
					task's: once its cgroup is gone and no
					task has it, its slot is given back */
	bool standin;                /* its slot holds a stand-in, not its own
					program (standin.c): only gated tasks may
					be given it; sf_rt_node_loaded() is false */
	bool settling;               /* standin.c: its program is being built */
	bool settle_failed;          /* the kernel refused it: not tried again
					by the settles (an attach still loads it) */
};

/* Whether n's own program is in its slot: what every attach but a gated
 * one's stand-in needs before it gives a task the chain. */
static inline bool sf_rt_node_loaded(const struct sf_node *n)
{
	return n && n->slot && !n->standin;
}

struct sf_cg_app {                   /* one sf_cg_append entry */
	uint32_t from;
	struct sf_node *to;
};

struct sf_cgroup {
	struct sf_cgroup *next;
	uint64_t id;                 /* kernfs id = inode of the directory */
	char *path;
	struct sf_node *base;        /* the cgroup's own filters, as a chain */
	bool at_exec;                /* every filter of base was attached at exec
					(sf_cg.at_exec) */
	struct sf_cg_app *app;
	size_t n_app, cap_app;
	/* The kernfs ids of the directories above, nearest first, read
	 * once (cgroup.c's cg_is_below()): cgroup2 has no rename, so they
	 * hold for the record's life. */
	uint64_t up[SF_CG_MAX_DEPTH];
	uint8_t n_up;
	bool up_read;
};

/* Whether c's directory is still c (a removed cgroup has no task and can
 * have none: rmdir(2) refuses a cgroup with live tasks, and nothing
 * joins a removed one; another one by now under its name has another id,
 * as __kernfs_new_node() never gives an id twice). Any doubt: alive. */
static inline bool sf_rt_cg_alive(const struct sf_cgroup *c)
{
	struct stat st;

	if (stat(c->path, &st) == 0)
		return (uint64_t)st.st_ino == c->id;
	return errno != ENOENT && errno != ENOTDIR;
}

#define SF_RT_HASH_BUCKETS 1024
#define SF_RT_MAX_LSM 64     /* LSM programs in bpf/sfilter.bpf.c, and room */
#define SF_RT_NAME_LEN 64    /* a BPF program's name, with room */
#define SF_RT_N_REPLY 3      /* sf_reply_recvfrom, _recvmsg, _exit_tp */
/* Link fds a detach may hand over: ours and one per pin, per program. */
#define SF_RT_MAX_LINKS (2 * (SF_RT_MAX_LSM + SF_RT_N_REPLY))

/* Iterator links kept, one per tid recently walked (the gate's judge
 * walks the task that made each notified call). */
#define SF_RT_TID_LINKS 16

struct sf_runtime {
	struct sfilter_bpf *skel;    /* NULL when adopted from pins */
	/* What the runtime uses, from the skeleton or from the pins. */
	int fd_tasks, fd_progs, fd_table, fd_pending, fd_events;
	int fd_cgroups, fd_cgapp, fd_cgpend, fd_iter, fd_bss, fd_tsync, fd_hits;
	int fd_accounts, fd_stats, fd_agg, fd_charge, fd_gate_filters, fd_iter_listeners;
	bool own_fds;                /* adopted: the fds above are ours */
	int fd_sync, fd_sync_inner;  /* sf_rt_quiesce()'s map-in-map */
	int fd_dispatch;             /* the dispatcher's link, when this runtime
					attached it (0: none, or only its pin) */
	int fd_reply[SF_RT_N_REPLY]; /* the reply programs' links, alike */
	bool reply_on;               /* they are attached (or pinned) */
	uint64_t last_arm;           /* CLOCK_MONOTONIC ns of the last arm set */
	int fd_lsm[SF_RT_MAX_LSM];   /* the LSM programs' links, alike */
	int n_lsm;
	bool dispatch_pinned;        /* link_sf_dispatch is pinned (known without
					a look at bpffs on every attach) */
	struct sfilter_bpf__bss *bss;
	uint64_t cg_pended_seen;     /* bss->sf_cg_pended at the last scan */
	void *bss_map;               /* adopted: our mmap of the .bss map */
	char *pin_dir;               /* NULL: not pinned */
	char *state_path;
	struct sf_cgroup *cgroups;
	enum sf_tier tier;
	char tier_why[160];          /* why not the lsm tier ("" when it is) */
	bool verbose;
	bool defer_tables;
	bool linear_first;           /* new chains load linear, upgrade.c swaps */
	bool iter_filter;            /* the kernel takes bpf_iter_link_info.task.pid_fd */
	/* Iterator links over one task by number, kept for the next walk of
	 * the same tid (iter.c): a link costs more to make than a walk. */
	struct { pid_t tid; int fd; uint64_t used; } tid_links[SF_RT_TID_LINKS];
	uint64_t tid_links_clock;
	bool test_tsync_fail;        /* SF_TEST_TSYNC_FAIL */
	bool test_search_fail;       /* SF_TEST_SEARCH_FAIL */
	uint32_t test_gate_delay_us; /* SF_TEST_GATE_DELAY_US */
	uint32_t test_settle_delay_ms; /* SF_TEST_SETTLE_DELAY_MS */
	int standin_allow_fd;        /* a chain program that allows every call:
					a first filter's stand-in (0: not loaded) */
	struct sf_layout layout;
	struct sf_const *table;      /* sf_table, mmap'd */
	size_t table_bytes;
	struct sf_node *slots[SF_MAX_CHAINS];
	struct sf_node *buckets[SF_RT_HASH_BUCKETS];
	uint32_t next_id;
	uint64_t uses;               /* attaches so far (sf_node.last_use) */
	/* The chain the last cgroup attach gave its cgroup, of which
	 * sf_runtime_make_spares() loads a spare (spare.c); NULL: none due. */
	struct sf_node *spare_of;
	int spare_kcount;
	uint64_t released, reaped;   /* slots given back; as of the last reap */
	uint64_t cg_gone, cg_gone_seen; /* cgroups found gone; as of the last
					   sf_rt_slots_release_gone() */
	int building;                /* builds begun and not freed (atomic):
					sf_rt_nodes_reap() frees nothing while
					one may hold a node without the lock */
	struct ring_buffer *rb;
	sf_event_fn fn;
	void *fn_ctx;
	int fn_max, fn_count;         /* a bounded drain: events it may hand
					over, and has handed over */
	pthread_mutex_t lock;
	pthread_mutex_t detach_lock; /* held while an idle check closes links;
					taken after lock, never before */
};

struct sf_rt_recs {                  /* one record per task an iteration saw */
	struct sf_iter_rec *r;
	size_t n;
};

/* ---- 0: tier.c, chain_emit.c -------------------------------------------- */

/* Whether BPF LSM programs run on this kernel (not only load); if not, why
 * says so. */
bool sf_rt_lsm_programs_run(const struct btf *vmlinux, char *why, size_t size);
bool sf_rt_fexit_attaches(const struct btf *vmlinux, const char *fn);

/* Fills l from /sys/kernel/btf/vmlinux. 0 or -errno. */
int sf_layout_read(struct sf_layout *l);

/* One filter of a chain, oldest first as attached. */
struct sf_chain_filter {
	const struct sock_filter *insns;
	size_t len;
	uint32_t id;
	uint16_t flags;
	uint32_t hits_base;          /* SF_FLAG_COUNT: its first sf_hits key */
};

/* The maps a chain program refers to. */
struct sf_chain_maps {
	int tasks, progs, hits;
};

/*
 * The runtime frame: a whole BPF_PROG_TYPE_TRACING (tp_btf/sys_enter)
 * program that builds struct seccomp_data on its stack, runs every filter
 * newest first with the kernel's precedence, and either returns (ALLOW)
 * or records the verdict in the task's storage and tail-calls slot 0.
 * search: each filter's runs of "jeq #k" as a binary search
 * (C2E_EMIT_SEARCH), the form that costs a call the fewest compares; else
 * linear, the form the verifier checks faster. Both reach the same verdict
 * on every input.
 */
int sf_chain_emit(const struct sf_layout *l, const struct sf_chain_filter *f,
		  size_t n, const struct sf_chain_maps *m, bool search,
		  struct c2e_ebpf *out);
/* Loads what sf_chain_emit() produced. Program fd or -errno; the verifier
 * log goes to stderr when verbose. */
int sf_chain_load(const struct sf_layout *l, const struct c2e_ebpf *prog,
		  bool verbose);

/* ---- 1: iter.c, events.c ------------------------------------------------ */

/* One sf_iter pass over tgid's group (0: every task), applying pending entries. */
int sf_rt_iter_run(struct sf_runtime *rt, pid_t tgid, bool all, struct sf_rt_recs *out);
/* The same over the process pidfd refers to: -EOPNOTSUPP where the kernel's
 * task iterator takes no pidfd (before 6.1). */
int sf_rt_iter_pidfd(struct sf_runtime *rt, int pidfd, struct sf_rt_recs *out);
/* The same over the one thread tid of group tgid (0: any group), or no
 * record where the kernel misses it (see iter.c): -EOPNOTSUPP where the
 * kernel's task iterator takes no filter. */
int sf_rt_iter_thread(struct sf_runtime *rt, pid_t tgid, pid_t tid, struct sf_rt_recs *out);
/* The record of thread tid, whatever its process: none when no such
 * task lives. */
int sf_rt_iter_find(struct sf_runtime *rt, pid_t tid, struct sf_rt_recs *out);
/* Whether the kernel's task iterator takes a pidfd (sets nothing). */
bool sf_rt_iter_can_filter(struct sf_runtime *rt);
/* Closes the iterator links kept for walks of one tid. */
void sf_rt_iter_links_close(struct sf_runtime *rt);
/* sf_gate_filters made to hold the filters of the listeners this process
 * holds, and only those (sf_iter_listeners over its files). The caller
 * holds rt->lock. 0 or -errno. */
int sf_rt_gate_filters_refresh(struct sf_runtime *rt);
/* Returns once every run of a BPF program (sys_enter dispatcher, chain,
 * LSM hook) that began before the call has ended. 0 or -errno. */
int sf_rt_quiesce(struct sf_runtime *rt);
/* The first step of every teardown: nobody is judged from here on. */
void sf_rt_stop_enforcing(struct sf_runtime *rt);

/* dispatch.c: the dispatcher is attached while anything can be judged.
 * sf_rt_dispatch_on() before a chain is first given to anyone (0 or
 * -errno; nothing when attached already); _close_fd() drops this
 * runtime's reference (a pin keeps it attached). */
bool sf_rt_dispatch_attached(struct sf_runtime *rt);
int sf_rt_dispatch_on(struct sf_runtime *rt);
void sf_rt_dispatch_close_fd(struct sf_runtime *rt);
/* Before an arm is set: attaches the programs that decide it at the
 * caller's recv of the reply (nothing when attached; where they cannot
 * be, the arm is taken at that recv's entry). */
void sf_rt_reply_on(struct sf_runtime *rt);
/* The idle check's detach, under rt->lock, which it releases: nothing > 0
 * (nothing can be judged: sf_runtime_idle_check() in admin.c) detaches the
 * dispatcher and the LSM programs, nothing == 0 the reply programs once no
 * arm can be undecided. sf_runtime_idle_check()'s return. */
int sf_rt_dispatch_idle(struct sf_runtime *rt, int nothing);
/* Reads whether an adopted install's dispatcher is attached (pinned). */
void sf_rt_dispatch_adopted(struct sf_runtime *rt);
/* CLOCK_MONOTONIC in nanoseconds: the arm's age, and an attach's spans. */
uint64_t sf_rt_now_ns(void);
/* Returns once none of the links ids[] (0: none) exists, or after
 * timeout_ms (and says which one is left). */
void sf_rt_wait_links_gone(const uint32_t *ids, size_t n, int timeout_ms);

/* The ring buffer reader over rt->fd_events. 0 or -errno. */
int sf_rt_events_open(struct sf_runtime *rt);
void sf_rt_events_close(struct sf_runtime *rt);

/* ---- 2: cgroup_table.c -------------------------------------------------- */

/* The attached cgroup with kernfs id id, or NULL. */
struct sf_cgroup *sf_rt_cg_find(struct sf_runtime *rt, uint64_t id);
/* A new record (path: realpath'd here) at the head of rt->cgroups whose
 * chain starts as base; NULL: ENOMEM. */
struct sf_cgroup *sf_rt_cg_add(struct sf_runtime *rt, uint64_t id, const char *path,
			       struct sf_node *base);
/* Unlinks and frees c (its kernel maps are the caller's). */
void sf_rt_cg_remove(struct sf_runtime *rt, struct sf_cgroup *c);
/* Frees every record (closing: the maps go with the runtime or stay pinned). */
void sf_rt_cg_free_all(struct sf_runtime *rt);
/* Forgets the attached cgroups whose directory is gone (sf_rt_cg_alive()),
 * each holding its chain's slot. */
void sf_rt_cg_prune(struct sf_runtime *rt);
/* Whether an attached cgroup's base chain or prepared append is in slot. */
bool sf_rt_cg_uses_slot(struct sf_runtime *rt, int slot);
/* Drops the prepared appends that start from slot (the slot is going away). */
void sf_rt_cg_forget_slot(struct sf_runtime *rt, int slot);
/* Sets c's kernel maps to its base chain and drops its prepared appends. */
void sf_rt_cg_sync(struct sf_runtime *rt, struct sf_cgroup *c);
/* Records (and puts in sf_cg_append) that a task of c on chain slot from
 * moves to to. 0 or -errno. */
int sf_rt_cg_add_app(struct sf_runtime *rt, struct sf_cgroup *c, uint32_t from,
		     struct sf_node *to);

/* ---- 3: state.c --------------------------------------------------------- */

/* /run/<basename of pin_dir>/state (malloc'd), or NULL. */
char *sf_rt_state_path(const char *pin_dir);
/* Makes the state file's directory (its parent may already hold it). */
void sf_rt_state_mkdir(const char *state_path);
/* Removes pin_dir's state file and its directory. */
void sf_rt_state_remove(const char *pin_dir);
/* Rewrites the state file (pinned runtimes only). */
void sf_rt_save_state(struct sf_runtime *rt);
/* Reads the state file into rt's chains and cgroups (none: nothing yet).
 * 0 or -errno. */
int sf_rt_load_state(struct sf_runtime *rt);

/* ---- 4: chains.c -------------------------------------------------------- */

/* What the filter counts toward the chain's instruction limit: what the
 * kernel's converter emits for a seccomp_data filter, and the classic
 * length for a 2012-interface one (its loads are not convertible). */
int sf_rt_filter_insns(const struct sock_filter *insns, size_t len,
		       unsigned int flags);

/* Whether the filter id is in n's chain. */
bool sf_rt_path_has(const struct sf_node *n, uint32_t id);
/* The chain node (parent, insns, flags): an existing one or a new one; NULL: ENOMEM. */
struct sf_node *sf_rt_node_get(struct sf_runtime *rt, struct sf_node *parent,
			       const struct sock_filter *insns, size_t len,
			       unsigned int flags, uint32_t id, int kcount);
/*
 * A chain's program, and unless tables are deferred its action table, made
 * in three steps so that the kernel's verifier runs without rt->lock:
 * begin (rt->lock held: the node's counters, its chain's filters as they
 * are), run (not held: emitted, loaded, the table computed), install (held
 * again: a slot, the table, the PROG_ARRAY entry, the state file). Install
 * returns 0 also when the node was loaded meanwhile (b is then not used),
 * and -ESTALE when b no longer matches the node (build it again).
 * sf_rt_build_free() closes a program that was not installed.
 */
struct sf_chain_build {
	struct sf_runtime *rt;       /* set by begin: counted in rt->building */
	struct sf_node *node;        /* the chain it is for */
	struct sf_chain_filter *cf;  /* its filters, oldest first: the nodes' */
	struct sock_fprog *fp;       /* code, which never changes, and their */
	size_t n;                    /* counters as they were at begin */
	int prog_fd;                 /* -1 until loaded */
	struct sf_const *rows;       /* the whole table, or NULL (deferred) */
	bool search;                 /* the searched form (else the linear one) */
	bool spare;                  /* install leaves the dispatcher as it is */
	bool upgrade;                /* for a loaded chain's slot (no table) */
	bool standin;                /* prog_fd is a stand-in (standin.c) */
	bool same;                   /* upgrade: both forms are one program */
	/* What sf_rt_build_run() took: SF_SPAN_TRANSLATE, _VERIFY, _TABLE
	 * (0: not run), and sf_rt_build_install() to attach the dispatcher
	 * (0: it was attached), for an attach that is timed. */
	uint64_t ns[3], dispatch_ns;
};
#define SF_CHAIN_BUILD_INIT { .prog_fd = -1 }
/* Rounds of an attach whose new chain changed while it was built (the
 * caller's chain, or a cgroup's above, changed meanwhile) before it gives
 * up with -EAGAIN. */
#define SF_RT_BUILD_ROUNDS 4
int sf_rt_build_begin(struct sf_runtime *rt, struct sf_node *node, struct sf_chain_build *b);
int sf_rt_build_run(struct sf_runtime *rt, struct sf_chain_build *b);
/* Between two rounds of an attach (rt->lock held): sf_rt_build_run()
 * without the lock, so that no other operation waits for the kernel's
 * verifier; -EAGAIN once round is the last. */
int sf_rt_build_unlocked(struct sf_runtime *rt, struct sf_chain_build *b, int round);
int sf_rt_build_install(struct sf_runtime *rt, struct sf_chain_build *b);
/* The searched form of a chain loaded linear: sf_rt_build_begin() with
 * rt->lock held, then with b->search and b->upgrade set, sf_rt_build_run()
 * without it (no table: the slot has one), then this with it held again:
 * b's program put in the node's slot in place of the linear one by one
 * PROG_ARRAY update, which every tail call sees whole (the slot is never
 * empty). -ESTALE, nothing changed, when the node no longer holds a slot
 * in its linear form or b no longer matches it: a slot freed meanwhile is
 * never given a program again. */
int sf_rt_build_swap(struct sf_runtime *rt, struct sf_chain_build *b);
void sf_rt_build_free(struct sf_chain_build *b);
/* All three with rt->lock held throughout. 0 or -errno. */
int sf_rt_node_load(struct sf_runtime *rt, struct sf_node *node);
/* standin.c: node (not loaded) given its slot with a stand-in program,
 * when a gated attach may have it so; 0, -EAGAIN (not eligible: load it),
 * or -errno. rt->lock held. */
int sf_rt_standin_install(struct sf_runtime *rt, struct sf_node *node);
void sf_rt_standin_close(struct sf_runtime *rt);
/* count rows of the action table of the chain cf/fp (n filters, oldest
 * first) from row first on, into out (table.c). */
void sf_rt_fill_rows(struct sf_const *out, const struct sf_chain_filter *cf,
		     const struct sock_fprog *fp, size_t n, int first, int count);
/* The spare of the chain (parent, insns, flags), loaded, or NULL (a
 * caller that takes it clears its spare flag: it is then that caller's
 * node); and the wish for the next one after an attach gave a cgroup
 * node, which sf_runtime_make_spares() (spare.c) loads. rt->lock held. */
struct sf_node *sf_rt_spare_find(struct sf_runtime *rt, struct sf_node *parent,
				 const struct sock_filter *insns, size_t len, unsigned int flags);
void sf_rt_spare_wish(struct sf_runtime *rt, struct sf_node *node, int kcount);
/* Frees the nodes whose slots were given back and that nothing refers to
 * any more (no slot, task, cgroup, child, build or spare): a container's
 * chain, once its cgroup is gone and its slot taken back, is not kept for
 * the daemon's life (nor written to the state file at every save). How
 * many it freed. rt->lock held, by the thread that also builds spares,
 * searched forms and tables, so that no build of its holds one. */
int sf_rt_nodes_reap(struct sf_runtime *rt);
/* Gives back the slots of cgroup-only chains whose cgroups are gone, once
 * no task has them (as slots running short would, but at once and only
 * for those): the state file, written at every attach, then holds the
 * chains of live containers, not of every container since the last
 * shortage. How many. rt->lock held. */
int sf_rt_slots_release_gone(struct sf_runtime *rt);
/* rt->lock taken by a thread that may run at a low priority: it holds it
 * at nice 0 where it may (returns the nice to restore). */
int sf_rt_lock_unniced(struct sf_runtime *rt);
void sf_rt_unlock_reniced(struct sf_runtime *rt, int nice);
/* Syscall numbers in a piece of a deferred table (SF_TABLE_PER_CHAIN is a
 * multiple): a piece costs at most this many entries' bounded analysis. */
#define SF_TABLE_PIECE 64
_Static_assert(SF_TABLE_PER_CHAIN % SF_TABLE_PIECE == 0, "a table is whole pieces");
/* Marks in unused[] the loaded chain slots that no task, no cgroup and no
 * operation under way uses any more (an iteration over every task): those
 * the next slot allocation that finds none empty frees. Their number, or
 * -errno. */
int sf_rt_slots_unused(struct sf_runtime *rt, bool unused[SF_MAX_CHAINS]);
/* Empties n's slot and closes its program. */
void sf_rt_node_unload(struct sf_runtime *rt, struct sf_node *n);
/* Frees every node (closing: pinned, the PROG_ARRAY keeps the programs). */
void sf_rt_nodes_free(struct sf_runtime *rt);

/* ---- 6: open.c ---------------------------------------------------------- */

/* A runtime with nothing loaded yet; NULL and errno on failure. */
struct sf_runtime *sf_rt_alloc(const struct sf_runtime_opts *opts);
/* Loads the skeleton (tier probe included) into rt->skel. 0 or -errno. */
int sf_rt_load_fresh(struct sf_runtime *rt, const struct sf_runtime_opts *opts);
/* What every open does last, loaded or adopted: table, ring buffer. */
int sf_rt_finish_open(struct sf_runtime *rt);

#endif
