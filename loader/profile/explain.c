// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Which rule of a profile decides a call (sfctl explain, sfctl explain
 * --log). The profile is compiled as sf_profile_compile() compiles it, and
 * the rules libseccomp was given are kept (pf_rec, with the rules whose
 * action is the default's, which libseccomp is never given). The verdict
 * is the filter's, from classic2ebpf's reference interpreter, or the one
 * an event saw; the rule named is the first that gives it. The reading is
 * checked against the filter at every call: a verdict no rule and not the
 * default gives is said as such, never guessed.
 */
#define _GNU_SOURCE
#include "pf_internal.h"
#include "c2e.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sf_profile_rules_new(const char *json, size_t len, const struct sf_profile_opts *opts,
			 struct sf_profile_rules **out, struct sf_profile_error *err)
{
	struct sf_profile_rules *r = calloc(1, sizeof(*r));
	int e;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	r->rec.with_default = true;
	e = pf_compile(json, len, opts, &r->rec, &r->p, err);
	if (e) {
		free(r);
		return e;
	}
	*out = r;
	return 0;
}

int sf_profile_rules_open(const char *path, const struct sf_profile_opts *opts,
			  struct sf_profile_rules **out, struct sf_profile_error *err)
{
	char *buf = NULL;
	size_t len;
	int e;

	*out = NULL;
	e = pf_read_file(path, &buf, &len, err);
	if (!e)
		e = sf_profile_rules_new(buf, len, opts, out, err);
	free(buf);
	return e;
}

int sf_profile_why_json(const struct sf_profile_why *w, char *buf, size_t size)
{
	struct json_object *o = json_object_new_object();
	const char *s;
	int n;

	if (!o)
		return -ENOMEM;
	if (!w->exact) {
		json_object_object_add(o, "path", NULL);
		json_object_object_add(o, "why", json_object_new_string(
			"no rule of the profile and not its default gives this verdict: "
			"libseccomp's own (an architecture the profile does not list, or a "
			"call it derives rules for, as i386's socketcall)"));
	} else {
		json_object_object_add(o, "path", json_object_new_string(w->path));
		if (w->name_path[0])
			json_object_object_add(o, "name", json_object_new_string(w->name_path));
		json_object_object_add(o, "action", json_object_new_string(w->action));
		if (w->conds[0])
			json_object_object_add(o, "conditions", json_object_new_string(w->conds));
		if (w->as_default)
			json_object_object_add(o, "as_default", json_object_new_boolean(1));
		if (w->args_unknown && w->conds[0])
			json_object_object_add(o, "conditions_unchecked",
					       json_object_new_boolean(1));
	}
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
					      JSON_C_TO_STRING_NOSLASHESCAPE);
	n = snprintf(buf, size, "%s", s);
	json_object_put(o);
	return n < 0 || (size_t)n >= size ? -ENOSPC : n;
}

void sf_profile_rules_close(struct sf_profile_rules *r)
{
	if (!r)
		return;
	sf_profile_free(&r->p);
	pf_rec_free(&r->rec);
	free(r);
}

const struct sf_profile *sf_profile_rules_filter(const struct sf_profile_rules *r)
{
	return &r->p;
}

/* libseccomp's token of the call's architecture (its SCMP_ARCH_* are the
 * audit values), and whether its arguments are 32 bits wide (libseccomp
 * then compares their low halves only). */
static uint32_t arch_of(const struct seccomp_data *d, bool *is32)
{
	*is32 = d->arch != SCMP_ARCH_X86_64 || ((uint32_t)d->nr & C2E_X32_SYSCALL_BIT);
	if (d->arch == SCMP_ARCH_X86_64 && ((uint32_t)d->nr & C2E_X32_SYSCALL_BIT))
		return SCMP_ARCH_X32;
	return d->arch;
}

static bool cond_met(const struct scmp_arg_cmp *c, uint64_t arg, bool is32)
{
	uint64_t a = arg, x = c->datum_a, y = c->datum_b;

	if (is32) {
		a &= 0xffffffffULL;
		x &= 0xffffffffULL;
		y &= 0xffffffffULL;
	}
	switch (c->op) {
	case SCMP_CMP_NE: return a != x;
	case SCMP_CMP_LT: return a < x;
	case SCMP_CMP_LE: return a <= x;
	case SCMP_CMP_EQ: return a == x;
	case SCMP_CMP_GE: return a >= x;
	case SCMP_CMP_GT: return a > x;
	case SCMP_CMP_MASKED_EQ: return (a & x) == y;
	default: return false;
	}
}

/* "SCMP_ACT_ERRNO(1)", "SCMP_ACT_ALLOW": an action as a profile writes it. */
static void action_text(uint32_t act, char *out, size_t size)
{
	const char *name = pf_action_name(act);
	uint32_t full = act & SECCOMP_RET_ACTION_FULL;

	if (full == SECCOMP_RET_ERRNO || full == SECCOMP_RET_TRACE)
		snprintf(out, size, "%s(%u)", name ? name : "?", act & SECCOMP_RET_DATA);
	else
		snprintf(out, size, "%s", name ? name : "?");
}

static void conds_text(const struct pf_rule *r, char *out, size_t size)
{
	size_t i, at = 0;

	out[0] = '\0';
	for (i = 0; i < r->n && at < size; i++) {
		const struct scmp_arg_cmp *c = &r->conds[i];
		int w;

		if (c->op == SCMP_CMP_MASKED_EQ)
			w = snprintf(out + at, size - at, "%sargs index %u %s 0x%llx 0x%llx",
				     i ? "; " : "", c->arg, pf_op_name(c->op),
				     (unsigned long long)c->datum_a, (unsigned long long)c->datum_b);
		else
			w = snprintf(out + at, size - at, "%sargs index %u %s 0x%llx",
				     i ? "; " : "", c->arg, pf_op_name(c->op),
				     (unsigned long long)c->datum_a);
		if (w < 0)
			break;
		at += (size_t)w;
	}
}

int sf_profile_rules_explain(const struct sf_profile_rules *r, const struct seccomp_data *call,
			     const uint32_t *seen, bool args_known, struct sf_profile_why *out)
{
	const struct pf_rule *best = NULL;
	bool is32, met;
	uint32_t arch = arch_of(call, &is32);
	char *name = seccomp_syscall_resolve_num_arch(arch, call->nr);
	size_t i, k;

	memset(out, 0, sizeof(*out));
	out->entry = -1;
	out->args_unknown = !args_known;
	out->verdict = seen ? *seen : c2e_interpret(r->p.insns, r->p.len, call);
	if (name)
		snprintf(out->syscall, sizeof(out->syscall), "%s", name);
	for (i = 0; name && i < r->rec.n_rules && !best; i++) {
		const struct pf_rule *u = &r->rec.rules[i];

		if (u->act != out->verdict || strcmp(u->name, name))
			continue;
		for (k = 0, met = true; args_known && k < u->n && met; k++)
			met = cond_met(&u->conds[k], call->args[u->conds[k].arg], is32);
		if (met)
			best = u;
	}
	free(name);
	if (best) {
		out->entry = (long)best->entry;
		snprintf(out->path, sizeof(out->path), "syscalls[%zu]", best->entry);
		snprintf(out->name_path, sizeof(out->name_path), "%s", best->path);
		action_text(best->act, out->action, sizeof(out->action));
		conds_text(best, out->conds, sizeof(out->conds));
		out->as_default = best->as_default;
		out->exact = true;
	} else if (out->verdict == r->p.default_action) {
		snprintf(out->path, sizeof(out->path), "defaultAction");
		action_text(r->p.default_action, out->action, sizeof(out->action));
		out->exact = true;
	}
	return 0;
}
