// SPDX-License-Identifier: GPL-2.0
/*
 * The client side of the protocol (loader/proto.h): connecting and waiting
 * for the daemon's hello, and sending a request with the credentials the
 * daemon decides by. Linked into libsfclient (hidden there), sfctl and the
 * tests.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "proto.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>

#define SF_PROTO_MAX_FDS 4

void sf_proto_header(struct sf_msg_hdr *h, uint16_t type, uint32_t len, uint32_t request_id)
{
	*h = (struct sf_msg_hdr){ .magic = SF_PROTO_MAGIC, .version = SF_PROTO_VERSION,
				  .type = type, .length = len, .request_id = request_id };
}

static int fail(int err)
{
	errno = err;
	return -err;
}

int sf_proto_connect(const char *path, int timeout_ms)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct sf_hello hello;
	struct pollfd p;
	ssize_t n;
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
	/* Requests go out only after the hello: the daemon knows by then
	 * which program image this process runs. */
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	while ((r = poll(&p, 1, timeout_ms)) < 0 && errno == EINTR)
		;
	if (r == 1)
		while ((n = recv(fd, &hello, sizeof(hello), MSG_DONTWAIT)) < 0 && errno == EINTR)
			;
	if (r != 1 || n != (ssize_t)sizeof(hello) || hello.hdr.magic != SF_PROTO_MAGIC ||
	    hello.hdr.type != SF_MSG_HELLO || hello.hdr.length != sizeof(hello)) {
		close(fd);
		/* A closed connection without a hello: the daemon refused us
		 * (a limit) or is gone. */
		return fail(r == 1 && n == 0 ? EHOSTDOWN : EPROTO);
	}
	if (hello.hdr.version != SF_PROTO_VERSION) {
		close(fd);
		return fail(EPROTO);
	}
	return fd;
}

int sf_proto_send(int fd, const struct iovec *iov, int iovcnt, const int *fds, int nfds)
{
	char cbuf[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(SF_PROTO_MAX_FDS * sizeof(int))];
	struct msghdr mh = { .msg_iov = (struct iovec *)iov, .msg_iovlen = iovcnt,
			     .msg_control = cbuf };
	struct ucred cred = { .pid = getpid(), .uid = geteuid(), .gid = getegid() };
	struct cmsghdr *cm;
	ssize_t n;

	if (nfds < 0 || nfds > SF_PROTO_MAX_FDS)
		return fail(EINVAL);
	memset(cbuf, 0, sizeof(cbuf));
	mh.msg_controllen = CMSG_SPACE(sizeof(cred)) +
			    (nfds ? CMSG_SPACE(nfds * sizeof(int)) : 0);
	/* The effective uid and gid: what the daemon decides by. The kernel
	 * accepts only ids this process holds at the time of sending. */
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_CREDENTIALS;
	cm->cmsg_len = CMSG_LEN(sizeof(cred));
	memcpy(CMSG_DATA(cm), &cred, sizeof(cred));
	if (nfds) {
		cm = CMSG_NXTHDR(&mh, cm);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, nfds * sizeof(int));
	}
	while ((n = sendmsg(fd, &mh, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	return n < 0 ? -errno : 0;
}
