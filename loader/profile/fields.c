// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The words of a profile: typed JSON fields, each error naming its JSON
 * path, and the names of actions, operators, architectures, flags and
 * errnos with the values runc gives them.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "pf_internal.h"
#include "c2e.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/seccomp.h>

/* "path: why" as c's error (-EINVAL), or as a warning of c->out (0 or
 * -ENOMEM). */
static int report(struct pf *c, bool warn, const char *path, const char *fmt, va_list ap)
{
	char why[256];

	vsnprintf(why, sizeof(why), fmt, ap);
	if (warn)
		return pf_append(&c->out->warnings, &c->out->n_warnings, "%s: %s", path, why);
	snprintf(c->err->path, sizeof(c->err->path), "%s", path);
	snprintf(c->err->msg, sizeof(c->err->msg), "%s%s%s", path, path[0] ? ": " : "", why);
	return -EINVAL;
}

int pf_fail(struct pf *c, const char *path, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = report(c, false, path, fmt, ap);
	va_end(ap);
	return r;
}

int pf_refuse(struct pf *c, const char *path, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = report(c, c->lenient, path, fmt, ap);
	va_end(ap);
	return r;
}

void pf_path(char *out, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out, size, fmt, ap);
	va_end(ap);
}

int pf_append(char ***list, size_t *n, const char *fmt, ...)
{
	char **w = realloc(*list, (*n + 1) * sizeof(*w));
	va_list ap;
	int r;

	if (!w)
		return -ENOMEM;
	*list = w;
	va_start(ap, fmt);
	r = vasprintf(&w[*n], fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	(*n)++;
	return 0;
}

int pf_warn(struct pf *c, const char *path, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = report(c, true, path, fmt, ap);
	va_end(ap);
	return r;
}

static const char *type_name(enum json_type t)
{
	switch (t) {
	case json_type_boolean: return "a boolean";
	case json_type_double: return "a fractional number";
	case json_type_int: return "an integer";
	case json_type_object: return "an object";
	case json_type_array: return "an array";
	case json_type_string: return "a string";
	default: return "null";
	}
}

int pf_field(struct pf *c, struct json_object *obj, const char *path, const char *key,
	     enum json_type t, struct json_object **v)
{
	char p[128];

	*v = NULL;
	if (!json_object_object_get_ex(obj, key, v) || !*v)
		return 0;
	if (json_object_get_type(*v) == t)
		return 0;
	pf_path(p, sizeof(p), "%s%s%s", path, path[0] ? "." : "", key);
	return pf_fail(c, p, "expected %s, got %s", type_name(t),
		       type_name(json_object_get_type(*v)));
}

int pf_uint(struct pf *c, struct json_object *v, const char *path, uint64_t max,
	    uint64_t *out)
{
	/* json-c keeps integers above INT64_MAX as unsigned; a negative one
	 * reads back as 0 there. */
	if (json_object_get_type(v) != json_type_int)
		return pf_fail(c, path, "expected an unsigned integer, got %s",
			       type_name(json_object_get_type(v)));
	if (json_object_get_int64(v) < 0)
		return pf_fail(c, path, "expected an unsigned integer, got %lld",
			       (long long)json_object_get_int64(v));
	*out = json_object_get_uint64(v);
	if (*out > max)
		return pf_fail(c, path, "%llu is above %llu", (unsigned long long)*out,
			       (unsigned long long)max);
	return 0;
}

int pf_string_at(struct pf *c, struct json_object *a, size_t i, const char *path,
		 const char **s)
{
	struct json_object *v = json_object_array_get_idx(a, i);
	char p[128];

	pf_path(p, sizeof(p), "%s[%zu]", path, i);
	if (!v || json_object_get_type(v) != json_type_string)
		return pf_fail(c, p, "expected a string, got %s",
			       type_name(v ? json_object_get_type(v) : json_type_null));
	*s = json_object_get_string(v);
	return 0;
}

/* runc: SCMP_ACT_KILL is libseccomp's ActKillThread. */
static const struct { const char *name; uint32_t act; bool errno_; } acts[] = {
	{ "SCMP_ACT_KILL", SCMP_ACT_KILL_THREAD, false },
	{ "SCMP_ACT_KILL_THREAD", SCMP_ACT_KILL_THREAD, false },
	{ "SCMP_ACT_KILL_PROCESS", SCMP_ACT_KILL_PROCESS, false },
	{ "SCMP_ACT_TRAP", SCMP_ACT_TRAP, false },
	{ "SCMP_ACT_ERRNO", SCMP_ACT_ERRNO(0), true },
	{ "SCMP_ACT_TRACE", SCMP_ACT_TRACE(0), true },
	{ "SCMP_ACT_ALLOW", SCMP_ACT_ALLOW, false },
	{ "SCMP_ACT_LOG", SCMP_ACT_LOG, false },
	{ "SCMP_ACT_NOTIFY", SCMP_ACT_NOTIFY, false },
};

int pf_action(struct pf *c, const char *name, const char *path, uint32_t *act,
	      bool *takes_errno)
{
	size_t i;

	for (i = 0; i < sizeof(acts) / sizeof(acts[0]); i++)
		if (strcmp(name, acts[i].name) == 0 &&
		    (acts[i].act != SCMP_ACT_NOTIFY || c->gate)) {
			*act = acts[i].act;
			*takes_errno = acts[i].errno_;
			return 0;
		}
	if (strcmp(name, "SCMP_ACT_NOTIFY") == 0)
		return pf_fail(c, path, "SCMP_ACT_NOTIFY is not supported: sfilter has no "
			       "user-space notifier (seccomp_unotify) to hand the call to");
	return pf_fail(c, path, "unknown action \"%s\"", name);
}

static const struct { const char *name; enum scmp_compare op; } ops[] = {
		{ "SCMP_CMP_NE", SCMP_CMP_NE }, { "SCMP_CMP_LT", SCMP_CMP_LT },
		{ "SCMP_CMP_LE", SCMP_CMP_LE }, { "SCMP_CMP_EQ", SCMP_CMP_EQ },
		{ "SCMP_CMP_GE", SCMP_CMP_GE }, { "SCMP_CMP_GT", SCMP_CMP_GT },
		{ "SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ },
};

int pf_op(struct pf *c, const char *name, const char *path, enum scmp_compare *op)
{
	size_t i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strcmp(name, ops[i].name) == 0) {
			*op = ops[i].op;
			return 0;
		}
	return pf_fail(c, path, "unknown op \"%s\"", name);
}

int pf_arch(struct pf *c, const char *name, const char *path, uint32_t *arch)
{
	char lower[32];
	size_t i;

	/* libseccomp's own names are the constants' tails in lower case
	 * (SCMP_ARCH_MIPSEL64N32 is "mipsel64n32"). */
	if (strncmp(name, "SCMP_ARCH_", 10) == 0 && strlen(name + 10) < sizeof(lower)) {
		for (i = 0; name[10 + i]; i++)
			lower[i] = (char)tolower((unsigned char)name[10 + i]);
		lower[i] = '\0';
		*arch = seccomp_arch_resolve_name(lower);
		if (*arch && strcmp(lower, "native") != 0)
			return 0;
	}
	return pf_fail(c, path, "unknown architecture \"%s\"", name);
}

int pf_flag(struct pf *c, const char *name, const char *path, unsigned int *flag)
{
	if (strcmp(name, "SECCOMP_FILTER_FLAG_TSYNC") == 0) {
		*flag = SF_PROFILE_FLAG_TSYNC;
		return 0;
	}
	if (strcmp(name, "SECCOMP_FILTER_FLAG_LOG") == 0) {
		*flag = SF_PROFILE_FLAG_LOG;
		return 0;
	}
	if (strcmp(name, "SECCOMP_FILTER_FLAG_SPEC_ALLOW") == 0)
		return pf_fail(c, path, "%s cannot be honoured: sfilter does not switch off "
			       "the kernel's speculative store bypass mitigation", name);
	if (strcmp(name, "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV") == 0 ||
	    strcmp(name, "SECCOMP_FILTER_FLAG_NEW_LISTENER") == 0)
		return pf_fail(c, path, "%s cannot be honoured: sfilter has no user-space "
			       "notifier (SCMP_ACT_NOTIFY)", name);
	return pf_fail(c, path, "unknown flag \"%s\"", name);
}

int pf_errno_name(struct pf *c, const char *name, const char *path, uint64_t *e)
{
	int i;

	for (i = 1; i <= C2E_MAX_ERRNO; i++) {
		const char *n = strerrorname_np(i);

		if (n && strcmp(n, name) == 0) {
			*e = (uint64_t)i;
			return 0;
		}
	}
	return pf_fail(c, path, "unknown errno \"%s\"", name);
}

unsigned int pf_act_bit(uint32_t ret)
{
	switch (ret & SECCOMP_RET_ACTION_FULL) {
	case SECCOMP_RET_KILL_PROCESS: return SF_PROFILE_ACT_KILL_PROCESS;
	case SECCOMP_RET_KILL_THREAD: return SF_PROFILE_ACT_KILL_THREAD;
	case SECCOMP_RET_TRAP: return SF_PROFILE_ACT_TRAP;
	case SECCOMP_RET_ERRNO: return SF_PROFILE_ACT_ERRNO;
	case SECCOMP_RET_TRACE: return SF_PROFILE_ACT_TRACE;
	case SECCOMP_RET_LOG: return SF_PROFILE_ACT_LOG;
	case SECCOMP_RET_USER_NOTIF: return SF_PROFILE_ACT_NOTIFY;
	default: return SF_PROFILE_ACT_ALLOW;
	}
}

const char *pf_action_name(uint32_t act)
{
	size_t i;

	/* From the end: SCMP_ACT_KILL_THREAD rather than runc's alias. */
	for (i = sizeof(acts) / sizeof(acts[0]); i-- > 0;)
		if ((acts[i].act & SECCOMP_RET_ACTION_FULL) == (act & SECCOMP_RET_ACTION_FULL))
			return acts[i].name;
	return NULL;
}

const char *pf_op_name(enum scmp_compare op)
{
	size_t i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (ops[i].op == op)
			return ops[i].name;
	return NULL;
}
