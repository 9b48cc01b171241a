// SPDX-License-Identifier: GPL-2.0-only
/*
 * Threads born while a TSYNC attach moves their group (sf_runtime_attach()
 * with SF_ATTACH_TSYNC): they take the chain the group is moving to at
 * fork, from the sf_tsync map, whatever their creator has yet.
 *   - With SF_ATTACH_AT_EXEC (an admin's --all-threads --at-exec, the OCI
 *     hook's default) they wait for their exec as every other thread
 *     does: a process that never execs is never judged, however many
 *     threads it makes during the attach (Go runtimes, runc init). After
 *     its exec, its first call is judged.
 *   - An attach that fails puts them back too, on what their creator had:
 *     a failed attach leaves no thread on its chain.
 * One iteration: a fresh process whose creator threads keep making
 * threads, each of which waits and then calls getppid (which the filter
 * kills on); one attach; then the waiting threads call.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "bypass.h"
#include "daemon.h"
#include "progs.h"
#include "runtime.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define CREATORS 3
#define MAX_WAITING 24

struct board {
	volatile int waiting;   /* threads made, waiting to call */
	volatile int release;   /* they call now */
	volatile int called;    /* calls made and survived */
	volatile int stop;      /* creators stop */
	volatile int running;   /* creators started */
	struct bp_flags f;      /* the main thread's exec */
};

static struct board *B;
static char image[PATH_MAX];
static struct sock_filter kill_insns[4];

static void *waiter(void *arg)
{
	(void)arg;
	while (!B->release)
		usleep(100);
	bp_denied_call();
	__atomic_fetch_add(&B->called, 1, __ATOMIC_SEQ_CST);
	__atomic_fetch_sub(&B->waiting, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* Makes threads until told to stop, at most MAX_WAITING at a time. */
static void *creator(void *arg)
{
	(void)arg;
	__atomic_fetch_add(&B->running, 1, __ATOMIC_SEQ_CST);
	while (!B->stop) {
		pthread_t t;

		if (B->waiting >= MAX_WAITING || B->release) {
			usleep(50);
			continue;
		}
		__atomic_fetch_add(&B->waiting, 1, __ATOMIC_SEQ_CST);
		if (pthread_create(&t, NULL, waiter, NULL)) {
			__atomic_fetch_sub(&B->waiting, 1, __ATOMIC_SEQ_CST);
			continue;
		}
		pthread_detach(t);
	}
	return NULL;
}

/* The process under test: creators, then (exec) its own exec once its
 * threads have called, or (no exec) exit 0. */
static void victim(bool exec)
{
	char *argv[] = { image, NULL };
	pthread_t t;
	int i;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (i = 0; i < CREATORS; i++)
		if (pthread_create(&t, NULL, creator, NULL))
			_exit(4);
	while (!B->release || B->waiting > 0 || !B->stop)
		usleep(100);
	if (!exec)
		_exit(0);
	B->f.reached = 1;
	execve(image, argv, environ);
	_exit(3);
}

/* One iteration; fail: the attach is made to fail after its first pass. */
static void iteration(struct sf_runtime *rt, bool fail, struct bp_tally *t)
{
	struct sock_fprog p = progs_kill_on(kill_insns, 4, SYS_getppid);
	unsigned int flags = SF_ATTACH_TSYNC | (fail ? 0 : SF_ATTACH_AT_EXEC), id;
	struct bp_flags f = { 0 };
	pid_t v;
	int r, st;

	memset((void *)B, 0, sizeof(*B));
	v = fork();
	if (v == 0)
		victim(!fail);
	if (!ASSERT_TRUE(v > 0, "fork") || !bp_spin_until(&B->running, CREATORS, 10)) {
		kill(v, SIGKILL);
		waitpid(v, NULL, 0);
		return;
	}
	bp_spin_until(&B->waiting, MAX_WAITING / 2, 1);
	r = bp_attach(rt, v, &p, flags, &id, fail);
	if (fail)
		ASSERT_EQ(r, -EIO, "the attach fails as the test knob says");
	/* Threads born during the attach are among those waiting; a few
	 * more are born after it. */
	usleep(1000);
	B->release = 1;
	B->stop = 1;
	st = bp_wait(v, 30);
	if (fail) {
		bp_count(t, bp_judge_allowed(st), st,
			 "a process whose threads called getppid after a TSYNC attach failed");
		return;
	}
	/* Alive until its exec, judged from the first call after it. */
	f.reached = B->f.reached;
	f.survived = st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
	bp_count(t, bp_judge_denied(st, &f), st,
		 "a process whose threads were born during a TSYNC --at-exec attach, at its exec");
}

static void run_case(bool fail, const char *name, const char *what)
{
	struct sf_runtime *rt;
	struct bp_tally t = { 0 };
	long i, n = bp_iterations(200, 8);
	double t0 = bp_now();

	if (!sfd_find_test_prog("sf-first-call", image, sizeof(image)))
		return;
	B = bp_shared(sizeof(*B));
	rt = B ? bp_runtime_open(false) : NULL;
	if (!rt)
		return;
	if (fail)
		ASSERT_OK(sf_runtime_test_knob(rt, SF_TEST_TSYNC_FAIL, 1), "test knob");
	for (i = 0; i < n && !test_failed(); i++)
		iteration(rt, fail, &t);
	bp_report(name, what, &t, bp_now() - t0);
	sf_runtime_close(rt);
}

TEST(bypass_threads_born_during_a_tsync_at_exec_attach_wait_for_the_exec)
{
	run_case(false, "tsync-at-exec",
		 "a TSYNC --at-exec attach while threads make threads; they call getppid, "
		 "then the process execs and calls it");
}

TEST(bypass_a_failed_tsync_attach_leaves_no_thread_on_its_chain)
{
	run_case(true, "tsync-roll-back",
		 "a TSYNC attach that fails while threads make threads; they call getppid");
}
