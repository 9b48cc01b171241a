// SPDX-License-Identifier: GPL-2.0-only
/*
 * The programs attached only on demand. Once any tp_btf/sys_enter program
 * is attached, the kernel sends every task on the machine through the
 * tracepoint slow path (about 100 ns a call here), confined or not, and a
 * BPF LSM program's trampoline taxes every task that passes its hook.
 * While no task has a chain and no cgroup has a filter there is nothing to
 * judge, so the dispatcher and the LSM programs are attached with the
 * first chain (before any task can have it: sf_rt_node_load()) and
 * detached once nothing is left (sf_runtime_idle_check()). The reply
 * programs, which decide an sf_attach()'s arm, are attached only while
 * an arm may be undecided. A pinned runtime pins the links
 * (link_<program>), so that a restart finds them attached.
 */
#define _GNU_SOURCE
#include "internal.h"
#include "sfilter.skel.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

/* What is attached while anything can be judged, in the order it is
 * attached (the last is detached first): the LSM programs (lsm tier), so
 * that a denied call's side effects are refused from its first verdict
 * on, then the dispatcher. The reply programs, which decide an
 * sf_attach()'s arm when the caller's recv of the reply returns, only
 * while an arm may exist: the fexit ones where the kernel takes them,
 * else the sys_exit one, which costs every task's every call. */
#define DISPATCH "sf_dispatch"
#define LSM_PREFIX "sf_lsm_"
enum { REPLY_RECVFROM, REPLY_RECVMSG, REPLY_EXIT_TP };
static const char *const reply_names[SF_RT_N_REPLY] = { "sf_reply_recvfrom",
							"sf_reply_recvmsg", "sf_reply_exit_tp" };
/* An arm is decided within microseconds of being set, at the caller's
 * recv of the reply; sf_armed drifts up when an armed task dies, so the
 * reply programs also go once no arm was set for this long. A task still
 * armed then takes its arm at its next call, as if its recv had succeeded:
 * never less strict. */
#define REPLY_KEEP_NS (60ULL * 1000000000ULL)

static void pin_path(const struct sf_runtime *rt, const char *kind, const char *name,
		     char *buf, size_t size)
{
	/* Too long: an empty path, which every use refuses. */
	if ((size_t)snprintf(buf, size, "%s/%s_%s", rt->pin_dir, kind, name) >= size)
		buf[0] = 0;
}

uint64_t sf_rt_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
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
static int attach_one(struct sf_runtime *rt, const char *name, enum bpf_attach_type type)
{
	char path[PATH_MAX];
	bool own;
	int prog = prog_fd(rt, name, &own), link, err;

	if (prog == -ENOENT && strcmp(name, DISPATCH))
		return 0;
	if (prog < 0)
		return prog;
	link = bpf_link_create(prog, 0, type, NULL);
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
	int i;

	pin_path(rt, "link", DISPATCH, path, sizeof(path));
	rt->dispatch_pinned = access(path, F_OK) == 0;
	for (i = 0; i < SF_RT_N_REPLY; i++) {
		pin_path(rt, "link", reply_names[i], path, sizeof(path));
		rt->reply_on = rt->reply_on || access(path, F_OK) == 0;
	}
	/* Its last arm may be recent: keep them for a while. */
	rt->last_arm = sf_rt_now_ns();
}

/* Hands the link pinned as name over to the caller: an fd of it goes to
 * fds[(*n)++] (so that the last reference is one the caller closes, not a
 * pin freed later from RCU) and the pin goes. */
static void take_pin(struct sf_runtime *rt, const char *name, int *fds, int *n)
{
	char path[PATH_MAX];
	int fd;

	if (!rt->pin_dir)
		return;
	pin_path(rt, "link", name, path, sizeof(path));
	fd = bpf_obj_get(path);
	if (fd >= 0)
		fds[(*n)++] = fd;
	unlink(path);
}

static void close_now(const int *fds, int n)
{
	while (n-- > 0)
		close(fds[n]);
}

/* Until no sf_runtime_idle_check() is closing links: the kernel refuses a
 * second link of one program on one hook (EBUSY) while the old one lives. */
static void wait_detached(struct sf_runtime *rt)
{
	pthread_mutex_lock(&rt->detach_lock);
	pthread_mutex_unlock(&rt->detach_lock);
}

void sf_rt_wait_links_gone(const uint32_t *ids, size_t n, int timeout_ms)
{
	size_t i = 0;
	int waited_ms = 0;

	while (i < n) {
		int fd = ids[i] ? bpf_link_get_fd_by_id(ids[i]) : -1;

		if (fd < 0) {
			i++;
			continue;
		}
		close(fd);
		if (waited_ms >= timeout_ms) {
			fprintf(stderr, "sfilter: link %u still attached after %d ms\n", ids[i],
				timeout_ms);
			return;
		}
		usleep(1000);
		waited_ms++;
	}
}

/* Closes fds[0..n) and returns once the kernel has dropped their links
 * (up to 30 s: a forked child that has not exec'd yet holds copies). */
static void close_links(const int *fds, int n)
{
	uint32_t ids[SF_RT_MAX_LINKS];
	int i;

	for (i = 0; i < n; i++) {
		struct bpf_link_info li = {};
		uint32_t len = sizeof(li);

		ids[i] = bpf_obj_get_info_by_fd(fds[i], &li, &len) ? 0 : li.id;
		close(fds[i]);
	}
	sf_rt_wait_links_gone(ids, (size_t)n, 30000);
}

/* ---- the LSM programs ----------------------------------------------------- */

/* The names of the LSM programs loaded: the skeleton's, or (adopted) those
 * pinned as prog_sf_lsm_<hook>. How many, up to max. */
static int lsm_names(const struct sf_runtime *rt, char (*names)[SF_RT_NAME_LEN], int max)
{
	const size_t pfx = strlen("prog_");
	struct bpf_program *p;
	struct dirent *d;
	DIR *dir;
	int n = 0;

	if (rt->skel) {
		bpf_object__for_each_program(p, rt->skel->obj)
			if (n < max && bpf_program__fd(p) >= 0 &&
			    !strncmp(bpf_program__name(p), LSM_PREFIX, strlen(LSM_PREFIX)))
				snprintf(names[n++], SF_RT_NAME_LEN, "%s", bpf_program__name(p));
		return n;
	}
	dir = rt->pin_dir ? opendir(rt->pin_dir) : NULL;
	if (!dir)
		return 0;
	while (n < max && (d = readdir(dir)))
		if (!strncmp(d->d_name, "prog_" LSM_PREFIX, pfx + strlen(LSM_PREFIX)))
			snprintf(names[n++], SF_RT_NAME_LEN, "%s", d->d_name + pfx);
	closedir(dir);
	return n;
}

/* Detaches the LSM programs this runtime attached, and (adopted) those
 * only pinned. Unpinning is quick; the last close of a link is the slow
 * part (every detach rewrites the hook's trampoline: 0.15 s each under
 * TCG), so the links' fds are appended to fds[] (at *n) for the caller to
 * close when it holds no lock. */
static void lsm_off(struct sf_runtime *rt, int *fds, int *n)
{
	char names[SF_RT_MAX_LSM][SF_RT_NAME_LEN];
	int i, k = lsm_names(rt, names, SF_RT_MAX_LSM);

	for (i = 0; i < k; i++)
		take_pin(rt, names[i], fds, n);
	for (i = 0; i < rt->n_lsm; i++)
		if (rt->fd_lsm[i] > 0)
			fds[(*n)++] = rt->fd_lsm[i];
	rt->n_lsm = 0;
}

static int lsm_on(struct sf_runtime *rt)
{
	char names[SF_RT_MAX_LSM][SF_RT_NAME_LEN];
	int fds[SF_RT_MAX_LINKS], i, n = 0, k, fd;

	if (rt->tier != SF_TIER_LSM)
		return 0;
	k = lsm_names(rt, names, SF_RT_MAX_LSM);
	for (i = 0; i < k; i++) {
		fd = attach_one(rt, names[i], BPF_LSM_MAC);
		if (fd < 0) {
			rt->n_lsm = i;
			lsm_off(rt, fds, &n);
			close_now(fds, n);
			return fd;
		}
		rt->fd_lsm[i] = fd;
		rt->n_lsm = i + 1;
	}
	return 0;
}

/* ---- the reply programs ---------------------------------------------------- */

/* Unpins the reply programs' links and appends their fds to fds[] (at
 * *n), after telling the dispatcher that no program will decide an arm. */
static void reply_off(struct sf_runtime *rt, int *fds, int *n)
{
	int i;

	rt->bss->sf_reply_exit = 0;
	rt->bss->sf_reply_exit_i386 = 0;
	for (i = 0; i < SF_RT_N_REPLY; i++) {
		take_pin(rt, reply_names[i], fds, n);
		if (rt->fd_reply[i] > 0)
			fds[(*n)++] = rt->fd_reply[i];
		rt->fd_reply[i] = 0;
	}
	rt->reply_on = false;
}

void sf_rt_reply_on(struct sf_runtime *rt)
{
	static const enum bpf_attach_type type[SF_RT_N_REPLY] = {
		BPF_TRACE_FEXIT, BPF_TRACE_FEXIT, BPF_TRACE_RAW_TP };
	int i, fd, fds[SF_RT_MAX_LINKS], n = 0;

	rt->last_arm = sf_rt_now_ns();
	if (rt->reply_on)
		return;
	wait_detached(rt);
	for (i = 0; i < SF_RT_N_REPLY; i++) {
		fd = attach_one(rt, reply_names[i], type[i]);
		if (fd < 0) {
			/* Then the arm is taken at the recv's entry. */
			if (rt->verbose)
				fprintf(stderr, "sfilter: attaching %s: %s\n", reply_names[i],
					strerror(-fd));
			reply_off(rt, fds, &n);
			close_now(fds, n);
			return;
		}
		rt->fd_reply[i] = fd;
	}
	rt->reply_on = true;
	/* Before any arm is set (a later map update: a full barrier). */
	rt->bss->sf_reply_exit = (rt->fd_reply[REPLY_RECVFROM] > 0 &&
				  rt->fd_reply[REPLY_RECVMSG] > 0) || rt->fd_reply[REPLY_EXIT_TP] > 0;
	rt->bss->sf_reply_exit_i386 = rt->fd_reply[REPLY_EXIT_TP] > 0;
}

/* ---- all together --------------------------------------------------------- */

int sf_rt_dispatch_on(struct sf_runtime *rt)
{
	int disp, fds[SF_RT_MAX_LINKS], n = 0, err;

	if (sf_rt_dispatch_attached(rt))
		return 0;
	wait_detached(rt);
	err = lsm_on(rt);
	if (err)
		return err;
	disp = attach_one(rt, DISPATCH, BPF_TRACE_RAW_TP);
	if (disp < 0) {
		lsm_off(rt, fds, &n);
		close_now(fds, n);
		return disp;
	}
	rt->fd_dispatch = disp;
	rt->dispatch_pinned = rt->pin_dir != NULL;
	return 0;
}

/* The dispatcher first: from then on nothing is judged, and no deny mark
 * is set for the LSM programs, which go last; their fds and the reply
 * programs' are appended to fds[] (at *n) for the caller to close. */
static int dispatch_off(struct sf_runtime *rt, int *fds, int *n)
{
	int err = detach_one(rt, DISPATCH, &rt->fd_dispatch);

	if (err)
		return err;
	rt->dispatch_pinned = false;
	lsm_off(rt, fds, n);
	reply_off(rt, fds, n);
	return 0;
}

void sf_rt_dispatch_close_fd(struct sf_runtime *rt)
{
	int i;

	if (rt->fd_dispatch > 0)
		close(rt->fd_dispatch);
	rt->fd_dispatch = 0;
	for (i = 0; i < SF_RT_N_REPLY; i++) {
		if (rt->fd_reply[i] > 0)
			close(rt->fd_reply[i]);
		rt->fd_reply[i] = 0;
	}
	for (i = 0; i < rt->n_lsm; i++)
		if (rt->fd_lsm[i] > 0)
			close(rt->fd_lsm[i]);
	rt->n_lsm = 0;
}

/* The LSM links are closed after rt->lock is released (each close
 * rewrites a trampoline, 0.15 s under TCG), under rt->detach_lock, which
 * sf_rt_dispatch_on() waits for. */
int sf_rt_dispatch_idle(struct sf_runtime *rt, int nothing)
{
	int r = nothing, fds[SF_RT_MAX_LINKS], n = 0;

	if (r > 0) {
		r = dispatch_off(rt, fds, &n);
		if (r == 0)
			r = 1;
	} else if (r == 0 && rt->reply_on &&
		   (!__atomic_load_n(&rt->bss->sf_armed, __ATOMIC_SEQ_CST) ||
		    sf_rt_now_ns() - rt->last_arm > REPLY_KEEP_NS)) {
		reply_off(rt, fds, &n);
	}
	pthread_mutex_lock(&rt->detach_lock);
	pthread_mutex_unlock(&rt->lock);
	close_links(fds, n);
	pthread_mutex_unlock(&rt->detach_lock);
	return r;
}

static int dispatch_link_id(struct sf_runtime *rt)
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

/* LSM links attached: pinned, those whose pins are there (an adopted
 * install's too); else ours. */
static int lsm_count(struct sf_runtime *rt)
{
	char names[SF_RT_MAX_LSM][SF_RT_NAME_LEN], path[PATH_MAX];
	int i, k, n = 0;

	if (!rt->pin_dir)
		return rt->n_lsm;
	k = lsm_names(rt, names, SF_RT_MAX_LSM);
	for (i = 0; i < k; i++) {
		pin_path(rt, "link", names[i], path, sizeof(path));
		n += access(path, F_OK) == 0;
	}
	return n;
}

void sf_runtime_lazy_links(struct sf_runtime *rt, struct sf_lazy_links *out)
{
	pthread_mutex_lock(&rt->lock);
	out->dispatcher = dispatch_link_id(rt);
	out->lsm = lsm_count(rt);
	out->reply = rt->reply_on;
	pthread_mutex_unlock(&rt->lock);
}

/* Under the lock: sfilterd's idle thread may be closing the fd. */
int sf_runtime_dispatch_link_id(struct sf_runtime *rt)
{
	int id;

	pthread_mutex_lock(&rt->lock);
	id = dispatch_link_id(rt);
	pthread_mutex_unlock(&rt->lock);
	return id;
}
