// SPDX-License-Identifier: GPL-2.0-only
/*
 * What anyone may ask (docs/protocol.md): STATUS, PS, SHOW and LOG. An
 * admin sees every task and event; anyone else only those of its own uid.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "daemon.h"
#include "grow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>

/* Bytes of JSON after which PS sends what it has and starts a new chunk. */
#define PS_CHUNK_BYTES (48 * 1024)
/* The filters of one task that the BPF side reports. */
#define TASK_FILTERS(t) ((t)->n_filters < 64 ? (t)->n_filters : 64)

struct task_list { struct sf_task_info *t; size_t n, cap; };

static int collect_tasks(void *ctx, const struct sf_task_info *t)
{
	struct task_list *l = ctx;

	if (C2E_GROW(l->t, l->cap, l->n + 1))
		return -ENOMEM;
	l->t[l->n++] = *t;
	return 0;
}

/* One task of PS and SHOW; container: its process's container id, or
 * NULL for none (the field is left out). */
static struct json_object *task_json(const struct sf_task_info *t, const char *container)
{
	struct json_object *o = json_object_new_object(), *ids = json_object_new_array();
	char comm[17];
	uint32_t i, n = TASK_FILTERS(t);

	memcpy(comm, t->comm, 16);
	comm[16] = '\0';
	json_object_object_add(o, "tid", json_object_new_int(t->tid));
	json_object_object_add(o, "tgid", json_object_new_int(t->tgid));
	json_object_object_add(o, "uid", json_object_new_int64(t->uid));
	json_object_object_add(o, "comm", json_object_new_string(comm));
	json_object_object_add(o, "n_filters", json_object_new_int64(t->n_filters));
	for (i = 0; i < n; i++)
		json_object_array_add(ids, json_object_new_int64(t->filter_ids[i]));
	json_object_object_add(o, "filters", ids);
	if (t->at_exec)
		json_object_object_add(o, "at_exec", json_object_new_boolean(1));
	if (t->gated)
		json_object_object_add(o, "gated", json_object_new_boolean(1));
	if (t->user_notif)
		json_object_object_add(o, "user_notif", json_object_new_boolean(1));
	if (container)
		json_object_object_add(o, "container", json_object_new_string(container));
	return o;
}

/* ---- STATUS ------------------------------------------------------------- */

struct counter { const char *name; uint64_t value; };

/* {"name": value, ...} of n counters, in their order. */
static struct json_object *counters_json(const struct counter *cs, size_t n)
{
	struct json_object *o = json_object_new_object();
	size_t i;

	for (i = 0; i < n; i++)
		json_object_object_add(o, cs[i].name, json_object_new_int64(cs[i].value));
	return o;
}

/* The daemon itself: version, tier, pins, uptime, clients, counters. */
static void status_daemon(struct json_object *o)
{
	const struct counter armed[] = { { "armed", sfd.n_armed } };
	struct sf_lazy_links lazy;
	struct sf_counters cnt;

	json_object_object_add(o, "daemon", json_object_new_string("sfilterd"));
	json_object_object_add(o, "version", json_object_new_string(SF_VERSION));
	json_object_object_add(o, "protocol", json_object_new_int(SF_PROTO_VERSION));
	json_object_object_add(o, "pid", json_object_new_int(getpid()));
	json_object_object_add(o, "tier",
			       json_object_new_string(sf_tier_name(sf_runtime_tier(sfd.rt))));
	json_object_object_add(o, "tier_reason",
			       json_object_new_string(sf_runtime_tier_reason(sfd.rt)));
	json_object_object_add(o, "pinned", json_object_new_boolean(sfd.pinned));
	if (sfd.pinned)
		json_object_object_add(o, "pin_dir", json_object_new_string(sfd.pin_dir));
	json_object_object_add(o, "adopted", json_object_new_boolean(sfd.adopted));
	json_object_object_add(o, "gate", gate_status_json());
	/* Attached only while anything can be judged: idle, syscalls cost
	 * what they cost without sfilter. */
	sf_runtime_lazy_links(sfd.rt, &lazy);
	json_object_object_add(o, "dispatcher", json_object_new_string(
		lazy.dispatcher ? "attached" : "detached (nothing to judge)"));
	if (sf_runtime_tier(sfd.rt) == SF_TIER_LSM)
		json_object_object_add(o, "lsm_programs", json_object_new_int(lazy.lsm));
	json_object_object_add(o, "reply_programs", json_object_new_string(
		lazy.reply ? "attached" : "detached (no sf_attach() undecided)"));
	json_object_object_add(o, "uptime_s", json_object_new_int64(time(NULL) - sfd.started));
	json_object_object_add(o, "clients", json_object_new_int(conn_count));
	json_object_object_add(o, "events", json_object_new_int64(sfd.n_events));
	json_object_object_add(o, "sf_attach", counters_json(armed, 1));
	/* Chains whose tasks' gates and the judge enforce the newest filter
	 * until its program is verified (loader/runtime/standin.c). */
	json_object_object_add(o, "standins", json_object_new_int(sf_runtime_standins(sfd.rt)));
	sf_runtime_counters(sfd.rt, &cnt);
	{
		const struct counter k[] = {
			{ "events_dropped", cnt.events_dropped },
			{ "fork_failed", cnt.fork_failed },
			{ "orphans_killed", cnt.orphans_killed },
			{ "tailcall_failed", cnt.tailcall_failed },
			{ "cgroup_join_failed", cnt.cg_failed },
		};

		json_object_object_add(o, "kernel_counters", counters_json(k, 5));
	}
}

/* {"validate": {"n": N, "ns": NS}, ...}: sfd.spans, every step named
 * (one no attach ran is {"n": 0, "ns": 0}), in the order they run. */
static struct json_object *attach_spans_json(void)
{
	struct json_object *o = json_object_new_object();
	int i;

	for (i = 0; i < AS_COUNT; i++) {
		const struct counter k[] = {
			{ "n", sfd.spans[i].n }, { "ns", sfd.spans[i].ns } };
		const char *name = i == AS_VALIDATE ? "validate" :
			i < AS_HANDOFF ? sf_runtime_span_name((enum sf_span)(i - AS_RUNTIME)) :
			i == AS_HANDOFF ? "handoff" : i == AS_REPLY ? "reply" : "total";

		json_object_object_add(o, name, counters_json(k, 2));
	}
	return o;
}

/* How many tasks have a chain, and how many distinct filters they run;
 * null for both when the runtime cannot list them. 0 or -errno. */
static int status_tasks(struct json_object *o)
{
	struct task_list l = { 0 };
	struct id_list ids = { 0 };
	size_t i, j, distinct = 0;
	int r = sf_runtime_for_each_task(sfd.rt, collect_tasks, &l);

	if (r == 0) {
		for (i = 0; i < l.n; i++)
			id_list_add_task(&ids, &l.t[i]);
		for (i = 0; i < ids.n; i++) {
			for (j = 0; j < i && ids.ids[j] != ids.ids[i]; j++)
				;
			distinct += j == i;
		}
		json_object_object_add(o, "tasks", json_object_new_int64(l.n));
		json_object_object_add(o, "filters", json_object_new_int64(distinct));
	} else {
		json_object_object_add(o, "tasks", NULL);
		json_object_object_add(o, "filters", NULL);
	}
	free(l.t);
	free(ids.ids);
	return r;
}

/* The limits in force, and what the connection limits have done. */
static void status_limits(struct json_object *o)
{
	const struct counter lim[] = {
		{ "programs_per_uid", sfd.max_programs },
		{ "insns_per_uid", sfd.max_insns },
		{ "attach_rate", sfd.max_rate },
		{ "conns_per_uid", conn_cfg.per_uid },
		{ "conns", conn_cfg.total },
		{ "queue_bytes", conn_cfg.queue_bytes },
	}, k[] = {
		{ "refused", conn_stats.refused },
		{ "evicted", conn_stats.evicted },
		{ "overflowed", conn_stats.overflowed },
	};

	json_object_object_add(o, "limits", counters_json(lim, 6));
	json_object_object_add(o, "connections", counters_json(k, 3));
}

/* The event budget, and who lost events (an admin sees every uid, anyone
 * else its own). */
/* Profiles compiled for PROFILE, kept for the next request with the same
 * inputs (rulecache.c). */
static struct json_object *profile_cache_json(void)
{
	struct rulecache_stats rc = rulecache_stats();
	struct json_object *f = json_object_new_object();

	json_object_object_add(f, "entries", json_object_new_int64(rc.entries));
	json_object_object_add(f, "hits", json_object_new_uint64(rc.hits));
	json_object_object_add(f, "misses", json_object_new_uint64(rc.misses));
	json_object_object_add(f, "compiling", json_object_new_int64(rc.compiling));
	return f;
}

static void status_events(struct json_object *o, const struct client *c, bool admin)
{
	const struct counter b[] = {
		{ "rate", sfd.event_rate },
		{ "burst", sfd.event_burst },
	};
	struct json_object *f = json_object_new_object();

	json_object_object_add(o, "event_budget", counters_json(b, 2));
	/* Repeats folded (by the kernel, and for the gate's calls by the
	 * daemon): the interval, the calls that made no event of their own,
	 * and the repeat events that reported them. */
	json_object_object_add(f, "interval_s", json_object_new_double(
		sf_runtime_repeat_interval(sfd.rt) / 1e9));
	json_object_object_add(f, "folded", json_object_new_uint64(eventagg_folded()));
	json_object_object_add(f, "repeat_events", json_object_new_uint64(eventagg_repeats()));
	json_object_object_add(o, "repeats", f);
	json_object_object_add(o, "events_dropped_by_uid", eventlog_drops_json(admin, c->uid));
	json_object_object_add(o, "profile_cache", profile_cache_json());
}

static void do_status(struct client *c, uint32_t rid, bool admin)
{
	struct json_object *o = json_object_new_object();
	int r;

	status_daemon(o);
	json_object_object_add(o, "admin", json_object_new_boolean(admin));
	/* An admin's only: the verifier's time tells the size of filters
	 * other users attached. */
	if (admin)
		json_object_object_add(o, "attach_spans", attach_spans_json());
	status_events(o, c, admin);
	r = status_tasks(o);
	status_limits(o);
	reply_json(c, rid, 0, 0, 0, o, r < 0 ? "task list unavailable" : NULL);
}

/* ---- PS and SHOW -------------------------------------------------------- */

/* Whether c may see task t, and t is of process (or thread) `only` when
 * that is not 0. */
static bool shown(const struct sf_task_info *t, const struct client *c, bool admin, pid_t only)
{
	if (only && t->tgid != only && t->tid != only)
		return false;
	return admin || t->uid == c->uid;
}

/* The container of t's process. The threads of a process mostly come one
 * after another (the iterator walks tids in order, and a process's are
 * mostly adjacent), so the last process's answer saves most re-reads. */
struct container_memo { pid_t tgid; bool found; char id[SF_CONTAINER_ID_LEN + 1]; };

static const char *task_container(const struct sf_task_info *t, struct container_memo *m)
{
	if (m->tgid != t->tgid) {
		m->tgid = t->tgid;
		m->found = container_of(t->tgid, m->id);
	}
	return m->found ? m->id : NULL;
}

/* The tasks in chunks of at most ~48 KiB of JSON, each {"tasks":[...]}
 * with SF_REPLY_MORE; the last one with "total", and MORE only for SHOW
 * (its filters follow). */
static void ps_tasks(struct client *c, uint32_t rid, bool admin, pid_t only,
		     const struct task_list *l)
{
	struct json_object *o = NULL, *arr = NULL;
	struct container_memo memo = { 0 };
	size_t i, shown_n = 0, bytes = 0;

	for (i = 0; i <= l->n; i++) {
		if (!o) {
			o = json_object_new_object();
			arr = json_object_new_array();
			json_object_object_add(o, "tasks", arr);
			bytes = 0;
		}
		if (i < l->n) {
			const struct sf_task_info *t = &l->t[i];

			if (!shown(t, c, admin, only))
				continue;
			json_object_array_add(arr, task_json(t, task_container(t, &memo)));
			/* At most: the fixed fields with comm escaped, 80 for
			 * the container, 12 a filter id. */
			bytes += 280 + 12 * TASK_FILTERS(t);
			shown_n++;
			if (bytes < PS_CHUNK_BYTES)
				continue;
			reply_json(c, rid, 0, 0, SF_REPLY_MORE, o, NULL);
			o = NULL;
			continue;
		}
		json_object_object_add(o, "total", json_object_new_int64(shown_n));
		reply_json(c, rid, 0, 0, only ? SF_REPLY_MORE : 0, o, NULL);
	}
}

/* A counted filter's hits, the rets taken at least once, by classic index:
 * at most SHOW_HITS of them, so that the reply stays within a message with
 * the largest program beside it. */
#define SHOW_HITS 800
static void show_hits(struct json_object *fo, uint32_t id)
{
	struct json_object *a;
	uint64_t *counts;
	int n = sf_runtime_filter_hits(sfd.rt, id, &counts), i, shown = 0;

	if (n < 0)
		return;
	a = json_object_new_array();
	for (i = 0; i < n; i++) {
		struct json_object *h;

		if (!counts[i])
			continue;
		if (shown++ == SHOW_HITS) {
			json_object_object_add(fo, "hits_truncated", json_object_new_boolean(1));
			break;
		}
		h = json_object_new_object();
		json_object_object_add(h, "insn", json_object_new_int(i));
		json_object_object_add(h, "count", json_object_new_int64((int64_t)counts[i]));
		json_object_array_add(a, h);
	}
	json_object_object_add(fo, "hits", a);
	free(counts);
}

/* One filter of SHOW: its info as text, the classic program as data. */
static void show_filter(struct client *c, uint32_t rid, uint32_t id, bool last)
{
	struct sf_filter_info info;
	struct sock_filter *insns = NULL;
	struct json_object *fo = json_object_new_object();
	int r;

	json_object_object_add(fo, "filter", json_object_new_int64(id));
	r = sf_runtime_filter(sfd.rt, id, &info, &insns);
	if (r == 0) {
		json_object_object_add(fo, "flags", flags_json(info.flags));
		json_object_object_add(fo, "abi", json_object_new_string(
			c2e_abi_name((enum c2e_abi)SF_FLAGS_ABI(info.flags))));
		json_object_object_add(fo, "owner", json_object_new_int64(info.owner));
		json_object_object_add(fo, "len", json_object_new_int64(info.len));
		show_hits(fo, id);
	} else {
		json_object_object_add(fo, "unavailable", json_object_new_string(strerror(-r)));
	}
	conn_reply(c, rid, 0, id, last ? 0 : SF_REPLY_MORE,
		   jstr(fo), insns, r == 0 && insns ? info.len * 8 : 0);
	json_object_put(fo);
	free(insns);
}

/* SHOW's tail: each distinct filter of process only's tasks that c sees. */
static void show_filters(struct client *c, uint32_t rid, bool admin, pid_t only,
			 const struct task_list *l)
{
	uint32_t seen[256], f;
	size_t n_seen = 0, i, k;

	for (i = 0; i < l->n; i++) {
		const struct sf_task_info *t = &l->t[i];

		if (!shown(t, c, admin, only))
			continue;
		for (f = 0; f < TASK_FILTERS(t); f++) {
			for (k = 0; k < n_seen && seen[k] != t->filter_ids[f]; k++)
				;
			if (k == n_seen && n_seen < 256)
				seen[n_seen++] = t->filter_ids[f];
		}
	}
	for (k = 0; k < n_seen; k++)
		show_filter(c, rid, seen[k], k + 1 == n_seen);
	if (!n_seen)
		reply_json(c, rid, 0, 0, 0, NULL, NULL);
}

/* PS (only 0) and SHOW (only: a pid). */
static void do_ps(struct client *c, uint32_t rid, bool admin, pid_t only)
{
	struct task_list l = { 0 };
	char msg[128];
	int r = sf_runtime_for_each_task(sfd.rt, collect_tasks, &l);

	if (r < 0) {
		runtime_err(r, &(struct c2e_error){ 0 }, msg, sizeof(msg));
		reply_json(c, rid, -r, 0, 0, NULL, msg);
		return;
	}
	ps_tasks(c, rid, admin, only, &l);
	if (only)
		show_filters(c, rid, admin, only, &l);
	free(l.t);
}

/* ---- LOG ---------------------------------------------------------------- */

static void do_log(struct client *c, uint32_t rid, bool admin, uint32_t flags)
{
	size_t sent = eventlog_replay(c, rid, admin);
	char buf[64];

	if (flags & SF_LOG_FOLLOW) {
		c->follow = true;
		c->follow_admin = admin;
		return;
	}
	snprintf(buf, sizeof(buf), "{\"events\":%zu}", sent);
	conn_reply(c, rid, 0, 0, 0, buf, NULL, 0);
}

int introspect_request(struct client *c, uint32_t rid, uint32_t type, const void *req,
		       size_t n, bool admin, char *msg, size_t msz)
{
	uint32_t pid, flags;

	switch (type) {
	case SF_MSG_STATUS:
		if (n != SF_PROTO_HDR_SIZE) {
			set_msg(msg, msz, "a status request is the header only");
			return EPROTO;
		}
		do_status(c, rid, admin);
		return 0;
	case SF_MSG_PS:
		if (n != SF_PROTO_HDR_SIZE) {
			set_msg(msg, msz, "malformed %s request", "ps");
			return EPROTO;
		}
		do_ps(c, rid, admin, 0);
		return 0;
	case SF_MSG_SHOW:
		if (n != SF_PROTO_ID_REQ_SIZE) {
			set_msg(msg, msz, "malformed %s request", "show");
			return EPROTO;
		}
		pid = ((const struct sf_id_req *)req)->id;
		if (pid == 0 || pid > INT32_MAX) {
			set_msg(msg, msz, "no process %u", pid);
			return ESRCH;
		}
		do_ps(c, rid, admin, pid);
		return 0;
	case SF_MSG_LOG:
		if (n != SF_PROTO_LOG_REQ_SIZE) {
			set_msg(msg, msz, "malformed log request");
			return EPROTO;
		}
		flags = ((const struct sf_log_req *)req)->flags;
		if (flags & ~(uint32_t)SF_LOG_FOLLOW) {
			set_msg(msg, msz, "malformed log request");
			return EINVAL;
		}
		do_log(c, rid, admin, flags);
		return 0;
	}
	set_msg(msg, msz, "unknown message type %u", type);
	return EPROTO;
}
