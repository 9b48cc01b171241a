// SPDX-License-Identifier: GPL-2.0-only
/*
 * The text form and the files (asm.c, disasm.c, fileio.c), and the verifier
 * log promise of kernel_run.c:
 *   - every one of the 2^16 opcodes prints, and what prints reads back to
 *     the same bytes, whatever jt, jf and k hold;
 *   - the known opcodes print as mnemonics, everything else as .insn;
 *   - bpf_asm spellings, symbolic constants and comments are accepted;
 *   - every error names its line and says what is wrong;
 *   - eBPF listings look like the kernel's verifier log;
 *   - raw and text files load, truncated and empty files are refused.
 */
#include "harness.h"
#include "c2e.h"
#include "sockfilter.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>

#define INSN(c, d, s, o, i) \
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), \
			    .off = (o), .imm = (i) })

/* The classic listing as a malloc'd string. */
static char *disasm_str(const struct sock_filter *f, size_t len)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *m = open_memstream(&buf, &size);

	if (!m)
		return NULL;
	if (c2e_disasm_classic(f, len, m)) {
		fclose(m);
		free(buf);
		return NULL;
	}
	fclose(m);
	return buf;
}

static char *disasm_ebpf_str(const struct bpf_insn *i, size_t len)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *m = open_memstream(&buf, &size);

	if (!m)
		return NULL;
	c2e_disasm_ebpf(i, len, m);
	fclose(m);
	return buf;
}

static int parse(const char *text, struct sock_filter **out, size_t *len,
		 struct c2e_error *err)
{
	return c2e_asm_parse(text, strlen(text), out, len, err);
}

/* Prints, parses back, compares. Quiet on success. */
static bool round_trips(const struct sock_filter *f, size_t len,
			const char *what)
{
	struct c2e_error err = { 0 };
	struct sock_filter *back = NULL;
	char *text = disasm_str(f, len), ebuf[300];
	size_t back_len = 0;
	bool ok;
	int ret;

	if (!ASSERT_OK_PTR(text, "disasm"))
		return false;
	ret = c2e_asm_parse(text, strlen(text), &back, &back_len, &err);
	ok = ret == 0 && back_len == len &&
	     !memcmp(back, f, len * sizeof(*f));
	if (!ok) {
		size_t i;

		test_fail(__FILE__, __LINE__, "%s: round trip differs (%s):\n%s",
			  what, ret ? c2e_error_str(&err, ebuf, sizeof(ebuf)) : "bytes",
			  text);
		for (i = 0; !ret && i < len && i < back_len; i++)
			if (memcmp(&back[i], &f[i], sizeof(*f)))
				test_log("insn %zu: %04x %u %u %x -> %04x %u %u %x\n", i,
					 f[i].code, f[i].jt, f[i].jf, f[i].k,
					 back[i].code, back[i].jt, back[i].jf,
					 back[i].k);
	}
	free(text);
	free(back);
	return ok;
}

TEST(asm_every_opcode_round_trips)
{
	/* jt/jf/k variants: zero (canonical for most codes), small targets
	 * inside the program, targets outside it, and large constants. */
	static const struct { uint8_t jt, jf; uint32_t k; } v[] = {
		{ 0, 0, 0 }, { 1, 2, 5 }, { 2, 0, 0x1000 }, { 255, 7, 0xffffffff },
		{ 0, 1, 63 }, { 3, 3, 0x80000000 },
	};
	size_t n_variants = test_is_emulated() ? 3 : ARRAY_SIZE(v);
	struct sock_filter f[4];
	uint32_t code;
	size_t i;

	for (code = 0; code <= 0xffff; code++) {
		for (i = 0; i < n_variants; i++) {
			char what[64];

			f[0] = JUMP(code, v[i].k, v[i].jt, v[i].jf);
			f[1] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
			f[2] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 1);
			f[3] = STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP | 2);
			snprintf(what, sizeof(what), "code 0x%04x variant %zu",
				 code, i);
			if (!round_trips(f, 4, what))
				return;
		}
	}
}

TEST(asm_known_opcodes_print_as_mnemonics)
{
	/* The codes net/core/filter.c knows, with canonical fields: none of
	 * them may fall back to .insn; every other code must. */
	static const uint16_t known[] = {
		0x00, 0x20, 0x28, 0x30, 0x40, 0x48, 0x50, 0x60, 0x80,
		0x01, 0x61, 0x81, 0xb1, 0x02, 0x03,
		0x04, 0x0c, 0x14, 0x1c, 0x24, 0x2c, 0x34, 0x3c, 0x44, 0x4c,
		0x54, 0x5c, 0x64, 0x6c, 0x74, 0x7c, 0x84, 0x94, 0x9c, 0xa4,
		0xac, 0x05, 0x15, 0x1d, 0x25, 0x2d, 0x35, 0x3d, 0x45, 0x4d,
		0x06, 0x16, 0x07, 0x87,
	};
	struct sock_filter f[2];
	uint32_t code;
	size_t i;

	for (code = 0; code <= 0xffff; code++) {
		bool is_known = false;
		char *text;

		for (i = 0; i < ARRAY_SIZE(known); i++)
			is_known |= known[i] == code;
		f[0] = JUMP(code, 0, 0, 0);
		f[1] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
		text = disasm_str(f, 2);
		if (!ASSERT_OK_PTR(text, "disasm"))
			return;
		if (is_known == !strncmp(text, "\t.insn", 6)) {
			test_fail(__FILE__, __LINE__, "code 0x%04x prints as %s",
				  code, text);
			free(text);
			return;
		}
		free(text);
	}
}

TEST(asm_disasm_prints_symbolic_forms)
{
	struct sock_filter f[] = {
		STMT(BPF_LD | BPF_W | BPF_ABS, 4),                  /* 0 */
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, C2E_AUDIT_ARCH_X86_64, 1, 0),
		STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		STMT(BPF_LD | BPF_W | BPF_ABS, 0),                  /* 3 */
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, 39, 10, 0),
		JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 8, 0),
		STMT(BPF_LD | BPF_W | BPF_ABS, 36),
		STMT(BPF_LD | BPF_W | BPF_ABS, 12),
		STMT(BPF_LD | BPF_W | BPF_ABS, 8),
		STMT(BPF_LD | BPF_W | BPF_ABS, 56),                 /* 9 */
		STMT(BPF_LD | BPF_W | BPF_LEN, 0),
		STMT(BPF_LDX | BPF_W | BPF_LEN, 0),
		STMT(BPF_ST, 3),
		STMT(BPF_LDX | BPF_MEM, 3),
		JUMP(BPF_JMP | BPF_JSET | BPF_X, 0, 0, 1),          /* 14 */
		STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 1),
		STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP | 3),
		STMT(BPF_RET | BPF_K, 0x12340000),
		STMT(BPF_RET | BPF_K, SECCOMP_RET_LOG),
		STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),           /* 19 */
		STMT(BPF_LD | BPF_W | BPF_IND, 4),
		STMT(BPF_ALU | BPF_MOD | BPF_K, 3),
		STMT(BPF_ALU | BPF_ADD | BPF_X, 0),
		STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW | 5),
		JUMP(0x1234, 7, 1, 2),
		JUMP(BPF_JMP | BPF_JEQ | BPF_X, 0, 200, 0),         /* 25 */
		STMT(BPF_RET | BPF_A, 0),
	};
	static const char want[] =
		"\tld arch\n"
		"\tjeq #0xc000003e, L3      ; AUDIT_ARCH_X86_64\n"
		"\tret KILL_PROCESS\n"
		"L3:\n"
		"\tld nr\n"
		"\tjeq #39, L15             ; getpid\n"
		"\tjge #0x40000000, L14\n"
		"\tld args[2].hi\n"
		"\tld ip.hi\n"
		"\tld ip\n"
		"\tld args[5]\n"
		"\tld #len\n"
		"\tldx #len\n"
		"\tst M[3]\n"
		"\tldx M[3]\n"
		"L14:\n"
		"\tjset x, L15, L16\n"
		"L15:\n"
		"\tret ERRNO(1)\n"
		"L16:\n"
		"\tret TRAP(3)\n"
		"\tret #0x12340000\n"
		"\tret LOG\n"
		"\tret ALLOW\n"
		"\tld [x+4]\n"
		"\tmod #3\n"
		"\tadd x\n"
		"\tret #0x7fff0005\n"
		"\t.insn 0x1234, 1, 2, 7\n"
		"\tjeq x, +200\n"
		"\tret a\n";
	char *text = disasm_str(f, ARRAY_SIZE(f));

	if (!ASSERT_OK_PTR(text, "disasm"))
		return;
	ASSERT_STREQ(text, want, "listing");
	free(text);
	round_trips(f, ARRAY_SIZE(f), "symbolic listing");
}

/* A syscall comment needs A to hold nr on every path into the jump. */
TEST(asm_disasm_comments_follow_what_a_holds)
{
	struct sock_filter f[] = {
		STMT(BPF_LD | BPF_W | BPF_ABS, 0),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 1),      /* write */
		STMT(BPF_LD | BPF_W | BPF_ABS, 16),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, 2, 0, 0),      /* A is args[0] or nr */
		STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	char *text = disasm_str(f, ARRAY_SIZE(f));

	if (!ASSERT_OK_PTR(text, "disasm"))
		return;
	ASSERT_STREQ(text,
		     "\tld nr\n"
		     "\tjeq #1, L2, L3           ; write\n"
		     "L2:\n"
		     "\tld args[0]\n"
		     "L3:\n"
		     "\tjeq #2, L4\n"
		     "L4:\n"
		     "\tret ALLOW\n", "listing");
	free(text);
}

TEST(asm_random_programs_round_trip)
{
	static struct sock_filter f[600];
	uint64_t s = 0x243f6a8885a308d3ull;
	int round, rounds = test_is_emulated() ? 50 : 500;
	size_t i, len;

	for (round = 0; round < rounds; round++) {
		s ^= s << 13; s ^= s >> 7; s ^= s << 17;
		len = 2 + s % 598;
		for (i = 0; i < len; i++) {
			s ^= s << 13; s ^= s >> 7; s ^= s << 17;
			f[i].code = (s & 3) == 0 ? (BPF_JMP | BPF_JEQ | BPF_K) :
				    (s & 3) == 1 ? (BPF_JMP | BPF_JA) :
				    (uint16_t)(s >> 8) & 0xff;
			f[i].jt = s >> 16;
			f[i].jf = (s >> 24) & 1 ? 0 : s >> 32;
			f[i].k = f[i].code == (BPF_JMP | BPF_JA) ? (s >> 40) % 700 :
				 (uint32_t)(s >> 20);
		}
		if (!round_trips(f, len, "random program"))
			return;
	}
}

TEST(asm_accepts_bpf_asm_spellings_and_constants)
{
	static const char text[] =
		"# a comment line\n"
		"  #\n"
		"start: ld [4]            ; arch, the bpf_asm way\n"
		"\tjne #AUDIT_ARCH_X86_64, kill\n"
		"\tld nr\n"
		"\tjeq #__NR_getpid, allow\n"
		"\tjeq SYS_read, allow, next\n"
		"next:\tjlt #-1, deny\n"
		"\tjle #0x10, deny, allow\n"
		"\tld len\n"
		"\tldx M[ 0x1 ]\n"
		"\tld [ x + 8 ]\n"
		"\tldxb 4*([14]&0xf)\n"
		"\tldi #AUDIT_ARCH_I386\n"
		"\tJMP allow\n"
		"kill: ret #0\n"
		"deny: ret errno(13)\r\n"
		"allow: ret %a\n";
	struct sock_filter want[] = {
		STMT(BPF_LD | BPF_W | BPF_ABS, 4),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, C2E_AUDIT_ARCH_X86_64, 0, 11),
		STMT(BPF_LD | BPF_W | BPF_ABS, 0),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, 39, 11, 0),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 10, 0),
		JUMP(BPF_JMP | BPF_JGE | BPF_K, 0xffffffff, 0, 8),
		JUMP(BPF_JMP | BPF_JGT | BPF_K, 0x10, 8, 7),
		STMT(BPF_LD | BPF_W | BPF_LEN, 0),
		STMT(BPF_LDX | BPF_MEM, 1),
		STMT(BPF_LD | BPF_W | BPF_IND, 8),
		STMT(BPF_LDX | BPF_B | BPF_MSH, 14),
		STMT(BPF_LD | BPF_IMM, C2E_AUDIT_ARCH_I386),
		STMT(BPF_JMP | BPF_JA, 2),
		STMT(BPF_RET | BPF_K, 0),
		STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 13),
		STMT(BPF_RET | BPF_A, 0),
	};
	struct c2e_error err = { 0 };
	struct sock_filter *f = NULL;
	char ebuf[300];
	size_t len = 0, i;
	int ret;

	ret = parse(text, &f, &len, &err);
	if (!ASSERT_OK(ret, c2e_error_str(&err, ebuf, sizeof(ebuf))))
		return;
	if (!ASSERT_EQ(len, ARRAY_SIZE(want), "length"))
		return;
	for (i = 0; i < len; i++) {
		char what[32];

		snprintf(what, sizeof(what), "insn %zu", i);
		ASSERT_EQ(f[i].code, want[i].code, what);
		ASSERT_EQ(f[i].jt, want[i].jt, what);
		ASSERT_EQ(f[i].jf, want[i].jf, what);
		ASSERT_EQ(f[i].k, want[i].k, what);
	}
	free(f);
}

TEST(asm_numbers_and_actions)
{
	static const struct { const char *text; uint32_t k; } cases[] = {
		{ "ret #5", 5 },
		{ "ret 0x7fff0000", SECCOMP_RET_ALLOW },
		{ "ret #-1", 0xffffffff },
		{ "ret #-2147483648", 0x80000000 },
		{ "ret #4294967295", 0xffffffff },
		{ "ret ALLOW", SECCOMP_RET_ALLOW },
		{ "ret KILL", SECCOMP_RET_KILL_THREAD },
		{ "ret KILL_PROCESS", SECCOMP_RET_KILL_PROCESS },
		{ "ret KILL_THREAD", SECCOMP_RET_KILL_THREAD },
		{ "ret TRAP(3)", SECCOMP_RET_TRAP | 3 },
		{ "ret ERRNO(0x10)", SECCOMP_RET_ERRNO | 16 },
		{ "ret TRACE(7)", SECCOMP_RET_TRACE | 7 },
		{ "ret USER_NOTIF", SECCOMP_RET_USER_NOTIF },
		{ "ret LOG", SECCOMP_RET_LOG },
		{ "ret SECCOMP_RET_LOG", SECCOMP_RET_LOG },
		{ "ret #__NR_getppid", 110 },
		{ "ret X32_SYSCALL_BIT", 0x40000000 },
		{ "ret 010", 8 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct c2e_error err = { 0 };
		struct sock_filter *f = NULL;
		char ebuf[300];
		size_t len = 0;

		if (!ASSERT_OK(parse(cases[i].text, &f, &len, &err),
			       c2e_error_str(&err, ebuf, sizeof(ebuf))))
			continue;
		ASSERT_EQ(len, 1, cases[i].text);
		ASSERT_EQ(f[0].code, BPF_RET | BPF_K, cases[i].text);
		ASSERT_EQ(f[0].k, cases[i].k, cases[i].text);
		free(f);
	}
}

/* Each error, with the line it names. */
TEST(asm_errors_name_the_line)
{
	static char too_far[8192], too_many[65536];
	static const struct { const char *text; const char *want; } cases[] = {
		{ "ld nr\njeqq #1, a\na: ret ALLOW\n",
		  "line 2: unknown mnemonic 'jeqq'" },
		{ "ld nr\n\nld foo\nret a\n",
		  "line 3: bad operand 'foo' for ld" },
		{ "ld 5\nret a\n", "line 1: bad operand '5' for ld" },
		{ "ld nr\njeq #1, nowhere\nret a\n",
		  "line 2: undefined label 'nowhere'" },
		{ "a: ld nr\n; c\na: ret a\n",
		  "line 3: duplicate label 'a' (first defined on line 1)" },
		{ "top: ld nr\nja top\nret a\n",
		  "line 2: backward jump to 'top' (line 1): jumps only go forward" },
		{ "self: ja self\nret a\n",
		  "line 1: backward jump to 'self' (line 1): jumps only go forward" },
		{ "; nothing\n# here\n\n", "empty program: no instructions" },
		{ "", "empty program: no instructions" },
		{ "ld #99999999999\nret a\n",
		  "line 1: number '99999999999' does not fit in 32 bits" },
		{ "ld #-2147483649\nret a\n",
		  "line 1: number '-2147483649' does not fit in 32 bits" },
		{ "ld #12z\nret a\n", "line 1: bad number '12z'" },
		{ "ret a\nld #__NR_nosuchcall\n",
		  "line 2: unknown x86_64 syscall 'nosuchcall'" },
		{ "ld #FOO\nret a\n", "line 1: unknown constant 'FOO'" },
		{ "ret FROB\n", "line 1: unknown action 'FROB' for ret" },
		{ "ret ERRNO(70000)\n", "line 1: bad operand 'ERRNO(70000)' for ret" },
		{ "jeq #1\nret a\n", "line 1: jeq takes 2 to 3 operands, not 1" },
		{ "tax x\nret a\n", "line 1: tax takes 0 operands, not 1" },
		{ "ld nr, arch\nret a\n", "line 1: ld takes 1 operand, not 2" },
		{ "jeq #1, +256\nret a\n",
		  "line 1: jump offset 256 does not fit: conditional jumps reach at most 255" },
		{ "jeq #1, 5\nret a\n", "line 1: bad jump target '5' for jeq" },
		{ ".insn 0x10000, 0, 0, 0\n",
		  "line 1: .insn code '0x10000' does not fit in 16 bits" },
		{ ".insn 6, 256, 0, 0\n", "line 1: .insn jt and jf must be 0..255" },
		{ "st 3\nret a\n", "line 1: bad operand '3' for st" },
		{ "ld nr\nret a\0\n", "line 2: NUL byte in text" },
		{ too_far, "line 1: jump to 'far' is 300 instructions away, conditional jumps reach at most 255" },
		{ too_many, "line 4097: too many instructions: the kernel accepts at most 4096" },
	};
	size_t i, n;

	n = snprintf(too_far, sizeof(too_far), "jeq #1, far\n");
	for (i = 0; i < 300; i++)
		n += snprintf(too_far + n, sizeof(too_far) - n, "ret ALLOW\n");
	snprintf(too_far + n, sizeof(too_far) - n, "far: ret a\n");
	for (i = 0, n = 0; i < 4097; i++)
		n += snprintf(too_many + n, sizeof(too_many) - n, "ret a\n");

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct c2e_error err = { 0 };
		struct sock_filter *f = (struct sock_filter *)1;
		char ebuf[300];
		size_t len = 99, tlen = strlen(cases[i].text);
		int ret;

		if (!strcmp(cases[i].want, "line 2: NUL byte in text"))
			tlen = 13;
		ret = c2e_asm_parse(cases[i].text, tlen, &f, &len, &err);
		ASSERT_EQ(ret, -EINVAL, cases[i].want);
		ASSERT_STREQ(c2e_error_str(&err, ebuf, sizeof(ebuf)),
			     cases[i].want, "message");
		ASSERT_TRUE(f == NULL && len == 0, "nothing returned");
	}
}

/* Builds "first\n" + n x "ret ALLOW\n" + "last\n" and parses it. */
static int parse_padded(const char *first, int n, const char *last,
			struct sock_filter **f, size_t *len,
			struct c2e_error *err)
{
	static char text[8192];
	size_t used;
	int i;

	used = snprintf(text, sizeof(text), "%s\n", first);
	for (i = 0; i < n; i++)
		used += snprintf(text + used, sizeof(text) - used, "ret ALLOW\n");
	snprintf(text + used, sizeof(text) - used, "%s\n", last);
	return parse(text, f, len, err);
}

TEST(asm_jump_limits)
{
	/* 255 is the farthest conditional jump; a label at the very end is
	 * accepted (validation, not the assembler, refuses the target). */
	struct c2e_error err = { 0 };
	struct sock_filter *f = NULL;
	char ebuf[300];
	size_t len = 0;

	if (ASSERT_OK(parse_padded("jeq #1, far\nja end", 254,
				   "far: ret a\nend:", &f, &len, &err),
		      c2e_error_str(&err, ebuf, sizeof(ebuf))) &&
	    ASSERT_EQ(len, 257, "length")) {
		ASSERT_EQ(f[0].jt, 255, "jt reaches 255");
		ASSERT_EQ(f[0].jf, 0, "no jf: falls through");
		ASSERT_EQ(f[1].k, 255, "ja to the end label");
	}
	free(f);

	ASSERT_EQ(parse_padded("nop: jeq #1, end", 256, "end:", &f, &len, &err),
		  -EINVAL, "256 is too far");
	ASSERT_STREQ(c2e_error_str(&err, ebuf, sizeof(ebuf)),
		     "line 1: jump to 'end' is 256 instructions away, conditional jumps reach at most 255",
		     "message");
}

TEST(asm_ebpf_listing_style)
{
	struct bpf_insn prog[] = {
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, 6, 1, 0, 0),
		INSN(BPF_LDX | BPF_MEM | BPF_W, 0, 6, 0, 0),
		INSN(BPF_ALU | BPF_ADD | BPF_K, 0, 0, 0, 5),
		INSN(BPF_JMP32 | BPF_JEQ | BPF_K, 0, 0, 3, 0x27),
		INSN(BPF_ALU | BPF_MOV | BPF_K, 0, 0, 0, 0x7fff0000),
		INSN(BPF_STX | BPF_MEM | BPF_W, 10, 0, -64, 0),
		INSN(BPF_ST | BPF_MEM | BPF_DW, 10, 0, -8, -1),
		INSN(BPF_ALU64 | BPF_RSH | BPF_X, 7, 8, 0, 0),
		INSN(BPF_ALU | BPF_MOD | BPF_X, 7, 8, 0, 0),
		INSN(BPF_ALU64 | BPF_NEG, 3, 0, 0, 0),
		INSN(BPF_JMP | BPF_JSGT | BPF_X, 1, 2, -2, 0),
		INSN(BPF_JMP | BPF_JA, 0, 0, 1, 0),
		INSN(BPF_LD | BPF_IMM | BPF_DW, 2, 0, 0, 0x89abcdef),
		INSN(0, 0, 0, 0, 0x01234567),
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem),
		INSN(BPF_STX | BPF_MEM | BPF_DW, 10, 1, -16, 0),
		INSN(BPF_ALU | BPF_END | BPF_TO_BE, 4, 0, 0, 16),
		INSN(BPF_STX | BPF_ATOMIC | BPF_W, 1, 2, 8, BPF_ADD),
		INSN(BPF_STX | BPF_ATOMIC | BPF_DW, 1, 2, 0, BPF_ADD | BPF_FETCH),
		INSN(BPF_STX | BPF_ATOMIC | BPF_DW, 1, 2, 0, BPF_CMPXCHG),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	static const char want[] =
		"   0: (bf) r6 = r1\n"
		"   1: (61) r0 = *(u32 *)(r6 +0)\n"
		"   2: (04) w0 += 5\n"
		"   3: (16) if w0 == 0x27 goto +3\n"
		"   4: (b4) w0 = 2147418112\n"
		"   5: (63) *(u32 *)(r10 -64) = w0\n"
		"   6: (7a) *(u64 *)(r10 -8) = -1\n"
		"   7: (7f) r7 >>= r8\n"
		"   8: (9c) w7 %= w8\n"
		"   9: (87) r3 = -r3\n"
		"  10: (6d) if r1 s> r2 goto -2\n"
		"  11: (05) goto +1\n"
		"  12: (18) r2 = 0x123456789abcdef\n"
		"  14: (85) call bpf_map_lookup_elem#1\n"
		"  15: (7b) *(u64 *)(r10 -16) = r1\n"
		"  16: (dc) r4 = be16 r4\n"
		"  17: (c3) lock *(u32 *)(r1 +8) += r2\n"
		"  18: (db) r2 = atomic64_fetch_add((u64 *)(r1 +0), r2)\n"
		"  19: (db) r0 = atomic64_cmpxchg((u64 *)(r1 +0), r0, r2)\n"
		"  20: (95) exit\n";
	char *text = disasm_ebpf_str(prog, ARRAY_SIZE(prog));

	if (!ASSERT_OK_PTR(text, "disasm"))
		return;
	ASSERT_STREQ(text, want, "listing");
	free(text);
}

TEST(asm_ebpf_listing_covers_every_opcode)
{
	struct bpf_insn i[2] = { { 0 } };
	unsigned int code;

	/* Nothing crashes, every line is indexed; LD_IMM64 missing its
	 * second slot says so. */
	for (code = 0; code < 256; code++) {
		char *text;

		i[0].code = code;
		i[0].dst_reg = 1;
		i[0].src_reg = 2;
		i[0].off = 3;
		i[0].imm = 4;
		text = disasm_ebpf_str(i, 1);
		if (!ASSERT_OK_PTR(text, "disasm"))
			return;
		if (!ASSERT_TRUE(!strncmp(text, "   0: (", 7) &&
				 text[strlen(text) - 1] == '\n' &&
				 !strchr(text, '\n')[1], "one indexed line")) {
			test_log("code 0x%02x: %s", code, text);
			free(text);
			return;
		}
		free(text);
	}
}

/* ---- files ------------------------------------------------------------- */

static char tmpdir[64];

static const char *tmp_path(const char *name)
{
	static char path[128];

	if (!tmpdir[0]) {
		strcpy(tmpdir, "/tmp/sftest-asm-XXXXXX");
		if (!mkdtemp(tmpdir))
			return NULL;
	}
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	return path;
}

/* Every name the file tests create, removed when a test returns. */
static const char *const tmp_names[] = {
	"f.bpf", "f.s", "trunc.bpf", "empty", "bad.s", "big.bpf",
};

static void cleanup_dir(int *unused)
{
	char p[128];
	size_t i;

	(void)unused;
	if (!tmpdir[0])
		return;
	for (i = 0; i < ARRAY_SIZE(tmp_names); i++) {
		snprintf(p, sizeof(p), "%s/%s", tmpdir, tmp_names[i]);
		unlink(p);
	}
	rmdir(tmpdir);
}

#define SCRATCH int scratch_ __attribute__((cleanup(cleanup_dir), unused)) = 0

static bool write_file(const char *path, const void *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	bool ok;

	if (fd < 0)
		return false;
	ok = write(fd, data, size) == (ssize_t)size;
	close(fd);
	return ok;
}

TEST(asm_files_raw_and_text)
{
	SCRATCH;
	struct sock_filter f[] = {
		STMT(BPF_LD | BPF_W | BPF_ABS, 0),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, 39, 0, 1),
		STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 1),
	};
	struct c2e_error err = { 0 };
	struct sock_filter *back = NULL;
	const char *path;
	size_t len = 0;
	char *text;

	path = tmp_path("f.bpf");
	if (!ASSERT_OK_PTR(path, "tmpdir"))
		return;
	ASSERT_OK(c2e_save_raw(path, f, ARRAY_SIZE(f)), "save raw");
	if (ASSERT_OK(c2e_load_file(path, &back, &len, &err), "load raw") &&
	    ASSERT_EQ(len, ARRAY_SIZE(f), "raw length"))
		ASSERT_TRUE(!memcmp(back, f, sizeof(f)), "raw bytes");
	free(back);

	text = disasm_str(f, ARRAY_SIZE(f));
	path = tmp_path("f.s");
	ASSERT_TRUE(write_file(path, text, strlen(text)), "write text");
	free(text);
	if (ASSERT_OK(c2e_load_file(path, &back, &len, &err), "load text") &&
	    ASSERT_EQ(len, ARRAY_SIZE(f), "text length"))
		ASSERT_TRUE(!memcmp(back, f, sizeof(f)), "text bytes");
	free(back);
}

TEST(asm_files_refused)
{
	SCRATCH;
	static struct sock_filter big[C2E_MAX_INSNS + 1];
	struct c2e_error err = { 0 };
	struct sock_filter *back = NULL;
	char raw13[13] = { 0x06 }, ebuf[300];
	const char *path;
	size_t len = 0, i;

	path = tmp_path("trunc.bpf");
	if (!ASSERT_OK_PTR(path, "tmpdir"))
		return;
	ASSERT_TRUE(write_file(path, raw13, sizeof(raw13)), "write");
	ASSERT_EQ(c2e_load_file(path, &back, &len, &err), -EINVAL, "truncated");
	ASSERT_STREQ(c2e_error_str(&err, ebuf, sizeof(ebuf)),
		     "file is 13 bytes, not a multiple of 8 (struct sock_filter)",
		     "truncated message");

	path = tmp_path("empty");
	ASSERT_TRUE(write_file(path, "", 0), "write");
	ASSERT_EQ(c2e_load_file(path, &back, &len, &err), -EINVAL, "empty");
	ASSERT_STREQ(c2e_error_str(&err, ebuf, sizeof(ebuf)), "file is empty",
		     "empty message");

	path = tmp_path("bad.s");
	ASSERT_TRUE(write_file(path, "ld nr\nfrob\n", 11), "write");
	ASSERT_EQ(c2e_load_file(path, &back, &len, &err), -EINVAL, "bad text");
	ASSERT_STREQ(c2e_error_str(&err, ebuf, sizeof(ebuf)),
		     "line 2: unknown mnemonic 'frob'", "bad text message");

	ASSERT_EQ(c2e_load_file(tmp_path("missing"), &back, &len, &err),
		  -ENOENT, "missing file");

	/* Longer than the kernel allows: loads; the validator refuses. */
	for (i = 0; i < ARRAY_SIZE(big); i++)
		big[i] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	path = tmp_path("big.bpf");
	ASSERT_OK(c2e_save_raw(path, big, ARRAY_SIZE(big)), "save");
	if (ASSERT_OK(c2e_load_file(path, &back, &len, &err), "4097 loads"))
		ASSERT_EQ(len, ARRAY_SIZE(big), "length");
	free(back);
}

/* ---- kernel_run.c ------------------------------------------------------ */

TEST(asm_kernel_load_log_only_on_failure)
{
	/* exit without setting r0: the verifier refuses with a log. */
	struct bpf_insn bad[] = { INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0) };
	struct bpf_insn good[] = {
		INSN(BPF_ALU | BPF_MOV | BPF_K, 0, 0, 0, 7),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	struct c2e_ebpf prog = { .insns = bad, .len = 1, .cap = 1 };
	struct seccomp_data d = { 0 };
	static char log[4096];
	uint32_t r = 0;
	int fd;

	memset(log, 'x', sizeof(log));
	fd = c2e_kernel_load(&prog, log, sizeof(log));
	if (fd == -EPERM) {
		test_skip("BPF_PROG_LOAD needs privileges");
		return;
	}
	ASSERT_TRUE(fd < 0, "refused");
	ASSERT_TRUE(strstr(log, "R0") != NULL, "verifier log names R0");

	prog.insns = good;
	prog.len = 2;
	memset(log, 'x', sizeof(log));
	fd = c2e_kernel_load(&prog, log, sizeof(log));
	if (!ASSERT_GE(fd, 0, "loads"))
		return;
	ASSERT_EQ(log[0], '\0', "no log on success");
	ASSERT_OK(c2e_kernel_run(fd, &d, &r), "run");
	ASSERT_EQ(r, 7, "retval");
	close(fd);
	ASSERT_TRUE(c2e_kernel_run(-1, &d, &r) < 0, "bad fd is an error");
}
