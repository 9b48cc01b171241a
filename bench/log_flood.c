// SPDX-License-Identifier: GPL-2.0-only
/*
 * A flood of logged calls: one task makes CALLS getppid calls that its
 * filter answers with SECCOMP_RET_LOG (everything else allowed), under
 *   none         nothing attached
 *   seccomp-log  kernel seccomp: each call is an audit record (type 1326),
 *                which without auditd the kernel prints to its log,
 *                ratelimited
 *   sf-folded    a private sfilterd as installed (--repeat-interval 1):
 *                the process's repeats fold into one event a second
 *   sf-unfolded  the same with --repeat-interval 0: an event per call, as
 *                far as the login user's budget (1000 a second, bursts
 *                of 5000) lets them through; the rest are dropped and
 *                counted
 * and reports, per variant, ns per call, the events written for the task
 * and the bytes they take, and for sfilter the calls their counts stand
 * for (folded events must add up to every call).
 *
 * Variants are INTERLEAVED: each round runs each in turn. Each sfilter
 * variant starts its daemon (--no-pin) for its turn and stops it after,
 * so no other variant runs with its programs attached; the kernel seccomp
 * worker is a child of its own that keeps its filter for life.
 *
 * Never asserts. Usage: log_flood [-r ROUNDS] [-n CALLS] [-v]   (root)
 */
#define _GNU_SOURCE
#include "sfclient.h"
#include "bench_util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define RET_LOG 0x7ffc0000U
#define MAX_ROUNDS 20

enum { V_NONE, V_SECCOMP, V_FOLDED, V_UNFOLDED, V_COUNT };
static const char *const vname[V_COUNT] = { "none", "seccomp-log", "sf-folded", "sf-unfolded" };

/* LOG getppid, allow the rest (the client's calls after sf_attach too). */
static struct sock_filter flog[] = {
	BENCH_LD(0),
	BENCH_JEQ(BENCH_NR_GETPPID, 0, 1),
	BENCH_RET(RET_LOG),
	BENCH_RET(BENCH_RET_ALLOW),
};

struct result {
	double ns;          /* per call */
	long events;        /* lines or records for the task */
	long bytes;         /* of them */
	long long calls;    /* sfilter: the sum of their counts */
	long suppressed;    /* kernel: records the ratelimit kept out */
};

/* A child that installs the filter as variant v has it, makes n calls and
 * writes ns per call to the pipe. Returns its pid, or -1. */
static pid_t worker(int v, long n, int wfd)
{
	struct sock_fprog prog = { .len = BENCH_ARRAY_SIZE(flog), .filter = flog };
	pid_t pid = fork();
	double t0, ns;
	long i;

	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (v != V_NONE && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		_exit(10);
	if (v == V_SECCOMP && syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
		_exit(11);
	if ((v == V_FOLDED || v == V_UNFOLDED) && sf_attach(&prog, 0))
		_exit(12);
	t0 = bench_now_ns();
	for (i = 0; i < n; i++)
		syscall(SYS_getppid);
	ns = (bench_now_ns() - t0) / n;
	_exit(write(wfd, &ns, sizeof(ns)) == sizeof(ns) ? 0 : 13);
}

/* Runs variant v's worker; its pid into *pid. 0 or -1. */
static int run(int v, long n, struct result *res, pid_t *pid)
{
	int p[2], st;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	*pid = worker(v, n, p[1]);
	close(p[1]);
	if (*pid < 0 || read(p[0], &res->ns, sizeof(res->ns)) != sizeof(res->ns))
		res->ns = -1;
	close(p[0]);
	if (*pid > 0)
		waitpid(*pid, &st, 0);
	if (*pid < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "log_flood: %s: worker failed (status 0x%x)\n", vname[v], st);
		return -1;
	}
	return 0;
}

/* ---- kernel seccomp: the kernel log ------------------------------------------- */

static void kmsg_tally(int fd, pid_t pid, struct result *res)
{
	char rec[8192], needle[32];
	ssize_t r;

	snprintf(needle, sizeof(needle), " pid=%d ", pid);
	while ((r = read(fd, rec, sizeof(rec) - 1)) > 0 || (r < 0 && errno == EPIPE)) {
		const char *s;

		if (r <= 0)
			continue; /* EPIPE: records were overwritten, go on */
		rec[r] = 0;
		if (strstr(rec, "type=1326") && strstr(rec, needle)) {
			res->events++;
			res->bytes += r;
		} else if ((s = strstr(rec, "kauditd_printk_skb: ")) && strstr(s, "suppressed")) {
			res->suppressed += strtol(s + 20, NULL, 10);
		}
	}
}

static int seccomp_run(long n, struct result *res)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	pid_t pid;

	if (fd < 0 || lseek(fd, 0, SEEK_END) < 0) {
		fprintf(stderr, "log_flood: /dev/kmsg: %s\n", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (run(V_SECCOMP, n, res, &pid) < 0) {
		close(fd);
		return -1;
	}
	/* kauditd prints from a kernel thread: let it catch up. */
	sleep(2);
	kmsg_tally(fd, pid, res);
	close(fd);
	return 0;
}

/* ---- sfilter: the daemon's log ------------------------------------------------- */

static void log_tally(const char *path, pid_t pid, struct result *res)
{
	FILE *f = fopen(path, "re");
	char needle[32], *line = NULL;
	size_t cap = 0;
	ssize_t len;

	snprintf(needle, sizeof(needle), "\"pid\":%d,", pid);
	while (f && (len = getline(&line, &cap, f)) > 0) {
		const char *c;

		if (!strstr(line, needle) || !strstr(line, "\"nr\":"))
			continue;
		res->events++;
		res->bytes += len;
		c = strstr(line, "\"count\":");
		res->calls += c ? strtoll(c + 8, NULL, 10) : 1;
	}
	free(line);
	if (f)
		fclose(f);
}

static int sf_run(int v, long n, struct result *res)
{
	static const char *const folded[] = { "--repeat-interval", "1", NULL };
	static const char *const unfolded[] = { "--repeat-interval", "0", NULL };
	struct bench_daemon dm = { .pid = -1 };
	pid_t pid;
	int err;

	dm.args = v == V_FOLDED ? folded : unfolded;
	if (bench_daemon_find(&dm))
		return -1;
	err = bench_daemon_start(&dm, bench_emulated() ? 120 : 30);
	if (err) {
		fprintf(stderr, "log_flood: start %s: %s\n", dm.bin, strerror(-err));
		bench_daemon_stop(&dm);
		return -1;
	}
	err = run(v, n, res, &pid);
	/* The last interval's calls come as a repeat event once it is over:
	 * within two intervals. (Stopping removes the log.) */
	if (!err) {
		sleep(3);
		log_tally(dm.log, pid, res);
	}
	bench_daemon_stop(&dm);
	return err;
}

int main(int argc, char **argv)
{
	static struct result res[V_COUNT][MAX_ROUNDS];
	double ns[V_COUNT][MAX_ROUNDS];
	int rounds = 3, r, v;
	long n = 1000000;

	if (bench_round_opts(argc, argv, "CALLS", &rounds, &n, NULL))
		return 2;
	if (rounds > MAX_ROUNDS)
		rounds = MAX_ROUNDS;
	if (geteuid()) {
		fprintf(stderr, "log_flood: run as root (it starts sfilterd and reads /dev/kmsg)\n");
		return 1;
	}
	for (r = 0; r < rounds; r++)
		for (v = 0; v < V_COUNT; v++) {
			struct result *x = &res[v][r];
			pid_t pid;
			int err;

			memset(x, 0, sizeof(*x));
			err = v == V_NONE ? run(v, n, x, &pid) :
			      v == V_SECCOMP ? seccomp_run(n, x) : sf_run(v, n, x);
			if (err)
				x->ns = -1;
			ns[v][r] = x->ns;
		}

	printf("## A flood of logged calls: %ld getppid calls answered LOG, one task%s\n\n", n,
	       bench_emulated() ? BENCH_EMULATED_NOTE : "");
	printf("| variant | ns/call (median of %d) | x none | x seccomp-log | events written "
	       "| bytes of log | calls counted |\n|---|---|---|---|---|---|---|\n", rounds);
	for (v = 0; v < V_COUNT; v++) {
		const struct result *x = &res[v][rounds - 1];

		printf("| %s | %.0f | %.2f | %.2f | ", vname[v], bench_median(ns[v], rounds),
		       bench_paired_median(ns[v], ns[V_NONE], rounds),
		       bench_paired_median(ns[v], ns[V_SECCOMP], rounds));
		if (v == V_NONE)
			printf("- | - | - |\n");
		else if (v == V_SECCOMP)
			printf("%ld (printk ratelimit: %ld records of all tasks suppressed meanwhile) "
			       "| %ld | - |\n",
			       x->events, x->suppressed, x->bytes);
		else
			printf("%ld | %ld | %lld |\n", x->events, x->bytes, x->calls);
	}
	printf("\n(events and bytes: the last round's)\n");
	return 0;
}
