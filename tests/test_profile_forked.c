// SPDX-License-Identifier: GPL-2.0-only
/*
 * sf_profile_rules_new_forked(), the compile sfilterd runs for PROFILE
 * requests: in a child process, it gives what sf_profile_rules_new()
 * gives in place (the filter, its warnings, the rule each call is
 * explained by; a refusal's path and words), says why when its child
 * cannot be made, and what libseccomp leaks during the compile is not
 * left in the caller; as a job, the same, and a job freed kills its
 * child. Then the daemon: a stream of profiles that libseccomp leaks on
 * does not grow sfilterd, and a compile under way keeps no other client
 * waiting.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "daemon.h"
#include "profile.h"
#include "admin.h"
#include "flood.h"

#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/audit.h>
#include <linux/seccomp.h>

/* PROFILE requests and the daemon's memory, whatever the tier enforces. */
SFD_TIER_INDEPENDENT

#define PODMAN "/usr/share/containers/seccomp.json"

/* Every kind of thing the rules hold: arches from archMap, includes and
 * excludes (caps, minKernel, arches), arguments (masked too), errnos, a
 * rule with the default's action, an unknown name (a warning), the calls
 * i386 multiplexes through socketcall, flags. */
static const char builtin[] =
	"{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"defaultErrnoRet\":38,"
	"\"archMap\":[{\"architecture\":\"SCMP_ARCH_X86_64\",\"subArchitectures\":"
	"[\"SCMP_ARCH_X86\",\"SCMP_ARCH_X32\"]}],\"flags\":[\"SECCOMP_FILTER_FLAG_LOG\"],"
	"\"syscalls\":[{\"names\":[\"read\",\"write\",\"getppid\",\"no_such_call\"],"
	"\"action\":\"SCMP_ACT_ALLOW\"},"
	"{\"names\":[\"socket\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":22,\"args\":["
	"{\"index\":0,\"value\":16,\"op\":\"SCMP_CMP_EQ\"},{\"index\":2,\"value\":9,"
	"\"op\":\"SCMP_CMP_EQ\"}]},"
	"{\"names\":[\"recvfrom\",\"sendto\"],\"action\":\"SCMP_ACT_ALLOW\"},"
	"{\"names\":[\"personality\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":0,"
	"\"value\":4294967295,\"valueTwo\":8,\"op\":\"SCMP_CMP_MASKED_EQ\"}]},"
	"{\"names\":[\"getpid\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":38},"
	"{\"names\":[\"clone\"],\"action\":\"SCMP_ACT_ALLOW\",\"includes\":{\"caps\":"
	"[\"CAP_SYS_ADMIN\"]}},"
	"{\"names\":[\"kill\"],\"action\":\"SCMP_ACT_LOG\",\"excludes\":{\"caps\":"
	"[\"CAP_KILL\"]},\"includes\":{\"minKernel\":\"4.14\",\"arches\":[\"amd64\"]}}]}";

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = f ? malloc(1 << 20) : NULL;

	*len = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
	if (buf)
		buf[*len] = '\0';
	if (f)
		fclose(f);
	return buf;
}

static bool same_why(const struct sf_profile_why *a, const struct sf_profile_why *b)
{
	return a->verdict == b->verdict && a->entry == b->entry && !strcmp(a->path, b->path) &&
	       !strcmp(a->name_path, b->name_path) && !strcmp(a->syscall, b->syscall) &&
	       !strcmp(a->action, b->action) && !strcmp(a->conds, b->conds) &&
	       a->exact == b->exact && a->as_default == b->as_default &&
	       a->args_unknown == b->args_unknown;
}

/* The two compiles of one profile, for one caps set: the same filter, the
 * same warnings, and the same rule for every call number 0-460 of
 * x86_64, i386 and x32 with three argument vectors. */
static void compare(const char *what, const char *json, size_t len, const char *caps)
{
	static const uint32_t arches[] = { AUDIT_ARCH_X86_64, AUDIT_ARCH_I386 };
	static const uint64_t argv[][6] = {
		{ 0 }, { 16, 3, 9, 8, 0, 0 }, { 2, 1, 0, 4294967295u, 7, 5 },
	};
	struct sf_profile_opts opts = { .caps = caps, .kernel = "6.1" };
	struct sf_profile_rules *here = NULL, *apart = NULL;
	struct sf_profile_error e1, e2;
	const struct sf_profile *p, *q;
	long calls = 0;
	size_t i, a, v;
	int nr;

	if (!ASSERT_OK(sf_profile_rules_new(json, len, &opts, &here, &e1), e1.msg) ||
	    !ASSERT_OK(sf_profile_rules_new_forked(json, len, &opts, &apart, &e2), e2.msg))
		goto out;
	p = sf_profile_rules_filter(here);
	q = sf_profile_rules_filter(apart);
	ASSERT_TRUE(p->len == q->len && !memcmp(p->insns, q->insns, p->len * sizeof(*p->insns)),
		    "the same filter, byte for byte");
	ASSERT_TRUE(p->flags == q->flags && p->default_action == q->default_action &&
		    p->actions == q->actions && p->n_rules == q->n_rules &&
		    p->n_gap_rules == q->n_gap_rules, "the same flags, default, actions, counts");
	ASSERT_EQ(q->n_warnings, p->n_warnings, "as many warnings");
	for (i = 0; i < p->n_warnings && i < q->n_warnings; i++)
		ASSERT_STREQ(q->warnings[i], p->warnings[i], "the same warning");
	for (a = 0; a < 3; a++)
		for (nr = 0; nr <= 460; nr++)
			for (v = 0; v < 3; v++) {
				struct seccomp_data d = {
					.nr = a == 2 ? nr | 0x40000000 : nr,
					.arch = arches[a == 1],
				};
				struct sf_profile_why w1, w2;

				memcpy(d.args, argv[v], sizeof(d.args));
				sf_profile_rules_explain(here, &d, NULL, true, &w1);
				sf_profile_rules_explain(apart, &d, NULL, true, &w2);
				calls++;
				if (!same_why(&w1, &w2)) {
					ASSERT_TRUE(false, "the same rule explains the call");
					test_log("%s: nr %d arch %#x: %s %s vs %s %s\n", what, d.nr,
						 d.arch, w1.path, w1.action, w2.path, w2.action);
					goto out;
				}
			}
	test_log("%s, caps %s: %zu instructions, %zu warnings, %ld calls explained alike\n",
		 what, caps, q->len, q->n_warnings, calls);
out:
	sf_profile_rules_close(here);
	sf_profile_rules_close(apart);
}

/* The compiles in a child made by exec of sfilterd as the helper (on),
 * as sfilterd makes them, or by fork alone: whether it could be set. */
static bool use_helper(bool on)
{
	static char path[4096];

	if (!on)
		return sf_profile_set_helper(NULL, NULL) == 0;
	if (!path[0] && !sfd_find_bin("sfilterd", "SF_SFILTERD", path, sizeof(path))) {
		test_skip_part("helper", "no sfilterd beside the runner to exec as the helper");
		return false;
	}
	return ASSERT_OK(sf_profile_set_helper(path, "--profile-compile-helper"), "set it");
}

TEST(a_profile_compiled_in_a_child_is_the_one_compiled_in_place)
{
	size_t len;
	char *podman = read_all(PODMAN, &len);
	int on;

	for (on = 0; on < 2; on++) {
		if (!use_helper(on))
			continue;
		compare(on ? "the built-in profile, helper" : "the built-in profile", builtin,
			strlen(builtin), "none");
		compare(on ? "the built-in profile, helper" : "the built-in profile", builtin,
			strlen(builtin), "all");
		if (!podman)
			continue;
		compare(on ? "Podman's profile, helper" : "Podman's profile", podman, len, "none");
		compare(on ? "Podman's profile, helper" : "Podman's profile", podman, len, "all");
	}
	use_helper(false);
	if (!podman)
		test_skip_part("podman", "no %s (golang-github-containers-common)", PODMAN);
	free(podman);
}

TEST(a_profile_refused_in_a_child_is_refused_with_the_same_path_and_words)
{
	static const char *const bad[] = {
		"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"read\"],"
		"\"action\":\"SCMP_ACT_EROR\"}]}",
		"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"nmaes\":[\"read\"]}]}",
		"{\"defaultAction\":",
		"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[],\"syscalls\":[]}",
	};
	struct sf_profile_opts opts = { .caps = "none", .kernel = "6.1" };
	size_t i;

	for (i = 0; i < 2 * sizeof(bad) / sizeof(bad[0]); i++) {
		const char *text = bad[i % (sizeof(bad) / sizeof(bad[0]))];
		struct sf_profile_rules *r1 = NULL, *r2 = NULL;
		struct sf_profile_error e1, e2;
		int a, b;

		/* The second round through the helper. */
		if (!i || i == sizeof(bad) / sizeof(bad[0]))
			if (!use_helper(i))
				break;
		a = sf_profile_rules_new(text, strlen(text), &opts, &r1, &e1);
		b = sf_profile_rules_new_forked(text, strlen(text), &opts, &r2, &e2);
		test_log("%s\n", e2.msg);
		ASSERT_TRUE(a < 0 && !r1 && !r2, "refused, nothing made");
		ASSERT_EQ(b, a, "the same errno");
		ASSERT_STREQ(e2.path, e1.path, "the same path");
		ASSERT_STREQ(e2.msg, e1.msg, "the same words");
	}
	use_helper(false);
}

/* A child that cannot be made: the errno, and a message that says so. */
TEST(a_compile_whose_child_cannot_be_made_says_why)
{
	struct sf_profile_opts opts = { .caps = "none", .kernel = "6.1" };
	int p[2], st, r = 0;
	char msg[320] = "";
	pid_t pid;

	if (!test_need_root("to become a user held to no processes") ||
	    !ASSERT_OK(pipe(p), "pipe"))
		return;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct rlimit none = { 0, 0 };
		struct sf_profile_rules *rules = NULL;
		struct sf_profile_error e;

		if (setgroups(0, NULL) || setgid(65534) || setrlimit(RLIMIT_NPROC, &none) ||
		    setuid(65534))
			_exit(2);
		r = sf_profile_rules_new_forked(builtin, strlen(builtin), &opts, &rules, &e);
		(void)!write(p[1], &r, sizeof(r));
		(void)!write(p[1], e.msg, sizeof(e.msg));
		_exit(rules ? 3 : 0);
	}
	close(p[1]);
	ASSERT_TRUE(read(p[0], &r, sizeof(r)) == sizeof(r) &&
		    read(p[0], msg, sizeof(msg)) == sizeof(msg), "the child's answer");
	close(p[0]);
	ASSERT_TRUE(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st),
		    "nothing made");
	msg[sizeof(msg) - 1] = '\0';
	test_log("%s\n", msg);
	ASSERT_EQ(r, -EAGAIN, "fork's errno");
	ASSERT_TRUE(strstr(msg, "child process") && strstr(msg, "fork"), "the message says so");
}

struct compiles {
	const char *json;
	bool forked;
	int n, failed;
};

static void *compile_n(void *arg)
{
	struct sf_profile_opts opts = { .caps = "none", .kernel = "6.1" };
	struct compiles *c = arg;
	int i;

	for (i = 0; i < c->n; i++) {
		struct sf_profile_rules *r = NULL;
		struct sf_profile_error e;

		c->failed += (c->forked ? sf_profile_rules_new_forked : sf_profile_rules_new)(
			c->json, strlen(c->json), &opts, &r, &e) != 0;
		sf_profile_rules_close(r);
	}
	return NULL;
}

/* What n compiles leave in use. They run on a thread of their own: its
 * exit returns the chunks its malloc cache (tcache) held, which mallinfo2()
 * counts as in use and which would otherwise read as a few kB leaked. */
static long left_in_use(const char *json, bool forked, int n)
{
	struct compiles c = { .json = json, .forked = forked, .n = n };
	size_t before = mallinfo2().uordblks;
	pthread_t t;

	if (pthread_create(&t, NULL, compile_n, &c))
		return -1;
	pthread_join(t, NULL);
	ASSERT_EQ(c.failed, 0, "every compile succeeded");
	return (long)(mallinfo2().uordblks - before);
}

TEST(what_libseccomp_leaks_in_a_compile_is_not_left_in_the_caller)
{
	/* Under emulation, where a compile of it takes ~0.5 s, fewer. */
	int n = test_is_emulated() ? 2 : 8;
	char *json = flood_profile(200, 0, false);
	long here, apart, plain;

	if (!ASSERT_OK_PTR(json, "the profile"))
		return;
	left_in_use(json, false, 1); /* the thread's and malloc's first growth */
	left_in_use(json, true, 1);
	here = left_in_use(json, false, n);
	apart = left_in_use(json, true, n);
	plain = left_in_use(builtin, false, n);
	test_log("%d compiles of a 200-entry profile: %ld bytes left in use in place (%s), "
		 "%ld in a child; %d of the built-in profile in place: %ld\n", n, here,
		 here > 8 * 1024 ? "libseccomp's leak" : "this libseccomp leaks none here",
		 apart, n, plain);
	ASSERT_EQ(apart, 0, "nothing left in the caller by the compiles in a child");
	/* Without that shape nothing is left in place either: libsfprofile
	 * releases what it takes (the fuzzers' LeakSanitizer cannot tell,
	 * fuzz/lsan.supp). */
	ASSERT_EQ(plain, 0, "nothing left by a compile in place without that shape");
	free(json);
}

static long rss_kb(pid_t pid)
{
	char line[256];
	long kb = -1;

	if (sfd_proc_status(pid, "VmRSS:", line, sizeof(line)))
		sscanf(line, "VmRSS: %ld kB", &kb);
	return kb;
}

/* Profiles of 200 leaky entries, each refused at its end so that nothing
 * is kept: compiled in the daemon, each leaks ~190 KB with libseccomp
 * 2.5.4, which shows in its RSS once malloc's free memory is used up
 * (after ~40 here: 80 grew it by 5.7 MB). Fewer under emulation, where
 * the run shows the compiles work, not the growth. */
TEST(bypass_profiles_libseccomp_leaks_on_do_not_grow_the_daemon)
{
	int i, refused = 0, n = test_is_emulated() ? 6 : 80;
	struct sf_client_reply rep;
	long before = -1, after;
	SFD_AUTO;

	if (!sfd_start_sfilterd(&dm, false))
		return;
	for (i = 0; i < n; i++) {
		char *json = flood_profile(200, i, true);

		if (!ASSERT_OK_PTR(json, "the profile"))
			return;
		refused += sf_client_profile(dm.sock, 0, "none", 0, json, strlen(json),
					     &rep) == -EINVAL;
		free(json);
		if (i == 1)
			before = rss_kb(dm.pid);
	}
	after = rss_kb(dm.pid);
	test_log("the last answer: %s\n", rep.message);
	test_log("sfilterd's RSS: %ld kB after 2 profiles, %ld kB after %d more\n", before,
		 after, n - 2);
	ASSERT_EQ(refused, n, "each refused at its last entry");
	ASSERT_TRUE(before > 0 && after - before < 1024, "the daemon grew by less than 1 MB");
}

/* ---- compiles as jobs -------------------------------------------------------- */

/* The filter a compile gave, as text to compare. */
static bool same_filter(const struct sf_profile_rules *a, const struct sf_profile_rules *b)
{
	const struct sf_profile *p = sf_profile_rules_filter(a), *q = sf_profile_rules_filter(b);

	return p->len == q->len && !memcmp(p->insns, q->insns, p->len * sizeof(*p->insns));
}

TEST(a_compile_job_gives_what_the_wait_gives_and_its_free_leaves_no_child)
{
	struct sf_profile_opts opts = { .caps = "none", .kernel = "6.1" };
	struct sf_profile_rules *waited = NULL, *stepped = NULL;
	struct sf_profile_job *job = NULL;
	struct sf_profile_error e;
	int r, steps = 0, status;
	pid_t pid;

	if (!ASSERT_OK(sf_profile_rules_new_forked(builtin, strlen(builtin), &opts, &waited, &e),
		       e.msg) ||
	    !ASSERT_OK(sf_profile_job__start(builtin, strlen(builtin), &opts, &job, &e), e.msg))
		goto out;
	do {
		struct pollfd pf = { .fd = sf_profile_job__fd(job), .events = POLLIN };

		poll(&pf, 1, sf_profile_job__timeout(job));
		steps++;
	} while ((r = sf_profile_job__step(job, &stepped, &e)) == -EINPROGRESS);
	test_log("the job ended after %d steps\n", steps);
	if (ASSERT_OK(r, e.msg))
		ASSERT_TRUE(same_filter(waited, stepped), "the job's filter is the wait's");
	/* A job freed while its child runs: the child is killed and reaped
	 * (in a process of its own, whose only child the job's is). */
	pid = fork();
	if (pid == 0) {
		struct sf_profile_job *j;
		char *big = flood_profile(300, 1, false);

		if (!big || sf_profile_job__start(big, strlen(big), &opts, &j, &e))
			_exit(2);
		sf_profile_job__free(j);
		_exit(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD ? 0 : 3);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid, "waitpid");
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		    "no child left after a job freed while it ran (exit 0)");
out:
	sf_profile_job__free(job);
	sf_profile_rules_close(waited);
	sf_profile_rules_close(stepped);
}

/* The daemon's children (its compiles: the holder is a grandchild that
 * init adopted), into out (n at most): how many. */
static int children_of(pid_t parent, pid_t *out, int n)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int k = 0;

	while (d && (de = readdir(d)) && k < n)
		if (de->d_name[0] >= '1' && de->d_name[0] <= '9' &&
		    sfd_proc_stat(atoi(de->d_name), 4) == parent)
			out[k++] = atoi(de->d_name);
	if (d)
		closedir(d);
	return k;
}

/* What a request of uid 65534's came to, shared with the test. */
struct asked {
	int r;
	char msg[SF_PROTO_MAX_TEXT];
};

/* A process of uid 65534 (not an admin) that sends json as a profile for
 * its next filter (filter id 0: no filter needed) and records the answer
 * in *out. */
static pid_t ask_as_user(const char *sock, const char *json, struct asked *out)
{
	pid_t pid = fork();
	struct sf_client_reply rep;

	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (setgroups(0, NULL) || syscall(SYS_setresgid, 65534, 65534, 65534) ||
	    syscall(SYS_setresuid, 65534, 65534, 65534))
		_exit(100);
	out->r = sf_client_profile(sock, 0, "none", 0, json, strlen(json), &rep);
	snprintf(out->msg, sizeof(out->msg), "%s", rep.message);
	_exit(0);
}

/* Whether pid's /proc/PID/status has the line want ("Uid:\t..."), its key
 * the text up to the colon. */
static bool status_has(pid_t pid, const char *want)
{
	char key[32], line[256];

	snprintf(key, sizeof(key), "%.*s", (int)(strchr(want, ':') - want + 1), want);
	return sfd_proc_status(pid, key, line, sizeof(line)) && !strcmp(line, want);
}

/* What the compile's child may hold: no groups, no capabilities, no new
 * privileges, not dumpable, a nice value 10 above the daemon's, and only
 * its input, its pipe, stderr and the memfds the compile makes. */
static void check_helper(pid_t pid, pid_t daemon)
{
	long long ni = sfd_proc_stat(daemon, 19) + 10;
	char line[256], path[64], to[256];
	struct dirent *de;
	struct stat st;
	DIR *d;
	int fds = 0;

	ASSERT_TRUE(status_has(pid, "Uid:\t65534\t65534\t65534\t65534"), "uid 65534");
	ASSERT_TRUE(status_has(pid, "Gid:\t65534\t65534\t65534\t65534"), "gid 65534");
	ASSERT_TRUE(sfd_proc_status(pid, "Groups:", line, sizeof(line)) &&
		    !line[7 + strspn(line + 7, " \t")], "no groups");
	ASSERT_TRUE(status_has(pid, "CapEff:\t0000000000000000"), "no effective capabilities");
	ASSERT_TRUE(status_has(pid, "CapPrm:\t0000000000000000"), "no permitted capabilities");
	ASSERT_TRUE(status_has(pid, "NoNewPrivs:\t1"), "no new privileges");
	test_log("nice: the daemon's %lld, the helper's %lld\n", ni - 10, sfd_proc_stat(pid, 19));
	ASSERT_EQ(sfd_proc_stat(pid, 19), ni > 19 ? 19 : ni,
		  "the helper runs below the daemon's priority");
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	/* A process that is not dumpable: its /proc files are root's, so
	 * that nobody's other processes cannot trace it or read it. */
	ASSERT_TRUE(stat(path, &st) == 0 && st.st_uid == 0,
		    "not dumpable: /proc/PID/status is root's");
	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	for (d = opendir(path); d && (de = readdir(d));) {
		ssize_t n;
		int fd = atoi(de->d_name);

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
		n = readlink(path, to, sizeof(to) - 1);
		to[n > 0 ? n : 0] = '\0';
		test_log("the helper's fd %d: %s\n", fd, to);
		fds++;
		if (fd == 0)
			ASSERT_TRUE(strstr(to, "memfd:sf-profile-input") != NULL, "fd 0: its input");
		else if (fd == 1)
			ASSERT_TRUE(!strncmp(to, "pipe:", 5), "fd 1: its pipe");
		else if (fd > 2)
			ASSERT_TRUE(strstr(to, "memfd:sf-profile") != NULL,
				    "nothing of the daemon's: the compile's own memfd");
	}
	if (d)
		closedir(d);
	ASSERT_GE(fds, 2, "its descriptors read");
}

/* The daemon's compile child, once STATUS says one runs (30 s, 300 under
 * emulation), stopped: its pid, or 0 when the request was answered first
 * (asker exited) or none was seen. statuses: STATUS answers while it ran. */
static pid_t catch_compile(const struct sfd *dm, pid_t asker, int *statuses)
{
	double end = test_now_s() + (test_is_emulated() ? 300 : 30);
	static char status[SF_PROTO_MAX_MSG];
	pid_t kids[8];

	*statuses = 0;
	while (test_now_s() < end && waitpid(asker, NULL, WNOHANG) == 0) {
		if (sfd_status(dm, status) < 0 || !strstr(status, "\"compiling\":1"))
			continue;
		(*statuses)++;
		/* Caught once it has given up root (exec'd, and no new
		 * privileges, the last it sets but dumpable, which its uid's
		 * change has cleared already). */
		if (children_of(dm->pid, kids, 8) == 1 && status_has(kids[0], "NoNewPrivs:\t1") &&
		    kill(kids[0], SIGSTOP) == 0)
			return kids[0];
	}
	return 0;
}

/* STATUS's profile_cache.misses, or -1. */
static long long cache_misses(const struct sfd *dm)
{
	static char status[SF_PROTO_MAX_MSG];
	const char *m;

	if (sfd_status(dm, status) < 0 || !(m = strstr(status, "\"misses\":")))
		return -1;
	return strtoll(m + 9, NULL, 10);
}

static void release(pid_t pid)
{
	if (pid > 0)
		kill(pid, SIGCONT);
}

/* A compile runs in a child of sfilterd while the loop goes on, as
 * nobody, with nothing of the daemon's: a user's profile, whose compile
 * is held stopped here, keeps no one else waiting
 * (before, a 64 KiB profile held every client ~0.5 s; one user's two a
 * second kept the daemon busy). Then the same user's second profile while
 * its first compiles is refused, and the first's text sent again waits
 * for that compile rather than starting one. */
TEST(bypass_daemon_a_users_profile_compile_stalls_no_one)
{
	struct asked *out = mmap(NULL, 3 * sizeof(*out), PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char *slow = flood_profile(test_is_emulated() ? 100 : 300, 2, false);
	char *other = flood_profile(2, 3, false);
	static char status[SF_PROTO_MAX_MSG];
	pid_t a, b, c, child = 0;
	int tries, statuses = 0, st;
	long long misses;
	SFD_AUTO;

	if (!ASSERT_TRUE(out != MAP_FAILED && slow && other, "set-up") ||
	    !sfd_start_for_users(&dm, NULL))
		goto out;
	/* A compile that ends before it is caught is tried with another text. */
	for (tries = 0; tries < 3 && !child; tries++) {
		free(slow);
		slow = flood_profile(test_is_emulated() ? 100 : 300, 10 + tries, false);
		a = ask_as_user(dm.sock, slow, &out[0]);
		child = catch_compile(&dm, a, &statuses);
		if (!child)
			waitpid(a, NULL, 0);
	}
	if (!ASSERT_TRUE(child > 0, "the daemon's compile child caught running"))
		goto out;
	test_log("STATUS answered %d times while the compile ran; its child %d stopped\n",
		 statuses, child);
	check_helper(child, dm.pid);
	ASSERT_OK(sfd_status(&dm, status), "an admin's STATUS while the compile is stopped");
	ASSERT_TRUE(strstr(status, "\"compiling\":1") != NULL, "STATUS says one compiles");
	/* The same user: another profile is refused; the same text waits. */
	b = ask_as_user(dm.sock, other, &out[1]);
	waitpid(b, &st, 0);
	test_log("another profile of the user's: %d %s\n", out[1].r, out[1].msg);
	ASSERT_EQ(out[1].r, -EAGAIN, "a second compile of the user's at once is refused");
	ASSERT_TRUE(strstr(out[1].msg, "one at a time") != NULL, "and says why");
	/* Once the daemon has taken it (its miss counted), still one. */
	misses = cache_misses(&dm);
	c = ask_as_user(dm.sock, slow, &out[2]);
	for (tries = 0; tries < 3000 && cache_misses(&dm) == misses; tries++)
		usleep(10000);
	ASSERT_EQ(cache_misses(&dm), misses + 1, "the same text asked again reached the cache");
	ASSERT_OK(sfd_status(&dm, status), "STATUS");
	ASSERT_TRUE(strstr(status, "\"compiling\":1") != NULL, "the same text starts no compile");
	release(child);
	child = 0;
	waitpid(a, &st, 0);
	waitpid(c, &st, 0);
	test_log("the first: %d %s; the same text again: %d %s\n", out[0].r, out[0].msg,
		 out[2].r, out[2].msg);
	ASSERT_OK(out[0].r, "the held profile is answered once its compile ends");
	/* Both were kept for the user's next attach: the limit is 4. */
	ASSERT_OK(out[2].r, "the same text, which waited for that compile, too");
	ASSERT_OK(sfd_status(&dm, status), "STATUS");
	ASSERT_TRUE(strstr(status, "\"compiling\":0") != NULL, "no compile left");
out:
	release(child);
	free(slow);
	free(other);
	if (out != MAP_FAILED)
		munmap(out, 3 * sizeof(*out));
}

/* The helper runs as nobody, whose other processes may signal it: one
 * stopped (SIGSTOP) after it has written its whole result, before its
 * exit, must not hold the caller, which waited for it for ever before
 * (sfilterd's loop with it). A shell stands in for the helper: it runs
 * sfilterd's, then stops itself, keeping the pipe open. */
TEST(bypass_a_compile_helper_stopped_after_its_result_holds_up_nothing)
{
	struct sf_profile_opts opts = { .caps = "none", .kernel = "6.1" };
	char sfilterd[4096], dir[] = "/tmp/sftest-helper-XXXXXX", script[4200];
	int st;
	pid_t pid;
	FILE *f;

	if (!sfd_find_bin("sfilterd", "SF_SFILTERD", sfilterd, sizeof(sfilterd))) {
		test_skip("no sfilterd beside the runner to run as the helper");
		return;
	}
	if (!ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp"))
		return;
	snprintf(script, sizeof(script), "%s/helper.sh", dir);
	f = fopen(script, "w");
	if (!ASSERT_OK_PTR(f, "the script"))
		return;
	fprintf(f, "'%s' --profile-compile-helper\nkill -STOP $$\n", sfilterd);
	fclose(f);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct sf_profile_rules *r = NULL;
		struct sf_profile_error e;
		int got;

		alarm(test_is_emulated() ? 120 : 30);
		if (sf_profile_set_helper("/bin/sh", script))
			_exit(2);
		got = sf_profile_rules_new_forked(builtin, strlen(builtin), &opts, &r, &e);
		if (got || !r)
			_exit(3);
		/* The stopped shell was killed and reaped. */
		_exit(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD ? 0 : 4);
	}
	ASSERT_EQ(waitpid(pid, &st, 0), pid, "waitpid");
	test_log("the caller: %s %d\n", WIFSIGNALED(st) ? "killed by signal" : "exit",
		 WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	ASSERT_FALSE(WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM,
		     "the compile returned: it did not wait for the stopped helper");
	ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		    "its result taken, and the helper killed and reaped (exit 0)");
	unlink(script);
	rmdir(dir);
}
