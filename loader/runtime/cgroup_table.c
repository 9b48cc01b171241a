// SPDX-License-Identifier: GPL-2.0-only
/*
 * The attached cgroups as records (struct sf_cgroup: the cgroup's filters
 * as a chain, and the prepared "chain + cgroup filters" appends), and the
 * maps the BPF side reads when a task enters one (sf_cgroups: the base
 * chain; sf_cg_append: prepared appends). Below the chains: freeing a
 * chain slot asks whether a cgroup still uses it, and detach/replace reset
 * the cgroups; cgroup attach itself (cgroup.c) is above the chains.
 */
#define _GNU_SOURCE
#include "grow.h"
#include "internal.h"
#include "sfilter.skel.h"

#include <errno.h>
#include <stdlib.h>
#include <bpf/bpf.h>

struct sf_cgroup *sf_rt_cg_find(struct sf_runtime *rt, uint64_t id)
{
	struct sf_cgroup *c;

	for (c = rt->cgroups; c; c = c->next)
		if (c->id == id)
			return c;
	return NULL;
}

struct sf_cgroup *sf_rt_cg_add(struct sf_runtime *rt, uint64_t id, const char *path,
			       struct sf_node *base)
{
	char *real = realpath(path, NULL);
	struct sf_cgroup *c = calloc(1, sizeof(*c));

	if (!c || !real) {
		free(c);
		free(real);
		return NULL;
	}
	c->path = real;
	c->id = id;
	c->base = base;
	c->next = rt->cgroups;
	rt->cgroups = c;
	return c;
}

static void cg_free(struct sf_cgroup *c)
{
	free(c->path);
	free(c->app);
	free(c);
}

void sf_rt_cg_remove(struct sf_runtime *rt, struct sf_cgroup *c)
{
	struct sf_cgroup **pp;

	for (pp = &rt->cgroups; *pp != c; pp = &(*pp)->next)
		;
	*pp = c->next;
	cg_free(c);
}

void sf_rt_cg_free_all(struct sf_runtime *rt)
{
	struct sf_cgroup *c, *cn;

	for (c = rt->cgroups; c; c = cn) {
		cn = c->next;
		cg_free(c);
	}
	rt->cgroups = NULL;
}

/* One record per container the OCI hook confined, and containers come
 * and go. */
void sf_rt_cg_prune(struct sf_runtime *rt)
{
	struct sf_cgroup *c, *next;

	for (c = rt->cgroups; c; c = next) {
		next = c->next;
		if (sf_rt_cg_alive(c))
			continue;
		c->base = NULL;
		sf_rt_cg_sync(rt, c);
		sf_rt_cg_remove(rt, c);
		/* Its chain may be no one's now (sf_rt_slots_release_gone()). */
		rt->cg_gone++;
	}
}

bool sf_rt_cg_uses_slot(struct sf_runtime *rt, int slot)
{
	struct sf_cgroup *c;
	size_t i;

	for (c = rt->cgroups; c; c = c->next) {
		if (c->base && c->base->slot == slot)
			return true;
		for (i = 0; i < c->n_app; i++)
			if (c->app[i].to->slot == slot)
				return true;
	}
	return false;
}

/* A slot is going away: drop the appends that start from it. */
void sf_rt_cg_forget_slot(struct sf_runtime *rt, int slot)
{
	struct sf_cgroup *c;
	size_t i;

	for (c = rt->cgroups; c; c = c->next)
		for (i = 0; i < c->n_app;) {
			if (c->app[i].from == (uint32_t)slot) {
				struct sf_cg_key k = { .cgid = c->id, .chain = slot };

				bpf_map_delete_elem(rt->fd_cgapp, &k);
				c->app[i] = c->app[--c->n_app];
			} else {
				i++;
			}
		}
}

/* The kernel maps follow c: its base chain, no prepared appends. */
void sf_rt_cg_sync(struct sf_runtime *rt, struct sf_cgroup *c)
{
	struct sf_cg v = { .chain = c->base ? c->base->slot : 0, .at_exec = c->at_exec };
	size_t i;

	for (i = 0; i < c->n_app; i++) {
		struct sf_cg_key k = { .cgid = c->id, .chain = c->app[i].from };

		bpf_map_delete_elem(rt->fd_cgapp, &k);
	}
	c->n_app = 0;
	/* sf_exec looks up a task's cgroups only while some have filters:
	 * raised before an entry appears, lowered after the last goes. */
	if (v.chain) {
		__atomic_store_n(&rt->bss->sf_cg_attached, 1, __ATOMIC_SEQ_CST);
		bpf_map_update_elem(rt->fd_cgroups, &c->id, &v, BPF_ANY);
	} else {
		const struct sf_cgroup *o;
		uint32_t any = 0;

		bpf_map_delete_elem(rt->fd_cgroups, &c->id);
		for (o = rt->cgroups; o; o = o->next)
			any |= o->base != NULL;
		__atomic_store_n(&rt->bss->sf_cg_attached, any, __ATOMIC_SEQ_CST);
	}
}

int sf_rt_cg_add_app(struct sf_runtime *rt, struct sf_cgroup *c, uint32_t from,
		     struct sf_node *to)
{
	struct sf_cg_key k = { .cgid = c->id, .chain = from };
	uint32_t v = to->slot;
	size_t i;

	for (i = 0; i < c->n_app; i++)
		if (c->app[i].from == from) {
			c->app[i].to = to;
			goto map;
		}
	if (C2E_GROW(c->app, c->cap_app, c->n_app + 1))
		return -ENOMEM;
	c->app[c->n_app++] = (struct sf_cg_app){ from, to };
map:
	if (bpf_map_update_elem(rt->fd_cgapp, &k, &v, BPF_ANY))
		return -errno;
	return 0;
}
