/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The self-attach gate's hand-over on the wire (gate_wire.c): the agent
 * connection, the runtime-spec's ContainerProcessState with the listener,
 * the agent's answer, and the tries again while a daemon restarts.
 * Internal, for selfgate.c. Each returns 0, a descriptor or -errno (an
 * errno for sf_gate_deliver()), with why set on failure (why_size bytes).
 */
#ifndef SF_CLIENT_GATE_WIRE_H
#define SF_CLIENT_GATE_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* How long the agent may take to say it took a connection, and to answer. */
#define SF_GATE_WAIT_ANSWER_MS 10000

/* A stream socket connected to the agent socket of sf_proto_socket_path(). */
int sf_gate_agent_dial(char *why, size_t why_size);
/* The agent's "ready" byte read from fd: 0, or -EAGAIN (fd is still the
 * caller's). */
int sf_gate_agent_greeted(int fd, char *why, size_t why_size);
/* Hands listener (of process pid) to the agent on sock, which is closed,
 * and again on new connections for as long as a restarting daemon may
 * take (SF_GATE_WAIT_ANSWER_MS). 0 once the agent holds it; else an errno,
 * and the listener closed: the calls it would hear then fail with ENOSYS
 * instead of waiting for ever. */
int sf_gate_deliver(int sock, int listener, pid_t pid, char *why, size_t why_size);
/* Whether a hand-over's errno says the daemon went away or could not keep
 * the listener yet (tried again), rather than that the agent refused. */
bool sf_gate_daemon_away(int err);
/*
 * The system calls the three above make, by number, in *nrs; 0 where they
 * are not exactly these (i386, where libc may go through socketcall()).
 * On x86-64 each call is made as the one system call it names, never
 * through a libc wrapper that may use another (nanosleep() as
 * clock_nanosleep()), so that a gate that allows these numbers allows the
 * whole hand-over; clock_gettime() is libc's, whose vDSO falls back to
 * the system call of that name.
 */
size_t sf_gate_wire_calls(const int **nrs);

#endif
