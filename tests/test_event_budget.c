// SPDX-License-Identifier: GPL-2.0-only
/*
 * Whose budget an event is charged to (sfilterd --event-rate): the login
 * user. uid 65534 makes a user namespace, which root maps onto 65,536
 * subuids (as newuidmap maps a user's /etc/subuid range), becomes subuid
 * 100005 there, makes a second namespace inside the first and, from it,
 * logs getppid 200 times under a budget of 10 events. Its events carry
 * the subuid as their uid and 65534 as their account, and what was
 * dropped is counted for 65534, not for the subuid: a user's subuids and
 * nested namespaces are not budgets of their own.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "daemon.h"
#include "probe.h"
#include "progs.h"
#include "sfclient.h"
#include "proto.h"

#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

SFD_TIER_INDEPENDENT

#define OWNER   65534
#define SUBUID0 100000
#define CALLS   200

static bool write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	bool ok = fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text);

	if (fd >= 0)
		close(fd);
	return ok;
}

/* The child: nobody, a user namespace that the parent maps (step 1 on
 * ready, then it waits on go), uid 5 there, a second namespace mapping
 * uid 0 to it, and there a filter that logs getppid. The step that failed
 * as exit status. */
static int nested_logger(int ready, int go)
{
	static struct sock_filter log_getppid[4];
	struct sock_fprog prog = progs_log_on(log_getppid, 4, SYS_getppid);
	char c;
	int i;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (setgroups(0, NULL) || setgid(OWNER) || setuid(OWNER))
		return 10;
	if (unshare(CLONE_NEWUSER) || write(ready, "u", 1) != 1 || read(go, &c, 1) != 1)
		return 11;
	/* Changing its ids made it undumpable, and its /proc files root's. */
	if (setresgid(5, 5, 5) || setresuid(5, 5, 5) || prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
		return 12;
	if (unshare(CLONE_NEWUSER))
		return 13;
	if (!write_file("/proc/self/setgroups", "deny") ||
	    !write_file("/proc/self/uid_map", "0 5 1") ||
	    !write_file("/proc/self/gid_map", "0 5 1"))
		return 14;
	/* The BPF side's budget is under test: its events, not the gate's. */
	setenv("SFILTER_GATE", "0", 1);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || sf_attach(&prog, 0))
		return 15;
	for (i = 0; i < CALLS; i++)
		syscall(SYS_getppid);
	return 0;
}

TEST(events_of_a_users_subuids_and_nested_user_namespaces_are_charged_to_that_user)
{
	/* An event per call: the logger's calls are all one key. */
	static const char *const args[] = { "--event-rate", "10", "--event-burst", "10",
					    "--repeat-interval", "0", NULL };
	char *st = calloc(1, SF_PROTO_MAX_MSG);
	char why[160], map[64], path[64], needle[64];
	int ready[2] = { -1, -1 }, go[2] = { -1, -1 }, ws = -1;
	pid_t p = -1;
	char c;
	SFD_AUTO;

	if (!st || !TEST_REQUIRE(probe_unpriv_userns(why, sizeof(why)), NULL, why) ||
	    !sfd_start_for_users(&dm, args) ||
	    !ASSERT_OK(pipe2(ready, O_CLOEXEC), "pipe") || !ASSERT_OK(pipe2(go, O_CLOEXEC), "pipe"))
		goto out;
	fflush(stdout);
	p = fork();
	if (p == 0)
		_exit(nested_logger(ready[1], go[0]));
	if (!ASSERT_TRUE(p > 0 && read(ready[0], &c, 1) == 1, "the child made its namespace"))
		goto out;
	snprintf(map, sizeof(map), "0 %d 65536", SUBUID0);
	snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)p);
	ASSERT_TRUE(write_file(path, map), "root maps its subuids");
	snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)p);
	ASSERT_TRUE(write_file(path, map), "and subgids");
	if (!ASSERT_EQ(write(go[1], "g", 1), 1, "go"))
		goto out;
	waitpid(p, &ws, 0);
	p = -1;
	if (!ASSERT_TRUE(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "the nested logger ran")) {
		test_log("exit status %d\n", WIFEXITED(ws) ? WEXITSTATUS(ws) : -1);
		goto out;
	}
	snprintf(needle, sizeof(needle), "\"uid\":%d,", SUBUID0 + 5);
	ASSERT_TRUE(sfd_log_wait(&dm, needle), "its events carry the subuid");
	snprintf(needle, sizeof(needle), "\"account\":%d,", OWNER);
	ASSERT_TRUE(sfd_log_wait(&dm, needle), "and the user who made the namespaces");
	if (!ASSERT_EQ(sfd_status(&dm, st), 0, "STATUS"))
		goto out;
	test_log("uid %d: %lld over its budget; uid %d: %lld\n", OWNER,
		 sfd_status_drops(st, OWNER, "budget"), SUBUID0 + 5,
		 sfd_status_drops(st, SUBUID0 + 5, "budget"));
	ASSERT_TRUE(sfd_status_drops(st, OWNER, "budget") >= CALLS - 20,
		    "what went over the budget is counted for uid 65534");
	ASSERT_EQ(sfd_status_drops(st, SUBUID0 + 5, "budget"), -1, "and not for the subuid");
out:
	if (p > 0) {
		kill(p, SIGKILL);
		waitpid(p, NULL, 0);
	}
	for (int i = 0; i < 2; i++) {
		if (ready[i] >= 0)
			close(ready[i]);
		if (go[i] >= 0)
			close(go[i]);
	}
	free(st);
}
