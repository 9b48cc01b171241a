// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The client side of reading a reply (loader/proto/proto.h): every answer
 * of the daemon is one SF_MSG_REPLY whose text is a JSON object, so the
 * check of its framing and the one field a client without a JSON library
 * needs, "message" (sf_last_error(), the reason of a refusal), are read
 * here, once, for libsfclient, sfctl and the tests.
 *
 * The reader takes the JSON the daemon writes (json-c, plain): an object
 * whose values are strings, numbers, arrays or objects. It never reads
 * past the text's NUL, which sf_proto_check_reply() has found.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "client.h"
#include "proto.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

int sf_proto_check_reply(const void *buf, size_t n)
{
	const struct sf_reply *r = buf;

	if (n < SF_PROTO_GREPLY_SIZE + 1 || r->hdr.magic != SF_PROTO_MAGIC ||
	    r->hdr.version != SF_PROTO_VERSION || r->hdr.type != SF_MSG_REPLY ||
	    r->hdr.length != n || r->data_len > n - SF_PROTO_GREPLY_SIZE - 1 ||
	    r->text[n - SF_PROTO_GREPLY_SIZE - r->data_len - 1] != '\0') {
		errno = EPROTO;
		return -EPROTO;
	}
	return 0;
}

static const char *skip_space(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

/* The value of the hex digit c, or -1. */
static int hex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The four hex digits at p (a NUL among them is not one), or -1. */
static long hex4(const char *p)
{
	long v = 0;
	int i, d;

	for (i = 0; i < 4; i++) {
		if ((d = hex(p[i])) < 0)
			return -1;
		v = v << 4 | d;
	}
	return v;
}

/* Appends byte c to out (size bytes, the last kept for the NUL). */
static void put(char *out, size_t size, size_t *used, unsigned int c)
{
	if (out && *used + 1 < size)
		out[(*used)++] = (char)c;
}

/* The code point u as UTF-8. A lone surrogate has none: '?'. */
static void put_utf8(char *out, size_t size, size_t *used, unsigned long u)
{
	if (u < 0x80) {
		put(out, size, used, u);
	} else if (u < 0x800) {
		put(out, size, used, 0xc0 | u >> 6);
		put(out, size, used, 0x80 | (u & 0x3f));
	} else if (u >= 0xd800 && u <= 0xdfff) {
		put(out, size, used, '?');
	} else {
		put(out, size, used, 0xe0 | u >> 12);
		put(out, size, used, 0x80 | (u >> 6 & 0x3f));
		put(out, size, used, 0x80 | (u & 0x3f));
	}
}

/* The JSON string whose opening quote is before p, decoded into out when
 * out is not NULL (cut to size, NUL-terminated). The byte after its
 * closing quote, or NULL when it is malformed. */
static const char *json_string(const char *p, char *out, size_t size)
{
	static const char esc[] = "\"\"\\\\//b\bf\fn\nr\rt\t";
	size_t used = 0;
	const char *e;
	long u;

	for (; *p != '"'; p++) {
		if (*p == '\0')
			return NULL;
		if (*p != '\\') {
			put(out, size, &used, (unsigned char)*p);
			continue;
		}
		p++;
		if (*p == 'u') {
			if ((u = hex4(p + 1)) < 0)
				return NULL;
			put_utf8(out, size, &used, (unsigned long)u);
			p += 4;
			continue;
		}
		for (e = esc; *e && *e != *p; e += 2)
			;
		if (!*e || !*p)
			return NULL;
		put(out, size, &used, (unsigned char)e[1]);
	}
	if (out && size)
		out[used] = '\0';
	return p + 1;
}

/* Past one value at p: at the ',' or '}' that ends it, or NULL. */
static const char *skip_value(const char *p)
{
	int depth = 0;

	for (; *p; p++) {
		if (*p == '"') {
			if (!(p = json_string(p + 1, NULL, 0)))
				return NULL;
			p--; /* at the closing quote; the loop steps past it */
		} else if (*p == '{' || *p == '[') {
			depth++;
		} else if (*p == '}' || *p == ']') {
			if (depth-- == 0)
				return p;
		} else if (*p == ',' && depth == 0) {
			return p;
		}
	}
	return NULL;
}

/* The value of the top-level field name of the JSON object at text
 * (after its ':' and blanks), or NULL. */
static const char *find_field(const char *text, const char *name)
{
	size_t len = strlen(name);
	const char *p = skip_space(text);
	bool wanted;

	if (*p++ != '{')
		return NULL;
	for (;;) {
		p = skip_space(p);
		if (*p++ != '"')
			return NULL;
		wanted = strncmp(p, name, len) == 0 && p[len] == '"';
		if (!(p = json_string(p, NULL, 0)))
			return NULL;
		p = skip_space(p);
		if (*p++ != ':')
			return NULL;
		p = skip_space(p);
		if (wanted)
			return p;
		if (!(p = skip_value(p)) || *p++ != ',')
			return NULL;
	}
}

bool sf_proto_json_string(const char *text, const char *name, char *out, size_t size)
{
	const char *p = find_field(text, name);

	if (size)
		out[0] = '\0';
	if (!p || *p != '"' || !json_string(p + 1, out, size)) {
		if (size)
			out[0] = '\0';
		return false;
	}
	return true;
}

bool sf_proto_json_int(const char *text, const char *name, long *v)
{
	const char *p = find_field(text, name);
	char *end;

	if (!p || !(*p == '-' || (*p >= '0' && *p <= '9')))
		return false;
	errno = 0;
	*v = strtol(p, &end, 10);
	end = (char *)skip_space(end);
	return errno == 0 && (*end == ',' || *end == '}');
}

void sf_proto_reply_message(const struct sf_reply *r, char *out, size_t size)
{
	sf_proto_json_string(r->text, "message", out, size);
}
