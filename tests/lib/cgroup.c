// SPDX-License-Identifier: GPL-2.0-only
#define _GNU_SOURCE
#include "cgroup.h"
#include "harness.h"
#include "probe.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

int tcg_root(char *out, size_t size, char *why, size_t wsize)
{
	int r = probe_cgroup2(out, size, why, wsize);

	if (r || !test_is_emulated())
		return r;
	/* The guest's /init leaves it to us. */
	mkdir("/sys/fs/cgroup", 0755);
	if (mount("none", "/sys/fs/cgroup", "cgroup2", 0, NULL)) {
		snprintf(why, wsize, "cgroup v2 not mounted, and mounting it refused: %s",
			 strerror(errno));
		return 0;
	}
	snprintf(out, size, "/sys/fs/cgroup");
	return 1;
}

bool tcg_make(char *out, size_t size, const char *name)
{
	char root[256], why[256];

	if (!TEST_REQUIRE(tcg_root(root, sizeof(root), why, sizeof(why)), NULL, why))
		return false;
	snprintf(out, size, "%s/%s-%d", root, name, getpid());
	return ASSERT_OK(mkdir(out, 0755) ? -errno : 0, "mkdir cgroup");
}

bool tcg_move(const char *dir, pid_t pid)
{
	char procs[PATH_MAX], num[32];
	bool ok;
	int fd;

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
	snprintf(num, sizeof(num), "%d", pid);
	fd = open(procs, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ok = write(fd, num, strlen(num)) > 0;
	close(fd);
	return ok;
}
