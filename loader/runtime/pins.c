// SPDX-License-Identifier: GPL-2.0-only
/*
 * Pinned state. Pins, under pin_dir: map_<name> for every map (the
 * PROG_ARRAY above all: it clears its entries when its last user reference
 * goes), prog_<name> for every loaded program, link_<name> for every
 * attached one. The chain tree and the cgroup attachments live in the
 * state file (state.c). A runtime opened on a pin dir that holds a
 * dispatcher link adopts everything there instead of loading anew, so that
 * a restarted daemon never leaves a confined task unconfined; uninstall
 * tears it all down in the one order that never kills a task wrongly.
 */
#define _GNU_SOURCE
#include "internal.h"
#include "sfilter.skel.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <dirent.h>
#include <limits.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

static void pin_name(char *buf, size_t size, const char *dir, const char *kind,
		     const char *name)
{
	char *c;

	snprintf(buf, size, "%s/%s_%s", dir, kind, name);
	for (c = buf + strlen(dir) + 1; *c; c++)
		if (*c == '.' || *c == '/')
			*c = '_';
}

static int pin_all(struct sf_runtime *rt)
{
	struct bpf_object_skeleton *sk = rt->skel->skeleton;
	struct bpf_program *p;
	struct bpf_map *m;
	char path[PATH_MAX];
	int i, err;

	if (mkdir(rt->pin_dir, 0700) && errno != EEXIST)
		return -errno;
	bpf_object__for_each_map(m, rt->skel->obj) {
		/* libbpf names internal maps after the object ("sfilter_.bss"):
		 * pin those under their section name alone. */
		const char *name = bpf_map__name(m), *dot = strchr(name, '.');

		pin_name(path, sizeof(path), rt->pin_dir, "map", dot ? dot + 1 : name);
		if (bpf_obj_pin(bpf_map__fd(m), path))
			return -errno;
	}
	bpf_object__for_each_program(p, rt->skel->obj) {
		if (bpf_program__fd(p) < 0)
			continue;
		pin_name(path, sizeof(path), rt->pin_dir, "prog", bpf_program__name(p));
		if (bpf_obj_pin(bpf_program__fd(p), path))
			return -errno;
	}
	for (i = 0; i < sk->prog_cnt; i++) {
		struct bpf_link *l = sk->progs[i].link ? *sk->progs[i].link : NULL;

		if (!l)
			continue;
		pin_name(path, sizeof(path), rt->pin_dir, "link", sk->progs[i].name);
		err = bpf_link__pin(l, path);
		if (err)
			return err;
	}
	return 0;
}

/* Unpins dir's links, the dispatcher's first, and stores their ids in
 * ids[] (*n of them, up to max) for wait_links_gone(). */
static int unpin_links(const char *pin_dir, uint32_t *ids, size_t max, size_t *n)
{
	char path[PATH_MAX];
	struct dirent *d;
	DIR *dir = opendir(pin_dir);
	int pass, err = 0;

	*n = 0;
	if (!dir)
		return errno == ENOENT ? 0 : -errno;
	for (pass = 0; pass < 2; pass++) {
		rewinddir(dir);
		while ((d = readdir(dir))) {
			bool disp = !strcmp(d->d_name, "link_sf_dispatch");
			struct bpf_link_info info = {};
			uint32_t len = sizeof(info);
			int fd;

			if (strncmp(d->d_name, "link_", 5) || disp != (pass == 0))
				continue;
			snprintf(path, sizeof(path), "%s/%s", pin_dir, d->d_name);
			fd = bpf_obj_get(path);
			if (fd >= 0) {
				if (!bpf_obj_get_info_by_fd(fd, &info, &len) && *n < max)
					ids[(*n)++] = info.id;
				close(fd);
			}
			if (unlink(path))
				err = -errno;
		}
	}
	closedir(dir);
	return err;
}

/* Everything in pin_dir but its links, and pin_dir itself. */
static int unpin_rest(const char *pin_dir)
{
	char path[PATH_MAX];
	struct dirent *d;
	DIR *dir = opendir(pin_dir);
	int err = 0;

	if (!dir)
		return errno == ENOENT ? 0 : -errno;
	while ((d = readdir(dir)))
		if (d->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", pin_dir, d->d_name);
			if (unlink(path) && errno != ENOENT)
				err = -errno;
		}
	closedir(dir);
	if (rmdir(pin_dir) && errno != ENOENT)
		err = -errno;
	return err;
}

/*
 * Tears down what pin_dir holds, in the only order that never kills a task
 * wrongly: the links (the dispatcher first) are detached and gone before the
 * maps, the PROG_ARRAY among them, lose their pins. rt, when given, is the
 * runtime that owns them; it has stopped enforcing already, and its own
 * link fds are closed here, between the two steps.
 */
static int teardown_dir(const char *pin_dir, struct sf_runtime *rt)
{
	uint32_t ids[128];
	size_t n;
	int err, err2;

	err = unpin_links(pin_dir, ids, sizeof(ids) / sizeof(ids[0]), &n);
	if (rt)
		sf_rt_dispatch_close_fd(rt);
	if (rt && rt->skel) {
		struct bpf_object_skeleton *sk = rt->skel->skeleton;
		int i;

		for (i = 0; i < sk->prog_cnt; i++)
			if (sk->progs[i].link && *sk->progs[i].link) {
				bpf_link__destroy(*sk->progs[i].link);
				*sk->progs[i].link = NULL;
			}
	}
	/* An unpinned link is released after an RCU grace period, from a
	 * workqueue (bpf_free_inode(), bpf_link_put()): until then its
	 * program still runs. */
	sf_rt_wait_links_gone(ids, n, 5000);
	err2 = unpin_rest(pin_dir);
	sf_rt_state_remove(pin_dir);
	return err ? err : err2;
}

int sf_runtime_uninstall_dir(const char *pin_dir)
{
	return teardown_dir(pin_dir, NULL);
}

static int obj_get(const char *dir, const char *kind, const char *name)
{
	char path[PATH_MAX];

	pin_name(path, sizeof(path), dir, kind, name);
	return bpf_obj_get(path);
}

/* A runtime that died between writing compare-and-set entries and the
 * iterator pass that applies them left them behind; a later pass would
 * apply them, perhaps onto a slot freed or reused since. No change is in
 * flight when a runtime adopts the pins, so none of them is wanted. */
static void clear_pending(struct sf_runtime *rt)
{
	uint32_t key;

	while (bpf_map_get_next_key(rt->fd_pending, NULL, &key) == 0)
		if (bpf_map_delete_elem(rt->fd_pending, &key))
			break;
}

/* Pinned last: a pin dir with it holds a whole install, which a runtime
 * adopts (the dispatcher's link is there only while something can be
 * judged). */
#define INSTALLED_PIN "installed"

static int pin_marker(struct sf_runtime *rt)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", rt->pin_dir, INSTALLED_PIN);
	return bpf_obj_pin(rt->fd_bss, path) ? -errno : 0;
}

/* A whole install (older ones: those with a dispatcher link). */
static bool installed(const char *pin_dir)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", pin_dir, INSTALLED_PIN);
	if (access(path, F_OK) == 0)
		return true;
	pin_name(path, sizeof(path), pin_dir, "link", "sf_dispatch");
	return access(path, F_OK) == 0;
}

/* Everything from the pins; nothing is loaded or attached. */
static int adopt(struct sf_runtime *rt)
{
	struct { int *fd; const char *kind, *name; } want[] = {
		{ &rt->fd_tasks, "map", "sf_tasks" },
		{ &rt->fd_progs, "map", "sf_progs" },
		{ &rt->fd_table, "map", "sf_table" },
		{ &rt->fd_pending, "map", "sf_pending" },
		{ &rt->fd_events, "map", "sf_events" },
		{ &rt->fd_cgroups, "map", "sf_cgroups" },
		{ &rt->fd_cgapp, "map", "sf_cg_append" },
		{ &rt->fd_cgpend, "map", "sf_cg_pending" },
		{ &rt->fd_tsync, "map", "sf_tsync" },
		{ &rt->fd_hits, "map", "sf_hits" },
		{ &rt->fd_accounts, "map", "sf_accounts" },
		{ &rt->fd_stats, "map", "sf_stats" },
		{ &rt->fd_agg, "map", "sf_agg" },
		{ &rt->fd_bss, "map", "bss" },
		{ &rt->fd_iter, "prog", "sf_iter" },
		{ &rt->fd_charge, "prog", "sf_charge" },
		{ &rt->fd_gate_filters, "map", "sf_gate_filters" },
		{ &rt->fd_iter_listeners, "prog", "sf_iter_listeners" },
	};
	size_t i;
	void *m;

	rt->own_fds = true;
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		*want[i].fd = obj_get(rt->pin_dir, want[i].kind, want[i].name);
		if (*want[i].fd < 0) {
			int err = -errno;

			*want[i].fd = 0;
			fprintf(stderr, "sfilter: adopting %s/%s_%s: %s\n", rt->pin_dir,
				want[i].kind, want[i].name, strerror(-err));
			return err;
		}
	}
	/* The .bss map's value; mmap rounds it to pages, as libbpf does. */
	m = mmap(NULL, sizeof(*rt->bss), PROT_READ | PROT_WRITE, MAP_SHARED, rt->fd_bss, 0);
	if (m == MAP_FAILED)
		return -errno;
	rt->bss_map = m;
	rt->bss = m;
	if (rt->bss->sf_abi != SF_ABI_VERSION) {
		/* Driving programs of another layout could loosen a filter
		 * (an arm read as a chain slot); they keep enforcing alone. */
		fprintf(stderr, "sfilter: %s holds the pinned state of another sfilter "
			"version (ABI %u, this one is %u): not adopting it. Its filters "
			"stay in force; stop with the sfilterd that made it, or "
			"sfilterd --uninstall to detach them all\n",
			rt->pin_dir, rt->bss->sf_abi, SF_ABI_VERSION);
		return -EPROTO;
	}
	clear_pending(rt);
	{
		char probe[PATH_MAX];

		pin_name(probe, sizeof(probe), rt->pin_dir, "prog", "sf_lsm_file_open");
		rt->tier = access(probe, F_OK) == 0 ? SF_TIER_LSM : SF_TIER_TRACEPOINT;
		if (rt->tier == SF_TIER_TRACEPOINT)
			snprintf(rt->tier_why, sizeof(rt->tier_why),
				 "adopted pins of a tracepoint-tier runtime");
	}
	return sf_rt_load_state(rt);
}

/* A fresh load, pinned. Leftovers of a half-made install (no dispatcher
 * link) go first: nothing is confined by them. */
static int install_fresh(struct sf_runtime *rt, const struct sf_runtime_opts *opts,
			 const char *pin_dir)
{
	int err;

	sf_runtime_uninstall_dir(pin_dir);
	sf_rt_state_mkdir(rt->state_path);
	err = sf_rt_load_fresh(rt, opts);
	if (!err)
		err = pin_all(rt);
	if (!err)
		err = pin_marker(rt);
	if (err) {
		fprintf(stderr, "sfilter: pinning under %s: %s\n", pin_dir, strerror(-err));
		teardown_dir(pin_dir, NULL);
		return err;
	}
	sf_rt_save_state(rt);
	return 0;
}

/* Chains were adopted: the dispatcher must be attached (it is, unless
 * the install predates lazy attachment or a crash came between). */
static int adopted_dispatch(struct sf_runtime *rt)
{
	const struct sf_cgroup *c;
	size_t i;

	for (i = 1; i < SF_MAX_CHAINS; i++)
		if (rt->slots[i])
			return sf_rt_dispatch_on(rt);
	for (c = rt->cgroups; c; c = c->next)
		if (c->base)
			return sf_rt_dispatch_on(rt);
	return 0;
}

int sf_runtime_open_pinned(struct sf_runtime **out,
			   const struct sf_runtime_opts *opts,
			   const char *pin_dir, bool *adopted)
{
	struct sf_runtime *rt;
	char probe[PATH_MAX];
	int err;

	*out = NULL;
	if (adopted)
		*adopted = false;
	if (!pin_dir)
		return sf_runtime_open(out, opts);
	err = sf_bpffs_ensure(pin_dir, probe, sizeof(probe));
	if (probe[0])
		fprintf(stderr, "sfilter: %s\n", probe);
	if (err)
		return err;
	rt = sf_rt_alloc(opts);
	if (!rt)
		return -errno;
	rt->pin_dir = strdup(pin_dir);
	rt->state_path = sf_rt_state_path(pin_dir);
	if (!rt->pin_dir || !rt->state_path) {
		err = -ENOMEM;
		goto fail;
	}
	sf_rt_state_mkdir(rt->state_path);
	err = sf_layout_read(&rt->layout);
	if (err)
		goto fail;
	if (installed(pin_dir)) {
		err = adopt(rt);
		if (err)
			goto fail;
		if (adopted)
			*adopted = true;
		sf_rt_dispatch_adopted(rt);
		err = adopted_dispatch(rt);
		if (err)
			goto fail;
	} else {
		err = install_fresh(rt, opts, pin_dir);
		if (err)
			goto fail;
	}
	err = sf_rt_finish_open(rt);
	if (err)
		goto fail;
	*out = rt;
	return 0;
fail:
	/* Keep whatever was adopted attached; a fresh load failing is
	 * detached by close (its pins are gone). */
	if (!(adopted && *adopted) && rt->skel) {
		free(rt->pin_dir);
		rt->pin_dir = NULL;
	}
	sf_runtime_close(rt);
	return err;
}

int sf_runtime_uninstall(struct sf_runtime *rt)
{
	int err;

	if (!rt->pin_dir)
		return -EINVAL;
	pthread_mutex_lock(&rt->lock);
	sf_rt_stop_enforcing(rt);
	err = teardown_dir(rt->pin_dir, rt);
	rt->dispatch_pinned = false;
	free(rt->state_path);
	rt->state_path = NULL;
	free(rt->pin_dir);
	rt->pin_dir = NULL;
	pthread_mutex_unlock(&rt->lock);
	return err;
}
