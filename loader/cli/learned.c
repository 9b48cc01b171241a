// SPDX-License-Identifier: GPL-2.0-only
/*
 * A learned profile (learned.h): the (arch, syscall) pairs seen as an OCI
 * seccomp profile (runtime-spec linux.seccomp, the JSON moby and
 * containers/common read): "defaultAction", the arches seen as
 * SCMP_ARCH_*, and one SCMP_ACT_ALLOW rule naming every syscall seen.
 *
 * One rule allows every name seen, on every arch listed: a name seen
 * through one ABI only is allowed through the others too. The format has
 * no per-ABI rule: moby's "includes": {"arches"} names the host's
 * architecture (amd64), not the ABI of a call, so sfilter's profile
 * compiler, runc and Podman all read it that way.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "learned.h"
#include "c2e.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <seccomp.h>

#define ARCH_X86_64 0x1 /* arch bits of a name */
#define ARCH_I386   0x2
#define ARCH_X32    0x4

static const struct { unsigned bit; uint32_t scmp; const char *name; } arches[] = {
	{ ARCH_X86_64, SCMP_ARCH_X86_64, "SCMP_ARCH_X86_64" },
	{ ARCH_I386, SCMP_ARCH_X86, "SCMP_ARCH_X86" },
	{ ARCH_X32, SCMP_ARCH_X32, "SCMP_ARCH_X32" },
};
#define N_ARCHES (sizeof(arches) / sizeof(arches[0]))

struct oci_name { char *name; unsigned arches; };

/* The arch bit of a seen call: x32 calls carry the x32 bit in nr. */
static unsigned arch_bit(const struct learned_call *s)
{
	if (s->arch == C2E_AUDIT_ARCH_I386)
		return ARCH_I386;
	return (s->nr & 0x40000000) ? ARCH_X32 : ARCH_X86_64;
}

/* SCMP_ACT_* for an sfilter action (its data: errnoRet, for ERRNO and
 * TRACE as runc reads it); NULL when OCI has none. */
static const char *oci_action(uint32_t ret, bool *with_data)
{
	*with_data = false;
	switch (ret & C2E_RET_ACTION_FULL) {
	case SECCOMP_RET_KILL_PROCESS: return "SCMP_ACT_KILL_PROCESS";
	case SECCOMP_RET_KILL_THREAD: return "SCMP_ACT_KILL_THREAD";
	case SECCOMP_RET_TRAP: return "SCMP_ACT_TRAP";
	case SECCOMP_RET_ERRNO: *with_data = true; return "SCMP_ACT_ERRNO";
	case SECCOMP_RET_TRACE: *with_data = true; return "SCMP_ACT_TRACE";
	case SECCOMP_RET_USER_NOTIF: return "SCMP_ACT_NOTIFY";
	case SECCOMP_RET_LOG: return "SCMP_ACT_LOG";
	case SECCOMP_RET_ALLOW: return "SCMP_ACT_ALLOW";
	default: return NULL;
	}
}

/* Every name seen, with the arches it was seen on (libseccomp's names for
 * each arch: a number means another call on another arch). */
static struct oci_name *oci_names(const struct learned_call *s, size_t n, size_t *count,
				  unsigned *all, size_t *unnamed)
{
	struct oci_name *names = calloc(n ? n : 1, sizeof(*names));
	size_t i, k;

	*count = 0;
	*all = 0;
	*unnamed = 0;
	if (!names)
		return NULL;
	for (i = 0; i < n; i++) {
		unsigned bit = arch_bit(&s[i]);
		char *name = NULL;

		for (k = 0; k < N_ARCHES; k++)
			if (arches[k].bit == bit)
				name = seccomp_syscall_resolve_num_arch(arches[k].scmp, s[i].nr);
		*all |= bit;
		if (!name) {
			(*unnamed)++;
			continue;
		}
		for (k = 0; k < *count && strcmp(names[k].name, name); k++)
			;
		if (k < *count) {
			free(name);
		} else {
			names[k].name = name;
			(*count)++;
		}
		names[k].arches |= bit;
	}
	return names;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct oci_name *)a)->name, ((const struct oci_name *)b)->name);
}

/* One SCMP_ACT_ALLOW rule for every name seen. */
static void oci_rule(struct json_object *rules, const struct oci_name *names, size_t n)
{
	struct json_object *rule, *list = json_object_new_array();
	size_t i;

	for (i = 0; i < n; i++)
		json_object_array_add(list, json_object_new_string(names[i].name));
	rule = json_object_new_object();
	json_object_object_add(rule, "names", list);
	json_object_object_add(rule, "action", json_object_new_string("SCMP_ACT_ALLOW"));
	json_object_array_add(rules, rule);
}

struct json_object *learned_profile(const struct learned_call *s, size_t n, uint32_t dflt,
				    size_t *unnamed)
{
	struct json_object *o = json_object_new_object(), *arr = json_object_new_array();
	struct json_object *rules = json_object_new_array();
	const char *act;
	struct oci_name *names;
	unsigned all;
	size_t count, i;
	bool with_data;

	act = oci_action(dflt, &with_data);
	names = oci_names(s, n, &count, &all, unnamed);
	if (!act || !names) {
		free(names);
		json_object_put(o);
		json_object_put(arr);
		json_object_put(rules);
		errno = act ? ENOMEM : EINVAL;
		return NULL;
	}
	json_object_object_add(o, "defaultAction", json_object_new_string(act));
	if (with_data)
		json_object_object_add(o, "defaultErrnoRet",
				       json_object_new_int((int)(dflt & C2E_RET_DATA)));
	qsort(names, count, sizeof(*names), cmp_name);
	for (i = 0; i < N_ARCHES; i++)
		if (all & arches[i].bit)
			json_object_array_add(arr, json_object_new_string(arches[i].name));
	json_object_object_add(o, "architectures", arr);
	oci_rule(rules, names, count);
	json_object_object_add(o, "syscalls", rules);
	for (i = 0; i < count; i++)
		free(names[i].name);
	free(names);
	return o;
}
