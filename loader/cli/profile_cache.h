/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Profiles compiled by sfilter-runc and sfilter-oci-hook, kept on the host
 * for the next container with the same inputs (profile_cache.c): the
 * wrapper's gate, and the profile's own filter, which the wrapper leaves
 * for the hook of the same container and the hook for the next.
 *
 * Where: the directory "compiled" beside sfilterd's socket (the one both
 * programs are given: --sfilter-socket, SFILTER_SOCKET), so that a private
 * daemon's clients keep a private cache. Used only when that directory
 * and the socket's are this user's (the effective uid's) and no one
 * else's to write; a cache that cannot be used is a miss, never an error.
 */
#ifndef SF_PROFILE_CACHE_H
#define SF_PROFILE_CACHE_H

#include <stddef.h>
#include <linux/filter.h>

struct sf_profile_opts;

/* The filter text (len bytes) compiles to for opts: 0 with *insns
 * (malloc'd, valid as seccomp(2) takes it), *n and *flags (the profile's
 * SF_PROFILE_FLAG_*), or -ENOENT (a miss, or no cache). */
int pcache_get_filter(const char *socket, const struct sf_profile_opts *opts, const char *text,
		      size_t len, struct sock_filter **insns, size_t *n, unsigned int *flags);
void pcache_put_filter(const char *socket, const struct sf_profile_opts *opts, const char *text,
		       size_t len, const struct sock_filter *insns, size_t n, unsigned int flags);

/* The gate (sf_profile_gate()'s JSON, NUL-terminated, malloc'd) of text
 * for opts and listener: 0, or -ENOENT. */
int pcache_get_gate(const char *socket, const struct sf_profile_opts *opts, const char *listener,
		    const char *text, size_t len, char **json);
void pcache_put_gate(const char *socket, const struct sf_profile_opts *opts, const char *listener,
		     const char *text, size_t len, const char *json);

#endif
