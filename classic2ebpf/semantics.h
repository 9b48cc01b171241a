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
#include <linux/filter.h>

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

#endif
