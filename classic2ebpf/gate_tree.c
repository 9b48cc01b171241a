// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The gate's searched form: a binary search on the syscall number, per
 * arch, that answers ALLOW or USER_NOTIF itself for every number whose
 * gate verdict the arguments do not decide, and sends each other number
 * to the part of the linear gate (gate.c) that decides it.
 *
 * Why: seccomp(2) emulates a new filter for every syscall number of the
 * native and the compat arch (kernel/seccomp.c,
 * seccomp_cache_prepare_bitmap() and seccomp_is_const_allow()) to learn
 * which numbers it may allow without running it, and converts and JITs
 * every instruction. The linear gate of a linear allow-list of n rules
 * costs ~n emulated steps for each of ~900 numbers: for 300 rules that is
 * ~3/4 of the install (measured on the host: 584 us for the linear
 * 606-instruction filter, 130 us for the same program whose first
 * instruction returns). In the searched form each number ends in a leaf
 * after about 2 log2(ranges) steps, and only the instructions some number
 * needs are kept: Docker's default profile's gate goes from 1,196
 * instructions to 578. Where the linear gate is the cheaper one to install
 * (a short one), c2e_gate_search() says so (C2E_GATE_BEST).
 *
 * The layout: the arch's tests; any other arch's search (or its one leaf),
 * i386's, x86-64's; one prologue per entry (gate_walk.c), which rebuilds
 * the entry's A, X and scratch words and jumps; then the linear gate's
 * instructions that the entries reach, in their order. A prologue for
 * E_START sets A = 0 and jumps to the linear gate's start, which is the
 * linear gate itself.
 */
#include "c2e.h"
#include "gate_int.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The install's cost of one instruction (conversion, JIT) in emulated
 * steps of its action cache: 0.2-0.4 us against ~0.8 ns, on the host. */
#define GT_STEPS_PER_INSN 256

/* Code is laid down last instruction first, so that every jump's target
 * is already placed: an instruction's "rev" is its distance from the end,
 * and a jump at rev p to rev t skips p - 1 - t instructions. */
struct emit {
	struct sock_filter *b;  /* C2E_MAX_INSNS, written as laid down */
	size_t n;
	size_t *pro;            /* rev of each entry's prologue; [GT_ENTRIES]: the start's */
	uint64_t kernel_steps;  /* the search's emulation, estimated */
	bool full;
};

static size_t put(struct emit *e, struct sock_filter in)
{
	if (e->n == C2E_MAX_INSNS) {
		e->full = true;
		return e->n - 1;
	}
	e->b[e->n] = in;
	return e->n++;
}

static size_t put_stmt(struct emit *e, uint16_t code, uint32_t k)
{
	return put(e, (struct sock_filter){ code, 0, 0, k });
}

static size_t put_ja(struct emit *e, size_t target)
{
	return put_stmt(e, BPF_JMP | BPF_JA, (uint32_t)(e->n - 1 - target));
}

/* A conditional jump to the revs t and f, through a JA where one is too
 * far for its 8 bits (254, so that the other's JA cannot push it past). */
static size_t put_jcond(struct emit *e, uint16_t code, uint32_t k, size_t t, size_t f)
{
	if (e->n - 1 - t > 254)
		t = put_ja(e, t);
	if (e->n - 1 - f > 254)
		f = put_ja(e, f);
	return put(e, (struct sock_filter){ code, (uint8_t)(e->n - 1 - t),
					    (uint8_t)(e->n - 1 - f), k });
}

static size_t prologue_of(const struct emit *e, uint16_t entry)
{
	return e->pro[entry == E_START ? GT_ENTRIES : entry];
}

/* The search over ranges lo..hi, A holding nr, its leaves depth
 * instructions from the program's start (for the kernel's emulation);
 * its first instruction's rev. */
static size_t put_search(struct emit *e, const struct ranges *r, size_t lo, size_t hi,
			 uint32_t depth, bool counted)
{
	size_t mid, right, left;

	if (lo == hi) {
		uint32_t end = lo + 1 < r->n ? r->start[lo + 1] : GT_WIN;
		uint32_t from = r->start[lo] < GT_WIN ? r->start[lo] : GT_WIN;

		if (counted)
			e->kernel_steps += (uint64_t)(depth + (r->v[lo] == VD_RUN ? 2 : 1)) *
					   ((end < GT_WIN ? end : GT_WIN) - from);
		if (r->v[lo] == VD_RUN)
			return put_ja(e, prologue_of(e, r->e[lo]));
		return put_stmt(e, BPF_RET | BPF_K, r->v[lo] == VD_ALLOW ? SECCOMP_RET_ALLOW :
								  SECCOMP_RET_USER_NOTIF);
	}
	mid = (lo + hi + 1) / 2;
	right = put_search(e, r, mid, hi, depth + 1, counted);
	left = put_search(e, r, lo, mid - 1, depth + 1, counted);
	return put_jcond(e, BPF_JMP | BPF_JGE | BPF_K, r->start[mid], right, left);
}

/* v into A (an entry's register or scratch word); -EINVAL for a value no
 * instruction can rebuild. */
static int put_load(struct emit *e, struct val v)
{
	switch (v.kind) {
	case V_CONST:
		put_stmt(e, BPF_LD | BPF_IMM, v.v);
		return 0;
	case V_NR:
		put_stmt(e, BPF_LD | BPF_W | BPF_ABS, 0);
		return 0;
	case V_ARCH_OTHER:
		put_stmt(e, BPF_LD | BPF_W | BPF_ABS, 4);
		return 0;
	default:
		return -EINVAL;
	}
}

/* An entry's prologue, laid down backwards: the scratch words, X, A, then
 * a jump to target. Its first instruction's rev, or -EINVAL. */
static int put_prologue(struct emit *e, const struct entry *en, size_t target, size_t *rev)
{
	int k, r;

	put_ja(e, target);
	if ((r = put_load(e, en->a)))
		return r;
	if (en->x.kind == V_CONST && en->x.v == 0)
		; /* the search leaves X as the kernel set it: 0 */
	else if (en->x.kind == V_CONST)
		put_stmt(e, BPF_LDX | BPF_IMM, en->x.v);
	else if (put_stmt(e, BPF_MISC | BPF_TAX, 0), (r = put_load(e, en->x)))
		return r;
	for (k = C2E_MEMWORDS - 1; k >= 0; k--) {
		if (en->m[k].kind == V_UNKNOWN) /* never stored: never loaded */
			continue;
		put_stmt(e, BPF_ST, (uint32_t)k);
		if ((r = put_load(e, en->m[k])))
			return r;
	}
	*rev = e->n - 1;
	return 0;
}

/* The linear gate's instructions that some used entry reaches, laid down
 * with their jumps shortened (only instructions between a jump and its
 * target go, so every offset still fits); rev_of[pc] their revs. */
static void put_reached(struct emit *e, const struct sock_filter *g, size_t len,
			bool *reach, size_t *rev_of)
{
	size_t pc;

	for (pc = 0; pc < len; pc++) {
		const struct sock_filter *in = &g[pc];

		if (!reach[pc] || BPF_CLASS(in->code) == BPF_RET)
			continue;
		if (BPF_CLASS(in->code) != BPF_JMP) {
			reach[pc + 1] = true;
		} else if (BPF_OP(in->code) == BPF_JA) {
			reach[pc + 1 + in->k] = true;
		} else {
			reach[pc + 1 + in->jt] = true;
			reach[pc + 1 + in->jf] = true;
		}
	}
	for (pc = len; pc-- > 0;) {
		struct sock_filter in = g[pc];

		if (!reach[pc])
			continue;
		if (BPF_CLASS(in.code) == BPF_JMP && BPF_OP(in.code) == BPF_JA) {
			in.k = (uint32_t)(e->n - 1 - rev_of[pc + 1 + in.k]);
		} else if (BPF_CLASS(in.code) == BPF_JMP) {
			in.jt = (uint8_t)(e->n - 1 - rev_of[pc + 1 + in.jt]);
			in.jf = (uint8_t)(e->n - 1 - rev_of[pc + 1 + in.jf]);
		}
		rev_of[pc] = put(e, in);
	}
}

static const struct entry start_entry = {
	.pc = 0, .a = { V_CONST, 0 }, .x = { V_CONST, 0 },
	.m = { [0 ... C2E_MEMWORDS - 1] = { V_UNKNOWN, 0 } },
};

/* Lays the searched form down into e; 0 or -EINVAL. */
static int put_form(struct emit *e, const struct sock_filter *g, size_t len,
		    const struct gate_walk *w, bool *reach, size_t *rev_of)
{
	const struct ranges *rg = w->rg;
	bool used[GT_ENTRIES + 1] = { false };
	size_t i, node[2], other, jeq386;
	int a, r;

	for (a = 0; a < 3; a++)
		for (i = 0; i < rg[a].n; i++)
			if (rg[a].v[i] == VD_RUN)
				used[rg[a].e[i] == E_START ? GT_ENTRIES : rg[a].e[i]] = true;
	for (i = 0; i <= GT_ENTRIES; i++)
		if (used[i])
			reach[i < GT_ENTRIES ? w->entries[i].pc : 0] = true;
	put_reached(e, g, len, reach, rev_of);
	for (i = 0; i <= GT_ENTRIES; i++)
		if (used[i] && (r = put_prologue(e, i < GT_ENTRIES ? &w->entries[i] : &start_entry,
						 rev_of[i < GT_ENTRIES ? w->entries[i].pc : 0],
						 &e->pro[i])))
			return r;
	/* Laid out: the arch's tests, then any other arch's search (or its
	 * one leaf), i386's, x86-64's, the prologues and what they reach. */
	for (a = 1; a >= 0; a--) {
		put_search(e, &rg[a], 0, rg[a].n - 1, a ? 4 : 3, true);
		node[a] = put_stmt(e, BPF_LD | BPF_W | BPF_ABS, 0);
	}
	other = put_search(e, &rg[2], 0, rg[2].n - 1, 0, false);
	if (rg[2].n > 1)
		other = put_stmt(e, BPF_LD | BPF_W | BPF_ABS, 0);
	jeq386 = put_jcond(e, BPF_JMP | BPF_JEQ | BPF_K, C2E_AUDIT_ARCH_I386, node[1], other);
	put_jcond(e, BPF_JMP | BPF_JEQ | BPF_K, C2E_AUDIT_ARCH_X86_64, node[0], jeq386);
	put_stmt(e, BPF_LD | BPF_W | BPF_ABS, 4);
	return 0;
}

int c2e_gate_search(const struct sock_filter *lin, size_t len, enum c2e_gate_form form,
		    struct sock_filter **out, size_t *out_len)
{
	struct gate_walk *gw = NULL;
	struct emit e = { 0 };
	size_t *rev_of = NULL, i;
	bool *reach = NULL;
	int r = -ENOMEM;

	*out = NULL;
	*out_len = 0;
	/* malloc where it can be: a fresh process pays for every page it
	 * touches first, and only what is written is touched. */
	gw = malloc(sizeof(*gw));
	e.b = malloc(C2E_MAX_INSNS * sizeof(*e.b));
	e.pro = malloc((GT_ENTRIES + 1) * sizeof(*e.pro));
	rev_of = malloc(len * sizeof(*rev_of));
	reach = calloc(len + 1, sizeof(*reach));
	if (gw)
		gw->entries = NULL;
	if (!gw || !e.b || !e.pro || !rev_of || !reach)
		goto out;
	if ((r = gate_walk(lin, len, gw)) || (r = put_form(&e, lin, len, gw, reach, rev_of)))
		goto out;
	r = -E2BIG;
	if (e.full)
		goto out;
	r = -EAGAIN;
	if (form != C2E_GATE_SEARCH &&
	    e.n * GT_STEPS_PER_INSN + e.kernel_steps >= len * GT_STEPS_PER_INSN + gw->kernel_steps)
		goto out;
	r = -ENOMEM;
	*out = malloc(e.n * sizeof(**out));
	if (!*out)
		goto out;
	for (i = 0; i < e.n; i++)
		(*out)[i] = e.b[e.n - 1 - i];
	*out_len = e.n;
	r = 0;
out:
	if (gw)
		free(gw->entries);
	free(gw);
	free(e.b);
	free(e.pro);
	free(rev_of);
	free(reach);
	return r;
}
