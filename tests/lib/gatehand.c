// SPDX-License-Identifier: GPL-2.0-only
#define _GNU_SOURCE
#include "gatehand.h"
#include "fdpass.h"
#include "c2e.h"
#include "proto.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/seccomp.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

int gatehand_send(const char *agent_path, int fd, const char *json, char *answer,
		  size_t size)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char cbuf[CMSG_SPACE(sizeof(int))] __attribute__((aligned(8))) = { 0 };
	struct iovec iov = { (void *)json, strlen(json) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	size_t got = 0;
	ssize_t n;
	int s, err = 0;

	answer[0] = '\0';
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", agent_path);
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	if (connect(s, (struct sockaddr *)&a, sizeof(a)) < 0) {
		err = -errno;
		goto out;
	}
	/* The agent's ready byte comes first; the answer line after it. */
	if (read(s, answer, 1) != 1) {
		err = -ECONNREFUSED;
		goto out;
	}
	if (fd >= 0)
		fdpass_rights(&mh, cbuf, &fd, 1);
	if (sendmsg(s, &mh, MSG_NOSIGNAL) < 0) {
		err = -errno;
		goto out;
	}
	shutdown(s, SHUT_WR);
	while (got + 1 < size && (n = read(s, answer + got, size - 1 - got)) > 0)
		got += (size_t)n;
	answer[got] = '\0';
out:
	close(s);
	return err;
}

int gatehand_gate(const struct sock_fprog *chain, size_t n, bool *killable)
{
	struct sock_filter *gate = NULL;
	struct sock_fprog p;
	size_t len = 0;
	int l, r;

	r = c2e_gate_build(chain, n, &gate, &len, NULL);
	if (r)
		return r;
	p = (struct sock_fprog){ (unsigned short)len, gate };
	if (killable)
		*killable = true;
	l = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			 SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV,
			 &p);
	if (l < 0 && errno == EINVAL) {
		if (killable)
			*killable = false;
		l = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
				 SECCOMP_FILTER_FLAG_NEW_LISTENER, &p);
	}
	r = l < 0 ? -errno : l;
	free(gate);
	return r;
}

int gatehand_install(const struct sock_fprog *chain, size_t n, const char *agent_path,
		     char *msg, size_t msz)
{
	char json[512], answer[512];
	bool killable;
	int l, r;

	msg[0] = '\0';
	l = gatehand_gate(chain, n, &killable);
	if (l < 0) {
		snprintf(msg, msz, "the gate: %s", strerror(-l));
		return l;
	}
	snprintf(json, sizeof(json),
		 "{\"ociVersion\":\"1.0.2\",\"fds\":[\"seccompFd\"],\"pid\":%d,"
		 "\"metadata\":\"" SF_PROTO_AGENT_SELF "%s\",\"state\":{\"ociVersion\":\"1.0.2\",\"id\":\"\","
		 "\"status\":\"running\",\"pid\":%d,\"bundle\":\"\"}}", getpid(),
		 killable ? " killable" : "", getpid());
	r = gatehand_send(agent_path, l, json, answer, sizeof(answer));
	close(l);
	if (r) {
		snprintf(msg, msz, "agent %s: %s", agent_path, strerror(-r));
		return r;
	}
	snprintf(msg, msz, "%s", answer);
	return strstr(answer, "\"error\":0") ? 0 : -EPROTO;
}
