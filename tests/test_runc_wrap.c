// SPDX-License-Identifier: GPL-2.0-only
/*
 * sfilter-runc, runc's wrapper for engines that read no hooks.d file, on
 * its own (tests/test_engine_docker.c runs it under Docker):
 *   - containerd's way, under the real runc: a container whose config.json
 *     carries the pod's io.sfilter.profile gets the hook and the profile's
 *     gate, and its denied call the profile's errno; a pod's sandbox is
 *     left alone, its config.json as it came;
 *   - what it refuses, each with one line on stderr and the same line as
 *     runc's error in --log (where containerd reads it), config.json as it
 *     was, and runc never run;
 *   - every other command, and every argument it does not own, reaching
 *     runc as it came;
 *   - the compile kept beside the socket (loader/cli/profile_cache.h):
 *     the hook takes the wrapper's, and only from a file of its own user.
 * A stand-in runc, a shell script that writes down its arguments, shows
 * what runc would have been given; the real runc shows what it does.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "daemon.h"
#include "oci.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <unistd.h>
#include <json-c/json.h>

SFD_TIER_INDEPENDENT


/* The event of a refusal the gate sent up, with the profile's errno. */
#define GATED_13 "\"tier\":\"gate\",\"errno\":13"

static int patience(void)
{
	return test_is_emulated() ? 600 : 60;
}

static bool exited(int st, int code)
{
	return st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == code;
}

static bool write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	size_t len = strlen(text);
	bool ok = fd >= 0 && write(fd, text, len) == (ssize_t)len;

	if (fd >= 0)
		close(fd);
	return ASSERT_TRUE(ok, path);
}

/* The whole file at path (malloc'd, NUL-terminated), or NULL. */
static char *slurp(const char *path)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = fopen(path, "r");

	if (f && getdelim(&buf, &len, '\0', f) < 0) {
		free(buf);
		buf = NULL;
	}
	if (f)
		fclose(f);
	return buf;
}

static bool wrapper(char *out, size_t size)
{
	char found[PATH_MAX];

	if (sfd_find_bin("sfilter-runc", "SF_RUNC_WRAP", found, sizeof(found)) &&
	    realpath(found, out))
		return true;
	test_fail(__FILE__, __LINE__, "no sfilter-runc beside the test runner");
	(void)size;
	return false;
}

/* --- under the real runc ---------------------------------------------------- */

/* The bundle's runtime becomes a script that runs sfilter-runc with the
 * options first, as Docker's runtimeArgs and a BinaryName wrapper do. */
static bool through_wrapper(struct oci_bundle *b, const char *wrap, const char *hook,
			    const char *profiles, const char *sock)
{
	char script[PATH_MAX * 4], path[sizeof(b->runtime)];

	snprintf(script, sizeof(script),
		 "#!/bin/sh\nexec %s --sfilter-runc=%s --sfilter-hook=%s "
		 "--sfilter-profile-dir=%s --sfilter-socket=%s --sfilter-hook-timeout=%d "
		 "\"$@\"\n", wrap, b->runtime, hook, profiles, sock, patience());
	if (!ASSERT_TRUE(snprintf(path, sizeof(path), "%.200s/runtime.sh", b->dir) <
			 (int)sizeof(path), "the script's path") ||
	    !write_file(path, script, 0755))
		return false;
	snprintf(b->runtime, sizeof(b->runtime), "%s", path);
	return true;
}

static int run(struct oci_bundle *b, char *out, size_t size)
{
	int st = oci_run(b, patience(), out, size);

	test_log("run: status 0x%x, output:\n%s\n", st, out);
	return st;
}

/* A bundle whose annotation names profile.json in its profiles/. */
static bool annotated(struct oci_bundle *b, const char *runc, const char *busybox,
		      const char *const *argv, char *profiles, size_t size)
{
	char p[PATH_MAX];

	if (!oci_bundle_make(b, runc, busybox, argv))
		return false;
	snprintf(profiles, size, "%s/profiles", b->dir);
	snprintf(p, sizeof(p), "%s/profile.json", profiles);
	return ASSERT_OK(mkdir(profiles, 0755), "mkdir profiles") &&
	       write_file(p, OCI_PROFILE_ERRNO_MKDIR, 0644) &&
	       oci_annotate(b, "io.sfilter.profile", "profile.json");
}

/* runc (256 bytes), busybox (256), the wrapper and the hook (PATH_MAX
 * each) found, and dm started; false when the test skips or failed. */
static bool real_runc(char *runc, char *busybox, char *wrap, char *hook, struct sfd *dm)
{
	char why[256];

	if (!oci_find_runtime("runc", runc, 256)) {
		test_skip("runc is not installed");
		return false;
	}
	if (!oci_find_busybox(busybox, 256, why, sizeof(why))) {
		test_skip("%s", why);
		return false;
	}
	return wrapper(wrap, PATH_MAX) &&
	       ASSERT_TRUE(sfd_find_bin("sfilter-oci-hook", "SF_OCI_HOOK", hook, PATH_MAX),
			   "sfilter-oci-hook beside the runner") &&
	       sfd_start_sfilterd(dm, false);
}

TEST(sfilter_runc_gives_an_annotated_container_the_hook_and_the_gate_under_real_runc)
{
	static const char *const mk[] = {
		"sh", "-c", "mkdir /sync/made; echo status $?", NULL };
	struct oci_bundle b __attribute__((cleanup(oci_bundle_remove))) = { 0 };
	char runc[256], busybox[256], wrap[PATH_MAX], hook[PATH_MAX];
	char profiles[300], made[400], cfg[400], out[8192], *before, *after;
	SFD_AUTO;

	if (!real_runc(runc, busybox, wrap, hook, &dm))
		return;

	test_log("-- the pod's annotation: the hook and the gate, the profile's errno\n");
	if (!annotated(&b, runc, busybox, mk, profiles, sizeof(profiles)) ||
	    !through_wrapper(&b, wrap, hook, profiles, dm.sock))
		return;
	snprintf(made, sizeof(made), "%s/sync/made", b.dir);
	if (ASSERT_TRUE(exited(run(&b, out, sizeof(out)), 0), "the workload is not killed")) {
		ASSERT_TRUE(strstr(out, "status 1") != NULL, "mkdir failed");
		ASSERT_TRUE(strstr(out, "Permission denied") != NULL, "with the profile's EACCES");
	}
	ASSERT_TRUE(access(made, F_OK) != 0, "the directory was never made");
	ASSERT_TRUE(sfd_log_wait(&dm, GATED_13),
		    "sfilterd logs the refusal with tier gate and errno 13");
	oci_bundle_remove(&b);

	test_log("-- take-seccomp: the container's own profile, through its gate\n");
	if (!annotated(&b, runc, busybox, mk, profiles, sizeof(profiles)) ||
	    !oci_annotate(&b, "io.sfilter.profile", NULL) ||
	    !oci_annotate(&b, "io.sfilter.take-seccomp", "true") ||
	    !snprintf(cfg, sizeof(cfg), "%s/profile.json", profiles) ||
	    !oci_set_seccomp(&b, cfg) || !through_wrapper(&b, wrap, hook, profiles, dm.sock))
		return;
	snprintf(made, sizeof(made), "%s/sync/made", b.dir);
	if (ASSERT_TRUE(exited(run(&b, out, sizeof(out)), 0), "the workload is not killed"))
		ASSERT_TRUE(strstr(out, "Permission denied") != NULL, "mkdir gets EACCES");
	ASSERT_TRUE(access(made, F_OK) != 0, "the directory was never made");
	for (int i = 0; i < 250 && sfd_log_count(&dm, GATED_13) < 2; i++)
		usleep(20000);
	ASSERT_EQ(sfd_log_count(&dm, GATED_13), 2,
		  "the hook attached the kept profile: the gate's refusal is its");
	oci_bundle_remove(&b);

	test_log("-- a pod's sandbox container is left alone\n");
	if (!annotated(&b, runc, busybox, mk, profiles, sizeof(profiles)) ||
	    !oci_annotate(&b, "io.kubernetes.cri.container-type", "sandbox") ||
	    !through_wrapper(&b, wrap, hook, profiles, dm.sock))
		return;
	snprintf(cfg, sizeof(cfg), "%s/config.json", b.dir);
	snprintf(made, sizeof(made), "%s/sync/made", b.dir);
	before = slurp(cfg);
	if (ASSERT_TRUE(exited(run(&b, out, sizeof(out)), 0), "the sandbox runs"))
		ASSERT_TRUE(strstr(out, "status 0") != NULL, "its mkdir succeeds");
	after = slurp(cfg);
	ASSERT_TRUE(before && after && !strcmp(before, after), "its config.json is as it came");
	free(before);
	free(after);
}

/* The kept compile of the container's profile (dir/filter-NN): its path
 * into out, or false. */
static bool kept_filter(const char *dir, char *out, size_t size)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	bool found = false;

	while (d && !found && (e = readdir(d)))
		if (!strncmp(e->d_name, "filter-", 7))
			found = snprintf(out, size, "%s/%s", dir, e->d_name) < (int)size;
	if (d)
		closedir(d);
	return found;
}

/* The kept filter made to allow everything, its key (what it was compiled
 * from) left as it was: header (magic, key and value lengths), key, then
 * the profile's flags and its program. */
static bool allow_all(const char *path)
{
	struct sock_filter all = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	uint64_t klen, vlen = sizeof(uint32_t) + sizeof(all);
	uint32_t flags = 0;
	char text[4096];
	bool ok = false;
	size_t n = 0;
	FILE *f = fopen(path, "re");

	if (f)
		n = fread(text, 1, sizeof(text), f);
	if (f)
		fclose(f);
	if (!ASSERT_TRUE(n > 40, path))
		return false;
	memcpy(&klen, text + 24, sizeof(klen));
	if (!ASSERT_TRUE(klen <= n - 40, "the key's length"))
		return false;
	memcpy(text + 32, &vlen, sizeof(vlen));
	f = fopen(path, "we");
	if (f)
		ok = fwrite(text, 1, 40 + klen, f) == 40 + klen &&
		     fwrite(&flags, sizeof(flags), 1, f) == 1 && fwrite(&all, sizeof(all), 1, f) == 1;
	if (f && fclose(f))
		ok = false;
	return ASSERT_TRUE(ok, "the kept filter rewritten");
}

TEST(sfilter_runc_leaves_its_compile_to_the_hook_which_takes_it_only_from_its_own_user)
{
	static const char *const mk[] = {
		"sh", "-c", "mkdir /sync/made; echo status $?", NULL };
	struct oci_bundle b __attribute__((cleanup(oci_bundle_remove))) = { 0 };
	char runc[256], busybox[256], wrap[PATH_MAX], hook[PATH_MAX];
	char profiles[300], kept[PATH_MAX], entry[PATH_MAX + 300], out[8192];
	struct stat st;
	int round;
	SFD_AUTO;

	if (!real_runc(runc, busybox, wrap, hook, &dm))
		return;
	snprintf(kept, sizeof(kept), "%s/compiled", dm.dir);
	/* 0: compiled and kept; 1: the hook takes the kept filter, here made
	 * to allow all; 2: the same file another user's, not taken. */
	for (round = 0; round < 3; round++) {
		test_log("-- container %d\n", round);
		if (!annotated(&b, runc, busybox, mk, profiles, sizeof(profiles)) ||
		    !through_wrapper(&b, wrap, hook, profiles, dm.sock) ||
		    !ASSERT_TRUE(exited(run(&b, out, sizeof(out)), 0), "the workload runs"))
			return;
		ASSERT_TRUE(strstr(out, round == 1 ? "status 0" : "Permission denied") != NULL,
			    round == 1 ? "the hook's filter is the kept one: the gate's call "
			    "is let through" : "mkdir gets the profile's EACCES");
		oci_bundle_remove(&b);
		if (round == 0 &&
		    (!ASSERT_TRUE(kept_filter(kept, entry, sizeof(entry)), "a filter kept") ||
		     !ASSERT_OK(stat(entry, &st), entry) ||
		     !ASSERT_EQ(st.st_mode & 0777, 0600, "the user's alone") ||
		     !allow_all(entry)))
			return;
		if (round == 1 && !ASSERT_OK(chown(entry, 65534, 65534), "chown"))
			return;
	}
	ASSERT_OK(stat(entry, &st), entry);
	ASSERT_EQ(st.st_uid, 0, "the hook kept its own compile in its place");
}

/* --- with a stand-in runc ------------------------------------------------------ */

/* A directory holding a bundle (config.json, no rootfs: runc never gets
 * to it), profiles/, the stand-in runc and what it is given (argv). */
struct fake {
	char dir[64], bundle[128], profiles[128], runc[128], argv[128], log[128], cfg[160];
	char wrap[PATH_MAX], hook[PATH_MAX];
};

static void fake_end(struct fake *f)
{
	const char *const argv[] = { "/bin/rm", "-rf", f->dir, NULL };
	char out[256];

	if (f->dir[0])
		sfd_run(argv, true, 60, out, sizeof(out));
}

#define FAKE_AUTO struct fake f __attribute__((cleanup(fake_end))) = { 0 }

static bool fake_make(struct fake *f)
{
	char script[512], p[200];

	if (!wrapper(f->wrap, sizeof(f->wrap)))
		return false;
	snprintf(f->dir, sizeof(f->dir), "/tmp/sftest-wrap-XXXXXX");
	if (!ASSERT_TRUE(mkdtemp(f->dir) != NULL, "mkdtemp")) {
		f->dir[0] = '\0';
		return false;
	}
	snprintf(f->bundle, sizeof(f->bundle), "%s/bundle", f->dir);
	snprintf(f->profiles, sizeof(f->profiles), "%s/profiles", f->dir);
	snprintf(f->runc, sizeof(f->runc), "%s/runc", f->dir);
	snprintf(f->argv, sizeof(f->argv), "%s/argv", f->dir);
	snprintf(f->log, sizeof(f->log), "%s/log.json", f->dir);
	snprintf(f->cfg, sizeof(f->cfg), "%s/config.json", f->bundle);
	/* Any executable will do as the hook: the stand-in never runs it. */
	snprintf(f->hook, sizeof(f->hook), "%s", f->runc);
	snprintf(script, sizeof(script),
		 "#!/bin/sh\nfor a in \"$@\"; do printf '%%s\\n' \"$a\"; done > %s\n", f->argv);
	snprintf(p, sizeof(p), "%s/errno-mkdir.json", f->profiles);
	if (!ASSERT_OK(mkdir(f->bundle, 0755), "mkdir bundle") ||
	    !ASSERT_OK(mkdir(f->profiles, 0755), "mkdir profiles") ||
	    !write_file(f->runc, script, 0755) || !write_file(p, OCI_PROFILE_ERRNO_MKDIR, 0644))
		return false;
	snprintf(p, sizeof(p), "%s/broken.json", f->profiles);
	return write_file(p, OCI_PROFILE_BROKEN, 0644);
}

/* sfilter-runc with the stand-in and args (NULL-terminated) after its
 * usual options; stderr into err. Its wait status. */
static int fake_run(struct fake *f, const char *const *args, char *err, size_t size)
{
	char runc[200], hook[PATH_MAX + 16], dir[200];
	const char *argv[48] = { f->wrap, runc, hook, dir, "--sfilter-socket=/tmp/sftest.sock" };
	struct sfd_io io = { NULL, 0, NULL, 0, err, size };
	int n = 5;

	snprintf(runc, sizeof(runc), "--sfilter-runc=%s", f->runc);
	snprintf(hook, sizeof(hook), "--sfilter-hook=%s", f->hook);
	snprintf(dir, sizeof(dir), "--sfilter-profile-dir=%s", f->profiles);
	for (; *args && n < 47; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	unlink(f->argv);
	return sfd_run_io(argv, &io, patience());
}

/* What the stand-in was given, one argument a line; NULL when it did not
 * run. */
static char *given(const struct fake *f)
{
	return slurp(f->argv);
}

/* A config.json of annotations (JSON members) and seccomp (linux.seccomp's
 * object, or NULL), as runc spec's is in the parts that matter here. */
static bool config(struct fake *f, const char *annotations, const char *seccomp)
{
	char text[2048];

	snprintf(text, sizeof(text),
		 "{\"ociVersion\": \"1.0.2-dev\", \"process\": {\"args\": [\"sh\"], "
		 "\"capabilities\": {\"bounding\": [\"CAP_CHOWN\", \"CAP_KILL\"]}}, "
		 "\"root\": {\"path\": \"rootfs\"}, \"annotations\": {%s}, "
		 "\"linux\": {\"namespaces\": [{\"type\": \"pid\"}]%s%s}}\n",
		 annotations, seccomp ? ", \"seccomp\": " : "", seccomp ? seccomp : "");
	return write_file(f->cfg, text, 0644);
}

#define DOCKER_LIKE "{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"syscalls\": [{\"names\": " \
	"[\"read\", \"write\", \"exit_group\"], \"action\": \"SCMP_ACT_ALLOW\"}]}"

struct refusal {
	const char *name;
	const char *annotations;   /* config.json's, members; NULL: config.json cut short */
	const char *seccomp;       /* linux.seccomp, or NULL */
	const char *opts[4];       /* the wrapper's options of the case */
	const char *want;          /* the line after "sfilter-runc: " */
};

static const struct refusal refusals[] = {
	{ "config.json that is not JSON", NULL, NULL, { NULL },
	  "config.json: {bundle}/config.json: not JSON: unexpected end of data" },
	{ "a missing profile", "\"io.sfilter.profile\": \"missing.json\"", NULL, { NULL },
	  "io.sfilter.profile: missing.json: no such file in {profiles}" },
	{ "a profile outside the directory", "\"io.sfilter.profile\": \"../runc\"", NULL,
	  { NULL }, "io.sfilter.profile: ../runc: not a file in {profiles} (profiles are named "
	  "there)" },
	{ "a broken profile: its JSON path, not its content",
	  "\"io.sfilter.profile\": \"broken.json\"", NULL, { NULL },
	  "io.sfilter.profile: broken.json: syscalls[0].action: not a profile sfilter takes "
	  "(sfctl compile --profile FILE -o /dev/null says why)" },
	{ "a misspelt annotation", "\"io.sfilter.profle\": \"errno-mkdir.json\"", NULL, { NULL },
	  "config.json: annotations: io.sfilter.profle: unknown annotation (known: "
	  "io.sfilter.profile, io.sfilter.take-seccomp, io.sfilter.mode, io.sfilter.arm, "
	  "io.sfilter.profile-lenient, io.sfilter.record, io.sfilter.record-merge)" },
	{ "an annotation the runtime's options decide otherwise",
	  "\"io.sfilter.mode\": \"shadow\"", NULL, { "--sfilter-profile=errno-mkdir.json" },
	  "config.json: annotations.io.sfilter.mode: \"shadow\": this runtime's options decide "
	  "it (--sfilter-profile=errno-mkdir.json)" },
	{ "take-seccomp of a container without a seccomp profile", "", NULL,
	  { "--sfilter-take-seccomp" },
	  "io.sfilter.take-seccomp: config.json has no linux.seccomp: the container runs "
	  "without a seccomp profile to take (Docker: not with seccomp=unconfined nor "
	  "--privileged)" },
	{ "take-seccomp in shadow mode", "", DOCKER_LIKE,
	  { "--sfilter-take-seccomp", "--sfilter-mode=shadow" },
	  "io.sfilter.take-seccomp with io.sfilter.mode=shadow: the kernel goes on enforcing "
	  "the container's profile first, so sfilter's copy would see none of its denials "
	  "(name the profile with io.sfilter.profile instead, on a container without its "
	  "own)" },
	{ "a gate required beside the container's own profile", "", DOCKER_LIKE,
	  { "--sfilter-profile=errno-mkdir.json", "--sfilter-gate=require" },
	  "--sfilter-gate=require: no gate for this container: the container has a seccomp "
	  "profile of its own (linux.seccomp), which stays in the kernel as it was given" },
	{ "a profile with a seccomp agent of its own", "",
	  "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"listenerPath\": \"/run/agent.sock\"}",
	  { "--sfilter-take-seccomp" },
	  "config.json: linux.seccomp.listenerPath: the container's profile has a seccomp "
	  "agent of its own" },
	{ "restore of a container that asks", "\"io.sfilter.profile\": \"errno-mkdir.json\"",
	  NULL, { "restore" },
	  "restore: the container asks for sfilter, and a checkpoint holds neither its "
	  "cgroup's filter nor a gate's listener" },
};

/* text with {bundle} and {profiles} expanded into out. */
static void expand(const struct fake *f, const char *text, char *out, size_t size)
{
	size_t used = 0;

	while (*text && used + 1 < size) {
		if (!strncmp(text, "{bundle}", 8)) {
			used += (size_t)snprintf(out + used, size - used, "%s", f->bundle);
			text += 8;
		} else if (!strncmp(text, "{profiles}", 10)) {
			used += (size_t)snprintf(out + used, size - used, "%s", f->profiles);
			text += 10;
		} else {
			out[used++] = *text++;
		}
	}
	out[used < size ? used : size - 1] = '\0';
}

/* Whether the bundle holds anything but config.json (a temporary file
 * the rewrite left). */
static bool bundle_clean(const struct fake *f)
{
	DIR *d = opendir(f->bundle);
	struct dirent *e;
	bool clean = true;

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		    strcmp(e->d_name, "config.json"))
			clean = false;
	if (d)
		closedir(d);
	return clean;
}

/* The wrapper's own options misused: usage errors (exit 2, the hint). */
static const struct refusal usage_refusals[] = {
	{ "an unknown option of the wrapper", "", NULL, { "--sfilter-profil=x.json" },
	  "unknown option '--sfilter-profil'" },
	{ "an option without its value", "", NULL, { "--sfilter-mode" },
	  "--sfilter-mode: needs a value" },
	{ "a mode that is none", "", NULL, { "--sfilter-mode=audit" },
	  "--sfilter-mode=audit: not enforce, shadow or complain" },
};

static void refuse(struct fake *f, const struct refusal *c, bool usage)
{
	char want[1024], line[1200], log[1100], err[2048], logf[200], *before, *after, *got;
	const char *args[12];
	struct json_object *o = NULL, *v;
	int n = 0, i, st;

	if (!config(f, c->annotations ? c->annotations : "", c->seccomp))
		return;
	if (!c->annotations && !ASSERT_OK(truncate(f->cfg, 40), "cut config.json short"))
		return;
	snprintf(logf, sizeof(logf), "--log=%s", f->log);
	for (i = 0; i < 4 && c->opts[i] && strcmp(c->opts[i], "restore"); i++)
		args[n++] = c->opts[i];
	args[n++] = logf;
	args[n++] = "--log-format";
	args[n++] = "json";
	args[n++] = i < 4 && c->opts[i] ? "restore" : "create";
	args[n++] = "--bundle";
	args[n++] = f->bundle;
	args[n++] = "sftest";
	args[n] = NULL;
	unlink(f->log);
	before = slurp(f->cfg);
	st = fake_run(f, args, err, sizeof(err));
	expand(f, c->want, want, sizeof(want));
	snprintf(line, sizeof(line), "sfilter-runc: %s\n%s", want, usage ?
		 "Try 'sfilter-runc --sfilter-help' for more information.\n" : "");
	ASSERT_TRUE(exited(st, usage ? 2 : 1), c->name);
	if (!ASSERT_STREQ(err, line, "exactly one line on stderr (and the usage hint)"))
		test_log("case: %s\n", c->name);
	ASSERT_TRUE((got = given(f)) == NULL, "runc was not run");
	free(got);
	after = slurp(f->cfg);
	ASSERT_TRUE(before && after && !strcmp(before, after), "config.json is as it was");
	ASSERT_TRUE(bundle_clean(f), "nothing else in the bundle");
	free(before);
	free(after);
	/* runc's error line in --log, as containerd reads it. */
	got = slurp(f->log);
	snprintf(log, sizeof(log), "sfilter-runc: %s", want);
	if (got)
		o = json_tokener_parse(got);
	ASSERT_TRUE(o && json_object_object_get_ex(o, "level", &v) &&
		    !strcmp(json_object_get_string(v), "error") &&
		    json_object_object_get_ex(o, "time", &v) &&
		    json_object_object_get_ex(o, "msg", &v) &&
		    !strcmp(json_object_get_string(v), log),
		    "the same line in --log, as runc's error");
	json_object_put(o);
	free(got);
}

TEST(sfilter_runc_refuses_what_it_cannot_enforce_with_one_line_and_runs_no_runc)
{
	size_t i;
	FAKE_AUTO;

	if (!fake_make(&f))
		return;
	for (i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
		test_log("-- %s\n", refusals[i].name);
		refuse(&f, &refusals[i], false);
	}
	for (i = 0; i < sizeof(usage_refusals) / sizeof(usage_refusals[0]); i++) {
		test_log("-- %s\n", usage_refusals[i].name);
		refuse(&f, &usage_refusals[i], true);
	}
}

/* The stand-in's arguments, one a line, are exactly want's. */
static void check_given(struct fake *f, const char *const *want, const char *what)
{
	char expect[4096] = "", *got = given(f);
	size_t used = 0;

	for (; *want; want++)
		used += (size_t)snprintf(expect + used, sizeof(expect) - used, "%s\n", *want);
	ASSERT_TRUE(got && !strcmp(got, expect), what);
	if (got && strcmp(got, expect))
		test_log("runc was given:\n%s", got);
	free(got);
}

/* A member of the rewritten config.json, as text ("" when absent). */
static bool config_has(struct json_object *c, const char *const *path, const char *want)
{
	struct json_object *o = c;

	for (; *path && o; path++) {
		char *end;
		long idx = strtol(*path, &end, 10);

		if (!*end && json_object_is_type(o, json_type_array))
			o = json_object_array_get_idx(o, (size_t)idx);
		else if (!json_object_object_get_ex(o, *path, &o))
			o = NULL;
	}
	return o && !strcmp(json_object_get_string(o), want);
}

TEST(sfilter_runc_hands_runc_every_other_command_and_argument_as_they_came)
{
	static const char *const state[] = { "--sfilter-profile=p.json", "--root", "/r",
					     "--log", "/l", "--log-format", "json", "state",
					     "sftest", NULL };
	static const char *const exec_args[] = { "--sfilter-take-seccomp", "--debug", "exec",
						 "sftest", "sh", "-c", "--sfilter-x", NULL };
	static const char *const version[] = { "--sfilter-hook", "/nonexistent", "--version",
						NULL };
	char err[2048], agent[200], hook[PATH_MAX + 64], env[200];
	struct json_object *c;
	char *before, *after;
	FAKE_AUTO;

	if (!fake_make(&f))
		return;
	test_log("-- state, exec, --version: nothing read, the options taken out\n");
	ASSERT_TRUE(exited(fake_run(&f, state, err, sizeof(err)), 0), "state");
	check_given(&f, state + 1, "runc state gets the rest as it came");
	ASSERT_TRUE(exited(fake_run(&f, exec_args, err, sizeof(err)), 0), "exec");
	check_given(&f, exec_args + 1, "runc exec gets the rest, --sfilter-x after the command "
		    "included");
	/* The later --sfilter-hook names a hook that is not there: a command
	 * that creates nothing never looks. */
	ASSERT_TRUE(exited(fake_run(&f, version, err, sizeof(err)), 0), "--version");
	check_given(&f, version + 2, "runc --version");

	test_log("-- create of a container that asks for nothing: config.json untouched\n");
	{
		const char *args[] = { "create", "--bundle", f.bundle, "sftest", NULL };

		if (!config(&f, "\"other\": \"x\"", DOCKER_LIKE))
			return;
		before = slurp(f.cfg);
		ASSERT_TRUE(exited(fake_run(&f, args, err, sizeof(err)), 0), "create");
		check_given(&f, args, "runc create gets its arguments");
		after = slurp(f.cfg);
		ASSERT_TRUE(before && after && !strcmp(before, after), "config.json as it came");
		free(before);
		free(after);
	}

	test_log("-- create with the runtime's profile: the hook and the gate\n");
	{
		const char *args[] = { "--sfilter-profile", "errno-mkdir.json", "create", "-b",
				       f.bundle, "--pid-file", "/p", "sftest", NULL };
		const char *const ann[] = { "annotations", "io.sfilter.profile", NULL };
		const char *const path[] = { "hooks", "createRuntime", "0", "path", NULL };
		const char *const arg2[] = { "hooks", "createRuntime", "0", "args", "2", NULL };
		const char *const envp[] = { "hooks", "createRuntime", "0", "env", "0", NULL };
		const char *const lp[] = { "linux", "seccomp", "listenerPath", NULL };
		const char *const act[] = { "linux", "seccomp", "syscalls", "0", "action", NULL };

		if (!config(&f, "", NULL))
			return;
		ASSERT_TRUE(exited(fake_run(&f, args, err, sizeof(err)), 0), "create");
		test_log("stderr: %s\n", err);
		check_given(&f, args + 2, "runc create gets all but the wrapper's options");
		ASSERT_TRUE(bundle_clean(&f), "no temporary file is left in the bundle");
		c = json_object_from_file(f.cfg);
		snprintf(hook, sizeof(hook), "%s", f.hook);
		snprintf(agent, sizeof(agent), "/tmp/sftest.sock.agent");
		snprintf(env, sizeof(env), "SFILTER_SOCKET=/tmp/sftest.sock");
		ASSERT_TRUE(c != NULL, "config.json is JSON");
		ASSERT_TRUE(config_has(c, ann, "errno-mkdir.json"), "the option's annotation");
		ASSERT_TRUE(config_has(c, path, hook), "the hook at createRuntime");
		ASSERT_TRUE(config_has(c, arg2, f.profiles), "with the profile directory");
		ASSERT_TRUE(config_has(c, envp, env), "and the socket");
		ASSERT_TRUE(config_has(c, lp, agent), "the gate's listener goes to the agent");
		ASSERT_TRUE(config_has(c, act, "SCMP_ACT_NOTIFY"), "the gate notifies mkdir");
		json_object_put(c);
	}

	test_log("-- take-seccomp: the container's own profile kept beside its gate\n");
	{
		const char *args[] = { "--sfilter-take-seccomp", "create", "--bundle", f.bundle,
				       "sftest", NULL };
		const char *const kept[] = { "io.sfilter.seccomp", "defaultAction", NULL };
		const char *const lp[] = { "linux", "seccomp", "listenerPath", NULL };

		if (!config(&f, "", DOCKER_LIKE))
			return;
		ASSERT_TRUE(exited(fake_run(&f, args, err, sizeof(err)), 0), "create");
		test_log("stderr: %s\n", err);
		c = json_object_from_file(f.cfg);
		ASSERT_TRUE(c && config_has(c, kept, "SCMP_ACT_ERRNO"),
			    "config.json's io.sfilter.seccomp is the container's profile");
		ASSERT_TRUE(c && config_has(c, lp, "/tmp/sftest.sock.agent"),
			    "linux.seccomp is its gate");
		json_object_put(c);
	}
}
