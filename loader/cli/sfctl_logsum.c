// SPDX-License-Identifier: GPL-2.0-only
/*
 * sfctl log --summary: what the events add up to, per process, syscall and
 * outcome. The kernel folds a process's repeats of a call into events with
 * a "count" (sfilterd --repeat-interval), so lines are not calls: this
 * sums the counts, most calls first.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sfctl.h"
#include "grow.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

struct row {
	int64_t pid;
	uint64_t start;
	char comm[17], syscall[48], arch[8], taken[20], action[20];
	int64_t filter;
	uint64_t calls, events, repeats;
};

struct summary {
	struct row *r;
	size_t n, cap, events, lines;
};

static void copy(char *dst, size_t size, struct json_object *o, const char *key)
{
	const char *s = sfctl_get_str(o, key);

	snprintf(dst, size, "%s", s ? s : "?");
}

static void add(void *ctx, const char *line)
{
	struct summary *s = ctx;
	struct json_object *o = json_tokener_parse(line), *v;
	struct row k = { 0 }, *r;
	uint64_t n;
	size_t i;

	s->lines++;
	if (!o)
		return;
	if (!json_object_object_get_ex(o, "nr", NULL) || !sfctl_get_str(o, "arch")) {
		json_object_put(o); /* a daemon line, not an event */
		return;
	}
	s->events++;
	k.pid = sfctl_get_int(o, "pid", -1);
	k.start = (uint64_t)sfctl_get_int(o, "start_ns", 0);
	k.filter = sfctl_get_int(o, "filter", -1);
	copy(k.comm, sizeof(k.comm), o, "comm");
	copy(k.arch, sizeof(k.arch), o, "arch");
	copy(k.taken, sizeof(k.taken), o, "taken");
	copy(k.action, sizeof(k.action), o, "action");
	if (sfctl_get_str(o, "syscall"))
		copy(k.syscall, sizeof(k.syscall), o, "syscall");
	else
		snprintf(k.syscall, sizeof(k.syscall), "%" PRId64, sfctl_get_int(o, "nr", -1));
	for (i = 0; i < s->n; i++) {
		r = &s->r[i];
		if (r->pid == k.pid && r->start == k.start && r->filter == k.filter &&
		    !strcmp(r->syscall, k.syscall) && !strcmp(r->arch, k.arch) &&
		    !strcmp(r->taken, k.taken) && !strcmp(r->action, k.action))
			break;
	}
	if (i == s->n) {
		if (C2E_GROW(s->r, s->cap, s->n + 1))
			sfctl_die(1, "out of memory");
		s->r[s->n++] = k;
	}
	r = &s->r[i];
	if (!sfctl_event_count(o, &n))
		sfctl_die(1, "line %zu of the log: \"count\" is not a count of calls", s->lines);
	r->calls += n;
	r->events++;
	r->repeats += json_object_object_get_ex(o, "repeat", &v) && json_object_get_boolean(v);
	json_object_put(o);
}

static int most_calls(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	return x->calls != y->calls ? (x->calls < y->calls ? 1 : -1) :
	       x->pid < y->pid ? -1 : x->pid > y->pid;
}

int cmd_log_summary(const char *log)
{
	struct summary s = { 0 };
	size_t i;

	sfctl_read_events(log, add, &s);
	if (s.n)
		qsort(s.r, s.n, sizeof(*s.r), most_calls);
	if (cli_json) {
		struct json_object *arr = json_object_new_array();

		for (i = 0; i < s.n; i++) {
			struct json_object *o = json_object_new_object();
			const struct row *r = &s.r[i];

			json_object_object_add(o, "pid", json_object_new_int64(r->pid));
			json_object_object_add(o, "start_ns", json_object_new_uint64(r->start));
			json_object_object_add(o, "comm", json_object_new_string(r->comm));
			json_object_object_add(o, "syscall", json_object_new_string(r->syscall));
			json_object_object_add(o, "arch", json_object_new_string(r->arch));
			json_object_object_add(o, "action", json_object_new_string(r->action));
			json_object_object_add(o, "taken", json_object_new_string(r->taken));
			json_object_object_add(o, "filter", json_object_new_int64(r->filter));
			json_object_object_add(o, "calls", json_object_new_uint64(r->calls));
			json_object_object_add(o, "events", json_object_new_uint64(r->events));
			json_object_object_add(o, "repeat_events", json_object_new_uint64(r->repeats));
			json_object_array_add(arr, o);
		}
		sfctl_print_json(arr);
		json_object_put(arr);
	} else {
		printf("%-12s %-8s %-8s %-16s %-20s %-7s %-13s %-16s %s\n", "CALLS", "EVENTS", "PID",
		       "COMM", "SYSCALL", "ARCH", "ACTION", "TAKEN", "FILTER");
		for (i = 0; i < s.n; i++) {
			const struct row *r = &s.r[i];

			printf("%-12" PRIu64 " %-8" PRIu64 " %-8" PRId64 " %-16s %-20s %-7s %-13s "
			       "%-16s %" PRId64 "\n", r->calls, r->events, r->pid, r->comm,
			       r->syscall, r->arch, r->action, r->taken, r->filter);
		}
	}
	free(s.r);
	return 0;
}
