// SPDX-License-Identifier: GPL-2.0-only
/* A real Prometheus for tests (prometheus.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "prometheus.h"
#include "daemon.h"
#include "harness.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <json-c/json.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define GET_TIMEOUT_S 5
#define GET_MAX (4u << 20)

static bool find_exe(const char *name, char *out, size_t size)
{
	const char *path = getenv("PATH");
	char dirs[4096], *save = NULL, *d;

	snprintf(dirs, sizeof(dirs), "%s:/usr/bin", path ? path : "");
	for (d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		if ((size_t)snprintf(out, size, "%s/%s", d, name) < size &&
		    access(out, X_OK) == 0)
			return true;
	}
	out[0] = '\0';
	return false;
}

int prom_find(struct prom *p, char *why, size_t size)
{
	if (find_exe("prometheus", p->bin, sizeof(p->bin)) &&
	    find_exe("promtool", p->tool, sizeof(p->tool)))
		return 1;
	if (why)
		snprintf(why, size, "%s not installed", p->bin[0] ? "promtool" : "prometheus");
	return 0;
}

int prom_check_metrics(const struct prom *p, const char *body, size_t len, char *out,
		       size_t size)
{
	const char *argv[] = { p->tool, "check", "metrics", NULL };
	struct sfd_io io = { .in = body, .in_len = len, .out = out, .out_size = size };
	char err[4096];
	int st;

	io.err = err;
	io.err_size = sizeof(err);
	st = sfd_run_io(argv, &io, 60);
	/* promtool says what it found on stderr, its verdict on stdout. */
	if (size && strlen(out) + 1 < size)
		snprintf(out + strlen(out), size - strlen(out), "%s", err);
	return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int prom_check_rules(const struct prom *p, const char *path, char *out, size_t size)
{
	const char *argv[] = { p->tool, "check", "rules", path, NULL };
	int st = sfd_run(argv, true, 60, out, size);

	return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)f;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static void show_log(const struct prom *p)
{
	char path[128], line[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/prometheus.log", p->dir);
	f = fopen(path, "r");
	if (!f)
		return;
	fprintf(stderr, "    --- %s ---\n", path);
	while (fgets(line, sizeof(line), f))
		fprintf(stderr, "    %s", line);
	fclose(f);
}

/* A port nobody listens on now (in this network namespace). */
static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = -1;

	if (s >= 0 && !bind(s, (struct sockaddr *)&a, al) &&
	    !getsockname(s, (struct sockaddr *)&a, &al))
		port = ntohs(a.sin_port);
	if (s >= 0)
		close(s);
	return port;
}

static bool write_config(const struct prom *p, const char *job, const char *target,
			 const char *rules)
{
	char path[128];
	FILE *f;
	bool ok;

	snprintf(path, sizeof(path), "%s/prometheus.yml", p->dir);
	f = fopen(path, "w");
	if (!f)
		return false;
	fprintf(f, "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
		   "  evaluation_interval: 1s\n");
	if (rules)
		fprintf(f, "rule_files:\n  - '%s'\n", rules);
	fprintf(f, "scrape_configs:\n  - job_name: '%s'\n    static_configs:\n"
		   "      - targets: ['%s']\n", job, target);
	ok = !ferror(f);
	return fclose(f) == 0 && ok;
}

static pid_t spawn(const struct prom *p)
{
	char config[128], tsdb[128], listen[64], log[128];
	pid_t pid;
	int fd;

	snprintf(config, sizeof(config), "--config.file=%s/prometheus.yml", p->dir);
	snprintf(tsdb, sizeof(tsdb), "--storage.tsdb.path=%s/data", p->dir);
	snprintf(listen, sizeof(listen), "--web.listen-address=127.0.0.1:%d", p->port);
	snprintf(log, sizeof(log), "%s/prometheus.log", p->dir);
	pid = fork();
	if (pid)
		return pid;
	/* Its own process group, so that the stop reaches all of it; and it
	 * dies with the test, whatever becomes of the test. */
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
		_exit(127);
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || dup2(fd, 0) < 0)
		_exit(127);
	execl(p->bin, p->bin, config, tsdb, listen, "--storage.tsdb.retention.time=1h",
	      (char *)NULL);
	_exit(127);
}

/* Waits for /-/ready: 1 ready, 0 it exited (maybe a port taken in the
 * meantime), -1 it did not get ready in time. */
static int wait_ready(struct prom *p)
{
	char body[256];
	int i, st;

	for (i = 0; i < PROM_READY_MS / 100; i++) {
		if (prom_http_get(p->port, "/-/ready", body, sizeof(body), NULL) == 200)
			return 1;
		if (waitpid(p->pid, &st, WNOHANG) == p->pid) {
			p->exit_status = st;
			p->pid = 0;
			return 0;
		}
		usleep(100000);
	}
	return -1;
}

bool prom_start(struct prom *p, const char *job, const char *target, const char *rules)
{
	char data[128];
	int tries, r = -1;

	if (!p->bin[0] && !prom_find(p, NULL, 0))
		return ASSERT_TRUE(false, "prometheus found");
	snprintf(p->dir, sizeof(p->dir), "/tmp/sftest-prom-XXXXXX");
	if (!ASSERT_OK_PTR(mkdtemp(p->dir), "mkdtemp")) {
		p->dir[0] = '\0';
		return false;
	}
	snprintf(data, sizeof(data), "%s/data", p->dir);
	if (!ASSERT_OK(mkdir(data, 0700), "mkdir data") ||
	    !ASSERT_TRUE(write_config(p, job, target, rules), "prometheus.yml written"))
		return false;
	for (tries = 0; tries < 3 && r != 1; tries++) {
		p->port = free_port();
		if (!ASSERT_GE(p->port, 1, "a free port"))
			return false;
		p->pid = spawn(p);
		if (!ASSERT_GE(p->pid, 1, "fork"))
			return false;
		setpgid(p->pid, p->pid);
		r = wait_ready(p);
		if (r < 0)
			break;
	}
	if (r != 1) {
		show_log(p);
		return ASSERT_TRUE(false, "prometheus ready");
	}
	test_log("prometheus on 127.0.0.1:%d scrapes %s (job %s)\n", p->port, target, job);
	return true;
}

int prom_http_get(int port, const char *path, char *out, size_t size, size_t *len)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct timeval tv = { GET_TIMEOUT_S, 0 };
	char req[4096], *buf = malloc(GET_MAX + 1), *body;
	size_t got = 0;
	ssize_t n;
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), status = -1;

	if (size)
		out[0] = '\0';
	if (len)
		*len = 0;
	n = snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: 127.0.0.1:%d\r\n\r\n", path,
		     port);
	if (!buf || s < 0 || (size_t)n >= sizeof(req) ||
	    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) ||
	    connect(s, (struct sockaddr *)&a, sizeof(a)) ||
	    send(s, req, (size_t)n, MSG_NOSIGNAL) != n)
		goto out;
	while (got < GET_MAX && (n = recv(s, buf + got, GET_MAX - got, 0)) > 0)
		got += (size_t)n;
	if (n < 0)
		goto out;
	buf[got] = '\0';
	body = strstr(buf, "\r\n\r\n");
	if (!body || sscanf(buf, "HTTP/1.%*d %d", &status) != 1) {
		status = -1;
		goto out;
	}
	body += 4;
	if (len)
		*len = got - (size_t)(body - buf);
	if (size)
		snprintf(out, size, "%s", body);
out:
	if (s >= 0)
		close(s);
	free(buf);
	return status;
}

/* The value of a [time, "value"] pair. */
static int sample_value(struct json_object *pair, double *value)
{
	struct json_object *v;

	if (!json_object_is_type(pair, json_type_array) || json_object_array_length(pair) != 2)
		return -1;
	v = json_object_array_get_idx(pair, 1);
	if (!json_object_is_type(v, json_type_string))
		return -1;
	*value = strtod(json_object_get_string(v), NULL);
	return 1;
}

int prom_query(const struct prom *p, const char *expr, double *value)
{
	static char body[1 << 16];
	char path[2048];
	struct json_object *top, *status, *data, *type, *result;
	size_t n = snprintf(path, sizeof(path), "/api/v1/query?query=");
	const char *e;
	int r = -1, code;

	for (e = expr; *e && n + 4 < sizeof(path); e++) {
		unsigned char c = (unsigned char)*e;

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || strchr("-_.~", c))
			path[n++] = (char)c;
		else
			n += (size_t)snprintf(path + n, sizeof(path) - n, "%%%02X", c);
	}
	path[n] = '\0';
	code = prom_http_get(p->port, path, body, sizeof(body), NULL);
	top = json_tokener_parse(body);
	if (code != 200 || !top) {
		test_log("query %s: HTTP %d: %.300s\n", expr, code, body);
		goto out;
	}
	if (!json_object_object_get_ex(top, "status", &status) ||
	    strcmp(json_object_get_string(status), "success") ||
	    !json_object_object_get_ex(top, "data", &data) ||
	    !json_object_object_get_ex(data, "resultType", &type) ||
	    !json_object_object_get_ex(data, "result", &result)) {
		test_log("query %s: unexpected answer %.300s\n", expr, body);
		goto out;
	}
	if (!strcmp(json_object_get_string(type), "scalar")) {
		r = sample_value(result, value);
	} else if (!json_object_is_type(result, json_type_array)) {
		test_log("query %s: result is no array\n", expr);
	} else if (json_object_array_length(result) == 0) {
		r = 0;
	} else {
		struct json_object *first = json_object_array_get_idx(result, 0), *pair;

		if (json_object_object_get_ex(first, "value", &pair))
			r = sample_value(pair, value);
	}
out:
	json_object_put(top);
	return r;
}

int prom_query_wait(const struct prom *p, const char *expr, int timeout_ms, double *value)
{
	struct timespec t0, t;
	int r;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		r = prom_query(p, expr, value);
		if (r != 0)
			return r;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 >=
		    timeout_ms)
			return 0;
		usleep(200000);
	}
}

int prom_rules(const struct prom *p, int *healthy)
{
	static char body[1 << 18];
	struct json_object *top, *data, *groups, *rules, *health;
	size_t g, i;
	int n = -1;

	*healthy = 0;
	if (prom_http_get(p->port, "/api/v1/rules", body, sizeof(body), NULL) != 200 ||
	    !(top = json_tokener_parse(body)))
		return -1;
	if (json_object_object_get_ex(top, "data", &data) &&
	    json_object_object_get_ex(data, "groups", &groups) &&
	    json_object_is_type(groups, json_type_array)) {
		n = 0;
		for (g = 0; g < json_object_array_length(groups); g++) {
			if (!json_object_object_get_ex(json_object_array_get_idx(groups, g),
						       "rules", &rules))
				continue;
			for (i = 0; i < json_object_array_length(rules); i++, n++)
				*healthy += json_object_object_get_ex(
						    json_object_array_get_idx(rules, i),
						    "health", &health) &&
					    !strcmp(json_object_get_string(health), "ok");
		}
	}
	json_object_put(top);
	return n;
}

bool prom_stop(struct prom *p)
{
	bool clean = true;
	int i, st = 0;

	if (p->pid > 0) {
		kill(-p->pid, SIGTERM);
		for (i = 0; i < PROM_STOP_MS / 20 && waitpid(p->pid, &st, WNOHANG) == 0; i++)
			usleep(20000);
		if (i == PROM_STOP_MS / 20) {
			test_log("prometheus ignored SIGTERM for %d ms\n", PROM_STOP_MS);
			kill(-p->pid, SIGKILL);
			waitpid(p->pid, &st, 0);
			clean = false;
		}
		p->exit_status = st;
		clean = clean && WIFEXITED(st) && WEXITSTATUS(st) == 0;
		/* Nothing of its group is left (it starts no other process). */
		if (kill(-p->pid, 0) == 0 || errno != ESRCH) {
			kill(-p->pid, SIGKILL);
			clean = false;
		}
		p->pid = 0;
	}
	if (p->dir[0]) {
		if (nftw(p->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS) || access(p->dir, F_OK) == 0)
			clean = false;
		p->dir[0] = '\0';
	}
	return clean;
}

void prom_cleanup(struct prom *p)
{
	if (p->dir[0] && test_failed())
		show_log(p);
	prom_stop(p);
}
