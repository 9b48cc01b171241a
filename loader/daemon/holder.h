/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The listener holder: a process of its own (forked by sfilterd, never
 * exec'd) that keeps a copy of every seccomp notification listener the
 * daemon judges, so that a daemon killed and restarted loses none. The
 * last close of a listener makes the kernel answer every call notified to
 * it, and every later one, ENOSYS (seccomp_notify_release(),
 * seccomp_do_user_notification()); while the holder keeps its copy, a
 * call notified with no daemon up waits in the kernel instead.
 *
 * The holder keeps each listener until the kernel reports that no task is
 * left under its filter (EPOLLHUP, seccomp_notify_poll()), never reads a
 * notification, and answers only connections of its own euid
 * (docs/security.md, "The listener holder").
 *
 * Self-contained: it includes nothing of the daemon's, so that the tests
 * link it alone (build/libsfholder.a). Every call returns 0 or a count,
 * or -errno; each waits for the holder at most HOLDER_WAIT_MS a message.
 */
#ifndef SF_HOLDER_H
#define SF_HOLDER_H

#include <stddef.h>
#include <stdint.h>

/* Bytes of meta kept beside each listener (who registered it). */
#define HOLDER_META_MAX 256
/* Listeners one holder keeps at most (fewer where RLIMIT_NOFILE's hard
 * limit is lower); one more is refused with -ENOSPC. */
#define HOLDER_MAX 8192
/* How long a call waits for each answer of the holder. */
#define HOLDER_WAIT_MS 2000
/* A holder that keeps nothing and has had no connection for this long
 * exits; one that keeps a listener never exits on its own. */
#define HOLDER_IDLE_SEC 60

/*
 * Connects to the holder serving path, or, where none answers there,
 * removes a stale socket file, binds path (mode 0600) and starts one
 * (fork, setsid, fork again: the holder is nobody's child to wait for),
 * then connects. The holder must have the caller's euid (SO_PEERCRED),
 * else -EACCES. Returns the connection (SOCK_SEQPACKET, close-on-exec) or
 * -errno (-EEXIST: path is something else than a socket).
 */
int holder_open(const char *path);
/*
 * Hands the holder a copy of fd (the caller keeps its own) with len bytes
 * of meta (at most HOLDER_META_MAX) kept beside it. 0 once the holder
 * keeps it; -EBADF: fd is not a seccomp notification listener; -ENOSPC:
 * the holder keeps as many as it may; -ETIMEDOUT: no answer in time.
 */
int holder_put(int hfd, int fd, const void *meta, size_t len);
/*
 * holder_put() in two steps, so that the caller can do something else
 * while the holder takes the listener: the request sent (0 or -errno; the
 * holder has the copy in its queue from then on, whoever dies), then its
 * answer waited for (as holder_put()). seq names the request.
 */
int holder_put_send(int hfd, int fd, const void *meta, size_t len, uint64_t *seq);
int holder_put_wait(int hfd, uint64_t seq);
/*
 * Hands fn every listener the holder keeps, in the order they were put,
 * each a new descriptor (close-on-exec) that fn owns from then on, with
 * its meta. The holder keeps its copies. fn returning < 0 stops the walk
 * (the descriptors not yet handed are closed) and is returned. Else the
 * number handed, or -errno.
 */
int holder_take(int hfd, int (*fn)(void *ctx, int fd, const void *meta, size_t len),
		void *ctx);
/* How many listeners the holder keeps, or -errno. */
int holder_count(int hfd);
/*
 * Makes the holder exit, closing its copies (sfilterd --uninstall), and
 * waits for it to be gone. Closes nothing of the caller's: hfd is still
 * the caller's to close. 0 or -errno.
 */
int holder_stop(int hfd);

#endif
