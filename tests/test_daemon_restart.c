// SPDX-License-Identifier: GPL-2.0-only
/*
 * Restart: sfilterd pins its programs, maps and links, so a
 * confined task stays confined when the daemon dies, and a restarted
 * daemon adopts what is pinned.
 *
 * A private daemon (private socket, pin dir /sys/fs/bpf/sfilter-test-PID)
 * confines 100 tasks, each through sf_attach() with a filter that kills on
 * getppid(2), each then waiting on its own pipe. sfilterd is SIGKILLed.
 * With no daemon at all, every task forks a child (which inherits the
 * chain) that calls getppid: all 100 children die by SIGKILL. sfilterd is
 * started again on the same pin dir: STATUS says "adopted", `sfctl --json
 * ps` (and a raw PS) lists all 100 tasks with their own filter ids; the
 * tasks are released, call getppid and all 100 die by SIGKILL; a new task
 * attaches and is confined. At the end `sfilterd --uninstall` removes the
 * private pin dir, even when an assertion failed.
 *
 * The tasks attach without a gate (SFILTER_GATE=0): what is under test is
 * the pinned BPF state, which judges alone with no daemon up. A gated
 * task's call made then waits for the next daemon instead
 * (tests/test_bypass_gate_restart.c).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "daemon.h"
#include "c2e.h"
#include "proto.h"
#include "sfclient.h"
#include "sockfilter.h"
#include "progs.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <json-c/json.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define N_TASKS 100

/* What a task reports on the shared pipe. */
struct rec { int32_t idx; int32_t what; int32_t value; };
enum { REC_ATTACHED = 1, REC_ATTACH_FAILED, REC_PROBE };

static void put(int fd, int idx, int what, int value)
{
	struct rec r = { idx, what, value };

	if (write(fd, &r, sizeof(r)) != sizeof(r))
		_exit(90);
}

/* A confined task: attach, report the filter id, then obey commands on
 * cmd: 'p' = fork a child that calls getppid and report its wait status;
 * 'k' (or EOF) = call getppid itself. */
static void task(int idx, int cmd, int rep)
{
	struct sock_fprog prog = { 4, (struct sock_filter *)progs_kill_getppid };
	const char *m;
	char c;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || sf_attach(&prog, 0) != 0) {
		put(rep, idx, REC_ATTACH_FAILED, errno);
		_exit(91);
	}
	m = strstr(sf_last_error(), "filter ");
	put(rep, idx, REC_ATTACHED, m ? atoi(m + 7) : 0);
	for (;;) {
		ssize_t n = read(cmd, &c, 1);

		if (n == 1 && c == 'p') {
			int st = -1;
			pid_t ch = fork();

			if (ch == 0) {
				syscall(SYS_getppid);
				_exit(3);
			}
			if (ch > 0)
				waitpid(ch, &st, 0);
			put(rep, idx, REC_PROBE, st);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		break;
	}
	syscall(SYS_getppid);
	_exit(4); /* survived */
}

static bool read_rec(int fd, struct rec *r, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, timeout_ms) != 1)
		return false;
	return read(fd, r, sizeof(*r)) == sizeof(*r);
}

struct status_ctx { char text[2048]; };
static void status_each(void *ctx, const struct sf_reply *r, const char *text)
{
	(void)r;
	snprintf(((struct status_ctx *)ctx)->text, sizeof(((struct status_ctx *)ctx)->text),
		 "%s", text);
}

/* Reads sfctl --json ps into a json object; NULL on failure. */
static struct json_object *sfctl_ps(const char *sfctl, const char *sock)
{
	static char out[1 << 20];
	char cmd[PATH_MAX + 256];
	size_t n = 0, k;
	FILE *p;
	int st;

	snprintf(cmd, sizeof(cmd), "'%s' --socket %s --json ps", sfctl, sock);
	p = popen(cmd, "r");
	if (!p)
		return NULL;
	while (n < sizeof(out) - 1 && (k = fread(out + n, 1, sizeof(out) - 1 - n, p)) > 0)
		n += k;
	out[n] = '\0';
	st = pclose(p);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		test_log("%s: status 0x%x: %s\n", cmd, st, out);
		return NULL;
	}
	return json_tokener_parse(out);
}

TEST(daemon_restart_keeps_100_tasks_confined)
{
	int cmd[N_TASKS][2], rep[2], ids[N_TASKS], attached = 0, probed = 0, killed = 0;
	int timeout = test_is_emulated() ? 240000 : 30000, i, st;
	pid_t pids[N_TASKS] = { 0 };
	char sfctl[PATH_MAX];
	bool have_sfctl;
	struct rec r;
	SFD_AUTO;

	if (!test_need_root("bpffs pins"))
		return;
	have_sfctl = sfd_find_bin("sfctl", "SF_SFCTL", sfctl, sizeof(sfctl));
	if (!sfd_start_sfilterd(&dm, true))
		return;
	for (i = 0; i < N_TASKS; i++)
		cmd[i][0] = cmd[i][1] = -1;
	if (!ASSERT_OK(pipe2(rep, O_CLOEXEC), "pipe"))
		return;

	/* 1. 100 confined tasks */
	setenv("SFILTER_GATE", "0", 1);
	fflush(stdout);
	for (i = 0; i < N_TASKS; i++) {
		if (!ASSERT_OK(pipe(cmd[i]), "pipe"))
			goto out;
		pids[i] = fork();
		if (pids[i] == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			for (int j = 0; j <= i; j++)
				close(cmd[j][1]);
			task(i, cmd[i][0], rep[1]);
		}
		close(cmd[i][0]);
		if (!ASSERT_TRUE(pids[i] > 0, "fork"))
			goto out;
	}
	unsetenv("SFILTER_GATE");
	for (i = 0; i < N_TASKS; i++) {
		if (!ASSERT_TRUE(read_rec(rep[0], &r, timeout), "task report"))
			goto out;
		if (r.what == REC_ATTACHED && r.idx >= 0 && r.idx < N_TASKS) {
			ids[r.idx] = r.value;
			attached++;
		} else {
			test_log("task %d: attach failed: %s\n", r.idx, strerror(r.value));
		}
	}
	if (!ASSERT_EQ(attached, N_TASKS, "tasks confined through sf_attach()"))
		goto out;
	for (i = 0; i < N_TASKS; i++)
		if (!ASSERT_TRUE(sfd_ps_lists(dm.sock, pids[i], ids[i]),
				 "PS lists the task before the kill"))
			goto out;

	/* 2. SIGKILL the daemon: every chain stays in force */
	st = sfd_signal(&dm, SIGKILL);
	ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "sfilterd killed by SIGKILL");
	for (i = 0; i < N_TASKS; i++)
		if (write(cmd[i][1], "p", 1) != 1)
			break;
	for (i = 0; i < N_TASKS; i++) {
		if (!ASSERT_TRUE(read_rec(rep[0], &r, timeout), "probe report (daemon dead)"))
			goto out;
		if (r.what != REC_PROBE)
			continue;
		probed++;
		if (WIFSIGNALED(r.value) && WTERMSIG(r.value) == SIGKILL)
			killed++;
		else
			test_log("task %d's child: status 0x%x\n", r.idx, r.value);
	}
	ASSERT_EQ(probed, N_TASKS, "every task probed while sfilterd is dead");
	ASSERT_EQ(killed, N_TASKS, "with no daemon, every task's chain still kills on getppid");
	for (i = 0; i < N_TASKS; i++)
		if (!ASSERT_EQ(waitpid(pids[i], &st, WNOHANG), 0, "task alive after the probe"))
			goto out;

	/* 3. restart on the same pin dir: adopted, and ps lists all 100 */
	if (!sfd_restart(&dm))
		goto out;
	{
		struct sf_msg_hdr h;
		struct status_ctx s = { "" };

		ASSERT_EQ(sfd_request(dm.sock, &h, SF_MSG_STATUS, sizeof(h), status_each, &s), 0,
			  "STATUS after restart");
		test_log("status: %s\n", s.text);
		ASSERT_TRUE(strstr(s.text, "\"adopted\":true") != NULL,
			    "the restarted daemon adopted the pinned state");
	}
	{
		int listed = 0;

		for (i = 0; i < N_TASKS; i++)
			listed += sfd_ps_lists(dm.sock, pids[i], ids[i]);
		ASSERT_EQ(listed, N_TASKS, "raw PS after restart lists every task with its filter");
	}
	if (have_sfctl) {
		struct json_object *o = sfctl_ps(sfctl, dm.sock), *tasks, *t, *v, *fl;
		int listed = 0;

		if (ASSERT_OK_PTR(o, "sfctl --json ps") &&
		    ASSERT_TRUE(json_object_object_get_ex(o, "tasks", &tasks), "ps: tasks")) {
			for (size_t k = 0; k < json_object_array_length(tasks); k++) {
				t = json_object_array_get_idx(tasks, k);
				if (!json_object_object_get_ex(t, "tid", &v) ||
				    !json_object_object_get_ex(t, "filters", &fl))
					continue;
				for (i = 0; i < N_TASKS; i++)
					if (json_object_get_int(v) == pids[i])
						break;
				if (i == N_TASKS)
					continue;
				for (size_t f = 0; f < json_object_array_length(fl); f++)
					if (json_object_get_int64(json_object_array_get_idx(fl, f)) ==
					    ids[i]) {
						listed++;
						break;
					}
			}
			ASSERT_EQ(listed, N_TASKS, "sfctl --json ps lists all 100 tasks and their filters");
		}
		json_object_put(o);
	} else {
		test_log("no sfctl beside the runner: checked with the raw PS request only\n");
	}

	/* 4. release: every task dies by SIGKILL on getppid */
	killed = 0;
	for (i = 0; i < N_TASKS; i++) {
		if (write(cmd[i][1], "k", 1) != 1)
			test_log("release %d: %s\n", i, strerror(errno));
		close(cmd[i][1]);
		cmd[i][1] = -1;
	}
	for (i = 0; i < N_TASKS; i++) {
		if (waitpid(pids[i], &st, 0) != pids[i])
			continue;
		pids[i] = 0;
		if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
			killed++;
		else
			test_log("task %d: status 0x%x\n", i, st);
	}
	ASSERT_EQ(killed, N_TASKS, "after the restart, all 100 tasks die by SIGKILL on getppid");

	/* 5. the restarted daemon serves a new attach, which confines */
	fflush(stdout);
	pids[0] = fork();
	if (pids[0] == 0) {
		struct sock_fprog prog = { 4, (struct sock_filter *)progs_kill_getppid };

		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || sf_attach(&prog, 0) != 0)
			_exit(10);
		if (syscall(SYS_getpid) != getpid())
			_exit(11);
		syscall(SYS_getppid);
		_exit(12);
	}
	if (ASSERT_EQ(waitpid(pids[0], &st, 0), pids[0], "waitpid new task")) {
		test_log("new task: status 0x%x\n", st);
		ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
			    "a task attached after the restart is confined");
	}
	pids[0] = 0;
out:
	unsetenv("SFILTER_GATE");
	for (i = 0; i < N_TASKS; i++) {
		if (cmd[i][1] >= 0)
			close(cmd[i][1]);
		if (pids[i] > 0) {
			kill(pids[i], SIGKILL);
			waitpid(pids[i], NULL, 0);
		}
	}
	close(rep[0]);
	close(rep[1]);
}
