// SPDX-License-Identifier: GPL-2.0-only
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

/* A render's body, shared by the answers that send it and the cache. */
struct rendered {
	unsigned int refs;
	size_t len;
	char *data;
};

struct conn {
	enum conn_state st;
	int fd;
	uint64_t deadline;
	size_t got;
	char in[SF_HTTP_MAX_HEAD];
	char hdr[256];
	size_t hdr_len;
	char text[64];          /* an error's body */
	const char *body;       /* r->data, text, or the root page */
	struct rendered *r;     /* a reference, or NULL */
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
	struct rendered *last;  /* the last render, for SF_HTTP_RENDER_MS */
	uint64_t last_at;
	struct conn conn[SF_HTTP_MAX_CONNS];
};

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

static void unref(struct rendered **r)
{
	if (*r && !--(*r)->refs) {
		free((*r)->data);
		free(*r);
	}
	*r = NULL;
}

static void set_body(struct conn *c, const char *body, size_t len)
{
	unref(&c->r);
	c->body = body;
	c->body_len = len;
}

static void conn_close(struct conn *c, bool reset)
{
	static const struct linger now = { 1, 0 };

	/* A reset drops whatever the kernel still queues for a client that
	 * does not read, rather than leaving it to the orphan timers. */
	if (reset)
		setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &now, sizeof(now));
	close(c->fd);
	set_body(c, NULL, 0);
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
			iov[1] = (struct iovec){ (char *)c->body, c->body_len };
			m.msg_iovlen = c->body_len ? 2 : 1;
		} else {
			iov[0] = (struct iovec){ (char *)c->body + (c->sent - c->hdr_len),
						 total - c->sent };
			m.msg_iovlen = 1;
		}
		r = sendmsg(c->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (io_stop(c, r, true))
			return;
		c->sent += (size_t)r;
	}
	set_body(c, NULL, 0);
	shutdown(c->fd, SHUT_WR);
	c->st = C_DRAIN;
}

/* The body of a scrape: the last render when it is younger than
 * SF_HTTP_RENDER_MS, else a new one (kept for the next scrapes); NULL
 * when the render failed. */
static struct rendered *scrape(struct sf_http *h)
{
	struct rendered *r = calloc(1, sizeof(*r));
	uint64_t now = now_ms();

	if (h->last && now - h->last_at < SF_HTTP_RENDER_MS) {
		free(r);
		h->last->refs++;
		return h->last;
	}
	if (!r)
		return NULL;
	if (h->fn(h->ctx, &r->data, &r->len) || (!r->data && r->len)) {
		free(r->data);
		free(r);
		return NULL;
	}
	unref(&h->last);
	r->refs = 2;
	h->last = r;
	h->last_at = now;
	return r;
}

/* The answer to a parsed head: a render for /metrics, a fixed text for
 * anything else. */
static void conn_answer(struct sf_http *h, struct conn *c, const struct sf_http_request *req)
{
	const char *type = SF_HTTP_TYPE_TEXT;
	int status = req->status;

	if (status == 200 && req->route == SF_HTTP_ROUTE_METRICS) {
		struct rendered *r = scrape(h);

		if (r) {
			set_body(c, r->data, r->len);
			c->r = r;
			type = SF_HTTP_TYPE_METRICS;
		} else {
			status = 500;
		}
	} else if (status == 200) {
		set_body(c, sf_http_root_page, strlen(sf_http_root_page));
		type = SF_HTTP_TYPE_HTML;
	}
	if (status != 200) {
		snprintf(c->text, sizeof(c->text), "%d %s\n", status, sf_http_reason(status));
		set_body(c, c->text, strlen(c->text));
	}
	c->hdr_len = sf_http_response_head(status, type, c->body_len, c->hdr, sizeof(c->hdr));
	if (req->head)
		set_body(c, NULL, 0);
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
	if (c->st == C_READ) {
		/* Best effort: a client that sent nothing may still read. */
		c->hdr_len = sf_http_response_head(408, SF_HTTP_TYPE_TEXT, 0, c->hdr,
						   sizeof(c->hdr));
		send(c->fd, c->hdr, c->hdr_len, MSG_NOSIGNAL | MSG_DONTWAIT);
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
		sf_http_addr_error(err, errsz, addr, why);
		return r;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		sf_http_addr_error(err, errsz, addr, strerror(ENOMEM));
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
	sf_http_addr_error(err, errsz, addr, strerror(errno));
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
	unref(&h->last);
	if (h->lfd >= 0)
		close(h->lfd);
	if (h->wake >= 0)
		close(h->wake);
	free(h);
}
