// SPDX-License-Identifier: GPL-2.0-only
/*
 * Bypass attempts through cgroups (sf_runtime_attach_cgroup(), cgroup v2;
 * skipped without it).
 *
 * Leaving: a task confined because it joined an attached cgroup keeps its
 * chain when it leaves, as seccomp filters stay for life. One iteration:
 * a task that joins the attached cgroup and leaves it again, then makes
 * the denied call, which must kill it. It joins by being moved, by
 * clone3(CLONE_INTO_CGROUP), or by moving itself; it leaves by moving
 * itself, or by being moved; some carry a chain of their own when they
 * join (their join is then finished by sf_runtime_process_pending(), as
 * sfilterd does when the ring buffer wakes it).
 *
 * Forking during the attach: a process forks (or clone3s into the
 * cgroup) all along while the cgroup is attached; once the attach has
 * returned, every task in the cgroup, and every task born there later, is
 * judged. One iteration: one such task making the denied call (the
 * children that came and went before are checked too: none may have been
 * killed).
 *
 * Its cgroup gone: a container's chain gives its slot back once its
 * cgroup is removed, unless a task still has it. One iteration: a task
 * that joined an attached cgroup and left it before the cgroup was
 * removed, forking children while the next attach finds the cgroup gone
 * and the chains are reaped (sfilterd's filler thread), and another
 * filter's chain takes the lowest free slot; then it and its children
 * make the denied call.
 *
 * Exec right after the join: a process with two threads is moved into an
 * attached cgroup (attached plain, or at exec as the OCI hook attaches a
 * container's), and its second thread, which the BPF side leaves to user
 * space, execs at once; nothing processes the queued join. One
 * iteration: the new image, whose first call is the denied one.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "bypass.h"
#include "cgroup.h"
#include "progs.h"
#include "runtime.h"
#include "c2e.h"
#include "daemon.h"
#include "wstatus.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static struct sock_filter kill_getppid[4], kill_getuid[4];

static pid_t clone_into(int cgfd)
{
	struct clone_args a = { .flags = CLONE_INTO_CGROUP, .exit_signal = SIGCHLD,
				.cgroup = (uint64_t)cgfd };

	fflush(stdout);
	return (pid_t)syscall(SYS_clone3, &a, sizeof(a));
}

static bool attach_cgroup_flags(struct sf_runtime *rt, const char *cg, unsigned int flags)
{
	struct sock_fprog p = progs_kill_on(kill_getppid, 4, SYS_getppid);
	struct c2e_error e;
	char m[600];

	snprintf(m, sizeof(m), "attach %s%s", cg, flags & SF_ATTACH_AT_EXEC ? " at exec" : "");
	return ASSERT_OK(sf_runtime_attach_cgroup(rt, cg, &p, flags, NULL, &e), m);
}

static bool attach_cgroup(struct sf_runtime *rt, const char *cg)
{
	return attach_cgroup_flags(rt, cg, 0);
}

/* ---- leaving ----------------------------------------------------------- */

enum join { J_MOVED, J_CLONED_INTO, J_MOVES_ITSELF, J_OWN_CHAIN, N_JOINS };

static const char *const join_name[N_JOINS] = {
	"moved in, moves itself out", "clone3 into it, moved out",
	"moves itself in and out", "has a chain, moved in and out",
};

struct leaver {
	volatile int step;      /* what the test asks for next */
	volatile int at;        /* what the task has done */
	struct bp_flags f;
};

static struct leaver *L;

/* The task: waits for each step (spinning, with allowed calls), moving
 * itself where the step says, then makes the denied call. */
static void leaver_body(enum join j, const char *in, const char *out)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	L->at = 1;
	while (L->step < 1)
		sched_yield();
	if (j == J_MOVES_ITSELF && !tcg_move(in, getpid()))
		_exit(10);
	if ((j == J_MOVED || j == J_MOVES_ITSELF) && !tcg_move(out, getpid()))
		_exit(11);
	L->at = 2;
	while (L->step < 2)
		sched_yield();
	bp_allowed_call();
	L->f.reached = 1;
	bp_denied_call();
	L->f.survived = 1;
	_exit(0);
}

static bool wait_at(int at)
{
	return ASSERT_TRUE(bp_spin_until(&L->at, at, 10), "the task got there");
}

static void one_leaver(struct sf_runtime *rt, enum join j, const char *in, const char *out,
		       int cgfd, struct bp_tally *t, int i)
{
	struct sock_fprog own = progs_kill_on(kill_getuid, 4, SYS_getuid);
	char what[128];
	pid_t pid;
	int st;

	memset((void *)L, 0, sizeof(*L));
	pid = j == J_CLONED_INTO ? clone_into(cgfd) : fork();
	if (pid == 0)
		leaver_body(j, in, out);
	if (!ASSERT_TRUE(pid > 0, "fork") || !wait_at(1))
		goto kill;
	if (j == J_OWN_CHAIN && bp_attach(rt, pid, &own, 0, NULL, false))
		goto kill;
	if ((j == J_MOVED || j == J_OWN_CHAIN) && !ASSERT_TRUE(tcg_move(in, pid), "move in"))
		goto kill;
	if (j == J_OWN_CHAIN)
		/* sfilterd, woken by the queued join, does this at once. */
		ASSERT_TRUE(sf_runtime_process_pending(rt) >= 0, "process_pending");
	L->step = 1;
	if (!wait_at(2))
		goto kill;
	if ((j == J_CLONED_INTO || j == J_OWN_CHAIN) && !ASSERT_TRUE(tcg_move(out, pid), "move out"))
		goto kill;
	L->step = 2;
	st = bp_wait(pid, 10);
	snprintf(what, sizeof(what), "iteration %d (%s)", i, join_name[j]);
	bp_count(t, bp_judge_denied(st, &L->f), st, what);
	return;
kill:
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

TEST(bypass_a_task_that_leaves_an_attached_cgroup_stays_confined)
{
	long i, n = bp_iterations(1000, 40);
	struct sf_runtime *rt = NULL;
	struct bp_tally t = { 0 };
	char in[512], out[512];
	double t0 = bp_now();
	int cgfd = -1;

	if (!tcg_make(in, sizeof(in), "sf-bypass-in"))
		return;
	if (!tcg_make(out, sizeof(out), "sf-bypass-out"))
		goto out;
	L = bp_shared(sizeof(*L));
	rt = bp_runtime_open(false);
	if (!rt || !L || !attach_cgroup(rt, in))
		goto out;
	cgfd = open(in, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (!ASSERT_TRUE(cgfd >= 0, "open the cgroup"))
		goto out;
	for (i = 0; i < n && !test_failed(); i++)
		one_leaver(rt, (enum join)(i % N_JOINS), in, out, cgfd, &t, (int)i);
	bp_report("cgroup-leave", "a task joins the attached cgroup one of 4 ways, leaves it, "
		  "makes the denied call", &t, bp_now() - t0);
out:
	if (cgfd >= 0)
		close(cgfd);
	sf_runtime_close(rt);
	rmdir(in);
	rmdir(out);
}

/* ---- the cgroup gone -------------------------------------------------- */

#define GONE_KIDS 6

struct goner {
	volatile int step;      /* 1 left, 2 fork, 3 stop forking, 4 judge */
	volatile int at;        /* 1 started, 2 out of the cgroup, 3 done forking */
	volatile int n_kids;
	struct bp_flags f, kid[GONE_KIDS];
	volatile int kid_status[GONE_KIDS];
};

static struct goner *G; /* two: the task of this iteration and the last's */

static void goner_kid(struct goner *g, int k)
{
	while (g->step < 4)
		bp_allowed_call();
	g->kid[k].reached = 1;
	bp_denied_call();
	g->kid[k].survived = 1;
	_exit(0);
}

/* Moved in by the test, it leaves for top, forks while the test reaps,
 * reaps its children (wait4 is allowed), then makes the denied call. */
static void goner_body(struct goner *g, const char *top)
{
	pid_t kids[GONE_KIDS];
	int k, st;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	g->at = 1;
	while (g->step < 1)
		sched_yield();
	if (!tcg_move(top, getpid()))
		_exit(10);
	g->at = 2;
	while (g->step < 2)
		sched_yield();
	for (k = 0; k < GONE_KIDS && g->step < 3; k++) {
		kids[k] = fork();
		if (kids[k] == 0)
			goner_kid(g, k);
		g->n_kids = k + 1;
		bp_allowed_call();
	}
	g->at = 3;
	while (g->step < 4)
		sched_yield();
	for (k = 0; k < g->n_kids; k++)
		g->kid_status[k] = waitpid(kids[k], &st, 0) == kids[k] ? st : -1;
	bp_allowed_call();
	g->f.reached = 1;
	bp_denied_call();
	g->f.survived = 1;
	_exit(0);
}

/* The last iteration's task and children, told to make their calls. */
static void judge_goner(struct goner *g, pid_t pid, struct bp_tally *t, int i)
{
	char what[96];
	int st, k;

	if (pid <= 0)
		return;
	g->step = 3;
	bp_spin_until(&g->at, 3, 10);
	g->step = 4;
	st = bp_wait(pid, 10);
	snprintf(what, sizeof(what), "iteration %d: the task that left", i);
	bp_count(t, bp_judge_denied(st, &g->f), st, what);
	for (k = 0; k < g->n_kids; k++) {
		snprintf(what, sizeof(what), "iteration %d: its child %d", i, k);
		bp_count(t, bp_judge_denied(g->kid_status[k], &g->kid[k]), g->kid_status[k], what);
	}
}

TEST(bypass_a_task_that_left_a_removed_cgroup_keeps_its_chain_when_the_slot_is_reaped)
{
	struct sock_fprog other = progs_kill_on(kill_getuid, 4, SYS_getuid);
	/* Each iteration keeps one slot more (its decoy's): well below 255. */
	long i = 0, n = bp_iterations(120, 8);
	struct sf_runtime *rt = NULL;
	struct bp_tally t = { 0 };
	char top[512], cg[600] = "", decoy[600] = "";
	struct c2e_error e;
	double t0 = bp_now();
	pid_t last = 0, pid;

	if (!tcg_make(top, sizeof(top), "sf-bypass-gone"))
		return;
	G = bp_shared(2 * sizeof(*G));
	rt = bp_runtime_open(false);
	if (!rt || !G)
		goto out;
	for (i = 0; i <= n && !test_failed(); i++) {
		struct goner *g = &G[i % 2], *prev = &G[(i + 1) % 2];

		/* The last task forks while this attach finds its cgroup
		 * gone and the chains are reaped. */
		prev->step = 2;
		snprintf(cg, sizeof(cg), "%s/%ld", top, i);
		if (!ASSERT_OK(mkdir(cg, 0755) ? -errno : 0, "mkdir") || !attach_cgroup(rt, cg))
			break;
		while (sf_runtime_reap_chains(rt) > 0)
			;
		/* Another filter's chain, in a cgroup that stays, takes the
		 * lowest free slot: the one a gone cgroup whose task died gave
		 * back, or the last task's, were it given back while the task
		 * has it. */
		snprintf(decoy, sizeof(decoy), "%s/d%ld", top, i);
		if (!ASSERT_OK(mkdir(decoy, 0755) ? -errno : 0, "mkdir") ||
		    !ASSERT_OK(sf_runtime_attach_cgroup(rt, decoy, &other, 0, NULL, &e),
			       "attach another filter"))
			break;
		judge_goner(prev, last, &t, (int)i - 1);
		last = 0;
		if (i == n)
			break;
		memset((void *)g, 0, sizeof(*g));
		fflush(stdout);
		pid = fork();
		if (pid == 0)
			goner_body(g, top);
		if (!ASSERT_TRUE(pid > 0, "fork") || !bp_spin_until(&g->at, 1, 10) ||
		    !ASSERT_TRUE(tcg_move(cg, pid), "move in")) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			break;
		}
		g->step = 1;
		if (!ASSERT_TRUE(bp_spin_until(&g->at, 2, 10), "the task left") ||
		    !ASSERT_OK(rmdir(cg) ? -errno : 0, "remove its cgroup")) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			break;
		}
		last = pid;
	}
	bp_report("cgroup-gone", "a task that left an attached cgroup, since removed, forks "
		  "while the next attach finds it gone and chains are reaped; it and its "
		  "children make the denied call", &t, bp_now() - t0);
out:
	if (last > 0) {
		kill(last, SIGKILL);
		waitpid(last, NULL, 0);
	}
	sf_runtime_close(rt);
	rmdir(cg);
	for (; i >= 0; i--) {
		snprintf(decoy, sizeof(decoy), "%s/d%ld", top, i);
		rmdir(decoy);
	}
	rmdir(top);
}

/* ---- forking during the attach ------------------------------------------ */

#define MAX_KIDS 1024
#define LIVE_KIDS 24

struct kid {
	volatile int pid;
	struct bp_flags f;
};

struct forks {
	volatile int attached;   /* the cgroup attach has returned */
	volatile int n_kids;     /* slots handed out */
	volatile int forker_go;  /* the forker is where it must fork from */
	struct bp_flags forker;
	struct bp_tally t;       /* the forker's verdict on its children */
	struct kid kid[MAX_KIDS];
};

static struct forks *F;

/* A child: allowed calls for a while, then the denied call if the attach
 * has returned by then, else an exit (churn). */
static void kid_body(int slot)
{
	struct kid *k = &F->kid[slot];
	int spins;

	k->pid = (int)syscall(SYS_getpid);
	for (spins = 0; spins < 20; spins++) {
		bp_allowed_call();
		if (__atomic_load_n(&F->attached, __ATOMIC_ACQUIRE)) {
			k->f.reached = 1;
			bp_denied_call();
			k->f.survived = 1;
			syscall(SYS_exit_group, 0);
		}
		sched_yield();
	}
	syscall(SYS_exit_group, 0);
}

static int kid_fn(void *arg)
{
	kid_body((int)(long)arg);
	return 0;
}

enum spawn { S_FORK, S_CLONE_VM, S_CLONE_INTO, N_SPAWNS };

static const char *const spawn_name[N_SPAWNS] = {
	"forked in the cgroup", "clone(CLONE_VM) in the cgroup", "clone3 into the cgroup",
};

#define KID_STACK (16 * 1024)

/* One child in slot; CLONE_VM children (which make children fastest, so
 * that more are born while the attach runs) each have a stack of their
 * own. */
static pid_t spawn_kid(enum spawn how, int slot, int into_fd, char *stacks)
{
	pid_t p;

	fflush(stdout);
	switch (how) {
	case S_CLONE_VM:
		return clone(kid_fn, stacks + (size_t)(slot + 1) * KID_STACK, CLONE_VM | SIGCHLD,
			     (void *)(long)slot);
	case S_CLONE_INTO:
		p = clone_into(into_fd);
		break;
	default:
		p = fork();
	}
	if (p == 0)
		kid_body(slot);
	return p;
}

struct reaped {
	pid_t pid;
	int status;
};

/* Makes children while the attach runs and a little after it; judges
 * every child; then, when it is in the cgroup itself, makes the denied
 * call. */
static void forker(enum spawn how, int into_fd)
{
	static struct reaped r[MAX_KIDS];
	char *stacks = mmap(NULL, (size_t)MAX_KIDS * KID_STACK, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	int live = 0, n_r = 0, after = 0, i, st, slot;
	char what[128];
	pid_t p;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (stacks == MAP_FAILED)
		_exit(21);
	while (!F->forker_go)
		sched_yield();
	while (after < 8 && F->n_kids < MAX_KIDS) {
		if (live < LIVE_KIDS) {
			slot = F->n_kids++;
			p = spawn_kid(how, slot, into_fd, stacks);
			if (p < 0)
				_exit(20);
			live++;
			after += __atomic_load_n(&F->attached, __ATOMIC_ACQUIRE);
		}
		p = waitpid(-1, &st, live < LIVE_KIDS ? WNOHANG : 0);
		if (p > 0) {
			r[n_r++] = (struct reaped){ p, st };
			live--;
		}
	}
	/* A forker that ran out of slots first still waits for the attach:
	 * its own denied call must come after it. */
	while (!__atomic_load_n(&F->attached, __ATOMIC_ACQUIRE))
		sched_yield();
	while (live > 0 && (p = waitpid(-1, &st, 0)) > 0) {
		r[n_r++] = (struct reaped){ p, st };
		live--;
	}
	for (slot = 0; slot < F->n_kids; slot++) {
		struct kid *k = &F->kid[slot];

		for (i = 0; i < n_r && r[i].pid != k->pid; i++)
			;
		st = i < n_r ? r[i].status : -1;
		snprintf(what, sizeof(what), "child %d of %d, %s (%s)", slot, F->n_kids,
			 spawn_name[how],
			 k->f.reached ? "made the denied call" : "churn, allowed calls only");
		if (k->f.reached)
			bp_count(&F->t, bp_judge_denied(st, &k->f), st, what);
		else if (bp_judge_allowed(st) != BP_LIVED)
			bp_count(&F->t, bp_judge_allowed(st), st, what);
	}
	if (how != S_CLONE_INTO) {
		F->forker.reached = 1;
		bp_denied_call();
		F->forker.survived = 1;
	}
	_exit(0);
}

TEST(bypass_every_task_forked_into_a_cgroup_while_it_is_attached_is_confined)
{
	long n = bp_iterations(1000, 40), round;
	struct sf_runtime *rt = NULL;
	struct bp_tally t = { 0 };
	char top[512], cg[600] = "";
	double t0 = bp_now();
	long during = 0;

	if (!tcg_make(top, sizeof(top), "sf-bypass-fork"))
		return;
	F = bp_shared(sizeof(*F));
	rt = bp_runtime_open(false);
	if (!rt || !F)
		goto out;
	for (round = 0; t.iterations < n && !test_failed(); round++) {
		enum spawn how = (enum spawn)(round % N_SPAWNS);
		bool into = how == S_CLONE_INTO, ok;
		int cgfd, st, before;
		pid_t f;

		memset((void *)F, 0, sizeof(*F));
		snprintf(cg, sizeof(cg), "%s/r%ld", top, round);
		if (!ASSERT_OK(mkdir(cg, 0755) ? -errno : 0, "mkdir"))
			break;
		cgfd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		fflush(stdout);
		f = fork();
		if (f == 0)
			forker(how, cgfd);
		ok = ASSERT_TRUE(f > 0 && cgfd >= 0, "fork, open") &&
		     (into || ASSERT_TRUE(tcg_move(cg, f), "the forker into the cgroup"));
		F->forker_go = 1;
		if (!ok || !ASSERT_TRUE(bp_spin_until(&F->n_kids, LIVE_KIDS, 10), "it forks")) {
			if (f > 0) {
				kill(f, SIGKILL);
				waitpid(f, NULL, 0);
			}
			break;
		}
		before = F->n_kids;
		attach_cgroup(rt, cg);
		during += F->n_kids - before;
		__atomic_store_n(&F->attached, 1, __ATOMIC_RELEASE);
		st = bp_wait(f, 30);
		close(cgfd);
		t.iterations += F->t.iterations;
		t.escapes += F->t.escapes;
		t.wrongful_kills += F->t.wrongful_kills;
		if (!into)
			bp_count(&t, bp_judge_denied(st, &F->forker), st, "the forker");
		else if (!ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0,
				      "the forker outside the cgroup lived"))
			break;
		rmdir(cg);
	}
	test_log("%ld rounds, %ld tasks forked while the attach ran\n", round, during);
	bp_report("cgroup-fork", "a task made by fork, clone(CLONE_VM) or clone3 into the "
		  "cgroup while it was attached makes the denied call", &t, bp_now() - t0);
out:
	sf_runtime_close(rt);
	rmdir(cg);
	rmdir(top);
}

/* ---- exec right after the join ------------------------------------------ */

struct execer {
	volatile int ready;     /* the second thread runs */
	volatile int go;        /* the process has been moved: exec */
	volatile int fork;      /* fork instead: the child acts (1 plain, 2 at exec) */
	volatile int child_st;  /* the child's wait status */
	struct bp_flags f;
};

static struct execer *X;
static char x_image[PATH_MAX];

/* The second thread: execs the image (build/tests/sf-first-call, whose
 * first call is getppid, the denied call, and which exits 0 if it ran). */
static void *execer_thread(void *arg)
{
	char *const argv[] = { x_image, NULL };

	(void)arg;
	X->ready = 1;
	while (!X->go)
		sched_yield();
	if (X->fork) {
		/* A child of this thread, which no one has confined yet: in
		 * a plain cgroup its denied call must kill it; in one attached
		 * at exec it is free until its exec, judged after it. */
		pid_t c = fork();
		int st;

		if (c == 0) {
			if (X->fork == 2) {
				bp_denied_call();
				X->f.reached = 1;
				execve(x_image, argv, environ);
				_exit(30);
			}
			X->f.reached = 1;
			bp_denied_call();
			X->f.survived = 1;
			_exit(0);
		}
		X->child_st = c > 0 && waitpid(c, &st, 0) == c ? st : -1;
		_exit(0);
	}
	X->f.reached = 1;
	execve(x_image, argv, environ);
	_exit(30);
}

static void execer_body(void)
{
	pthread_t th;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (pthread_create(&th, NULL, execer_thread, NULL))
		_exit(31);
	for (;;)
		sched_yield();
}

static void joiner_acts(bool forks)
{
	static const char *const how[2] = { "attached plain", "attached at exec" };
	long i, n = bp_iterations(1000, 40);
	struct sf_runtime *rt = NULL;
	struct bp_tally t = { 0 };
	char cg[2][512], what[160];
	double t0 = bp_now();
	pid_t pid;
	int st, k;

	if (!sfd_find_test_prog("sf-first-call", x_image, sizeof(x_image)))
		return;
	if (!tcg_make(cg[0], sizeof(cg[0]), "sf-bypass-exec0"))
		return;
	if (!tcg_make(cg[1], sizeof(cg[1]), "sf-bypass-exec1"))
		goto out;
	X = bp_shared(sizeof(*X));
	rt = bp_runtime_open(false);
	if (!rt || !X || !attach_cgroup_flags(rt, cg[0], 0) ||
	    !attach_cgroup_flags(rt, cg[1], SF_ATTACH_AT_EXEC))
		goto out;
	for (i = 0; i < n && !test_failed(); i++) {
		k = (int)(i % 2);
		memset((void *)X, 0, sizeof(*X));
		X->fork = forks ? k + 1 : 0;
		fflush(stdout);
		pid = fork();
		if (pid == 0)
			execer_body();
		if (!ASSERT_TRUE(pid > 0, "fork"))
			break;
		if (!ASSERT_TRUE(bp_spin_until(&X->ready, 1, 10), "the second thread runs") ||
		    !ASSERT_TRUE(tcg_move(cg[k], pid), "move the process")) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			break;
		}
		X->go = 1;
		st = bp_wait(pid, 10);
		snprintf(what, sizeof(what), "iteration %ld (cgroup %s)", i, how[k]);
		if (forks && !wstatus_exited_ok(st)) {
			/* The forking process made allowed calls only. */
			bp_count(&t, bp_judge_allowed(st), st, what);
			sf_runtime_process_pending(rt);
			continue;
		}
		if (forks)
			st = X->child_st;
		/* The image exits 0 when its getppid ran. */
		if (st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 && X->f.reached)
			X->f.survived = 1;
		bp_count(&t, bp_judge_denied(st, &X->f), st, what);
		/* The queued joins of the dead, as sfilterd would drop them. */
		sf_runtime_process_pending(rt);
	}
	if (forks)
		bp_report("cgroup-join-fork", "a two-threaded process is moved into an attached cgroup "
			  "and its second thread forks at once; the child makes the denied call "
			  "(at exec: after its exec)", &t, bp_now() - t0);
	else
		bp_report("cgroup-exec", "a two-threaded process is moved into an attached cgroup "
			  "and its second thread execs at once; the image makes the denied call",
			  &t, bp_now() - t0);
out:
	sf_runtime_close(rt);
	rmdir(cg[0]);
	rmdir(cg[1]);
}

TEST(bypass_a_thread_that_execs_as_its_process_joins_an_attached_cgroup_is_judged)
{
	joiner_acts(false);
}

TEST(bypass_a_child_a_thread_forks_as_its_process_joins_an_attached_cgroup_is_judged)
{
	joiner_acts(true);
}
