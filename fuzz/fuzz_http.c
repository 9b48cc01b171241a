// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target over the metrics server's parsers
 * (loader/daemon/http_wire.c, linked alone): sf_http_parse_request(), as
 * the server calls it after every read, and sf_http_parse_addr(), as
 * sfilterd --metrics calls it.
 *
 * Input: byte 0's low bit chooses the parser (0: a request head, 1: an
 * address); the rest is the bytes a client sent, or the address (cut at
 * its first NUL).
 * Checked for every input, besides ASan/UBSan:
 *   - the answer is 0 or 1, the same twice (the parser is pure), and 0
 *     only for fewer than SF_HTTP_MAX_HEAD bytes;
 *   - the status is one the server documents; 200 exactly when the route
 *     is ROOT or METRICS; head_len within what was given;
 *   - a head answered 200 starts "GET " or "HEAD ", ends in an empty line
 *     at head_len, and is answered the same when given alone; every
 *     prefix of it is incomplete (0) or that same answer, as the server
 *     reads it in pieces;
 *   - the head of the answer to any status is one whole HTTP/1.1 head;
 *   - an address is accepted into an AF_INET or AF_INET6 address of the
 *     right length, or refused with -EINVAL and a reason.
 *
 *   SF_FUZZ_SEED_DIR=DIR   write a seed corpus into DIR and exit
 */
#define _GNU_SOURCE
#include "http.h"
#include "fuzzseed.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fail(const char *why, const uint8_t *data, size_t size, const struct sf_http_request *r)
{
	fprintf(stderr, "fuzz_http: %s (status %d, route %d, head_len %zu, %zu bytes): %.*s\n",
		why, r ? r->status : 0, r ? (int)r->route : 0, r ? r->head_len : 0, size,
		(int)(size > 200 ? 200 : size), (const char *)data);
	abort();
}

static bool documented(int status)
{
	static const int ok[] = { 200, 400, 404, 405, 413, 414, 431, 505 };
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (status == ok[i])
			return true;
	return false;
}

static void check_answer(int status, size_t len)
{
	char head[256], start[16];
	size_t n = sf_http_response_head(status, SF_HTTP_TYPE_METRICS, len, head, sizeof(head));

	snprintf(start, sizeof(start), "HTTP/1.1 %d ", status);
	if (n != strlen(head) || n < 4 || strncmp(head, start, strlen(start)) ||
	    strcmp(head + n - 4, "\r\n\r\n") || strstr(head, "\r\n\r\n") != head + n - 4 ||
	    (status != 500 && !strcmp(sf_http_reason(status), sf_http_reason(500)))) {
		fprintf(stderr, "fuzz_http: a bad answer head for %d: %s\n", status, head);
		abort();
	}
}

static void check_request(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct sf_http_request r, again;
	int ret = sf_http_parse_request(buf, size, &r), ret2;
	size_t k;

	ret2 = sf_http_parse_request(buf, size, &again);
	if (ret != ret2 || memcmp(&r, &again, sizeof(r)))
		fail("two answers for the same bytes", data, size, &r);
	if (ret == 0) {
		if (size >= SF_HTTP_MAX_HEAD)
			fail("incomplete at the size limit", data, size, &r);
		return;
	}
	if (ret != 1 || !documented(r.status))
		fail("undocumented answer", data, size, &r);
	if ((r.status == 200) != (r.route != SF_HTTP_ROUTE_NONE))
		fail("route and status disagree", data, size, &r);
	if (r.head_len > size || r.head_len > SF_HTTP_MAX_HEAD)
		fail("head_len past the input", data, size, &r);
	check_answer(r.status, size);
	if (r.status != 200)
		return;
	if (strncmp(buf, r.head ? "HEAD " : "GET ", r.head ? 5 : 4))
		fail("200 for a method other than GET and HEAD", data, size, &r);
	if (r.head_len < 2 || buf[r.head_len - 1] != '\n' ||
	    (buf[r.head_len - 2] != '\n' &&
	     (r.head_len < 3 || buf[r.head_len - 2] != '\r' || buf[r.head_len - 3] != '\n')))
		fail("200 without an empty line at head_len", data, size, &r);
	if (sf_http_parse_request(buf, r.head_len, &again) != 1 ||
	    memcmp(&r, &again, sizeof(r)))
		fail("the head alone is answered otherwise", data, size, &r);
	/* Every eighth prefix, so that a large head stays cheap. */
	for (k = 0; k < r.head_len; k += 1 + (r.head_len > 512 ? r.head_len / 64 : 0)) {
		ret2 = sf_http_parse_request(buf, k, &again);
		if (ret2 == 1 && memcmp(&r, &again, sizeof(r)))
			fail("a prefix is answered otherwise", data, k, &again);
	}
}

static void check_addr(const uint8_t *data, size_t size)
{
	struct sockaddr_storage ss;
	socklen_t len = 0;
	const char *why = NULL;
	char *s = strndup((const char *)data, size);
	int r;

	if (!s)
		return;
	r = sf_http_parse_addr(s, &ss, &len, &why);
	if (r == 0 && !((ss.ss_family == AF_INET && len == sizeof(struct sockaddr_in)) ||
			(ss.ss_family == AF_INET6 && len == sizeof(struct sockaddr_in6))))
		fail("an address of no family", data, size, NULL);
	if (r && (r != -EINVAL || !why || !why[0]))
		fail("a refusal without its reason", data, size, NULL);
	free(s);
}

static void write_seeds(const char *dir)
{
	static const char *const seeds[] = {
		"\0GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:9464\r\nUser-Agent: Prometheus/2.42.0\r\n"
		"Accept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5\r\n"
		"Accept-Encoding: gzip\r\nX-Prometheus-Scrape-Timeout-Seconds: 10\r\n\r\n",
		"\0GET / HTTP/1.0\n\n",
		"\0HEAD /metrics?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n",
		"\0GET http://h:1/metrics HTTP/1.1\r\nHost: h:1\r\n\r\n",
		"\0POST /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello",
		"\0GET /nope HTTP/2.0\r\n\r\n",
		"\0GET /metrics HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n",
		"\0GET /metrics HTTP/1.1\r\nTransfer-Encoding: chunked\r\nHost: a\r\n\r\n",
		"\x01" "127.0.0.1:9464",
		"\x01" "[::1]:0",
		"\x01" ":9464",
		"\x01" "localhost:65536",
	};
	static char longest[SF_HTTP_MAX_HEAD + 64];
	char name[32];
	size_t i, len;

	for (i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		len = 1 + strlen(seeds[i] + 1);
		snprintf(name, sizeof(name), "seed-%02zu", i);
		fuzz_seed_write(dir, name, seeds[i], len);
	}
	/* A head past the bound, so that libFuzzer's inputs (as long as the
	 * corpus' longest) reach it. */
	len = 1 + (size_t)snprintf(longest + 1, sizeof(longest) - 1,
				   "GET /metrics HTTP/1.1\r\nHost: a\r\n");
	while (len + 32 < sizeof(longest))
		len += (size_t)snprintf(longest + len, sizeof(longest) - len,
					"X-Filler: 0123456789abcdef\r\n");
	fuzz_seed_write(dir, "seed-long", longest, len);
}

FUZZ_SEED_INITIALIZE("fuzz_http", write_seeds)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	if (data[0] & 1)
		check_addr(data + 1, size - 1);
	else
		check_request(data + 1, size - 1);
	return 0;
}
