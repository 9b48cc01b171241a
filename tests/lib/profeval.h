/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * An evaluator of container seccomp profiles, written here from the JSON,
 * the runtime-spec and moby's filtering, without libsfprofile's code: the
 * tests compare what it says against the compiled filter.
 */
#ifndef SF_TESTS_PROFEVAL_H
#define SF_TESTS_PROFEVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

/* Argument vectors pe_vectors() makes at most. */
#define MAX_VECS 64

/* x86_64, i386 and x32: the audit arch seccomp_data carries, libseccomp's
 * token, and the bit x32's numbers carry. */
struct pe_arch { const char *name; uint32_t audit; uint32_t scmp; uint32_t nr_bit; };
extern const struct pe_arch pe_arches[3];

/* Whether the JSON array of strings a holds s. */
bool pe_in_list(struct json_object *a, const char *s);
/* moby: includes needs all its caps and the native arch; an excludes
 * cap or arch skips (minKernel is taken as met). */
bool pe_applies(struct json_object *e, uint64_t caps);
/* An unsigned field of o, 0 when absent. */
uint64_t pe_jget(struct json_object *o, const char *k);
/* runc: args on distinct indexes must all match; when two share an
 * index, any one matching is enough. */
bool pe_args_match(struct json_object *args, const uint64_t *a);
/* An entry's action ("action"/"errnoRet", or the default's keys). */
uint32_t pe_action_value(struct json_object *e, const char *key, const char *ekey);
/* What the profile says for name with args a; *overlap when the evaluator
 * would have to guess between rules. */
uint32_t pe_expected(struct json_object *prof, const char *name, const uint64_t *a,
		     uint64_t caps, bool *overlap);
/* Argument vectors for name from the profile's conditions (at most
 * MAX_VECS; the low 32 bits only with arg32). */
size_t pe_vectors(struct json_object *prof, const char *name, uint64_t v[][6], bool arg32);

#endif
