// SPDX-License-Identifier: GPL-2.0-only
/*
 * The listener holder (loader/daemon/holder.c): real seccomp listeners,
 * made by children that install a filter answering USER_NOTIF for
 * getppid, handed to a holder started on a private path. What it must
 * do: keep a listener alive so that a notified call waits instead of
 * failing with ENOSYS, give it back, outlive the process that started it,
 * drop it once no task is left under its filter, never read or spin on a
 * pending notification, refuse what is not a listener, other uids and
 * more than its bound.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "fdpass.h"
#include "holder.h"
#include "suid.h"
#include "wstatus.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A confined child and the test's end of its control socket. */
struct notified {
	pid_t pid;
	int ctl;
	int listener;   /* the test's copy, or -1 */
};

/* What the child's getppid returned. */
struct outcome {
	long ret;
	int err;
};

/*
 * The child: installs a filter that sends getppid to its listener, hands
 * the listener over ctl, then on each 'c' calls getppid and writes what it
 * got; on end of file it exits 0. 100 + errno when the install failed.
 */
static int notified_child(int ctl)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };
	char cmd;
	int r = fdpass_listener(ctl, &prog);

	if (r)
		return r;
	while (read(ctl, &cmd, 1) == 1) {
		struct outcome o;

		errno = 0;
		o.ret = syscall(SYS_getppid);
		o.err = errno;
		if (write(ctl, &o, sizeof(o)) != sizeof(o))
			return 3;
	}
	return 0;
}

/* Starts a confined child; false with the test skipped or failed. */
static bool notified_start(struct notified *n)
{
	char buf[64];
	int sv[2], st = -1;

	n->pid = -1;
	n->ctl = n->listener = -1;
	if (!ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), "socketpair"))
		return false;
	n->pid = fork();
	if (n->pid == 0) {
		close(sv[0]);
		_exit(notified_child(sv[1]));
	}
	close(sv[1]);
	n->ctl = sv[0];
	if (!ASSERT_TRUE(n->pid > 0, "fork"))
		return false;
	n->listener = fdpass_recv(n->ctl);
	if (n->listener >= 0)
		return true;
	waitpid(n->pid, &st, 0);
	n->pid = -1;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 100 + EINVAL)
		test_skip("seccomp(2) has no SECCOMP_FILTER_FLAG_NEW_LISTENER");
	else
		test_fail(__FILE__, __LINE__, "no listener from the child (%s)",
			  wstatus_str(st, buf, sizeof(buf)));
	return false;
}

/* Ends the child (killed if still in a call) and reaps it. */
static void notified_end(struct notified *n)
{
	if (n->listener >= 0)
		close(n->listener);
	if (n->ctl >= 0)
		close(n->ctl);
	if (n->pid > 0) {
		kill(n->pid, SIGKILL);
		waitpid(n->pid, NULL, 0);
	}
	n->pid = -1;
	n->ctl = n->listener = -1;
}

/* The child's next getppid's outcome within ms; false when none came. */
static bool notified_outcome(struct notified *n, int ms, struct outcome *o)
{
	struct pollfd p = { n->ctl, POLLIN, 0 };

	return poll(&p, 1, ms) == 1 && read(n->ctl, o, sizeof(*o)) == sizeof(*o);
}

/*
 * Closes the test's copy of the listener, which leaves the holder's the
 * only one, as after the daemon's SIGKILL, and has the child call
 * getppid: true when the call still waits ms later, as it must while a
 * listener is kept; with none left the kernel answers ENOSYS at once.
 */
static bool call_waits(struct notified *n, int ms)
{
	struct outcome o;

	close(n->listener);
	n->listener = -1;
	if (!ASSERT_EQ(write(n->ctl, "c", 1), 1, "the child calls getppid"))
		return false;
	if (notified_outcome(n, ms, &o)) {
		test_fail(__FILE__, __LINE__, "getppid returned %ld (%s) with no supervisor "
			  "reading: the listener was not kept", o.ret, strerror(o.err));
		return false;
	}
	return true;
}

/* Answers the one notification waiting on fd: error err, or CONTINUE when
 * err is 0. */
static bool answer(int fd, int err, int ms)
{
	struct pollfd p = { fd, POLLIN, 0 };
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;

	if (!ASSERT_EQ(poll(&p, 1, ms), 1, "a notification waits") ||
	    !ASSERT_TRUE(p.revents & POLLIN, "readable"))
		return false;
	memset(&req, 0, sizeof(req));
	if (!ASSERT_OK(ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &req), "NOTIF_RECV") ||
	    !ASSERT_EQ(req.data.nr, SYS_getppid, "the call notified is getppid"))
		return false;
	memset(&resp, 0, sizeof(resp));
	resp.id = req.id;
	if (err)
		resp.error = -err;
	else
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	return ASSERT_OK(ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp), "NOTIF_SEND");
}

/* A private directory with the holder's socket path in it. */
struct place {
	char dir[64];
	char path[96];
};

static bool place_make(struct place *p)
{
	snprintf(p->dir, sizeof(p->dir), "/tmp/sf-holder-XXXXXX");
	if (!ASSERT_TRUE(mkdtemp(p->dir) != NULL, "mkdtemp"))
		return false;
	snprintf(p->path, sizeof(p->path), "%s/holder.sock", p->dir);
	return true;
}

static void place_rm(struct place *p)
{
	unlink(p->path);
	rmdir(p->dir);
}

/* What holder_take() hands: the descriptors and their metas. */
struct taken {
	int n;
	int fd[8];
	char meta[8][HOLDER_META_MAX + 1];
};

static int take_one(void *ctx, int fd, const void *meta, size_t len)
{
	struct taken *t = ctx;

	if (t->n >= 8) {
		close(fd);
		return -E2BIG;
	}
	t->fd[t->n] = fd;
	memcpy(t->meta[t->n], meta, len);
	t->meta[t->n][len] = '\0';
	t->n++;
	return 0;
}

static void taken_close(struct taken *t)
{
	int i;

	for (i = 0; i < t->n; i++)
		close(t->fd[i]);
	t->n = 0;
}

/* A confined child, a holder on pl, and the child's listener put into it
 * with meta; false with the test failed or skipped. */
static bool child_held(struct place *pl, struct notified *n, int *hfd, const char *meta)
{
	if (!notified_start(n))
		return false;
	*hfd = holder_open(pl->path);
	return ASSERT_GE(*hfd, 0, "holder_open") &&
	       ASSERT_OK(holder_put(*hfd, n->listener, meta, strlen(meta)), "holder_put");
}

/* The end of a test: what was taken closed, the child ended, the holder
 * stopped, the place removed. */
static void finish(struct notified *n, struct taken *t, int hfd, struct place *pl)
{
	if (t)
		taken_close(t);
	if (n)
		notified_end(n);
	if (hfd >= 0) {
		ASSERT_OK(holder_stop(hfd), "holder_stop");
		close(hfd);
	}
	place_rm(pl);
}

static int wait_ms(int host_ms)
{
	return test_is_emulated() ? host_ms * 20 : host_ms;
}

/* The holder's pid, from the connection (SO_PEERCRED). */
static pid_t holder_pid(int hfd)
{
	struct ucred cr;
	socklen_t cl = sizeof(cr);

	return getsockopt(hfd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) == 0 ? cr.pid : -1;
}

TEST(a_call_notified_while_only_the_holder_keeps_the_listener_waits_and_is_answered_after_take)
{
	static const char meta[] = "uid=1000 pid=42";
	struct notified n;
	struct place pl;
	struct taken t = { 0 };
	struct outcome o;
	int hfd = -1;

	if (!place_make(&pl))
		return;
	if (!child_held(&pl, &n, &hfd, meta) ||
	    !ASSERT_EQ(holder_count(hfd), 1, "the holder keeps one listener"))
		goto out;
	if (!call_waits(&n, wait_ms(500)))
		goto out;
	if (!ASSERT_EQ(holder_take(hfd, take_one, &t), 1, "holder_take hands one") ||
	    !ASSERT_STREQ(t.meta[0], meta, "its meta") ||
	    !answer(t.fd[0], 42, wait_ms(2000)))
		goto out;
	if (ASSERT_TRUE(notified_outcome(&n, wait_ms(2000), &o), "getppid returns once answered")) {
		ASSERT_EQ(o.ret, -1, "getppid's return");
		ASSERT_EQ(o.err, 42, "the error the supervisor answered");
	}
	ASSERT_EQ(holder_count(hfd), 1, "take leaves the holder its copy");
out:
	finish(&n, &t, hfd, &pl);
}

TEST(the_holder_drops_a_listener_once_no_task_is_left_under_its_filter)
{
	struct notified n;
	struct place pl;
	int hfd = -1, count = -1, st = -1;
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	char buf[64];
	int64_t waited = 0, bound = wait_ms(5000);

	if (!place_make(&pl))
		return;
	if (!child_held(&pl, &n, &hfd, "m"))
		goto out;
	close(n.listener);
	n.listener = -1;
	/* Still kept while the child lives. */
	nanosleep(&(struct timespec){ 0, 200 * 1000 * 1000 }, NULL);
	if (!ASSERT_EQ(holder_count(hfd), 1, "kept while the child lives"))
		goto out;
	/* End of file: the child exits; reaped, its filter has no user left
	 * (seccomp_filter_release()). */
	close(n.ctl);
	n.ctl = -1;
	waitpid(n.pid, &st, 0);
	n.pid = -1;
	if (!ASSERT_TRUE(wstatus_exited_ok(st), wstatus_str(st, buf, sizeof(buf))))
		goto out;
	while ((count = holder_count(hfd)) > 0 && waited < bound) {
		nanosleep(&ts, NULL);
		waited += 20;
	}
	ASSERT_EQ(count, 0, "dropped after the child is gone");
	test_log("dropped within %lld ms\n", (long long)waited);
out:
	finish(&n, NULL, hfd, &pl);
}

/* Clock ticks of CPU pid has used (utime + stime), or -1. */
static long long cpu_ticks(pid_t pid)
{
	char path[64], line[1024], *p;
	unsigned long long ut, stt;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	p = fgets(line, sizeof(line), f);
	fclose(f);
	if (!p || !(p = strrchr(line, ')')))
		return -1;
	/* after ") ": state ppid pgrp session tty tpgid flags minflt cminflt
	 * majflt cmajflt utime stime */
	if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
		   &ut, &stt) != 2)
		return -1;
	return (long long)(ut + stt);
}

TEST(the_holder_neither_reads_nor_spins_on_a_pending_notification)
{
	struct notified n;
	struct place pl;
	struct taken t = { 0 };
	struct outcome o;
	long long before, after, hz = sysconf(_SC_CLK_TCK);
	int hfd = -1, ms = wait_ms(1000);
	pid_t hp;

	if (!place_make(&pl))
		return;
	if (!child_held(&pl, &n, &hfd, "m"))
		goto out;
	hp = holder_pid(hfd);
	if (!ASSERT_TRUE(hp > 0, "the holder's pid"))
		goto out;
	/* The call is pending on the holder's copy for ms. */
	before = cpu_ticks(hp);
	if (!call_waits(&n, ms))
		goto out;
	after = cpu_ticks(hp);
	if (!ASSERT_TRUE(before >= 0 && after >= 0, "the holder's CPU time"))
		goto out;
	test_log("holder CPU over %d ms with a call pending: %lld ms\n", ms,
		 (after - before) * 1000 / hz);
	/* A holder woken by the pending notification would take the CPU it
	 * is given: a quarter of the wall time is a generous line. */
	ASSERT_TRUE((after - before) * 1000 / hz < ms / 4, "the holder sleeps while a call waits");
	/* Never read: the notification is still there for the daemon. */
	if (!ASSERT_EQ(holder_take(hfd, take_one, &t), 1, "holder_take") ||
	    !answer(t.fd[0], 0, wait_ms(2000)))
		goto out;
	if (ASSERT_TRUE(notified_outcome(&n, wait_ms(2000), &o), "getppid returns once answered"))
		ASSERT_EQ(o.ret, getpid(), "CONTINUE: getppid ran");
out:
	finish(&n, &t, hfd, &pl);
}

TEST(a_descriptor_that_is_not_a_seccomp_listener_is_refused_and_closed)
{
	struct place pl;
	int hfd = -1, sv[2] = { -1, -1 };

	if (!place_make(&pl))
		return;
	hfd = holder_open(pl.path);
	if (!ASSERT_GE(hfd, 0, "holder_open") ||
	    !ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), "socketpair"))
		goto out;
	ASSERT_EQ(holder_put(hfd, sv[0], NULL, 0), -EBADF, "a socket is refused");
	ASSERT_EQ(holder_count(hfd), 0, "nothing kept");
	/* Had the holder kept its copy, the peer would still be there. */
	close(sv[0]);
	sv[0] = -1;
	ASSERT_EQ(send(sv[1], "x", 1, MSG_NOSIGNAL | MSG_DONTWAIT), -1, "send to the refused end");
	ASSERT_EQ(errno, EPIPE, "its last copy is closed");
	ASSERT_EQ(holder_put(hfd, sv[1], "m", HOLDER_META_MAX + 1), -EINVAL, "meta too long");
out:
	if (sv[0] >= 0)
		close(sv[0]);
	if (sv[1] >= 0)
		close(sv[1]);
	finish(NULL, NULL, hfd, &pl);
}

/*
 * As uid 65534, with the socket file opened to everyone (a mistaken mode
 * is what the holder's own check is for): exit 0 when holder_open()
 * refuses a holder of another uid and a raw connection's requests are
 * refused; else the step that failed.
 */
static int nobody_tries(const char *path, int listener)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd;

	if (!suid_become_nobody())
		return 10;
	if (holder_open(path) != -EACCES)
		return 11;
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		return 12;
	if (holder_put(fd, listener, "evil", 4) >= 0)
		return 13;
	if (holder_count(fd) >= 0)
		return 14;
	return 0;
}

TEST(a_connection_of_another_uid_is_refused_by_the_file_mode_and_closed_by_the_holder)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct notified n;
	struct place pl;
	struct stat st;
	int hfd = -1, status = -1, fd;
	char buf[64];
	pid_t pid;

	if (geteuid() != 0) {
		test_skip("not root: no other uid to become");
		return;
	}
	if (!place_make(&pl))
		return;
	if (!notified_start(&n))
		goto out;
	hfd = holder_open(pl.path);
	if (!ASSERT_GE(hfd, 0, "holder_open") ||
	    !ASSERT_OK(stat(pl.path, &st), "stat the socket") ||
	    !ASSERT_EQ(st.st_mode & 07777, 0600, "the socket's mode"))
		goto out;
	chmod(pl.dir, 0755);
	/* With the mode as made, uid 65534 cannot even connect. */
	pid = fork();
	if (pid == 0) {
		snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", pl.path);
		fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		_exit(!suid_become_nobody() ? 10 :
		      connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0 ? 1 :
		      errno == EACCES ? 0 : 2);
	}
	waitpid(pid, &status, 0);
	if (!ASSERT_TRUE(wstatus_exited_ok(status), wstatus_str(status, buf, sizeof(buf))))
		goto out;
	/* With the file opened to all, the holder itself refuses. */
	if (!ASSERT_OK(chmod(pl.path, 0666), "chmod 0666"))
		goto out;
	pid = fork();
	if (pid == 0)
		_exit(nobody_tries(pl.path, n.listener));
	waitpid(pid, &status, 0);
	ASSERT_TRUE(wstatus_exited_ok(status), wstatus_str(status, buf, sizeof(buf)));
	ASSERT_EQ(holder_count(hfd), 0, "nothing put by uid 65534");
	chmod(pl.path, 0600);
out:
	finish(&n, NULL, hfd, &pl);
}

TEST(the_holder_outlives_the_sigkill_of_the_process_that_started_it)
{
	struct notified n;
	struct place pl;
	struct taken t = { 0 };
	struct outcome o;
	int hfd = -1, pfd[2] = { -1, -1 }, st = -1;
	pid_t starter, first = -1;
	char buf[64];

	if (!place_make(&pl))
		return;
	if (!notified_start(&n) || !ASSERT_OK(pipe2(pfd, O_CLOEXEC), "pipe"))
		goto out;
	starter = fork();
	if (starter == 0) {
		/* The daemon: starts the holder, hands it the listener,
		 * says the holder's pid, and waits to be killed. */
		pid_t hp = setpgid(0, 0) == 0 ? 0 : -1;
		int h = hp == 0 ? holder_open(pl.path) : -1;

		hp = h >= 0 ? holder_pid(h) : -1;

		if (h < 0 || holder_put(h, n.listener, "starter", 7) < 0)
			hp = -1;
		if (write(pfd[1], &hp, sizeof(hp)) != sizeof(hp))
			_exit(1);
		pause();
		_exit(0);
	}
	close(pfd[1]);
	pfd[1] = -1;
	if (!ASSERT_TRUE(starter > 0, "fork") ||
	    !ASSERT_EQ(read(pfd[0], &first, sizeof(first)), sizeof(first), "the starter's word") ||
	    !ASSERT_TRUE(first > 0, "the starter put the listener")) {
		if (starter > 0) {
			kill(-starter, SIGKILL);
			waitpid(starter, NULL, 0);
		}
		goto out;
	}
	/* Its whole process group, as a service manager or a terminal
	 * would. */
	kill(-starter, SIGKILL);
	waitpid(starter, &st, 0);
	if (!ASSERT_TRUE(wstatus_killed_by(st, SIGKILL), wstatus_str(st, buf, sizeof(buf))))
		goto out;
	/* A call made while no "daemon" is up waits... */
	if (!call_waits(&n, wait_ms(300)))
		goto out;
	/* ...and the next one takes the listener back from the same holder. */
	hfd = holder_open(pl.path);
	if (!ASSERT_GE(hfd, 0, "holder_open again") ||
	    !ASSERT_EQ(holder_pid(hfd), first, "the same holder answers") ||
	    !ASSERT_EQ(holder_take(hfd, take_one, &t), 1, "holder_take") ||
	    !ASSERT_STREQ(t.meta[0], "starter", "its meta") ||
	    !answer(t.fd[0], 0, wait_ms(2000)))
		goto out;
	if (ASSERT_TRUE(notified_outcome(&n, wait_ms(2000), &o), "getppid returns once answered"))
		ASSERT_EQ(o.ret, getpid(), "CONTINUE: getppid ran");
out:
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	if (hfd < 0 && first > 0)
		hfd = holder_open(pl.path);
	finish(&n, &t, hfd, &pl);
}

TEST(a_holder_refuses_a_listener_beyond_its_bound_with_enospc)
{
	/* The bound is HOLDER_MAX or what RLIMIT_NOFILE's hard limit leaves;
	 * a holder started under a hard limit of a few more descriptors than
	 * it keeps for itself may keep two. 8,192 confined children would
	 * test the same comparison. */
	struct notified n[3];
	struct place pl;
	int hfd = -1, i, st = -1;
	pid_t starter;
	char buf[64];

	for (i = 0; i < 3; i++)
		n[i].pid = -1, n[i].ctl = n[i].listener = -1;
	if (!place_make(&pl))
		return;
	for (i = 0; i < 3; i++)
		if (!notified_start(&n[i]))
			goto out;
	starter = fork();
	if (starter == 0) {
		/* 16 + 4 + 253 kept for itself (holder.c), two for listeners. */
		struct rlimit rl = { 275, 275 };
		int h;

		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			_exit(2);
		h = holder_open(pl.path);
		_exit(h < 0 ? 3 : 0);
	}
	waitpid(starter, &st, 0);
	if (!ASSERT_TRUE(wstatus_exited_ok(st), wstatus_str(st, buf, sizeof(buf))))
		goto out;
	hfd = holder_open(pl.path);
	if (!ASSERT_GE(hfd, 0, "holder_open"))
		goto out;
	ASSERT_OK(holder_put(hfd, n[0].listener, "0", 1), "the first");
	ASSERT_OK(holder_put(hfd, n[1].listener, "1", 1), "the second");
	ASSERT_EQ(holder_put(hfd, n[2].listener, "2", 1), -ENOSPC, "the third is refused");
	ASSERT_EQ(holder_count(hfd), 2, "two kept");
out:
	for (i = 0; i < 2; i++)
		notified_end(&n[i]);
	finish(&n[2], NULL, hfd, &pl);
}

/* pid has exited: no such process, or a zombie its new parent (init, or
 * whichever subreaper adopted it) has not reaped yet. */
static bool gone(pid_t pid)
{
	char path[64], line[256], *p = NULL;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT;
	if (fgets(line, sizeof(line), f))
		p = strrchr(line, ')');
	fclose(f);
	return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

TEST(holder_stop_ends_the_holder_and_a_later_open_starts_a_new_one)
{
	struct place pl;
	int hfd, again = -1, i;
	pid_t first;

	if (!place_make(&pl))
		return;
	hfd = holder_open(pl.path);
	if (!ASSERT_GE(hfd, 0, "holder_open"))
		goto out;
	first = holder_pid(hfd);
	ASSERT_OK(holder_stop(hfd), "holder_stop");
	close(hfd);
	/* Its end of the connection closes in exit_files(), a moment
	 * before the exit completes. */
	for (i = 0; i < wait_ms(2000) / 10 && !gone(first); i++)
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	ASSERT_TRUE(gone(first), "the holder is gone");
	again = holder_open(pl.path);
	if (ASSERT_GE(again, 0, "holder_open after the stop"))
		ASSERT_NEQ(holder_pid(again), first, "a new holder");
out:
	finish(NULL, NULL, again, &pl);
}
