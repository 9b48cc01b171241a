/* SPDX-License-Identifier: GPL-2.0 */
/* Shared between loader/runtime*.c only; not an interface. */
#ifndef SF_RUNTIME_INTERNAL_H
#define SF_RUNTIME_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/filter.h>

#include "c2e.h"

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

#endif
