// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a system call costs under sfilter: getppid per call, ns, for
 *   none        nothing attached to the syscall path
 *   floor       the empty tp_btf/sys_enter program (bpf/bench_floor.bpf.c):
 *               the cost every task pays once anything is attached
 *   floor-tail  the same and one tail call into an empty program: what a
 *               dispatcher generated per chain (no tail call) would save
 *   idle        the runtime open with nothing confined: the dispatcher
 *               is detached until the first chain
 *   untracked   a task with no chain while another has one
 *   sf-16       a task under a 16-instruction filter, through sfilter
 *   seccomp-16  the same filter, kernel seccomp (cBPF JIT)
 *   sf-300      a 300-rule linear allowlist whose last rule matches getppid
 *               and then checks args[0] (so no action cache can skip it),
 *               through sfilter
 *   seccomp-300 the same, kernel seccomp
 *   sf-16-count the 16-instruction filter attached with SF_ATTACH_COUNT
 *   sf-16-shadow the 16-instruction filter, and the same again as a shadow
 *               candidate (it agrees: the cost of running and comparing it)
 *   sf-16-log   the 16-instruction filter returning LOG for getppid, with
 *               nobody reading the events: past its account's budget each
 *               call's event is dropped, as a flooder's are
 *   sf-16-log-stats2  the same worker with the BPF side's switch
 *               sf_bench_stats_twice set: each call updates its sf_stats
 *               counter (--metrics' sfilter_logged_calls_total) twice,
 *               so that the difference to sf-16-log is what one update
 *               costs a logged or denied call
 *
 * Variants are INTERLEAVED: every round runs each of them in turn for the
 * same number of calls, so drift of the shared machine hits all of them
 * alike; ratios are taken within a round (paired) and their median is
 * reported. A round's figure for a variant is the best of 10 batches of
 * n/10 calls, so a batch that another task interrupted does not count. Each variant runs with exactly its own programs attached:
 *   phase "bare"    nothing attached: none, seccomp-16, seccomp-300
 *   phase "floor"   one floor program at a time: floor, floor-tail
 *   phase "runtime" the runtime only (opened for the phase, closed after;
 *                   closing unconfines): untracked, sf-16, sf-300,
 *                   sf-16-count, sf-16-shadow, sf-16-log, sf-16-log-stats2
 * Phases alternate order between rounds.
 *
 * Every figure comes from a worker process (a fork of this one) that runs
 * the calls when told and answers with ns per call through a pipe: the
 * kernel seccomp workers keep their filter for life (seccomp cannot be
 * removed); the sfilter workers get their filter again each time the
 * runtime is opened; one plain worker measures none, floor and untracked
 * and never has any task storage.
 *
 * Never asserts; prints a Markdown table and the goals:
 *   untracked <= 1.05 x floor, sf-16 <= 1.25 x seccomp-16,
 *   sf-300 <= 0.9 x seccomp-300, task storage <= 64 bytes per tracked task.
 *
 * Usage: syscall_cost [-r ROUNDS] [-n CALLS_PER_VARIANT_PER_ROUND] [-v]
 */
#define _GNU_SOURCE
#include "runtime.h"
#include "bench_floor.skel.h"
#include "bench_util.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#define MAX_ROUNDS 64
#define BATCHES 10 /* per measurement; the best one counts */

/* getppid with args[0] == 0, through the syscall instruction directly: the
 * filters check args[0], and nothing else runs between the calls. */
static inline long raw_getppid(void)
{
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)BENCH_NR_GETPPID), "D"(0L)
			 : "rcx", "r11", "memory");
	return ret;
}

/* ---- the filters ------------------------------------------------------------ */

/* 16 instructions: arch check, six allowed syscalls the worker needs,
 * then getppid with an args[0] check (not constant: no cache skips it). */
static struct sock_filter f16[] = {
	/* 0 */ BENCH_LD(4),
	/* 1 */ BENCH_JEQ(BENCH_AUDIT_ARCH_X86_64, 1, 0),
	/* 2 */ BENCH_RET(BENCH_RET_KILL),
	/* 3 */ BENCH_LD(0),
	/* 4 */ BENCH_JEQ(0 /* read */, 10, 0),
	/* 5 */ BENCH_JEQ(1 /* write */, 9, 0),
	/* 6 */ BENCH_JEQ(231 /* exit_group */, 8, 0),
	/* 7 */ BENCH_JEQ(60 /* exit */, 7, 0),
	/* 8 */ BENCH_JEQ(228 /* clock_gettime */, 6, 0),
	/* 9 */ BENCH_JEQ(15 /* rt_sigreturn */, 5, 0),
	/* 10 */ BENCH_JEQ(BENCH_NR_GETPPID, 1, 0),
	/* 11 */ BENCH_RET(BENCH_RET_KILL),
	/* 12 */ BENCH_LD(16),
	/* 13 */ BENCH_JEQ(0, 1, 0),
	/* 14 */ BENCH_RET(BENCH_RET_KILL),
	/* 15 */ BENCH_RET(BENCH_RET_ALLOW),
};

/* The 300-rule allowlist, end case: getppid is the last rule. */
static struct sock_filter f300[BENCH_F300_LEN];

static struct sock_fprog p16 = { BENCH_ARRAY_SIZE(f16), f16 };
/* The same, but getppid's verdict is LOG (main() copies f16). */
static struct sock_filter f16log[BENCH_ARRAY_SIZE(f16)];
static struct sock_fprog p16log = { BENCH_ARRAY_SIZE(f16), f16log };
static struct sock_fprog p300 = { BENCH_F300_LEN, f300 };

/* ---- workers ------------------------------------------------------------------ */

enum { W_PLAIN, W_K16, W_K300, W_S16, W_S300, W_S16C, W_S16S, W_S16L, W_COUNT };
static const char *const worker_names[W_COUNT] = {
	"plain", "seccomp-16", "seccomp-300", "sf-16", "sf-300", "sf-16-count",
	"sf-16-shadow", "sf-16-log" };
static struct bench_worker workers[W_COUNT];

/* arg: the struct sock_fprog to install with seccomp(2), or NULL. A request
 * is a long n (<= 0: exit); the answer the best ns per call, a double. */
static void worker_loop(int cmd, int resp, const void *arg)
{
	const struct sock_fprog *p = arg;
	long n, i;
	double t0, ns;

	if (p && (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		  syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, p)))
		_exit(3);
	for (;;) {
		double best_ns = -1;
		long per, b;

		if (read(cmd, &n, sizeof(n)) != sizeof(n) || n <= 0)
			_exit(0);
		/* The best of BATCHES short batches: a batch that another
		 * task on the shared machine interrupted is dropped. */
		per = n / BATCHES > 0 ? n / BATCHES : 1;
		for (b = 0; b < BATCHES; b++) {
			t0 = bench_now_ns();
			for (i = 0; i < per; i++)
				raw_getppid();
			ns = (bench_now_ns() - t0) / per;
			if (best_ns < 0 || ns < best_ns)
				best_ns = ns;
		}
		if (write(resp, &best_ns, sizeof(best_ns)) != sizeof(best_ns))
			_exit(4);
	}
}

static int worker_start(int w, const struct sock_fprog *p)
{
	return bench_worker_start(&workers[w], "syscall_cost", worker_names[w],
				  worker_loop, p);
}

/* ns per call over n calls in worker w, or -1 if it died. */
static double measure(struct bench_worker *w, long n)
{
	double ns;

	return bench_worker_call(w, &n, sizeof(n), &ns, sizeof(ns)) ? -1 : ns;
}

/* ---- the variants ------------------------------------------------------------- */

enum { V_NONE, V_FLOOR, V_FLOORT, V_IDLE, V_UNTRACKED, V_SF16, V_K16, V_SF300, V_K300, V_SF16C,
       V_SF16S, V_SF16L, V_SF16L2, V_COUNT };
static const char *const vnames[V_COUNT] = {
	"none", "floor", "floor-tail", "idle", "untracked", "sf-16", "seccomp-16", "sf-300",
	"seccomp-300", "sf-16-count", "sf-16-shadow", "sf-16-log", "sf-16-log-stats2" };
static const char *const vdesc[V_COUNT] = {
	"no program attached",
	"empty tp_btf/sys_enter program",
	"the same, and a tail call into an empty program",
	"runtime open, nothing confined",
	"untracked task, another confined",
	"16-insn filter, sfilter",
	"16-insn filter, kernel seccomp",
	"300-rule allowlist, end case, sfilter",
	"300-rule allowlist, end case, kernel seccomp",
	"16-insn filter, sfilter, --count",
	"16-insn filter, sfilter, and itself as a --shadow candidate",
	"16-insn filter returning LOG, sfilter, its events dropped (nobody reads them)",
	"the same, its sf_stats counter updated twice a call",
};

static double res[V_COUNT][MAX_ROUNDS];
static double open_ms[MAX_ROUNDS], attach_ms[MAX_ROUNDS];
static int foreign[MAX_ROUNDS];
static int verbose;

static void phase_bare(int r, long n)
{
	/* Seen in the "bare" phase, any raw/BTF tracepoint link is another
	 * user's: it would put every task on the slow path and taint "none". */
	foreign[r] = bench_links(BENCH_LINK_TP, NULL, 0);
	res[V_NONE][r] = measure(&workers[W_PLAIN], n);
	res[V_K16][r] = measure(&workers[W_K16], n);
	res[V_K300][r] = measure(&workers[W_K300], n);
}

/* floor and floor-tail, in an order that alternates with the round. */
static int phase_floor(int r, long n, struct bench_floor_bpf *skel)
{
	struct bpf_program *p[2] = { skel->progs.bench_floor, skel->progs.bench_floor_tail };
	int v[2] = { V_FLOOR, V_FLOORT }, i, k;

	for (i = 0; i < 2; i++) {
		struct bpf_link *link;

		k = (i + r) & 1;
		link = bpf_program__attach(p[k]);
		if (!link) {
			fprintf(stderr, "syscall_cost: attach %s: %s\n", vnames[v[k]],
				strerror(errno));
			return -errno;
		}
		res[v[k]][r] = measure(&workers[W_PLAIN], n);
		bpf_link__destroy(link);
	}
	return 0;
}

/* The floor programs, loaded; bench_floor_tail's target in slot 1. */
static struct bench_floor_bpf *floor_load(void)
{
	struct bench_floor_bpf *skel = bench_floor_bpf__open();
	__u32 key = 1;
	int fd;

	if (!skel)
		return NULL;
	bpf_program__set_autoattach(skel->progs.bench_tail_target, false);
	skel->bss->bench_slot = 1;
	if (bench_floor_bpf__load(skel))
		goto fail;
	fd = bpf_program__fd(skel->progs.bench_tail_target);
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.bench_progs), &key, &fd, 0))
		goto fail;
	return skel;
fail:
	bench_floor_bpf__destroy(skel);
	return NULL;
}

/*
 * sf_bench_stats_twice in the .bss of the runtime this process opened,
 * mapped here (the runtime keeps its own mapping to itself): found by its
 * name in the map's BTF. NULL when no .bss map of this process has it;
 * *unmap, *size: what to munmap().
 */
static volatile uint32_t *stats_switch(void **unmap, size_t *size)
{
	volatile uint32_t *sw = NULL;
	struct dirent *e;
	DIR *dir = opendir("/proc/self/fd");

	while (dir && !sw && (e = readdir(dir))) {
		struct bpf_map_info info = { 0 };
		__u32 len = sizeof(info), i;
		const struct btf_var_secinfo *vs;
		const struct btf_type *t;
		int fd = atoi(e->d_name);
		struct btf *btf;

		if (fd <= 2 || bpf_obj_get_info_by_fd(fd, &info, &len) || !info.btf_id ||
		    !strstr(info.name, ".bss") || !(btf = btf__load_from_kernel_by_id(info.btf_id)))
			continue;
		t = btf__type_by_id(btf, info.btf_value_type_id);
		for (i = 0, vs = t && btf_is_datasec(t) ? btf_var_secinfos(t) : NULL;
		     vs && i < btf_vlen(t); i++, vs++) {
			const struct btf_type *v = btf__type_by_id(btf, vs->type);
			void *m;

			if (strcmp(btf__name_by_offset(btf, v->name_off), "sf_bench_stats_twice"))
				continue;
			*size = ((size_t)info.value_size + 4095) & ~(size_t)4095;
			m = mmap(NULL, *size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
			if (m != MAP_FAILED) {
				*unmap = m;
				sw = (volatile uint32_t *)((char *)m + vs->offset);
			}
			break;
		}
		btf__free(btf);
	}
	if (dir)
		closedir(dir);
	return sw;
}

/* What sf_stats has counted of getppid's LOG verdicts. */
static uint64_t logged_getppid(struct sf_runtime *rt)
{
	struct sf_stat *all = NULL;
	uint64_t sum = 0;
	size_t k, i;

	if (sf_runtime_stats(rt, &all, &k) == 0)
		for (i = 0; i < k; i++)
			if (all[i].nr == BENCH_NR_GETPPID && all[i].taken == SF_TAKEN_LOGGED)
				sum += all[i].count;
	free(all);
	return sum;
}

/* sf-16-log and sf-16-log-stats2, in an order that alternates with the
 * round; -1 for the second where the switch is not found. With -v, the
 * updates per call each made (1 and 2: the switch works). */
static void measure_stats(struct sf_runtime *rt, int r, long n)
{
	void *m = NULL;
	size_t size = 0;
	volatile uint32_t *sw = stats_switch(&m, &size);
	long calls = n / BATCHES > 0 ? n / BATCHES * BATCHES : BATCHES;
	uint64_t before;
	int i;

	res[V_SF16L2][r] = -1;
	for (i = 0; i < 2; i++) {
		bool twice = ((i + r) & 1) != 0;

		if (twice && !sw)
			continue;
		if (sw)
			*sw = twice;
		before = logged_getppid(rt);
		res[twice ? V_SF16L2 : V_SF16L][r] = measure(&workers[W_S16L], n);
		if (verbose)
			printf("round %2d: %s: %.2f sf_stats updates per call\n", r,
			       vnames[twice ? V_SF16L2 : V_SF16L],
			       (double)(logged_getppid(rt) - before) / (double)calls);
	}
	if (sw)
		*sw = 0;
	if (m)
		munmap(m, size);
	else if (r == 0)
		fprintf(stderr, "syscall_cost: no sf_bench_stats_twice in this runtime's .bss: "
			"no sf-16-log-stats2\n");
}

static int phase_runtime(int r, long n)
{
	struct sf_runtime_opts opts = { .verbose = false };
	struct sf_runtime *rt = NULL;
	uint32_t id;
	double t0 = bench_now_ns();
	int err;

	err = sf_runtime_open(&rt, &opts);
	if (err) {
		fprintf(stderr, "syscall_cost: sf_runtime_open: %s\n", strerror(-err));
		return err;
	}
	open_ms[r] = (bench_now_ns() - t0) / 1e6;
	res[V_IDLE][r] = measure(&workers[W_PLAIN], n);
	t0 = bench_now_ns();
	err = sf_runtime_attach(rt, workers[W_S16].pid, &p16, 0, &id, NULL);
	if (!err)
		err = sf_runtime_attach(rt, workers[W_S300].pid, &p300, 0, &id, NULL);
	attach_ms[r] = (bench_now_ns() - t0) / 2e6;
	if (!err)
		err = sf_runtime_attach(rt, workers[W_S16C].pid, &p16, SF_ATTACH_COUNT, &id, NULL);
	if (!err)
		err = sf_runtime_attach(rt, workers[W_S16S].pid, &p16, 0, &id, NULL);
	if (!err)
		err = sf_runtime_attach(rt, workers[W_S16S].pid, &p16, SF_ATTACH_SHADOW, &id, NULL);
	if (!err)
		err = sf_runtime_attach(rt, workers[W_S16L].pid, &p16log, 0, &id, NULL);
	if (err) {
		fprintf(stderr, "syscall_cost: sf_runtime_attach: %d (%s)\n", err,
			strerror(err < 0 ? -err : 0));
		sf_runtime_close(rt);
		return err;
	}
	if (r == 0)
		printf("runtime tier: %s\n", sf_tier_name(sf_runtime_tier(rt)));
	res[V_UNTRACKED][r] = measure(&workers[W_PLAIN], n);
	res[V_SF16][r] = measure(&workers[W_S16], n);
	res[V_SF300][r] = measure(&workers[W_S300], n);
	res[V_SF16C][r] = measure(&workers[W_S16C], n);
	res[V_SF16S][r] = measure(&workers[W_S16S], n);
	measure_stats(rt, r, n);
	sf_runtime_close(rt);
	return 0;
}

/* Median over rounds of res[x][r] / res[y][r]: paired within a round. */
static double paired_ratio(int x, int y, int n)
{
	return bench_paired_median(res[x], res[y], n);
}

/* Median over rounds of res[x][r] - res[y][r] (negative ones too). */
static double paired_diff(int x, int y, int n)
{
	return bench_paired_diff_median(res[x], res[y], n);
}

/* What is ours and what the kernel's filter costs, each above its own
 * floor: sfilter's filter above an untracked task's call (the dispatcher
 * attached), seccomp's above a bare call. Paired within a round. */
static void filter_cost_goals(int rounds)
{
	static const struct { const char *name; int sf, k; double goal; } g[] = {
		{ "idle / none (zero tax while nothing is confined)", -1, -1, 1.01 },
		{ "16-insn filter cost: (sf-16 - untracked) / (seccomp-16 - none)",
		  V_SF16, V_K16, 1.0 },
		{ "300-rule filter cost: (sf-300 - untracked) / (seccomp-300 - none)",
		  V_SF300, V_K300, 0.5 },
	};
	double a[MAX_ROUNDS], b[MAX_ROUNDS], m;
	size_t i;
	int r;

	for (i = 0; i < BENCH_ARRAY_SIZE(g); i++) {
		if (g[i].sf < 0) {
			m = paired_ratio(V_IDLE, V_NONE, rounds);
		} else {
			for (r = 0; r < rounds; r++) {
				a[r] = res[g[i].sf][r] - res[V_UNTRACKED][r];
				b[r] = res[g[i].k][r] - res[V_NONE][r];
			}
			m = bench_paired_median(a, b, rounds);
		}
		printf("| %s | %.3f | | <= %.2f | %s |\n", g[i].name, m, g[i].goal,
		       bench_verdict(m, g[i].goal));
	}
}

int main(int argc, char **argv)
{
	bool emulated = bench_emulated();
	int rounds = emulated ? 5 : 15, r, v, i;
	long n = emulated ? 5000 : 200000;
	struct bench_floor_bpf *skel;
	struct utsname uts;

	if (bench_round_opts(argc, argv, "CALLS", &rounds, &n, &verbose))
		return 2;
	if (rounds < 1 || rounds > MAX_ROUNDS || n < 1) {
		fprintf(stderr, "syscall_cost: rounds 1..%d, calls >= 1\n", MAX_ROUNDS);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	uname(&uts);
	bench_build_f300(f300);
	memcpy(f16log, f16, sizeof(f16));
	f16log[BENCH_ARRAY_SIZE(f16) - 1].k = 0x7ffc0000U; /* SECCOMP_RET_LOG */

	bench_bare_check("syscall_cost");
	skel = floor_load();
	if (!skel) {
		fprintf(stderr, "syscall_cost: load the floor program: %s\n",
			strerror(errno));
		return 1;
	}
	if (worker_start(W_PLAIN, NULL) || worker_start(W_K16, &p16) ||
	    worker_start(W_K300, &p300) || worker_start(W_S16, NULL) ||
	    worker_start(W_S300, NULL) || worker_start(W_S16C, NULL) ||
	    worker_start(W_S16S, NULL) || worker_start(W_S16L, NULL)) {
		fprintf(stderr, "syscall_cost: start workers: %s\n", strerror(errno));
		return 1;
	}

	printf("# getppid cost, kernel %s%s, %d rounds x %ld calls per variant\n",
	       uts.release, emulated ? BENCH_EMULATED_NOTE : "", rounds, n);
	/* A warm-up round, not counted. */
	phase_bare(0, n / 4 + 1);
	for (r = 0; r < rounds; r++) {
		int order = r & 1;

		if (order == 0) {
			phase_bare(r, n);
			if (phase_floor(r, n, skel) || phase_runtime(r, n))
				break;
		} else {
			if (phase_runtime(r, n) || phase_floor(r, n, skel))
				break;
			phase_bare(r, n);
		}
		if (verbose) {
			printf("round %2d:", r);
			for (v = 0; v < V_COUNT; v++)
				printf(" %s %.1f", vnames[v], res[v][r]);
			printf(" (open %.0f ms, attach %.1f ms, foreign links %d)\n",
			       open_ms[r], attach_ms[r], foreign[r]);
		}
	}
	rounds = r;

	printf("\n");
	bench_md_head("variant | what | best ns | median ns | median vs none", -1);
	for (v = 0; v < V_COUNT; v++)
		printf("| %s | %s | %.1f | %.1f | %.2f |\n", vnames[v], vdesc[v],
		       bench_best(res[v], rounds), bench_median(res[v], rounds),
		       paired_ratio(v, V_NONE, rounds));

	{
		struct {
			const char *name;
			int x, y;
			double goal;
		} goals[] = {
			{ "untracked / floor", V_UNTRACKED, V_FLOOR, 1.05 },
			{ "sf-16 / seccomp-16", V_SF16, V_K16, 1.25 },
			{ "sf-300 / seccomp-300", V_SF300, V_K300, 0.90 },
		};

		printf("\n");
		bench_md_head("goal | median paired ratio | ratio of bests | target |", -1);
		for (i = 0; i < (int)BENCH_ARRAY_SIZE(goals); i++) {
			double m = paired_ratio(goals[i].x, goals[i].y, rounds);
			double bx = bench_best(res[goals[i].x], rounds);
			double by = bench_best(res[goals[i].y], rounds);

			printf("| %s | %.3f | %.3f | <= %.2f | %s |\n", goals[i].name,
			       m, bx > 0 && by > 0 ? bx / by : -1, goals[i].goal,
			       bench_verdict(m, goals[i].goal));
		}
		printf("| task storage per tracked task (sizeof(struct sf_task)) | %zu bytes | | <= 64 | %s |\n",
		       sizeof(struct sf_task), sizeof(struct sf_task) <= 64 ? "met" : "missed");
		filter_cost_goals(rounds);
		printf("\nsf-16-count / sf-16 %.3f, sf-16-shadow / sf-16 %.3f, "
		       "sf-16-log / sf-16 %.3f\n", paired_ratio(V_SF16C, V_SF16, rounds),
		       paired_ratio(V_SF16S, V_SF16, rounds), paired_ratio(V_SF16L, V_SF16, rounds));
		printf("a logged call's event path (sf-16-log - sf-16, median paired): %.1f ns; "
		       "its sf_stats update (sf-16-log-stats2 - sf-16-log): %.1f ns, "
		       "sf-16-log-stats2 / sf-16-log %.3f\n", paired_diff(V_SF16L, V_SF16, rounds),
		       paired_diff(V_SF16L2, V_SF16L, rounds), paired_ratio(V_SF16L2, V_SF16L, rounds));
		printf("a tail call (floor-tail - floor, median paired): %.1f ns; "
		       "what the filters cost above untracked: sf-16 %.1f ns, sf-300 %.1f ns\n",
		       paired_diff(V_FLOORT, V_FLOOR, rounds), paired_diff(V_SF16, V_UNTRACKED, rounds),
		       paired_diff(V_SF300, V_UNTRACKED, rounds));
		printf("floor / none %.3f, untracked / none %.3f; "
		       "runtime open %.0f ms median, attach %.1f ms median per filter\n",
		       paired_ratio(V_FLOOR, V_NONE, rounds),
		       paired_ratio(V_UNTRACKED, V_NONE, rounds),
		       bench_median(open_ms, rounds), bench_median(attach_ms, rounds));
		for (r = 0, i = 0; r < rounds; r++)
			i += foreign[r] != 0;
		if (i)
			printf("warning: other raw/BTF tracepoint links were attached in %d "
			       "of %d rounds' bare phase: none and seccomp-* are tainted\n",
			       i, rounds);
	}

	for (i = 0; i < W_COUNT; i++) {
		long zero = 0;

		bench_worker_stop(&workers[i], &zero, sizeof(zero));
	}
	bench_floor_bpf__destroy(skel);
	return 0;
}
