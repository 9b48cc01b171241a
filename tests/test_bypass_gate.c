// SPDX-License-Identifier: GPL-2.0-only
/*
 * Bypass attempts on the gate's judge (sf_runtime_gate_answer()): a
 * notified call is judged by the caller's tid, read from the
 * notification, and acted on (a kill, a SIGSYS) by pid. The caller dies
 * while the judge holds its verdict, and a new process gets its pid
 * (clone3 with set_tid, so that it surely does) before the judge acts: the
 * newcomer must never be killed or signalled. The judge waits between
 * reading the chain and acting (SF_TEST_GATE_DELAY_US), which opens the
 * window wide. One iteration: one such call, whose verdict is KILL or
 * TRAP in turn; every fourth a control whose caller lives on and must be
 * killed (an escape if it survives).
 */
#define _GNU_SOURCE
#include "harness.h"
#include "bypass.h"
#include "gatehand.h"
#include "fdpass.h"
#include "progs.h"
#include "runtime.h"

#include <errno.h>
#include <linux/sched.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

struct board {
	struct bp_flags f;
	volatile int go;
};
static struct board *B;
static int sp[2] = { -1, -1 };
static struct sock_fprog chain;

/* The caller: gate and listener out, then the denied call when told. */
static void caller(void)
{
	int l;

	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	l = gatehand_gate(&chain, 1, NULL);
	if (l < 0 || fdpass_send(sp[1], l))
		_exit(41);
	close(l);
	while (!B->go)
		sched_yield();
	B->f.reached = 1;
	bp_denied_call();
	B->f.survived = 1;
	_exit(0);
}

static void newcomer(void)
{
	for (;;)
		pause();
}

struct judge {
	struct sf_runtime *rt;
	int fd;
	int r;
	struct sf_gate_outcome o;
};

static void *judge_once(void *arg)
{
	struct judge *j = arg;

	j->r = sf_runtime_gate_answer(j->rt, j->fd, true, &j->o);
	return NULL;
}

TEST(bypass_gate_a_verdict_never_lands_on_a_process_that_took_the_callers_pid)
{
	struct sf_runtime *rt = bp_runtime_open(false);
	struct sock_filter f[4];
	struct bp_tally t = { 0 };
	long i, n = bp_iterations(200, 16);
	uint32_t delay = test_is_emulated() ? 400000 : 60000;
	double t0 = bp_now();

	if (!rt)
		return;
	B = bp_shared(sizeof(*B));
	if (!B)
		goto out;
	sf_runtime_test_knob(rt, SF_TEST_GATE_DELAY_US, delay);
	for (i = 0; i < n && !test_failed(); i++) {
		bool control = i % 4 == 3;
		uint32_t ret = i % 2 ? SECCOMP_RET_TRAP | 1 : SECCOMP_RET_KILL_PROCESS;
		struct judge j = { .rt = rt, .fd = -1 };
		struct clone_args a = { .exit_signal = SIGCHLD };
		pthread_t th;
		pid_t pid, taker = -1;
		int st, tst = -1;
		char what[96];

		chain = progs_kill_on(f, 4, SYS_getppid);
		f[2].k = ret;
		memset((void *)B, 0, sizeof(*B));
		if (!ASSERT_OK(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sp), "socketpair"))
			break;
		fflush(stdout);
		pid = (pid_t)bp_clone3_run(&a, sizeof(a), caller);
		close(sp[1]);
		j.fd = fdpass_recv(sp[0]);
		close(sp[0]);
		if (!ASSERT_GE(pid, 1, "the caller") || !ASSERT_GE(j.fd, 0, "its listener"))
			break;
		if (bp_attach(rt, pid, &chain, 0, NULL, false) ||
		    !ASSERT_OK(pthread_create(&th, NULL, judge_once, &j), "the judge"))
			break;
		B->go = 1;
		bp_spin_until(&B->f.reached, 1, 5);
		/* The judge has the call (or soon will) and waits: the caller
		 * dies and its pid goes to a newcomer. */
		usleep(delay / 4);
		if (!control) {
			pid_t tid = pid;
			struct clone_args na = {
				.exit_signal = SIGCHLD,
				.set_tid = (uint64_t)(uintptr_t)&tid, .set_tid_size = 1,
			};

			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			fflush(stdout);
			taker = (pid_t)bp_clone3_run(&na, sizeof(na), newcomer);
			if (taker < 0) {
				test_skip("clone3 with set_tid: %s", strerror((int)-taker));
				pthread_join(th, NULL);
				close(j.fd);
				break;
			}
		}
		pthread_join(th, NULL);
		close(j.fd);
		snprintf(what, sizeof(what), "iteration %ld (%s, %s)", i,
			 control ? "control" : "pid taken", i % 2 ? "TRAP" : "KILL");
		if (control) {
			st = bp_wait(pid, 10);
			/* KILL: SIGKILL; TRAP: SIGSYS's default action. */
			if (WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS)
				st = SIGKILL; /* as the tally counts a denial carried out */
			bp_count(&t, bp_judge_denied(st, &B->f), st, what);
			continue;
		}
		/* The newcomer must still be there, unsignalled. */
		if (waitpid(taker, &tst, WNOHANG) == 0) {
			kill(taker, SIGKILL);
			waitpid(taker, &tst, 0);
			bp_count(&t, BP_LIVED, 0, what);
		} else {
			bp_count(&t, BP_WRONGFUL, tst, what); /* killed or signalled */
		}
	}
	sf_runtime_test_knob(rt, SF_TEST_GATE_DELAY_US, 0);
	bp_report("gate-pid-reuse", "a gated call's caller dies while the judge holds its "
		  "verdict (KILL or TRAP) and a newcomer takes its pid", &t, bp_now() - t0);
out:
	sf_runtime_close(rt);
}
