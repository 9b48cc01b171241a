// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target over libsfprofile's sf_profile_compile(): any bytes as
 * a profile. For every input, under ASan/UBSan:
 *   - the compiler returns 0 or a negative errno, never crashes, and
 *     reads no byte past the input (it is copied to a buffer of exactly
 *     its size, with no NUL after it);
 *   - on an error nothing is produced and the message is a printable,
 *     terminated string;
 *   - on success the filter is 1 to 4096 instructions that seccomp(2)
 *     would take (c2e_validate()), and its warnings are strings.
 * Caps and the kernel are fixed options, so a run does not depend on the
 * machine.
 *
 * Environment: SF_FUZZ_SEED_DIR=DIR writes a seed corpus (small profiles
 * covering every field, and Podman's default profile when it is
 * installed) into DIR and exits.
 */
#define _GNU_SOURCE
#include "profile.h"
#include "c2e.h"
#include "fuzzseed.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const seeds[] = {
	"{\"defaultAction\":\"SCMP_ACT_ALLOW\"}",
	"{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"defaultErrnoRet\":38,\"defaultErrno\":\"ENOSYS\","
	"\"archMap\":[{\"architecture\":\"SCMP_ARCH_X86_64\",\"subArchitectures\":"
	"[\"SCMP_ARCH_X86\",\"SCMP_ARCH_X32\"]}],\"syscalls\":[{\"names\":[\"read\",\"write\"],"
	"\"action\":\"SCMP_ACT_ALLOW\",\"comment\":\"\",\"includes\":{},\"excludes\":{}},"
	"{\"names\":[\"socket\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":22,\"errno\":\"EINVAL\","
	"\"args\":[{\"index\":0,\"value\":16,\"valueTwo\":0,\"op\":\"SCMP_CMP_EQ\"},"
	"{\"index\":2,\"value\":9,\"op\":\"SCMP_CMP_EQ\"}],\"excludes\":{\"caps\":[\"CAP_AUDIT_WRITE\"]}}]}",
	"{\"defaultAction\":\"SCMP_ACT_KILL_PROCESS\",\"architectures\":[\"SCMP_ARCH_X86_64\","
	"\"SCMP_ARCH_X86\"],\"flags\":[\"SECCOMP_FILTER_FLAG_LOG\",\"SECCOMP_FILTER_FLAG_TSYNC\"],"
	"\"syscalls\":[{\"name\":\"getpid\",\"action\":\"SCMP_ACT_TRACE\",\"errnoRet\":3},"
	"{\"names\":[\"personality\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":["
	"{\"index\":0,\"value\":8,\"op\":\"SCMP_CMP_NE\"},{\"index\":0,\"value\":255,"
	"\"valueTwo\":8,\"op\":\"SCMP_CMP_MASKED_EQ\"}],\"includes\":{\"minKernel\":\"4.8\","
	"\"arches\":[\"amd64\"],\"caps\":[\"CAP_SYS_ADMIN\"]}},{\"names\":[\"kill\"],"
	"\"action\":\"SCMP_ACT_LOG\",\"args\":[{\"index\":1,\"value\":18446744073709551615,"
	"\"op\":\"SCMP_CMP_LE\"}]}]}",
};

static void write_seeds(const char *dir)
{
	char name[32], *buf;
	size_t i, len;
	FILE *f;

	for (i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		snprintf(name, sizeof(name), "seed-%zu.json", i);
		fuzz_seed_write(dir, name, seeds[i], strlen(seeds[i]));
	}
	f = fopen("/usr/share/containers/seccomp.json", "r");
	if (!f)
		return;
	buf = malloc(1 << 20);
	len = buf ? fread(buf, 1, 1 << 20, f) : 0;
	if (len)
		fuzz_seed_write(dir, "podman.json", buf, len);
	free(buf);
	fclose(f);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_seed_from_env("fuzz_profile", write_seeds);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sf_profile_opts opts = { .caps = "CAP_SYS_ADMIN,CAP_AUDIT_WRITE", .kernel = "6.1" };
	struct c2e_error cerr = { 0 };
	struct sf_profile_error err;
	struct sf_profile p;
	char *copy = malloc(size ? size : 1);
	size_t i;
	int r;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	r = sf_profile_compile(copy, size, &opts, &p, &err);
	free(copy);
	if (r < 0) {
		if (p.insns || p.len || p.warnings || p.n_warnings ||
		    strnlen(err.msg, sizeof(err.msg)) == sizeof(err.msg) || !err.msg[0])
			abort();
		return 0;
	}
	if (r != 0 || !p.insns || p.len < 1 || p.len > C2E_MAX_INSNS ||
	    c2e_validate(p.insns, p.len, &cerr) < 0)
		abort();
	for (i = 0; i < p.n_warnings; i++)
		if (!p.warnings[i] || strlen(p.warnings[i]) > 1024)
			abort();
	sf_profile_free(&p);
	return 0;
}
