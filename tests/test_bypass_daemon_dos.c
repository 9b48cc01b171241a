// SPDX-License-Identifier: GPL-2.0-only
/*
 * Bypass attempts on sfilterd's resources by local users. Each case is
 * judged as the rest of the bypass suite is (escapes and wrongful kills,
 * both 0), and by whether everyone else is still served.
 *
 * Descriptor close. uid 65534 sends sfilterd descriptors whose close would
 * wait as long as it likes: a TCP socket with SO_LINGER {1, 3600 s} and
 * data that its peer (a loopback connection it never reads) leaves
 * unsent, and a Unix socket whose queue holds one (no option on the outer
 * socket defuses that); with an ATTACH right after the hello, and before
 * the hello. Root, whose connections take descriptors (ADMIN_ATTACH's
 * pidfd), sends the same with a STATUS and in place of a pidfd. One
 * iteration: one such send, answered or refused by the kernel at the
 * send; then, while that TCP connection still holds its data, an admin's
 * STATUS and uid 65533's sf_attach() (kill on getppid), each timed
 * (p99 within 100 ms, 2 s under emulation), and that user's children:
 * one dies at getppid (else an escape), one lives through getgid (else a
 * wrongful kill). Afterwards every descriptor sent has been closed.
 *
 * Subuid exhaustion. uid 65534 maps uids of its own (as newuidmap does from
 * /etc/subuid), and 64 threads of each of several of them attach a filter
 * each (kill on getppid, all distinct: a chain slot each), which per uid
 * would take every chain slot. One iteration: one thread's attach judged
 * by its children: one at getppid (killed if the attach was accepted, else
 * an escape; alive if it was refused, else a wrongful kill: a refusal
 * leaves nothing in force) and one at getgid (alive). With the attacker
 * at its limit, an admin's attach to a process (a container's start) and
 * uid 65533's sf_attach() succeed and hold.
 *
 * Admins' share. One user with a filter limit above the chain slots
 * attaches from more threads than there are slots: it stops at the share
 * non-admin filters may hold, and an admin's attach still finds a slot.
 * Iterations as above.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "latency.h"
#include "admin.h"
#include "bypass.h"
#include "daemon.h"
#include "probe.h"
#include "progs.h"
#include "client.h"
#include "proto.h"
#include "sfclient.h"
#include "userns.h"
#include "wstatus.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

SFD_TIER_INDEPENDENT

#define ATTACKER_UID 65534
#define OTHER_UID    65533
/* The kernel uids the attacker's namespaces map (its "/etc/subuid"). */
#define SUB_BASE     300000

static const char *sock_path;

static double bound_ms(void)
{
	return test_is_emulated() ? 2000 : 100;
}

static bool become(uid_t uid)
{
	return setgroups(0, NULL) == 0 && setgid(uid) == 0 && setuid(uid) == 0;
}

/* Kill on getppid, allow the rest, behind a load of tag: a filter, and a
 * chain slot, of its own for every tag. */
static struct sock_fprog tagged_filter(struct sock_filter f[5], uint32_t tag)
{
	f[0] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_IMM, tag);
	f[1] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0);
	f[2] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getppid, 0, 1);
	f[3] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	f[4] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	return (struct sock_fprog){ 5, f };
}

/* A task's two children: one at getppid, which must die when the task is
 * confined and live when it is not, and one at getgid, which must live. */
static void judge(struct bp_tally *t, bool confined, int st_denied, int st_allowed,
		  const char *who)
{
	struct bp_flags f = { 1, st_denied != -1 && WIFEXITED(st_denied) };
	char what[160];

	snprintf(what, sizeof(what), "%s's child at getppid (%s)", who,
		 confined ? "attached" : "refused: nothing in force");
	bp_count(t, confined ? bp_judge_denied(st_denied, &f) : bp_judge_allowed(st_denied),
		 st_denied, what);
	snprintf(what, sizeof(what), "%s's child at getgid", who);
	bp_count(t, bp_judge_allowed(st_allowed), st_allowed, what);
}

/* ---- what everyone else sees ------------------------------------------------- */

struct victim {
	int rc, err, st_denied, st_allowed;
	double ms;
	char msg[SF_PROTO_MAX_TEXT];
};

static struct victim *V;

/* uid 65533 confines itself through sfilterd (kill on getppid), timed,
 * and its children probe; false (the test failed) when that did not go. */
static bool other_user_attaches(struct bp_tally *t, double *ms)
{
	int st;
	pid_t p;

	memset(V, 0, sizeof(*V));
	V->rc = -2;
	fflush(stdout);
	p = fork();
	if (p == 0) {
		struct sock_filter f[4];
		struct sock_fprog prog = progs_kill_on(f, 4, SYS_getppid);
		double t0;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (!become(OTHER_UID) || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
			_exit(1);
		t0 = bp_now();
		V->rc = sf_attach(&prog, 0);
		V->ms = (bp_now() - t0) * 1e3;
		V->err = errno;
		snprintf(V->msg, sizeof(V->msg), "%s", sf_last_error());
		if (V->rc == 0) {
			V->st_denied = bp_probe(SYS_getppid);
			V->st_allowed = bp_probe(SYS_getgid);
		}
		_exit(0);
	}
	st = bp_wait(p, 30);
	if (!ASSERT_TRUE(wstatus_exited_ok(st), "uid 65533's attach ended"))
		return false;
	if (!ASSERT_EQ(V->rc, 0, "uid 65533's sf_attach() succeeds")) {
		test_log("uid 65533: %s: %s\n", strerror(V->err), V->msg);
		return false;
	}
	*ms = V->ms;
	judge(t, true, V->st_denied, V->st_allowed, "uid 65533");
	return true;
}

/* An admin's STATUS, timed. */
static bool admin_status(double *ms)
{
	struct sf_msg_hdr h;
	double t0 = bp_now();
	int e = sfd_request(sock_path, &h, SF_MSG_STATUS, sizeof(h), NULL, NULL);

	*ms = (bp_now() - t0) * 1e3;
	return ASSERT_EQ(e, 0, "an admin's STATUS is answered");
}

/* An admin attaches kill-on-getppid to a process of its own (a
 * container's start, by pidfd), whose children then probe. */
static bool admin_attaches(struct bp_tally *t)
{
	struct sock_filter f[4];
	struct sock_fprog prog = progs_kill_on(f, 4, SYS_getppid);
	struct sf_client_reply reply;
	struct bp_prober p;
	int pidfd, r, st_denied, st_allowed;

	if (!bp_prober_start(&p, NULL))
		return false;
	pidfd = (int)syscall(SYS_pidfd_open, p.pid, 0);
	r = sf_client_admin_attach(sock_path, p.pid, pidfd, NULL, prog.filter, prog.len, 0,
				   &reply);
	if (pidfd >= 0)
		close(pidfd);
	if (!ASSERT_EQ(r, 0, "an admin's attach to a process succeeds")) {
		test_log("admin attach: %s\n", reply.message);
		bp_prober_end(&p, NULL);
		return false;
	}
	st_denied = bp_prober_probe(&p, SYS_getppid);
	st_allowed = bp_prober_probe(&p, SYS_getgid);
	judge(t, true, st_denied, st_allowed, "the admin's target");
	bp_prober_end(&p, t);
	return true;
}

/* p50/p99/max of n times, and p99 within the bound. */
static void latency(const char *what, double *ms, int n)
{
	char name[160];
	double p99;

	if (n <= 0)
		return;
	lat_sort(ms, n);
	p99 = ms[(99 * n + 99) / 100 - 1];
	test_log("%s, %d tries: p50 %.1f ms, p99 %.1f ms, max %.1f ms (%s)\n", what, n,
		 ms[(50 * n + 99) / 100 - 1], p99, ms[n - 1], test_kernel_name());
	snprintf(name, sizeof(name), "%s: p99 %.1f ms within %.0f ms", what, p99, bound_ms());
	ASSERT_TRUE(p99 <= bound_ms(), name);
}

/* ---- descriptors whose close waits ------------------------------------------- */

enum fd_kind {
	K_ATTACH,        /* uid 65534: with an ATTACH, after the hello */
	K_BEFORE_HELLO,  /* uid 65534: with a STATUS, before the hello */
	K_NESTED,        /* uid 65534: a Unix socket holding one, with a STATUS */
	K_ROOT_STATUS,   /* root: with a STATUS */
	K_ROOT_PIDFD,    /* root: in place of ADMIN_ATTACH's pidfd */
	K_ROOT_NESTED,   /* root: a Unix socket holding one */
	N_KINDS
};

static const char *const kind_name[N_KINDS] = {
	"uid 65534, ATTACH", "uid 65534, before the hello", "uid 65534, nested in a Unix socket",
	"root, STATUS", "root, in place of a pidfd", "root, nested in a Unix socket",
};

/* What became of one send. */
enum { SENT_ANSWERED, SENT_REFUSED_BY_KERNEL, SENT_UNANSWERED, SENT_FAILED };

/* A TCP socket whose last close waits: SO_LINGER {1, 3600 s} and data in
 * its send queue that the peer, *srv (kept by the caller, never read),
 * leaves no window for. -1 on failure. */
static int lingering_tcp(int *srv)
{
	static char junk[16384];
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct linger lg = { 1, 3600 };
	socklen_t alen = sizeof(a);
	int l, c = -1, small = 4096;

	*srv = -1;
	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0)
		return -1;
	/* Small windows: a few KiB fill them. The accepted socket inherits
	 * the listener's receive buffer. */
	setsockopt(l, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	if (bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&a, &alen))
		goto out;
	c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c < 0)
		goto out;
	setsockopt(c, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
	if (connect(c, (struct sockaddr *)&a, alen) || (*srv = accept4(l, NULL, NULL, SOCK_CLOEXEC)) < 0 ||
	    fcntl(c, F_SETFL, O_NONBLOCK)) {
		close(c);
		c = -1;
		goto out;
	}
	while (send(c, junk, sizeof(junk), MSG_NOSIGNAL) > 0)
		;
	setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
out:
	close(l);
	return c;
}

/* Defuses and closes a lingering socket of ours that was not handed over:
 * our close of it would otherwise wait for the linger. */
static void drop_tcp(int c)
{
	struct linger now = { 1, 0 };

	if (c >= 0) {
		setsockopt(c, SOL_SOCKET, SO_LINGER, &now, sizeof(now));
		close(c);
	}
}

static union {
	struct sf_msg_hdr h;
	struct sf_attach_req attach;
	struct sf_admin_attach_req admin;
	char b[SF_PROTO_MAX_MSG];
} m;

/* Sends len bytes of m, of type, with the descriptor fd; 0 or -errno. */
static int send_with_fd(int conn, uint16_t type, size_t len, int fd)
{
	sf_proto_header(&m.h, type, (uint32_t)len, 7);
	return sf_proto_send(conn, &(struct iovec){ m.b, len }, 1, &fd, 1);
}

/* The error of the next reply on conn (skipping a hello), -1000 when it
 * hung up, -1001 when nothing came within 10 s (scaled). */
static int next_reply(int conn)
{
	static char in[SF_PROTO_MAX_MSG + 8];
	struct sf_reply *r = (struct sf_reply *)in;
	struct pollfd p = { .fd = conn, .events = POLLIN };
	ssize_t n;

	for (;;) {
		if (poll(&p, 1, 10000 * (test_is_emulated() ? 10 : 1)) != 1)
			return -1001;
		n = recv(conn, in, sizeof(in), 0);
		if (n <= 0)
			return -1000;
		if (n == SF_PROTO_HELLO_SIZE && r->hdr.type == SF_MSG_HELLO)
			continue;
		return sf_proto_check_reply(in, n) == 0 ? r->error : -1002;
	}
}

/* A connection that has not waited for the hello. */
static int raw_connect(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock_path);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* One attempt of the attacker's, in three steps, so that the daemon can
 * be stopped while the descriptors go: with it stopped, the attacker's
 * own copies are surely closed before the daemon's, whose close is then
 * the last (in real life the attacker only needs to be quick). */
struct attempt {
	enum fd_kind k;
	int tcp, srv, pair[2], conn;
};

/* Step 1: the descriptors, and the connection (which waits for the hello
 * but for K_BEFORE_HELLO). */
static int attempt_prepare(struct attempt *a)
{
	a->pair[0] = a->pair[1] = a->conn = -1;
	a->tcp = lingering_tcp(&a->srv);
	if (a->tcp < 0)
		return SENT_FAILED;
	if (a->k == K_NESTED || a->k == K_ROOT_NESTED) {
		/* The TCP socket waits in the queue of pair[1], which is what
		 * is sent: its last close releases the TCP socket's. */
		if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, a->pair) ||
		    sf_proto_send(a->pair[0], &(struct iovec){ "x", 1 }, 1, &a->tcp, 1))
			return SENT_FAILED;
	}
	a->conn = a->k == K_BEFORE_HELLO ? raw_connect() : sfd_connect(sock_path);
	return a->conn < 0 ? SENT_FAILED : SENT_ANSWERED;
}

/* Step 2, the daemon stopped: the send, and our copies closed. */
static int attempt_send(struct attempt *a)
{
	int fd = a->pair[1] >= 0 ? a->pair[1] : a->tcp, r;

	if (a->k == K_ATTACH) {
		static const struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);

		memset(&m.attach, 0, sizeof(m.attach));
		m.attach.reply_fd = -1;
		m.attach.n_insns = 1;
		memcpy(m.attach.insns, &allow, sizeof(allow));
		r = send_with_fd(a->conn, SF_MSG_ATTACH, SF_PROTO_ATTACH_REQ_SIZE + sizeof(allow), fd);
	} else if (a->k == K_ROOT_PIDFD) {
		struct sock_filter f[4];
		struct sock_fprog prog = progs_kill_on(f, 4, SYS_getppid);

		memset(&m.admin, 0, sizeof(m.admin));
		m.admin.pid = getpid();
		m.admin.n_insns = prog.len;
		memcpy(m.admin.insns, f, sizeof(f));
		r = send_with_fd(a->conn, SF_MSG_ADMIN_ATTACH,
				 SF_PROTO_ADMIN_ATTACH_SIZE + sizeof(f), fd);
	} else {
		r = send_with_fd(a->conn, SF_MSG_STATUS, SF_PROTO_HDR_SIZE, fd);
	}
	/* Handed over, the daemon's copies are the last; else ours are, and
	 * the TCP socket (ours still when the pair's queue goes) is defused
	 * before it is closed. */
	if (a->pair[0] >= 0) {
		close(a->pair[0]);
		close(a->pair[1]);
	}
	if (r)
		drop_tcp(a->tcp);
	else
		close(a->tcp);
	a->tcp = a->pair[0] = a->pair[1] = -1;
	if (r == -EPERM)
		return SENT_REFUSED_BY_KERNEL;
	return r ? SENT_FAILED : SENT_ANSWERED;
}

/* Step 3, the daemon running: its answer. */
static int attempt_answer(struct attempt *a)
{
	int r = next_reply(a->conn);

	close(a->conn);
	a->conn = -1;
	/* A refusal (EINVAL, EPROTO), or the daemon hung up on a request
	 * sent before its hello. */
	return r > 0 || (r == -1000 && a->k == K_BEFORE_HELLO) ? SENT_ANSWERED : SENT_UNANSWERED;
}

/* A network namespace of the caller's own with its loopback up: the
 * attacker's TCP connections are its own business (and the guest's /init
 * leaves the machine's loopback down). */
static bool private_loopback(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int s;
	bool ok;

	if (unshare(CLONE_NEWNET))
		return false;
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ok = s >= 0 && ioctl(s, SIOCGIFFLAGS, &ifr) == 0;
	ifr.ifr_flags |= IFF_UP;
	ok = ok && ioctl(s, SIOCSIFFLAGS, &ifr) == 0;
	if (s >= 0)
		close(s);
	return ok;
}

/* Does each step the test asks for on cmd (a kind to prepare, -2: send,
 * -3: answer, -1: stop) and says on rep how it went; the TCP peer of the
 * last attempt stays open until the next is prepared. */
static void fd_attacker(uid_t uid, int cmd, int rep)
{
	struct attempt a = { .srv = -1, .tcp = -1, .conn = -1, .pair = { -1, -1 } };
	int op, r;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	signal(SIGPIPE, SIG_IGN);
	if (!private_loopback() || (uid && !become(uid)))
		_exit(1);
	while (read(cmd, &op, sizeof(op)) == sizeof(op) && op != -1) {
		if (op == -2) {
			r = attempt_send(&a);
		} else if (op == -3) {
			r = attempt_answer(&a);
		} else {
			if (a.srv >= 0)
				close(a.srv); /* unread data: a reset ends the linger */
			a.k = (enum fd_kind)op;
			r = attempt_prepare(&a);
		}
		if (write(rep, &r, sizeof(r)) != sizeof(r))
			_exit(2);
	}
	if (a.srv >= 0)
		close(a.srv);
	_exit(0);
}

struct attacker {
	pid_t pid;
	int cmd, rep;
};

static bool attacker_start(struct attacker *a, uid_t uid)
{
	int cmd[2], rep[2];

	if (!ASSERT_OK(pipe2(cmd, O_CLOEXEC), "pipe") || !ASSERT_OK(pipe2(rep, O_CLOEXEC), "pipe"))
		return false;
	fflush(stdout);
	a->pid = fork();
	if (a->pid == 0) {
		close(cmd[1]);
		close(rep[0]);
		fd_attacker(uid, cmd[0], rep[1]);
	}
	close(cmd[0]);
	close(rep[1]);
	a->cmd = cmd[1];
	a->rep = rep[0];
	return ASSERT_TRUE(a->pid > 0, "fork an attacker");
}

/* How step op went; -1 when the attacker did not say within 60 s
 * (scaled). */
static int attacker_do(struct attacker *a, int op)
{
	struct pollfd p = { .fd = a->rep, .events = POLLIN };
	int r = -1;

	if (write(a->cmd, &op, sizeof(op)) != sizeof(op) ||
	    poll(&p, 1, 60000 * (test_is_emulated() ? 10 : 1)) != 1 ||
	    read(a->rep, &r, sizeof(r)) != sizeof(r))
		return -1;
	return r;
}

/* One attempt of kind k by a, the daemon stopped while it sends. */
static int attacker_attempt(struct attacker *a, int k, struct sfd *dm)
{
	int r = attacker_do(a, k), sent;

	if (r != SENT_ANSWERED || !sfd_pause(dm))
		return SENT_FAILED;
	sent = attacker_do(a, -2);
	if (!sfd_resume(dm))
		return SENT_FAILED;
	if (sent != SENT_ANSWERED)
		return sent;
	return attacker_do(a, -3);
}

static void attacker_end(struct attacker *a)
{
	int stop = -1;

	if (a->pid <= 0)
		return;
	if (write(a->cmd, &stop, sizeof(stop)) == sizeof(stop)) {
		bp_wait(a->pid, 30);
	} else {
		kill(a->pid, SIGKILL);
		waitpid(a->pid, NULL, 0);
	}
	close(a->cmd);
	close(a->rep);
	a->pid = 0;
}

/* The daemon's descriptors but BPF ones: how many, once they have
 * settled at or below want (or 10 s, 100 under emulation, are over);
 * list names them. */
static int settled_fds(pid_t daemon, int want, char *list, size_t size)
{
	int i, n = -1;

	for (i = 0; i < (test_is_emulated() ? 10000 : 1000); i++) {
		n = sfd_count_plain_fds(daemon, list, size);
		if (n >= 0 && n <= want)
			break;
		usleep(10000);
	}
	return n;
}

TEST(bypass_daemon_descriptors_whose_close_waits_stall_nobody)
{
	static const char *const args[] = { "--max-attach-rate", "0", NULL };
	long n = bp_iterations(500, 16), i;
	struct attacker user = { 0 }, root = { 0 };
	struct bp_tally t = { 0 };
	double *status_ms = calloc(n, sizeof(double)), *attach_ms = calloc(n, sizeof(double));
	int outcome[N_KINDS][4] = { { 0 } }, baseline, k, r, after;
	char list[2048];
	double t0 = bp_now();
	SFD_AUTO;

	V = bp_shared(sizeof(*V));
	if (!status_ms || !attach_ms || !V || !sfd_start_for_users(&dm, args))
		goto out;
	sock_path = dm.sock;
	baseline = sfd_count_plain_fds(dm.pid, list, sizeof(list));
	if (!attacker_start(&user, ATTACKER_UID) || !attacker_start(&root, 0))
		goto out;
	for (i = 0; i < n && !test_failed(); i++) {
		k = (int)(i % N_KINDS);
		r = attacker_attempt(k < K_ROOT_STATUS ? &user : &root, k, &dm);
		if (ASSERT_TRUE(r == SENT_ANSWERED || r == SENT_REFUSED_BY_KERNEL,
				"the send was refused, by the kernel or by the daemon's reply"))
			outcome[k][r]++;
		else
			test_log("iteration %ld (%s): %s\n", i, kind_name[k],
				 r == SENT_UNANSWERED ? "no answer within 10 s" : "the attacker failed");
		/* Whatever became of it, are the others served? */
		if (!admin_status(&status_ms[i]) || !other_user_attaches(&t, &attach_ms[i]))
			break;
	}
	for (k = 0; k < N_KINDS; k++)
		test_log("%s: %d answered with a refusal, %d refused by the kernel at the send\n",
			 kind_name[k], outcome[k][SENT_ANSWERED], outcome[k][SENT_REFUSED_BY_KERNEL]);
	latency("sfctl status's request (root)", status_ms, (int)i);
	latency("sf_attach() (uid 65533)", attach_ms, (int)i);
	bp_report("descriptor-close", "a descriptor whose close waits, sent to sfilterd, then "
		  "an admin's STATUS and another user's attach with its calls", &t,
		  bp_now() - t0);
	attacker_end(&user);
	attacker_end(&root);
	/* Their TCP peers are gone: every descriptor sent is closed. */
	after = settled_fds(dm.pid, baseline, list, sizeof(list));
	test_log("the daemon's descriptors (but BPF ones): %d at the start, %d after:%s\n",
		 baseline, after, list);
	ASSERT_TRUE(after >= 0 && after <= baseline, "every descriptor sent has been closed");
out:
	attacker_end(&user);
	attacker_end(&root);
	free(status_ms);
	free(attach_ms);
}

/* ---- one user's filters against the chain slots ------------------------------ */

#define MAX_PROCS   5
#define MAX_THREADS 300

struct thread_result {
	int rc, err, st_denied, st_allowed;
};

/* What the flooding threads did, shared with the test. */
struct flood_board {
	int done;       /* threads that have attached (or been refused) and probed */
	int release;    /* the test has seen what it must: they may exit */
	uint32_t tag;   /* this round's first filter tag */
	int refusal_kept[MAX_PROCS];
	char refusal[MAX_PROCS][SF_PROTO_MAX_TEXT];
	struct thread_result r[MAX_PROCS][MAX_THREADS];
};

static struct flood_board *F;

struct flood {
	int proc, threads;
};

/* One thread: a filter of its own (a chain slot of its own), then its
 * children's calls; it keeps the filter in force until released. */
static void *flood_thread(void *arg)
{
	uintptr_t v = (uintptr_t)arg;
	int proc = (int)(v >> 16), i = (int)(v & 0xffff);
	struct thread_result *r = &F->r[proc][i];
	struct sock_filter f[5];
	struct sock_fprog prog = tagged_filter(f, F->tag + (uint32_t)(proc * MAX_THREADS + i));

	r->rc = sf_attach(&prog, 0);
	r->err = errno;
	if (r->rc && !__atomic_exchange_n(&F->refusal_kept[proc], 1, __ATOMIC_SEQ_CST))
		snprintf(F->refusal[proc], sizeof(F->refusal[proc]), "%s", sf_last_error());
	r->st_denied = bp_probe(SYS_getppid);
	r->st_allowed = bp_probe(SYS_getgid);
	__atomic_add_fetch(&F->done, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&F->release, __ATOMIC_SEQ_CST))
		usleep(5000);
	return NULL;
}

/* A process of the attacking uid: its threads attach at once. */
static int flood(void *arg)
{
	const struct flood *fl = arg;
	pthread_t th[MAX_THREADS];
	pthread_attr_t attr;
	int i, n = 0;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return 3;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	for (i = 0; i < fl->threads; i++)
		if (pthread_create(&th[n], &attr, flood_thread,
				   (void *)(((uintptr_t)fl->proc << 16) | (uintptr_t)i)) == 0)
			n++;
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return n == fl->threads ? 0 : 4;
}

static int flood_as_attacker(void *arg)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (!become(ATTACKER_UID))
		return 2;
	return flood(arg);
}

/* Waits (10 ms steps, 120 s, 1200 under emulation) until n threads are done. */
static bool floods_done(int n)
{
	int i;

	for (i = 0; i < (test_is_emulated() ? 120000 : 12000); i++) {
		if (__atomic_load_n(&F->done, __ATOMIC_SEQ_CST) >= n)
			return true;
		usleep(10000);
	}
	return false;
}

/* Judges every thread's children, and counts the accepted attaches. */
static int judge_floods(struct bp_tally *t, int procs, int threads)
{
	int p, i, accepted = 0;
	char who[64];

	for (p = 0; p < procs; p++)
		for (i = 0; i < threads; i++) {
			const struct thread_result *r = &F->r[p][i];

			snprintf(who, sizeof(who), "process %d thread %d", p, i);
			judge(t, r->rc == 0, r->st_denied, r->st_allowed, who);
			accepted += r->rc == 0;
			if (r->rc && r->err != ENOSPC)
				ASSERT_EQ(r->err, ENOSPC, "a refused attach: ENOSPC");
		}
	return accepted;
}

/* One round: procs processes of threads threads each (in user namespaces
 * of uid 65534's, as its subordinate uids 0.., or as uid 65534 itself),
 * then what the others can still do; the accepted count in *accepted. */
static bool flood_round(struct bp_tally *t, bool subuids, int procs, int threads,
			bool others_served, int *accepted)
{
	struct flood fl[MAX_PROCS];
	pid_t pid[MAX_PROCS];
	double ms;
	int p, started = 0;
	bool ok;

	memset(F, 0, sizeof(*F));
	F->tag = (uint32_t)bp_now() << 10;
	for (p = 0; p < procs; p++) {
		fl[p] = (struct flood){ .proc = p, .threads = threads };
		if (subuids) {
			pid[p] = userns_fork(ATTACKER_UID, SUB_BASE, MAX_PROCS, (uint32_t)p, flood, &fl[p]);
		} else {
			fflush(stdout);
			pid[p] = fork();
			if (pid[p] == 0)
				_exit(flood_as_attacker(&fl[p]));
		}
		if (pid[p] <= 0)
			break;
		started++;
	}
	ok = ASSERT_EQ(started, procs, "the attacking processes started") &&
	     ASSERT_TRUE(floods_done(procs * threads), "every attacking thread attached or was refused");
	if (ok) {
		for (p = 0; p < procs; p++)
			if (F->refusal_kept[p])
				test_log("process %d refused: %s\n", p, F->refusal[p]);
		/* With the attacker at its limit: a container starts (an admin's
		 * attach), and, with slots left for them, other users attach. */
		ok = admin_attaches(t);
		if (others_served)
			ok = other_user_attaches(t, &ms) && ok;
	}
	__atomic_store_n(&F->release, 1, __ATOMIC_SEQ_CST);
	for (p = 0; p < started; p++)
		ok = ASSERT_TRUE(wstatus_exited_ok(bp_wait(pid[p], 60)), "an attacking process ended") && ok;
	*accepted = judge_floods(t, started, threads);
	return ok;
}

TEST(bypass_daemon_subuids_of_one_user_share_its_limit)
{
	static const char *const args[] = { "--max-attach-rate", "0", NULL };
	int procs = test_is_emulated() ? 2 : MAX_PROCS, threads = test_is_emulated() ? 40 : 64;
	long rounds = bp_iterations(2, 1), i;
	struct bp_tally t = { 0 };
	double t0 = bp_now();
	char why[160];
	int accepted;
	SFD_AUTO;

	if (!TEST_REQUIRE(probe_userns(why, sizeof(why)), NULL, why))
		return;
	V = bp_shared(sizeof(*V));
	F = bp_shared(sizeof(*F));
	if (!V || !F || !sfd_start_for_users(&dm, args))
		return;
	sock_path = dm.sock;
	test_log("%ld rounds: %d of uid 65534's subordinate uids, %d threads each, a filter per "
		 "thread\n", rounds, procs, threads);
	for (i = 0; i < rounds; i++) {
		if (!flood_round(&t, true, procs, threads, true, &accepted))
			break;
		test_log("round %ld: %d of %d attaches accepted\n", i, accepted, procs * threads);
		ASSERT_EQ(accepted, 64, "uid 65534's subordinate uids hold its 64 filters, no more");
		ASSERT_TRUE(strstr(F->refusal[procs - 1], "uid 65534 (the owner of uid ") &&
			    strstr(F->refusal[procs - 1], "already has 64 filters (limit 64)"),
			    "the refusal names the login user and its limit");
	}
	bp_report("subuid-exhaustion", "an attach by a thread of one of a user's subordinate "
		  "uids, judged by its children's calls", &t, bp_now() - t0);
}

TEST(bypass_daemon_admins_keep_a_share_of_the_chain_slots)
{
	/* No per-user limit below the slots: one user could take them all. */
	static const char *const args[] = { "--max-attach-rate", "0",
					    "--max-programs-per-uid", "1000", NULL };
	int threads = SF_MAX_CHAINS + 4, accepted = 0;
	struct bp_tally t = { 0 };
	double t0 = bp_now();
	SFD_AUTO;

	V = bp_shared(sizeof(*V));
	F = bp_shared(sizeof(*F));
	if (!V || !F || !sfd_start_for_users(&dm, args))
		return;
	sock_path = dm.sock;
	if (flood_round(&t, false, 1, threads, false, &accepted)) {
		test_log("%d of %d attaches of uid 65534 accepted: %s\n", accepted, threads,
			 F->refusal[0]);
		ASSERT_EQ(accepted, (SF_MAX_CHAINS - 1) - SF_MAX_CHAINS / 4,
			  "one user's filters stop at the share of the slots non-admins may hold");
		ASSERT_TRUE(strstr(F->refusal[0], "kept for administrators") != NULL,
			    "the refusal says why");
	}
	bp_report("admins-share", "an attach by a thread of one user's, judged by its children's "
		  "calls", &t, bp_now() - t0);
}
