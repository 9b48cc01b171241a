// SPDX-License-Identifier: GPL-2.0-only
/*
 * Docker, for real: Debian's dockerd (20.10) with its own containerd,
 * every directory its own (tests/lib/engine_docker.h), and sfilter-runc
 * registered as runtimes in its daemon.json, each with its options as
 * runtimeArgs (Docker 20.10 passes no annotation). A busybox image is
 * imported offline; containers run with --ulimit nofile=1024:1024 (this
 * machine's hard limit is below Docker's default) and --network none.
 * What a user of `docker run` sees is what is checked:
 *   - on a container with no seccomp profile of its own (seccomp=
 *     unconfined), the profile's gate: an allowed command runs, a denied
 *     mkdir fails with the profile's errno, never kills, and sfilterd
 *     logs it with tier "gate"; `docker exec` is judged the same;
 *   - beside Docker's default profile, which stays in the kernel as it
 *     was given, the profile is attached at the tier's strength;
 *   - a broken profile (the wrapper's line) or a missing one (the hook's
 *     line) stops the container before its workload runs, and docker
 *     run says why;
 *   - a container of the plain runc runtime is left alone;
 *   - take-seccomp of Docker's default profile: glibc's threads start
 *     (clone3 gets that profile's ENOSYS from the gate, and glibc falls
 *     back to clone) instead of being killed;
 * then dockerd stops cleanly, leaving nothing behind.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "daemon.h"
#include "engine_docker.h"
#include "oci.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define IMAGE "sftest-busybox:1"


struct dk {
	struct dockerd *d;
	struct sfd *dm;
	char dir[PATH_MAX];           /* the test's own files: profiles/, sync/ */
	char threads[PATH_MAX];       /* sf-threads */
	char out[16384];
};

static int patience(void)
{
	return test_is_emulated() ? 600 : 60;
}

static bool exited(int st, int code)
{
	return st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == code;
}

/* A path found beside the runner, made absolute: daemon.json's runtimes
 * are command lines a shell splits. */
static bool beside(const char *name, const char *env, char *out, size_t size)
{
	char found[PATH_MAX];

	if (!sfd_find_bin(name, env, found, sizeof(found)) || !realpath(found, out)) {
		test_fail(__FILE__, __LINE__, "no %s beside the test runner", name);
		return false;
	}
	(void)size;
	return true;
}

/* daemon.json's runtimes: sfilter-runc with the test's runc, hook,
 * profile directory and socket, and each runtime's policy. */
static bool runtimes(struct dk *k, char *json, size_t size)
{
	static const char *const policies[][2] = {
		{ "sfilter", "\"--sfilter-profile=errno-mkdir.json\"" },
		{ "sfilter-broken", "\"--sfilter-profile=broken.json\"" },
		{ "sfilter-missing", "\"--sfilter-profile=missing.json\"" },
		{ "sfilter-take", "\"--sfilter-take-seccomp\"" },
	};
	char wrap[PATH_MAX], hook[PATH_MAX], runc[256], common[4 * PATH_MAX];
	size_t i, used;

	if (!oci_find_runtime("runc", runc, sizeof(runc))) {
		test_skip("runc is not installed");
		return false;
	}
	if (!beside("sfilter-runc", "SF_RUNC_WRAP", wrap, sizeof(wrap)) ||
	    !beside("sfilter-oci-hook", "SF_OCI_HOOK", hook, sizeof(hook)))
		return false;
	snprintf(common, sizeof(common),
		 "\"--sfilter-runc=%s\", \"--sfilter-hook=%s\", \"--sfilter-profile-dir=%s/"
		 "profiles\", \"--sfilter-socket=%s\", \"--sfilter-hook-timeout=%d\"",
		 runc, hook, k->dir, k->dm->sock, patience());
	used = (size_t)snprintf(json, size, "\"runtimes\": {");
	for (i = 0; i < sizeof(policies) / sizeof(policies[0]) && used < size; i++)
		used += (size_t)snprintf(json + used, size - used,
					 "%s\"%s\": {\"path\": \"%s\", \"runtimeArgs\": [%s, %s]}",
					 i ? ", " : "", policies[i][0], wrap, common,
					 policies[i][1]);
	return ASSERT_TRUE(used + 2 < size, "daemon.json fits") &&
	       snprintf(json + used, size - used, "}") > 0;
}

static bool write_file(const char *dir, const char *name, const char *text)
{
	char p[PATH_MAX + 64];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	if (!ASSERT_TRUE(f != NULL, p))
		return false;
	fputs(text, f);
	return ASSERT_OK(fclose(f), p);
}

/* The test's files, the busybox image's tarball among them. */
static bool files(struct dk *k, char *tar, size_t size)
{
	char busybox[256], why[256], p[PATH_MAX + 16];

	if (!oci_find_busybox(busybox, sizeof(busybox), why, sizeof(why))) {
		test_skip("%s", why);
		return false;
	}
	snprintf(k->dir, sizeof(k->dir), "/tmp/sftest-dockertest-XXXXXX");
	if (!ASSERT_TRUE(mkdtemp(k->dir) != NULL, "mkdtemp"))
		return false;
	/* The rootfs's maker makes sync/ beside it, for the bind. */
	if (!oci_rootfs_tar(k->dir, busybox, tar, size))
		return false;
	snprintf(p, sizeof(p), "%s/profiles", k->dir);
	return ASSERT_OK(mkdir(p, 0755), "mkdir profiles") &&
	       write_file(p, "errno-mkdir.json", OCI_PROFILE_ERRNO_MKDIR) &&
	       write_file(p, "broken.json", OCI_PROFILE_BROKEN) &&
	       beside("sf-threads", NULL, k->threads, sizeof(k->threads));
}

/* `docker run --rm` of argv on runtime, with extra options (NULL-
 * terminated, may be NULL) before the image; its wait status. */
static int run(struct dk *k, const char *runtime, const char *const *extra,
	       const char *const *argv)
{
	char sync[PATH_MAX + 16], threads[PATH_MAX + 32];
	const char *args[40];
	int n = 0, st;

	snprintf(sync, sizeof(sync), "%s/sync:/sync", k->dir);
	snprintf(threads, sizeof(threads), "%s:/bin/sf-threads:ro", k->threads);
	args[n++] = "run";
	args[n++] = "--rm";
	args[n++] = "--runtime";
	args[n++] = runtime;
	args[n++] = "--ulimit";
	args[n++] = "nofile=1024:1024";
	args[n++] = "--network";
	args[n++] = "none";
	args[n++] = "-v";
	args[n++] = sync;
	args[n++] = "-v";
	args[n++] = threads;
	for (; extra && *extra; extra++)
		args[n++] = *extra;
	args[n++] = IMAGE;
	for (; *argv; argv++)
		args[n++] = *argv;
	args[n] = NULL;
	st = docker(k->d, args, patience(), k->out, sizeof(k->out));
	test_log("docker run --runtime %s: status 0x%x, output:\n%s\n", runtime, st, k->out);
	return st;
}

static bool has(const struct dk *k, const char *needle)
{
	return strstr(k->out, needle) != NULL;
}

static const char *const unconfined[] = { "--security-opt", "seccomp=unconfined", NULL };
static const char *const mkdir_made[] = {
	"sh", "-c", "mkdir /tmp/made; echo status $?", NULL };

/* No seccomp profile of the container's own: its kernel filter is the
 * profile's gate. */
static void gated(struct dk *k)
{
	static const char *const echo_ok[] = { "sh", "-c", "echo ok", NULL };
	static const char *const detached[] = { "-d", "--name", "sftest-exec",
						"--security-opt", "seccomp=unconfined", NULL };
	static const char *const sleeper[] = { "sleep", "60", NULL };
	static const char *const exec_mkdir[] = {
		"exec", "sftest-exec", "sh", "-c", "mkdir /tmp/exec; echo status $?", NULL };
	static const char *const rm[] = { "rm", "-f", "sftest-exec", NULL };
	char out[4096];
	int st;

	test_log("-- an allowed command runs\n");
	if (ASSERT_TRUE(exited(run(k, "sfilter", unconfined, echo_ok), 0), "echo ok exits 0"))
		ASSERT_TRUE(has(k, "ok\n"), "the workload printed ok");
	test_log("-- a denied call gets the profile's errno from the gate\n");
	if (ASSERT_TRUE(exited(run(k, "sfilter", unconfined, mkdir_made), 0),
			"the workload is not killed")) {
		ASSERT_TRUE(has(k, "Permission denied"), "mkdir fails with EACCES");
		ASSERT_TRUE(has(k, "status 1\n"), "and the shell goes on");
	}
	ASSERT_TRUE(sfd_log_wait(k->dm, "\"tier\":\"gate\",\"errno\":13"),
		    "sfilterd logs the refusal with tier gate and errno 13");
	test_log("-- docker exec in that container is judged by the gate too\n");
	st = run(k, "sfilter", detached, sleeper);
	if (!ASSERT_TRUE(exited(st, 0), "docker run -d"))
		return;
	st = docker(k->d, exec_mkdir, patience(), out, sizeof(out));
	test_log("docker exec: status 0x%x, output:\n%s\n", st, out);
	ASSERT_TRUE(exited(st, 0) && strstr(out, "Permission denied") &&
		    strstr(out, "status 1\n"), "docker exec's mkdir fails with EACCES");
	ASSERT_TRUE(exited(docker(k->d, rm, patience(), out, sizeof(out)), 0), "docker rm -f");
}

/* Docker's default profile stays the kernel's; the profile is attached
 * beside it, at the tier's strength (without BPF LSM, a kill after the
 * call). */
static void beside_docker_default(struct dk *k)
{
	static const char *const both[] = {
		"sh", "-c", "sf-threads; mkdir /tmp/made; echo status $?", NULL };
	int before = sfd_log_count(k->dm, "\"tier\":\"gate\"");

	test_log("-- beside Docker's default profile, at the tier's strength\n");
	if (!ASSERT_TRUE(exited(run(k, "sfilter", NULL, both), 0), "the container runs"))
		return;
	ASSERT_TRUE(has(k, "clone3: errno 38"), "Docker's default profile is the kernel's still");
	ASSERT_TRUE(has(k, "status 137\n") || has(k, "status 1\n"),
		    "the profile's mkdir is refused (killed on the tracepoint tier)");
	ASSERT_EQ(sfd_log_count(k->dm, "\"tier\":\"gate\""), before, "no gate judged it");
}

/* Broken and missing profiles: the container never starts, and docker
 * run shows the line of whichever refused it. */
static void refused(struct dk *k)
{
	static const char *const mark[] = { "sh", "-c", "touch /sync/ran; echo ran", NULL };
	char ran[PATH_MAX + 16];
	int st;

	snprintf(ran, sizeof(ran), "%s/sync/ran", k->dir);
	test_log("-- a broken profile: sfilter-runc refuses it before runc runs\n");
	st = run(k, "sfilter-broken", unconfined, mark);
	ASSERT_FALSE(exited(st, 0), "docker run fails");
	ASSERT_TRUE(has(k, "sfilter-runc: io.sfilter.profile: broken.json: syscalls[0].action: "
			"not a profile sfilter takes"), "docker run shows the wrapper's line");
	ASSERT_TRUE(access(ran, F_OK) != 0, "the workload never ran");
	test_log("-- a missing profile beside Docker's default: the hook refuses it\n");
	st = run(k, "sfilter-missing", NULL, mark);
	ASSERT_FALSE(exited(st, 0), "docker run fails");
	ASSERT_TRUE(has(k, "sfilter-oci-hook: io.sfilter.profile: missing.json: no such file in "),
		    "docker run shows the hook's line");
	ASSERT_TRUE(access(ran, F_OK) != 0, "the workload never ran");
}

static void plain_runc(struct dk *k)
{
	int attached = sfd_log_count(k->dm, "\"sfilterd\":\"attach\"");

	test_log("-- the plain runc runtime is left alone\n");
	if (ASSERT_TRUE(exited(run(k, "runc", unconfined, mkdir_made), 0), "the container runs"))
		ASSERT_TRUE(has(k, "status 0\n"), "mkdir, which the profile denies, succeeds");
	ASSERT_EQ(sfd_log_count(k->dm, "\"sfilterd\":\"attach\""), attached, "nothing was attached");
}

/* Docker's own default profile, taken: the gate answers clone3 with its
 * ENOSYS, glibc falls back to clone, the threads run. */
static void take_seccomp(struct dk *k)
{
	static const char *const threads[] = { "sf-threads", NULL };

	test_log("-- take-seccomp of Docker's default profile: threads start\n");
	if (ASSERT_TRUE(exited(run(k, "sfilter-take", NULL, threads), 0),
			"the threaded program exits 0, not killed")) {
		ASSERT_TRUE(has(k, "clone3: errno 38"), "clone3 gets the profile's ENOSYS");
		ASSERT_TRUE(has(k, "threads: 4 of 4 ran"), "every thread ran");
	}
	ASSERT_TRUE(sfd_log_wait(k->dm, "\"syscall\":\"clone3\""), "sfilterd logs clone3");
	ASSERT_TRUE(sfd_log_wait(k->dm, "\"tier\":\"gate\",\"errno\":38"),
		    "judged by the gate, errno 38");
}

static void dk_end(struct dk *k)
{
	const char *const argv[] = { "/bin/rm", "-rf", k->dir, NULL };
	char out[256];

	if (k->dir[0])
		sfd_run(argv, true, 60, out, sizeof(out));
}

/* One dockerd for every case: its start, import and stop are most of the
 * test's time. */
TEST(docker_with_sfilter_runc_gates_what_asks_refuses_what_is_broken_and_leaves_runc_alone)
{
	struct dk k __attribute__((cleanup(dk_end))) = { 0 };
	char json[16384], tar[PATH_MAX];
	DOCKERD_AUTO;
	SFD_AUTO;

	k.d = &dk;
	k.dm = &dm;
	/* dockerd first: without it, no daemon is started for nothing. */
	if (!dockerd_find(&dk) || !files(&k, tar, sizeof(tar)) ||
	    !sfd_start_sfilterd(&dm, false) || !runtimes(&k, json, sizeof(json)) ||
	    !dockerd_start(&dk, json) || !docker_import(&dk, tar, IMAGE))
		return;
	gated(&k);
	beside_docker_default(&k);
	refused(&k);
	plain_runc(&k);
	take_seccomp(&k);
	dockerd_stop(&dk);
}
