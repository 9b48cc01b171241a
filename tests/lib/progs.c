// SPDX-License-Identifier: GPL-2.0-only
/*
 * Program generators (see progs.h). Refused programs are built by putting
 * one bad instruction into a valid random program at a "scratch-neutral"
 * position (not a store, not a jump, not the last insn), so the rest of the
 * program stays valid, the one-pass scratch state around the bad insn does
 * not change, and the instruction the kernel refuses first is known.
 */
#include "progs.h"
#include "sockfilter.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/seccomp.h>
#include <sys/syscall.h>

#define MAX_INSNS  4096
#define SKF_AD_OFF_ 0xfffff000U  /* (u32)SKF_AD_OFF */

/* ---- the PRNG ----------------------------------------------------------- */

void progs_seed(struct progs_rng *r, uint64_t seed)
{
	r->state = seed;
}

/* splitmix64: one 64-bit state, full period, good enough for test input. */
uint64_t progs_next(struct progs_rng *r)
{
	uint64_t z = (r->state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint32_t progs_below(struct progs_rng *r, uint32_t n)
{
	return n ? (uint32_t)(((progs_next(r) >> 32) * (uint64_t)n) >> 32) : 0;
}

uint32_t progs_edge_u32(struct progs_rng *r)
{
	static const uint32_t edges[] = {
		0, 1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 33, 63, 64, 255, 256,
		0xffff, 0x10000, 0x7fffffff, 0x80000000, 0x80000001,
		0xfffffffe, 0xffffffff, 0xc000003e, 0x40000003, 0x40000000,
		0x7fff0000, 0x00050000, 0x80000000,
	};

	switch (progs_below(r, 6)) {
	case 0:
		return edges[progs_below(r, sizeof(edges) / sizeof(edges[0]))];
	case 1:
		return progs_below(r, 64);
	case 2:
		return progs_below(r, 470);            /* syscall numbers */
	case 3:
		return 0x80000000U | (uint32_t)progs_next(r); /* top bit set */
	default:
		return (uint32_t)progs_next(r);
	}
}

uint32_t progs_ret_value(struct progs_rng *r)
{
	static const uint32_t actions[] = {
		SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_KILL_THREAD,
		SECCOMP_RET_TRAP, SECCOMP_RET_ERRNO, SECCOMP_RET_USER_NOTIF,
		SECCOMP_RET_TRACE, SECCOMP_RET_LOG, SECCOMP_RET_ALLOW,
	};
	uint32_t action, data;

	switch (progs_below(r, 10)) {
	case 0: /* an action the kernel does not know: treated as a kill */
		action = (uint32_t)progs_next(r) & 0xffff0000U;
		break;
	case 1: case 2: case 3:
		action = SECCOMP_RET_ALLOW;
		break;
	case 4: case 5:
		action = SECCOMP_RET_ERRNO;
		break;
	default:
		action = actions[progs_below(r, 8)];
	}
	switch (progs_below(r, 4)) {
	case 0:
		data = 0;
		break;
	case 1:
		data = progs_below(r, 4096);
		break;
	case 2:
		data = 4090 + progs_below(r, 12); /* around MAX_ERRNO */
		break;
	default:
		data = (uint32_t)progs_next(r) & 0xffff;
	}
	return action | data;
}

/* ---- opcode facts --------------------------------------------------------- */

/* net/core/filter.c chk_code_allowed(): every code classic BPF knows. */
static int classic_known(uint16_t code)
{
	static const uint16_t known[] = {
		BPF_ALU | BPF_ADD | BPF_K, BPF_ALU | BPF_ADD | BPF_X,
		BPF_ALU | BPF_SUB | BPF_K, BPF_ALU | BPF_SUB | BPF_X,
		BPF_ALU | BPF_MUL | BPF_K, BPF_ALU | BPF_MUL | BPF_X,
		BPF_ALU | BPF_DIV | BPF_K, BPF_ALU | BPF_DIV | BPF_X,
		BPF_ALU | BPF_MOD | BPF_K, BPF_ALU | BPF_MOD | BPF_X,
		BPF_ALU | BPF_AND | BPF_K, BPF_ALU | BPF_AND | BPF_X,
		BPF_ALU | BPF_OR | BPF_K, BPF_ALU | BPF_OR | BPF_X,
		BPF_ALU | BPF_XOR | BPF_K, BPF_ALU | BPF_XOR | BPF_X,
		BPF_ALU | BPF_LSH | BPF_K, BPF_ALU | BPF_LSH | BPF_X,
		BPF_ALU | BPF_RSH | BPF_K, BPF_ALU | BPF_RSH | BPF_X,
		BPF_ALU | BPF_NEG,
		BPF_LD | BPF_W | BPF_ABS, BPF_LD | BPF_H | BPF_ABS,
		BPF_LD | BPF_B | BPF_ABS, BPF_LD | BPF_W | BPF_LEN,
		BPF_LD | BPF_W | BPF_IND, BPF_LD | BPF_H | BPF_IND,
		BPF_LD | BPF_B | BPF_IND, BPF_LD | BPF_IMM, BPF_LD | BPF_MEM,
		BPF_LDX | BPF_W | BPF_LEN, BPF_LDX | BPF_B | BPF_MSH,
		BPF_LDX | BPF_IMM, BPF_LDX | BPF_MEM, BPF_ST, BPF_STX,
		BPF_MISC | BPF_TAX, BPF_MISC | BPF_TXA,
		BPF_RET | BPF_K, BPF_RET | BPF_A, BPF_JMP | BPF_JA,
		BPF_JMP | BPF_JEQ | BPF_K, BPF_JMP | BPF_JEQ | BPF_X,
		BPF_JMP | BPF_JGE | BPF_K, BPF_JMP | BPF_JGE | BPF_X,
		BPF_JMP | BPF_JGT | BPF_K, BPF_JMP | BPF_JGT | BPF_X,
		BPF_JMP | BPF_JSET | BPF_K, BPF_JMP | BPF_JSET | BPF_X,
	};
	size_t i;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (known[i] == code)
			return 1;
	return 0;
}

static int is_cond_jump(uint16_t code)
{
	return BPF_CLASS(code) == BPF_JMP && BPF_OP(code) != BPF_JA &&
	       classic_known(code);
}

static int is_store(uint16_t code)
{
	return code == BPF_ST || code == BPF_STX;
}

static int is_jump(uint16_t code)
{
	return code == (BPF_JMP | BPF_JA) || is_cond_jump(code);
}

uint16_t progs_valid_slots_at(const struct sock_filter *insns, size_t len,
			      size_t at)
{
	static uint16_t masks[MAX_INSNS];
	uint16_t valid = 0;
	size_t pc;

	if (len > MAX_INSNS)
		len = MAX_INSNS;
	memset(masks, 0xff, len * sizeof(masks[0]));
	for (pc = 0; pc < len; pc++) {
		const struct sock_filter *f = &insns[pc];

		valid &= masks[pc];
		if (pc == at)
			return valid;
		if (is_store(f->code) && f->k < 16) {
			valid |= 1u << f->k;
		} else if (f->code == (BPF_JMP | BPF_JA)) {
			if (pc + 1 + (uint64_t)f->k < len)
				masks[pc + 1 + f->k] &= valid;
			valid = 0xffff;
		} else if (is_cond_jump(f->code)) {
			if (pc + 1 + f->jt < len)
				masks[pc + 1 + f->jt] &= valid;
			if (pc + 1 + f->jf < len)
				masks[pc + 1 + f->jf] &= valid;
			valid = 0xffff;
		}
	}
	return valid;
}

/* ---- the valid generator -------------------------------------------------- */

static uint32_t rand_k(struct progs_rng *r)
{
	return progs_edge_u32(r);
}

/* A jump distance in [0, max]: mostly short, sometimes as long as allowed. */
static uint32_t rand_dist(struct progs_rng *r, uint32_t max)
{
	switch (progs_below(r, 8)) {
	case 0:
		return max;
	case 1:
		return progs_below(r, max + 1);
	default:
		return progs_below(r, (max < 8 ? max : 8) + 1);
	}
}

static const uint16_t alu_ops[] = {
	BPF_ADD, BPF_SUB, BPF_MUL, BPF_DIV, BPF_AND, BPF_OR, BPF_XOR,
	BPF_LSH, BPF_RSH,
};
static const uint16_t jcc_ops[] = { BPF_JEQ, BPF_JGT, BPF_JGE, BPF_JSET };

/*
 * Emits insns[pc] of a program of len instructions given the one-pass
 * scratch state, updating state and masks the way the kernel's pass will.
 */
static struct sock_filter gen_insn(struct progs_rng *r, size_t pc, size_t len,
				   uint16_t *valid, uint16_t *masks)
{
	struct sock_filter f;
	uint32_t room = (uint32_t)(len - pc - 2); /* longest in-range jump */
	uint16_t op;

	if (pc == len - 1)
		return progs_below(r, 4) ? STMT(BPF_RET | BPF_K, progs_ret_value(r))
					 : STMT(BPF_RET | BPF_A, 0);
	switch (progs_below(r, 20)) {
	case 0: case 1: case 2:
		return STMT(BPF_LD | BPF_W | BPF_ABS, 4 * progs_below(r, 16));
	case 3:
		return STMT(progs_below(r, 2) ? BPF_LD | BPF_IMM : BPF_LDX | BPF_IMM,
			    rand_k(r));
	case 4:
		return STMT(progs_below(r, 2) ? BPF_LD | BPF_W | BPF_LEN :
				BPF_LDX | BPF_W | BPF_LEN, progs_below(r, 2) ? 0 : rand_k(r));
	case 5: {
		/* A read of a slot the pass considers stored; else a store. */
		uint16_t v = *valid;

		if (v) {
			uint32_t s;

			do
				s = progs_below(r, 16);
			while (!(v & (1u << s)));
			return STMT(progs_below(r, 2) ? BPF_LD | BPF_MEM : BPF_LDX | BPF_MEM, s);
		}
	}
		/* fallthrough */
	case 6:
		f = STMT(progs_below(r, 2) ? BPF_ST : BPF_STX, progs_below(r, 16));
		*valid |= 1u << f.k;
		return f;
	case 7: case 8: case 9: case 10:
		op = alu_ops[progs_below(r, 9)];
		if (progs_below(r, 2))
			return STMT(BPF_ALU | op | BPF_X, progs_below(r, 3) ? 0 : rand_k(r));
		f = STMT(BPF_ALU | op | BPF_K, rand_k(r));
		if (op == BPF_DIV && f.k == 0)
			f.k = 1 + progs_below(r, 100);
		if (op == BPF_LSH || op == BPF_RSH)
			f.k &= 31;
		return f;
	case 11:
		return STMT(BPF_ALU | BPF_NEG, progs_below(r, 3) ? 0 : rand_k(r));
	case 12:
		return STMT(BPF_MISC | (progs_below(r, 2) ? BPF_TAX : BPF_TXA), 0);
	case 13:
		f = STMT(BPF_JMP | BPF_JA, rand_dist(r, room));
		masks[pc + 1 + f.k] &= *valid;
		*valid = 0xffff;
		return f;
	case 14: case 15: case 16: case 17: {
		uint32_t max = room > 255 ? 255 : room;

		op = jcc_ops[progs_below(r, 4)];
		f = JUMP(BPF_JMP | op | (progs_below(r, 3) ? BPF_K : BPF_X),
			 rand_k(r), rand_dist(r, max), rand_dist(r, max));
		masks[pc + 1 + f.jt] &= *valid;
		masks[pc + 1 + f.jf] &= *valid;
		*valid = 0xffff;
		return f;
	}
	case 18:
		return STMT(BPF_RET | BPF_K, progs_ret_value(r));
	default:
		return STMT(BPF_RET | BPF_A, 0);
	}
}

static int alloc_prog(struct progs_prog *p, size_t len, enum progs_family f)
{
	memset(p, 0, sizeof(*p));
	p->insns = calloc(len ? len : 1, sizeof(*p->insns));
	if (!p->insns)
		return -ENOMEM;
	p->len = len;
	p->family = f;
	p->expect_valid = progs_family_expect(f);
	p->bad_index = -1;
	return 0;
}

/* Fills insns[0..len) with a valid program; state starts empty. */
static void fill_valid(struct progs_rng *r, struct sock_filter *insns,
		       size_t len)
{
	static uint16_t masks[MAX_INSNS];
	uint16_t valid = 0;
	size_t pc;

	memset(masks, 0xff, len * sizeof(masks[0]));
	for (pc = 0; pc < len; pc++) {
		valid &= masks[pc];
		insns[pc] = gen_insn(r, pc, len, &valid, masks);
		/* jt and jf mean nothing outside conditional jumps (JA and
		 * RET A included, k too for RET A): the kernel ignores them,
		 * and so must everything that reads these programs. */
		if (!is_cond_jump(insns[pc].code) && progs_below(r, 8) == 0) {
			insns[pc].jt = (uint8_t)progs_next(r);
			insns[pc].jf = (uint8_t)progs_next(r);
			if (insns[pc].code == (BPF_RET | BPF_A) ||
			    insns[pc].code == (BPF_MISC | BPF_TAX) ||
			    insns[pc].code == (BPF_MISC | BPF_TXA))
				insns[pc].k = (uint32_t)progs_next(r);
		}
	}
}

int progs_gen_valid(struct progs_rng *r, size_t len, struct progs_prog *out)
{
	int err;

	if (len < 1 || len > MAX_INSNS)
		return -EINVAL;
	err = alloc_prog(out, len, PROGS_VALID_RANDOM);
	if (err)
		return err;
	fill_valid(r, out->insns, len);
	return 0;
}

void progs_free(struct progs_prog *p)
{
	free(p->insns);
	p->insns = NULL;
	p->len = 0;
}

/* ---- families ----------------------------------------------------------- */

static const struct {
	const char *name;
	int expect;
} families[PROGS_FAMILY_COUNT] = {
	[PROGS_VALID_RANDOM] = { "valid-random", 1 },
	[PROGS_VALID_TINY] = { "valid-tiny", 1 },
	[PROGS_VALID_MAX_LEN] = { "valid-4096-insns", 1 },
	[PROGS_VALID_EDGE_JUMPS] = { "valid-jumps-to-last-insn", 1 },
	[PROGS_VALID_SKIPPED_READ] = { "valid-unstored-read-skipped-by-jump", 1 },
	[PROGS_BAD_LEN_ZERO] = { "bad-length-0", 0 },
	[PROGS_BAD_LEN_4097] = { "bad-length-4097", 0 },
	[PROGS_BAD_LAST_NOT_RET] = { "bad-last-insn-not-ret", 0 },
	[PROGS_BAD_MOD] = { "bad-alu-mod", 0 },
	[PROGS_BAD_LD_H_B_ABS] = { "bad-ld-h-b-abs", 0 },
	[PROGS_BAD_LD_IND] = { "bad-ld-ind", 0 },
	[PROGS_BAD_LDX_MSH] = { "bad-ldx-msh", 0 },
	[PROGS_BAD_ANCILLARY] = { "bad-ancillary-load", 0 },
	[PROGS_BAD_LD_MISALIGNED] = { "bad-ld-w-abs-misaligned", 0 },
	[PROGS_BAD_LD_OUT_OF_BOUNDS] = { "bad-ld-w-abs-beyond-64", 0 },
	[PROGS_BAD_UNKNOWN_CODE] = { "bad-unknown-opcode", 0 },
	[PROGS_BAD_DIV_ZERO] = { "bad-div-by-constant-0", 0 },
	[PROGS_BAD_SHIFT_32] = { "bad-shift-by-constant-32-plus", 0 },
	[PROGS_BAD_JA_RANGE] = { "bad-ja-out-of-range", 0 },
	[PROGS_BAD_JCC_RANGE] = { "bad-jcc-out-of-range", 0 },
	[PROGS_BAD_SLOT_RANGE] = { "bad-scratch-slot-16-plus", 0 },
	[PROGS_BAD_UNSTORED_READ] = { "bad-read-of-unstored-slot", 0 },
	[PROGS_BAD_READ_AFTER_RET] = { "bad-stored-read-right-after-ret", 0 },
	[PROGS_BAD_UNREACHABLE_READ_AFTER_RET] = { "bad-unreachable-read-after-ret", 0 },
	[PROGS_MUTATED] = { "mutated-valid", -1 },
};

const char *progs_family_name(enum progs_family f)
{
	return (unsigned)f < PROGS_FAMILY_COUNT ? families[f].name : "?";
}

int progs_family_expect(enum progs_family f)
{
	return (unsigned)f < PROGS_FAMILY_COUNT ? families[f].expect : -1;
}

static size_t pick_size(struct progs_rng *r, size_t hint)
{
	if (hint)
		return hint;
	switch (progs_below(r, 8)) {
	case 0:
		return 1 + progs_below(r, 8);
	case 1:
		return 1 + progs_below(r, MAX_INSNS);
	case 2:
		return 100 + progs_below(r, 900);
	default:
		return 2 + progs_below(r, 100);
	}
}

/* A position that is not a store, a jump or the last insn: replacing it
 * leaves the one-pass scratch state of every other insn unchanged. */
static long neutral_pos(struct progs_rng *r, const struct sock_filter *insns,
			size_t len)
{
	size_t tries, pc;

	if (len < 2)
		return -1;
	for (tries = 0; tries < 16; tries++) {
		pc = progs_below(r, len - 1);
		if (!is_store(insns[pc].code) && !is_jump(insns[pc].code))
			return pc;
	}
	for (pc = 0; pc + 1 < len; pc++)
		if (!is_store(insns[pc].code) && !is_jump(insns[pc].code))
			return pc;
	return -1;
}

/* The one bad instruction for a replace-one family, placed at pc of len. */
static struct sock_filter bad_insn(struct progs_rng *r, enum progs_family f,
				   size_t pc, size_t len)
{
	static const uint16_t ind[] = { BPF_W, BPF_H, BPF_B };
	uint32_t k;
	uint16_t code;

	switch (f) {
	case PROGS_BAD_MOD:
		k = rand_k(r);
		return STMT(BPF_ALU | BPF_MOD | (progs_below(r, 2) ? BPF_X : BPF_K),
			    k ? k : 3);
	case PROGS_BAD_LD_H_B_ABS:
		return STMT(BPF_LD | (progs_below(r, 2) ? BPF_H : BPF_B) | BPF_ABS,
			    progs_below(r, 2) ? progs_below(r, 64) : rand_k(r) % SKF_AD_OFF_);
	case PROGS_BAD_LD_IND:
		return STMT(BPF_LD | ind[progs_below(r, 3)] | BPF_IND,
			    progs_below(r, 2) ? progs_below(r, 64) : rand_k(r));
	case PROGS_BAD_LDX_MSH:
		return STMT(BPF_LDX | BPF_B | BPF_MSH, progs_below(r, 2) ? progs_below(r, 64) : rand_k(r));
	case PROGS_BAD_ANCILLARY:
		/* Known ancillary loads pass bpf_check_classic() and fail in
		 * seccomp; unknown ones fail in bpf_check_classic(). */
		code = BPF_LD | ind[progs_below(r, 3)] | BPF_ABS;
		k = progs_below(r, 2) ? SKF_AD_OFF_ + progs_below(r, 72)
				      : SKF_AD_OFF_ + progs_below(r, 0x1000);
		return STMT(code, k);
	case PROGS_BAD_LD_MISALIGNED:
		do
			k = progs_below(r, 64);
		while (!(k & 3));
		return STMT(BPF_LD | BPF_W | BPF_ABS, k);
	case PROGS_BAD_LD_OUT_OF_BOUNDS:
		switch (progs_below(r, 4)) {
		case 0:
			k = 64;
			break;
		case 1:
			k = 64 + 4 * progs_below(r, 64);
			break;
		case 2: /* SKF_LL_OFF / SKF_NET_OFF areas: classic-legal */
			k = 0xffe00000U + 4 * progs_below(r, 0x40000);
			break;
		default:
			k = (uint32_t)progs_next(r) & ~3U;
			if (k < 64)
				k += 64;
		}
		return STMT(BPF_LD | BPF_W | BPF_ABS, k);
	case PROGS_BAD_UNKNOWN_CODE:
		do
			code = progs_below(r, 4) ? progs_below(r, 256)
						 : (uint16_t)progs_next(r);
		while (classic_known(code));
		return JUMP(code, rand_k(r), progs_below(r, 2), progs_below(r, 2));
	case PROGS_BAD_DIV_ZERO:
		return STMT(BPF_ALU | BPF_DIV | BPF_K, 0);
	case PROGS_BAD_SHIFT_32:
		k = progs_below(r, 2) ? 32 + progs_below(r, 40) : 32 + progs_below(r, 0xffffffe0U);
		return STMT(BPF_ALU | (progs_below(r, 2) ? BPF_LSH : BPF_RSH) | BPF_K, k);
	case PROGS_BAD_JA_RANGE: {
		uint32_t edge = (uint32_t)(len - pc - 1);

		switch (progs_below(r, 3)) {
		case 0:
			k = edge;       /* one past the last insn */
			break;
		case 1:
			k = 0xffffffffU; /* would wrap around */
			break;
		default:
			k = edge + progs_below(r, 5000);
		}
		return STMT(BPF_JMP | BPF_JA, k);
	}
	case PROGS_BAD_JCC_RANGE: {
		uint32_t edge = (uint32_t)(len - pc - 1); /* first bad offset */
		uint8_t good = progs_below(r, edge < 256 ? edge : 256);
		uint8_t bad;

		if (edge > 255) /* any 8-bit offset is fine here: none bad */
			return STMT(BPF_JMP | BPF_JA, edge);
		bad = edge + progs_below(r, 256 - edge);
		code = BPF_JMP | jcc_ops[progs_below(r, 4)] |
		       (progs_below(r, 2) ? BPF_K : BPF_X);
		return progs_below(r, 2) ? JUMP(code, rand_k(r), bad, good)
					 : JUMP(code, rand_k(r), good, bad);
	}
	case PROGS_BAD_SLOT_RANGE: {
		static const uint16_t mem[] = { BPF_LD | BPF_MEM, BPF_LDX | BPF_MEM,
						BPF_ST, BPF_STX };

		k = progs_below(r, 2) ? 16 + progs_below(r, 16) : 16 + progs_below(r, 0xfffffff0U);
		return STMT(mem[progs_below(r, 4)], k);
	}
	default:
		return STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	}
}

/* A valid program of at least min_len insns with a neutral position. */
static int valid_base(struct progs_rng *r, size_t size, size_t min_len,
		      struct progs_prog *out, enum progs_family f, long *pos)
{
	int err, tries;

	for (tries = 0; tries < 64; tries++) {
		size_t len = size < min_len ? min_len : size;

		err = alloc_prog(out, len, f);
		if (err)
			return err;
		fill_valid(r, out->insns, len);
		*pos = neutral_pos(r, out->insns, len);
		if (*pos >= 0)
			return 0;
		progs_free(out);
		size = len + 1 + progs_below(r, 8);
		if (size > MAX_INSNS)
			size = MAX_INSNS;
	}
	return -EAGAIN;
}

/* prefix (valid, its jumps land at most on insn a), pattern, tail (valid).
 * Returns the index where the pattern starts, or -errno. */
static long build_around(struct progs_rng *r, struct progs_prog *out,
			 enum progs_family f, const struct sock_filter *pat,
			 size_t npat, size_t a, size_t b)
{
	size_t len = a + npat + b;
	int err;

	err = alloc_prog(out, len, f);
	if (err)
		return err;
	if (a) {
		/* Generate a+1 insns so jumps may land on the pattern's first
		 * insn, then overwrite that last RET with the pattern. */
		fill_valid(r, out->insns, a + 1);
	}
	memcpy(out->insns + a, pat, npat * sizeof(*pat));
	if (b)
		fill_valid(r, out->insns + a + npat, b);
	return (long)a;
}

/* Picks a slot not in valid, or -1. */
static int slot_not_in(struct progs_rng *r, uint16_t valid)
{
	int s, i;

	if (valid == 0xffff)
		return -1;
	s = progs_below(r, 16);
	for (i = 0; i < 16; i++, s = (s + 1) & 15)
		if (!(valid & (1u << s)))
			return s;
	return -1;
}

static int gen_scratch_pattern(struct progs_rng *r, enum progs_family f,
			       size_t size, struct progs_prog *out)
{
	struct sock_filter pat[8];
	size_t npat, a, b;
	int tries;

	for (tries = 0; tries < 32; tries++) {
		uint16_t valid;
		long q;
		int s;

		a = tries < 31 ? progs_below(r, (size > 40 ? 40 : size) + 1) : 0;
		b = 1 + progs_below(r, 20);
		/* The slot is chosen after the prefix exists; fill in a
		 * placeholder, then patch the slot. */
		switch (f) {
		case PROGS_BAD_READ_AFTER_RET:
			/* q+1 jt -> q+2 stores, q+3 jumps to the read at q+5;
			 * jf -> q+4, the RET right before the read. */
			pat[0] = STMT(BPF_LD | BPF_W | BPF_ABS, 4 * progs_below(r, 16));
			pat[1] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, rand_k(r), 0, 2);
			pat[2] = STMT(progs_below(r, 2) ? BPF_ST : BPF_STX, 0);
			pat[3] = STMT(BPF_JMP | BPF_JA, 1);
			pat[4] = STMT(BPF_RET | BPF_K, progs_ret_value(r));
			pat[5] = STMT(progs_below(r, 2) ? BPF_LD | BPF_MEM : BPF_LDX | BPF_MEM, 0);
			npat = 6;
			break;
		case PROGS_BAD_UNREACHABLE_READ_AFTER_RET:
			pat[0] = progs_below(r, 2) ? STMT(BPF_RET | BPF_K, progs_ret_value(r))
						   : STMT(BPF_RET | BPF_A, 0);
			pat[1] = STMT(progs_below(r, 2) ? BPF_LD | BPF_MEM : BPF_LDX | BPF_MEM, 0);
			npat = 2;
			break;
		case PROGS_VALID_SKIPPED_READ: {
			size_t n = 1 + progs_below(r, 3), i;

			if (progs_below(r, 2))
				pat[0] = STMT(BPF_JMP | BPF_JA, n);
			else
				pat[0] = JUMP(BPF_JMP | jcc_ops[progs_below(r, 4)] | BPF_K,
					      rand_k(r), n, n);
			for (i = 1; i <= n; i++)
				pat[i] = STMT(progs_below(r, 2) ? BPF_LD | BPF_MEM : BPF_LDX | BPF_MEM,
					      progs_below(r, 16));
			npat = n + 1;
			break;
		}
		default:
			return -EINVAL;
		}
		q = build_around(r, out, f, pat, npat, a, b);
		if (q < 0)
			return q;
		if (f == PROGS_VALID_SKIPPED_READ)
			return 0;
		valid = progs_valid_slots_at(out->insns, out->len, q);
		s = slot_not_in(r, valid);
		if (s < 0) {
			progs_free(out);
			continue;
		}
		if (f == PROGS_BAD_READ_AFTER_RET) {
			out->insns[q + 2].k = s;
			out->insns[q + 5].k = s;
			out->bad_index = q + 5;
		} else {
			out->insns[q + 1].k = s;
			out->bad_index = q + 1;
		}
		return 0;
	}
	return -EAGAIN;
}

static int gen_edge_jumps(struct progs_rng *r, size_t size,
			  struct progs_prog *out)
{
	static uint16_t masks[MAX_INSNS];
	size_t len = size < 3 ? 3 : size, pc, n;
	int err = alloc_prog(out, len, PROGS_VALID_EDGE_JUMPS);
	uint16_t valid = 0;

	if (err)
		return err;
	fill_valid(r, out->insns, len);
	/* Retarget some jumps to land exactly on the last insn: the largest
	 * offsets the kernel accepts. The last insn is a RET, which no
	 * scratch read follows, so the pass still accepts the program. */
	n = 0;
	for (pc = 0; pc + 1 < len; pc++) {
		struct sock_filter *f = &out->insns[pc];
		uint32_t edge = (uint32_t)(len - pc - 2);

		if (f->code == (BPF_JMP | BPF_JA)) {
			f->k = edge;
			n++;
		} else if (is_cond_jump(f->code) && edge <= 255) {
			if (progs_below(r, 2))
				f->jt = edge;
			else
				f->jf = edge;
			n++;
		}
	}
	if (!n) /* no jump in the body: make the first insn one */
		out->insns[0] = STMT(BPF_JMP | BPF_JA, len - 2);
	/* Retargeting changes which slots the pass considers stored: redo
	 * the pass, turning reads it would refuse into immediates (a read
	 * changes no state, so one pass suffices). */
	memset(masks, 0xff, len * sizeof(masks[0]));
	for (pc = 0; pc < len; pc++) {
		struct sock_filter *f = &out->insns[pc];

		valid &= masks[pc];
		if ((f->code == (BPF_LD | BPF_MEM) || f->code == (BPF_LDX | BPF_MEM)) &&
		    !(valid & (1u << f->k)))
			*f = STMT(BPF_LD | BPF_IMM, f->k);
		else if (is_store(f->code))
			valid |= 1u << f->k;
		else if (f->code == (BPF_JMP | BPF_JA)) {
			masks[pc + 1 + f->k] &= valid;
			valid = 0xffff;
		} else if (is_cond_jump(f->code)) {
			masks[pc + 1 + f->jt] &= valid;
			masks[pc + 1 + f->jf] &= valid;
			valid = 0xffff;
		}
	}
	return 0;
}

static int gen_mutated(struct progs_rng *r, size_t size, struct progs_prog *out)
{
	size_t len = size < 2 ? 2 : size;
	int err = alloc_prog(out, len, PROGS_MUTATED), flips, i;

	if (err)
		return err;
	fill_valid(r, out->insns, len);
	flips = 1 + progs_below(r, 3);
	for (i = 0; i < flips; i++) {
		struct sock_filter *f = &out->insns[progs_below(r, len)];

		switch (progs_below(r, 6)) {
		case 0: case 1:
			f->code ^= 1u << progs_below(r, 16);
			break;
		case 2:
			f->jt ^= 1u << progs_below(r, 8);
			break;
		case 3:
			f->jf ^= 1u << progs_below(r, 8);
			break;
		default:
			f->k ^= 1u << progs_below(r, 32);
		}
	}
	return 0;
}

int progs_gen(struct progs_rng *r, enum progs_family f, size_t size,
	      struct progs_prog *out)
{
	size_t len;
	long pos;
	int err;

	memset(out, 0, sizeof(*out));
	size = pick_size(r, size);
	if (size > MAX_INSNS)
		size = MAX_INSNS;
	switch (f) {
	case PROGS_VALID_RANDOM:
		err = progs_gen_valid(r, size, out);
		break;
	case PROGS_VALID_TINY:
		err = progs_gen_valid(r, 1 + progs_below(r, 4), out);
		break;
	case PROGS_VALID_MAX_LEN:
		err = progs_gen_valid(r, MAX_INSNS, out);
		break;
	case PROGS_VALID_EDGE_JUMPS:
		err = gen_edge_jumps(r, size, out);
		break;
	case PROGS_VALID_SKIPPED_READ:
	case PROGS_BAD_READ_AFTER_RET:
	case PROGS_BAD_UNREACHABLE_READ_AFTER_RET:
		err = gen_scratch_pattern(r, f, size, out);
		break;
	case PROGS_BAD_LEN_ZERO:
		err = alloc_prog(out, 0, f);
		if (!err)
			out->insns[0] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
		break;
	case PROGS_BAD_LEN_4097:
		len = MAX_INSNS + 1 + (progs_below(r, 4) ? 0 : progs_below(r, 2000));
		err = alloc_prog(out, len, f);
		if (!err) {
			/* Valid in every other respect. */
			fill_valid(r, out->insns, MAX_INSNS);
			fill_valid(r, out->insns + MAX_INSNS, len - MAX_INSNS);
		}
		break;
	case PROGS_BAD_LAST_NOT_RET: {
		static const struct sock_filter tails[] = {
			BPF_STMT(BPF_LD | BPF_IMM, 0x7fff0000),
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),
			BPF_STMT(BPF_ALU | BPF_ADD | BPF_K, 1),
			BPF_STMT(BPF_MISC | BPF_TAX, 0),
			BPF_STMT(BPF_ST, 0),
			BPF_STMT(BPF_LDX | BPF_W | BPF_LEN, 0),
		};

		len = size;
		err = alloc_prog(out, len, f);
		if (!err) {
			fill_valid(r, out->insns, len);
			out->insns[len - 1] = tails[progs_below(r, 6)];
			out->bad_index = len - 1;
		}
		break;
	}
	case PROGS_BAD_UNSTORED_READ: {
		int tries;

		err = -EAGAIN;
		for (tries = 0; tries < 32 && err; tries++) {
			int s;

			err = valid_base(r, size, 2, out, f, &pos);
			if (err)
				break;
			s = slot_not_in(r, progs_valid_slots_at(out->insns, out->len, pos));
			if (s < 0) {
				progs_free(out);
				err = -EAGAIN;
				continue;
			}
			out->insns[pos] = STMT(progs_below(r, 2) ? BPF_LD | BPF_MEM :
					       BPF_LDX | BPF_MEM, s);
			out->bad_index = pos;
		}
		if (err) { /* the plainest case */
			err = alloc_prog(out, 2, f);
			if (!err) {
				out->insns[0] = STMT(BPF_LD | BPF_MEM, progs_below(r, 16));
				out->insns[1] = STMT(BPF_RET | BPF_A, 0);
				out->bad_index = 0;
			}
		}
		break;
	}
	case PROGS_BAD_MOD:
	case PROGS_BAD_LD_H_B_ABS:
	case PROGS_BAD_LD_IND:
	case PROGS_BAD_LDX_MSH:
	case PROGS_BAD_ANCILLARY:
	case PROGS_BAD_LD_MISALIGNED:
	case PROGS_BAD_LD_OUT_OF_BOUNDS:
	case PROGS_BAD_UNKNOWN_CODE:
	case PROGS_BAD_DIV_ZERO:
	case PROGS_BAD_SHIFT_32:
	case PROGS_BAD_JA_RANGE:
	case PROGS_BAD_JCC_RANGE:
	case PROGS_BAD_SLOT_RANGE:
		err = valid_base(r, size, 2, out, f, &pos);
		if (!err) {
			out->insns[pos] = bad_insn(r, f, pos, out->len);
			out->bad_index = pos;
		}
		break;
	case PROGS_MUTATED:
		err = gen_mutated(r, size, out);
		break;
	default:
		err = -EINVAL;
	}
	if (!err) {
		out->family = f;
		out->expect_valid = progs_family_expect(f);
	}
	return err;
}

/* n instructions: ret on syscall nr, ALLOW for the rest. */
static struct sock_fprog ret_on(struct sock_filter *f, int n, int nr, uint32_t ret)
{
	int i = 0;

	f[i++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0);
	while (i < n - 3)
		f[i++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0);
	f[i++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1);
	f[i++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, ret);
	f[i++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0x7fff0000U); /* ALLOW */
	return (struct sock_fprog){ (unsigned short)n, f };
}

struct sock_fprog progs_kill_on(struct sock_filter *f, int n, int nr)
{
	return ret_on(f, n, nr, 0x80000000U); /* KILL_PROCESS */
}

const struct sock_filter progs_kill_getppid[4] = {
	STMT(BPF_LD | BPF_W | BPF_ABS, 0),
	JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getppid, 0, 1),
	STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

struct sock_fprog progs_log_on(struct sock_filter *f, int n, int nr)
{
	return ret_on(f, n, nr, 0x7ffc0000U); /* LOG */
}

size_t progs_gen_stack(struct progs_rng *r, int p, struct progs_prog pr[3],
		       struct sock_fprog chain[3])
{
	size_t n = 1 + progs_below(r, 3), i;

	for (i = 0; i < n; i++) {
		size_t len = 1 + progs_below(r, p % 10 == 0 ? 400 : 40);

		if (progs_gen_valid(r, len, &pr[i]))
			return i;
		chain[i] = (struct sock_fprog){ (unsigned short)pr[i].len, pr[i].insns };
	}
	return n;
}
