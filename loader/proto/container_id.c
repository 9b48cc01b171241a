// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Container ids from /proc/PID/cgroup (container_id.h). A pure function of
 * the text. The shapes are the cgroups the runtimes make:
 *
 *   docker, cgroupfs driver    /docker/<id>
 *   docker, systemd driver     /system.slice/docker-<id>.scope
 *   kubelet, cgroupfs driver   /kubepods/burstable/pod<uid>/<id>
 *   kubelet, systemd driver    /kubepods.slice/kubepods-burstable.slice/
 *                              kubepods-burstable-pod<uid>.slice/
 *                              cri-containerd-<id>.scope (CRI-O: crio-<id>.scope)
 *   podman                     /machine.slice/libpod-<id>.scope, and with crun
 *                              .../libpod-<id>.scope/container
 *   runc's "slice:prefix:name" cgroupsPath kept whole by a cgroupfs driver
 *                              /...pod<uid>.slice:cri-containerd:<id>
 *
 * CRI-O and podman put each container's monitor, conmon, beside it in
 * crio-conmon-<id>.scope or libpod-conmon-<id>.scope: that process is not
 * in the container, whose id the scope carries. A process below its
 * container's cgroup (podman's /container, a container's own sub-cgroups)
 * is in that container; one in a container nested in another (kind,
 * minikube, docker in docker) is in the innermost: hence the deepest id.
 * On a hybrid host the v2 line says "/" or names the unit the runtime's
 * shim runs in ("0::/system.slice/containerd.service") while the v1 lines
 * name the container: hence the v1 lines when the v2 one names none.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "container_id.h"

#include <stddef.h>
#include <string.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const char *const runtime_prefixes[] = {
	"docker-", "cri-containerd-", "crio-", "libpod-", "containerd-",
};
static const char *const monitor_prefixes[] = { "crio-conmon-", "libpod-conmon-" };

/* The length of the field at s (up to end) before the next sep; *next: the
 * field after that sep, or NULL when this one is the last. */
static size_t field(const char *s, const char *end, char sep, const char **next)
{
	const char *at = memchr(s, sep, (size_t)(end - s));

	*next = at ? at + 1 : NULL;
	return (size_t)((at ? at : end) - s);
}

static bool starts_with(const char *s, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);

	return n >= k && memcmp(s, prefix, k) == 0;
}

/* Whether the path component s (n bytes) is a container's cgroup; its id
 * into id when it is (id is left alone otherwise). */
static bool component_id(const char *s, size_t n, char *id)
{
	const char *colon = memrchr(s, ':', n);
	size_t i;

	if (colon) {
		n -= (size_t)(colon + 1 - s);
		s = colon + 1;
	}
	for (i = 0; i < ARRAY_SIZE(monitor_prefixes); i++)
		if (starts_with(s, n, monitor_prefixes[i]))
			return false;
	for (i = 0; i < ARRAY_SIZE(runtime_prefixes); i++) {
		if (starts_with(s, n, runtime_prefixes[i])) {
			s += strlen(runtime_prefixes[i]);
			n -= strlen(runtime_prefixes[i]);
			break;
		}
	}
	if (n > 6 && memcmp(s + n - 6, ".scope", 6) == 0)
		n -= 6;
	if (n != SF_CONTAINER_ID_LEN)
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	memcpy(id, s, n);
	id[n] = '\0';
	return true;
}

/* Whether a component of the cgroup path p (n bytes) is a container's;
 * the deepest one's id into id. */
static bool path_id(const char *p, size_t n, char *id)
{
	const char *end = p + n, *c, *next;
	bool found = false;

	for (c = p; c; c = next)
		found |= component_id(c, field(c, end, '/', &next), id);
	return found;
}

/* Whether the comma-separated list (n bytes) holds item. */
static bool has_item(const char *list, size_t n, const char *item)
{
	const char *end = list + n, *c, *next;
	size_t len, k = strlen(item);

	for (c = list; c; c = next) {
		len = field(c, end, ',', &next);
		if (len == k && memcmp(c, item, k) == 0)
			return true;
	}
	return false;
}

enum line_kind { LINE_V2, LINE_V1_SYSTEMD, LINE_V1, LINE_OTHER };

/* Which hierarchy the line l (n bytes: "ID:CONTROLLERS:PATH", the path
 * free to hold colons) is of; its path into *path and *plen. */
static enum line_kind line_kind(const char *l, size_t n, const char **path, size_t *plen)
{
	const char *end = l + n, *ctl, *p;
	size_t hlen = field(l, end, ':', &ctl), clen;

	if (!ctl)
		return LINE_OTHER;
	clen = field(ctl, end, ':', &p);
	if (!p)
		return LINE_OTHER;
	*path = p;
	*plen = (size_t)(end - p);
	if (hlen == 1 && l[0] == '0' && clen == 0)
		return LINE_V2;
	return has_item(ctl, clen, "name=systemd") ? LINE_V1_SYSTEMD : LINE_V1;
}

bool sf_container_id(const char *cgroup_text, char id[SF_CONTAINER_ID_LEN + 1])
{
	const char *end = cgroup_text + strlen(cgroup_text), *l, *next, *path;
	enum line_kind want;
	size_t n, plen;

	id[0] = '\0';
	for (want = LINE_V2; want < LINE_OTHER; want++) {
		for (l = cgroup_text; l; l = next) {
			n = field(l, end, '\n', &next);
			if (line_kind(l, n, &path, &plen) == want && path_id(path, plen, id))
				return true;
		}
	}
	return false;
}
