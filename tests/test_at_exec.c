// SPDX-License-Identifier: GPL-2.0-only
/*
 * Arm at exec (SF_ATTACH_AT_EXEC), through the runtime: a filter put on a
 * task judges nothing until the task's next successful execve, and then
 * judges the new image's very first call. Children forked before the exec
 * wait for their own exec. A task a filter already judges is never
 * suspended, and a waiting task takes no filter that would judge at once.
 *
 * The exec'd image is build/tests/sf-first-call, whose first system call
 * is getppid(): the filters here kill on getppid.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "c2e.h"
#include "cgroup.h"
#include "daemon.h"
#include "runtime.h"
#include "wstatus.h"
#include "rtopen.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define NR_GETPPID 110
#define NR_UNAME   63
#define OFF_NR     0
#define RET_ALLOW        0x7fff0000U
#define RET_KILL_PROCESS 0x80000000U

/* ret on syscall nr, ALLOW on the rest. */
static struct sock_fprog on_nr(struct sock_filter f[4], uint32_t nr, uint32_t ret)
{
	f[0] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, OFF_NR);
	f[1] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1);
	f[2] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, ret);
	f[3] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, RET_ALLOW);
	return (struct sock_fprog){ .len = 4, .filter = f };
}

/* Kills on getppid: the one verdict both tiers carry out alike. */
static struct sock_fprog kill_getppid(struct sock_filter f[4])
{
	return on_nr(f, NR_GETPPID, RET_KILL_PROCESS);
}

/* How a killed image ends: SIGSYS where the kernel's own action runs
 * (lsm tier), SIGKILL from bpf_send_signal() (tracepoint tier). */
static bool killed(int st)
{
	return wstatus_killed_by(st, SIGKILL) || wstatus_killed_by(st, SIGSYS);
}

static int attach(struct sf_runtime *rt, pid_t tid, struct sock_fprog p, unsigned int flags,
		  uint32_t *id)
{
	struct c2e_error e;

	return sf_runtime_attach(rt, tid, &p, flags, id, &e);
}

struct waiting { pid_t tid; int n_filters; bool at_exec; };

static int find_task(void *ctx, const struct sf_task_info *t)
{
	struct waiting *w = ctx;

	if (t->tid == w->tid) {
		w->n_filters = (int)t->n_filters;
		w->at_exec = t->at_exec;
	}
	return 0;
}

static struct waiting task_state(struct sf_runtime *rt, pid_t tid)
{
	struct waiting w = { tid, 0, false };

	sf_runtime_for_each_task(rt, find_task, &w);
	return w;
}

/* A child that waits for a byte on go, then runs steps(): its exit status
 * is what the steps report. */
struct kid { pid_t pid; int go; };

static bool kid_start(struct kid *k, int (*steps)(const char *), const char *image)
{
	int p[2];
	char c;

	if (pipe(p))
		return false;
	k->pid = fork();
	if (k->pid == 0) {
		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(100);
		_exit(steps(image));
	}
	close(p[0]);
	k->go = p[1];
	return k->pid > 0;
}

/* Releases the child and returns its wait status. */
static int kid_finish(struct kid *k)
{
	int status = -1;

	if (write(k->go, "g", 1) != 1)
		kill(k->pid, SIGKILL);
	close(k->go);
	if (waitpid(k->pid, &status, 0) != k->pid)
		return -1;
	return status;
}

static void kid_kill(struct kid *k)
{
	kill(k->pid, SIGKILL);
	close(k->go);
	waitpid(k->pid, NULL, 0);
}

/* Before the exec nothing is judged, not even after a failed execve; a
 * child forked before it is killed at its own image's first call; then
 * the exec'd image is killed at its first call. An exit code names the
 * step that went wrong. */
static volatile int *progress; /* shared: the last step the child passed */

static int before_and_after(const char *image)
{
	char *const argv[] = { (char *)image, NULL };
	pid_t g;
	int st;

	if (syscall(SYS_getppid) < 0)
		return 1;
	execve("/nonexistent/sf-first-call", argv, environ);
	if (syscall(SYS_getppid) < 0)
		return 2;
	g = fork();
	if (g == 0) {
		execve(image, argv, environ);
		_exit(3);
	}
	if (g < 0 || waitpid(g, &st, 0) != g || !killed(st))
		return 4;
	*progress = 1;
	execve(image, argv, environ);
	return 5;
}

static bool find_image(char *image, size_t size)
{
	return sfd_find_test_prog("sf-first-call", image, size);
}

TEST(at_exec_filter_waits_for_the_exec_and_judges_the_first_call_after_it)
{
	struct sock_filter f[4];
	struct sf_runtime *rt;
	struct kid k;
	char image[4096], buf[64];
	uint32_t id;
	struct waiting w;
	int st;

	progress = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!ASSERT_TRUE(progress != MAP_FAILED, "mmap") || !find_image(image, sizeof(image)) ||
	    !(rt = rtopen()))
		return;
	*progress = 0;
	if (!ASSERT_TRUE(kid_start(&k, before_and_after, image), "fork"))
		goto out;
	if (!ASSERT_OK(attach(rt, k.pid, kill_getppid(f), SF_ATTACH_AT_EXEC, &id),
		       "attach at exec")) {
		kid_kill(&k);
		goto out;
	}
	w = task_state(rt, k.pid);
	ASSERT_EQ(w.n_filters, 1, "filters on the waiting task");
	ASSERT_TRUE(w.at_exec, "the task is listed as waiting for its exec");
	st = kid_finish(&k);
	test_log("the child: %s (exit 1-2: judged before its exec; 4: its fork child "
		 "was not killed; 5: no exec)\n", wstatus_str(st, buf, sizeof(buf)));
	ASSERT_EQ(*progress, 1, "the child's steps before its exec ran unjudged");
	ASSERT_TRUE(killed(st), "the exec'd image is killed at its first call");
out:
	sf_runtime_close(rt);
}

/* Waits for the go byte only; the test decides what happens to it. */
static int idle(const char *image)
{
	char *const argv[] = { (char *)image, NULL };

	execve(image, argv, environ);
	return 9;
}

TEST(at_exec_never_suspends_a_judged_task_nor_adds_a_filter_that_judges_now)
{
	struct sock_filter f1[4], f2[4], f3[4];
	struct sock_fprog repl;
	struct c2e_error e;
	struct sf_runtime *rt;
	struct kid judged, waiting;
	char image[4096], buf[64];
	uint32_t id1, id2, id3;
	int st;

	if (!find_image(image, sizeof(image)) || !(rt = rtopen()))
		return;
	if (!ASSERT_TRUE(kid_start(&judged, idle, image), "fork") ||
	    !ASSERT_TRUE(kid_start(&waiting, idle, image), "fork"))
		goto out;
	ASSERT_OK(attach(rt, judged.pid, kill_getppid(f1), 0, &id1), "plain attach");
	ASSERT_EQ(attach(rt, judged.pid, on_nr(f2, NR_UNAME, RET_KILL_PROCESS),
			 SF_ATTACH_AT_EXEC, &id2), -EBUSY, "at-exec attach to a judged task");
	ASSERT_OK(attach(rt, waiting.pid, on_nr(f1, NR_UNAME, RET_ALLOW), SF_ATTACH_AT_EXEC,
			 &id1), "at-exec attach");
	ASSERT_EQ(attach(rt, waiting.pid, on_nr(f2, NR_UNAME, RET_KILL_PROCESS), 0, &id2),
		  -EBUSY, "plain attach to a waiting task");
	ASSERT_OK(attach(rt, waiting.pid, on_nr(f3, NR_UNAME, RET_KILL_PROCESS),
			 SF_ATTACH_AT_EXEC, &id3), "a second at-exec attach");
	ASSERT_EQ(task_state(rt, waiting.pid).n_filters, 2, "filters on the waiting task");
	/* Replaced while it waits: it still waits, and then the new program
	 * judges (the only one that kills on getppid). */
	repl = kill_getppid(f1);
	ASSERT_OK(sf_runtime_replace(rt, id1, &repl, &e), "replace");
	ASSERT_TRUE(task_state(rt, waiting.pid).at_exec, "still waiting after replace");
	st = kid_finish(&judged);
	test_log("judged task: %s\n", wstatus_str(st, buf, sizeof(buf)));
	ASSERT_TRUE(killed(st), "the judged task kept its filter");
	st = kid_finish(&waiting);
	test_log("waiting task: %s\n", wstatus_str(st, buf, sizeof(buf)));
	ASSERT_TRUE(killed(st), "the replaced program judges the waiting task after its exec");
out:
	sf_runtime_close(rt);
}

/* A cgroup's filters judge a task from the moment it joins: a waiting
 * task that enters an attached cgroup stops waiting. */
TEST(at_exec_task_joining_an_attached_cgroup_is_judged_at_once)
{
	struct sock_filter f1[4], f2[4];
	struct sf_runtime *rt;
	struct sock_fprog cp;
	struct c2e_error e;
	struct kid k = { 0, -1 };
	char image[4096], cg[512];
	uint32_t id1, id2;

	if (!find_image(image, sizeof(image)) || !tcg_make(cg, sizeof(cg), "sftest-atexec"))
		return;
	if (!(rt = rtopen()))
		goto out;
	cp = on_nr(f2, NR_UNAME, RET_KILL_PROCESS);
	if (ASSERT_TRUE(kid_start(&k, idle, image), "fork") &&
	    ASSERT_OK(attach(rt, k.pid, kill_getppid(f1), SF_ATTACH_AT_EXEC, &id1), "at exec") &&
	    ASSERT_OK(sf_runtime_attach_cgroup(rt, cg, &cp, 0, &id2, &e), "attach the cgroup") &&
	    ASSERT_TRUE(tcg_move(cg, k.pid), "join the cgroup")) {
		ASSERT_FALSE(task_state(rt, k.pid).at_exec, "no longer waiting");
	}
	if (k.pid > 0)
		kid_kill(&k);
	sf_runtime_close(rt);
out:
	rmdir(cg);
}

/* ---- cgroups attached at exec ------------------------------------------ */

/* Which progress slot a kid marks once its getppid before the exec ran. */
static int kid_slot;

static int getppid_then_exec(const char *image)
{
	char *const argv[] = { (char *)image, NULL };

	if (syscall(SYS_getppid) < 0)
		return 1;
	progress[kid_slot] = 1;
	execve(image, argv, environ);
	return 5;
}

static bool kid_start_in(struct kid *k, int slot, const char *image)
{
	kid_slot = slot;
	return ASSERT_TRUE(kid_start(k, getppid_then_exec, image), "fork");
}

enum { IN_BEFORE, JOINS, JUDGED_JOINS, WAITING_JOINS, N_KIDS };
static const char *const kid_name[N_KIDS] = {
	"in the cgroup before the attach", "joins after it, no filter",
	"joins after it, judged by a filter of its own",
	"joins after it, its own filter waiting for its exec",
};

/* A container runtime's seccomp filter judges each process from the
 * execve of its workload, `runc exec`'s too: a cgroup attached at exec
 * lets every task in it, and every joiner, wait for its next execve,
 * unless a filter judges it already (then the cgroup's filters judge it
 * at once: never looser). */
TEST(at_exec_cgroup_tasks_in_it_and_joiners_wait_for_their_exec_a_judged_one_does_not)
{
	struct sock_filter f[4], own[4];
	struct sock_fprog cp = kill_getppid(f);
	struct sf_runtime *rt = NULL;
	struct kid k[N_KIDS];
	struct waiting w;
	struct c2e_error e;
	char image[4096], cg[512], what[160], buf[64];
	uint32_t id;
	int i, st, started = 0;

	progress = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!ASSERT_TRUE(progress != MAP_FAILED, "mmap") || !find_image(image, sizeof(image)) ||
	    !tcg_make(cg, sizeof(cg), "sftest-cgexec"))
		return;
	memset((void *)progress, 0, 4096);
	if (!(rt = rtopen()))
		goto out;
	for (started = 0; started < N_KIDS; started++)
		if (!kid_start_in(&k[started], started, image))
			goto kill;
	if (!ASSERT_TRUE(tcg_move(cg, k[IN_BEFORE].pid), "into the cgroup") ||
	    !ASSERT_OK(attach(rt, k[JUDGED_JOINS].pid, on_nr(own, NR_UNAME, RET_KILL_PROCESS),
			      0, &id), "its own filter, judging") ||
	    !ASSERT_OK(attach(rt, k[WAITING_JOINS].pid, on_nr(own, NR_UNAME, RET_KILL_PROCESS),
			      SF_ATTACH_AT_EXEC, &id), "its own filter, at exec") ||
	    !ASSERT_OK(sf_runtime_attach_cgroup(rt, cg, &cp, SF_ATTACH_AT_EXEC, &id, &e),
		       "attach the cgroup at exec"))
		goto kill;
	for (i = JOINS; i < N_KIDS; i++)
		if (!ASSERT_TRUE(tcg_move(cg, k[i].pid), "join the cgroup"))
			goto kill;
	/* What sfilterd does when the queued joins wake it: the joiners
	 * with a chain are finished in user space. */
	ASSERT_TRUE(sf_runtime_process_pending(rt) >= 0, "process_pending");
	for (i = 0; i < N_KIDS; i++) {
		w = task_state(rt, k[i].pid);
		snprintf(what, sizeof(what), "%s: its filters (the cgroup's too)", kid_name[i]);
		ASSERT_EQ(w.n_filters, i >= JUDGED_JOINS ? 2 : 1, what);
		snprintf(what, sizeof(what), "%s: %s", kid_name[i],
			 i == JUDGED_JOINS ? "judged now" : "waits for its exec");
		ASSERT_EQ(w.at_exec, i != JUDGED_JOINS, what);
	}
	for (i = 0; i < N_KIDS; i++) {
		st = kid_finish(&k[i]);
		test_log("%s: %s, getppid before the exec %s\n", kid_name[i],
			 wstatus_str(st, buf, sizeof(buf)), progress[i] ? "ran" : "did not run");
		snprintf(what, sizeof(what), "%s: %s", kid_name[i], i == JUDGED_JOINS ?
			 "killed at its getppid before the exec" :
			 "its getppid before the exec ran");
		ASSERT_EQ(progress[i], i != JUDGED_JOINS, what);
		snprintf(what, sizeof(what), "%s: killed", kid_name[i]);
		ASSERT_TRUE(killed(st), what);
	}
	started = 0;
kill:
	for (i = 0; i < started; i++)
		kid_kill(&k[i]);
	sf_runtime_close(rt);
out:
	rmdir(cg);
	munmap((void *)progress, 4096);
}

/* A joiner's chain waits only when every filter in it was attached at
 * exec: below a cgroup attached plain, the filters judge from the join,
 * whichever was attached first. */
TEST(at_exec_cgroup_below_one_attached_plain_judges_from_the_join)
{
	struct sock_filter f1[4], f2[4];
	struct sock_fprog outer_p = on_nr(f1, NR_UNAME, RET_KILL_PROCESS), inner_p = kill_getppid(f2);
	struct sf_runtime *rt = NULL;
	struct c2e_error e;
	struct kid k = { 0, -1 };
	char image[4096], outer[512], inner[600], buf[64];
	uint32_t id;
	int round, st;

	progress = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!ASSERT_TRUE(progress != MAP_FAILED, "mmap") || !find_image(image, sizeof(image)))
		return;
	for (round = 0; round < 2 && !test_failed(); round++) {
		if (!tcg_make(outer, sizeof(outer), round ? "sftest-outer1" : "sftest-outer0"))
			break;
		snprintf(inner, sizeof(inner), "%s/inner", outer);
		if (!ASSERT_OK(mkdir(inner, 0755) ? -errno : 0, "mkdir inner") ||
		    !(rt = rtopen()))
			goto next;
		/* Round 0: outer first; round 1: inner first (then re-based). */
		if (round == 0 && !ASSERT_OK(sf_runtime_attach_cgroup(rt, outer, &outer_p, 0, &id, &e),
					     "attach outer, plain"))
			goto next;
		if (!ASSERT_OK(sf_runtime_attach_cgroup(rt, inner, &inner_p, SF_ATTACH_AT_EXEC, &id,
							&e), "attach inner, at exec"))
			goto next;
		if (round == 1 && !ASSERT_OK(sf_runtime_attach_cgroup(rt, outer, &outer_p, 0, &id, &e),
					     "attach outer, plain"))
			goto next;
		progress[0] = 0;
		if (!kid_start_in(&k, 0, image))
			goto next;
		if (ASSERT_TRUE(tcg_move(inner, k.pid), "join inner")) {
			ASSERT_FALSE(task_state(rt, k.pid).at_exec, "the joiner is judged now");
			st = kid_finish(&k);
			test_log("round %d: %s\n", round, wstatus_str(st, buf, sizeof(buf)));
			ASSERT_TRUE(killed(st) && !progress[0], "killed at its getppid before the exec");
		} else {
			kid_kill(&k);
		}
next:
		sf_runtime_close(rt);
		rt = NULL;
		rmdir(inner);
		rmdir(outer);
	}
	munmap((void *)progress, 4096);
}

/* The runtime's state file keeps which cgroups were attached at exec: a
 * runtime that adopts the pins attaches another filter at exec to the
 * cgroup, and a joiner still waits. */
TEST(at_exec_cgroup_stays_at_exec_for_a_runtime_that_adopts_the_pins)
{
	struct sf_runtime_opts o = { .verbose = getenv("SF_VERBOSE") != NULL };
	struct sock_filter f1[4], f2[4];
	struct sock_fprog p1 = kill_getppid(f1), p2 = on_nr(f2, NR_UNAME, RET_KILL_PROCESS);
	struct sf_runtime *rt = NULL;
	struct c2e_error e;
	struct kid k = { 0, -1 };
	char image[4096], cg[512], pin[64], buf[64];
	bool adopted = true;
	uint32_t id;
	int st;

	progress = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!ASSERT_TRUE(progress != MAP_FAILED, "mmap") || !find_image(image, sizeof(image)) ||
	    !tcg_make(cg, sizeof(cg), "sftest-cgexec-pin"))
		return;
	progress[0] = 0;
	snprintf(pin, sizeof(pin), "/sys/fs/bpf/sfilter-test-%d", getpid());
	sf_runtime_uninstall_dir(pin);
	if (!ASSERT_OK(sf_runtime_open_pinned(&rt, &o, pin, &adopted), "open pinned") ||
	    !ASSERT_OK(sf_runtime_attach_cgroup(rt, cg, &p1, SF_ATTACH_AT_EXEC, &id, &e),
		       "attach at exec"))
		goto out;
	sf_runtime_close(rt);
	rt = NULL;
	if (!ASSERT_OK(sf_runtime_open_pinned(&rt, &o, pin, &adopted), "open pinned again") ||
	    !ASSERT_TRUE(adopted, "adopted") ||
	    !ASSERT_OK(sf_runtime_attach_cgroup(rt, cg, &p2, SF_ATTACH_AT_EXEC, &id, &e),
		       "a second filter at exec") || !kid_start_in(&k, 0, image))
		goto out;
	if (ASSERT_TRUE(tcg_move(cg, k.pid), "join")) {
		struct waiting w = task_state(rt, k.pid);

		ASSERT_EQ(w.n_filters, 2, "the joiner has both filters");
		ASSERT_TRUE(w.at_exec, "the joiner waits for its exec");
		st = kid_finish(&k);
		test_log("the joiner: %s\n", wstatus_str(st, buf, sizeof(buf)));
		ASSERT_TRUE(killed(st) && progress[0], "its getppid ran before the exec, the "
			    "image is killed");
	} else {
		kid_kill(&k);
	}
out:
	if (rt)
		sf_runtime_uninstall(rt);
	sf_runtime_close(rt);
	sf_runtime_uninstall_dir(pin);
	rmdir(cg);
	munmap((void *)progress, 4096);
}
