// SPDX-License-Identifier: GPL-2.0-only
/*
 * How user space meets the BPF side's view of tasks: passes of the task
 * iterator (sf_iter), which report every task's chain and apply the
 * compare-and-set entries in sf_pending, and the wait for program runs
 * still under way (sf_rt_quiesce()), which every change that frees
 * something a running program may hold goes through.
 */
#define _GNU_SOURCE
#include "grow.h"
#include "internal.h"
#include "sfilter.skel.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

/* An iterator link over the process pidfd refers to, or over the one
 * task tid, or with neither, over every task. */
static int iter_link(struct sf_runtime *rt, int pidfd, pid_t tid)
{
	LIBBPF_OPTS(bpf_link_create_opts, o);
	union bpf_iter_link_info li = {};

	if (pidfd >= 0)
		li.task.pid_fd = (uint32_t)pidfd;
	else if (tid > 0)
		li.task.tid = (uint32_t)tid;
	if (pidfd >= 0 || tid > 0) {
		o.iter_info = &li;
		o.iter_info_len = sizeof(li);
	}
	return bpf_link_create(rt->fd_iter, 0, BPF_TRACE_ITER, &o);
}

/*
 * The link over the one task tid, kept: made once, then reused by every
 * walk of that tid until another takes its place. The kernel keeps only
 * the number in a link and looks the task up when a walk starts, so a
 * kept link is the same as a new one (a tid reused meanwhile is found as
 * a new link would find it). The caller holds rt->lock. A descriptor it
 * must not close, or -errno.
 */
static int tid_link(struct sf_runtime *rt, pid_t tid)
{
	int i, lru = 0, fd;

	for (i = 0; i < SF_RT_TID_LINKS; i++) {
		if (rt->tid_links[i].fd > 0 && rt->tid_links[i].tid == tid) {
			rt->tid_links[i].used = ++rt->tid_links_clock;
			return rt->tid_links[i].fd;
		}
		if (rt->tid_links[i].used < rt->tid_links[lru].used)
			lru = i;
	}
	fd = iter_link(rt, -1, tid);
	if (fd < 0)
		return -errno;
	if (rt->tid_links[lru].fd > 0)
		close(rt->tid_links[lru].fd);
	rt->tid_links[lru].tid = tid;
	rt->tid_links[lru].fd = fd;
	rt->tid_links[lru].used = ++rt->tid_links_clock;
	return fd;
}

void sf_rt_iter_links_close(struct sf_runtime *rt)
{
	int i;

	for (i = 0; i < SF_RT_TID_LINKS; i++) {
		if (rt->tid_links[i].fd > 0)
			close(rt->tid_links[i].fd);
		rt->tid_links[i].fd = 0;
		rt->tid_links[i].used = 0;
	}
}

bool sf_rt_iter_can_filter(struct sf_runtime *rt)
{
	int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0), fd;

	if (pidfd < 0)
		return false;
	fd = iter_link(rt, pidfd, 0);
	close(pidfd);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/*
 * One pass of sf_iter over the thread group tgid, or over the process pidfd
 * refers to (pidfd >= 0; the kernel's filter, from 6.1), or over the one
 * thread tid of group tgid (tid > 0; the kernel's filter too), or over
 * every task (none of them), applying the pending entries and returning
 * one record per task it reports.
 *
 * A thread group is walked as every task, filtered in sf_iter, never with
 * the kernel's per-process walk: that one follows the thread list from the
 * thread it visited last and ends early when that thread exits meanwhile
 * (so a group whose threads come and go would look smaller than it is),
 * and on 6.1 it can follow a reused pid into another process. The walk of
 * every task goes by increasing tid and misses no task that lives through
 * it. Only the pidfd form uses the kernel's filter, and reads one record:
 * the leader, the walk's first task.
 */
static int iter_walk(struct sf_runtime *rt, pid_t tgid, int pidfd, pid_t tid, bool ktid,
		     bool all, struct sf_rt_recs *out);

static int iter_run(struct sf_runtime *rt, pid_t tgid, int pidfd, pid_t tid, bool all,
		    struct sf_rt_recs *out)
{
	return iter_walk(rt, tgid, pidfd, tid, tid > 0, all, out);
}

/* As iter_run(), with the kernel filtering by tid only when ktid: else
 * every task is walked and sf_iter reports tid alone. */
static int iter_walk(struct sf_runtime *rt, pid_t tgid, int pidfd, pid_t tid, bool ktid,
		     bool all, struct sf_rt_recs *out)
{
	const size_t rsz = sizeof(struct sf_iter_rec);
	size_t cap = 0, have = 0, bsize = pidfd >= 0 ? rsz : 4096;
	char buf[4096 + sizeof(struct sf_iter_rec)];
	int fd, lfd, err = 0;
	ssize_t got;

	out->r = NULL;
	out->n = 0;
	if ((pidfd >= 0 || ktid) && !rt->iter_filter)
		return -EOPNOTSUPP;
	/* The BPF side filters too: whatever task the kernel's walk
	 * yields, only tid of tgid is reported or changed. */
	rt->bss->sf_iter_tid = pidfd >= 0 ? 0 : (uint32_t)tid;
	rt->bss->sf_iter_tgid = pidfd >= 0 ? 0 : tgid;
	rt->bss->sf_iter_all = all;
	lfd = pidfd < 0 && ktid ? tid_link(rt, tid) : iter_link(rt, pidfd, 0);
	if (lfd < 0)
		return pidfd < 0 && ktid ? lfd : -errno;
	fd = bpf_iter_create(lfd);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	/* A read returns at most bsize bytes of what the kernel's walk
	 * wrote, so a record may end in the next read (bpf_seq_read() fills
	 * its buffer with whole records past bsize, then copies bsize): the
	 * part that came is kept for it. A read of one record ends the
	 * kernel's walk one task later. */
	while ((got = read(fd, buf + have, bsize)) > 0) {
		size_t k, nrec;

		have += (size_t)got;
		nrec = have / rsz;

		if (C2E_GROW(out->r, cap, out->n + nrec)) {
			err = -ENOMEM;
			break;
		}
		for (k = 0; k < nrec; k++)
			memcpy(&out->r[out->n++], buf + k * rsz, rsz);
		have -= nrec * rsz;
		memmove(buf, buf + nrec * rsz, have);
		if (pidfd >= 0)
			break;
	}
	if (got < 0)
		err = -errno;
	close(fd);
out:
	if (pidfd >= 0 || !ktid)
		close(lfd);
	if (err) {
		free(out->r);
		out->r = NULL;
		out->n = 0;
	}
	return err;
}

int sf_rt_iter_run(struct sf_runtime *rt, pid_t tgid, bool all, struct sf_rt_recs *out)
{
	return iter_run(rt, tgid, -1, 0, all, out);
}

int sf_rt_iter_pidfd(struct sf_runtime *rt, int pidfd, struct sf_rt_recs *out)
{
	return iter_run(rt, 0, pidfd, 0, true, out);
}

/*
 * The kernel's walk of one task by number visits that task alone, where a
 * walk of every task visits all of them (a pass costs what the machine's
 * task count makes it). On 6.1 the kernel looks the number up as a
 * thread group's (its BPF_TASK_ITER_TID takes PIDTYPE_TGID), so a thread
 * other than the leader yields no record there: callers fall back to the
 * group walk when the record is missing.
 */
int sf_rt_iter_thread(struct sf_runtime *rt, pid_t tgid, pid_t tid, struct sf_rt_recs *out)
{
	if (tid <= 0)
		return -ESRCH;
	return iter_run(rt, tgid, -1, tid, true, out);
}

/* Thread tid of any process: the kernel's one-task walk where it finds
 * it, else the walk of every task (6.1 finds only leaders by number). */
int sf_rt_iter_find(struct sf_runtime *rt, pid_t tid, struct sf_rt_recs *out)
{
	int err;

	if (tid <= 0)
		return -ESRCH;
	if (rt->iter_filter) {
		err = iter_walk(rt, 0, -1, tid, true, true, out);
		if (err || out->n)
			return err;
		free(out->r);
	}
	return iter_walk(rt, 0, -1, tid, false, true, out);
}

/* An update of an ARRAY_OF_MAPS from user space returns only after every
 * BPF program run that started before it has ended
 * (maybe_wait_bpf_programs(), kernel/bpf/syscall.c); open.c makes the map. */
int sf_rt_quiesce(struct sf_runtime *rt)
{
	int key = 0;

	if (rt->fd_sync < 0)
		return -EBADF;
	return bpf_map_update_elem(rt->fd_sync, &key, &rt->fd_sync_inner, BPF_ANY) ? -errno : 0;
}

/*
 * The first step of every teardown. Sets the BPF side's sf_stopped, so that
 * from the next syscall on no task is judged and an empty chain slot no
 * longer kills, then waits until no program run that read it unset is left.
 * Only after this may the links and the chains (the PROG_ARRAY) go: the
 * kernel empties a PROG_ARRAY when its last user reference goes, and a
 * dispatcher still attached then (bpffs releases an unpinned link later,
 * from an RCU callback and a workqueue) would find every chain slot empty
 * and kill each confined task at its next syscall, allowed or not.
 */
void sf_rt_stop_enforcing(struct sf_runtime *rt)
{
	int err;

	if (!rt->bss)
		return;
	__atomic_store_n(&rt->bss->sf_stopped, 1, __ATOMIC_SEQ_CST);
	err = sf_rt_quiesce(rt);
	if (err)
		fprintf(stderr, "sfilter: waiting for running BPF programs: %s\n",
			strerror(-err));
}

int sf_rt_gate_filters_refresh(struct sf_runtime *rt)
{
	LIBBPF_OPTS(bpf_link_create_opts, o);
	union bpf_iter_link_info li = {};
	uint32_t gen, v;
	uint64_t key, next;
	char buf[64];
	int lfd, fd, more, err = 0;
	ssize_t got;

	gen = __atomic_load_n(&rt->bss->sf_listeners_gen, __ATOMIC_RELAXED) + 1;
	__atomic_store_n(&rt->bss->sf_listeners_tgid, (uint32_t)getpid(), __ATOMIC_RELAXED);
	__atomic_store_n(&rt->bss->sf_listeners_gen, gen, __ATOMIC_RELEASE);
	if (rt->iter_filter) {
		/* Only this process's files (6.1 on); sf_iter_listeners checks
		 * the tgid itself where every task's are walked. */
		li.task.pid = (uint32_t)getpid();
		o.iter_info = &li;
		o.iter_info_len = sizeof(li);
	}
	lfd = bpf_link_create(rt->fd_iter_listeners, 0, BPF_TRACE_ITER, &o);
	if (lfd < 0)
		return -errno;
	fd = bpf_iter_create(lfd);
	if (fd < 0) {
		err = -errno;
		close(lfd);
		return err;
	}
	while ((got = read(fd, buf, sizeof(buf))) > 0)
		;
	if (got < 0)
		err = -errno;
	close(fd);
	close(lfd);
	if (err)
		return err;
	/* What an earlier pass saw and this one did not: a listener closed
	 * since, whose filter's memory may be another's now. */
	more = !bpf_map_get_next_key(rt->fd_gate_filters, NULL, &key);
	while (more) {
		more = !bpf_map_get_next_key(rt->fd_gate_filters, &key, &next);
		if (!bpf_map_lookup_elem(rt->fd_gate_filters, &key, &v) && v != gen)
			bpf_map_delete_elem(rt->fd_gate_filters, &key);
		key = next;
	}
	return 0;
}
