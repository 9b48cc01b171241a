// SPDX-License-Identifier: GPL-2.0-only
/*
 * The dispatcher is attached only while something can be judged: with the
 * first chain, before any task has it, and detached by
 * sf_runtime_idle_check() once no task has a chain and no cgroup has a
 * filter. A confined task never runs unjudged on the way: the check keeps
 * the dispatcher while a confined task lives, and the next chain brings it
 * back. Pinned, an idle install is adopted like any other.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "c2e.h"
#include "cgroup.h"
#include "progs.h"
#include "runtime.h"
#include "victim.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static struct sock_filter kill_insns[4];

static int attach_kill_getppid(struct sf_runtime *rt, pid_t tid, uint32_t *id)
{
	struct sock_fprog p = progs_kill_on(kill_insns, 4, SYS_getppid);
	struct c2e_error e;

	return sf_runtime_attach(rt, tid, &p, 0, id, &e);
}

/* Whether the kernel still has link id (an unpinned, closed link goes
 * after an RCU grace period, from a workqueue): waits up to 5 s for it to
 * be as wanted. */
static bool link_exists(int id, bool wanted)
{
	int i;

	for (i = 0; i < 500; i++) {
		int fd = bpf_link_get_fd_by_id((uint32_t)id);

		if (fd >= 0)
			close(fd);
		if ((fd >= 0) == wanted)
			return wanted;
		usleep(10000);
	}
	return !wanted;
}

/* A victim confined now: the dispatcher is attached and stays while it
 * lives; its getppid kills it. */
static void confine_and_kill(struct sf_runtime *rt, const char *round)
{
	struct victim v = { 0 };
	uint32_t id;
	int link;

	if (!ASSERT_TRUE(victim_start(&v), "victim"))
		return;
	if (ASSERT_OK(attach_kill_getppid(rt, v.pid, &id), round)) {
		link = sf_runtime_dispatch_link_id(rt);
		ASSERT_TRUE(link > 0 && link_exists(link, true),
			    "the dispatcher is attached with the first chain");
		ASSERT_EQ(sf_runtime_idle_check(rt), 0, "kept while a confined task lives");
		ASSERT_EQ(victim_do(&v, 'B'), 1, "an allowed call runs");
		ASSERT_EQ(victim_do(&v, 'A'), 0, "the denied call kills");
	}
	victim_end(&v);
}

TEST(runtime_attaches_the_dispatcher_with_the_first_chain_and_detaches_it_after_the_last)
{
	struct sf_runtime *rt = NULL;
	struct sf_runtime_opts o = { .verbose = getenv("SF_VERBOSE") != NULL };
	int link, round;

	if (!ASSERT_OK(sf_runtime_open(&rt, &o), "sf_runtime_open"))
		return;
	ASSERT_EQ(sf_runtime_dispatch_link_id(rt), 0, "no dispatcher while nothing is confined");
	for (round = 0; round < 2; round++) {
		confine_and_kill(rt, round ? "attach after an idle detach" : "attach");
		link = sf_runtime_dispatch_link_id(rt);
		ASSERT_EQ(sf_runtime_idle_check(rt), 1, "detached once the last one is gone");
		ASSERT_EQ(sf_runtime_dispatch_link_id(rt), 0, "no dispatcher link");
		ASSERT_TRUE(link > 0 && !link_exists(link, false), "the kernel dropped the link");
		ASSERT_EQ(sf_runtime_idle_check(rt), 0, "nothing more to detach");
	}
	sf_runtime_close(rt);
}

/* Kept while a task may enter a cgroup with a filter; not once the
 * cgroup is gone (the OCI hook attaches each container's cgroup, and
 * containers come and go). */
TEST(runtime_keeps_the_dispatcher_while_a_cgroup_has_a_filter_not_once_it_is_removed)
{
	struct sf_runtime *rt = NULL;
	struct sf_runtime_opts o = { .verbose = getenv("SF_VERBOSE") != NULL };
	struct sock_fprog p = progs_kill_on(kill_insns, 4, SYS_getppid);
	struct c2e_error e;
	char cg[512];
	uint32_t id;

	if (!tcg_make(cg, sizeof(cg), "sftest-idle"))
		return;
	if (!ASSERT_OK(sf_runtime_open(&rt, &o), "sf_runtime_open"))
		goto out;
	if (ASSERT_OK(sf_runtime_attach_cgroup(rt, cg, &p, 0, &id, &e), "attach to an empty cgroup")) {
		ASSERT_TRUE(sf_runtime_dispatch_link_id(rt) > 0, "attached");
		ASSERT_EQ(sf_runtime_idle_check(rt), 0, "kept: a task may enter the cgroup");
		ASSERT_OK(sf_runtime_detach(rt, id), "detach the cgroup's filter");
		ASSERT_EQ(sf_runtime_idle_check(rt), 1, "then detached");
	}
	if (ASSERT_OK(sf_runtime_attach_cgroup(rt, cg, &p, SF_ATTACH_AT_EXEC, &id, &e),
		      "attach to it again, at exec")) {
		ASSERT_EQ(sf_runtime_idle_check(rt), 0, "kept again");
		ASSERT_OK(rmdir(cg) ? -errno : 0, "remove the cgroup");
		ASSERT_EQ(sf_runtime_idle_check(rt), 1, "detached: nothing can enter it");
		ASSERT_EQ(sf_runtime_dispatch_link_id(rt), 0, "no dispatcher");
	}
	sf_runtime_close(rt);
out:
	rmdir(cg);
}

static struct sf_runtime_opts pin_opts;

/* A fresh install pinned at pin (/sys/fs/bpf/sfilter-test-TAG-PID). */
static bool fresh_pinned(struct sf_runtime **rt, char *pin, size_t size, const char *tag)
{
	bool adopted = true;

	pin_opts.verbose = getenv("SF_VERBOSE") != NULL;
	snprintf(pin, size, "/sys/fs/bpf/sfilter-test-%s-%d", tag, getpid());
	sf_runtime_uninstall_dir(pin);
	return ASSERT_OK(sf_runtime_open_pinned(rt, &pin_opts, pin, &adopted), "fresh install") &&
	       ASSERT_FALSE(adopted, "fresh");
}

TEST(runtime_pinned_idle_install_is_adopted_and_attaches_on_demand)
{
	struct sf_runtime *rt = NULL;
	struct victim v = { 0 };
	char pin[64], link[128];
	bool adopted = true;
	uint32_t id;

	if (!fresh_pinned(&rt, pin, sizeof(pin), "idle"))
		goto out;
	snprintf(link, sizeof(link), "%s/link_sf_dispatch", pin);
	ASSERT_TRUE(access(link, F_OK) != 0, "no dispatcher link pinned while idle");
	sf_runtime_close(rt);
	if (!ASSERT_OK(sf_runtime_open_pinned(&rt, &pin_opts, pin, &adopted), "reopen") ||
	    !ASSERT_TRUE(adopted, "an idle install is adopted"))
		goto out;
	if (!ASSERT_TRUE(victim_start(&v), "victim") ||
	    !ASSERT_OK(attach_kill_getppid(rt, v.pid, &id), "attach"))
		goto out;
	ASSERT_OK(access(link, F_OK), "the dispatcher's link is pinned with the first chain");
	sf_runtime_close(rt);
	rt = NULL;
	ASSERT_EQ(victim_do(&v, 'A'), 0, "with no runtime open, the pins still judge");
	if (!ASSERT_OK(sf_runtime_open_pinned(&rt, &pin_opts, pin, &adopted), "reopen") ||
	    !ASSERT_TRUE(adopted, "adopted with its dispatcher"))
		goto out;
	ASSERT_EQ(sf_runtime_idle_check(rt), 1, "the adopted dispatcher is detached once idle");
	ASSERT_TRUE(access(link, F_OK) != 0, "and unpinned");
out:
	victim_end(&v);
	if (rt)
		sf_runtime_close(rt);
	sf_runtime_uninstall_dir(pin);
}

/* ---- the lsm tier: the LSM programs come and go with the dispatcher -------- */

/* How many links attach program prog_id. */
static int links_of_prog(uint32_t prog_id)
{
	uint32_t id = 0;
	int n = 0;

	while (bpf_link_get_next_id(id, &id) == 0) {
		struct bpf_link_info li = { 0 };
		uint32_t ll = sizeof(li);
		int fd = bpf_link_get_fd_by_id(id);

		if (fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &li, &ll) == 0 && li.prog_id == prog_id)
			n++;
		close(fd);
	}
	return n;
}

/* Waits up to 30 s (each detach rewrites a trampoline: slow under TCG)
 * for prog_id to have want links. */
static bool links_become(uint32_t prog_id, int want)
{
	int i;

	for (i = 0; i < 3000; i++) {
		if (links_of_prog(prog_id) == want)
			return true;
		usleep(10000);
	}
	return false;
}

static uint32_t pinned_prog_id(const char *pin, const char *name)
{
	struct bpf_prog_info pi = { 0 };
	uint32_t len = sizeof(pi);
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/prog_%s", pin, name);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;
	if (bpf_obj_get_info_by_fd(fd, &pi, &len))
		pi.id = 0;
	close(fd);
	return pi.id;
}

TEST(runtime_attaches_the_lsm_programs_only_while_something_can_be_judged)
{
	struct sf_runtime *rt = NULL;
	char pin[64], link[128];
	bool adopted = false;
	uint32_t prog;
	int round;

	if (!fresh_pinned(&rt, pin, sizeof(pin), "lsm-idle"))
		goto out;
	snprintf(link, sizeof(link), "%s/link_sf_lsm_file_open", pin);
	if (sf_runtime_tier(rt) != SF_TIER_LSM) {
		test_skip("the tracepoint tier (BPF LSM programs do not run on this kernel)");
		goto out;
	}
	prog = pinned_prog_id(pin, "sf_lsm_file_open");
	if (!ASSERT_TRUE(prog != 0, "sf_lsm_file_open is loaded and pinned"))
		goto out;
	ASSERT_EQ(links_of_prog(prog), 0, "no LSM program is attached while idle");
	for (round = 0; round < 2; round++) {
		struct sf_lazy_links l;

		confine_and_kill(rt, round ? "attach after an idle detach" : "attach");
		ASSERT_EQ(links_of_prog(prog), 1, "attached with the first chain");
		ASSERT_OK(access(link, F_OK), "and its link pinned");
		sf_runtime_lazy_links(rt, &l);
		ASSERT_GE(l.lsm, 1, "the runtime counts its LSM links");
		ASSERT_EQ(sf_runtime_idle_check(rt), 1, "detached once the last one is gone");
		ASSERT_TRUE(access(link, F_OK) != 0, "unpinned");
		ASSERT_TRUE(links_become(prog, 0), "the kernel dropped the LSM link");
		sf_runtime_lazy_links(rt, &l);
		ASSERT_EQ(l.lsm, 0, "and counts none while idle");
	}
	/* A restart adopts an install whose LSM programs are attached. */
	confine_and_kill(rt, "attach before a restart");
	sf_runtime_close(rt);
	rt = NULL;
	if (!ASSERT_OK(sf_runtime_open_pinned(&rt, &pin_opts, pin, &adopted), "reopen") ||
	    !ASSERT_TRUE(adopted, "adopted"))
		goto out;
	ASSERT_EQ(sf_runtime_tier(rt), SF_TIER_LSM, "the adopted install is of the lsm tier");
	ASSERT_EQ(links_of_prog(prog), 1, "its LSM programs stayed attached");
	ASSERT_EQ(sf_runtime_idle_check(rt), 1, "the adopted install goes idle");
	ASSERT_TRUE(links_become(prog, 0), "and its LSM links with it");
out:
	if (rt)
		sf_runtime_close(rt);
	sf_runtime_uninstall_dir(pin);
}

/* ---- the reply programs: only while an arm may be decided ------------------ */

/* The id of whichever reply program this kernel loaded (fexit on recvfrom,
 * or the sys_exit one), or 0. */
static uint32_t reply_prog_id(const char *pin)
{
	uint32_t id = pinned_prog_id(pin, "sf_reply_recvfrom");

	return id ? id : pinned_prog_id(pin, "sf_reply_exit_tp");
}

/* Whether the runtime says the reply programs are attached. */
static bool reply_attached(struct sf_runtime *rt)
{
	struct sf_lazy_links l;

	sf_runtime_lazy_links(rt, &l);
	return l.reply;
}

/* An armed attach of the getppid-killing filter to v. */
static int attach_armed(struct sf_runtime *rt, const struct victim *v)
{
	struct sock_fprog p = progs_kill_on(kill_insns, 4, SYS_getppid);
	struct sf_target tg = { .tid = v->pid, .reply_fd = 1000 };
	struct c2e_error e;
	uint32_t id;

	return sf_runtime_attach_to(rt, &tg, &p, SF_ATTACH_ARM, &id, &e);
}

TEST(runtime_attaches_the_reply_programs_for_an_arm_and_detaches_them_once_it_is_decided)
{
	struct sf_runtime *rt = NULL;
	struct victim v = { 0 };
	char pin[64];
	uint32_t prog, id;

	if (!fresh_pinned(&rt, pin, sizeof(pin), "reply-idle"))
		goto out;
	prog = reply_prog_id(pin);
	if (!ASSERT_TRUE(prog != 0, "a reply program is loaded and pinned"))
		goto out;
	ASSERT_EQ(links_of_prog(prog), 0, "not attached while idle");
	if (!ASSERT_TRUE(victim_start(&v), "victim"))
		goto out;
	if (ASSERT_OK(attach_kill_getppid(rt, v.pid, &id), "attach without an arm"))
		ASSERT_EQ(links_of_prog(prog), 0, "no arm: no reply program");
	ASSERT_OK(attach_armed(rt, &v), "an armed attach");
	ASSERT_EQ(links_of_prog(prog), 1, "attached before the arm is set");
	ASSERT_TRUE(reply_attached(rt), "the runtime says so");
	ASSERT_EQ(sf_runtime_idle_check(rt), 0, "the dispatcher stays: a task is confined");
	ASSERT_EQ(links_of_prog(prog), 1, "kept while the arm is undecided");
	ASSERT_EQ(victim_do(&v, 'B'), 1, "the next call takes the arm and is allowed");
	ASSERT_EQ(sf_runtime_idle_check(rt), 0, "the dispatcher stays");
	ASSERT_TRUE(links_become(prog, 0), "the arm decided, the reply program goes");
	ASSERT_FALSE(reply_attached(rt), "the runtime says so");
	ASSERT_TRUE(sf_runtime_dispatch_link_id(rt) > 0, "while the dispatcher judges on");
	ASSERT_EQ(victim_do(&v, 'A'), 0, "and the armed chain is in force");
out:
	victim_end(&v);
	if (rt)
		sf_runtime_close(rt);
	sf_runtime_uninstall_dir(pin);
}

/* A task that dies armed leaves sf_armed counting it: the reply programs
 * then go with the dispatcher (and, on the lsm tier, the LSM programs),
 * all their links handed over and closed together. */
TEST(runtime_detaches_the_reply_programs_with_the_dispatcher_when_an_armed_task_dies)
{
	struct sf_runtime *rt = NULL;
	struct victim v = { 0 };
	uint32_t reply, lsm;
	char pin[64];
	int disp;

	if (!fresh_pinned(&rt, pin, sizeof(pin), "reply-dies"))
		goto out;
	reply = reply_prog_id(pin);
	lsm = pinned_prog_id(pin, "sf_lsm_file_open"); /* 0 on the tracepoint tier */
	if (!ASSERT_TRUE(reply != 0, "a reply program is loaded and pinned") ||
	    !ASSERT_TRUE(victim_start(&v), "victim") ||
	    !ASSERT_OK(attach_armed(rt, &v), "an armed attach"))
		goto out;
	disp = sf_runtime_dispatch_link_id(rt);
	ASSERT_TRUE(disp > 0 && links_of_prog(reply) == 1, "dispatcher and reply program attached");
	victim_end(&v); /* killed in its read: no call took the arm */
	ASSERT_EQ(sf_runtime_idle_check(rt), 1, "nothing left to judge");
	ASSERT_TRUE(!link_exists(disp, false), "the dispatcher's link is gone");
	ASSERT_TRUE(links_become(reply, 0), "the reply program's link is gone");
	ASSERT_FALSE(reply_attached(rt), "the runtime says so");
	if (lsm)
		ASSERT_TRUE(links_become(lsm, 0), "the LSM programs' links are gone");
out:
	victim_end(&v);
	if (rt)
		sf_runtime_close(rt);
	sf_runtime_uninstall_dir(pin);
}
