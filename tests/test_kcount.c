// SPDX-License-Identifier: GPL-2.0-only
/*
 * c2e_kernel_insn_count() is the length of the kernel's own cBPF->eBPF
 * conversion of a seccomp filter (net/core/filter.c, bpf_convert_filter()),
 * the number seccomp_attach_filter() sums against MAX_INSNS_PER_PATH:
 *
 *	total = new->prog->len + sum over attached (prog->len + 4)
 *	total > 32768  ->  ENOMEM
 *
 * The running kernel is the oracle. In a forked child with no_new_privs we
 * attach "pad" filters, then the filter F under test, sized so the total is
 * exactly 32768 (must attach) or 32769 (must fail with ENOMEM). F is always
 * attached last, so whatever F returns it never filters a syscall that the
 * check needs: the child stores the result in shared memory and spins
 * without making another syscall until the parent SIGKILLs it.
 *
 * A pad of m classic instructions is (m-1) x "ld #0" then "ret ALLOW":
 * 3 (prologue) + (m-1) + 2 = m + 4 eBPF instructions; the first tests
 * below pin that down with the same method before anything relies on it.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "c2e.h"
#include "lib/corpus.h"
#include "sockfilter.h"

#include <linux/audit.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RET_ALLOW 0x7fff0000U

/* ---- pads ---------------------------------------------------------------- */

#define PAD_MAX      C2E_MAX_INSNS
#define PAD_CHAIN(m) ((m) + 4 + C2E_CHAIN_PENALTY) /* one pad's share of a sum */

static struct sock_filter pad_insns[PAD_MAX];

/* pad(m) is the last m instructions of pad_insns. */
static const struct sock_filter *pad(int m)
{
	int i;

	if (pad_insns[PAD_MAX - 1].code == 0) {
		for (i = 0; i < PAD_MAX - 1; i++)
			pad_insns[i] = STMT(BPF_LD | BPF_IMM, 0);
		pad_insns[PAD_MAX - 1] = STMT(BPF_RET | BPF_K, RET_ALLOW);
	}
	return &pad_insns[PAD_MAX - m];
}

/* Splits a chain share P (sum of attached len + 4) into pad sizes. */
static int plan_pads(long share, int *sizes, int max)
{
	long n, base, rem, i;

	if (share == 0)
		return 0;
	n = (share + PAD_CHAIN(PAD_MAX) - 1) / PAD_CHAIN(PAD_MAX);
	if (n > max || share < n * PAD_CHAIN(1))
		return -1;
	base = share / n;
	rem = share % n;
	for (i = 0; i < n; i++)
		sizes[i] = (int)(base + (i < rem)) - PAD_CHAIN(0);
	return (int)n;
}

/* ---- the kernel oracle --------------------------------------------------- */

struct probe_shared {
	int done;
	int pad_err;   /* errno of a failed pad attach (setup problem) */
	int f_err;     /* errno of F's attach, 0 when it attached */
};

static struct probe_shared *shared;

static long sys_seccomp_filter(const struct sock_filter *f, size_t len)
{
	struct sock_fprog prog = {
		.len = (unsigned short)len,
		.filter = (struct sock_filter *)f,
	};

	return syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

static __attribute__((noreturn)) void spin(void)
{
	/* No syscalls from here on: F may refuse or kill any of them. */
	for (;;)
		__builtin_ia32_pause();
}

/*
 * Attaches pads whose chain share is `share`, then F. Returns 1 when F
 * attached, 0 when the kernel refused it with ENOMEM, or -errno for any
 * other outcome (-EINVAL: the kernel refused F itself; -ENOTRECOVERABLE:
 * a pad failed).
 */
static int kernel_attach(const struct sock_filter *f, size_t len, long share)
{
	int sizes[16], npads, i, status;
	struct timespec t0, t;
	pid_t pid;

	npads = plan_pads(share, sizes, 16);
	if (npads < 0)
		return -ERANGE;
	if (!shared) {
		shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (shared == MAP_FAILED) {
			shared = NULL;
			return -errno;
		}
	}
	memset(shared, 0, sizeof(*shared));
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
			shared->pad_err = errno;
			goto out;
		}
		for (i = 0; i < npads; i++) {
			if (sys_seccomp_filter(pad(sizes[i]), sizes[i])) {
				shared->pad_err = errno;
				goto out;
			}
		}
		shared->f_err = sys_seccomp_filter(f, len) ? errno : 0;
out:
		__atomic_store_n(&shared->done, 1, __ATOMIC_RELEASE);
		spin();
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!__atomic_load_n(&shared->done, __ATOMIC_ACQUIRE)) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return -ECHILD; /* died before answering */
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 120) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return -ETIMEDOUT;
		}
		usleep(20);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	if (shared->pad_err)
		return -ENOTRECOVERABLE;
	if (shared->f_err == 0)
		return 1;
	if (shared->f_err == ENOMEM)
		return 0;
	return -shared->f_err;
}

/* The kernel's count for F, found by bisection: the smallest c such that
 * F attaches when the rest of the chain is 32768 - c. For diagnostics. */
static int kernel_count_bisect(const struct sock_filter *f, size_t len)
{
	int lo = 1, hi = C2E_MAX_CHAIN_INSNS - PAD_CHAIN(1), mid, r;

	if (kernel_attach(f, len, C2E_MAX_CHAIN_INSNS - hi) != 1)
		return -1;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		r = kernel_attach(f, len, C2E_MAX_CHAIN_INSNS - mid);
		if (r < 0)
			return -1;
		if (r)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static void dump_filter(const struct sock_filter *f, size_t len)
{
	size_t i;

	printf("    filter (%zu insns):", len);
	for (i = 0; i < len && i < 48; i++)
		printf("%s{0x%02x,%u,%u,0x%x}", i % 4 ? " " : "\n      ",
		       f[i].code, f[i].jt, f[i].jf, f[i].k);
	printf("%s\n", len > 48 ? "\n      ..." : "");
}

/* The environment check every kernel test shares: we must start with no
 * filter of our own, or the chain sum has unknown terms. */
static bool kernel_usable(void)
{
	char line[256];
	FILE *fp = fopen("/proc/self/status", "r");
	int mode = -1;

	if (fp) {
		while (fgets(line, sizeof(line), fp))
			if (sscanf(line, "Seccomp: %d", &mode) == 1)
				break;
		fclose(fp);
	}
	if (mode != 0) {
		test_skip("process already in seccomp mode %d: chain sum unknown", mode);
		return false;
	}
	return true;
}

/*
 * The core check: with the rest of the chain at 32768 - c the kernel must
 * accept F, at 32769 - c refuse it with ENOMEM. Reports the kernel's real
 * count on disagreement.
 */
static bool kernel_agrees(const struct sock_filter *f, size_t len,
			  const char *name)
{
	int c = c2e_kernel_insn_count(f, len), at, over, real;

	if (c < 0) {
		test_fail(__FILE__, __LINE__, "%s: c2e_kernel_insn_count: %s",
			  name, strerror(-c));
		return false;
	}
	at = kernel_attach(f, len, C2E_MAX_CHAIN_INSNS - c);
	over = at == 1 ? kernel_attach(f, len, C2E_MAX_CHAIN_INSNS - c + 1) : 0;
	if (at == 1 && over == 0) {
		test_log("%-40s classic %4zu  kernel eBPF %5d\n", name, len, c);
		return true;
	}
	if (at < 0 || over < 0) {
		test_fail(__FILE__, __LINE__,
			  "%s: kernel probe failed: %s (at 32768: %d, at 32769: %d)",
			  name, strerror(-(at < 0 ? at : over)), at, over);
		dump_filter(f, len);
		return false;
	}
	real = kernel_count_bisect(f, len);
	test_fail(__FILE__, __LINE__,
		  "%s: predicted %d eBPF insns, but the kernel %s at chain total %d; "
		  "kernel's count is %d",
		  name, c, at == 1 ? "accepted" : "refused",
		  at == 1 ? C2E_MAX_CHAIN_INSNS + 1 : C2E_MAX_CHAIN_INSNS, real);
	dump_filter(f, len);
	return false;
}

/* ---- the rules, as read from bpf_convert_filter() ------------------------ */

struct rule_case {
	const char *name;
	struct sock_filter insns[6];
	size_t len;
	int expect;
};

#define CASE(n, e, ...) { n, { __VA_ARGS__ }, \
	sizeof((struct sock_filter[]){ __VA_ARGS__ }) / sizeof(struct sock_filter), e }
#define RK STMT(BPF_RET | BPF_K, RET_ALLOW)
#define RA STMT(BPF_RET | BPF_A, 0)
/* Constant forms for static tables. */
#define TRK BPF_STMT(BPF_RET | BPF_K, RET_ALLOW)
#define TRA BPF_STMT(BPF_RET | BPF_A, 0)

static const struct rule_case rule_cases[] = {
	/* prologue 3 (A ^= A, X ^= X, ctx = r1); RET K = mov + exit. */
	CASE("ret k", 5, TRK),
	CASE("ret a", 4, TRA),
	/* LD W ABS became LDX W ABS in seccomp_check_filter: one load, and
	 * no seen_ld_abs prologue. */
	CASE("ld [0]", 5, BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0), TRA),
	CASE("ld [60]", 6, BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 60), TRK),
	/* LEN became IMM 64. */
	CASE("ld len", 5, BPF_STMT(BPF_LD | BPF_W | BPF_LEN, 0), TRA),
	CASE("ldx len", 6, BPF_STMT(BPF_LDX | BPF_W | BPF_LEN, 0),
	     BPF_STMT(BPF_MISC | BPF_TXA, 0), TRA),
	CASE("ld #-1", 5, BPF_STMT(BPF_LD | BPF_IMM, 0xffffffff), TRA),
	CASE("st/ld M[0]", 6, BPF_STMT(BPF_ST, 0), BPF_STMT(BPF_LD | BPF_MEM, 0), TRA),
	CASE("stx/ldx M[15]", 7, BPF_STMT(BPF_STX, 15), BPF_STMT(BPF_LDX | BPF_MEM, 15),
	     BPF_STMT(BPF_MISC | BPF_TXA, 0), TRA),
	CASE("tax", 5, BPF_STMT(BPF_MISC | BPF_TAX, 0), TRA),
	CASE("add #0x80000000", 5, BPF_STMT(BPF_ALU | BPF_ADD | BPF_K, 0x80000000), TRA),
	CASE("neg", 5, BPF_STMT(BPF_ALU | BPF_NEG, 0), TRA),
	CASE("div #-1", 5, BPF_STMT(BPF_ALU | BPF_DIV | BPF_K, 0xffffffff), TRA),
	/* DIV X: mov32 X,X; jne X,0,+2; A ^= A; exit; div. */
	CASE("div x", 9, BPF_STMT(BPF_ALU | BPF_DIV | BPF_X, 0), TRA),
	CASE("mul x", 5, BPF_STMT(BPF_ALU | BPF_MUL | BPF_X, 0), TRA),
	/* JA is one jump, even to the next instruction. */
	CASE("ja 0", 6, BPF_STMT(BPF_JMP | BPF_JA, 0), TRK),
	CASE("ja 1", 8, BPF_STMT(BPF_JMP | BPF_JA, 1), TRK, TRK),
	/* jf == 0: one jump (jt == jf == 0 too). */
	CASE("jeq #1 0,0", 5, BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 0), TRA),
	CASE("jset #1 1,0", 8, BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 1, 1, 0), TRK, TRK),
	/* jt == 0, jf != 0: inverted, one jump; not for JSET. */
	CASE("jeq #1 0,1", 8, BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 1), TRK, TRK),
	CASE("jgt #1 0,1", 8, BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, 1, 0, 1), TRK, TRK),
	CASE("jge x 0,1", 8, BPF_JUMP(BPF_JMP | BPF_JGE | BPF_X, 0, 0, 1), TRK, TRK),
	CASE("jset #1 0,1", 9, BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 1, 0, 1), TRK, TRK),
	/* both nonzero: Jxx + JA. */
	CASE("jeq #1 1,2", 11, BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1, 1, 2), TRK, TRK, TRK),
	/* K with the top bit set: one more (mov32 tmp, k) for K forms only. */
	CASE("jeq #-1 0,0", 6, BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xffffffff, 0, 0), TRA),
	CASE("jge #0x80000000 0,1", 9,
	     BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x80000000, 0, 1), TRK, TRK),
	CASE("jset #-1 1,2", 12, BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0xffffffff, 1, 2),
	     TRK, TRK, TRK),
	CASE("jeq x(k=-1) 0,0", 5, BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_X, 0xffffffff, 0, 0), TRA),
	CASE("jgt #0x7fffffff 1,2", 11,
	     BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, 0x7fffffff, 1, 2), TRK, TRK, TRK),
};

TEST(kcount_rules_from_kernel_source)
{
	size_t i;

	for (i = 0; i < sizeof(rule_cases) / sizeof(rule_cases[0]); i++) {
		const struct rule_case *rc = &rule_cases[i];

		ASSERT_EQ(c2e_kernel_insn_count(rc->insns, rc->len), rc->expect,
			  rc->name);
	}
}

TEST(kcount_refuses_what_seccomp_refuses)
{
	struct sock_filter f[2] = { RK, RK };

	ASSERT_EQ(c2e_kernel_insn_count(f, 0), -EINVAL, "empty");
	ASSERT_EQ(c2e_kernel_insn_count(NULL, 1), -EINVAL, "NULL");
	ASSERT_EQ(c2e_kernel_insn_count(pad(PAD_MAX), PAD_MAX + 1), -EINVAL,
		  "4097 insns");
	f[0] = STMT(BPF_ALU | BPF_MOD | BPF_X, 0);
	ASSERT_EQ(c2e_kernel_insn_count(f, 2), -EINVAL, "mod x");
	f[0] = STMT(BPF_LD | BPF_H | BPF_ABS, 0);
	ASSERT_EQ(c2e_kernel_insn_count(f, 2), -EINVAL, "ldh");
	f[0] = STMT(BPF_LD | BPF_W | BPF_IND, 0);
	ASSERT_EQ(c2e_kernel_insn_count(f, 2), -EINVAL, "ld ind");
	f[0] = STMT(BPF_LDX | BPF_B | BPF_MSH, 0);
	ASSERT_EQ(c2e_kernel_insn_count(f, 2), -EINVAL, "ldx msh");
	f[0] = STMT(BPF_JMP | BPF_JA, 1);
	ASSERT_EQ(c2e_kernel_insn_count(f, 2), -EINVAL, "ja past the end");
	f[0] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1);
	ASSERT_EQ(c2e_kernel_insn_count(f, 2), -EINVAL, "jf past the end");
}

TEST(kcount_pad_formula)
{
	int m;

	for (m = 1; m <= PAD_MAX; m++)
		if (!ASSERT_EQ(c2e_kernel_insn_count(pad(m), m), m + 4, "pad"))
			break;
	/* The data point checked by hand on this machine. */
	{
		static struct sock_filter rets[PAD_MAX];

		for (m = 0; m < PAD_MAX; m++)
			rets[m] = RK;
		ASSERT_EQ(c2e_kernel_insn_count(rets, PAD_MAX), 8195, "4096 x ret");
	}
}

/* Before any other kernel test relies on pads, the kernel confirms them:
 * F = pad(m) in chains of 3 to 8 pads of other sizes. A wrong pad size
 * would shift the boundary by a different amount in each layout. */
TEST(kcount_kernel_pads)
{
	static const int ms[] = { 1, 2, 3, 17, 255, 1000, 4095, 4096 };
	char name[64];
	size_t i;

	if (!kernel_usable())
		return;
	for (i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
		snprintf(name, sizeof(name), "pad(%d)", ms[i]);
		if (!kernel_agrees(pad(ms[i]), ms[i], name))
			return;
	}
}

/* ---- every instruction form, checked against the kernel ----------------- */

static const uint32_t jump_ks[] = { 5, 0x7fffffff, 0x80000000, 0xffffffff };
static const uint16_t jump_ops[] = { BPF_JEQ, BPF_JGT, BPF_JGE, BPF_JSET };
static const uint16_t alu_ops[] = { BPF_ADD, BPF_SUB, BPF_MUL, BPF_DIV, BPF_AND,
				    BPF_OR, BPF_XOR, BPF_LSH, BPF_RSH };

static const char *alu_name(uint16_t op)
{
	static const char *const names[16] = { "add", "sub", "mul", "div", "or",
		"and", "lsh", "rsh", "neg", "mod", "xor" };

	return names[op >> 4] ? names[op >> 4] : "?";
}

static const char *jmp_name(uint16_t op)
{
	static const char *const names[16] = { "ja", "jeq", "jgt", "jge", "jset" };

	return names[op >> 4] ? names[op >> 4] : "?";
}

TEST(kcount_kernel_every_form)
{
	struct sock_filter f[8];
	char name[80];
	size_t i, j;
	int jt, jf, x;

	if (!kernel_usable())
		return;
	for (i = 0; i < sizeof(rule_cases) / sizeof(rule_cases[0]); i++)
		if (!kernel_agrees(rule_cases[i].insns, rule_cases[i].len,
				   rule_cases[i].name))
			return;
	/* ALU, K and X, small and top-bit immediates. */
	for (i = 0; i < sizeof(alu_ops) / sizeof(alu_ops[0]); i++) {
		uint16_t op = alu_ops[i];
		uint32_t k = (op == BPF_LSH || op == BPF_RSH) ? 31 : 0x80000001;

		f[0] = STMT(BPF_LDX | BPF_IMM, 3);
		f[1] = STMT(BPF_ALU | op | BPF_K, k);
		f[2] = STMT(BPF_ALU | op | BPF_X, 0);
		f[3] = RA;
		snprintf(name, sizeof(name), "%s k + %s x", alu_name(op), alu_name(op));
		if (!kernel_agrees(f, 4, name))
			return;
	}
	/* Conditional jumps: op x src x K x (jt, jf) in {0,1}x{0,1}. */
	for (i = 0; i < sizeof(jump_ops) / sizeof(jump_ops[0]); i++)
		for (x = 0; x < 2; x++)
			for (j = 0; j < sizeof(jump_ks) / sizeof(jump_ks[0]); j++)
				for (jt = 0; jt < 2; jt++)
					for (jf = 0; jf < 2; jf++) {
						f[0] = STMT(BPF_LDX | BPF_IMM, 7);
						f[1] = JUMP(BPF_JMP | jump_ops[i] |
							    (x ? BPF_X : BPF_K),
							    jump_ks[j], jt, jf);
						f[2] = RK;
						f[3] = STMT(BPF_RET | BPF_K, 0x50001);
						f[4] = RA;
						snprintf(name, sizeof(name),
							 "%s %s0x%x jt=%d jf=%d",
							 jmp_name(jump_ops[i]),
							 x ? "x k=" : "#",
							 jump_ks[j], jt, jf);
						if (!kernel_agrees(f, 5, name))
							return;
					}
}

/* The longest programs: each one's count alone is far from the 32768 the
 * kernel enforces, so only the exact boundary proves it. */
TEST(kcount_kernel_max_length)
{
	static struct sock_filter f[PAD_MAX];
	int i;

	if (!kernel_usable())
		return;
	for (i = 0; i < PAD_MAX; i++)
		f[i] = RK;
	ASSERT_EQ(c2e_kernel_insn_count(f, PAD_MAX), 8195, "4096 x ret k");
	if (!kernel_agrees(f, PAD_MAX, "4096 x ret k"))
		return;
	for (i = 0; i < PAD_MAX; i++)
		f[i] = RA;
	if (!kernel_agrees(f, PAD_MAX, "4096 x ret a"))
		return;
	for (i = 0; i < PAD_MAX - 1; i++)
		f[i] = STMT(BPF_ALU | BPF_DIV | BPF_X, 0);
	f[PAD_MAX - 1] = RA;
	if (!kernel_agrees(f, PAD_MAX, "4095 x div x"))
		return;
	for (i = 0; i < PAD_MAX - 3; i++)
		f[i] = JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x80000000, 1, 2);
	for (; i < PAD_MAX; i++)
		f[i] = RK;
	if (!kernel_agrees(f, PAD_MAX, "4093 x jset #-k 1,2"))
		return;
	for (i = 0; i < PAD_MAX - 1; i++)
		f[i] = STMT(BPF_JMP | BPF_JA, 0);
	f[PAD_MAX - 1] = RK;
	kernel_agrees(f, PAD_MAX, "4095 x ja 0");
}

TEST(kcount_kernel_realistic_corpus)
{
	struct corpus c;
	size_t i;
	int err;

	if (!kernel_usable())
		return;
	err = corpus_build(&c);
	if (!ASSERT_OK(err, "corpus_build")) {
		corpus_free(&c);
		return;
	}
	for (i = 0; i < c.n; i++)
		if (!kernel_agrees(c.filters[i].insns, c.filters[i].len,
				   c.filters[i].name))
			break;
	corpus_free(&c);
}

/* ---- random valid programs ---------------------------------------------- */

static uint64_t rng;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

static uint32_t rnd_k(void)
{
	switch (rnd() % 6) {
	case 0: return 0;
	case 1: return rnd() % 16;
	case 2: return 0x80000000U | rnd();  /* top bit set */
	case 3: return 0xffffffffU;
	case 4: return 0x7fffffffU;
	default: return rnd();
	}
}

static uint8_t rnd_off(size_t pc, size_t len)
{
	size_t max = len - pc - 2; /* target pc + off + 1 <= len - 1 */

	if (max > 255)
		max = 255;
	if (rnd() % 3 == 0)
		return 0;
	return (uint8_t)(rnd() % (max + 1));
}

static struct sock_filter rnd_insn(size_t pc, size_t len)
{
	uint16_t src = rnd() & 1 ? BPF_X : BPF_K;
	uint16_t op;

	if (pc == len - 1)
		return rnd() & 1 ? STMT(BPF_RET | BPF_A, 0)
				 : STMT(BPF_RET | BPF_K, rnd_k());
	switch (rnd() % 12) {
	case 0:
		return STMT(BPF_LD | BPF_W | BPF_ABS, 4 * (rnd() % 16));
	case 1:
		return STMT((rnd() & 1 ? BPF_LD : BPF_LDX) | BPF_W | BPF_LEN, 0);
	case 2:
		return STMT((rnd() & 1 ? BPF_LD : BPF_LDX) | BPF_IMM, rnd_k());
	case 3:
		return STMT((rnd() & 1 ? BPF_LD : BPF_LDX) | BPF_MEM, rnd() % 16);
	case 4:
		return STMT(rnd() & 1 ? BPF_ST : BPF_STX, rnd() % 16);
	case 5:
	case 6:
		op = alu_ops[rnd() % 9];
		if (rnd() % 10 == 0)
			return STMT(BPF_ALU | BPF_NEG, 0);
		if (src == BPF_X)
			return STMT(BPF_ALU | op | BPF_X, 0);
		if (op == BPF_LSH || op == BPF_RSH)
			return STMT(BPF_ALU | op | BPF_K, rnd() % 32);
		if (op == BPF_DIV)
			return STMT(BPF_ALU | op | BPF_K, rnd_k() | 1);
		return STMT(BPF_ALU | op | BPF_K, rnd_k());
	case 7:
		return STMT(BPF_MISC | (rnd() & 1 ? BPF_TAX : BPF_TXA), 0);
	case 8:
		return STMT(BPF_JMP | BPF_JA, rnd_off(pc, len));
	case 9:
		return rnd() & 1 ? STMT(BPF_RET | BPF_A, 0)
				 : STMT(BPF_RET | BPF_K, rnd_k());
	default:
		op = jump_ops[rnd() % 4];
		return JUMP(BPF_JMP | op | src, rnd_k(), rnd_off(pc, len),
			    rnd_off(pc, len));
	}
}

/* A random program c2e_validate() accepts: generated, then each refused
 * instruction (in practice a scratch read the kernel's one-pass check
 * refuses) replaced by "ld #k" until it validates. */
static size_t random_valid(struct sock_filter *f)
{
	struct c2e_error err;
	size_t len, pc;
	uint32_t r = rnd() % 100;
	int tries;

	len = r < 60 ? 1 + rnd() % 32 : r < 90 ? 1 + rnd() % 512 : 1 + rnd() % PAD_MAX;
	for (pc = 0; pc < len; pc++)
		f[pc] = rnd_insn(pc, len);
	for (tries = 0; tries <= (int)len + 1; tries++) {
		if (c2e_validate(f, len, &err) == 0)
			return len;
		if (err.index < 0 || (size_t)err.index >= len - 1)
			break;
		f[err.index] = STMT(BPF_LD | BPF_IMM, rnd_k());
	}
	return 0;
}

TEST(kcount_kernel_random_programs)
{
	static struct sock_filter f[PAD_MAX];
	char name[64];
	/* Under emulation each program's probe costs ~0.15 s: 60 there. */
	int i, n = test_is_emulated() ? 60 : 200, made = 0;

	if (!kernel_usable())
		return;
	rng = 0x243f6a8885a308d3ull;
	for (i = 0; made < n && i < 10 * n; i++) {
		size_t len = random_valid(f);

		if (!len)
			continue;
		made++;
		snprintf(name, sizeof(name), "random #%d (seed 0x243f6a8885a308d3)", i);
		if (!kernel_agrees(f, len, name))
			return;
	}
	ASSERT_EQ(made, n, "random valid programs generated");
}
