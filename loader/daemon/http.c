// SPDX-License-Identifier: GPL-2.0
/*
 * The metrics endpoint's HTTP server (http.h): one thread, one poll loop,
 * a fixed table of connections, each reading its head, then writing its
 * answer, then waiting for the client's close, each under a deadline.
 *
 * Every socket is non-blocking and every wait is poll(), so that no
 * client stalls another one or the daemon; a render (the daemon's
 * callback) is the one thing the loop waits for, once per scrape.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "http.h"

#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>

/* How long accepting waits after the descriptor table was full. */
#define ACCEPT_PAUSE_MS 100

enum conn_state { C_FREE, C_READ, C_WRITE, C_DRAIN };

struct conn {
	enum conn_state st;
	int fd;
	uint64_t deadline;
	size_t got;
	char in[SF_HTTP_MAX_HEAD];
	char hdr[256];
	size_t hdr_len;
	char text[64];          /* an error's body */
	char *body;             /* the render's (freed), or a static text */
	bool body_owned;
	size_t body_len;
	size_t sent;            /* of hdr_len + body_len */
};

struct sf_http {
	int lfd, wake, port;
	bool started;
	pthread_t thread;
	sf_http_render_fn fn;
	void *ctx;
	uint64_t accept_pause;  /* no accept before this time */
	struct conn conn[SF_HTTP_MAX_CONNS];
};

static const char ROOT_PAGE[] =
	"<html><head><title>sfilterd</title></head><body>"
	"<p>sfilterd: <a href=\"/metrics\">metrics</a></p></body></html>\n";

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

static const char *reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 413: return "Content Too Large";
	case 414: return "URI Too Long";
	case 431: return "Request Header Fields Too Large";
	case 505: return "HTTP Version Not Supported";
	default:  return "Internal Server Error";
	}
}

static void set_error_body(struct conn *c, int status)
{
	snprintf(c->text, sizeof(c->text), "%d %s\n", status, reason(status));
	c->body = c->text;
	c->body_owned = false;
	c->body_len = strlen(c->text);
}

static void conn_close(struct conn *c, bool reset)
{
	static const struct linger now = { 1, 0 };

	/* A reset drops whatever the kernel still queues for a client that
	 * does not read, rather than leaving it to the orphan timers. */
	if (reset)
		setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &now, sizeof(now));
	close(c->fd);
	if (c->body_owned)
		free(c->body);
	c->body = NULL;
	c->body_owned = false;
	c->fd = -1;
	c->st = C_FREE;
}

/* After a recv or a send: whether the caller stops there, with nothing
 * to do until poll says so again, or the connection closed (by a reset
 * when reset: the client is gone or failed). */
static bool io_stop(struct conn *c, ssize_t r, bool reset)
{
	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return true;
	if (r <= 0) {
		conn_close(c, reset);
		return true;
	}
	return false;
}

/* Sends what is left of the answer; on its end, half-closes and waits
 * for the client's close (so that unread bytes of the client's never
 * turn our close into a reset that could cut the answer short). */
static void conn_flush(struct conn *c)
{
	size_t total = c->hdr_len + c->body_len;

	while (c->sent < total) {
		struct iovec iov[2];
		struct msghdr m = { .msg_iov = iov };
		ssize_t r;

		if (c->sent < c->hdr_len) {
			iov[0] = (struct iovec){ c->hdr + c->sent, c->hdr_len - c->sent };
			iov[1] = (struct iovec){ c->body, c->body_len };
			m.msg_iovlen = c->body_len ? 2 : 1;
		} else {
			iov[0] = (struct iovec){ c->body + (c->sent - c->hdr_len),
						 total - c->sent };
			m.msg_iovlen = 1;
		}
		r = sendmsg(c->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (io_stop(c, r, true))
			return;
		c->sent += (size_t)r;
	}
	if (c->body_owned)
		free(c->body);
	c->body = NULL;
	c->body_owned = false;
	shutdown(c->fd, SHUT_WR);
	c->st = C_DRAIN;
}

/* The answer to a parsed head: the render for /metrics (once), a fixed
 * text for anything else. */
static void conn_answer(struct sf_http *h, struct conn *c, const struct sf_http_request *req)
{
	const char *type = "text/plain; charset=utf-8";
	int status = req->status;

	if (status == 200 && req->route == SF_HTTP_ROUTE_METRICS) {
		char *body = NULL;
		size_t len = 0;

		if (h->fn(h->ctx, &body, &len) == 0 && (body || !len)) {
			c->body = body;
			c->body_owned = true;
			c->body_len = len;
			type = "text/plain; version=0.0.4; charset=utf-8";
		} else {
			free(body);
			status = 500;
		}
	} else if (status == 200) {
		c->body = (char *)ROOT_PAGE;
		c->body_owned = false;
		c->body_len = sizeof(ROOT_PAGE) - 1;
		type = "text/html; charset=utf-8";
	}
	if (status != 200)
		set_error_body(c, status);
	c->hdr_len = (size_t)snprintf(c->hdr, sizeof(c->hdr),
		"HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s"
		"Connection: close\r\n\r\n", status, reason(status), type, c->body_len,
		status == 405 ? "Allow: GET, HEAD\r\n" : "");
	if (req->head && c->body_owned)
		free(c->body);
	if (req->head) {
		c->body = NULL;
		c->body_owned = false;
		c->body_len = 0;
	}
	c->sent = 0;
	c->st = C_WRITE;
	c->deadline = now_ms() + SF_HTTP_WRITE_MS;
	conn_flush(c);
}

static void conn_read(struct sf_http *h, struct conn *c)
{
	struct sf_http_request req;
	ssize_t r;

	/* A client that leaves before its head is whole is closed. */
	r = recv(c->fd, c->in + c->got, sizeof(c->in) - c->got, MSG_DONTWAIT);
	if (io_stop(c, r, false))
		return;
	c->got += (size_t)r;
	if (sf_http_parse_request(c->in, c->got, &req))
		conn_answer(h, c, &req);
}

static void conn_drain(struct conn *c)
{
	char sink[4096];
	ssize_t r;

	do
		r = recv(c->fd, sink, sizeof(sink), MSG_DONTWAIT);
	while (!io_stop(c, r, false));
}

static void conn_expire(struct conn *c)
{
	static const char timeout[] = "HTTP/1.1 408 Request Timeout\r\n"
		"Content-Length: 0\r\nConnection: close\r\n\r\n";

	if (c->st == C_READ) {
		/* Best effort: a client that sent nothing may still read. */
		send(c->fd, timeout, sizeof(timeout) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
		shutdown(c->fd, SHUT_WR);
	}
	/* A client that did not read its answer in time, or never closed. */
	conn_close(c, c->st != C_READ);
}

static struct conn *free_slot(struct sf_http *h)
{
	int i;

	for (i = 0; i < SF_HTTP_MAX_CONNS; i++)
		if (h->conn[i].st == C_FREE)
			return &h->conn[i];
	return NULL;
}

static void accept_some(struct sf_http *h)
{
	struct conn *c;
	int fd;

	while ((c = free_slot(h))) {
		fd = accept4(h->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM)
				h->accept_pause = now_ms() + ACCEPT_PAUSE_MS;
			/* EAGAIN, or a connection that died in the backlog
			 * (ECONNABORTED): the next turn tries again. */
			return;
		}
		c->fd = fd;
		c->st = C_READ;
		c->got = 0;
		c->deadline = now_ms() + SF_HTTP_HEAD_MS;
	}
}

static void *serve(void *arg)
{
	struct sf_http *h = arg;
	struct pollfd p[SF_HTTP_MAX_CONNS + 2];
	struct conn *who[SF_HTTP_MAX_CONNS + 2];

	for (;;) {
		uint64_t now = now_ms(), next = UINT64_MAX;
		int n = 0, i, timeout;
		bool listening;

		p[n++] = (struct pollfd){ .fd = h->wake, .events = POLLIN };
		listening = free_slot(h) && now >= h->accept_pause;
		if (listening)
			p[n++] = (struct pollfd){ .fd = h->lfd, .events = POLLIN };
		else if (free_slot(h) && h->accept_pause < next)
			next = h->accept_pause;
		for (i = 0; i < SF_HTTP_MAX_CONNS; i++) {
			struct conn *c = &h->conn[i];

			if (c->st == C_FREE)
				continue;
			who[n] = c;
			p[n++] = (struct pollfd){ .fd = c->fd,
				.events = c->st == C_WRITE ? POLLOUT : POLLIN };
			if (c->deadline < next)
				next = c->deadline;
		}
		timeout = next == UINT64_MAX ? -1 : next <= now ? 0 : (int)(next - now);
		if (poll(p, (nfds_t)n, timeout) < 0 && errno != EINTR)
			break;
		if (p[0].revents)
			break;
		for (i = listening ? 2 : 1; i < n; i++) {
			struct conn *c = who[i];

			if (p[i].revents & (POLLIN | POLLOUT | POLLERR | POLLHUP)) {
				if (c->st == C_READ)
					conn_read(h, c);
				else if (c->st == C_WRITE)
					conn_flush(c);
				else if (c->st == C_DRAIN)
					conn_drain(c);
			}
			if (c->st != C_FREE && now_ms() >= c->deadline)
				conn_expire(c);
		}
		if (listening && p[1].revents)
			accept_some(h);
	}
	return NULL;
}

/* "Address already in use" as "address already in use", for a line that
 * reads "--metrics ADDR: address already in use". */
static void fail_line(char *err, size_t errsz, const char *addr, const char *why)
{
	int n;

	if (!err || !errsz)
		return;
	n = snprintf(err, errsz, "--metrics %s: ", addr);
	if (n > 0 && (size_t)n < errsz) {
		snprintf(err + n, errsz - (size_t)n, "%s", why);
		err[n] = (char)tolower((unsigned char)err[n]);
	}
}

int sf_http_open(const char *addr, struct sf_http **out, char *err, size_t errsz)
{
	struct sockaddr_storage ss;
	socklen_t sl = 0;
	struct sf_http *h;
	const char *why;
	int one = 1, r, i;

	*out = NULL;
	if (!addr)
		addr = "";
	r = sf_http_parse_addr(addr, &ss, &sl, &why);
	if (r) {
		fail_line(err, errsz, addr, why);
		return r;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		fail_line(err, errsz, addr, strerror(ENOMEM));
		return -ENOMEM;
	}
	h->lfd = h->wake = -1;
	for (i = 0; i < SF_HTTP_MAX_CONNS; i++)
		h->conn[i].fd = -1;
	h->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	h->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (h->wake < 0 || h->lfd < 0)
		goto fail;
	/* A restarted daemon binds again while the old connections are in
	 * TIME_WAIT; a listening socket still refuses it (EADDRINUSE). */
	setsockopt(h->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6) {
		/* [::] is every interface of both families, as 0.0.0.0 is
		 * of one; a specific address is that address alone. */
		int v6only = !IN6_IS_ADDR_UNSPECIFIED(&((struct sockaddr_in6 *)&ss)->sin6_addr);

		setsockopt(h->lfd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof(v6only));
	}
	if (bind(h->lfd, (struct sockaddr *)&ss, sl) || listen(h->lfd, SF_HTTP_BACKLOG) ||
	    getsockname(h->lfd, (struct sockaddr *)&ss, &sl))
		goto fail;
	h->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
						 : ((struct sockaddr_in *)&ss)->sin_port);
	*out = h;
	return 0;
fail:
	r = -errno;
	fail_line(err, errsz, addr, strerror(errno));
	sf_http_close(h);
	return r;
}

int sf_http_port(const struct sf_http *h)
{
	return h->port;
}

int sf_http_start(struct sf_http *h, sf_http_render_fn fn, void *ctx)
{
	sigset_t all, old;
	int r;

	if (h->started || !fn)
		return -EINVAL;
	h->fn = fn;
	h->ctx = ctx;
	/* The daemon's signals stay with its own threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	r = pthread_create(&h->thread, NULL, serve, h);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r)
		return -r;
	h->started = true;
	return 0;
}

void sf_http_close(struct sf_http *h)
{
	uint64_t one = 1;
	int i;

	if (!h)
		return;
	if (h->started) {
		while (write(h->wake, &one, sizeof(one)) < 0 && errno == EINTR)
			;
		pthread_join(h->thread, NULL);
	}
	for (i = 0; i < SF_HTTP_MAX_CONNS; i++)
		if (h->conn[i].st != C_FREE)
			conn_close(&h->conn[i], true);
	if (h->lfd >= 0)
		close(h->lfd);
	if (h->wake >= 0)
		close(h->wake);
	free(h);
}
