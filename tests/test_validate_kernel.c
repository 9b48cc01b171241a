// SPDX-License-Identifier: GPL-2.0-only
/*
 * Validity agrees with the kernel: c2e_validate() accepts exactly what
 * seccomp(2) accepts, checked against the running kernel on generated
 * programs of every family (tests/lib/progs.h), and each validation rule
 * has a specification test pinning the precise error: which instruction,
 * which opcode, which rule.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "c2e.h"
#include "progs.h"
#include "kseccomp.h"
#include "sockfilter.h"

#include <stdlib.h>
#include <strings.h>
#include <time.h>

#define RET_ALLOW STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

static bool kernel_probe_ready(void)
{
	int err = ksec_validator_start();

	if (err) {
		test_fail(__FILE__, __LINE__,
			  "the kernel validity probe did not start: %s",
			  strerror(-err));
		return false;
	}
	return true;
}

/* Prints a program the way a reader wants to see it in a failure. */
static void show_program(const struct sock_filter *insns, size_t len)
{
	size_t i;

	if (len && len <= 64 && c2e_disasm_classic(insns, len, stdout) == 0)
		return;
	for (i = 0; i < len && i < 64; i++)
		printf("      %4zu: code 0x%04x jt %3u jf %3u k 0x%08x\n", i,
		       insns[i].code, insns[i].jt, insns[i].jf, insns[i].k);
	if (len > 64)
		printf("      ... (%zu instructions)\n", len);
}

TEST(kernel_probe_answers_enomem_for_valid_and_einval_for_invalid)
{
	static const struct sock_filter valid[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 39, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	static const struct sock_filter one_ret[] = {
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	static const struct sock_filter invalid[] = {
		BPF_STMT(BPF_ALU | BPF_MOD | BPF_K, 3),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_filter *max;
	int filters, budget, i;

	if (!kernel_probe_ready())
		return;
	ksec_validator_fill(&filters, &budget);
	test_log("probe child holds %d ALLOW filters, chain budget used %d of %d\n",
		 filters, budget, C2E_MAX_CHAIN_INSNS);
	/* The budget is full: even the cheapest filter (5 converted insns)
	 * would exceed it. */
	ASSERT_GE(budget + 5, C2E_MAX_CHAIN_INSNS + 1, "chain budget filled");
	ASSERT_EQ(ksec_validates(valid, ARRAY_SIZE(valid)), 1, "known-valid filter");
	ASSERT_EQ(ksec_validator_last_errno(), ENOMEM, "known-valid answer");
	ASSERT_EQ(ksec_validates(one_ret, 1), 1, "single RET ALLOW");
	ASSERT_EQ(ksec_validates(invalid, ARRAY_SIZE(invalid)), 0, "known-invalid filter");
	ASSERT_EQ(ksec_validator_last_errno(), EINVAL, "known-invalid answer");
	max = calloc(C2E_MAX_INSNS, sizeof(*max));
	if (!ASSERT_OK_PTR(max, "calloc"))
		return;
	for (i = 0; i < C2E_MAX_INSNS; i++)
		max[i] = RET_ALLOW;
	ASSERT_EQ(ksec_validates(max, C2E_MAX_INSNS), 1, "4096 x RET ALLOW");
	free(max);
}

/* The families and how many programs each contributes per round. */
static const struct {
	enum progs_family family;
	int weight;
} schedule[] = {
	{ PROGS_VALID_RANDOM, 8 },
	{ PROGS_VALID_TINY, 1 },
	{ PROGS_VALID_MAX_LEN, 1 },
	{ PROGS_VALID_EDGE_JUMPS, 2 },
	{ PROGS_VALID_SKIPPED_READ, 2 },
	{ PROGS_BAD_LEN_ZERO, 1 },
	{ PROGS_BAD_LEN_4097, 1 },
	{ PROGS_BAD_LAST_NOT_RET, 1 },
	{ PROGS_BAD_MOD, 1 },
	{ PROGS_BAD_LD_H_B_ABS, 1 },
	{ PROGS_BAD_LD_IND, 1 },
	{ PROGS_BAD_LDX_MSH, 1 },
	{ PROGS_BAD_ANCILLARY, 1 },
	{ PROGS_BAD_LD_MISALIGNED, 1 },
	{ PROGS_BAD_LD_OUT_OF_BOUNDS, 1 },
	{ PROGS_BAD_UNKNOWN_CODE, 1 },
	{ PROGS_BAD_DIV_ZERO, 1 },
	{ PROGS_BAD_SHIFT_32, 1 },
	{ PROGS_BAD_JA_RANGE, 1 },
	{ PROGS_BAD_JCC_RANGE, 1 },
	{ PROGS_BAD_SLOT_RANGE, 1 },
	{ PROGS_BAD_UNSTORED_READ, 2 },
	{ PROGS_BAD_READ_AFTER_RET, 2 },
	{ PROGS_BAD_UNREACHABLE_READ_AFTER_RET, 2 },
	{ PROGS_MUTATED, 10 },
};

static enum progs_family family_for(int i)
{
	int total = 0, at;
	size_t s;

	for (s = 0; s < ARRAY_SIZE(schedule); s++)
		total += schedule[s].weight;
	at = i % total;
	for (s = 0; s < ARRAY_SIZE(schedule); s++) {
		if (at < schedule[s].weight)
			return schedule[s].family;
		at -= schedule[s].weight;
	}
	return PROGS_VALID_RANDOM;
}

struct family_stats {
	int programs, kernel_accepted, disagreements, unexpected;
};

#define N_PROGRAMS 10000

TEST(validity_agrees_with_kernel_on_10000_programs)
{
	struct family_stats stats[PROGS_FAMILY_COUNT] = { 0 };
	int i, f, shown = 0, disagreements = 0, unexpected = 0, accepted = 0;
	struct progs_rng rng;
	double t0;

	if (!kernel_probe_ready())
		return;
	progs_seed(&rng, 0x5eccc0de2026ULL);
	t0 = test_now_s();
	for (i = 0; i < N_PROGRAMS; i++) {
		struct progs_prog p;
		struct c2e_error err = { 0 };
		int kernel, ours, e;
		char buf[300];

		f = family_for(i);
		e = progs_gen(&rng, f, 0, &p);
		if (!ASSERT_OK(e, progs_family_name(f)))
			return;
		kernel = ksec_validates(p.insns, p.len);
		if (kernel < 0) {
			test_fail(__FILE__, __LINE__,
				  "program %d (%s): kernel probe failed: %s (seccomp answered errno %d)",
				  i, progs_family_name(f), strerror(-kernel),
				  ksec_validator_last_errno());
			show_program(p.insns, p.len);
			progs_free(&p);
			return;
		}
		ours = c2e_validate(p.insns, p.len, &err) == 0;
		stats[f].programs++;
		stats[f].kernel_accepted += kernel;
		accepted += kernel;
		if (ours != kernel) {
			stats[f].disagreements++;
			disagreements++;
			if (shown++ < 10) {
				printf("    DISAGREEMENT program %d, family %s, %zu insns: kernel %s, c2e %s%s%s\n",
				       i, progs_family_name(f), p.len,
				       kernel ? "accepts" : "refuses",
				       ours ? "accepts" : "refuses: ",
				       ours ? "" : c2e_error_str(&err, buf, sizeof(buf)), "");
				show_program(p.insns, p.len);
			}
		}
		/* The generator's own promise, checked against the kernel. */
		if (p.expect_valid >= 0 && p.expect_valid != kernel) {
			stats[f].unexpected++;
			unexpected++;
			if (shown++ < 10) {
				printf("    GENERATOR family %s promised %s but the kernel %s it\n",
				       progs_family_name(f),
				       p.expect_valid ? "valid" : "invalid",
				       kernel ? "accepts" : "refuses");
				show_program(p.insns, p.len);
			}
		}
		progs_free(&p);
	}
	printf("    %d programs in %.2fs (kernel %s): %d accepted by the kernel, %d refused\n",
	       N_PROGRAMS, test_now_s() - t0, test_kernel_name(), accepted,
	       N_PROGRAMS - accepted);
	for (f = 0; f < PROGS_FAMILY_COUNT; f++)
		printf("    %-40s %5d programs, kernel accepts %5d, disagreements %d\n",
		       progs_family_name(f), stats[f].programs,
		       stats[f].kernel_accepted, stats[f].disagreements);
	ASSERT_EQ(disagreements, 0, "c2e_validate vs seccomp(2) disagreements");
	ASSERT_EQ(unexpected, 0, "programs whose family promised the other answer");
}

TEST(refusals_name_the_instruction_each_generated_program_breaks)
{
	struct progs_rng rng;
	int i, checked = 0, wrong = 0;

	progs_seed(&rng, 0xbad1dea5ULL);
	for (i = 0; i < 4000; i++) {
		enum progs_family f = PROGS_BAD_LEN_ZERO +
			i % (PROGS_MUTATED - PROGS_BAD_LEN_ZERO);
		struct c2e_error err = { 0 };
		struct progs_prog p;
		char buf[300];

		if (!ASSERT_OK(progs_gen(&rng, f, 0, &p), progs_family_name(f)))
			return;
		if (c2e_validate(p.insns, p.len, &err) == 0) {
			test_fail(__FILE__, __LINE__, "%s: c2e accepts it",
				  progs_family_name(f));
			show_program(p.insns, p.len);
			wrong++;
		} else if (err.index != p.bad_index ||
			   (err.index >= 0 && err.code != p.insns[err.index].code)) {
			if (wrong++ < 10) {
				printf("    %s: broken insn %d, c2e says: %s\n",
				       progs_family_name(f), p.bad_index,
				       c2e_error_str(&err, buf, sizeof(buf)));
				show_program(p.insns, p.len);
			}
		}
		checked++;
		progs_free(&p);
		if (wrong > 20)
			break;
	}
	test_log("%d refused programs checked\n", checked);
	ASSERT_EQ(wrong, 0, "errors naming another instruction than the broken one");
}

/* ---- one specification test per rule ------------------------------------ */

/*
 * Both c2e and the kernel refuse the program; c2e names instruction index
 * (with its opcode) and a message containing every keyword.
 */
static void expect_refused(const struct sock_filter *insns, size_t len,
			   int index, const char *keyword1, const char *keyword2)
{
	struct c2e_error err = { 0 };
	char buf[300], prefix[64];
	int kernel;

	ASSERT_EQ(c2e_validate(insns, len, &err), -EINVAL, "c2e_validate");
	c2e_error_str(&err, buf, sizeof(buf));
	test_log("%s\n", buf);
	ASSERT_EQ(err.index, index, buf);
	if (index >= 0) {
		ASSERT_EQ(err.code, insns[index].code, "error names the opcode");
		snprintf(prefix, sizeof(prefix), "insn %d (code 0x%04x): ", index,
			 insns[index].code);
		ASSERT_TRUE(strncmp(buf, prefix, strlen(prefix)) == 0, buf);
	}
	if (keyword1)
		ASSERT_TRUE(strcasestr(buf, keyword1) != NULL, keyword1);
	if (keyword2)
		ASSERT_TRUE(strcasestr(buf, keyword2) != NULL, keyword2);
	if (!kernel_probe_ready())
		return;
	kernel = ksec_validates(insns, len);
	ASSERT_EQ(kernel, 0, "the kernel refuses it too");
}

static void expect_accepted(const struct sock_filter *insns, size_t len)
{
	struct c2e_error err = { 0 };
	char buf[300];

	if (c2e_validate(insns, len, &err))
		test_fail(__FILE__, __LINE__, "c2e refuses: %s",
			  c2e_error_str(&err, buf, sizeof(buf)));
	if (!kernel_probe_ready())
		return;
	ASSERT_EQ(ksec_validates(insns, len), 1, "the kernel accepts it too");
}

TEST(an_empty_program_is_refused_as_a_whole)
{
	struct sock_filter one = RET_ALLOW;

	expect_refused(&one, 0, -1, "0 instructions", NULL);
}

TEST(a_program_of_4097_instructions_is_refused_and_4096_accepted)
{
	struct sock_filter *p = calloc(C2E_MAX_INSNS + 1, sizeof(*p));
	int i;

	if (!ASSERT_OK_PTR(p, "calloc"))
		return;
	for (i = 0; i <= C2E_MAX_INSNS; i++)
		p[i] = RET_ALLOW;
	expect_refused(p, C2E_MAX_INSNS + 1, -1, "4097", NULL);
	expect_accepted(p, C2E_MAX_INSNS);
	free(p);
}

TEST(the_last_instruction_must_be_ret)
{
	struct sock_filter p[] = {
		STMT(BPF_LD | BPF_W | BPF_ABS, 0),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, 39, 0, 1),
		RET_ALLOW,
		STMT(BPF_LD | BPF_IMM, SECCOMP_RET_ALLOW),
	};

	expect_refused(p, ARRAY_SIZE(p), 3, "last", "ret");
	p[3] = STMT(BPF_RET | BPF_A, 0);
	expect_accepted(p, ARRAY_SIZE(p));
}

TEST(mod_is_refused_although_classic_bpf_has_it)
{
	struct sock_filter p[] = {
		STMT(BPF_LD | BPF_W | BPF_ABS, 16),
		STMT(BPF_ALU | BPF_MOD | BPF_K, 7),
		RET_ALLOW,
	};

	expect_refused(p, ARRAY_SIZE(p), 1, "mod", NULL);
	p[1].code = BPF_ALU | BPF_MOD | BPF_X;
	expect_refused(p, ARRAY_SIZE(p), 1, "mod", NULL);
}

TEST(half_word_and_byte_loads_are_refused)
{
	struct sock_filter p[] = {
		STMT(BPF_LD | BPF_W | BPF_ABS, 0),
		STMT(BPF_LD | BPF_H | BPF_ABS, 4),
		RET_ALLOW,
	};

	expect_refused(p, ARRAY_SIZE(p), 1, "byte", NULL);
	p[1].code = BPF_LD | BPF_B | BPF_ABS;
	expect_refused(p, ARRAY_SIZE(p), 1, "byte", NULL);
}

TEST(indirect_loads_are_refused)
{
	static const uint16_t sizes[] = { BPF_W, BPF_H, BPF_B };
	struct sock_filter p[] = {
		STMT(BPF_LDX | BPF_IMM, 0),
		STMT(BPF_LD | BPF_W | BPF_IND, 0),
		RET_ALLOW,
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		p[1].code = BPF_LD | sizes[i] | BPF_IND;
		expect_refused(p, ARRAY_SIZE(p), 1, "indirect", NULL);
	}
}

TEST(ldx_msh_is_refused)
{
	struct sock_filter p[] = {
		STMT(BPF_LDX | BPF_B | BPF_MSH, 0),
		RET_ALLOW,
	};

	expect_refused(p, ARRAY_SIZE(p), 0, "msh", NULL);
}

TEST(ancillary_loads_are_refused)
{
	struct sock_filter p[] = {
		STMT(BPF_LD | BPF_W | BPF_ABS, 0),
		/* SKF_AD_OFF + SKF_AD_PROTOCOL: classic BPF knows it. */
		STMT(BPF_LD | BPF_H | BPF_ABS, (uint32_t)-0x1000),
		RET_ALLOW,
	};

	expect_refused(p, ARRAY_SIZE(p), 1, NULL, NULL);
	p[1] = STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t)-0x1000 + 4);
	expect_refused(p, ARRAY_SIZE(p), 1, NULL, NULL);
	/* Past SKF_AD_MAX classic BPF refuses it already. */
	p[1] = STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t)-0x1000 + 0x800);
	expect_refused(p, ARRAY_SIZE(p), 1, "ancillary", NULL);
}

TEST(word_loads_must_be_aligned_and_inside_seccomp_data)
{
	struct sock_filter p[] = {
		STMT(BPF_LD | BPF_W | BPF_ABS, 0),
		STMT(BPF_LD | BPF_W | BPF_ABS, 6),
		RET_ALLOW,
	};
	uint32_t k;

	expect_refused(p, ARRAY_SIZE(p), 1, "aligned", "64");
	p[1].k = 64;
	expect_refused(p, ARRAY_SIZE(p), 1, "64", NULL);
	p[1].k = 0xffe00000U; /* SKF_LL_OFF: fine for sockets, not here */
	expect_refused(p, ARRAY_SIZE(p), 1, "64", NULL);
	for (k = 0; k < 64; k += 4) {
		p[1].k = k;
		expect_accepted(p, ARRAY_SIZE(p));
	}
}

TEST(unknown_opcodes_are_refused)
{
	static const uint16_t codes[] = { 0x0e /* RET X */, 0x07 | 0x08,
					  0xff, 0x1234, 0xffff, 0x61 /* LDX W ABS */ };
	struct sock_filter p[] = {
		STMT(BPF_LD | BPF_IMM, 1),
		STMT(0, 0),
		RET_ALLOW,
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(codes); i++) {
		p[1].code = codes[i];
		expect_refused(p, ARRAY_SIZE(p), 1, NULL, NULL);
	}
}

TEST(division_by_constant_zero_is_refused_but_by_x_zero_is_not)
{
	struct sock_filter p[] = {
		STMT(BPF_LD | BPF_W | BPF_ABS, 16),
		STMT(BPF_ALU | BPF_DIV | BPF_K, 0),
		STMT(BPF_RET | BPF_A, 0),
	};

	expect_refused(p, ARRAY_SIZE(p), 1, "division", "0");
	p[1] = STMT(BPF_ALU | BPF_DIV | BPF_X, 0);
	expect_accepted(p, ARRAY_SIZE(p));
}

TEST(shifts_by_constant_32_or_more_are_refused)
{
	struct sock_filter p[] = {
		STMT(BPF_LD | BPF_W | BPF_ABS, 16),
		STMT(BPF_ALU | BPF_LSH | BPF_K, 32),
		STMT(BPF_RET | BPF_A, 0),
	};

	expect_refused(p, ARRAY_SIZE(p), 1, "shift", "32");
	p[1] = STMT(BPF_ALU | BPF_RSH | BPF_K, 0xffffffff);
	expect_refused(p, ARRAY_SIZE(p), 1, "shift", NULL);
	p[1] = STMT(BPF_ALU | BPF_RSH | BPF_K, 31);
	expect_accepted(p, ARRAY_SIZE(p));
}

TEST(ja_must_land_inside_the_program)
{
	struct sock_filter p[] = {
		STMT(BPF_LD | BPF_IMM, 0),
		STMT(BPF_JMP | BPF_JA, 2), /* k >= len - pc - 1 */
		STMT(BPF_LD | BPF_IMM, 1),
		RET_ALLOW,
	};

	expect_refused(p, ARRAY_SIZE(p), 1, "past the end", NULL);
	p[1].k = 0xffffffff; /* must not wrap around */
	expect_refused(p, ARRAY_SIZE(p), 1, "past the end", NULL);
	p[1].k = 1;          /* lands on the last insn */
	expect_accepted(p, ARRAY_SIZE(p));
}

TEST(conditional_jumps_must_land_inside_the_program_both_ways)
{
	struct sock_filter p[] = {
		STMT(BPF_LD | BPF_W | BPF_ABS, 0),
		JUMP(BPF_JMP | BPF_JGT | BPF_K, 10, 2, 0),
		RET_ALLOW,
		STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};

	expect_refused(p, ARRAY_SIZE(p), 1, "jt", "past the end");
	p[1].jt = 0;
	p[1].jf = 2;
	expect_refused(p, ARRAY_SIZE(p), 1, "jf", "past the end");
	p[1].jf = 1;
	expect_accepted(p, ARRAY_SIZE(p));
}

TEST(scratch_slots_are_0_to_15)
{
	static const uint16_t codes[] = { BPF_ST, BPF_STX, BPF_LD | BPF_MEM,
					  BPF_LDX | BPF_MEM };
	struct sock_filter p[] = {
		STMT(BPF_LD | BPF_IMM, 0),
		STMT(BPF_ST, 16),
		RET_ALLOW,
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(codes); i++) {
		p[1] = STMT(codes[i], 16);
		expect_refused(p, ARRAY_SIZE(p), 1, "M[16]", NULL);
	}
	p[1] = STMT(BPF_ST, 15);
	expect_accepted(p, ARRAY_SIZE(p));
}

TEST(reading_a_slot_no_store_reached_is_refused)
{
	struct sock_filter p[] = {
		STMT(BPF_LD | BPF_IMM, 7),
		STMT(BPF_ST, 2),
		STMT(BPF_LDX | BPF_MEM, 3),
		RET_ALLOW,
	};

	expect_refused(p, ARRAY_SIZE(p), 2, "M[3]", "stored");
	p[2].k = 2;
	expect_accepted(p, ARRAY_SIZE(p));
}

/* The kernel's scratch check is one linear pass, not a path analysis. */
TEST(a_read_right_after_a_ret_is_refused_even_when_every_path_stores)
{
	struct sock_filter p[] = {
		STMT(BPF_LD | BPF_W | BPF_ABS, 0),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, 39, 0, 2),  /* jf -> 4 (ret) */
		STMT(BPF_ST, 5),
		STMT(BPF_JMP | BPF_JA, 1),                  /* -> 5, stored */
		STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		STMT(BPF_LD | BPF_MEM, 5),
		STMT(BPF_RET | BPF_A, 0),
	};

	expect_refused(p, ARRAY_SIZE(p), 5, "M[5]", NULL);
}

TEST(an_unreachable_read_right_after_a_ret_is_refused)
{
	struct sock_filter p[] = {
		RET_ALLOW,
		STMT(BPF_LDX | BPF_MEM, 9),
		RET_ALLOW,
	};

	expect_refused(p, ARRAY_SIZE(p), 1, "M[9]", NULL);
}

TEST(an_unreachable_read_that_a_jump_skips_is_accepted_even_if_never_stored)
{
	struct sock_filter p[] = {
		STMT(BPF_JMP | BPF_JA, 1),
		STMT(BPF_LD | BPF_MEM, 12),
		RET_ALLOW,
	};
	struct sock_filter q[] = {
		STMT(BPF_LD | BPF_W | BPF_ABS, 0),
		JUMP(BPF_JMP | BPF_JSET | BPF_K, 1, 2, 2),
		STMT(BPF_LD | BPF_MEM, 0),
		STMT(BPF_LDX | BPF_MEM, 15),
		RET_ALLOW,
	};

	expect_accepted(p, ARRAY_SIZE(p));
	expect_accepted(q, ARRAY_SIZE(q));
}

/* seccomp(2) checks in this order: length, bpf_check_classic()'s per-insn
 * loop, its last-insn-is-RET check, the scratch pass, then
 * seccomp_check_filter(); the first failing check names the error. */
TEST(the_first_error_reported_is_the_first_check_the_kernel_fails)
{
	struct sock_filter order1[] = {
		STMT(BPF_ALU | BPF_MOD | BPF_K, 3),    /* seccomp check */
		STMT(BPF_LD | BPF_MEM, 1),             /* scratch pass */
		STMT(BPF_ALU | BPF_DIV | BPF_K, 0),    /* classic loop */
		RET_ALLOW,
	};
	struct sock_filter order2[] = {
		STMT(BPF_LD | BPF_H | BPF_ABS, 0),     /* seccomp check */
		STMT(BPF_LD | BPF_MEM, 1),             /* scratch pass */
		RET_ALLOW,
	};
	struct sock_filter order3[] = {
		STMT(BPF_LD | BPF_MEM, 1),             /* scratch pass */
		STMT(BPF_LD | BPF_IMM, 0),             /* last is not RET */
	};

	expect_refused(order1, ARRAY_SIZE(order1), 2, "division", NULL);
	expect_refused(order2, ARRAY_SIZE(order2), 1, "M[1]", NULL);
	expect_refused(order3, ARRAY_SIZE(order3), 1, "last", NULL);
}
