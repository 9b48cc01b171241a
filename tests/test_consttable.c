// SPDX-License-Identifier: GPL-2.0-only
/*
 * Constant verdicts (c2e_const_verdict, consttable.c): every constant the
 * analysis reports is the verdict the reference stack evaluation
 * (c2e_stack_eval) gives for that arch and syscall number on arbitrary
 * arguments and instruction pointers, and the winner it reports is the
 * filter the kernel's fold keeps. Shown on the corpus (each filter and
 * stacks of them), on random valid programs and stacks, and on filters
 * whose answer is known, so a useless "never constant" cannot pass.
 */
#include "harness.h"
#include "c2e.h"
#include "corpus.h"
#include "progs.h"
#include "sockfilter.h"

#include <stdlib.h>
#include <sys/syscall.h>

static const uint32_t arches[3] = { C2E_AUDIT_ARCH_X86_64, C2E_AUDIT_ARCH_I386,
				    C2E_AUDIT_ARCH_X86_64 };

static int arch_nr(int a, int n)
{
	return a == 2 ? (int)(C2E_X32_SYSCALL_BIT | n) : n;
}

/* The kernel's fold, also naming the winner (n: none). */
static uint32_t eval_winner(const struct sock_fprog *chain, size_t n,
			    const struct seccomp_data *d, size_t *winner)
{
	uint32_t best = SECCOMP_RET_ALLOW;
	size_t i;

	*winner = n;
	for (i = n; i-- > 0;) {
		uint32_t r = c2e_interpret(chain[i].filter, chain[i].len, d);

		if ((int32_t)(r & C2E_RET_ACTION_FULL) < (int32_t)(best & C2E_RET_ACTION_FULL)) {
			best = r;
			*winner = i;
		}
	}
	return best;
}

struct tally {
	long checked, constant, wrong;
};

/* Checks (arch a, nr) of a chain against `inputs` random inputs. */
static void check_one(const struct sock_fprog *chain, size_t n, int a, int nr,
		      struct progs_rng *rng, int inputs, struct tally *t)
{
	uint32_t ret, got;
	size_t winner, w;
	int i, j;

	t->checked++;
	if (!c2e_const_verdict_winner(chain, n, arches[a], nr, &ret, &winner)) {
		/* The plain form may still say constant (winner varies);
		 * if it does, its value must hold too. */
		if (!c2e_const_verdict(chain, n, arches[a], nr, &ret))
			return;
		winner = (size_t)-1;
	} else {
		uint32_t ret2;

		if (!ASSERT_TRUE(c2e_const_verdict(chain, n, arches[a], nr, &ret2) &&
				 ret2 == ret, "plain form agrees")) {
			t->wrong++;
			return;
		}
	}
	t->constant++;
	for (i = 0; i < inputs; i++) {
		struct seccomp_data d = { .nr = nr, .arch = arches[a] };

		d.instruction_pointer = progs_next(rng);
		for (j = 0; j < 6; j++)
			d.args[j] = i & 1 ? progs_next(rng) :
				    ((uint64_t)progs_edge_u32(rng) << 32) | progs_edge_u32(rng);
		if (i == 0)
			memset(d.args, 0, sizeof(d.args));
		got = eval_winner(chain, n, &d, &w);
		if (got != ret || (winner != (size_t)-1 && w != winner)) {
			if (t->wrong++ < 5)
				test_fail(__FILE__, __LINE__,
					  "arch %#x nr %#x: constant %#x (winner %zu) but input %d gives %#x (winner %zu)",
					  arches[a], nr, ret, winner, i, got, w);
			return;
		}
	}
}

static void check_all_nrs(const struct sock_fprog *chain, size_t n, int nr_step,
			  struct progs_rng *rng, int inputs, struct tally *t)
{
	int a, nr;

	for (a = 0; a < 3; a++)
		for (nr = 0; nr < 512; nr += nr_step)
			check_one(chain, n, a, arch_nr(a, nr), rng, inputs, t);
}

TEST(consttable_known_answers)
{
	struct sock_filter errno5[] = { STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 5) };
	struct sock_filter argdep[] = {
		STMT(BPF_LD | BPF_W | BPF_ABS, 0),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_uname, 0, 3),
		STMT(BPF_LD | BPF_W | BPF_ABS, 16),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, 7, 0, 1),
		STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 1),
		STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_filter retA_ip[] = {
		STMT(BPF_LD | BPF_W | BPF_ABS, 8),
		STMT(BPF_RET | BPF_A, 0),
	};
	struct sock_filter divx[] = {   /* 10 / args[0]: may return 0 */
		STMT(BPF_LD | BPF_W | BPF_ABS, 16),
		STMT(BPF_MISC | BPF_TAX, 0),
		STMT(BPF_LD | BPF_IMM, 10),
		STMT(BPF_ALU | BPF_DIV | BPF_X, 0),
		STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog c[2];
	uint32_t ret;
	size_t w;

	c[0] = (struct sock_fprog){ ARRAY_SIZE(argdep), argdep };
	ASSERT_EQ(c2e_const_verdict(c, 1, C2E_AUDIT_ARCH_X86_64, SYS_getppid, &ret), 1,
		  "getppid constant");
	ASSERT_EQ(ret, SECCOMP_RET_KILL_PROCESS, "getppid verdict");
	ASSERT_EQ(c2e_const_verdict(c, 1, C2E_AUDIT_ARCH_X86_64, SYS_getpid, &ret), 1,
		  "getpid constant");
	ASSERT_EQ(ret, SECCOMP_RET_ALLOW, "getpid verdict");
	ASSERT_EQ(c2e_const_verdict(c, 1, C2E_AUDIT_ARCH_X86_64, SYS_uname, &ret), 0,
		  "uname depends on args[0]");

	/* A newer constant ERRNO(5) over the argument-dependent filter: for
	 * uname the older ERRNO(1) ties and a tie keeps the newest's data, so
	 * uname becomes constant ERRNO(5); so does getpid; getppid stays KILL
	 * from the oldest. */
	c[1] = (struct sock_fprog){ 1, errno5 };
	ASSERT_EQ(c2e_const_verdict(c, 2, C2E_AUDIT_ARCH_X86_64, SYS_uname, &ret), 1,
		  "stack uname");
	ASSERT_EQ(ret, SECCOMP_RET_ERRNO | 5, "stack uname verdict");
	ASSERT_EQ(c2e_const_verdict_winner(c, 2, C2E_AUDIT_ARCH_X86_64, SYS_getpid, &ret, &w),
		  1, "stack getpid");
	ASSERT_EQ(ret, SECCOMP_RET_ERRNO | 5, "stack getpid verdict");
	ASSERT_EQ(w, 1, "newest decides");
	ASSERT_EQ(c2e_const_verdict_winner(c, 2, C2E_AUDIT_ARCH_X86_64, SYS_getppid, &ret, &w),
		  1, "stack getppid");
	ASSERT_EQ(ret, SECCOMP_RET_KILL_PROCESS, "stack getppid verdict");
	ASSERT_EQ(w, 0, "oldest decides");

	/* Returning an unknown value is never constant. */
	c[0] = (struct sock_fprog){ ARRAY_SIZE(retA_ip), retA_ip };
	ASSERT_EQ(c2e_const_verdict(c, 1, C2E_AUDIT_ARCH_X86_64, 0, &ret), 0, "ret ip");
	/* DIV by an unknown X may make the program return 0. */
	c[0] = (struct sock_fprog){ ARRAY_SIZE(divx), divx };
	ASSERT_EQ(c2e_const_verdict(c, 1, C2E_AUDIT_ARCH_X86_64, 0, &ret), 0, "div x");
	/* No filters: ALLOW, no winner. */
	ASSERT_EQ(c2e_const_verdict_winner(c, 0, C2E_AUDIT_ARCH_X86_64, 0, &ret, &w), 1,
		  "empty chain");
	ASSERT_EQ(ret, SECCOMP_RET_ALLOW, "empty chain verdict");
	ASSERT_EQ(w, 0, "empty chain winner is n");
}

TEST(consttable_corpus)
{
	struct corpus cp;
	struct progs_rng rng;
	struct tally t = { 0 };
	size_t i;
	int inputs = test_is_emulated() ? 3 : 16, step = test_is_emulated() ? 7 : 1;

	progs_seed(&rng, 0x5eed0003);
	if (!ASSERT_OK(corpus_build(&cp), "corpus_build")) {
		corpus_free(&cp);
		return;
	}
	for (i = 0; i < cp.n; i++) {
		struct sock_fprog f = { (unsigned short)cp.filters[i].len, cp.filters[i].insns };
		long before = t.constant;

		check_all_nrs(&f, 1, step, &rng, inputs, &t);
		test_log("%-40s %ld constant\n", cp.filters[i].name, t.constant - before);
	}
	/* Stacks of two and three corpus filters. */
	for (i = 0; i + 2 < cp.n; i++) {
		struct sock_fprog s[3] = {
			{ (unsigned short)cp.filters[i].len, cp.filters[i].insns },
			{ (unsigned short)cp.filters[i + 1].len, cp.filters[i + 1].insns },
			{ (unsigned short)cp.filters[i + 2].len, cp.filters[i + 2].insns },
		};

		check_all_nrs(s, 2, step * 3, &rng, inputs, &t);
		check_all_nrs(s, 3, step * 5, &rng, inputs, &t);
	}
	printf("  corpus: %ld (chain, arch, nr) checked, %ld constant, %ld wrong\n",
	       t.checked, t.constant, t.wrong);
	ASSERT_EQ(t.wrong, 0, "wrong constants");
	/* libseccomp filters decide most syscalls by number alone. */
	ASSERT_GE(t.constant * 2, t.checked, "at least half constant");
	corpus_free(&cp);
}

TEST(consttable_random_programs)
{
	struct progs_rng rng;
	struct tally t = { 0 };
	int p, programs = test_is_emulated() ? 60 : 600, k;

	progs_seed(&rng, 0x5eed0004);
	for (p = 0; p < programs; p++) {
		struct progs_prog pr[3];
		struct sock_fprog chain[3];
		size_t n = progs_gen_stack(&rng, p, pr, chain), i;

		/* nr values random programs compare against: small numbers
		 * and edge values, for every arch. */
		for (k = 0; k < 24; k++) {
			int a = progs_below(&rng, 3);
			int nr = k < 12 ? (int)progs_below(&rng, 512) :
				 (int)progs_edge_u32(&rng);

			if (n)
				check_one(chain, n, a, a == 2 ? (int)(nr | C2E_X32_SYSCALL_BIT) : nr,
					  &rng, 12, &t);
		}
		for (i = 0; i < n; i++)
			progs_free(&pr[i]);
	}
	printf("  random: %ld (chain, arch, nr) checked, %ld constant, %ld wrong\n",
	       t.checked, t.constant, t.wrong);
	ASSERT_EQ(t.wrong, 0, "wrong constants");
	ASSERT_GE(t.constant, 1, "some constants found");
}
