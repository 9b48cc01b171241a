// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the gate costs (docs/protocol.md, "The gate and the agent socket"),
 * ns per call. The chain of every variant that has one is the same 7
 * instructions: arch x86-64 (else KILL), getppid -> ERRNO(EPERM), every
 * other call ALLOW. So getppid is the call the gate sends up, getpid one
 * it lets through in the kernel (a constant ALLOW: seccomp's action cache
 * skips the filter for it).
 *
 * A call the chain denies, getppid:
 *   bare           no filter, nothing attached to the syscall path
 *   seccomp-errno  the chain installed with seccomp(2): the kernel's own
 *                  ERRNO, the cost to beat
 *   gate-floor     the gate alone, its listener held by a supervisor thread
 *                  of this bench that answers EPERM at once, judging
 *                  nothing (bench_agent): the kernel's notified round trip,
 *                  the floor of any gate
 *   gate-floor-d   the same, measured while the daemon's dispatcher is
 *                  attached (as it is for gate-errno)
 *   gate-errno     a gated task as sfilterd makes it: the gate installed
 *                  with its listener handed to the agent socket of a real
 *                  sfilterd (started here, --no-pin, on a private socket),
 *                  the chain attached through libsfclient's sf_attach(); each
 *                  call is notified, judged by the daemon with the chain
 *                  (sf_runtime_judge()) and answered EPERM
 * A call the chain allows, getpid:
 *   bare-getpid    no filter, nothing attached
 *   floor          no filter; the empty tp_btf/sys_enter program
 *                  (bpf/bench_floor.bpf.c) attached: what any sys_enter
 *                  program costs every task
 *   seccomp-allow  the chain through seccomp(2)
 *   untracked      no filter, while the daemon's dispatcher is attached
 *   sf-allow       the chain through sf_attach(), no gate: the tracepoint
 *                  tier's own figure
 *   gate-allow     the gated task of gate-errno: the gate passes the call
 *                  in the kernel and the dispatcher judges it
 *
 * Every figure comes from a worker process (bench_worker) set up before
 * the timed part, which runs the calls through the syscall instruction
 * when told; its figure for a round is the best of 10 batches. Each round
 * has two phases, in an order that alternates:
 *   bare    nothing of sfilter attached: the workers with a chain have
 *           exited, and the daemon's idle check has detached its
 *           dispatcher (waited for, up to 6 s; a round where raw/BTF
 *           tracepoint links beyond the daemon's idle ones are seen is
 *           not counted): bare, seccomp-errno, gate-floor, bare-getpid,
 *           seccomp-allow, floor (its link made and destroyed around it);
 *   daemon  two workers forked and given the chain (one gated), so the
 *           dispatcher is attached: gate-floor-d, gate-errno, untracked,
 *           sf-allow, gate-allow; then they exit.
 * Variants rotate within a phase. Ratios are paired within a round and
 * their median is reported. A worker counts the calls whose result was
 * not the chain's (EPERM for getppid, a pid for getpid): "wrong".
 *
 * Never asserts; prints Markdown.
 *
 * Usage: gate_cost [-r ROUNDS] [-n CALLS] [-v] (root). CALLS per variant
 * per round for a call that is not notified; a notified variant makes
 * CALLS / 20.
 */
#define _GNU_SOURCE
#include "bench_util.h"
#include "bench_floor.skel.h"
#include "gatehand.h"
#include "proto.h"
#include "sfclient.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#define MAX_ROUNDS 64
#define BATCHES 10      /* per measurement; the best one counts */
#define NOTIFIED_DIV 20 /* a notified call costs ~20 plain ones */
#define DETACH_WAIT_S 6.0

/* ---- the chain ---------------------------------------------------------------- */

static struct sock_filter chain_f[] = {
	BENCH_LD(4),
	BENCH_JEQ(BENCH_AUDIT_ARCH_X86_64, 1, 0),
	BENCH_RET(BENCH_RET_KILL),
	BENCH_LD(0),
	BENCH_JEQ(BENCH_NR_GETPPID, 0, 1),
	BENCH_RET(SECCOMP_RET_ERRNO | EPERM),
	BENCH_RET(BENCH_RET_ALLOW),
};
static struct sock_fprog chain = { BENCH_ARRAY_SIZE(chain_f), chain_f };

/* ---- workers ------------------------------------------------------------------ */

enum { W_PLAIN, W_SECCOMP, W_GFLOOR, W_GATED, W_SF, W_COUNT };
static const char *const wnames[W_COUNT] = { "plain", "seccomp", "gate-floor", "gated",
					     "sf" };
static struct bench_worker workers[W_COUNT];
/* Where the gated workers hand their listeners: this bench's own agent
 * (W_GFLOOR), sfilterd's (W_GATED). */
static char bench_agent_path[108], daemon_agent_path[160];

/* n > 0: make n calls of nr; n == 0: how the set-up went; n < 0: exit. */
struct wreq {
	long n, nr;
	int want_err; /* the call must fail with EPERM (else return a pid) */
};
struct wresp {
	double ns;  /* best ns per call; < 0: -errno of the set-up */
	long wrong; /* calls whose result was not the chain's */
	char msg[200];
};

static inline long raw_call(long nr)
{
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"(nr), "D"(0L)
			 : "rcx", "r11", "memory");
	return ret;
}

/* In the worker: its filter, gate and chain as its kind wants. */
static int worker_setup(int kind, char *msg, size_t size)
{
	int err = 0;

	msg[0] = '\0';
	if (kind == W_PLAIN)
		return 0;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	switch (kind) {
	case W_SECCOMP:
		if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &chain)) {
			err = -errno;
			snprintf(msg, size, "seccomp: %s", strerror(errno));
		}
		return err;
	case W_GFLOOR:
		return gatehand_install(&chain, 1, bench_agent_path, msg, size);
	case W_GATED:
		err = gatehand_install(&chain, 1, daemon_agent_path, msg, size);
		if (err)
			return err;
		/* and the chain, as for W_SF */
		/* fall through */
	default:
		if (sf_attach(&chain, 0)) {
			snprintf(msg, size, "sf_attach: %s", sf_last_error());
			return -EIO;
		}
		return 0;
	}
}

static void worker_loop(int cmd, int resp, const void *arg)
{
	int kind = (int)(intptr_t)arg;
	struct wresp a = { 0 };
	struct wreq q;

	a.ns = worker_setup(kind, a.msg, sizeof(a.msg));
	for (;;) {
		long per, b, i;

		if (read(cmd, &q, sizeof(q)) != sizeof(q) || q.n < 0)
			_exit(0);
		if (q.n > 0) {
			a.ns = -1;
			a.wrong = 0;
			a.msg[0] = '\0';
		}
		per = q.n / BATCHES > 0 ? q.n / BATCHES : 1;
		for (b = 0; q.n > 0 && b < BATCHES; b++) {
			double t0 = bench_now_ns(), ns;
			long wrong = 0;

			for (i = 0; i < per; i++) {
				long r = raw_call(q.nr);

				wrong += q.want_err ? r != -EPERM : r <= 0;
			}
			ns = (bench_now_ns() - t0) / per;
			if (a.ns < 0 || ns < a.ns)
				a.ns = ns;
			a.wrong += wrong;
		}
		if (write(resp, &a, sizeof(a)) != sizeof(a))
			_exit(4);
	}
}

static int worker_start(int w)
{
	struct wreq q = { 0 };
	struct wresp a;
	int err = bench_worker_start(&workers[w], "gate_cost", wnames[w], worker_loop,
				     (const void *)(intptr_t)w);

	if (!err)
		err = bench_worker_call(&workers[w], &q, sizeof(q), &a, sizeof(a));
	if (!err && a.ns < 0) {
		fprintf(stderr, "gate_cost: worker %s: %s (%s)\n", wnames[w], a.msg,
			strerror((int)-a.ns));
		err = (int)a.ns;
	}
	return err;
}

static void worker_stop(int w)
{
	struct wreq q = { .n = -1 };

	if (workers[w].pid <= 0)
		return;
	bench_worker_stop(&workers[w], &q, sizeof(q));
	close(workers[w].cmd);
	close(workers[w].resp);
	workers[w].pid = 0;
}

/* ---- the variants ------------------------------------------------------------- */

enum { P_BARE, P_DAEMON };
enum { V_BARE, V_KERRNO, V_GFLOOR, V_GFLOOR_D, V_GERRNO, V_BARE_PID, V_FLOOR, V_KALLOW,
       V_UNTRACKED, V_SFALLOW, V_GALLOW, V_COUNT };
static const struct variant {
	const char *name, *what;
	int worker, phase;
	long nr;
	bool notified;
} vs[V_COUNT] = {
	[V_BARE] = { "bare", "no filter", W_PLAIN, P_BARE, BENCH_NR_GETPPID },
	[V_KERRNO] = { "seccomp-errno", "kernel seccomp: ERRNO(EPERM)", W_SECCOMP, P_BARE,
		       BENCH_NR_GETPPID },
	[V_GFLOOR] = { "gate-floor", "gate, in-bench supervisor answers EPERM unjudged",
		       W_GFLOOR, P_BARE, BENCH_NR_GETPPID, true },
	[V_GFLOOR_D] = { "gate-floor-d", "the same, the daemon's dispatcher attached",
			 W_GFLOOR, P_DAEMON, BENCH_NR_GETPPID, true },
	[V_GERRNO] = { "gate-errno", "gate + chain, sfilterd judges: EPERM", W_GATED,
		       P_DAEMON, BENCH_NR_GETPPID, true },
	[V_BARE_PID] = { "bare-getpid", "no filter", W_PLAIN, P_BARE, SYS_getpid },
	[V_FLOOR] = { "floor", "no filter, empty tp_btf/sys_enter program", W_PLAIN, P_BARE,
		      SYS_getpid },
	[V_KALLOW] = { "seccomp-allow", "kernel seccomp: ALLOW (cached)", W_SECCOMP, P_BARE,
		       SYS_getpid },
	[V_UNTRACKED] = { "untracked", "no filter, the dispatcher attached", W_PLAIN,
			  P_DAEMON, SYS_getpid },
	[V_SFALLOW] = { "sf-allow", "chain, no gate (tracepoint tier)", W_SF, P_DAEMON,
			SYS_getpid },
	[V_GALLOW] = { "gate-allow", "gate + chain: passed in the kernel, dispatcher judges",
		       W_GATED, P_DAEMON, SYS_getpid },
};

static double res[V_COUNT][MAX_ROUNDS];
static long wrong[V_COUNT];
static int tainted[MAX_ROUNDS], undispatched[MAX_ROUNDS];
static int idle_links, verbose;
static uint32_t dispatcher; /* the daemon's dispatcher link, seen in the last daemon phase */
static struct bench_floor_bpf *floor_skel;

static double measure(int v, long n)
{
	struct wreq q = { .n = vs[v].notified ? n / NOTIFIED_DIV : n, .nr = vs[v].nr,
			  .want_err = vs[v].nr == BENCH_NR_GETPPID && vs[v].worker != W_PLAIN };
	struct wresp a;

	if (q.n < BATCHES)
		q.n = BATCHES;
	if (bench_worker_call(&workers[vs[v].worker], &q, sizeof(q), &a, sizeof(a)))
		return -1;
	wrong[v] += a.wrong;
	return a.ns;
}

/* The floor program attached around one measurement, its link gone after. */
static double measure_floor(long n)
{
	struct bpf_link *l = bpf_program__attach(floor_skel->progs.bench_floor);
	struct bpf_link_info li = {};
	__u32 len = sizeof(li);
	double ns;

	if (!l) {
		fprintf(stderr, "gate_cost: attach the floor program: %s\n", strerror(errno));
		return -1;
	}
	ns = measure(V_FLOOR, n);
	if (bpf_obj_get_info_by_fd(bpf_link__fd(l), &li, &len))
		li.id = 0;
	bpf_link__destroy(l);
	bench_wait_links_gone(&li.id, 1);
	return ns;
}

/* The dispatcher the daemon attached with the workers' chains: a raw/BTF
 * tracepoint link not among before[0..nb) whose program is sf_dispatch
 * (by id, not by count: other users' links come and go on this machine). */
static uint32_t find_dispatcher(const uint32_t *before, int nb)
{
	uint32_t ids[256];
	int n = bench_links(BENCH_LINK_TP, ids, 256), i, j;

	for (i = 0; i < n && i < 256; i++) {
		struct bpf_link_info li = {};
		struct bpf_prog_info pi = {};
		__u32 ll = sizeof(li), pl = sizeof(pi);
		int lfd, pfd = -1;
		bool old = false;

		for (j = 0; j < nb && !old; j++)
			old = ids[i] == before[j];
		if (old || (lfd = bpf_link_get_fd_by_id(ids[i])) < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(lfd, &li, &ll))
			pfd = bpf_prog_get_fd_by_id(li.prog_id);
		close(lfd);
		if (pfd < 0)
			continue;
		j = !bpf_obj_get_info_by_fd(pfd, &pi, &pl) && !strcmp(pi.name, "sf_dispatch");
		close(pfd);
		if (j)
			return ids[i];
	}
	return 0;
}

static bool link_exists(uint32_t id)
{
	int fd = bpf_link_get_fd_by_id(id);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* Until the daemon's idle check has detached its dispatcher (up to
 * DETACH_WAIT_S). True when it is gone. */
static bool wait_detached(void)
{
	double t0 = bench_now_ns();

	while (dispatcher && link_exists(dispatcher)) {
		if ((bench_now_ns() - t0) / 1e9 > DETACH_WAIT_S)
			return false;
		usleep(20000);
	}
	return true;
}

/* The variants of phase p once each, rotated by the round. */
static void run_phase(int p, int r, long n)
{
	int order[V_COUNT], k = 0, i, v;

	for (v = 0; v < V_COUNT; v++)
		if (vs[v].phase == p)
			order[k++] = v;
	for (i = 0; i < k; i++) {
		v = order[(i + r) % k];
		res[v][r] = v == V_FLOOR ? measure_floor(n) : measure(v, n);
	}
}

static int phase_daemon(int r, long n)
{
	uint32_t before[256];
	int nb = bench_links(BENCH_LINK_TP, before, 256);
	int err = worker_start(W_GATED);

	if (!err)
		err = worker_start(W_SF);
	if (err) {
		worker_stop(W_GATED);
		return err;
	}
	/* Still the one of the last phase when two daemon phases meet. */
	if (!dispatcher || !link_exists(dispatcher))
		dispatcher = find_dispatcher(before, nb);
	undispatched[r] = !dispatcher;
	run_phase(P_DAEMON, r, n);
	worker_stop(W_GATED);
	worker_stop(W_SF);
	return 0;
}

/* Tainted: the dispatcher stayed, or others attached more tracepoint
 * links than there were when the daemon was idle. */
static void phase_bare(int r, long n)
{
	if (!wait_detached() || bench_links(BENCH_LINK_TP, NULL, 0) > idle_links)
		tainted[r] = 1;
	run_phase(P_BARE, r, n);
	if (bench_links(BENCH_LINK_TP, NULL, 0) > idle_links)
		tainted[r] = 1;
}

/* ---- report ------------------------------------------------------------------- */

static double ratio(int x, int y, int rounds)
{
	return bench_paired_median(res[x], res[y], rounds);
}

static double diff(int x, int y, int rounds)
{
	return bench_paired_diff_median(res[x], res[y], rounds);
}

static void report(int rounds)
{
	int dropped = bench_drop_rounds(tainted, rounds, &res[0][0], V_COUNT, MAX_ROUNDS);
	int v, r, und = 0;

	printf("\n");
	bench_md_head("variant | call | what | best ns | median ns | median vs bare | wrong", 3);
	for (v = 0; v < V_COUNT; v++) {
		int base = vs[v].nr == BENCH_NR_GETPPID ? V_BARE : V_BARE_PID;

		printf("| %s | %s | %s | %.1f | %.1f | %.2f | %ld |\n", vs[v].name,
		       vs[v].nr == BENCH_NR_GETPPID ? "getppid" : "getpid", vs[v].what,
		       bench_best(res[v], rounds), bench_median(res[v], rounds),
		       ratio(v, base, rounds), wrong[v]);
	}

	printf("\nA denied call (getppid), median paired over rounds:\n\n");
	bench_md_head("what | ratio | ns", 1);
	printf("| gate-errno / seccomp-errno (a judged call against the kernel's ERRNO) "
	       "| %.2f | +%.0f |\n", ratio(V_GERRNO, V_KERRNO, rounds),
	       diff(V_GERRNO, V_KERRNO, rounds));
	printf("| gate-floor / seccomp-errno (the kernel's round trip, nothing judged) "
	       "| %.2f | +%.0f |\n", ratio(V_GFLOOR, V_KERRNO, rounds),
	       diff(V_GFLOOR, V_KERRNO, rounds));
	printf("| gate-floor-d / gate-floor (the dispatcher attached) | %.3f | %+.0f |\n",
	       ratio(V_GFLOOR_D, V_GFLOOR, rounds), diff(V_GFLOOR_D, V_GFLOOR, rounds));
	printf("| gate-errno / gate-floor-d (sfilterd's share: epoll, judge, answer, "
	       "event) | %.2f | +%.0f |\n", ratio(V_GERRNO, V_GFLOOR_D, rounds),
	       diff(V_GERRNO, V_GFLOOR_D, rounds));

	printf("\nAn allowed call (getpid), median paired over rounds:\n\n");
	bench_md_head("what | ratio | ns", 1);
	printf("| gate-allow / sf-allow (what the gate adds to an allowed call) | %.3f | "
	       "%+.0f |\n", ratio(V_GALLOW, V_SFALLOW, rounds), diff(V_GALLOW, V_SFALLOW, rounds));
	printf("| gate-allow / seccomp-allow | %.3f | %+.0f |\n",
	       ratio(V_GALLOW, V_KALLOW, rounds), diff(V_GALLOW, V_KALLOW, rounds));
	printf("| gate-allow / floor | %.3f | %+.0f |\n", ratio(V_GALLOW, V_FLOOR, rounds),
	       diff(V_GALLOW, V_FLOOR, rounds));
	printf("| sf-allow / floor | %.3f | %+.0f |\n", ratio(V_SFALLOW, V_FLOOR, rounds),
	       diff(V_SFALLOW, V_FLOOR, rounds));
	printf("| seccomp-allow / bare-getpid | %.3f | %+.0f |\n",
	       ratio(V_KALLOW, V_BARE_PID, rounds), diff(V_KALLOW, V_BARE_PID, rounds));
	printf("| floor / bare-getpid | %.3f | %+.0f |\n", ratio(V_FLOOR, V_BARE_PID, rounds),
	       diff(V_FLOOR, V_BARE_PID, rounds));

	printf("\n(%d rounds counted)\n", rounds - dropped);
	for (r = 0; r < rounds; r++)
		und += undispatched[r];
	if (und)
		printf("warning: in %d rounds no dispatcher link was seen while the chains "
		       "were attached\n", und);
	if (dropped)
		printf("warning: tracepoint links beyond the daemon's idle ones were attached "
		       "in %d of %d rounds' bare phase: those rounds are not counted\n",
		       dropped, rounds);
	else
		for (r = 0; r < rounds; r++)
			if (tainted[r]) {
				printf("warning: tracepoint links beyond the daemon's idle ones "
				       "were attached in every round's bare phase: the bare "
				       "variants are tainted\n");
				break;
			}
	for (v = 0; v < V_COUNT; v++)
		if (wrong[v])
			printf("warning: %s: %ld calls answered otherwise than the chain says\n",
			       vs[v].name, wrong[v]);
}

/* ---- main --------------------------------------------------------------------- */

int main(int argc, char **argv)
{
	bool emulated = bench_emulated();
	int rounds = emulated ? 5 : 15, r, v, before, err = 1;
	long n = emulated ? 5000 : 200000;
	struct bench_daemon dm = { .pid = -1 };
	struct bench_agent agent = { .fd = -1 };
	char tier[32];
	struct utsname uts;

	if (bench_round_opts(argc, argv, "CALLS", &rounds, &n, &verbose))
		return 2;
	if (rounds < 1 || rounds > MAX_ROUNDS || n < 1) {
		fprintf(stderr, "gate_cost: rounds 1..%d, calls >= 1\n", MAX_ROUNDS);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* A worker that died is reported by bench_worker_call(), not by
	 * SIGPIPE ending the bench. */
	signal(SIGPIPE, SIG_IGN);
	uname(&uts);
	floor_skel = bench_floor_bpf__open_and_load();
	if (!floor_skel) {
		fprintf(stderr, "gate_cost: load the floor program: %s\n", strerror(errno));
		return 1;
	}
	before = bench_links(BENCH_LINK_TP, NULL, 0);
	bench_bare_check("gate_cost");
	if (bench_daemon_find(&dm) || (err = bench_daemon_start(&dm, 30))) {
		fprintf(stderr, "gate_cost: start sfilterd: %s\n", strerror(err ? -err : ENOENT));
		err = 1;
		goto out;
	}
	err = sf_proto_agent_path(dm.sock, daemon_agent_path, sizeof(daemon_agent_path));
	if (!err)
		err = bench_agent_start(&agent, dm.dir);
	if (err) {
		fprintf(stderr, "gate_cost: agent socket: %s\n", strerror(-err));
		goto out;
	}
	snprintf(bench_agent_path, sizeof(bench_agent_path), "%s", agent.path);
	idle_links = bench_links(BENCH_LINK_TP, NULL, 0);
	if (worker_start(W_PLAIN) || worker_start(W_SECCOMP) || worker_start(W_GFLOOR)) {
		err = 1;
		goto out;
	}
	bench_daemon_tier(&dm, tier, sizeof(tier));
	printf("# The gate's cost, kernel %s%s, %d rounds x %ld calls per variant "
	       "(notified: %ld)\n\n", uts.release, emulated ? BENCH_EMULATED_NOTE : "", rounds,
	       n, n / NOTIFIED_DIV);
	printf("sfilterd %s --no-pin, tier %s; raw/BTF tracepoint links: %d before it, "
	       "%d with it idle\n", dm.bin, tier, before, idle_links);
	if (before)
		printf("warning: %d raw/BTF tracepoint links of other users at the start: "
		       "bare is not bare\n", before);

	/* A warm-up of both phases, not counted. */
	if (phase_daemon(0, n / 4 + 1))
		goto out;
	phase_bare(0, n / 4 + 1);
	memset(wrong, 0, sizeof(wrong));
	for (r = 0; r < rounds; r++) {
		tainted[r] = 0;
		if (r & 1) {
			phase_bare(r, n);
			if (phase_daemon(r, n))
				break;
		} else {
			if (phase_daemon(r, n))
				break;
			phase_bare(r, n);
		}
		if (verbose) {
			printf("round %2d:", r);
			for (v = 0; v < V_COUNT; v++)
				printf(" %s %.1f", vs[v].name, res[v][r]);
			printf("%s\n", tainted[r] ? " (tainted)" : "");
		}
	}
	report(r);
	printf("bench supervisor: %lu notifications answered\n",
	       __atomic_load_n(&agent.notified, __ATOMIC_RELAXED));
	err = 0;
out:
	for (v = 0; v < W_COUNT; v++)
		worker_stop(v);
	bench_agent_stop(&agent);
	bench_daemon_stop(&dm);
	bench_floor_bpf__destroy(floor_skel);
	return err ? 1 : 0;
}
