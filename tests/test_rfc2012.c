// SPDX-License-Identifier: GPL-2.0-only
/*
 * The 2012 proposal's ABI (c2e_*_abi): filters over struct user_regs_struct
 * that allow a call by returning the data's size. Every verdict is checked
 * twice, by the reference interpreter and by the translation run in the
 * kernel (the RFC test frame: registers on the stack, the strictest place
 * for unaligned and variable-offset loads).
 */
#include "harness.h"
#include "c2e.h"
#include "sockfilter.h"

#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>
#include <seccomp.h>
#include <sys/user.h>

#define ALLOW SECCOMP_RET_ALLOW
#define BLOCK SECCOMP_RET_KILL_PROCESS

/* The i386 struct user_regs_struct (<sys/user.h> of a 32-bit build),
 * written out because this build is 64-bit. */
struct i386_user_regs {
	int32_t ebx, ecx, edx, esi, edi, ebp, eax;
	int32_t xds, xes, xfs, xgs, orig_eax, eip, xcs, eflags, esp, xss;
};

static char verifier_log[1 << 16];

/* The raw return, from the interpreter and from the kernel; a
 * disagreement or a refused translation fails the test. */
static bool run_both(const struct sock_filter *f, size_t len, enum c2e_abi abi,
		     const void *regs, uint32_t *raw, const char *what)
{
	struct c2e_ebpf prog = { 0 };
	uint32_t got = 0;
	int fd, err;

	*raw = c2e_interpret_abi(f, len, abi, regs);
	err = c2e_translate_abi(f, len, abi, 0, &prog);
	if (!ASSERT_OK(err, what))
		return false;
	fd = c2e_kernel_load_abi(&prog, abi, verifier_log, sizeof(verifier_log));
	if (fd < 0) {
		size_t n = strlen(verifier_log);

		test_fail(__FILE__, __LINE__, "%s: load failed: %s\n%s", what,
			  strerror(-fd), verifier_log + (n > 2000 ? n - 2000 : 0));
		c2e_disasm_ebpf(prog.insns, prog.len, stderr);
		c2e_ebpf_free(&prog);
		return false;
	}
	c2e_ebpf_free(&prog);
	err = c2e_kernel_run_abi(fd, abi, regs, &got);
	close(fd);
	return ASSERT_OK(err, "BPF_PROG_TEST_RUN") &&
	       ASSERT_EQ(got, *raw, what);
}

/* Registers whose every byte differs: byte i of the struct is i + 1,
 * so a load at offset o returns bytes o+1..o+4, little endian. */
static void counting_regs(unsigned char *regs, size_t size)
{
	size_t i;

	for (i = 0; i < size; i++)
		regs[i] = i + 1;
}

static uint32_t counting_word(uint32_t off)
{
	return (off + 1) | (off + 2) << 8 | (off + 3) << 16 | (uint32_t)(off + 4) << 24;
}

TEST(rfc2012_layouts_match_user_regs_struct)
{
#define X86(r) ASSERT_EQ(c2e_rfc_reg_offset(C2E_ABI_RFC_X86_64, #r), \
			 offsetof(struct user_regs_struct, r), #r)
#define I386(r) ASSERT_EQ(c2e_rfc_reg_offset(C2E_ABI_RFC_I386, #r), \
			  offsetof(struct i386_user_regs, r), #r)
	X86(r15); X86(r14); X86(r13); X86(r12); X86(rbp); X86(rbx); X86(r11);
	X86(r10); X86(r9); X86(r8); X86(rax); X86(rcx); X86(rdx); X86(rsi);
	X86(rdi); X86(orig_rax); X86(rip); X86(cs); X86(eflags); X86(rsp);
	X86(ss); X86(fs_base); X86(gs_base); X86(ds); X86(es); X86(fs); X86(gs);
	I386(ebx); I386(ecx); I386(edx); I386(esi); I386(edi); I386(ebp);
	I386(eax); I386(xds); I386(xes); I386(xfs); I386(xgs); I386(orig_eax);
	I386(eip); I386(xcs); I386(eflags); I386(esp); I386(xss);
#undef X86
#undef I386
	ASSERT_EQ(sizeof(struct user_regs_struct), C2E_RFC_X86_64_SIZE, "x86-64 size");
	ASSERT_EQ(sizeof(struct i386_user_regs), C2E_RFC_I386_SIZE, "i386 size");
	ASSERT_EQ(c2e_abi_data_size(C2E_ABI_SECCOMP), 64, "seccomp size");
	ASSERT_EQ(c2e_abi_data_size(C2E_ABI_RFC_X86_64), 216, "rfc2012 size");
	ASSERT_EQ(c2e_abi_data_size(C2E_ABI_RFC_I386), 68, "rfc2012-i386 size");
	ASSERT_STREQ(c2e_abi_name(C2E_ABI_RFC_I386), "rfc2012-i386", "name");
	ASSERT_STREQ(c2e_rfc_reg_name(C2E_ABI_RFC_X86_64, 120), "orig_rax", "name at 120");
	ASSERT_TRUE(c2e_rfc_reg_name(C2E_ABI_RFC_X86_64, 124) == NULL, "no field starts at 124");
	ASSERT_TRUE(c2e_rfc_reg_name(C2E_ABI_RFC_I386, 68) == NULL, "no field at 68");
	ASSERT_EQ(c2e_rfc_reg_offset(C2E_ABI_RFC_I386, "orig_rax"), -ENOENT, "x86-64 name in i386");
	ASSERT_EQ(c2e_rfc_reg_offset(C2E_ABI_SECCOMP, "orig_rax"), -ENOENT, "no names for seccomp");
	ASSERT_EQ(c2e_rfc_nr_offset(C2E_ABI_RFC_I386), 44, "orig_eax");
}

TEST(rfc2012_allows_exactly_when_the_filter_returns_the_layout_size)
{
	ASSERT_EQ(c2e_rfc_verdict(C2E_ABI_RFC_X86_64, 216), ALLOW, "216 on x86-64");
	ASSERT_EQ(c2e_rfc_verdict(C2E_ABI_RFC_X86_64, 68), BLOCK, "68 on x86-64");
	ASSERT_EQ(c2e_rfc_verdict(C2E_ABI_RFC_I386, 68), ALLOW, "68 on i386");
	ASSERT_EQ(c2e_rfc_verdict(C2E_ABI_RFC_I386, 216), BLOCK, "216 on i386");
	ASSERT_EQ(c2e_rfc_verdict(C2E_ABI_RFC_X86_64, 0), BLOCK, "0");
	ASSERT_EQ(c2e_rfc_verdict(C2E_ABI_RFC_X86_64, ALLOW), BLOCK,
		  "seccomp's ALLOW value means nothing here");
	ASSERT_EQ(c2e_rfc_verdict(C2E_ABI_SECCOMP, SECCOMP_RET_ERRNO | 1),
		  SECCOMP_RET_ERRNO | 1, "seccomp values pass through");
	/* A block ranks as a kill beside seccomp_data filters. */
	ASSERT_EQ(c2e_stack_combine(SECCOMP_RET_ERRNO | 1,
				    c2e_rfc_verdict(C2E_ABI_RFC_I386, 0)),
		  BLOCK, "block beats ERRNO");
}

struct load_case {
	const char *what;
	enum c2e_abi abi;
	bool ind;        /* ld [x+k] with X = x, else ld [k] */
	uint32_t x, k;
	bool in_range;   /* else the filter stops with 0 */
};

static const struct load_case load_cases[] = {
	{ "x86-64 abs 0", C2E_ABI_RFC_X86_64, false, 0, 0, true },
	{ "x86-64 abs orig_rax", C2E_ABI_RFC_X86_64, false, 0, 120, true },
	{ "x86-64 abs unaligned 13", C2E_ABI_RFC_X86_64, false, 0, 13, true },
	{ "x86-64 abs last word 212", C2E_ABI_RFC_X86_64, false, 0, 212, true },
	{ "x86-64 ind orig_rax, x 0", C2E_ABI_RFC_X86_64, true, 0, 120, true },
	{ "x86-64 ind x 120 + 0", C2E_ABI_RFC_X86_64, true, 120, 0, true },
	{ "x86-64 ind unaligned 1 + 2", C2E_ABI_RFC_X86_64, true, 1, 2, true },
	{ "x86-64 ind last word 200 + 12", C2E_ABI_RFC_X86_64, true, 200, 12, true },
	{ "x86-64 ind last byte unaligned 211 + 1", C2E_ABI_RFC_X86_64, true, 211, 1, true },
	{ "x86-64 ind one past 201 + 12", C2E_ABI_RFC_X86_64, true, 201, 12, false },
	{ "x86-64 ind at the size 216 + 0", C2E_ABI_RFC_X86_64, true, 216, 0, false },
	{ "x86-64 ind k past the end", C2E_ABI_RFC_X86_64, true, 0, 213, false },
	{ "x86-64 ind x + k wraps to 0", C2E_ABI_RFC_X86_64, true, 0xffffffff, 1, false },
	{ "x86-64 ind k wraps to 4", C2E_ABI_RFC_X86_64, true, 8, 0xfffffffc, false },
	{ "x86-64 ind huge x", C2E_ABI_RFC_X86_64, true, 0x80000000, 0, false },
	{ "i386 abs orig_eax", C2E_ABI_RFC_I386, false, 0, 44, true },
	{ "i386 abs last word 64", C2E_ABI_RFC_I386, false, 0, 64, true },
	{ "i386 abs unaligned 63", C2E_ABI_RFC_I386, false, 0, 63, true },
	{ "i386 ind last word 60 + 4", C2E_ABI_RFC_I386, true, 60, 4, true },
	{ "i386 ind one past 61 + 4", C2E_ABI_RFC_I386, true, 61, 4, false },
	{ "i386 ind x86-64's orig_rax", C2E_ABI_RFC_I386, true, 0, 120, false },
	{ "i386 ind x + k wraps", C2E_ABI_RFC_I386, true, 0xfffffffe, 3, false },
};

TEST(rfc2012_loads_in_range_and_stops_with_0_one_byte_past_the_end)
{
	unsigned char regs[C2E_ABI_MAX_SIZE];
	size_t i;

	counting_regs(regs, sizeof(regs));
	for (i = 0; i < ARRAY_SIZE(load_cases); i++) {
		const struct load_case *c = &load_cases[i];
		/* Returns the word, or after the load fails, 0; a failing load
		 * must not fall through to "ret #len". */
		struct sock_filter f[] = {
			STMT(BPF_LDX | BPF_IMM, c->x),
			c->ind ? STMT(BPF_LD | BPF_W | BPF_IND, c->k) :
				 STMT(BPF_LD | BPF_W | BPF_ABS, c->k),
			JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1),
			STMT(BPF_LD | BPF_W | BPF_LEN, 0),
			STMT(BPF_RET | BPF_A, 0),
		};
		uint32_t want = c->in_range ? counting_word(c->x + c->k) : 0, raw;

		if (!ASSERT_OK(c2e_validate_abi(f, ARRAY_SIZE(f), c->abi, NULL), c->what))
			continue;
		if (run_both(f, ARRAY_SIZE(f), c->abi, regs, &raw, c->what))
			ASSERT_EQ(raw, want, c->what);
		ASSERT_EQ(c2e_rfc_verdict(c->abi, raw), BLOCK, c->what);
	}
}

TEST(rfc2012_len_is_the_layout_size_and_returning_it_allows)
{
	struct sock_filter ld_len[] = {
		STMT(BPF_LD | BPF_W | BPF_LEN, 0),
		STMT(BPF_RET | BPF_A, 0),
	};
	struct sock_filter ldx_len[] = {
		STMT(BPF_LDX | BPF_W | BPF_LEN, 0),
		STMT(BPF_MISC | BPF_TXA, 0),
		STMT(BPF_RET | BPF_A, 0),
	};
	struct sock_filter ret_216[] = { STMT(BPF_RET | BPF_K, 216) };
	struct sock_filter ret_64[] = { STMT(BPF_RET | BPF_K, 64) };
	unsigned char regs[C2E_ABI_MAX_SIZE] = { 0 };
	uint32_t raw;

	if (run_both(ld_len, 2, C2E_ABI_RFC_X86_64, regs, &raw, "ld len x86-64"))
		ASSERT_EQ(raw, 216, "ld len x86-64");
	if (run_both(ld_len, 2, C2E_ABI_RFC_I386, regs, &raw, "ld len i386"))
		ASSERT_EQ(raw, 68, "ld len i386");
	if (run_both(ldx_len, 3, C2E_ABI_RFC_X86_64, regs, &raw, "ldx len x86-64"))
		ASSERT_EQ(c2e_rfc_verdict(C2E_ABI_RFC_X86_64, raw), ALLOW, "ldx len allows");
	if (run_both(ldx_len, 3, C2E_ABI_RFC_I386, regs, &raw, "ldx len i386"))
		ASSERT_EQ(raw, 68, "ldx len i386");
	if (run_both(ret_216, 1, C2E_ABI_RFC_I386, regs, &raw, "ret 216 on i386"))
		ASSERT_EQ(c2e_rfc_verdict(C2E_ABI_RFC_I386, raw), BLOCK,
			  "the native size blocks a compat filter");
	if (run_both(ret_64, 1, C2E_ABI_RFC_X86_64, regs, &raw, "ret 64"))
		ASSERT_EQ(c2e_rfc_verdict(C2E_ABI_RFC_X86_64, raw), BLOCK,
			  "seccomp_data's size blocks");
}

/* The seed's example (Documentation/prctl/seccomp_filter.txt, 2012), as
 * written: i386 numbers and offsets, loads through X = 0. */
static size_t seed_program(struct sock_filter *f)
{
#define NR(name) ((uint32_t)seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86, #name))
#define REG(r) offsetof(struct i386_user_regs, r)
	const struct sock_filter prog[] = {
		STMT(BPF_LD | BPF_W | BPF_IND, REG(orig_eax)),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR(rt_sigreturn), 10, 0),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR(sigreturn), 9, 0),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR(exit_group), 8, 0),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR(exit), 7, 0),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR(read), 1, 0),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR(write), 2, 6),
		STMT(BPF_LD | BPF_W | BPF_IND, REG(ebx)),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, STDIN_FILENO, 3, 4),
		STMT(BPF_LD | BPF_W | BPF_IND, REG(ebx)),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, STDOUT_FILENO, 1, 0),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, STDERR_FILENO, 0, 1),
		STMT(BPF_LD | BPF_W | BPF_LEN, 0),
		STMT(BPF_RET | BPF_A, 0),
	};
#undef REG
	memcpy(f, prog, sizeof(prog));
	return ARRAY_SIZE(prog);
}

struct seed_case {
	const char *what;
	const char *call;
	int32_t ebx;
	uint32_t verdict;
};

static const struct seed_case seed_cases[] = {
	{ "read(0, ..)", "read", 0, ALLOW },
	{ "write(1, ..)", "write", 1, ALLOW },
	{ "write(2, ..)", "write", 2, ALLOW },
	{ "exit(0)", "exit", 0, ALLOW },
	{ "exit_group(3)", "exit_group", 3, ALLOW },
	{ "rt_sigreturn", "rt_sigreturn", 0x1234, ALLOW },
	{ "sigreturn", "sigreturn", -1, ALLOW },
	{ "getpid", "getpid", 0, BLOCK },
	{ "write(3, ..)", "write", 3, BLOCK },
	{ "write(0, ..)", "write", 0, BLOCK },
	{ "read(1, ..)", "read", 1, BLOCK },
	{ "open", "open", 0, BLOCK },
	/* Quirks of the example as written: a refused call returns A, the
	 * value just compared, so whatever equals 68 (LEN) is allowed. */
	{ "read(68, ..): the fd is returned, and it is the size", "read", 68, ALLOW },
	{ "sgetmask: its number is 68 on i386", "sgetmask", 0, ALLOW },
};

TEST(rfc2012_seed_example_allows_stdio_and_exit_and_blocks_the_rest)
{
	struct sock_filter f[16];
	size_t len = seed_program(f), i;
	struct i386_user_regs regs;
	struct c2e_error err = { 0 };
	uint32_t raw;
	char buf[300];

	if (!ASSERT_OK(c2e_validate_abi(f, len, C2E_ABI_RFC_I386, &err),
		       c2e_error_str(&err, buf, sizeof(buf))))
		return;
	/* It is not a seccomp_data filter: indirect loads. */
	ASSERT_EQ(c2e_validate(f, len, NULL), -EINVAL, "seccomp refuses it");
	for (i = 0; i < ARRAY_SIZE(seed_cases); i++) {
		const struct seed_case *c = &seed_cases[i];
		int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86, c->call);

		if (!ASSERT_GE(nr, 0, c->call))
			continue;
		memset(&regs, 0, sizeof(regs));
		regs.orig_eax = nr;
		regs.eax = -ENOSYS; /* as at syscall entry */
		regs.ebx = c->ebx;
		regs.ecx = 0x0804a000;
		regs.edx = 26;
		if (run_both(f, len, C2E_ABI_RFC_I386, &regs, &raw, c->what))
			ASSERT_EQ(c2e_rfc_verdict(C2E_ABI_RFC_I386, raw), c->verdict,
				  c->what);
	}
	ASSERT_EQ(NR(sgetmask), 68, "sgetmask is 68 on i386");
#undef NR
}

struct invalid_case {
	const char *what;
	enum c2e_abi abi;
	struct sock_filter insn; /* placed at index 1 */
	const char *msg;         /* a part of the message */
};

static const struct invalid_case invalid_cases[] = {
	{ "ldh", C2E_ABI_RFC_X86_64, BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 0),
	  "half-word and byte loads are not allowed in rfc2012 filters" },
	{ "ldb", C2E_ABI_RFC_I386, BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 0),
	  "half-word and byte loads are not allowed in rfc2012-i386 filters" },
	{ "ldh [x+k]", C2E_ABI_RFC_X86_64, BPF_STMT(BPF_LD | BPF_H | BPF_IND, 0),
	  "half-word and byte loads" },
	{ "ldb [x+k]", C2E_ABI_RFC_X86_64, BPF_STMT(BPF_LD | BPF_B | BPF_IND, 0),
	  "half-word and byte loads" },
	{ "ld [213]", C2E_ABI_RFC_X86_64, BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 213),
	  "load beyond the 216-byte user_regs_struct: [213] reads bytes 213..216" },
	{ "ld [216]", C2E_ABI_RFC_X86_64, BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 216),
	  "load beyond the 216-byte user_regs_struct" },
	{ "ld [0xffffffff]", C2E_ABI_RFC_X86_64, BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0xffffffff),
	  "unknown ancillary load" },
	{ "ancillary ld [SKF_AD_OFF]", C2E_ABI_RFC_X86_64,
	  BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SKF_AD_OFF), "load beyond the 216-byte" },
	{ "i386 ld [65]", C2E_ABI_RFC_I386, BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 65),
	  "load beyond the 68-byte i386 user_regs_struct" },
	{ "i386 ld [orig_rax]", C2E_ABI_RFC_I386, BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 120),
	  "load beyond the 68-byte" },
	{ "mod", C2E_ABI_RFC_X86_64, BPF_STMT(BPF_ALU | BPF_MOD | BPF_K, 3),
	  "mod is not allowed in rfc2012 filters" },
	{ "ldxb msh", C2E_ABI_RFC_X86_64, BPF_STMT(BPF_LDX | BPF_B | BPF_MSH, 0),
	  "ldx msh is not allowed in rfc2012 filters" },
	{ "unknown opcode", C2E_ABI_RFC_X86_64, BPF_STMT(0xffff, 0), "unknown opcode" },
	{ "div by 0", C2E_ABI_RFC_X86_64, BPF_STMT(BPF_ALU | BPF_DIV | BPF_K, 0),
	  "division by constant 0" },
	{ "lsh 32", C2E_ABI_RFC_I386, BPF_STMT(BPF_ALU | BPF_LSH | BPF_K, 32),
	  "shift by constant 32" },
	{ "jump past the end", C2E_ABI_RFC_X86_64, BPF_STMT(BPF_JMP | BPF_JA, 1),
	  "lands past the end" },
	{ "scratch read before store", C2E_ABI_RFC_X86_64, BPF_STMT(BPF_LD | BPF_MEM, 2),
	  "M[2] is read before it is stored" },
	{ "scratch slot 16", C2E_ABI_RFC_I386, BPF_STMT(BPF_ST, 16),
	  "scratch slot M[16] out of range" },
};

TEST(rfc2012_validation_names_the_instruction_and_the_rule)
{
	struct sock_filter last_not_ret[] = {
		STMT(BPF_LD | BPF_W | BPF_LEN, 0),
	};
	struct c2e_error err;
	char buf[300];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(invalid_cases); i++) {
		const struct invalid_case *c = &invalid_cases[i];
		struct sock_filter f[] = {
			STMT(BPF_LDX | BPF_IMM, 0),
			c->insn,
			STMT(BPF_RET | BPF_K, 0),
		};

		memset(&err, 0, sizeof(err));
		if (!ASSERT_EQ(c2e_validate_abi(f, 3, c->abi, &err), -EINVAL, c->what))
			continue;
		ASSERT_EQ(err.index, 1, c->what);
		ASSERT_EQ(err.code, c->insn.code, c->what);
		if (!ASSERT_TRUE(strstr(err.msg, c->msg), c->what))
			test_log("%s: got '%s'\n", c->what,
				 c2e_error_str(&err, buf, sizeof(buf)));
	}
	ASSERT_EQ(c2e_validate_abi(last_not_ret, 1, C2E_ABI_RFC_X86_64, &err),
		  -EINVAL, "last insn not ret");
	ASSERT_TRUE(strstr(err.msg, "the last instruction must be ret"), err.msg);
	ASSERT_EQ(c2e_validate_abi(last_not_ret, 0, C2E_ABI_RFC_X86_64, &err),
		  -EINVAL, "empty");
	ASSERT_EQ(c2e_validate_abi(last_not_ret, 1, 7, &err), -EINVAL, "unknown abi");
	ASSERT_TRUE(strstr(err.msg, "unknown filter ABI"), err.msg);
}

static uint64_t rng_state = 0x2012c0ffee15beefull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

TEST(rfc2012_translation_agrees_with_the_interpreter_on_indirect_loads)
{
	/* X from a register, then loads through it at several k, an
	 * unaligned one, scratch memory, and a division that can end it. */
	struct sock_filter f[] = {
		STMT(BPF_LD | BPF_W | BPF_ABS, 112),   /* rdi */
		STMT(BPF_ALU | BPF_AND | BPF_K, 0xff),
		STMT(BPF_MISC | BPF_TAX, 0),
		STMT(BPF_LD | BPF_W | BPF_IND, 0),
		STMT(BPF_ST, 0),
		STMT(BPF_LD | BPF_W | BPF_IND, 5),
		STMT(BPF_ALU | BPF_XOR | BPF_K, 0x5a5a5a5a),
		STMT(BPF_ST, 1),
		STMT(BPF_LDX | BPF_MEM, 0),
		STMT(BPF_LD | BPF_W | BPF_ABS, 3),
		STMT(BPF_ALU | BPF_DIV | BPF_X, 0),
		STMT(BPF_LDX | BPF_MEM, 1),
		STMT(BPF_ALU | BPF_ADD | BPF_X, 0),
		JUMP(BPF_JMP | BPF_JSET | BPF_K, 1, 0, 1),
		STMT(BPF_LD | BPF_W | BPF_LEN, 0),
		STMT(BPF_RET | BPF_A, 0),
	};
	unsigned char regs[C2E_ABI_MAX_SIZE];
	enum c2e_abi abi;
	uint32_t raw;
	int i, j;

	for (abi = C2E_ABI_RFC_X86_64; abi <= C2E_ABI_RFC_I386; abi++) {
		f[0].k = abi == C2E_ABI_RFC_I386 ? 16 : 112;
		for (i = 0; i < 300; i++) {
			for (j = 0; j < C2E_ABI_MAX_SIZE; j++)
				regs[j] = rnd();
			if (!run_both(f, ARRAY_SIZE(f), abi, regs, &raw,
				      c2e_abi_name(abi)))
				return;
		}
	}
}
