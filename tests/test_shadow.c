// SPDX-License-Identifier: GPL-2.0-only
/*
 * Shadow mode and hit counts, end to end through a private
 * sfilterd (--no-pin) and build/sfctl:
 *
 * - A candidate attached with --shadow beside the enforced filter logs
 *   one event per call where its verdict differs, naming its verdict, the
 *   enforced one and the classic index of its ret; the task's calls keep
 *   the enforced verdict. A candidate that agrees (in action, and in the
 *   data of ERRNO/TRAP/TRACE) logs nothing, also where the chain runs.
 * - A filter attached with --count: `sfctl show PID --hits` gives each
 *   ret the number of calls it decided, also after the daemon was killed
 *   and a new one adopted its pins.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "daemon.h"
#include "c2e.h"
#include "sockfilter.h"

#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define LEN(a) (sizeof(a) / sizeof((a)[0]))

static const struct sock_filter allow_all[] = { STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
/* The candidate: getppid(2) fails with EPERM (ret at 2), the rest runs. */
static const struct sock_filter deny_getppid[] = {
	STMT(BPF_LD | BPF_W | BPF_ABS, 0),
	JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getppid, 0, 1),
	STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 1),
	STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};
/* Enforced: getppid(7) is logged, the rest allowed; not constant for
 * getppid, so the chain runs for it. */
static const struct sock_filter log_getppid7[] = {
	STMT(BPF_LD | BPF_W | BPF_ABS, 0),
	JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getppid, 0, 3),
	STMT(BPF_LD | BPF_W | BPF_ABS, 16),
	JUMP(BPF_JMP | BPF_JEQ | BPF_K, 7, 0, 1),
	STMT(BPF_RET | BPF_K, SECCOMP_RET_LOG),
	STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};
/* The same verdicts, written otherwise: a candidate that always agrees. */
static const struct sock_filter log_getppid7_again[] = {
	STMT(BPF_LD | BPF_W | BPF_ABS, 16),
	JUMP(BPF_JMP | BPF_JEQ | BPF_K, 7, 1, 0),
	STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	STMT(BPF_LD | BPF_W | BPF_ABS, 0),
	JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getppid, 0, 1),
	STMT(BPF_RET | BPF_K, SECCOMP_RET_LOG),
	STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};
/* Enforced: getppid(7) fails with EPERM, the rest runs; and candidates
 * that say the same otherwise, or fail it with ENOENT (its ret at 5). */
static const struct sock_filter errno_getppid7[] = {
	STMT(BPF_LD | BPF_W | BPF_ABS, 0),
	JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getppid, 0, 3),
	STMT(BPF_LD | BPF_W | BPF_ABS, 16),
	JUMP(BPF_JMP | BPF_JEQ | BPF_K, 7, 0, 1),
	STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 1),
	STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};
static const struct sock_filter errno_getppid7_again[] = {
	STMT(BPF_LD | BPF_W | BPF_ABS, 16),
	JUMP(BPF_JMP | BPF_JEQ | BPF_K, 7, 1, 0),
	STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	STMT(BPF_LD | BPF_W | BPF_ABS, 0),
	JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getppid, 0, 1),
	STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 1),
	STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};
static const struct sock_filter errno2_getppid7[] = {
	STMT(BPF_LD | BPF_W | BPF_ABS, 16),
	JUMP(BPF_JMP | BPF_JEQ | BPF_K, 7, 1, 0),
	STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	STMT(BPF_LD | BPF_W | BPF_ABS, 0),
	JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getppid, 0, 1),
	STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 2),
	STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};
/* Counted: getppid at 2, getuid at 4, the rest at 5 (identical rets,
 * which counting keeps apart). */
static const struct sock_filter two_rules[] = {
	STMT(BPF_LD | BPF_W | BPF_ABS, 0),
	JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getppid, 0, 1),
	STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getuid, 0, 1),
	STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

/* A process that makes calls on command: 'p' getppid(0), 's' getppid(7),
 * 'u' getuid, 'e' getppid(7) whatever it returns (a denied call: EPERM on
 * the lsm tier, logged and run with --fallback log on the tracepoint
 * tier); it answers each with 'y' when getppid returned its parent (the
 * enforced ALLOW or LOG held) or need not, 'n' otherwise. */
struct victim { pid_t pid; int go, rep; };

static bool victim_start(struct victim *v)
{
	int go[2], rep[2];
	pid_t parent = getpid();
	char c;

	/* Close-on-exec: a daemon started later (a restart) must not hold
	 * the ends that tell the victim to exit. */
	if (pipe2(go, O_CLOEXEC) || pipe2(rep, O_CLOEXEC))
		return false;
	fflush(stdout);
	v->pid = fork();
	if (v->pid < 0)
		return false;
	if (v->pid == 0) {
		close(go[1]);
		close(rep[0]);
		while (read(go[0], &c, 1) == 1) {
			long r = c == 'u' ? (long)syscall(SYS_getuid) :
				 (long)syscall(SYS_getppid, c == 's' || c == 'e' ? 7 : 0);
			bool ok = c == 'u' || c == 'e' || r == parent;

			if (write(rep[1], ok ? "y" : "n", 1) != 1)
				_exit(98);
		}
		_exit(0);
	}
	close(go[0]);
	close(rep[1]);
	v->go = go[1];
	v->rep = rep[0];
	return true;
}

/* n calls of cmd; true when every one kept the enforced verdict. */
static bool victim_calls(struct victim *v, char cmd, int n)
{
	char c;
	int i;

	for (i = 0; i < n; i++)
		if (write(v->go, &cmd, 1) != 1 || read(v->rep, &c, 1) != 1 || c != 'y')
			return false;
	return true;
}

/* Ends the victim; true when it exited 0 (it lived through every call). */
static bool victim_end(struct victim *v)
{
	int status;

	close(v->go);
	close(v->rep);
	if (waitpid(v->pid, &status, 0) != v->pid)
		return false;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

struct admin { char sfctl[PATH_MAX]; char out[65536]; };

/* sfctl --socket SOCK ARGS... (at most 8), its stdout and stderr into
 * a->out; its exit code, or -1. */
static int sfctl(struct admin *a, const struct sfd *dm, const char *const args[])
{
	const char *argv[12] = { a->sfctl, "--socket", dm->sock };
	int i, st;

	for (i = 0; args[i] && i < 8; i++)
		argv[3 + i] = args[i];
	st = sfd_run(argv, true, 30, a->out, sizeof(a->out));
	test_log("sfctl %s %s -> %d: %s", args[0], args[1] ? args[1] : "", st, a->out);
	return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static const char *const per_call[] = { "--repeat-interval", "0", NULL };

static bool start_admin(struct sfd *dm, struct admin *a, bool pin)
{
	if (!test_need_root(NULL))
		return false;
	if (!sfd_find_bin("sfctl", "SF_SFCTL", a->sfctl, sizeof(a->sfctl)) ||
	    !sfd_find_bin("sfilterd", "SF_SFILTERD", dm->bin, sizeof(dm->bin))) {
		test_skip("no sfctl or sfilterd beside the test runner");
		return false;
	}
	/* An event per call: what each call's shadow event says is under
	 * test, and a folded event's repeats have no arguments of their own
	 * (tests/test_event_fold.c tests the folding). */
	dm->args = per_call;
	return sfd_start(dm, pin);
}

/* sfctl attach --pid pid of f (saved under the daemon's directory as
 * name), with one extra option (or NULL); true when sfctl succeeded. */
static bool attach(struct sfd *dm, struct admin *a, pid_t pid, const char *name,
		   const struct sock_filter *f, size_t len, const char *extra)
{
	char file[256], spid[16];
	const char *args[] = { "attach", "--pid", spid, "--filter", file, extra, NULL };

	snprintf(file, sizeof(file), "%s/%s.bpf", dm->dir, name);
	snprintf(spid, sizeof(spid), "%d", pid);
	if (!ASSERT_OK(c2e_save_raw(file, f, len), "save filter"))
		return false;
	return ASSERT_EQ(sfctl(a, dm, args), 0, name);
}

/* Event lines of the daemon's log with every needle. */
static int log_count(const struct sfd *dm, const char *n1, const char *n2)
{
	FILE *f = fopen(dm->log, "r");
	char *line = NULL;
	size_t cap = 0;
	int n = 0;

	if (!f)
		return -1;
	while (getline(&line, &cap, f) > 0)
		if (strstr(line, n1) && (!n2 || strstr(line, n2)))
			n++;
	free(line);
	fclose(f);
	return n;
}

/* Waits until the log has want such lines (events reach it a little
 * later than the calls), then a little more for any extra one. */
static int log_wait_count(const struct sfd *dm, const char *n1, const char *n2, int want)
{
	int i, tries = test_is_emulated() ? 300 : 50;

	for (i = 0; i < tries && log_count(dm, n1, n2) < want; i++)
		usleep(100000);
	usleep(200000);
	return log_count(dm, n1, n2);
}

TEST(shadow_candidate_that_denies_logs_each_call_and_changes_nothing)
{
	struct admin *a = calloc(1, sizeof(*a));
	struct victim v;
	char pidkey[32];
	int n = 5;
	SFD_AUTO;

	if (!a || !start_admin(&dm, a, false) || !ASSERT_TRUE(victim_start(&v), "victim"))
		goto out;
	if (!attach(&dm, a, v.pid, "allow", allow_all, LEN(allow_all), NULL) ||
	    !attach(&dm, a, v.pid, "candidate", deny_getppid, LEN(deny_getppid), "--shadow") ||
	    !ASSERT_TRUE(strstr(a->out, "shadow") != NULL, "the attach says shadow")) {
		victim_end(&v);
		goto out;
	}
	ASSERT_TRUE(victim_calls(&v, 'p', n), "getppid still returns the parent");
	ASSERT_TRUE(victim_calls(&v, 'u', 3), "getuid runs");
	ASSERT_TRUE(victim_end(&v), "the task lives");
	snprintf(pidkey, sizeof(pidkey), "\"pid\":%d,", v.pid);
	ASSERT_EQ(log_wait_count(&dm, pidkey, "\"taken\":\"shadow\"", n), n,
		  "one shadow event per getppid call, none for getuid");
	ASSERT_EQ(log_count(&dm, pidkey, "\"taken\":\"shadow\",\"tier\""), n,
		  "events are JSON with the fields in order");
	ASSERT_EQ(log_count(&dm, "\"syscall\":\"getppid\"", "\"would\":\"ERRNO(1)\",\"insn\":2,"
			    "\"enforced\":\"ALLOW\""), n,
		  "each names the candidate's verdict, its ret at index 2 and what was enforced");
	ASSERT_EQ(log_count(&dm, pidkey, "\"taken\":\"denied\""), 0, "nothing was denied");
out:
	free(a);
}

TEST(shadow_candidate_that_agrees_logs_nothing)
{
	struct admin *a = calloc(1, sizeof(*a));
	struct victim v;
	char pidkey[32];
	SFD_AUTO;

	if (!a || !start_admin(&dm, a, false) || !ASSERT_TRUE(victim_start(&v), "victim"))
		goto out;
	if (!attach(&dm, a, v.pid, "enforced", log_getppid7, LEN(log_getppid7), NULL) ||
	    !attach(&dm, a, v.pid, "candidate", log_getppid7_again, LEN(log_getppid7_again),
		    "--shadow")) {
		victim_end(&v);
		goto out;
	}
	ASSERT_TRUE(victim_calls(&v, 'p', 4), "getppid(0): both ALLOW");
	ASSERT_TRUE(victim_calls(&v, 's', 3), "getppid(7): both LOG");
	ASSERT_TRUE(victim_end(&v), "the task lives");
	snprintf(pidkey, sizeof(pidkey), "\"pid\":%d,", v.pid);
	ASSERT_EQ(log_wait_count(&dm, pidkey, "\"taken\":\"logged\"", 3), 3,
		  "the enforced LOGs (the chain ran)");
	ASSERT_EQ(log_count(&dm, pidkey, "\"taken\":\"shadow\""), 0,
		  "no shadow event where the candidate agrees");
out:
	free(a);
}

/* Same action, other errno: a difference; same errno: none. Both
 * candidates beside the same enforced filter, each on a task of its own. */
TEST(shadow_compares_the_errno_too)
{
	struct admin *a = calloc(1, sizeof(*a));
	struct victim v, w;
	char pidkey[32];
	SFD_AUTO;

	if (!a || !start_admin(&dm, a, false) || !ASSERT_TRUE(victim_start(&v), "victim") ||
	    !ASSERT_TRUE(victim_start(&w), "victim w"))
		goto out;
	if (!attach(&dm, a, v.pid, "enforced", errno_getppid7, LEN(errno_getppid7),
		    "--fallback=log") ||
	    !attach(&dm, a, v.pid, "other-errno", errno2_getppid7, LEN(errno2_getppid7),
		    "--shadow") ||
	    !attach(&dm, a, w.pid, "enforced", errno_getppid7, LEN(errno_getppid7),
		    "--fallback=log") ||
	    !attach(&dm, a, w.pid, "same-errno", errno_getppid7_again,
		    LEN(errno_getppid7_again), "--shadow")) {
		victim_end(&w);
		victim_end(&v);
		goto out;
	}
	ASSERT_TRUE(victim_calls(&v, 'e', 3) && victim_calls(&v, 'p', 2), "v's calls");
	ASSERT_TRUE(victim_calls(&w, 'e', 3) && victim_calls(&w, 'p', 2), "w's calls");
	/* w, forked later, holds v's pipe ends too: it ends first. */
	ASSERT_TRUE(victim_end(&w) && victim_end(&v), "both live");
	snprintf(pidkey, sizeof(pidkey), "\"pid\":%d,", v.pid);
	ASSERT_EQ(log_wait_count(&dm, pidkey, "\"taken\":\"shadow\"", 3), 3,
		  "ERRNO(2) where ERRNO(1) is enforced: an event per call");
	ASSERT_EQ(log_count(&dm, pidkey, "\"would\":\"ERRNO(2)\",\"insn\":5,"
			    "\"enforced\":\"ERRNO(1)\""), 3, "naming both errnos and the ret");
	snprintf(pidkey, sizeof(pidkey), "\"pid\":%d,", w.pid);
	ASSERT_EQ(log_count(&dm, pidkey, "\"taken\":\"shadow\""), 0,
		  "the same errno: no event");
out:
	free(a);
}

/* The count `sfctl --json show --hits` gives ret insn of the first filter. */
static int64_t hits_at(struct json_object *show, int insn)
{
	struct json_object *filters, *f, *rets, *r, *v;
	size_t i;

	if (!json_object_object_get_ex(show, "filters", &filters) ||
	    !(f = json_object_array_get_idx(filters, 0)) ||
	    !json_object_object_get_ex(f, "rets", &rets))
		return -1;
	for (i = 0; i < json_object_array_length(rets); i++) {
		r = json_object_array_get_idx(rets, i);
		if (json_object_object_get_ex(r, "insn", &v) && json_object_get_int(v) == insn &&
		    json_object_object_get_ex(r, "count", &v))
			return json_object_get_int64(v);
	}
	return -1;
}

/* K getppid and M getuid calls under a counted filter, then show --hits;
 * restart: the daemon is SIGKILLed between the two and a new one adopts
 * its pins (the counters and which filter has which go on). */
static void count_and_show(bool restart)
{
	struct admin *a = calloc(1, sizeof(*a));
	char spid[16];
	const char *json_args[] = { "--json", "show", spid, "--hits", NULL };
	struct json_object *o = NULL;
	struct victim v;
	int k = 7, m = 5;
	SFD_AUTO;

	if (!a || !start_admin(&dm, a, restart) || !ASSERT_TRUE(victim_start(&v), "victim"))
		goto out;
	if (!attach(&dm, a, v.pid, "counted", two_rules, LEN(two_rules), "--count")) {
		victim_end(&v);
		goto out;
	}
	ASSERT_TRUE(victim_calls(&v, 'p', k), "getppid");
	if (restart) {
		sfd_signal(&dm, SIGKILL);
		ASSERT_TRUE(sfd_restart(&dm), "a new daemon adopts the pins");
	}
	ASSERT_TRUE(victim_calls(&v, 'u', m), "getuid");
	snprintf(spid, sizeof(spid), "%d", v.pid);
	ASSERT_EQ(sfctl(a, &dm, json_args), 0, "sfctl --json show --hits");
	o = json_tokener_parse(a->out);
	if (ASSERT_OK_PTR(o, "show --json parses")) {
		ASSERT_EQ(hits_at(o, 2), k, "getppid's ret: K hits");
		ASSERT_EQ(hits_at(o, 4), m, "getuid's ret: M hits");
		ASSERT_GE(hits_at(o, 5), 0, "the default ret is listed");
	}
	ASSERT_EQ(sfctl(a, &dm, json_args + 1), 0, "sfctl show --hits (text)");
	ASSERT_TRUE(strstr(a->out, "hits per rule") != NULL, "text lists the hits");
	ASSERT_TRUE(victim_end(&v), "the task lives");
out:
	json_object_put(o);
	free(a);
}

TEST(count_shows_how_often_each_rule_decided)
{
	count_and_show(false);
}

TEST(count_goes_on_across_a_daemon_restart)
{
	count_and_show(true);
}
