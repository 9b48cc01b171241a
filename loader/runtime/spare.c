// SPDX-License-Identifier: GPL-2.0-only
/*
 * Spare chains for cgroups. Every cgroup attach gives its cgroup a filter
 * of its own id (an admin detaches one container's filter, not every
 * container's), and a chain program carries its filters' ids, so each
 * container of one image would wait for the kernel's verification of the
 * same profile (milliseconds for Docker's). After a cgroup attach, the
 * same chain is loaded once more here, under a fresh id, off everyone's
 * reply path (sfilterd's filler thread); the next cgroup attach of that
 * filter below the same parent takes it (sf_rt_spare_find()) and only
 * gives it its cgroup.
 *
 * A spare is a node like any other but that node_find() skips it (no
 * task's attach shares it) and its install leaves the dispatcher as it is
 * (it judges nobody until taken, and the taking attach turns the
 * dispatcher on first). No task and no cgroup has its slot, so slots
 * running short take it back first among the unused; a restart adopts it
 * as an unused chain.
 */
#include "internal.h"

#include <errno.h>

int sf_runtime_make_spares(struct sf_runtime *rt)
{
	struct sf_chain_build b = SF_CHAIN_BUILD_INIT;
	struct sf_node *of, *node = NULL;
	int nice, err = 0;

	nice = sf_rt_lock_unniced(rt);
	of = rt->spare_of;
	rt->spare_of = NULL;
	if (!of || of->dead || (of->parent && of->parent->dead) ||
	    sf_rt_spare_find(rt, of->parent, of->insns, of->len, of->flags)) {
		sf_rt_unlock_reniced(rt, nice);
		return 0;
	}
	node = sf_rt_node_get(rt, of->parent, of->insns, of->len, of->flags, rt->next_id,
			      rt->spare_kcount);
	if (!node) {
		sf_rt_unlock_reniced(rt, nice);
		return -ENOMEM;
	}
	node->spare = true;
	node->last_use = rt->uses;
	err = sf_rt_build_begin(rt, node, &b);
	/* Off the reply path: the form a call pays least for, at once. */
	b.search = true;
	b.spare = true;
	sf_rt_unlock_reniced(rt, nice);
	if (!err)
		err = sf_rt_build_run(rt, &b);
	nice = sf_rt_lock_unniced(rt);
	if (!err && node->spare)
		err = sf_rt_build_install(rt, &b);
	/* A spare that did not load is never taken (it has no slot): it is
	 * only kept from being found. */
	if (err && node->spare && !node->slot)
		node->dead = true;
	sf_rt_unlock_reniced(rt, nice);
	sf_rt_build_free(&b);
	return err ? err : 1;
}
