// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Constant verdicts: for a chain, an arch and a syscall number, is the
 * chain's verdict the same whatever the arguments and the instruction
 * pointer are? The kernel asks the same question for its action cache
 * (kernel/seccomp.c, seccomp_cache_prepare_bitmap() emulating each filter
 * with seccomp_is_const_allow()) but caches only ALLOW; the runtime caches
 * every constant verdict and skips the chain for those syscalls.
 *
 * Method: abstract interpretation of each classic program with nr and arch
 * known and every other seccomp_data word unknown. A and X and M[k] are
 * either a known constant or unknown. A branch on an unknown value explores
 * both sides (classic jumps only go forward, so every path ends). The
 * result of a filter is the set of values its reachable RETs can return;
 * exploring both sides of every unknown branch over-approximates the paths
 * real inputs take, so a set of size one is a proof. A RET A of an unknown
 * value, too many distinct results, or a path budget spent gives up
 * ("run the filter"), which is always safe.
 *
 * The chain's verdict is the kernel's fold (c2e_stack_combine(), newest
 * first) over the filters' result sets, treated as independent (again an
 * over-approximation): constant when every combination gives one value.
 */
#include "c2e.h"
#include "grow.h"
#include "semantics.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RESULTS 32      /* distinct return values per filter */
#define MAX_PAIRS   64      /* distinct (value, winner) pairs per chain */
/* Instructions interpreted for one (chain, arch, nr), over all of the
 * chain's filters: a bound on what one entry of a chain's action table
 * costs, whatever the chain (a per-filter bound let a chain of many
 * branchy filters cost seconds per syscall number). */
#define STEP_BUDGET 200000

struct aval {
	uint32_t v;
	bool known;
};

struct astate {
	uint32_t pc;
	struct aval a, x, m[C2E_MEMWORDS];
};

struct results {
	uint32_t v[MAX_RESULTS];
	size_t n;
};

static bool add_result(struct results *r, uint32_t v)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (r->v[i] == v)
			return true;
	if (r->n == MAX_RESULTS)
		return false;
	r->v[r->n++] = v;
	return true;
}


/*
 * The set of values one (valid) filter can return with nr and arch known.
 * 0 with *r filled, or -1 when the analysis gives up; *steps counts the
 * instructions interpreted, against STEP_BUDGET.
 */
static int filter_results(const struct sock_filter *f, size_t len,
			  uint32_t arch, int nr, struct results *r, size_t *steps)
{
	struct astate *stack, cur;
	size_t sp = 0, cap = 64;
	int err = -1;

	stack = malloc(cap * sizeof(*stack));
	if (!stack)
		return -1;
	memset(&stack[0], 0, sizeof(stack[0]));
	stack[0].a.known = stack[0].x.known = true; /* A = X = 0 */
	sp = 1;
	r->n = 0;

	while (sp) {
		cur = stack[--sp];
		for (;;) {
			const struct sock_filter *in;
			struct aval src;
			uint16_t code;
			bool taken_known;
			int taken;

			if (cur.pc >= len || ++*steps > STEP_BUDGET)
				goto out; /* cannot happen for a valid program */
			in = &f[cur.pc];
			code = in->code;
			src = BPF_SRC(code) == BPF_X ? cur.x :
			      (struct aval){ in->k, true };

			switch (BPF_CLASS(code)) {
			case BPF_LD:
			case BPF_LDX: {
				struct aval v = { 0, false };

				switch (BPF_MODE(code)) {
				case BPF_ABS:
					if (in->k == 0)
						v = (struct aval){ (uint32_t)nr, true };
					else if (in->k == 4)
						v = (struct aval){ arch, true };
					break;
				case BPF_LEN:
					v = (struct aval){ C2E_DATA_SIZE, true };
					break;
				case BPF_IMM:
					v = (struct aval){ in->k, true };
					break;
				case BPF_MEM:
					v = cur.m[in->k & (C2E_MEMWORDS - 1)];
					break;
				default:
					goto out;
				}
				if (BPF_CLASS(code) == BPF_LD)
					cur.a = v;
				else
					cur.x = v;
				cur.pc++;
				break;
			}
			case BPF_ST:
				cur.m[in->k & (C2E_MEMWORDS - 1)] = cur.a;
				cur.pc++;
				break;
			case BPF_STX:
				cur.m[in->k & (C2E_MEMWORDS - 1)] = cur.x;
				cur.pc++;
				break;
			case BPF_ALU: {
				uint16_t op = BPF_OP(code);

				if (op == BPF_NEG) {
					if (cur.a.known)
						cur.a.v = -cur.a.v;
				} else if (op == BPF_DIV && src.known && src.v == 0) {
					/* DIV by X == 0: the program returns 0. */
					if (!add_result(r, 0))
						goto out;
					goto next_path;
				} else if (op == BPF_DIV && !src.known) {
					/* X may be 0 (return 0) or not. */
					if (!add_result(r, 0))
						goto out;
					cur.a.known = false;
				} else if (cur.a.known && src.known) {
					cur.a.v = c2e_alu32(op, cur.a.v, src.v);
				} else if ((op == BPF_AND || op == BPF_MUL) &&
					   ((src.known && src.v == 0) ||
					    (cur.a.known && cur.a.v == 0))) {
					cur.a = (struct aval){ 0, true };
				} else if (op == BPF_OR &&
					   ((src.known && src.v == 0xffffffffU) ||
					    (cur.a.known && cur.a.v == 0xffffffffU))) {
					cur.a = (struct aval){ 0xffffffffU, true };
				} else {
					cur.a.known = false;
				}
				cur.pc++;
				break;
			}
			case BPF_JMP:
				if (BPF_OP(code) == BPF_JA) {
					cur.pc += 1 + in->k;
					break;
				}
				taken_known = cur.a.known && src.known;
				taken = taken_known ? c2e_jump_taken(BPF_OP(code), cur.a.v, src.v) : 0;
				if (!taken_known) {
					if (C2E_GROW(stack, cap, sp + 1))
						goto out;
					stack[sp] = cur;
					stack[sp].pc += 1 + in->jt;
					sp++;
					cur.pc += 1 + in->jf;
				} else {
					cur.pc += 1 + (taken ? in->jt : in->jf);
				}
				break;
			case BPF_RET:
				if (BPF_RVAL(code) == BPF_K) {
					if (!add_result(r, in->k))
						goto out;
				} else if (cur.a.known) {
					if (!add_result(r, cur.a.v))
						goto out;
				} else {
					goto out; /* RET A of an unknown value */
				}
				goto next_path;
			case BPF_MISC:
				if (BPF_MISCOP(code) == BPF_TAX)
					cur.x = cur.a;
				else
					cur.a = cur.x;
				cur.pc++;
				break;
			default:
				goto out;
			}
		}
next_path:;
	}
	err = 0;
out:
	free(stack);
	return err;
}

struct pair {
	uint32_t v;
	size_t winner;
};

/* The chain's possible (value, winner) pairs; -1 when unknown. */
static int chain_pairs(const struct sock_fprog *chain, size_t n, uint32_t arch,
		       int nr, struct pair *pairs, size_t *npairs)
{
	struct results r;
	size_t i, j, k, np = 1, steps = 0;
	struct pair next[MAX_PAIRS];

	pairs[0] = (struct pair){ SECCOMP_RET_ALLOW, n };
	for (i = n; i-- > 0;) {
		size_t nn = 0;

		if (filter_results(chain[i].filter, chain[i].len, arch, nr, &r, &steps))
			return -1;
		for (j = 0; j < np; j++) {
			for (k = 0; k < r.n; k++) {
				struct pair p = c2e_fold_keeps(pairs[j].v, r.v[k]) ?
					pairs[j] : (struct pair){ r.v[k], i };
				size_t m;

				for (m = 0; m < nn; m++)
					if (next[m].v == p.v && next[m].winner == p.winner)
						break;
				if (m < nn)
					continue;
				if (nn == MAX_PAIRS)
					return -1;
				next[nn++] = p;
			}
		}
		memcpy(pairs, next, nn * sizeof(*pairs));
		np = nn;
	}
	*npairs = np;
	return 0;
}

int c2e_const_verdict_winner(const struct sock_fprog *chain, size_t n,
			     uint32_t arch, int nr, uint32_t *ret,
			     size_t *winner)
{
	struct pair pairs[MAX_PAIRS];
	size_t np, i;

	if (chain_pairs(chain, n, arch, nr, pairs, &np) || np == 0)
		return 0;
	for (i = 1; i < np; i++)
		if (pairs[i].v != pairs[0].v || pairs[i].winner != pairs[0].winner)
			return 0;
	*ret = pairs[0].v;
	if (winner)
		*winner = pairs[0].winner;
	return 1;
}

int c2e_const_verdict(const struct sock_fprog *chain, size_t n,
		      uint32_t arch, int nr, uint32_t *ret)
{
	struct pair pairs[MAX_PAIRS];
	size_t np, i;

	if (chain_pairs(chain, n, arch, nr, pairs, &np) || np == 0)
		return 0;
	for (i = 1; i < np; i++)
		if (pairs[i].v != pairs[0].v)
			return 0;
	*ret = pairs[0].v;
	return 1;
}
