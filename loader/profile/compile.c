// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A profile compiled the way runc compiles linux.seccomp, after moby's
 * filtering of the syscalls entries (includes/excludes) and its archMap:
 *   - the default action with defaultErrnoRet (EPERM when absent), for
 *     ERRNO and TRACE only (the runtime-spec: any other action with an
 *     errno is an error);
 *   - an entry whose action equals the default is skipped (libseccomp
 *     refuses such a rule), an unknown name is skipped with a warning;
 *   - args on distinct indexes are one rule (all must match); when two
 *     args share an index, each arg is a rule of its own (runc's "old
 *     behaviour": any may match);
 *   - more than 32 rules: libseccomp's binary tree (SCMP_FLTATR_CTL_OPTIMIZE
 *     2), as runc asks for it.
 * Every field is checked whether or not its entry applies here, so a
 * profile in error fails on every machine.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "pf_internal.h"
#include "c2e.h"
#include "sf_version.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#define MAX_ARGS 6 /* a syscall's arguments; args[] may hold more conditions */

/* An errno for an action that takes one: field (a number) or name_field
 * (containers/common's errno name), which must agree when both are
 * given; EPERM when neither is. At most max: libseccomp takes ERRNO up
 * to 4095 (MAX_ERRNO), TRACE's message up to 0xffff. */
static int errno_of(struct pf *c, struct json_object *obj, const char *path,
		    const char *field, const char *name_field, bool takes, uint64_t max,
		    uint64_t *e)
{
	struct json_object *num, *name;
	char p[128];
	uint64_t by_name;
	int r;

	if ((r = pf_field(c, obj, path, field, json_type_int, &num)) ||
	    (r = pf_field(c, obj, path, name_field, json_type_string, &name)))
		return r;
	pf_path(p, sizeof(p), "%s%s%s", path, path[0] ? "." : "", num ? field : name_field);
	if ((num || name) && !takes)
		return pf_fail(c, p, "only SCMP_ACT_ERRNO and SCMP_ACT_TRACE take an errno");
	*e = EPERM;
	if (num && (r = pf_uint(c, num, p, max, e)))
		return r;
	if (!name)
		return 0;
	pf_path(p, sizeof(p), "%s%s%s", path, path[0] ? "." : "", name_field);
	if ((r = pf_errno_name(c, json_object_get_string(name), p, &by_name)))
		return r;
	if (num && by_name != *e)
		return pf_fail(c, p, "%s is %llu, but %s is %llu", name_field,
			       (unsigned long long)by_name, field, (unsigned long long)*e);
	*e = by_name;
	return 0;
}

/* obj's action (key), with its errno folded in. */
static int action_of(struct pf *c, struct json_object *obj, const char *path,
		     const char *key, const char *errno_key, const char *name_key, uint32_t *act)
{
	struct json_object *v;
	bool takes;
	uint64_t e;
	char p[128];
	int r;

	if ((r = pf_field(c, obj, path, key, json_type_string, &v)))
		return r;
	pf_path(p, sizeof(p), "%s%s%s", path, path[0] ? "." : "", key);
	if (!v)
		return pf_fail(c, p, "missing");
	if ((r = pf_action(c, json_object_get_string(v), p, act, &takes)) ||
	    (r = errno_of(c, obj, path, errno_key, name_key, takes,
			  *act == SCMP_ACT_TRACE(0) ? 0xffff : C2E_MAX_ERRNO, &e)))
		return r;
	if (takes)
		*act |= (uint32_t)e;
	return 0;
}

static int check_listener(struct pf *c, struct json_object *root)
{
	struct json_object *v;
	int r;

	if ((r = pf_field(c, root, "", "listenerPath", json_type_string, &v)))
		return r;
	if (v && json_object_get_string_len(v) && !c->gate)
		return pf_fail(c, "listenerPath", "not supported: sfilter has no "
			       "SCMP_ACT_NOTIFY, so no seccomp agent to send the state to");
	if (v && json_object_get_string_len(v))
		return pf_field(c, root, "", "listenerMetadata", json_type_string, &v);
	if ((r = pf_field(c, root, "", "listenerMetadata", json_type_string, &v)))
		return r;
	if (v && json_object_get_string_len(v))
		return pf_fail(c, "listenerMetadata", "set without listenerPath");
	return 0;
}

static int add_arch(struct pf *c, const char *name, const char *path)
{
	uint32_t arch;
	int r;

	if ((r = pf_arch(c, name, path, &arch)))
		return r;
	r = seccomp_arch_add(c->ctx, arch);
	if (r && r != -EEXIST)
		return pf_fail(c, path, "libseccomp cannot add %s: %s", name, strerror(-r));
	if (c->rec) {
		struct pf_rec *rec = c->rec;
		char **a = realloc(rec->arches, (rec->n_arches + 1) * sizeof(*a));
		uint32_t *t = a ? realloc(rec->arch_tokens, (rec->n_arches + 1) * sizeof(*t)) : NULL;

		if (a)
			rec->arches = a;
		if (t)
			rec->arch_tokens = t;
		if (!a || !t || !(a[rec->n_arches] = strdup(name)))
			return -ENOMEM;
		t[rec->n_arches++] = arch;
	}
	return 0;
}

/* archMap: the entry of the native architecture, with its subArchitectures. */
static int arch_map_entry(struct pf *c, struct json_object *e, const char *path, bool *used)
{
	struct json_object *v, *subs;
	const char *name, *native = seccomp_arch_native() == SCMP_ARCH_X86_64 ?
		"SCMP_ARCH_X86_64" : seccomp_arch_native() == SCMP_ARCH_X86 ? "SCMP_ARCH_X86" :
		seccomp_arch_native() == SCMP_ARCH_AARCH64 ? "SCMP_ARCH_AARCH64" : "";
	char p[128];
	uint32_t arch;
	size_t i;
	int r;

	if (json_object_get_type(e) != json_type_object)
		return pf_fail(c, path, "expected an object");
	if ((r = pf_field(c, e, path, "architecture", json_type_string, &v)) ||
	    (r = pf_field(c, e, path, "subArchitectures", json_type_array, &subs)))
		return r;
	pf_path(p, sizeof(p), "%s.architecture", path);
	if (!v)
		return pf_fail(c, p, "missing");
	name = json_object_get_string(v);
	if ((r = pf_arch(c, name, p, &arch)))
		return r;
	pf_path(p, sizeof(p), "%s.subArchitectures", path);
	for (i = 0; subs && i < json_object_array_length(subs); i++) {
		const char *sub;
		char sp[140];

		pf_path(sp, sizeof(sp), "%s[%zu]", p, i);
		if ((r = pf_string_at(c, subs, i, p, &sub)) || (r = pf_arch(c, sub, sp, &arch)))
			return r;
		if (!*used && strcmp(name, native) == 0 && (r = add_arch(c, sub, sp)))
			return r;
	}
	if (strcmp(name, native) == 0)
		*used = true;
	return 0;
}

static int arches(struct pf *c, struct json_object *root)
{
	struct json_object *list, *map;
	bool used = false;
	char p[64];
	size_t i;
	int r;

	if ((r = pf_field(c, root, "", "architectures", json_type_array, &list)) ||
	    (r = pf_field(c, root, "", "archMap", json_type_array, &map)))
		return r;
	if (list && map && json_object_array_length(list) && json_object_array_length(map))
		return pf_fail(c, "archMap", "architectures and archMap are both given: "
			       "use one or the other");
	for (i = 0; list && i < json_object_array_length(list); i++) {
		const char *name;

		pf_path(p, sizeof(p), "architectures[%zu]", i);
		if ((r = pf_string_at(c, list, i, "architectures", &name)) ||
		    (r = add_arch(c, name, p)))
			return r;
	}
	for (i = 0; map && i < json_object_array_length(map); i++) {
		pf_path(p, sizeof(p), "archMap[%zu]", i);
		if ((r = arch_map_entry(c, json_object_array_get_idx(map, i), p, &used)))
			return r;
	}
	return 0;
}

static int flags(struct pf *c, struct json_object *root)
{
	struct json_object *list;
	unsigned int f;
	char p[64];
	size_t i;
	int r;

	if ((r = pf_field(c, root, "", "flags", json_type_array, &list)))
		return r;
	for (i = 0; list && i < json_object_array_length(list); i++) {
		const char *name;

		pf_path(p, sizeof(p), "flags[%zu]", i);
		if ((r = pf_string_at(c, list, i, "flags", &name)) ||
		    (r = pf_flag(c, name, p, &f)))
			return r;
		c->out->flags |= f;
	}
	return 0;
}

/* One includes or excludes object: *all whether every condition it sets
 * holds, *any whether one of them does (moby: includes needs all, an
 * excludes condition that holds skips the entry). */
static int conditions(struct pf *c, struct json_object *obj, const char *path,
		      const char *key, bool *all, bool *any)
{
	struct json_object *f, *caps, *arch, *mk;
	char p[128], pp[160];
	int r, major, minor;
	size_t i;

	*all = true;
	*any = false;
	if ((r = pf_field(c, obj, path, key, json_type_object, &f)) || !f)
		return r;
	pf_path(p, sizeof(p), "%s.%s", path, key);
	if ((r = pf_field(c, f, p, "caps", json_type_array, &caps)) ||
	    (r = pf_field(c, f, p, "arches", json_type_array, &arch)) ||
	    (r = pf_field(c, f, p, "minKernel", json_type_string, &mk)))
		return r;
	pf_path(pp, sizeof(pp), "%s.caps", p);
	if (c->rec && caps && json_object_array_length(caps))
		c->rec->caps_cond = true;
	if (c->rec && mk)
		c->rec->kernel_cond = true;
	for (i = 0; caps && i < json_object_array_length(caps); i++) {
		const char *name;
		int n;

		if ((r = pf_string_at(c, caps, i, pp, &name)))
			return r;
		n = pf_cap_number(name);
		if (n >= 0 && (c->caps >> n & 1))
			*any = true;
		else
			*all = false;
	}
	pf_path(pp, sizeof(pp), "%s.arches", p);
	if (arch && json_object_array_length(arch)) {
		bool in = false;

		for (i = 0; i < json_object_array_length(arch); i++) {
			const char *name;

			if ((r = pf_string_at(c, arch, i, pp, &name)))
				return r;
			in |= strcmp(name, pf_native_arch()) == 0;
		}
		*any |= in;
		*all &= in;
	}
	if (mk) {
		bool ge;

		pf_path(pp, sizeof(pp), "%s.minKernel", p);
		if (pf_kernel_version(json_object_get_string(mk), &major, &minor))
			return pf_fail(c, pp, "\"%s\" is not a kernel version (major.minor)",
				       json_object_get_string(mk));
		ge = c->kmajor > major || (c->kmajor == major && c->kminor >= minor);
		*any |= ge;
		*all &= ge;
	}
	return 0;
}

/* args[]: the conditions and whether two share an index. */
static int args_of(struct pf *c, struct json_object *obj, const char *path,
		   struct scmp_arg_cmp **conds, size_t *n, bool *shared)
{
	struct json_object *list, *v;
	unsigned int seen = 0;
	char p[128], fp[160];
	size_t i;
	int r;

	*n = 0;
	*shared = false;
	if ((r = pf_field(c, obj, path, "args", json_type_array, &list)) || !list)
		return r;
	*conds = calloc(json_object_array_length(list) + 1, sizeof(**conds));
	if (!*conds)
		return -ENOMEM;
	for (i = 0; i < json_object_array_length(list); i++) {
		struct json_object *a = json_object_array_get_idx(list, i);
		struct scmp_arg_cmp *cmp = &(*conds)[i];
		uint64_t x;

		pf_path(p, sizeof(p), "%s.args[%zu]", path, i);
		if (!a || json_object_get_type(a) != json_type_object)
			return pf_fail(c, p, "expected an object");
		static const char *const req[] = { "index", "value", "op" };
		for (size_t k = 0; k < 3; k++)
			if (!json_object_object_get_ex(a, req[k], &v) || !v) {
				pf_path(fp, sizeof(fp), "%s.%s", p, req[k]);
				return pf_fail(c, fp, "missing");
			}
		json_object_object_get_ex(a, "index", &v);
		pf_path(fp, sizeof(fp), "%s.index", p);
		if ((r = pf_uint(c, v, fp, MAX_ARGS - 1, &x)))
			return r;
		cmp->arg = (unsigned int)x;
		*shared |= seen >> x & 1;
		seen |= 1U << x;
		json_object_object_get_ex(a, "value", &v);
		pf_path(fp, sizeof(fp), "%s.value", p);
		if ((r = pf_uint(c, v, fp, UINT64_MAX, &cmp->datum_a)))
			return r;
		pf_path(fp, sizeof(fp), "%s.valueTwo", p);
		if (json_object_object_get_ex(a, "valueTwo", &v) && v &&
		    (r = pf_uint(c, v, fp, UINT64_MAX, &cmp->datum_b)))
			return r;
		if ((r = pf_field(c, a, p, "op", json_type_string, &v)))
			return r;
		pf_path(fp, sizeof(fp), "%s.op", p);
		if ((r = pf_op(c, json_object_get_string(v), fp, &cmp->op)))
			return r;
		(*n)++;
	}
	return 0;
}

/* The names of an entry: "names", or moby's legacy "name". */
static int names_of(struct pf *c, struct json_object *obj, const char *path,
		    struct json_object **names, struct json_object **name)
{
	char p[128];
	size_t i;
	int r;

	if ((r = pf_field(c, obj, path, "names", json_type_array, names)) ||
	    (r = pf_field(c, obj, path, "name", json_type_string, name)))
		return r;
	pf_path(p, sizeof(p), "%s.names", path);
	/* runc refuses an entry without names; moby's older "name" may
	 * stand beside an empty list, which a lenient read allows. */
	if (*names && !json_object_array_length(*names) && !c->lenient)
		return pf_fail(c, p, "empty: an entry needs at least one syscall name");
	if (*names && !json_object_array_length(*names))
		*names = NULL;
	if (*name && !json_object_get_string_len(*name))
		*name = NULL;
	if (*names && *name)
		return pf_fail(c, path, "name and names are both given: use one or the other");
	if (!*names && !*name)
		return pf_fail(c, p, "missing (at least one syscall name)");
	for (i = 0; *names && i < json_object_array_length(*names); i++) {
		const char *s;
		char np[140];

		if ((r = pf_string_at(c, *names, i, p, &s)))
			return r;
		pf_path(np, sizeof(np), "%s[%zu]", p, i);
		if (!s[0])
			return pf_fail(c, np, "an empty syscall name");
	}
	return 0;
}

/* Records that name has a rule of action act (for the counts). */
static int note_rule(struct pf *c, const char *name, uint32_t act)
{
	bool gap = pf_act_bit(act) & SF_PROFILE_ACT_GAPS;
	size_t i;

	c->out->actions |= pf_act_bit(act);
	for (i = 0; i < c->n_names; i++)
		if (strcmp(c->names[i], name) == 0) {
			c->gap[i] |= gap;
			return 0;
		}
	c->names = realloc(c->names, (c->n_names + 1) * sizeof(*c->names));
	c->gap = c->names ? realloc(c->gap, (c->n_names + 1) * sizeof(*c->gap)) : NULL;
	if (!c->names || !c->gap || !(c->names[c->n_names] = strdup(name)))
		return -ENOMEM;
	c->gap[c->n_names++] = gap;
	return 0;
}

/* One rule as libseccomp was given it (or, as_default, would have been
 * were its action not the default's). */
static int record(struct pf *c, size_t entry, const char *path, const char *name,
		  uint32_t act, const struct scmp_arg_cmp *conds, size_t n, bool as_default)
{
	struct pf_rule *r = realloc(c->rec->rules, (c->rec->n_rules + 1) * sizeof(*r));

	if (!r)
		return -ENOMEM;
	c->rec->rules = r;
	r += c->rec->n_rules;
	memset(r, 0, sizeof(*r));
	r->entry = entry;
	r->act = act;
	r->n = n;
	r->as_default = as_default;
	if (!(r->name = strdup(name)) || !(r->path = strdup(path)) ||
	    (n && !(r->conds = calloc(n, sizeof(*conds))))) {
		free(r->name);
		free(r->path);
		return -ENOMEM;
	}
	if (n)
		memcpy(r->conds, conds, n * sizeof(*conds));
	c->rec->n_rules++;
	return 0;
}

void pf_rec_free(struct pf_rec *rec)
{
	size_t i;

	for (i = 0; i < rec->n_rules; i++) {
		free(rec->rules[i].name);
		free(rec->rules[i].path);
		free(rec->rules[i].conds);
	}
	for (i = 0; i < rec->n_arches; i++)
		free(rec->arches[i]);
	free(rec->rules);
	free(rec->arches);
	free(rec->arch_tokens);
	memset(rec, 0, sizeof(*rec));
}

static int add_rules(struct pf *c, size_t entry, const char *path, const char *name,
		     uint32_t act, const struct scmp_arg_cmp *conds, size_t n, bool shared)
{
	int nr = seccomp_syscall_resolve_name(name), r = 0;
	bool as_default = act == c->dflt;
	size_t i;

	if (nr == __NR_SCMP_ERROR)
		return pf_warn(c, path, "unknown syscall \"%s\" skipped", name);
	if (as_default) {
		/* Only recorded, for the explanation: libseccomp refuses a
		 * rule of the default's action. */
		if (!shared)
			r = record(c, entry, path, name, act, conds, n, true);
		for (i = 0; shared && i < n && !r; i++)
			r = record(c, entry, path, name, act, &conds[i], 1, true);
		return r;
	}
	if (!shared)
		r = seccomp_rule_add_array(c->ctx, act, nr, (unsigned int)n, conds);
	for (i = 0; shared && i < n && !r; i++)
		r = seccomp_rule_add_array(c->ctx, act, nr, 1, &conds[i]);
	if (r)
		return pf_fail(c, path, "libseccomp refused the rule for \"%s\": %s", name,
			       strerror(-r));
	if (c->rec && !shared)
		r = record(c, entry, path, name, act, conds, n, false);
	for (i = 0; c->rec && shared && i < n && !r; i++)
		r = record(c, entry, path, name, act, &conds[i], 1, false);
	if (r)
		return r;
	return note_rule(c, name, act);
}

static int entry(struct pf *c, struct json_object *e, size_t idx)
{
	struct json_object *names, *name, *comment;
	struct scmp_arg_cmp *conds = NULL;
	bool inc_all, inc_any, exc_all, exc_any, shared;
	char path[64], np[96];
	uint32_t act;
	size_t n, i;
	int r;

	pf_path(path, sizeof(path), "syscalls[%zu]", idx);
	if (json_object_get_type(e) != json_type_object)
		return pf_fail(c, path, "expected an object");
	if ((r = names_of(c, e, path, &names, &name)) ||
	    (r = action_of(c, e, path, "action", "errnoRet", "errno", &act)) ||
	    (r = pf_field(c, e, path, "comment", json_type_string, &comment)) ||
	    (r = conditions(c, e, path, "includes", &inc_all, &inc_any)) ||
	    (r = conditions(c, e, path, "excludes", &exc_all, &exc_any)) ||
	    (r = args_of(c, e, path, &conds, &n, &shared)))
		goto out;
	if (!inc_all || exc_any || (act == c->dflt && !(c->rec && c->rec->with_default)))
		goto out;
	if (name) {
		pf_path(np, sizeof(np), "%s.name", path);
		r = add_rules(c, idx, np, json_object_get_string(name), act, conds, n, shared);
	}
	for (i = 0; names && !r && i < json_object_array_length(names); i++) {
		pf_path(np, sizeof(np), "%s.names[%zu]", path, i);
		r = add_rules(c, idx, np,
			      json_object_get_string(json_object_array_get_idx(names, i)),
			      act, conds, n, shared);
	}
out:
	free(conds);
	return r;
}

static int syscalls(struct pf *c, struct json_object *root)
{
	struct json_object *list;
	size_t i;
	int r;

	if ((r = pf_field(c, root, "", "syscalls", json_type_array, &list)))
		return r;
	for (i = 0; list && i < json_object_array_length(list); i++)
		if ((r = entry(c, json_object_array_get_idx(list, i), i)))
			return r;
	return 0;
}

/* seccomp_export_bpf()'s bytes, through a memfd. */
static int export_filter(struct pf *c)
{
	int fd = memfd_create("sf-profile", MFD_CLOEXEC), r;
	struct stat st;
	ssize_t got;

	if (fd < 0)
		return -errno;
	if ((r = seccomp_export_bpf(c->ctx, fd)) < 0)
		goto out;
	r = fstat(fd, &st) ? -errno : 0;
	if (r)
		goto out;
	if (st.st_size <= 0 || st.st_size % sizeof(struct sock_filter) ||
	    st.st_size > C2E_MAX_INSNS * (off_t)sizeof(struct sock_filter)) {
		r = pf_fail(c, "", "libseccomp made a filter of %lld bytes: not 1 to %d "
			    "instructions", (long long)st.st_size, C2E_MAX_INSNS);
		goto out;
	}
	c->out->insns = malloc(st.st_size);
	r = c->out->insns ? 0 : -ENOMEM;
	if (!r && (got = pread(fd, c->out->insns, st.st_size, 0)) != st.st_size)
		r = got < 0 ? -errno : -EIO;
	c->out->len = st.st_size / sizeof(struct sock_filter);
out:
	close(fd);
	return r;
}

/* What the conditions are judged against: the caps and the kernel. */
static int judge(struct pf *c, const struct sf_profile_opts *o)
{
	struct utsname u;
	int r;

	if (o && o->caps) {
		if (sf_profile_parse_caps(o->caps, &c->caps))
			return pf_fail(c, "", "caps \"%s\": not \"all\", \"none\" or a list of "
				       "capability names", o->caps);
	} else if ((r = sf_profile_task_caps(o ? o->caps_pid : 0, &c->caps))) {
		return pf_fail(c, "", "capget(%d): %s", o ? (int)o->caps_pid : 0, strerror(-r));
	}
	if (!(o && o->kernel) && uname(&u))
		return -errno;
	if (pf_kernel_version(o && o->kernel ? o->kernel : u.release, &c->kmajor, &c->kminor))
		return pf_fail(c, "", "kernel \"%s\": not a kernel version (major.minor)",
			       o && o->kernel ? o->kernel : u.release);
	return 0;
}

/* Every input judge() and the compile read, so that what judge() reads
 * and what a cache is keyed by cannot drift apart: the API level is
 * libseccomp's probe of which actions this kernel takes. */
int sf_profile_inputs(const struct sf_profile_opts *opts, char *buf, size_t size)
{
	struct sf_profile_error err;
	struct sf_profile spare;
	struct pf c = { .out = &spare, .err = &err };
	const struct scmp_version *v = seccomp_version();
	int r, n;

	if (!opts || !opts->caps)
		return -EINVAL;
	if ((r = judge(&c, opts)))
		return r;
	n = snprintf(buf, size, "libsfprofile %s libseccomp %u.%u.%u api %u arch 0x%x caps 0x%llx "
		     "kernel %d.%d lenient %d gate %d", SF_VERSION, v ? v->major : 0,
		     v ? v->minor : 0, v ? v->micro : 0, seccomp_api_get(), seccomp_arch_native(),
		     (unsigned long long)c.caps, c.kmajor, c.kminor, !!opts->lenient, !!opts->gate);
	return n < 0 || (size_t)n >= size ? -ENOSPC : n;
}

/* The document: one JSON object, nothing but blanks after it. */
static struct json_object *parse_json(struct pf *c, const char *json, size_t len, int *r)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *root = NULL;
	enum json_tokener_error e;
	size_t end;

	*r = -ENOMEM;
	if (!tok)
		return NULL;
	*r = -EINVAL;
	if (len > INT32_MAX) {
		*r = pf_fail(c, "", "too large");
		goto out;
	}
	root = json_tokener_parse_ex(tok, json, (int)len);
	e = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	while (end < len && strchr(" \t\r\n", json[end]) && json[end])
		end++;
	if (!root || e != json_tokener_success)
		pf_fail(c, "", "not JSON: %s at byte %zu", json_tokener_error_desc(
				e == json_tokener_continue ? json_tokener_error_parse_eof : e), end);
	else if (end < len)
		pf_fail(c, "", "not JSON: text after the object at byte %zu", end);
	else if (json_object_get_type(root) != json_type_object)
		pf_fail(c, "", "expected an object (the linux.seccomp object)");
	else
		*r = 0;
out:
	if (*r && root) {
		json_object_put(root);
		root = NULL;
	}
	json_tokener_free(tok);
	return root;
}

static int compile(struct pf *c, struct json_object *root, const struct sf_profile_opts *o)
{
	size_t i;
	int r;

	c->gate = o && o->gate;
	if ((r = judge(c, o)) || (r = check_listener(c, root)) ||
	    (r = action_of(c, root, "", "defaultAction", "defaultErrnoRet", "defaultErrno",
			   &c->dflt)))
		return r;
	c->out->default_action = c->dflt;
	c->out->actions = pf_act_bit(c->dflt);
	c->ctx = seccomp_init(c->dflt);
	if (!c->ctx)
		return pf_fail(c, "defaultAction", "libseccomp refused the action");
	if ((r = arches(c, root)) || (r = flags(c, root)) || (r = syscalls(c, root)))
		return r;
	for (i = 0; i < c->n_names; i++)
		c->out->n_gap_rules += c->gap[i];
	c->out->n_rules = (unsigned int)c->n_names;
	if (c->n_names > 32 && (r = seccomp_attr_set(c->ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2)))
		return pf_fail(c, "", "libseccomp: binary tree: %s", strerror(-r));
	return export_filter(c);
}

int sf_profile_compile(const char *json, size_t len, const struct sf_profile_opts *opts,
		       struct sf_profile *out, struct sf_profile_error *err)
{
	return pf_compile(json, len, opts, NULL, out, err);
}

int pf_compile(const char *json, size_t len, const struct sf_profile_opts *opts,
	       struct pf_rec *rec, struct sf_profile *out, struct sf_profile_error *err)
{
	struct sf_profile_error spare;
	struct pf c = { .out = out, .err = err ? err : &spare, .rec = rec };
	struct json_object *root;
	size_t i;
	int r;

	memset(out, 0, sizeof(*out));
	memset(c.err, 0, sizeof(*c.err));
	c.lenient = opts && opts->lenient;
	root = parse_json(&c, json, len, &r);
	if (root && !(r = pf_scan_text(&c, json, len)) && !(r = pf_check_keys(&c, root)))
		r = compile(&c, root, opts);
	if (c.ctx)
		seccomp_release(c.ctx);
	for (i = 0; i < c.n_names; i++)
		free(c.names[i]);
	free(c.names);
	free(c.gap);
	json_object_put(root);
	if (r) {
		sf_profile_free(out);
		if (rec)
			pf_rec_free(rec);
		if (!c.err->msg[0])
			snprintf(c.err->msg, sizeof(c.err->msg), "%s", strerror(-r));
	}
	return r;
}

int pf_read_file(const char *path, char **buf, size_t *len, struct sf_profile_error *err)
{
	/* "-" is stdin, as for every file the command lines read. */
	bool in = !strcmp(path, "-");
	int fd = in ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC), r;
	size_t cap = 0;
	ssize_t n;

	*buf = NULL;
	*len = 0;
	r = fd < 0 ? -errno : 0;
	while (!r) {
		if (*len + 1 >= cap) {
			char *nb = cap < (64 << 20) ? realloc(*buf, (cap = cap ? cap * 2 : 65536)) : NULL;

			if (!nb) {
				r = cap >= (64 << 20) ? -EFBIG : -ENOMEM;
				break;
			}
			*buf = nb;
		}
		n = read(fd, *buf + *len, cap - *len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? -errno : 0;
			break;
		}
		*len += (size_t)n;
	}
	if (fd >= 0 && !in)
		close(fd);
	if (r) {
		free(*buf);
		*buf = NULL;
		if (err)
			snprintf(err->msg, sizeof(err->msg), "%s: %s", path, strerror(-r));
	} else {
		(*buf)[*len] = '\0';
	}
	return r;
}

int sf_profile_compile_file(const char *path, const struct sf_profile_opts *opts,
			    struct sf_profile *out, struct sf_profile_error *err)
{
	char *buf;
	size_t len;
	int r;

	memset(out, 0, sizeof(*out));
	if (!(r = pf_read_file(path, &buf, &len, err)))
		r = sf_profile_compile(buf, len, opts, out, err);
	free(buf);
	return r;
}

void pf_free_lines(char **list, size_t n)
{
	while (n)
		free(list[--n]);
	free(list);
}

void sf_profile_free(struct sf_profile *p)
{
	free(p->insns);
	pf_free_lines(p->warnings, p->n_warnings);
	memset(p, 0, sizeof(*p));
}
