/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A flood of costly filters, for tests and benches: one uid attaching
 * unique 4,096-instruction filters through sfilterd as fast as the daemon
 * lets it (or sending it large profiles to compile: flood_start_profiles()). Half of them the kernel's verifier takes long over, half the
 * action table's analysis. Each is attached by a child that exits at once,
 * so that the uid's limits on filters in force never stop the flood: only
 * its attach rate does.
 */
#ifndef SF_TEST_FLOOD_H
#define SF_TEST_FLOOD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/filter.h>

#define FLOOD_INSNS   4096
#define FLOOD_SENDERS 8

/* The k-th filter into f (FLOOD_INSNS entries); it allows every call a
 * process makes. Even k: nr against 2,047 constants no syscall has, every
 * branch a path for the verifier. Odd k: the arguments against 2,047
 * constants with jumps that rejoin, which the action table's analysis
 * cannot settle within its budget, for any syscall number. */
struct sock_fprog flood_filter(struct sock_filter *f, uint32_t k);

/* What a flood did, in memory its senders share with the caller. */
struct flood {
	uint32_t next;          /* the next filter's k */
	uint32_t attached, refused, failed; /* refused: EAGAIN, the rate */
	int last_errno;         /* of the last failure */
	int n;                  /* senders running */
	pid_t pid[FLOOD_SENDERS];
};

/* Makes the calling process uid (and its gid), with no supplementary
 * groups and no_new_privs: what sf_attach() asks of an unprivileged caller. */
bool flood_become(uid_t uid);
/* Starts n (at most FLOOD_SENDERS) senders as uid, against the daemon
 * SFILTER_SOCKET names; they die with the caller. NULL (errno) when none
 * could start. */
struct flood *flood_start(int n, uid_t uid);
/* Kills and reaps the senders and unmaps fl. */
void flood_stop(struct flood *fl);

/* A container profile of rules entries that libseccomp 2.5.4 leaks on (a
 * rule with arguments for i386's socketcall after one for a call it
 * multiplexes), values from salt * 1000, and, with bad_last, an entry
 * after them that refuses the profile once all are compiled. malloc()ed;
 * NULL when out of memory. */
char *flood_profile(int rules, int salt, bool bad_last);
/* The entries of the largest such profile a PROFILE request carries
 * (~64 KiB: ~0.5 s of a CPU to compile here). */
#define FLOOD_PROFILE_RULES 430
/* Starts n senders as uid that send such profiles (unique, refused at
 * their end, so that nothing is kept and each is compiled) for filter 0
 * as fast as the daemon takes them: attached counts those compiled
 * (EINVAL), refused those turned away (EAGAIN; the sender then waits
 * 100 ms). */
struct flood *flood_start_profiles(int n, uid_t uid);

/* What a timed attach of another uid reports. */
struct flood_probe {
	double ms;              /* < 0: it failed */
	int err;                /* errno */
	char msg[256];          /* sf_last_error() */
};
/* In a forked child of uid (flood_become()), sf_attach() of a
 * one-instruction allow-all filter, timed: the same filter every time, so
 * a chain already loaded unless the daemon let its slot go. r is in
 * memory shared with the caller (MAP_SHARED). Its ms, or -1. */
double flood_probe_attach(struct flood_probe *r, uid_t uid);

#endif
