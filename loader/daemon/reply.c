// SPDX-License-Identifier: GPL-2.0-only
/*
 * What sfilterd's replies are built with: the JSON every reply carries
 * (one convention: a failure says {"error": N, "message": "why"}, made by
 * conn_reply_object() in conn.c, below this file), the
 * messages of the runtime's errors, and the note on actions the running
 * tier cannot reproduce.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "daemon.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>

void set_msg(char *msg, size_t msz, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, msz, fmt, ap);
	va_end(ap);
}

const char *jstr(struct json_object *o)
{
	return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
}

void reply_json(struct client *c, uint32_t rid, int error, uint32_t id, uint32_t flags,
		struct json_object *o, const char *msg)
{
	o = conn_reply_object(o, error, msg);
	conn_reply(c, rid, error, id, flags, jstr(o), NULL, 0);
	json_object_put(o);
}

void reply_attach(struct client *c, uint32_t rid, int error, uint32_t filter_id,
		  const char *msg)
{
	struct json_object *o = json_object_new_object();

	if (!error)
		json_object_object_add(o, "filter", json_object_new_int64(filter_id));
	reply_json(c, rid, error, filter_id, 0, o, msg);
}

struct json_object *flags_json(uint32_t flags)
{
	struct json_object *a = json_object_new_array();

	if (flags & SF_ATTACH_TSYNC)
		json_object_array_add(a, json_object_new_string("tsync"));
	if (flags & SF_ATTACH_LOG)
		json_object_array_add(a, json_object_new_string("log"));
	if (flags & SF_ATTACH_FALLBACK_LOG)
		json_object_array_add(a, json_object_new_string("fallback-log"));
	if (flags & SF_ATTACH_COMPLAIN)
		json_object_array_add(a, json_object_new_string("complain"));
	if (flags & SF_ATTACH_SHADOW)
		json_object_array_add(a, json_object_new_string("shadow"));
	if (flags & SF_ATTACH_COUNT)
		json_object_array_add(a, json_object_new_string("count"));
	if (flags & SF_FLAG_RFC2012)
		json_object_array_add(a, json_object_new_string(
			c2e_abi_name((enum c2e_abi)SF_FLAGS_ABI(flags))));
	if (flags & SF_FLAG_RFC_EXEC)
		json_object_array_add(a, json_object_new_string("exec-inheritable"));
	if (flags & SF_ATTACH_AT_EXEC)
		json_object_array_add(a, json_object_new_string("at-exec"));
	return a;
}

int runtime_err(int r, const struct c2e_error *cerr, char *msg, size_t msz)
{
	char ebuf[256];

	switch (-r) {
	case EINVAL:
		set_msg(msg, msz, "%s", cerr->msg[0] ?
			c2e_error_str(cerr, ebuf, sizeof(ebuf)) : "invalid filter, flags or target");
		break;
	case ENOMEM:
		set_msg(msg, msz, "the chain would exceed %d instructions", C2E_MAX_CHAIN_INSNS);
		break;
	case ENOENT:
		set_msg(msg, msz, "no such filter or path");
		break;
	case ESRCH:
		set_msg(msg, msz, "no such process or thread");
		break;
	case ENOSYS:
		set_msg(msg, msz, "this runtime does not implement it yet");
		break;
	default:
		set_msg(msg, msz, "%s", strerror(-r));
	}
	return -r;
}

static void fallback_actions(const struct sock_filter *insns, uint32_t n_insns,
			     char *out, size_t size)
{
	static const struct { uint32_t action; const char *name; } gaps[] = {
		{ SECCOMP_RET_ERRNO, "ERRNO" }, { SECCOMP_RET_TRAP, "TRAP" },
		{ SECCOMP_RET_TRACE, "TRACE" }, { SECCOMP_RET_USER_NOTIF, "USER_NOTIF" },
	};
	bool seen[4] = { false }, ret_a = false;
	size_t used = 0, i, g;

	out[0] = '\0';
	for (i = 0; i < n_insns; i++) {
		const struct sock_filter *f = &insns[i];

		if (BPF_CLASS(f->code) != BPF_RET)
			continue;
		if (BPF_RVAL(f->code) == BPF_A) {
			ret_a = true;
			continue;
		}
		for (g = 0; g < 4; g++)
			if ((f->k & SECCOMP_RET_ACTION_FULL) == gaps[g].action)
				seen[g] = true;
	}
	for (g = 0; g < 4; g++)
		if (seen[g] && used < size)
			used += snprintf(out + used, size - used, "%s%s",
					 used ? ", " : "", gaps[g].name);
	if (ret_a && used < size)
		used += snprintf(out + used, size - used, "%sRET A (any action)",
				 used ? ", " : "");
}

void tier_note(const struct sock_filter *insns, uint32_t n_insns, uint32_t flags,
	       char *out, size_t size)
{
	const char *tier = sf_tier_name(sf_runtime_tier(sfd.rt));
	char actions[128];

	/* The tier is always named: a client that prints what a policy's
	 * actions do (sfrun --profile) reads it from here. */
	snprintf(out, size, "tier %s", tier);
	if (sf_runtime_tier(sfd.rt) != SF_TIER_TRACEPOINT)
		return;
	/* A 2012-interface filter only allows or kills; what the proposal
	 * did not say is how execve fails where no LSM hook can refuse it. */
	if (flags & SF_ATTACH_RFC2012) {
		if (!(flags & SF_ATTACH_RFC_EXEC))
			snprintf(out, size, "tier %s cannot refuse execve with EPERM: "
				 "an execve kills the caller", tier);
		return;
	}
	fallback_actions(insns, n_insns, actions, sizeof(actions));
	if (actions[0])
		snprintf(out, size, "tier %s cannot reproduce %s: %s", tier, actions,
			 flags & SF_ATTACH_FALLBACK_LOG ? "they log and allow (fallback log)" :
			 "they kill (fallback kill)");
}
