// SPDX-License-Identifier: GPL-2.0-only
/*
 * sfrun: run a command under sfilter filters.
 *
 *   sfrun [--filter FILE]... [--profile JSON [--lenient]] [--fallback kill|log] [--tsync]
 *         [--log] [--prctl] [--take-seccomp] [--no-gate] -- CMD [ARGS...]
 *
 * Loads every FILE (raw struct sock_filter[] or the text form) and checks
 * it first, so a bad second filter never leaves sfrun half-confined; sets
 * no_new_privs; attaches the filters in order through sfilterd (the last
 * one given is the newest); then execs CMD, whose exit status becomes
 * sfrun's (128+N in a shell when CMD dies by signal N).
 *
 * --profile compiles a container seccomp profile (OCI linux.seccomp, Docker's
 * or Podman's seccomp.json; loader/profile) before anything is attached,
 * judging its caps conditions against sfrun's own effective set (sfrun
 * is the task that receives the filter, and exec keeps it), and attaches
 * it after the --filter ones. The line on how the tier enforces its ERRNO
 * rules is written after that attach, under the profile.
 *
 * sfrun itself is confined from the first attach on, exactly like a
 * process calling seccomp(2) before execve(2): each filter must allow
 * what sfrun still does after it (for the later attaches socket, connect,
 * sendmsg, recvmsg, close, gettid; then execve, or execveat, and whatever
 * the dynamic loader and CMD need). A filter that denies execve stops CMD
 * from starting at all.
 *
 * --prctl and --take-seccomp run CMD with libsfprctl preloaded (see
 * loader/cli/interpose.c), so that CMD's own filter calls attach through
 * sfilterd: prctl(PR_ATTACH_SECCOMP_FILTER) as the 2012 interface, and
 * prctl(PR_SET_SECCOMP)/seccomp() as ordinary filters. A CMD the dynamic
 * loader does not start (statically linked) is refused: its prctl(36)
 * would reach the kernel, which reads it as PR_SET_CHILD_SUBREAPER.
 * Programs CMD starts may still be such (a static one, or one run with
 * LD_PRELOAD removed), so --prctl also installs a kernel seccomp filter,
 * inherited by everything CMD starts, that fails prctl(36, arg) with
 * EINVAL unless arg is 0 or 1 (PR_SET_CHILD_SUBREAPER as its users call
 * it; the interposer passes those to the kernel too): a 2012 attach that
 * misses the interposer fails instead of returning 0 unconfined. Without
 * CAP_SYS_ADMIN that needs no_new_privs, which sfrun then sets.
 *
 * Before the first attach, sfrun installs one gate for all its filters
 * (loader/client/selfgate.c): sfilterd then judges the calls they do not
 * allow before those run. The kernel allows one listener per filter
 * chain, so nothing under sfrun can install another: once it is in,
 * SFILTER_GATE=0 tells CMD's own attaches (--take-seccomp) not to try.
 * --no-gate (or SFILTER_GATE=0) installs none.
 *
 * With --profile, sfrun gives sfilterd the profile before anything is
 * attached (SF_MSG_PROFILE for the next filter of its program), so that
 * the filter's events name the rule that decided them; it costs no call
 * under the profile.
 *
 * Exit status before CMD runs, as env(1) and timeout(1) do: 125 when
 * sfrun fails (usage, a filter file, the daemon), 126 when CMD cannot be
 * run, 127 when it is not found.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sfclient.h"
#include "selfgate.h" /* one gate for all the filters */
#include "admin.h"    /* sf_client_profile() */
#include "profile.h"
#include "c2e.h"
#include "cli.h"
#include "proto.h"
#include "sf_paths.h"  /* SF_PRELOAD_DIR */

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <seccomp.h>
#include <sys/prctl.h>

#define EXIT_FAIL     125
#define EXIT_CANNOT   126
#define EXIT_NOTFOUND 127

#define ROUTE_PRCTL   0x1
#define ROUTE_SECCOMP 0x2

struct filter {
	const char *path;
	struct sock_filter *insns;
	size_t len;
};

struct opts {
	struct filter *filters;
	size_t n;
	unsigned int flags;
	unsigned int route;
	const char *profile_path;
	char *profile_json;        /* its text, read once ("-": stdin) */
	size_t profile_len;
	bool lenient;              /* --lenient: the profile read as runc reads it */
	struct sf_profile profile;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: sfrun [--filter FILE]... [--profile JSON [--lenient]] [--fallback kill|log]\n"
		"             [--tsync] [--log] [--prctl] [--take-seccomp] [--no-gate] -- CMD [ARGS...]\n"
		"       sfrun --help | --version\n"
		"  --filter FILE    a classic seccomp filter: raw .bpf bytes or the text\n"
		"                   form; repeatable, attached in order (last = newest)\n"
		"  --profile JSON   a container seccomp profile (OCI, Docker, Podman), its\n"
		"                   caps conditions judged against sfrun's own; attached last\n"
		"  --lenient        the profile's unknown and repeated keys are warned and\n"
		"                   ignored (as runc does), not refused\n"
		"  --fallback MODE  actions this kernel cannot reproduce: kill (default) or log\n"
		"  --tsync          attach to every thread (SECCOMP_FILTER_FLAG_TSYNC)\n"
		"  --log            log every action but ALLOW (SECCOMP_FILTER_FLAG_LOG)\n"
		"  --prctl          CMD's prctl(PR_ATTACH_SECCOMP_FILTER, prog) (option 36,\n"
		"                   the 2012 interface) attaches through sfilterd\n"
		"  --take-seccomp   CMD's prctl(PR_SET_SECCOMP) and libc seccomp() calls\n"
		"                   attach through sfilterd instead of the kernel\n"
		"  --no-gate        no kernel seccomp gate (SFILTER_GATE=0): the calls the\n"
		"                   filters deny are judged by the tier alone\n"
		"sfrun is confined from the first attach on: each filter must allow what\n"
		"follows it (the later attaches' socket calls, then execve and CMD).\n"
		"The daemon is found at $SFILTER_SOCKET, else /run/sfilter/sfilterd.sock.\n"
		"FILE or JSON may be - (stdin).\n"
		"Exit status: CMD's; 125 if sfrun fails (a usage error too), 126 if CMD cannot\n"
		"run, 127 if not found.\n");
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("sfrun: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EXIT_FAIL);
}

/* The options up to CMD, whose index is returned. */
static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "filter", required_argument, NULL, 'f' },
		{ "profile", required_argument, NULL, 'p' },
		{ "fallback", required_argument, NULL, 'F' },
		{ "tsync", no_argument, NULL, 't' },
		{ "log", no_argument, NULL, 'l' },
		{ "prctl", no_argument, NULL, 'P' },
		{ "take-seccomp", no_argument, NULL, 'S' },
		{ "no-gate", no_argument, NULL, 'G' },
		{ "lenient", no_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	/* sfrun's own failures, usage errors included, exit 125 as env(1)'s
	 * do: every other status is CMD's (sfrun.1, CONVENTIONS). */
	cli_usage_status = EXIT_FAIL;
	opterr = 0;

	o->filters = calloc(argc, sizeof(*o->filters));
	if (!o->filters)
		die("out of memory");
	/* '+': stop at the first non-option, so CMD's own options are its. */
	while ((opt = getopt_long(argc, argv, "+:f:F:tlh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'f': o->filters[o->n++].path = optarg; break;
		case 'p': o->profile_path = optarg; break;
		case 'L': o->lenient = true; break;
		case 'F':
			if (strcmp(optarg, "kill") == 0)
				o->flags &= ~SF_ATTACH_FALLBACK_LOG;
			else if (strcmp(optarg, "log") == 0)
				o->flags |= SF_ATTACH_FALLBACK_LOG;
			else
				cli_usage_error("sfrun", "--fallback: '%s' is neither kill nor log",
						optarg);
			break;
		case 't': o->flags |= SF_ATTACH_TSYNC; break;
		case 'l': o->flags |= SF_ATTACH_LOG; break;
		case 'P': o->route |= ROUTE_PRCTL; break;
		case 'S': o->route |= ROUTE_SECCOMP; break;
		case 'G':
			if (setenv(SF_CLIENT_GATE_ENV, "0", 1))
				die("out of memory");
			break;
		case 'h': usage(stdout); exit(0);
		case 'V': cli_version("sfrun");
		default: cli_bad_option("sfrun", opt, argv);
		}
	}
	if (o->n == 0 && !o->route && !o->profile_path)
		cli_usage_error("sfrun", "no --filter, --profile, --prctl or --take-seccomp given");
	if (optind >= argc)
		cli_usage_error("sfrun", "no command given");
	return optind;
}

/* Compiles --profile against sfrun's own capabilities (0: this thread). */
static void load_profile(struct opts *o)
{
	struct sf_profile_opts popts = { .caps_pid = 0, .lenient = o->lenient };
	struct sf_profile_error err;
	size_t i;

	if (!o->profile_path)
		return;
	/* Read once: profile_announce() sends the same text, and "-" (stdin)
	 * cannot be read twice. */
	o->profile_json = cli_read_file(o->profile_path, 64 << 20, &o->profile_len);
	if (!o->profile_json)
		die("%s: %s", o->profile_path, strerror(errno));
	if (sf_profile_compile(o->profile_json, o->profile_len, &popts, &o->profile, &err) < 0)
		die("%s: %s", o->profile_path, err.msg);
	for (i = 0; i < o->profile.n_warnings; i++)
		fprintf(stderr, "sfrun: warning: %s: %s\n", o->profile_path,
			o->profile.warnings[i]);
}

/* Attaches one filter; dies when it is refused. */
static void attach_one(const char *path, const struct sock_filter *insns, size_t len,
		       unsigned int flags)
{
	struct sock_fprog prog = { .len = (unsigned short)len,
				   .filter = (struct sock_filter *)insns };
	int r = sf_attach(&prog, flags);

	if (r > 0)
		die("%s: TSYNC: thread %d could not be synchronized: %s",
		    path, r, sf_last_error());
	if (r < 0 && errno == EHOSTDOWN) {
		cli_daemon_down("sfrun", sf_proto_socket_path());
		exit(EXIT_FAIL);
	}
	if (r < 0) {
		const char *why = sf_last_error();

		die("%s: %s%s%s%s", path, strerror(errno),
		    why[0] ? " (" : "", why, why[0] ? ")" : "");
	}
}

/* Reads and checks every filter before any is attached. */
static void load_filters(struct opts *o)
{
	size_t i;

	for (i = 0; i < o->n; i++) {
		struct filter *f = &o->filters[i];
		struct c2e_error err = { 0 };
		char buf[256];
		int r = c2e_load_file(f->path, &f->insns, &f->len, &err);

		if (r == -EINVAL)
			die("%s: %s", f->path, c2e_error_str(&err, buf, sizeof(buf)));
		if (r < 0)
			die("%s: %s", f->path, strerror(-r));
		if (c2e_validate(f->insns, f->len, &err) < 0)
			die("%s: %s", f->path, c2e_error_str(&err, buf, sizeof(buf)));
	}
	load_profile(o);
}

/* The profile given to sfilterd before anything is attached (filter id 0:
 * for the next filter of its program this user attaches), so that the
 * filter's events name the rule that decided them. Nothing changes when it
 * is not taken: the events then name no rule. */
static void profile_announce(const struct opts *o)
{
	struct sf_client_reply *rep;
	char mask[32];
	uint64_t set;

	if (!o->profile_path || sf_profile_task_caps(0, &set) < 0)
		return;
	snprintf(mask, sizeof(mask), "0x%llx", (unsigned long long)set);
	rep = malloc(sizeof(*rep));
	if (rep && o->profile_len && o->profile_len < SF_PROTO_MAX_MSG)
		sf_client_profile(NULL, 0, mask, o->lenient ? SF_PROFILE_LENIENT : 0,
				  o->profile_json, o->profile_len, rep);
	free(rep);
}

/* One gate for every filter, before the first attach: each attach would
 * otherwise gate only the first (the kernel allows one listener). */
static void gate_filters(const struct opts *o)
{
	struct sock_fprog *chain = calloc(o->n + 1, sizeof(*chain));
	size_t i, n = 0;

	if (!chain)
		die("out of memory");
	for (i = 0; i < o->n; i++)
		chain[n++] = (struct sock_fprog){ (unsigned short)o->filters[i].len,
						  o->filters[i].insns };
	if (o->profile_path)
		chain[n++] = (struct sock_fprog){ (unsigned short)o->profile.len,
						  o->profile.insns };
	sf_client_gate(chain, n, false);
	free(chain);
}

static void attach_filters(struct opts *o)
{
	size_t i;

	if ((o->n || o->profile_path) && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		die("prctl(PR_SET_NO_NEW_PRIVS): %s", strerror(errno));
	if (o->n || o->profile_path)
		gate_filters(o);
	for (i = 0; i < o->n; i++) {
		attach_one(o->filters[i].path, o->filters[i].insns, o->filters[i].len, o->flags);
		free(o->filters[i].insns);
	}
	free(o->filters);
	if (o->profile_path) {
		const char *gate;
		char text[400];

		attach_one(o->profile_path, o->profile.insns, o->profile.len,
			   o->flags | o->profile.flags);
		/* The tier, from the attach note (loader/daemon/reply.c); a
		 * gate makes the profile's denials exact, before they run. */
		gate = strstr(sf_last_error(), "gate: installed");
		if (gate && !strstr(gate, ", but"))
			snprintf(text, sizeof(text), "gate: installed: the calls the profile "
				 "does not allow are judged by sfilterd before they run");
		else
			sf_profile_tier_text(&o->profile, sf_last_error(),
					     !!(o->flags & SF_ATTACH_FALLBACK_LOG), text,
					     sizeof(text));
		if (text[0])
			fprintf(stderr, "sfrun: %s\n", text);
		sf_profile_free(&o->profile);
	}
	/* Nothing under this gate can install another. */
	if (sf_client_gate_installed() && setenv(SF_CLIENT_GATE_ENV, "0", 1))
		die("out of memory");
}

/* The kernel filter of --prctl (see the top of this file): prctl(36, arg)
 * with arg other than 0 or 1 fails with EINVAL, on every ABI of the
 * machine. Tried without no_new_privs first, which CAP_SYS_ADMIN allows. */
static void gate_prctl36(void)
{
	static const uint32_t arches[] = { SCMP_ARCH_X86, SCMP_ARCH_X32 };
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	size_t i;
	int r = ctx ? 0 : -ENOMEM;

	for (i = 0; i < sizeof(arches) / sizeof(arches[0]) && r == 0; i++)
		if (seccomp_arch_native() != arches[i] &&
		    seccomp_arch_exist(ctx, arches[i]) == -EEXIST)
			r = seccomp_arch_add(ctx, arches[i]);
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EINVAL), SCMP_SYS(prctl), 2,
				     SCMP_A0_32(SCMP_CMP_EQ, PR_ATTACH_SECCOMP_FILTER),
				     SCMP_A1_64(SCMP_CMP_GT, 1));
	if (r == 0)
		r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	if (r == 0) /* the kernel's errno (EACCES), not ECANCELED */
		r = seccomp_attr_set(ctx, SCMP_FLTATR_API_SYSRAWRC, 1);
	if (r == 0) {
		r = seccomp_load(ctx);
		if (r == -EACCES) {
			if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
				die("prctl(PR_SET_NO_NEW_PRIVS): %s", strerror(errno));
			r = seccomp_load(ctx);
		}
	}
	seccomp_release(ctx);
	if (r < 0)
		die("--prctl: installing the kernel filter that fails prctl(36) calls the "
		    "interposer cannot see: %s", strerror(-r));
}

/* The file execvp() would run for cmd, or NULL. */
static const char *find_cmd(const char *cmd, char *buf, size_t size)
{
	const char *path = getenv("PATH"), *p, *end;

	if (strchr(cmd, '/'))
		return cmd;
	for (p = path ? path : "/usr/local/bin:/usr/bin:/bin"; *p; p = end + (*end == ':')) {
		end = strchrnul(p, ':');
		snprintf(buf, size, "%.*s/%s", (int)(end - p), end == p ? "." : p, cmd);
		if (access(buf, X_OK) == 0)
			return buf;
	}
	return NULL;
}

/* The ELF class of file (ELFCLASS32/64), 0 for anything but an ELF file
 * (a script: its interpreter is the 64-bit kind); dies for an ELF
 * executable without an interpreter, which the preload cannot reach. */
static int elf_class(const char *file)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC), cls = 0;
	bool interp = false;
	size_t i, n = 0;
	GElf_Phdr ph;
	Elf *e;

	if (fd < 0)
		return 0; /* execvp() reports it */
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (e && elf_kind(e) == ELF_K_ELF && elf_getphdrnum(e, &n) == 0) {
		cls = gelf_getclass(e);
		for (i = 0; i < n; i++)
			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_INTERP)
				interp = true;
	}
	if (e)
		elf_end(e);
	close(fd);
	if (cls && !interp)
		die("%s is statically linked: the interposer reaches a program only "
		    "through the dynamic loader; its filter calls would go to the kernel", file);
	return cls;
}

/* LD_PRELOAD libsfprctl of CMD's class, found in $SFILTER_PRELOAD_DIR, else
 * beside sfrun (the build tree), else in the directory it was installed to
 * (SF_PRELOAD_DIR: LIBDIR/sfilter, which may be a multiarch directory). */
static void interpose(unsigned int route, const char *cmd)
{
	const char *name = elf_class(cmd) == ELFCLASS32 ? "libsfprctl32.so" : "libsfprctl.so";
	const char *env = getenv("SFILTER_PRELOAD_DIR"), *old = getenv("LD_PRELOAD");
	char exe[PATH_MAX], lib[PATH_MAX + 64], *dir, *pre;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	exe[n > 0 ? n : 0] = '\0';
	dir = dirname(exe);
	snprintf(lib, sizeof(lib), "%s/%s", env && *env ? env : dir, name);
	if (access(lib, R_OK) != 0 && !(env && *env))
		snprintf(lib, sizeof(lib), "%s/%s", SF_PRELOAD_DIR, name);
	if (access(lib, R_OK) != 0)
		die("%s not found in %s, beside sfrun or in $SFILTER_PRELOAD_DIR",
		    name, env && *env ? env : SF_PRELOAD_DIR);
	if (asprintf(&pre, "%s%s%s", lib, old && *old ? " " : "", old ? old : "") < 0 ||
	    setenv("LD_PRELOAD", pre, 1) ||
	    setenv("SFILTER_INTERPOSE", route == ROUTE_PRCTL ? "prctl" :
		   route == ROUTE_SECCOMP ? "seccomp" : "prctl,seccomp", 1))
		die("out of memory");
	free(pre);
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	int cmd = parse(argc, argv, &o);
	char path[PATH_MAX];
	const char *file;

	load_filters(&o);
	profile_announce(&o);
	if (o.route) {
		file = find_cmd(argv[cmd], path, sizeof(path));
		if (file)
			interpose(o.route, file);
		if (o.route & ROUTE_PRCTL)
			gate_prctl36();
	}
	attach_filters(&o);
	execvp(argv[cmd], argv + cmd);
	fprintf(stderr, "sfrun: %s: %s\n", argv[cmd], strerror(errno));
	return errno == ENOENT || errno == ENOTDIR ? EXIT_NOTFOUND : EXIT_CANNOT;
}
