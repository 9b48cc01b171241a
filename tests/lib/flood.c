// SPDX-License-Identifier: GPL-2.0-only
/* A flood of costly filters; see flood.h. */
#define _GNU_SOURCE
#include "flood.h"
#include "sfclient.h"
#include "admin.h"
#include "proto.h"

#include <errno.h>
#include <stdlib.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

struct sock_fprog flood_filter(struct sock_filter *f, uint32_t k)
{
	/* Bit 28 keeps the constants clear of every syscall number (x32's
	 * are below 2^30 + 1024, and bit 30 is theirs). */
	uint32_t base = 0x10000000u | (k & 0xffff) << 12;
	int i = 0;

	f[i++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0);
	for (; i < FLOOD_INSNS - 1; i += 2) {
		if (k % 2 == 0) {
			f[i] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, base + i, 0, 1);
			f[i + 1] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
								SECCOMP_RET_ERRNO | 1);
		} else {
			f[i] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
							    16 + 8 * (i % 6));
			f[i + 1] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K,
								base + i, 0, 0);
		}
	}
	f[i] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	return (struct sock_fprog){ FLOOD_INSNS, f };
}

bool flood_become(uid_t uid)
{
	return setgroups(0, NULL) == 0 && setgid(uid) == 0 && setuid(uid) == 0 &&
	       prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0;
}

/* One child, one filter, then it exits. */
static void send_one(struct flood *fl)
{
	static struct sock_filter f[FLOOD_INSNS];
	struct sock_fprog p = flood_filter(f, __atomic_fetch_add(&fl->next, 1, __ATOMIC_RELAXED));

	/* The main socket's limits are under test, not the gate's agent. */
	setenv("SFILTER_GATE", "0", 1);
	if (sf_attach(&p, 0) == 0) {
		__atomic_fetch_add(&fl->attached, 1, __ATOMIC_RELAXED);
	} else {
		fl->last_errno = errno;
		__atomic_fetch_add(errno == EAGAIN ? &fl->refused : &fl->failed, 1,
				   __ATOMIC_RELAXED);
	}
	_exit(0);
}

char *flood_profile(int rules, int salt, bool bad_last)
{
	size_t cap = 200 + (size_t)rules * 160, n;
	char *s = malloc(cap);
	int i;

	if (!s)
		return NULL;
	n = (size_t)snprintf(s, cap, "{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"architectures\":"
			     "[\"SCMP_ARCH_X86_64\",\"SCMP_ARCH_X86\"],\"syscalls\":[");
	for (i = 0; i < rules; i++)
		n += (size_t)snprintf(s + n, cap - n, "%s{\"names\":[\"recv\",\"recvfrom\",\"send\","
				      "\"sendto\",\"socketcall\"],\"action\":\"SCMP_ACT_ALLOW\","
				      "\"args\":[{\"index\":5,\"value\":%d,\"op\":\"SCMP_CMP_EQ\"}]}",
				      i ? "," : "", salt * 1000 + i);
	snprintf(s + n, cap - n, "%s]}", bad_last ? ",{\"names\":[\"read\"],\"action\":"
		 "\"SCMP_ACT_NONE\"}" : "");
	return s;
}

/* Profiles, one request after another. */
static void send_profiles(struct flood *fl)
{
	const char *sock = getenv(SF_PROTO_SOCKET_ENV);

	for (;;) {
		struct sf_client_reply rep;
		int k = (int)__atomic_fetch_add(&fl->next, 1, __ATOMIC_RELAXED);
		char *json = flood_profile(FLOOD_PROFILE_RULES, 1000 + k, true);
		int r = json ? sf_client_profile(sock, 0, "none", 0, json, strlen(json), &rep) :
			-ENOMEM;

		free(json);
		if (r == -EINVAL) {
			__atomic_fetch_add(&fl->attached, 1, __ATOMIC_RELAXED);
			continue;
		}
		fl->last_errno = -r;
		__atomic_fetch_add(r == -EAGAIN ? &fl->refused : &fl->failed, 1, __ATOMIC_RELAXED);
		usleep(100000);
	}
}

static void sender(struct flood *fl, uid_t uid, pid_t parent, bool profiles)
{
	/* A group of its own: its child under way dies with it. */
	setpgid(0, 0);
	/* After the uid changes, which clears the parent-death signal. */
	if (!flood_become(uid) || prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		_exit(1);
	if (profiles)
		send_profiles(fl);
	for (;;) {
		pid_t pid = fork();

		if (pid == 0)
			send_one(fl);
		if (pid < 0 || waitpid(pid, NULL, 0) < 0)
			usleep(10000);
	}
}

static struct flood *start(int n, uid_t uid, bool profiles)
{
	struct flood *fl = mmap(NULL, sizeof(*fl), PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (fl == MAP_FAILED)
		return NULL;
	memset(fl, 0, sizeof(*fl));
	while (fl->n < n && fl->n < FLOOD_SENDERS) {
		pid_t self = getpid(), pid;

		fflush(stdout);
		pid = fork();
		if (pid == 0)
			sender(fl, uid, self, profiles); /* fl is shared */
		if (pid < 0)
			break;
		fl->pid[fl->n++] = pid;
	}
	if (fl->n == 0) {
		munmap(fl, sizeof(*fl));
		return NULL;
	}
	return fl;
}

struct flood *flood_start(int n, uid_t uid)
{
	return start(n, uid, false);
}

struct flood *flood_start_profiles(int n, uid_t uid)
{
	return start(n, uid, true);
}

void flood_stop(struct flood *fl)
{
	int i;

	if (!fl)
		return;
	for (i = 0; i < fl->n; i++) {
		kill(-fl->pid[i], SIGKILL);
		kill(fl->pid[i], SIGKILL);
		waitpid(fl->pid[i], NULL, 0);
	}
	munmap(fl, sizeof(*fl));
}

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

double flood_probe_attach(struct flood_probe *r, uid_t uid)
{
	static const struct sock_filter allow[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
	pid_t pid;

	*r = (struct flood_probe){ .ms = -1 };
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct sock_fprog p = { 1, (struct sock_filter *)allow };
		double t0;

		if (!flood_become(uid))
			_exit(1);
		setenv("SFILTER_GATE", "0", 1);
		t0 = now_ms();
		if (sf_attach(&p, 0) == 0)
			r->ms = now_ms() - t0;
		r->err = errno;
		snprintf(r->msg, sizeof(r->msg), "%s", sf_last_error());
		_exit(0);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return r->ms;
}
