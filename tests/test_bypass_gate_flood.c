// SPDX-License-Identifier: GPL-2.0-only
/*
 * A flood of the gate's events: a gated process makes refused calls in a
 * loop while its effective uid alternates between two uids whose budget
 * buckets collide. The events the daemon makes for the gate are charged
 * to the login user, as the BPF side's are (account_of()), and two
 * accounts sharing a bucket only make each other stricter: the log gets
 * at most the burst plus the rate over the flood's length, however the
 * task's uids change.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "daemon.h"
#include "gatehand.h"
#include "proto.h"
#include "sfclient.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

SFD_TIER_INDEPENDENT

#define CALLS 400
#define RATE  10
#define BURST 20

static int flood(const char *agent)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog p = { 4, f };
	char msg[256];
	int i;

	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	if (gatehand_install(&p, 1, agent, msg, sizeof(msg)) || sf_attach(&p, 0))
		return 1;
	for (i = 0; i < CALLS; i++) {
		/* 1000 and 1256 share a bucket of 256 or 1024; the saved
		 * uid 0 lets the task switch back and forth. */
		if (syscall(SYS_setresuid, -1, i % 2 ? 1256 : 1000, -1) ||
		    syscall(SYS_getppid) != -1 || errno != EPERM ||
		    syscall(SYS_setresuid, -1, 0, -1))
			return 2;
	}
	return 0;
}

static long count_in(const char *path, const char *a, const char *b)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	long n = 0;

	while (f && getline(&line, &cap, f) > 0)
		n += strstr(line, a) && strstr(line, b);
	free(line);
	if (f)
		fclose(f);
	return n;
}

TEST(bypass_gate_events_of_a_task_that_changes_uids_stay_within_its_users_budget)
{
	static const char *const args[] = { "--event-rate", "10", "--event-burst", "20", NULL };
	SFD_AUTO;
	char agent[160], pidneedle[32];
	struct timespec a, b;
	double secs;
	long n, bound;
	int st;
	pid_t pid;

	if (!test_need_root("a task that changes its uids"))
		return;
	dm.args = args;
	if (!sfd_start_sfilterd(&dm, false) ||
	    !ASSERT_OK(sf_proto_agent_path(dm.sock, agent, sizeof(agent)), "agent path"))
		return;
	clock_gettime(CLOCK_MONOTONIC, &a);
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(flood(agent));
	waitpid(pid, &st, 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	if (!ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0, "every call refused with EPERM"))
		return;
	snprintf(pidneedle, sizeof(pidneedle), "\"pid\":%d,", (int)pid);
	/* The last event the budget let through reaches the log file soon. */
	sfd_log_wait(&dm, pidneedle);
	usleep(500 * 1000);
	n = count_in(dm.log, pidneedle, "\"tier\":\"gate\"");
	bound = BURST + (long)(secs * RATE) + 5;
	test_log("%d refused calls in %.2f s: %ld gate events logged (bound %ld)\n", CALLS, secs,
		 n, bound);
	ASSERT_GE(n, 1, "the gate's events are logged");
	ASSERT_GE(bound, n, "within the login user's budget, whatever its uids");
}
