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
 * Never asserts; prints Markdown and the goals: sf-16 loaded p50 <= 100 us,
 * sf-300 new p50 <= 1 ms (on a machine where seccomp-16 takes 24-37 us and
 * seccomp-300 about 0.5 ms; compare the ratios on a slower one).
 *
 * Usage: attach_latency [-n SAMPLES_PER_VARIANT] [-d SFILTERD] [-p] [-v]   (root)
 */
#define _GNU_SOURCE
#include "sfclient.h"
#include "bench_util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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
	"sf_attach, 300 rules, never seen: translate + verify + load",
	"seccomp(2), 16 insns",
	"seccomp(2), 300 rules",
};

struct result {
	double us;
	int rc, err;
	char msg[200];
};

static double samples[V_COUNT][MAX_SAMPLES];
static int verbose;

/* The child of one sample: never returns. probe: after attaching, make a
 * call the filter denies (getuid for the 16, getppid(K + 1) for the 300);
 * the parent then expects it to die by a signal. */
static void child_sample(int wfd, int v, uint32_t k, bool probe)
{
	struct sock_fprog p16 = { BENCH_ARRAY_SIZE(f16), f16 };
	struct sock_fprog p300 = { BENCH_F300_LEN, f300 };
	struct sock_fprog *p = v == V_SF16 || v == V_K16 ? &p16 : &p300;
	struct result res;
	double t0, t1;

	memset(&res, 0, sizeof(res));
	f300[BENCH_F300_K_INDEX].k = k; /* this child's copy */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		_exit(10);
	t0 = bench_now_ns();
	if (v == V_K16 || v == V_K300)
		res.rc = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, p);
	else
		res.rc = sf_attach(p, 0);
	t1 = bench_now_ns();
	res.err = res.rc ? errno : 0;
	res.us = (t1 - t0) / 1e3;
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

/* Median over rounds of samples[x][r] / samples[y][r] (paired). */
static double paired(int x, int y, int n)
{
	return bench_paired_p50(samples[x], samples[y], n);
}

int main(int argc, char **argv)
{
	bool emulated = bench_emulated(), killed;
	int n = emulated ? 30 : 200, opt, r, v, i, failures = 0;
	char tier[32];
	uint32_t next_k = 1000;
	struct utsname uts;
	int err;

	while ((opt = getopt(argc, argv, "n:d:pv")) != -1) {
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
		case 'v':
			verbose = 1;
			break;
		default:
			fprintf(stderr, "usage: %s [-n SAMPLES] [-d SFILTERD] [-p] [-v]\n",
				argv[0]);
			return 2;
		}
	}
	if (n < 1 || n > MAX_SAMPLES) {
		fprintf(stderr, "attach_latency: samples 1..%d\n", MAX_SAMPLES);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	uname(&uts);
	bench_build_f300(f300);
	if (bench_daemon_find(&dm))
		return 1;
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

	for (r = 0; r < n; r++) {
		for (i = 0; i < V_COUNT; i++) {
			uint32_t k;

			v = (i + r) % V_COUNT;
			k = v == V_SF300_NEW || v == V_K300 ? next_k++ : 0;
			samples[v][r] = sample(v, k, false, NULL);
			failures += samples[v][r] < 0;
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
	bench_md_head("variant | what | n | min us | p50 us | p90 us | p99 us", -1);
	for (v = 0; v < V_COUNT; v++)
		printf("| %s | %s | %d | %.1f | %.1f | %.1f | %.1f |\n", vnames[v], vdesc[v],
		       bench_valid(samples[v], n), bench_pct(samples[v], n, 0),
		       bench_pct(samples[v], n, 0.5), bench_pct(samples[v], n, 0.9),
		       bench_pct(samples[v], n, 0.99));

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
	if (failures)
		printf("\nwarning: %d samples failed (see stderr); they are left out\n",
		       failures);
	bench_daemon_stop(&dm);
	return 0;
}
