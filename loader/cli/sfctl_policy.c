// SPDX-License-Identifier: GPL-2.0-only
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
#include "grow.h"
#include "event_json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

/* One call of --pid's process as the log gives it, and which process
 * (start_ns: its leader's start; a reused pid has another) and image
 * (exec_id) made it. known: the event says (an older sfilterd's do not). */
struct call {
	uint32_t arch;
	int32_t nr;
	char name[48];
	bool known;
	int64_t uid;                 /* -1: the event does not say */
	uint64_t start, exec_id;
	char comm[17];
	uint64_t count;              /* the calls the event stands for */
	bool repeat;                 /* a repeat event: no exec_id, which image
					made the calls is not known */
};

struct policy {
	struct learned_call *s;
	size_t n, cap;
	const struct policy_pick *pick;
	size_t events, used, lines;
	uint64_t calls;              /* the calls the used events stand for */
	struct call *c;              /* --pid: its calls, before a process is picked */
	size_t nc, capc;
};

/* Adds (a, nr) to the pairs seen, once. */
static void add_seen(struct policy *p, uint32_t a, int32_t nr, const char *name,
		     uint64_t count)
{
	size_t i;

	p->used++;
	p->calls += count;
	for (i = 0; i < p->n; i++)
		if (p->s[i].arch == a && p->s[i].nr == nr) {
			p->s[i].calls += count;
			return;
		}
	if (C2E_GROW(p->s, p->cap, p->n + 1))
		sfctl_die(1, "out of memory");
	p->s[p->n].arch = a;
	p->s[p->n].nr = nr;
	p->s[p->n].calls = count;
	snprintf(p->s[p->n].name, sizeof(p->s[p->n].name), "%s", name);
	p->n++;
}

bool sfctl_event_count(struct json_object *o, uint64_t *n)
{
	struct json_object *v;

	*n = 1;
	if (!json_object_object_get_ex(o, "count", &v))
		return true;
	if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
		return false;
	*n = (uint64_t)json_object_get_int64(v);
	return true;
}

/* A line that is neither sfilterd's nor an event that says which syscall
 * of which arch: a policy is learned from data, and such a line may be an
 * attempt to write a rule, so nothing is learned from a log that has one.
 * Exits 1 naming the line. */
static void __attribute__((noreturn, format(printf, 2, 3)))
bad_line(size_t line, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	sfctl_die(1, "line %zu of the log: %s; nothing learned", line, why);
}

/* The event's syscall: its arch (AUDIT_ARCH_*), number and label (the
 * name libseccomp gives it, never the log's text, which must agree). */
static void event_syscall(struct json_object *o, size_t line, uint32_t *a, int32_t *nr,
			  char *label, size_t size)
{
	struct json_object *v;
	const char *arch;
	char *name;
	int64_t n;

	json_object_object_get_ex(o, "nr", &v);
	n = json_object_get_int64(v);
	if (!json_object_is_type(v, json_type_int) || n < INT32_MIN || n > INT32_MAX)
		bad_line(line, "\"nr\" is %s, not a syscall number",
			 json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
	*nr = (int32_t)n;
	arch = sfctl_get_str(o, "arch");
	if (!arch || (strcmp(arch, "x86_64") && strcmp(arch, "x32") && strcmp(arch, "i386")))
		bad_line(line, "\"arch\" is not x86_64, x32 or i386");
	if (!strcmp(arch, "x32") != !!(*nr & 0x40000000))
		bad_line(line, "nr %d and arch %s disagree on the x32 bit", *nr, arch);
	/* x32: nr carries the x32 bit, as the filter sees it. */
	*a = strcmp(arch, "i386") ? AUDIT_X86_64 : AUDIT_I386;
	name = sf_event_syscall_name(arch, *nr);
	if (json_object_object_get_ex(o, "syscall", &v) &&
	    (!json_object_is_type(v, json_type_string) || !name ||
	     strcmp(json_object_get_string(v), name)))
		bad_line(line, "\"syscall\" is %s, where libseccomp calls nr %d of %s %s%s%s",
			 json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN), *nr, arch,
			 name ? "\"" : "nothing", name ? name : "", name ? "\"" : "");
	if (name)
		snprintf(label, size, "%s%s", strcmp(arch, "x32") ? "" : "x32 ", name);
	else
		snprintf(label, size, "%snr %d", strcmp(arch, "x32") ? "" : "x32 ", *nr);
	free(name);
}

static void add_event(void *ctx, const char *line)
{
	struct policy *p = ctx;
	struct json_object *o, *v;
	char label[48];
	uint64_t count;
	uint32_t a;
	int32_t nr;

	p->lines++;
	if (!line[strspn(line, " \t\r\n")])
		return;
	o = json_tokener_parse(line);
	if (!o || !json_object_is_type(o, json_type_object))
		bad_line(p->lines, "not a JSON object");
	if (json_object_object_get_ex(o, "sfilterd", NULL))
		goto out; /* a line of sfilterd's own */
	if (!json_object_object_get_ex(o, "nr", NULL))
		bad_line(p->lines, "neither an event (no \"nr\") nor a line of sfilterd's");
	event_syscall(o, p->lines, &a, &nr, label, sizeof(label));
	p->events++;
	if (!sfctl_event_count(o, &count)) {
		json_object_object_get_ex(o, "count", &v);
		bad_line(p->lines, "\"count\" is %s, not a count of calls",
			 json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
	}
	if (p->pick->filter && sfctl_get_int(o, "filter", 0) != p->pick->filter)
		goto out;
	if (p->pick->pid && sfctl_get_int(o, "pid", 0) != p->pick->pid)
		goto out;
	if (!p->pick->pid) {
		add_seen(p, a, nr, label, count);
	} else {
		struct call *c;

		if (C2E_GROW(p->c, p->capc, p->nc + 1))
			sfctl_die(1, "out of memory");
		c = &p->c[p->nc++];
		memset(c, 0, sizeof(*c));
		c->arch = a;
		c->nr = nr;
		snprintf(c->name, sizeof(c->name), "%s", label);
		c->uid = sfctl_get_int(o, "uid", -1);
		c->count = count;
		c->repeat = json_object_object_get_ex(o, "repeat", &v) &&
			    json_object_get_boolean(v);
		c->known = json_object_object_get_ex(o, "start_ns", NULL) &&
			   (c->repeat || json_object_object_get_ex(o, "exec_id", NULL));
		c->start = (uint64_t)sfctl_get_int(o, "start_ns", 0);
		c->exec_id = (uint64_t)sfctl_get_int(o, "exec_id", 0);
		snprintf(c->comm, sizeof(c->comm), "%s",
			 sfctl_get_str(o, "comm") ? sfctl_get_str(o, "comm") : "");
	}
out:
	json_object_put(o);
}

/* ---- --pid: which process ------------------------------------------------ */

/* An image of a process that had the pid: its calls, where it was first. */
struct image { const struct call *first; uint64_t calls; };

static bool same_process(const struct call *a, const struct call *b)
{
	return a->known == b->known && a->uid == b->uid && a->start == b->start;
}

static bool same_image(const struct call *a, const struct call *b)
{
	return same_process(a, b) && a->exec_id == b->exec_id;
}

static bool picked(const struct policy_pick *k, const struct call *c)
{
	/* A repeat event does not say which image made its calls. */
	return (!k->uid_set || c->uid == (int64_t)k->uid) && (!k->start_set || c->start == k->start) &&
	       (!k->exec_set || (!c->repeat && c->exec_id == k->exec_id));
}

/* The images of the picked calls, in the order they first came. */
static struct image *images_of(const struct policy *p, size_t *n)
{
	struct image *im = calloc(p->nc ? p->nc : 1, sizeof(*im));
	size_t i, j;

	if (!im)
		sfctl_die(1, "out of memory");
	*n = 0;
	for (i = 0; i < p->nc; i++) {
		if (!picked(p->pick, &p->c[i]))
			continue;
		/* A repeat event's calls go to its process's first image. */
		for (j = 0; j < *n && !(p->c[i].repeat ? same_process(im[j].first, &p->c[i]) :
					same_image(im[j].first, &p->c[i])); j++)
			;
		if (j == *n)
			im[(*n)++].first = &p->c[i];
		im[j].calls += p->c[i].count;
	}
	return im;
}

static void image_line(FILE *f, const struct image *im)
{
	const struct call *c = im->first;

	if (c->known)
		fprintf(f, "  uid %lld  start_ns %llu  exec_id %llu  comm %s  %llu calls\n",
			(long long)c->uid,
			(unsigned long long)c->start, (unsigned long long)c->exec_id, c->comm,
			(unsigned long long)im->calls);
	else
		fprintf(f, "  uid %lld  (no process identity: an older sfilterd's log)  comm %s  "
			"%llu calls\n", (long long)c->uid, c->comm, (unsigned long long)im->calls);
}

static struct json_object *image_json(const struct image *im)
{
	struct json_object *o = json_object_new_object();
	const struct call *c = im->first;

	json_object_object_add(o, "uid", json_object_new_int64(c->uid));
	if (c->known) {
		json_object_object_add(o, "start_ns", json_object_new_uint64(c->start));
		json_object_object_add(o, "exec_id", json_object_new_uint64(c->exec_id));
	}
	json_object_object_add(o, "comm", json_object_new_string(c->comm));
	json_object_object_add(o, "calls", json_object_new_uint64(im->calls));
	return o;
}

/* The log held the pid for more than one process (or uid): nothing is
 * learned; each is listed, with how to pick one. Exits 1. */
static void refuse_ambiguous(const struct policy *p, const struct image *im, size_t n)
{
	const char *why = "was more than one process in the log (a pid is reused once "
			  "its process is gone): pick one with --uid, --start or --exec-id";
	size_t i;

	if (cli_json) {
		struct json_object *o = json_object_new_object(), *arr = json_object_new_array();

		for (i = 0; i < n; i++)
			json_object_array_add(arr, image_json(&im[i]));
		json_object_object_add(o, "error", json_object_new_string(why));
		json_object_object_add(o, "pid", json_object_new_int64(p->pick->pid));
		json_object_object_add(o, "images", arr);
		sfctl_print_json(o);
		json_object_put(o);
	}
	fprintf(stderr, "sfctl: pid %ld %s:\n", p->pick->pid, why);
	for (i = 0; i < n; i++)
		image_line(stderr, &im[i]);
	exit(1);
}

/* Learns from one process of --pid: every image it ran (a filter stays
 * across execve, so a policy for the process allows what each image
 * called), as picked. The process is im[0]'s; *proc says which. */
static void learn_process(struct policy *p, const struct image *im, size_t n,
			  struct json_object **proc)
{
	struct json_object *ids = json_object_new_array();
	const struct call *c = im[0].first;
	size_t i;

	for (i = 0; i < p->nc; i++)
		if (picked(p->pick, &p->c[i]))
			add_seen(p, p->c[i].arch, p->c[i].nr, p->c[i].name, p->c[i].count);
	*proc = json_object_new_object();
	json_object_object_add(*proc, "pid", json_object_new_int64(p->pick->pid));
	json_object_object_add(*proc, "uid", json_object_new_int64(c->uid));
	if (c->known) {
		json_object_object_add(*proc, "start_ns", json_object_new_uint64(c->start));
		for (i = 0; i < n; i++)
			json_object_array_add(ids, json_object_new_uint64(im[i].first->exec_id));
		json_object_object_add(*proc, "exec_ids", ids);
	} else {
		json_object_put(ids);
		fprintf(stderr, "sfctl: warning: the events of pid %ld carry no process identity "
			"(an older sfilterd's log): they may be of more than one process\n",
			p->pick->pid);
	}
	fprintf(stderr, "sfctl: pid %ld: learned from uid %lld", p->pick->pid, (long long)c->uid);
	if (c->known) {
		fprintf(stderr, ", start_ns %llu, exec_id", (unsigned long long)c->start);
		for (i = 0; i < n; i++)
			fprintf(stderr, "%s %llu", i ? "," : "",
				(unsigned long long)im[i].first->exec_id);
	}
	fprintf(stderr, " (comm %s)\n", c->comm);
}

/* --pid: the calls of the one process picked, into the pairs seen. */
static struct json_object *pick_process(struct policy *p)
{
	struct json_object *proc = NULL;
	struct image *im;
	size_t n, i;

	im = images_of(p, &n);
	for (i = 1; i < n; i++)
		if (!same_process(im[0].first, im[i].first))
			refuse_ambiguous(p, im, n);
	if (n)
		learn_process(p, im, n, &proc);
	free(im);
	return proc;
}

static int cmp_seen(const void *a, const void *b)
{
	const struct learned_call *x = a, *y = b;

	if (x->arch != y->arch)
		return x->arch < y->arch ? -1 : 1;
	return x->nr < y->nr ? -1 : x->nr > y->nr;
}

/* The text form: for each arch seen, "ld nr" then one jeq/ret ALLOW pair
 * per syscall (every conditional jump stays short, whatever the count),
 * then the default; an arch not seen is killed. */
static char *policy_text(struct policy *p, const char *dflt, struct json_object *proc)
{
	char *text = NULL;
	size_t tlen = 0, i, j, blk = 0;
	FILE *m = open_memstream(&text, &tlen);

	if (p->n) /* p->s is NULL before the first */
		qsort(p->s, p->n, sizeof(*p->s), cmp_seen);
	fprintf(m, "; sfctl policy-from-log: %zu (arch, syscall) pairs seen in %zu events "
		"(%llu calls)\n"
		"; an allowlist; everything else: %s; another arch: KILL_PROCESS\n",
		p->n, p->used, (unsigned long long)p->calls, dflt);
	if (proc)
		fprintf(m, "; the process: %s\n",
			json_object_to_json_string_ext(proc, JSON_C_TO_STRING_PLAIN));
	for (i = 0; i < p->n; blk++) {
		uint32_t arch = p->s[i].arch;

		fprintf(m, "arch%zu:\tld arch\n\tjeq #0x%08x, blk%zu, skip%zu\t; %s\n"
			"skip%zu:\tja arch%zu\n", blk, arch, blk, blk,
			arch == AUDIT_X86_64 ? "AUDIT_ARCH_X86_64" : "AUDIT_ARCH_I386",
			blk, blk + 1);
		fprintf(m, "blk%zu:\tld nr\n", blk);
		for (j = i; j < p->n && p->s[j].arch == arch; j++)
			fprintf(m, "\tjeq #%d, ok%zu_%zu, +1\t; %s (%llu calls)\n"
				"ok%zu_%zu:\tret ALLOW\n", p->s[j].nr, blk, j, p->s[j].name,
				(unsigned long long)p->s[j].calls, blk, j);
		fprintf(m, "\tret %s\n", dflt);
		i = j;
	}
	fprintf(m, "arch%zu:\tret KILL_PROCESS\n", blk);
	fclose(m);
	return text;
}

void sfctl_read_events(const char *log, event_fn fn, void *ctx)
{
	FILE *f;
	char *line = NULL;
	size_t cap = 0;

	if (!log) {
		sfctl_read_log(false, fn, ctx);
		return;
	}
	f = strcmp(log, "-") ? fopen(log, "re") : stdin;
	if (!f)
		sfctl_die(2, "%s: %s", log, strerror(errno));
	while (getline(&line, &cap, f) > 0)
		fn(ctx, line);
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
		sfctl_die(1, "%s: %s", path, strerror(errno));
	snprintf(path, sizeof(path), "%s.bpf", prefix);
	if (c2e_save_raw(path, insns, n) < 0)
		sfctl_die(1, "%s: %s", path, strerror(errno));
}

static void policy_json(const struct policy *p, const char *dflt, const char *prefix,
			const char *text, size_t n, struct json_object *proc)
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
		json_object_object_add(s, "calls", json_object_new_uint64(p->s[i].calls));
		json_object_object_add(s, "syscall", json_object_new_string(
			p->s[i].name + (!strncmp(p->s[i].name, "x32 ", 4) ? 4 : 0)));
		json_object_array_add(arr, s);
	}
	json_object_object_add(o, "events", json_object_new_int64(p->used));
	json_object_object_add(o, "calls", json_object_new_uint64(p->calls));
	json_object_object_add(o, "syscalls", arr);
	json_object_object_add(o, "default", json_object_new_string(dflt));
	json_object_object_add(o, "insns", json_object_new_int64(n));
	if (proc)
		json_object_object_add(o, "process", json_object_get(proc));
	if (prefix) {
		snprintf(path, sizeof(path), "%s.s", prefix);
		json_object_object_add(o, "text", json_object_new_string(path));
		snprintf(path, sizeof(path), "%s.bpf", prefix);
		json_object_object_add(o, "raw", json_object_new_string(path));
	} else {
		json_object_object_add(o, "policy", json_object_new_string(text));
	}
	sfctl_print_json(o);
	json_object_put(o);
}

static bool learned(const struct policy *p, uint32_t arch, int32_t nr)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (p->s[i].arch == arch && p->s[i].nr == nr)
			return true;
	return false;
}

/* The policy allows exactly what was learned: every (arch, syscall) seen,
 * and nothing else among each arch's first 1,024 numbers (x32's too),
 * whatever the arguments (its rules test none). Else nothing is written:
 * a policy that allows what no event showed is a bug, never a policy. */
static void check_learned(const struct policy *p, const struct sock_filter *insns, size_t n)
{
	static const uint32_t arches[] = { AUDIT_X86_64, AUDIT_I386 };
	struct seccomp_data sd;
	size_t i, k;
	int32_t nr;

	for (k = 0; k < 2; k++)
		for (i = 0; i < 3 * 1024; i++) {
			nr = (int32_t)(i % 1024) | (i >= 1024 && k == 0 ? 0x40000000 : 0);
			if (i >= 2048)
				nr = -1 - (int32_t)(i - 2048); /* and negative ones */
			memset(&sd, 0, sizeof(sd));
			sd.arch = arches[k];
			sd.nr = nr;
			if ((c2e_interpret(insns, n, &sd) == SECCOMP_RET_ALLOW) != learned(p, arches[k], nr))
				sfctl_die(1, "the generated policy %s %s nr %d, which the log %s; nothing "
				    "written", learned(p, arches[k], nr) ? "refuses" : "allows",
				    k ? "i386" : "x86_64", nr,
				    learned(p, arches[k], nr) ? "has" : "never showed");
		}
	for (i = 0; i < p->n; i++) {
		memset(&sd, 0, sizeof(sd));
		sd.arch = p->s[i].arch;
		sd.nr = p->s[i].nr;
		if (c2e_interpret(insns, n, &sd) != SECCOMP_RET_ALLOW)
			sfctl_die(1, "the generated policy refuses %s, which the log has; nothing written",
			    p->s[i].name);
	}
}

int cmd_policy(const char *log, const struct policy_pick *pick, const char *dflt,
	       const char *prefix, const char *format)
{
	struct policy p = { .pick = pick };
	struct json_object *proc = NULL;
	struct sock_filter *insns;
	struct c2e_error err;
	uint32_t action;
	char ebuf[300], *text;
	size_t n;

	if (c2e_parse_action(dflt, &action) < 0)
		sfctl_die(2, "--default %s: not an action (KILL_PROCESS, ERRNO(1), LOG, ...)", dflt);
	if ((action & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ALLOW)
		sfctl_die(2, "--default %s: a learned policy would allow every call; its default "
		    "refuses or logs (KILL_PROCESS, ERRNO(1), LOG, ...)", dflt);
	if (strcmp(format, "classic") && strcmp(format, "oci"))
		sfctl_die(2, "--format %s: classic or oci", format);
	if (!pick->pid && (pick->uid_set || pick->start_set || pick->exec_set))
		sfctl_die(2, "--uid, --start and --exec-id pick one process of --pid PID");
	sfctl_read_events(log, add_event, &p);
	if (pick->pid)
		proc = pick_process(&p);
	if (!p.n)
		sfctl_die(1, "no syscall events%s%s in %s", pick->filter ? " of that filter" : "",
		    pick->pid ? " of that pid (as picked)" : "",
		    log ? log : "the daemon's log");
	if (!strcmp(format, "oci")) {
		int rc = policy_oci(p.s, p.n, p.used, dflt, prefix);

		free(p.s);
		free(p.c);
		json_object_put(proc);
		return rc;
	}
	text = policy_text(&p, dflt, proc);
	memset(&err, 0, sizeof(err));
	if (c2e_asm_parse(text, strlen(text), &insns, &n, &err) < 0 ||
	    c2e_validate(insns, n, &err) < 0)
		sfctl_die(1, "generated policy does not validate: %s",
		    c2e_error_str(&err, ebuf, sizeof(ebuf)));
	check_learned(&p, insns, n);
	if (prefix)
		policy_write(prefix, text, insns, n);
	if (cli_json)
		policy_json(&p, dflt, prefix, text, n, proc);
	else if (prefix)
		printf("%zu syscalls from %zu events: %s.s and %s.bpf (%zu instructions, valid)\n",
		       p.n, p.used, prefix, prefix, n);
	else
		fputs(text, stdout);
	free(text);
	free(insns);
	free(p.s);
	free(p.c);
	json_object_put(proc);
	return 0;
}
