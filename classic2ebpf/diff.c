// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * c2e_diff_chains(): where two chains' verdicts differ (c2e.h has the
 * contract). For each (arch, nr): constant on both sides (consttable.c)
 * is one comparison; otherwise diff_class.c says which words the filters
 * test and one value of every class of each, and the product of those is
 * run through both chains with the reference interpreter. Each call where
 * they differ falls into a region (the verdict pair and the class of each
 * tested word); neighbouring regions with the same verdicts are merged
 * (adjacent intervals, predicates whose outcome does not matter) before
 * they are described.
 */
#include "diff_int.h"
#include "fail.h"
#include "grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NR_RANGE 1024            /* numbers 0..1023 of every arch */
#define MAX_EXACT_POINTS 65536   /* a product run whole */
#define SAMPLE_POINTS 2048       /* random points of a bigger one */
#define MAX_REGIONS 256          /* per number, before merging; past it the
				    number counts as sampled */
#define HASH_SLOTS 1024          /* regions of a number by their class */
/* Calls run in one diff before every further number is sampled with
 * SAMPLE_POINTS_SPENT calls: a bound on what a pair of arbitrary filters
 * costs (libseccomp's profiles need a few thousand). */
#define POINT_BUDGET 4000000
#define SAMPLE_POINTS_SPENT 256

static const uint32_t arch_audit[3] = { C2E_AUDIT_ARCH_X86_64, C2E_AUDIT_ARCH_I386,
					C2E_AUDIT_ARCH_X86_64 };

uint32_t c2e_verdict_canon(uint32_t ret)
{
	uint32_t act = c2e_effective_action(ret), data = ret & C2E_RET_DATA;

	if (act == SECCOMP_RET_ERRNO) /* __seccomp_filter(): "capped at MAX_ERRNO" */
		return act | (data > C2E_MAX_ERRNO ? C2E_MAX_ERRNO : data);
	return c2e_action_has_data(act) ? act | data : act;
}

int c2e_verdict_allows(uint32_t ret)
{
	uint32_t act = c2e_effective_action(ret);

	return act == SECCOMP_RET_ALLOW || act == SECCOMP_RET_LOG;
}

/* A region while one number is run: per tested word a set of intervals
 * (W_INTERVAL: a bit per class) or the predicates it fixes (care) and
 * their outcomes (val). */
struct rg {
	uint32_t a, b;
	struct seccomp_data wit;
	uint64_t set[C2E_DIFF_WORDS][DIFF_SET_WORDS];
	uint64_t care[C2E_DIFF_WORDS], val[C2E_DIFF_WORDS];
	bool dead;
};

struct run {
	const struct sock_fprog *a, *b;
	size_t na, nb;
	struct diff_class *c;
	unsigned int words[C2E_DIFF_WORDS];
	size_t nw;
	struct rg *r;
	size_t n;
	bool truncated;
	size_t points;
	size_t budget;              /* calls left before POINT_BUDGET is spent */
	uint16_t slot[HASH_SLOTS];  /* 1 + a region's index, by its hash */
};

static void set_word(struct seccomp_data *d, unsigned int word, uint32_t v)
{
	memcpy((char *)d + 4 * word, &v, sizeof(v));
}

static uint32_t get_word(const struct seccomp_data *d, unsigned int word)
{
	uint32_t v;

	memcpy(&v, (const char *)d + 4 * word, sizeof(v));
	return v;
}

static bool same_word(const struct rg *x, const struct rg *y, unsigned int w)
{
	return !memcmp(x->set[w], y->set[w], sizeof(x->set[w])) &&
	       x->care[w] == y->care[w] && x->val[w] == y->val[w];
}

static bool same_class(const struct run *run, const struct rg *x, const struct rg *y)
{
	size_t i;

	if (x->a != y->a || x->b != y->b)
		return false;
	for (i = 0; i < run->nw; i++)
		if (!same_word(x, y, run->words[i]))
			return false;
	return true;
}

static void run_point(struct run *run, const struct seccomp_data *d)
{
	uint32_t ra = c2e_verdict_canon(c2e_stack_eval(run->a, run->na, d));
	uint32_t rb = c2e_verdict_canon(c2e_stack_eval(run->b, run->nb, d));
	uint64_t h = (uint64_t)ra * 0x9e3779b97f4a7c15ULL ^ rb;
	struct rg g;
	size_t i;

	run->points++;
	if (ra == rb)
		return;
	memset(&g, 0, sizeof(g));
	g.a = ra;
	g.b = rb;
	g.wit = *d;
	for (i = 0; i < run->nw; i++) {
		unsigned int w = run->words[i];
		const struct diff_word *dw = &run->c->w[w];
		uint64_t cls = diff_class_of(dw, get_word(d, w));

		if (dw->kind == W_INTERVAL) {
			g.set[w][cls / 64] = 1ULL << (cls % 64);
		} else if (dw->kind == W_SAMPLED) {
			/* Its predicates do not class it: the region is
			 * shown by its witness only. */
			continue;
		} else {
			g.care[w] = dw->np >= 64 ? ~0ULL : (1ULL << dw->np) - 1;
			g.val[w] = cls;
		}
		h = (h ^ cls ^ w) * 0xbf58476d1ce4e5b9ULL;
	}
	for (i = (h >> 40) % HASH_SLOTS; run->slot[i]; i = (i + 1) % HASH_SLOTS)
		if (same_class(run, &run->r[run->slot[i] - 1], &g))
			return;
	if (run->n == MAX_REGIONS) {
		run->truncated = true;
		return;
	}
	run->slot[i] = (uint16_t)(run->n + 1);
	run->r[run->n++] = g;
}

/* Merges y into x when they differ in one word only, and there by
 * neighbouring intervals or by one predicate's outcome. */
static bool merge(const struct run *run, struct rg *x, const struct rg *y)
{
	size_t i, diffs = 0;
	unsigned int w = 0;
	uint64_t d;

	if (x->a != y->a || x->b != y->b)
		return false;
	for (i = 0; i < run->nw; i++)
		if (!same_word(x, y, run->words[i])) {
			diffs++;
			w = run->words[i];
		}
	if (diffs != 1)
		return false;
	if (run->c->w[w].kind == W_INTERVAL) {
		for (i = 0; i < DIFF_SET_WORDS; i++)
			x->set[w][i] |= y->set[w][i];
		return true;
	}
	d = x->val[w] ^ y->val[w];
	if (x->care[w] != y->care[w] || !d || (d & (d - 1)))
		return false;
	x->care[w] &= ~d;
	x->val[w] &= x->care[w];
	return true;
}

static void merge_all(struct run *run)
{
	bool changed = true;
	size_t i, j;

	while (changed) {
		changed = false;
		for (i = 0; i < run->n; i++) {
			if (run->r[i].dead)
				continue;
			for (j = i + 1; j < run->n; j++)
				if (!run->r[j].dead && merge(run, &run->r[i], &run->r[j])) {
					run->r[j].dead = true;
					changed = true;
				}
		}
	}
}

/* A number whose calls were only sampled and fell into too many classes
 * to list: one region per verdict pair, shown by its witness. */
static void collapse(struct run *run)
{
	size_t i, j, w;

	for (i = 0; i < run->n; i++) {
		struct rg *g = &run->r[i];

		for (j = 0; j < i && !g->dead; j++)
			g->dead = !run->r[j].dead && run->r[j].a == g->a && run->r[j].b == g->b;
		for (w = 0; w < C2E_DIFF_WORDS; w++) {
			memset(g->set[w], 0xff, sizeof(g->set[w]));
			g->care[w] = g->val[w] = 0;
		}
	}
}

static int push_region(struct c2e_diff *out, size_t *cap, const struct c2e_diff_region *r)
{
	if (C2E_GROW(out->regions, *cap, out->n + 1))
		return -ENOMEM;
	out->regions[out->n++] = *r;
	return 0;
}

static int push_unproven(struct c2e_diff *out, uint32_t arch, uint32_t nr)
{
	struct c2e_diff_number *n = realloc(out->unproven,
					    (out->n_unproven + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	out->unproven = n;
	n[out->n_unproven++] = (struct c2e_diff_number){ arch, nr };
	return 0;
}

/* The product of the tested words' values, whole or sampled. False when
 * sampled. */
static bool run_product(struct run *run, uint64_t seed)
{
	struct seccomp_data d;
	size_t idx[C2E_DIFF_WORDS] = { 0 }, i, k;
	double product = 1;
	bool exact = true;

	memset(&d, 0, sizeof(d));
	d.nr = (int)run->c->nr;
	d.arch = run->c->arch;
	for (i = 0; i < run->nw; i++) {
		const struct diff_word *w = &run->c->w[run->words[i]];

		product *= (double)w->nreps;
		exact &= w->kind != W_SAMPLED;
		set_word(&d, run->words[i], w->reps[0]);
	}
	if (product <= MAX_EXACT_POINTS && product <= (double)run->budget) {
		for (;;) {
			for (i = 0; i < run->nw; i++)
				set_word(&d, run->words[i],
					 run->c->w[run->words[i]].reps[idx[i]]);
			run_point(run, &d);
			for (k = 0; k < run->nw && ++idx[k] == run->c->w[run->words[k]].nreps; k++)
				idx[k] = 0;
			if (k == run->nw)
				break;
		}
		return exact;
	}
	/* Every value of each word once, the others at their first value;
	 * then random points. */
	for (i = 0; i < run->nw; i++) {
		const struct diff_word *w = &run->c->w[run->words[i]];
		struct seccomp_data e = d;

		for (k = 0; k < w->nreps; k++) {
			set_word(&e, run->words[i], w->reps[k]);
			run_point(run, &e);
		}
	}
	for (k = 0; k < (run->budget >= SAMPLE_POINTS ? SAMPLE_POINTS : SAMPLE_POINTS_SPENT);
	     k++) {
		for (i = 0; i < run->nw; i++) {
			const struct diff_word *w = &run->c->w[run->words[i]];

			set_word(&d, run->words[i],
				 w->reps[diff_rand(&seed) % w->nreps]);
		}
		run_point(run, &d);
	}
	return false;
}

/* The regions of one number that is not constant on both sides. */
static int diff_args(struct run *run, struct c2e_diff *out, size_t *cap)
{
	struct diff_class *c = run->c;
	uint64_t seed = ((uint64_t)c->arch << 32 | c->nr) ^ 0x5eccull;
	bool exact, args = false;
	size_t i, j;
	int r;

	diff_class_scan(c, run->a, run->na);
	diff_class_scan(c, run->b, run->nb);
	diff_class_finish(c, seed);
	run->nw = 0;
	for (i = 2; i < C2E_DIFF_WORDS; i++)
		if (c->w[i].tested)
			run->words[run->nw++] = (unsigned int)i;
	run->n = 0;
	run->truncated = false;
	memset(run->slot, 0, sizeof(run->slot));
	exact = run_product(run, seed) && !run->truncated;
	if (run->truncated || (!exact && run->n > 32))
		collapse(run);
	else
		merge_all(run);
	for (i = 0; i < run->n; i++) {
		struct c2e_diff_region reg;
		const struct rg *g = &run->r[i];

		if (g->dead)
			continue;
		memset(&reg, 0, sizeof(reg));
		reg.arch = c->arch;
		reg.nr = c->nr;
		reg.a = g->a;
		reg.b = g->b;
		reg.witness = g->wit;
		reg.sampled = !exact;
		for (j = 0; j < run->nw; j++) {
			unsigned int w = run->words[j];
			size_t before = strlen(reg.where);

			diff_class_describe(&c->w[w], w, g->set[w], g->care[w], g->val[w],
					    reg.where, sizeof(reg.where));
			/* A sampled number's witness is shown whole. */
			if (strlen(reg.where) != before || !exact)
				reg.words |= (uint16_t)(1u << w);
		}
		args |= reg.where[0] != 0 || !exact;
		if ((r = push_region(out, cap, &reg)))
			return r;
	}
	if (run->n) {
		out->differ++;
		out->with_args += args;
	} else if (!exact && (r = push_unproven(out, c->arch, c->nr))) {
		return r;
	}
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Every constant either chain jumps on, k and k + 1 (sorted, unique). */
static int jump_constants(const struct sock_fprog *a, size_t na, const struct sock_fprog *b,
			  size_t nb, uint32_t **out, size_t *n)
{
	const struct sock_fprog *chains[2] = { a, b };
	size_t lens[2] = { na, nb }, c, f, i, cnt = 0, o = 0;
	uint32_t *v;

	for (c = 0; c < 2; c++)
		for (f = 0; f < lens[c]; f++)
			cnt += chains[c][f].len;
	v = malloc((2 * cnt + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (c = 0; c < 2; c++)
		for (f = 0; f < lens[c]; f++)
			for (i = 0; i < chains[c][f].len; i++) {
				const struct sock_filter *in = &chains[c][f].filter[i];

				if (BPF_CLASS(in->code) != BPF_JMP || BPF_OP(in->code) == BPF_JA ||
				    BPF_SRC(in->code) != BPF_K)
					continue;
				v[o++] = in->k;
				v[o++] = in->k + 1;
			}
	v[o++] = ~0u; /* syscall(-1) */
	qsort(v, o, sizeof(*v), cmp_u32);
	for (i = 0, cnt = 0; i < o; i++)
		if (!cnt || v[cnt - 1] != v[i])
			v[cnt++] = v[i];
	*out = v;
	*n = cnt;
	return 0;
}

static int check_chain(const char *side, const struct sock_fprog *chain, size_t n,
		       struct c2e_error *err)
{
	size_t i;
	int r;

	for (i = 0; i < n; i++) {
		r = c2e_validate(chain[i].filter, chain[i].len, err);
		if (r) {
			if (err) {
				char msg[sizeof(err->msg)];

				memcpy(msg, err->msg, sizeof(msg));
				snprintf(err->msg, sizeof(err->msg), "%s filter %zu: %.150s", side,
					 i, msg);
			}
			return r;
		}
	}
	return 0;
}

/* One number: constant on both sides, or its argument regions. */
static int diff_number(struct run *run, uint32_t arch, uint32_t nr, struct c2e_diff *out,
		       size_t *cap)
{
	uint32_t va, vb;

	out->numbers++;
	if (c2e_const_verdict(run->a, run->na, arch, (int)nr, &va) &&
	    c2e_const_verdict(run->b, run->nb, arch, (int)nr, &vb)) {
		struct c2e_diff_region reg;

		out->points++;
		va = c2e_verdict_canon(va);
		vb = c2e_verdict_canon(vb);
		if (va == vb)
			return 0;
		memset(&reg, 0, sizeof(reg));
		reg.arch = arch;
		reg.nr = nr;
		reg.a = va;
		reg.b = vb;
		reg.witness.nr = (int)nr;
		reg.witness.arch = arch;
		out->differ++;
		return push_region(out, cap, &reg);
	}
	out->classed++;
	memset(run->c, 0, sizeof(*run->c));
	run->c->arch = arch;
	run->c->nr = nr;
	run->points = 0;
	{
		int r = diff_args(run, out, cap);

		out->points += run->points;
		run->budget -= run->points < run->budget ? run->points : run->budget;
		return r;
	}
}

int c2e_diff_chains(const struct sock_fprog *a, size_t na,
		    const struct sock_fprog *b, size_t nb,
		    struct c2e_diff *out, struct c2e_error *err)
{
	struct run run = { .a = a, .b = b, .na = na, .nb = nb, .budget = POINT_BUDGET };
	uint32_t *extra = NULL;
	size_t cap = 0, nextra = 0, i;
	unsigned int ai;
	int r;

	memset(out, 0, sizeof(*out));
	if ((r = check_chain("A", a, na, err)) || (r = check_chain("B", b, nb, err)))
		return r;
	run.c = malloc(sizeof(*run.c));
	run.r = malloc(MAX_REGIONS * sizeof(*run.r));
	if (!run.c || !run.r || jump_constants(a, na, b, nb, &extra, &nextra)) {
		r = -ENOMEM;
		goto out;
	}
	for (ai = 0; ai < 3; ai++) {
		uint32_t base = ai == 2 ? C2E_X32_SYSCALL_BIT : 0;

		for (i = 0; i < NR_RANGE; i++)
			if ((r = diff_number(&run, arch_audit[ai], base | (uint32_t)i, out, &cap)))
				goto out;
		/* The constants: x86_64 takes those without the x32 bit, x32
		 * those with it, i386 all; each once. */
		for (i = 0; i < nextra; i++) {
			uint32_t v = extra[i];
			bool take = ai == 1 ? v >= NR_RANGE :
				    ai == 0 ? !(v & C2E_X32_SYSCALL_BIT) && v >= NR_RANGE :
				    (v & C2E_X32_SYSCALL_BIT) &&
				    (v & ~C2E_X32_SYSCALL_BIT) >= NR_RANGE;

			if (take && (r = diff_number(&run, arch_audit[ai], v, out, &cap)))
				goto out;
		}
	}
	r = 0;
out:
	free(extra);
	free(run.c);
	free(run.r);
	return r;
}

void c2e_diff_free(struct c2e_diff *d)
{
	free(d->regions);
	free(d->unproven);
	memset(d, 0, sizeof(*d));
}
