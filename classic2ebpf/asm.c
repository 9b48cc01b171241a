// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The text form, read back: what c2e_disasm_classic() prints, plus the
 * spellings of the kernel's bpf_asm (tools/bpf/bpf_exp.y) that mean the
 * same instructions. One instruction per line:
 *
 *   line      := [label ":"]... [mnemonic [operand {"," operand}]] [";" text]
 *   comment   := ";" to the end of a line, anywhere; or a line whose first
 *                non-blank character is "#" followed by a blank or the end
 *                ("#5" is an immediate, "# note" a comment)
 *   label     := [A-Za-z_.][A-Za-z0-9_.]*, case-sensitive
 *   value     := number | AUDIT_ARCH_X86_64 | AUDIT_ARCH_I386 |
 *                X32_SYSCALL_BIT | SECCOMP_RET_<ACTION> |
 *                __NR_<name> | SYS_<name>   (x86_64 numbers, libseccomp) |
 *                a user_regs_struct field ("orig_rax": its offset), for
 *                the RFC ABIs only, where seccomp_data names are not
 *                known (c2e_asm_parse_abi())
 *   number    := C syntax (0x hex, leading 0 octal, decimal), optionally
 *                negative: two's complement 32-bit, -2^31 .. 2^32-1
 *   target    := label | "+" number   (raw offset, as printed for targets
 *                outside the program)
 *
 * Operands may contain blanks ("[x + 4]"); they are ignored.
 */
#include "c2e.h"
#include "grow.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <seccomp.h>

#define MAX_OPERANDS 4

struct label {
	char *name;
	size_t index; /* the instruction the label stands before */
	int line;
};

enum field { F_JT, F_JF, F_K };

struct fixup {
	size_t pc;
	enum field field;
	int line;
	char *name;
};

struct parser {
	struct sock_filter *insns;
	size_t n, cap;
	struct label *labels;
	size_t n_labels, cap_labels;
	size_t *hash; /* label index + 1, 0 = empty; open addressing */
	size_t hash_cap;
	struct fixup *fixups;
	size_t n_fixups, cap_fixups;
	struct c2e_error *err;
	int line;
	const char *mnemonic; /* for error messages */
	enum c2e_abi abi;     /* which data the loads name */
};

static int fail(struct parser *p, const char *fmt, ...)
{
	va_list ap;

	if (p->err) {
		p->err->index = -1;
		p->err->code = 0;
		p->err->line = p->line;
		va_start(ap, fmt);
		vsnprintf(p->err->msg, sizeof(p->err->msg), fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static int bad_operand(struct parser *p, const char *op)
{
	return fail(p, "bad operand '%s' for %s", op, p->mnemonic);
}

/* ---- labels ------------------------------------------------------------ */

static size_t hash_str(const char *s)
{
	size_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

static struct label *find_label(struct parser *p, const char *name)
{
	size_t i;

	if (!p->hash_cap)
		return NULL;
	for (i = hash_str(name) & (p->hash_cap - 1); p->hash[i];
	     i = (i + 1) & (p->hash_cap - 1))
		if (!strcmp(p->labels[p->hash[i] - 1].name, name))
			return &p->labels[p->hash[i] - 1];
	return NULL;
}

static int rehash(struct parser *p)
{
	size_t cap = p->hash_cap ? p->hash_cap * 2 : 64, i, j;
	size_t *h = calloc(cap, sizeof(*h));

	if (!h)
		return -ENOMEM;
	for (i = 0; i < p->n_labels; i++) {
		for (j = hash_str(p->labels[i].name) & (cap - 1); h[j];
		     j = (j + 1) & (cap - 1))
			;
		h[j] = i + 1;
	}
	free(p->hash);
	p->hash = h;
	p->hash_cap = cap;
	return 0;
}

static int add_label(struct parser *p, const char *name)
{
	struct label *old = find_label(p, name);
	struct label *l;
	size_t i;

	if (old)
		return fail(p, "duplicate label '%s' (first defined on line %d)",
			    name, old->line);
	if (C2E_GROW(p->labels, p->cap_labels, p->n_labels + 1))
		return -ENOMEM;
	l = &p->labels[p->n_labels++];
	l->name = strdup(name);
	if (!l->name) {
		p->n_labels--;
		return -ENOMEM;
	}
	l->index = p->n;
	l->line = p->line;
	if (p->n_labels * 2 > p->hash_cap)
		return rehash(p);
	for (i = hash_str(name) & (p->hash_cap - 1); p->hash[i];
	     i = (i + 1) & (p->hash_cap - 1))
		;
	p->hash[i] = p->n_labels;
	return 0;
}

/* ---- values ------------------------------------------------------------ */

/* Parses a number; -EINVAL without a message when s is not one at all,
 * so a caller can try other readings. */
static int parse_number(struct parser *p, const char *s, uint32_t *v,
			bool *reported)
{
	const char *d = s;
	unsigned long long u;
	bool neg = false;
	char *end;

	*reported = false;
	if (*d == '-' || *d == '+') {
		neg = *d == '-';
		d++;
	}
	if (!isdigit((unsigned char)*d))
		return -EINVAL;
	errno = 0;
	u = strtoull(d, &end, 0);
	if (*end) {
		*reported = true;
		return fail(p, "bad number '%s'", s);
	}
	if (errno == ERANGE || (!neg && u > UINT32_MAX) ||
	    (neg && u > 0x80000000ULL)) {
		*reported = true;
		return fail(p, "number '%s' does not fit in 32 bits", s);
	}
	*v = neg ? (uint32_t)(0 - (uint32_t)u) : (uint32_t)u;
	return 0;
}

/* A number or a symbolic constant. Reports every failure. */
static int parse_value(struct parser *p, const char *s, uint32_t *v)
{
	const char *sys = NULL;
	bool reported;
	int ret, nr;

	ret = parse_number(p, s, v, &reported);
	if (!ret || reported)
		return ret;
	if (p->abi != C2E_ABI_SECCOMP && (nr = c2e_rfc_reg_offset(p->abi, s)) >= 0) {
		*v = nr;
		return 0;
	}
	if (!strcmp(s, "AUDIT_ARCH_X86_64")) {
		*v = C2E_AUDIT_ARCH_X86_64;
		return 0;
	}
	if (!strcmp(s, "AUDIT_ARCH_I386")) {
		*v = C2E_AUDIT_ARCH_I386;
		return 0;
	}
	if (!strcmp(s, "X32_SYSCALL_BIT") || !strcmp(s, "__X32_SYSCALL_BIT")) {
		*v = C2E_X32_SYSCALL_BIT;
		return 0;
	}
	if (!strncmp(s, "SECCOMP_RET_", 12) && !strchr(s, '(') &&
	    !c2e_parse_action(s + 12, v))
		return 0;
	if (!strncmp(s, "__NR_", 5))
		sys = s + 5;
	else if (!strncmp(s, "SYS_", 4))
		sys = s + 4;
	if (sys) {
		nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, sys);
		/* libseccomp answers negative pseudo numbers for calls the
		 * arch does not have. */
		if (*sys && nr >= 0) {
			*v = nr;
			return 0;
		}
		return fail(p, "unknown x86_64 syscall '%s'", sys);
	}
	if (isalpha((unsigned char)*s) || *s == '_')
		return fail(p, "unknown constant '%s'", s);
	return bad_operand(p, s);
}

/* "#v", or a bare value where the mnemonic leaves no doubt. */
static int parse_imm(struct parser *p, const char *s, uint32_t *v)
{
	return parse_value(p, s[0] == '#' ? s + 1 : s, v);
}

static bool is_reg(const char *s, char r)
{
	if (*s == '%')
		s++;
	return tolower((unsigned char)s[0]) == r && s[1] == '\0';
}

/* Matches "prefix<value>suffix" and parses the value in between. 1 when
 * the shape matched (then 0/-EINVAL is in *ret), 0 when it did not. */
static int match_wrapped(struct parser *p, const char *s, const char *prefix,
			 const char *suffix, uint32_t *v, int *ret)
{
	size_t lp = strlen(prefix), ls = strlen(suffix), n = strlen(s);
	char inner[128];

	if (n < lp + ls || strncasecmp(s, prefix, lp) ||
	    strcasecmp(s + n - ls, suffix))
		return 0;
	if (n - lp - ls == 0 || n - lp - ls >= sizeof(inner)) {
		*ret = bad_operand(p, s);
		return 1;
	}
	memcpy(inner, s + lp, n - lp - ls);
	inner[n - lp - ls] = '\0';
	*ret = parse_value(p, inner, v);
	return 1;
}

/* ---- instructions ------------------------------------------------------ */

static int emit(struct parser *p, uint16_t code, uint8_t jt, uint8_t jf,
		uint32_t k)
{
	struct sock_filter *f;

	if (p->n >= C2E_MAX_INSNS)
		return fail(p, "too many instructions: the kernel accepts at most %d",
			    C2E_MAX_INSNS);
	if (C2E_GROW(p->insns, p->cap, p->n + 1))
		return -ENOMEM;
	f = &p->insns[p->n++];
	f->code = code;
	f->jt = jt;
	f->jf = jf;
	f->k = k;
	return 0;
}

/* A jump target for field of the instruction about to be emitted (index
 * p->n): a raw "+N" offset is stored now, a label is fixed up later. */
static int parse_target(struct parser *p, const char *s, enum field field,
			uint32_t *off)
{
	struct fixup *fx;
	bool reported;
	int ret;

	*off = 0;
	if (s[0] == '+') {
		ret = parse_number(p, s + 1, off, &reported);
		if (ret)
			return reported ? ret : bad_operand(p, s);
		if (field != F_K && *off > 255)
			return fail(p, "jump offset %" PRIu32 " does not fit: conditional jumps reach at most 255",
				    *off);
		return 0;
	}
	if (!(isalpha((unsigned char)s[0]) || s[0] == '_' || s[0] == '.'))
		return fail(p, "bad jump target '%s' for %s", s, p->mnemonic);
	if (C2E_GROW(p->fixups, p->cap_fixups, p->n_fixups + 1))
		return -ENOMEM;
	fx = &p->fixups[p->n_fixups];
	fx->name = strdup(s);
	if (!fx->name)
		return -ENOMEM;
	fx->pc = p->n;
	fx->field = field;
	fx->line = p->line;
	p->n_fixups++;
	return 0;
}

static int want_operands(struct parser *p, int n, int lo, int hi)
{
	if (n >= lo && n <= hi)
		return 0;
	if (lo == hi)
		return fail(p, "%s takes %d operand%s, not %d", p->mnemonic, lo,
			    lo == 1 ? "" : "s", n);
	return fail(p, "%s takes %d to %d operands, not %d", p->mnemonic, lo,
		    hi, n);
}

/* seccomp_data fields by name; little endian, so ".hi" is the word at +4. */
static bool data_field(const char *s, uint32_t *k)
{
	unsigned int i;

	if (!strcasecmp(s, "nr")) {
		*k = 0;
		return true;
	}
	if (!strcasecmp(s, "arch")) {
		*k = 4;
		return true;
	}
	if (!strcasecmp(s, "ip") || !strcasecmp(s, "ip.lo")) {
		*k = 8;
		return true;
	}
	if (!strcasecmp(s, "ip.hi")) {
		*k = 12;
		return true;
	}
	if (strncasecmp(s, "args[", 5) || !isdigit((unsigned char)s[5]) ||
	    s[6] != ']')
		return false;
	i = s[5] - '0';
	if (i > 5)
		return false;
	if (!strcasecmp(s + 7, "") || !strcasecmp(s + 7, ".lo"))
		*k = 16 + 8 * i;
	else if (!strcasecmp(s + 7, ".hi"))
		*k = 20 + 8 * i;
	else
		return false;
	return true;
}

/* The word forms ld and ldx share: #len, #k, M[k]. 1 when s is one of
 * them (then 0/-EINVAL is in *ret). cls is BPF_LD or BPF_LDX. */
static int parse_word_load(struct parser *p, const char *s, uint16_t cls,
			   int *ret)
{
	uint32_t k;

	if (!strcasecmp(s, "#len") || !strcasecmp(s, "len")) {
		*ret = emit(p, cls | BPF_W | BPF_LEN, 0, 0, 0);
		return 1;
	}
	if (s[0] == '#') {
		*ret = parse_value(p, s + 1, &k);
		if (!*ret)
			*ret = emit(p, cls | BPF_IMM, 0, 0, k);
		return 1;
	}
	if (match_wrapped(p, s, "M[", "]", &k, ret)) {
		if (!*ret)
			*ret = emit(p, cls | BPF_MEM, 0, 0, k);
		return 1;
	}
	return 0;
}

/* ld / ldh / ldb: size is BPF_W, BPF_H or BPF_B. */
static int parse_ld(struct parser *p, const char *s, uint16_t size)
{
	uint32_t k;
	int ret;

	if (size == BPF_W && parse_word_load(p, s, BPF_LD, &ret))
		return ret;
	if (size == BPF_W && p->abi == C2E_ABI_SECCOMP && data_field(s, &k))
		return emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, k);
	if (!strcasecmp(s, "[x]") || !strcasecmp(s, "[%x]"))
		return emit(p, BPF_LD | size | BPF_IND, 0, 0, 0);
	if (match_wrapped(p, s, "[x+", "]", &k, &ret) ||
	    match_wrapped(p, s, "[%x+", "]", &k, &ret))
		return ret ? ret : emit(p, BPF_LD | size | BPF_IND, 0, 0, k);
	if (match_wrapped(p, s, "[", "]", &k, &ret))
		return ret ? ret : emit(p, BPF_LD | size | BPF_ABS, 0, 0, k);
	return bad_operand(p, s);
}

/* ldx, and ldxb which has only the 4*([k]&0xf) form. */
static int parse_ldx(struct parser *p, const char *s, bool byte_only)
{
	uint32_t k;
	int ret;

	if (match_wrapped(p, s, "4*([", "]&0xf)", &k, &ret))
		return ret ? ret : emit(p, BPF_LDX | BPF_B | BPF_MSH, 0, 0, k);
	if (!byte_only && parse_word_load(p, s, BPF_LDX, &ret))
		return ret;
	return bad_operand(p, s);
}

static int parse_ret(struct parser *p, const char *s)
{
	uint32_t k;
	bool reported;
	int ret;

	if (is_reg(s, 'a'))
		return emit(p, BPF_RET | BPF_A, 0, 0, 0);
	if (s[0] == '#') {
		ret = parse_value(p, s + 1, &k);
		return ret ? ret : emit(p, BPF_RET | BPF_K, 0, 0, k);
	}
	ret = parse_number(p, s, &k, &reported);
	if (reported)
		return ret;
	if (!ret || !c2e_parse_action(s, &k))
		return emit(p, BPF_RET | BPF_K, 0, 0, k);
	if (strchr(s, '('))
		return bad_operand(p, s);
	ret = parse_value(p, s, &k);
	if (!ret)
		return emit(p, BPF_RET | BPF_K, 0, 0, k);
	return fail(p, "unknown action '%s' for ret", s);
}

static const struct {
	const char *name;
	uint16_t op;
} alu_ops[] = {
	{ "add", BPF_ADD }, { "sub", BPF_SUB }, { "mul", BPF_MUL },
	{ "div", BPF_DIV }, { "mod", BPF_MOD }, { "and", BPF_AND },
	{ "or", BPF_OR },   { "xor", BPF_XOR }, { "lsh", BPF_LSH },
	{ "rsh", BPF_RSH },
};

/* Conditional jumps; the negated spellings swap the two targets. */
static const struct {
	const char *name;
	uint16_t op;
	bool swap;
} jmp_ops[] = {
	{ "jeq", BPF_JEQ, false },  { "jgt", BPF_JGT, false },
	{ "jge", BPF_JGE, false },  { "jset", BPF_JSET, false },
	{ "jne", BPF_JEQ, true },   { "jneq", BPF_JEQ, true },
	{ "jlt", BPF_JGE, true },   { "jle", BPF_JGT, true },
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static int parse_jcc(struct parser *p, uint16_t op, bool swap, char **ops,
		     int n)
{
	enum field first = swap ? F_JF : F_JT, second = swap ? F_JT : F_JF;
	uint32_t k = 0, t1, t2 = 0;
	uint16_t src = BPF_K;
	int ret;

	ret = want_operands(p, n, 2, 3);
	if (ret)
		return ret;
	if (is_reg(ops[0], 'x'))
		src = BPF_X;
	else if ((ret = parse_imm(p, ops[0], &k)))
		return ret;
	ret = parse_target(p, ops[1], first, &t1);
	if (!ret && n == 3)
		ret = parse_target(p, ops[2], second, &t2);
	if (ret)
		return ret;
	if (swap)
		return emit(p, BPF_JMP | op | src, t2, t1, k);
	return emit(p, BPF_JMP | op | src, t1, t2, k);
}

static int parse_dot_insn(struct parser *p, char **ops, int n)
{
	uint32_t v[4];
	int i, ret;

	ret = want_operands(p, n, 4, 4);
	for (i = 0; !ret && i < 4; i++)
		ret = parse_value(p, ops[i], &v[i]);
	if (ret)
		return ret;
	if (v[0] > 0xffff)
		return fail(p, ".insn code '%s' does not fit in 16 bits", ops[0]);
	if (v[1] > 255 || v[2] > 255)
		return fail(p, ".insn jt and jf must be 0..255");
	return emit(p, v[0], v[1], v[2], v[3]);
}

static int parse_insn(struct parser *p, const char *mn, char **ops, int n)
{
	uint32_t k = 0;
	size_t i;
	int ret;

	p->mnemonic = mn;
	if (!strcasecmp(mn, ".insn"))
		return parse_dot_insn(p, ops, n);
	if (!strcasecmp(mn, "tax") || !strcasecmp(mn, "txa") ||
	    !strcasecmp(mn, "neg")) {
		ret = want_operands(p, n, 0, 0);
		if (ret)
			return ret;
		if (!strcasecmp(mn, "tax"))
			return emit(p, BPF_MISC | BPF_TAX, 0, 0, 0);
		if (!strcasecmp(mn, "txa"))
			return emit(p, BPF_MISC | BPF_TXA, 0, 0, 0);
		return emit(p, BPF_ALU | BPF_NEG, 0, 0, 0);
	}
	for (i = 0; i < ARRAY_SIZE(jmp_ops); i++)
		if (!strcasecmp(mn, jmp_ops[i].name))
			return parse_jcc(p, jmp_ops[i].op, jmp_ops[i].swap, ops, n);

	/* Everything else takes exactly one operand. */
	ret = want_operands(p, n, 1, 1);
	if (ret) {
		/* ...unless the mnemonic is unknown: say that instead. */
		static const char *const one[] = {
			"ld", "ldh", "ldb", "ldi", "ldx", "ldxi", "ldxb", "st",
			"stx", "ret", "ja", "jmp",
		};
		bool known = false;

		for (i = 0; i < ARRAY_SIZE(one); i++)
			known |= !strcasecmp(mn, one[i]);
		for (i = 0; i < ARRAY_SIZE(alu_ops); i++)
			known |= !strcasecmp(mn, alu_ops[i].name);
		if (!known)
			return fail(p, "unknown mnemonic '%s'", mn);
		return ret;
	}
	for (i = 0; i < ARRAY_SIZE(alu_ops); i++) {
		if (strcasecmp(mn, alu_ops[i].name))
			continue;
		if (is_reg(ops[0], 'x'))
			return emit(p, BPF_ALU | alu_ops[i].op | BPF_X, 0, 0, 0);
		ret = parse_imm(p, ops[0], &k);
		return ret ? ret : emit(p, BPF_ALU | alu_ops[i].op | BPF_K, 0,
					0, k);
	}
	if (!strcasecmp(mn, "ld"))
		return parse_ld(p, ops[0], BPF_W);
	if (!strcasecmp(mn, "ldh"))
		return parse_ld(p, ops[0], BPF_H);
	if (!strcasecmp(mn, "ldb"))
		return parse_ld(p, ops[0], BPF_B);
	if (!strcasecmp(mn, "ldx"))
		return parse_ldx(p, ops[0], false);
	if (!strcasecmp(mn, "ldxb"))
		return parse_ldx(p, ops[0], true);
	if (!strcasecmp(mn, "ldi") || !strcasecmp(mn, "ldxi")) {
		ret = parse_imm(p, ops[0], &k);
		if (ret)
			return ret;
		return emit(p, (!strcasecmp(mn, "ldi") ? BPF_LD : BPF_LDX) |
			       BPF_IMM, 0, 0, k);
	}
	if (!strcasecmp(mn, "st") || !strcasecmp(mn, "stx")) {
		if (!match_wrapped(p, ops[0], "M[", "]", &k, &ret))
			return bad_operand(p, ops[0]);
		if (ret)
			return ret;
		return emit(p, !strcasecmp(mn, "st") ? BPF_ST : BPF_STX, 0, 0, k);
	}
	if (!strcasecmp(mn, "ret"))
		return parse_ret(p, ops[0]);
	if (!strcasecmp(mn, "ja") || !strcasecmp(mn, "jmp")) {
		ret = parse_target(p, ops[0], F_K, &k);
		return ret ? ret : emit(p, BPF_JMP | BPF_JA, 0, 0, k);
	}
	return fail(p, "unknown mnemonic '%s'", mn);
}

/* ---- lines ------------------------------------------------------------- */

static bool label_start(char c)
{
	return isalpha((unsigned char)c) || c == '_' || c == '.';
}

static bool label_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.';
}

/* Removes blanks in place. */
static void squeeze(char *s)
{
	char *d = s;

	for (; *s; s++)
		if (!isspace((unsigned char)*s))
			*d++ = *s;
	*d = '\0';
}

/* Parses one line, NUL-terminated and writable. */
static int parse_line(struct parser *p, char *s)
{
	char *ops[MAX_OPERANDS + 1], *mn, *c;
	int n = 0, depth = 0, ret;

	c = strchr(s, ';');
	if (c)
		*c = '\0';
	while (isspace((unsigned char)*s))
		s++;
	if (s[0] == '#' && (s[1] == '\0' || isspace((unsigned char)s[1])))
		return 0;

	/* Labels: "name:" before an instruction or alone. */
	for (;;) {
		char *e = s;

		if (!label_start(*e))
			break;
		while (label_char(*e))
			e++;
		if (*e != ':')
			break;
		*e = '\0';
		ret = add_label(p, s);
		if (ret)
			return ret;
		s = e + 1;
		while (isspace((unsigned char)*s))
			s++;
	}
	if (!*s)
		return 0;

	mn = s;
	while (*s && !isspace((unsigned char)*s))
		s++;
	if (*s)
		*s++ = '\0';
	while (isspace((unsigned char)*s))
		s++;
	if (!label_start(mn[0]))
		return fail(p, "unknown mnemonic '%s'", mn);

	/* Operands: split on commas outside brackets and parentheses. */
	if (*s) {
		ops[n++] = s;
		for (c = s; *c; c++) {
			if (*c == '[' || *c == '(')
				depth++;
			else if (*c == ']' || *c == ')')
				depth--;
			else if (*c == ',' && depth <= 0) {
				if (n > MAX_OPERANDS) {
					p->mnemonic = mn;
					return fail(p, "too many operands for %s", mn);
				}
				*c = '\0';
				ops[n++] = c + 1;
			}
		}
	}
	if (n > MAX_OPERANDS) {
		p->mnemonic = mn;
		return fail(p, "too many operands for %s", mn);
	}
	for (depth = 0; depth < n; depth++) {
		squeeze(ops[depth]);
		if (!ops[depth][0]) {
			p->mnemonic = mn;
			return fail(p, "empty operand %d for %s", depth + 1, mn);
		}
	}
	return parse_insn(p, mn, ops, n);
}

static int resolve(struct parser *p)
{
	size_t i;

	for (i = 0; i < p->n_fixups; i++) {
		struct fixup *fx = &p->fixups[i];
		struct label *l = find_label(p, fx->name);
		struct sock_filter *f = &p->insns[fx->pc];
		size_t off;

		p->line = fx->line;
		if (!l)
			return fail(p, "undefined label '%s'", fx->name);
		if (l->index <= fx->pc)
			return fail(p, "backward jump to '%s' (line %d): jumps only go forward",
				    fx->name, l->line);
		off = l->index - fx->pc - 1;
		if (fx->field != F_K && off > 255)
			return fail(p, "jump to '%s' is %zu instructions away, conditional jumps reach at most 255",
				    fx->name, off);
		if (fx->field == F_JT)
			f->jt = off;
		else if (fx->field == F_JF)
			f->jf = off;
		else
			f->k = off;
	}
	return 0;
}

static void parser_free(struct parser *p)
{
	size_t i;

	for (i = 0; i < p->n_labels; i++)
		free(p->labels[i].name);
	for (i = 0; i < p->n_fixups; i++)
		free(p->fixups[i].name);
	free(p->labels);
	free(p->hash);
	free(p->fixups);
	free(p->insns);
}

int c2e_asm_parse(const char *text, size_t text_len, struct sock_filter **out,
		  size_t *len, struct c2e_error *err)
{
	return c2e_asm_parse_abi(text, text_len, C2E_ABI_SECCOMP, out, len, err);
}

int c2e_asm_parse_abi(const char *text, size_t text_len, enum c2e_abi abi,
		      struct sock_filter **out, size_t *len,
		      struct c2e_error *err)
{
	struct parser p = { .err = err, .abi = abi };
	char *line = NULL;
	size_t pos = 0, cap = 0;
	int ret = 0;

	*out = NULL;
	*len = 0;
	while (pos < text_len && !ret) {
		const char *nl = memchr(text + pos, '\n', text_len - pos);
		size_t n = (nl ? (size_t)(nl - text) : text_len) - pos;

		p.line++;
		if (memchr(text + pos, '\0', n)) {
			ret = fail(&p, "NUL byte in text");
			break;
		}
		if (n + 1 > cap) {
			char *l = realloc(line, n + 1);

			if (!l) {
				ret = -ENOMEM;
				break;
			}
			line = l;
			cap = n + 1;
		}
		memcpy(line, text + pos, n);
		line[n] = '\0';
		if (n && line[n - 1] == '\r')
			line[n - 1] = '\0';
		ret = parse_line(&p, line);
		pos += n + 1;
	}
	free(line);
	if (!ret && p.n == 0) {
		p.line = 0;
		ret = fail(&p, "empty program: no instructions");
	}
	if (!ret)
		ret = resolve(&p);
	if (ret) {
		parser_free(&p);
		return ret;
	}
	*out = p.insns;
	*len = p.n;
	p.insns = NULL;
	parser_free(&p);
	return 0;
}
