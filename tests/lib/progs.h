/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Program generators for tests, fuzz seeds and benches: random classic
 * seccomp programs that the kernel accepts, and programs that break exactly
 * one validation rule, each produced by a named family so a disagreement
 * can be reported per family. Deterministic: the same seed gives the same
 * programs on every machine (splitmix64, never rand()).
 */
#ifndef SF_TESTS_PROGS_H
#define SF_TESTS_PROGS_H

#include <stddef.h>
#include <stdint.h>
#include <linux/filter.h>

struct progs_rng {
	uint64_t state;
};

void progs_seed(struct progs_rng *r, uint64_t seed);
uint64_t progs_next(struct progs_rng *r);
/* Uniform in [0, n); n == 0 gives 0. */
uint32_t progs_below(struct progs_rng *r, uint32_t n);
/* A 32-bit value biased towards the edges filters meet: 0, 1, small
 * numbers, syscall numbers, audit arches, top bit set, all ones. */
uint32_t progs_edge_u32(struct progs_rng *r);
/* A return value: every action (and unknown ones) with random data. */
uint32_t progs_ret_value(struct progs_rng *r);

enum progs_family {
	/* Accepted by the kernel. */
	PROGS_VALID_RANDOM,        /* random size, every allowed opcode */
	PROGS_VALID_TINY,          /* 1..4 instructions */
	PROGS_VALID_MAX_LEN,       /* exactly 4096 instructions */
	PROGS_VALID_EDGE_JUMPS,    /* jumps that land exactly on the last insn */
	PROGS_VALID_SKIPPED_READ,  /* unreachable read of an unstored slot that
				      a jump skips over */
	/* Refused by the kernel, one rule each. */
	PROGS_BAD_LEN_ZERO,
	PROGS_BAD_LEN_4097,
	PROGS_BAD_LAST_NOT_RET,
	PROGS_BAD_MOD,             /* ALU MOD K / X */
	PROGS_BAD_LD_H_B_ABS,      /* half-word and byte absolute loads */
	PROGS_BAD_LD_IND,          /* LD W/H/B IND */
	PROGS_BAD_LDX_MSH,         /* LDX B MSH */
	PROGS_BAD_ANCILLARY,       /* SKF_AD_* loads, known and unknown */
	PROGS_BAD_LD_MISALIGNED,   /* LD W ABS, k % 4 != 0, k < 64 */
	PROGS_BAD_LD_OUT_OF_BOUNDS,/* LD W ABS, aligned k >= 64 */
	PROGS_BAD_UNKNOWN_CODE,    /* codes classic BPF does not have */
	PROGS_BAD_DIV_ZERO,        /* DIV #0 */
	PROGS_BAD_SHIFT_32,        /* LSH/RSH #k, k >= 32 */
	PROGS_BAD_JA_RANGE,        /* JA k >= len - pc - 1 */
	PROGS_BAD_JCC_RANGE,       /* jt or jf past the last insn */
	PROGS_BAD_SLOT_RANGE,      /* LD/LDX MEM, ST, STX with k >= 16 */
	PROGS_BAD_UNSTORED_READ,   /* read of a slot no store reached */
	PROGS_BAD_READ_AFTER_RET,  /* read right after a RET although every
				      real path to it stores first */
	PROGS_BAD_UNREACHABLE_READ_AFTER_RET,
	/* Unknown validity. */
	PROGS_MUTATED,             /* bit flips in code/jt/jf/k of a valid one */
	PROGS_FAMILY_COUNT
};

struct progs_prog {
	struct sock_filter *insns; /* malloc'd; at least one element */
	size_t len;
	enum progs_family family;
	int expect_valid;          /* 1, 0, or -1 when unknown (mutations) */
	int bad_index;             /* the insn the kernel refuses first, -1 for
				      the program as a whole or when unknown */
};

/* n instructions (n >= 4) in f: kill the process on syscall nr, allow the
 * rest; the padding makes distinct lengths distinct filters. */
struct sock_fprog progs_kill_on(struct sock_filter *f, int n, int nr);
/* The same, logging syscall nr (SECCOMP_RET_LOG) instead. */
struct sock_fprog progs_log_on(struct sock_filter *f, int n, int nr);
/* progs_kill_on(f, 4, getppid) as a constant, for the daemon tests that
 * send it, save it to a file or attach it as it is. */
extern const struct sock_filter progs_kill_getppid[4];

const char *progs_family_name(enum progs_family f);
/* 1 accepted, 0 refused, -1 unknown. */
int progs_family_expect(enum progs_family f);

/* A random valid program of exactly len (1..4096) instructions. Every
 * allowed opcode can appear; scratch reads only use slots the kernel's
 * one-pass check already considers stored. 0 or -errno. */
int progs_gen_valid(struct progs_rng *r, size_t len, struct progs_prog *out);
/* One program of the family. size is a hint for the random body (0 picks
 * one); families with a fixed shape ignore it. 0 or -errno. */
int progs_gen(struct progs_rng *r, enum progs_family f, size_t size,
	      struct progs_prog *out);
void progs_free(struct progs_prog *p);
/* A random stack of 1..3 valid programs into pr[] and chain[], mostly
 * short, one in ten up to 400 instructions (p, a running count, picks
 * which). The count made, 0 when generation failed; free each pr[]. */
size_t progs_gen_stack(struct progs_rng *r, int p, struct progs_prog pr[3],
		       struct sock_fprog chain[3]);

/* The kernel's one-pass scratch-memory state (check_load_and_stores()) of
 * insns[0..len) as seen on entry to instruction at: the slots it considers
 * stored. Assumes jumps are in range. */
uint16_t progs_valid_slots_at(const struct sock_filter *insns, size_t len,
			      size_t at);

#endif
