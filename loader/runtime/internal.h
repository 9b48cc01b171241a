/* SPDX-License-Identifier: GPL-2.0 */
/* Shared between the files of loader/runtime/ only; not an interface. */
#ifndef SF_RUNTIME_INTERNAL_H
#define SF_RUNTIME_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/filter.h>

#include "c2e.h"
#include "runtime.h"

struct ring_buffer;
struct sfilter_bpf;
struct sfilter_bpf__bss;

/*
 * Byte offsets, read from the running kernel's BTF (CO-RE by hand), of
 * what a chain program reads: struct pt_regs's registers and
 * task_struct.thread_info.status.
 */
struct sf_layout {
	int di, si, dx, r10, r8, r9;   /* native arguments */
	int bx, cx, bp;                /* compat arguments (with dx, si, di) */
	int ip;
	int status;                    /* task_struct.thread_info.status */
	int sys_enter_btf_id;          /* typedef btf_trace_sys_enter */
};

/* Fills l from /sys/kernel/btf/vmlinux. 0 or -errno. */
int sf_layout_read(struct sf_layout *l);

struct btf;
/* Whether BPF LSM programs run on this kernel (not only load); if not, why
 * says so (loader/runtime/tier.c). */
bool sf_rt_lsm_programs_run(const struct btf *vmlinux, char *why, size_t size);

/* One filter of a chain, oldest first as attached. */
struct sf_chain_filter {
	const struct sock_filter *insns;
	size_t len;
	uint32_t id;
	uint16_t flags;
};

/*
 * The runtime frame: a whole BPF_PROG_TYPE_TRACING (tp_btf/sys_enter)
 * program that builds struct seccomp_data on its stack, runs every filter
 * newest first with the kernel's precedence, and either returns (ALLOW)
 * or records the verdict in the task's storage and tail-calls slot 0.
 */
int sf_chain_emit(const struct sf_layout *l, const struct sf_chain_filter *f,
		  size_t n, int tasks_map_fd, int progs_map_fd,
		  struct c2e_ebpf *out);
/* Loads what sf_chain_emit() produced. Program fd or -errno; the verifier
 * log goes to stderr when verbose. */
int sf_chain_load(const struct sf_layout *l, const struct c2e_ebpf *prog,
		  bool verbose);

/* ---- runtime.c ----------------------------------------------------------- */

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
	bool table_pending;          /* defer_tables: the row's arches from */
	uint8_t table_next_arch;     /* table_next_arch on are all "run" */
	bool busy;                   /* not collectable (an operation uses it) */
	int idx;                     /* state file index */
};

struct sf_cg_app {                   /* one sf_cg_append entry */
	uint32_t from;
	struct sf_node *to;
};

struct sf_cgroup {
	struct sf_cgroup *next;
	uint64_t id;                 /* kernfs id = inode of the directory */
	char *path;
	struct sf_node *base;        /* the cgroup's own filters, as a chain */
	struct sf_cg_app *app;
	size_t n_app, cap_app;
};

#define SF_RT_HASH_BUCKETS 1024

struct sf_runtime {
	struct sfilter_bpf *skel;    /* NULL when adopted from pins */
	/* What the runtime uses, from the skeleton or from the pins. */
	int fd_tasks, fd_progs, fd_table, fd_pending, fd_events;
	int fd_cgroups, fd_cgapp, fd_cgpend, fd_iter, fd_bss, fd_tsync;
	bool own_fds;                /* adopted: the fds above are ours */
	int fd_sync, fd_sync_inner;  /* sf_rt_quiesce()'s map-in-map */
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
	bool iter_filter;            /* the kernel takes bpf_iter_link_info.task.pid_fd */
	struct sf_layout layout;
	struct sf_const *table;      /* sf_table, mmap'd */
	size_t table_bytes;
	struct sf_node *slots[SF_MAX_CHAINS];
	struct sf_node *buckets[SF_RT_HASH_BUCKETS];
	uint32_t next_id;
	struct ring_buffer *rb;
	sf_event_fn fn;
	void *fn_ctx;
	pthread_mutex_t lock;
};

struct sf_rt_recs {                  /* one record per task an iteration saw */
	struct sf_iter_rec *r;
	size_t n;
};

/* Returns once every run of a BPF program (sys_enter dispatcher, chain,
 * LSM hook) that began before the call has ended. 0 or -errno. */
int sf_rt_quiesce(struct sf_runtime *rt);
/* One sf_iter pass over tgid's group (0: every task), applying pending entries. */
int sf_rt_iter_run(struct sf_runtime *rt, pid_t tgid, bool all, struct sf_rt_recs *out);
/* Whether the filter id is in n's chain. */
bool sf_rt_path_has(const struct sf_node *n, uint32_t id);
/* The chain node (parent, insns, flags): an existing one or a new one; NULL: ENOMEM. */
struct sf_node *sf_rt_node_get(struct sf_runtime *rt, struct sf_node *parent,
			       const struct sock_filter *insns, size_t len,
			       unsigned int flags, uint32_t id, int kcount);
/* Generates, loads and installs n's chain program in a slot. 0 or -errno. */
int sf_rt_node_load(struct sf_runtime *rt, struct sf_node *node);
/* Rewrites the state file (pinned runtimes only). */
void sf_rt_save_state(struct sf_runtime *rt);

/* ---- cgroup.c ---------------------------------------------------------- */

/* Whether an attached cgroup's base chain or prepared append is in slot. */
bool sf_rt_cg_uses_slot(struct sf_runtime *rt, int slot);
/* Drops the prepared appends that start from slot (the slot is going away). */
void sf_rt_cg_forget_slot(struct sf_runtime *rt, int slot);
/* Sets c's kernel maps to its base chain and drops its prepared appends. */
void sf_rt_cg_sync(struct sf_runtime *rt, struct sf_cgroup *c);

#endif
