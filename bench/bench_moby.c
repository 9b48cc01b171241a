// SPDX-License-Identifier: GPL-2.0-only
/*
 * A seccomp profile as moby hands it to runc (bench_util.h,
 * bench_moby_seccomp()): what Docker's daemon makes of its profile file
 * for one container before runc sees it.
 */
#define _GNU_SOURCE
#include "bench_util.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

static struct json_object *put(struct json_object *o, const char *key, struct json_object *v)
{
	json_object_object_add(o, key, v);
	return v;
}

static bool has_string(struct json_object *a, const char *s)
{
	size_t n = a && json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;

	for (size_t i = 0; i < n; i++)
		if (!strcmp(json_object_get_string(json_object_array_get_idx(a, i)), s))
			return true;
	return false;
}

/* Whether caps ("CHOWN,KILL", no CAP_ prefix) hold cap. */
static bool caps_hold(const char *caps, const char *cap)
{
	size_t len;
	const char *p;

	if (!strncmp(cap, "CAP_", 4))
		cap += 4;
	len = strlen(cap);
	for (p = caps; (p = strstr(p, cap)); p += len)
		if ((p == caps || p[-1] == ',') && (p[len] == ',' || !p[len]))
			return true;
	return false;
}

/* moby's filter of one entry by its includes (all must hold) or excludes
 * (none may): caps, arches (amd64: this bench runs on x86-64) and
 * minKernel against this kernel's major.minor. */
static bool entry_applies(struct json_object *e, bool includes, const char *held_caps)
{
	struct json_object *c, *caps, *arches, *mk;
	int kmaj = 0, kmin = 0, maj, min;
	struct utsname u;
	bool all = true, any = false;
	size_t i, n;

	if (!json_object_object_get_ex(e, includes ? "includes" : "excludes", &c))
		return true;
	if (json_object_object_get_ex(c, "caps", &caps)) {
		n = json_object_array_length(caps);
		for (i = 0; i < n; i++) {
			bool held = caps_hold(held_caps, json_object_get_string(
				json_object_array_get_idx(caps, i)));

			all &= held;
			any |= held;
		}
	}
	if (json_object_object_get_ex(c, "arches", &arches) &&
	    json_object_array_length(arches)) {
		bool native = has_string(arches, "amd64");

		all &= native;
		any |= native;
	}
	if (json_object_object_get_ex(c, "minKernel", &mk) && !uname(&u) &&
	    sscanf(u.release, "%d.%d", &kmaj, &kmin) == 2 &&
	    sscanf(json_object_get_string(mk), "%d.%d", &maj, &min) == 2) {
		bool newer = kmaj > maj || (kmaj == maj && kmin >= min);

		all &= newer;
		any |= newer;
	}
	return includes ? all : !any;
}

struct json_object *bench_moby_seccomp(const char *profile, const char *caps)
{
	static const char *const keep[] = { "defaultAction", "defaultErrnoRet", "flags", NULL };
	static const char *const entry_keep[] = { "names", "action", "args", "errnoRet", NULL };
	struct json_object *p = json_object_from_file(profile), *o, *v, *sys, *out;
	size_t i, n;

	if (!p)
		return NULL;
	o = json_object_new_object();
	for (i = 0; keep[i]; i++)
		if (json_object_object_get_ex(p, keep[i], &v))
			json_object_object_add(o, keep[i], json_object_get(v));
	if (json_object_object_get_ex(p, "archMap", &v))
		for (i = 0; i < json_object_array_length(v); i++) {
			struct json_object *m = json_object_array_get_idx(v, i), *a, *sub;

			if (!json_object_object_get_ex(m, "architecture", &a) ||
			    strcmp(json_object_get_string(a), "SCMP_ARCH_X86_64"))
				continue;
			out = put(o, "architectures", json_object_new_array());
			json_object_array_add(out, json_object_get(a));
			if (json_object_object_get_ex(m, "subArchitectures", &sub))
				for (n = 0; n < json_object_array_length(sub); n++)
					json_object_array_add(out, json_object_get(
						json_object_array_get_idx(sub, n)));
		}
	out = put(o, "syscalls", json_object_new_array());
	if (json_object_object_get_ex(p, "syscalls", &sys))
		for (i = 0; i < json_object_array_length(sys); i++) {
			struct json_object *e = json_object_array_get_idx(sys, i), *k;

			if (!entry_applies(e, true, caps) || !entry_applies(e, false, caps))
				continue;
			k = json_object_new_object();
			for (n = 0; entry_keep[n]; n++)
				if (json_object_object_get_ex(e, entry_keep[n], &v))
					json_object_object_add(k, entry_keep[n],
							       json_object_get(v));
			json_object_array_add(out, k);
		}
	json_object_put(p);
	return o;
}
