/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cgroup v2 helpers for tests: find (in the guest: mount) the cgroup2
 * hierarchy, make a test's own cgroup, move a process into one.
 */
#ifndef SF_TEST_CGROUP_H
#define SF_TEST_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The cgroup2 mount point (probe_cgroup2(); in the guest it is mounted on
 * first use): 1, or 0 / -1 with why, as a probe answers (probe.h). */
int tcg_root(char *out, size_t size, char *why, size_t wsize);
/* Makes ROOT/NAME-PID into out; false with a SKIP when there is no
 * cgroup v2, or a FAIL when the probe or mkdir fails. */
bool tcg_make(char *out, size_t size, const char *name);
/* Writes pid to dir/cgroup.procs; true when the kernel took it. */
bool tcg_move(const char *dir, pid_t pid);

#endif
