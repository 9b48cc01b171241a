/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The metrics server (loader/daemon/http.h) for tests, with a render of
 * fixed metrics: valid text format under the names sfilterd exports, its
 * counters rising with every render (web's denials, the ring's drops,
 * ENOSPC refusals, gate round trips all slower than 10 ms; idle's denials
 * stay), so that Prometheus sees rates and the example alert rules
 * (dist/prometheus/sfilter-alerts.yml) fire on them.
 */
#ifndef SF_TEST_SCRAPE_H
#define SF_TEST_SCRAPE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

struct sf_http;

struct scrape_render {
	atomic_int calls;         /* renders so far: the n of the counters */
	atomic_int fail;          /* -errno to return instead */
	atomic_size_t big;        /* bytes of a filler body instead, or 0 */
};

/* The render (sf_http_render_fn) of ctx, a struct scrape_render. */
int scrape_render(void *ctx, char **body, size_t *len);
/* A server on addr rendering r, started; NULL with the test failed. */
struct sf_http *scrape_serve(const char *addr, struct scrape_render *r);
/* A network namespace of the test's own with its loopback up
 * (tests/lib/netns.h), or the test skipped or failed. */
bool scrape_private_net(void);

#endif
