// SPDX-License-Identifier: GPL-2.0-only
/*
 * Bypass attempts through the event path.
 *
 * LOG flood: uid 65534 attaches a filter of its own that logs every call
 * and, in a loop, as fast as it can, for the whole case, calls syscall
 * numbers that do not exist, a different one each time (100,000 of them
 * in turn): a process's repeats of one call fold into one event a second
 * (sfilterd --repeat-interval), so a flooder that means it makes every
 * call a key of its own. Meanwhile
 * uid 65533, confined by a filter that kills on getppid, has a child make
 * that call, again and again (every fourth child a control that makes an
 * allowed call only and must live), and root asks for STATUS over and
 * over. One iteration: one such child. Beside escapes and wrongful kills
 * (the flooder itself makes allowed calls only: it must live too), the
 * case asserts what the flood must not take from the others: every kill
 * of uid 65533 is in the log, root's STATUS is answered within the bounds
 * of tests/test_daemon_dos.c (p99 100 ms, 2 s emulated), and the flooder's
 * lines in the log stay within its budget (sfilterd(8) --event-rate,
 * --event-burst).
 *
 * Pid reuse in policy-from-log: a job of uid 65533 runs under a filter
 * that logs every call, makes a few calls and exits; its pid is then
 * taken (clone3 with set_tid, so that it surely is) by a process of
 * uid 65534 that logs ptrace, mount, kexec_load and bpf. An admin learns
 * a policy for the job's pid from the daemon's log (`sfctl
 * policy-from-log --pid P`; refused, the log holding two processes for
 * it, then picked by the job's uid), and every other iteration a control
 * where the pid is not reused learns from the pid alone. Two tasks then
 * run under the learned policy: one makes the job's calls and must live
 * (a wrongful kill otherwise), one makes them and then one of the
 * newcomer's calls, which must kill it (an escape otherwise).
 */
#define _GNU_SOURCE
#include "harness.h"
#include "latency.h"
#include "bypass.h"
#include "daemon.h"
#include "progs.h"
#include "sfclient.h"
#include "proto.h"
#include "wstatus.h"

#include "c2e.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/sched.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

SFD_TIER_INDEPENDENT

#define FLOODER_UID 65534
#define VICTIM_UID  65533
#define JOB_UID     65533
#define NEWCOMER_UID 65534

/* sfilterd's defaults (sfilterd(8)): what the flooder's lines are held
 * to when STATUS does not say (a daemon without budgets says nothing). */
#define DEFAULT_EVENT_RATE  1000
#define DEFAULT_EVENT_BURST 5000

static bool become(uid_t uid)
{
	return setgroups(0, NULL) == 0 && setgid(uid) == 0 && setuid(uid) == 0;
}

static double p99_bound_ms(void)
{
	return test_is_emulated() ? 2000 : 100;
}

/* ---- LOG flood ---------------------------------------------------------- */

#define MAX_KIDS 1000

struct flood_board {
	volatile int flooding;   /* the flooder's filter is on, it loops */
	volatile int stop;       /* the flooder exits */
	volatile int victim_ready;
	volatile int victim_done;
	volatile int victim_err; /* the victim's set-up failed at this step */
	struct bp_flags f[MAX_KIDS];
	volatile pid_t kid[MAX_KIDS];
	volatile int status[MAX_KIDS];
	volatile int n;
};

static struct flood_board *F;

/* uid 65534: logs every call, and makes calls of numbers no syscall has,
 * each a key of its own for the kernel's folding, until told to stop. */
static void flooder(void)
{
	static struct sock_filter log_all[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_LOG) };
	struct sock_fprog prog = { .len = 1, .filter = log_all };
	long i = 0;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (!become(FLOODER_UID) || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    sf_attach(&prog, 0))
		_exit(1);
	F->flooding = 1;
	while (!F->stop)
		syscall(100000 + (i++ % 100000));
	_exit(0);
}

/* uid 65533, confined by a kill on getppid: n children, each makes the
 * denied call (every fourth an allowed one only), one at a time. */
static void victim(int n)
{
	static struct sock_filter kill_getppid[4];
	struct sock_fprog prog = progs_kill_on(kill_getppid, 4, SYS_getppid);
	int i;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (!become(VICTIM_UID) || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		F->victim_err = 1;
		_exit(1);
	}
	if (sf_attach(&prog, 0)) {
		F->victim_err = 2;
		_exit(1);
	}
	F->victim_ready = 1;
	for (i = 0; i < n; i++) {
		int st = -1;
		pid_t c = fork();

		if (c == 0) {
			F->f[i].reached = 1;
			if (i % 4 == 3)
				bp_allowed_call();
			else
				bp_denied_call();
			F->f[i].survived = 1;
			_exit(0);
		}
		if (c < 0) {
			F->victim_err = 3;
			break;
		}
		F->kid[i] = c;
		waitpid(c, &st, 0);
		F->status[i] = st;
		F->n = i + 1;
	}
	F->victim_done = 1;
	_exit(0);
}

static pid_t fork_run(void (*fn)(void))
{
	pid_t p;

	fflush(stdout);
	p = fork();
	if (p == 0)
		fn();
	return p;
}

static int victim_n;
static void victim_main(void) { victim(victim_n); }

static off_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : st.st_size;
}

static void ignore_reply(void *ctx, const struct sf_reply *r, const char *text)
{
	(void)ctx;
	(void)r;
	(void)text;
}

/* An admin's STATUS on a fresh connection, hello included: its time in
 * ms, or -1 when it failed. */
static double status_ms(const char *sock)
{
	struct sf_msg_hdr h;
	double t0 = test_now_ms();

	if (sfd_request(sock, &h, SF_MSG_STATUS, sizeof(h), ignore_reply, NULL) != 0)
		return -1;
	return test_now_ms() - t0;
}

/* A number after key in text ("key":N), or dflt. */
static long long json_num(const char *text, const char *key, long long dflt)
{
	char k[64];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\":", key);
	p = strstr(text, k);
	return p ? strtoll(p + strlen(k), NULL, 10) : dflt;
}

/* What the log says after the flood, from its byte `from` on. */
struct log_count {
	long flooder_lines;    /* events of the flooder's uid */
	long drop_lines;       /* the daemon's lines on its dropped events */
	long other_lines;
	long bytes;
	bool *killed;          /* per victim child: its kill is logged */
};

static void count_log(const char *path, off_t from, struct log_count *c)
{
	char needle_f[32], needle_v[32], *line = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *f = fopen(path, "r");
	int i;

	if (!f || fseeko(f, from, SEEK_SET)) {
		if (f)
			fclose(f);
		return;
	}
	snprintf(needle_f, sizeof(needle_f), "\"uid\":%d,", FLOODER_UID);
	snprintf(needle_v, sizeof(needle_v), "\"uid\":%d,", VICTIM_UID);
	while ((n = getline(&line, &cap, f)) > 0) {
		c->bytes += n;
		if (strstr(line, "\"sfilterd\":\"events_dropped\"")) {
			c->drop_lines++;
		} else if (strstr(line, needle_f)) {
			c->flooder_lines++;
		} else if (strstr(line, needle_v) && strstr(line, "\"taken\":\"killed\"")) {
			long pid = json_num(line, "pid", -1);

			for (i = 0; i < F->n; i++)
				if (F->kid[i] == pid)
					c->killed[i] = true;
		} else {
			c->other_lines++;
		}
	}
	free(line);
	fclose(f);
}

TEST(bypass_a_log_flood_by_one_user_loses_no_other_users_kill_and_stalls_no_one)
{
	long n = bp_iterations(1000, 40), tries = test_is_emulated() ? 20 : 100, i, lost = 0;
	long rate = DEFAULT_EVENT_RATE, burst = DEFAULT_EVENT_BURST, bound;
	static double ms[100];
	struct log_count lc = { 0 };
	char *stx = calloc(1, SF_PROTO_MAX_MSG);
	struct bp_tally t = { 0 };
	pid_t fl = -1, vi = -1;
	char what[96];
	double t0 = bp_now(), flood_start, flood_s;
	off_t log_at;
	int st, k = 0;
	SFD_AUTO;

	F = bp_shared(sizeof(*F));
	lc.killed = calloc(MAX_KIDS, sizeof(bool));
	if (!F || !stx || !lc.killed || !sfd_start_for_users(&dm, NULL))
		goto out;
	if (sfd_status(&dm, stx) == 0 && strstr(stx, "\"event_budget\"")) {
		rate = json_num(strstr(stx, "\"event_budget\""), "rate", rate);
		burst = json_num(strstr(stx, "\"event_budget\""), "burst", burst);
	}
	test_log("event budget: %ld a second, %ld at once\n", rate, burst);

	/* The flood, on before anything else is measured. */
	fl = fork_run(flooder);
	if (!ASSERT_TRUE(fl > 0 && bp_spin_until(&F->flooding, 1, 10), "the flooder floods"))
		goto out;
	flood_start = bp_now();
	usleep(200000);
	log_at = file_size(dm.log);

	for (k = 0; k < tries; k++) {
		ms[k] = status_ms(dm.sock);
		if (!ASSERT_TRUE(ms[k] >= 0, "root's STATUS is answered during the flood"))
			break;
	}
	victim_n = (int)n;
	vi = fork_run(victim_main);
	if (!ASSERT_TRUE(vi > 0 && bp_spin_until(&F->victim_ready, 1, 30),
			 "uid 65533 is confined"))
		goto out;
	if (!ASSERT_TRUE(bp_spin_until(&F->victim_done, 1, test_is_emulated() ? 600 : 120),
			 "uid 65533's children are done"))
		goto out;
	F->stop = 1;
	st = bp_wait(fl, 10);
	fl = -1;
	flood_s = bp_now() - flood_start;
	bp_count(&t, bp_judge_allowed(st), st, "the flooder (uid 65534, LOG only)");
	ASSERT_EQ(F->victim_err, 0, "uid 65533's set-up");
	for (i = 0; i < F->n; i++) {
		snprintf(what, sizeof(what), "uid 65533's child %ld", i);
		bp_count(&t, i % 4 == 3 ? bp_judge_allowed(F->status[i]) :
			 bp_judge_denied(F->status[i], &F->f[i]), F->status[i], what);
	}
	if (k == tries) {
		lat_sort(ms, k);
		test_log("STATUS (root) during the flood, %d tries: p50 %.1f ms, p99 %.1f ms, "
			 "max %.1f ms (%s)\n", k, ms[k / 2], ms[(99 * k + 99) / 100 - 1], ms[k - 1],
			 test_kernel_name());
		ASSERT_TRUE(ms[(99 * k + 99) / 100 - 1] <= p99_bound_ms(),
			    "STATUS during the flood: p99 within the bound");
	}

	/* Every kill of uid 65533 reaches the log; the flooder, its budget. */
	for (i = 0; i < (test_is_emulated() ? 300 : 50); i++) {
		memset(&lc, 0, offsetof(struct log_count, killed));
		memset(lc.killed, 0, MAX_KIDS * sizeof(bool));
		count_log(dm.log, log_at, &lc);
		for (lost = 0, k = 0; k < F->n; k++)
			lost += k % 4 != 3 && !lc.killed[k];
		if (!lost)
			break;
		usleep(100000);
	}
	test_log("flood of %.1f s: log +%ld bytes: %ld lines of uid %d, %ld drop lines, "
		 "%ld others; %ld of uid %d's kills not logged\n", flood_s, lc.bytes,
		 lc.flooder_lines, FLOODER_UID, lc.drop_lines, lc.other_lines, lost, VICTIM_UID);
	ASSERT_EQ(lost, 0, "every kill of uid 65533 is in the log");
	bound = burst + (long)(rate * (flood_s + 1)) + 256;
	ASSERT_TRUE(lc.flooder_lines <= bound, "the flooder's lines stay within its budget");
	ASSERT_TRUE(lc.bytes <= (bound + n + 256) * 1024, "the log grows by a bounded amount");

	/* What the flooder lost is counted, for it alone, and said. */
	snprintf(what, sizeof(what), "{\"sfilterd\":\"events_dropped\",\"uid\":%d,", FLOODER_UID);
	ASSERT_TRUE(sfd_log_wait(&dm, what), "the log says how many events of uid 65534 were lost");
	if (ASSERT_EQ(sfd_status(&dm, stx), 0, "STATUS after the flood")) {
		const char *by = strstr(stx, "\"events_dropped_by_uid\"");

		test_log("STATUS %.300s\n", by ? by : "(no events_dropped_by_uid)");
		ASSERT_TRUE(sfd_status_drops(stx, FLOODER_UID, "budget") > 0,
			    "STATUS: uid 65534 lost events over its budget");
		ASSERT_EQ(sfd_status_drops(stx, FLOODER_UID, "enforced"), 0,
			  "none of them a denial or kill");
		ASSERT_EQ(sfd_status_drops(stx, VICTIM_UID, "budget"), -1,
			  "STATUS: uid 65533 lost none");
	}
out:
	if (F)
		F->stop = 1;
	if (fl > 0) {
		kill(fl, SIGKILL);
		waitpid(fl, NULL, 0);
	}
	if (vi > 0) {
		kill(vi, SIGKILL);
		waitpid(vi, NULL, 0);
	}
	if (t.iterations)
		bp_report("log-flood", "a child of uid 65533 killed on its denied call (or "
			  "living on allowed ones) while uid 65534 floods LOG events", &t,
			  bp_now() - t0);
	free(lc.killed);
	free(stx);
}

/* ---- pid reuse in policy-from-log ----------------------------------------- */

struct reuse_board {
	struct bp_flags f;
	volatile int err;        /* a step of a child's set-up failed */
};

static struct reuse_board *R;
static struct sock_filter log_all_f[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_LOG) };
static const struct sock_fprog log_all = { 1, log_all_f };
static struct sock_fprog learned;       /* what the probers run under */
static int newcomer_call;                /* the newcomer's call a prober makes */

/* The calls the job makes under its logging filter, and a prober under
 * the learned one. */
static void job_calls(void)
{
	syscall(SYS_getpid);
	syscall(SYS_getuid);
	syscall(SYS_getgid);
}

/* The newcomer's calls: logged, and refused by the kernel anyway. */
static const int newcomer_calls[] = { SYS_ptrace, SYS_mount, SYS_kexec_load, SYS_bpf };

static void confine(uid_t uid, const struct sock_fprog *prog)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (!become(uid) || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		R->err = 1;
		_exit(1);
	}
	if (sf_attach(prog, 0)) {
		R->err = 2 + errno;
		_exit(1);
	}
}

static void job(void)
{
	confine(JOB_UID, &log_all);
	job_calls();
	syscall(SYS_exit_group, 0);
}

static void newcomer(void)
{
	size_t i;

	confine(NEWCOMER_UID, &log_all);
	for (i = 0; i < sizeof(newcomer_calls) / sizeof(newcomer_calls[0]); i++)
		syscall(newcomer_calls[i], 0, 0, 0, 0, 0, 0);
	syscall(SYS_exit_group, 0);
}

/* Under the learned policy: the job's calls, then (denied) one of the
 * newcomer's. */
static void prober(bool denied)
{
	confine(JOB_UID, &learned);
	job_calls();
	if (denied) {
		R->f.reached = 1;
		syscall(newcomer_call, 0, 0, 0, 0, 0, 0);
		R->f.survived = 1;
	}
	syscall(SYS_exit_group, 0);
}

static void prober_denied(void) { prober(true); }
static void prober_allowed(void) { prober(false); }

/* A child with pid want (fork-like clone3 with set_tid): its pid, or
 * -errno. */
static pid_t spawn_at(pid_t want, void (*fn)(void))
{
	pid_t tid = want;
	struct clone_args a = {
		.exit_signal = SIGCHLD,
		.set_tid = (uint64_t)(uintptr_t)&tid, .set_tid_size = 1,
	};

	fflush(stdout);
	return (pid_t)bp_clone3_run(&a, sizeof(a), fn);
}

/* Whether a line of the log from byte `from` on holds all three. */
static bool log_has(const char *path, off_t from, const char *a, const char *b, const char *c)
{
	char *line = NULL;
	size_t cap = 0;
	bool found = false;
	FILE *f = fopen(path, "r");

	if (f && fseeko(f, from, SEEK_SET) == 0)
		while (!found && getline(&line, &cap, f) > 0)
			found = strstr(line, a) && strstr(line, b) && strstr(line, c);
	free(line);
	if (f)
		fclose(f);
	return found;
}

static bool log_wait(const char *path, off_t from, const char *a, const char *b, const char *c)
{
	int i;

	for (i = 0; i < (test_is_emulated() ? 15000 : 2500); i++) {
		if (log_has(path, from, a, b, c))
			return true;
		usleep(2000);
	}
	return false;
}

/* sfctl policy-from-log --pid pid [--uid uid] -o prefix: its exit code
 * (-1: it did not exit), what it said in out. */
static int learn(const char *sfctl, const char *sock, pid_t pid, long uid, const char *prefix,
		 char *out, size_t size)
{
	char spid[16], suid[16];
	const char *argv[12] = { sfctl, "--socket", sock, "policy-from-log", "--pid", spid,
				 "-o", prefix };
	int n = 8, st;

	snprintf(spid, sizeof(spid), "%d", (int)pid);
	if (uid >= 0) {
		snprintf(suid, sizeof(suid), "%ld", uid);
		argv[n++] = "--uid";
		argv[n++] = suid;
	}
	argv[n] = NULL;
	st = sfd_run(argv, true, test_is_emulated() ? 120 : 20, out, size);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Runs fn in a child, judged as a denied (or allowed) call's task. */
static void probe(void (*fn)(void), bool denied, struct bp_tally *t, const char *what)
{
	pid_t p;
	int st;

	memset((void *)R, 0, sizeof(*R));
	p = fork_run(fn);
	st = p > 0 ? bp_wait(p, 10) : -1;
	if (R->err) {
		test_fail(__FILE__, __LINE__, "%s: set-up step %d", what, R->err);
		return;
	}
	bp_count(t, denied ? bp_judge_denied(st, &R->f) : bp_judge_allowed(st), st, what);
}

/* One iteration: 1 done, 0 the pid went to another process first (not
 * counted), -1 the test cannot go on. */
static int one_learning(struct sfd *dm, const char *sfctl, bool reuse, int i,
			struct bp_tally *t)
{
	char prefix[PATH_MAX], bpf[PATH_MAX + 8], out[4096], what[96], needle[32];
	struct sock_filter *insns = NULL;
	struct c2e_error err;
	off_t from = file_size(dm->log);
	pid_t pid, who;
	size_t n;
	int rc, st;

	memset((void *)R, 0, sizeof(*R));
	pid = fork_run(job);
	st = pid > 0 ? bp_wait(pid, 10) : -1;
	if (!ASSERT_TRUE(wstatus_exited_ok(st) && !R->err, "the job ran"))
		return -1;
	snprintf(needle, sizeof(needle), "\"pid\":%d,", (int)pid);
	if (!ASSERT_TRUE(log_wait(dm->log, from, needle, "\"syscall\":\"exit_group\"",
				  "\"uid\":65533,"), "the job's calls are in the log"))
		return -1;
	if (reuse) {
		who = spawn_at(pid, newcomer);
		if (who == -EEXIST)
			return 0;
		st = who > 0 ? bp_wait(who, 10) : -1;
		if (!ASSERT_EQ(who, pid, "the newcomer has the job's pid") ||
		    !ASSERT_TRUE(wstatus_exited_ok(st) && !R->err, "the newcomer ran") ||
		    !ASSERT_TRUE(log_wait(dm->log, from, needle, "\"syscall\":\"exit_group\"",
					  "\"uid\":65534,"), "the newcomer's calls are in the log"))
			return -1;
	}
	snprintf(prefix, sizeof(prefix), "%s/learned", dm->dir);
	snprintf(bpf, sizeof(bpf), "%s.bpf", prefix);
	unlink(bpf);
	rc = learn(sfctl, dm->sock, pid, -1, prefix, out, sizeof(out));
	if (reuse && rc == 1) {
		/* Refused: it names both, and learns once picked by uid. */
		if (!ASSERT_TRUE(strstr(out, "uid 65533") && strstr(out, "uid 65534"),
				 "the refusal lists both processes"))
			test_log("%s", out);
		rc = learn(sfctl, dm->sock, pid, JOB_UID, prefix, out, sizeof(out));
	}
	if (!ASSERT_EQ(rc, 0, reuse ? "policy-from-log --pid P --uid 65533" :
		       "policy-from-log --pid P")) {
		test_log("%s", out);
		return -1;
	}
	memset(&err, 0, sizeof(err));
	if (!ASSERT_OK(c2e_load_file(bpf, &insns, &n, &err), "the learned policy"))
		return -1;
	learned = (struct sock_fprog){ (unsigned short)n, insns };
	newcomer_call = newcomer_calls[i % 4];
	snprintf(what, sizeof(what), "iteration %d (%s): the job's calls", i,
		 reuse ? "pid reused" : "control");
	probe(prober_allowed, false, t, what);
	snprintf(what, sizeof(what), "iteration %d (%s): the job's calls, then syscall %d", i,
		 reuse ? "pid reused" : "control", newcomer_call);
	probe(prober_denied, true, t, what);
	free(insns);
	return test_failed() ? -1 : 1;
}

TEST(bypass_a_policy_learned_by_pid_never_allows_what_a_process_that_reused_the_pid_called)
{
	static const char *const args[] = { "--max-attach-rate", "0", NULL };
	long i, n = bp_iterations(500, 15), lost = 0;
	struct bp_tally t = { 0 };
	char sfctl[PATH_MAX];
	double t0 = bp_now();
	pid_t r;
	int one;
	SFD_AUTO;

	R = bp_shared(sizeof(*R));
	if (!R || !sfd_start_for_users(&dm, args))
		return;
	if (!sfd_need_bin("sfctl", "SF_SFCTL", sfctl, sizeof(sfctl)))
		return;
	/* Whether this kernel lets us choose a pid at all. */
	r = spawn_at(getpid(), job);
	if (r != -EEXIST) {
		if (r > 0) {
			kill(r, SIGKILL);
			waitpid(r, NULL, 0);
		}
		test_skip("clone3 with set_tid: %s", r > 0 ? "gave a pid in use" : strerror(-r));
		return;
	}
	for (i = 0; i < n && lost < 100; ) {
		one = one_learning(&dm, sfctl, i % 2 == 0, (int)i, &t);
		if (one < 0)
			break;
		lost += one == 0;
		i += one;
	}
	test_log("%ld attempts lost the pid to another process\n", lost);
	bp_report("policy-pid-reuse", "a task under a policy learned by pid (after the pid was "
		  "reused, or not), making the job's calls or a newcomer's", &t, bp_now() - t0);
}
