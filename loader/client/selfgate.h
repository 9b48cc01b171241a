/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The gate of a self-attach (selfgate.c; docs/protocol.md, "The gate and the
 * agent socket"). Internal: not in libsfclient.map, for sfclient.c and
 * for sfrun, which gates all its filters at once.
 */
#ifndef SF_CLIENT_SELFGATE_H
#define SF_CLIENT_SELFGATE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/filter.h> /* struct sock_fprog */

/* The environment variable that turns the gate off: SFILTER_GATE=0. */
#define SF_CLIENT_GATE_ENV "SFILTER_GATE"

/* Whether sf_attach() tries a gate: not when this process has one
 * already, has attached a filter through this library (trying makes calls,
 * a thread and a connection, that the filter would judge), or has
 * SFILTER_GATE=0 in its environment. No system call. */
bool sf_client_gate_wanted(void);

/*
 * prog's instructions read once into *copy (the calling thread's buffer,
 * valid until its next call; not to be freed): the gate and the ATTACH
 * are then built from the same bytes, and a filter that cannot be
 * read is -EFAULT, as seccomp(2) has it. Any other failure (-ENOMEM, no
 * pipe) is kept as the reason why there is no gate, and the caller goes
 * on without one.
 */
int sf_client_gate_copy(const struct sock_fprog *prog, struct sock_filter **copy);

/*
 * Installs the gate for the n filters of chain (attach order) on the
 * calling thread and hands its listener to sfilterd's agent socket; with
 * tsync, then carries it to every thread. A gate that cannot be
 * installed is none, and why is kept for sf_client_gate_note(); one
 * installed whose listener sfilterd did not take is lost
 * (sf_client_gate_lost()).
 */
void sf_client_gate(const struct sock_fprog *chain, size_t n, bool tsync);
/* The same, calling before_install(ctx) just before the gate goes in,
 * when it does: the last moment for calls the gate could send up (the
 * ATTACH's connection, its credentials), which are then never notified. */
void sf_client_gate_with(const struct sock_fprog *chain, size_t n, bool tsync,
			 void (*before_install)(void *ctx), void *ctx);

/* "gate: installed" or "gate: not installed: why; ...": the gate's state
 * for prog, as the attach note ends (size bytes, NUL-terminated); tried:
 * whether this attach called sf_client_gate(). */
void sf_client_gate_note(const struct sock_fprog *prog, bool tried, char *out, size_t size);

/* 0, or when this process's gate is in the kernel without a listener
 * (sfilterd refused it, or was gone for longer than the hand-over waits):
 * an errno, EHOSTDOWN for a daemon that went away, and why. Its calls
 * then fail with ENOSYS whatever a filter says, so no filter can be
 * attached as written any more: sf_attach() refuses. No system call. */
int sf_client_gate_lost(char *why, size_t size);
/* Whether this process installed a gate (then none can be added below it:
 * the kernel allows one listener per filter chain). */
bool sf_client_gate_installed(void);
/* Whether prog is one of the filters the calling thread's own
 * sf_client_gate_with() built the gate from (by content), with its
 * listener taken, and, for a TSYNC attach, carried to every thread: then
 * every call prog does not allow in the kernel goes up to sfilterd. */
bool sf_client_gate_covers(const struct sock_fprog *prog, bool tsync);

/* A filter was attached through this library: no gate is tried after it,
 * as trying makes calls (a thread, a connection) that the filter judges. */
void sf_client_gate_attached(void);

#endif
