// SPDX-License-Identifier: GPL-2.0-only
/*
 * Profiles compiled for SF_MSG_PROFILE, kept so that the next request
 * with the same inputs costs a lookup: every container a hook starts
 * with one profile sends the same text, and its compile (libseccomp's
 * export, most of it) was most of the daemon's share of a container's
 * start.
 *
 * An entry is taken only when its inputs are the request's byte for
 * byte: the profile's text and sf_profile_inputs()'s line (libsfprofile
 * says what a compile depends on: the caps and kernel judged, the
 * reading, the versions). No hash decides a hit, so no collision can
 * hand a filter the rules of another profile.
 *
 * Entries are counted against the login user that asked (a hit too only
 * within that user's own: another's use of a profile is not told by a
 * reply's time): at most RC_PER_USER each, RC_MAX in all. A user at its
 * bound replaces its own least recently used; a full cache replaces the
 * least recently used of the user holding the most, so no user's
 * requests can push out the entries of one that holds fewer. An entry's
 * rules stay while a filter names them (a reference each).
 *
 * A miss compiles in a child process (an sf_profile_job): libseccomp
 * leaks on some rules, and anyone may send profiles, so a compile here
 * would let a user grow the daemon without end; and the loop serves
 * others while it runs (up to ~0.5 s of a CPU for a 64 KiB profile). The
 * child execs sfilterd as a helper that gives up root's identity before it
 * reads the profile (libsfprofile's sf_profile_set_helper()).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "daemon.h"
#include "profile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>

#define RC_MAX      32
#define RC_PER_USER 8

struct compiled {
	unsigned int refs;
	struct sf_profile_rules *r;
};

static struct {
	struct login who;
	char inputs[SF_PROFILE_INPUTS_MAX];
	char *text;               /* the profile's, len bytes */
	size_t len;
	uint64_t used;            /* rc_clock at the last hit */
	struct compiled *c;       /* NULL: a free slot */
} cache[RC_MAX];
static uint64_t rc_clock;
static struct rulecache_stats stats;

void compiled_put(struct compiled *c)
{
	if (!c || --c->refs)
		return;
	sf_profile_rules_close(c->r);
	free(c);
}

struct compiled *compiled_get(struct compiled *c)
{
	c->refs++;
	return c;
}

const struct sf_profile_rules *compiled_rules(const struct compiled *c)
{
	return c->r;
}

/* Slot i emptied: i. */
static int drop(int i)
{
	compiled_put(cache[i].c);
	free(cache[i].text);
	cache[i].c = NULL;
	cache[i].text = NULL;
	stats.entries--;
	return i;
}

static int held_by(const struct login *who)
{
	int i, n = 0;

	for (i = 0; i < RC_MAX; i++)
		n += cache[i].c && login_eq(&cache[i].who, who);
	return n;
}

/* who's least recently used entry (who holds one). */
static int lru_of(const struct login *who)
{
	int i, lru = -1;

	for (i = 0; i < RC_MAX; i++)
		if (cache[i].c && login_eq(&cache[i].who, who) &&
		    (lru < 0 || cache[i].used < cache[lru].used))
			lru = i;
	return lru;
}

/* The slot a new entry of who's goes in, emptied. */
static int slot_for(const struct login *who)
{
	int i, n, most = -1, top = held_by(who);

	if (top >= RC_PER_USER)
		return drop(lru_of(who));
	for (i = 0; i < RC_MAX; i++)
		if (!cache[i].c)
			return i;
	/* Full: the user holding the most gives one up, who itself on a tie. */
	for (i = 0; i < RC_MAX; i++)
		if ((n = held_by(&cache[i].who)) > top) {
			top = n;
			most = i;
		}
	return drop(lru_of(most < 0 ? who : &cache[most].who));
}

/* A new entry of who's for this text and inputs, holding c. */
static void insert(const struct login *who, const char *inputs, const char *json, size_t len,
		   struct compiled *c)
{
	int i = slot_for(who);

	if (!(cache[i].text = malloc(len)))
		return;
	memcpy(cache[i].text, json, len);
	cache[i].len = len;
	cache[i].who = *who;
	memcpy(cache[i].inputs, inputs, SF_PROFILE_INPUTS_MAX);
	cache[i].used = ++rc_clock;
	cache[i].c = compiled_get(c);
	stats.entries++;
}

/*
 * Compiles under way: each a child (sf_profile_job), stepped by the loop
 * when the job's descriptor, in jobs_epfd, is readable, and at every
 * tick for its deadline. Requests for a text and inputs of who's that are
 * compiling wait for that job rather than start one. A user who is not an
 * admin has one job at a time, and such users RC_JOBS_USERS in all: a
 * 64 KiB profile is ~0.5 s of a CPU here, and the rate (rules.c) counts
 * requests, not their cost.
 */
#define RC_JOBS        16
#define RC_JOBS_USERS  3
#define RC_WAITERS     8

static struct job {
	struct sf_profile_job *job;  /* NULL: a free slot */
	struct login who;
	bool limited;                /* counted against who's one */
	int n;                       /* sf_profile_inputs()'s, <0: not kept */
	char inputs[SF_PROFILE_INPUTS_MAX];
	char *text;
	size_t len;
	int waiters;
	struct { rulecache_done_fn done; void *arg; } wait[RC_WAITERS];
} jobs[RC_JOBS];
static int jobs_epfd = -1;

/* sfilterd run as the compiles' helper (sf_profile_set_helper()): its
 * one argument. */
#define HELPER_ARG "--profile-compile-helper"

bool rulecache_helper(int argc, char **argv, int *status)
{
	if (argc != 2 || strcmp(argv[1], HELPER_ARG))
		return false;
	*status = sf_profile_helper_main();
	return true;
}

int rulecache_init(int epfd, void *tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = tag };

	/* The daemon has threads: a child execs the daemon's own program
	 * (whatever has replaced its file since) so that it holds none of
	 * their locks, nor the daemon's descriptors and root's identity. */
	if (sf_profile_set_helper("/proc/self/exe", HELPER_ARG) < 0)
		return -ENOMEM;
	jobs_epfd = epoll_create1(EPOLL_CLOEXEC);
	if (jobs_epfd < 0)
		return -errno;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, jobs_epfd, &ev) < 0) {
		int e = -errno;

		close(jobs_epfd);
		jobs_epfd = -1;
		return e;
	}
	return 0;
}

/* A job of who's compiling this text with these inputs, or -1. */
static int job_of(const struct login *who, const char *inputs, const char *json, size_t len)
{
	int i;

	for (i = 0; i < RC_JOBS; i++)
		if (jobs[i].job && jobs[i].n >= 0 && login_eq(&jobs[i].who, who) &&
		    jobs[i].len == len && !strcmp(jobs[i].inputs, inputs) &&
		    !memcmp(jobs[i].text, json, len) && jobs[i].waiters < RC_WAITERS)
			return i;
	return -1;
}

/* A free slot for a new job of who's (limited: held to the bounds), or
 * -1 with the reason in err. */
static int job_slot(const struct login *who, bool limited, struct sf_profile_error *err)
{
	int i, slot = -1, mine = 0, users = 0;

	for (i = 0; i < RC_JOBS; i++) {
		if (!jobs[i].job) {
			slot = slot < 0 ? i : slot;
			continue;
		}
		users += jobs[i].limited;
		mine += jobs[i].limited && login_eq(&jobs[i].who, who);
	}
	if (limited && mine)
		snprintf(err->msg, sizeof(err->msg), "a profile of this user is being compiled: "
			 "one at a time; try again once it is answered");
	else if (limited && users >= RC_JOBS_USERS)
		snprintf(err->msg, sizeof(err->msg), "%d profiles of users are being compiled, "
			 "the most at once; try again", users);
	else if (slot < 0)
		snprintf(err->msg, sizeof(err->msg), "%d profiles are being compiled, the most "
			 "at once; try again", RC_JOBS);
	else
		return slot;
	return -1;
}

static void job_end(struct job *j)
{
	epoll_ctl(jobs_epfd, EPOLL_CTL_DEL, sf_profile_job__fd(j->job), NULL);
	sf_profile_job__free(j->job);
	free(j->text);
	*j = (struct job){ 0 };
}

struct compiled *rulecache_compile(const struct login *who, bool limited,
				   const struct sf_profile_opts *opts, const char *json,
				   size_t len, struct sf_profile_error *err, int *r,
				   rulecache_done_fn done, void *arg)
{
	struct epoll_event ev = { .events = EPOLLIN };
	char inputs[SF_PROFILE_INPUTS_MAX] = "";
	struct job *j;
	int i, n;

	memset(err, 0, sizeof(*err));
	n = sf_profile_inputs(opts, inputs, sizeof(inputs));
	for (i = 0; n >= 0 && i < RC_MAX; i++) {
		if (!cache[i].c || !login_eq(&cache[i].who, who) || cache[i].len != len ||
		    strcmp(cache[i].inputs, inputs) || memcmp(cache[i].text, json, len))
			continue;
		cache[i].used = ++rc_clock;
		stats.hits++;
		return compiled_get(cache[i].c);
	}
	stats.misses++;
	if (n >= 0 && (i = job_of(who, inputs, json, len)) >= 0) {
		j = &jobs[i];
		goto wait;
	}
	if ((i = job_slot(who, limited, err)) < 0) {
		*r = -EAGAIN;
		return NULL;
	}
	j = &jobs[i];
	*j = (struct job){ .who = *who, .limited = limited, .n = n, .len = len };
	memcpy(j->inputs, inputs, sizeof(inputs));
	if (!(j->text = malloc(len))) {
		snprintf(err->msg, sizeof(err->msg), "%s", strerror(ENOMEM));
		*r = -ENOMEM;
		return NULL;
	}
	memcpy(j->text, json, len);
	if ((*r = sf_profile_job__start(json, len, opts, &j->job, err)) < 0) {
		free(j->text);
		*j = (struct job){ 0 };
		return NULL;
	}
	ev.data.ptr = j;
	if (epoll_ctl(jobs_epfd, EPOLL_CTL_ADD, sf_profile_job__fd(j->job), &ev) < 0) {
		*r = -errno;
		snprintf(err->msg, sizeof(err->msg), "the profile's compile: epoll_ctl: %s",
			 strerror(-*r));
		job_end(j);
		return NULL;
	}
wait:
	j->wait[j->waiters].done = done;
	j->wait[j->waiters].arg = arg;
	j->waiters++;
	*r = -EINPROGRESS;
	return NULL;
}

/* Job j ended: its slot freed, then its waiters told (each given a
 * reference to c), so that a waiter may start a compile. */
static void job_done(struct job *j, struct compiled *c, int r, const struct sf_profile_error *err)
{
	int k, n = j->waiters;
	typeof(j->wait[0]) wait[RC_WAITERS];

	memcpy(wait, j->wait, sizeof(wait));
	job_end(j);
	for (k = 0; k < n; k++)
		wait[k].done(wait[k].arg, c ? compiled_get(c) : NULL, r, err);
}

/* Job j stepped: when it has ended, its waiters told (each given a
 * reference), and the compile kept. */
static void step(struct job *j)
{
	struct sf_profile_error err;
	struct compiled *c = NULL;
	struct sf_profile_rules *rules;
	int r;

	r = sf_profile_job__step(j->job, &rules, &err);
	if (r == -EINPROGRESS)
		return;
	if (!r && !(c = calloc(1, sizeof(*c)))) {
		sf_profile_rules_close(rules);
		r = -ENOMEM;
		memset(&err, 0, sizeof(err));
		snprintf(err.msg, sizeof(err.msg), "%s", strerror(ENOMEM));
	} else if (!r) {
		c->refs = 1;
		c->r = rules;
		/* Inputs no line can name (caps of a task) are compiled, not kept. */
		if (j->n >= 0)
			insert(&j->who, j->inputs, j->text, j->len, c);
	}
	job_done(j, c, r, &err);
	compiled_put(c);
}

void rulecache_step(void)
{
	int i;

	for (i = 0; i < RC_JOBS; i++)
		if (jobs[i].job)
			step(&jobs[i]);
}

void rulecache_stop(void)
{
	struct sf_profile_error err = { .msg = "sfilterd stops" };
	int i;

	for (i = 0; i < RC_JOBS; i++)
		if (jobs[i].job)
			job_done(&jobs[i], NULL, -ECANCELED, &err);
	if (jobs_epfd >= 0)
		close(jobs_epfd);
	jobs_epfd = -1;
}

struct rulecache_stats rulecache_stats(void)
{
	struct rulecache_stats now = stats;
	int i;

	for (i = 0; i < RC_JOBS; i++)
		now.compiling += jobs[i].job != NULL;
	return now;
}
