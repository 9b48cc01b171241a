// SPDX-License-Identifier: GPL-2.0-only
/*
 * sfilterd --metrics, the real daemon: what it serves is Prometheus text
 * that promtool accepts and a real Prometheus scrapes; a port it cannot
 * have stops it before it serves anything, with one line. Each family is
 * seen with a value the test caused: a counted filter's rule hits equal
 * the calls made under it, sfctl's attaches have kind pid or cgroup (one
 * refused, with its errno), a gated denial carries the container and
 * cgroup of the task that made it, also once that cgroup is gone.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "c2e.h"
#include "cgroup.h"
#include "daemon.h"
#include "prometheus.h"
#include "scrape.h"
#include "victim.h"
#include "sockfilter.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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
	ASSERT_TRUE(strstr(body, "\nsfilter_attach_duration_seconds_count{kind=\"self\"} ") &&
		    !strstr(body, "\nsfilter_attach_duration_seconds_count{kind=\"self\"} 0\n"),
		    "sfrun's attach timed in the histogram");
	ASSERT_TRUE(strstr(body, "sfilter_attaches_total{kind=\"self\",result=\"attached\"} ") &&
		    !strstr(body, "sfilter_attaches_total{kind=\"self\",result=\"attached\"} 0\n"),
		    "and counted as attached, kind self");
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

/* ---- what the test caused, in the scrape ---------------------------------- */

#define BODY_MAX              (256 * 1024)

/* The value of the series (its name and labels, as sfilterd writes them)
 * in body, or -1 when it is not there. */
static long long series_value(const char *body, const char *series)
{
	size_t n = strlen(series);
	const char *p;

	for (p = body; (p = strstr(p, series)); p += n)
		if ((p == body || p[-1] == '\n') && p[n] == ' ')
			return strtoll(p + n + 1, NULL, 10);
	return -1;
}

/* Scrapes until series has the value want (the loop reads counted
 * filters every second): what it had last, or -1. body keeps the last
 * scrape. */
static long long scrape_until(const char *series, long long want, char *body, size_t *len)
{
	int i, tries = test_is_emulated() ? 300 : 50;
	long long v = -1;

	for (i = 0; i < tries; i++) {
		if (prom_http_get(METRICS_PORT, "/metrics", body, BODY_MAX, len) == 200 &&
		    (v = series_value(body, series)) == want)
			break;
		usleep(100000);
	}
	return v;
}

/* promtool's word on body, where it is installed (a SKIP of that part
 * elsewhere). */
static void promtool_accepts(const char *body, size_t len)
{
	char why[256], out[8192];
	int st;
	PROM_AUTO;

	if (prom_find(&prom, why, sizeof(why)) != 1) {
		test_skip_part("promtool", "%s", why);
		return;
	}
	st = prom_check_metrics(&prom, body, len, out, sizeof(out));
	test_log("promtool check metrics: %d %s\n", st, out);
	ASSERT_EQ(st, 0, "promtool check metrics accepts it");
}

/* sfctl --socket SOCK args..., its output into out: its exit code, or -1. */
static int run_sfctl(const struct sfd *dm, const char *const args[], char *out, size_t size)
{
	char sfctl[4096];
	const char *argv[12] = { sfctl, "--socket", dm->sock };
	int i, st;

	if (!ASSERT_TRUE(sfd_find_bin("sfctl", "SF_SFCTL", sfctl, sizeof(sfctl)), "sfctl"))
		return -1;
	for (i = 0; args[i] && i < 8; i++)
		argv[3 + i] = args[i];
	st = sfd_run(argv, true, 60, out, size);
	test_log("sfctl %s: %d %s", args[0], st, out);
	return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* getppid(2) is logged (its ret at 2), the rest allowed (at 3). */
static const struct sock_filter log_getppid[] = {
	STMT(BPF_LD | BPF_W | BPF_ABS, 0),
	JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getppid, 0, 1),
	STMT(BPF_RET | BPF_K, SECCOMP_RET_LOG),
	STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

TEST(sfilterd_serves_rule_hits_equal_to_the_calls_made_and_admin_attaches_by_kind)
{
	static const char *const margs[] = { "--metrics", "127.0.0.1:9464", NULL };
	char file[256], spid[16], nocg[64], series[256], out[4096], *body = malloc(BODY_MAX);
	const char *attach[] = { "attach", "--pid", spid, "--filter", file, "--count", NULL };
	const char *refused[] = { "attach", "--cgroup", nocg, "--filter", file, NULL };
	unsigned int id = 0;
	const char *at;
	struct victim v;
	size_t len = 0;
	int calls = 1000, i, made = 0;
	SFD_AUTO_STOP;

	if (!ASSERT_OK_PTR(body, "malloc") || !scrape_private_net())
		goto out;
	dm.args = margs;
	if (!sfd_start_sfilterd(&dm, false) || !ASSERT_TRUE(victim_start(&v), "the victim"))
		goto out;
	snprintf(file, sizeof(file), "%s/log-getppid.bpf", dm.dir);
	snprintf(spid, sizeof(spid), "%d", v.pid);
	if (!ASSERT_OK(c2e_save_raw(file, log_getppid, 4), "save the filter") ||
	    !ASSERT_EQ(run_sfctl(&dm, attach, out, sizeof(out)), 0, "sfctl attach --pid --count") ||
	    !ASSERT_TRUE((at = strstr(out, "filter ")) && sscanf(at, "filter %u", &id) == 1,
			 "the filter's id")) {
		victim_end(&v);
		goto out;
	}
	for (i = 0; i < calls; i++)
		made += victim_do(&v, 'A') == 1;
	ASSERT_EQ(made, calls, "the victim's getppid calls");
	snprintf(series, sizeof(series),
		 "sfilter_rule_hits_total{filter=\"%u\",insn=\"2\",action=\"LOG\"}", id);
	ASSERT_EQ(scrape_until(series, calls, body, &len), calls,
		  "getppid's ret: hit once per call, as the test made them");
	test_log("%zu bytes:\n%s", len, body);
	snprintf(series, sizeof(series),
		 "sfilter_rule_hits_total{filter=\"%u\",insn=\"3\",action=\"ALLOW\"}", id);
	ASSERT_GE(series_value(body, series), 2 * calls, "the other ret: the victim's reads and writes");
	ASSERT_EQ(series_value(body, "sfilter_rule_hits_filters_left_out"), 0, "none left out");
	ASSERT_EQ(series_value(body, "sfilter_attaches_total{kind=\"pid\",result=\"attached\"}"),
		  1, "sfctl's attach is an admin attach by pid");
	ASSERT_EQ(series_value(body, "sfilter_attach_duration_seconds_count{kind=\"pid\"}"), 1,
		  "and timed");
	ASSERT_EQ(series_value(body, "sfilter_attaches_total{kind=\"self\",result=\"attached\"}"),
		  0, "no self-attach was made");
	/* A cgroup that does not exist: refused, and counted so. */
	snprintf(nocg, sizeof(nocg), "/sftest-no-such-cgroup-%d", getpid());
	ASSERT_TRUE(run_sfctl(&dm, refused, out, sizeof(out)) != 0, "attach --cgroup refused");
	ASSERT_EQ(scrape_until("sfilter_attaches_total{kind=\"cgroup\",result=\"refused\"}", 1,
			       body, &len), 1, "a refused cgroup attach has kind cgroup");
	ASSERT_TRUE(strstr(body, "sfilter_attach_refusals_total{kind=\"cgroup\",errno=\"") != NULL,
		    "with its errno");
	promtool_accepts(body, len);
	victim_end(&v);
out:
	free(body);
}

/* A cgroup named as Docker's systemd driver names a container's. */
#define CONTAINER_ID "5a1f0e7d3c2b4a69887766554433221100ffeeddccbbaa998877665544332211"

TEST(sfilterd_serves_a_gated_denial_with_the_container_and_cgroup_of_its_task_also_once_gone)
{
	static const char *const margs[] = { "--metrics", "127.0.0.1:9464", NULL };
	static const char profile[] =
		"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":["
		"{\"names\":[\"sync\"],\"action\":\"SCMP_ACT_ERRNO\"}]}";
	char parent[PATH_MAX], cg[PATH_MAX + 96], root[256], why[256], path[300], sfrun[4096];
	char series[PATH_MAX + 512], out[4096], *body = malloc(BODY_MAX);
	bool cg_gone = false;
	size_t len = 0;
	pid_t pid;
	FILE *f;
	int st;
	SFD_AUTO_STOP;

	if (!ASSERT_OK_PTR(body, "malloc") || !scrape_private_net() ||
	    !tcg_make(parent, sizeof(parent), "sftest-metrics"))
		goto out;
	snprintf(cg, sizeof(cg), "%s/docker-" CONTAINER_ID ".scope", parent);
	if (!ASSERT_OK(mkdir(cg, 0755) ? -errno : 0, "mkdir the container's cgroup"))
		goto out_parent;
	dm.args = margs;
	if (!sfd_start_sfilterd(&dm, false) ||
	    !ASSERT_TRUE(sfd_find_bin("sfrun", "SF_SFRUN", sfrun, sizeof(sfrun)), "sfrun"))
		goto out_cg;
	snprintf(path, sizeof(path), "%s/deny-sync.json", dm.dir);
	if (!ASSERT_TRUE((f = fopen(path, "w")) != NULL, path))
		goto out_cg;
	fputs(profile, f);
	fclose(f);
	snprintf(out, sizeof(out), "%s/sfrun.out", dm.dir);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		/* In the container's cgroup, then gated: three syncs refused
		 * by sfilterd, the shell goes on. */
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0 || !tcg_move(cg, getpid()))
			_exit(97);
		execl(sfrun, sfrun, "--profile", path, "--", "/bin/sh", "-c",
		      "sync; sync; sync; echo lived", (char *)NULL);
		_exit(96);
	}
	ASSERT_TRUE(pid > 0 && waitpid(pid, &st, 0) == pid, "sfrun ran");
	test_log("sfrun in %s: status 0x%x\n", cg, st);
	ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0 && sfd_file_has(out, "lived\n"),
		    "the gated shell lived");
	/* Gone before the scrape, as a short-lived container's is: the
	 * labels are what the gate read while the call was pending. */
	ASSERT_OK(rmdir(cg) ? -errno : 0, "the container's cgroup removed (nothing left in it)");
	cg_gone = true;
	/* The label is the path below the cgroup2 mount. */
	ASSERT_EQ(tcg_root(root, sizeof(root), why, sizeof(why)), 1, "cgroup2 mount");
	snprintf(series, sizeof(series), "sfilter_denials_total{container=\"%.12s\",cgroup=\"%s\","
		 "filter=\"1\",syscall=\"sync\",nr=\"162\",arch=\"x86_64\",action=\"ERRNO\","
		 "taken=\"refused\",tier=\"gate\"}", CONTAINER_ID, cg + strlen(root));
	ASSERT_EQ(scrape_until(series, 3, body, &len), 3,
		  "three gated syncs, with the container and cgroup of the task that made them");
	test_log("%zu bytes:\n%s", len, body);
	ASSERT_EQ(series_value(body, "sfilter_gate_calls_total{answer=\"errno\"}"), 3,
		  "the same three in the gate's calls");
	ASSERT_EQ(series_value(body, "sfilter_attaches_total{kind=\"gate\",result=\"attached\"}"),
		  1, "sfrun's gate: a listener taken, kind gate");
	ASSERT_EQ(series_value(body, "sfilter_gate_denials_left_out_total"), 0, "none left out");
	promtool_accepts(body, len);
out_cg:
	if (!cg_gone)
		rmdir(cg);
out_parent:
	rmdir(parent);
out:
	free(body);
}
