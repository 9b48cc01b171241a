// SPDX-License-Identifier: GPL-2.0-only
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
 *
 * A uid here is a login user: the subordinate uids a user maps (user
 * namespaces it owns) share its limits, connections included, and a
 * namespace root made is an account of its own (tests/lib/userns: the
 * namespaces mapped as newuidmap would). The attach rate holds for every
 * login user, however many have asked (1,100 uids, each a thread of this
 * process with credentials of its own).
 */
#define _GNU_SOURCE
#include "harness.h"
#include "progs.h"
#include "daemon.h"
#include "probe.h"
#include "client.h"
#include "proto.h"
#include "bypass.h"
#include "sfclient.h"
#include "userns.h"
#include "wstatus.h"
#include "sockfilter.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <string.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

SFD_TIER_INDEPENDENT

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

/* ---- login users --------------------------------------------------------- */

/* One ATTACH of an allow-all filter to the calling thread, which has taken
 * uid (credentials are per thread: a raw setresuid changes the caller
 * alone) and has neither no_new_privs nor capabilities: the daemon counts
 * the request against the uid's rate, then refuses it (EACCES), or past
 * the rate refuses it first (EAGAIN). */
struct rate_req {
	const char *sock;
	uid_t uid;
	int n;          /* requests */
	int eagain;     /* of them refused for the rate */
	int other;      /* answered otherwise than EACCES or EAGAIN */
};

static void *attach_as_thread(void *arg)
{
	struct rate_req *q = arg;
	struct {
		struct sf_attach_req r;
		struct sock_filter f;
	} m;
	int i, e;

	if (syscall(SYS_setresgid, q->uid, q->uid, q->uid) ||
	    syscall(SYS_setresuid, q->uid, q->uid, q->uid)) {
		q->other = q->n;
		return NULL;
	}
	for (i = 0; i < q->n; i++) {
		memset(&m, 0, sizeof(m));
		m.r.tid = (int32_t)syscall(SYS_gettid);
		m.r.reply_fd = -1;
		m.r.n_insns = 1;
		m.f = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
		e = sfd_request(q->sock, &m, SF_MSG_ATTACH, sizeof(m), NULL, NULL);
		q->eagain += e == EAGAIN;
		q->other += e != EAGAIN && e != EACCES;
	}
	return NULL;
}

static struct rate_req rate_as(const char *sock, uid_t uid, int n)
{
	struct rate_req q = { sock, uid, n, 0, 0 };
	pthread_t t;

	if (pthread_create(&t, NULL, attach_as_thread, &q)) {
		q.other = n;
		return q;
	}
	pthread_join(t, NULL);
	return q;
}

TEST(daemon_attach_rate_holds_for_every_login_user_however_many_asked)
{
	/* One request a second: a burst of 20 is mostly refused. */
	static const char *const args[] = { "--max-attach-rate", "1", NULL };
	struct rate_req q;
	int i, other = 0;
	SFD_AUTO;

	if (!sfd_start_for_users(&dm, args))
		return;
	/* 1,100 uids ask once each: more than a table of 1,024 would hold. */
	for (i = 0; i < 1100; i++) {
		q = rate_as(dm.sock, 400000 + i, 1);
		other += q.other;
	}
	ASSERT_EQ(other, 0, "1,100 uids: each request answered (EACCES: no no_new_privs)");
	q = rate_as(dm.sock, 401100, 20);
	test_log("the 1,101st uid: %d of 20 requests refused for the rate\n", q.eagain);
	ASSERT_EQ(q.other, 0, "its requests answered");
	ASSERT_GE(q.eagain, 10, "a burst past the rate: EAGAIN, for the 1,101st uid too");
	q = rate_as(dm.sock, 400000, 20);
	ASSERT_GE(q.eagain, 10, "and for the first");
}

/* What a process in a user namespace saw of its connections. */
struct conn_board {
	int held;                       /* followers greeted */
	int refused;                    /* the connect's return: -errno, or 0 greeted */
	char why[SF_PROTO_MAX_TEXT];
};

static struct conn_board *CB;

/* Follows the log on a connection of its own (never idle to the daemon)
 * and waits to be killed: the parent-death signal, as uid k (arg). */
static void follower_as(uid_t k)
{
	struct sf_log_req lg = { .flags = SF_LOG_FOLLOW };
	int fd;

	if (k && (syscall(SYS_setresgid, k, k, k) || syscall(SYS_setresuid, k, k, k)))
		_exit(1);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	fd = sfd_connect(getenv(SF_PROTO_SOCKET_ENV));
	sf_proto_header(&lg.hdr, SF_MSG_LOG, sizeof(lg), 1);
	if (fd < 0 || sf_proto_send(fd, &(struct iovec){ &lg, sizeof(lg) }, 1, NULL, 0))
		_exit(1);
	__atomic_add_fetch(&CB->held, 1, __ATOMIC_SEQ_CST);
	pause();
	_exit(0);
}

/* In a user namespace (as its uid 0): n followers as its uids 1..n, then
 * a connection as uid n + 1, whose refusal (or greeting) is reported. */
static int followers_then_one_more(void *arg)
{
	int n = *(int *)arg, i, fd;
	pid_t p;

	for (i = 1; i <= n; i++) {
		fflush(stdout);
		p = fork();
		if (p == 0)
			follower_as((uid_t)i);
		if (p < 0)
			return 1;
	}
	for (i = 0; i < 2000 && __atomic_load_n(&CB->held, __ATOMIC_SEQ_CST) < n; i++)
		usleep(10000);
	if (syscall(SYS_setresgid, n + 1, n + 1, n + 1) || syscall(SYS_setresuid, n + 1, n + 1, n + 1))
		return 2;
	fd = sf_proto_connect(getenv(SF_PROTO_SOCKET_ENV), 20000, CB->why, sizeof(CB->why));
	CB->refused = fd < 0 ? fd : 0;
	if (fd >= 0)
		close(fd);
	/* The followers go with this process (their parent-death signal). */
	return 0;
}

/* A user namespace of owner's (mapping 8 uids at base) where two processes
 * follow the log and a third connects: what became of it. */
static int third_connection(uid_t owner, uid_t base, char *why, size_t size)
{
	int two = 2, st;
	pid_t p;

	memset(CB, 0, sizeof(*CB));
	p = userns_fork(owner, base, 8, 0, followers_then_one_more, &two);
	if (p < 0)
		return -1000;
	st = bp_wait(p, 60);
	if (!ASSERT_TRUE(wstatus_exited_ok(st), "the namespace's processes ran") ||
	    !ASSERT_EQ(CB->held, 2, "two of its uids follow the log"))
		return -1000;
	snprintf(why, size, "%s", CB->why);
	test_log("a third connection from a namespace of uid %u's: %s%s\n", owner,
		 CB->refused ? "refused: " : "greeted", why);
	return CB->refused;
}

TEST(daemon_subordinate_uids_share_their_owners_connection_limit)
{
	static const char *const args[] = { "--max-conns-per-uid", "2", NULL };
	char why[SF_PROTO_MAX_TEXT];
	SFD_AUTO;

	if (!TEST_REQUIRE(probe_userns(why, sizeof(why)), NULL, why))
		return;
	CB = bp_shared(sizeof(*CB));
	if (!CB || !sfd_start_for_users(&dm, args))
		return;
	/* uid 65534's uids 300001 and 300002 hold its two; 300003 is its
	 * third. */
	ASSERT_EQ(third_connection(65534, 300000, why, sizeof(why)), -EAGAIN,
		  "a third connection of uid 65534's subordinate uids: EAGAIN");
	ASSERT_TRUE(strstr(why, "uid 65534 (the owner of uid 300003's user namespace) has 2 "
			   "connections open and none idle") != NULL, "the reason names the owner");
	/* A namespace root made (a container's) is an account of its own:
	 * two connections there, and no more, whatever root and others
	 * hold. */
	ASSERT_EQ(third_connection(0, 310000, why, sizeof(why)), -EAGAIN,
		  "a third connection from one namespace root made: EAGAIN");
	ASSERT_TRUE(strstr(why, "user namespace ") && strstr(why, "(uid 0's, where uid 310003 is)"),
		    "the reason names the namespace");
}
