/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sfilterd's connections (loader/daemon/conn.c): accepting them under
 * per-uid and global limits, and every message the daemon sends, through a
 * bounded output queue per connection, so that the one event loop never
 * waits on any client.
 */
#ifndef SF_DAEMON_CONN_H
#define SF_DAEMON_CONN_H

#include "runtime.h" /* struct sf_identity */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>

/* Descriptors one queued message may carry (SCM_RIGHTS). */
#define CONN_MAX_FDS 4

/*
 * Whom a connection's limits are counted against (login.c): its login user,
 * decided at connect from the user namespace of the process that connected.
 * A process in the daemon's user namespace is its own uid's; one in a user
 * namespace below it is the owner's of the outermost one under the
 * daemon's, so that the uids a user maps (newuidmap, subuids) share their
 * owner's limits. A namespace that uid 0 made (a container's) is an
 * account of its own, userns its inode; userns is 0 otherwise.
 */
struct login {
	uid_t uid;
	uint32_t userns;
};

struct conn_msg;

struct client {
	int fd;
	bool follow;    /* LOG --follow: events are streamed, no idle sweep */
	bool follow_admin;
	int pidfd;      /* the connecting process, or -1 if it was gone */
	pid_t pid;      /* SO_PEERCRED at connect time */
	uid_t uid;
	gid_t gid;
	bool in_admin_group; /* the admin group among its groups at connect */
	/* uid 0 or the admin group at connect: outside the per-login-user
	 * limit, may use the connections kept back for administrators, and
	 * may send descriptors (ADMIN_ATTACH's pidfd). Only a connection
	 * slot; what a request may do is decided per request. */
	bool privileged;
	struct login login; /* whose limits it counts against (login.c) */
	/* Descriptors can arrive on it: it is privileged, or the kernel
	 * cannot refuse them at the sender (SO_PASSRIGHTS, 6.16). */
	bool takes_fds;
	struct sf_identity ident; /* the process, as identified before the hello */
	time_t last;    /* last activity, for the idle sweep */
	bool dead;      /* closed; freed only after the current epoll batch */
	struct client *next_dead;
	/* Messages that did not fit the socket, oldest first: while there
	 * are any, nothing more is read from the connection. */
	struct conn_msg *q_head, *q_tail;
	size_t q_bytes; /* what they cost, bookkeeping included */
	uint32_t watching; /* the epoll events asked for: EPOLLIN or EPOLLOUT */
	bool held;      /* conn_hold(): a request of its waits off the loop */
};

struct conn_config {
	uint32_t per_uid;     /* connections of one non-admin login user; 0: no limit */
	uint32_t total;       /* all connections */
	size_t queue_bytes;   /* the output queue's bound, per connection */
};

struct conn_stats {
	uint64_t refused;     /* over a connection limit */
	uint64_t evicted;     /* idle, closed to make room for its own login user */
	uint64_t overflowed;  /* closed: its output queue was over the bound */
};

extern struct conn_config conn_cfg;
extern struct conn_stats conn_stats;
/* The open connections; their order changes as they close. */
extern struct client **conn_list;
extern int conn_count;

/* Raises RLIMIT_NOFILE's soft limit to the hard one, and lowers
 * conn_cfg.total where even that cannot hold every connection. */
void conn_raise_nofile(void);
/* Allocates the table for conn_cfg.total connections, watched in epfd.
 * 0 or -errno. */
int conn_init(int epfd);

/* The next connection accepted on lfd, added to the table and watched for
 * requests; NULL when none is waiting. Connections over a limit are
 * answered why and closed here, and never returned. */
struct client *conn_accept(int lfd);
/* After epoll reported events for c: sends what waits, closes it if its
 * peer has gone while replies wait. True when a request may be read. */
bool conn_ready(struct client *c, uint32_t events);

/* Sends one datagram (and nfds descriptors, which stay the caller's), at
 * once or, when the socket is full or earlier ones wait, from the queue.
 * 0, or -errno when c is closed, or has just been closed: its peer is gone
 * or its queue went over the bound. */
int conn_send(struct client *c, const void *buf, size_t len, const int *fds, int nfds);
/* An SF_MSG_REPLY, the one answer the daemon gives: text (NUL included),
 * then data_len bytes of data. -EMSGSIZE (c stays open) when it would
 * exceed SF_PROTO_MAX_MSG. */
int conn_reply(struct client *c, uint32_t request_id, int error, uint32_t id,
	       uint32_t flags, const char *text, const void *data, uint32_t data_len);

/* The JSON of every reply: o (NULL: a new object) with "error" and
 * "message" added (a failure says {"error": N, "message": "why"}), the
 * message cut at SF_PROTO_MAX_TEXT, which bounds SF_PROTO_MAX_NOTE_REPLY.
 * Here, below reply.c, which builds every other reply with it, because a
 * refusal in place of the hello is sent from here. */
struct json_object;
struct json_object *conn_reply_object(struct json_object *o, int error, const char *msg);

/* While a request of c's waits off the loop (verify.c), nothing more is
 * read from it, it is never idle, and once closed it is freed only after
 * it is released (hold false). */
void conn_hold(struct client *c, bool hold);

/* Reads and drops what the peer queued, so that closing reads as an end of
 * file to it rather than a reset; the descriptors that came along go to
 * the closer, counted against who. */
void conn_discard(int fd, const struct login *who);
void conn_close(struct client *c);
/* Closes every connection of who's, as conn_close() does. */
void conn_close_login(const struct login *who, const char *why);
/* Frees the connections closed during the last epoll batch. */
void conn_free_closed(void);
/* Closes the connections that have been idle (no request read, no reply
 * taken) for more than seconds; log followers stay. */
void conn_sweep_idle(int seconds);

#endif /* SF_DAEMON_CONN_H */
