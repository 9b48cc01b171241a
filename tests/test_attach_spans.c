// SPDX-License-Identifier: GPL-2.0-only
/*
 * Where an attach's time goes: an admin's STATUS carries "attach_spans",
 * a count and a sum of nanoseconds for each step of the ATTACHes put in
 * force (docs/protocol.md). An attach counts in every step it passes, a
 * filter the daemon already has skips the new chain's steps, the filter
 * is validated once (by the daemon, not again by the runtime), the counters
 * only grow, and the steps, being disjoint parts of the whole, add up to
 * no more than "total"; a pinned daemon restarted verifies none of the
 * filters the last one loaded. Nothing here asserts how long a step takes.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "daemon.h"
#include "proto.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

SFD_TIER_INDEPENDENT

#define IN_FORCE "the attach is in force (getppid kills)"

/* The steps as STATUS names them, in the order they run. */
static const char *const steps[] = {
	"validate", "validate_rt", "read", "chain", "dispatch", "translate", "verify",
	"table", "arm", "apply", "handoff", "reply", "total",
};
#define N_STEPS (sizeof(steps) / sizeof(steps[0]))

struct spans { long long n[N_STEPS], ns[N_STEPS]; };

/* STATUS's attach_spans into *s; false (the test failed) when a step is
 * missing. */
static bool read_spans(const struct sfd *dm, struct spans *s)
{
	char *text = calloc(1, SF_PROTO_MAX_MSG);
	struct json_object *o = NULL, *a, *step, *v;
	bool ok = false;
	size_t i;

	if (!ASSERT_TRUE(text != NULL, "calloc") || !ASSERT_EQ(sfd_status(dm, text), 0, "STATUS"))
		goto out;
	o = json_tokener_parse(text);
	if (!ASSERT_TRUE(o && json_object_object_get_ex(o, "attach_spans", &a),
			 "an admin's STATUS has attach_spans"))
		goto out;
	for (i = 0; i < N_STEPS; i++) {
		if (!ASSERT_TRUE(json_object_object_get_ex(a, steps[i], &step), steps[i]))
			goto out;
		s->n[i] = json_object_object_get_ex(step, "n", &v) ? json_object_get_int64(v) : -1;
		s->ns[i] = json_object_object_get_ex(step, "ns", &v) ? json_object_get_int64(v) : -1;
		if (!ASSERT_TRUE(s->n[i] >= 0 && s->ns[i] >= 0, "each step has n and ns"))
			goto out;
	}
	ok = true;
out:
	json_object_put(o);
	free(text);
	return ok;
}

static long long n_of(const struct spans *s, const char *name)
{
	size_t i;

	for (i = 0; i < N_STEPS; i++)
		if (!strcmp(steps[i], name))
			return s->n[i];
	return -1;
}

/* Every counter of b is at least a's. */
static void grown(const struct spans *a, const struct spans *b)
{
	size_t i;

	for (i = 0; i < N_STEPS; i++) {
		ASSERT_GE(b->n[i], a->n[i], steps[i]);
		ASSERT_GE(b->ns[i], a->ns[i], steps[i]);
	}
}

/* The steps are disjoint parts of each attach, from its request read to
 * its reply sent. */
static void within_total(const struct spans *s)
{
	long long sum = 0;
	size_t i;

	for (i = 0; i + 1 < N_STEPS; i++)
		sum += s->ns[i];
	ASSERT_TRUE(sum <= s->ns[N_STEPS - 1], "the steps add up to no more than total");
}

TEST(attach_spans_count_every_step_an_attach_passes_and_only_grow)
{
	static const char *const new_chain[] = {
		"validate", "read", "chain", "dispatch", "translate", "verify",
		"arm", "apply", "handoff", "reply", "total",
	}, *const loaded[] = {
		"validate", "read", "chain", "arm", "apply", "reply", "total",
	};
	struct spans s0, s1, s2;
	size_t i;
	SFD_AUTO;

	if (!test_need_root("an admin's STATUS"))
		return;
	if (!sfd_start_sfilterd(&dm, false) || !read_spans(&dm, &s0))
		return;
	for (i = 0; i < N_STEPS; i++)
		ASSERT_EQ(s0.n[i], 0, "no attach yet: every step 0");

	/* A filter the daemon has never seen: a new chain, loaded off the
	 * loop, on a daemon whose dispatcher waits for a first chain. Without
	 * a gate: a gated one is answered on a stand-in, before its
	 * verification (test_gate_standin.c). */
	setenv("SFILTER_GATE", "0", 1);
	if (!sfd_attach_confines(IN_FORCE) || !read_spans(&dm, &s1)) {
		unsetenv("SFILTER_GATE");
		return;
	}
	unsetenv("SFILTER_GATE");
	for (i = 0; i < sizeof(new_chain) / sizeof(new_chain[0]); i++)
		ASSERT_EQ(n_of(&s1, new_chain[i]), 1, new_chain[i]);
	test_log("table: %lld (0 where the daemon defers tables)\n", n_of(&s1, "table"));
	/* Validated once: the daemon's check is the runtime's, which the
	 * attach (and the verifier's job) is told not to run again. */
	ASSERT_EQ(n_of(&s1, "validate_rt"), 0, "the runtime did not validate it again");
	grown(&s0, &s1);
	within_total(&s1);

	/* The same filter again: the daemon has it, no new chain's steps. */
	if (!sfd_attach_confines(IN_FORCE) || !read_spans(&dm, &s2))
		return;
	for (i = 0; i < sizeof(loaded) / sizeof(loaded[0]); i++)
		ASSERT_EQ(n_of(&s2, loaded[i]) - n_of(&s1, loaded[i]), 1, loaded[i]);
	ASSERT_EQ(n_of(&s2, "translate"), n_of(&s1, "translate"), "nothing translated");
	ASSERT_EQ(n_of(&s2, "verify"), n_of(&s1, "verify"), "nothing verified");
	ASSERT_EQ(n_of(&s2, "handoff"), n_of(&s1, "handoff"), "answered on the loop");
	ASSERT_EQ(n_of(&s2, "validate_rt"), 0, "validated once, again");
	grown(&s1, &s2);
	within_total(&s2);
}

/* What pinning keeps across a restart includes the verified programs: the
 * next daemon adopts the chains the last one loaded, and an attach of a
 * filter it had loaded runs neither translator nor verifier. */
TEST(a_restarted_pinned_daemon_verifies_no_filter_the_last_one_loaded)
{
	struct spans s1, s2;
	SFD_AUTO;

	if (!test_need_root("a pinned daemon"))
		return;
	if (!sfd_start_sfilterd(&dm, true))
		return;
	/* Without a gate, so that the first daemon's attach verifies. */
	setenv("SFILTER_GATE", "0", 1);
	if (!sfd_attach_confines(IN_FORCE) || !read_spans(&dm, &s1)) {
		unsetenv("SFILTER_GATE");
		return;
	}
	unsetenv("SFILTER_GATE");
	ASSERT_EQ(n_of(&s1, "verify"), 1, "the first daemon verified the filter");
	sfd_signal(&dm, SIGTERM);
	if (!ASSERT_TRUE(sfd_restart(&dm), "sfilterd restarted on its pins"))
		return;
	if (!sfd_attach_confines(IN_FORCE " after the restart") || !read_spans(&dm, &s2))
		return;
	ASSERT_EQ(n_of(&s2, "total"), 1, "the new daemon counted one attach");
	ASSERT_EQ(n_of(&s2, "translate"), 0, "nothing translated after the restart");
	ASSERT_EQ(n_of(&s2, "verify"), 0, "nothing verified after the restart");
}
