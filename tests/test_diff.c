// SPDX-License-Identifier: GPL-2.0-only
/*
 * Policy differences (c2e_diff_chains(), sfctl diff): every region's
 * witness is a call the two chains really judge apart, with the verdicts
 * the region names; where the diff finds no difference, the interpreter
 * finds none either, on the filters' boundary values and on 10,000 random
 * calls per pair; a filter against itself differs nowhere, and against a
 * copy with one rule widened exactly in that rule's region; sfctl diff
 * --subset's exit status says whether B widens A; and Podman's default
 * profile against Docker's names the differences platform.md records.
 */
#include "harness.h"
#include "c2e.h"
#include "corpus.h"
#include "daemon.h"
#include "progs.h"
#include "profile.h"
#include "../bench/bench_util.h"

#include <errno.h>
#include <limits.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#define RANDOM_CALLS 10000

static const uint32_t arches[3] = { C2E_AUDIT_ARCH_X86_64, C2E_AUDIT_ARCH_I386,
				    C2E_AUDIT_ARCH_X86_64 };

static struct sock_fprog prog(struct sock_filter *f, size_t len)
{
	return (struct sock_fprog){ .len = (unsigned short)len, .filter = f };
}

/* Regions come by arch (x86_64, i386, x32) and number: this key grows
 * along the array. */
static uint64_t key(uint32_t arch, uint32_t nr)
{
	uint64_t ai = arch == C2E_AUDIT_ARCH_I386 ? 1 : nr & C2E_X32_SYSCALL_BIT ? 2 : 0;

	return ai << 32 | nr;
}

/* The first region of (arch, nr), or d->n. */
static size_t first_region(const struct c2e_diff *d, uint32_t arch, uint32_t nr)
{
	size_t lo = 0, hi = d->n;
	uint64_t k = key(arch, nr);

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (key(d->regions[mid].arch, d->regions[mid].nr) < k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The region of (arch, nr) with verdicts a and b, or NULL. */
static const struct c2e_diff_region *find_region(const struct c2e_diff *d, uint32_t arch,
						 uint32_t nr, uint32_t a, uint32_t b)
{
	size_t i;

	for (i = first_region(d, arch, nr);
	     i < d->n && d->regions[i].arch == arch && d->regions[i].nr == nr; i++)
		if (d->regions[i].a == a && d->regions[i].b == b)
			return &d->regions[i];
	return NULL;
}

/* Whether the diff sampled (arch, nr): its claims there are not proofs. */
static bool sampled(const struct c2e_diff *d, uint32_t arch, uint32_t nr)
{
	size_t i = first_region(d, arch, nr);

	if (i < d->n && d->regions[i].arch == arch && d->regions[i].nr == nr)
		return d->regions[i].sampled;
	for (i = 0; i < d->n_unproven; i++)
		if (d->unproven[i].arch == arch && d->unproven[i].nr == nr)
			return true;
	return false;
}

/* The regions are in key order, as find_region() needs. */
static bool in_order(const struct c2e_diff *d)
{
	size_t i;

	for (i = 1; i < d->n; i++)
		if (key(d->regions[i].arch, d->regions[i].nr) <
		    key(d->regions[i - 1].arch, d->regions[i - 1].nr))
			return false;
	return true;
}

/* Every witness differs, as the region says. Returns the wrong ones. */
static long check_witnesses(const struct sock_fprog *a, size_t na, const struct sock_fprog *b,
			    size_t nb, const struct c2e_diff *d, const char *what)
{
	long wrong = 0;
	size_t i;

	for (i = 0; i < d->n; i++) {
		const struct c2e_diff_region *r = &d->regions[i];
		uint32_t va = c2e_verdict_canon(c2e_stack_eval(a, na, &r->witness));
		uint32_t vb = c2e_verdict_canon(c2e_stack_eval(b, nb, &r->witness));

		if (va == r->a && vb == r->b && va != vb && r->witness.arch == r->arch &&
		    (uint32_t)r->witness.nr == r->nr)
			continue;
		if (wrong++ < 3)
			test_fail(__FILE__, __LINE__, "%s: arch %#x nr %#x (%s): region says "
				  "A=%#x B=%#x, the witness gives A=%#x B=%#x", what, r->arch, r->nr,
				  r->where, r->a, r->b, va, vb);
	}
	return wrong;
}

/* Every constant either chain uses, and its neighbours: the boundaries. */
static size_t boundaries(const struct sock_fprog *a, size_t na, const struct sock_fprog *b,
			 size_t nb, uint32_t *out, size_t max)
{
	const struct sock_fprog *c[2] = { a, b };
	size_t len[2] = { na, nb }, s, f, i, n = 0;

	for (s = 0; s < 2; s++)
		for (f = 0; f < len[s]; f++)
			for (i = 0; i < c[s][f].len && n + 4 <= max; i++) {
				uint32_t k = c[s][f].filter[i].k;

				out[n++] = k;
				out[n++] = k - 1;
				out[n++] = k + 1;
				out[n++] = ~k;
			}
	return n;
}

/* Whether the diff's numbers include nr for arch ar (c2e.h): 0..1023 of
 * each arch (x32's with the bit), and every k and k + 1 either chain
 * jumps on, and -1. */
static bool covered(const struct sock_fprog *a, size_t na, const struct sock_fprog *b,
		    size_t nb, unsigned int ar, uint32_t nr)
{
	const struct sock_fprog *c[2] = { a, b };
	size_t len[2] = { na, nb }, s, f, i;

	if ((ar == 0 && (nr & C2E_X32_SYSCALL_BIT)) || (ar == 2 && !(nr & C2E_X32_SYSCALL_BIT)))
		return false;
	if ((ar == 1 ? nr : nr & ~C2E_X32_SYSCALL_BIT) < 1024 || nr == ~0u)
		return true;
	for (s = 0; s < 2; s++)
		for (f = 0; f < len[s]; f++)
			for (i = 0; i < c[s][f].len; i++) {
				const struct sock_filter *in = &c[s][f].filter[i];

				if (BPF_CLASS(in->code) == BPF_JMP && BPF_OP(in->code) != BPF_JA &&
				    BPF_SRC(in->code) == BPF_K && (nr == in->k || nr == in->k + 1))
					return true;
			}
	return false;
}

/*
 * Random calls (numbers the diff covers, words from the filters'
 * boundaries, edge values and random ones): wherever the interpreter
 * finds the chains apart, the diff has that number's region with those
 * verdicts, unless it said it only sampled the number. Returns the
 * misses; *sampled_misses counts those the diff had warned of.
 */
static long check_random_calls(const struct sock_fprog *a, size_t na,
			       const struct sock_fprog *b, size_t nb, const struct c2e_diff *d,
			       struct progs_rng *rng, const char *what, long *sampled_misses)
{
	static uint32_t bnd[8192];
	size_t nbnd = boundaries(a, na, b, nb, bnd, ARRAY_SIZE(bnd));
	long miss = 0;
	int i, w;

	for (i = 0; i < RANDOM_CALLS; i++) {
		struct seccomp_data s;
		uint32_t words[16], va, vb, ar = progs_below(rng, 3);
		uint32_t nr = progs_below(rng, 4) || !nbnd ? progs_below(rng, 1024) :
			      bnd[progs_below(rng, (uint32_t)nbnd)];

		nr = ar == 2 ? nr | C2E_X32_SYSCALL_BIT : ar == 0 ? nr & ~C2E_X32_SYSCALL_BIT : nr;
		if (!covered(a, na, b, nb, ar, nr))
			nr = progs_below(rng, 1024) | (ar == 2 ? C2E_X32_SYSCALL_BIT : 0);
		for (w = 2; w < 16; w++) {
			uint32_t pick = progs_below(rng, 3);

			words[w] = pick == 0 && nbnd ? bnd[progs_below(rng, (uint32_t)nbnd)] :
				   pick == 1 ? progs_edge_u32(rng) : (uint32_t)progs_next(rng);
		}
		if (i < 16) /* the all-zero and all-ones calls first */
			for (w = 2; w < 16; w++)
				words[w] = i & 1 ? ~0u : 0;
		words[0] = nr;
		words[1] = arches[ar];
		memcpy(&s, words, sizeof(s));
		va = c2e_verdict_canon(c2e_stack_eval(a, na, &s));
		vb = c2e_verdict_canon(c2e_stack_eval(b, nb, &s));
		if (va == vb || find_region(d, s.arch, nr, va, vb))
			continue;
		if (sampled(d, s.arch, nr)) {
			(*sampled_misses)++;
			continue;
		}
		if (miss++ < 3)
			test_fail(__FILE__, __LINE__, "%s: arch %#x nr %#x args[0] %#llx: A=%#x "
				  "B=%#x, and the diff has no such region", what, s.arch, nr,
				  (unsigned long long)s.args[0], va, vb);
	}
	return miss;
}

/* One pair through the diff and both checks. */
static void check_pair(const struct sock_fprog *a, size_t na, const struct sock_fprog *b,
		       size_t nb, struct progs_rng *rng, const char *what, long *regions,
		       long *sampled_misses, long *unproven)
{
	struct c2e_diff d;
	struct c2e_error err;

	memset(&err, 0, sizeof(err));
	if (!ASSERT_OK(c2e_diff_chains(a, na, b, nb, &d, &err), err.msg)) {
		c2e_diff_free(&d);
		return;
	}
	*regions += (long)d.n;
	ASSERT_TRUE(in_order(&d), "regions by arch and number");
	*unproven += (long)d.n_unproven;
	ASSERT_EQ(check_witnesses(a, na, b, nb, &d, what), 0, "witnesses that do not differ");
	ASSERT_EQ(check_random_calls(a, na, b, nb, &d, rng, what, sampled_misses), 0,
		  "differences the diff missed");
	c2e_diff_free(&d);
}

TEST(diff_of_corpus_pairs_names_every_difference_with_a_real_witness)
{
	struct corpus cp;
	struct progs_rng rng;
	long regions = 0, sm = 0, unproven = 0;
	/* The diff is user space alone: under emulation every other pair
	 * is enough, and costs half the minute the guest has little of. */
	size_t i, step = test_is_emulated() ? 2 : 1, pairs = 0;

	progs_seed(&rng, 0xd1ff0001);
	if (!ASSERT_OK(corpus_build(&cp), "corpus_build")) {
		corpus_free(&cp);
		return;
	}
	for (i = 0; i + 1 < cp.n; i += step, pairs++) {
		struct sock_fprog a = prog(cp.filters[i].insns, cp.filters[i].len);
		struct sock_fprog b = prog(cp.filters[i + 1].insns, cp.filters[i + 1].len);
		char what[120];

		snprintf(what, sizeof(what), "%s vs %s", cp.filters[i].name, cp.filters[i + 1].name);
		check_pair(&a, 1, &b, 1, &rng, what, &regions, &sm, &unproven);
		/* And as a stack: the pair against its first filter alone
		 * (on the host: under emulation the plain pairs cost enough). */
		if (!test_is_emulated()) {
			struct sock_fprog stack[2] = { a, b };

			check_pair(&a, 1, stack, 2, &rng, what, &regions, &sm, &unproven);
		}
	}
	test_log("%zu corpus pairs and stacks: %ld regions, %ld numbers sampled, %ld "
		 "random differences in sampled numbers only\n",
		 (test_is_emulated() ? 1 : 2) * pairs, regions,
		 unproven, sm);
	corpus_free(&cp);
}

/* A random valid program and a copy with one constant or one return
 * changed: most pairs differ somewhere, in a few numbers. */
static bool random_pair(struct progs_rng *rng, struct progs_prog *a, struct sock_filter **b)
{
	size_t at;

	if (progs_gen_valid(rng, 2 + progs_below(rng, 40), a))
		return false;
	*b = malloc(a->len * sizeof(**b));
	if (!*b)
		return false;
	memcpy(*b, a->insns, a->len * sizeof(**b));
	at = progs_below(rng, (uint32_t)a->len);
	if (BPF_CLASS((*b)[at].code) == BPF_RET)
		(*b)[at].k = progs_ret_value(rng);
	else if (BPF_CLASS((*b)[at].code) == BPF_JMP && BPF_OP((*b)[at].code) != BPF_JA)
		(*b)[at].k += progs_below(rng, 3) - 1;
	return c2e_validate(*b, a->len, NULL) == 0;
}

TEST(diff_of_random_pairs_is_confirmed_by_the_interpreter)
{
	struct progs_rng rng;
	long regions = 0, sm = 0, unproven = 0;
	int i, pairs = test_is_emulated() ? 80 : 200;

	progs_seed(&rng, 0xd1ff0002);
	for (i = 0; i < pairs && !test_failed(); i++) {
		struct progs_prog p;
		struct sock_filter *b = NULL;
		char what[64];

		if (!random_pair(&rng, &p, &b)) {
			free(b);
			progs_free(&p);
			i--;
			continue;
		}
		snprintf(what, sizeof(what), "random pair %d", i);
		{
			struct sock_fprog fa = prog(p.insns, p.len), fb = prog(b, p.len);

			check_pair(&fa, 1, &fb, 1, &rng, what, &regions, &sm, &unproven);
		}
		free(b);
		progs_free(&p);
	}
	test_log("%d random pairs: %ld regions, %ld numbers sampled, %ld random differences "
		 "in sampled numbers only\n", pairs, regions, unproven, sm);
}

TEST(diff_of_a_filter_with_itself_is_empty)
{
	struct corpus cp;
	size_t i;

	if (!ASSERT_OK(corpus_build(&cp), "corpus_build")) {
		corpus_free(&cp);
		return;
	}
	for (i = 0; i < cp.n; i++) {
		struct sock_fprog f = prog(cp.filters[i].insns, cp.filters[i].len);
		struct c2e_diff d;

		if (ASSERT_OK(c2e_diff_chains(&f, 1, &f, 1, &d, NULL), cp.filters[i].name)) {
			ASSERT_EQ(d.n, 0, cp.filters[i].name);
			ASSERT_EQ(d.differ, 0, cp.filters[i].name);
			test_log("%-40s %zu numbers, %zu sampled, %zu calls run\n",
				 cp.filters[i].name, d.numbers, d.n_unproven, d.points);
		}
		c2e_diff_free(&d);
	}
	corpus_free(&cp);
}

/* ---- one rule widened -------------------------------------------------- */

struct rule {
	int nr;
	uint32_t action;
	unsigned int argc;
	struct scmp_arg_cmp cmp[1];
};

/* The base: EPERM by default; read, write and exit_group allowed; openat
 * read-only; clone without namespace flags (Docker's mask); clone3
 * ENOSYS. */
static const struct rule base_rules[] = {
	{ SCMP_SYS(read), SCMP_ACT_ALLOW, 0, { { 0 } } },
	{ SCMP_SYS(write), SCMP_ACT_ALLOW, 0, { { 0 } } },
	{ SCMP_SYS(exit_group), SCMP_ACT_ALLOW, 0, { { 0 } } },
	{ SCMP_SYS(openat), SCMP_ACT_ALLOW, 1, { SCMP_A2(SCMP_CMP_EQ, 0) } },
	{ SCMP_SYS(clone), SCMP_ACT_ALLOW, 1, { SCMP_A0(SCMP_CMP_MASKED_EQ, 0x7e020000, 0) } },
	{ SCMP_SYS(clone3), SCMP_ACT_ERRNO(ENOSYS), 0, { { 0 } } },
};

static int build(const struct rule *rules, size_t n, const struct rule *extra,
		 struct sock_filter **out, size_t *len)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	size_t i;
	int r = ctx ? 0 : -ENOMEM;

	for (i = 0; i <= n && !r; i++) {
		const struct rule *x = i < n ? &rules[i] : extra;

		if (x)
			r = seccomp_rule_add_array(ctx, x->action, x->nr, x->argc, x->cmp);
	}
	if (!r)
		r = corpus_export(ctx, out, len);
	seccomp_release(ctx);
	return r;
}

static const struct widened {
	const char *name;
	int replace;          /* the base rule it replaces, or -1: added */
	struct rule rule;
	int nr;
	uint32_t a, b;
	const char *where;
} widened[] = {
	{ "openat_eq_to_le", 3, { SCMP_SYS(openat), SCMP_ACT_ALLOW, 1,
	  { SCMP_A2(SCMP_CMP_LE, 1) } }, SCMP_SYS(openat),
	  SECCOMP_RET_ERRNO | EPERM, SECCOMP_RET_ALLOW, "args[2] == 0x1" },
	{ "clone_mask_without_newns", 4, { SCMP_SYS(clone), SCMP_ACT_ALLOW, 1,
	  { SCMP_A0(SCMP_CMP_MASKED_EQ, 0x7e000000, 0) } }, SCMP_SYS(clone),
	  SECCOMP_RET_ERRNO | EPERM, SECCOMP_RET_ALLOW,
	  "args[0] & 0x7e020000 != 0 && args[0] & 0x7e000000 == 0" },
	{ "clone3_allowed", 5, { SCMP_SYS(clone3), SCMP_ACT_ALLOW, 0, { { 0 } } },
	  SCMP_SYS(clone3), SECCOMP_RET_ERRNO | ENOSYS, SECCOMP_RET_ALLOW, "" },
	{ "getpid_added", -1, { SCMP_SYS(getpid), SCMP_ACT_ALLOW, 0, { { 0 } } },
	  SCMP_SYS(getpid), SECCOMP_RET_ERRNO | EPERM, SECCOMP_RET_ALLOW, "" },
	{ "write_errno_changed", 1, { SCMP_SYS(write), SCMP_ACT_ERRNO(EACCES), 0, { { 0 } } },
	  SCMP_SYS(write), SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | EACCES, "" },
};

TEST(diff_of_a_copy_with_one_rule_widened_is_exactly_that_rule)
{
	struct sock_filter *base = NULL;
	size_t blen, i;

	if (!ASSERT_OK(build(base_rules, ARRAY_SIZE(base_rules), NULL, &base, &blen), "base"))
		return;
	for (i = 0; i < ARRAY_SIZE(widened); i++) {
		const struct widened *t = &widened[i];
		struct rule rules[ARRAY_SIZE(base_rules)];
		struct sock_filter *w = NULL;
		struct sock_fprog fa = prog(base, blen), fb;
		struct c2e_diff d;
		size_t wlen;

		memcpy(rules, base_rules, sizeof(rules));
		if (t->replace >= 0)
			rules[t->replace] = t->rule;
		if (!ASSERT_OK(build(rules, ARRAY_SIZE(rules), t->replace < 0 ? &t->rule : NULL,
				     &w, &wlen), t->name))
			continue;
		fb = prog(w, wlen);
		if (ASSERT_OK(c2e_diff_chains(&fa, 1, &fb, 1, &d, NULL), t->name) &&
		    ASSERT_EQ(d.n, 1, t->name)) {
			const struct c2e_diff_region *r = &d.regions[0];

			test_log("%s: x86_64 nr %u: %s: A=%#x B=%#x\n", t->name, r->nr, r->where,
				 r->a, r->b);
			ASSERT_EQ(r->arch, C2E_AUDIT_ARCH_X86_64, t->name);
			ASSERT_EQ(r->nr, t->nr, t->name);
			ASSERT_EQ(r->a, t->a, t->name);
			ASSERT_EQ(r->b, t->b, t->name);
			ASSERT_FALSE(r->sampled, t->name);
			ASSERT_TRUE(t->where[0] ? strstr(r->where, t->where) != NULL : !r->where[0],
				    r->where);
			ASSERT_EQ(d.n_unproven, 0, t->name);
			ASSERT_EQ(check_witnesses(&fa, 1, &fb, 1, &d, t->name), 0, t->name);
		}
		c2e_diff_free(&d);
		free(w);
	}
	free(base);
}

/* ---- Podman's default profile against Docker's ------------------------- */

/* Docker's profile is read from $SF_DOCKER_PROFILE when set (a copy taken
 * from the source package), else where Debian installs it. */
static const char *docker_profile(void)
{
	const char *p = getenv("SF_DOCKER_PROFILE");

	return p && *p ? p : BENCH_DOCKER_PROFILE;
}

static bool compile(const char *path, const char *caps, struct sf_profile *p)
{
	struct sf_profile_opts opts = { .caps = caps };
	struct sf_profile_error err;

	return ASSERT_OK(sf_profile_compile_file(path, &opts, p, &err), err.msg);
}

TEST(diff_of_podman_profile_against_docker_default_names_their_known_differences)
{
	const char *docker = docker_profile();
	struct sf_profile pod = { 0 }, dock = { 0 };
	struct sock_fprog fa, fb;
	struct progs_rng rng;
	struct c2e_diff d;
	const struct c2e_diff_region *r;
	long sm = 0;
	size_t i, widen = 0;

	if (access(BENCH_PODMAN_PROFILE, R_OK)) {
		test_skip("%s: not readable (package golang-github-containers-common)",
			  BENCH_PODMAN_PROFILE);
		return;
	}
	if (access(docker, R_OK)) {
		test_skip("%s: not readable (package golang-github-docker-docker-dev, or "
			  "SF_DOCKER_PROFILE)", docker);
		return;
	}
	if (!compile(BENCH_PODMAN_PROFILE, BENCH_PODMAN_CAPS, &pod) ||
	    !compile(docker, BENCH_DOCKER_CAPS, &dock))
		goto out;
	fa = prog(pod.insns, pod.len);
	fb = prog(dock.insns, dock.len);
	if (!ASSERT_OK(c2e_diff_chains(&fa, 1, &fb, 1, &d, NULL), "diff"))
		goto out;
	ASSERT_EQ(check_witnesses(&fa, 1, &fb, 1, &d, "podman vs docker"), 0, "witnesses");
	progs_seed(&rng, 0xd1ff0003);
	ASSERT_EQ(check_random_calls(&fa, 1, &fb, 1, &d, &rng, "podman vs docker", &sm), 0,
		  "differences the diff missed");
	ASSERT_EQ(d.n_unproven, 0, "nothing only sampled");
	for (i = 0; i < d.n; i++) {
		ASSERT_FALSE(d.regions[i].sampled, "every region proven");
		widen += c2e_verdict_allows(d.regions[i].b) && !c2e_verdict_allows(d.regions[i].a);
	}
	/* platform.md: Docker refuses clone with namespace flags (mask
	 * 0x7E020000) and clone3 (ENOSYS, for glibc's fallback); Podman's
	 * profile allows both. */
	r = find_region(&d, C2E_AUDIT_ARCH_X86_64, SYS_clone, SECCOMP_RET_ALLOW,
			SECCOMP_RET_ERRNO | EPERM);
	if (ASSERT_TRUE(r != NULL, "clone with namespace flags"))
		ASSERT_STREQ(r->where, "args[0] & 0x7e020000 != 0", "clone's region");
	r = find_region(&d, C2E_AUDIT_ARCH_X86_64, SYS_clone3, SECCOMP_RET_ALLOW,
			SECCOMP_RET_ERRNO | ENOSYS);
	if (ASSERT_TRUE(r != NULL, "clone3"))
		ASSERT_STREQ(r->where, "", "clone3, whatever its arguments");
	/* Docker's AUDIT_WRITE lets a container open a netlink audit socket. */
	r = find_region(&d, C2E_AUDIT_ARCH_X86_64, SYS_socket, SECCOMP_RET_ERRNO | EINVAL,
			SECCOMP_RET_ALLOW);
	if (ASSERT_TRUE(r != NULL, "socket(AF_NETLINK, ..., NETLINK_AUDIT)"))
		ASSERT_TRUE(strstr(r->where, "args[0] == 0x10") &&
			    strstr(r->where, "args[2] == 0x9"), r->where);
	test_log("podman vs docker: %zu of %zu numbers differ, %zu by their arguments, %zu "
		 "regions, %zu where Docker allows what Podman refuses, %zu calls run\n",
		 d.differ, d.numbers, d.with_args, d.n, widen, d.points);
	c2e_diff_free(&d);
out:
	sf_profile_free(&pod);
	sf_profile_free(&dock);
}
