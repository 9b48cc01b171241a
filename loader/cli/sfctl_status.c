// SPDX-License-Identifier: GPL-2.0-only
/*
 * sfctl status, ps and show: what sfilterd reports of itself, of the
 * confined tasks and of their filters (docs/protocol.md, STATUS, PS, SHOW).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sfctl.h"
#include "proto.h"
#include "c2e.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

/* The programs attached only on demand, which every task on the machine
 * pays for while they are (an older daemon reports none). */
static void print_programs(struct json_object *o)
{
	if (!sfctl_get_str(o, "dispatcher"))
		return;
	printf("programs: dispatcher %s", sfctl_get_str(o, "dispatcher"));
	if (sfctl_get_int(o, "lsm_programs", -1) >= 0)
		printf("; %" PRId64 " LSM programs", sfctl_get_int(o, "lsm_programs", 0));
	if (sfctl_get_str(o, "reply_programs"))
		printf("; reply programs %s", sfctl_get_str(o, "reply_programs"));
	printf("\n");
}

/* The event budget, and the uids that lost events (an older daemon
 * reports neither). */
static void print_drops(struct json_object *o)
{
	struct json_object *b = NULL, *arr = NULL;
	size_t i;

	if (json_object_object_get_ex(o, "event_budget", &b) && b) {
		if (sfctl_get_int(b, "rate", 0))
			printf("budget:   %" PRId64 " events a second per login user, bursts of %"
			       PRId64 " (each for denials and kills, and for calls only logged)\n",
			       sfctl_get_int(b, "rate", 0), sfctl_get_int(b, "burst", 0));
		else
			printf("budget:   none (every event is logged that fits the ring buffer)\n");
	}
	if (json_object_object_get_ex(o, "repeats", &b) && b) {
		struct json_object *v;
		double s = json_object_object_get_ex(b, "interval_s", &v) ?
			   json_object_get_double(v) : 0;

		if (s > 0)
			printf("repeats:  one event with a count per %g s for a process's repeats of "
			       "a call; %" PRId64 " calls folded, %" PRId64 " repeat events\n", s,
			       sfctl_get_int(b, "folded", 0), sfctl_get_int(b, "repeat_events", 0));
		else
			printf("repeats:  not folded (an event per call)\n");
	}
	if (!json_object_object_get_ex(o, "events_dropped_by_uid", &arr) || !arr)
		return;
	for (i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *a = json_object_array_get_idx(arr, i);

		printf("%s uid %" PRId64 ": %" PRId64 " events dropped over its budget, %" PRId64
		       " with the ring buffer full (%" PRId64 " denials or kills)\n",
		       i ? "         " : "dropped: ", sfctl_get_int(a, "uid", 0), sfctl_get_int(a, "budget", 0),
		       sfctl_get_int(a, "ring", 0), sfctl_get_int(a, "enforced", 0));
	}
}

int cmd_status(void)
{
	struct sf_msg_hdr h;
	struct json_object *o;
	struct sfctl_reply r;
	int fd = sfctl_connect_daemon();

	sfctl_send_req(fd, &h, SF_MSG_STATUS, sizeof(h));
	if (!sfctl_recv_reply(fd, &r))
		sfctl_die(3, "no reply");
	if (r.error)
		sfctl_refused("status", &r);
	o = sfctl_parse_text(r.text);
	if (cli_json) {
		sfctl_print_json(o);
	} else {
		printf("sfilterd %s (protocol %" PRId64 "), pid %" PRId64 "\n",
		       sfctl_get_str(o, "version"), sfctl_get_int(o, "protocol", 0), sfctl_get_int(o, "pid", 0));
		printf("tier:     %s", sfctl_get_str(o, "tier"));
		if (sfctl_get_str(o, "tier_reason") && *sfctl_get_str(o, "tier_reason"))
			printf(" (%s)", sfctl_get_str(o, "tier_reason"));
		printf("\n");
		printf("pinned:   %s%s%s\n", sfctl_get_int(o, "pinned", 0) ? "yes, " : "no",
		       sfctl_get_int(o, "pinned", 0) ? sfctl_get_str(o, "pin_dir") : "",
		       sfctl_get_int(o, "adopted", 0) ? " (adopted at start)" : "");
		if (sfctl_get_int(o, "tasks", -1) >= 0)
			printf("tasks:    %" PRId64 " confined\nfilters:  %" PRId64 " in force\n",
			       sfctl_get_int(o, "tasks", 0), sfctl_get_int(o, "filters", 0));
		else
			printf("tasks:    unknown (%s)\n", sfctl_get_str(o, "message"));
		printf("events:   %" PRId64 " since start\nuptime:   %" PRId64 " s\n",
		       sfctl_get_int(o, "events", 0), sfctl_get_int(o, "uptime_s", 0));
		/* What every task on the machine pays for, now. */
		print_programs(o);
		{
			struct json_object *a = NULL;

			if (json_object_object_get_ex(o, "sf_attach", &a) && a)
				printf("sf_attach: %" PRId64 " attached\n", sfctl_get_int(a, "armed", 0));
			if (json_object_object_get_ex(o, "gate", &a) && a)
				printf("gate:     %" PRId64 " listeners held; calls sent up: %" PRId64
				       " judged, %" PRId64 " continued, %" PRId64 " refused, %" PRId64
				       " trapped, %" PRId64 " killed (agent socket %s)\n",
				       sfctl_get_int(a, "listeners", 0), sfctl_get_int(a, "judged", 0),
				       sfctl_get_int(a, "continued", 0) + sfctl_get_int(a, "unjudged", 0),
				       sfctl_get_int(a, "denied", 0), sfctl_get_int(a, "trapped", 0),
				       sfctl_get_int(a, "killed", 0), sfctl_get_str(a, "agent_socket"));
			if (json_object_object_get_ex(o, "kernel_counters", &a) && a)
				printf("kernel:   %" PRId64 " events dropped, %" PRId64
				       " forks unconfined, %" PRId64 " empty chain slots, %" PRId64
				       " cgroup joins failed\n", sfctl_get_int(a, "events_dropped", 0),
				       sfctl_get_int(a, "fork_failed", 0), sfctl_get_int(a, "tailcall_failed", 0),
				       sfctl_get_int(a, "cgroup_join_failed", 0));
		}
		print_drops(o);
		printf("you:      %s\n", sfctl_get_int(o, "admin", 0) ? "admin" : "not admin");
	}
	json_object_put(o);
	return 0;
}

/* Collects every task of a (multi-reply) PS or SHOW into one array. */
struct json_object *sfctl_read_tasks(int fd, const char *what, struct sfctl_reply *last)
{
	struct json_object *all = json_object_new_array(), *o, *arr;
	struct sfctl_reply r;
	size_t i;
	bool done;

	for (;;) {
		if (!sfctl_recv_reply(fd, &r))
			sfctl_die(3, "%s: connection closed", what);
		if (r.error)
			sfctl_refused(what, &r);
		o = sfctl_parse_text(r.text);
		if (json_object_object_get_ex(o, "tasks", &arr))
			for (i = 0; i < json_object_array_length(arr); i++)
				json_object_array_add(all, json_object_get(
					json_object_array_get_idx(arr, i)));
		done = !(r.flags & SF_REPLY_MORE) || json_object_object_get_ex(o, "total", NULL);
		json_object_put(o);
		if (done)
			break;
	}
	*last = r;
	return all;
}

/* The columns of ps and show; CONTAINER is the id's first 12 digits, as
 * docker ps and crictl ps print it (--json carries all 64). */
static void print_task_header(void)
{
	printf("%7s %7s %6s  %-16s %-12s %s\n", "TID", "PID", "UID", "COMM", "CONTAINER",
	       "CHAIN (oldest first)");
}

static void print_task(struct json_object *t)
{
	struct json_object *ids;
	const char *container = sfctl_get_str(t, "container");
	size_t i;

	printf("%7" PRId64 " %7" PRId64 " %6" PRId64 "  %-16s %-12.12s ", sfctl_get_int(t, "tid", 0),
	       sfctl_get_int(t, "tgid", 0), sfctl_get_int(t, "uid", 0), sfctl_get_str(t, "comm"),
	       container && *container ? container : "-");
	if (json_object_object_get_ex(t, "filters", &ids))
		for (i = 0; i < json_object_array_length(ids); i++)
			printf("%s%" PRId64, i ? "," : "",
			       json_object_get_int64(json_object_array_get_idx(ids, i)));
	if (sfctl_get_int(t, "n_filters", 0) > 64)
		printf(",... (%" PRId64 ")", sfctl_get_int(t, "n_filters", 0));
	if (sfctl_get_int(t, "at_exec", 0))
		printf(" (from its next execve)");
	if (sfctl_get_int(t, "gated", 0))
		printf(" (gated)");
	if (sfctl_get_int(t, "user_notif", 0))
		printf(" (under another supervisor's USER_NOTIF listener)");
	putchar('\n');
}

int cmd_ps(void)
{
	struct sf_msg_hdr h;
	struct json_object *tasks;
	struct sfctl_reply r;
	size_t i;
	int fd = sfctl_connect_daemon();

	sfctl_send_req(fd, &h, SF_MSG_PS, sizeof(h));
	tasks = sfctl_read_tasks(fd, "ps", &r);
	if (cli_json) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "tasks", tasks);
		sfctl_print_json(o);
		json_object_put(o);
		return 0;
	}
	print_task_header();
	for (i = 0; i < json_object_array_length(tasks); i++)
		print_task(json_object_array_get_idx(tasks, i));
	json_object_put(tasks);
	return 0;
}

int cmd_show(pid_t pid, bool hits)
{
	struct sf_id_req req = { .id = (uint32_t)pid };
	struct json_object *tasks, *filters = json_object_new_array(), *out;
	struct sfctl_reply r;
	size_t i;
	int fd = sfctl_connect_daemon();

	sfctl_send_req(fd, &req, SF_MSG_SHOW, sizeof(req));
	tasks = sfctl_read_tasks(fd, "show", &r);
	while (r.flags & SF_REPLY_MORE) {
		struct json_object *f;
		char *dis = NULL;
		size_t dlen = 0;
		FILE *m;

		if (!sfctl_recv_reply(fd, &r))
			sfctl_die(3, "show: connection closed");
		if (r.error)
			sfctl_refused("show", &r);
		f = sfctl_parse_text(r.text);
		if (r.data_len >= 8 && (m = open_memstream(&dis, &dlen))) {
			enum c2e_abi abi = C2E_ABI_SECCOMP;

			if (sfctl_get_str(f, "abi"))
				c2e_abi_parse(sfctl_get_str(f, "abi"), &abi);
			c2e_disasm_classic_abi(r.data, r.data_len / 8, abi, m);
			fclose(m);
			json_object_object_add(f, "disasm", json_object_new_string(dis));
			free(dis);
			if (hits)
				hits_annotate(f, r.data, r.data_len / 8, abi);
		}
		if (sfctl_get_int(f, "filter", 0) || r.id)
			json_object_array_add(filters, f);
		else
			json_object_put(f);
	}
	out = json_object_new_object();
	json_object_object_add(out, "pid", json_object_new_int(pid));
	json_object_object_add(out, "tasks", tasks);
	json_object_object_add(out, "filters", filters);
	if (cli_json) {
		sfctl_print_json(out);
	} else if (json_object_array_length(tasks) == 0) {
		printf("process %d is not confined\n", pid);
	} else {
		print_task_header();
		for (i = 0; i < json_object_array_length(tasks); i++)
			print_task(json_object_array_get_idx(tasks, i));
		for (i = 0; i < json_object_array_length(filters); i++) {
			struct json_object *f = json_object_array_get_idx(filters, i), *fl;
			const char *dis = sfctl_get_str(f, "disasm");

			printf("\nfilter %" PRId64 ": %" PRId64 " instructions over %s, attached by uid %" PRId64,
			       sfctl_get_int(f, "filter", 0), sfctl_get_int(f, "len", 0),
			       sfctl_get_str(f, "abi") ? sfctl_get_str(f, "abi") : "seccomp",
			       sfctl_get_int(f, "owner", 0));
			if (json_object_object_get_ex(f, "flags", &fl) &&
			    json_object_array_length(fl))
				printf(", flags %s", json_object_to_json_string_ext(fl, JSON_C_TO_STRING_PLAIN));
			printf("\n%s", dis ? dis : "  (program unavailable)\n");
			if (hits)
				hits_print(f);
		}
	}
	json_object_put(out);
	return 0;
}
