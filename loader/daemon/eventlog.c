// SPDX-License-Identifier: GPL-2.0-only
/*
 * What sfilterd says: the event log (one JSON line per event, and one per
 * start, stop, administration, refusal and account that lost events) to a
 * file, stdout or syslog, reopened on SIGHUP so that it can be rotated;
 * the last events, kept for LOG and streamed to its followers; and lines
 * on stderr.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "daemon.h"
#include "event_json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <json-c/json.h>

/* Where the log goes when it is not syslog: stdout or the file opened
 * last. */
static FILE *log_file;

/* The last events, for LOG without --follow and for a follower's backlog.
 * uid: the real uid of the task that made the call. */
#define RING_EVENTS 512
struct ring_ev { uid_t uid; char *json; };
static struct ring_ev ring[RING_EVENTS];
static size_t ring_next;

/* What the lines on dropped events said last (eventlog_tick()). */
static struct {
	bool looked, wrote;           /* eventlog_tick() looked, wrote lines */
	uint64_t seen;                /* the kernel's events_dropped then */
	struct timespec last;         /* the last lines (or the start) */
	struct sf_event_drops *prev;  /* every account's counts then, by account */
	size_t n_prev;
} drops;

void diag(const char *fmt, ...)
{
	va_list ap;

	fputs("sfilterd: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int eventlog_open(void)
{
	FILE *f;
	int r;

	if (!drops.last.tv_sec)
		clock_gettime(CLOCK_MONOTONIC, &drops.last);
	if (sfd.use_syslog) {
		closelog();
		openlog("sfilterd", LOG_PID | LOG_NDELAY, LOG_DAEMON);
		return 0;
	}
	if (!sfd.log_path || strcmp(sfd.log_path, "-") == 0) {
		log_file = stdout;
		return 0;
	}
	f = fopen(sfd.log_path, "ae");
	if (!f) {
		r = -errno;
		diag("%s: %s", sfd.log_path, strerror(-r));
		return r;
	}
	setvbuf(f, NULL, _IOLBF, 0);
	if (log_file && log_file != stdout)
		fclose(log_file);
	log_file = f;
	return 0;
}

bool eventlog_on_stdout(void)
{
	return log_file == stdout;
}

void log_line(const char *line)
{
	if (sfd.use_syslog)
		syslog(LOG_NOTICE, "%s", line);
	else if (log_file)
		fprintf(log_file, "%s\n", line);
}

void log_flush(void)
{
	if (!sfd.use_syslog && log_file)
		fflush(log_file);
}

static int log_event(void *ctx, const struct sf_event *in)
{
	const struct sf_event *ev = in;
	struct sf_event counted;
	char buf[2048];
	struct ring_ev *r;
	uid_t uid;
	int n, i;

	(void)ctx;
	if (in->agg_total && !in->repeat) {
		counted = *in;
		counted.count = eventagg_count(in);
		ev = &counted;
	}
	n = sf_event_to_json(ev, buf, sizeof(buf));
	if (n <= 0)
		return 0;
	n = rules_annotate(ev, buf, n, sizeof(buf));
	sfd.n_events++;
	log_line(buf);
	/* Whose event it is: the task's real uid at the call, recorded by
	 * the BPF side (a killed task is gone by now, and a filter's owner
	 * is not its user: identical filters share an id). */
	uid = ev->uid;
	r = &ring[ring_next++ % RING_EVENTS];
	free(r->json);
	r->json = strdup(buf);
	r->uid = uid;
	/* Downwards: a follower closed here takes the last one's place. */
	for (i = conn_count - 1; i >= 0; i--) {
		struct client *c = conn_list[i];

		if (!c->follow || (!c->follow_admin && c->uid != uid))
			continue;
		/* Through the follower's queue: one that does not keep up
		 * is closed once its queue is over the bound, one that has
		 * gone at once; neither costs the others any time. */
		conn_reply(c, 0, 0, 0, SF_REPLY_MORE, buf, NULL, 0);
	}
	return 0;
}

/* ---- dropped events ------------------------------------------------------ */

/* Lines on dropped events: one per account that lost any since the last
 * ones, at most this often and this many at a time (the most first). */
#define DROP_REPORT_S 5
#define DROP_LINES    32
/* STATUS lists at most this many accounts. */
#define DROP_STATUS   64

static uint64_t sum2(const uint64_t v[SF_EV_CLASSES])
{
	return v[SF_EV_ENFORCED] + v[SF_EV_LOGGED];
}

void eventlog_event(const struct sf_event *ev)
{
	log_event(NULL, ev);
}

static uint64_t lost(const struct sf_event_drops *a)
{
	return sum2(a->budget) + sum2(a->ring);
}

static int by_account(const void *a, const void *b)
{
	uint32_t x = ((const struct sf_event_drops *)a)->account;
	uint32_t y = ((const struct sf_event_drops *)b)->account;

	return x < y ? -1 : x > y;
}

static int most_first(const void *a, const void *b)
{
	uint64_t x = lost(a), y = lost(b);

	return x > y ? -1 : x < y;
}

/* cur minus what it had in drops.prev (a recycled entry counts anew). */
static struct sf_event_drops since_last(const struct sf_event_drops *cur)
{
	const struct sf_event_drops *p = bsearch(cur, drops.prev, drops.n_prev,
						 sizeof(*cur), by_account);
	struct sf_event_drops delta = *cur;
	int c;

	for (c = 0; p && c < SF_EV_CLASSES; c++) {
		if (cur->budget[c] < p->budget[c] || cur->ring[c] < p->ring[c])
			return delta;
	}
	for (c = 0; p && c < SF_EV_CLASSES; c++) {
		delta.budget[c] -= p->budget[c];
		delta.ring[c] -= p->ring[c];
	}
	return delta;
}

static void drop_line(const struct sf_event_drops *a, double since)
{
	char line[256];
	unsigned long long b = sum2(a->budget), r = sum2(a->ring);
	unsigned long long e = a->budget[SF_EV_ENFORCED] + a->ring[SF_EV_ENFORCED];

	snprintf(line, sizeof(line), "{\"sfilterd\":\"events_dropped\",\"uid\":%u,"
		 "\"budget\":%llu,\"ring\":%llu,\"enforced\":%llu,\"since_s\":%.0f}",
		 a->account, b, r, e, since);
	log_line(line);
	diag("uid %u: %llu events dropped (%llu over its budget, %llu with the ring "
	     "buffer full; %llu of them denials or kills)", a->account, b + r, b, r, e);
}

void eventlog_tick(bool now_or_never)
{
	struct sf_event_drops *cur, *delta;
	struct sf_counters cnt;
	struct timespec now;
	size_t n, nd = 0, i;
	double since;

	clock_gettime(CLOCK_MONOTONIC, &now);
	since = (now.tv_sec - drops.last.tv_sec) + (now.tv_nsec - drops.last.tv_nsec) / 1e9;
	sf_runtime_counters(sfd.rt, &cnt);
	if (cnt.events_dropped == drops.seen ||
	    (drops.wrote && since < DROP_REPORT_S && !now_or_never))
		return;
	if (sf_runtime_event_drops(sfd.rt, &cur, &n) < 0)
		return;
	if (n)
		qsort(cur, n, sizeof(*cur), by_account);
	delta = calloc(n ? n : 1, sizeof(*delta));
	/* What an adopted runtime's accounts lost before this daemon is not
	 * news: its first look only takes stock. */
	for (i = 0; delta && (drops.looked || !sfd.adopted) && i < n; i++) {
		delta[nd] = since_last(&cur[i]);
		nd += lost(&delta[nd]) > 0;
	}
	qsort(delta, nd, sizeof(*delta), most_first);
	for (i = 0; i < nd && i < DROP_LINES; i++)
		drop_line(&delta[i], since);
	if (nd > DROP_LINES) {
		char line[160];
		unsigned long long more = 0;

		for (i = DROP_LINES; i < nd; i++)
			more += lost(&delta[i]);
		snprintf(line, sizeof(line), "{\"sfilterd\":\"events_dropped\",\"more_uids\":%zu,"
			 "\"events\":%llu}", nd - DROP_LINES, more);
		log_line(line);
	}
	log_flush();
	free(delta);
	free(drops.prev);
	drops.prev = cur;
	drops.n_prev = n;
	drops.seen = cnt.events_dropped;
	drops.looked = true;
	if (nd) {
		drops.wrote = true;
		drops.last = now;
	}
}

static struct json_object *drops_entry(const struct sf_event_drops *a)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "uid", json_object_new_int64(a->account));
	json_object_object_add(o, "budget", json_object_new_uint64(sum2(a->budget)));
	json_object_object_add(o, "ring", json_object_new_uint64(sum2(a->ring)));
	json_object_object_add(o, "enforced", json_object_new_uint64(
		a->budget[SF_EV_ENFORCED] + a->ring[SF_EV_ENFORCED]));
	return o;
}

struct json_object *eventlog_drops_json(bool admin, uid_t uid)
{
	struct json_object *arr = json_object_new_array();
	struct sf_event_drops *all, one;
	size_t n, i;

	if (!admin) {
		if (sf_runtime_event_drops_of(sfd.rt, uid, &one) == 0 && lost(&one))
			json_object_array_add(arr, drops_entry(&one));
		return arr;
	}
	if (sf_runtime_event_drops(sfd.rt, &all, &n) < 0)
		return arr;
	if (n) /* all is NULL when no account has dropped anything */
		qsort(all, n, sizeof(*all), most_first);
	for (i = 0; i < n && i < DROP_STATUS; i++)
		json_object_array_add(arr, drops_entry(&all[i]));
	free(all);
	return arr;
}

/* ---- draining ---------------------------------------------------------------- */

/* Events logged per turn of the loop: a flood never holds it (the rest
 * wait in the ring buffer, whose descriptor stays readable). */
#define EVENTS_PER_TURN 256

/* Whether the last drain left events in the ring. */
static bool backlog;

bool eventlog_drain(void)
{
	int n = sf_runtime_drain_events(sfd.rt, EVENTS_PER_TURN, log_event, NULL);

	log_flush();
	backlog = n >= EVENTS_PER_TURN;
	return backlog;
}

bool eventlog_drained(void)
{
	return !backlog;
}

void eventlog_stop(void)
{
	int i;

	/* What the ring buffer holds (at most 6,554 events), not a flood
	 * that goes on meanwhile. */
	for (i = 0; i < 32 && eventlog_drain(); i++)
		;
	eventagg_stop();
	log_flush();
	eventlog_tick(true);
}

size_t eventlog_replay(struct client *c, uint32_t request_id, bool admin)
{
	size_t i, sent = 0;

	for (i = 0; i < RING_EVENTS; i++) {
		struct ring_ev *r = &ring[(ring_next + i) % RING_EVENTS];

		if (!r->json || (!admin && r->uid != c->uid))
			continue;
		if (conn_reply(c, request_id, 0, 0, SF_REPLY_MORE, r->json, NULL, 0) < 0)
			break;
		sent++;
	}
	return sent;
}
