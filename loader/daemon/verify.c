// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a new chain costs, off the loop. An attach that no task has made on
 * that chain before needs a new chain program, and the kernel's verifier
 * checks it as it loads: milliseconds, tens of them for a 4,096-instruction
 * filter, hundreds under emulation. On the loop, a uid sending such
 * attaches as fast as its rate allows would make everyone else wait. So:
 *
 *   - ATTACH and ADMIN_ATTACH (to a process or to a cgroup) ask the
 *     runtime first with SF_ATTACH_LOADED: a chain already loaded (or a
 *     cgroup's spare) is attached on the loop, as before; one that is not
 *     becomes a job for the verifier's thread, and its connection is held
 *     (nothing more is read from it) until it is answered.
 *   - The verifier makes the jobs' runtime calls, which load the program
 *     without the runtime's lock (loader/runtime/chains.c), so that STATUS,
 *     PS and the attaches of loaded chains go on meanwhile.
 *   - A login user (struct login: the uids a user maps count as the user)
 *     has one job at a time (and one settle job: below). An attach
 *     request of one that has a job is
 *     parked (its connection held too) and handled on the loop, in the
 *     order they came, once that job is answered. The jobs are thus taken
 *     in turn, one per login user: another's attach waits for at most the
 *     one verification under way and one per other user queued before it,
 *     however many requests one user sends; and the per-user limits see
 *     each attach of a user before they judge its next one.
 *   - The verifier hands a job back through an eventfd in the loop's epoll
 *     set; the loop answers it (attach.c, admin.c). The caller's arm is set
 *     by the runtime call and its reply sent after it, as before.
 *   - A second thread, at the lowest priority, computes the action tables
 *     the runtime defers (a cache: until a table is filled its chain runs);
 *     one piece is bounded, but pieces of large filters add up to seconds.
 *   - A gated ATTACH of a new chain is answered on a stand-in, before any
 *     verification (loader/runtime/standin.c), and a settle job loads its
 *     program; a user's attaches of loaded chains go on meanwhile, its new
 *     ones are verified in its turn, not stood in.
 *   - A new chain is loaded in its linear form, which the verifier checks
 *     faster, and the reply goes out with it in force. The same thread,
 *     after the tables, loads each such chain's searched form (fewer
 *     compares a call) and swaps it into the chain's slot
 *     (sf_runtime_upgrade_chains()): a cache too, made of CPU nobody else
 *     wants, so that it never delays an attach, and a flood of new
 *     filters is not verified twice while it lasts (its chains judge
 *     alike meanwhile, each call with more compares).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "daemon.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>

/* The loop's alone: a login user with a job (busy) or with parked requests. */
struct parked {
	struct parked *next;
	struct client *c;
	struct ancillary anc;
	int msg_flags;
	size_t n;
	uint64_t bytes[];
};
struct account {
	struct account *next;
	struct login login;     /* whose turn: the connection's login user */
	bool busy;
	bool settling;          /* a settle job: no attach waits for it, but
				   none of the user's is stood in meanwhile */
	struct parked *head, *tail;
};
static struct account *accounts;

/* Jobs in the order they came. */
struct queue {
	struct verify_job *head, *tail;
};

static void push(struct queue *q, struct verify_job *j)
{
	j->next = NULL;
	if (q->tail)
		q->tail->next = j;
	else
		q->head = j;
	q->tail = j;
}

static struct verify_job *pop(struct queue *q)
{
	struct verify_job *j = q->head;

	if (j && !(q->head = j->next))
		q->tail = NULL;
	return j;
}

/* Shared with the threads, under v.lock. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t work, tables;
	struct queue todo, done;
	bool stop, tables_due;
	pthread_t verifier, filler;
	bool verifier_on, filler_on;
} v = { .lock = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER,
	.tables = PTHREAD_COND_INITIALIZER };
static int efd = -1;

static struct account *account(const struct login *login, bool make)
{
	struct account *a;

	for (a = accounts; a; a = a->next)
		if (login_eq(&a->login, login))
			return a;
	if (!make || !(a = calloc(1, sizeof(*a))))
		return NULL;
	a->login = *login;
	a->next = accounts;
	accounts = a;
	return a;
}

static void account_drop_if_idle(struct account *a)
{
	struct account **p;

	if (a->busy || a->settling || a->head)
		return;
	for (p = &accounts; *p; p = &(*p)->next)
		if (*p == a) {
			*p = a->next;
			free(a);
			return;
		}
}

/* ---- the threads -------------------------------------------------------- */

/* A settle job's load is on nobody's reply path: at nice 10, so that on a
 * busy machine the reply it follows, and the loop, go first. Its lock is
 * taken at the thread's own priority (sf_rt_lock_unniced()). The nice is
 * restored after; where it cannot be (no CAP_SYS_NICE), it is not lowered. */
static int settle(struct verify_job *j)
{
	id_t tid = (id_t)syscall(SYS_gettid);
	bool niced = false;
	int r;

	(void)j;
	errno = 0;
	if (getpriority(PRIO_PROCESS, tid) == 0 && !errno &&
	    setpriority(PRIO_PROCESS, tid, 10) == 0) {
		niced = true;
		if (setpriority(PRIO_PROCESS, tid, 9) != 0) {
			setpriority(PRIO_PROCESS, tid, 0);
			niced = false; /* could not come back: not lowered */
		} else {
			setpriority(PRIO_PROCESS, tid, 10);
		}
	}
	r = sf_runtime_settle_standins(sfd.rt);
	if (niced)
		setpriority(PRIO_PROCESS, tid, 0);
	return r;
}

static void *verifier(void *arg)
{
	uint64_t one = 1;

	(void)arg;
	pthread_mutex_lock(&v.lock);
	while (!v.stop) {
		struct verify_job *j = pop(&v.todo);

		if (!j) {
			pthread_cond_wait(&v.work, &v.lock);
			continue;
		}
		pthread_mutex_unlock(&v.lock);

		j->started_ns = metrics_now_ns();
		j->r = j->settle ? settle(j) :
		       j->cgroup ? sf_runtime_attach_cgroup(sfd.rt, j->cgroup, &j->prog, j->flags,
							    &j->id, &j->cerr) :
			   sf_runtime_attach_to(sfd.rt, &j->tg, &j->prog, j->flags, &j->id,
						&j->cerr);
		j->ended_ns = metrics_now_ns();

		pthread_mutex_lock(&v.lock);
		push(&v.done, j);
		v.tables_due = true;
		pthread_cond_signal(&v.tables);
		if (write(efd, &one, sizeof(one)) < 0) {
			/* The counter cannot overflow at one a job: the loop
			 * reads it before 2^64 - 1 of them. */
		}
	}
	pthread_mutex_unlock(&v.lock);
	return NULL;
}

static void *filler(void *arg)
{
	(void)arg;
	/* The tables are a cache: only CPU nobody else wants. The lock it
	 * takes is held for a scan and a copy, never for the analysis, nor
	 * for a searched form's verification (only for its swap). */
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
	pthread_mutex_lock(&v.lock);
	while (!v.stop) {
		if (!v.tables_due) {
			pthread_cond_wait(&v.tables, &v.lock);
			continue;
		}
		v.tables_due = false;
		pthread_mutex_unlock(&v.lock);
		/* Chains left on a stand-in with no settle job (an adopted
		 * install's, or one whose job could not be made): before the
		 * tables, as a plain attach of one waits for it. */
		if (!__atomic_load_n(&v.stop, __ATOMIC_RELAXED) && sf_runtime_standins(sfd.rt) > 0)
			sf_runtime_settle_standins(sfd.rt);
		while (!__atomic_load_n(&v.stop, __ATOMIC_RELAXED) &&
		       sf_runtime_fill_tables(sfd.rt, 1) > 0)
			;
		/* The next container's chain, before the searched forms:
		 * its attach would wait for it. */
		if (!__atomic_load_n(&v.stop, __ATOMIC_RELAXED)) {
			sf_runtime_make_spares(sfd.rt);
			while (sf_runtime_reap_chains(sfd.rt) > 0)
				;
		}
		/* The runtime says on stderr which it kept linear. */
		while (!__atomic_load_n(&v.stop, __ATOMIC_RELAXED) &&
		       !__atomic_load_n(&v.tables_due, __ATOMIC_RELAXED) &&
		       sf_runtime_upgrade_chains(sfd.rt, 1, NULL) > 0)
			;
		pthread_mutex_lock(&v.lock);
	}
	pthread_mutex_unlock(&v.lock);
	return NULL;
}

int verify_start(void)
{
	int r;

	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (efd < 0) {
		r = -errno;
		diag("eventfd: %s", strerror(-r));
		return r;
	}
	r = pthread_create(&v.verifier, NULL, verifier, NULL);
	v.verifier_on = r == 0;
	if (!r) {
		r = pthread_create(&v.filler, NULL, filler, NULL);
		v.filler_on = r == 0;
	}
	if (r) {
		diag("cannot start the verifier's threads: %s", strerror(r));
		verify_stop();
		return -r;
	}
	verify_tables_due(); /* an adopted install may have left some */
	return efd;
}

void verify_stop(void)
{
	struct verify_job *j;
	struct account *a;

	pthread_mutex_lock(&v.lock);
	__atomic_store_n(&v.stop, true, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&v.work);
	pthread_cond_broadcast(&v.tables);
	pthread_mutex_unlock(&v.lock);
	if (v.verifier_on)
		pthread_join(v.verifier, NULL);
	if (v.filler_on)
		pthread_join(v.filler, NULL);
	v.verifier_on = v.filler_on = false;
	/* Answered, never dropped: a caller learns it was not attached. */
	while ((j = pop(&v.todo))) {
		j->r = -ECANCELED;
		push(&v.done, j);
	}
	if (efd >= 0)
		verify_ready();
	while ((a = accounts)) {
		while (a->head) {
			struct parked *p = a->head;

			a->head = p->next;
			conn_hold(p->c, false);
			if (p->anc.fd >= 0)
				close(p->anc.fd);
			free(p);
		}
		accounts = a->next;
		free(a);
	}
	if (efd >= 0)
		close(efd);
	efd = -1;
}

void verify_tables_due(void)
{
	pthread_mutex_lock(&v.lock);
	v.tables_due = true;
	pthread_cond_signal(&v.tables);
	pthread_mutex_unlock(&v.lock);
}

/* ---- the loop's side ---------------------------------------------------- */

struct verify_job *verify_job_new(const struct sf_msg_hdr *req)
{
	struct verify_job *j = calloc(1, sizeof(*j) + req->length);

	if (j)
		memcpy(j->req, req, req->length);
	return j;
}

void verify_submit(struct verify_job *j)
{
	struct account *a = account(&j->c->login, true);

	/* Without an account (no memory), the uid's next attach is not
	 * parked behind this one: only its limits are judged a job early.
	 * A settle job's attach was answered, and counted: the user's next
	 * ones go on, but are not stood in (verify_settling()), so that a
	 * user has at most this and one verification queued. */
	if (a && j->settle)
		a->settling = true;
	else if (a)
		a->busy = true;
	conn_hold(j->c, true);
	j->tg.process = j->tg.process ? &j->ident : NULL;
	j->submitted_ns = metrics_now_ns();
	pthread_mutex_lock(&v.lock);
	push(&v.todo, j);
	pthread_cond_signal(&v.work);
	pthread_mutex_unlock(&v.lock);
}

bool verify_settling(const struct login *login)
{
	struct account *a = account(login, false);

	return a && a->settling;
}

int verify_park(struct client *c, struct ancillary *anc, const void *bytes, size_t n,
		int msg_flags)
{
	struct account *a = account(&c->login, false);
	struct parked *p;

	if (!a || !a->busy)
		return -EAGAIN;
	p = malloc(sizeof(*p) + n);
	if (!p)
		return -ENOMEM;
	*p = (struct parked){ .c = c, .anc = *anc, .msg_flags = msg_flags, .n = n };
	memcpy(p->bytes, bytes, n);
	anc->fd = -1;
	if (a->tail)
		a->tail->next = p;
	else
		a->head = p;
	a->tail = p;
	conn_hold(c, true);
	return 0;
}

void verify_ready(void)
{
	struct verify_job *j;
	struct queue list;
	uint64_t n;

	if (read(efd, &n, sizeof(n)) < 0) {
		/* EAGAIN: verify_stop() collects what is left. */
	}
	pthread_mutex_lock(&v.lock);
	list = v.done;
	v.done = (struct queue){ NULL, NULL };
	pthread_mutex_unlock(&v.lock);
	while ((j = pop(&list))) {
		struct account *a = account(&j->c->login, false);

		j->done(j);
		conn_hold(j->c, false);
		if (a && j->settle)
			a->settling = false;
		else if (a)
			a->busy = false;
		free(j);
	}
}

struct client *verify_unpark(struct ancillary *anc, void *bytes, size_t size, size_t *n,
			     int *msg_flags)
{
	struct account *a, *next;

	for (a = accounts; a; a = next) {
		struct parked *p = a->head;
		struct client *c;

		next = a->next;
		if (a->busy || !p) {
			account_drop_if_idle(a);
			continue;
		}
		a->head = p->next;
		if (!a->head)
			a->tail = NULL;
		c = p->c;
		*anc = p->anc;
		*n = p->n < size ? p->n : size;
		*msg_flags = p->msg_flags;
		memcpy(bytes, p->bytes, *n);
		free(p);
		conn_hold(c, false);
		return c;
	}
	return NULL;
}
