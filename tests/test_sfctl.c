// SPDX-License-Identifier: GPL-2.0-only
/*
 * Administration, end to end: a private sfilterd (--no-pin, so
 * nothing collides with a real install) spoken to raw and through
 * build/sfctl.
 *
 * - An unprivileged user (uid 65534, in a forked child) gets EPERM for
 *   ADMIN_ATTACH (to another user's process or its own), DETACH and
 *   REPLACE; LOG gives it none of another uid's events, even when it runs
 *   the identical filter (same node, same id); it can still confine
 *   itself with sf_attach().
 * - Root: sfctl attach --pid confines a process that is already running
 *   (it dies on its denied syscall); detach and replace answer.
 * - Root: sfctl attach --cgroup reaches a task that joins later with a
 *   chain of its own (the daemon finishes the join unasked).
 * - sfctl policy-from-log turns JSON event lines into a valid policy that
 *   allows every (arch, syscall) seen and kills the rest, or (--format oci)
 *   into an OCI seccomp profile whose fields OCI runtimes read.
 *
 * Binaries are found beside the runner (../sfilterd, ../sfctl; the guest:
 * run.sh -f build/sfilterd -f build/sfctl); $SF_SFILTERD / $SF_SFCTL
 * override.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "daemon.h"
#include "cgroup.h"
#include "c2e.h"
#include "proto.h"
#include "sfclient.h"
#include "runtime.h" /* SF_ATTACH_ARM */
#include "sockfilter.h"
#include "progs.h"

#include <fcntl.h>
#include <json-c/json.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

SFD_TIER_INDEPENDENT

/* A private daemon (tests/lib/daemon), unpinned: the test never touches
 * a real install's state. */
static bool start_daemon(struct sfd *dm)
{
	if (!sfd_need_bin("sfilterd", "SF_SFILTERD", dm->bin, sizeof(dm->bin)))
		return false;
	return sfd_start(dm, false);
}

static const struct sock_filter allow_prog[] = { STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };

static int admin_attach_raw(const char *sock, pid_t pid, uint32_t flags)
{
	struct { struct sf_admin_attach_req r; struct sock_filter f[1]; } m = { 0 };

	m.r.flags = flags;
	m.r.pid = pid;
	m.r.n_insns = 1;
	m.f[0] = allow_prog[0];
	return sfd_request(sock, &m, SF_MSG_ADMIN_ATTACH, sizeof(m), NULL, NULL);
}

struct count { int n; char needle[32]; int hits; };
static void count_lines(void *ctx, const struct sf_reply *r, const char *line)
{
	struct count *c = ctx;

	if (!(r->flags & SF_REPLY_MORE)) /* the closing reply carries no event */
		return;
	c->n++;
	if (strstr(line, c->needle))
		c->hits++;
}

/* The unprivileged side; exit codes name the step that went wrong. */
static int unprivileged(const char *sock, pid_t root_pid, uint32_t root_filter)
{
	struct sock_fprog prog = { 1, (struct sock_filter *)allow_prog };
	struct sf_id_req det = { .id = root_filter };
	struct { struct sf_replace_req r; struct sock_filter f[1]; } rep = { 0 };
	struct sf_log_req lg = { 0 };
	struct count c = { 0 };

	if (setgid(65534) || setuid(65534))
		return 10;
	if (admin_attach_raw(sock, root_pid, 0) != EPERM)
		return 11; /* another user's process */
	if (admin_attach_raw(sock, getpid(), 0) != EPERM)
		return 12; /* its own */
	if (sfd_request(sock, &det, SF_MSG_DETACH, sizeof(det), NULL, NULL) != EPERM)
		return 13;
	rep.r.filter_id = root_filter;
	rep.r.n_insns = 1;
	rep.f[0] = allow_prog[0];
	if (sfd_request(sock, &rep, SF_MSG_REPLACE, sizeof(rep), NULL, NULL) != EPERM)
		return 14;
	snprintf(c.needle, sizeof(c.needle), "\"pid\":%d,", root_pid);
	if (sfd_request(sock, &lg, SF_MSG_LOG, sizeof(lg), count_lines, &c) != 0)
		return 15;
	if (c.hits)
		return 16; /* saw root's event */
	/* It can still confine itself, and then its own filter stays:
	 * detach of its own filter is EPERM too. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || sf_attach(&prog, 0) != 0)
		return 17;
	det.id = (uint32_t)atoi(strstr(sf_last_error(), "filter ") ?
				strstr(sf_last_error(), "filter ") + 7 : "0");
	if (sfd_request(sock, &det, SF_MSG_DETACH, sizeof(det), NULL, NULL) != EPERM)
		return 18;
	return 0;
}

TEST(sfctl_privilege)
{
	struct sock_fprog prog = { 4, (struct sock_filter *)progs_kill_getppid };
	int status, pipefd[2], go[2], twin_hold[2];
	pid_t victim, child, twin;
	char c;
	SFD_AUTO;

	if (!test_need_root(NULL))
		return;
	if (!start_daemon(&dm))
		return;
	/* A root process that confines itself and makes an event (killed on
	 * getppid): the event the unprivileged user must not see. */
	fflush(stdout);
	if (!ASSERT_OK(pipe(pipefd), "pipe") || !ASSERT_OK(pipe(go), "pipe") ||
	    !ASSERT_OK(pipe(twin_hold), "pipe"))
		return;
	victim = fork();
	if (victim == 0) {
		close(pipefd[0]);
		close(go[1]);
		/* Killed by the BPF side while the daemon is stopped: a gate
		 * would make the call wait for the daemon instead. */
		setenv("SFILTER_GATE", "0", 1);
		if (sf_attach(&prog, 0) != 0)
			_exit(1);
		if (write(pipefd[1], "x", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(2);
		syscall(SYS_getppid);
		_exit(3);
	}
	close(go[0]);
	ASSERT_EQ(read(pipefd[0], &c, 1), 1, "victim attached");
	/* The same filter attached by the unprivileged user to itself: it
	 * shares the victim's node and filter id, and must not make the
	 * victim's events its own. */
	twin = fork();
	if (twin == 0) {
		close(twin_hold[1]);
		if (setgid(65534) || setuid(65534) || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		    sf_attach(&prog, 0) != 0)
			_exit(1);
		if (write(pipefd[1], "t", 1) != 1)
			_exit(2);
		while (read(twin_hold[0], &c, 1) > 0)
			;
		_exit(0);
	}
	close(pipefd[1]);
	close(twin_hold[0]);
	ASSERT_EQ(read(pipefd[0], &c, 1), 1, "the user's identical filter attached");
	close(pipefd[0]);
	/* The daemon reads the event only once the victim is reaped: no
	 * process is left to ask whose it was. */
	sfd_pause(&dm);
	ASSERT_EQ(write(go[1], "g", 1), 1, "release victim");
	close(go[1]);
	ASSERT_EQ(waitpid(victim, &status, 0), victim, "waitpid victim");
	sfd_resume(&dm);
	ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "victim killed");
	/* The event is in the daemon before the user asks for events. */
	ASSERT_TRUE(sfd_log_wait(&dm, "\"syscall\":\"getppid\""), "the kill is logged");

	child = fork();
	if (child == 0)
		_exit(unprivileged(dm.sock, victim, 1));
	ASSERT_EQ(waitpid(child, &status, 0), child, "waitpid child");
	ASSERT_TRUE(WIFEXITED(status), "child exited");
	ASSERT_EQ(WEXITSTATUS(status), 0, "unprivileged steps (exit code = failing step)");
	close(twin_hold[1]);
	ASSERT_EQ(waitpid(twin, &status, 0), twin, "waitpid twin");
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the user's twin ran");
}

static int run(const char *cmd, char *out, size_t size)
{
	FILE *p = popen(cmd, "r");
	size_t n = 0;
	int st;

	if (!p)
		return -1;
	if (out) {
		n = fread(out, 1, size - 1, p);
		out[n] = '\0';
	} else {
		char sink[4096];

		while (fread(sink, 1, sizeof(sink), p) > 0)
			;
	}
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The admin side: root, sfctl found (into sfctl), a private daemon. */
static bool start_admin(struct sfd *dm, char *sfctl, size_t size)
{
	if (!test_need_root(NULL))
		return false;
	if (!sfd_need_bin("sfctl", "SF_SFCTL", sfctl, size))
		return false;
	return start_daemon(dm);
}

TEST(sfctl_admin_attach_running)
{
	char sfctl[PATH_MAX], cmd[PATH_MAX * 2], out[4096], file[128];
	int status, rc, go[2];
	pid_t victim;
	const char *p;
	unsigned id;
	SFD_AUTO;

	if (!start_admin(&dm, sfctl, sizeof(sfctl)))
		return;
	snprintf(file, sizeof(file), "%s/kill_getppid.bpf", dm.dir);
	if (!ASSERT_OK(c2e_save_raw(file, progs_kill_getppid, 4), "save filter"))
		return;
	/* A running process, neither no_new_privs nor asked: the admin
	 * confines it from outside. */
	if (!ASSERT_OK(pipe(go), "pipe"))
		return;
	fflush(stdout);
	victim = fork();
	if (victim == 0) {
		close(go[1]);
		if (read(go[0], &status, 1) != 1)
			_exit(1);
		syscall(SYS_getppid);
		_exit(0);
	}
	close(go[0]);
	/* The runtime's own flag for sf_attach() callers is not the wire's. */
	ASSERT_EQ(admin_attach_raw(dm.sock, victim, SF_ATTACH_ARM), EINVAL,
		  "ADMIN_ATTACH with the runtime-internal ARM flag: EINVAL");
	snprintf(cmd, sizeof(cmd), "%s --socket %s --json attach --pid %d --filter %s",
		 sfctl, dm.sock, victim, file);
	rc = run(cmd, out, sizeof(out));
	test_log("%s -> %d: %s", cmd, rc, out);
	ASSERT_EQ(rc, 0, "sfctl attach --pid");
	ASSERT_EQ(write(go[1], "x", 1), 1, "release victim");
	close(go[1]);
	ASSERT_EQ(waitpid(victim, &status, 0), victim, "waitpid");
	ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
		    "the running process is confined: killed on getppid");

	/* detach / replace of that filter: ok, or ENOSYS while the runtime
	 * lacks them (a visible skip, never a silent pass). */
	p = strstr(out, "\"filter\"");
	id = p ? (unsigned)strtoul(strchr(p, ':') + 1, NULL, 10) : 0;
	snprintf(cmd, sizeof(cmd), "%s --socket %s replace %u --filter %s 2>&1",
		 sfctl, dm.sock, id, file);
	rc = run(cmd, out, sizeof(out));
	test_log("%s -> %d: %s", cmd, rc, out);
	if (strstr(out, "not implement")) {
		test_skip("runtime lacks detach/replace (ENOSYS)");
		return;
	}
	/* The task exited: the filter may be gone (ENOENT) or replaced. */
	ASSERT_TRUE(rc == 0 || strstr(out, "No such file"), "replace answers");
	snprintf(cmd, sizeof(cmd), "%s --socket %s detach %u 2>&1", sfctl, dm.sock, id);
	rc = run(cmd, out, sizeof(out));
	ASSERT_TRUE(rc == 0 || strstr(out, "No such file"), "detach answers");
	snprintf(cmd, sizeof(cmd), "%s --socket %s detach 999999 2>&1", sfctl, dm.sock);
	ASSERT_EQ(run(cmd, NULL, 0), 1, "detach of an unknown id fails");
}

/* Kills on getuid(2), allows the rest: the joiner's own filter. */
static const struct sock_filter kill_getuid[] = {
	STMT(BPF_LD | BPF_W | BPF_ABS, 0),
	JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getuid, 0, 1),
	STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

/*
 * A task that already has a chain when it joins an attached cgroup cannot
 * be given "its chain + the cgroup's filters" in the tracepoint until the
 * daemon has made that chain once: the join is queued and wakes the daemon,
 * which finishes it without being asked.
 */
TEST(sfctl_cgroup_attach_reaches_a_confined_task_that_joins_later)
{
	struct sock_fprog own = { 4, (struct sock_filter *)kill_getuid };
	char sfctl[PATH_MAX], cmd[PATH_MAX * 2], out[4096], file[128], cg[512];
	int status, ready[2], go[2], i, tries = test_is_emulated() ? 1200 : 200;
	unsigned id = 0;
	pid_t victim;
	const char *p;
	char c;
	SFD_AUTO;

	if (!start_admin(&dm, sfctl, sizeof(sfctl)) || !tcg_make(cg, sizeof(cg), "sfilter-sfctl"))
		return;
	snprintf(file, sizeof(file), "%s/kill_getppid.bpf", dm.dir);
	if (!ASSERT_OK(c2e_save_raw(file, progs_kill_getppid, 4), "save filter"))
		goto out;
	snprintf(cmd, sizeof(cmd), "%s --socket %s --json attach --cgroup %s --filter %s",
		 sfctl, dm.sock, cg, file);
	ASSERT_EQ(run(cmd, out, sizeof(out)), 0, "sfctl attach --cgroup");
	p = strstr(out, "\"filter\"");
	id = p ? (unsigned)strtoul(strchr(p, ':') + 1, NULL, 10) : 0;
	if (!ASSERT_NEQ(id, 0, "cgroup filter id") || !ASSERT_OK(pipe(ready), "pipe") ||
	    !ASSERT_OK(pipe(go), "pipe"))
		goto out;
	fflush(stdout);
	victim = fork();
	if (victim == 0) {
		close(ready[0]);
		close(go[1]);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || sf_attach(&own, 0))
			_exit(1);
		if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(2);
		syscall(SYS_getppid);
		_exit(0);
	}
	close(ready[1]);
	close(go[0]);
	if (!ASSERT_EQ(read(ready[0], &c, 1), 1, "victim confined by its own filter") ||
	    !ASSERT_TRUE(tcg_move(cg, victim), "victim joins the cgroup")) {
		kill(victim, SIGKILL);
		waitpid(victim, &status, 0);
		goto out;
	}
	for (i = 0; i < tries && !sfd_ps_lists(dm.sock, victim, id); i++)
		usleep(50000);
	ASSERT_TRUE(i < tries, "the daemon gave the joiner the cgroup's filter");
	test_log("cgroup filter seen in the joiner's chain after %d polls of 50 ms\n", i);
	ASSERT_EQ(write(go[1], "x", 1), 1, "release victim");
	ASSERT_EQ(waitpid(victim, &status, 0), victim, "waitpid");
	ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
		    "the joiner is killed on the cgroup's denied call");
	close(ready[0]);
	close(go[1]);
out:
	rmdir(cg);
}

/* For policy-from-log: sfctl (skipping the test without it), a fresh
 * directory dir, and path = dir/log.jsonl opened for writing, a daemon's
 * start line in it already; NULL when the test cannot go on. */
static FILE *policy_log(char *sfctl, size_t size, char *dir, char *path, size_t psize)
{
	FILE *f;

	if (!sfd_need_bin("sfctl", "SF_SFCTL", sfctl, size))
		return NULL;
	if (!ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp"))
		return NULL;
	snprintf(path, psize, "%s/log.jsonl", dir);
	f = fopen(path, "w");
	if (f)
		fprintf(f, "{\"sfilterd\":\"start\",\"pid\":1}\n");
	return f;
}

TEST(sfctl_policy_from_log)
{
	static const struct { const char *arch; int nr; uint32_t audit; } seen[] = {
		{ "x86_64", 39, 0xc000003e }, { "x86_64", 1, 0xc000003e },
		{ "x86_64", 231, 0xc000003e }, { "i386", 20, 0x40000003 },
		{ "x32", 0x40000000 | 39, 0xc000003e },
	};
	char sfctl[PATH_MAX], dir[] = "/tmp/sftest-pol-XXXXXX", path[128], cmd[PATH_MAX * 2];
	struct seccomp_data sd = { 0 };
	struct sock_filter *insns;
	struct c2e_error err;
	size_t n, i;
	FILE *f = policy_log(sfctl, sizeof(sfctl), dir, path, sizeof(path));

	if (!f)
		return;
	for (i = 0; i < sizeof(seen) / sizeof(seen[0]); i++)
		fprintf(f, "{\"pid\":77,\"nr\":%d,\"arch\":\"%s\",\"action\":\"KILL_PROCESS\"}\n",
			seen[i].nr, seen[i].arch);
	fprintf(f, "{\"pid\":78,\"nr\":83,\"arch\":\"x86_64\"}\n"); /* another pid */
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s policy-from-log --log %s --pid 77 -o %s/p >/dev/null",
		 sfctl, path, dir);
	ASSERT_EQ(run(cmd, NULL, 0), 0, "policy-from-log");
	snprintf(path, sizeof(path), "%s/p.bpf", dir);
	memset(&err, 0, sizeof(err));
	if (!ASSERT_OK(c2e_load_file(path, &insns, &n, &err), "load p.bpf"))
		return;
	ASSERT_OK(c2e_validate(insns, n, &err), "valid");
	for (i = 0; i < sizeof(seen) / sizeof(seen[0]); i++) {
		sd.arch = seen[i].audit;
		sd.nr = seen[i].nr;
		ASSERT_EQ(c2e_interpret(insns, n, &sd), SECCOMP_RET_ALLOW, "seen: allowed");
	}
	sd.arch = 0xc000003e;
	sd.nr = 83; /* mkdir: pid 78's, filtered out */
	ASSERT_EQ(c2e_interpret(insns, n, &sd), SECCOMP_RET_KILL_PROCESS, "unseen: killed");
	sd.arch = 0xc00000b7; /* aarch64 */
	sd.nr = 39;
	ASSERT_EQ(c2e_interpret(insns, n, &sd), SECCOMP_RET_KILL_PROCESS, "other arch: killed");
	free(insns);
	/* The text form reads back to the same program. */
	snprintf(path, sizeof(path), "%s/p.s", dir);
	ASSERT_EQ(access(path, R_OK), 0, "p.s written");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd)) { /* best effort */ }
}

/* The verdict of p.bpf (under dir) for x86-64 syscall nr; -1 when it
 * cannot be read. */
static long policy_verdict(const char *dir, const char *prefix, int nr)
{
	struct seccomp_data sd = { .nr = nr, .arch = 0xc000003e };
	struct sock_filter *insns;
	struct c2e_error err;
	char path[160];
	size_t n;
	long v;

	snprintf(path, sizeof(path), "%s/%s.bpf", dir, prefix);
	memset(&err, 0, sizeof(err));
	if (c2e_load_file(path, &insns, &n, &err))
		return -1;
	v = c2e_interpret(insns, n, &sd);
	free(insns);
	return v;
}

/* A pid the log holds for two processes: a job of uid 1000 (two images:
 * sfrun's, which execs, and the command's) and, once it had ended, uid
 * 65534's, which took the pid and logged calls of its own. Learning from
 * the pid alone is refused, each image listed; picked by uid or start
 * time, one process is learned from, every image of it. */
TEST(sfctl_policy_from_log_learns_from_one_process_of_a_reused_pid)
{
	static const struct { int uid; long start, exec; int nr; } ev[] = {
		{ 1000, 5000, 1, 59 },                  /* sfrun's execve */
		{ 1000, 5000, 2, 39 }, { 1000, 5000, 2, 1 }, { 1000, 5000, 2, 231 },
		{ 65534, 9000, 7, 101 }, { 65534, 9000, 7, 165 },  /* ptrace, mount */
		{ 65534, 9000, 7, 246 }, { 65534, 9000, 7, 321 },  /* kexec_load, bpf */
	};
	static const int job[] = { 59, 39, 1, 231 }, other[] = { 101, 165, 246, 321 };
	char sfctl[PATH_MAX], dir[] = "/tmp/sftest-reuse-XXXXXX", path[128], cmd[PATH_MAX * 2];
	char out[4096];
	size_t i;
	FILE *f = policy_log(sfctl, sizeof(sfctl), dir, path, sizeof(path));

	if (!f)
		return;
	for (i = 0; i < sizeof(ev) / sizeof(ev[0]); i++)
		fprintf(f, "{\"pid\":77,\"uid\":%d,\"start_ns\":%ld,\"exec_id\":%ld,\"comm\":\"c%d\","
			"\"nr\":%d,\"arch\":\"x86_64\"}\n", ev[i].uid, ev[i].start, ev[i].exec,
			ev[i].uid, ev[i].nr);
	fclose(f);

	snprintf(cmd, sizeof(cmd), "%s policy-from-log --log %s --pid 77 -o %s/all 2>&1", sfctl,
		 path, dir);
	ASSERT_EQ(run(cmd, out, sizeof(out)), 1, "the pid alone: refused");
	test_log("%s", out);
	ASSERT_TRUE(strstr(out, "uid 1000  start_ns 5000  exec_id 1") &&
		    strstr(out, "uid 1000  start_ns 5000  exec_id 2") &&
		    strstr(out, "uid 65534  start_ns 9000  exec_id 7"), "each image is listed");
	ASSERT_TRUE(strstr(out, "--uid") != NULL, "and how to pick one");
	ASSERT_EQ(policy_verdict(dir, "all", 39), -1, "nothing written");

	snprintf(cmd, sizeof(cmd), "%s policy-from-log --log %s --pid 77 --uid 1000 -o %s/job "
		 "2>&1", sfctl, path, dir);
	ASSERT_EQ(run(cmd, out, sizeof(out)), 0, "picked by uid");
	ASSERT_TRUE(strstr(out, "learned from uid 1000, start_ns 5000, exec_id 1, 2") != NULL,
		    "it says which process, and its images");
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(policy_verdict(dir, "job", job[i]), SECCOMP_RET_ALLOW,
			  "the job's calls (both images) are allowed");
		ASSERT_EQ(policy_verdict(dir, "job", other[i]), SECCOMP_RET_KILL_PROCESS,
			  "uid 65534's are not");
	}
	snprintf(cmd, sizeof(cmd), "%s policy-from-log --log %s --pid 77 --start 9000 -o %s/other "
		 ">/dev/null 2>&1", sfctl, path, dir);
	ASSERT_EQ(run(cmd, NULL, 0), 0, "picked by start");
	ASSERT_EQ(policy_verdict(dir, "other", 165), SECCOMP_RET_ALLOW, "that one's calls");
	ASSERT_EQ(policy_verdict(dir, "other", 39), SECCOMP_RET_KILL_PROCESS, "only");
	snprintf(cmd, sizeof(cmd), "%s policy-from-log --log %s --pid 77 --uid 1000 --exec-id 2 "
		 "-o %s/img >/dev/null 2>&1", sfctl, path, dir);
	ASSERT_EQ(run(cmd, NULL, 0), 0, "one image, picked by exec id");
	ASSERT_EQ(policy_verdict(dir, "img", 39), SECCOMP_RET_ALLOW, "its calls");
	ASSERT_EQ(policy_verdict(dir, "img", 59), SECCOMP_RET_KILL_PROCESS, "not the other's");
	snprintf(cmd, sizeof(cmd), "%s --json policy-from-log --log %s --pid 77 2>/dev/null",
		 sfctl, path);
	ASSERT_EQ(run(cmd, out, sizeof(out)), 1, "--json: refused too");
	ASSERT_TRUE(strstr(out, "\"images\"") && strstr(out, "\"start_ns\": 9000"),
		    "the images as JSON");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd)) { /* best effort */ }
}

/* The value of key in o as a string ("" when absent). */
static const char *str_of(struct json_object *o, const char *key)
{
	struct json_object *v;

	return o && json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : "";
}

/* --format oci: an OCI seccomp profile, read back with json-c. */
TEST(sfctl_policy_from_log_as_an_oci_profile)
{
	char sfctl[PATH_MAX], dir[] = "/tmp/sftest-oci-XXXXXX", path[128], cmd[PATH_MAX * 2];
	struct json_object *o, *arr, *rule, *names;
	FILE *f = policy_log(sfctl, sizeof(sfctl), dir, path, sizeof(path));

	if (!f)
		return;
	/* getpid on all three ABIs, write on x86-64 only, getppid (64) on
	 * i386 only, and another pid's mkdir. */
	fprintf(f, "{\"pid\":77,\"nr\":39,\"arch\":\"x86_64\"}\n{\"pid\":77,\"nr\":1,\"arch\":\"x86_64\"}\n"
		"{\"pid\":77,\"nr\":20,\"arch\":\"i386\"}\n{\"pid\":77,\"nr\":64,\"arch\":\"i386\"}\n"
		"{\"pid\":77,\"nr\":%d,\"arch\":\"x32\"}\n{\"pid\":78,\"nr\":83,\"arch\":\"x86_64\"}\n",
		0x40000000 | 39);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s policy-from-log --log %s --pid 77 --default 'ERRNO(13)' "
		 "--format oci -o %s/p >/dev/null", sfctl, path, dir);
	ASSERT_EQ(system(cmd), 0, "policy-from-log --format oci");
	snprintf(path, sizeof(path), "%s/p.json", dir);
	o = json_object_from_file(path);
	if (!ASSERT_OK_PTR(o, "p.json is JSON"))
		goto out;
	ASSERT_STREQ(str_of(o, "defaultAction"), "SCMP_ACT_ERRNO", "defaultAction");
	ASSERT_STREQ(str_of(o, "defaultErrnoRet"), "13", "defaultErrnoRet");
	ASSERT_TRUE(json_object_object_get_ex(o, "architectures", &arr) &&
		    json_object_array_length(arr) == 3, "three architectures");
	ASSERT_STREQ(json_object_get_string(json_object_array_get_idx(arr, 0)),
		     "SCMP_ARCH_X86_64", "x86-64 first");
	ASSERT_TRUE(json_object_object_get_ex(o, "syscalls", &arr) &&
		    json_object_array_length(arr) == 1, "one rule");
	rule = json_object_array_get_idx(arr, 0);
	ASSERT_STREQ(str_of(rule, "action"), "SCMP_ACT_ALLOW", "it allows");
	ASSERT_TRUE(json_object_object_get_ex(rule, "names", &names) &&
		    strstr(json_object_to_json_string(names), "\"getpid\"") &&
		    strstr(json_object_to_json_string(names), "\"getppid\""),
		    "every name seen, on any arch");
	ASSERT_FALSE(json_object_object_get_ex(rule, "includes", NULL),
		     "no includes: moby's arches name the host, not the ABI");
	ASSERT_TRUE(strstr(json_object_to_json_string(o), "mkdir") == NULL,
		    "another pid's calls are not in it");
	json_object_put(o);
out:
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd)) { /* best effort */ }
}
