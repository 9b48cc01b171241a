/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What sfilter-oci-hook and sfilter-runc both read of an OCI bundle, read
 * the same way by both (oci_hook_spec.c): files whole under a bound, JSON
 * objects, members of config.json, the bounding set a profile's caps
 * conditions are judged against, a profile named in the profile
 * directory, and the io.sfilter.* annotations.
 *
 * Every function returns 0 (or a descriptor) or -errno, with why: one
 * line saying what is wrong, for the caller to put behind what it read
 * ("config.json: ", "io.sfilter.profile: web.json: "). No line quotes a
 * file's content.
 */
#ifndef SF_OCI_SPEC_H
#define SF_OCI_SPEC_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

struct json_object;

/* The annotations the hook reads. */
#define ANN_PREFIX  "io.sfilter."
#define ANN_PROFILE ANN_PREFIX "profile"
#define ANN_TAKE    ANN_PREFIX "take-seccomp"
#define ANN_MODE    ANN_PREFIX "mode"
#define ANN_ARM     ANN_PREFIX "arm"
/* "true": the profile read as runc reads it (unknown and repeated keys
 * ignored), not refused (libsfprofile's sf_profile_opts.lenient). */
#define ANN_LENIENT ANN_PREFIX "profile-lenient"
/* A recording: the container runs with nothing enforced (a complain
 * filter on its cgroup), and when it stops the hook writes the profile
 * its calls make to this file name in the record directory; with
 * record-merge "true", merged with what the file allows already. */
#define ANN_RECORD  ANN_PREFIX "record"
#define ANN_RECORD_MERGE ANN_PREFIX "record-merge"

/*
 * A member of config.json itself (not an annotation): the container's
 * own linux.seccomp, kept there by sfilter-runc when it put the profile's
 * gate in its place. With io.sfilter.take-seccomp the hook takes this one
 * when it is there: the gate only says which calls go to sfilterd, the
 * profile says what they get. Runtimes ignore members they do not know
 * (runtime-spec config.md, "Extensibility").
 */
#define OCI_KEPT_SECCOMP "io.sfilter.seccomp"

/* config.json: tens of kilobytes; the bound stops a file that is not one
 * from being read whole. */
#define OCI_FILE_MAX (16 << 20)
/* Profiles: Docker's default is 20 KiB; classic2ebpf reads no filter
 * file larger than this either. */
#define OCI_PROFILE_MAX (1 << 20)

/* fmt's text as one line into line (size bytes): every control
 * character a blank, whatever a path or a message holds; both binaries
 * end with such a line, which reaches whoever made the container. */
void oci_one_line(char *line, size_t size, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

/* The whole of fd, at most cap bytes (NUL-terminated, malloc'd): 0,
 * -EFBIG when there is more, or the read's -errno. */
int oci_read_fd(int fd, size_t cap, char **buf, size_t *len);
/* The same, of a file (regular, at most cap bytes) when is_file; else of
 * anything (stdin). why: "not a regular file", "more than N bytes", ... */
int oci_slurp_fd(int fd, bool is_file, size_t cap, char **buf, size_t *len, char *why,
		 size_t wsize);
/* The JSON object the text is, or NULL with why: "not JSON: json-c's
 * message", "not a JSON object". */
struct json_object *oci_parse_object(const char *buf, size_t len, char *why, size_t wsize);

/* doc's member at path (a.b.c) into *out, NULL when a step is absent or
 * null; -EINVAL when a step is there but not an object ("linux: not an
 * object"). */
int oci_member(struct json_object *doc, const char *path, struct json_object **out,
	       char *why, size_t wsize);

/*
 * The capabilities a profile's includes/excludes.caps are judged against,
 * as a comma list for libsfprofile ("none" without one):
 * process.capabilities.bounding, the set moby's setupSeccomp() judges
 * them by. A name libsfprofile does not know is left out: no profile
 * condition it can read could name it.
 */
int oci_bounding_caps(struct json_object *config, char *list, size_t size, char *why,
		      size_t wsize);

/*
 * The profile a name designates in the profile directory dir (dirfd its
 * O_PATH descriptor; an absolute name in dir is taken as that name),
 * opened for reading beneath it with no symbolic link on the way, nor a
 * magic link of /proc, without waiting for a FIFO's writer. Its
 * descriptor, or -errno with why: "not a file in DIR (profiles are named
 * there)", "no such file in DIR", ... The caller checks what it is
 * (oci_slurp_fd() with is_file).
 */
int oci_open_profile(int dirfd, const char *dir, const char *name, char *why, size_t wsize);

/* What a container's io.sfilter.* annotations ask. */
struct oci_ask {
	const char *profile;  /* io.sfilter.profile, or NULL */
	bool take;            /* io.sfilter.take-seccomp=true */
	bool lenient;         /* io.sfilter.profile-lenient=true */
	bool sandbox;         /* a Kubernetes pod's sandbox (pause) container */
	const char *record;   /* io.sfilter.record: a file name, or NULL */
	bool record_merge;    /* io.sfilter.record-merge=true */
	unsigned int flags;   /* SF_FLAG_SHADOW, _COMPLAIN, _AT_EXEC of mode and arm */
};

/*
 * The annotations ann (an object, or NULL) read into ask. A name under
 * io.sfilter. that is none of the hook's, or a value that is not one the
 * annotation takes, is -EINVAL ("io.sfilter.profle: unknown annotation
 * (known: ...)"). A container that asks for nothing (neither a profile
 * nor take-seccomp nor a recording), or a pod's sandbox, returns 0 before
 * mode and arm and profile-lenient are read: it is left alone. A
 * recording goes with neither a profile nor take-seccomp nor a mode (it
 * enforces nothing), and names a file: letters, digits, '.', '_' and '-',
 * not starting with '.'.
 */
int oci_ask_read(struct json_object *ann, struct oci_ask *ask, char *why, size_t wsize);
/* Whether value is one that annotation key (mode, arm, take-seccomp)
 * takes: 0 and its flags (take-seccomp: 1 for true), or -EINVAL with why
 * "not enforce, shadow or complain". */
int oci_ask_choice(const char *key, const char *value, unsigned int *flags, char *why,
		   size_t wsize);

#endif
