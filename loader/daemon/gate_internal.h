/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What gate.c (the thread, the judge) and gate_agent.c (the agent socket's
 * connections, the table of listeners, the holder) share. Everything here
 * is the gate thread's, but for the counters (atomics, read by STATUS)
 * and the event queue (under evq_lock, drained by the loop).
 */
#ifndef SF_GATE_INTERNAL_H
#define SF_GATE_INTERNAL_H

#include "daemon.h"

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define GATE_MAX         4096  /* listeners held by the daemon */
#define GATE_PER_LOGIN   256   /* ... of one login user's */
#define AGENT_MAX_CONNS  64    /* agent connections open at once */
#define AGENT_PER_LOGIN  8     /* ... of one login user's */
#define AGENT_TIMEOUT_MS 2000  /* to send the message and its end */
#define GATE_EVQ         1024  /* events waiting for the loop */

enum gate_kind { GATE_STOP, GATE_AGENT, GATE_AGENT_CONN, GATE_LISTENER };

struct gate_tag { enum gate_kind kind; };

struct gate_listener {
	struct gate_tag tag;           /* first: the epoll tag */
	struct gate_listener *next;
	int fd;                        /* -1: closed, to be freed */
	struct login who;              /* who handed it in */
	pid_t pid;                     /* the process it was installed for, as
					  the sender says (display only) */
	char what[48];                 /* its metadata, or the container id */
	bool killable;                 /* its filter waits killably once a call
					  is received (the sender says so) */
	uint64_t judged;
};

struct agent_conn {
	struct gate_tag tag;           /* first: the epoll tag */
	struct agent_conn *next;
	int fd;                        /* -1: closed, to be freed */
	struct login who;
	pid_t pid;                     /* SO_PEERCRED */
	int listener;                  /* the first descriptor, if a listener */
	uint64_t deadline_ms;
	size_t len;
	char *buf;                     /* SF_PROTO_AGENT_MAX_MSG + 1 */
};

struct gate_stats {
	uint64_t listeners, judged, continued, denied, trapped, killed, unjudged,
		 refused, events_dropped;
};

struct gate {
	pthread_t thread;
	bool running;
	int ep, stop_fd, ev_fd, agent_fd, holder_fd;
	char agent_path[PATH_MAX];
	struct gate_stats st;
	pthread_mutex_t evq_lock;
	struct sf_event evq[GATE_EVQ];
	unsigned int evq_head, evq_n;
};
extern struct gate g;

uint64_t gate_now_ms(void);
int gate_watch(int fd, uint32_t events, struct gate_tag *tag);
/* Takes fd (a seccomp listener) into the judge's care: 0, or -ENOSPC past
 * the limits, -errno (fd is then still the caller's). */
int gate_add_listener(int fd, const struct login *who, pid_t pid, const char *what,
		      bool killable);

/* ---- gate_agent.c ---- */
void agent_accept(void);
void agent_read(struct agent_conn *c);
/* Answers and closes the connections past their deadline. */
void agent_sweep(uint64_t now_ms);
void agent_close_all(void);
struct gate_listener *gate_listener_new(const struct login *who);
/* Unlinks l when the thread next reaps (its fd already closed). */
void gate_listener_free(struct gate_listener *l);
unsigned int gate_listener_count(const struct login *who);
void gate_listener_reap(void);
void gate_listener_close_all(void);
/* The holder: connects (or starts one) and takes back what it keeps. */
void gate_hold_start(void);
/* Hands the holder a copy of listener fd, for a restarted daemon. */
void gate_hold(int fd, const struct login *who, pid_t pid, const char *what);

#endif
