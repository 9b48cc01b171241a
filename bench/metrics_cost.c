// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a scrape of sfilterd --metrics costs as the kernel's counters grow:
 * the time of GET /metrics (the render, on the server's thread, and the
 * answer over loopback), with 1, 100 and 10,000 sf_stats series.
 *
 * The series are the kernel's own: a worker under a filter that returns
 * LOG for the syscall numbers from 100000 on (none exists: each call
 * fails with ENOSYS and runs nothing) calls one number per series wanted,
 * and the BPF side counts each in its own sf_stats key, served as one
 * sfilter_logged_calls_total series. All share the worker's cgroup, so
 * the render resolves one cgroup path; every series resolves its syscall
 * number (libseccomp) and action.
 *
 * The daemon is this bench's own (bench_util's private sfilterd, --no-pin,
 * `--metrics 127.0.0.1:PORT` on a port free when it starts). For each
 * size the worker makes the calls, the bench scrapes until the body has
 * that many series, then takes SCRAPES timed scrapes 150 ms apart (the
 * server shares one render among scrapes less than 100 ms apart).
 *
 * Never asserts; prints a Markdown table: series, bytes of the body,
 * best, median and p90 ms of a scrape, and µs per series above the
 * 1-series scrape.
 *
 * Usage: metrics_cost [-r SCRAPES] [-n MAX_SERIES] [-v]   (root)
 */
#define _GNU_SOURCE
#include "sfclient.h"
#include "bench_util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#define FIRST_NR    100000
#define MAX_SCRAPES 200
#define BODY_MAX    (32 << 20)

static int verbose;

/* LOG for FIRST_NR .. FIRST_NR + max - 1 (filled in by main()), ALLOW for
 * the rest. */
static struct sock_filter logf[] = {
	/* 0 */ BENCH_LD(0),
	/* 1 */ BENCH_JUMP(BPF_JMP | BPF_JGE | BPF_K, FIRST_NR, 0, 2),
	/* 2 */ BENCH_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0 /* main() */, 1, 0),
	/* 3 */ BENCH_RET(0x7ffc0000U /* SECCOMP_RET_LOG */),
	/* 4 */ BENCH_RET(BENCH_RET_ALLOW),
};

/* The worker: under logf (through this bench's sfilterd), calls the
 * numbers [FIRST_NR + from, FIRST_NR + to) for each pair it reads, and
 * answers with a byte. */
static void worker_loop(int cmd, int resp, const void *arg)
{
	struct sock_fprog p = { BENCH_ARRAY_SIZE(logf), logf };
	long range[2], nr;

	(void)arg;
	setenv("SFILTER_GATE", "0", 1); /* the BPF side alone counts */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || sf_attach(&p, 0)) {
		fprintf(stderr, "metrics_cost: sf_attach: %s\n", sf_last_error());
		_exit(3);
	}
	while (read(cmd, range, sizeof(range)) == sizeof(range) && range[1] > 0) {
		for (nr = range[0]; nr < range[1]; nr++)
			syscall(FIRST_NR + nr);
		if (write(resp, "y", 1) != 1)
			_exit(4);
	}
	_exit(0);
}

/* A loopback port nobody has now. */
static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = -1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && !bind(fd, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(fd, (struct sockaddr *)&a, &len))
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

/* Lines of body that are series of name (its HELP and TYPE are not). */
static long series_of(const char *body, const char *name)
{
	size_t n = strlen(name);
	const char *p;
	long count = 0;

	for (p = body; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		count += !strncmp(p, name, n) && p[n] == '{';
	return count;
}

/* One scrape as Prometheus makes it (a connection, GET, the answer read
 * to its end): its ms, or -1; the answer into out, its length into *len. */
static double scrape(int port, char *out, size_t *len)
{
	static const char req[] = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	double t0 = bench_now_ns();
	size_t got = 0;
	ssize_t n = 0;
	int fd;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    write(fd, req, sizeof(req) - 1) != (ssize_t)sizeof(req) - 1) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while (got < BODY_MAX - 1 && (n = read(fd, out + got, BODY_MAX - 1 - got)) > 0)
		got += (size_t)n;
	close(fd);
	out[got] = '\0';
	*len = got;
	if (n < 0 || got < 12 || strncmp(out, "HTTP/1.", 7) || strncmp(out + 8, " 200", 4))
		return -1;
	return (bench_now_ns() - t0) / 1e6;
}

int main(int argc, char **argv)
{
	static const long sizes[] = { 1, 100, 10000 };
	static double ms[BENCH_ARRAY_SIZE(sizes)][MAX_SCRAPES];
	static size_t bytes[BENCH_ARRAY_SIZE(sizes)];
	int scrapes = bench_emulated() ? 11 : 41, port, i, k, tries;
	long max = 10000, made = 0;
	struct bench_daemon dm = { .pid = -1 };
	struct bench_worker w = { 0 };
	char addr[32], *body = malloc(BODY_MAX);
	const char *args[] = { "--metrics", addr, NULL };
	struct utsname uts;
	size_t len = 0;

	if (bench_round_opts(argc, argv, "MAX_SERIES", &scrapes, &max, &verbose))
		return 2;
	if (scrapes < 1 || scrapes > MAX_SCRAPES || max < 1 || max > 16000 || !body) {
		fprintf(stderr, "metrics_cost: scrapes 1..%d, max series 1..16000\n", MAX_SCRAPES);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	uname(&uts);
	logf[2].k = FIRST_NR + (uint32_t)max;
	if ((port = free_port()) < 0) {
		fprintf(stderr, "metrics_cost: no free loopback port\n");
		return 1;
	}
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	dm.args = args;
	if (bench_daemon_find(&dm) || bench_daemon_start(&dm, 30)) {
		fprintf(stderr, "metrics_cost: sfilterd did not start (see %s)\n", dm.log);
		return 1;
	}
	if (bench_worker_start(&w, "metrics_cost", "worker", worker_loop, NULL)) {
		fprintf(stderr, "metrics_cost: worker: %s\n", strerror(errno));
		bench_daemon_stop(&dm);
		return 1;
	}
	printf("# GET /metrics of sfilterd, kernel %s%s, %d scrapes per size, 150 ms apart\n",
	       uts.release, bench_emulated() ? BENCH_EMULATED_NOTE : "", scrapes);
	for (k = 0; k < (int)BENCH_ARRAY_SIZE(sizes) && sizes[k] <= max; k++) {
		long range[2] = { made, sizes[k] };
		char y;

		if (bench_worker_call(&w, range, sizeof(range), &y, 1)) {
			fprintf(stderr, "metrics_cost: the worker died\n");
			break;
		}
		made = sizes[k];
		/* The kernel counted them as they were made; the map walk sees
		 * them at the next render. */
		for (tries = 0; tries < 100; tries++) {
			if (scrape(port, body, &len) > 0 &&
			    series_of(body, "sfilter_logged_calls_total") >= sizes[k])
				break;
			usleep(150000);
		}
		if (verbose)
			printf("%ld series after %d scrapes\n",
			       series_of(body, "sfilter_logged_calls_total"), tries + 1);
		bytes[k] = len;
		for (i = 0; i < scrapes; i++) {
			usleep(150000);
			ms[k][i] = scrape(port, body, &len);
		}
	}
	printf("\n");
	bench_md_head("sf_stats series | body bytes | best ms | median ms | p90 ms | "
		      "us per series above 1", -1);
	for (i = 0; i < k; i++) {
		double med = bench_median(ms[i], scrapes), base = bench_median(ms[0], scrapes);

		printf("| %ld | %zu | %.2f | %.2f | %.2f | ", sizes[i], bytes[i],
		       bench_best(ms[i], scrapes), med, bench_pct(ms[i], scrapes, 0.9));
		if (i)
			printf("%.2f |\n", (med - base) * 1000 / (double)(sizes[i] - 1));
		else
			printf("|\n");
	}
	{
		long stop[2] = { 0, 0 };

		bench_worker_stop(&w, stop, sizeof(stop));
	}
	bench_daemon_stop(&dm);
	free(body);
	return 0;
}
