// SPDX-License-Identifier: GPL-2.0-only
/*
 * A profile's fields one by one (loader/profile): what each condition is
 * judged against, what the result records, and every class of error with
 * the JSON path its message names. Nothing is produced on an error.
 */
#include "harness.h"
#include "profile.h"
#include "c2e.h"

#include <stdlib.h>

static int compile(const char *json, const char *caps, const char *kernel,
		   struct sf_profile *p, struct sf_profile_error *e)
{
	struct sf_profile_opts o = { .caps = caps ? caps : "none", .kernel = kernel };

	return sf_profile_compile(json, strlen(json), &o, p, e);
}

/* The verdict of p for x86_64 syscall nr with arg0. */
static uint32_t verdict(const struct sf_profile *p, int nr, uint64_t arg0)
{
	struct seccomp_data d = { .nr = nr, .arch = C2E_AUDIT_ARCH_X86_64, .args = { arg0 } };

	return c2e_interpret(p->insns, p->len, &d);
}

/* getpid (39) under one entry with these extra fields. */
#define ONE(extra) "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"getpid\"]," \
	"\"action\":\"SCMP_ACT_ERRNO\"" extra "}]}"

TEST(profile_conditions_are_judged_against_the_given_caps_kernel_and_native_arch)
{
	static const struct {
		const char *json, *caps, *kernel;
		uint32_t want;
	} cases[] = {
		{ ONE(",\"includes\":{\"caps\":[\"CAP_SYS_ADMIN\"]}"), "CAP_SYS_ADMIN", NULL, 0x50001 },
		{ ONE(",\"includes\":{\"caps\":[\"CAP_SYS_ADMIN\"]}"), "none", NULL, 0x7fff0000 },
		{ ONE(",\"includes\":{\"caps\":[\"CAP_SYS_ADMIN\",\"CAP_NET_RAW\"]}"),
		  "cap_sys_admin", NULL, 0x7fff0000 },
		{ ONE(",\"excludes\":{\"caps\":[\"CAP_SYS_ADMIN\",\"CAP_NET_RAW\"]}"),
		  "NET_RAW", NULL, 0x7fff0000 },
		{ ONE(",\"excludes\":{\"caps\":[\"CAP_SYS_ADMIN\"]}"), "none", NULL, 0x50001 },
		{ ONE(",\"includes\":{\"minKernel\":\"5.8\"}"), NULL, "5.7.1", 0x7fff0000 },
		{ ONE(",\"includes\":{\"minKernel\":\"5.8\"}"), NULL, "5.10.0-18-amd64", 0x50001 },
		{ ONE(",\"excludes\":{\"minKernel\":\"4.8\"}"), NULL, "6.1", 0x7fff0000 },
		{ ONE(",\"includes\":{\"arches\":[\"amd64\",\"x32\"]}"), NULL, NULL, 0x50001 },
		{ ONE(",\"includes\":{\"arches\":[\"arm64\"]}"), NULL, NULL, 0x7fff0000 },
		{ ONE(",\"excludes\":{\"arches\":[\"amd64\"]}"), NULL, NULL, 0x7fff0000 },
		{ ONE(",\"errnoRet\":38"), NULL, NULL, 0x50026 },
		{ ONE(",\"errno\":\"EACCES\""), NULL, NULL, 0x5000d },
		{ ONE(",\"errnoRet\":22,\"errno\":\"EINVAL\",\"comment\":\"x\""), NULL, NULL, 0x50016 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sf_profile p;
		struct sf_profile_error e;
		char m[64];

		snprintf(m, sizeof(m), "case %zu", i);
		if (!ASSERT_OK(compile(cases[i].json, cases[i].caps, cases[i].kernel, &p, &e), e.msg))
			continue;
		ASSERT_EQ(verdict(&p, 39, 0), cases[i].want, m);
		sf_profile_free(&p);
	}
}

TEST(profile_args_use_all_seven_ops_and_same_index_args_are_alternatives)
{
	static const struct { const char *op; uint64_t v, two, arg; bool match; } ops[] = {
		{ "SCMP_CMP_NE", 5, 0, 5, false }, { "SCMP_CMP_NE", 5, 0, 6, true },
		{ "SCMP_CMP_LT", 5, 0, 4, true }, { "SCMP_CMP_LT", 5, 0, 5, false },
		{ "SCMP_CMP_LE", 5, 0, 5, true }, { "SCMP_CMP_LE", 5, 0, 6, false },
		{ "SCMP_CMP_EQ", 5, 0, 5, true }, { "SCMP_CMP_EQ", 5, 0, 4, false },
		{ "SCMP_CMP_GE", 5, 0, 5, true }, { "SCMP_CMP_GE", 5, 0, 4, false },
		{ "SCMP_CMP_GT", 5, 0, 6, true }, { "SCMP_CMP_GT", 5, 0, 5, false },
		{ "SCMP_CMP_MASKED_EQ", 0xff, 0x10, 0x1710, true },
		{ "SCMP_CMP_MASKED_EQ", 0xff, 0x10, 0x11, false },
		{ "SCMP_CMP_EQ", 0x100000005ULL, 0, 0x100000005ULL, true },
		{ "SCMP_CMP_EQ", 0x100000005ULL, 0, 5, false },
	};
	struct sf_profile p;
	struct sf_profile_error e;
	char json[400], m[80];
	size_t i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		snprintf(json, sizeof(json), ONE(",\"args\":[{\"index\":0,\"value\":%llu,"
			 "\"valueTwo\":%llu,\"op\":\"%s\"}]"), (unsigned long long)ops[i].v,
			 (unsigned long long)ops[i].two, ops[i].op);
		snprintf(m, sizeof(m), "%s %llx against %llx", ops[i].op,
			 (unsigned long long)ops[i].arg, (unsigned long long)ops[i].v);
		if (!ASSERT_OK(compile(json, NULL, NULL, &p, &e), e.msg))
			continue;
		ASSERT_EQ(verdict(&p, 39, ops[i].arg), ops[i].match ? 0x50001 : 0x7fff0000, m);
		sf_profile_free(&p);
	}
	/* Two args on index 0: either matches (runc's separate rules). */
	if (ASSERT_OK(compile(ONE(",\"args\":[{\"index\":0,\"value\":1,\"op\":\"SCMP_CMP_EQ\"},"
				  "{\"index\":0,\"value\":2,\"op\":\"SCMP_CMP_EQ\"}]"),
			      NULL, NULL, &p, &e), e.msg)) {
		ASSERT_EQ(verdict(&p, 39, 1), 0x50001, "arg 1");
		ASSERT_EQ(verdict(&p, 39, 2), 0x50001, "arg 2");
		ASSERT_EQ(verdict(&p, 39, 3), 0x7fff0000, "arg 3");
		sf_profile_free(&p);
	}
}

TEST(profile_flags_actions_legacy_name_and_unknown_syscalls_are_recorded)
{
	const char *json = "{\"defaultAction\":\"SCMP_ACT_KILL_PROCESS\",\"flags\":["
		"\"SECCOMP_FILTER_FLAG_LOG\",\"SECCOMP_FILTER_FLAG_TSYNC\"],\"syscalls\":["
		"{\"name\":\"getpid\",\"action\":\"SCMP_ACT_LOG\"},"
		"{\"names\":[\"no_such_call\",\"read\"],\"action\":\"SCMP_ACT_TRACE\",\"errnoRet\":3},"
		"{\"names\":[\"write\"],\"action\":\"SCMP_ACT_KILL_PROCESS\"},"
		"{\"names\":[\"close\"],\"action\":\"SCMP_ACT_KILL\"}]}";
	struct sf_profile p;
	struct sf_profile_error e;

	if (!ASSERT_OK(compile(json, NULL, NULL, &p, &e), e.msg))
		return;
	ASSERT_EQ(p.flags, SF_PROFILE_FLAG_LOG | SF_PROFILE_FLAG_TSYNC, "flags");
	ASSERT_EQ(p.default_action, SECCOMP_RET_KILL_PROCESS, "default");
	ASSERT_EQ(verdict(&p, 39, 0), SECCOMP_RET_LOG, "name: getpid");
	ASSERT_EQ(verdict(&p, 0, 0), SECCOMP_RET_TRACE | 3, "read");
	ASSERT_EQ(verdict(&p, 1, 0), SECCOMP_RET_KILL_PROCESS, "write: the default's rule skipped");
	ASSERT_EQ(verdict(&p, 3, 0), SECCOMP_RET_KILL_THREAD, "SCMP_ACT_KILL is KILL_THREAD");
	ASSERT_EQ(p.n_rules, 3, "getpid, read, close");
	ASSERT_EQ(p.n_gap_rules, 1, "read (TRACE)");
	ASSERT_EQ(p.actions, SF_PROFILE_ACT_KILL_PROCESS | SF_PROFILE_ACT_LOG |
		  SF_PROFILE_ACT_TRACE | SF_PROFILE_ACT_KILL_THREAD, "actions");
	if (ASSERT_EQ(p.n_warnings, 1, "one warning"))
		ASSERT_STREQ(p.warnings[0], "syscalls[1].names[0]: unknown syscall "
			     "\"no_such_call\" skipped", "warning");
	sf_profile_free(&p);
}

TEST(profile_errors_name_their_json_path_and_produce_nothing)
{
	static const struct { const char *json, *msg; } cases[] = {
		{ "{\"defaultAction\":", "not JSON: unexpected end of data at byte 17" },
		{ "[]", "expected an object (the linux.seccomp object)" },
		{ "{}", "defaultAction: missing" },
		{ "{\"defaultAction\":7}", "defaultAction: expected a string, got an integer" },
		{ "{\"defaultAction\":\"SCMP_ACT_FOO\"}", "defaultAction: unknown action \"SCMP_ACT_FOO\"" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"defaultErrnoRet\":1}",
		  "defaultErrnoRet: only SCMP_ACT_ERRNO and SCMP_ACT_TRACE take an errno" },
		{ "{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"defaultErrnoRet\":1,\"defaultErrno\":\"ENOSYS\"}",
		  "defaultErrno: defaultErrno is 38, but defaultErrnoRet is 1" },
		{ "{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"defaultErrno\":\"EFOO\"}",
		  "defaultErrno: unknown errno \"EFOO\"" },
		{ "{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"defaultErrnoRet\":12345}",
		  "defaultErrnoRet: 12345 is above 4095" },
		{ "{\"defaultAction\":\"SCMP_ACT_TRACE\",\"defaultErrnoRet\":70000}",
		  "defaultErrnoRet: 70000 is above 65535" },
		{ "{\"defaultAction\":\"SCMP_ACT_NOTIFY\"}", "defaultAction: SCMP_ACT_NOTIFY is not "
		  "supported: sfilter has no user-space notifier (seccomp_unotify) to hand the call to" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"listenerPath\":\"/run/agent.sock\"}",
		  "listenerPath: not supported: sfilter has no SCMP_ACT_NOTIFY, so no seccomp agent "
		  "to send the state to" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"architectures\":[\"SCMP_ARCH_FOO\"]}",
		  "architectures[0]: unknown architecture \"SCMP_ARCH_FOO\"" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"architectures\":[\"SCMP_ARCH_X86\"],"
		  "\"archMap\":[{\"architecture\":\"SCMP_ARCH_X86_64\"}]}",
		  "archMap: architectures and archMap are both given: use one or the other" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"archMap\":[{\"architecture\":"
		  "\"SCMP_ARCH_X86_64\",\"subArchitectures\":[\"SCMP_ARCH_X68\"]}]}",
		  "archMap[0].subArchitectures[0]: unknown architecture \"SCMP_ARCH_X68\"" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"flags\":[\"SECCOMP_FILTER_FLAG_SPEC_ALLOW\"]}",
		  "flags[0]: SECCOMP_FILTER_FLAG_SPEC_ALLOW cannot be honoured: sfilter does not "
		  "switch off the kernel's speculative store bypass mitigation" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"flags\":[\"SECCOMP_FILTER_FLAG_FOO\"]}",
		  "flags[0]: unknown flag \"SECCOMP_FILTER_FLAG_FOO\"" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":{}}",
		  "syscalls: expected an array, got an object" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":\"getpid\"}]}",
		  "syscalls[0].names: expected an array, got a string" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"action\":\"SCMP_ACT_LOG\"}]}",
		  "syscalls[0].names: missing (at least one syscall name)" },
		{ ONE(",\"name\":\"getppid\""),
		  "syscalls[0]: name and names are both given: use one or the other" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"getpid\"],"
		  "\"action\":\"SCMP_ACT_LOG\",\"errnoRet\":1}]}",
		  "syscalls[0].errnoRet: only SCMP_ACT_ERRNO and SCMP_ACT_TRACE take an errno" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"getpid\"],"
		  "\"action\":\"SCMP_ACT_NOTIFY\"}]}", "syscalls[0].action: SCMP_ACT_NOTIFY is not "
		  "supported: sfilter has no user-space notifier (seccomp_unotify) to hand the call to" },
		{ ONE(",\"args\":[{\"index\":0,\"value\":1,\"op\":\"SCMP_CMP_FOO\"}]"),
		  "syscalls[0].args[0].op: unknown op \"SCMP_CMP_FOO\"" },
		{ ONE(",\"args\":[{\"index\":6,\"value\":1,\"op\":\"SCMP_CMP_EQ\"}]"),
		  "syscalls[0].args[0].index: 6 is above 5" },
		{ ONE(",\"args\":[{\"index\":0,\"value\":-1,\"op\":\"SCMP_CMP_EQ\"}]"),
		  "syscalls[0].args[0].value: expected an unsigned integer, got -1" },
		{ ONE(",\"args\":[{\"index\":0,\"value\":\"1\",\"op\":\"SCMP_CMP_EQ\"}]"),
		  "syscalls[0].args[0].value: expected an unsigned integer, got a string" },
		{ ONE(",\"args\":[{\"index\":0,\"op\":\"SCMP_CMP_EQ\"}]"),
		  "syscalls[0].args[0].value: missing" },
		{ ONE(",\"includes\":{\"caps\":\"CAP_SYS_ADMIN\"}"),
		  "syscalls[0].includes.caps: expected an array, got a string" },
		{ ONE(",\"excludes\":{\"minKernel\":\"six\"}"),
		  "syscalls[0].excludes.minKernel: \"six\" is not a kernel version (major.minor)" },
		{ ONE(",\"comment\":1"), "syscalls[0].comment: expected a string, got an integer" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sf_profile p;
		struct sf_profile_error e;
		char m[64];
		int r = compile(cases[i].json, NULL, NULL, &p, &e);

		snprintf(m, sizeof(m), "case %zu", i);
		ASSERT_EQ(r, -EINVAL, m);
		ASSERT_STREQ(e.msg, cases[i].msg, m);
		ASSERT_TRUE(!p.insns && !p.len && !p.n_warnings, "nothing produced");
	}
}

TEST(profile_caps_option_and_tier_text_read_as_documented)
{
	struct sf_profile p = { .actions = SF_PROFILE_ACT_ERRNO | SF_PROFILE_ACT_ALLOW,
				.default_action = SECCOMP_RET_ERRNO | 38, .n_gap_rules = 53 };
	uint64_t caps;
	char t[400];

	ASSERT_OK(sf_profile_parse_caps("CAP_SYS_ADMIN, net_raw", &caps), "list");
	ASSERT_EQ(caps, (1ULL << 21) | (1ULL << 13), "SYS_ADMIN, NET_RAW");
	ASSERT_EQ(sf_profile_parse_caps("CAP_SYS_NOPE", &caps), -EINVAL, "unknown cap");
	ASSERT_OK(sf_profile_parse_caps("all", &caps), "all");
	ASSERT_EQ(caps, (1ULL << 41) - 1, "every capability");
	sf_profile_tier_text(&p, "filter 3 attached to thread 9; tier tracepoint cannot "
			     "reproduce ERRNO: they kill (fallback kill)", 0, t, sizeof(t));
	ASSERT_STREQ(t, "tier tracepoint: the profile's ERRNO rules (53 syscalls and the "
		     "default) kill instead (use --fallback log to log and allow)", "tracepoint");
	sf_profile_tier_text(&p, "filter 3 attached to thread 9", 0, t, sizeof(t));
	ASSERT_TRUE(!strncmp(t, "tier lsm: the profile's ERRNO rules (53 syscalls and the "
			     "default) refuse the operations LSM hooks check", 70), t);
	p.actions = SF_PROFILE_ACT_ALLOW;
	sf_profile_tier_text(&p, "", 0, t, sizeof(t));
	ASSERT_STREQ(t, "", "nothing to say without ERRNO, TRAP or TRACE");
}

/* moby's way of giving one syscall different verdicts by caps and arch. */
TEST(profile_entries_for_one_syscall_split_by_caps_and_arches_as_moby_writes_them)
{
	const char *json = "{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"syscalls\":["
		"{\"names\":[\"clone3\"],\"action\":\"SCMP_ACT_ALLOW\","
		"\"includes\":{\"caps\":[\"CAP_SYS_ADMIN\"]}},"
		"{\"names\":[\"clone3\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":38,"
		"\"excludes\":{\"caps\":[\"CAP_SYS_ADMIN\"],\"arches\":[\"mips64\",\"mipsel\"]}},"
		"{\"names\":[\"clone3\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":89,"
		"\"includes\":{\"arches\":[\"mips64\",\"mipsel\"]},"
		"\"excludes\":{\"caps\":[\"CAP_SYS_ADMIN\"]}},"
		"{\"name\":\"syslog\",\"action\":\"SCMP_ACT_TRACE\",\"errnoRet\":12345}]}";
	struct sf_profile p;
	struct sf_profile_error e;

	if (ASSERT_OK(compile(json, "none", NULL, &p, &e), e.msg)) {
		ASSERT_EQ(verdict(&p, 435, 0), SECCOMP_RET_ERRNO | 38, "clone3 without caps");
		ASSERT_EQ(verdict(&p, 103, 0), SECCOMP_RET_TRACE | 12345,
			  "syslog: TRACE's message takes 16 bits");
		ASSERT_EQ(verdict(&p, 39, 0), SECCOMP_RET_ERRNO | 1, "the default: EPERM");
		sf_profile_free(&p);
	}
	if (ASSERT_OK(compile(json, "CAP_SYS_ADMIN", NULL, &p, &e), e.msg)) {
		ASSERT_EQ(verdict(&p, 435, 0), SECCOMP_RET_ALLOW, "clone3 with CAP_SYS_ADMIN");
		sf_profile_free(&p);
	}
}
