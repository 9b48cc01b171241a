/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by sfilter-oci-hook's files: oci_hook.c (the state's fields, the
 * annotations, the attach, main) and oci_hook_policy.c (stdin and files
 * read whole, JSON, config.json, the capabilities, the policy compiled). */
#ifndef SF_OCI_HOOK_H
#define SF_OCI_HOOK_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/filter.h>

struct json_object;

/* The annotations the hook reads. */
#define ANN_PREFIX  "io.sfilter."
#define ANN_PROFILE ANN_PREFIX "profile"
#define ANN_TAKE    ANN_PREFIX "take-seccomp"
#define ANN_MODE    ANN_PREFIX "mode"
#define ANN_ARM     ANN_PREFIX "arm"

/* What the hook attaches: a classic filter and the flags it came with
 * (a profile's own, SF_FLAG_TSYNC and SF_FLAG_LOG). */
struct hook_policy {
	struct sock_filter *insns;
	size_t len;
	unsigned int flags;
};

/* Prints "sfilter-oci-hook: ..." as one line on stderr and exits 1. */
void hook_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* The whole file at path (NULL: stdin), at most cap bytes, NUL-terminated
 * and malloc'd; fails the hook as "what: path: why". */
char *hook_slurp(const char *what, const char *path, size_t cap, size_t *len);

/* The JSON object in the file at path (NULL: stdin), at most cap bytes;
 * fails the hook as "what: not JSON: json-c's message". */
struct json_object *hook_read_object(const char *what, const char *path, size_t cap);

/* <bundle>/config.json, an object; fails the hook when it is not one. */
struct json_object *hook_read_config(const char *bundle);

/* The policy an annotation names: the file at path (a relative path is
 * taken from the bundle), a container seccomp profile when its first
 * byte that is not a blank is '{', else a classic filter; or
 * config.json's linux.seccomp (take_seccomp). Its caps conditions are
 * judged against config's bounding set. Fails the hook on any error. */
void hook_compile(struct json_object *config, const char *bundle, const char *path,
		  bool take_seccomp, struct hook_policy *out);

#endif
