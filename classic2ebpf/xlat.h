/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The translator's working state, shared by translate.c (the passes),
 * search.c (C2E_EMIT_SEARCH) and frame.c (the test and chain frames).
 * Internal to the library (not installed).
 */
#ifndef C2E_XLAT_H
#define C2E_XLAT_H

#include "c2e.h"

#include <stdbool.h>
#include <stdint.h>

#define REG_A    BPF_REG_0
#define REG_D    BPF_REG_6   /* the filter's data: seccomp_data or registers */
#define REG_X    BPF_REG_7
#define REG_ZERO BPF_REG_8   /* zero at run time, unknown to the verifier */
#define REG_BEST BPF_REG_9   /* chain frame: the verdict so far */
#define REG_RET_INDEX BPF_REG_1 /* C2E_EMIT_RET_INDEX: the ret that returned */

#define SCRATCH_BYTES C2E_SCRATCH_BYTES /* 16 slots at an 8-byte stride */

/* Where a pending jump goes once positions are known. */
enum target_kind { TO_PC, TO_END, TO_RET0 };

struct fixup {
	size_t at;           /* index of the jump instruction */
	enum target_kind kind;
	int pc;              /* classic target for TO_PC */
};

/*
 * What the verifier knows about A or X at an instruction's entry: nothing
 * yet, an exact constant, or an unknown value named by how it was derived
 * (c = 0: a fresh load it knows nothing about; otherwise a hash of the
 * instructions that narrowed it). Two paths carrying the same name carry
 * the same knowledge, so the verifier can prune one against the other.
 */
enum vknow { V_NONE, V_CONST, V_UNKNOWN, V_MIXED };

struct vval {
	enum vknow k;
	uint32_t c;
};

#define FRESH ((struct vval){ V_UNKNOWN, 0 })

struct vstate {
	struct vval a, x;
	bool x_is_a;       /* X holds a copy of A on every path (tax/txa) */
	bool seen;
};

struct xlat {
	const struct sock_filter *in;
	size_t len;
	enum c2e_abi abi;
	uint32_t size;       /* bytes at r6: c2e_abi_data_size(abi) */
	int scratch_off;
	struct c2e_ebpf *out;
	int *canon;          /* jump target redirection (merged rets) */
	bool *reach;
	int *next_reach;     /* next reachable pc after pc, or len */
	size_t *start;       /* eBPF index of each emitted classic pc */
	struct vstate *vs;   /* verifier knowledge at entry of each pc */
	uint8_t *launder;    /* bit 0: A, bit 1: X, at entry of pc */
	uint8_t *live;       /* bit 0: A live-in, bit 1: X live-in */
	struct fixup *fix;
	size_t nfix, capfix;
	bool need_init_a, need_init_x, need_zero, need_ret0;
	unsigned int flags;
	uint16_t *run_len;   /* C2E_EMIT_SEARCH: jeq run starting here */
	bool *absorbed;      /* member of a run emitted at its head */
	size_t ret0_at, end_at;
};

/* A jump (already carrying its condition) whose target is resolved later. */
int c2e_xlat_jump(struct xlat *x, uint8_t code, uint8_t dst, uint8_t src,
		  int32_t imm, enum target_kind kind, int pc);
/* The classic pc a jump at pc by delta lands on, after merging rets. */
int c2e_xlat_target(const struct xlat *x, size_t pc, uint32_t delta);

#define EMIT(x, ...) do { int __e = c2e_ebpf_emit((x)->out, __VA_ARGS__); if (__e) return __e; } while (0)

static inline bool is_cond_jump(uint16_t code)
{
	return BPF_CLASS(code) == BPF_JMP && BPF_OP(code) != BPF_JA;
}

static inline bool is_ret(uint16_t code)
{
	return BPF_CLASS(code) == BPF_RET;
}

/* search.c: finds the runs of "jeq #k" (C2E_EMIT_SEARCH) and emits one. */
int c2e_xlat_find_search_runs(struct xlat *x);
int c2e_xlat_emit_search_run(struct xlat *x, size_t pc);

#endif
