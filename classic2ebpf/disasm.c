// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Listings: the classic text form (which asm.c reads back to the same bytes)
 * and eBPF in the style of the kernel's verifier log / bpftool
 * (kernel/bpf/disasm.c print_bpf_insn()).
 *
 * The classic printer prints every instruction, including those seccomp(2)
 * refuses, so that the listing of a bad file still shows what is wrong. An
 * instruction that has no mnemonic reading back to identical bytes (an
 * unknown opcode, or a field the opcode ignores set to non-zero) prints as
 * ".insn CODE, JT, JF, K".
 */
#include "c2e.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <seccomp.h>

/* ------------------------------------------------------------------------
 * classic
 */

static void fmt_num(char *buf, size_t size, uint32_t v)
{
	snprintf(buf, size, v >= 0x1000 ? "0x%" PRIx32 : "%" PRIu32, v);
}

enum k_use { K_USED, K_ZERO };

/* The opcodes classic BPF knows (net/core/filter.c chk_code_allowed()),
 * with whether k means something; jt/jf mean something only for jumps. */
static bool classic_known(uint16_t code, enum k_use *k)
{
	*k = K_USED;
	switch (code) {
	case BPF_LD | BPF_IMM:
	case BPF_LD | BPF_W | BPF_ABS: case BPF_LD | BPF_H | BPF_ABS:
	case BPF_LD | BPF_B | BPF_ABS:
	case BPF_LD | BPF_W | BPF_IND: case BPF_LD | BPF_H | BPF_IND:
	case BPF_LD | BPF_B | BPF_IND:
	case BPF_LD | BPF_MEM:
	case BPF_LDX | BPF_IMM: case BPF_LDX | BPF_MEM:
	case BPF_LDX | BPF_B | BPF_MSH:
	case BPF_ST: case BPF_STX:
	case BPF_RET | BPF_K:
	case BPF_JMP | BPF_JA:
	case BPF_JMP | BPF_JEQ | BPF_K: case BPF_JMP | BPF_JGT | BPF_K:
	case BPF_JMP | BPF_JGE | BPF_K: case BPF_JMP | BPF_JSET | BPF_K:
		return true;
	case BPF_LD | BPF_W | BPF_LEN: case BPF_LDX | BPF_W | BPF_LEN:
	case BPF_MISC | BPF_TAX: case BPF_MISC | BPF_TXA:
	case BPF_RET | BPF_A:
	case BPF_ALU | BPF_NEG:
	case BPF_JMP | BPF_JEQ | BPF_X: case BPF_JMP | BPF_JGT | BPF_X:
	case BPF_JMP | BPF_JGE | BPF_X: case BPF_JMP | BPF_JSET | BPF_X:
		*k = K_ZERO;
		return true;
	}
	if (BPF_CLASS(code) == BPF_ALU && code < 0x100) {
		switch (BPF_OP(code)) {
		case BPF_ADD: case BPF_SUB: case BPF_MUL: case BPF_DIV:
		case BPF_MOD: case BPF_AND: case BPF_OR: case BPF_XOR:
		case BPF_LSH: case BPF_RSH:
			*k = BPF_SRC(code) == BPF_X ? K_ZERO : K_USED;
			return true;
		}
	}
	return false;
}

static bool is_cond_jump(uint16_t code)
{
	return code < 0x100 && BPF_CLASS(code) == BPF_JMP &&
	       (BPF_OP(code) == BPF_JEQ || BPF_OP(code) == BPF_JGT ||
		BPF_OP(code) == BPF_JGE || BPF_OP(code) == BPF_JSET);
}

/* Whether f prints as a mnemonic (else as .insn). */
static bool printable(const struct sock_filter *f)
{
	enum k_use k;

	if (!classic_known(f->code, &k))
		return false;
	if (k == K_ZERO && f->k)
		return false;
	if (!is_cond_jump(f->code) && (f->jt || f->jf))
		return false;
	return true;
}

static const char *alu_name(uint16_t op)
{
	switch (op) {
	case BPF_ADD: return "add";
	case BPF_SUB: return "sub";
	case BPF_MUL: return "mul";
	case BPF_DIV: return "div";
	case BPF_MOD: return "mod";
	case BPF_AND: return "and";
	case BPF_OR:  return "or";
	case BPF_XOR: return "xor";
	case BPF_LSH: return "lsh";
	case BPF_RSH: return "rsh";
	}
	return "?";
}

static const char *jmp_name(uint16_t op)
{
	switch (op) {
	case BPF_JEQ: return "jeq";
	case BPF_JGT: return "jgt";
	case BPF_JGE: return "jge";
	}
	return "jset";
}

/* seccomp_data offsets, little endian: args[i] low word at 16 + 8i. */
static void data_operand(char *buf, size_t size, uint32_t k)
{
	char num[16];

	if (k == 0)
		snprintf(buf, size, "nr");
	else if (k == 4)
		snprintf(buf, size, "arch");
	else if (k == 8)
		snprintf(buf, size, "ip");
	else if (k == 12)
		snprintf(buf, size, "ip.hi");
	else if (k >= 16 && k < 64 && k % 4 == 0)
		snprintf(buf, size, "args[%u]%s", (k - 16) / 8,
			 k % 8 ? ".hi" : "");
	else {
		fmt_num(num, sizeof(num), k);
		snprintf(buf, size, "[%s]", num);
	}
}

static void ret_operand(char *buf, size_t size, uint32_t k)
{
	uint32_t action = k & C2E_RET_ACTION_FULL, data = k & C2E_RET_DATA;
	const char *name = c2e_action_name(action);
	char num[16];

	if (name && c2e_action_has_data(action))
		snprintf(buf, size, "%s(%u)", name, data);
	else if (name && !data)
		snprintf(buf, size, "%s", name);
	else {
		fmt_num(num, sizeof(num), k);
		snprintf(buf, size, "#%s", num);
	}
}

/* ld, ldh, ldb: bpf_asm's names for the load sizes. */
static const char *load_suffix(uint16_t code)
{
	return BPF_SIZE(code) == BPF_H ? "h" : BPF_SIZE(code) == BPF_B ? "b" : "";
}

/* A jump target: a label inside the program, else the raw offset. */
static void target(char *buf, size_t size, size_t pc, uint32_t off,
		   size_t len)
{
	uint64_t t = (uint64_t)pc + 1 + off;

	if (t < len)
		snprintf(buf, size, "L%" PRIu64, t);
	else
		snprintf(buf, size, "+%" PRIu32, off);
}

/* An RFC load operand: the field starting at k, else the offset. */
static void regs_operand(char *buf, size_t size, enum c2e_abi abi, uint32_t k)
{
	const char *name = c2e_rfc_reg_name(abi, k);
	char num[16];

	fmt_num(num, sizeof(num), k);
	snprintf(buf, size, "[%s]", name ? name : num);
}

static void format_insn(const struct sock_filter *insns, size_t len,
			size_t pc, enum c2e_abi abi, char *buf, size_t size)
{
	const struct sock_filter *f = &insns[pc];
	char num[16], op[48], lt[24], lf[24];
	uint16_t code = f->code;

	fmt_num(num, sizeof(num), f->k);
	if (!printable(f)) {
		snprintf(buf, size, ".insn 0x%04x, %u, %u, %s", code, f->jt,
			 f->jf, num);
		return;
	}
	switch (code) {
	case BPF_LD | BPF_IMM:
		snprintf(buf, size, "ld #%s", num);
		return;
	case BPF_LDX | BPF_IMM:
		snprintf(buf, size, "ldx #%s", num);
		return;
	case BPF_LD | BPF_W | BPF_ABS:
		if (abi == C2E_ABI_SECCOMP)
			data_operand(op, sizeof(op), f->k);
		else
			regs_operand(op, sizeof(op), abi, f->k);
		snprintf(buf, size, "ld %s", op);
		return;
	case BPF_LD | BPF_H | BPF_ABS: case BPF_LD | BPF_B | BPF_ABS:
		snprintf(buf, size, "ld%s [%s]", load_suffix(code), num);
		return;
	case BPF_LD | BPF_W | BPF_IND: case BPF_LD | BPF_H | BPF_IND:
	case BPF_LD | BPF_B | BPF_IND:
		snprintf(buf, size, "ld%s [x+%s]", load_suffix(code), num);
		return;
	case BPF_LD | BPF_MEM:
		snprintf(buf, size, "ld M[%s]", num);
		return;
	case BPF_LDX | BPF_MEM:
		snprintf(buf, size, "ldx M[%s]", num);
		return;
	case BPF_LD | BPF_W | BPF_LEN:
		snprintf(buf, size, "ld #len");
		return;
	case BPF_LDX | BPF_W | BPF_LEN:
		snprintf(buf, size, "ldx #len");
		return;
	case BPF_LDX | BPF_B | BPF_MSH:
		snprintf(buf, size, "ldxb 4*([%s]&0xf)", num);
		return;
	case BPF_ST:
		snprintf(buf, size, "st M[%s]", num);
		return;
	case BPF_STX:
		snprintf(buf, size, "stx M[%s]", num);
		return;
	case BPF_MISC | BPF_TAX:
		snprintf(buf, size, "tax");
		return;
	case BPF_MISC | BPF_TXA:
		snprintf(buf, size, "txa");
		return;
	case BPF_ALU | BPF_NEG:
		snprintf(buf, size, "neg");
		return;
	case BPF_RET | BPF_A:
		snprintf(buf, size, "ret a");
		return;
	case BPF_RET | BPF_K:
		/* A 2012-interface value is a size, not a seccomp action. */
		if (abi == C2E_ABI_SECCOMP) {
			ret_operand(op, sizeof(op), f->k);
		} else {
			fmt_num(num, sizeof(num), f->k);
			snprintf(op, sizeof(op), "#%s", num);
		}
		snprintf(buf, size, "ret %s", op);
		return;
	case BPF_JMP | BPF_JA:
		target(lt, sizeof(lt), pc, f->k, len);
		snprintf(buf, size, "ja %s", lt);
		return;
	}
	if (BPF_CLASS(code) == BPF_ALU) {
		if (BPF_SRC(code) == BPF_X)
			snprintf(buf, size, "%s x", alu_name(BPF_OP(code)));
		else
			snprintf(buf, size, "%s #%s", alu_name(BPF_OP(code)),
				 num);
		return;
	}
	/* Conditional jumps; jf == 0 falls through and is left out. */
	if (BPF_SRC(code) == BPF_X)
		snprintf(op, sizeof(op), "x");
	else
		snprintf(op, sizeof(op), "#%s", num);
	target(lt, sizeof(lt), pc, f->jt, len);
	if (f->jf) {
		target(lf, sizeof(lf), pc, f->jf, len);
		snprintf(buf, size, "%s %s, %s, %s", jmp_name(BPF_OP(code)), op,
			 lt, lf);
	} else {
		snprintf(buf, size, "%s %s, %s", jmp_name(BPF_OP(code)), op, lt);
	}
}

/* What A is known to hold at an instruction, for comments only. */
enum a_state { A_NONE = 0, A_UNKNOWN, A_NR, A_ARCH };

static void flow(uint8_t *in, size_t len, uint64_t to, uint8_t s)
{
	if (to >= len)
		return;
	if (in[to] == A_NONE)
		in[to] = s;
	else if (in[to] != s)
		in[to] = A_UNKNOWN;
}

/* One forward pass suffices because classic jumps only go forward. */
static void track_a(const struct sock_filter *insns, size_t len,
		    enum c2e_abi abi, uint8_t *in)
{
	uint32_t nr_off = abi == C2E_ABI_SECCOMP ? 0 : c2e_rfc_nr_offset(abi);
	size_t pc;

	in[0] = A_UNKNOWN;
	for (pc = 0; pc < len; pc++) {
		const struct sock_filter *f = &insns[pc];
		uint8_t s = in[pc] == A_NONE ? A_UNKNOWN : in[pc];
		uint16_t cls = BPF_CLASS(f->code);

		if (f->code == (BPF_LD | BPF_W | BPF_ABS) && f->k == nr_off)
			s = A_NR;
		else if (f->code == (BPF_LD | BPF_W | BPF_ABS) && f->k == 4 &&
			 abi == C2E_ABI_SECCOMP)
			s = A_ARCH;
		else if (f->code >= 0x100 || cls == BPF_LD || cls == BPF_ALU ||
			 f->code == (BPF_MISC | BPF_TXA) ||
			 (cls == BPF_MISC && f->code != (BPF_MISC | BPF_TAX)))
			s = A_UNKNOWN;

		if (f->code == (BPF_RET | BPF_K) || f->code == (BPF_RET | BPF_A))
			continue;
		if (f->code == (BPF_JMP | BPF_JA) && printable(f)) {
			flow(in, len, (uint64_t)pc + 1 + f->k, s);
		} else if (is_cond_jump(f->code) && printable(f)) {
			flow(in, len, (uint64_t)pc + 1 + f->jt, s);
			flow(in, len, (uint64_t)pc + 1 + f->jf, s);
		} else {
			flow(in, len, pc + 1, s);
		}
	}
}

static void comment(const struct sock_filter *f, uint8_t a, enum c2e_abi abi,
		    char *buf, size_t size)
{
	uint16_t op = BPF_OP(f->code);
	const char *reg;
	char *name;

	buf[0] = '\0';
	if (f->code == (BPF_RET | BPF_K) && abi != C2E_ABI_SECCOMP) {
		snprintf(buf, size, "%s", f->k == c2e_abi_data_size(abi) ? "allow" : "block");
		return;
	}
	/* An RFC indirect load prints its offset; say which field it is. */
	if (f->code == (BPF_LD | BPF_W | BPF_IND) && printable(f) &&
	    (reg = c2e_rfc_reg_name(abi, f->k))) {
		snprintf(buf, size, "%s", reg);
		return;
	}
	if (f->code >= 0x100 || !is_cond_jump(f->code) ||
	    BPF_SRC(f->code) != BPF_K || !printable(f))
		return;
	if (a == A_ARCH && op == BPF_JEQ) {
		if (f->k == C2E_AUDIT_ARCH_X86_64)
			snprintf(buf, size, "AUDIT_ARCH_X86_64");
		else if (f->k == C2E_AUDIT_ARCH_I386)
			snprintf(buf, size, "AUDIT_ARCH_I386");
		return;
	}
	if (a != A_NR || op == BPF_JSET)
		return;
	name = seccomp_syscall_resolve_num_arch(abi == C2E_ABI_RFC_I386 ?
						SCMP_ARCH_X86 : SCMP_ARCH_X86_64,
						(int)f->k);
	if (name) {
		snprintf(buf, size, "%s", name);
		free(name);
	}
}

int c2e_disasm_classic(const struct sock_filter *insns, size_t len, FILE *out)
{
	return c2e_disasm_classic_abi(insns, len, C2E_ABI_SECCOMP, out);
}

int c2e_disasm_classic_abi(const struct sock_filter *insns, size_t len,
			   enum c2e_abi abi, FILE *out)
{
	uint8_t *is_target, *a_in;
	char text[160], note[64];
	size_t pc;
	int ret = 0;

	is_target = calloc(len + 1, 1);
	a_in = calloc(len + 1, 1);
	if (!is_target || !a_in) {
		free(is_target);
		free(a_in);
		return -ENOMEM;
	}
	for (pc = 0; pc < len; pc++) {
		const struct sock_filter *f = &insns[pc];
		uint64_t t;

		if (!printable(f))
			continue;
		if (f->code == (BPF_JMP | BPF_JA)) {
			t = (uint64_t)pc + 1 + f->k;
			if (t < len)
				is_target[t] = 1;
		} else if (is_cond_jump(f->code)) {
			t = pc + 1 + f->jt;
			if (t < len)
				is_target[t] = 1;
			t = pc + 1 + f->jf;
			/* jf == 0 prints no label reference. */
			if (f->jf && t < len)
				is_target[t] = 1;
		}
	}
	if (len)
		track_a(insns, len, abi, a_in);
	for (pc = 0; pc < len; pc++) {
		if (is_target[pc])
			fprintf(out, "L%zu:\n", pc);
		format_insn(insns, len, pc, abi, text, sizeof(text));
		comment(&insns[pc], a_in[pc], abi, note, sizeof(note));
		if (note[0])
			fprintf(out, "\t%-24s ; %s\n", text, note);
		else
			fprintf(out, "\t%s\n", text);
	}
	free(is_target);
	free(a_in);
	if (ferror(out))
		ret = -EIO;
	return ret;
}

/* ------------------------------------------------------------------------
 * eBPF, as kernel/bpf/disasm.c prints it
 */

/* Opcodes newer than the uapi headers of Debian 12 (linux-libc-dev 6.1). */
#ifndef BPF_MEMSX
#define BPF_MEMSX 0x80
#endif
#ifndef BPF_JCOND
#define BPF_JCOND 0xe0
#endif
#ifndef BPF_NOSPEC
#define BPF_NOSPEC 0xc0 /* include/linux/filter.h, not uapi */
#endif
#ifndef BPF_LOAD_ACQ
#define BPF_LOAD_ACQ 0x100
#endif
#ifndef BPF_STORE_REL
#define BPF_STORE_REL 0x110
#endif

#define HELPER_NAME(x) "bpf_" #x
static const char *const helper_names[] = { __BPF_FUNC_MAPPER(HELPER_NAME) };
#define N_HELPERS (sizeof(helper_names) / sizeof(helper_names[0]))

static const char *const size_names[4] = { "u32", "u16", "u8", "u64" };
static const char *const ssize_names[4] = { "s32", "s16", "s8", "s64" };

static const char *ebpf_alu_op(uint8_t op, int16_t off)
{
	switch (op) {
	case BPF_ADD:  return "+=";
	case BPF_SUB:  return "-=";
	case BPF_MUL:  return "*=";
	case BPF_DIV:  return off == 1 ? "s/=" : "/=";
	case BPF_OR:   return "|=";
	case BPF_AND:  return "&=";
	case BPF_LSH:  return "<<=";
	case BPF_RSH:  return ">>=";
	case BPF_MOD:  return off == 1 ? "s%=" : "%=";
	case BPF_XOR:  return "^=";
	case BPF_MOV:  return "=";
	case BPF_ARSH: return "s>>=";
	}
	return NULL;
}

static const char *ebpf_jmp_op(uint8_t op)
{
	switch (op) {
	case BPF_JEQ:  return "==";
	case BPF_JGT:  return ">";
	case BPF_JGE:  return ">=";
	case BPF_JSET: return "&";
	case BPF_JNE:  return "!=";
	case BPF_JSGT: return "s>";
	case BPF_JSGE: return "s>=";
	case BPF_JLT:  return "<";
	case BPF_JLE:  return "<=";
	case BPF_JSLT: return "s<";
	case BPF_JSLE: return "s<=";
	}
	return NULL;
}

static void bad_insn(const struct bpf_insn *i, char *buf, size_t size)
{
	snprintf(buf, size,
		 ".insn code=0x%02x dst=r%d src=r%d off=%d imm=%d",
		 i->code, i->dst_reg, i->src_reg, i->off, i->imm);
}

static void ebpf_alu(const struct bpf_insn *i, char *buf, size_t size)
{
	char r = BPF_CLASS(i->code) == BPF_ALU64 ? 'r' : 'w';
	uint8_t op = BPF_OP(i->code);
	const char *s;

	if (op == BPF_END) {
		if (BPF_CLASS(i->code) == BPF_ALU64)
			snprintf(buf, size, "r%d = bswap%d r%d", i->dst_reg,
				 i->imm, i->dst_reg);
		else
			snprintf(buf, size, "r%d = %s%d r%d", i->dst_reg,
				 BPF_SRC(i->code) == BPF_X ? "be" : "le",
				 i->imm, i->dst_reg);
		return;
	}
	if (op == BPF_NEG) {
		snprintf(buf, size, "%c%d = -%c%d", r, i->dst_reg, r,
			 i->dst_reg);
		return;
	}
	s = ebpf_alu_op(op, i->off);
	if (!s) {
		bad_insn(i, buf, size);
		return;
	}
	if (BPF_SRC(i->code) == BPF_X) {
		const char *cast = "";

		if (op == BPF_MOV && i->off == 8)
			cast = "(s8)";
		else if (op == BPF_MOV && i->off == 16)
			cast = "(s16)";
		else if (op == BPF_MOV && i->off == 32)
			cast = "(s32)";
		snprintf(buf, size, "%c%d %s %s%c%d", r, i->dst_reg, s, cast,
			 r, i->src_reg);
	} else {
		snprintf(buf, size, "%c%d %s %d", r, i->dst_reg, s, i->imm);
	}
}

static const char *atomic_name(int32_t op)
{
	switch (op & ~BPF_FETCH) {
	case BPF_ADD: return "add";
	case BPF_AND: return "and";
	case BPF_OR:  return "or";
	case BPF_XOR: return "xor";
	}
	return NULL;
}

static void ebpf_stx(const struct bpf_insn *i, char *buf, size_t size)
{
	int sz = BPF_SIZE(i->code) >> 3;
	const char *t = size_names[sz], *b64 = sz == 3 ? "64" : "";
	char r = sz == 3 ? 'r' : 'w';

	if (BPF_MODE(i->code) == BPF_MEM) {
		snprintf(buf, size, "*(%s *)(r%d %+d) = %c%d", t, i->dst_reg,
			 i->off, r, i->src_reg);
	} else if (BPF_MODE(i->code) != BPF_ATOMIC) {
		bad_insn(i, buf, size);
	} else if (atomic_name(i->imm) && !(i->imm & BPF_FETCH)) {
		snprintf(buf, size, "lock *(%s *)(r%d %+d) %s r%d", t,
			 i->dst_reg, i->off, ebpf_alu_op(i->imm, 0),
			 i->src_reg);
	} else if (atomic_name(i->imm)) {
		snprintf(buf, size, "r%d = atomic%s_fetch_%s((%s *)(r%d %+d), r%d)",
			 i->src_reg, b64, atomic_name(i->imm), t, i->dst_reg,
			 i->off, i->src_reg);
	} else if (i->imm == BPF_XCHG) {
		snprintf(buf, size, "r%d = atomic%s_xchg((%s *)(r%d %+d), r%d)",
			 i->src_reg, b64, t, i->dst_reg, i->off, i->src_reg);
	} else if (i->imm == BPF_CMPXCHG) {
		snprintf(buf, size, "r0 = atomic%s_cmpxchg((%s *)(r%d %+d), r0, r%d)",
			 b64, t, i->dst_reg, i->off, i->src_reg);
	} else if (i->imm == BPF_LOAD_ACQ) {
		snprintf(buf, size, "r%d = load_acquire((%s *)(r%d %+d))",
			 i->dst_reg, t, i->src_reg, i->off);
	} else if (i->imm == BPF_STORE_REL) {
		snprintf(buf, size, "store_release((%s *)(r%d %+d), r%d)", t,
			 i->dst_reg, i->off, i->src_reg);
	} else {
		bad_insn(i, buf, size);
	}
}

static void ebpf_jmp(const struct bpf_insn *i, char *buf, size_t size)
{
	char r = BPF_CLASS(i->code) == BPF_JMP32 ? 'w' : 'r';
	uint8_t op = BPF_OP(i->code);
	const char *s;

	if (op == BPF_CALL && BPF_CLASS(i->code) == BPF_JMP) {
		if (i->src_reg == BPF_PSEUDO_CALL)
			snprintf(buf, size, "call pc%+d", i->imm);
		else if (i->src_reg == BPF_PSEUDO_KFUNC_CALL)
			snprintf(buf, size, "call kernel-function#%d", i->imm);
		else if (i->imm > 0 && (size_t)i->imm < N_HELPERS)
			snprintf(buf, size, "call %s#%d", helper_names[i->imm],
				 i->imm);
		else
			snprintf(buf, size, "call #%d", i->imm);
		return;
	}
	if (op == BPF_EXIT && BPF_CLASS(i->code) == BPF_JMP) {
		snprintf(buf, size, "exit");
		return;
	}
	if (op == BPF_JA) {
		if (BPF_CLASS(i->code) == BPF_JMP)
			snprintf(buf, size, "goto %+d", i->off);
		else
			snprintf(buf, size, "gotol %+d", i->imm);
		return;
	}
	if (op == BPF_JCOND && BPF_CLASS(i->code) == BPF_JMP) {
		snprintf(buf, size, "may_goto %+d", i->off);
		return;
	}
	s = ebpf_jmp_op(op);
	if (!s) {
		bad_insn(i, buf, size);
		return;
	}
	if (BPF_SRC(i->code) == BPF_X)
		snprintf(buf, size, "if %c%d %s %c%d goto %+d", r, i->dst_reg, s,
			 r, i->src_reg, i->off);
	else
		snprintf(buf, size, "if %c%d %s 0x%x goto %+d", r, i->dst_reg, s,
			 (uint32_t)i->imm, i->off);
}

/* Formats insns[pc]; returns how many slots it takes (2 for LD_IMM64). */
static size_t format_ebpf(const struct bpf_insn *insns, size_t len, size_t pc,
			  char *buf, size_t size)
{
	const struct bpf_insn *i = &insns[pc];
	int sz = BPF_SIZE(i->code) >> 3;

	switch (BPF_CLASS(i->code)) {
	case BPF_ALU:
	case BPF_ALU64:
		ebpf_alu(i, buf, size);
		break;
	case BPF_JMP:
	case BPF_JMP32:
		ebpf_jmp(i, buf, size);
		break;
	case BPF_STX:
		ebpf_stx(i, buf, size);
		break;
	case BPF_ST:
		if (BPF_MODE(i->code) == BPF_MEM)
			snprintf(buf, size, "*(%s *)(r%d %+d) = %d",
				 size_names[sz], i->dst_reg, i->off, i->imm);
		else if (BPF_MODE(i->code) == BPF_NOSPEC)
			snprintf(buf, size, "nospec");
		else
			bad_insn(i, buf, size);
		break;
	case BPF_LDX:
		if (BPF_MODE(i->code) == BPF_MEM)
			snprintf(buf, size, "r%d = *(%s *)(r%d %+d)", i->dst_reg,
				 size_names[sz], i->src_reg, i->off);
		else if (BPF_MODE(i->code) == BPF_MEMSX)
			snprintf(buf, size, "r%d = *(%s *)(r%d %+d)", i->dst_reg,
				 ssize_names[sz], i->src_reg, i->off);
		else
			bad_insn(i, buf, size);
		break;
	case BPF_LD:
		if (BPF_MODE(i->code) == BPF_ABS) {
			snprintf(buf, size, "r0 = *(%s *)skb[%d]",
				 size_names[sz], i->imm);
		} else if (BPF_MODE(i->code) == BPF_IND) {
			snprintf(buf, size, "r0 = *(%s *)skb[r%d + %d]",
				 size_names[sz], i->src_reg, i->imm);
		} else if (i->code == (BPF_LD | BPF_IMM | BPF_DW)) {
			uint64_t v;

			if (pc + 1 >= len) {
				snprintf(buf, size, "r%d = <ld_imm64 missing its second slot>",
					 i->dst_reg);
				return 1;
			}
			v = (uint32_t)i->imm |
			    (uint64_t)(uint32_t)insns[pc + 1].imm << 32;
			if (i->src_reg == BPF_PSEUDO_MAP_FD)
				snprintf(buf, size, "r%d = map[fd:%d]",
					 i->dst_reg, i->imm);
			else if (i->src_reg == BPF_PSEUDO_MAP_VALUE)
				snprintf(buf, size, "r%d = map[fd:%d][0]+%d",
					 i->dst_reg, i->imm, insns[pc + 1].imm);
			else
				snprintf(buf, size, "r%d = 0x%" PRIx64,
					 i->dst_reg, v);
			return 2;
		} else {
			bad_insn(i, buf, size);
		}
		break;
	default:
		bad_insn(i, buf, size);
	}
	return 1;
}

int c2e_disasm_ebpf(const struct bpf_insn *insns, size_t len, FILE *out)
{
	char text[128];
	size_t pc = 0;

	while (pc < len) {
		size_t n = format_ebpf(insns, len, pc, text, sizeof(text));

		fprintf(out, "%4zu: (%02x) %s\n", pc, insns[pc].code, text);
		pc += n;
	}
	return ferror(out) ? -EIO : 0;
}
