// SPDX-License-Identifier: GPL-2.0-only
/* User namespaces of subordinate uids for tests (userns.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "userns.h"
#include "harness.h"

#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* Writes text into /proc/pid/name; 0 or -errno. */
static int write_proc(pid_t pid, const char *name, const char *text)
{
	char path[64];
	int fd, r = 0;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		r = -errno;
	close(fd);
	return r;
}

pid_t userns_fork(uid_t owner, uid_t base, uint32_t n, uint32_t k,
		  int (*fn)(void *arg), void *arg)
{
	int up[2], down[2], r;
	char map[64], c;
	pid_t pid;

	if (!ASSERT_OK(pipe2(up, O_CLOEXEC), "pipe") || !ASSERT_OK(pipe2(down, O_CLOEXEC), "pipe"))
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(up[0]);
		close(down[1]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (owner && (setgroups(0, NULL) || setgid(owner) || setuid(owner)))
			_exit(120);
		if (unshare(CLONE_NEWUSER) || write(up[1], "u", 1) != 1 ||
		    read(down[0], &c, 1) != 1 || c != 'm')
			_exit(121);
		/* The creator has every capability in its new namespace. */
		if (setgroups(0, NULL) || setresgid(k, k, k) || setresuid(k, k, k))
			_exit(122);
		/* Cleared by the change of credentials (commit_creds()). */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(up[1]);
		close(down[0]);
		_exit(fn(arg));
	}
	close(up[1]);
	close(down[0]);
	r = pid < 0 ? -errno : 0;
	if (!r && read(up[0], &c, 1) != 1)
		r = -EIO;
	snprintf(map, sizeof(map), "0 %u %u\n", base, n);
	if (!r)
		r = write_proc(pid, "uid_map", map);
	if (!r)
		r = write_proc(pid, "gid_map", map);
	if (!r && write(down[1], "m", 1) != 1)
		r = -EIO;
	close(up[0]);
	close(down[1]);
	if (r) {
		test_fail(__FILE__, __LINE__, "a user namespace of uid %u mapping %u uids at %u: %s",
			  owner, n, base, strerror(-r));
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		return -1;
	}
	return pid;
}
