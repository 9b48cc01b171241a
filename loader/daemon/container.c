// SPDX-License-Identifier: GPL-2.0-only
/*
 * The container a confined task's process runs in, for PS and SHOW: its
 * /proc/<tgid>/cgroup, parsed by sf_container_id() (container_id.h). The
 * daemon runs in the host's pid namespace, where the runtime's tgids are
 * the pids /proc knows, and in the host's cgroup namespace, where the path
 * is whole.
 *
 * Display only: nothing is decided by it. That is why reading /proc by pid
 * is good enough here, where the attach paths hold a pidfd: the process
 * may exit and its pid be reused between the task list and the read, and
 * then a task shows another process's container, or none.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "daemon.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

bool container_of(pid_t tgid, char id[SF_CONTAINER_ID_LEN + 1])
{
	/* Room for a v1 host's dozen hierarchies with deep kubepods paths. */
	char path[32], buf[16384], *nl;
	size_t n = 0;
	ssize_t r;
	int fd;

	id[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)tgid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	while (n < sizeof(buf) - 1 && (r = read(fd, buf + n, sizeof(buf) - 1 - n)) > 0)
		n += (size_t)r;
	close(fd);
	/* Cut short: the last line may end inside a nested container's id,
	 * and the one around it would pass for the deepest. */
	if (n == sizeof(buf) - 1) {
		nl = memrchr(buf, '\n', n);
		n = nl ? (size_t)(nl - buf) : 0;
	}
	buf[n] = '\0';
	return sf_container_id(buf, id);
}
