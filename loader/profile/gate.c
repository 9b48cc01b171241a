// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A profile's gate for a container runtime: the OCI linux.seccomp object
 * that runc or crun installs with SECCOMP_FILTER_FLAG_NEW_LISTENER, sending
 * the listener to sfilterd's agent socket (listenerPath).
 *
 * The rules are the ones the profile's own compilation gave libseccomp
 * (compile.c records them), so includes/excludes, archMap, errno names and
 * runc's splitting of args on one index mean here what they mean there.
 * Only the actions change, and the default when the runtime forces it:
 *   - runc refuses SCMP_ACT_NOTIFY as the default action and on write
 *     (libcontainer/seccomp/seccomp_linux.go InitSeccomp: "SCMP_ACT_NOTIFY
 *     cannot be used as default action", "... for the write syscall", in
 *     1.1.0 through today's): runc init writes the listener's number to its
 *     parent after installing the filter, so a notified write would wait
 *     for an agent that has no listener yet. So a denying default stays
 *     in the kernel, and every named syscall that no rule names is a
 *     NOTIFY rule of its own, which leaves to the default only what no
 *     rule can name (see profile.h).
 *   - A rule whose action equals the default is left out: libseccomp
 *     refuses it (seccomp_rule_add: -EACCES when action == act_default),
 *     runc skips it (matchCall: "This rule is redundant, silently skip
 *     it"), and so does crun (src/libcrun/seccomp.c: action ==
 *     default_action, continue). After the rewrite many are.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "pf_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <linux/seccomp.h>

#define GATE_METADATA "sfilter-gate"
/* Syscall numbers asked of libseccomp's tables, per architecture (x86_64
 * reaches 462 today; every table libseccomp has stays far below). */
#define MAX_NR 1024

struct gate {
	struct sf_profile_gate *out;
	struct pf_rec rec;
	uint32_t dflt;          /* the gate's default */
	bool write_kept;        /* a denial of write stays in the kernel */
	struct json_object *calls;
};

static bool passes(uint32_t act)
{
	uint32_t a = act & SECCOMP_RET_ACTION_FULL;

	return a == SECCOMP_RET_ALLOW || a == SECCOMP_RET_LOG;
}

/* LOG passes as ALLOW: sfilter logs it, the kernel's audit log would say
 * it twice. */
static uint32_t gate_action(const struct pf_rule *r)
{
	if (passes(r->act))
		return SCMP_ACT_ALLOW;
	if (strcmp(r->name, "write") == 0)
		return r->act;
	return SCMP_ACT_NOTIFY;
}

static int set(struct json_object *o, const char *key, struct json_object *v)
{
	if (!v)
		return -ENOMEM;
	return json_object_object_add(o, key, v) ? -ENOMEM : 0;
}

static int add(struct json_object *a, struct json_object *v)
{
	if (!v)
		return -ENOMEM;
	return json_object_array_add(a, v) ? -ENOMEM : 0;
}

/* "action" (and "errnoRet" for the two that carry data) into o. */
static int set_action(struct json_object *o, const char *key, const char *errno_key,
		      uint32_t act)
{
	uint32_t a = act & SECCOMP_RET_ACTION_FULL;
	int r = set(o, key, json_object_new_string(pf_action_name(act)));

	if (!r && (a == SECCOMP_RET_ERRNO || a == SECCOMP_RET_TRACE))
		r = set(o, errno_key, json_object_new_uint64(act & SECCOMP_RET_DATA));
	return r;
}

static struct json_object *args_json(const struct pf_rule *rule)
{
	struct json_object *args = json_object_new_array(), *a;
	size_t i;

	for (i = 0; args && i < rule->n; i++) {
		const struct scmp_arg_cmp *c = &rule->conds[i];

		if (!(a = json_object_new_object()) || add(args, a) ||
		    set(a, "index", json_object_new_uint64(c->arg)) ||
		    set(a, "value", json_object_new_uint64(c->datum_a)) ||
		    set(a, "valueTwo", json_object_new_uint64(c->datum_b)) ||
		    set(a, "op", json_object_new_string(pf_op_name(c->op)))) {
			json_object_put(args);
			return NULL;
		}
	}
	return args;
}

static bool same_rule(const struct pf_rule *a, const struct pf_rule *b)
{
	return a->entry == b->entry && gate_action(a) == gate_action(b) && a->n == b->n &&
	       (!a->n || !memcmp(a->conds, b->conds, a->n * sizeof(*a->conds)));
}

/* The profile's rules with the gate's actions: one entry for each run of
 * records of one profile entry with the same action and conditions. */
static int rules(struct gate *g)
{
	struct json_object *e = NULL, *names = NULL;
	const struct pf_rule *prev = NULL;
	size_t i;
	int r;

	for (i = 0; i < g->rec.n_rules; i++) {
		const struct pf_rule *rule = &g->rec.rules[i];
		uint32_t act = gate_action(rule);

		if (strcmp(rule->name, "write") == 0 && !passes(rule->act))
			g->write_kept = true;
		if (act == g->dflt)
			continue;
		if (!prev || !same_rule(rule, prev)) {
			if (!(e = json_object_new_object()) || (r = add(g->calls, e)) ||
			    (r = set(e, "names", names = json_object_new_array())) ||
			    (r = set_action(e, "action", "errnoRet", act)) ||
			    (rule->n && (r = set(e, "args", args_json(rule)))))
				return e ? r : -ENOMEM;
		}
		prev = rule;
		if ((r = add(names, json_object_new_string(rule->name))))
			return r;
		if (act == SCMP_ACT_NOTIFY)
			g->out->n_notify++;
	}
	return 0;
}

/* Whether a rule of the profile names the syscall that name is on one of
 * the filter's architectures. */
static bool named(const struct gate *g, const uint32_t *arches, size_t n, const char *name)
{
	size_t a, i;

	for (a = 0; a < n; a++) {
		int nr = seccomp_syscall_resolve_name_arch(arches[a], name);

		if (nr < 0)
			continue;
		for (i = 0; i < g->rec.n_rules; i++)
			if (seccomp_syscall_resolve_name_arch(arches[a], g->rec.rules[i].name) == nr)
				return true;
	}
	return false;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every syscall libseccomp names on the filter's architectures that no
 * rule of the profile names: one NOTIFY entry. Left out: write (runc),
 * and socketcall and ipc, whose rules libseccomp writes for the calls they
 * multiplex on i386 (an unconditional rule of their own would replace
 * those). */
static int unnamed(struct gate *g)
{
	uint32_t arches[16];
	size_t n = 0, n_names = 0, i;
	char **names = NULL;
	struct json_object *e, *list;
	int r = 0;

	arches[n++] = seccomp_arch_native();
	for (i = 0; i < g->rec.n_arches && n < sizeof(arches) / sizeof(arches[0]); i++)
		arches[n++] = g->rec.arch_tokens[i];
	for (i = 0; i < n && !r; i++) {
		for (uint32_t nr = 0; nr < 2 * MAX_NR && !r; nr++) {
			int num = nr < MAX_NR ? (int)nr : (int)((nr - MAX_NR) | 0x40000000U);
			char *name;
			size_t k;

			if (nr >= MAX_NR && arches[i] != SCMP_ARCH_X32)
				break;
			name = seccomp_syscall_resolve_num_arch(arches[i], num);
			if (!name)
				continue;
			for (k = 0; k < n_names && strcmp(names[k], name); k++)
				;
			if (k < n_names || !strcmp(name, "write") || !strcmp(name, "socketcall") ||
			    !strcmp(name, "ipc") ||
			    seccomp_syscall_resolve_name(name) == __NR_SCMP_ERROR ||
			    named(g, arches, n, name)) {
				free(name);
				continue;
			}
			char **more = realloc(names, (n_names + 1) * sizeof(*names));

			if (!more) {
				free(name);
				r = -ENOMEM;
				break;
			}
			names = more;
			names[n_names++] = name;
		}
	}
	if (!r && n_names) {
		qsort(names, n_names, sizeof(*names), by_name);
		if (!(e = json_object_new_object()) || (r = add(g->calls, e)) ||
		    (r = set(e, "names", list = json_object_new_array())) ||
		    (r = set_action(e, "action", "errnoRet", SCMP_ACT_NOTIFY)))
			r = r ? r : -ENOMEM;
		for (i = 0; !r && i < n_names; i++)
			r = add(list, json_object_new_string(names[i]));
		g->out->n_notify += (unsigned int)n_names;
	}
	for (i = 0; i < n_names; i++)
		free(names[i]);
	free(names);
	return r;
}

static int document(struct gate *g, const struct sf_profile *p, const char *listener_path,
		    struct json_object *root)
{
	struct json_object *arches;
	size_t i;
	int r;

	if ((r = set_action(root, "defaultAction", "defaultErrnoRet", g->dflt)))
		return r;
	if (g->rec.n_arches) {
		if ((r = set(root, "architectures", arches = json_object_new_array())))
			return r;
		for (i = 0; i < g->rec.n_arches; i++)
			if ((r = add(arches, json_object_new_string(g->rec.arches[i]))))
				return r;
	}
	if (p->flags) {
		struct json_object *flags;

		if ((r = set(root, "flags", flags = json_object_new_array())) ||
		    (p->flags & SF_PROFILE_FLAG_TSYNC &&
		     (r = add(flags, json_object_new_string("SECCOMP_FILTER_FLAG_TSYNC")))) ||
		    (p->flags & SF_PROFILE_FLAG_LOG &&
		     (r = add(flags, json_object_new_string("SECCOMP_FILTER_FLAG_LOG")))))
			return r;
	}
	if ((r = set(root, "listenerPath", json_object_new_string(listener_path))) ||
	    (r = set(root, "listenerMetadata", json_object_new_string(GATE_METADATA))) ||
	    (r = set(root, "syscalls", g->calls = json_object_new_array())) ||
	    (r = rules(g)))
		return r;
	return passes(p->default_action) ? 0 : unnamed(g);
}

/* What the gate could not keep exactly, one line each. */
static int warnings(struct gate *g, const struct sf_profile *p, const struct sf_profile_opts *o)
{
	struct sf_profile_gate *out = g->out;
	struct utsname u;
	int r = 0;

	for (size_t i = 0; i < p->n_warnings && !r; i++)
		r = pf_append(&out->warnings, &out->n_warnings, "%s", p->warnings[i]);
	if (!r && g->rec.caps_cond)
		r = pf_append(&out->warnings, &out->n_warnings, "includes/excludes caps were "
			      "judged for caps %s: the gate is exact for a container with that "
			      "bounding set only (sfilter-oci-hook judges the profile with the "
			      "container's)", o && o->caps ? o->caps : "of this process");
	if (!r && g->rec.kernel_cond)
		r = pf_append(&out->warnings, &out->n_warnings, "minKernel was judged for kernel "
			      "%s: the gate is exact on such a kernel only",
			      o && o->kernel ? o->kernel : uname(&u) ? "?" : u.release);
	if (!r && g->write_kept)
		r = pf_append(&out->warnings, &out->n_warnings, "write: its denials stay in the "
			      "kernel as the profile has them (runc refuses SCMP_ACT_NOTIFY on "
			      "write), so a replace cannot loosen them");
	return r;
}

int sf_profile_gate(const char *json, size_t len, const struct sf_profile_opts *opts,
		    const char *listener_path, struct sf_profile_gate *out,
		    struct sf_profile_error *err)
{
	struct sf_profile_opts gopts = { .caps = "none", .kernel = "1.0", .gate = 1 };
	struct gate g = { .out = out };
	struct sf_profile p, check;
	struct sf_profile_error spare, cerr;
	struct json_object *root = NULL;
	const char *text;
	int r;

	memset(out, 0, sizeof(*out));
	err = err ? err : &spare;
	if ((r = pf_compile(json, len, opts, &g.rec, &p, err)))
		return r;
	g.dflt = passes(p.default_action) ? SCMP_ACT_ALLOW : p.default_action;
	root = json_object_new_object();
	r = root ? document(&g, &p, listener_path, root) : -ENOMEM;
	if (!r)
		r = warnings(&g, &p, opts);
	text = r ? NULL : json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
							 JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!r && (!text || asprintf(&out->json, "%s\n", text) < 0))
		r = -ENOMEM;
	/* What a runtime will do with it: libseccomp must take every rule
	 * (the gate has no includes, so caps and kernel do not matter). */
	if (!r && (r = sf_profile_compile(out->json, strlen(out->json), &gopts, &check, &cerr))) {
		snprintf(err->path, sizeof(err->path), "%s", cerr.path);
		snprintf(err->msg, sizeof(err->msg), "the gate does not compile: %.280s", cerr.msg);
	}
	if (!r) {
		out->len = check.len;
		sf_profile_free(&check);
	}
	json_object_put(root);
	pf_rec_free(&g.rec);
	if (!r)
		out->profile = p;
	else
		sf_profile_free(&p);
	if (r) {
		sf_profile_gate_free(out);
		if (!err->msg[0])
			snprintf(err->msg, sizeof(err->msg), "%s", strerror(-r));
	}
	return r;
}

int sf_profile_gate_file(const char *path, const struct sf_profile_opts *opts,
			 const char *listener_path, struct sf_profile_gate *out,
			 struct sf_profile_error *err)
{
	char *buf;
	size_t len;
	int r;

	memset(out, 0, sizeof(*out));
	if (!(r = pf_read_file(path, &buf, &len, err)))
		r = sf_profile_gate(buf, len, opts, listener_path, out, err);
	free(buf);
	return r;
}

void sf_profile_gate_free(struct sf_profile_gate *g)
{
	free(g->json);
	pf_free_lines(g->warnings, g->n_warnings);
	sf_profile_free(&g->profile);
	memset(g, 0, sizeof(*g));
}
