// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The administration client (admin.h): ADMIN_ATTACH's request built, sent
 * with the target's pidfd, and its reply read, once, for sfctl and
 * sfilter-oci-hook. Nothing here is exported from libsfclient.so.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "admin.h"
#include "client.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>

/* How long a caller waits for the daemon's hello. */
#define HELLO_TIMEOUT_MS 10000

static int local_failure(struct sf_client_reply *reply, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Nothing answered: why, in reply->message; returns -err. */
static int local_failure(struct sf_client_reply *reply, int err, const char *fmt, ...)
{
	va_list ap;

	reply->answered = false;
	va_start(ap, fmt);
	vsnprintf(reply->message, sizeof(reply->message), fmt, ap);
	va_end(ap);
	errno = err;
	return -err;
}

/* The request: header left to the sender; NULL with -EMSGSIZE or -ENOMEM. */
static struct sf_admin_attach_req *build(pid_t tid, const char *cgroup,
					 const struct sock_filter *insns, size_t n,
					 unsigned int flags, size_t *len)
{
	size_t plen = cgroup ? strlen(cgroup) + 1 : 0;
	struct sf_admin_attach_req *req;

	if (n > SF_PROTO_MAX_MSG / sizeof(*insns) || plen > SF_PROTO_MAX_MSG ||
	    (*len = SF_PROTO_ADMIN_ATTACH_SIZE + n * sizeof(*insns) + plen) > SF_PROTO_MAX_MSG) {
		errno = EMSGSIZE;
		return NULL;
	}
	req = calloc(1, *len);
	if (!req)
		return NULL;
	req->flags = flags;
	req->pid = cgroup ? 0 : tid;
	req->n_insns = (uint32_t)n;
	req->path_len = (uint32_t)plen;
	memcpy(req->insns, insns, n * sizeof(*insns));
	if (plen)
		memcpy((char *)req->insns + n * sizeof(*insns), cgroup, plen);
	return req;
}

/* Reads the reply to request id into reply. An attach's reply carries
 * its target (a cgroup's path) and flags besides the note: any size up to
 * a whole message. */
static int read_reply(int fd, uint32_t id, struct sf_client_reply *reply)
{
	struct sf_reply *m = malloc(SF_PROTO_MAX_MSG);
	ssize_t n;

	if (!m)
		return local_failure(reply, ENOMEM, "%s", strerror(ENOMEM));
	while ((n = recv(fd, m, SF_PROTO_MAX_MSG, MSG_TRUNC)) < 0 && errno == EINTR)
		;
	if (n <= 0 || n > SF_PROTO_MAX_MSG || sf_proto_check_reply(m, n) != 0 ||
	    m->hdr.request_id != id) {
		free(m);
		if (n == 0)
			return local_failure(reply, ECONNRESET, "attach: no reply");
		return local_failure(reply, EPROTO, "malformed reply from sfilterd");
	}
	reply->answered = true;
	reply->error = m->error;
	reply->filter = m->id;
	snprintf(reply->text, sizeof(reply->text), "%s", m->text);
	sf_proto_reply_message(m, reply->message, sizeof(reply->message));
	free(m);
	if (reply->error > 0)
		errno = reply->error;
	/* A TSYNC conflict's -tid is the tid, positive, as seccomp(2) says it. */
	return -reply->error;
}

int sf_client_admin_attach_fd(int fd, pid_t tid, int pidfd, const char *cgroup,
			      const struct sock_filter *insns, size_t n, unsigned int flags,
			      struct sf_client_reply *reply)
{
	static uint32_t next_id;
	struct sf_admin_attach_req *req;
	struct iovec iov;
	uint32_t id = ++next_id;
	size_t len;
	int r;

	memset(reply, 0, sizeof(*reply));
	req = build(tid, cgroup, insns, n, flags, &len);
	if (!req)
		return local_failure(reply, errno, "%s", errno == EMSGSIZE ?
				     "request too large" : strerror(errno));
	sf_proto_header(&req->hdr, SF_MSG_ADMIN_ATTACH, (uint32_t)len, id);
	iov = (struct iovec){ req, len };
	r = sf_proto_send(fd, &iov, 1, &pidfd, cgroup || pidfd < 0 ? 0 : 1);
	free(req);
	/* The daemon takes descriptors only on an admin's connection; the
	 * kernel refuses them at the send (SO_PASSRIGHTS, Linux 6.16+). */
	if (r == -EPERM && !cgroup && pidfd >= 0)
		return local_failure(reply, EPERM, "sfilterd takes no pidfd on this connection: "
				     "administration needs uid 0 or the admin group when "
				     "connecting");
	if (r < 0)
		return local_failure(reply, -r, "send: %s", strerror(-r));
	return read_reply(fd, id, reply);
}

/* Why nothing answered at path (sf_proto_connect() said EHOSTDOWN). */
static int not_running(const char *path, struct sf_client_reply *reply)
{
	struct sockaddr_un addr;
	struct stat st;

	if (strlen(path) >= sizeof(addr.sun_path))
		return local_failure(reply, EHOSTDOWN, "not reachable (a socket path is at "
				     "most %zu bytes)", sizeof(addr.sun_path) - 1);
	if (stat(path, &st) < 0)
		return local_failure(reply, EHOSTDOWN, "not running (%s)", strerror(errno));
	if (!S_ISSOCK(st.st_mode))
		return local_failure(reply, EHOSTDOWN, "not running (not a socket)");
	return local_failure(reply, EHOSTDOWN, "not running (the socket accepts no "
			     "connection, or closed it without a hello)");
}

int sf_client_connect(const char *socket, struct sf_client_reply *reply)
{
	const char *path = socket ? socket : sf_proto_socket_path();
	char why[SF_PROTO_MAX_TEXT];
	int fd;

	fd = sf_proto_connect(path, HELLO_TIMEOUT_MS, why, sizeof(why));
	if (fd < 0 && why[0])
		return local_failure(reply, -fd, "refused the connection: %s: %s",
				     strerror(-fd), why);
	if (fd == -EPROTO)
		return local_failure(reply, EPROTO, "no hello (not sfilterd, or another "
				     "protocol version than %u)", SF_PROTO_VERSION);
	if (fd < 0)
		return not_running(path, reply);
	return fd;
}

int sf_client_admin_attach(const char *socket, pid_t tid, int pidfd, const char *cgroup,
			   const struct sock_filter *insns, size_t n, unsigned int flags,
			   struct sf_client_reply *reply)
{
	int fd, r;

	memset(reply, 0, sizeof(*reply));
	fd = sf_client_connect(socket, reply);
	if (fd < 0)
		return fd;
	r = sf_client_admin_attach_fd(fd, tid, pidfd, cgroup, insns, n, flags, reply);
	close(fd);
	errno = r < 0 ? -r : errno;
	return r;
}

/* One request (iov, its header made) on fd, and its reply. */
static int exchange_fd(int fd, struct iovec *iov, uint32_t id, struct sf_client_reply *reply)
{
	int r = sf_proto_send(fd, iov, 1, NULL, 0);

	if (r < 0)
		r = local_failure(reply, -r, "send: %s", strerror(-r));
	else
		r = read_reply(fd, id, reply);
	errno = r < 0 ? -r : errno;
	return r;
}

/* The same over a connection of its own. */
static int exchange(const char *socket, struct iovec *iov, uint32_t id,
		    struct sf_client_reply *reply)
{
	int fd = sf_client_connect(socket, reply), r;

	if (fd < 0)
		return fd;
	r = exchange_fd(fd, iov, id, reply);
	close(fd);
	errno = r < 0 ? -r : errno;
	return r;
}

int sf_client_record(const char *socket, uint32_t op, uint32_t filter_id,
		     struct sf_client_reply *reply)
{
	static uint32_t next_id;
	struct sf_record_req req = { .op = op, .filter_id = filter_id };
	struct iovec iov = { &req, sizeof(req) };
	uint32_t id = ++next_id;

	memset(reply, 0, sizeof(*reply));
	sf_proto_header(&req.hdr, SF_MSG_RECORD, sizeof(req), id);
	return exchange(socket, &iov, id, reply);
}

/* PROFILE on fd, or (fd < 0) over a connection of its own to socket. */
static int profile(const char *socket, int fd, uint32_t filter_id, const char *caps,
		   uint32_t flags, const char *json, size_t len, struct sf_client_reply *reply)
{
	static uint32_t next_id;
	size_t clen = strlen(caps) + 1, total = SF_PROTO_PROFILE_REQ_SIZE + clen + len;
	struct sf_profile_req *req;
	struct iovec iov;
	uint32_t id = ++next_id;
	int r;

	memset(reply, 0, sizeof(*reply));
	if (total > SF_PROTO_MAX_MSG)
		return local_failure(reply, EMSGSIZE, "the profile is too large to send "
				     "(%zu bytes; a message is at most %u)", len, SF_PROTO_MAX_MSG);
	req = calloc(1, total);
	if (!req)
		return local_failure(reply, ENOMEM, "%s", strerror(ENOMEM));
	req->filter_id = filter_id;
	req->flags = flags;
	req->caps_len = (uint32_t)clen;
	req->json_len = (uint32_t)len;
	memcpy(req->data, caps, clen);
	memcpy(req->data + clen, json, len);
	sf_proto_header(&req->hdr, SF_MSG_PROFILE, (uint32_t)total, id);
	iov = (struct iovec){ req, total };
	r = fd >= 0 ? exchange_fd(fd, &iov, id, reply) : exchange(socket, &iov, id, reply);
	free(req);
	return r;
}

int sf_client_profile(const char *socket, uint32_t filter_id, const char *caps, uint32_t flags,
		      const char *json, size_t len, struct sf_client_reply *reply)
{
	return profile(socket, -1, filter_id, caps, flags, json, len, reply);
}

int sf_client_profile_fd(int fd, uint32_t filter_id, const char *caps, uint32_t flags,
			 const char *json, size_t len, struct sf_client_reply *reply)
{
	return profile(NULL, fd, filter_id, caps, flags, json, len, reply);
}
