/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Classic BPF's arithmetic and comparisons, in one place for the
 * interpreter, the translator's analysis and the action table. Internal to
 * the library (not installed).
 */
#ifndef C2E_SEMANTICS_H
#define C2E_SEMANTICS_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

/* A op b, 32-bit. Division by zero is the caller's case: in classic BPF
 * it ends the program with 0, so no value is defined; 0 is returned. */
static inline uint32_t c2e_alu32(uint16_t op, uint32_t a, uint32_t b)
{
	switch (op) {
	case BPF_ADD: return a + b;
	case BPF_SUB: return a - b;
	case BPF_MUL: return a * b;
	case BPF_DIV: return b ? a / b : 0;
	case BPF_AND: return a & b;
	case BPF_OR:  return a | b;
	case BPF_XOR: return a ^ b;
	case BPF_LSH: return a << (b & 31); /* shift counts are mod 32 */
	case BPF_RSH: return a >> (b & 31);
	default:      return -a;            /* BPF_NEG */
	}
}

/* Is a conditional jump (JEQ, JGT, JGE, JSET) taken? Unsigned 32-bit. */
static inline bool c2e_jump_taken(uint16_t op, uint32_t a, uint32_t b)
{
	switch (op) {
	case BPF_JEQ: return a == b;
	case BPF_JGT: return a > b;
	case BPF_JGE: return a >= b;
	default:      return (a & b) != 0; /* BPF_JSET */
	}
}

/*
 * The kernel's stacking rule, kernel/seccomp.c seccomp_run_filters():
 * filters run newest first, and an older filter's result replaces the best
 * so far only when ACTION_ONLY(cur) < ACTION_ONLY(ret), the actions
 * compared as signed values: the lowest action wins, and a tie keeps the
 * newer filter's full value (with its data).
 *
 * The one definition of it is C2E_FOLD_KEEP_OP: the signed eBPF jump the
 * emitted fold (c2e_emit_fold()) takes to keep the best so far, and the
 * comparison c2e_stack_combine() and the action table evaluate through
 * c2e_fold_keeps(). Changing it changes the C and the eBPF together; the
 * tests hold both to the kernel's table.
 */
#define C2E_FOLD_KEEP_OP BPF_JSGE /* keep unless rank(older) s< rank(best) */

/* ACTION_ONLY(): the action of a return value, as a signed rank. */
static inline int32_t c2e_action_rank(uint32_t ret)
{
	return (int32_t)(ret & SECCOMP_RET_ACTION_FULL);
}

/* Is a signed eBPF conditional jump (JSGT, JSGE, JSLT, JSLE) taken? */
static inline bool c2e_jump_signed_taken(uint8_t op, int32_t a, int32_t b)
{
	switch (op) {
	case BPF_JSGT: return a > b;
	case BPF_JSGE: return a >= b;
	case BPF_JSLT: return a < b;
	default:       return a <= b; /* BPF_JSLE */
	}
}
_Static_assert(C2E_FOLD_KEEP_OP == BPF_JSGT || C2E_FOLD_KEEP_OP == BPF_JSGE ||
	       C2E_FOLD_KEEP_OP == BPF_JSLT || C2E_FOLD_KEEP_OP == BPF_JSLE,
	       "the fold compares ranks signed, as ACTION_ONLY() does");

/* Does the fold keep best (the newer filters' verdict) over an older
 * filter's result? */
static inline bool c2e_fold_keeps(uint32_t best, uint32_t older)
{
	return c2e_jump_signed_taken(C2E_FOLD_KEEP_OP, c2e_action_rank(older),
				     c2e_action_rank(best));
}

#endif
