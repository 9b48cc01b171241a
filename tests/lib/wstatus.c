// SPDX-License-Identifier: GPL-2.0-only
/* Wait statuses, as tests read them (wstatus.h). */
#include "wstatus.h"

#include <stdio.h>
#include <sys/wait.h>

const char *wstatus_str(int st, char *buf, size_t size)
{
	if (st == -1)
		snprintf(buf, size, "(no status)");
	else if (WIFSIGNALED(st))
		snprintf(buf, size, "killed by signal %d", WTERMSIG(st));
	else if (WIFEXITED(st))
		snprintf(buf, size, "exited %d", WEXITSTATUS(st));
	else
		snprintf(buf, size, "status 0x%x", st);
	return buf;
}

bool wstatus_killed_by(int st, int sig)
{
	return st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == sig;
}

bool wstatus_exited_ok(int st)
{
	return st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}
