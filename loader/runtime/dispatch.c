// SPDX-License-Identifier: GPL-2.0
/*
 * The dispatcher's attachment. Once any tp_btf/sys_enter program is
 * attached, the kernel sends every task on the machine through the
 * tracepoint slow path (about 100 ns a call here), confined or not. While
 * no task has a chain and no cgroup has a filter there is nothing to judge,
 * so the dispatcher is attached with the first chain (before any task can
 * have it: sf_rt_node_load()) and detached once nothing is left
 * (sf_runtime_idle_check()), and with it the sys_exit program that kernels
 * without fexit need for sf_attach()'s arm. A pinned runtime pins the
 * links (link_sf_dispatch), so that a restart finds them attached.
 */
#define _GNU_SOURCE
#include "internal.h"
#include "sfilter.skel.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

/* What is attached while anything can be judged, in the order it is
 * attached (the last is detached first): the sys_exit program that
 * decides an sf_attach()'s arm where the kernel takes no fexit programs
 * (only loaded there), then the dispatcher. */
#define EXIT_TP  "sf_reply_exit_tp"
#define DISPATCH "sf_dispatch"

static void pin_path(const struct sf_runtime *rt, const char *kind, const char *name,
		     char *buf, size_t size)
{
	snprintf(buf, size, "%s/%s_%s", rt->pin_dir, kind, name);
}

/* The program name: the skeleton's, or (adopted) the pinned one; -ENOENT
 * when it was not loaded. */
static int prog_fd(const struct sf_runtime *rt, const char *name, bool *own)
{
	char path[PATH_MAX];
	struct bpf_program *p;
	int fd;

	*own = false;
	if (rt->skel) {
		p = bpf_object__find_program_by_name(rt->skel->obj, name);
		fd = p ? bpf_program__fd(p) : -1;
		return fd >= 0 ? fd : -ENOENT;
	}
	if (!rt->pin_dir)
		return -ENOENT;
	pin_path(rt, "prog", name, path, sizeof(path));
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	*own = true;
	return fd;
}

/* Attaches name (pinning its link): its link fd, 0 when it was not
 * loaded, or -errno. */
static int attach_one(struct sf_runtime *rt, const char *name)
{
	char path[PATH_MAX];
	bool own;
	int prog = prog_fd(rt, name, &own), link, err;

	if (prog == -ENOENT && strcmp(name, DISPATCH))
		return 0;
	if (prog < 0)
		return prog;
	link = bpf_link_create(prog, 0, BPF_TRACE_RAW_TP, NULL);
	if (link < 0)
		link = bpf_raw_tracepoint_open(NULL, prog);
	err = link < 0 ? -errno : 0;
	if (own)
		close(prog);
	if (err)
		return err;
	if (rt->pin_dir) {
		pin_path(rt, "link", name, path, sizeof(path));
		/* Left by a runtime killed between its two pins: the new link
		 * is attached already, so the old one may go. */
		if (access(path, F_OK) == 0)
			unlink(path);
		if (bpf_obj_pin(link, path)) {
			err = -errno;
			close(link);
			return err;
		}
	}
	return link;
}

/* Detaches name: its pin and our fd are its only references. */
static int detach_one(struct sf_runtime *rt, const char *name, int *fd)
{
	char path[PATH_MAX];

	if (rt->pin_dir) {
		pin_path(rt, "link", name, path, sizeof(path));
		if (unlink(path) && errno != ENOENT)
			return -errno;
	}
	if (*fd > 0)
		close(*fd);
	*fd = 0;
	return 0;
}

bool sf_rt_dispatch_attached(struct sf_runtime *rt)
{
	return rt->fd_dispatch > 0 || rt->dispatch_pinned;
}

void sf_rt_dispatch_adopted(struct sf_runtime *rt)
{
	char path[PATH_MAX];

	pin_path(rt, "link", DISPATCH, path, sizeof(path));
	rt->dispatch_pinned = access(path, F_OK) == 0;
}

int sf_rt_dispatch_on(struct sf_runtime *rt)
{
	int exit_tp, disp;

	if (sf_rt_dispatch_attached(rt))
		return 0;
	exit_tp = attach_one(rt, EXIT_TP);
	if (exit_tp < 0)
		return exit_tp;
	disp = attach_one(rt, DISPATCH);
	if (disp < 0) {
		detach_one(rt, EXIT_TP, &exit_tp);
		return disp;
	}
	rt->fd_exit_tp = exit_tp;
	rt->fd_dispatch = disp;
	rt->dispatch_pinned = rt->pin_dir != NULL;
	return 0;
}

static int dispatch_off(struct sf_runtime *rt)
{
	int err = detach_one(rt, DISPATCH, &rt->fd_dispatch);

	if (err)
		return err;
	rt->dispatch_pinned = false;
	return detach_one(rt, EXIT_TP, &rt->fd_exit_tp);
}

void sf_rt_dispatch_close_fd(struct sf_runtime *rt)
{
	if (rt->fd_dispatch > 0)
		close(rt->fd_dispatch);
	if (rt->fd_exit_tp > 0)
		close(rt->fd_exit_tp);
	rt->fd_dispatch = rt->fd_exit_tp = 0;
}

/* Whether nothing can be judged now: no task has a chain (nor an old one
 * its armed recv still runs under), no cgroup has filters, no orphan waits
 * for its chain, no chain is being attached. Under rt->lock, nothing else
 * can give a task a chain meanwhile: attaches take the lock, and forks
 * and cgroup joins only pass on chains and filters that exist. */
static int nothing_to_judge(struct sf_runtime *rt)
{
	const struct sf_cgroup *c;
	struct sf_rt_recs r;
	size_t i;
	int err, busy = 0;
	for (c = rt->cgroups; c; c = c->next)
		if (c->base)
			return 0;
	if (__atomic_load_n(&rt->bss->sf_orphans_pending, __ATOMIC_SEQ_CST) ||
	    __atomic_load_n(&rt->bss->sf_tsync_pending, __ATOMIC_SEQ_CST))
		return 0;
	for (i = 1; i < SF_MAX_CHAINS; i++)
		if (rt->slots[i] && rt->slots[i]->busy)
			return 0;
	err = sf_rt_iter_run(rt, 0, false, &r);
	if (err)
		return err;
	for (i = 0; i < r.n; i++)
		if (r.r[i].chain || r.r[i].old)
			busy = 1;
	free(r.r);
	return !busy;
}

int sf_runtime_idle_check(struct sf_runtime *rt)
{
	int r;

	pthread_mutex_lock(&rt->lock);
	r = sf_rt_dispatch_attached(rt) ? nothing_to_judge(rt) : 0;
	if (r > 0) {
		r = dispatch_off(rt);
		if (r == 0)
			r = 1;
	}
	pthread_mutex_unlock(&rt->lock);
	return r;
}

int sf_runtime_dispatch_link_id(struct sf_runtime *rt)
{
	struct bpf_link_info info;
	uint32_t len = sizeof(info);
	char path[PATH_MAX];
	int fd = rt->fd_dispatch, id = 0;

	if (fd <= 0 && rt->pin_dir) {
		pin_path(rt, "link", DISPATCH, path, sizeof(path));
		fd = bpf_obj_get(path);
		if (fd < 0)
			return 0;
	} else if (fd <= 0) {
		return 0;
	}
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0)
		id = (int)info.id;
	if (fd != rt->fd_dispatch)
		close(fd);
	return id;
}
