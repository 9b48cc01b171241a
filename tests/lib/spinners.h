/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Spinners: forked children that are always on their way into or out of a
 * system call (getgid and sched_yield, at nice 19) until told to make one
 * last call and exit 0: busy confined tasks for tests that tear down,
 * restart or change sfilter under load. A spinner that dies before its
 * last call was killed for an allowed one.
 */
#ifndef SF_TEST_SPINNERS_H
#define SF_TEST_SPINNERS_H

#include <stdbool.h>
#include <sys/types.h>

#define SPIN_MAX 64

struct spin_board {
	volatile int go[SPIN_MAX];   /* spinner i: make the last call, exit */
	volatile int last_nr;        /* that call */
	volatile int started;
};

struct spinners {
	pid_t pid[SPIN_MAX];
	int n;
	struct spin_board *b;
};

/* Starts n (at most SPIN_MAX) spinners and waits until all run. */
bool spinners_start(struct spinners *s, int n);
/* Tells spinners [from, to) to make call nr and exit, and reaps them.
 * Returns how many died by SIGKILL; -1 if one ended any other way than
 * that or exit(0). */
int spinners_finish(struct spinners *s, int from, int to, int nr);
/* How many spinners have died so far (reaps nothing). */
int spinners_dead(const struct spinners *s);
/* Kills and reaps those left, and frees the board. */
void spinners_kill(struct spinners *s);

#endif
