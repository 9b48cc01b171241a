// SPDX-License-Identifier: GPL-2.0-only
/*
 * Podman's default profile enforced: under `sfrun --profile` (a private
 * sfilterd) busybox runs a shell and ls, and a call the profile refuses
 * (add_key: not in its allowlist, so its default, ERRNO(ENOSYS)) is
 * refused with ENOSYS before it runs, through the gate sfrun installs; and
 * without the gate (--no-gate) stopped as the tier can stop it: killed on
 * the tracepoint tier (the default fallback), refused with ENOSYS on the
 * lsm tier, where creating the key meets the key_alloc hook. sfrun names the tier once, from the
 * daemon's attach note, as sfctl attach --profile does. `sfctl compile`
 * writes the library's bytes; sf_attach_profile() attaches in-process.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "daemon.h"
#include "wstatus.h"
#include "profile.h"
#include "sfclient.h"
#include "c2e.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define PODMAN "/usr/share/containers/seccomp.json"
#define PROBE_ARG "--sf-profile-probe"
#define KEY_SPEC_PROCESS_KEYRING (-2)

/*
 * The exec'd half: the test binary started under sfrun as "sftest
 * PROBE_ARG" says it is alive, calls add_key and reports what it got,
 * if it lives.
 */
__attribute__((constructor)) static void profile_probe(int argc, char **argv)
{
	char msg[80];
	long r;
	int n;

	if (argc < 2 || strcmp(argv[1], PROBE_ARG) != 0)
		return;
	n = snprintf(msg, sizeof(msg), "alive\n");
	if (write(1, msg, n) != n)
		_exit(3);
	r = syscall(SYS_add_key, "user", "sftest-profile", "x", 1, KEY_SPEC_PROCESS_KEYRING);
	n = snprintf(msg, sizeof(msg), "add_key=%ld errno=%d\n", r, r < 0 ? errno : 0);
	if (write(1, msg, n) != n)
		_exit(3);
	_exit(0);
}

static bool have_profile(void)
{
	if (access(PODMAN, R_OK) == 0)
		return true;
	test_skip("%s: not readable (package golang-github-containers-common)", PODMAN);
	return false;
}

static bool start(struct sfd *dm, char *sfrun, size_t size)
{
	if (!have_profile())
		return false;
	if (!sfd_need_bin("sfrun", "SF_SFRUN", sfrun, size))
		return false;
	return sfd_start_sfilterd(dm, false);
}

TEST(busybox_runs_a_shell_and_ls_under_sfrun_with_podmans_default_profile)
{
	const char *argv[] = { NULL, "--profile", PODMAN, "--", "/bin/busybox", "sh", "-c",
			       "echo ok; ls /", NULL };
	char sfrun[PATH_MAX], out[8192], ws[64];
	SFD_AUTO;
	int st;

	if (access("/bin/busybox", X_OK) != 0) {
		test_skip("no /bin/busybox (package busybox-static)");
		return;
	}
	if (!start(&dm, sfrun, sizeof(sfrun)))
		return;
	argv[0] = sfrun;
	st = sfd_run(argv, true, 60, out, sizeof(out));
	test_log("%s", out);
	ASSERT_TRUE(wstatus_exited_ok(st), wstatus_str(st, ws, sizeof(ws)));
	ASSERT_TRUE(strstr(out, "ok\n") != NULL, "echo ok");
	ASSERT_TRUE(strstr(out, "proc\n") || strstr(out, "proc "), "ls / lists /proc");
	ASSERT_TRUE(strstr(out, "sfrun: tier ") || strstr(out, "sfrun: gate: installed: "),
		    "the tier's behaviour, or the gate, said once");
}

/* The probe under sfrun --profile PODMAN (with --no-gate unless gate):
 * its wait status, or -1 when the test could not start. */
static int run_probe(struct sfd *dm, bool gate, char *out, size_t size)
{
	char sfrun[PATH_MAX], self[PATH_MAX];
	const char *argv[8] = { sfrun };
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int st, k = 1;

	if (!ASSERT_GE(n, 1, "readlink /proc/self/exe") || !start(dm, sfrun, sizeof(sfrun)))
		return -1;
	self[n] = '\0';
	if (!gate)
		argv[k++] = "--no-gate";
	argv[k++] = "--profile";
	argv[k++] = PODMAN;
	argv[k++] = "--";
	argv[k++] = self;
	argv[k++] = PROBE_ARG;
	st = sfd_run(argv, true, 60, out, size);
	test_log("%s", out);
	ASSERT_TRUE(strstr(out, "alive\n") != NULL, "the probe started under the profile");
	return st;
}

/* Without the gate (--no-gate): as the tier can stop it. */
TEST(a_call_podmans_profile_refuses_is_killed_on_tracepoint_and_refused_on_lsm)
{
	char out[8192], ws[64];
	SFD_AUTO;
	int st = run_probe(&dm, false, out, sizeof(out));

	if (st == -1)
		return;
	if (!strstr(out, "sfrun: tier lsm: the profile's ERRNO rules")) {
		ASSERT_TRUE(strstr(out, "sfrun: tier tracepoint: the profile's ERRNO rules (") &&
			    strstr(out, "and the default) kill instead (use --fallback log"),
			    "tracepoint tier said");
		ASSERT_TRUE(wstatus_killed_by(st, SIGKILL), wstatus_str(st, ws, sizeof(ws)));
		ASSERT_TRUE(strstr(out, "add_key=") == NULL, "killed before reporting");
	} else {
		ASSERT_TRUE(wstatus_exited_ok(st), wstatus_str(st, ws, sizeof(ws)));
		ASSERT_TRUE(strstr(out, "add_key=-1 errno=38\n") != NULL,
			    "ENOSYS, the profile's default errno");
	}
}

/* With the gate (sfrun's default): ENOSYS on either tier, before the
 * call runs, judged by sfilterd. */
TEST(a_call_podmans_profile_refuses_gets_its_errno_through_the_gate_on_either_tier)
{
	char out[8192], ws[64];
	SFD_AUTO;
	int st = run_probe(&dm, true, out, sizeof(out));

	if (st == -1)
		return;
	ASSERT_TRUE(strstr(out, "sfrun: gate: installed: ") != NULL, "sfrun says the gate is in");
	ASSERT_TRUE(wstatus_exited_ok(st), wstatus_str(st, ws, sizeof(ws)));
	ASSERT_TRUE(strstr(out, "add_key=-1 errno=38\n") != NULL,
		    "ENOSYS, the profile's default errno");
}

TEST(sfctl_compile_writes_the_filter_the_library_compiles)
{
	struct sf_profile_opts o = { .caps = "CAP_SYS_ADMIN" };
	char sfctl[PATH_MAX], out[1024], path[] = "/tmp/sftest-compile-XXXXXX";
	const char *argv[] = { NULL, "compile", "--profile", PODMAN, "--caps", "CAP_SYS_ADMIN",
			       "-o", path, NULL };
	struct sf_profile p;
	struct sf_profile_error e;
	struct sock_filter *got = NULL;
	size_t len = 0;
	struct c2e_error ce = { 0 };
	int fd, st;

	if (!have_profile())
		return;
	if (!sfd_need_bin("sfctl", "SF_SFCTL", sfctl, sizeof(sfctl)))
		return;
	argv[0] = sfctl;
	fd = mkstemp(path);
	close(fd);
	st = sfd_run(argv, true, 60, out, sizeof(out));
	ASSERT_EQ(st, 0, out);
	if (ASSERT_OK(sf_profile_compile_file(PODMAN, &o, &p, &e), e.msg) &&
	    ASSERT_OK(c2e_load_file(path, &got, &len, &ce), "read OUT.bpf")) {
		ASSERT_EQ(len, p.len, "length");
		ASSERT_TRUE(len == p.len && !memcmp(got, p.insns, len * sizeof(*got)), "bytes");
	}
	free(got);
	sf_profile_free(&p);
	unlink(path);
}

/* A process that waits to be killed. */
static pid_t sleeper(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

TEST(sfctl_attach_profile_to_a_pid_judges_its_caps_and_says_the_tier)
{
	char sfctl[PATH_MAX], pid_s[16], out[4096], ws[64];
	const char *argv[] = { NULL, "attach", "--pid", pid_s, "--profile", PODMAN, NULL };
	SFD_AUTO;
	pid_t pid;
	int st;

	if (!have_profile())
		return;
	if (!sfd_need_bin("sfctl", "SF_SFCTL", sfctl, sizeof(sfctl)))
		return;
	if (!sfd_start_sfilterd(&dm, false))
		return;
	pid = sleeper();
	if (!ASSERT_GE(pid, 1, "fork"))
		return;
	argv[0] = sfctl;
	snprintf(pid_s, sizeof(pid_s), "%d", (int)pid);
	st = sfd_run(argv, true, 60, out, sizeof(out));
	test_log("%s", out);
	ASSERT_TRUE(wstatus_exited_ok(st), wstatus_str(st, ws, sizeof(ws)));
	ASSERT_TRUE(strstr(out, "attached") != NULL, "the daemon's note");
	ASSERT_TRUE(strstr(out, "sfctl: tier ") != NULL, "the tier's behaviour, said once");
	ASSERT_TRUE(sfd_ps_lists(dm.sock, pid, 0), "the process is confined");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

TEST(sf_attach_profile_attaches_a_profile_and_names_the_path_of_an_error)
{
	char bad[] = "/tmp/sftest-badprof-XXXXXX";
	SFD_AUTO;
	pid_t pid;
	int fd, st;

	if (!have_profile() || !sfd_start_sfilterd(&dm, false))
		return;
	fd = mkstemp(bad);
	if (!ASSERT_GE(fd, 0, "mkstemp"))
		return;
	ASSERT_EQ(write(fd, "{\"defaultAction\":\"SCMP_ACT_BOO\"}", 32), 32, "write");
	close(fd);
	pid = fork();
	if (pid == 0) {
		/* Every check is an exit code: the child is confined after. */
		if (sf_attach_profile("/nonexistent/seccomp.json", 0) != -1 || errno != ENOENT)
			_exit(10);
		if (sf_attach_profile(bad, 0) != -1 || errno != EINVAL ||
		    !strstr(sf_last_error(), "defaultAction: unknown action \"SCMP_ACT_BOO\""))
			_exit(11);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || sf_attach_profile(PODMAN, 0) != 0)
			_exit(12);
		if (!strstr(sf_last_error(), "attached to thread"))
			_exit(13);
		_exit(getppid() > 0 ? 0 : 14);
	}
	waitpid(pid, &st, 0);
	ASSERT_EQ(st, 0, "child's checks (exit 10-14 names the failed one)");
	unlink(bad);
}
