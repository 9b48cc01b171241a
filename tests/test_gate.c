// SPDX-License-Identifier: GPL-2.0-only
/*
 * The gate (c2e_gate_build, gate.c): one classic filter that is ALLOW
 * exactly where a chain's stacked verdict is ALLOW or LOG, and USER_NOTIF
 * everywhere else. Held to the reference stack evaluation on the corpus and
 * on random valid programs and stacks; held to seccomp(2) itself for
 * validity; and installed for real with a listener, which must hear the
 * chain's denied calls and nothing else.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "c2e.h"
#include "corpus.h"
#include "fdpass.h"
#include "kseccomp.h"
#include "progs.h"
#include "wstatus.h"
#include "sockfilter.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const uint32_t arches[3] = { C2E_AUDIT_ARCH_X86_64, C2E_AUDIT_ARCH_I386,
				    C2E_AUDIT_ARCH_X86_64 };

static uint32_t expected(const struct sock_fprog *chain, size_t n, const struct seccomp_data *d)
{
	uint32_t action = c2e_effective_action(c2e_stack_eval(chain, n, d));

	return action == SECCOMP_RET_ALLOW || action == SECCOMP_RET_LOG ?
	       SECCOMP_RET_ALLOW : SECCOMP_RET_USER_NOTIF;
}

static const uint32_t edge_arches[] = { C2E_AUDIT_ARCH_X86_64, C2E_AUDIT_ARCH_I386, 0,
					AUDIT_ARCH_AARCH64, 0xffffffffU };
static const uint32_t edge_nrs[] = { 510, 511, 512, 513, 600, 1023, 1024, 0x3fffffffU,
				     0x40000000U, 0x40000001U, 0x40000200U, 0x7fffffffU,
				     0x80000000U, 0xfffffffeU, 0xffffffffU };

struct tally {
	long chains, inputs, notified, wrong, kernel_refused, refused, searched;
};

static bool chain_has(const struct sock_fprog *chain, size_t n, uint16_t code)
{
	size_t i, k;

	for (i = 0; i < n; i++)
		for (k = 0; k < chain[i].len; k++)
			if (chain[i].filter[k].code == code)
				return true;
	return false;
}

/* Builds the gate for chain and checks it against `inputs` inputs for
 * every arch and for nr 0..511 in steps of nr_step. */
static void check_form(const struct sock_fprog *chain, size_t n, enum c2e_gate_form form,
		       int nr_step, int inputs, struct progs_rng *rng, struct tally *t)
{
	struct sock_filter *g;
	struct c2e_error err;
	size_t len;
	int a, nr, i, j, r;

	if (c2e_gate_len(chain, n, NULL) < 0)
		return;
	r = c2e_gate_build_as(chain, n, form, &g, &len, &err);
	if (r == -EOPNOTSUPP) {
		ASSERT_EQ(chain_has(chain, n, BPF_ALU | BPF_DIV | BPF_X), true,
			  "only a division by X is refused");
		t->refused++;
		return;
	}
	if (!ASSERT_OK(r, "gate builds")) {
		char buf[256];

		test_log("%s\n", c2e_error_str(&err, buf, sizeof(buf)));
		t->wrong++;
		return;
	}
	t->chains++;
	if (form == C2E_GATE_SEARCH) {
		struct sock_filter *lin;
		size_t lin_len;

		if (ASSERT_OK(c2e_gate_build_as(chain, n, C2E_GATE_LINEAR, &lin, &lin_len, NULL),
			      "the linear form builds")) {
			t->searched += lin_len != len || memcmp(lin, g, len * sizeof(*g));
			free(lin);
		}
	}
	if (ksec_validates(g, len) != 1 && t->kernel_refused++ < 3)
		test_fail(__FILE__, __LINE__, "seccomp(2) refuses a gate of %zu insns", len);
	for (a = 0; a < 3; a++)
		for (nr = 0; nr < 512; nr += nr_step)
			for (i = 0; i < inputs; i++) {
				struct seccomp_data d = {
					.nr = a == 2 ? (int)(C2E_X32_SYSCALL_BIT | nr) : nr,
					.arch = arches[a],
					.instruction_pointer = progs_next(rng),
				};
				uint32_t want, got;

				for (j = 0; j < 6; j++)
					d.args[j] = i & 1 ? progs_next(rng) :
						    ((uint64_t)progs_edge_u32(rng) << 32) |
						    progs_edge_u32(rng);
				if (i == 0)
					memset(d.args, 0, sizeof(d.args));
				want = expected(chain, n, &d);
				got = c2e_interpret(g, len, &d);
				t->inputs++;
				t->notified += got == SECCOMP_RET_USER_NOTIF;
				if (got != want && t->wrong++ < 5)
					test_fail(__FILE__, __LINE__,
						  "arch %#x nr %#x: the gate says %#x, the chain %#x",
						  d.arch, d.nr, got, want);
			}
	/* Past the numbers with a bit of their own in the search, and arches
	 * no x86 kernel gives, where the search must send every number the
	 * same way or into the linear gate. */
	for (a = 0; a < (int)ARRAY_SIZE(edge_arches); a++)
		for (nr = 0; nr < (int)ARRAY_SIZE(edge_nrs); nr++) {
			struct seccomp_data d = { .nr = (int)edge_nrs[nr], .arch = edge_arches[a] };
			uint32_t want, got;

			for (j = 0; j < 6; j++)
				d.args[j] = progs_next(rng);
			want = expected(chain, n, &d);
			got = c2e_interpret(g, len, &d);
			t->inputs++;
			if (got != want && t->wrong++ < 5)
				test_fail(__FILE__, __LINE__,
					  "arch %#x nr %#x: the gate says %#x, the chain %#x",
					  d.arch, d.nr, got, want);
		}
	free(g);
}

/* Each form of the gate for chain, held to the chain's stacked verdicts. */
static void check_chain(const struct sock_fprog *chain, size_t n, int nr_step,
			int inputs, struct progs_rng *rng, struct tally *t)
{
	check_form(chain, n, C2E_GATE_BEST, nr_step, inputs, rng, t);
	check_form(chain, n, C2E_GATE_LINEAR, nr_step, inputs, rng, t);
	check_form(chain, n, C2E_GATE_SEARCH, nr_step, inputs, rng, t);
}

TEST(the_gate_notifies_exactly_what_a_chain_of_corpus_filters_does_not_allow_or_log)
{
	struct corpus cp;
	struct progs_rng rng;
	struct tally t = { 0 }, one = { 0 };
	int step = test_is_emulated() ? 7 : 1, inputs = test_is_emulated() ? 2 : 4;
	size_t i;

	progs_seed(&rng, 0x5eed0a7e);
	if (!ASSERT_OK(ksec_validator_start(), "the seccomp(2) validator starts") ||
	    !ASSERT_OK(corpus_build(&cp), "corpus_build")) {
		corpus_free(&cp);
		return;
	}
	for (i = 0; i < cp.n; i++) {
		struct sock_fprog s[3];
		size_t k;

		for (k = 0; k < 3; k++)
			s[k] = (struct sock_fprog){ (unsigned short)cp.filters[(i + k) % cp.n].len,
						    cp.filters[(i + k) % cp.n].insns };
		check_chain(s, 1, step, inputs, &rng, &one);
		check_chain(s, 3, step * 3, inputs, &rng, &t);
	}
	printf("  corpus: one filter: %ld gates (%ld searched), %ld refused (div x), %ld wrong; "
	       "stacks of three: %ld gates (%ld searched), %ld refused, %ld wrong\n",
	       one.chains, one.searched, one.refused, one.wrong, t.chains, t.searched,
	       t.refused, t.wrong);
	/* A stack's walk may spend its budget (each path of a filter walks
	 * the next one) or not fit one program: then the gate is linear. */
	ASSERT_EQ(one.searched * 3, one.chains, "every filter's gate has a searched form");
	ASSERT_EQ(one.wrong, 0, "inputs a filter's gate judges unlike the filter");
	ASSERT_EQ(one.kernel_refused, 0, "filters' gates seccomp(2) refuses");
	ASSERT_EQ(t.wrong, 0, "inputs the gate judges unlike the chain");
	ASSERT_EQ(t.kernel_refused, 0, "gates seccomp(2) refuses");
	ASSERT_GE(t.notified, 1, "some calls go up");
	ASSERT_GE(t.inputs - t.notified, 1, "some calls stay in the kernel");
	corpus_free(&cp);
}

TEST(the_gate_notifies_exactly_what_random_stacks_do_not_allow_or_log)
{
	struct progs_rng rng;
	struct tally t = { 0 };
	int p, programs = test_is_emulated() ? 40 : 400;

	progs_seed(&rng, 0x5eed0a7f);
	if (!ASSERT_OK(ksec_validator_start(), "the seccomp(2) validator starts"))
		return;
	for (p = 0; p < programs; p++) {
		struct progs_prog pr[3];
		struct sock_fprog chain[3];
		size_t n = progs_gen_stack(&rng, p, pr, chain), i;

		if (n)
			check_chain(chain, n, 61, 3, &rng, &t);
		for (i = 0; i < n; i++)
			progs_free(&pr[i]);
	}
	printf("  random: %ld gates (%ld searched), %ld refused (div x), %ld inputs, %ld notified, "
	       "%ld wrong\n", t.chains, t.searched, t.refused, t.inputs, t.notified, t.wrong);
	ASSERT_GE(t.searched * 3, t.chains, "every stack has a searched form");
	ASSERT_EQ(t.wrong, 0, "inputs the gate judges unlike the chain");
	ASSERT_EQ(t.kernel_refused, 0, "gates seccomp(2) refuses");
	ASSERT_GE(t.chains, programs / 2, "most random stacks get a gate");
}

TEST(the_gate_refuses_a_chain_longer_than_one_classic_program_with_the_count)
{
	static struct sock_filter big[2100];
	struct sock_fprog chain[2] = { { ARRAY_SIZE(big), big }, { ARRAY_SIZE(big), big } };
	struct sock_filter *g = (void *)1;
	struct c2e_error err;
	size_t len = 1, i;
	char buf[256];

	for (i = 0; i + 1 < ARRAY_SIZE(big); i++)
		big[i] = STMT(BPF_LD | BPF_W | BPF_ABS, 0);
	big[i] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	ASSERT_OK(c2e_gate_build(chain, 1, &g, &len, &err), "one filter fits");
	ASSERT_EQ(c2e_gate_len(chain, 1, NULL), (int)ARRAY_SIZE(big) + 1,
		  "its linear length: the filter and the final ret");
	ASSERT_TRUE(len <= ARRAY_SIZE(big) + 1, "what is built is no longer");
	free(g);
	ASSERT_EQ(c2e_gate_build(chain, 2, &g, &len, &err), -EINVAL, "two do not");
	ASSERT_TRUE(g == NULL && len == 0, "nothing is returned");
	ASSERT_TRUE(strstr(c2e_error_str(&err, buf, sizeof(buf)), "needs 4203 instructions"),
		    "the message says how many");
	big[0] = STMT(BPF_LD | BPF_W | BPF_ABS, 2);
	ASSERT_EQ(c2e_gate_build(chain, 2, &g, &len, &err), -EINVAL, "a bad filter");
	ASSERT_TRUE(strstr(c2e_error_str(&err, buf, sizeof(buf)), "filter 0: "),
		    "the message names the filter");
	big[0] = STMT(BPF_LD | BPF_W | BPF_ABS, 0);
}

/*
 * seccomp(2)'s emulation of a new filter for its action cache, by its
 * rules (kernel/seccomp.c, seccomp_is_const_allow(): the instructions it
 * knows, and it stops at any other), run here for one number: 1 when it
 * proves ALLOW, 0 when not, and *steps the instructions it went through.
 * The kernel shows neither its cache nor its steps, so this is a model of
 * it; the install itself is held to seccomp(2) by check_form().
 */
static int kernel_cache_allows(const struct sock_filter *f, size_t len, uint32_t arch,
			       uint32_t nr, int *steps)
{
	uint32_t a = 0;
	size_t pc;

	*steps = 0;
	for (pc = 0; pc < len; pc++) {
		const struct sock_filter *in = &f[pc];

		++*steps;
		switch (in->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			if (in->k != 0 && in->k != 4)
				return 0;
			a = in->k ? arch : nr;
			break;
		case BPF_RET | BPF_K:
			return in->k == SECCOMP_RET_ALLOW;
		case BPF_JMP | BPF_JA:
			pc += in->k;
			break;
		case BPF_JMP | BPF_JEQ | BPF_K:
			pc += a == in->k ? in->jt : in->jf;
			break;
		case BPF_JMP | BPF_JGE | BPF_K:
			pc += a >= in->k ? in->jt : in->jf;
			break;
		case BPF_JMP | BPF_JGT | BPF_K:
			pc += a > in->k ? in->jt : in->jf;
			break;
		case BPF_JMP | BPF_JSET | BPF_K:
			pc += a & in->k ? in->jt : in->jf;
			break;
		case BPF_ALU | BPF_AND | BPF_K:
			a &= in->k;
			break;
		default:
			return 0;
		}
	}
	return 0;
}

/* An allow-list of numbers 0..299 as libseccomp lays one out, the rest
 * killed; with_arg: getppid's rule looks at args[0]. */
static size_t allow_list(struct sock_filter *f, bool with_arg)
{
	size_t i = 0;
	uint32_t nr;

	f[i++] = STMT(BPF_LD | BPF_W | BPF_ABS, 0);
	for (nr = 0; nr < 300; nr++) {
		if (with_arg && nr == SYS_getppid)
			continue;
		f[i++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1);
		f[i++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	}
	if (with_arg) {
		f[i++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 3);
		f[i++] = STMT(BPF_LD | BPF_W | BPF_ABS, 16);
		f[i++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1);
		f[i++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	}
	f[i++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	return i;
}

TEST(seccomp2_decides_each_number_of_a_300_rule_gate_in_a_few_steps_and_caches_the_same)
{
	static struct sock_filter f[700];
	struct progs_rng rng;
	struct tally t = { 0 };
	int v;

	progs_seed(&rng, 0x5eed0b00);
	if (!ASSERT_OK(ksec_validator_start(), "the seccomp(2) validator starts"))
		return;
	for (v = 0; v < 2; v++) {
		struct sock_fprog prog = { (unsigned short)allow_list(f, v), f };
		long total = 0, most = 0, wrong = 0;
		struct sock_filter *g;
		size_t len;
		int a, steps;
		uint32_t nr;

		if (!ASSERT_OK(c2e_gate_build(&prog, 1, &g, &len, NULL), "the gate builds"))
			return;
		for (a = 0; a < 2; a++)
			for (nr = 0; nr < 512; nr++) {
				bool allowed = nr < 300 && !(v && nr == SYS_getppid);

				wrong += kernel_cache_allows(g, len, arches[a], nr, &steps) != allowed;
				total += steps;
				most = steps > most ? steps : most;
			}
		printf("  %s: linear %d insns, built %zu; the kernel's emulation: %ld steps "
		       "for 1024 numbers, at most %ld\n", v ? "with an argument rule" : "numbers only",
		       c2e_gate_len(&prog, 1, NULL), len, total, most);
		ASSERT_EQ(wrong, 0, "the kernel caches ALLOW for the numbers the list allows, and only those");
		ASSERT_TRUE(most <= 24, "no number takes more than a search's steps");
		if (!v)
			ASSERT_TRUE(len <= 16, "numbers alone: no linear gate behind the search");
		else
			ASSERT_TRUE(len <= 40, "an argument rule: only its instructions are behind it");
		free(g);
		check_chain(&prog, 1, 1, 3, &rng, &t);
	}
	ASSERT_EQ(t.wrong, 0, "inputs the gate judges unlike the chain");
	ASSERT_EQ(t.kernel_refused, 0, "gates seccomp(2) refuses");
}

/* ---- installed for real ------------------------------------------------- */

/*
 * The child: installs the gate with a listener, hands the listener to the
 * parent, then makes four calls: getpid and uname(args[0] = 8), which the
 * chain allows (so the kernel must not notify), getppid, which it answers
 * ERRNO(7), and uname(args[0] = 7), which it kills. Its exit status says
 * which result was wrong; 100 + errno when the install failed.
 */
static int gate_child(int sock, const struct sock_filter *g, size_t len)
{
	struct sock_fprog prog = { (unsigned short)len, (struct sock_filter *)g };
	long r;

	r = fdpass_listener(sock, &prog);
	if (r)
		return (int)r;
	if (syscall(SYS_getpid) != getpid())
		return 3;
	r = syscall(SYS_uname, 8L);
	if (r != -1 || errno != EFAULT)
		return 4;
	errno = 0;
	r = syscall(SYS_getppid);
	if (r != -1 || errno != 7)
		return 5;
	/* The supervisor answers this one CONTINUE: the kernel runs it. */
	r = syscall(SYS_uname, 7L);
	if (r != -1 || errno != EFAULT)
		return 6;
	return 0;
}

TEST(a_gate_installed_with_a_listener_notifies_the_calls_its_chain_denies_and_no_other)
{
	struct sock_filter errno7_getppid[] = {
		STMT(BPF_LD | BPF_W | BPF_ABS, 4),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, C2E_AUDIT_ARCH_X86_64, 1, 0),
		STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		STMT(BPF_LD | BPF_W | BPF_ABS, 0),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 7),
		STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_filter kill_uname7[] = {   /* and LOG for every uname */
		STMT(BPF_LD | BPF_W | BPF_ABS, 0),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_uname, 0, 4),
		STMT(BPF_LD | BPF_W | BPF_ABS, 16),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, 7, 0, 1),
		STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		STMT(BPF_RET | BPF_K, SECCOMP_RET_LOG),
		STMT(BPF_LD | BPF_IMM, SECCOMP_RET_ALLOW),
		STMT(BPF_RET | BPF_A, 0),
	};
	struct sock_fprog chain[2] = { { ARRAY_SIZE(errno7_getppid), errno7_getppid },
				       { ARRAY_SIZE(kill_uname7), kill_uname7 } };
	int timeout = test_is_emulated() ? 60000 : 10000, sv[2], fd = -1, st = -1, i;
	uint32_t heard[2] = { 0, 0 };
	struct sock_filter *g;
	char buf[64];
	size_t len;
	pid_t pid;

	if (!ASSERT_OK(c2e_gate_build(chain, 2, &g, &len, NULL), "gate builds") ||
	    !ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), "socketpair"))
		return;
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		_exit(gate_child(sv[1], g, len));
	}
	close(sv[1]);
	free(g);
	if (!ASSERT_TRUE(pid > 0, "fork"))
		goto out;
	fd = fdpass_recv(sv[0]);
	if (fd < 0) {
		waitpid(pid, &st, 0);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 100 + EINVAL)
			test_skip("seccomp(2) has no SECCOMP_FILTER_FLAG_NEW_LISTENER");
		else
			test_fail(__FILE__, __LINE__, "no listener from the child (%s)",
				  wstatus_str(st, buf, sizeof(buf)));
		goto out;
	}
	for (i = 0; i < 2; i++) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		struct seccomp_notif n;
		struct seccomp_notif_resp resp;

		if (!ASSERT_EQ(poll(&pfd, 1, timeout), 1, "a notification comes") ||
		    !ASSERT_TRUE(pfd.revents & POLLIN, "readable, not hung up"))
			break;
		memset(&n, 0, sizeof(n));
		if (!ASSERT_OK(ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &n), "NOTIF_RECV"))
			break;
		heard[i] = (uint32_t)n.data.nr;
		memset(&resp, 0, sizeof(resp));
		resp.id = n.id;
		if (n.data.nr == SYS_getppid)
			resp.error = -7;
		else
			resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		if (!ASSERT_OK(ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp), "NOTIF_SEND"))
			break;
	}
	ASSERT_EQ(heard[0], SYS_getppid, "the first call heard is getppid, not getpid or uname(8)");
	ASSERT_EQ(heard[1], SYS_uname, "the second is uname(7)");
	waitpid(pid, &st, 0);
	pid = -1;
	ASSERT_TRUE(wstatus_exited_ok(st), "each call got what the chain and the answers say");
	if (!wstatus_exited_ok(st))
		test_log("child: %s\n", wstatus_str(st, buf, sizeof(buf)));
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	if (fd >= 0)
		close(fd);
	close(sv[0]);
}
