// SPDX-License-Identifier: GPL-2.0-only
/*
 * The translation's own promises, each checked by loading the output into
 * the running kernel and comparing with the reference interpreter:
 * dead code is dropped, long jumps work, programs the verifier would find
 * exponential still load, the body runs in more than one frame, and a chain
 * as deep as the kernel allows compiles into one program.
 */
#include "harness.h"
#include "c2e.h"
#include "sockfilter.h"

#include <bpf/bpf.h>
#include <stdlib.h>
#include <unistd.h>

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void random_data(struct seccomp_data *d)
{
	uint64_t *w = (uint64_t *)d;
	int i;

	for (i = 0; i < 8; i++)
		w[i] = rnd();
	if (rnd() & 1) /* small values hit the programs' constants more often */
		for (i = 0; i < 6; i++)
			d->args[i] &= 0xff;
}

static char verifier_log[1 << 16];

/* Loads a test-frame program; a verifier refusal is a test failure. */
static int load_or_fail(const struct c2e_ebpf *prog, const char *what)
{
	int fd = c2e_kernel_load(prog, verifier_log, sizeof(verifier_log));

	if (fd < 0) {
		size_t n = strlen(verifier_log);

		test_fail(__FILE__, __LINE__, "%s: load failed: %s\n%s", what,
			  strerror(-fd), verifier_log + (n > 2000 ? n - 2000 : 0));
	}
	return fd;
}

/* Translates, loads and compares with the interpreter on n inputs. */
static bool agrees_on_random_inputs(const struct sock_filter *f, size_t len,
				    int n, const char *what)
{
	struct c2e_ebpf prog = { 0 };
	struct seccomp_data d;
	uint32_t want, got;
	int fd, i, err;
	bool ok = true;

	err = c2e_translate(f, len, &prog);
	if (!ASSERT_OK(err, what))
		return false;
	fd = load_or_fail(&prog, what);
	c2e_ebpf_free(&prog);
	if (fd < 0)
		return false;
	for (i = 0; i < n && ok; i++) {
		random_data(&d);
		want = c2e_interpret(f, len, &d);
		ok = ASSERT_OK(c2e_kernel_run(fd, &d, &got), "test run") &&
		     ASSERT_EQ(got, want, what);
	}
	close(fd);
	return ok;
}

TEST(translate_drops_dead_code_the_verifier_would_refuse)
{
	static struct sock_filter f[C2E_MAX_INSNS];
	struct c2e_ebpf prog = { 0 };
	int i;

	/* 4096 x "ret ALLOW": the kernel converts every one (8195 eBPF
	 * instructions); only the first is reachable. */
	for (i = 0; i < C2E_MAX_INSNS; i++)
		f[i] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	ASSERT_OK(c2e_translate(f, C2E_MAX_INSNS, &prog), "translate");
	ASSERT_EQ(prog.len, 2, "w0 = ALLOW; exit");
	c2e_ebpf_free(&prog);
	agrees_on_random_inputs(f, C2E_MAX_INSNS, 10, "4096 rets");

	/* A jump over dead code, and dead code after a ret. */
	f[0] = STMT(BPF_LD | BPF_W | BPF_ABS, 0);
	f[1] = JUMP(BPF_JMP | BPF_JA, 2, 0, 0);
	f[2] = STMT(BPF_LD | BPF_MEM, 3);           /* never stored, never run */
	f[3] = STMT(BPF_RET | BPF_A, 0);
	f[4] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, 39, 0, 1);
	f[5] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 1);
	f[6] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[7] = STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS); /* dead */
	ASSERT_OK(c2e_validate(f, 8, NULL), "the kernel accepts it");
	agrees_on_random_inputs(f, 8, 1000, "dead code");
}

TEST(translate_reaches_across_the_longest_jumps)
{
	static struct sock_filter f[C2E_MAX_INSNS];
	size_t len = C2E_MAX_INSNS, i;

	/* ja from the first instruction to the last, conditional jumps of
	 * 255 in a ladder, and every skipped instruction live on another
	 * path so nothing is dropped. */
	f[0] = STMT(BPF_LD | BPF_W | BPF_ABS, 16);
	f[1] = JUMP(BPF_JMP | BPF_JSET | BPF_K, 1, 0, 1);
	f[2] = JUMP(BPF_JMP | BPF_JA, len - 2 - 3 - 1, 0, 0);
	for (i = 3; i < len - 2; i++) {
		if (i % 3 == 0 && i + 256 < len - 2)
			f[i] = JUMP(BPF_JMP | BPF_JGT | BPF_K, 0x80000000u + i, 255, 0);
		else
			f[i] = STMT(BPF_ALU | BPF_ADD | BPF_K, i);
	}
	f[len - 2] = STMT(BPF_RET | BPF_A, 0);
	f[len - 1] = STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP | 7);
	ASSERT_OK(c2e_validate(f, len, NULL), "valid");
	agrees_on_random_inputs(f, len, 2000, "long jumps");
}

TEST(translate_hides_path_constants_that_would_exhaust_the_verifier)
{
	struct sock_filter f[1 + 5 * 28 + 4];
	size_t n = 0;
	int i;

	/* X accumulates a different constant on each of 2^28 paths and is
	 * compared at the end. Without laundering the verifier walks 1M
	 * instructions and refuses (measured on 6.18); the kernel's classic
	 * seccomp accepts it. */
	f[n++] = STMT(BPF_LDX | BPF_IMM, 0);
	for (i = 0; i < 28; i++) {
		f[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, 16);
		f[n++] = JUMP(BPF_JMP | BPF_JSET | BPF_K, 1u << i, 0, 3);
		f[n++] = STMT(BPF_MISC | BPF_TXA, 0);
		f[n++] = STMT(BPF_ALU | BPF_ADD | BPF_K, 1u << i);
		f[n++] = STMT(BPF_MISC | BPF_TAX, 0);
	}
	f[n++] = STMT(BPF_MISC | BPF_TXA, 0);
	f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, 12345, 0, 1);
	f[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 2);
	f[n++] = STMT(BPF_RET | BPF_A, 0);
	ASSERT_OK(c2e_validate(f, n, NULL), "valid");
	agrees_on_random_inputs(f, n, 2000, "path constants");
}

TEST(translate_keeps_classic_arithmetic_semantics)
{
	/* DIV by X == 0 returns 0 from the program; shifts by X >= 32 are
	 * modulo 32; immediates with the top bit set compare unsigned. */
	struct sock_filter div[] = {
		STMT(BPF_LD | BPF_W | BPF_ABS, 16),
		STMT(BPF_MISC | BPF_TAX, 0),
		STMT(BPF_LD | BPF_W | BPF_ABS, 24),
		STMT(BPF_ALU | BPF_DIV | BPF_X, 0),
		STMT(BPF_ALU | BPF_OR | BPF_K, 0x7fff0000),
		STMT(BPF_RET | BPF_A, 0),
	};
	struct sock_filter shift[] = {
		STMT(BPF_LD | BPF_W | BPF_ABS, 16),
		STMT(BPF_MISC | BPF_TAX, 0),
		STMT(BPF_LD | BPF_IMM, 0x81234567),
		STMT(BPF_ALU | BPF_LSH | BPF_X, 0),
		STMT(BPF_MISC | BPF_TAX, 0),
		STMT(BPF_LD | BPF_W | BPF_ABS, 24),
		STMT(BPF_ALU | BPF_RSH | BPF_X, 0),
		STMT(BPF_ALU | BPF_XOR | BPF_X, 0),
		STMT(BPF_RET | BPF_A, 0),
	};
	struct sock_filter top_bit[] = {
		STMT(BPF_LD | BPF_W | BPF_ABS, 20),
		JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x80000000, 0, 2),
		JUMP(BPF_JMP | BPF_JSET | BPF_K, 0xc0000000, 0, 1),
		STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 3),
		JUMP(BPF_JMP | BPF_JGT | BPF_K, 0xfffffffe, 0, 1),
		STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 4),
		STMT(BPF_ALU | BPF_NEG, 0),
		STMT(BPF_RET | BPF_A, 0),
	};
	struct seccomp_data d = { 0 };
	struct c2e_ebpf prog = { 0 };
	uint32_t got;
	int fd;

	agrees_on_random_inputs(div, 6, 3000, "div by x");
	agrees_on_random_inputs(shift, 9, 3000, "shift by x");
	agrees_on_random_inputs(top_bit, 8, 3000, "top-bit immediates");

	/* The edge values themselves, not left to chance. */
	if (!ASSERT_OK(c2e_translate(div, 6, &prog), "translate div"))
		return;
	fd = load_or_fail(&prog, "div");
	c2e_ebpf_free(&prog);
	if (fd < 0)
		return;
	d.args[0] = 0;          /* X = 0 */
	d.args[1] = 100;
	ASSERT_OK(c2e_kernel_run(fd, &d, &got), "run");
	ASSERT_EQ(got, 0, "div by X == 0 returns 0 (KILL_THREAD)");
	d.args[0] = 7;
	ASSERT_OK(c2e_kernel_run(fd, &d, &got), "run");
	ASSERT_EQ(got, 0x7fff0000 | 14, "100 / 7");
	close(fd);
}

/*
 * The body in a second frame: seccomp_data copied to the stack, r6 a
 * stack pointer instead of the context, the scratch area placed lower.
 * The runtime's frame (a map value) relies on the same contract.
 */
TEST(translate_body_runs_in_another_frame)
{
	struct sock_filter f[] = {
		STMT(BPF_LD | BPF_W | BPF_ABS, 0),
		STMT(BPF_ST, 5),
		STMT(BPF_LD | BPF_W | BPF_ABS, 32),
		STMT(BPF_ALU | BPF_ADD | BPF_K, 3),
		STMT(BPF_MISC | BPF_TAX, 0),
		STMT(BPF_LD | BPF_MEM, 5),
		JUMP(BPF_JMP | BPF_JGT | BPF_X, 0, 0, 1),
		STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 9),
		STMT(BPF_RET | BPF_A, 0),
	};
	struct c2e_ebpf prog = { 0 };
	struct seccomp_data d;
	uint32_t got;
	int fd, i, w;

	/* r1 = ctx; copy 8 words to r10-64 .. r10-8; r6 = r10 - 64 */
	for (w = 0; w < 8; w++) {
		struct bpf_insn ld = { BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_2, BPF_REG_1, (int16_t)(8 * w), 0 };
		struct bpf_insn st = { BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_2, (int16_t)(-64 + 8 * w), 0 };

		prog.len += 2;
		prog.insns = realloc(prog.insns, prog.len * sizeof(*prog.insns));
		prog.insns[prog.len - 2] = ld;
		prog.insns[prog.len - 1] = st;
	}
	prog.cap = prog.len;
	{
		struct bpf_insn mov = { BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_10, 0, 0 };
		struct bpf_insn sub = { BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_6, 0, 0, -64 };

		prog.len += 2;
		prog.insns = realloc(prog.insns, prog.len * sizeof(*prog.insns));
		prog.cap = prog.len;
		prog.insns[prog.len - 2] = mov;
		prog.insns[prog.len - 1] = sub;
	}
	if (!ASSERT_OK(c2e_emit_body(f, sizeof(f) / sizeof(f[0]), 64, &prog), "body"))
		return;
	{
		struct bpf_insn ex = { BPF_JMP | BPF_EXIT, 0, 0, 0, 0 };

		prog.len++;
		prog.insns = realloc(prog.insns, prog.len * sizeof(*prog.insns));
		prog.cap = prog.len;
		prog.insns[prog.len - 1] = ex;
	}
	fd = load_or_fail(&prog, "stack frame");
	c2e_ebpf_free(&prog);
	if (fd < 0)
		return;
	for (i = 0; i < 2000; i++) {
		random_data(&d);
		if (!ASSERT_OK(c2e_kernel_run(fd, &d, &got), "run") ||
		    !ASSERT_EQ(got, c2e_interpret(f, 9, &d), "stack frame verdict"))
			break;
	}
	close(fd);
}

/*
 * The deepest chain the kernel allows: 1-instruction filters convert to 5
 * eBPF instructions each, plus 4 per attached filter, so 32768 / 9 = 3640
 * fit. Every one must run; the tail-call limit of 33 must not cap it.
 */
TEST(translate_chain_as_deep_as_the_kernel_allows)
{
	const size_t n = C2E_MAX_CHAIN_INSNS / (5 + C2E_CHAIN_PENALTY);
	struct sock_filter *f = calloc(n, sizeof(*f));
	struct sock_fprog *chain = calloc(n, sizeof(*chain));
	struct c2e_ebpf prog = { 0 };
	struct seccomp_data d = { 0 };
	uint32_t got;
	size_t i;
	int fd;

	for (i = 0; i < n; i++) {
		/* Mostly ERRNO with distinct data: ties keep the newest's
		 * data; one TRAP in the middle is the lowest action. */
		f[i] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (uint32_t)i);
		chain[i].filter = &f[i];
		chain[i].len = 1;
	}
	if (!ASSERT_OK(c2e_translate_chain(chain, n, &prog), "chain"))
		return;
	fd = c2e_kernel_load(&prog, NULL, 0);
	if (!ASSERT_GE(fd, 0, "3640-filter chain loads"))
		return;
	ASSERT_OK(c2e_kernel_run(fd, &d, &got), "run");
	ASSERT_EQ(got, SECCOMP_RET_ERRNO | (uint32_t)(n - 1), "newest ERRNO wins the tie");
	ASSERT_EQ(got, c2e_stack_eval(chain, n, &d), "same as the reference");
	close(fd);
	c2e_ebpf_free(&prog);

	f[n / 2] = STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP | 77);
	if (!ASSERT_OK(c2e_translate_chain(chain, n, &prog), "chain"))
		return;
	fd = c2e_kernel_load(&prog, NULL, 0);
	if (!ASSERT_GE(fd, 0, "load"))
		return;
	ASSERT_OK(c2e_kernel_run(fd, &d, &got), "run");
	ASSERT_EQ(got, SECCOMP_RET_TRAP | 77, "the lowest action wins");
	close(fd);
	c2e_ebpf_free(&prog);
}

/*
 * The stacking rule of kernel/seccomp.c seccomp_run_filters(), as a table:
 * an older filter's verdict and a newer one's, and what the kernel acts
 * on. The lowest action, compared signed, wins (KILL_PROCESS, the most
 * negative, below everything; an unknown action by its raw value); a tie
 * keeps the newer filter's full value, the fold's start (a plain ALLOW)
 * counting as the newest. Run through the emitted fold
 * (c2e_emit_fold(), which the runtime's chain programs use too) in the
 * kernel, and through c2e_stack_combine(), which the interpreter, the
 * action table and the gate's judge use: both must give the table's
 * answer.
 */
TEST(translate_chain_fold_keeps_the_kernels_verdict)
{
	static const struct { uint32_t older, newer, want; } t[] = {
		{ SECCOMP_RET_ALLOW, SECCOMP_RET_ALLOW, SECCOMP_RET_ALLOW },
		/* The fold starts from a plain ALLOW, which an ALLOW ties. */
		{ SECCOMP_RET_ALLOW, SECCOMP_RET_ALLOW | 5, SECCOMP_RET_ALLOW },
		{ SECCOMP_RET_ALLOW | 5, SECCOMP_RET_ALLOW, SECCOMP_RET_ALLOW },
		{ SECCOMP_RET_ERRNO | 1, SECCOMP_RET_ERRNO | 2, SECCOMP_RET_ERRNO | 2 },
		{ SECCOMP_RET_ERRNO | 2, SECCOMP_RET_ERRNO | 1, SECCOMP_RET_ERRNO | 1 },
		{ SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_ALLOW, SECCOMP_RET_KILL_PROCESS },
		{ SECCOMP_RET_ALLOW, SECCOMP_RET_KILL_THREAD, SECCOMP_RET_KILL_THREAD },
		{ SECCOMP_RET_KILL_THREAD, SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_KILL_PROCESS },
		{ SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_KILL_THREAD, SECCOMP_RET_KILL_PROCESS },
		{ SECCOMP_RET_TRAP | 5, SECCOMP_RET_ERRNO | 1, SECCOMP_RET_TRAP | 5 },
		{ SECCOMP_RET_ERRNO | 1, SECCOMP_RET_TRAP | 5, SECCOMP_RET_TRAP | 5 },
		{ SECCOMP_RET_LOG, SECCOMP_RET_USER_NOTIF, SECCOMP_RET_USER_NOTIF },
		{ SECCOMP_RET_TRACE | 3, SECCOMP_RET_LOG, SECCOMP_RET_TRACE | 3 },
		{ SECCOMP_RET_USER_NOTIF, SECCOMP_RET_TRACE | 3, SECCOMP_RET_USER_NOTIF },
		{ SECCOMP_RET_LOG | 9, SECCOMP_RET_LOG, SECCOMP_RET_LOG },
		{ 0x00010007, SECCOMP_RET_ERRNO | 1, 0x00010007 },
		{ SECCOMP_RET_KILL_THREAD, 0x00010007, SECCOMP_RET_KILL_THREAD },
		{ 0x7ffe0000, SECCOMP_RET_ALLOW, 0x7ffe0000 },
		{ 0xfff00001, SECCOMP_RET_ERRNO | 1, 0xfff00001 },
		{ SECCOMP_RET_KILL_PROCESS, 0xfff00001, SECCOMP_RET_KILL_PROCESS },
	};
	struct seccomp_data d = { 0 };
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct sock_filter f[2] = { STMT(BPF_RET | BPF_K, t[i].older),
					    STMT(BPF_RET | BPF_K, t[i].newer) };
		struct sock_fprog chain[2] = { { 1, &f[0] }, { 1, &f[1] } };
		struct c2e_ebpf prog = { 0 };
		char what[80];
		uint32_t got;
		int fd;

		snprintf(what, sizeof(what), "older 0x%08x, newer 0x%08x", t[i].older, t[i].newer);
		ASSERT_EQ(c2e_stack_combine(c2e_stack_combine(SECCOMP_RET_ALLOW, t[i].newer),
					    t[i].older), t[i].want, what);
		if (!ASSERT_OK(c2e_translate_chain(chain, 2, &prog), what))
			return;
		fd = load_or_fail(&prog, what);
		c2e_ebpf_free(&prog);
		if (fd < 0)
			return;
		if (ASSERT_OK(c2e_kernel_run(fd, &d, &got), "run"))
			ASSERT_EQ(got, t[i].want, what);
		close(fd);
	}
}

TEST(translate_refuses_what_the_validator_refuses)
{
	struct sock_filter mod[] = {
		STMT(BPF_ALU | BPF_MOD | BPF_K, 3),
		STMT(BPF_RET | BPF_A, 0),
	};
	struct c2e_ebpf prog = { 0 };

	ASSERT_EQ(c2e_translate(mod, 2, &prog), -EINVAL, "mod refused");
	ASSERT_EQ(prog.len, 0, "nothing emitted");
	ASSERT_EQ(c2e_translate(mod, 0, &prog), -EINVAL, "empty refused");
	c2e_ebpf_free(&prog);
}

/* Regressions found by the fuzzer and by random 4096-instruction programs. */
TEST(translate_initialises_x_on_paths_only_the_verifier_walks)
{
	/* A is provably 0 at insn 1, so insn 2 is dead to an exact analysis,
	 * but the verifier does not fold 0 / K and walks it: X must be set. */
	struct sock_filter f[] = {
		STMT(BPF_ALU | BPF_DIV | BPF_K, 0x40000000),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 3, 0),
		JUMP(BPF_JMP | BPF_JGE | BPF_X, 0x27, 1, 0),
		STMT(BPF_RET | BPF_K, 0x60000101),
		STMT(BPF_LD | BPF_W | BPF_LEN, 0),
		STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP | 7),
	};

	agrees_on_random_inputs(f, 6, 100, "x read on a verifier-only path");
}

TEST(translate_never_treats_two_unknowns_as_one_value)
{
	/* After "jeq #3" A is 3; X is unknown too, but not a copy of A, so
	 * "stx" must store X, not the constant 3. */
	struct sock_filter g[] = {
		STMT(BPF_LD | BPF_W | BPF_ABS, 24),
		STMT(BPF_MISC | BPF_TAX, 0),
		STMT(BPF_LD | BPF_W | BPF_ABS, 16),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, 3, 0, 2),
		STMT(BPF_STX, 4),
		JUMP(BPF_JMP | BPF_JA, 1, 0, 0),
		STMT(BPF_ST, 4),
		STMT(BPF_LD | BPF_MEM, 4),
		STMT(BPF_RET | BPF_A, 0),
	};
	struct seccomp_data d = { .args = { 3, 0x12345 } };
	struct c2e_ebpf prog = { 0 };
	uint32_t got;
	int fd;

	agrees_on_random_inputs(g, 9, 2000, "x is not a");
	if (!ASSERT_OK(c2e_translate(g, 9, &prog), "translate"))
		return;
	fd = load_or_fail(&prog, "x is not a");
	c2e_ebpf_free(&prog);
	if (fd < 0)
		return;
	ASSERT_OK(c2e_kernel_run(fd, &d, &got), "run");
	ASSERT_EQ(got, 0x12345, "stx stored X");
	close(fd);
}

/*
 * C2E_EMIT_SEARCH: a linear allowlist becomes a binary search. Same
 * verdict for every syscall number, on every corpus filter, and far fewer
 * compares on the path to the last rule.
 */
#include "corpus.h"

static bool search_agrees(const struct sock_filter *f, size_t len,
			  const char *what)
{
	struct c2e_ebpf prog = { 0 };
	struct seccomp_data d = { 0 };
	uint32_t got;
	bool ok = true;
	int fd, nr, arch;
	static const uint32_t arches[] = { C2E_AUDIT_ARCH_X86_64, C2E_AUDIT_ARCH_I386 };

	if (!ASSERT_OK(c2e_translate_flags(f, len, C2E_EMIT_SEARCH, &prog), what))
		return false;
	fd = load_or_fail(&prog, what);
	c2e_ebpf_free(&prog);
	if (fd < 0)
		return false;
	for (arch = 0; arch < 2 && ok; arch++) {
		for (nr = -2; nr < 520 && ok; nr++) {
			d.nr = nr;
			d.arch = arches[arch];
			d.args[0] = rnd() & 0xff;
			ok = ASSERT_OK(c2e_kernel_run(fd, &d, &got), "run") &&
			     ASSERT_EQ(got, c2e_interpret(f, len, &d), what);
		}
	}
	close(fd);
	return ok;
}

TEST(translate_search_lowering_keeps_every_verdict)
{
	struct corpus c;
	struct sock_filter linear[1 + 2 * 300 + 4];
	size_t i, n = 0;

	/* The runtime benchmark's filter: 300 x "jeq nr; ret ALLOW", the
	 * last rule (getppid) also checks args[0]. */
	linear[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, 0);
	for (i = 0; i < 299; i++) {
		uint32_t nr = i < 110 ? i : i + 1; /* every nr but getppid */

		linear[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1);
		linear[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	}
	linear[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, 110, 0, 3);
	linear[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, 16);
	linear[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, 7, 0, 1);
	linear[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	linear[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	search_agrees(linear, n, "300-rule linear allowlist");

	if (!ASSERT_OK(corpus_build(&c), "corpus"))
		return;
	for (i = 0; i < c.n; i++)
		if (!search_agrees(c.filters[i].insns, c.filters[i].len,
				   c.filters[i].name))
			break;
	corpus_free(&c);
}

/* The body of f with C2E_EMIT_RET_INDEX in a frame that returns w1, the
 * index of the ret that returned, instead of the verdict. */
static int load_ret_index_frame(const struct sock_filter *f, size_t len,
				unsigned int flags)
{
	struct c2e_ebpf prog = { 0 };
	struct bpf_insn head = { BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_1, 0, 0 };
	struct bpf_insn tail[2] = {
		{ BPF_ALU | BPF_MOV | BPF_X, BPF_REG_0, BPF_REG_1, 0, 0 },
		{ BPF_JMP | BPF_EXIT, 0, 0, 0, 0 },
	};
	int fd;

	prog.insns = malloc(sizeof(head));
	prog.insns[0] = head;
	prog.len = prog.cap = 1;
	if (!ASSERT_OK(c2e_emit_body_flags(f, len, 64, flags | C2E_EMIT_RET_INDEX, &prog),
		       "body with ret index"))
		return -1;
	prog.insns = realloc(prog.insns, (prog.len + 2) * sizeof(*prog.insns));
	memcpy(&prog.insns[prog.len], tail, sizeof(tail));
	prog.len += 2;
	prog.cap = prog.len;
	fd = load_or_fail(&prog, "ret index frame");
	c2e_ebpf_free(&prog);
	return fd;
}

static uint32_t ret_index_for(int fd, uint32_t nr, uint64_t arg0)
{
	struct seccomp_data d = { .nr = (int)nr, .arch = C2E_AUDIT_ARCH_X86_64 };
	uint32_t got = 0xdead;

	d.args[0] = arg0;
	ASSERT_OK(c2e_kernel_run(fd, &d, &got), "run");
	return got;
}

TEST(translate_ret_index_names_the_ret_that_returned)
{
	/* Identical rets at 2, 4 and 9 (merged without the option); the
	 * division by X = 0 at 7 returns 0 from no ret at all (index len). */
	struct sock_filter f[] = {
		STMT(BPF_LD | BPF_W | BPF_ABS, 0),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 1),
		STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, 2, 0, 1),
		STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, 3, 0, 3),
		STMT(BPF_LDX | BPF_W | BPF_IMM, 0),
		STMT(BPF_ALU | BPF_DIV | BPF_X, 0),
		STMT(BPF_RET | BPF_A, 0),
		STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_filter linear[1 + 2 * 100 + 1];
	size_t n = 0, i;
	int fd;

	fd = load_ret_index_frame(f, 10, 0);
	if (fd < 0)
		return;
	ASSERT_EQ(ret_index_for(fd, 1, 0), 2, "first ALLOW");
	ASSERT_EQ(ret_index_for(fd, 2, 0), 4, "second ALLOW, not merged into the last");
	ASSERT_EQ(ret_index_for(fd, 3, 0), 10, "division by zero: the implicit return 0");
	ASSERT_EQ(ret_index_for(fd, 4, 0), 9, "fall-through ALLOW");
	close(fd);

	/* With the search lowering too: every rule keeps its own index. */
	linear[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, 0);
	for (i = 0; i < 100; i++) {
		linear[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)i, 0, 1);
		linear[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	}
	linear[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	fd = load_ret_index_frame(linear, n, C2E_EMIT_SEARCH);
	if (fd < 0)
		return;
	for (i = 0; i < 100; i++)
		if (!ASSERT_EQ(ret_index_for(fd, (uint32_t)i, 0), 2 + 2 * i, "rule's ret"))
			break;
	ASSERT_EQ(ret_index_for(fd, 500, 0), n - 1, "default ret");
	close(fd);
}

TEST(translate_without_ret_index_emits_what_it_always_did)
{
	struct corpus c;
	size_t i;

	/* The option changes nothing unless asked for: the body without it
	 * never writes r1 (the contract's "r1-r5 untouched"). */
	if (!ASSERT_OK(corpus_build(&c), "corpus"))
		return;
	for (i = 0; i < c.n; i++) {
		struct c2e_ebpf p = { 0 };
		size_t k;

		if (!ASSERT_OK(c2e_emit_body_flags(c.filters[i].insns, c.filters[i].len,
						   64, C2E_EMIT_SEARCH, &p), c.filters[i].name))
			break;
		for (k = 0; k < p.len; k++)
			if (!ASSERT_TRUE(p.insns[k].dst_reg != BPF_REG_1 ||
					 BPF_CLASS(p.insns[k].code) == BPF_STX ||
					 BPF_CLASS(p.insns[k].code) == BPF_ST,
					 c.filters[i].name))
				break;
		c2e_ebpf_free(&p);
	}
	corpus_free(&c);
}
