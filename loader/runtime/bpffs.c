// SPDX-License-Identifier: GPL-2.0-only
/*
 * A bpf filesystem for the pins. systemd mounts one at /sys/fs/bpf at
 * boot; machines without systemd (minimal inits, some VMs) have none, and
 * the first pin would fail with a bare ENOENT. Below /sys/fs/bpf the place
 * is the conventional one, so the runtime mounts bpffs there itself, as
 * Cilium's agent does. Anywhere else the administrator chose the place:
 * mounting over it could hide what is there, so the runtime only says
 * what to mount.
 */
#include "runtime.h"

#include <errno.h>
#include <stdbool.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>

/* pin_dir's parent, without trailing slashes ("." for a bare name). */
static int parent_of(const char *pin_dir, char *out, size_t size)
{
	size_t n = strlen(pin_dir);
	const char *slash;

	while (n > 1 && pin_dir[n - 1] == '/')
		n--;
	if (n == 0 || n >= size)
		return n ? -ENAMETOOLONG : -EINVAL;
	memcpy(out, pin_dir, n);
	out[n] = '\0';
	slash = strrchr(out, '/');
	if (!slash)
		snprintf(out, size, ".");
	else if (slash == out)
		out[1] = '\0';
	else
		out[slash - out] = '\0';
	while ((n = strlen(out)) > 1 && out[n - 1] == '/')
		out[n - 1] = '\0';
	return 0;
}

/* 1 when path is on bpffs, else 0, or -errno. A path that does not exist
 * yet is judged by its nearest existing ancestor: where a mkdir of it
 * would land. */
static int on_bpffs(const char *path)
{
	char p[PATH_MAX];
	struct statfs sfs;
	char *slash;

	if (snprintf(p, sizeof(p), "%s", path) >= (int)sizeof(p))
		return -ENAMETOOLONG;
	while (statfs(p, &sfs) != 0) {
		if (errno != ENOENT)
			return -errno;
		slash = strrchr(p, '/');
		if (!slash)
			snprintf(p, sizeof(p), ".");
		else if (slash == p)
			p[1] = '\0';
		else
			*slash = '\0';
	}
	return sfs.f_type == BPF_FS_MAGIC;
}

/* mkdir -p path, 0700 like the pin dir itself. */
static int mkdir_p(const char *path)
{
	char p[PATH_MAX], *c, was;
	struct stat st;

	if (stat(path, &st) == 0)
		return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
	if (snprintf(p, sizeof(p), "%s", path) >= (int)sizeof(p))
		return -ENAMETOOLONG;
	for (c = p + 1; ; c++) {
		if (*c != '/' && *c != '\0')
			continue;
		was = *c;
		*c = '\0';
		if (mkdir(p, 0700) && errno != EEXIST)
			return -errno;
		*c = was;
		if (!was)
			return 0;
	}
}

int sf_bpffs_ensure(const char *pin_dir, char *msg, size_t size)
{
	const size_t root_len = strlen(SF_BPFFS_DIR);
	char parent[PATH_MAX];
	bool mounted = false;
	int r;

	if (size)
		msg[0] = '\0';
	r = parent_of(pin_dir, parent, sizeof(parent));
	if (r == 0)
		r = on_bpffs(parent);
	if (r < 0) {
		snprintf(msg, size, "%s: %s", pin_dir, strerror(-r));
		return r;
	}
	if (r == 0) {
		/* Mount only where systemd would have: at /sys/fs/bpf, for
		 * a pin dir below it, when no bpffs is there at all (one with
		 * something else mounted below it is someone's choice). */
		if (strncmp(parent, SF_BPFFS_DIR, root_len) ||
		    (parent[root_len] != '/' && parent[root_len] != '\0') ||
		    on_bpffs(SF_BPFFS_DIR) == 1) {
			snprintf(msg, size, "%s is not on a bpf filesystem: mount one there "
				 "(mount -t bpf bpf %s) or pin under " SF_BPFFS_DIR,
				 parent, parent);
			return -ENOTSUP;
		}
		/* The flags and mode systemd mounts it with. */
		if (mount("bpf", SF_BPFFS_DIR, "bpf", MS_NOSUID | MS_NODEV | MS_NOEXEC,
			  "mode=0700")) {
			r = -errno;
			snprintf(msg, size, "no bpf filesystem at " SF_BPFFS_DIR " and mounting "
				 "one failed (%s): run `mount -t bpf bpf " SF_BPFFS_DIR "` as root",
				 strerror(-r));
			return r;
		}
		mounted = true;
		snprintf(msg, size, "mounted a bpf filesystem at " SF_BPFFS_DIR
			 " (none was mounted)");
	}
	/* pin_all() makes pin_dir itself; the directories above it are ours
	 * to make when they are on bpffs. */
	r = mkdir_p(parent);
	if (r < 0)
		snprintf(msg, size, "%scannot create %s: %s",
			 mounted ? "mounted a bpf filesystem at " SF_BPFFS_DIR ", but " : "",
			 parent, strerror(-r));
	return r;
}
