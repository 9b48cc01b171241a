// SPDX-License-Identifier: GPL-2.0-only
/*
 * sfilter-oci-hook: the container's cgroup (oci_hook.h). The hook attaches
 * the container's filter to the cgroup v2 of the container's process, so
 * that every task that enters it later (`runc exec`, `kubectl exec`) is
 * confined too, as the kernel seccomp filter runc and crun install for
 * such a process would confine it.
 *
 * Found on the host, never through the container's rootfs: the cgroup of
 * the process the pidfd names, from /proc/PID/cgroup read through the
 * directory /proc/PID opened before the pidfd is found alive (so that a
 * pid reused meanwhile is never read: a live process cannot have given
 * its pid away), under the hook's own cgroup2 mount. At createRuntime the
 * process is the runtime's init, which waits for the runtime: it cannot
 * move while the hook runs. A cgroup that holds the hook itself (the
 * runtime's: the container got none of its own) or another process is
 * refused, as attaching to it would confine what is not the container.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "oci_hook.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

/* The cgroup v2 line ("0::PATH") of the cgroup file at dirfd/name into
 * out: 0, -ENOENT without one, or -errno. */
static int v2_path(int dirfd, const char *name, char *out, size_t size)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	char line[PATH_MAX + 16];
	FILE *f;
	int r = -ENOENT;

	if (fd < 0 || !(f = fdopen(fd, "r"))) {
		r = -errno;
		if (fd >= 0)
			close(fd);
		return r;
	}
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = '\0';
			r = snprintf(out, size, "%s", line + 3) < (int)size ? 0 : -ENAMETOOLONG;
			break;
		}
	if (ferror(f))
		r = -EIO;
	fclose(f);
	return r;
}

/* mountinfo's octal escapes (\040 for a space) undone, in place. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++, o++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o = *s;
		}
	}
	*o = '\0';
}

/* The directory of cgroup path (as /proc shows it) on one of our cgroup2
 * mounts whose root is at or above it (proc_pid_mountinfo(): fields 4
 * and 5, the root and the mount point; the fstype after " - "): 0 or
 * -ENOENT. */
static int on_mount(const char *path, char *out, size_t size)
{
	char line[3 * PATH_MAX], root[PATH_MAX], dir[PATH_MAX], type[64];
	FILE *f = fopen("/proc/self/mountinfo", "re");
	size_t n;
	int r = -ENOENT;

	if (!f)
		return -errno;
	while (r && fgets(line, sizeof(line), f)) {
		const char *sep = strstr(line, " - ");

		if (!sep || sscanf(sep + 3, "%63s", type) != 1 || strcmp(type, "cgroup2") ||
		    sscanf(line, "%*s %*s %*s %4095s %4095s", root, dir) != 2)
			continue;
		unescape(root);
		unescape(dir);
		n = strcmp(root, "/") ? strlen(root) : 0;
		if (strncmp(path, root, n) || (path[n] != '/' && path[n] != '\0'))
			continue;
		r = snprintf(out, size, "%s%s", strcmp(dir, "/") || !path[n] ? dir : "",
			     path + n) < (int)size ? 0 : -ENAMETOOLONG;
	}
	fclose(f);
	return r;
}

/* Whether cgroup.procs of dir lists pid alone. */
static bool alone(const char *dir, pid_t pid, pid_t *other)
{
	char path[PATH_MAX + 16];
	FILE *f;
	int v;
	bool ok = true;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	if (!f)
		hook_fail("cgroup %s: %s: %s", dir, "cgroup.procs", strerror(errno));
	while (ok && fscanf(f, "%d", &v) == 1)
		if (v != pid) {
			*other = v;
			ok = false;
		}
	fclose(f);
	return ok;
}

void hook_cgroup(pid_t pid, int pidfd, char *out, size_t size)
{
	char proc[32], cg[PATH_MAX], own[PATH_MAX];
	pid_t other = 0;
	size_t n;
	int dirfd, r;

	snprintf(proc, sizeof(proc), "/proc/%d", (int)pid);
	dirfd = open(proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	/* Alive after the open: the directory is the pidfd's process. */
	if (dirfd < 0 || syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0))
		hook_fail("pid %d: no such process", (int)pid);
	r = v2_path(dirfd, "cgroup", cg, sizeof(cg));
	close(dirfd);
	if (r == -ENOENT)
		hook_fail("pid %d: in no cgroup v2 (the hook attaches to the container's)",
			  (int)pid);
	if (r < 0)
		hook_fail("pid %d: %s/cgroup: %s", (int)pid, proc, strerror(-r));
	r = v2_path(AT_FDCWD, "/proc/self/cgroup", own, sizeof(own));
	if (r == -ENOENT)
		hook_fail("sfilter-oci-hook is in no cgroup v2");
	if (r < 0)
		hook_fail("/proc/self/cgroup: %s", strerror(-r));
	n = strcmp(cg, "/") ? strlen(cg) : 0;
	if (!strncmp(own, cg, n) && (own[n] == '/' || own[n] == '\0'))
		hook_fail("pid %d: its cgroup %s holds sfilter-oci-hook too (the runtime's): "
			  "the container has no cgroup of its own", (int)pid, cg);
	r = on_mount(cg, out, size);
	if (r < 0)
		hook_fail("pid %d: cgroup %s: %s", (int)pid, cg, r == -ENOENT ?
			  "no cgroup2 mount shows it" : strerror(-r));
	if (!alone(out, pid, &other))
		hook_fail("pid %d: its cgroup %s holds process %d too: the container has no "
			  "cgroup of its own", (int)pid, cg, (int)other);
}
