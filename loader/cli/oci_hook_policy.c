// SPDX-License-Identifier: GPL-2.0-only
/*
 * sfilter-oci-hook's input and policy (oci_hook.h): stdin and files read
 * whole under a bound, config.json, and the filter, from a profile
 * (libsfprofile), a classic filter file (classic2ebpf) or the container's
 * own linux.seccomp, through what oci_spec.h reads. Every failure ends
 * the hook with one line that names the annotation or the file and the
 * JSON path.
 *
 * The hook runs as root on the host and its error line reaches whoever
 * created the container (runc passes it on; in Kubernetes, the pod's
 * author), who also chose the annotation's value. So no error quotes a
 * profile's content (a parser's message may: it is left out, and the
 * administrator's `sfctl compile` or `classic2ebpf check` on the file
 * gives it), and a profile is read only as oci_open_profile() opens it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "oci_hook.h"
#include "oci_spec.h"
#include "profile.h"
#include "profile_cache.h"
#include "proto.h"
#include "c2e.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>

/* The whole of fd, a regular file (stdin may be anything), or the hook
 * fails as "what: path: why". */
static char *slurp_fd(const char *what, const char *path, int fd, size_t cap, size_t *len)
{
	char why[256], *buf = NULL;

	if (oci_slurp_fd(fd, path != NULL, cap, &buf, len, why, sizeof(why)) < 0)
		hook_fail("%s%s%s: %s", what, path ? ": " : "", path ? path : "", why);
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

/* The profile the annotation names, beneath dir (oci_open_profile()). */
static char *read_profile(const struct hook_profiles *dir, const char *name, size_t *len)
{
	char why[PATH_MAX + 64], *buf;
	int fd = oci_open_profile(dir->fd, dir->path, name, why, sizeof(why));

	if (fd < 0)
		hook_fail("%s: %s: %s", ANN_PROFILE, name, why);
	buf = slurp_fd(ANN_PROFILE, name, fd, OCI_PROFILE_MAX, len);
	close(fd);
	return buf;
}

struct json_object *hook_read_object(const char *what, const char *path, size_t cap)
{
	struct json_object *o;
	char msg[256], *buf;
	size_t len;

	buf = hook_slurp(what, path, cap, &len);
	o = oci_parse_object(buf, len, msg, sizeof(msg));
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
	return hook_read_object("config.json", path, OCI_FILE_MAX);
}

/* A profile's text compiled; what names it in errors. With quiet, an
 * error names the JSON path only: the text is not the container
 * creator's, and libsfprofile's message may quote a value of it. */
static void compile_profile(const char *what, const char *json, size_t len, const char *caps,
			    bool quiet, bool lenient, struct hook_policy *out)
{
	struct sf_profile_opts opts = { .caps = caps, .lenient = lenient };
	const char *sock = sf_proto_socket_path();
	struct sf_profile_error err;
	struct sf_profile p;
	char msg[256];
	struct json_object *o;

	/* Compiled for these inputs before: by sfilter-runc for this very
	 * container, or by the hook of an earlier one (profile_cache.h). */
	if (!pcache_get_filter(sock, &opts, json, len, &out->insns, &out->len, &out->flags))
		goto keep;
	if (quiet) {
		/* json-c's messages quote nothing. */
		o = oci_parse_object(json, len, msg, sizeof(msg));
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
	/* io.sfilter.profile-lenient's warnings are not printed: the hook is
	 * silent when it succeeds (runc drops what it says then); sfctl
	 * compile --lenient on the file lists what was ignored. */
	pcache_put_filter(sock, &opts, json, len, p.insns, p.len, p.flags);
	out->insns = p.insns;
	out->len = p.len;
	out->flags = p.flags;
	p.insns = NULL;
	sf_profile_free(&p);
keep:
	out->json = strndup(json, len);
	out->json_len = out->json ? len : 0;
	snprintf(out->caps, sizeof(out->caps), "%s", caps);
	out->lenient = lenient;
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

/* The container's own profile: the one sfilter-runc kept when it put
 * the gate in its place, else linux.seccomp. */
static struct json_object *own_seccomp(struct json_object *config, const char **what)
{
	struct json_object *seccomp;
	char why[256];

	if (json_object_object_get_ex(config, OCI_KEPT_SECCOMP, &seccomp) && seccomp) {
		*what = "config.json: " OCI_KEPT_SECCOMP;
		return seccomp;
	}
	if (oci_member(config, "linux.seccomp", &seccomp, why, sizeof(why)))
		hook_fail("config.json: %s", why);
	if (!seccomp)
		hook_fail("config.json: no linux.seccomp (%s is true)", ANN_TAKE);
	*what = "config.json: linux.seccomp";
	return seccomp;
}

void hook_compile(struct json_object *config, const struct hook_profiles *dir,
		  const char *name, bool take_seccomp, bool lenient, struct hook_policy *out)
{
	char caps[1024], what[PATH_MAX + 32], why[256], *buf;
	struct json_object *seccomp;
	const char *text, *which;
	size_t len;

	if (oci_bounding_caps(config, caps, sizeof(caps), why, sizeof(why)))
		hook_fail("config.json: %s", why);
	if (take_seccomp) {
		seccomp = own_seccomp(config, &which);
		/* The container's creator's own text: its errors may quote it. */
		text = json_object_to_json_string_ext(seccomp, JSON_C_TO_STRING_PLAIN);
		compile_profile(which, text, strlen(text), caps, false, lenient, out);
		return;
	}
	buf = read_profile(dir, name, &len);
	snprintf(what, sizeof(what), "%s: %s", ANN_PROFILE, name);
	/* JSON or a filter: a raw filter's first code byte is never '{' and
	 * no text form starts with one. */
	if (buf[strspn(buf, " \t\r\n")] == '{')
		compile_profile(what, buf, len, caps, true, lenient, out);
	else
		load_classic(name, buf, len, out);
	free(buf);
}
