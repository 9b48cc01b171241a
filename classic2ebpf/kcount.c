// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * How long the kernel's own classic-to-eBPF conversion of a seccomp filter
 * is: the prog->len that seccomp_attach_filter() (kernel/seccomp.c) sums
 *
 *	total_insns = filter->prog->len;
 *	for (walker = current->seccomp.filter; walker; walker = walker->prev)
 *		total_insns += walker->prog->len + 4;
 *	if (total_insns > MAX_INSNS_PER_PATH)	// 32768
 *		return -ENOMEM;
 *
 * The path to that length, read from the kernel source of v6.1 and v6.18:
 *
 *  seccomp_prepare_filter()
 *   -> bpf_prog_create_from_user(.., seccomp_check_filter, ..)
 *      -> bpf_prepare_filter(): bpf_check_classic(), then the seccomp
 *         "trans" hook seccomp_check_filter(), which REWRITES in place:
 *           LD  | W | ABS  ->  LDX | W | ABS       (k stays: a ctx offset)
 *           LD  | W | LEN  ->  LD  | IMM, k = 64   (sizeof seccomp_data)
 *           LDX | W | LEN  ->  LDX | IMM, k = 64
 *         and refuses everything outside its allow-list (MOD, LD H/B ABS,
 *         IND loads, LDX B MSH, ...).
 *      -> bpf_jit_compile() is the classic-only JIT: a no-op on x86.
 *      -> bpf_migrate_filter(): bpf_convert_filter(.., NULL, &new_len, ..)
 *         computes the length, fp->len = new_len, then converts; finally
 *         bpf_prog_select_runtime() JITs the eBPF (no length change unless
 *         constant blinding is on, see below).
 *
 * bpf_convert_filter() is byte-for-byte the same in v6.1 and v6.18 for
 * every instruction seccomp lets through, so one rule set serves both and
 * no runtime version switch is needed. (Kernels before the 2021 fix
 * "bpf: Fix 32 bit src register truncation on div/mod", i.e. before
 * 5.16 and the stable trees it was backported to, emitted 4 rather than 5
 * instructions for DIV X; that is older than anything we support.)
 *
 * Not modelled: with net.core.bpf_jit_harden = 2 (or = 1 for a caller
 * without CAP_SYS_ADMIN) the x86 JIT's bpf_jit_blind_constants() replaces
 * the program by a longer, blinded copy and seccomp then sums that copy's
 * length. The default (0) and root with 1 are exact.
 */
#include "c2e.h"

#include <errno.h>

/* The prologue bpf_convert_filter() emits: A ^= A, X ^= X, ctx = r1. Its
 * length pass counts it as "new_insn += 3". The 4 more "seen_ld_abs"
 * instructions (cached skb->data and headlen) follow only after a packet
 * load (LD H/B ABS, any IND load, LDX B MSH) that convert_bpf_ld_abs()
 * handles, and seccomp_check_filter() refuses all of those before the
 * conversion; LD W ABS was already rewritten to LDX W ABS, which is not a
 * packet load. So for seccomp the prologue is always 3. */
#define KERNEL_PROLOGUE 3
_Static_assert(KERNEL_PROLOGUE + 1 == C2E_MIN_KERNEL_INSNS,
	       "a lone ret a converts to the prologue and the exit");

/* Length of one converted classic instruction, or -EINVAL for an opcode
 * the seccomp path never hands to the converter. Mirrors the switch in
 * bpf_convert_filter() (net/core/filter.c), applied to the opcode as
 * seccomp_check_filter() left it. */
static int converted_len(const struct sock_filter *f, size_t pc, size_t len)
{
	switch (f->code) {
	/* "All arithmetic insns and skb loads map as-is": one
	 * BPF_RAW_INSN(code, A, X, 0, k). convert_bpf_extensions() only
	 * fires for BPF_LD|BPF_ABS, which seccomp no longer has. */
	case BPF_ALU | BPF_ADD | BPF_K:
	case BPF_ALU | BPF_ADD | BPF_X:
	case BPF_ALU | BPF_SUB | BPF_K:
	case BPF_ALU | BPF_SUB | BPF_X:
	case BPF_ALU | BPF_MUL | BPF_K:
	case BPF_ALU | BPF_MUL | BPF_X:
	case BPF_ALU | BPF_DIV | BPF_K:
	case BPF_ALU | BPF_AND | BPF_K:
	case BPF_ALU | BPF_AND | BPF_X:
	case BPF_ALU | BPF_OR | BPF_K:
	case BPF_ALU | BPF_OR | BPF_X:
	case BPF_ALU | BPF_XOR | BPF_K:
	case BPF_ALU | BPF_XOR | BPF_X:
	case BPF_ALU | BPF_LSH | BPF_K:
	case BPF_ALU | BPF_LSH | BPF_X:
	case BPF_ALU | BPF_RSH | BPF_K:
	case BPF_ALU | BPF_RSH | BPF_X:
	case BPF_ALU | BPF_NEG:
		return 1;

	/* DIV X (and MOD X, which seccomp refuses) get a guard first:
	 * MOV32 X,X (the 32-bit truncation fix); JNE X,0,+2; A ^= A; EXIT;
	 * then the division itself. */
	case BPF_ALU | BPF_DIV | BPF_X:
		return 5;

	/* LD W ABS after seccomp_check_filter() is BPF_LDX|BPF_W|BPF_ABS:
	 * "Access seccomp_data fields", one LDX_MEM(W, A, CTX, k). */
	case BPF_LD | BPF_W | BPF_ABS:
	/* LD/LDX W LEN became LD/LDX IMM: one MOV32_IMM. */
	case BPF_LD | BPF_W | BPF_LEN:
	case BPF_LDX | BPF_W | BPF_LEN:
	/* LD/LDX IMM: MOV32_IMM. LD/LDX MEM: LDX_MEM from the stack.
	 * ST/STX: STX_MEM to the stack. TAX/TXA: MOV64_REG. */
	case BPF_LD | BPF_IMM:
	case BPF_LDX | BPF_IMM:
	case BPF_LD | BPF_MEM:
	case BPF_LDX | BPF_MEM:
	case BPF_ST:
	case BPF_STX:
	case BPF_MISC | BPF_TAX:
	case BPF_MISC | BPF_TXA:
		return 1;

	/* "RET_K is remapped into 2 insns" (MOV32 r0, k; EXIT); RET A is
	 * the EXIT alone, A already being r0. */
	case BPF_RET | BPF_K:
		return 2;
	case BPF_RET | BPF_A:
		return 1;

	/* JA: one BPF_JMP|BPF_JA whatever k is, even k == 0. BPF_EMIT_JMP
	 * refuses a target past the end. */
	case BPF_JMP | BPF_JA:
		if (f->k >= len - pc - 1)
			return -EINVAL;
		return 1;

	case BPF_JMP | BPF_JEQ | BPF_K:
	case BPF_JMP | BPF_JEQ | BPF_X:
	case BPF_JMP | BPF_JGT | BPF_K:
	case BPF_JMP | BPF_JGT | BPF_X:
	case BPF_JMP | BPF_JGE | BPF_K:
	case BPF_JMP | BPF_JGE | BPF_X:
	case BPF_JMP | BPF_JSET | BPF_K:
	case BPF_JMP | BPF_JSET | BPF_X: {
		int n = 0;

		if (pc + f->jt + 1 >= len || pc + f->jf + 1 >= len)
			return -EINVAL;
		/* "BPF immediates are signed": a K with the top bit set
		 * is first zero-extended into the temporary register
		 * (MOV32_IMM TMP, k) and the compare uses the register. */
		if (BPF_SRC(f->code) == BPF_K && (int32_t)f->k < 0)
			n++;
		/* "Common case where 'jump_false' is next insn": one
		 * conditional jump. This includes jt == jf == 0. */
		if (f->jf == 0)
			return n + 1;
		/* "Convert some jumps when 'jump_true' is next insn": JEQ,
		 * JGT, JGE invert to JNE, JLE, JLT. JSET has no inverse
		 * and falls to jmp_rest. */
		if (f->jt == 0 && BPF_OP(f->code) != BPF_JSET)
			return n + 1;
		/* jmp_rest: "Other jumps are mapped into two insns: Jxx
		 * and JA." */
		return n + 2;
	}

	default:
		/* seccomp_check_filter()'s default: -EINVAL. */
		return -EINVAL;
	}
}

int c2e_kernel_insn_count(const struct sock_filter *insns, size_t len)
{
	size_t pc;
	int total = KERNEL_PROLOGUE;

	/* bpf_check_basics_ok() / bpf_convert_filter(): 1..BPF_MAXINSNS. */
	if (!insns || len == 0 || len > C2E_MAX_INSNS)
		return -EINVAL;
	for (pc = 0; pc < len; pc++) {
		int n = converted_len(&insns[pc], pc, len);

		if (n < 0)
			return n;
		total += n;
	}
	return total;
}
