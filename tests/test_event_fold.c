// SPDX-License-Identifier: GPL-2.0-only
/*
 * Repeats folded in the kernel (sfilterd --repeat-interval): a process's
 * calls of one logged or refused syscall make one event at once and then
 * one with a count per interval, and a "repeat" event for the calls no
 * event carried once the loop stops. Counts add up to every call exactly;
 * each process and each syscall is a key of its own; interval 0 is an
 * event per call; policy-from-log, `sfctl log --summary` and `sfctl
 * status` read the counts.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "bypass.h"
#include "daemon.h"
#include "progs.h"
#include "sfclient.h"

#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

SFD_TIER_INDEPENDENT

#define CALLS 20000

/* What the event log says of one process's calls of one syscall. */
struct tally {
	int lines;        /* events */
	int repeats;      /* of them repeat events */
	int with_args;    /* of them carrying args (made by the call itself) */
	int uncounted;    /* of them without "count" */
	long long calls;  /* the sum of their counts */
	long long first_count;
};

/* pid -1: any process's. */
static void tally_log(const struct sfd *dm, pid_t pid, const char *syscall, struct tally *t)
{
	FILE *f = fopen(dm->log, "re");
	char *line = NULL;
	size_t cap = 0;

	memset(t, 0, sizeof(*t));
	t->first_count = -1;
	while (f && getline(&line, &cap, f) > 0) {
		struct json_object *o = json_tokener_parse(line), *v;

		if (!o)
			continue;
		if (json_object_object_get_ex(o, "pid", &v) &&
		    (pid < 0 || json_object_get_int(v) == pid) &&
		    json_object_object_get_ex(o, "syscall", &v) &&
		    !strcmp(json_object_get_string(v), syscall)) {
			t->lines++;
			t->with_args += json_object_object_get_ex(o, "args", NULL);
			t->repeats += json_object_object_get_ex(o, "repeat", NULL);
			if (json_object_object_get_ex(o, "count", &v)) {
				t->calls += json_object_get_int64(v);
				if (t->first_count < 0)
					t->first_count = json_object_get_int64(v);
			} else {
				t->uncounted++;
				t->calls++;
			}
		}
		json_object_put(o);
	}
	free(line);
	if (f)
		fclose(f);
}

/* Waits (5 s, 60 s under emulation) until the log's counts for pid's
 * calls of syscall reach want. */
static bool tally_wait(const struct sfd *dm, pid_t pid, const char *syscall, long long want,
		       struct tally *t)
{
	int i, tries = test_is_emulated() ? 600 : 50;

	for (i = 0; i < tries; i++) {
		tally_log(dm, pid, syscall, t);
		if (t->calls >= want)
			return t->calls == want;
		usleep(100000);
	}
	return false;
}

/* A child that logs getppid (and, with both, getuid too) and makes n
 * calls of each, after sleeping gap_ms between the first half and the
 * second. Returns its pid; it exits 0 when every call was made. */
static pid_t logger(int n, bool both, int gap_ms)
{
	pid_t pid = fork();

	if (pid == 0) {
		static struct sock_filter f[8] = {
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 1, 0),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getuid, 0, 1),
			BPF_STMT(BPF_RET | BPF_K, 0x7ffc0000U), /* LOG */
			BPF_STMT(BPF_RET | BPF_K, 0x7fff0000U),
		};
		static struct sock_filter one[4];
		struct sock_fprog prog = both ? (struct sock_fprog){ .len = 5, .filter = f }
					      : progs_log_on(one, 4, SYS_getppid);
		int i;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		/* The BPF side's folding is under test, not the gate. */
		setenv("SFILTER_GATE", "0", 1);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || sf_attach(&prog, 0))
			_exit(10);
		for (i = 0; i < n; i++) {
			if (i == n / 2 && gap_ms)
				usleep(gap_ms * 1000);
			syscall(SYS_getppid);
			if (both)
				syscall(SYS_getuid);
		}
		_exit(0);
	}
	return pid;
}

/* A child whose filter refuses getppid with EACCES, through the gate
 * where the kernel filter is free for it (sf_attach()'s default); it makes
 * n calls and exits 0 when each was refused with exactly that errno. */
static pid_t denier(int n)
{
	pid_t pid = fork();

	if (pid == 0) {
		static struct sock_filter f[] = {
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
			BPF_STMT(BPF_RET | BPF_K, 0x00050000U | EACCES), /* ERRNO */
			BPF_STMT(BPF_RET | BPF_K, 0x7fff0000U),
		};
		struct sock_fprog prog = { .len = 4, .filter = f };
		int i;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || sf_attach(&prog, 0))
			_exit(10);
		for (i = 0; i < n; i++)
			if (syscall(SYS_getppid) != -1 || errno != EACCES)
				_exit(11);
		_exit(0);
	}
	return pid;
}

static bool reaped_ok(pid_t pid)
{
	int st;

	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static bool start(struct sfd *dm, const char *interval)
{
	static const char *args[3] = { "--repeat-interval" };

	args[1] = interval;
	dm->args = args;
	return sfd_start_sfilterd(dm, false);
}

TEST(a_loop_of_logged_calls_makes_few_events_whose_counts_add_up_to_every_call)
{
	SFD_AUTO_STOP;
	struct tally t;
	pid_t pid;

	if (!start(&dm, "0.3"))
		return;
	pid = logger(CALLS, false, 500);
	ASSERT_TRUE(reaped_ok(pid), "the logger made its calls");
	ASSERT_TRUE(tally_wait(&dm, pid, "getppid", CALLS, &t),
		    "the counts add up to every call, exactly");
	test_log("%d events (%d repeat events) for %d calls\n", t.lines, t.repeats, CALLS);
	ASSERT_EQ(t.first_count, 1, "the first call makes its event at once, standing for itself");
	ASSERT_EQ(t.uncounted, 0, "every event of a folded kind has a count");
	ASSERT_TRUE(t.with_args >= 2, "the first call after the pause makes an event of its own");
	/* An event an interval at most, and the pause's: the loop takes
	 * well under a second here, seconds under emulation. */
	ASSERT_TRUE(t.lines <= (test_is_emulated() ? 100 : 20),
		    "a loop of 20,000 calls makes a handful of events");
}

TEST(a_loop_that_stops_gets_a_repeat_event_for_the_calls_no_event_carried)
{
	SFD_AUTO_STOP;
	struct tally t;
	pid_t pid;

	if (!start(&dm, "0.5"))
		return;
	pid = logger(1000, false, 0);
	ASSERT_TRUE(reaped_ok(pid), "the logger made its calls");
	ASSERT_TRUE(tally_wait(&dm, pid, "getppid", 1000, &t),
		    "the calls after the first come in a repeat event once the interval is over");
	ASSERT_TRUE(t.repeats >= 1, "a repeat event (no args: no call of its own) was logged");
	ASSERT_TRUE(sfd_log_count(&dm, "\"repeat\":true") >= 1, "it says it is one");
}

TEST(each_syscall_and_each_process_is_a_key_of_its_own)
{
	SFD_AUTO_STOP;
	struct tally a, b, c;
	pid_t p1, p2;

	if (!start(&dm, "0.3"))
		return;
	p1 = logger(3000, true, 0);
	p2 = logger(2000, false, 0);
	ASSERT_TRUE(reaped_ok(p1) && reaped_ok(p2), "both loggers made their calls");
	ASSERT_TRUE(tally_wait(&dm, p1, "getppid", 3000, &a), "the first's getppid add up");
	ASSERT_TRUE(tally_wait(&dm, p1, "getuid", 3000, &b), "its getuid add up apart");
	ASSERT_TRUE(tally_wait(&dm, p2, "getppid", 2000, &c),
		    "the second process's getppid add up apart");
	ASSERT_TRUE(a.with_args >= 1 && b.with_args >= 1 && c.with_args >= 1,
		    "each key's first call made an event of its own");
}

TEST(a_loop_of_denied_calls_folds_too_and_each_call_is_still_refused)
{
	SFD_AUTO_STOP;
	struct tally t;
	pid_t pid;

	if (!start(&dm, "0.3"))
		return;
	pid = denier(2000);
	ASSERT_TRUE(reaped_ok(pid), "each of the 2000 calls was refused with EACCES");
	ASSERT_TRUE(tally_wait(&dm, pid, "getppid", 2000, &t),
		    "the counts add up to every call, exactly");
	test_log("%d events (%d repeat events) for 2000 denied calls; %s\n", t.lines, t.repeats,
		 sfd_log_count(&dm, "\"tier\":\"gate\"") ? "judged by the gate (folded in sfilterd)"
							     : "refused in the kernel");
	ASSERT_TRUE(t.lines <= (test_is_emulated() ? 100 : 20), "in a handful of events");
}

TEST(a_repeat_interval_of_0_makes_an_event_per_call)
{
	SFD_AUTO_STOP;
	struct tally t;
	pid_t pid;

	if (!start(&dm, "0"))
		return;
	pid = logger(100, false, 0);
	ASSERT_TRUE(reaped_ok(pid), "the logger made its calls");
	ASSERT_TRUE(tally_wait(&dm, pid, "getppid", 100, &t), "100 calls are logged");
	ASSERT_EQ(t.lines, 100, "as 100 events");
	ASSERT_EQ(t.uncounted, 100, "none with a count");
}

/* sfctl ARGS... against dm, stdout into out. The wait status. */
static int sfctl(const struct sfd *dm, const char *const args[], char *out, size_t size)
{
	char bin[PATH_MAX];
	const char *argv[12] = { bin, "--socket", dm->sock };
	int i;

	if (!sfd_find_bin("sfctl", "SF_SFCTL", bin, sizeof(bin)))
		return -1;
	for (i = 0; args[i] && i < 8; i++)
		argv[3 + i] = args[i];
	return sfd_run(argv, true, 60, out, size);
}

TEST(policy_from_log_log_summary_and_status_read_the_counts)
{
	SFD_AUTO_STOP;
	static char out[65536];
	struct json_object *o, *v, *arr;
	struct tally t;
	char pidarg[16];
	size_t i;
	pid_t pid;
	int st;

	if (!start(&dm, "0.3"))
		return;
	pid = logger(5000, false, 400);
	ASSERT_TRUE(reaped_ok(pid), "the logger made its calls");
	ASSERT_TRUE(tally_wait(&dm, pid, "getppid", 5000, &t), "the log has every call");
	snprintf(pidarg, sizeof(pidarg), "%d", pid);
	st = sfctl(&dm, (const char *const[]){ "--json", "policy-from-log", "--log", dm.log,
					       "--pid", pidarg, NULL }, out, sizeof(out));
	ASSERT_EQ(st, 0, "policy-from-log learns from the log");
	o = json_tokener_parse(strchr(out, '{') ? strchr(out, '{') : out);
	ASSERT_TRUE(o != NULL, "it answers JSON");
	ASSERT_TRUE(json_object_object_get_ex(o, "calls", &v) && json_object_get_int64(v) == 5000,
		    "the events stand for 5000 calls");
	ASSERT_TRUE(json_object_object_get_ex(o, "syscalls", &arr), "it lists the syscalls");
	for (i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *s = json_object_array_get_idx(arr, i), *n;

		if (json_object_object_get_ex(s, "syscall", &n) &&
		    !strcmp(json_object_get_string(n), "getppid"))
			ASSERT_TRUE(json_object_object_get_ex(s, "calls", &n) &&
				    json_object_get_int64(n) == 5000, "getppid's 5000 calls");
	}
	json_object_put(o);
	st = sfctl(&dm, (const char *const[]){ "--json", "log", "--summary", "--log", dm.log, NULL },
		   out, sizeof(out));
	ASSERT_EQ(st, 0, "log --summary adds up the log");
	o = json_tokener_parse(strchr(out, '[') ? strchr(out, '[') : out);
	ASSERT_TRUE(o && json_object_is_type(o, json_type_array), "it answers a JSON array");
	for (i = 0; o && i < json_object_array_length(o); i++) {
		struct json_object *r = json_object_array_get_idx(o, i), *n;

		if (json_object_object_get_ex(r, "pid", &n) && json_object_get_int(n) == pid)
			ASSERT_TRUE(json_object_object_get_ex(r, "calls", &n) &&
				    json_object_get_int64(n) == 5000 &&
				    json_object_object_get_ex(r, "events", &n) &&
				    json_object_get_int64(n) == t.lines,
				    "the logger's row: 5000 calls in its events");
	}
	json_object_put(o);
	st = sfctl(&dm, (const char *const[]){ "status", NULL }, out, sizeof(out));
	ASSERT_EQ(st, 0, "status answers");
	ASSERT_TRUE(strstr(out, "repeats:  one event with a count per 0.3 s") != NULL,
		    "status says repeats are folded, and how often they are logged");
	test_log("%s", strstr(out, "repeats:"));
}

TEST(a_bad_repeat_interval_is_refused_in_one_line)
{
	static const char *bad[] = { "-1", "abc", "3601", "", "1e9", "nan" };
	char bin[PATH_MAX], out[1024];
	size_t i;

	if (!sfd_need_bin("sfilterd", "SF_SFILTERD", bin, sizeof(bin)))
		return;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *argv[] = { bin, "--no-pin", "--foreground", "--repeat-interval", bad[i],
				       NULL };
		int st = sfd_run(argv, true, 10, out, sizeof(out));

		ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 2, "refused with status 2");
		ASSERT_TRUE(strstr(out, "--repeat-interval") && sfd_error_lines(out, "sfilterd", NULL),
			    "in one line that names the option, and the usage hint");
	}
}

/* uid 65534 logs every call and makes calls of numbers no syscall has,
 * keys numbers of them in turn, until *stop. */
static void key_flooder(volatile int *running, volatile int *stop, long keys)
{
	static struct sock_filter log_all[] = { BPF_STMT(BPF_RET | BPF_K, 0x7ffc0000U) };
	struct sock_fprog prog = { .len = 1, .filter = log_all };
	long i = 0;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (setgroups(0, NULL) || setgid(65534) || setuid(65534) ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		_exit(10);
	setenv("SFILTER_GATE", "0", 1);
	if (sf_attach(&prog, 0))
		_exit(11);
	*running = 1;
	while (!*stop)
		syscall(100000 + (i++ % keys));
	_exit(0);
}

/* uid 65534's flood of new keys in a child, running once this returns
 * its pid (-1: it did not start, the test failed); board: two ints in
 * shared memory, the second of which stops it (flood_end()). */
static pid_t flood_start(volatile int *board)
{
	pid_t fl = fork();

	if (fl == 0)
		key_flooder(&board[0], &board[1], 1000000);
	if (!ASSERT_TRUE(fl > 0 && bp_spin_until(&board[0], 1, 10), "uid 65534 floods new keys"))
		return -1;
	return fl;
}

static void flood_end(volatile int *board, pid_t fl)
{
	board[1] = 1;
	if (fl > 0)
		bp_wait(fl, 30);
}

TEST(bypass_another_users_flood_of_new_keys_never_takes_a_users_folded_counts)
{
	static const char *const args[] = { "--repeat-interval", "3", NULL };
	volatile int *board = bp_shared(2 * sizeof(int));
	struct tally t;
	pid_t fl = -1, pid;
	int st;
	SFD_AUTO;

	if (!board || !sfd_start_for_users(&dm, args))
		return;
	if ((fl = flood_start(board)) < 0)
		goto out;
	/* uid 65533's loop: its calls after the first fold under one key,
	 * which holds them until its interval is over, while the flood goes
	 * on making keys in the map every user shares. */
	pid = fork();
	if (pid == 0) {
		if (setgroups(0, NULL) || setgid(65533) || setuid(65533))
			_exit(12);
		_exit(reaped_ok(logger(3000, false, 0)) ? 0 : 13);
	}
	ASSERT_TRUE(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		    "uid 65533's logger made its calls");
	usleep(test_is_emulated() ? 6000000 : 3500000);
	ASSERT_TRUE(tally_wait(&dm, -1, "getppid", 3000, &t),
		    "uid 65533's counts add up to its 3000 calls while the flood goes on");
	test_log("uid 65533: %d events for %lld calls\n", t.lines, t.calls);
	{
		static char status[65536];

		if (sfd_status(&dm, status) == 0)
			test_log("uid 65534 dropped %lld events over its budget\n",
				 sfd_status_drops(status, 65534, "budget"));
	}
out:
	flood_end(board, fl);
}

/* As uid 65533: logs getppid, says so on rep, and makes n calls of it
 * once go has a byte. */
static void gated_logger(int n, int go, int rep)
{
	struct sock_filter one[4];
	struct sock_fprog prog = progs_log_on(one, 4, SYS_getppid);
	char c = 'r';
	int i;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	setenv("SFILTER_GATE", "0", 1);
	if (setgroups(0, NULL) || setgid(65533) || setuid(65533) ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || sf_attach(&prog, 0) ||
	    write(rep, &c, 1) != 1 || read(go, &c, 1) != 1)
		_exit(10);
	for (i = 0; i < n; i++)
		syscall(SYS_getppid);
	_exit(0);
}

TEST(bypass_a_users_calls_made_while_another_users_events_fill_the_ring_are_still_counted)
{
	static const char *const args[] = { "--repeat-interval", "1", NULL };
	volatile int *board = bp_shared(2 * sizeof(int));
	int go[2] = { -1, -1 }, rep[2] = { -1, -1 }, st;
	static char status[65536];
	struct tally t;
	pid_t fl = -1, pid = -1;
	char c;
	SFD_AUTO;

	if (!board || !sfd_start_for_users(&dm, args))
		return;
	if (!ASSERT_OK(pipe(go), "pipe") || !ASSERT_OK(pipe(rep), "pipe"))
		goto out;
	if ((fl = flood_start(board)) < 0)
		goto out;
	pid = fork();
	if (pid == 0)
		gated_logger(3000, go[0], rep[1]);
	if (!ASSERT_TRUE(pid > 0 && read(rep[0], &c, 1) == 1, "uid 65533's logger attached"))
		goto out;
	/* Nobody drains the ring: uid 65534's events fill it (its burst
	 * alone is about the half logged events may take). */
	if (!ASSERT_TRUE(sfd_pause(&dm), "sfilterd stopped"))
		goto out;
	usleep(test_is_emulated() ? 8000000 : 2000000);
	ASSERT_EQ(write(go[1], "g", 1), 1, "go");
	ASSERT_TRUE(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		    "uid 65533 made its calls while the ring was full");
	pid = -1;
	ASSERT_TRUE(sfd_resume(&dm), "sfilterd continued");
	ASSERT_TRUE(tally_wait(&dm, -1, "getppid", 3000, &t),
		    "its 3000 calls are counted: the walk's repeat event carries them");
	test_log("uid 65533: %d events for %lld calls\n", t.lines, t.calls);
	/* Else the scene did not happen, and the count says nothing. */
	ASSERT_TRUE(sfd_status(&dm, status) == 0 && sfd_status_drops(status, 65533, "ring") > 0,
		    "the ring was full when uid 65533 made its calls");
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	flood_end(board, fl);
	close(go[0]);
	close(go[1]);
	close(rep[0]);
	close(rep[1]);
}

/* Lines of the log from uid's processes' calls (not sfilterd's own). */
static long lines_of_uid(const struct sfd *dm, uid_t uid, bool repeats_only)
{
	FILE *f = fopen(dm->log, "re");
	char needle[32], *line = NULL;
	size_t cap = 0;
	long n = 0;

	snprintf(needle, sizeof(needle), "\"uid\":%u,", uid);
	while (f && getline(&line, &cap, f) > 0)
		n += strstr(line, needle) && !strstr(line, "\"sfilterd\":") &&
		     (!repeats_only || strstr(line, "\"repeat\":true"));
	free(line);
	if (f)
		fclose(f);
	return n;
}

TEST(bypass_a_flood_of_keys_gets_repeat_events_only_within_its_budget)
{
	/* 300 keys in turn: each key's calls after its interval are due a
	 * repeat event at every walk, five a second. */
	static const char *const args[] = { "--repeat-interval", "0.2", "--event-rate", "50",
					    "--event-burst", "100", NULL };
	volatile int *board = bp_shared(2 * sizeof(int));
	long lines, repeats, bound;
	double t0, secs;
	pid_t fl;
	SFD_AUTO;

	if (!board || !sfd_start_for_users(&dm, args))
		return;
	fl = fork();
	if (fl == 0)
		key_flooder(&board[0], &board[1], 300);
	if (!ASSERT_TRUE(fl > 0 && bp_spin_until(&board[0], 1, 10), "uid 65534 floods 300 keys"))
		goto out;
	t0 = bp_now();
	sleep(test_is_emulated() ? 4 : 2);
	/* Stopped while the flood goes on: its budget is spent at the stop's
	 * last walk too. */
	ASSERT_TRUE(sfd_stop(&dm), "sfilterd stops cleanly during the flood");
	secs = bp_now() - t0;
	lines = lines_of_uid(&dm, 65534, false);
	repeats = lines_of_uid(&dm, 65534, true);
	/* The budget, and an event per CPU racing for its last room. */
	bound = 100 + (long)(50 * (secs + 1)) + 64;
	test_log("%.1f s of flood: %ld events of uid 65534, %ld of them repeat events "
		 "(budget: %ld)\n", secs, lines, repeats, bound);
	ASSERT_TRUE(lines <= bound, "its events, repeat events with them, stay within its budget");
	ASSERT_TRUE(sfd_file_has(dm.log, "{\"sfilterd\":\"repeats_withheld\",\"uid\":65534,"),
		    "at stop, the log says how many of its calls had no repeat event");
out:
	board[1] = 1;
	if (fl > 0)
		bp_wait(fl, 30);
}
