// SPDX-License-Identifier: GPL-2.0-only
/*
 * Compiled profiles on the host (profile_cache.h). A container's start
 * compiled its profile with libseccomp up to four times on the way to
 * runc (the wrapper's profile and its gate's check, the hook's), each
 * the same work as the last container's when the profile is the same.
 *
 * An entry is one file, "<kind>-<slot>": a header, the key, the value.
 * The key is everything the value was made from, byte for byte: the kind,
 * sf_profile_inputs()'s line (libsfprofile says what a compile depends
 * on), the listener path of a gate, and the profile's text. A reader
 * takes the value only when the key it would have written is the one in
 * the file, so a hash (which only picks the slot: 64 per kind, the
 * newest entry in it wins) never decides what a container gets.
 *
 * Who may have written it: the cache is the effective user's only (the
 * directory and the socket's are its own, not writable by group or
 * others; each file too, no symlink followed), which is the user the
 * programs run as, root for a rootful engine. Nothing of the container's
 * names a file here or goes in one but as part of a key, and a filter
 * read back is validated as seccomp(2) would before the hook sends it.
 * A file is written whole under a temporary name and renamed, so a
 * reader sees an entry whole or not at all.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "profile_cache.h"
#include "oci_spec.h"
#include "profile.h"
#include "c2e.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>

#define CACHE_DIR "compiled"
#define SLOTS 64
#define MAGIC "sfilter-compiled 1\n"
/* A key holds a profile (OCI_PROFILE_MAX); a gate names every syscall. */
#define ENTRY_MAX (OCI_PROFILE_MAX + (4 << 20))

struct head {
	char magic[24];
	uint64_t key_len, val_len;
};

/* fd is the effective user's, and no one else's to write. */
static bool own(int fd)
{
	struct stat st;

	return !fstat(fd, &st) && st.st_uid == geteuid() && !(st.st_mode & 022);
}

/* The cache's directory beside socket (made when create), checked: an fd,
 * or -1. */
static int open_dir(const char *socket, bool create)
{
	char parent[PATH_MAX];
	int pfd, fd;

	if (snprintf(parent, sizeof(parent), "%s", socket) >= (int)sizeof(parent))
		return -1;
	pfd = open(dirname(parent), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		return -1;
	fd = -1;
	if (own(pfd)) {
		fd = openat(pfd, CACHE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT && create && !mkdirat(pfd, CACHE_DIR, 0700))
			fd = openat(pfd, CACHE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	close(pfd);
	if (fd >= 0 && !own(fd)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* The key (malloc'd, *klen bytes), or NULL when opts name no fixed
 * inputs (caps of a task). */
static char *key_of(const char *kind, const struct sf_profile_opts *opts, const char *extra,
		    const char *text, size_t len, size_t *klen)
{
	char inputs[SF_PROFILE_INPUTS_MAX], *k;
	int n;

	if (sf_profile_inputs(opts, inputs, sizeof(inputs)) < 0)
		return NULL;
	/* extra's length: no extra and text can pass for another pair. */
	n = snprintf(NULL, 0, "%s\n%s\n%zu:%s\n", kind, inputs, strlen(extra), extra);
	if (n < 0 || len > ENTRY_MAX || !(k = malloc((size_t)n + 1 + len)))
		return NULL;
	snprintf(k, (size_t)n + 1, "%s\n%s\n%zu:%s\n", kind, inputs, strlen(extra), extra);
	memcpy(k + n, text, len);
	*klen = (size_t)n + len;
	return k;
}

static void slot_name(const char *kind, const char *key, size_t klen, char *out, size_t size)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
	size_t i;

	for (i = 0; i < klen; i++)
		h = (h ^ (unsigned char)key[i]) * 0x100000001b3ULL;
	snprintf(out, size, "%s-%02u", kind, (unsigned int)(h % SLOTS));
}

/* The value stored under key: 0 with *val (malloc'd, NUL after it) and
 * *vlen, or -ENOENT. */
static int get(const char *socket, const char *kind, const char *key, size_t klen, char **val,
	       size_t *vlen)
{
	char name[64], why[128], *buf = NULL;
	struct head h;
	size_t len;
	int dfd = open_dir(socket, false), fd = -1, r = -ENOENT;

	if (dfd < 0)
		return -ENOENT;
	slot_name(kind, key, klen, name, sizeof(name));
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || !own(fd) || oci_slurp_fd(fd, true, ENTRY_MAX, &buf, &len, why, sizeof(why)))
		goto out;
	if (len < sizeof(h))
		goto out;
	memcpy(&h, buf, sizeof(h));
	if (len - sizeof(h) < klen || memcmp(h.magic, MAGIC, sizeof(MAGIC)) ||
	    h.key_len != klen || h.val_len != len - sizeof(h) - klen ||
	    memcmp(buf + sizeof(h), key, klen))
		goto out;
	*vlen = h.val_len;
	*val = malloc(h.val_len + 1);
	if (!*val)
		goto out;
	memcpy(*val, buf + sizeof(h) + klen, h.val_len);
	(*val)[h.val_len] = '\0';
	r = 0;
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	close(dfd);
	return r;
}

static int write_all(int fd, const void *p, size_t n)
{
	ssize_t w;

	while (n) {
		w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p = (const char *)p + w;
		n -= (size_t)w;
	}
	return 0;
}

static void put(const char *socket, const char *kind, const char *key, size_t klen,
		const void *val, size_t vlen)
{
	struct head h = { .key_len = klen, .val_len = vlen };
	char name[64], tmp[96];
	uint64_t rnd = 0;
	int dfd = open_dir(socket, true), fd;

	if (dfd < 0)
		return;
	slot_name(kind, key, klen, name, sizeof(name));
	if (getrandom(&rnd, sizeof(rnd), 0) < 0)
		rnd = (uint64_t)getpid();
	snprintf(tmp, sizeof(tmp), ".%s.%016llx", name, (unsigned long long)rnd);
	memcpy(h.magic, MAGIC, sizeof(MAGIC));
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		bool ok = !write_all(fd, &h, sizeof(h)) && !write_all(fd, key, klen) &&
			  !write_all(fd, val, vlen);

		if (close(fd) || !ok || renameat(dfd, tmp, dfd, name))
			unlinkat(dfd, tmp, 0);
	}
	close(dfd);
}

int pcache_get_filter(const char *socket, const struct sf_profile_opts *opts, const char *text,
		      size_t len, struct sock_filter **insns, size_t *n, unsigned int *flags)
{
	char *key = NULL, *val = NULL;
	struct c2e_error err;
	size_t klen, vlen;
	uint32_t f;
	int r = -ENOENT;

	if (!(key = key_of("filter", opts, "", text, len, &klen)) ||
	    get(socket, "filter", key, klen, &val, &vlen))
		goto out;
	/* The profile's flags, then its program. */
	if (vlen < sizeof(f) + sizeof(**insns) || (vlen - sizeof(f)) % sizeof(**insns))
		goto out;
	memcpy(&f, val, sizeof(f));
	*n = (vlen - sizeof(f)) / sizeof(**insns);
	if (f & ~(uint32_t)(SF_PROFILE_FLAG_TSYNC | SF_PROFILE_FLAG_LOG) || *n > C2E_MAX_INSNS ||
	    !(*insns = malloc(vlen - sizeof(f))))
		goto out;
	memcpy(*insns, val + sizeof(f), vlen - sizeof(f));
	memset(&err, 0, sizeof(err));
	if (c2e_validate_abi(*insns, *n, C2E_ABI_SECCOMP, &err) < 0) {
		free(*insns);
		*insns = NULL;
		goto out;
	}
	*flags = f;
	r = 0;
out:
	free(key);
	free(val);
	return r;
}

void pcache_put_filter(const char *socket, const struct sf_profile_opts *opts, const char *text,
		       size_t len, const struct sock_filter *insns, size_t n, unsigned int flags)
{
	uint32_t f = flags;
	size_t klen;
	char *key = key_of("filter", opts, "", text, len, &klen);
	char *val = key ? malloc(sizeof(f) + n * sizeof(*insns)) : NULL;

	if (val) {
		memcpy(val, &f, sizeof(f));
		memcpy(val + sizeof(f), insns, n * sizeof(*insns));
		put(socket, "filter", key, klen, val, sizeof(f) + n * sizeof(*insns));
	}
	free(val);
	free(key);
}

int pcache_get_gate(const char *socket, const struct sf_profile_opts *opts, const char *listener,
		    const char *text, size_t len, char **json)
{
	size_t klen, vlen;
	char *key = key_of("gate", opts, listener, text, len, &klen);
	int r = key ? get(socket, "gate", key, klen, json, &vlen) : -ENOENT;

	if (!r && strlen(*json) != vlen) {
		free(*json);
		r = -ENOENT;
	}
	free(key);
	return r;
}

void pcache_put_gate(const char *socket, const struct sf_profile_opts *opts, const char *listener,
		     const char *text, size_t len, const char *json)
{
	size_t klen;
	char *key = key_of("gate", opts, listener, text, len, &klen);

	if (key)
		put(socket, "gate", key, klen, json, strlen(json));
	free(key);
}
