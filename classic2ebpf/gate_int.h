/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The gate's searched form (gate_tree.c) and the walk it is built from
 * (gate_walk.c), for c2e_gate_build(). Internal (not installed).
 */
#ifndef C2E_GATE_INT_H
#define C2E_GATE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/filter.h>
#include "c2e.h"

#define GT_WIN     512           /* numbers from 0 with a bit of their own */
#define X32_WIN    1024          /* and from X32_BIT (x32 has 548 on 6.18) */
#define X32_BIT    C2E_X32_SYSCALL_BIT
/* Elements: the low window's numbers, the low class, the x32 window's
 * numbers, the high class; in the order of their numbers. */
#define EL_LOW     GT_WIN
#define EL_X32     (GT_WIN + 1)
#define EL_HIGH    (EL_X32 + X32_WIN)
#define GT_ELEMS   (EL_HIGH + 1)
#define GT_ENTRIES 256           /* entries kept; past them, the start */

#define E_NONE  0xffff           /* no entry seen (yet) */
#define E_START 0xfffe           /* the linear gate's start */

enum vkind { V_CONST, V_NR, V_ARCH_OTHER, V_UNKNOWN };

struct val {
	uint32_t kind;
	uint32_t v;
};

/* Where a number's path leaves what nr decides, and the state there. */
struct entry {
	uint32_t pc;
	struct val a, x, m[C2E_MEMWORDS];
};

enum verdict { VD_ALLOW, VD_NOTIF, VD_RUN };

/* An arch's numbers as ranges of one verdict and entry: range i is
 * [start[i], start[i + 1]), the last one up to 2^32 - 1. */
struct ranges {
	uint16_t entry_of[GT_ELEMS];
	uint32_t start[GT_ELEMS];
	uint8_t v[GT_ELEMS];          /* enum verdict */
	uint16_t e[GT_ELEMS];         /* VD_RUN: an index into entries, or E_START */
	size_t n;
};

/* What the walk of a linear gate found (gate_walk.c). */
struct gate_walk {
	struct ranges rg[3];     /* x86-64, i386, any other arch */
	struct entry *entries;   /* free() it */
	size_t n_entries;
	uint64_t kernel_steps;   /* seccomp(2)'s emulation of the linear gate, estimated */
};

/* Walks the valid linear gate lin: 0, -E2BIG past the walk's budget,
 * -ENOMEM. gw->entries is to be freed in either case. */
int gate_walk(const struct sock_filter *lin, size_t len, struct gate_walk *gw);

/* The searched form of the linear gate lin (valid, built by gate.c): a
 * malloc'd *out that returns what lin returns for every seccomp_data.
 * 0; -EAGAIN where form is C2E_GATE_BEST and lin is the cheaper for
 * seccomp(2) to install; -E2BIG past C2E_MAX_INSNS or the walk's budget;
 * -EINVAL, -ENOMEM. */
int c2e_gate_search(const struct sock_filter *lin, size_t len, enum c2e_gate_form form,
		    struct sock_filter **out, size_t *out_len);

#endif /* C2E_GATE_INT_H */
