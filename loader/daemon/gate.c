// SPDX-License-Identifier: GPL-2.0-only
/*
 * The gate (docs/protocol.md, "The gate and the agent socket"): seccomp
 * listeners taken on the agent socket, and every call they send up judged
 * with the calling task's chain as it stands (sf_runtime_judge()) and
 * answered as the kernel would answer the chain's verdict.
 *
 * All on one thread of its own, beside the loop: nothing here waits on a
 * client. Every socket is non-blocking, every descriptor a sender chose
 * (and every agent connection, whose queue may hold more) is closed by
 * the closer (closer.c), and each ready listener has one notification
 * judged per turn, so that one busy filter cannot starve another. A judge
 * takes the runtime's lock for one iterator pass.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "daemon.h"
#include "gate_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

struct gate g = { .evq_lock = PTHREAD_MUTEX_INITIALIZER, .agent_fd = -1, .stop_fd = -1,
		  .ev_fd = -1, .ep = -1 };

static struct gate_tag stop_tag = { GATE_STOP };

uint64_t gate_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int gate_watch(int fd, uint32_t events, struct gate_tag *tag)
{
	struct epoll_event ev = { .events = events, .data.ptr = tag };

	return epoll_ctl(g.ep, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

/* ---- events, for the loop's log ----------------------------------------- */

/* Each login user (the BPF side's account, struct sf_acct) may have as
 * many gate events logged as the kernel's own, from the same budget: a task
 * that makes denied calls in a loop must not flood the log, whatever uids
 * its user's namespaces give it. What the budget refuses is counted lost for
 * the account, as the kernel's drops are. */
static bool within_budget(const struct sf_event *ev)
{
	return sf_runtime_charge_events(sfd.rt, ev->account, SF_EV_CLASS(ev->taken), 1, true) != 0;
}

static void queue_event(const struct sf_event *ev)
{
	uint64_t one = 1;

	if (!within_budget(ev)) {
		__atomic_add_fetch(&g.st.events_dropped, 1, __ATOMIC_RELAXED);
		return;
	}
	pthread_mutex_lock(&g.evq_lock);
	if (g.evq_n == GATE_EVQ) {
		pthread_mutex_unlock(&g.evq_lock);
		__atomic_add_fetch(&g.st.events_dropped, 1, __ATOMIC_RELAXED);
		return;
	}
	g.evq[(g.evq_head + g.evq_n++) % GATE_EVQ] = *ev;
	pthread_mutex_unlock(&g.evq_lock);
	(void)!write(g.ev_fd, &one, sizeof(one));
}

void gate_ready(void)
{
	struct sf_event batch[64];
	uint64_t v;
	unsigned int n, i;

	(void)!read(g.ev_fd, &v, sizeof(v));
	do {
		pthread_mutex_lock(&g.evq_lock);
		for (n = 0; n < 64 && g.evq_n; n++, g.evq_n--)
			batch[n] = g.evq[g.evq_head++ % GATE_EVQ];
		pthread_mutex_unlock(&g.evq_lock);
		for (i = 0; i < n; i++)
			eventlog_event(&batch[i]);
	} while (n == 64);
}

/* ---- judging ------------------------------------------------------------- */

void gate_decide(struct gate_listener *l, const struct sf_gate_call *call)
{
	uint64_t cgroup = l->cgroup;
	struct sf_gate_outcome o;
	struct sf_event ev;

	/* The listener's cgroup, for --metrics' labels: its first caller's,
	 * read while that call is pending, and kept once the call was
	 * answered (a notification answered was still that task's, so the
	 * tid read was the caller's). Once per listener, not per call: the
	 * read costs ~18 us on these hosts, half the daemon's part of a
	 * round trip, and a container's tasks share the container's cgroup.
	 * Never used to decide anything. */
	if (!l->cgroup_read)
		cgroup = metrics_cgroup_of(call->tid);
	if (sf_runtime_gate_decide(sfd.rt, l->fd, l->killable, call, &o))
		return;
	if (!l->cgroup_read && o.taken != SF_GATE_GONE) {
		l->cgroup = cgroup;
		l->cgroup_read = true;
	}
	__atomic_add_fetch(&g.st.judged, 1, __ATOMIC_RELAXED);
	switch (o.taken) {
	case SF_GATE_CONTINUED: __atomic_add_fetch(&g.st.continued, 1, __ATOMIC_RELAXED); break;
	case SF_GATE_UNJUDGED: __atomic_add_fetch(&g.st.unjudged, 1, __ATOMIC_RELAXED); break;
	case SF_GATE_DENIED: __atomic_add_fetch(&g.st.denied, 1, __ATOMIC_RELAXED); break;
	case SF_GATE_TRAPPED: __atomic_add_fetch(&g.st.trapped, 1, __ATOMIC_RELAXED); break;
	case SF_GATE_KILLED: __atomic_add_fetch(&g.st.killed, 1, __ATOMIC_RELAXED); break;
	case SF_GATE_GONE: break;
	}
	if (sf_runtime_gate_event(&o, &ev)) {
		/* Every call counts; repeats fold before the budget: a loop of
		 * one gated call costs its user one event an interval. */
		metrics_gate_event(cgroup, &ev);
		if (eventagg_gate_fold(&ev))
			queue_event(&ev);
	}
}

/* One notification from l: received into its record (for a successor,
 * should this daemon die before it answers), judged, answered. */
static void judge_one(struct gate_listener *l)
{
	struct gate_slot *s = l->slot;
	struct sf_gate_call call;
	uint64_t t0;
	int r;

	if (s)
		__atomic_store_n(&s->inflight, 1, __ATOMIC_RELEASE);
	r = sf_runtime_gate_recv(l->fd, s ? s->notif : NULL, s ? sizeof(s->notif) : 0, &call);
	if (r) {
		if (s)
			__atomic_store_n(&s->inflight, 0, __ATOMIC_RELEASE);
		return; /* the task was interrupted, or died */
	}
	t0 = metrics_now_ns();
	if (s)
		s->last_id = call.id;
	gate_decide(l, &call);
	metrics_gate(t0);
	if (s)
		__atomic_store_n(&s->inflight, 0, __ATOMIC_RELEASE);
}

void gate_drop_listener(struct gate_listener *l)
{
	gate_unhold(l);
	epoll_ctl(g.ep, EPOLL_CTL_DEL, l->fd, NULL);
	close(l->fd); /* a seccomp listener's release never waits */
	l->fd = -1;
	__atomic_sub_fetch(&g.st.listeners, 1, __ATOMIC_RELAXED);
	gate_listener_free(l);
}

int gate_add_listener(int fd, const struct login *who, pid_t pid, const char *what,
		      bool killable, struct gate_listener **out)
{
	struct gate_listener *l;
	int r;

	if (gate_listener_count(who) >= GATE_PER_LOGIN ||
	    __atomic_load_n(&g.st.listeners, __ATOMIC_RELAXED) >= GATE_MAX)
		return -ENOSPC;
	l = gate_listener_new(who);
	if (!l)
		return -ENOMEM;
	l->tag.kind = GATE_LISTENER;
	l->fd = fd;
	l->pid = pid;
	l->killable = killable;
	snprintf(l->what, sizeof(l->what), "%s", what ? what : "");
	r = gate_watch(fd, EPOLLIN, &l->tag);
	if (r) {
		l->fd = -1;
		gate_listener_free(l);
		return r;
	}
	__atomic_add_fetch(&g.st.listeners, 1, __ATOMIC_RELAXED);
	gate_listener_registered(l);
	if (out)
		*out = l;
	return 0;
}

/* ---- the thread ---------------------------------------------------------- */

static void *gate_loop(void *arg)
{
	(void)arg;
	for (;;) {
		struct epoll_event evs[64];
		int n = epoll_wait(g.ep, evs, 64, 200), i;

		for (i = 0; i < n; i++) {
			struct gate_tag *t = evs[i].data.ptr;

			switch (t->kind) {
			case GATE_STOP:
				return NULL;
			case GATE_AGENT:
				agent_accept();
				break;
			case GATE_AGENT_CONN:
				agent_read((struct agent_conn *)t);
				break;
			case GATE_LISTENER: {
				struct gate_listener *l = (struct gate_listener *)t;

				if (evs[i].events & EPOLLIN)
					judge_one(l);
				else if (evs[i].events & (EPOLLHUP | EPOLLERR))
					gate_drop_listener(l); /* no task left under it */
				break;
			}
			}
		}
		agent_sweep(gate_now_ms());
		gate_listener_reap();
		/* A holder that did not answer is asked again (with a
		 * backoff): until then a pinned daemon takes no gate, and
		 * what the holder keeps is heard by nobody. */
		gate_holder_ready();
	}
	return NULL;
}

int gate_listen(void)
{
	char path[PATH_MAX];
	int r = sf_proto_agent_path(sfd.socket_path, path, sizeof(path));

	if (r) {
		diag("agent socket for %s: %s", sfd.socket_path, strerror(-r));
		return r;
	}
	g.agent_fd = agent_socket(path);
	if (g.agent_fd < 0)
		return g.agent_fd;
	snprintf(g.agent_path, sizeof(g.agent_path), "%s", path);
	return 0;
}

int gate_start(void)
{
	static struct gate_tag agent_tag = { GATE_AGENT };
	int r;

	g.ep = epoll_create1(EPOLL_CLOEXEC);
	g.stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	g.ev_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (g.ep < 0 || g.stop_fd < 0 || g.ev_fd < 0)
		return -ENOMEM;
	if ((r = gate_watch(g.stop_fd, EPOLLIN, &stop_tag)) ||
	    (g.agent_fd >= 0 && (r = gate_watch(g.agent_fd, EPOLLIN, &agent_tag))))
		return r;
	gate_hold_start();
	r = pthread_create(&g.thread, NULL, gate_loop, NULL);
	if (r)
		return -r;
	g.running = true;
	return g.ev_fd;
}

void gate_stop(void)
{
	uint64_t one = 1;

	if (g.running) {
		(void)!write(g.stop_fd, &one, sizeof(one));
		pthread_join(g.thread, NULL);
		g.running = false;
	}
	agent_close_all();
	gate_listener_close_all();
	gate_hold_stop();
	if (g.agent_fd >= 0) {
		close(g.agent_fd);
		unlink(g.agent_path);
		g.agent_fd = -1;
	}
	if (g.ev_fd >= 0)
		gate_ready();
}

uint64_t gate_held(void)
{
	return __atomic_load_n(&g.st.listeners, __ATOMIC_RELAXED);
}

struct json_object *gate_status_json(void)
{
	struct json_object *o = json_object_new_object();

#define N(field) json_object_object_add(o, #field, json_object_new_int64( \
		(int64_t)__atomic_load_n(&g.st.field, __ATOMIC_RELAXED)))
	N(listeners);
	N(judged);
	N(continued);
	N(denied);
	N(trapped);
	N(killed);
	N(unjudged);
	N(refused);
	N(events_dropped);
	N(taken_back);
	N(recovered);
#undef N
	json_object_object_add(o, "agent_socket", json_object_new_string(g.agent_path));
	json_object_object_add(o, "held_by_holder", json_object_new_boolean(g.holder_fd >= 0));
	return o;
}
