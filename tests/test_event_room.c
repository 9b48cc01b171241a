// SPDX-License-Identifier: GPL-2.0-only
/*
 * What room the event ring keeps for kills. With sfilterd stopped
 * (SIGSTOP: nothing drains the ring), uid 65534 logs getppid in a loop
 * and, where a denial is not a kill (the lsm tier), is denied getpid in a
 * loop: each within its budget, together more than the ring holds. Then a
 * task of uid 65533 is killed. Its kill event must be in the log once
 * sfilterd goes on: what one user's logs and denials may fill of the ring
 * leaves room for another user's kills. Not tier-independent: on the
 * tracepoint tier a denial kills, and only the logs fill.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "daemon.h"
#include "progs.h"
#include "sfclient.h"
#include "proto.h"
#include "wstatus.h"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define FLOODER 65534
#define VICTIM  65533
#define FLOOD_CALLS 20000

/* An event per call: the flood's calls are two keys, which the kernel
 * would fold into two events a second (tests/test_event_fold.c); what
 * the ring keeps for kills is under test here. */
static const char *const per_call[] = { "--repeat-interval", "0", NULL };


static bool become(uid_t uid)
{
	return setgroups(0, NULL) == 0 && setgid(uid) == 0 && setuid(uid) == 0;
}

/* Waits for a byte on go, then: uid 65533 makes the call its filter
 * kills; uid 65534 logs getppid FLOOD_CALLS times and, if deny, is
 * denied getpid as many times. */
static int filler(uid_t uid, bool deny, int ready, int go)
{
	static struct sock_filter kill_getppid[4];
	struct sock_filter log_and_deny[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_LOG),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getpid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog flood = { sizeof(log_and_deny) / sizeof(log_and_deny[0]), log_and_deny };
	struct sock_fprog victim = progs_kill_on(kill_getppid, 4, SYS_getppid);
	char c;
	int i;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* The BPF side's ring is under test: its events, not the gate's. */
	setenv("SFILTER_GATE", "0", 1);
	if (!become(uid) || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    sf_attach(uid == FLOODER ? &flood : &victim, 0))
		return 10;
	if (write(ready, "r", 1) != 1 || read(go, &c, 1) != 1)
		return 11;
	if (uid != FLOODER) {
		syscall(SYS_getppid);
		return 12;
	}
	for (i = 0; i < FLOOD_CALLS; i++)
		syscall(SYS_getppid);
	/* getpid has no LSM hook: it runs, but its denial is an event. */
	for (i = 0; deny && i < FLOOD_CALLS; i++)
		syscall(SYS_getpid);
	return 0;
}

static pid_t start_filler(uid_t uid, bool deny, int *go_w)
{
	int ready[2], go[2];
	pid_t p;
	char c;

	if (pipe2(ready, O_CLOEXEC))
		return -1;
	if (pipe2(go, O_CLOEXEC)) {
		close(ready[0]);
		close(ready[1]);
		return -1;
	}
	fflush(stdout);
	p = fork();
	if (p == 0)
		_exit(filler(uid, deny, ready[1], go[0]));
	close(ready[1]);
	close(go[0]);
	if (p > 0 && read(ready[0], &c, 1) != 1) {
		kill(p, SIGKILL);
		waitpid(p, NULL, 0);
		p = -1;
	}
	close(ready[0]);
	if (p > 0)
		*go_w = go[1];
	else
		close(go[1]);
	return p;
}

TEST(another_users_kill_event_finds_room_in_a_ring_one_user_filled_with_logs_and_denials)
{
	char *st = calloc(1, SF_PROTO_MAX_MSG);
	int go_flood = -1, go_victim = -1, ws = -1;
	pid_t flood = -1, victim = -1;
	char needle[96], buf[64];
	bool paused = false, deny;
	SFD_AUTO;

	if (!st || !sfd_start_for_users(&dm, per_call) ||
	    !ASSERT_EQ(sfd_status(&dm, st), 0, "STATUS"))
		goto out;
	deny = strstr(st, "\"tier\":\"lsm\"") != NULL;
	test_log("%s\n", deny ? "lsm tier: logs and denials fill" :
		 "tracepoint tier: a denial kills, logs alone fill");
	flood = start_filler(FLOODER, deny, &go_flood);
	victim = start_filler(VICTIM, false, &go_victim);
	if (!ASSERT_TRUE(flood > 0 && victim > 0, "both are confined"))
		goto out;
	paused = sfd_pause(&dm);
	if (!ASSERT_TRUE(paused, "sfilterd stopped"))
		goto out;
	ASSERT_EQ(write(go_flood, "g", 1), 1, "flood");
	waitpid(flood, &ws, 0);
	flood = -1;
	if (!ASSERT_TRUE(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "uid 65534 logged and was denied"))
		test_log("uid 65534: %s\n", wstatus_str(ws, buf, sizeof(buf)));
	ASSERT_EQ(write(go_victim, "g", 1), 1, "the victim's call");
	waitpid(victim, &ws, 0);
	if (!ASSERT_TRUE(wstatus_killed_by(ws, SIGKILL), "uid 65533 is killed"))
		test_log("uid 65533: %s\n", wstatus_str(ws, buf, sizeof(buf)));
	paused = !sfd_resume(&dm);
	snprintf(needle, sizeof(needle), "\"pid\":%d,\"tid\":%d,\"uid\":%d,", (int)victim,
		 (int)victim, VICTIM);
	victim = -1;
	ASSERT_TRUE(sfd_log_wait(&dm, needle), "its kill event is in the log");
	if (!ASSERT_EQ(sfd_status(&dm, st), 0, "STATUS"))
		goto out;
	test_log("uid %d lost %lld over its budget, %lld with the ring full\n", FLOODER,
		 sfd_status_drops(st, FLOODER, "budget"), sfd_status_drops(st, FLOODER, "ring"));
	ASSERT_TRUE(sfd_status_drops(st, FLOODER, "ring") > 0,
		    "uid 65534 did fill what it may of the ring");
out:
	if (paused)
		sfd_resume(&dm);
	if (flood > 0) {
		kill(flood, SIGKILL);
		waitpid(flood, NULL, 0);
	}
	if (victim > 0) {
		kill(victim, SIGKILL);
		waitpid(victim, NULL, 0);
	}
	if (go_flood >= 0)
		close(go_flood);
	if (go_victim >= 0)
		close(go_victim);
	free(st);
}
