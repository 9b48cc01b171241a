// SPDX-License-Identifier: GPL-2.0-only
/*
 * Bypass attempts through the death of sfilterd: a daemon with pinned
 * state serves clients that call sf_attach() in a loop, and is SIGKILLed
 * at random moments and started again (it adopts the pins). One
 * iteration: one sf_attach() of a filter that kills on getppid, made by a
 * fresh child of one of three clients, which then calls getppid. The
 * call either succeeded, and its filter holds (the child dies: else an
 * escape), or failed, and nothing is attached (the child lives: else a
 * wrongful kill, the half state of a request the daemon died in the
 * middle of). Clients start no attempt while the daemon is known to be
 * down, so that most attempts meet a live daemon, some its death.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "bypass.h"
#include "daemon.h"
#include "progs.h"
#include "sfclient.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define N_CLIENTS 3

struct client_board {
	volatile int rc;          /* the child's sf_attach(): 0 or errno */
	volatile int no_reply;    /* it failed with a request in flight */
	volatile long denied_ret; /* what the denied call returned, when it did */
	volatile int denied_errno;
	char note[200];           /* sf_last_error() after the attach */
	struct bp_flags f;
	struct bp_tally t;
	long attached, failed, lost_reply;
};

struct board {
	volatile int down;        /* the daemon is dead: start no attempt */
	volatile int stop;
	struct client_board c[N_CLIENTS];
};

static struct board *B;
static struct sock_filter kill_getppid[4];

static void attempt(struct client_board *c)
{
	struct sock_fprog prog = progs_kill_on(kill_getppid, 4, SYS_getppid);

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		_exit(90);
	c->rc = sf_attach(&prog, 0) ? errno : 0;
	/* The daemon died with the request in flight (after the connect). */
	c->no_reply = c->rc && strstr(sf_last_error(), "without a reply") != NULL;
	snprintf(c->note, sizeof(c->note), "%s", sf_last_error());
	c->f.reached = 1;
	c->denied_ret = bp_denied_call();
	c->denied_errno = errno;
	c->f.survived = 1;
	_exit(0);
}

static void client(int idx)
{
	struct client_board *c = &B->c[idx];
	char what[512];
	int st;
	pid_t p;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	while (!B->stop) {
		if (B->down) {
			usleep(500);
			continue;
		}
		c->rc = -1;
		c->no_reply = 0;
		c->denied_ret = 0;
		c->denied_errno = 0;
		memset((void *)&c->f, 0, sizeof(c->f));
		fflush(stdout);
		p = fork();
		if (p == 0)
			attempt(c);
		if (p < 0)
			_exit(91);
		st = bp_wait(p, 60);
		snprintf(what, sizeof(what), "client %d: sf_attach() %s%s; the denied call %s %ld (%s)",
			 idx, c->rc ? strerror(c->rc) : "succeeded",
			 c->no_reply ? " (the daemon died before replying)" : "",
			 c->f.survived ? "returned" : "did not return",
			 c->denied_ret, c->denied_ret < 0 ? strerror(c->denied_errno) : "no error");
		if (c->f.survived)
			snprintf(what + strlen(what), sizeof(what) - strlen(what),
				 "; sf_last_error(): \"%s\"", (const char *)c->note);
		if (c->rc == 0) {
			c->attached++;
			bp_count(&c->t, bp_judge_denied(st, &c->f), st, what);
		} else {
			c->failed++;
			c->lost_reply += c->no_reply;
			bp_count(&c->t, c->f.survived ? BP_LIVED :
				 c->f.reached ? BP_WRONGFUL : bp_judge_allowed(st), st, what);
		}
	}
	_exit(0);
}

TEST(bypass_every_sf_attach_across_daemon_sigkills_either_holds_or_left_nothing_attached)
{
	long n = bp_iterations(1000, 40), total = 0, kills = 0, attached = 0, failed = 0, lost = 0;
	pid_t clients[N_CLIENTS] = { 0 };
	struct bp_tally t = { 0 };
	unsigned int seed = 3;
	double t0 = bp_now();
	int i, st;
	SFD_AUTO;

	if (!test_need_root("bpffs pins"))
		return;
	B = bp_shared(sizeof(*B));
	if (!B || !sfd_start_sfilterd(&dm, true))
		return;
	for (i = 0; i < N_CLIENTS; i++) {
		fflush(stdout);
		clients[i] = fork();
		if (clients[i] == 0)
			client(i);
	}
	while (total < n && !test_failed()) {
		/* Alive for a while (attempts in flight), then killed. Under
		 * emulation a restarted daemon needs tens of milliseconds
		 * before it takes a gate's listener, and a client that
		 * lost one hands it to the next daemon: killed sooner,
		 * no daemon lives long enough for the clients to get on. */
		usleep(test_is_emulated() ? 20000 + rand_r(&seed) % 300000 :
					    2000 + rand_r(&seed) % 30000);
		B->down = 1;
		st = sfd_signal(&dm, SIGKILL);
		kills++;
		if (!ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "sfilterd SIGKILLed") ||
		    !sfd_restart(&dm))
			break;
		B->down = 0;
		for (i = 0, total = 0; i < N_CLIENTS; i++)
			total += B->c[i].t.iterations;
	}
	B->stop = 1;
	for (i = 0; i < N_CLIENTS; i++) {
		if (clients[i] <= 0)
			continue;
		st = bp_wait(clients[i], 60);
		ASSERT_TRUE(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "a client ended well");
		t.iterations += B->c[i].t.iterations;
		t.escapes += B->c[i].t.escapes;
		t.wrongful_kills += B->c[i].t.wrongful_kills;
		attached += B->c[i].attached;
		failed += B->c[i].failed;
		lost += B->c[i].lost_reply;
	}
	test_log("%ld daemon SIGKILLs; %ld attaches succeeded, %ld failed, %ld of them with "
		 "the request in flight\n", kills, attached, failed, lost);
	bp_report("daemon-sigkill", "an sf_attach() while sfilterd is SIGKILLed at random "
		  "and restarted on its pins, then the denied call", &t, bp_now() - t0);
}
