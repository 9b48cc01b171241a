/* SPDX-License-Identifier: GPL-2.0-only */
/* Wait statuses, as tests read them: -1 stands for "no status" (the
 * process could not be waited for). */
#ifndef SF_TEST_WSTATUS_H
#define SF_TEST_WSTATUS_H

#include <stdbool.h>
#include <stddef.h>

/* "killed by signal 9", "exited 0", "(no status)", ... into buf. */
const char *wstatus_str(int st, char *buf, size_t size);
bool wstatus_killed_by(int st, int sig);
bool wstatus_exited_ok(int st);

#endif
