// SPDX-License-Identifier: GPL-2.0-only
/*
 * Concurrency: 200 clients attach at once, each gets the right
 * answer, and none is lost.
 *
 * 200 forked processes wait on one shared pipe; closing its write end
 * releases them together and each calls sf_attach() once:
 *   - i % 4 == 0: an invalid program (a misaligned load, its offset
 *     varying): EINVAL with the validator's exact message;
 *   - i % 4 == 1: the same valid filter for all (kills on getppid; the
 *     daemon may share one loaded program);
 *   - i % 4 == 2, 3: a filter of its own (an extra syscall number that is
 *     allowed), which also kills on getppid.
 * Each reports its answer on a shared pipe, then a valid one calls getppid
 * and must die by SIGKILL, an invalid one exits 0. The test counts 200
 * daemon answers (no EHOSTDOWN, no lost reply) and checks each one.
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

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

SFD_TIER_INDEPENDENT

#define N_CLIENTS 200

struct answer {
	int32_t idx;
	int32_t rc;        /* sf_attach()'s return */
	int32_t err;       /* errno when rc != 0 */
	int32_t msg_ok;    /* the message is the expected one */
};

/* Fills p with client idx's program; returns its length. */
static unsigned make_prog(int idx, struct sock_filter *p)
{
	unsigned n = 0;

	if (idx % 4 == 0) { /* invalid: misaligned load */
		p[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, 1 + idx % 3);
		p[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
		return n;
	}
	p[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, 0);
	if (idx % 4 != 1) /* distinct: allows a syscall number of its own */
		p[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, 5000 + idx, 2, 0);
	p[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getppid, 0, 1);
	p[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	p[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	return n;
}

static void client(int idx, int barrier, int rep)
{
	struct sock_filter insns[8];
	struct sock_fprog prog = { make_prog(idx, insns), insns };
	struct answer a = { .idx = idx };
	struct c2e_error cerr;
	char expect[256];
	char c;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		_exit(80);
	while (read(barrier, &c, 1) < 0 && errno == EINTR)
		;
	a.rc = sf_attach(&prog, 0);
	a.err = a.rc ? errno : 0;
	if (idx % 4 == 0) {
		a.msg_ok = c2e_validate(insns, prog.len, &cerr) != 0 &&
			   strcmp(sf_last_error(),
				  c2e_error_str(&cerr, expect, sizeof(expect))) == 0;
	} else {
		a.msg_ok = strstr(sf_last_error(), "attached") != NULL;
	}
	if (a.rc && a.err != EINVAL)
		fprintf(stderr, "client %d: %s: %s\n", idx, strerror(a.err), sf_last_error());
	if (write(rep, &a, sizeof(a)) != sizeof(a))
		_exit(81);
	if (idx % 4 == 0)
		_exit(0);
	syscall(SYS_getppid);
	_exit(82); /* survived */
}

TEST(daemon_concurrency_200_clients)
{
	int barrier[2], rep[2], i, st, answered = 0, right = 0, confined = 0, invalid_ok = 0;
	int timeout = test_is_emulated() ? 600000 : 60000;
	static pid_t pids[N_CLIENTS];
	bool seen[N_CLIENTS] = { false };
	struct answer a;
	SFD_AUTO;

	if (!test_need_root("bpffs pins"))
		return;
	if (!sfd_start_sfilterd(&dm, true))
		return;
	if (!ASSERT_OK(pipe2(barrier, O_CLOEXEC), "pipe") ||
	    !ASSERT_OK(pipe2(rep, O_CLOEXEC), "pipe"))
		return;
	memset(pids, 0, sizeof(pids));
	fflush(stdout);
	fflush(stderr);
	for (i = 0; i < N_CLIENTS; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			close(barrier[1]);
			close(rep[0]);
			client(i, barrier[0], rep[1]);
		}
		if (!ASSERT_TRUE(pids[i] > 0, "fork"))
			break;
	}
	close(barrier[0]);
	close(rep[1]);
	/* Everyone at once: the barrier's last writer goes away. */
	close(barrier[1]);
	for (;;) {
		struct pollfd p = { .fd = rep[0], .events = POLLIN };

		if (poll(&p, 1, timeout) != 1 || read(rep[0], &a, sizeof(a)) != sizeof(a))
			break;
		if (a.idx < 0 || a.idx >= N_CLIENTS || seen[a.idx]) {
			test_fail(__FILE__, __LINE__, "bogus or duplicate answer for client %d", a.idx);
			continue;
		}
		seen[a.idx] = true;
		if (!(a.rc == -1 && a.err == EHOSTDOWN))
			answered++;
		if (a.idx % 4 == 0) {
			if (a.rc == -1 && a.err == EINVAL && a.msg_ok)
				right++, invalid_ok++;
			else
				test_log("client %d (invalid): rc %d errno %d msg_ok %d\n",
					 a.idx, a.rc, a.err, a.msg_ok);
		} else if (a.rc == 0 && a.msg_ok) {
			right++;
		} else {
			test_log("client %d (valid): rc %d errno %d (%s) msg_ok %d\n",
				 a.idx, a.rc, a.err, strerror(a.err), a.msg_ok);
		}
	}
	close(rep[0]);
	for (i = 0; i < N_CLIENTS; i++) {
		if (pids[i] <= 0 || waitpid(pids[i], &st, 0) != pids[i])
			continue;
		if (i % 4 == 0)
			continue;
		if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
			confined++;
		else
			test_log("client %d: status 0x%x\n", i, st);
	}
	test_log("answered %d, right %d (invalid %d), confined %d of %d valid\n",
		 answered, right, invalid_ok, confined, N_CLIENTS - N_CLIENTS / 4);
	ASSERT_EQ(answered, N_CLIENTS, "the daemon answered every client");
	ASSERT_EQ(invalid_ok, N_CLIENTS / 4, "invalid filters: EINVAL with the validator's message");
	ASSERT_EQ(right, N_CLIENTS, "every client got the right answer");
	ASSERT_EQ(confined, N_CLIENTS - N_CLIENTS / 4,
		  "every valid attach confines its client (SIGKILL on getppid)");
	/* The daemon is still whole: one more request is served. */
	{
		struct sf_msg_hdr h;

		ASSERT_EQ(sfd_request(dm.sock, &h, SF_MSG_STATUS, sizeof(h), NULL, NULL), 0,
			  "STATUS after the storm");
	}
}
