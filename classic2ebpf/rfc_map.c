// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A 2012 filter as a seccomp_data filter, where one exists: for the calls
 * of the filter's own arch, the registers a 2012 filter may read that
 * seccomp_data also carries are the number, the instruction pointer and
 * the six argument registers, so a filter that reads only those has an
 * exact seccomp_data twin. The gate and its judge use the twin; a filter
 * without one keeps the dispatcher's path.
 *
 *   x86-64 (syscall ABI)     seccomp_data      i386 (int $0x80 ABI)
 *   orig_rax low word        nr                orig_eax
 *   rip low, high            ip low, high      eip (low)
 *   rdi rsi rdx r10 r8 r9    args[0..5]        ebx ecx edx esi edi ebp (low)
 *
 * orig_rax's high word is not there (do_syscall_64() takes the number as
 * an int; the rest of the register is the caller's), and neither is any
 * other register. Calls of another arch (int $0x80 from a 64-bit task, a
 * far jump to 64-bit code from a 32-bit one) have their arguments in
 * other registers: the twin answers ALLOW for them and leaves them to the
 * dispatcher, which reads the real registers.
 *
 * The rewrite is one instruction for one behind a four-instruction arch
 * check (which leaves A as the filter expects it, 0), so jump offsets
 * hold:
 *   ld [reg]           ->  ld [its seccomp_data word]
 *   ld len / ldx len   ->  ld #size / ldx #size (the 2012 data's size)
 *   ret #k             ->  ret ALLOW when k is the size, else KILL_PROCESS
 *   ret a              ->  ja <tail>: jeq #size, ret ALLOW, ret KILL_PROCESS
 * c2e_rfc_verdict() is the rule (the proposal blocks every other value).
 * A division by X has no exact twin: a zero X ends a seccomp filter with
 * 0 (KILL_THREAD) where the 2012 rule makes every non-size a block.
 */
#include "c2e.h"
#include "fail.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* seccomp_data words */
#define SD_NR    0
#define SD_IP    8
#define SD_ARG(i) (16 + 8 * (i))

#define fail(err, index, code, ...) c2e_fail(err, index, code, -EOPNOTSUPP, __VA_ARGS__)

/* The seccomp_data offset of the 2012 word at off, or -1. */
static int map_word(enum c2e_abi abi, uint32_t off)
{
	static const char *const x86_64_args[6] = { "rdi", "rsi", "rdx", "r10", "r8", "r9" };
	static const char *const i386_args[6] = { "ebx", "ecx", "edx", "esi", "edi", "ebp" };
	const char *const *args = abi == C2E_ABI_RFC_I386 ? i386_args : x86_64_args;
	unsigned int reg = abi == C2E_ABI_RFC_I386 ? 4 : 8;
	uint32_t base = off - off % reg, half = off % reg;
	int i;

	if (off % 4)
		return -1;
	if ((int)base == c2e_rfc_nr_offset(abi))
		return half ? -1 : SD_NR;
	if ((int)base == c2e_rfc_reg_offset(abi, abi == C2E_ABI_RFC_I386 ? "eip" : "rip"))
		return SD_IP + (int)half;
	for (i = 0; i < 6; i++)
		if ((int)base == c2e_rfc_reg_offset(abi, args[i]))
			return SD_ARG(i) + (int)half;
	return -1;
}

int c2e_rfc_to_seccomp(enum c2e_abi abi, const struct sock_filter *in, size_t len,
		       struct sock_filter **out, size_t *out_len, struct c2e_error *err)
{
	uint32_t size = (uint32_t)c2e_abi_data_size(abi);
	uint32_t arch = abi == C2E_ABI_RFC_I386 ? C2E_AUDIT_ARCH_I386 : C2E_AUDIT_ARCH_X86_64;
	struct sock_filter *f;
	bool ret_a = false;
	size_t i, n, tail;
	int r;

	*out = NULL;
	*out_len = 0;
	if (abi == C2E_ABI_SECCOMP || !size)
		return fail(err, -1, 0, "not a 2012 filter ABI");
	r = c2e_validate_abi(in, len, abi, err);
	if (r)
		return r;
	for (i = 0; i < len; i++) {
		uint16_t code = in[i].code;

		if (code == (BPF_RET | BPF_A))
			ret_a = true;
		else if (code == (BPF_ALU | BPF_DIV | BPF_X))
			return fail(err, (int)i, code,
				    "divides by X: a zero X ends a seccomp filter with "
				    "KILL_THREAD, where the 2012 rule blocks with a kill of "
				    "the process");
		else if (code == (BPF_LD | BPF_W | BPF_IND))
			return fail(err, (int)i, code,
				    "an indirect load: which register it reads is known "
				    "only when it runs, so it has no seccomp_data twin");
		else if (code == (BPF_LD | BPF_W | BPF_ABS) && map_word(abi, in[i].k) < 0) {
			const char *name = c2e_rfc_reg_name(abi, in[i].k - in[i].k %
							    (abi == C2E_ABI_RFC_I386 ? 4 : 8));

			return fail(err, (int)i, code,
				    "loads [%u] (%s%s): seccomp_data carries only the number, "
				    "the instruction pointer and the argument registers",
				    in[i].k, name ? name : "?",
				    in[i].k % 4 ? ", unaligned" :
				    (int)(in[i].k - in[i].k % 8) == c2e_rfc_nr_offset(abi) ?
				    ", high word" : "");
		}
	}
	n = 4 + len + (ret_a ? 3 : 0);
	if (n > C2E_MAX_INSNS)
		return fail(err, -1, 0, "its twin needs %zu instructions; a filter holds at most %d",
			    n, C2E_MAX_INSNS);
	f = calloc(n, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f[0] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 4);
	f[1] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arch, 1, 0);
	f[2] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[3] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_IMM, 0);
	tail = 4 + len;
	for (i = 0; i < len; i++) {
		struct sock_filter x = in[i];
		size_t pc = 4 + i;

		switch (x.code) {
		case BPF_LD | BPF_W | BPF_ABS:
			x.k = (uint32_t)map_word(abi, x.k);
			break;
		case BPF_LD | BPF_W | BPF_LEN:
			x = (struct sock_filter)BPF_STMT(BPF_LD | BPF_IMM, size);
			break;
		case BPF_LDX | BPF_W | BPF_LEN:
			x = (struct sock_filter)BPF_STMT(BPF_LDX | BPF_IMM, size);
			break;
		case BPF_RET | BPF_K:
			x.k = c2e_rfc_verdict(abi, x.k);
			break;
		case BPF_RET | BPF_A:
			x = (struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA, (uint32_t)(tail - pc - 1));
			break;
		}
		f[pc] = x;
	}
	if (ret_a) {
		f[tail] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, size, 0, 1);
		f[tail + 1] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
		f[tail + 2] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	}
	r = c2e_validate(f, n, err);
	if (r) {
		free(f);
		return r;
	}
	*out = f;
	*out_len = n;
	return 0;
}
