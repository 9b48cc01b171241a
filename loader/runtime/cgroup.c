// SPDX-License-Identifier: GPL-2.0-only
/*
 * Cgroup attach (sf_runtime_attach_cgroup): a cgroup's filters as a chain
 * of its own, its tasks moved onto "their chain + the cgroup's filters",
 * and the joins the BPF side could not finish itself (sf_cg_pending), left
 * to sf_runtime_process_pending(). The records and the maps the BPF side
 * reads when a task enters are cgroup_table.c's.
 */
#define _GNU_SOURCE
#include "grow.h"
#include "internal.h"
#include "sfilter.skel.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>
#include <limits.h>
#include <bpf/bpf.h>

/* from's chain with c's filters appended (those it lacks), loaded. */
static int cg_append(struct sf_runtime *rt, struct sf_cgroup *c,
		     struct sf_node *from, struct sf_node **out)
{
	struct sf_node *path[C2E_MAX_CHAIN_FILTERS + 1], *cur = from, *b;
	size_t depth = 0;
	int err;

	for (b = c->base; b; b = b->parent) {
		if (depth == sizeof(path) / sizeof(path[0]))
			return -E2BIG;
		path[depth++] = b;
	}
	while (depth--) {
		b = path[depth];
		if (sf_rt_path_has(from, b->id))
			continue;
		if ((uint64_t)(b->path_insns - (b->parent ? b->parent->path_insns : 0)) +
		    (cur ? cur->path_insns : 0) > C2E_MAX_CHAIN_INSNS + C2E_CHAIN_PENALTY)
			return -ENOMEM;
		cur = sf_rt_node_get(rt, cur, b->insns, b->len, b->flags, b->id,
				     b->path_insns - (b->parent ? b->parent->path_insns : 0) -
				     C2E_CHAIN_PENALTY);
		if (!cur)
			return -ENOMEM;
	}
	if (cur && !sf_rt_node_loaded(cur) && (err = sf_rt_node_load(rt, cur)))
		return err;
	*out = cur;
	return 0;
}

/* Moves the tasks tids[0..ntids) onto "their chain + c's filters"; with
 * groups, every thread of the thread groups tids[] names. For a cgroup
 * attached at exec, a task with no chain or one whose chain waits goes on
 * waiting, with the new chain (SF_PENDING_EXEC), as a joiner would
 * (cg_join in bpf/tasks.bpf.h); a task that execs meanwhile is judged
 * now, and the compare and set leaves it to the next round. */
static int cg_confine(struct sf_runtime *rt, struct sf_cgroup *c,
		      const pid_t *tids, size_t ntids, bool groups)
{
	int to[SF_MAX_CHAINS], err = 0, round;
	size_t i, k;

	for (round = 0; round < 8; round++) {
		struct sf_rt_recs r, after;
		size_t n = 0;

		err = sf_rt_iter_run(rt, 0, true, &r);
		if (err)
			return err;
		for (i = 0; i < SF_MAX_CHAINS; i++)
			to[i] = -1;
		for (i = 0; i < r.n; i++) {
			struct sf_node *from, *nw;
			uint32_t ch = r.r[i].chain, key = r.r[i].tid;
			struct sf_pending p = { 0 };
			bool want = false;

			for (k = 0; k < ntids && !want; k++)
				want = groups ? (pid_t)r.r[i].tgid == tids[k]
					      : (pid_t)r.r[i].tid == tids[k];
			if (!want || ch >= SF_MAX_CHAINS)
				continue;
			from = ch ? rt->slots[ch] : NULL;
			if (ch && !from)
				continue; /* not ours */
			if (to[ch] < 0) {
				err = cg_append(rt, c, from, &nw);
				if (err)
					goto fail;
				to[ch] = nw ? nw->slot : 0;
				if (nw && nw != from)
					nw->busy = true;
				if (nw && ch && (err = sf_rt_cg_add_app(rt, c, ch, nw)))
					goto fail;
			}
			if ((uint32_t)to[ch] == ch)
				continue;
			p.chain = to[ch];
			if (c->at_exec && p.chain && (!ch || r.r[i].at_exec))
				p.chain |= SF_PENDING_EXEC;
			p.expect = ch;
			if (bpf_map_update_elem(rt->fd_pending, &key, &p, BPF_ANY)) {
				err = -errno;
				goto fail;
			}
			r.r[n++] = r.r[i];
		}
		if (n == 0) {
			free(r.r);
			break;
		}
		err = sf_rt_iter_run(rt, 0, true, &after);
		for (i = 0; i < n; i++) {
			uint32_t key = r.r[i].tid;

			bpf_map_delete_elem(rt->fd_pending, &key);
		}
		free(r.r);
		if (err)
			goto out;
		free(after.r);
		continue;
fail:
		free(r.r);
		goto out;
	}
out:
	for (i = 1; i < SF_MAX_CHAINS; i++)
		if (rt->slots[i])
			rt->slots[i]->busy = false;
	return err;
}

/* Appends the tasks of dir (not of its sub-cgroups) to *out. */
static int read_tids_one(const char *dir, pid_t **out, size_t *n, size_t *capp)
{
	char path[PATH_MAX];
	size_t cap = *capp;
	FILE *f;
	int v;

	snprintf(path, sizeof(path), "%s/cgroup.threads", dir);
	f = fopen(path, "r");
	if (!f) {
		snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
		f = fopen(path, "r");
	}
	if (!f)
		return -errno;
	while (fscanf(f, "%d", &v) == 1) {
		if (C2E_GROW(*out, cap, *n + 1)) {
			fclose(f);
			return -ENOMEM;
		}
		(*out)[(*n)++] = v;
	}
	*capp = cap;
	fclose(f);
	return 0;
}

static int read_tids_tree(const char *dir, pid_t **out, size_t *n, size_t *cap,
			  int depth)
{
	char sub[PATH_MAX];
	struct dirent *e;
	DIR *d;
	int err;

	if (depth > 64)
		return -ELOOP;
	err = read_tids_one(dir, out, n, cap);
	if (err)
		return err;
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno; /* removed meanwhile */
	while (!err && (e = readdir(d))) {
		if (e->d_type != DT_DIR || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name);
		err = read_tids_tree(sub, out, n, cap, depth + 1);
		if (err == -ENOENT) /* a sub-cgroup removed meanwhile */
			err = 0;
	}
	closedir(d);
	return err;
}

/* Every task in the cgroup at dir and in its sub-cgroups: attaching to a
 * cgroup covers its subtree, as every cgroup v2 controller does. */
static int read_tids(const char *dir, pid_t **out, size_t *n)
{
	size_t cap = 0;
	int err;

	*out = NULL;
	*n = 0;
	err = read_tids_tree(dir, out, n, &cap, 0);
	if (err) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return err;
}

/* The kernfs ids (inode numbers) of the cgroup directories strictly above
 * path in its cgroup2 mount (same st_dev), nearest first, as far up as the
 * BPF side looks: how many, or -errno when a directory could not be read
 * (the list would be short). */
static int cg_ancestor_ids(const char *path, uint64_t *ids)
{
	char buf[PATH_MAX], *slash;
	struct stat st, top;
	int n = 0;

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	if (stat(buf, &top))
		return -errno;
	/* The BPF side's SF_CG_MAX_DEPTH counts the entered cgroup itself. */
	while (n < SF_CG_MAX_DEPTH - 1 && (slash = strrchr(buf, '/')) && slash != buf) {
		*slash = '\0';
		if (stat(buf, &st))
			return -errno;
		if (st.st_dev != top.st_dev)
			break;
		ids[n++] = st.st_ino;
	}
	return n;
}

/* Whether d is below the cgroup ancestor_id: 1, 0 or -errno. Each
 * record's ancestors are read once: an attach asks this of every attached
 * cgroup, and the stats of each one's path and parents were most of a
 * container's attach with a hundred others running. */
static int cg_is_below(struct sf_cgroup *d, uint64_t ancestor_id)
{
	size_t i;
	int n;

	if (!d->up_read) {
		n = cg_ancestor_ids(d->path, d->up);
		/* Gone since the prune: no task is in it, or can join it. */
		if (n == -ENOENT || n == -ENOTDIR)
			return 0;
		if (n < 0)
			return n;
		d->n_up = (uint8_t)n;
		d->up_read = true;
	}
	for (i = 0; i < d->n_up; i++)
		if (d->up[i] == ancestor_id)
			return 1;
	return 0;
}

/* The attached cgroup nearest above path (strictly), or NULL, in *above.
 * 0 or -errno: a chain built without the filters above would be laxer
 * than the cgroups it is in. */
static int cg_nearest_above(struct sf_runtime *rt, const char *path, struct sf_cgroup **above)
{
	uint64_t ids[SF_CG_MAX_DEPTH];
	int i, n = cg_ancestor_ids(path, ids);
	struct sf_cgroup *c;

	*above = NULL;
	if (n < 0)
		return n;
	for (i = 0; i < n; i++)
		for (c = rt->cgroups; c; c = c->next)
			if (c->id == ids[i] && c->base) {
				*above = c;
				return 0;
			}
	return 0;
}

/* Attached cgroups below c get node's filter too: a joiner there takes
 * only the nearest attached cgroup's chain, which waits for its exec only
 * when c's does too (at_exec). All are prepared before any is changed, so
 * a failure changes nothing. */
static int cg_rebase_below(struct sf_runtime *rt, struct sf_cgroup *c, struct sf_node *node,
			   bool at_exec)
{
	struct sf_cgroup *d, **below;
	struct sf_node **nb;
	size_t nd = 0, i;
	int err;

	for (d = rt->cgroups; d; d = d->next)
		nd++;
	below = calloc(nd, sizeof(*below));
	nb = calloc(nd, sizeof(*nb));
	if (!below || !nb) {
		free(below);
		free(nb);
		return -ENOMEM;
	}
	nd = 0;
	err = 0;
	for (d = rt->cgroups; d && !err; d = d->next) {
		int r = d != c && d->base ? cg_is_below(d, c->id) : 0;

		if (r < 0)
			err = r;
		else if (r)
			below[nd++] = d;
	}
	for (i = 0; i < nd && !err; i++)
		err = cg_append(rt, below[i], node, &nb[i]);
	for (i = 0; i < nd && !err; i++) {
		below[i]->base = nb[i];
		below[i]->at_exec = below[i]->at_exec && at_exec;
		sf_rt_cg_sync(rt, below[i]);
	}
	free(below);
	free(nb);
	return err;
}

/* How many of the tasks tids[0..n) have no filter id in their chain. */
static int cg_count_missing(struct sf_runtime *rt, const pid_t *tids, size_t n,
			    uint32_t id, size_t *missing)
{
	struct sf_rt_recs r;
	size_t i;
	int err = sf_rt_iter_run(rt, 0, true, &r);

	*missing = 0;
	if (err)
		return err;
	for (i = 0; i < r.n; i++) {
		size_t k;

		for (k = 0; k < n; k++)
			if ((pid_t)r.r[i].tid == tids[k])
				break;
		if (k < n && !(r.r[i].chain < SF_MAX_CHAINS &&
			       rt->slots[r.r[i].chain] &&
			       sf_rt_path_has(rt->slots[r.r[i].chain], id)))
			(*missing)++;
	}
	free(r.r);
	return 0;
}

/* Everyone already in path's subtree onto "their chain + c's filters",
 * until a pass finds nobody left without node's filter (*done), or for at
 * most 8 passes. */
static int cg_confine_all(struct sf_runtime *rt, struct sf_cgroup *c, const char *path,
			  const struct sf_node *node, bool *done)
{
	size_t n, missing;
	pid_t *tids;
	int err, round;

	*done = false;
	for (round = 0; round < 8; round++) {
		err = read_tids(path, &tids, &n);
		if (err)
			return err;
		err = cg_confine(rt, c, tids, n, false);
		free(tids);
		if (err)
			return err;
		err = read_tids(path, &tids, &n);
		if (err)
			return err;
		err = cg_count_missing(rt, tids, n, node->id, &missing);
		free(tids);
		if (err)
			return err;
		if (!missing) {
			*done = true;
			return 0;
		}
	}
	return 0;
}

/* The cgroup's new chain: a spare (taken: loaded), the one b was built
 * for when nothing it stands on changed, else a new node (a fresh id).
 * NULL: ENOMEM, or (only_loaded) no spare, and nothing was made. */
static struct sf_node *cg_chain(struct sf_runtime *rt, struct sf_cgroup *c,
				const struct sock_fprog *prog, unsigned int flags, int kcount,
				const struct sf_chain_build *b, bool only_loaded)
{
	struct sf_node *node = sf_rt_spare_find(rt, c->base, prog->filter, prog->len, flags);

	if (node) {
		node->spare = false;
		return node;
	}
	if (b->node && !b->node->dead && b->node->parent == c->base) {
		b->node->released = false; /* asked for again, as sf_rt_node_get() says */
		return b->node;
	}
	if (only_loaded)
		return NULL;
	return sf_rt_node_get(rt, c->base, prog->filter, prog->len, flags, rt->next_id,
			      kcount);
}

/* The chain's program: built off the lock (b, installed on the next
 * round), -EINPROGRESS until then; 0 once it is in its slot. */
static int cg_chain_load(struct sf_runtime *rt, struct sf_node *node,
			 struct sf_chain_build *b)
{
	int err;

	if (sf_rt_node_loaded(node))
		return 0;
	err = b->node == node && b->prog_fd >= 0 ? sf_rt_build_install(rt, b) : -ESTALE;
	if (err != -ESTALE)
		return err;
	sf_rt_build_free(b);
	err = sf_rt_build_begin(rt, node, b);
	return err ? err : -EINPROGRESS;
}

static int attach_cgroup_locked(struct sf_runtime *rt, const char *path,
				const struct sock_fprog *prog, unsigned int flags,
				uint32_t *filter_id, struct sf_chain_build *b)
{
	bool only_loaded = flags & SF_ATTACH_LOADED;
	struct sf_cgroup *c, *above = NULL;
	struct sf_node *node;
	bool fresh = false, done, waits, at_exec;
	struct stat st;
	int kcount, err;

	flags &= ~SF_ATTACH_LOADED;
	/* Before any task can be given a chain with it (a loaded chain may
	 * be reused, and a detached dispatcher judges nobody). */
	err = sf_rt_dispatch_on(rt);
	if (err)
		return err;
	if (stat(path, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	/* Containers come and go, each with a cgroup of its own. */
	sf_rt_cg_prune(rt);
	c = sf_rt_cg_find(rt, (uint64_t)st.st_ino);
	/* A joiner's chain waits for its exec only when every filter in it,
	 * those of the cgroups above too, was attached so. */
	if (!c || !c->base) {
		err = cg_nearest_above(rt, path, &above);
		if (err)
			return err;
		waits = !above || above->at_exec;
	} else {
		waits = c->at_exec;
	}
	at_exec = (flags & SF_ATTACH_AT_EXEC) && waits;
	if (!c) {
		/* The filters of the cgroups above come first, as if the
		 * joiner had joined each of them in turn. */
		c = sf_rt_cg_add(rt, st.st_ino, path, above ? above->base : NULL);
		if (!c)
			return -ENOMEM;
		fresh = true;
	}
	kcount = sf_rt_filter_insns(prog->filter, prog->len, flags);
	if (kcount < 0) {
		err = kcount;
		goto undo;
	}
	if ((uint64_t)kcount + (c->base ? c->base->path_insns : 0) > C2E_MAX_CHAIN_INSNS) {
		err = -ENOMEM;
		goto undo;
	}
	/* A fresh id: the cgroup's filter is its own attach. AT_EXEC is the
	 * attach's (the cgroup's, c->at_exec), not the filter's. A spare
	 * loaded after the last cgroup that got this filter has one, and
	 * spares this attach the kernel's verification. */
	flags &= ~(SF_ATTACH_TSYNC | SF_ATTACH_AT_EXEC);
	node = cg_chain(rt, c, prog, flags, kcount, b, only_loaded);
	if (!node) {
		err = only_loaded ? -EINPROGRESS : -ENOMEM;
		goto undo;
	}
	/* The kernel's verifier runs without the lock (the caller's
	 * rounds); with only_loaded, cg_chain() gave a loaded spare or
	 * nothing. */
	if ((err = cg_chain_load(rt, node, b)))
		goto undo;
	/* Its own id: no task's attach finds it but as a parent. */
	node->cgroup_only = true;
	sf_rt_spare_wish(rt, node, kcount);
	err = cg_rebase_below(rt, c, node, at_exec);
	if (err)
		goto undo;
	c->base = node;
	c->at_exec = at_exec;
	/* Joiners from now on: the tracepoint. Then everyone already in. */
	sf_rt_cg_sync(rt, c);
	err = cg_confine_all(rt, c, path, node, &done);
	if (err)
		return err;
	if (filter_id)
		*filter_id = node->id;
	return done ? 0 : -EAGAIN;
undo:
	/* Nothing was put in force: a cgroup new to us is forgotten. */
	if (fresh)
		sf_rt_cg_remove(rt, c);
	return err;
}

int sf_runtime_attach_cgroup(struct sf_runtime *rt, const char *cgroup_path,
			     const struct sock_fprog *prog, unsigned int flags,
			     uint32_t *filter_id, struct c2e_error *cerr)
{
	struct sf_chain_build build = SF_CHAIN_BUILD_INIT;
	int err, round;

	if (flags & ~(SF_ATTACH_ADMIN_FLAGS | SF_ATTACH_LOADED | SF_ATTACH_CHECKED))
		return -EINVAL;
	if (sf_runtime_filter_check(prog, flags & ~SF_ATTACH_LOADED, cerr))
		return -EINVAL;
	if (!cgroup_path)
		return -EINVAL;
	pthread_mutex_lock(&rt->lock);
	/* As a task's attach: a new chain's program is loaded between two
	 * rounds, without the lock, and installed by the next round if
	 * what the chain stands on (the cgroups above) is unchanged. */
	for (round = 0;; round++) {
		err = attach_cgroup_locked(rt, cgroup_path, prog, flags, filter_id, &build);
		if (err != -EINPROGRESS || (flags & SF_ATTACH_LOADED))
			break;
		if ((err = sf_rt_build_unlocked(rt, &build, round)))
			break;
	}
	/* A chain built for nobody (a failure, or the cgroups above changed
	 * meanwhile): the reaper's, unless someone has taken it since. */
	if (build.node && !build.node->slot && !build.node->released) {
		build.node->released = true;
		rt->released++;
	}
	sf_rt_build_free(&build);
	sf_rt_save_state(rt);
	pthread_mutex_unlock(&rt->lock);
	return err;
}

int sf_runtime_process_pending(struct sf_runtime *rt)
{
	struct sf_cg_pend p;
	uint32_t key, next;
	uint64_t pended;
	int err = 0, done = 0;

	pthread_mutex_lock(&rt->lock);
	/* Read before the scan: an entry added during it bumps the count
	 * again, so the next call looks once more. */
	pended = __atomic_load_n(&rt->bss->sf_cg_pended, __ATOMIC_ACQUIRE);
	if (pended == rt->cg_pended_seen) {
		pthread_mutex_unlock(&rt->lock);
		return 0;
	}
	rt->cg_pended_seen = pended;
	while (bpf_map_get_next_key(rt->fd_cgpend, NULL, &next) == 0) {
		struct sf_cgroup *c;
		pid_t who;
		int e;

		key = next;
		if (bpf_map_lookup_elem(rt->fd_cgpend, &key, &p)) {
			bpf_map_delete_elem(rt->fd_cgpend, &key);
			continue;
		}
		bpf_map_delete_elem(rt->fd_cgpend, &key);
		c = sf_rt_cg_find(rt, p.cgid);
		if (!c || !c->base)
			continue;
		who = p.threadgroup ? (pid_t)p.tgid : (pid_t)key;
		e = cg_confine(rt, c, &who, 1, p.threadgroup);
		if (e && !err)
			err = e;
		done++;
	}
	if (done)
		sf_rt_save_state(rt);
	pthread_mutex_unlock(&rt->lock);
	return err ? err : done;
}
