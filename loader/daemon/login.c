// SPDX-License-Identifier: GPL-2.0-only
/*
 * The login user of a connection (struct login, conn.h): whom its limits
 * count against, decided once, at accept, from what the kernel vouches
 * for: the user namespace of the process the connection's pidfd names, and
 * that namespace's ancestry and owner.
 *
 * A user with subordinate uids (newuidmap, /etc/subuid) runs processes
 * under 65,536 kernel uids of its own; counted per uid, one such user
 * holds 65,536 times a uid's share. Every one of those uids lives in a user
 * namespace that the user made (or made by a namespace that it made...),
 * and the outermost of them below the daemon's own is owned by the user's
 * own uid: that owner is the login user.
 *
 * A process cannot move itself into another login user's account: joining
 * a user namespace (setns) needs CAP_SYS_ADMIN in it (userns_install()),
 * which only its owner, or a process privileged over its parent, has; a
 * namespace made with unshare() or clone() is a child of the maker's own,
 * and so has the maker's outermost ancestor.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#include <linux/nsfs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#ifndef PIDFD_GET_USER_NAMESPACE
#define PIDFD_GET_USER_NAMESPACE _IO(0xFF, 9) /* Linux 6.11 */
#endif
/* A user namespace is nested 32 deep at most (create_user_ns()). */
#define MAX_USERNS_DEPTH 33

/* The user namespace of the process pidfd names (pid when it connected),
 * as a descriptor; -errno. */
static int userns_of(int pidfd, pid_t pid)
{
	char path[64];
	int fd;

	fd = ioctl(pidfd, PIDFD_GET_USER_NAMESPACE, 0);
	if (fd >= 0 || (errno != ENOTTY && errno != EINVAL))
		return fd >= 0 ? fd : -errno;
	/* Before 6.11: by pid, then checked against the pidfd. While the
	 * process it names lives, its pid is no one else's, so the
	 * namespace opened is its own. */
	snprintf(path, sizeof(path), "/proc/%d/ns/user", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0) {
		close(fd);
		return -ESRCH;
	}
	return fd;
}

static bool same_ns(int fd, const struct stat *st)
{
	struct stat s;

	return fstat(fd, &s) == 0 && s.st_ino == st->st_ino && s.st_dev == st->st_dev;
}

int login_of(int pidfd, const struct ucred *cred, struct login *out)
{
	static struct stat self;
	int fd, parent, depth, r = 0;
	uid_t owner;

	*out = (struct login){ .uid = cred->uid };
	if (!self.st_ino && stat("/proc/self/ns/user", &self) < 0)
		return -errno;
	if (pidfd < 0)
		return -ESRCH;
	fd = userns_of(pidfd, cred->pid);
	if (fd < 0)
		return fd;
	for (depth = 0; depth < MAX_USERNS_DEPTH && !same_ns(fd, &self); depth++) {
		/* The parent, while it is within the daemon's reach
		 * (ns_get_parent(): EPERM past it: the peer's namespace is
		 * not below the daemon's, whose view of its uid is all
		 * there is). */
		parent = ioctl(fd, NS_GET_PARENT);
		if (parent < 0) {
			r = errno == EPERM ? 0 : -errno;
			break;
		}
		if (same_ns(parent, &self)) {
			struct stat st;

			/* fd is the outermost below the daemon's: its
			 * owner, as the daemon's namespace maps it. */
			if (ioctl(fd, NS_GET_OWNER_UID, &owner) < 0 || fstat(fd, &st) < 0) {
				r = -errno;
			} else if (owner == 0) {
				out->userns = (uint32_t)st.st_ino;
				out->uid = 0;
			} else {
				out->uid = owner;
			}
			close(parent);
			break;
		}
		close(fd);
		fd = parent;
	}
	close(fd);
	return r;
}

bool login_eq(const struct login *a, const struct login *b)
{
	return a->uid == b->uid && a->userns == b->userns;
}

const char *login_name(const struct login *l, uid_t uid, char *buf, size_t size)
{
	if (l->userns)
		snprintf(buf, size, "user namespace %u (uid 0's, where uid %u is)",
			 l->userns, uid);
	else if (l->uid != uid)
		snprintf(buf, size, "uid %u (the owner of uid %u's user namespace)", l->uid, uid);
	else
		snprintf(buf, size, "uid %u", uid);
	return buf;
}
