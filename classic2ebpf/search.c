// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * C2E_EMIT_SEARCH: a linear allowlist becomes a binary search. Apart from
 * translate.c because it is an option of the emission, not one of its
 * passes.
 */
#include "xlat.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- C2E_EMIT_SEARCH: runs of "jeq #k" become a binary search ----------
 *
 * A linear allowlist compares A with one constant after another. A run of
 * "jeq #k_i, T_i" linked by their false edges, each member reached only
 * from the previous one, is a switch on A; it is emitted as a balanced
 * search (JGT nodes, small JEQ groups at the leaves), so a syscall near
 * the end of a 300-rule list costs about ten compares instead of 300.
 * It costs instructions (about 1.5 per key instead of 1), so it is an
 * option the runtime takes and the instruction-count goal does not.
 */
#define SEARCH_MIN_KEYS  8
#define SEARCH_LEAF_KEYS 4

struct search_case {
	uint32_t key;
	int target;
};

static int case_cmp(const void *a, const void *b)
{
	const struct search_case *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

static bool is_jeq_k(const struct xlat *x, int pc)
{
	return pc < (int)x->len && x->reach[pc] &&
	       x->in[pc].code == (BPF_JMP | BPF_JEQ | BPF_K) &&
	       c2e_xlat_target(x, pc, x->in[pc].jt) != c2e_xlat_target(x, pc, x->in[pc].jf);
}

int c2e_xlat_find_search_runs(struct xlat *x)
{
	uint16_t *preds = calloc(x->len + 1, sizeof(*preds));
	size_t pc;

	if (!preds)
		return -ENOMEM;
	for (pc = 0; pc < x->len; pc++) {
		const struct sock_filter *f = &x->in[pc];

		if (!x->reach[pc] || is_ret(f->code))
			continue;
		if (f->code == (BPF_JMP | BPF_JA)) {
			preds[c2e_xlat_target(x, pc, f->k)]++;
		} else if (is_cond_jump(f->code)) {
			preds[c2e_xlat_target(x, pc, f->jt)]++;
			preds[c2e_xlat_target(x, pc, f->jf)]++;
		} else {
			preds[pc + 1]++;
		}
	}
	for (pc = 0; pc < x->len; pc++) {
		int cur = pc, next, n = 1;

		if (x->absorbed[pc] || !is_jeq_k(x, pc))
			continue;
		for (;;) {
			next = c2e_xlat_target(x, cur, x->in[cur].jf);
			if (!is_jeq_k(x, next) || preds[next] != 1 ||
			    x->launder[next] || n == UINT16_MAX)
				break;
			cur = next;
			n++;
		}
		if (n < SEARCH_MIN_KEYS)
			continue;
		x->run_len[pc] = n;
		for (cur = pc; --n > 0;) {
			cur = c2e_xlat_target(x, cur, x->in[cur].jf);
			x->absorbed[cur] = true;
		}
	}
	free(preds);
	return 0;
}

static int emit_search_tree(struct xlat *x, const struct search_case *c,
			    size_t n, int dflt)
{
	size_t i, mid, at;
	int err;

	if (n <= SEARCH_LEAF_KEYS) {
		for (i = 0; i < n; i++) {
			err = c2e_xlat_jump(x, BPF_JMP32 | BPF_JEQ | BPF_K, REG_A, 0,
					(int32_t)c[i].key, TO_PC, c[i].target);
			if (err)
				return err;
		}
		return c2e_xlat_jump(x, BPF_JMP | BPF_JA, 0, 0, 0, TO_PC, dflt);
	}
	mid = n / 2;
	at = x->out->len;
	EMIT(x, BPF_JMP32 | BPF_JGT | BPF_K, REG_A, 0, 0, (int32_t)c[mid - 1].key);
	err = emit_search_tree(x, c, mid, dflt);
	if (err)
		return err;
	if (x->out->len - at - 1 > INT16_MAX)
		return -E2BIG;
	x->out->insns[at].off = (int16_t)(x->out->len - at - 1);
	return emit_search_tree(x, c + mid, n - mid, dflt);
}

int c2e_xlat_emit_search_run(struct xlat *x, size_t pc)
{
	struct search_case *c = calloc(x->run_len[pc], sizeof(*c));
	size_t n = 0, i, j;
	int cur = pc, last = pc, err;

	if (!c)
		return -ENOMEM;
	for (i = 0; i < x->run_len[pc]; i++) {
		/* The first jeq of a key wins; later ones never match. */
		for (j = 0; j < n && c[j].key != x->in[cur].k; j++)
			;
		if (j == n) {
			c[n].key = x->in[cur].k;
			c[n].target = c2e_xlat_target(x, cur, x->in[cur].jt);
			n++;
		}
		last = cur;
		cur = c2e_xlat_target(x, cur, x->in[cur].jf);
	}
	qsort(c, n, sizeof(*c), case_cmp);
	if (x->launder[pc] & 1)
		err = c2e_ebpf_emit(x->out, BPF_ALU | BPF_ADD | BPF_X, REG_A, REG_ZERO, 0, 0);
	else
		err = 0;
	if (!err)
		err = emit_search_tree(x, c, n, c2e_xlat_target(x, last, x->in[last].jf));
	free(c);
	return err;
}
