// SPDX-License-Identifier: GPL-2.0-only
/* Private mount namespaces for tests (mountns.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "mountns.h"
#include "harness.h"

#include <sched.h>
#include <unistd.h>
#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/vfs.h>

bool mntns_is_bpffs(const char *path)
{
	struct statfs sfs;

	return statfs(path, &sfs) == 0 && sfs.f_type == BPF_FS_MAGIC;
}

bool mntns_private(void)
{
	if (!test_need_root("a private mount namespace"))
		return false;
	if (unshare(CLONE_NEWNS)) {
		test_skip("unshare(CLONE_NEWNS): %s", strerror(errno));
		return false;
	}
	/* Without this, a mount or unmount here would propagate back to a
	 * shared parent mount (systemd makes / shared). */
	return ASSERT_OK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL),
			 "make every mount private");
}

bool mntns_detach_bpffs(void)
{
	int i;

	for (i = 0; i < 64 && mntns_is_bpffs("/sys/fs/bpf"); i++)
		if (umount2("/sys/fs/bpf", MNT_DETACH))
			break;
	return ASSERT_FALSE(mntns_is_bpffs("/sys/fs/bpf"),
			    "no bpffs at /sys/fs/bpf in the private namespace");
}

bool mntns_without_bpffs(void)
{
	return mntns_private() && mntns_detach_bpffs();
}

bool mntns_without_sys_fs_bpf(void)
{
	if (!mntns_without_bpffs())
		return false;
	return ASSERT_OK(mount("tmpfs", "/sys/fs", "tmpfs", MS_RDONLY, "size=4k,mode=0755"),
			 "read-only empty tmpfs over /sys/fs") &&
	       ASSERT_EQ(access("/sys/fs/bpf", F_OK), -1, "no /sys/fs/bpf");
}
