// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The self-attach gate's hand-over on the wire (gate_wire.h): what H, or
 * the caller itself where the gate allows every call of it, sends to
 * sfilterd's agent socket and reads back, with the gate in and the
 * listener held by no one yet.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "gate_wire.h"
#include "client.h"
#include "proto.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>

/*
 * The hand-over's calls (sf_gate_wire_calls()). Their errors are told with
 * strerrordesc_np(), which never loads a translation (strerror() may open
 * a message catalog: a call the gate could send up).
 */
#if defined(__x86_64__) && defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 32)
#define HAVE_DIRECT 1
#define SYS_CALL(name, ...) syscall(SYS_##name, __VA_ARGS__)
#define errstr(e) (strerrordesc_np(e) ?: "unknown error")
#else
#define HAVE_DIRECT 0
#define SYS_CALL(name, ...) name(__VA_ARGS__)
#define errstr(e) strerror(e)
#endif

static long long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* What is left until deadline (CLOCK_MONOTONIC ms), for poll(): 0 when
 * it has passed. */
static int left_ms(long long deadline)
{
	long long left = deadline - now_ms();

	return left > 0 ? (int)left : 0;
}

/* The agent connection's first step, a stream socket connected to
 * <socket>.agent, or -errno with why. Made before anything is installed,
 * so that a daemon without an agent socket (or none at all) means no
 * gate. */
int sf_gate_agent_dial(char *why, size_t size)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd, err;
	long r;

	if (sf_proto_agent_path(sf_proto_socket_path(), addr.sun_path,
				sizeof(addr.sun_path))) {
		snprintf(why, size, "the agent socket's path is too long");
		return -ENAMETOOLONG;
	}
	fd = (int)SYS_CALL(socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = errno;
		snprintf(why, size, "socket: %s", errstr(err));
		return -err;
	}
	while ((r = SYS_CALL(connect, fd, (struct sockaddr *)&addr, sizeof(addr))) < 0 &&
	       errno == EINTR)
		;
	if (r < 0) {
		err = errno;
		snprintf(why, size, "no agent socket at %s: %s", addr.sun_path, errstr(err));
		SYS_CALL(close, fd);
		return -err;
	}
	return fd;
}

/* Its second: the agent says it took the connection; one over its limits
 * is closed without a word, and then no gate is installed. 0 or -EAGAIN
 * with why; fd is still the caller's. */
static int greeted_by(int fd, long long deadline, char *why, size_t size)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char b = 0;
	long r;

	while ((r = SYS_CALL(poll, &p, 1, left_ms(deadline))) < 0 && errno == EINTR)
		;
	if (r != 1 || SYS_CALL(recvfrom, fd, &b, 1, 0, NULL, NULL) != 1 ||
	    b != SF_PROTO_AGENT_READY) {
		snprintf(why, size, "sfilterd's agent did not take the connection (%s)",
			r == 0 ? "no answer" : "its limits, or no listener holder: see its log");
		return -EAGAIN;
	}
	return 0;
}

int sf_gate_agent_greeted(int fd, char *why, size_t size)
{
	return greeted_by(fd, now_ms() + SF_GATE_WAIT_ANSWER_MS, why, size);
}

static int connect_agent(long long deadline, char *why, size_t size)
{
	int fd = sf_gate_agent_dial(why, size);

	if (fd >= 0 && greeted_by(fd, deadline, why, size)) {
		SYS_CALL(close, fd);
		return -EAGAIN;
	}
	return fd;
}

/* The ContainerProcessState of the runtime-spec's seccomp agent protocol,
 * with the listener by SCM_RIGHTS, then the end of what is sent. */
static int send_listener(int sock, int listener, pid_t pid)
{
	union {
		struct cmsghdr align;
		char bytes[CMSG_SPACE(sizeof(int))];
	} ctl;
	char json[320];
	struct iovec iov;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	size_t sent = 0;
	long w;
	int n;

	n = snprintf(json, sizeof(json),
		     "{\"ociVersion\":\"1.0.2\",\"fds\":[\"%s\"],\"pid\":%d,"
		     "\"metadata\":\"%s\",\"state\":{\"ociVersion\":\"1.0.2\",\"id\":\"\","
		     "\"status\":\"running\",\"pid\":%d,\"bundle\":\"\"}}",
		     SF_PROTO_AGENT_FD_NAME, (int)pid, SF_PROTO_AGENT_SELF, (int)pid);
	mh.msg_control = &ctl;
	mh.msg_controllen = 0;
	sf_proto_add_cmsg(&mh, SCM_RIGHTS, &listener, sizeof(int));
	while (sent < (size_t)n) {
		iov = (struct iovec){ json + sent, (size_t)n - sent };
		w = SYS_CALL(sendmsg, sock, &mh, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EPIPE;
		sent += (size_t)w;
		mh.msg_control = NULL; /* the descriptor went with the first part */
		mh.msg_controllen = 0;
	}
	return SYS_CALL(shutdown, sock, SHUT_WR) ? -errno : 0;
}

/* The agent's answer line, {"error": N, "message": "..."}: 0 when it
 * keeps the listener, else an errno with why. */
static int read_answer(int sock, long long deadline, char *why, size_t size)
{
	char buf[1024];
	size_t got = 0;
	long error, n;

	while (got < sizeof(buf) - 1 && !memchr(buf, '\n', got)) {
		struct pollfd p = { .fd = sock, .events = POLLIN };
		int left = left_ms(deadline);
		long r;

		if (left <= 0) {
			snprintf(why, size, "sfilterd's agent did not answer in %d s",
				SF_GATE_WAIT_ANSWER_MS / 1000);
			return ETIMEDOUT;
		}
		r = SYS_CALL(poll, &p, 1, left);
		n = r == 1 ? SYS_CALL(recvfrom, sock, buf + got, sizeof(buf) - 1 - got, 0,
				      NULL, NULL) : 0;
		if ((r < 0 || n < 0) && errno == EINTR)
			continue;
		if (r < 0 || n < 0) {
			snprintf(why, size, "reading the agent's answer: %s", errstr(errno));
			return errno;
		}
		if (r == 0)
			continue;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	if (!sf_proto_json_int(buf, "error", &error) || error < 0 || error > 4095) {
		snprintf(why, size, "sfilterd's agent gave no answer (%zu bytes)", got);
		return EPROTO;
	}
	if (error) {
		char msg[128];

		sf_proto_json_string(buf, "message", msg, sizeof(msg));
		snprintf(why, size, "sfilterd's agent refused the listener: %s",
			msg[0] ? msg : errstr((int)error));
	}
	return (int)error;
}

/* Sends the listener on sock and reads the agent's answer: 0, or an
 * errno with why set. */
static int hand_over(int sock, int listener, pid_t pid, long long deadline, char *why,
		     size_t size)
{
	int err = -send_listener(sock, listener, pid);

	if (err)
		snprintf(why, size, "handing the listener to sfilterd's agent: %s", errstr(err));
	else
		err = read_answer(sock, deadline, why, size);
	return err;
}

/* The whole hand-over, by H or by the caller itself (the direct set): the
 * listener to the agent on sock, which is closed. 0 once the agent holds
 * it; else an errno with why, and the listener closed. */
bool sf_gate_daemon_away(int err)
{
	return err == EPIPE || err == ECONNRESET || err == EPROTO || err == ETIMEDOUT ||
	       err == EAGAIN;
}

int sf_gate_deliver(int sock, int listener, pid_t pid, char *why, size_t size)
{
	long long deadline;
	int err;

	err = hand_over(sock, listener, pid, now_ms() + SF_GATE_WAIT_ANSWER_MS, why, size);
	SYS_CALL(close, sock);
	/* The gate is in and cannot come out: a daemon that went away (a
	 * restart), or one whose holder could not keep the listener (EAGAIN),
	 * gets it again, or its successor does, for as long as the caller
	 * would wait for an answer: a bound in time, however long each try
	 * waits. A refusal stands. */
	for (deadline = now_ms() + SF_GATE_WAIT_ANSWER_MS;
	     sf_gate_daemon_away(err) && left_ms(deadline) > 0; ) {
		struct timespec retry = { 0, 50 * 1000 * 1000 };

		SYS_CALL(nanosleep, &retry, NULL);
		sock = connect_agent(deadline, why, size);
		if (sock < 0)
			continue;
		err = hand_over(sock, listener, pid, deadline, why, size);
		SYS_CALL(close, sock);
	}
	/* Nobody else will read it: closed, the calls it would hear fail
	 * with ENOSYS instead of waiting for ever. */
	if (err)
		SYS_CALL(close, listener);
	return err;
}

size_t sf_gate_wire_calls(const int **nrs)
{
#if HAVE_DIRECT
	static const int calls[] = {
		SYS_socket, SYS_connect, SYS_poll, SYS_recvfrom, SYS_sendmsg, SYS_shutdown,
		SYS_close, SYS_nanosleep, SYS_clock_gettime,
	};

	*nrs = calls;
	return sizeof(calls) / sizeof(calls[0]);
#else
	*nrs = NULL;
	return 0;
#endif
}
