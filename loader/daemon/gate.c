// SPDX-License-Identifier: GPL-2.0
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
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>
#include <linux/seccomp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

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

/* Each login user may have d.event_rate gate events a second logged,
 * d.event_burst at once (the BPF side's budget, kept here for the
 * events the daemon makes): a task that makes denied calls in a loop
 * must not flood the log. A bucket shared by two uids (a collision)
 * only makes both stricter. */
#define BUCKETS 256
static struct bucket { uid_t uid; double tokens; uint64_t at_ms; bool used; } buckets[BUCKETS];

static bool within_budget(uid_t uid)
{
	struct bucket *b = &buckets[(uid * 2654435761u) % BUCKETS];
	uint64_t now = gate_now_ms();

	if (!d.event_rate)
		return true;
	if (!b->used || b->uid != uid) {
		*b = (struct bucket){ .uid = uid, .tokens = d.event_burst, .at_ms = now,
				      .used = true };
	}
	b->tokens += (double)(now - b->at_ms) * d.event_rate / 1000.0;
	if (b->tokens > d.event_burst)
		b->tokens = d.event_burst;
	b->at_ms = now;
	if (b->tokens < 1)
		return false;
	b->tokens -= 1;
	return true;
}

static void queue_event(const struct sf_event *ev)
{
	uint64_t one = 1;

	if (!within_budget(ev->uid)) {
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

static struct seccomp_notif_sizes sizes;
static struct seccomp_notif *notif;
static struct seccomp_notif_resp *resp;

static bool id_valid(int fd, uint64_t id)
{
	return ioctl(fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

static int answer(int fd, uint64_t id, int64_t val, int32_t error, uint32_t flags)
{
	memset(resp, 0, sizes.seccomp_notif_resp);
	resp->id = id;
	resp->val = val;
	resp->error = error;
	resp->flags = flags;
	return ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, resp) == 0 ? 0 : -errno;
}

/* SIGSYS blocked or ignored by thread tid: then the kernel's force_sig()
 * would kill the process rather than run a handler. An unreadable status
 * counts as blocked (fail closed: the process is killed). */
static bool sigsys_refused(pid_t tid)
{
	char path[64], line[256];
	unsigned long long mask;
	bool refused = true;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "re");
	if (!f)
		return true;
	refused = false;
	while (fgets(line, sizeof(line), f)) {
		if ((sscanf(line, "SigBlk: %llx", &mask) == 1 ||
		     sscanf(line, "SigIgn: %llx", &mask) == 1) &&
		    (mask & (1ULL << (SIGSYS - 1))))
			refused = true;
	}
	fclose(f);
	return refused;
}

/* SIGKILL to tid's process, while notification id (on fd) is still that
 * task's: then the process cannot have been replaced under its pid. The
 * call never runs: the task dies in its wait. False when it is gone. */
static bool kill_process(int fd, uint64_t id, pid_t tgid)
{
	int pfd = (int)syscall(SYS_pidfd_open, tgid, 0);
	bool done = false;

	if (pfd < 0)
		return false;
	if (id_valid(fd, id))
		done = syscall(SYS_pidfd_send_signal, pfd, SIGKILL, NULL, 0) == 0;
	close(pfd);
	return done;
}

/* SIGSYS to thread tid as the kernel's force_sig_seccomp() fills it, but
 * for si_code: only the kernel may send a positive one (a sender from
 * another process gets EPERM in do_rt_tgsigqueueinfo()). */
static void send_sigsys(pid_t tgid, pid_t tid, const struct seccomp_data *sd, uint32_t ret)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	si.si_signo = SIGSYS;
	si.si_code = SI_QUEUE;
	si.si_errno = (int)(ret & SECCOMP_RET_DATA);
	si.si_call_addr = (void *)(uintptr_t)sd->instruction_pointer;
	si.si_syscall = sd->nr;
	si.si_arch = sd->arch;
	syscall(SYS_rt_tgsigqueueinfo, tgid, tid, SIGSYS, &si);
}

static void record(const struct seccomp_notif *n, const struct sf_judgement *j,
		   uint16_t taken, uint16_t err, uint8_t sig)
{
	struct sf_event ev = { 0 };
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	ev.time_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	ev.pid = (uint32_t)j->tgid;
	ev.tid = n->pid;
	memcpy(ev.comm, j->comm, sizeof(ev.comm));
	ev.nr = n->data.nr;
	ev.arch = n->data.arch;
	memcpy(ev.args, n->data.args, sizeof(ev.args));
	ev.ip = n->data.instruction_pointer;
	ev.ret = j->ret;
	ev.filter_id = j->filter_id;
	ev.taken = taken;
	ev.tier = SF_BPF_TIER_GATE;
	ev.flags = (uint16_t)j->flags;
	ev.err = err;
	ev.signal = sig;
	ev.uid = j->euid;
	ev.enforced = j->ret;
	ev.insn = SF_INSN_NONE;
	ev.account = j->euid;
	ev.start_ns = j->leader_boot;
	ev.exec_id = j->exec_id;
	queue_event(&ev);
}

/* One notification from l: received, judged, answered. */
static void judge_one(struct gate_listener *l)
{
	struct sf_judgement j;
	uint32_t action;
	int r;

	memset(notif, 0, sizes.seccomp_notif);
	if (ioctl(l->fd, SECCOMP_IOCTL_NOTIF_RECV, notif) < 0)
		return; /* ENOENT: the task was interrupted, or died */
	__atomic_add_fetch(&g.st.judged, 1, __ATOMIC_RELAXED);
	l->judged++;
	r = notif->pid ? sf_runtime_judge(d.rt, (pid_t)notif->pid, &notif->data, &j) : -ESRCH;
	if (r || !j.exact) {
		/* Not ours to decide (no such task in our view, a chain the
		 * judge cannot run): the dispatcher judges it at sys_enter,
		 * as it would without a gate. */
		__atomic_add_fetch(&g.st.continued, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&g.st.unjudged, 1, __ATOMIC_RELAXED);
		answer(l->fd, notif->id, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
		return;
	}
	/* The task might have gone and its tid been reused while the chain
	 * was read: the answer is only given while the notification is
	 * still that task's. */
	if (!id_valid(l->fd, notif->id))
		return;
	action = c2e_effective_action(j.ret);
	switch (action) {
	case SECCOMP_RET_ALLOW:
	case SECCOMP_RET_LOG:
		/* LOG: the dispatcher logs it when the call enters. */
		__atomic_add_fetch(&g.st.continued, 1, __ATOMIC_RELAXED);
		answer(l->fd, notif->id, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
		return;
	case SECCOMP_RET_ERRNO: {
		/* __seccomp_filter() caps the data at MAX_ERRNO. */
		uint32_t e = j.ret & SECCOMP_RET_DATA;

		if (e > 4095)
			e = 4095;
		__atomic_add_fetch(&g.st.denied, 1, __ATOMIC_RELAXED);
		if (answer(l->fd, notif->id, 0, -(int32_t)e, 0) == 0)
			record(notif, &j, SF_TAKEN_DENIED, (uint16_t)e, 0);
		return;
	}
	case SECCOMP_RET_TRACE:
	case SECCOMP_RET_USER_NOTIF:
		/* No tracer, no listener of the chain's own: the kernel's
		 * answer is ENOSYS. */
		__atomic_add_fetch(&g.st.denied, 1, __ATOMIC_RELAXED);
		if (answer(l->fd, notif->id, 0, -ENOSYS, 0) == 0)
			record(notif, &j, SF_TAKEN_DENIED, ENOSYS, 0);
		return;
	case SECCOMP_RET_TRAP:
		if (!sigsys_refused((pid_t)notif->pid)) {
			/* syscall_rollback() leaves the call's number as its
			 * return value; SIGSYS follows at once. */
			__atomic_add_fetch(&g.st.trapped, 1, __ATOMIC_RELAXED);
			if (answer(l->fd, notif->id, notif->data.nr, 0, 0) == 0) {
				send_sigsys(j.tgid, (pid_t)notif->pid, &notif->data, j.ret);
				record(notif, &j, SF_TAKEN_TRAPPED, 0, SIGSYS);
			}
			return;
		}
		/* force_sig() on a blocked or ignored SIGSYS kills. */
		/* fallthrough */
	default:
		/* KILL_PROCESS, KILL_THREAD (a thread alone cannot be
		 * killed from outside: its process is), unknown actions. */
		__atomic_add_fetch(&g.st.killed, 1, __ATOMIC_RELAXED);
		if (kill_process(l->fd, notif->id, j.tgid))
			record(notif, &j, SF_TAKEN_KILLED, 0, SIGKILL);
		else if (id_valid(l->fd, notif->id))
			answer(l->fd, notif->id, 0, -ENOSYS, 0); /* never runs */
		return;
	}
}

/* ---- listeners ----------------------------------------------------------- */

static void drop_listener(struct gate_listener *l)
{
	epoll_ctl(g.ep, EPOLL_CTL_DEL, l->fd, NULL);
	close(l->fd); /* a seccomp listener's release never waits */
	l->fd = -1;
	__atomic_sub_fetch(&g.st.listeners, 1, __ATOMIC_RELAXED);
	gate_listener_free(l);
}

int gate_add_listener(int fd, const struct login *who, pid_t pid, const char *what)
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
	snprintf(l->what, sizeof(l->what), "%s", what ? what : "");
	r = gate_watch(fd, EPOLLIN, &l->tag);
	if (r) {
		l->fd = -1;
		gate_listener_free(l);
		return r;
	}
	__atomic_add_fetch(&g.st.listeners, 1, __ATOMIC_RELAXED);
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
					drop_listener(l); /* no task left under it */
				break;
			}
			}
		}
		agent_sweep(gate_now_ms());
		gate_listener_reap();
	}
	return NULL;
}

int gate_listen(void)
{
	char path[PATH_MAX];
	int r = sf_proto_agent_path(d.socket_path, path, sizeof(path));

	if (r) {
		diag("agent socket for %s: %s", d.socket_path, strerror(-r));
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

	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0) {
		diag("the gate is off: SECCOMP_GET_NOTIF_SIZES: %s", strerror(errno));
		return -errno;
	}
	if (sizes.seccomp_notif < sizeof(*notif))
		sizes.seccomp_notif = sizeof(*notif);
	if (sizes.seccomp_notif_resp < sizeof(*resp))
		sizes.seccomp_notif_resp = sizeof(*resp);
	notif = calloc(1, sizes.seccomp_notif);
	resp = calloc(1, sizes.seccomp_notif_resp);
	g.ep = epoll_create1(EPOLL_CLOEXEC);
	g.stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	g.ev_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!notif || !resp || g.ep < 0 || g.stop_fd < 0 || g.ev_fd < 0)
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
	if (g.agent_fd >= 0) {
		close(g.agent_fd);
		unlink(g.agent_path);
		g.agent_fd = -1;
	}
	if (g.ev_fd >= 0)
		gate_ready();
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
#undef N
	json_object_object_add(o, "agent_socket", json_object_new_string(g.agent_path));
	json_object_object_add(o, "held_by_holder", json_object_new_boolean(g.holder_fd >= 0));
	return o;
}
