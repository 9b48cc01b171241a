// SPDX-License-Identifier: GPL-2.0-only
/*
 * The agent socket's side of the gate: connections that each bring one
 * seccomp listener with the runtime-spec's ContainerProcessState JSON (as
 * runc and crun send it to linux.seccomp.listenerPath, and libsfclient
 * after installing a gate), the table of listeners held, and their
 * copies at the holder.
 *
 * A connection is read without ever waiting: its bytes and descriptors
 * as they come, until its end of file or AGENT_TIMEOUT_MS. The first
 * descriptor is kept if it is a seccomp listener; every other one, and
 * every connection once done (its queue may hold more descriptors: its
 * last close releases them), goes to the closer.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "gate_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>

static struct agent_conn *conns;
static unsigned int n_conns;
static struct gate_listener *listeners;

/* ---- the listeners' table ------------------------------------------------- */

/* The processes that handed in their own gate's listener (libsfclient's
 * self-attach, by SO_PEERCRED): for the attach note only, read by the
 * loop's thread. */
static struct {
	pthread_mutex_t lock;
	pid_t pid[GATE_MAX];
	unsigned int n;
} reg = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void reg_add(pid_t pid)
{
	pthread_mutex_lock(&reg.lock);
	if (pid > 0 && reg.n < GATE_MAX)
		reg.pid[reg.n++] = pid;
	pthread_mutex_unlock(&reg.lock);
}

static void reg_del(pid_t pid)
{
	unsigned int i;

	pthread_mutex_lock(&reg.lock);
	for (i = 0; pid > 0 && i < reg.n; i++)
		if (reg.pid[i] == pid) {
			reg.pid[i] = reg.pid[--reg.n];
			break;
		}
	pthread_mutex_unlock(&reg.lock);
}

bool gate_registered(pid_t tgid)
{
	unsigned int i;
	bool found = false;

	pthread_mutex_lock(&reg.lock);
	for (i = 0; !found && i < reg.n; i++)
		found = reg.pid[i] == tgid;
	pthread_mutex_unlock(&reg.lock);
	return found;
}

struct gate_listener *gate_listener_new(const struct login *who)
{
	struct gate_listener *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->who = *who;
	l->fd = -1;
	l->next = listeners;
	listeners = l;
	return l;
}

void gate_listener_free(struct gate_listener *l)
{
	reg_del(l->pid);
	l->fd = -1;
}

void gate_listener_registered(struct gate_listener *l)
{
	reg_add(l->pid);
}

void gate_listener_reap(void)
{
	struct gate_listener **p = &listeners, *l;

	while ((l = *p)) {
		if (l->fd < 0) {
			*p = l->next;
			free(l);
		} else {
			p = &l->next;
		}
	}
}

struct gate_listener *gate_listeners(void)
{
	return listeners;
}

bool gate_listener_known(uint64_t key)
{
	struct gate_listener *l;

	for (l = listeners; l; l = l->next)
		if (l->fd >= 0 && l->key == key)
			return true;
	return false;
}

unsigned int gate_listener_count(const struct login *who)
{
	struct gate_listener *l;
	unsigned int n = 0;

	for (l = listeners; l; l = l->next)
		n += l->fd >= 0 && login_eq(&l->who, who);
	return n;
}

void gate_listener_close_all(void)
{
	struct gate_listener *l;

	for (l = listeners; l; l = l->next)
		if (l->fd >= 0) {
			close(l->fd);
			gate_listener_free(l);
		}
	gate_listener_reap();
	g.st.listeners = 0;
}

/* ---- connections ---------------------------------------------------------- */

static unsigned int conns_of(const struct login *who)
{
	struct agent_conn *c;
	unsigned int n = 0;

	for (c = conns; c; c = c->next)
		n += c->fd >= 0 && login_eq(&c->who, who);
	return n;
}

void agent_accept(void)
{
	int i;

	for (i = 0; i < 16; i++) {
		int fd = accept4(g.agent_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC), pfd;
		struct ucred cred = { 0 };
		socklen_t len = sizeof(cred);
		struct agent_conn *c;
		struct login who;

		if (fd < 0)
			return;
		getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len);
		pfd = (int)syscall(SYS_pidfd_open, cred.pid, 0);
		if (login_of(pfd, &cred, &who) < 0)
			who = (struct login){ .uid = cred.uid };
		if (pfd >= 0)
			close(pfd);
		/* A pinned daemon without a holder could not keep a listener
		 * across its own restart: no READY, so that the client
		 * installs no gate it would lose (its filter is then judged by
		 * the tier alone, and its note says so). */
		if (n_conns >= AGENT_MAX_CONNS || conns_of(&who) >= AGENT_PER_LOGIN ||
		    gate_listener_count(&who) >= GATE_PER_LOGIN ||
		    (sfd.pinned && !gate_holder_ready()) ||
		    !(c = calloc(1, sizeof(*c)))) {
			__atomic_add_fetch(&g.st.refused, 1, __ATOMIC_RELAXED);
			/* A limit, as the listeners' own (ENOSPC), though the
			 * sender sees only its connection closed. */
			metrics_attach(MK_GATE, ENOSPC, 0);
			closer_take(fd, &who);
			continue;
		}
		c->tag.kind = GATE_AGENT_CONN;
		c->fd = fd;
		c->who = who;
		c->pid = cred.pid;
		c->listener = -1;
		c->deadline_ms = gate_now_ms() + AGENT_IDLE_MS;
		if (gate_watch(fd, EPOLLIN, &c->tag) < 0) {
			free(c);
			closer_take(fd, &who);
			continue;
		}
		c->next = conns;
		conns = c;
		n_conns++;
		(void)!send(fd, (char[]){ SF_PROTO_AGENT_READY }, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	}
}

/* The connection's end: one answer line, then the closer. */
static void finish(struct agent_conn *c, int error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void finish(struct agent_conn *c, int error, const char *fmt, ...)
{
	struct json_object *o = json_object_new_object();
	char msg[SF_PROTO_MAX_TEXT], line[2 * SF_PROTO_MAX_TEXT];
	const char *s;
	size_t len;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_object_object_add(o, "error", json_object_new_int(error));
	json_object_object_add(o, "message", json_object_new_string(msg));
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	/* One send with its newline: the sender reads up to it, and a line
	 * in two pieces would wake it twice. */
	len = strlen(s);
	if (len < sizeof(line)) {
		memcpy(line, s, len);
		line[len] = '\n';
		(void)!send(c->fd, line, len + 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	} else {
		(void)!send(c->fd, s, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		(void)!send(c->fd, "\n", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	}
	json_object_put(o);
	metrics_attach(MK_GATE, error, c->t0_ns);
	if (error) {
		__atomic_add_fetch(&g.st.refused, 1, __ATOMIC_RELAXED);
		/* Anyone may connect, as often as they like: a line per
		 * refusal only when asked for. The sender has the answer. */
		if (sfd.verbose)
			diag("agent: pid %d: %s", c->pid, msg);
	}
	epoll_ctl(g.ep, EPOLL_CTL_DEL, c->fd, NULL);
	if (c->listener >= 0)
		closer_take(c->listener, &c->who);
	closer_take(c->fd, &c->who);
	c->fd = -1;
	c->listener = -1;
}

/* Whether fd, in this process, is a seccomp notification descriptor
 * (seccomp_notify_fops' anon inode). */
static bool is_listener(int fd)
{
	char path[64], target[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return false;
	target[n] = '\0';
	return strcmp(target, "anon_inode:seccomp notify") == 0;
}

/* The message's length without what may trail the JSON: whitespace
 * (crun's generator beautifies) and NUL bytes. */
static size_t trimmed(const struct agent_conn *c)
{
	size_t n = c->len;

	while (n && (c->buf[n - 1] == '\0' || c->buf[n - 1] == '\n' || c->buf[n - 1] == ' ' ||
		     c->buf[n - 1] == '\r' || c->buf[n - 1] == '\t'))
		n--;
	return n;
}

/* The bytes so far as one whole JSON value (the caller's to put), or NULL
 * while they are not one yet. */
static struct json_object *parse_whole(const struct agent_conn *c)
{
	struct json_tokener *tok;
	struct json_object *o;
	size_t n = trimmed(c);

	if (!n || c->buf[n - 1] != '}')
		return NULL;
	tok = json_tokener_new();
	if (!tok)
		return NULL;
	o = json_tokener_parse_ex(tok, c->buf, (int)n);
	if (o && json_tokener_get_error(tok) != json_tokener_success) {
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	return o;
}

/* The whole message has come, parsed as o (NULL: at the end of file, not
 * one whole JSON value): checked, and its listener taken. o is put. */
static void take(struct agent_conn *c, struct json_object *o)
{
	struct json_object *fds, *v;
	const char *what = "";
	struct gate_listener *l;
	bool killable;
	pid_t pid = 0;
	int r;

	c->t0_ns = metrics_now_ns();
	if (!o || !json_object_is_type(o, json_type_object)) {
		finish(c, EINVAL, "not a ContainerProcessState JSON object (%zu bytes)", c->len);
		goto out;
	}
	if (!json_object_object_get_ex(o, "fds", &fds) ||
	    !json_object_is_type(fds, json_type_array) || json_object_array_length(fds) < 1 ||
	    strcmp(json_object_get_string(json_object_array_get_idx(fds, 0)) ?: "",
		   SF_PROTO_AGENT_FD_NAME) != 0) {
		finish(c, EINVAL, "fds: the first descriptor must be \"%s\"",
		       SF_PROTO_AGENT_FD_NAME);
		goto out;
	}
	if (c->listener < 0) {
		finish(c, EBADF, "no seccomp listener came with the message (SCM_RIGHTS, "
		       "the first descriptor)");
		goto out;
	}
	if (json_object_object_get_ex(o, "metadata", &v) && json_object_get_string(v))
		what = json_object_get_string(v);
	/* The process a self-attach's gate covers is the sender's own, as
	 * the kernel names it (SO_PEERCRED); the pid the JSON claims is
	 * anyone's word and is never recorded. */
	if (strncmp(what, SF_PROTO_AGENT_SELF, strlen(SF_PROTO_AGENT_SELF)) == 0)
		pid = c->pid;
	/* Whether the filter was installed with WAIT_KILLABLE_RECV, as the
	 * sender says: a false claim only misplaces its own tasks' SIGSYS. */
	killable = strstr(what, SF_PROTO_AGENT_KILLABLE) != NULL;
	r = gate_add_listener(c->listener, &c->who, pid, what, killable, &l);
	if (r == -ENOSPC) {
		finish(c, ENOSPC, "too many listeners held (%u per login user, %u in all)",
		       GATE_PER_LOGIN, GATE_MAX);
		goto out;
	}
	if (r) {
		finish(c, -r, "listener not taken: %s", strerror(-r));
		goto out;
	}
	c->listener = -1; /* the judge's now */
	r = gate_hold(l);
	if (r && sfd.pinned) {
		/* A pinned daemon's tasks outlive it; a listener only this
		 * process holds would not: its calls would fail with ENOSYS
		 * after a SIGKILL, whatever the filter says. Refused, the
		 * sender keeps its copy and tries again. */
		gate_drop_listener(l);
		finish(c, EAGAIN, "the listener holder does not keep it (%s): a restart of "
		       "sfilterd would lose it", strerror(-r));
		goto out;
	}
	if (r)
		diag("gate: the holder does not keep listener %s: %s (a restart of the daemon "
		     "would answer its calls ENOSYS)", what, strerror(-r));
	if (sfd.verbose)
		diag("agent: pid %d: listener held (%s)", c->pid, what);
	finish(c, 0, "listener held: the calls it sends up are judged by sfilterd");
out:
	if (o)
		json_object_put(o);
}

void agent_read(struct agent_conn *c)
{
	char cbuf[CMSG_SPACE(FDS_PER_MSG * sizeof(int))] __attribute__((aligned(8)));
	struct iovec iov;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct json_object *o;
	struct cmsghdr *cm;
	ssize_t n;

	if (c->fd < 0)
		return;
	if (!c->buf && !(c->buf = malloc(SF_PROTO_AGENT_MAX_MSG + 1))) {
		finish(c, ENOMEM, "out of memory");
		return;
	}
	iov.iov_base = c->buf + c->len;
	iov.iov_len = SF_PROTO_AGENT_MAX_MSG + 1 - c->len;
	n = recvmsg(c->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	for (cm = n >= 0 ? CMSG_FIRSTHDR(&mh) : NULL; cm; cm = CMSG_NXTHDR(&mh, cm)) {
		size_t k, nfd;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		nfd = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (k = 0; k < nfd; k++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + k * sizeof(int), sizeof(fd));
			if (c->listener < 0 && c->len == 0 && k == 0 && is_listener(fd))
				c->listener = fd;
			else
				closer_take(fd, &c->who);
		}
	}
	if (n < 0) {
		finish(c, EIO, "recvmsg: %s", strerror(errno));
		return;
	}
	if (!c->len && n > 0)
		c->deadline_ms = gate_now_ms() + AGENT_TIMEOUT_MS;
	c->len += (size_t)n;
	if (c->len > SF_PROTO_AGENT_MAX_MSG) {
		finish(c, EMSGSIZE, "the message is over %u bytes", SF_PROTO_AGENT_MAX_MSG);
		return;
	}
	/* runc keeps its end open a while after sending: a whole JSON
	 * object is the message's end as much as the end of file is. */
	o = parse_whole(c);
	if (n == 0 || o)
		take(c, o);
}

void agent_sweep(uint64_t now_ms)
{
	struct agent_conn **p = &conns, *c;

	for (c = conns; c; c = c->next)
		if (c->fd >= 0 && now_ms >= c->deadline_ms)
			finish(c, ETIMEDOUT, c->len ? "no end of the message within %u ms "
			       "of its first byte" : "no message within %u ms",
			       c->len ? AGENT_TIMEOUT_MS : AGENT_IDLE_MS);
	while ((c = *p)) {
		if (c->fd < 0) {
			*p = c->next;
			free(c->buf);
			free(c);
			n_conns--;
		} else {
			p = &c->next;
		}
	}
}

void agent_close_all(void)
{
	struct agent_conn *c;

	for (c = conns; c; c = c->next)
		if (c->fd >= 0)
			finish(c, ESHUTDOWN, "sfilterd is stopping");
	agent_sweep(0);
}
