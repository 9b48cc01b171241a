// SPDX-License-Identifier: GPL-2.0-only
/*
 * sfilter-oci-hook, the OCI createRuntime hook, run as a runtime runs it:
 * the container's state on stdin, a bundle (a temporary directory with a
 * config.json the test writes; no runc needed), a profile directory
 * (--profile-dir), a private sfilterd (--no-pin). The container's process
 * is a child of the test's, in a cgroup v2 of its own, that waits for a
 * byte on a pipe and then calls getppid(2).
 *
 * Two tables, each run against one daemon, for a daemon costs seconds to
 * start under emulation and a case a fraction of one; every case has a
 * fresh child (and cgroup), and names itself in every check that fails:
 *
 * - Every refusal: exit status 1, nothing on stdout, exactly one line on
 *   stderr saying what failed, and nothing attached to the child (it is
 *   not in `sfctl --json ps`); a refusal of the daemon's is passed on
 *   with its errno and its reason. The line reaches whoever created the
 *   container: a profile is read only from the profile directory (no
 *   host file elsewhere, no symbolic link, no FIFO, nothing too large),
 *   and no line quotes a profile's content.
 * - No sfilter annotation: exit 0, silent, nothing attached.
 * - A profile (or a classic filter file, or config.json's linux.seccomp)
 *   armed now confines the child: its getppid kills it. The profile's
 *   caps conditions are judged by config.json's bounding set, as moby
 *   judges them, not by the hook's own capabilities.
 * - Armed at exec, the default: the child's getppid before its execve
 *   runs, and the image it executes is killed at its first call.
 * - The filter is the cgroup's: a process that joins the container's
 *   cgroup after the hook (as `runc exec` starts one) is confined too.
 *
 * Binaries are found beside the runner ($SF_OCI_HOOK, $SF_SFCTL,
 * $SF_SFILTERD override).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "cgroup.h"
#include "daemon.h"
#include "c2e.h"
#include "progs.h"
#include "wstatus.h"

#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <linux/filter.h>
#include <sys/syscall.h>
#include <sys/wait.h>

SFD_TIER_INDEPENDENT

struct fixture {
	struct sfd *dm;
	char hook[PATH_MAX], sfctl[PATH_MAX];
	const char *bundle;   /* the daemon's temporary directory */
	char profiles[512];   /* the hook's --profile-dir, in the bundle */
	char sock[256];       /* the socket the hook is given: the daemon's */
	char cg[PATH_MAX];    /* the case's cgroup: the container's */
	int n_cg;             /* cgroups made so far: their names */
	pid_t child;          /* the container's process: the case's */
	int go;               /* its pipe: a byte makes it call getppid */
	pid_t other;          /* another process (a joiner, a neighbour) */
	int other_go;
};

static void drop_one(pid_t *pid, int *go)
{
	int status;

	if (*pid > 0) {
		kill(*pid, SIGKILL);
		waitpid(*pid, &status, 0);
	}
	if (*go >= 0)
		close(*go);
	*pid = 0;
	*go = -1;
}

/* The case's processes, if they are still there, killed and reaped; its
 * cgroup removed. */
static void drop_child(struct fixture *f)
{
	drop_one(&f->child, &f->go);
	drop_one(&f->other, &f->other_go);
	if (f->cg[0])
		rmdir(f->cg);
	f->cg[0] = '\0';
}

#define FIXTURE_AUTO(dm) \
	struct fixture f __attribute__((cleanup(drop_child))) = { .dm = &(dm), .go = -1, \
								   .other_go = -1 }

/* "name: what", for an ASSERT's what, which it reads only when it fails:
 * the case that failed. */
static const char *named(const char *name, const char *what)
{
	static char buf[512];

	snprintf(buf, sizeof(buf), "%s: %s", name, what);
	return buf;
}

/* A child that waits for a byte on a pipe, calls getppid and exits 0;
 * with image, it then executes image (build/tests/sf-first-call, whose
 * first call is getppid), after setting *before_exec to 1. */
static pid_t child_then(int *go, const char *image, volatile int *before_exec)
{
	char *const argv[] = { (char *)image, NULL };
	int p[2];
	pid_t pid;
	char c;

	if (!ASSERT_OK(pipe(p), "pipe"))
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(2);
		syscall(SYS_getppid);
		if (!image)
			_exit(0);
		*before_exec = 1;
		execve(image, argv, environ);
		_exit(3);
	}
	close(p[0]);
	*go = p[1];
	return pid;
}

#define KILL_GETPPID_PROFILE \
	"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[" \
	"{\"names\":[\"getppid\"],\"action\":\"SCMP_ACT_KILL_PROCESS\"}]}"
static const char broken_profile[] =
	"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":["
	"{\"names\":[\"getpid\"],\"action\":\"SCMP_ACT_ALLOW\"},"
	"{\"names\":[\"getppid\"],\"action\":\"SCMP_ACT_NOPE\"}]}";
static const char caps_profile[] =
	"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"getppid\"],"
	"\"action\":\"SCMP_ACT_KILL_PROCESS\",\"includes\":{\"caps\":[\"CAP_SYS_ADMIN\"]}}]}";
/* A mistyped key: refused, unless io.sfilter.profile-lenient=true. */
static const char typo_profile[] =
	"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"getppid\"],"
	"\"action\":\"SCMP_ACT_KILL_PROCESS\",\"comments\":\"x\"}]}";
static const char plain_config[] = "{\"ociVersion\":\"1.2.0\",\"process\":{\"args\":[\"sh\"]}}";

/* Writes len bytes of text to the bundle's file name. */
static bool put_bytes(const struct fixture *f, const char *name, const void *text, size_t len)
{
	char p[PATH_MAX];
	int fd;
	bool ok;

	snprintf(p, sizeof(p), "%s/%s", f->bundle, name);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ok = fd >= 0 && write(fd, text, len) == (ssize_t)len;
	if (fd >= 0)
		close(fd);
	return ok;
}

static bool put_file(const struct fixture *f, const char *name, const char *text)
{
	return put_bytes(f, name, text, strlen(text));
}

/* What no line of the hook's may show: a host file's first line. */
#define SECRET "sfsecret:$6$the-first-line-of-a-host-file"

/* A profile of 1 MiB + 1 bytes: one more than the hook reads. */
static bool put_big(const struct fixture *f)
{
	size_t n = (1 << 20) + 1;
	char *big = malloc(n);
	bool ok;

	if (!big)
		return false;
	memset(big, ' ', n);
	memcpy(big, KILL_GETPPID_PROFILE, strlen(KILL_GETPPID_PROFILE));
	ok = put_bytes(f, "profiles/big.json", big, n);
	free(big);
	return ok;
}

/* Root, the hook and sfctl, a private daemon, and a bundle: config.json
 * (no capabilities, no linux.seccomp), secret (a host file outside the
 * profile directory), and the profile directory profiles/: p.json (kills
 * on getppid), bad.json (an unknown action at syscalls[1]), caps.json
 * (kills on getppid given CAP_SYS_ADMIN), kill_getppid.bpf (a classic
 * filter that kills on getppid), secret.bpf (text that is no filter: the
 * secret line), link.json (a symbolic link to secret), fifo (a FIFO),
 * big.json (too large), allow4096.bpf (4096 RET ALLOW: a chain holds
 * three such and a little more). */
static bool setup(struct fixture *f)
{
	struct sock_filter insns[4], *allow;
	char path[PATH_MAX], why[256];
	size_t i;
	bool ok;

	if (!test_need_root("an admin attach"))
		return false;
	if (!TEST_REQUIRE(tcg_root(path, sizeof(path), why, sizeof(why)), NULL, why))
		return false;
	if (!sfd_find_bin("sfilter-oci-hook", "SF_OCI_HOOK", f->hook, sizeof(f->hook)) ||
	    !sfd_find_bin("sfctl", "SF_SFCTL", f->sfctl, sizeof(f->sfctl))) {
		test_skip("no sfilter-oci-hook or sfctl beside the test runner");
		return false;
	}
	if (!sfd_need_bin("sfilterd", "SF_SFILTERD", f->dm->bin, sizeof(f->dm->bin)))
		return false;
	if (!sfd_start(f->dm, false))
		return false;
	f->bundle = f->dm->dir;
	snprintf(f->sock, sizeof(f->sock), "%s", f->dm->sock);
	snprintf(f->profiles, sizeof(f->profiles), "%s/profiles", f->bundle);
	if (!ASSERT_OK(mkdir(f->profiles, 0755) ? -errno : 0, "mkdir profiles"))
		return false;
	progs_kill_on(insns, 4, __NR_getppid);
	snprintf(path, sizeof(path), "%s/kill_getppid.bpf", f->profiles);
	if (!ASSERT_OK(c2e_save_raw(path, insns, 4), "save the classic filter"))
		return false;
	allow = calloc(C2E_MAX_INSNS, sizeof(*allow));
	for (i = 0; allow && i < C2E_MAX_INSNS; i++)
		allow[i] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0x7fff0000U);
	snprintf(path, sizeof(path), "%s/allow4096.bpf", f->profiles);
	ok = allow && c2e_save_raw(path, allow, C2E_MAX_INSNS) == 0;
	free(allow);
	snprintf(path, sizeof(path), "%s/fifo", f->profiles);
	ok = ok && mkfifo(path, 0644) == 0;
	snprintf(path, sizeof(path), "%s/link.json", f->profiles);
	ok = ok && symlink("../secret", path) == 0;
	return ASSERT_TRUE(ok && put_file(f, "config.json", plain_config) &&
			   put_file(f, "secret", SECRET "\n") &&
			   put_file(f, "profiles/secret.bpf", SECRET "\n") &&
			   put_file(f, "profiles/p.json", KILL_GETPPID_PROFILE) &&
			   put_file(f, "profiles/bad.json", broken_profile) &&
			   put_file(f, "profiles/caps.json", caps_profile) &&
			   put_file(f, "profiles/typo.json", typo_profile) && put_big(f),
			   "write the bundle's files");
}

/* A cgroup of the case's own into f->cg, holding pid. */
static bool own_cgroup(struct fixture *f, const char *name, pid_t pid)
{
	char n[64];

	snprintf(n, sizeof(n), "sftest-hook%d", f->n_cg++);
	return tcg_make(f->cg, sizeof(f->cg), n) &&
	       ASSERT_TRUE(tcg_move(f->cg, pid), named(name, "the child into its cgroup"));
}

/* The cgroup v2 path of the calling process, as /proc shows it. */
static void own_cgroup_path(char *out, size_t size)
{
	FILE *fp = fopen("/proc/self/cgroup", "re");
	char line[PATH_MAX + 8];

	snprintf(out, size, "?");
	while (fp && fgets(line, sizeof(line), fp))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(out, size, "%.4000s", line + 3);
		}
	if (fp)
		fclose(fp);
}

/* text with {bundle}, {profiles}, {sock}, {pid}, {other}, {owncg} and
 * {cg} replaced by the bundle, the profile directory, the socket the
 * hook is given, pid, the other process, the test's cgroup and the
 * case's (as /proc shows them). */
static void expand(const struct fixture *f, const char *text, pid_t pid, char *out,
		   size_t size)
{
	static const char *const token[] = { "{bundle}", "{profiles}", "{sock}", "{pid}",
					     "{other}", "{owncg}", "{cg}" };
	char num[16], other[16], owncg[PATH_MAX], root[PATH_MAX], why[64];
	const char *value[] = { f->bundle, f->profiles, f->sock, num, other, owncg, f->cg };
	size_t n = 0, i;

	snprintf(num, sizeof(num), "%d", (int)pid);
	snprintf(other, sizeof(other), "%d", (int)f->other);
	own_cgroup_path(owncg, sizeof(owncg));
	/* The case's cgroup below the cgroup2 mount. */
	if (tcg_root(root, sizeof(root), why, sizeof(why)) == 1 &&
	    !strncmp(f->cg, root, strlen(root)))
		value[6] = f->cg + strlen(root);
	while (*text && n + 1 < size) {
		for (i = 0; i < ARRAY_SIZE(token); i++)
			if (!strncmp(text, token[i], strlen(token[i])))
				break;
		if (i == ARRAY_SIZE(token)) {
			out[n++] = *text++;
			continue;
		}
		n += snprintf(out + n, size - n, "%s", value[i]);
		n = n < size ? n : size - 1;
		text += strlen(token[i]);
	}
	out[n] = '\0';
}

/* The state a runtime writes at createRuntime, with annotations (the
 * members of its object, expanded). */
static void state_of(const struct fixture *f, pid_t pid, const char *annotations,
		     char *buf, size_t size)
{
	char ann[1024];

	expand(f, annotations, pid, ann, sizeof(ann));
	snprintf(buf, size, "{\"ociVersion\":\"1.2.0\",\"id\":\"sftest\",\"status\":\"creating\","
		 "\"pid\":%d,\"bundle\":\"%s\",\"annotations\":{%s}}", (int)pid, f->bundle, ann);
}

struct run {
	int status;
	char out[4096], err[4096];
};

/* Runs the hook (with -v when verbose) on state, for the case name. */
static bool run_hook(const struct fixture *f, const char *name, const char *state,
		     bool verbose, struct run *r)
{
	const char *argv[] = { f->hook, "--profile-dir", f->profiles, verbose ? "-v" : NULL,
			       NULL };
	struct sfd_io io = { state, strlen(state), r->out, sizeof(r->out),
			     r->err, sizeof(r->err) };

	setenv("SFILTER_SOCKET", f->sock, 1);
	r->status = sfd_run_io(argv, &io, test_is_emulated() ? 300 : 30);
	test_log("%s: hook <<< %.1000s\nexit status 0x%x, stdout \"%s\", stderr \"%s\"\n",
		 name, state, r->status, r->out, r->err);
	return ASSERT_TRUE(r->status != -1, named(name, "the hook ran (and did not hang)"));
}

/* Whether sfctl --json ps lists process pid: 1, 0, or -1 when it failed. */
static int listed(const struct fixture *f, pid_t pid)
{
	const char *argv[] = { f->sfctl, "--socket", f->dm->sock, "--json", "ps", NULL };
	static char out[1 << 16];
	struct sfd_io io = { NULL, 0, out, sizeof(out), NULL, 0 };
	struct json_object *o, *tasks, *t, *v;
	int st = sfd_run_io(argv, &io, 30), found = 0;
	size_t i;

	o = st == 0 ? json_tokener_parse(out) : NULL;
	if (!o || !json_object_object_get_ex(o, "tasks", &tasks)) {
		json_object_put(o);
		return -1;
	}
	for (i = 0; i < json_object_array_length(tasks); i++) {
		t = json_object_array_get_idx(tasks, i);
		if (json_object_object_get_ex(t, "tgid", &v) && json_object_get_int(v) == pid)
			found = 1;
	}
	json_object_put(o);
	return found;
}

/* A child released: how it ended (a wait status). */
static int release(pid_t *pid, int *go, const char *name)
{
	int status = -1;

	ASSERT_EQ(write(*go, "x", 1), 1, named(name, "release the child"));
	ASSERT_EQ(waitpid(*pid, &status, 0), *pid, named(name, "waitpid"));
	close(*go);
	*go = -1;
	*pid = 0;
	return status;
}

#define PROFILE_NOW "\"io.sfilter.profile\":\"p.json\",\"io.sfilter.arm\":\"now\""

/* What a refused case gives the hook; the state is that of the case's
 * child, in a cgroup of its own, unless said otherwise. */
enum given {
	ANNOTATIONS,      /* a state with text, the annotations' members */
	STDIN,            /* text as it is (expanded) */
	STDIN_OVER_1_MIB, /* a JSON object of 1 MiB and 2 bytes */
	GONE_PID,         /* annotations, in the state of a pid that is gone */
	NO_DAEMON,        /* annotations; the hook's socket has no daemon */
	FULL_CHAIN,       /* annotations; the cgroup has three allow4096.bpf already */
	HOOKS_CGROUP,     /* annotations; the child in the test's (and hook's) cgroup */
	SHARED_CGROUP,    /* annotations; another process in the child's cgroup */
};

struct refusal {
	const char *name;
	enum given given;
	const char *text;
	const char *want;   /* the line after "sfilter-oci-hook: " (expanded) */
};

static const struct refusal refusals[] = {
	{ "stdin that is not JSON", STDIN, "{\"ociVersion\":\"1.2.0\",\"pid\":",
	  "stdin: not JSON: unexpected end of data" },
	{ "a state larger than 1 MiB", STDIN_OVER_1_MIB, NULL, "stdin: more than 1048576 bytes" },
	{ "a state without a pid", STDIN, "{\"ociVersion\":\"1.2.0\",\"id\":\"sftest\",\"bundle\":"
	  "\"{bundle}\",\"annotations\":{\"io.sfilter.profile\":\"p.json\"}}", "stdin: no \"pid\"" },
	{ "a pid that is gone", GONE_PID, PROFILE_NOW, "pid {pid}: no such process" },
	{ "a profile that does not exist", ANNOTATIONS,
	  "\"io.sfilter.profile\":\"sftest.json\"",
	  "io.sfilter.profile: sftest.json: no such file in {profiles}" },
	/* The line reaches the container's creator: a host file is never
	 * read, through any name, and a profile's content never shown. */
	{ "a host file by its path", ANNOTATIONS, "\"io.sfilter.profile\":\"/etc/shadow\"",
	  "io.sfilter.profile: /etc/shadow: not a file in {profiles} (profiles are named there)" },
	{ "a host file outside the directory", ANNOTATIONS,
	  "\"io.sfilter.profile\":\"{bundle}/secret\"",
	  "io.sfilter.profile: {bundle}/secret: not a file in {profiles} (profiles are named "
	  "there)" },
	{ "a host file by a name that climbs out", ANNOTATIONS,
	  "\"io.sfilter.profile\":\"../secret\"",
	  "io.sfilter.profile: ../secret: not a file in {profiles} (profiles are named there)" },
	{ "a host file through a path that climbs out", ANNOTATIONS,
	  "\"io.sfilter.profile\":\"{profiles}/../secret\"",
	  "io.sfilter.profile: {profiles}/../secret: not a file in {profiles} (profiles are "
	  "named there)" },
	{ "a symbolic link in the directory to a host file", ANNOTATIONS,
	  "\"io.sfilter.profile\":\"link.json\"",
	  "io.sfilter.profile: link.json: a symbolic link on the way ({profiles} takes none)" },
	{ "a FIFO, which would keep the hook waiting", ANNOTATIONS,
	  "\"io.sfilter.profile\":\"fifo\"", "io.sfilter.profile: fifo: not a regular file" },
	{ "a profile larger than 1 MiB", ANNOTATIONS, "\"io.sfilter.profile\":\"big.json\"",
	  "io.sfilter.profile: big.json: more than 1048576 bytes" },
	{ "text that is no filter: its line, not its content", ANNOTATIONS,
	  "\"io.sfilter.profile\":\"secret.bpf\"",
	  "io.sfilter.profile: secret.bpf: neither a profile (JSON) nor a classic filter: line 1 "
	  "(classic2ebpf check FILE says why)" },
	{ "a broken profile: its JSON path, not its content", ANNOTATIONS,
	  "\"io.sfilter.profile\":\"bad.json\"",
	  "io.sfilter.profile: bad.json: syscalls[1].action: not a profile sfilter takes "
	  "(sfctl compile --profile FILE -o /dev/null says why)" },
	{ "a profile with a mistyped key: its JSON path", ANNOTATIONS,
	  "\"io.sfilter.profile\":\"typo.json\"",
	  "io.sfilter.profile: typo.json: syscalls[0].comments: not a profile sfilter takes "
	  "(sfctl compile --profile FILE -o /dev/null says why)" },
	{ "profile-lenient that is not true or false", ANNOTATIONS,
	  "\"io.sfilter.profile\":\"typo.json\",\"io.sfilter.profile-lenient\":\"yes\"",
	  "io.sfilter.profile-lenient: \"yes\": not true or false" },
	{ "both a profile and take-seccomp", ANNOTATIONS,
	  "\"io.sfilter.profile\":\"p.json\",\"io.sfilter.take-seccomp\":\"true\"",
	  "io.sfilter.profile and io.sfilter.take-seccomp=true: set one of them, not both" },
	{ "an unknown mode", ANNOTATIONS,
	  "\"io.sfilter.profile\":\"p.json\",\"io.sfilter.mode\":\"audit\"",
	  "io.sfilter.mode: \"audit\": not enforce, shadow or complain" },
	{ "a misspelt sfilter annotation", ANNOTATIONS, "\"io.sfilter.profle\":\"p.json\"",
	  "io.sfilter.profle: unknown annotation (known: io.sfilter.profile, "
	  "io.sfilter.take-seccomp, io.sfilter.mode, io.sfilter.arm, io.sfilter.profile-lenient, "
	  "io.sfilter.record, io.sfilter.record-merge)" },
	/* A recording names a file of the record directory, and enforces
	 * nothing. */
	{ "a recording to a path", ANNOTATIONS, "\"io.sfilter.record\":\"../../etc/cron.d/x\"",
	  "io.sfilter.record: a file name in the record directory (up to 200 letters, digits, "
	  "'.', '_' and '-', not starting with '.')" },
	{ "a recording to a hidden file", ANNOTATIONS, "\"io.sfilter.record\":\".sfilter-x.json\"",
	  "io.sfilter.record: a file name in the record directory (up to 200 letters, digits, "
	  "'.', '_' and '-', not starting with '.')" },
	{ "a recording with a profile", ANNOTATIONS,
	  "\"io.sfilter.record\":\"r.json\",\"io.sfilter.profile\":\"p.json\"",
	  "io.sfilter.record runs the container with nothing enforced: not with "
	  "io.sfilter.profile, io.sfilter.take-seccomp or io.sfilter.mode" },
	{ "a recording in a mode", ANNOTATIONS,
	  "\"io.sfilter.record\":\"r.json\",\"io.sfilter.mode\":\"complain\"",
	  "io.sfilter.record runs the container with nothing enforced: not with "
	  "io.sfilter.profile, io.sfilter.take-seccomp or io.sfilter.mode" },
	/* The filter goes to the container's cgroup: never to one that holds
	 * anything else. */
	{ "a container in the runtime's cgroup", HOOKS_CGROUP, PROFILE_NOW,
	  "pid {pid}: its cgroup {owncg} holds sfilter-oci-hook too (the runtime's): the "
	  "container has no cgroup of its own" },
	{ "a container whose cgroup holds another process", SHARED_CGROUP, PROFILE_NOW,
	  "pid {pid}: its cgroup {cg} holds process {other} too: the container has no cgroup "
	  "of its own" },
	{ "sfilterd not running", NO_DAEMON, PROFILE_NOW,
	  "sfilterd is not running at {sock}" },
	/* The daemon's refusal, its errno and its reason: the cgroup's chain
	 * would be longer than a chain may be. */
	{ "the daemon's refusal", FULL_CHAIN, "\"io.sfilter.profile\":\"allow4096.bpf\"",
	  "sfilterd at {sock}: Cannot allocate memory: the chain would exceed 32768 "
	  "instructions" },
};

/* sfctl attach --cgroup f->cg --filter allow4096.bpf. */
static bool fill_chain(struct fixture *f, const char *name)
{
	char filter[PATH_MAX + 32];
	const char *argv[] = { f->sfctl, "--socket", f->dm->sock, "attach", "--cgroup", f->cg,
			       "--filter", filter, NULL };
	struct sfd_io io = { NULL, 0, NULL, 0, NULL, 0 };
	int i;

	snprintf(filter, sizeof(filter), "%s/allow4096.bpf", f->profiles);
	for (i = 0; i < 3; i++)
		if (!ASSERT_EQ(sfd_run_io(argv, &io, test_is_emulated() ? 300 : 30), 0,
			       named(name, "sfctl attach --cgroup: a long filter")))
			return false;
	return true;
}

/* One refused case, with a fresh child: exit 1, stdout empty, stderr
 * exactly the case's line (with nothing of the secret file in it),
 * nothing attached to the child (or, when its cgroup had filters first,
 * nothing taken from it). */
static void refuse(struct fixture *f, const struct refusal *c)
{
	static char state[(1 << 20) + 3];
	char want[1024], line[1100];
	struct run r;
	pid_t pid;
	int status;

	snprintf(f->sock, sizeof(f->sock), "%s", f->dm->sock);
	f->child = pid = child_then(&f->go, NULL, NULL);
	if (!ASSERT_TRUE(pid > 0, named(c->name, "fork the container's process")))
		return;
	if (c->given != HOOKS_CGROUP && !own_cgroup(f, c->name, pid))
		return;
	if (c->given == GONE_PID) {
		fflush(stdout);
		pid = fork();
		if (pid == 0)
			_exit(0);
		if (!ASSERT_TRUE(pid > 0 && waitpid(pid, &status, 0) == pid,
				 named(c->name, "a pid that is gone")))
			return;
	} else if (c->given == NO_DAEMON) {
		/* The fixture's daemon runs; the hook is sent elsewhere. */
		snprintf(f->sock, sizeof(f->sock), "%s/none.sock", f->bundle);
	} else if (c->given == FULL_CHAIN) {
		if (!fill_chain(f, c->name))
			return;
	} else if (c->given == SHARED_CGROUP) {
		f->other = child_then(&f->other_go, NULL, NULL);
		if (!ASSERT_TRUE(f->other > 0 && tcg_move(f->cg, f->other),
				 named(c->name, "another process in the cgroup")))
			return;
	}
	if (c->given == STDIN) {
		expand(f, c->text, pid, state, sizeof(state));
	} else if (c->given == STDIN_OVER_1_MIB) {
		memset(state, ' ', sizeof(state) - 1);
		state[0] = '{';
		state[sizeof(state) - 2] = '}';
		state[sizeof(state) - 1] = '\0';
	} else {
		state_of(f, pid, c->text, state, sizeof(state));
	}
	expand(f, c->want, pid, want, sizeof(want));
	snprintf(line, sizeof(line), "sfilter-oci-hook: %s\n", want);
	if (!run_hook(f, c->name, state, false, &r))
		return;
	ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 1,
		    named(c->name, "exit status 1"));
	ASSERT_STREQ(r.err, line, named(c->name, "exactly one line on stderr"));
	ASSERT_TRUE(!strstr(r.err, "sfsecret") && !strstr(r.err, "root:"),
		    named(c->name, "no host file's content on stderr"));
	ASSERT_STREQ(r.out, "", named(c->name, "nothing on stdout"));
	if (c->given == FULL_CHAIN)
		ASSERT_EQ(listed(f, f->child), 1, named(c->name, "still confined: in sfctl ps"));
	else
		ASSERT_EQ(listed(f, f->child), 0,
			  named(c->name, "nothing attached: the child is not in sfctl ps"));
}

TEST(oci_hook_refuses_bad_input_with_one_precise_line_and_attaches_nothing)
{
	size_t i;
	SFD_AUTO;
	FIXTURE_AUTO(dm);

	if (!setup(&f))
		return;
	for (i = 0; i < ARRAY_SIZE(refusals); i++) {
		refuse(&f, &refusals[i]);
		drop_child(&f);
	}
}

/* How the case's child ends once released. */
enum fate {
	LIVES,             /* its getppid runs; it exits 0 */
	KILLED_ON_GETPPID,
	KILLED_AFTER_EXEC, /* its getppid runs, the image it executes is killed */
};

struct attach {
	const char *name;
	const char *config;      /* config.json; NULL: plain_config */
	const char *annotations; /* the members of the state's (expanded) */
	bool verbose;            /* the hook with -v */
	bool attached;           /* the child in sfctl ps; with -v the daemon's note */
	enum fate fate;
	bool joiner;             /* a process that joins the cgroup after the
				    hook, as `runc exec` starts one, meets the
				    same fate */
};

#define CAPS_NOW "\"io.sfilter.profile\":\"caps.json\",\"io.sfilter.arm\":\"now\""

static const struct attach attaches[] = {
	{ "no sfilter annotation", NULL, "\"org.example.team\":\"a\"", true, false, LIVES,
	  false },
	/* containerd gives a pod's sandbox (pause) container the pod's
	 * annotations; the workload's profile is not for it. */
	{ "a kubernetes sandbox container", NULL,
	  PROFILE_NOW ",\"io.kubernetes.cri.container-type\":\"sandbox\"", true, false, LIVES,
	  false },
	{ "a profile that kills on getppid", NULL, PROFILE_NOW, false, true, KILLED_ON_GETPPID,
	  true },
	{ "a profile named by its path in the directory", NULL,
	  "\"io.sfilter.profile\":\"{profiles}/p.json\",\"io.sfilter.arm\":\"now\"", false, true,
	  KILLED_ON_GETPPID, false },
	{ "a profile with a mistyped key, read leniently", NULL,
	  "\"io.sfilter.profile\":\"typo.json\",\"io.sfilter.profile-lenient\":\"true\","
	  "\"io.sfilter.arm\":\"now\"", false, true, KILLED_ON_GETPPID, false },
	{ "a classic filter file", NULL, "\"io.sfilter.profile\":\"kill_getppid.bpf\","
	  "\"io.sfilter.arm\":\"now\"", false, true, KILLED_ON_GETPPID, false },
	{ "the container's linux.seccomp",
	  "{\"ociVersion\":\"1.2.0\",\"linux\":{\"seccomp\":" KILL_GETPPID_PROFILE "}}",
	  "\"io.sfilter.take-seccomp\":\"true\",\"io.sfilter.arm\":\"now\"", true, true,
	  KILLED_ON_GETPPID, false },
	/* includes.caps: judged by config.json's bounding set (moby's), not
	 * by the hook's own capabilities (root's: every one). */
	{ "caps: CAP_SYS_ADMIN effective, not in the bounding set: the rule is left out",
	  "{\"process\":{\"capabilities\":{\"bounding\":[\"CAP_CHOWN\",\"CAP_KILL\"],"
	  "\"effective\":[\"CAP_SYS_ADMIN\"]}}}", CAPS_NOW, false, true, LIVES, false },
	{ "caps: CAP_SYS_ADMIN in the bounding set",
	  "{\"process\":{\"capabilities\":{\"bounding\":[\"CAP_SYS_ADMIN\"]}}}", CAPS_NOW,
	  false, true, KILLED_ON_GETPPID, false },
	/* io.sfilter.arm absent (exec): the runtime's init, here the child
	 * before its execve, is not judged; the image it executes is, from
	 * its first call. So for a process that joins later (runc exec's
	 * init, then the command it executes). */
	{ "armed at the workload's execve by default", NULL, "\"io.sfilter.profile\":\"p.json\"",
	  true, true, KILLED_AFTER_EXEC, true },
};

/* A released child's end as fate says; who names it. */
static void check_fate(const char *name, const char *who, int status, enum fate fate,
		       int before_exec)
{
	char what[200], buf[64];

	test_log("%s: %s: %s\n", name, who, wstatus_str(status, buf, sizeof(buf)));
	switch (fate) {
	case LIVES:
		snprintf(what, sizeof(what), "%s: its getppid runs", who);
		ASSERT_EQ(status, 0, named(name, what));
		break;
	case KILLED_ON_GETPPID:
		snprintf(what, sizeof(what), "%s: killed on getppid", who);
		ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, named(name, what));
		break;
	case KILLED_AFTER_EXEC:
		snprintf(what, sizeof(what), "%s: its getppid before the execve ran", who);
		ASSERT_EQ(before_exec, 1, named(name, what));
		/* SIGSYS where the kernel's own action runs (lsm tier). */
		snprintf(what, sizeof(what), "%s: the executed image is killed at its first "
			 "call, getppid", who);
		ASSERT_TRUE(wstatus_killed_by(status, SIGKILL) || wstatus_killed_by(status, SIGSYS),
			    named(name, what));
		break;
	}
}

/* One case, with a fresh child in a cgroup of its own (that executes
 * image for KILLED_AFTER_EXEC): exit 0, nothing on stdout, nothing on
 * stderr but with -v after an attach the daemon's note (one line), the
 * child listed as c->attached says, and its fate; and the joiner's. */
static void attach(struct fixture *f, const struct attach *c, const char *image,
		   volatile int *before_exec)
{
	const char *img = c->fate == KILLED_AFTER_EXEC ? image : NULL;
	char state[2048];
	struct run r;
	int status;

	before_exec[0] = before_exec[1] = 0;
	if (!ASSERT_TRUE(put_file(f, "config.json", c->config ? c->config : plain_config),
			 named(c->name, "write config.json")))
		return;
	f->child = child_then(&f->go, img, &before_exec[0]);
	if (!ASSERT_TRUE(f->child > 0, named(c->name, "fork the container's process")) ||
	    !own_cgroup(f, c->name, f->child))
		return;
	state_of(f, f->child, c->annotations, state, sizeof(state));
	if (!run_hook(f, c->name, state, c->verbose, &r) ||
	    !ASSERT_EQ(r.status, 0, named(c->name, "exit status 0")))
		return;
	ASSERT_STREQ(r.out, "", named(c->name, "nothing on stdout"));
	if (c->verbose && c->attached)
		ASSERT_TRUE(!strncmp(r.err, "sfilter-oci-hook: container sftest: filter ", 43) &&
			    strchr(r.err, '\n') == r.err + strlen(r.err) - 1,
			    named(c->name, "-v: one line, the daemon's note"));
	else
		ASSERT_STREQ(r.err, "", named(c->name, c->verbose ? "nothing on stderr, even "
					      "with -v" : "nothing on stderr"));
	if (c->fate == KILLED_AFTER_EXEC)
		ASSERT_TRUE(strstr(r.err, "from its next execve") != NULL,
			    named(c->name, "-v: the note says the filter waits for the execve"));
	ASSERT_EQ(listed(f, f->child), c->attached, named(c->name, c->attached ?
		  "the child is in sfctl ps" : "nothing attached: the child is not in sfctl ps"));
	if (c->joiner) {
		f->other = child_then(&f->other_go, img, &before_exec[1]);
		if (!ASSERT_TRUE(f->other > 0 && tcg_move(f->cg, f->other),
				 named(c->name, "a process joins the cgroup")))
			return;
		ASSERT_EQ(listed(f, f->other), 1, named(c->name, "the joiner is in sfctl ps"));
	}
	status = release(&f->child, &f->go, c->name);
	check_fate(c->name, "the child", status, c->fate, before_exec[0]);
	if (c->joiner) {
		status = release(&f->other, &f->other_go, c->name);
		check_fate(c->name, "the joiner", status, c->fate, before_exec[1]);
	}
}

TEST(oci_hook_attaches_as_the_annotations_say)
{
	volatile int *before_exec = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
					 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char image[PATH_MAX];
	size_t i;
	SFD_AUTO;
	FIXTURE_AUTO(dm);

	if (!ASSERT_TRUE(before_exec != MAP_FAILED, "mmap"))
		return;
	if (!setup(&f))
		goto out;
	if (!sfd_find_bin("tests/sf-first-call", NULL, image, sizeof(image)) &&
	    !sfd_find_bin("sf-first-call", NULL, image, sizeof(image))) {
		test_fail(__FILE__, __LINE__, "no sf-first-call beside the runner (make "
			  "build/tests/sf-first-call)");
		goto out;
	}
	for (i = 0; i < ARRAY_SIZE(attaches); i++) {
		attach(&f, &attaches[i], image, before_exec);
		drop_child(&f);
	}
out:
	munmap((void *)before_exec, 4096);
}
