// SPDX-License-Identifier: GPL-2.0-only
/*
 * What sfilter-oci-hook and sfilter-runc both read of an OCI bundle
 * (oci_spec.h). Both run as root with input that is partly the
 * container's creator's (the annotations, and in Kubernetes the pod's
 * author chooses them), and both answer that creator with one line: so a
 * profile is opened only beneath the profile directory, never through a
 * symbolic link, and only when it is a regular file of bounded size, and
 * no line quotes what a file holds.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "oci_spec.h"
#include "profile.h"
#include "sfilter.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <json-c/json.h>

void oci_one_line(char *line, size_t size, const char *fmt, va_list ap)
{
	char *p;

	vsnprintf(line, size, fmt, ap);
	for (p = line; *p; p++)
		if ((unsigned char)*p < 0x20)
			*p = ' ';
}

int oci_read_fd(int fd, size_t cap, char **buf, size_t *len)
{
	size_t size = 0, got = 0;
	char *b = NULL, *nb;
	ssize_t n;
	int e;

	for (;;) {
		/* Room for one byte past cap (to know there is more) and the NUL. */
		if (got + 1 >= size) {
			size = size ? 2 * size : 65536;
			size = size > cap + 2 ? cap + 2 : size;
			if (!(nb = realloc(b, size))) {
				free(b);
				return -ENOMEM;
			}
			b = nb;
		}
		n = read(fd, b + got, size - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if ((got += (size_t)n) > cap) {
			free(b);
			return -EFBIG;
		}
	}
	if (n < 0) {
		e = errno;
		free(b);
		return -e;
	}
	b[got] = '\0';
	*buf = b;
	*len = got;
	return 0;
}

int oci_slurp_fd(int fd, bool is_file, size_t cap, char **buf, size_t *len, char *why,
		 size_t wsize)
{
	struct stat st;
	int r;

	if (is_file && fstat(fd, &st)) {
		r = -errno;
		snprintf(why, wsize, "%s", strerror(-r));
		return r;
	}
	/* A FIFO would keep the reader (and the container's start) waiting,
	 * a device could be anything. */
	if (is_file && !S_ISREG(st.st_mode)) {
		snprintf(why, wsize, "not a regular file");
		return -EINVAL;
	}
	r = is_file && (uint64_t)st.st_size > cap ? -EFBIG : oci_read_fd(fd, cap, buf, len);
	if (r == -EFBIG)
		snprintf(why, wsize, "more than %zu bytes", cap);
	else if (r < 0)
		snprintf(why, wsize, "%s", strerror(-r));
	return r;
}

struct json_object *oci_parse_object(const char *buf, size_t len, char *why, size_t wsize)
{
	const char *nul = memchr(buf, '\0', len);
	struct json_tokener *tok;
	struct json_object *o;
	enum json_tokener_error e;
	size_t end;

	/* json-c would take a NUL for the end of the text. */
	if (nul) {
		snprintf(why, wsize, "not JSON: a NUL byte at byte %zu", (size_t)(nul - buf));
		return NULL;
	}
	if (len > INT_MAX || !(tok = json_tokener_new())) {
		snprintf(why, wsize, "%s", strerror(len > INT_MAX ? EFBIG : ENOMEM));
		return NULL;
	}
	o = json_tokener_parse_ex(tok, buf, (int)len);
	e = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	end += strspn(buf + end, " \t\r\n");
	/* Text cut short leaves the tokener waiting for more: for a whole
	 * document, that is the end of data. */
	if (e == json_tokener_continue)
		e = json_tokener_error_parse_eof;
	if (!o || e != json_tokener_success)
		snprintf(why, wsize, "not JSON: %s", json_tokener_error_desc(e));
	else if (end < len)
		snprintf(why, wsize, "not JSON: text after the value at byte %zu", end);
	else if (json_object_get_type(o) != json_type_object)
		snprintf(why, wsize, "not a JSON object");
	else
		return o;
	json_object_put(o);
	return NULL;
}

int oci_member(struct json_object *doc, const char *path, struct json_object **out,
	       char *why, size_t wsize)
{
	char step[64], seen[128] = "";
	struct json_object *o = doc;
	const char *p = path, *dot;
	size_t n;

	while (o && *p) {
		if (!json_object_is_type(o, json_type_object)) {
			snprintf(why, wsize, "%s: not an object", seen);
			return -EINVAL;
		}
		dot = strchrnul(p, '.');
		n = (size_t)(dot - p) < sizeof(step) ? (size_t)(dot - p) : sizeof(step) - 1;
		memcpy(step, p, n);
		step[n] = '\0';
		snprintf(seen, sizeof(seen), "%.*s", (int)(dot - path), path);
		if (!json_object_object_get_ex(o, step, &o))
			o = NULL;
		p = *dot ? dot + 1 : dot;
	}
	*out = o;
	return 0;
}

int oci_bounding_caps(struct json_object *config, char *list, size_t size, char *why,
		      size_t wsize)
{
	static const char path[] = "process.capabilities.bounding";
	struct json_object *b, *e;
	uint64_t all = 0, one;
	size_t i, used = 0;
	const char *name;
	int r;

	snprintf(list, size, "none");
	if ((r = oci_member(config, path, &b, why, wsize)) || !b)
		return r;
	if (!json_object_is_type(b, json_type_array)) {
		snprintf(why, wsize, "%s: not an array", path);
		return -EINVAL;
	}
	for (i = 0; i < json_object_array_length(b); i++) {
		e = json_object_array_get_idx(b, i);
		if (!e || !json_object_is_type(e, json_type_string)) {
			snprintf(why, wsize, "%s[%zu]: not a string", path, i);
			return -EINVAL;
		}
		name = json_object_get_string(e);
		if (strpbrk(name, ", ") || sf_profile_parse_caps(name, &one) < 0 ||
		    (one & all) || !one || used + strlen(name) + 2 > size)
			continue;
		all |= one;
		used += (size_t)snprintf(list + used, size - used, "%s%s",
					 used ? "," : "", name);
	}
	return 0;
}

/*
 * Names are the host's: nothing is resolved through a container's rootfs
 * (openat2(2): RESOLVE_BENEATH, RESOLVE_NO_SYMLINKS, RESOLVE_NO_MAGICLINKS;
 * O_NONBLOCK so that a FIFO is opened, then refused, not waited on).
 */
int oci_open_profile(int dirfd, const char *dir, const char *name, char *why, size_t wsize)
{
	struct open_how how = {
		.flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	size_t n = strlen(dir);
	const char *rel = name;
	int fd, e;

	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (name[0] == '/' && !strncmp(name, dir, n) && name[n] == '/')
		rel = name + n + strspn(name + n, "/");
	fd = (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));
	if (fd >= 0)
		return fd;
	e = errno;
	if (e == EXDEV || (e == ENOENT && !*rel))
		snprintf(why, wsize, "not a file in %s (profiles are named there)", dir);
	else if (e == ELOOP)
		snprintf(why, wsize, "a symbolic link on the way (%s takes none)", dir);
	else if (e == ENOENT)
		snprintf(why, wsize, "no such file in %s", dir);
	else
		snprintf(why, wsize, "%s", strerror(e));
	return -e;
}

struct choice {
	const char *name;
	unsigned int flags;
};

static const struct choice modes[] = {
	{ "enforce", 0 }, { "shadow", SF_FLAG_SHADOW }, { "complain", SF_FLAG_COMPLAIN },
	{ NULL, 0 },
};
static const struct choice arms[] = {
	{ "exec", SF_FLAG_AT_EXEC }, { "now", 0 }, { NULL, 0 },
};
static const struct choice takes[] = {
	{ "false", 0 }, { "true", 1 }, { NULL, 0 },
};

int oci_ask_choice(const char *key, const char *value, unsigned int *flags, char *why,
		   size_t wsize)
{
	const struct choice *c = !strcmp(key, ANN_MODE) ? modes :
				 !strcmp(key, ANN_ARM) ? arms : takes;
	const char *said = c == modes ? "enforce, shadow or complain" :
			   c == arms ? "exec or now" : "true or false";
	size_t i;

	/* Absent: the first, the default. */
	if (!value) {
		*flags = c[0].flags;
		return 0;
	}
	for (i = 0; c[i].name; i++) {
		if (!strcmp(value, c[i].name)) {
			*flags = c[i].flags;
			return 0;
		}
	}
	snprintf(why, wsize, "not %s", said);
	return -EINVAL;
}

/* An annotation's value into *v, NULL when absent. OCI annotations are
 * strings. */
static int annotation(struct json_object *ann, const char *key, const char **v, char *why,
		      size_t wsize)
{
	struct json_object *o;

	*v = NULL;
	if (!ann || !json_object_object_get_ex(ann, key, &o) || !o)
		return 0;
	if (!json_object_is_type(o, json_type_string)) {
		snprintf(why, wsize, "%s: not a string", key);
		return -EINVAL;
	}
	*v = json_object_get_string(o);
	return 0;
}

/* The flags of annotation key's value, one of its choices. */
static int choose(struct json_object *ann, const char *key, unsigned int *flags, char *why,
		  size_t wsize)
{
	char said[64];
	const char *v;
	int r;

	if ((r = annotation(ann, key, &v, why, wsize)) ||
	    !(r = oci_ask_choice(key, v, flags, said, sizeof(said))))
		return r;
	snprintf(why, wsize, "%s: \"%s\": %s", key, v, said);
	return r;
}

/* A name under io.sfilter. that is none of the hook's is refused: a
 * misspelt io.sfilter.profile would leave the container unconfined
 * without a word. */
static int check_names(struct json_object *ann, char *why, size_t wsize)
{
	static const char *const known[] = { ANN_PROFILE, ANN_TAKE, ANN_MODE, ANN_ARM,
					     ANN_LENIENT, ANN_RECORD, ANN_RECORD_MERGE };
	size_t i, n = sizeof(known) / sizeof(known[0]);

	if (!ann)
		return 0;
	json_object_object_foreach(ann, name, val) {
		(void)val;
		if (strncmp(name, ANN_PREFIX, strlen(ANN_PREFIX)))
			continue;
		for (i = 0; i < n && strcmp(name, known[i]); i++)
			;
		if (i == n) {
			snprintf(why, wsize, "%s: unknown annotation (known: %s, %s, %s, %s, %s, "
				 "%s, %s)", name, ANN_PROFILE, ANN_TAKE, ANN_MODE, ANN_ARM,
				 ANN_LENIENT, ANN_RECORD, ANN_RECORD_MERGE);
			return -EINVAL;
		}
	}
	return 0;
}

/* A Kubernetes pod's sandbox (pause) container. containerd gives it the
 * pod's annotations too, so it would get the workload's profile, which is
 * not written for the pause image: a pod whose pause dies is gone. CRI-O
 * runs no hooks in it, but says what it is all the same. */
static bool is_sandbox(struct json_object *ann)
{
	static const char *const keys[] = { "io.kubernetes.cri.container-type",
					    "io.kubernetes.cri-o.ContainerType", NULL };
	size_t i;

	for (i = 0; ann && keys[i]; i++) {
		struct json_object *v;

		if (json_object_object_get_ex(ann, keys[i], &v) &&
		    json_object_is_type(v, json_type_string) &&
		    !strcmp(json_object_get_string(v), "sandbox"))
			return true;
	}
	return false;
}

/* io.sfilter.record: a file name of the record directory, on its own. */
static int read_record(struct json_object *ann, struct oci_ask *ask, char *why, size_t wsize)
{
	unsigned int merge;
	const char *mode, *p;
	int r;

	if ((r = choose(ann, ANN_RECORD_MERGE, &merge, why, wsize)) ||
	    (r = annotation(ann, ANN_MODE, &mode, why, wsize)))
		return r;
	ask->record_merge = merge;
	if (ask->profile || ask->take || mode) {
		snprintf(why, wsize, "%s runs the container with nothing enforced: not with %s, "
			 "%s or %s", ANN_RECORD, ANN_PROFILE, ANN_TAKE, ANN_MODE);
		return -EINVAL;
	}
	for (p = ask->record; *p; p++)
		if (!(*p >= 'a' && *p <= 'z') && !(*p >= 'A' && *p <= 'Z') &&
		    !(*p >= '0' && *p <= '9') && *p != '.' && *p != '_' && *p != '-')
			break;
	if (*p || !ask->record[0] || ask->record[0] == '.' || p - ask->record > 200) {
		snprintf(why, wsize, "%s: a file name in the record directory (up to 200 letters, "
			 "digits, '.', '_' and '-', not starting with '.')", ANN_RECORD);
		return -EINVAL;
	}
	return choose(ann, ANN_ARM, &ask->flags, why, wsize);
}

int oci_ask_read(struct json_object *ann, struct oci_ask *ask, char *why, size_t wsize)
{
	unsigned int take, mode, arm, lenient;
	int r;

	memset(ask, 0, sizeof(*ask));
	if ((r = check_names(ann, why, wsize)) ||
	    (r = annotation(ann, ANN_PROFILE, &ask->profile, why, wsize)) ||
	    (r = choose(ann, ANN_TAKE, &take, why, wsize)) ||
	    (r = annotation(ann, ANN_RECORD, &ask->record, why, wsize)))
		return r;
	ask->take = take;
	ask->sandbox = is_sandbox(ann);
	if (ask->sandbox)
		return 0;
	if (ask->record)
		return read_record(ann, ask, why, wsize);
	if (!ask->profile && !ask->take)
		return 0;
	if (ask->profile && ask->take) {
		snprintf(why, wsize, "%s and %s=true: set one of them, not both", ANN_PROFILE,
			 ANN_TAKE);
		return -EINVAL;
	}
	if (ask->profile && !*ask->profile) {
		snprintf(why, wsize, "%s: empty", ANN_PROFILE);
		return -EINVAL;
	}
	if ((r = choose(ann, ANN_MODE, &mode, why, wsize)) ||
	    (r = choose(ann, ANN_ARM, &arm, why, wsize)) ||
	    (r = choose(ann, ANN_LENIENT, &lenient, why, wsize)))
		return r;
	ask->flags = mode | arm;
	ask->lenient = lenient;
	return 0;
}
