// SPDX-License-Identifier: GPL-2.0-only
/*
 * A profile's gate (sf_profile_gate(), `sfctl compile --gate`): the OCI
 * linux.seccomp object a runtime installs with a listener for sfilterd.
 *
 * Exactness: for a table of profiles (Podman's default, a profile with
 * Docker's clone/clone3/socket/personality rules and archMap, small ones
 * with every action as default and as rule, every op, args sharing an
 * index, write rules, minKernel) and several cap sets, the profile and its
 * gate are both compiled by libsfprofile (libseccomp) and run in
 * classic2ebpf's interpreter over every syscall number of x86_64, i386 and
 * x32 with arguments taken from the profile's conditions and their
 * neighbours:
 *   - where the profile allows or logs, the gate allows;
 *   - elsewhere the gate notifies, or gives the profile's own verdict
 *     (runc refuses SCMP_ACT_NOTIFY as the default and on write), the
 *     latter never for a call whose verdict is the same for every argument
 *     and that libseccomp names (write, socketcall and ipc aside).
 * Form: what runc and crun read (runtime-spec fields only, no rule equal
 * to the default, no NOTIFY default, no NOTIFY on write), and
 * `sfctl compile --gate` names the agent socket of $SFILTER_SOCKET.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "daemon.h"
#include "profile.h"
#include "proto.h"
#include "c2e.h"

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
#include <json-c/json.h>
#include <seccomp.h>

#define PODMAN "/usr/share/containers/seccomp.json"
#define MAX_NR 520
#define MAX_VALS 256
#define AGENT "/run/sfilter-test/sfilterd.sock.agent"

/* Docker's rules that runtimes treat specially (moby's default.json writes
 * them this way): clone without namespace flags, clone3 answered ENOSYS
 * so that glibc falls back to clone, socket but AF_VSOCK, personality's
 * five values, and entries by caps, arch and minKernel. */
static const char DOCKERISH[] = "{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"defaultErrnoRet\":1,"
	"\"archMap\":[{\"architecture\":\"SCMP_ARCH_X86_64\",\"subArchitectures\":"
	"[\"SCMP_ARCH_X86\",\"SCMP_ARCH_X32\"]}],\"syscalls\":["
	"{\"names\":[\"read\",\"write\",\"close\",\"exit_group\",\"futex\",\"mmap\",\"brk\","
	"\"rt_sigaction\",\"getpid\",\"openat\",\"socketcall\",\"ipc\"],\"action\":\"SCMP_ACT_ALLOW\"},"
	"{\"names\":[\"personality\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":0,"
	"\"value\":0,\"op\":\"SCMP_CMP_EQ\"}]},"
	"{\"names\":[\"personality\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":0,"
	"\"value\":8,\"op\":\"SCMP_CMP_EQ\"}]},"
	"{\"names\":[\"personality\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":0,"
	"\"value\":131072,\"op\":\"SCMP_CMP_EQ\"}]},"
	"{\"names\":[\"personality\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":0,"
	"\"value\":4294967295,\"op\":\"SCMP_CMP_EQ\"}]},"
	"{\"names\":[\"socket\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":0,"
	"\"value\":40,\"op\":\"SCMP_CMP_NE\"}]},"
	"{\"names\":[\"ptrace\"],\"action\":\"SCMP_ACT_ALLOW\",\"includes\":{\"minKernel\":\"4.8\"}},"
	"{\"names\":[\"arch_prctl\"],\"action\":\"SCMP_ACT_ALLOW\",\"includes\":{\"arches\":"
	"[\"amd64\",\"x32\"]}},"
	"{\"names\":[\"sync_file_range2\"],\"action\":\"SCMP_ACT_ALLOW\",\"includes\":{\"arches\":"
	"[\"ppc64le\"]}},"
	"{\"names\":[\"mount\",\"umount2\",\"setns\",\"unshare\"],\"action\":\"SCMP_ACT_ALLOW\","
	"\"includes\":{\"caps\":[\"CAP_SYS_ADMIN\"]}},"
	"{\"names\":[\"clone\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":0,"
	"\"value\":2114060288,\"valueTwo\":0,\"op\":\"SCMP_CMP_MASKED_EQ\"}],"
	"\"excludes\":{\"caps\":[\"CAP_SYS_ADMIN\"],\"arches\":[\"s390\",\"s390x\"]}},"
	"{\"names\":[\"clone\",\"clone3\"],\"action\":\"SCMP_ACT_ALLOW\","
	"\"includes\":{\"caps\":[\"CAP_SYS_ADMIN\"]}},"
	"{\"names\":[\"clone3\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":38,"
	"\"excludes\":{\"caps\":[\"CAP_SYS_ADMIN\"]}}]}";

/* Every action as a rule, KILL_PROCESS the default, write split by its
 * first argument, an unknown name. */
static const char EVERY_ACTION[] = "{\"defaultAction\":\"SCMP_ACT_KILL_PROCESS\","
	"\"flags\":[\"SECCOMP_FILTER_FLAG_LOG\"],\"syscalls\":["
	"{\"names\":[\"getpid\"],\"action\":\"SCMP_ACT_LOG\"},"
	"{\"names\":[\"no_such_call\",\"read\"],\"action\":\"SCMP_ACT_TRACE\",\"errnoRet\":3},"
	"{\"names\":[\"close\"],\"action\":\"SCMP_ACT_KILL\"},"
	"{\"names\":[\"getuid\"],\"action\":\"SCMP_ACT_TRAP\"},"
	"{\"names\":[\"getgid\",\"getppid\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":13},"
	"{\"names\":[\"geteuid\"],\"action\":\"SCMP_ACT_KILL_THREAD\"},"
	"{\"names\":[\"getegid\",\"exit_group\"],\"action\":\"SCMP_ACT_ALLOW\"},"
	"{\"names\":[\"kill\"],\"action\":\"SCMP_ACT_KILL_PROCESS\"},"
	"{\"names\":[\"write\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":0,\"value\":1,"
	"\"op\":\"SCMP_CMP_EQ\"}]},"
	"{\"names\":[\"write\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":5,\"args\":[{\"index\":0,"
	"\"value\":2,\"op\":\"SCMP_CMP_EQ\"}]}]}";

/* Every op, two args on one index, a 64-bit value, ALLOW and ERRNO rules
 * of one syscall side by side; TRAP the default; three architectures. */
static const char ARGS[] = "{\"defaultAction\":\"SCMP_ACT_TRAP\",\"architectures\":"
	"[\"SCMP_ARCH_X86_64\",\"SCMP_ARCH_X86\",\"SCMP_ARCH_X32\"],\"syscalls\":["
	"{\"names\":[\"write\",\"exit_group\"],\"action\":\"SCMP_ACT_ALLOW\"},"
	"{\"names\":[\"openat\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":2,"
	"\"value\":3,\"valueTwo\":0,\"op\":\"SCMP_CMP_MASKED_EQ\"}]},"
	"{\"names\":[\"ioctl\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":1,"
	"\"value\":21505,\"op\":\"SCMP_CMP_EQ\"},{\"index\":0,\"value\":3,\"op\":\"SCMP_CMP_LT\"}]},"
	"{\"names\":[\"ioctl\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":25,\"args\":[{\"index\":1,"
	"\"value\":21505,\"op\":\"SCMP_CMP_NE\"}]},"
	"{\"names\":[\"lseek\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":2,"
	"\"value\":1,\"op\":\"SCMP_CMP_LE\"}]},"
	"{\"names\":[\"fcntl\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":1,"
	"\"value\":1,\"op\":\"SCMP_CMP_EQ\"},{\"index\":1,\"value\":2,\"op\":\"SCMP_CMP_EQ\"}]},"
	"{\"names\":[\"mmap\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":1,"
	"\"value\":4096,\"op\":\"SCMP_CMP_GE\"},{\"index\":2,\"value\":4,\"op\":\"SCMP_CMP_GT\"}]},"
	"{\"names\":[\"kill\"],\"action\":\"SCMP_ACT_LOG\",\"args\":[{\"index\":0,"
	"\"value\":4294967296,\"op\":\"SCMP_CMP_EQ\"}]},"
	"{\"names\":[\"madvise\"],\"action\":\"SCMP_ACT_KILL_PROCESS\",\"args\":[{\"index\":2,"
	"\"value\":8,\"op\":\"SCMP_CMP_EQ\"}]}]}";

/* Allowing defaults: ALLOW with denials (one conditional), LOG with an
 * ALLOW rule (equal to the gate's default) and a denial. */
static const char DEFAULT_ALLOW[] = "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":["
	"{\"names\":[\"mkdir\",\"mkdirat\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":30},"
	"{\"names\":[\"getpid\"],\"action\":\"SCMP_ACT_LOG\"},"
	"{\"names\":[\"unshare\"],\"action\":\"SCMP_ACT_KILL_PROCESS\",\"args\":[{\"index\":0,"
	"\"value\":268435456,\"valueTwo\":268435456,\"op\":\"SCMP_CMP_MASKED_EQ\"}]},"
	"{\"names\":[\"write\"],\"action\":\"SCMP_ACT_ERRNO\",\"args\":[{\"index\":0,"
	"\"value\":9,\"op\":\"SCMP_CMP_EQ\"}]}]}";
static const char DEFAULT_LOG[] = "{\"defaultAction\":\"SCMP_ACT_LOG\",\"syscalls\":["
	"{\"names\":[\"getpid\"],\"action\":\"SCMP_ACT_ALLOW\"},"
	"{\"names\":[\"rmdir\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":1}]}";

struct prof {
	const char *name;
	const char *json;   /* NULL: read from path */
	const char *path;
};

static const struct prof PROFILES[] = {
	{ "podman", NULL, PODMAN },
	{ "dockerish", DOCKERISH, NULL },
	{ "every_action", EVERY_ACTION, NULL },
	{ "args", ARGS, NULL },
	{ "default_allow", DEFAULT_ALLOW, NULL },
	{ "default_log", DEFAULT_LOG, NULL },
};

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	if (getdelim(&buf, &len, '\0', f) < 0) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* The profile's text, or NULL with the test skipped or failed. */
static char *text_of(const struct prof *p)
{
	char *t;

	if (p->json)
		return strdup(p->json);
	if (!(t = slurp(p->path)))
		test_skip_part(p->name, "%s: not readable (package golang-github-containers-common)",
			       p->path);
	return t;
}

/* Every "value" and "valueTwo" in the document, their neighbours, and
 * a few of every kind. */
static void values_of(struct json_object *o, uint64_t *v, size_t *n)
{
	if (json_object_is_type(o, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(o); i++)
			values_of(json_object_array_get_idx(o, i), v, n);
		return;
	}
	if (!json_object_is_type(o, json_type_object))
		return;
	json_object_object_foreach(o, key, val) {
		if ((!strcmp(key, "value") || !strcmp(key, "valueTwo")) &&
		    json_object_is_type(val, json_type_int) && *n + 3 <= MAX_VALS) {
			uint64_t x = json_object_get_uint64(val);

			v[(*n)++] = x;
			v[(*n)++] = x + 1;
			v[(*n)++] = x - 1;
		} else {
			values_of(val, v, n);
		}
	}
}

static uint32_t run(const struct sf_profile *p, const struct seccomp_data *d)
{
	return c2e_interpret(p->insns, p->len, d);
}

static bool passes(uint32_t ret)
{
	uint32_t a = ret & SECCOMP_RET_ACTION_FULL;

	return a == SECCOMP_RET_ALLOW || a == SECCOMP_RET_LOG;
}

/* Whether libseccomp names (arch, nr) other than write, socketcall, ipc:
 * a call the gate notifies unless a rule of the profile names it. */
static bool nameable(uint32_t scmp_arch, int nr)
{
	char *name = seccomp_syscall_resolve_num_arch(scmp_arch, nr);
	bool ok = name && strcmp(name, "write") && strcmp(name, "socketcall") &&
		  strcmp(name, "ipc");

	free(name);
	return ok;
}

struct tally { long inputs, notified, kept, allowed, other_arch; };

/* One profile under one cap set: both filters over every input. */
static void compare(const char *what, const char *json, const char *caps, const char *kernel,
		    struct tally *t)
{
	struct sf_profile_opts o = { .caps = caps, .kernel = kernel };
	struct sf_profile_opts go = { .caps = "none", .kernel = "1.0", .gate = 1 };
	struct sf_profile p, g;
	struct sf_profile_gate gate;
	struct sf_profile_error e;
	struct json_object *doc = json_tokener_parse(json);
	uint64_t vals[MAX_VALS + 8];
	size_t nv = 0, i, k;
	static const uint64_t extra[] = { 0, 1, 2, 0xffffffffULL, 0x100000000ULL, ~0ULL,
					  0x7E020000ULL, 0x10000000ULL };
	const int scale = test_is_emulated() ? 8 : 1;
	long bad = 0;

	values_of(doc, vals, &nv);
	json_object_put(doc);
	for (i = 0; i < sizeof(extra) / sizeof(extra[0]); i++)
		vals[nv++] = extra[i];
	if (!ASSERT_OK(sf_profile_compile(json, strlen(json), &o, &p, &e), e.msg))
		return;
	if (!ASSERT_OK(sf_profile_gate(json, strlen(json), &o, AGENT, &gate, &e), e.msg))
		goto out_p;
	if (!ASSERT_OK(sf_profile_compile(gate.json, strlen(gate.json), &go, &g, &e), e.msg))
		goto out_gate;
	struct sock_fprog fp = { .len = (unsigned short)p.len, .filter = p.insns };
	static const struct { uint32_t audit, scmp, base; } arches[] = {
		{ C2E_AUDIT_ARCH_X86_64, SCMP_ARCH_X86_64, 0 },
		{ C2E_AUDIT_ARCH_X86_64, SCMP_ARCH_X32, C2E_X32_SYSCALL_BIT },
		{ C2E_AUDIT_ARCH_I386, SCMP_ARCH_X86, 0 },
	};
	/* The architectures the filters have: a call of another is the
	 * bad-arch kill in both, which no rule can name. */
	bool has[3] = { true, strstr(gate.json, "\"SCMP_ARCH_X32\""),
			strstr(gate.json, "\"SCMP_ARCH_X86\"") };

	for (size_t a = 0; a < 3; a++) {
		for (int n = a ? 0 : -1; n <= MAX_NR; n++) {
			struct seccomp_data d = { .arch = arches[a].audit,
						  .nr = n < 0 ? -1 : (int)(arches[a].base + (uint32_t)n) };
			uint32_t cret;
			/* Constant and named: the gate must notify, not keep. */
			bool strict = n >= 0 && has[a] &&
				      c2e_const_verdict(&fp, 1, d.arch, d.nr, &cret) == 1 &&
				      !passes(cret) && nameable(arches[a].scmp, d.nr);

			/* Argument vectors: one value in every argument, then
			 * values spread over the six at several strides. */
			for (k = 0; k < nv * 4; k += scale) {
				size_t stride = k / nv;

				for (int j = 0; j < 6; j++)
					d.args[j] = vals[(k % nv + stride * 3 * (size_t)j) % nv];
				uint32_t pv = run(&p, &d), gv = run(&g, &d);

				t->inputs++;
				if (!has[a]) {
					t->other_arch++;
					if (gv != (passes(pv) ? SECCOMP_RET_ALLOW : pv) && bad++ < 5)
						test_fail(__FILE__, __LINE__, "%s: arch %x nr %d of no "
							  "architecture of the filter: %x, the gate %x",
							  what, d.arch, d.nr, pv, gv);
				} else if (passes(pv)) {
					t->allowed++;
					if (gv != SECCOMP_RET_ALLOW && bad++ < 5)
						test_fail(__FILE__, __LINE__, "%s caps %s: arch %x nr %d "
							  "args %llx,%llx,%llx: the profile says %x, the "
							  "gate %x (not ALLOW)", what, caps, d.arch, d.nr,
							  (unsigned long long)d.args[0],
							  (unsigned long long)d.args[1],
							  (unsigned long long)d.args[2], pv, gv);
				} else if (gv == SECCOMP_RET_USER_NOTIF) {
					t->notified++;
				} else {
					t->kept++;
					if ((gv != pv || strict) && bad++ < 5)
						test_fail(__FILE__, __LINE__, "%s caps %s: arch %x nr %d "
							  "args %llx,%llx,%llx: the profile says %x, the "
							  "gate %x (%s)", what, caps, d.arch, d.nr,
							  (unsigned long long)d.args[0],
							  (unsigned long long)d.args[1],
							  (unsigned long long)d.args[2], pv, gv,
							  gv != pv ? "neither USER_NOTIF nor the profile's"
								   : "kept a denial it could notify");
				}
			}
		}
	}
	ASSERT_EQ(bad, 0, what);
	sf_profile_free(&g);
out_gate:
	sf_profile_gate_free(&gate);
out_p:
	sf_profile_free(&p);
}

TEST(profile_gate_passes_exactly_what_the_profile_allows_and_notifies_the_rest)
{
	static const char *const capsets[] = { "none", "CAP_SYS_ADMIN", "all" };
	size_t i, c;

	for (i = 0; i < sizeof(PROFILES) / sizeof(PROFILES[0]); i++) {
		char *json = text_of(&PROFILES[i]);
		struct tally t = { 0 };

		if (!json)
			continue;
		for (c = 0; c < 3; c++) {
			compare(PROFILES[i].name, json, capsets[c], "6.1", &t);
			if (!strcmp(PROFILES[i].name, "dockerish"))
				compare(PROFILES[i].name, json, capsets[c], "4.4", &t);
		}
		test_log("%s: %ld inputs: %ld allowed, %ld notified, %ld denied in the kernel "
			 "(%ld of another architecture)\n", PROFILES[i].name, t.inputs, t.allowed,
			 t.notified, t.kept, t.other_arch);
		ASSERT_TRUE(t.allowed > 0 && t.notified > 0, PROFILES[i].name);
		free(json);
	}
}

/* The clone3 case: without CAP_SYS_ADMIN, clone3 is notified (the
 * daemon answers ENOSYS, as the profile says) and clone without
 * namespace flags passes in the kernel; with it, both pass. */
TEST(profile_gate_keeps_dockers_clone_and_clone3_rules)
{
	struct sf_profile_opts none = { .caps = "none", .kernel = "6.1" };
	struct sf_profile_opts admin = { .caps = "CAP_SYS_ADMIN", .kernel = "6.1" };
	struct sf_profile_opts go = { .caps = "none", .kernel = "1.0", .gate = 1 };
	struct sf_profile_gate gate;
	struct sf_profile_error e;
	struct sf_profile g;
	struct seccomp_data d = { .arch = C2E_AUDIT_ARCH_X86_64 };

	if (!ASSERT_OK(sf_profile_gate(DOCKERISH, strlen(DOCKERISH), &none, AGENT, &gate, &e),
		       e.msg))
		return;
	ASSERT_TRUE(gate.n_warnings >= 1 && strstr(gate.warnings[0], "caps were judged for "
						    "caps none"), "the caps warning");
	if (ASSERT_OK(sf_profile_compile(gate.json, strlen(gate.json), &go, &g, &e), e.msg)) {
		d.nr = 435; /* clone3 */
		ASSERT_EQ(c2e_interpret(g.insns, g.len, &d), SECCOMP_RET_USER_NOTIF, "clone3");
		d.nr = 56; /* clone */
		d.args[0] = 0x3d0f00; /* glibc's pthread_create flags */
		ASSERT_EQ(c2e_interpret(g.insns, g.len, &d), SECCOMP_RET_ALLOW, "clone, a thread");
		d.args[0] = 0x20000000; /* CLONE_NEWCGROUP */
		ASSERT_EQ(c2e_interpret(g.insns, g.len, &d), SECCOMP_RET_ERRNO | 1,
			  "clone into a namespace: the default, kept (no rule names it)");
		sf_profile_free(&g);
	}
	sf_profile_gate_free(&gate);
	if (!ASSERT_OK(sf_profile_gate(DOCKERISH, strlen(DOCKERISH), &admin, AGENT, &gate, &e),
		       e.msg))
		return;
	if (ASSERT_OK(sf_profile_compile(gate.json, strlen(gate.json), &go, &g, &e), e.msg)) {
		d.nr = 435;
		ASSERT_EQ(c2e_interpret(g.insns, g.len, &d), SECCOMP_RET_ALLOW, "clone3, admin");
		sf_profile_free(&g);
	}
	sf_profile_gate_free(&gate);
}

static bool in(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (!strcmp(*list, s))
			return true;
	return false;
}

/* What runc and crun read: runtime-spec's fields, and nothing that runc
 * refuses (InitSeccomp: a NOTIFY default, NOTIFY on write) or that
 * libseccomp refuses (a rule equal to the default: -EACCES). */
static void check_form(const char *what, const char *text, const char *agent)
{
	static const char *const top[] = { "defaultAction", "defaultErrnoRet", "architectures",
		"flags", "listenerPath", "listenerMetadata", "syscalls", NULL };
	static const char *const call[] = { "names", "action", "errnoRet", "args", NULL };
	static const char *const arg[] = { "index", "value", "valueTwo", "op", NULL };
	struct json_object *doc = json_tokener_parse(text), *v, *calls;
	const char *dflt;

	if (!ASSERT_OK_PTR(doc, what))
		return;
	json_object_object_foreach(doc, key, val) {
		(void)val;
		ASSERT_TRUE(in(top, key), key);
	}
	ASSERT_TRUE(json_object_object_get_ex(doc, "defaultAction", &v), "defaultAction");
	dflt = json_object_get_string(v);
	ASSERT_TRUE(strcmp(dflt, "SCMP_ACT_NOTIFY") != 0, "runc: no NOTIFY default");
	ASSERT_TRUE(json_object_object_get_ex(doc, "listenerPath", &v), "listenerPath");
	ASSERT_STREQ(json_object_get_string(v), agent, "listenerPath");
	ASSERT_TRUE(json_object_object_get_ex(doc, "listenerMetadata", &v), "listenerMetadata");
	ASSERT_STREQ(json_object_get_string(v), "sfilter-gate", "listenerMetadata");
	if (!ASSERT_TRUE(json_object_object_get_ex(doc, "syscalls", &calls), "syscalls"))
		goto out;
	for (size_t i = 0; i < json_object_array_length(calls); i++) {
		struct json_object *c = json_object_array_get_idx(calls, i), *names, *act, *args;
		const char *a;

		json_object_object_foreach(c, ckey, cval) {
			(void)cval;
			ASSERT_TRUE(in(call, ckey), ckey);
		}
		ASSERT_TRUE(json_object_object_get_ex(c, "names", &names), "names");
		ASSERT_TRUE(json_object_object_get_ex(c, "action", &act), "action");
		a = json_object_get_string(act);
		ASSERT_TRUE(!strncmp(a, "SCMP_ACT_", 9), a);
		if (!json_object_object_get_ex(c, "errnoRet", &v))
			ASSERT_TRUE(strcmp(a, dflt) != 0, "a rule equal to the default");
		for (size_t j = 0; j < json_object_array_length(names); j++)
			if (!strcmp(a, "SCMP_ACT_NOTIFY"))
				ASSERT_TRUE(strcmp(json_object_get_string(
					json_object_array_get_idx(names, j)), "write") != 0,
					"runc: no NOTIFY on write");
		for (size_t j = 0; json_object_object_get_ex(c, "args", &args) &&
				   j < json_object_array_length(args); j++) {
			json_object_object_foreach(json_object_array_get_idx(args, j), akey, aval) {
				(void)aval;
				ASSERT_TRUE(in(arg, akey), akey);
			}
		}
	}
out:
	json_object_put(doc);
}

TEST(profile_gate_is_an_oci_seccomp_object_that_runc_and_crun_take)
{
	struct sf_profile_opts o = { .caps = "none", .kernel = "6.1" };
	struct sf_profile_gate gate;
	struct sf_profile_error e;
	size_t i;

	for (i = 0; i < sizeof(PROFILES) / sizeof(PROFILES[0]); i++) {
		char *json = text_of(&PROFILES[i]);

		if (!json)
			continue;
		if (ASSERT_OK(sf_profile_gate(json, strlen(json), &o, AGENT, &gate, &e), e.msg)) {
			check_form(PROFILES[i].name, gate.json, AGENT);
			ASSERT_TRUE(gate.len > 0 && gate.len <= C2E_MAX_INSNS, "its filter's length");
			sf_profile_gate_free(&gate);
		}
		free(json);
	}
	/* A denial of write stays in the kernel, and the warning says so. */
	if (ASSERT_OK(sf_profile_gate(EVERY_ACTION, strlen(EVERY_ACTION), &o, AGENT, &gate, &e),
		      e.msg)) {
		ASSERT_TRUE(gate.n_warnings == 2 && strstr(gate.warnings[1], "write: its denials "
							    "stay in the kernel"), "write's warning");
		ASSERT_TRUE(strstr(gate.json, "\"SECCOMP_FILTER_FLAG_LOG\"") != NULL, "flags kept");
		sf_profile_gate_free(&gate);
	}
	/* A profile in error is refused by its JSON path, as compile does. */
	const char *bad = "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":"
			  "[\"read\"],\"action\":\"SCMP_ACT_NOPE\"}]}";

	ASSERT_EQ(sf_profile_gate(bad, strlen(bad), &o, AGENT, &gate, &e), -EINVAL, "bad action");
	ASSERT_STREQ(e.path, "syscalls[0].action", "its path");
	ASSERT_TRUE(gate.json == NULL, "nothing written");
}

TEST(sfctl_compile_gate_writes_the_gate_for_the_agent_socket_of_sfilter_socket)
{
	char sfctl[PATH_MAX], dir[] = "/tmp/sf-gate-XXXXXX", in[PATH_MAX], outp[PATH_MAX];
	char agent[PATH_MAX], out[8192], *text;
	int st;

	if (!sfd_need_bin("sfctl", "SF_SFCTL", sfctl, sizeof(sfctl)))
		return;
	if (!ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp"))
		return;
	snprintf(in, sizeof(in), "%s/p.json", dir);
	snprintf(outp, sizeof(outp), "%s/g.json", dir);
	FILE *f = fopen(in, "w");

	if (!ASSERT_OK_PTR(f, in))
		return;
	fputs(DOCKERISH, f);
	fclose(f);
	setenv(SF_PROTO_SOCKET_ENV, "/run/sf-gate-test/d.sock", 1);
	const char *argv[] = { sfctl, "compile", "--profile", in, "--gate", "-o", outp, NULL };
	st = sfd_run(argv, false, 60, out, sizeof(out));
	unsetenv(SF_PROTO_SOCKET_ENV);
	ASSERT_EQ(st, 0, out);
	ASSERT_TRUE(strstr(out, "warning") && strstr(out, "caps none"), "the caps warning");
	ASSERT_OK(sf_proto_agent_path("/run/sf-gate-test/d.sock", agent, sizeof(agent)),
		  "agent path");
	if ((text = slurp(outp))) {
		check_form("sfctl's", text, agent);
		free(text);
	} else {
		ASSERT_TRUE(false, "sfctl wrote no gate");
	}
	/* A profile in error: exit 2 and its JSON path. */
	f = fopen(in, "w");
	if (f) {
		fputs("{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"syscalls\":[{\"names\":[\"read\"],"
		      "\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":9,\"value\":1,"
		      "\"op\":\"SCMP_CMP_EQ\"}]}]}", f);
		fclose(f);
	}
	st = sfd_run(argv, false, 60, out, sizeof(out));
	ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 2, "exit 2");
	ASSERT_TRUE(strstr(out, "syscalls[0].args[0].index") != NULL, out);
	unlink(in);
	unlink(outp);
	rmdir(dir);
}
