// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Classic seccomp BPF to eBPF.
 *
 * Register mapping: A = w0, X = w7, seccomp_data at r6, scratch M[k] on
 * the stack. All arithmetic is 32-bit (ALU32 zero-extends) and every
 * comparison is a JMP32, so immediates with the top bit set compare as the
 * unsigned 32-bit values classic BPF means; the kernel's own converter uses
 * 64-bit jumps and needs an extra move for those.
 *
 * The translation runs four passes over the classic program:
 *   1. duplicate "ret K" instructions are merged: jumps go to the last copy
 *      (always forward), and copies nobody falls into disappear;
 *   2. reachability: the verifier refuses dead code, classic BPF allows it;
 *   3. a forward analysis of what the verifier will know about A and X
 *      (see "verifier-known constants" below);
 *   4. emission, with jumps fixed up once every target's position is known.
 *
 * Verifier-known constants. The verifier explores paths and prunes a path
 * when its state matches one already seen. A value it knows exactly and has
 * marked precise (it does so when such a value decides a branch) must match
 * exactly for pruning. A classic program that computes different constants
 * on many paths that join (legal, and easy to generate) could then make the
 * verifier walk exponentially many states and refuse the program. At a join
 * where A or X may hold different constants, and the value is still used,
 * the translation ORs in r8, a register the verifier cannot see is zero
 * (x ^ x of a loaded word): the value is unchanged at run time, unknown to
 * the verifier, and the paths merge again. Realistic filters load A from
 * seccomp_data before every compare and never need this.
 *
 * Scratch slots M[k] live at offsets that are 4 mod 8 below the frame
 * pointer, so the verifier records them as plain stack bytes rather than
 * tracking spilled constants through them.
 */
#include "xlat.h"
#include "grow.h"
#include "semantics.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

void c2e_ebpf_free(struct c2e_ebpf *prog)
{
	free(prog->insns);
	prog->insns = NULL;
	prog->len = prog->cap = 0;
}

int c2e_ebpf_emit(struct c2e_ebpf *out, uint8_t code, uint8_t dst, uint8_t src,
		  int16_t off, int32_t imm)
{
	struct bpf_insn *insn;

	if (C2E_GROW(out->insns, out->cap, out->len + 1))
		return -ENOMEM;
	insn = &out->insns[out->len++];
	memset(insn, 0, sizeof(*insn));
	insn->code = code;
	insn->dst_reg = dst;
	insn->src_reg = src;
	insn->off = off;
	insn->imm = imm;
	return 0;
}

#define EMIT_OR_OUT(x, ...) do { err = c2e_ebpf_emit((x).out, __VA_ARGS__); if (err) goto out; } while (0)

static int add_fixup(struct xlat *x, enum target_kind kind, int pc)
{
	if (C2E_GROW(x->fix, x->capfix, x->nfix + 1))
		return -ENOMEM;
	x->fix[x->nfix].at = x->out->len;
	x->fix[x->nfix].kind = kind;
	x->fix[x->nfix].pc = pc;
	x->nfix++;
	return 0;
}

int c2e_xlat_jump(struct xlat *x, uint8_t code, uint8_t dst, uint8_t src,
		  int32_t imm, enum target_kind kind, int pc)
{
	int err = add_fixup(x, kind, pc);

	return err ? err : c2e_ebpf_emit(x->out, code, dst, src, 0, imm);
}

static int16_t scratch_slot(const struct xlat *x, uint32_t k)
{
	return (int16_t)(-x->scratch_off - SCRATCH_BYTES + 8 * (int)k + 4);
}

/* ---- pass 1 and 2: merged rets, reachability ---------------------------- */

static void merge_rets(struct xlat *x)
{
	size_t pc, q;

	/* Jumps to a "ret K" go to the last identical one, which keeps every
	 * jump forward. Quadratic only in the number of distinct rets. Not
	 * when the body reports which ret returned: each keeps its index. */
	for (pc = 0; pc < x->len; pc++) {
		x->canon[pc] = pc;
		if (x->in[pc].code != (BPF_RET | BPF_K) || (x->flags & C2E_EMIT_RET_INDEX))
			continue;
		for (q = x->len; q-- > pc + 1;) {
			if (x->in[q].code == (BPF_RET | BPF_K) &&
			    x->in[q].k == x->in[pc].k) {
				x->canon[pc] = q;
				break;
			}
		}
	}
}

int c2e_xlat_target(const struct xlat *x, size_t pc, uint32_t delta)
{
	return x->canon[pc + 1 + delta];
}

static void mark_reachable(struct xlat *x)
{
	size_t pc;
	int next;

	memset(x->reach, 0, x->len * sizeof(x->reach[0]));
	x->reach[0] = true;
	for (pc = 0; pc < x->len; pc++) {
		const struct sock_filter *f = &x->in[pc];

		if (!x->reach[pc] || is_ret(f->code))
			continue;
		if (f->code == (BPF_JMP | BPF_JA)) {
			x->reach[c2e_xlat_target(x, pc, f->k)] = true;
		} else if (is_cond_jump(f->code)) {
			x->reach[c2e_xlat_target(x, pc, f->jt)] = true;
			x->reach[c2e_xlat_target(x, pc, f->jf)] = true;
		} else {
			x->reach[pc + 1] = true;
		}
	}
	next = x->len;
	for (pc = x->len; pc-- > 0;) {
		x->next_reach[pc] = next;
		if (x->reach[pc])
			next = pc;
	}
}

/* ---- pass 3: what the verifier will know ------------------------------- */

static struct vval vjoin(struct vval a, struct vval b)
{
	if (a.k == V_NONE)
		return b;
	if (b.k == V_NONE)
		return a;
	if (a.k == b.k && a.c == b.c && a.k != V_MIXED)
		return a;
	return (struct vval){ V_MIXED, 0 };
}

/* The name of a value the verifier narrowed at (pc, how). */
static struct vval narrowed(struct vval v, size_t pc, uint32_t how)
{
	uint32_t h = v.k == V_CONST ? v.c ^ 0x5bd1e995u : v.c;

	h = (h ^ (uint32_t)pc * 0x9e3779b1u) * 0x85ebca6bu;
	h = (h ^ how ^ (h >> 13)) * 0xc2b2ae35u;
	return (struct vval){ V_UNKNOWN, h | 1 };
}

static void flow_into(struct xlat *x, size_t to, const struct vstate *s)
{
	struct vstate *d = &x->vs[to];

	if (!d->seen) {
		*d = *s;
		d->seen = true;
		return;
	}
	d->a = vjoin(d->a, s->a);
	d->x = vjoin(d->x, s->x);
	d->x_is_a = d->x_is_a && s->x_is_a;
}

/* Uses and definitions of A (bit 0) and X (bit 1), for liveness. */
static void uses_defs(const struct sock_filter *f, uint8_t *use, uint8_t *def)
{
	*use = *def = 0;
	switch (BPF_CLASS(f->code)) {
	case BPF_LD:
		*use = BPF_MODE(f->code) == BPF_IND ? 2 : 0; /* [x + k] */
		*def = 1;
		break;
	case BPF_LDX:
		*def = 2;
		break;
	case BPF_ST:
		*use = 1;
		break;
	case BPF_STX:
		*use = 2;
		break;
	case BPF_ALU:
		*use = 1 | (BPF_SRC(f->code) == BPF_X && BPF_OP(f->code) != BPF_NEG ? 2 : 0);
		*def = 1;
		break;
	case BPF_JMP:
		if (BPF_OP(f->code) != BPF_JA)
			*use = 1 | (BPF_SRC(f->code) == BPF_X ? 2 : 0);
		break;
	case BPF_RET:
		*use = BPF_RVAL(f->code) == BPF_A ? 1 : 0;
		break;
	case BPF_MISC:
		*use = BPF_MISCOP(f->code) == BPF_TAX ? 1 : 2;
		*def = BPF_MISCOP(f->code) == BPF_TAX ? 2 : 1;
		break;
	}
}

static void compute_liveness(struct xlat *x)
{
	size_t pc;

	/* Jumps only go forward, so one backward pass is exact. */
	for (pc = x->len; pc-- > 0;) {
		const struct sock_filter *f = &x->in[pc];
		uint8_t use, def, out = 0;

		if (!x->reach[pc]) {
			x->live[pc] = 0;
			continue;
		}
		if (f->code == (BPF_JMP | BPF_JA))
			out = x->live[c2e_xlat_target(x, pc, f->k)];
		else if (is_cond_jump(f->code))
			out = x->live[c2e_xlat_target(x, pc, f->jt)] |
			      x->live[c2e_xlat_target(x, pc, f->jf)];
		else if (!is_ret(f->code))
			out = x->live[pc + 1];
		uses_defs(f, &use, &def);
		x->live[pc] = use | (out & ~def);
	}
}

/*
 * What a compare teaches the verifier on one edge. Equal names never mean
 * equal values, so a constant passes from A to X only when X is a real copy
 * of A (or the operand of a taken jeq).
 */
static void narrow_edge(struct vstate *t, const struct sock_filter *f,
			size_t pc, bool taken)
{
	bool jeq_taken = BPF_OP(f->code) == BPF_JEQ && taken;
	bool x_operand = BPF_SRC(f->code) == BPF_X;
	struct vval b = x_operand ? t->x : (struct vval){ V_CONST, f->k };

	if (jeq_taken && b.k == V_CONST)
		t->a = b;
	else if (jeq_taken && x_operand && t->a.k == V_CONST)
		t->x = t->a;
	else
		t->a = narrowed(t->a, pc, taken);
	if (t->x_is_a)
		t->x = t->a;
	else if (x_operand && !(jeq_taken && t->x.k == V_CONST))
		t->x = jeq_taken && t->a.k == V_CONST ? t->a :
		       narrowed(t->x, pc, taken | 2);
}

/*
 * Does any path read A or X before writing it? Then the body starts with
 * "A = 0" / "X = 0". Computed over every emitted path, including those the
 * analysis below knows are dead: the verifier may not know it.
 */
static void find_reads_before_writes(struct xlat *x)
{
	uint8_t *unset = calloc(x->len + 1, 1); /* bits: may still be unset */
	size_t pc;

	if (!unset) { /* cautious fallback: initialise both */
		x->need_init_a = x->need_init_x = true;
		return;
	}
	unset[0] = 3;
	for (pc = 0; pc < x->len; pc++) {
		const struct sock_filter *f = &x->in[pc];
		uint8_t use, def, out;

		if (!x->reach[pc])
			continue;
		uses_defs(f, &use, &def);
		if (use & unset[pc] & 1)
			x->need_init_a = true;
		if (use & unset[pc] & 2)
			x->need_init_x = true;
		out = unset[pc] & ~def;
		if (f->code == (BPF_JMP | BPF_JA)) {
			unset[c2e_xlat_target(x, pc, f->k)] |= out;
		} else if (is_cond_jump(f->code)) {
			unset[c2e_xlat_target(x, pc, f->jt)] |= out;
			unset[c2e_xlat_target(x, pc, f->jf)] |= out;
		} else if (!is_ret(f->code)) {
			unset[pc + 1] |= out;
		}
	}
	free(unset);
}

static void analyse_verifier_knowledge(struct xlat *x)
{
	struct vstate s = { .a = { V_CONST, 0 }, .x = { V_CONST, 0 }, .seen = true };
	size_t pc;

	memset(x->vs, 0, x->len * sizeof(x->vs[0]));
	memset(x->launder, 0, x->len);
	x->vs[0] = s;
	for (pc = 0; pc < x->len; pc++) {
		const struct sock_filter *f = &x->in[pc];
		uint8_t use, def;

		if (!x->reach[pc] || !x->vs[pc].seen)
			continue;
		s = x->vs[pc];
		/* Paths that join here disagree: make the value unknown to the
		 * verifier, if anything still reads it. */
		if (s.a.k == V_MIXED && (x->live[pc] & 1)) {
			x->launder[pc] |= 1;
			x->need_zero = true;
		}
		if (s.x.k == V_MIXED && (x->live[pc] & 2)) {
			x->launder[pc] |= 2;
			x->need_zero = true;
		}
		if (s.a.k == V_MIXED)
			s.a = FRESH;
		if (s.x.k == V_MIXED)
			s.x = FRESH;
		x->vs[pc] = s; /* what emission sees, after laundering */

		if ((f->code == BPF_ST && s.a.k == V_CONST && s.a.c == 0) ||
		    (f->code == BPF_STX && s.x.k == V_CONST && s.x.c == 0))
			x->need_zero = true;
		uses_defs(f, &use, &def);
		if (def)
			s.x_is_a = BPF_CLASS(f->code) == BPF_MISC;

		switch (f->code) {
		case BPF_LD | BPF_W | BPF_ABS:
		case BPF_LD | BPF_W | BPF_IND:
		case BPF_LD | BPF_MEM: /* scratch bytes are opaque to it */
			s.a = FRESH;
			break;
		case BPF_LDX | BPF_MEM:
			s.x = FRESH;
			break;
		case BPF_LD | BPF_W | BPF_LEN:
			s.a = (struct vval){ V_CONST, x->size };
			break;
		case BPF_LDX | BPF_W | BPF_LEN:
			s.x = (struct vval){ V_CONST, x->size };
			break;
		case BPF_LD | BPF_IMM:
			s.a = (struct vval){ V_CONST, f->k };
			break;
		case BPF_LDX | BPF_IMM:
			s.x = (struct vval){ V_CONST, f->k };
			break;
		case BPF_MISC | BPF_TAX:
			s.x = s.a;
			break;
		case BPF_MISC | BPF_TXA:
			s.a = s.x;
			break;
		}
		if (BPF_CLASS(f->code) == BPF_ALU) {
			struct vval b = BPF_SRC(f->code) == BPF_X ?
					s.x : (struct vval){ V_CONST, f->k };
			uint16_t op = BPF_OP(f->code);

			if (op == BPF_NEG)
				b = (struct vval){ V_CONST, 0 };
			/* Division and negation are not folded by every
			 * verifier; treat their results as unknown, which is
			 * the cautious side for both pruning and dead code. */
			if (op == BPF_DIV || op == BPF_NEG)
				s.a = narrowed(s.a, pc, b.c ^ f->code);
			else if (s.a.k == V_CONST && b.k == V_CONST)
				s.a.c = c2e_alu32(op, s.a.c, b.c);
			else if ((op == BPF_AND || op == BPF_MUL) &&
				 b.k == V_CONST && b.c == 0)
				s.a = (struct vval){ V_CONST, 0 };
			else
				s.a = narrowed(s.a, pc, b.c ^ f->code);
			/* "if x == 0" before a division narrows X. */
			if (f->code == (BPF_ALU | BPF_DIV | BPF_X) && s.x.k != V_CONST)
				s.x = narrowed(s.x, pc, 7);
		}

		if (is_ret(f->code))
			continue;
		if (f->code == (BPF_JMP | BPF_JA)) {
			flow_into(x, c2e_xlat_target(x, pc, f->k), &s);
		} else if (is_cond_jump(f->code)) {
			struct vval b = BPF_SRC(f->code) == BPF_X ?
					s.x : (struct vval){ V_CONST, f->k };
			struct vstate t = s, e = s;

			if (s.a.k == V_CONST && b.k == V_CONST) {
				/* The verifier decides this branch itself. */
				bool taken = c2e_jump_taken(BPF_OP(f->code), s.a.c, b.c);

				flow_into(x, c2e_xlat_target(x, pc, taken ? f->jt : f->jf), &s);
				continue;
			}
			narrow_edge(&t, f, pc, true);
			narrow_edge(&e, f, pc, false);
			flow_into(x, c2e_xlat_target(x, pc, f->jt), &t);
			flow_into(x, c2e_xlat_target(x, pc, f->jf), &e);
		} else {
			flow_into(x, pc + 1, &s);
		}
	}
}

/* ---- pass 4: emission -------------------------------------------------- */

static uint8_t jmp_op(uint16_t classic_op, bool negate)
{
	switch (classic_op) {
	case BPF_JEQ: return negate ? BPF_JNE : BPF_JEQ;
	case BPF_JGT: return negate ? BPF_JLE : BPF_JGT;
	case BPF_JGE: return negate ? BPF_JLT : BPF_JGE;
	default:      return BPF_JSET; /* no negation exists */
	}
}

static int emit_cond_jump(struct xlat *x, size_t pc)
{
	const struct sock_filter *f = &x->in[pc];
	int t = c2e_xlat_target(x, pc, f->jt), e = c2e_xlat_target(x, pc, f->jf);
	int next = x->next_reach[pc];
	uint8_t src = BPF_SRC(f->code) == BPF_X ? BPF_X : BPF_K;
	uint8_t sreg = src == BPF_X ? REG_X : 0;
	int32_t imm = src == BPF_X ? 0 : (int32_t)f->k;
	uint16_t op = BPF_OP(f->code);
	int err;

	if (t == e)
		return t == next ? 0 :
		       c2e_xlat_jump(x, BPF_JMP | BPF_JA, 0, 0, 0, TO_PC, t);
	if (e == next)
		return c2e_xlat_jump(x, BPF_JMP32 | jmp_op(op, false) | src, REG_A,
				 sreg, imm, TO_PC, t);
	if (t == next && op != BPF_JSET)
		return c2e_xlat_jump(x, BPF_JMP32 | jmp_op(op, true) | src, REG_A,
				 sreg, imm, TO_PC, e);
	err = c2e_xlat_jump(x, BPF_JMP32 | jmp_op(op, false) | src, REG_A, sreg,
			imm, TO_PC, t);
	if (err)
		return err;
	return c2e_xlat_jump(x, BPF_JMP | BPF_JA, 0, 0, 0, TO_PC, e);
}

/* The last emitted classic instruction falls through to the end. */
static bool falls_to_end(const struct xlat *x, size_t pc)
{
	return (size_t)x->next_reach[pc] == x->len && !x->need_ret0;
}

/*
 * Scratch stores. The verifier tracks a slot exactly when it sees a known
 * zero stored (STACK_ZERO) and then keeps paths apart that differ only in
 * that; a known constant is therefore stored as an immediate (plain bytes
 * to the verifier) and a known zero as r8, the zero it cannot see.
 */
static int emit_store(struct xlat *x, size_t pc)
{
	const struct sock_filter *f = &x->in[pc];
	bool from_x = f->code == BPF_STX;
	struct vval v = from_x ? x->vs[pc].x : x->vs[pc].a;
	int16_t slot = scratch_slot(x, f->k);

	if (v.k == V_CONST && v.c == 0)
		EMIT(x, BPF_STX | BPF_MEM | BPF_W, BPF_REG_10, REG_ZERO, slot, 0);
	else if (v.k == V_CONST)
		EMIT(x, BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, slot, (int32_t)v.c);
	else
		EMIT(x, BPF_STX | BPF_MEM | BPF_W, BPF_REG_10,
		     from_x ? REG_X : REG_A, slot, 0);
	return 0;
}

/*
 * A = the u32 at r6 + r0 (r0 in range, not 4-byte aligned), from four byte
 * loads: the verifier refuses unaligned stack access. Needs two registers
 * besides r0: X is kept meanwhile in the free word of scratch slot 0 (M[k]
 * use the upper words) and r8 is zeroed again afterwards if the body
 * relies on it.
 */
static int emit_bytewise_load(struct xlat *x)
{
	int16_t keep_x = (int16_t)(-x->scratch_off - SCRATCH_BYTES);
	int i;

	EMIT(x, BPF_STX | BPF_MEM | BPF_W, BPF_REG_10, REG_X, keep_x, 0);
	EMIT(x, BPF_ALU64 | BPF_ADD | BPF_X, REG_A, REG_D, 0, 0);
	EMIT(x, BPF_LDX | BPF_MEM | BPF_B, REG_X, REG_A, 3, 0);
	for (i = 2; i >= 0; i--) {
		EMIT(x, BPF_ALU | BPF_LSH | BPF_K, REG_X, 0, 0, 8);
		EMIT(x, BPF_LDX | BPF_MEM | BPF_B, REG_ZERO, REG_A, i, 0);
		EMIT(x, BPF_ALU | BPF_OR | BPF_X, REG_X, REG_ZERO, 0, 0);
	}
	EMIT(x, BPF_ALU | BPF_MOV | BPF_X, REG_A, REG_X, 0, 0);
	EMIT(x, BPF_LDX | BPF_MEM | BPF_W, REG_X, BPF_REG_10, keep_x, 0);
	if (x->need_zero) {
		EMIT(x, BPF_LDX | BPF_MEM | BPF_W, REG_ZERO, REG_D, 0, 0);
		EMIT(x, BPF_ALU | BPF_XOR | BPF_X, REG_ZERO, REG_ZERO, 0, 0);
	}
	return 0;
}

/*
 * A = the u32 at X + k. The offset is computed in 64 bits (no wrap) and
 * checked against size - 4 before it touches r6, which is also what the
 * verifier needs to accept a variable offset; past the end, the filter
 * returns 0. Aligned offsets take one word load: the AND tells the
 * verifier the alignment (older kernels learn nothing from the JSET), and
 * the range check comes after it because 6.18's JSET refinement widens
 * the bounds back to what the bits allow.
 */
static int emit_ind_load(struct xlat *x, uint32_t k)
{
	size_t skip_at;
	int err;

	/* Out of range whatever X is. A conditional jump, so the rest stays
	 * reachable in the verifier's static check of the code. */
	if (k > x->size - 4)
		return c2e_xlat_jump(x, BPF_JMP | BPF_JGE | BPF_K, REG_X, 0, 0,
				     TO_RET0, 0);
	EMIT(x, BPF_ALU | BPF_MOV | BPF_X, REG_A, REG_X, 0, 0);
	if (k)
		EMIT(x, BPF_ALU64 | BPF_ADD | BPF_K, REG_A, 0, 0, (int32_t)k);
	EMIT(x, BPF_JMP | BPF_JSET | BPF_K, REG_A, 0, 5, 3);
	EMIT(x, BPF_ALU64 | BPF_AND | BPF_K, REG_A, 0, 0, -4);
	err = c2e_xlat_jump(x, BPF_JMP | BPF_JGT | BPF_K, REG_A, 0,
			    x->size - 4, TO_RET0, 0);
	if (err)
		return err;
	EMIT(x, BPF_ALU64 | BPF_ADD | BPF_X, REG_A, REG_D, 0, 0);
	EMIT(x, BPF_LDX | BPF_MEM | BPF_W, REG_A, REG_A, 0, 0);
	skip_at = x->out->len;
	EMIT(x, BPF_JMP | BPF_JA, 0, 0, 0, 0);
	err = c2e_xlat_jump(x, BPF_JMP | BPF_JGT | BPF_K, REG_A, 0,
			    x->size - 4, TO_RET0, 0);
	if (!err)
		err = emit_bytewise_load(x);
	if (err)
		return err;
	x->out->insns[skip_at].off = (int16_t)(x->out->len - skip_at - 1);
	return 0;
}

static int emit_insn(struct xlat *x, size_t pc)
{
	const struct sock_filter *f = &x->in[pc];
	uint8_t op = BPF_OP(f->code);
	int32_t k = (int32_t)f->k;

	/* Adding an unknown zero leaves no known bit or bound behind. */
	if (x->launder[pc] & 1)
		EMIT(x, BPF_ALU | BPF_ADD | BPF_X, REG_A, REG_ZERO, 0, 0);
	if (x->launder[pc] & 2)
		EMIT(x, BPF_ALU | BPF_ADD | BPF_X, REG_X, REG_ZERO, 0, 0);

	switch (f->code) {
	case BPF_LD | BPF_W | BPF_ABS:
		if (f->k % 4 == 0) {
			EMIT(x, BPF_LDX | BPF_MEM | BPF_W, REG_A, REG_D, (int16_t)f->k, 0);
			return 0;
		}
		EMIT(x, BPF_ALU64 | BPF_MOV | BPF_K, REG_A, 0, 0, k);
		return emit_bytewise_load(x);
	case BPF_LD | BPF_W | BPF_IND:
		return emit_ind_load(x, f->k);
	case BPF_LD | BPF_W | BPF_LEN:
		EMIT(x, BPF_ALU | BPF_MOV | BPF_K, REG_A, 0, 0, x->size);
		return 0;
	case BPF_LDX | BPF_W | BPF_LEN:
		EMIT(x, BPF_ALU | BPF_MOV | BPF_K, REG_X, 0, 0, x->size);
		return 0;
	case BPF_LD | BPF_IMM:
		EMIT(x, BPF_ALU | BPF_MOV | BPF_K, REG_A, 0, 0, k);
		return 0;
	case BPF_LDX | BPF_IMM:
		EMIT(x, BPF_ALU | BPF_MOV | BPF_K, REG_X, 0, 0, k);
		return 0;
	case BPF_LD | BPF_MEM:
		EMIT(x, BPF_LDX | BPF_MEM | BPF_W, REG_A, BPF_REG_10, scratch_slot(x, f->k), 0);
		return 0;
	case BPF_LDX | BPF_MEM:
		EMIT(x, BPF_LDX | BPF_MEM | BPF_W, REG_X, BPF_REG_10, scratch_slot(x, f->k), 0);
		return 0;
	case BPF_ST:
	case BPF_STX:
		return emit_store(x, pc);
	case BPF_MISC | BPF_TAX:
		EMIT(x, BPF_ALU | BPF_MOV | BPF_X, REG_X, REG_A, 0, 0);
		return 0;
	case BPF_MISC | BPF_TXA:
		EMIT(x, BPF_ALU | BPF_MOV | BPF_X, REG_A, REG_X, 0, 0);
		return 0;
	case BPF_ALU | BPF_NEG:
		EMIT(x, BPF_ALU | BPF_NEG, REG_A, 0, 0, 0);
		return 0;
	case BPF_ALU | BPF_DIV | BPF_X: {
		/* Classic BPF returns 0 from the whole program here; eBPF
		 * division by zero would just yield 0 and go on. */
		int err = c2e_xlat_jump(x, BPF_JMP32 | BPF_JEQ | BPF_K, REG_X, 0, 0,
				    TO_RET0, 0);
		if (err)
			return err;
		EMIT(x, BPF_ALU | BPF_DIV | BPF_X, REG_A, REG_X, 0, 0);
		return 0;
	}
	case BPF_JMP | BPF_JA: {
		int t = c2e_xlat_target(x, pc, f->k);

		return t == x->next_reach[pc] ? 0 :
		       c2e_xlat_jump(x, BPF_JMP | BPF_JA, 0, 0, 0, TO_PC, t);
	}
	case BPF_RET | BPF_K:
	case BPF_RET | BPF_A:
		if (x->flags & C2E_EMIT_RET_INDEX)
			EMIT(x, BPF_ALU | BPF_MOV | BPF_K, REG_RET_INDEX, 0, 0, (int32_t)pc);
		if (BPF_RVAL(f->code) == BPF_K)
			EMIT(x, BPF_ALU | BPF_MOV | BPF_K, REG_A, 0, 0, k);
		return falls_to_end(x, pc) ? 0 :
		       c2e_xlat_jump(x, BPF_JMP | BPF_JA, 0, 0, 0, TO_END, 0);
	}
	if (BPF_CLASS(f->code) == BPF_ALU) {
		/* Shifts by X: eBPF masks a 32-bit shift count to 5 bits, as
		 * classic BPF does. */
		if (BPF_SRC(f->code) == BPF_X)
			EMIT(x, BPF_ALU | op | BPF_X, REG_A, REG_X, 0, 0);
		else
			EMIT(x, BPF_ALU | op | BPF_K, REG_A, 0, 0, k);
		return 0;
	}
	if (is_cond_jump(f->code))
		return emit_cond_jump(x, pc);
	return -EINVAL; /* not a validated program */
}

static int resolve_fixups(struct xlat *x)
{
	size_t i;

	for (i = 0; i < x->nfix; i++) {
		const struct fixup *fx = &x->fix[i];
		size_t target = fx->kind == TO_END ? x->end_at :
				fx->kind == TO_RET0 ? x->ret0_at :
				x->start[fx->pc];
		long off = (long)target - (long)(fx->at + 1);

		if (off < INT16_MIN || off > INT16_MAX)
			return -E2BIG;
		x->out->insns[fx->at].off = (int16_t)off;
	}
	return 0;
}

/* Division by X and loads at X + k can end the filter with 0. */
static bool may_return_0_early(const struct xlat *x)
{
	size_t pc;

	for (pc = 0; pc < x->len; pc++)
		if (x->reach[pc] &&
		    (x->in[pc].code == (BPF_ALU | BPF_DIV | BPF_X) ||
		     x->in[pc].code == (BPF_LD | BPF_W | BPF_IND)))
			return true;
	return false;
}

/* The byte-wise load keeps X on the stack, so X must be set by then. */
static bool loads_bytewise(const struct xlat *x)
{
	size_t pc;

	for (pc = 0; pc < x->len; pc++)
		if (x->reach[pc] &&
		    ((x->in[pc].code == (BPF_LD | BPF_W | BPF_ABS) && x->in[pc].k % 4) ||
		     x->in[pc].code == (BPF_LD | BPF_W | BPF_IND)))
			return true;
	return false;
}

int c2e_emit_body_abi(const struct sock_filter *insns, size_t len,
		      enum c2e_abi abi, int scratch_off, unsigned int flags,
		      struct c2e_ebpf *out)
{
	struct xlat x = { .in = insns, .len = len, .abi = abi,
			  .size = c2e_abi_data_size(abi),
			  .scratch_off = scratch_off, .out = out, .flags = flags };
	size_t pc, body_start = out->len;
	int err = -ENOMEM;

	if (len == 0 || len > C2E_MAX_INSNS || scratch_off <= 0 ||
	    scratch_off % 8 || scratch_off + SCRATCH_BYTES > 512)
		return -EINVAL;
	if (c2e_validate_abi(insns, len, abi, NULL))
		return -EINVAL;
	x.canon = calloc(len, sizeof(*x.canon));
	x.reach = calloc(len, sizeof(*x.reach));
	x.next_reach = calloc(len, sizeof(*x.next_reach));
	x.start = calloc(len, sizeof(*x.start));
	x.vs = calloc(len, sizeof(*x.vs));
	x.launder = calloc(len, 1);
	x.live = calloc(len, 1);
	x.run_len = calloc(len, sizeof(*x.run_len));
	x.absorbed = calloc(len, sizeof(*x.absorbed));
	if (!x.canon || !x.reach || !x.next_reach || !x.start || !x.vs ||
	    !x.launder || !x.live || !x.run_len || !x.absorbed)
		goto out;
	if (flags & ~(C2E_EMIT_SEARCH | C2E_EMIT_RET_INDEX)) {
		err = -EINVAL;
		goto out;
	}

	merge_rets(&x);
	mark_reachable(&x);
	compute_liveness(&x);
	find_reads_before_writes(&x);
	x.need_init_x |= loads_bytewise(&x);
	analyse_verifier_knowledge(&x);
	x.need_ret0 = may_return_0_early(&x);
	err = flags & C2E_EMIT_SEARCH ? c2e_xlat_find_search_runs(&x) : 0;
	if (err)
		goto out;

	if (x.need_init_a)
		EMIT_OR_OUT(x, BPF_ALU | BPF_MOV | BPF_K, REG_A, 0, 0, 0);
	if (x.need_init_x)
		EMIT_OR_OUT(x, BPF_ALU | BPF_MOV | BPF_K, REG_X, 0, 0, 0);
	if (x.need_zero) {
		EMIT_OR_OUT(x, BPF_LDX | BPF_MEM | BPF_W, REG_ZERO, REG_D, 0, 0);
		EMIT_OR_OUT(x, BPF_ALU | BPF_XOR | BPF_X, REG_ZERO, REG_ZERO, 0, 0);
	}
	for (pc = 0; pc < len; pc++) {
		if (!x.reach[pc] || x.absorbed[pc])
			continue;
		x.start[pc] = out->len;
		err = x.run_len[pc] ? c2e_xlat_emit_search_run(&x, pc) : emit_insn(&x, pc);
		if (err)
			goto out;
	}
	if (x.need_ret0) {
		x.ret0_at = out->len;
		if (flags & C2E_EMIT_RET_INDEX)
			EMIT_OR_OUT(x, BPF_ALU | BPF_MOV | BPF_K, REG_RET_INDEX, 0, 0, (int32_t)len);
		EMIT_OR_OUT(x, BPF_ALU | BPF_MOV | BPF_K, REG_A, 0, 0, 0);
	}
	x.end_at = out->len;
	err = resolve_fixups(&x);
out:
	if (err)
		out->len = body_start;
	free(x.canon);
	free(x.reach);
	free(x.next_reach);
	free(x.start);
	free(x.vs);
	free(x.launder);
	free(x.live);
	free(x.run_len);
	free(x.absorbed);
	free(x.fix);
	return err;
}
