// SPDX-License-Identifier: GPL-2.0-only
/*
 * Bypass attempts through threads created while a filter is being
 * attached (the runtime, sf_runtime_attach()). One iteration: a fresh
 * process whose threads are creating threads, one attach of a filter that
 * kills on getppid, then one getppid in a thread; the process must die
 * there, and must not die before.
 *
 * Without TSYNC the filter is the target thread's alone, as seccomp(2)
 * installs it: a thread that thread creates once the attach has returned
 * is born with it. The target is the main thread or another one (which on
 * 6.1, without PIDFD_THREAD, takes its chain through the task iterator).
 * With TSYNC every thread is judged once the attach has returned: one that
 * was blocked in a system call throughout, one of a relay that creates
 * threads all along (never from the thread attached), and one that such a
 * relay creates afterwards.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "bypass.h"
#include "progs.h"
#include "runtime.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define RELAYS 4

enum caller {
	CALLER_NEW_FROM_TARGET, /* a thread the attached thread creates afterwards */
	CALLER_SLEEPER,         /* blocked in read() throughout the attach */
	CALLER_RELAY,           /* a relay thread alive when the attach returns */
	CALLER_NEW_FROM_RELAY,  /* a thread a relay creates afterwards */
};

struct board {
	volatile int created;   /* threads created so far */
	volatile int attached;  /* the attach has returned */
	volatile int claimed;   /* a thread has taken the denied call */
	volatile int target;    /* the tid to attach to */
	volatile int caller;    /* enum caller */
	struct bp_flags f;
};

static struct board *B;
static int sleeper_fd = -1;

static void denied_then_exit(void)
{
	B->f.reached = 1;
	bp_denied_call();
	B->f.survived = 1;
	_exit(0);
}

static void *caller_thread(void *arg)
{
	(void)arg;
	denied_then_exit();
	return NULL;
}

static void *churn_thread(void *arg)
{
	(void)arg;
	bp_allowed_call();
	return NULL;
}

static void spawn(void *(*fn)(void *), bool join)
{
	pthread_t t;

	while (pthread_create(&t, NULL, fn, NULL) != 0)
		sched_yield();
	__atomic_fetch_add(&B->created, 1, __ATOMIC_SEQ_CST);
	if (join)
		pthread_join(t, NULL);
	else
		pthread_detach(t);
}

/* Creates and joins threads until the attach has returned, then creates
 * the caller: a thread born after the attach. */
static void *creator(void *arg)
{
	(void)arg;
	B->target = (int)syscall(SYS_gettid);
	while (!__atomic_load_n(&B->attached, __ATOMIC_ACQUIRE))
		spawn(churn_thread, true);
	spawn(caller_thread, true);
	return NULL;
}

/* A relay link: one allowed call, then either the denied call (the first
 * relay to see the attach returned, when relays make it) or the next link. */
static void *relay(void *arg)
{
	(void)arg;
	bp_allowed_call();
	if (__atomic_load_n(&B->attached, __ATOMIC_ACQUIRE) &&
	    (B->caller == CALLER_RELAY || B->caller == CALLER_NEW_FROM_RELAY) &&
	    !__atomic_exchange_n(&B->claimed, 1, __ATOMIC_SEQ_CST)) {
		if (B->caller == CALLER_RELAY)
			denied_then_exit();
		spawn(caller_thread, false);
		return NULL;
	}
	spawn(relay, false);
	return NULL;
}

static void *sleeper(void *arg)
{
	char c;

	(void)arg;
	if (read(sleeper_fd, &c, 1) == 1)
		denied_then_exit();
	return NULL;
}

/* The process under test. */
static void process_body(bool tsync, bool from_leader)
{
	pthread_t t;
	int i;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (tsync) {
		B->target = getpid();
		pthread_create(&t, NULL, sleeper, NULL);
		for (i = 0; i < RELAYS; i++)
			spawn(relay, false);
		/* The leader churns too, until it is told to stop. */
		while (!__atomic_load_n(&B->attached, __ATOMIC_ACQUIRE))
			spawn(churn_thread, true);
		for (;;)
			pause();
	}
	if (from_leader) {
		creator(NULL);
	} else {
		pthread_create(&t, NULL, creator, NULL);
		pthread_join(t, NULL);
	}
	_exit(3); /* the caller neither died nor exited */
}

static struct sock_filter kill_getppid[4];

/* One iteration; false when the test cannot go on. */
static bool one(struct sf_runtime *rt, struct bp_tally *t, bool tsync, int i,
		unsigned int *seed)
{
	struct sock_fprog prog = progs_kill_on(kill_getppid, 4, SYS_getppid);
	bool from_leader = i % 2 == 0;
	int p[2], st, err;
	char what[96];
	pid_t pid;

	memset((void *)B, 0, sizeof(*B));
	B->caller = tsync ? CALLER_SLEEPER + i % 3 : CALLER_NEW_FROM_TARGET;
	if (!ASSERT_OK(pipe2(p, O_CLOEXEC), "pipe"))
		return false;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(p[1]);
		sleeper_fd = p[0];
		process_body(tsync, from_leader);
	}
	close(p[0]);
	if (!ASSERT_TRUE(pid > 0, "fork")) {
		close(p[1]);
		return false;
	}
	/* Attach while threads are being created: a few exist already, and
	 * the attach starts at a random point of what follows. */
	if (!ASSERT_TRUE(bp_spin_until(&B->created, 3, 10), "the process creates threads")) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		close(p[1]);
		return false;
	}
	usleep(rand_r(seed) % 300);
	err = bp_attach(rt, B->target, &prog, tsync ? SF_ATTACH_TSYNC : 0, NULL, false);
	__atomic_store_n(&B->attached, 1, __ATOMIC_RELEASE);
	if (B->caller == CALLER_SLEEPER && write(p[1], "g", 1) != 1)
		test_fail(__FILE__, __LINE__, "wake the sleeper: %s", strerror(errno));
	close(p[1]);
	if (err) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return false;
	}
	st = bp_wait(pid, 10);
	snprintf(what, sizeof(what), "iteration %d (%s, caller %d, target %s)", i,
		 tsync ? "TSYNC" : "no TSYNC", B->caller,
		 from_leader || tsync ? "the leader" : "another thread");
	bp_count(t, bp_judge_denied(st, &B->f), st, what);
	return !test_failed();
}

static void run_case(bool tsync)
{
	long i, n = bp_iterations(1000, 40);
	struct sf_runtime *rt = bp_runtime_open(false);
	struct bp_tally t = { 0 };
	unsigned int seed = 1;
	double t0 = bp_now();

	B = bp_shared(sizeof(*B));
	if (!rt || !B)
		goto out;
	/* The sleeper's process may be gone when it is woken. */
	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < n; i++)
		if (!one(rt, &t, tsync, (int)i, &seed))
			break;
	if (tsync)
		bp_report("threads-tsync", "a TSYNC attach while threads create threads; "
			  "then the denied call in a thread not attached by name", &t, bp_now() - t0);
	else
		bp_report("threads-no-tsync", "an attach to a thread creating threads; "
			  "then the denied call in a thread it creates", &t, bp_now() - t0);
out:
	sf_runtime_close(rt);
}

TEST(bypass_a_thread_created_after_an_attach_returns_dies_on_the_denied_call)
{
	run_case(false);
}

TEST(bypass_after_a_tsync_attach_under_thread_churn_every_thread_dies_on_the_denied_call)
{
	run_case(true);
}
