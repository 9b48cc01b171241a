// SPDX-License-Identifier: GPL-2.0-only
/*
 * sfilter-runc: runc, with sfilter added to the containers that ask for
 * it. For an engine that runs no OCI hooks.d file and passes no
 * annotation of its own: Docker 20.10 (a daemon.json "runtimes" entry,
 * whose "runtimeArgs" come first on the command line) and containerd (the
 * runc shim's BinaryName, with the pod's io.sfilter.* annotations in
 * config.json through pod_annotations).
 *
 *   sfilter-runc [--sfilter-OPTION...] [runc's global options] COMMAND ...
 *
 * The --sfilter-* options before COMMAND are the wrapper's and never
 * reach runc. For create and run, the bundle's config.json is read and,
 * when the container asks for sfilter, rewritten (runc_wrap_config.c);
 * then the real runc runs with every other argument as it came. Every
 * other command (start, state, kill, delete, exec, features, --version,
 * ...) is runc's at once: nothing is read, nothing is written.
 *
 * A failure is one line on stderr and, since a shim shows whoever made
 * the container only runc's own --log, the same line there as runc's
 * error (containerd: getLastRuntimeError()); exit 1, runc not run.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "runc_wrap.h"
#include "oci_spec.h"
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>

#define OPT_PREFIX "--sfilter-"

/* runc's global options that take a value (runc 1.1's main.go); the
 * others are booleans. */
static const char *const global_values[] = { "log", "log-format", "root", "criu",
					     "rootless", NULL };
/* The options of create, run and restore that take a value: the bundle
 * is found past them. */
static const char *const command_values[] = {
	"bundle", "b", "console-socket", "pid-file", "preserve-fds", "image-path",
	"work-path", "parent-path", "page-server", "manage-cgroups-mode", "empty-ns",
	"lsm-profile", "lsm-mount-context", NULL,
};

/* runc's --log line: JSON as logrus writes it when --log-format json
 * (what containerd reads), else logrus's text form. */
static void log_line(const struct wrap *w, const char *msg)
{
	struct json_object *o = json_object_new_object(), *m = json_object_new_string(msg);
	char when[64], stamp[80];
	struct timespec ts;
	struct tm tm;
	int fd;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(stamp, sizeof(stamp), "%s.%09ldZ", when, ts.tv_nsec);
	fd = open(w->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd >= 0 && o && m) {
		if (w->log_format && !strcmp(w->log_format, "json")) {
			json_object_object_add(o, "level", json_object_new_string("error"));
			json_object_object_add(o, "msg", json_object_get(m));
			json_object_object_add(o, "time", json_object_new_string(stamp));
			dprintf(fd, "%s\n", json_object_to_json_string_ext(o,
				JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
		} else {
			dprintf(fd, "time=\"%s\" level=error msg=%s\n", stamp,
				json_object_to_json_string_ext(m, JSON_C_TO_STRING_NOSLASHESCAPE));
		}
	}
	if (fd >= 0)
		close(fd);
	json_object_put(m);
	json_object_put(o);
}

void wrap_fail(const struct wrap *w, const char *fmt, ...)
{
	char line[2048], msg[2100];
	va_list ap;

	va_start(ap, fmt);
	oci_one_line(line, sizeof(line), fmt, ap);
	va_end(ap);
	snprintf(msg, sizeof(msg), WRAP_NAME ": %s", line);
	fprintf(stderr, "%s\n", msg);
	if (w && w->log)
		log_line(w, msg);
	exit(1);
}

static void usage(void)
{
	printf("usage: " WRAP_NAME " [--sfilter-OPTION...] [RUNC-OPTION...] COMMAND [ARG...]\n"
	       "runc (%s, or --sfilter-runc) with sfilter: for create and run, a container\n"
	       "that asks (its config.json's io.sfilter.* annotations, or these options) gets\n"
	       "sfilter-oci-hook at createRuntime and, where it can, its profile's gate as\n"
	       "its kernel seccomp filter. Every other command is runc's, untouched.\n"
	       "  --sfilter-profile=NAME      io.sfilter.profile: a profile in the profile dir\n"
	       "  --sfilter-take-seccomp      io.sfilter.take-seccomp=true: the container's own\n"
	       "  --sfilter-mode=MODE         io.sfilter.mode: enforce, shadow or complain\n"
	       "  --sfilter-arm=ARM           io.sfilter.arm: exec or now\n"
	       "  --sfilter-gate=WHEN         auto (default), off or require\n"
	       "  --sfilter-runc=PATH         the real runtime (default %s)\n"
	       "  --sfilter-hook=PATH         sfilter-oci-hook (default: beside " WRAP_NAME ")\n"
	       "  --sfilter-hook-timeout=S    the hook's timeout in seconds (default 30)\n"
	       "  --sfilter-profile-dir=DIR   the hook's --profile-dir (default %s)\n"
	       "  --sfilter-socket=PATH       sfilterd's socket (default $SFILTER_SOCKET, else\n"
	       "                              /run/sfilter/sfilterd.sock)\n"
	       "  --sfilter-help              this text (--help is runc's)\n"
	       "  --sfilter-version           sfilter's version (--version is runc's)\n"
	       "See sfilter-runc(8).\n", WRAP_DEFAULT_RUNC, WRAP_DEFAULT_RUNC,
	       "/etc/sfilter/profiles");
	exit(0);
}

/* An option's error, kept until runc's --log is known (Docker's
 * runtimeArgs come before it): the first one is the line. */
static void opt_fail(struct wrap *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void opt_fail(struct wrap *w, const char *fmt, ...)
{
	va_list ap;

	if (w->err[0])
		return;
	va_start(ap, fmt);
	vsnprintf(w->err, sizeof(w->err), fmt, ap);
	va_end(ap);
}

static const char *absolute(struct wrap *w, const char *opt, const char *v)
{
	if (v[0] != '/')
		opt_fail(w, "%s%s=%s: not an absolute path", OPT_PREFIX, opt, v);
	return v;
}

/* A choice of an annotation (mode, arm), named as the option. */
static const char *choice(struct wrap *w, const char *opt, const char *key, const char *v)
{
	unsigned int flags;
	char why[64];

	if (oci_ask_choice(key, v, &flags, why, sizeof(why)))
		opt_fail(w, "%s%s=%s: %s", OPT_PREFIX, opt, v, why);
	return v;
}

/* The options that take a value. */
static const char *const valued[] = { "profile", "mode", "arm", "gate", "runc", "hook",
				      "hook-timeout", "profile-dir", "socket", NULL };

/* One --sfilter-NAME[=VALUE] (or --sfilter-NAME VALUE) at argv[i]: the
 * index of its last word. */
static int option(struct wrap *w, int argc, char **argv, int i)
{
	const char *opt = argv[i], *name = opt + strlen(OPT_PREFIX), *eq = strchr(name, '=');
	size_t n = eq ? (size_t)(eq - name) : strlen(name), k;
	const char *v = eq ? eq + 1 : NULL;
	char *end;
	long s;

#define IS(s) (n == strlen(s) && !strncmp(name, s, n))
	if (IS("help"))
		usage();
	if (IS("version"))
		cli_version(WRAP_NAME);
	if (IS("take-seccomp")) {
		if (eq)
			opt_fail(w, "%s: takes no value", opt);
		else
			w->take = "true";
		return i;
	}
	for (k = 0; valued[k] && !IS(valued[k]); k++)
		;
	if (!valued[k]) {
		opt_fail(w, "unknown option '%.*s'", (int)(name + n - opt), opt);
		return i;
	}
	/* No value of these starts with "--": that is the next option. */
	if (!v && (i + 1 >= argc || !strncmp(argv[i + 1], "--", 2))) {
		opt_fail(w, "%s: needs a value", opt);
		return i;
	}
	if (!v)
		v = argv[++i];
	if (IS("profile") && !*v)
		opt_fail(w, "%sprofile: empty", OPT_PREFIX);
	else if (IS("profile"))
		w->profile = v;
	else if (IS("mode"))
		w->mode = choice(w, "mode", ANN_MODE, v);
	else if (IS("arm"))
		w->arm = choice(w, "arm", ANN_ARM, v);
	else if (IS("runc"))
		w->runc = absolute(w, "runc", v);
	else if (IS("hook"))
		w->hook = absolute(w, "hook", v);
	else if (IS("profile-dir"))
		w->profile_dir = absolute(w, "profile-dir", v);
	else if (IS("socket"))
		w->socket = absolute(w, "socket", v);
	else if (IS("gate") && !strcmp(v, "auto"))
		w->gate = WRAP_GATE_AUTO;
	else if (IS("gate") && !strcmp(v, "off"))
		w->gate = WRAP_GATE_OFF;
	else if (IS("gate") && !strcmp(v, "require"))
		w->gate = WRAP_GATE_REQUIRE;
	else if (IS("gate"))
		opt_fail(w, "%sgate=%s: not auto, off or require", OPT_PREFIX, v);
	else if ((s = strtol(v, &end, 10)) > 0 && s <= 3600 && !*end && *v != '+')
		w->hook_timeout = (int)s;
	else
		opt_fail(w, "%shook-timeout=%s: not a number of seconds from 1 to 3600",
			  OPT_PREFIX, v);
#undef IS
	return i;
}

/* Whether arg is one of names as Go's flag package reads it: -name or
 * --name, maybe with =value (then *inline is set). */
static bool is_flag(const char *arg, const char *const *names, bool *inline_value)
{
	const char *name = arg + (arg[1] == '-' ? 2 : 1);
	size_t n = strcspn(name, "=");

	for (; *names; names++) {
		if (n == strlen(*names) && !strncmp(name, *names, n)) {
			*inline_value = name[n] == '=';
			return true;
		}
	}
	return false;
}

/* The value of a global option that takes one, for the error line. */
static void global(struct wrap *w, const char *arg, const char *v)
{
	const char *name = arg + (arg[1] == '-' ? 2 : 1);

	if (!strncmp(name, "log=", 4) || !strcmp(name, "log"))
		w->log = v;
	else if (!strncmp(name, "log-format", 10))
		w->log_format = v;
}

/* The bundle of create, run or restore (args: what follows the command):
 * --bundle or -b, else the working directory, as runc takes it. */
static const char *bundle_of(char **args)
{
	static const char *const bundle[] = { "bundle", "b", NULL };
	const char *found = ".";
	bool inl;

	for (; *args && strcmp(*args, "--"); args++) {
		if ((*args)[0] != '-' || !(*args)[1])
			continue;
		if (is_flag(*args, bundle, &inl))
			found = inl ? strchr(*args, '=') + 1 : args[1] ? args[1] : found;
		if (is_flag(*args, command_values, &inl) && !inl && args[1])
			args++;
	}
	return found;
}

int main(int argc, char **argv)
{
	struct wrap w = { .runc = WRAP_DEFAULT_RUNC, .profile_dir = "/etc/sfilter/profiles",
			  .gate = WRAP_GATE_AUTO, .hook_timeout = 30 };
	char **args = calloc((size_t)argc + 1, sizeof(*args));
	const char *command = NULL;
	int i, n = 1;
	bool inl;

	if (!args)
		wrap_fail(NULL, "%s", strerror(ENOMEM));
	for (i = 1; i < argc && !command; i++) {
		const char *a = argv[i];

		if (!strncmp(a, OPT_PREFIX, strlen(OPT_PREFIX))) {
			i = option(&w, argc, argv, i);
			continue;
		}
		args[n++] = argv[i];
		if (!strcmp(a, "--")) {
			if (i + 1 < argc)
				command = args[n++] = argv[++i];
		} else if (a[0] != '-' || !a[1]) {
			command = a;
		} else if (is_flag(a, global_values, &inl)) {
			if (inl)
				global(&w, a, strchr(a, '=') + 1);
			else if (i + 1 < argc)
				global(&w, a, args[n++] = argv[++i]);
		}
	}
	if (w.profile && w.take)
		opt_fail(&w, "%sprofile and %stake-seccomp: give one of them, not both",
			 OPT_PREFIX, OPT_PREFIX);
	if (w.err[0]) {
		/* A usage error: exit 2 with the hint (cli.h), its line in runc's
		 * --log too, where containerd looks for the reason. */
		char msg[sizeof(w.err) + 32];

		snprintf(msg, sizeof(msg), WRAP_NAME ": %s", w.err);
		if (w.log)
			log_line(&w, msg);
		cli_usage_lines(WRAP_NAME, OPT_PREFIX "help", w.err);
		exit(2);
	}
	for (; i < argc; i++)
		args[n++] = argv[i];
	args[0] = (char *)w.runc;
	if (command && (!strcmp(command, "create") || !strcmp(command, "run") ||
			!strcmp(command, "restore"))) {
		char **rest = args;

		while (*rest != command)
			rest++;
		wrap_config(&w, bundle_of(rest + 1), !strcmp(command, "restore"));
	}
	execv(w.runc, args);
	wrap_fail(&w, "%s: %s", w.runc, strerror(errno));
}
