// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The daemon's request parsing (docs/protocol.md, "Errors, in the order the
 * daemon checks them"), apart from the daemon so that fuzz/fuzz_proto.c can
 * drive it in-process. Pure functions over a received datagram: no I/O, no
 * runtime; each returns 0 or the errno the reply carries, with msg set.
 *
 * buf must be aligned for struct sf_msg_hdr (the daemon's receive buffer
 * is; the fuzzer copies into one) and hold n bytes.
 */
#include "proto.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>


int sf_proto_check_header(const void *buf, size_t n, bool truncated,
			  char *msg, size_t msz)
{
	const struct sf_msg_hdr *h = buf;

	if (n > SF_PROTO_MAX_MSG || truncated) {
		snprintf(msg, msz, "message of %zu bytes exceeds %u", n, SF_PROTO_MAX_MSG);
		return -EMSGSIZE;
	}
	if (n < SF_PROTO_HDR_SIZE) {
		snprintf(msg, msz, "truncated header: %zu of %u bytes", n, SF_PROTO_HDR_SIZE);
		return -EPROTO;
	}
	if (h->magic != SF_PROTO_MAGIC) {
		snprintf(msg, msz, "bad magic 0x%08x (expected 0x%08x)", h->magic, SF_PROTO_MAGIC);
		return -EPROTO;
	}
	if (h->version != SF_PROTO_VERSION) {
		snprintf(msg, msz, "protocol version %u not supported (this daemon speaks %u)",
			 h->version, SF_PROTO_VERSION);
		return -EPROTO;
	}
	if (h->length > SF_PROTO_MAX_MSG) {
		snprintf(msg, msz, "header length %u exceeds %u", h->length, SF_PROTO_MAX_MSG);
		return -EMSGSIZE;
	}
	if (h->length != n) {
		snprintf(msg, msz, "header length %u but %zu bytes received", h->length, n);
		return -EPROTO;
	}
	return 0;
}

bool sf_proto_is_admin_type(uint32_t type)
{
	return (type >= SF_MSG_ADMIN_ATTACH && type <= SF_MSG_LOG && type != SF_MSG_REPLY) ||
	       type == SF_MSG_RECORD || type == SF_MSG_PROFILE;
}

int sf_proto_check_attach(const void *buf, size_t n, char *msg, size_t msz)
{
	const struct sf_attach_req *req = buf;

	if (n < SF_PROTO_ATTACH_REQ_SIZE) {
		snprintf(msg, msz, "truncated attach request: %zu of %u bytes",
			 n, SF_PROTO_ATTACH_REQ_SIZE);
		return -EPROTO;
	}
	if ((uint64_t)req->n_insns * sizeof(struct sock_filter) != n - SF_PROTO_ATTACH_REQ_SIZE) {
		snprintf(msg, msz, "n_insns %u does not match the %zu bytes of instructions",
			 req->n_insns, n - SF_PROTO_ATTACH_REQ_SIZE);
		return -EPROTO;
	}
	return 0;
}

int sf_proto_check_admin_attach(const void *buf, size_t n, uint32_t known_flags,
				const char **path, char *msg, size_t msz)
{
	const struct sf_admin_attach_req *req = buf;
	const char *p;

	*path = NULL;
	if (n < SF_PROTO_ADMIN_ATTACH_SIZE) {
		snprintf(msg, msz, "truncated admin attach request: %zu of %u bytes",
			 n, SF_PROTO_ADMIN_ATTACH_SIZE);
		return -EPROTO;
	}
	if ((uint64_t)req->n_insns * 8 + req->path_len != n - SF_PROTO_ADMIN_ATTACH_SIZE) {
		snprintf(msg, msz, "n_insns %u and path_len %u do not match the %zu bytes after the request",
			 req->n_insns, req->path_len, n - SF_PROTO_ADMIN_ATTACH_SIZE);
		return -EPROTO;
	}
	if (req->flags & ~known_flags) {
		snprintf(msg, msz, "unknown flags 0x%x", req->flags & ~known_flags);
		return -EINVAL;
	}
	if (req->path_len) {
		p = (const char *)req->insns + (size_t)req->n_insns * 8;
		if (p[req->path_len - 1] != '\0' || strlen(p) + 1 != req->path_len ||
		    p[0] != '/' || req->pid != 0) {
			snprintf(msg, msz, "the cgroup path must be absolute and NUL-terminated, with pid 0");
			return -EINVAL;
		}
		*path = p;
	} else if (req->pid <= 0) {
		snprintf(msg, msz, "pid %d: give a pid or a cgroup path", req->pid);
		return -EINVAL;
	}
	return 0;
}

int sf_proto_check_replace(const void *buf, size_t n, char *msg, size_t msz)
{
	const struct sf_replace_req *req = buf;

	if (n < SF_PROTO_REPLACE_REQ_SIZE ||
	    (uint64_t)req->n_insns * 8 != n - SF_PROTO_REPLACE_REQ_SIZE) {
		snprintf(msg, msz, "malformed replace request (%zu bytes)", n);
		return -EPROTO;
	}
	return 0;
}
