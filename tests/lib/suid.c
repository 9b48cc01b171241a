// SPDX-License-Identifier: GPL-2.0-only
/* Setuid programs and unprivileged users for tests (suid.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "suid.h"
#include "harness.h"

#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

bool suid_copy(char *dir, size_t dsize, char *path, size_t psize)
{
	char buf[65536];
	struct statvfs sv;
	int in, out;
	ssize_t n;

	snprintf(dir, dsize, "/tmp/sftest-suid-XXXXXX");
	if (!mkdtemp(dir) || chmod(dir, 0755)) {
		test_fail(__FILE__, __LINE__, "mkdtemp: %s", strerror(errno));
		return false;
	}
	if (statvfs(dir, &sv) == 0 && (sv.f_flag & ST_NOSUID)) {
		test_skip("/tmp is mounted nosuid: no setuid program can run");
		rmdir(dir);
		return false;
	}
	snprintf(path, psize, "%s/suid-hold", dir);
	in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			break;
	if (in >= 0)
		close(in);
	if (out < 0 || close(out) || chown(path, 0, 0) || chmod(path, 04755)) {
		test_fail(__FILE__, __LINE__, "setuid copy %s: %s", path, strerror(errno));
		return false;
	}
	return true;
}

void suid_rm_copy(const char *dir, const char *path)
{
	unlink(path);
	rmdir(dir);
}

bool suid_become_nobody(void)
{
	return setgroups(0, NULL) == 0 && setgid(SUID_NOBODY) == 0 && setuid(SUID_NOBODY) == 0;
}

unsigned long long suid_cap_eff(pid_t pid)
{
	char path[64], line[256];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &v) == 1)
			break;
	fclose(f);
	return v;
}

unsigned long long suid_wait_privileged(pid_t pid)
{
	int tries = test_is_emulated() ? 30000 : 10000;
	unsigned long long v;

	/* The exec takes a millisecond or so: look often. */
	while (!(v = suid_cap_eff(pid)) && tries--)
		usleep(200);
	return v;
}
