// SPDX-License-Identifier: GPL-2.0-only
/*
 * The gate across a daemon's death: sfilterd is killed (-9) and started
 * again while a gated task makes a call its chain refuses (ERRNO(EACCES)
 * on mkdir). The listener outlives the daemon at the holder, so the call
 * waits and the next daemon judges it: EACCES, never ENOSYS (what the
 * kernel answers once no one keeps the listener), never a kill, never the
 * directory. Two moments:
 *   down      the call is made while no daemon is up;
 *   received  the daemon has received the call and is judging it
 *             (SF_TEST_GATE_DELAY_US holds it there) when it is killed:
 *             a received call cannot be received again, and only the
 *             record the dead daemon left lets the next one answer it.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "bypass.h"
#include "daemon.h"
#include "gatehand.h"
#include "proto.h"
#include "sfclient.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

SFD_TIER_INDEPENDENT

struct rep { long r; int err; int stage; };

/* The gated task: ready on out, then mkdir(dir) when go says so. */
static void task(const char *agent, const char *dir, int out, int go)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mkdir, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog p = { 4, f };
	struct rep rep = { 0 };
	char msg[256], b;

	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	rep.stage = 1;
	if (gatehand_install(&p, 1, agent, msg, sizeof(msg)) == 0 && sf_attach(&p, 0) == 0)
		rep.stage = 2;
	(void)!write(out, &rep, sizeof(rep));
	if (rep.stage != 2)
		_exit(1);
	(void)!read(go, &b, 1);
	errno = 0;
	rep.r = syscall(SYS_mkdir, dir, 0700);
	rep.err = errno;
	rep.stage = 3;
	(void)!write(out, &rep, sizeof(rep));
	_exit(0);
}

static bool readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1;
}

static void one(struct sfd *dm, const char *agent, const char *dir, bool received,
		int delay_ms, struct bp_tally *t, long i)
{
	int o[2], gp[2], st;
	struct rep rep = { 0 };
	struct bp_flags fl = { 0 };
	char what[96];
	pid_t pid;

	snprintf(what, sizeof(what), "iteration %ld (%s)", i, received ? "received" : "down");
	if (!ASSERT_OK(pipe(o), "pipe") || !ASSERT_OK(pipe(gp), "pipe"))
		return;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(o[0]);
		close(gp[1]);
		task(agent, dir, o[1], gp[0]);
	}
	close(o[1]);
	close(gp[0]);
	if (!ASSERT_TRUE(read(o[0], &rep, sizeof(rep)) == sizeof(rep) && rep.stage == 2,
			 "the task is gated and attached")) {
		close(o[0]);
		close(gp[1]);
		bp_wait(pid, 10);
		return;
	}
	if (!received)
		ASSERT_TRUE(sfd_signal(dm, SIGKILL) != -1, "sfilterd killed");
	(void)!write(gp[1], "g", 1);
	if (received) {
		/* The daemon has the call and judges it slowly: kill it then. */
		usleep((useconds_t)delay_ms * 1000 / 3);
		ASSERT_TRUE(sfd_signal(dm, SIGKILL) != -1, "sfilterd killed while judging");
	}
	ASSERT_FALSE(readable(o[0], 200), "the call waits while no daemon is up");
	ASSERT_TRUE(sfd_restart(dm), "sfilterd restarted");
	fl.reached = 1;
	if (readable(o[0], test_is_emulated() ? 120000 : 20000) &&
	    read(o[0], &rep, sizeof(rep)) == sizeof(rep) && rep.stage == 3) {
		char m[160];

		snprintf(m, sizeof(m), "%s: mkdir returned %ld errno %d (ENOSYS: no one judged it)",
			 what, rep.r, rep.err);
		ASSERT_TRUE(rep.r == -1 && rep.err == EACCES, m);
		fl.survived = 1;
	} else {
		test_fail(__FILE__, __LINE__, "%s: the call was never answered", what);
	}
	close(o[0]);
	close(gp[1]);
	st = bp_wait(pid, 10);
	/* Refused as the chain says and alive: what a denial by ERRNO is. */
	if (access(dir, F_OK) == 0) {
		bp_count(t, BP_ESCAPE, st, what);
		rmdir(dir);
	} else if (WIFSIGNALED(st)) {
		bp_count(t, BP_WRONGFUL, st, what);
	} else {
		bp_count(t, BP_LIVED, st, what);
	}
	(void)fl;
}

static void restarts(bool received)
{
	struct sfd dm __attribute__((cleanup(sfd_cleanup))) = { 0 };
	int delay_ms = test_is_emulated() ? 6000 : 1500;
	char env[64], agent[160], tmp[] = "/tmp/sftest-gate-restart-XXXXXX", dir[128];
	char *const envs[] = { env, NULL };
	struct bp_tally t = { 0 };
	long i, n = bp_iterations(3, 1);
	double t0 = bp_now();

	snprintf(env, sizeof(env), "SF_TEST_GATE_DELAY_US=%d", received ? delay_ms * 1000 : 0);
	dm.env = envs;
	if (!sfd_start_sfilterd(&dm, true))
		return;
	if (!ASSERT_OK(sf_proto_agent_path(dm.sock, agent, sizeof(agent)), "agent path") ||
	    !ASSERT_TRUE(mkdtemp(tmp) != NULL, "mkdtemp"))
		return;
	snprintf(dir, sizeof(dir), "%s/made", tmp);
	for (i = 0; i < n && !test_failed(); i++)
		one(&dm, agent, dir, received, delay_ms, &t, i);
	rmdir(tmp);
	bp_report(received ? "gate-restart-received" : "gate-restart-down",
		  received ? "sfilterd is killed while it judges a gated call, and restarted" :
			     "a gated call is made while sfilterd is down, and it is restarted",
		  &t, bp_now() - t0);
}

TEST(bypass_gate_a_call_made_while_sfilterd_is_down_is_judged_by_the_next_daemon)
{
	restarts(false);
}

TEST(bypass_gate_a_call_the_killed_daemon_received_is_answered_by_the_next)
{
	restarts(true);
}
