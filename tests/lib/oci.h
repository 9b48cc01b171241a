/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * OCI bundles for container tests: a rootfs made of Debian's static
 * busybox, and a config.json from the runtime's own `spec`, changed to
 * run the test's command with sfilter-oci-hook as its createRuntime hook.
 * The runtimes are the real runc and crun, with their state under the
 * bundle so that nothing is left on the machine.
 */
#ifndef SF_TESTS_OCI_H
#define SF_TESTS_OCI_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Profiles for container tests: one whose mkdir fails with EACCES (13),
 * and one libsfprofile refuses at syscalls[0].action. */
#define OCI_PROFILE_ERRNO_MKDIR \
	"{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"mkdir\", " \
	"\"mkdirat\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 13}]}\n"
#define OCI_PROFILE_BROKEN \
	"{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"uname\"], " \
	"\"action\": \"SCMP_ACT_NOPE\"}]}\n"

struct oci_bundle {
	char dir[256];      /* the bundle: config.json, rootfs/, state/, sync/ */
	char runtime[256];  /* the runtime binary */
	char id[64];        /* the container id */
	bool no_pivot;      /* root on an initramfs: pivot_root(2) is refused */
};

/* The path of runtime name ("runc", "crun") into out; false when it is
 * not installed. */
bool oci_find_runtime(const char *name, char *out, size_t size);
/* Debian's static busybox (package busybox-static): false with why when
 * there is none (a dynamic one cannot run in a rootfs without its libc). */
bool oci_find_busybox(char *out, size_t size, char *why, size_t wsize);

/* Makes the busybox rootfs in dir/rootfs (dir must exist) and its tarball
 * dir/rootfs.tar, whose path goes into tar: an image an engine imports
 * offline (`podman import`, `docker import`). false (test failed) on error. */
bool oci_rootfs_tar(const char *dir, const char *busybox, char *tar, size_t size);

/* Makes a bundle in a new temporary directory for runtime: rootfs,
 * config.json from `runtime spec`, process.args = argv (NULL-terminated),
 * a read-write bind of dir/sync at /sync. false (test failed) on error. */
bool oci_bundle_make(struct oci_bundle *b, const char *runtime, const char *busybox,
		     const char *const *argv);
/* Sets annotation key to value in config.json (value NULL: removes it). */
bool oci_annotate(struct oci_bundle *b, const char *key, const char *value);
/* Sets linux.seccomp to the JSON object in the file at path. */
bool oci_set_seccomp(struct oci_bundle *b, const char *path);
/* Adds hook (with its arguments after argv[0] and env, both
 * NULL-terminated) as a createRuntime hook. */
bool oci_add_hook(struct oci_bundle *b, const char *hook, const char *const *args,
		  const char *const *env);
/* The same at stage ("createRuntime", "poststop", ...). */
bool oci_add_hook_at(struct oci_bundle *b, const char *stage, const char *hook,
		     const char *const *args, const char *const *env);
/* Writes text to dir/name; its path into out. */
bool oci_write_file(struct oci_bundle *b, const char *name, const char *text,
		    char *out, size_t size);

/* `runtime run` of the bundle, in the foreground: returns its wait status
 * and its stdout and stderr in out. */
int oci_run(struct oci_bundle *b, int timeout_s, char *out, size_t size);
/* The same in the background: its pid, its output going to dir/out.txt. */
pid_t oci_run_start(struct oci_bundle *b);
/* Waits for a background run: its wait status; its output into out. */
int oci_run_wait(struct oci_bundle *b, pid_t pid, int timeout_s, char *out, size_t size);

/* `runtime exec` of argv (NULL-terminated) in the running container: its
 * wait status, its stdout and stderr in out. */
int oci_exec(struct oci_bundle *b, const char *const *argv, int timeout_s, char *out,
	     size_t size);

/* Deletes the container (if left) and the bundle. */
void oci_bundle_remove(struct oci_bundle *b);

#endif
