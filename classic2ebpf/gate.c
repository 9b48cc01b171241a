// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The gate: one classic seccomp filter that answers ALLOW in the kernel
 * for every call a chain allows, and SECCOMP_RET_USER_NOTIF for every
 * other, so that a supervisor holding its listener can judge those calls
 * before they run.
 *
 * It must be one program: the kernel allows one listener per task
 * (has_duplicate_listener()), and a USER_NOTIF returned by a filter that
 * has no listener of its own fails the call with ENOSYS
 * (seccomp_do_user_notification()). So the chain's filters are laid end to
 * end, and in each:
 *   ret K, K's action ALLOW or LOG   ->  ja <the next filter>
 *   ret K, any other action          ->  ret USER_NOTIF
 *   ret A                            ->  ja <this filter's tail>, where the
 *                                        tail tests A's action the same way
 * Every rewrite is one instruction for one, so the filter's own jump
 * offsets still hold. A stacked result is ALLOW or LOG only when every
 * filter's is, which is when control falls off the last filter into
 * "ret ALLOW"; so the order of the filters does not matter.
 *
 * LOG goes through in the kernel: the call runs either way, and the
 * dispatcher that sees every call logs it.
 *
 * A filter that divides by X is refused: a zero X ends a classic program
 * with 0 (KILL_THREAD), and in the gate that would kill in the kernel a
 * call the chain, or a chain that replaces it, may judge otherwise. A
 * division cannot be guarded in place (classic jumps go forward only) and
 * libseccomp never emits one.
 *
 * Each filter after the first starts with A = X = 0, as the kernel starts
 * every filter (bpf_convert_filter() clears both). Scratch memory needs
 * nothing: the kernel's linear check (check_load_and_stores()) passed for
 * each filter from an empty state, and the state its pass reaches at every
 * instruction only grows with a larger start, so the whole passes too; and
 * a filter that stores before it loads never sees another's values.
 */
#include "c2e.h"
#include "fail.h"
#include "gate_int.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define GATE_TAIL 5 /* and; jeq ALLOW; jeq LOG; ret USER_NOTIF; ja next */
/* Below this the linear gate is cheap for the kernel to emulate, and the
 * search in front of it (gate_tree.c) would add more than it saves. */
#define GATE_SEARCH_MIN 32

static bool passes(uint32_t ret)
{
	uint32_t action = c2e_effective_action(ret);

	return action == SECCOMP_RET_ALLOW || action == SECCOMP_RET_LOG;
}

static bool has_ret_a(const struct sock_fprog *f)
{
	unsigned int i;

	for (i = 0; i < f->len; i++)
		if (f->filter[i].code == (BPF_RET | BPF_A))
			return true;
	return false;
}

#define fail(err, index, ...) c2e_fail(err, index, 0, -EINVAL, __VA_ARGS__)

/* The gate's length for chain, or -EINVAL past BPF_MAXINSNS. */
int c2e_gate_len(const struct sock_fprog *chain, size_t n, struct c2e_error *err)
{
	size_t i, len = 1; /* the final ret ALLOW */

	for (i = 0; i < n; i++)
		len += (i ? 2 : 0) + chain[i].len + (has_ret_a(&chain[i]) ? GATE_TAIL : 0);
	if (len > C2E_MAX_INSNS)
		return fail(err, -1,
			    "the gate for these %zu filters needs %zu instructions; "
			    "one classic program holds at most %d",
			    n, len, C2E_MAX_INSNS);
	return (int)len;
}

static struct sock_filter stmt(uint16_t code, uint32_t k)
{
	return (struct sock_filter){ .code = code, .k = k };
}

static struct sock_filter jump(uint16_t code, uint32_t k, uint8_t jt, uint8_t jf)
{
	return (struct sock_filter){ .code = code, .jt = jt, .jf = jf, .k = k };
}

int c2e_gate_build(const struct sock_fprog *chain, size_t n,
		   struct sock_filter **out, size_t *out_len, struct c2e_error *err)
{
	return c2e_gate_build_as(chain, n, C2E_GATE_BEST, out, out_len, err);
}

int c2e_gate_build_as(const struct sock_fprog *chain, size_t n, enum c2e_gate_form form,
		      struct sock_filter **out, size_t *out_len, struct c2e_error *err)
{
	struct sock_filter *g;
	size_t i, at = 0;
	int len, r;

	*out = NULL;
	*out_len = 0;
	if (!n)
		return fail(err, -1, "a gate needs at least one filter");
	for (i = 0; i < n; i++) {
		r = c2e_validate(chain[i].filter, chain[i].len, err);
		if (r) {
			char msg[sizeof(err->msg)];
			int n;

			if (err) {
				memcpy(msg, err->msg, sizeof(msg));
				n = snprintf(err->msg, sizeof(err->msg), "filter %zu: ", i);
				snprintf(err->msg + n, sizeof(err->msg) - (size_t)n, "%s", msg);
			}
			return r;
		}
	}
	for (i = 0; i < n; i++) {
		unsigned int k;

		for (k = 0; k < chain[i].len; k++)
			if (chain[i].filter[k].code == (BPF_ALU | BPF_DIV | BPF_X)) {
				return c2e_fail(err, (int)k, chain[i].filter[k].code, -EOPNOTSUPP,
						"filter %zu divides by X: a zero X would end the "
						"gate with KILL_THREAD in the kernel, so it cannot "
						"be gated", i);
			}
	}
	len = c2e_gate_len(chain, n, err);
	if (len < 0)
		return len;
	g = calloc((size_t)len, sizeof(*g));
	if (!g)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct sock_fprog *f = &chain[i];
		bool tail = has_ret_a(f);
		size_t start, next, tail_at, k;

		if (i) {
			g[at++] = stmt(BPF_LD | BPF_IMM, 0);
			g[at++] = stmt(BPF_LDX | BPF_IMM, 0);
		}
		start = at;
		tail_at = start + f->len;
		next = tail_at + (tail ? GATE_TAIL : 0);
		for (k = 0; k < f->len; k++) {
			struct sock_filter in = f->filter[k];
			size_t pc = start + k;

			if (in.code == (BPF_RET | BPF_K))
				g[pc] = passes(in.k) ? stmt(BPF_JMP | BPF_JA, (uint32_t)(next - pc - 1)) :
						       stmt(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF);
			else if (in.code == (BPF_RET | BPF_A))
				g[pc] = stmt(BPF_JMP | BPF_JA, (uint32_t)(tail_at - pc - 1));
			else
				g[pc] = in;
		}
		at = tail_at;
		if (tail) {
			g[at++] = stmt(BPF_ALU | BPF_AND | BPF_K, C2E_RET_ACTION_FULL);
			g[at++] = jump(BPF_JMP | BPF_JEQ | BPF_K, SECCOMP_RET_ALLOW, 2, 0);
			g[at++] = jump(BPF_JMP | BPF_JEQ | BPF_K, SECCOMP_RET_LOG, 1, 0);
			g[at++] = stmt(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF);
			g[at++] = stmt(BPF_JMP | BPF_JA, 0);
		}
	}
	g[at++] = stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	if (at != (size_t)len) {
		free(g);
		return fail(err, -1, "internal: gate length %zu, expected %d", at, len);
	}
	r = c2e_validate(g, at, err);
	if (r) {
		free(g);
		return r;
	}
	/* The searched form where it fits and is cheaper; the linear one is
	 * as correct, only slower for seccomp(2) to take when it is long. */
	if (form == C2E_GATE_SEARCH || (form == C2E_GATE_BEST && at >= GATE_SEARCH_MIN)) {
		struct sock_filter *s;
		size_t slen;

		if (c2e_gate_search(g, at, form, &s, &slen) == 0) {
			if (c2e_validate(s, slen, NULL) == 0) {
				free(g);
				g = s;
				at = slen;
			} else {
				free(s);
			}
		}
	}
	*out = g;
	*out_len = at;
	return 0;
}
