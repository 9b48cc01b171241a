// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libsfclient: sf_attach() over sfilterd's socket (loader/proto/proto.h).
 *
 * seccomp(2) makes no system call after the filter is installed; neither
 * may sf_attach(), or a filter ported from seccomp could kill its caller
 * on the way out. So the recv() that carries the reply is the last call
 * under the old chain: the daemon arms the chain for the thread's next
 * call (struct sf_task.armed), which lets a recv() on this connection's
 * fd (req.reply_fd) through under the old chain, and only that. The
 * connection is kept (one per process, reopened after fork) instead of
 * being closed.
 * Before the ATTACH, the first attach of a process installs the gate for
 * the filter (selfgate.c): the calls the filter does not allow then go to
 * sfilterd, which judges them before they run. The calls the ATTACH needs
 * besides its send and receive (the connection, the hello, the ids the
 * request carries) are made before the gate goes in, the connection
 * first, so that the daemon greets it while the gate is built.
 * Errors are checked locally in seccomp(2)'s order first (flags, NULL
 * pointer, length), so a caller without a daemon still gets the errno the
 * kernel would give for those.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sfclient.h"
#include "selfgate.h"
#include "client.h"
#include "marks.h"
#include "proto.h"

/* What sf_attach() takes is what the wire's ATTACH takes, the 2012
 * interface's flags (sf_prctl_attach()'s) and the gate's mark aside. */
_Static_assert(SF_ATTACH_KNOWN_FLAGS == SF_FLAGS_SELF &&
	       (SF_PROTO_ATTACH_FLAGS & ~(SF_FLAGS_RFC | SF_FLAG_GATED)) == SF_FLAGS_SELF,
	       "sf_attach()'s flags are the wire's");

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>

#define SF_EXPORT __attribute__((visibility("default")))

static __thread char last_error[SF_PROTO_MAX_TEXT];
static __thread uint32_t next_request_id;

/* The kept connection: its fd and the process that opened it (a forked
 * child's requests must come from its own connection). */
static int kept_fd = -1;
static pid_t kept_pid;
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

static int fail(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Sets sf_last_error() and errno; returns -1. */
static int fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	errno = err;
	return -1;
}

SF_EXPORT const char *sf_last_error(void)
{
	return last_error;
}

/* For profile.c: the calling thread's sf_last_error() buffer. */
char *sf_client_error_buf(size_t *size)
{
	*size = sizeof(last_error);
	return last_error;
}

/* How long a caller waits for the daemon's hello. */
#define HELLO_TIMEOUT_MS 10000

static int connect_daemon(const char *path)
{
	char why[SF_PROTO_MAX_TEXT];
	int fd = sf_proto_connect(path, HELLO_TIMEOUT_MS, why, sizeof(why));

	/* A daemon that refused the connection (one of its limits): its
	 * errno and its reason. */
	if (fd < 0 && why[0])
		return fail(-fd, "%s", why);
	if (fd == -EPROTO)
		return fail(EHOSTDOWN, "sfilterd at %s did not greet (no hello, or "
			    "another protocol version than %u)", path, SF_PROTO_VERSION);
	if (fd < 0)
		return fail(EHOSTDOWN, "sfilterd is not running: connect %s: %s",
			    path, strerror(-fd));
	return fd;
}

/* CAP_SYS_ADMIN in the calling thread's effective set: 1, 0, or -1 when
 * capget() fails. */
static int has_cap_sys_admin(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d) != 0)
		return -1;
	return !!(d[CAP_SYS_ADMIN / 32].effective & (1U << (CAP_SYS_ADMIN % 32)));
}

/* seccomp(2)'s rule for the calling thread: no_new_privs, or CAP_SYS_ADMIN
 * in its effective set. no_new_privs can never be cleared, so once seen it
 * is not asked again: a thread that attaches several filters (sfrun) makes
 * no call for it under the filters it already has. */
static bool may_install(void)
{
	static __thread bool nnp;

	if (nnp || prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1)
		return nnp = true;
	return has_cap_sys_admin() != 0; /* unknown (-1): the daemon decides */
}

/* The checks seccomp(2) makes before it reads the program, in its order:
 * seccomp_set_mode_filter() the flags, seccomp_prepare_filter() the
 * length, the caller's privilege, then it copies the program. 0, or -1
 * with errno and sf_last_error() set. */
static int check_call(const struct sock_fprog *prog, unsigned int flags)
{
	if (flags & ~(unsigned int)SF_ATTACH_KNOWN_FLAGS)
		return fail(EINVAL, "unknown flags 0x%x",
			    flags & ~(unsigned int)SF_ATTACH_KNOWN_FLAGS);
	if (!prog)
		return fail(EFAULT, "prog is NULL");
	if (prog->len == 0 || prog->len > 4096)
		return fail(EINVAL, "program length %u: must be 1 to 4096 instructions",
			    prog->len);
	/* Answering EACCES here keeps the kernel's order for an invalid
	 * program too. The daemon decides again, from what the kernel
	 * vouches for; this is only the order of the errors. */
	if (!may_install())
		return fail(EACCES, "the calling thread has neither no_new_privs nor "
			    "CAP_SYS_ADMIN (prctl(PR_SET_NO_NEW_PRIVS, 1) first)");
	if (!prog->filter)
		return fail(EFAULT, "prog->filter is NULL");
	return 0;
}

long long sf_client_marks[SF_MARK_COUNT];
bool sf_client_marks_on;

/* Who asks: read once per attach, before anything is installed. */
struct ident {
	pid_t tid;
	struct ucred cred;
};

static void ident_read(struct ident *me)
{
	me->tid = (pid_t)syscall(SYS_gettid);
	/* The effective uid and gid: what the daemon decides by. The kernel
	 * accepts only ids this process holds at the time of sending. */
	me->cred = (struct ucred){ .pid = getpid(), .uid = geteuid(), .gid = getegid() };
}

/* A connection made before the gate, its hello read at the gate's last
 * moment (kept_finish()) or after it; -1 when none is pending. */
struct pending {
	int fd;
};

static void kept_start(struct pending *p)
{
	p->fd = -1;
	pthread_mutex_lock(&kept_lock);
	if (kept_fd < 0 || kept_pid != getpid())
		p->fd = sf_proto_connect_start(sf_proto_socket_path());
	pthread_mutex_unlock(&kept_lock);
}

/* The pending connection becomes the kept one once greeted. One that
 * fails is dropped: exchange() then connects again and says why. */
static void kept_finish(void *arg)
{
	struct pending *p = arg;
	int fd;

	if (p->fd < 0)
		return;
	fd = sf_proto_connect_finish(p->fd, HELLO_TIMEOUT_MS, NULL, 0);
	p->fd = -1;
	if (fd < 0)
		return;
	pthread_mutex_lock(&kept_lock);
	if (kept_fd < 0 || kept_pid != getpid()) {
		kept_fd = fd;
		kept_pid = getpid();
		fd = -1;
	}
	pthread_mutex_unlock(&kept_lock);
	if (fd >= 0)
		close(fd); /* another thread's came first */
}

/* Large enough for any valid reply; a longer one is truncated and refused. */
union attach_reply {
	struct sf_reply r;
	char bytes[SF_PROTO_MAX_NOTE_REPLY];
};

/* The recv the daemon lets through under the old chain: recvfrom on
 * x86-64; on i386 the recvfrom system call itself (libc may go through
 * socketcall(), which carries the socket in memory where the BPF side
 * does not look). */
static ssize_t recv_reply(int fd, void *buf, size_t len)
{
#ifdef __i386__
	return syscall(SYS_recvfrom, fd, buf, len, MSG_TRUNC, NULL, NULL);
#else
	return recv(fd, buf, len, MSG_TRUNC);
#endif
}

/* Sends the request on the kept connection and reads its reply: the
 * reply's length, or -1 with errno and sf_last_error() set. A kept
 * connection the daemon has closed as idle is replaced once. */
static ssize_t exchange(const struct sock_fprog *prog, unsigned int flags,
			const struct ident *me, union attach_reply *reply, uint32_t *id)
{
	struct sf_attach_req req;
	struct iovec iov[2];
	bool reused;
	ssize_t n;
	int fd, err;

	pthread_mutex_lock(&kept_lock);
	if (kept_fd >= 0 && kept_pid != getpid())
		kept_fd = -1; /* inherited across fork: not ours to use or close */
retry:
	reused = kept_fd >= 0;
	if (kept_fd < 0) {
		if (!sf_client_marks[SF_MARK_PREPARED])
			sf_client_mark(SF_MARK_PREPARED);
		kept_fd = connect_daemon(sf_proto_socket_path());
		kept_pid = getpid();
		if (!sf_client_marks[SF_MARK_GREETED])
			sf_client_mark(SF_MARK_GREETED);
	}
	fd = kept_fd;
	if (fd < 0) {
		pthread_mutex_unlock(&kept_lock);
		return -1;
	}
	*id = ++next_request_id ^ (uint32_t)me->tid << 16;
	memset(&req, 0, sizeof(req));
	sf_proto_header(&req.hdr, SF_MSG_ATTACH,
			SF_PROTO_ATTACH_REQ_SIZE + prog->len * sizeof(struct sock_filter), *id);
	req.flags = flags;
	req.tid = (int32_t)me->tid;
	req.reply_fd = fd;
	req.n_insns = prog->len;
	sf_client_mark(SF_MARK_SEND);
	iov[0] = (struct iovec){ &req, sizeof(req) };
	iov[1] = (struct iovec){ prog->filter, prog->len * sizeof(struct sock_filter) };
	err = -sf_proto_send_as(fd, iov, 2, NULL, 0, &me->cred);
	if (err) {
		close(fd);
		kept_fd = -1;
		if (reused && err != EFAULT)
			goto retry; /* the daemon closed an idle connection */
		pthread_mutex_unlock(&kept_lock);
		if (err == EFAULT) /* prog->filter points nowhere */
			return fail(EFAULT, "prog->filter is not readable");
		return fail(EHOSTDOWN, "sfilterd is not running: send: %s", strerror(err));
	}
	/* The last system call: the filter comes into force when it returns
	 * with the reply, and nothing follows it on success. */
	while ((n = recv_reply(fd, reply, sizeof(*reply))) < 0 && errno == EINTR)
		;
	err = errno;
	if (n <= 0) {
		close(fd);
		kept_fd = -1;
		/* Closed as idle before it read the request: an end of file,
		 * or a reset when the request had arrived by then. */
		if (reused && (n == 0 || err == ECONNRESET))
			goto retry;
	}
	pthread_mutex_unlock(&kept_lock);
	if (n < 0)
		return fail(EHOSTDOWN, "sfilterd is not running: recv: %s", strerror(err));
	if (n == 0)
		return fail(EHOSTDOWN, "sfilterd is not running: it closed the connection without a reply");
	return n;
}

/* The reply's verdict: 0, a TSYNC tid, or -1 with errno; sf_last_error()
 * gets the daemon's message. */
static int finish(const union attach_reply *reply, ssize_t n, uint32_t id)
{
	if ((size_t)n > sizeof(*reply) || sf_proto_check_reply(reply, n) != 0 ||
	    reply->r.hdr.request_id != id)
		return fail(EPROTO, "malformed reply from sfilterd (%zd bytes, version %u)",
			    n, (size_t)n >= SF_PROTO_HDR_SIZE ? reply->r.hdr.version : 0);

	sf_proto_reply_message(&reply->r, last_error, sizeof(last_error));

	if (reply->r.error == 0) /* last_error keeps the daemon's note */
		return 0;
	if (reply->r.error < 0) /* TSYNC: the tid that could not be synced */
		return -reply->r.error;
	errno = reply->r.error;
	return -1;
}

/* Appends "; text" to sf_last_error(), cut to its size. */
static void append_note(const char *text)
{
	size_t used = strlen(last_error), room = sizeof(last_error) - 1 - used;
	size_t n = strlen(text);

	if (used && room >= 2) {
		memcpy(last_error + used, "; ", 2);
		used += 2;
		room -= 2;
	}
	if (n > room)
		n = room;
	memcpy(last_error + used, text, n);
	last_error[used + n] = '\0';
}

/* The process's gate is in the kernel without a listener: what it sends
 * up fails with ENOSYS whatever a filter says, which is not a filter as
 * written; nothing is sent. */
static int gate_lost(int err, const char *why, bool now)
{
	return fail(err, "%s: the gate is in the kernel without a listener (%s), and "
		    "the calls it sends up fail with ENOSYS, whatever a filter says: "
		    "not attached", now ? "sfilterd did not take this attach's gate" :
		    "this process's gate was lost", why);
}

SF_EXPORT int sf_attach(const struct sock_fprog *prog, unsigned int flags)
{
	struct sock_filter *copy = NULL;
	struct sock_fprog sent = { 0 };
	struct pending pend = { -1 };
	union attach_reply reply;
	struct ident me;
	char note[320];
	bool tried = false;
	uint32_t id;
	ssize_t n;
	int r, e;

	last_error[0] = '\0';
	memset(sf_client_marks, 0, sizeof(sf_client_marks));
	sf_client_mark(SF_MARK_START);
	if (check_call(prog, flags))
		return -1;
	sent = *prog;
	ident_read(&me);
	/* Before the ATTACH: the gate must be in place when the filter
	 * comes into force (selfgate.c says why in this order). */
	if (sf_client_gate_wanted()) {
		tried = true;
		r = sf_client_gate_copy(prog, &copy);
		if (r == -EFAULT)
			return fail(EFAULT, "prog->filter is not readable");
		if (copy) {
			sent.filter = copy;
			kept_start(&pend);
			sf_client_gate_with(&sent, 1, flags & SF_ATTACH_TSYNC, kept_finish, &pend);
			kept_finish(&pend); /* no gate went in */
			sf_client_mark(SF_MARK_GATED);
		}
	}
	if ((e = sf_client_gate_lost(note, sizeof(note))))
		return gate_lost(e, note, tried);
	/* A gate built from sent (this call's, or sfrun's for all its
	 * filters) is in and its listener taken: sfilterd may answer before
	 * the chain's program is verified. */
	n = exchange(&sent, flags | (sf_client_gate_covers(&sent, flags & SF_ATTACH_TSYNC) ?
				     SF_FLAG_GATED : 0), &me, &reply, &id);
	r = n < 0 ? -1 : finish(&reply, n, id);
	e = errno;
	if (r == 0)
		sf_client_gate_attached();
	/* A failed attach mentions the gate only when it is in place. */
	if (r == 0 || (tried && sf_client_gate_installed())) {
		sf_client_gate_note(&sent, tried, note, sizeof(note));
		append_note(note);
	}
	errno = e;
	return r;
}

/* The 2012 proposal's prctl(PR_ATTACH_SECCOMP_FILTER, prog): no
 * no_new_privs needed (execve fails under the filter instead), the ABI of
 * this build recorded, and inheritable across exec when the caller has
 * CAP_SYS_ADMIN (which the daemon has the kernel confirm). */
SF_EXPORT int sf_prctl_attach(const struct sock_fprog *prog)
{
	unsigned int flags = SF_FLAG_RFC2012 |
			     (sizeof(long) == 4 ? SF_FLAG_RFC_I386 : 0);
	union attach_reply reply;
	char why[200];
	struct ident me;
	uint32_t id;
	ssize_t n;
	int err;

	last_error[0] = '\0';
	if (!prog)
		return fail(EFAULT, "prog is NULL");
	if (prog->len == 0 || prog->len > 4096)
		return fail(EINVAL, "program length %u: must be 1 to 4096 instructions",
			    prog->len);
	if (!prog->filter)
		return fail(EFAULT, "prog->filter is NULL");
	if (has_cap_sys_admin() == 1)
		flags |= SF_FLAG_RFC_EXEC;
	if ((err = sf_client_gate_lost(why, sizeof(why))))
		return gate_lost(err, why, false);
	ident_read(&me);
	n = exchange(prog, flags, &me, &reply, &id);
	if (n < 0)
		return -1;
	if (finish(&reply, n, id))
		return -1;
	sf_client_gate_attached();
	return 0;
}
