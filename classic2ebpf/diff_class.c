// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What two chains test of each seccomp_data word for one (arch, nr), and
 * the classes of values that makes: the half of c2e_diff_chains() that
 * reads programs. diff.c runs one value of every class through the
 * interpreter.
 *
 * A symbolic walk of each program, nr and arch known: A, X and M[k] are a
 * constant, a word masked by a constant (word & mask, mask all ones for
 * the word itself), or "tainted" by words through other arithmetic. A
 * conditional jump on a masked word and a constant is a predicate on that
 * word; both sides are walked (jumps only go forward, so every path ends),
 * which over-approximates the paths real inputs take: more predicates,
 * never fewer. A jump or a "ret A" on a tainted value makes its words
 * sampled, with the constants it met as hints.
 */
#include "diff_int.h"
#include "grow.h"
#include "semantics.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PATH_BUDGET 400000   /* instructions walked per (arch, nr), both chains */
#define BITS_ENUM_MAX 10     /* mask bits enumerated whole (2^10 values) */
#define RANDOM_REPS 8

enum { S_CONST, S_WORD, S_TAINT };
struct sval {
	uint8_t kind;
	uint8_t word;     /* S_WORD */
	uint16_t taint;   /* S_TAINT: the words it came from */
	uint32_t v;       /* S_CONST: the value; S_WORD: the mask */
};
struct sstate {
	uint32_t pc;
	struct sval a, x, m[C2E_MEMWORDS];
};

uint64_t diff_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static struct sval cnst(uint32_t v)
{
	return (struct sval){ .kind = S_CONST, .v = v };
}

static struct sval masked(unsigned int word, uint32_t mask)
{
	return mask ? (struct sval){ .kind = S_WORD, .word = (uint8_t)word, .v = mask } : cnst(0);
}

static uint16_t taint_of(struct sval v)
{
	return v.kind == S_CONST ? 0 : v.kind == S_WORD ? (uint16_t)(1u << v.word) : v.taint;
}

static struct sval tainted(uint16_t t)
{
	return (struct sval){ .kind = S_TAINT, .taint = t };
}

static void add_pred(struct diff_class *c, unsigned int word, uint8_t op, uint32_t mask,
		     uint32_t k)
{
	struct diff_word *w = &c->w[word];
	unsigned int i;

	w->tested = true;
	if (op == P_SET)
		k = 0;
	for (i = 0; i < w->np; i++)
		if (w->p[i].op == op && w->p[i].mask == mask && w->p[i].k == k)
			return;
	if (w->np == DIFF_MAX_PREDS) {
		w->overflow = true;
		return;
	}
	w->p[w->np++] = (struct diff_pred){ op, mask, k };
}

static void add_taint(struct diff_class *c, uint16_t t, bool has_hint, uint32_t hint)
{
	unsigned int i;

	for (i = 0; i < C2E_DIFF_WORDS; i++) {
		struct diff_word *w = &c->w[i];

		if (!(t & (1u << i)))
			continue;
		w->tested = w->tainted = true;
		if (has_hint && w->nh < DIFF_MAX_HINTS)
			w->hint[w->nh++] = hint;
	}
}

/* A conditional jump on a and b, not both constant: records what it tests.
 * Returns -1 when the jump is decided anyway (0 not taken). */
static int record_jump(struct diff_class *c, uint16_t op, struct sval a, struct sval b)
{
	uint8_t p = op == BPF_JEQ ? P_EQ : op == BPF_JGT ? P_GT : op == BPF_JGE ? P_GE : P_SET;

	if (a.kind == S_WORD && b.kind == S_CONST) {
		if (p == P_SET && !(a.v & b.v))
			return 0; /* no bit of the mask can be set */
		add_pred(c, a.word, p, p == P_SET ? a.v & b.v : a.v, b.v);
	} else if (a.kind == S_CONST && b.kind == S_WORD) {
		/* k > w is !(w >= k); k >= w is !(w > k); == and & commute. */
		if (p == P_SET && !(a.v & b.v))
			return 0;
		add_pred(c, b.word, p == P_GT ? P_GE : p == P_GE ? P_GT : p,
			 p == P_SET ? a.v & b.v : b.v, a.v);
	} else {
		add_taint(c, taint_of(a) | taint_of(b), a.kind == S_CONST || b.kind == S_CONST,
			  a.kind == S_CONST ? a.v : b.v);
	}
	return 1;
}

/* A op src for the walk (op not NEG, not a division by a non-constant). */
static struct sval alu(uint16_t op, struct sval a, struct sval s)
{
	if (a.kind == S_CONST && s.kind == S_CONST)
		return cnst(c2e_alu32(op, a.v, s.v));
	if (op == BPF_AND && a.kind == S_WORD && s.kind == S_CONST)
		return masked(a.word, a.v & s.v);
	if (op == BPF_AND && a.kind == S_CONST && s.kind == S_WORD)
		return masked(s.word, s.v & a.v);
	if ((op == BPF_AND || op == BPF_MUL) &&
	    ((s.kind == S_CONST && !s.v) || (a.kind == S_CONST && !a.v)))
		return cnst(0);
	if (op == BPF_OR && ((s.kind == S_CONST && s.v == ~0u) ||
			     (a.kind == S_CONST && a.v == ~0u)))
		return cnst(~0u);
	/* The identities: the value is the word's as it was. */
	if (s.kind == S_CONST &&
	    ((!s.v && (op == BPF_ADD || op == BPF_SUB || op == BPF_OR || op == BPF_XOR ||
		       op == BPF_LSH || op == BPF_RSH)) ||
	     (s.v == 1 && (op == BPF_MUL || op == BPF_DIV))))
		return a;
	return tainted(taint_of(a) | taint_of(s));
}

static void scan_filter(struct diff_class *c, const struct sock_filter *f, size_t len)
{
	struct sstate *stack, cur;
	size_t sp = 1, cap = 64, i;

	stack = malloc(cap * sizeof(*stack));
	if (!stack) {
		c->gave_up = true;
		return;
	}
	stack[0].pc = 0;
	stack[0].a = stack[0].x = cnst(0);
	for (i = 0; i < C2E_MEMWORDS; i++)
		stack[0].m[i] = cnst(0);
	while (sp && !c->gave_up) {
		cur = stack[--sp];
		for (;;) {
			const struct sock_filter *in;
			struct sval src;
			uint16_t code;
			int t;

			if (cur.pc >= len || ++c->steps > PATH_BUDGET) {
				c->gave_up = true;
				break;
			}
			in = &f[cur.pc++];
			code = in->code;
			src = BPF_SRC(code) == BPF_X ? cur.x : cnst(in->k);
			switch (BPF_CLASS(code)) {
			case BPF_LD:
			case BPF_LDX: {
				struct sval v = cnst(0);

				if (BPF_MODE(code) == BPF_ABS)
					v = in->k == 0 ? cnst(c->nr) : in->k == 4 ? cnst(c->arch) :
					    masked(in->k / 4, ~0u);
				else if (BPF_MODE(code) == BPF_LEN)
					v = cnst(C2E_DATA_SIZE);
				else if (BPF_MODE(code) == BPF_IMM)
					v = cnst(in->k);
				else if (BPF_MODE(code) == BPF_MEM)
					v = cur.m[in->k & (C2E_MEMWORDS - 1)];
				if (BPF_CLASS(code) == BPF_LD)
					cur.a = v;
				else
					cur.x = v;
				continue;
			}
			case BPF_ST:
				cur.m[in->k & (C2E_MEMWORDS - 1)] = cur.a;
				continue;
			case BPF_STX:
				cur.m[in->k & (C2E_MEMWORDS - 1)] = cur.x;
				continue;
			case BPF_MISC:
				if (BPF_MISCOP(code) == BPF_TAX)
					cur.x = cur.a;
				else
					cur.a = cur.x;
				continue;
			case BPF_ALU:
				if (BPF_OP(code) == BPF_NEG) {
					cur.a = cur.a.kind == S_CONST ? cnst(-cur.a.v) :
						tainted(taint_of(cur.a));
				} else if (BPF_OP(code) == BPF_DIV && src.kind != S_CONST) {
					/* X == 0 ends the program with 0: a class. */
					record_jump(c, BPF_JEQ, src, cnst(0));
					cur.a = tainted(taint_of(cur.a) | taint_of(src));
				} else if (BPF_OP(code) == BPF_DIV && !src.v) {
					goto next_path;
				} else {
					cur.a = alu(BPF_OP(code), cur.a, src);
				}
				continue;
			case BPF_JMP:
				if (BPF_OP(code) == BPF_JA) {
					cur.pc += in->k;
					continue;
				}
				if (cur.a.kind == S_CONST && src.kind == S_CONST) {
					t = c2e_jump_taken(BPF_OP(code), cur.a.v, src.v);
				} else {
					t = record_jump(c, BPF_OP(code), cur.a, src);
					if (t > 0) {
						if (C2E_GROW(stack, cap, sp + 1)) {
							c->gave_up = true;
							goto out;
						}
						stack[sp] = cur;
						stack[sp++].pc += in->jt;
						t = 0;
					}
				}
				cur.pc += t ? in->jt : in->jf;
				continue;
			case BPF_RET:
				if (BPF_RVAL(code) == BPF_A && cur.a.kind != S_CONST)
					add_taint(c, taint_of(cur.a), false, 0);
				goto next_path;
			default:
				c->gave_up = true;
				goto out;
			}
		}
next_path:;
	}
out:
	free(stack);
}

void diff_class_scan(struct diff_class *c, const struct sock_fprog *chain, size_t n)
{
	size_t i;

	for (i = 0; i < n && !c->gave_up; i++)
		scan_filter(c, chain[i].filter, chain[i].len);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Sorts and removes duplicates. */
static size_t uniq(uint32_t *v, size_t n)
{
	size_t i, o = 0;

	qsort(v, n, sizeof(*v), cmp_u32);
	for (i = 0; i < n; i++)
		if (!o || v[o - 1] != v[i])
			v[o++] = v[i];
	return o;
}

static void put(uint32_t *v, size_t *n, uint32_t x)
{
	if (*n < DIFF_MAX_REPS)
		v[(*n)++] = x;
}

/* Every value of the bits of mask (at most 2^BITS_ENUM_MAX). */
static void put_subsets(uint32_t *v, size_t *n, uint32_t mask)
{
	uint32_t s = 0;

	do {
		put(v, n, s);
		s = (s - mask) & mask;
	} while (s);
}

/* The class starts of the raw predicates (mask all ones): 0, and where
 * each compare's outcome changes. */
static void raw_cuts(struct diff_word *w)
{
	unsigned int i;

	w->ncuts = 0;
	put(w->cuts, &w->ncuts, 0);
	for (i = 0; i < w->np; i++) {
		uint32_t k = w->p[i].k;

		if (w->p[i].mask != ~0u)
			continue;
		if (w->p[i].op == P_SET) {
			put(w->cuts, &w->ncuts, 1);
			continue;
		}
		if (w->p[i].op != P_GT)
			put(w->cuts, &w->ncuts, k);
		if (w->p[i].op != P_GE && k != ~0u)
			put(w->cuts, &w->ncuts, k + 1);
	}
	w->ncuts = uniq(w->cuts, w->ncuts);
}

/* The low bits of x deposited, in order, at the set bits of mask. */
static uint32_t deposit(uint64_t x, uint32_t mask)
{
	uint32_t r = 0;

	for (; mask; mask &= mask - 1, x >>= 1)
		if (x & 1)
			r |= mask & -mask;
	return r;
}

/* The smallest v >= from with v & mask == bits (bits within mask), or
 * 2^32 when there is none: the values with those bits, in order, are
 * bits | deposit(i, ~mask) for i = 0, 1, ... */
static uint64_t next_with(uint32_t from, uint32_t mask, uint32_t bits)
{
	uint64_t lo = 0, hi = 1ULL << __builtin_popcount(~mask), n = hi;

	while (lo < hi) {
		uint64_t mid = (lo + hi) / 2;

		if ((bits | deposit(mid, ~mask)) >= from)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo == n ? 1ULL << 32 : bits | deposit(lo, ~mask);
}

static void finish_word(struct diff_word *w, bool gave_up, uint64_t *rng)
{
	uint32_t all = 0, masks = 0;
	bool raw = true, exact = !gave_up && !w->tainted && !w->overflow;
	unsigned int i;

	for (i = 0; i < w->np; i++) {
		all |= w->p[i].mask;
		raw &= w->p[i].mask == ~0u;
		if (w->p[i].mask != ~0u)
			masks |= w->p[i].mask;
	}
	w->nreps = w->ncuts = 0;
	if (exact && raw) {
		w->kind = W_INTERVAL;
		raw_cuts(w);
		memcpy(w->reps, w->cuts, w->ncuts * sizeof(w->reps[0]));
		w->nreps = w->ncuts;
		return;
	}
	if (exact && __builtin_popcount(masks) <= BITS_ENUM_MAX) {
		raw_cuts(w);
		if ((w->ncuts << __builtin_popcount(masks)) <= DIFF_MAX_REPS) {
			/* Every predicate's outcome is fixed by the interval
			 * of the raw compares and the bits under the masks:
			 * the first value of each such pair. */
			w->kind = W_BITS;
			for (i = 0; i < w->ncuts; i++) {
				uint64_t end = i + 1 < w->ncuts ? w->cuts[i + 1] : 1ULL << 32;
				uint32_t bits = 0;

				do {
					uint64_t v = next_with(w->cuts[i], masks, bits);

					if (v < end)
						put(w->reps, &w->nreps, (uint32_t)v);
					bits = (bits - masks) & masks;
				} while (bits);
			}
			w->nreps = uniq(w->reps, w->nreps);
			return;
		}
	}
	w->kind = W_SAMPLED;
	put(w->reps, &w->nreps, 0);
	put(w->reps, &w->nreps, 1);
	put(w->reps, &w->nreps, ~0u);
	put(w->reps, &w->nreps, 0x80000000u);
	put(w->reps, &w->nreps, 0x7fffffffu);
	for (i = 0; i < w->np; i++) {
		const struct diff_pred *p = &w->p[i];
		uint32_t k = p->k & p->mask;

		put(w->reps, &w->nreps, k);
		put(w->reps, &w->nreps, k - 1);
		put(w->reps, &w->nreps, k + 1);
		put(w->reps, &w->nreps, p->mask);
		put(w->reps, &w->nreps, ~p->mask);
		put(w->reps, &w->nreps, k ^ (p->mask & -p->mask));
	}
	if (__builtin_popcount(all) <= 6)
		put_subsets(w->reps, &w->nreps, all);
	for (i = 0; i < w->nh; i++) {
		put(w->reps, &w->nreps, w->hint[i]);
		put(w->reps, &w->nreps, w->hint[i] - 1);
		put(w->reps, &w->nreps, w->hint[i] + 1);
	}
	for (i = 0; i < RANDOM_REPS; i++)
		put(w->reps, &w->nreps, (uint32_t)diff_rand(rng));
	w->nreps = uniq(w->reps, w->nreps);
}

void diff_class_finish(struct diff_class *c, uint64_t seed)
{
	uint64_t rng = seed;
	unsigned int i;

	for (i = 2; i < C2E_DIFF_WORDS; i++) {
		if (c->gave_up)
			c->w[i].tested = true;
		if (c->w[i].tested)
			finish_word(&c->w[i], c->gave_up, &rng);
	}
}

static bool pred_holds(const struct diff_pred *p, uint32_t v)
{
	uint32_t x = v & p->mask;

	switch (p->op) {
	case P_EQ: return x == p->k;
	case P_GT: return x > p->k;
	case P_GE: return x >= p->k;
	default:   return x != 0;
	}
}

uint64_t diff_class_of(const struct diff_word *w, uint32_t v)
{
	uint64_t bits = 0;
	unsigned int i;

	if (w->kind == W_INTERVAL) {
		size_t lo = 0, hi = w->ncuts; /* the last cut <= v */

		while (hi - lo > 1) {
			size_t mid = (lo + hi) / 2;

			if (w->cuts[mid] <= v)
				lo = mid;
			else
				hi = mid;
		}
		return lo;
	}
	for (i = 0; i < w->np; i++)
		if (pred_holds(&w->p[i], v))
			bits |= 1ULL << i;
	return bits;
}

const char *c2e_diff_word_name(unsigned int word, char *buf, size_t size)
{
	if (word == 0)
		snprintf(buf, size, "nr");
	else if (word == 1)
		snprintf(buf, size, "arch");
	else if (word < 4)
		snprintf(buf, size, "ip%s", word == 3 ? ".hi" : "");
	else if (word < C2E_DIFF_WORDS)
		snprintf(buf, size, "args[%u]%s", (word - 4) / 2, word & 1 ? ".hi" : "");
	else
		snprintf(buf, size, "word%u", word);
	return buf;
}

static void append(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t size, const char *fmt, ...)
{
	size_t at = strlen(buf);
	va_list ap;

	if (at + 1 >= size)
		return;
	if (at) {
		snprintf(buf + at, size - at, " && ");
		at = strlen(buf);
	}
	va_start(ap, fmt);
	vsnprintf(buf + at, size - at, fmt, ap);
	va_end(ap);
}

static bool in_set(const uint64_t *set, size_t i)
{
	return (set[i / 64] >> (i % 64)) & 1;
}

/* The last value of interval class i. */
static uint32_t class_end(const struct diff_word *w, size_t i)
{
	return i + 1 < w->ncuts ? w->cuts[i + 1] - 1 : ~0u;
}

/* The interval classes of set: one range, every value but a few, or the
 * list of ranges. */
static void describe_set(const struct diff_word *w, const char *name, const uint64_t *set,
			 char *buf, size_t size)
{
	size_t i, j, runs = 0, holes = 0, wide_holes = 0;
	char list[400] = "";
	uint32_t from = 0, to = 0;

	for (i = 0; i < w->ncuts; i++) {
		if (!in_set(set, i)) {
			holes++;
			wide_holes += w->cuts[i] != class_end(w, i);
			continue;
		}
		if (!i || !in_set(set, i - 1)) {
			runs++;
			from = w->cuts[i];
		}
		to = class_end(w, i);
	}
	if (!holes)
		return;
	if (runs == 1) {
		if (from == to)
			append(buf, size, "%s == %#x", name, from);
		else if (from == 0)
			append(buf, size, "%s <= %#x", name, to);
		else if (to == ~0u)
			append(buf, size, "%s >= %#x", name, from);
		else
			append(buf, size, "%#x <= %s <= %#x", from, name, to);
		return;
	}
	if (!wide_holes && holes <= 8) {
		for (i = 0; i < w->ncuts; i++)
			if (!in_set(set, i))
				snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%#x",
					 list[0] ? ", " : "", w->cuts[i]);
		append(buf, size, holes == 1 ? "%s != %s" : "%s not in {%s}", name, list);
		return;
	}
	for (i = 0; i < w->ncuts; i = j) {
		if (!in_set(set, i)) {
			j = i + 1;
			continue;
		}
		for (j = i; j < w->ncuts && in_set(set, j); j++)
			;
		if (w->cuts[i] == class_end(w, j - 1))
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%#x",
				 list[0] ? ", " : "", w->cuts[i]);
		else
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%#x..%#x",
				 list[0] ? ", " : "", w->cuts[i], class_end(w, j - 1));
	}
	append(buf, size, "%s in {%s}", name, list);
}

void diff_class_describe(const struct diff_word *w, unsigned int word,
			 const uint64_t set[DIFF_SET_WORDS], uint64_t care, uint64_t val,
			 char *buf, size_t size)
{
	char name[16];
	unsigned int i;

	c2e_diff_word_name(word, name, sizeof(name));
	if (w->kind == W_INTERVAL) {
		describe_set(w, name, set, buf, size);
		return;
	}
	for (i = 0; i < w->np; i++) {
		const struct diff_pred *p = &w->p[i];
		bool yes = val & (1ULL << i);
		char lhs[40];

		if (!(care & (1ULL << i)))
			continue;
		if (p->mask == ~0u)
			snprintf(lhs, sizeof(lhs), "%s", name);
		else
			snprintf(lhs, sizeof(lhs), "%s & %#x", name, p->mask);
		switch (p->op) {
		case P_EQ:
			append(buf, size, "%s %s %#x", lhs, yes ? "==" : "!=", p->k);
			break;
		case P_GT:
			append(buf, size, "%s %s %#x", lhs, yes ? ">" : "<=", p->k);
			break;
		case P_GE:
			append(buf, size, "%s %s %#x", lhs, yes ? ">=" : "<", p->k);
			break;
		default:
			append(buf, size, "%s %s 0", lhs, yes ? "!=" : "==");
		}
	}
}
