// SPDX-License-Identifier: GPL-2.0-only
/* A stand-in seccomp agent (agent.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent.h"
#include "harness.h"
#include "c2e.h"
#include "proto.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#define MAX_LISTENERS 32

static bool is_listener(int fd)
{
	char link[64], target[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = '\0';
	return strcmp(target, "anon_inode:seccomp notify") == 0;
}

/* One connection: the JSON to its end, the descriptor, one answer line.
 * The listener kept, or -1. */
static int take(int conn, struct agent_seen *seen)
{
	union {
		struct cmsghdr align;
		char bytes[CMSG_SPACE(4 * sizeof(int))];
	} ctl;
	char buf[sizeof(seen->json)];
	size_t got = 0;
	int fd = -1;
	const char *answer;

	for (;;) {
		struct iovec iov = { buf + got, sizeof(buf) - 1 - got };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = &ctl, .msg_controllen = sizeof(ctl) };
		struct pollfd p = { conn, POLLIN, 0 };
		struct cmsghdr *c;
		ssize_t n;

		if (poll(&p, 1, 5000) != 1)
			break;
		n = recvmsg(conn, &mh, MSG_CMSG_CLOEXEC);
		if (n <= 0)
			break;
		for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
				int *fds = (int *)CMSG_DATA(c);
				size_t i, k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

				for (i = 0; i < k; i++) {
					if (fd < 0)
						fd = fds[i];
					else
						close(fds[i]);
				}
			}
		}
		got += (size_t)n;
		if (got >= sizeof(buf) - 1)
			break;
	}
	buf[got] = '\0';
	memcpy(seen->json, buf, got + 1);
	if (fd >= 0 && !is_listener(fd)) {
		seen->not_listener++;
		close(fd);
		fd = -1;
		answer = "{\"error\": 22, \"message\": \"not a seccomp listener\"}\n";
	} else if (fd < 0) {
		answer = "{\"error\": 22, \"message\": \"no descriptor\"}\n";
	} else if (seen->refuse) {
		seen->refused++;
		close(fd);
		fd = -1;
		answer = "{\"error\": 24, \"message\": \"the test agent refuses listeners\"}\n";
	} else {
		seen->listeners++;
		answer = "{\"error\": 0, \"message\": \"listener kept\"}\n";
	}
	if (send(conn, answer, strlen(answer), MSG_NOSIGNAL) < 0)
		(void)0; /* a sender that does not read the answer (runc) */
	return fd;
}

static void answer(int fd, const struct sock_fprog *judge, struct agent_seen *seen)
{
	struct seccomp_notif n;
	struct seccomp_notif_resp r;

	memset(&n, 0, sizeof(n));
	if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &n))
		return;
	memset(&r, 0, sizeof(r));
	r.id = n.id;
	r.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	if (seen->armed && judge) {
		uint32_t ret = c2e_interpret(judge->filter, judge->len, &n.data);
		uint32_t action = c2e_effective_action(ret);

		if (action == SECCOMP_RET_ERRNO) {
			r.flags = 0;
			r.error = -(int)((ret & SECCOMP_RET_DATA) > 4095 ? 4095 :
					  (ret & SECCOMP_RET_DATA));
		} else if (action != SECCOMP_RET_ALLOW && action != SECCOMP_RET_LOG) {
			r.flags = 0;
			r.error = -ENOSYS;
		}
		seen->judged++;
	}
	seen->last_nr = n.data.nr;
	if (n.data.nr >= 0 && n.data.nr < 512)
		seen->by_nr[n.data.nr]++;
	seen->last_pid = (int)n.pid;
	seen->notified++;
	ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &r);
}

static void serve(int lfd, const struct sock_fprog *judge, struct agent_seen *seen)
{
	struct pollfd p[1 + MAX_LISTENERS];
	int n = 1, i;

	p[0] = (struct pollfd){ lfd, POLLIN, 0 };
	for (;;) {
		if (poll(p, (nfds_t)n, -1) < 0)
			continue;
		if (p[0].revents & POLLIN) {
			int conn = accept4(lfd, NULL, NULL, SOCK_CLOEXEC), fd;

			if (conn >= 0) {
				seen->connections++;
				/* As sfilterd's agent: the connection is taken. */
				(void)!send(conn, (char[]){ SF_PROTO_AGENT_READY }, 1, MSG_NOSIGNAL);
				fd = take(conn, seen);
				close(conn);
				if (fd >= 0 && n < 1 + MAX_LISTENERS)
					p[n++] = (struct pollfd){ fd, POLLIN, 0 };
				else if (fd >= 0)
					close(fd);
			}
		}
		for (i = 1; i < n; i++) {
			if (p[i].revents & POLLIN) {
				answer(p[i].fd, judge, seen);
			} else if (p[i].revents & (POLLHUP | POLLERR | POLLNVAL)) {
				close(p[i].fd);
				p[i--] = p[--n];
			}
		}
	}
}

bool agent_start(struct agent *a, const char *sock, const struct sock_fprog *judge,
		 bool armed)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int lfd;

	memset(a, 0, sizeof(*a));
	if (!ASSERT_OK(sf_proto_agent_path(sock, a->path, sizeof(a->path)), "agent path"))
		return false;
	a->seen = mmap(NULL, sizeof(*a->seen), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!ASSERT_TRUE(a->seen != MAP_FAILED, "mmap")) {
		a->seen = NULL;
		return false;
	}
	a->seen->armed = armed;
	strcpy(addr.sun_path, a->path);
	unlink(a->path);
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (!ASSERT_TRUE(lfd >= 0, "agent socket") ||
	    !ASSERT_OK(bind(lfd, (struct sockaddr *)&addr, sizeof(addr)), "agent bind") ||
	    !ASSERT_OK(listen(lfd, 64), "agent listen")) {
		if (lfd >= 0)
			close(lfd);
		return false;
	}
	/* Anyone may hand in a listener, as to sfilterd's agent socket. */
	chmod(a->path, 0666);
	a->pid = fork();
	if (a->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		serve(lfd, judge, a->seen);
		_exit(0);
	}
	close(lfd);
	return ASSERT_TRUE(a->pid > 0, "fork the agent");
}

void agent_stop(struct agent *a)
{
	if (a->pid > 0) {
		kill(a->pid, SIGKILL);
		waitpid(a->pid, NULL, 0);
		a->pid = 0;
	}
	if (a->path[0])
		unlink(a->path);
	if (a->seen)
		munmap(a->seen, sizeof(*a->seen));
	a->seen = NULL;
}
