// SPDX-License-Identifier: GPL-2.0-only
/*
 * What every sfilter program's command line does the same way (the
 * CONVENTIONS section of the man pages, loader/cli/cli.h): --version's
 * line and exit 0; a bad option refused with one line, the --help hint
 * and exit 2 (sfrun: 125, as env(1)); sfctl's unknown command and an
 * option its command does not read refused, as --json's {"error": ...}
 * too; "sfilterd is not running at PATH" without a daemon; "-" as stdin
 * and stdout; compile --json's summary.
 *
 * The binaries are found beside the runner; one that is absent skips its
 * row only.
 */
#include "harness.h"
#include "daemon.h"
#include "sf_version.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

SFD_TIER_INDEPENDENT

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_ARGS 8

struct run {
	int status; /* exit status; -1: killed, -2: not run */
	char out[8192], err[4096];
};

/* Runs the program name (beside the runner) with args, stdin from in (or
 * /dev/null). False, the row skipped, when the binary is absent. */
static bool run(const char *name, const char *const *args, const char *in, struct run *r)
{
	char bin[PATH_MAX];
	const char *argv[MAX_ARGS + 2] = { bin };
	struct sfd_io io = { .in = in, .in_len = in ? strlen(in) : 0, .out = r->out,
			     .out_size = sizeof(r->out), .err = r->err,
			     .err_size = sizeof(r->err) };
	int i, st;

	if (!sfd_find_bin(name, NULL, bin, sizeof(bin))) {
		test_skip_part(name, "no %s beside the test runner", name);
		return false;
	}
	for (i = 0; i < MAX_ARGS && args[i]; i++)
		argv[i + 1] = args[i];
	st = sfd_run_io(argv, &io, 60);
	r->status = st < 0 ? -2 : WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	test_log("%s %s ...: exit %d\nstdout: %s\nstderr: %s\n", name, args[0] ? args[0] : "",
		 r->status, r->out, r->err);
	return st >= 0;
}

/* The option that prints the version: sfilter-runc's own --version is
 * runc's, which it passes on. */
static const struct {
	const char *name, *option;
} programs[] = {
	{ "sfctl", "--version" },
	{ "sfrun", "--version" },
	{ "sfilterd", "--version" },
	{ "sfilter-oci-hook", "--version" },
	{ "sfilter-runc", "--sfilter-version" },
	{ "classic2ebpf", "--version" },
};

TEST(every_program_prints_its_name_and_sfilters_version_and_exits_0)
{
	static struct run r;
	char want[128];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(programs); i++) {
		if (!run(programs[i].name, (const char *[]){ programs[i].option, NULL }, NULL, &r))
			continue;
		snprintf(want, sizeof(want), "%s (sfilter) %s\n", programs[i].name, SF_VERSION);
		ASSERT_EQ(r.status, 0, programs[i].name);
		ASSERT_STREQ(r.out, want, programs[i].name);
		ASSERT_STREQ(r.err, "", programs[i].name);
	}
}

/* A usage error: exactly "PROG: what" and the hint on stderr, nothing on
 * stdout. */
static const struct usage_case {
	const char *name, *args[MAX_ARGS];
	int status;
	const char *line; /* after "PROG: " */
} usage_cases[] = {
	{ "sfctl", { "--bogus", "status" }, 2, "unknown option '--bogus'" },
	{ "sfctl", { "status", "--bogus=1" }, 2, "unknown option '--bogus'" },
	{ "sfctl", { "attach", "--pid" }, 2, "option '--pid' needs an argument" },
	{ "sfctl", { "frobnicate" }, 2, "unknown command 'frobnicate'" },
	{ "sfctl", { }, 2, "missing COMMAND" },
	{ "sfctl", { "status", "--pid", "5" }, 2,
	  "status does not take --pid; use 'sfctl show PID'" },
	{ "sfctl", { "ps", "--hits" }, 2, "ps does not take --hits" },
	{ "sfctl", { "show" }, 2, "show: missing PID" },
	{ "sfctl", { "status", "extra" }, 2, "status takes no argument, got 'extra'" },
	{ "sfctl", { "attach", "--cgroup", "/x", "--tsync", "--filter", "f" }, 2,
	  "attach: --tsync goes with --pid" },
	{ "sfctl", { "diff", "--bogus", "a", "b" }, 2, "unknown option '--bogus'" },
	/* sfrun passes CMD's statuses through: its own are 125 (sfrun.1). */
	{ "sfrun", { "--bogus", "--", "true" }, 125, "unknown option '--bogus'" },
	{ "sfrun", { "--filter", "f" }, 125, "no command given" },
	{ "sfilterd", { "--bogus" }, 2, "unknown option '--bogus'" },
	{ "sfilterd", { "--socket" }, 2, "option '--socket' needs an argument" },
	{ "sfilterd", { "extra" }, 2, "unexpected argument 'extra'" },
	{ "sfilter-oci-hook", { "--bogus" }, 2, "unknown option '--bogus'" },
	{ "sfilter-oci-hook", { "-z" }, 2, "unknown option '-z'" },
	{ "sfilter-runc", { "--sfilter-bogus", "state", "x" }, 2,
	  "unknown option '--sfilter-bogus'" },
	{ "classic2ebpf", { "frob" }, 2, "unknown command 'frob'" },
	{ "classic2ebpf", { "run", "x.bpf", "--nr", "1", "--args", "1,,2" }, 2,
	  "--args '1,,2': value 2 is empty" },
};

TEST(every_program_refuses_a_usage_error_with_one_line_the_help_hint_and_its_status)
{
	static struct run r;
	char want[512];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(usage_cases); i++) {
		const struct usage_case *c = &usage_cases[i];

		if (!run(c->name, c->args, NULL, &r))
			continue;
		/* sfilter-runc's --help is runc's. */
		snprintf(want, sizeof(want), "%s: %s\nTry '%s %s' for more information.\n",
			 c->name, c->line, c->name,
			 strcmp(c->name, "sfilter-runc") ? "--help" : "--sfilter-help");
		ASSERT_EQ(r.status, c->status, c->line);
		ASSERT_STREQ(r.err, want, c->line);
		ASSERT_STREQ(r.out, "", c->line);
	}
}

/* With --json, sfctl's errors are one object on stdout, and the status is
 * the same. */
TEST(sfctl_json_errors_are_an_object_on_stdout_with_the_same_status)
{
	static const struct {
		const char *args[MAX_ARGS];
		int status;
		const char *out;
	} cases[] = {
		{ { "--json", "frobnicate" }, 2, "{\"error\":\"unknown command 'frobnicate'\"}\n" },
		{ { "--json", "status", "--pid", "5" }, 2,
		  "{\"error\":\"status does not take --pid; use 'sfctl show PID'\"}\n" },
		/* A usage error getopt meets before it reaches --json. */
		{ { "--frobnicate", "--json", "status" }, 2,
		  "{\"error\":\"unknown option '--frobnicate'\"}\n" },
		{ { "status", "--frobnicate", "--json" }, 2,
		  "{\"error\":\"unknown option '--frobnicate'\"}\n" },
		{ { "--json", "--socket", "/nonexistent/sfilterd.sock", "status" }, 3,
		  "{\"error\":\"sfilterd is not running at /nonexistent/sfilterd.sock\"}\n" },
	};
	static struct run r;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		if (!run("sfctl", cases[i].args, NULL, &r))
			return;
		ASSERT_EQ(r.status, cases[i].status, cases[i].out);
		ASSERT_STREQ(r.out, cases[i].out, cases[i].out);
		ASSERT_STREQ(r.err, "", cases[i].out);
	}
}

/* errno's "Host is down" said nothing of the daemon; the line names the
 * socket that was tried, missing or stale. */
TEST(without_a_daemon_sfctl_and_sfrun_say_sfilterd_is_not_running_at_the_socket)
{
	static const char sock[] = "/nonexistent/sfilterd.sock";
	struct sockaddr_un stale = { .sun_family = AF_UNIX };
	static struct run r;
	char want[256], filter[] = "/tmp/sf-conv-XXXXXX";
	int fd;

	snprintf(want, sizeof(want), "sfctl: sfilterd is not running at %s\n", sock);
	if (run("sfctl", (const char *[]){ "--socket", sock, "status", NULL }, NULL, &r)) {
		ASSERT_EQ(r.status, 3, "sfctl: exit 3");
		ASSERT_STREQ(r.err, want, "sfctl");
	}
	/* A socket left by a daemon that is gone: nothing listens there. */
	snprintf(stale.sun_path, sizeof(stale.sun_path), "/tmp/sf-conv-%d.sock", (int)getpid());
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (ASSERT_TRUE(fd >= 0 && !bind(fd, (struct sockaddr *)&stale, sizeof(stale)),
			"a stale socket") &&
	    run("sfctl", (const char *[]){ "--socket", stale.sun_path, "ps", NULL }, NULL, &r)) {
		snprintf(want, sizeof(want), "sfctl: sfilterd is not running at %s\n",
			 stale.sun_path);
		ASSERT_EQ(r.status, 3, "stale socket: exit 3");
		ASSERT_STREQ(r.err, want, "stale socket");
	}
	if (fd >= 0)
		close(fd);
	unlink(stale.sun_path);
	fd = mkstemp(filter);
	if (!ASSERT_TRUE(fd >= 0 && write(fd, "ret ALLOW\n", 10) == 10, "the filter"))
		return;
	close(fd);
	setenv("SFILTER_SOCKET", sock, 1);
	snprintf(want, sizeof(want), "sfrun: sfilterd is not running at %s\n", sock);
	if (run("sfrun", (const char *[]){ "--no-gate", "--filter", filter, "--", "true",
					   NULL }, NULL, &r)) {
		ASSERT_EQ(r.status, 125, "sfrun: exit 125");
		ASSERT_STREQ(r.err, want, "sfrun");
	}
	unsetenv("SFILTER_SOCKET");
	unlink(filter);
}

static const char profile[] =
	"{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"syscalls\":[{\"names\":[\"read\",\"write\","
	"\"exit_group\"],\"action\":\"SCMP_ACT_ALLOW\"}]}\n";

/* "-" is stdin and stdout: the filter written to stdout is the file's
 * bytes, and disassembles from stdin; -o - creates no file "-". */
TEST(a_dash_is_stdin_and_stdout_for_sfctl_compile_and_classic2ebpf)
{
	static struct run r, f;
	char dir[] = "/tmp/sf-conv-XXXXXX", out[PATH_MAX], want[PATH_MAX + 128], cwd[PATH_MAX];
	struct stat st;
	FILE *p;

	if (!ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp") || !ASSERT_OK_PTR(getcwd(cwd, sizeof(cwd)),
								      "getcwd"))
		return;
	snprintf(out, sizeof(out), "%s/p.json", dir);
	p = fopen(out, "w");
	if (!ASSERT_OK_PTR(p, "profile") || !ASSERT_EQ(fputs(profile, p) >= 0, true, "write"))
		return;
	fclose(p);
	snprintf(out, sizeof(out), "%s/p.bpf", dir);
	if (!ASSERT_OK(chdir(dir), "chdir"))
		return;
	if (run("sfctl", (const char *[]){ "compile", "--profile", "-", "-o", out, NULL },
		profile, &f) &&
	    run("sfctl", (const char *[]){ "compile", "--profile", "p.json", "-o", "-", NULL },
		NULL, &r)) {
		ASSERT_EQ(f.status, 0, "compile --profile - -o FILE");
		ASSERT_EQ(r.status, 0, "compile -o -");
		/* 11 instructions of 8 bytes, as the file has them. */
		ASSERT_EQ(stat(out, &st), 0, "the file");
		ASSERT_EQ((long)st.st_size, 88L, "the file's size");
		ASSERT_STREQ(r.err, "sfctl: stdout: 11 instructions, 3 syscalls with a rule\n",
			     "the summary names stdout");
		ASSERT_EQ(stat("-", &st), -1, "no file named -");
	}
	/* compile --json prints its summary (nothing before). */
	snprintf(want, sizeof(want), "{\n  \"output\": \"p.bpf\",\n  \"instructions\": 11,\n"
		 "  \"rules\": 3,\n  \"warnings\": [\n  ]\n}\n");
	if (run("sfctl", (const char *[]){ "--json", "compile", "--profile", "p.json", "-o",
					   "p.bpf", NULL }, NULL, &r)) {
		ASSERT_EQ(r.status, 0, "compile --json");
		ASSERT_STREQ(r.out, want, "compile --json's summary");
	}
	if (run("classic2ebpf", (const char *[]){ "asm", "-", "-o", "-", NULL }, "ret ALLOW\n",
		&r)) {
		ASSERT_EQ(r.status, 0, "classic2ebpf asm - -o -");
		ASSERT_EQ(memcmp(r.out, "\x06\0\0\0\0\0\xff\x7f", 8), 0, "ret ALLOW's bytes");
	}
	if (run("classic2ebpf", (const char *[]){ "check", "-", NULL }, "ret ALLOW\n", &r)) {
		ASSERT_EQ(r.status, 0, "classic2ebpf check -");
		ASSERT_STREQ(r.out, "-: valid, 1 instruction\n", "check - names stdin as -");
	}
	ASSERT_EQ(stat("-", &st), -1, "no file named -");
	if (chdir(cwd) == 0) {
		snprintf(want, sizeof(want), "rm -rf '%s'", dir);
		ASSERT_EQ(system(want), 0, "cleanup");
	}
}
