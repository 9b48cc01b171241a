// SPDX-License-Identifier: GPL-2.0-only
/*
 * A real Prometheus (tests/lib/prometheus.h) and the metrics server
 * (tests/lib/scrape.h, rendering fixed metrics under the names sfilterd
 * exports):
 *   - promtool accepts the metrics (and is no rubber stamp); Prometheus
 *     scrapes the server every second and its query API answers with the
 *     values and labels rendered, the counters rising;
 *   - dist/prometheus/sfilter-alerts.yml passes `promtool check rules`;
 *   - loaded into Prometheus, its rules fire on the metrics they are
 *     written against (denials rising in one container and not another,
 *     events dropped, attaches refused, a slow gate), stay quiet on the
 *     others, and SfilterdDown fires once the endpoint is gone.
 * Prometheus is stopped and checked gone (its process group, its
 * directory, no mount under it). Where prometheus or promtool is not
 * installed (the 6.1 guest), each test is a SKIP that says so. The tests
 * that listen run in a network namespace of their own.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "daemon.h"
#include "http.h"
#include "prometheus.h"
#include "scrape.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* dist/prometheus/sfilter-alerts.yml of the tree the runner was built
 * in: beside build/, where sfilterd is (or $SF_ALERT_RULES). */
static bool find_rules(char *out, size_t size)
{
	const char *env = getenv("SF_ALERT_RULES");
	char bin[PATH_MAX];

	if (env && *env)
		snprintf(out, size, "%s", env);
	else if (sfd_find_bin("sfilterd", "SF_SFILTERD", bin, sizeof(bin)))
		snprintf(out, size, "%s/../dist/prometheus/sfilter-alerts.yml", dirname(bin));
	else
		snprintf(out, size, "dist/prometheus/sfilter-alerts.yml");
	return access(out, R_OK) == 0;
}

/* Prometheus and promtool, or a skip that says why. */
static bool need_prometheus(struct prom *p)
{
	char why[256];

	return TEST_REQUIRE(prom_find(p, why, sizeof(why)), NULL, why);
}

/* Whether anything is mounted under dir (the test made none, and
 * Prometheus must not either). */
static bool mounted_under(const char *dir)
{
	char line[4096];
	bool found = false;
	FILE *f = fopen("/proc/self/mountinfo", "r");

	while (f && fgets(line, sizeof(line), f))
		found = found || strstr(line, dir);
	if (f)
		fclose(f);
	return found;
}

/* Stops Prometheus and checks it left nothing: no process of its group,
 * no mount and no file of its directory. */
static void stop_prometheus(struct prom *p)
{
	char dir[sizeof(p->dir)];
	pid_t pid = p->pid;

	snprintf(dir, sizeof(dir), "%s", p->dir);
	ASSERT_FALSE(mounted_under(dir), "nothing mounted under its directory");
	ASSERT_TRUE(prom_stop(p), "prometheus stopped cleanly (exit 0 on SIGTERM)");
	ASSERT_TRUE(kill(-pid, 0) == -1 && errno == ESRCH, "no process of its group left");
	ASSERT_TRUE(access(dir, F_OK) == -1 && errno == ENOENT, "its directory removed");
}

TEST(prometheus_scrapes_the_metrics_server_and_its_queries_answer)
{
	struct scrape_render r = { 0 };
	struct sf_http *h;
	char target[64], out[8192];
	char *body = NULL;
	size_t len = 0;
	double v = 0;
	int st;
	PROM_AUTO;

	if (!need_prometheus(&prom) || !scrape_private_net())
		return;
	/* promtool accepts the fixed metrics, and is no rubber stamp. */
	ASSERT_OK(scrape_render(&r, &body, &len), "render");
	st = prom_check_metrics(&prom, body, len, out, sizeof(out));
	test_log("promtool check metrics: %d %s\n", st, out);
	ASSERT_EQ(st, 0, "promtool check metrics accepts the body");
	free(body);
	st = prom_check_metrics(&prom, "# TYPE x counter\nx 1\n", 21, out, sizeof(out));
	ASSERT_EQ(st, 3, "promtool: a counter without _total is a lint problem");
	ASSERT_TRUE(strstr(out, "_total") != NULL, out);
	st = prom_check_metrics(&prom, "x{ 1\n", 5, out, sizeof(out));
	ASSERT_EQ(st, 1, "promtool: not the text format");

	atomic_store(&r.calls, 0);
	if (!(h = scrape_serve(":0", &r)))
		return;
	snprintf(target, sizeof(target), "127.0.0.1:%d", sf_http_port(h));
	if (prom_start(&prom, "sfilterd", target, NULL)) {
		ASSERT_EQ(prom_query_wait(&prom, "up{job=\"sfilterd\"}", 30000, &v), 1,
			  "up{job=\"sfilterd\"} has a sample");
		ASSERT_TRUE(v == 1, "the target is up");
		ASSERT_EQ(prom_query_wait(&prom, "sfilter_up{job=\"sfilterd\"}", 30000, &v), 1,
			  "sfilter_up scraped");
		ASSERT_TRUE(v == 1, "sfilter_up is 1");
		ASSERT_EQ(prom_query_wait(&prom, "sfilter_confined_tasks", 30000, &v), 1,
			  "sfilter_confined_tasks scraped");
		ASSERT_TRUE(v == 3, "sfilter_confined_tasks is 3");
		ASSERT_EQ(prom_query_wait(&prom,
			  "sfilter_denials_total{container=\"web\",syscall=\"ptrace\"}", 30000, &v),
			  1, "a denial counter with its labels");
		ASSERT_TRUE(v >= 20, "its value");
		/* Scraped every second: the counter rises between queries. */
		ASSERT_EQ(prom_query_wait(&prom,
			  "increase(sfilter_events_dropped_total[10s]) > 0", 30000, &v), 1,
			  "the counter rises from scrape to scrape");
		ASSERT_EQ(prom_query(&prom, "scrape_samples_scraped{job=\"sfilterd\"}", &v), 1,
			  "scrape_samples_scraped");
		test_log("%d renders, %.0f samples a scrape\n", atomic_load(&r.calls), v);
		ASSERT_EQ(v, 13, "every sample of the body scraped");
		ASSERT_EQ(prom_query(&prom, "absent(nonexistent_metric_total)", &v), 1,
			  "a query with no such series");
		stop_prometheus(&prom);
	}
	sf_http_close(h);
}

TEST(alert_rules_pass_promtool_check_rules)
{
	char rules[PATH_MAX + 64], out[8192];
	int st;
	PROM_AUTO;

	if (!need_prometheus(&prom))
		return;
	if (!find_rules(rules, sizeof(rules))) {
		test_skip("%s not found beside the runner (set SF_ALERT_RULES)", rules);
		return;
	}
	st = prom_check_rules(&prom, rules, out, sizeof(out));
	test_log("%s", out);
	ASSERT_EQ(st, 0, "promtool check rules");
	ASSERT_TRUE(strstr(out, "SUCCESS: 8 rules found") != NULL, "8 rules found");
}

/* Whether the alert named in expr (an ALERTS selector) is pending or
 * firing within timeout_ms. */
static bool alert_on(const struct prom *p, const char *expr, int timeout_ms)
{
	double v = 0;
	int r = prom_query_wait(p, expr, timeout_ms, &v);

	test_log("%s: %s\n", expr, r == 1 ? "pending or firing" : r ? "query failed" : "no");
	return r == 1;
}

TEST(alert_rules_fire_on_the_metrics_they_are_written_against)
{
	static const char *const firing[] = {
		"ALERTS{alertname=\"SfilterDenialsRising\",container=\"web\"}",
		"ALERTS{alertname=\"SfilterEventsDropped\",reason=\"ring\"}",
		"ALERTS{alertname=\"SfilterAttachRefused\",kind=\"cgroup\",errno=\"ENOSPC\"}",
		"ALERTS{alertname=\"SfilterGateSlow\"}",
	};
	static const char *const quiet[] = {
		"ALERTS{alertname=\"SfilterDenialsRising\",container=\"idle\"}",
		"ALERTS{alertname=\"SfilterdDown\"}",
		"ALERTS{alertname=\"SfilterdScrapeMissing\"}",
		"ALERTS{alertname=\"SfilterRuntimeDown\"}",
		"ALERTS{alertname=\"SfilterDispatcherDetached\"}",
	};
	char rules[PATH_MAX + 64], target[64];
	struct scrape_render r = { 0 };
	struct sf_http *h;
	int healthy = 0;
	size_t i;
	PROM_AUTO;

	if (!need_prometheus(&prom) || !scrape_private_net())
		return;
	if (!find_rules(rules, sizeof(rules))) {
		test_skip("%s not found beside the runner (set SF_ALERT_RULES)", rules);
		return;
	}
	if (!(h = scrape_serve(":0", &r)))
		return;
	snprintf(target, sizeof(target), "127.0.0.1:%d", sf_http_port(h));
	if (!prom_start(&prom, "sfilterd", target, rules)) {
		sf_http_close(h);
		return;
	}
	for (i = 0; i < sizeof(firing) / sizeof(firing[0]); i++)
		ASSERT_TRUE(alert_on(&prom, firing[i], 30000), firing[i]);
	for (i = 0; i < sizeof(quiet) / sizeof(quiet[0]); i++)
		ASSERT_FALSE(alert_on(&prom, quiet[i], 0), quiet[i]);
	/* Evaluated by now (the alerts above are its results). */
	ASSERT_EQ(prom_rules(&prom, &healthy), 8, "Prometheus loaded the 8 rules");
	ASSERT_EQ(healthy, 8, "every rule evaluates without error");
	/* The endpoint gone: scrapes fail, up is 0. */
	sf_http_close(h);
	ASSERT_TRUE(alert_on(&prom, "ALERTS{alertname=\"SfilterdDown\"}", 30000),
		    "SfilterdDown once the endpoint is gone");
	stop_prometheus(&prom);
}
