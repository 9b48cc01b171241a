// SPDX-License-Identifier: GPL-2.0
/*
 * sfilterd --metrics, the real daemon: what it serves is Prometheus text
 * that promtool accepts and a real Prometheus scrapes; a port it cannot
 * have stops it before it serves anything, with one line.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "daemon.h"
#include "prometheus.h"
#include "scrape.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

SFD_TIER_INDEPENDENT

/* A private network namespace: these ports are free there. */
#define METRICS_PORT 9464
#define TAKEN_PORT   9465

/* A process under a profile that refuses sync(2) and logs uname(2), with
 * no gate: the BPF side decides both, and counts them. */
static void confine_and_deny(struct sfd *dm)
{
	static const char profile[] =
		"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":["
		"{\"names\":[\"sync\"],\"action\":\"SCMP_ACT_ERRNO\"},"
		"{\"names\":[\"uname\"],\"action\":\"SCMP_ACT_LOG\"}]}";
	char sfrun[4096], path[300], out[4096];
	FILE *f;
	int st;

	if (!ASSERT_TRUE(sfd_find_bin("sfrun", "SF_SFRUN", sfrun, sizeof(sfrun)), "sfrun"))
		return;
	snprintf(path, sizeof(path), "%s/deny-sync.json", dm->dir);
	f = fopen(path, "w");
	if (!ASSERT_TRUE(f != NULL, path))
		return;
	fputs(profile, f);
	fclose(f);
	{
		const char *const argv[] = { sfrun, "--no-gate", "--profile", path, "--",
					     "/bin/sh", "-c", "uname >/dev/null; sync", NULL };

		st = sfd_run(argv, true, 60, out, sizeof(out));
	}
	test_log("sfrun: status 0x%x %s\n", st, out);
	/* Killed on the tracepoint tier, refused on lsm: the metrics below
	 * say which. */
	{
		/* With its gate: sfilterd judges sync(2), which fails with
		 * EPERM and the shell goes on. */
		const char *const argv[] = { sfrun, "--profile", path, "--", "/bin/sh", "-c",
					     "sync; echo lived", NULL };

		st = sfd_run(argv, true, 60, out, sizeof(out));
	}
	test_log("sfrun (gated): status 0x%x %s\n", st, out);
	ASSERT_TRUE(st == 0 && strstr(out, "lived"), "gated: sync refused, the shell lives");
}

TEST(sfilterd_serves_metrics_that_promtool_accepts_and_prometheus_scrapes)
{
	static const char *const args[] = { "--metrics", "127.0.0.1:9464", NULL };
	struct sfd dm = { 0 };
	char why[256], body[65536], out[8192];
	size_t len = 0;
	double v = 0;
	int st;
	PROM_AUTO;

	if (!scrape_private_net())
		return;
	dm.args = args;
	if (!sfd_start_sfilterd(&dm, false))
		return;
	confine_and_deny(&dm);
	st = prom_http_get(METRICS_PORT, "/metrics", body, sizeof(body), &len);
	ASSERT_EQ(st, 200, "GET /metrics of sfilterd");
	test_log("%zu bytes:\n%s", len, body);
	ASSERT_TRUE(strstr(body, "\nsfilter_up 1\n") != NULL, "sfilter_up 1");
	ASSERT_TRUE(strstr(body, "sfilter_gate_calls_total{answer=\"errno\"}") != NULL,
		    "the gate's calls by answer");
	ASSERT_TRUE(strstr(body, "sfilter_events_dropped_total{reason=\"budget\"}") != NULL,
		    "events dropped by reason");
	ASSERT_TRUE(strstr(body, "syscall=\"sync\",nr=\"162\",arch=\"x86_64\",action=\"ERRNO\"")
		    != NULL, "sync's denial counted, with its labels");
	ASSERT_TRUE(strstr(body, "\nsfilter_attach_duration_seconds_count ") &&
		    !strstr(body, "\nsfilter_attach_duration_seconds_count 0\n"),
		    "sfrun's attach timed in the histogram");
	ASSERT_TRUE(strstr(body, "sfilter_attaches_total{result=\"attached\"} ") &&
		    !strstr(body, "sfilter_attaches_total{result=\"attached\"} 0\n"),
		    "and counted as attached");
	ASSERT_TRUE(strstr(body, "sfilter_gate_calls_total{answer=\"errno\"} ") &&
		    !strstr(body, "sfilter_gate_calls_total{answer=\"errno\"} 0\n"),
		    "the gated sync counted by its answer");
	ASSERT_TRUE(!strstr(body, "\nsfilter_gate_round_trip_seconds_count 0\n"),
		    "and timed");
	ASSERT_TRUE(strstr(body, "sfilter_logged_calls_total{") &&
		    strstr(body, "syscall=\"uname\""), "uname's LOG counted");
	/* What the kernel counted is checked above on any machine; promtool
	 * and Prometheus only where they are installed. */
	if (prom_find(&prom, why, sizeof(why)) != 1) {
		test_skip_part("prometheus", "%s", why);
		ASSERT_TRUE(sfd_stop(&dm), "sfilterd stops cleanly with its metrics server");
		sfd_cleanup(&dm);
		return;
	}
	st = prom_check_metrics(&prom, body, len, out, sizeof(out));
	test_log("promtool check metrics: %d %s\n", st, out);
	ASSERT_EQ(st, 0, "promtool check metrics accepts what sfilterd serves");
	if (prom_start(&prom, "sfilterd", "127.0.0.1:9464", NULL)) {
		ASSERT_EQ(prom_query_wait(&prom, "sfilter_up{job=\"sfilterd\"}", 30000, &v), 1,
			  "Prometheus scraped sfilter_up");
		ASSERT_TRUE(v == 1, "sfilter_up is 1");
		ASSERT_EQ(prom_query_wait(&prom, "sfilter_confined_tasks{job=\"sfilterd\"}", 30000,
					  &v), 1, "and sfilter_confined_tasks");
		ASSERT_EQ(prom_query_wait(&prom, "sum(sfilter_denials_total{syscall=\"sync\"})",
					  30000, &v), 1, "Prometheus has the denial the test caused");
		ASSERT_TRUE(v >= 1, "at least one sync refused");
		ASSERT_TRUE(prom_stop(&prom), "prometheus stopped cleanly");
	}
	ASSERT_TRUE(sfd_stop(&dm), "sfilterd stops cleanly with its metrics server");
	sfd_cleanup(&dm);
}

TEST(sfilterd_whose_metrics_port_is_taken_exits_with_one_line_and_no_socket)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(TAKEN_PORT) };
	char sock[128], out[4096];
	const char *bin;
	char path[4096];
	int fd, st;

	if (!scrape_private_net())
		return;
	if (!TEST_REQUIRE(sfd_find_bin("sfilterd", "SF_SFILTERD", path, sizeof(path)), NULL,
			  "no sfilterd beside the runner"))
		return;
	bin = path;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ASSERT_OK(bind(fd, (struct sockaddr *)&a, sizeof(a)), "bind the port first");
	ASSERT_OK(listen(fd, 1), "listen");
	snprintf(sock, sizeof(sock), "/tmp/sftest-metrics-%d.sock", getpid());
	{
		const char *const argv[] = { bin, "--foreground", "--no-pin", "--socket", sock,
					     "--log", "/dev/null", "--metrics", "127.0.0.1:9465",
					     NULL };

		st = sfd_run(argv, true, 60, out, sizeof(out));
	}
	test_log("sfilterd: %s", out);
	ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) != 0, "sfilterd exits non-zero");
	ASSERT_TRUE(strstr(out, "--metrics 127.0.0.1:9465: address already in use") != NULL,
		    "one line naming the option and the cause");
	ASSERT_TRUE(access(sock, F_OK) != 0, "no socket left behind");
	unlink(sock);
	close(fd);
}
