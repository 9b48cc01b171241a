// SPDX-License-Identifier: GPL-2.0-only
/*
 * A gated self-attach of a filter the daemon has never loaded is answered
 * before the chain's program is verified (loader/runtime/standin.c): the
 * chain's slot gets a stand-in, the new filter is enforced by the task's
 * gate and sfilterd's judge, and the program is swapped in later. The
 * daemon here holds the program back (SF_TEST_SETTLE_DELAY_MS), so that
 * each case runs while the stand-in is in force, as STATUS's "standins"
 * shows.
 *
 * - The gated caller's denied call is refused, as the filter says, both
 *   on the stand-in and once the program is in.
 * - A process without a gate that attaches the same filter meanwhile is
 *   not given the stand-in: its attach waits for the program, and its
 *   denied call is refused by the program (a kill on every tier).
 * - A filter with a LOG action is never stood in for: the dispatcher
 *   writes its log.
 * - With TSYNC, a thread made before the attach has the filter on the
 *   stand-in too: its gate was carried to it, and its denied call refused.
 * - A fork child that got no task storage (an orphan: it takes its chain
 *   at its first sys_enter, after the gate) has its first denied call
 *   refused, never continued onto the stand-in.
 * - A process that says its ATTACH is gated but handed in no listener (a
 *   hand-made request) is not given a stand-in: its attach is verified
 *   before the reply, and its filter kills.
 * - sfrun, which gates all its filters with one gate before it attaches
 *   them, gets the stand-in too.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "bypass.h"
#include "daemon.h"
#include "wstatus.h"
#include "c2e.h"
#include "proto.h"
#include "sfclient.h"
#include "sockfilter.h"

#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

SFD_TIER_INDEPENDENT

/* What a child saw, in memory shared with the test. */
struct seen {
	int r, err;
	long first, second;      /* getppid's returns, on the stand-in and after */
	int first_errno, second_errno;
	volatile int stage;      /* 1: attached and called once */
	volatile int go;         /* the test's: call again */
};

/* ret for getppid and for a number nobody calls (made unique by tag, so
 * that each case's filter is new to the daemon), ALLOW for the rest. */
static struct sock_fprog getppid_filter(uint32_t ret, uint32_t tag, struct sock_filter *buf)
{
	size_t k = 0;

	buf[k++] = STMT(BPF_LD | BPF_W | BPF_ABS, 4);
	buf[k++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, C2E_AUDIT_ARCH_X86_64, 0, 4);
	buf[k++] = STMT(BPF_LD | BPF_W | BPF_ABS, 0);
	buf[k++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 2, 0);
	buf[k++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, 100000 + tag, 1, 0);
	buf[k++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	buf[k++] = STMT(BPF_RET | BPF_K, ret);
	return (struct sock_fprog){ (unsigned short)k, buf };
}

static struct seen *shared_seen(void)
{
	struct seen *s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (s == MAP_FAILED)
		return NULL;
	memset(s, 0, sizeof(*s));
	return s;
}

/* no_new_privs and sf_attach(prog, flags), its result in s: whether it
 * attached. */
static bool attach(struct seen *s, const struct sock_fprog *prog, unsigned int flags)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return false;
	s->r = sf_attach(prog, flags);
	s->err = errno;
	return s->r == 0;
}

/* Attaches prog, calls getppid, waits for go (reading memory only: no
 * call the filter judges), calls it again. */
static int attacher(struct seen *s, const struct sock_fprog *prog, bool gate)
{
	if (!gate)
		setenv("SFILTER_GATE", "0", 1);
	if (!attach(s, prog, 0))
		return 101;
	errno = 0;
	s->first = syscall(SYS_getppid);
	s->first_errno = errno;
	__atomic_store_n(&s->stage, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&s->go, __ATOMIC_SEQ_CST))
		;
	errno = 0;
	s->second = syscall(SYS_getppid);
	s->second_errno = errno;
	return 0;
}

static pid_t spawn(struct seen *s, const struct sock_fprog *prog, bool gate)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(attacher(s, prog, gate));
	return pid;
}

/* STATUS's "standins", or -1. */
static int standins(const struct sfd *dm)
{
	static char text[65536];
	struct json_object *o, *v;
	int n = -1;

	if (sfd_status(dm, text) < 0 || !(o = json_tokener_parse(text)))
		return -1;
	if (json_object_object_get_ex(o, "standins", &v))
		n = json_object_get_int(v);
	json_object_put(o);
	return n;
}

static void pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Polls until the child reached stage 1 (or exited): whether it did. */
static bool wait_stage(struct seen *s, pid_t pid, long limit_ms)
{
	long waited;
	int st;

	for (waited = 0; waited < limit_ms; waited += 10) {
		if (__atomic_load_n(&s->stage, __ATOMIC_SEQ_CST))
			return true;
		if (waitpid(pid, &st, WNOHANG) == pid) {
			test_log("child ended before its first call: status 0x%x\n", st);
			return false;
		}
		pause_ms(10);
	}
	return false;
}

/* Polls STATUS until no chain is on a stand-in: whether that came. */
static bool wait_settled(const struct sfd *dm, long limit_ms)
{
	long waited;

	for (waited = 0; waited < limit_ms; waited += 20) {
		if (standins(dm) == 0)
			return true;
		pause_ms(20);
	}
	return false;
}

static long limit_ms(void);

/* The child's wait status; one still running after the limit is killed. */
static int reap(pid_t pid)
{
	long waited;
	int st = -1;

	for (waited = 0; waited < limit_ms(); waited += 10) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return st;
		pause_ms(10);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return st;
}

static long limit_ms(void)
{
	return test_is_emulated() ? 120000 : 20000;
}

/* Each case's daemon: the program held back (envs[1] is free for one
 * more NAME=VALUE). */
#define STANDIN_DAEMON \
	struct sfd dm __attribute__((cleanup(sfd_cleanup))) = { 0 }; \
	char env[64]; \
	char *envs[3] = { env, NULL, NULL }

static bool start(struct sfd *dm, char *env, size_t size, char *const *envs)
{
	snprintf(env, size, "SF_TEST_SETTLE_DELAY_MS=%d", test_is_emulated() ? 8000 : 2000);
	dm->env = envs;
	return sfd_start_sfilterd(dm, false);
}

TEST(a_gated_attach_of_a_new_filter_is_answered_on_a_stand_in_and_its_denied_call_is_refused_before_and_after_its_program)
{
	STANDIN_DAEMON;
	char buf[64];
	struct sock_filter f[8];
	struct sock_fprog prog = getppid_filter(SECCOMP_RET_ERRNO | EPERM, 1, f);
	struct seen *s = shared_seen();
	pid_t pid;
	int st;

	if (!ASSERT_TRUE(s != NULL, "mmap") || !start(&dm, env, sizeof(env), envs))
		return;
	pid = spawn(s, &prog, true);
	if (!ASSERT_TRUE(pid > 0, "fork"))
		return;
	if (!ASSERT_TRUE(wait_stage(s, pid, limit_ms()), "the child attached and called")) {
		reap(pid);
		return;
	}
	ASSERT_EQ(standins(&dm), 1, "its chain is on a stand-in: the program is held back");
	ASSERT_TRUE(s->first == -1 && s->first_errno == EPERM,
		    "getppid on the stand-in: EPERM, from the gate and the judge");
	ASSERT_TRUE(wait_settled(&dm, limit_ms()), "the program comes, and replaces the stand-in");
	__atomic_store_n(&s->go, 1, __ATOMIC_SEQ_CST);
	st = reap(pid);
	ASSERT_TRUE(wstatus_exited_ok(st), wstatus_str(st, buf, sizeof(buf)));
	ASSERT_TRUE(s->second == -1 && s->second_errno == EPERM,
		    "getppid once the program is in: EPERM");
	munmap(s, sizeof(*s));
}

TEST(an_attach_without_a_gate_of_a_filter_on_a_stand_in_waits_for_its_program)
{
	STANDIN_DAEMON;
	char buf[64];
	struct sock_filter f[8];
	struct sock_fprog prog = getppid_filter(SECCOMP_RET_KILL_PROCESS, 2, f);
	struct seen *gated = shared_seen(), *plain = shared_seen();
	pid_t g, p;
	int st;

	if (!ASSERT_TRUE(gated && plain, "mmap") || !start(&dm, env, sizeof(env), envs))
		return;
	/* The gated child's first getppid kills it (the judge, as the
	 * filter says); its attach is what put the chain on a stand-in. */
	g = spawn(gated, &prog, true);
	if (!ASSERT_TRUE(g > 0, "fork"))
		return;
	waitpid(g, &st, 0);
	ASSERT_EQ(gated->r, 0, "the gated attach succeeds");
	ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL && gated->stage == 0,
		    "the gated child is killed at its getppid, on the stand-in");
	ASSERT_EQ(standins(&dm), 1, "the gated attach left its chain on a stand-in");
	p = spawn(plain, &prog, false);
	if (!ASSERT_TRUE(p > 0, "fork"))
		return;
	waitpid(p, &st, 0);
	ASSERT_EQ(plain->r, 0, "the attach without a gate succeeds");
	ASSERT_EQ(standins(&dm), 0, "it was answered once the program was in, not before");
	ASSERT_TRUE(WIFSIGNALED(st), wstatus_str(st, buf, sizeof(buf)));
	ASSERT_EQ(plain->stage, 0, "its getppid never returned: the program killed it");
	munmap(gated, sizeof(*gated));
	munmap(plain, sizeof(*plain));
}

TEST(a_filter_with_a_log_action_is_never_stood_in_for)
{
	STANDIN_DAEMON;
	struct sock_filter f[8];
	struct sock_fprog prog = getppid_filter(SECCOMP_RET_LOG, 3, f);
	struct seen *s = shared_seen();
	pid_t pid;

	if (!ASSERT_TRUE(s != NULL, "mmap") || !start(&dm, env, sizeof(env), envs))
		return;
	pid = spawn(s, &prog, true);
	if (!ASSERT_TRUE(pid > 0, "fork"))
		return;
	if (ASSERT_TRUE(wait_stage(s, pid, limit_ms()), "the child attached and called"))
		ASSERT_EQ(standins(&dm), 0, "answered with its program in: no stand-in");
	ASSERT_EQ(s->first, (long)getpid(), "getppid, logged, runs");
	__atomic_store_n(&s->go, 1, __ATOMIC_SEQ_CST);
	reap(pid);
	munmap(s, sizeof(*s));
}

TEST(sfrun_s_attach_of_a_new_filter_is_answered_on_a_stand_in)
{
	STANDIN_DAEMON;
	char sfrun[PATH_MAX], path[PATH_MAX], buf[64];
	char *argv[] = { sfrun, "--filter", path, "--", "/bin/sleep", "3", NULL };
	struct sock_filter f[8];
	struct sock_fprog prog = getppid_filter(SECCOMP_RET_ERRNO | EPERM, 4, f);
	bool seen = false;
	long waited;
	pid_t pid;
	int fd, st;

	if (!sfd_find_bin("sfrun", "SF_SFRUN", sfrun, sizeof(sfrun)) ||
	    access("/bin/sleep", X_OK) != 0) {
		test_skip("no sfrun beside the runner, or no /bin/sleep");
		return;
	}
	if (!start(&dm, env, sizeof(env), envs))
		return;
	snprintf(path, sizeof(path), "%s/getppid.bpf", dm.dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (!ASSERT_TRUE(fd >= 0, "filter file"))
		return;
	ASSERT_EQ(write(fd, prog.filter, prog.len * sizeof(*prog.filter)),
		  (ssize_t)(prog.len * sizeof(*prog.filter)), "write the filter");
	close(fd);
	pid = fork();
	if (pid == 0) {
		execv(sfrun, argv);
		_exit(127);
	}
	if (!ASSERT_TRUE(pid > 0, "fork"))
		return;
	for (waited = 0; !seen && waited < 3000; waited += 20) {
		seen = standins(&dm) == 1;
		if (!seen)
			pause_ms(20);
	}
	ASSERT_TRUE(seen, "sleep runs under a chain on its stand-in");
	st = reap(pid);
	ASSERT_TRUE(wstatus_exited_ok(st), wstatus_str(st, buf, sizeof(buf)));
}

struct threaded {
	struct seen s;
	volatile int thread_go;
	long thread_r;
	int thread_errno;
	volatile int thread_done;
};

static void *other_thread(void *arg)
{
	struct threaded *t = arg;

	while (!__atomic_load_n(&t->thread_go, __ATOMIC_SEQ_CST))
		;
	errno = 0;
	t->thread_r = syscall(SYS_getppid);
	t->thread_errno = errno;
	__atomic_store_n(&t->thread_done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static int tsync_attacher(struct threaded *t, const struct sock_fprog *prog)
{
	pthread_t th;

	if (pthread_create(&th, NULL, other_thread, t))
		return 100;
	if (!attach(&t->s, prog, SF_ATTACH_TSYNC))
		return 101;
	__atomic_store_n(&t->s.stage, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&t->s.go, __ATOMIC_SEQ_CST))
		;
	__atomic_store_n(&t->thread_go, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&t->thread_done, __ATOMIC_SEQ_CST))
		;
	return 0;
}

TEST(with_tsync_a_thread_made_before_the_attach_has_the_filter_on_the_stand_in)
{
	STANDIN_DAEMON;
	char buf[64];
	struct sock_filter f[8];
	struct sock_fprog prog = getppid_filter(SECCOMP_RET_ERRNO | EPERM, 5, f);
	struct threaded *t = mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t pid;
	int st;

	if (!ASSERT_TRUE(t != MAP_FAILED, "mmap") || !start(&dm, env, sizeof(env), envs))
		return;
	memset(t, 0, sizeof(*t));
	pid = fork();
	if (pid == 0)
		_exit(tsync_attacher(t, &prog));
	if (!ASSERT_TRUE(pid > 0, "fork"))
		return;
	if (!ASSERT_TRUE(wait_stage(&t->s, pid, limit_ms()), "the child attached with TSYNC")) {
		reap(pid);
		return;
	}
	ASSERT_EQ(standins(&dm), 1, "its chain is on a stand-in");
	__atomic_store_n(&t->s.go, 1, __ATOMIC_SEQ_CST);
	st = reap(pid);
	ASSERT_TRUE(wstatus_exited_ok(st), wstatus_str(st, buf, sizeof(buf)));
	ASSERT_TRUE(t->thread_r == -1 && t->thread_errno == EPERM,
		    "the other thread's getppid: EPERM, from its gate, on the stand-in");
	ASSERT_EQ(standins(&dm), 1, "still on the stand-in when it was refused");
	munmap(t, sizeof(*t));
}

/* Attaches prog, forks, and the child makes getppid its first call. */
static int orphan_parent(struct seen *s, const struct sock_fprog *prog)
{
	pid_t child;
	int st;

	if (!attach(s, prog, 0))
		return 101;
	/* A raw fork: glibc's fork() makes calls in the child before it
	 * returns, and getppid must be the child's first. */
	child = (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
	if (child == 0) {
		errno = 0;
		s->first = syscall(SYS_getppid);
		s->first_errno = errno;
		syscall(SYS_exit_group, 0);
	}
	if (child < 0 || waitpid(child, &st, 0) != child)
		return 102;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 103;
}

TEST(an_orphan_fork_child_s_first_denied_call_on_a_stand_in_is_refused)
{
	STANDIN_DAEMON;
	char orphans[] = "SF_TEST_NO_STORAGE=2", buf[64];
	struct sock_filter f[8];
	struct sock_fprog prog = getppid_filter(SECCOMP_RET_ERRNO | EPERM, 6, f);
	struct seen *s = shared_seen();
	pid_t pid;
	int st;

	envs[1] = orphans;
	if (!ASSERT_TRUE(s != NULL, "mmap") || !start(&dm, env, sizeof(env), envs))
		return;
	s->first = 12345;
	pid = fork();
	if (pid == 0)
		_exit(orphan_parent(s, &prog));
	if (!ASSERT_TRUE(pid > 0, "fork"))
		return;
	st = reap(pid);
	ASSERT_TRUE(wstatus_exited_ok(st), wstatus_str(st, buf, sizeof(buf)));
	ASSERT_EQ(s->r, 0, "the gated attach succeeds, on a stand-in");
	test_log("the orphan's getppid: %ld (%s)\n", s->first, strerror(s->first_errno));
	ASSERT_TRUE(s->first == -1 && s->first_errno == ENOSYS,
		    "the orphan's getppid is refused (ENOSYS: the judge cannot know its "
		    "chain yet), never run on the stand-in");
	munmap(s, sizeof(*s));
}

/* An ATTACH of prog for this process that claims SF_FLAG_GATED, made by
 * hand: no gate, no listener handed in. Then the denied call, reported
 * in f. */
static int false_claim(struct seen *s, struct bp_flags *f, const struct sock_fprog *prog,
		       const char *sock)
{
	static union {
		struct sf_attach_req r;
		char bytes[SF_PROTO_ATTACH_REQ_SIZE + 16 * sizeof(struct sock_filter)];
	} m;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return 100;
	m.r.flags = SF_FLAG_GATED;
	m.r.reply_fd = -1;
	m.r.n_insns = prog->len;
	memcpy(m.r.insns, prog->filter, prog->len * sizeof(*prog->filter));
	s->r = sfd_request(sock, &m, SF_MSG_ATTACH,
			   SF_PROTO_ATTACH_REQ_SIZE + prog->len * sizeof(*prog->filter),
			   NULL, NULL);
	if (s->r)
		return 101;
	__atomic_store_n(&s->stage, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&s->go, __ATOMIC_SEQ_CST))
		;
	f->reached = 1;
	syscall(SYS_getppid);
	f->survived = 1;
	return 0;
}

/* Each attempt a filter new to the daemon, which a stand-in would answer
 * with an allow-all program in its slot. */
TEST(bypass_a_gated_claim_without_a_listener_handed_in_never_gets_a_stand_in)
{
	STANDIN_DAEMON;
	struct sock_filter f[8];
	struct bp_tally t = { 0 };
	struct {
		struct seen s;
		struct bp_flags f;
	} *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		     -1, 0);
	long i, n = bp_iterations(20, 3);
	double t0 = bp_now();
	char what[64];

	if (!ASSERT_TRUE(sh != MAP_FAILED, "mmap") || !start(&dm, env, sizeof(env), envs))
		return;
	for (i = 0; i < n && !test_failed(); i++) {
		struct sock_fprog prog = getppid_filter(SECCOMP_RET_KILL_PROCESS,
							100 + (uint32_t)i, f);
		pid_t pid;
		int st;

		memset(sh, 0, sizeof(*sh));
		pid = fork();
		if (pid == 0)
			_exit(false_claim(&sh->s, &sh->f, &prog, dm.sock));
		if (!ASSERT_TRUE(pid > 0, "fork"))
			break;
		if (!ASSERT_TRUE(wait_stage(&sh->s, pid, limit_ms()),
				 "the hand-made attach was answered")) {
			reap(pid);
			break;
		}
		ASSERT_EQ(standins(&dm), 0, "answered with its program in: the claim gave no "
			  "stand-in");
		__atomic_store_n(&sh->s.go, 1, __ATOMIC_SEQ_CST);
		st = reap(pid);
		snprintf(what, sizeof(what), "attempt %ld", i);
		bp_count(&t, bp_judge_denied(st, &sh->f), st, what);
	}
	bp_report("gated-claim", "a process that handed in no listener sends an ATTACH of a "
		  "new filter marked gated, then makes the denied call", &t, bp_now() - t0);
	munmap(sh, sizeof(*sh));
}
