// SPDX-License-Identifier: GPL-2.0-only
/*
 * sfctl diff A B and sfctl diff --subset A B: where two policies' verdicts
 * differ, by arch, syscall and argument region (c2e_diff_chains()).
 *
 * A and B are each a classic filter file (raw or text, as attach --filter
 * reads them), a container seccomp profile (a file whose first byte past
 * blanks is '{'; compiled by libsfprofile for --caps, none by default, as
 * compile does), or pid:PID, the chain sfilterd enforces on that thread
 * (SHOW: its filters oldest first; complain and shadow filters enforce
 * nothing and are left out, a 2012-interface filter is taken as its
 * seccomp_data twin).
 *
 * Exit status: 0 no difference (--subset: B allows nothing A refuses);
 * 1 a difference (--subset: a widening, each with a witness call); 2 bad
 * input (a pid: that sfilterd does not confine too: sfilterd cannot see
 * its kernel filters, if any); 3 sfilterd unreachable (pid:); 4 none
 * found, but some numbers were only sampled, so none is not proven.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sfctl.h"
#include "profile.h"
#include "proto.h"
#include "c2e.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <seccomp.h>
#include <json-c/json.h>

#define EXIT_UNPROVEN 4

/* One side: its filters (attach order) and what it is, for the output. */
struct side {
	const char *arg;
	struct sock_fprog *chain;
	size_t n;
	char what[160];
};

static void add_filter(struct side *s, struct sock_filter *insns, size_t len)
{
	struct sock_fprog *c = realloc(s->chain, (s->n + 1) * sizeof(*c));

	if (!c)
		sfctl_die(1, "out of memory");
	s->chain = c;
	c[s->n++] = (struct sock_fprog){ .len = (unsigned short)len, .filter = insns };
}

static bool is_profile(const char *path)
{
	FILE *f = fopen(path, "re");
	int ch;

	if (!f)
		sfctl_die(2, "%s: %s", path, strerror(errno));
	while ((ch = fgetc(f)) != EOF && isspace(ch))
		;
	fclose(f);
	return ch == '{';
}

static void load_profile(struct side *s, const char *caps)
{
	struct sf_profile_opts opts = { .caps = caps ? caps : "none" };
	struct sf_profile_error err;
	struct sf_profile p;
	size_t i;

	if (sf_profile_compile_file(s->arg, &opts, &p, &err) < 0)
		sfctl_die(2, "%s: %s", s->arg, err.msg);
	for (i = 0; i < p.n_warnings; i++)
		fprintf(stderr, "sfctl: warning: %s: %s\n", s->arg, p.warnings[i]);
	add_filter(s, p.insns, p.len);
	p.insns = NULL;
	snprintf(s->what, sizeof(s->what), "profile %s, caps %s", s->arg, opts.caps);
	sf_profile_free(&p);
}

static void load_classic(struct side *s)
{
	struct sock_filter *insns;
	struct c2e_error err;
	char ebuf[300];
	size_t len;
	int r;

	memset(&err, 0, sizeof(err));
	r = c2e_load_file_abi(s->arg, C2E_ABI_SECCOMP, &insns, &len, &err);
	if (r < 0)
		sfctl_die(2, "%s: %s", s->arg, err.msg[0] ? c2e_error_str(&err, ebuf, sizeof(ebuf)) :
		    strerror(-r));
	if (c2e_validate(insns, len, &err) < 0)
		sfctl_die(2, "%s: %s", s->arg, c2e_error_str(&err, ebuf, sizeof(ebuf)));
	add_filter(s, insns, len);
	snprintf(s->what, sizeof(s->what), "filter %s, %zu instructions", s->arg, len);
}

/* The thread's filter ids, oldest first, from SHOW's task list. */
static struct json_object *thread_filters(struct json_object *tasks, long pid, bool *at_exec)
{
	size_t i;

	for (i = 0; i < json_object_array_length(tasks); i++) {
		struct json_object *t = json_object_array_get_idx(tasks, i), *ids;

		if (sfctl_get_int(t, "tid", 0) != pid)
			continue;
		if (!json_object_object_get_ex(t, "filters", &ids) ||
		    (int64_t)json_object_array_length(ids) != sfctl_get_int(t, "n_filters", 0))
			sfctl_die(2, "pid:%ld: sfilterd lists %" PRId64 " filters of it but sends fewer ids",
			    pid, sfctl_get_int(t, "n_filters", 0));
		*at_exec = sfctl_get_int(t, "at_exec", 0) != 0;
		return ids;
	}
	return NULL;
}

static bool has_flag(struct json_object *f, const char *name)
{
	struct json_object *fl;
	size_t i;

	if (!json_object_object_get_ex(f, "flags", &fl) || !fl)
		return false;
	for (i = 0; i < json_object_array_length(fl); i++)
		if (!strcmp(json_object_get_string(json_object_array_get_idx(fl, i)), name))
			return true;
	return false;
}

/* One filter of a SHOW reply as a seccomp_data program (the 2012
 * interface's through its twin). */
static void add_shown(struct side *s, long pid, struct json_object *f, const struct sfctl_reply *r)
{
	enum c2e_abi abi = C2E_ABI_SECCOMP;
	struct sock_filter *insns = malloc(r->data_len), *twin;
	struct c2e_error err;
	size_t len = r->data_len / 8, tlen;

	if (!insns)
		sfctl_die(1, "out of memory");
	memcpy(insns, r->data, r->data_len);
	if (sfctl_get_str(f, "abi"))
		c2e_abi_parse(sfctl_get_str(f, "abi"), &abi);
	if (abi != C2E_ABI_SECCOMP) {
		memset(&err, 0, sizeof(err));
		if (c2e_rfc_to_seccomp(abi, insns, len, &twin, &tlen, &err) < 0)
			sfctl_die(2, "pid:%ld: filter %" PRId64 " (%s) has no seccomp_data twin: %s",
			    pid, sfctl_get_int(f, "filter", 0), c2e_abi_name(abi), err.msg);
		free(insns);
		insns = twin;
		len = tlen;
	}
	if (c2e_validate(insns, len, &err) < 0)
		sfctl_die(2, "pid:%ld: filter %" PRId64 " does not validate: %s", pid,
		    sfctl_get_int(f, "filter", 0), err.msg);
	add_filter(s, insns, len);
}

static void load_pid(struct side *s, const char *num)
{
	struct json_object *tasks, *ids, **shown = NULL;
	struct sf_id_req req;
	const void **data = NULL;
	struct sfctl_reply *reps = NULL, r;
	size_t i, k, nshown = 0, skipped = 0;
	bool at_exec = false;
	char *end;
	long pid;
	int fd;

	errno = 0;
	pid = strtol(num, &end, 10);
	if (!*num || *end || errno || pid <= 0 || pid > INT32_MAX)
		sfctl_die(2, "%s: pid:PID takes a thread id", s->arg);
	fd = sfctl_connect_daemon();
	memset(&req, 0, sizeof(req));
	req.id = (uint32_t)pid;
	sfctl_send_req(fd, &req, SF_MSG_SHOW, sizeof(req));
	tasks = sfctl_read_tasks(fd, "show", &r);
	/* The filters, one reply each, each program kept (sfctl_recv_reply()
	 * reuses its buffer). */
	while (r.flags & SF_REPLY_MORE) {
		if (!sfctl_recv_reply(fd, &r))
			sfctl_die(3, "show: connection closed");
		if (r.error)
			sfctl_refused("show", &r);
		shown = realloc(shown, (nshown + 1) * sizeof(*shown));
		reps = realloc(reps, (nshown + 1) * sizeof(*reps));
		data = realloc(data, (nshown + 1) * sizeof(*data));
		if (!shown || !reps || !data)
			sfctl_die(1, "out of memory");
		shown[nshown] = sfctl_parse_text(r.text);
		reps[nshown] = r;
		data[nshown] = r.data_len ? memcpy(malloc(r.data_len), r.data, r.data_len) : NULL;
		reps[nshown].data = data[nshown];
		nshown++;
	}
	close(fd);
	ids = thread_filters(tasks, pid, &at_exec);
	if (!ids)
		sfctl_die(2, "pid:%ld: no thread %ld is confined by sfilterd at this socket (or it is "
		    "another user's)", pid, pid);
	for (i = 0; i < json_object_array_length(ids); i++) {
		int64_t id = json_object_get_int64(json_object_array_get_idx(ids, i));

		for (k = 0; k < nshown && sfctl_get_int(shown[k], "filter", 0) != id; k++)
			;
		if (k == nshown || reps[k].data_len < 8)
			sfctl_die(2, "pid:%ld: sfilterd did not send filter %" PRId64 "'s program", pid, id);
		if (has_flag(shown[k], "complain") || has_flag(shown[k], "shadow")) {
			skipped++;
			continue;
		}
		add_shown(s, pid, shown[k], &reps[k]);
	}
	if (skipped)
		fprintf(stderr, "sfctl: pid:%ld: %zu complain or shadow filters left out: they "
			"enforce nothing\n", pid, skipped);
	if (at_exec)
		fprintf(stderr, "sfctl: pid:%ld: its filters judge it from its next execve\n", pid);
	snprintf(s->what, sizeof(s->what), "thread %ld, %zu enforcing filters", pid, s->n);
	for (k = 0; k < nshown; k++) {
		json_object_put(shown[k]);
		free((void *)data[k]);
	}
	free(shown);
	free(reps);
	free(data);
	json_object_put(tasks);
}

static void load_side(struct side *s, const char *caps)
{
	if (!strncmp(s->arg, "pid:", 4))
		load_pid(s, s->arg + 4);
	else if (is_profile(s->arg))
		load_profile(s, caps);
	else
		load_classic(s);
}

static const char *arch_name(uint32_t arch, uint32_t nr)
{
	if (arch == C2E_AUDIT_ARCH_I386)
		return "i386";
	return nr & C2E_X32_SYSCALL_BIT ? "x32" : "x86_64";
}

/* The syscall's name from libseccomp, or its number. */
static void syscall_name(uint32_t arch, uint32_t nr, char *buf, size_t size, bool with_nr)
{
	uint32_t scmp = arch == C2E_AUDIT_ARCH_I386 ? SCMP_ARCH_X86 :
			nr & C2E_X32_SYSCALL_BIT ? SCMP_ARCH_X32 : SCMP_ARCH_X86_64;
	char *name = seccomp_syscall_resolve_num_arch(scmp, (int)nr);

	if (name && with_nr)
		snprintf(buf, size, "%s (%u)", name, nr & ~C2E_X32_SYSCALL_BIT);
	else if (name)
		snprintf(buf, size, "%s", name);
	else
		snprintf(buf, size, "nr %#x", nr);
	free(name);
}

/* "ERRNO(1)", "ALLOW". */
static const char *verdict(uint32_t v, char *buf, size_t size)
{
	char full[64], *sp;

	c2e_verdict_str(v, full, sizeof(full));
	sp = strchr(full, ' ');
	snprintf(buf, size, "%s", sp ? sp + 1 : full);
	return buf;
}

static uint32_t word_of(const struct seccomp_data *d, unsigned int w)
{
	uint32_t v;

	memcpy(&v, (const char *)d + 4 * w, sizeof(v));
	return v;
}

static bool widening(const struct c2e_diff_region *r)
{
	return c2e_verdict_allows(r->b) && !c2e_verdict_allows(r->a);
}

static struct json_object *region_json(const struct c2e_diff_region *r)
{
	struct json_object *o = json_object_new_object(), *w = json_object_new_object();
	struct json_object *args = json_object_new_array();
	char buf[64];
	int i;

	json_object_object_add(o, "arch", json_object_new_string(arch_name(r->arch, r->nr)));
	json_object_object_add(o, "nr", json_object_new_int64(r->nr));
	syscall_name(r->arch, r->nr, buf, sizeof(buf), false);
	json_object_object_add(o, "syscall", json_object_new_string(buf));
	json_object_object_add(o, "where", json_object_new_string(r->where));
	json_object_object_add(o, "a", json_object_new_string(verdict(r->a, buf, sizeof(buf))));
	json_object_object_add(o, "b", json_object_new_string(verdict(r->b, buf, sizeof(buf))));
	json_object_object_add(o, "widening", json_object_new_boolean(widening(r)));
	json_object_object_add(o, "sampled", json_object_new_boolean(r->sampled));
	json_object_object_add(w, "nr", json_object_new_int64((uint32_t)r->witness.nr));
	json_object_object_add(w, "arch", json_object_new_int64(r->witness.arch));
	json_object_object_add(w, "ip", json_object_new_uint64(r->witness.instruction_pointer));
	for (i = 0; i < 6; i++)
		json_object_array_add(args, json_object_new_uint64(r->witness.args[i]));
	json_object_object_add(w, "args", args);
	json_object_object_add(o, "witness", w);
	return o;
}

static void print_region(const struct c2e_diff_region *r, bool full_witness)
{
	char name[64], va[64], vb[64], wn[16];
	unsigned int w;
	int i;

	syscall_name(r->arch, r->nr, name, sizeof(name), true);
	/* A sampled region's text covers only what was classed: never
	 * "every call". */
	printf("  %s %s: %s%sA=%s B=%s%s\n", arch_name(r->arch, r->nr), name,
	       r->where[0] || !r->sampled ? r->where : "some calls",
	       r->where[0] || r->sampled ? ": " : "",
	       verdict(r->a, va, sizeof(va)), verdict(r->b, vb, sizeof(vb)),
	       r->sampled ? "  (sampled, not proven)" : "");
	if (full_witness) {
		printf("      witness: arch %#x nr %#x args [", r->witness.arch,
		       (uint32_t)r->witness.nr);
		for (i = 0; i < 6; i++)
			printf("%s%#" PRIx64, i ? ", " : "", (uint64_t)r->witness.args[i]);
		printf("] ip %#" PRIx64 "\n", (uint64_t)r->witness.instruction_pointer);
	} else if (r->words) {
		printf("      e.g.");
		for (w = 2; w < C2E_DIFF_WORDS; w++)
			if (r->words & (1u << w))
				printf(" %s=%#x", c2e_diff_word_name(w, wn, sizeof(wn)),
				       word_of(&r->witness, w));
		printf("\n");
	}
}

/* A number libseccomp has no name for. */
static bool unnamed(const struct c2e_diff_region *r)
{
	char name[64];

	syscall_name(r->arch, r->nr, name, sizeof(name), false);
	return !strncmp(name, "nr ", 3);
}

/* The region at i, or the run of unnamed consecutive numbers of one arch
 * it starts that differ the same way whatever the arguments (most of the
 * numbers two defaults tell apart) as one line. How many regions. */
static size_t print_run(const struct c2e_diff *d, size_t i, bool subset)
{
	const struct c2e_diff_region *r = &d->regions[i];
	char va[64], vb[64];
	size_t j = i + 1;

	if (!r->where[0] && !r->sampled && unnamed(r))
		while (j < d->n && d->regions[j].arch == r->arch &&
		       d->regions[j].nr == r->nr + (j - i) && !d->regions[j].where[0] &&
		       !d->regions[j].sampled && d->regions[j].a == r->a &&
		       d->regions[j].b == r->b && unnamed(&d->regions[j]))
			j++;
	if (j - i < 3 || subset) {
		print_region(r, subset);
		return 1;
	}
	printf("  %s nr %#x..%#x (%zu numbers, no name): A=%s B=%s\n", arch_name(r->arch, r->nr),
	       r->nr, d->regions[j - 1].nr, j - i, verdict(r->a, va, sizeof(va)),
	       verdict(r->b, vb, sizeof(vb)));
	return j - i;
}

/* Numbers with a difference (regions are grouped by number): named
 * ones, those where one side allows and the other refuses, or those that
 * were only sampled. */
enum { COUNT_NAMED, COUNT_ALLOWS, COUNT_SAMPLED };
static size_t count_numbers(const struct c2e_diff *d, int what)
{
	size_t i, n = 0;
	bool counted = false;

	for (i = 0; i < d->n; i++) {
		const struct c2e_diff_region *r = &d->regions[i];

		if (i && (r->arch != r[-1].arch || r->nr != r[-1].nr))
			counted = false;
		if (counted || (what == COUNT_ALLOWS ?
				c2e_verdict_allows(r->a) == c2e_verdict_allows(r->b) :
				what == COUNT_NAMED ? unnamed(r) : !r->sampled))
			continue;
		counted = true;
		n++;
	}
	return n;
}

static const struct option diff_opts[] = {
	{ "subset", no_argument, NULL, 's' },
	{ "caps", required_argument, NULL, 'K' },
	{ "caps-a", required_argument, NULL, 'a' },
	{ "caps-b", required_argument, NULL, 'b' },
	{ "json", no_argument, NULL, 'j' },
	{ NULL, 0, NULL, 0 },
};

int cmd_diff(int argc, char **argv)
{
	const char *caps = NULL, *caps_a = NULL, *caps_b = NULL;
	struct side a = { 0 }, b = { 0 };
	struct c2e_diff d;
	struct c2e_error err;
	bool subset = false, sampled = false;
	size_t i, shown = 0;
	int opt, r, status;

	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":sK:a:b:j", diff_opts, NULL)) != -1) {
		switch (opt) {
		case 's': subset = true; break;
		case 'K': caps = optarg; break;
		case 'a': caps_a = optarg; break;
		case 'b': caps_b = optarg; break;
		case 'j': cli_json = true; break;
		default: cli_bad_option("sfctl", opt, argv);
		}
	}
	if (argc - optind != 2)
		cli_usage_error("sfctl", "diff: two policies, A and B (a filter file, a profile, "
				"or pid:PID)");
	a.arg = argv[optind];
	b.arg = argv[optind + 1];
	load_side(&a, caps_a ? caps_a : caps);
	load_side(&b, caps_b ? caps_b : caps);
	memset(&err, 0, sizeof(err));
	r = c2e_diff_chains(a.chain, a.n, b.chain, b.n, &d, &err);
	if (r < 0)
		sfctl_die(r == -EINVAL ? 2 : 1, "diff: %s", err.msg[0] ? err.msg : strerror(-r));
	for (i = 0; i < d.n; i++) {
		shown += !subset || widening(&d.regions[i]);
		/* A sampled number's other differences may hide a widening. */
		sampled |= d.regions[i].sampled;
	}
	status = shown ? 1 : d.n_unproven || (subset && sampled) ? EXIT_UNPROVEN : 0;
	if (cli_json) {
		struct json_object *o = json_object_new_object();
		struct json_object *regs = json_object_new_array(), *unp = json_object_new_array();

		json_object_object_add(o, "a", json_object_new_string(a.what));
		json_object_object_add(o, "b", json_object_new_string(b.what));
		json_object_object_add(o, "numbers", json_object_new_int64((int64_t)d.numbers));
		json_object_object_add(o, "differ", json_object_new_int64((int64_t)d.differ));
		json_object_object_add(o, "with_args", json_object_new_int64((int64_t)d.with_args));
		json_object_object_add(o, "calls_run", json_object_new_int64((int64_t)d.points));
		for (i = 0; i < d.n; i++)
			if (!subset || widening(&d.regions[i]))
				json_object_array_add(regs, region_json(&d.regions[i]));
		json_object_object_add(o, subset ? "widenings" : "regions", regs);
		for (i = 0; i < d.n_unproven; i++) {
			struct json_object *u = json_object_new_object();
			char name[64];

			syscall_name(d.unproven[i].arch, d.unproven[i].nr, name, sizeof(name), false);
			json_object_object_add(u, "arch", json_object_new_string(
				arch_name(d.unproven[i].arch, d.unproven[i].nr)));
			json_object_object_add(u, "nr", json_object_new_int64(d.unproven[i].nr));
			json_object_object_add(u, "syscall", json_object_new_string(name));
			json_object_array_add(unp, u);
		}
		json_object_object_add(o, "unproven", unp);
		if (subset)
			json_object_object_add(o, "subset", status == 0 ? json_object_new_boolean(1) :
					       status == 1 ? json_object_new_boolean(0) : NULL);
		sfctl_print_json(o);
		json_object_put(o);
	} else {
		printf("A: %s\nB: %s\n", a.what, b.what);
		if (subset && shown)
			printf("B allows (ALLOW or LOG) what A refuses (any other action):\n");
		for (i = 0; i < d.n; i++)
			if (!subset || widening(&d.regions[i]))
				i += print_run(&d, i, subset) - 1;
		for (i = 0; i < d.n_unproven; i++) {
			char name[64];

			syscall_name(d.unproven[i].arch, d.unproven[i].nr, name, sizeof(name), true);
			printf("  %s %s: no difference found, sampled, not proven\n",
			       arch_name(d.unproven[i].arch, d.unproven[i].nr), name);
		}
		printf("%zu of %zu (arch, syscall) numbers differ (%zu named, %zu where one "
		       "allows and the other refuses), %zu of them by their arguments; %zu "
		       "sampled, not proven; %zu calls run\n", d.differ, d.numbers,
		       count_numbers(&d, COUNT_NAMED), count_numbers(&d, COUNT_ALLOWS),
		       d.with_args, d.n_unproven + count_numbers(&d, COUNT_SAMPLED), d.points);
		if (subset)
			printf("%s\n", status == 0 ? "subset: B allows nothing that A refuses" :
			       status == 1 ? "not a subset: B allows calls that A refuses" :
			       "subset not proven: no widening found, but some numbers were "
			       "only sampled");
	}
	c2e_diff_free(&d);
	for (i = 0; i < a.n; i++)
		free(a.chain[i].filter);
	for (i = 0; i < b.n; i++)
		free(b.chain[i].filter);
	free(a.chain);
	free(b.chain);
	return status;
}
