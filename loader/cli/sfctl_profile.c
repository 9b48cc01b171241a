// SPDX-License-Identifier: GPL-2.0-only
/*
 * sfctl compile and sfctl attach --profile: container seccomp profiles
 * (OCI linux.seccomp, Docker's and Podman's seccomp.json) through
 * libsfprofile.
 *
 * Whose capabilities a profile's caps conditions are judged against: the
 * task that receives the filter. attach --pid: that process's effective
 * set, from capget(2) on it; attach --cgroup: no single task receives it,
 * so none unless --caps names them; compile: none unless --caps names
 * them (the output must not depend on who runs sfctl).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sfctl.h"
#include "sfclient.h"
#include "profile.h"
#include "proto.h"
#include "c2e.h"
#include "admin.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>

bool sfctl_profile_lenient;

/* Compiles path ("-": stdin) or dies (exit 2), printing its warnings;
 * the text read, for send_profile() (stdin cannot be read twice). */
static char *compile_or_die(const char *path, const char *caps, pid_t pid, struct sf_profile *p)
{
	struct sf_profile_opts opts = { .caps = caps, .caps_pid = pid,
					.lenient = sfctl_profile_lenient };
	struct sf_profile_error err;
	size_t i, len;
	char *json;

	if (!path)
		cli_usage_error("sfctl", "missing --profile JSON");
	json = cli_read_file(path, 64 << 20, &len);
	if (!json)
		sfctl_die(2, "%s: %s", path, strerror(errno));
	if (sf_profile_compile(json, len, &opts, p, &err) < 0)
		sfctl_die(2, "%s: %s", path, err.msg);
	for (i = 0; i < p->n_warnings; i++)
		fprintf(stderr, "sfctl: warning: %s: %s\n", path, p->warnings[i]);
	return json;
}

/* compile --json: what was written, as the stderr line says it. */
static void compile_json(const char *out, const struct sf_profile *p)
{
	struct json_object *o = json_object_new_object(), *w = json_object_new_array();
	size_t i;

	json_object_object_add(o, "output", json_object_new_string(out));
	json_object_object_add(o, "instructions", json_object_new_int64((int64_t)p->len));
	json_object_object_add(o, "rules", json_object_new_int64(p->n_rules));
	for (i = 0; i < p->n_warnings; i++)
		json_object_array_add(w, json_object_new_string(p->warnings[i]));
	json_object_object_add(o, "warnings", w);
	sfctl_print_json(o);
	json_object_put(o);
}

int cmd_compile(const char *profile, const char *caps, const char *out)
{
	struct sf_profile p;
	int r;

	if (!out)
		cli_usage_error("sfctl", "compile: missing -o OUT.bpf (- for stdout)");
	if (cli_json && cli_is_stdio(out))
		cli_usage_error("sfctl", "compile: -o - writes the filter to stdout, where "
				"--json writes its summary");
	free(compile_or_die(profile, caps ? caps : "none", 0, &p));
	r = c2e_save_raw(out, p.insns, p.len);
	if (r < 0)
		sfctl_die(1, "%s: %s", out, strerror(-r));
	if (cli_json)
		compile_json(out, &p);
	else
		fprintf(stderr, "sfctl: %s: %zu instructions, %u syscalls with a rule\n",
			cli_is_stdio(out) ? "stdout" : out, p.len, p.n_rules);
	sf_profile_free(&p);
	return 0;
}

/* The gate is judged against --caps (none by default), as compile is:
 * sfilter-oci-hook judges the profile with the container's bounding set,
 * so the two agree for a container with exactly those caps (the warning
 * says so when the profile has caps conditions). */
int cmd_compile_gate(const char *profile, const char *caps, const char *out,
		     const char *socket)
{
	struct sf_profile_opts opts = { .caps = caps ? caps : "none",
					.lenient = sfctl_profile_lenient };
	struct sf_profile_gate g;
	struct sf_profile_error err;
	char agent[108];
	size_t i, len;
	int fd, r;

	if (!profile)
		cli_usage_error("sfctl", "missing --profile JSON");
	if ((r = sf_proto_agent_path(socket, agent, sizeof(agent))) < 0)
		sfctl_die(2, "%s: no agent socket path: %s", socket, strerror(-r));
	if (sf_profile_gate_file(profile, &opts, agent, &g, &err) < 0)
		sfctl_die(2, "%s: %s", profile, err.msg);
	for (i = 0; i < g.n_warnings; i++)
		fprintf(stderr, "sfctl: warning: %s: %s\n", profile, g.warnings[i]);
	if (cli_is_stdio(out))
		out = NULL;
	fd = out ? open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : STDOUT_FILENO;
	if (fd < 0)
		sfctl_die(1, "%s: %s", out, strerror(errno));
	len = strlen(g.json);
	for (i = 0; i < len; i += (size_t)r)
		if ((r = (int)write(fd, g.json + i, len - i)) <= 0)
			sfctl_die(1, "%s: %s", out ? out : "stdout", r ? strerror(errno) : "short write");
	if (out && close(fd))
		sfctl_die(1, "%s: %s", out, strerror(errno));
	if (!cli_json && out)
		fprintf(stderr, "sfctl: %s: the gate of %s: %u syscalls notified to %s, "
			"%zu instructions\n", out, profile, g.n_notify, agent, g.len);
	sf_profile_gate_free(&g);
	return 0;
}

/* The profile's text sent to the daemon for filter id (SF_MSG_PROFILE), so
 * that its events name their rules; a failure is only said: the filter is
 * attached and enforcing either way. */
static void send_profile(uint32_t id, const char *json, const char *caps)
{
	struct sf_client_reply *rep = malloc(sizeof(*rep));
	size_t len = strlen(json);
	int r = !rep ? -ENOMEM : len >= SF_PROTO_MAX_MSG ? -EMSGSIZE : 0;

	if (!r)
		r = sf_client_profile(sfctl_sock_path, id, caps,
				      sfctl_profile_lenient ? SF_PROFILE_LENIENT : 0, json, len, rep);
	if (r < 0)
		fprintf(stderr, "sfctl: warning: filter %u's events will not name its profile's "
			"rules: %s\n", id, rep && rep->message[0] ? rep->message : strerror(-r));
	free(rep);
}

int cmd_attach_profile(pid_t pid, const char *cgroup, const char *profile, const char *caps,
		       uint32_t flags)
{
	char note[512], text[400], mask[32], *json;
	struct sf_profile p;
	uint32_t id = 0;
	uint64_t set;
	int r;

	/* The caps judged, as a set the daemon reads the same way when it
	 * compiles the profile again (send_profile()). */
	if (!caps && !cgroup) {
		if ((r = sf_profile_task_caps(pid, &set)) < 0)
			sfctl_die(1, "pid %d: capget: %s", (int)pid, strerror(-r));
		snprintf(mask, sizeof(mask), "0x%llx", (unsigned long long)set);
		caps = mask;
	}
	json = compile_or_die(profile, caps ? caps : "none", 0, &p);
	/* A cgroup's tasks each get the filter: TSYNC has nothing to add. */
	flags |= cgroup ? p.flags & ~SF_PROFILE_FLAG_TSYNC : p.flags;
	r = attach_insns(pid, cgroup, p.insns, p.len, flags, note, sizeof(note), &id);
	if (!r && id)
		send_profile(id, json, caps ? caps : "none");
	free(json);
	/* The tier, from the attach note (loader/daemon/reply.c). */
	sf_profile_tier_text(&p, note, !!(flags & SF_ATTACH_FALLBACK_LOG), text, sizeof(text));
	if (text[0] && !cli_json)
		fprintf(stderr, "sfctl: %s\n", text);
	sf_profile_free(&p);
	return r;
}
