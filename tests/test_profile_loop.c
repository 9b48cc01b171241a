// SPDX-License-Identifier: GPL-2.0-only
/*
 * The loop users ask for, end to end through a private sfilterd and the
 * real tools: run a workload with every call logged, learn an OCI profile
 * from the log (sfctl policy-from-log --format oci), compile it (sfctl
 * compile), enforce it (sfrun --profile) on the same workload, which runs
 * without a kill, while a call it never made is killed; and a candidate
 * profile in shadow beside the enforced filter logs what it would deny.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "daemon.h"
#include "wstatus.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define WORKLOAD "echo ok; ls /"

struct tools {
	char sfctl[PATH_MAX], sfrun[PATH_MAX];
	char out[65536];
};

static bool start(struct sfd *dm, struct tools *t)
{
	if (!test_need_root(NULL))
		return false;
	if (access("/bin/busybox", X_OK) != 0) {
		test_skip("no /bin/busybox (package busybox-static)");
		return false;
	}
	if (!sfd_find_bin("sfctl", "SF_SFCTL", t->sfctl, sizeof(t->sfctl)) ||
	    !sfd_find_bin("sfrun", "SF_SFRUN", t->sfrun, sizeof(t->sfrun))) {
		test_skip("no sfctl or sfrun beside the test runner");
		return false;
	}
	return sfd_start_sfilterd(dm, false);
}

/* argv (NULL-terminated) into t->out; the wait status. */
static int run(struct tools *t, const char *const argv[])
{
	int st = sfd_run(argv, true, test_is_emulated() ? 300 : 60, t->out, sizeof(t->out));

	test_log("%s %s -> 0x%x: %s", argv[0], argv[1] ? argv[1] : "", st, t->out);
	return st;
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

TEST(a_profile_learned_from_the_log_runs_the_same_workload_without_a_kill)
{
	struct tools *t = calloc(1, sizeof(*t));
	char logall[PATH_MAX], prefix[PATH_MAX], json[PATH_MAX + 8], bpf[PATH_MAX + 8],
	     extra[PATH_MAX + 64];
	SFD_AUTO;
	int st;

	if (!t || !start(&dm, t))
		goto out;
	snprintf(logall, sizeof(logall), "%s/log-all.s", dm.dir);
	write_text(logall, "ret LOG\n");
	snprintf(prefix, sizeof(prefix), "%s/learned", dm.dir);
	snprintf(json, sizeof(json), "%s.json", prefix);
	snprintf(bpf, sizeof(bpf), "%s.bpf", prefix);

	/* 1. The workload with every call logged. */
	st = run(t, (const char *const[]){ t->sfrun, "--filter", logall, "--", "/bin/busybox",
					   "sh", "-c", WORKLOAD, NULL });
	if (!ASSERT_TRUE(wstatus_exited_ok(st) && strstr(t->out, "ok\n"), "the logged run"))
		goto out;
	ASSERT_TRUE(sfd_log_wait(&dm, "\"syscall\":\"exit_group\""), "its calls are in the log");
	/* 2. Learn, 3. compile. */
	st = run(t, (const char *const[]){ t->sfctl, "--socket", dm.sock, "policy-from-log",
					   "--default", "KILL_PROCESS", "--format", "oci",
					   "-o", prefix, NULL });
	if (!ASSERT_TRUE(wstatus_exited_ok(st), "policy-from-log --format oci"))
		goto out;
	st = run(t, (const char *const[]){ t->sfctl, "compile", "--profile", json, "-o", bpf,
					   NULL });
	if (!ASSERT_TRUE(wstatus_exited_ok(st), "sfctl compile reads the learned profile"))
		goto out;
	/* 4. Enforce: the same workload runs; one more call does not. */
	st = run(t, (const char *const[]){ t->sfrun, "--profile", json, "--", "/bin/busybox",
					   "sh", "-c", WORKLOAD, NULL });
	ASSERT_TRUE(wstatus_exited_ok(st) && strstr(t->out, "ok\n"),
		    "the workload runs under the learned profile");
	snprintf(extra, sizeof(extra), WORKLOAD "; mkdir %s/never", dm.dir);
	st = run(t, (const char *const[]){ t->sfrun, "--profile", json, "--", "/bin/busybox",
					   "sh", "-c", extra, NULL });
	ASSERT_FALSE(wstatus_exited_ok(st), "one more command (mkdir), with calls it never "
		     "made, is not allowed");
	ASSERT_TRUE(sfd_log_wait(&dm, "\"taken\":\"killed\""), "the kill is in the log");
out:
	free(t);
}

TEST(a_candidate_profile_in_shadow_logs_each_call_it_would_deny)
{
	static const char candidate[] =
		"{\"defaultAction\": \"SCMP_ACT_ALLOW\",\n"
		" \"syscalls\": [{\"names\": [\"getppid\"], \"action\": \"SCMP_ACT_ERRNO\","
		" \"errnoRet\": 1}]}\n";
	struct tools *t = calloc(1, sizeof(*t));
	char path[PATH_MAX], allow[PATH_MAX], spid[16], needle[64];
	int go[2] = { -1, -1 }, i, n = 4, st;
	pid_t pid = -1;
	SFD_AUTO;
	char c;

	if (!t || !start(&dm, t) || !ASSERT_OK(pipe(go), "pipe"))
		goto out;
	snprintf(path, sizeof(path), "%s/candidate.json", dm.dir);
	write_text(path, candidate);
	snprintf(allow, sizeof(allow), "%s/allow.s", dm.dir);
	write_text(allow, "ret ALLOW\n");
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(go[1]);
		while (read(go[0], &c, 1) == 1)
			if (syscall(SYS_getppid) != getppid())
				_exit(3);
		_exit(0);
	}
	close(go[0]);
	go[0] = -1;
	snprintf(spid, sizeof(spid), "%d", pid);
	st = run(t, (const char *const[]){ t->sfctl, "--socket", dm.sock, "attach", "--pid", spid,
					   "--filter", allow, NULL });
	ASSERT_TRUE(wstatus_exited_ok(st), "the enforced allow-all");
	st = run(t, (const char *const[]){ t->sfctl, "--socket", dm.sock, "attach", "--pid", spid,
					   "--profile", path, "--shadow", NULL });
	ASSERT_TRUE(wstatus_exited_ok(st), "the candidate profile, in shadow");
	for (i = 0; i < n; i++)
		if (write(go[1], "g", 1) != 1)
			break;
	close(go[1]);
	go[1] = -1;
	waitpid(pid, &st, 0);
	pid = -1;
	ASSERT_TRUE(wstatus_exited_ok(st), "the task lives and getppid returns its parent");
	snprintf(needle, sizeof(needle), "\"pid\":%s,", spid);
	for (i = 0; i < (test_is_emulated() ? 300 : 50); i++) {
		if (sfd_file_has(dm.log, "\"would\":\"ERRNO(1)\""))
			break;
		usleep(100000);
	}
	ASSERT_TRUE(sfd_file_has(dm.log, needle) &&
		    sfd_file_has(dm.log, "\"taken\":\"shadow\"") &&
		    sfd_file_has(dm.log, "\"would\":\"ERRNO(1)\""),
		    "each getppid is logged as what the candidate would do");
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	if (go[1] >= 0)
		close(go[1]);
	free(t);
}
