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
 * And a daemon started while its holder does not answer (SIGSTOP): it
 * takes no gate it could not keep, and hears the listeners the holder
 * kept once it answers again.
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
#include <sys/socket.h>
#include <sys/un.h>
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

/* The holder's pid: the credentials of its socket's listener
 * (SO_PEERCRED), which the holder made itself. */
static pid_t holder_pid(const struct sfd *dm)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct ucred cr = { 0 };
	socklen_t len = sizeof(cr);
	int fd;

	if (strlen(dm->sock) + sizeof(".holder") > sizeof(a.sun_path))
		return 0;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s.holder", dm->sock);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len))
		cr.pid = 0;
	close(fd);
	return cr.pid;
}

/* A fresh child's sf_attach() of a filter that kills on getppid, then its
 * getppid: the child's wait status, the attach's result and note. */
static int attach_kill_getppid(int *r, char *note, size_t size)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog p = { 4, f };
	int o[2], st;
	pid_t pid;

	*r = -2;
	note[0] = '\0';
	if (pipe(o))
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		char msg[320];
		int rc;

		close(o[0]);
		prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
		rc = sf_attach(&p, 0);
		snprintf(msg, sizeof(msg), "%d %s", rc, sf_last_error());
		(void)!write(o[1], msg, strlen(msg) + 1);
		syscall(SYS_getppid);
		_exit(0);
	}
	close(o[1]);
	{
		char msg[320] = "";
		ssize_t n = read(o[0], msg, sizeof(msg) - 1);

		if (n > 0) {
			msg[n] = '\0';
			*r = atoi(msg);
			snprintf(note, size, "%s", strchr(msg, ' ') ? strchr(msg, ' ') + 1 : "");
		}
	}
	close(o[0]);
	st = bp_wait(pid, 30);
	return st;
}

/* The holder stopped (SIGSTOP) across a daemon's restart: the new daemon
 * cannot reach it. It must not take a gate it could not keep across its
 * own next death: a self-attach then gets no gate, and its filter holds by
 * the tier (a kill). A call of a task whose listener only the stopped
 * holder keeps waits; once the holder answers again, the daemon takes the
 * listener back and judges the call as its chain says. */
TEST(a_pinned_daemon_that_cannot_reach_its_holder_takes_no_gate_and_hears_the_kept_calls_once_it_can)
{
	struct sfd dm __attribute__((cleanup(sfd_cleanup))) = { 0 };
	char agent[160], tmp[] = "/tmp/sftest-gate-holder-XXXXXX", dir[128], note[320];
	int o[2], gp[2], r, st;
	struct rep rep = { 0 };
	pid_t task_pid, hp;

	if (!sfd_start_sfilterd(&dm, true))
		return;
	if (!ASSERT_OK(sf_proto_agent_path(dm.sock, agent, sizeof(agent)), "agent path") ||
	    !ASSERT_TRUE(mkdtemp(tmp) != NULL, "mkdtemp") || !ASSERT_OK(pipe(o), "pipe") ||
	    !ASSERT_OK(pipe(gp), "pipe"))
		return;
	snprintf(dir, sizeof(dir), "%s/made", tmp);
	fflush(stdout);
	task_pid = fork();
	if (task_pid == 0) {
		close(o[0]);
		close(gp[1]);
		task(agent, dir, o[1], gp[0]);
	}
	close(o[1]);
	close(gp[0]);
	hp = holder_pid(&dm);
	if (!ASSERT_TRUE(read(o[0], &rep, sizeof(rep)) == sizeof(rep) && rep.stage == 2,
			 "a task is gated and attached") ||
	    !ASSERT_TRUE(hp > 0, "the holder's pid") ||
	    !ASSERT_OK(kill(hp, SIGSTOP), "the holder stopped"))
		goto out;
	if (!ASSERT_TRUE(sfd_signal(&dm, SIGKILL) != -1, "sfilterd killed") ||
	    !ASSERT_TRUE(sfd_restart(&dm), "sfilterd restarted while the holder is stopped"))
		goto out;

	st = attach_kill_getppid(&r, note, sizeof(note));
	test_log("attach with the holder stopped: %d: %s\n", r, note);
	ASSERT_EQ(r, 0, "a self-attach still attaches");
	ASSERT_TRUE(strstr(note, "gate: not installed") != NULL, "without a gate");
	ASSERT_TRUE(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
		    "and its filter holds: killed at the denied call");

	(void)!write(gp[1], "g", 1);
	ASSERT_FALSE(readable(o[0], 300), "the kept listener's call waits while the holder is stopped");
	ASSERT_OK(kill(hp, SIGCONT), "the holder continued");
	hp = 0;
	if (ASSERT_TRUE(readable(o[0], test_is_emulated() ? 120000 : 30000) &&
			read(o[0], &rep, sizeof(rep)) == sizeof(rep) && rep.stage == 3,
			"the call is answered once the holder answers again"))
		ASSERT_TRUE(rep.r == -1 && rep.err == EACCES,
			    "as its chain says: EACCES (not ENOSYS: the listener was never lost)");
	ASSERT_TRUE(access(dir, F_OK) != 0, "no directory made");
out:
	if (hp > 0)
		kill(hp, SIGCONT);
	close(o[0]);
	close(gp[1]);
	bp_wait(task_pid, 30);
	rmdir(dir);
	rmdir(tmp);
}
