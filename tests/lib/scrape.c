// SPDX-License-Identifier: GPL-2.0-only
/* The metrics server for tests, with fixed metrics (scrape.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "scrape.h"
#include "harness.h"
#include "http.h"
#include "netns.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int scrape_render(void *ctx, char **body, size_t *len)
{
	struct scrape_render *r = ctx;
	int n = atomic_fetch_add(&r->calls, 1) + 1, err = atomic_load(&r->fail);
	size_t big = atomic_load(&r->big);
	FILE *f;

	if (err)
		return err;
	if (big) {
		*body = malloc(big);
		if (!*body)
			return -ENOMEM;
		memset(*body, '#', big);
		(*body)[big - 1] = '\n';
		*len = big;
		return 0;
	}
	f = open_memstream(body, len);
	if (!f)
		return -errno;
	fprintf(f,
		"# HELP sfilter_up Whether sfilterd's runtime is loaded.\n"
		"# TYPE sfilter_up gauge\nsfilter_up 1\n"
		"# HELP sfilter_denials_total Calls denied.\n"
		"# TYPE sfilter_denials_total counter\n"
		"sfilter_denials_total{container=\"web\",cgroup=\"/web\",filter=\"3\","
		"syscall=\"ptrace\",action=\"ERRNO\",tier=\"gate\"} %d\n"
		"sfilter_denials_total{container=\"idle\",cgroup=\"/idle\",filter=\"4\","
		"syscall=\"mount\",action=\"KILL_PROCESS\",tier=\"lsm\"} 5\n"
		"# HELP sfilter_events_dropped_total Events dropped.\n"
		"# TYPE sfilter_events_dropped_total counter\n"
		"sfilter_events_dropped_total{reason=\"ring\"} %d\n"
		"# HELP sfilter_attach_refusals_total Attaches refused.\n"
		"# TYPE sfilter_attach_refusals_total counter\n"
		"sfilter_attach_refusals_total{kind=\"cgroup\",errno=\"ENOSPC\"} %d\n"
		"# HELP sfilter_gate_round_trip_seconds The gate's round trips.\n"
		"# TYPE sfilter_gate_round_trip_seconds histogram\n"
		"sfilter_gate_round_trip_seconds_bucket{le=\"0.001\"} 0\n"
		"sfilter_gate_round_trip_seconds_bucket{le=\"0.01\"} 0\n"
		"sfilter_gate_round_trip_seconds_bucket{le=\"0.1\"} %d\n"
		"sfilter_gate_round_trip_seconds_bucket{le=\"+Inf\"} %d\n"
		"sfilter_gate_round_trip_seconds_sum %g\n"
		"sfilter_gate_round_trip_seconds_count %d\n"
		"# HELP sfilter_dispatcher_attached Whether the dispatcher is attached.\n"
		"# TYPE sfilter_dispatcher_attached gauge\nsfilter_dispatcher_attached 1\n"
		"# HELP sfilter_confined_tasks Tasks confined.\n"
		"# TYPE sfilter_confined_tasks gauge\nsfilter_confined_tasks 3\n",
		20 * n, n, n, 10 * n, 10 * n, 0.5 * n, 10 * n);
	return fclose(f) ? -EIO : 0;
}

struct sf_http *scrape_serve(const char *addr, struct scrape_render *r)
{
	struct sf_http *h = NULL;
	char err[256] = "";
	int ret = sf_http_open(addr, &h, err, sizeof(err));

	if (!ASSERT_OK(ret, err) || !ASSERT_OK(sf_http_start(h, scrape_render, r), "start")) {
		sf_http_close(h);
		return NULL;
	}
	return h;
}

bool scrape_private_net(void)
{
	char why[256];

	return TEST_REQUIRE(netns_private_loopback(why, sizeof(why)), NULL, why);
}
