// SPDX-License-Identifier: GPL-2.0
/*
 * sfilter-oci-hook's input and policy (oci_hook.h): files and stdin read
 * whole under a bound, JSON documents, config.json, the capability set a
 * profile's caps conditions are judged against, and the filter, from a
 * profile (libsfprofile), a classic filter file (classic2ebpf) or
 * config.json's linux.seccomp. Every failure ends the hook with one line
 * that names the annotation or the file and the JSON path.
 *
 * The hook runs as root on the host and its error line reaches whoever
 * created the container (runc passes it on; in Kubernetes, the pod's
 * author), who also chose the annotation's value. So a profile is opened
 * only beneath the profile directory, never through a symbolic link, and
 * only when it is a regular file of bounded size; and no error quotes a
 * profile's content (a parser's message may: it is left out, and the
 * administrator's `sfctl compile` or `classic2ebpf check` on the file
 * gives it).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "oci_hook.h"
#include "profile.h"
#include "c2e.h"

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

/* config.json: tens of kilobytes; the bound stops a file that is not one
 * from being read whole. */
#define FILE_MAX (16 << 20)
/* Profiles: Docker's default is 20 KiB; classic2ebpf reads no filter
 * file larger than this either. */
#define PROFILE_MAX (1 << 20)

/* The whole of fd, at most cap bytes (NUL-terminated, malloc'd): 0,
 * -EFBIG when there is more, or the read's -errno. */
static int read_fd(int fd, size_t cap, char **buf, size_t *len)
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

/* The JSON object at buf, or NULL with why in msg: json-c's message for
 * a text that is not JSON. */
static struct json_object *parse_object(const char *buf, size_t len, char *msg, size_t msz)
{
	const char *nul = memchr(buf, '\0', len);
	struct json_tokener *tok;
	struct json_object *o;
	enum json_tokener_error e;
	size_t end;

	/* json-c would take a NUL for the end of the text. */
	if (nul) {
		snprintf(msg, msz, "not JSON: a NUL byte at byte %zu", (size_t)(nul - buf));
		return NULL;
	}
	if (len > INT_MAX || !(tok = json_tokener_new())) {
		snprintf(msg, msz, "%s", strerror(len > INT_MAX ? EFBIG : ENOMEM));
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
		snprintf(msg, msz, "not JSON: %s", json_tokener_error_desc(e));
	else if (end < len)
		snprintf(msg, msz, "not JSON: text after the value at byte %zu", end);
	else if (json_object_get_type(o) != json_type_object)
		snprintf(msg, msz, "not a JSON object");
	else
		return o;
	json_object_put(o);
	return NULL;
}

/* The whole of fd, a regular file (stdin may be anything), or the hook
 * fails as "what: path: why". */
static char *slurp_fd(const char *what, const char *path, int fd, size_t cap, size_t *len)
{
	char *buf = NULL;
	struct stat st;
	int r;

	if (path && fstat(fd, &st))
		hook_fail("%s: %s: %s", what, path, strerror(errno));
	/* A FIFO would keep the hook (and the container's start) waiting,
	 * a device could be anything. */
	if (path && !S_ISREG(st.st_mode))
		hook_fail("%s: %s: not a regular file", what, path);
	if (path && (uint64_t)st.st_size > cap)
		hook_fail("%s: %s: more than %zu bytes", what, path, cap);
	r = read_fd(fd, cap, &buf, len);
	if (r == -EFBIG)
		hook_fail("%s%s%s: more than %zu bytes", what, path ? ": " : "",
			  path ? path : "", cap);
	if (r < 0)
		hook_fail("%s%s%s: %s", what, path ? ": " : "", path ? path : "", strerror(-r));
	return buf;
}

char *hook_slurp(const char *what, const char *path, size_t cap, size_t *len)
{
	int fd = path ? open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK) : 0;
	char *buf;

	if (fd < 0)
		hook_fail("%s: %s: %s", what, path, strerror(errno));
	buf = slurp_fd(what, path, fd, cap, len);
	if (path)
		close(fd);
	return buf;
}

/*
 * The profile the annotation names, as the name under dir (an absolute
 * name in dir is taken as that name): opened beneath dir with no
 * symbolic link on the way, its last component included, nor a magic
 * link of /proc (openat2(2): RESOLVE_BENEATH, RESOLVE_NO_SYMLINKS,
 * RESOLVE_NO_MAGICLINKS), without waiting for a FIFO's writer
 * (O_NONBLOCK); then a regular file of at most PROFILE_MAX bytes. Names
 * are the host's: nothing is resolved through the container's rootfs.
 */
static char *read_profile(const struct hook_profiles *dir, const char *name, size_t *len)
{
	struct open_how how = {
		.flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	size_t n = strlen(dir->path);
	const char *rel = name;
	char *buf;
	int fd;

	while (n > 1 && dir->path[n - 1] == '/')
		n--;
	if (name[0] == '/' && !strncmp(name, dir->path, n) && name[n] == '/')
		rel = name + n + strspn(name + n, "/");
	fd = (int)syscall(SYS_openat2, dir->fd, rel, &how, sizeof(how));
	if (fd < 0 && (errno == EXDEV || (errno == ENOENT && !*rel)))
		hook_fail("%s: %s: not a file in %s (profiles are named there)", ANN_PROFILE,
			  name, dir->path);
	if (fd < 0 && errno == ELOOP)
		hook_fail("%s: %s: a symbolic link on the way (%s takes none)", ANN_PROFILE,
			  name, dir->path);
	if (fd < 0 && errno == ENOENT)
		hook_fail("%s: %s: no such file in %s", ANN_PROFILE, name, dir->path);
	if (fd < 0)
		hook_fail("%s: %s: %s", ANN_PROFILE, name, strerror(errno));
	buf = slurp_fd(ANN_PROFILE, name, fd, PROFILE_MAX, len);
	close(fd);
	return buf;
}

struct json_object *hook_read_object(const char *what, const char *path, size_t cap)
{
	struct json_object *o;
	char msg[256], *buf;
	size_t len;

	buf = hook_slurp(what, path, cap, &len);
	o = parse_object(buf, len, msg, sizeof(msg));
	free(buf);
	if (!o)
		hook_fail("%s: %s", what, msg);
	return o;
}

struct json_object *hook_read_config(const char *bundle)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/config.json", bundle) >= (int)sizeof(path))
		hook_fail("config.json: the bundle's path is longer than %d bytes", PATH_MAX);
	return hook_read_object("config.json", path, FILE_MAX);
}

/* config's member at path (a.b.c); NULL when any step is absent or null.
 * A step that is there but not an object fails. */
static struct json_object *member(struct json_object *config, const char *path)
{
	char step[64], seen[128] = "";
	struct json_object *o = config;
	const char *p = path, *dot;
	size_t n;

	while (o && *p) {
		if (!json_object_is_type(o, json_type_object))
			hook_fail("config.json: %s: not an object", seen);
		dot = strchrnul(p, '.');
		n = (size_t)(dot - p) < sizeof(step) ? (size_t)(dot - p) : sizeof(step) - 1;
		memcpy(step, p, n);
		step[n] = '\0';
		snprintf(seen, sizeof(seen), "%.*s", (int)(dot - path), path);
		if (!json_object_object_get_ex(o, step, &o))
			o = NULL;
		p = *dot ? dot + 1 : dot;
	}
	return o;
}

/*
 * The capabilities a profile's includes/excludes.caps are judged against:
 * process.capabilities.bounding, the set moby's setupSeccomp() judges
 * them by (profiles/seccomp/seccomp_linux.go: rs.Process.Capabilities.
 * Bounding), as a comma list for libsfprofile; "none" without one. A name
 * libsfprofile does not know is left out: no profile condition it can
 * read could name it.
 */
static void caps_of(struct json_object *config, char *list, size_t size)
{
	struct json_object *b = member(config, "process.capabilities.bounding"), *e;
	uint64_t all = 0, one;
	size_t i, used = 0;
	const char *name;

	snprintf(list, size, "none");
	if (!b)
		return;
	if (!json_object_is_type(b, json_type_array))
		hook_fail("config.json: process.capabilities.bounding: not an array");
	for (i = 0; i < json_object_array_length(b); i++) {
		e = json_object_array_get_idx(b, i);
		if (!e || !json_object_is_type(e, json_type_string))
			hook_fail("config.json: process.capabilities.bounding[%zu]: not a string",
				  i);
		name = json_object_get_string(e);
		if (strpbrk(name, ", ") || sf_profile_parse_caps(name, &one) < 0 ||
		    (one & all) || !one || used + strlen(name) + 2 > size)
			continue;
		all |= one;
		used += (size_t)snprintf(list + used, size - used, "%s%s",
					 used ? "," : "", name);
	}
}

/* A profile's text compiled; what names it in errors. With quiet, an
 * error names the JSON path only: the text is not the container
 * creator's, and libsfprofile's message may quote a value of it. */
static void compile_profile(const char *what, const char *json, size_t len, const char *caps,
			    bool quiet, struct hook_policy *out)
{
	struct sf_profile_opts opts = { .caps = caps };
	struct sf_profile_error err;
	struct sf_profile p;
	char msg[256];
	struct json_object *o;

	if (quiet) {
		/* json-c's messages quote nothing. */
		o = parse_object(json, len, msg, sizeof(msg));
		if (!o)
			hook_fail("%s: %s", what, msg);
		json_object_put(o);
	}
	if (sf_profile_compile(json, len, &opts, &p, &err) < 0) {
		if (!quiet)
			hook_fail("%s: %s", what, err.msg);
		hook_fail("%s: %s%snot a profile sfilter takes (sfctl compile --profile FILE "
			  "-o /dev/null says why)", what, err.path, err.path[0] ? ": " : "");
	}
	out->insns = p.insns;
	out->len = p.len;
	out->flags = p.flags;
	p.insns = NULL;
	sf_profile_free(&p);
}

/* A classic filter file (raw or text), validated as seccomp(2) would.
 * Its errors name a line or an instruction, never what is there. */
static void load_classic(const char *name, const char *buf, size_t len,
			 struct hook_policy *out)
{
	struct c2e_error err;
	int r;

	memset(&err, 0, sizeof(err));
	memset(out, 0, sizeof(*out));
	r = c2e_load_buf_abi(buf, len, C2E_ABI_SECCOMP, &out->insns, &out->len, &err);
	if (r == -ENOMEM)
		hook_fail("%s: %s: %s", ANN_PROFILE, name, strerror(ENOMEM));
	if (r < 0 && err.line > 0)
		hook_fail("%s: %s: neither a profile (JSON) nor a classic filter: line %d "
			  "(classic2ebpf check FILE says why)", ANN_PROFILE, name, err.line);
	if (r < 0)
		hook_fail("%s: %s: neither a profile (JSON) nor a classic filter "
			  "(classic2ebpf check FILE says why)", ANN_PROFILE, name);
	if (c2e_validate_abi(out->insns, out->len, C2E_ABI_SECCOMP, &err) < 0)
		hook_fail("%s: %s: instruction %d: refused as seccomp(2) would refuse it "
			  "(classic2ebpf check FILE says why)", ANN_PROFILE, name,
			  err.index);
}

void hook_compile(struct json_object *config, const struct hook_profiles *dir,
		  const char *name, bool take_seccomp, struct hook_policy *out)
{
	char caps[1024], what[PATH_MAX + 32], *buf;
	struct json_object *seccomp;
	const char *text;
	size_t len;

	caps_of(config, caps, sizeof(caps));
	if (take_seccomp) {
		seccomp = member(config, "linux.seccomp");
		if (!seccomp)
			hook_fail("config.json: no linux.seccomp (%s is true)", ANN_TAKE);
		/* The container's creator's own text: its errors may quote it. */
		text = json_object_to_json_string_ext(seccomp, JSON_C_TO_STRING_PLAIN);
		compile_profile("config.json: linux.seccomp", text, strlen(text), caps, false,
				out);
		return;
	}
	buf = read_profile(dir, name, &len);
	snprintf(what, sizeof(what), "%s: %s", ANN_PROFILE, name);
	/* JSON or a filter: a raw filter's first code byte is never '{' and
	 * no text form starts with one. */
	if (buf[strspn(buf, " \t\r\n")] == '{')
		compile_profile(what, buf, len, caps, true, out);
	else
		load_classic(name, buf, len, out);
	free(buf);
}
