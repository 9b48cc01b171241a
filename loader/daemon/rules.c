// SPDX-License-Identifier: GPL-2.0-only
/*
 * The profiles filters were compiled from (SF_MSG_PROFILE), so that each
 * event of such a filter names the rule that decided it: "rule", as
 * `sfctl explain` prints it (libsfprofile's sf_profile_rules_explain(),
 * with the event's verdict and arguments; a shadow filter's events carry
 * the candidate's verdict, so they name the candidate's rule).
 *
 * The daemon receives classic filters, never profiles: a client that
 * attached a profile's filter (sfctl attach --profile, sfilter-oci-hook)
 * sends the profile after; sfrun --profile sends it before (filter id 0:
 * for the next filter of its program that user attaches), so that it
 * makes no call under the profile for it. The daemon compiles
 * it and keeps it only when it gives the filter's program byte for byte,
 * so a profile can never be made to speak for a filter it is not; a user
 * who is not an admin gives one only for a filter it attached. Identical
 * programs share an id: the last profile given for one is the one its
 * events name.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "daemon.h"
#include "profile.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Filters with a profile at once: past it, the one given longest ago is
 * forgotten (its events name no rule from then on). */
#define RULES_MAX 64

static struct {
	uint32_t filter_id;
	uint64_t given;
	struct compiled *c;
} rules[RULES_MAX];
static uint64_t rules_given;

/* Profiles given before their filter is attached (filter id 0), by the
 * uid that will attach it: kept until that uid attaches the program they
 * compile to, or PENDING_S seconds. */
#define PENDING_MAX 16
#define PENDING_S   60
static struct {
	uid_t uid;                 /* who will attach it */
	struct login who;          /* whose quota it counts against */
	time_t at;
	struct compiled *c;
} pending[PENDING_MAX];

static int slot_of(uint32_t filter_id)
{
	int i;

	for (i = 0; i < RULES_MAX; i++)
		if (rules[i].c && rules[i].filter_id == filter_id)
			return i;
	return -1;
}

/* A request whose profile is compiling: what its answer needs. */
struct ask {
	struct client *c;          /* held until answered; NULL: answered early */
	uint32_t rid, filter_id;
	uid_t uid;                 /* the sender's */
	pid_t pid;
	struct login who;
	bool admin;
};

static void compiled_for(void *arg, struct compiled *cp, int r,
			 const struct sf_profile_error *err);

/* The profile compiled (rulecache.c), counted against who: at once (a
 * reference), or NULL with *e: REPLY_LATER (a, copied, is answered by
 * compiled_for()), or a positive errno with msg. */
static struct compiled *compile(const struct ask *a, const char *caps, const char *json,
				size_t len, bool lenient, char *msg, size_t msz, int *e)
{
	struct sf_profile_opts opts = { .caps = caps, .lenient = lenient };
	struct sf_profile_error err;
	struct compiled *c;
	struct ask *later = malloc(sizeof(*later));

	if (!later) {
		snprintf(msg, msz, "the profile: %s", strerror(ENOMEM));
		*e = ENOMEM;
		return NULL;
	}
	*later = *a;
	c = rulecache_compile(&a->who, !a->admin, &opts, json, len, &err, e, compiled_for, later);
	if (*e != -EINPROGRESS)
		free(later);
	if (c)
		return c;
	if (*e == -EINPROGRESS) {
		*e = REPLY_LATER;
		if (later->c)
			conn_hold(later->c, true);
		return NULL;
	}
	snprintf(msg, msz, "the profile: %s", err.msg);
	*e = -*e;
	return NULL;
}

/* The filter's program, and checked that owner (not -1) attached it. */
static int filter_of(uint32_t id, uid_t owner, struct sf_filter_info *info,
		     struct sock_filter **insns, char *msg, size_t msz)
{
	int r = sf_runtime_filter(sfd.rt, id, info, insns);

	if (r < 0 || (owner != (uid_t)-1 && info->owner != owner)) {
		/* Another user's filter is not told from none. */
		free(*insns);
		*insns = NULL;
		snprintf(msg, msz, "filter %u: %s", id, strerror(r < 0 ? -r : ENOENT));
		return r < 0 ? -r : ENOENT;
	}
	return 0;
}

/* Whether c gives the filter's program byte for byte. */
static int check_program(uint32_t id, const struct compiled *c, const struct sf_filter_info *info,
			 const struct sock_filter *insns, char *msg, size_t msz)
{
	const struct sf_profile *p = sf_profile_rules_filter(compiled_rules(c));

	if (p->len == info->len && !memcmp(p->insns, insns, p->len * sizeof(*insns)))
		return 0;
	snprintf(msg, msz, "the profile compiles to another program than filter %u's "
		 "(%zu instructions, not %u): not its profile", id, p->len, info->len);
	return EINVAL;
}

/*
 * A profile is compiled in a child, 25-40 ms for Docker's and Podman's
 * (rulecache.c), up to ~0.5 s for a 64 KiB one: a user's requests are
 * held to RULES_RATE a second (RULES_BURST at once), and all users'
 * together to RULES_ALL a second, beside rulecache.c's bound on compiles
 * at once, so that no one can keep the machine compiling. Admins are not
 * held.
 */
#define RULES_RATE  2.0
#define RULES_BURST 4.0
#define RULES_ALL   10.0
#define RULES_USERS 64

struct bucket { struct login who; double tokens; struct timespec at; bool used; };
static struct bucket users[RULES_USERS], all;

static bool take(struct bucket *b, double rate, double burst, const struct timespec *now)
{
	double dt = (double)(now->tv_sec - b->at.tv_sec) + (now->tv_nsec - b->at.tv_nsec) / 1e9;

	if (!b->at.tv_sec)
		b->tokens = burst;
	else
		b->tokens += dt * rate;
	if (b->tokens > burst)
		b->tokens = burst;
	b->at = *now;
	if (b->tokens < 1)
		return false;
	b->tokens -= 1;
	return true;
}

/* Whether who (a login user: the uids its namespaces map share it) may
 * have a profile compiled now. A user past RULES_USERS at once takes the
 * slot of the one seen longest ago (whose bucket is whole again by then,
 * or nearly). */
static bool within_rate(const struct login *who)
{
	struct timespec now;
	struct bucket *b = NULL;
	int i;

	clock_gettime(CLOCK_MONOTONIC, &now);
	for (i = 0; i < RULES_USERS && !b; i++)
		if (users[i].used && login_eq(&users[i].who, who))
			b = &users[i];
	for (i = 0; i < RULES_USERS && !b; i++)
		if (!users[i].used)
			b = &users[i];
	if (!b) {
		b = &users[0];
		for (i = 1; i < RULES_USERS; i++)
			if (users[i].at.tv_sec < b->at.tv_sec)
				b = &users[i];
	}
	if (!b->used || !login_eq(&b->who, who))
		*b = (struct bucket){ .who = *who, .used = true };
	return take(b, RULES_RATE, RULES_BURST, &now) && take(&all, RULES_ALL, RULES_ALL, &now);
}

/* A free slot for a profile of who's given before its attach (the
 * expired ones freed first), or -1 with msg. */
static int pending_slot(const struct login *who, char *msg, size_t msz)
{
	struct timespec now;
	int i, slot = -1, mine = 0;

	clock_gettime(CLOCK_MONOTONIC, &now);
	for (i = 0; i < PENDING_MAX; i++) {
		if (pending[i].c && now.tv_sec - pending[i].at > PENDING_S) {
			compiled_put(pending[i].c);
			pending[i].c = NULL;
		}
		if (pending[i].c && login_eq(&pending[i].who, who))
			mine++;
		else if (!pending[i].c && slot < 0)
			slot = i;
	}
	if (slot >= 0 && mine < 4)
		return slot;
	snprintf(msg, msz, "profiles given before their attach: at most 4 per user, "
		 "%d in all, for %d s each", PENDING_MAX, PENDING_S);
	return -1;
}

/* A profile for a filter not attached yet (a->filter_id 0), kept for
 * a->uid: 0, or a positive errno with msg. */
static int keep_pending(const struct ask *a, struct compiled *c, char *msg, size_t msz)
{
	struct timespec now;
	int slot = pending_slot(&a->who, msg, msz);

	if (slot < 0) {
		compiled_put(c);
		return EAGAIN;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	pending[slot].uid = a->uid;
	pending[slot].who = a->who;
	pending[slot].at = now.tv_sec;
	pending[slot].c = c;
	snprintf(msg, msz, "the next filter of this profile's program that uid %u attaches "
		 "(within %d s) will name its rules", (unsigned int)a->uid, PENDING_S);
	return 0;
}

/* Into the table for filter_id (the slot given longest ago, when it is
 * full). */
static void keep(uint32_t filter_id, struct compiled *c)
{
	int i = slot_of(filter_id), oldest = 0, k;

	for (k = 0; i < 0 && k < RULES_MAX; k++) {
		if (!rules[k].c)
			i = k;
		else if (rules[k].given < rules[oldest].given)
			oldest = k;
	}
	if (i < 0)
		i = oldest;
	compiled_put(rules[i].c);
	rules[i].c = c;
	rules[i].filter_id = filter_id;
	rules[i].given = ++rules_given;
}

void rules_attached(uid_t uid, const struct sock_filter *insns, size_t n, uint32_t filter_id)
{
	int i;

	for (i = 0; i < PENDING_MAX; i++) {
		const struct sf_profile *p = pending[i].c ?
			sf_profile_rules_filter(compiled_rules(pending[i].c)) : NULL;

		if (!p || pending[i].uid != uid || p->len != n ||
		    memcmp(p->insns, insns, n * sizeof(*insns)))
			continue;
		keep(filter_id, pending[i].c);
		pending[i].c = NULL;
		return;
	}
}

/* An early-answered profile that failed: said in the log, as no one
 * waits for its answer. */
static void log_refused(const struct ask *a, int error, const char *msg)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "sfilterd", json_object_new_string("profile"));
	json_object_object_add(o, "filter", json_object_new_int64(a->filter_id));
	json_object_object_add(o, "by_uid", json_object_new_int64(a->uid));
	json_object_object_add(o, "by_pid", json_object_new_int(a->pid));
	json_object_object_add(o, "error", json_object_new_int(error));
	json_object_object_add(o, "message", json_object_new_string(msg));
	log_line(jstr(o));
	log_flush();
	json_object_put(o);
	diag("pid %d uid %u: filter %u's profile: %s", a->pid, a->uid, a->filter_id, msg);
}

/* The request's end once its profile compiled (cp, a reference taken
 * over): its error (0 or positive), msg said. */
static int finish(const struct ask *a, struct compiled *cp, char *msg, size_t msz)
{
	struct sock_filter *insns = NULL;
	struct sf_filter_info info;
	int err;

	if (!a->filter_id)
		return keep_pending(a, cp, msg, msz);
	/* Looked up again: the filter may have gone while it compiled. */
	err = filter_of(a->filter_id, a->admin ? (uid_t)-1 : a->uid, &info, &insns, msg, msz);
	if (!err)
		err = check_program(a->filter_id, cp, &info, insns, msg, msz);
	free(insns);
	if (err) {
		compiled_put(cp);
		return err;
	}
	keep(a->filter_id, cp);
	snprintf(msg, msz, "filter %u's events name the rule of its profile that decided them",
		 a->filter_id);
	return 0;
}

/* The request answered (a->c), or its failure logged (answered early). */
static void answer(const struct ask *a, int err, const char *msg)
{
	if (!a->c) {
		if (err)
			log_refused(a, err, msg);
		else if (sfd.verbose)
			diag("pid %d uid %u: %s", a->pid, a->uid, msg);
		return;
	}
	if (sfd.verbose)
		diag("pid %d uid %u request %u type %u: %s%s%s", a->pid, a->uid, a->rid,
		     SF_MSG_PROFILE, err ? strerror(err) : "ok", msg[0] ? ": " : "", msg);
	reply_json(a->c, a->rid, err, a->filter_id, 0, json_object_new_object(), msg);
}

static void compiled_for(void *arg, struct compiled *cp, int r,
			 const struct sf_profile_error *e)
{
	struct ask *a = arg;
	char msg[SF_PROTO_MAX_TEXT];
	int err;

	if (cp) {
		err = finish(a, cp, msg, sizeof(msg));
	} else {
		snprintf(msg, sizeof(msg), "the profile: %s", e->msg);
		err = -r;
	}
	if (a->c)
		conn_hold(a->c, false);
	if (!a->c || !a->c->dead) /* else no one to tell */
		answer(a, err, msg);
	free(a);
}

int rules_request(const void *req, size_t n, struct client *c, uint32_t rid, uid_t uid,
		  bool admin, uint32_t *id, char *msg, size_t msz)
{
	const struct sf_profile_req *q = req;
	bool early = q->flags & SF_PROFILE_EARLY, lenient = q->flags & SF_PROFILE_LENIENT;
	struct ask a = { .c = c, .rid = rid, .filter_id = q->filter_id, .uid = uid,
			 .pid = c->pid, .who = c->login, .admin = admin };
	struct sock_filter *insns = NULL;
	struct sf_filter_info info;
	struct compiled *cp;
	int err;

	if (n < SF_PROTO_PROFILE_REQ_SIZE ||
	    n - SF_PROTO_PROFILE_REQ_SIZE != (uint64_t)q->caps_len + q->json_len ||
	    !q->caps_len || q->data[q->caps_len - 1] || memchr(q->data, 0, q->caps_len - 1) ||
	    !q->json_len) {
		snprintf(msg, msz, "a profile request is %u bytes, the caps (NUL-terminated) "
			 "and the profile: not so", SF_PROTO_PROFILE_REQ_SIZE);
		return EPROTO;
	}
	*id = q->filter_id;
	if (q->flags & ~(uint32_t)(SF_PROFILE_LENIENT | SF_PROFILE_EARLY)) {
		snprintf(msg, msz, "unknown flags 0x%x", q->flags);
		return EINVAL;
	}
	if (early && !q->filter_id) {
		snprintf(msg, msz, "an early answer is for a filter attached (not filter 0)");
		return EINVAL;
	}
	if (!admin && !within_rate(&c->login)) {
		snprintf(msg, msz, "profiles: at most %.0f a second per user, %.0f in all; "
			 "try again", RULES_RATE, RULES_ALL);
		return EAGAIN;
	}
	if (!q->filter_id && pending_slot(&a.who, msg, msz) < 0)
		return EAGAIN;
	if (q->filter_id &&
	    (err = filter_of(q->filter_id, admin ? (uid_t)-1 : uid, &info, &insns, msg, msz)))
		return err;
	free(insns);
	/* The asker goes on; what is left cannot fail but for the profile. */
	if (early) {
		reply_json(c, rid, 0, *id, 0, json_object_new_object(), "the profile is "
			   "compiled after this answer; a failure is in the daemon's log");
		a.c = NULL;
	}
	cp = compile(&a, q->data, q->data + q->caps_len, q->json_len, lenient, msg, msz, &err);
	if (cp)
		err = finish(&a, cp, msg, msz);
	if (!early || err == REPLY_LATER)
		return err;
	answer(&a, err, msg);
	return REPLY_LATER;
}

int rules_annotate(const struct sf_event *ev, char *buf, int len, size_t size)
{
	struct seccomp_data call = { .nr = ev->nr, .arch = ev->arch };
	struct sf_profile_why w;
	char obj[1024];
	int i = slot_of(ev->filter_id), n;

	if (i < 0 || len < 2 || buf[len - 1] != '}')
		return len;
	memcpy(call.args, ev->args, sizeof(call.args));
	sf_profile_rules_explain(compiled_rules(rules[i].c), &call, &ev->ret, !ev->repeat, &w);
	n = sf_profile_why_json(&w, obj, sizeof(obj));
	if (n < 0 || (size_t)len + n + 9 >= size)
		return len;
	return len - 1 + snprintf(buf + len - 1, size - (size_t)len + 1, ",\"rule\":%s}", obj);
}
