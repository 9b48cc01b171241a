// SPDX-License-Identifier: GPL-2.0-only
/*
 * The listener holder (holder.h), the daemon's end: finding the holder or
 * starting one, and its requests. The process itself is holder_proc.c.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "holder_wire.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>

static uint64_t next_seq(void)
{
	static uint64_t seq;

	return __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED);
}

/* Sends q (qlen bytes, with fd when fd >= 0), numbered. 0 or -errno. */
static int send_req(int hfd, struct hreq *q, size_t qlen, int fd, int64_t deadline)
{
	int r;

	q->magic = HOLDER_MAGIC;
	q->seq = next_seq();
	for (;;) {
		r = hold_send(hfd, q, qlen, &fd, fd >= 0 ? 1 : 0);
		if (r != -EAGAIN && r != -EINTR)
			return r;
		if ((r = hold_wait(hfd, POLLOUT, deadline)) < 0)
			return r;
	}
}

/* Waits for the answer to the request (seq, op) into buf, with the
 * answer's descriptors into fds and *nfds. Answers to earlier requests
 * whose callers gave up are dropped. The answer's length, or -errno. */
static ssize_t recv_rep(int hfd, uint64_t seq, uint32_t op, void *buf, size_t size,
			int *fds, int *nfds, int64_t deadline)
{
	struct hrep *rep = buf;
	ssize_t n;
	int r;

	*nfds = 0;
	for (;;) {
		if ((r = hold_wait(hfd, POLLIN, deadline)) < 0)
			return r;
		n = hold_recv(hfd, buf, size, fds, nfds);
		if (n == -EAGAIN || n == -EINTR)
			continue;
		if (n == 0)
			return -ECONNRESET;
		if (n < 0)
			return n;
		if ((size_t)n >= sizeof(*rep) && rep->magic == HOLDER_MAGIC &&
		    rep->seq == seq && rep->op == op)
			return n;
		hold_close_fds(fds, *nfds);
		*nfds = 0;
	}
}

/*
 * Sends q (qlen bytes, with fd when fd >= 0) and waits for its answer into
 * buf, with the answer's descriptors into fds and *nfds. The answer's
 * length, or -errno.
 */
static ssize_t exchange(int hfd, struct hreq *q, size_t qlen, int fd, void *buf, size_t size,
			int *fds, int *nfds)
{
	int64_t deadline = hold_now_ms() + HOLDER_WAIT_MS;
	int r;

	*nfds = 0;
	r = send_req(hfd, q, qlen, fd, deadline);
	if (r < 0)
		return r;
	return recv_rep(hfd, q->seq, q->op, buf, size, fds, nfds, deadline);
}

/* A request that carries no descriptor and expects none back. */
static int simple(int hfd, uint32_t op, struct hrep *rep)
{
	struct hreq q = { .op = op };
	int fds[HOLDER_FDS_PER_MSG], nfds;
	ssize_t n;

	n = exchange(hfd, &q, HREQ_HEAD, -1, rep, sizeof(*rep), fds, &nfds);
	if (n < 0)
		return (int)n;
	hold_close_fds(fds, nfds);
	return nfds ? -EPROTO : rep->err;
}

/* The holder at fd answers a hello and runs as our euid. */
static int hello(int fd)
{
	struct hrep rep;
	struct ucred cr;
	socklen_t cl = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) < 0)
		return -errno;
	if (cr.uid != geteuid())
		return -EACCES;
	return simple(fd, HOP_HELLO, &rep);
}

static int connect_to(const struct sockaddr_un *addr)
{
	/* A full backlog makes connect() wait (unix_wait_for_peer()) as long
	 * as the send timeout allows. */
	struct timeval tv = { HOLDER_WAIT_MS / 1000, (HOLDER_WAIT_MS % 1000) * 1000 };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0), r;

	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0 ||
	    connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	if ((r = hello(fd)) < 0) {
		close(fd);
		return r;
	}
	return fd;
}

/*
 * Binds path (a stale socket file removed first), then starts the holder
 * on it, and returns once it listens. Bound here rather than in the
 * holder, so that a path that cannot be bound is the caller's error;
 * listened on by the holder, so that a connection's SO_PEERCRED names the
 * holder (unix_listen() records the caller's credentials).
 */
static int start_holder(const char *path, const struct sockaddr_un *addr)
{
	struct stat st;
	pid_t pid;
	int lfd, r, status, ready[2] = { -1, -1 };
	char byte;

	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return -EEXIST;
		unlink(path);   /* it refused our connection: nobody serves it */
	}
	lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		return -errno;
	if (bind(lfd, (const struct sockaddr *)addr, sizeof(*addr)) < 0) {
		r = -errno;
		goto out;
	}
	/* Connections of another uid are refused by the holder anyway; the
	 * mode keeps them from being made at all. */
	if (chmod(path, 0600) < 0 || stat(path, &st) < 0 || pipe2(ready, O_CLOEXEC) < 0) {
		r = -errno;
		goto fail;
	}
	pid = fork();
	if (pid < 0) {
		r = -errno;
		goto fail;
	}
	if (pid == 0) {
		/* A session of its own, then a grandchild that init (or the
		 * nearest subreaper) adopts when this child exits: the
		 * caller's death, its group's signals and its waits reach
		 * the holder no more. */
		if (setsid() < 0)
			_exit(1);
		pid = fork();
		if (pid == 0) {
			if (listen(lfd, 16) < 0 || write(ready[1], "", 1) != 1)
				_exit(1);
			hold_run(lfd, path, &st);
		}
		_exit(pid < 0);
	}
	close(ready[1]);
	ready[1] = -1;
	while ((r = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	if (r < 0)
		/* ECHILD: SIGCHLD ignored, the child reaped itself. */
		r = errno == ECHILD ? 0 : -errno;
	else
		r = WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -ECHILD;
	/* Its byte, or end of file when it died first. */
	if (r == 0 && (r = hold_wait(ready[0], POLLIN, hold_now_ms() + HOLDER_WAIT_MS)) == 0)
		r = read(ready[0], &byte, 1) == 1 ? 0 : -ECHILD;
	if (r == 0)
		goto out;
fail:
	unlink(path);
out:
	if (ready[0] >= 0)
		close(ready[0]);
	if (ready[1] >= 0)
		close(ready[1]);
	close(lfd);
	return r;
}

int holder_open(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd, r, tries;

	if (!path || strlen(path) >= sizeof(addr.sun_path))
		return -ENAMETOOLONG;
	strcpy(addr.sun_path, path);
	/* A holder about to exit idle may close a connection it did not
	 * answer; another opener may bind the path between our two steps:
	 * both are met by trying again. */
	for (tries = 0; tries < 3; tries++) {
		fd = connect_to(&addr);
		if (fd >= 0 || (fd != -ECONNREFUSED && fd != -ENOENT && fd != -ECONNRESET))
			return fd;
		r = start_holder(path, &addr);
		if (r == -EADDRINUSE)
			continue;
		if (r < 0)
			return r;
		fd = connect_to(&addr);
		if (fd != -ECONNRESET && fd != -ECONNREFUSED)
			return fd;
	}
	return fd;
}

int holder_put_send(int hfd, int fd, const void *meta, size_t len, uint64_t *seq)
{
	struct hreq q = { .op = HOP_PUT, .len = (uint32_t)len };
	int r;

	if (fd < 0)
		return -EBADF;
	if (len > HOLDER_META_MAX || (len && !meta))
		return -EINVAL;
	if (len)
		memcpy(q.meta, meta, len);
	r = send_req(hfd, &q, HREQ_HEAD + len, fd, hold_now_ms() + HOLDER_WAIT_MS);
	*seq = q.seq;
	return r;
}

int holder_put_wait(int hfd, uint64_t seq)
{
	struct hrep rep;
	int fds[HOLDER_FDS_PER_MSG], nfds;
	ssize_t n;

	n = recv_rep(hfd, seq, HOP_PUT, &rep, sizeof(rep), fds, &nfds,
		     hold_now_ms() + HOLDER_WAIT_MS);
	if (n < 0)
		return (int)n;
	hold_close_fds(fds, nfds);
	return rep.err;
}

int holder_put(int hfd, int fd, const void *meta, size_t len)
{
	uint64_t seq;
	int r = holder_put_send(hfd, fd, meta, len, &seq);

	return r < 0 ? r : holder_put_wait(hfd, seq);
}

int holder_take(int hfd, int (*fn)(void *ctx, int fd, const void *meta, size_t len), void *ctx)
{
	const size_t size = sizeof(struct hrep) + HOLDER_PAGE_BYTES;
	struct hreq q = { .op = HOP_TAKE };
	int fds[HOLDER_FDS_PER_MSG], nfds, handed = 0, i, r;
	char *page = malloc(size);
	const struct hrep *rep = (const struct hrep *)page;
	ssize_t n;

	if (!page)
		return -ENOMEM;
	for (;;) {
		size_t off = sizeof(*rep);

		n = exchange(hfd, &q, HREQ_HEAD, -1, page, size, fds, &nfds);
		if (n < 0) {
			r = (int)n;
			goto out;
		}
		if (rep->err < 0 || rep->count != (uint32_t)nfds) {
			hold_close_fds(fds, nfds);
			r = rep->err < 0 ? rep->err : -EPROTO;
			goto out;
		}
		for (i = 0; i < nfds; i++) {
			struct hent e;

			if (off + sizeof(e) > (size_t)n)
				break;
			memcpy(&e, page + off, sizeof(e));
			if (e.len > HOLDER_META_MAX || off + sizeof(e) + PAD8(e.len) > (size_t)n)
				break;
			q.after = e.id;
			r = fn(ctx, fds[i], page + off + sizeof(e), e.len);
			off += sizeof(e) + PAD8(e.len);
			if (r < 0) {
				hold_close_fds(fds + i + 1, nfds - i - 1);
				goto out;
			}
			handed++;
		}
		if (i < nfds) {
			hold_close_fds(fds + i, nfds - i);
			r = -EPROTO;
			goto out;
		}
		if (!rep->more || nfds == 0) {
			r = handed;
			goto out;
		}
	}
out:
	free(page);
	return r;
}

int holder_count(int hfd)
{
	struct hrep rep;
	int r = simple(hfd, HOP_COUNT, &rep);

	return r < 0 ? r : (int)rep.count;
}

int holder_stop(int hfd)
{
	int64_t deadline = hold_now_ms() + HOLDER_WAIT_MS;
	struct hrep rep;
	char byte;
	ssize_t n;
	int r = simple(hfd, HOP_STOP, &rep);

	if (r < 0)
		return r;
	/* Gone when its end of the connection is closed: at its exit, with
	 * every listener it kept (exit_files()). */
	for (;;) {
		if ((r = hold_wait(hfd, POLLIN, deadline)) < 0)
			return r;
		n = recv(hfd, &byte, 1, MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			return 0;
	}
}
