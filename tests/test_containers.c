// SPDX-License-Identifier: GPL-2.0-only
/*
 * Containers, end to end: the real runc (and crun, where the host's cgroup
 * layout lets it run) starts a busybox container whose config.json has
 * sfilter-oci-hook as its createRuntime hook, and sfilterd confines the
 * workload with the profile the annotations name (from the bundle's
 * profiles/, the hook's --profile-dir). What a user of the runtime sees
 * is what is checked: the workload's output, the runtime's exit status
 * (137 for a workload the filter killed), a container that never starts
 * when its profile is broken, and a process `runc exec` starts in a
 * confined container confined too (the filter is the container's
 * cgroup's), as the runtime's own seccomp filter would confine it.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "daemon.h"
#include "oci.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define DENY(name) \
	"{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"" name \
	"\"], \"action\": \"SCMP_ACT_KILL_PROCESS\"}]}\n"
#define BROKEN \
	"{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"uname\"], " \
	"\"action\": \"SCMP_ACT_NOPE\"}]}\n"

/* Everything a container test needs: the daemon, the runtime, busybox,
 * the hook and the bundle. */
struct ctr {
	struct sfd dm;
	struct oci_bundle b;
	char runtime[256], busybox[256], hook[4096], env[200], profiles[300], out[8192];
};

static int patience(void)
{
	return test_is_emulated() ? 600 : 60;
}

/* The parts that are not the bundle; false with a SKIP or a FAIL. */
static bool ctr_tools(struct ctr *c, const char *runtime)
{
	char why[256];

	if (!oci_find_runtime(runtime, c->runtime, sizeof(c->runtime))) {
		test_skip("%s is not installed", runtime);
		return false;
	}
	if (!oci_find_busybox(c->busybox, sizeof(c->busybox), why, sizeof(why))) {
		test_skip("%s", why);
		return false;
	}
	if (!sfd_find_bin("sfilter-oci-hook", "SF_OCI_HOOK", c->hook, sizeof(c->hook))) {
		test_fail(__FILE__, __LINE__, "no sfilter-oci-hook beside the test runner");
		return false;
	}
	return true;
}

/* A bundle running argv with the hook and, when profile is not NULL, a
 * profile file of that text in profiles/ named by io.sfilter.profile. */
static bool ctr_bundle(struct ctr *c, const char *const *argv, const char *profile)
{
	const char *env[] = { c->env, NULL };
	const char *args[] = { "--profile-dir", c->profiles, NULL };
	char path[512];

	if (!oci_bundle_make(&c->b, c->runtime, c->busybox, argv))
		return false;
	snprintf(c->env, sizeof(c->env), "SFILTER_SOCKET=%s", c->dm.sock);
	snprintf(c->profiles, sizeof(c->profiles), "%s/profiles", c->b.dir);
	if (!ASSERT_OK(mkdir(c->profiles, 0755) ? -errno : 0, "mkdir profiles") ||
	    !oci_add_hook(&c->b, c->hook, args, env))
		return false;
	if (!profile)
		return true;
	return oci_write_file(&c->b, "profiles/profile.json", profile, path, sizeof(path)) &&
	       oci_annotate(&c->b, "io.sfilter.profile", "profile.json");
}

static bool ctr_start(struct ctr *c, const char *runtime, const char *const *argv,
		      const char *profile)
{
	return ctr_tools(c, runtime) && sfd_start_sfilterd(&c->dm, true) &&
	       ctr_bundle(c, argv, profile);
}

static void ctr_end(struct ctr *c)
{
	oci_bundle_remove(&c->b);
	sfd_cleanup(&c->dm);
}

#define CTR_AUTO struct ctr c __attribute__((cleanup(ctr_end))) = { 0 }

static int run(struct ctr *c)
{
	int st = oci_run(&c->b, patience(), c->out, sizeof(c->out));

	test_log("%s run: status 0x%x, output:\n%s\n", c->runtime, st, c->out);
	return st;
}

static bool exited(int st, int code)
{
	return st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == code;
}

static const char *const echo_ok[] = { "sh", "-c", "echo ok", NULL };
/* busybox's shell itself calls uname(2); sync(2) is made by sync alone. */
static const char *const do_sync[] = { "sync", NULL };

/* echo ok runs under a profile, and a call the profile denies kills the
 * workload with the status the runtime reports for SIGKILL. */
static void runs_and_kills(struct ctr *c)
{
	if (!ctr_bundle(c, echo_ok, DENY("sync")))
		return;
	if (ASSERT_TRUE(exited(run(c), 0), "echo ok exits 0"))
		ASSERT_TRUE(strstr(c->out, "ok\n") != NULL, "the workload printed ok");
	oci_bundle_remove(&c->b);
	if (!ctr_bundle(c, do_sync, DENY("sync")))
		return;
	ASSERT_TRUE(exited(run(c), 137), "the runtime reports 137 for the denied sync");
	/* The hook gave sfilterd the profile: the kill names its rule. */
	ASSERT_TRUE(sfd_log_wait(&c->dm, "\"syscall\":\"sync\","), "the kill is logged");
	ASSERT_TRUE(sfd_log_count(&c->dm, "\"rule\":{\"path\":\"syscalls[0]\",\"name\":"
				  "\"syscalls[0].names[0]\",\"action\":\"SCMP_ACT_KILL_PROCESS\"}") >= 1,
		    "and names the profile's rule that decided it");
	oci_bundle_remove(&c->b);
}

/* runc's init calls setgroups(2) after the hook and before the workload's
 * execve: armed at exec, a profile that denies it lets the container start;
 * armed now, it kills the init, and the container never runs. */
static void init_not_judged(struct ctr *c)
{
	int st;

	if (!ctr_bundle(c, echo_ok, DENY("setgroups")))
		return;
	if (ASSERT_TRUE(exited(run(c), 0), "the container starts (armed at exec)"))
		ASSERT_TRUE(strstr(c->out, "ok\n") != NULL, "the workload printed ok");
	oci_bundle_remove(&c->b);
	if (!ctr_bundle(c, echo_ok, DENY("setgroups")) ||
	    !oci_annotate(&c->b, "io.sfilter.arm", "now"))
		return;
	st = run(c);
	ASSERT_FALSE(exited(st, 0), "armed now, runc's own setgroups is judged");
	ASSERT_TRUE(strstr(c->out, "ok\n") == NULL, "the workload never ran");
	oci_bundle_remove(&c->b);
}

static void broken_profile(struct ctr *c)
{
	static const char *const mark[] = { "sh", "-c", "touch /sync/ran; echo ran", NULL };
	char ran[300];
	int st;

	if (!ctr_bundle(c, mark, BROKEN))
		return;
	st = run(c);
	ASSERT_FALSE(exited(st, 0), "a broken profile: runc run fails");
	ASSERT_TRUE(strstr(c->out, "sfilter-oci-hook: ") != NULL, "the hook's line is shown");
	ASSERT_TRUE(strstr(c->out, "syscalls[0].action") != NULL,
		    "it names where the profile is wrong");
	snprintf(ran, sizeof(ran), "%s/sync/ran", c->b.dir);
	ASSERT_TRUE(access(ran, F_OK) != 0, "the workload never ran");
}

/* One daemon for every case (a start costs ~10 s under emulation). */
TEST(containers_runc_runs_confines_and_refuses_as_the_profile_says)
{
	CTR_AUTO;

	if (!ctr_tools(&c, "runc") || !sfd_start_sfilterd(&c.dm, true))
		return;
	test_log("-- echo ok, and a denied call exits 137\n");
	runs_and_kills(&c);
	test_log("-- runc's own init is not judged by a profile armed at exec\n");
	init_not_judged(&c);
	test_log("-- a broken profile fails the start before the workload runs\n");
	broken_profile(&c);
}

/* Waits for path to exist (the workload's signal); false after patience. */
static bool wait_file(const char *path)
{
	int ms;

	for (ms = 0; ms < patience() * 1000; ms += 20) {
		if (access(path, F_OK) == 0)
			return true;
		usleep(20000);
	}
	return false;
}

TEST(containers_stay_confined_while_sfilterd_restarts)
{
	static const char *const waits[] = {
		"sh", "-c", "touch /sync/started; while [ ! -e /sync/go ]; do sleep 0.1; done; "
		"sync", NULL };
	CTR_AUTO;
	char started[300], go[300];
	pid_t run_pid;
	int st;

	if (!ctr_start(&c, "runc", waits, DENY("sync")))
		return;
	snprintf(started, sizeof(started), "%s/sync/started", c.b.dir);
	snprintf(go, sizeof(go), "%s/sync/go", c.b.dir);
	run_pid = oci_run_start(&c.b);
	if (!ASSERT_TRUE(wait_file(started), "the workload started")) {
		oci_run_wait(&c.b, run_pid, 1, c.out, sizeof(c.out));
		return;
	}
	/* Killed, as a crash or an OOM kill would: nothing is cleaned up. */
	ASSERT_TRUE(sfd_signal(&c.dm, SIGKILL) != -1, "sfilterd killed");
	ASSERT_TRUE(sfd_restart(&c.dm), "sfilterd restarted on its pins");
	close(open(go, O_CREAT | O_WRONLY, 0644));
	st = oci_run_wait(&c.b, run_pid, patience(), c.out, sizeof(c.out));
	test_log("runc run: status 0x%x, output:\n%s\n", st, c.out);
	ASSERT_TRUE(exited(st, 137), "the denied sync after the restart exits 137");
}

#define DENY_SYNC_AND_SETGROUPS \
	"{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"sync\", " \
	"\"setgroups\"], \"action\": \"SCMP_ACT_KILL_PROCESS\"}]}\n"

/* A process `runc exec` (or `crun exec`) starts in a running confined
 * container is judged too, as the runtime's own seccomp filter judges it:
 * from its command's execve (the runtime's init, which calls setgroups,
 * is not), so `echo ok` runs and `sync` is killed; and the container's
 * own workload is still confined. */
static void exec_judged(struct ctr *c)
{
	static const char *const waits[] = {
		"sh", "-c", "touch /sync/started; while [ ! -e /sync/go ]; do sleep 0.1; done; "
		"sync", NULL };
	static const char *const echo[] = { "echo", "ok", NULL };
	static const char *const sync_argv[] = { "sync", NULL };
	char started[300], go[300];
	pid_t run_pid;
	int st;

	if (!ctr_bundle(c, waits, DENY_SYNC_AND_SETGROUPS))
		return;
	snprintf(started, sizeof(started), "%s/sync/started", c->b.dir);
	snprintf(go, sizeof(go), "%s/sync/go", c->b.dir);
	run_pid = oci_run_start(&c->b);
	if (!ASSERT_TRUE(wait_file(started), "the workload started")) {
		oci_run_wait(&c->b, run_pid, 1, c->out, sizeof(c->out));
		test_log("%s run: %s\n", c->runtime, c->out);
		return;
	}
	st = oci_exec(&c->b, echo, patience(), c->out, sizeof(c->out));
	test_log("%s exec echo ok: status 0x%x, output:\n%s\n", c->runtime, st, c->out);
	ASSERT_TRUE(exited(st, 0) && strstr(c->out, "ok\n") != NULL,
		    "exec of echo ok runs: the runtime's init is not judged, echo is allowed");
	st = oci_exec(&c->b, sync_argv, patience(), c->out, sizeof(c->out));
	test_log("%s exec sync: status 0x%x, output:\n%s\n", c->runtime, st, c->out);
	ASSERT_TRUE(exited(st, 137), "exec of the denied sync exits 137: it was judged");
	close(open(go, O_CREAT | O_WRONLY, 0644));
	st = oci_run_wait(&c->b, run_pid, patience(), c->out, sizeof(c->out));
	test_log("%s run: status 0x%x, output:\n%s\n", c->runtime, st, c->out);
	ASSERT_TRUE(exited(st, 137), "the container's own denied sync exits 137");
	oci_bundle_remove(&c->b);
}

TEST(containers_runc_exec_in_a_confined_container_is_judged_too)
{
	CTR_AUTO;

	if (ctr_tools(&c, "runc") && sfd_start_sfilterd(&c.dm, true))
		exec_judged(&c);
}

#define ERRNO_MKDIR \
	"{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"mkdir\", " \
	"\"mkdirat\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 13}]}\n"

/* A container whose linux.seccomp is its profile's gate (sfctl compile
 * --gate), with the hook and the profile as usual: the runtime hands the
 * listener to sfilterd's agent socket, and the profile's ERRNO is exact
 * on either tier: mkdir fails with EACCES, the directory is never made,
 * and the workload goes on (without the gate, on the tracepoint tier, it
 * is killed after the directory was made). */
static void gated(struct ctr *c)
{
	static const char *const mk[] = {
		"sh", "-c", "mkdir /sync/made; echo status $?", NULL };
	char sfctl[4096], prof[512], gate[512], made[512], out[4096];
	const char *argv[] = { sfctl, "compile", "--profile", prof, "--gate", "-o", gate, NULL };
	int st;

	if (!sfd_find_bin("sfctl", "SF_SFCTL", sfctl, sizeof(sfctl))) {
		test_fail(__FILE__, __LINE__, "no sfctl beside the test runner");
		return;
	}
	if (!ctr_bundle(c, mk, ERRNO_MKDIR))
		return;
	snprintf(prof, sizeof(prof), "%s/profiles/profile.json", c->b.dir);
	snprintf(gate, sizeof(gate), "%s/gate.json", c->b.dir);
	snprintf(made, sizeof(made), "%s/sync/made", c->b.dir);
	st = sfd_run(argv, true, patience(), out, sizeof(out));
	if (!ASSERT_TRUE(exited(st, 0), "sfctl compile --gate") || !oci_set_seccomp(&c->b, gate))
		return;
	st = run(c);
	ASSERT_TRUE(exited(st, 0), "the gated workload is not killed");
	ASSERT_TRUE(strstr(c->out, "status 1") != NULL, "mkdir failed");
	ASSERT_TRUE(strstr(c->out, "Permission denied") != NULL, "with EACCES, the profile's errno");
	ASSERT_TRUE(access(made, F_OK) != 0, "the directory was never made");
	ASSERT_TRUE(sfd_log_wait(&c->dm, "\"tier\":\"gate\""), "the refusal is logged as the gate's");
	oci_bundle_remove(&c->b);
}

TEST(containers_runc_with_the_profiles_gate_gets_its_errno_exactly_on_any_tier)
{
	CTR_AUTO;

	if (ctr_tools(&c, "runc") && sfd_start_sfilterd(&c.dm, true))
		gated(&c);
}

/* crun 1.8 refuses a hybrid cgroup layout whose v2 hierarchy has
 * controllers: a plain container first tells whether crun runs here. */
static bool crun_runs_here(void)
{
	CTR_AUTO;
	const char *why;
	int st;

	if (!ctr_tools(&c, "crun") || !oci_bundle_make(&c.b, c.runtime, c.busybox, echo_ok))
		return false;
	st = run(&c);
	if (exited(st, 0))
		return true;
	why = strstr(c.out, "cgroups in hybrid mode not supported");
	if (why) {
		test_skip("crun: %.*s", (int)strcspn(why, "\n"), why);
		return false;
	}
	test_fail(__FILE__, __LINE__, "a plain crun container failed: %s", c.out);
	return false;
}

TEST(containers_crun_runs_echo_ok_a_denied_call_exits_137_and_crun_exec_is_judged)
{
	CTR_AUTO;

	if (crun_runs_here() && ctr_tools(&c, "crun") && sfd_start_sfilterd(&c.dm, true)) {
		runs_and_kills(&c);
		test_log("-- crun exec in the confined container is judged too\n");
		exec_judged(&c);
		test_log("-- crun with the profile's gate gets its errno exactly\n");
		gated(&c);
	}
}
