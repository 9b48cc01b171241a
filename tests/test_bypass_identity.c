// SPDX-License-Identifier: GPL-2.0-only
/*
 * Bypass attempts on who gets a filter.
 *
 * Pid reuse: an attach names its target by pid, pinned to the process
 * (its pidfd, its identity). The target dies, and a new process gets its
 * pid (clone3 with set_tid, so that it surely does) before the attach is
 * made; the filter must not land on the newcomer. One iteration: one such
 * attach, through the runtime (sf_runtime_attach_to() with the identity
 * read from the pidfd) or through sfilterd (ADMIN_ATTACH with the pidfd;
 * some with the daemon stopped while the pid changes hands, so that it
 * reads the request only afterwards); every other one is a control whose
 * target lives on and must be confined. The newcomer then makes the call
 * the filter kills: a wrongful kill if it dies. A control that lives past
 * it is an escape.
 *
 * Setuid exec: a user without no_new_privs sends a self-attach to sfilterd
 * and execs a setuid-root program before (or while) it is handled; the
 * filter (kill on read) must never land on the privileged image, which
 * then reads its standard input and exits. One iteration: one such
 * request, with the daemon running, or stopped until the exec is done;
 * every fourth a control: with no_new_privs, an attach that succeeded
 * before the exec must hold after it.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "bypass.h"
#include "daemon.h"
#include "progs.h"
#include "runtime.h"
#include "sfclient.h"
#include "suid.h"
#include "c2e.h"
#include "client.h"
#include "proto.h"

#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

SFD_TIER_INDEPENDENT

static struct sock_filter kill_getppid[4], kill_read[4];

/* A reply to the request on fd (-1000 - errno when none came). */
static int recv_error(int fd, double timeout_s)
{
	char buf[SF_PROTO_MAX_MSG];
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n;

	if (poll(&p, 1, (int)(timeout_s * 1000 * (test_is_emulated() ? 10 : 1))) != 1)
		return -1000 - ETIMEDOUT;
	n = recv(fd, buf, sizeof(buf), 0);
	if (n <= 0 || sf_proto_check_reply(buf, n) != 0)
		return -1000 - (n < 0 ? errno : EPROTO);
	return ((struct sf_reply *)buf)->error;
}

/* ---- pid reuse ------------------------------------------------------------ */

struct pid_board {
	volatile int go;
	struct bp_flags f;
};

static struct pid_board *P;
static char stacks[2][64 * 1024] __attribute__((aligned(16)));

/* Target and newcomer alike: wait, then make the call the filter kills. */
static void waiter(void)
{
	while (!P->go)
		sched_yield();
	P->f.reached = 1;
	bp_denied_call();
	P->f.survived = 1;
	syscall(SYS_exit_group, 0);
}

static int waiter_fn(void *arg)
{
	(void)arg;
	waiter();
	return 0;
}

/* A process sharing this one's memory, with pid want (0: any). */
static pid_t spawn(pid_t want, int which)
{
	pid_t tid = want;
	struct clone_args a = {
		.flags = CLONE_VM, .exit_signal = SIGCHLD,
		.stack = (uint64_t)(uintptr_t)stacks[which], .stack_size = sizeof(stacks[which]),
		.set_tid = (uint64_t)(uintptr_t)&tid, .set_tid_size = want ? 1 : 0,
	};

	fflush(stdout);
	if (!want)
		return clone(waiter_fn, stacks[which] + sizeof(stacks[which]), CLONE_VM | SIGCHLD,
			     NULL);
	return (pid_t)bp_clone3_run(&a, sizeof(a), waiter);
}

enum via { VIA_RUNTIME, VIA_DAEMON, VIA_DAEMON_STOPPED };

/* ADMIN_ATTACH of prog to pid, naming its process by pidfd. */
static bool send_admin_attach(int fd, pid_t pid, int pidfd, const struct sock_fprog *prog)
{
	union {
		struct sf_admin_attach_req r;
		char b[SF_PROTO_ADMIN_ATTACH_SIZE + 4 * 8];
	} m = { 0 };

	m.r.pid = pid;
	m.r.n_insns = prog->len;
	memcpy(m.r.insns, prog->filter, prog->len * 8);
	sf_proto_header(&m.r.hdr, SF_MSG_ADMIN_ATTACH, sizeof(m), 1);
	return ASSERT_OK(sf_proto_send(fd, &(struct iovec){ &m, sizeof(m) }, 1, &pidfd, 1),
			 "send ADMIN_ATTACH with the pidfd");
}

/* One iteration. 1: counted; 0: the pid could not be had again (not
 * counted); -1: the test cannot go on. */
static int one_reuse(struct sf_runtime *rt, struct sfd *dm, int conn, enum via via,
		     bool reuse, struct bp_tally *t, int i)
{
	struct sock_fprog prog = progs_kill_on(kill_getppid, 4, SYS_getppid);
	struct sf_identity id;
	pid_t target, who;
	int pidfd, err, st;
	char what[128];

	memset((void *)P, 0, sizeof(*P));
	target = who = spawn(0, 0);
	pidfd = target > 0 ? (int)syscall(SYS_pidfd_open, target, 0) : -1;
	if (!ASSERT_TRUE(target > 0 && pidfd >= 0, "target and its pidfd"))
		return -1;
	if (via == VIA_RUNTIME && !ASSERT_OK(sf_runtime_identify(rt, pidfd, &id), "identify"))
		goto fail;
	if (via == VIA_DAEMON_STOPPED &&
	    (!sfd_pause(dm) || !send_admin_attach(conn, target, pidfd, &prog)))
		goto fail;
	if (reuse) {
		kill(target, SIGKILL);
		waitpid(target, NULL, 0);
		who = spawn(target, 1);
		if (who == -EEXIST) {
			/* Someone else took the pid first: not an attempt. */
			if (via == VIA_DAEMON_STOPPED) {
				sfd_resume(dm);
				recv_error(conn, 10);
			}
			close(pidfd);
			return 0;
		}
		if (!ASSERT_EQ(who, target, "the newcomer has the target's pid"))
			goto fail;
	}
	if (via == VIA_RUNTIME) {
		struct sf_target tg = { .tid = target, .process = &id, .reply_fd = -1 };
		struct c2e_error e;

		err = sf_runtime_attach_to(rt, &tg, &prog, 0, NULL, &e);
	} else {
		if (via == VIA_DAEMON_STOPPED)
			sfd_resume(dm);
		else if (!send_admin_attach(conn, target, pidfd, &prog))
			goto fail;
		err = recv_error(conn, 10);
		err = err > 0 ? -err : err;
	}
	close(pidfd);
	/* Refused as gone (ESRCH), or made: then the call below decides. */
	if (err && !ASSERT_EQ(err, -ESRCH, reuse ? "attach to a reused pid" : "attach"))
		goto kill;
	P->go = 1;
	st = bp_wait(who, 10);
	snprintf(what, sizeof(what), "iteration %d (%s, %s)", i,
		 via == VIA_RUNTIME ? "runtime" : via == VIA_DAEMON ? "sfilterd" :
		 "sfilterd stopped meanwhile", reuse ? "pid reused" : "control");
	if (reuse)
		bp_count(t, P->f.survived ? BP_LIVED : bp_judge_allowed(st), st, what);
	else
		bp_count(t, bp_judge_denied(st, &P->f), st, what);
	return 1;
fail:
	close(pidfd);
kill:
	kill(who, SIGKILL);
	waitpid(who, NULL, 0);
	return -1;
}

TEST(bypass_an_attach_by_pid_never_lands_on_a_process_that_reused_the_pid)
{
	long i, n = bp_iterations(1000, 40), lost = 0;
	struct sf_runtime *rt = NULL;
	struct bp_tally t = { 0 };
	double t0 = bp_now();
	int conn = -1, r;
	SFD_AUTO;

	P = bp_shared(sizeof(*P));
	if (!P || !sfd_start_sfilterd(&dm, false))
		return;
	conn = sfd_connect(dm.sock);
	rt = bp_runtime_open(false);
	if (!rt || !ASSERT_TRUE(conn >= 0, "connect"))
		goto out;
	/* Whether this kernel lets us choose a pid at all. */
	r = spawn(getpid(), 1);
	if (r != -EEXIST) {
		if (r > 0) {
			kill(r, SIGKILL);
			waitpid(r, NULL, 0);
		}
		test_skip("clone3 with set_tid: %s", r > 0 ? "gave a pid in use" : strerror(-r));
		goto out;
	}
	for (i = 0; i < n && !test_failed() && lost < 100; ) {
		enum via via = i % 20 == 19 ? VIA_DAEMON_STOPPED : (i / 2) % 2 ? VIA_DAEMON
										: VIA_RUNTIME;

		r = one_reuse(rt, &dm, conn, via, i % 2 == 0 || via == VIA_DAEMON_STOPPED, &t,
			      (int)i);
		if (r < 0)
			break;
		lost += r == 0;
		i += r;
	}
	test_log("%ld attempts lost the pid to another process\n", lost);
	bp_report("pid-reuse", "an attach by pid (runtime or sfilterd) after the target died "
		  "and its pid was reused, or to a live target", &t, bp_now() - t0);
out:
	if (conn >= 0)
		close(conn);
	sf_runtime_close(rt);
}

/* ---- setuid exec ---------------------------------------------------------- */

struct exec_board {
	volatile int fd;        /* the attacker's connection, for the test to read */
	volatile int step;
	volatile int attach_rc; /* the control's sf_attach() */
};

static struct exec_board *E;

/* The attacker: nobody, connected; sends a self-attach (no_new_privs:
 * through sf_attach(), which must succeed), then execs the setuid copy
 * with stdin on hold. */
static void attacker(const char *copy, int hold, bool control)
{
	struct sock_fprog prog = progs_kill_on(kill_read, 4, SYS_read);
	union {
		struct sf_attach_req r;
		char b[SF_PROTO_ATTACH_REQ_SIZE + 4 * 8];
	} m = { 0 };
	int fd;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (!suid_become_nobody())
		_exit(10);
	if (control) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
			_exit(11);
		E->attach_rc = sf_attach(&prog, 0) ? errno : 0;
	} else {
		fd = sfd_connect(getenv(SF_PROTO_SOCKET_ENV));
		if (fd < 0)
			_exit(12);
		fcntl(fd, F_SETFD, 0); /* kept across the exec, as an attacker would */
		E->fd = fd;
		E->step = 1;
		while (E->step < 2)
			sched_yield();
		m.r.tid = 0;
		m.r.reply_fd = fd;
		m.r.n_insns = prog.len;
		memcpy(m.r.insns, prog.filter, prog.len * 8);
		sf_proto_header(&m.r.hdr, SF_MSG_ATTACH, sizeof(m), 1);
		if (sf_proto_send(fd, &(struct iovec){ &m, sizeof(m) }, 1, NULL, 0))
			_exit(13);
	}
	dup2(hold, 0);
	execl(copy, copy, "--hold", (char *)NULL);
	_exit(14);
}

/* One iteration; false when the test cannot go on. */
static bool one_exec(struct sfd *dm, const char *copy, int i, struct bp_tally *t, long *answers)
{
	bool control = i % 4 == 3, stopped = i % 4 == 1;
	int hold[2], st, err = 0, dup = -1, pidfd = -1;
	struct bp_flags f = { 1, 0 };
	char what[96];
	pid_t a;

	memset((void *)E, 0, sizeof(*E));
	if (!ASSERT_OK(pipe2(hold, O_CLOEXEC), "pipe"))
		return false;
	fflush(stdout);
	a = fork();
	if (a == 0) {
		close(hold[1]);
		attacker(copy, hold[0], control);
	}
	close(hold[0]);
	if (!ASSERT_TRUE(a > 0, "fork"))
		goto out;
	if (!control) {
		/* A second handle on the attacker's connection: its reply is
		 * how the test knows the daemon has handled the request. */
		if (!ASSERT_TRUE(bp_spin_until(&E->step, 1, 10), "the attacker connected"))
			goto out;
		pidfd = (int)syscall(SYS_pidfd_open, a, 0);
		dup = pidfd >= 0 ? (int)syscall(SYS_pidfd_getfd, pidfd, E->fd, 0) : -1;
		if (!ASSERT_TRUE(dup >= 0, "pidfd_getfd of the attacker's connection") ||
		    (stopped && !sfd_pause(dm)))
			goto out;
		E->step = 2;
	}
	if (!control) {
		if (!ASSERT_NEQ(suid_wait_privileged(a), 0, "the attacker runs the privileged image"))
			goto out;
		if (stopped)
			sfd_resume(dm);
		err = recv_error(dup, 10);
		/* Refused before the exec (EACCES: no no_new_privs) or after
		 * it (EPERM: another image): which one, the race decides. */
		answers[err == EACCES ? 0 : err == EPERM ? 1 : 2]++;
		if (err != EACCES && err != EPERM)
			test_log("iteration %d: the self-attach was answered %d\n", i, err);
		if (err < -1000 && !ASSERT_EQ(err, 0, "a reply to the self-attach"))
			goto out;
	} else if (!ASSERT_EQ(E->attach_rc, 0, "the control's sf_attach()")) {
		goto out;
	}
	close(hold[1]);
	hold[1] = -1;
	st = bp_wait(a, 10);
	snprintf(what, sizeof(what), "iteration %d (%s)", i, control ? "control, no_new_privs" :
		 stopped ? "daemon stopped until the exec" : "daemon running");
	if (control) {
		f.survived = WIFEXITED(st) && WEXITSTATUS(st) == 0;
		bp_count(t, bp_judge_denied(st, &f), st, what);
	} else {
		bp_count(t, bp_judge_allowed(st), st, what);
	}
	a = 0;
out:
	if (hold[1] >= 0)
		close(hold[1]);
	if (a > 0) {
		if (stopped)
			kill(dm->pid, SIGCONT);
		kill(a, SIGKILL);
		waitpid(a, NULL, 0);
	}
	if (dup >= 0)
		close(dup);
	if (pidfd >= 0)
		close(pidfd);
	return !test_failed();
}

TEST(bypass_a_self_attach_sent_before_exec_of_a_setuid_program_never_lands)
{
	static const char *const args[] = { "--max-attach-rate", "0", NULL };
	long i, n = bp_iterations(1000, 40), answers[3] = { 0 };
	struct bp_tally t = { 0 };
	char dir[64], copy[128];
	double t0 = bp_now();
	SFD_AUTO;

	if (!test_need_root("to become another user"))
		return;
	E = bp_shared(sizeof(*E));
	dm.args = args;
	if (!E || !sfd_start_sfilterd(&dm, false) || !suid_copy(dir, sizeof(dir), copy, sizeof(copy)))
		return;
	for (i = 0; i < n; i++)
		if (!one_exec(&dm, copy, (int)i, &t, answers))
			break;
	test_log("self-attaches refused with EACCES (before the exec) %ld, EPERM (after it) %ld, "
		 "otherwise %ld\n", answers[0], answers[1], answers[2]);
	bp_report("setuid-exec", "a self-attach sent by a user without no_new_privs who then "
		  "execs a setuid program; every 4th a no_new_privs control", &t, bp_now() - t0);
	suid_rm_copy(dir, copy);
}
