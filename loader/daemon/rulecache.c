// SPDX-License-Identifier: GPL-2.0-only
/*
 * Profiles compiled for SF_MSG_PROFILE, kept so that the next request
 * with the same inputs costs a lookup: every container a hook starts
 * with one profile sends the same text, and its compile (libseccomp's
 * export, most of it) was most of the daemon's share of a container's
 * start.
 *
 * An entry is taken only when its inputs are the request's byte for
 * byte: the profile's text and sf_profile_inputs()'s line (libsfprofile
 * says what a compile depends on: the caps and kernel judged, the
 * reading, the versions). No hash decides a hit, so no collision can
 * hand a filter the rules of another profile.
 *
 * Entries are counted against the login user that asked (a hit too only
 * within that user's own: another's use of a profile is not told by a
 * reply's time): at most RC_PER_USER each, RC_MAX in all. A user at its
 * bound replaces its own least recently used; a full cache replaces the
 * least recently used of the user holding the most, so no user's
 * requests can push out the entries of one that holds fewer. An entry's
 * rules stay while a filter names them (a reference each).
 *
 * A miss compiles in a child process (sf_profile_rules_new_forked()):
 * libseccomp leaks on some rules, and anyone may send profiles, so a
 * compile here would let a user grow the daemon without end.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "daemon.h"
#include "profile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define RC_MAX      32
#define RC_PER_USER 8

struct compiled {
	unsigned int refs;
	struct sf_profile_rules *r;
};

static struct {
	struct login who;
	char inputs[SF_PROFILE_INPUTS_MAX];
	char *text;               /* the profile's, len bytes */
	size_t len;
	uint64_t used;            /* rc_clock at the last hit */
	struct compiled *c;       /* NULL: a free slot */
} cache[RC_MAX];
static uint64_t rc_clock;
static struct rulecache_stats stats;

void compiled_put(struct compiled *c)
{
	if (!c || --c->refs)
		return;
	sf_profile_rules_close(c->r);
	free(c);
}

struct compiled *compiled_get(struct compiled *c)
{
	c->refs++;
	return c;
}

const struct sf_profile_rules *compiled_rules(const struct compiled *c)
{
	return c->r;
}

/* Slot i emptied: i. */
static int drop(int i)
{
	compiled_put(cache[i].c);
	free(cache[i].text);
	cache[i].c = NULL;
	cache[i].text = NULL;
	stats.entries--;
	return i;
}

static int held_by(const struct login *who)
{
	int i, n = 0;

	for (i = 0; i < RC_MAX; i++)
		n += cache[i].c && login_eq(&cache[i].who, who);
	return n;
}

/* who's least recently used entry (who holds one). */
static int lru_of(const struct login *who)
{
	int i, lru = -1;

	for (i = 0; i < RC_MAX; i++)
		if (cache[i].c && login_eq(&cache[i].who, who) &&
		    (lru < 0 || cache[i].used < cache[lru].used))
			lru = i;
	return lru;
}

/* The slot a new entry of who's goes in, emptied. */
static int slot_for(const struct login *who)
{
	int i, n, most = -1, top = held_by(who);

	if (top >= RC_PER_USER)
		return drop(lru_of(who));
	for (i = 0; i < RC_MAX; i++)
		if (!cache[i].c)
			return i;
	/* Full: the user holding the most gives one up, who itself on a tie. */
	for (i = 0; i < RC_MAX; i++)
		if ((n = held_by(&cache[i].who)) > top) {
			top = n;
			most = i;
		}
	return drop(lru_of(most < 0 ? who : &cache[most].who));
}

struct compiled *rulecache_compile(const struct login *who, const struct sf_profile_opts *opts,
				   const char *json, size_t len, struct sf_profile_error *err,
				   int *r)
{
	char inputs[SF_PROFILE_INPUTS_MAX];
	struct compiled *c;
	int i, n;

	memset(err, 0, sizeof(*err));
	n = sf_profile_inputs(opts, inputs, sizeof(inputs));
	for (i = 0; n >= 0 && i < RC_MAX; i++) {
		if (!cache[i].c || !login_eq(&cache[i].who, who) || cache[i].len != len ||
		    strcmp(cache[i].inputs, inputs) || memcmp(cache[i].text, json, len))
			continue;
		cache[i].used = ++rc_clock;
		stats.hits++;
		return compiled_get(cache[i].c);
	}
	stats.misses++;
	c = calloc(1, sizeof(*c));
	if (!c) {
		*r = -ENOMEM;
		snprintf(err->msg, sizeof(err->msg), "%s", strerror(ENOMEM));
		return NULL;
	}
	c->refs = 1;
	if ((*r = sf_profile_rules_new_forked(json, len, opts, &c->r, err)) < 0) {
		free(c);
		return NULL;
	}
	/* Inputs no line can name (caps of a task) are compiled, not kept. */
	if (n < 0)
		return c;
	i = slot_for(who);
	cache[i].text = malloc(len);
	if (!cache[i].text)
		return c;
	memcpy(cache[i].text, json, len);
	cache[i].len = len;
	cache[i].who = *who;
	memcpy(cache[i].inputs, inputs, sizeof(inputs));
	cache[i].used = ++rc_clock;
	cache[i].c = compiled_get(c);
	stats.entries++;
	return c;
}

struct rulecache_stats rulecache_stats(void)
{
	return stats;
}
