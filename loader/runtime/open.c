// SPDX-License-Identifier: GPL-2.0-only
/*
 * Opening and closing a runtime: loads bpf/sfilter.bpf.c through its
 * skeleton, on the lsm tier where the kernel runs BPF LSM programs
 * (tier.c) and on the tracepoint tier otherwise, and wires up what every
 * other file uses: the map fds, the action table, the ring buffer and the
 * map sf_rt_quiesce() waits with. Closing an unpinned runtime is a
 * teardown that never kills; closing a pinned one leaves everything in
 * force (pins.c).
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
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

static bool g_verbose;

static int print_fn(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* Quiet unless verbose: probing the tier fails on purpose. */
	if (!g_verbose || level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

const char *sf_tier_name(enum sf_tier tier)
{
	return tier == SF_TIER_LSM ? "lsm" : "tracepoint";
}

enum sf_tier sf_runtime_tier(const struct sf_runtime *rt)
{
	return rt->tier;
}

const char *sf_runtime_tier_reason(const struct sf_runtime *rt)
{
	return rt->tier_why;
}

static bool is_lsm_prog(const struct bpf_program *p)
{
	return strncmp(bpf_program__section_name(p), "lsm/", 4) == 0;
}

/* Opens, loads and attaches the skeleton; with_lsm also loads the LSM
 * programs for hooks the kernel has. */
static int load_skel(struct sf_runtime *rt, bool with_lsm, const struct btf *vmlinux)
{
	struct sfilter_bpf *skel;
	struct bpf_program *p;
	int err, fd, key = SF_SLOT_ENFORCE;

	skel = sfilter_bpf__open();
	if (!skel)
		return -errno;
	skel->rodata->sf_tier = with_lsm ? SF_BPF_TIER_LSM : SF_BPF_TIER_TRACEPOINT;
	bpf_object__for_each_program(p, skel->obj) {
		char fn[128];

		if (!is_lsm_prog(p))
			continue;
		/* Attached with the dispatcher (dispatch.c). */
		bpf_program__set_autoattach(p, false);
		snprintf(fn, sizeof(fn), "bpf_lsm_%s", bpf_program__section_name(p) + 4);
		if (!with_lsm || !vmlinux ||
		    btf__find_by_name_kind(vmlinux, fn, BTF_KIND_FUNC) < 0)
			bpf_program__set_autoload(p, false);
	}
	bpf_program__set_autoattach(skel->progs.sf_iter, false);
	bpf_program__set_autoattach(skel->progs.sf_iter_listeners, false);
	/* Attached with the first chain (dispatch.c). */
	bpf_program__set_autoattach(skel->progs.sf_dispatch, false);
	/* Reached by tail call only: attached, it would act on stale verdicts. */
	bpf_program__set_autoattach(skel->progs.sf_enforce, false);
	/* The recv of sf_attach()'s reply decides the arm when it returns:
	 * fexit programs on the recv syscalls where the kernel takes them,
	 * else a program on the sys_exit tracepoint (a little on every
	 * syscall's exit). Attached before an arm is set, while one may exist
	 * (sf_rt_reply_on()). Where neither attaches, the arm is taken at
	 * that recv's entry, and a caller whose daemon dies before the reply
	 * is confined although told the attach failed (docs/security.md). */
	bpf_program__set_autoattach(skel->progs.sf_reply_recvfrom, false);
	bpf_program__set_autoattach(skel->progs.sf_reply_recvmsg, false);
	bpf_program__set_autoattach(skel->progs.sf_reply_exit_tp, false);
	if (sf_rt_fexit_attaches(vmlinux, "__x64_sys_recvfrom") &&
	    sf_rt_fexit_attaches(vmlinux, "__x64_sys_recvmsg")) {
		bpf_program__set_autoload(skel->progs.sf_reply_exit_tp, false);
	} else {
		bpf_program__set_autoload(skel->progs.sf_reply_recvfrom, false);
		bpf_program__set_autoload(skel->progs.sf_reply_recvmsg, false);
	}
	err = sfilter_bpf__load(skel);
	if (err)
		goto fail;
	fd = bpf_program__fd(skel->progs.sf_enforce);
	err = bpf_map_update_elem(bpf_map__fd(skel->maps.sf_progs), &key, &fd, 0);
	if (err) {
		err = -errno;
		goto fail;
	}
	err = sfilter_bpf__attach(skel);
	if (err)
		goto fail;
	rt->skel = skel;
	return 0;
fail:
	sfilter_bpf__destroy(skel);
	return err < 0 ? err : -EINVAL;
}

static void take_skel_fds(struct sf_runtime *rt)
{
	struct sfilter_bpf *k = rt->skel;

	rt->fd_tasks = bpf_map__fd(k->maps.sf_tasks);
	rt->fd_progs = bpf_map__fd(k->maps.sf_progs);
	rt->fd_table = bpf_map__fd(k->maps.sf_table);
	rt->fd_pending = bpf_map__fd(k->maps.sf_pending);
	rt->fd_events = bpf_map__fd(k->maps.sf_events);
	rt->fd_cgroups = bpf_map__fd(k->maps.sf_cgroups);
	rt->fd_cgapp = bpf_map__fd(k->maps.sf_cg_append);
	rt->fd_cgpend = bpf_map__fd(k->maps.sf_cg_pending);
	rt->fd_tsync = bpf_map__fd(k->maps.sf_tsync);
	rt->fd_hits = bpf_map__fd(k->maps.sf_hits);
	rt->fd_accounts = bpf_map__fd(k->maps.sf_accounts);
	rt->fd_stats = bpf_map__fd(k->maps.sf_stats);
	rt->fd_agg = bpf_map__fd(k->maps.sf_agg);
	rt->fd_charge = bpf_program__fd(k->progs.sf_charge);
	rt->fd_gate_filters = bpf_map__fd(k->maps.sf_gate_filters);
	rt->fd_iter_listeners = bpf_program__fd(k->progs.sf_iter_listeners);
	rt->fd_bss = bpf_map__fd(k->maps.bss);
	rt->fd_iter = bpf_program__fd(k->progs.sf_iter);
	rt->bss = k->bss;
}

int sf_rt_load_fresh(struct sf_runtime *rt, const struct sf_runtime_opts *opts)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	int err = -ENOSYS;

	/* sf_charge: the events sfilterd makes take from the kernel's budgets. */
	if (libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_SYSCALL, NULL) != 1) {
		fprintf(stderr, "sfilter: this kernel runs no BPF syscall programs: "
			"sfilter needs Linux 5.14 or later\n");
		btf__free(vmlinux);
		return -EOPNOTSUPP;
	}
	if (opts && opts->force_tracepoint) {
		snprintf(rt->tier_why, sizeof(rt->tier_why), "asked for the tracepoint tier");
	} else if (sf_rt_lsm_programs_run(vmlinux, rt->tier_why, sizeof(rt->tier_why))) {
		err = load_skel(rt, true, vmlinux);
		if (err)
			snprintf(rt->tier_why, sizeof(rt->tier_why),
				 "sfilter's LSM programs refused (%s)", strerror(-err));
	}
	if (err && rt->verbose)
		fprintf(stderr, "sfilter: tracepoint tier: %s\n", rt->tier_why);
	rt->tier = err ? SF_TIER_TRACEPOINT : SF_TIER_LSM;
	if (err)
		err = load_skel(rt, false, vmlinux);
	btf__free(vmlinux);
	if (err) {
		fprintf(stderr, "sfilter: loading BPF programs: %s\n", strerror(-err));
		return err;
	}
	take_skel_fds(rt);
	rt->bss->sf_abi = SF_ABI_VERSION;
	sf_runtime_set_event_budget(rt, SF_EVENT_RATE_DEFAULT, SF_EVENT_BURST_DEFAULT);
	return 0;
}

int sf_rt_finish_open(struct sf_runtime *rt)
{
	rt->iter_filter = sf_rt_iter_can_filter(rt);
	rt->table_bytes = (size_t)SF_MAX_CHAINS * SF_TABLE_PER_CHAIN * sizeof(struct sf_const);
	rt->table = mmap(NULL, rt->table_bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
			 rt->fd_table, 0);
	if (rt->table == MAP_FAILED) {
		rt->table = NULL;
		return -errno;
	}
	return sf_rt_events_open(rt);
}

/* The map-in-map sf_rt_quiesce() writes to: an update of an ARRAY_OF_MAPS
 * from user space returns only after every BPF program run that started
 * before it has ended (maybe_wait_bpf_programs(), kernel/bpf/syscall.c). */
static int make_sync_maps(struct sf_runtime *rt)
{
	LIBBPF_OPTS(bpf_map_create_opts, o);

	rt->fd_sync_inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, "sf_sync_in", 4, 4, 1, NULL);
	if (rt->fd_sync_inner < 0)
		return -errno;
	o.inner_map_fd = rt->fd_sync_inner;
	rt->fd_sync = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "sf_sync", 4, 4, 1, &o);
	return rt->fd_sync < 0 ? -errno : 0;
}

struct sf_runtime *sf_rt_alloc(const struct sf_runtime_opts *opts)
{
	struct sf_runtime *rt = calloc(1, sizeof(*rt));
	int err;

	if (!rt)
		return NULL;
	rt->fd_sync = rt->fd_sync_inner = -1;
	err = make_sync_maps(rt);
	if (err) {
		if (rt->fd_sync_inner >= 0)
			close(rt->fd_sync_inner);
		free(rt);
		errno = -err;
		return NULL;
	}
	pthread_mutex_init(&rt->lock, NULL);
	pthread_mutex_init(&rt->detach_lock, NULL);
	rt->verbose = opts && opts->verbose;
	rt->defer_tables = opts && opts->defer_tables;
	rt->linear_first = opts && opts->linear_first;
	rt->next_id = 1;
	g_verbose = rt->verbose;
	libbpf_set_print(print_fn);
	return rt;
}

int sf_runtime_open(struct sf_runtime **out, const struct sf_runtime_opts *opts)
{
	struct sf_runtime *rt;
	int err;

	*out = NULL;
	rt = sf_rt_alloc(opts);
	if (!rt)
		return -errno;
	err = sf_layout_read(&rt->layout);
	if (!err)
		err = sf_rt_load_fresh(rt, opts);
	if (!err)
		err = sf_rt_finish_open(rt);
	if (err) {
		sf_runtime_close(rt);
		return err;
	}
	*out = rt;
	return 0;
}

static void close_fds(struct sf_runtime *rt)
{
	sf_rt_iter_links_close(rt);
	int *fds[] = { &rt->fd_tasks, &rt->fd_progs, &rt->fd_table, &rt->fd_pending,
		       &rt->fd_events, &rt->fd_cgroups, &rt->fd_cgapp, &rt->fd_cgpend,
		       &rt->fd_iter, &rt->fd_bss, &rt->fd_tsync, &rt->fd_hits,
		       &rt->fd_accounts, &rt->fd_stats, &rt->fd_agg, &rt->fd_charge,
		       &rt->fd_gate_filters, &rt->fd_iter_listeners };
	size_t i;

	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (rt->own_fds && *fds[i] > 0)
			close(*fds[i]);
		*fds[i] = 0;
	}
	if (rt->bss_map)
		munmap(rt->bss_map, sizeof(*rt->bss)); /* as pins.c mapped it */
	rt->bss_map = NULL;
	rt->bss = NULL;
}

void sf_runtime_close(struct sf_runtime *rt)
{
	if (!rt)
		return;
	sf_rt_events_close(rt);
	/* Unpinned, closing is a teardown: nobody is judged from here on,
	 * and only then do the links and the chains go. */
	if (rt->skel && !rt->pin_dir)
		sf_rt_stop_enforcing(rt);
	/* The dispatcher's link goes first (pinned: its pin keeps it). */
	sf_rt_dispatch_close_fd(rt);
	if (rt->skel && rt->pin_dir) {
		/* Pinned: the pins hold the links. A disconnected link is not
		 * detached by its destruction, but libbpf then leaves its fd
		 * open too: close it, or this process keeps the links (and
		 * every syscall's cost) alive after an uninstall by another. */
		size_t i;

		for (i = 0; i < (size_t)rt->skel->skeleton->prog_cnt; i++) {
			struct bpf_link **l = rt->skel->skeleton->progs[i].link;

			if (l && *l) {
				bpf_link__disconnect(*l);
				close(bpf_link__fd(*l));
			}
		}
	}
	/* Unpinned: destroying the skeleton detaches the programs and frees
	 * the task storage map: every confined task is unconfined from here on. */
	sf_rt_standin_close(rt);
	sf_rt_nodes_free(rt);
	sf_rt_cg_free_all(rt);
	sfilter_bpf__destroy(rt->skel);
	rt->skel = NULL;
	close_fds(rt);
	if (rt->table)
		munmap(rt->table, rt->table_bytes);
	close(rt->fd_sync);
	close(rt->fd_sync_inner);
	free(rt->pin_dir);
	free(rt->state_path);
	pthread_mutex_destroy(&rt->lock);
	pthread_mutex_destroy(&rt->detach_lock);
	free(rt);
}
