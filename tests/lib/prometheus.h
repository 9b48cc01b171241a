/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A real Prometheus for tests: Debian's prometheus and promtool (package
 * prometheus), found on the machine or reported missing, never stood in
 * for. prom_start() runs one on loopback, on a free port, with a
 * temporary configuration (scrape_interval 1s, one static target) and a
 * temporary TSDB in a directory of its own; prom_stop() stops it (SIGTERM,
 * then SIGKILL after PROM_STOP_MS) and removes that directory. Its HTTP
 * API answers JSON, read with json-c.
 *
 * Prometheus listens on 127.0.0.1: a test that wants its ports apart from
 * everyone else's runs in a private network namespace first
 * (tests/lib/netns.h), which Prometheus, its child, shares.
 */
#ifndef SF_TEST_PROMETHEUS_H
#define SF_TEST_PROMETHEUS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* How long prom_start() waits for /-/ready, and prom_stop() for the
 * exit after SIGTERM. */
#define PROM_READY_MS 60000
#define PROM_STOP_MS  10000

struct prom {
	pid_t pid;              /* 0: not running; also its process group */
	int port;
	char dir[64];           /* /tmp/sftest-prom-XXXXXX: config, tsdb, log */
	char bin[PATH_MAX];     /* prometheus */
	char tool[PATH_MAX];    /* promtool */
	int exit_status;        /* wait status of the last stop */
};

/* Finds prometheus and promtool (on $PATH, else /usr/bin): 1 both are
 * there, 0 not (why: "prometheus not installed"), as tests/lib/probe.h's
 * probes answer, for TEST_REQUIRE(). */
int prom_find(struct prom *p, char *why, size_t size);

/* `promtool check metrics` with body on its stdin: promtool's exit status
 * (0 valid, 3 lint problems such as a counter without _total, 1 not the
 * text format at all), or -1 when it could not run; its stdout and
 * stderr into out. */
int prom_check_metrics(const struct prom *p, const char *body, size_t len, char *out,
		       size_t size);
/* `promtool check rules FILE`: the same for a rule file. */
int prom_check_rules(const struct prom *p, const char *path, char *out, size_t size);

/* Starts Prometheus scraping target ("127.0.0.1:PORT") as job every
 * second, evaluating rules (a rule file, or NULL) every second, and waits
 * until it answers /-/ready. false, with the test failed and its log
 * shown, when it does not. */
bool prom_start(struct prom *p, const char *job, const char *target, const char *rules);

/* GET path from 127.0.0.1:port over HTTP/1.0 (5 s at most): the status,
 * or -1; the body into out (NUL-terminated, cut to size), its length
 * into *len (may be NULL). */
int prom_http_get(int port, const char *path, char *out, size_t size, size_t *len);

/* An instant query of expr (/api/v1/query): 1 with the first sample's
 * value in *value, 0 when the answer has no sample, -1 on failure (the
 * reason in the test's log). */
int prom_query(const struct prom *p, const char *expr, double *value);
/* prom_query() every 200 ms until a sample is there (1) or timeout_ms
 * has passed (0), or it fails (-1). */
int prom_query_wait(const struct prom *p, const char *expr, int timeout_ms, double *value);

/* The alerting and recording rules it has loaded (/api/v1/rules): their
 * number, or -1; how many of them evaluate without error into *healthy
 * (health "ok" once evaluated; "unknown" before the first evaluation). */
int prom_rules(const struct prom *p, int *healthy);

/* Stops it and removes its directory. true when the stop was clean: it
 * exited on SIGTERM, nothing of its process group is left and the
 * directory is gone. */
bool prom_stop(struct prom *p);
/* prom_stop() whatever became of the test; shows its log when the test
 * failed. */
void prom_cleanup(struct prom *p);
#define PROM_AUTO struct prom prom __attribute__((cleanup(prom_cleanup))) = { 0 }

#endif
