// SPDX-License-Identifier: GPL-2.0-only
/*
 * The state file of a pinned runtime: what bpffs cannot hold, the chain
 * tree (nodes: id, flags, owner, parent, slot, classic code) and the
 * cgroup attachments, in /run/<basename of pin_dir>/state. Rewritten
 * (write + rename) after every change, and before any task is given a
 * newly loaded slot, so that a runtime adopting the pins knows every chain
 * a task can have.
 */
#define _GNU_SOURCE
#include "internal.h"
#include "sfilter.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *sf_rt_state_path(const char *pin_dir)
{
	const char *base = strrchr(pin_dir, '/');
	char *p;

	base = base && base[1] ? base + 1 : pin_dir;
	if (asprintf(&p, "/run/%s/state", base) < 0)
		return NULL;
	return p;
}

void sf_rt_state_mkdir(const char *state_path)
{
	char *dir = strdup(state_path);

	if (dir) {
		*strrchr(dir, '/') = 0;
		mkdir(dir, 0700);
		free(dir);
	}
}

void sf_rt_state_remove(const char *pin_dir)
{
	char *sp = sf_rt_state_path(pin_dir), *slash;

	if (!sp)
		return;
	unlink(sp);
	slash = strrchr(sp, '/');
	*slash = 0;
	rmdir(sp);
	free(sp);
}

/* State file: header, nodes, cgroups. */
#define STATE_MAGIC 0x53465354u /* "SFST" */
#define STATE_VERSION 2

struct st_head {
	uint32_t magic, version, tier, next_id, n_nodes, n_cgroups;
};
struct st_node {
	int32_t idx, parent;
	uint32_t flags, id, owner, slot, len, dead, depth, path_insns;
	uint32_t hits_base, form; /* ST_NODE_*; 0 in files older than the field */
	uint64_t hash;
};
/* The slot holds the chain's linear form: the adopting runtime swaps in
 * the searched one (upgrade.c). Either form is correct; this only says
 * which one a call pays for. */
#define ST_NODE_LINEAR 0x1
/* The slot holds a stand-in (standin.c): the adopting runtime loads the
 * chain's program, and meanwhile gives the chain to gated attaches only. */
#define ST_NODE_STANDIN 0x2
struct st_cg {
	uint64_t id;
	int32_t base;
	uint32_t path_len, n_app, flags; /* ST_CG_* */
};
#define ST_CG_AT_EXEC 0x1
struct st_app {
	uint32_t from;
	int32_t to;
};

void sf_rt_save_state(struct sf_runtime *rt)
{
	struct st_head h = { STATE_MAGIC, STATE_VERSION, rt->tier, rt->next_id, 0, 0 };
	struct sf_cgroup *c;
	char tmp[PATH_MAX];
	FILE *f;
	size_t i;
	int idx = 0;

	if (!rt->state_path)
		return;
	for (i = 0; i < SF_RT_HASH_BUCKETS; i++) {
		struct sf_node *n;

		for (n = rt->buckets[i]; n; n = n->hnext)
			n->idx = idx++;
	}
	h.n_nodes = idx;
	for (c = rt->cgroups; c; c = c->next)
		h.n_cgroups++;
	snprintf(tmp, sizeof(tmp), "%s.tmp", rt->state_path);
	f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "sfilter: %s: %s\n", tmp, strerror(errno));
		return;
	}
	fwrite(&h, sizeof(h), 1, f);
	for (i = 0; i < SF_RT_HASH_BUCKETS; i++) {
		struct sf_node *n;

		for (n = rt->buckets[i]; n; n = n->hnext) {
			struct st_node r = {
				.idx = n->idx, .parent = n->parent ? n->parent->idx : -1,
				.flags = n->flags, .id = n->id, .owner = n->owner,
				.slot = n->slot, .len = n->len, .dead = n->dead,
				.depth = n->depth, .path_insns = n->path_insns,
				.hits_base = n->hits_base, .hash = n->hash,
				.form = (n->slot && n->linear ? ST_NODE_LINEAR : 0) |
					(n->slot && n->standin ? ST_NODE_STANDIN : 0),
			};

			fwrite(&r, sizeof(r), 1, f);
			fwrite(n->insns, sizeof(*n->insns), n->len, f);
		}
	}
	for (c = rt->cgroups; c; c = c->next) {
		struct st_cg r = { .id = c->id, .base = c->base ? c->base->idx : -1,
				   .path_len = strlen(c->path), .n_app = c->n_app,
				   .flags = c->at_exec ? ST_CG_AT_EXEC : 0 };

		fwrite(&r, sizeof(r), 1, f);
		fwrite(c->path, 1, r.path_len, f);
		for (i = 0; i < c->n_app; i++) {
			struct st_app a = { c->app[i].from, c->app[i].to->idx };

			fwrite(&a, sizeof(a), 1, f);
		}
	}
	if (fflush(f) || ferror(f)) {
		fprintf(stderr, "sfilter: writing %s failed\n", tmp);
		fclose(f);
		return;
	}
	fclose(f);
	if (rename(tmp, rt->state_path))
		fprintf(stderr, "sfilter: %s: %s\n", rt->state_path, strerror(errno));
}


/* The file's n_nodes nodes, each into rt's hash table and slots and into
 * all[] at its index, then linked to their parents. 0 or -errno (-EIO:
 * malformed). */
static int read_nodes(struct sf_runtime *rt, FILE *f, uint32_t n_nodes, struct sf_node **all)
{
	int32_t *parents = calloc(n_nodes + 1, sizeof(*parents));
	uint32_t i;
	int err = -EIO;

	if (!parents)
		return -ENOMEM;
	for (i = 0; i < n_nodes; i++) {
		struct st_node r;
		struct sf_node *n;

		if (fread(&r, sizeof(r), 1, f) != 1 || r.idx < 0 ||
		    (uint32_t)r.idx >= n_nodes || r.len > C2E_MAX_INSNS ||
		    r.slot >= SF_MAX_CHAINS)
			goto out;
		n = calloc(1, sizeof(*n));
		if (!n) {
			err = -ENOMEM;
			goto out;
		}
		n->insns = malloc(r.len * sizeof(*n->insns) + 1);
		if (!n->insns || fread(n->insns, sizeof(*n->insns), r.len, f) != r.len) {
			free(n->insns);
			free(n);
			goto out;
		}
		n->len = r.len;
		n->flags = r.flags;
		n->id = r.id;
		n->owner = r.owner;
		n->slot = r.slot;
		n->dead = r.dead;
		n->depth = r.depth;
		n->path_insns = r.path_insns;
		n->hits_base = r.hits_base < SF_HITS_MAX ? r.hits_base : 0;
		n->hash = r.hash;
		n->linear = n->slot && (r.form & ST_NODE_LINEAR);
		n->standin = n->slot && (r.form & ST_NODE_STANDIN);
		n->idx = r.idx;
		n->prog_fd = -1;
		if (n->slot)
			rt->slots[n->slot] = n;
		/* Kept by the last runtime without a slot: freed once nothing
		 * refers to it (sf_rt_nodes_reap()). */
		n->released = !n->slot;
		rt->released += n->released;
		n->hnext = rt->buckets[n->hash % SF_RT_HASH_BUCKETS];
		rt->buckets[n->hash % SF_RT_HASH_BUCKETS] = n;
		all[r.idx] = n;
		parents[r.idx] = r.parent;
	}
	for (i = 0; i < n_nodes; i++) {
		if (!all[i])
			goto out;
		if (parents[i] >= 0) {
			if ((uint32_t)parents[i] >= n_nodes)
				goto out;
			all[i]->parent = all[parents[i]];
		}
	}
	err = 0;
out:
	free(parents);
	return err;
}

/* The file's cgroups into rt->cgroups, their chains from all[]. 0 or
 * -errno (-EIO: malformed). */
static int read_cgroups(struct sf_runtime *rt, FILE *f, const struct st_head *h,
			struct sf_node **all)
{
	uint32_t i, k;

	for (i = 0; i < h->n_cgroups; i++) {
		struct sf_cgroup *c = calloc(1, sizeof(*c));
		struct st_cg r;

		if (!c)
			return -ENOMEM;
		c->next = rt->cgroups;
		rt->cgroups = c;
		if (fread(&r, sizeof(r), 1, f) != 1 || r.path_len > PATH_MAX ||
		    r.base >= (int32_t)h->n_nodes)
			return -EIO;
		c->id = r.id;
		c->base = r.base >= 0 ? all[r.base] : NULL;
		c->at_exec = r.flags & ST_CG_AT_EXEC;
		c->path = calloc(1, r.path_len + 1);
		c->app = calloc(r.n_app + 1, sizeof(*c->app));
		if (!c->path || !c->app)
			return -EIO;
		c->cap_app = r.n_app + 1;
		if (fread(c->path, 1, r.path_len, f) != r.path_len)
			return -EIO;
		for (k = 0; k < r.n_app; k++) {
			struct st_app a;

			if (fread(&a, sizeof(a), 1, f) != 1 || a.to < 0 ||
			    a.to >= (int32_t)h->n_nodes)
				return -EIO;
			c->app[c->n_app++] = (struct sf_cg_app){ a.from, all[a.to] };
		}
	}
	return 0;
}

int sf_rt_load_state(struct sf_runtime *rt)
{
	struct sf_node **all = NULL;
	struct st_head h;
	FILE *f = fopen(rt->state_path, "r");
	int err = -EIO;

	if (!f)
		return errno == ENOENT ? 0 : -errno; /* pinned, nothing attached yet */
	if (fread(&h, sizeof(h), 1, f) != 1 || h.magic != STATE_MAGIC ||
	    h.version != STATE_VERSION)
		goto out;
	rt->next_id = h.next_id;
	all = calloc(h.n_nodes + 1, sizeof(*all));
	if (!all) {
		err = -ENOMEM;
		goto out;
	}
	err = read_nodes(rt, f, h.n_nodes, all);
	if (!err)
		err = read_cgroups(rt, f, &h, all);
out:
	if (err)
		fprintf(stderr, "sfilter: %s: unreadable state\n", rt->state_path);
	free(all);
	fclose(f);
	return err;
}
