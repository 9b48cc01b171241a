// SPDX-License-Identifier: GPL-2.0-only
/*
 * The metrics endpoint's HTTP server (loader/daemon/http.[ch], linked in
 * from build/libsfhttp.a) on its own, rendering fixed metrics
 * (tests/lib/scrape.h):
 *   - a scrape gets the rendered body with Prometheus' text-format
 *     headers; HEAD its headers; / a pointer; the render runs once per
 *     scrape, at most once per SF_HTTP_RENDER_MS, and its failure is a 500;
 *   - a port taken is -EADDRINUSE and one line; a bad address one line;
 *   - malformed, unknown and over-long requests get their status at once;
 *   - ":PORT" and "localhost:PORT" listen on loopback alone, 0.0.0.0 and
 *     [::] everywhere;
 *   - a client that never sends and one that never reads hold up no other
 *     scrape (p99 within 100 ms, as tests/test_daemon_dos.c bounds the
 *     daemon) and are dropped by the deadlines; connections past the
 *     limit wait in the backlog.
 * Prometheus itself: tests/test_metrics_prometheus.c. Each test runs in a
 * network namespace of its own (tests/lib/netns.h): its ports and
 * addresses are nobody else's.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "latency.h"
#include "daemon.h"
#include "http.h"
#include "netns.h"
#include "scrape.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>

#define TRIES 100
#define BIG_BODY (8u << 20)
#define ALIAS "192.0.2.1"

static double p99_bound_ms(void)
{
	return test_is_emulated() ? 2000 : 100;
}

/* A blocking TCP connection to ip:port, with a receive buffer of rcvbuf
 * bytes (0: the kernel's); -errno on failure. */
static int dial_buf(const char *ip, int port, int rcvbuf)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_port = htons(port) };
	struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_port = htons(port) };
	bool v6 = strchr(ip, ':');
	int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), r;

	if (fd < 0)
		return -errno;
	/* Before the connect, so that the window is as small from the start. */
	if (rcvbuf)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (v6 ? inet_pton(AF_INET6, ip, &a6.sin6_addr) != 1
	       : inet_pton(AF_INET, ip, &a4.sin_addr) != 1) {
		close(fd);
		return -EINVAL;
	}
	r = v6 ? connect(fd, (struct sockaddr *)&a6, sizeof(a6))
	       : connect(fd, (struct sockaddr *)&a4, sizeof(a4));
	if (r) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

static int dial(const char *ip, int port)
{
	return dial_buf(ip, port, 0);
}

/* Reads fd until EOF into out (NUL-terminated) for at most timeout_ms:
 * the bytes read, or -1 when the EOF did not come in time. */
static ssize_t read_all(int fd, char *out, size_t size, int timeout_ms)
{
	double end = test_now_ms() + timeout_ms;
	size_t got = 0;
	ssize_t n;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int left = (int)(end - test_now_ms());

		if (left <= 0 || poll(&p, 1, left) <= 0)
			return -1;
		n = recv(fd, out + got, size - 1 - got, 0);
		if (n <= 0 || got + (size_t)n >= size - 1) {
			got += n > 0 ? (size_t)n : 0;
			break;
		}
		got += (size_t)n;
	}
	out[got] = '\0';
	return (ssize_t)got;
}

/* Sends req on a new connection to ip:port and reads the answer: its
 * length, or -1 (the test failed). */
static ssize_t exchange(const char *ip, int port, const char *req, size_t len, char *out,
			size_t size)
{
	int fd = dial(ip, port);
	ssize_t n = -1;

	out[0] = '\0';
	if (!ASSERT_GE(fd, 0, "connect"))
		return -1;
	if (ASSERT_EQ(send(fd, req, len, MSG_NOSIGNAL), (ssize_t)len, "request sent"))
		n = read_all(fd, out, size, 3000);
	close(fd);
	ASSERT_GE(n, 0, "answered and closed within 3 s");
	return n;
}

static int status_of(const char *resp)
{
	int st = -1;

	return sscanf(resp, "HTTP/1.1 %d ", &st) == 1 ? st : -1;
}

/* The value of header name (with its ": ") in a response, into val. */
static bool header_is(const char *resp, const char *line)
{
	const char *end = strstr(resp, "\r\n\r\n"), *at = strstr(resp, line);

	return at && end && at < end && at[-1] == '\n' && at[strlen(line)] == '\r';
}

static const char *body_of(const char *resp)
{
	const char *b = strstr(resp, "\r\n\r\n");

	return b ? b + 4 : "";
}

/* This process's threads ("Threads:" of /proc/self/status), or -1. */
static int count_threads(void)
{
	char line[256];
	int n = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f) && sscanf(line, "Threads: %d", &n) != 1)
		;
	if (f)
		fclose(f);
	return n;
}

/* count_threads() once it is want, or after 5 s what it is then: a
 * joined thread has left glibc (its tid cleared at exit_mm()) before the
 * kernel drops it from the group's count (release_task()), which under
 * emulation can be milliseconds later. */
static int threads_settle(int want)
{
	int i, n = count_threads();

	for (i = 0; i < 500 && n != want; i++) {
		usleep(10000);
		n = count_threads();
	}
	return n;
}

TEST(metrics_scrape_returns_the_rendered_body_with_prometheus_headers)
{
	static char resp[1 << 16];
	struct scrape_render r = { 0 };
	struct sf_http *h;
	char *expect = NULL, want[64];
	size_t elen = 0;
	int fds, threads, port;
	ssize_t n;

	if (!scrape_private_net())
		return;
	fds = sfd_count_fds(getpid());
	threads = count_threads();
	h = scrape_serve("127.0.0.1:0", &r);
	if (!h)
		return;
	port = sf_http_port(h);
	ASSERT_GE(port, 1, "a port was bound");
	n = exchange("127.0.0.1", port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", 34, resp,
		     sizeof(resp));
	test_log("%.400s\n", resp);
	ASSERT_EQ(status_of(resp), 200, "GET /metrics status");
	ASSERT_TRUE(header_is(resp, "Content-Type: text/plain; version=0.0.4; charset=utf-8"),
		    "Content-Type of the text format 0.0.4");
	ASSERT_TRUE(header_is(resp, "Connection: close"), "Connection: close");
	ASSERT_EQ(atomic_load(&r.calls), 1, "one render for one scrape");
	/* The body is the render's, byte for byte (the second render gives
	 * what the first would with its counters one scrape further). */
	atomic_store(&r.calls, 0);
	ASSERT_OK(scrape_render(&r, &expect, &elen), "render again");
	snprintf(want, sizeof(want), "Content-Length: %zu", elen);
	ASSERT_TRUE(header_is(resp, want), want);
	ASSERT_TRUE(n > 0 && strlen(body_of(resp)) == elen &&
		    !memcmp(body_of(resp), expect, elen), "the body is the rendered one");
	free(expect);
	atomic_store(&r.calls, 0);

	/* A HEAD right after shares the GET's render: the same length. */
	exchange("127.0.0.1", port, "HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n", 35, resp,
		 sizeof(resp));
	ASSERT_EQ(status_of(resp), 200, "HEAD /metrics");
	ASSERT_TRUE(header_is(resp, want), "HEAD gives the Content-Length of the GET");
	ASSERT_STREQ(body_of(resp), "", "HEAD: no body");
	ASSERT_EQ(atomic_load(&r.calls), 0, "no render for a scrape within SF_HTTP_RENDER_MS");
	exchange("127.0.0.1", port, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", 27, resp, sizeof(resp));
	ASSERT_EQ(status_of(resp), 200, "GET /");
	ASSERT_TRUE(header_is(resp, "Content-Type: text/html; charset=utf-8"), "/ is HTML");
	ASSERT_TRUE(strstr(body_of(resp), "href=\"/metrics\"") != NULL, "/ points to /metrics");

	/* HTTP/1.0 (no Host needed) with a query string, once the last
	 * render is older than SF_HTTP_RENDER_MS: a render of its own. */
	usleep((SF_HTTP_RENDER_MS + 20) * 1000);
	exchange("127.0.0.1", port, "GET /metrics?x=1 HTTP/1.0\r\n\r\n", 29, resp, sizeof(resp));
	ASSERT_EQ(status_of(resp), 200, "HTTP/1.0 GET /metrics?x=1");
	ASSERT_EQ(atomic_load(&r.calls), 1, "one render for the scrape");

	/* A render that fails is a 500 (and is not kept), and the next
	 * scrape renders again. */
	usleep((SF_HTTP_RENDER_MS + 20) * 1000);
	atomic_store(&r.fail, -EIO);
	exchange("127.0.0.1", port, "GET /metrics HTTP/1.0\r\n\r\n", 25, resp, sizeof(resp));
	ASSERT_EQ(status_of(resp), 500, "a failed render: 500");
	atomic_store(&r.fail, 0);
	exchange("127.0.0.1", port, "GET /metrics HTTP/1.0\r\n\r\n", 25, resp, sizeof(resp));
	ASSERT_EQ(status_of(resp), 200, "the next scrape");
	ASSERT_EQ(atomic_load(&r.calls), 3, "a render each");

	/* A client scraping in a loop: ten renders a second at most. */
	{
		double t0 = test_now_ms();
		int scrapes = 0, calls0 = atomic_load(&r.calls), renders;

		while (test_now_ms() - t0 < 1000) {
			exchange("127.0.0.1", port, "GET /metrics HTTP/1.0\r\n\r\n", 25, resp,
				 sizeof(resp));
			scrapes += status_of(resp) == 200;
		}
		renders = atomic_load(&r.calls) - calls0;
		test_log("scraping for 1 s: %d scrapes, %d renders\n", scrapes, renders);
		ASSERT_TRUE(renders >= 1 && renders <= 1000 / SF_HTTP_RENDER_MS + 1,
			    "at most one render per SF_HTTP_RENDER_MS");
		ASSERT_GE(scrapes, 2 * renders, "scrapes share renders");
	}

	sf_http_close(h);
	ASSERT_EQ(sfd_count_fds(getpid()), fds, "every descriptor closed");
	ASSERT_EQ(threads_settle(threads), threads, "the server's thread is gone");
}

TEST(metrics_port_taken_or_bad_address_is_one_line_and_an_error)
{
	static const struct { const char *addr, *why; } bad[] = {
		{ "9464", "expected ADDR:PORT" },
		{ "", "expected ADDR:PORT" },
		{ "example.com:9464", "not a numeric address or localhost" },
		{ "::1:9464", "an IPv6 address goes in brackets" },
		{ "[::1]9464", "expected ADDR:PORT" },
		{ "[fe80::1%lo]:9464", "not a numeric IPv6 address" },
		{ "127.0.0.1:65536", "the port is not a number" },
		{ "127.0.0.1:", "the port is not a number" },
		{ "127.0.0.1:-1", "the port is not a number" },
		{ "127.0.0.1:80x", "the port is not a number" },
	};
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	struct sf_http *h = (struct sf_http *)&a;
	char addr[64], err[256], want[128];
	int l, fds, r;
	size_t i;

	if (!scrape_private_net())
		return;
	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (!ASSERT_GE(l, 0, "socket") ||
	    !ASSERT_OK(bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1) ||
		       getsockname(l, (struct sockaddr *)&a, &al), "a listener of ours"))
		return;
	fds = sfd_count_fds(getpid());
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", ntohs(a.sin_port));
	r = sf_http_open(addr, &h, err, sizeof(err));
	ASSERT_EQ(r, -EADDRINUSE, "a port taken: -EADDRINUSE");
	snprintf(want, sizeof(want), "--metrics %s: address already in use", addr);
	ASSERT_STREQ(err, want, "the one line");
	ASSERT_TRUE(h == NULL, "no server");
	ASSERT_EQ(sfd_count_fds(getpid()), fds, "nothing left open");
	close(l);

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		h = (struct sf_http *)&a;
		err[0] = '\0';
		r = sf_http_open(bad[i].addr, &h, err, sizeof(err));
		test_log("%-20s -> %d %s\n", bad[i].addr, r, err);
		snprintf(want, sizeof(want), "--metrics %s: %s", bad[i].addr, bad[i].why);
		ASSERT_EQ(r, -EINVAL, bad[i].addr);
		ASSERT_TRUE(!strncmp(err, want, strlen(want)) && !strchr(err, '\n'), want);
		ASSERT_TRUE(h == NULL, "no server");
	}
	ASSERT_EQ(sfd_count_fds(getpid()), fds - 1, "nothing left open");
}

TEST(metrics_malformed_unknown_and_overlong_requests_get_their_status_at_once)
{
	static char resp[1 << 16], big[SF_HTTP_MAX_HEAD + 64];
	static const struct { const char *req; int status; } cases[] = {
		{ "GARBAGE\r\n\r\n", 400 },
		{ "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 400 },    /* a TLS hello */
		{ "GET /metrics\r\n\r\n", 400 },                            /* HTTP/0.9 */
		{ "GET  /metrics HTTP/1.1\r\nHost: x\r\n\r\n", 400 },
		{ "GET /metrics HTTP/1.1\r\n\r\n", 400 },                   /* no Host */
		{ "GET /metrics HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400 },
		{ "GET /metrics HTTP/1.1\r\nHost : x\r\n\r\n", 400 },
		{ "GET /metrics HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n", 400 },
		{ "GET /metrics HTTP/1.1\r\nHost: x\rX: y\r\n\r\n", 400 },
		{ "GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 1x\r\n\r\n", 400 },
		{ "GET metrics HTTP/1.1\r\nHost: x\r\n\r\n", 400 },
		{ "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n", 404 },
		{ "GET /metrics/ HTTP/1.1\r\nHost: x\r\n\r\n", 404 },
		{ "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc", 405 },
		{ "get /metrics HTTP/1.1\r\nHost: x\r\n\r\n", 405 },
		{ "GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc", 413 },
		{ "GET /metrics HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", 413 },
		{ "GET /metrics HTTP/2.0\r\n\r\n", 505 },
		{ "GET /metrics HTTP/1.1\r\nHost: x\r\nX: y\r\n", 0 },      /* 431, below */
	};
	struct scrape_render r = { 0 };
	struct sf_http *h;
	size_t i, len;
	double t;

	if (!scrape_private_net() || !(h = scrape_serve("127.0.0.1:0", &r)))
		return;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *req = cases[i].req;
		int want = cases[i].status;

		len = strlen(req);
		if (req[0] == '\x16')
			len = 11;
		if (!want) {
			/* A head that never ends within 8 KiB. */
			len = (size_t)snprintf(big, sizeof(big), "%s", req);
			while (len < SF_HTTP_MAX_HEAD + 32)
				len += (size_t)snprintf(big + len, sizeof(big) - len,
							"X-Filler: 0123456789abcdef\r\n");
			req = big;
			want = 431;
		}
		t = test_now_ms();
		exchange("127.0.0.1", sf_http_port(h), req, len, resp, sizeof(resp));
		t = test_now_ms() - t;
		test_log("%d in %.1f ms for %.40s\n", status_of(resp), t, req);
		ASSERT_EQ(status_of(resp), want, req);
		ASSERT_TRUE(t < 1000, "answered at once, not at a deadline");
		if (want == 405)
			ASSERT_TRUE(header_is(resp, "Allow: GET, HEAD"), "405 says Allow");
	}
	/* A request line longer than the head's bound. */
	memset(big, 'a', sizeof(big));
	memcpy(big, "GET /", 5);
	exchange("127.0.0.1", sf_http_port(h), big, sizeof(big), resp, sizeof(resp));
	ASSERT_EQ(status_of(resp), 414, "an 8 KiB request line");
	ASSERT_EQ(atomic_load(&r.calls), 0, "no render for any of them");
	sf_http_close(h);
}

/* Whether ip:port takes a connection (and answers a scrape). */
static bool reachable(const char *ip, int port)
{
	static char resp[1 << 16];
	int fd = dial(ip, port);
	bool ok;

	if (fd < 0) {
		test_log("%s port %d: %s\n", ip, port, strerror(-fd));
		return false;
	}
	ok = send(fd, "GET /metrics HTTP/1.0\r\n\r\n", 25, MSG_NOSIGNAL) == 25 &&
	     read_all(fd, resp, sizeof(resp), 3000) > 0 && status_of(resp) == 200;
	close(fd);
	return ok;
}

TEST(metrics_colon_port_and_localhost_listen_on_loopback_only)
{
	static const struct { const char *addr; bool v4, alias, v6; } cases[] = {
		{ ":0", true, false, false },
		{ "localhost:0", true, false, false },
		{ "127.0.0.1:0", true, false, false },
		{ "0.0.0.0:0", true, true, false },
		{ "[::1]:0", false, false, true },
		{ "[::]:0", true, true, true },
	};
	struct scrape_render r = { 0 };
	struct sf_http *h;
	bool v6;
	size_t i;
	int port, fd;

	if (!scrape_private_net())
		return;
	/* An address of this namespace's outside 127.0.0.0/8, as a network
	 * interface's would be. */
	if (!ASSERT_OK(netns_add_lo_alias(1, ALIAS), "add " ALIAS))
		return;
	fd = dial("::1", 1);
	v6 = fd != -EAFNOSUPPORT && fd != -EADDRNOTAVAIL;
	if (fd >= 0)
		close(fd);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[256] = "";

		if (cases[i].v6 && !v6) {
			test_skip_part(cases[i].addr, "no IPv6 loopback: %s", strerror(-fd));
			continue;
		}
		h = NULL;
		sf_http_open(cases[i].addr, &h, err, sizeof(err));
		if (!ASSERT_TRUE(h != NULL, err) ||
		    !ASSERT_OK(sf_http_start(h, scrape_render, &r), "start")) {
			sf_http_close(h);
			break;
		}
		port = sf_http_port(h);
		ASSERT_EQ(reachable("127.0.0.1", port), cases[i].v4, cases[i].addr);
		ASSERT_EQ(reachable(ALIAS, port), cases[i].alias, cases[i].addr);
		ASSERT_EQ(reachable("::1", port), cases[i].v6, cases[i].addr);
		test_log("%-12s port %5d: 127.0.0.1 %d, " ALIAS " %d, ::1 %d\n", cases[i].addr,
			 port, cases[i].v4, cases[i].alias, cases[i].v6);
		sf_http_close(h);
	}
}

/* TRIES scrapes one after the other while the server is held by others,
 * fewer when the time until stop (test_now_ms()) runs out first, as it may
 * under emulation: p50/p99/max printed, p99 checked against the bound. */
static void scrapes_stay_fast(int port, const char *while_what, double stop)
{
	static char resp[1 << 16];
	double ms[TRIES], t;
	char name[200];
	int n, ok = 0;

	for (n = 0; n < TRIES && (n < 10 || test_now_ms() < stop); n++) {
		t = test_now_ms();
		exchange("127.0.0.1", port, "GET /metrics HTTP/1.0\r\n\r\n", 25, resp,
			 sizeof(resp));
		ms[n] = test_now_ms() - t;
		ok += status_of(resp) == 200;
	}
	lat_sort(ms, n);
	test_log("scrapes %s, %d tries: p50 %.2f ms, p99 %.2f ms, max %.2f ms (%s)\n",
		 while_what, n, lat_pct(ms, n, 50), lat_pct(ms, n, 99), ms[n - 1], test_kernel_name());
	ASSERT_EQ(ok, n, "every scrape answered 200");
	snprintf(name, sizeof(name), "scrapes %s: p99 %.1f ms within %.0f ms", while_what,
		 lat_pct(ms, n, 99), p99_bound_ms());
	ASSERT_TRUE(lat_pct(ms, n, 99) <= p99_bound_ms(), name);
}

/* Waits until fd is readable or hung up, for at most timeout_ms; the
 * time it took, or -1. */
static double wait_event(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN | POLLRDHUP };
	double t = test_now_ms();

	return poll(&p, 1, timeout_ms) == 1 ? test_now_ms() - t : -1;
}

TEST(metrics_clients_that_never_send_or_never_read_hold_up_no_scrape_and_are_dropped)
{
	static char resp[4096];
	struct scrape_render r = { 0 };
	struct sf_http *h;
	double t_mute, t_deaf, waited;
	int mute, deaf, small = 4096, port, i, err = 0;
	socklen_t el = sizeof(err);

	if (!scrape_private_net() || !(h = scrape_serve("127.0.0.1:0", &r)))
		return;
	port = sf_http_port(h);
	/* One connects and sends nothing. */
	mute = dial("127.0.0.1", port);
	t_mute = test_now_ms();
	/* One asks for a body of 8 MiB and never reads it: with its receive
	 * buffer small, the server's writes stop at once. */
	atomic_store(&r.big, BIG_BODY);
	deaf = dial_buf("127.0.0.1", port, small);
	if (!ASSERT_GE(mute, 0, "the mute client connects") ||
	    !ASSERT_GE(deaf, 0, "the deaf client connects"))
		goto out;
	ASSERT_EQ(send(deaf, "GET /metrics HTTP/1.0\r\n\r\n", 25, MSG_NOSIGNAL), 25,
		  "the deaf client's request");
	for (i = 0; i < 500 && atomic_load(&r.calls) == 0; i++)
		usleep(10000);
	t_deaf = test_now_ms();
	ASSERT_EQ(atomic_load(&r.calls), 1, "the deaf client's answer rendered");
	atomic_store(&r.big, 0);
	/* The next scrapes render anew rather than share the 8 MiB. */
	usleep((SF_HTTP_RENDER_MS + 20) * 1000);

	/* Done before the mute client's deadline, so that its drop is
	 * seen as it happens. */
	scrapes_stay_fast(port, "beside a mute and a deaf client", t_mute + SF_HTTP_HEAD_MS - 1000);

	/* The mute one gets 408 at the head's deadline and is closed. */
	waited = wait_event(mute, SF_HTTP_HEAD_MS + 3000);
	waited = waited < 0 ? -1 : test_now_ms() - t_mute;
	test_log("mute client answered after %.0f ms\n", waited);
	ASSERT_TRUE(waited >= SF_HTTP_HEAD_MS - 100 && waited <= SF_HTTP_HEAD_MS + 2000,
		    "the mute client is dropped at the head's deadline");
	ASSERT_GE(read_all(mute, resp, sizeof(resp), 1000), 0, "then closed");
	ASSERT_EQ(status_of(resp), 408, "with a 408");

	/* The deaf one is reset at the write deadline: its unread megabytes
	 * do not stay queued. Its own small buffer is full, so what poll
	 * sees is the reset. */
	while (test_now_ms() - t_deaf < SF_HTTP_WRITE_MS - 1000)
		usleep(100000);
	ASSERT_EQ(getsockopt(deaf, SOL_SOCKET, SO_ERROR, &err, &el), 0, "SO_ERROR");
	ASSERT_EQ(err, 0, "the deaf client still connected a second before the deadline");
	{
		struct pollfd p = { .fd = deaf, .events = POLLRDHUP };

		poll(&p, 1, 4000);
		waited = test_now_ms() - t_deaf;
	}
	getsockopt(deaf, SOL_SOCKET, SO_ERROR, &err, &el);
	test_log("deaf client: %s after %.0f ms\n", strerror(err), waited);
	ASSERT_EQ(err, ECONNRESET, "the deaf client is reset");
	ASSERT_TRUE(waited >= SF_HTTP_WRITE_MS - 1000 && waited <= SF_HTTP_WRITE_MS + 2000,
		    "at the write deadline");
	scrapes_stay_fast(port, "after both were dropped", test_now_ms() + 5000);
out:
	if (mute >= 0)
		close(mute);
	if (deaf >= 0)
		close(deaf);
	sf_http_close(h);
}

TEST(metrics_connections_past_the_limit_wait_in_the_backlog_until_a_slot_frees)
{
	static char resp[1 << 16];
	struct scrape_render r = { 0 };
	struct sf_http *h;
	int mute[SF_HTTP_MAX_CONNS], fd, i, port, answered = 0;
	double t0, waited;

	if (!scrape_private_net() || !(h = scrape_serve("127.0.0.1:0", &r)))
		return;
	port = sf_http_port(h);
	t0 = test_now_ms();
	for (i = 0; i < SF_HTTP_MAX_CONNS; i++)
		mute[i] = dial("127.0.0.1", port);
	/* Every slot is held by a client that sends nothing: the kernel
	 * completes the next connection, which waits unread in the backlog. */
	usleep(200000);
	fd = dial("127.0.0.1", port);
	if (ASSERT_GE(fd, 0, "the next connection is taken (by the kernel)") &&
	    ASSERT_EQ(send(fd, "GET /metrics HTTP/1.0\r\n\r\n", 25, MSG_NOSIGNAL), 25,
		      "request")) {
		ASSERT_TRUE(wait_event(fd, 1000) < 0, "not answered while every slot is held");
		ASSERT_GE(read_all(fd, resp, sizeof(resp), SF_HTTP_HEAD_MS + 3000), 0,
			  "answered once a slot frees");
		waited = test_now_ms() - t0;
		test_log("the 17th connection answered %d after %.0f ms\n", status_of(resp),
			 waited);
		ASSERT_EQ(status_of(resp), 200, "a scrape");
		ASSERT_TRUE(waited >= SF_HTTP_HEAD_MS - 100, "after the head's deadline");
		close(fd);
	}
	for (i = 0; i < SF_HTTP_MAX_CONNS; i++) {
		if (mute[i] < 0)
			continue;
		answered += read_all(mute[i], resp, sizeof(resp), 3000) >= 0 &&
			    status_of(resp) == 408;
		close(mute[i]);
	}
	ASSERT_EQ(answered, SF_HTTP_MAX_CONNS, "every mute client got its 408");
	sf_http_close(h);
}

