// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The gate of a self-attach (selfgate.h; docs/protocol.md, "The gate and the
 * agent socket"): before sf_attach() asks sfilterd to attach a filter, a
 * kernel seccomp filter built from it (c2e_gate_build(): ALLOW where the
 * filter allows or logs, USER_NOTIF elsewhere) is installed on the
 * calling thread with a listener, and the listener goes to sfilterd's
 * agent socket, so that sfilterd judges the calls the filter does not
 * allow before they run.
 *
 * A call the gate sends up waits until someone reads the listener, and
 * only sfilterd will; the order below is what keeps the caller from
 * blocking on its own gate:
 *  1. the agent socket is connected first: no agent, no gate;
 *  2. a helper thread H is started before the install, so that the gate
 *     does not cover it (a filter is the calling thread's until TSYNC);
 *  3. the caller installs the gate and posts the listener in memory;
 *  4. H sends it to the agent with the runtime-spec's
 *     ContainerProcessState and reads the answer; on any failure H closes
 *     the listener itself, which makes the kernel answer ENOSYS to the
 *     calls the gate sends up (seccomp_notify_detach()) instead of leaving
 *     them waiting;
 *  5. the caller waits for H by reading memory, with no system call the
 *     gate could send up (sched_yield() only where the gate allows it
 *     whatever the arguments), then closes its listener (a thread that
 *     could read it could continue its own calls), and with TSYNC carries
 *     the gate to every thread.
 * Once sfilterd holds the listener, a call of the caller's that the gate
 * sends up is judged with the chain as it stands, which has the new
 * filter only after the ATTACH: it continues.
 *
 * H is detached: after it posts its result it touches nothing shared, so
 * the caller never joins it (pthread_join() waits on a futex, which the
 * gate may send up: glibc aborts when that wait fails with ENOSYS).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "selfgate.h"
#include "client.h"
#include "proto.h"
#include "c2e.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/seccomp.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>

#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

#ifdef __i386__
#define NATIVE_ARCH C2E_AUDIT_ARCH_I386
#else
#define NATIVE_ARCH C2E_AUDIT_ARCH_X86_64
#endif

/* How long H waits for the listener, and for the agent's answer. */
#define WAIT_LISTENER_NS (10LL * 1000000000)
#define WAIT_ANSWER_MS   10000
#define LOOK_EVERY_NS    30000

enum gate_state { GATE_NONE, GATE_TRYING, GATE_INSTALLED, GATE_NEVER };

/* The process's gate. Copied into a forked child, which has its parent's
 * kernel filters and so the same answer; a new image starts at GATE_NONE
 * (a gate installed before execve makes the next one fail with EBUSY). */
static _Atomic int gate_state;
static atomic_bool gate_attached;
static char gate_why[200];   /* why there is none, or what it lacks */
static bool gate_orphaned;   /* installed, but the agent did not take its listener */
static int gate_lost_errno;  /* ... and what sf_client_gate_lost() says */
/* The filters the gate was built from (by content), for the note. */
#define COVERED_MAX 64
static uint64_t covered[COVERED_MAX];
static size_t n_covered;

/* The hand-over between the caller and H, one at a time (GATE_TRYING). */
enum { SLOT_WAITING, SLOT_ABANDONED, SLOT_INSTALLING, SLOT_READY };
static struct {
	_Atomic int slot;
	int listener;      /* the listener, or -errno of the install; set before SLOT_READY */
	int sock;          /* the agent connection */
	atomic_bool done;  /* H has finished with everything here */
	int error;         /* 0: the agent holds the listener; else an errno */
	char why[160];     /* when error: why */
} ho;

static void set_why(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set_why(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}

static uint64_t fingerprint(const struct sock_fprog *f)
{
	const unsigned char *p = (const unsigned char *)f->filter;
	uint64_t h = 0xcbf29ce484222325ULL ^ f->len;
	size_t i;

	for (i = 0; i < f->len * sizeof(struct sock_filter); i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

bool sf_client_gate_wanted(void)
{
	const char *env = getenv(SF_CLIENT_GATE_ENV);

	if (env && strcmp(env, "0") == 0)
		return false;
	return atomic_load(&gate_state) == GATE_NONE && !atomic_load(&gate_attached);
}

int sf_client_gate_lost(char *why, size_t size)
{
	if (atomic_load(&gate_state) != GATE_INSTALLED || !gate_orphaned)
		return 0;
	snprintf(why, size, "%s", gate_why);
	return gate_lost_errno;
}

bool sf_client_gate_installed(void)
{
	return atomic_load(&gate_state) == GATE_INSTALLED;
}

void sf_client_gate_attached(void)
{
	atomic_store(&gate_attached, true);
}

/* The bytes go through a pipe, a piece at a time so that a pipe shrunk
 * to one page (pipe-user-pages-soft) never blocks: write() fails with
 * EFAULT where the caller's memory cannot be read, as seccomp(2)'s copy
 * does, without a fault in this process. The copy is the thread's and is
 * kept for its next attach: a free() after the ATTACH's reply could give
 * memory back to the kernel (brk), a system call under the new filter. */
int sf_client_gate_copy(const struct sock_fprog *prog, struct sock_filter **copy)
{
	static __thread struct sock_filter *buf;
	size_t size = prog->len * sizeof(struct sock_filter), done = 0;
	int p[2], err = 0;
	ssize_t w, r;

	*copy = NULL;
	if (!buf)
		buf = malloc(C2E_MAX_INSNS * sizeof(struct sock_filter));
	if (!buf) {
		set_why(gate_why, sizeof(gate_why), "out of memory");
		return -ENOMEM;
	}
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK)) {
		err = errno;
		set_why(gate_why, sizeof(gate_why), "pipe: %s", strerror(err));
		return -err;
	}
	while (done < size && !err) {
		w = write(p[1], (const char *)prog->filter + done, size - done);
		if (w <= 0) {
			err = w < 0 && errno != EINTR ? errno : 0;
			continue;
		}
		for (r = 0; r < w && !err;) {
			ssize_t n = read(p[0], (char *)buf + done + r, (size_t)(w - r));

			if (n > 0)
				r += n;
			else if (n == 0 || errno != EINTR)
				err = n == 0 ? EIO : errno;
		}
		done += (size_t)r;
	}
	close(p[0]);
	close(p[1]);
	if (err) {
		if (err != EFAULT)
			set_why(gate_why, sizeof(gate_why), "copying the filter: %s",
				strerror(err));
		return -err;
	}
	*copy = buf;
	return 0;
}

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* What is left until deadline (CLOCK_MONOTONIC ms), for poll(): 0 when
 * it has passed. */
static int left_ms(int64_t deadline)
{
	int64_t left = deadline - now_ms();

	return left > 0 ? (int)left : 0;
}

/* The agent connection: a stream socket to <socket>.agent, or -errno with
 * why. Connected before anything is installed, so that a daemon without
 * an agent socket (or none at all) means no gate. */
static int connect_agent(int64_t deadline, char *why, size_t size)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd, r, err;

	if (sf_proto_agent_path(sf_proto_socket_path(), addr.sun_path,
				sizeof(addr.sun_path))) {
		set_why(why, size, "the agent socket's path is too long");
		return -ENAMETOOLONG;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = errno;
		set_why(why, size, "socket: %s", strerror(err));
		return -err;
	}
	while ((r = connect(fd, (struct sockaddr *)&addr, sizeof(addr))) < 0 && errno == EINTR)
		;
	if (r < 0) {
		err = errno;
		set_why(why, size, "no agent socket at %s: %s", addr.sun_path, strerror(err));
		close(fd);
		return -err;
	}
	/* The agent says it took the connection; one over its limits is
	 * closed without a word, and then no gate is installed. */
	{
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char b = 0;

		while ((r = poll(&p, 1, left_ms(deadline))) < 0 && errno == EINTR)
			;
		if (r != 1 || recv(fd, &b, 1, 0) != 1 || b != SF_PROTO_AGENT_READY) {
			set_why(why, size, "sfilterd's agent did not take the connection (%s)",
				r == 0 ? "no answer" : "its limits, or no listener holder: see its log");
			close(fd);
			return -EAGAIN;
		}
	}
	return fd;
}

/* The ContainerProcessState of the runtime-spec's seccomp agent protocol,
 * with the listener by SCM_RIGHTS, then the end of what H sends. */
static int send_listener(int sock, int listener)
{
	union {
		struct cmsghdr align;
		char bytes[CMSG_SPACE(sizeof(int))];
	} ctl;
	char json[320];
	struct iovec iov;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	int pid = (int)getpid(), n;
	size_t sent = 0;
	ssize_t w;

	n = snprintf(json, sizeof(json),
		     "{\"ociVersion\":\"1.0.2\",\"fds\":[\"%s\"],\"pid\":%d,"
		     "\"metadata\":\"%s\",\"state\":{\"ociVersion\":\"1.0.2\",\"id\":\"\","
		     "\"status\":\"running\",\"pid\":%d,\"bundle\":\"\"}}",
		     SF_PROTO_AGENT_FD_NAME, pid, SF_PROTO_AGENT_SELF, pid);
	mh.msg_control = &ctl;
	mh.msg_controllen = 0;
	sf_proto_add_cmsg(&mh, SCM_RIGHTS, &listener, sizeof(int));
	while (sent < (size_t)n) {
		iov = (struct iovec){ json + sent, (size_t)n - sent };
		w = sendmsg(sock, &mh, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EPIPE;
		sent += (size_t)w;
		mh.msg_control = NULL; /* the descriptor went with the first part */
		mh.msg_controllen = 0;
	}
	return shutdown(sock, SHUT_WR) ? -errno : 0;
}

/* The agent's answer line, {"error": N, "message": "..."}: 0 when it
 * keeps the listener, else an errno with why. */
static int read_answer(int sock, int64_t deadline, char *why, size_t size)
{
	char buf[1024];
	size_t got = 0;
	long error;
	ssize_t n;

	while (got < sizeof(buf) - 1 && !memchr(buf, '\n', got)) {
		struct pollfd p = { .fd = sock, .events = POLLIN };
		int left = left_ms(deadline), r;

		if (left <= 0) {
			set_why(why, size, "sfilterd's agent did not answer in %d s",
				WAIT_ANSWER_MS / 1000);
			return ETIMEDOUT;
		}
		r = poll(&p, 1, left);
		n = r == 1 ? recv(sock, buf + got, sizeof(buf) - 1 - got, 0) : 0;
		if ((r < 0 || n < 0) && errno == EINTR)
			continue;
		if (r < 0 || n < 0) {
			set_why(why, size, "reading the agent's answer: %s", strerror(errno));
			return errno;
		}
		if (r == 0)
			continue;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	if (!sf_proto_json_int(buf, "error", &error) || error < 0 || error > 4095) {
		set_why(why, size, "sfilterd's agent gave no answer (%zu bytes)", got);
		return EPROTO;
	}
	if (error) {
		char msg[128];

		sf_proto_json_string(buf, "message", msg, sizeof(msg));
		set_why(why, size, "sfilterd's agent refused the listener: %s",
			msg[0] ? msg : strerror((int)error));
	}
	return (int)error;
}

static void post(int error)
{
	ho.error = error;
	atomic_store_explicit(&ho.done, true, memory_order_release);
}

/* Sends the listener on sock and reads the agent's answer: 0, or an
 * errno with ho.why set. The socket's first use closes it. */
static int hand_over(int sock, int listener, int64_t deadline)
{
	int err = -send_listener(sock, listener);

	if (err)
		set_why(ho.why, sizeof(ho.why), "handing the listener to sfilterd's agent: %s",
			strerror(err));
	else
		err = read_answer(sock, deadline, ho.why, sizeof(ho.why));
	return err;
}

/* H: takes the listener the caller posts, hands it to the agent. */
static void *handover(void *arg)
{
	struct timespec pause = { 0, LOOK_EVERY_NS };
	long long waited = 0;
	int64_t deadline;
	int listener, err;

	(void)arg;
	for (;;) {
		int s = atomic_load_explicit(&ho.slot, memory_order_acquire);

		if (s == SLOT_READY)
			break;
		if (s == SLOT_WAITING && waited >= WAIT_LISTENER_NS) {
			int expected = SLOT_WAITING;

			if (atomic_compare_exchange_strong(&ho.slot, &expected,
							   SLOT_ABANDONED)) {
				close(ho.sock);
				set_why(ho.why, sizeof(ho.why),
					"the caller did not install the gate in %lld s",
					WAIT_LISTENER_NS / 1000000000);
				post(ETIMEDOUT);
				return NULL;
			}
			continue;
		}
		nanosleep(&pause, NULL);
		waited += LOOK_EVERY_NS;
	}
	listener = ho.listener;
	if (listener < 0) {
		close(ho.sock);
		post(-listener);
		return NULL;
	}
	err = hand_over(ho.sock, listener, now_ms() + WAIT_ANSWER_MS);
	close(ho.sock);
	/* The gate is in and cannot come out: a daemon that went away (a
	 * restart), or one whose holder could not keep the listener (EAGAIN),
	 * gets it again, or its successor does, for as long as the caller
	 * would wait for an answer: a bound in time, however long each try
	 * waits. A refusal stands. */
	for (deadline = now_ms() + WAIT_ANSWER_MS;
	     (err == EPIPE || err == ECONNRESET || err == EPROTO || err == ETIMEDOUT ||
	      err == EAGAIN) && left_ms(deadline) > 0; ) {
		struct timespec retry = { 0, 50 * 1000 * 1000 };
		int sock;

		nanosleep(&retry, NULL);
		sock = connect_agent(deadline, ho.why, sizeof(ho.why));
		if (sock < 0)
			continue;
		err = hand_over(sock, listener, deadline);
		close(sock);
	}
	/* Nobody else will read it: closed, the calls it would hear fail
	 * with ENOSYS instead of waiting for ever. */
	if (err)
		close(listener);
	post(err);
	return NULL;
}

static int start_handover(int sock, char *why, size_t size)
{
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t t;
	int r;

	atomic_store(&ho.slot, SLOT_WAITING);
	atomic_store(&ho.done, false);
	ho.sock = sock;
	ho.listener = -1;
	ho.error = 0;
	ho.why[0] = '\0';
	if ((r = pthread_attr_init(&attr)) != 0 ||
	    (r = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED)) != 0) {
		set_why(why, size, "pthread_attr: %s", strerror(r));
		return -r;
	}
	/* H takes no signal of the program's: its handlers stay on the
	 * program's own threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&t, &attr, handover, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (r) {
		set_why(why, size, "could not start the thread that hands the listener over: %s",
			strerror(r));
		return -r;
	}
	return 0;
}

static void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

/* Waits for H's result. may_yield: sched_yield() never reaches the
 * gate's listener, so the wait can give the CPU to H. */
static void wait_handover(bool may_yield)
{
	while (!atomic_load_explicit(&ho.done, memory_order_acquire)) {
		if (may_yield)
			sched_yield();
		else
			relax();
	}
}

/* seccomp(2) with a listener, killable while it waits where the kernel
 * has that (5.19 and later; EINVAL before). The listener, or -errno. */
static int install(const struct sock_fprog *gate)
{
	long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			  SECCOMP_FILTER_FLAG_NEW_LISTENER |
			  SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, gate);

	if (fd < 0 && errno == EINVAL)
		fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			     SECCOMP_FILTER_FLAG_NEW_LISTENER, gate);
	return fd < 0 ? -errno : (int)fd;
}

static const char *install_why(int err)
{
	switch (err) {
	case EBUSY:
		return "a seccomp listener exists already above this process's filters "
		       "(a gate, a container runtime's agent, or the program's own; "
		       "the kernel allows one)";
	case EACCES:
		return "neither no_new_privs nor CAP_SYS_ADMIN";
	case EINVAL:
		return "this kernel has no seccomp listeners (5.0 and later)";
	case ENOMEM:
		return "the kernel's seccomp filters would exceed 32768 instructions";
	default:
		return NULL;
	}
}

/* A one-instruction ALLOW filter with TSYNC: every thread then has the
 * caller's filters, the gate among them. */
static void carry_to_every_thread(void)
{
	struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = { 1, &allow };
	long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);

	if (r > 0)
		set_why(gate_why, sizeof(gate_why),
			"TSYNC: thread %ld has other kernel filters: the gate covers only "
			"the threads that had this one's", r);
	else if (r < 0)
		set_why(gate_why, sizeof(gate_why),
			"TSYNC: %s: the gate covers only the calling thread", strerror(errno));
}

/* The caller's side, GATE_TRYING held; the new state. */
static int try_gate(const struct sock_fprog *chain, size_t n, bool tsync)
{
	struct sock_filter *g = NULL;
	struct c2e_error cerr;
	struct sock_fprog gate;
	uint32_t yield_ret;
	bool may_yield;
	size_t len, i;
	int sock, fd, expected = SLOT_WAITING, r;
	char buf[160];

	r = c2e_gate_build(chain, n, &g, &len, &cerr);
	if (r) {
		set_why(gate_why, sizeof(gate_why), "%s",
			r == -ENOMEM ? "out of memory" : c2e_error_str(&cerr, buf, sizeof(buf)));
		return GATE_NONE;
	}
	gate = (struct sock_fprog){ (unsigned short)len, g };
	may_yield = c2e_const_verdict(&gate, 1, NATIVE_ARCH, SYS_sched_yield, &yield_ret) == 1 &&
		    yield_ret == SECCOMP_RET_ALLOW;
	sock = connect_agent(now_ms() + WAIT_ANSWER_MS, gate_why, sizeof(gate_why));
	if (sock < 0) {
		free(g);
		return GATE_NONE;
	}
	if (start_handover(sock, gate_why, sizeof(gate_why))) {
		close(sock);
		free(g);
		return GATE_NONE;
	}
	/* H may have given up waiting: then nobody would take the listener. */
	if (!atomic_compare_exchange_strong(&ho.slot, &expected, SLOT_INSTALLING)) {
		free(g);
		wait_handover(true);
		set_why(gate_why, sizeof(gate_why), "%s", ho.why);
		return GATE_NONE;
	}
	/* From here until H is done, no system call the gate could send up. */
	fd = install(&gate);
	ho.listener = fd;
	atomic_store_explicit(&ho.slot, SLOT_READY, memory_order_release);
	wait_handover(fd < 0 || may_yield);
	free(g);
	if (fd < 0) {
		const char *why = install_why(-fd);

		if (why)
			set_why(gate_why, sizeof(gate_why), "%s", why);
		else
			set_why(gate_why, sizeof(gate_why), "seccomp: %s", strerror(-fd));
		return fd == -EBUSY || fd == -EINVAL ? GATE_NEVER : GATE_NONE;
	}
	/* The gate is in the kernel, whatever the agent said: it cannot be
	 * removed. */
	if (ho.error == 0)
		close(fd);
	for (i = 0; i < n && n_covered < COVERED_MAX; i++)
		covered[n_covered++] = fingerprint(&chain[i]);
	gate_why[0] = '\0';
	gate_orphaned = ho.error != 0;
	if (gate_orphaned) {
		set_why(gate_why, sizeof(gate_why), "%s", ho.why);
		/* What the caller met on the way, or the agent's refusal. */
		gate_lost_errno = ho.error == EPIPE || ho.error == ECONNRESET ||
				  ho.error == EPROTO || ho.error == ETIMEDOUT ||
				  ho.error == EAGAIN ? EHOSTDOWN : ho.error;
	}
	else if (tsync)
		carry_to_every_thread();
	return GATE_INSTALLED;
}

void sf_client_gate(const struct sock_fprog *chain, size_t n, bool tsync)
{
	int expected = GATE_NONE;

	if (!sf_client_gate_wanted() || !n)
		return;
	if (!atomic_compare_exchange_strong(&gate_state, &expected, GATE_TRYING))
		return;
	n_covered = 0;
	atomic_store(&gate_state, try_gate(chain, n, tsync));
}

void sf_client_gate_note(const struct sock_fprog *prog, bool tried, char *out, size_t size)
{
	const char *env = getenv(SF_CLIENT_GATE_ENV), *why;
	int state = atomic_load(&gate_state);
	uint64_t f = fingerprint(prog);
	bool mine = false;
	size_t i;

	for (i = 0; i < n_covered; i++)
		mine |= covered[i] == f;
	if (state == GATE_INSTALLED && mine) {
		if (gate_orphaned)
			snprintf(out, size, "gate: installed, but %s: calls the filter denies "
				 "fail with ENOSYS", gate_why);
		else
			snprintf(out, size, "gate: installed%s%s", gate_why[0] ? "; " : "",
				 gate_why);
		return;
	}
	if (env && strcmp(env, "0") == 0)
		why = SF_CLIENT_GATE_ENV "=0";
	else if (state == GATE_INSTALLED)
		why = "this process has a gate already, built from other filters (the "
		      "kernel allows one listener)";
	else if (state == GATE_TRYING)
		why = "another thread of this process is installing one";
	else if (!tried && atomic_load(&gate_attached))
		why = "this process attached a filter without one before";
	else
		why = gate_why[0] ? gate_why : "not tried";
	snprintf(out, size, "gate: not installed: %s; calls the filter denies are "
		 "judged by the tier alone", why);
}
