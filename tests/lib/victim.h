/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A victim: a child that waits on a pipe for a command, makes one system
 * call for it ('A' getppid, 'B' getuid, 'C' getgid) and answers, so that a
 * test can attach filters to it and see which call kills it.
 */
#ifndef SF_TESTS_VICTIM_H
#define SF_TESTS_VICTIM_H

#include <stdbool.h>
#include <sys/types.h>

struct victim {
	pid_t pid;
	int go, report;
};

bool victim_start(struct victim *v);
/* 1: the victim ran the syscall and answered; 0: it died by SIGKILL;
 * -1: something else. */
int victim_do(struct victim *v, char cmd);
/* The same call made by a child the victim forks (which inherits its
 * filters): 1 the child made it and exited, 0 the child died by SIGKILL,
 * -1 something else. The victim lives on either way. */
int victim_child_do(struct victim *v, char cmd);
/* Kills and reaps it (when still there). */
void victim_end(struct victim *v);

#endif
