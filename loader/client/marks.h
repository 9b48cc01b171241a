/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where the last sf_attach() of this process spent its time, for
 * bench/attach_latency: CLOCK_MONOTONIC in ns at each mark, 0 where the
 * attach did not pass. Internal (not in libsfclient.map).
 *
 * A mark reads the clock, which is the vDSO's but may be a system call
 * where the clock source has no vDSO path (some virtual machines), and a
 * filter already in force (a later attach's) may deny that call. So marks
 * are taken only when the bench asks (sf_client_marks_on), never in a
 * user's attach; and even then only before the ATTACH is sent, never
 * after (the daemon may have put the filter in force by then), and in
 * the gate's steps only where a system call is safe: before the gate; in
 * H, which the gate does not cover; in the caller where the gate allows
 * clock_gettime (the direct set).
 */
#ifndef SF_CLIENT_MARKS_H
#define SF_CLIENT_MARKS_H

#include <stdbool.h>
#include <time.h>

enum sf_client_mark {
	SF_MARK_START,     /* sf_attach() entered */
	SF_MARK_PREPARED,  /* filter copied, agent dialled, gate built, H started;
			      without a gate: the connect next */
	SF_MARK_GREETED,   /* the daemon's hello read: the gate's install next */
	SF_MARK_INSTALLED, /* the gate in the kernel (H: when it saw the listener) */
	SF_MARK_HANDED,    /* the agent's answer read */
	SF_MARK_GATED,     /* the caller on its way: listener closed, TSYNC done */
	SF_MARK_SEND,      /* the ATTACH about to be sent */
	SF_MARK_COUNT
};

extern long long sf_client_marks[SF_MARK_COUNT];
extern bool sf_client_marks_on;

static inline void sf_client_mark(enum sf_client_mark m)
{
	struct timespec t;

	if (!sf_client_marks_on)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t);
	sf_client_marks[m] = (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

#endif /* SF_CLIENT_MARKS_H */
