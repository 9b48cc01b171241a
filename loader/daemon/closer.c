// SPDX-License-Identifier: GPL-2.0-only
/*
 * Descriptors a client sent that the daemon did not ask for, closed on a
 * thread of their own.
 *
 * The file a descriptor names is the sender's choice, and so is how long
 * closing it takes: the last close of a TCP socket with SO_LINGER and
 * unsent data waits in sk_stream_wait_close() for up to the linger time;
 * every close of a FUSE file waits for its server to answer FLUSH
 * (fuse_flush()); the last close of a Unix socket releases whatever its
 * queue holds, the same way. The serving thread never closes one (nor lets
 * the kernel drop one on its way out, which is a last close too): it hands
 * it here, where the wait holds this thread only.
 *
 * A socket is first made to close at once (SO_LINGER {1, 0}: tcp_close()
 * resets the connection instead of waiting), which defuses the common
 * case; for the rest, what waits here is bounded per login user
 * (CLOSER_PER_LOGIN: conn.c then refuses and closes that user's
 * connections) and counted in all.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "daemon.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

struct closing {
	struct closing *next;
	int fd;
	struct login who;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	/* Oldest first; the head stays until its close has returned, so
	 * that a close under way still counts. */
	struct closing *head, *tail;
	unsigned int total;
	bool started, failed;
	uint64_t leaked;
} q = { .lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER };

static void *closer_loop(void *arg)
{
	static const struct linger now = { 1, 0 };
	struct closing *c;

	(void)arg;
	pthread_mutex_lock(&q.lock);
	for (;;) {
		while (!q.head)
			pthread_cond_wait(&q.wake, &q.lock);
		c = q.head;
		pthread_mutex_unlock(&q.lock);
		/* Not a socket (ENOTSOCK), or one without linger: no harm. */
		setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &now, sizeof(now));
		close(c->fd);
		pthread_mutex_lock(&q.lock);
		q.head = c->next;
		if (!q.head)
			q.tail = NULL;
		q.total--;
		free(c);
	}
	return NULL;
}

/* Under q.lock. */
static bool start(void)
{
	pthread_attr_t attr;
	pthread_t t;
	sigset_t all, old;

	if (q.started || q.failed)
		return q.started;
	/* Signals are the loop's (a signalfd); the thread inherits the mask
	 * it is created with. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	q.started = pthread_create(&t, &attr, closer_loop, NULL) == 0;
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!q.started) {
		q.failed = true;
		diag("no closer thread: descriptors sent without being asked for are "
		     "kept open, never closed");
	}
	return q.started;
}

void closer_take(int fd, const struct login *who)
{
	struct closing *c;

	if (fd < 0)
		return;
	pthread_mutex_lock(&q.lock);
	c = start() ? malloc(sizeof(*c)) : NULL;
	if (!c) {
		/* Left open rather than closed here: a leak of one
		 * descriptor, never a wait of the loop. */
		q.leaked++;
		pthread_mutex_unlock(&q.lock);
		return;
	}
	*c = (struct closing){ .fd = fd, .who = *who };
	if (q.tail)
		q.tail->next = c;
	else
		q.head = c;
	q.tail = c;
	q.total++;
	pthread_cond_signal(&q.wake);
	pthread_mutex_unlock(&q.lock);
}

unsigned int closer_pending(const struct login *who)
{
	const struct closing *c;
	unsigned int n = 0;

	pthread_mutex_lock(&q.lock);
	for (c = q.head; c; c = c->next)
		n += login_eq(&c->who, who);
	pthread_mutex_unlock(&q.lock);
	return n;
}

unsigned int closer_total(void)
{
	unsigned int n;

	pthread_mutex_lock(&q.lock);
	n = q.total;
	pthread_mutex_unlock(&q.lock);
	return n;
}
