// SPDX-License-Identifier: GPL-2.0-only
/*
 * Spare chains for cgroups (loader/runtime/spare.c): after a cgroup
 * attach, sf_runtime_make_spares() loads the same chain under a fresh id,
 * and the next cgroup attach of that filter takes it instead of waiting
 * for the kernel's verification. What must hold: the taking attach loads
 * no program and its cgroup is confined by the filter as written under an
 * id of its own; a spare is never given to another filter or below
 * another parent; loading one leaves an idle runtime's dispatcher
 * detached; a detach of one container's filter leaves the other's in
 * force. And sfilterd's first ask (SF_ATTACH_LOADED, to verify off its
 * loop what is not loaded): a new chain is refused having changed
 * nothing, a spare is taken.
 *
 * Victims wait on a pipe for a command byte ('A' getppid, 'B' getuid,
 * 'C' getgid) and report 'y'; one that reports nothing died on its call.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "victim.h"
#include "progs.h"
#include "runtime.h"
#include "c2e.h"
#include "cgroup.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static struct sock_filter kill_ppid[4], kill_uid[4];

/* The newest BPF program's id: the kernel gives ids in increasing order
 * (idr_alloc_cyclic()), so a program loaded since has a greater one.
 * Not a count: another runtime's programs, closed before, may be freed
 * later (the kernel frees a program from a workqueue), which a count
 * would read as this test's doing. */
static __u32 newest_prog(void)
{
	__u32 id = 0, newest = 0;

	while (!bpf_prog_get_next_id(id, &id))
		newest = id > newest ? id : newest;
	return newest;
}

static struct sf_runtime *open_rt(void)
{
	struct sf_runtime_opts o = { .verbose = getenv("SF_VERBOSE") != NULL };
	struct sf_runtime *rt = NULL;

	if (!ASSERT_OK(sf_runtime_open(&rt, &o), "sf_runtime_open"))
		return NULL;
	return rt;
}

/* A victim moved into cg, whose calls then say what judges it: the
 * getppid result (1 ran, 0 killed). */
static int joiner_getppid(const char *cg, struct victim *v)
{
	if (!ASSERT_TRUE(victim_start(v), "victim") || !ASSERT_TRUE(tcg_move(cg, v->pid), "join"))
		return -1;
	ASSERT_EQ(victim_do(v, 'C'), 1, "an allowed call runs");
	return victim_do(v, 'A');
}

/* The end of every case: the victim, the runtime, the cgroups (innermost
 * first; "" is none). */
static void finish(struct victim *v, struct sf_runtime *rt, char *cg1, char *cg2, char *cg3)
{
	char *cgs[] = { cg1, cg2, cg3 };
	size_t i;

	victim_end(v);
	sf_runtime_close(rt);
	for (i = 0; i < 3; i++)
		if (cgs[i] && cgs[i][0])
			rmdir(cgs[i]);
}

/* top/name made, its path into out; false with the test failed. */
static bool subcg(char *out, size_t size, const char *top, const char *name)
{
	snprintf(out, size, "%s/%s", top, name);
	return ASSERT_OK(mkdir(out, 0755) ? -errno : 0, "mkdir a sub-cgroup");
}

TEST(a_second_cgroup_of_a_filter_takes_the_spare_loaded_after_the_first_and_is_confined_by_it)
{
	struct sock_fprog p = progs_kill_on(kill_ppid, 4, SYS_getppid);
	struct sf_runtime *rt = NULL;
	struct victim v = { 0 };
	char a[512] = "", b[512] = "";
	struct c2e_error e;
	uint32_t ida = 0, idb = 0;
	__u32 before;

	if (!tcg_make(a, sizeof(a), "sfspare-a") || !tcg_make(b, sizeof(b), "sfspare-b") ||
	    !(rt = open_rt()))
		goto out;
	/* sfilterd's first ask: loaded chains only. */
	before = newest_prog();
	ASSERT_EQ(sf_runtime_attach_cgroup(rt, a, &p, SF_ATTACH_LOADED, &ida, &e), -EINPROGRESS,
		  "a chain never loaded: for the verifier's thread");
	ASSERT_EQ(newest_prog(), before, "nothing loaded (the newest program's id)");
	ASSERT_EQ(joiner_getppid(a, &v), 1, "and the cgroup judges nobody");
	victim_end(&v);
	if (!ASSERT_OK(sf_runtime_attach_cgroup(rt, a, &p, 0, &ida, &e), "attach the first"))
		goto out;
	ASSERT_EQ(sf_runtime_make_spares(rt), 1, "a spare loaded after it");
	ASSERT_EQ(sf_runtime_make_spares(rt), 0, "and no second one");
	before = newest_prog();
	if (!ASSERT_OK(sf_runtime_attach_cgroup(rt, b, &p, SF_ATTACH_LOADED, &idb, &e),
		       "attach the second, loaded chains only"))
		goto out;
	ASSERT_EQ(newest_prog(), before, "the second attach loaded no program");
	ASSERT_NEQ(idb, ida, "each cgroup's filter has an id of its own");
	ASSERT_EQ(joiner_getppid(b, &v), 0, "the second cgroup's joiner dies on its denied call");
	victim_end(&v);
	ASSERT_EQ(sf_runtime_make_spares(rt), 1, "a spare for the third");
	/* One container's filter detached: the other's stays in force. */
	ASSERT_OK(sf_runtime_detach(rt, ida), "detach the first cgroup's filter");
	ASSERT_EQ(joiner_getppid(b, &v), 0, "the second cgroup still judges");
	victim_end(&v);
	ASSERT_EQ(joiner_getppid(a, &v), 1, "the first no longer does");
out:
	finish(&v, rt, a, b, NULL);
}

TEST(a_spare_is_given_to_the_same_filter_below_the_same_parent_only)
{
	struct sock_fprog pp = progs_kill_on(kill_ppid, 4, SYS_getppid);
	struct sock_fprog pu = progs_kill_on(kill_uid, 4, SYS_getuid);
	struct sf_runtime *rt = NULL;
	struct victim v = { 0 };
	char a[512] = "", b[512] = "", sub[600] = "";
	struct c2e_error e;
	__u32 before;

	if (!tcg_make(a, sizeof(a), "sfspare-p") || !tcg_make(b, sizeof(b), "sfspare-o"))
		goto out;
	if (!subcg(sub, sizeof(sub), a, "inner"))
		goto out;
	if (!(rt = open_rt()) ||
	    !ASSERT_OK(sf_runtime_attach_cgroup(rt, a, &pp, 0, NULL, &e), "attach getppid's") ||
	    !ASSERT_EQ(sf_runtime_make_spares(rt), 1, "its spare"))
		goto out;
	before = newest_prog();
	if (!ASSERT_OK(sf_runtime_attach_cgroup(rt, b, &pu, 0, NULL, &e), "attach getuid's"))
		goto out;
	ASSERT_TRUE(newest_prog() > before, "another filter loads a program of its own");
	if (!ASSERT_TRUE(victim_start(&v), "victim") || !ASSERT_TRUE(tcg_move(b, v.pid), "join"))
		goto out;
	ASSERT_EQ(victim_do(&v, 'A'), 1, "getppid runs: the spare was not given to it");
	ASSERT_EQ(victim_do(&v, 'B'), 0, "getuid kills: its own filter judges");
	victim_end(&v);
	/* Below a cgroup that has the filter, the chain is that filter twice:
	 * not the spare of the filter alone. */
	before = newest_prog();
	if (!ASSERT_OK(sf_runtime_attach_cgroup(rt, sub, &pp, 0, NULL, &e), "attach below"))
		goto out;
	ASSERT_TRUE(newest_prog() > before, "the chain below is loaded for itself");
	ASSERT_EQ(joiner_getppid(sub, &v), 0, "and judges");
out:
	finish(&v, rt, sub, a, b);
}

TEST(loading_a_spare_leaves_an_idle_runtime_without_its_dispatcher)
{
	struct sock_fprog p = progs_kill_on(kill_ppid, 4, SYS_getppid);
	struct sf_runtime *rt = NULL;
	struct victim v = { 0 };
	char a[512] = "", b[512] = "";
	struct c2e_error e;

	if (!tcg_make(a, sizeof(a), "sfspare-i") || !tcg_make(b, sizeof(b), "sfspare-j"))
		goto out;
	if (!(rt = open_rt()) ||
	    !ASSERT_OK(sf_runtime_attach_cgroup(rt, a, &p, 0, NULL, &e), "attach"))
		goto out;
	/* The container is gone before its spare is made. */
	ASSERT_OK(rmdir(a) ? -errno : 0, "remove the cgroup");
	a[0] = '\0';
	ASSERT_EQ(sf_runtime_idle_check(rt), 1, "idle: the dispatcher detached");
	ASSERT_EQ(sf_runtime_make_spares(rt), 1, "the spare loaded meanwhile");
	ASSERT_EQ(sf_runtime_dispatch_link_id(rt), 0, "and the dispatcher still detached");
	/* The next container: dispatcher attached before anyone has the chain. */
	if (!ASSERT_OK(sf_runtime_attach_cgroup(rt, b, &p, 0, NULL, &e), "attach the next"))
		goto out;
	ASSERT_TRUE(sf_runtime_dispatch_link_id(rt) > 0, "its attach turned the dispatcher on");
	ASSERT_EQ(joiner_getppid(b, &v), 0, "and its joiner is judged");
out:
	finish(&v, rt, a, b, NULL);
}

/* Every container's chain has an id of its own: once its cgroup is gone
 * and its slot taken back, nothing may keep it (a daemon would hold one
 * per container it ever started, and write them all at every save). */
TEST(chains_of_removed_cgroups_are_freed_once_their_slots_are_taken_back)
{
	struct sock_fprog p = progs_kill_on(kill_ppid, 4, SYS_getppid);
	struct sf_runtime *rt = NULL;
	struct victim v = { 0 };
	char top[512] = "", cg[600] = "";
	struct c2e_error e;
	uint32_t first = 0;
	int i, r = 0, freed = 0, n;

	if (!tcg_make(top, sizeof(top), "sfspare-gone") || !(rt = open_rt()))
		goto out;
	ASSERT_EQ(sf_runtime_reap_chains(rt), 0, "nothing to free at first");
	for (i = 0; i < SF_MAX_CHAINS + 8 && !r; i++) {
		snprintf(cg, sizeof(cg), "%s/c%d", top, i);
		if (!ASSERT_OK(mkdir(cg, 0755) ? -errno : 0, "mkdir"))
			goto out;
		r = sf_runtime_attach_cgroup(rt, cg, &p, 0, i ? NULL : &first, &e);
		rmdir(cg);
	}
	cg[0] = '\0';
	if (!ASSERT_OK(r, "every attach found a slot"))
		goto out;
	while ((n = sf_runtime_reap_chains(rt)) > 0)
		freed += n;
	test_log("%d cgroups attached and removed in turn: %d chains freed\n", i, freed);
	ASSERT_TRUE(freed >= 8, "the chains whose slots were taken back are freed");
	ASSERT_EQ(sf_runtime_reap_chains(rt), 0, "and nothing more");
	ASSERT_EQ(sf_runtime_detach(rt, first), -ENOENT, "the first one's id names nothing now");
	if (!subcg(cg, sizeof(cg), top, "last") ||
	    !ASSERT_OK(sf_runtime_attach_cgroup(rt, cg, &p, 0, NULL, &e), "attach once more"))
		goto out;
	ASSERT_EQ(joiner_getppid(cg, &v), 0, "and its joiner is judged");
out:
	finish(&v, rt, cg, top, NULL);
}

/* A container's chain is its cgroup's alone: once the cgroup is gone and
 * no task has the chain, its slot is given back at once (not when slots
 * run short), so that the state file holds live containers' chains. A
 * task that left the cgroup before it went keeps its chain in force. */
TEST(a_gone_cgroups_chain_gives_its_slot_back_unless_a_task_that_left_still_has_it)
{
	struct sock_fprog p = progs_kill_on(kill_ppid, 4, SYS_getppid);
	struct sf_runtime *rt = NULL;
	struct victim v = { 0 };
	char top[512] = "", a[600] = "", b[600] = "";
	struct c2e_error e;
	uint32_t ida = 0;
	int n;

	if (!tcg_make(top, sizeof(top), "sfspare-left") || !(rt = open_rt()))
		goto out;
	if (!subcg(a, sizeof(a), top, "a") || !subcg(b, sizeof(b), top, "b") ||
	    !ASSERT_OK(sf_runtime_attach_cgroup(rt, a, &p, 0, &ida, &e), "attach a") ||
	    !ASSERT_OK(sf_runtime_attach_cgroup(rt, b, &p, 0, NULL, &e), "attach b"))
		goto out;
	/* b's task leaves it for the parent, then b goes; a goes empty. */
	if (!ASSERT_TRUE(victim_start(&v), "victim") || !ASSERT_TRUE(tcg_move(b, v.pid), "join b") ||
	    !ASSERT_TRUE(tcg_move(top, v.pid), "leave b"))
		goto out;
	ASSERT_OK(rmdir(a) ? -errno : 0, "remove a");
	ASSERT_OK(rmdir(b) ? -errno : 0, "remove b");
	a[0] = b[0] = '\0';
	/* The attaches notice cgroups gone; so does this one (c). */
	if (!subcg(a, sizeof(a), top, "c") ||
	    !ASSERT_OK(sf_runtime_attach_cgroup(rt, a, &p, 0, NULL, &e), "attach c"))
		goto out;
	while ((n = sf_runtime_reap_chains(rt)) > 0)
		;
	ASSERT_EQ(sf_runtime_detach(rt, ida), -ENOENT, "a's chain is gone");
	ASSERT_EQ(victim_do(&v, 'C'), 1, "the task that left b runs its allowed calls");
	ASSERT_EQ(victim_do(&v, 'A'), 0, "and b's chain still kills its denied one");
out:
	finish(&v, rt, a, b, top);
}
