// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Validation, exactly as seccomp(2) does it, in the kernel's order:
 *   seccomp_prepare_filter()   1 <= len <= BPF_MAXINSNS
 *   bpf_check_classic()        per-instruction checks, last insn is RET,
 *                              then check_load_and_stores()
 *   seccomp_check_filter()     the seccomp subset of opcodes, LD W ABS
 *                              alignment and bounds
 * Every rejection is EINVAL in the kernel; here it also names the
 * instruction, its opcode and the rule, for the first check the kernel
 * would fail.
 */
#include "c2e.h"
#include "fail.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>

#define SKF_AD_OFF_ (-0x1000)

int c2e_fail(struct c2e_error *err, int index, uint16_t code, int ret,
	     const char *fmt, ...)
{
	va_list ap;

	if (err) {
		err->index = index;
		err->code = code;
		err->line = 0;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return ret;
}

#define reject(err, index, code, ...) c2e_fail(err, index, code, -EINVAL, __VA_ARGS__)

/*
 * The two kernel tables in one: CLASSIC marks what net/core/filter.c's
 * chk_code_allowed() knows, SECCOMP what kernel/seccomp.c's
 * seccomp_check_filter() lets through (LD W ABS and both LENs, which it
 * rewrites, included). Every known opcode is below 0x100.
 */
enum { CLASSIC = 1, SECCOMP = 2 };

static const uint8_t opcode_table[256] = {
	[BPF_ALU | BPF_ADD | BPF_K] = CLASSIC | SECCOMP,
	[BPF_ALU | BPF_ADD | BPF_X] = CLASSIC | SECCOMP,
	[BPF_ALU | BPF_SUB | BPF_K] = CLASSIC | SECCOMP,
	[BPF_ALU | BPF_SUB | BPF_X] = CLASSIC | SECCOMP,
	[BPF_ALU | BPF_MUL | BPF_K] = CLASSIC | SECCOMP,
	[BPF_ALU | BPF_MUL | BPF_X] = CLASSIC | SECCOMP,
	[BPF_ALU | BPF_DIV | BPF_K] = CLASSIC | SECCOMP,
	[BPF_ALU | BPF_DIV | BPF_X] = CLASSIC | SECCOMP,
	[BPF_ALU | BPF_MOD | BPF_K] = CLASSIC,
	[BPF_ALU | BPF_MOD | BPF_X] = CLASSIC,
	[BPF_ALU | BPF_AND | BPF_K] = CLASSIC | SECCOMP,
	[BPF_ALU | BPF_AND | BPF_X] = CLASSIC | SECCOMP,
	[BPF_ALU | BPF_OR | BPF_K] = CLASSIC | SECCOMP,
	[BPF_ALU | BPF_OR | BPF_X] = CLASSIC | SECCOMP,
	[BPF_ALU | BPF_XOR | BPF_K] = CLASSIC | SECCOMP,
	[BPF_ALU | BPF_XOR | BPF_X] = CLASSIC | SECCOMP,
	[BPF_ALU | BPF_LSH | BPF_K] = CLASSIC | SECCOMP,
	[BPF_ALU | BPF_LSH | BPF_X] = CLASSIC | SECCOMP,
	[BPF_ALU | BPF_RSH | BPF_K] = CLASSIC | SECCOMP,
	[BPF_ALU | BPF_RSH | BPF_X] = CLASSIC | SECCOMP,
	[BPF_ALU | BPF_NEG] = CLASSIC | SECCOMP,
	[BPF_LD | BPF_W | BPF_ABS] = CLASSIC | SECCOMP,
	[BPF_LD | BPF_H | BPF_ABS] = CLASSIC,
	[BPF_LD | BPF_B | BPF_ABS] = CLASSIC,
	[BPF_LD | BPF_W | BPF_LEN] = CLASSIC | SECCOMP,
	[BPF_LD | BPF_W | BPF_IND] = CLASSIC,
	[BPF_LD | BPF_H | BPF_IND] = CLASSIC,
	[BPF_LD | BPF_B | BPF_IND] = CLASSIC,
	[BPF_LD | BPF_IMM] = CLASSIC | SECCOMP,
	[BPF_LD | BPF_MEM] = CLASSIC | SECCOMP,
	[BPF_LDX | BPF_W | BPF_LEN] = CLASSIC | SECCOMP,
	[BPF_LDX | BPF_B | BPF_MSH] = CLASSIC,
	[BPF_LDX | BPF_IMM] = CLASSIC | SECCOMP,
	[BPF_LDX | BPF_MEM] = CLASSIC | SECCOMP,
	[BPF_ST] = CLASSIC | SECCOMP,
	[BPF_STX] = CLASSIC | SECCOMP,
	[BPF_MISC | BPF_TAX] = CLASSIC | SECCOMP,
	[BPF_MISC | BPF_TXA] = CLASSIC | SECCOMP,
	[BPF_RET | BPF_K] = CLASSIC | SECCOMP,
	[BPF_RET | BPF_A] = CLASSIC | SECCOMP,
	[BPF_JMP | BPF_JA] = CLASSIC | SECCOMP,
	[BPF_JMP | BPF_JEQ | BPF_K] = CLASSIC | SECCOMP,
	[BPF_JMP | BPF_JEQ | BPF_X] = CLASSIC | SECCOMP,
	[BPF_JMP | BPF_JGE | BPF_K] = CLASSIC | SECCOMP,
	[BPF_JMP | BPF_JGE | BPF_X] = CLASSIC | SECCOMP,
	[BPF_JMP | BPF_JGT | BPF_K] = CLASSIC | SECCOMP,
	[BPF_JMP | BPF_JGT | BPF_X] = CLASSIC | SECCOMP,
	[BPF_JMP | BPF_JSET | BPF_K] = CLASSIC | SECCOMP,
	[BPF_JMP | BPF_JSET | BPF_X] = CLASSIC | SECCOMP,
};

static bool opcode_is(uint16_t code, uint8_t what)
{
	return code < 256 && (opcode_table[code] & what);
}

/* The conditional jumps, whose jt and jf are both targets. */
static bool is_cond_jump(uint16_t code)
{
	return opcode_is(code, CLASSIC) && BPF_CLASS(code) == BPF_JMP &&
	       BPF_OP(code) != BPF_JA;
}

/* SKF_AD_* ancillary loads known to bpf_anc_helper() (k = SKF_AD_OFF + n).
 * They pass bpf_check_classic() but seccomp refuses them afterwards. */
static bool is_ancillary(uint32_t k)
{
	uint32_t n = k - (uint32_t)SKF_AD_OFF_;

	return k >= (uint32_t)SKF_AD_OFF_ && n <= 60 && (n % 4 == 0);
}

/* bpf_check_classic(), first loop. */
static int check_classic_insn(const struct sock_filter *insns, size_t len,
			      size_t pc, struct c2e_error *err)
{
	const struct sock_filter *f = &insns[pc];

	if (!opcode_is(f->code, CLASSIC))
		return reject(err, pc, f->code, "unknown opcode");
	switch (f->code) {
	case BPF_ALU | BPF_DIV | BPF_K:
	case BPF_ALU | BPF_MOD | BPF_K:
		if (f->k == 0)
			return reject(err, pc, f->code, "division by constant 0");
		break;
	case BPF_ALU | BPF_LSH | BPF_K:
	case BPF_ALU | BPF_RSH | BPF_K:
		if (f->k >= 32)
			return reject(err, pc, f->code,
				      "shift by constant %u (must be < 32)", f->k);
		break;
	case BPF_LD | BPF_MEM:
	case BPF_LDX | BPF_MEM:
	case BPF_ST:
	case BPF_STX:
		if (f->k >= C2E_MEMWORDS)
			return reject(err, pc, f->code,
				      "scratch slot M[%u] out of range (0..15)", f->k);
		break;
	case BPF_JMP | BPF_JA:
		if (f->k >= (uint32_t)(len - pc - 1))
			return reject(err, pc, f->code,
				      "ja +%u lands past the end (program has %zu instructions)",
				      f->k, len);
		break;
	case BPF_LD | BPF_W | BPF_ABS:
	case BPF_LD | BPF_H | BPF_ABS:
	case BPF_LD | BPF_B | BPF_ABS:
		if (f->k >= (uint32_t)SKF_AD_OFF_ && !is_ancillary(f->k))
			return reject(err, pc, f->code,
				      "unknown ancillary load at offset 0x%x", f->k);
		break;
	default:
		if (is_cond_jump(f->code) &&
		    (pc + f->jt + 1 >= len || pc + f->jf + 1 >= len))
			return reject(err, pc, f->code,
				      "jump target %s+%u lands past the end (program has %zu instructions)",
				      pc + f->jt + 1 >= len ? "jt " : "jf ",
				      pc + f->jt + 1 >= len ? f->jt : f->jf, len);
	}
	return 0;
}

/*
 * check_load_and_stores(): one linear pass, not a path analysis. A jump
 * narrows its targets' masks and then makes every slot "valid" for the
 * fall-through instruction; a RET changes nothing, so the instruction after
 * a RET inherits the state from before it. Reproduced bit for bit because a
 * path-based check would disagree with the kernel.
 */
static int check_scratch_memory(const struct sock_filter *insns, size_t len,
				struct c2e_error *err)
{
	uint16_t masks[C2E_MAX_INSNS], valid = 0;
	size_t pc;

	memset(masks, 0xff, len * sizeof(masks[0]));
	for (pc = 0; pc < len; pc++) {
		const struct sock_filter *f = &insns[pc];

		valid &= masks[pc];
		switch (f->code) {
		case BPF_ST:
		case BPF_STX:
			valid |= 1u << f->k;
			break;
		case BPF_LD | BPF_MEM:
		case BPF_LDX | BPF_MEM:
			if (!(valid & (1u << f->k)))
				return reject(err, pc, f->code,
					      "M[%u] is read before it is stored (the kernel's linear check)",
					      f->k);
			break;
		case BPF_JMP | BPF_JA:
			masks[pc + 1 + f->k] &= valid;
			valid = 0xffff;
			break;
		default:
			if (is_cond_jump(f->code)) {
				masks[pc + 1 + f->jt] &= valid;
				masks[pc + 1 + f->jf] &= valid;
				valid = 0xffff;
			}
		}
	}
	return 0;
}

/* kernel/seccomp.c seccomp_check_filter(). */
static int check_seccomp_insn(const struct sock_filter *f, size_t pc,
			      const char *abi, struct c2e_error *err)
{
	if (f->code == (BPF_LD | BPF_W | BPF_ABS) &&
	    (f->k >= C2E_DATA_SIZE || (f->k & 3)))
		return reject(err, pc, f->code,
			      "load at offset %u: seccomp_data loads must be 4-byte aligned and below 64",
			      f->k);
	if (opcode_is(f->code, SECCOMP))
		return 0;
	switch (f->code) {
	case BPF_ALU | BPF_MOD | BPF_K: case BPF_ALU | BPF_MOD | BPF_X:
		return reject(err, pc, f->code, "mod is not allowed in %s filters", abi);
	case BPF_LD | BPF_H | BPF_ABS: case BPF_LD | BPF_B | BPF_ABS:
		return reject(err, pc, f->code,
			      "half-word and byte loads are not allowed in %s filters", abi);
	case BPF_LD | BPF_W | BPF_IND: case BPF_LD | BPF_H | BPF_IND:
	case BPF_LD | BPF_B | BPF_IND:
		return reject(err, pc, f->code,
			      "indirect loads are not allowed in %s filters", abi);
	case BPF_LDX | BPF_B | BPF_MSH:
		return reject(err, pc, f->code,
			      "ldx msh is not allowed in %s filters", abi);
	}
	return reject(err, pc, f->code, "opcode not allowed in %s filters", abi);
}

/*
 * The 2012 proposal's checks, in seccomp_check_filter()'s place: seccomp's
 * opcodes plus LD W IND, and constant loads inside the registers. IND
 * offsets depend on X and are checked when the filter runs.
 */
static int check_rfc_insn(const struct sock_filter *f, size_t pc,
			  enum c2e_abi abi, struct c2e_error *err)
{
	size_t size = c2e_abi_data_size(abi);
	const char *which = abi == C2E_ABI_RFC_I386 ? "i386 " : "";

	if (f->code == (BPF_LD | BPF_W | BPF_ABS) &&
	    (uint64_t)f->k + 4 > size)
		return reject(err, pc, f->code,
			      "load beyond the %zu-byte %suser_regs_struct: [%u] reads bytes %u..%llu (the last word starts at %zu)",
			      size, which, f->k, f->k,
			      (unsigned long long)f->k + 3, size - 4);
	if (f->code == (BPF_LD | BPF_W | BPF_IND) || opcode_is(f->code, SECCOMP))
		return 0;
	switch (f->code) {
	case BPF_LD | BPF_H | BPF_ABS: case BPF_LD | BPF_B | BPF_ABS:
	case BPF_LD | BPF_H | BPF_IND: case BPF_LD | BPF_B | BPF_IND:
		return reject(err, pc, f->code,
			      "half-word and byte loads are not allowed in %s filters (only 32-bit loads)",
			      c2e_abi_name(abi));
	}
	/* Everything else seccomp refuses, for the same reason. */
	return check_seccomp_insn(f, pc, c2e_abi_name(abi), err);
}

int c2e_validate(const struct sock_filter *insns, size_t len,
		 struct c2e_error *err)
{
	return c2e_validate_abi(insns, len, C2E_ABI_SECCOMP, err);
}

int c2e_validate_abi(const struct sock_filter *insns, size_t len,
		     enum c2e_abi abi, struct c2e_error *err)
{
	size_t pc;
	int ret;

	if (!c2e_abi_data_size(abi))
		return reject(err, -1, 0, "unknown filter ABI %d", (int)abi);

	if (len == 0 || len > C2E_MAX_INSNS)
		return reject(err, -1, 0,
			      "program has %zu instructions (must be 1..%d)",
			      len, C2E_MAX_INSNS);
	for (pc = 0; pc < len; pc++) {
		ret = check_classic_insn(insns, len, pc, err);
		if (ret)
			return ret;
	}
	if (insns[len - 1].code != (BPF_RET | BPF_K) &&
	    insns[len - 1].code != (BPF_RET | BPF_A))
		return reject(err, len - 1, insns[len - 1].code,
			      "the last instruction must be ret");
	ret = check_scratch_memory(insns, len, err);
	if (ret)
		return ret;
	for (pc = 0; pc < len; pc++) {
		ret = abi == C2E_ABI_SECCOMP ?
		      check_seccomp_insn(&insns[pc], pc, "seccomp", err) :
		      check_rfc_insn(&insns[pc], pc, abi, err);
		if (ret)
			return ret;
	}
	return 0;
}

const char *c2e_error_str(const struct c2e_error *err, char *buf, size_t size)
{
	if (err->line > 0)
		snprintf(buf, size, "line %d: %s", err->line, err->msg);
	else if (err->index >= 0)
		snprintf(buf, size, "insn %d (code 0x%04x): %s", err->index,
			 err->code, err->msg);
	else
		snprintf(buf, size, "%s", err->msg);
	return buf;
}
