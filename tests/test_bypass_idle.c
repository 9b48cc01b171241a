// SPDX-License-Identifier: GPL-2.0-only
/*
 * Bypass attempts through the idle check (sf_runtime_idle_check()), which
 * detaches the dispatcher once nothing can be judged. A decision made
 * from a walk over tasks in tid order can be outrun by a confined task
 * that moves behind the walk while it runs:
 *   - exec: a confined thread that is not its group's leader execs; the
 *     kernel gives it the leader's lower tid (de_thread()) and frees its
 *     own, so a walk that passed the leader (unconfined) before and
 *     reaches the thread's old tid after never sees it;
 *   - fork: a confined process forks a child whose pid the walk has
 *     passed already (after the pid counter wrapped) and exits before
 *     the walk reaches it.
 * Either way the dispatcher went while a confined task lived, and its
 * denied call ran. Each iteration stages one move against one check,
 * started at a random point of the walk, with other tasks between the
 * two tids (a thread pool here, any machine's processes in the wild) and
 * the CPUs busy: the task must die on its denied call whatever the check
 * decided. The tids are placed as a pid counter that wrapped would place
 * them (root: ns_last_pid and clone3's set_tid).
 */
#define _GNU_SOURCE
#include "harness.h"
#include "bypass.h"
#include "daemon.h"
#include "progs.h"
#include "runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define HOGS 2

struct board {
	volatile int go;       /* the check is about to start */
	volatile int checked;  /* it has returned */
	volatile int tid;      /* exec: the confined thread */
	volatile int child;    /* fork: the child's pid, or -errno */
	volatile int low;      /* the first tid to try for a low one */
	volatile long delay_ns;
	struct bp_flags f;
};

static struct board *B;
static char image[PATH_MAX];
static struct sock_filter kill_insns[4];

static long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000L + t.tv_nsec;
}

/* Waits for the check to start, then for the iteration's delay without
 * a system call (clock_gettime is the vDSO's). */
static void wait_for_the_walk(void)
{
	long until;

	while (!B->go)
		sched_yield();
	until = now_ns() + B->delay_ns;
	while (now_ns() < until)
		;
}

static bool write_file(const char *path, long v)
{
	char s[32];
	int fd = open(path, O_WRONLY), n = snprintf(s, sizeof(s), "%ld", v);
	bool ok = fd >= 0 && write(fd, s, (size_t)n) == n;

	if (fd >= 0)
		close(fd);
	return ok;
}

static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* A process of n threads asleep: tasks between two tids. */
static pid_t start_padding(int n)
{
	int p[2];
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		char c;
		int i;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(p[1]);
		for (i = 0; i < n - 1; i++) {
			pthread_t t;

			if (pthread_create(&t, NULL, sleeper, NULL))
				break;
		}
		while (read(p[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(p[0]);
	return pid < 0 ? -1 : pid;
}

static pid_t start_hog(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			__asm__ volatile("" ::: "memory");
	}
	return pid;
}

/* clone3 with set_tid: a child at the first free tid from B->low on. */
static long clone_low(void (*fn)(void))
{
	int i;

	for (i = 0; i < 200; i++) {
		pid_t tid = B->low + i;
		struct clone_args a = { .exit_signal = SIGCHLD,
					.set_tid = (uintptr_t)&tid, .set_tid_size = 1 };
		long r = bp_clone3_run(&a, sizeof(a), fn);

		if (r != -EEXIST)
			return r;
	}
	return -EEXIST;
}

/* ---- exec: a confined thread takes over its leader's lower tid ---------- */

static void *exec_thread(void *arg)
{
	char *argv[] = { image, NULL };

	(void)arg;
	B->tid = (int)syscall(SYS_gettid);
	wait_for_the_walk();
	B->f.reached = 1;
	execve(image, argv, environ);
	_exit(3);
}

static void exec_victim(void)
{
	pthread_t t;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (pthread_create(&t, NULL, exec_thread, NULL))
		_exit(4);
	for (;;)
		pause();
}

/* ---- fork: a confined process's child takes a tid the walk has passed -- */

static void fork_child(void)
{
	while (!B->checked)
		sched_yield();
	B->f.reached = 1;
	bp_denied_call();
	B->f.survived = 1;
	_exit(0);
}

static void fork_victim(void)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	wait_for_the_walk();
	B->child = (int)clone_low(fork_child);
	_exit(0);
}

static void *reap(void *arg)
{
	int st;

	waitpid((pid_t)(intptr_t)arg, &st, 0);
	return NULL;
}

/* ---- the cases ------------------------------------------------------------ */

static int no_op(void *ctx, const struct sf_task_info *t)
{
	(void)ctx;
	(void)t;
	return 0;
}

static double walk_ms(struct sf_runtime *rt)
{
	double t0 = bp_now(), best = 1e9;
	int i;

	for (i = 0; i < 3; i++) {
		t0 = bp_now();
		sf_runtime_for_each_task(rt, no_op, NULL);
		if ((bp_now() - t0) * 1e3 < best)
			best = (bp_now() - t0) * 1e3;
	}
	return best;
}

enum shape { SHAPE_EXEC, SHAPE_FORK };

/* One iteration: the victim moves while the check runs; then its denied
 * call must kill it. */
static void iteration(struct sf_runtime *rt, enum shape shape, double walk, struct bp_tally *t)
{
	struct sock_fprog p = progs_kill_on(kill_insns, 4, SYS_getppid);
	struct bp_flags f = { 0 };
	pthread_t reaper;
	pid_t v, target;
	unsigned int id;
	int st;

	memset((void *)B, 0, offsetof(struct board, low));
	B->f.reached = B->f.survived = 0;
	B->delay_ns = (long)(drand48() * walk * 1.5e6);
	if (shape == SHAPE_EXEC) {
		v = (pid_t)clone_low(exec_victim);
		if (!ASSERT_TRUE(v > 0, "a victim at a low tid"))
			return;
		if (!bp_spin_until(&B->tid, 1, 10)) {
			ASSERT_TRUE(false, "the victim's thread runs");
			kill(v, SIGKILL);
			waitpid(v, NULL, 0);
			return;
		}
		target = B->tid;
	} else {
		v = fork();
		if (v == 0)
			fork_victim();
		target = v;
	}
	if (bp_attach(rt, target, &p, 0, &id, false)) {
		kill(v, SIGKILL);
		waitpid(v, NULL, 0);
		return;
	}
	if (shape == SHAPE_FORK)
		pthread_create(&reaper, NULL, reap, (void *)(intptr_t)v);
	B->go = 1;
	sf_runtime_idle_check(rt);
	B->checked = 1;
	if (shape == SHAPE_EXEC) {
		st = bp_wait(v, 20);
		f.reached = B->f.reached;
		f.survived = st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
		bp_count(t, bp_judge_denied(st, &f), st,
			 "an image exec'd from a confined thread, on its denied call");
		return;
	}
	pthread_join(reaper, NULL);
	if (!ASSERT_TRUE(B->child > 0, "the confined process forked a child at a low tid"))
		return;
	st = bp_wait(B->child, 20);
	bp_count(t, bp_judge_denied(st, (const struct bp_flags *)&B->f), st,
		 "the child of a confined process, on its denied call");
}

static void race(enum shape shape, const char *name, const char *what)
{
	struct sf_runtime *rt;
	struct bp_tally t = { 0 };
	struct sf_counters c;
	pid_t pad = -1, hogs[HOGS];
	long i, n = bp_iterations(1000, 24), base;
	int npad = test_is_emulated() ? 600 : 3000;
	double t0 = bp_now(), walk;

	if (!test_need_root("ns_last_pid, clone3 set_tid"))
		return;
	if (!sfd_find_test_prog("sf-first-call", image, sizeof(image)))
		return;
	B = bp_shared(sizeof(*B));
	rt = B ? bp_runtime_open(false) : NULL;
	if (!rt)
		return;
	/* The low tids just below the pool, the pool, and everything the
	 * test makes afterwards above it: the walk meets them in that order. */
	base = 16384;
	if (!write_file("/proc/sys/kernel/ns_last_pid", base - 1)) {
		test_skip("/proc/sys/kernel/ns_last_pid is not writable here");
		sf_runtime_close(rt);
		return;
	}
	B->low = (int)(base - 150);
	pad = start_padding(npad);
	ASSERT_TRUE(pad > 0, "a pool of sleeping threads");
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	for (i = 0; i < HOGS; i++)
		hogs[i] = start_hog();
	usleep(200000);
	{
		/* Calibrated while something is attached: the walk the old
		 * check made. */
		struct sock_fprog p = progs_kill_on(kill_insns, 4, SYS_getppid);
		pid_t w = fork();
		unsigned int id;

		if (w == 0) {
			pause();
			_exit(0);
		}
		bp_attach(rt, w, &p, 0, &id, false);
		walk = walk_ms(rt);
		kill(w, SIGKILL);
		waitpid(w, NULL, 0);
	}
	test_log("%s: a walk over every task takes %.2f ms here\n", name, walk);
	srand48((long)getpid());
	for (i = 0; i < n && !test_failed(); i++)
		iteration(rt, shape, walk, &t);
	for (i = 0; i < HOGS; i++)
		if (hogs[i] > 0) {
			kill(hogs[i], SIGKILL);
			waitpid(hogs[i], NULL, 0);
		}
	if (pad > 0) {
		kill(pad, SIGKILL);
		waitpid(pad, NULL, 0);
	}
	bp_report(name, what, &t, bp_now() - t0);
	/* Every victim is gone: the count is back to 0 and the check
	 * detaches, so the counting never drifts into keeping it forever. */
	sf_runtime_counters(rt, &c);
	ASSERT_EQ((long)c.confined, 0L, "no task counted once every victim is gone");
	ASSERT_EQ(sf_runtime_idle_check(rt), 1, "the idle check detaches then");
	sf_runtime_close(rt);
}

TEST(bypass_an_exec_from_a_confined_thread_never_outruns_the_idle_check)
{
	race(SHAPE_EXEC, "idle-exec",
	     "a confined thread execs, taking its leader's lower tid, while the idle check runs");
}

TEST(bypass_a_fork_to_a_passed_pid_never_outruns_the_idle_check)
{
	race(SHAPE_FORK, "idle-fork",
	     "a confined process forks to a pid the idle check passed, and exits");
}
