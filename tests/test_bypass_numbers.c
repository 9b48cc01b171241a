// SPDX-License-Identifier: GPL-2.0-only
/*
 * Bypass attempts through syscall numbers a filter may not expect: x32
 * numbers (nr | 0x40000000), numbers of 512 and above (past the runtime's
 * action table), negative ones (syscall(-1)), and register values above
 * 32 bits, which the kernel truncates to the int that seccomp_data.nr
 * holds (and runs: (1 << 32) | 39 is getpid). Where int $0x80 runs, i386
 * numbers too.
 *
 * sfilter must give seccomp's verdict, no more and no less: a filter
 * denying nr X is not bypassed by X | 0x40000000 unless seccomp lets that
 * through as well. One iteration: one (filter, call) pair; the call is made
 * once in a child under the real seccomp filter and once in a child under
 * the same filter attached by the runtime. An escape: seccomp killed, the
 * sfilter child made the call and lived on. A wrongful kill: seccomp let
 * the call through, sfilter killed. The filters are drawn from templates
 * (==, >=, >, JSET, arch checks, an allow-list, masks, an argument test
 * that makes the chain program run instead of the action table) with
 * constants drawn from the same edge numbers as the calls; deny branches
 * use KILL_PROCESS, KILL_THREAD or an unknown action, allow branches ALLOW
 * or LOG, whose verdicts every tier gives as seccomp does.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "bypass.h"
#include "c2e.h"
#include "kseccomp.h"
#include "probe.h"
#include "progs.h"
#include "runtime.h"
#include "sockfilter.h"

#include <sched.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define X32 C2E_X32_SYSCALL_BIT

/* Calls that are harmless whatever the kernel makes of them, with all
 * arguments 0: getpid and the like, unassigned numbers (ENOSYS), x32
 * rt_sigaction(0, ...) (EINVAL). rax is the whole register. */
struct call {
	bool i386;
	uint64_t rax;
};

static const struct call calls64[] = {
	{ false, 39 }, { false, 110 }, { false, 102 }, { false, 104 },
	{ false, X32 | 39 }, { false, X32 | 110 }, { false, X32 | 102 },
	{ false, 511 }, { false, 512 }, { false, 513 }, { false, 1023 }, { false, 1024 },
	{ false, 0x3fffffff }, { false, X32 | 511 }, { false, X32 | 512 },
	{ false, 0x7fffffff }, { false, 0x80000000 }, { false, 0xffffffff },
	{ false, 0xfffffffe }, { false, 0xc0000027 },
	{ false, 0x100000027ULL }, { false, 0x10000006eULL }, { false, 0x8000000000000027ULL },
	{ false, 0xffffffff00000027ULL }, { false, (uint64_t)-1 }, { false, (uint64_t)-2 },
};

/* i386: getpid 20, getppid 64, getuid 24, getgid 47, getuid32 199. */
static const struct call calls32[] = {
	{ true, 20 }, { true, 64 }, { true, 24 }, { true, 47 }, { true, 199 },
	{ true, 511 }, { true, 512 }, { true, X32 | 20 }, { true, 0x7fffffff },
	{ true, 0x80000000 }, { true, 0xffffffff },
};

/* Constants the templates compare with: the numbers the calls present. */
static const uint32_t edges[] = {
	39, 110, 102, 104, 20, 64, 24, 199, 231, 511, 512, 513, 1023, 1024,
	X32 | 39, X32 | 110, X32 | 20, X32 | 511, X32 | 512, X32, 0x3fffffff,
	0x7fffffff, 0x80000000, 0xc0000027, 0xfffffffe, 0xffffffff,
};

#define OFF_NR   0
#define OFF_ARCH 4
#define OFF_ARG0 16
#define LD(off)         STMT(BPF_LD | BPF_W | BPF_ABS, off)
#define J(op, k, t, f)  JUMP(BPF_JMP | op | BPF_K, k, t, f)
#define RET(k)          STMT(BPF_RET | BPF_K, k)

struct flt {
	struct sock_filter i[12];
	unsigned short n;
	char name[64];
};

static uint32_t pick_edge(struct progs_rng *r)
{
	uint32_t k = edges[progs_below(r, ARRAY_SIZE(edges))];

	/* Now and then a neighbour: off-by-one bounds. */
	switch (progs_below(r, 6)) {
	case 0: return k + 1;
	case 1: return k - 1;
	default: return k;
	}
}

static uint32_t pick_deny(struct progs_rng *r)
{
	static const uint32_t deny[] = { SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_KILL_THREAD,
					 0x00010000 /* unknown: kills the process */ };

	return deny[progs_below(r, ARRAY_SIZE(deny))];
}

static uint32_t pick_allow(struct progs_rng *r)
{
	return progs_below(r, 4) ? SECCOMP_RET_ALLOW : SECCOMP_RET_LOG;
}

enum { T_EQ, T_GE, T_GT, T_SET, T_ARCH, T_ARCH_NR, T_ALLOWLIST, T_MASK, T_ARG, T_SUB,
       N_TEMPLATES };

static void make_filter_k(struct flt *f, int t, uint32_t k, uint32_t k2, uint32_t deny,
			  uint32_t allow)
{
	static const char *const op[] = { "==", ">=", ">", "&" };
	static const uint16_t jop[] = { BPF_JEQ, BPF_JGE, BPF_JGT, BPF_JSET };

	f->n = 0;
#define PUT(insn) (f->i[f->n++] = (insn))
	switch (t) {
	case T_EQ: case T_GE: case T_GT: case T_SET:
		PUT(LD(OFF_NR));
		PUT(J(jop[t], k, 0, 1));
		PUT(RET(deny));
		PUT(RET(allow));
		snprintf(f->name, sizeof(f->name), "kill nr %s 0x%x", op[t], k);
		break;
	case T_ARCH:
		PUT(LD(OFF_ARCH));
		PUT(J(BPF_JEQ, C2E_AUDIT_ARCH_X86_64, 1, 0));
		PUT(RET(deny));
		PUT(RET(allow));
		snprintf(f->name, sizeof(f->name), "kill arch != x86_64");
		break;
	case T_ARCH_NR:
		PUT(LD(OFF_ARCH));
		PUT(J(BPF_JEQ, C2E_AUDIT_ARCH_X86_64, 0, 3));
		PUT(LD(OFF_NR));
		PUT(J(BPF_JEQ, k, 0, 1));
		PUT(RET(deny));
		PUT(RET(allow));
		snprintf(f->name, sizeof(f->name), "kill x86_64 nr == 0x%x", k);
		break;
	case T_ALLOWLIST:
		/* exit_group stays allowed, the way real allow-lists are. */
		PUT(LD(OFF_NR));
		PUT(J(BPF_JEQ, k, 3, 0));
		PUT(J(BPF_JEQ, k2, 2, 0));
		PUT(J(BPF_JEQ, 231, 1, 0));
		PUT(RET(deny));
		PUT(RET(allow));
		snprintf(f->name, sizeof(f->name), "allow only 0x%x, 0x%x, 231", k, k2);
		break;
	case T_MASK:
		/* A filter that means to catch x32 too: its verdict then
		 * follows the mask, in seccomp and in sfilter alike. */
		PUT(LD(OFF_NR));
		PUT(STMT(BPF_ALU | BPF_AND | BPF_K, ~X32));
		PUT(J(BPF_JEQ, k & ~X32, 0, 1));
		PUT(RET(deny));
		PUT(RET(allow));
		snprintf(f->name, sizeof(f->name), "kill (nr & ~x32) == 0x%x", k & ~X32);
		break;
	case T_ARG:
		PUT(LD(OFF_NR));
		PUT(J(BPF_JEQ, k, 0, 3));
		PUT(LD(OFF_ARG0));
		PUT(J(BPF_JEQ, 0, 0, 1));
		PUT(RET(deny));
		PUT(RET(allow));
		snprintf(f->name, sizeof(f->name), "kill nr == 0x%x with args[0] == 0", k);
		break;
	default: /* T_SUB */
		PUT(LD(OFF_NR));
		PUT(STMT(BPF_ALU | BPF_SUB | BPF_K, k));
		PUT(J(BPF_JEQ, 0, 0, 1));
		PUT(RET(deny));
		PUT(RET(allow));
		snprintf(f->name, sizeof(f->name), "kill nr - 0x%x == 0", k);
		break;
	}
#undef PUT
}

static void make_filter(struct progs_rng *r, struct flt *f)
{
	uint32_t k = pick_edge(r), k2 = pick_edge(r), deny = pick_deny(r), allow = pick_allow(r);

	make_filter_k(f, (int)progs_below(r, N_TEMPLATES), k, k2, deny, allow);
}

/* The filters every call meets first: x32 variants and their bit, the
 * table's end, negative numbers, the arch. */
static const struct { int t; uint32_t k; } fixed[] = {
	{ T_EQ, 39 }, { T_EQ, X32 | 39 }, { T_GE, 512 }, { T_SET, X32 }, { T_ARCH, 0 },
	{ T_EQ, 0xffffffff }, { T_GT, 0x7fffffff }, { T_MASK, 39 }, { T_ARG, 39 },
};

struct board {
	struct bp_flags f;
	volatile int ready, go;
};
static struct board *B;

static void make_call(const struct call *c)
{
	static const uint64_t zero[6];

	B->f.reached = 1;
	if (c->i386)
		ksec_stub_int80((long)c->rax, zero);
	else
		ksec_stub_syscall64((long)c->rax, zero);
	B->f.survived = 1;
	ksec_stub_syscall64(SYS_exit_group, zero);
}

/* Children share this process's memory (clone(CLONE_VM), a stack of
 * their own): no copy of the runner's address space per call. */
static char child_stack[64 * 1024] __attribute__((aligned(16)));
static const struct flt *cur_f;
static const struct call *cur_c;

static pid_t spawn(int (*fn)(void *))
{
	fflush(stdout);
	return clone(fn, child_stack + sizeof(child_stack), CLONE_VM | SIGCHLD, NULL);
}

static int seccomp_child(void *arg)
{
	struct sock_fprog p = { cur_f->n, (struct sock_filter *)cur_f->i };

	(void)arg;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &p))
		syscall(SYS_exit_group, 90);
	make_call(cur_c);
	return 0;
}

/* The call under the real seccomp filter: whether it came back. -1 when
 * the child ended otherwise than at the call (returned, or SIGSYS). */
static int under_seccomp(const struct flt *f, const struct call *c)
{
	int st;
	pid_t pid;

	memset((void *)B, 0, sizeof(*B));
	cur_f = f;
	cur_c = c;
	pid = spawn(seccomp_child);
	if (!ASSERT_TRUE(pid > 0, "clone"))
		return -1;
	st = bp_wait(pid, 10);
	if (!B->f.reached) {
		test_fail(__FILE__, __LINE__, "seccomp child: status 0x%x before the call", st);
		return -1;
	}
	if (!B->f.survived && !(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS)) {
		test_fail(__FILE__, __LINE__, "seccomp child: status 0x%x at the call", st);
		return -1;
	}
	return B->f.survived;
}

static int sfilter_child(void *arg)
{
	(void)arg;
	B->ready = 1;
	while (!B->go)
		__builtin_ia32_pause();
	make_call(cur_c);
	return 0;
}

/* The same call under the same filter attached by the runtime; the wait
 * status, or -2 when the test cannot go on. The child waits for the
 * attach spinning on shared memory: a filter that allows almost nothing
 * (the allow-lists) must meet the call first, not a read() or fork()'s
 * own return path. */
static int under_sfilter(struct sf_runtime *rt, const struct flt *f, const struct call *c)
{
	struct sock_fprog p = { f->n, (struct sock_filter *)f->i };
	pid_t pid;

	memset((void *)B, 0, sizeof(*B));
	cur_c = c;
	pid = spawn(sfilter_child);
	if (!ASSERT_TRUE(pid > 0, "clone"))
		return -2;
	if (!ASSERT_TRUE(bp_spin_until(&B->ready, 1, 10), "the child is ready") ||
	    bp_attach(rt, pid, &p, 0, NULL, false)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -2;
	}
	B->go = 1;
	return bp_wait(pid, 10);
}

TEST(bypass_odd_syscall_numbers_get_exactly_seccomps_verdict)
{
	size_t i, n = bp_iterations(1000, 50), n64 = ARRAY_SIZE(calls64), n_calls, n_fixed;
	size_t per_filter = 20, shown = (size_t)-1;
	struct sf_runtime *rt;
	struct progs_rng r;
	struct bp_tally t = { 0 };
	struct flt f;
	bool i386;
	char why[256];
	double t0 = bp_now();
	long killed = 0;

	i386 = TEST_REQUIRE(probe_int80(why, sizeof(why)), "i386", why);
	if (test_failed())
		return;
	test_log("%s\n", probe_x32(why, sizeof(why)) >= 0 ? why : "x32 probe failed");
	rt = bp_runtime_open(false);
	B = bp_shared(sizeof(*B));
	if (!rt || !B)
		goto out;
	progs_seed(&r, 0x5eed0b1a5ULL);
	n_calls = n64 + (i386 ? ARRAY_SIZE(calls32) : 0);
	n_fixed = ARRAY_SIZE(fixed) * n_calls;
	for (i = 0; i < n && !test_failed(); i++) {
		/* First the pairs of the filters that matter most with every
		 * call (spread over all of them when there are fewer
		 * iterations), then random filters, each for per_filter calls
		 * (each is loaded once for all of them). */
		size_t pair = n < n_fixed ? i * n_fixed / n : i;
		size_t k = i < n_fixed ? pair % n_calls : progs_below(&r, (uint32_t)n_calls);
		const struct call *c = k < n64 ? &calls64[k] : &calls32[k - n64];
		struct bp_flags sf;
		char what[160];
		int kernel, st;

		if (i < n_fixed && pair / n_calls != shown)
			make_filter_k(&f, fixed[pair / n_calls].t, fixed[pair / n_calls].k, 0,
				      SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_ALLOW);
		else if (i >= n_fixed && (i - n_fixed) % per_filter == 0)
			make_filter(&r, &f);
		shown = pair / n_calls;
		kernel = under_seccomp(&f, c);
		if (kernel < 0)
			break;
		st = under_sfilter(rt, &f, c);
		if (st == -2)
			break;
		sf = B->f;
		snprintf(what, sizeof(what), "%s: %s call 0x%llx (seccomp: %s)", f.name,
			 c->i386 ? "i386" : "x86_64", (unsigned long long)c->rax,
			 kernel ? "returned" : "killed");
		killed += !kernel;
		if (kernel)
			/* It came back under seccomp: so must it here (dying at a
			 * denied exit_group afterwards is the filter's right). */
			bp_count(&t, sf.survived ? BP_LIVED : sf.reached ? BP_WRONGFUL :
				 bp_judge_denied(st, &sf), st, what);
		else
			bp_count(&t, bp_judge_denied(st, &sf), st, what);
	}
	test_log("%ld of %ld calls were killed by seccomp\n", killed, t.iterations);
	bp_report("syscall-numbers", "one (filter, call) pair: the call under seccomp and "
		  "under sfilter, x32, >= 512, negative and > 32-bit numbers", &t, bp_now() - t0);
out:
	sf_runtime_close(rt);
}
