/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Shared by diff.c (the numbers, the points run, the regions) and
 * diff_class.c (what the filters test of each seccomp_data word, and the
 * classes that makes). Internal to the library (not installed).
 */
#ifndef C2E_DIFF_INT_H
#define C2E_DIFF_INT_H

#include "c2e.h"

#include <stdbool.h>

#define DIFF_MAX_PREDS 64   /* per word; past it the word is sampled */
#define DIFF_MAX_HINTS 32   /* constants met by a sampled word's arithmetic */
#define DIFF_MAX_REPS  1024 /* values run per word */
#define DIFF_SET_WORDS (DIFF_MAX_REPS / 64) /* a set of interval classes */

/* (word & mask) op k. P_SET: (word & mask) != 0, k unused. */
enum { P_EQ, P_GT, P_GE, P_SET };
struct diff_pred {
	uint8_t op;
	uint32_t mask, k;
};

/*
 * How a word's values are classed:
 *   W_INTERVAL  only raw compares: the classes are the intervals between
 *               the cut points, one value each (exact);
 *   W_BITS      masked predicates over a few bits, with raw compares or
 *               not: one value of every (interval, bits under the masks)
 *               pair (exact);
 *   W_SAMPLED   anything else: boundaries and random values.
 */
enum { W_INTERVAL, W_BITS, W_SAMPLED };
struct diff_word {
	bool tested, tainted, overflow;
	struct diff_pred p[DIFF_MAX_PREDS];
	unsigned int np;
	uint32_t hint[DIFF_MAX_HINTS];
	unsigned int nh;
	int kind;
	uint32_t cuts[DIFF_MAX_REPS]; /* W_INTERVAL: sorted class starts, cuts[0] == 0 */
	size_t ncuts;
	uint32_t reps[DIFF_MAX_REPS];
	size_t nreps;
};

/* What both chains test for one (arch, nr). */
struct diff_class {
	uint32_t arch, nr;
	struct diff_word w[C2E_DIFF_WORDS];
	bool gave_up;  /* the analysis ran out of its budget: every word sampled */
	size_t steps;
};

/* Walks every filter of the chain (over-approximating paths, as
 * consttable.c does) and records the predicates on each word. */
void diff_class_scan(struct diff_class *c, const struct sock_fprog *chain, size_t n);
/* Classes each tested word (kind, cuts, reps) once both chains are
 * scanned; seed makes the random values. */
void diff_class_finish(struct diff_class *c, uint64_t seed);
/* The class of value v of word w: the interval's index, or the bitmap of
 * the predicates' outcomes. */
uint64_t diff_class_of(const struct diff_word *w, uint32_t v);
/* Appends " && "-joined text for word `word`: the values of the interval
 * classes in set, or the predicates in care with their outcomes in val.
 * Nothing when the region does not constrain the word. */
void diff_class_describe(const struct diff_word *w, unsigned int word,
			 const uint64_t set[DIFF_SET_WORDS], uint64_t care, uint64_t val,
			 char *buf, size_t size);
/* splitmix64. */
uint64_t diff_rand(uint64_t *state);

#endif
