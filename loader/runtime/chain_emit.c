// SPDX-License-Identifier: GPL-2.0
/*
 * Chain programs: one BPF_PROG_TYPE_TRACING program per distinct chain,
 * generated at attach time around c2e_emit_body() bodies, and the kernel
 * layout they need, read from BTF.
 *
 * Stack frame (offsets from r10):
 *   -64 .. -1   struct seccomp_data, filled as populate_seccomp_data() does
 *   -72         the tp_btf context (spilled pointer, for the tail call)
 *   -76         rank of the best verdict so far (4 mod 8: plain bytes to
 *               the verifier, so the fold stays prunable; see translate.c)
 *   -84         id of the filter that decided it
 *   -92         that filter's attach flags
 *   -224 .. -96 scratch memory M[0..15] of the body being run
 * r9 holds the best verdict; the bodies preserve r6 (= &seccomp_data) and
 * r9 and clobber r0, r7, r8.
 */
#include "internal.h"
#include "sfilter.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#define OFF_SD      (-64)
#define OFF_CTX     (-72)
#define OFF_RANK    (-76)
#define OFF_WIN_ID  (-84)
#define OFF_WIN_FL  (-92)
#define SCRATCH_OFF 96
#define OFF_CRANK   (-228)
#define OFF_CRET    (-236)
#define OFF_CID     (-244)

/* ---- layout from BTF ---------------------------------------------------- */

static const struct btf_member *find_member(const struct btf *btf, int type_id,
					    const char *name, int *off)
{
	const struct btf_type *t = btf__type_by_id(btf, type_id);
	const struct btf_member *m;
	int i;

	if (!t || !btf_is_struct(t))
		return NULL;
	m = btf_members(t);
	for (i = 0; i < btf_vlen(t); i++, m++) {
		if (strcmp(btf__name_by_offset(btf, m->name_off), name) == 0) {
			*off = btf_member_bit_offset(t, i) / 8;
			return m;
		}
	}
	return NULL;
}

static int reg_off(const struct btf *btf, int regs_id, const char *name,
		   int *off)
{
	const struct btf_member *m = find_member(btf, regs_id, name, off);

	if (!m || btf__resolve_size(btf, m->type) != 8) {
		fprintf(stderr, "sfilter: BTF: pt_regs.%s missing or not 8 bytes\n", name);
		return -ENOENT;
	}
	return 0;
}

int sf_layout_read(struct sf_layout *l)
{
	struct btf *btf = btf__load_vmlinux_btf();
	const struct btf_member *m;
	int regs, task, ti_off, st_off, err = 0;

	if (!btf)
		return -errno;
	regs = btf__find_by_name_kind(btf, "pt_regs", BTF_KIND_STRUCT);
	task = btf__find_by_name_kind(btf, "task_struct", BTF_KIND_STRUCT);
	l->sys_enter_btf_id = btf__find_by_name_kind(btf, "btf_trace_sys_enter",
						     BTF_KIND_TYPEDEF);
	if (regs < 0 || task < 0 || l->sys_enter_btf_id < 0) {
		fprintf(stderr, "sfilter: BTF: pt_regs, task_struct or btf_trace_sys_enter missing\n");
		err = -ENOENT;
		goto out;
	}
	if ((err = reg_off(btf, regs, "di", &l->di)) ||
	    (err = reg_off(btf, regs, "si", &l->si)) ||
	    (err = reg_off(btf, regs, "dx", &l->dx)) ||
	    (err = reg_off(btf, regs, "r10", &l->r10)) ||
	    (err = reg_off(btf, regs, "r8", &l->r8)) ||
	    (err = reg_off(btf, regs, "r9", &l->r9)) ||
	    (err = reg_off(btf, regs, "bx", &l->bx)) ||
	    (err = reg_off(btf, regs, "cx", &l->cx)) ||
	    (err = reg_off(btf, regs, "bp", &l->bp)) ||
	    (err = reg_off(btf, regs, "ip", &l->ip)))
		goto out;
	m = find_member(btf, task, "thread_info", &ti_off);
	if (!m) {
		err = -ENOENT;
		fprintf(stderr, "sfilter: BTF: task_struct.thread_info missing\n");
		goto out;
	}
	m = find_member(btf, btf__resolve_type(btf, m->type), "status", &st_off);
	if (!m || btf__resolve_size(btf, m->type) != 4) {
		err = -ENOENT;
		fprintf(stderr, "sfilter: BTF: thread_info.status missing or not 4 bytes\n");
		goto out;
	}
	l->status = ti_off + st_off;
out:
	btf__free(btf);
	return err;
}

/* ---- emission ----------------------------------------------------------- */

static int emit(struct c2e_ebpf *p, uint8_t code, uint8_t dst, uint8_t src,
		int16_t off, int32_t imm)
{
	if (p->len == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 1024;
		struct bpf_insn *n = realloc(p->insns, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		p->insns = n;
		p->cap = cap;
	}
	p->insns[p->len++] = (struct bpf_insn){ .code = code, .dst_reg = dst,
		.src_reg = src, .off = off, .imm = imm };
	return 0;
}

#define E(...) do { if ((err = emit(out, __VA_ARGS__))) return err; } while (0)
#define LD_MAP(reg, fd) do { E(BPF_LD | BPF_DW | BPF_IMM, reg, BPF_PSEUDO_MAP_FD, 0, fd); \
			     E(0, 0, 0, 0, 0); } while (0)
#define JUMP_HERE(at) (out->insns[at].off = (int16_t)(out->len - (at) - 1))

/* struct seccomp_data on the stack, filled as populate_seccomp_data() does,
 * and the fold's start: r6 = &seccomp_data, r9 = ALLOW, rank ALLOW, no
 * winner (nor complain verdict) yet. */
static int emit_seccomp_data(const struct sf_layout *l, bool complain, struct c2e_ebpf *out)
{
	const int native[6] = { l->di, l->si, l->dx, l->r10, l->r8, l->r9 };
	const int compat[6] = { l->bx, l->cx, l->dx, l->si, l->di, l->bp };
	size_t i, j_compat, j_common;
	int err;

	E(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_1, OFF_CTX, 0);
	E(BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_7, BPF_REG_1, 0, 0);  /* regs */
	E(BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_1, 8, 0);  /* id */
	E(BPF_STX | BPF_MEM | BPF_W, BPF_REG_10, BPF_REG_1, OFF_SD + 0, 0);
	E(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_current_task_btf);
	E(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_1, BPF_REG_0, l->status, 0);
	E(BPF_ALU | BPF_AND | BPF_K, BPF_REG_1, 0, 0, SF_TS_COMPAT);
	j_compat = out->len;
	E(BPF_JMP32 | BPF_JNE | BPF_K, BPF_REG_1, 0, 0, 0);
	/* syscall_get_arch(): x86_64 unless TS_COMPAT; the x32 bit stays in nr */
	E(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, OFF_SD + 4, (int32_t)SF_AUDIT_ARCH_X86_64);
	for (i = 0; i < 6; i++) {
		E(BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_7, native[i], 0);
		E(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_1, OFF_SD + 16 + 8 * i, 0);
	}
	j_common = out->len;
	E(BPF_JMP | BPF_JA, 0, 0, 0, 0);
	JUMP_HERE(j_compat);
	E(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, OFF_SD + 4, (int32_t)SF_AUDIT_ARCH_I386);
	for (i = 0; i < 6; i++) {
		/* syscall_get_arguments() for compat: 32-bit registers */
		E(BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_7, compat[i], 0);
		E(BPF_ALU | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_1, 0, 0);
		E(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_1, OFF_SD + 16 + 8 * i, 0);
	}
	JUMP_HERE(j_common);
	E(BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_7, l->ip, 0);
	E(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_1, OFF_SD + 8, 0);
	E(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_10, 0, 0);
	E(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_6, 0, 0, OFF_SD);
	E(BPF_ALU | BPF_MOV | BPF_K, BPF_REG_9, 0, 0, (int32_t)SECCOMP_RET_ALLOW);
	E(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, OFF_RANK, (int32_t)SECCOMP_RET_ALLOW);
	E(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, OFF_WIN_ID, 0);
	E(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, OFF_WIN_FL, 0);
	if (complain) {
		E(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, OFF_CRANK, (int32_t)SECCOMP_RET_ALLOW);
		E(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, OFF_CRET, (int32_t)SECCOMP_RET_ALLOW);
		E(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, OFF_CID, 0);
	}
	return 0;
}

/* Every filter's body, newest first as seccomp_run_filters() walks; a
 * strictly lower rank wins. Complain filters fold into a verdict of their
 * own, which never decides. */
static int emit_fold(const struct sf_chain_filter *f, size_t n, struct c2e_ebpf *out)
{
	size_t i;
	int err;

	for (i = n; i-- > 0;) {
		err = c2e_emit_body_flags(f[i].insns, f[i].len, SCRATCH_OFF,
					  C2E_EMIT_SEARCH, out);
		if (err)
			return err;
		E(BPF_ALU | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_0, 0, 0);
		E(BPF_ALU | BPF_AND | BPF_K, BPF_REG_1, 0, 0, (int32_t)C2E_RET_ACTION_FULL);
		if (f[i].flags & SF_FLAG_COMPLAIN) {
			E(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_2, BPF_REG_10, OFF_CRANK, 0);
			E(BPF_JMP32 | BPF_JSGE | BPF_X, BPF_REG_1, BPF_REG_2, 3, 0);
			E(BPF_STX | BPF_MEM | BPF_W, BPF_REG_10, BPF_REG_1, OFF_CRANK, 0);
			E(BPF_STX | BPF_MEM | BPF_W, BPF_REG_10, BPF_REG_0, OFF_CRET, 0);
			E(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, OFF_CID, (int32_t)f[i].id);
			continue;
		}
		E(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_2, BPF_REG_10, OFF_RANK, 0);
		E(BPF_JMP32 | BPF_JSGE | BPF_X, BPF_REG_1, BPF_REG_2, 4, 0);
		E(BPF_ALU | BPF_MOV | BPF_X, BPF_REG_9, BPF_REG_0, 0, 0);
		E(BPF_STX | BPF_MEM | BPF_W, BPF_REG_10, BPF_REG_1, OFF_RANK, 0);
		E(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, OFF_WIN_ID, (int32_t)f[i].id);
		E(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, OFF_WIN_FL, f[i].flags);
	}
	return 0;
}

/* ALLOW (and, with complain filters, a complain ALLOW) returns; any other
 * verdict goes into the task's storage and tail-calls sf_enforce; a task
 * without storage, or a missing sf_enforce, is killed. */
static int emit_verdict(bool complain, int tasks_fd, int progs_fd, struct c2e_ebpf *out)
{
	size_t j_allow, j_nostore, j_enf;
	int err;

	/* ALLOW: nothing to record. */
	E(BPF_ALU | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_9, 0, 0);
	E(BPF_ALU | BPF_AND | BPF_K, BPF_REG_1, 0, 0, (int32_t)C2E_RET_ACTION_FULL);
	if (complain) {
		/* Enforced ALLOW and complain ALLOW: nothing to record. */
		j_enf = out->len;
		E(BPF_JMP32 | BPF_JNE | BPF_K, BPF_REG_1, 0, 0, (int32_t)SECCOMP_RET_ALLOW);
		E(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_1, BPF_REG_10, OFF_CID, 0);
		j_allow = out->len;
		E(BPF_JMP32 | BPF_JEQ | BPF_K, BPF_REG_1, 0, 0, 0);
		JUMP_HERE(j_enf);
	} else {
		j_allow = out->len;
		E(BPF_JMP32 | BPF_JEQ | BPF_K, BPF_REG_1, 0, 0, (int32_t)SECCOMP_RET_ALLOW);
	}
	E(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_current_task_btf);
	E(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_0, 0, 0);
	LD_MAP(BPF_REG_1, tasks_fd);
	E(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_3, 0, 0, 0);
	E(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_4, 0, 0, 0);
	E(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_task_storage_get);
	j_nostore = out->len;
	E(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 0, 0);
	E(BPF_STX | BPF_MEM | BPF_W, BPF_REG_0, BPF_REG_9,
	  offsetof(struct sf_task, ret), 0);
	E(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_1, BPF_REG_10, OFF_WIN_ID, 0);
	E(BPF_STX | BPF_MEM | BPF_W, BPF_REG_0, BPF_REG_1,
	  offsetof(struct sf_task, filter_id), 0);
	E(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_1, BPF_REG_10, OFF_WIN_FL, 0);
	E(BPF_STX | BPF_MEM | BPF_H, BPF_REG_0, BPF_REG_1,
	  offsetof(struct sf_task, flags), 0);
	if (complain) {
		E(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_1, BPF_REG_10, OFF_CRET, 0);
		E(BPF_STX | BPF_MEM | BPF_W, BPF_REG_0, BPF_REG_1,
		  offsetof(struct sf_task, cret), 0);
		E(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_1, BPF_REG_10, OFF_CID, 0);
		E(BPF_STX | BPF_MEM | BPF_W, BPF_REG_0, BPF_REG_1,
		  offsetof(struct sf_task, cfilter_id), 0);
	}
	E(BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_10, OFF_CTX, 0);
	LD_MAP(BPF_REG_2, progs_fd);
	E(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_3, 0, 0, SF_SLOT_ENFORCE);
	E(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_tail_call);
	/* No storage or no enforce program: fail closed. */
	JUMP_HERE(j_nostore);
	E(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_1, 0, 0, 9 /* SIGKILL */);
	E(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_send_signal);
	JUMP_HERE(j_allow);
	E(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0);
	E(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	return 0;
}

int sf_chain_emit(const struct sf_layout *l, const struct sf_chain_filter *f,
		  size_t n, int tasks_fd, int progs_fd, struct c2e_ebpf *out)
{
	bool complain = false;
	size_t i;
	int err;

	out->len = 0;
	if (n == 0)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (f[i].flags & SF_FLAG_COMPLAIN)
			complain = true;
	err = emit_seccomp_data(l, complain, out);
	if (!err)
		err = emit_fold(f, n, out);
	if (!err)
		err = emit_verdict(complain, tasks_fd, progs_fd, out);
	return err;
}

int sf_chain_load(const struct sf_layout *l, const struct c2e_ebpf *prog,
		  bool verbose)
{
	LIBBPF_OPTS(bpf_prog_load_opts, o,
		    .expected_attach_type = BPF_TRACE_RAW_TP,
		    .attach_btf_id = l->sys_enter_btf_id);
	static char log[1 << 20];
	int fd, err;

	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "sf_chain", "GPL",
			   prog->insns, prog->len, &o);
	if (fd >= 0)
		return fd;
	err = -errno;
	if (verbose) {
		LIBBPF_OPTS(bpf_prog_load_opts, o2,
			    .expected_attach_type = BPF_TRACE_RAW_TP,
			    .attach_btf_id = l->sys_enter_btf_id,
			    .log_buf = log, .log_size = sizeof(log), .log_level = 1);
		size_t n;

		log[0] = 0;
		fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "sf_chain", "GPL",
				   prog->insns, prog->len, &o2);
		if (fd >= 0)
			return fd;
		n = strlen(log);
		fprintf(stderr, "sfilter: chain program (%zu insns) refused: %s\n%s\n",
			prog->len, strerror(-err), log + (n > 4000 ? n - 4000 : 0));
	}
	return err;
}
