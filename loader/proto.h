/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The wire protocol between libsfclient and sfilterd (docs/protocol.md).
 *
 * Transport: a SOCK_SEQPACKET Unix socket, by default
 * SF_PROTO_DEFAULT_SOCKET (SFILTER_SOCKET in the environment overrides it).
 * One datagram is one message; a message is at most SF_PROTO_MAX_MSG bytes.
 * Every message starts with struct sf_msg_hdr; all fields are in host byte
 * order (the peers share a kernel). A client sends one request and reads
 * one reply carrying the same request_id; sfclient opens one connection per
 * call, but a client may send several requests on one connection, one at a
 * time.
 *
 * Version 1 has one request, SF_MSG_ATTACH, and one reply,
 * SF_MSG_ATTACH_REPLY. Every request the daemon cannot parse (truncated,
 * oversized, wrong magic or version, unknown type, n_insns that does not
 * match the length, file descriptors attached) is answered with an
 * SF_MSG_ATTACH_REPLY whose error says why; the connection stays usable.
 *
 * Errors in a reply, in the order the daemon checks them:
 *   EMSGSIZE  the datagram (or hdr.length) exceeds SF_PROTO_MAX_MSG
 *   EPROTO    shorter than the header, hdr.length != the datagram's size,
 *             wrong magic, wrong version, unknown type, body shorter than
 *             struct sf_attach_req, n_insns * 8 != the rest of the message
 *   EINVAL    file descriptors (SCM_RIGHTS) attached: closed, refused
 *   EINVAL    unknown flags, n_insns 0 or above 4096
 *   ESRCH     tid is not a live thread of the sender's thread group, or the
 *             sender exited before the attach completed
 *   EACCES    the target thread has neither no_new_privs nor CAP_SYS_ADMIN
 *   EINVAL    a filter seccomp(2) would refuse (message: the validator's
 *             "insn N (code 0x....): rule")
 *   ENOMEM    the chain would exceed the kernel's 32768-instruction rule
 *   < 0       TSYNC only: -error is the tid of the first thread whose chain
 *             is not an ancestor of the caller's (seccomp(2) returns it)
 */
#ifndef SF_PROTO_H
#define SF_PROTO_H

#include <stdint.h>
#include <linux/filter.h> /* struct sock_filter */

#define SF_PROTO_MAGIC          0x544c4653U /* "SFLT" in memory (little endian) */
#define SF_PROTO_VERSION        1
#define SF_PROTO_MAX_MSG        65536
#define SF_PROTO_DEFAULT_SOCKET "/run/sfilter/sfilterd.sock"
#define SF_PROTO_SOCKET_ENV     "SFILTER_SOCKET"
/* The longest message a reply carries, NUL included. */
#define SF_PROTO_MAX_TEXT       512

enum sf_msg_type {
	SF_MSG_ATTACH       = 1, /* client -> daemon: struct sf_attach_req */
	SF_MSG_ATTACH_REPLY = 2, /* daemon -> client: struct sf_attach_reply */
};

struct sf_msg_hdr {
	uint32_t magic;      /* SF_PROTO_MAGIC */
	uint16_t version;    /* SF_PROTO_VERSION */
	uint16_t type;       /* enum sf_msg_type */
	uint32_t length;     /* the whole message, header included */
	uint32_t request_id; /* chosen by the client, echoed in the reply */
};

struct sf_attach_req {
	struct sf_msg_hdr hdr;
	uint32_t flags;     /* SF_ATTACH_* (loader/runtime.h, sfclient.h) */
	int32_t tid;        /* the thread to filter: the sender's own thread
			     * (sfclient sends gettid()); 0 = the sender's
			     * thread-group leader */
	uint32_t n_insns;   /* 1..4096 for a valid filter */
	struct sock_filter insns[]; /* n_insns * 8 bytes, nothing after */
};

struct sf_attach_reply {
	struct sf_msg_hdr hdr;
	int32_t error;      /* 0, a positive errno, or (TSYNC) -tid */
	uint32_t filter_id; /* when error == 0: the runtime's filter id */
	char message[];     /* NUL-terminated, hdr.length - 24 bytes at most */
};

#define SF_PROTO_HDR_SIZE        ((uint32_t)sizeof(struct sf_msg_hdr))
#define SF_PROTO_ATTACH_REQ_SIZE ((uint32_t)sizeof(struct sf_attach_req))
#define SF_PROTO_REPLY_SIZE      ((uint32_t)sizeof(struct sf_attach_reply))

_Static_assert(sizeof(struct sf_msg_hdr) == 16, "header is 16 bytes");
_Static_assert(sizeof(struct sf_attach_req) == 28, "attach request is 28 bytes + insns");
_Static_assert(sizeof(struct sf_attach_reply) == 24, "reply is 24 bytes + text");
_Static_assert(sizeof(struct sock_filter) == 8, "sock_filter is 8 bytes");
_Static_assert(28 + 4096 * 8 <= SF_PROTO_MAX_MSG, "largest filter fits");

#endif /* SF_PROTO_H */
