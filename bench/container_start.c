// SPDX-License-Identifier: GPL-2.0-only
/*
 * What sfilter adds to a container's start: `runc run` of a busybox `true`
 * container, from the fork of the runtime to its reap, in ms. Variants:
 *   bare     plain runc, no seccomp
 *   hook     runc with sfilter-oci-hook at createRuntime and the container
 *            annotated io.sfilter.profile: the hook has sfilterd attach
 *            the profile to the container's cgroup
 *   gate     sfilter-runc --sfilter-profile in front of runc, as Docker's
 *            runtimeArgs run it: config.json rewritten with the hook and
 *            the profile's gate as linux.seccomp (listenerPath: sfilterd's
 *            agent socket); runc installs the gate, hands its listener to
 *            sfilterd and runs the hook
 *   seccomp  plain runc with the profile as linux.seccomp, as Docker hands
 *            it to runc: what users compare sfilter with
 *   nullhook plain runc with a createRuntime hook that does nothing
 *            (/bin/true): the floor of any OCI hook, which the hook
 *            variant's ratio cannot go below
 * The profile is Docker's default (BENCH_DOCKER_PROFILE) for Docker's
 * default caps, which every variant's config.json gives the container
 * ("podman" as the argument: Podman's; a path: that file). For seccomp,
 * the entries whose includes/excludes the container meets, the native
 * archMap entry's architectures, no engine-only keys (moby's setup).
 *
 * Per sample: the wall time, and the CPU time, which the load of a shared
 * machine changes less: runc's tree (wait4's rusage: runc init, the
 * container, the hook, the wrapper before its exec of runc) and the
 * daemon's threads (schedstat before and after).
 *
 * One temporary directory holds the rootfs (Debian's static busybox), a
 * bundle per variant (config.json from `runc spec`), the profile
 * directory, runc's --root and the private sfilterd (bench_util.h,
 * --no-pin: nothing pinned, nothing to tear down but its directory).
 * Each sample has a container id of its own; the foreground `runc run`
 * deletes it, a leftover is deleted (untimed), and the directory goes at
 * the end.
 *
 * INTERLEAVED: one sample of each variant per round, the order rotated
 * from round to round. Before each sample the bench waits (untimed, at
 * most 5 s) until the daemon holds no more tracepoint links than when it
 * started: it detaches the dispatcher at its idle check (every 2 s) once
 * nothing it confined is left, and a sample run while it is still
 * attached would pay sfilter's floor on every call. So each sample starts
 * from an idle sfilterd (its fork, exec, exit and cgroup-attach programs
 * stay attached for every variant), and hook and gate pay for attaching
 * the dispatcher: the first container on an idle machine. A round where
 * links were left over is dropped, every variant's sample alike.
 *
 * Never asserts; prints Markdown: per variant n, min, p50, p90, and the
 * median over rounds of the ratio to bare and of the difference (paired);
 * the goal: hook and gate at most 1.05x bare (wall, paired median).
 * A variant that cannot run is one line "SKIP variant: why".
 *
 * Usage: container_start [-n ROUNDS] [-d SFILTERD] [-v] [docker|podman|FILE]   (root)
 */
#define _GNU_SOURCE
#include "bench_util.h"
#include "proto.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#define PROG "container_start"
#define MAX_ROUNDS 1000
#define RUN_TIMEOUT_S 60
#define PROFILE_NAME "default.json"
#define NULL_HOOK "/bin/true"

enum { V_BARE, V_HOOK, V_GATE, V_SECCOMP, V_NULLHOOK, V_COUNT };
static const char *const vnames[V_COUNT] = { "bare", "hook", "gate", "seccomp", "nullhook" };
static const char *const vdesc[V_COUNT] = {
	"runc run, no sfilter",
	"runc run, sfilter-oci-hook attaches the profile to the cgroup",
	"sfilter-runc: the hook, and the profile's gate as linux.seccomp",
	"runc run, the profile as linux.seccomp (kernel seccomp)",
	"runc run, a createRuntime hook that does nothing (/bin/true)",
};

static struct {
	char dir[64];                 /* everything of the bench's */
	char runc[PATH_MAX], hook[PATH_MAX], wrap[PATH_MAX];
	char profile[PATH_MAX];       /* the profile's file */
	const char *profile_title, *caps;
	char skip[V_COUNT][160];      /* why a variant does not run ("": it does) */
	int verbose;
} b = { .profile = BENCH_DOCKER_PROFILE, .profile_title = "Docker's",
	.caps = BENCH_DOCKER_CAPS };

static struct bench_daemon dm = { .pid = -1 };
static double wall[V_COUNT][MAX_ROUNDS], cpu[V_COUNT][MAX_ROUNDS], dcpu[V_COUNT][MAX_ROUNDS];
static int tainted[MAX_ROUNDS];

#define ONLY(v) (1U << (v))
#define SF_VARIANTS (ONLY(V_HOOK) | ONLY(V_GATE))
#define ALL_VARIANTS (ONLY(V_COUNT) - 1)

/* The variants in mask do not run, for why (unless they have a why). */
static void skip(unsigned int mask, const char *why)
{
	for (int v = 0; v < V_COUNT; v++)
		if ((mask & ONLY(v)) && !b.skip[v][0])
			snprintf(b.skip[v], sizeof(b.skip[v]), "%s", why);
}

/* ---- processes ----------------------------------------------------------------- */

/* Runs argv with stdin from /dev/null and stdout and stderr into log
 * (truncated; NULL: /dev/null), killed after RUN_TIMEOUT_S. Its wait
 * status (-1: no fork); into t (may be NULL) the wall time from the fork
 * to the reap and the CPU time of the process and of every descendant it
 * reaped (runc: its init, the container, the hooks), in ms. */
static int run(const char *const *argv, const char *log, double t[2])
{
	double t0 = bench_now_ns();
	struct rusage ru = { 0 };
	int st = -1, waited = 0;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int in = open("/dev/null", O_RDWR);
		int out = log ? open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600) : in;

		setpgid(0, 0);
		dup2(in, 0);
		dup2(out, 1);
		dup2(out, 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	while (wait4(pid, &st, WNOHANG, &ru) == 0) {
		if (waited++ > RUN_TIMEOUT_S * 1000) {
			kill(-pid, SIGKILL);
			wait4(pid, &st, 0, &ru);
			break;
		}
		usleep(1000);
	}
	if (t) {
		t[0] = (bench_now_ns() - t0) / 1e6;
		t[1] = ru.ru_utime.tv_sec * 1e3 + ru.ru_utime.tv_usec / 1e3 +
		       ru.ru_stime.tv_sec * 1e3 + ru.ru_stime.tv_usec / 1e3;
	}
	return st;
}

/* The file's first lines on stderr, to say why a run failed. */
static void show_log(const char *log)
{
	char line[512];
	FILE *f = fopen(log, "r");
	int n = 0;

	while (f && n++ < 8 && fgets(line, sizeof(line), f))
		fprintf(stderr, "  | %s", line);
	if (f)
		fclose(f);
}

/* A binary beside this one (../NAME from build/bench/) into out. */
static bool beside(const char *name, char *out, size_t size)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n < 0)
		return false;
	self[n] = '\0';
	*strrchr(self, '/') = '\0';
	if (snprintf(out, size, "%s/../%s", self, name) >= (int)size)
		return false;
	if (access(out, X_OK) == 0 && realpath(out, self)) {
		snprintf(out, size, "%s", self);
		return true;
	}
	return false;
}

static bool find_runc(void)
{
	static const char *const paths[] = { "/usr/sbin/runc", "/usr/bin/runc", "/sbin/runc",
					     "/usr/local/sbin/runc", "/usr/local/bin/runc", NULL };

	for (int i = 0; paths[i]; i++)
		if (access(paths[i], X_OK) == 0) {
			snprintf(b.runc, sizeof(b.runc), "%s", paths[i]);
			return true;
		}
	return false;
}

/* ---- the rootfs and the bundles --------------------------------------------------- */

/* DIR/name into out. */
static bool path(char *out, size_t size, const char *name)
{
	return snprintf(out, size, "%s/%s", b.dir, name) < (int)size;
}

/* DIR/rootfs with busybox and the links the workload needs. Whether a
 * copy of it runs there is the check that it is static: a dynamic one
 * finds no interpreter in the rootfs. */
static bool make_rootfs(void)
{
	static const char *const dirs[] = { "rootfs", "rootfs/bin", "rootfs/proc", "rootfs/dev",
					    "rootfs/sys", "rootfs/tmp", NULL };
	char p[PATH_MAX], log[PATH_MAX];
	int st;

	for (int i = 0; dirs[i]; i++)
		if (!path(p, sizeof(p), dirs[i]) || mkdir(p, 0755))
			return false;
	path(p, sizeof(p), "rootfs/bin/busybox");
	path(log, sizeof(log), "out.txt");
	st = run((const char *const[]){ "/bin/cp", "/bin/busybox", p, NULL }, log, NULL);
	if (st || !path(p, sizeof(p), "rootfs/bin/true") || symlink("busybox", p))
		return false;
	path(p, sizeof(p), "rootfs");
	fflush(stdout);
	if (fork() == 0) {
		if (chroot(p) == 0 && chdir("/") == 0)
			execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	return wait(&st) > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* v, added to o at key in place of what was there. */
static struct json_object *put(struct json_object *o, const char *key, struct json_object *v)
{
	json_object_object_add(o, key, v);
	return v;
}

static struct json_object *strings(const char *const *s)
{
	struct json_object *a = json_object_new_array();

	for (; *s; s++)
		json_object_array_add(a, json_object_new_string(*s));
	return a;
}

/* The caps list ("CHOWN,KILL") as CAP_ names. */
static struct json_object *cap_array(const char *list)
{
	struct json_object *a = json_object_new_array();
	char buf[512], *save, *tok;

	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char cap[64];

		snprintf(cap, sizeof(cap), "CAP_%s", tok);
		json_object_array_add(a, json_object_new_string(cap));
	}
	return a;
}

/* ---- the bundles ----------------------------------------------------------------- */

/* DIR/NAME/config.json from DIR/base's, changed for variant v. */
static bool make_bundle(int v, struct json_object *seccomp)
{
	char p[PATH_MAX], rootfs[PATH_MAX], env[PATH_MAX + 32], pdir[PATH_MAX];
	struct json_object *c, *proc, *caps, *h;

	path(p, sizeof(p), "base/config.json");
	c = json_object_from_file(p);
	if (!c)
		return false;
	path(rootfs, sizeof(rootfs), "rootfs");
	proc = json_object_object_get(c, "process");
	if (!proc || !json_object_object_get(c, "root") || !json_object_object_get(c, "linux")) {
		json_object_put(c);
		return false;
	}
	json_object_object_add(json_object_object_get(c, "root"), "path",
			       json_object_new_string(rootfs));
	json_object_object_add(proc, "terminal", json_object_new_boolean(0));
	json_object_object_add(proc, "args", strings((const char *const[]){ "true", NULL }));
	/* The engine's caps, which the hook and the seccomp variant judge
	 * the profile's includes.caps against alike. */
	caps = json_object_new_object();
	json_object_object_add(caps, "bounding", cap_array(b.caps));
	json_object_object_add(caps, "effective", cap_array(b.caps));
	json_object_object_add(caps, "permitted", cap_array(b.caps));
	json_object_object_add(proc, "capabilities", caps);
	path(pdir, sizeof(pdir), "profiles");
	if (v == V_SECCOMP)
		json_object_object_add(json_object_object_get(c, "linux"), "seccomp",
				       json_object_get(seccomp));
	if (v == V_HOOK) {
		json_object_object_add(put(c, "annotations", json_object_new_object()),
				       "io.sfilter.profile", json_object_new_string(PROFILE_NAME));
		snprintf(env, sizeof(env), "%s=%s", SF_PROTO_SOCKET_ENV, dm.sock);
		h = json_object_new_object();
		json_object_object_add(h, "path", json_object_new_string(b.hook));
		json_object_object_add(h, "args", strings((const char *const[]){
			"sfilter-oci-hook", "--profile-dir", pdir, NULL }));
		json_object_object_add(h, "env", strings((const char *const[]){ env, NULL }));
		json_object_object_add(h, "timeout", json_object_new_int(30));
		json_object_array_add(put(put(c, "hooks", json_object_new_object()),
					  "createRuntime", json_object_new_array()), h);
	}
	if (v == V_NULLHOOK) {
		h = json_object_new_object();
		json_object_object_add(h, "path", json_object_new_string(NULL_HOOK));
		json_object_object_add(h, "args", strings((const char *const[]){ "true", NULL }));
		json_object_array_add(put(put(c, "hooks", json_object_new_object()),
					  "createRuntime", json_object_new_array()), h);
	}
	path(p, sizeof(p), vnames[v]);
	if (mkdir(p, 0755)) {
		json_object_put(c);
		return false;
	}
	/* config.orig: what each gate sample starts from (the wrapper
	 * rewrites config.json). */
	for (int i = 0; i < 2; i++) {
		snprintf(p, sizeof(p), "%s/%s/%s", b.dir, vnames[v],
			 i ? "config.orig" : "config.json");
		if (json_object_to_file_ext(p, c, JSON_C_TO_STRING_PLAIN)) {
			json_object_put(c);
			return false;
		}
	}
	json_object_put(c);
	return true;
}

/* The profile directory with the profile, runc's spec, and a bundle per
 * variant that can run. false (all skip) on error. */
static bool make_bundles(void)
{
	char p[PATH_MAX], log[PATH_MAX];
	struct json_object *seccomp = NULL;
	bool ok = true;
	int st;

	path(log, sizeof(log), "out.txt");
	path(p, sizeof(p), "profiles");
	if (mkdir(p, 0755))
		return false;
	path(p, sizeof(p), "profiles/" PROFILE_NAME);
	/* A copy: the hook reads a profile only as a regular file in its
	 * profile directory. */
	st = run((const char *const[]){ "/bin/cp", b.profile, p, NULL }, log, NULL);
	path(p, sizeof(p), "base");
	if (st || mkdir(p, 0755) ||
	    run((const char *const[]){ b.runc, "spec", "--bundle", p, NULL }, log, NULL)) {
		show_log(log);
		return false;
	}
	if (!b.skip[V_SECCOMP][0] && !(seccomp = bench_moby_seccomp(b.profile, b.caps)))
		skip(ONLY(V_SECCOMP), "the profile does not parse");
	for (int v = 0; v < V_COUNT && ok; v++)
		if (!b.skip[v][0])
			ok = make_bundle(v, seccomp);
	json_object_put(seccomp);
	return ok;
}

/* ---- one sample ------------------------------------------------------------------ */

/* Copies DIR/NAME/config.orig over config.json. */
static bool restore_config(int v)
{
	char from[PATH_MAX], to[PATH_MAX];

	snprintf(from, sizeof(from), "%s/%s/config.orig", b.dir, vnames[v]);
	snprintf(to, sizeof(to), "%s/%s/config.json", b.dir, vnames[v]);
	return run((const char *const[]){ "/bin/cp", from, to, NULL }, NULL, NULL) == 0;
}

/* Deletes container id if runc kept it. */
static void delete_left(const char *state, const char *id)
{
	char p[PATH_MAX];

	if (snprintf(p, sizeof(p), "%s/%s", state, id) < (int)sizeof(p) && access(p, F_OK) == 0)
		run((const char *const[]){ b.runc, "--root", state, "delete", "--force", id, NULL },
		    NULL, NULL);
}

/* Of the daemon (0 when none runs): with links, how many of its links
 * put tasks on the syscall slow path (raw tracepoint and tracing links,
 * not its task iterators), from its descriptors (it pins nothing), which
 * other users' links, coming and going beside the bench, do not blur;
 * else the CPU time its threads have had, in ms. */
static double daemon_scan(bool links)
{
	char p[PATH_MAX], line[128];
	struct dirent *e;
	double sum = 0;
	DIR *d;

	if (dm.pid <= 0)
		return 0;
	snprintf(p, sizeof(p), "/proc/%d/%s", (int)dm.pid, links ? "fd" : "task");
	d = opendir(p);
	while (d && (e = readdir(d))) {
		ssize_t len = -1;
		FILE *f;

		snprintf(p, sizeof(p), "/proc/%d/fd/%s", (int)dm.pid, e->d_name);
		if (links && ((len = readlink(p, line, sizeof(line) - 1)) < 0 ||
			      (line[len] = '\0', strcmp(line, "anon_inode:bpf_link"))))
			continue;
		snprintf(p, sizeof(p), links ? "/proc/%d/fdinfo/%s" : "/proc/%d/task/%s/schedstat",
			 (int)dm.pid, e->d_name);
		f = fopen(p, "r");
		while (f && fgets(line, sizeof(line), f))
			if (!links)
				sum += strtod(line, NULL) / 1e6;
			else if (!strncmp(line, "link_type:", 10))
				sum += strstr(line, "raw_tracepoint") || strstr(line, "tracing");
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return sum;
}

/* `runc run` of variant v's bundle as container id: the wall time, the
 * CPU time (runc's tree's and the daemon's) and the daemon's share in ms
 * into t[0..2]; false when the run failed (its output on stderr). */
static bool sample(int v, const char *id, double t[3])
{
	char state[PATH_MAX], bundle[PATH_MAX], log[PATH_MAX];
	char o_runc[PATH_MAX + 16], o_hook[PATH_MAX + 16], o_dir[PATH_MAX + 24];
	char o_sock[sizeof(dm.sock) + 20];
	const char *wrap[] = { b.wrap, o_runc, o_hook, o_dir, o_sock,
			       "--sfilter-profile=" PROFILE_NAME };
	const char *argv[16] = { b.runc };
	double cpu0 = daemon_scan(false);
	int n = 1, st;

	path(state, sizeof(state), "state");
	path(bundle, sizeof(bundle), vnames[v]);
	path(log, sizeof(log), "out.txt");
	if (v == V_GATE) {
		if (!restore_config(v))
			return false;
		snprintf(o_runc, sizeof(o_runc), "--sfilter-runc=%s", b.runc);
		snprintf(o_hook, sizeof(o_hook), "--sfilter-hook=%s", b.hook);
		snprintf(o_dir, sizeof(o_dir), "--sfilter-profile-dir=%s/profiles", b.dir);
		snprintf(o_sock, sizeof(o_sock), "--sfilter-socket=%s", dm.sock);
		memcpy(argv, wrap, sizeof(wrap));
		n = BENCH_ARRAY_SIZE(wrap);
	}
	memcpy(argv + n, (const char *[]){ "--root", state, "run", "--bundle", bundle, id, NULL },
	       7 * sizeof(*argv));
	st = run(argv, log, t);
	/* The daemon's share ends with the container: the gate's listener
	 * dropped, the cgroup's filter released at its removal. */
	t[2] = daemon_scan(false) - cpu0;
	t[1] += t[2];
	delete_left(state, id);
	if (st != 0) {
		fprintf(stderr, PROG ": %s: runc run %s: status 0x%x\n", vnames[v], id, st);
		show_log(log);
	}
	return st == 0;
}

/* Waits (untimed) until the daemon holds no more such links than when
 * idle: false when it still does after about 5 s. */
static bool settle(int idle)
{
	for (int i = 0; i < 500; i++) {
		if ((int)daemon_scan(true) <= idle)
			return true;
		usleep(10000);
	}
	return false;
}

/* ---- set-up and report ----------------------------------------------------------- */

static void profile_arg(const char *arg)
{
	if (!strcmp(arg, "podman")) {
		snprintf(b.profile, sizeof(b.profile), "%s", BENCH_PODMAN_PROFILE);
		b.profile_title = "Podman's";
		b.caps = BENCH_PODMAN_CAPS;
	} else if (strcmp(arg, "docker")) {
		snprintf(b.profile, sizeof(b.profile), "%s", arg);
		b.profile_title = arg;
	}
}

/* What can run here; the daemon started when hook or gate can. */
static void setup(double timeout_s, struct sf_profile *prof)
{
	char why[200];
	int err;

	if (geteuid())
		return skip(ALL_VARIANTS, "not root");
	if (!find_runc())
		return skip(ALL_VARIANTS, "runc is not installed");
	if (access("/bin/busybox", X_OK))
		return skip(ALL_VARIANTS, "no /bin/busybox (install busybox-static)");
	snprintf(b.dir, sizeof(b.dir), "/tmp/sf-cstart.XXXXXX");
	if (!mkdtemp(b.dir)) {
		b.dir[0] = '\0';
		return skip(ALL_VARIANTS, "mkdtemp failed");
	}
	if (!make_rootfs())
		return skip(ALL_VARIANTS, "busybox does not run in a rootfs of its own "
				"(not static: install busybox-static)");
	if (bench_profile(PROG, b.profile, b.caps, prof))
		skip(ALL_VARIANTS & ~ONLY(V_BARE), "the profile does not compile");
	if (access(NULL_HOOK, X_OK))
		skip(ONLY(V_NULLHOOK), "no " NULL_HOOK);
	if (!beside("sfilter-oci-hook", b.hook, sizeof(b.hook)))
		skip(SF_VARIANTS, "no sfilter-oci-hook beside the bench");
	if (!beside("sfilter-runc", b.wrap, sizeof(b.wrap)))
		skip(ONLY(V_GATE), "no sfilter-runc beside the bench");
	if (!b.skip[V_HOOK][0] || !b.skip[V_GATE][0]) {
		if (bench_daemon_find(&dm)) {
			skip(SF_VARIANTS, "no sfilterd beside the bench");
		} else if ((err = bench_daemon_start(&dm, timeout_s))) {
			snprintf(why, sizeof(why), "sfilterd did not start: %s", strerror(-err));
			skip(SF_VARIANTS, why);
		}
	}
	if (!make_bundles())
		skip(ALL_VARIANTS, "could not make the bundles");
}

static void teardown(void)
{
	char p[PATH_MAX];

	if (dm.dir[0])
		bench_daemon_stop(&dm);
	if (!b.dir[0])
		return;
	path(p, sizeof(p), "");
	run((const char *const[]){ "/bin/rm", "-rf", "--one-file-system", p, NULL }, NULL, NULL);
}

/* Lines of the file at path (whole lines up to 64 KiB) holding s. */
static int count_lines(const char *path, const char *s)
{
	static char line[65536];
	FILE *f = fopen(path, "r");
	int n = 0;

	while (f && fgets(line, sizeof(line), f))
		n += strstr(line, s) != NULL;
	if (f)
		fclose(f);
	return n;
}

/* One row of the main table: series x of variant v, against bare's. */
static void row(int v, double x[][MAX_ROUNDS], int rounds, const char *unit)
{
	printf("| %s | %s | %s | %d | %.1f | %.1f | %.1f |", vnames[v], unit, vdesc[v],
	       bench_valid(x[v], rounds), bench_pct(x[v], rounds, 0),
	       bench_median(x[v], rounds), bench_pct(x[v], rounds, 0.9));
	if (v == V_BARE)
		printf(" 1 | 0 |\n");
	else
		printf(" %.3f | %+.1f |\n", bench_paired_median(x[v], x[V_BARE], rounds),
		       bench_paired_diff_median(x[v], x[V_BARE], rounds));
}

static void report(int rounds, int dropped, const struct sf_profile *prof, int idle_links)
{
	char tier[32] = "not started";
	struct utsname u;
	int v;

	uname(&u);
	if (dm.dir[0])
		bench_daemon_tier(&dm, tier, sizeof(tier));
	printf("\n# Container start: `runc run` of busybox `true`, kernel %s%s, daemon tier %s, "
	       "%s default profile (%zu insns) for caps %s, %d rounds, interleaved, each "
	       "sample from an idle sfilterd\n\n", u.release,
	       bench_emulated() ? BENCH_EMULATED_NOTE : "", tier, b.profile_title,
	       prof->len, b.caps, rounds);
	bench_md_head("variant | time | what | n | min ms | p50 ms | p90 ms | "
		      "vs bare (median paired) | +ms (median paired)", 3);
	for (v = 0; v < V_COUNT; v++)
		if (!b.skip[v][0])
			row(v, wall, rounds, "wall");
	/* What the start costs the machine, which the load of a shared one
	 * changes less than the wall time: runc's tree (wait4's rusage of
	 * everything it reaped) and the daemon's threads. */
	for (v = 0; v < V_COUNT; v++)
		if (!b.skip[v][0])
			row(v, cpu, rounds, "CPU");
	printf("\n");
	bench_md_head("goal | target | median paired ratio (wall) | verdict", -1);
	for (v = V_HOOK; v <= V_GATE; v++) {
		double r = bench_paired_median(wall[v], wall[V_BARE], rounds);

		if (!b.skip[v][0])
			printf("| container start with sfilter (%s) / without | <= 1.05 | %.3f | "
			       "%s |\n", vnames[v], r, bench_verdict(r, 1.05));
	}
	for (v = V_HOOK; v <= V_GATE && !b.skip[V_SECCOMP][0]; v++)
		if (!b.skip[v][0])
			printf("| %s / seccomp (for comparison) | | %.3f | |\n", vnames[v],
			       bench_paired_median(wall[v], wall[V_SECCOMP], rounds));
	if (!b.skip[V_NULLHOOK][0])
		printf("| a hook that does nothing / without (the floor of any hook) | | %.3f "
		       "(+%.1f ms) | |\n", bench_paired_median(wall[V_NULLHOOK], wall[V_BARE], rounds),
		       bench_paired_diff_median(wall[V_NULLHOOK], wall[V_BARE], rounds));
	if (dm.dir[0])
		printf("\nsfilterd: %d admin attaches (the hook's); its share of the CPU time "
		       "(median) hook %.1f ms, gate %.1f ms; %d tracepoint links held while "
		       "idle (fork, exec, exit, cgroup attach: every variant has them)\n",
		       count_lines(dm.log, "\"sfilterd\":\"attach\""), bench_median(dcpu[V_HOOK], rounds),
		       bench_median(dcpu[V_GATE], rounds), idle_links);
	if (dropped)
		printf("warning: %d of %d rounds dropped: sfilter's programs were still attached "
		       "5 s after the previous sample\n", dropped, rounds);
}

int main(int argc, char **argv)
{
	bool emulated = bench_emulated();
	int rounds = emulated ? 5 : 30, opt, r, i, v, idle = 0, dropped = 0;
	struct sf_profile prof = { 0 };
	char id[64], p[PATH_MAX];
	double t[3];

	while ((opt = getopt(argc, argv, "n:d:v")) != -1) {
		if (opt == 'n') {
			rounds = atoi(optarg);
		} else if (opt == 'd') {
			snprintf(dm.bin, sizeof(dm.bin), "%s", optarg);
		} else if (opt == 'v') {
			b.verbose = 1;
		} else {
			fprintf(stderr, "usage: " PROG " [-n ROUNDS] [-d SFILTERD] [-v] "
				"[docker|podman|FILE]\n");
			return 2;
		}
	}
	if (rounds < 1 || rounds > MAX_ROUNDS || optind + 1 < argc) {
		fprintf(stderr, PROG ": rounds 1..%d, at most one profile\n", MAX_ROUNDS);
		return 2;
	}
	if (optind < argc)
		profile_arg(argv[optind]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	bench_bare_check(PROG);
	setup(emulated ? 120 : 30, &prof);
	idle = (int)daemon_scan(true);
	for (v = 0; v < V_COUNT; v++)
		if (b.skip[v][0])
			printf("SKIP %s: %s\n", vnames[v], b.skip[v]);
	if (b.skip[V_BARE][0]) {
		teardown();
		sf_profile_free(&prof);
		return 0;
	}

	/* Warm-up, not counted: each variant once (page cache, the
	 * daemon's first chain). A variant that fails here is skipped. */
	for (v = 0; v < V_COUNT; v++) {
		if (b.skip[v][0])
			continue;
		snprintf(id, sizeof(id), "sfcs-%d-warm-%d", (int)getpid(), v);
		settle(idle);
		if (!sample(v, id, t))
			skip(ONLY(v), "its warm-up run failed (see above)");
		else if (v == V_GATE && (!path(p, sizeof(p), "gate/config.json") ||
					 !count_lines(p, "\"listenerPath\"")))
			skip(ONLY(v), "sfilter-runc gave the container no gate");
		if (b.skip[v][0])
			printf("SKIP %s: %s\n", vnames[v], b.skip[v]);
	}

	for (r = 0; r < rounds; r++) {
		for (i = 0; i < V_COUNT; i++) {
			v = (i + r) % V_COUNT;
			wall[v][r] = cpu[v][r] = dcpu[v][r] = -1;
			if (b.skip[v][0])
				continue;
			if (!settle(idle))
				tainted[r] = 1;
			snprintf(id, sizeof(id), "sfcs-%d-%d-%d", (int)getpid(), r, v);
			if (sample(v, id, t)) {
				wall[v][r] = t[0];
				cpu[v][r] = t[1];
				dcpu[v][r] = t[2];
			}
		}
		if (b.verbose) {
			printf("round %3d:", r);
			for (v = 0; v < V_COUNT; v++)
				printf(" %s %.1f (CPU %.1f)", vnames[v], wall[v][r], cpu[v][r]);
			printf("%s\n", tainted[r] ? " (links left over)" : "");
		}
	}
	dropped = bench_drop_rounds(tainted, rounds, &wall[0][0], V_COUNT, MAX_ROUNDS);
	bench_drop_rounds(tainted, rounds, &cpu[0][0], V_COUNT, MAX_ROUNDS);
	bench_drop_rounds(tainted, rounds, &dcpu[0][0], V_COUNT, MAX_ROUNDS);
	report(rounds, dropped, &prof, idle);
	teardown();
	sf_profile_free(&prof);
	return 0;
}
