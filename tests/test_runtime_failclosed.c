// SPDX-License-Identifier: GPL-2.0-only
/*
 * Paths where a confined task could run unjudged, each closed:
 *   - a child of a confined task whose task storage cannot be allocated at
 *     fork is adopted at its first syscall, which is then judged, or
 *     killed there when even then there is no storage (a test knob makes
 *     the allocation fail);
 *   - TSYNC converges while threads are created and destroyed all along,
 *     and leaves every thread of the group with the filter;
 *   - after an uninstall returns, no sfilter program is attached.
 * Children that must make no syscall before a given moment are created
 * with a raw clone() and wait by spinning on shared memory.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "progs.h"
#include "runtime.h"
#include "c2e.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>

static const struct sf_runtime_opts *opts(void)
{
	static struct sf_runtime_opts o;

	o.verbose = getenv("SF_VERBOSE") != NULL;
	return &o;
}

static struct sock_filter kill_getppid[4];

/* ---- fork without task storage -------------------------------------------- */

struct shm {
	volatile int go;        /* the child may make its first syscall */
	volatile int reached;   /* the child got past its first syscall */
	volatile int status;    /* the child's wait status, as its parent saw it */
	volatile int forked;
};

/* The forker: waits to be confined (a byte on go), forks the child with a
 * raw clone (no syscall in the child before ours), reports its status. */
static void forker(struct shm *m, int go)
{
	long c;
	char b;

	if (read(go, &b, 1) != 1)
		_exit(90);
	c = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
	if (c == 0) {
		while (!m->go)
			__asm__ volatile("pause" ::: "memory");
		syscall(SYS_getgid);            /* allowed: adoption or death */
		m->reached = 1;
		syscall(SYS_getppid);           /* denied */
		syscall(SYS_exit_group, 0);
	}
	m->forked = 1;
	if (c > 0) {
		int status = 0;

		waitpid((pid_t)c, &status, 0);
		m->status = status;
	}
	_exit(0);
}

/* Runs one forker; with adopt, the knob is off again before the child's
 * first syscall. */
static void one_child(struct sf_runtime *rt, bool adopt)
{
	struct sock_fprog prog = progs_kill_on(kill_getppid, 4, SYS_getppid);
	struct shm *m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct sf_counters before, after;
	struct c2e_error e;
	int go[2], status;
	pid_t f;

	if (!ASSERT_TRUE(m != MAP_FAILED, "mmap") || !ASSERT_OK(pipe(go), "pipe"))
		return;
	memset((void *)m, 0, sizeof(*m));
	fflush(stdout);
	f = fork();
	if (f == 0) {
		close(go[1]);
		forker(m, go[0]);
	}
	close(go[0]);
	if (!ASSERT_OK(sf_runtime_attach(rt, f, &prog, 0, NULL, &e), "confine the forker"))
		goto out;
	sf_runtime_counters(rt, &before);
	ASSERT_OK(sf_runtime_test_knob(rt, SF_TEST_NO_STORAGE, 1), "storage fails");
	ASSERT_EQ(write(go[1], "g", 1), 1, "let it fork");
	while (!m->forked)
		usleep(1000);
	if (adopt)
		ASSERT_OK(sf_runtime_test_knob(rt, SF_TEST_NO_STORAGE, 0), "storage works again");
	m->go = 1;
	waitpid(f, &status, 0);
	sf_runtime_test_knob(rt, SF_TEST_NO_STORAGE, 0);
	sf_runtime_counters(rt, &after);
	ASSERT_EQ(after.fork_failed - before.fork_failed, 1, "the child got no storage at fork");
	ASSERT_TRUE(WIFSIGNALED(m->status) && WTERMSIG(m->status) == SIGKILL,
		    "the child was killed");
	if (adopt) {
		ASSERT_EQ(m->reached, 1, "adopted: its first syscall was judged and allowed");
		ASSERT_EQ(after.orphans_killed - before.orphans_killed, 0, "none killed as an orphan");
		test_log("adopted at its first syscall, killed by its chain on getppid\n");
	} else {
		ASSERT_EQ(m->reached, 0, "it never got past its first syscall");
		ASSERT_EQ(after.orphans_killed - before.orphans_killed, 1,
			  "killed as an orphan with no storage");
	}
out:
	close(go[1]);
	munmap((void *)m, sizeof(*m));
}

TEST(a_child_that_gets_no_task_storage_at_fork_is_adopted_or_killed_at_its_first_syscall)
{
	struct sf_runtime *rt = NULL;

	if (!ASSERT_OK(sf_runtime_open(&rt, opts()), "open"))
		return;
	one_child(rt, false);
	one_child(rt, true);
	sf_runtime_close(rt);
}

/* ---- TSYNC under a thread storm -------------------------------------------- */

#define RELAYS 8

static volatile int storm_stop, relays_done;

/* A relay: each thread makes a syscall, starts the next one and ends, so
 * that there is always a thread younger than the runtime's last pass over
 * the group, created by a thread that pass may not have moved. */
static void *relay(void *arg)
{
	pthread_attr_t a;
	pthread_t t;

	(void)arg;
	syscall(SYS_getgid);
	if (storm_stop) {
		__atomic_fetch_add(&relays_done, 1, __ATOMIC_SEQ_CST);
		return NULL;
	}
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	while (pthread_create(&t, &a, relay, NULL) != 0)
		sched_yield();
	return NULL;
}

/* A process whose threads come and go until its stdin (go) closes. */
static void storm(int go)
{
	pthread_attr_t a;
	pthread_t t;
	char c;
	int i;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	for (i = 0; i < RELAYS; i++)
		pthread_create(&t, &a, relay, NULL);
	while (read(go, &c, 1) > 0)
		;
	storm_stop = 1;
	while (relays_done < RELAYS)
		usleep(1000);
	_exit(0);
}

struct group_check { pid_t tgid; uint32_t id; int threads, without; };

static int check_thread(void *ctx, const struct sf_task_info *t)
{
	struct group_check *g = ctx;
	uint32_t i, n = t->n_filters < 64 ? t->n_filters : 64;
	bool has = false;

	if (t->tgid != g->tgid)
		return 0;
	g->threads++;
	for (i = 0; i < n; i++)
		has |= t->filter_ids[i] == g->id;
	g->without += !has;
	return 0;
}

TEST(tsync_converges_while_threads_come_and_go_and_covers_every_thread)
{
	struct sock_filter f[16];
	struct sf_runtime *rt = NULL;
	int go[2], round, rounds = test_is_emulated() ? 10 : 40, status;
	pid_t p;

	if (!ASSERT_OK(sf_runtime_open(&rt, opts()), "open") || !ASSERT_OK(pipe(go), "pipe"))
		goto out;
	fflush(stdout);
	p = fork();
	if (p == 0) {
		close(go[1]);
		storm(go[0]);
	}
	close(go[0]);
	usleep(test_is_emulated() ? 500000 : 50000);
	for (round = 0; round < rounds && !test_failed(); round++) {
		/* Filters of distinct lengths are distinct filters, stacked. */
		struct sock_fprog prog = progs_kill_on(f, 4 + round % 12, SYS_getpgrp);
		struct group_check g = { .tgid = p };
		struct c2e_error e;
		int r;

		r = sf_runtime_attach(rt, p, &prog, SF_ATTACH_TSYNC, &g.id, &e);
		if (!ASSERT_OK(r, "TSYNC attach under the storm")) {
			test_log("round %d\n", round);
			break;
		}
		ASSERT_OK(sf_runtime_for_each_task(rt, check_thread, &g), "list");
		ASSERT_EQ(g.without, 0, "threads of the group without the new filter");
		if (round == 0 || round == rounds - 1)
			test_log("round %d: %d threads listed, all with filter %u\n",
				 round, g.threads, g.id);
	}
	close(go[1]);
	waitpid(p, &status, 0);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		    "the storm survived every attach (none denies what it does)");
out:
	sf_runtime_close(rt);
}

/* ---- nothing attached after uninstall ---------------------------------------- */

/* How many BPF links attach a program named like sfilter's (sf_*). */
static int sfilter_links(void)
{
	uint32_t id = 0;
	int n = 0;

	while (bpf_link_get_next_id(id, &id) == 0) {
		struct bpf_link_info li = { 0 };
		struct bpf_prog_info pi = { 0 };
		uint32_t ll = sizeof(li), pl = sizeof(pi);
		int lfd = bpf_link_get_fd_by_id(id), pfd;

		if (lfd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(lfd, &li, &ll) == 0 &&
		    (pfd = bpf_prog_get_fd_by_id(li.prog_id)) >= 0) {
			if (bpf_obj_get_info_by_fd(pfd, &pi, &pl) == 0 &&
			    strncmp(pi.name, "sf_", 3) == 0)
				n++;
			close(pfd);
		}
		close(lfd);
	}
	return n;
}

TEST(once_uninstall_returns_no_sfilter_program_is_attached)
{
	struct sock_fprog prog = progs_kill_on(kill_getppid, 4, SYS_getppid);
	struct sf_runtime *rt = NULL;
	struct c2e_error e;
	bool adopted;
	char pin[64];
	int before = sfilter_links();

	snprintf(pin, sizeof(pin), "/sys/fs/bpf/sfilter-links-%d", getpid());
	sf_runtime_uninstall_dir(pin);
	if (!ASSERT_OK(sf_runtime_open_pinned(&rt, opts(), pin, &adopted), "open pinned"))
		return;
	ASSERT_OK(sf_runtime_attach(rt, getpid(), &prog, 0, NULL, &e), "confine this test");
	ASSERT_GE(sfilter_links(), before + 3, "its links are there (dispatcher, fork, ...)");
	/* From another runtime that adopted them, as sfilterd --uninstall. */
	sf_runtime_close(rt);
	rt = NULL;
	if (ASSERT_OK(sf_runtime_open_pinned(&rt, opts(), pin, &adopted), "adopt") &&
	    ASSERT_TRUE(adopted, "adopted"))
		ASSERT_OK(sf_runtime_uninstall(rt), "uninstall");
	ASSERT_EQ(sfilter_links(), before, "links left once uninstall returned");
	ASSERT_EQ(syscall(SYS_getppid), getppid(), "this test unconfined");
	sf_runtime_close(rt);
}
