// SPDX-License-Identifier: GPL-2.0-only
/*
 * Other BPF users, as the benches see them (bench_util.h): their links on
 * the tracepoints every system call passes, counted so that a figure taken
 * beside them says so.
 */
#include "bench_util.h"

#include <bpf/bpf.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- other BPF users --------------------------------------------------------------- */

static bool link_is(enum bench_link_kind kind, const struct bpf_link_info *info)
{
	if (kind == BENCH_LINK_LSM)
		return info->type == BPF_LINK_TYPE_TRACING &&
		       info->tracing.attach_type == BPF_LSM_MAC;
	return info->type == BPF_LINK_TYPE_RAW_TRACEPOINT ||
	       (info->type == BPF_LINK_TYPE_TRACING &&
		info->tracing.attach_type == BPF_TRACE_RAW_TP);
}

int bench_links(enum bench_link_kind kind, uint32_t *ids, int max)
{
	__u32 id = 0;
	int n = 0;

	while (!bpf_link_get_next_id(id, &id)) {
		struct bpf_link_info info;
		__u32 len = sizeof(info);
		int fd = bpf_link_get_fd_by_id(id);

		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && link_is(kind, &info)) {
			if (ids && n < max)
				ids[n] = id;
			n++;
		}
		close(fd);
	}
	return n;
}

int bench_bare_check(const char *prog)
{
	int tp = bench_links(BENCH_LINK_TP, NULL, 0), lsm = bench_links(BENCH_LINK_LSM, NULL, 0);

	if (tp + lsm)
		printf("warning: %s: %d tracepoint and %d LSM links of others are attached "
		       "(`bpftool link show`; a killed test's pins: `sfilterd --pin-dir DIR "
		       "--uninstall`): every system call pays for them, the baselines' too; "
		       "these figures are not bare\n", prog, tp, lsm);
	return tp + lsm;
}

void bench_wait_links_gone(const uint32_t *ids, int n)
{
	int i, tries, left = 1;

	for (tries = 0; left && tries < 200; tries++) {
		for (i = 0, left = 0; i < n; i++) {
			int fd = ids[i] ? bpf_link_get_fd_by_id(ids[i]) : -1;

			if (fd >= 0) {
				left = 1;
				close(fd);
			}
		}
		if (left)
			usleep(10000);
	}
}

int bench_foreign_tp_links(const uint32_t *own, int n_own, uint32_t skip)
{
	uint32_t ids[256];
	int n = bench_links(BENCH_LINK_TP, ids, BENCH_ARRAY_SIZE(ids)), i, j, foreign = 0;

	/* Past the first 256 nothing is known: they count as foreign. */
	if (n > (int)BENCH_ARRAY_SIZE(ids)) {
		foreign = n - (int)BENCH_ARRAY_SIZE(ids);
		n = BENCH_ARRAY_SIZE(ids);
	}
	for (i = 0; i < n; i++) {
		bool ours = skip && ids[i] == skip;

		for (j = 0; !ours && j < n_own; j++)
			ours = ids[i] == own[j];
		foreign += !ours;
	}
	return foreign;
}
