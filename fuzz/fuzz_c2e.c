// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target over the whole classic2ebpf library.
 *
 * Input: the first 64 bytes are a struct seccomp_data (zero-filled when
 * the input is shorter); the rest, truncated to a multiple of 8, is a
 * struct sock_filter array. For every input:
 *   - c2e_validate() must not crash and must fill a printable error;
 *   - c2e_kernel_insn_count() must agree with validation: a count in
 *     [3 + len, 3 + 5 * len] for a valid program;
 *   - c2e_disasm_classic() output must parse back (c2e_asm_parse()) to
 *     the same bytes whenever disassembly succeeds, and it must succeed
 *     for valid programs;
 * and for a valid program:
 *   - c2e_translate() must succeed and the kernel verifier must accept
 *     the result (c2e_kernel_load());
 *   - BPF_PROG_TEST_RUN of it (c2e_kernel_run()) must return what
 *     c2e_interpret() returns, on several seccomp_data values derived
 *     from the input;
 *   - its gate's linear and searched forms (c2e_gate_build_as()) must
 *     both build or both be refused, the searched one must validate, and
 *     both must return ALLOW exactly where the program allows or logs,
 *     USER_NOTIF elsewhere, on seccomp_data values around the input's
 *     (numbers at the search's edges, x32 numbers, other arches).
 * Any disagreement is an abort() with the evidence on stderr.
 *
 * Environment:
 *   SF_FUZZ_NO_KERNEL=1    skip loading into the kernel (no root, or speed)
 *   SF_FUZZ_SEED_DIR=DIR   write a seed corpus into DIR and exit
 */
#define _GNU_SOURCE
#include "c2e.h"
#include "fuzzseed.h"
#include "sockfilter.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int kernel_off = -1; /* -1: not decided yet */
static char verifier_log[1 << 16];

static void dump(const char *why, const struct sock_filter *f, size_t len,
		 const struct seccomp_data *d)
{
	size_t i;

	fprintf(stderr, "fuzz_c2e: %s\n", why);
	if (d)
		fprintf(stderr, "  data: nr=%d arch=0x%x ip=0x%llx args=%llx %llx %llx %llx %llx %llx\n",
			d->nr, d->arch, (unsigned long long)d->instruction_pointer,
			(unsigned long long)d->args[0], (unsigned long long)d->args[1],
			(unsigned long long)d->args[2], (unsigned long long)d->args[3],
			(unsigned long long)d->args[4], (unsigned long long)d->args[5]);
	fprintf(stderr, "  filter (%zu insns):\n", len);
	for (i = 0; i < len && i < 256; i++)
		fprintf(stderr, "    %4zu: {0x%04x, %3u, %3u, 0x%08x}\n", i,
			f[i].code, f[i].jt, f[i].jf, f[i].k);
}

static bool use_kernel(void)
{
	if (kernel_off < 0) {
		const char *e = getenv("SF_FUZZ_NO_KERNEL");

		kernel_off = e && *e == '1';
	}
	return !kernel_off;
}

/* Text round trip: what disassembles must assemble to the same bytes. */
static void check_text(const struct sock_filter *f, size_t len, bool valid)
{
	struct sock_filter *back = NULL;
	struct c2e_error err;
	size_t text_len = 0, back_len = 0;
	char *text = NULL, buf[300];
	FILE *fp = open_memstream(&text, &text_len);
	int r;

	if (!fp)
		return;
	r = c2e_disasm_classic(f, len, fp);
	fclose(fp);
	if (r) {
		if (valid) {
			dump("c2e_disasm_classic failed on a valid program", f, len, NULL);
			abort();
		}
		free(text);
		return;
	}
	memset(&err, 0, sizeof(err));
	r = c2e_asm_parse(text, text_len, &back, &back_len, &err);
	if (r || back_len != len ||
	    (len && memcmp(back, f, len * sizeof(*f)))) {
		fprintf(stderr, "--- disassembly ---\n%s--- end ---\n", text);
		if (r)
			fprintf(stderr, "parse: %s\n", c2e_error_str(&err, buf, sizeof(buf)));
		else
			fprintf(stderr, "parsed %zu insns\n", back_len);
		dump("disassembly does not assemble back to the same bytes", f, len, NULL);
		abort();
	}
	free(back);
	free(text);
}

/* A few inputs from the fuzzer's own: as given, then with the fields the
 * programs compare most (nr, arch, argument halves) perturbed. */
static size_t derive_inputs(const struct seccomp_data *in, struct seccomp_data *out)
{
	size_t n = 0;
	int i;

	out[n++] = *in;
	out[n] = *in;
	out[n].arch = C2E_AUDIT_ARCH_X86_64;
	n++;
	out[n] = *in;
	out[n].arch = C2E_AUDIT_ARCH_I386;
	out[n].nr ^= 1;
	n++;
	out[n] = *in;
	for (i = 0; i < 6; i++)
		out[n].args[i] = ~in->args[i];
	out[n].nr = (int)((uint32_t)in->nr | C2E_X32_SYSCALL_BIT);
	n++;
	memset(&out[n], 0, sizeof(out[n]));
	n++;
	memset(&out[n], 0xff, sizeof(out[n]));
	n++;
	return n;
}

static void check_kernel(const struct sock_filter *f, size_t len,
			 const struct seccomp_data *data)
{
	struct c2e_ebpf prog = { 0 };
	struct seccomp_data inputs[8];
	size_t n, i;
	int fd, r;

	/* Both lowerings, chosen by the input so a crash reproduces. */
	unsigned int flags = (data->instruction_pointer & 1) ? C2E_EMIT_SEARCH : 0;

	r = c2e_translate_flags(f, len, flags, &prog);
	if (r) {
		if (r == -ENOMEM)
			return;
		fprintf(stderr, "c2e_translate(flags %#x): %s\n", flags, strerror(-r));
		dump("c2e_translate refused a valid program", f, len, NULL);
		abort();
	}
	if (!use_kernel()) {
		c2e_ebpf_free(&prog);
		return;
	}
	verifier_log[0] = 0;
	fd = c2e_kernel_load(&prog, verifier_log, sizeof(verifier_log));
	if (fd < 0) {
		/* EPERM: no CAP_BPF here. EACCES and EINVAL are the
		 * verifier's refusals: a translator bug. */
		if (fd == -EPERM || fd == -ENOSYS) {
			fprintf(stderr, "fuzz_c2e: cannot load BPF (%s): kernel checks off\n",
				strerror(-fd));
			kernel_off = 1;
			c2e_ebpf_free(&prog);
			return;
		}
		fprintf(stderr, "c2e_kernel_load: %s\n%s\n", strerror(-fd),
			verifier_log + (strlen(verifier_log) > 4000 ?
					strlen(verifier_log) - 4000 : 0));
		c2e_disasm_ebpf(prog.insns, prog.len, stderr);
		dump("the verifier refused our translation", f, len, NULL);
		abort();
	}
	n = derive_inputs(data, inputs);
	for (i = 0; i < n; i++) {
		uint32_t want = c2e_interpret(f, len, &inputs[i]), got = 0;

		r = c2e_kernel_run(fd, &inputs[i], &got);
		if (r) {
			fprintf(stderr, "c2e_kernel_run: %s\n", strerror(-r));
			dump("BPF_PROG_TEST_RUN failed", f, len, &inputs[i]);
			abort();
		}
		if (got != want) {
			fprintf(stderr, "kernel returned 0x%08x, interpreter 0x%08x\n",
				got, want);
			c2e_disasm_ebpf(prog.insns, prog.len, stderr);
			dump("translation and interpreter disagree", f, len, &inputs[i]);
			abort();
		}
	}
	close(fd);
	c2e_ebpf_free(&prog);
}

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* The gate's two forms against the program's own verdict. */
static void check_gate(const struct sock_filter *f, size_t len, const struct seccomp_data *sd)
{
	static const uint32_t nrs[] = { 0, 1, 63, 64, 511, 512, 513, 1023,
					C2E_X32_SYSCALL_BIT - 1, C2E_X32_SYSCALL_BIT,
					C2E_X32_SYSCALL_BIT + 1, C2E_X32_SYSCALL_BIT + 1023,
					C2E_X32_SYSCALL_BIT + 1024, 0xffffffffU };
	static const uint32_t arches[] = { C2E_AUDIT_ARCH_X86_64, C2E_AUDIT_ARCH_I386, 0 };
	struct sock_fprog prog = { (unsigned short)len, (struct sock_filter *)f };
	struct sock_filter *lin = NULL, *srch = NULL;
	size_t lin_len = 0, srch_len = 0, i, a;
	int rl, rs;

	rl = c2e_gate_build_as(&prog, 1, C2E_GATE_LINEAR, &lin, &lin_len, NULL);
	rs = c2e_gate_build_as(&prog, 1, C2E_GATE_SEARCH, &srch, &srch_len, NULL);
	if (rl != rs || (rs == 0 && c2e_validate(srch, srch_len, NULL))) {
		fprintf(stderr, "linear %d, searched %d\n", rl, rs);
		dump("c2e_gate_build_as: the forms disagree, or the searched one is invalid",
		     f, len, NULL);
		abort();
	}
	for (a = 0; rs == 0 && a <= N_OF(arches); a++)
		for (i = 0; i <= N_OF(nrs); i++) {
			struct seccomp_data d = *sd;
			uint32_t action, want, got_l, got_s;

			if (a < N_OF(arches))
				d.arch = arches[a];
			if (i < N_OF(nrs)) /* near each edge, by the input's low bits */
				d.nr = (int)(nrs[i] + ((uint32_t)sd->nr & 3));
			action = c2e_effective_action(c2e_interpret(f, len, &d));
			want = action == SECCOMP_RET_ALLOW || action == SECCOMP_RET_LOG ?
			       SECCOMP_RET_ALLOW : SECCOMP_RET_USER_NOTIF;
			got_l = c2e_interpret(lin, lin_len, &d);
			got_s = c2e_interpret(srch, srch_len, &d);
			if (got_l != want || got_s != want) {
				fprintf(stderr, "want %#x, linear %#x, searched %#x\n", want, got_l, got_s);
				dump("a gate's verdict is not the program's", f, len, &d);
				abort();
			}
		}
	free(lin);
	free(srch);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct seccomp_data sd;
	struct sock_filter *f = NULL;
	struct c2e_error err;
	size_t len = 0;
	char buf[300];
	int v, kc;

	memset(&sd, 0, sizeof(sd));
	memcpy(&sd, data, size < sizeof(sd) ? size : sizeof(sd));
	if (size > sizeof(sd)) {
		len = (size - sizeof(sd)) / sizeof(*f);
		/* An aligned copy: the fuzzer's buffer need not be. */
		f = malloc(len ? len * sizeof(*f) : 1);
		if (!f)
			return 0;
		memcpy(f, data + sizeof(sd), len * sizeof(*f));
	}

	memset(&err, 0x55, sizeof(err));
	v = c2e_validate(f, len, &err);
	if (v) {
		if (v != -EINVAL || !memchr(err.msg, 0, sizeof(err.msg)) ||
		    err.index < -1 || err.index >= (int)len) {
			dump("c2e_validate: bad error report", f, len, NULL);
			abort();
		}
		c2e_error_str(&err, buf, sizeof(buf));
	}

	kc = c2e_kernel_insn_count(f, len);
	if (v == 0 && (kc < 3 + (int)len || kc > 3 + 5 * (int)len)) {
		fprintf(stderr, "count %d for %zu insns\n", kc, len);
		dump("c2e_kernel_insn_count out of range for a valid program", f, len, NULL);
		abort();
	}

	if (len)
		check_text(f, len, v == 0);
	if (v == 0) {
		check_kernel(f, len, &sd);
		check_gate(f, len, &sd);
	}
	free(f);
	return 0;
}

/* ---- seed corpus ------------------------------------------------------- */

static void write_seed(const char *dir, const char *name,
		       const struct sock_filter *f, size_t len)
{
	struct seccomp_data sd = { .nr = 39, .arch = C2E_AUDIT_ARCH_X86_64,
				   .instruction_pointer = 0x401000,
				   .args = { 1, 0x80000000ull, 0xffffffffffffffffull } };

	fuzz_seed_write_head(dir, name, &sd, sizeof(sd), f, len * sizeof(*f));
}

static void write_seeds(const char *dir)
{
	const struct sock_filter allow[] = { STMT(BPF_RET | BPF_K, 0x7fff0000) };
	const struct sock_filter arch_allowlist[] = {
		STMT(BPF_LD | BPF_W | BPF_ABS, 4),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, C2E_AUDIT_ARCH_X86_64, 1, 0),
		STMT(BPF_RET | BPF_K, 0x80000000),
		STMT(BPF_LD | BPF_W | BPF_ABS, 0),
		JUMP(BPF_JMP | BPF_JGE | BPF_K, C2E_X32_SYSCALL_BIT, 5, 0),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 3, 0),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1, 2, 0),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, 39, 1, 0),
		STMT(BPF_RET | BPF_K, 0x00050001),
		STMT(BPF_RET | BPF_K, 0x7fff0000),
		STMT(BPF_RET | BPF_K, 0x00030007),
	};
	const struct sock_filter args[] = {
		STMT(BPF_LD | BPF_W | BPF_ABS, 20),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 3),
		STMT(BPF_LD | BPF_W | BPF_ABS, 16),
		JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x80000000, 1, 0),
		STMT(BPF_RET | BPF_K, 0x7fff0000),
		STMT(BPF_RET | BPF_K, 0x00050016),
	};
	const struct sock_filter scratch[] = {
		STMT(BPF_LD | BPF_W | BPF_ABS, 24),
		STMT(BPF_ST, 3),
		STMT(BPF_LDX | BPF_W | BPF_LEN, 0),
		STMT(BPF_ALU | BPF_DIV | BPF_X, 0),
		STMT(BPF_MISC | BPF_TAX, 0),
		STMT(BPF_LD | BPF_MEM, 3),
		STMT(BPF_ALU | BPF_DIV | BPF_X, 0),
		STMT(BPF_ALU | BPF_LSH | BPF_X, 0),
		STMT(BPF_ALU | BPF_NEG, 0),
		STMT(BPF_STX, 15),
		STMT(BPF_LDX | BPF_MEM, 15),
		STMT(BPF_MISC | BPF_TXA, 0),
		STMT(BPF_JMP | BPF_JA, 0),
		STMT(BPF_RET | BPF_A, 0),
	};

	write_seed(dir, "allow", allow, 1);
	write_seed(dir, "arch-allowlist", arch_allowlist,
		   sizeof(arch_allowlist) / sizeof(arch_allowlist[0]));
	write_seed(dir, "args", args, sizeof(args) / sizeof(args[0]));
	write_seed(dir, "scratch-div", scratch, sizeof(scratch) / sizeof(scratch[0]));
}

FUZZ_SEED_INITIALIZE("fuzz_c2e", write_seeds)
