// SPDX-License-Identifier: GPL-2.0-only
/*
 * Who asks, and what it may do, decided only from what the kernel vouched
 * for when it happened, never from /proc read later (docs/security.md):
 *   - the connecting process (SO_PEERCRED, SO_PEERGROUPS at connect, in
 *     conn.c), pinned by a pidfd taken at accept, and identified here by
 *     the runtime (tgid, leader start time, exec id) before the daemon
 *     sends its hello: a connection on which a request arrived before the
 *     hello is refused;
 *   - each request's credentials (SCM_CREDENTIALS, checked by the kernel
 *     at send time): admin is uid 0 then, or the --admin-group; a request
 *     sent by another process than the one that connected is refused;
 *   - the descriptors a request carries: one pidfd for an admin's attach
 *     by pid, none otherwise. Only connections privileged at connect take
 *     any where the kernel can refuse them (conn.c); any that came and is
 *     not that pidfd is closed by the closer, never here (closer.c).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "daemon.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/syscall.h>

/* At most this many connections a turn of the loop: a flood of them takes
 * its turn with the requests that wait, instead of going before them all. */
#define ACCEPTS_PER_TURN 64

/*
 * Identifies the peer's process (through its pidfd: tgid, leader start
 * time, and the exec id a self-attach is held to), then sends the hello.
 * Anything the peer sent before the hello it sent before the daemon knew
 * which program image it runs, maybe from the image it has replaced since
 * (queued requests, then execve of a setuid program): such a connection is
 * answered EPROTO and closed. 0, or -errno: close the connection.
 */
static int greet(struct client *c)
{
	struct sf_hello h = { .hdr = { SF_PROTO_MAGIC, SF_PROTO_VERSION, SF_MSG_HELLO,
				       SF_PROTO_HELLO_SIZE, 0 } };
	char probe;
	int r;

	if (c->pidfd < 0)
		return -ESRCH;
	r = sf_runtime_identify(sfd.rt, c->pidfd, &c->ident);
	if (r < 0) {
		if (sfd.verbose)
			diag("pid %d: cannot identify the process: %s", c->pid, strerror(-r));
		return r;
	}
	if (recv(c->fd, &probe, 1, MSG_PEEK | MSG_DONTWAIT) >= 0) {
		if (sfd.verbose)
			diag("pid %d uid %u: sent before the hello: refused", c->pid, c->uid);
		conn_discard(c->fd, &c->login);
		reply_json(c, 0, EPROTO, 0, 0, NULL, "request sent before the daemon's hello "
			   "(since protocol version 2: wait for SF_MSG_HELLO first)");
		return -EPROTO;
	}
	if (errno != EAGAIN && errno != EWOULDBLOCK)
		return -errno;
	h.daemon_pid = (uint32_t)getpid();
	return conn_send(c, &h, sizeof(h), NULL, 0);
}

void peer_accept(int lfd)
{
	struct client *c;
	int i;

	for (i = 0; i < ACCEPTS_PER_TURN && (c = conn_accept(lfd)); i++)
		if (greet(c) < 0)
			conn_close(c);
}

static bool pidfd_alive(int pidfd)
{
	return pidfd >= 0 &&
	       syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0;
}

/* Administration needs uid 0 when the request was sent (its kernel-checked
 * SCM_CREDENTIALS: the client sends its effective ids), or the admin
 * group: as the request's gid, or among the groups the process had when
 * it connected (SO_PEERGROUPS) if it is still the uid that connected. */
bool peer_is_admin(const struct client *c, const struct ucred *sender)
{
	if (sender->uid == 0)
		return true;
	if (sfd.admin_gid == (gid_t)-1)
		return false;
	return sender->gid == sfd.admin_gid ||
	       (c->in_admin_group && sender->uid == c->uid);
}

/* Whether fd is a pidfd (or a /proc/<pid> directory), whose close never
 * waits: pidfd_send_signal() takes nothing else (pidfd_to_pid(): EBADF). */
static bool is_pidfd(int fd)
{
	return syscall(SYS_pidfd_send_signal, fd, 0, NULL, 0) == 0 || errno == ESRCH;
}

void peer_scan_cmsgs(const struct client *c, struct msghdr *mh, struct ancillary *a)
{
	struct cmsghdr *cm;

	for (cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET)
			continue;
		if (cm->cmsg_type == SCM_RIGHTS) {
			size_t n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int), i;
			int fd;

			for (i = 0; i < n; i++) {
				memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
				if (a->nfds++ == 0 && is_pidfd(fd))
					a->fd = fd;
				else
					closer_take(fd, &c->login);
			}
		} else if (cm->cmsg_type == SCM_CREDENTIALS &&
			   cm->cmsg_len >= CMSG_LEN(sizeof(struct ucred))) {
			memcpy(&a->cred, CMSG_DATA(cm), sizeof(a->cred));
			a->have_cred = true;
		}
	}
}

bool peer_fds_within_bound(const struct client *c, char *why, size_t size)
{
	unsigned int waiting = closer_pending(&c->login);
	char name[128];

	if (c->privileged || waiting < CLOSER_PER_LOGIN)
		return true;
	set_msg(why, size, "%u descriptors that %s sent wait to be closed (at most %u)",
		waiting, login_name(&c->login, c->uid, name, sizeof(name)), CLOSER_PER_LOGIN);
	return false;
}

int peer_check_request(const struct client *c, const struct ancillary *anc, uint32_t type,
		       bool needs_admin, bool *admin, char *msg, size_t msz)
{
	const struct ucred *sender = &anc->cred;

	*admin = false;
	if (anc->nfds && !(type == SF_MSG_ADMIN_ATTACH && anc->nfds == 1)) {
		set_msg(msg, msz, "%d file descriptor(s) attached: not accepted, closed",
			anc->nfds);
		return EINVAL;
	}
	if (anc->nfds && anc->fd < 0) {
		set_msg(msg, msz, "the descriptor attached is not a pidfd: not accepted, closed");
		return EINVAL;
	}
	if (!anc->have_cred) {
		set_msg(msg, msz, "no credentials with the request");
		return EACCES;
	}
	if (sender->pid != c->pid) {
		set_msg(msg, msz, "request sent by pid %d on a connection made by pid %d",
			sender->pid, c->pid);
		return EACCES;
	}
	if (!pidfd_alive(c->pidfd)) {
		set_msg(msg, msz, "process %d is gone", c->pid);
		return ESRCH;
	}
	*admin = peer_is_admin(c, sender);
	if (needs_admin && !*admin) {
		set_msg(msg, msz, "administration needs uid 0%s when the request is "
			"sent (this one: pid %d uid %u)",
			sfd.admin_gid != (gid_t)-1 ? " or the admin group" : "", c->pid,
			sender->uid);
		return EPERM;
	}
	return 0;
}
