// SPDX-License-Identifier: GPL-2.0-only
/* Busy confined tasks for tests (spinners.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "spinners.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Always on its way into or out of a syscall, but at nice 19, so that
 * twenty of them leave most of a CPU to the runtime under test (under
 * emulation, at nice 0 they starve it ten times over). */
static void spin_body(struct spin_board *b, int i)
{
	/* Never outlive the test, whatever becomes of it. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	errno = 0;
	if (nice(19) == -1 && errno)
		_exit(4);
	__atomic_fetch_add(&b->started, 1, __ATOMIC_SEQ_CST);
	while (!b->go[i]) {
		syscall(SYS_getgid);
		sched_yield();
	}
	syscall(b->last_nr);
	_exit(0);
}

bool spinners_start(struct spinners *s, int n)
{
	int i;

	if (n > SPIN_MAX)
		return false;
	s->b = mmap(NULL, sizeof(*s->b), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (s->b == MAP_FAILED) {
		s->b = NULL;
		return false;
	}
	memset(s->b, 0, sizeof(*s->b));
	s->n = 0;
	for (i = 0; i < n; i++) {
		pid_t p = fork();

		if (p < 0)
			return false;
		if (p == 0)
			spin_body(s->b, i);
		s->pid[s->n++] = p;
	}
	while (s->b->started < n)
		usleep(1000);
	return true;
}

int spinners_finish(struct spinners *s, int from, int to, int nr)
{
	int i, status, killed = 0, bad = 0;

	s->b->last_nr = nr;
	for (i = from; i < to; i++)
		__atomic_store_n(&s->b->go[i], 1, __ATOMIC_SEQ_CST);
	for (i = from; i < to; i++) {
		if (waitpid(s->pid[i], &status, 0) != s->pid[i])
			bad++;
		else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
			killed++;
		else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			bad++;
		s->pid[i] = 0;
	}
	return bad ? -1 : killed;
}

int spinners_dead(const struct spinners *s)
{
	int i, dead = 0;
	siginfo_t si;

	for (i = 0; i < s->n; i++) {
		if (s->pid[i] <= 0)
			continue;
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, s->pid[i], &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
		    si.si_pid == s->pid[i])
			dead++;
	}
	return dead;
}

void spinners_kill(struct spinners *s)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (s->pid[i] > 0) {
			kill(s->pid[i], SIGKILL);
			waitpid(s->pid[i], NULL, 0);
		}
	s->n = 0;
	if (s->b)
		munmap(s->b, sizeof(*s->b));
	s->b = NULL;
}

