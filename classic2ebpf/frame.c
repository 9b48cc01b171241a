// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Frames around a body: the test frame (raw tracepoint, seccomp_data as
 * its context), the chain frame (every filter of a stack folded with the
 * kernel's precedence), and the RFC test frame (socket filter, registers
 * copied from the packet to the stack).
 */
#include "xlat.h"
#include "semantics.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int c2e_emit_body(const struct sock_filter *insns, size_t len,
		  int scratch_off, struct c2e_ebpf *out)
{
	return c2e_emit_body_flags(insns, len, scratch_off, 0, out);
}

int c2e_emit_body_flags(const struct sock_filter *insns, size_t len,
			int scratch_off, unsigned int flags,
			struct c2e_ebpf *out)
{
	return c2e_emit_body_abi(insns, len, C2E_ABI_SECCOMP, scratch_off,
				 flags, out);
}

/* Does the code read seccomp_data through r6? Then the frame must set it. */
static bool reads_data(const struct c2e_ebpf *body)
{
	size_t i;

	for (i = 0; i < body->len; i++)
		if (BPF_CLASS(body->insns[i].code) == BPF_LDX &&
		    body->insns[i].src_reg == REG_D)
			return true;
	return false;
}

/* Prepends "r6 = r1" to a finished program when its body needs it. */
static int frame_prologue(struct c2e_ebpf *out, size_t at)
{
	int err = c2e_ebpf_emit(out, BPF_ALU64 | BPF_MOV | BPF_X, REG_D, BPF_REG_1, 0, 0);

	if (err)
		return err;
	memmove(&out->insns[at + 1], &out->insns[at],
		(out->len - 1 - at) * sizeof(out->insns[0]));
	out->insns[at] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_X,
					    .dst_reg = REG_D, .src_reg = BPF_REG_1 };
	return 0;
}

int c2e_translate(const struct sock_filter *insns, size_t len,
		  struct c2e_ebpf *out)
{
	return c2e_translate_flags(insns, len, 0, out);
}

int c2e_translate_flags(const struct sock_filter *insns, size_t len,
			unsigned int flags, struct c2e_ebpf *out)
{
	struct c2e_ebpf body = { 0 };
	int err;

	out->len = 0;
	err = c2e_emit_body_flags(insns, len, 8, flags, &body);
	if (err)
		return err;
	/* Jumps are relative, so the body can move as a block. */
	free(out->insns);
	*out = body;
	if (reads_data(out)) {
		err = frame_prologue(out, 0);
		if (err)
			return err;
	}
	return c2e_ebpf_emit(out, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
}

/*
 * The chain frame. The best verdict so far is in r9 and its rank (the
 * action, as a signed value) in a stack word the verifier treats as
 * unknown bytes. Comparing ranks the verifier cannot decide keeps it from
 * marking every verdict constant precise, so paths through a long chain
 * still merge at each fold.
 */
#define CHAIN_RANK_OFF (-4)   /* 4 mod 8: plain stack bytes to the verifier */
#define CHAIN_SCRATCH_OFF 8 /* below the rank word */

int c2e_emit_fold(struct c2e_ebpf *out, int16_t rank_off,
		  const struct bpf_insn *keep, size_t n_keep)
{
	size_t i;
	int err;

	if (n_keep >= INT16_MAX)
		return -EINVAL;
#define FOLD_EMIT(...) do { err = c2e_ebpf_emit(out, __VA_ARGS__); if (err) return err; } while (0)
	FOLD_EMIT(BPF_ALU | BPF_MOV | BPF_X, BPF_REG_1, REG_A, 0, 0);
	FOLD_EMIT(BPF_ALU | BPF_AND | BPF_K, BPF_REG_1, 0, 0, (int32_t)SECCOMP_RET_ACTION_FULL);
	FOLD_EMIT(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_2, BPF_REG_10, rank_off, 0);
	/* semantics.h's rule: past the new best when the best so far stays. */
	FOLD_EMIT(BPF_JMP32 | C2E_FOLD_KEEP_OP | BPF_X, BPF_REG_1, BPF_REG_2,
		  (int16_t)(n_keep + 1), 0);
	FOLD_EMIT(BPF_STX | BPF_MEM | BPF_W, BPF_REG_10, BPF_REG_1, rank_off, 0);
#undef FOLD_EMIT
	for (i = 0; i < n_keep; i++) {
		err = c2e_ebpf_emit(out, keep[i].code, keep[i].dst_reg, keep[i].src_reg,
				    keep[i].off, keep[i].imm);
		if (err)
			return err;
	}
	return 0;
}

int c2e_translate_chain(const struct sock_fprog *chain, size_t n,
			struct c2e_ebpf *out)
{
	return c2e_translate_chain_flags(chain, n, 0, out);
}

int c2e_translate_chain_flags(const struct sock_fprog *chain, size_t n,
			      unsigned int flags, struct c2e_ebpf *out)
{
	const struct bpf_insn keep = { .code = BPF_ALU | BPF_MOV | BPF_X,
				       .dst_reg = REG_BEST, .src_reg = REG_A };
	size_t i;
	int err;

	out->len = 0;
	if (n == 0)
		return -EINVAL;
#define CHAIN_EMIT(...) do { err = c2e_ebpf_emit(out, __VA_ARGS__); if (err) return err; } while (0)
	CHAIN_EMIT(BPF_ALU64 | BPF_MOV | BPF_X, REG_D, BPF_REG_1, 0, 0);
	CHAIN_EMIT(BPF_ALU | BPF_MOV | BPF_K, REG_BEST, 0, 0, (int32_t)SECCOMP_RET_ALLOW);
	CHAIN_EMIT(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, CHAIN_RANK_OFF,
		   (int32_t)SECCOMP_RET_ALLOW);
	/* Newest first, as kernel/seccomp.c seccomp_run_filters() walks. */
	for (i = n; i-- > 0;) {
		err = c2e_emit_body_flags(chain[i].filter, chain[i].len,
					  CHAIN_SCRATCH_OFF, flags, out);
		if (err)
			return err;
		err = c2e_emit_fold(out, CHAIN_RANK_OFF, &keep, 1);
		if (err)
			return err;
	}
	CHAIN_EMIT(BPF_ALU | BPF_MOV | BPF_X, REG_A, REG_BEST, 0, 0);
	CHAIN_EMIT(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
#undef CHAIN_EMIT
	return 0;
}

/*
 * The RFC test frame. Raw tracepoint contexts stop at 96 bytes, so the
 * registers come in as a socket filter's packet (after the 14-byte
 * Ethernet header the test run strips) and are copied to the stack, where
 * the verifier is strictest about alignment: a body that loads here loads
 * from a map value too.
 */
static int rfc_data_off(enum c2e_abi abi)
{
	return (int)((c2e_abi_data_size(abi) + 7) & ~(size_t)7);
}

int c2e_translate_abi(const struct sock_filter *insns, size_t len,
		      enum c2e_abi abi, unsigned int flags,
		      struct c2e_ebpf *out)
{
	int off = rfc_data_off(abi), err;

	if (abi == C2E_ABI_SECCOMP)
		return c2e_translate_flags(insns, len, flags, out);
	out->len = 0;
	if (!c2e_abi_data_size(abi))
		return -EINVAL;
#define RFC_EMIT(...) do { err = c2e_ebpf_emit(out, __VA_ARGS__); if (err) return err; } while (0)
	/* bpf_skb_load_bytes(skb, 0, r10 - off, size) */
	RFC_EMIT(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_2, 0, 0, 0);
	RFC_EMIT(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_3, BPF_REG_10, 0, 0);
	RFC_EMIT(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_3, 0, 0, -off);
	RFC_EMIT(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_4, 0, 0,
		 (int32_t)c2e_abi_data_size(abi));
	RFC_EMIT(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_skb_load_bytes);
	RFC_EMIT(BPF_ALU64 | BPF_MOV | BPF_X, REG_D, BPF_REG_10, 0, 0);
	RFC_EMIT(BPF_ALU64 | BPF_ADD | BPF_K, REG_D, 0, 0, -off);
#undef RFC_EMIT
	err = c2e_emit_body_abi(insns, len, abi, off, flags, out);
	if (err)
		return err;
	return c2e_ebpf_emit(out, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
}
