// SPDX-License-Identifier: GPL-2.0
/*
 * sfilterd --metrics: what the daemon and the kernel side count, in
 * Prometheus text format, served by http.c on a thread of its own. The
 * render runs on that thread: it reads only the kernel's counters (BPF
 * .bss and maps, which any thread may read), the gate's atomics, and a
 * snapshot the loop takes each turn (metrics_snapshot()).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "daemon.h"
#include "gate_internal.h"
#include "http.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static struct sf_http *server;

/* Taken by the loop, read by the render. */
static struct {
	int dispatcher;       /* its link id, 0: detached */
	uint64_t n_events;
} snap;

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

static void counter(FILE *f, const char *name, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s counter\n", name, help, name);
}

static void gauge(FILE *f, const char *name, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

static void drops(FILE *f)
{
	struct sf_event_drops *all = NULL;
	uint64_t budget = 0, ring = 0;
	size_t n = 0, i;
	int c;

	if (sf_runtime_event_drops(d.rt, &all, &n) == 0) {
		for (i = 0; i < n; i++)
			for (c = 0; c < SF_EV_CLASSES; c++) {
				budget += all[i].budget[c];
				ring += all[i].ring[c];
			}
	}
	free(all);
	counter(f, "sfilter_events_dropped_total",
		"events not logged: over their login user's budget, or no room in the ring buffer");
	fprintf(f, "sfilter_events_dropped_total{reason=\"budget\"} %llu\n",
		(unsigned long long)budget);
	fprintf(f, "sfilter_events_dropped_total{reason=\"ring\"} %llu\n",
		(unsigned long long)ring);
}

static void gate(FILE *f)
{
	gauge(f, "sfilter_gate_listeners", "kernel seccomp listeners (gates) the daemon judges");
	fprintf(f, "sfilter_gate_listeners %llu\n", (unsigned long long)LOAD(g.st.listeners));
	counter(f, "sfilter_gate_calls_total", "calls gates sent up, by the answer they got");
#define A(field, name) fprintf(f, "sfilter_gate_calls_total{answer=\"" name "\"} %llu\n", \
			       (unsigned long long)LOAD(g.st.field))
	A(continued, "continue");
	A(denied, "errno");
	A(trapped, "trap");
	A(killed, "kill");
	A(unjudged, "enosys");
#undef A
}

static int render(void *ctx, char **body, size_t *len)
{
	struct sf_counters k;
	FILE *f;

	(void)ctx;
	f = open_memstream(body, len);
	if (!f)
		return -errno;
	sf_runtime_counters(d.rt, &k);
	gauge(f, "sfilter_up", "1 while sfilterd serves with its runtime open");
	fprintf(f, "sfilter_up 1\n");
	gauge(f, "sfilter_info", "the daemon's version and enforcement tier");
	fprintf(f, "sfilter_info{version=\"%s\",tier=\"%s\"} 1\n", SFILTERD_VERSION,
		sf_tier_name(sf_runtime_tier(d.rt)));
	gauge(f, "sfilter_confined_tasks", "tasks with a filter or an arm, as the kernel counts them");
	fprintf(f, "sfilter_confined_tasks %llu\n", (unsigned long long)k.confined);
	gauge(f, "sfilter_dispatcher_attached", "1 while the sys_enter dispatcher is attached");
	fprintf(f, "sfilter_dispatcher_attached %d\n", LOAD(snap.dispatcher) != 0);
	counter(f, "sfilter_events_logged_total", "events written to the event log");
	fprintf(f, "sfilter_events_logged_total %llu\n", (unsigned long long)LOAD(snap.n_events));
	drops(f);
	counter(f, "sfilter_kernel_failures_total",
		"what the BPF side could not do: fork storage, orphans killed, empty chain slots, cgroup joins");
	fprintf(f, "sfilter_kernel_failures_total{what=\"fork_storage\"} %llu\n",
		(unsigned long long)k.fork_failed);
	fprintf(f, "sfilter_kernel_failures_total{what=\"orphan_killed\"} %llu\n",
		(unsigned long long)k.orphans_killed);
	fprintf(f, "sfilter_kernel_failures_total{what=\"tailcall\"} %llu\n",
		(unsigned long long)k.tailcall_failed);
	fprintf(f, "sfilter_kernel_failures_total{what=\"cgroup_join\"} %llu\n",
		(unsigned long long)k.cg_failed);
	gate(f);
	if (fclose(f))
		return -errno;
	return 0;
}

int metrics_open(const char *addr)
{
	char err[256];
	int r = sf_http_open(addr, &server, err, sizeof(err));

	if (r < 0)
		diag("%s", err);
	return r;
}

void metrics_snapshot(void)
{
	struct sf_lazy_links l;

	if (!server)
		return;
	sf_runtime_lazy_links(d.rt, &l);
	__atomic_store_n(&snap.dispatcher, l.dispatcher, __ATOMIC_RELAXED);
	__atomic_store_n(&snap.n_events, d.n_events, __ATOMIC_RELAXED);
}

int metrics_start(void)
{
	int r;

	if (!server)
		return 0;
	metrics_snapshot();
	r = sf_http_start(server, render, NULL);
	if (r < 0)
		diag("--metrics: %s", strerror(-r));
	return r;
}

void metrics_stop(void)
{
	if (server)
		sf_http_close(server);
	server = NULL;
}
