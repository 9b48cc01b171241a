// SPDX-License-Identifier: GPL-2.0
/*
 * sfilterd's per-uid limits: filters in force,
 * classic instructions in force, attach requests per second. Past a limit
 * the request fails (ENOSPC, EAGAIN) with a message naming the limit, and
 * nothing else is affected: other uids attach, root (an admin) is not
 * limited, the filters already in force still enforce.
 *
 * Each limit gets its own private daemon, started with only that limit
 * low. Attaching users are forked children that take uid 65534 or 65533,
 * set no_new_privs and call sf_attach(); holders keep their filter in
 * force by staying alive until told to exit.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "progs.h"
#include "daemon.h"
#include "sfclient.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

SFD_TIER_INDEPENDENT

#define STMT(code, k)         ((struct sock_filter)BPF_STMT(code, k))
#define JUMP(code, k, jt, jf) ((struct sock_filter)BPF_JUMP(code, k, jt, jf))

/* A user's process that attaches and reports the errno (0: attached) on
 * rep, then, if attached, waits for a byte on hold and makes the denied
 * call (exit 0 = it returned, i.e. the filter was not in force). */
struct holder {
	pid_t pid;
	int hold, rep;
	char msg[256];          /* the daemon's message for a refusal */
};

static bool holder_start(struct holder *h, uid_t uid, int n_insns, int nr)
{
	int hold[2], rep[2];

	if (pipe(hold) || pipe(rep))
		return false;
	fflush(stdout);
	h->pid = fork();
	if (h->pid == 0) {
		struct sock_filter f[64];
		struct sock_fprog p = progs_kill_on(f, n_insns, nr);
		char c, msg[256] = "";
		int e = 0;

		close(hold[1]);
		close(rep[0]);
		if ((uid && (setgid(uid) || setuid(uid))) ||
		    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
			_exit(90);
		if (sf_attach(&p, 0) != 0) {
			e = errno;
			snprintf(msg, sizeof(msg), "%s", sf_last_error());
		}
		if (write(rep[1], &e, sizeof(e)) != sizeof(e) ||
		    write(rep[1], msg, sizeof(msg)) != sizeof(msg))
			_exit(91);
		if (e)
			_exit(92);
		if (read(hold[0], &c, 1) < 0)
			_exit(93);
		syscall(nr);
		_exit(0);
	}
	close(hold[0]);
	close(rep[1]);
	h->hold = hold[1];
	h->rep = rep[0];
	return h->pid > 0;
}

/* The errno of the holder's attach (0: attached), or -1; h->msg gets
 * the daemon's message. */
static int holder_errno(struct holder *h)
{
	int e;

	if (read(h->rep, &e, sizeof(e)) != sizeof(e) ||
	    read(h->rep, h->msg, sizeof(h->msg)) != sizeof(h->msg))
		return -1;
	h->msg[sizeof(h->msg) - 1] = '\0';
	if (e)
		test_log("refused: %s\n", h->msg);
	return e;
}

/* Releases the holder to make its denied call: true when it was killed. */
static bool holder_release_killed(struct holder *h)
{
	int st;

	if (h->pid <= 0)
		return false;
	if (write(h->hold, "x", 1) != 1) { /* it exited already */ }
	close(h->hold);
	close(h->rep);
	waitpid(h->pid, &st, 0);
	h->pid = 0;
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
}

static void holder_end(struct holder *h)
{
	if (h->pid > 0) {
		kill(h->pid, SIGKILL);
		waitpid(h->pid, NULL, 0);
		close(h->hold);
		close(h->rep);
		h->pid = 0;
	}
}

TEST(daemon_limit_on_filters_per_uid_refuses_that_uid_only)
{
	static const char *const args[] = { "--max-programs-per-uid", "2",
					    "--max-attach-rate", "0", NULL };
	struct holder a = { 0 }, b = { 0 }, c = { 0 }, other = { 0 }, root = { 0 }, again = { 0 };
	SFD_AUTO;

	if (!sfd_start_for_users(&dm, args))
		return;
	/* Two filters (distinct programs) of uid 65534 in force. */
	if (!ASSERT_TRUE(holder_start(&a, 65534, 4, SYS_getppid), "holder a") ||
	    !ASSERT_EQ(holder_errno(&a), 0, "first filter of the uid") ||
	    !ASSERT_TRUE(holder_start(&b, 65534, 5, SYS_getppid), "holder b") ||
	    !ASSERT_EQ(holder_errno(&b), 0, "second filter of the uid"))
		goto out;
	ASSERT_TRUE(holder_start(&c, 65534, 6, SYS_getppid), "holder c");
	ASSERT_EQ(holder_errno(&c), ENOSPC, "a third filter: ENOSPC");
	ASSERT_TRUE(strstr(c.msg, "(limit 2)") != NULL, "the message names the limit");
	ASSERT_TRUE(holder_start(&other, 65533, 6, SYS_getppid), "another uid");
	ASSERT_EQ(holder_errno(&other), 0, "another uid is not limited by it");
	ASSERT_TRUE(holder_start(&root, 0, 6, SYS_getppid), "root");
	ASSERT_EQ(holder_errno(&root), 0, "root is not limited");
	ASSERT_TRUE(holder_release_killed(&a), "the uid's first filter still enforces");
	/* Its task is gone: the filter no longer counts. */
	ASSERT_TRUE(holder_start(&again, 65534, 7, SYS_getppid), "holder again");
	ASSERT_EQ(holder_errno(&again), 0, "a filter fits again once a task has exited");
	ASSERT_TRUE(holder_release_killed(&b), "the second still enforces");
	ASSERT_TRUE(holder_release_killed(&again), "the new one enforces");
out:
	holder_end(&a);
	holder_end(&b);
	holder_end(&c);
	holder_end(&other);
	holder_end(&root);
	holder_end(&again);
}

TEST(daemon_limit_on_instructions_per_uid_refuses_that_uid_only)
{
	static const char *const args[] = { "--max-insns-per-uid", "50",
					    "--max-attach-rate", "0", NULL };
	struct holder a = { 0 }, b = { 0 }, other = { 0 };
	SFD_AUTO;

	if (!sfd_start_for_users(&dm, args))
		return;
	if (!ASSERT_TRUE(holder_start(&a, 65534, 40, SYS_getppid), "holder a") ||
	    !ASSERT_EQ(holder_errno(&a), 0, "40 instructions fit in 50"))
		goto out;
	ASSERT_TRUE(holder_start(&b, 65534, 20, SYS_getppid), "holder b");
	ASSERT_EQ(holder_errno(&b), ENOSPC, "40 + 20 instructions: ENOSPC");
	ASSERT_TRUE(strstr(b.msg, "limit of 50") != NULL, "the message names the limit");
	ASSERT_TRUE(holder_start(&other, 65533, 40, SYS_getppid), "another uid");
	ASSERT_EQ(holder_errno(&other), 0, "another uid is not limited by it");
	ASSERT_TRUE(holder_release_killed(&a), "the filter in force still enforces");
	ASSERT_TRUE(holder_release_killed(&other), "the other uid's filter enforces");
out:
	holder_end(&a);
	holder_end(&b);
	holder_end(&other);
}

/* One process attaching n filters back to back (each allows all but
 * getppid): how many were refused with EAGAIN, or -1 on another error. */
static int burst(uid_t uid, int n)
{
	int i, refused = 0, st;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct sock_filter f[64];

		if ((uid && (setgid(uid) || setuid(uid))) ||
		    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
			_exit(255);
		for (i = 0; i < n; i++) {
			struct sock_fprog p = progs_kill_on(f, 4 + i % 8, SYS_getppid);

			if (sf_attach(&p, 0) == 0)
				continue;
			if (errno != EAGAIN)
				_exit(254);
			refused++;
		}
		_exit(refused);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) >= 254)
		return -1;
	return WEXITSTATUS(st);
}

TEST(daemon_limit_on_attach_rate_refuses_that_uid_only)
{
	/* One request per second: 20 back to back take far less than a
	 * second even under emulation, so most must be refused. */
	static const char *const args[] = { "--max-attach-rate", "1", NULL };
	struct holder late = { 0 };
	int r;
	SFD_AUTO;

	if (!sfd_start_for_users(&dm, args))
		return;
	r = burst(65534, 20);
	test_log("uid 65534: %d of 20 refused\n", r);
	ASSERT_GE(r, 10, "a burst past the rate: EAGAIN");
	ASSERT_EQ(burst(0, 20), 0, "root is not limited");
	r = burst(65533, 1);
	ASSERT_EQ(r, 0, "another uid is not limited by it");
	sleep(2);
	ASSERT_TRUE(holder_start(&late, 65534, 4, SYS_getppid), "later");
	ASSERT_EQ(holder_errno(&late), 0, "the uid attaches again a second later");
	ASSERT_TRUE(holder_release_killed(&late), "and its filter enforces");
	holder_end(&late);
}
