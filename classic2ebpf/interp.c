// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The reference interpreter and the meaning of return values. It mirrors
 * the kernel's classic semantics as seccomp runs them (A = X = 0 at start,
 * 32-bit unsigned arithmetic, DIV by X == 0 returns 0, shifts by X modulo
 * 32) and kernel/seccomp.c for actions and stacking. It is the oracle the
 * translation is tested against, so it stays deliberately plain.
 */
#include "c2e.h"
#include "semantics.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/*
 * The u32 at off, native-endian, any alignment. false when bytes
 * off..off+3 are not all inside the data: validation rules that out for
 * constant offsets, so it happens only to X + k (and is a blocked call).
 */
static bool load_word(const void *data, size_t size, uint64_t off,
		      uint32_t *w)
{
	if (off + 4 > size)
		return false;
	memcpy(w, (const char *)data + off, sizeof(*w));
	return true;
}

uint32_t c2e_interpret(const struct sock_filter *insns, size_t len,
		       const struct seccomp_data *data)
{
	return c2e_interpret_abi(insns, len, C2E_ABI_SECCOMP, data);
}

uint32_t c2e_interpret_abi(const struct sock_filter *insns, size_t len,
			   enum c2e_abi abi, const void *data)
{
	uint32_t a = 0, x = 0, mem[C2E_MEMWORDS] = { 0 };
	uint32_t size = c2e_abi_data_size(abi);
	size_t pc = 0;

	while (pc < len) {
		const struct sock_filter *f = &insns[pc++];
		uint32_t operand = BPF_SRC(f->code) == BPF_X ? x : f->k;

		switch (f->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			if (!load_word(data, size, f->k, &a))
				return 0;
			break;
		case BPF_LD | BPF_W | BPF_IND:
			/* X + k in 32 bits; a wrap is out of range too. */
			if (abi == C2E_ABI_SECCOMP ||
			    !load_word(data, size, (uint64_t)x + f->k, &a))
				return 0;
			break;
		case BPF_LD | BPF_W | BPF_LEN:
			a = size;
			break;
		case BPF_LDX | BPF_W | BPF_LEN:
			x = size;
			break;
		case BPF_LD | BPF_IMM:
			a = f->k;
			break;
		case BPF_LDX | BPF_IMM:
			x = f->k;
			break;
		case BPF_LD | BPF_MEM:
			a = mem[f->k];
			break;
		case BPF_LDX | BPF_MEM:
			x = mem[f->k];
			break;
		case BPF_ST:
			mem[f->k] = a;
			break;
		case BPF_STX:
			mem[f->k] = x;
			break;
		case BPF_MISC | BPF_TAX:
			x = a;
			break;
		case BPF_MISC | BPF_TXA:
			a = x;
			break;
		case BPF_ALU | BPF_DIV | BPF_K: case BPF_ALU | BPF_DIV | BPF_X:
			if (operand == 0)
				return 0; /* classic BPF ends the program */
			a /= operand;
			break;
		case BPF_ALU | BPF_NEG:
		case BPF_ALU | BPF_ADD | BPF_K: case BPF_ALU | BPF_ADD | BPF_X:
		case BPF_ALU | BPF_SUB | BPF_K: case BPF_ALU | BPF_SUB | BPF_X:
		case BPF_ALU | BPF_MUL | BPF_K: case BPF_ALU | BPF_MUL | BPF_X:
		case BPF_ALU | BPF_AND | BPF_K: case BPF_ALU | BPF_AND | BPF_X:
		case BPF_ALU | BPF_OR | BPF_K: case BPF_ALU | BPF_OR | BPF_X:
		case BPF_ALU | BPF_XOR | BPF_K: case BPF_ALU | BPF_XOR | BPF_X:
		case BPF_ALU | BPF_LSH | BPF_K: case BPF_ALU | BPF_LSH | BPF_X:
		case BPF_ALU | BPF_RSH | BPF_K: case BPF_ALU | BPF_RSH | BPF_X:
			a = c2e_alu32(BPF_OP(f->code), a, operand);
			break;
		case BPF_JMP | BPF_JA:
			pc += f->k;
			break;
		case BPF_JMP | BPF_JEQ | BPF_K: case BPF_JMP | BPF_JEQ | BPF_X:
		case BPF_JMP | BPF_JGT | BPF_K: case BPF_JMP | BPF_JGT | BPF_X:
		case BPF_JMP | BPF_JGE | BPF_K: case BPF_JMP | BPF_JGE | BPF_X:
		case BPF_JMP | BPF_JSET | BPF_K: case BPF_JMP | BPF_JSET | BPF_X:
			pc += c2e_jump_taken(BPF_OP(f->code), a, operand) ? f->jt : f->jf;
			break;
		case BPF_RET | BPF_K:
			return f->k;
		case BPF_RET | BPF_A:
			return a;
		default:
			/* Unreachable for validated programs; fail closed. */
			return SECCOMP_RET_KILL_PROCESS;
		}
	}
	return SECCOMP_RET_KILL_PROCESS;
}

uint32_t c2e_stack_combine(uint32_t best_so_far, uint32_t newer_result)
{
	/* Called newest first, so newer_result comes from an older filter:
	 * semantics.h has the rule. */
	return c2e_fold_keeps(best_so_far, newer_result) ? best_so_far : newer_result;
}

uint32_t c2e_stack_eval(const struct sock_fprog *chain, size_t n,
			const struct seccomp_data *data)
{
	uint32_t ret = SECCOMP_RET_ALLOW;
	size_t i;

	for (i = n; i-- > 0;)
		ret = c2e_stack_combine(ret, c2e_interpret(chain[i].filter,
							  chain[i].len, data));
	return ret;
}

static const struct {
	uint32_t action;
	const char *name;
} actions[] = {
	{ SECCOMP_RET_KILL_PROCESS, "KILL_PROCESS" },
	{ SECCOMP_RET_KILL_THREAD, "KILL_THREAD" },
	{ SECCOMP_RET_TRAP, "TRAP" },
	{ SECCOMP_RET_ERRNO, "ERRNO" },
	{ SECCOMP_RET_USER_NOTIF, "USER_NOTIF" },
	{ SECCOMP_RET_TRACE, "TRACE" },
	{ SECCOMP_RET_LOG, "LOG" },
	{ SECCOMP_RET_ALLOW, "ALLOW" },
};

int c2e_action_has_data(uint32_t action)
{
	static const uint32_t with_data[] = { C2E_DATA_ACTIONS };
	size_t i;

	for (i = 0; i < sizeof(with_data) / sizeof(with_data[0]); i++)
		if (with_data[i] == action)
			return 1;
	return 0;
}

#define N_ACTIONS (sizeof(actions) / sizeof(actions[0]))

static int action_index(uint32_t action)
{
	size_t i;

	for (i = 0; i < N_ACTIONS; i++)
		if (actions[i].action == action)
			return i;
	return -1;
}

uint32_t c2e_effective_action(uint32_t ret)
{
	uint32_t action = ret & C2E_RET_ACTION_FULL;

	return action_index(action) >= 0 ? action : SECCOMP_RET_KILL_PROCESS;
}

const char *c2e_action_name(uint32_t action)
{
	int i = action_index(action);

	return i >= 0 ? actions[i].name : NULL;
}

const char *c2e_verdict_str(uint32_t ret, char *buf, size_t size)
{
	int i = action_index(c2e_effective_action(ret));

	if (c2e_action_has_data(actions[i].action))
		snprintf(buf, size, "0x%08x %s(%u)", ret, actions[i].name,
			 ret & C2E_RET_DATA);
	else
		snprintf(buf, size, "0x%08x %s", ret, actions[i].name);
	return buf;
}

int c2e_parse_action(const char *text, uint32_t *ret)
{
	const char *paren = strchr(text, '(');
	size_t name_len = paren ? (size_t)(paren - text) : strlen(text);
	unsigned long data = 0;
	char *end;
	size_t i;

	if (!*text)
		return -EINVAL;
	if (!paren) {
		unsigned long v = strtoul(text, &end, 0);

		if (*end == '\0' && text[0] != '-') {
			if (v > UINT32_MAX)
				return -EINVAL;
			*ret = v;
			return 0;
		}
	} else {
		if (!(paren[1] >= '0' && paren[1] <= '9'))
			return -EINVAL;
		data = strtoul(paren + 1, &end, 0);
		if (*end != ')' || end[1] != '\0' || data > C2E_RET_DATA)
			return -EINVAL;
	}
	/* "KILL" is libseccomp's SCMP_ACT_KILL, the original thread kill. */
	if (name_len == 4 && strncasecmp(text, "KILL", 4) == 0) {
		*ret = SECCOMP_RET_KILL_THREAD | data;
		return 0;
	}
	for (i = 0; i < N_ACTIONS; i++) {
		if (strlen(actions[i].name) == name_len &&
		    strncasecmp(text, actions[i].name, name_len) == 0) {
			*ret = actions[i].action | data;
			return 0;
		}
	}
	return -EINVAL;
}
