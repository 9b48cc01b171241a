// SPDX-License-Identifier: GPL-2.0-only
/*
 * The seccomp_data twin of a 2012 filter (c2e_rfc_to_seccomp): for calls
 * of the filter's arch it decides as the 2012 filter does over the
 * registers seccomp_data carries, and it lets other arches through to the
 * dispatcher. Held to the reference interpreter of each ABI on random
 * programs that read only twin-able registers; filters that read any other,
 * or divide by X, are refused with the instruction named.
 */
#include "harness.h"
#include "c2e.h"
#include "progs.h"
#include "sockfilter.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Twin-able words of each ABI, and the seccomp_data word each is. */
struct word { uint32_t rfc, sd; };
static const struct word x86_64_words[] = {
	{ 120, 0 }, { 128, 8 }, { 132, 12 },
	{ 112, 16 }, { 116, 20 }, { 104, 24 }, { 108, 28 }, { 96, 32 }, { 100, 36 },
	{ 56, 40 }, { 60, 44 }, { 72, 48 }, { 76, 52 }, { 64, 56 }, { 68, 60 },
};
static const struct word i386_words[] = {
	{ 44, 0 }, { 48, 8 }, { 0, 16 }, { 4, 24 }, { 8, 32 }, { 12, 40 }, { 16, 48 }, { 20, 56 },
};

static const struct word *words_of(enum c2e_abi abi, size_t *n)
{
	*n = abi == C2E_ABI_RFC_I386 ? ARRAY_SIZE(i386_words) : ARRAY_SIZE(x86_64_words);
	return abi == C2E_ABI_RFC_I386 ? i386_words : x86_64_words;
}

/* A random valid seccomp program made a 2012 one: its loads read random
 * twin-able words, and its constant returns are the layout's size half
 * the time. */
static bool rfc_program(struct progs_rng *rng, enum c2e_abi abi, struct progs_prog *p)
{
	size_t nw, i;
	const struct word *w = words_of(abi, &nw);

	if (progs_gen_valid(rng, 1 + progs_below(rng, 60), p))
		return false;
	for (i = 0; i < p->len; i++) {
		struct sock_filter *f = &p->insns[i];

		if (f->code == (BPF_ALU | BPF_DIV | BPF_X))
			f->code = BPF_ALU | BPF_DIV | BPF_K, f->k |= 1;
		else if (f->code == (BPF_LD | BPF_W | BPF_ABS))
			f->k = w[progs_below(rng, (uint32_t)nw)].rfc;
		else if (f->code == (BPF_RET | BPF_K) && progs_below(rng, 2))
			f->k = (uint32_t)c2e_abi_data_size(abi);
	}
	return c2e_validate_abi(p->insns, p->len, abi, NULL) == 0;
}

/* Registers and the seccomp_data of the same call. Words take the
 * program's constants half the time, so that comparisons go both ways. */
static void inputs(struct progs_rng *rng, enum c2e_abi abi, const struct progs_prog *p,
		   uint8_t *regs, struct seccomp_data *sd)
{
	size_t nw, i, size = c2e_abi_data_size(abi);
	const struct word *w = words_of(abi, &nw);
	uint32_t v;

	for (i = 0; i < size; i += 4) {
		v = progs_below(rng, 2) ? (uint32_t)progs_next(rng) :
		    p->insns[progs_below(rng, (uint32_t)p->len)].k;
		memcpy(regs + i, &v, 4);
	}
	memset(sd, 0, sizeof(*sd));
	for (i = 0; i < nw; i++)
		memcpy((uint8_t *)sd + w[i].sd, regs + w[i].rfc, 4);
	sd->arch = abi == C2E_ABI_RFC_I386 ? C2E_AUDIT_ARCH_I386 : C2E_AUDIT_ARCH_X86_64;
}

static void agree_on_random_programs(enum c2e_abi abi, uint64_t seed)
{
	struct progs_rng rng;
	long programs = test_is_emulated() ? 300 : 3000, made = 0, checked = 0, wrong = 0, allowed = 0;
	long k;
	int j;

	progs_seed(&rng, seed);
	for (k = 0; k < programs; k++) {
		struct progs_prog p;
		struct sock_filter *twin;
		struct c2e_error err;
		size_t len;
		char buf[256];

		if (!rfc_program(&rng, abi, &p)) {
			progs_free(&p);
			continue;
		}
		if (!ASSERT_OK(c2e_rfc_to_seccomp(abi, p.insns, p.len, &twin, &len, &err),
			       "a filter of twin-able loads has a twin")) {
			test_log("%s\n", c2e_error_str(&err, buf, sizeof(buf)));
			progs_free(&p);
			break;
		}
		made++;
		for (j = 0; j < 40; j++) {
			uint8_t regs[C2E_ABI_MAX_SIZE];
			struct seccomp_data sd;
			uint32_t want, got;

			inputs(&rng, abi, &p, regs, &sd);
			want = c2e_rfc_verdict(abi, c2e_interpret_abi(p.insns, p.len, abi, regs));
			got = c2e_interpret(twin, len, &sd);
			checked++;
			allowed += want == SECCOMP_RET_ALLOW;
			if (got != want && wrong++ < 5)
				test_fail(__FILE__, __LINE__, "program %ld input %d: 2012 %#x, twin %#x",
					  k, j, want, got);
			/* Another arch goes to the dispatcher. */
			sd.arch = abi == C2E_ABI_RFC_I386 ? C2E_AUDIT_ARCH_X86_64 : C2E_AUDIT_ARCH_I386;
			if (c2e_interpret(twin, len, &sd) != SECCOMP_RET_ALLOW && wrong++ < 5)
				test_fail(__FILE__, __LINE__, "program %ld: another arch is not let through", k);
		}
		free(twin);
		progs_free(&p);
	}
	printf("  %s: %ld twins, %ld inputs, %ld allowed, %ld wrong\n", c2e_abi_name(abi),
	       made, checked, allowed, wrong);
	ASSERT_EQ(wrong, 0, "inputs the twin decides unlike the 2012 filter");
	ASSERT_GE(made, programs / 2, "most programs made");
	ASSERT_GE(allowed, 1, "some inputs allowed");
	ASSERT_GE(checked - allowed, 1, "some blocked");
}

TEST(the_seccomp_twin_of_an_x86_64_2012_filter_decides_as_it_does)
{
	agree_on_random_programs(C2E_ABI_RFC_X86_64, 0x2012a);
}

TEST(the_seccomp_twin_of_an_i386_2012_filter_decides_as_it_does)
{
	agree_on_random_programs(C2E_ABI_RFC_I386, 0x2012b);
}

TEST(a_2012_filter_reading_a_register_seccomp_data_lacks_has_no_twin_and_says_which)
{
	static const struct {
		enum c2e_abi abi;
		struct sock_filter load;
		const char *says;
	} cases[] = {
		{ C2E_ABI_RFC_X86_64, STMT(BPF_LD | BPF_W | BPF_ABS, 124), "loads [124] (orig_rax, high word)" },
		{ C2E_ABI_RFC_X86_64, STMT(BPF_LD | BPF_W | BPF_ABS, 80), "loads [80] (rax)" },
		{ C2E_ABI_RFC_X86_64, STMT(BPF_LD | BPF_W | BPF_ABS, 88), "loads [88] (rcx)" },
		{ C2E_ABI_RFC_X86_64, STMT(BPF_LD | BPF_W | BPF_ABS, 114), "loads [114] (rdi, unaligned)" },
		{ C2E_ABI_RFC_X86_64, STMT(BPF_LD | BPF_W | BPF_IND, 0), "an indirect load" },
		{ C2E_ABI_RFC_I386, STMT(BPF_LD | BPF_W | BPF_ABS, 24), "loads [24] (eax)" },
		{ C2E_ABI_RFC_I386, STMT(BPF_LD | BPF_W | BPF_ABS, 60), "loads [60] (esp)" },
		{ C2E_ABI_RFC_I386, STMT(BPF_ALU | BPF_DIV | BPF_X, 0), "divides by X" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct sock_filter f[3] = {
			STMT(BPF_LDX | BPF_IMM, 0),
			cases[i].load,
			STMT(BPF_RET | BPF_K, (uint32_t)c2e_abi_data_size(cases[i].abi)),
		};
		struct sock_filter *twin = (void *)1;
		struct c2e_error err;
		size_t len = 1;
		char buf[256];

		ASSERT_EQ(c2e_rfc_to_seccomp(cases[i].abi, f, 3, &twin, &len, &err), -EOPNOTSUPP,
			  cases[i].says);
		ASSERT_TRUE(twin == NULL && len == 0, "nothing is returned");
		c2e_error_str(&err, buf, sizeof(buf));
		ASSERT_TRUE(strstr(buf, cases[i].says) && strstr(buf, "insn 1 "), buf);
	}
}

TEST(a_twin_answers_len_with_the_2012_size_and_ret_a_by_the_2012_rule)
{
	/* A = len; ret a: allows (the size); A = len + 1; ret a: blocks. */
	struct sock_filter f[] = {
		STMT(BPF_LD | BPF_W | BPF_ABS, 120),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, 39, 0, 2),
		STMT(BPF_LD | BPF_W | BPF_LEN, 0),
		STMT(BPF_RET | BPF_A, 0),
		STMT(BPF_LDX | BPF_W | BPF_LEN, 0),
		STMT(BPF_MISC | BPF_TXA, 0),
		STMT(BPF_ALU | BPF_ADD | BPF_K, 1),
		STMT(BPF_RET | BPF_A, 0),
	};
	struct seccomp_data sd = { .arch = C2E_AUDIT_ARCH_X86_64 };
	struct sock_filter *twin;
	size_t len;

	if (!ASSERT_OK(c2e_rfc_to_seccomp(C2E_ABI_RFC_X86_64, f, ARRAY_SIZE(f), &twin, &len, NULL),
		       "twin"))
		return;
	sd.nr = 39;
	ASSERT_EQ(c2e_interpret(twin, len, &sd), SECCOMP_RET_ALLOW, "len is 216: allowed");
	sd.nr = 40;
	ASSERT_EQ(c2e_interpret(twin, len, &sd), SECCOMP_RET_KILL_PROCESS, "217: blocked");
	free(twin);
}
