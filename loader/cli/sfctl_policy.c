// SPDX-License-Identifier: GPL-2.0
/*
 * sfctl policy-from-log: a filter that allows what a process was seen to
 * call (from the daemon's log, or a log file), in text form and validated
 * binary form, or as an OCI seccomp profile (sfctl_oci.c).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sfctl.h"
#include "c2e.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

struct policy {
	struct seen *s;
	size_t n, cap;
	long pid;
	size_t events, used;
};

static void add_event(void *ctx, const char *line)
{
	struct policy *p = ctx;
	struct json_object *o = json_tokener_parse(line), *v;
	const char *arch, *name;
	uint32_t a;
	int32_t nr;
	size_t i;

	if (!o)
		return;
	if (!json_object_object_get_ex(o, "nr", &v) || !(arch = get_str(o, "arch")))
		goto out; /* a daemon line, not an event */
	p->events++;
	if (p->pid && get_int(o, "pid", 0) != p->pid)
		goto out;
	nr = json_object_get_int(v);
	if (!strcmp(arch, "x86_64") || !strcmp(arch, "x32"))
		a = AUDIT_X86_64; /* x32: nr carries the x32 bit, as the filter sees it */
	else if (!strcmp(arch, "i386"))
		a = AUDIT_I386;
	else
		goto out;
	p->used++;
	for (i = 0; i < p->n; i++)
		if (p->s[i].arch == a && p->s[i].nr == nr)
			goto out;
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 64;
		p->s = realloc(p->s, p->cap * sizeof(*p->s));
		if (!p->s)
			die(1, "out of memory");
	}
	name = get_str(o, "syscall");
	p->s[p->n].arch = a;
	p->s[p->n].nr = nr;
	snprintf(p->s[p->n].name, sizeof(p->s[p->n].name), "%s%s",
		 strcmp(arch, "x32") ? "" : "x32 ", name ? name : "?");
	p->n++;
out:
	json_object_put(o);
}

static int cmp_seen(const void *a, const void *b)
{
	const struct seen *x = a, *y = b;

	if (x->arch != y->arch)
		return x->arch < y->arch ? -1 : 1;
	return x->nr < y->nr ? -1 : x->nr > y->nr;
}

/* The text form: for each arch seen, "ld nr" then one jeq/ret ALLOW pair
 * per syscall (every conditional jump stays short, whatever the count),
 * then the default; an arch not seen is killed. */
static char *policy_text(struct policy *p, const char *dflt)
{
	char *text = NULL;
	size_t tlen = 0, i, j, blk = 0;
	FILE *m = open_memstream(&text, &tlen);

	qsort(p->s, p->n, sizeof(*p->s), cmp_seen);
	fprintf(m, "; sfctl policy-from-log: %zu (arch, syscall) pairs seen in %zu events\n"
		"; an allowlist; everything else: %s; another arch: KILL_PROCESS\n",
		p->n, p->used, dflt);
	for (i = 0; i < p->n; blk++) {
		uint32_t arch = p->s[i].arch;

		fprintf(m, "arch%zu:\tld arch\n\tjeq #0x%08x, blk%zu, skip%zu\t; %s\n"
			"skip%zu:\tja arch%zu\n", blk, arch, blk, blk,
			arch == AUDIT_X86_64 ? "AUDIT_ARCH_X86_64" : "AUDIT_ARCH_I386",
			blk, blk + 1);
		fprintf(m, "blk%zu:\tld nr\n", blk);
		for (j = i; j < p->n && p->s[j].arch == arch; j++)
			fprintf(m, "\tjeq #%d, ok%zu_%zu, +1\t; %s\nok%zu_%zu:\tret ALLOW\n",
				p->s[j].nr, blk, j, p->s[j].name, blk, j);
		fprintf(m, "\tret %s\n", dflt);
		i = j;
	}
	fprintf(m, "arch%zu:\tret KILL_PROCESS\n", blk);
	fclose(m);
	return text;
}

/* The events of log ("-": stdin; NULL: the daemon's log) into p. */
static void policy_read(struct policy *p, const char *log)
{
	FILE *f;
	char *line = NULL;
	size_t cap = 0;

	if (!log) {
		read_log(false, add_event, p);
		return;
	}
	f = strcmp(log, "-") ? fopen(log, "re") : stdin;
	if (!f)
		die(2, "%s: %s", log, strerror(errno));
	while (getline(&line, &cap, f) > 0)
		add_event(p, line);
	free(line);
	if (f != stdin)
		fclose(f);
}

/* prefix.s and prefix.bpf. */
static void policy_write(const char *prefix, const char *text,
			 const struct sock_filter *insns, size_t n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s.s", prefix);
	f = fopen(path, "we");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0)
		die(1, "%s: %s", path, strerror(errno));
	snprintf(path, sizeof(path), "%s.bpf", prefix);
	if (c2e_save_raw(path, insns, n) < 0)
		die(1, "%s: %s", path, strerror(errno));
}

static void policy_json(const struct policy *p, const char *dflt, const char *prefix,
			const char *text, size_t n)
{
	struct json_object *o = json_object_new_object(), *arr = json_object_new_array();
	char path[4096];
	size_t i;

	for (i = 0; i < p->n; i++) {
		struct json_object *s = json_object_new_object();

		json_object_object_add(s, "arch", json_object_new_string(
			p->s[i].arch == AUDIT_I386 ? "i386" :
			(p->s[i].nr & 0x40000000) ? "x32" : "x86_64"));
		json_object_object_add(s, "nr", json_object_new_int(p->s[i].nr));
		json_object_object_add(s, "syscall", json_object_new_string(
			p->s[i].name + (!strncmp(p->s[i].name, "x32 ", 4) ? 4 : 0)));
		json_object_array_add(arr, s);
	}
	json_object_object_add(o, "events", json_object_new_int64(p->used));
	json_object_object_add(o, "syscalls", arr);
	json_object_object_add(o, "default", json_object_new_string(dflt));
	json_object_object_add(o, "insns", json_object_new_int64(n));
	if (prefix) {
		snprintf(path, sizeof(path), "%s.s", prefix);
		json_object_object_add(o, "text", json_object_new_string(path));
		snprintf(path, sizeof(path), "%s.bpf", prefix);
		json_object_object_add(o, "raw", json_object_new_string(path));
	} else {
		json_object_object_add(o, "policy", json_object_new_string(text));
	}
	print_json(o);
	json_object_put(o);
}

int cmd_policy(const char *log, long pid, const char *dflt, const char *prefix,
	       const char *format)
{
	struct policy p = { .pid = pid };
	struct sock_filter *insns;
	struct c2e_error err;
	uint32_t action;
	char ebuf[300], *text;
	size_t n;

	if (c2e_parse_action(dflt, &action) < 0)
		die(2, "--default %s: not an action (KILL_PROCESS, ERRNO(1), LOG, ...)", dflt);
	if (strcmp(format, "classic") && strcmp(format, "oci"))
		die(2, "--format %s: classic or oci", format);
	policy_read(&p, log);
	if (!p.n)
		die(1, "no syscall events%s in %s", pid ? " of that pid" : "",
		    log ? log : "the daemon's log");
	if (!strcmp(format, "oci")) {
		int rc = policy_oci(p.s, p.n, p.used, dflt, prefix);

		free(p.s);
		return rc;
	}
	text = policy_text(&p, dflt);
	memset(&err, 0, sizeof(err));
	if (c2e_asm_parse(text, strlen(text), &insns, &n, &err) < 0 ||
	    c2e_validate(insns, n, &err) < 0)
		die(1, "generated policy does not validate: %s",
		    c2e_error_str(&err, ebuf, sizeof(ebuf)));
	if (prefix)
		policy_write(prefix, text, insns, n);
	if (json_out)
		policy_json(&p, dflt, prefix, text, n);
	else if (prefix)
		printf("%zu syscalls from %zu events: %s.s and %s.bpf (%zu instructions, valid)\n",
		       p.n, p.used, prefix, prefix, n);
	else
		fputs(text, stdout);
	free(text);
	free(insns);
	free(p.s);
	return 0;
}

