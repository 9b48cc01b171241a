// SPDX-License-Identifier: GPL-2.0-only
/*
 * A profile that holds a mistake is refused, not compiled into a filter
 * that allows what its default allows (loader/profile/strict.c): one row
 * per refusal, with the JSON path and the words of the error; the keys
 * the formats define compile; --lenient takes what runc takes, a warning
 * per ignored key; the stock profiles are the same filter either way; and
 * each CLI says it in one line with a non-zero exit.
 */
#include "harness.h"
#include "daemon.h"
#include "profile.h"
#include "c2e.h"
#include "wstatus.h"

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define PODMAN "/usr/share/containers/seccomp.json"
/* bench/bench_util.h's BENCH_DOCKER_PROFILE: moby's default profile. */
#define DOCKER "/usr/share/gocode/src/github.com/docker/docker/profiles/seccomp/default.json"

static int compile(const char *json, bool lenient, struct sf_profile *p,
		   struct sf_profile_error *e)
{
	struct sf_profile_opts o = { .caps = "none", .kernel = "6.1", .lenient = lenient };

	return sf_profile_compile(json, strlen(json), &o, p, e);
}

/* getpid under one entry with these extra fields, and a whole profile
 * with these extra top-level fields. */
#define ONE(extra) "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"getpid\"]," \
	"\"action\":\"SCMP_ACT_ERRNO\"" extra "}]}"
#define TOP(extra) "{\"defaultAction\":\"SCMP_ACT_ALLOW\"" extra "}"
#define ARG(fields) ONE(",\"args\":[{" fields "}]")

static const struct refusal {
	const char *name, *json, *path, *words;
	bool lenient_compiles;  /* with --lenient: runc takes it */
} refusals[] = {
	{ "an unknown key at the top", TOP(",\"sycalls\":[]"), "sycalls",
	  "unknown key; did you mean \"syscalls\"?", true },
	{ "a key in the wrong case", "{\"DefaultAction\":\"SCMP_ACT_ALLOW\"}", "DefaultAction",
	  "unknown key; did you mean \"defaultAction\"?", false /* defaultAction: missing */ },
	{ "an unknown key in syscalls[i]",
	  "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"read\"],\"action\":"
	  "\"SCMP_ACT_ERRNO\"},{\"names\":[\"getpid\"],\"nmaes\":[\"x\"],\"action\":"
	  "\"SCMP_ACT_ERRNO\"}]}", "syscalls[1].nmaes", "unknown key; did you mean \"names\"?",
	  true },
	{ "an unknown key with nothing near it", ONE(",\"sfilter\":1"), "syscalls[0].sfilter",
	  "unknown key", true },
	{ "an unknown key in args[j]", ARG("\"index\":0,\"value\":1,\"op\":\"SCMP_CMP_EQ\","
	  "\"valeuTwo\":2"), "syscalls[0].args[0].valeuTwo",
	  "unknown key; did you mean \"valueTwo\"?", true },
	{ "an unknown key in includes", ONE(",\"includes\":{\"cap\":[\"CAP_SYS_ADMIN\"]}"),
	  "syscalls[0].includes.cap", "unknown key; did you mean \"caps\"?", true },
	{ "an unknown key in excludes", ONE(",\"excludes\":{\"minkernel\":\"4.8\"}"),
	  "syscalls[0].excludes.minkernel", "unknown key; did you mean \"minKernel\"?", true },
	{ "an unknown key in archMap[i]", TOP(",\"archMap\":[{\"architecture\":"
	  "\"SCMP_ARCH_X86_64\",\"subArches\":[]}]"), "archMap[0].subArches", "unknown key", true },
	{ "a key given twice", "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":"
	  "[\"getpid\"],\"action\":\"SCMP_ACT_ERRNO\",\"action\":\"SCMP_ACT_ALLOW\"}]}",
	  "syscalls[0].action", "duplicate key \"action\"", true },
	{ "a key given twice, once escaped", "{\"defaultAction\":\"SCMP_ACT_ALLOW\","
	  "\"def\\u0061ultAction\":\"SCMP_ACT_LOG\"}", "defaultAction",
	  "duplicate key \"defaultAction\"", true },
	{ "a key given twice in an object under an empty key",
	  TOP(",\"\":{\"e\":{},\"e\":[]}"), ".e", "duplicate key \"e\"", true },
	{ "a key given twice inside a value that a repeated key replaces",
	  TOP(",\"syscalls\":[{\"names\":[\"read\"],\"names\":[]}],\"syscalls\":[]"),
	  "syscalls", "duplicate key \"syscalls\"", true },
	{ "2^64", ARG("\"index\":0,\"value\":18446744073709551616,\"op\":\"SCMP_CMP_EQ\""),
	  "syscalls[0].args[0].value", "18446744073709551616 is out of range", false },
	{ "far above 2^64", ARG("\"index\":0,\"value\":99999999999999999999999,"
	  "\"op\":\"SCMP_CMP_EQ\""), "syscalls[0].args[0].value", "is out of range", false },
	{ "-1", ARG("\"index\":0,\"value\":-1,\"op\":\"SCMP_CMP_EQ\""),
	  "syscalls[0].args[0].value", "expected an unsigned integer, got -1", false },
	{ "below -2^63", ARG("\"index\":0,\"value\":-9223372036854775809,\"op\":\"SCMP_CMP_EQ\""),
	  "syscalls[0].args[0].value", "is out of range", false },
	{ "1.5", ARG("\"index\":0,\"value\":1.5,\"op\":\"SCMP_CMP_EQ\""),
	  "syscalls[0].args[0].value", "got a fractional number", false },
	{ "an exponent", ARG("\"index\":1e0,\"value\":1,\"op\":\"SCMP_CMP_EQ\""),
	  "syscalls[0].args[0].index", "got a fractional number", false },
	{ "a number as a string", ARG("\"index\":0,\"value\":\"5\",\"op\":\"SCMP_CMP_EQ\""),
	  "syscalls[0].args[0].value", "got a string", false },
	{ "an errno as a string", ONE(",\"errnoRet\":\"1\""), "syscalls[0].errnoRet",
	  "got a string", false },
	{ "an index of 6", ARG("\"index\":6,\"value\":1,\"op\":\"SCMP_CMP_EQ\""),
	  "syscalls[0].args[0].index", "6 is above 5", false },
	{ "empty names", "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[],"
	  "\"action\":\"SCMP_ACT_ERRNO\"}]}", "syscalls[0].names",
	  "empty: an entry needs at least one syscall name", false },
	{ "empty names beside moby's name", "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":"
	  "[{\"name\":\"getpid\",\"names\":[],\"action\":\"SCMP_ACT_ERRNO\"}]}",
	  "syscalls[0].names", "empty", true },
};

TEST(profile_refusals_name_the_json_path_and_produce_nothing)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(refusals); i++) {
		const struct refusal *c = &refusals[i];
		struct sf_profile p;
		struct sf_profile_error e;
		char want[160];
		int r = compile(c->json, false, &p, &e);

		test_log("%s: %s\n", c->name, e.msg);
		snprintf(want, sizeof(want), "%s: ", c->path);
		ASSERT_EQ(r, -EINVAL, c->name);
		ASSERT_STREQ(e.path, c->path, c->name);
		ASSERT_TRUE(!strncmp(e.msg, want, strlen(want)) && strstr(e.msg, c->words), c->name);
		ASSERT_TRUE(!strchr(e.msg, '\n'), c->name);
		ASSERT_TRUE(!p.insns && !p.len && !p.warnings, c->name);
		r = compile(c->json, true, &p, &e);
		ASSERT_EQ(r == 0, c->lenient_compiles, c->name);
		sf_profile_free(&p);
	}
}

/* Every key the runtime-spec, moby and containers/common define, where
 * they define it (sf_profile_keys()), compiles strictly without a
 * warning, and to the same filter with --lenient. */
static const char *const accepted[] = {
	"{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"defaultErrnoRet\":1,\"defaultErrno\":\"EPERM\","
	"\"architectures\":[\"SCMP_ARCH_X86_64\"],\"flags\":[\"SECCOMP_FILTER_FLAG_LOG\"],"
	"\"listenerPath\":\"\",\"listenerMetadata\":\"\",\"syscalls\":[{\"names\":[\"read\"],"
	"\"action\":\"SCMP_ACT_ALLOW\"}]}",
	"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"archMap\":[{\"architecture\":\"SCMP_ARCH_X86_64\","
	"\"subArchitectures\":[\"SCMP_ARCH_X86\",\"SCMP_ARCH_X32\"]}],\"syscalls\":[]}",
	ONE(",\"errnoRet\":22,\"errno\":\"EINVAL\",\"comment\":\"a note\""),
	ONE(",\"args\":[{\"index\":0,\"value\":255,\"valueTwo\":8,\"op\":\"SCMP_CMP_MASKED_EQ\"}]"),
	ONE(",\"args\":[{\"index\":5,\"value\":18446744073709551615,\"op\":\"SCMP_CMP_LE\"}]"),
	ONE(",\"includes\":{\"caps\":[\"CAP_SYS_ADMIN\"],\"arches\":[\"amd64\"],"
	    "\"minKernel\":\"4.8\"},\"excludes\":{\"caps\":[],\"arches\":[],\"minKernel\":\"9.0\"}"),
	"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"name\":\"getpid\","
	"\"action\":\"SCMP_ACT_ERRNO\",\"args\":null,\"comment\":\"\",\"includes\":{},"
	"\"excludes\":{}}]}",
	/* Keys that look alike in different objects are told apart by where
	 * they are; comments json-c takes are skipped by the text's scan. */
	"{\"defaultAction\":\"SCMP_ACT_ALLOW\", /* \"defaultAction\":1e99 */ \"syscalls\":"
	"[{\"names\":[\"getpid\"],\"action\":\"SCMP_ACT_ERRNO\"},{\"names\":[\"getppid\"],"
	"\"action\":\"SCMP_ACT_ERRNO\"}]}",
};

static bool same_filter(const struct sf_profile *a, const struct sf_profile *b)
{
	return a->len == b->len && a->flags == b->flags &&
	       !memcmp(a->insns, b->insns, a->len * sizeof(*a->insns));
}

TEST(profile_keys_of_runtime_spec_moby_and_containers_common_compile_strictly)
{
	size_t i, n;
	const struct sf_profile_key *k = sf_profile_keys(&n);

	for (i = 0; i < ARRAY_SIZE(accepted); i++) {
		struct sf_profile p, l;
		struct sf_profile_error e;
		char name[32];

		snprintf(name, sizeof(name), "accepted[%zu]", i);
		if (!ASSERT_OK(compile(accepted[i], false, &p, &e), e.msg))
			continue;
		ASSERT_EQ(p.n_warnings, 0, name);
		if (ASSERT_OK(compile(accepted[i], true, &l, &e), e.msg))
			ASSERT_TRUE(same_filter(&p, &l) && l.n_warnings == 0, name);
		sf_profile_free(&p);
		sf_profile_free(&l);
	}
	/* The table: every row says where, from which format, and what. */
	ASSERT_TRUE(n >= 30, "the table of keys");
	for (i = 0; i < n; i++)
		ASSERT_TRUE(k[i].object && k[i].key && k[i].from && k[i].use &&
			    (!strncmp(k[i].use, "used", 4) || !strncmp(k[i].use, "accepted", 8) ||
			     !strncmp(k[i].use, "refused", 7)), k[i].key);
}

/* json refused strictly at strict_path, and compiled leniently with the
 * warnings want (n of them, in order), getpid killed: the last action
 * given it (json-c and Go both keep the last: SCMP_ACT_KILL,
 * KILL_THREAD). */
static void check_lenient(const char *json, const char *strict_path, const char *const *want,
			  size_t n)
{
	struct seccomp_data d = { .nr = 39 /* getpid */, .arch = C2E_AUDIT_ARCH_X86_64 };
	struct sf_profile p;
	struct sf_profile_error e;
	size_t i;

	ASSERT_EQ(compile(json, false, &p, &e), -EINVAL, "strict: refused");
	ASSERT_STREQ(e.path, strict_path, "strict: where it is refused");
	if (!ASSERT_OK(compile(json, true, &p, &e), e.msg))
		return;
	for (i = 0; i < p.n_warnings; i++)
		test_log("%s\n", p.warnings[i]);
	ASSERT_EQ(p.n_warnings, n, "one warning per ignored key and repeat the document has");
	for (i = 0; i < n && i < p.n_warnings; i++)
		ASSERT_STREQ(p.warnings[i], want[i], "the warning");
	ASSERT_EQ(c2e_interpret(p.insns, p.len, &d), 0x00000000U, "getpid: killed");
	sf_profile_free(&p);
}

TEST(profile_lenient_warns_once_per_ignored_key_and_takes_the_last_of_a_repeated_one)
{
	static const char json[] =
		"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"sycalls\":[],\"syscalls\":[{\"names\":"
		"[\"getpid\"],\"action\":\"SCMP_ACT_ERRNO\",\"nmaes\":[],\"action\":\"SCMP_ACT_KILL\"}]}";
	static const char *const want[] = {
		"syscalls[0].action: duplicate key \"action\": the last one is taken",
		"sycalls: unknown key, ignored; did you mean \"syscalls\"?",
		"syscalls[0].nmaes: unknown key, ignored; did you mean \"names\"?",
	};

	/* Strictly, the first mistake in the text. */
	check_lenient(json, "syscalls[0].action", want, ARRAY_SIZE(want));
}

/* A repeat inside a value that a later repeat of its own key replaces is
 * not in the document json-c reads: lenient reading warns of the outer
 * key, and of the repeats in the value it takes, never of those in the
 * value it drops. */
TEST(profile_lenient_warns_only_of_repeats_in_the_values_it_takes)
{
	static const char json[] =
		"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"getpid\"],"
		"\"action\":\"SCMP_ACT_ERRNO\",\"action\":\"SCMP_ACT_KILL\"}],\"x\":{\"a\":1},"
		"\"syscalls\":[{\"names\":[\"getppid\"],\"names\":[\"getpid\"],"
		"\"action\":\"SCMP_ACT_KILL\"}],\"defaultAction\":\"SCMP_ACT_ALLOW\"}";
	static const char *const want[] = {
		"syscalls: duplicate key \"syscalls\": the last one is taken",
		"syscalls[0].names: duplicate key \"names\": the last one is taken",
		"defaultAction: duplicate key \"defaultAction\": the last one is taken",
		"x: unknown key, ignored",
	};

	/* Strictly, the shallowest repeat. */
	check_lenient(json, "syscalls", want, ARRAY_SIZE(want));
}

/* A stock profile compiled strictly, leniently and as before: the same
 * filter (a stock profile holds no mistake to ignore). */
static void same_both_ways(const char *path, const char *part)
{
	struct sf_profile_opts strict = { .caps = "none", .kernel = "6.1" };
	struct sf_profile_opts lenient = { .caps = "none", .kernel = "6.1", .lenient = 1 };
	struct sf_profile p, l;
	struct sf_profile_error e;

	if (access(path, R_OK)) {
		test_skip_part(part, "%s: not readable (Debian ships Docker's in "
			       "golang-github-docker-docker-dev)", path);
		return;
	}
	if (!ASSERT_OK(sf_profile_compile_file(path, &strict, &p, &e), e.msg))
		return;
	if (ASSERT_OK(sf_profile_compile_file(path, &lenient, &l, &e), e.msg)) {
		ASSERT_TRUE(same_filter(&p, &l), part);
		ASSERT_EQ(p.n_warnings, l.n_warnings, part);
	}
	test_log("%s: %zu instructions, %u syscalls with a rule\n", path, p.len, p.n_rules);
	sf_profile_free(&p);
	sf_profile_free(&l);
}

TEST(podman_and_docker_default_profiles_are_the_same_filter_with_and_without_lenient)
{
	same_both_ways(PODMAN, "podman");
	same_both_ways(DOCKER, "docker");
}

/* The table is printed in sfctl(8): every key in it, beside the runner's
 * source tree (build/tests/sftest). */
TEST(profile_key_table_is_the_one_sfctl_8_prints)
{
	char exe[PATH_MAX], man[PATH_MAX + 32], *text, line[160];
	const struct sf_profile_key *k;
	size_t i, n, len;
	ssize_t got = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	FILE *f;

	exe[got > 0 ? got : 0] = '\0';
	if (strrchr(exe, '/'))
		*strrchr(exe, '/') = '\0';
	snprintf(man, sizeof(man), "%s/../../man/sfctl.8", exe);
	f = fopen(man, "r");
	if (!f) {
		test_skip("%s: no source tree beside the runner", man);
		return;
	}
	text = calloc(1, 1 << 20);
	len = text ? fread(text, 1, (1 << 20) - 1, f) : 0;
	fclose(f);
	ASSERT_TRUE(len > 0, "read sfctl.8");
	k = sf_profile_keys(&n);
	for (i = 0; text && i < n; i++) {
		snprintf(line, sizeof(line), "%s\t%s\t", k[i].object, k[i].key);
		ASSERT_TRUE(strstr(text, line) != NULL, line);
	}
	free(text);
}

/* ---- the CLIs: one line, a non-zero exit, nothing made ---------------------- */

#define TYPO_PROFILE \
	"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"getppid\"]," \
	"\"action\":\"SCMP_ACT_ERRNO\",\"nmaes\":[\"x\"]}]}\n"
#define TYPO_LINE "syscalls[0].nmaes: unknown key; did you mean \"names\"?"

struct cli {
	char dir[64], profile[128], out[128], sfctl[PATH_MAX], sfrun[PATH_MAX];
};

static bool cli_setup(struct cli *c)
{
	FILE *f;

	if (!sfd_find_bin("sfctl", "SF_SFCTL", c->sfctl, sizeof(c->sfctl)) ||
	    !sfd_find_bin("sfrun", "SF_SFRUN", c->sfrun, sizeof(c->sfrun))) {
		test_skip("no sfctl or sfrun beside the test runner");
		return false;
	}
	snprintf(c->dir, sizeof(c->dir), "/tmp/sftest-strict-XXXXXX");
	if (!ASSERT_TRUE(mkdtemp(c->dir) != NULL, "mkdtemp"))
		return false;
	snprintf(c->profile, sizeof(c->profile), "%s/typo.json", c->dir);
	snprintf(c->out, sizeof(c->out), "%s/out.bpf", c->dir);
	f = fopen(c->profile, "w");
	return ASSERT_TRUE(f && fputs(TYPO_PROFILE, f) >= 0 && !fclose(f), "write typo.json");
}

static void cli_cleanup(struct cli *c)
{
	unlink(c->profile);
	unlink(c->out);
	rmdir(c->dir);
}

/* argv's exit status and stderr. */
static int run(const char *const argv[], char *err, size_t size)
{
	struct sfd_io io = { NULL, 0, NULL, 0, err, size };

	return sfd_run_io(argv, &io, 60);
}

TEST(sfctl_and_sfrun_refuse_a_mistyped_profile_in_one_line_unless_lenient)
{
	struct cli c;
	char err[2048], want[512];
	struct stat st;
	int s;

	if (!cli_setup(&c))
		return;
	/* sfctl compile: exit 2, one line, no OUT.bpf. */
	{
		const char *argv[] = { c.sfctl, "compile", "--profile", c.profile, "-o", c.out,
				       NULL };
		s = run(argv, err, sizeof(err));
		snprintf(want, sizeof(want), "sfctl: %s: %s\n", c.profile, TYPO_LINE);
		ASSERT_TRUE(WIFEXITED(s) && WEXITSTATUS(s) == 2, "sfctl compile: exit 2");
		ASSERT_STREQ(err, want, "sfctl compile: the line");
		ASSERT_TRUE(stat(c.out, &st) && errno == ENOENT, "sfctl compile: no OUT.bpf");
	}
	{
		const char *argv[] = { c.sfctl, "compile", "--lenient", "--profile", c.profile,
				       "-o", c.out, NULL };
		s = run(argv, err, sizeof(err));
		snprintf(want, sizeof(want), "sfctl: warning: %s: syscalls[0].nmaes: unknown "
			 "key, ignored; did you mean \"names\"?\n", c.profile);
		ASSERT_EQ(s, 0, err);
		ASSERT_TRUE(!strncmp(err, want, strlen(want)), "sfctl compile --lenient: warned");
		ASSERT_TRUE(stat(c.out, &st) == 0 && st.st_size > 0, "sfctl compile --lenient: OUT");
	}
	/* sfctl attach --profile: refused before any daemon is asked (there
	 * is none at this socket); --lenient goes on to ask it. */
	{
		const char *argv[] = { c.sfctl, "--socket", "/nonexistent/sftest.sock", "attach",
				       "--pid", "1", "--profile", c.profile, NULL };
		const char *largv[] = { c.sfctl, "--socket", "/nonexistent/sftest.sock", "attach",
					"--pid", "1", "--profile", c.profile, "--lenient", NULL };

		s = run(argv, err, sizeof(err));
		snprintf(want, sizeof(want), "sfctl: %s: %s\n", c.profile, TYPO_LINE);
		ASSERT_TRUE(WIFEXITED(s) && WEXITSTATUS(s) == 2, "sfctl attach: exit 2");
		ASSERT_STREQ(err, want, "sfctl attach: the line");
		s = run(largv, err, sizeof(err));
		ASSERT_TRUE(s != 0 && !strstr(err, TYPO_LINE) && strstr(err, "/nonexistent"),
			    "sfctl attach --lenient: past the profile, to the socket");
	}
	/* sfrun --profile: exit 125, one line, the command never runs. */
	{
		char mark[160];
		const char *argv[] = { c.sfrun, "--profile", c.profile, "--", "/bin/touch", mark,
				       NULL };
		const char *largv[] = { c.sfrun, "--profile", c.profile, "--lenient", "--",
					"/bin/touch", mark, NULL };

		snprintf(mark, sizeof(mark), "%s/ran", c.dir);
		setenv("SFILTER_SOCKET", "/nonexistent/sftest.sock", 1);
		s = run(argv, err, sizeof(err));
		snprintf(want, sizeof(want), "sfrun: %s: %s\n", c.profile, TYPO_LINE);
		ASSERT_TRUE(WIFEXITED(s) && WEXITSTATUS(s) == 125, "sfrun: exit 125");
		ASSERT_STREQ(err, want, "sfrun: the line");
		ASSERT_TRUE(access(mark, F_OK) && errno == ENOENT, "sfrun: the command never ran");
		s = run(largv, err, sizeof(err));
		ASSERT_TRUE(strstr(err, "unknown key, ignored") && !strstr(err, TYPO_LINE),
			    "sfrun --lenient: warned, past the profile");
		unsetenv("SFILTER_SOCKET");
		unlink(mark);
	}
	cli_cleanup(&c);
}
