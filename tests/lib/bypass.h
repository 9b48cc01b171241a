/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The bypass suite's common ground (tests/test_bypass_*.c): every case
 * tries, many times over, to get a denied system call past sfilter, and
 * judges each attempt by what became of the task that was to make it:
 *   - an escape: the denied call ran and the task lived on;
 *   - a wrongful kill: the task was killed though it made allowed calls
 *     only (it never reached the denied one);
 *   - anything else (a crash, a hang, an unexpected exit) fails the test.
 * A task reports through memory shared with the test (no system call):
 * "reached" just before the denied call, "survived" just after it.
 *
 * A case runs bp_iterations() attempts, fewer under emulation, and hands
 * its tally to bp_report(), which asserts both counts are 0 and records
 * them for the runner's summary (test_bypass_count()).
 */
#ifndef SF_TEST_BYPASS_H
#define SF_TEST_BYPASS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/filter.h>

struct sf_runtime;

/* host on the host, guest under emulation (test_is_emulated()). */
long bp_iterations(long host, long guest);

/* What one task's report says. */
struct bp_flags {
	volatile int reached;  /* about to make the denied call */
	volatile int survived; /* back from it */
};

enum bp_fate {
	BP_KILLED,   /* died by SIGKILL at its denied call: as it must */
	BP_LIVED,    /* made allowed calls only and lived: as it must */
	BP_ESCAPE,
	BP_WRONGFUL,
	BP_OTHER,
};

/* A task that was to die at its denied call, from its wait status (-1:
 * it is gone, its status unknown: then the flags alone decide). */
enum bp_fate bp_judge_denied(int status, const struct bp_flags *f);
/* A task that made allowed calls only and was to live: killed by SIGKILL
 * is a wrongful kill. */
enum bp_fate bp_judge_allowed(int status);

struct bp_tally {
	long iterations, escapes, wrongful_kills;
};

/* Adds one judged attempt; a bad fate is printed with what (which
 * attempt; the first 20 of a tally), and BP_OTHER fails the test. */
void bp_count(struct bp_tally *t, enum bp_fate fate, int status, const char *what);
void bp_tally_add(struct bp_tally *to, const struct bp_tally *from);
/* Asserts no escape and no wrongful kill, logs and records the case
 * (test_bypass_count()); seconds is how long the case took. */
void bp_report(const char *case_name, const char *iteration, const struct bp_tally *t,
	       double seconds);

/*
 * A prober: a process that makes a given call in a fresh child (which has
 * the prober's chain) on request, and reports the child's wait status;
 * itself it never makes a call its filters could deny. With auto probing
 * on it probes on its own, alternately the denied call (which must kill)
 * and the allowed one (which must not), at most 16 times, spread over a
 * few milliseconds: the test changes filters meanwhile.
 */
struct bp_prober_board {
	volatile int probing;   /* auto probing on */
	volatile int budget;    /* auto probes left this time */
	volatile int idle;      /* not auto probing now */
	volatile long value;    /* what setup reported */
	struct bp_tally t;      /* the auto probes' verdicts */
};

struct bp_prober {
	pid_t pid;
	int cmd, rep;
	struct bp_prober_board *b;
};

/* Forks the prober; setup (may be NULL) runs in it first, and may report
 * a value; a non-zero return ends it. */
bool bp_prober_start(struct bp_prober *p, int (*setup)(struct bp_prober_board *b));
/* Starts or stops auto probing; stopping returns once it is idle. */
bool bp_prober_auto(struct bp_prober *p, bool on);
/* The wait status of the prober's child that made call nr, or -1. */
int bp_prober_probe(struct bp_prober *p, int nr);
/* Ends it; its auto probes' tally is added to t (when not NULL). */
void bp_prober_end(struct bp_prober *p, struct bp_tally *t);

/* Zeroed memory shared with the processes the test forks; NULL (and the
 * test failed) when mmap fails. */
void *bp_shared(size_t size);
double bp_now(void);
/* Waits for pid with a deadline (seconds; scaled under emulation); on
 * timeout kills it and fails the test. The wait status, or -1. */
int bp_wait(pid_t pid, double timeout_s);
/* Busy-waits (yielding) until *flag >= value, at most timeout_s; false
 * (and nothing failed) on timeout. */
bool bp_spin_until(volatile int *flag, int value, double timeout_s);

/* The runtime, or NULL with a SKIP where the kernel refuses its programs
 * (or a FAIL for any other error). */
struct sf_runtime *bp_runtime_open(bool force_tracepoint);
/* Attaches prog to tid; 0 or the runtime's -errno, which fails the test
 * unless quiet. */
int bp_attach(struct sf_runtime *rt, pid_t tid, const struct sock_fprog *prog,
	      unsigned int flags, unsigned int *filter_id, bool quiet);

/* clone3 (args of size bytes) through a stub that calls fn in the child,
 * on the stack the args give or, with none (CLONE_VM | CLONE_VFORK), below
 * the parent's frames as vfork does: C code cannot return twice from
 * syscall() there. fn never returns. The child's pid or -errno, in the
 * parent only. */
struct clone_args;
long bp_clone3_run(struct clone_args *args, size_t size, void (*fn)(void));

/* A child of the calling thread (which inherits its chain) makes call nr;
 * its wait status, or -1. */
int bp_probe(int nr);

/* The denied call of most cases, and calls no filter of theirs denies. */
long bp_denied_call(void);   /* getppid */
long bp_allowed_call(void);  /* getgid */

#endif
