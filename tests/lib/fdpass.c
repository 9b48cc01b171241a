// SPDX-License-Identifier: GPL-2.0-only
#include "fdpass.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

void fdpass_rights(struct msghdr *mh, void *cbuf, const int *fds, int nfds)
{
	size_t size = (size_t)nfds * sizeof(int);
	struct cmsghdr *c;

	memset(cbuf, 0, CMSG_SPACE(size));
	mh->msg_control = cbuf;
	mh->msg_controllen = CMSG_SPACE(size);
	c = CMSG_FIRSTHDR(mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(size);
	memcpy(CMSG_DATA(c), fds, size);
}

int fdpass_send(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] __attribute__((aligned(8)));
	char byte = 'g';
	struct iovec iov = { &byte, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	fdpass_rights(&mh, cbuf, &fd, 1);
	return sendmsg(sock, &mh, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

int fdpass_recv(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte;
	struct iovec iov = { &byte, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &mh, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	c = CMSG_FIRSTHDR(&mh);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

int fdpass_listener(int sock, const struct sock_fprog *prog)
{
	int fd;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return 100 + errno;
	fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			  SECCOMP_FILTER_FLAG_NEW_LISTENER, prog);
	if (fd < 0)
		return 100 + errno;
	if (fdpass_send(sock, fd)) {
		close(fd);
		return 2;
	}
	close(fd);
	return 0;
}
