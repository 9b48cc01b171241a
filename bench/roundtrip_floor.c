// SPDX-License-Identifier: GPL-2.0-only
/*
 * roundtrip_floor: what any daemon-based attach must pay at least, against
 * seccomp(2) of 16 instructions, from a freshly forked process each time
 * (as attach_latency's children are):
 *
 *   rt1      one request and its reply on a connection made before the
 *            fork (a kept connection);
 *   rt2      connect, wait for the server's hello, one request and reply
 *            (sf_attach()'s first attach without a gate, minus sfilter's
 *            own work);
 *   seccomp  prctl(NO_NEW_PRIVS) and seccomp(2) of 16 instructions.
 *
 * The server is a process blocked in epoll_wait(), as sfilterd is, that
 * sends a hello at accept and echoes each request: nothing else. So the
 * gap between attach_latency's sf-16 figures and rt2 is sfilter's own
 * work (the daemon's accept and identification, its steps, the client's
 * first touches of its code), not the socket.
 *
 * INTERLEAVED: one sample of each variant per round, the order rotated,
 * the server idle again (20 ms) before each. Never asserts; prints
 * Markdown: per variant n, min, p50, p90, and the paired ratio to
 * seccomp(2).
 */
#define _GNU_SOURCE
#include "bench_util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

enum { V_RT1, V_RT2, V_SECCOMP, V_COUNT };

static const char *const vnames[V_COUNT] = { "rt1", "rt2", "seccomp" };
static const char *const vwhat[V_COUNT] = {
	"one request and reply on a connection made before the fork",
	"connect, the server's hello, one request and reply",
	"seccomp(2), 16 insns",
};

static struct sockaddr_un addr = { .sun_family = AF_UNIX };

/* Hello at accept, an echo for each request; until killed. */
static void serve(int lfd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = lfd }, evs[16];
	int ep = epoll_create1(EPOLL_CLOEXEC), n, i;
	char buf[256];
	ssize_t k;

	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev))
		_exit(1);
	for (;;) {
		n = epoll_wait(ep, evs, 16, -1);
		for (i = 0; i < n; i++) {
			int fd = evs[i].data.fd;

			if (fd == lfd) {
				fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
				ev = (struct epoll_event){ .events = EPOLLIN, .data.fd = fd };
				if (fd < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev))
					continue;
				send(fd, "hello", 5, MSG_NOSIGNAL);
			} else if ((k = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
				send(fd, buf, (size_t)k, MSG_NOSIGNAL);
			} else if (k == 0 || errno != EAGAIN) {
				close(fd);
			}
		}
	}
}

static int dial(void)
{
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* One sample of variant v in a fresh child: microseconds, or -1. */
static double sample(int v, const struct sock_fprog *prog)
{
	int pfd[2], pre = -1, st;
	double us = -1;
	char buf[64] = "request";
	pid_t c;

	if (v == V_RT1 && ((pre = dial()) < 0 || recv(pre, buf, sizeof(buf), 0) <= 0))
		goto out;
	if (pipe2(pfd, O_CLOEXEC))
		goto out;
	usleep(20000); /* the server idle again, as sfilterd is between attaches */
	c = fork();
	if (c == 0) {
		double t0 = bench_now_ns(), r = -1;
		int fd;
		bool ok;

		if (v == V_RT1) {
			ok = send(pre, buf, 32, 0) == 32 && recv(pre, buf, sizeof(buf), 0) > 0;
		} else if (v == V_RT2) {
			fd = dial();
			ok = fd >= 0 && recv(fd, buf, sizeof(buf), 0) > 0 &&
			     send(fd, buf, 32, 0) == 32 && recv(fd, buf, sizeof(buf), 0) > 0;
		} else {
			ok = !prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) &&
			     !syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, prog);
		}
		if (ok)
			r = (bench_now_ns() - t0) / 1e3;
		_exit(write(pfd[1], &r, sizeof(r)) == sizeof(r) ? 0 : 1);
	}
	close(pfd[1]);
	if (c > 0 && read(pfd[0], &us, sizeof(us)) != sizeof(us))
		us = -1;
	if (c > 0)
		waitpid(c, &st, 0);
	close(pfd[0]);
out:
	if (pre >= 0)
		close(pre);
	return us;
}

int main(int argc, char **argv)
{
	struct sock_filter f[16];
	struct sock_fprog prog = { 16, f };
	int rounds = 100, r, k, v, lfd, st;
	double *s;
	pid_t server;

	while ((k = getopt(argc, argv, "r:")) != -1) {
		if (k != 'r' || (rounds = atoi(optarg)) < 1) {
			fprintf(stderr, "usage: %s [-r ROUNDS]\n", argv[0]);
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (k = 0; k < 15; k++)
		f[k] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0);
	f[15] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	snprintf(addr.sun_path, sizeof(addr.sun_path), "/tmp/roundtrip_floor-%d.sock",
		 (int)getpid());
	unlink(addr.sun_path);
	lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) || listen(lfd, 128)) {
		fprintf(stderr, "roundtrip_floor: %s: %s\n", addr.sun_path, strerror(errno));
		return 1;
	}
	server = fork();
	if (server == 0)
		serve(lfd);
	close(lfd);
	s = calloc((size_t)V_COUNT * rounds, sizeof(*s));
	if (server < 0 || !s)
		return 1;
	for (r = 0; r < rounds; r++)
		for (k = 0; k < V_COUNT; k++) {
			v = (k + r) % V_COUNT;
			s[v * rounds + r] = sample(v, &prog);
		}
	kill(server, SIGKILL);
	waitpid(server, &st, 0);
	unlink(addr.sun_path);

	printf("\n# The floor of a daemon's round trip from a fresh process, %d rounds, "
	       "interleaved%s\n\n", rounds, bench_emulated() ? BENCH_EMULATED_NOTE : "");
	printf("| variant | what | n | min us | p50 us | p90 us | vs seccomp(2) (median paired) |\n");
	printf("|---|---|---:|---:|---:|---:|---:|\n");
	for (v = 0; v < V_COUNT; v++) {
		const double *x = s + v * rounds;

		printf("| %s | %s | %d | %.1f | %.1f | %.1f | %.2f |\n", vnames[v], vwhat[v],
		       bench_valid(x, rounds), bench_best(x, rounds), bench_median(x, rounds),
		       bench_pct(x, rounds, 0.9),
		       bench_paired_median(x, s + V_SECCOMP * rounds, rounds));
	}
	free(s);
	return 0;
}
