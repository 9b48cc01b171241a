// SPDX-License-Identifier: GPL-2.0
/*
 * sfilter-oci-hook, the OCI createRuntime hook, run as a runtime runs it:
 * the container's state on stdin, a bundle (a temporary directory with a
 * config.json the test writes; no runc needed), a private sfilterd
 * (--no-pin). The container's process is a child of the test's that
 * waits for a byte on a pipe and then calls getppid(2).
 *
 * Two tables, each run against one daemon, for a daemon costs seconds to
 * start under emulation and a case a fraction of one; every case has a
 * fresh child, and names itself in every check that fails:
 *
 * - Every refusal: exit status 1, nothing on stdout, exactly one line on
 *   stderr saying what failed, and nothing attached to the child (it is
 *   not in `sfctl --json ps`); a refusal of the daemon's is passed on
 *   with its errno and its reason.
 * - No sfilter annotation: exit 0, silent, nothing attached.
 * - A profile (or a classic filter file, or config.json's linux.seccomp)
 *   armed now confines the child: its getppid kills it. The profile's
 *   caps conditions are judged by config.json's bounding set, as moby
 *   judges them, not by the hook's own capabilities.
 * - Armed at exec, the default: the child's getppid before its execve
 *   runs, and the image it executes is killed at its first call.
 *
 * Binaries are found beside the runner ($SF_OCI_HOOK, $SF_SFCTL,
 * $SF_SFILTERD override).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
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
#include <linux/filter.h>
#include <sys/syscall.h>
#include <sys/wait.h>

SFD_TIER_INDEPENDENT

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct fixture {
	struct sfd *dm;
	char hook[PATH_MAX], sfctl[PATH_MAX];
	const char *bundle;   /* the daemon's temporary directory */
	char sock[256];       /* the socket the hook is given: the daemon's */
	pid_t child;          /* the container's process: the case's */
	int go;               /* its pipe: a byte makes it call getppid */
};

/* The case's child, if it is still there, killed and reaped. */
static void drop_child(struct fixture *f)
{
	int status;

	if (f->child > 0) {
		kill(f->child, SIGKILL);
		waitpid(f->child, &status, 0);
	}
	if (f->go >= 0)
		close(f->go);
	f->child = 0;
	f->go = -1;
}

#define FIXTURE_AUTO(dm) \
	struct fixture f __attribute__((cleanup(drop_child))) = { .dm = &(dm), .go = -1 }

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
static const char plain_config[] = "{\"ociVersion\":\"1.2.0\",\"process\":{\"args\":[\"sh\"]}}";

/* Writes text to the bundle's file name. */
static bool put_file(const struct fixture *f, const char *name, const char *text)
{
	char p[PATH_MAX];
	int fd;
	bool ok;

	snprintf(p, sizeof(p), "%s/%s", f->bundle, name);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ok = fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	if (fd >= 0)
		close(fd);
	return ok;
}

/* Root, the hook and sfctl, a private daemon, and a bundle: config.json
 * (no capabilities, no linux.seccomp), p.json (kills on getppid),
 * bad.json (an unknown action at syscalls[1]), caps.json (kills on
 * getppid given CAP_SYS_ADMIN) and kill_getppid.bpf (a classic filter
 * that kills on getppid). */
static bool setup(struct fixture *f)
{
	struct sock_filter insns[4];
	char path[PATH_MAX];

	if (geteuid() != 0) {
		test_skip("needs root (an admin attach)");
		return false;
	}
	if (!sfd_find_bin("sfilter-oci-hook", "SF_OCI_HOOK", f->hook, sizeof(f->hook)) ||
	    !sfd_find_bin("sfctl", "SF_SFCTL", f->sfctl, sizeof(f->sfctl))) {
		test_skip("no sfilter-oci-hook or sfctl beside the test runner");
		return false;
	}
	if (!sfd_find_bin("sfilterd", "SF_SFILTERD", f->dm->bin, sizeof(f->dm->bin))) {
		test_skip("no sfilterd beside the test runner");
		return false;
	}
	if (!sfd_start(f->dm, false))
		return false;
	f->bundle = f->dm->dir;
	snprintf(f->sock, sizeof(f->sock), "%s", f->dm->sock);
	progs_kill_on(insns, 4, __NR_getppid);
	snprintf(path, sizeof(path), "%s/kill_getppid.bpf", f->bundle);
	return ASSERT_OK(c2e_save_raw(path, insns, 4), "save the classic filter") &&
	       ASSERT_TRUE(put_file(f, "config.json", plain_config) &&
			   put_file(f, "p.json", KILL_GETPPID_PROFILE) &&
			   put_file(f, "bad.json", broken_profile) &&
			   put_file(f, "caps.json", caps_profile), "write the bundle's files");
}

/* text with {bundle}, {sock} and {pid} replaced by the bundle, the socket
 * the hook is given and pid. */
static void expand(const struct fixture *f, const char *text, pid_t pid, char *out,
		   size_t size)
{
	static const char *const token[] = { "{bundle}", "{sock}", "{pid}" };
	char num[16];
	const char *value[] = { f->bundle, f->sock, num };
	size_t n = 0, i;

	snprintf(num, sizeof(num), "%d", (int)pid);
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
	const char *argv[] = { f->hook, verbose ? "-v" : NULL, NULL };
	struct sfd_io io = { state, strlen(state), r->out, sizeof(r->out),
			     r->err, sizeof(r->err) };

	setenv("SFILTER_SOCKET", f->sock, 1);
	r->status = sfd_run_io(argv, &io, test_is_emulated() ? 300 : 30);
	test_log("%s: hook <<< %.1000s\nexit status 0x%x, stdout \"%s\", stderr \"%s\"\n",
		 name, state, r->status, r->out, r->err);
	return ASSERT_TRUE(r->status != -1, named(name, "the hook ran"));
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

/* The child released: how it ended (a wait status). */
static int release(struct fixture *f, const char *name)
{
	int status = -1;

	ASSERT_EQ(write(f->go, "x", 1), 1, named(name, "release the child"));
	ASSERT_EQ(waitpid(f->child, &status, 0), f->child, named(name, "waitpid"));
	close(f->go);
	f->go = -1;
	f->child = 0;
	return status;
}

#define PROFILE_NOW "\"io.sfilter.profile\":\"p.json\",\"io.sfilter.arm\":\"now\""

/* What a refused case gives the hook; the state is that of the case's
 * child unless said otherwise. */
enum given {
	ANNOTATIONS,      /* a state with text, the annotations' members */
	STDIN,            /* text as it is (expanded) */
	STDIN_OVER_1_MIB, /* a JSON object of 1 MiB and 2 bytes */
	GONE_PID,         /* annotations, in the state of a pid that is gone */
	NO_DAEMON,        /* annotations; the hook's socket has no daemon */
	CONFINED,         /* annotations; the child already confined (PROFILE_NOW) */
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
	  "\"io.sfilter.profile\":\"/nonexistent/sftest.json\"",
	  "io.sfilter.profile: /nonexistent/sftest.json: No such file or directory" },
	{ "a broken profile, named by its JSON path", ANNOTATIONS,
	  "\"io.sfilter.profile\":\"bad.json\"",
	  "io.sfilter.profile: {bundle}/bad.json: syscalls[1].action: unknown action "
	  "\"SCMP_ACT_NOPE\"" },
	{ "both a profile and take-seccomp", ANNOTATIONS,
	  "\"io.sfilter.profile\":\"p.json\",\"io.sfilter.take-seccomp\":\"true\"",
	  "io.sfilter.profile and io.sfilter.take-seccomp=true: set one of them, not both" },
	{ "an unknown mode", ANNOTATIONS,
	  "\"io.sfilter.profile\":\"p.json\",\"io.sfilter.mode\":\"audit\"",
	  "io.sfilter.mode: \"audit\": not enforce, shadow or complain" },
	{ "a misspelt sfilter annotation", ANNOTATIONS, "\"io.sfilter.profle\":\"p.json\"",
	  "io.sfilter.profle: unknown annotation (known: io.sfilter.profile, "
	  "io.sfilter.take-seccomp, io.sfilter.mode, io.sfilter.arm)" },
	{ "sfilterd not running", NO_DAEMON, PROFILE_NOW,
	  "sfilterd at {sock}: not running (No such file or directory)" },
	/* The daemon's refusal, its errno and its reason: a process a filter
	 * already judges is not given one that waits for its execve. */
	{ "the daemon's refusal", CONFINED, "\"io.sfilter.profile\":\"p.json\"",
	  "sfilterd at {sock}: Device or resource busy: thread {pid} already runs under "
	  "filters that judge it: arming at exec would suspend them until then; attach "
	  "without it" },
};

/* One refused case, with a fresh child: exit 1, stdout empty, stderr
 * exactly the case's line, nothing attached to the child (or, when it was
 * confined first, nothing taken from it). */
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
	} else if (c->given == CONFINED) {
		state_of(f, pid, PROFILE_NOW, state, sizeof(state));
		if (!run_hook(f, c->name, state, false, &r) ||
		    !ASSERT_EQ(r.status, 0, named(c->name, "armed now: attached first")))
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
	ASSERT_STREQ(r.out, "", named(c->name, "nothing on stdout"));
	if (c->given == CONFINED)
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
};

#define CAPS_NOW "\"io.sfilter.profile\":\"caps.json\",\"io.sfilter.arm\":\"now\""

static const struct attach attaches[] = {
	{ "no sfilter annotation", NULL, "\"org.example.team\":\"a\"", true, false, LIVES },
	/* containerd gives a pod's sandbox (pause) container the pod's
	 * annotations; the workload's profile is not for it. */
	{ "a kubernetes sandbox container", NULL,
	  PROFILE_NOW ",\"io.kubernetes.cri.container-type\":\"sandbox\"", true, false, LIVES },
	{ "a profile that kills on getppid", NULL, PROFILE_NOW, false, true, KILLED_ON_GETPPID },
	{ "a classic filter file", NULL, "\"io.sfilter.profile\":\"{bundle}/kill_getppid.bpf\","
	  "\"io.sfilter.arm\":\"now\"", false, true, KILLED_ON_GETPPID },
	{ "the container's linux.seccomp",
	  "{\"ociVersion\":\"1.2.0\",\"linux\":{\"seccomp\":" KILL_GETPPID_PROFILE "}}",
	  "\"io.sfilter.take-seccomp\":\"true\",\"io.sfilter.arm\":\"now\"", true, true,
	  KILLED_ON_GETPPID },
	/* includes.caps: judged by config.json's bounding set (moby's), not
	 * by the hook's own capabilities (root's: every one). */
	{ "caps: CAP_SYS_ADMIN effective, not in the bounding set: the rule is left out",
	  "{\"process\":{\"capabilities\":{\"bounding\":[\"CAP_CHOWN\",\"CAP_KILL\"],"
	  "\"effective\":[\"CAP_SYS_ADMIN\"]}}}", CAPS_NOW, false, true, LIVES },
	{ "caps: CAP_SYS_ADMIN in the bounding set",
	  "{\"process\":{\"capabilities\":{\"bounding\":[\"CAP_SYS_ADMIN\"]}}}", CAPS_NOW,
	  false, true, KILLED_ON_GETPPID },
	/* io.sfilter.arm absent (exec): the runtime's init, here the child
	 * before its execve, is not judged; the image it executes is, from
	 * its first call. */
	{ "armed at the workload's execve by default", NULL, "\"io.sfilter.profile\":\"p.json\"",
	  true, true, KILLED_AFTER_EXEC },
};

/* One case, with a fresh child (that executes image for
 * KILLED_AFTER_EXEC): exit 0, nothing on stdout, nothing on stderr but
 * with -v after an attach the daemon's note (one line), the child listed
 * as c->attached says, and its fate. */
static void attach(struct fixture *f, const struct attach *c, const char *image,
		   volatile int *before_exec)
{
	char state[2048], buf[64];
	struct run r;
	int status;

	*before_exec = 0;
	if (!ASSERT_TRUE(put_file(f, "config.json", c->config ? c->config : plain_config),
			 named(c->name, "write config.json")))
		return;
	f->child = child_then(&f->go, c->fate == KILLED_AFTER_EXEC ? image : NULL, before_exec);
	if (!ASSERT_TRUE(f->child > 0, named(c->name, "fork the container's process")))
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
		ASSERT_TRUE(strstr(r.err, "judging from its next execve") != NULL,
			    named(c->name, "-v: the note says the filter waits for the execve"));
	ASSERT_EQ(listed(f, f->child), c->attached, named(c->name, c->attached ?
		  "the child is in sfctl ps" : "nothing attached: the child is not in sfctl ps"));
	status = release(f, c->name);
	test_log("%s: the child: %s\n", c->name, wstatus_str(status, buf, sizeof(buf)));
	switch (c->fate) {
	case LIVES:
		ASSERT_EQ(status, 0, named(c->name, "the child's getppid runs"));
		break;
	case KILLED_ON_GETPPID:
		ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
			    named(c->name, "the child is killed on getppid"));
		break;
	case KILLED_AFTER_EXEC:
		ASSERT_EQ(*before_exec, 1, named(c->name, "its getppid before the execve ran"));
		/* SIGSYS where the kernel's own action runs (lsm tier). */
		ASSERT_TRUE(wstatus_killed_by(status, SIGKILL) ||
			    wstatus_killed_by(status, SIGSYS), named(c->name, "the executed "
			    "image is killed at its first call, getppid"));
		break;
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
