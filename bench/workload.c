// SPDX-License-Identifier: GPL-2.0-only
/*
 * What real syscall-heavy programs take, in wall time, under Podman's
 * default container profile (bench_podman_profile(): Debian's
 * /usr/share/containers/seccomp.json compiled by libsfprofile for Podman's
 * default capabilities), or Docker's (argument "docker": BENCH_DOCKER_PROFILE
 * for Docker's default capabilities), ms per run, for
 *   none     the program as it is
 *   seccomp  the profile installed with seccomp(2) in the child, before
 *            its execve
 *   sfilter  the very same instructions through the runtime: the child is
 *            given them with sf_runtime_attach(SF_ATTACH_AT_EXEC) while it
 *            waits, and they judge from its execve on
 *   floor    no filter, but the empty tp_btf/sys_enter program
 *            (bpf/bench_floor.bpf.c) attached for the run: what any
 *            sys_enter program costs every task, and so the least sfilter
 *            can cost; sfilter / floor is sfilter's own share
 *   gate     sfilter as a gated task has it (docs/protocol.md, "The gate
 *            and the agent socket"): the child installs the gate for the
 *            same instructions (gatehand_install(): c2e_gate_build(),
 *            seccomp(2) with NEW_LISTENER) before it waits and hands the
 *            listener to this bench's own agent socket (bench_agent),
 *            whose thread answers any notification with the runtime's
 *            judge (sf_runtime_judge()), as sfilterd would; the chain is
 *            attached at exec as for sfilter. The workloads make no call
 *            the profile denies, so nothing should be notified: the
 *            figure is what the gate adds to allowed calls. Goal:
 *            gate / sfilter <= 1.05.
 *
 * Two workloads, one realistic and one the worst case:
 *   tar  `tar cf - DIR` (DIR /usr/include; under emulation, or where it is
 *        missing, /usr/share or /usr), its archive read back and counted
 *        by this process through a pipe: a real program's mix of openat,
 *        fstat, getdents64, read and write over thousands of files, with
 *        much of its time spent copying data. Not `tar cf /dev/null`: GNU
 *        tar sees that its archive is /dev/null and then reads no file at
 *        all. (`find /usr -xdev` would add little: its calls are tar's
 *        walk without the reads.)
 *   dd   `dd if=/dev/zero of=/dev/null bs=1 count=N`: two one-byte calls
 *        per byte and nothing else, where a per-call cost weighs most.
 *
 * Both children, for every variant, are forked first, wait on a pipe,
 * and are timed from their release to their reap: the filter's
 * installation (seccomp(2) before the wait, sf_runtime_attach() during
 * it) is not in the figures. The profile's default action and its denials
 * are ERRNO, which the tracepoint tier carries out as a kill: a workload
 * must make no call the profile denies. Before the rounds each workload
 * runs once per variant (which also warms the page cache) and its exit
 * status and output size are compared with none's; a run that differs,
 * there or in a round, is a failed sample and a warning names it.
 *
 * The runtime is opened once for the whole bench (but see -c). Its
 * sys_enter dispatcher is attached with the first chain and detached once
 * no task has one, so none and seccomp run after sf_runtime_idle_check()
 * with the dispatcher detached (each sfilter child has been reaped by then); the
 * bench counts the runs where it was not. What the runtime keeps attached
 * while idle is listed at the start; raw/BTF tracepoint links that are
 * neither the runtime's nor the dispatcher are another user's (they would
 * slow none and seccomp and flatter sfilter): a round in which any was
 * seen is not counted, with a warning (unless every round saw them: then
 * all count, and the warning says they are tainted).
 *
 * Every round runs every variant once for each workload, INTERLEAVED:
 * workload order alternates between rounds and variant order rotates.
 * Per workload: best and median ms per variant, and the median over
 * rounds of the per-round ratios (paired). Goal: sfilter / seccomp <= 1.03.
 *
 * -c adds, in a phase of each round (first or last, alternating) with the
 * runtime closed and then opened again,
 *   bare          none with nothing of sfilter attached
 *   bare-seccomp  seccomp likewise
 * because "idle" is not "nothing" everywhere: where the kernel refuses
 * fexit programs the runtime keeps a tp_btf/sys_exit program attached for
 * as long as it is open (it decides sf_attach()'s arm at the reply), and
 * that alone puts every task on the syscall slow path.
 *
 * Never asserts; prints Markdown.
 *
 * Usage: workload [-r ROUNDS] [-n DD_BYTES] [-v] [-c] [podman|docker[:FILE]]
 * (root; FILE: the profile's file instead of the usual one)
 */
#define _GNU_SOURCE
#include "runtime.h"
#include "bench_util.h"
#include "bench_floor.skel.h"
#include "c2e.h"
#include "gatehand.h"

#include <bpf/bpf.h>
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
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_ROUNDS 64
#define MAX_OWN 32 /* tracepoint links of the runtime itself */
#define GOAL 1.03
#define GOAL_GATE 1.05 /* gate / sfilter */

/* The first V_OPEN run with the runtime open; the others only with -c. */
enum { V_NONE, V_SECCOMP, V_SFILTER, V_FLOOR, V_GATE, V_BARE, V_BSECCOMP, V_COUNT };
#define V_OPEN 5
static const char *const vnames[V_COUNT] = { "none", "seccomp", "sfilter", "floor", "gate",
					     "bare", "bare-seccomp" };

struct workload {
	const char *name;
	char *argv[8];
	char cmd[160];   /* as printed */
	double calls;    /* system calls per run, where known (dd); 0 otherwise */
	long long bytes; /* none's output size, the reference */
	int status;      /* none's wait status, the reference */
};

enum { W_TAR, W_DD, W_COUNT };
static struct workload wl[W_COUNT];

static struct sf_runtime *rt;
static struct bench_floor_bpf *floor_skel;
static struct sock_fprog prog; /* the profile: one copy for both ways */
static int devnull = -1;
static double res[W_COUNT][V_COUNT][MAX_ROUNDS];
static int mismatch[W_COUNT][V_COUNT]; /* runs whose status or output differed */
static int foreign[MAX_ROUNDS], dispatch_left[MAX_ROUNDS];
static uint32_t own[MAX_OWN];
static int n_own, verbose, closed, nv = V_OPEN, idle_runs;
/* The gate's listeners: held and judged here. */
static struct bench_agent agent = { .fd = -1 };
static char agent_dir[] = "/tmp/sf-bench-gate.XXXXXX";
static unsigned long gate_denied;

/* ---- the workloads ------------------------------------------------------------ */

static const char *first_existing(const char *const *paths)
{
	struct stat st;

	for (; *paths; paths++)
		if (!stat(*paths, &st))
			return *paths;
	return NULL;
}

static int workloads_init(long dd_bytes, bool emulated)
{
	static const char *const tars[] = { "/usr/bin/tar", "/bin/tar", NULL };
	static const char *const dds[] = { "/usr/bin/dd", "/bin/dd", NULL };
	static const char *const dirs[] = { "/usr/include", "/usr/share", "/usr", NULL };
	static char count[32];
	const char *tar = first_existing(tars), *dd = first_existing(dds);
	const char *dir = first_existing(emulated ? dirs + 1 : dirs);

	if (!tar || !dd || !dir) {
		fprintf(stderr, "workload: no %s\n", !tar ? "tar" : !dd ? "dd" : "/usr");
		return -ENOENT;
	}
	snprintf(count, sizeof(count), "count=%ld", dd_bytes);
	wl[W_TAR] = (struct workload){ .name = "tar",
				       .argv = { (char *)tar, "cf", "-", (char *)dir, NULL } };
	snprintf(wl[W_TAR].cmd, sizeof(wl[W_TAR].cmd), "%s cf - %s | (this bench)", tar, dir);
	wl[W_DD] = (struct workload){ .name = "dd",
				      .argv = { (char *)dd, "if=/dev/zero", "of=/dev/null",
						"bs=1", count, NULL } };
	snprintf(wl[W_DD].cmd, sizeof(wl[W_DD].cmd),
		 "%s if=/dev/zero of=/dev/null bs=1 %s", dd, count);
	wl[W_DD].calls = 2.0 * dd_bytes;
	return 0;
}

/* A forked workload that waits for a byte on go before its execve; its
 * stdout is out, its stdin and stderr /dev/null. */
struct kid {
	pid_t pid;
	int go, out;
};

static void kid_exec(const struct workload *w, int go, int out, const struct sock_fprog *k,
		     bool gate)
{
	char c, msg[256];

	if (dup2(devnull, 0) < 0 || dup2(out, 1) < 0 || dup2(devnull, 2) < 0)
		_exit(124);
	/* Every variant sets no_new_privs, which seccomp(2) wants. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		_exit(125);
	if (k && syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, k))
		_exit(126);
	if (gate && gatehand_install(&prog, 1, agent.path, msg, sizeof(msg)))
		_exit(122);
	if (read(go, &c, 1) != 1)
		_exit(123);
	execv(w->argv[0], w->argv);
	_exit(127);
}

static int kid_start(struct kid *k, const struct workload *w, const struct sock_fprog *kfilter,
		     bool gate)
{
	int go[2], out[2], err;

	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(out, O_CLOEXEC)) {
		err = -errno;
		close(go[0]);
		close(go[1]);
		return err;
	}
	fflush(stdout);
	k->pid = fork();
	if (k->pid == 0)
		kid_exec(w, go[0], out[1], kfilter, gate);
	err = k->pid < 0 ? -errno : 0;
	close(go[0]);
	close(out[1]);
	k->go = go[1];
	k->out = out[0];
	if (err) {
		close(k->go);
		close(k->out);
	}
	return err;
}

/* Releases the child, reads its output to the end and reaps it: ms from
 * the release to the reap. */
static double kid_run(struct kid *k, long long *bytes, int *status)
{
	static char buf[1 << 16];
	double t0 = bench_now_ns();
	ssize_t m;

	*bytes = 0;
	if (write(k->go, "g", 1) != 1)
		kill(k->pid, SIGKILL);
	close(k->go);
	while ((m = read(k->out, buf, sizeof(buf))) != 0) {
		if (m < 0 && errno == EINTR)
			continue;
		if (m < 0)
			break;
		*bytes += m;
	}
	close(k->out);
	while (waitpid(k->pid, status, 0) < 0 && errno == EINTR)
		;
	return (bench_now_ns() - t0) / 1e6;
}

/* ---- the variants ------------------------------------------------------------- */

/* Before none and seccomp: the last sfilter child has been reaped, so no
 * task has a chain and the dispatcher can go. Counts what is left. */
static void idle_before(int r)
{
	int link;

	if (!rt) {
		foreign[r] += bench_foreign_tp_links(NULL, 0, 0);
		return;
	}
	idle_runs++;
	sf_runtime_idle_check(rt);
	link = sf_runtime_dispatch_link_id(rt);
	dispatch_left[r] += link != 0;
	foreign[r] += bench_foreign_tp_links(own, n_own, (uint32_t)link);
}

/* Destroys the floor's link and waits (up to 2 s) until the kernel has
 * dropped it, so that the next run's count of others' links misses it. */
static void floor_detach(struct bpf_link *l)
{
	struct bpf_link_info li = {};
	__u32 len = sizeof(li);

	if (bpf_obj_get_info_by_fd(bpf_link__fd(l), &li, &len))
		li.id = 0;
	bpf_link__destroy(l);
	bench_wait_links_gone(&li.id, 1);
}

/* One run of workload w under variant v: ms, or -1 if it could not run.
 * *bytes and *status say how it ended. */
static double run_variant(int v, struct workload *w, long long *bytes, int *status)
{
	unsigned long held = __atomic_load_n(&agent.held, __ATOMIC_ACQUIRE);
	struct bpf_link *floor = NULL;
	struct kid k;
	uint32_t id;
	double ms;
	int err;

	*status = -1;
	err = kid_start(&k, w, v == V_SECCOMP || v == V_BSECCOMP ? &prog : NULL, v == V_GATE);
	if (err) {
		fprintf(stderr, "workload: fork: %s\n", strerror(-err));
		return -1;
	}
	/* The gate is in place and its listener here before the clock
	 * starts, as seccomp(2)'s filter is. */
	if (v == V_GATE && bench_agent_wait(&agent, held + 1, 10)) {
		fprintf(stderr, "workload: no gate listener came from the child\n");
		kill(k.pid, SIGKILL);
		kid_run(&k, bytes, status);
		bench_agent_release(&agent);
		return -1;
	}
	if (v == V_SFILTER || v == V_GATE) {
		err = sf_runtime_attach(rt, k.pid, &prog, SF_ATTACH_AT_EXEC, &id, NULL);
		if (err) {
			fprintf(stderr, "workload: sf_runtime_attach: %d (%s)\n", err,
				strerror(err < 0 ? -err : 0));
			kill(k.pid, SIGKILL);
			kid_run(&k, bytes, status);
			return -1;
		}
	}
	if (v == V_FLOOR) {
		floor = bpf_program__attach(floor_skel->progs.bench_floor);
		if (!floor) {
			fprintf(stderr, "workload: attach the floor program: %s\n",
				strerror(errno));
			kill(k.pid, SIGKILL);
			kid_run(&k, bytes, status);
			return -1;
		}
	}
	ms = kid_run(&k, bytes, status);
	if (floor)
		floor_detach(floor);
	if (v == V_GATE)
		bench_agent_release(&agent);
	return ms;
}

static const char *status_str(int st, char *buf, size_t size)
{
	if (st == -1)
		snprintf(buf, size, "not run");
	else if (WIFSIGNALED(st))
		snprintf(buf, size, "signal %d", WTERMSIG(st));
	else
		snprintf(buf, size, "exit %d", WEXITSTATUS(st));
	return buf;
}

/* Runs w under every variant once, unmeasured: none first (twice: the
 * first warms the page cache) for the reference, then the others, each
 * compared with it. A difference means the profile denies a call w makes. */
static void check_workload(struct workload *w)
{
	char s[32];
	long long bytes;
	double ms;
	int v, st;

	run_variant(V_NONE, w, &w->bytes, &w->status);
	for (v = 0; v < V_OPEN; v++) {
		if (v != V_SFILTER && v != V_GATE)
			idle_before(0);
		ms = run_variant(v, w, &bytes, &st);
		printf("| %s | %s | %s | %lld | %.1f | %s |\n", w->name, vnames[v],
		       status_str(st, s, sizeof(s)), bytes, ms,
		       st == w->status && bytes == w->bytes ? "" : "**differs from none**");
		if (v != V_NONE && (st != w->status || bytes != w->bytes))
			fprintf(stderr, "workload: warning: %s ends otherwise under %s than "
				"under none: the profile denies one of its calls\n", w->name,
				vnames[v]);
	}
	foreign[0] = dispatch_left[0] = idle_runs = 0;
}

/* Variants first .. first + n - 1 once for each workload: the workload
 * order alternates with the round, the variant order rotates. */
static void run_variants(int r, int first, int n)
{
	int i, j, w, v, st;
	long long bytes;
	double ms;

	for (i = 0; i < W_COUNT; i++) {
		w = r & 1 ? W_COUNT - 1 - i : i;
		for (j = 0; j < n; j++) {
			v = first + (r + j) % n;
			if (v != V_SFILTER && v != V_GATE)
				idle_before(r);
			ms = run_variant(v, &wl[w], &bytes, &st);
			if (ms > 0 && (st != wl[w].status || bytes != wl[w].bytes)) {
				mismatch[w][v]++;
				ms = -1;
			}
			res[w][v][r] = ms;
		}
	}
}

static int runtime_open(void);

/* -c: bare and bare-seccomp with the runtime closed (and nothing of it
 * left attached: a link goes when the kernel drops its last reference),
 * then the runtime opened again. */
static int closed_phase(int r)
{
	sf_runtime_close(rt);
	rt = NULL;
	bench_wait_links_gone(own, n_own);
	run_variants(r, V_BARE, V_COUNT - V_OPEN);
	return runtime_open();
}

/* Round r: every variant once for each workload; with -c the closed
 * phase comes first or last, alternating. */
static int round_run(int r)
{
	int w, v;

	if (closed && (r & 1) && closed_phase(r))
		return -1;
	run_variants(r, V_NONE, V_OPEN);
	if (closed && !(r & 1) && closed_phase(r))
		return -1;
	if (verbose) {
		printf("round %2d:", r);
		for (w = 0; w < W_COUNT; w++)
			for (v = 0; v < nv; v++)
				printf(" %s/%s %.1f", wl[w].name, vnames[v], res[w][v][r]);
		printf(" (dispatcher left attached %d, foreign links %d)\n", dispatch_left[r],
		       foreign[r]);
	}
	return 0;
}

/* ---- set-up and report -------------------------------------------------------- */

/* Opens the runtime and notes its own tracepoint links: those that appear
 * while it opens (the dispatcher is not among them: no chain yet). */
static int runtime_open(void)
{
	struct sf_runtime_opts opts = { .verbose = false };
	uint32_t before[MAX_OWN], after[MAX_OWN];
	int nb, na, i, j, err;

	n_own = 0;
	nb = bench_links(BENCH_LINK_TP, before, MAX_OWN);
	err = sf_runtime_open(&rt, &opts);
	if (err) {
		fprintf(stderr, "workload: sf_runtime_open: %s\n", strerror(-err));
		return err;
	}
	na = bench_links(BENCH_LINK_TP, after, MAX_OWN);
	for (i = 0; i < na && i < MAX_OWN; i++) {
		bool old = false;

		for (j = 0; j < nb && j < MAX_OWN; j++)
			old = old || after[i] == before[j];
		if (!old)
			own[n_own++] = after[i];
	}
	return 0;
}

/* "name, name": the programs of the runtime's own tracepoint links. */
static void own_link_names(char *buf, size_t size)
{
	size_t at = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i < n_own && at < size; i++) {
		struct bpf_link_info li = {};
		struct bpf_prog_info pi = {};
		__u32 ll = sizeof(li), pl = sizeof(pi);
		int lfd = bpf_link_get_fd_by_id(own[i]), pfd = -1;

		if (lfd >= 0 && !bpf_obj_get_info_by_fd(lfd, &li, &ll))
			pfd = bpf_prog_get_fd_by_id(li.prog_id);
		if (pfd < 0 || bpf_obj_get_info_by_fd(pfd, &pi, &pl))
			snprintf(pi.name, sizeof(pi.name), "link %u", own[i]);
		at += snprintf(buf + at, size - at, "%s%s", i ? ", " : "", pi.name);
		if (pfd >= 0)
			close(pfd);
		if (lfd >= 0)
			close(lfd);
	}
}

static void report_workload(int w, int rounds)
{
	const struct workload *x = &wl[w];
	double none = bench_median(res[w][V_NONE], rounds);
	int v;

	printf("\n### %s: `%s` (%lld bytes out)\n\n", x->name, x->cmd, x->bytes);
	bench_md_head("variant | best ms | median ms | median vs none | valid runs", 1);
	for (v = 0; v < nv; v++)
		printf("| %s | %.1f | %.1f | %.3f | %d/%d |\n", vnames[v],
		       bench_best(res[w][v], rounds), bench_median(res[w][v], rounds),
		       bench_paired_median(res[w][v], res[w][V_NONE], rounds),
		       bench_valid(res[w][v], rounds), rounds);
	if (x->calls > 0 && none > 0)
		printf("\nabove none, per call (%.0f calls, medians): seccomp %.0f ns, "
		       "sfilter %.0f ns, gate %.0f ns\n", x->calls,
		       (bench_median(res[w][V_SECCOMP], rounds) - none) * 1e6 / x->calls,
		       (bench_median(res[w][V_SFILTER], rounds) - none) * 1e6 / x->calls,
		       (bench_median(res[w][V_GATE], rounds) - none) * 1e6 / x->calls);
}

/* -c: what the runtime open but idle costs (none / bare), and sfilter
 * against a machine that has no sfilter at all (bare-seccomp). */
static void report_closed(int rounds)
{
	int w;

	printf("\nWith the runtime closed (bare, bare-seccomp):\n\n");
	bench_md_head("workload | none / bare | seccomp / bare-seccomp | sfilter / bare | "
		      "sfilter / bare-seccomp", 1);
	for (w = 0; w < W_COUNT; w++)
		printf("| %s | %.3f | %.3f | %.3f | %.3f |\n", wl[w].name,
		       bench_paired_median(res[w][V_NONE], res[w][V_BARE], rounds),
		       bench_paired_median(res[w][V_SECCOMP], res[w][V_BSECCOMP], rounds),
		       bench_paired_median(res[w][V_SFILTER], res[w][V_BARE], rounds),
		       bench_paired_median(res[w][V_SFILTER], res[w][V_BSECCOMP], rounds));
}

static void report(int rounds)
{
	int w, r, v, left = 0;
	int dropped = bench_drop_rounds(foreign, rounds, &res[0][0][0], W_COUNT * V_COUNT,
					MAX_ROUNDS);

	for (w = 0; w < W_COUNT; w++)
		report_workload(w, rounds);
	printf("\n");
	bench_md_head("workload | sfilter / none | seccomp / none | floor / none | "
		      "sfilter / floor | sfilter / seccomp | target |", 1);
	for (w = 0; w < W_COUNT; w++) {
		double m = bench_paired_median(res[w][V_SFILTER], res[w][V_SECCOMP], rounds);

		printf("| %s | %.3f | %.3f | %.3f | %.3f | %.3f | <= %.2f | %s |\n", wl[w].name,
		       bench_paired_median(res[w][V_SFILTER], res[w][V_NONE], rounds),
		       bench_paired_median(res[w][V_SECCOMP], res[w][V_NONE], rounds),
		       bench_paired_median(res[w][V_FLOOR], res[w][V_NONE], rounds),
		       bench_paired_median(res[w][V_SFILTER], res[w][V_FLOOR], rounds), m, GOAL,
		       bench_verdict(m, GOAL));
	}
	printf("\nThe gate (median paired ratios):\n\n");
	bench_md_head("workload | gate / sfilter | gate / seccomp | gate / none | gate / floor | "
		      "target |", 1);
	for (w = 0; w < W_COUNT; w++) {
		double m = bench_paired_median(res[w][V_GATE], res[w][V_SFILTER], rounds);

		printf("| %s | %.3f | %.3f | %.3f | %.3f | <= %.2f | %s |\n", wl[w].name, m,
		       bench_paired_median(res[w][V_GATE], res[w][V_SECCOMP], rounds),
		       bench_paired_median(res[w][V_GATE], res[w][V_NONE], rounds),
		       bench_paired_median(res[w][V_GATE], res[w][V_FLOOR], rounds), GOAL_GATE,
		       bench_verdict(m, GOAL_GATE));
	}
	printf("\ngate: %lu listeners held, %lu calls notified, %lu of them denied\n",
	       __atomic_load_n(&agent.held, __ATOMIC_RELAXED),
	       __atomic_load_n(&agent.notified, __ATOMIC_RELAXED),
	       __atomic_load_n(&gate_denied, __ATOMIC_RELAXED));
	if (closed)
		report_closed(rounds);
	for (r = 0; r < rounds; r++)
		left += dispatch_left[r];
	printf("\n(median paired ratios over %d rounds)\n", rounds - dropped);
	printf("dispatcher detached (sf_runtime_dispatch_link_id() == 0) before every none, "
	       "seccomp and floor run: %s (%d of %d runs attached)\n", left ? "no" : "yes", left,
	       idle_runs);
	for (w = 0; w < W_COUNT; w++)
		for (v = 0; v < nv; v++)
			if (mismatch[w][v])
				printf("warning: %s under %s ended otherwise than under none in "
				       "%d rounds (not counted)\n", wl[w].name, vnames[v],
				       mismatch[w][v]);
	bench_taint_warning(foreign, rounds, dropped, "none and seccomp");
}

/* The gate's judge: what sfilterd's (loader/daemon/gate.c) answers for
 * the verdicts a workload can meet. A denial never lets the call run: ERRNO
 * as the kernel caps it, anything else ENOSYS (none is expected: the
 * workloads make no call the profile denies, and gate_denied says so). */
static void gate_answer(void *arg, const struct seccomp_notif *n, struct seccomp_notif_resp *r)
{
	struct sf_judgement j;
	uint32_t action, e;

	(void)arg;
	if (sf_runtime_judge(rt, (pid_t)n->pid, &n->data, &j) || !j.exact) {
		r->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		return;
	}
	action = c2e_effective_action(j.ret);
	if (action == SECCOMP_RET_ALLOW || action == SECCOMP_RET_LOG) {
		r->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		return;
	}
	__atomic_add_fetch(&gate_denied, 1, __ATOMIC_RELAXED);
	e = j.ret & SECCOMP_RET_DATA;
	r->error = action == SECCOMP_RET_ERRNO ? -(int32_t)(e > 4095 ? 4095 : e) : -ENOSYS;
}

/* The profile: Podman's (the default) or Docker's, each for its engine's
 * default capabilities; ":FILE" names another copy of its file. */
static struct {
	const char *title, *file, *caps;
} prof = { "Podman's", BENCH_PODMAN_PROFILE, BENCH_PODMAN_CAPS };

static int profile_arg(const char *arg)
{
	size_t k = strcspn(arg, ":");

	if (k == 6 && !strncmp(arg, "docker", k))
		prof = (typeof(prof)){ "Docker's", BENCH_DOCKER_PROFILE, BENCH_DOCKER_CAPS };
	else if (k != 6 || strncmp(arg, "podman", k))
		return -EINVAL;
	if (arg[k] == ':')
		prof.file = arg + k + 1;
	return 0;
}

static int setup(const struct sf_profile *p, bool emulated, long dd_bytes)
{
	struct utsname uts;
	char names[256];

	uname(&uts);
	if (workloads_init(dd_bytes, emulated))
		return -ENOENT;
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	floor_skel = bench_floor_bpf__open_and_load();
	if (!floor_skel) {
		fprintf(stderr, "workload: load the floor program: %s\n", strerror(errno));
		return -EIO;
	}
	if (devnull < 0 || runtime_open())
		return -EIO;
	if (!mkdtemp(agent_dir) || bench_agent_start(&agent, agent_dir)) {
		fprintf(stderr, "workload: the gate's agent socket in %s: %s\n", agent_dir,
			strerror(errno));
		return -EIO;
	}
	agent.answer = gate_answer;
	own_link_names(names, sizeof(names));
	printf("# Workloads under %s default seccomp profile, kernel %s%s\n\n", prof.title,
	       uts.release, emulated ? BENCH_EMULATED_NOTE : "");
	printf("profile: %s for caps %s: %zu insns, %u rules (%u ERRNO/TRAP/TRACE), "
	       "default action 0x%08x; its gate %d insns\n", prof.file, prof.caps, p->len,
	       p->n_rules, p->n_gap_rules, p->default_action, c2e_gate_len(&prog, 1, NULL));
	printf("runtime tier: %s%s%s; its tracepoint links while idle: %d (%s)\n",
	       sf_tier_name(sf_runtime_tier(rt)), *sf_runtime_tier_reason(rt) ? ": " : "",
	       sf_runtime_tier_reason(rt), n_own, n_own ? names : "none");
	return 0;
}

int main(int argc, char **argv)
{
	bool emulated = bench_emulated();
	int rounds = emulated ? 3 : 11, r, w;
	long dd_bytes = emulated ? 2000 : 200000;
	struct sf_profile p;

	if (bench_round_opts_flag(argc, argv, "DD_BYTES", &rounds, &dd_bytes, &verbose, 'c',
				  "[-c] [podman|docker[:FILE]]", &closed))
		return 2;
	if ((optind < argc && profile_arg(argv[optind])) || optind + 1 < argc) {
		fprintf(stderr, "usage: %s [-r ROUNDS] [-n DD_BYTES] [-v] [-c] "
			"[podman|docker[:FILE]]\n", argv[0]);
		return 2;
	}
	nv = closed ? V_COUNT : V_OPEN;
	if (rounds < 1 || rounds > MAX_ROUNDS || dd_bytes < 1) {
		fprintf(stderr, "workload: rounds 1..%d, bytes >= 1\n", MAX_ROUNDS);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (bench_profile("workload", prof.file, prof.caps, &p))
		return 1;
	prog = (struct sock_fprog){ (unsigned short)p.len, p.insns };
	if (setup(&p, emulated, dd_bytes))
		return 1;

	printf("\nCheck, one run each, page cache warm:\n\n");
	bench_md_head("workload | variant | ended | bytes out | ms |", 3);
	for (w = 0; w < W_COUNT; w++)
		check_workload(&wl[w]);
	printf("\n%d rounds, every variant once per workload per round\n", rounds);
	for (r = 0; r < rounds; r++)
		if (round_run(r))
			break;
	report(r);

	bench_agent_stop(&agent);
	rmdir(agent_dir);
	if (rt)
		sf_runtime_close(rt);
	bench_floor_bpf__destroy(floor_skel);
	sf_profile_free(&p);
	return 0;
}
