// SPDX-License-Identifier: GPL-2.0-only
/*
 * An evaluator of container seccomp profiles written from the JSON, the
 * runtime-spec and moby's filtering, without the compiler's code: what a
 * profile's rules say a call gets (tests/lib/profeval.h).
 */
#define _GNU_SOURCE
#include "profeval.h"
#include "c2e.h"

#include <stdlib.h>
#include <string.h>
#include <linux/seccomp.h>
#include <seccomp.h>

const struct pe_arch pe_arches[3] = {
	{ "x86_64", C2E_AUDIT_ARCH_X86_64, SCMP_ARCH_X86_64, 0 },
	{ "i386", C2E_AUDIT_ARCH_I386, SCMP_ARCH_X86, 0 },
	{ "x32", C2E_AUDIT_ARCH_X86_64, SCMP_ARCH_X32, C2E_X32_SYSCALL_BIT },
};

bool pe_in_list(struct json_object *a, const char *s)
{
	size_t i;

	for (i = 0; a && i < json_object_array_length(a); i++)
		if (!strcmp(json_object_get_string(json_object_array_get_idx(a, i)), s))
			return true;
	return false;
}

static bool has_cap(struct json_object *a, size_t i, uint64_t caps)
{
	/* capability.h's numbers, in order. */
	static const char *const names[] = { "CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH",
		"FOWNER", "FSETID", "KILL", "SETGID", "SETUID", "SETPCAP", "LINUX_IMMUTABLE",
		"NET_BIND_SERVICE", "NET_BROADCAST", "NET_ADMIN", "NET_RAW", "IPC_LOCK",
		"IPC_OWNER", "SYS_MODULE", "SYS_RAWIO", "SYS_CHROOT", "SYS_PTRACE", "SYS_PACCT",
		"SYS_ADMIN", "SYS_BOOT", "SYS_NICE", "SYS_RESOURCE", "SYS_TIME",
		"SYS_TTY_CONFIG", "MKNOD", "LEASE", "AUDIT_WRITE", "AUDIT_CONTROL", "SETFCAP",
		"MAC_OVERRIDE", "MAC_ADMIN", "SYSLOG", "WAKE_ALARM", "BLOCK_SUSPEND",
		"AUDIT_READ", "PERFMON", "BPF", "CHECKPOINT_RESTORE" };
	const char *s = json_object_get_string(json_object_array_get_idx(a, i));
	size_t k;

	if (!s || strncmp(s, "CAP_", 4))
		return false;
	for (k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if (!strcmp(s + 4, names[k]))
			return caps >> k & 1;
	return false;
}

/* moby: includes needs all its caps and the native arch; an excludes
 * cap or arch skips. (Podman's profile sets no minKernel.) */
bool pe_applies(struct json_object *e, uint64_t caps)
{
	struct json_object *inc = NULL, *exc = NULL, *a;
	size_t i;

	json_object_object_get_ex(e, "includes", &inc);
	json_object_object_get_ex(e, "excludes", &exc);
	if (inc && json_object_object_get_ex(inc, "caps", &a))
		for (i = 0; i < json_object_array_length(a); i++)
			if (!has_cap(a, i, caps))
				return false;
	if (inc && json_object_object_get_ex(inc, "arches", &a) &&
	    json_object_array_length(a) && !pe_in_list(a, "amd64"))
		return false;
	if (exc && json_object_object_get_ex(exc, "caps", &a))
		for (i = 0; i < json_object_array_length(a); i++)
			if (has_cap(a, i, caps))
				return false;
	if (exc && json_object_object_get_ex(exc, "arches", &a) && pe_in_list(a, "amd64"))
		return false;
	return true;
}

uint64_t pe_jget(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) ? json_object_get_uint64(v) : 0;
}

static bool cmp(const char *op, uint64_t arg, uint64_t v, uint64_t v2)
{
	if (!strcmp(op, "SCMP_CMP_EQ")) return arg == v;
	if (!strcmp(op, "SCMP_CMP_NE")) return arg != v;
	if (!strcmp(op, "SCMP_CMP_LT")) return arg < v;
	if (!strcmp(op, "SCMP_CMP_LE")) return arg <= v;
	if (!strcmp(op, "SCMP_CMP_GT")) return arg > v;
	if (!strcmp(op, "SCMP_CMP_GE")) return arg >= v;
	return (arg & v) == v2; /* MASKED_EQ: value is the mask */
}

/* runc: args on distinct indexes must all match; when two share an
 * index, any one matching is enough. */
bool pe_args_match(struct json_object *args, const uint64_t *a)
{
	size_t i, n = args ? json_object_array_length(args) : 0;
	unsigned int seen = 0;
	bool shared = false, all = true, any = false;

	for (i = 0; i < n; i++) {
		struct json_object *c = json_object_array_get_idx(args, i), *op;
		unsigned int idx = (unsigned int)pe_jget(c, "index");
		bool m;

		json_object_object_get_ex(c, "op", &op);
		m = cmp(json_object_get_string(op), a[idx], pe_jget(c, "value"), pe_jget(c, "valueTwo"));
		shared |= seen >> idx & 1;
		seen |= 1U << idx;
		all &= m;
		any |= m;
	}
	return n == 0 || (shared ? any : all);
}

uint32_t pe_action_value(struct json_object *e, const char *key, const char *ekey)
{
	struct json_object *v;
	const char *s = json_object_object_get_ex(e, key, &v) ? json_object_get_string(v) : "";
	uint32_t err = json_object_object_get_ex(e, ekey, &v) ? (uint32_t)json_object_get_int(v) : 1;

	if (!strcmp(s, "SCMP_ACT_ALLOW")) return SECCOMP_RET_ALLOW;
	if (!strcmp(s, "SCMP_ACT_ERRNO")) return SECCOMP_RET_ERRNO | err;
	if (!strcmp(s, "SCMP_ACT_KILL_PROCESS")) return SECCOMP_RET_KILL_PROCESS;
	if (!strcmp(s, "SCMP_ACT_LOG")) return SECCOMP_RET_LOG;
	return SECCOMP_RET_KILL_THREAD;
}

/* What the profile says for name with args a. libseccomp keeps the first
 * of two unconditional rules for one syscall (Podman's profile allows
 * setns for everyone, then refuses it without CAP_SYS_ADMIN: allowed).
 * *overlap when conditional rules with different actions match, or one
 * that differs from an unconditional rule: the evaluator would guess. */
uint32_t pe_expected(struct json_object *prof, const char *name, const uint64_t *a,
			 uint64_t caps, bool *overlap)
{
	struct json_object *calls;
	uint32_t dflt = pe_action_value(prof, "defaultAction", "defaultErrnoRet"), got = dflt;
	uint32_t uncond = 0;
	bool found = false, have_uncond = false;
	size_t i;

	*overlap = false;
	if (!name || !json_object_object_get_ex(prof, "syscalls", &calls))
		return dflt;
	for (i = 0; i < json_object_array_length(calls); i++) {
		struct json_object *e = json_object_array_get_idx(calls, i), *names, *args = NULL;
		uint32_t act = pe_action_value(e, "action", "errnoRet");

		json_object_object_get_ex(e, "names", &names);
		json_object_object_get_ex(e, "args", &args);
		if (!pe_in_list(names, name) || !pe_applies(e, caps) || act == dflt ||
		    !pe_args_match(args, a))
			continue;
		if (!args || !json_object_array_length(args)) {
			if (!have_uncond)
				uncond = act;
			have_uncond = true;
			continue;
		}
		if (found && act != got)
			*overlap = true;
		found = true;
		got = act;
	}
	if (have_uncond && found && got != uncond)
		*overlap = true;
	return have_uncond ? uncond : got;
}

/* Argument vectors for name: zeros, each condition's value and its
 * neighbours alone, and every entry's values at once with each varied. */
size_t pe_vectors(struct json_object *prof, const char *name, uint64_t v[][6], bool arg32)
{
	struct json_object *calls;
	size_t n = 1, i, j, k;

	memset(v, 0, sizeof(uint64_t) * 6 * MAX_VECS);
	if (!name || !json_object_object_get_ex(prof, "syscalls", &calls))
		return n;
	for (i = 0; i < json_object_array_length(calls); i++) {
		struct json_object *e = json_object_array_get_idx(calls, i), *names, *args;
		uint64_t base[6] = { 0 };

		json_object_object_get_ex(e, "names", &names);
		if (!pe_in_list(names, name) || !json_object_object_get_ex(e, "args", &args) || !args)
			continue;
		for (j = 0; j < json_object_array_length(args); j++) {
			struct json_object *c = json_object_array_get_idx(args, j);

			base[pe_jget(c, "index")] = pe_jget(c, "value");
		}
		for (j = 0; j < json_object_array_length(args) && n + 8 <= MAX_VECS; j++) {
			struct json_object *c = json_object_array_get_idx(args, j);
			unsigned int idx = (unsigned int)pe_jget(c, "index");
			uint64_t val = pe_jget(c, "value"), two = pe_jget(c, "valueTwo");
			uint64_t alts[] = { val - 1, val, val + 1, val | two, val & ~two, two };

			for (k = 0; k < 6; k++) {
				memcpy(v[n], base, sizeof(base));
				v[n++][idx] = alts[k];
			}
			memset(v[n], 0, sizeof(base));
			v[n++][idx] = val;
		}
	}
	for (i = 0; arg32 && i < n; i++)
		for (j = 0; j < 6; j++)
			v[i][j] &= 0xffffffffULL;
	return n;
}
