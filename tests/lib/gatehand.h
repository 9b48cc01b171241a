/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A gate installed the plain way, for tests of the daemon's judge: the
 * calling thread builds the gate for chain (c2e_gate_build()), installs it
 * with SECCOMP_FILTER_FLAG_NEW_LISTENER (and WAIT_KILLABLE_RECV where the
 * kernel has it), hands the listener to the agent socket at agent_path
 * and closes its own copy. The calls it makes after the install must be
 * ones the chain allows (libsfclient's way has no such need).
 * 0, or -errno with msg saying why (the agent's answer included).
 */
#ifndef SF_TESTS_GATEHAND_H
#define SF_TESTS_GATEHAND_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/filter.h>

int gatehand_install(const struct sock_fprog *chain, size_t n, const char *agent_path,
		     char *msg, size_t msz);
/* Sends the agent at agent_path one message with fd (-1: none) and the
 * JSON text; the answer line into answer. 0 or -errno. */
int gatehand_send(const char *agent_path, int fd, const char *json, char *answer,
		  size_t size);

/* The gate for chain installed on the calling thread: its listener, or
 * -errno. *killable (may be NULL): installed with WAIT_KILLABLE_RECV. */
int gatehand_gate(const struct sock_fprog *chain, size_t n, bool *killable);
/* Handing the listener to a test's own process: tests/lib/fdpass.h. */

#endif
