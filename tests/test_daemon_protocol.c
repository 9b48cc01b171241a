// SPDX-License-Identifier: GPL-2.0-only
/*
 * sfilterd and libsfclient, end to end: a private daemon on a temporary
 * socket (SFILTER_SOCKET), spoken to raw (loader/proto/proto.h) and through
 * sf_attach().
 *
 * - Every malformed request (truncated, oversized, wrong magic or version,
 *   unknown type, n_insns that does not match, file descriptors attached)
 *   gets the documented error reply, the descriptors are closed, and the
 *   daemon keeps serving that connection and the others.
 * - sf_attach() sets errno as seccomp(2) would: EINVAL (with the
 *   validator's message), EFAULT, EACCES without no_new_privs for a
 *   non-root uid, ESRCH for a thread of another process; EHOSTDOWN when
 *   no daemon listens.
 * - An attach confines the caller: a filter that kills on getppid kills
 *   a child that calls getppid, by SIGKILL, on either tier.
 * - SIGTERM stops the daemon cleanly (exit 0, socket removed).
 *
 * The daemons are tests/lib/daemon's, found next to this runner:
 * ../sfilterd from build/tests/sftest, or ./sfilterd beside it (the
 * guest: run.sh -f build/sfilterd); $SF_SFILTERD overrides both. Each
 * test's teardown checks the SIGTERM stop (SFD_AUTO_STOP).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "daemon.h"
#include "c2e.h"
#include "client.h"
#include "proto.h"
#include "sfclient.h"
#include "sockfilter.h"
#include "progs.h"
#include "fdpass.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/mman.h>
#include <sys/wait.h>

SFD_TIER_INDEPENDENT

/* ---- raw protocol ------------------------------------------------------- */

struct reply {
	ssize_t len;
	uint32_t request_id;
	int32_t error;
	uint32_t filter_id;
	char message[SF_PROTO_MAX_TEXT];
};

/* Sends one datagram (with fds when nfds > 0) and reads one reply. */
static bool roundtrip(int fd, const void *msg, size_t len, const int *fds,
		      int nfds, struct reply *out)
{
	char cbuf[CMSG_SPACE(8 * sizeof(int))];
	struct iovec iov = { (void *)msg, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	union {
		struct sf_reply r;
		char bytes[SF_PROTO_MAX_NOTE_REPLY + 64];
	} in;
	ssize_t n;

	memset(out, 0, sizeof(*out));
	if (nfds > 0)
		fdpass_rights(&mh, cbuf, fds, nfds);
	if (!ASSERT_EQ(sendmsg(fd, &mh, MSG_NOSIGNAL), (ssize_t)len, "sendmsg"))
		return false;
	n = recv(fd, &in, sizeof(in), 0);
	if (!ASSERT_GE(n, (ssize_t)SF_PROTO_GREPLY_SIZE + 1, "reply length"))
		return false;
	out->len = n;
	out->request_id = in.r.hdr.request_id;
	out->error = in.r.error;
	out->filter_id = in.r.id;
	if (!ASSERT_OK(sf_proto_check_reply(&in, n), "one SF_MSG_REPLY of this version, "
		       "text NUL-terminated") ||
	    !ASSERT_EQ(in.r.data_len, 0, "no data with an ATTACH reply") ||
	    !ASSERT_GE((ssize_t)SF_PROTO_MAX_NOTE_REPLY, n, "within SF_PROTO_MAX_NOTE_REPLY"))
		return false;
	sf_proto_reply_message(&in.r, out->message, sizeof(out->message));
	test_log("reply: error %d (%s) id %u: %s\n", out->error,
		 out->error > 0 ? strerror(out->error) : "-", out->request_id, in.r.text);
	return ASSERT_TRUE(out->error || strstr(in.r.text, "\"filter\":") != NULL,
			   "a success names the filter");
}

/* A request buffer big enough for anything the tests send. */
static union {
	struct sf_attach_req req;
	char bytes[80000];
} mbuf;

/* Fills mbuf with a well-formed attach request of the given program. */
static size_t make_req(uint32_t id, const struct sock_filter *insns,
		       uint32_t n, uint32_t flags, int32_t tid)
{
	size_t len = SF_PROTO_ATTACH_REQ_SIZE + n * sizeof(*insns);

	memset(&mbuf.req, 0, sizeof(mbuf.req));
	mbuf.req.hdr.magic = SF_PROTO_MAGIC;
	mbuf.req.hdr.version = SF_PROTO_VERSION;
	mbuf.req.hdr.type = SF_MSG_ATTACH;
	mbuf.req.hdr.length = len;
	mbuf.req.hdr.request_id = id;
	mbuf.req.flags = flags;
	mbuf.req.tid = tid;
	mbuf.req.reply_fd = -1;
	mbuf.req.n_insns = n;
	memcpy(mbuf.req.insns, insns, n * sizeof(*insns));
	return len;
}

/* Misaligned load: valid classic BPF, refused by seccomp. */
static const struct sock_filter bad_prog[] = {
	STMT(BPF_LD | BPF_W | BPF_ABS, 3),
	STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

static const struct sock_filter allow_prog[] = {
	STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

static const char *validator_message(const struct sock_filter *p, size_t n,
				     char *buf, size_t size)
{
	struct c2e_error err;

	if (c2e_validate(p, n, &err) == 0)
		return "";
	return c2e_error_str(&err, buf, size);
}

/* The daemon still answers, on conn: an invalid program comes back as
 * EINVAL with the validator's message (nothing gets attached). */
/* Whether the pipe's write end wfd has lost its last reader within 5 s
 * (50 under emulation): the pipe says POLLERR then (pipe_poll()). */
static bool no_reader_soon(int wfd)
{
	struct pollfd p = { .fd = wfd, .events = 0 };
	int i;

	for (i = 0; i < (test_is_emulated() ? 5000 : 500); i++) {
		if (poll(&p, 1, 0) == 1 && (p.revents & POLLERR))
			return true;
		usleep(10000);
	}
	return false;
}

static bool still_serving(int conn, uint32_t id, const char *what)
{
	struct reply r;
	char expect[256];
	size_t len = make_req(id, bad_prog, ARRAY_SIZE(bad_prog), 0,
			      (int32_t)syscall(SYS_gettid));

	if (!roundtrip(conn, &mbuf, len, NULL, 0, &r))
		return ASSERT_TRUE(false, what);
	return ASSERT_EQ(r.request_id, id, what) &&
	       ASSERT_EQ(r.error, EINVAL, what) &&
	       ASSERT_STREQ(r.message,
			    validator_message(bad_prog, ARRAY_SIZE(bad_prog),
					      expect, sizeof(expect)), what);
}

struct bad_case {
	const char *name;
	int error;
};

TEST(daemon_malformed_requests)
{
	SFD_AUTO_STOP;
	struct reply r;
	size_t len;
	int idle, conn, fds[2], i;
	uint32_t id = 100;
	pid_t tid = syscall(SYS_gettid);

	if (!sfd_start_sfilterd(&dm, false))
		return;
	signal(SIGPIPE, SIG_IGN);
	/* A client that connects and says nothing must not hold up others. */
	idle = sfd_connect(dm.sock);
	conn = sfd_connect(dm.sock);
	if (!ASSERT_GE(idle, 0, "connect idle") || !ASSERT_GE(conn, 0, "connect"))
		return;

	/* 1. shorter than the header: EPROTO, request id unknown (0) */
	len = make_req(++id, allow_prog, 1, 0, tid);
	if (roundtrip(conn, &mbuf, 8, NULL, 0, &r)) {
		ASSERT_EQ(r.error, EPROTO, "truncated header: EPROTO");
		ASSERT_EQ(r.request_id, 0, "truncated header: id 0");
	}
	still_serving(conn, ++id, "serving after truncated header");

	/* 2. header only, claiming its own length: EPROTO */
	len = make_req(++id, allow_prog, 1, 0, tid);
	mbuf.req.hdr.length = SF_PROTO_HDR_SIZE;
	if (roundtrip(conn, &mbuf, SF_PROTO_HDR_SIZE, NULL, 0, &r)) {
		ASSERT_EQ(r.error, EPROTO, "truncated body: EPROTO");
		ASSERT_EQ(r.request_id, id, "truncated body: id echoed");
	}
	still_serving(conn, ++id, "serving after truncated body");

	/* 3. datagram larger than SF_PROTO_MAX_MSG: EMSGSIZE */
	len = make_req(++id, allow_prog, 1, 0, tid);
	mbuf.req.hdr.length = 70000;
	mbuf.req.n_insns = (70000 - SF_PROTO_ATTACH_REQ_SIZE) / 8;
	if (roundtrip(conn, &mbuf, 70000, NULL, 0, &r))
		ASSERT_EQ(r.error, EMSGSIZE, "oversized datagram: EMSGSIZE");
	still_serving(conn, ++id, "serving after oversized datagram");

	/* 4. header claims more than SF_PROTO_MAX_MSG: EMSGSIZE */
	len = make_req(++id, allow_prog, 1, 0, tid);
	mbuf.req.hdr.length = 0x7fffffff;
	if (roundtrip(conn, &mbuf, len, NULL, 0, &r))
		ASSERT_EQ(r.error, EMSGSIZE, "oversized hdr.length: EMSGSIZE");

	/* 5. hdr.length and the datagram disagree: EPROTO */
	len = make_req(++id, allow_prog, 1, 0, tid);
	mbuf.req.hdr.length = len + 8;
	if (roundtrip(conn, &mbuf, len, NULL, 0, &r))
		ASSERT_EQ(r.error, EPROTO, "length mismatch: EPROTO");

	/* 6. wrong magic, 7. wrong version, 8. unknown type: EPROTO */
	len = make_req(++id, allow_prog, 1, 0, tid);
	mbuf.req.hdr.magic = 0x12345678;
	if (roundtrip(conn, &mbuf, len, NULL, 0, &r))
		ASSERT_EQ(r.error, EPROTO, "wrong magic: EPROTO");
	len = make_req(++id, allow_prog, 1, 0, tid);
	mbuf.req.hdr.version = SF_PROTO_VERSION + 1;
	if (roundtrip(conn, &mbuf, len, NULL, 0, &r)) {
		ASSERT_EQ(r.error, EPROTO, "wrong version: EPROTO");
		ASSERT_TRUE(strstr(r.message, "version") != NULL, "wrong version: says so");
	}
	len = make_req(++id, allow_prog, 1, 0, tid);
	mbuf.req.hdr.type = 99;
	if (roundtrip(conn, &mbuf, len, NULL, 0, &r))
		ASSERT_EQ(r.error, EPROTO, "unknown type: EPROTO");
	len = make_req(++id, allow_prog, 1, 0, tid);
	mbuf.req.hdr.type = SF_MSG_REPLY;
	if (roundtrip(conn, &mbuf, len, NULL, 0, &r))
		ASSERT_EQ(r.error, EPROTO, "a reply sent as a request: EPROTO");
	len = make_req(++id, allow_prog, 1, 0, tid);
	mbuf.req.hdr.type = 2; /* version 2's ATTACH reply: reserved */
	if (roundtrip(conn, &mbuf, len, NULL, 0, &r))
		ASSERT_EQ(r.error, EPROTO, "the reserved type 2: EPROTO");
	still_serving(conn, ++id, "serving after bad headers");

	/* 9. n_insns that does not match the bytes sent: EPROTO */
	len = make_req(++id, progs_kill_getppid, ARRAY_SIZE(progs_kill_getppid), 0, tid);
	mbuf.req.n_insns = 2;
	if (roundtrip(conn, &mbuf, len, NULL, 0, &r))
		ASSERT_EQ(r.error, EPROTO, "n_insns too small: EPROTO");
	len = make_req(++id, progs_kill_getppid, ARRAY_SIZE(progs_kill_getppid), 0, tid);
	mbuf.req.n_insns = 0xffffffff;
	if (roundtrip(conn, &mbuf, len, NULL, 0, &r))
		ASSERT_EQ(r.error, EPROTO, "n_insns 2^32-1: EPROTO");

	/* 10. zero instructions, consistently: EINVAL, as seccomp(2) */
	len = make_req(++id, allow_prog, 0, 0, tid);
	if (roundtrip(conn, &mbuf, len, NULL, 0, &r))
		ASSERT_EQ(r.error, EINVAL, "n_insns 0: EINVAL");
	/* 11. 4097 instructions, consistently: EINVAL */
	{
		static struct sock_filter big[4097];

		for (i = 0; i < 4097; i++)
			big[i] = allow_prog[0];
		len = make_req(++id, big, 4097, 0, tid);
		if (roundtrip(conn, &mbuf, len, NULL, 0, &r))
			ASSERT_EQ(r.error, EINVAL, "4097 insns: EINVAL");
	}
	/* 12. unknown flags: EINVAL, before anything is attached */
	len = make_req(++id, allow_prog, 1, 0x8000, tid);
	if (roundtrip(conn, &mbuf, len, NULL, 0, &r))
		ASSERT_EQ(r.error, EINVAL, "unknown flags: EINVAL");
	len = make_req(++id, allow_prog, 1, 0x4, tid); /* SPEC_ALLOW: not ours */
	if (roundtrip(conn, &mbuf, len, NULL, 0, &r))
		ASSERT_EQ(r.error, EINVAL, "flag 0x4: EINVAL");

	/* 13. a thread of another process (init), and a tid that is no
	 * thread at all: ESRCH, nothing attached to them */
	len = make_req(++id, allow_prog, 1, 0, 1);
	if (roundtrip(conn, &mbuf, len, NULL, 0, &r))
		ASSERT_EQ(r.error, ESRCH, "tid of another process: ESRCH");
	len = make_req(++id, allow_prog, 1, 0, -5);
	if (roundtrip(conn, &mbuf, len, NULL, 0, &r))
		ASSERT_EQ(r.error, ESRCH, "negative tid: ESRCH");

	/* 14. file descriptors attached: EINVAL, and the daemon closed them
	 * (the pipe loses its last reader once ours is closed too), on its
	 * closer's thread: soon after the reply */
	if (ASSERT_OK(pipe2(fds, O_CLOEXEC), "pipe")) {
		len = make_req(++id, allow_prog, 1, 0, tid);
		if (roundtrip(conn, &mbuf, len, &fds[0], 1, &r)) {
			ASSERT_EQ(r.error, EINVAL, "SCM_RIGHTS: EINVAL");
			ASSERT_EQ(r.request_id, id, "SCM_RIGHTS: id echoed");
		}
		close(fds[0]);
		ASSERT_TRUE(no_reader_soon(fds[1]), "daemon closed the passed fd");
		errno = 0;
		ASSERT_EQ(write(fds[1], "x", 1), -1, "a write to it fails");
		ASSERT_EQ(errno, EPIPE, "write to a pipe without readers: EPIPE");
		close(fds[1]);
		/* fds on an otherwise malformed request are closed as well */
		if (ASSERT_OK(pipe2(fds, O_CLOEXEC), "pipe")) {
			if (roundtrip(conn, &mbuf, 8, &fds[0], 1, &r))
				ASSERT_EQ(r.error, EPROTO, "SCM_RIGHTS + truncated: EPROTO");
			close(fds[0]);
			ASSERT_TRUE(no_reader_soon(fds[1]), "daemon closed the fd (2)");
			close(fds[1]);
		}
	}
	still_serving(conn, ++id, "serving after fds");

	/* 15. a request sent on our connection by another process (a child
	 * that inherited it): EACCES, a process may only attach to itself */
	{
		pid_t child;
		int status;

		len = make_req(++id, allow_prog, 1, 0, 0);
		fflush(stdout);
		child = fork();
		if (child == 0) {
			struct reply cr;

			if (send(conn, &mbuf, len, MSG_NOSIGNAL) != (ssize_t)len)
				_exit(1);
			cr.error = 0;
			if (recv(conn, &mbuf, sizeof(mbuf), 0) < (ssize_t)SF_PROTO_GREPLY_SIZE)
				_exit(2);
			memcpy(&cr.error, mbuf.bytes + offsetof(struct sf_reply, error),
			       sizeof(cr.error));
			_exit(cr.error == EACCES ? 0 : 3);
		}
		ASSERT_EQ(waitpid(child, &status, 0), child, "waitpid");
		ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			    "request from another process on our connection: EACCES");
	}
	still_serving(conn, ++id, "serving after a foreign sender");

	/* The silent client was not disturbed, and new clients get in. */
	still_serving(idle, ++id, "idle connection still served");
	close(conn);
	conn = sfd_connect(dm.sock);
	if (ASSERT_GE(conn, 0, "connect again"))
		still_serving(conn, ++id, "new connection served");
	close(conn);
	close(idle);
}

/* Runs fn in a forked child; returns its wait status. */
static int in_child(int (*fn)(void *), void *arg)
{
	int status = -1;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(fn(arg));
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

/* Exit codes: 0 = as expected; else the step that went wrong. */
static int child_eacces(void *arg)
{
	struct sock_fprog prog = { 1, (struct sock_filter *)allow_prog };

	struct sock_fprog bad = { ARRAY_SIZE(bad_prog), (struct sock_filter *)bad_prog };

	(void)arg;
	if (setgid(65534) || setuid(65534))
		return 10;
	if (sf_attach(&prog, 0) != -1)
		return 11;
	if (errno != EACCES)
		return 12;
	if (!strstr(sf_last_error(), "no_new_privs"))
		return 13;
	/* seccomp(2) checks the privilege before the program. */
	if (sf_attach(&bad, 0) != -1 || errno != EACCES)
		return 16;
	/* With no_new_privs the same uid may attach. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return 14;
	if (sf_attach(&prog, 0) != 0)
		return 15;
	return 0;
}

/* Root without no_new_privs has CAP_SYS_ADMIN: allowed, like seccomp(2). */
static int child_cap_sys_admin(void *arg)
{
	struct sock_fprog prog = { 1, (struct sock_filter *)allow_prog };

	(void)arg;
	return sf_attach(&prog, 0) == 0 ? 0 : 20 + (errno & 0x3f);
}

TEST(daemon_sf_attach_errno)
{
	SFD_AUTO_STOP;
	struct sock_fprog prog = { ARRAY_SIZE(bad_prog), (struct sock_filter *)bad_prog };
	char expect[256];
	int status;

	if (!sfd_start_sfilterd(&dm, false))
		return;

	/* EINVAL with the validator's own words */
	errno = 0;
	ASSERT_EQ(sf_attach(&prog, 0), -1, "invalid filter");
	ASSERT_EQ(errno, EINVAL, "invalid filter: EINVAL");
	ASSERT_STREQ(sf_last_error(), validator_message(bad_prog, ARRAY_SIZE(bad_prog),
							expect, sizeof(expect)),
		     "sf_last_error() is the validator's message");
	test_log("invalid filter: %s\n", sf_last_error());

	/* EFAULT, checked before anything is sent */
	errno = 0;
	ASSERT_EQ(sf_attach(NULL, 0), -1, "NULL prog");
	ASSERT_EQ(errno, EFAULT, "NULL prog: EFAULT");
	prog.filter = NULL;
	errno = 0;
	ASSERT_EQ(sf_attach(&prog, 0), -1, "NULL filter");
	ASSERT_EQ(errno, EFAULT, "NULL filter: EFAULT");
	prog.filter = (struct sock_filter *)8; /* unmapped */
	errno = 0;
	ASSERT_EQ(sf_attach(&prog, 0), -1, "unmapped filter");
	ASSERT_EQ(errno, EFAULT, "unmapped filter: EFAULT");

	/* EINVAL for flags and length, in seccomp(2)'s order: flags first */
	prog = (struct sock_fprog){ 1, (struct sock_filter *)allow_prog };
	errno = 0;
	ASSERT_EQ(sf_attach(&prog, 0x80), -1, "unknown flag");
	ASSERT_EQ(errno, EINVAL, "unknown flag: EINVAL");
	errno = 0;
	ASSERT_EQ(sf_attach(NULL, 0x80), -1, "unknown flag, NULL prog");
	ASSERT_EQ(errno, EINVAL, "flags are checked before the pointer");
	prog.len = 0;
	errno = 0;
	ASSERT_EQ(sf_attach(&prog, 0), -1, "len 0");
	ASSERT_EQ(errno, EINVAL, "len 0: EINVAL");
	prog.len = 4097;
	errno = 0;
	ASSERT_EQ(sf_attach(&prog, 0), -1, "len 4097");
	ASSERT_EQ(errno, EINVAL, "len 4097: EINVAL");

	/* EACCES: uid 65534, no no_new_privs; then allowed with it */
	status = in_child(child_eacces, NULL);
	ASSERT_TRUE(WIFEXITED(status), "EACCES child exits");
	ASSERT_EQ(WEXITSTATUS(status), 0, "EACCES child: step that failed (0 = none)");
	/* CAP_SYS_ADMIN suffices without no_new_privs */
	status = in_child(child_cap_sys_admin, NULL);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		    "root without no_new_privs may attach (CAP_SYS_ADMIN)");
}

TEST(daemon_unreachable_is_ehostdown)
{
	char dir[] = "/tmp/sftest-nodaemon-XXXXXX", path[100];
	struct sock_fprog prog = { 1, (struct sock_filter *)allow_prog };
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd;

	if (!ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp"))
		return;
	/* no socket file at all */
	snprintf(path, sizeof(path), "%s/none.sock", dir);
	setenv(SF_PROTO_SOCKET_ENV, path, 1);
	errno = 0;
	ASSERT_EQ(sf_attach(&prog, 0), -1, "no socket");
	ASSERT_EQ(errno, EHOSTDOWN, "no socket: EHOSTDOWN");
	ASSERT_TRUE(strstr(sf_last_error(), "not running") != NULL, "says not running");
	/* a socket file nobody listens on (a daemon that died): refused */
	snprintf(path, sizeof(path), "%s/dead.sock", dir);
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (ASSERT_OK(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), "bind")) {
		close(fd);
		setenv(SF_PROTO_SOCKET_ENV, path, 1);
		errno = 0;
		ASSERT_EQ(sf_attach(&prog, 0), -1, "refused");
		ASSERT_EQ(errno, EHOSTDOWN, "refused: EHOSTDOWN");
	}
	/* EFAULT and EINVAL still come first, without a daemon */
	errno = 0;
	ASSERT_EQ(sf_attach(NULL, 0), -1, "NULL without daemon");
	ASSERT_EQ(errno, EFAULT, "NULL without daemon: EFAULT");
	unsetenv(SF_PROTO_SOCKET_ENV);
	unlink(path);
	rmdir(dir);
}

/* Attaches progs_kill_getppid with no_new_privs, then calls getppid: must not
 * survive it. Exit codes name the step that went wrong. */
static int child_killed(void *arg)
{
	struct sock_fprog prog = { ARRAY_SIZE(progs_kill_getppid),
				   (struct sock_filter *)progs_kill_getppid };

	(void)arg;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return 30;
	if (sf_attach(&prog, 0) != 0) {
		printf("    sf_attach: %s: %s\n", strerror(errno), sf_last_error());
		fflush(stdout);
		return 31;
	}
	/* allowed calls still work */
	if (syscall(SYS_getpid) != getpid())
		return 32;
	syscall(SYS_getppid);
	return 33; /* survived a KILL_PROCESS */
}

/* The same filter, but getppid is never called: exits normally. */
static int child_not_killed(void *arg)
{
	struct sock_fprog prog = { ARRAY_SIZE(progs_kill_getppid),
				   (struct sock_filter *)progs_kill_getppid };
	char buf[16];
	int fds[2];

	(void)arg;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || sf_attach(&prog, 0) != 0)
		return 40;
	if (pipe(fds) || write(fds[1], "ok", 2) != 2 || read(fds[0], buf, 2) != 2)
		return 41;
	return 7;
}

TEST(daemon_attach_confines_caller)
{
	SFD_AUTO_STOP;
	int status;

	if (!sfd_start_sfilterd(&dm, false))
		return;
	status = in_child(child_not_killed, NULL);
	ASSERT_TRUE(WIFEXITED(status), "confined child, no denied call: exits");
	ASSERT_EQ(WEXITSTATUS(status), 7, "confined child: its own exit status");

	status = in_child(child_killed, NULL);
	test_log("child status 0x%x\n", status);
	if (WIFEXITED(status))
		ASSERT_EQ(WEXITSTATUS(status), 0, "child exited (step that failed)");
	ASSERT_TRUE(WIFSIGNALED(status), "child killed");
	ASSERT_EQ(WTERMSIG(status), SIGKILL, "killed by SIGKILL, not a catchable SIGSYS");
}

/* ---- sfrun ---------------------------------------------------------------
 * build/sfrun beside the runner (../sfrun, or ./sfrun in the guest). */

static char sfrun_path[PATH_MAX];

static bool find_sfrun(void)
{
	return sfd_find_bin("sfrun", NULL, sfrun_path, sizeof(sfrun_path));
}

/* Runs sfrun with the NULL-terminated arguments, stderr to /dev/null;
 * returns the wait status. */
static int run_sfrun(const char *arg, ...)
{
	const char *argv[16];
	int n = 0, status = -1;
	va_list ap;
	pid_t pid;

	argv[n++] = "sfrun";
	va_start(ap, arg);
	for (argv[n] = arg; argv[n] && n < 15; argv[n] = va_arg(ap, const char *))
		n++;
	va_end(ap);
	argv[n] = NULL;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0 && !getenv("SF_TEST_VERBOSE_SFRUN"))
			dup2(null, 2);
		execv(sfrun_path, (char *const *)argv);
		_exit(99);
	}
	if (pid > 0)
		waitpid(pid, &status, 0);
	return status;
}

static bool write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	bool ok = f && fputs(text, f) >= 0;

	if (f)
		fclose(f);
	return ASSERT_TRUE(ok, path);
}

#define EXITED(st, code) (WIFEXITED(st) && WEXITSTATUS(st) == (code))

TEST(sfrun_exit_statuses)
{
	SFD_AUTO_STOP;
	char allow[128], kill_uname[128], bad[128];
	int st;

	if (!find_sfrun()) {
		test_skip("no sfrun at ../sfrun or ./sfrun beside the test runner");
		return;
	}
	if (!sfd_start_sfilterd(&dm, false))
		return;
	snprintf(allow, sizeof(allow), "%s/allow.s", dm.dir);
	snprintf(kill_uname, sizeof(kill_uname), "%s/kill_uname.s", dm.dir);
	snprintf(bad, sizeof(bad), "%s/bad.s", dm.dir);
	if (!write_text(allow, "ret ALLOW\n") ||
	    !write_text(kill_uname, "ld nr\njeq #__NR_uname, k\nret ALLOW\nk: ret KILL_PROCESS\n") ||
	    !write_text(bad, "ld [3]\nret ALLOW\n"))
		return;

	st = run_sfrun("--filter", allow, "--", "/bin/sh", "-c", "exit 3", NULL);
	ASSERT_TRUE(EXITED(st, 3), "CMD's exit status");
	st = run_sfrun("--filter", allow, "--filter", allow, "--tsync", "--log",
		       "--fallback", "log", "--", "/bin/sh", "-c", "exit 0", NULL);
	ASSERT_TRUE(EXITED(st, 0), "two filters and every option");
	st = run_sfrun("--filter", allow, "--filter", kill_uname, "--", "uname", NULL);
	ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "CMD killed by its filter");
	st = run_sfrun("--filter", allow, "--", "/nonexistent/cmd", NULL);
	ASSERT_TRUE(EXITED(st, 127), "CMD not found: 127");
	st = run_sfrun("--filter", bad, "--", "/bin/sh", "-c", "exit 0", NULL);
	ASSERT_TRUE(EXITED(st, 125), "invalid filter: 125");
	st = run_sfrun("--filter", allow, NULL);
	ASSERT_TRUE(EXITED(st, 125), "no CMD: 125");
	st = run_sfrun("--bogus", "--", "/bin/true", NULL);
	ASSERT_TRUE(EXITED(st, 125), "unknown option: 125");
	setenv(SF_PROTO_SOCKET_ENV, "/nonexistent/sfilterd.sock", 1);
	st = run_sfrun("--filter", allow, "--", "/bin/sh", "-c", "exit 0", NULL);
	ASSERT_TRUE(EXITED(st, 125), "no daemon: 125");
	unlink(allow);
	unlink(kill_uname);
	unlink(bad);
}

/*
 * seccomp(2) makes no system call after installing the filter, so a
 * filter ported from it may deny everything sf_attach() itself uses. A
 * filter that kills recvfrom, recvmsg and close must not kill the caller
 * on its way out of sf_attach(), and must kill it on its next recvfrom:
 * the reply's recv is the last call under the old chain, whether the
 * daemon found the caller already in it or armed the chain before.
 */
static const struct sock_filter kill_own_io[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 45 /* recvfrom */, 3, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 47 /* recvmsg */, 2, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 3 /* close */, 1, 0),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
};

/* arg: a pipe's write end. Writes 'a' once sf_attach() returned, then
 * makes a recvfrom, which must not return. */
static int child_attach_then_recv(void *arg)
{
	struct sock_fprog prog = { ARRAY_SIZE(kill_own_io),
				   (struct sock_filter *)kill_own_io };
	int report = *(int *)arg, sv[2];
	char c;

	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, sv))
		return 41;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || sf_attach(&prog, 0) != 0)
		return 40;
	if (write(report, "a", 1) != 1)
		return 42;
	recvfrom(sv[0], &c, 1, 0, NULL, NULL);
	return 7;
}

TEST(sf_attach_makes_no_system_call_once_the_filter_is_in_force)
{
	SFD_AUTO_STOP;
	int i, status, rep[2], returned = 0, killed_next = 0;
	char c;

	if (!sfd_start_sfilterd(&dm, false) || !ASSERT_OK(pipe(rep), "pipe"))
		return;
	fcntl(rep[0], F_SETFL, O_NONBLOCK);
	for (i = 0; i < 100; i++) {
		bool back;

		status = in_child(child_attach_then_recv, &rep[1]);
		back = read(rep[0], &c, 1) == 1;
		returned += back;
		killed_next += back && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
		if (!back || !WIFSIGNALED(status))
			test_log("attempt %d: %s, status 0x%x\n", i,
				 back ? "returned" : "died in sf_attach", status);
	}
	ASSERT_EQ(returned, 100, "callers that returned from sf_attach() alive");
	ASSERT_EQ(killed_next, 100, "callers killed on their next recvfrom");
	close(rep[0]);
	close(rep[1]);
}

/* A caller that takes its time between sending the request and waiting
 * for the reply (busy in user space, making no system call, until the
 * parent raises *go) is not in its recv when the daemon attaches: the chain
 * is armed, the recv still runs under the old chain, and the next call is
 * filtered. A sleep instead of the spin would race: an arm set before the
 * sleep began is taken by the sleep's own syscall. arg: a pipe's write end. */
static volatile int *slow_go;

static int child_slow_to_receive(void *arg)
{
	int report = *(int *)arg, sv[2], fd;
	char reply[SF_PROTO_MAX_NOTE_REPLY];
	size_t len;
	char c;

	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, sv) ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return 41;
	fd = sfd_connect(getenv(SF_PROTO_SOCKET_ENV));
	if (fd < 0)
		return 42;
	len = make_req(9, kill_own_io, ARRAY_SIZE(kill_own_io), 0, 0);
	mbuf.req.reply_fd = fd;
	if (send(fd, &mbuf, len, MSG_NOSIGNAL) != (ssize_t)len)
		return 43;
	while (!*slow_go)
		__asm__ volatile("pause" ::: "memory");
	if (recv(fd, reply, sizeof(reply), 0) < (ssize_t)SF_PROTO_GREPLY_SIZE ||
	    ((struct sf_reply *)reply)->error != 0)
		return 44;
	if (write(report, "a", 1) != 1)
		return 45;
	recvfrom(sv[0], &c, 1, 0, NULL, NULL);
	return 7;
}

struct text { char s[4096]; };
static void keep_text(void *ctx, const struct sf_reply *r, const char *text)
{
	(void)r;
	snprintf(((struct text *)ctx)->s, sizeof(((struct text *)ctx)->s), "%s", text);
}

/* A number from the daemon's STATUS, found by its JSON key, or -1. */
static int status_number(const char *sock, const char *key)
{
	struct sf_msg_hdr h;
	struct text t = { "" };
	char k[64];
	const char *p;

	if (sfd_request(sock, &h, SF_MSG_STATUS, sizeof(h), keep_text, &t) != 0)
		return -1;
	snprintf(k, sizeof(k), "\"%s\":", key);
	p = strstr(t.s, k);
	return p ? atoi(p + strlen(k)) : -1;
}

TEST(a_caller_slow_to_wait_for_its_reply_is_armed_and_its_recv_runs_under_the_old_chain)
{
	/* A daemon slower than the caller's spin finds it in its recv
	 * after all (a direct attach): then spin longer. */
	static const useconds_t host[] = { 200000, 1000000, 3000000 },
				emulated[] = { 2000000, 5000000, 10000000 };
	const useconds_t *spins = test_is_emulated() ? emulated : host;
	int status, rep[2], attempt, armed = 0;
	SFD_AUTO_STOP;
	pid_t child;
	char c;

	if (!sfd_start_sfilterd(&dm, false))
		return;
	slow_go = mmap(NULL, sizeof(*slow_go), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!ASSERT_TRUE(slow_go != MAP_FAILED, "mmap"))
		return;
	for (attempt = 0; attempt < 3 && armed < 1; attempt++) {
		if (!ASSERT_OK(pipe(rep), "pipe"))
			return;
		*slow_go = 0;
		fflush(stdout);
		child = fork();
		if (child == 0)
			_exit(child_slow_to_receive(&rep[1]));
		usleep(spins[attempt]);
		*slow_go = 1;
		status = -1;
		waitpid(child, &status, 0);
		close(rep[1]);
		ASSERT_EQ(read(rep[0], &c, 1), 1, "the caller got its reply alive");
		close(rep[0]);
		ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
			    "the caller was killed on its next recvfrom");
		armed = status_number(dm.sock, "armed");
		test_log("spun %u us: %d armed so far\n", (unsigned)spins[attempt], armed);
	}
	ASSERT_GE(armed, 1, "the daemon armed the chain");
	/* The kernel side's failure counters are in STATUS; none moved. */
	ASSERT_EQ(status_number(dm.sock, "tailcall_failed"), 0, "no empty chain slot was hit");
	ASSERT_EQ(status_number(dm.sock, "fork_failed"), 0, "no fork went unconfined");
}

/* The event log is JSON lines; SIGHUP reopens it (log rotation). */
TEST(daemon_log_is_json_lines_and_sighup_reopens_it)
{
	SFD_AUTO_STOP;
	char rotated[160];
	/* 20 ms polls: 5 s, or 30 s under emulation, as sfd_log_wait() (the
	 * event passes the ring buffer, the daemon's loop and its log buffer). */
	int i, status, polls = test_is_emulated() ? 1500 : 250;

	if (!sfd_start_sfilterd(&dm, false))
		return;
	status = in_child(child_killed, NULL);
	ASSERT_TRUE(WIFSIGNALED(status), "first kill");
	ASSERT_TRUE(sfd_log_wait(&dm, "\"syscall\":\"getppid\""), "the kill is logged");

	snprintf(rotated, sizeof(rotated), "%s.1", dm.log);
	if (!ASSERT_OK(rename(dm.log, rotated), "rotate"))
		return;
	ASSERT_OK(kill(dm.pid, SIGHUP), "SIGHUP");
	for (i = 0; i < polls && access(dm.log, F_OK) != 0; i++)
		usleep(20000);
	ASSERT_OK(access(dm.log, F_OK), "a new log file after SIGHUP");
	status = in_child(child_killed, NULL);
	ASSERT_TRUE(WIFSIGNALED(status), "second kill");
	ASSERT_TRUE(sfd_log_wait(&dm, "\"syscall\":\"getppid\""),
		    "the second kill is in the new file");
	unlink(rotated);
}

/* systemd socket activation: the daemon serves the socket it is given as
 * fd 3 (LISTEN_PID / LISTEN_FDS), as dist/sfilterd.socket hands it over;
 * --socket then names the path for clients and logs only. */
TEST(daemon_serves_a_socket_activated_listener)
{
	SFD_AUTO;
	struct sock_fprog prog = { ARRAY_SIZE(allow_prog), (struct sock_filter *)allow_prog };
	int status = 0, i, connected = 0;

	dm.activated = true;
	if (!sfd_start_sfilterd(&dm, false))
		return;
	for (i = 0; i < 200 && !connected; i++) {
		pid_t c = fork();

		if (c == 0) {
			prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
			_exit(sf_attach(&prog, 0) == 0 ? 0 : errno);
		}
		waitpid(c, &status, 0);
		connected = WIFEXITED(status) && WEXITSTATUS(status) == 0;
		if (!connected)
			usleep(25000);
	}
	ASSERT_TRUE(connected, "sf_attach through the activated socket");
}
