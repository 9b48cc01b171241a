/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A stand-in seccomp agent for tests of the client's gate: a process that
 * listens on a daemon's agent socket (<socket>.agent, docs/protocol.md),
 * takes listeners as the runtime-spec's seccomp agent protocol hands them
 * over (the ContainerProcessState JSON, the descriptor by SCM_RIGHTS, the
 * end of file; one answer line), and answers their notifications: with
 * SECCOMP_USER_NOTIF_FLAG_CONTINUE until the test arms it, then with the
 * verdict of a filter it was given, as sfilterd's judge does once that
 * filter is in the chain (ALLOW, LOG: CONTINUE; ERRNO: the error; any
 * other: ENOSYS). The kernel is real; only the daemon's agent is replaced.
 * It takes the path over (unlinks whatever is there), so it works beside
 * a daemon that serves an agent socket of its own.
 */
#ifndef SF_TEST_AGENT_H
#define SF_TEST_AGENT_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/filter.h>

/* What the agent saw, in memory it shares with the test (MAP_SHARED). */
struct agent_seen {
	volatile int armed;        /* set by the test (or a child): judge */
	volatile int refuse;       /* set by the test: refuse listeners */
	volatile int connections;  /* connections accepted */
	volatile int listeners;    /* seccomp listeners received and kept */
	volatile int refused;      /* listeners refused (refuse set) */
	volatile int not_listener; /* descriptors that were no listener */
	volatile int notified;     /* notifications answered */
	volatile int judged;       /* of those, by the filter (armed) */
	volatile int last_nr;      /* the last notified call's number */
	volatile int last_pid;     /* its thread */
	volatile int by_nr[512];   /* notifications by call number (x86-64) */
	char json[1024];           /* the last ContainerProcessState, NUL-terminated */
};

struct agent {
	pid_t pid;
	char path[128];
	struct agent_seen *seen;
};

/* Starts the agent on socket's agent path, judging with judge once armed
 * (judge may be NULL: CONTINUE always). False, with the test failed, on
 * failure. */
bool agent_start(struct agent *a, const char *sock, const struct sock_fprog *judge,
		 bool armed);
/* Stops it and unmaps what it saw. */
void agent_stop(struct agent *a);

#endif
