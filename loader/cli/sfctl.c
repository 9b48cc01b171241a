// SPDX-License-Identifier: GPL-2.0-only
/*
 * sfctl: administration and introspection of sfilterd (docs/protocol.md).
 * Every command takes --json; the socket is --socket PATH, else
 * $SFILTER_SOCKET, else /run/sfilter/sfilterd.sock.
 *
 *   sfctl status | ps | show PID [--hits]
 *   sfctl attach (--pid PID [--tsync] | --cgroup PATH) --filter FILE
 *                [--complain | --shadow] [--count] [--fallback kill|log] [--log]
 *   sfctl attach (--pid PID | --cgroup PATH) --profile JSON [--caps LIST] ...
 *   sfctl compile --profile JSON [--caps LIST] -o OUT.bpf  (sfctl_profile.c)
 *   sfctl compile --profile JSON --gate [--caps LIST] [-o G.json]
 *   sfctl detach ID | replace ID --filter FILE
 *   sfctl log [--follow | --summary [--log FILE|-]]
 *   sfctl policy-from-log [--log FILE|-] [--pid PID [--uid U] [--start NS]
 *                         [--exec-id N]] [--default ACTION] [-o PREFIX]
 *                         [--format classic|oci]
 *   sfctl diff [--subset] [--caps LIST | --caps-a LIST --caps-b LIST] A B
 *                         (sfctl_diff.c; A, B: FILE or pid:PID)
 *
 * The daemon decides what a peer may do (loader/daemon/peer.c): attach,
 * detach and replace need uid 0 in the request's credentials, or the
 * group of sfilterd --admin-group (as the request's gid, or among the
 * groups of the uid that connected); a capability is not asked about
 * (else EPERM). ps, show and log show a non-admin only its own uid's
 * tasks and events. Exit status: 0; 1 when the daemon
 * refused (its errno and message on stderr); 2 for a usage error; 3 when
 * the daemon cannot be reached. cli.h has the conventions every command
 * keeps (--json errors, "-" for stdin and stdout).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sfctl.h"
#include "sfclient.h"
#include "admin.h"
#include "client.h"
#include "proto.h"
#include "c2e.h"

#include <errno.h>
#include <inttypes.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <json-c/json.h>


const char *sfctl_sock_path;
static uint32_t next_id = 1;

void sfctl_die(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_verror_exit("sfctl", code, NULL, fmt, ap);
}

static void usage(FILE *out, int code)
{
	fprintf(out,
		"usage: sfctl [--json] [--socket PATH] COMMAND ...\n"
		"       sfctl --help | --version\n"
		"  status                         tier, counts, versions\n"
		"  ps                             confined tasks and their chains\n"
		"  show PID [--hits]              PID's chain, each filter disassembled\n"
		"                                 (--hits: per-rule counts of --count filters)\n"
		"  attach --pid PID [--tsync] | --cgroup PATH  --filter FILE\n"
		"         [--complain | --shadow] [--count] [--fallback kill|log] [--log]\n"
		"         [--at-exec]             (admin; --tsync, or --all-threads: every\n"
		"                                 thread of PID; --shadow: log where it would decide\n"
		"                                 otherwise; --count: count hits per rule;\n"
		"                                 --at-exec: judge from each task's next\n"
		"                                 execve, of PID's or of the cgroup's)\n"
		"         or --profile JSON [--caps LIST]  a container seccomp profile (OCI,\n"
		"                                 Docker, Podman); caps: --pid's effective set,\n"
		"                                 none for --cgroup, or LIST (all, none, CAP_X,..)\n"
		"         [--abi seccomp|rfc2012|rfc2012-i386]  the filter's data: struct\n"
		"                                 seccomp_data, or the 2012 interface's\n"
		"                                 user_regs_struct (inheritable across exec)\n"
		"  detach ID                      (admin)\n"
		"  replace ID --filter FILE [--abi ABI]  (admin; ABI: the replaced filter's)\n"
		"  compile --profile JSON [--caps LIST] -o OUT.bpf  the profile as a classic\n"
		"                                 filter (seccomp_export_bpf's bytes; caps: none)\n"
		"          --gate [-o G.json]     or its gate: the OCI linux.seccomp object for\n"
		"                                 runc/crun, passing what the profile allows and\n"
		"                                 notifying this socket's sfilterd of the rest\n"
		"          [--lenient]            (and attach --profile) unknown and repeated\n"
		"                                 keys warned and ignored, as runc does\n"
		"  log [--follow]                 events (a non-admin sees its own uid's)\n"
		"  log --summary [--log FILE|-]   the calls they stand for, per process,\n"
		"                                 syscall and outcome, most first\n"
		"  policy-from-log [--log FILE|-] [--pid PID [--uid U] [--start NS] [--exec-id N]]\n"
		"                  [--filter ID] [--default ACTION] [-o PREFIX] [--format classic|oci]\n"
		"                                 the (arch, syscall) pairs seen, as an\n"
		"                                 allowlist: PREFIX.s (text) and PREFIX.bpf,\n"
		"                                 or PREFIX.json (an OCI seccomp profile);\n"
		"                                 --pid: of one process that had PID (refused,\n"
		"                                 listing them, when it was several: pick one\n"
		"                                 by its uid, start_ns or exec_id); --filter:\n"
		"                                 the events of one filter (a container's)\n"
		"  diff [--subset] [--caps LIST | --caps-a LIST --caps-b LIST] A B\n"
		"                                 where two policies' verdicts differ, by arch,\n"
		"                                 syscall and argument region; A, B: a filter\n"
		"                                 file, a profile (JSON) or pid:PID (its chain);\n"
		"                                 --subset: exit 0 only when B allows (ALLOW,\n"
		"                                 LOG) nothing that A refuses, else 1 with a\n"
		"                                 witness call per widening (4: not proven)\n"
		"  explain --profile JSON [--caps LIST] [--kernel X.Y] [--arch ARCH]\n"
		"          --nr NAME|N [--args A0,A1,...]   the profile's rule that decides\n"
		"                                 the call (its JSON path, action, conditions),\n"
		"          or --log [FILE|-] [--filter ID]  every event of a log (the daemon's\n"
		"                                 without FILE) printed with its \"rule\"\n"
		"FILE, JSON or OUT may be - (stdin, stdout). --json: output and errors as\n"
		"JSON on stdout. The socket: --socket, else $%s, else %s.\n",
		SF_PROTO_SOCKET_ENV, SF_PROTO_DEFAULT_SOCKET);
	exit(code);
}

/* ---- the connection ------------------------------------------------------ */

int sfctl_connect_daemon(void)
{
	char why[SF_PROTO_MAX_TEXT];
	int fd = sf_proto_connect(sfctl_sock_path, 10000, why, sizeof(why));

	if (fd < 0 && why[0])
		sfctl_die(3, "sfilterd at %s refused the connection: %s: %s", sfctl_sock_path,
		    strerror(-fd), why);
	if (fd == -EPROTO)
		sfctl_die(3, "sfilterd at %s did not greet (no hello, or another protocol "
		    "version than %u)", sfctl_sock_path, SF_PROTO_VERSION);
	if (fd == -EHOSTDOWN)
		sfctl_die(3, "%s", cli_daemon_why(sfctl_sock_path, why, sizeof(why)));
	if (fd < 0)
		sfctl_die(3, "cannot reach sfilterd at %s: %s", sfctl_sock_path, strerror(errno));
	return fd;
}

void sfctl_send_req(int fd, void *msg, uint16_t type, uint32_t len)
{
	struct iovec iov = { msg, len };
	int r;

	sf_proto_header(msg, type, len, next_id++);
	r = sf_proto_send(fd, &iov, 1, NULL, 0);
	if (r < 0)
		sfctl_die(3, "send: %s", strerror(-r));
}

bool sfctl_recv_reply(int fd, struct sfctl_reply *r)
{
	static char buf[SF_PROTO_MAX_MSG + 8];
	struct sf_reply *m = (struct sf_reply *)buf;
	ssize_t n;

	do
		n = recv(fd, buf, sizeof(buf), 0);
	while (n < 0 && errno == EINTR);
	if (n == 0)
		return false;
	if (n < 0 || sf_proto_check_reply(buf, n) != 0)
		sfctl_die(3, "malformed reply from sfilterd");
	memset(r, 0, sizeof(*r));
	r->error = m->error;
	r->id = m->id;
	r->flags = m->flags;
	r->data_len = m->data_len;
	r->data = buf + n - m->data_len;
	r->text = m->text;
	return true;
}

struct json_object *sfctl_parse_text(const char *text)
{
	struct json_object *o = json_tokener_parse(text);

	if (!o) {
		/* Every text of this version is JSON; anything else is shown as it is. */
		o = json_object_new_object();
		json_object_object_add(o, "message", json_object_new_string(text));
	}
	return o;
}

const char *sfctl_get_str(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : NULL;
}

int64_t sfctl_get_int(struct json_object *o, const char *key, int64_t dflt)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) && v ? json_object_get_int64(v) : dflt;
}

void sfctl_print_json(struct json_object *o)
{
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
					     JSON_C_TO_STRING_SPACED));
}

void sfctl_refused(const char *what, const struct sfctl_reply *r)
{
	struct json_object *o = sfctl_parse_text(r->text);
	const char *msg = sfctl_get_str(o, "message");
	int e = r->error > 0 ? r->error : 0;
	char line[SF_PROTO_MAX_MSG];

	snprintf(line, sizeof(line), "%s: %s%s%s", what, e ? strerror(e) : "TSYNC conflict",
		 msg ? ": " : "", msg ? msg : "");
	if (cli_json) {
		/* The errors' convention ("error": the line), with the reply's
		 * own fields beside it. */
		json_object_object_add(o, "error", json_object_new_string(line));
		json_object_object_add(o, "errno", json_object_new_string(
			e ? strerrorname_np(e) ? strerrorname_np(e) : "?" : "TSYNC"));
		sfctl_print_json(o);
	} else {
		fprintf(stderr, "sfctl: %s\n", line);
	}
	exit(1);
}

/* ---- filters from files -------------------------------------------------- */

static struct sock_filter *load_filter(const char *path, enum c2e_abi abi, size_t *len)
{
	struct sock_filter *insns;
	struct c2e_error err;
	char ebuf[300];
	int r;

	memset(&err, 0, sizeof(err));
	r = c2e_load_file_abi(path, abi, &insns, len, &err);
	if (r < 0)
		sfctl_die(2, "%s: %s", path, err.msg[0] ? c2e_error_str(&err, ebuf, sizeof(ebuf)) :
		    strerror(-r));
	if (c2e_validate_abi(insns, *len, abi, &err) < 0)
		sfctl_die(2, "%s: %s", path, c2e_error_str(&err, ebuf, sizeof(ebuf)));
	return insns;
}

/* ---- administration ------------------------------------------------------ */

/* The daemon's answer to an admin request, printed (a refusal: exit 1);
 * its message is copied to note too when note is not NULL. */
static void show_admin_reply(const char *what, const struct sfctl_reply *r, char *note, size_t nsz)
{
	struct json_object *o;

	if (r->error)
		sfctl_refused(what, r);
	o = sfctl_parse_text(r->text);
	if (cli_json)
		sfctl_print_json(o);
	else
		printf("%s\n", sfctl_get_str(o, "message") ? sfctl_get_str(o, "message") : r->text);
	if (note)
		snprintf(note, nsz, "%s", sfctl_get_str(o, "message") ? sfctl_get_str(o, "message") : "");
	json_object_put(o);
}

/* Reads the daemon's reply to an admin request and shows it. */
static int admin_reply(int fd, const char *what, char *note, size_t nsz)
{
	struct sfctl_reply r;

	if (!sfctl_recv_reply(fd, &r))
		sfctl_die(3, "%s: no reply", what);
	show_admin_reply(what, &r, note, nsz);
	return 0;
}

/* A pidfd of the process thread tid is in, taken now: the daemon then
 * attaches to that process and to no other that gets the pid later. */
static int pidfd_of(pid_t tid)
{
	char path[64], line[128];
	pid_t tgid = tid;
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "re");
	if (!f)
		sfctl_die(1, "no process or thread %d", (int)tid);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	fd = (int)syscall(SYS_pidfd_open, tgid, 0);
	if (fd < 0)
		sfctl_die(1, "pidfd_open(%d): %s", (int)tgid, strerror(errno));
	return fd;
}

/* ADMIN_ATTACH through libsfclient's administration client (admin.h). */
int attach_insns(pid_t pid, const char *cgroup, const struct sock_filter *insns, size_t n,
		 uint32_t flags, char *note, size_t nsz, uint32_t *filter)
{
	struct sf_client_reply *rep = malloc(sizeof(*rep));
	int fd, pidfd, r;

	if (!rep)
		sfctl_die(1, "%s", strerror(ENOMEM));
	fd = sfctl_connect_daemon();
	pidfd = cgroup ? -1 : pidfd_of(pid);
	r = sf_client_admin_attach_fd(fd, pid, pidfd, cgroup, insns, n, flags, rep);
	if (pidfd >= 0)
		close(pidfd);
	close(fd);
	if (!rep->answered)
		sfctl_die(r == -EMSGSIZE ? 2 : 3, "%s", rep->message);
	show_admin_reply("attach", &(struct sfctl_reply){ .error = rep->error, .id = rep->filter,
						    .text = rep->text }, note, nsz);
	if (filter)
		*filter = rep->filter;
	free(rep);
	return 0;
}

static int cmd_attach(pid_t pid, const char *cgroup, const char *file, uint32_t flags)
{
	size_t n;
	struct sock_filter *insns = load_filter(file, (enum c2e_abi)SF_FLAGS_ABI(flags), &n);
	int r = attach_insns(pid, cgroup, insns, n, flags, NULL, 0, NULL);

	free(insns);
	return r;
}

static int cmd_detach_replace(uint32_t id, const char *file, enum c2e_abi abi)
{
	int fd;

	if (!file) {
		struct sf_id_req req = { .id = id };

		fd = sfctl_connect_daemon();
		sfctl_send_req(fd, &req, SF_MSG_DETACH, sizeof(req));
		return admin_reply(fd, "detach", NULL, 0);
	} else {
		size_t n;
		struct sock_filter *insns = load_filter(file, abi, &n);
		size_t len = SF_PROTO_REPLACE_REQ_SIZE + n * 8;
		struct sf_replace_req *req = calloc(1, len);

		req->filter_id = id;
		req->n_insns = n;
		memcpy(req->insns, insns, n * 8);
		fd = sfctl_connect_daemon();
		sfctl_send_req(fd, req, SF_MSG_REPLACE, len);
		free(req);
		free(insns);
		return admin_reply(fd, "replace", NULL, 0);
	}
}

/* LOG: every event the daemon keeps (and with follow, every new one). */
void sfctl_read_log(bool follow, event_fn fn, void *ctx)
{
	struct sf_log_req req = { .flags = follow ? SF_LOG_FOLLOW : 0 };
	struct sfctl_reply r;
	int fd = sfctl_connect_daemon();

	sfctl_send_req(fd, &req, SF_MSG_LOG, sizeof(req));
	while (sfctl_recv_reply(fd, &r)) {
		if (r.error)
			sfctl_refused("log", &r);
		if (!(r.flags & SF_REPLY_MORE))
			break;
		fn(ctx, r.text);
	}
}

static void print_line(void *ctx, const char *line)
{
	(void)ctx;
	/* Events are JSON already: --json or not, one object per line. */
	puts(line);
	fflush(stdout);
}

/* ---- main ---------------------------------------------------------------- */

static long number(const char *s, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < 0 || v > INT32_MAX)
		cli_usage_error("sfctl", "%s: '%s' is not a number", what, s);
	return v;
}

/* A decimal number up to max (a uid, a start time, an exec id). */
static uint64_t number_u64(const char *s, const char *what, uint64_t max)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (!*s || *end || errno || *s == '-' || v > max)
		cli_usage_error("sfctl", "%s: '%s' is not a number", what, s);
	return v;
}

static const struct option opts[] = {
	{ "json", no_argument, NULL, 'j' },
	{ "socket", required_argument, NULL, 'S' },
	{ "pid", required_argument, NULL, 'p' },
	{ "tsync", no_argument, NULL, 'a' },       /* sfrun's name for it */
	{ "all-threads", no_argument, NULL, 'a' }, /* the older name, kept */
	{ "cgroup", required_argument, NULL, 'c' },
	{ "filter", required_argument, NULL, 'f' },
	{ "profile", required_argument, NULL, 'P' },
	{ "caps", required_argument, NULL, 'K' },
	{ "complain", no_argument, NULL, 'C' },
	{ "abi", required_argument, NULL, 'A' },
	{ "fallback", required_argument, NULL, 'F' },
	{ "log", optional_argument, NULL, 'l' },
	{ "follow", no_argument, NULL, 'w' },
	{ "summary", no_argument, NULL, 'Y' },
	{ "default", required_argument, NULL, 'd' },
	{ "output", required_argument, NULL, 'o' },
	{ "shadow", no_argument, NULL, 's' },
	{ "count", no_argument, NULL, 'k' },
	{ "hits", no_argument, NULL, 'H' },
	{ "format", required_argument, NULL, 'm' },
	{ "at-exec", no_argument, NULL, 'X' },
	{ "uid", required_argument, NULL, 'u' },
	{ "start", required_argument, NULL, 'T' },
	{ "exec-id", required_argument, NULL, 'x' },
	{ "gate", no_argument, NULL, 'g' },
	{ "lenient", no_argument, NULL, 'L' }, /* profiles: runc's reading (long only) */
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};
#define SHORT_OPTS ":jS:p:ac:f:P:K:CF:wd:o:A:skHm:Xu:T:x:gh"

/* The options each command reads (opts' vals; --json and --socket go
 * with all): any other is refused, not ignored, so that a misplaced one
 * (status --pid 5) is not taken as done. hint: what to use instead. */
static const struct {
	const char *cmd, *takes;
	char opt;
	const char *hint;
} command_takes[] = {
	{ "status", "", 'p', "use 'sfctl show PID'" },
	{ "ps", "", 'p', "use 'sfctl show PID'" },
	{ "show", "H", 'p', "give PID as its argument: 'sfctl show PID'" },
	{ "attach", "pacfPKCsFkXlAL", 0, NULL },
	{ "detach", "", 0, NULL },
	{ "replace", "fA", 0, NULL },
	{ "compile", "PKogL", 0, NULL },
	{ "log", "wYl", 'p', "use 'sfctl policy-from-log --pid PID'" },
	{ "policy-from-log", "lpuTxfdom", 0, NULL },
};

/* What the options after the command say. */
struct args {
	const char *cgroup, *filter, *log, *dflt, *out, *format, *profile, *caps;
	bool follow, log_flag, hits, gate, summary;
	const char *given[128]; /* each option given, by its val: as written */
	uint32_t flags;
	long pid;
	struct policy_pick pick;
};

/* The options before the command (--json, --socket); the command's index. */
static int global_options(int argc, char **argv)
{
	int opt, i;

	/* --json anywhere on the line (before "--") makes every error JSON,
	 * also one getopt meets before it reaches --json. */
	for (i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--json"))
			cli_json = true;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+" SHORT_OPTS, opts, NULL)) != -1) {
		if (opt == 'j')
			cli_json = true;
		else if (opt == 'S')
			sfctl_sock_path = optarg;
		else if (opt == 'h')
			usage(stdout, 0);
		else if (opt == 'V')
			cli_version("sfctl");
		else if (opt == '?' || opt == ':')
			cli_bad_option("sfctl", opt, argv);
		else
			cli_usage_error("sfctl", "%s goes after the COMMAND", argv[optind - 1]);
	}
	if (optind >= argc)
		cli_usage_error("sfctl", "missing COMMAND");
	return optind;
}

/* --abi: the flags of a filter of that ABI. An admin attaches, so a
 * 2012-interface filter is marked inheritable across exec, as one
 * installed with CAP_SYS_ADMIN is. */
static uint32_t abi_flags(const char *name)
{
	enum c2e_abi abi;

	if (c2e_abi_parse(name, &abi) < 0)
		cli_usage_error("sfctl", "--abi %s: seccomp, rfc2012 or rfc2012-i386", name);
	if (abi == C2E_ABI_SECCOMP)
		return 0;
	return SF_FLAG_RFC2012 | SF_FLAG_RFC_EXEC |
	       (abi == C2E_ABI_RFC_I386 ? SF_FLAG_RFC_I386 : 0);
}

/* The options after the command (getopt from the command on). */
static void command_options(int argc, char **argv, struct args *a)
{
	int opt;

	optind = 0; /* 0: glibc re-initialises (the first pass used "+") */
	while ((opt = getopt_long(argc, argv, SHORT_OPTS, opts, NULL)) != -1) {
		/* The option's own word: "--pid 5" leaves optind past "5". */
		if (opt > 0 && opt < 128)
			a->given[opt] = optarg && optarg == argv[optind - 1] ? argv[optind - 2]
									   : argv[optind - 1];
		switch (opt) {
		case 'j': cli_json = true; break;
		case 'S': sfctl_sock_path = optarg; break;
		case 'p': a->pid = number(optarg, "--pid"); break;
		case 'a': a->flags |= SF_FLAG_TSYNC; break;
		case 'c': a->cgroup = optarg; break;
		case 'f': a->filter = optarg; break;
		case 'P': a->profile = optarg; break;
		case 'K': a->caps = optarg; break;
		case 'C': a->flags |= SF_FLAG_COMPLAIN; break;
		case 's': a->flags |= SF_FLAG_SHADOW; break;
		case 'k': a->flags |= SF_FLAG_COUNT; break;
		case 'X': a->flags |= SF_FLAG_AT_EXEC; break;
		case 'H': a->hits = true; break;
		case 'Y': a->summary = true; break;
		case 'g': a->gate = true; break;
		case 'L': sfctl_profile_lenient = true; break; /* --lenient (profiles) */
		case 'u':
			a->pick.uid_set = true;
			a->pick.uid = (uint32_t)number_u64(optarg, "--uid", UINT32_MAX);
			break;
		case 'T':
			a->pick.start_set = true;
			a->pick.start = number_u64(optarg, "--start", UINT64_MAX);
			break;
		case 'x':
			a->pick.exec_set = true;
			a->pick.exec_id = number_u64(optarg, "--exec-id", UINT64_MAX);
			break;
		case 'm': a->format = optarg; break;
		case 'A': a->flags |= abi_flags(optarg); break;
		case 'F':
			if (!strcmp(optarg, "log"))
				a->flags |= SF_FLAG_FALLBACK_LOG;
			else if (strcmp(optarg, "kill"))
				cli_usage_error("sfctl", "--fallback %s: kill or log", optarg);
			break;
		case 'l': a->log_flag = true; a->log = optarg; break;
		case 'w': a->follow = true; break;
		case 'd': a->dflt = optarg; break;
		case 'o': a->out = optarg; break;
		case 'h': usage(stdout, 0); break;
		case 'V': cli_version("sfctl");
		default: cli_bad_option("sfctl", opt, argv);
		}
	}
}

/* cmd's entry in command_takes; an unknown cmd is refused. */
static size_t command_index(const char *cmd)
{
	size_t i;

	for (i = 0; i < sizeof(command_takes) / sizeof(command_takes[0]); i++)
		if (!strcmp(command_takes[i].cmd, cmd))
			return i;
	cli_usage_error("sfctl", "unknown command '%s'", cmd);
}

/* Refuses the options command_takes[i] does not read. */
static void check_options(size_t i, const struct args *a)
{
	const char *cmd = command_takes[i].cmd;
	int o;

	for (o = 1; o < 128; o++) {
		if (!a->given[o] || o == 'j' || o == 'S' || strchr(command_takes[i].takes, o))
			continue;
		if (o == command_takes[i].opt)
			cli_usage_error("sfctl", "%s does not take %.*s; %s", cmd,
					(int)strcspn(a->given[o], "="), a->given[o],
					command_takes[i].hint);
		cli_usage_error("sfctl", "%s does not take %.*s", cmd,
				(int)strcspn(a->given[o], "="), a->given[o]);
	}
}

/* The words after cmd's options: exactly n of them (what names one). */
static void operands(const char *cmd, int argc, char **argv, int n, const char *what)
{
	int got = argc - optind;

	if (got < n)
		cli_usage_error("sfctl", "%s: missing %s", cmd, what);
	if (got > n && n == 0)
		cli_usage_error("sfctl", "%s takes no argument, got '%s'", cmd, argv[optind]);
	if (got > n)
		cli_usage_error("sfctl", "%s takes one %s, got '%s' too", cmd, what,
				argv[optind + n]);
}

int main(int argc, char **argv)
{
	const char *cmd;
	struct args a = { .dflt = "KILL_PROCESS", .format = "classic" };
	size_t i;
	int first;

	sfctl_sock_path = sf_proto_socket_path();
	signal(SIGPIPE, SIG_IGN);
	first = global_options(argc, argv);
	cmd = argv[first];
	argc -= first;
	argv += first;
	if (strcmp(cmd, "diff") == 0)
		return cmd_diff(argc, argv);
	if (strcmp(cmd, "explain") == 0)
		return cmd_explain(argc, argv);
	i = command_index(cmd);
	command_options(argc, argv, &a);
	check_options(i, &a);
	/* "--log FILE" as two words. */
	if (a.log_flag && !a.log && optind < argc &&
	    (strcmp(cmd, "policy-from-log") == 0 || strcmp(cmd, "log") == 0))
		a.log = argv[optind++];
	if (!strcmp(cmd, "show") || !strcmp(cmd, "detach") || !strcmp(cmd, "replace"))
		operands(cmd, argc, argv, 1, strcmp(cmd, "show") ? "ID" : "PID");
	else
		operands(cmd, argc, argv, 0, NULL);
	if (strcmp(cmd, "status") == 0)
		return cmd_status();
	if (strcmp(cmd, "ps") == 0)
		return cmd_ps();
	if (strcmp(cmd, "show") == 0)
		return cmd_show(number(argv[optind], "show PID"), a.hits);
	if (strcmp(cmd, "attach") == 0) {
		if (!a.filter == !a.profile || (!a.pid == !a.cgroup))
			cli_usage_error("sfctl", "attach: --filter FILE or --profile JSON, and one "
					"of --pid PID, --cgroup PATH");
		if (a.cgroup && (a.flags & SF_FLAG_TSYNC))
			cli_usage_error("sfctl", "attach: --tsync goes with --pid");
		if (a.log_flag)
			a.flags |= SF_FLAG_LOG;
		if (a.profile)
			return cmd_attach_profile(a.pid, a.cgroup, a.profile, a.caps, a.flags);
		return cmd_attach(a.pid, a.cgroup, a.filter, a.flags);
	}
	if (strcmp(cmd, "compile") == 0)
		return a.gate ? cmd_compile_gate(a.profile, a.caps, a.out, sfctl_sock_path)
			      : cmd_compile(a.profile, a.caps, a.out);
	if (strcmp(cmd, "detach") == 0)
		return cmd_detach_replace(number(argv[optind], "detach ID"), NULL, 0);
	if (strcmp(cmd, "replace") == 0) {
		if (!a.filter)
			cli_usage_error("sfctl", "replace: missing --filter FILE");
		return cmd_detach_replace(number(argv[optind], "replace ID"), a.filter,
					  (enum c2e_abi)SF_FLAGS_ABI(a.flags));
	}
	if (strcmp(cmd, "log") == 0 && a.summary) {
		if (a.follow)
			cli_usage_error("sfctl", "log: --summary adds up what was logged; "
					"--follow never ends");
		return cmd_log_summary(a.log);
	}
	if (strcmp(cmd, "log") == 0) {
		if (a.log)
			cli_usage_error("sfctl", "log: --log FILE goes with --summary (the "
					"daemon's events are in FILE already)");
		sfctl_read_log(a.follow, print_line, NULL);
		return 0;
	}
	/* policy-from-log: "-o -" is stdout, where no -o writes too. */
	a.pick.pid = a.pid;
	if (a.filter)
		a.pick.filter = (long)number(a.filter, "policy-from-log --filter ID");
	return cmd_policy(a.log, &a.pick, a.dflt, cli_is_stdio(a.out) ? NULL : a.out, a.format);
}
