/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by libsfprofile's files only. Module order (which may call which):
 *   compile.c (the document, its syscalls, libseccomp, the export)
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
};

/* Records "path: why" in c->err; returns -EINVAL. */
int pf_fail(struct pf *c, const char *path, const char *fmt, ...)
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

/* The capability named name (CAP_ optional, any case), or -1. */
int pf_cap_number(const char *name);
/* "major.minor[...]" as moby reads it: 0 or -EINVAL. */
int pf_kernel_version(const char *s, int *major, int *minor);
/* The native architecture in moby's names ("amd64"). */
const char *pf_native_arch(void);

#endif
