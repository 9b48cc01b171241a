// SPDX-License-Identifier: GPL-2.0
/*
 * sfilterd: loads sfilter's runtime once and serves attach requests
 * (loader/proto.h, docs/protocol.md) on a Unix socket.
 *
 *   sfilterd [--socket PATH] [--foreground] [--log FILE|-]
 *            [--force-tracepoint] [-v]
 *
 * One thread, one epoll loop, every socket non-blocking: a client that
 * stalls or misbehaves costs the others nothing. Each request is checked
 * the way seccomp(2) checks the caller (flags, length, the caller's
 * no_new_privs or CAP_SYS_ADMIN, the program), attached through
 * sf_runtime_attach(), which puts the filter in force before it returns,
 * and only then answered.
 *
 * Who asks: the connecting process (SO_PEERCRED), pinned by a pidfd taken
 * when the connection is accepted (SO_PEERPIDFD from Linux 6.5, which has
 * no pid-reuse window at all; pidfd_open() on older kernels). Every request
 * also carries the sender's credentials (SCM_CREDENTIALS, filled in by the
 * kernel), and a request sent by any other process than the one that
 * connected (a socket passed on, or inherited) is refused: a process can
 * only ever confine its own threads.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
/* sfclient.h first: runtime.h then redefines SF_ATTACH_*, and the compiler
 * warns if the client's values ever drift from the runtime's. */
#include "sfclient.h"
#include "runtime.h"
#include "proto.h"
#include "c2e.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77 /* Linux 6.5 */
#endif
#ifndef CAP_SYS_ADMIN
#define CAP_SYS_ADMIN 21
#endif

#define MAX_CLIENTS     1024
#define IDLE_SECONDS    30  /* a connection that sends nothing this long is closed */
#define DEFAULT_LOGFILE "/var/log/sfilterd.log"

struct client {
	int fd;
	int pidfd;      /* the connecting process, or -1 if it was gone */
	pid_t pid;      /* SO_PEERCRED at connect time */
	uid_t uid;
	gid_t gid;
	time_t last;    /* last activity, for the idle sweep */
};

static struct {
	struct sf_runtime *rt;
	const char *socket_path;
	const char *log_path;   /* NULL or "-": stdout */
	FILE *log;
	bool verbose;
	int epfd, lfd, sigfd, evfd;
	struct client *clients[MAX_CLIENTS];
	int n_clients;
	bool stop;
} d = { .epfd = -1, .lfd = -1, .sigfd = -1, .evfd = -1 };

/* epoll tags for the fds that are not clients. */
static char tag_listen, tag_signal, tag_events;

/* The one receive buffer: one request is handled at a time. One byte more
 * than the largest message so an oversized one is seen as such. */
static union {
	struct sf_msg_hdr hdr;
	struct sf_attach_req attach;
	char bytes[SF_PROTO_MAX_MSG + 8];
} rbuf;

static void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void diag(const char *fmt, ...)
{
	va_list ap;

	fputs("sfilterd: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: sfilterd [--socket PATH] [--foreground] [--log FILE|-]\n"
		"                [--force-tracepoint] [-v]\n"
		"  --socket PATH       serve on PATH (default $%s, else %s)\n"
		"  --foreground        do not detach; events go to stdout unless --log\n"
		"  --log FILE|-        write events as JSON lines to FILE (- = stdout;\n"
		"                      default in the background: %s); SIGHUP reopens it\n"
		"  --force-tracepoint  do not use BPF LSM programs even if the kernel allows them\n"
		"  -v, --verbose       libbpf debug output and one line per request on stderr\n",
		SF_PROTO_SOCKET_ENV, SF_PROTO_DEFAULT_SOCKET, DEFAULT_LOGFILE);
}

/* ---- the event log ------------------------------------------------------ */

static int open_log(void)
{
	FILE *f;

	if (!d.log_path || strcmp(d.log_path, "-") == 0) {
		d.log = stdout;
		return 0;
	}
	f = fopen(d.log_path, "ae");
	if (!f) {
		diag("%s: %s", d.log_path, strerror(errno));
		return -1;
	}
	setvbuf(f, NULL, _IOLBF, 0);
	if (d.log && d.log != stdout)
		fclose(d.log);
	d.log = f;
	return 0;
}

static int log_event(void *ctx, const struct sf_event *ev)
{
	char buf[2048];
	int n = sf_event_to_json(ev, buf, sizeof(buf));

	(void)ctx;
	if (n > 0)
		fprintf(d.log, "%s\n", buf);
	return 0;
}

static void drain_events(void)
{
	sf_runtime_poll_events(d.rt, 0, log_event, NULL);
	fflush(d.log);
}

/* ---- facts about the requester ------------------------------------------ */

static bool pidfd_alive(int pidfd)
{
	return pidfd >= 0 &&
	       syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0;
}

struct thread_status {
	bool nnp;
	uint64_t cap_eff;
	char state;
};

/* /proc/PID/task/TID/status: proc_task_lookup() only finds TID when it is
 * in PID's thread group, which is the membership check. */
static int read_thread_status(pid_t pid, pid_t tid, struct thread_status *st)
{
	char path[64], line[256];
	bool have_nnp = false, have_cap = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	memset(st, 0, sizeof(*st));
	while (fgets(line, sizeof(line), f)) {
		unsigned int v;

		if (sscanf(line, "NoNewPrivs: %u", &v) == 1) {
			st->nnp = v != 0;
			have_nnp = true;
		} else if (sscanf(line, "CapEff: %" SCNx64, &st->cap_eff) == 1) {
			have_cap = true;
		} else if (strncmp(line, "State:", 6) == 0) {
			sscanf(line + 6, " %c", &st->state);
		}
	}
	fclose(f);
	return have_nnp && have_cap ? 0 : -ENOENT;
}

static bool thread_exists(pid_t pid, pid_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d", pid, tid);
	return access(path, F_OK) == 0;
}

/* On the tracepoint tier, the actions a filter may return that the tier
 * cannot reproduce, for the reply's note ("" when none). */
static void fallback_note(const struct sf_attach_req *req, char *out, size_t size)
{
	static const struct { uint32_t action; const char *name; } gaps[] = {
		{ SECCOMP_RET_ERRNO, "ERRNO" }, { SECCOMP_RET_TRAP, "TRAP" },
		{ SECCOMP_RET_TRACE, "TRACE" }, { SECCOMP_RET_USER_NOTIF, "USER_NOTIF" },
	};
	bool seen[4] = { false }, ret_a = false;
	size_t used = 0, i, g;

	out[0] = '\0';
	if (sf_runtime_tier(d.rt) != SF_TIER_TRACEPOINT)
		return;
	for (i = 0; i < req->n_insns; i++) {
		const struct sock_filter *f = &req->insns[i];

		if (BPF_CLASS(f->code) != BPF_RET)
			continue;
		if (BPF_RVAL(f->code) == BPF_A) {
			ret_a = true;
			continue;
		}
		for (g = 0; g < 4; g++)
			if ((f->k & SECCOMP_RET_ACTION_FULL) == gaps[g].action)
				seen[g] = true;
	}
	for (g = 0; g < 4; g++)
		if (seen[g] && used < size)
			used += snprintf(out + used, size - used, "%s%s",
					 used ? ", " : "", gaps[g].name);
	if (ret_a && used < size)
		used += snprintf(out + used, size - used, "%sRET A (any action)",
				 used ? ", " : "");
}

/* ---- requests ----------------------------------------------------------- */

/* Returns the reply's error (0, a positive errno, or -tid for TSYNC) and
 * fills msg. */
static int do_attach(struct client *c, const struct ucred *sender,
		     struct sf_attach_req *req, uint32_t *filter_id,
		     char *msg, size_t msz)
{
	struct sock_fprog prog = { .len = (unsigned short)req->n_insns,
				   .filter = req->insns };
	struct thread_status st;
	struct c2e_error cerr;
	char note[128], ebuf[256];
	pid_t tid;
	int r;

	/* seccomp_set_mode_filter(): flags, then seccomp_prepare_filter():
	 * length, caller's privilege, then the program itself. */
	if (req->flags & ~(uint32_t)SF_ATTACH_KNOWN_FLAGS) {
		snprintf(msg, msz, "unknown flags 0x%x",
			 req->flags & ~(uint32_t)SF_ATTACH_KNOWN_FLAGS);
		return EINVAL;
	}
	if (req->n_insns == 0 || req->n_insns > C2E_MAX_INSNS) {
		snprintf(msg, msz, "program length %u: must be 1 to %d instructions",
			 req->n_insns, C2E_MAX_INSNS);
		return EINVAL;
	}
	if (sender->pid != c->pid) {
		snprintf(msg, msz, "request sent by pid %d on a connection made by pid %d: "
			 "a process may only attach to its own threads",
			 sender->pid, c->pid);
		return EACCES;
	}
	if (!pidfd_alive(c->pidfd)) {
		snprintf(msg, msz, "process %d is gone", c->pid);
		return ESRCH;
	}
	tid = req->tid ? req->tid : c->pid;
	r = tid > 0 ? read_thread_status(c->pid, tid, &st) : -ESRCH;
	/* The pidfd still alive after the read means /proc/PID was ours. */
	if (r < 0 || !pidfd_alive(c->pidfd) || st.state == 'Z' || st.state == 'X') {
		snprintf(msg, msz, "thread %d is not a live thread of process %d",
			 tid, c->pid);
		return ESRCH;
	}
	if (!st.nnp && !(st.cap_eff & (1ULL << CAP_SYS_ADMIN))) {
		snprintf(msg, msz, "thread %d has neither no_new_privs nor CAP_SYS_ADMIN "
			 "(prctl(PR_SET_NO_NEW_PRIVS, 1) first)", tid);
		return EACCES;
	}
	if (c2e_validate(req->insns, req->n_insns, &cerr) < 0) {
		snprintf(msg, msz, "%s", c2e_error_str(&cerr, ebuf, sizeof(ebuf)));
		return EINVAL;
	}

	memset(&cerr, 0, sizeof(cerr));
	r = sf_runtime_attach(d.rt, tid, &prog, req->flags, filter_id, &cerr);
	if (r > 0) {
		snprintf(msg, msz, "TSYNC: thread %d has a filter chain that is not "
			 "an ancestor of thread %d's", r, tid);
		return -r;
	}
	if (r < 0) {
		switch (-r) {
		case EINVAL:
			snprintf(msg, msz, "%s", cerr.msg[0] ?
				 c2e_error_str(&cerr, ebuf, sizeof(ebuf)) :
				 "invalid filter or flags");
			break;
		case ENOMEM:
			snprintf(msg, msz, "the chain would exceed %d instructions "
				 "(the kernel's MAX_INSNS_PER_PATH)", C2E_MAX_CHAIN_INSNS);
			break;
		case ESRCH:
			snprintf(msg, msz, "no such thread: %d", tid);
			break;
		default:
			snprintf(msg, msz, "attach failed: %s", strerror(-r));
		}
		return -r;
	}
	/* The pidfd pins the process, not the thread: if either went away
	 * during the attach, the tid may already name someone else. The
	 * filter went to the task that the tid named when the runtime looked
	 * it up (task storage dies with its task), so nothing is left to a
	 * newcomer, but the caller must not be told it is confined. */
	if (!pidfd_alive(c->pidfd) || !thread_exists(c->pid, tid)) {
		snprintf(msg, msz, "process %d (thread %d) exited during the attach",
			 c->pid, tid);
		diag("%s", msg);
		return ESRCH;
	}
	fallback_note(req, note, sizeof(note));
	if (note[0])
		snprintf(msg, msz, "filter %u attached to thread %d; tier %s cannot "
			 "reproduce %s: %s", *filter_id, tid,
			 sf_tier_name(sf_runtime_tier(d.rt)), note,
			 req->flags & SF_ATTACH_FALLBACK_LOG ?
			 "they log and allow (fallback log)" :
			 "they kill (fallback kill)");
	else
		snprintf(msg, msz, "filter %u attached to thread %d", *filter_id, tid);
	return 0;
}

static void close_client(struct client *c)
{
	int i;

	for (i = 0; i < d.n_clients; i++)
		if (d.clients[i] == c) {
			d.clients[i] = d.clients[--d.n_clients];
			break;
		}
	epoll_ctl(d.epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	if (c->pidfd >= 0)
		close(c->pidfd);
	free(c);
}

/* Sends one reply; false when the client cannot take it (then it is
 * dropped: a client that does not read its replies only hurts itself). */
static bool send_reply(struct client *c, uint32_t request_id, int error,
		       uint32_t filter_id, const char *msg)
{
	union {
		struct sf_attach_reply r;
		char bytes[SF_PROTO_REPLY_SIZE + SF_PROTO_MAX_TEXT];
	} out;
	size_t len = strnlen(msg, SF_PROTO_MAX_TEXT - 1);
	ssize_t n;

	memset(&out.r, 0, sizeof(out.r));
	out.r.hdr.magic = SF_PROTO_MAGIC;
	out.r.hdr.version = SF_PROTO_VERSION;
	out.r.hdr.type = SF_MSG_ATTACH_REPLY;
	out.r.hdr.length = SF_PROTO_REPLY_SIZE + len + 1;
	out.r.hdr.request_id = request_id;
	out.r.error = error;
	out.r.filter_id = filter_id;
	memcpy(out.r.message, msg, len);
	out.r.message[len] = '\0';
	do
		n = send(c->fd, &out, out.r.hdr.length, MSG_DONTWAIT | MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)out.r.hdr.length;
}

/* Closes every descriptor an SCM_RIGHTS message brought in; returns how
 * many. Fills *cred from SCM_CREDENTIALS when present. */
static int scan_cmsgs(struct msghdr *mh, struct ucred *cred, bool *have_cred)
{
	struct cmsghdr *cm;
	int nfds = 0;

	for (cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET)
			continue;
		if (cm->cmsg_type == SCM_RIGHTS) {
			size_t n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int), i;
			int fd;

			for (i = 0; i < n; i++) {
				memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
				close(fd);
				nfds++;
			}
		} else if (cm->cmsg_type == SCM_CREDENTIALS &&
			   cm->cmsg_len >= CMSG_LEN(sizeof(struct ucred))) {
			memcpy(cred, CMSG_DATA(cm), sizeof(*cred));
			*have_cred = true;
		}
	}
	return nfds;
}

/* Handles one datagram from c (level-triggered epoll brings us back for
 * the next one, so one busy client cannot starve the others). */
static void handle_client(struct client *c)
{
	char cbuf[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(253 * sizeof(int))];
	struct iovec iov = { rbuf.bytes, sizeof(rbuf.bytes) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct ucred cred = { .pid = c->pid, .uid = c->uid, .gid = c->gid };
	bool have_cred = false;
	uint32_t request_id = 0, filter_id = 0;
	char msg[SF_PROTO_MAX_TEXT];
	int error, nfds;
	ssize_t n;

	n = recvmsg(c->fd, &mh, MSG_DONTWAIT | MSG_TRUNC | MSG_CMSG_CLOEXEC);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) { /* EOF (or an empty datagram, which looks the same) */
		close_client(c);
		return;
	}
	c->last = time(NULL);
	nfds = scan_cmsgs(&mh, &cred, &have_cred);
	if ((size_t)n >= SF_PROTO_HDR_SIZE)
		request_id = rbuf.hdr.request_id;

	msg[0] = '\0';
	if ((size_t)n > SF_PROTO_MAX_MSG || (mh.msg_flags & MSG_TRUNC)) {
		snprintf(msg, sizeof(msg), "message of %zd bytes exceeds %u",
			 n, SF_PROTO_MAX_MSG);
		error = EMSGSIZE;
	} else if ((size_t)n < SF_PROTO_HDR_SIZE) {
		snprintf(msg, sizeof(msg), "truncated header: %zd of %u bytes",
			 n, SF_PROTO_HDR_SIZE);
		error = EPROTO;
	} else if (rbuf.hdr.magic != SF_PROTO_MAGIC) {
		snprintf(msg, sizeof(msg), "bad magic 0x%08x (expected 0x%08x)",
			 rbuf.hdr.magic, SF_PROTO_MAGIC);
		error = EPROTO;
	} else if (rbuf.hdr.version != SF_PROTO_VERSION) {
		snprintf(msg, sizeof(msg), "protocol version %u not supported (this daemon speaks %u)",
			 rbuf.hdr.version, SF_PROTO_VERSION);
		error = EPROTO;
	} else if (rbuf.hdr.length > SF_PROTO_MAX_MSG) {
		snprintf(msg, sizeof(msg), "header length %u exceeds %u",
			 rbuf.hdr.length, SF_PROTO_MAX_MSG);
		error = EMSGSIZE;
	} else if (rbuf.hdr.length != (size_t)n) {
		snprintf(msg, sizeof(msg), "header length %u but %zd bytes received",
			 rbuf.hdr.length, n);
		error = EPROTO;
	} else if (rbuf.hdr.type != SF_MSG_ATTACH) {
		snprintf(msg, sizeof(msg), "unknown message type %u", rbuf.hdr.type);
		error = EPROTO;
	} else if ((size_t)n < SF_PROTO_ATTACH_REQ_SIZE) {
		snprintf(msg, sizeof(msg), "truncated attach request: %zd of %u bytes",
			 n, SF_PROTO_ATTACH_REQ_SIZE);
		error = EPROTO;
	} else if ((uint64_t)rbuf.attach.n_insns * sizeof(struct sock_filter) !=
		   (size_t)n - SF_PROTO_ATTACH_REQ_SIZE) {
		snprintf(msg, sizeof(msg), "n_insns %u does not match the %zd bytes of instructions",
			 rbuf.attach.n_insns, (size_t)n - SF_PROTO_ATTACH_REQ_SIZE);
		error = EPROTO;
	} else if (nfds) {
		snprintf(msg, sizeof(msg), "%d file descriptor(s) attached: not accepted, closed",
			 nfds);
		error = EINVAL;
	} else if (mh.msg_flags & MSG_CTRUNC) {
		snprintf(msg, sizeof(msg), "too much ancillary data");
		error = EINVAL;
	} else {
		error = do_attach(c, &cred, &rbuf.attach, &filter_id, msg, sizeof(msg));
	}
	if (nfds && error != EINVAL)
		/* Said even when another error came first. */
		snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg),
			 "; %d file descriptor(s) closed", nfds);

	if (d.verbose)
		diag("pid %d uid %u request %u: %s%s%s", c->pid, c->uid, request_id,
		     error > 0 ? strerror(error) : error < 0 ? "TSYNC conflict" : "ok",
		     msg[0] ? ": " : "", msg);
	if (!send_reply(c, request_id, error, filter_id, msg))
		close_client(c);
}

static void accept_clients(void)
{
	for (;;) {
		struct ucred cred;
		socklen_t len = sizeof(cred);
		struct epoll_event ev = { .events = EPOLLIN };
		struct client *c;
		int fd, one = 1, pidfd = -1;

		fd = accept4(d.lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno != EAGAIN)
				diag("accept: %s", strerror(errno));
			return;
		}
		if (d.n_clients >= MAX_CLIENTS ||
		    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
		    !(c = calloc(1, sizeof(*c)))) {
			close(fd);
			continue;
		}
		/* The pidfd of the process that connected: race-free from the
		 * kernel when it can (6.5+), else by pid, at once. */
		len = sizeof(pidfd);
		if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) < 0) {
			/* Only when the kernel lacks SO_PEERPIDFD: any other
			 * error means the peer has exited, and its pid may
			 * already be someone else's. */
			pidfd = errno == ENOPROTOOPT ?
				syscall(SYS_pidfd_open, cred.pid, 0) : -1;
			if (pidfd >= 0)
				fcntl(pidfd, F_SETFD, FD_CLOEXEC);
		}
		setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one));
		*c = (struct client){ .fd = fd, .pidfd = pidfd, .pid = cred.pid,
				      .uid = cred.uid, .gid = cred.gid,
				      .last = time(NULL) };
		ev.data.ptr = c;
		if (epoll_ctl(d.epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			close(fd);
			if (pidfd >= 0)
				close(pidfd);
			free(c);
			continue;
		}
		d.clients[d.n_clients++] = c;
	}
}

static void sweep_idle(void)
{
	time_t now = time(NULL);
	int i;

	for (i = d.n_clients - 1; i >= 0; i--)
		if (now - d.clients[i]->last > IDLE_SECONDS)
			close_client(d.clients[i]);
}

/* ---- set-up ------------------------------------------------------------- */

static int mkdir_p(const char *dir)
{
	char buf[PATH_MAX], *p;

	if (snprintf(buf, sizeof(buf), "%s", dir) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static int make_socket(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	char dir[PATH_MAX], *slash;
	struct stat stt;
	int fd, one = 1;

	if (strlen(path) >= sizeof(addr.sun_path)) {
		diag("socket path too long: %s", path);
		return -1;
	}
	strcpy(addr.sun_path, path);
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir_p(dir) < 0) {
			diag("mkdir -p %s: %s", dir, strerror(errno));
			return -1;
		}
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		diag("socket: %s", strerror(errno));
		return -1;
	}
	/* A socket file left by a daemon that died is replaced; a live
	 * daemon's is not. */
	if (lstat(path, &stt) == 0) {
		int probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

		if (!S_ISSOCK(stt.st_mode)) {
			diag("%s exists and is not a socket", path);
			goto fail;
		}
		if (probe >= 0 && connect(probe, (struct sockaddr *)&addr, sizeof(addr)) == 0) {
			close(probe);
			diag("another sfilterd is serving %s", path);
			goto fail;
		}
		if (probe >= 0)
			close(probe);
		unlink(path);
	}
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		diag("bind %s: %s", path, strerror(errno));
		goto fail;
	}
	/* Anyone may ask; what a request may do is decided per request. */
	if (chmod(path, 0666) < 0 || listen(fd, 128) < 0) {
		diag("%s: %s", path, strerror(errno));
		unlink(path);
		goto fail;
	}
	setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one));
	return fd;
fail:
	close(fd);
	return -1;
}

/* The daemon leaves its working directory (chdir("/")) but reopens its log
 * on SIGHUP and removes its socket at exit: keep both paths absolute. */
static const char *absolute(const char *path)
{
	char cwd[PATH_MAX], *abs;

	if (!path || path[0] == '/' || strcmp(path, "-") == 0 || !getcwd(cwd, sizeof(cwd)))
		return path;
	if (asprintf(&abs, "%s/%s", cwd, path) < 0)
		return path;
	return abs;
}

static int epoll_add(int fd, void *tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = tag };

	return epoll_ctl(d.epfd, EPOLL_CTL_ADD, fd, &ev);
}

/* Detaches from the terminal once the socket is ready, so that when the
 * command returns, clients can connect. The parent reports the daemon's
 * pid and exits 0. */
static int daemonize(void)
{
	pid_t pid = fork();
	int null;

	if (pid < 0)
		return -1;
	if (pid > 0) {
		diag("tier %s, serving %s (pid %d)",
		     sf_tier_name(sf_runtime_tier(d.rt)), d.socket_path, pid);
		_exit(0);
	}
	setsid();
	if (chdir("/") < 0)
		return -1;
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, 0);
		if (d.log != stdout)
			dup2(null, 1);
		dup2(null, 2);
		if (null > 2)
			close(null);
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "log", required_argument, NULL, 'l' },
		{ "force-tracepoint", no_argument, NULL, 't' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sf_runtime_opts opts = { 0 };
	bool foreground = false;
	const char *env = getenv(SF_PROTO_SOCKET_ENV);
	sigset_t sigs;
	int opt, r, i;

	d.socket_path = env && *env ? env : SF_PROTO_DEFAULT_SOCKET;
	while ((opt = getopt_long(argc, argv, "s:fl:tvh", longopts, NULL)) != -1) {
		switch (opt) {
		case 's': d.socket_path = optarg; break;
		case 'f': foreground = true; break;
		case 'l': d.log_path = optarg; break;
		case 't': opts.force_tracepoint = true; break;
		case 'v': d.verbose = opts.verbose = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		diag("unexpected argument '%s'", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (!foreground && !d.log_path)
		d.log_path = DEFAULT_LOGFILE;
	d.log_path = absolute(d.log_path);
	d.socket_path = absolute(d.socket_path);
	if (open_log() < 0)
		return 1;

	/* Signals arrive through a signalfd, in the loop. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	r = sf_runtime_open(&d.rt, &opts);
	if (r < 0) {
		diag("cannot load the runtime: %s", strerror(-r));
		return 1;
	}
	d.lfd = make_socket(d.socket_path);
	if (d.lfd < 0) {
		sf_runtime_close(d.rt);
		return 1;
	}
	/* Detach before the signalfd and the epoll set exist: a signalfd
	 * polled through epoll stays tied to the process that added it. */
	if (foreground)
		diag("tier %s, serving %s (pid %d)",
		     sf_tier_name(sf_runtime_tier(d.rt)), d.socket_path, getpid());
	else if (daemonize() < 0)
		return 1;
	d.epfd = epoll_create1(EPOLL_CLOEXEC);
	d.sigfd = signalfd(-1, &sigs, SFD_NONBLOCK | SFD_CLOEXEC);
	d.evfd = sf_runtime_event_fd(d.rt);
	if (d.epfd < 0 || d.sigfd < 0 ||
	    epoll_add(d.lfd, &tag_listen) < 0 || epoll_add(d.sigfd, &tag_signal) < 0) {
		diag("epoll: %s", strerror(errno));
		unlink(d.socket_path);
		sf_runtime_close(d.rt);
		return 1;
	}
	/* Without a pollable event fd, the loop polls every 100 ms. */
	if (d.evfd >= 0 && epoll_add(d.evfd, &tag_events) < 0)
		d.evfd = -1;
	fprintf(d.log, "{\"sfilterd\":\"start\",\"pid\":%d,\"tier\":\"%s\"}\n",
		getpid(), sf_tier_name(sf_runtime_tier(d.rt)));
	fflush(d.log);

	while (!d.stop) {
		struct epoll_event evs[64];
		int n = epoll_wait(d.epfd, evs, 64, d.evfd >= 0 ? 1000 : 100);

		if (n < 0 && errno != EINTR) {
			diag("epoll_wait: %s", strerror(errno));
			break;
		}
		for (i = 0; i < n; i++) {
			void *tag = evs[i].data.ptr;

			if (tag == &tag_listen) {
				accept_clients();
			} else if (tag == &tag_events) {
				drain_events();
			} else if (tag == &tag_signal) {
				struct signalfd_siginfo si;

				while (read(d.sigfd, &si, sizeof(si)) == sizeof(si)) {
					if (si.ssi_signo == SIGHUP)
						open_log();
					else
						d.stop = true;
				}
			} else {
				handle_client(tag);
			}
		}
		if (d.evfd < 0)
			drain_events();
		sweep_idle();
	}

	drain_events();
	while (d.n_clients)
		close_client(d.clients[0]);
	close(d.lfd);
	unlink(d.socket_path);
	fprintf(d.log, "{\"sfilterd\":\"stop\",\"pid\":%d}\n", getpid());
	fflush(d.log);
	sf_runtime_close(d.rt);
	return 0;
}
