// SPDX-License-Identifier: GPL-2.0-only
/*
 * sfilterd's connections: accepting them under limits, and sending.
 *
 * The daemon is one thread with one epoll loop; anything that waits on
 * one client waits for all of them. So nothing here ever waits:
 *
 *   - A message is sent at once (MSG_DONTWAIT) when none waits before it.
 *     When the socket is full (the peer does not read), the whole datagram
 *     and the descriptors it carries go to the connection's output queue,
 *     and the connection is watched for EPOLLOUT instead of EPOLLIN: while
 *     its replies wait, no further request is read from it. A client that
 *     does not read therefore holds the replies to one request at most,
 *     plus, when it follows the log, the events since; past the bound
 *     (conn_cfg.queue_bytes) it is closed, in one line of the log. One
 *     message may always wait, whatever its size.
 *   - Connections are limited per uid (conn_cfg.per_uid, for uids that are
 *     not admins at connect) and in all (conn_cfg.total, of which the last
 *     sixteenth is kept for admins, so that an administrator can always
 *     reach a daemon that ordinary users have filled). At its limit, a
 *     uid's connection idle the longest is closed to make room:
 *     libsfclient keeps one connection per process and reconnects when it
 *     finds it closed, so a uid with more live processes than the limit
 *     still attaches. When none of the uid's connections is idle (replies
 *     waiting, a request not yet read, following the log), the new one is
 *     answered why (an SF_MSG_REPLY with EAGAIN in place of the hello)
 *     and closed. "A uid" here is a login user (login.c): the subordinate
 *     uids of a user share its limit.
 *   - Descriptors (SCM_RIGHTS) are refused by the kernel at the sender
 *     (SO_PASSRIGHTS off, inherited from the listening socket, 6.16+) on
 *     every connection but an administrator's, which may carry
 *     ADMIN_ATTACH's pidfd. Where they can still arrive, a descriptor the
 *     daemon did not ask for is never closed here: closing it may wait as
 *     long as its sender likes (closer.c). That includes the last close of
 *     a connection whose queue still holds some, which the closer does.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <json-c/json.h>

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77 /* Linux 6.5 */
#endif

/* Descriptors the daemon keeps for itself (the runtime's maps, programs
 * and links, the log, epoll, those waiting at the closer and one
 * message's worth more) beside two per connection (its socket and the
 * peer's pidfd). */
#define FDS_OUTSIDE_CONNS (512 + CLOSER_MAX + FDS_PER_MSG)

struct conn_msg {
	struct conn_msg *next;
	size_t len;
	int nfds;
	int fds[CONN_MAX_FDS];
	char data[];
};

struct conn_config conn_cfg = { .per_uid = 64, .total = 1024, .queue_bytes = 1 << 20 };
struct conn_stats conn_stats;
struct client **conn_list;
int conn_count;

static int epfd = -1;
/* Closed connections wait here until the epoll batch that may still point
 * at them is done: a follower dropped while events are drained can have
 * its own event later in the same batch. */
static struct client *graveyard;
/* Given up to accept one connection when the descriptor table is full:
 * a pending connection left in the backlog would wake the loop for ever. */
static int spare_fd = -1;

/* ---- sending ------------------------------------------------------------ */

/* One datagram now, or not at all: the bytes sent, or -1 (errno). */
static ssize_t send_now(int fd, const void *buf, size_t len, const int *fds, int nfds)
{
	union {
		struct cmsghdr align;
		char bytes[CMSG_SPACE(CONN_MAX_FDS * sizeof(int))];
	} ctl;
	struct iovec iov = { (void *)buf, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &ctl };
	ssize_t n;

	if (nfds > 0)
		sf_proto_add_cmsg(&mh, SCM_RIGHTS, fds, nfds * sizeof(int));
	else
		mh.msg_control = NULL;
	do
		n = sendmsg(fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n;
}

/* Requests while nothing waits to be sent; the queue's turn otherwise. */
static void watch(struct client *c)
{
	uint32_t want = c->q_head ? EPOLLOUT : EPOLLIN;
	struct epoll_event ev = { .events = want, .data.ptr = c };

	if (!c->held && want != c->watching && epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev) == 0)
		c->watching = want;
}

void conn_hold(struct client *c, bool hold)
{
	struct epoll_event ev = { .events = c->q_head ? EPOLLOUT : EPOLLIN, .data.ptr = c };

	c->held = hold;
	c->last = time(NULL); /* busy, not idle */
	if (c->dead)
		return;
	/* Out of the epoll set, not watching nothing: a peer that hangs up
	 * would wake the loop for ever (EPOLLHUP is always reported). */
	if (hold && epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL) == 0)
		c->watching = 0;
	else if (!hold && epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &ev) == 0)
		c->watching = ev.events;
}

static void free_msg(struct conn_msg *m)
{
	int i;

	for (i = 0; i < m->nfds; i++)
		close(m->fds[i]);
	free(m);
}

/* Closes c with one line, in the log and on stderr, that says why. */
static void close_noting(struct client *c, const char *what, const char *why)
{
	char line[384];

	snprintf(line, sizeof(line), "{\"sfilterd\":\"%s\",\"pid\":%d,\"uid\":%u,"
		 "\"reason\":\"%s\"}", what, c->pid, c->uid, why);
	log_line(line);
	log_flush();
	diag("pid %d uid %u: %s: %s", c->pid, c->uid, what, why);
	conn_close(c);
}

static int enqueue(struct client *c, const void *buf, size_t len, const int *fds, int nfds)
{
	size_t cost = sizeof(struct conn_msg) + len;
	struct conn_msg *m;

	if (c->q_head && c->q_bytes + cost > conn_cfg.queue_bytes) {
		char why[160];

		snprintf(why, sizeof(why), "it does not read its replies: %zu bytes wait "
			 "(bound %zu)", c->q_bytes + cost, conn_cfg.queue_bytes);
		conn_stats.overflowed++;
		close_noting(c, "close", why);
		return -ENOBUFS;
	}
	m = malloc(cost);
	if (!m) {
		close_noting(c, "close", "out of memory for its replies");
		return -ENOMEM;
	}
	*m = (struct conn_msg){ .len = len };
	memcpy(m->data, buf, len);
	for (; m->nfds < nfds; m->nfds++) {
		m->fds[m->nfds] = fcntl(fds[m->nfds], F_DUPFD_CLOEXEC, 0);
		if (m->fds[m->nfds] < 0) {
			free_msg(m);
			close_noting(c, "close", "out of descriptors for its replies");
			return -EMFILE;
		}
	}
	if (c->q_tail)
		c->q_tail->next = m;
	else
		c->q_head = m;
	c->q_tail = m;
	c->q_bytes += cost;
	watch(c);
	return 0;
}

int conn_send(struct client *c, const void *buf, size_t len, const int *fds, int nfds)
{
	ssize_t n;
	int r;

	if (c->dead)
		return -EPIPE;
	if (nfds < 0 || nfds > CONN_MAX_FDS)
		return -EINVAL;
	if (!c->q_head) {
		n = send_now(c->fd, buf, len, fds, nfds);
		if (n == (ssize_t)len)
			return 0;
		if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
			/* The peer has gone (EPIPE, ECONNRESET). */
			r = n < 0 ? -errno : -EPIPE;
			conn_close(c);
			return r;
		}
	}
	return enqueue(c, buf, len, fds, nfds);
}

/* Sends what waits, oldest first, until the socket is full again. */
static void flush(struct client *c)
{
	while (c->q_head) {
		struct conn_msg *m = c->q_head;
		ssize_t n = send_now(c->fd, m->data, m->len, m->fds, m->nfds);

		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n != (ssize_t)m->len) {
			conn_close(c);
			return;
		}
		c->q_head = m->next;
		if (!c->q_head)
			c->q_tail = NULL;
		c->q_bytes -= sizeof(*m) + m->len;
		free_msg(m);
		c->last = time(NULL); /* it reads: not idle */
	}
	watch(c);
}

bool conn_ready(struct client *c, uint32_t events)
{
	if (c->dead)
		return false;
	if (c->q_head && (events & EPOLLOUT))
		flush(c);
	if (c->dead)
		return false;
	if (c->q_head) {
		/* Its peer has gone: nobody will read what waits. */
		if (events & (EPOLLHUP | EPOLLERR))
			conn_close(c);
		return false;
	}
	return events & (EPOLLIN | EPOLLHUP | EPOLLERR);
}

/* An SF_MSG_REPLY in out, which holds size bytes and is aligned for it:
 * its length, or 0 when it would not fit. */
static size_t build_reply(void *out, size_t size, uint32_t request_id, int error,
			  uint32_t id, uint32_t flags, const char *text,
			  const void *data, uint32_t data_len)
{
	struct sf_reply *r = out;
	size_t tlen = strlen(text), len = SF_PROTO_GREPLY_SIZE + tlen + 1 + data_len;

	if (len > size || len > SF_PROTO_MAX_MSG)
		return 0;
	memset(r, 0, sizeof(*r));
	sf_proto_header(&r->hdr, SF_MSG_REPLY, len, request_id);
	r->error = error;
	r->id = id;
	r->flags = flags;
	r->data_len = data_len;
	memcpy(r->text, text, tlen + 1);
	if (data_len)
		memcpy(r->text + tlen + 1, data, data_len);
	return len;
}

int conn_reply(struct client *c, uint32_t request_id, int error, uint32_t id,
	       uint32_t flags, const char *text, const void *data, uint32_t data_len)
{
	static union {
		struct sf_reply r;
		char bytes[SF_PROTO_MAX_MSG];
	} out;
	size_t len = build_reply(&out, sizeof(out), request_id, error, id, flags, text,
				 data, data_len);

	return len ? conn_send(c, &out, len, NULL, 0) : -EMSGSIZE;
}

/* ---- closing ------------------------------------------------------------ */

/* Receives one datagram of fd (at most size bytes kept) with room for every
 * descriptor it may carry, which go to the closer: the kernel would drop
 * those that found no room, and that drop is a last close on this thread
 * (scm_destroy() in recvmsg). Its length, or -1 (errno). */
static ssize_t recv_handing_over(int fd, void *buf, size_t size, const struct login *who)
{
	union {
		struct cmsghdr align;
		char bytes[CMSG_SPACE(sizeof(struct ucred)) +
			   CMSG_SPACE(FDS_PER_MSG * sizeof(int))];
	} ctl;
	struct iovec iov = { buf, size };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &ctl,
			     .msg_controllen = sizeof(ctl) };
	struct cmsghdr *cm;
	ssize_t n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_TRUNC | MSG_CMSG_CLOEXEC);

	for (cm = n >= 0 ? CMSG_FIRSTHDR(&mh) : NULL; cm; cm = CMSG_NXTHDR(&mh, cm)) {
		size_t i, k;
		int f;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < k; i++) {
			memcpy(&f, CMSG_DATA(cm) + i * sizeof(int), sizeof(f));
			closer_take(f, who);
		}
	}
	return n;
}

void conn_discard(int fd, const struct login *who)
{
	char buf[64];
	int i;

	for (i = 0; i < 64; i++)
		if (recv_handing_over(fd, buf, sizeof(buf), who) < 0)
			return;
}

/* The descriptors queued on fd, as the kernel counts them
 * (unix_show_fdinfo()'s scm_fds); -1 when it cannot be told. */
static int queued_fds(int fd)
{
	char path[64], text[512], *p;
	ssize_t n;
	int f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return -1;
	n = read(f, text, sizeof(text) - 1);
	close(f);
	if (n <= 0)
		return -1;
	text[n] = '\0';
	p = strstr(text, "scm_fds:");
	return p ? atoi(p + 8) : -1;
}

/* Closes a connection's socket fd. Where descriptors may wait in its queue
 * (may_hold_fds), its last close would release them here: the peer is
 * stopped from sending more (shutdown: unix_dgram_sendmsg() answers
 * EPIPE), and if any are there, the closer closes it, counted against
 * who. */
static void close_socket(int fd, bool may_hold_fds, const struct login *who)
{
	if (may_hold_fds) {
		shutdown(fd, SHUT_RD);
		if (queued_fds(fd) != 0) {
			closer_take(fd, who);
			return;
		}
	}
	close(fd);
}

void conn_close(struct client *c)
{
	int i;

	if (c->dead)
		return;
	c->dead = true;
	for (i = 0; i < conn_count; i++)
		if (conn_list[i] == c) {
			conn_list[i] = conn_list[--conn_count];
			break;
		}
	epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close_socket(c->fd, c->takes_fds, &c->login);
	if (c->pidfd >= 0)
		close(c->pidfd);
	while (c->q_head) {
		struct conn_msg *m = c->q_head;

		c->q_head = m->next;
		free_msg(m);
	}
	c->q_tail = NULL;
	c->q_bytes = 0;
	c->next_dead = graveyard;
	graveyard = c;
}

void conn_free_closed(void)
{
	struct client **p = &graveyard;

	while (*p) {
		struct client *c = *p;

		if (c->held) { /* its request still refers to it */
			p = &c->next_dead;
			continue;
		}
		*p = c->next_dead;
		free(c);
	}
}

void conn_close_login(const struct login *who, const char *why)
{
	int i;

	for (i = conn_count - 1; i >= 0; i--)
		if (i < conn_count && login_eq(&conn_list[i]->login, who))
			close_noting(conn_list[i], "close", why);
}

void conn_sweep_idle(int seconds)
{
	time_t now = time(NULL);
	int i;

	for (i = conn_count - 1; i >= 0; i--)
		if (!conn_list[i]->follow && !conn_list[i]->held &&
		    now - conn_list[i]->last > seconds)
			conn_close(conn_list[i]);
}

/* ---- accepting ---------------------------------------------------------- */

void conn_raise_nofile(void)
{
	struct rlimit rl;
	rlim_t room;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur >= FDS_OUTSIDE_CONNS + 2 * (rlim_t)conn_cfg.total)
		return;
	room = rl.rlim_cur > FDS_OUTSIDE_CONNS + 2 ? (rl.rlim_cur - FDS_OUTSIDE_CONNS) / 2 : 1;
	diag("RLIMIT_NOFILE is %llu: at most %llu connections, not %u",
	     (unsigned long long)rl.rlim_cur, (unsigned long long)room, conn_cfg.total);
	conn_cfg.total = room;
}

int conn_init(int ep)
{
	epfd = ep;
	if (conn_cfg.total < 1)
		conn_cfg.total = 1;
	conn_list = calloc(conn_cfg.total, sizeof(*conn_list));
	if (!conn_list)
		return -ENOMEM;
	spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	return 0;
}

/* Whether the admin group is the connecting process's gid or among its
 * supplementary groups, as the kernel recorded them at connect(). */
static bool in_admin_group(int fd, gid_t gid)
{
	gid_t groups[256];
	socklen_t len = sizeof(groups);
	size_t i;

	if (sfd.admin_gid == (gid_t)-1)
		return false;
	if (gid == sfd.admin_gid)
		return true;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0)
		return false;
	for (i = 0; i < len / sizeof(gid_t); i++)
		if (groups[i] == sfd.admin_gid)
			return true;
	return false;
}

/* Idle: nothing waits either way and it does not follow the log; or its
 * peer has gone, which the loop has not seen yet. */
static bool idle(const struct client *c)
{
	char probe;
	ssize_t n;

	if (c->follow || c->q_head || c->held)
		return false;
	n = recv(c->fd, &probe, 1, MSG_PEEK | MSG_DONTWAIT);
	return n == 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
}

/* 0 when a connection of who's (uid: its own) fits (after making room,
 * maybe), else EAGAIN with the reason in why. */
static int make_room(const struct login *who, uid_t uid, bool privileged, char *why,
		     size_t size)
{
	uint32_t reserve = conn_cfg.total / 16 ? conn_cfg.total / 16 : 1, mine = 0;
	struct client *oldest = NULL;
	char name[128];
	unsigned int waiting;
	int i;

	if ((uint32_t)conn_count >= conn_cfg.total) {
		snprintf(why, size, "sfilterd serves %d connections, its limit "
			 "(--max-conns %u)", conn_count, conn_cfg.total);
		return EAGAIN;
	}
	if (privileged)
		return 0;
	if (reserve < conn_cfg.total && (uint32_t)conn_count >= conn_cfg.total - reserve) {
		snprintf(why, size, "sfilterd serves %d connections: the rest of "
			 "--max-conns %u is kept for administrators", conn_count, conn_cfg.total);
		return EAGAIN;
	}
	waiting = closer_pending(who);
	if (waiting >= CLOSER_PER_LOGIN) {
		snprintf(why, size, "%u descriptors that %s sent wait to be closed (at most %u)",
			 waiting, login_name(who, uid, name, sizeof(name)), CLOSER_PER_LOGIN);
		return EAGAIN;
	}
	if (!conn_cfg.per_uid)
		return 0;
	for (i = 0; i < conn_count; i++) {
		struct client *c = conn_list[i];

		if (!login_eq(&c->login, who) || c->privileged)
			continue;
		mine++;
		if ((!oldest || c->last < oldest->last) && idle(c))
			oldest = c;
	}
	if (mine < conn_cfg.per_uid)
		return 0;
	if (oldest && mine == conn_cfg.per_uid) {
		if (sfd.verbose)
			diag("pid %d uid %u: idle, closed to make room for its login user",
			     oldest->pid, oldest->uid);
		conn_stats.evicted++;
		conn_close(oldest);
		return 0;
	}
	snprintf(why, size, "%s has %u connections open and none idle "
		 "(--max-conns-per-uid %u)", login_name(who, uid, name, sizeof(name)), mine,
		 conn_cfg.per_uid);
	return EAGAIN;
}

struct json_object *conn_reply_object(struct json_object *o, int error, const char *msg)
{
	if (!o)
		o = json_object_new_object();
	if (error)
		json_object_object_add(o, "error", json_object_new_int(error));
	if (msg && msg[0])
		json_object_object_add(o, "message", json_object_new_string_len(
					       msg, (int)strnlen(msg, SF_PROTO_MAX_TEXT - 1)));
	return o;
}

/* Answers a connection over a limit why, in place of the hello, and closes
 * it. One line in the log a second at most: refusals are cheap to cause. */
static void refuse(int fd, const struct ucred *cred, const struct login *who, const char *why)
{
	static time_t logged;
	static uint64_t unlogged;
	union {
		struct sf_reply r;
		char bytes[SF_PROTO_MAX_NOTE_REPLY];
	} out;
	char text[SF_PROTO_MAX_NOTE_REPLY - SF_PROTO_GREPLY_SIZE];
	time_t now = time(NULL);

	struct json_object *o = conn_reply_object(NULL, EAGAIN, why);

	conn_stats.refused++;
	conn_discard(fd, who);
	snprintf(text, sizeof(text), "%s", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	send_now(fd, &out, build_reply(&out, sizeof(out), 0, EAGAIN, 0, 0, text, NULL, 0),
		 NULL, 0);
	close_socket(fd, true, who);
	if (now == logged) {
		unlogged++;
		return;
	}
	logged = now;
	{
		char line[SF_PROTO_MAX_TEXT + 128];

		snprintf(line, sizeof(line), "{\"sfilterd\":\"refuse\",\"pid\":%d,\"uid\":%u,"
			 "\"reason\":\"%s\",\"not_logged_before\":%llu}", cred->pid, cred->uid,
			 why, (unsigned long long)unlogged);
		log_line(line);
		log_flush();
	}
	diag("pid %d uid %u: connection refused: %s", cred->pid, cred->uid, why);
	unlogged = 0;
}

/* accept4(), and when the descriptor table is full, the pending connection
 * all the same, to be refused. */
static int accept_one(int lfd, bool *no_fds)
{
	int fd;

	*no_fds = false;
	for (;;) {
		fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0 || errno == EAGAIN || errno == EWOULDBLOCK)
			return fd;
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if ((errno != EMFILE && errno != ENFILE) || spare_fd < 0) {
			diag("accept: %s", strerror(errno));
			return -1;
		}
		close(spare_fd);
		fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		*no_fds = fd >= 0;
		return fd;
	}
}

/* The pidfd of the process that connected: race-free from the kernel when
 * it can (6.5+), else by pid, at once; -1 when it has gone. */
static int peer_pidfd(int fd, pid_t pid)
{
	socklen_t len = sizeof(int);
	int pidfd = -1;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) == 0)
		return pidfd;
	/* Only when the kernel lacks SO_PEERPIDFD: any other error means
	 * the peer has exited, and its pid may already be someone else's. */
	pidfd = errno == ENOPROTOOPT ? syscall(SYS_pidfd_open, pid, 0) : -1;
	if (pidfd >= 0)
		fcntl(pidfd, F_SETFD, FD_CLOEXEC);
	return pidfd;
}

/* Whether descriptors can arrive on fd: an administrator's connection
 * takes them (ADMIN_ATTACH's pidfd), any other refuses them at the sender
 * where the kernel can (SO_PASSRIGHTS: EPERM in unix_dgram_sendmsg()). */
static bool set_passrights(int fd, bool privileged)
{
	int on = privileged;

	return setsockopt(fd, SOL_SOCKET, SO_PASSRIGHTS, &on, sizeof(on)) < 0 || on;
}

struct client *conn_accept(int lfd)
{
	for (;;) {
		struct ucred cred;
		socklen_t len = sizeof(cred);
		struct epoll_event ev = { .events = EPOLLIN };
		struct login who;
		struct client *c;
		char why[SF_PROTO_MAX_TEXT];
		bool no_fds, group, privileged;
		int fd, one = 1, pidfd, r;

		fd = accept_one(lfd, &no_fds);
		if (fd < 0)
			return NULL;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
			close_socket(fd, true, &(struct login){ .uid = (uid_t)-1 });
			continue;
		}
		who = (struct login){ .uid = cred.uid };
		if (no_fds) {
			refuse(fd, &cred, &who, "sfilterd has no descriptor left for it");
			continue;
		}
		pidfd = peer_pidfd(fd, cred.pid);
		r = login_of(pidfd, &cred, &who);
		if (r < 0 && r != -ESRCH) {
			snprintf(why, sizeof(why), "sfilterd cannot tell its login user: %s",
				 strerror(-r));
			refuse(fd, &cred, &who, why);
			if (pidfd >= 0)
				close(pidfd);
			continue;
		}
		/* Gone (-ESRCH): greeted never, closed by peer.c. */
		group = in_admin_group(fd, cred.gid);
		privileged = cred.uid == 0 || group;
		c = NULL;
		if (make_room(&who, cred.uid, privileged, why, sizeof(why)))
			refuse(fd, &cred, &who, why);
		else if (!(c = calloc(1, sizeof(*c))))
			close_socket(fd, true, &who);
		if (!c) {
			if (pidfd >= 0)
				close(pidfd);
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one));
		*c = (struct client){ .fd = fd, .pidfd = pidfd, .pid = cred.pid,
				      .uid = cred.uid, .gid = cred.gid,
				      .in_admin_group = group, .privileged = privileged,
				      .login = who, .takes_fds = set_passrights(fd, privileged),
				      .last = time(NULL),
				      .watching = EPOLLIN };
		ev.data.ptr = c;
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			close_socket(fd, true, &who);
			if (pidfd >= 0)
				close(pidfd);
			free(c);
			continue;
		}
		conn_list[conn_count++] = c;
		return c;
	}
}
