// SPDX-License-Identifier: GPL-2.0-only
/*
 * A chain loaded linear first, and its searched form swapped in later
 * (opts.linear_first, sf_runtime_upgrade_chains()): through the real
 * kernel, the chain judges alike before and after the swap; tasks busy in
 * system calls during it are neither killed for an allowed call nor let
 * through a denied one (the slot is never empty); a searched form that
 * fails to load leaves the linear one in force; a filter with no allowlist
 * long enough to search has one form only; and a runtime adopting the pins
 * swaps what the state file says is still linear, and only that.
 *
 * The filter allows every x86-64 number below ALLOW_TOP but getppid, which
 * kills: 400-odd keys, a binary search in the searched form. The
 * translator's own tests compare both forms with the interpreter on every
 * input (test_verdicts.c); here a victim's getuid and getgid must live and
 * its getppid must die.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "sockfilter.h"
#include "spinners.h"
#include "victim.h"
#include "runtime.h"
#include "c2e.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ALLOW_TOP 440
#define LIST_MAX  (4 + 2 * ALLOW_TOP + 2)

/* The allowlist as libseccomp lays it out (a "jeq; ret ALLOW" pair a
 * number), with extra (when >= ALLOW_TOP) killed too, which makes each
 * value a filter of its own. */
static struct sock_fprog allowlist(struct sock_filter *f, int extra)
{
	int n = 0, nr;

	f[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, 4);
	f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, C2E_AUDIT_ARCH_X86_64, 1, 0);
	f[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	f[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, 0);
	if (extra >= ALLOW_TOP) {
		f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)extra, 0, 1);
		f[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	}
	for (nr = 0; nr < ALLOW_TOP; nr++) {
		if (nr == SYS_getppid)
			continue;
		f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr, 0, 1);
		f[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	}
	f[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	return (struct sock_fprog){ (unsigned short)n, f };
}

/* As sfilterd opens it, and with the action tables (a cache of constant
 * verdicts the dispatcher reads before any chain runs) never filled here:
 * every call runs the chain program, the form under test. */
static struct sf_runtime *open_linear_first(const char *pin, bool *adopted)
{
	struct sf_runtime_opts o = { .verbose = getenv("SF_VERBOSE") != NULL,
				     .force_tracepoint = test_is_emulated() != 0,
				     .defer_tables = true, .linear_first = true };
	struct sf_runtime *rt = NULL;
	int err = pin ? sf_runtime_open_pinned(&rt, &o, pin, adopted) : sf_runtime_open(&rt, &o);

	return ASSERT_OK(err, "open with linear_first") ? rt : NULL;
}

static int attach(struct sf_runtime *rt, pid_t pid, const struct sock_fprog *p,
		  unsigned int flags)
{
	struct c2e_error e;

	return sf_runtime_attach(rt, pid, p, flags, NULL, &e);
}

/* v lives through getuid and getgid: 1, or what victim_do() said. */
static int allowed_calls_live(struct victim *v)
{
	int r = victim_do(v, 'B');

	return r == 1 ? victim_do(v, 'C') : r;
}

/* A fresh victim confined by p (already loaded: SF_ATTACH_LOADED) dies on
 * getppid: 1 when it did. */
static int fresh_victim_dies(struct sf_runtime *rt, const struct sock_fprog *p)
{
	struct victim v = { 0 };
	int r = -1;

	if (!victim_start(&v))
		return -1;
	if (attach(rt, v.pid, p, SF_ATTACH_LOADED) == 0)
		r = victim_do(&v, 'A') == 0;
	victim_end(&v);
	return r;
}

/* A runtime (linear_first), v confined by p and judging as p says, then
 * one upgrade (search_fail: its load fails) that settles the chain: the
 * runtime, or NULL (v ended, the test failed). */
static struct sf_runtime *attach_and_upgrade(const struct sock_fprog *p, bool search_fail,
					     struct victim *v, struct sf_upgrades *u)
{
	struct sf_runtime *rt = open_linear_first(NULL, NULL);

	if (!rt)
		return NULL;
	sf_runtime_test_knob(rt, SF_TEST_SEARCH_FAIL, search_fail);
	if (ASSERT_TRUE(victim_start(v), "victim") &&
	    ASSERT_OK(attach(rt, v->pid, p, 0), "attach (linear form)") &&
	    ASSERT_EQ(allowed_calls_live(v), 1, "linear: getuid and getgid allowed") &&
	    ASSERT_EQ(fresh_victim_dies(rt, p), 1, "linear: getppid kills") &&
	    ASSERT_EQ(sf_runtime_upgrade_chains(rt, 0, u), 1, "one chain settled"))
		return rt;
	victim_end(v);
	sf_runtime_close(rt);
	return NULL;
}

TEST(a_chain_loaded_linear_first_judges_the_same_once_its_searched_form_is_swapped_in)
{
	static struct sock_filter f[LIST_MAX];
	struct sock_fprog p = allowlist(f, 0);
	struct sf_upgrades u = { 0 };
	struct victim v = { 0 };
	struct sf_runtime *rt = attach_and_upgrade(&p, false, &v, &u);

	if (!rt)
		return;
	ASSERT_EQ(u.swapped, 1, "its searched form swapped in");
	ASSERT_EQ(sf_runtime_upgrade_chains(rt, 0, &u), 0, "nothing left to upgrade");
	ASSERT_EQ(allowed_calls_live(&v), 1, "searched: getuid and getgid still allowed");
	ASSERT_EQ(fresh_victim_dies(rt, &p), 1, "searched: getppid still kills");
	ASSERT_EQ(victim_child_do(&v, 'A'), 0, "searched: a child forked since dies on getppid");
	ASSERT_EQ(victim_do(&v, 'A'), 0, "searched: the victim itself dies on getppid");
	victim_end(&v);
	sf_runtime_close(rt);
}

TEST(busy_tasks_are_neither_killed_nor_let_through_while_their_chain_is_swapped)
{
	static struct sock_filter f[LIST_MAX];
	int rounds = test_is_emulated() ? 2 : 6, n = test_is_emulated() ? 4 : 16;
	struct sf_upgrades u = { 0 };
	struct spinners s = { 0 };
	struct sf_runtime *rt = open_linear_first(NULL, NULL);
	int r, i;

	if (!rt)
		return;
	if (!ASSERT_TRUE(spinners_start(&s, n), "spinners"))
		goto out;
	/* Each round stacks a new filter: a new chain, loaded linear, then
	 * swapped while every spinner is in and out of system calls. */
	for (r = 0; r < rounds && !test_failed(); r++) {
		struct sock_fprog p = allowlist(f, ALLOW_TOP + r);

		for (i = 0; i < s.n; i++)
			if (!ASSERT_OK(attach(rt, s.pid[i], &p, 0), "attach"))
				goto out;
		ASSERT_EQ(sf_runtime_upgrade_chains(rt, 0, &u), 1, "this round's chain upgraded");
		ASSERT_EQ(spinners_dead(&s), 0, "no spinner died for an allowed call");
	}
	ASSERT_EQ(u.swapped, rounds, "every round's chain swapped");
	ASSERT_EQ(spinners_finish(&s, 0, s.n, SYS_getppid), s.n,
		  "every spinner killed by the denied call: none let through");
out:
	spinners_kill(&s);
	sf_runtime_close(rt);
}

TEST(a_chain_whose_searched_form_fails_to_load_keeps_its_linear_form_in_force)
{
	static struct sock_filter f[LIST_MAX];
	struct sock_fprog p = allowlist(f, 0);
	struct sf_upgrades u = { 0 };
	struct victim v = { 0 };
	struct sf_runtime *rt = attach_and_upgrade(&p, true, &v, &u);

	if (!rt)
		return;
	ASSERT_EQ(u.kept, 1, "its linear form kept");
	ASSERT_EQ(u.swapped, 0, "nothing swapped");
	sf_runtime_test_knob(rt, SF_TEST_SEARCH_FAIL, 0);
	ASSERT_EQ(sf_runtime_upgrade_chains(rt, 0, &u), 0, "not retried");
	ASSERT_EQ(allowed_calls_live(&v), 1, "getuid and getgid still allowed");
	ASSERT_EQ(victim_do(&v, 'A'), 0, "getppid still kills");
	victim_end(&v);
	sf_runtime_close(rt);
}

TEST(a_chain_without_a_long_allowlist_has_one_form_and_nothing_to_swap)
{
	struct sock_filter f[] = {
		STMT(BPF_LD | BPF_W | BPF_ABS, 0),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog p = { 4, f };
	struct sf_upgrades u = { 0 };
	struct victim v = { 0 };
	struct sf_runtime *rt = attach_and_upgrade(&p, false, &v, &u);

	if (!rt)
		return;
	ASSERT_EQ(u.same, 1, "its two forms are one program");
	ASSERT_EQ(allowed_calls_live(&v), 1, "getuid and getgid allowed");
	ASSERT_EQ(victim_do(&v, 'A'), 0, "getppid kills");
	victim_end(&v);
	sf_runtime_close(rt);
}

TEST(after_a_restart_the_adopted_linear_chain_is_swapped_and_judges_the_same)
{
	static struct sock_filter f[LIST_MAX];
	struct sock_fprog p = allowlist(f, 0);
	struct sf_upgrades u = { 0 };
	struct victim v = { 0 };
	struct sf_runtime *rt;
	bool adopted = false;
	char pin[64];

	snprintf(pin, sizeof(pin), "/sys/fs/bpf/sfilter-upgrade-%d", getpid());
	sf_runtime_uninstall_dir(pin);
	rt = open_linear_first(pin, &adopted);
	if (!rt)
		return;
	if (!ASSERT_TRUE(victim_start(&v), "victim") ||
	    !ASSERT_OK(attach(rt, v.pid, &p, 0), "attach (linear form)"))
		goto out;
	/* Gone before the swap: the pins keep the linear form in force. */
	sf_runtime_close(rt);
	ASSERT_EQ(allowed_calls_live(&v), 1, "no runtime: getuid and getgid allowed");
	rt = open_linear_first(pin, &adopted);
	if (!rt || !ASSERT_TRUE(adopted, "the pins adopted"))
		goto out;
	ASSERT_EQ(sf_runtime_upgrade_chains(rt, 0, &u), 1, "the adopted chain upgraded");
	ASSERT_EQ(u.swapped, 1, "its searched form swapped in");
	ASSERT_EQ(allowed_calls_live(&v), 1, "swapped: getuid and getgid allowed");
	ASSERT_EQ(fresh_victim_dies(rt, &p), 1, "swapped: getppid kills");
	/* The state file says the slot holds the searched form now. */
	sf_runtime_close(rt);
	rt = open_linear_first(pin, &adopted);
	if (!rt || !ASSERT_TRUE(adopted, "adopted again"))
		goto out;
	ASSERT_EQ(sf_runtime_upgrade_chains(rt, 0, &u), 0, "nothing left to upgrade");
	ASSERT_EQ(victim_do(&v, 'A'), 0, "getppid kills");
out:
	victim_end(&v);
	if (rt)
		sf_runtime_uninstall(rt);
	sf_runtime_close(rt);
	sf_runtime_uninstall_dir(pin);
}
