// SPDX-License-Identifier: GPL-2.0-only
/*
 * 2012-interface filters share everything else with seccomp_data ones:
 * an admin attaches one with `sfctl attach --abi rfc2012`, `sfctl show`
 * disassembles it with register names, a restarted daemon adopts it from
 * the pins and it stays in force, replace is judged by its ABI (a bad
 * program loses nothing in force), and detach ends it.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "daemon.h"
#include "wstatus.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define NR_GETPPID 110

/* Blocks getppid(0xdead), allows the rest. */
static const char block_dead[] =
	"ld [orig_rax]\n"
	"jne #110, ok\n"
	"ld [rdi]\n"
	"jeq #0xdead, block\n"
	"ok: ld len\n"
	"ret a\n"
	"block: ret #0\n";
static const char allow_all[] = "ld len\nret a\n";
static const char past_the_end[] = "ld [216]\nret a\n";

struct probe {
	atomic_int done; /* calls made and survived */
};

/* A child that makes getppid(0xdead) once per byte it reads. */
static pid_t child(struct probe *pr, int *go)
{
	int p[2];
	pid_t pid;
	char b;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(p[1]);
		while (read(p[0], &b, 1) == 1) {
			syscall(NR_GETPPID, 0xdead, 0, 0, 0, 0, 0);
			atomic_fetch_add(&pr->done, 1);
		}
		_exit(0);
	}
	close(p[0]);
	*go = p[1];
	return pid;
}

/* One call; true when the child survived it. */
static bool call_survives(struct probe *pr, int go, pid_t pid)
{
	int before = atomic_load(&pr->done), i;
	siginfo_t si;

	if (write(go, "c", 1) != 1)
		return false;
	for (i = 0; i < 20000; i++) {
		if (atomic_load(&pr->done) > before)
			return true;
		si.si_pid = 0; /* dead: false, and left for the caller to reap */
		if (waitid(P_PID, pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid)
			return false;
		usleep(1000);
	}
	return false;
}

static void write_file(const char *dir, const char *name, const char *text,
		       char *path, size_t size)
{
	FILE *f;

	snprintf(path, size, "%s/%s", dir, name);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* sfctl ARGS... with the test daemon's socket; the wait status. */
static int sfctl(const struct sfd *dm, const char *sfctl_bin, char *out, size_t size,
		 const char *a1, const char *a2, const char *a3, const char *a4,
		 const char *a5, const char *a6, const char *a7)
{
	const char *argv[] = { sfctl_bin, "--socket", dm->sock, a1, a2, a3, a4, a5, a6, a7, NULL };

	return sfd_run(argv, true, test_is_emulated() ? 300 : 30, out, size);
}

TEST(rfc2012_filters_attach_show_survive_a_restart_replace_and_detach_through_sfctl)
{
	SFD_AUTO;
	char bin[PATH_MAX], blk[PATH_MAX], all[PATH_MAX], bad[PATH_MAX], pidbuf[16],
	     out[8192], *id_at;
	struct probe *pr = mmap(NULL, 2 * sizeof(*pr), PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char id[16], pid2buf[16];
	int go = -1, go2 = -1, st;
	pid_t pid, pid2 = 0;

	if (!sfd_need_bin("sfctl", "SF_SFCTL", bin, sizeof(bin)))
		return;
	if (!sfd_start_sfilterd(&dm, true))
		return;
	write_file(dm.dir, "block.s", block_dead, blk, sizeof(blk));
	write_file(dm.dir, "all.s", allow_all, all, sizeof(all));
	write_file(dm.dir, "bad.s", past_the_end, bad, sizeof(bad));
	pid = child(pr, &go);
	if (!ASSERT_GE(pid, 1, "fork"))
		return;
	snprintf(pidbuf, sizeof(pidbuf), "%d", pid);
	ASSERT_TRUE(call_survives(pr, go, pid), "unconfined, getppid(0xdead) runs");

	st = sfctl(&dm, bin, out, sizeof(out), "attach", "--pid", pidbuf, "--filter", blk,
		   "--abi", "rfc2012");
	if (!ASSERT_TRUE(wstatus_exited_ok(st), "sfctl attach --abi rfc2012"))
		goto out;
	id_at = strstr(out, "filter ");
	snprintf(id, sizeof(id), "%ld", id_at ? strtol(id_at + 7, NULL, 10) : 0L);
	test_log("attach: %s", out);

	st = sfctl(&dm, bin, out, sizeof(out), "show", pidbuf, NULL, NULL, NULL, NULL, NULL);
	ASSERT_TRUE(wstatus_exited_ok(st) && strstr(out, "over rfc2012") &&
		    strstr(out, "ld [orig_rax]") && strstr(out, "ld [rdi]") &&
		    strstr(out, "; block"),
		    "show names the ABI and disassembles with register names");
	test_log("show: %s", out);

	/* A second task with the same filter: the pins keep it in force
	 * across a restart. */
	pid2 = child(&pr[1], &go2);
	snprintf(pid2buf, sizeof(pid2buf), "%d", pid2);
	st = sfctl(&dm, bin, out, sizeof(out), "attach", "--pid", pid2buf, "--filter", blk,
		   "--abi", "rfc2012");
	ASSERT_TRUE(wstatus_exited_ok(st), "attach to a second task");
	sfd_signal(&dm, SIGTERM);
	if (!ASSERT_TRUE(sfd_restart(&dm), "restart on the same pins"))
		goto out;
	ASSERT_FALSE(call_survives(&pr[1], go2, pid2), "after the restart the filter still blocks");
	waitpid(pid2, &st, 0);
	ASSERT_TRUE(wstatus_killed_by(st, SIGKILL), "by SIGKILL");
	pid2 = 0;
	st = sfctl(&dm, bin, out, sizeof(out), "replace", id, "--filter", bad, "--abi",
		   "rfc2012", NULL);
	ASSERT_FALSE(wstatus_exited_ok(st), "a replacement loading past the 216 bytes is refused");
	ASSERT_TRUE(strstr(out, "216") != NULL, "and the message says why");
	test_log("bad replace: %s", out);

	/* The adopted filter, replaced. */
	st = sfctl(&dm, bin, out, sizeof(out), "replace", id, "--filter", all, "--abi",
		   "rfc2012", NULL);
	ASSERT_TRUE(wstatus_exited_ok(st), "replace with an allow-all 2012 filter");
	ASSERT_TRUE(call_survives(pr, go, pid), "after the replace, getppid(0xdead) runs");
	st = sfctl(&dm, bin, out, sizeof(out), "replace", id, "--filter", blk, "--abi",
		   "rfc2012", NULL);
	ASSERT_TRUE(wstatus_exited_ok(st), "replace back with the blocking one");
	st = sfctl(&dm, bin, out, sizeof(out), "detach", id, NULL, NULL, NULL, NULL, NULL);
	ASSERT_TRUE(wstatus_exited_ok(st), "detach");
	ASSERT_TRUE(call_survives(pr, go, pid), "after detach, getppid(0xdead) runs");
	st = sfctl(&dm, bin, out, sizeof(out), "attach", "--pid", pidbuf, "--filter", blk,
		   "--abi", "rfc2012");
	ASSERT_TRUE(wstatus_exited_ok(st), "attach again");
	ASSERT_FALSE(call_survives(pr, go, pid), "and getppid(0xdead) is blocked");
	waitpid(pid, &st, 0);
	ASSERT_TRUE(wstatus_killed_by(st, SIGKILL), "by SIGKILL");
	ASSERT_TRUE(sfd_log_wait(&dm, "\"abi\":\"rfc2012\""), "the event names the ABI");
	pid = 0;
out:
	close(go);
	close(go2);
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	if (pid2 > 0) {
		kill(pid2, SIGKILL);
		waitpid(pid2, NULL, 0);
	}
	munmap(pr, 2 * sizeof(*pr));
}
