/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * User namespaces as a user with subordinate uids makes them: the user
 * unshares a user namespace, and its uid_map and gid_map map uids 0..n-1
 * in it to kernel uids base..base+n-1 (newuidmap writes them from
 * /etc/subuid; here the test, as root, writes them itself). A process of
 * that namespace that takes uid k runs as kernel uid base + k, a uid of
 * its own to everything outside, though the namespace is its owner's.
 *
 * With owner 0 the namespace is root's, as a container engine running as
 * root makes one for each container.
 */
#ifndef SF_TEST_USERNS_H
#define SF_TEST_USERNS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Forks a process that becomes uid owner (with its gid, no other groups),
 * unshares a user namespace, gets the maps above, and becomes uid and gid
 * k in it (kernel uid base + k); then it runs fn(arg) and exits with what
 * fn returns. The pid of that child of the caller, or -1 with the test
 * failed. Its parent-death signal is SIGKILL.
 */
pid_t userns_fork(uid_t owner, uid_t base, uint32_t n, uint32_t k,
		  int (*fn)(void *arg), void *arg);

#endif
