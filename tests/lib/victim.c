// SPDX-License-Identifier: GPL-2.0-only
#define _GNU_SOURCE
#include "victim.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void victim_call(char c)
{
	if (c == 'A')
		syscall(SYS_getppid);
	else if (c == 'B')
		syscall(SYS_getuid);
	else if (c == 'C')
		syscall(SYS_getgid);
}

/* 'a'..'c': the call made by a forked child, whose end is the answer. */
static char victim_child_call(char c)
{
	int status = -1;
	pid_t k = fork();

	if (k == 0) {
		victim_call((char)(c - 'a' + 'A'));
		_exit(0);
	}
	if (k > 0)
		waitpid(k, &status, 0);
	if (status == 0)
		return 'y';
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL ? 'k' : 'x';
}

static void victim_body(int go, int rep)
{
	char c, r;

	while (read(go, &c, 1) == 1) {
		r = 'y';
		if (c >= 'a' && c <= 'c')
			r = victim_child_call(c);
		else
			victim_call(c);
		if (write(rep, &r, 1) != 1)
			_exit(98);
	}
	_exit(0);
}

bool victim_start(struct victim *v)
{
	int go[2], rep[2];

	if (pipe(go) || pipe(rep))
		return false;
	v->pid = fork();
	if (v->pid < 0)
		return false;
	if (v->pid == 0) {
		close(go[1]);
		close(rep[0]);
		victim_body(go[0], rep[1]);
	}
	close(go[0]);
	close(rep[1]);
	v->go = go[1];
	v->report = rep[0];
	return true;
}

/* 1: the victim ran the syscall and answered; 0: it died by SIGKILL;
 * -1: something else. */
int victim_do(struct victim *v, char cmd)
{
	char c;
	int status;

	if (v->pid <= 0)
		return -1;
	if (write(v->go, &cmd, 1) != 1)
		return -1;
	if (read(v->report, &c, 1) == 1)
		return 1;
	close(v->go);
	close(v->report);
	waitpid(v->pid, &status, 0);
	v->pid = 0;
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL ? 0 : -1;
}

int victim_child_do(struct victim *v, char cmd)
{
	char c = (char)(cmd - 'A' + 'a');

	if (v->pid <= 0 || write(v->go, &c, 1) != 1 || read(v->report, &c, 1) != 1)
		return -1;
	return c == 'y' ? 1 : c == 'k' ? 0 : -1;
}

void victim_end(struct victim *v)
{
	int status;

	if (v->pid <= 0)
		return;
	close(v->go);
	close(v->report);
	kill(v->pid, SIGKILL);
	waitpid(v->pid, &status, 0);
	v->pid = 0;
}

