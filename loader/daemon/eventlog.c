// SPDX-License-Identifier: GPL-2.0
/*
 * What sfilterd says: the event log (one JSON line per event, and one per
 * start, stop, administration and refusal) to a file, stdout or syslog,
 * reopened on SIGHUP so that it can be rotated; the last events, kept for
 * LOG and streamed to its followers; and lines on stderr.
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

/* Where the log goes when it is not syslog: stdout or the file opened
 * last. */
static FILE *log_file;

/* The last events, for LOG without --follow and for a follower's backlog.
 * uid: the real uid of the task that made the call. */
#define RING_EVENTS 512
struct ring_ev { uid_t uid; char *json; };
static struct ring_ev ring[RING_EVENTS];
static size_t ring_next;

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

	if (d.use_syslog) {
		closelog();
		openlog("sfilterd", LOG_PID | LOG_NDELAY, LOG_DAEMON);
		return 0;
	}
	if (!d.log_path || strcmp(d.log_path, "-") == 0) {
		log_file = stdout;
		return 0;
	}
	f = fopen(d.log_path, "ae");
	if (!f) {
		r = -errno;
		diag("%s: %s", d.log_path, strerror(-r));
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
	if (d.use_syslog)
		syslog(LOG_NOTICE, "%s", line);
	else if (log_file)
		fprintf(log_file, "%s\n", line);
}

void log_flush(void)
{
	if (!d.use_syslog && log_file)
		fflush(log_file);
}

static int log_event(void *ctx, const struct sf_event *ev)
{
	char buf[2048];
	int n = sf_event_to_json(ev, buf, sizeof(buf)), i;
	struct ring_ev *r;
	uid_t uid;

	(void)ctx;
	if (n <= 0)
		return 0;
	d.n_events++;
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

void eventlog_drain(void)
{
	sf_runtime_poll_events(d.rt, 0, log_event, NULL);
	log_flush();
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
