// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target over sfilterd's request parsing (loader/proto/checks.c,
 * linked in, so the fuzzer needs no daemon and no runtime), in the
 * daemon's own order: the header, then by type the ATTACH, ADMIN_ATTACH or
 * REPLACE body checks, then c2e_validate() of an accepted program, as the
 * daemon does next; and over the client's reading of a reply
 * (loader/client/reply.c: its framing, then its JSON "message").
 *
 * Input: byte 0 selects how much of the header to repair (so the fuzzer
 * also reaches the body checks): bit 0 magic, bit 1 version, bit 2 length,
 * bit 3 "the datagram was truncated" (MSG_TRUNC); bit 4 makes the datagram
 * a reply, read as a client does (type, data_len and the text's NUL
 * repaired too). The rest is the datagram.
 * Checked for every input, besides ASan/UBSan: each check returns 0 or a
 * documented errno; every message is NUL-terminated and non-empty on
 * error; an accepted body has exactly the size its counts announce; an
 * accepted cgroup path is absolute, NUL-terminated, inside the message;
 * a reply's message is NUL-terminated inside the buffer it was read into.
 *
 *   SF_FUZZ_SEED_DIR=DIR   write a seed corpus (one valid request of each
 *                          type) into DIR and exit
 */
#define _GNU_SOURCE
#include "client.h"
#include "proto.h"
#include "c2e.h"
#include "fuzzseed.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ADMIN_FLAGS SF_PROTO_ADMIN_FLAGS

static void check_msg(int err, const char *msg, size_t msz, const char *what)
{
	if (!memchr(msg, '\0', msz) || (err && !msg[0])) {
		fprintf(stderr, "fuzz_proto: %s: error %d with a bad message\n", what, err);
		abort();
	}
	if (err && err != EPROTO && err != EMSGSIZE && err != EINVAL) {
		fprintf(stderr, "fuzz_proto: %s: undocumented error %d\n", what, err);
		abort();
	}
}

/* A reply as the daemon writes one: JSON escapes and an object before
 * the message. */
static void seed_reply(const char *dir)
{
	static const char text[] = "{\"filter\":7,\"flags\":[\"a,}\"],\"error\":22,"
		"\"message\":\"at \\/x: \\\"q\\\" \\u00e9\\u20ac\\n\"}";
	union { struct sf_reply r; char b[128]; } m;
	const uint8_t sel = 0x1f;

	memset(&m, 0, sizeof(m));
	sf_proto_header(&m.r.hdr, SF_MSG_REPLY, SF_PROTO_GREPLY_SIZE + sizeof(text), 7);
	m.r.error = 22;
	memcpy(m.r.text, text, sizeof(text));
	fuzz_seed_write_head(dir, "reply", &sel, 1, m.b, m.r.hdr.length);
}

/* The datagram of n bytes in buf as a reply a client reads. */
static void read_reply(char *buf, size_t n)
{
	struct sf_reply *r = (struct sf_reply *)buf;
	char out[3][SF_PROTO_MAX_TEXT];
	size_t sizes[3] = { 1, 8, sizeof(out[2]) }, i;

	if (n > SF_PROTO_GREPLY_SIZE) {
		r->hdr.type = SF_MSG_REPLY;
		if (r->data_len > n - SF_PROTO_GREPLY_SIZE - 1)
			r->data_len %= n - SF_PROTO_GREPLY_SIZE;
		buf[n - r->data_len - 1] = '\0';
	}
	if (sf_proto_check_reply(buf, n) != 0)
		return;
	for (i = 0; i < 3; i++) {
		memset(out[i], 0x5a, sizeof(out[i]));
		sf_proto_reply_message(r, out[i], sizes[i]);
		if (!memchr(out[i], '\0', sizes[i])) {
			fprintf(stderr, "fuzz_proto: reply message not NUL-terminated\n");
			abort();
		}
	}
}

static void write_seeds(const char *dir)
{
	static const uint16_t types[] = { 1, 3, 5, 6, 7, 8, 9, 10 };
	union { struct sf_msg_hdr h; char b[128]; } m;
	const uint8_t sel = 0;
	char name[16];
	size_t i, len;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		memset(&m, 0, sizeof(m));
		len = types[i] == 1 ? 36 : types[i] == 3 ? 40 + 3 : types[i] == 6 ? 32 :
		      types[i] == 7 || types[i] == 8 ? 16 : 20;
		m.h = (struct sf_msg_hdr){ SF_PROTO_MAGIC, SF_PROTO_VERSION, types[i], len, 7 };
		if (types[i] == 1)
			((struct sf_attach_req *)m.b)->n_insns = 1;
		if (types[i] == 3) {
			((struct sf_admin_attach_req *)m.b)->n_insns = 1;
			((struct sf_admin_attach_req *)m.b)->path_len = 3;
			memcpy(m.b + 40, "/a", 3);
		}
		if (types[i] == 6)
			((struct sf_replace_req *)m.b)->n_insns = 1;
		snprintf(name, sizeof(name), "type%u", types[i]);
		fuzz_seed_write_head(dir, name, &sel, 1, m.b, len);
	}
	seed_reply(dir);
}

FUZZ_SEED_INITIALIZE("fuzz_proto", write_seeds)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static union { struct sf_msg_hdr h; char b[SF_PROTO_MAX_MSG + 64]; } buf;
	char msg[SF_PROTO_MAX_TEXT];
	const char *path;
	struct c2e_error cerr;
	uint8_t sel;
	size_t n;
	int err;

	if (size < 1)
		return 0;
	sel = data[0];
	n = size - 1 < sizeof(buf.b) - 64 ? size - 1 : sizeof(buf.b) - 64;
	/* What follows the datagram in the daemon's buffer is stale bytes;
	 * poison-free garbage here, as there. */
	memset(buf.b + n, 0xa5, 64);
	memcpy(buf.b, data + 1, n);
	if (n >= SF_PROTO_HDR_SIZE) {
		if (sel & 1)
			buf.h.magic = SF_PROTO_MAGIC;
		if (sel & 2)
			buf.h.version = SF_PROTO_VERSION;
		if (sel & 4)
			buf.h.length = n;
	}
	if (sel & 0x10) {
		read_reply(buf.b, n);
		return 0;
	}
	msg[0] = '\0';
	err = -sf_proto_check_header(buf.b, n, sel & 8, msg, sizeof(msg));
	check_msg(err, msg, sizeof(msg), "header");
	if (err)
		return 0;
	if (n < SF_PROTO_HDR_SIZE || buf.h.length != n)
		abort();
	msg[0] = '\0';
	switch (buf.h.type) {
	case SF_MSG_ATTACH:
		err = -sf_proto_check_attach(buf.b, n, msg, sizeof(msg));
		check_msg(err, msg, sizeof(msg), "attach");
		if (!err) {
			struct sf_attach_req *r = (void *)buf.b;

			if (SF_PROTO_ATTACH_REQ_SIZE + (uint64_t)r->n_insns * 8 != n)
				abort();
			if (r->n_insns && r->n_insns <= C2E_MAX_INSNS)
				c2e_validate(r->insns, r->n_insns, &cerr);
		}
		break;
	case SF_MSG_ADMIN_ATTACH:
		err = -sf_proto_check_admin_attach(buf.b, n, ADMIN_FLAGS, &path, msg, sizeof(msg));
		check_msg(err, msg, sizeof(msg), "admin attach");
		if (!err) {
			struct sf_admin_attach_req *r = (void *)buf.b;

			if (SF_PROTO_ADMIN_ATTACH_SIZE + (uint64_t)r->n_insns * 8 + r->path_len != n)
				abort();
			if (r->flags & ~ADMIN_FLAGS)
				abort();
			if (path && (path[0] != '/' || path < buf.b || path + strlen(path) + 1 > buf.b + n))
				abort();
			if (!path && r->pid <= 0)
				abort();
			if (r->n_insns && r->n_insns <= C2E_MAX_INSNS)
				c2e_validate(r->insns, r->n_insns, &cerr);
		}
		break;
	case SF_MSG_REPLACE:
		err = -sf_proto_check_replace(buf.b, n, msg, sizeof(msg));
		check_msg(err, msg, sizeof(msg), "replace");
		if (!err && SF_PROTO_REPLACE_REQ_SIZE +
			    (uint64_t)((struct sf_replace_req *)buf.b)->n_insns * 8 != n)
			abort();
		break;
	default:
		(void)sf_proto_is_admin_type(buf.h.type);
	}
	return 0;
}
