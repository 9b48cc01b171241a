// SPDX-License-Identifier: GPL-2.0-only
/*
 * How long attaching a filter takes: the sf_attach() round trip through a
 * private sfilterd, against kernel seccomp's own install, in microseconds.
 * Variants:
 *   sf-16 loaded    sf_attach of a 16-instruction filter the daemon already
 *                   has (attached once before by another child): the daemon
 *                   dedupes, nothing is compiled or loaded
 *   sf-300 loaded   the same for the 300-rule allowlist (604 insns)
 *   sf-300 new      a 300-rule allowlist the daemon has never seen (one
 *                   constant differs per sample): a new chain program to
 *                   translate, verify, load, plus its action table
 *   seccomp-16      seccomp(2) SECCOMP_SET_MODE_FILTER of the 16-insn filter
 *   seccomp-300     seccomp(2) of the 300-rule allowlist
 *
 * Every sample is a fresh forked child: it sets no_new_privs (untimed),
 * reads CLOCK_MONOTONIC (vDSO), attaches, reads the clock again, writes the
 * time through a pipe and exits; the filters allow exactly what it needs
 * after the attach (close, write, exit_group, ...). Samples are
 * INTERLEAVED: every round takes one sample of each variant, in an order
 * rotated from round to round, so drift of the shared machine hits all
 * variants alike. Reported: p50/p90/p99 per variant and, for the
 * comparisons, the median over rounds of the per-round ratio (paired).
 *
 * The daemon is this bench's own: build/sfilterd (found beside this
 * binary's directory, ../sfilterd, or in the same directory, as /sf/ in
 * the guest; -d PATH overrides) started with --foreground --no-pin on a
 * socket in a fresh temporary directory, passed to sf_attach() through
 * SFILTER_SOCKET. It is stopped at the end, which unconfines nothing that
 * still lives (every child has exited).
 *
 * -p: the daemon pins, as the default sfilterd does (programs, maps and
 * links under a private --pin-dir in /sys/fs/bpf, the state file under
 * /run/<its basename>), which adds what pinning costs an attach; the pins
 * are torn down at the end with sfilterd --uninstall --pin-dir.
 *
 * Spans (unless -S): where each sf variant's time goes. Around every sf
 * sample, untimed, the bench reads the daemon's STATUS "attach_spans"
 * (docs/protocol.md) before and after: the difference is that one
 * attach's steps inside the daemon (validate, the runtime's validate_rt,
 * read, chain, dispatch, translate, verify, table, arm, apply, the
 * handoff to the verifier's thread, the reply, and the daemon's total).
 * After it, a probe connection of the bench's own, as sf_attach() makes
 * it, times the client's connect(2) and its wait for the daemon's hello
 * (then closes). What is left of the round trip, less the daemon's total
 * and the probe's two, is the client's send, its wake-ups and receive and
 * sf_attach()'s own work. Printed per variant: how many attaches a step
 * ran in, its median over those, its mean per attach and that mean's
 * share of the variant's p50. The STATUS reads lengthen the gaps between
 * samples, which the daemon's idle check may see (-S: a run as before).
 * sf_attach()'s own marks (loader/client/marks.h), which the child reads
 * after its attach and sends with its time, split the client's side: the
 * gate's preparation, the hellos, the gate's install, the listener's
 * hand-over, the caller's way to the ATTACH, and the ATTACH's round trip
 * (printed with -S too). A bench that starts beside other users' tracepoint
 * or LSM links says so first: its figures are not bare.
 *
 * Never asserts; prints Markdown and the goals: sf-16 loaded p50 <= 100 us,
 * sf-300 new p50 <= 1 ms (on a machine where seccomp-16 takes 24-37 us and
 * seccomp-300 about 0.5 ms; compare the ratios on a slower one); and the
 * goals of "attach as fast as seccomp(2)": each p50 at most 1.5 times
 * seccomp(2)'s (container start within 1.05 times: bench/container_start).
 *
 * Usage: attach_latency [-n SAMPLES_PER_VARIANT] [-d SFILTERD] [-p] [-S] [-v]   (root)
 */
#define _GNU_SOURCE
#include "sfclient.h"
#include "bench_util.h"
#include "client.h"
#include "marks.h"
#include "proto.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <poll.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#define NR_GETUID  102
#define MAX_SAMPLES 5000

/* ---- the filters ------------------------------------------------------------ */

/* 16 instructions: arch check, then the calls a sample child can make
 * once the filter is in force. sf_attach() needs two of them: the daemon
 * attaches BEFORE it replies, so the client's recv(2) of the reply
 * (recvfrom) is filtered whenever the client had not yet entered it, and
 * its close(2) of the socket always is; a filter without them kills the
 * caller (recvfrom: now and then, a race; close: every time). */
static struct sock_filter f16[] = {
	/* 0 */ BENCH_LD(4),
	/* 1 */ BENCH_JEQ(BENCH_AUDIT_ARCH_X86_64, 1, 0),
	/* 2 */ BENCH_RET(BENCH_RET_KILL),
	/* 3 */ BENCH_LD(0),
	/* 4 */ BENCH_JEQ(0 /* read */, 10, 0),
	/* 5 */ BENCH_JEQ(1 /* write */, 9, 0),
	/* 6 */ BENCH_JEQ(3 /* close: sf_attach's */, 8, 0),
	/* 7 */ BENCH_JEQ(231 /* exit_group */, 7, 0),
	/* 8 */ BENCH_JEQ(60 /* exit */, 6, 0),
	/* 9 */ BENCH_JEQ(228 /* clock_gettime */, 5, 0),
	/* 10 */ BENCH_JEQ(15 /* rt_sigreturn */, 4, 0),
	/* 11 */ BENCH_JEQ(BENCH_NR_GETPPID, 3, 0),
	/* 12 */ BENCH_JEQ(39 /* getpid */, 2, 0),
	/* 13 */ BENCH_JEQ(45 /* recvfrom: sf_attach's recv */, 1, 0),
	/* 14 */ BENCH_RET(BENCH_RET_KILL),
	/* 15 */ BENCH_RET(BENCH_RET_ALLOW),
};

/* The 300-rule allowlist; its getppid rule's constant K makes every "new"
 * filter distinct. */
static struct sock_filter f300[BENCH_F300_LEN];

/* ---- variants ------------------------------------------------------------------ */

enum { V_SF16, V_SF300_LOADED, V_SF300_NEW, V_K16, V_K300, V_COUNT };
static const char *const vnames[V_COUNT] = {
	"sf-16 loaded", "sf-300 loaded", "sf-300 new", "seccomp-16", "seccomp-300" };
static const char *const vdesc[V_COUNT] = {
	"sf_attach, 16 insns, daemon already has it (dedup)",
	"sf_attach, 300 rules (604 insns), daemon already has it (dedup)",
	"sf_attach, 300 rules, never seen: gated, a stand-in until its program is verified",
	"seccomp(2), 16 insns",
	"seccomp(2), 300 rules",
};

struct result {
	double us;
	int rc, err;
	char msg[200];
	long long marks[SF_MARK_COUNT], end_ns; /* sf_attach()'s own marks */
	long faults; /* page faults of the child's threads during the attach */
};

static double samples[V_COUNT][MAX_SAMPLES];
static double faults[V_COUNT][MAX_SAMPLES];
static int verbose;

/* /proc/self/stat as read from fd: its text, "" when unread. */
static void stat_read(int fd, char *buf, size_t size)
{
	ssize_t n = fd >= 0 ? read(fd, buf, size - 1) : -1;

	buf[n > 0 ? n : 0] = '\0';
}

/* The process's page faults (minflt + majflt, all its threads) in a
 * /proc/PID/stat text, or -1. */
static long stat_faults(const char *st)
{
	const char *p = strrchr(st, ')');
	long v[9];

	if (!p)
		return -1;
	/* After the name: state, ppid, pgrp, session, tty_nr, tpgid,
	 * flags, minflt, cminflt, majflt. */
	if (sscanf(p + 1, " %*c %ld %ld %ld %ld %ld %ld %ld %ld %ld", &v[0], &v[1], &v[2],
		   &v[3], &v[4], &v[5], &v[6], &v[7], &v[8]) != 9)
		return -1;
	return v[6] + v[8];
}

/* The child of one sample: never returns. probe: after attaching, make a
 * call the filter denies (getuid for the 16, getppid(K + 1) for the 300);
 * the parent then expects it to die by a signal. */
static void child_sample(int wfd, int v, uint32_t k, bool probe)
{
	struct sock_fprog p16 = { BENCH_ARRAY_SIZE(f16), f16 };
	struct sock_fprog p300 = { BENCH_F300_LEN, f300 };
	struct sock_fprog *p = v == V_SF16 || v == V_K16 ? &p16 : &p300;
	char st0[512], st1[512];
	struct result res;
	double t0, t1;
	int sfd0, sfd1;

	memset(&res, 0, sizeof(res));
	f300[BENCH_F300_K_INDEX].k = k; /* this child's copy */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		_exit(10);
	/* Both opened before: after the attach only read() is sure to be
	 * allowed (a seq file is made at its first read). */
	sfd0 = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	sfd1 = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	stat_read(sfd0, st0, sizeof(st0));
	t0 = bench_now_ns();
	if (v == V_K16 || v == V_K300)
		res.rc = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, p);
	else
		res.rc = sf_attach(p, 0);
	t1 = bench_now_ns();
	res.err = res.rc ? errno : 0;
	stat_read(sfd1, st1, sizeof(st1));
	res.faults = stat_faults(st0) >= 0 && stat_faults(st1) >= 0 ?
		     stat_faults(st1) - stat_faults(st0) : -1;
	res.us = (t1 - t0) / 1e3;
	memcpy(res.marks, sf_client_marks, sizeof(res.marks));
	res.end_ns = (long long)t1;
	if (res.rc && v != V_K16 && v != V_K300)
		snprintf(res.msg, sizeof(res.msg), "%s", sf_last_error());
	if (write(wfd, &res, sizeof(res)) != sizeof(res))
		_exit(11);
	if (probe && !res.rc) {
		if (p == &p16)
			syscall(NR_GETUID);
		else
			syscall(BENCH_NR_GETPPID, (long)k + 1);
		_exit(12); /* not killed: the filter is not in force */
	}
	_exit(0);
}

/* One sample of variant v; the time in us, or -1. *killed: the child died
 * by SIGSYS or SIGKILL (what probe expects: kernel seccomp kills with
 * SIGSYS, sfilter with SIGKILL, see the README's table). */
static struct result last;

static double sample(int v, uint32_t k, bool probe, bool *killed)
{
	struct result res;
	int fds[2], st;
	ssize_t n;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC))
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		close(fds[0]);
		child_sample(fds[1], v, k, probe);
	}
	close(fds[1]);
	n = read(fds[0], &res, sizeof(res));
	close(fds[0]);
	last = res;
	waitpid(pid, &st, 0);
	if (killed)
		*killed = WIFSIGNALED(st) &&
			  (WTERMSIG(st) == SIGSYS || WTERMSIG(st) == SIGKILL);
	if (n != sizeof(res)) {
		fprintf(stderr, "attach_latency: %s: child died (%s %d) before reporting\n",
			vnames[v], WIFSIGNALED(st) ? "signal" : "exit",
			WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		return -1;
	}
	if (res.rc) {
		fprintf(stderr, "attach_latency: %s: attach failed: %d, %s (%s)\n",
			vnames[v], res.rc, strerror(res.err), res.msg);
		return -1;
	}
	if (!probe && (!WIFEXITED(st) || WEXITSTATUS(st) != 0))
		fprintf(stderr, "attach_latency: %s: child ended badly (status 0x%x)\n",
			vnames[v], st);
	return res.us;
}

/* ---- the daemon ------------------------------------------------------------------ */

static struct bench_daemon dm = { .pid = -1 };

/* ---- spans ---------------------------------------------------------------------- */

#define MAX_STEPS 20
#define N_SF 3 /* the sf variants: V_SF16, V_SF300_LOADED, V_SF300_NEW */

/* STATUS's attach_spans, in the daemon's order: names[] as first read. */
static char step_names[MAX_STEPS][24];
static int n_steps;
struct spans { double n[MAX_STEPS], ns[MAX_STEPS]; };

/* Per sf variant and round: a step's us in that attach (0: it did not
 * run, -1: unknown), the probe's connect and hello. */
static double step_us[N_SF][MAX_STEPS][MAX_SAMPLES];
enum { C_CONNECT, C_HELLO, C_REST, C_BETWEEN, C_COUNT };
static double client_us[N_SF][C_COUNT][MAX_SAMPLES];
/* sf_attach()'s own marks (loader/client/marks.h): the time from each to
 * the next, the last one's to the end of the attach. */
static double mark_us[N_SF][SF_MARK_COUNT][MAX_SAMPLES];

static void note_marks(int v, int r, const struct result *res, bool ok)
{
	int i, j;

	for (i = 0; i < SF_MARK_COUNT; i++) {
		long long next = res->end_ns;

		mark_us[v][i][r] = -1;
		if (!ok || !res->marks[i])
			continue;
		for (j = i + 1; j < SF_MARK_COUNT; j++)
			if (res->marks[j]) {
				next = res->marks[j];
				break;
			}
		mark_us[v][i][r] = next >= res->marks[i] ? (next - res->marks[i]) / 1e3 : -1;
	}
}

/* STATUS over a connection of its own; attach_spans into *s. 0, or -1
 * (the daemon has no spans: an older one, or the bench not admin). */
static int read_spans(const char *sock, struct spans *s)
{
	static char buf[SF_PROTO_MAX_MSG + 8];
	struct sf_reply *r = (struct sf_reply *)buf;
	struct json_object *o = NULL, *a;
	struct sf_msg_hdr h;
	int fd = sf_proto_connect(sock, 20000, NULL, 0), i = 0, ret = -1;
	ssize_t n = -1;

	if (fd < 0)
		return -1;
	sf_proto_header(&h, SF_MSG_STATUS, sizeof(h), 1);
	if (sf_proto_send(fd, &(struct iovec){ &h, sizeof(h) }, 1, NULL, 0) == 0)
		n = recv(fd, buf, sizeof(buf), 0);
	close(fd);
	if (n <= 0 || sf_proto_check_reply(buf, n) != 0 || r->error ||
	    !(o = json_tokener_parse(r->text)) ||
	    !json_object_object_get_ex(o, "attach_spans", &a))
		goto out;
	json_object_object_foreach(a, name, step) {
		struct json_object *v;

		if (i == MAX_STEPS)
			break;
		if (!n_steps || i >= n_steps)
			snprintf(step_names[i], sizeof(step_names[i]), "%s", name);
		s->n[i] = json_object_object_get_ex(step, "n", &v) ? json_object_get_double(v) : 0;
		s->ns[i] = json_object_object_get_ex(step, "ns", &v) ? json_object_get_double(v) : 0;
		i++;
	}
	if (!n_steps)
		n_steps = i;
	ret = i == n_steps ? 0 : -1;
out:
	json_object_put(o);
	return ret;
}

/* A connection as sf_attach() makes it: connect(2), then the wait for the
 * daemon's hello, each in us; closed at once. 0 or -1. */
static int probe_connect(const char *sock, double *connect_us, double *hello_us)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	char m[SF_PROTO_MAX_NOTE_REPLY];
	struct pollfd p;
	double t0, t1;
	ssize_t n = -1;
	int fd;

	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", sock);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	t0 = bench_now_ns();
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0) {
		t1 = bench_now_ns();
		p = (struct pollfd){ .fd = fd, .events = POLLIN };
		if (poll(&p, 1, 20000) == 1)
			n = recv(fd, m, sizeof(m), 0);
		*connect_us = (t1 - t0) / 1e3;
		*hello_us = (bench_now_ns() - t1) / 1e3;
	}
	close(fd);
	return n == (ssize_t)sizeof(struct sf_hello) ? 0 : -1;
}

/* Sample r of sf variant v (total us, -1: failed) and the spans around it:
 * the steps' differences, the probe, and what is left of the whole. */
static void note_spans(int v, int r, double total, const struct spans *a,
		       const struct spans *b, bool have)
{
	double *c = NULL, dtotal = -1, steps = 0;
	int i;

	for (i = 0; i < n_steps; i++) {
		double d = have && total > 0 ? (b->ns[i] - a->ns[i]) / 1e3 : -1;

		/* 0 (not run) is left out of medians; a step that ran is never 0. */
		step_us[v][i][r] = d >= 0 && b->n[i] == a->n[i] ? 0 : d;
		if (!strcmp(step_names[i], "total"))
			dtotal = step_us[v][i][r];
		else if (step_us[v][i][r] > 0)
			steps += step_us[v][i][r];
	}
	for (i = 0; i < C_COUNT; i++)
		client_us[v][i][r] = -1;
	if (total <= 0 || probe_connect(dm.sock, &client_us[v][C_CONNECT][r],
					&client_us[v][C_HELLO][r]))
		return;
	if (dtotal <= 0)
		return;
	c = client_us[v][C_REST];
	/* Rare rounds where the probe took longer than the attach's own
	 * connection: kept as a tiny positive, not dropped. */
	c[r] = total - dtotal - client_us[v][C_CONNECT][r] - client_us[v][C_HELLO][r];
	if (c[r] <= 0)
		c[r] = 1e-3;
	client_us[v][C_BETWEEN][r] = dtotal - steps > 0 ? dtotal - steps : 1e-3;
}

/* Mean per attach over the rounds where it is known (0s count). */
static double mean_known(const double *x, int n)
{
	double sum = 0;
	int i, k = 0;

	for (i = 0; i < n; i++)
		if (x[i] >= 0) {
			sum += x[i];
			k++;
		}
	return k ? sum / k : -1;
}

/* Rounds in which it ran (> 0), of those known (>= 0). */
static void ran_in(const double *x, int n, int *ran, int *known)
{
	int i;

	*ran = *known = 0;
	for (i = 0; i < n; i++) {
		*known += x[i] >= 0;
		*ran += x[i] > 0;
	}
}

static void span_row(const char *name, const double *x, int n, double p50)
{
	double mean = mean_known(x, n);
	int ran, known;

	ran_in(x, n, &ran, &known);
	if (!known)
		return;
	printf("| %s | %d/%d | %.1f | %.1f | %.0f%% |\n", name, ran, known,
	       ran ? bench_median(x, n) : 0.0, mean, p50 > 0 ? 100 * mean / p50 : 0.0);
}

static void print_spans(int n)
{
	static const char *const cnames[C_COUNT] = {
		"client: connect (probe)", "client: wait for hello (probe)",
		"client: send, wake-ups, recv, sf_attach's own",
		"daemon: between its steps" };
	int v, i;

	for (v = 0; v < N_SF; v++) {
		double p50 = bench_pct(samples[v], n, 0.5);

		/* Means add up (to the mean round trip), medians do not. */
		printf("\n# spans of %s (p50 %.1f us, mean %.1f us): median over the attaches "
		       "a step ran in; mean per attach, and its share of p50\n\n", vnames[v],
		       p50, mean_known(samples[v], n));
		bench_md_head("step | ran in | median us | mean us | share of p50", -1);
		for (i = 0; i < C_BETWEEN; i++)
			span_row(cnames[i], client_us[v][i], n, p50);
		for (i = 0; i < n_steps; i++)
			if (strcmp(step_names[i], "total"))
				span_row(step_names[i], step_us[v][i], n, p50);
		span_row(cnames[C_BETWEEN], client_us[v][C_BETWEEN], n, p50);
		for (i = 0; i < n_steps; i++)
			if (!strcmp(step_names[i], "total"))
				span_row("daemon: total (request read to reply sent)",
					 step_us[v][i], n, p50);
	}
}

/* sf_attach()'s side, from its marks. */
static void print_marks(int n)
{
	static const char *const mnames[SF_MARK_COUNT] = {
		"checks; with a gate: copy, both connects, gate built, H started",
		"the hellos (without a gate: the connect and the daemon's hello)",
		"the gate's install (seccomp(2) with a listener)",
		"listener to the agent, its answer (the holder's keep)",
		"caller woken, listener closed, TSYNC",
		"to the ATTACH's send",
		"the ATTACH: send, the daemon, the reply",
	};
	int v, i;

	for (v = 0; v < N_SF; v++) {
		double p50 = bench_pct(samples[v], n, 0.5);

		printf("\n# %s as sf_attach() saw it: its marks (loader/client/marks.h), "
		       "from each to the next\n\n", vnames[v]);
		bench_md_head("from the mark | ran in | median us | mean us | share of p50", -1);
		for (i = 0; i < SF_MARK_COUNT; i++)
			span_row(mnames[i], mark_us[v][i], n, p50);
	}
}

/* Median over rounds of samples[x][r] / samples[y][r] (paired). */
static double paired(int x, int y, int n)
{
	return bench_paired_p50(samples[x], samples[y], n);
}

int main(int argc, char **argv)
{
	bool emulated = bench_emulated(), killed, spans = true;
	int n = emulated ? 30 : 200, opt, r, v, i, failures = 0;
	char tier[32];
	uint32_t next_k = 1000;
	struct utsname uts;
	int err;

	while ((opt = getopt(argc, argv, "n:d:pSv")) != -1) {
		switch (opt) {
		case 'n':
			n = atoi(optarg);
			break;
		case 'd':
			snprintf(dm.bin, sizeof(dm.bin), "%s", optarg);
			break;
		case 'p':
			/* bpffs refuses names with a dot. */
			snprintf(dm.pin_dir, sizeof(dm.pin_dir), "/sys/fs/bpf/sf-attach-bench-%d",
				 (int)getpid());
			break;
		case 'S':
			spans = false;
			break;
		case 'v':
			verbose = 1;
			break;
		default:
			fprintf(stderr, "usage: %s [-n SAMPLES] [-d SFILTERD] [-p] [-S] [-v]\n",
				argv[0]);
			return 2;
		}
	}
	if (n < 1 || n > MAX_SAMPLES) {
		fprintf(stderr, "attach_latency: samples 1..%d\n", MAX_SAMPLES);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* sf_attach()'s marks: off in a user's attach, whose filters may
	 * deny the clock's system call. */
	sf_client_marks_on = true;
	uname(&uts);
	bench_build_f300(f300);
	if (bench_daemon_find(&dm))
		return 1;
	bench_bare_check("attach_latency");
	err = bench_daemon_start(&dm, emulated ? 120 : 30);
	if (err) {
		fprintf(stderr, "attach_latency: start %s: %s (log in %s)\n", dm.bin,
			strerror(-err), dm.log);
		bench_daemon_stop(&dm);
		return 1;
	}

	/* Warm-up, not counted: loads the two "loaded" filters once (from a
	 * child that exits, so later children find them deduplicated), checks
	 * that each variant's filter really is in force (the denied call
	 * kills), and touches every code path once. */
	{
		const struct { int v; uint32_t k; bool probe; } warm[] = {
			{ V_SF16, 0, true }, { V_SF300_LOADED, 0, true },
			{ V_SF300_NEW, next_k++, true }, { V_K16, 0, true },
			{ V_K300, 0, true },
		};

		for (i = 0; i < (int)BENCH_ARRAY_SIZE(warm); i++) {
			if (sample(warm[i].v, warm[i].k, warm[i].probe, &killed) < 0) {
				bench_daemon_stop(&dm);
				return 1;
			}
			if (!killed) {
				fprintf(stderr, "attach_latency: %s: the denied call after the "
					"attach did not kill: filter not in force\n",
					vnames[warm[i].v]);
				bench_daemon_stop(&dm);
				return 1;
			}
		}
		printf("warm-up: every variant's filter kills its denied call\n");
	}
	if (spans) {
		struct spans s0;

		if (read_spans(dm.sock, &s0)) {
			fprintf(stderr, "attach_latency: the daemon's STATUS has no attach_spans: "
				"no spans\n");
			spans = false;
		}
	}

	for (r = 0; r < n; r++) {
		for (i = 0; i < V_COUNT; i++) {
			uint32_t k;

			struct spans a, b;
			bool have;

			v = (i + r) % V_COUNT;
			k = v == V_SF300_NEW || v == V_K300 ? next_k++ : 0;
			have = spans && v < N_SF && read_spans(dm.sock, &a) == 0;
			samples[v][r] = sample(v, k, false, NULL);
			faults[v][r] = samples[v][r] >= 0 ? (double)last.faults : -1;
			failures += samples[v][r] < 0;
			if (v < N_SF)
				note_marks(v, r, &last, samples[v][r] >= 0);
			if (spans && v < N_SF) {
				have = have && read_spans(dm.sock, &b) == 0;
				note_spans(v, r, samples[v][r], &a, &b, have);
			}
		}
		if (verbose) {
			printf("round %3d:", r);
			for (v = 0; v < V_COUNT; v++)
				printf(" %s %.1f", vnames[v], samples[v][r]);
			printf("\n");
		}
	}

	/* Read now: the daemon may log its tier after it starts listening. */
	bench_daemon_tier(&dm, tier, sizeof(tier));
	printf("\n# sf_attach round trip vs seccomp(2), kernel %s%s, daemon tier %s, %s, "
	       "%d samples per variant, interleaved\n", uts.release,
	       emulated ? BENCH_EMULATED_NOTE : "", tier,
	       dm.pin_dir[0] ? "pinned (--pin-dir, state file)" : "unpinned (--no-pin)", n);
	printf("\n");
	bench_md_head("variant | what | n | min us | p50 us | p90 us | p99 us | "
		      "page faults, p50", -1);
	for (v = 0; v < V_COUNT; v++)
		printf("| %s | %s | %d | %.1f | %.1f | %.1f | %.1f | %.0f |\n", vnames[v],
		       vdesc[v], bench_valid(samples[v], n), bench_pct(samples[v], n, 0),
		       bench_pct(samples[v], n, 0.5), bench_pct(samples[v], n, 0.9),
		       bench_pct(samples[v], n, 0.99), bench_pct(faults[v], n, 0.5));

	printf("\n");
	bench_md_head("comparison | median paired ratio | ratio of p50s", -1);
	{
		const struct { const char *name; int x, y; } cmp[] = {
			{ "sf-16 loaded / seccomp-16", V_SF16, V_K16 },
			{ "sf-300 loaded / seccomp-300", V_SF300_LOADED, V_K300 },
			{ "sf-300 new / seccomp-300", V_SF300_NEW, V_K300 },
			{ "sf-300 new / sf-300 loaded", V_SF300_NEW, V_SF300_LOADED },
			{ "sf-300 loaded / sf-16 loaded", V_SF300_LOADED, V_SF16 },
		};

		for (i = 0; i < (int)BENCH_ARRAY_SIZE(cmp); i++)
			printf("| %s | %.2f | %.2f |\n", cmp[i].name,
			       paired(cmp[i].x, cmp[i].y, n),
			       bench_pct(samples[cmp[i].x], n, 0.5) /
			       bench_pct(samples[cmp[i].y], n, 0.5));
	}

	{
		double a = bench_pct(samples[V_SF16], n, 0.5);
		double b = bench_pct(samples[V_SF300_NEW], n, 0.5);

		printf("\n");
		bench_md_head("goal | target | p50 | p99 |", -1);
		printf("| sf_attach, filter already loaded (sf-16 loaded) | p50 <= 100 us | "
		       "%.1f us | %.1f us | %s |\n", a, bench_pct(samples[V_SF16], n, 0.99),
		       bench_verdict(a, 100));
		printf("| sf_attach, new 300-rule filter (sf-300 new) | p50 <= 1000 us | "
		       "%.1f us | %.1f us | %s |\n", b,
		       bench_pct(samples[V_SF300_NEW], n, 0.99), bench_verdict(b, 1000));
	}
	{
		/* The goals of "attach as fast as seccomp(2)": ratios of p50s,
		 * which a slower machine leaves as they are. */
		double a = bench_pct(samples[V_SF16], n, 0.5) / bench_pct(samples[V_K16], n, 0.5);
		double b = bench_pct(samples[V_SF300_NEW], n, 0.5) /
			   bench_pct(samples[V_K300], n, 0.5);

		printf("\n");
		bench_md_head("goal (as fast as seccomp(2)) | target | p50 ratio | verdict", -1);
		printf("| filter already loaded, 16 insns (sf-16 loaded / seccomp-16) | <= 1.5 | "
		       "%.2f | %s |\n", a, bench_verdict(a, 1.5));
		printf("| new 300-rule filter (sf-300 new / seccomp-300) | <= 1.5 | %.2f | %s |\n",
		       b, bench_verdict(b, 1.5));
		printf("| container start with sfilter / without | <= 1.05 | - | "
		       "measured by bench/container_start |\n");
	}
	if (spans)
		print_spans(n);
	print_marks(n);
	if (failures)
		printf("\nwarning: %d samples failed (see stderr); they are left out\n",
		       failures);
	bench_daemon_stop(&dm);
	return 0;
}
