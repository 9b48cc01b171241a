/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The listener holder's wire and the calls its two files share: holder.c
 * (the daemon's end: holder.h's calls, starting the process) calls
 * holder_proc.c (the process; the messages of both ends), never the
 * reverse. Included by these two files only.
 *
 * Wire: SOCK_SEQPACKET, one request a message, one answer to each (a
 * TAKE's answer is a page of listeners, the next asked for after the last
 * id seen, so that the holder never has more than one answer queued for a
 * connection and never blocks on a peer that does not read). Answers carry
 * the request's sequence number: one that comes after its caller gave up
 * waiting is recognised and dropped, its descriptors closed.
 */
#ifndef SF_HOLDER_WIRE_H
#define SF_HOLDER_WIRE_H

#include "holder.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#define HOLDER_MAGIC 0x53464844u /* "SFHD" */

/* The descriptors one message can carry (SCM_MAX_FD, scm_fp_copy()):
 * every message is received with room for all of them, as the kernel
 * drops those that find none. */
#define HOLDER_FDS_PER_MSG 253
/* A TAKE page's bytes of entries, whatever their metas' sizes. */
#define HOLDER_PAGE_BYTES 32768
/* Connections served at once; a further one displaces the one idle longest. */
#define HOLDER_CONNS 4
/* Descriptors the holder keeps for itself beyond its listeners: the
 * standard three, the listening socket, the epoll set, connections, and a
 * message's worth in flight. */
#define HOLDER_FD_RESERVE (16 + HOLDER_CONNS + HOLDER_FDS_PER_MSG)

enum { HOP_HELLO = 1, HOP_PUT, HOP_TAKE, HOP_COUNT, HOP_STOP };

struct hreq {
	uint32_t magic, op;
	uint64_t seq;
	uint64_t after;   /* TAKE: the last id already had */
	uint32_t len;     /* PUT: bytes of meta */
	uint32_t pad;
	char meta[HOLDER_META_MAX];
};
#define HREQ_HEAD offsetof(struct hreq, meta)

struct hrep {
	uint32_t magic, op;
	uint64_t seq;
	int32_t err;      /* 0 or -errno */
	uint32_t count;   /* COUNT: listeners kept; TAKE: entries in this page */
	uint32_t more;    /* TAKE: entries after this page */
	uint32_t pad;
};

/* A TAKE page: after struct hrep, count of these, each followed by its
 * meta padded to 8 bytes; the listeners in the same order by SCM_RIGHTS. */
struct hent {
	uint64_t id;
	uint32_t len;
	uint32_t pad;
};
#define PAD8(n) (((n) + 7u) & ~7u)

int64_t hold_now_ms(void);
void hold_close_fds(const int *fds, int n);
/* One message from fd without waiting: its length (0: end of file) or
 * -errno; its descriptors (close-on-exec, room for HOLDER_FDS_PER_MSG)
 * into fds and *nfds. */
ssize_t hold_recv(int fd, void *buf, size_t size, int *fds, int *nfds);
/* One message to fd without waiting, with nfds descriptors. 0 or -errno. */
int hold_send(int fd, const void *buf, size_t len, const int *fds, int nfds);
/* Until fd has events or the deadline (hold_now_ms()) passes: 0,
 * -ETIMEDOUT or -errno. */
int hold_wait(int fd, short events, int64_t deadline);
/* The holder process, on the bound and listening socket lfd at path (bound
 * is the socket file's stat). Never returns. */
void hold_run(int lfd, const char *path, const struct stat *bound) __attribute__((noreturn));

#endif
