// SPDX-License-Identifier: GPL-2.0-only
/*
 * Which rule decided (sf_profile_rules_explain(), sfctl explain): for
 * Podman's and Docker's default profiles, with no capabilities and with
 * all, every syscall number 0-500 of x86_64, i386 and x32 with the
 * argument vectors test_profile.c checks, the rule named gives the
 * filter's verdict and is one the evaluator written here
 * (tests/lib/profeval.h) says applies, names the call and matches its
 * arguments; "defaultAction" only for the default's verdict. Then the CLI:
 * a call, JSON, a log annotated, a bad call refused in one line. And the
 * daemon: a filter attached from a profile (sfctl attach --profile) has
 * events that name their rule, a shadow candidate's its own; a profile the
 * filter was not compiled from is refused.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "daemon.h"
#include "profile.h"
#include "profeval.h"
#include "c2e.h"
#include "admin.h"
#include "sfclient.h"

#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/seccomp.h>
#include <json-c/json.h>
#include <seccomp.h>

/* LOG and shadow events, and rules named whatever the tier enforces. */
SFD_TIER_INDEPENDENT

#define PODMAN "/usr/share/containers/seccomp.json"
#define DOCKER "/usr/share/gocode/src/github.com/docker/docker/profiles/seccomp/default.json"

struct tally { long calls, by_rule, by_default, as_default, inexact; };

/* One call: the explanation against the filter and the evaluator. False
 * after a failed check. */
static bool check_one(const struct sf_profile_rules *r, struct json_object *prof,
		      uint64_t caps, const struct seccomp_data *d, const char *name,
		      struct tally *t)
{
	const struct sf_profile *p = sf_profile_rules_filter(r);
	uint32_t got = c2e_interpret(p->insns, p->len, d);
	struct sf_profile_why w;
	struct json_object *calls, *e, *names = NULL, *args = NULL;
	char m[256];

	sf_profile_rules_explain(r, d, NULL, true, &w);
	snprintf(m, sizeof(m), "nr %d (%s) arch %#x args %llx,%llx,%llx: %s %s", d->nr,
		 name ? name : "-", d->arch, (unsigned long long)d->args[0],
		 (unsigned long long)d->args[1], (unsigned long long)d->args[2], w.path, w.action);
	t->calls++;
	if (!ASSERT_EQ(w.verdict, got, m))
		return false;
	if (!w.exact) {
		/* Only where libseccomp makes rules of its own: i386's
		 * multiplexers, whose rules it derives from others'. */
		t->inexact++;
		return ASSERT_TRUE(name && (!strcmp(name, "socketcall") || !strcmp(name, "ipc")), m);
	}
	if (w.entry < 0) {
		t->by_default++;
		return ASSERT_EQ(got, p->default_action, m);
	}
	t->by_rule++;
	t->as_default += w.as_default;
	json_object_object_get_ex(prof, "syscalls", &calls);
	e = json_object_array_get_idx(calls, (size_t)w.entry);
	if (e) {
		json_object_object_get_ex(e, "names", &names);
		json_object_object_get_ex(e, "args", &args);
	}
	return ASSERT_TRUE(e && name && pe_in_list(names, name) && pe_applies(e, caps) &&
			   pe_args_match(args, (const uint64_t *)d->args) &&
			   pe_action_value(e, "action", "errnoRet") == got, m);
}

static void explain_all(const char *path, const char *what)
{
	static const char *const capsets[] = { "none", "all" };
	static uint64_t v[MAX_VECS][6];
	struct json_object *prof = json_object_from_file(path);
	size_t c, a, i, n;
	int nr;

	if (!prof) {
		test_skip("%s: not readable (its Debian package is not installed)", path);
		return;
	}
	for (c = 0; c < 2; c++) {
		struct sf_profile_opts o = { .caps = capsets[c], .kernel = "6.1" };
		struct sf_profile_rules *r;
		struct sf_profile_error e;
		struct tally t = { 0 };
		uint64_t caps;
		bool ok = true;

		if (!ASSERT_OK(sf_profile_rules_open(path, &o, &r, &e), e.msg))
			break;
		sf_profile_parse_caps(capsets[c], &caps);
		for (a = 0; ok && a < 3; a++)
			for (nr = 0; ok && nr <= 500; nr++) {
				uint32_t num = (uint32_t)nr | pe_arches[a].nr_bit;
				char *name = seccomp_syscall_resolve_num_arch(pe_arches[a].scmp,
									      (int)num);

				n = pe_vectors(prof, name, v, a != 0);
				for (i = 0; ok && i < n; i++) {
					struct seccomp_data d = { .nr = (int)num,
								  .arch = pe_arches[a].audit };

					memcpy(d.args, v[i], sizeof(d.args));
					ok = check_one(r, prof, caps, &d, name, &t);
				}
				free(name);
			}
		test_log("%s, caps %s: %ld calls: %ld by a rule (%ld of them of the default's "
			 "action), %ld by defaultAction, %ld libseccomp's own\n", what, capsets[c],
			 t.calls, t.by_rule, t.as_default, t.by_default, t.inexact);
		ASSERT_TRUE(ok && t.calls >= 3 * 501, "every call is explained");
		sf_profile_rules_close(r);
	}
	json_object_put(prof);
}

TEST(podmans_profile_every_call_is_explained_by_the_rule_that_gives_its_verdict)
{
	explain_all(PODMAN, "Podman");
}

TEST(dockers_profile_every_call_is_explained_by_the_rule_that_gives_its_verdict)
{
	explain_all(DOCKER, "Docker");
}

/* ---- sfctl explain ------------------------------------------------------------ */

static const char small[] =
	"{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"defaultErrnoRet\":1,"
	"\"architectures\":[\"SCMP_ARCH_X86_64\"],\"syscalls\":["
	"{\"names\":[\"read\",\"write\"],\"action\":\"SCMP_ACT_ALLOW\"},"
	"{\"names\":[\"personality\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":"
	"[{\"index\":0,\"value\":8,\"op\":\"SCMP_CMP_EQ\"}]},"
	"{\"names\":[\"mkdir\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":1},"
	"{\"names\":[\"kill\"],\"action\":\"SCMP_ACT_KILL_PROCESS\"}]}";

/* Filter 7's events (a call with its args; a repeat event, which has
 * none; a shadow event, whose ret is the candidate's), another filter's,
 * and a line of sfilterd's own. */
static const char events[] =
	"{\"sfilterd\":\"start\"}\n"
	"{\"pid\":1,\"nr\":135,\"arch\":\"x86_64\",\"args\":[\"0x8\",\"0x0\",\"0x0\",\"0x0\","
	"\"0x0\",\"0x0\"],\"ret\":\"0x7fff0000\",\"filter\":7}\n"
	"{\"pid\":1,\"nr\":83,\"arch\":\"x86_64\",\"ret\":\"0x00050001\",\"filter\":7,"
	"\"repeat\":true,\"count\":5}\n"
	"{\"pid\":1,\"nr\":62,\"arch\":\"x86_64\",\"args\":[\"0x1\",\"0x9\",\"0x0\",\"0x0\","
	"\"0x0\",\"0x0\"],\"ret\":\"0x80000000\",\"filter\":7,\"taken\":\"shadow\"}\n"
	"{\"pid\":2,\"nr\":135,\"arch\":\"x86_64\",\"ret\":\"0x00050001\",\"filter\":8}\n";

static const struct explain_case {
	const char *name;
	const char *args[12];
	int status;
	const char *out, *err;
} cases[] = {
	{ "allowed", { "explain", "--profile", "@p.json", "--nr", "write" }, 0,
	  "write (x86_64, nr 1): ALLOW\n  decided by syscalls[0].names[1]: SCMP_ACT_ALLOW", NULL },
	{ "condition_met", { "explain", "--profile", "@p.json", "--nr", "personality",
			     "--args", "8" }, 0,
	  "decided by syscalls[1].names[0]: SCMP_ACT_ALLOW\n  conditions met: args index 0 "
	  "SCMP_CMP_EQ 0x8", NULL },
	{ "condition_not_met", { "explain", "--profile", "@p.json", "--nr", "135",
				 "--args", "9" }, 0,
	  "personality (x86_64, nr 135): ERRNO(1)\n  decided by defaultAction: "
	  "SCMP_ACT_ERRNO(1)", NULL },
	{ "rule_of_the_defaults_action", { "explain", "--profile", "@p.json", "--nr", "mkdir" },
	  0, "decided by syscalls[2].names[0]: SCMP_ACT_ERRNO(1) (the default's action", NULL },
	{ "json", { "--json", "explain", "--profile", "@p.json", "--nr", "kill" }, 0,
	  "\"path\": \"syscalls[3]\",\n    \"name\": \"syscalls[3].names[0]\",\n"
	  "    \"action\": \"SCMP_ACT_KILL_PROCESS\"", NULL },
	{ "arch_not_listed", { "explain", "--profile", "@p.json", "--arch", "i386", "--nr",
			       "getpid" }, 0, "no rule of the profile and not its default", NULL },
	{ "log", { "explain", "--profile", "@p.json", "--log", "@ev.log", "--filter", "7" }, 0,
	  "\"filter\":7,\"rule\":{\"path\":\"syscalls[1]\",\"name\":\"syscalls[1].names[0]\","
	  "\"action\":\"SCMP_ACT_ALLOW\",\"conditions\":\"args index 0 SCMP_CMP_EQ 0x8\"}}",
	  "3 events explained" },
	{ "log_repeat_event", { "explain", "--profile", "@p.json", "--log", "@ev.log",
				"--filter", "7" }, 0,
	  "\"count\":5,\"rule\":{\"path\":\"syscalls[2]\",\"name\":\"syscalls[2].names[0]\","
	  "\"action\":\"SCMP_ACT_ERRNO(1)\",\"as_default\":true}}", NULL },
	{ "log_shadow_event", { "explain", "--profile", "@p.json", "--log", "@ev.log",
				"--filter", "7" }, 0,
	  "\"taken\":\"shadow\",\"rule\":{\"path\":\"syscalls[3]\"", NULL },
	{ "log_other_filter_as_is", { "explain", "--profile", "@p.json", "--log", "@ev.log",
				      "--filter", "7" }, 0,
	  "{\"sfilterd\":\"start\"}\n", NULL },
	{ "bad_args", { "explain", "--profile", "@p.json", "--nr", "getpid", "--args",
			"1,,2" }, 2, "", "--args 1,,2: argument 1 is not a number" },
	{ "unknown_syscall", { "explain", "--profile", "@p.json", "--nr", "frobnicate" }, 2,
	  "", "--nr frobnicate: no such syscall on x86_64" },
	{ "no_call", { "explain", "--profile", "@p.json" }, 2, "",
	  "one of --nr NAME (a call) and --log [FILE]" },
	{ "unknown_option", { "explain", "--profile", "@p.json", "--nrr", "read" }, 2, "",
	  "unknown option '--nrr'" },
	{ "bad_log_line", { "explain", "--profile", "@p.json", "--log", "@bad.log" }, 1, "",
	  "log line 2: an event without a known \"arch\"" },
	{ "bad_profile", { "explain", "--profile", "@ev.log", "--nr", "read" }, 2, "", "ev.log:" },
};

static bool write_file(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!ASSERT_OK_PTR(f, path))
		return false;
	fputs(text, f);
	return ASSERT_OK(fclose(f), path);
}

TEST(sfctl_explain_names_the_rule_of_a_call_and_of_each_logged_event)
{
	char sfctl[PATH_MAX], dir[] = "/tmp/sf-explain-XXXXXX", cmd[PATH_MAX + 16];
	static char out[65536], err[4096];
	size_t i;
	int k;

	if (!sfd_need_bin("sfctl", "SF_SFCTL", sfctl, sizeof(sfctl)))
		return;
	if (!ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp") || !write_file(dir, "p.json", small) ||
	    !write_file(dir, "ev.log", events) ||
	    !write_file(dir, "bad.log", "{\"sfilterd\":\"start\"}\n{\"nr\":1}\n"))
		return;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct explain_case *c = &cases[i];
		char paths[12][PATH_MAX], m[160];
		const char *argv[14] = { sfctl };
		struct sfd_io io = { .out = out, .out_size = sizeof(out), .err = err,
				     .err_size = sizeof(err) };
		int st;

		for (k = 0; k < 12 && c->args[k]; k++) {
			if (c->args[k][0] == '@') {
				snprintf(paths[k], sizeof(paths[k]), "%s/%s", dir, c->args[k] + 1);
				argv[k + 1] = paths[k];
			} else {
				argv[k + 1] = c->args[k];
			}
		}
		st = sfd_run_io(argv, &io, 60);
		snprintf(m, sizeof(m), "%s: exit status %d", c->name, c->status);
		if (!ASSERT_TRUE(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == c->status, m)) {
			test_log("stdout: %s\nstderr: %s\n", out, err);
			continue;
		}
		snprintf(m, sizeof(m), "%s: stdout says it", c->name);
		if (!ASSERT_TRUE(strstr(out, c->out) != NULL, m))
			test_log("stdout: %s\n", out);
		/* A usage error has the --help hint as a second line. */
		snprintf(m, sizeof(m), "%s: stderr says it in one line", c->name);
		if (c->err && !ASSERT_TRUE(strstr(err, c->err) && (c->status == 0 ||
					   sfd_error_lines(err, "sfctl", NULL)), m))
			test_log("stderr: %s\n", err);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		test_log("could not remove %s\n", dir);
}

/* ---- events that name their rule ------------------------------------------------- */

#define LOGGED_P "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[" \
	"{\"names\":[\"getppid\"],\"action\":\"SCMP_ACT_LOG\"}," \
	"{\"names\":[\"getpgid\"],\"action\":\"SCMP_ACT_LOG\",\"args\":" \
	"[{\"index\":0,\"value\":7,\"op\":\"SCMP_CMP_EQ\"}]}]}"
/* The shadow candidate: getppid refused. */
#define CANDIDATE_P "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[" \
	"{\"names\":[\"getppid\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":1}]}"

/* sfctl attach --pid pid --profile path [--shadow]: the filter's id, 0 on
 * failure. */
static uint32_t attach_profile(const char *sfctl, const struct sfd *dm, pid_t pid,
			       const char *path, bool shadow)
{
	char p[16], out[2048];
	const char *argv[] = { sfctl, "--socket", dm->sock, "attach", "--pid", p, "--profile",
			       path, shadow ? "--shadow" : NULL, NULL };
	const char *f;
	unsigned int id = 0;
	int st;

	snprintf(p, sizeof(p), "%d", (int)pid);
	st = sfd_run(argv, true, 60, out, sizeof(out));
	test_log("sfctl attach --profile: %s", out);
	f = strstr(out, "filter ");
	if (!WIFEXITED(st) || WEXITSTATUS(st) || !f || sscanf(f, "filter %u", &id) != 1 ||
	    strstr(out, "warning"))
		return 0;
	return id;
}

/* The log line with both needles, or NULL (static storage). */
static const char *log_line_with(const struct sfd *dm, const char *a, const char *b)
{
	static char line[4096];
	FILE *f;
	int tries;

	for (tries = 0; tries < (test_is_emulated() ? 300 : 50); tries++) {
		f = fopen(dm->log, "re");
		while (f && fgets(line, sizeof(line), f))
			if (strstr(line, a) && strstr(line, b)) {
				fclose(f);
				return line;
			}
		if (f)
			fclose(f);
		usleep(100000);
	}
	return NULL;
}

TEST(events_of_a_filter_attached_from_a_profile_name_the_rule_that_decided_them)
{
	char sfctl[PATH_MAX], dir[] = "/tmp/sf-rule-XXXXXX", logged[PATH_MAX], cand[PATH_MAX];
	struct sf_client_reply *rep = malloc(sizeof(*rep));
	uint32_t id, shadow;
	int go[2], st, r;
	const char *l;
	pid_t pid;
	SFD_AUTO;

	if (!rep || !sfd_find_bin("sfctl", "SF_SFCTL", sfctl, sizeof(sfctl))) {
		test_skip("no sfctl beside the test runner");
		free(rep);
		return;
	}
	if (!sfd_start_sfilterd(&dm, false) || !ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp") ||
	    !write_file(dir, "logged.json", LOGGED_P) ||
	    !write_file(dir, "candidate.json", CANDIDATE_P) || !ASSERT_OK(pipe(go), "pipe")) {
		free(rep);
		return;
	}
	snprintf(logged, sizeof(logged), "%s/logged.json", dir);
	snprintf(cand, sizeof(cand), "%s/candidate.json", dir);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		char c;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		syscall(SYS_getppid);
		syscall(SYS_getpgid, 7);
		_exit(0);
	}
	close(go[0]);
	id = attach_profile(sfctl, &dm, pid, logged, false);
	shadow = attach_profile(sfctl, &dm, pid, cand, true);
	ASSERT_TRUE(id && shadow, "both profiles attached, and given to the daemon");
	ASSERT_EQ(write(go[1], "g", 1), 1, "the child calls");
	close(go[1]);
	ASSERT_TRUE(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		    "the child lives (LOG, and a shadow candidate, enforce nothing)");
	l = log_line_with(&dm, "\"syscall\":\"getppid\",", "\"taken\":\"logged\"");
	ASSERT_TRUE(l && strstr(l, "\"rule\":{\"path\":\"syscalls[0]\",\"name\":"
				"\"syscalls[0].names[0]\",\"action\":\"SCMP_ACT_LOG\"}"),
		    l ? l : "getppid's LOG event names syscalls[0]");
	l = log_line_with(&dm, "\"syscall\":\"getpgid\",", "\"taken\":\"logged\"");
	ASSERT_TRUE(l && strstr(l, "\"rule\":{\"path\":\"syscalls[1]\"") &&
		    strstr(l, "\"conditions\":\"args index 0 SCMP_CMP_EQ 0x7\""),
		    l ? l : "getpgid(7)'s names syscalls[1] and the condition it met");
	l = log_line_with(&dm, "\"syscall\":\"getppid\",", "\"taken\":\"shadow\"");
	ASSERT_TRUE(l && strstr(l, "\"rule\":{\"path\":\"syscalls[0]\"") &&
		    strstr(l, "\"action\":\"SCMP_ACT_ERRNO(1)\""),
		    l ? l : "the shadow event names the candidate's rule");
	/* A profile the filter was not compiled from is refused. */
	r = sf_client_profile(dm.sock, id, "none", 0, CANDIDATE_P, strlen(CANDIDATE_P), rep);
	ASSERT_EQ(r, -EINVAL, rep->message);
	ASSERT_TRUE(strstr(rep->message, "compiles to another program") != NULL, rep->message);
	free(rep);
	snprintf(logged, sizeof(logged), "rm -rf '%s'", dir);
	if (system(logged) != 0)
		test_log("could not remove %s\n", dir);
}

/* sfrun --profile, by a user who is not an admin: it gives the daemon
 * the profile before it attaches the filter to itself, so the events of
 * the command name their rule; the same user's profile for a
 * filter that is not its own is refused as if there were none. */
TEST(sfrun_profile_events_name_their_rule_for_a_user_who_is_no_admin)
{
	char sfrun[PATH_MAX], dir[] = "/tmp/sf-rule-XXXXXX", path[PATH_MAX + 16], c;
	int st, ready[2];
	pid_t pid, roots = -1;
	const char *l;
	SFD_AUTO;

	if (access("/bin/busybox", X_OK) != 0) {
		test_skip("no /bin/busybox (package busybox-static)");
		return;
	}
	if (!sfd_need_bin("sfrun", "SF_SFRUN", sfrun, sizeof(sfrun)))
		return;
	if (!sfd_start_for_users(&dm, NULL) || !ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp") ||
	    !ASSERT_OK(chmod(dir, 0755), "chmod") || !write_file(dir, "logged.json", LOGGED_P) ||
	    !ASSERT_OK(pipe(ready), "pipe"))
		return;
	snprintf(path, sizeof(path), "%s/logged.json", dir);
	/* Root's filter 1: an allow-all program a child of root's attaches. */
	fflush(stdout);
	roots = fork();
	if (roots == 0) {
		static struct sock_filter all[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
		struct sock_fprog allow = { 1, all };

		setenv("SFILTER_GATE", "0", 1);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || sf_attach(&allow, 0))
			_exit(1);
		(void)!write(ready[1], "", 1);
		pause();
		_exit(0);
	}
	if (!ASSERT_TRUE(roots > 0 && read(ready[0], &c, 1) == 1, "root's filter 1 attached"))
		goto out;
	pid = fork();
	if (pid == 0) {
		struct sf_client_reply rep;
		int r;

		if (setgroups(0, NULL) || setgid(65534) || setuid(65534) ||
		    setenv("SFILTER_SOCKET", dm.sock, 1))
			_exit(2);
		/* Root's filter is not this user's to give a profile for. */
		r = sf_client_profile(dm.sock, 1, "none", 0, LOGGED_P, strlen(LOGGED_P), &rep);
		if (r != -ENOENT)
			_exit(3);
		/* busybox's shell calls getppid(2) for $PPID. */
		execl(sfrun, "sfrun", "--no-gate", "--profile", path, "--", "/bin/busybox", "sh",
		      "-c", "echo $PPID > /dev/null", (char *)NULL);
		_exit(4);
	}
	ASSERT_TRUE(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
		    WEXITSTATUS(st) == 0, "uid 65534's sfrun runs the command (exit 3: another's "
		    "filter was taken)");
	l = log_line_with(&dm, "\"syscall\":\"getppid\",", "\"uid\":65534,");
	ASSERT_TRUE(l && strstr(l, "\"rule\":{\"path\":\"syscalls[0]\",\"name\":"
				"\"syscalls[0].names[0]\",\"action\":\"SCMP_ACT_LOG\"}"),
		    l ? l : "the getppid event names its rule");
out:
	if (roots > 0) {
		kill(roots, SIGKILL);
		waitpid(roots, NULL, 0);
	}
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path) != 0)
		test_log("could not remove %s\n", dir);
}

/* A user who floods PROFILE requests is held to its rate and quota (the
 * compile runs on the daemon's thread): of 12 at once, at most 4 are
 * taken, the rest refused with EAGAIN, and root's STATUS is answered
 * meanwhile. */
TEST(bypass_a_users_flood_of_profiles_is_held_to_its_rate)
{
	int st, p[2], taken = -1;
	pid_t pid;
	SFD_AUTO;

	if (!sfd_start_for_users(&dm, NULL) || !ASSERT_OK(pipe(p), "pipe"))
		return;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct sf_client_reply rep;
		int i, ok = 0, again = 0;

		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(2);
		for (i = 0; i < 12; i++) {
			int r = sf_client_profile(dm.sock, 0, "none", 0, LOGGED_P,
						  strlen(LOGGED_P), &rep);

			ok += r == 0;
			again += r == -EAGAIN;
		}
		(void)!write(p[1], &ok, sizeof(ok));
		_exit(ok + again == 12 ? 0 : 3);
	}
	close(p[1]);
	ASSERT_TRUE(read(p[0], &taken, sizeof(taken)) == sizeof(taken), "the flooder's count");
	ASSERT_TRUE(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
		    WEXITSTATUS(st) == 0, "every request taken or refused with EAGAIN");
	test_log("uid 65534: %d of 12 profiles taken\n", taken);
	ASSERT_TRUE(taken >= 1 && taken <= 4, "at most its burst (and quota) of 4 taken");
	{
		static char status[65536];

		ASSERT_EQ(sfd_status(&dm, status), 0, "root's STATUS is answered");
	}
	close(p[0]);
}
