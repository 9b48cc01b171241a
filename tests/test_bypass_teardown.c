// SPDX-License-Identifier: GPL-2.0-only
/*
 * Bypass attempts through changes to filters in force on busy tasks: 20
 * spinners (tests/lib/spinners.h) and a canary (a prober, tests/lib/
 * bypass.h), all confined by a base filter (kill on getppid) and by one
 * more filter that kills on one of getuid, geteuid, getegid and getpgrp.
 * The test changes filters all along:
 *   - a replace (most changes) of that filter with one that kills on the
 *     next of those calls;
 *   - a restart (every 10th change; every 3rd under emulation): the
 *     runtime is closed, an owner process adopts the pins and attaches,
 *     replaces and detaches other filters on two spinners until it is
 *     SIGKILLed at a random moment, and the test adopts the pins again;
 *   - an uninstall (every 35th; the 5th under emulation), after which
 *     everything is set up afresh.
 * One iteration is one probe: a child of the canary makes a call while a
 * replace or restart is under way (getppid, which must kill whatever is
 * being changed, or getgid, which must not), or one of the checks after
 * each change: the call the new filter kills on kills (else an escape)
 * and the one only the old one killed on does not (else a wrongful kill);
 * after an uninstall every spinner and the canary's child lives through
 * getppid; no spinner ever dies (a wrongful kill each); at the end each
 * spinner makes the base filter's call and must die (else an escape).
 * Iterations are counted until 1,000 (40 under emulation, and at least 6
 * changes there).
 */
#define _GNU_SOURCE
#include "harness.h"
#include "bypass.h"
#include "progs.h"
#include "runtime.h"
#include "spinners.h"
#include "c2e.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define N_SPIN 20

static const int extra_nr[] = { SYS_getuid, SYS_geteuid, SYS_getegid, SYS_getpgrp };
#define N_EXTRA 4

static struct sock_filter base_insns[4], extra_insns[2][4], owner_insns[3][8];

static struct sock_fprog extra(int k)
{
	return progs_kill_on(extra_insns[k % 2], 4, extra_nr[k % N_EXTRA]);
}

/* ---- the load ------------------------------------------------------------ */

struct load {
	struct sf_runtime *rt;
	const char *pin;
	struct spinners s;
	struct bp_prober c; /* the canary */
	uint32_t extra_id;
	int k;                /* the extra filter kills on extra_nr[k % N_EXTRA] */
};

static bool attach_all(struct load *l, const struct sock_fprog *p, uint32_t *id)
{
	int i;

	for (i = 0; i < l->s.n; i++)
		if (bp_attach(l->rt, l->s.pid[i], p, 0, id, false))
			return false;
	return bp_attach(l->rt, l->c.pid, p, 0, id, false) == 0;
}

/* Spinners, canary, a fresh pinned runtime, both filters on all. */
static bool load_up(struct load *l, bool force_tracepoint)
{
	struct sf_runtime_opts o = { .force_tracepoint = force_tracepoint };
	struct sock_fprog base = progs_kill_on(base_insns, 4, SYS_getppid), x = extra(l->k);
	bool adopted;

	sf_runtime_uninstall_dir(l->pin);
	if (!ASSERT_TRUE(spinners_start(&l->s, N_SPIN), "spinners") || !bp_prober_start(&l->c, NULL) ||
	    !ASSERT_OK(sf_runtime_open_pinned(&l->rt, &o, l->pin, &adopted), "open pinned"))
		return false;
	return attach_all(l, &base, NULL) && attach_all(l, &x, &l->extra_id);
}

/* Spinners that died: wrongful kills, each counted. */
static void count_dead_spinners(struct load *l, struct bp_tally *t, const char *what)
{
	int i, st;

	for (i = 0; i < l->s.n; i++)
		if (l->s.pid[i] > 0 && waitpid(l->s.pid[i], &st, WNOHANG) == l->s.pid[i]) {
			char m[128];

			snprintf(m, sizeof(m), "spinner %d after %s", i, what);
			l->s.pid[i] = 0;
			t->iterations++;
			t->wrongful_kills++;
			printf("    WRONGFUL KILL: %s (status 0x%x)\n", m, st);
		}
}

/* After a change: the current extra filter kills, the one before it does
 * not any more. Two checks of one iteration: counted once. */
static void check_canary(struct load *l, struct bp_tally *t, const char *what)
{
	struct bp_flags f = { 1, 0 };
	int now = bp_prober_probe(&l->c, extra_nr[l->k % N_EXTRA]);
	int before = bp_prober_probe(&l->c, extra_nr[(l->k + N_EXTRA - 1) % N_EXTRA]);
	char m[128];

	f.survived = now != -1 && WIFEXITED(now);
	snprintf(m, sizeof(m), "%s: the canary's child on the filter's new call", what);
	if (bp_judge_denied(now, &f) != BP_KILLED) {
		bp_count(t, bp_judge_denied(now, &f), now, m);
		return;
	}
	snprintf(m, sizeof(m), "%s: the canary's child on the filter's old call", what);
	bp_count(t, bp_judge_allowed(before), before, m);
}

/* The owner of a restart: adopts, then changes other filters on two of
 * the spinners (denying calls no spinner makes) until it is SIGKILLed. */
static void owner_body(struct load *l, int ready)
{
	static const int nrs[] = { SYS_getuid, SYS_geteuid, SYS_getegid };
	unsigned int seed = (unsigned int)getpid();
	bool adopted = false;
	struct sf_runtime *rt = NULL;

	if (sf_runtime_open_pinned(&rt, NULL, l->pin, &adopted) || !adopted)
		_exit(1);
	if (write(ready, "a", 1) != 1)
		_exit(2);
	for (;;) {
		int w = rand_r(&seed) % 3;
		/* Longer than the extra filter: never the same program. */
		struct sock_fprog p = progs_kill_on(owner_insns[w], 5 + w, nrs[w]);
		uint32_t id;

		/* Two of the spinners only: the others keep one chain, so
		 * that a replace rebuilds a few chains, not twenty. */
		if (bp_attach(rt, l->s.pid[l->s.n - 1 - rand_r(&seed) % 2], &p, 0, &id, true))
			continue;
		if (rand_r(&seed) % 2) {
			p = progs_kill_on(owner_insns[(w + 1) % 3], 5 + (w + 1) % 3,
					  nrs[(w + 1) % 3]);
			sf_runtime_replace(rt, id, &p, NULL);
		} else {
			sf_runtime_detach(rt, id);
		}
	}
}

static bool restart(struct load *l, unsigned int *seed)
{
	bool adopted = false;
	int sync[2];
	pid_t owner;
	char c;

	sf_runtime_close(l->rt);
	l->rt = NULL;
	if (!ASSERT_OK(pipe2(sync, O_CLOEXEC), "pipe"))
		return false;
	fflush(stdout);
	owner = fork();
	if (owner == 0) {
		close(sync[0]);
		owner_body(l, sync[1]);
	}
	close(sync[1]);
	if (!ASSERT_EQ(read(sync[0], &c, 1), 1, "the owner adopted the pins")) {
		close(sync[0]);
		waitpid(owner, NULL, 0);
		return false;
	}
	close(sync[0]);
	usleep(rand_r(seed) % 20000);
	kill(owner, SIGKILL);
	waitpid(owner, NULL, 0);
	return ASSERT_OK(sf_runtime_open_pinned(&l->rt, NULL, l->pin, &adopted), "adopt") &&
	       ASSERT_TRUE(adopted, "adopted");
}

/* Everything unconfined: every spinner and the canary's child live through
 * getppid (counted as one iteration); then all set up afresh. */
static bool uninstall(struct load *l, struct bp_tally *t, bool force_tracepoint)
{
	int killed, st;
	bool canary_killed;

	if (!ASSERT_OK(sf_runtime_uninstall(l->rt), "uninstall"))
		return false;
	sf_runtime_close(l->rt);
	l->rt = NULL;
	count_dead_spinners(l, t, "the uninstall");
	st = bp_prober_probe(&l->c, SYS_getppid);
	killed = spinners_finish(&l->s, 0, l->s.n, SYS_getppid);
	if (!ASSERT_GE(killed, 0, "spinners ended by exit or SIGKILL"))
		return false;
	canary_killed = bp_judge_allowed(st) != BP_LIVED;
	t->iterations++;
	if (killed || canary_killed) {
		t->wrongful_kills += killed + canary_killed;
		printf("    WRONGFUL KILL: %d spinners%s killed by the call the uninstalled "
		       "filter denied\n", killed, canary_killed ? " and the canary's child" : "");
	}
	spinners_kill(&l->s);
	bp_prober_end(&l->c, t);
	return load_up(l, force_tracepoint);
}

TEST(bypass_replacing_restarting_and_uninstalling_under_load_neither_kills_nor_lets_through)
{
	/* Under emulation a change takes long enough for many probes: a few
	 * changes of each kind are what counts there. */
	long n = bp_iterations(1000, 40), min_changes = bp_iterations(0, 6), change;
	long every_restart = bp_iterations(10, 3), every_uninstall = bp_iterations(35, 5);
	/* Under emulation an lsm-tier teardown takes a minute (see
	 * test_runtime_teardown.c): the tracepoint tier there. */
	bool tp = test_is_emulated();
	struct load l = { 0 };
	struct bp_tally t = { 0 };
	unsigned int seed = 7;
	double t0 = bp_now();
	char pin[64], what[64];
	long n_replace = 0, n_restart = 0, n_uninstall = 0;
	int killed;

	snprintf(pin, sizeof(pin), "/sys/fs/bpf/sfilter-bypass-%d", getpid());
	l.pin = pin;
	if (!load_up(&l, tp))
		goto out;
	for (change = 1; (change <= min_changes || t.iterations + l.c.b->t.iterations < n) &&
			 !test_failed(); change++) {
		struct sock_fprog x;

		if (change % every_uninstall == 0) {
			n_uninstall++;
			if (!uninstall(&l, &t, tp))
				break;
			continue;
		}
		/* The canary probes while the change is under way. */
		bp_prober_auto(&l.c, true);
		if (change % every_restart == 0) {
			snprintf(what, sizeof(what), "restart %ld", change);
			n_restart++;
			if (!restart(&l, &seed))
				break;
		} else {
			snprintf(what, sizeof(what), "replace %ld", change);
			n_replace++;
			x = extra(++l.k);
			if (!ASSERT_OK(sf_runtime_replace(l.rt, l.extra_id, &x, NULL), "replace"))
				break;
		}
		if (!bp_prober_auto(&l.c, false))
			break;
		count_dead_spinners(&l, &t, what);
		check_canary(&l, &t, what);
	}
	test_log("%ld replaces, %ld restarts, %ld uninstalls\n", n_replace, n_restart, n_uninstall);
	/* The base filter held through all of it. */
	killed = spinners_finish(&l.s, 0, l.s.n, SYS_getppid);
	t.iterations++;
	if (ASSERT_GE(killed, 0, "spinners ended by exit or SIGKILL") && killed != l.s.n) {
		t.escapes += l.s.n - killed;
		printf("    ESCAPE: %d of %d spinners lived through the base filter's call\n",
		       l.s.n - killed, l.s.n);
	}
	bp_prober_end(&l.c, &t);
	bp_report("replace-restart-uninstall", "a probe by a confined task while a filter it "
		  "has is replaced, its owner restarted, or all uninstalled; checks after each",
		  &t, bp_now() - t0);
out:
	spinners_kill(&l.s);
	bp_prober_end(&l.c, NULL);
	sf_runtime_close(l.rt);
	sf_runtime_uninstall_dir(pin);
}
