// SPDX-License-Identifier: GPL-2.0-only
/*
 * A chain's action table (sf_table): for each syscall number of each
 * arch, the verdict the chain's filters give whatever the arguments, when
 * they give a constant one, so that the dispatcher answers without running
 * the chain; 0 ("run the chain") elsewhere. Reads only the filters' code:
 * computed without rt->lock, for a whole table or a piece of one
 * (chains.c).
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* A chain's filters as the action table reads them: all of them and, when
 * some are complain or shadow filters, split into enforcing ones (emap:
 * each one's index in the chain), complain ones and shadow ones. */
struct table_src {
	const struct sf_chain_filter *cf;
	const struct sock_fprog *fp;
	size_t n;
	struct sock_fprog *efp, *cfp, *sfp;
	size_t *emap, ne, nc, ns;
};

/* Splits the filters when some complain or shadow. 0 or -ENOMEM. */
static int table_split(struct table_src *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->cf[i].flags & (SF_FLAG_COMPLAIN | SF_FLAG_SHADOW))
			s->nc++;
	if (!s->nc)
		return 0;
	s->efp = calloc(s->n, sizeof(*s->efp));
	s->cfp = calloc(s->n, sizeof(*s->cfp));
	s->sfp = calloc(s->n, sizeof(*s->sfp));
	s->emap = calloc(s->n, sizeof(*s->emap));
	if (!s->efp || !s->cfp || !s->sfp || !s->emap)
		return -ENOMEM;
	s->nc = 0;
	for (i = 0; i < s->n; i++) {
		if (s->cf[i].flags & SF_FLAG_SHADOW) {
			s->sfp[s->ns++] = s->fp[i];
		} else if (s->cf[i].flags & SF_FLAG_COMPLAIN) {
			s->cfp[s->nc++] = s->fp[i];
		} else {
			s->emap[s->ne] = i;
			s->efp[s->ne++] = s->fp[i];
		}
	}
	return 0;
}

/* Whether verdicts a and b are the same as shadow mode compares them (and
 * chain_emit.c's emit_shadow_cmp()): the action, and the data of those
 * that carry it. */
static bool same_verdict(uint32_t a, uint32_t b)
{
	uint32_t act = a & SECCOMP_RET_ACTION_FULL;

	if (act != (b & SECCOMP_RET_ACTION_FULL))
		return false;
	if (c2e_action_has_data(act))
		return (a & SECCOMP_RET_DATA) == (b & SECCOMP_RET_DATA);
	return true;
}

/* Whether every shadow filter's verdict for (arch, nr) is constant and the
 * same as enforced: then no shadow event can come of the number. */
static bool shadows_agree(const struct table_src *s, uint32_t arch, int snr,
			  uint32_t enforced)
{
	uint32_t ret;
	size_t i;

	for (i = 0; i < s->ns; i++)
		if (!c2e_const_verdict(&s->sfp[i], 1, arch, snr, &ret) ||
		    !same_verdict(ret, enforced))
			return false;
	return true;
}

/* The entry for (arch, nr): the chain's verdict where it is constant. */
static struct sf_const table_entry(const struct table_src *s, uint32_t arch, int snr)
{
	struct sf_const c = { .kind = SF_CONST_RUN };
	uint32_t ret;
	size_t w;

	if (!s->nc && !s->ns) {
		if (c2e_const_verdict_winner(s->fp, s->n, arch, snr, &ret, &w)) {
			c.kind = SF_CONST_VALUE;
			c.ret = ret;
			if (w < s->n) {
				c.filter_id = s->cf[w].id;
				c.flags = s->cf[w].flags;
			}
		}
	} else if (!s->nc || (c2e_const_verdict_winner(s->cfp, s->nc, arch, snr, &ret, &w) &&
				(ret & C2E_RET_ACTION_FULL) == SECCOMP_RET_ALLOW)) {
		if (!s->ne) {
			c.kind = SF_CONST_VALUE;
			c.ret = SECCOMP_RET_ALLOW;
		} else if (c2e_const_verdict_winner(s->efp, s->ne, arch, snr, &ret, &w)) {
			c.kind = SF_CONST_VALUE;
			c.ret = ret;
			if (w < s->ne) {
				c.filter_id = s->cf[s->emap[w]].id;
				c.flags = s->cf[s->emap[w]].flags;
			}
		}
		if (c.kind == SF_CONST_VALUE && !shadows_agree(s, arch, snr, c.ret))
			c.kind = SF_CONST_RUN;
	}
	return c;
}

/* Entries first .. first + count - 1 (index arch * SF_TABLE_NR + nr) of
 * the action table of a chain into out. Complain and shadow filters never
 * decide: a number is constant only if the enforcing filters' verdict is
 * constant, every complain filter's is a constant ALLOW and every shadow
 * filter's a constant equal to it (else the chain runs and logs). A chain
 * with a counted filter always runs, so that every call is counted where
 * the filter's rets are. Reads only the filters: no lock needed. */
void sf_rt_fill_rows(struct sf_const *out, const struct sf_chain_filter *cf,
		      const struct sock_fprog *fp, size_t n, int first, int count)
{
	static const uint32_t arches[SF_TABLE_ARCHES] = {
		[SF_ARCH_X86_64] = C2E_AUDIT_ARCH_X86_64,
		[SF_ARCH_I386] = C2E_AUDIT_ARCH_I386,
		[SF_ARCH_X32] = C2E_AUDIT_ARCH_X86_64,
	};
	struct table_src s = { .cf = cf, .fp = fp, .n = n };
	bool rfc = false;
	size_t i;
	int k;

	/* The constant-verdict analysis reads seccomp_data; a chain with a
	 * 2012-interface filter always runs. */
	for (i = 0; i < n; i++)
		if (cf[i].flags & (SF_FLAG_RFC2012 | SF_FLAG_COUNT))
			rfc = true;
	if (rfc || table_split(&s)) {
		memset(out, 0, (size_t)count * sizeof(*out)); /* run the chain */
	} else {
		for (k = 0; k < count; k++) {
			int a = (first + k) / SF_TABLE_NR, nr = (first + k) % SF_TABLE_NR;
			int snr = a == SF_ARCH_X32 ? (int)(C2E_X32_SYSCALL_BIT | nr) : nr;

			out[k] = table_entry(&s, arches[a], snr);
		}
	}
	free(s.efp);
	free(s.cfp);
	free(s.sfp);
	free(s.emap);
}
