/* SPDX-License-Identifier: GPL-2.0-only */
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
#define AGENT_MAX_CONNS  256   /* agent connections open at once */
#define AGENT_PER_LOGIN  64    /* ... of one login user's */
/* crun connects when it creates the container and sends the listener
 * only once its hooks have run (seconds under emulation): a connection
 * may wait that long for its first byte, then has AGENT_TIMEOUT_MS for
 * the rest. */
#define AGENT_IDLE_MS    120000
#define AGENT_TIMEOUT_MS 2000
#define GATE_EVQ         1024  /* events waiting for the loop */

enum gate_kind { GATE_STOP, GATE_AGENT, GATE_AGENT_CONN, GATE_LISTENER };

struct gate_tag { enum gate_kind kind; };

struct gate_listener {
	struct gate_tag tag;           /* first: the epoll tag */
	struct gate_listener *next;
	int fd;                        /* -1: closed, to be freed */
	struct login who;              /* who handed it in */
	pid_t pid;                     /* a self-attach's sender (SO_PEERCRED),
					  or 0 */
	char what[48];                 /* its metadata, or the container id */
	bool killable;                 /* its filter waits killably once a call
					  is received (the sender says so) */
	uint64_t key;                  /* names it at the holder and in slots */
	struct gate_slot *slot;        /* its record, or NULL */
	uint64_t cgroup;               /* its first caller's (gate_decide()),
					  for --metrics' labels only; 0: none */
	bool cgroup_read;
};

/* What the holder keeps beside a listener. */
struct gate_meta {
	uint32_t magic;                /* GATE_META_MAGIC */
	uint32_t slot;
	uint64_t key;
	struct login who;
	pid_t pid;
	uint8_t killable;
	char what[48];
};
#define GATE_META_MAGIC 0x47415445u /* "GATE" */

/* A listener's record in <socket>.gate, a file mapped shared: what a
 * daemon killed between receiving a call and answering it leaves for its
 * successor, which takes the listener back from the holder and answers
 * the call (a received call cannot be received again). */
struct gate_slot {
	uint64_t key;                  /* its listener's; 0: free */
	uint64_t last_id;              /* the newest call received */
	uint32_t inflight;             /* call received, not yet answered */
	uint32_t pad;
	struct sf_gate_call call;
};

struct agent_conn {
	struct gate_tag tag;           /* first: the epoll tag */
	struct agent_conn *next;
	int fd;                        /* -1: closed, to be freed */
	struct login who;
	pid_t pid;                     /* SO_PEERCRED */
	int listener;                  /* the first descriptor, if a listener */
	uint64_t deadline_ms;
	uint64_t t0_ns;                /* its whole message read (--metrics) */
	size_t len;
	char *buf;                     /* SF_PROTO_AGENT_MAX_MSG + 1 */
};

struct gate_stats {
	uint64_t listeners, judged, continued, denied, trapped, killed, unjudged,
		 refused, events_dropped, taken_back, recovered;
};

struct gate {
	pthread_t thread;
	bool running;
	int ep, stop_fd, ev_fd, agent_fd, holder_fd;
	struct gate_slot *slots;       /* GATE_MAX records, or NULL */
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
		      bool killable, struct gate_listener **out);

/* The judge of one call l received (gate.c). */
void gate_decide(struct gate_listener *l, const struct sf_gate_call *call);

/* ---- gate_hold.c ---- */
/* Opens the records and the holder, and takes back what the holder keeps
 * (answering the calls a killed predecessor received). */
void gate_hold_start(void);
/* Gives l a record and the holder a copy of its listener, in two steps:
 * the copy sent (0, then the holder has it queued whatever happens to
 * this daemon, and gate_hold_wait() reads the holder's answer; or -errno,
 * said already), so that the agent is answered while the holder takes it. */
int gate_hold_send(struct gate_listener *l, uint64_t *seq);
void gate_hold_wait(struct gate_listener *l, uint64_t seq);
/* l is gone: its record is freed. */
void gate_unhold(struct gate_listener *l);
/* At the stop: an unpinned daemon's holder is stopped (its tasks lost
 * their chains; their gates' calls then fail with ENOSYS rather than
 * wait for a daemon that will not judge them). */
void gate_hold_stop(void);

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
/* l is in the table: its process is shown as gated. */
void gate_listener_registered(struct gate_listener *l);
void gate_listener_reap(void);
void gate_listener_close_all(void);

#endif
