// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include "cgroup.h"
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

bool tcg_root(char *out, size_t size)
{
	char line[512], dev[128], dir[256], type[64];
	FILE *f = fopen("/proc/mounts", "r");
	bool found = false;

	if (f) {
		while (!found && fgets(line, sizeof(line), f))
			if (sscanf(line, "%127s %255s %63s", dev, dir, type) == 3 &&
			    !strcmp(type, "cgroup2")) {
				snprintf(out, size, "%s", dir);
				found = true;
			}
		fclose(f);
	}
	if (found || !test_is_emulated())
		return found;
	/* The guest's /init leaves it to us. */
	mkdir("/sys/fs/cgroup", 0755);
	if (mount("none", "/sys/fs/cgroup", "cgroup2", 0, NULL))
		return false;
	snprintf(out, size, "/sys/fs/cgroup");
	return true;
}

bool tcg_make(char *out, size_t size, const char *name)
{
	char root[256];

	if (!tcg_root(root, sizeof(root))) {
		test_skip("cgroup v2 not mounted");
		return false;
	}
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
