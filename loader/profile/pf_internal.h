/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Shared by libsfprofile's files only. Module order (which may call which):
 *   gate.c (sf_profile_gate: a profile's gate for a runtime's seccomp agent),
 *   forked.c (sf_profile_rules_new() in a child process)
 *     -> explain.c (which rule decides a call)
 *     -> compile.c (the document, its syscalls, libseccomp, the export)
 *     -> strict.c (the keys a profile may hold; repeated keys and integers
 *                  out of range, from the text)
 *     -> fields.c (typed JSON fields with their paths; the names of actions,
 *                  operators, architectures, flags and errnos)
 *     -> caps.c (capability sets, the kernel release, the tier text)
 */
#ifndef SF_PROFILE_INTERNAL_H
#define SF_PROFILE_INTERNAL_H

#include "profile.h"

#include <stdbool.h>
#include <json-c/json.h>
#include <seccomp.h>

/* What a compilation applied, for sf_profile_gate() (gate.c) and
 * sf_profile_rules_explain() (explain.c): each rule given to libseccomp
 * (after includes/excludes, and unknown names left out; rules equal to the
 * default too, with as_default, only when with_default asks), and the
 * architectures added. */
struct pf_rule {
	size_t entry;               /* syscalls[entry] */
	char *name;
	char *path;                 /* the name's: "syscalls[3].names[1]" */
	uint32_t act;
	struct scmp_arg_cmp *conds;
	size_t n;
	bool as_default;            /* its action is the default's: libseccomp
				       was not given it */
};
struct pf_rec {
	bool with_default;          /* record rules equal to the default too */
	struct pf_rule *rules;
	size_t n_rules;
	char **arches;              /* the names as the profile gives them */
	uint32_t *arch_tokens;      /* libseccomp's SCMP_ARCH_* of each */
	size_t n_arches;
	bool caps_cond, kernel_cond; /* an includes/excludes with caps, minKernel */
};
void pf_rec_free(struct pf_rec *r);

/* What sf_profile_rules_new() keeps (explain.c; forked.c packs it). */
struct sf_profile_rules {
	struct sf_profile p;
	struct pf_rec rec;
};

/* One compilation. */
struct pf {
	struct sf_profile *out;
	struct sf_profile_error *err;
	uint64_t caps;              /* the effective set judged */
	int kmajor, kminor;         /* the kernel release judged */
	scmp_filter_ctx ctx;
	uint32_t dflt;              /* the default action, with its data */
	/* The syscall names given a rule, and whether one of their rules
	 * has an action the tracepoint tier cannot reproduce. */
	char **names;
	bool *gap;
	size_t n_names;
	bool gate;                  /* opts->gate: SCMP_ACT_NOTIFY, listenerPath read */
	bool lenient;               /* opts->lenient: unknown and repeated keys warned */
	struct pf_rec *rec;         /* NULL, or what to record */
};

/* sf_profile_compile(), recording into rec when it is not NULL. */
int pf_compile(const char *json, size_t len, const struct sf_profile_opts *opts,
	       struct pf_rec *rec, struct sf_profile *out, struct sf_profile_error *err);
/* A file read whole (at most 64 MiB) into *buf (NUL-terminated): 0, or
 * -errno with err's message "path: why" (err may be NULL). */
int pf_read_file(const char *path, char **buf, size_t *len, struct sf_profile_error *err);
/* Frees n lines and the list. */
void pf_free_lines(char **list, size_t n);

/* The text's repeated keys and integers out of range (root: the document
 * json-c made of it, an object): 0, or -EINVAL naming the path (repeated
 * keys are warnings when c->lenient). */
int pf_scan_text(struct pf *c, const char *json, size_t len);
/* Keys that are in no object's list of sf_profile_keys(): -EINVAL naming
 * the first, or a warning each when c->lenient. */
int pf_check_keys(struct pf *c, struct json_object *root);
/* pf_fail(), or with c->lenient, pf_warn() and 0. */
int pf_refuse(struct pf *c, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Records "path: why" in c->err; returns -EINVAL. */
int pf_fail(struct pf *c, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Appends a line to a list of lines; 0 or -ENOMEM. */
int pf_append(char ***list, size_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Appends "path: why" to c->out's warnings; 0 or -ENOMEM. */
int pf_warn(struct pf *c, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* snprintf() for JSON paths: a path cut short is still a path. */
void pf_path(char *out, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* obj[key] when it is of type t (JSON null counts as absent, as in Go):
 * 0 with *v NULL when absent, -EINVAL naming path.key when of another type. */
int pf_field(struct pf *c, struct json_object *obj, const char *path, const char *key,
	     enum json_type t, struct json_object **v);
/* An unsigned integer no larger than max. */
int pf_uint(struct pf *c, struct json_object *v, const char *path, uint64_t max,
	    uint64_t *out);
/* Element i of array a as a string. */
int pf_string_at(struct pf *c, struct json_object *a, size_t i, const char *path,
		 const char **s);

/* "SCMP_ACT_ERRNO" -> SCMP_ACT_ERRNO(0); *takes_errno for ERRNO and TRACE. */
int pf_action(struct pf *c, const char *name, const char *path, uint32_t *act,
	      bool *takes_errno);
int pf_op(struct pf *c, const char *name, const char *path, enum scmp_compare *op);
/* "SCMP_ARCH_X86_64" -> SCMP_ARCH_X86_64. */
int pf_arch(struct pf *c, const char *name, const char *path, uint32_t *arch);
/* "SECCOMP_FILTER_FLAG_LOG" -> SF_PROFILE_FLAG_LOG. */
int pf_flag(struct pf *c, const char *name, const char *path, unsigned int *flag);
/* "EPERM" -> 1. */
int pf_errno_name(struct pf *c, const char *name, const char *path, uint64_t *e);
/* SF_PROFILE_ACT_* of a return value. */
unsigned int pf_act_bit(uint32_t ret);
/* The names runc reads: SCMP_ACT_* of an action (its data aside), SCMP_CMP_*. */
const char *pf_action_name(uint32_t act);
const char *pf_op_name(enum scmp_compare op);

/* The capability named name (CAP_ optional, any case), or -1. */
int pf_cap_number(const char *name);
/* "major.minor[...]" as moby reads it: 0 or -EINVAL. */
int pf_kernel_version(const char *s, int *major, int *minor);
/* The native architecture in moby's names ("amd64"). */
const char *pf_native_arch(void);

#endif
