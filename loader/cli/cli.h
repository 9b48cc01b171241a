/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What every sfilter command line does the same way (cli.c), so that
 * sfctl, sfrun, sfilter-oci-hook and sfilter-runc agree (the CONVENTIONS
 * section of their man pages): --version's line, a usage error's two
 * lines and its exit status, "-" for stdin and stdout, and the line that
 * says no sfilterd is listening.
 */
#ifndef SF_CLI_H
#define SF_CLI_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

/* A usage error's exit status: 2, as getopt-based tools exit. sfrun sets
 * 125, as env(1) does, because it passes CMD's own statuses through. */
extern int cli_usage_status;
/* --json (sfctl): an error is {"error": "WHAT"} on stdout, as bpftool's
 * are, in place of its lines on stderr; the exit status is the same. */
extern bool cli_json;

/* An error, then exit(code): {"error": ...} on stdout with cli_json, else
 * "PROG: WHAT" on stderr, followed by "Try 'PROG HINT'..." when hint is
 * given. The one way every program reports what stops it. */
void cli_verror_exit(const char *prog, int code, const char *hint, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0), noreturn));
/* "PROG (sfilter) VERSION" on stdout; exits 0. */
void cli_version(const char *prog) __attribute__((noreturn));
/* "PROG: WHAT" and "Try 'PROG --help' for more information." on stderr;
 * exits cli_usage_status. With cli_json, cli_json_error() instead. */
void cli_usage_error(const char *prog, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));
/* {"error": what} on stdout, one line. */
void cli_json_error(const char *what);
/* The same two lines without the exit, the hint naming help, the option
 * that prints the usage ("--help"; "--sfilter-help" for sfilter-runc,
 * whose --help is runc's). */
void cli_usage_lines(const char *prog, const char *help, const char *what);
/* getopt_long()'s '?' or ':' (the caller set opterr = 0, so getopt
 * printed nothing): the option named as it was written. */
void cli_bad_option(const char *prog, int opt, char **argv)
	__attribute__((noreturn));
/* Why sf_proto_connect() to path failed with EHOSTDOWN, which stands for
 * every failure to connect and whose text ("Host is down") says none:
 * asked again of connect(2), into buf. "sfilterd is not running at PATH"
 * where nothing listens (no file, ENOENT; a stale socket, ECONNREFUSED), else the
 * reason ("cannot reach sfilterd at PATH: Permission denied"). */
const char *cli_daemon_why(const char *path, char *buf, size_t size);
/* "PROG: " and cli_daemon_why() on stderr. */
void cli_daemon_down(const char *prog, const char *path);

/* "-" is stdin (or stdout): every file option and argument reads it so. */
static inline bool cli_is_stdio(const char *path)
{
	return path && path[0] == '-' && path[1] == '\0';
}
/* The whole of path ("-": stdin), NUL-terminated, its length in *len;
 * NULL and errno (EFBIG past max bytes). */
char *cli_read_file(const char *path, size_t max, size_t *len);
/* path opened for writing ("w" or "wb"), stdout for "-"; NULL and errno. */
FILE *cli_fopen_out(const char *path, const char *mode);
/* Closes what cli_fopen_out() opened (stdout is flushed, left open):
 * 0, or -1 and errno when a write failed. */
int cli_fclose_out(FILE *f);

#endif
