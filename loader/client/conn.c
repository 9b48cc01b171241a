// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The client side of the protocol (loader/proto/proto.h): connecting and
 * waiting for the daemon's hello, and sending a request with the
 * credentials the daemon decides by. The one protocol client: linked into
 * libsfclient (hidden there), sfctl, sfrun and the tests.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "client.h"
#include "proto.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>

#define SF_PROTO_MAX_FDS 4

static int fail(int err)
{
	errno = err;
	return -err;
}

int sf_proto_connect_start(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd, r;

	if (strlen(path) >= sizeof(addr.sun_path))
		return fail(EHOSTDOWN);
	strcpy(addr.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail(EHOSTDOWN);
	while ((r = connect(fd, (struct sockaddr *)&addr, sizeof(addr))) < 0 && errno == EINTR)
		;
	if (r < 0) {
		close(fd);
		return fail(EHOSTDOWN);
	}
	return fd;
}

int sf_proto_connect_finish(int fd, int timeout_ms, char *why, size_t why_size)
{
	union {
		struct sf_hello hello;
		struct sf_reply refusal;
		char bytes[SF_PROTO_MAX_NOTE_REPLY];
	} m;
	struct pollfd p;
	ssize_t n = -1;
	int r;

	if (why_size)
		why[0] = '\0';
	/* Requests go out only after the hello: the daemon knows by then
	 * which program image this process runs. */
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	while ((r = poll(&p, 1, timeout_ms)) < 0 && errno == EINTR)
		;
	if (r == 1)
		while ((n = recv(fd, &m, sizeof(m), MSG_DONTWAIT)) < 0 && errno == EINTR)
			;
	/* Refused (a connection limit): an error reply in place of the
	 * hello, then the end of the connection. */
	if (n > 0 && sf_proto_check_reply(&m, n) == 0 && m.refusal.hdr.request_id == 0 &&
	    m.refusal.error > 0) {
		if (why_size) {
			sf_proto_reply_message(&m.refusal, why, why_size);
			if (!why[0])
				snprintf(why, why_size, "sfilterd refused the connection");
		}
		close(fd);
		return fail(m.refusal.error);
	}
	if (r != 1 || n != (ssize_t)sizeof(m.hello) || m.hello.hdr.magic != SF_PROTO_MAGIC ||
	    m.hello.hdr.type != SF_MSG_HELLO || m.hello.hdr.length != sizeof(m.hello)) {
		close(fd);
		/* A closed connection without a hello: the daemon is gone. */
		return fail(r == 1 && n == 0 ? EHOSTDOWN : EPROTO);
	}
	if (m.hello.hdr.version != SF_PROTO_VERSION) {
		close(fd);
		return fail(EPROTO);
	}
	return fd;
}

int sf_proto_connect(const char *path, int timeout_ms, char *why, size_t why_size)
{
	int fd;

	if (why_size)
		why[0] = '\0';
	fd = sf_proto_connect_start(path);
	return fd < 0 ? fd : sf_proto_connect_finish(fd, timeout_ms, why, why_size);
}

int sf_proto_send(int fd, const struct iovec *iov, int iovcnt, const int *fds, int nfds)
{
	/* The effective uid and gid: what the daemon decides by. The kernel
	 * accepts only ids this process holds at the time of sending. */
	struct ucred cred = { .pid = getpid(), .uid = geteuid(), .gid = getegid() };

	return sf_proto_send_as(fd, iov, iovcnt, fds, nfds, &cred);
}

int sf_proto_send_as(int fd, const struct iovec *iov, int iovcnt, const int *fds, int nfds,
		     const struct ucred *cred)
{
	union {
		struct cmsghdr align;
		char bytes[CMSG_SPACE(sizeof(struct ucred)) +
			   CMSG_SPACE(SF_PROTO_MAX_FDS * sizeof(int))];
	} ctl;
	struct msghdr mh = { .msg_iov = (struct iovec *)iov, .msg_iovlen = iovcnt,
			     .msg_control = &ctl };
	ssize_t n;

	if (nfds < 0 || nfds > SF_PROTO_MAX_FDS)
		return fail(EINVAL);
	sf_proto_add_cmsg(&mh, SCM_CREDENTIALS, cred, sizeof(*cred));
	if (nfds)
		sf_proto_add_cmsg(&mh, SCM_RIGHTS, fds, nfds * sizeof(int));
	while ((n = sendmsg(fd, &mh, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	return n < 0 ? -errno : 0;
}
