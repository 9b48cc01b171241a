// SPDX-License-Identifier: GPL-2.0-only
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
 *   -228 .. -244 the complain filters' fold (as -76 .. -92)
 *   -248        the task's compat bit (chains with 2012-interface filters)
 *   -464 .. -249 struct user_regs_struct (216 bytes x86-64, or 68 i386),
 *               as ptrace(PTRACE_GETREGS) shows it at syscall entry
 *   -468        a shadow filter's verdict that differs from the enforced one
 *   -472        that shadow filter's id (0: none yet; the newest one logs)
 *   -476        the classic index of its ret
 *   -480        the ret index the last C2E_EMIT_RET_INDEX body left in w1
 *   -484        the sf_hits key being counted
 * r9 holds the best verdict; the bodies preserve r6 (= &seccomp_data, or
 * &user_regs_struct while a 2012-interface body runs) and r9 and clobber
 * r0, r7, r8.
 */
#include "grow.h"
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
#include <seccomp.h>
#include <linux/audit.h>
#include <asm/unistd.h>

/* bpf/sfilter.h writes these out for the BPF side, where vmlinux.h has no
 * macros; the chain programs emitted here and the BPF programs must agree
 * with the kernel's seccomp_data and seccomp(2)'s flags. */
_Static_assert(SF_AUDIT_ARCH_X86_64 == AUDIT_ARCH_X86_64 &&
	       SF_AUDIT_ARCH_I386 == AUDIT_ARCH_I386 &&
	       SF_X32_BIT == __X32_SYSCALL_BIT,
	       "bpf/sfilter.h's arches and x32 bit are the UAPI's");
_Static_assert(SF_FLAG_TSYNC == SECCOMP_FILTER_FLAG_TSYNC &&
	       SF_FLAG_LOG == SECCOMP_FILTER_FLAG_LOG,
	       "bpf/sfilter.h's low flags are seccomp(2)'s");

#define OFF_SD      (-64)
#define OFF_CTX     (-72)
#define OFF_RANK    (-76)
#define OFF_WIN_ID  (-84)
#define OFF_WIN_FL  (-92)
#define SCRATCH_OFF 96
#define OFF_CRANK   (-228)
#define OFF_CRET    (-236)
#define OFF_CID     (-244)
#define OFF_COMPAT  (-248)
#define OFF_REGS    (-464)
#define OFF_SRET    (-468)
#define OFF_SID     (-472)
#define OFF_SINSN   (-476)
#define OFF_RETIDX  (-480)
#define OFF_HITKEY  (-484)

/* ---- emission ----------------------------------------------------------- */

#define E(...) do { if ((err = c2e_ebpf_emit(out, __VA_ARGS__))) return err; } while (0)
#define LD_MAP(reg, fd) do { E(BPF_LD | BPF_DW | BPF_IMM, reg, BPF_PSEUDO_MAP_FD, 0, fd); \
			     E(0, 0, 0, 0, 0); } while (0)
#define JUMP_HERE(at) (out->insns[at].off = (int16_t)(out->len - (at) - 1))

/* struct seccomp_data on the stack, filled as populate_seccomp_data() does,
 * and the fold's start: r6 = &seccomp_data, r9 = ALLOW, rank ALLOW, no
 * winner (nor complain verdict) yet. */
static int emit_seccomp_data(const struct sf_layout *l, bool complain, bool shadow,
			     struct c2e_ebpf *out)
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
	E(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, OFF_SD + 4, (int32_t)C2E_AUDIT_ARCH_X86_64);
	for (i = 0; i < 6; i++) {
		E(BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_7, native[i], 0);
		E(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_1, OFF_SD + 16 + 8 * i, 0);
	}
	j_common = out->len;
	E(BPF_JMP | BPF_JA, 0, 0, 0, 0);
	JUMP_HERE(j_compat);
	E(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, OFF_SD + 4, (int32_t)C2E_AUDIT_ARCH_I386);
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
	if (shadow)
		E(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, OFF_SID, 0);
	return 0;
}

/* One register into the user_regs_struct on the stack: size bytes from
 * src + off (src: pt_regs in r7 or the task in r8), stored as a slot of
 * 8 (x86-64) or 4 (i386) bytes. */
static int emit_reg(uint8_t src, int off, int size, int slot, int width,
		    struct c2e_ebpf *out)
{
	int err;

	E(BPF_LDX | BPF_MEM | (size == 2 ? BPF_H : BPF_DW), BPF_REG_1, src, off, 0);
	E(BPF_STX | BPF_MEM | (width == 8 ? BPF_DW : BPF_W), BPF_REG_10, BPF_REG_1,
	  OFF_REGS + slot * width, 0);
	return 0;
}

/* struct user_regs_struct as ptrace(PTRACE_GETREGS) shows it at syscall
 * entry (rax is -ENOSYS there, the number in orig_rax), in the layout of
 * the call's ABI, and the compat bit for the filters' ABI check. The fs
 * and gs bases and the selectors come from task->thread, which is what
 * the kernel saved: a base a task changed with WRFSBASE/WRGSBASE since it
 * was last scheduled shows its older value. r7 = pt_regs on entry. */
static int emit_user_regs(const struct sf_layout *l, struct c2e_ebpf *out)
{
	/* i386 order: ebx ecx edx esi edi ebp eax xds xes xfs xgs orig_eax
	 * eip xcs eflags esp xss; < 0: task->thread field -1 - index. */
	static const int i386[17] = { 5, 11, 12, 13, 14, 4, 10, -3, -4, -5, -6,
				      15, 16, 17, 18, 19, 20 };
	size_t j_compat, j_done;
	int i, err;

	E(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_current_task_btf);
	E(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_8, BPF_REG_0, 0, 0);
	E(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_1, BPF_REG_8, l->status, 0);
	E(BPF_ALU | BPF_AND | BPF_K, BPF_REG_1, 0, 0, SF_TS_COMPAT);
	E(BPF_STX | BPF_MEM | BPF_W, BPF_REG_10, BPF_REG_1, OFF_COMPAT, 0);
	j_compat = out->len;
	E(BPF_JMP32 | BPF_JNE | BPF_K, BPF_REG_1, 0, 0, 0);
	for (i = 0; i < SF_RFC_PT_REGS; i++) {
		int size = i == SF_RFC_CS || i == SF_RFC_SS ? 2 : 8;

		if ((err = emit_reg(BPF_REG_7, l->rfc_reg[i], size, i, 8, out)))
			return err;
	}
	for (i = 0; i < SF_RFC_THREAD; i++)
		if ((err = emit_reg(BPF_REG_8, l->rfc_thread[i], i < 2 ? 8 : 2,
				    SF_RFC_PT_REGS + i, 8, out)))
			return err;
	j_done = out->len;
	E(BPF_JMP | BPF_JA, 0, 0, 0, 0);
	JUMP_HERE(j_compat);
	for (i = 0; i < 17; i++) {
		int r = i386[i];

		if (r >= 0)
			err = emit_reg(BPF_REG_7, l->rfc_reg[r],
				       r == SF_RFC_CS || r == SF_RFC_SS ? 2 : 8, i, 4, out);
		else
			err = emit_reg(BPF_REG_8, l->rfc_thread[-1 - r], 2, i, 4, out);
		if (err)
			return err;
	}
	JUMP_HERE(j_done);
	return 0;
}

/* Folds w0, a filter's verdict, into the chain's by the kernel's rule
 * (c2e_emit_fold()), keeping who decided. Complain filters fold into a
 * verdict of their own, which never decides. */
static int emit_fold_one(uint32_t id, uint16_t flags, struct c2e_ebpf *out)
{
	const struct bpf_insn keep[] = {
		{ .code = BPF_ALU | BPF_MOV | BPF_X, .dst_reg = BPF_REG_9, .src_reg = BPF_REG_0 },
		{ .code = BPF_ST | BPF_MEM | BPF_W, .dst_reg = BPF_REG_10, .off = OFF_WIN_ID,
		  .imm = (int32_t)id },
		{ .code = BPF_ST | BPF_MEM | BPF_W, .dst_reg = BPF_REG_10, .off = OFF_WIN_FL,
		  .imm = flags },
	};
	const struct bpf_insn keep_complain[] = {
		{ .code = BPF_STX | BPF_MEM | BPF_W, .dst_reg = BPF_REG_10, .src_reg = BPF_REG_0,
		  .off = OFF_CRET },
		{ .code = BPF_ST | BPF_MEM | BPF_W, .dst_reg = BPF_REG_10, .off = OFF_CID,
		  .imm = (int32_t)id },
	};

	if (flags & SF_FLAG_COMPLAIN)
		return c2e_emit_fold(out, OFF_CRANK, keep_complain,
				     sizeof(keep_complain) / sizeof(keep_complain[0]));
	return c2e_emit_fold(out, OFF_RANK, keep, sizeof(keep) / sizeof(keep[0]));
}

/* A 2012-interface filter: blocked (KILL_PROCESS) when the call comes
 * through the other ABI than the one recorded at attach; else its body
 * runs over struct user_regs_struct and returning the layout's size allows
 * the call, anything else blocks it, ranking as KILL_PROCESS. */
static int emit_rfc_filter(const struct sf_chain_filter *f, unsigned int opts,
			   struct c2e_ebpf *out)
{
	enum c2e_abi abi = (enum c2e_abi)SF_FLAGS_ABI(f->flags);
	size_t j_abi;
	int err;

	E(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_1, BPF_REG_10, OFF_COMPAT, 0);
	j_abi = out->len;
	E(BPF_JMP32 | (abi == C2E_ABI_RFC_I386 ? BPF_JEQ : BPF_JNE) | BPF_K,
	  BPF_REG_1, 0, 0, 0);
	E(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_10, 0, 0);
	E(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_6, 0, 0, OFF_REGS);
	err = c2e_emit_body_abi(f->insns, f->len, abi, SCRATCH_OFF, opts, out);
	if (err)
		return err;
	E(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_10, 0, 0);
	E(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_6, 0, 0, OFF_SD);
	E(BPF_JMP32 | BPF_JEQ | BPF_K, BPF_REG_0, 0, 2, (int32_t)c2e_abi_data_size(abi));
	JUMP_HERE(j_abi);
	E(BPF_ALU | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, (int32_t)SECCOMP_RET_KILL_PROCESS);
	E(BPF_JMP | BPF_JA, 0, 0, 1, 0);
	E(BPF_ALU | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, (int32_t)SECCOMP_RET_ALLOW);
	return 0;
}

/* The numbers of execve and execveat as seccomp_data.nr shows them: x86-64
 * and x32 (the x32 bit set, as libseccomp's x32 numbers carry it) in
 * native[], i386 in i386[]. libseccomp's tables own them; -ENOSYS (no
 * chain, so no attach) where it cannot name one. */
static int exec_numbers(int32_t native[4], int32_t i386[2])
{
	static const char *const names[2] = { "execve", "execveat" };
	size_t i;

	for (i = 0; i < 2; i++) {
		native[i] = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, names[i]);
		native[2 + i] = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X32, names[i]);
		i386[i] = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86, names[i]);
		if (native[i] < 0 || i386[i] < 0 || native[2 + i] < 0 ||
		    !((uint32_t)native[2 + i] & C2E_X32_SYSCALL_BIT))
			return -ENOSYS;
	}
	return 0;
}

/* The 2012 rule for execve: it fails unless every 2012-interface filter
 * of the chain was attached with CAP_SYS_ADMIN (SF_FLAG_RFC_EXEC). Folded
 * as the newest unmarked filter's verdict, ERRNO(EPERM) for execve and
 * execveat through any ABI: the lsm tier refuses the exec, the tracepoint
 * tier kills the caller (its fallback for ERRNO). */
static int emit_exec_rule(uint32_t id, uint16_t flags, struct c2e_ebpf *out)
{
	int32_t native[4], i386[2];
	size_t i, deny[6], nd = 0, j_i386, j_done[2];
	int err;

	if ((err = exec_numbers(native, i386)))
		return err;
	E(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_1, BPF_REG_6, 0, 0); /* nr */
	E(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_2, BPF_REG_6, 4, 0); /* arch */
	j_i386 = out->len;
	E(BPF_JMP32 | BPF_JNE | BPF_K, BPF_REG_2, 0, 0, (int32_t)C2E_AUDIT_ARCH_X86_64);
	for (i = 0; i < 4; i++) {
		deny[nd++] = out->len;
		E(BPF_JMP32 | BPF_JEQ | BPF_K, BPF_REG_1, 0, 0, native[i]);
	}
	j_done[0] = out->len;
	E(BPF_JMP | BPF_JA, 0, 0, 0, 0);
	JUMP_HERE(j_i386);
	for (i = 0; i < 2; i++) {
		deny[nd++] = out->len;
		E(BPF_JMP32 | BPF_JEQ | BPF_K, BPF_REG_1, 0, 0, i386[i]);
	}
	E(BPF_ALU | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, (int32_t)SECCOMP_RET_ALLOW);
	j_done[1] = out->len;
	E(BPF_JMP | BPF_JA, 0, 0, 0, 0);
	for (i = 0; i < nd; i++)
		JUMP_HERE(deny[i]);
	E(BPF_ALU | BPF_MOV | BPF_K, BPF_REG_0, 0, 0,
	  (int32_t)(SECCOMP_RET_ERRNO | EPERM));
	E(BPF_JMP | BPF_JA, 0, 0, 1, 0);
	JUMP_HERE(j_done[0]);
	E(BPF_ALU | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, (int32_t)SECCOMP_RET_ALLOW);
	JUMP_HERE(j_done[1]);
	return emit_fold_one(id, flags, out);
}

/* After a C2E_EMIT_RET_INDEX body: w1 (the ret's index) to the stack and,
 * for a counted filter, sf_hits[base + index] += 1 on this CPU. w0, the
 * verdict, is kept in r8 across the lookup (the body's clobbers are free
 * here). */
static int emit_count(const struct sf_chain_filter *f, int hits_fd,
		      struct c2e_ebpf *out)
{
	int err;

	E(BPF_STX | BPF_MEM | BPF_W, BPF_REG_10, BPF_REG_1, OFF_RETIDX, 0);
	if (!(f->flags & SF_FLAG_COUNT))
		return 0;
	E(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_8, BPF_REG_0, 0, 0);
	E(BPF_ALU | BPF_ADD | BPF_K, BPF_REG_1, 0, 0, (int32_t)f->hits_base);
	E(BPF_STX | BPF_MEM | BPF_W, BPF_REG_10, BPF_REG_1, OFF_HITKEY, 0);
	LD_MAP(BPF_REG_1, hits_fd);
	E(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0);
	E(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, OFF_HITKEY);
	E(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem);
	E(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 3, 0);
	E(BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_0, 0, 0);
	E(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_1, 0, 0, 1);
	E(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_0, BPF_REG_1, 0, 0);
	E(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_0, BPF_REG_8, 0, 0);
	return 0;
}

/* A shadow filter's w0 against the enforced verdict r9: when no newer
 * shadow filter differed yet and this one differs in action, or in the
 * data of an action that carries it (C2E_DATA_ACTIONS; chains.c's
 * same_verdict() the same in C), it is recorded (verdict, id, ret index). */
static int emit_shadow_cmp(uint32_t id, struct c2e_ebpf *out)
{
	static const uint32_t with_data[] = { C2E_DATA_ACTIONS };
	const size_t nd = sizeof(with_data) / sizeof(with_data[0]);
	size_t i, j_seen, j_rec, j_data[sizeof(with_data) / sizeof(with_data[0])], j_same;
	int err;

	E(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_1, BPF_REG_10, OFF_SID, 0);
	j_seen = out->len;
	E(BPF_JMP32 | BPF_JNE | BPF_K, BPF_REG_1, 0, 0, 0);
	E(BPF_ALU | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_0, 0, 0);
	E(BPF_ALU | BPF_AND | BPF_K, BPF_REG_1, 0, 0, (int32_t)SECCOMP_RET_ACTION_FULL);
	E(BPF_ALU | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_9, 0, 0);
	E(BPF_ALU | BPF_AND | BPF_K, BPF_REG_2, 0, 0, (int32_t)SECCOMP_RET_ACTION_FULL);
	j_rec = out->len;
	E(BPF_JMP32 | BPF_JNE | BPF_X, BPF_REG_1, BPF_REG_2, 0, 0);
	/* Same action: to the data test when it is one that carries data
	 * (the last test inverted: past it when none did). */
	for (i = 0; i < nd; i++) {
		j_data[i] = out->len;
		E(BPF_JMP32 | (i + 1 < nd ? BPF_JEQ : BPF_JNE) | BPF_K, BPF_REG_1, 0, 0,
		  (int32_t)with_data[i]);
	}
	for (i = 0; i + 1 < nd; i++)
		JUMP_HERE(j_data[i]);
	E(BPF_ALU | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_0, 0, 0);
	E(BPF_ALU | BPF_XOR | BPF_X, BPF_REG_1, BPF_REG_9, 0, 0);
	E(BPF_ALU | BPF_AND | BPF_K, BPF_REG_1, 0, 0, (int32_t)SECCOMP_RET_DATA);
	j_same = out->len;
	E(BPF_JMP32 | BPF_JEQ | BPF_K, BPF_REG_1, 0, 0, 0);
	JUMP_HERE(j_rec);
	E(BPF_STX | BPF_MEM | BPF_W, BPF_REG_10, BPF_REG_0, OFF_SRET, 0);
	E(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, OFF_SID, (int32_t)id);
	E(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_1, BPF_REG_10, OFF_RETIDX, 0);
	E(BPF_STX | BPF_MEM | BPF_W, BPF_REG_10, BPF_REG_1, OFF_SINSN, 0);
	JUMP_HERE(j_seen);
	JUMP_HERE(j_data[nd - 1]);
	JUMP_HERE(j_same);
	return 0;
}

/* One seccomp_data filter's body and what its flags add: counting, and
 * the fold or (shadow) the comparison with the enforced verdict. */
static int emit_filter(const struct sf_chain_filter *f, int hits_fd,
		       unsigned int opts, struct c2e_ebpf *out)
{
	bool idx = f->flags & (SF_FLAG_COUNT | SF_FLAG_SHADOW);
	int err;

	err = c2e_emit_body_flags(f->insns, f->len, SCRATCH_OFF, opts |
				  (idx ? C2E_EMIT_RET_INDEX : 0), out);
	if (!err && idx)
		err = emit_count(f, hits_fd, out);
	if (err)
		return err;
	return f->flags & SF_FLAG_SHADOW ? emit_shadow_cmp(f->id, out) :
	       emit_fold_one(f->id, f->flags, out);
}

/* Every filter's body, newest first as seccomp_run_filters() walks; the
 * shadow filters after all the others, against the final verdict. */
static int emit_fold(const struct sf_chain_filter *f, size_t n, int hits_fd,
		     unsigned int opts, struct c2e_ebpf *out)
{
	size_t i;
	int err;

	for (i = n; i-- > 0;)
		if ((f[i].flags & (SF_FLAG_RFC2012 | SF_FLAG_RFC_EXEC)) == SF_FLAG_RFC2012) {
			err = emit_exec_rule(f[i].id, f[i].flags, out);
			if (err)
				return err;
			break;
		}
	for (i = n; i-- > 0;) {
		if (f[i].flags & SF_FLAG_SHADOW)
			continue;
		if (f[i].flags & SF_FLAG_RFC2012) {
			err = emit_rfc_filter(&f[i], opts, out);
			if (!err)
				err = emit_fold_one(f[i].id, f[i].flags, out);
		} else {
			err = emit_filter(&f[i], hits_fd, opts, out);
		}
		if (err)
			return err;
	}
	for (i = n; i-- > 0;)
		if ((f[i].flags & SF_FLAG_SHADOW) &&
		    (err = emit_filter(&f[i], hits_fd, opts, out)))
			return err;
	return 0;
}

/* Enforced ALLOW with neither a complain verdict nor a differing shadow
 * one: nothing to record (j_allow, a jump to patch to the exit). */
static int emit_allow_test(bool complain, bool shadow, size_t *j_allow,
			   struct c2e_ebpf *out)
{
	size_t j_enf, j_log = 0;
	int err;

	j_enf = out->len;
	E(BPF_JMP32 | BPF_JNE | BPF_K, BPF_REG_1, 0, 0, (int32_t)SECCOMP_RET_ALLOW);
	if (complain && shadow) {
		E(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_1, BPF_REG_10, OFF_CID, 0);
		j_log = out->len;
		E(BPF_JMP32 | BPF_JNE | BPF_K, BPF_REG_1, 0, 0, 0);
	}
	E(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_1, BPF_REG_10, shadow ? OFF_SID : OFF_CID, 0);
	*j_allow = out->len;
	E(BPF_JMP32 | BPF_JEQ | BPF_K, BPF_REG_1, 0, 0, 0);
	JUMP_HERE(j_enf);
	if (j_log)
		JUMP_HERE(j_log);
	return 0;
}

/* A side verdict (complain or shadow) from the stack into the task's storage
 * at r0. */
static int emit_store_side(int from, int to, struct c2e_ebpf *out)
{
	int err;

	E(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_1, BPF_REG_10, from, 0);
	E(BPF_STX | BPF_MEM | BPF_W, BPF_REG_0, BPF_REG_1, to, 0);
	return 0;
}

/* ALLOW (and, with complain or shadow filters, no side verdict to log)
 * returns; any other verdict goes into the task's storage and tail-calls
 * sf_enforce; a task without storage, or a missing sf_enforce, is killed. */
static int emit_verdict(bool complain, bool shadow, int tasks_fd, int progs_fd,
			struct c2e_ebpf *out)
{
	size_t j_allow, j_nostore;
	int err;

	/* ALLOW: nothing to record. */
	E(BPF_ALU | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_9, 0, 0);
	E(BPF_ALU | BPF_AND | BPF_K, BPF_REG_1, 0, 0, (int32_t)SECCOMP_RET_ACTION_FULL);
	if (complain || shadow) {
		if ((err = emit_allow_test(complain, shadow, &j_allow, out)))
			return err;
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
	if (complain && ((err = emit_store_side(OFF_CRET, offsetof(struct sf_task, cret), out)) ||
			 (err = emit_store_side(OFF_CID, offsetof(struct sf_task, cfilter_id), out))))
		return err;
	if (shadow && ((err = emit_store_side(OFF_SRET, offsetof(struct sf_task, sret), out)) ||
		       (err = emit_store_side(OFF_SID, offsetof(struct sf_task, sfilter_id), out)) ||
		       (err = emit_store_side(OFF_SINSN, offsetof(struct sf_task, sinsn), out))))
		return err;
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
		  size_t n, const struct sf_chain_maps *m, bool search,
		  struct c2e_ebpf *out)
{
	unsigned int opts = search ? C2E_EMIT_SEARCH : 0;
	bool complain = false, shadow = false, rfc = false;
	size_t i;
	int err;

	out->len = 0;
	if (n == 0)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (f[i].flags & SF_FLAG_COMPLAIN)
			complain = true;
		if (f[i].flags & SF_FLAG_SHADOW)
			shadow = true;
		if (f[i].flags & SF_FLAG_RFC2012)
			rfc = true;
		if (!SF_FLAGS_SIDE_OK(f[i].flags))
			return -EINVAL;
	}
	err = emit_seccomp_data(l, complain, shadow, out);
	if (!err && rfc)
		err = l->rfc_ok ? emit_user_regs(l, out) : -EOPNOTSUPP;
	if (!err)
		err = emit_fold(f, n, m->hits, opts, out);
	if (!err)
		err = emit_verdict(complain, shadow, m->tasks, m->progs, out);
	return err;
}

int sf_chain_load(const struct sf_layout *l, const struct c2e_ebpf *prog,
		  bool verbose)
{
	LIBBPF_OPTS(bpf_prog_load_opts, o,
		    .expected_attach_type = BPF_TRACE_RAW_TP,
		    .attach_btf_id = l->sys_enter_btf_id);
	/* Each call's own: chains are loaded on more than one thread. */
	size_t log_size = 1 << 20;
	char *log;
	int fd, err;

	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "sf_chain", "GPL",
			   prog->insns, prog->len, &o);
	if (fd >= 0)
		return fd;
	err = -errno;
	if (verbose && (log = calloc(1, log_size))) {
		LIBBPF_OPTS(bpf_prog_load_opts, o2,
			    .expected_attach_type = BPF_TRACE_RAW_TP,
			    .attach_btf_id = l->sys_enter_btf_id,
			    .log_buf = log, .log_size = log_size, .log_level = 1);
		size_t n;

		fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "sf_chain", "GPL",
				   prog->insns, prog->len, &o2);
		if (fd >= 0) {
			free(log);
			return fd;
		}
		n = strlen(log);
		fprintf(stderr, "sfilter: chain program (%zu insns) refused: %s\n%s\n",
			prog->len, strerror(-err), log + (n > 4000 ? n - 4000 : 0));
		free(log);
	}
	return err;
}
