// SPDX-License-Identifier: GPL-2.0-only
/*
 * The gate's judge (sf_runtime_judge()): a notified call decided with the
 * task's chain as the runtime has it, exactly as the stacked chain decides
 * (c2e_stack_eval()), for a thread that is not its process's leader (the
 * kernel's one-task walk misses those on 6.1), with complain filters left
 * out of the fold and a chain waiting for exec judging nothing.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "progs.h"
#include "runtime.h"
#include "c2e.h"
#include "sfilter.h"
#include "gatehand.h"
#include "fdpass.h"
#include "rtopen.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <linux/audit.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* A child process with a second thread that only sleeps: *tid is that
 * thread's. The child ends when the pipe closes. */
struct holder { pid_t pid, tid; int ctl; };

static int ctl_fd = -1;

/* Reports its tid, then makes no system call at all: a random chain may
 * kill any call, a restarted pause() too (a stop and continue of the
 * process restarts it through sys_enter). At SCHED_IDLE it takes only
 * what no one else wants of the CPU. */
static void *sleeper(void *arg)
{
	struct sched_param sp = { 0 };
	pid_t t = (pid_t)syscall(SYS_gettid);

	sched_setscheduler(0, SCHED_IDLE, &sp);
	(void)!write(*(int *)arg, &t, sizeof(t));
	for (;;)
		__asm__ volatile("pause" ::: "memory");
	return NULL;
}

static bool holder_start(struct holder *h)
{
	int p[2], c[2];
	pthread_t th;

	if (pipe(p) || pipe(c))
		return false;
	h->pid = fork();
	if (h->pid == 0) {
		char b;

		close(p[0]);
		close(c[1]);
		ctl_fd = c[0];
		if (pthread_create(&th, NULL, sleeper, &p[1]))
			_exit(1);
		(void)!read(c[0], &b, 1);
		_exit(0);
	}
	close(p[1]);
	close(c[0]);
	h->ctl = c[1];
	h->tid = 0;
	if (read(p[0], &h->tid, sizeof(h->tid)) != sizeof(h->tid))
		h->tid = 0;
	close(p[0]);
	return h->pid > 0 && h->tid > 0;
}

static void holder_end(struct holder *h)
{
	if (h->pid > 0) {
		close(h->ctl);
		kill(h->pid, SIGKILL);
		waitpid(h->pid, NULL, 0);
	}
}

static void random_data(struct progs_rng *rng, struct seccomp_data *d)
{
	static const uint32_t arches[] = { AUDIT_ARCH_X86_64, AUDIT_ARCH_I386 };
	int a;

	memset(d, 0, sizeof(*d));
	d->arch = arches[progs_below(rng, 2)];
	d->nr = (int)progs_below(rng, 8) ? (int)progs_below(rng, 460) : (int)progs_edge_u32(rng);
	d->instruction_pointer = progs_next(rng);
	for (a = 0; a < 6; a++)
		d->args[a] = progs_below(rng, 2) ? progs_edge_u32(rng) : progs_next(rng);
}

TEST(the_judge_decides_a_notified_call_as_the_threads_stacked_chain_does)
{
	struct sf_runtime *rt = rtopen();
	struct progs_rng rng;
	long inputs = 0, wrong = 0, stacks = 0, denied = 0;
	int p, programs = test_is_emulated() ? 12 : 60;

	if (!rt)
		return;
	progs_seed(&rng, 0x6a7e);
	for (p = 0; p < programs; p++) {
		struct progs_prog pr[3];
		struct sock_fprog chain[3];
		size_t n = progs_gen_stack(&rng, p, pr, chain), i;
		struct holder h = { 0 };
		bool ok = n > 0 && holder_start(&h);
		int k;

		for (i = 0; ok && i < n; i++) {
			struct c2e_error e;
			uint32_t id;

			ok = sf_runtime_attach(rt, h.tid, &chain[i], 0, &id, &e) == 0;
		}
		for (k = 0; ok && k < 40; k++) {
			struct seccomp_data d;
			struct sf_judgement j;
			uint32_t want;

			random_data(&rng, &d);
			want = c2e_stack_eval(chain, n, &d);
			{
				int r = sf_runtime_judge(rt, h.tid, &d, &j);

				if (r) {
					char pth[64];

					snprintf(pth, sizeof(pth), "/proc/%d/task/%d", h.pid, h.tid);
					/* What the kernel says of the thread, and whether
					 * a second look finds it. */
					printf("  judge %d: tid %d of %d: %d, task dir %s, again %d\n",
					       k, h.tid, h.pid, r, access(pth, F_OK) ? "gone" : "there",
					       sf_runtime_judge(rt, h.tid, &d, &j));
				}
				if (!ASSERT_OK(r, "sf_runtime_judge"))
					break;
			}
			inputs++;
			denied += c2e_effective_action(want) != SECCOMP_RET_ALLOW;
			if ((j.ret != want || !j.exact || j.tgid != h.pid) && wrong++ < 5)
				test_fail(__FILE__, __LINE__,
					  "nr %d: judged %#x (exact %d, tgid %d), the chain says %#x",
					  d.nr, j.ret, j.exact, j.tgid, want);
		}
		stacks += ok;
		holder_end(&h);
		for (i = 0; i < n; i++)
			progs_free(&pr[i]);
	}
	printf("  %ld stacks, %ld inputs, %ld not allowed, %ld wrong\n", stacks, inputs,
	       denied, wrong);
	ASSERT_EQ(wrong, 0, "calls judged unlike the chain");
	ASSERT_GE(stacks, programs / 2, "most stacks attach");
	ASSERT_GE(denied, 1, "some calls are not allowed");
	sf_runtime_close(rt);
}

TEST(the_judge_leaves_complain_filters_out_and_names_the_deciding_filter)
{
	struct sf_runtime *rt = rtopen();
	struct sock_filter k1[4], k2[4];
	struct sock_fprog deny_ppid = progs_kill_on(k1, 4, SYS_getppid);
	struct sock_fprog deny_uid = progs_kill_on(k2, 4, SYS_getuid);
	struct seccomp_data d = { .arch = AUDIT_ARCH_X86_64 };
	struct sf_judgement j;
	struct holder h = { 0 };
	struct c2e_error e;
	uint32_t id_enforced = 0, id_complain = 0;

	if (!rt)
		return;
	if (!ASSERT_TRUE(holder_start(&h), "a process with a second thread"))
		goto out;
	ASSERT_OK(sf_runtime_attach(rt, h.tid, &deny_ppid, 0, &id_enforced, &e), "attach");
	ASSERT_OK(sf_runtime_attach(rt, h.tid, &deny_uid, SF_ATTACH_COMPLAIN, &id_complain, &e),
		  "attach in complain mode");
	d.nr = SYS_getppid;
	ASSERT_OK(sf_runtime_judge(rt, h.tid, &d, &j), "judge getppid");
	ASSERT_EQ(j.ret, SECCOMP_RET_KILL_PROCESS, "getppid is killed");
	ASSERT_EQ(j.filter_id, id_enforced, "by the enforcing filter");
	d.nr = SYS_getuid;
	ASSERT_OK(sf_runtime_judge(rt, h.tid, &d, &j), "judge getuid");
	ASSERT_EQ(j.ret, SECCOMP_RET_ALLOW, "a complain filter's verdict is not enforced");
	ASSERT_EQ(j.filter_id, 0, "and decides nothing");
	ASSERT_EQ(sf_runtime_judge(rt, 0x3ffffff0, &d, &j), -ESRCH, "no such task: -ESRCH");
	d.nr = SYS_getppid;
	ASSERT_OK(sf_runtime_judge(rt, h.pid, &d, &j), "judge the leader");
	ASSERT_EQ(j.ret, SECCOMP_RET_ALLOW, "the leader has no chain: ALLOW");
out:
	holder_end(&h);
	sf_runtime_close(rt);
}

struct count_ctx { pid_t *pids; int n; int found; };

static int count_task(void *ctx, const struct sf_task_info *t)
{
	struct count_ctx *c = ctx;
	int i;

	for (i = 0; i < c->n; i++)
		if (c->pids[i] == t->tid)
			c->found++;
	return 0;
}

/* A walk of every task hands back records of a size that need not divide
 * the reads' size, so one may straddle two reads: every confined task is
 * still reported once (the judge finds a thread by such a walk on 6.1). */
TEST(the_task_walk_reports_every_confined_task_however_many)
{
	struct sf_runtime *rt = rtopen();
	struct sock_filter k[4];
	struct sock_fprog f = progs_kill_on(k, 4, SYS_getppid);
	int i, n = test_is_emulated() ? 90 : 300;
	pid_t *pids = calloc((size_t)n, sizeof(*pids));
	struct count_ctx c = { pids, n, 0 };

	if (!rt || !ASSERT_TRUE(pids != NULL, "calloc"))
		goto out;
	for (i = 0; i < n; i++) {
		struct c2e_error e;
		uint32_t id;

		pids[i] = fork();
		if (pids[i] == 0) {
			for (;;)
				pause();
		}
		if (!ASSERT_GE(pids[i], 1, "fork") ||
		    !ASSERT_OK(sf_runtime_attach(rt, pids[i], &f, 0, &id, &e), "attach"))
			break;
	}
	ASSERT_OK(sf_runtime_for_each_task(rt, count_task, &c), "the walk");
	ASSERT_EQ(c.found, n, "every confined task is reported once");
out:
	for (i = 0; pids && i < n; i++)
		if (pids[i] > 0) {
			kill(pids[i], SIGKILL);
			waitpid(pids[i], NULL, 0);
		}
	free(pids);
	if (rt)
		sf_runtime_close(rt);
}

struct gated_ctx {
	pid_t gated, child, plain, other;
	int seen_gated, seen_child, seen_plain, seen_other, other_notif;
};

static int note_gated(void *ctx, const struct sf_task_info *t)
{
	struct gated_ctx *g = ctx;

	if (t->tid == g->gated)
		g->seen_gated = t->gated ? 1 : -1;
	if (t->tid == g->child)
		g->seen_child = t->gated ? 1 : -1;
	if (t->tid == g->plain)
		g->seen_plain = t->gated ? 1 : -1;
	if (t->tid == g->other) {
		g->seen_other = t->gated ? 1 : -1;
		g->other_notif = t->user_notif ? 1 : -1;
	}
	return 0;
}

/* A task under a filter whose listener this process holds is reported
 * gated, and so is a child it forked (which inherits the filter); a
 * confined task without one is not, nor one whose listener another
 * process holds (reported under another supervisor's). */
TEST(the_task_walk_says_which_tasks_are_under_a_gate)
{
	struct sf_runtime *rt = rtopen();
	struct sock_filter k[4];
	struct sock_fprog f = progs_kill_on(k, 4, SYS_getppid);
	struct gated_ctx g = { 0 };
	int p[2], sp[2] = { -1, -1 }, held = -1, i;
	pid_t pids[3] = { 0, 0, 0 }, none;

	if (!rt || !ASSERT_OK(pipe(p), "pipe") ||
	    !ASSERT_OK(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sp), "socketpair"))
		goto out;
	fflush(stdout);
	for (i = 0; i < 3; i += 2) {
		pids[i] = fork();
		if (pids[i] == 0) {
			pid_t c = 0;
			int l;

			prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
			l = gatehand_gate(&f, 1, NULL);
			if (i == 0) {
				/* Handed to the test, as to sfilterd. */
				if (l < 0 || fdpass_send(sp[0], l))
					_exit(1);
				close(l);
				c = fork();
				if (c == 0) {
					for (;;)
						pause();
				}
			}
			/* Else kept: another supervisor's. The test process never
			 * answers: nothing is notified. */
			(void)!write(p[1], &c, sizeof(c));
			for (;;)
				pause();
		}
		if (!ASSERT_TRUE(read(p[0], i ? &none : &g.child, sizeof(pid_t)) == sizeof(pid_t),
				 "the child"))
			goto out;
	}
	held = fdpass_recv(sp[1]);
	if (!ASSERT_GE(held, 0, "the listener is handed in"))
		goto out;
	pids[1] = fork();
	if (pids[1] == 0) {
		for (;;)
			pause();
	}
	g.gated = pids[0];
	g.plain = pids[1];
	g.other = pids[2];
	for (i = 0; i < 3; i++) {
		struct c2e_error e;
		uint32_t id;

		ASSERT_OK(sf_runtime_attach(rt, pids[i], &f, 0, &id, &e), "attach");
	}
	{
		struct c2e_error e;
		uint32_t id;

		ASSERT_OK(sf_runtime_attach(rt, g.child, &f, 0, &id, &e), "attach the child");
	}
	ASSERT_OK(sf_runtime_for_each_task(rt, note_gated, &g), "the walk");
	ASSERT_EQ(g.seen_gated, 1, "the task whose listener this process holds is gated");
	ASSERT_EQ(g.seen_child, 1, "so is its child");
	ASSERT_EQ(g.seen_plain, -1, "a confined task without one is not");
	ASSERT_EQ(g.seen_other, -1, "nor one whose listener another process holds");
	ASSERT_EQ(g.other_notif, 1, "which is said to be under another supervisor's");
out:
	if (g.child > 0)
		kill(g.child, SIGKILL);
	for (i = 0; i < 3; i++)
		if (pids[i] > 0) {
			kill(pids[i], SIGKILL);
			waitpid(pids[i], NULL, 0);
		}
	if (held >= 0)
		close(held);
	for (i = 0; i < 2; i++)
		if (sp[i] >= 0)
			close(sp[i]);
	if (rt)
		sf_runtime_close(rt);
}
