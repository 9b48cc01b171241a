// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target over libsfprofile's sf_profile_compile(): any bytes as
 * a profile. For every input, under ASan/UBSan:
 *   - the compiler returns 0 or a negative errno, never crashes, and
 *     reads no byte past the input (it is copied to a buffer of exactly
 *     its size, with no NUL after it);
 *   - on an error nothing is produced and the message is a printable,
 *     terminated string;
 *   - on success the filter is 1 to 4096 instructions that seccomp(2)
 *     would take (c2e_validate()), and its warnings are strings;
 *   - an error names a path that is in the document json-c reads from the
 *     input, or the document itself (""), or, for a member "missing", a
 *     key of an object that is there;
 *   - read leniently (unknown and repeated keys warned), the same holds
 *     but for the path.
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

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

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
	/* What a strict read refuses: unknown keys, a repeated key (one
	 * escaped), numbers beyond 64 bits, empty names. */
	"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"sycalls\":[],\"syscalls\":[{\"nmaes\":[\"read\"],"
	"\"action\":\"SCMP_ACT_ERRNO\",\"args\":[{\"index\":0,\"value\":1,\"op\":\"SCMP_CMP_EQ\","
	"\"valeuTwo\":0}],\"includes\":{\"cap\":[]},\"excludes\":{\"minkernel\":\"4.8\"}}],"
	"\"archMap\":[{\"architecture\":\"SCMP_ARCH_X86_64\",\"subArches\":[]}]}",
	"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"def\\u0061ultAction\":\"SCMP_ACT_LOG\",\"syscalls\":"
	"[{\"names\":[\"getpid\"],\"action\":\"SCMP_ACT_ERRNO\",\"action\":\"SCMP_ACT_KILL\"}]}",
	"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"read\"],\"action\":"
	"\"SCMP_ACT_ERRNO\",\"errnoRet\":18446744073709551616,\"args\":[{\"index\":-1,\"value\":"
	"-9223372036854775809,\"valueTwo\":1.5,\"op\":\"SCMP_CMP_EQ\"}]},{\"names\":[],\"name\":"
	"\"getpid\",\"action\":\"SCMP_ACT_LOG\",\"errnoRet\":\"5\"}]}",
	/* A path through an empty key: its steps keep their dots. */
	"{\"\":{\"e\":{},\"e\":[]}}",
	/* A repeat inside a value that a repeat of its own key replaces. */
	"{\"sys\":[{\"names\":\"\",\"names\":[]}],\"sys\":[]}",
	"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"read\"],\"action\":"
	"\"SCMP_ACT_ERRNO\",\"args\":[{\"index\":0,\"value\":99999999999999999999,\"op\":"
	"\"SCMP_CMP_EQ\"}]}],\"syscalls\":[]}",
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

FUZZ_SEED_INITIALIZE("fuzz_profile", write_seeds)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Whether path (a.b[2].c; keys may hold dots) is in o; with missing, a
 * last step that is a key an object there lacks counts too. */
static bool has_path(struct json_object *o, const char *path, bool root, bool missing)
{
	char *end;
	unsigned long i;

	if (!*path)
		return true;
	if (json_object_get_type(o) == json_type_array) {
		if (*path != '[')
			return false;
		i = strtoul(path + 1, &end, 10);
		return *end == ']' && i < json_object_array_length(o) &&
		       has_path(json_object_array_get_idx(o, i), end + 1, false, missing);
	}
	if (json_object_get_type(o) != json_type_object)
		return false;
	if (!root && *path++ != '.')
		return false;
	json_object_object_foreach(o, key, v) {
		size_t n = strlen(key);

		if (!strncmp(path, key, n) && strchr(".[", path[n]) &&
		    has_path(v, path + n, false, missing))
			return true;
	}
	return missing && !strpbrk(path, ".[");
}

/* The error's path against the document json-c reads. */
static void check_path(const uint8_t *data, size_t size, const struct sf_profile_error *err)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *doc;

	if (!tok)
		return;
	doc = size <= INT32_MAX ? json_tokener_parse_ex(tok, (const char *)data, (int)size) : NULL;
	if (err->path[0] && (!doc || !has_path(doc, err->path, true,
					       strstr(err->msg, ": missing") != NULL)))
		abort();
	json_object_put(doc);
	json_tokener_free(tok);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sf_profile_opts opts = { .caps = "CAP_SYS_ADMIN,CAP_AUDIT_WRITE", .kernel = "6.1" };
	int lenient;
	struct c2e_error cerr = { 0 };
	struct sf_profile_error err;
	struct sf_profile p;
	char *copy = malloc(size ? size : 1);
	size_t i;
	int r;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	for (lenient = 0; lenient < 2; lenient++) {
		opts.lenient = lenient;
		r = sf_profile_compile(copy, size, &opts, &p, &err);
		if (r >= 0)
			break;
		if (p.insns || p.len || p.warnings || p.n_warnings ||
		    strnlen(err.msg, sizeof(err.msg)) == sizeof(err.msg) || !err.msg[0])
			abort();
		/* Leniently, a number's path may be in a repeated key's value
		 * that json-c dropped. */
		if (!lenient)
			check_path(data, size, &err);
	}
	free(copy);
	if (r < 0)
		return 0;
	if (r != 0 || !p.insns || p.len < 1 || p.len > C2E_MAX_INSNS ||
	    c2e_validate(p.insns, p.len, &cerr) < 0)
		abort();
	for (i = 0; i < p.n_warnings; i++)
		if (!p.warnings[i] || strlen(p.warnings[i]) > 1024)
			abort();
	sf_profile_free(&p);
	return 0;
}
