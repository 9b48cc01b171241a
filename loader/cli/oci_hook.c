// SPDX-License-Identifier: GPL-2.0-only
/*
 * sfilter-oci-hook: an OCI runtime-spec createRuntime hook (config.md,
 * "POSIX-platform Hooks") that confines a container's process through
 * sfilterd as the container's annotations ask:
 *
 *   io.sfilter.profile       a container seccomp profile (JSON) or a
 *                            classic filter file
 *   io.sfilter.take-seccomp  "true": config.json's linux.seccomp instead
 *   io.sfilter.mode          enforce (default), shadow, complain
 *   io.sfilter.arm           exec (default), now
 *   io.sfilter.profile-lenient  "true": the profile's unknown and repeated
 *                            keys are ignored (as runc does), not refused
 *
 * The runtime writes the container's state (runtime.md, "State":
 * ociVersion, id, status, pid, bundle, annotations) on stdin. The hook
 * reads it whole before anything else, takes a pidfd of pid, finds that
 * process's cgroup (oci_hook_cgroup.c), compiles the policy
 * (oci_hook_policy.c, which reads the files: a profile only from the
 * profile directory, --profile-dir) and asks sfilterd for an admin attach
 * to that cgroup over libsfclient's administration client, as
 * `sfctl attach --cgroup` does. A container that asks for none of it is
 * left alone: the hook may be installed for every container.
 *
 * Why the cgroup: a process `runc exec` (or `kubectl exec`) starts later
 * enters the container's cgroup, and the runtime gives it the container's
 * kernel seccomp filter too; an attach to the container's first process
 * alone would leave it out.
 *
 * Why arm at exec by default: at createRuntime the container's process is
 * still the runtime's init (runc's is multi-threaded Go), which has its
 * own set-up to finish; the filter judges the workload from its execve
 * on, as the kernel's seccomp filter installed by the runtime just before
 * that execve would, and so for each process that joins the cgroup later
 * (again the runtime's init at first).
 *
 * Exit status 0 with nothing on stdout; else 1 and one line on stderr
 * saying what failed (2 and cli.h's two lines for a usage error). -v or
 * SFILTER_HOOK_VERBOSE=1: after an attach, the daemon's note on stderr.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "oci_hook.h"
#include "admin.h"
#include "sfilter.h"
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <json-c/json.h>

/* The name every line of the hook starts with. */
#define HOOK "sfilter-oci-hook"

/* A state is a few hundred bytes; the bound stops a runaway writer. */
#define STATE_MAX (1 << 20)

void hook_fail(const char *fmt, ...)
{
	char line[2048];
	va_list ap;

	va_start(ap, fmt);
	oci_one_line(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "sfilter-oci-hook: %s\n", line);
	exit(1);
}

/* The state's string key: NULL when absent (or null). */
static const char *state_string(struct json_object *state, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(state, key, &v) || !v)
		return NULL;
	if (!json_object_is_type(v, json_type_string))
		hook_fail("stdin: \"%s\": not a string", key);
	return json_object_get_string(v);
}

static const char *bundle_of(struct json_object *state)
{
	const char *b = state_string(state, "bundle");

	if (!b || !*b)
		hook_fail("stdin: no \"bundle\"");
	return b;
}

static pid_t pid_of(struct json_object *state)
{
	struct json_object *v;
	int64_t pid;

	if (!json_object_object_get_ex(state, "pid", &v) || !v)
		hook_fail("stdin: no \"pid\"");
	pid = json_object_get_int64(v);
	if (!json_object_is_type(v, json_type_int) || pid <= 0 || pid > INT_MAX)
		hook_fail("stdin: \"pid\": not a positive integer");
	return (pid_t)pid;
}

/* The annotations: the state's, which the runtime copies from
 * config.json; config.json's own when the state carries none (a runtime
 * may leave them out). *config is read then. */
static struct json_object *annotations_of(struct json_object *state,
					  struct json_object **config)
{
	struct json_object *a;
	const char *where = "stdin";

	if (!json_object_object_get_ex(state, "annotations", &a)) {
		*config = hook_read_config(bundle_of(state));
		where = "config.json";
		if (!json_object_object_get_ex(*config, "annotations", &a))
			return NULL;
	}
	if (a && !json_object_is_type(a, json_type_object))
		hook_fail("%s: \"annotations\": not an object", where);
	return a;
}

/* A pidfd of the container's process, taken before the policy is
 * compiled: the daemon attaches to that process and to no other that
 * gets its pid later. */
static int pidfd_of(pid_t pid)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);

	if (fd < 0 && errno == ESRCH)
		hook_fail("pid %d: no such process", (int)pid);
	if (fd < 0)
		hook_fail("pid %d: pidfd_open: %s", (int)pid, strerror(errno));
	return fd;
}

uint32_t hook_attach(const char *id, const char *cgroup, const struct hook_policy *p,
		     unsigned int flags, bool verbose, int *conn)
{
	const char *sock = sf_proto_socket_path();
	struct sf_client_reply *rep = malloc(sizeof(*rep));
	int fd, r;

	if (!rep)
		hook_fail("%s", strerror(ENOMEM));
	fd = sf_client_connect(sock, rep);
	r = fd < 0 ? fd : sf_client_admin_attach_fd(fd, 0, -1, cgroup, p->insns, p->len, flags,
						     rep);
	if (!rep->answered && r == -EHOSTDOWN) {
		cli_daemon_down("sfilter-oci-hook", sock);
		exit(1);
	}
	if (!rep->answered)
		hook_fail("sfilterd at %s: %s", sock, rep->message);
	if (r < 0)
		hook_fail("sfilterd at %s: %s%s%s", sock, strerror(-r),
			  rep->message[0] ? ": " : "", rep->message);
	if (verbose)
		fprintf(stderr, "sfilter-oci-hook: container %s: %s\n", id ? id : "(no id)",
			rep->message);
	r = (int)rep->filter;
	free(rep);
	if (conn)
		*conn = fd;
	else
		close(fd);
	return (uint32_t)r;
}

/* The profile given to sfilterd, so that the filter's events name the
 * rule that decided them. The container is confined either way, and runc
 * waits for the hook: the daemon answers before it compiles (the compile
 * was most of that wait), and says a refusal in its log. -v waits for the
 * compile, to say a refusal here too (the hook is silent when it
 * succeeds). */
static void give_profile(int conn, uint32_t id, const struct hook_policy *p, bool verbose)
{
	uint32_t flags = (p->lenient ? SF_PROFILE_LENIENT : 0) | (verbose ? 0 : SF_PROFILE_EARLY);
	struct sf_client_reply *rep = malloc(sizeof(*rep));
	int r = rep ? sf_client_profile_fd(conn, id, p->caps, flags, p->json, p->json_len, rep) :
		      -ENOMEM;

	if (r < 0 && verbose)
		fprintf(stderr, "sfilter-oci-hook: filter %u's events will not name its "
			"profile's rules: %s\n", id, rep ? rep->message : strerror(ENOMEM));
	free(rep);
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: sfilter-oci-hook [-v|--verbose] [--profile-dir DIR] [--record-dir RDIR]\n"
		"       < STATE\n"
		"       sfilter-oci-hook --help | --version\n"
		"An OCI createRuntime (and poststop) hook: STATE is the container's state\n"
		"(JSON). The container's annotations choose what is attached through\n"
		"sfilterd to the container's cgroup (its process's, and every process\n"
		"that joins it):\n"
		"  %-24s a seccomp profile (JSON) or a classic filter file, named in\n"
		"  %-24s DIR (default %s)\n"
		"  %-24s true: config.json's linux.seccomp\n"
		"  %-24s enforce (default), shadow or complain\n"
		"  %-24s exec (default: from each process's next execve) or now\n"
		"  %-24s NAME: run with nothing enforced; at poststop, the profile its\n"
		"  %-24s calls make is written to RDIR/NAME (default %s)\n"
		"  %-24s true: merged with what RDIR/NAME allowed before\n"
		"With none of profile, take-seccomp and record, nothing is done.\n"
		"The socket: $%s, else %s.\n"
		"-v, or %s=1: the daemon's note on stderr.\n",
		ANN_PROFILE, "", HOOK_PROFILE_DIR, ANN_TAKE, ANN_MODE, ANN_ARM,
		ANN_RECORD, "", HOOK_RECORD_DIR, ANN_RECORD_MERGE,
		SF_PROTO_SOCKET_ENV, SF_PROTO_DEFAULT_SOCKET, "SFILTER_HOOK_VERBOSE");
}

/* The options: whether to be verbose, the profile and record directories. */
static bool options(int argc, char **argv, const char **profile_dir, const char **record_dir)
{
	static const struct option opts[] = {
		{ "verbose", no_argument, NULL, 'v' },
		{ "profile-dir", required_argument, NULL, 'p' },
		{ "record-dir", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *env = getenv("SFILTER_HOOK_VERBOSE");
	bool verbose = env && !strcmp(env, "1");
	int o;

	*profile_dir = HOOK_PROFILE_DIR;
	*record_dir = HOOK_RECORD_DIR;
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":vh", opts, NULL)) != -1) {
		if (o == 'v') {
			verbose = true;
		} else if (o == 'p') {
			if (optarg[0] != '/')
				cli_usage_error(HOOK, "--profile-dir %s: not an absolute path",
						optarg);
			*profile_dir = optarg;
		} else if (o == 'r') {
			if (optarg[0] != '/')
				cli_usage_error(HOOK, "--record-dir %s: not an absolute path",
						optarg);
			*record_dir = optarg;
		} else if (o == 'h') {
			usage(stdout);
			exit(0);
		} else if (o == 'V') {
			cli_version(HOOK);
		} else {
			cli_bad_option(HOOK, o, argv);
		}
	}
	if (optind < argc)
		cli_usage_error(HOOK, "unexpected argument '%s'", argv[optind]);
	return verbose;
}

int main(int argc, char **argv)
{
	struct json_object *state, *config = NULL, *ann;
	struct hook_profiles dir = { .fd = -1 };
	struct hook_policy policy;
	struct oci_ask ask;
	char cgroup[PATH_MAX], why[512];
	const char *record_dir;
	uint32_t id;
	bool verbose = options(argc, argv, &dir.path, &record_dir);
	pid_t pid;
	int pidfd, conn;

	signal(SIGPIPE, SIG_IGN);
	state = hook_read_object("stdin", NULL, STATE_MAX);
	/* poststop: a recording, if this container is one, is written. */
	if (state_string(state, "status") && !strcmp(state_string(state, "status"), "stopped"))
		return hook_record_finish(state_string(state, "id"), record_dir);
	ann = annotations_of(state, &config);
	if (oci_ask_read(ann, &ask, why, sizeof(why)))
		hook_fail("%s", why);
	if ((!ask.profile && !ask.take && !ask.record) || ask.sandbox)
		return 0; /* not asked: this container is not the hook's */
	pid = pid_of(state);
	pidfd = pidfd_of(pid);
	hook_cgroup(pid, pidfd, cgroup, sizeof(cgroup));
	if (ask.record) {
		hook_record_start(state_string(state, "id"), cgroup, &ask, record_dir, verbose);
		close(pidfd);
		json_object_put(config);
		json_object_put(state);
		return 0;
	}
	if (!config)
		config = hook_read_config(bundle_of(state));
	if (ask.profile) {
		dir.fd = open(dir.path, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dir.fd < 0)
			hook_fail("%s: the profile directory %s: %s", ANN_PROFILE, dir.path,
				  strerror(errno));
	}
	hook_compile(config, &dir, ask.profile, ask.take, ask.lenient, &policy);
	/* A profile's TSYNC means nothing here: the cgroup is every thread. */
	/* The profile's text follows on the attach's connection. */
	id = hook_attach(state_string(state, "id"), cgroup, &policy,
			 (ask.flags | policy.flags) & ~SF_FLAG_TSYNC, verbose, &conn);
	if (policy.json)
		give_profile(conn, id, &policy, verbose);
	close(conn);
	if (dir.fd >= 0)
		close(dir.fd);
	close(pidfd);
	free(policy.insns);
	free(policy.json);
	json_object_put(config);
	json_object_put(state);
	return 0;
}
