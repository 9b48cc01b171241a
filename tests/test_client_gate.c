// SPDX-License-Identifier: GPL-2.0-only
/*
 * libsfclient installs the gate (loader/client/selfgate.c; docs/protocol.md,
 * "The gate and the agent socket"): sf_attach() builds a kernel seccomp
 * filter from the new filter, installs it with a listener before the
 * ATTACH, hands the listener to the daemon's agent socket from a thread the
 * gate does not cover, and closes its own copy.
 *
 * The daemon is the real sfilterd on a private socket. Most cases replace
 * its agent socket with tests/lib/agent's stand-in, which shows what it
 * was handed, can refuse, and answers the notified calls as sfilterd
 * does: CONTINUE while the filter is not yet attached, then the filter's
 * verdict; Docker's clone3 case uses sfilterd's own agent and judge. A call the filter answers with ERRNO returns that errno only
 * through the gate: without one, the tracepoint tier kills the caller after
 * the call, and the lsm tier lets a call without an LSM hook (nanosleep,
 * getppid) run.
 *
 * - A filter that denies the calls the hand-over itself makes (sendmsg,
 *   futex, close, nanosleep) still attaches: nothing deadlocks.
 * - A filter that allows every call of the hand-over gets its gate with
 *   no helper thread (the caller hands the listener over itself); one
 *   that denies one of them needs the thread.
 * - With TSYNC, the helper thread is gone before the filter reaches every
 *   thread: its last calls (libc's, as it exits) are never the filter's
 *   to judge.
 * - The listener is not left in the caller's descriptors.
 * - TSYNC carries the gate to a thread made before the attach.
 * - A second attach has no gate of its own, says so, and still attaches.
 * - SFILTER_GATE=0 installs nothing.
 * - An agent that refuses the listener: the gate stays and the calls it
 *   sends up fail with ENOSYS, never run (fail closed); that is not the
 *   filter as written, so the attach fails, and so does every later one.
 * - Docker's clone3 rule (ERRNO(ENOSYS) without CAP_SYS_ADMIN), as an
 *   unprivileged user: a thread starts (glibc falls back to clone), through
 *   sf_attach_profile() and through sfrun --profile with python3.
 * - sfrun builds one gate from all its filters, so that a call only its
 *   second filter denies is gated too.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "agent.h"
#include "daemon.h"
#include "suid.h"
#include "wstatus.h"
#include "c2e.h"
#include "proto.h"
#include "sfclient.h"
#include "sockfilter.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

SFD_TIER_INDEPENDENT

/* What a child saw, in memory shared with the test: the child records it
 * without a system call, under filters that may deny write. */
struct outcome {
	int r, err;              /* sf_attach()'s */
	char note[512];          /* sf_last_error() after it */
	int r2, err2;            /* a second attach's */
	char note2[512];
	long after;              /* the denied call made after the attach */
	int after_errno;
	int listeners_in_fds;    /* "anon_inode:seccomp notify" in /proc/self/fd */
	int seccomp_mode;        /* /proc/self/status "Seccomp:" */
	volatile int go;         /* for a thread made before the attach */
	int thread_pid;
	long thread_after;
	int thread_errno;
};

/* ret for each of nrs (x86-64), ALLOW for everything else. */
static struct sock_fprog deny_filter_ret(const int *nrs, size_t n, uint32_t ret,
					 struct sock_filter *buf)
{
	size_t i, k = 0;

	buf[k++] = STMT(BPF_LD | BPF_W | BPF_ABS, 4);
	buf[k++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, C2E_AUDIT_ARCH_X86_64, 0, (uint8_t)(n + 1));
	buf[k++] = STMT(BPF_LD | BPF_W | BPF_ABS, 0);
	for (i = 0; i < n; i++)
		buf[k++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nrs[i],
				(uint8_t)(n - i), 0);
	buf[k++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	buf[k++] = STMT(BPF_RET | BPF_K, ret);
	return (struct sock_fprog){ (unsigned short)k, buf };
}

/* ERRNO(EPERM) for each of nrs, ALLOW for everything else. */
static struct sock_fprog deny_filter(const int *nrs, size_t n, struct sock_filter *buf)
{
	return deny_filter_ret(nrs, n, SECCOMP_RET_ERRNO | EPERM, buf);
}

static struct outcome *shared_outcome(void)
{
	struct outcome *o = mmap(NULL, sizeof(*o), PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (!ASSERT_TRUE(o != MAP_FAILED, "mmap"))
		return NULL;
	memset(o, 0, sizeof(*o));
	return o;
}

/* Runs fn in a child and waits for it up to timeout_s: its wait status,
 * or -1 (killed, the test failed) when it hangs. */
static int run_child(int (*fn)(struct outcome *, void *), struct outcome *o, void *arg,
		     int timeout_s)
{
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	long waited_ms = 0;
	int st = -1;
	pid_t pid = fork();

	if (pid == 0)
		_exit(fn(o, arg));
	if (!ASSERT_TRUE(pid > 0, "fork"))
		return -1;
	while (waitpid(pid, &st, WNOHANG) == 0) {
		if (waited_ms >= timeout_s * 1000L) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			test_fail(__FILE__, __LINE__, "the child hung for %d s (a deadlock "
				  "in the gate's hand-over?)", timeout_s);
			return -1;
		}
		nanosleep(&tick, NULL);
		waited_ms += 10;
	}
	return st;
}

static void save_note(char *out, size_t size)
{
	snprintf(out, size, "%s", sf_last_error());
}

/* The descriptors of this process that are seccomp listeners. */
static int count_listeners(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char link[300], target[64];
		ssize_t len;

		snprintf(link, sizeof(link), "/proc/self/fd/%s", e->d_name);
		len = readlink(link, target, sizeof(target) - 1);
		if (len < 0)
			continue;
		target[len] = '\0';
		n += strcmp(target, "anon_inode:seccomp notify") == 0;
	}
	closedir(d);
	return n;
}

static int seccomp_mode(void)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");
	int mode = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Seccomp: %d", &mode) == 1)
			break;
	fclose(f);
	return mode;
}

struct setup {
	struct agent *agent;
	struct sock_fprog prog;
	struct sock_fprog prog2;
	const char *path;
};

/* One case: a private sfilterd, the stand-in agent on its agent socket,
 * and fn in a child; the child's wait status, or -1 when the set-up
 * failed (the test then has failed or been skipped). */
struct gate_case {
	struct sfd dm;
	struct agent a;
	struct outcome *o;
	struct setup s;
};

static void case_end(struct gate_case *c)
{
	agent_stop(&c->a);
	if (c->o)
		munmap(c->o, sizeof(*c->o));
	sfd_cleanup(&c->dm);
}
#define GATE_CASE struct gate_case c __attribute__((cleanup(case_end))) = { 0 }

static bool case_start(struct gate_case *c, const struct sock_fprog *judge, bool armed)
{
	c->o = shared_outcome();
	c->s.agent = &c->a;
	return c->o && sfd_start_for_users(&c->dm, NULL) &&
	       agent_start(&c->a, c->dm.sock, judge, armed);
}

/* The same with sfilterd's own agent socket and judge. */
static bool case_start_sfilterd(struct gate_case *c)
{
	c->o = shared_outcome();
	return c->o && sfd_start_for_users(&c->dm, NULL);
}

static int case_run(struct gate_case *c, int (*fn)(struct outcome *, void *))
{
	char buf[64];
	int st = run_child(fn, c->o, &c->s, test_is_emulated() ? 120 : 20);

	test_log("child: %s; attach %d (%s): %s\n", wstatus_str(st, buf, sizeof(buf)),
		 c->o->r, c->o->r < 0 ? strerror(c->o->err) : "-", c->o->note);
	if (c->a.seen)
		test_log("agent: %d connections, %d listeners, %d refused, %d notified, "
			 "%d judged; json %s\n", c->a.seen->connections, c->a.seen->listeners,
			 c->a.seen->refused, c->a.seen->notified, c->a.seen->judged,
			 c->a.seen->json);
	return st;
}

/* no_new_privs, then sf_attach(prog, flags) with its result and note in
 * o; whether it succeeded. */
static bool attach(struct outcome *o, const struct sock_fprog *prog, unsigned int flags)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return false;
	o->r = sf_attach(prog, flags);
	o->err = errno;
	save_note(o->note, sizeof(o->note));
	return o->r == 0;
}

/* ---- the hand-over ------------------------------------------------------ */

static int attach_then_nanosleep(struct outcome *o, void *arg)
{
	struct setup *s = arg;
	struct timespec ts = { 0, 1000 };

	if (!attach(o, &s->prog, 0))
		return 100;
	s->agent->seen->armed = 1;
	errno = 0;
	o->after = syscall(SYS_nanosleep, &ts, NULL);
	o->after_errno = errno;
	return 0;
}

TEST(a_filter_that_denies_sendmsg_futex_close_and_nanosleep_attaches_through_its_gate)
{
	static const int nrs[] = { SYS_sendmsg, SYS_futex, SYS_close, SYS_nanosleep };
	struct sock_filter buf[16];
	char pid_field[32];
	int st;
	GATE_CASE;

	c.s.prog = deny_filter(nrs, ARRAY_SIZE(nrs), buf);
	if (!case_start(&c, &c.s.prog, false))
		return;
	st = case_run(&c, attach_then_nanosleep);
	ASSERT_TRUE(wstatus_exited_ok(st), "the child attached and lived on");
	ASSERT_EQ(c.o->r, 0, "sf_attach succeeds");
	ASSERT_TRUE(strstr(c.o->note, "gate: installed") != NULL, "the note says the gate is in");
	ASSERT_EQ(c.a.seen->listeners, 1, "the agent holds one listener");
	ASSERT_TRUE(strstr(c.a.seen->json, "\"metadata\":\"" SF_PROTO_AGENT_SELF "\"") &&
		    strstr(c.a.seen->json, "\"fds\":[\"seccompFd\"]") &&
		    strstr(c.a.seen->json, "\"ociVersion\":\"1.0.2\""),
		    "the runtime-spec's ContainerProcessState, metadata sfilter-self");
	snprintf(pid_field, sizeof(pid_field), "\"pid\":%d", c.a.seen->last_pid);
	ASSERT_TRUE(strstr(c.a.seen->json, pid_field) != NULL,
		    "its pid is the process whose call was notified");
	ASSERT_GE(c.a.seen->notified, 2, "the hand-over's own denied calls were notified "
		  "and continued (sendmsg, close), and nanosleep");
	ASSERT_EQ(c.a.seen->last_nr, SYS_nanosleep, "the last call notified is nanosleep");
	ASSERT_TRUE(c.o->after == -1 && c.o->after_errno == EPERM,
		    "nanosleep after the attach: EPERM, from the gate, before it runs");
}

static const int getppid_nr[] = { SYS_getppid };

/* The program's own kernel filter, installed before the attach: no thread
 * can start (clone and clone3 fail with EAGAIN). */
static int attach_without_threads(struct outcome *o, void *arg)
{
	static const int clones[] = { SYS_clone, SYS_clone3 };
	struct setup *s = arg;
	struct sock_filter own[8];
	struct sock_fprog f = deny_filter_ret(clones, 2, SECCOMP_RET_ERRNO | EAGAIN, own);

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &f))
		return 100;
	if (!attach(o, &s->prog, 0))
		return 101;
	s->agent->seen->armed = 1;
	errno = 0;
	o->after = syscall(SYS_getppid);
	o->after_errno = errno;
	return 0;
}

TEST(a_filter_that_allows_the_hand_over_s_calls_gets_its_gate_with_no_helper_thread)
{
	static const int sendmsg_nr[] = { SYS_sendmsg };
	struct sock_filter buf[8];
	GATE_CASE;

	c.s.prog = deny_filter(getppid_nr, 1, buf);
	if (!case_start(&c, &c.s.prog, false))
		return;
	ASSERT_TRUE(wstatus_exited_ok(case_run(&c, attach_without_threads)),
		    "the child attached and lived on");
	ASSERT_TRUE(strstr(c.o->note, "gate: installed") != NULL,
		    "the gate is in though no thread could start");
	ASSERT_EQ(c.a.seen->listeners, 1, "the agent holds its listener");
	ASSERT_TRUE(c.o->after == -1 && c.o->after_errno == EPERM, "getppid: EPERM, by the gate");

	/* Denying sendmsg makes the hand-over need its thread (getppid is
	 * allowed: without a gate, the tier would kill for it). */
	case_end(&c);
	memset(&c, 0, sizeof(c));
	c.s.prog = deny_filter(sendmsg_nr, 1, buf);
	if (!case_start(&c, &c.s.prog, false))
		return;
	ASSERT_TRUE(wstatus_exited_ok(case_run(&c, attach_without_threads)),
		    "a filter that denies sendmsg still attaches");
	ASSERT_TRUE(strstr(c.o->note, "gate: not installed: could not start the thread") != NULL,
		    "without a gate: the thread it needs could not start");
	ASSERT_EQ(c.a.seen->listeners, 0, "nothing was handed over");
}

static int attach_then_scan(struct outcome *o, void *arg)
{
	struct setup *s = arg;

	if (!attach(o, &s->prog, 0))
		return 100;
	o->listeners_in_fds = count_listeners();
	s->agent->seen->armed = 1;
	errno = 0;
	o->after = syscall(SYS_getppid);
	o->after_errno = errno;
	return 0;
}

TEST(the_gate_s_listener_is_not_left_in_the_caller_s_descriptors)
{
	struct sock_filter buf[8];
	GATE_CASE;

	c.s.prog = deny_filter(getppid_nr, 1, buf);
	if (!case_start(&c, &c.s.prog, false))
		return;
	ASSERT_TRUE(wstatus_exited_ok(case_run(&c, attach_then_scan)), "the child lived on");
	ASSERT_EQ(c.o->r, 0, "sf_attach succeeds");
	ASSERT_TRUE(strstr(c.o->note, "gate: installed") != NULL, "with a gate");
	ASSERT_EQ(c.a.seen->listeners, 1, "whose listener the agent holds");
	ASSERT_EQ(c.o->listeners_in_fds, 0, "no seccomp listener among the caller's descriptors");
	ASSERT_TRUE(c.o->after == -1 && c.o->after_errno == EPERM, "getppid: EPERM, by the gate");
}

/* ---- TSYNC ---------------------------------------------------------------- */

static struct outcome *thread_o;

static void *early_thread(void *arg)
{
	(void)arg;
	thread_o->thread_pid = (int)syscall(SYS_gettid);
	while (!thread_o->go)
		sched_yield();
	errno = 0;
	thread_o->thread_after = syscall(SYS_getppid);
	thread_o->thread_errno = errno;
	return NULL;
}

static int tsync_child(struct outcome *o, void *arg)
{
	struct setup *s = arg;
	pthread_t t;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return 100;
	thread_o = o;
	if (pthread_create(&t, NULL, early_thread, NULL))
		return 101;
	while (!o->thread_pid)
		sched_yield();
	o->r = sf_attach(&s->prog, SF_ATTACH_TSYNC);
	o->err = errno;
	save_note(o->note, sizeof(o->note));
	s->agent->seen->armed = 1;
	o->go = 1;
	pthread_join(t, NULL);
	return 0;
}

TEST(tsync_carries_the_gate_to_a_thread_made_before_the_attach)
{
	struct sock_filter buf[8];
	GATE_CASE;

	c.s.prog = deny_filter(getppid_nr, 1, buf);
	if (!case_start(&c, &c.s.prog, false))
		return;
	ASSERT_TRUE(wstatus_exited_ok(case_run(&c, tsync_child)), "the child lived on");
	ASSERT_EQ(c.o->r, 0, "sf_attach with TSYNC succeeds");
	ASSERT_TRUE(strstr(c.o->note, "gate: installed") != NULL &&
		    !strstr(c.o->note, "TSYNC"), "the gate is in, on every thread");
	ASSERT_TRUE(c.o->thread_after == -1 && c.o->thread_errno == EPERM,
		    "the earlier thread's getppid: EPERM, by the gate");
	ASSERT_EQ(c.a.seen->last_pid, c.o->thread_pid, "notified from that thread");
}

/* Attaches with TSYNC a filter that kills for what a thread's exit makes
 * in libc (rt_sigprocmask, madvise), so that the helper thread is needed,
 * then exits; again and again. */
static int tsync_and_exit(struct outcome *o, void *arg)
{
	struct setup *s = arg;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return 100;
	o->r = sf_attach(&s->prog, SF_ATTACH_TSYNC);
	o->err = errno;
	save_note(o->note, sizeof(o->note));
	return o->r ? 101 : 0;
}

/* With sfilterd's own agent and judge, which kills. */
TEST(tsync_never_gives_the_filter_to_the_helper_thread_while_it_exits)
{
	static const int exits[] = { SYS_rt_sigprocmask, SYS_madvise };
	int rounds = test_is_emulated() ? 5 : 30, i, killed = 0, failed = 0;
	struct sock_filter buf[8];
	GATE_CASE;

	c.s.prog = deny_filter_ret(exits, 2, SECCOMP_RET_KILL_PROCESS, buf);
	if (!case_start_sfilterd(&c))
		return;
	for (i = 0; i < rounds; i++) {
		char why[64];
		int st = run_child(tsync_and_exit, c.o, &c.s, test_is_emulated() ? 120 : 20);

		if (wstatus_exited_ok(st) && strstr(c.o->note, "gate: installed"))
			continue;
		if (WIFSIGNALED(st))
			killed++;
		else
			failed++;
		test_log("round %d: %s; attach %d: %s\n", i, wstatus_str(st, why, sizeof(why)),
			 c.o->r, c.o->note);
	}
	ASSERT_EQ(killed, 0, "no child was killed for its helper thread's exit");
	ASSERT_EQ(failed, 0, "every attach went through its gate");
}

/* ---- a second attach, SFILTER_GATE=0 ------------------------------------- */

static int attach_twice(struct outcome *o, void *arg)
{
	struct setup *s = arg;

	if (!attach(o, &s->prog, 0))
		return 100;
	o->r2 = sf_attach(&s->prog2, 0);
	o->err2 = errno;
	save_note(o->note2, sizeof(o->note2));
	return 0;
}

TEST(a_second_attach_reports_that_it_has_no_gate_of_its_own_and_still_attaches)
{
	static const int getpgrp_nr[] = { SYS_getpgrp };
	struct sock_filter buf[8], buf2[8];
	GATE_CASE;

	c.s.prog = deny_filter(getppid_nr, 1, buf);
	c.s.prog2 = deny_filter(getpgrp_nr, 1, buf2);
	if (!case_start(&c, NULL, false))
		return;
	ASSERT_TRUE(wstatus_exited_ok(case_run(&c, attach_twice)), "the child lived on");
	test_log("second attach %d: %s\n", c.o->r2, c.o->note2);
	ASSERT_EQ(c.o->r, 0, "the first attach succeeds");
	ASSERT_TRUE(strstr(c.o->note, "gate: installed") != NULL, "with a gate");
	ASSERT_EQ(c.o->r2, 0, "the second attach succeeds");
	ASSERT_TRUE(strstr(c.o->note2, "gate: not installed: this process has a gate already"),
		    "without one, and says why");
	ASSERT_EQ(c.a.seen->connections, 1, "the second did not even try (EBUSY)");
	ASSERT_EQ(c.a.seen->listeners, 1, "one listener");
}

static int attach_without_gate(struct outcome *o, void *arg)
{
	struct setup *s = arg;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || setenv("SFILTER_GATE", "0", 1))
		return 100;
	o->r = sf_attach(&s->prog, 0);
	o->err = errno;
	save_note(o->note, sizeof(o->note));
	o->seccomp_mode = seccomp_mode();
	o->listeners_in_fds = count_listeners();
	return 0;
}

TEST(sfilter_gate_0_installs_no_gate)
{
	struct sock_filter buf[8];
	GATE_CASE;

	c.s.prog = deny_filter(getppid_nr, 1, buf);
	if (!case_start(&c, NULL, false))
		return;
	ASSERT_TRUE(wstatus_exited_ok(case_run(&c, attach_without_gate)), "the child lived on");
	ASSERT_EQ(c.o->r, 0, "sf_attach succeeds");
	ASSERT_TRUE(strstr(c.o->note, "gate: not installed: SFILTER_GATE=0") != NULL,
		    "the note says why there is no gate");
	ASSERT_EQ(c.a.seen->connections, 0, "the agent socket was not even connected");
	ASSERT_EQ(c.o->seccomp_mode, 0, "no kernel seccomp filter (Seccomp: 0)");
	ASSERT_EQ(c.o->listeners_in_fds, 0, "no listener");
}

/* ---- an agent that refuses ---------------------------------------------- */

/* The attach, then its denied call, then a second attach. */
static int attach_call_attach(struct outcome *o, void *arg)
{
	struct setup *s = arg;

	attach(o, &s->prog, 0);
	o->listeners_in_fds = count_listeners();
	errno = 0;
	o->after = syscall(SYS_getppid);
	o->after_errno = errno;
	o->r2 = sf_attach(&s->prog, 0);
	o->err2 = errno;
	save_note(o->note2, sizeof(o->note2));
	return 0;
}

TEST(an_agent_that_refuses_the_listener_fails_the_attach_and_leaves_the_denied_calls_failing_with_enosys)
{
	struct sock_filter buf[8];
	GATE_CASE;

	c.s.prog = deny_filter(getppid_nr, 1, buf);
	if (!case_start(&c, NULL, false))
		return;
	c.a.seen->refuse = 1;
	ASSERT_TRUE(wstatus_exited_ok(case_run(&c, attach_call_attach)), "the child lived on");
	ASSERT_EQ(c.a.seen->refused, 1, "the agent refused the listener");
	ASSERT_TRUE(c.o->r == -1 && c.o->err == EMFILE,
		    "the filter is not attached as written: refused with the agent's errno");
	ASSERT_TRUE(strstr(c.o->note, "sfilterd did not take this attach's gate") &&
		    strstr(c.o->note, "the test agent refuses listeners") &&
		    strstr(c.o->note, "fail with ENOSYS") && strstr(c.o->note, "not attached"),
		    "the message says why, and what follows");
	ASSERT_EQ(c.o->listeners_in_fds, 0, "the listener is closed");
	ASSERT_TRUE(c.o->after == -1 && c.o->after_errno == ENOSYS,
		    "getppid: ENOSYS from the kernel, never run");
	ASSERT_TRUE(c.o->r2 == -1 && c.o->err2 == EMFILE &&
		    strstr(c.o->note2, "this process's gate was lost"),
		    "a later attach of the process is refused too");
	ASSERT_EQ(c.a.seen->connections, 1, "the later attach tried no gate of its own");
}

/* ---- Docker's clone3 rule ------------------------------------------------- */

/* moby's profiles/seccomp/default.json: clone3 answers ENOSYS to a task
 * without CAP_SYS_ADMIN, so that glibc falls back to clone. */
static const char docker_clone3[] =
	"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":["
	"{\"names\":[\"clone3\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":38,"
	"\"excludes\":{\"caps\":[\"CAP_SYS_ADMIN\"]}}]}";

static bool write_profile(const struct sfd *dm, char *path, size_t size)
{
	int fd;
	bool ok;

	snprintf(path, size, "%s/docker-clone3.json", dm->dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (!ASSERT_TRUE(fd >= 0, "profile file"))
		return false;
	ok = ASSERT_EQ(write(fd, docker_clone3, sizeof(docker_clone3) - 1),
		       (ssize_t)sizeof(docker_clone3) - 1, "write the profile");
	close(fd);
	return ok;
}

static void *nothing(void *arg)
{
	return arg;
}

static int profile_thread(struct outcome *o, void *arg)
{
	struct setup *s = arg;
	pthread_t t;

	if (!suid_become_nobody() || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return 100;
	o->r = sf_attach_profile(s->path, 0);
	o->err = errno;
	save_note(o->note, sizeof(o->note));
	if (o->r)
		return 101;
	o->after = pthread_create(&t, NULL, nothing, NULL);
	if (o->after == 0)
		pthread_join(t, NULL);
	return o->after ? 102 : 0;
}

/* With sfilterd's own agent and judge. */
TEST(docker_s_clone3_rule_lets_an_unprivileged_thread_start_under_the_gate)
{
	char profile[PATH_MAX], sfrun[PATH_MAX], out[4096], cmd[PATH_MAX * 2 + 200];
	const char *sh[] = { "/bin/sh", "-c", cmd, NULL };
	int st;
	GATE_CASE;

	c.s.path = profile;
	if (!case_start_sfilterd(&c) || !write_profile(&c.dm, profile, sizeof(profile)))
		return;
	ASSERT_TRUE(wstatus_exited_ok(case_run(&c, profile_thread)),
		    "sf_attach_profile, then a thread: it runs (not killed)");
	ASSERT_TRUE(strstr(c.o->note, "gate: installed") != NULL, "through the gate");
	ASSERT_TRUE(sfd_log_wait(&c.dm, "\"syscall\":\"clone3\""),
		    "clone3 was judged by sfilterd (the event log)");

	/* The same as a user would try it: sfrun --profile, python3. */
	if (access("/usr/bin/python3", X_OK) != 0 || access("/usr/bin/setpriv", X_OK) != 0 ||
	    !sfd_find_bin("sfrun", "SF_SFRUN", sfrun, sizeof(sfrun))) {
		test_skip_part("sfrun-python3", "no /usr/bin/python3, setpriv or sfrun here");
		return;
	}
	snprintf(cmd, sizeof(cmd),
		 "exec /usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups "
		 "%s --profile %s -- /usr/bin/python3 -c 'import threading; "
		 "t=threading.Thread(target=print, args=(\"ok\",)); t.start(); t.join()'",
		 sfrun, profile);
	st = sfd_run(sh, true, test_is_emulated() ? 120 : 20, out, sizeof(out));
	test_log("sfrun: %s\n", out);
	ASSERT_TRUE(wstatus_exited_ok(st), "python3 under sfrun --profile exits 0 (not 137)");
	ASSERT_TRUE(strstr(out, "ok\n") != NULL, "and its thread printed ok");
}

/* ---- sfrun: one gate for all its filters ------------------------------- */

static bool write_filter(const struct sfd *dm, const char *name, const struct sock_fprog *f,
			 char *path, size_t size)
{
	size_t len = f->len * sizeof(struct sock_filter);
	int fd;
	bool ok;

	snprintf(path, size, "%s/%s", dm->dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (!ASSERT_TRUE(fd >= 0, "filter file"))
		return false;
	ok = ASSERT_EQ(write(fd, f->filter, len), (ssize_t)len, "write the filter");
	close(fd);
	return ok;
}

/* The first filter denies acct, the second getppid, which bash calls as
 * it starts ($PPID): only a gate built from both sends getppid up. The
 * agent judges with both. */
TEST(sfrun_gates_every_filter_it_attaches_with_one_gate)
{
	static const int acct_nr[] = { SYS_acct }, both[] = { SYS_acct, SYS_getppid };
	struct sock_filter buf[8], buf2[8], buf3[8];
	struct sock_fprog first, second, judge;
	char f1[PATH_MAX], f2[PATH_MAX], sfrun[PATH_MAX], out[4096];
	const char *argv[] = { sfrun, "--filter", f1, "--filter", f2, "--",
			       "/bin/bash", "-c", "echo ran", NULL };
	int st;
	GATE_CASE;

	first = deny_filter(acct_nr, 1, buf);
	second = deny_filter(getppid_nr, 1, buf2);
	judge = deny_filter(both, 2, buf3);
	if (!sfd_find_bin("sfrun", "SF_SFRUN", sfrun, sizeof(sfrun)) ||
	    access("/bin/bash", X_OK) != 0) {
		test_skip("no sfrun beside the runner, or no /bin/bash");
		return;
	}
	if (!case_start(&c, &judge, true) ||
	    !write_filter(&c.dm, "first.bpf", &first, f1, sizeof(f1)) ||
	    !write_filter(&c.dm, "second.bpf", &second, f2, sizeof(f2)))
		return;
	st = sfd_run(argv, true, test_is_emulated() ? 120 : 20, out, sizeof(out));
	test_log("sfrun: %s\nagent: %d listeners, %d judged, last nr %d\n", out,
		 c.a.seen->listeners, c.a.seen->judged, c.a.seen->last_nr);
	ASSERT_TRUE(wstatus_exited_ok(st), "bash ran under both filters and exited 0");
	ASSERT_TRUE(strstr(out, "ran\n") != NULL, "and printed");
	ASSERT_EQ(c.a.seen->listeners, 1, "one listener");
	ASSERT_TRUE(c.a.seen->by_nr[SYS_getppid] > 0, "getppid, denied by the second filter only, went up");
}
