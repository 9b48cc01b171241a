// SPDX-License-Identifier: GPL-2.0-only
/*
 * One request: a datagram read from a connection (with the credentials
 * and descriptors that came along: every one of them is received, and
 * those not asked for go to the closer, peer.c), its header checked
 * (loader/proto/checks.c),
 * handed to its handler, and answered with SF_MSG_REPLY (JSON), whatever
 * its type (reply.c). One datagram per call, so
 * that level-triggered epoll brings the loop back for the next one and
 * one busy client cannot starve the others.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "daemon.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <json-c/json.h>

/* The one receive buffer: one request is handled at a time. One byte more
 * than the largest message so an oversized one is seen as such. */
static union {
	struct sf_msg_hdr hdr;
	struct sf_attach_req attach;
	char bytes[SF_PROTO_MAX_MSG + 8];
} rbuf;

/* The pidfd peer.c kept: its close never waits. */
static void close_fd(struct ancillary *anc)
{
	if (anc->fd >= 0)
		close(anc->fd);
	anc->fd = -1;
}

/* Whether the next datagram on fd carries descriptors: peeked with room
 * for its credentials alone, those are left in the queue (the peek's own
 * references, unix_peek_fds(), are not the last) and MSG_CTRUNC says so. */
static bool next_has_fds(int fd)
{
	char cbuf[CMSG_SPACE(sizeof(struct ucred))], b;
	struct iovec iov = { &b, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };

	return recvmsg(fd, &mh, MSG_PEEK | MSG_DONTWAIT) >= 0 && (mh.msg_flags & MSG_CTRUNC);
}

/* Every request type but ATTACH (n bytes in rbuf): checked by peer.c,
 * answered by its handler, or here with the error that stopped it. */
static void handle_admin(struct client *c, const struct ancillary *anc, size_t n)
{
	uint32_t rid = rbuf.hdr.request_id, id = 0, type = rbuf.hdr.type;
	const struct ucred *sender = &anc->cred;
	struct json_object *o = NULL;
	char msg[SF_PROTO_MAX_TEXT] = "";
	bool admin, needs_admin = type == SF_MSG_ADMIN_ATTACH ||
		type == SF_MSG_DETACH || type == SF_MSG_REPLACE || type == SF_MSG_RECORD;
	uint64_t t0 = metrics_now_ns();
	int error;

	error = peer_check_request(c, anc, type, needs_admin, &admin, msg, sizeof(msg));
	/* Refused before admin.c sees it (admin.c counts the rest). */
	if (error && type == SF_MSG_ADMIN_ATTACH)
		metrics_attach(metrics_admin_kind(rbuf.bytes, n), error, t0);
	if (!error && type == SF_MSG_PROFILE) {
		/* Anyone's, for a filter of their own (rules.c). */
		o = json_object_new_object();
		error = rules_request(rbuf.bytes, n, c, rid, sender->uid, admin, &id, msg,
				      sizeof(msg));
		if (error == REPLY_LATER) {
			json_object_put(o);
			return; /* answered before the compile */
		}
	} else if (!error && !needs_admin) {
		error = introspect_request(c, rid, type, rbuf.bytes, n, admin, msg, sizeof(msg));
		if (!error)
			return; /* answered */
	} else if (!error) {
		o = json_object_new_object();
		error = admin_request(c, type, rbuf.bytes, n, sender->uid, anc->fd, &id, o,
				      msg, sizeof(msg));
		if (error == REPLY_LATER) {
			json_object_put(o);
			return;
		}
	}
	if (sfd.verbose || (needs_admin && !error))
		diag("pid %d uid %u request %u type %u: %s%s%s", c->pid, sender->uid, rid, type,
		     error ? strerror(error > 0 ? error : EBUSY) : "ok", msg[0] ? ": " : "", msg);
	/* Administration is recorded in the log too. */
	if (needs_admin && !error)
		admin_record(type, c, sender->uid, msg);
	reply_json(c, rid, error, id, 0, o, msg);
}

/* ATTACH (n bytes in rbuf, received with msg_flags): the reply's error,
 * after the checks that only its framing and ancillary data allow. */
static int check_attach(const struct ancillary *anc, size_t n, int msg_flags, char *msg,
			size_t msz)
{
	int error;

	if ((error = -sf_proto_check_attach(rbuf.bytes, n, msg, msz)) != 0)
		return error;
	if (anc->nfds) {
		snprintf(msg, msz, "%d file descriptor(s) attached: not accepted, closed",
			 anc->nfds);
		return EINVAL;
	}
	if (msg_flags & MSG_CTRUNC) {
		snprintf(msg, msz, "too much ancillary data");
		return EINVAL;
	}
	if (!anc->have_cred) {
		snprintf(msg, msz, "no credentials with the request");
		return EACCES;
	}
	return 0;
}

static int handle_attach(struct client *c, const struct ancillary *anc, size_t n,
			 int msg_flags, struct attach_timing *tm, uint32_t *filter_id,
			 char *msg, size_t msz)
{
	int error;

	tm->t0 = metrics_now_ns();
	error = check_attach(anc, n, msg_flags, msg, msz);
	if (error) {
		/* Refused before attach.c sees it (attach.c counts the rest). */
		metrics_attach(MK_SELF, error, tm->t0);
		return error;
	}
	return attach_request(c, &anc->cred, &rbuf.attach, tm, filter_id, msg, msz);
}

/* A request of n bytes, received with msg_flags, in rbuf. */
static void handle_request(struct client *c, struct ancillary *anc, size_t n, int msg_flags)
{
	uint32_t request_id = 0, filter_id = 0;
	char msg[SF_PROTO_MAX_TEXT] = "";
	struct attach_timing tm = { 0 };
	bool attached = false;
	int error;

	if (n >= SF_PROTO_HDR_SIZE)
		request_id = rbuf.hdr.request_id;
	if ((error = -sf_proto_check_header(rbuf.bytes, n, msg_flags & MSG_TRUNC,
					   msg, sizeof(msg))) != 0) {
		/* answered below */
	} else if ((rbuf.hdr.type == SF_MSG_ATTACH || rbuf.hdr.type == SF_MSG_ADMIN_ATTACH) &&
		   verify_park(c, anc, rbuf.bytes, n, msg_flags) == 0) {
		return; /* after its uid's attach under way (verify.c) */
	} else if (sf_proto_is_admin_type(rbuf.hdr.type) && !(msg_flags & MSG_CTRUNC)) {
		handle_admin(c, anc, n);
		close_fd(anc);
		return;
	} else if (rbuf.hdr.type != SF_MSG_ATTACH) {
		snprintf(msg, sizeof(msg), "unknown message type %u", rbuf.hdr.type);
		error = EPROTO;
	} else {
		error = handle_attach(c, anc, n, msg_flags, &tm, &filter_id, msg, sizeof(msg));
		if (error == REPLY_LATER)
			return;
		attached = error == 0;
	}
	close_fd(anc);
	if (anc->nfds && error != EINVAL)
		/* Said even when another error came first. */
		snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg),
			 "; %d file descriptor(s) closed", anc->nfds);

	if (sfd.verbose)
		diag("pid %d uid %u request %u: %s%s%s", c->pid, c->uid, request_id,
		     error > 0 ? strerror(error) : error < 0 ? "TSYNC conflict" : "ok",
		     msg[0] ? ": " : "", msg);
	reply_attach(c, request_id, error, filter_id, msg);
	if (attached)
		attach_spans_add(&tm);
}

bool request_resume(void)
{
	struct ancillary anc;
	int msg_flags;
	size_t n;
	struct client *c = verify_unpark(&anc, rbuf.bytes, sizeof(rbuf.bytes), &n, &msg_flags);

	if (!c)
		return false;
	if (c->dead)
		close_fd(&anc);
	else
		handle_request(c, &anc, n, msg_flags);
	return true;
}

void request_handle(struct client *c)
{
	char cbuf[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(FDS_PER_MSG * sizeof(int))];
	struct iovec iov = { rbuf.bytes, sizeof(rbuf.bytes) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct ancillary anc = { .fd = -1 };
	char why[SF_PROTO_MAX_TEXT];
	ssize_t n;

	/* With the closer full, descriptors that come are left in the queue
	 * for the closer to release with the connection. */
	if (c->takes_fds && !c->privileged && closer_total() >= CLOSER_MAX &&
	    next_has_fds(c->fd)) {
		diag("pid %d uid %u: sent descriptors while %u wait to be closed: "
		     "connection closed", c->pid, c->uid, closer_total());
		conn_close(c);
		return;
	}
	n = recvmsg(c->fd, &mh, MSG_DONTWAIT | MSG_TRUNC | MSG_CMSG_CLOEXEC);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	/* Descriptors arrive even with an empty datagram: take them first. */
	if (n >= 0)
		peer_scan_cmsgs(c, &mh, &anc);
	if (n <= 0) { /* EOF (or an empty datagram, which looks the same) */
		close_fd(&anc);
		conn_close(c);
		return;
	}
	if (anc.nfds && !peer_fds_within_bound(c, why, sizeof(why))) {
		close_fd(&anc);
		reply_attach(c, n >= (ssize_t)SF_PROTO_HDR_SIZE ? rbuf.hdr.request_id : 0, EAGAIN,
			     0, why);
		conn_close_login(&c->login, why);
		return;
	}
	c->last = time(NULL);
	handle_request(c, &anc, n, mh.msg_flags);
}
