/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Private mount namespaces for tests that change mounts. The test's own
 * process (the runner forks one per test) unshares, so only it and its
 * children see the change, and the namespace ends with them: the host's
 * and the guest's mounts stay as they were, whatever the test does.
 */
#ifndef SF_TEST_MOUNTNS_H
#define SF_TEST_MOUNTNS_H

#include <stdbool.h>

/* Whether path is on a bpf filesystem. */
bool mntns_is_bpffs(const char *path);
/* unshare(CLONE_NEWNS) with every mount private. Skips the test and
 * returns false when that is not allowed (not root). */
bool mntns_private(void);
/* Detaches every bpffs stacked at /sys/fs/bpf (in a private namespace
 * only!): the view of a machine that mounts none at boot. */
bool mntns_detach_bpffs(void);
/* mntns_private(), then mntns_detach_bpffs(). */
bool mntns_without_bpffs(void);
/* mntns_without_bpffs(), then a read-only empty tmpfs over /sys/fs: no
 * /sys/fs/bpf at all, so that nothing can mount bpffs there. */
bool mntns_without_sys_fs_bpf(void);

#endif
