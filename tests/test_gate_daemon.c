// SPDX-License-Identifier: GPL-2.0-only
/*
 * sfilterd as the gate's judge: a task whose gate (a kernel seccomp filter
 * with a listener held by the daemon) sends up the calls its chain does
 * not allow gets the kernel's own answer for each action, and the call
 * never runs, on any tier. The table is libseccomp's shape: one action,
 * the call (mkdir, whose side effect is a directory), what the caller
 * sees, and whether the directory may exist afterwards.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "latency.h"
#include "daemon.h"
#include "gatehand.h"
#include "proto.h"
#include "sfclient.h"

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum outcome { RETURNS, FAILS, KILLED, TRAPPED };

static const struct row {
	const char *name;
	uint32_t ret;
	enum outcome out;
	long want;      /* RETURNS: the value; FAILS: errno; TRAPPED: si_errno */
	bool lands;     /* the directory exists afterwards */
} rows[] = {
	{ "ERRNO(EACCES)", SECCOMP_RET_ERRNO | EACCES, FAILS, EACCES, false },
	{ "ERRNO(5000) is capped", SECCOMP_RET_ERRNO | 5000, FAILS, 4095, false },
	{ "ERRNO(0)", SECCOMP_RET_ERRNO | 0, RETURNS, 0, false },
	{ "TRACE(3)", SECCOMP_RET_TRACE | 3, FAILS, ENOSYS, false },
	{ "USER_NOTIF", SECCOMP_RET_USER_NOTIF, FAILS, ENOSYS, false },
	{ "TRAP(7)", SECCOMP_RET_TRAP | 7, TRAPPED, 7, false },
	{ "KILL_PROCESS", SECCOMP_RET_KILL_PROCESS, KILLED, 0, false },
	{ "KILL_THREAD", SECCOMP_RET_KILL_THREAD, KILLED, 0, false },
	{ "LOG", SECCOMP_RET_LOG, RETURNS, 0, true },
};

struct report {
	int stage;      /* 1 gate, 2 attach, 3 call made */
	long r;
	int err;
	int code, sysno, serrno;
	char msg[256];
};

static volatile sig_atomic_t trap_code, trap_nr, trap_errno;

static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	trap_code = si->si_code;
	trap_nr = si->si_syscall;
	trap_errno = si->si_errno;
}

/* In a child: gate and chain for "ret on mkdir", then the mkdir. */
static void child(const struct row *w, const char *agent, const char *dir, int out)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mkdir, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, w->ret),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog p = { 4, f };
	struct sigaction sa = { .sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO };
	struct report rep = { 0 };

	sigaction(SIGSYS, &sa, NULL);
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	rep.stage = 1;
	if (gatehand_install(&p, 1, agent, rep.msg, sizeof(rep.msg)) == 0) {
		rep.stage = 2;
		if (sf_attach(&p, 0) == 0) {
			snprintf(rep.msg, sizeof(rep.msg), "%s", sf_last_error());
			rep.stage = 3;
			errno = 0;
			rep.r = syscall(SYS_mkdir, dir, 0700);
			rep.err = errno;
			rep.code = trap_code;
			rep.sysno = trap_nr;
			rep.serrno = trap_errno;
		} else {
			snprintf(rep.msg, sizeof(rep.msg), "sf_attach: %s", sf_last_error());
		}
	}
	(void)!write(out, &rep, sizeof(rep));
	_exit(0);
}

TEST(a_gated_call_gets_the_kernels_answer_for_each_action_and_never_runs)
{
	SFD_AUTO;
	char agent[160], tmp[] = "/tmp/sftest-gate-XXXXXX";
	size_t i;

	if (!sfd_start_sfilterd(&dm, false))
		return;
	if (!ASSERT_OK(sf_proto_agent_path(dm.sock, agent, sizeof(agent)), "agent path") ||
	    !ASSERT_TRUE(mkdtemp(tmp) != NULL, "mkdtemp"))
		return;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *w = &rows[i];
		struct report rep = { 0 };
		char dir[128], m[512];
		int p[2], status = 0;
		bool exists;
		ssize_t n;
		pid_t pid;

		snprintf(dir, sizeof(dir), "%s/d%zu", tmp, i);
		if (!ASSERT_OK(pipe(p), "pipe"))
			break;
		pid = fork();
		if (pid == 0) {
			close(p[0]);
			child(w, agent, dir, p[1]);
		}
		close(p[1]);
		n = read(p[0], &rep, sizeof(rep));
		close(p[0]);
		waitpid(pid, &status, 0);
		exists = access(dir, F_OK) == 0;
		snprintf(m, sizeof(m), "%s: the directory %s", w->name,
			 w->lands ? "is made" : "is never made");
		ASSERT_EQ(exists, w->lands, m);
		if (w->out == KILLED) {
			snprintf(m, sizeof(m), "%s: the process is killed by SIGKILL", w->name);
			ASSERT_TRUE(n <= 0 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, m);
			continue;
		}
		snprintf(m, sizeof(m), "%s: the call was made (stage %d: %s)", w->name, rep.stage,
			 rep.msg);
		if (!ASSERT_TRUE(n == sizeof(rep) && rep.stage == 3, m))
			continue;
		snprintf(m, sizeof(m), "%s: the attach's note says the process is gated: %s",
			 w->name, rep.msg);
		ASSERT_TRUE(strstr(rep.msg, "; gated: ") != NULL, m);
		snprintf(m, sizeof(m), "%s: mkdir returns %ld, errno %d", w->name, rep.r, rep.err);
		switch (w->out) {
		case RETURNS:
			ASSERT_TRUE(rep.r == w->want, m);
			break;
		case FAILS:
			ASSERT_TRUE(rep.r == -1 && rep.err == w->want, m);
			break;
		case TRAPPED:
			ASSERT_TRUE(rep.r == SYS_mkdir, m);
			snprintf(m, sizeof(m), "%s: SIGSYS with si_syscall %d si_errno %d si_code %d",
				 w->name, rep.sysno, rep.serrno, rep.code);
			ASSERT_TRUE(rep.sysno == SYS_mkdir && rep.serrno == w->want &&
				    rep.code == SI_QUEUE, m);
			break;
		case KILLED:
			break;
		}
	}
	ASSERT_TRUE(sfd_log_wait(&dm, "\"tier\":\"gate\""), "the gate's denials are logged");
	ASSERT_TRUE(sfd_log_wait(&dm, "\"taken\":\"trapped\""), "and its traps");
	{
		char cmd[256];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
		(void)!system(cmd);
	}
}

TEST(the_agent_refuses_a_message_without_a_listener_and_a_descriptor_that_is_not_one)
{
	SFD_AUTO;
	char agent[160], answer[512];
	const char *json = "{\"ociVersion\":\"1.0.2\",\"fds\":[\"seccompFd\"],\"pid\":1}";
	int fd;

	if (!sfd_start_sfilterd(&dm, false))
		return;
	if (!ASSERT_OK(sf_proto_agent_path(dm.sock, agent, sizeof(agent)), "agent path"))
		return;
	ASSERT_OK(gatehand_send(agent, -1, json, answer, sizeof(answer)), "send without fd");
	ASSERT_TRUE(strstr(answer, "no seccomp listener came") != NULL, answer);
	fd = open("/etc/hostname", O_RDONLY | O_CLOEXEC);
	ASSERT_OK(gatehand_send(agent, fd, json, answer, sizeof(answer)), "send a file");
	ASSERT_TRUE(strstr(answer, "no seccomp listener came") != NULL, answer);
	close(fd);
	ASSERT_OK(gatehand_send(agent, -1, "not json", answer, sizeof(answer)), "send junk");
	ASSERT_TRUE(strstr(answer, "not a ContainerProcessState") != NULL, answer);
}

/* One gated process calls a refused call in a loop as fast as it can; the
 * refused calls of another, through its own listener, are still answered
 * at once: the judge takes one notification per ready listener per turn. */
#define FLOOD_THREADS 8
#define TSYNC_FLAG 0x1 /* SF_ATTACH_TSYNC */
static volatile int *flood_stop;

static void *flood_thread(void *arg)
{
	(void)arg;
	while (!*flood_stop)
		syscall(SYS_getppid);
	return NULL;
}

static void flooder(const char *agent, volatile int *stop)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog p = { 4, f };
	char msg[256];

	pthread_t t[FLOOD_THREADS];
	int i;

	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	if (gatehand_install(&p, 1, agent, msg, sizeof(msg)) || sf_attach(&p, TSYNC_FLAG))
		_exit(1);
	/* Many threads keep its listener full: a judge that served one
	 * listener until it ran dry would never get to another. */
	flood_stop = stop;
	for (i = 0; i < FLOOD_THREADS; i++)
		pthread_create(&t[i], NULL, flood_thread, NULL);
	flood_thread(NULL);
	_exit(0);
}

TEST(a_gated_process_that_floods_its_judge_delays_no_other_gated_process)
{
	SFD_AUTO;
	char agent[160], msg[256];
	volatile int *stop = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
				  -1, 0);
	double lat[200], bound = test_is_emulated() ? 2000 : 100;
	int i, n = test_is_emulated() ? 40 : 200, p[2], st;
	pid_t fl[2], me;

	if (!ASSERT_TRUE(stop != MAP_FAILED, "mmap") || !sfd_start_sfilterd(&dm, false))
		return;
	if (!ASSERT_OK(sf_proto_agent_path(dm.sock, agent, sizeof(agent)), "agent path") ||
	    !ASSERT_OK(pipe(p), "pipe"))
		return;
	for (i = 0; i < 2; i++) {
		fflush(stdout);
		fl[i] = fork();
		if (fl[i] == 0)
			flooder(agent, stop);
	}
	usleep(200 * 1000);
	fflush(stdout);
	me = fork();
	if (me == 0) {
		struct sock_filter f[] = {
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};
		struct sock_fprog q = { 4, f };

		close(p[0]);
		prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
		if (gatehand_install(&q, 1, agent, msg, sizeof(msg)) || sf_attach(&q, 0))
			_exit(1);
		for (i = 0; i < n; i++) {
			struct timespec a, b;
			double ms;
			long r;

			clock_gettime(CLOCK_MONOTONIC, &a);
			r = syscall(SYS_getppid);
			clock_gettime(CLOCK_MONOTONIC, &b);
			ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
			if (r != -1 || errno != EACCES)
				ms = -1;
			(void)!write(p[1], &ms, sizeof(ms));
		}
		_exit(0);
	}
	close(p[1]);
	for (i = 0; i < n && read(p[0], &lat[i], sizeof(lat[i])) == sizeof(lat[i]); i++)
		;
	close(p[0]);
	*stop = 1;
	waitpid(me, &st, 0);
	for (int k = 0; k < 2; k++)
		waitpid(fl[k], NULL, 0);
	if (!ASSERT_EQ(i, n, "every refused call came back"))
		return;
	lat_sort(lat, n);
	ASSERT_TRUE(lat[0] >= 0, "each with EACCES, as its chain says");
	test_log("a refused call beside two flooders: p50 %.2f ms, p99 %.2f ms (bound %.0f ms)\n",
		 lat[n / 2], lat[n * 99 / 100], bound);
	ASSERT_TRUE(lat[n * 99 / 100] < bound, "p99 within the bound");
}

/* The records file decides which calls a restarted daemon answers and
 * how: one another user made (the socket's directory may be anyone's) is
 * neither read nor written, and the daemon says so. */
TEST(the_gate_refuses_a_records_file_another_user_made)
{
	SFD_AUTO;
	char path[160];
	struct stat st;
	int fd;

	if (!test_need_root("a file of another user's"))
		return;
	if (!sfd_start_sfilterd(&dm, false) || !ASSERT_TRUE(sfd_stop(&dm), "a clean stop"))
		return;
	snprintf(path, sizeof(path), "%s.gate", dm.sock);
	unlink(path);
	fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0666);
	if (!ASSERT_GE(fd, 0, "the other user's file") || !ASSERT_OK(fchown(fd, 65534, 65534), "chown"))
		return;
	close(fd);
	if (!ASSERT_TRUE(sfd_restart(&dm), "sfilterd started on it"))
		return;
	ASSERT_OK(stat(path, &st), "stat");
	ASSERT_EQ(st.st_size, 0, "the file is left as it was");
	ASSERT_TRUE(sfd_file_has(dm.err, ".gate: Operation not permitted"), "the daemon says why");
}

/* What a listener's sender says of the process it covers is nobody's
 * word: another user who hands in a listener naming a process of root's
 * does not make that process's attach note, or PS, call it gated. */
TEST(a_listener_handed_in_for_another_users_process_marks_nothing_of_it)
{
	struct sock_filter f[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
	struct sock_fprog allow = { 1, f };
	SFD_AUTO;
	char agent[160], note[512] = "", json[512], answer[512];
	int go[2], rep[2], st;
	pid_t victim, liar;

	if (!test_need_root("two users"))
		return;
	if (!sfd_start_sfilterd(&dm, false) ||
	    !ASSERT_OK(sf_proto_agent_path(dm.sock, agent, sizeof(agent)), "agent path") ||
	    !ASSERT_OK(pipe(go), "pipe") || !ASSERT_OK(pipe(rep), "pipe"))
		return;
	fflush(stdout);
	victim = fork();
	if (victim == 0) {
		char c;

		close(go[1]);
		close(rep[0]);
		setenv("SFILTER_GATE", "0", 1);
		if (read(go[0], &c, 1) != 1 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		    sf_attach(&allow, 0))
			_exit(1);
		(void)!write(rep[1], sf_last_error(), strlen(sf_last_error()) + 1);
		pause();
		_exit(0);
	}
	close(go[0]);
	liar = fork();
	if (liar == 0) {
		int l;

		if (setgid(65534) || setuid(65534) || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
			_exit(1);
		l = gatehand_gate(&allow, 1, NULL);
		snprintf(json, sizeof(json), "{\"ociVersion\":\"1.0.2\",\"fds\":[\"seccompFd\"],"
			 "\"pid\":%d,\"metadata\":\"%s\"}", (int)victim, SF_PROTO_AGENT_SELF);
		if (l < 0 || gatehand_send(agent, l, json, answer, sizeof(answer)) ||
		    !strstr(answer, "\"error\":0"))
			_exit(2);
		/* Alive, so that its listener stays held. */
		(void)!write(rep[1], "", 1);
		pause();
		_exit(0);
	}
	close(rep[1]);
	{
		char c = 1;

		ASSERT_TRUE(read(rep[0], &c, 1) == 1 && c == 0, "the other user's listener is taken");
	}
	ASSERT_EQ(write(go[1], "g", 1), 1, "the victim attaches");
	ASSERT_TRUE(read(rep[0], note, sizeof(note) - 1) > 0, "its note");
	test_log("victim's note: %s\n", note);
	ASSERT_TRUE(strstr(note, "gated") == NULL, note);
	kill(victim, SIGKILL);
	waitpid(victim, NULL, 0);
	kill(liar, SIGKILL);
	waitpid(liar, &st, 0);
	close(go[1]);
	close(rep[0]);
}

/* A child confined by sf_attach() (ERRNO on getppid), over a USER_NOTIF
 * filter of its own first when own_listener: the kernel then takes no
 * gate for it (one listener on a stack). Tells its pid through out, then
 * waits to be killed. */
static void confined_child(bool own_listener, int out)
{
	struct sock_filter deny[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	/* Notifies a call it never makes: a listener, and nothing to answer. */
	struct sock_filter notif[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_vhangup, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog p = { 4, deny }, n = { 4, notif };
	pid_t me = getpid();

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    (own_listener &&
	     syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &n) < 0) ||
	    sf_attach(&p, 0))
		me = -1;
	(void)!write(out, &me, sizeof(me));
	pause();
	_exit(0);
}

TEST(ps_calls_a_task_gated_only_under_sfilterds_own_gate_not_another_supervisors)
{
	pid_t kid[2] = { -1, -1 }, got[2] = { -1, -1 };
	char obj[2][512];
	int p[2], i;
	SFD_AUTO;

	if (!sfd_start_sfilterd(&dm, false) || !ASSERT_OK(pipe(p), "pipe"))
		return;
	for (i = 0; i < 2; i++) {
		fflush(stdout);
		kid[i] = fork();
		if (kid[i] == 0)
			confined_child(i == 1, p[1]);
		if (!ASSERT_TRUE(kid[i] > 0 && read(p[0], &got[i], sizeof(got[i])) ==
				 sizeof(got[i]) && got[i] == kid[i], "the child is confined"))
			goto out;
	}
	for (i = 0; i < 2; i++)
		ASSERT_TRUE(sfd_ps_task(dm.sock, kid[i], obj[i], sizeof(obj[i])), "PS lists it");
	test_log("under sfilterd's gate: %s\nunder its own listener: %s\n", obj[0], obj[1]);
	ASSERT_TRUE(strstr(obj[0], "\"gated\":true") != NULL, "sfilterd's gate: gated");
	ASSERT_TRUE(strstr(obj[0], "\"user_notif\"") == NULL, "and no other listener");
	ASSERT_TRUE(strstr(obj[1], "\"gated\"") == NULL, "another supervisor's listener: not gated");
	ASSERT_TRUE(strstr(obj[1], "\"user_notif\":true") != NULL, "but said to be under one");
out:
	for (i = 0; i < 2; i++)
		if (kid[i] > 0) {
			kill(kid[i], SIGKILL);
			waitpid(kid[i], NULL, 0);
		}
	close(p[0]);
	close(p[1]);
}
