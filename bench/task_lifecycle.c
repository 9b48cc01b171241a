// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a confined task pays to be born and to exec: per operation, us, for
 *   fork+exit   fork(); the child _exit(0)s at once; the parent waitpid()s
 *   exec+exit   fork(); the child execs this (static) binary with
 *               --exit-now, which exits in main(); the parent waitpid()s
 * measured in four kinds of worker process:
 *   none        unconfined, nothing attached anywhere
 *   untracked   unconfined while the runtime is open (every syscall pays
 *               the sys_enter program; the task has no chain)
 *   sf          confined through the runtime, directly (sf_runtime_attach
 *               from this process, not through sfilterd): its children
 *               inherit the chain in the fork hook and keep it across exec
 *   seccomp     the same filter installed with seccomp(2)
 *
 * The filter allows what the workers and the exec'd binary need: x86_64
 * only, every syscall number 0..335 and clone3 (435) except ptrace (101),
 * KILL otherwise (9 insns). Its verdicts depend on nothing but the number,
 * so kernel seccomp's action cache and sfilter's action table both apply:
 * the figures are the lifecycle cost (copying, inheriting and freeing the
 * filter state), not the cost of running a filter.
 *
 * Like syscall_cost, each variant runs with exactly its own programs
 * attached: phase "bare" (none, seccomp), phase "runtime" (runtime opened
 * for the phase, closed after: untracked, sf). Phases alternate order
 * between rounds, and so do the two operations; every round measures every
 * variant (INTERLEAVED), so drift hits all alike. Each operation is timed
 * on its own in the worker; per variant the pooled median and p90 are
 * reported, and ratios are the median over rounds of the per-round ratio
 * of medians (paired).
 *
 * Never asserts; prints Markdown.
 *
 * Usage: task_lifecycle [-r ROUNDS] [-n OPS_PER_VARIANT_PER_ROUND] [-v] (root)
 */
#define _GNU_SOURCE
#include "runtime.h"
#include "bench_util.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_ROUNDS 64
#define MAX_OPS 1000
#define EXIT_ARG "--exit-now"
#define PROBE_ARG "--probe-ptrace" /* exec'd child: make the denied call */

static struct sock_filter filter[] = {
	/* 0 */ BENCH_LD(4),
	/* 1 */ BENCH_JEQ(BENCH_AUDIT_ARCH_X86_64, 1, 0),
	/* 2 */ BENCH_RET(BENCH_RET_KILL),
	/* 3 */ BENCH_LD(0),
	/* 4 */ BENCH_JEQ(101 /* ptrace */, 3, 0),
	/* 5 */ BENCH_JEQ(435 /* clone3 */, 1, 0),
	/* 6 */ BENCH_JUMP(BPF_JMP | BPF_JGE | BPF_K, 336, 1, 0),
	/* 7 */ BENCH_RET(BENCH_RET_ALLOW),
	/* 8 */ BENCH_RET(BENCH_RET_KILL),
};
static struct sock_fprog filter_prog = { BENCH_ARRAY_SIZE(filter), filter };

/* ---- workers ------------------------------------------------------------------ */

enum { OP_FORK, OP_EXEC, OP_COUNT, OP_PROBE = OP_COUNT };
static const char *const opnames[OP_COUNT] = { "fork+exit", "exec+exit" };

enum { W_PLAIN, W_SECCOMP, W_SF, W_COUNT };
static const char *const wnames[W_COUNT] = { "plain", "seccomp", "sf" };

static struct bench_worker workers[W_COUNT];

struct cmd {
	int op;
	int n; /* 0: exit */
};

/* One operation, us; -1 if the child did not exit 0. OP_PROBE: a child
 * that execs this binary to make the call the filter denies; 1 if it was
 * killed by a signal (the filter survived fork and exec), else 0. */
static double one_op(int op)
{
	double t0 = bench_now_ns(), t;
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (op == OP_EXEC || op == OP_PROBE)
			execl("/proc/self/exe", "task_lifecycle",
			      op == OP_EXEC ? EXIT_ARG : PROBE_ARG, (char *)NULL);
		_exit(op == OP_FORK ? 0 : 127);
	}
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	if (op == OP_PROBE)
		return WIFSIGNALED(st) ? 1 : 0;
	t = (bench_now_ns() - t0) / 1e3;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? t : -1;
}

/* arg: the struct sock_fprog to install with seccomp(2), or NULL. A request
 * is a struct cmd; the answer its n times, us, doubles. */
static void worker_loop(int cmd, int resp, const void *arg)
{
	static double t[MAX_OPS];
	struct cmd c;
	int i;

	/* Every worker has no_new_privs, so that only the filter differs. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		_exit(3);
	if (arg && syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, arg))
		_exit(3);
	for (;;) {
		if (read(cmd, &c, sizeof(c)) != sizeof(c) || c.n <= 0)
			_exit(0);
		for (i = 0; i < c.n; i++)
			t[i] = one_op(c.op);
		if (write(resp, t, c.n * sizeof(*t)) != (ssize_t)(c.n * sizeof(*t)))
			_exit(4);
	}
}

static int worker_start(int w, const struct sock_fprog *p)
{
	return bench_worker_start(&workers[w], "task_lifecycle", wnames[w], worker_loop, p);
}

/* n operations in worker w into out[0..n); -1 if the worker died. */
static int measure(struct bench_worker *w, int op, int n, double *out)
{
	struct cmd c = { op, n };

	return bench_worker_call(w, &c, sizeof(c), out, n * sizeof(*out)) ? -1 : 0;
}

/* ---- variants and results --------------------------------------------------------- */

enum { V_NONE, V_UNTRACKED, V_SF, V_SECCOMP, V_COUNT };
static const char *const vnames[V_COUNT] = { "none", "untracked", "sf", "seccomp" };

static double *pool[OP_COUNT][V_COUNT];   /* every op, rounds * n */
static double rmed[OP_COUNT][V_COUNT][MAX_ROUNDS]; /* per-round medians */
static int npool[OP_COUNT][V_COUNT];

static void record(int op, int v, int r, const double *t, int n)
{
	memcpy(pool[op][v] + npool[op][v], t, n * sizeof(*t));
	npool[op][v] += n;
	rmed[op][v][r] = bench_pct(t, n, 0.5);
}

static int run(int op, int v, int w, int r, int n)
{
	static double t[MAX_OPS];

	if (measure(&workers[w], op, n, t))
		return -1;
	record(op, v, r, t, n);
	return 0;
}

static void phase_bare(int r, int n, int op0)
{
	int k, op;

	for (k = 0; k < OP_COUNT; k++) {
		op = (op0 + k) % OP_COUNT;
		run(op, V_NONE, W_PLAIN, r, n);
		run(op, V_SECCOMP, W_SECCOMP, r, n);
	}
}

static double open_ms[MAX_ROUNDS];
static const char *tier_name = "?";
static bool probe_ok;

static int phase_runtime(int r, int n, int op0)
{
	struct sf_runtime_opts opts = { .verbose = false };
	struct sf_runtime *rt = NULL;
	double t0 = bench_now_ns();
	uint32_t id;
	int err, k, op;

	err = sf_runtime_open(&rt, &opts);
	if (err) {
		fprintf(stderr, "task_lifecycle: sf_runtime_open: %s\n", strerror(-err));
		return err;
	}
	open_ms[r] = (bench_now_ns() - t0) / 1e6;
	tier_name = sf_tier_name(sf_runtime_tier(rt));
	err = sf_runtime_attach(rt, workers[W_SF].pid, &filter_prog, 0, &id, NULL);
	if (err) {
		fprintf(stderr, "task_lifecycle: sf_runtime_attach: %d\n", err);
		sf_runtime_close(rt);
		return err;
	}
	if (r == 0) {
		/* The filter is in force in a forked and exec'd child of the sf
		 * worker (and of the seccomp worker), and nowhere else. */
		double k_sf = -1, k_sec = -1, k_plain = -1;

		measure(&workers[W_SF], OP_PROBE, 1, &k_sf);
		measure(&workers[W_SECCOMP], OP_PROBE, 1, &k_sec);
		measure(&workers[W_PLAIN], OP_PROBE, 1, &k_plain);
		probe_ok = k_sf == 1 && k_sec == 1 && k_plain == 0;
		if (!probe_ok)
			fprintf(stderr, "task_lifecycle: probe: denied call in an exec'd child "
				"killed: sf %.0f, seccomp %.0f, plain %.0f (want 1 1 0)\n",
				k_sf, k_sec, k_plain);
	}
	for (k = 0; k < OP_COUNT; k++) {
		op = (op0 + k) % OP_COUNT;
		run(op, V_UNTRACKED, W_PLAIN, r, n);
		run(op, V_SF, W_SF, r, n);
	}
	sf_runtime_close(rt);
	return 0;
}

/* Median over rounds of rmed[op][x][r] / rmed[op][y][r]. */
static double paired(int op, int x, int y, int rounds)
{
	return bench_paired_p50(rmed[op][x], rmed[op][y], rounds);
}

int main(int argc, char **argv)
{
	bool emulated = bench_emulated();
	int rounds = emulated ? 3 : 11, n, r, v, op, i;
	long ops = emulated ? 30 : 100;
	struct utsname uts;

	/* The exec'd child: exit before anything else. */
	if (argc == 2 && strcmp(argv[1], EXIT_ARG) == 0)
		_exit(0);
	if (argc == 2 && strcmp(argv[1], PROBE_ARG) == 0) {
		syscall(SYS_ptrace, -1L, 0L, 0L, 0L); /* EIO when not filtered */
		_exit(0);
	}
	if (bench_round_opts(argc, argv, "OPS", &rounds, &ops, NULL))
		return 2;
	if (rounds < 1 || rounds > MAX_ROUNDS || ops < 1 || ops > MAX_OPS) {
		fprintf(stderr, "task_lifecycle: rounds 1..%d, ops 1..%d\n", MAX_ROUNDS, MAX_OPS);
		return 2;
	}
	n = (int)ops;
	setvbuf(stdout, NULL, _IOLBF, 0);
	uname(&uts);
	bench_bare_check("task_lifecycle");
	for (op = 0; op < OP_COUNT; op++)
		for (v = 0; v < V_COUNT; v++)
			if (!(pool[op][v] = calloc((size_t)rounds * n, sizeof(double))))
				return 1;
	if (worker_start(W_PLAIN, NULL) || worker_start(W_SECCOMP, &filter_prog) ||
	    worker_start(W_SF, NULL)) {
		fprintf(stderr, "task_lifecycle: start workers: %s\n", strerror(errno));
		return 1;
	}

	/* Warm-up, not counted. */
	phase_bare(0, n / 4 + 1, 0);
	memset(npool, 0, sizeof(npool));
	for (r = 0; r < rounds; r++) {
		if (r & 1) {
			if (phase_runtime(r, n, (r >> 1) & 1))
				break;
			phase_bare(r, n, (r >> 1) & 1);
		} else {
			phase_bare(r, n, (r >> 1) & 1);
			if (phase_runtime(r, n, (r >> 1) & 1))
				break;
		}
	}
	rounds = r;
	printf("# task lifecycle, kernel %s%s, runtime tier %s (direct runtime API), "
	       "%d rounds x %d ops per variant, interleaved\n", uts.release,
	       emulated ? BENCH_EMULATED_NOTE : "", tier_name, rounds, n);

	printf("\n");
	bench_md_head("op | variant | n | median us | p90 us | p99 us | median vs none (paired)", -1);
	for (op = 0; op < OP_COUNT; op++)
		for (v = 0; v < V_COUNT; v++)
			printf("| %s | %s | %d | %.1f | %.1f | %.1f | %.3f |\n", opnames[op],
			       vnames[v], npool[op][v], bench_pct(pool[op][v], npool[op][v], 0.5),
			       bench_pct(pool[op][v], npool[op][v], 0.9),
			       bench_pct(pool[op][v], npool[op][v], 0.99),
			       paired(op, v, V_NONE, rounds));

	printf("\n");
	bench_md_head("ratio (median of per-round ratios of medians) | fork+exit | exec+exit", -1);
	{
		const struct { const char *name; int x, y; } q[] = {
			{ "sf / none", V_SF, V_NONE },
			{ "sf / untracked", V_SF, V_UNTRACKED },
			{ "seccomp / none", V_SECCOMP, V_NONE },
			{ "sf / seccomp", V_SF, V_SECCOMP },
			{ "untracked / none", V_UNTRACKED, V_NONE },
		};

		for (i = 0; i < (int)BENCH_ARRAY_SIZE(q); i++)
			printf("| %s | %.3f | %.3f |\n", q[i].name,
			       paired(OP_FORK, q[i].x, q[i].y, rounds),
			       paired(OP_EXEC, q[i].x, q[i].y, rounds));
	}
	printf("\nruntime open %.0f ms median; probe (denied call in a forked+exec'd "
	       "child kills under sf and seccomp, not unconfined): %s\n",
	       bench_pct(open_ms, rounds, 0.5), probe_ok ? "ok" : "FAILED");
	for (op = 0, r = 0; op < OP_COUNT; op++)
		for (v = 0; v < V_COUNT; v++)
			for (i = 0; i < npool[op][v]; i++)
				r += pool[op][v][i] < 0;
	if (r)
		printf("warning: %d operations failed (child did not exit 0); left out\n", r);
	for (i = 0; i < W_COUNT; i++) {
		struct cmd c = { 0, 0 };

		bench_worker_stop(&workers[i], &c, sizeof(c));
	}
	return 0;
}
