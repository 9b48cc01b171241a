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
 * checks that it is still pending). The kernel writes the call into the
 * record itself (NOTIF_RECV's buffer is the record, in the shared file),
 * and the record says a receive was begun before it is: a daemon dies
 * either before the receive, and the call is received again, or after
 * it, and the record has it. Only a kernel whose notification outgrows
 * the record is received privately and copied; should a daemon die in
 * between, the successor finds the call among the ids after the last
 * recorded one (the kernel numbers a filter's notifications in order,
 * seccomp_next_notify_id()) and, not knowing what it was, continues it:
 * the dispatcher judges it at the tier's strength.
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

/* A daemon whose holder did not answer asks again, after 1 s, then
 * twice as long each time up to 30 s: the gate thread, which also judges
 * calls, waits for each try (2 s for one that accepts and never answers). */
#define REOPEN_FIRST_MS 1000
#define REOPEN_MAX_MS   30000

static void take_back(void);

/* The holder's connection, opened again if it is not open: the listeners
 * it kept meanwhile (a predecessor's, which this daemon could not take
 * at its start) are then taken back, so that their calls are heard. */
static int holder(void)
{
	static uint64_t next_ms, every_ms = REOPEN_FIRST_MS;
	static bool lost;

	if (g.holder_fd >= 0 || !holder_path[0] || gate_now_ms() < next_ms)
		return g.holder_fd;
	g.holder_fd = holder_open(holder_path);
	if (g.holder_fd >= 0) {
		every_ms = REOPEN_FIRST_MS;
		if (lost)
			diag("gate: listener holder at %s answers again", holder_path);
		lost = false;
		take_back();
	} else {
		lost = true;
		next_ms = gate_now_ms() + every_ms;
		every_ms = every_ms * 2 > REOPEN_MAX_MS ? REOPEN_MAX_MS : every_ms * 2;
	}
	return g.holder_fd;
}

bool gate_holder_ready(void)
{
	return holder() >= 0;
}

/* The holder keeps a copy of l's listener: 0, or -errno. */
static int put(struct gate_listener *l)
{
	struct gate_meta m = {
		.magic = GATE_META_MAGIC, .key = l->key, .who = l->who, .pid = l->pid,
		.killable = l->killable,
		.slot = l->slot ? (uint32_t)(l->slot - g.slots) : UINT32_MAX,
	};
	int r;

	snprintf(m.what, sizeof(m.what), "%s", l->what);
	if ((r = holder()) < 0)
		return r;
	r = holder_put(g.holder_fd, l->fd, &m, sizeof(m));
	if (r == -EPIPE || r == -ECONNRESET || r == -ETIMEDOUT) {
		/* The holder went away: start another, once. */
		close(g.holder_fd);
		g.holder_fd = holder_open(holder_path);
		r = g.holder_fd >= 0 ? holder_put(g.holder_fd, l->fd, &m, sizeof(m)) : g.holder_fd;
	}
	return r;
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

int gate_hold(struct gate_listener *l)
{
	claim_slot(l);
	return put(l);
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
		struct sf_gate_call call;

		/* A receive begun: its call, if the kernel wrote one, and
		 * unless it was answered. */
		if (sf_runtime_gate_call_of(s->notif, sizeof(s->notif), &call) == 0 &&
		    ioctl(l->fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &call.id) == 0) {
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

	/* Taken back late (holder()), the holder also hands over what this
	 * daemon holds already: a second registration would share a record. */
	if (len != sizeof(*m) || m->magic != GATE_META_MAGIC || gate_listener_known(m->key)) {
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

/* Takes back what the holder keeps: a killed predecessor's listeners,
 * answering the calls it received. Records no listener claims are a dead
 * daemon's, of listeners gone since. */
static void take_back(void)
{
	bool *claimed = calloc(GATE_MAX, sizeof(bool));
	struct gate_listener *l;
	size_t i;
	int r;

	if (!claimed || g.holder_fd < 0) {
		free(claimed);
		return;
	}
	for (l = gate_listeners(); l; l = l->next)
		if (l->fd >= 0 && l->slot)
			claimed[l->slot - g.slots] = true;
	r = holder_take(g.holder_fd, take_one, claimed);
	if (r > 0)
		diag("gate: %d listeners taken back from the holder", r);
	else if (r < 0)
		diag("gate: the holder's listeners: %s", strerror(-r));
	for (i = 0; r >= 0 && g.slots && i < GATE_MAX; i++)
		if (!claimed[i])
			memset(&g.slots[i], 0, sizeof(g.slots[i]));
	free(claimed);
}

void gate_hold_start(void)
{
	int r;

	g.holder_fd = -1;
	if ((r = open_records()) < 0)
		diag("gate: %s.gate: %s (not a private file of this daemon's user?); a "
		     "daemon killed while it judges a call leaves that call waiting "
		     "until its task is killed", sfd.socket_path, strerror(-r));
	snprintf(holder_path, sizeof(holder_path), "%s.holder", sfd.socket_path);
	if (holder() < 0)
		diag("gate: no listener holder at %s: %s (until one answers, a pinned daemon "
		     "takes no gate, and a predecessor's gated calls wait)", holder_path,
		     strerror(-g.holder_fd));
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
