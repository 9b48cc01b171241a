// SPDX-License-Identifier: GPL-2.0
/*
 * The event ring buffer (sf_events): every deny and every LOG, as struct
 * sf_event, handed to the caller's function. Turning them into text is the
 * caller's business (sfilterd logs them with loader/proto/event_json.c).
 */
#include "internal.h"

#include <errno.h>
#include <bpf/libbpf.h>

static int on_event(void *ctx, void *data, size_t size)
{
	struct sf_runtime *rt = ctx;

	/* Shorter records only wake the reader (cgroup joins to finish, see
	 * sf_runtime_process_pending()). */
	if (size < sizeof(struct sf_event) || !rt->fn)
		return 0;
	return rt->fn(rt->fn_ctx, data);
}

int sf_rt_events_open(struct sf_runtime *rt)
{
	rt->rb = ring_buffer__new(rt->fd_events, on_event, rt, NULL);
	return rt->rb ? 0 : -errno;
}

void sf_rt_events_close(struct sf_runtime *rt)
{
	ring_buffer__free(rt->rb);
	rt->rb = NULL;
}

int sf_runtime_event_fd(const struct sf_runtime *rt)
{
	return ring_buffer__epoll_fd(rt->rb);
}

int sf_runtime_poll_events(struct sf_runtime *rt, int timeout_ms,
			   sf_event_fn fn, void *ctx)
{
	int n;

	rt->fn = fn;
	rt->fn_ctx = ctx;
	n = ring_buffer__poll(rt->rb, timeout_ms);
	rt->fn = NULL;
	return n;
}
