// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the metrics server reads and writes (http.h), apart from the
 * server so that fuzz/fuzz_http.c links it alone: the request parser, a
 * pure function over the bytes a client sent; the --metrics address
 * parser; the head of an answer.
 *
 * It accepts what RFC 9112 asks a server to accept and no more: a request
 * line "METHOD SP target SP HTTP/1.d", header fields "name: value", lines
 * ended by CRLF or a bare LF (RFC 9112 section 2.2 allows a recipient to
 * take LF alone), and an empty line. Anything else is 400, so that what
 * it lets through is exactly what the server's answers assume.
 */
#include "http.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char sf_http_root_page[] =
	"<html><head><title>sfilterd</title></head><body>"
	"<p>sfilterd: <a href=\"/metrics\">metrics</a></p></body></html>\n";

static bool tchar(unsigned char c)
{
	return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* Control bytes other than HT, CR and LF never belong in a head. */
static bool ctl(unsigned char c)
{
	return (c < 0x20 && c != '\t' && c != '\r' && c != '\n') || c == 0x7f;
}

/* The length of the token s starts with, which delim must end: 0 when
 * it is empty, ends otherwise, or holds a byte that no token holds. */
static size_t token_to(const char *s, size_t n, char delim)
{
	size_t i;

	for (i = 0; i < n && s[i] != delim; i++)
		if (!tchar((unsigned char)s[i]))
			return 0;
	return i < n ? i : 0;
}

static bool name_is(const char *s, size_t n, const char *name)
{
	size_t i;

	if (n != strlen(name))
		return false;
	for (i = 0; i < n; i++)
		if ((s[i] | 0x20) != name[i])
			return false;
	return true;
}

static int done(struct sf_http_request *req, int status, size_t at)
{
	req->status = status;
	req->head_len = at;
	if (status != 200)
		req->route = SF_HTTP_ROUTE_NONE;
	return 1;
}

/* The line starting at buf[at]: its length without the terminator into
 * *n, the offset after the terminator returned; 0 when no LF is there
 * yet, SIZE_MAX when a CR stands anywhere but before the LF. */
static size_t line_at(const char *buf, size_t len, size_t at, size_t *n)
{
	const char *lf = memchr(buf + at, '\n', len - at);
	const char *cr;
	size_t end;

	if (!lf)
		return memchr(buf + at, '\r', len - at - (len > at && buf[len - 1] == '\r'))
			       ? SIZE_MAX : 0;
	end = (size_t)(lf - buf);
	*n = end - at;
	if (*n && buf[end - 1] == '\r')
		(*n)--;
	cr = memchr(buf + at, '\r', *n);
	return cr ? SIZE_MAX : end + 1;
}

/* The request line (without its terminator): method, target, version. */
static int request_line(const char *s, size_t n, struct sf_http_request *req,
			const char **target, size_t *tlen)
{
	size_t i, m = token_to(s, n, ' ');
	const char *sp1 = s + m, *sp2, *v;

	if (!m)
		return 400;
	sp2 = memchr(sp1 + 1, ' ', n - m - 1);
	if (!sp2 || sp2 == sp1 + 1)
		return 400;
	*target = sp1 + 1;
	*tlen = (size_t)(sp2 - *target);
	for (i = 0; i < *tlen; i++)
		if ((unsigned char)(*target)[i] <= 0x20 || (unsigned char)(*target)[i] >= 0x7f)
			return 400;
	v = sp2 + 1;
	if (n - (size_t)(v - s) != 8 || memcmp(v, "HTTP/", 5) || v[6] != '.' ||
	    v[5] < '0' || v[5] > '9' || v[7] < '0' || v[7] > '9')
		return 400;
	if (v[5] != '1')
		return 505;
	req->minor = v[7] - '0';
	req->head = m == 4 && !memcmp(s, "HEAD", 4);
	return (m == 3 && !memcmp(s, "GET", 3)) || req->head ? 200 : 405;
}

/* The route of a request target: origin-form, or absolute-form (which
 * RFC 9112 section 3.2.2 asks servers to accept), its query ignored. */
static int route(const char *t, size_t n, struct sf_http_request *req)
{
	const char *q;

	if (n >= 7 && name_is(t, 7, "http://")) {
		const char *p = memchr(t + 7, '/', n - 7);

		if (!p)
			return (req->route = SF_HTTP_ROUTE_ROOT), 200;
		n -= (size_t)(p - t);
		t = p;
	}
	if (t[0] != '/')
		return 400;
	q = memchr(t, '?', n);
	if (q)
		n = (size_t)(q - t);
	if (n == 1)
		req->route = SF_HTTP_ROUTE_ROOT;
	else if (n == 8 && !memcmp(t, "/metrics", 8))
		req->route = SF_HTTP_ROUTE_METRICS;
	else
		return 404;
	return 200;
}

/* One header field line; host, clen (-1: none) and te gather what the
 * end of the head checks. */
static int field(const char *s, size_t n, int *host, long long *clen, bool *te)
{
	/* obs-fold (a line starting with whitespace) is refused, as RFC 9112
	 * section 5.2 allows, and so is whitespace before the colon. */
	size_t i, name = token_to(s, n, ':'), v = name + 1;
	long long val = 0;

	if (!name)
		return 400;
	while (v < n && (s[v] == ' ' || s[v] == '\t'))
		v++;
	while (n > v && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	if (name_is(s, name, "host")) {
		(*host)++;
	} else if (name_is(s, name, "transfer-encoding")) {
		*te = true;
	} else if (name_is(s, name, "content-length")) {
		if (v == n)
			return 400;
		for (i = v; i < n; i++) {
			if (s[i] < '0' || s[i] > '9' || val > 1000000000LL)
				return 400;
			val = val * 10 + (s[i] - '0');
		}
		if (*clen >= 0 && *clen != val)
			return 400;
		*clen = val;
	}
	return 200;
}

int sf_http_parse_request(const char *buf, size_t len, struct sf_http_request *req)
{
	const char *target = NULL;
	size_t i, n = 0, at, next, tlen = 0;
	long long clen = -1;
	int host = 0, st, line_st;
	bool te = false;

	memset(req, 0, sizeof(*req));
	req->minor = -1;
	if (len > SF_HTTP_MAX_HEAD)
		len = SF_HTTP_MAX_HEAD;
	for (i = 0; i < len; i++)
		if (ctl((unsigned char)buf[i]))
			return done(req, 400, i);
	/* A method that is no token is a malformed line before it ends (a
	 * TLS handshake, a stray binary protocol): answered at once. */
	for (i = 0; i < len && buf[i] != ' '; i++)
		if (!tchar((unsigned char)buf[i]))
			return done(req, 400, i);

	next = line_at(buf, len, 0, &n);
	if (next == SIZE_MAX)
		return done(req, 400, 0);
	if (!next)
		return len == SF_HTTP_MAX_HEAD ? done(req, 414, len) : 0;
	line_st = request_line(buf, n, req, &target, &tlen);
	if (line_st == 400 || line_st == 505)
		return done(req, line_st, next);

	st = 200;
	for (at = next;; at = next) {
		next = line_at(buf, len, at, &n);
		if (next == SIZE_MAX)
			return done(req, 400, at);
		if (!next)
			return len == SF_HTTP_MAX_HEAD ? done(req, 431, len) : 0;
		if (!n)
			break;
		st = field(buf + at, n, &host, &clen, &te);
		if (st != 200)
			return done(req, st, at);
	}
	/* RFC 9112 section 3.2: an HTTP/1.1 request has exactly one Host,
	 * and none has more than one. */
	if (host > 1 || (req->minor >= 1 && host != 1))
		return done(req, 400, next);
	if (line_st != 200)
		return done(req, line_st, next);
	if (te || clen > 0)
		return done(req, 413, next);
	return done(req, route(target, tlen, req), next);
}

/* "Address already in use" as "address already in use", for a line that
 * reads "--metrics ADDR: address already in use". */
void sf_http_addr_error(char *err, size_t errsz, const char *addr, const char *why)
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

int sf_http_parse_addr(const char *addr, struct sockaddr_storage *ss, socklen_t *sl,
		       const char **why)
{
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	const char *colon, *port;
	char host[64];
	size_t hl;
	char *end;
	unsigned long pn;

	*why = "expected ADDR:PORT (127.0.0.1:9464, [::1]:9464, localhost:9464 or :9464)";
	memset(ss, 0, sizeof(*ss));
	if (addr[0] == '[') {
		colon = strstr(addr, "]:");
		if (!colon)
			return -EINVAL;
		hl = (size_t)(colon - addr - 1);
		port = colon + 2;
		if (hl >= sizeof(host))
			return -EINVAL;
		memcpy(host, addr + 1, hl);
		host[hl] = '\0';
		if (inet_pton(AF_INET6, host, &in6->sin6_addr) != 1)
			return (*why = "not a numeric IPv6 address"), -EINVAL;
		in6->sin6_family = AF_INET6;
		*sl = sizeof(*in6);
	} else {
		colon = strrchr(addr, ':');
		if (!colon)
			return -EINVAL;
		if (memchr(addr, ':', (size_t)(colon - addr)))
			return (*why = "an IPv6 address goes in brackets: [::1]:9464"), -EINVAL;
		hl = (size_t)(colon - addr);
		port = colon + 1;
		if (hl >= sizeof(host))
			return (*why = "not a numeric address or localhost"), -EINVAL;
		memcpy(host, addr, hl);
		host[hl] = '\0';
		in->sin_family = AF_INET;
		*sl = sizeof(*in);
		/* ":PORT" is loopback: all interfaces only when said. */
		if (!hl || !strcmp(host, "localhost"))
			in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		else if (inet_pton(AF_INET, host, &in->sin_addr) != 1)
			return (*why = "not a numeric address or localhost"), -EINVAL;
	}
	errno = 0;
	pn = strtoul(port, &end, 10);
	if (!*port || *end || errno || pn > 65535 || !isdigit((unsigned char)*port))
		return (*why = "the port is not a number from 0 to 65535"), -EINVAL;
	if (ss->ss_family == AF_INET6)
		in6->sin6_port = htons((uint16_t)pn);
	else
		in->sin_port = htons((uint16_t)pn);
	return 0;
}

const char *sf_http_reason(int status)
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

size_t sf_http_response_head(int status, const char *type, size_t len, char *buf, size_t size)
{
	int n = snprintf(buf, size,
		"HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s"
		"Connection: close\r\n\r\n", status, sf_http_reason(status), type, len,
		status == 405 ? "Allow: GET, HEAD\r\n" : "");

	return n < 0 ? 0 : (size_t)n < size ? (size_t)n : size - 1;
}
