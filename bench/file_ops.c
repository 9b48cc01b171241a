// SPDX-License-Identifier: GPL-2.0-only
/*
 * What file operations cost under sfilter, where the lsm tier adds its own
 * programs on the security hooks (file_open, file_permission on every read
 * and write, inode_create, inode_unlink, ...) to the syscall path: ns per
 * iteration of
 *   open-read   open a 64-byte file in a fresh directory under /tmp, read
 *               1 byte, close it
 *   creat-unlink  creat a file there, close it, unlink it
 * for
 *   none        the runtime closed: nothing attached
 *   seccomp     Podman's default profile (bench_podman_profile()) installed
 *               with seccomp(2)
 *   idle        the runtime open, nothing confined (yet, or any more: the
 *               filters detached): the dispatcher and the LSM programs
 *               (lsm tier) are detached
 *   untracked   an unconfined task while others are confined: dispatcher
 *               and LSM programs attached
 *   sf-allow    a task confined by a one-instruction ALLOW filter: the
 *               tracked path with a filter the action table answers
 *   sf-profile  a task confined by the same profile through the runtime
 *
 * Like syscall_cost: every figure comes from a worker process (a fork of
 * this one) that runs the iterations when told and answers with the best
 * of 10 batches; phase "bare" (none, seccomp) and phase "runtime" (opened
 * for the phase, closed after: the two sfilter workers get their filters,
 * untracked, sf-allow and sf-profile are measured in an order that rotates
 * with the round, and idle before the attaches or after the detaches,
 * alternating) alternate order between rounds, and every round measures
 * every variant for both operations (INTERLEAVED). Reported: best and
 * median ns, and the median over rounds of the per-round ratio to none
 * (paired). Under emulation (the Debian 6.1 guest, where the lsm tier
 * runs) absolute times mean little; ratios do.
 * Raw/BTF tracepoint links seen in the bare phase are another user's: they
 * would taint none and seccomp, and such a round is not counted (with a
 * warning; unless every round saw them: then all count, tainted).
 *
 * Never asserts; prints Markdown.
 *
 * Usage: file_ops [-r ROUNDS] [-n ITERATIONS_PER_VARIANT_PER_ROUND] [-v] (root)
 */
#define _GNU_SOURCE
#include "runtime.h"
#include "bench_util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#define MAX_ROUNDS 64
#define BATCHES 10 /* per measurement; the best one counts */

enum { OP_OPEN_READ, OP_CREAT_UNLINK, OP_COUNT };
static const char *const opnames[OP_COUNT] = { "open-read", "creat-unlink" };
static const char *const opdesc[OP_COUNT] = {
	"open a 64-byte file, read 1 byte, close",
	"creat a file in /tmp, close, unlink",
};

static struct sock_filter allow_all[] = { BENCH_RET(BENCH_RET_ALLOW) };
static struct sock_fprog p_allow = { 1, allow_all };
static struct sock_fprog p_profile; /* the same instructions for both ways */
static char dir[64] = "/tmp/sf-file-ops.XXXXXX", small[96];

/* ---- workers ------------------------------------------------------------------ */

enum { W_PLAIN, W_KPROF, W_SALLOW, W_SPROF, W_COUNT };
static const char *const worker_names[W_COUNT] = { "plain", "seccomp", "sf-allow",
						   "sf-profile" };
static struct bench_worker workers[W_COUNT];

struct request {
	int op; /* < 0: exit */
	long n;
};

/* One iteration of op; false if it failed. created: this worker's own file. */
static bool one(int op, const char *created)
{
	char c;
	int fd;

	if (op == OP_OPEN_READ) {
		fd = open(small, O_RDONLY);
		if (fd < 0)
			return false;
		if (read(fd, &c, 1) != 1) {
			close(fd);
			return false;
		}
		return close(fd) == 0;
	}
	fd = creat(created, 0600);
	if (fd < 0)
		return false;
	close(fd);
	return unlink(created) == 0;
}

/* arg: the struct sock_fprog to install with seccomp(2), or NULL. The
 * answer: the best ns per iteration over BATCHES batches, -1 if an
 * iteration failed. */
static void worker_loop(int cmd, int resp, const void *arg)
{
	const struct sock_fprog *p = arg;
	char created[128];
	struct request q;
	double t0, ns, best;
	long per, b, i;

	snprintf(created, sizeof(created), "%s/c-%d", dir, (int)getpid());
	if (p && (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		  syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, p)))
		_exit(3);
	for (;;) {
		if (read(cmd, &q, sizeof(q)) != sizeof(q) || q.op < 0)
			_exit(0);
		best = -1;
		per = q.n / BATCHES > 0 ? q.n / BATCHES : 1;
		for (b = 0; b < BATCHES; b++) {
			t0 = bench_now_ns();
			for (i = 0; i < per && one(q.op, created); i++)
				;
			if (i < per) {
				best = -1;
				break;
			}
			ns = (bench_now_ns() - t0) / per;
			if (best < 0 || ns < best)
				best = ns;
		}
		if (write(resp, &best, sizeof(best)) != sizeof(best))
			_exit(4);
	}
}

/* ns per iteration of op over n in worker w, or -1. */
static double measure(int w, int op, long n)
{
	struct request q = { op, n };
	double ns;

	return bench_worker_call(&workers[w], &q, sizeof(q), &ns, sizeof(ns)) ? -1 : ns;
}

/* ---- the variants ------------------------------------------------------------- */

enum { V_NONE, V_SECCOMP, V_IDLE, V_UNTRACKED, V_SFALLOW, V_SFPROF, V_COUNT };
static const char *const vnames[V_COUNT] = {
	"none", "seccomp", "idle", "untracked", "sf-allow", "sf-profile" };
static const char *const vdesc[V_COUNT] = {
	"runtime closed",
	"default profile, kernel seccomp",
	"runtime open, nothing confined",
	"unconfined task, others confined",
	"ALLOW-all filter, sfilter",
	"default profile, sfilter",
};

static double res[OP_COUNT][V_COUNT][MAX_ROUNDS];
static double open_ms[MAX_ROUNDS];
static int foreign[MAX_ROUNDS];
static int verbose;

/* Measures variant v in worker w for both operations, their order
 * alternating with the round. */
static void both_ops(int r, int v, int w, long n)
{
	int i, op;

	for (i = 0; i < OP_COUNT; i++) {
		op = r & 1 ? OP_COUNT - 1 - i : i;
		res[op][v][r] = measure(w, op, n);
	}
}

static void phase_bare(int r, long n)
{
	foreign[r] = bench_links(BENCH_LINK_TP, NULL, 0);
	both_ops(r, V_NONE, W_PLAIN, n);
	both_ops(r, V_SECCOMP, W_KPROF, n);
}

/* Nothing confined: before the attaches, or after the filters are
 * detached again and the dispatcher with them (it goes once no task has a
 * chain), as a daemon's runtime idles. */
static int idle_after(struct sf_runtime *rt, int r, long n, const uint32_t id[2])
{
	int err = sf_runtime_detach(rt, id[0]);

	if (!err)
		err = sf_runtime_detach(rt, id[1]);
	if (!err)
		err = sf_runtime_idle_check(rt) < 0 ? -EIO : 0;
	if (err || sf_runtime_dispatch_link_id(rt)) {
		fprintf(stderr, "file_ops: detach: %d; dispatcher link %d\n", err,
			sf_runtime_dispatch_link_id(rt));
		return err ? err : -EBUSY;
	}
	both_ops(r, V_IDLE, W_PLAIN, n);
	return 0;
}

/* idle, and untracked, sf-allow, sf-profile in an order that rotates with
 * the round; idle comes first or last, alternating every two rounds. */
static int phase_runtime(int r, long n)
{
	static const int conf[3][2] = { { V_UNTRACKED, W_PLAIN }, { V_SFALLOW, W_SALLOW },
					{ V_SFPROF, W_SPROF } };
	struct sf_runtime_opts opts = { .verbose = false };
	struct sf_runtime *rt = NULL;
	double t0 = bench_now_ns();
	bool idle_first = !(r & 2);
	int err, i, lsm_idle = bench_links(BENCH_LINK_LSM, NULL, 0);
	uint32_t id[2];

	err = sf_runtime_open(&rt, &opts);
	if (err) {
		fprintf(stderr, "file_ops: sf_runtime_open: %s\n", strerror(-err));
		return err;
	}
	open_ms[r] = (bench_now_ns() - t0) / 1e6;
	if (idle_first)
		both_ops(r, V_IDLE, W_PLAIN, n);
	err = sf_runtime_attach(rt, workers[W_SALLOW].pid, &p_allow, 0, &id[0], NULL);
	if (!err)
		err = sf_runtime_attach(rt, workers[W_SPROF].pid, &p_profile, 0, &id[1], NULL);
	if (err) {
		fprintf(stderr, "file_ops: sf_runtime_attach: %d (%s)\n", err,
			strerror(err < 0 ? -err : 0));
		sf_runtime_close(rt);
		return err;
	}
	if (r == 0)
		printf("runtime tier: %s%s%s; LSM links while idle: %d, while some task "
		       "is confined: %d; dispatcher link %d\n",
		       sf_tier_name(sf_runtime_tier(rt)), *sf_runtime_tier_reason(rt) ? ": " : "",
		       sf_runtime_tier_reason(rt), lsm_idle, bench_links(BENCH_LINK_LSM, NULL, 0),
		       sf_runtime_dispatch_link_id(rt));
	for (i = 0; i < 3; i++)
		both_ops(r, conf[(r + i) % 3][0], conf[(r + i) % 3][1], n);
	if (!idle_first)
		err = idle_after(rt, r, n, id);
	sf_runtime_close(rt);
	return err;
}

/* ---- report --------------------------------------------------------------------- */

static void report(int rounds)
{
	int op, v;
	int dropped = bench_drop_rounds(foreign, rounds, &res[0][0][0], OP_COUNT * V_COUNT,
					MAX_ROUNDS);

	for (op = 0; op < OP_COUNT; op++) {
		printf("\n### %s: %s\n\n", opnames[op], opdesc[op]);
		bench_md_head("variant | what | best ns | median ns | median vs none", 2);
		for (v = 0; v < V_COUNT; v++)
			printf("| %s | %s | %.0f | %.0f | %.3f |\n", vnames[v], vdesc[v],
			       bench_best(res[op][v], rounds), bench_median(res[op][v], rounds),
			       bench_paired_median(res[op][v], res[op][V_NONE], rounds));
	}
	printf("\n");
	bench_md_head("operation | idle / none | untracked / none | sf-allow / none | "
		      "sf-profile / none | sf-profile / seccomp", 1);
	for (op = 0; op < OP_COUNT; op++)
		printf("| %s | %.3f | %.3f | %.3f | %.3f | %.3f |\n", opnames[op],
		       bench_paired_median(res[op][V_IDLE], res[op][V_NONE], rounds),
		       bench_paired_median(res[op][V_UNTRACKED], res[op][V_NONE], rounds),
		       bench_paired_median(res[op][V_SFALLOW], res[op][V_NONE], rounds),
		       bench_paired_median(res[op][V_SFPROF], res[op][V_NONE], rounds),
		       bench_paired_median(res[op][V_SFPROF], res[op][V_SECCOMP], rounds));
	printf("\n(median paired ratios over %d rounds; runtime open %.0f ms median)\n",
	       rounds - dropped, bench_median(open_ms, rounds));
	bench_taint_warning(foreign, rounds, dropped, "none and seccomp");
}

static void round_line(int r)
{
	int op, v;

	printf("round %2d:", r);
	for (op = 0; op < OP_COUNT; op++)
		for (v = 0; v < V_COUNT; v++)
			printf(" %s/%s %.0f", opnames[op], vnames[v], res[op][v][r]);
	printf(" (open %.0f ms, foreign links %d)\n", open_ms[r], foreign[r]);
}

static int setup(void)
{
	int fd, w;

	if (!mkdtemp(dir)) {
		fprintf(stderr, "file_ops: mkdtemp %s: %s\n", dir, strerror(errno));
		return -errno;
	}
	snprintf(small, sizeof(small), "%s/small", dir);
	fd = open(small, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, "0123456789abcdef0123456789abcdef0123456789abcdef"
			    "0123456789abcdef", 64) != 64) {
		fprintf(stderr, "file_ops: %s: %s\n", small, strerror(errno));
		return -EIO;
	}
	close(fd);
	for (w = 0; w < W_COUNT; w++)
		if (bench_worker_start(&workers[w], "file_ops", worker_names[w], worker_loop,
				       w == W_KPROF ? &p_profile : NULL)) {
			fprintf(stderr, "file_ops: start workers: %s\n", strerror(errno));
			return -errno;
		}
	return 0;
}

static void teardown(void)
{
	struct request stop = { -1, 0 };
	int w;

	for (w = 0; w < W_COUNT; w++)
		bench_worker_stop(&workers[w], &stop, sizeof(stop));
	unlink(small);
	rmdir(dir);
}

int main(int argc, char **argv)
{
	bool emulated = bench_emulated();
	int rounds = emulated ? 7 : 11, r;
	long n = emulated ? 4000 : 20000;
	struct sf_profile p;
	struct utsname uts;

	if (bench_round_opts(argc, argv, "ITERATIONS", &rounds, &n, &verbose))
		return 2;
	if (rounds < 1 || rounds > MAX_ROUNDS || n < 1) {
		fprintf(stderr, "file_ops: rounds 1..%d, iterations >= 1\n", MAX_ROUNDS);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	uname(&uts);
	if (bench_podman_profile("file_ops", &p))
		return 1;
	p_profile = (struct sock_fprog){ (unsigned short)p.len, p.insns };
	if (setup())
		return 1;

	printf("# File operations, kernel %s%s, %d rounds x %ld iterations per variant\n",
	       uts.release, emulated ? BENCH_EMULATED_NOTE : "", rounds, n);
	printf("profile: %s for caps %s: %zu insns\n", BENCH_PODMAN_PROFILE, BENCH_PODMAN_CAPS,
	       p.len);
	/* A warm-up, not counted. */
	phase_bare(0, n / 4 + 1);
	for (r = 0; r < rounds; r++) {
		if (r & 1) {
			if (phase_runtime(r, n))
				break;
			phase_bare(r, n);
		} else {
			phase_bare(r, n);
			if (phase_runtime(r, n))
				break;
		}
		if (verbose)
			round_line(r);
	}
	report(r);
	teardown();
	sf_profile_free(&p);
	return 0;
}
