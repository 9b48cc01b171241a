// SPDX-License-Identifier: GPL-2.0-only
/*
 * The socket sfilterd serves: the one systemd passes (socket activation,
 * dist/sfilterd.socket), or one bound here. Anyone may connect; what a
 * request may do is decided per request. No descriptor may be sent on a
 * connection until the daemon allows it (conn.c, for administrators):
 * SO_PASSRIGHTS off on the listening socket is what every connection
 * starts with (unix_stream_connect() copies the listener's flags), so
 * that one is refused at the sender even before the connection is
 * accepted. Kernels before 6.16 lack the option, and take them.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

static int mkdir_p(const char *dir)
{
	char buf[PATH_MAX], *p;

	if (snprintf(buf, sizeof(buf), "%s", dir) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/*
 * systemd socket activation (sd_listen_fds(3), by its environment
 * protocol): LISTEN_PID is us and LISTEN_FDS >= 1 means fd 3 is our
 * listening socket, already bound with the unit's mode. Returns it, or
 * -ENOENT when there is none to use.
 */
static int activated_socket(void)
{
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
	int fd = 3, one = 1, type = 0;
	socklen_t len = sizeof(type);

	if (!pid || !fds || atoi(pid) != getpid() || atoi(fds) < 1)
		return -ENOENT;
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 ||
	    type != SOCK_SEQPACKET) {
		diag("socket activation: fd 3 is not a SOCK_SEQPACKET socket");
		return -ENOENT;
	}
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one));
	return fd;
}

/* A socket file left by a daemon that died is removed; a live daemon's is
 * not. 0 or -errno. */
static int clear_stale(const char *path, const struct sockaddr_un *addr, int type)
{
	struct stat stt;
	int probe;

	if (lstat(path, &stt) < 0)
		return 0;
	if (!S_ISSOCK(stt.st_mode)) {
		diag("%s exists and is not a socket", path);
		return -EEXIST;
	}
	probe = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
	if (probe >= 0 && connect(probe, (const struct sockaddr *)addr, sizeof(*addr)) == 0) {
		close(probe);
		diag("another sfilterd is serving %s", path);
		return -EADDRINUSE;
	}
	if (probe >= 0)
		close(probe);
	unlink(path);
	return 0;
}

/* Makes the directory that will hold the socket at path. 0 or -errno. */
static int make_dir_of(const char *path)
{
	char dir[PATH_MAX], *slash;
	int r;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	if ((r = mkdir_p(dir)) < 0)
		diag("mkdir -p %s: %s", dir, strerror(-r));
	return r;
}

static void refuse_rights(int fd)
{
	int off = 0;

	setsockopt(fd, SOL_SOCKET, SO_PASSRIGHTS, &off, sizeof(off));
}

/* A socket of type bound at path (its directory made), mode 0666,
 * listening; SO_PASSRIGHTS off first when no_rights. The descriptor, or
 * -errno after a line on stderr. */
static int bind_socket(const char *path, int type, bool no_rights)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd, r;

	if (strlen(path) >= sizeof(addr.sun_path)) {
		diag("socket path too long: %s", path);
		return -ENAMETOOLONG;
	}
	strcpy(addr.sun_path, path);
	if ((r = make_dir_of(path)) < 0)
		return r;
	fd = socket(AF_UNIX, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		r = -errno;
		diag("socket: %s", strerror(-r));
		return r;
	}
	if (no_rights)
		refuse_rights(fd);
	if ((r = clear_stale(path, &addr, type)) < 0)
		goto fail;
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		r = -errno;
		diag("bind %s: %s", path, strerror(-r));
		goto fail;
	}
	if (chmod(path, 0666) < 0 || listen(fd, 128) < 0) {
		r = -errno;
		diag("%s: %s", path, strerror(-r));
		unlink(path);
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return r;
}

int listen_socket(const char *path)
{
	int fd, one = 1;

	fd = activated_socket();
	if (fd >= 0) {
		refuse_rights(fd);
		return fd;
	}
	fd = bind_socket(path, SOCK_SEQPACKET, true);
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one));
	return fd;
}

/* Descriptors are what this socket is for: it keeps SO_PASSRIGHTS. */
int agent_socket(const char *path)
{
	return bind_socket(path, SOCK_STREAM, false);
}
