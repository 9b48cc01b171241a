// SPDX-License-Identifier: GPL-2.0-only
/*
 * The runtime's core, on whichever kernel the suite runs on:
 *   - the tier it reports is the one the kernel allows: lsm exactly when
 *     an LSM program, probed independently of the runtime, runs;
 *   - a task confined by sf_runtime_attach() on its tid is killed by
 *     SIGKILL on its first denied syscall, through the action table and
 *     through the chain program, while its allowed syscalls work;
 *   - one thread (not the group leader) can be confined alone;
 *   - fork and threads inherit the chain;
 *   - int $0x80 from a 64-bit task is seen as arch I386 with i386 numbers
 *     and 32-bit argument registers (a skipped part where the kernel
 *     refuses int $0x80);
 *   - ERRNO: refused side effect on the lsm tier, the documented fallback
 *     on the tracepoint tier;
 *   - events made in user space are charged to the kernel's budgets.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "probe.h"
#include "c2e.h"
#include "runtime.h"
#include "event_json.h"
#include "sockfilter.h"
#include "rtopen.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#define LD_NR   STMT(BPF_LD | BPF_W | BPF_ABS, 0)
#define LD_ARCH STMT(BPF_LD | BPF_W | BPF_ABS, 4)
#define LD_ARG0 STMT(BPF_LD | BPF_W | BPF_ABS, 16)
#define RET(v)  STMT(BPF_RET | BPF_K, v)

#define I386_GETPID 20
#define MAGIC_ARG   0x1234

/* ---- children ----------------------------------------------------------- */

struct child {
	pid_t pid;
	int go;      /* parent -> child */
	int report;  /* child -> parent */
};

static void wait_go(int fd)
{
	char c;

	if (read(fd, &c, 1) != 1)
		_exit(99);
}

static void say(int fd, char c)
{
	if (write(fd, &c, 1) != 1)
		_exit(98);
}

static bool spawn(struct child *c, void (*body)(int go, int report))
{
	int go[2], rep[2];

	if (pipe(go) || pipe(rep))
		return false;
	c->pid = fork();
	if (c->pid < 0)
		return false;
	if (c->pid == 0) {
		close(go[1]);
		close(rep[0]);
		body(go[0], rep[1]);
		_exit(0);
	}
	close(go[0]);
	close(rep[1]);
	c->go = go[1];
	c->report = rep[0];
	return true;
}

/* Reads what the child reported until it closes the pipe; returns the
 * wait status. */
static int finish(struct child *c, char *got, size_t size)
{
	size_t n = 0;
	ssize_t r;
	int status = -1;

	close(c->go);
	while (n + 1 < size && (r = read(c->report, got + n, size - 1 - n)) > 0)
		n += r;
	got[n] = 0;
	close(c->report);
	waitpid(c->pid, &status, 0);
	return status;
}

static int attach(struct sf_runtime *rt, pid_t tid, struct sock_filter *f,
		  size_t len, unsigned int flags, uint32_t *id)
{
	struct sock_fprog p = { (unsigned short)len, f };
	struct c2e_error e;

	return sf_runtime_attach(rt, tid, &p, flags, id, &e);
}

static bool killed_by_sigkill(int status, const char *what)
{
	bool ok = ASSERT_TRUE(WIFSIGNALED(status), what);

	if (ok)
		ok = ASSERT_EQ(WTERMSIG(status), SIGKILL, what);
	else
		test_log("%s: status 0x%x\n", what, status);
	return ok;
}

/* getppid is killed whatever its arguments (a constant in the action
 * table); uname only when args[0] == MAGIC_ARG (the chain program). */
static struct sock_filter kill_filter[] = {
	LD_ARCH,
	JUMP(BPF_JMP | BPF_JEQ | BPF_K, C2E_AUDIT_ARCH_X86_64, 1, 0),
	RET(SECCOMP_RET_KILL_PROCESS),
	LD_NR,
	JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
	RET(SECCOMP_RET_KILL_PROCESS),
	JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_uname, 0, 3),
	LD_ARG0,
	JUMP(BPF_JMP | BPF_JEQ | BPF_K, MAGIC_ARG, 0, 1),
	RET(SECCOMP_RET_KILL_THREAD),
	RET(SECCOMP_RET_ALLOW),
};

static void body_getppid(int go, int rep)
{
	wait_go(go);
	if (getpid() > 0 && syscall(SYS_uname, NULL) == -1)
		say(rep, 'a'); /* allowed calls behave normally */
	syscall(SYS_getppid);
	say(rep, 'S');     /* survived: must not happen */
}

static void body_uname_arg(int go, int rep)
{
	wait_go(go);
	syscall(SYS_getpid);
	say(rep, 'a');
	syscall(SYS_uname, (long)MAGIC_ARG);
	say(rep, 'S');
}

struct ev_log {
	pid_t pid;
	struct sf_event ev[16];
	int n;
};

static int collect(void *ctx, const struct sf_event *ev)
{
	struct ev_log *l = ctx;
	char json[1024];

	if ((pid_t)ev->pid != l->pid || l->n == (int)ARRAY_SIZE(l->ev))
		return 0;
	l->ev[l->n++] = *ev;
	if (sf_event_to_json(ev, json, sizeof(json)) > 0)
		test_log("event %s\n", json);
	return 0;
}

static void drain(struct sf_runtime *rt, struct ev_log *l)
{
	int i;

	for (i = 0; i < 5 && l->n == 0; i++)
		sf_runtime_poll_events(rt, 100, collect, l);
	sf_runtime_poll_events(rt, 0, collect, l);
}

TEST(runtime_tier_matches_kernel)
{
	struct sf_runtime *rt;
	char why[256];
	int lsm = probe_bpf_lsm(why, sizeof(why));

	if (lsm < 0) {
		test_fail(__FILE__, __LINE__, "%s", why);
		return;
	}
	rt = rtopen();
	if (!rt)
		return;
	test_log("%s: %s; runtime tier %s\n", test_kernel_name(), why,
		 sf_tier_name(sf_runtime_tier(rt)));
	ASSERT_EQ(sf_runtime_tier(rt), lsm ? SF_TIER_LSM : SF_TIER_TRACEPOINT,
		  "tier is lsm exactly when BPF LSM programs run");
	printf("  runtime tier on %s: %s\n", test_kernel_name(),
	       sf_tier_name(sf_runtime_tier(rt)));
	sf_runtime_close(rt);

	/* force_tracepoint is honoured everywhere. */
	struct sf_runtime_opts o = { .force_tracepoint = true };
	if (ASSERT_OK(sf_runtime_open(&rt, &o), "open forced")) {
		ASSERT_EQ(sf_runtime_tier(rt), SF_TIER_TRACEPOINT, "forced tier");
		sf_runtime_close(rt);
	}
}

static void step_kills_denied_allows_rest(struct sf_runtime *rt)
{
	struct ev_log log = { 0 };
	struct child c;
	char got[16];
	uint32_t id = 0;
	int status;

	/* Through the action table: getppid is KILL whatever the args. */
	if (!ASSERT_TRUE(spawn(&c, body_getppid), "spawn"))
		goto out;
	if (ASSERT_OK(attach(rt, c.pid, kill_filter, ARRAY_SIZE(kill_filter), 0, &id),
		      "attach"))
		say(c.go, 'g');
	log.pid = c.pid;
	status = finish(&c, got, sizeof(got));
	killed_by_sigkill(status, "getppid child");
	ASSERT_STREQ(got, "a", "child's reports");
	drain(rt, &log);
	if (ASSERT_GE(log.n, 1, "events")) {
		ASSERT_EQ(log.ev[0].nr, SYS_getppid, "event nr");
		ASSERT_EQ(log.ev[0].arch, C2E_AUDIT_ARCH_X86_64, "event arch");
		ASSERT_EQ(log.ev[0].ret, SECCOMP_RET_KILL_PROCESS, "event ret");
		ASSERT_EQ(log.ev[0].filter_id, id, "event filter");
		ASSERT_EQ(log.ev[0].taken, SF_TAKEN_KILLED, "event taken");
	}

	/* Through the chain program: the verdict depends on args[0]. */
	if (!ASSERT_TRUE(spawn(&c, body_uname_arg), "spawn"))
		goto out;
	if (ASSERT_OK(attach(rt, c.pid, kill_filter, ARRAY_SIZE(kill_filter), 0, &id),
		      "attach"))
		say(c.go, 'g');
	log = (struct ev_log){ .pid = c.pid };
	status = finish(&c, got, sizeof(got));
	killed_by_sigkill(status, "uname child");
	ASSERT_STREQ(got, "a", "child's reports");
	drain(rt, &log);
	if (ASSERT_GE(log.n, 1, "events")) {
		ASSERT_EQ(log.ev[0].nr, SYS_uname, "event nr");
		ASSERT_EQ(log.ev[0].args[0], MAGIC_ARG, "event arg0");
		ASSERT_EQ(log.ev[0].ret, SECCOMP_RET_KILL_THREAD, "event ret");
	}
out:
	return;
}

/* ---- one thread alone, and inheritance ---------------------------------- */

struct thr {
	int go, rep;
};

static void *thread_main(void *arg)
{
	struct thr *t = arg;
	pid_t tid = gettid();

	if (write(t->rep, &tid, sizeof(tid)) != sizeof(tid))
		_exit(97);
	wait_go(t->go);             /* attached */
	wait_go(t->go);             /* main thread has made its call */
	syscall(SYS_getppid);
	say(t->rep, 'S');
	return NULL;
}

static int main_go[2]; /* step_confines_one_thread's, made before spawn() */

static void body_thread(int go, int rep)
{
	struct thr t = { go, rep };
	pthread_t th;
	char c;

	if (pthread_create(&th, NULL, thread_main, &t))
		_exit(96);
	/* The thread reads its two bytes from go; main has its own pipe,
	 * or the thread could take main's byte, make its denied call and
	 * take the whole process down before main reports. */
	if (read(main_go[0], &c, 1) != 1)    /* "main may go" */
		_exit(95);
	if (syscall(SYS_getppid) > 0)
		say(rep, 'm');       /* the main thread is not confined */
	say(rep, '.');
	pthread_join(th, NULL);
}

static void step_confines_one_thread(struct sf_runtime *rt)
{
	struct child c;
	pid_t tid;
	char got[16];
	int status;

	if (!ASSERT_OK(pipe(main_go), "pipe") || !ASSERT_TRUE(spawn(&c, body_thread), "spawn"))
		goto out;
	close(main_go[0]);
	if (!ASSERT_EQ(read(c.report, &tid, sizeof(tid)), sizeof(tid), "tid")) {
		kill(c.pid, SIGKILL);
		finish(&c, got, sizeof(got));
		goto out;
	}
	ASSERT_NEQ(tid, c.pid, "thread is not the leader");
	ASSERT_OK(attach(rt, tid, kill_filter, ARRAY_SIZE(kill_filter), 0, NULL),
		  "attach to the thread");
	say(c.go, 'g');              /* thread: attached */
	say(main_go[1], 'g');        /* main: make your call */
	{
		char m[2];

		ssize_t n = 0, r = 1;

		/* Two writes: a pipe read may return the first alone. */
		while (n < 2 && (r = read(c.report, m + n, 2 - n)) > 0)
			n += r;
		if (ASSERT_EQ(n, 2, "main's report"))
			ASSERT_TRUE(m[0] == 'm' && m[1] == '.', "main thread unconfined");
	}
	say(c.go, 'g');              /* thread: main has made its call */
	close(main_go[1]);
	status = finish(&c, got, sizeof(got));
	killed_by_sigkill(status, "confined thread");
	ASSERT_STREQ(got, "", "nothing after the denied call");
out:
	return;
}

static void *thread_getppid(void *arg)
{
	(void)arg;
	syscall(SYS_getppid);
	return (void *)1;
}

static void body_inherit(int go, int rep)
{
	int status;
	pid_t pid;
	pthread_t th;

	wait_go(go);
	pid = fork();                /* the grandchild inherits */
	if (pid == 0) {
		syscall(SYS_getppid);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		say(rep, 'f');
	pid = vfork();
	if (pid == 0) {
		syscall(SYS_getppid);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		say(rep, 'v');
	/* A thread created after the attach: kills the whole process. */
	if (pthread_create(&th, NULL, thread_getppid, NULL) == 0)
		pthread_join(th, NULL);
	say(rep, 'S');
}

static void step_fork_and_threads_inherit(struct sf_runtime *rt)
{
	struct child c;
	char got[16];
	int status;

	if (!ASSERT_TRUE(spawn(&c, body_inherit), "spawn"))
		goto out;
	if (ASSERT_OK(attach(rt, c.pid, kill_filter, ARRAY_SIZE(kill_filter), 0, NULL),
		      "attach"))
		say(c.go, 'g');
	status = finish(&c, got, sizeof(got));
	ASSERT_STREQ(got, "fv", "fork and vfork children killed");
	killed_by_sigkill(status, "new thread");
out:
	return;
}

/* ---- compat ------------------------------------------------------------- */

static long int80(long nr, long a0)
{
	long ret;

	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(nr), "b"(a0)
			 : "memory", "r8", "r9", "r10", "r11");
	return ret;
}

/* LOG for the i386 getpid (so the event shows what the filter saw), KILL
 * for any other i386 call; native calls allowed. */
static struct sock_filter compat_filter[] = {
	LD_ARCH,
	JUMP(BPF_JMP | BPF_JEQ | BPF_K, C2E_AUDIT_ARCH_I386, 1, 0),
	RET(SECCOMP_RET_ALLOW),
	LD_NR,
	JUMP(BPF_JMP | BPF_JEQ | BPF_K, I386_GETPID, 0, 1),
	RET(SECCOMP_RET_LOG),
	RET(SECCOMP_RET_KILL_PROCESS),
};

static void body_compat(int go, int rep)
{
	wait_go(go);
	if (int80(I386_GETPID, (long)0xabcdef0000000000L | MAGIC_ARG) == getpid())
		say(rep, 'l');       /* LOG allows */
	int80(64 /* i386 getppid */, 0);
	say(rep, 'S');
}

static void step_int80_is_i386(struct sf_runtime *rt)
{
	struct ev_log log = { 0 };
	struct child c;
	char got[16];
	int status, i;
	bool seen_log = false;

	if (!ASSERT_TRUE(spawn(&c, body_compat), "spawn"))
		goto out;
	if (ASSERT_OK(attach(rt, c.pid, compat_filter, ARRAY_SIZE(compat_filter), 0, NULL),
		      "attach"))
		say(c.go, 'g');
	log.pid = c.pid;
	status = finish(&c, got, sizeof(got));
	killed_by_sigkill(status, "i386 getppid");
	ASSERT_STREQ(got, "l", "int $0x80 getpid logged and allowed");
	drain(rt, &log);
	for (i = 0; i < log.n; i++) {
		if (log.ev[i].taken != SF_TAKEN_LOGGED)
			continue;
		seen_log = true;
		ASSERT_EQ(log.ev[i].arch, C2E_AUDIT_ARCH_I386, "arch");
		ASSERT_EQ(log.ev[i].nr, I386_GETPID, "i386 nr");
		ASSERT_EQ(log.ev[i].args[0], MAGIC_ARG, "ebx, 32 bits");
	}
	ASSERT_TRUE(seen_log, "LOG event");
out:
	return;
}

/* ---- ERRNO per tier ------------------------------------------------------ */

static struct sock_filter errno_filter[] = {
	LD_NR,
	JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_unlink, 0, 1),
	RET(SECCOMP_RET_ERRNO | 13),
	RET(SECCOMP_RET_ALLOW),
};

static void body_unlink(int go, int rep)
{
	wait_go(go);
	if (unlink("sf-runtime-core-victim") == -1 && errno == 13)
		say(rep, 'e');
	say(rep, 'x');
}

static void step_errno_per_tier(struct sf_runtime *rt)
{
	struct ev_log log = { 0 };
	struct child c;
	char got[16], path[] = "sf-runtime-core-victim";
	struct stat st;
	int status, fd;
	bool lsm;

	lsm = sf_runtime_tier(rt) == SF_TIER_LSM;
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	if (!ASSERT_GE(fd, 0, "victim"))
		goto out;
	close(fd);
	if (!ASSERT_TRUE(spawn(&c, body_unlink), "spawn"))
		goto out;
	/* Fallback log on the tracepoint tier, so the call is observable. */
	if (ASSERT_OK(attach(rt, c.pid, errno_filter, ARRAY_SIZE(errno_filter),
			     SF_ATTACH_FALLBACK_LOG, NULL), "attach"))
		say(c.go, 'g');
	log.pid = c.pid;
	status = finish(&c, got, sizeof(got));
	ASSERT_TRUE(WIFEXITED(status), "exits");
	drain(rt, &log);
	ASSERT_GE(log.n, 1, "event");
	if (lsm) {
		ASSERT_STREQ(got, "ex", "unlink fails with errno 13");
		ASSERT_OK(stat(path, &st), "file still there (lsm tier)");
		if (log.n)
			ASSERT_EQ(log.ev[0].taken, SF_TAKEN_DENIED, "taken");
	} else {
		/* The documented gap: the call runs, the event says so. */
		ASSERT_STREQ(got, "x", "unlink ran");
		ASSERT_TRUE(stat(path, &st) != 0, "file gone (tracepoint tier)");
		if (log.n)
			ASSERT_EQ(log.ev[0].taken, SF_TAKEN_FALLBACK_LOGGED, "taken");
	}
	unlink(path);
out:
	return;
}

/* One runtime for every step: opening and closing it (trampolines) is
 * slow under emulation. */
TEST(runtime_core)
{
	struct sf_runtime *rt = rtopen();
	char why[256];

	if (!rt)
		return;
	test_log("-- kills the denied call, allows the rest\n");
	step_kills_denied_allows_rest(rt);
	test_log("-- confines one thread alone\n");
	step_confines_one_thread(rt);
	test_log("-- fork, vfork and threads inherit\n");
	step_fork_and_threads_inherit(rt);
	test_log("-- int $0x80 is i386\n");
	if (TEST_REQUIRE(probe_int80(why, sizeof(why)), "int80-is-i386", why))
		step_int80_is_i386(rt);
	test_log("-- ERRNO on this tier\n");
	step_errno_per_tier(rt);
	sf_runtime_close(rt);
}

TEST(events_made_in_user_space_take_from_the_same_budget_as_the_kernels)
{
	struct sf_runtime *rt = rtopen();
	struct sf_event_drops dr;
	uint32_t acct = 4242420;   /* no user's: its entry is made here */

	if (!rt)
		return;
	/* 2 a second (one each 500 ms), 20 at once. */
	ASSERT_OK(sf_runtime_set_event_budget(rt, 2, 20), "a budget of 2/s, 20 at once");
	ASSERT_EQ(sf_runtime_charge_events(rt, acct, SF_EV_LOGGED, 30, false), 20,
		  "30 logged events at once: the burst's 20 fit");
	ASSERT_EQ(sf_runtime_charge_events(rt, acct, SF_EV_LOGGED, 5, true), 0,
		  "5 more at once: none fit");
	if (ASSERT_OK(sf_runtime_event_drops_of(rt, acct, &dr), "the account's drops")) {
		ASSERT_EQ(dr.budget[SF_EV_LOGGED], 5, "the 5 charged with drop count as lost");
		ASSERT_EQ(dr.budget[SF_EV_ENFORCED], 0, "none of another class");
	}
	ASSERT_EQ(sf_runtime_charge_events(rt, acct, SF_EV_ENFORCED, 3, false), 3,
		  "denials have a budget of their own");
	usleep(1100000);
	ASSERT_TRUE(sf_runtime_charge_events(rt, acct, SF_EV_LOGGED, 10, false) >= 2,
		    "1.1 s later, 2 more fit");
	ASSERT_OK(sf_runtime_set_event_budget(rt, 0, 0), "no budget");
	ASSERT_EQ(sf_runtime_charge_events(rt, acct, SF_EV_LOGGED, 1000, false), 1000,
		  "without a budget every event fits");
	sf_runtime_close(rt);
}
