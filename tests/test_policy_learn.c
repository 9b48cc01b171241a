// SPDX-License-Identifier: GPL-2.0-only
/*
 * Learned policies are data, never code: `sfctl policy-from-log` learns
 * (arch, syscall number) pairs and nothing else. A log line that is not
 * sfilterd's and not an event that names a syscall the way libseccomp
 * does (a name with a newline and "ret ALLOW" in it, a name that is not
 * the number's, a number that is not one, JSON that is not an object...)
 * stops it with the line's number, and nothing is written. A good log's
 * policy allows exactly what the log showed, checked here by the
 * interpreter over every number of every arch.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "daemon.h"

#include "c2e.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define AUDIT_X86_64 C2E_AUDIT_ARCH_X86_64
#define AUDIT_I386   C2E_AUDIT_ARCH_I386
#define X32          C2E_X32_SYSCALL_BIT

struct dir { char path[64], log[96], prefix[96]; };

static bool mkdir_tmp(struct dir *d)
{
	snprintf(d->path, sizeof(d->path), "/tmp/sftest-learn-XXXXXX");
	if (!mkdtemp(d->path))
		return false;
	snprintf(d->log, sizeof(d->log), "%s/log", d->path);
	snprintf(d->prefix, sizeof(d->prefix), "%s/p", d->path);
	return true;
}

static void rm_tmp(struct dir *d)
{
	char p[128];

	snprintf(p, sizeof(p), "%s.s", d->prefix);
	unlink(p);
	snprintf(p, sizeof(p), "%s.bpf", d->prefix);
	unlink(p);
	unlink(d->log);
	rmdir(d->path);
}

/* policy-from-log --log LOG -o PREFIX over the lines given, with one more
 * option pair (or NULL); its output into out. The wait status. */
static int learn(struct dir *d, const char *lines, const char *opt, const char *val,
		 char *out, size_t size)
{
	char sfctl[PATH_MAX];
	const char *argv[12] = { sfctl, "policy-from-log", "--log", d->log, "-o", d->prefix };
	int fd = open(d->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	bool ok = fd >= 0 && write(fd, lines, strlen(lines)) == (ssize_t)strlen(lines);

	if (fd >= 0)
		close(fd);
	if (!ok || !sfd_find_bin("sfctl", "SF_SFCTL", sfctl, sizeof(sfctl)))
		return -1;
	if (opt) {
		argv[6] = opt;
		argv[7] = val;
	}
	return sfd_run(argv, true, 30, out, size);
}

static bool exists(const char *prefix, const char *ext)
{
	char p[128];

	snprintf(p, sizeof(p), "%s%s", prefix, ext);
	return access(p, F_OK) == 0;
}

/* Log lines that must stop it, and the words its message must have. */
static const struct { const char *line, *says; } crafted[] = {
	{ "{\"nr\":39,\"arch\":\"x86_64\",\"syscall\":\"getpid\\n\\tret ALLOW\"}",
	  "\"syscall\" is \"getpid\\n\\tret ALLOW\"" },
	{ "{\"nr\":39,\"arch\":\"x86_64\",\"syscall\":\"read\"}", "libseccomp calls nr 39" },
	{ "{\"nr\":100000,\"arch\":\"x86_64\",\"syscall\":\"x\"}", "calls nr 100000 of x86_64 nothing" },
	{ "ret ALLOW", "not a JSON object" },
	{ "[1,2]", "not a JSON object" },
	{ "{\"pid\":1}", "neither an event" },
	{ "{\"nr\":\"39\",\"arch\":\"x86_64\"}", "not a syscall number" },
	{ "{\"nr\":4294967296,\"arch\":\"x86_64\"}", "not a syscall number" },
	{ "{\"nr\":1.5,\"arch\":\"x86_64\"}", "not a syscall number" },
	{ "{\"nr\":39,\"arch\":\"arm\"}", "not x86_64, x32 or i386" },
	{ "{\"nr\":39,\"arch\":\"x32\"}", "disagree on the x32 bit" },
	{ "{\"nr\":39,\"arch\":\"x86_64\",\"count\":-1}", "not a count of calls" },
};

TEST(policy_from_log_refuses_every_line_that_is_not_data_and_writes_nothing)
{
	static const char good[] = "{\"sfilterd\":\"start\"}\n"
				   "{\"nr\":0,\"arch\":\"x86_64\",\"syscall\":\"read\"}\n";
	char lines[512], out[2048], want[64];
	struct dir d;
	size_t i;
	int st;

	if (!ASSERT_TRUE(mkdir_tmp(&d), "a temporary directory"))
		return;
	for (i = 0; i < sizeof(crafted) / sizeof(crafted[0]); i++) {
		/* The bad line comes third, after a line of sfilterd's and a
		 * good event: nothing learned before it is written either. */
		snprintf(lines, sizeof(lines), "%s%s\n", good, crafted[i].line);
		st = learn(&d, lines, NULL, NULL, out, sizeof(out));
		test_log("%s -> %s", crafted[i].line, out);
		ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1, "refused with status 1");
		ASSERT_TRUE(strstr(out, "line 3 of the log") != NULL, "naming the line");
		ASSERT_TRUE(strstr(out, crafted[i].says) != NULL, "saying what is wrong with it");
		snprintf(want, sizeof(want), "nothing learned");
		ASSERT_TRUE(strstr(out, want) != NULL, "and that nothing was learned");
		ASSERT_FALSE(exists(d.prefix, ".s") || exists(d.prefix, ".bpf"), "nothing written");
	}
	rm_tmp(&d);
}

static bool in(const uint32_t (*pairs)[2], size_t n, uint32_t arch, int32_t nr)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (pairs[i][0] == arch && (int32_t)pairs[i][1] == nr)
			return true;
	return false;
}

TEST(a_learned_policy_allows_exactly_the_pairs_the_log_showed)
{
	static const char log[] =
		"{\"nr\":39,\"arch\":\"x86_64\",\"syscall\":\"getpid\",\"count\":3}\n"
		"{\"nr\":0,\"arch\":\"x86_64\",\"syscall\":\"read\"}\n"
		"{\"nr\":20,\"arch\":\"i386\",\"syscall\":\"getpid\"}\n"
		"{\"nr\":1073741824,\"arch\":\"x32\",\"syscall\":\"read\"}\n"
		"{\"nr\":1000,\"arch\":\"x86_64\"}\n"
		"\n"
		"{\"sfilterd\":\"stop\"}\n";
	static const uint32_t pairs[][2] = {
		{ AUDIT_X86_64, 39 }, { AUDIT_X86_64, 0 }, { AUDIT_I386, 20 },
		{ AUDIT_X86_64, X32 | 0 }, { AUDIT_X86_64, 1000 },
	};
	static const uint32_t arches[] = { AUDIT_X86_64, AUDIT_I386, 0xc00000b7U /* aarch64 */ };
	struct sock_filter f[4096];
	char out[2048], path[128];
	struct seccomp_data sd;
	size_t i, k, wrong = 0;
	ssize_t len;
	struct dir d;
	int st, fd;

	if (!ASSERT_TRUE(mkdir_tmp(&d), "a temporary directory"))
		return;
	st = learn(&d, log, NULL, NULL, out, sizeof(out));
	test_log("%s", out);
	ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the policy is learned");
	ASSERT_TRUE(strstr(out, "5 syscalls from 5 events") != NULL, "5 pairs from 5 events");
	snprintf(path, sizeof(path), "%s.bpf", d.prefix);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	len = fd >= 0 ? read(fd, f, sizeof(f)) : -1;
	if (fd >= 0)
		close(fd);
	if (!ASSERT_TRUE(len > 0 && len % 8 == 0, "its raw filter is there")) {
		rm_tmp(&d);
		return;
	}
	for (k = 0; k < 3; k++)
		for (i = 0; i < 4 * 2048; i++) {
			int32_t nr = (int32_t)(i % 2048) | (i / 2048 == 1 ? X32 : 0);

			if (i / 2048 >= 2)
				nr = i / 2048 == 2 ? -(int32_t)(i % 2048) : 0x7fffffff - (int32_t)(i % 2048);
			memset(&sd, 0, sizeof(sd));
			sd.arch = arches[k];
			sd.nr = nr;
			sd.args[0] = ~0ULL;
			wrong += (c2e_interpret(f, (size_t)len / 8, &sd) == SECCOMP_RET_ALLOW) !=
				 in(pairs, 5, arches[k], nr);
		}
	ASSERT_EQ(wrong, 0, "it allows the 5 pairs and nothing else, on every arch");
	snprintf(path, sizeof(path), "%s.s", d.prefix);
	ASSERT_TRUE(sfd_file_has(path, "; getpid (3 calls)"), "the text names each syscall "
		    "by libseccomp's name, with its calls");
	ASSERT_TRUE(sfd_file_has(path, "; nr 1000 (1 calls)"), "and a number without a name "
		    "by its number");
	rm_tmp(&d);
}

TEST(a_learned_policy_never_defaults_to_allow)
{
	char out[1024];
	struct dir d;
	int st;

	if (!ASSERT_TRUE(mkdir_tmp(&d), "a temporary directory"))
		return;
	st = learn(&d, "{\"nr\":0,\"arch\":\"x86_64\",\"syscall\":\"read\"}\n", "--default", "ALLOW",
		   out, sizeof(out));
	ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 2, "--default ALLOW is a usage error");
	ASSERT_TRUE(strstr(out, "would allow every call") != NULL, "saying why");
	ASSERT_FALSE(exists(d.prefix, ".s"), "nothing written");
	rm_tmp(&d);
}

/* One container's policy: its filter's events alone (every container has
 * its cgroup's filter, so --filter picks one container out of a log of
 * many). */
TEST(policy_from_log_learns_from_one_filters_events_alone)
{
	static const char log[] =
		"{\"nr\":39,\"arch\":\"x86_64\",\"syscall\":\"getpid\",\"filter\":1}\n"
		"{\"nr\":0,\"arch\":\"x86_64\",\"syscall\":\"read\",\"filter\":2}\n"
		"{\"nr\":1,\"arch\":\"x86_64\",\"syscall\":\"write\",\"filter\":2}\n";
	char out[2048], path[128];
	struct dir d;
	int st;

	if (!ASSERT_TRUE(mkdir_tmp(&d), "a temporary directory"))
		return;
	st = learn(&d, log, "--filter", "2", out, sizeof(out));
	test_log("%s", out);
	ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the policy is learned");
	ASSERT_TRUE(strstr(out, "2 syscalls from 2 events") != NULL, "2 pairs from filter 2's 2 events");
	snprintf(path, sizeof(path), "%s.s", d.prefix);
	ASSERT_TRUE(sfd_file_has(path, "; read (1 calls)") && sfd_file_has(path, "; write") &&
		    !sfd_file_has(path, "; getpid"), "read and write, not filter 1's getpid");
	st = learn(&d, log, "--filter", "3", out, sizeof(out));
	ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1 &&
		    strstr(out, "no syscall events of that filter"), "a filter with no events: "
		    "nothing learned, and said");
	rm_tmp(&d);
}
