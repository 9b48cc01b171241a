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
 *  1. the agent socket is connected first: no agent, no gate. Its "ready"
 *     byte is read only after the gate is built (and H started), so that
 *     the daemon takes the connection while this process works;
 *  2. unless the gate allows every call the hand-over makes (below), a
 *     helper thread H is started before the install, so that the gate
 *     does not cover it (a filter is the calling thread's until TSYNC);
 *  3. the caller installs the gate and posts the listener in memory;
 *  4. H sends it to the agent with the runtime-spec's
 *     ContainerProcessState and reads the answer; on any failure H closes
 *     the listener itself, which makes the kernel answer ENOSYS to the
 *     calls the gate sends up (seccomp_notify_detach()) instead of leaving
 *     them waiting;
 *  5. the caller waits for H with no system call the gate could send up:
 *     a futex wait, a read of an eventfd or sched_yield() where the gate
 *     allows it whatever the arguments, else by reading memory; then it
 *     closes its listener (a thread that could read it could continue its
 *     own calls), and with TSYNC waits for H to be gone (TSYNC would give
 *     a dying H the gate and the filter, under which its last calls, made
 *     by libc, could be denied) and carries the gate to every thread.
 * Where the gate allows every call of the hand-over (the "direct" set,
 * x86-64: each made as the one system call checked, never through a libc
 * wrapper that may use another), there is no H: the caller hands the
 * listener over itself, with its signals blocked so that no handler of
 * the program's makes a call the gate would send up meanwhile.
 * Once sfilterd holds the listener, a call of the caller's that the gate
 * sends up is judged with the chain as it stands, which has the new
 * filter only after the ATTACH: it continues.
 *
 * H runs on a stack of this library's (no mmap, no guard page, nothing
 * for libc to give back when it exits) and is joinable: the caller reaps
 * it only by pthread_tryjoin_np(), which makes no call while H lives
 * (pthread_join() waits on a futex, which the gate may send up: glibc
 * aborts when that wait fails with ENOSYS).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "selfgate.h"
#include "gate_wire.h"
#include "marks.h"
#include "client.h"
#include "proto.h"
#include "c2e.h"

#include <errno.h>
#include <fcntl.h>
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
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>

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

/* How long H waits for the listener. */
#define WAIT_LISTENER_NS (10LL * 1000000000)
/* H gives the CPU away this long while it waits for the listener, then
 * looks every LOOK_EVERY_NS (the install takes well under a millisecond). */
#define YIELD_FOR_NS     (20LL * 1000000)
#define LOOK_EVERY_NS    30000
/* H's stack: what it calls needs a few KiB; libc puts the static TLS on
 * top of it (pthread_create() refuses one too small: then libc's own). */
#define H_STACK_SIZE     (256 * 1024)

enum gate_state { GATE_NONE, GATE_TRYING, GATE_INSTALLED, GATE_NEVER };

/* The process's gate. Copied into a forked child, which has its parent's
 * kernel filters and so the same answer; a new image starts at GATE_NONE
 * (a gate installed before execve makes the next one fail with EBUSY). */
static _Atomic int gate_state;
static atomic_bool gate_attached;
/* The calling thread's last sf_client_gate_with() installed the gate. */
static __thread bool gate_mine;
static bool gate_tsync;      /* it was carried to every thread */
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
	_Atomic int slot;  /* a futex word: the caller wakes H when it is READY */
	int listener;      /* the listener, or -errno of the install; set before SLOT_READY */
	int sock;          /* the agent connection */
	pid_t pid;         /* getpid(), read before the install */
	bool wake_h;       /* the caller wakes H by FUTEX_WAKE (the gate allows futex) */
	int efd;           /* an eventfd H writes once done, or -1 */
	_Atomic int done;  /* a futex word: H has finished with everything here */
	int error;         /* 0: the agent holds the listener; else an errno */
	char why[160];     /* when error: why */
} ho;

/* H, while it may run: joined before another one starts. */
static pthread_t h_thread;
static bool h_joinable;
static char h_stack[H_STACK_SIZE] __attribute__((aligned(64)));

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

bool sf_client_gate_covers(const struct sock_fprog *prog, bool tsync)
{
	uint64_t f;
	size_t i;

	if (!gate_mine || atomic_load(&gate_state) != GATE_INSTALLED || gate_orphaned ||
	    (tsync && !gate_tsync))
		return false;
	f = fingerprint(prog);
	for (i = 0; i < n_covered; i++)
		if (covered[i] == f)
			return true;
	return false;
}

void sf_client_gate_attached(void)
{
	atomic_store(&gate_attached, true);
}

/* The pipe's way, where process_vm_readv() is refused (a container
 * runtime's seccomp profile denies it without CAP_SYS_PTRACE): a piece at
 * a time so that a pipe shrunk to one page (pipe-user-pages-soft) never
 * blocks. 0 or an errno. */
static int copy_by_pipe(const void *from, void *to, size_t size)
{
	size_t done = 0;
	int p[2], err = 0;
	ssize_t w, r;

	if (pipe2(p, O_CLOEXEC | O_NONBLOCK))
		return errno;
	while (done < size && !err) {
		w = write(p[1], (const char *)from + done, size - done);
		if (w <= 0) {
			err = w < 0 && errno != EINTR ? errno : 0;
			continue;
		}
		for (r = 0; r < w && !err;) {
			ssize_t n = read(p[0], (char *)to + done + r, (size_t)(w - r));

			if (n > 0)
				r += n;
			else if (n == 0 || errno != EINTR)
				err = n == 0 ? EIO : errno;
		}
		done += (size_t)r;
	}
	close(p[0]);
	close(p[1]);
	return err;
}

/* The bytes are read by the kernel, which fails with EFAULT where the
 * caller's memory cannot be read, as seccomp(2)'s copy does, without a
 * fault in this process: one process_vm_readv() of this process's own
 * memory (no ptrace check: mm_access() of one's own mm), else a pipe. The
 * copy is the thread's and is kept for its next attach: a free() after
 * the ATTACH's reply could give memory back to the kernel (brk), a system
 * call under the new filter. */
int sf_client_gate_copy(const struct sock_fprog *prog, struct sock_filter **copy)
{
	static __thread struct sock_filter *buf;
	size_t size = prog->len * sizeof(struct sock_filter);
	struct iovec local, remote;
	ssize_t n;
	int err;

	*copy = NULL;
	if (!buf)
		buf = malloc(C2E_MAX_INSNS * sizeof(struct sock_filter));
	if (!buf) {
		set_why(gate_why, sizeof(gate_why), "out of memory");
		return -ENOMEM;
	}
	local = (struct iovec){ buf, size };
	remote = (struct iovec){ (void *)prog->filter, size };
	n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	if (n == (ssize_t)size)
		err = 0;
	else if (n >= 0 || errno == EFAULT)
		err = EFAULT; /* a part of it only, or none */
	else
		err = copy_by_pipe(prog->filter, buf, size);
	if (err) {
		if (err != EFAULT)
			set_why(gate_why, sizeof(gate_why), "copying the filter: %s",
				strerror(err));
		return -err;
	}
	*copy = buf;
	return 0;
}

static long futex(_Atomic int *word, int op, int val, const struct timespec *ts)
{
	return syscall(SYS_futex, (int *)word, op, val, ts, NULL, 0);
}

/* H's result, and the caller woken whichever way it waits. */
static void post(int error)
{
	uint64_t one = 1;

	ho.error = error;
	atomic_store_explicit(&ho.done, 1, memory_order_release);
	futex(&ho.done, FUTEX_WAKE_PRIVATE, 1, NULL);
	if (ho.efd >= 0)
		(void)!write(ho.efd, &one, sizeof(one));
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* H: takes the listener the caller posts, hands it to the agent. */
static void *handover(void *arg)
{
	long long start = now_ns(), waited;
	int listener;

	(void)arg;
	for (;;) {
		int s = atomic_load_explicit(&ho.slot, memory_order_acquire);

		if (s == SLOT_READY)
			break;
		waited = now_ns() - start;
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
		if (ho.wake_h) {
			struct timespec ms = { 0, 1000000 };

			futex(&ho.slot, FUTEX_WAIT_PRIVATE, s, &ms);
		} else if (waited < YIELD_FOR_NS) {
			sched_yield();
		} else {
			struct timespec pause = { 0, LOOK_EVERY_NS };

			nanosleep(&pause, NULL);
		}
	}
	sf_client_mark(SF_MARK_INSTALLED);
	listener = ho.listener;
	if (listener < 0) {
		close(ho.sock);
		post(-listener);
		return NULL;
	}
	ho.error = sf_gate_deliver(ho.sock, listener, ho.pid, ho.why, sizeof(ho.why));
	sf_client_mark(SF_MARK_HANDED);
	post(ho.error);
	return NULL;
}

static int start_handover(char *why, size_t size)
{
	pthread_attr_t attr;
	sigset_t all, old;
	int r;

	if ((r = pthread_attr_init(&attr)) != 0) {
		set_why(why, size, "pthread_attr: %s", strerror(r));
		return -r;
	}
	/* H takes no signal of the program's: its handlers stay on the
	 * program's own threads. */
	sigfillset(&all);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 32)
	pthread_attr_setsigmask_np(&attr, &all);
#else
	pthread_sigmask(SIG_SETMASK, &all, &old);
#endif
	r = pthread_attr_setstack(&attr, h_stack, sizeof(h_stack));
	if (r == 0)
		r = pthread_create(&h_thread, &attr, handover, NULL);
	if (r == EINVAL) {
		/* A static TLS too large for h_stack: libc's own stack. */
		pthread_attr_destroy(&attr);
		pthread_attr_init(&attr);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 32)
		pthread_attr_setsigmask_np(&attr, &all);
#endif
		r = pthread_create(&h_thread, &attr, handover, NULL);
	}
#if !(defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 32))
	pthread_sigmask(SIG_SETMASK, &old, NULL);
#endif
	(void)old;
	pthread_attr_destroy(&attr);
	if (r) {
		set_why(why, size, "could not start the thread that hands the listener over: %s",
			strerror(r));
		return -r;
	}
	h_joinable = true;
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

/* How the caller may wait, with the gate in and no one holding its
 * listener: each only where the gate allows that call whatever its
 * arguments. */
enum wait_way { WAIT_SPIN, WAIT_YIELD, WAIT_READ, WAIT_FUTEX };

/* Waits for H's result. With an eventfd, its one write is read before
 * anything else: H writes after it posts, and the caller closes the
 * eventfd only once the write is in. */
static void wait_handover(enum wait_way way)
{
	uint64_t v;
	ssize_t n = -1;

	if (ho.efd >= 0) {
		while ((n = read(ho.efd, &v, sizeof(v))) < 0 && errno == EINTR)
			;
		if (n == sizeof(v))
			close(ho.efd);
		ho.efd = -1; /* else left open: H may still write to it */
		if (way == WAIT_READ)
			way = WAIT_SPIN;
	}
	while (!atomic_load_explicit(&ho.done, memory_order_acquire)) {
		switch (way) {
		case WAIT_FUTEX:
			futex(&ho.done, FUTEX_WAIT_PRIVATE, 0, NULL);
			break;
		case WAIT_YIELD:
			sched_yield();
			break;
		default:
			relax();
			break;
		}
	}
}

/* Waits for H to be gone (the kernel clears its tid at its exit) and lets
 * libc forget it, with no call but sched_yield() (where may_yield) while
 * it lives. */
static void reap_handover(bool may_yield)
{
	if (!h_joinable)
		return;
	while (pthread_tryjoin_np(h_thread, NULL) == EBUSY) {
		if (may_yield)
			sched_yield();
		else
			relax();
	}
	h_joinable = false;
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
 * caller's filters, the gate among them. Whether every thread has. */
static bool carry_to_every_thread(void)
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
	return r == 0;
}

/* Whether the gate lets nr run in the kernel whatever its arguments. */
static bool gate_allows(const struct sock_fprog *gate, int nr)
{
	uint32_t ret;

	return c2e_const_verdict(gate, 1, NATIVE_ARCH, nr, &ret) == 1 &&
	       ret == SECCOMP_RET_ALLOW;
}

/* Whether the caller may hand the listener over itself: the gate allows
 * every call the hand-over makes, and the signal mask's around it. */
static bool gate_allows_direct(const struct sock_fprog *gate)
{
	const int *nrs;
	size_t n = sf_gate_wire_calls(&nrs), i;

	if (!n || !gate_allows(gate, SYS_rt_sigprocmask))
		return false;
	for (i = 0; i < n; i++)
		if (!gate_allows(gate, nrs[i]))
			return false;
	return true;
}

/* The caller hands the listener over itself, its signals blocked: a
 * handler's call that the gate sends up would wait for a hand-over that
 * cannot go on until the handler returns. */
static int install_direct(const struct sock_fprog *gate, int sock,
			  void (*before_install)(void *), void *ctx)
{
	sigset_t all, old;
	int fd;

	sigfillset(&all);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, _NSIG / 8);
	if (before_install)
		before_install(ctx);
	sf_client_mark(SF_MARK_GREETED);
	fd = install(gate);
	/* clock_gettime is in the direct set: the marks may read it. */
	sf_client_mark(SF_MARK_INSTALLED);
	if (fd >= 0) {
		ho.error = sf_gate_deliver(sock, fd, ho.pid, ho.why, sizeof(ho.why));
		sf_client_mark(SF_MARK_HANDED);
	} else
		close(sock); /* no gate */
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, _NSIG / 8);
	return fd;
}

/* The caller's side with H: the listener, or -errno of the install; H's
 * result in ho. */
static int install_with_h(const struct sock_fprog *gate, enum wait_way way,
			  void (*before_install)(void *), void *ctx)
{
	int expected = SLOT_WAITING, fd;

	/* H may have given up waiting: then nobody would take the listener. */
	if (!atomic_compare_exchange_strong(&ho.slot, &expected, SLOT_INSTALLING)) {
		wait_handover(way);
		return -ECANCELED;
	}
	if (before_install)
		before_install(ctx);
	sf_client_mark(SF_MARK_GREETED);
	/* From here until H is done, no system call the gate could send up. */
	fd = install(gate);
	ho.listener = fd;
	atomic_store_explicit(&ho.slot, SLOT_READY, memory_order_release);
	if (ho.wake_h || fd < 0)
		futex(&ho.slot, FUTEX_WAKE_PRIVATE, 1, NULL);
	wait_handover(fd < 0 ? WAIT_FUTEX : way);
	return fd;
}

/* The caller's side, GATE_TRYING held; the new state. */
static int try_gate(const struct sock_fprog *chain, size_t n, bool tsync,
		    void (*before_install)(void *), void *ctx)
{
	struct sock_filter *g = NULL;
	struct c2e_error cerr;
	struct sock_fprog gate;
	enum wait_way way;
	bool direct, may_yield;
	size_t len, i;
	int sock, fd, r;
	char buf[160];

	/* The daemon takes the connection while the gate is built. */
	sock = sf_gate_agent_dial(gate_why, sizeof(gate_why));
	if (sock < 0)
		return GATE_NONE;
	r = c2e_gate_build(chain, n, &g, &len, &cerr);
	if (r) {
		set_why(gate_why, sizeof(gate_why), "%s",
			r == -ENOMEM ? "out of memory" : c2e_error_str(&cerr, buf, sizeof(buf)));
		close(sock);
		return GATE_NONE;
	}
	gate = (struct sock_fprog){ (unsigned short)len, g };
	direct = gate_allows_direct(&gate);
	may_yield = gate_allows(&gate, SYS_sched_yield);
	way = gate_allows(&gate, SYS_futex) ? WAIT_FUTEX :
	      gate_allows(&gate, SYS_read) ? WAIT_READ : may_yield ? WAIT_YIELD : WAIT_SPIN;

	atomic_store(&ho.slot, SLOT_WAITING);
	atomic_store(&ho.done, 0);
	ho.sock = sock;
	ho.listener = -1;
	ho.pid = getpid();
	ho.wake_h = way == WAIT_FUTEX;
	ho.efd = way == WAIT_READ && !direct ? eventfd(0, EFD_CLOEXEC) : -1;
	ho.error = 0;
	ho.why[0] = '\0';
	if (way == WAIT_READ && !direct && ho.efd < 0)
		way = may_yield ? WAIT_YIELD : WAIT_SPIN;
	if (!direct && start_handover(gate_why, sizeof(gate_why))) {
		if (ho.efd >= 0)
			close(ho.efd);
		close(sock);
		free(g);
		return GATE_NONE;
	}
	sf_client_mark(SF_MARK_PREPARED);
	if (sf_gate_agent_greeted(sock, gate_why, sizeof(gate_why))) {
		if (!direct) {
			/* H closes the connection and is done. */
			ho.listener = -EAGAIN;
			atomic_store_explicit(&ho.slot, SLOT_READY, memory_order_release);
			futex(&ho.slot, FUTEX_WAKE_PRIVATE, 1, NULL);
			wait_handover(WAIT_FUTEX);
			reap_handover(true);
		} else {
			close(sock);
		}
		free(g);
		return GATE_NONE;
	}
	fd = direct ? install_direct(&gate, sock, before_install, ctx) :
		      install_with_h(&gate, way, before_install, ctx);
	free(g);
	if (!direct && atomic_load(&ho.slot) == SLOT_ABANDONED) { /* H gave up first */
		set_why(gate_why, sizeof(gate_why), "%s", ho.why);
		reap_handover(true);
		return GATE_NONE;
	}
	if (fd < 0) {
		const char *why = install_why(-fd);

		reap_handover(true);
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
		gate_lost_errno = sf_gate_daemon_away(ho.error) ? EHOSTDOWN : ho.error;
	} else if (tsync) {
		reap_handover(may_yield);
		gate_tsync = carry_to_every_thread();
	}
	return GATE_INSTALLED;
}

void sf_client_gate_with(const struct sock_fprog *chain, size_t n, bool tsync,
			 void (*before_install)(void *), void *ctx)
{
	int expected = GATE_NONE;

	if (!sf_client_gate_wanted() || !n)
		return;
	if (!atomic_compare_exchange_strong(&gate_state, &expected, GATE_TRYING))
		return;
	n_covered = 0;
	gate_tsync = false;
	atomic_store(&gate_state, try_gate(chain, n, tsync, before_install, ctx));
	gate_mine = atomic_load(&gate_state) == GATE_INSTALLED;
}

void sf_client_gate(const struct sock_fprog *chain, size_t n, bool tsync)
{
	sf_client_gate_with(chain, n, tsync, NULL, NULL);
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
