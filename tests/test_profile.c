// SPDX-License-Identifier: GPL-2.0-only
/*
 * Container seccomp profiles compiled by libsfprofile (loader/profile):
 * Podman's default profile (/usr/share/containers/seccomp.json) gives, for
 * every syscall number 0-500 of x86_64, i386 and x32, with arguments taken
 * from the profile's conditions and their neighbours, the verdict that the
 * profile's rules say: an evaluator written here, from the JSON, the
 * runtime-spec and moby's filtering, without the compiler's code; the
 * filter runs in classic2ebpf's interpreter and, once, through
 * `classic2ebpf run --inputs` (the kernel's BPF_PROG_TEST_RUN of the
 * translation). Small profiles show the fields one by one, the filter is
 * seccomp_export_bpf()'s own bytes, and each error names its JSON path.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "daemon.h"
#include "profile.h"
#include "c2e.h"
#include "profeval.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <json-c/json.h>
#include <seccomp.h>

#define PODMAN "/usr/share/containers/seccomp.json"

/* ---- helpers ----------------------------------------------------------------- */

static struct json_object *load_json(const char *path)
{
	struct json_object *o = json_object_from_file(path);

	if (!o)
		test_skip("%s: not readable (package golang-github-containers-common)", path);
	return o;
}


/* Every (arch, nr 0-500, args) of the profile, interpreted; the number
 * of inputs checked, or -1 after a failure. */
static long check_verdicts(struct json_object *prof, const struct sf_profile *p,
			   uint64_t caps, const char *what)
{
	static uint64_t v[MAX_VECS][6];
	long checked = 0;
	size_t a, i, n;
	int nr;

	for (a = 0; a < 3; a++)
		for (nr = 0; nr <= 500; nr++) {
			uint32_t num = (uint32_t)nr | pe_arches[a].nr_bit;
			char *name = seccomp_syscall_resolve_num_arch(pe_arches[a].scmp, (int)num);

			/* libseccomp compares the low 32 bits on i386 and x32. */
			n = pe_vectors(prof, name, v, a != 0);
			for (i = 0; i < n; i++) {
				struct seccomp_data d = { .nr = (int)num, .arch = pe_arches[a].audit };
				bool overlap;
				uint32_t want = pe_expected(prof, name, v[i], caps, &overlap), got;
				char m[160];

				memcpy(d.args, v[i], sizeof(d.args));
				got = c2e_interpret(p->insns, p->len, &d);
				snprintf(m, sizeof(m), "%s: %s nr %d (%s) args %llx,%llx,%llx", what,
					 pe_arches[a].name, nr, name ? name : "-",
					 (unsigned long long)d.args[0], (unsigned long long)d.args[1],
					 (unsigned long long)d.args[2]);
				if (!ASSERT_FALSE(overlap, m) || !ASSERT_EQ(got, want, m)) {
					free(name);
					return -1;
				}
				checked++;
			}
			free(name);
		}
	return checked;
}

static int compile_text(const char *json, const char *caps, const char *kernel,
			struct sf_profile *p, struct sf_profile_error *e)
{
	struct sf_profile_opts o = { .caps = caps ? caps : "none", .kernel = kernel };

	return sf_profile_compile(json, strlen(json), &o, p, e);
}

/* ---- tests --------------------------------------------------------------------- */

TEST(podman_default_profile_gives_the_verdicts_its_rules_say_on_x86_64_i386_and_x32)
{
	static const char *const capsets[] = { "none", "all" };
	struct json_object *prof = load_json(PODMAN);
	size_t c;

	if (!prof)
		return;
	for (c = 0; c < 2; c++) {
		struct sf_profile_opts o = { .caps = capsets[c] };
		struct sf_profile p;
		struct sf_profile_error e;
		uint64_t caps;
		char what[64];
		long n;

		snprintf(what, sizeof(what), "caps %s", capsets[c]);
		if (!ASSERT_OK(sf_profile_compile_file(PODMAN, &o, &p, &e), e.msg))
			break;
		sf_profile_parse_caps(capsets[c], &caps);
		{
			struct c2e_error ce = { 0 };

			ASSERT_OK(c2e_validate(p.insns, p.len, &ce), "seccomp(2) would take it");
		}
		ASSERT_EQ(p.default_action, SECCOMP_RET_ERRNO | 38, "defaultErrnoRet ENOSYS");
		ASSERT_TRUE(p.actions & SF_PROFILE_ACT_ERRNO, "ERRNO rules seen");
		n = check_verdicts(prof, &p, caps, what);
		test_log("%s: %zu instructions, %u syscalls with a rule (%u ERRNO), "
			 "%ld inputs checked\n", what, p.len, p.n_rules, p.n_gap_rules, n);
		ASSERT_GE(n, 3 * 501, "inputs");
		sf_profile_free(&p);
	}
	json_object_put(prof);
}

/* The filter through the CLI: translated, loaded, BPF_PROG_TEST_RUN. */
TEST(podman_default_profile_runs_through_classic2ebpf_run_inputs)
{
	struct json_object *prof = load_json(PODMAN);
	struct sf_profile_opts o = { .caps = "none" };
	char cli[PATH_MAX], bpf[] = "/tmp/sftest-prof-XXXXXX", tsv[64], *out, *line, *save;
	const char *argv[8];
	struct sf_profile p;
	struct sf_profile_error e;
	uint64_t zero[6] = { 0 };
	FILE *f;
	int nr, st, fd;

	if (!prof)
		return;
	if (!sfd_find_bin("classic2ebpf", NULL, cli, sizeof(cli))) {
		test_skip("no classic2ebpf beside the runner");
		goto out;
	}
	if (!ASSERT_OK(sf_profile_compile_file(PODMAN, &o, &p, &e), e.msg))
		goto out;
	fd = mkstemp(bpf);
	close(fd);
	snprintf(tsv, sizeof(tsv), "%s.tsv", bpf);
	ASSERT_OK(c2e_save_raw(bpf, p.insns, p.len), "save");
	f = fopen(tsv, "w");
	for (nr = 0; f && nr <= 500; nr++)
		fprintf(f, "%x %x\n", nr, C2E_AUDIT_ARCH_X86_64);
	if (f)
		fclose(f);
	argv[0] = cli; argv[1] = "run"; argv[2] = bpf; argv[3] = "--inputs";
	argv[4] = tsv; argv[5] = NULL;
	out = calloc(1, 1 << 16);
	st = sfd_run(argv, true, 120, out, 1 << 16);
	if (ASSERT_EQ(st, 0, "classic2ebpf run --inputs")) {
		for (nr = 0, line = strtok_r(out, "\n", &save); line && nr <= 500;
		     nr++, line = strtok_r(NULL, "\n", &save)) {
			char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr), m[64];
			bool overlap;

			snprintf(m, sizeof(m), "x86_64 nr %d (%s): %s", nr, name ? name : "-", line);
			if (!ASSERT_EQ(strtoul(line, NULL, 16),
				       pe_expected(prof, name, zero, 0, &overlap), m)) {
				free(name);
				break;
			}
			free(name);
		}
		ASSERT_EQ(nr, 501, "one output line per input");
	} else {
		test_log("%s\n", out);
	}
	free(out);
	unlink(bpf);
	unlink(tsv);
	sf_profile_free(&p);
out:
	json_object_put(prof);
}

/* The bytes are seccomp_export_bpf()'s for the same rules, built here. */
TEST(a_profile_compiles_to_exactly_the_bytes_seccomp_export_bpf_writes)
{
	const char *json = "{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"defaultErrnoRet\":38,"
		"\"architectures\":[\"SCMP_ARCH_X86\"],\"syscalls\":["
		"{\"names\":[\"getpid\",\"read\"],\"action\":\"SCMP_ACT_ALLOW\"},"
		"{\"names\":[\"socket\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":["
		"{\"index\":0,\"value\":1,\"op\":\"SCMP_CMP_EQ\"},"
		"{\"index\":1,\"value\":4,\"valueTwo\":0,\"op\":\"SCMP_CMP_MASKED_EQ\"}]},"
		"{\"names\":[\"kill\"],\"action\":\"SCMP_ACT_KILL_PROCESS\"}]}";
	struct scmp_arg_cmp conds[] = { SCMP_A0(SCMP_CMP_EQ, 1),
					SCMP_A1(SCMP_CMP_MASKED_EQ, 4, 0) };
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(38));
	struct sf_profile p;
	struct sf_profile_error e;
	struct stat st;
	char *want;
	int fd = memfd_create("want", 0);

	seccomp_arch_add(ctx, SCMP_ARCH_X86);
	seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, SCMP_SYS(getpid), 0, NULL);
	seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, SCMP_SYS(read), 0, NULL);
	seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 2, conds);
	seccomp_rule_add_array(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(kill), 0, NULL);
	ASSERT_OK(seccomp_export_bpf(ctx, fd), "export");
	seccomp_release(ctx);
	fstat(fd, &st);
	want = malloc(st.st_size);
	ASSERT_EQ(pread(fd, want, st.st_size, 0), st.st_size, "read back");
	close(fd);
	if (ASSERT_OK(compile_text(json, NULL, NULL, &p, &e), e.msg)) {
		ASSERT_EQ(p.len * 8, st.st_size, "length");
		ASSERT_TRUE(p.len * 8 == (size_t)st.st_size &&
			    !memcmp(p.insns, want, st.st_size), "the same bytes");
		ASSERT_EQ(p.n_rules, 4, "four syscalls with a rule");
		ASSERT_EQ(p.actions, SF_PROFILE_ACT_ERRNO | SF_PROFILE_ACT_ALLOW |
			  SF_PROFILE_ACT_KILL_PROCESS, "actions");
		sf_profile_free(&p);
	}
	free(want);
}
