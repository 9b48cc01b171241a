// SPDX-License-Identifier: GPL-2.0-only
/*
 * The listener holder's process (holder_wire.h), and the messages both
 * ends of its socket exchange.
 *
 * The process starts from a fork of a daemon that may have threads, and
 * runs without exec (sfilterd is static and has no program to exec): it
 * therefore makes system calls only, allocates nothing from the C library
 * (its table is mmap()ed) and takes no lock another thread could have
 * held at the fork.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "holder_wire.h"
#include "proto.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>

int64_t hold_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void hold_close_fds(const int *fds, int n)
{
	int i;

	for (i = 0; i < n; i++)
		close(fds[i]);
}

/* The descriptors of mh's SCM_RIGHTS into fds (room for
 * HOLDER_FDS_PER_MSG); their number. */
static int collect_fds(struct msghdr *mh, int *fds)
{
	struct cmsghdr *cm;
	int n = 0;

	for (cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
		size_t k, i;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < k && n < HOLDER_FDS_PER_MSG; i++)
			memcpy(&fds[n++], CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
	}
	return n;
}

/* One message from fd without waiting: its length (0: end of file) or
 * -errno, its descriptors (close-on-exec) into fds and *nfds. */
ssize_t hold_recv(int fd, void *buf, size_t size, int *fds, int *nfds)
{
	char cbuf[CMSG_SPACE(HOLDER_FDS_PER_MSG * sizeof(int))];
	struct iovec iov = { buf, size };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	ssize_t n;

	*nfds = 0;
	n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -errno;
	*nfds = collect_fds(&mh, fds);
	if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
		hold_close_fds(fds, *nfds);
		*nfds = 0;
		return -EMSGSIZE;
	}
	return n;
}

/* One message to fd without waiting, with nfds descriptors. */
int hold_send(int fd, const void *buf, size_t len, const int *fds, int nfds)
{
	char cbuf[CMSG_SPACE(HOLDER_FDS_PER_MSG * sizeof(int))];
	struct iovec iov = { (void *)buf, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf };

	if (nfds > 0)
		sf_proto_add_cmsg(&mh, SCM_RIGHTS, fds, nfds * sizeof(int));
	else
		mh.msg_control = NULL;
	if (sendmsg(fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		return -errno;
	return 0;
}

int hold_wait(int fd, short events, int64_t deadline)
{
	struct pollfd p = { fd, events, 0 };
	int64_t left;
	int r;

	for (;;) {
		left = deadline - hold_now_ms();
		if (left < 0)
			left = 0;
		r = poll(&p, 1, (int)left);
		if (r > 0)
			return 0;
		if (r == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}

struct held {
	uint64_t id;
	int fd;
	uint32_t len;
	char meta[HOLDER_META_MAX];
};

struct hconn {
	int fd;           /* -1: free */
	int64_t last_ms;  /* last message, for displacing the idlest */
};

/* epoll data: what an event is about. */
#define EV_LISTEN (1ull << 62)
#define EV_CONN   (1ull << 61)
#define EV_HELD   (1ull << 60)
#define EV_MASK   (EV_LISTEN | EV_CONN | EV_HELD)

static struct {
	int lfd, ep;
	struct held *held;   /* in id order: put appends, a drop closes the gap */
	unsigned int n, cap;
	uint64_t next_id;
	struct hconn conns[HOLDER_CONNS];
	dev_t dev;           /* the socket file this holder bound */
	ino_t ino;
	const char *path;
} H;

/* The index of the first listener whose id is above id (n if none). */
static unsigned int held_after(uint64_t id)
{
	unsigned int lo = 0, hi = H.n;

	while (lo < hi) {
		unsigned int mid = (lo + hi) / 2;

		if (H.held[mid].id <= id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void held_drop(uint64_t id)
{
	unsigned int i = held_after(id - 1);

	if (i >= H.n || H.held[i].id != id)
		return;
	/* Out of the epoll set first: a registration outlives close() while
	 * another descriptor keeps the file open (the same listener put
	 * twice), and would report EPOLLHUP for good. */
	epoll_ctl(H.ep, EPOLL_CTL_DEL, H.held[i].fd, NULL);
	close(H.held[i].fd);
	memmove(&H.held[i], &H.held[i + 1], (H.n - i - 1) * sizeof(H.held[0]));
	H.n--;
}

/* Whether fd names a seccomp notification listener: the name its anonymous
 * inode was made with (init_listener(): anon_inode_getfile("seccomp
 * notify")), read from the holder's own descriptor table. */
static bool is_listener(int fd)
{
	static const char want[] = "anon_inode:seccomp notify";
	char link[32] = "/proc/self/fd/", digits[12], name[sizeof(want) + 1];
	size_t k = strlen(link);
	unsigned int v = (unsigned int)fd;
	int i = 0;
	ssize_t n;

	/* No printf after the fork: its digits by hand. */
	do
		digits[i++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (i)
		link[k++] = digits[--i];
	link[k] = '\0';
	n = readlink(link, name, sizeof(name));
	return n == (ssize_t)sizeof(want) - 1 && memcmp(name, want, sizeof(want) - 1) == 0;
}

/* PUT: keeps fd (always consumed). 0 or -errno for the answer. */
static int held_put(int fd, const void *meta, uint32_t len)
{
	/* events 0: epoll reports only EPOLLHUP and EPOLLERR, which
	 * epoll_ctl() adds to every registration; a notification's wake-up
	 * (EPOLLIN) is filtered out in ep_poll_callback(), so a pending call
	 * never wakes the holder. */
	struct epoll_event ev = { .events = 0 };
	struct held *h;

	if (!is_listener(fd)) {
		close(fd);
		return -EBADF;
	}
	if (H.n >= H.cap) {
		close(fd);
		return -ENOSPC;
	}
	h = &H.held[H.n];
	h->id = H.next_id++;
	ev.data.u64 = EV_HELD | h->id;
	if (epoll_ctl(H.ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	h->fd = fd;
	h->len = len;
	memcpy(h->meta, meta, len);
	H.n++;
	return 0;
}

static void conn_close(struct hconn *c)
{
	close(c->fd);   /* leaves the epoll set with it */
	c->fd = -1;
}

/* A TAKE page from the first listener after after. */
static int answer_take(struct hconn *c, const struct hrep *head, uint64_t after)
{
	static char page[sizeof(struct hrep) + HOLDER_PAGE_BYTES];
	int fds[HOLDER_FDS_PER_MSG];
	struct hrep *rep = (struct hrep *)page;
	unsigned int i = held_after(after);
	size_t off = sizeof(*rep);
	int n = 0;

	*rep = *head;
	for (; i < H.n && n < HOLDER_FDS_PER_MSG; i++) {
		const struct held *h = &H.held[i];
		struct hent e = { .id = h->id, .len = h->len };
		size_t need = sizeof(e) + PAD8(h->len);

		if (off + need > sizeof(page))
			break;
		memcpy(page + off, &e, sizeof(e));
		memcpy(page + off + sizeof(e), h->meta, h->len);
		memset(page + off + sizeof(e) + h->len, 0, PAD8(h->len) - h->len);
		off += need;
		fds[n++] = h->fd;
	}
	rep->count = (uint32_t)n;
	rep->more = H.n - i;
	return hold_send(c->fd, page, off, fds, n);
}

/* Never returns. */
static void holder_exit(void)
{
	struct stat st;

	/* The path may be another holder's by now: removed only if it is
	 * still the file this one bound. */
	if (stat(H.path, &st) == 0 && st.st_dev == H.dev && st.st_ino == H.ino)
		unlink(H.path);
	_exit(0);
}

/* One request on c; false when the connection is to be closed. */
static bool conn_serve(struct hconn *c)
{
	struct hreq q;
	struct hrep rep = { .magic = HOLDER_MAGIC };
	int fds[HOLDER_FDS_PER_MSG], nfds, r = 0;
	ssize_t n;

	n = hold_recv(c->fd, &q, sizeof(q), fds, &nfds);
	if (n == -EAGAIN || n == -EINTR)
		return true;
	if (n <= 0)
		return false;
	c->last_ms = hold_now_ms();
	if ((size_t)n < HREQ_HEAD || q.magic != HOLDER_MAGIC) {
		hold_close_fds(fds, nfds);
		return false;
	}
	rep.op = q.op;
	rep.seq = q.seq;
	if (q.op == HOP_PUT) {
		if (nfds != 1 || q.len > HOLDER_META_MAX || (size_t)n != HREQ_HEAD + q.len) {
			hold_close_fds(fds, nfds);
			r = -EINVAL;
		} else {
			r = held_put(fds[0], q.meta, q.len);
		}
		nfds = 0;
	}
	hold_close_fds(fds, nfds);   /* none asked for, except PUT's one */
	rep.err = r;
	switch (q.op) {
	case HOP_HELLO:
	case HOP_PUT:
		break;
	case HOP_COUNT:
		rep.count = H.n;
		break;
	case HOP_TAKE:
		return answer_take(c, &rep, q.after) == 0;
	case HOP_STOP:
		hold_send(c->fd, &rep, sizeof(rep), NULL, 0);
		holder_exit();
		break;
	default:
		rep.err = -EOPNOTSUPP;
	}
	return hold_send(c->fd, &rep, sizeof(rep), NULL, 0) == 0;
}

/* Takes the waiting connections of the holder's euid; any other is
 * closed at once (its credentials are the kernel's, from connect()). */
static void accept_conns(void)
{
	int fd;

	while ((fd = accept4(H.lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		struct epoll_event ev = { .events = EPOLLIN };
		struct ucred cr;
		socklen_t cl = sizeof(cr);
		struct hconn *c = &H.conns[0];
		int i;

		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) < 0 ||
		    cr.uid != geteuid()) {
			close(fd);
			continue;
		}
		for (i = 0; i < HOLDER_CONNS; i++) {
			if (H.conns[i].fd < 0) {
				c = &H.conns[i];
				break;
			}
			if (H.conns[i].last_ms < c->last_ms)
				c = &H.conns[i];
		}
		if (c->fd >= 0)
			conn_close(c);
		ev.data.u64 = EV_CONN | (uint64_t)(c - H.conns);
		if (epoll_ctl(H.ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
			close(fd);
			continue;
		}
		c->fd = fd;
		c->last_ms = hold_now_ms();
	}
}

static bool any_conn(void)
{
	int i;

	for (i = 0; i < HOLDER_CONNS; i++)
		if (H.conns[i].fd >= 0)
			return true;
	return false;
}

/* The descriptors the holder may keep: RLIMIT_NOFILE's soft limit raised
 * to the hard one, less what it needs for itself. */
static unsigned int holder_capacity(void)
{
	struct rlimit rl;
	rlim_t room;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 0;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur <= HOLDER_FD_RESERVE)
		return 0;
	room = rl.rlim_cur - HOLDER_FD_RESERVE;
	return room < HOLDER_MAX ? (unsigned int)room : HOLDER_MAX;
}

/*
 * The holder's own start, in the grandchild: nothing of the daemon's but
 * the listening socket stays open (no descriptor of the daemon's loop,
 * its BPF objects or its log is kept alive by the holder), the standard
 * ones are /dev/null, and the signals a session, a terminal or a broken
 * connection send are ignored: only holder_stop() ends a holder (and
 * SIGKILL, which nothing can ignore).
 */
static void holder_setup(int lfd)
{
	static const int ignored[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE,
				       SIGUSR1, SIGUSR2, SIGALRM };
	struct sigaction sa = { .sa_handler = SIG_DFL };
	sigset_t none;
	int null, adj, sig;
	unsigned int i;

	for (sig = 1; sig < NSIG; sig++)
		sigaction(sig, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	for (i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		sigaction(ignored[i], &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);

	null = open("/dev/null", O_RDWR);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
	}
	if (dup2(lfd, 3) < 0)
		_exit(1);
	H.lfd = 3;
	if (syscall(SYS_close_range, 4u, ~0u, 0u) < 0) {
		struct rlimit rl;
		int fd;

		getrlimit(RLIMIT_NOFILE, &rl);
		for (fd = 4; fd < (int)rl.rlim_cur; fd++)
			close(fd);
	}
	fcntl(H.lfd, F_SETFL, fcntl(H.lfd, F_GETFL) | O_NONBLOCK);
	if (chdir("/") < 0)
		_exit(1);
	prctl(PR_SET_NAME, "sfilterd-holder", 0, 0, 0);
	/* The OOM killer's last choice: its death is every listener's last
	 * close. It keeps little memory; root may lower its own score. */
	adj = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (adj >= 0) {
		/* Refused without CAP_SYS_RESOURCE: the score stays. */
		ssize_t w = write(adj, "-1000", 5);

		(void)w;
		close(adj);
	}
}

void hold_run(int lfd, const char *path, const struct stat *bound)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = EV_LISTEN };
	int64_t idle_since;
	int i;

	holder_setup(lfd);
	H.path = path;
	H.dev = bound->st_dev;
	H.ino = bound->st_ino;
	H.next_id = 1;
	H.cap = holder_capacity();
	H.held = mmap(NULL, (size_t)HOLDER_MAX * sizeof(H.held[0]), PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	H.ep = epoll_create1(EPOLL_CLOEXEC);
	if (H.held == MAP_FAILED || H.ep < 0 || epoll_ctl(H.ep, EPOLL_CTL_ADD, H.lfd, &ev) < 0)
		holder_exit();
	for (i = 0; i < HOLDER_CONNS; i++)
		H.conns[i].fd = -1;
	idle_since = hold_now_ms();

	for (;;) {
		struct epoll_event evs[64];
		int64_t left = (int64_t)HOLDER_IDLE_SEC * 1000 - (hold_now_ms() - idle_since);
		int n, k;

		/* Woken only by what it serves: no tick while it holds
		 * anything or a connection is open. */
		n = epoll_wait(H.ep, evs, 64, H.n > 0 || any_conn() ? -1 :
			       (int)(left > 0 ? left : 0));
		for (k = 0; k < n; k++) {
			uint64_t tag = evs[k].data.u64 & EV_MASK, v = evs[k].data.u64 & ~EV_MASK;

			if (tag == EV_LISTEN) {
				accept_conns();
			} else if (tag == EV_CONN) {
				struct hconn *c = &H.conns[v];

				if (c->fd >= 0 && !conn_serve(c))
					conn_close(c);
			} else if (evs[k].events & EPOLLHUP) {
				/* No task is left under the filter
				 * (seccomp_notify_poll(): filter->users is 0),
				 * and none can join it: the listener has
				 * nothing left to hear. EPOLLERR alone is not
				 * that: seccomp_notify_poll() returns it when
				 * its lock wait is interrupted. */
				held_drop(v);
			}
		}
		if (H.n > 0 || any_conn()) {
			idle_since = hold_now_ms();
			continue;
		}
		if (hold_now_ms() - idle_since < (int64_t)HOLDER_IDLE_SEC * 1000)
			continue;
		/* Holding nothing and unused: gone, unless a connection came
		 * in the meantime (holder_open() retries one whose first
		 * answer does not come). */
		accept_conns();
		if (!any_conn())
			holder_exit();
	}
}
