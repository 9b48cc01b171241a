// SPDX-License-Identifier: GPL-2.0-only
/*
 * Threads made while sf_attach(TSYNC) installs its gate: a process whose
 * threads keep making threads attaches a filter that refuses mkdir with
 * ERRNO(EPERM), through libsfclient and sfilterd (gate and chain). Every
 * thread that starts after the attach returned (it sees the flag the
 * attaching thread set) makes the denied mkdir at once: it must fail with
 * EPERM and the directory never appear (an escape otherwise), and the
 * process must live (a wrongful kill otherwise: on the tracepoint tier a
 * thread the gate missed would be killed by the dispatcher instead).
 */
#define _GNU_SOURCE
#include "harness.h"
#include "bypass.h"
#include "daemon.h"
#include "sfclient.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

SFD_TIER_INDEPENDENT

#define SPAWNERS 4

struct board {
	volatile int attached, stop;
	int attach_r;
	long made, after, refused, wrong;
	char dir[96];
};
static struct board *B;

static void *worker(void *arg)
{
	char path[160];
	long k = (long)arg;

	if (!__atomic_load_n(&B->attached, __ATOMIC_ACQUIRE))
		return NULL;
	__atomic_add_fetch(&B->after, 1, __ATOMIC_RELAXED);
	snprintf(path, sizeof(path), "%s/t%ld", B->dir, k);
	if (syscall(SYS_mkdir, path, 0700) == -1 && errno == EPERM)
		__atomic_add_fetch(&B->refused, 1, __ATOMIC_RELAXED);
	else
		__atomic_add_fetch(&B->wrong, 1, __ATOMIC_RELAXED);
	return NULL;
}

static void *spawner(void *arg)
{
	long base = (long)arg * 1000000;

	while (!B->stop) {
		pthread_t t;
		long k = base + __atomic_add_fetch(&B->made, 1, __ATOMIC_RELAXED);

		if (pthread_create(&t, NULL, worker, (void *)k) == 0)
			pthread_join(t, NULL);
	}
	return NULL;
}

static void process(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mkdir, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog p = { 4, f };
	struct timespec ms = { 0, 2 * 1000 * 1000 };
	pthread_t sp[SPAWNERS];
	long i;

	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	for (i = 0; i < SPAWNERS; i++)
		pthread_create(&sp[i], NULL, spawner, (void *)i);
	nanosleep(&ms, NULL);
	B->attach_r = sf_attach(&p, SF_ATTACH_TSYNC);
	__atomic_store_n(&B->attached, 1, __ATOMIC_RELEASE);
	ms.tv_nsec = 30 * 1000 * 1000;
	nanosleep(&ms, NULL);
	B->stop = 1;
	for (i = 0; i < SPAWNERS; i++)
		pthread_join(sp[i], NULL);
	_exit(0);
}

TEST(bypass_gate_threads_made_during_the_gates_install_are_refused_exactly)
{
	SFD_AUTO;
	struct bp_tally t = { 0 };
	char tmp[] = "/tmp/sftest-gate-threads-XXXXXX";
	long i, n = bp_iterations(30, 3), after = 0;
	double t0 = bp_now();

	if (!sfd_start_sfilterd(&dm, false))
		return;
	B = bp_shared(sizeof(*B));
	if (!B || !ASSERT_TRUE(mkdtemp(tmp) != NULL, "mkdtemp"))
		return;
	for (i = 0; i < n && !test_failed(); i++) {
		char what[64], cmd[160];
		int st;
		pid_t pid;

		memset((void *)B, 0, sizeof(*B));
		snprintf(B->dir, sizeof(B->dir), "%s/%ld", tmp, i);
		if (!ASSERT_OK(mkdir(B->dir, 0700), "mkdir"))
			break;
		fflush(stdout);
		pid = fork();
		if (pid == 0)
			process();
		st = bp_wait(pid, test_is_emulated() ? 120 : 20);
		snprintf(what, sizeof(what), "iteration %ld", i);
		if (!ASSERT_EQ(B->attach_r, 0, "sf_attach with TSYNC"))
			break;
		after += B->after;
		if (WIFSIGNALED(st))
			bp_count(&t, BP_WRONGFUL, st, what);
		else if (B->wrong || rmdir(B->dir) != 0)
			bp_count(&t, BP_ESCAPE, st, what); /* a mkdir ran: not empty */
		else
			bp_count(&t, BP_LIVED, st, what);
		snprintf(cmd, sizeof(cmd), "rm -rf %s", B->dir);
		(void)!system(cmd);
	}
	rmdir(tmp);
	test_log("%ld threads started after the attach returned; each refused\n", after);
	ASSERT_GE(after, n, "threads started after the attach");
	bp_report("gate-threads", "threads keep making threads while sf_attach(TSYNC) installs "
		  "the gate; those started after it returned make the denied call", &t,
		  bp_now() - t0);
}
