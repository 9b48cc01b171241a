// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Runtime events as JSON (event_json.h): field names and values are the
 * log format sfctl parses, so they change only together with it.
 */
#include "event_json.h"
#include "sfilter.h" /* struct sf_event */
#include "c2e.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include <seccomp.h>

static const char *taken_name(unsigned int t)
{
	switch (t) {
	case SF_TAKEN_KILLED: return "killed";
	case SF_TAKEN_LOGGED: return "logged";
	case SF_TAKEN_DENIED: return "denied";
	case SF_TAKEN_FALLBACK_KILLED: return "fallback-killed";
	case SF_TAKEN_FALLBACK_LOGGED: return "fallback-logged";
	case SF_TAKEN_COMPLAIN: return "complain";
	case SF_TAKEN_SHADOW: return "shadow";
	case SF_TAKEN_TRAPPED: return "trapped";
	default: return "none";
	}
}

/* "ERRNO(1)", "ALLOW": a verdict as the policy text writes it. */
static struct json_object *verdict_json(uint32_t ret)
{
	char buf[64];
	const char *sp;

	c2e_verdict_str(ret, buf, sizeof(buf));
	sp = strchr(buf, ' ');
	return json_object_new_string(sp ? sp + 1 : buf);
}

/* A shadow filter's event: what it would have done (and by which ret),
 * beside what was enforced. */
static void add_shadow(struct json_object *o, const struct sf_event *ev)
{
	char tmp[16];

	json_object_object_add(o, "would", verdict_json(ev->ret));
	if (ev->insn != SF_INSN_NONE)
		json_object_object_add(o, "insn", json_object_new_int64(ev->insn));
	if (ev->repeat)
		return; /* per call: unknown for calls no event carried */
	json_object_object_add(o, "enforced", verdict_json(ev->enforced));
	snprintf(tmp, sizeof(tmp), "0x%08x", ev->enforced);
	json_object_object_add(o, "enforced_ret", json_object_new_string(tmp));
}

char *sf_event_syscall_name(const char *arch, int nr)
{
	uint32_t scmp;

	if (!strcmp(arch, "x86_64") && !(nr & C2E_X32_SYSCALL_BIT))
		scmp = SCMP_ARCH_X86_64;
	else if (!strcmp(arch, "x32") && (nr & C2E_X32_SYSCALL_BIT))
		scmp = SCMP_ARCH_X32;
	else if (!strcmp(arch, "i386"))
		scmp = SCMP_ARCH_X86;
	else
		return NULL;
	return seccomp_syscall_resolve_num_arch(scmp, nr);
}

int sf_event_to_json(const struct sf_event *ev, char *buf, size_t size)
{
	struct json_object *o = json_object_new_object(), *args;
	char comm[17], tmp[32];
	const char *name, *s;
	uint32_t action = c2e_effective_action(ev->ret);
	char *sysname = NULL;
	size_t len;
	int i, nr = ev->nr;

	if (!o)
		return -ENOMEM;
	memcpy(comm, ev->comm, 16);
	comm[16] = 0;
	json_object_object_add(o, "time_ns", json_object_new_int64((int64_t)ev->time_ns));
	json_object_object_add(o, "pid", json_object_new_int(ev->pid));
	if (!ev->repeat)
		json_object_object_add(o, "tid", json_object_new_int(ev->tid));
	json_object_object_add(o, "uid", json_object_new_int64(ev->uid));
	/* Which process of that pid, and which of its images: a reused pid
	 * has another start, an execve another exec id. */
	json_object_object_add(o, "start_ns", json_object_new_uint64(ev->start_ns));
	if (!ev->repeat)
		json_object_object_add(o, "exec_id", json_object_new_uint64(ev->exec_id));
	json_object_object_add(o, "account", json_object_new_int64(ev->account));
	json_object_object_add(o, "comm", json_object_new_string(comm));
	json_object_object_add(o, "nr", json_object_new_int(ev->nr));
	if (ev->arch == C2E_AUDIT_ARCH_I386)
		s = "i386";
	else if (ev->nr & C2E_X32_SYSCALL_BIT)
		s = "x32";
	else
		s = "x86_64";
	json_object_object_add(o, "arch", json_object_new_string(s));
	sysname = sf_event_syscall_name(s, nr);
	if (sysname)
		json_object_object_add(o, "syscall", json_object_new_string(sysname));
	free(sysname);
	/* A repeat event stands for calls no event carried: their arguments
	 * and where they were made are not known. */
	if (!ev->repeat) {
		args = json_object_new_array();
		for (i = 0; i < 6; i++) {
			snprintf(tmp, sizeof(tmp), "0x%llx", (unsigned long long)ev->args[i]);
			json_object_array_add(args, json_object_new_string(tmp));
		}
		json_object_object_add(o, "args", args);
		snprintf(tmp, sizeof(tmp), "0x%llx", (unsigned long long)ev->ip);
		json_object_object_add(o, "ip", json_object_new_string(tmp));
	}
	snprintf(tmp, sizeof(tmp), "0x%08x", ev->ret);
	json_object_object_add(o, "ret", json_object_new_string(tmp));
	name = c2e_action_name(action);
	json_object_object_add(o, "action", json_object_new_string(name ? name : "KILL_PROCESS"));
	json_object_object_add(o, "data", json_object_new_int(ev->ret & 0xffff));
	json_object_object_add(o, "filter", json_object_new_int64(ev->filter_id));
	json_object_object_add(o, "taken", json_object_new_string(taken_name(ev->taken)));
	json_object_object_add(o, "tier", json_object_new_string(
		ev->tier == SF_BPF_TIER_LSM ? "lsm" :
		ev->tier == SF_BPF_TIER_GATE ? "gate" : "tracepoint"));
	if (ev->err)
		json_object_object_add(o, "errno", json_object_new_int(ev->err));
	if (ev->signal)
		json_object_object_add(o, "signal", json_object_new_int(ev->signal));
	if (ev->taken == SF_TAKEN_SHADOW)
		add_shadow(o, ev);
	/* Folded in the kernel: the calls this line stands for (0: a repeat
	 * event or a racing CPU's event counted them already). */
	if (ev->agg_total)
		json_object_object_add(o, "count", json_object_new_int64(ev->count));
	if (ev->repeat)
		json_object_object_add(o, "repeat", json_object_new_boolean(1));
	if (ev->flags & SF_FLAG_LOG)
		json_object_object_add(o, "log_flag", json_object_new_boolean(1));
	/* A 2012-interface filter decided: it blocks (a kill) or refuses exec. */
	if (ev->flags & SF_FLAG_RFC2012)
		json_object_object_add(o, "abi", json_object_new_string(
			c2e_abi_name((enum c2e_abi)SF_FLAGS_ABI(ev->flags))));
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	len = strlen(s);
	if (len + 1 > size) {
		json_object_put(o);
		return -ENOSPC;
	}
	memcpy(buf, s, len + 1);
	json_object_put(o);
	return (int)len;
}
