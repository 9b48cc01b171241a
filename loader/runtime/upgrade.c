// SPDX-License-Identifier: GPL-2.0-only
/*
 * A chain's searched form swapped in for its linear one. With linear_first
 * a new chain is loaded in the form the kernel's verifier checks fastest
 * (each allowlist compared key by key), so that the attach waiting for it
 * is answered sooner; the form a call pays least for (each allowlist as a
 * binary search) is loaded here, later and on nobody's reply path, and
 * put in the chain's slot by one PROG_ARRAY update (sf_rt_build_swap()).
 * As for a new chain, the load runs without rt->lock; the swap takes it
 * and checks that the chain still holds that slot in its linear form, so
 * that a slot freed or given to another chain meanwhile is left alone.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Swaps that found the chain changed under them, in a row, before the
 * call gives up until its next one (a build is made again each time). */
#define STALE_ROUNDS 4

/* The next chain due, its build begun: 1, 0 when none is due, or -errno
 * (its build could not begin). rt->lock held. */
static int next_due(struct sf_runtime *rt, struct sf_chain_build *b)
{
	int i, err;

	for (i = 1; i < SF_MAX_CHAINS; i++) {
		struct sf_node *n = rt->slots[i];

		/* A dead chain's slot is emptied as soon as its tasks moved. */
		if (!n || !n->linear || n->dead || n->slot != i)
			continue;
		err = sf_rt_build_begin(rt, n, b);
		b->search = true;
		b->upgrade = true;
		return err ? err : 1;
	}
	return 0;
}

/* The linear form stays in n's slot for good: it judges as the searched
 * one would, each call only costs more compares. rt->lock held. */
static void keep_linear(struct sf_node *n, int err)
{
	if (!n->linear || !n->slot)
		return;
	n->linear = false;
	fprintf(stderr, "sfilter: chain of filter %u (slot %d): its searched form "
		"was not loaded (%s); the linear form stays in force\n",
		n->id, n->slot, strerror(-err));
}

int sf_runtime_upgrade_chains(struct sf_runtime *rt, int max, struct sf_upgrades *done)
{
	int settled = 0, stale = 0, nice;

	while ((!max || settled < max) && stale < STALE_ROUNDS) {
		struct sf_chain_build b = SF_CHAIN_BUILD_INIT;
		int found, err;

		nice = sf_rt_lock_unniced(rt);
		found = next_due(rt, &b);
		if (found < 0)
			keep_linear(b.node, found);
		sf_rt_unlock_reniced(rt, nice);
		if (found <= 0) {
			sf_rt_build_free(&b);
			if (found == 0)
				break;
			settled++;
			if (done)
				done->kept++;
			continue;
		}
		err = sf_rt_build_run(rt, &b);
		nice = sf_rt_lock_unniced(rt);
		if (!err)
			err = sf_rt_build_swap(rt, &b);
		else if (!b.node->linear || !b.node->slot)
			err = -ESTALE; /* not due any more: no loss */
		if (err == -ESTALE) {
			stale++;
		} else {
			stale = 0;
			settled++;
			if (err)
				keep_linear(b.node, err);
			if (done && err)
				done->kept++;
			else if (done && b.same)
				done->same++;
			else if (done)
				done->swapped++;
		}
		sf_rt_unlock_reniced(rt, nice);
		sf_rt_build_free(&b);
	}
	return settled;
}
