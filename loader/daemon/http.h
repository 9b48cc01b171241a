/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The metrics endpoint's HTTP server (sfilterd --metrics ADDR:PORT): a
 * minimal HTTP/1.0 and 1.1 server of GET /metrics, bounded in every way a
 * client could hold it:
 *
 *   - one poll loop on a thread of its own, no thread per connection;
 *   - at most SF_HTTP_MAX_CONNS connections at once; further ones wait in
 *     the listen backlog (SF_HTTP_BACKLOG) until a slot frees, because the
 *     listener is not polled while every slot is taken;
 *   - a request head of at most SF_HTTP_MAX_HEAD bytes (431 past it),
 *     complete within SF_HTTP_HEAD_MS of the accept (408 and closed
 *     otherwise);
 *   - the answer written non-blocking, and the client's close seen,
 *     within SF_HTTP_WRITE_MS of the answer being ready, else the
 *     connection is reset (SO_LINGER {1, 0}) so that no unread megabyte
 *     stays queued in the kernel for a client that does not read;
 *   - one request per connection (Connection: close); the render callback
 *     runs for a GET or HEAD of /metrics alone, at most once per scrape
 *     and once per SF_HTTP_RENDER_MS: scrapes closer together share the
 *     last body, so that a local client scraping in a loop costs the
 *     daemon ten renders a second at most.
 *
 * sf_http_open() may come before a fork (the listener is inherited);
 * sf_http_start() must come after it, as a thread does not survive one.
 *
 * Self-contained: it includes nothing of the daemon's, so that the tests
 * and the fuzzer link it alone.
 */
#ifndef SF_HTTP_H
#define SF_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#define SF_HTTP_MAX_CONNS 16
#define SF_HTTP_BACKLOG   64
#define SF_HTTP_MAX_HEAD  8192
#define SF_HTTP_HEAD_MS   5000
#define SF_HTTP_WRITE_MS  10000
#define SF_HTTP_RENDER_MS 100

struct sf_http;
/* Renders the body of one scrape: *body is malloc'd (the server frees
 * it), *len its length; 0 or -errno (the server answers 500). Called on
 * the server's own thread, one scrape at a time. */
typedef int (*sf_http_render_fn)(void *ctx, char **body, size_t *len);

/* Parses addr ("127.0.0.1:9464", "[::1]:9464", "localhost:9464", or
 * ":9464" meaning loopback only; all interfaces only when the address
 * says 0.0.0.0 or [::]), binds and listens. No host name other than
 * localhost: a static binary has no resolver worth trusting, and a name
 * resolved once at start is a surprise later. On failure -errno and one
 * line in err (e.g. "--metrics 127.0.0.1:9464: address already in use"). */
int sf_http_open(const char *addr, struct sf_http **out, char *err, size_t errsz);
/* The bound port (for tests that ask for port 0). */
int sf_http_port(const struct sf_http *h);
/* Serves on a thread of its own until sf_http_close(). 0 or -errno. */
int sf_http_start(struct sf_http *h, sf_http_render_fn fn, void *ctx);
/* Stops the thread (if started), closes every connection and the
 * listener, frees h. NULL is fine. */
void sf_http_close(struct sf_http *h);

/* What a request head asks for. */
enum sf_http_route {
	SF_HTTP_ROUTE_NONE,     /* an error status, or a path not served */
	SF_HTTP_ROUTE_ROOT,     /* "/": a pointer to /metrics */
	SF_HTTP_ROUTE_METRICS,  /* "/metrics" */
};

struct sf_http_request {
	int status;             /* 200, or the error status to answer */
	enum sf_http_route route;
	bool head;              /* HEAD: the headers alone */
	int minor;              /* HTTP/1.minor; -1 when the line was unread */
	size_t head_len;        /* bytes of the head through its empty line
				 * (or up to the first fault) */
};

/*
 * Parses the first len bytes a client sent (buf need not be
 * NUL-terminated; at most SF_HTTP_MAX_HEAD of them are looked at). Pure:
 * no allocation, no state, the same answer for the same bytes.
 *
 * Returns 0 while the head is incomplete and could still be valid (the
 * caller reads more), or 1 with *req filled: status 200 (route ROOT or
 * METRICS), 400 for a malformed head (known as soon as the bytes show
 * it: a binary or TLS client is answered at once), 404 for another path,
 * 405 for a method other than GET and HEAD, 413 for a request that
 * announces a body (none is accepted), 414 for a request line and 431
 * for a head longer than SF_HTTP_MAX_HEAD, 505 for an HTTP major version
 * other than 1 (1.2 and later minors read as 1.1, RFC 9110 section 2.5).
 */
int sf_http_parse_request(const char *buf, size_t len, struct sf_http_request *req);

/*
 * Parses ADDR:PORT as sf_http_open() does, into *ss and *len; 0, or
 * -EINVAL with the reason in *why (a static string). Pure, like the
 * request parser.
 */
int sf_http_parse_addr(const char *addr, struct sockaddr_storage *ss, socklen_t *len,
		       const char **why);
/* The one line of a failure: "--metrics ADDR: why", why's first letter
 * lowered (strerror()'s "Address already in use" reads "address ..."). */
void sf_http_addr_error(char *err, size_t errsz, const char *addr, const char *why);

/* Content types of the answers: the text exposition format 0.0.4 (what
 * Prometheus reads without OpenMetrics), errors, the root page. */
#define SF_HTTP_TYPE_METRICS "text/plain; version=0.0.4; charset=utf-8"
#define SF_HTTP_TYPE_TEXT    "text/plain; charset=utf-8"
#define SF_HTTP_TYPE_HTML    "text/html; charset=utf-8"

/* What GET / answers: a pointer to /metrics. */
extern const char sf_http_root_page[];
/* The reason phrase of a status the server answers. */
const char *sf_http_reason(int status);
/* The head of an answer into buf: the status line, Content-Type,
 * Content-Length len, Allow on a 405, Connection: close, the empty line.
 * Its length (cut to size - 1). */
size_t sf_http_response_head(int status, const char *type, size_t len, char *buf,
			     size_t size);

#endif
