// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The walk behind the gate's searched form (gate_tree.c says why the form
 * exists): which numbers of each arch the linear gate answers the same
 * whatever the arguments, and where each other number's path leaves what
 * nr decides.
 *
 * The linear gate is walked once per arch (x86-64, i386, and any other,
 * which an arch-blind filter may not tell apart) with the set of numbers
 * that can reach each instruction: a bit for each number below GT_WIN and
 * for each x32 number below X32_BIT + X32_WIN (libseccomp tests those one
 * by one), and one element for each class between (the numbers from
 * GT_WIN below X32_BIT, and those from X32_BIT + X32_WIN up), which a test
 * sends one way when it decides the whole class alike and both ways
 * otherwise. A comparison of nr with a constant splits the set; any value
 * the walk does not know (an argument, the instruction pointer, an arch
 * other than the two, the result of arithmetic on nr) takes both sides
 * with the whole set. Each RET paints its set with its verdict: a number
 * is a leaf only when every path that can reach it returns the same
 * (ALLOW or USER_NOTIF), so a leaf is a proof.
 *
 * Every other number gets its entry: the first instruction on its path
 * that the walk cannot decide by nr alone. Up to there the path of one
 * number with a bit is exact (only tests of nr against constants were
 * passed, and those split the bits exactly), so the state there is known:
 * A, X and the scratch words hold constants, nr or the arch. A class, and
 * a number whose paths disagree, get the linear gate's start (E_START).
 *
 * The walk also estimates what seccomp(2)'s own emulation of the linear
 * gate costs (the steps seccomp_is_const_allow() takes for the numbers
 * below GT_WIN), for c2e_gate_search() to weigh the two forms.
 */
#include "c2e.h"
#include "gate_int.h"
#include "grow.h"
#include "semantics.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define LOW_WORDS  (GT_WIN / 64)
#define GT_WORDS   (LOW_WORDS + X32_WIN / 64)
/* Instructions walked, all arches: typical gates take about their length
 * (Docker's profile 1.1x); paths that multiply give up soon, for the
 * linear form, rather than cost the attaching process milliseconds. */
#define GT_BUDGET(len) (8 * (len) + 4096)

struct nrset {
	uint64_t w[GT_WORDS]; /* the low window's words, then the x32 one's */
	uint64_t cls[2];      /* 1: the low, the high class may be here */
};

/* The classes' bounds, inclusive. */
static const uint32_t cls_lo[2] = { GT_WIN, X32_BIT + X32_WIN };
static const uint32_t cls_hi[2] = { X32_BIT - 1, 0xffffffffU };

/* Word i's first number, and its first element. */
static uint32_t word_nr(int i)
{
	return i < LOW_WORDS ? (uint32_t)i * 64 : X32_BIT + (uint32_t)(i - LOW_WORDS) * 64;
}

static int word_el(int i)
{
	return i < LOW_WORDS ? i * 64 : EL_X32 + (i - LOW_WORDS) * 64;
}

struct gstate {
	struct entry at;  /* pc and registers */
	uint32_t ksteps;  /* the kernel's emulation steps so far */
	bool kstop;       /* the kernel's emulation stopped on this path */
	bool entered;     /* an entry was recorded on this path */
	struct nrset s;
};

enum { PAINT_PASS, PAINT_NOTIF, PAINT_UNKNOWN, PAINT_COUNT };

struct walk {
	struct gstate *stack;
	size_t sp, cap, steps;
	struct nrset painted[PAINT_COUNT];
	uint16_t *entry_of;      /* this arch's */
	bool counted;            /* this arch's numbers are emulated by the kernel */
	uint64_t kernel_steps;   /* the linear gate's emulation, estimated */
	struct entry *entries;
	size_t n_entries, cap_entries;
	uint32_t arch;
	bool arch_other;
};

static bool set_empty(const struct nrset *s)
{
	uint64_t any = s->cls[0] | s->cls[1];
	int i;

	for (i = 0; i < GT_WORDS; i++)
		any |= s->w[i];
	return !any;
}

/* Element el's number (the first of a class). */
static uint32_t el_nr(int el)
{
	if (el < GT_WIN)
		return (uint32_t)el;
	if (el == EL_LOW || el == EL_HIGH)
		return cls_lo[el == EL_HIGH];
	return X32_BIT + (uint32_t)(el - EL_X32);
}

/* The numbers of the low window: those the kernel's cache emulates. */
static uint64_t set_count(const struct nrset *s)
{
	uint64_t n = 0;
	int i;

	for (i = 0; i < LOW_WORDS; i++)
		n += (uint64_t)__builtin_popcountll(s->w[i]);
	return n;
}

/* How "nr op k" goes for every number of [lo, hi]: 1 taken, 0 not, -1
 * either way. */
static int class_way(uint32_t lo, uint32_t hi, uint16_t op, uint32_t k)
{
	switch (op) {
	case BPF_JEQ:
		return k < lo || k > hi ? 0 : lo == hi ? 1 : -1;
	case BPF_JGT:
		return lo > k ? 1 : hi <= k ? 0 : -1;
	case BPF_JGE:
		return lo >= k ? 1 : hi < k ? 0 : -1;
	default: /* BPF_JSET */
		return lo == hi ? (lo & k) != 0 : k == 0 ? 0 : -1;
	}
}

/* Word i's mask of the numbers "nr op k" takes. */
static uint64_t word_mask(int i, uint16_t op, uint32_t k)
{
	uint32_t lo = word_nr(i), b;
	uint64_t mask = 0;
	int way = class_way(lo, lo + 63, op, k);

	if (way >= 0)
		return way ? ~0ULL : 0;
	switch (op) {
	case BPF_JEQ:
		return 1ULL << (k - lo);
	case BPF_JGT:
		return ~0ULL << (k - lo + 1);
	case BPF_JGE:
		return ~0ULL << (k - lo);
	default: /* BPF_JSET */
		for (b = 0; b < 64; b++)
			if ((lo + b) & k)
				mask |= 1ULL << b;
		return mask;
	}
}

/* Moves the numbers "nr op k" takes out of s and into t (OR-ed in: a set
 * the caller cleared, or a painted one), a word at a time; returns how many
 * below GT_WIN moved when count says so. A linear filter of n rules splits
 * n times, nearly always by a JEQ that moves one number. */
static uint64_t set_move(struct nrset *s, uint16_t op, uint32_t k, struct nrset *t, bool count)
{
	uint64_t low = 0;
	int c, i;

	for (c = 0; c < 2; c++) {
		int way = s->cls[c] ? class_way(cls_lo[c], cls_hi[c], op, k) : 0;

		t->cls[c] |= s->cls[c] && way != 0;
		s->cls[c] = s->cls[c] && way != 1;
	}
	if (op == BPF_JEQ) {
		i = k < GT_WIN ? (int)(k / 64) :
		    k - X32_BIT < X32_WIN ? LOW_WORDS + (int)((k - X32_BIT) / 64) : -1;
		if (i >= 0) {
			uint64_t moved = s->w[i] & (1ULL << (k % 64));

			t->w[i] |= moved;
			s->w[i] &= ~moved;
			low = moved && i < LOW_WORDS;
		}
		return low;
	}
	for (i = 0; i < GT_WORDS; i++) {
		uint64_t word = s->w[i], moved = word ? word & word_mask(i, op, k) : 0;

		t->w[i] |= moved;
		s->w[i] = word & ~moved;
		if (count && i < LOW_WORDS && moved)
			low += (uint64_t)__builtin_popcountll(moved);
	}
	return low;
}

static void paint(struct nrset *p, const struct nrset *s)
{
	int i;

	for (i = 0; i < GT_WORDS; i++)
		p->w[i] |= s->w[i];
	p->cls[0] |= s->cls[0];
	p->cls[1] |= s->cls[1];
}

static struct val known(uint32_t v)
{
	return (struct val){ V_CONST, v };
}

static const struct val unknown = { V_UNKNOWN, 0 };

/* The value an LD or LDX of this instruction gives. */
static struct val load(const struct walk *w, const struct gstate *st,
		       const struct sock_filter *in)
{
	switch (BPF_MODE(in->code)) {
	case BPF_ABS:
		if (in->k == 0)
			return (struct val){ V_NR, 0 };
		if (in->k == 4)
			return w->arch_other ? (struct val){ V_ARCH_OTHER, 0 } : known(w->arch);
		return unknown;
	case BPF_LEN:
		return known(C2E_DATA_SIZE);
	case BPF_IMM:
		return known(in->k);
	case BPF_MEM:
		return st->at.m[in->k & (C2E_MEMWORDS - 1)];
	default:
		return unknown;
	}
}

static struct val source(const struct gstate *st, const struct sock_filter *in)
{
	return BPF_SRC(in->code) == BPF_X ? st->at.x : known(in->k);
}

/* Whether a conditional jump's side is decided by nr and constants: 1
 * taken, 0 not, -1 split by nr, -2 either way. */
static int decided(const struct gstate *st, const struct sock_filter *in)
{
	struct val a = st->at.a, src = source(st, in);

	if (a.kind == V_CONST && src.kind == V_CONST)
		return c2e_jump_taken(BPF_OP(in->code), a.v, src.v);
	if (a.kind == V_NR && src.kind == V_CONST)
		return -1;
	if (a.kind == V_ARCH_OTHER && src.kind == V_CONST && BPF_OP(in->code) == BPF_JEQ &&
	    (src.v == C2E_AUDIT_ARCH_X86_64 || src.v == C2E_AUDIT_ARCH_I386))
		return 0;
	return -2;
}

/* Whether in is where a path leaves what nr decides: it makes a value the
 * walk does not know, or branches on one. */
static bool leaves_known(const struct walk *w, const struct gstate *st,
			 const struct sock_filter *in)
{
	struct val src = source(st, in);
	uint16_t op = BPF_OP(in->code);

	switch (BPF_CLASS(in->code)) {
	case BPF_LD:
	case BPF_LDX:
		return load(w, st, in).kind == V_UNKNOWN;
	case BPF_ALU:
		if (op == BPF_NEG)
			return st->at.a.kind != V_CONST;
		return st->at.a.kind != V_CONST || src.kind != V_CONST ||
		       (op == BPF_DIV && !src.v);
	case BPF_JMP:
		return op != BPF_JA && decided(st, in) == -2;
	case BPF_RET:
		return BPF_RVAL(in->code) == BPF_A && st->at.a.kind != V_CONST;
	default:
		return false;
	}
}

/* The kernel's emulation knows the instruction (seccomp_is_const_allow()). */
static bool kernel_knows(const struct sock_filter *in)
{
	switch (in->code) {
	case BPF_LD | BPF_W | BPF_ABS:
		return in->k == 0 || in->k == 4;
	case BPF_RET | BPF_K:
	case BPF_JMP | BPF_JA:
	case BPF_JMP | BPF_JEQ | BPF_K:
	case BPF_JMP | BPF_JGE | BPF_K:
	case BPF_JMP | BPF_JGT | BPF_K:
	case BPF_JMP | BPF_JSET | BPF_K:
	case BPF_ALU | BPF_AND | BPF_K:
		return true;
	default:
		return false;
	}
}

static void kernel_count(struct walk *w, uint32_t steps, const struct nrset *s)
{
	if (w->counted)
		w->kernel_steps += steps * set_count(s);
}

/* st's numbers enter at st's pc with st's registers. */
static void record_entry(struct walk *w, const struct gstate *st)
{
	uint16_t id = E_START;
	size_t i;
	int k;

	for (i = 0; i < w->n_entries; i++)
		if (!memcmp(&w->entries[i], &st->at, sizeof(st->at)))
			break;
	if (i < w->n_entries) {
		id = (uint16_t)i;
	} else if (i < GT_ENTRIES && !C2E_GROW(w->entries, w->cap_entries, i + 1)) {
		w->entries[i] = st->at;
		w->n_entries++;
		id = (uint16_t)i;
	}
	for (k = 0; k < GT_WORDS; k++) {
		uint64_t bits = st->s.w[k];

		while (bits) {
			uint16_t *e = &w->entry_of[word_el(k) + __builtin_ctzll(bits)];

			*e = *e == E_NONE || *e == id ? id : E_START;
			bits &= bits - 1;
		}
	}
	/* A class's numbers may part ways after its entry: the start. */
	if (st->s.cls[0])
		w->entry_of[EL_LOW] = E_START;
	if (st->s.cls[1])
		w->entry_of[EL_HIGH] = E_START;
}

static int push(struct walk *w, const struct gstate *st, uint32_t pc, const struct nrset *s)
{
	if (set_empty(s))
		return 0;
	if (C2E_GROW(w->stack, w->cap, w->sp + 1))
		return -ENOMEM;
	w->stack[w->sp] = *st;
	w->stack[w->sp].at.pc = pc;
	w->stack[w->sp].s = *s;
	w->sp++;
	return 0;
}

static int paint_kind(struct val v)
{
	if (v.kind == V_CONST && v.v == SECCOMP_RET_ALLOW)
		return PAINT_PASS;
	if (v.kind == V_CONST && v.v == SECCOMP_RET_USER_NOTIF)
		return PAINT_NOTIF;
	return PAINT_UNKNOWN;
}

static void paint_ret(struct walk *w, struct val v, const struct nrset *s)
{
	paint(&w->painted[paint_kind(v)], s);
}

/* pc moved past the JAs there (the gate's "ret ALLOW" is one); how many. */
static uint32_t past_ja(const struct sock_filter *g, uint32_t *pc)
{
	uint32_t hops = 0;

	while (g[*pc].code == (BPF_JMP | BPF_JA)) {
		*pc += 1 + g[*pc].k;
		hops++;
	}
	return hops;
}

/* The taken side of a jump: painted at once where it is a RET K, through
 * JAs (a rule's test and its verdict, the usual shape), else pushed. */
static int take(struct walk *w, const struct gstate *st, const struct sock_filter *g,
		uint32_t pc, const struct nrset *s)
{
	uint32_t hops;

	if (set_empty(s))
		return 0;
	hops = 1 + past_ja(g, &pc);
	if (g[pc].code == (BPF_RET | BPF_K)) {
		if (!st->kstop)
			kernel_count(w, st->ksteps + hops, s);
		paint_ret(w, known(g[pc].k), s);
		return 0;
	}
	return push(w, st, pc, s);
}

/* A conditional jump at st's pc: the taken side handed to take(), st goes
 * on with the other. 1 when st's set is empty (the path ends), 0, or
 * -ENOMEM. */
static int branch(struct walk *w, struct gstate *st, const struct sock_filter *g)
{
	const struct sock_filter *in = &g[st->at.pc];
	uint32_t pt = st->at.pc + 1 + in->jt, pf = st->at.pc + 1 + in->jf;
	int d = decided(st, in), r;
	uint32_t ret = pt, hops;

	if (d >= 0) {
		st->at.pc = d ? pt : pf;
		return 0;
	}
	if (d == -1) {
		uint16_t op = BPF_OP(in->code);
		uint32_t k = source(st, in).v;
		bool count = w->counted && !st->kstop;

		/* Where the taken side returns at once, its numbers are
		 * painted straight from st's set; else they go on alone. */
		hops = 1 + past_ja(g, &ret);
		if (g[ret].code == (BPF_RET | BPF_K)) {
			uint64_t low = set_move(&st->s, op, k,
						&w->painted[paint_kind(known(g[ret].k))], count);

			if (count)
				w->kernel_steps += (st->ksteps + hops) * low;
		} else {
			struct nrset t;

			memset(&t, 0, sizeof(t));
			set_move(&st->s, op, k, &t, false);
			if ((r = push(w, st, pt, &t)))
				return r;
		}
	} else if ((r = take(w, st, g, pt, &st->s))) {
		return r;
	}
	st->at.pc = pf;
	return set_empty(&st->s);
}

/* One instruction other than a jump or a return. */
static void step(struct walk *w, struct gstate *st, const struct sock_filter *in)
{
	struct val *m = &st->at.m[in->k & (C2E_MEMWORDS - 1)];
	uint16_t op = BPF_OP(in->code);
	struct val src = source(st, in);

	switch (BPF_CLASS(in->code)) {
	case BPF_LD:
		st->at.a = load(w, st, in);
		break;
	case BPF_LDX:
		st->at.x = load(w, st, in);
		break;
	case BPF_ST:
		*m = st->at.a;
		break;
	case BPF_STX:
		*m = st->at.x;
		break;
	case BPF_ALU:
		/* The gate holds no division by X, and the validator refuses
		 * one by a zero K. */
		if (op == BPF_NEG && st->at.a.kind == V_CONST)
			st->at.a.v = -st->at.a.v;
		else if (op != BPF_NEG && st->at.a.kind == V_CONST && src.kind == V_CONST &&
			 (op != BPF_DIV || src.v))
			st->at.a.v = c2e_alu32(op, st->at.a.v, src.v);
		else
			st->at.a = unknown;
		break;
	default: /* BPF_MISC */
		if (BPF_MISCOP(in->code) == BPF_TAX)
			st->at.x = st->at.a;
		else
			st->at.a = st->at.x;
		break;
	}
	st->at.pc++;
}

/* Walks the (valid) linear gate for one arch: 0, -E2BIG past the budget,
 * -ENOMEM. */
static int walk_arch(struct walk *w, const struct sock_filter *g, size_t len)
{
	struct gstate st;
	int i, r;

	memset(w->painted, 0, sizeof(w->painted));
	memset(&st, 0, sizeof(st));
	st.at.a = st.at.x = known(0);
	for (i = 0; i < C2E_MEMWORDS; i++)
		st.at.m[i] = unknown;
	memset(st.s.w, 0xff, sizeof(st.s.w));
	st.s.cls[0] = st.s.cls[1] = 1;
	w->sp = 0;
	if ((r = push(w, &st, 0, &st.s)))
		return r;
	while (w->sp) {
		const struct sock_filter *in;

		st = w->stack[--w->sp];
		for (;;) {
			if (st.at.pc >= len || ++w->steps > GT_BUDGET(len))
				return -E2BIG;
			in = &g[st.at.pc];
			if (!st.kstop && (++st.ksteps, !kernel_knows(in))) {
				kernel_count(w, st.ksteps, &st.s);
				st.kstop = true;
			}
			if (!st.entered && leaves_known(w, &st, in)) {
				record_entry(w, &st);
				st.entered = true;
			}
			if (BPF_CLASS(in->code) == BPF_RET) {
				if (!st.kstop)
					kernel_count(w, st.ksteps, &st.s);
				paint_ret(w, BPF_RVAL(in->code) == BPF_K ? known(in->k) : st.at.a,
					  &st.s);
				break;
			}
			if (BPF_CLASS(in->code) != BPF_JMP) {
				step(w, &st, in);
			} else if (BPF_OP(in->code) == BPF_JA) {
				st.at.pc += 1 + in->k;
			} else if ((r = branch(w, &st, g))) {
				if (r < 0)
					return r;
				break;
			}
		}
	}
	return 0;
}

/* Each element's verdict, from the painted sets: a number is a leaf only
 * when every path that reaches it returns the same. */
static void ranges_of(const struct walk *w, struct ranges *r)
{
	const struct nrset *p = w->painted;
	uint64_t run[GT_WORDS], allow[GT_WORDS];
	bool cls_run[2], cls_allow[2];
	int el, i;

	for (i = 0; i < GT_WORDS; i++) {
		run[i] = p[PAINT_UNKNOWN].w[i] | ~(p[PAINT_PASS].w[i] ^ p[PAINT_NOTIF].w[i]);
		allow[i] = p[PAINT_PASS].w[i] & ~run[i];
	}
	for (i = 0; i < 2; i++) {
		cls_run[i] = p[PAINT_UNKNOWN].cls[i] || p[PAINT_PASS].cls[i] == p[PAINT_NOTIF].cls[i];
		cls_allow[i] = p[PAINT_PASS].cls[i] && !cls_run[i];
	}
	r->n = 0;
	for (el = 0; el < GT_ELEMS; el++) {
		int bit = el >= EL_X32 ? el - EL_X32 + GT_WIN : el;
		bool is_cls = el == EL_LOW || el == EL_HIGH;
		bool is_run = is_cls ? cls_run[el == EL_HIGH] : (run[bit / 64] >> (bit % 64)) & 1;
		bool is_allow = is_cls ? cls_allow[el == EL_HIGH] : (allow[bit / 64] >> (bit % 64)) & 1;
		enum verdict v = is_run ? VD_RUN : is_allow ? VD_ALLOW : VD_NOTIF;
		uint16_t e = E_NONE;

		if (v == VD_RUN)
			e = r->entry_of[el] == E_NONE ? E_START : r->entry_of[el];
		if (r->n && r->v[r->n - 1] == v && r->e[r->n - 1] == e)
			continue;
		r->start[r->n] = el_nr(el);
		r->v[r->n] = (uint8_t)v;
		r->e[r->n++] = e;
	}
}

int gate_walk(const struct sock_filter *lin, size_t len, struct gate_walk *gw)
{
	static const uint32_t arch_of[2] = { C2E_AUDIT_ARCH_X86_64, C2E_AUDIT_ARCH_I386 };
	struct walk w = { 0 };
	int a, i, r = 0;

	for (a = 0; a < 3 && !r; a++) {
		for (i = 0; i < GT_ELEMS; i++)
			gw->rg[a].entry_of[i] = E_NONE;
		w.entry_of = gw->rg[a].entry_of;
		w.arch = a < 2 ? arch_of[a] : 0;
		w.arch_other = a == 2;
		w.counted = a < 2;
		if (!(r = walk_arch(&w, lin, len)))
			ranges_of(&w, &gw->rg[a]);
	}
	free(w.stack);
	gw->entries = w.entries;
	gw->n_entries = w.n_entries;
	gw->kernel_steps = w.kernel_steps;
	return r;
}
