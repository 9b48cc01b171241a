// SPDX-License-Identifier: GPL-2.0-only
/*
 * Which chains keep their slots when the 255 chain slots run out. A chain
 * no task has is kept loaded for its next attach, which then needs no
 * verification (SF_ATTACH_LOADED: the fast path sfilterd takes on its
 * loop). When a new chain needs a slot and none is free, the least
 * recently attached of the idle chains go first: a chain attached again
 * and again (a service's, a container image's) stays loaded while
 * another user attaches chain after chain that is never reused.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "victim.h"
#include "progs.h"
#include "runtime.h"
#include "c2e.h"
#include "sfilter.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/syscall.h>

/* Syscall numbers no kernel has: each makes a distinct filter. */
#define UNIQUE_NR  4000
#define REUSED_NR  3999
/* How often the reused filter is attached again, in unique attaches. */
#define REUSE_EVERY 16

/* Attaches p to a fresh victim that then exits, leaving its chain loaded
 * and idle. 0 or -errno. */
static int attach_idle(struct sf_runtime *rt, struct sock_fprog *p, unsigned int flags)
{
	struct victim v = { 0 };
	struct c2e_error e;
	int err;

	if (!victim_start(&v))
		return -ECHILD;
	err = sf_runtime_attach(rt, v.pid, p, flags, NULL, &e);
	victim_end(&v);
	return err;
}

TEST(a_chain_attached_again_and_again_keeps_its_slot_through_a_stream_of_new_chains)
{
	static struct sock_filter reused_insns[4], unique_insns[4];
	struct sock_fprog reused = progs_kill_on(reused_insns, 4, REUSED_NR), unique;
	struct sf_runtime_opts o = { .verbose = getenv("SF_VERBOSE") != NULL };
	struct sf_runtime *rt = NULL;
	int i, err, reloads = 0, n = SF_MAX_CHAINS + 4 * REUSE_EVERY;

	if (!ASSERT_OK(sf_runtime_open(&rt, &o), "sf_runtime_open"))
		return;
	if (!ASSERT_OK(attach_idle(rt, &reused, 0), "the reused filter's first attach"))
		goto out;
	/* More new chains than there are slots: at least one collection. */
	for (i = 0; i < n; i++) {
		unique = progs_kill_on(unique_insns, 4, UNIQUE_NR + i);
		err = attach_idle(rt, &unique, 0);
		if (!ASSERT_OK(err, "a new chain's attach"))
			goto out;
		if (i % REUSE_EVERY != REUSE_EVERY - 1)
			continue;
		/* Loaded only: -EINPROGRESS if its chain lost its slot. */
		err = attach_idle(rt, &reused, SF_ATTACH_LOADED);
		if (err == -EINPROGRESS) {
			reloads++;
			err = attach_idle(rt, &reused, 0);
		}
		if (!ASSERT_OK(err, "the reused filter's attach"))
			goto out;
	}
	test_log("%d new chains, the reused one attached every %d: loaded again %d times\n",
		 n, REUSE_EVERY, reloads);
	ASSERT_EQ(reloads, 0, "the reused chain never lost its slot");
out:
	sf_runtime_close(rt);
}
