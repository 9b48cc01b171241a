// SPDX-License-Identifier: GPL-2.0-only
/*
 * The command-line conventions sfilter's programs share (cli.h). The
 * texts are the ones the man pages' CONVENTIONS section quotes, and the
 * tests compare byte for byte: change them there too.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cli.h"
#include "sf_version.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <limits.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <json-c/json.h>

int cli_usage_status = 2;
bool cli_json;

void cli_version(const char *prog)
{
	printf("%s (sfilter) %s\n", prog, SF_VERSION);
	exit(fflush(stdout) == 0 ? 0 : 1);
}

void cli_json_error(const char *what)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "error", json_object_new_string(what));
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
					     JSON_C_TO_STRING_NOSLASHESCAPE));
	fflush(stdout);
	json_object_put(o);
}

void cli_usage_lines(const char *prog, const char *help, const char *what)
{
	fflush(stdout);
	fprintf(stderr, "%s: %s\nTry '%s %s' for more information.\n", prog, what, prog, help);
}

void cli_verror_exit(const char *prog, int code, const char *hint, const char *fmt, va_list ap)
{
	char what[2048];

	vsnprintf(what, sizeof(what), fmt, ap);
	if (cli_json)
		cli_json_error(what);
	else if (hint)
		cli_usage_lines(prog, hint, what);
	else
		fprintf(stderr, "%s: %s\n", prog, what);
	exit(code);
}

void cli_usage_error(const char *prog, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_verror_exit(prog, cli_usage_status, "--help", fmt, ap);
}

void cli_bad_option(const char *prog, int opt, char **argv)
{
	/* optopt is the letter of a short option; a long one (optopt 0, or
	 * a long option's val) is named by the word getopt stopped at. */
	const char *word = argv[optind - 1];
	bool is_long = !strncmp(word, "--", 2);
	int len = is_long && strchr(word, '=') ? (int)(strchr(word, '=') - word)
					       : (int)strlen(word);

	if (opt == ':' && is_long)
		cli_usage_error(prog, "option '%.*s' needs an argument", len, word);
	if (opt == ':')
		cli_usage_error(prog, "option '-%c' needs an argument", optopt);
	if (is_long && optopt && strchr(word, '='))
		cli_usage_error(prog, "option '%.*s' takes no argument", len, word);
	if (is_long || !optopt)
		cli_usage_error(prog, "unknown option '%.*s'", len, word);
	cli_usage_error(prog, "unknown option '-%c'", optopt);
}

const char *cli_daemon_why(const char *path, char *buf, size_t size)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd = -1, err = ENAMETOOLONG;

	if (strlen(path) < sizeof(addr.sun_path)) {
		strcpy(addr.sun_path, path);
		fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		err = fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) ? errno : 0;
	}
	if (fd >= 0)
		close(fd);
	if (err == ENOENT || err == ECONNREFUSED || err == ENOTDIR)
		snprintf(buf, size, "sfilterd is not running at %s", path);
	else if (!err)
		snprintf(buf, size, "sfilterd at %s closed the connection without a hello",
			 path);
	else
		snprintf(buf, size, "cannot reach sfilterd at %s: %s", path, strerror(err));
	return buf;
}

void cli_daemon_down(const char *prog, const char *path)
{
	char why[PATH_MAX + 128];

	fprintf(stderr, "%s: %s\n", prog, cli_daemon_why(path, why, sizeof(why)));
}

char *cli_read_file(const char *path, size_t max, size_t *len)
{
	FILE *f = cli_is_stdio(path) ? stdin : fopen(path, "re");
	size_t cap = 0, n;
	char *buf = NULL, *nb;
	int err = 0;

	*len = 0;
	if (!f)
		return NULL;
	for (;;) {
		if (*len + 1 >= cap) {
			nb = cap <= max ? realloc(buf, cap = cap ? cap * 2 : 65536) : NULL;
			if (!nb) {
				err = cap > max ? EFBIG : ENOMEM;
				break;
			}
			buf = nb;
		}
		n = fread(buf + *len, 1, cap - *len - 1, f);
		*len += n;
		if (n == 0) {
			err = ferror(f) ? EIO : 0;
			break;
		}
	}
	if (f != stdin)
		fclose(f);
	if (!err && *len > max)
		err = EFBIG;
	if (err) {
		free(buf);
		errno = err;
		return NULL;
	}
	buf[*len] = '\0';
	return buf;
}

FILE *cli_fopen_out(const char *path, const char *mode)
{
	return cli_is_stdio(path) ? stdout : fopen(path, mode);
}

int cli_fclose_out(FILE *f)
{
	if (f == stdout)
		return fflush(f) == 0 && !ferror(f) ? 0 : -1;
	return fclose(f) == 0 ? 0 : -1;
}
