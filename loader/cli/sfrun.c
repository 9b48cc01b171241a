// SPDX-License-Identifier: GPL-2.0
/*
 * sfrun: run a command under sfilter filters.
 *
 *   sfrun --filter FILE [--filter FILE]... [--fallback kill|log] [--tsync]
 *         [--log] -- CMD [ARGS...]
 *
 * Loads every FILE (raw struct sock_filter[] or the text form) and checks
 * it first, so a bad second filter never leaves sfrun half-confined; sets
 * no_new_privs; attaches the filters in order through sfilterd (the last
 * one given is the newest); then execs CMD, whose exit status becomes
 * sfrun's (128+N in a shell when CMD dies by signal N).
 *
 * sfrun itself is confined from the first attach on, exactly like a
 * process calling seccomp(2) before execve(2): each filter must allow
 * what sfrun still does after it (for the later attaches socket, connect,
 * sendmsg, recvmsg, close, gettid; then execve, or execveat, and whatever
 * the dynamic loader and CMD need). A filter that denies execve stops CMD
 * from starting at all.
 *
 * Exit status before CMD runs, as env(1) and timeout(1) do: 125 when
 * sfrun fails (usage, a filter file, the daemon), 126 when CMD cannot be
 * run, 127 when it is not found.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sfclient.h"
#include "c2e.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>

#define EXIT_FAIL     125
#define EXIT_CANNOT   126
#define EXIT_NOTFOUND 127

struct filter {
	const char *path;
	struct sock_filter *insns;
	size_t len;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: sfrun --filter FILE [--filter FILE]... [--fallback kill|log]\n"
		"             [--tsync] [--log] -- CMD [ARGS...]\n"
		"  --filter FILE    a classic seccomp filter: raw .bpf bytes or the text\n"
		"                   form; repeatable, attached in order (last = newest)\n"
		"  --fallback MODE  actions this kernel cannot reproduce: kill (default) or log\n"
		"  --tsync          attach to every thread (SECCOMP_FILTER_FLAG_TSYNC)\n"
		"  --log            log every action but ALLOW (SECCOMP_FILTER_FLAG_LOG)\n"
		"sfrun is confined from the first attach on: each filter must allow what\n"
		"follows it (the later attaches' socket calls, then execve and CMD).\n"
		"The daemon is found at $SFILTER_SOCKET, else /run/sfilter/sfilterd.sock.\n"
		"Exit status: CMD's; 125 if sfrun fails, 126 if CMD cannot run, 127 if not found.\n");
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

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "filter", required_argument, NULL, 'f' },
		{ "fallback", required_argument, NULL, 'F' },
		{ "tsync", no_argument, NULL, 't' },
		{ "log", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct filter *filters;
	unsigned int flags = 0;
	size_t n = 0, i;
	int opt;

	filters = calloc(argc, sizeof(*filters));
	if (!filters)
		die("out of memory");
	/* '+': stop at the first non-option, so CMD's own options are its. */
	while ((opt = getopt_long(argc, argv, "+f:F:tlh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			filters[n++].path = optarg;
			break;
		case 'F':
			if (strcmp(optarg, "kill") == 0)
				flags &= ~SF_ATTACH_FALLBACK_LOG;
			else if (strcmp(optarg, "log") == 0)
				flags |= SF_ATTACH_FALLBACK_LOG;
			else
				die("--fallback: '%s' is neither kill nor log", optarg);
			break;
		case 't': flags |= SF_ATTACH_TSYNC; break;
		case 'l': flags |= SF_ATTACH_LOG; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return EXIT_FAIL;
		}
	}
	if (n == 0) {
		fprintf(stderr, "sfrun: no --filter given\n");
		usage(stderr);
		return EXIT_FAIL;
	}
	if (optind >= argc) {
		fprintf(stderr, "sfrun: no command given\n");
		usage(stderr);
		return EXIT_FAIL;
	}

	for (i = 0; i < n; i++) {
		struct c2e_error err = { 0 };
		char buf[256];
		int r = c2e_load_file(filters[i].path, &filters[i].insns,
				      &filters[i].len, &err);

		if (r == -EINVAL)
			die("%s: %s", filters[i].path, c2e_error_str(&err, buf, sizeof(buf)));
		if (r < 0)
			die("%s: %s", filters[i].path, strerror(-r));
		if (c2e_validate(filters[i].insns, filters[i].len, &err) < 0)
			die("%s: %s", filters[i].path, c2e_error_str(&err, buf, sizeof(buf)));
	}

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		die("prctl(PR_SET_NO_NEW_PRIVS): %s", strerror(errno));

	for (i = 0; i < n; i++) {
		struct sock_fprog prog = { .len = (unsigned short)filters[i].len,
					   .filter = filters[i].insns };
		int r = sf_attach(&prog, flags);

		if (r > 0)
			die("%s: TSYNC: thread %d could not be synchronized: %s",
			    filters[i].path, r, sf_last_error());
		if (r < 0) {
			const char *why = sf_last_error();

			die("%s: %s%s%s%s", filters[i].path, strerror(errno),
			    why[0] ? " (" : "", why, why[0] ? ")" : "");
		}
		free(filters[i].insns);
	}
	free(filters);

	execvp(argv[optind], argv + optind);
	fprintf(stderr, "sfrun: %s: %s\n", argv[optind], strerror(errno));
	return errno == ENOENT || errno == ENOTDIR ? EXIT_NOTFOUND : EXIT_CANNOT;
}
