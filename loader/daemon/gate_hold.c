// SPDX-License-Identifier: GPL-2.0-only
/*
 * The gate across restarts: every listener the daemon takes is also kept
 * by the holder (holder.c), so that a daemon killed (-9) loses none, and
 * each has a record in <socket>.gate, a file mapped shared, that says
 * which call it received and has not answered yet.
 *
 * A call notified while no daemon is up waits in the kernel; the next
 * daemon takes the listener back and receives it as any other. A call the
 * dead daemon had received cannot be received again: the record gives it
 * to the successor, which judges and answers it (sf_runtime_gate_decide()
 * checks that it is still pending). The record is written right after the
 * receive; should a daemon die between the two, the successor finds the
 * call among the ids after the last recorded one (the kernel numbers a
 * filter's notifications in order, seccomp_next_notify_id()) and, not
 * knowing what it was, continues it: the dispatcher judges it at the
 * tier's strength, and it never waits for good.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "gate_internal.h"
#include "holder.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>

/* Ids after the last recorded one that the successor looks at: a daemon
 * receives one call of a listener at a time, so one is enough; the rest
 * is margin. */
#define GATE_SCAN_IDS 64

static char holder_path[PATH_MAX];

static int open_records(void)
{
	char path[PATH_MAX];
	size_t size = GATE_MAX * sizeof(struct gate_slot);
	struct stat st;
	void *m;
	int fd;

	snprintf(path, sizeof(path), "%s.gate", sfd.socket_path);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
	if (fd < 0)
		return -errno;
	/* What it says decides which calls a successor answers, and how:
	 * only a file of the daemon's own that no one else can reach (the
	 * socket's directory may be anyone's). */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    st.st_nlink != 1 || (st.st_mode & 077)) {
		close(fd);
		return -EPERM;
	}
	if (ftruncate(fd, (off_t)size) < 0) {
		close(fd);
		return -errno;
	}
	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -errno;
	g.slots = m;
	return 0;
}

static void meta_of(const struct gate_listener *l, struct gate_meta *m)
{
	*m = (struct gate_meta){
		.magic = GATE_META_MAGIC, .key = l->key, .who = l->who, .pid = l->pid,
		.killable = l->killable,
		.slot = l->slot ? (uint32_t)(l->slot - g.slots) : UINT32_MAX,
	};
	snprintf(m->what, sizeof(m->what), "%s", l->what);
}

static void put_failed(const struct gate_listener *l, int r)
{
	diag("gate: the holder does not keep listener %s: %s (a restart of the daemon "
	     "would answer its calls ENOSYS)", l->what, strerror(-r));
}

/* The holder went away: another one started, once, and given l. */
static void put_again(struct gate_listener *l, const struct gate_meta *m)
{
	int r;

	close(g.holder_fd);
	g.holder_fd = holder_open(holder_path);
	r = g.holder_fd >= 0 ? holder_put(g.holder_fd, l->fd, m, sizeof(*m)) : g.holder_fd;
	if (r)
		put_failed(l, r);
}

static bool holder_gone(int r)
{
	return r == -EPIPE || r == -ECONNRESET || r == -ETIMEDOUT;
}

/* A free record for l, if there is one. */
static void claim_slot(struct gate_listener *l)
{
	size_t i;

	if (!l->key && getrandom(&l->key, sizeof(l->key), 0) != sizeof(l->key))
		l->key = (uint64_t)gate_now_ms() ^ ((uint64_t)l->fd << 48);
	l->key |= 1;
	for (i = 0; g.slots && !l->slot && i < GATE_MAX; i++)
		if (!g.slots[i].key) {
			memset(&g.slots[i], 0, sizeof(g.slots[i]));
			g.slots[i].key = l->key;
			l->slot = &g.slots[i];
		}
}

int gate_hold_send(struct gate_listener *l, uint64_t *seq)
{
	struct gate_meta m;
	int r;

	claim_slot(l);
	if (g.holder_fd < 0)
		return -ENOTCONN;
	meta_of(l, &m);
	r = holder_put_send(g.holder_fd, l->fd, &m, sizeof(m), seq);
	if (holder_gone(r)) {
		put_again(l, &m);
		return -ENOTCONN;
	}
	if (r)
		put_failed(l, r);
	return r;
}

void gate_hold_wait(struct gate_listener *l, uint64_t seq)
{
	struct gate_meta m;
	int r = holder_put_wait(g.holder_fd, seq);

	if (holder_gone(r)) {
		meta_of(l, &m);
		put_again(l, &m);
	} else if (r) {
		put_failed(l, r);
	}
}

void gate_unhold(struct gate_listener *l)
{
	if (l->slot) {
		memset(l->slot, 0, sizeof(*l->slot));
		l->slot = NULL;
	}
}

/* The calls a predecessor received from l and never answered. */
static void recover(struct gate_listener *l)
{
	struct gate_slot *s = l->slot;
	uint64_t id, last;
	int k;

	if (!s)
		return;
	last = s->last_id;
	if (__atomic_load_n(&s->inflight, __ATOMIC_ACQUIRE)) {
		struct sf_gate_call call = s->call;

		if (ioctl(l->fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &call.id) == 0) {
			__atomic_add_fetch(&g.st.recovered, 1, __ATOMIC_RELAXED);
			gate_decide(l, &call);
		}
		s->inflight = 0;
	}
	for (k = 1, id = last + 1; last && k <= GATE_SCAN_IDS; k++, id++) {
		struct seccomp_notif_resp r = {
			.id = id, .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE,
		};

		if (ioctl(l->fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) != 0)
			continue;
		/* Received, never recorded, never answered: continued, for
		 * the dispatcher to judge. */
		if (ioctl(l->fd, SECCOMP_IOCTL_NOTIF_SEND, &r) == 0) {
			__atomic_add_fetch(&g.st.recovered, 1, __ATOMIC_RELAXED);
			__atomic_add_fetch(&g.st.unjudged, 1, __ATOMIC_RELAXED);
		}
	}
}

static int take_one(void *ctx, int fd, const void *meta, size_t len)
{
	const struct gate_meta *m = meta;
	struct gate_listener *l;
	bool *claimed = ctx;
	int r;

	if (len != sizeof(*m) || m->magic != GATE_META_MAGIC) {
		close(fd);
		return 0;
	}
	r = gate_add_listener(fd, &m->who, m->pid, m->what, m->killable, &l);
	if (r) {
		close(fd);
		return 0;
	}
	l->key = m->key;
	if (g.slots && m->slot < GATE_MAX && g.slots[m->slot].key == m->key) {
		l->slot = &g.slots[m->slot];
	} else {
		/* Its record may have moved (a daemon that found none for it
		 * gave it another): found by its key. */
		size_t i;

		for (i = 0; g.slots && i < GATE_MAX && !l->slot; i++)
			if (g.slots[i].key == m->key && !claimed[i])
				l->slot = &g.slots[i];
	}
	if (l->slot)
		claimed[l->slot - g.slots] = true;
	__atomic_add_fetch(&g.st.taken_back, 1, __ATOMIC_RELAXED);
	recover(l);
	if (!l->slot)
		claim_slot(l); /* a record from now on: the holder keeps it already */
	return 0;
}

void gate_hold_start(void)
{
	bool *claimed = calloc(GATE_MAX, sizeof(bool));
	size_t i;
	int r;

	g.holder_fd = -1;
	if ((r = open_records()) < 0)
		diag("gate: %s.gate: %s (not a private file of this daemon's user?); a "
		     "daemon killed while it judges a call leaves that call waiting "
		     "until its task is killed", sfd.socket_path, strerror(-r));
	snprintf(holder_path, sizeof(holder_path), "%s.holder", sfd.socket_path);
	g.holder_fd = holder_open(holder_path);
	if (g.holder_fd < 0) {
		diag("gate: no listener holder at %s: %s (a restart of the daemon would "
		     "answer gated calls ENOSYS)", holder_path, strerror(-g.holder_fd));
	} else if (claimed) {
		r = holder_take(g.holder_fd, take_one, claimed);
		if (r > 0)
			diag("gate: %d listeners taken back from the holder", r);
		else if (r < 0)
			diag("gate: the holder's listeners: %s", strerror(-r));
	}
	/* Records no listener claimed are a dead daemon's, of listeners
	 * gone since. */
	for (i = 0; g.slots && claimed && i < GATE_MAX; i++)
		if (!claimed[i])
			memset(&g.slots[i], 0, sizeof(g.slots[i]));
	free(claimed);
}

void gate_hold_stop(void)
{
	if (g.holder_fd < 0)
		return;
	if (!sfd.pinned)
		holder_stop(g.holder_fd);
	close(g.holder_fd);
	g.holder_fd = -1;
}

void gate_uninstall(void)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s.holder", sfd.socket_path);
	if (access(path, F_OK) == 0 && (fd = holder_open(path)) >= 0) {
		holder_stop(fd);
		close(fd);
	}
	snprintf(path, sizeof(path), "%s.gate", sfd.socket_path);
	unlink(path);
}
