// SPDX-License-Identifier: GPL-2.0-only
/*
 * Verdicts agree three ways: for every filter (and every stack of filters)
 * and every input,
 *   - the translated eBPF, loaded and run in the kernel (BPF_PROG_TEST_RUN),
 *     in both emissions: linear, and with C2E_EMIT_SEARCH (runs of jeq as
 *     a binary search, as the runtime's chains have them),
 *   - the reference interpreter (c2e_interpret / c2e_stack_eval), and
 *   - the real kernel seccomp, with the filters installed and a harmless
 *     system call really made (tests/lib/kseccomp.h)
 * reach the same verdict. eBPF and interpreter are compared on many inputs
 * (every syscall number of every arch, edge and random arguments); the real
 * kernel on the calls that may safely run. Where the kernel refuses an ABI
 * (int $0x80 from a 64-bit task, on some kernels) its calls are a skipped
 * part of the test, "NAME/i386-real-kernel", and are still compared eBPF
 * vs interpreter.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "c2e.h"
#include "corpus.h"
#include "kseccomp.h"
#include "progs.h"
#include "sockfilter.h"

#include <seccomp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define AUDIT_X86_64 C2E_AUDIT_ARCH_X86_64
#define AUDIT_I386   C2E_AUDIT_ARCH_I386
#define X32_BIT      C2E_X32_SYSCALL_BIT
#define NR_SWEEP     460  /* syscall numbers 0..NR_SWEEP per arch */

/* ---- filters and their lists -------------------------------------------- */

struct named {
	char name[64];
	struct sock_filter *insns;
	size_t len;
};

struct flist {
	struct named *f;
	size_t n;
};

static void flist_add(struct flist *l, const char *name,
		      struct sock_filter *insns, size_t len)
{
	struct named *f = realloc(l->f, (l->n + 1) * sizeof(*f));

	if (!f) {
		free(insns);
		return;
	}
	l->f = f;
	f = &l->f[l->n++];
	snprintf(f->name, sizeof(f->name), "%s", name);
	f->insns = insns;
	f->len = len;
}

static void flist_add_copy(struct flist *l, const char *name,
			   const struct sock_filter *insns, size_t len)
{
	struct sock_filter *copy = malloc(len * sizeof(*copy));

	if (!copy)
		return;
	memcpy(copy, insns, len * sizeof(*copy));
	flist_add(l, name, copy, len);
}

static void flist_free(struct flist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->f[i].insns);
	free(l->f);
	l->f = NULL;
	l->n = 0;
}

/* ---- inputs --------------------------------------------------------------- */

/* The 32-bit constants a filter compares with: inputs near them take the
 * branches that random inputs almost never do. */
struct consts {
	uint32_t v[256];
	size_t n;
};

static void consts_add(struct consts *c, uint32_t k)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->v[i] == k)
			return;
	if (c->n < ARRAY_SIZE(c->v))
		c->v[c->n++] = k;
}

static void consts_collect(struct consts *c, const struct sock_fprog *chain,
			   size_t n)
{
	size_t i, pc;

	for (i = 0; i < n; i++)
		for (pc = 0; pc < chain[i].len; pc++) {
			const struct sock_filter *f = &chain[i].filter[pc];

			if ((BPF_CLASS(f->code) == BPF_JMP && BPF_OP(f->code) != BPF_JA &&
			     BPF_SRC(f->code) == BPF_K) ||
			    f->code == (BPF_LD | BPF_IMM) || f->code == (BPF_LDX | BPF_IMM))
				consts_add(c, f->k);
		}
}

static uint64_t pick_arg(struct progs_rng *r, const struct consts *c)
{
	static const uint64_t edges[] = {
		0, 1, 0xffffffffULL, 0x100000000ULL, ~0ULL,
		0x7fffffffffffffffULL, 0x8000000000000000ULL,
		0xffffffff00000000ULL, 0x00000000fffffffeULL, 2,
	};
	uint32_t a, b;

	if (c->n && progs_below(r, 8) < 5) {
		a = c->v[progs_below(r, c->n)];
		b = c->v[progs_below(r, c->n)];
		switch (progs_below(r, 7)) {
		case 0:
			return a;
		case 1: /* libseccomp compares high word, then low word */
			return ((uint64_t)a << 32) | b;
		case 2:
			return (uint64_t)a << 32;
		case 3:
			return ((uint64_t)a << 32) | (uint32_t)(b + 1);
		case 4:
			return ((uint64_t)a << 32) | (uint32_t)(b - 1);
		case 5:
			return (uint64_t)(uint32_t)(a + (progs_below(r, 2) ? 1 : -1));
		default:
			return ((uint64_t)a << 32) | a;
		}
	}
	if (progs_below(r, 2))
		return edges[progs_below(r, ARRAY_SIZE(edges))];
	return progs_next(r);
}

static void random_data(struct progs_rng *r, const struct consts *c,
			struct seccomp_data *d, uint32_t nr, uint32_t arch)
{
	int i;

	d->nr = (int)nr;
	d->arch = arch;
	d->instruction_pointer = progs_below(r, 2) ? ksec_ip(KSEC_ABI_X86_64)
						    : progs_next(r);
	for (i = 0; i < 6; i++) {
		d->args[i] = pick_arg(r, c);
		if (arch == AUDIT_I386)
			d->args[i] = (uint32_t)d->args[i];
	}
}

/* Every syscall number of x86_64, i386 and x32, then extra random ones. */
static struct seccomp_data *sweep_inputs(struct progs_rng *r,
					 const struct consts *c, int per_nr,
					 int extra, size_t *n)
{
	static const uint32_t odd_arches[] = { 0, 0xc00000b7 /* aarch64 */,
					       0x40000028 /* arm */, 0xffffffff };
	size_t cap = 3 * (NR_SWEEP + 1) * per_nr + extra, at = 0;
	struct seccomp_data *d = calloc(cap ? cap : 1, sizeof(*d));
	uint32_t nr;
	int a, k;

	if (!d)
		return NULL;
	for (a = 0; a < 3; a++)
		for (nr = 0; nr <= NR_SWEEP; nr++)
			for (k = 0; k < per_nr; k++)
				random_data(r, c, &d[at++], a == 2 ? nr | X32_BIT : nr,
					    a == 1 ? AUDIT_I386 : AUDIT_X86_64);
	for (k = 0; k < extra; k++) {
		uint32_t arch, rnr;

		switch (progs_below(r, 4)) {
		case 0:
			arch = odd_arches[progs_below(r, ARRAY_SIZE(odd_arches))];
			break;
		case 1:
			arch = AUDIT_I386;
			break;
		default:
			arch = AUDIT_X86_64;
		}
		rnr = progs_below(r, 2) ? progs_edge_u32(r)
		      : (c->n ? c->v[progs_below(r, c->n)] : progs_below(r, 1024));
		random_data(r, c, &d[at++], rnr, arch);
	}
	*n = at;
	return d;
}

/* Every harmless call, each with variants arguments; verify() gives the
 * real kernel those it runs here. */
static struct ksec_call *harmless_calls(struct progs_rng *r,
					const struct consts *c, int variants,
					size_t *n)
{
	size_t nh, i, at = 0;
	const struct ksec_call *h = ksec_harmless(&nh);
	struct ksec_call *calls = calloc(nh * variants + 1, sizeof(*calls));
	int v, j;

	if (!calls)
		return NULL;
	for (i = 0; i < nh; i++) {
		for (v = 0; v < variants; v++) {
			calls[at] = h[i];
			for (j = 0; j < 6; j++)
				calls[at].args[j] = v ? pick_arg(r, c) : 0;
			at++;
		}
	}
	*n = at;
	return calls;
}

/* ---- the three-way check -------------------------------------------------- */

/*
 * Whether the real kernel may be given call c here. A call of an ABI the
 * kernel refuses makes a skipped part of the test ("i386-real-kernel"); a
 * baseline that went wrong otherwise fails it.
 */
static bool real_kernel_runs(const struct ksec_call *c)
{
	char why[256], part[32];

	snprintf(part, sizeof(part), "%s-real-kernel", ksec_abi_name(c->abi));
	return TEST_REQUIRE(ksec_runnable(c, why, sizeof(why)), part, why);
}

struct tally {
	const char *source;
	long filters, ebpf_inputs, kernel_calls, mismatches, skipped;
	long searched; /* of the filters, those C2E_EMIT_SEARCH rewrites */
	long kinds[KSEC_HUNG + 1];  /* real outcomes seen, by kind */
};

static void show_data(const struct seccomp_data *d)
{
	printf("      nr %d (0x%x) arch 0x%08x ip 0x%llx args 0x%llx 0x%llx 0x%llx 0x%llx 0x%llx 0x%llx\n",
	       d->nr, (uint32_t)d->nr, d->arch,
	       (unsigned long long)d->instruction_pointer,
	       (unsigned long long)d->args[0], (unsigned long long)d->args[1],
	       (unsigned long long)d->args[2], (unsigned long long)d->args[3],
	       (unsigned long long)d->args[4], (unsigned long long)d->args[5]);
}

static void show_chain(const struct sock_fprog *chain, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		printf("      filter %zu of %zu (%u insns)%s\n", i + 1, n,
		       chain[i].len, chain[i].len > 48 ? ", not listed" : ":");
		if (chain[i].len <= 48)
			c2e_disasm_classic(chain[i].filter, chain[i].len, stdout);
	}
	fflush(stdout);
}

static uint32_t reference(const struct sock_fprog *chain, size_t n,
			  const struct seccomp_data *d)
{
	/* A single filter's test frame returns its raw value; a chain's
	 * returns what the kernel acts on. */
	return n == 1 ? c2e_interpret(chain[0].filter, chain[0].len, d)
		      : c2e_stack_eval(chain, n, d);
}

static void mismatch(struct tally *t, const char *name,
		     const struct sock_fprog *chain, size_t n, const char *fmt,
		     ...) __attribute__((format(printf, 5, 6)));

static void mismatch(struct tally *t, const char *name,
		     const struct sock_fprog *chain, size_t n, const char *fmt,
		     ...)
{
	va_list ap;

	if (t->mismatches++ < 8) {
		printf("    MISMATCH [%s] %s: ", t->source, name);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		putchar('\n');
		if (t->mismatches <= 2)
			show_chain(chain, n);
	}
}

static int translate(const struct sock_fprog *chain, size_t n, unsigned int flags,
		     struct c2e_ebpf *prog)
{
	return n == 1 ? c2e_translate_flags(chain[0].filter, chain[0].len, flags, prog)
		      : c2e_translate_chain_flags(chain, n, flags, prog);
}

/*
 * prog, the eBPF of chain[0..n) in one emission (how: "linear", or
 * "searched": C2E_EMIT_SEARCH, which the runtime uses), vs the interpreter
 * on inputs[] and on the data of all_calls[]. False when it could not be
 * loaded (a mismatch is counted).
 */
static bool verify_ebpf(struct tally *t, const char *name, const struct sock_fprog *chain,
			size_t n, const struct c2e_ebpf *prog, const char *how,
			const struct seccomp_data *inputs, size_t ninputs,
			const struct ksec_call *all_calls, size_t nall)
{
	char log[4096], a[96], b[160];
	size_t i;
	int fd, err;

	fd = c2e_kernel_load(prog, log, sizeof(log));
	if (fd < 0) {
		size_t l = strlen(log);

		mismatch(t, name, chain, n, "the verifier refused %zu %s insns: %s; log tail: %s",
			 prog->len, how, strerror(-fd), l > 600 ? log + l - 600 : log);
		return false;
	}
	for (i = 0; i < ninputs + nall; i++) {
		struct seccomp_data call_data;
		const struct seccomp_data *d = &call_data;
		uint32_t got = 0, want;

		if (i < ninputs)
			d = &inputs[i];
		else
			ksec_call_data(&all_calls[i - ninputs], &call_data);
		want = reference(chain, n, d);
		err = c2e_kernel_run(fd, d, &got);
		t->ebpf_inputs++;
		if (err || got != want) {
			mismatch(t, name, chain, n, "%s eBPF %s, interpreter %s", how,
				 err ? strerror(-err) : c2e_verdict_str(got, a, sizeof(a)),
				 c2e_verdict_str(want, b, sizeof(b)));
			if (t->mismatches <= 8)
				show_data(d);
		}
	}
	close(fd);
	return true;
}

/* Both emissions of chain[0..n) vs the interpreter; the searched one only
 * where C2E_EMIT_SEARCH changes the code (it needs a run of jeq), since
 * the linear one's run covers it otherwise. */
static bool verify_emissions(struct tally *t, const char *name, const struct sock_fprog *chain,
			     size_t n, const struct seccomp_data *inputs, size_t ninputs,
			     const struct ksec_call *all_calls, size_t nall)
{
	struct c2e_ebpf lin = { 0 }, srch = { 0 };
	bool ok = false;
	int err;

	err = translate(chain, n, 0, &lin);
	if (!err)
		err = translate(chain, n, C2E_EMIT_SEARCH, &srch);
	if (err) {
		mismatch(t, name, chain, n, "translation failed: %s", strerror(-err));
		goto out;
	}
	ok = verify_ebpf(t, name, chain, n, &lin, "linear", inputs, ninputs, all_calls, nall);
	if (ok && (lin.len != srch.len ||
		   memcmp(lin.insns, srch.insns, lin.len * sizeof(*lin.insns)))) {
		t->searched++;
		ok = verify_ebpf(t, name, chain, n, &srch, "searched", inputs, ninputs,
				 all_calls, nall);
	}
out:
	c2e_ebpf_free(&lin);
	c2e_ebpf_free(&srch);
	return ok;
}

/*
 * Runs chain[0..n) three ways: eBPF, in both emissions, vs interpreter on
 * inputs[] and on the data of all calls[]; the real kernel on those of
 * calls[] it runs here vs the interpreter's verdict.
 */
static void verify(struct tally *t, const char *name,
		   const struct sock_fprog *chain, size_t n,
		   const struct seccomp_data *inputs, size_t ninputs,
		   const struct ksec_call *all_calls, size_t nall)
{
	struct ksec_outcome *seen = NULL;
	struct ksec_call *calls = NULL;
	size_t i, ncalls = 0;
	char a[96];
	int err;

	t->filters++;
	if (!verify_emissions(t, name, chain, n, inputs, ninputs, all_calls, nall))
		return;
	calls = calloc(nall + 1, sizeof(*calls));
	seen = calloc(nall + 1, sizeof(*seen));
	if (!ASSERT_TRUE(calls && seen, "calloc"))
		goto out;
	for (i = 0; i < nall; i++)
		if (real_kernel_runs(&all_calls[i]))
			calls[ncalls++] = all_calls[i];
	if (!ncalls)
		goto out;
	err = ksec_observe(chain, n, calls, ncalls, seen);
	if (err == -E2BIG || err == -ENOMEM) {
		/* A stack the real kernel cannot hold in order (a filter
		 * too long to wrap, or the chain over budget). */
		t->skipped++;
		goto out;
	}
	if (err) {
		mismatch(t, name, chain, n, "real seccomp could not be observed: %s",
			 strerror(-err));
		goto out;
	}
	for (i = 0; i < ncalls; i++) {
		struct ksec_outcome base, expected;
		struct seccomp_data d;
		uint32_t ret;

		ksec_call_data(&calls[i], &d);
		ret = c2e_stack_eval(chain, n, &d);
		if (!ASSERT_OK(ksec_baseline(&calls[i], &base), "baseline"))
			break;
		ksec_predict(ret, &calls[i], &base, &expected);
		t->kernel_calls++;
		if (seen[i].kind <= KSEC_HUNG)
			t->kinds[seen[i].kind]++;
		if (!ksec_matches(&seen[i], &expected)) {
			char c[200], o[200], e[200];

			mismatch(t, name, chain, n,
				 "real seccomp: %s; interpreter verdict %s predicts: %s (call %s)",
				 ksec_outcome_str(&seen[i], o, sizeof(o)),
				 c2e_verdict_str(ret, a, sizeof(a)),
				 ksec_outcome_str(&expected, e, sizeof(e)),
				 ksec_call_str(&calls[i], c, sizeof(c)));
		}
	}
out:
	free(calls);
	free(seen);
}

static void report(const struct tally *t, double t0)
{
	printf("    %-28s %5ld filters/stacks (%ld also searched), %8ld inputs eBPF vs interpreter, %6ld real seccomp calls, %ld skipped, %.1fs\n",
	       t->source, t->filters, t->searched, t->ebpf_inputs, t->kernel_calls,
	       t->skipped, test_now_s() - t0);
	printf("    %-28s real outcomes: %ld returned, %ld trapped, %ld killed, %ld hung\n",
	       "", t->kinds[KSEC_RETURNED], t->kinds[KSEC_TRAPPED],
	       t->kinds[KSEC_KILLED], t->kinds[KSEC_HUNG]);
	if (t->skipped)
		test_skip_part("real-kernel-stacks", "%ld stacks real seccomp cannot "
			       "hold in order (a filter too long to wrap, or over "
			       "MAX_INSNS_PER_PATH): compared eBPF vs interpreter only",
			       t->skipped);
}

/* A comparison that never saw a trap or a kill would prove little. */
static void assert_every_outcome_seen(const struct tally *t)
{
	ASSERT_GE(t->kinds[KSEC_RETURNED], 1, "real calls that returned");
	ASSERT_GE(t->kinds[KSEC_TRAPPED], 1, "real calls that trapped");
	ASSERT_GE(t->kinds[KSEC_KILLED], 1, "real calls that were killed");
}

static bool observer_ready(void)
{
	struct ksec_call getpid_call = { KSEC_ABI_X86_64, 39, { 0 } };
	struct ksec_outcome base;
	int err = ksec_baseline(&getpid_call, &base);

	if (err) {
		test_fail(__FILE__, __LINE__, "baseline of the harmless calls: %s",
			  strerror(-err));
		return false;
	}
	return ASSERT_EQ(base.kind, KSEC_RETURNED, "unfiltered getpid returns");
}

/*
 * How much each source runs. The same figures on the host and in the
 * emulated 6.1 guest: measured there, the whole file takes well under a
 * minute (TCG runs this workload only ~4x slower than the host), so nothing
 * needs scaling down.
 */
enum {
	LIBSECCOMP_PER_NR = 4,      /* inputs per syscall number and arch */
	LIBSECCOMP_EXTRA = 2000,    /* random nr / arch / args on top */
	LIBSECCOMP_VARIANTS = 6,    /* argument sets per harmless call */
	OPCODE_KERNEL_CALLS = 12,   /* per program, per ABI */
	RANDOM_PROGRAMS = 1000,
	RANDOM_KERNEL_PROGRAMS = 400,
	RANDOM_INPUTS = 300,
	ACTION_STACKS = 300,        /* stacks of 3-4 after the pairs */
	MIXED_STACKS = 150,
	MIXED_PER_NR = 2,
	MIXED_EXTRA = 500,
};

/* ---- the observer itself ---------------------------------------------- */

TEST(the_real_kernel_acts_on_each_action_as_documented)
{
	static const uint32_t rets[] = {
		SECCOMP_RET_ALLOW, SECCOMP_RET_ALLOW | 0x1234, SECCOMP_RET_LOG,
		SECCOMP_RET_ERRNO | 0, SECCOMP_RET_ERRNO | 1,
		SECCOMP_RET_ERRNO | 4095, SECCOMP_RET_ERRNO | 4096,
		SECCOMP_RET_ERRNO | 0xffff, SECCOMP_RET_TRAP | 0,
		SECCOMP_RET_TRAP | 0xbeef, SECCOMP_RET_TRACE | 3,
		SECCOMP_RET_USER_NOTIF, SECCOMP_RET_KILL_THREAD,
		SECCOMP_RET_KILL_PROCESS, 0x00010000 /* unknown */,
		0x7ffe0000 /* unknown */, 0x90000000 /* unknown, negative */,
	};
	struct tally t = { .source = "single RET K" };
	struct progs_rng rng;
	struct ksec_call *calls;
	struct consts none = { .n = 0 };
	size_t i, ncalls;
	double t0 = test_now_s();

	if (!observer_ready())
		return;
	progs_seed(&rng, 1);
	calls = harmless_calls(&rng, &none, 1, &ncalls);
	if (!ASSERT_OK_PTR(calls, "calls"))
		return;
	for (i = 0; i < ARRAY_SIZE(rets); i++) {
		struct sock_filter f = STMT(BPF_RET | BPF_K, rets[i]);
		struct sock_fprog p = { 1, &f };
		char name[48];

		snprintf(name, sizeof(name), "RET 0x%08x", rets[i]);
		verify(&t, name, &p, 1, NULL, 0, calls, ncalls);
	}
	report(&t, t0);
	free(calls);
	assert_every_outcome_seen(&t);
	ASSERT_EQ(t.mismatches, 0, "mismatches");
}

TEST(the_filter_sees_the_address_after_the_syscall_instruction)
{
	static const enum ksec_abi abis[] = { KSEC_ABI_X86_64, KSEC_ABI_I386,
					      KSEC_ABI_X32 };
	static const uint32_t nrs[] = { 39, 20, 39 | X32_BIT };
	size_t i;

	if (!observer_ready())
		return;
	for (i = 0; i < ARRAY_SIZE(abis); i++) {
		uint64_t ip = ksec_ip(abis[i]);
		struct sock_filter f[] = {
			STMT(BPF_LD | BPF_W | BPF_ABS, 8),
			JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)ip, 0, 3),
			STMT(BPF_LD | BPF_W | BPF_ABS, 12),
			JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)(ip >> 32), 0, 1),
			STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 1),
			STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 2),
		};
		struct sock_fprog p = { ARRAY_SIZE(f), f };
		struct ksec_call c = { abis[i], nrs[i], { 0 } };
		struct ksec_outcome o;
		char buf[200], obuf[200];

		if (!real_kernel_runs(&c))
			continue;
		if (!ASSERT_OK(ksec_observe(&p, 1, &c, 1, &o), "observe"))
			return;
		test_log("%s at ip 0x%llx: %s\n", ksec_call_str(&c, buf, sizeof(buf)),
			 (unsigned long long)ip, ksec_outcome_str(&o, obuf, sizeof(obuf)));
		ASSERT_EQ(o.kind, KSEC_RETURNED, "returned");
		ASSERT_EQ(o.ret, -1, "ip matched the label after the instruction (-1), not (-2)");
	}
}

TEST(the_filter_sees_nr_arch_and_all_six_arguments_as_issued)
{
	struct progs_rng rng;
	size_t nh, i;
	const struct ksec_call *h = ksec_harmless(&nh);

	if (!observer_ready())
		return;
	progs_seed(&rng, 6);
	for (i = 0; i < nh; i++) {
		struct sock_filter f[3 * 16 + 1];
		struct sock_fprog p = { 0, f };
		struct seccomp_data d;
		struct ksec_call c = h[i];
		struct ksec_outcome o, base;
		uint32_t words[16];
		char buf[200];
		int k, at = 0;

		if (!real_kernel_runs(&c))
			continue;
		for (k = 0; k < 6; k++)
			c.args[k] = progs_next(&rng);
		ksec_call_data(&c, &d);
		memcpy(words, &d, sizeof(words));
		/* Every word must be what ksec_call_data() says, else the
		 * call fails with 100 + its offset. */
		for (k = 0; k < 16; k++) {
			f[at++] = STMT(BPF_LD | BPF_W | BPF_ABS, 4 * k);
			f[at++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, words[k], 1, 0);
			f[at++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (100 + 4 * k));
		}
		f[at++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
		p.len = at;
		if (!ASSERT_OK(ksec_observe(&p, 1, &c, 1, &o), "observe") ||
		    !ASSERT_OK(ksec_baseline(&c, &base), "baseline"))
			return;
		if (!ksec_matches(&o, &base))
			test_fail(__FILE__, __LINE__, "%s: %s",
				  ksec_call_str(&c, buf, sizeof(buf)),
				  ksec_outcome_str(&o, buf + 100, 100));
	}
}

/* ---- source (i): libseccomp ---------------------------------------------- */

static void export_to(struct flist *l, scmp_filter_ctx ctx, const char *name)
{
	struct sock_filter *insns;
	size_t len;
	int err = corpus_export(ctx, &insns, &len);

	seccomp_release(ctx);
	if (err) {
		test_fail(__FILE__, __LINE__, "libseccomp export of %s: %s", name,
			  strerror(-err));
		return;
	}
	flist_add(l, name, insns, len);
}

static int rule(scmp_filter_ctx ctx, uint32_t action, int nr, unsigned n,
		const struct scmp_arg_cmp *cmp)
{
	int err = seccomp_rule_add_array(ctx, action, nr, n, cmp);

	if (err)
		test_log("libseccomp refused a rule (action 0x%08x) on %d: %s\n", action, nr, strerror(-err));
	return err;
}

static void add_arches(scmp_filter_ctx ctx, int which)
{
	if (which & 1)
		seccomp_arch_add(ctx, SCMP_ARCH_X86);
	if (which & 2)
		seccomp_arch_add(ctx, SCMP_ARCH_X32);
}

/* Allow (or deny) up to n syscalls of x86_64, chosen by a stride. */
static void rules_for_many(scmp_filter_ctx ctx, uint32_t action, int n,
			   int stride, int offset)
{
	int nr, added = 0;

	for (nr = offset; nr < 1024 && added < n; nr += stride) {
		char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr);

		if (!name)
			continue;
		if (seccomp_rule_add(ctx, action, nr, 0) == 0)
			added++;
		free(name);
	}
}

static void build_libseccomp(struct flist *l, struct progs_rng *r)
{
	/* libseccomp 2.5.4 refuses ERRNO data above 4094; larger data (and
	 * the kernel's cap at 4095) is covered by the RET K forms below. */
	static const uint32_t every_action[] = {
		SCMP_ACT_ALLOW, SCMP_ACT_ERRNO(13), SCMP_ACT_TRAP,
		SCMP_ACT_TRACE(77), SCMP_ACT_LOG, SCMP_ACT_NOTIFY,
		SCMP_ACT_KILL_THREAD, SCMP_ACT_KILL_PROCESS, SCMP_ACT_ERRNO(4094),
	};
	static const int x86_64_harmless[] = { 39, 110, 102, 104, 107, 108, 186, 24, 111 };
	static const enum scmp_compare ops[] = {
		SCMP_CMP_EQ, SCMP_CMP_NE, SCMP_CMP_LT, SCMP_CMP_LE, SCMP_CMP_GT,
		SCMP_CMP_GE, SCMP_CMP_MASKED_EQ,
	};
	static const uint32_t defaults[] = {
		SCMP_ACT_KILL_PROCESS, SCMP_ACT_ERRNO(1), SCMP_ACT_TRAP,
		SCMP_ACT_KILL_THREAD, SCMP_ACT_LOG,
	};
	scmp_filter_ctx ctx;
	char name[64];
	size_t i, v;

	/* Allowlists of up to 300 syscalls, several default actions,
	 * linear and binary-tree layouts, single- and multi-arch. */
	for (v = 0; v < ARRAY_SIZE(defaults); v++) {
		int tree = v & 1, arches = (int)v % 4;

		ctx = seccomp_init(defaults[v]);
		if (!ctx)
			continue;
		add_arches(ctx, arches);
		if (tree)
			seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
		rules_for_many(ctx, SCMP_ACT_ALLOW, v == 0 ? 300 : 60 + 60 * v, 1 + v % 3, v);
		snprintf(name, sizeof(name), "allowlist-%zu%s-arches%d", v,
			 tree ? "-tree" : "", arches);
		export_to(l, ctx, name);
	}
	/* Denylists of up to 300 syscalls with per-syscall errnos. */
	for (v = 0; v < 3; v++) {
		int nr, added = 0;

		ctx = seccomp_init(SCMP_ACT_ALLOW);
		if (!ctx)
			continue;
		add_arches(ctx, (int)v);
		if (v == 2)
			seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
		for (nr = (int)v; nr < 460 && added < 300; nr += 1 + (nr % 2)) {
			char *s = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr);

			if (!s)
				continue;
			free(s);
			if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(1 + nr % 200), nr, 0) == 0)
				added++;
		}
		snprintf(name, sizeof(name), "denylist-300-errno-%zu", v);
		export_to(l, ctx, name);
	}
	/* Every action, on the harmless calls themselves. */
	for (v = 0; v < 2; v++) {
		ctx = seccomp_init(SCMP_ACT_ERRNO(38));
		if (!ctx)
			continue;
		add_arches(ctx, 3);
		for (i = 0; i < ARRAY_SIZE(x86_64_harmless); i++)
			rule(ctx, every_action[(i + v) % ARRAY_SIZE(every_action)],
			     x86_64_harmless[i], 0, NULL);
		snprintf(name, sizeof(name), "every-action-%zu", v);
		export_to(l, ctx, name);
	}
	/* 64-bit argument comparisons with high words set: every operator
	 * on every argument of the harmless calls, random constants. */
	for (v = 0; v < 8; v++) {
		uint32_t def = v % 2 ? SCMP_ACT_ALLOW : SCMP_ACT_ERRNO(99);

		ctx = seccomp_init(def);
		if (!ctx)
			continue;
		add_arches(ctx, (int)v % 4);
		if (v >= 4)
			seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
		for (i = 0; i < ARRAY_SIZE(x86_64_harmless); i++) {
			struct scmp_arg_cmp cmp[2];
			enum scmp_compare op = ops[(i + v) % ARRAY_SIZE(ops)];
			uint64_t k = ((uint64_t)progs_edge_u32(r) << 32) | progs_edge_u32(r);
			uint64_t mask = progs_next(r) | 0x8000000100000001ULL;
			unsigned argn = (i + v) % 6, n = 1;
			uint32_t act = v % 2 ? SCMP_ACT_ERRNO(10 + i)
					     : every_action[(i * 3 + v) % ARRAY_SIZE(every_action)];

			if (act == def)
				act = SCMP_ACT_TRAP;
			cmp[0] = (struct scmp_arg_cmp){ argn, op,
				op == SCMP_CMP_MASKED_EQ ? mask : k,
				op == SCMP_CMP_MASKED_EQ ? (k & mask) : 0 };
			if (i % 3 == 0) { /* a second condition on another arg */
				cmp[1] = (struct scmp_arg_cmp){ (argn + 1) % 6,
					ops[(i + v + 2) % ARRAY_SIZE(ops)],
					progs_next(r), 0 };
				if (cmp[1].op == SCMP_CMP_MASKED_EQ)
					cmp[1].datum_b = cmp[1].datum_a & 0xff00ff00ff00ff00ULL;
				n = 2;
			}
			rule(ctx, act, x86_64_harmless[i], n, cmp);
			/* The same syscall, another comparison, another action. */
			cmp[0] = (struct scmp_arg_cmp){ (argn + 3) % 6,
				ops[(i + v + 4) % ARRAY_SIZE(ops)], ~k, 0 };
			if (cmp[0].op == SCMP_CMP_MASKED_EQ)
				cmp[0].datum_b = ~k & cmp[0].datum_a;
			rule(ctx, SCMP_ACT_ERRNO(200 + i), x86_64_harmless[i], 1, cmp);
		}
		snprintf(name, sizeof(name), "args64-%zu%s", v, v >= 4 ? "-tree" : "");
		export_to(l, ctx, name);
	}
	/* Multi-arch with rules that differ per arch (i386 numbers). */
	ctx = seccomp_init(SCMP_ACT_TRAP);
	if (ctx) {
		struct scmp_arg_cmp cmp = { 0, SCMP_CMP_EQ, 0x89abcdef, 0 };

		add_arches(ctx, 3);
		rules_for_many(ctx, SCMP_ACT_ALLOW, 150, 2, 1);
		seccomp_rule_add_exact_array(ctx, SCMP_ACT_ERRNO(21), 20, 1, &cmp);
		seccomp_rule_add_exact_array(ctx, SCMP_ACT_KILL_PROCESS, 64, 0, NULL);
		seccomp_rule_add_exact_array(ctx, SCMP_ACT_ERRNO(22), 224, 0, NULL);
		export_to(l, ctx, "multiarch-trap-default");
	}
}

/* A container runtime's default profile (Docker's shape) comes from the
 * shared corpus, with the other realistic filters there. */
static void add_corpus(struct flist *l)
{
	struct corpus c;
	size_t i;

	if (corpus_build(&c)) {
		test_fail(__FILE__, __LINE__, "corpus_build failed");
		corpus_free(&c);
		return;
	}
	for (i = 0; i < c.n; i++) {
		char name[64];

		snprintf(name, sizeof(name), "corpus-%s", c.filters[i].name);
		flist_add_copy(l, name, c.filters[i].insns, c.filters[i].len);
	}
	corpus_free(&c);
}

static void verify_list(struct tally *t, const struct flist *l,
			struct progs_rng *r, int per_nr, int extra,
			int variants)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		struct sock_fprog p = { l->f[i].len, l->f[i].insns };
		struct consts c = { .n = 0 };
		struct seccomp_data *in;
		struct ksec_call *calls;
		size_t nin = 0, ncalls = 0;

		consts_collect(&c, &p, 1);
		in = sweep_inputs(r, &c, per_nr, extra, &nin);
		calls = variants ? harmless_calls(r, &c, variants, &ncalls) : NULL;
		if (in)
			verify(t, l->f[i].name, &p, 1, in, nin, calls, ncalls);
		free(in);
		free(calls);
	}
}

TEST(verdicts_agree_three_ways_on_libseccomp_filters)
{
	struct tally t = { .source = "libseccomp + corpus" };
	struct flist l = { 0 };
	struct progs_rng rng;
	double t0 = test_now_s();
	int per_nr = LIBSECCOMP_PER_NR, extra = LIBSECCOMP_EXTRA, variants = LIBSECCOMP_VARIANTS;

	if (!observer_ready())
		return;
	progs_seed(&rng, 0x11bc0ffeeULL);
	build_libseccomp(&l, &rng);
	add_corpus(&l);
	printf("    %zu filters; per filter: %d inputs per syscall number and arch, %d extra, %d argument variants per harmless call\n",
	       l.n, per_nr, extra, variants);
	verify_list(&t, &l, &rng, per_nr, extra, variants);
	report(&t, t0);
	flist_free(&l);
	ASSERT_GE(t.filters, 30, "libseccomp filters checked");
	assert_every_outcome_seen(&t);
	ASSERT_EQ(t.mismatches, 0, "mismatches");
}

/* ---- source (ii): one program per opcode form ------------------------------ */

struct builder {
	struct sock_filter p[4200];
	size_t n;
};

static void put(struct builder *b, struct sock_filter f)
{
	if (b->n < ARRAY_SIZE(b->p))
		b->p[b->n++] = f;
}

#define ARG0_LO 16
#define ARG1_LO 24

/* Adds body + each tail: the raw A, and A folded into an ERRNO (low 12
 * bits, then bits 20..31) so the real kernel shows the value itself. */
static void add_with_tails(struct flist *l, const char *name,
			   const struct builder *body)
{
	static const struct {
		const char *suffix;
		struct sock_filter tail[4];
		size_t n;
	} tails[] = {
		{ "ret-a", { BPF_STMT(BPF_RET | BPF_A, 0) }, 1 },
		{ "errno-low12", { BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xfff),
				   BPF_STMT(BPF_ALU | BPF_OR | BPF_K, SECCOMP_RET_ERRNO),
				   BPF_STMT(BPF_RET | BPF_A, 0) }, 3 },
		{ "errno-high12", { BPF_STMT(BPF_ALU | BPF_RSH | BPF_K, 20),
				    BPF_STMT(BPF_ALU | BPF_OR | BPF_K, SECCOMP_RET_ERRNO),
				    BPF_STMT(BPF_RET | BPF_A, 0) }, 3 },
	};
	size_t t;

	for (t = 0; t < ARRAY_SIZE(tails); t++) {
		struct sock_filter *p = malloc((body->n + tails[t].n) * sizeof(*p));
		char full[64];

		if (!p)
			return;
		memcpy(p, body->p, body->n * sizeof(*p));
		memcpy(p + body->n, tails[t].tail, tails[t].n * sizeof(*p));
		snprintf(full, sizeof(full), "%s/%s", name, tails[t].suffix);
		flist_add(l, full, p, body->n + tails[t].n);
	}
}

static void build_opcode_forms(struct flist *l)
{
	static const uint16_t alu[] = { BPF_ADD, BPF_SUB, BPF_MUL, BPF_DIV,
					BPF_AND, BPF_OR, BPF_XOR, BPF_LSH, BPF_RSH };
	static const char *const alu_names[] = { "add", "sub", "mul", "div",
						 "and", "or", "xor", "lsh", "rsh" };
	static const uint32_t ks[] = { 1, 7, 31, 0x80000000, 0xffffffff, 0x12345678 };
	static const uint16_t jcc[] = { BPF_JEQ, BPF_JGT, BPF_JGE, BPF_JSET };
	static const char *const jcc_names[] = { "jeq", "jgt", "jge", "jset" };
	static const uint32_t jks[] = { 0, 1, 0x7fffffff, 0x80000000, 0xffffffff };
	static const uint32_t rets[] = {
		SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_KILL_THREAD,
		SECCOMP_RET_TRAP | 5, SECCOMP_RET_ERRNO | 0,
		SECCOMP_RET_ERRNO | 4095, SECCOMP_RET_ERRNO | 4096,
		SECCOMP_RET_ERRNO | 0xffff, SECCOMP_RET_USER_NOTIF,
		SECCOMP_RET_TRACE | 9, SECCOMP_RET_LOG, SECCOMP_RET_ALLOW,
		SECCOMP_RET_ALLOW | 0xffff, 0x00010000, 0x7ffe0000, 0xffff0000,
	};
	struct builder b;
	char name[64];
	size_t i, j;

	for (i = 0; i < 16; i++) {
		b.n = 0;
		put(&b, STMT(BPF_LD | BPF_W | BPF_ABS, 4 * i));
		snprintf(name, sizeof(name), "ld-w-abs-%zu", 4 * i);
		add_with_tails(l, name, &b);
	}
	b.n = 0;
	put(&b, STMT(BPF_LD | BPF_W | BPF_LEN, 0));
	add_with_tails(l, "ld-len", &b);
	b.n = 0;
	put(&b, STMT(BPF_LDX | BPF_W | BPF_LEN, 0));
	put(&b, STMT(BPF_MISC | BPF_TXA, 0));
	add_with_tails(l, "ldx-len+txa", &b);
	for (i = 0; i < ARRAY_SIZE(jks); i++) {
		b.n = 0;
		put(&b, STMT(BPF_LD | BPF_IMM, jks[i]));
		snprintf(name, sizeof(name), "ld-imm-0x%x", jks[i]);
		add_with_tails(l, name, &b);
		b.n = 0;
		put(&b, STMT(BPF_LDX | BPF_IMM, jks[i]));
		put(&b, STMT(BPF_MISC | BPF_TXA, 0));
		snprintf(name, sizeof(name), "ldx-imm-0x%x", jks[i]);
		add_with_tails(l, name, &b);
	}
	/* Every scratch slot, through ST + LDX MEM and STX + LD MEM. */
	for (j = 0; j < 2; j++) {
		b.n = 0;
		for (i = 0; i < 16; i++) {
			put(&b, STMT(BPF_LD | BPF_W | BPF_ABS, 4 * (i % 16)));
			put(&b, STMT(BPF_ALU | BPF_ADD | BPF_K, (uint32_t)i * 0x01010101));
			if (j == 0) {
				put(&b, STMT(BPF_ST, i));
			} else {
				put(&b, STMT(BPF_MISC | BPF_TAX, 0));
				put(&b, STMT(BPF_STX, i));
			}
		}
		put(&b, STMT(BPF_LD | BPF_IMM, 0));
		for (i = 0; i < 16; i++) {
			if (j == 0) {
				put(&b, STMT(BPF_LDX | BPF_MEM, 15 - i));
				put(&b, STMT(BPF_ALU | BPF_XOR | BPF_X, 0));
				put(&b, STMT(BPF_ALU | BPF_MUL | BPF_K, 33));
			} else {
				put(&b, STMT(BPF_MISC | BPF_TAX, 0));
				put(&b, STMT(BPF_LD | BPF_MEM, (i * 7) % 16));
				put(&b, STMT(BPF_ALU | BPF_ADD | BPF_X, 0));
			}
		}
		add_with_tails(l, j == 0 ? "st+ldx-mem-all-slots" : "stx+ld-mem-all-slots", &b);
	}
	for (i = 0; i < ARRAY_SIZE(alu); i++) {
		for (j = 0; j < ARRAY_SIZE(ks); j++) {
			uint32_t k = ks[j];

			if ((alu[i] == BPF_LSH || alu[i] == BPF_RSH) && k >= 32)
				k = j == 3 ? 0 : 16;
			b.n = 0;
			put(&b, STMT(BPF_LD | BPF_W | BPF_ABS, ARG0_LO));
			put(&b, STMT(BPF_ALU | alu[i] | BPF_K, k));
			snprintf(name, sizeof(name), "%s-k-0x%x", alu_names[i], k);
			add_with_tails(l, name, &b);
		}
		/* X from arg1: DIV by X == 0 returns 0, shifts by X >= 32. */
		b.n = 0;
		put(&b, STMT(BPF_LD | BPF_W | BPF_ABS, ARG1_LO));
		put(&b, STMT(BPF_MISC | BPF_TAX, 0));
		put(&b, STMT(BPF_LD | BPF_W | BPF_ABS, ARG0_LO));
		put(&b, STMT(BPF_ALU | alu[i] | BPF_X, 0));
		snprintf(name, sizeof(name), "%s-x", alu_names[i]);
		add_with_tails(l, name, &b);
	}
	b.n = 0;
	put(&b, STMT(BPF_LD | BPF_W | BPF_ABS, ARG0_LO));
	put(&b, STMT(BPF_ALU | BPF_NEG, 0));
	add_with_tails(l, "neg", &b);
	b.n = 0;
	put(&b, STMT(BPF_LD | BPF_W | BPF_ABS, ARG0_LO));
	put(&b, STMT(BPF_MISC | BPF_TAX, 0));
	put(&b, STMT(BPF_LD | BPF_IMM, 0));
	put(&b, STMT(BPF_MISC | BPF_TXA, 0));
	add_with_tails(l, "tax+txa", &b);
	b.n = 0;
	put(&b, STMT(BPF_LD | BPF_W | BPF_ABS, ARG0_LO));
	put(&b, STMT(BPF_JMP | BPF_JA, 1));
	put(&b, STMT(BPF_LD | BPF_IMM, 5));
	add_with_tails(l, "ja", &b);
	for (i = 0; i < ARRAY_SIZE(jcc); i++) {
		struct sock_filter f[5];

		for (j = 0; j < ARRAY_SIZE(jks); j++) {
			f[0] = STMT(BPF_LD | BPF_W | BPF_ABS, ARG0_LO);
			f[1] = JUMP(BPF_JMP | jcc[i] | BPF_K, jks[j], 0, 1);
			f[2] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 1);
			f[3] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 2);
			snprintf(name, sizeof(name), "%s-k-0x%x", jcc_names[i], jks[j]);
			flist_add_copy(l, name, f, 4);
		}
		f[0] = STMT(BPF_LD | BPF_W | BPF_ABS, ARG1_LO);
		f[1] = STMT(BPF_MISC | BPF_TAX, 0);
		f[2] = STMT(BPF_LD | BPF_W | BPF_ABS, ARG0_LO);
		f[3] = JUMP(BPF_JMP | jcc[i] | BPF_X, 0, 1, 0);
		f[4] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 1);
		{
			struct sock_filter g[6];

			memcpy(g, f, sizeof(f));
			g[5] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 2);
			snprintf(name, sizeof(name), "%s-x", jcc_names[i]);
			flist_add_copy(l, name, g, 6);
		}
	}
	for (i = 0; i < ARRAY_SIZE(rets); i++) {
		struct sock_filter f = STMT(BPF_RET | BPF_K, rets[i]);

		snprintf(name, sizeof(name), "ret-k-0x%08x", rets[i]);
		flist_add_copy(l, name, &f, 1);
	}
	{
		/* RET A with A = arg0: the input picks the verdict. */
		struct sock_filter f[] = {
			STMT(BPF_LD | BPF_W | BPF_ABS, ARG0_LO),
			STMT(BPF_RET | BPF_A, 0),
		};

		flist_add_copy(l, "ret-a-of-arg0", f, 2);
	}
	/* Long forward jumps across a 4096-insn program, and Jcc by 255. */
	b.n = 0;
	put(&b, STMT(BPF_LD | BPF_W | BPF_ABS, ARG0_LO));
	put(&b, JUMP(BPF_JMP | BPF_JSET | BPF_K, 1, 0, 1));
	put(&b, STMT(BPF_JMP | BPF_JA, 4092));              /* -> 4095 */
	put(&b, STMT(BPF_JMP | BPF_JA, 4090));              /* -> 4094 */
	while (b.n < 4094)
		put(&b, b.n % 2 ? STMT(BPF_ALU | BPF_ADD | BPF_K, 1)
				: STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
	put(&b, STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 2));
	put(&b, STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 1));
	flist_add_copy(l, "ja-4092-across-4096-insns", b.p, b.n);
	b.n = 0;
	put(&b, STMT(BPF_LD | BPF_W | BPF_ABS, ARG0_LO));
	for (i = 0; i < 12; i++) {
		put(&b, JUMP(BPF_JMP | BPF_JGT | BPF_K, (uint32_t)i << 28, 255, 0));
		for (j = 0; j < 255; j++)
			put(&b, STMT(BPF_ALU | BPF_ADD | BPF_K, 3));
	}
	put(&b, STMT(BPF_ALU | BPF_AND | BPF_K, 0xfff));
	put(&b, STMT(BPF_ALU | BPF_OR | BPF_K, SECCOMP_RET_ERRNO));
	put(&b, STMT(BPF_RET | BPF_A, 0));
	flist_add_copy(l, "jgt-255-chains", b.p, b.n);
}

/* Inputs for the hand-written programs: arg0 x arg1 over edge values. */
static const uint32_t arg_edges[] = {
	0, 1, 2, 31, 32, 33, 63, 64, 0x7fffffff, 0x80000000, 0x80000001,
	0xfffffffe, 0xffffffff, 0x12345678, 0x7fff0000, 0x00050001,
};

TEST(verdicts_agree_three_ways_on_every_opcode_form)
{
	struct tally t = { .source = "opcode forms" };
	struct flist l = { 0 };
	struct progs_rng rng;
	double t0 = test_now_s();
	int nkernel = OPCODE_KERNEL_CALLS;
	size_t i, a, b;

	if (!observer_ready())
		return;
	progs_seed(&rng, 0x0bc0de5ULL);
	build_opcode_forms(&l);
	for (i = 0; i < l.n; i++) {
		struct sock_fprog p = { l.f[i].len, l.f[i].insns };
		size_t n = ARRAY_SIZE(arg_edges), nin = 0, ncalls = 0, nh, h;
		const struct ksec_call *harm = ksec_harmless(&nh);
		struct seccomp_data *in = calloc(n * n + 200, sizeof(*in));
		struct ksec_call *calls = calloc(2 * nkernel + 20, sizeof(*calls));
		struct consts none = { .n = 0 };

		if (!in || !calls) {
			free(in);
			free(calls);
			break;
		}
		for (a = 0; a < n; a++)
			for (b = 0; b < n; b++) {
				random_data(&rng, &none, &in[nin], 39, AUDIT_X86_64);
				in[nin].args[0] = ((uint64_t)progs_next(&rng) << 32) | arg_edges[a];
				in[nin].args[1] = arg_edges[b];
				nin++;
			}
		for (a = 0; a < 200; a++, nin++)
			random_data(&rng, &none, &in[nin], progs_below(&rng, 500),
				    progs_below(&rng, 2) ? AUDIT_X86_64 : AUDIT_I386);
		/* Real kernel: getpid (x86_64) and i386 getpid with edge
		 * arguments; for RET A every action value as arg0. */
		for (h = 0; h < nh; h++) {
			struct ksec_call c = harm[h];
			int k;

			if (!(c.abi == KSEC_ABI_X86_64 && c.nr == 39) &&
			    !(c.abi == KSEC_ABI_I386 && c.nr == 20))
				continue;
			for (k = 0; k < nkernel; k++) {
				c.args[0] = arg_edges[progs_below(&rng, n)];
				c.args[1] = arg_edges[progs_below(&rng, n)];
				if (k == 0)
					c.args[1] = 0; /* DIV by X == 0 */
				calls[ncalls++] = c;
			}
		}
		if (strcmp(l.f[i].name, "ret-a-of-arg0") == 0) {
			static const uint32_t every[] = {
				0x80000000, 0, 0x00030007, 0x00050000, 0x00050fff,
				0x00051000, 0x7fc00000, 0x7ff00004, 0x7ffc0000,
				0x7fff0000, 0x7fffffff, 0x00010000, 0x7ffe0000,
				0x90000000, 0xffffffff,
			};

			free(calls);
			calls = calloc(ARRAY_SIZE(every), sizeof(*calls));
			ncalls = 0;
			for (a = 0; calls && a < ARRAY_SIZE(every); a++) {
				calls[ncalls] = harm[0];
				calls[ncalls++].args[0] = every[a];
			}
		}
		verify(&t, l.f[i].name, &p, 1, in, nin, calls, ncalls);
		free(in);
		free(calls);
	}
	printf("    %zu programs (%d real seccomp calls each on x86_64 and i386 getpid)\n",
	       l.n, nkernel);
	report(&t, t0);
	flist_free(&l);
	assert_every_outcome_seen(&t);
	ASSERT_EQ(t.mismatches, 0, "mismatches");
}

/* ---- source (iii): random valid programs ---------------------------------- */

TEST(verdicts_agree_three_ways_on_random_valid_programs)
{
	struct tally t = { .source = "random valid programs" };
	int nprogs = RANDOM_PROGRAMS, nkernel_progs = RANDOM_KERNEL_PROGRAMS;
	int inputs = RANDOM_INPUTS, i;
	struct progs_rng rng;
	double t0 = test_now_s();

	if (!observer_ready())
		return;
	progs_seed(&rng, 0x7a2d0a11ULL);
	for (i = 0; i < nprogs; i++) {
		size_t len = 1 + progs_below(&rng, i % 10 == 0 ? 1000 : 120);
		struct consts c = { .n = 0 };
		struct seccomp_data *in;
		struct ksec_call *calls = NULL;
		size_t ncalls = 0, k;
		struct progs_prog p;
		struct sock_fprog fp;
		char name[64];

		if (!ASSERT_OK(progs_gen_valid(&rng, len, &p), "generate"))
			return;
		fp = (struct sock_fprog){ p.len, p.insns };
		consts_collect(&c, &fp, 1);
		in = calloc(inputs, sizeof(*in));
		if (!in) {
			progs_free(&p);
			return;
		}
		for (k = 0; k < (size_t)inputs; k++) {
			uint32_t nr = progs_below(&rng, 4) ? progs_below(&rng, 460)
				      : (c.n ? c.v[progs_below(&rng, c.n)] : 0);

			random_data(&rng, &c, &in[k], nr,
				    progs_below(&rng, 3) ? AUDIT_X86_64 : AUDIT_I386);
			if (progs_below(&rng, 4) == 0)
				in[k].arch = c.n ? c.v[progs_below(&rng, c.n)] : 0;
		}
		if (i < nkernel_progs)
			calls = harmless_calls(&rng, &c, 1, &ncalls);
		snprintf(name, sizeof(name), "random-%d (%zu insns)", i, p.len);
		verify(&t, name, &fp, 1, in, inputs, calls, ncalls);
		free(in);
		free(calls);
		progs_free(&p);
	}
	printf("    %d programs of 1..1000 insns, %d inputs each; real seccomp on the first %d\n",
	       nprogs, inputs, nkernel_progs);
	report(&t, t0);
	assert_every_outcome_seen(&t);
	ASSERT_EQ(t.mismatches, 0, "mismatches");
}

/* ---- stacks ----------------------------------------------------------------- */

static const uint32_t precedence_values[] = {
	SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_KILL_THREAD,
	SECCOMP_RET_TRAP | 1, SECCOMP_RET_TRAP | 2,
	SECCOMP_RET_ERRNO | 1, SECCOMP_RET_ERRNO | 2,
	SECCOMP_RET_USER_NOTIF, SECCOMP_RET_TRACE | 1, SECCOMP_RET_TRACE | 2,
	SECCOMP_RET_LOG, SECCOMP_RET_ALLOW, SECCOMP_RET_ALLOW | 7,
	0x00010000 /* unknown, between KILL_THREAD and TRAP */,
	0x7ffe0000 /* unknown, between LOG and ALLOW */,
	0x90000000 /* unknown, below KILL_PROCESS as a signed value */,
};

TEST(stacked_filters_agree_three_ways_on_every_pair_of_actions)
{
	struct tally t = { .source = "action pairs and triples" };
	size_t n = ARRAY_SIZE(precedence_values), i, j, nh, ncalls = 0, h;
	const struct ksec_call *harm = ksec_harmless(&nh);
	struct ksec_call calls[4];
	struct progs_rng rng;
	double t0 = test_now_s();
	int triples = ACTION_STACKS, k;

	if (!observer_ready())
		return;
	progs_seed(&rng, 0x9a125ULL);
	for (h = 0; h < nh && ncalls < 2; h++)
		if ((harm[h].abi == KSEC_ABI_X86_64 && harm[h].nr == 110) ||
		    (harm[h].abi == KSEC_ABI_I386 && harm[h].nr == 20))
			calls[ncalls++] = harm[h];
	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++) {
			/* Older filter returns values[i], newer values[j]. */
			struct sock_filter f[2] = {
				STMT(BPF_RET | BPF_K, precedence_values[i]),
				STMT(BPF_RET | BPF_K, precedence_values[j]),
			};
			struct sock_fprog chain[2] = { { 1, &f[0] }, { 1, &f[1] } };
			struct seccomp_data d;
			char name[64];

			ksec_call_data(&calls[0], &d);
			snprintf(name, sizeof(name), "older 0x%08x, newer 0x%08x",
				 precedence_values[i], precedence_values[j]);
			verify(&t, name, chain, 2, &d, 1, calls, ncalls);
		}
	/* Triples and quadruples; filters that look at the call, so one
	 * stack gives different winners for different calls. */
	for (k = 0; k < triples; k++) {
		size_t depth = 3 + k % 2, m;
		struct sock_filter f[4][4];
		struct sock_fprog chain[4];
		struct seccomp_data d[2];
		char name[64];

		for (m = 0; m < depth; m++) {
			f[m][0] = STMT(BPF_LD | BPF_W | BPF_ABS, 4); /* arch */
			f[m][1] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_X86_64, 0, 1);
			f[m][2] = STMT(BPF_RET | BPF_K, precedence_values[progs_below(&rng, n)]);
			f[m][3] = STMT(BPF_RET | BPF_K, precedence_values[progs_below(&rng, n)]);
			chain[m] = (struct sock_fprog){ 4, f[m] };
		}
		for (m = 0; m < ncalls; m++)
			ksec_call_data(&calls[m], &d[m]);
		snprintf(name, sizeof(name), "stack %d of %zu", k, depth);
		verify(&t, name, chain, depth, d, ncalls, calls, ncalls);
	}
	printf("    %zu x %zu ordered pairs of %zu action values, %d stacks of 3-4\n",
	       n, n, n, triples);
	report(&t, t0);
	assert_every_outcome_seen(&t);
	ASSERT_EQ(t.mismatches, 0, "mismatches");
}

TEST(stacks_of_2_to_4_realistic_and_random_filters_agree_three_ways)
{
	struct tally t = { .source = "stacks of 2-4 filters" };
	struct flist pool = { 0 };
	struct progs_rng rng;
	double t0 = test_now_s();
	/* Under emulation a third: each stack is observed in the kernel. */
	int stacks = test_is_emulated() ? MIXED_STACKS / 3 : MIXED_STACKS;
	int per_nr = MIXED_PER_NR, extra = MIXED_EXTRA, k, r;

	if (!observer_ready())
		return;
	progs_seed(&rng, 0x57ac5ULL);
	build_libseccomp(&pool, &rng);
	add_corpus(&pool);
	for (r = 0; r < 24; r++) {
		struct progs_prog p;
		char name[32];

		if (progs_gen_valid(&rng, 1 + progs_below(&rng, 80), &p))
			break;
		snprintf(name, sizeof(name), "random-%d", r);
		flist_add(&pool, name, p.insns, p.len);
	}
	for (k = 0; k < stacks && pool.n; k++) {
		size_t depth = 2 + k % 3, m, nin = 0, ncalls = 0;
		struct sock_fprog chain[4];
		struct consts c = { .n = 0 };
		struct seccomp_data *in;
		struct ksec_call *calls;
		char name[200];
		int at = 0;

		for (m = 0; m < depth; m++) {
			struct named *f = &pool.f[progs_below(&rng, pool.n)];

			/* Only the newest filter may be too long for the
			 * wrapper that lets later filters install (kseccomp.c). */
			while (m + 1 < depth && f->len > 4000)
				f = &pool.f[progs_below(&rng, pool.n)];
			chain[m] = (struct sock_fprog){ f->len, f->insns };
			at += snprintf(name + at, sizeof(name) - at, "%s%s",
				       m ? " < " : "", f->name);
			if (at >= (int)sizeof(name))
				at = sizeof(name) - 1;
		}
		consts_collect(&c, chain, depth);
		in = sweep_inputs(&rng, &c, per_nr, extra, &nin);
		calls = harmless_calls(&rng, &c, 2, &ncalls);
		if (in)
			verify(&t, name, chain, depth, in, nin, calls, ncalls);
		free(in);
		free(calls);
	}
	printf("    %d stacks drawn from %zu filters (libseccomp, corpus, random)\n",
	       stacks, pool.n);
	report(&t, t0);
	flist_free(&pool);
	assert_every_outcome_seen(&t);
	ASSERT_EQ(t.mismatches, 0, "mismatches");
}
