// SPDX-License-Identifier: GPL-2.0-only
/*
 * io.sfilter.record with the real runc: a busybox workload runs with
 * nothing enforced and, when it stops, sfilter-oci-hook (createRuntime
 * and poststop) writes the profile its calls make. That profile then
 * runs the same workload, and refuses a call the workload never made; a
 * second recording with io.sfilter.record-merge=true adds its calls to
 * the file, whose profile then allows the calls of both and runs the
 * second. (A recording that also names a profile is refused: the hook's
 * table in test_oci_hook.c.)
 * (/sync is the bundle's one writable place; the rootfs is read-only.)
 * And the daemon's side: RECORD is an admin's, and each mistake is said.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "daemon.h"
#include "oci.h"
#include "admin.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <json-c/json.h>

/* The profile's verdicts are what is checked, and a refused mkdir counts
 * as refused whether it was killed or failed with EPERM. */
SFD_TIER_INDEPENDENT

struct rec {
	struct sfd dm;
	struct oci_bundle b;
	char runtime[256], busybox[256], hook[4096], env[200];
	char profiles[300], records[300], out[8192];
};

static int patience(void)
{
	return test_is_emulated() ? 600 : 60;
}

static void rec_end(struct rec *r)
{
	oci_bundle_remove(&r->b);
	sfd_cleanup(&r->dm);
}

/* A bundle running argv with the hook at createRuntime and poststop, its
 * profiles in profiles/ and recordings in the daemon's directory (they
 * outlive each bundle), and annotations key=value pairs (NULL-ended). */
static bool bundle(struct rec *r, const char *const *argv, const char *const *ann)
{
	const char *env[] = { r->env, NULL };
	const char *args[] = { "--profile-dir", r->profiles, "--record-dir", r->records, NULL };

	if (!oci_bundle_make(&r->b, r->runtime, r->busybox, argv))
		return false;
	snprintf(r->env, sizeof(r->env), "SFILTER_SOCKET=%s", r->dm.sock);
	snprintf(r->profiles, sizeof(r->profiles), "%s/profiles", r->b.dir);
	if (!ASSERT_OK(mkdir(r->profiles, 0755) ? -errno : 0, "mkdir profiles") ||
	    !oci_add_hook_at(&r->b, "createRuntime", r->hook, args, env) ||
	    !oci_add_hook_at(&r->b, "poststop", r->hook, args, env))
		return false;
	for (; ann && ann[0]; ann += 2)
		if (!oci_annotate(&r->b, ann[0], ann[1]))
			return false;
	return true;
}

static int run(struct rec *r, const char *what)
{
	int st = oci_run(&r->b, patience(), r->out, sizeof(r->out));

	test_log("%s: status 0x%x, output:\n%s\n", what, st, r->out);
	oci_bundle_remove(&r->b);
	return st;
}

static bool exited(int st, int code)
{
	return st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == code;
}

/* The names the recorded profile at path allows, or NULL. */
static struct json_object *allowed(const char *path, struct json_object **doc)
{
	struct json_object *calls, *names;

	*doc = json_object_from_file(path);
	if (!*doc || !json_object_object_get_ex(*doc, "syscalls", &calls) ||
	    !json_object_object_get_ex(json_object_array_get_idx(calls, 0), "names", &names))
		return NULL;
	return names;
}

static bool has(struct json_object *names, const char *name)
{
	size_t i;

	for (i = 0; names && i < json_object_array_length(names); i++)
		if (!strcmp(json_object_get_string(json_object_array_get_idx(names, i)), name))
			return true;
	return false;
}

/* The recorded file copied into profiles/ as the profile of a run. */
static bool enforce(struct rec *r, const char *const *argv, const char *file)
{
	char from[400], to[400], *text;
	size_t len;
	FILE *f;

	snprintf(from, sizeof(from), "%s/%s", r->records, file);
	f = fopen(from, "r");
	if (!ASSERT_OK_PTR(f, from))
		return false;
	text = calloc(1, 1 << 20);
	len = text ? fread(text, 1, (1 << 20) - 1, f) : 0;
	fclose(f);
	snprintf(to, sizeof(to), "profiles/%s", file);
	if (!bundle(r, argv, (const char *const[]){ "io.sfilter.profile", file, NULL }) ||
	    !oci_write_file(&r->b, to, text ? text : "", from, sizeof(from))) {
		free(text);
		return false;
	}
	free(text);
	return len > 0;
}

TEST(containers_runc_records_a_profile_that_runs_its_workload_and_refuses_the_rest)
{
	static const char *const work[] = { "sh", "-c", "echo ok; ls / > /dev/null", NULL };
	static const char *const mk[] = { "sh", "-c", "mkdir /sync/made && echo made", NULL };
	struct rec r __attribute__((cleanup(rec_end))) = { 0 };
	struct json_object *doc, *names;
	char why[256], path[400];
	int st;

	if (!oci_find_runtime("runc", r.runtime, sizeof(r.runtime))) {
		test_skip("runc is not installed");
		return;
	}
	if (!oci_find_busybox(r.busybox, sizeof(r.busybox), why, sizeof(why))) {
		test_skip("%s", why);
		return;
	}
	if (!ASSERT_TRUE(sfd_find_bin("sfilter-oci-hook", "SF_OCI_HOOK", r.hook, sizeof(r.hook)),
			 "sfilter-oci-hook beside the runner") ||
	    !sfd_start_sfilterd(&r.dm, true))
		return;
	snprintf(r.records, sizeof(r.records), "%s/records", r.dm.dir);
	if (!ASSERT_OK(mkdir(r.records, 0755) ? -errno : 0, "mkdir records"))
		return;

	/* The recording: nothing enforced, the profile written at poststop. */
	if (!bundle(&r, work, (const char *const[]){ "io.sfilter.record", "work.json", NULL }))
		return;
	st = run(&r, "recorded: echo ok; ls");
	ASSERT_TRUE(exited(st, 0) && strstr(r.out, "ok\n"), "the recorded workload runs");
	snprintf(path, sizeof(path), "%s/work.json", r.records);
	names = allowed(path, &doc);
	if (!ASSERT_OK_PTR(names, "the recording wrote a profile"))
		return;
	test_log("recorded: %zu syscalls\n", json_object_array_length(names));
	ASSERT_TRUE(has(names, "write") && has(names, "getdents64"),
		    "it allows what echo and ls called (write, getdents64)");
	ASSERT_FALSE(has(names, "mkdir") || has(names, "mkdirat"), "and nothing they did not");
	json_object_put(doc);
	snprintf(path, sizeof(path), "%s/.sfilter-%s.json", r.records, r.b.id);
	ASSERT_TRUE(access(path, F_OK) != 0, "the hook's own file is gone");

	/* Enforced: the workload runs; a call it never made is refused. */
	if (!enforce(&r, work, "work.json"))
		return;
	st = run(&r, "enforced: echo ok; ls");
	ASSERT_TRUE(exited(st, 0) && strstr(r.out, "ok\n"), "the same workload runs under it");
	if (!enforce(&r, mk, "work.json"))
		return;
	st = run(&r, "enforced: mkdir");
	ASSERT_FALSE(exited(st, 0), "mkdir, never recorded, is refused");
	ASSERT_TRUE(strstr(r.out, "made\n") == NULL, "and the workload goes no further");

	/* A second recording, merged into the file. */
	if (!bundle(&r, mk, (const char *const[]){ "io.sfilter.record", "work.json",
						   "io.sfilter.record-merge", "true", NULL }))
		return;
	st = run(&r, "recorded, merged: mkdir");
	ASSERT_TRUE(exited(st, 0) && strstr(r.out, "made\n"), "the second workload runs");
	snprintf(path, sizeof(path), "%s/work.json", r.records);
	names = allowed(path, &doc);
	ASSERT_TRUE(names && (has(names, "mkdir") || has(names, "mkdirat")) &&
		    has(names, "getdents64"), "the merged profile has the calls of both");
	json_object_put(doc);
	if (!enforce(&r, mk, "work.json"))
		return;
	st = run(&r, "enforced, merged: mkdir");
	ASSERT_TRUE(exited(st, 0) && strstr(r.out, "made\n"), "mkdir runs under it now");
}

/* RECORD is an admin's: another user is refused; a take of a filter not
 * being recorded, a second start, an unknown op each say so. */
TEST(record_requests_are_an_admins_and_each_mistake_is_said)
{
	struct sf_client_reply *rep = malloc(sizeof(*rep));
	int st, r;
	pid_t pid;
	SFD_AUTO;

	if (!ASSERT_OK_PTR(rep, "malloc") || !sfd_start_for_users(&dm, NULL)) {
		free(rep);
		return;
	}
	r = sf_client_record(dm.sock, SF_RECORD_TAKE, 42, rep);
	ASSERT_EQ(r, -ENOENT, rep->message);
	ASSERT_TRUE(strstr(rep->message, "filter 42 is not being recorded") != NULL, rep->message);
	ASSERT_OK(sf_client_record(dm.sock, SF_RECORD_START, 42, rep), rep->message);
	r = sf_client_record(dm.sock, SF_RECORD_START, 42, rep);
	ASSERT_EQ(r, -EEXIST, rep->message);
	r = sf_client_record(dm.sock, 9, 42, rep);
	ASSERT_EQ(r, -EINVAL, rep->message);
	ASSERT_OK(sf_client_record(dm.sock, SF_RECORD_TAKE, 42, rep), rep->message);
	ASSERT_TRUE(strstr(rep->text, "\"arches\"") != NULL, "a take answers the arches");
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (setgid(65534) || setuid(65534))
			_exit(2);
		r = sf_client_record(dm.sock, SF_RECORD_START, 43, rep);
		_exit(r == -EPERM || r == -EACCES ? 0 : 1);
	}
	ASSERT_TRUE(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
		    WEXITSTATUS(st) == 0, "uid 65534's start is refused");
	free(rep);
}
