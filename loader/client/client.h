/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The client side of the protocol (conn.c, reply.c), shared by libsfclient,
 * sfctl, sfrun, the tests, benches and fuzzers: -errno returns, errno set
 * too. The messages themselves are loader/proto/proto.h's; the daemon
 * never links these, which is why they are the client layer's. Internal:
 * not in libsfclient.map, so hidden in libsfclient.so, and not installed.
 */
#ifndef SF_CLIENT_CLIENT_H
#define SF_CLIENT_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

struct iovec;
struct sf_reply;
struct ucred;

/* ---- connecting and sending (conn.c) ---- */
/* Connects to the daemon at path and waits (up to timeout_ms) for its
 * hello. The fd, or -EHOSTDOWN (no daemon there), -EPROTO (no hello), or
 * the errno of the daemon's refusal (-EAGAIN: a connection limit), whose
 * message goes to why (why_size 0: nowhere). */
int sf_proto_connect(const char *path, int timeout_ms, char *why, size_t why_size);
/* The same in two steps: the connection made (the fd, or -EHOSTDOWN),
 * then, once the caller has done other work meanwhile, the hello waited
 * for (the fd, or as sf_proto_connect(); fd closed on failure). */
int sf_proto_connect_start(const char *path);
int sf_proto_connect_finish(int fd, int timeout_ms, char *why, size_t why_size);
/* Sends one message (iov) with the sender's credentials (pid, effective
 * uid and gid) and, when nfds > 0, descriptors. 0 or -errno. */
int sf_proto_send(int fd, const struct iovec *iov, int iovcnt, const int *fds, int nfds);
/* The same with the credentials read before, so that the send is the
 * one system call. */
int sf_proto_send_as(int fd, const struct iovec *iov, int iovcnt, const int *fds, int nfds,
		     const struct ucred *cred);

/* ---- reading a reply (reply.c) ---- */
/* 0 when the n bytes at buf are one whole SF_MSG_REPLY of this version
 * (length n, text NUL-terminated before data_len bytes), else -EPROTO. */
int sf_proto_check_reply(const void *buf, size_t n);
/* The "message" string of a checked reply's JSON text, unescaped, into
 * out (cut to size, NUL-terminated); "" when it has none. */
void sf_proto_reply_message(const struct sf_reply *r, char *out, size_t size);
/* The same reader for any JSON object's text (the agent socket's answer):
 * its top-level string field name into out (cut to size, "" and false
 * when there is none), or its integer field name into *v. */
bool sf_proto_json_string(const char *text, const char *name, char *out, size_t size);
bool sf_proto_json_int(const char *text, const char *name, long *v);

#endif /* SF_CLIENT_CLIENT_H */
