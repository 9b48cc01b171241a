/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Setuid programs and unprivileged users, for tests that attack sfilterd
 * as a local user would: a setuid-root copy of the test runner, run as
 * `COPY --hold` (harness.c: it reads its standard input to the end, then
 * exits 0), is a privileged program that waits, like su waiting for a
 * password.
 */
#ifndef SF_TEST_SUID_H
#define SF_TEST_SUID_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define SUID_NOBODY 65534

/* A setuid-root copy of this runner: a fresh directory into dir, the copy
 * into path. False, with the test skipped, where no setuid program can run
 * (/tmp mounted nosuid), or failed. */
bool suid_copy(char *dir, size_t dsize, char *path, size_t psize);
void suid_rm_copy(const char *dir, const char *path);
/* Becomes uid and gid 65534, with no supplementary groups. */
bool suid_become_nobody(void);
/* CapEff of pid, from /proc (0 when unreadable). */
unsigned long long suid_cap_eff(pid_t pid);
/* Waits for pid's CapEff to become non-zero (it has exec'd the setuid
 * copy); the value, or 0. */
unsigned long long suid_wait_privileged(pid_t pid);

#endif
