/* SPDX-License-Identifier: GPL-2.0-only */
/* Shared by sfilter-oci-hook's files: oci_hook.c (the state's fields, the
 * annotations, the attach, main), oci_hook_policy.c (stdin and files
 * read whole, JSON, config.json, the capabilities, the policy compiled)
 * and oci_hook_cgroup.c (the container's cgroup). */
#ifndef SF_OCI_HOOK_H
#define SF_OCI_HOOK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/filter.h>

#include "oci_spec.h" /* the annotations, ANN_* */

struct json_object;

/* What the hook attaches: a classic filter and the flags it came with
 * (a profile's own, SF_FLAG_TSYNC and SF_FLAG_LOG). */
struct hook_policy {
	struct sock_filter *insns;
	size_t len;
	unsigned int flags;
	/* A profile's: its text, and the caps and reading it was compiled
	 * with, for sfilterd to name each event's rule (SF_MSG_PROFILE);
	 * json NULL for a classic filter. */
	char *json;
	size_t json_len;
	char caps[1024];
	bool lenient;
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

/* The directory profiles are named in (--profile-dir): its path, and a
 * descriptor of it opened once (O_PATH). */
struct hook_profiles {
	const char *path;
	int fd;
};
#define HOOK_PROFILE_DIR "/etc/sfilter/profiles"
/* Where recordings are written (--record-dir). */
#define HOOK_RECORD_DIR "/var/lib/sfilter/records"

/* The admin attach of p to the container's cgroup: the filter's id. Fails
 * the hook on any error. conn: the connection kept open for the next
 * request, or NULL (closed). */
uint32_t hook_attach(const char *id, const char *cgroup, const struct hook_policy *p,
		     unsigned int flags, bool verbose, int *conn);

/* io.sfilter.record (oci_hook_record.c): at createRuntime, the complain
 * filter attached to cgroup and its recording begun; at poststop, the
 * profile written (0; a container that was no recording: 0 too). */
void hook_record_start(const char *id, const char *cgroup, const struct oci_ask *ask,
		       const char *dirpath, bool verbose);
int hook_record_finish(const char *id, const char *dirpath);

/* The policy an annotation names: the file name in dir (or a path in
 * it), a container seccomp profile when its first byte that is not a
 * blank is '{', else a classic filter; or config.json's linux.seccomp
 * (take_seccomp). Its caps conditions are judged against config's
 * bounding set; lenient: the profile read as runc reads it. Fails the
 * hook on any error, whose line never quotes the file. */
void hook_compile(struct json_object *config, const struct hook_profiles *dir,
		  const char *name, bool take_seccomp, bool lenient, struct hook_policy *out);

/* The cgroup v2 directory (host path) of the container's process pid,
 * named by pidfd: one of its own, which holds no other process and not
 * the hook (the runtime's), else the hook fails (oci_hook_cgroup.c). */
void hook_cgroup(pid_t pid, int pidfd, char *out, size_t size);

#endif
