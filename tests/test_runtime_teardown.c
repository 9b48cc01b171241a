// SPDX-License-Identifier: GPL-2.0-only
/*
 * Tearing down, restarting and changing filters while confined tasks are
 * busy in system calls. Nothing may kill a task that should live:
 *   - after sf_runtime_uninstall() (a fresh pinned runtime, or one that
 *     adopted the pins) and after closing an unpinned runtime, every task
 *     makes the call its filter denied, and lives;
 *   - while the runtime's owner is SIGKILLed in the middle of attaching,
 *     replacing and detaching, and the next owner adopts the pins, every
 *     task stays alive and confined;
 *   - while a task's filters are replaced and detached again and again, it
 *     never dies for a call its filters allow.
 *
 * Spinners are forked children that call getgid and sched_yield until told
 * to make one last call, then exit 0. The filters deny getppid (the last
 * call) or calls no spinner makes.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "progs.h"
#include "spinners.h"
#include "runtime.h"
#include "c2e.h"

#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define N_SPIN 20

static struct sock_filter deny_insns[4][4];

/* Kills on syscall nr, allows the rest (which: one of 4 filters at once). */
static struct sock_fprog deny(int which, int nr)
{
	return progs_kill_on(deny_insns[which], 4, nr);
}

static int attach(struct sf_runtime *rt, pid_t tid, struct sock_fprog p, uint32_t *id)
{
	struct c2e_error e;

	return sf_runtime_attach(rt, tid, &p, 0, id, &e);
}

static bool force_tracepoint;

static const struct sf_runtime_opts *opts(void)
{
	static struct sf_runtime_opts o;

	o.verbose = getenv("SF_VERBOSE") != NULL;
	o.force_tracepoint = force_tracepoint;
	return &o;
}

/* A child confined like the spinners that makes the denied call at once:
 * proof that the filter is in force. 1 when it was killed. */
static int canary_killed(struct sf_runtime *rt, int nr)
{
	int go[2], status;
	pid_t p;
	char c = 'g';

	if (pipe(go))
		return -1;
	p = fork();
	if (p == 0) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(3);
		syscall(nr);
		_exit(0);
	}
	close(go[0]);
	if (p < 0 || attach(rt, p, deny(0, nr), NULL)) {
		close(go[1]);
		if (p > 0) {
			kill(p, SIGKILL);
			waitpid(p, NULL, 0);
		}
		return -1;
	}
	if (write(go[1], &c, 1) != 1)
		c = 0;
	close(go[1]);
	waitpid(p, &status, 0);
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

/* ---- uninstall ----------------------------------------------------------- */

enum teardown { FRESH_UNINSTALL, ADOPTED_UNINSTALL, UNPINNED_CLOSE, N_TEARDOWNS };

static const char *teardown_name[] = {
	"uninstall by the runtime that pinned",
	"uninstall by a runtime that adopted the pins",
	"close of an unpinned runtime",
};

static bool one_teardown(enum teardown how, const char *pin, int round)
{
	struct sf_runtime *rt = NULL;
	struct spinners s = { 0 };
	bool adopted = false, ok = false;
	int i, killed;

	if (!ASSERT_TRUE(spinners_start(&s, N_SPIN), "spinners"))
		return false;
	if (how == UNPINNED_CLOSE) {
		if (!ASSERT_OK(sf_runtime_open(&rt, opts()), "open"))
			goto out;
	} else if (!ASSERT_OK(sf_runtime_open_pinned(&rt, opts(), pin, &adopted), "open pinned")) {
		goto out;
	}
	for (i = 0; i < s.n; i++)
		if (!ASSERT_OK(attach(rt, s.pid[i], deny(0, SYS_getppid), NULL), "attach"))
			goto out;
	if (!ASSERT_EQ(canary_killed(rt, SYS_getppid), 1, "the filter is in force"))
		goto out;
	if (how == ADOPTED_UNINSTALL) {
		sf_runtime_close(rt);
		rt = NULL;
		if (!ASSERT_OK(sf_runtime_open_pinned(&rt, opts(), pin, &adopted), "adopt") ||
		    !ASSERT_TRUE(adopted, "adopted"))
			goto out;
	}
	if (how == UNPINNED_CLOSE) {
		sf_runtime_close(rt);
		rt = NULL;
	} else if (!ASSERT_OK(sf_runtime_uninstall(rt), "uninstall")) {
		goto out;
	}
	if (!ASSERT_EQ(spinners_dead(&s), 0, "spinners alive through the teardown")) {
		test_log("round %d: %s\n", round, teardown_name[how]);
		goto out;
	}
	killed = spinners_finish(&s, 0, s.n, SYS_getppid);
	ok = ASSERT_EQ(killed, 0, "spinners killed by the formerly denied call");
	if (!ok)
		test_log("round %d: %s\n", round, teardown_name[how]);
out:
	spinners_kill(&s);
	sf_runtime_close(rt);
	sf_runtime_uninstall_dir(pin);
	return ok;
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) / 1e9;
}

/*
 * 50 rounds, the three teardowns in turn. Under emulation an lsm-tier
 * teardown takes a minute (6.1 detaches each of ~60 LSM programs from an
 * ftrace-managed trampoline, waiting for RCU-tasks grace periods that busy
 * tasks stretch), so there each teardown runs once on the lsm tier and 3
 * more rounds on the tracepoint tier, which keeps make test in its budget.
 */
TEST(uninstalling_under_load_never_kills_a_task_and_unconfines_every_one)
{
	int round, rounds = test_is_emulated() ? 6 : 50;
	struct timespec t0;
	char pin[64];

	clock_gettime(CLOCK_MONOTONIC, &t0);
	snprintf(pin, sizeof(pin), "/sys/fs/bpf/sfilter-teardown-%d", getpid());
	sf_runtime_uninstall_dir(pin);
	for (round = 0; round < rounds; round++) {
		force_tracepoint = test_is_emulated() && round >= N_TEARDOWNS;
		if (!one_teardown(round % N_TEARDOWNS, pin, round))
			break;
		if (round % 10 == 9 || test_is_emulated())
			test_log("%d rounds of %d busy tasks, %.1f s\n", round + 1, N_SPIN,
				 seconds_since(&t0));
	}
	force_tracepoint = false;
}

/* ---- restart ------------------------------------------------------------- */

/* The owner: adopts, then attaches, replaces and detaches extra filters
 * (denying calls no spinner makes) on random spinners until SIGKILLed. */
static void owner_body(const char *pin, const struct spinners *s, int wr)
{
	struct sf_runtime *rt = NULL;
	bool adopted = false;
	unsigned int seed = (unsigned int)getpid();
	int extra[] = { SYS_getuid, SYS_geteuid, SYS_getegid, SYS_getpgrp };

	if (sf_runtime_open_pinned(&rt, opts(), pin, &adopted) || !adopted)
		_exit(1);
	if (write(wr, "a", 1) != 1)
		_exit(2);
	for (;;) {
		pid_t t = s->pid[rand_r(&seed) % s->n];
		uint32_t id;
		int nr = extra[rand_r(&seed) % 4];

		if (attach(rt, t, deny(1 + rand_r(&seed) % 3, nr), &id))
			continue;
		if (rand_r(&seed) % 2) {
			struct sock_fprog p = deny(3, extra[rand_r(&seed) % 4]);

			sf_runtime_replace(rt, id, &p, NULL);
		} else {
			sf_runtime_detach(rt, id);
		}
	}
}

TEST(restarting_the_owner_under_load_keeps_every_task_alive_and_confined)
{
	struct sf_runtime *rt = NULL;
	struct spinners s = { 0 };
	bool adopted = true;
	char pin[64];
	int round, i, half, rounds = test_is_emulated() ? 10 : 40;
	struct timespec ts;

	snprintf(pin, sizeof(pin), "/sys/fs/bpf/sfilter-restart-%d", getpid());
	sf_runtime_uninstall_dir(pin);
	if (!ASSERT_TRUE(spinners_start(&s, N_SPIN), "spinners") ||
	    !ASSERT_OK(sf_runtime_open_pinned(&rt, opts(), pin, &adopted), "open pinned"))
		goto out;
	for (i = 0; i < s.n; i++)
		if (!ASSERT_OK(attach(rt, s.pid[i], deny(0, SYS_getppid), NULL), "attach"))
			goto out;
	sf_runtime_close(rt);
	rt = NULL;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	srand((unsigned int)ts.tv_nsec);
	for (round = 0; round < rounds; round++) {
		int sync[2];
		pid_t owner;
		char c;

		if (!ASSERT_OK(pipe(sync), "pipe"))
			goto out;
		owner = fork();
		if (owner == 0) {
			close(sync[0]);
			owner_body(pin, &s, sync[1]);
		}
		close(sync[1]);
		if (!ASSERT_EQ(read(sync[0], &c, 1), 1, "the owner adopted the pins")) {
			close(sync[0]);
			waitpid(owner, NULL, 0);
			goto out;
		}
		close(sync[0]);
		/* Anywhere in its work: between 0 and 30 ms in. */
		usleep(rand() % 30000);
		kill(owner, SIGKILL);
		waitpid(owner, NULL, 0);
		if (!ASSERT_EQ(spinners_dead(&s), 0, "spinners alive after the owner died")) {
			test_log("round %d\n", round);
			goto out;
		}
	}
	test_log("%d owners killed mid-work\n", rounds);

	/* Still confined by the first filter: the first half dies on it. */
	if (!ASSERT_OK(sf_runtime_open_pinned(&rt, opts(), pin, &adopted), "last adopt") ||
	    !ASSERT_TRUE(adopted, "adopted"))
		goto out;
	half = s.n / 2;
	ASSERT_EQ(spinners_finish(&s, 0, half, SYS_getppid), half,
		  "the first half died on the denied call");
	/* Then uninstalled: the second half lives through it. */
	ASSERT_OK(sf_runtime_uninstall(rt), "uninstall");
	ASSERT_EQ(spinners_finish(&s, half, s.n, SYS_getppid), 0,
		  "the second half lived after the uninstall");
out:
	spinners_kill(&s);
	sf_runtime_close(rt);
	sf_runtime_uninstall_dir(pin);
}

/* ---- replace and detach -------------------------------------------------- */

TEST(replacing_and_detaching_under_load_never_kills_for_an_allowed_call)
{
	struct sf_runtime *rt = NULL;
	struct spinners s = { 0 };
	uint32_t id = 0, base = 0;
	int round, i, rounds = 50;

	if (!ASSERT_TRUE(spinners_start(&s, N_SPIN), "spinners") ||
	    !ASSERT_OK(sf_runtime_open(&rt, opts()), "open"))
		goto out;
	for (i = 0; i < s.n; i++)
		if (!ASSERT_OK(attach(rt, s.pid[i], deny(0, SYS_getppid), &base), "attach"))
			goto out;
	for (round = 0; round < rounds; round++) {
		struct sock_fprog p = deny(1 + round % 2, round % 2 ? SYS_getuid : SYS_geteuid);

		/* A second filter on every spinner, replaced, then detached. */
		for (i = 0; i < s.n; i++)
			if (!ASSERT_OK(attach(rt, s.pid[i], deny(3, SYS_getpgrp), &id), "attach"))
				goto out;
		if (!ASSERT_OK(sf_runtime_replace(rt, id, &p, NULL), "replace") ||
		    !ASSERT_OK(sf_runtime_detach(rt, id), "detach"))
			goto out;
		if (!ASSERT_EQ(spinners_dead(&s), 0, "spinners alive")) {
			test_log("round %d\n", round);
			goto out;
		}
	}
	test_log("%d rounds of attach, replace and detach on %d busy tasks\n", rounds, N_SPIN);
	/* The base filter stayed in force through all of it. */
	ASSERT_EQ(spinners_finish(&s, 0, s.n, SYS_getppid), N_SPIN, "the base filter still kills");
out:
	spinners_kill(&s);
	sf_runtime_close(rt);
}
