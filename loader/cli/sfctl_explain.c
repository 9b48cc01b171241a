// SPDX-License-Identifier: GPL-2.0-only
/*
 * sfctl explain: which rule of a profile decides a call
 * (sf_profile_rules_explain() in loader/profile/explain.c), for one call
 * given on the command line, or for every event of a log, each printed
 * back with a "rule" object: the events of the filter compiled from that
 * profile (--filter ID), and a shadow filter's events, whose "ret" is the
 * candidate's verdict, alike.
 */
#define _GNU_SOURCE
#include "sfctl.h"
#include "profile.h"
#include "c2e.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include <seccomp.h>

static const struct option explain_opts[] = {
	{ "profile", required_argument, NULL, 'p' },
	{ "caps", required_argument, NULL, 'K' },
	{ "kernel", required_argument, NULL, 'k' },
	{ "lenient", no_argument, NULL, 'L' },
	{ "arch", required_argument, NULL, 'a' },
	{ "nr", required_argument, NULL, 'n' },
	{ "args", required_argument, NULL, 'A' },
	{ "log", optional_argument, NULL, 'l' },
	{ "filter", required_argument, NULL, 'f' },
	{ "json", no_argument, NULL, 'j' },
	{ NULL, 0, NULL, 0 },
};

/* "x86_64", "i386", "x32" -> the audit arch and the number's x32 bit. */
static bool arch_named(const char *s, uint32_t *audit, uint32_t *bit)
{
	*bit = 0;
	if (!s)
		return false;
	if (!strcmp(s, "x86_64") || !strcmp(s, "x32")) {
		*audit = AUDIT_X86_64;
		*bit = strcmp(s, "x32") ? 0 : C2E_X32_SYSCALL_BIT;
		return true;
	}
	*audit = AUDIT_I386;
	return !strcmp(s, "i386");
}

static uint32_t scmp_arch(uint32_t audit, uint32_t bit)
{
	return bit ? SCMP_ARCH_X32 : audit == AUDIT_I386 ? SCMP_ARCH_X86 : SCMP_ARCH_X86_64;
}

/* --args: up to six numbers, comma-separated, none of them empty. */
static void parse_args(const char *s, uint64_t args[6])
{
	const char *p = s;
	int i;

	for (i = 0; i < 6; i++) {
		char *end;

		errno = 0;
		args[i] = strtoull(p, &end, 0);
		if (end == p || errno || *p == '-' || (*end && *end != ','))
			cli_usage_error("sfctl", "explain: --args %s: argument %d is not a number (up to six "
			    "numbers, comma-separated)", s, i);
		if (!*end)
			return;
		p = end + 1;
	}
	cli_usage_error("sfctl", "explain: --args %s: more than six arguments", s);
}

/* The "rule" object (sf_profile_why_json(): its one owner). */
static struct json_object *why_json(const struct sf_profile_why *w)
{
	char buf[1024];

	if (sf_profile_why_json(w, buf, sizeof(buf)) < 0)
		sfctl_die(1, "explain: %s", strerror(ENOSPC));
	return json_tokener_parse(buf);
}

static void print_why(const struct seccomp_data *d, const char *arch,
		      const struct sf_profile_why *w)
{
	char buf[64];
	const char *v;
	int i;

	c2e_verdict_str(w->verdict, buf, sizeof(buf));
	v = strchr(buf, ' ') ? strchr(buf, ' ') + 1 : buf;
	if (cli_json) {
		struct json_object *o = json_object_new_object(), *a = json_object_new_array();

		json_object_object_add(o, "syscall", w->syscall[0] ?
				       json_object_new_string(w->syscall) : NULL);
		json_object_object_add(o, "nr", json_object_new_int(d->nr));
		json_object_object_add(o, "arch", json_object_new_string(arch));
		for (i = 0; i < 6; i++)
			json_object_array_add(a, json_object_new_uint64(d->args[i]));
		json_object_object_add(o, "args", a);
		json_object_object_add(o, "verdict", json_object_new_string(v));
		json_object_object_add(o, "rule", why_json(w));
		sfctl_print_json(o);
		json_object_put(o);
		return;
	}
	printf("%s (%s, nr %d): %s\n", w->syscall[0] ? w->syscall : "(no name)", arch, d->nr, v);
	if (!w->exact) {
		printf("  no rule of the profile and not its default gives it: libseccomp's own "
		       "(an architecture the profile does not list, or a call it derives rules "
		       "for, as i386's socketcall)\n");
		return;
	}
	printf("  decided by %s: %s%s\n", w->name_path[0] ? w->name_path : w->path, w->action,
	       w->as_default ? " (the default's action: libseccomp leaves the rule out)" : "");
	if (w->conds[0])
		printf("  conditions met: %s\n", w->conds);
}

/* ---- a log ------------------------------------------------------------------ */

struct annotate {
	const struct sf_profile_rules *r;
	long filter;      /* -1: every event's */
	size_t line, explained, inexact;
};

/* "0x1f" -> 31: the event log's hex strings. */
static bool hex_field(struct json_object *v, uint64_t *out)
{
	const char *s = v ? json_object_get_string(v) : NULL;
	char *end;

	if (!s || !*s)
		return false;
	errno = 0;
	*out = strtoull(s, &end, 0);
	return !errno && !*end;
}

/* One line, as the event log holds it. */
static void put_line(struct json_object *o)
{
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
					       JSON_C_TO_STRING_NOSLASHESCAPE));
}

static void annotate_line(void *ctx, const char *line)
{
	struct annotate *an = ctx;
	struct json_object *o = json_tokener_parse(line), *v, *args;
	struct seccomp_data d = { 0 };
	struct sf_profile_why w;
	uint32_t audit, bit;
	uint64_t ret, x;
	bool have_args;
	size_t i;

	an->line++;
	if (!o || json_object_get_type(o) != json_type_object)
		sfctl_die(1, "explain: log line %zu: not a JSON object", an->line);
	/* sfilterd's own lines, and the events of other filters, as they are. */
	if (!json_object_object_get_ex(o, "nr", &v) ||
	    (an->filter >= 0 && sfctl_get_int(o, "filter", -1) != an->filter)) {
		put_line(o);
		json_object_put(o);
		return;
	}
	d.nr = json_object_get_int(v);
	if (!arch_named(sfctl_get_str(o, "arch"), &audit, &bit) ||
	    !json_object_object_get_ex(o, "ret", &v) || !hex_field(v, &ret) || ret > UINT32_MAX)
		sfctl_die(1, "explain: log line %zu: an event without a known \"arch\" or a \"ret\"",
		    an->line);
	d.arch = audit;
	have_args = json_object_object_get_ex(o, "args", &args) &&
		    json_object_get_type(args) == json_type_array &&
		    json_object_array_length(args) == 6;
	for (i = 0; have_args && i < 6; i++) {
		if (!hex_field(json_object_array_get_idx(args, i), &x))
			sfctl_die(1, "explain: log line %zu: args[%zu] is not a number", an->line, i);
		d.args[i] = x;
	}
	sf_profile_rules_explain(an->r, &d, &(uint32_t){ (uint32_t)ret }, have_args, &w);
	an->explained++;
	an->inexact += !w.exact;
	json_object_object_add(o, "rule", why_json(&w));
	put_line(o);
	json_object_put(o);
}

int cmd_explain(int argc, char **argv)
{
	struct sf_profile_opts opts = { .caps = "none" };
	const char *profile = NULL, *arch = "x86_64", *nr = NULL, *args = NULL, *log = NULL;
	bool from_log = false;
	long filter = -1;
	struct sf_profile_rules *r;
	struct sf_profile_error err;
	struct seccomp_data d = { 0 };
	struct sf_profile_why w;
	uint32_t bit;
	int opt;

	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":p:K:k:La:n:A:l::f:j", explain_opts, NULL)) != -1) {
		switch (opt) {
		case 'p': profile = optarg; break;
		case 'K': opts.caps = optarg; break;
		case 'k': opts.kernel = optarg; break;
		case 'L': opts.lenient = 1; break;
		case 'a': arch = optarg; break;
		case 'n': nr = optarg; break;
		case 'A': args = optarg; break;
		case 'l': from_log = true; log = optarg; break;
		case 'f': filter = strtol(optarg, NULL, 10); break;
		case 'j': cli_json = true; break;
		default: cli_bad_option("sfctl", opt, argv);
		}
	}
	/* "--log FILE" as two words. */
	if (from_log && !log && optind < argc)
		log = argv[optind++];
	if (optind != argc)
		cli_usage_error("sfctl", "explain: unexpected argument '%s'", argv[optind]);
	if (!profile)
		cli_usage_error("sfctl", "explain: --profile JSON is needed");
	if (from_log == !!nr)
		cli_usage_error("sfctl", "explain: one of --nr NAME (a call) and --log [FILE] (a log's events)");
	if (from_log && args)
		cli_usage_error("sfctl", "explain: --args goes with --nr (a log's events carry theirs)");
	if (!arch_named(arch, &d.arch, &bit))
		cli_usage_error("sfctl", "explain: --arch %s: x86_64, i386 or x32", arch);
	if (sf_profile_rules_open(profile, &opts, &r, &err) < 0)
		sfctl_die(2, "%s: %s", profile, err.msg);
	if (from_log) {
		struct annotate an = { .r = r, .filter = filter };

		sfctl_read_events(log, annotate_line, &an);
		fprintf(stderr, "sfctl: %zu events explained by %s%s\n", an.explained, profile,
			an.inexact ? "; some by no rule of it (\"path\": null)" : "");
		sf_profile_rules_close(r);
		return 0;
	}
	{
		char *end;
		long n = strtol(nr, &end, 0);

		if (*end || end == nr) {
			int k = seccomp_syscall_resolve_name_arch(scmp_arch(d.arch, bit), nr);

			if (k == __NR_SCMP_ERROR)
				sfctl_die(2, "explain: --nr %s: no such syscall on %s", nr, arch);
			n = k;
		}
		d.nr = (int)((uint32_t)n | bit);
	}
	if (args)
		parse_args(args, (uint64_t *)d.args);
	sf_profile_rules_explain(r, &d, NULL, true, &w);
	print_why(&d, arch, &w);
	sf_profile_rules_close(r);
	return 0;
}
