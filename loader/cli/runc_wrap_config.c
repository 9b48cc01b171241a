// SPDX-License-Identifier: GPL-2.0-only
/*
 * sfilter-runc's work on a bundle (runc_wrap.h): what the container asks,
 * and config.json rewritten so that runc gives it that.
 *
 * What asks: config.json's io.sfilter.* annotations (containerd copies a
 * pod's into it when the runtime handler's pod_annotations lists them),
 * read as sfilter-oci-hook reads them (oci_spec.h), and the wrapper's
 * options, which stand for those annotations (Docker 20.10 has no
 * --annotation). The options are the runtime's, configured by whoever
 * runs the engine; the annotations are the container's creator's. So
 * where an option decides a thing, an annotation that says otherwise is
 * refused, not obeyed: a creator cannot turn an enforcing runtime into a
 * shadowing one, nor pick another profile.
 *
 * What is added: sfilter-oci-hook as a createRuntime hook, as the hooks.d
 * file adds it for CRI-O and Podman, with the socket in its environment
 * (runc gives a hook nothing else). And, where the container's kernel
 * seccomp filter can be the gate, linux.seccomp becomes the gate of the
 * container's policy (sf_profile_gate(), as `sfctl compile --gate`
 * writes it), whose listener runc (1.1 and later) sends to sfilterd's
 * agent socket: a denied call then gets the policy's verdict exactly,
 * its errno included, on every tier. Where it can be:
 *   - take-seccomp: the policy is the container's own linux.seccomp; its
 *     gate takes its place, and the hook takes the policy from config.json's
 *     io.sfilter.seccomp, where it is kept. The container keeps the policy it
 *     was given, enforced, logged and replaceable by sfilter.
 *   - a profile, and no linux.seccomp of the container's own (Docker's
 *     seccomp=unconfined or --privileged): the profile's gate.
 *   - a profile beside a linux.seccomp of the container's own: none. The
 *     container's own stays in the kernel as it was given (Docker's
 *     default, a pod's RuntimeDefault: an annotation must not take away
 *     what a cluster's policy made it ask for), and the profile is
 *     attached beside it, at the tier's strength.
 *   - shadow and complain decide nothing: no gate (its notifications
 *     would all be let through), whatever the container has stays.
 * --sfilter-gate=off never gates; =require refuses a container that
 * cannot have one. Refused as not enforceable as written: take-seccomp
 * without a linux.seccomp, take-seccomp in shadow or complain mode (the
 * kernel would go on enforcing the same profile first, and sfilter would
 * see none of its denials), and a linux.seccomp with a listenerPath of
 * its own (another seccomp agent's).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "runc_wrap.h"
#include "oci_spec.h"
#include "profile.h"
#include "profile_cache.h"
#include "proto.h"
#include "sfilter.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <json-c/json.h>

#define HOOK_NAME "sfilter-oci-hook"

struct job {
	const struct wrap *w;
	char path[PATH_MAX];      /* BUNDLE/config.json */
	char hook[PATH_MAX];      /* the hook config.json names */
	const char *socket;
	struct json_object *config, *ann;
	struct oci_ask ask;
};

static struct json_object *read_config(struct job *j)
{
	const struct wrap *w = j->w;
	char why[256], *buf;
	struct json_object *o;
	size_t len;
	int fd = open(j->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		wrap_fail(w, "config.json: %s: %s", j->path, strerror(errno));
	if (oci_slurp_fd(fd, true, OCI_FILE_MAX, &buf, &len, why, sizeof(why)))
		wrap_fail(w, "config.json: %s: %s", j->path, why);
	close(fd);
	o = oci_parse_object(buf, len, why, sizeof(why));
	free(buf);
	if (!o)
		wrap_fail(w, "config.json: %s: %s", j->path, why);
	return o;
}

/* config's member at path (absent: NULL), of type t when there. */
static struct json_object *member(struct job *j, const char *path, json_type t)
{
	static const char *const names[] = {
		[json_type_object] = "an object", [json_type_array] = "an array",
		[json_type_string] = "a string",
	};
	struct json_object *o;
	char why[256];

	if (oci_member(j->config, path, &o, why, sizeof(why)))
		wrap_fail(j->w, "config.json: %s", why);
	if (o && !json_object_is_type(o, t))
		wrap_fail(j->w, "config.json: %s: not %s", path, names[t]);
	return o;
}

/*
 * The annotations the options stand for, into config.json's. With a
 * policy option (a profile, take-seccomp) the options decide all four,
 * their defaults included; without, those given (mode, arm) decide
 * theirs. An annotation that says otherwise is refused.
 */
static void merge_options(struct job *j)
{
	const struct wrap *w = j->w;
	const char *keys[] = { ANN_PROFILE, ANN_TAKE, ANN_MODE, ANN_ARM };
	const char *given[] = { w->profile, w->take, w->mode, w->arm };
	const char *dflt[] = { NULL, "false", "enforce", "exec" };
	const char *opts[] = { "profile", "take-seccomp", "mode", "arm" };
	bool policy = w->profile || w->take;
	size_t i;

	for (i = 0; i < 4; i++) {
		const char *want = given[i] ? given[i] : dflt[i], *have = NULL;
		char said[PATH_MAX + 64];
		struct json_object *v;

		if (!given[i] && !policy)
			continue;
		if (json_object_object_get_ex(j->ann, keys[i], &v) && v) {
			if (!json_object_is_type(v, json_type_string))
				wrap_fail(w, "config.json: annotations.%s: not a string", keys[i]);
			have = json_object_get_string(v);
		}
		if (given[i])
			snprintf(said, sizeof(said), "--sfilter-%s%s%s", opts[i],
				 i == 1 ? "" : "=", i == 1 ? "" : given[i]);
		else if (w->profile)
			snprintf(said, sizeof(said), "--sfilter-profile=%s", w->profile);
		else
			snprintf(said, sizeof(said), "--sfilter-take-seccomp");
		if (have && (!want || strcmp(have, want)))
			wrap_fail(w, "config.json: annotations.%s: \"%s\": this runtime's options "
				  "decide it (%s)", keys[i], have, said);
		if (given[i] && !have &&
		    json_object_object_add(j->ann, keys[i], json_object_new_string(given[i])))
			wrap_fail(w, "%s", strerror(ENOMEM));
	}
}

/* A hook named sfilter-oci-hook there already (a hooks.d file, an NRI
 * plugin, an earlier create of this bundle) would attach a second time. */
static void check_hooks(struct job *j)
{
	static const char *const stages[] = { "hooks.prestart", "hooks.createRuntime", NULL };
	size_t i, k;

	for (k = 0; stages[k]; k++) {
		struct json_object *list = member(j, stages[k], json_type_array), *h, *p;

		for (i = 0; list && i < json_object_array_length(list); i++) {
			const char *path;

			h = json_object_array_get_idx(list, i);
			if (!h || !json_object_object_get_ex(h, "path", &p) ||
			    !json_object_is_type(p, json_type_string))
				continue;
			path = json_object_get_string(p);
			if (!strcmp(path, j->hook) ||
			    !strcmp(strrchr(path, '/') ? strrchr(path, '/') + 1 : path, HOOK_NAME))
				wrap_fail(j->w, "config.json: %s[%zu]: %s is there already (a hooks.d "
					  "file or an NRI plugin?): the container would be attached "
					  "twice", stages[k], i, path);
		}
	}
}

static struct json_object *strings(const char *const *s)
{
	struct json_object *a = json_object_new_array();

	for (; a && *s; s++)
		if (json_object_array_add(a, json_object_new_string(*s)))
			return json_object_put(a), NULL;
	return a;
}

/* The hook's entry, last of createRuntime's. */
static void add_hook(struct job *j)
{
	char env[PATH_MAX + 32];
	const char *args[] = { HOOK_NAME, "--profile-dir", j->w->profile_dir, NULL };
	const char *envs[] = { env, NULL };
	struct json_object *hooks = member(j, "hooks", json_type_object);
	struct json_object *list = member(j, "hooks.createRuntime", json_type_array), *h;

	snprintf(env, sizeof(env), "%s=%s", SF_PROTO_SOCKET_ENV, j->socket);
	if (!hooks && json_object_object_add(j->config, "hooks", hooks = json_object_new_object()))
		hooks = NULL;
	if (hooks && !list &&
	    json_object_object_add(hooks, "createRuntime", list = json_object_new_array()))
		list = NULL;
	if (!list || !(h = json_object_new_object()) || json_object_array_add(list, h) ||
	    json_object_object_add(h, "path", json_object_new_string(j->hook)) ||
	    json_object_object_add(h, "args", strings(args)) ||
	    json_object_object_add(h, "env", strings(envs)) ||
	    json_object_object_add(h, "timeout", json_object_new_int(j->w->hook_timeout)))
		wrap_fail(j->w, "%s", strerror(ENOMEM));
}

/*
 * The gate of a policy's text: linux.seccomp's object. quiet: the text
 * is a profile file, not the container's creator's: an error names its
 * JSON path only (libsfprofile's message may quote a value of it).
 */
static struct json_object *gate_of(struct job *j, const char *what, const char *text,
				   size_t len, bool quiet)
{
	const struct wrap *w = j->w;
	struct sf_profile_opts opts = { .lenient = j->ask.lenient };
	struct sf_profile_error err;
	struct sf_profile_gate g;
	struct json_object *o;
	char caps[1024], agent[108], why[256], *kept;
	int r;

	if (oci_bounding_caps(j->config, caps, sizeof(caps), why, sizeof(why)))
		wrap_fail(w, "config.json: %s", why);
	opts.caps = caps;
	if ((r = sf_proto_agent_path(j->socket, agent, sizeof(agent))) < 0)
		wrap_fail(w, "%s: no agent socket path beside it: %s", j->socket, strerror(-r));
	/* The gate of the same inputs, made and checked for an earlier
	 * container: the same gate (profile_cache.h). */
	if (!pcache_get_gate(j->socket, &opts, agent, text, len, &kept)) {
		o = oci_parse_object(kept, strlen(kept), why, sizeof(why));
		free(kept);
		if (o)
			return o;
	}
	if (quiet && !(o = oci_parse_object(text, len, why, sizeof(why))))
		wrap_fail(w, "%s: %s", what, why); /* json-c's messages quote nothing */
	if (quiet)
		json_object_put(o);
	if (sf_profile_gate(text, len, &opts, agent, &g, &err) < 0) {
		if (!quiet)
			wrap_fail(w, "%s: %s", what, err.msg);
		wrap_fail(w, "%s: %s%snot a profile sfilter takes (sfctl compile --profile FILE "
			  "-o /dev/null says why)", what, err.path, err.path[0] ? ": " : "");
	}
	/* Kept for the next container, and the profile's own filter for this
	 * one's hook, which would compile it again. */
	pcache_put_gate(j->socket, &opts, agent, text, len, g.json);
	pcache_put_filter(j->socket, &opts, text, len, g.profile.insns, g.profile.len,
			  g.profile.flags);
	o = oci_parse_object(g.json, strlen(g.json), why, sizeof(why));
	sf_profile_gate_free(&g);
	if (!o)
		wrap_fail(w, "%s: its gate: %s", what, why);
	return o;
}

/* The profile the container names, read as the hook reads it; NULL for
 * a classic filter, which has no gate a runtime takes. */
static struct json_object *profile_gate(struct job *j)
{
	const struct wrap *w = j->w;
	const char *name = j->ask.profile;
	char why[PATH_MAX + 64], what[PATH_MAX + 32], *buf;
	struct json_object *gate = NULL;
	size_t len;
	int dir, fd;

	dir = open(w->profile_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		wrap_fail(w, "%s: the profile directory %s: %s", ANN_PROFILE, w->profile_dir,
			  strerror(errno));
	fd = oci_open_profile(dir, w->profile_dir, name, why, sizeof(why));
	if (fd < 0)
		wrap_fail(w, "%s: %s: %s", ANN_PROFILE, name, why);
	if (oci_slurp_fd(fd, true, OCI_PROFILE_MAX, &buf, &len, why, sizeof(why)))
		wrap_fail(w, "%s: %s: %s", ANN_PROFILE, name, why);
	close(fd);
	close(dir);
	snprintf(what, sizeof(what), "%s: %s", ANN_PROFILE, name);
	/* JSON or a classic filter, told apart as the hook tells them. */
	if (buf[strspn(buf, " \t\r\n")] == '{')
		gate = gate_of(j, what, buf, len, true);
	free(buf);
	return gate;
}

/* The policy's gate in linux.seccomp's place, or why there is none
 * (refused under --sfilter-gate=require). */
static void gate(struct job *j)
{
	const struct wrap *w = j->w;
	struct json_object *linux_ = member(j, "linux", json_type_object);
	struct json_object *own = member(j, "linux.seccomp", json_type_object), *g, *lp;
	bool judging = !(j->ask.flags & (SF_FLAG_SHADOW | SF_FLAG_COMPLAIN));
	const char *none = NULL, *text;

	if (own && json_object_object_get_ex(own, "listenerPath", &lp) && lp &&
	    (!json_object_is_type(lp, json_type_string) || *json_object_get_string(lp)))
		wrap_fail(w, "config.json: linux.seccomp.listenerPath: the container's profile "
			  "has a seccomp agent of its own");
	if (j->ask.take && !own)
		wrap_fail(w, "%s: config.json has no linux.seccomp: the container runs without "
			  "a seccomp profile to take (Docker: not with seccomp=unconfined nor "
			  "--privileged)", ANN_TAKE);
	if (j->ask.take && !judging)
		wrap_fail(w, "%s with %s=%s: the kernel goes on enforcing the container's "
			  "profile first, so sfilter's copy would see none of its denials (name "
			  "the profile with %s instead, on a container without its own)", ANN_TAKE,
			  ANN_MODE, j->ask.flags & SF_FLAG_SHADOW ? "shadow" : "complain",
			  ANN_PROFILE);
	if (w->gate == WRAP_GATE_OFF)
		return;
	if (!judging)
		none = "the mode decides nothing, so no gate would refuse anything";
	else if (!j->ask.take && own)
		none = "the container has a seccomp profile of its own (linux.seccomp), which "
		       "stays in the kernel as it was given";
	if (!none && j->ask.take) {
		text = json_object_to_json_string_ext(own, JSON_C_TO_STRING_PLAIN);
		g = gate_of(j, "config.json: linux.seccomp", text, strlen(text), false);
		/* The policy stays in config.json for the hook (oci_spec.h). */
		if (json_object_object_add(j->config, OCI_KEPT_SECCOMP, json_object_get(own)))
			wrap_fail(w, "%s", strerror(ENOMEM));
	} else if (!none && !(g = profile_gate(j))) {
		none = "a classic filter has no gate a runtime installs (runc takes a JSON "
		       "profile)";
	}
	if (none && w->gate == WRAP_GATE_REQUIRE)
		wrap_fail(w, "--sfilter-gate=require: no gate for this container: %s", none);
	if (none)
		return;
	if (!linux_ && json_object_object_add(j->config, "linux",
					      linux_ = json_object_new_object()))
		linux_ = NULL;
	if (!linux_ || json_object_object_add(linux_, "seccomp", g))
		wrap_fail(w, "%s", strerror(ENOMEM));
}

/* config.json replaced whole, by rename: runc never reads half of it. */
static void write_config(struct job *j)
{
	const struct wrap *w = j->w;
	const char *text = json_object_to_json_string_ext(j->config, JSON_C_TO_STRING_PLAIN |
							  JSON_C_TO_STRING_NOSLASHESCAPE);
	char tmp[PATH_MAX + 32], dir[PATH_MAX];
	size_t len = text ? strlen(text) : 0, off = 0;
	struct stat st;
	ssize_t n;
	int fd, e = 0;

	snprintf(dir, sizeof(dir), "%s", j->path);
	if (!text || stat(j->path, &st))
		wrap_fail(w, "config.json: %s: %s", j->path, strerror(text ? errno : ENOMEM));
	snprintf(tmp, sizeof(tmp), "%s/.config.json.sfilter-XXXXXX", dirname(dir));
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		wrap_fail(w, "config.json: %s: %s", tmp, strerror(errno));
	while (!e && off < len) {
		n = write(fd, text + off, len - off);
		if (n < 0 && errno != EINTR)
			e = errno;
		else if (n > 0)
			off += (size_t)n;
	}
	if (!e && fchmod(fd, st.st_mode & 07777))
		e = errno;
	if (close(fd) && !e)
		e = errno;
	if (!e && rename(tmp, j->path))
		e = errno;
	if (e) {
		unlink(tmp);
		wrap_fail(w, "config.json: %s: %s", j->path, strerror(e));
	}
}

/* sfilter-oci-hook beside sfilter-runc, unless --sfilter-hook names it. */
static void find_hook(struct job *j)
{
	char self[PATH_MAX];
	ssize_t n;

	if (j->w->hook) {
		snprintf(j->hook, sizeof(j->hook), "%s", j->w->hook);
	} else {
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n < 0)
			wrap_fail(j->w, "/proc/self/exe: %s (name the hook with --sfilter-hook)",
				  strerror(errno));
		self[n] = '\0';
		snprintf(j->hook, sizeof(j->hook), "%s/%s", dirname(self), HOOK_NAME);
	}
	/* runc would only say "exec: no such file" when the hook is due. */
	if (access(j->hook, X_OK))
		wrap_fail(j->w, "the hook %s: %s", j->hook, strerror(errno));
}

void wrap_config(const struct wrap *w, const char *bundle, bool restore)
{
	struct job j = { .w = w };
	char why[512];

	if (snprintf(j.path, sizeof(j.path), "%s/config.json", bundle) >= (int)sizeof(j.path))
		wrap_fail(w, "config.json: the bundle's path is longer than %d bytes", PATH_MAX);
	j.socket = w->socket ? w->socket : sf_proto_socket_path();
	j.config = read_config(&j);
	j.ann = member(&j, "annotations", json_type_object);
	/* A pod's sandbox is left alone whatever the options say. */
	if (oci_ask_read(j.ann, &j.ask, why, sizeof(why)))
		wrap_fail(w, "config.json: annotations: %s", why);
	if (j.ask.sandbox) {
		json_object_put(j.config);
		return;
	}
	if (!j.ann && (w->profile || w->take || w->mode || w->arm) &&
	    json_object_object_add(j.config, "annotations", j.ann = json_object_new_object()))
		wrap_fail(w, "%s", strerror(ENOMEM));
	merge_options(&j);
	if (oci_ask_read(j.ann, &j.ask, why, sizeof(why)))
		wrap_fail(w, "config.json: annotations: %s", why);
	if ((!j.ask.profile && !j.ask.take) || j.ask.sandbox) {
		/* Not asked: runc reads config.json as it came. */
		json_object_put(j.config);
		return;
	}
	if (restore)
		wrap_fail(w, "restore: the container asks for sfilter, and a checkpoint holds "
			  "neither its cgroup's filter nor a gate's listener");
	if (access(w->runc, X_OK))
		wrap_fail(w, "%s: %s", w->runc, strerror(errno));
	find_hook(&j);
	check_hooks(&j);
	gate(&j);
	add_hook(&j);
	write_config(&j);
	json_object_put(j.config);
}
