// SPDX-License-Identifier: GPL-2.0
/*
 * sfilter-oci-hook, the OCI createRuntime hook, run as a runtime runs it:
 * the container's state on stdin, a bundle (a temporary directory with a
 * config.json the test writes; no runc needed), a private sfilterd
 * (--no-pin). The container's process is a child of the test's that
 * waits for a byte on a pipe and then calls getppid(2).
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

struct fixture {
	struct sfd *dm;
	char hook[PATH_MAX], sfctl[PATH_MAX];
	const char *bundle;   /* the daemon's temporary directory */
	char sock[256];       /* the socket the hook is given: the daemon's */
	pid_t child;          /* the container's process */
	int go;               /* its pipe: a byte makes it call getppid */
};

#define FIXTURE_AUTO(dm) \
	struct fixture f __attribute__((cleanup(fixture_cleanup))) = { .dm = &(dm), .go = -1 }

static void fixture_cleanup(struct fixture *f)
{
	int status;

	if (f->child > 0) {
		kill(f->child, SIGKILL);
		waitpid(f->child, &status, 0);
	}
	if (f->go >= 0)
		close(f->go);
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

static pid_t waiting_child(int *go)
{
	return child_then(go, NULL, NULL);
}

static const char kill_getppid_profile[] =
	"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":["
	"{\"names\":[\"getppid\"],\"action\":\"SCMP_ACT_KILL_PROCESS\"}]}";
static const char broken_profile[] =
	"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":["
	"{\"names\":[\"getpid\"],\"action\":\"SCMP_ACT_ALLOW\"},"
	"{\"names\":[\"getppid\"],\"action\":\"SCMP_ACT_NOPE\"}]}";
static const char plain_config[] = "{\"ociVersion\":\"1.2.0\",\"process\":{\"args\":[\"sh\"]}}";

static bool put_file(const struct fixture *f, const char *name, const char *text,
		     char *path, size_t size);

/* Root, the hook and sfctl, a private daemon, a waiting child, and a
 * bundle: config.json (no capabilities, no linux.seccomp), p.json (kills
 * on getppid) and bad.json (an unknown action at syscalls[1]). */
static bool setup(struct fixture *f)
{
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
	if (!put_file(f, "config.json", plain_config, NULL, 0) ||
	    !put_file(f, "p.json", kill_getppid_profile, NULL, 0) ||
	    !put_file(f, "bad.json", broken_profile, NULL, 0))
		return false;
	f->child = waiting_child(&f->go);
	return ASSERT_TRUE(f->child > 0, "fork the container's process");
}

/* Writes text to the bundle's file name; its path into path. */
static bool put_file(const struct fixture *f, const char *name, const char *text,
		     char *path, size_t size)
{
	char p[PATH_MAX];
	int fd;
	bool ok;

	snprintf(p, sizeof(p), "%s/%s", f->bundle, name);
	if (path)
		snprintf(path, size, "%s", p);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ok = fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	if (fd >= 0)
		close(fd);
	return ASSERT_TRUE(ok, name);
}

/* The state a runtime writes at createRuntime, with annotations (the
 * members of its object). */
static void state_of(const struct fixture *f, pid_t pid, const char *annotations,
		     char *buf, size_t size)
{
	snprintf(buf, size, "{\"ociVersion\":\"1.2.0\",\"id\":\"sftest\",\"status\":\"creating\","
		 "\"pid\":%d,\"bundle\":\"%s\",\"annotations\":{%s}}", (int)pid, f->bundle,
		 annotations);
}

struct run {
	int status;
	char out[4096], err[4096];
};

/* Runs the hook (with -v when verbose) on state. */
static bool run_hook(const struct fixture *f, const char *state, bool verbose, struct run *r)
{
	const char *argv[] = { f->hook, verbose ? "-v" : NULL, NULL };
	struct sfd_io io = { state, strlen(state), r->out, sizeof(r->out),
			     r->err, sizeof(r->err) };

	setenv("SFILTER_SOCKET", f->sock, 1);
	r->status = sfd_run_io(argv, &io, test_is_emulated() ? 300 : 30);
	test_log("hook <<< %s\nexit status 0x%x, stdout \"%s\", stderr \"%s\"\n", state,
		 r->status, r->out, r->err);
	return ASSERT_TRUE(r->status != -1, "the hook ran");
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

/* The hook refused state: exit 1, stdout empty, stderr exactly the line
 * "sfilter-oci-hook: " want, nothing attached to the child. */
static void expect_refusal(const struct fixture *f, const char *state, const char *want)
{
	char line[2048];
	struct run r;

	if (!run_hook(f, state, false, &r))
		return;
	ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 1, "exit status 1");
	snprintf(line, sizeof(line), "sfilter-oci-hook: %s\n", want);
	ASSERT_STREQ(r.err, line, "exactly one line on stderr");
	ASSERT_STREQ(r.out, "", "nothing on stdout");
	ASSERT_EQ(listed(f, f->child), 0, "nothing attached: the child is not in sfctl ps");
}

/* The child released: how it ended (a wait status). */
static int release(struct fixture *f)
{
	int status = -1;

	ASSERT_EQ(write(f->go, "x", 1), 1, "release the child");
	ASSERT_EQ(waitpid(f->child, &status, 0), f->child, "waitpid");
	close(f->go);
	f->go = -1;
	f->child = 0;
	return status;
}

/* A case the hook refuses: the state of the child with annotations (the
 * members of its object); want is the line after "sfilter-oci-hook: ",
 * a format in which %1$s is the bundle. */
static void refuse(const char *annotations, const char *want)
{
	char state[1024], line[1024];
	SFD_AUTO;
	FIXTURE_AUTO(dm);

	if (!setup(&f))
		return;
	state_of(&f, f.child, annotations, state, sizeof(state));
	snprintf(line, sizeof(line), want, f.bundle);
	expect_refusal(&f, state, line);
}

TEST(oci_hook_refuses_stdin_that_is_not_json)
{
	SFD_AUTO;
	FIXTURE_AUTO(dm);

	if (!setup(&f))
		return;
	expect_refusal(&f, "{\"ociVersion\":\"1.2.0\",\"pid\":",
		       "stdin: not JSON: unexpected end of data");
}

TEST(oci_hook_refuses_a_state_larger_than_1_mib)
{
	size_t n = (1 << 20) + 2;
	char *big = malloc(n + 1);
	SFD_AUTO;
	FIXTURE_AUTO(dm);

	if (!ASSERT_OK_PTR(big, "malloc") || !setup(&f))
		goto out;
	memset(big, ' ', n);
	big[n] = '\0';
	big[0] = '{';
	big[n - 1] = '}';
	expect_refusal(&f, big, "stdin: more than 1048576 bytes");
out:
	free(big);
}

TEST(oci_hook_refuses_a_state_without_a_pid)
{
	char state[1024];
	SFD_AUTO;
	FIXTURE_AUTO(dm);

	if (!setup(&f))
		return;
	snprintf(state, sizeof(state), "{\"ociVersion\":\"1.2.0\",\"id\":\"sftest\",\"bundle\":"
		 "\"%s\",\"annotations\":{\"io.sfilter.profile\":\"p.json\"}}", f.bundle);
	expect_refusal(&f, state, "stdin: no \"pid\"");
}

TEST(oci_hook_refuses_a_pid_that_is_gone)
{
	char state[1024], want[128];
	int status;
	pid_t gone;
	SFD_AUTO;
	FIXTURE_AUTO(dm);

	if (!setup(&f))
		return;
	fflush(stdout);
	gone = fork();
	if (gone == 0)
		_exit(0);
	if (!ASSERT_EQ(waitpid(gone, &status, 0), gone, "reap the child"))
		return;
	state_of(&f, gone, "\"io.sfilter.profile\":\"p.json\",\"io.sfilter.arm\":\"now\"",
		 state, sizeof(state));
	snprintf(want, sizeof(want), "pid %d: no such process", (int)gone);
	expect_refusal(&f, state, want);
}

TEST(oci_hook_names_a_profile_that_does_not_exist)
{
	refuse("\"io.sfilter.profile\":\"/nonexistent/sftest.json\"",
	       "io.sfilter.profile: /nonexistent/sftest.json: No such file or directory");
}

TEST(oci_hook_names_the_json_path_of_a_broken_profile)
{
	refuse("\"io.sfilter.profile\":\"bad.json\"", "io.sfilter.profile: %1$s/bad.json: "
	       "syscalls[1].action: unknown action \"SCMP_ACT_NOPE\"");
}

TEST(oci_hook_refuses_both_a_profile_and_take_seccomp)
{
	refuse("\"io.sfilter.profile\":\"p.json\",\"io.sfilter.take-seccomp\":\"true\"",
	       "io.sfilter.profile and io.sfilter.take-seccomp=true: set one of them, not both");
}

TEST(oci_hook_refuses_an_unknown_mode)
{
	refuse("\"io.sfilter.profile\":\"p.json\",\"io.sfilter.mode\":\"audit\"",
	       "io.sfilter.mode: \"audit\": not enforce, shadow or complain");
}

TEST(oci_hook_refuses_a_misspelt_sfilter_annotation)
{
	refuse("\"io.sfilter.profle\":\"p.json\"", "io.sfilter.profle: unknown annotation "
	       "(known: io.sfilter.profile, io.sfilter.take-seccomp, io.sfilter.mode, "
	       "io.sfilter.arm)");
}

TEST(oci_hook_says_when_sfilterd_is_not_running)
{
	char state[1024], want[512];
	SFD_AUTO;
	FIXTURE_AUTO(dm);

	if (!setup(&f))
		return;
	/* The fixture's daemon runs; the hook is sent elsewhere. */
	snprintf(f.sock, sizeof(f.sock), "%s/none.sock", f.bundle);
	state_of(&f, f.child, "\"io.sfilter.profile\":\"p.json\",\"io.sfilter.arm\":\"now\"",
		 state, sizeof(state));
	snprintf(want, sizeof(want), "sfilterd at %s: not running (No such file or directory)",
		 f.sock);
	expect_refusal(&f, state, want);
}

TEST(oci_hook_leaves_a_container_without_sfilter_annotations_alone)
{
	char state[1024];
	struct run r;
	SFD_AUTO;
	FIXTURE_AUTO(dm);

	if (!setup(&f))
		return;
	state_of(&f, f.child, "\"org.example.team\":\"a\"", state, sizeof(state));
	if (!run_hook(&f, state, true, &r))
		return;
	ASSERT_EQ(r.status, 0, "exit status 0");
	ASSERT_STREQ(r.out, "", "nothing on stdout");
	ASSERT_STREQ(r.err, "", "nothing on stderr, even with -v");
	ASSERT_EQ(listed(&f, f.child), 0, "nothing attached");
	ASSERT_EQ(release(&f), 0, "the child's getppid runs");
}

/* containerd gives a pod's sandbox (pause) container the pod's annotations;
 * the workload's profile is not for it. */
TEST(oci_hook_leaves_a_kubernetes_sandbox_container_alone)
{
	char state[1024];
	struct run r;
	SFD_AUTO;
	FIXTURE_AUTO(dm);

	if (!setup(&f))
		return;
	state_of(&f, f.child, "\"io.sfilter.profile\":\"p.json\",\"io.sfilter.arm\":\"now\","
		 "\"io.kubernetes.cri.container-type\":\"sandbox\"", state, sizeof(state));
	if (!run_hook(&f, state, true, &r))
		return;
	ASSERT_EQ(r.status, 0, "exit status 0");
	ASSERT_STREQ(r.err, "", "nothing on stderr, even with -v");
	ASSERT_EQ(listed(&f, f.child), 0, "nothing attached");
	ASSERT_EQ(release(&f), 0, "the child's getppid runs");
}

/* The hook attached with annotations: it said nothing (with -v: the
 * daemon's note, one line), the child is confined (in ps) and killed on
 * its getppid. */
static void expect_kill(struct fixture *f, const char *annotations, bool verbose)
{
	char state[1024];
	struct run r;
	int status;

	state_of(f, f->child, annotations, state, sizeof(state));
	if (!run_hook(f, state, verbose, &r))
		return;
	ASSERT_EQ(r.status, 0, "exit status 0");
	ASSERT_STREQ(r.out, "", "nothing on stdout");
	if (verbose)
		ASSERT_TRUE(!strncmp(r.err, "sfilter-oci-hook: container sftest: filter ", 43) &&
			    strchr(r.err, '\n') == r.err + strlen(r.err) - 1,
			    "-v: one line, the daemon's note");
	else
		ASSERT_STREQ(r.err, "", "nothing on stderr");
	ASSERT_EQ(listed(f, f->child), 1, "the child is in sfctl ps");
	status = release(f);
	ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
		    "the child is killed on getppid");
}

TEST(oci_hook_attaches_a_profile_that_kills_on_a_denied_syscall)
{
	SFD_AUTO;
	FIXTURE_AUTO(dm);

	if (setup(&f))
		expect_kill(&f, "\"io.sfilter.profile\":\"p.json\",\"io.sfilter.arm\":\"now\"",
			    false);
}

TEST(oci_hook_attaches_a_classic_filter_file)
{
	char path[PATH_MAX], ann[PATH_MAX + 64];
	struct sock_filter insns[4];
	SFD_AUTO;
	FIXTURE_AUTO(dm);

	if (!setup(&f))
		return;
	progs_kill_on(insns, 4, __NR_getppid);
	snprintf(path, sizeof(path), "%s/kill_getppid.bpf", f.bundle);
	if (!ASSERT_OK(c2e_save_raw(path, insns, 4), "save the filter"))
		return;
	snprintf(ann, sizeof(ann), "\"io.sfilter.profile\":\"%s\",\"io.sfilter.arm\":\"now\"",
		 path);
	expect_kill(&f, ann, false);
}

TEST(oci_hook_takes_the_containers_linux_seccomp)
{
	char config[1024];
	SFD_AUTO;
	FIXTURE_AUTO(dm);

	snprintf(config, sizeof(config), "{\"ociVersion\":\"1.2.0\",\"linux\":{\"seccomp\":%s}}",
		 kill_getppid_profile);
	if (setup(&f) && put_file(&f, "config.json", config, NULL, 0))
		expect_kill(&f, "\"io.sfilter.take-seccomp\":\"true\",\"io.sfilter.arm\":\"now\"",
			    true);
}

/* includes.caps: judged by config.json's bounding set (moby's), not by
 * the hook's own capabilities (root's: every one). */
TEST(oci_hook_judges_caps_conditions_by_the_bounding_set)
{
	static const char profile[] =
		"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"getppid\"],"
		"\"action\":\"SCMP_ACT_KILL_PROCESS\",\"includes\":{\"caps\":[\"CAP_SYS_ADMIN\"]}}]}";
	static const char ann[] = "\"io.sfilter.profile\":\"caps.json\",\"io.sfilter.arm\":\"now\"";
	char state[1024];
	struct run r;
	SFD_AUTO;
	FIXTURE_AUTO(dm);

	if (!setup(&f) || !put_file(&f, "caps.json", profile, NULL, 0) ||
	    !put_file(&f, "config.json", "{\"process\":{\"capabilities\":{\"bounding\":"
		      "[\"CAP_CHOWN\",\"CAP_KILL\"],\"effective\":[\"CAP_SYS_ADMIN\"]}}}", NULL, 0))
		return;
	state_of(&f, f.child, ann, state, sizeof(state));
	if (!run_hook(&f, state, false, &r) || !ASSERT_EQ(r.status, 0, "exit status 0"))
		return;
	ASSERT_EQ(listed(&f, f.child), 1, "the child is in sfctl ps");
	ASSERT_EQ(release(&f), 0, "no CAP_SYS_ADMIN in the bounding set: the rule is left out");

	f.child = waiting_child(&f.go);
	if (ASSERT_TRUE(f.child > 0, "fork") &&
	    put_file(&f, "config.json", "{\"process\":{\"capabilities\":{\"bounding\":"
		     "[\"CAP_SYS_ADMIN\"]}}}", NULL, 0))
		expect_kill(&f, ann, false);
}

/* io.sfilter.arm absent (exec): the runtime's init, here the child
 * before its execve, is not judged; the image it executes is, from its
 * first call. */
TEST(oci_hook_arms_at_the_workloads_execve_by_default)
{
	volatile int *before_exec = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
					 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char image[PATH_MAX], state[1024], buf[64];
	struct run r;
	int status;
	SFD_AUTO;
	FIXTURE_AUTO(dm);

	if (!ASSERT_TRUE(before_exec != MAP_FAILED, "mmap") || !setup(&f))
		return;
	if (!sfd_find_bin("tests/sf-first-call", NULL, image, sizeof(image)) &&
	    !sfd_find_bin("sf-first-call", NULL, image, sizeof(image))) {
		test_fail(__FILE__, __LINE__, "no sf-first-call beside the runner (make "
			  "build/tests/sf-first-call)");
		return;
	}
	/* The fixture's child is not this test's: one that executes image. */
	release(&f);
	f.child = child_then(&f.go, image, before_exec);
	if (!ASSERT_TRUE(f.child > 0, "fork"))
		return;
	state_of(&f, f.child, "\"io.sfilter.profile\":\"p.json\"", state, sizeof(state));
	if (!run_hook(&f, state, true, &r) || !ASSERT_EQ(r.status, 0, "exit status 0"))
		return;
	ASSERT_TRUE(strstr(r.err, "judging from its next execve") != NULL,
		    "-v: the note says the filter waits for the execve");
	ASSERT_EQ(listed(&f, f.child), 1, "the child is in sfctl ps");
	status = release(&f);
	test_log("the child: %s\n", wstatus_str(status, buf, sizeof(buf)));
	ASSERT_EQ(*before_exec, 1, "its getppid before the execve ran");
	/* SIGSYS where the kernel's own action runs (lsm tier). */
	ASSERT_TRUE(wstatus_killed_by(status, SIGKILL) || wstatus_killed_by(status, SIGSYS),
		    "the executed image is killed at its first call, getppid");
	munmap((void *)before_exec, 4096);
}

/* The daemon's refusal, its errno and its reason: a process a filter
 * already judges is not given one that waits for its execve. */
TEST(oci_hook_passes_on_the_daemons_refusal)
{
	char state[1024], line[1024];
	struct run r;
	SFD_AUTO;
	FIXTURE_AUTO(dm);

	if (!setup(&f))
		return;
	state_of(&f, f.child, "\"io.sfilter.profile\":\"p.json\",\"io.sfilter.arm\":\"now\"",
		 state, sizeof(state));
	if (!run_hook(&f, state, false, &r) || !ASSERT_EQ(r.status, 0, "armed now: attached"))
		return;
	state_of(&f, f.child, "\"io.sfilter.profile\":\"p.json\"", state, sizeof(state));
	if (!run_hook(&f, state, false, &r))
		return;
	ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 1, "exit status 1");
	snprintf(line, sizeof(line), "sfilter-oci-hook: sfilterd at %s: Device or resource "
		 "busy: thread %d already runs under filters that judge it: arming at exec "
		 "would suspend them until then; attach without it\n", f.sock, (int)f.child);
	ASSERT_STREQ(r.err, line, "exactly one line on stderr: the daemon's errno and reason");
	ASSERT_STREQ(r.out, "", "nothing on stdout");
}
