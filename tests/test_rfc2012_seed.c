// SPDX-License-Identifier: GPL-2.0-only
/*
 * The 2012 proposal's own example program, unmodified but for what x86-64
 * lacks, run under `sfrun --prctl` through a real sfilterd; and an
 * unmodified self-sandboxing program (bubblewrap's --seccomp) under
 * `sfrun --take-seccomp`.
 *
 * The examples are built from the seed patch by tests/seed/build-examples.sh
 * (run by tests/run-all.sh into build/seed, copied to /sf/seed in the
 * guest); a missing patch or multilib is a SKIP naming it.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "daemon.h"
#include "probe.h"
#include "suid.h"
#include "wstatus.h"

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The seed directory beside the runner: build/seed or /sf/seed. */
static bool seed_dir(char *out, size_t size)
{
	char exe[PATH_MAX], *d;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return false;
	exe[n] = '\0';
	d = dirname(exe);
	snprintf(out, size, "%s/../seed", d);
	if (access(out, R_OK) == 0)
		return true;
	snprintf(out, size, "%s/seed", d);
	return access(out, R_OK) == 0;
}

/* The example of bits (64 or 32) with suffix, or a skip saying why not. */
static bool example(int bits, const char *suffix, char *out, size_t size)
{
	char dir[PATH_MAX - 64], skip[PATH_MAX], why[256] = "";
	FILE *f;

	if (!seed_dir(dir, sizeof(dir))) {
		test_skip("no build/seed beside the runner: tests/seed/build-examples.sh "
			  "builds it (make test does)");
		return false;
	}
	snprintf(skip, sizeof(skip), "%s/SKIP-%d", dir, bits);
	f = fopen(skip, "r");
	if (f) {
		if (!fgets(why, sizeof(why), f))
			why[0] = '\0';
		fclose(f);
		why[strcspn(why, "\n")] = '\0';
		test_skip("%s", why);
		return false;
	}
	snprintf(out, size, "%s/example%d%s", dir, bits, suffix);
	return ASSERT_OK(access(out, X_OK), "the example was built");
}

/* printf 'Ada\n' | sfrun --prctl -- EXAMPLE: its wait status, and what
 * it printed (NUL bytes dropped: payload() writes each string's NUL), by
 * way of a file in dir. */
static int run_example(const char *sfrun, const char *ex, const char *dir,
		       char *out, size_t size)
{
	char cmd[4 * PATH_MAX];
	const char *argv[] = { "/bin/bash", "-c", cmd, NULL };

	snprintf(cmd, sizeof(cmd), "printf 'Ada\\n' | %s --prctl -- %s > %s/out; rc=$?; "
		 "tr -d '\\000' < %s/out; exit $rc", sfrun, ex, dir, dir);
	return sfd_run(argv, true, test_is_emulated() ? 300 : 30, out, size);
}

static void seed_example(int bits)
{
	SFD_AUTO;
	char sfrun[PATH_MAX], ex[PATH_MAX], out[4096];
	int st;

	if (!example(bits, "", ex, sizeof(ex)))
		return;
	if (!sfd_need_bin("sfrun", "SF_SFRUN", sfrun, sizeof(sfrun)))
		return;
	if (!sfd_start_sfilterd(&dm, false))
		return;
	st = run_example(sfrun, ex, dm.dir, out, sizeof(out));
	test_log("example%d: %s\n", bits, out);
	ASSERT_TRUE(wstatus_exited_ok(st), "the example exits 0");
	ASSERT_STREQ(out, "OHAI! WHAT IS YOUR NAME? HELLO, Ada\n", "what it prints");

	if (example(bits, "-getpid", ex, sizeof(ex))) {
		st = run_example(sfrun, ex, dm.dir, out, sizeof(out));
		ASSERT_EQ(WIFEXITED(st) ? WEXITSTATUS(st) : -1, 128 + 9,
			  "one extra getpid() after the install: killed (SIGKILL)");
	}
	if (example(bits, "-fd3", ex, sizeof(ex))) {
		st = run_example(sfrun, ex, dm.dir, out, sizeof(out));
		ASSERT_EQ(WIFEXITED(st) ? WEXITSTATUS(st) : -1, 128 + 9,
			  "a write to fd 3: killed (SIGKILL)");
	}
	ASSERT_TRUE(sfd_log_wait(&dm, "\"syscall\":\"getpid\""),
		    "the daemon logged the blocked getpid");
}

TEST(rfc2012_seed_example_runs_unmodified_under_sfrun_prctl_on_x86_64)
{
	seed_example(64);
}

TEST(rfc2012_seed_example_runs_unmodified_under_sfrun_prctl_as_an_i386_program)
{
	char why[160];

	if (!TEST_REQUIRE(probe_int80(why, sizeof(why)), NULL, why))
		return;
	seed_example(32);
}

/* ---- today's seccomp calls, taken over ------------------------------------ */

TEST(take_seccomp_enforces_bubblewraps_own_seccomp_filter_in_sfilter)
{
	/* Kills mkdir (83) on x86-64, allows the rest. */
	static const char filter[] =
		"ld [4]\n"
		"jne #0xc000003e, kill\n"
		"ld [0]\n"
		"jeq #83, kill\n"
		"ret #0x7fff0000\n"
		"kill: ret #0x80000000\n";
	SFD_AUTO;
	char sfrun[PATH_MAX], c2e[PATH_MAX], cmd[4 * PATH_MAX], out[4096], src[PATH_MAX],
	     bpf[PATH_MAX];
	const char *argv[] = { "/bin/bash", "-c", cmd, NULL };
	FILE *f;
	int st;

	if (access("/usr/bin/bwrap", X_OK) != 0) {
		test_skip("no /usr/bin/bwrap (Debian's bubblewrap)");
		return;
	}
	if (!sfd_find_bin("sfrun", "SF_SFRUN", sfrun, sizeof(sfrun)) ||
	    !sfd_find_bin("classic2ebpf", "SF_C2E", c2e, sizeof(c2e))) {
		test_skip("no sfrun or classic2ebpf beside the test runner");
		return;
	}
	if (!sfd_start_sfilterd(&dm, false))
		return;
	snprintf(src, sizeof(src), "%s/deny-mkdir.s", dm.dir);
	snprintf(bpf, sizeof(bpf), "%s/deny-mkdir.bpf", dm.dir);
	f = fopen(src, "w");
	if (!ASSERT_TRUE(f != NULL, "write the filter source"))
		return;
	fputs(filter, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s asm %s -o %s", c2e, src, bpf);
	if (!ASSERT_TRUE(wstatus_exited_ok(sfd_run(argv, true, 60, out, sizeof(out))),
			 "classic2ebpf asm"))
		return;

	/* bwrap itself first: it pivots into a new root, which a root that
	 * is the initramfs (the guest's) does not allow. */
	snprintf(cmd, sizeof(cmd), "/usr/bin/bwrap --ro-bind / / --dev /dev --proc /proc "
		 "-- /bin/true");
	st = sfd_run(argv, true, 120, out, sizeof(out));
	if (!wstatus_exited_ok(st) && strstr(out, "pivot_root")) {
		out[strcspn(out, "\n")] = '\0';
		test_skip("bwrap cannot pivot_root here (a root that is the initramfs): %s", out);
		return;
	}
	snprintf(cmd, sizeof(cmd), "%s --take-seccomp -- /usr/bin/bwrap --ro-bind / / "
		 "--dev /dev --proc /proc --seccomp 3 -- /bin/echo allowed 3<%s", sfrun, bpf);
	st = sfd_run(argv, true, 120, out, sizeof(out));
	ASSERT_TRUE(wstatus_exited_ok(st) && strstr(out, "allowed"),
		    "an allowed command runs");
	test_log("%s\n", out);
	snprintf(cmd, sizeof(cmd), "%s --take-seccomp -- /usr/bin/bwrap --ro-bind / / "
		 "--dev /dev --proc /proc --seccomp 3 -- /bin/mkdir %s/x 3<%s; exit $?",
		 sfrun, dm.dir, bpf);
	st = sfd_run(argv, true, 120, out, sizeof(out));
	ASSERT_EQ(WIFEXITED(st) ? WEXITSTATUS(st) : -1, 128 + 9, "mkdir is killed");
	ASSERT_TRUE(sfd_log_wait(&dm, "\"syscall\":\"mkdir\""),
		    "the daemon logged the kill with the filter's id");
}

/*
 * A program that never met the interposer, started by CMD (a static one,
 * or one run with LD_PRELOAD removed): its prctl(36, &prog) reaches the
 * kernel, which would read it as PR_SET_CHILD_SUBREAPER and return 0, and
 * the program would run unconfined believing itself confined. Under
 * sfrun --prctl it fails with EINVAL instead, while prctl(36, 1), the
 * subreaper call as its users make it, still works (sf-prctl36's exit
 * status 0; 1 is the silent success). As root, and as uid 65534, for whom
 * sfrun sets no_new_privs to install its kernel filter. Bash, because the
 * shell in the middle must be dynamically linked, and the guest's /bin/sh
 * is a static busybox.
 */
static void nested_prctl36(bool nobody)
{
	char sfrun[PATH_MAX], prog[PATH_MAX], cmd[4 * PATH_MAX], out[256] = "";
	const char *argv[] = { "/bin/bash", "-c", cmd, NULL };
	int p[2], st = -1;
	ssize_t n;
	pid_t pid;

	if (!sfd_find_test_prog("sf-prctl36", prog, sizeof(prog)))
		return;
	if (!sfd_find_bin("sfrun", "SF_SFRUN", sfrun, sizeof(sfrun))) {
		test_fail(__FILE__, __LINE__, "no sfrun beside the runner");
		return;
	}
	/* A static grandchild, then one started with LD_PRELOAD removed. */
	snprintf(cmd, sizeof(cmd), "%s --prctl -- /bin/bash -c '%s; a=$?; "
		 "env -u LD_PRELOAD %s; echo \"$a $?\"'", sfrun, prog, prog);
	if (!ASSERT_OK(pipe(p), "pipe"))
		return;
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		if (nobody && !suid_become_nobody())
			_exit(126);
		st = sfd_run(argv, true, test_is_emulated() ? 120 : 20, out, sizeof(out));
		if (write(p[1], out, strlen(out)) < 0)
			_exit(126);
		_exit(wstatus_exited_ok(st) ? 0 : 1);
	}
	close(p[1]);
	n = read(p[0], out, sizeof(out) - 1);
	out[n > 0 ? n : 0] = '\0';
	close(p[0]);
	waitpid(pid, &st, 0);
	test_log("%s: %s", nobody ? "uid 65534" : "root", out);
	ASSERT_TRUE(wstatus_exited_ok(st), "sfrun and its command exit 0");
	ASSERT_STREQ(out, "0 0\n", "both got EINVAL, then made themselves subreapers");
}

TEST(sfrun_prctl_fails_a_2012_attach_that_misses_the_interposer_in_nested_programs)
{
	nested_prctl36(false);
	nested_prctl36(true);
}
