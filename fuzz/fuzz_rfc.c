// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target over the 2012 RFC ABIs of classic2ebpf (c2e_*_abi).
 *
 * Input: byte 0 chooses the case (bit 0: i386 layout, else x86-64; bit 1:
 * C2E_EMIT_SEARCH); the next 216 bytes are the registers (zero-filled
 * when the input is shorter; i386 uses the first 68); the rest, truncated
 * to a multiple of 8, is a struct sock_filter array. For every input:
 *   - c2e_validate_abi() must not crash and must fill a printable error,
 *     and must accept whatever seccomp(2) accepts (a seccomp_data filter
 *     only loads below 64, inside both layouts);
 *   - c2e_disasm_classic_abi() output must parse back
 *     (c2e_asm_parse_abi()) to the same bytes;
 * and for a valid program:
 *   - c2e_interpret_abi() reads only the layout's bytes (the registers
 *     are copied to a buffer of exactly that size, so ASan sees any
 *     overrun);
 *   - c2e_translate_abi() must succeed, the verifier must accept it, and
 *     BPF_PROG_TEST_RUN must return what the interpreter returns, on
 *     registers derived from the input.
 *
 * Environment: SF_FUZZ_NO_KERNEL=1 skips the kernel; SF_FUZZ_SEED_DIR=DIR
 * writes a seed corpus into DIR and exits.
 */
#define _GNU_SOURCE
#include "c2e.h"
#include "fuzzseed.h"
#include "sockfilter.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HEAD (1 + C2E_ABI_MAX_SIZE)
#define N_INPUTS 5

static int kernel_off = -1;
static char verifier_log[1 << 16];

static void fail(const char *why, enum c2e_abi abi, const struct sock_filter *f,
		 size_t len)
{
	size_t i;

	fprintf(stderr, "fuzz_rfc: %s (%s)\n  filter (%zu insns):\n", why,
		c2e_abi_name(abi), len);
	for (i = 0; i < len && i < 256; i++)
		fprintf(stderr, "    %4zu: {0x%04x, %3u, %3u, 0x%08x}\n", i,
			f[i].code, f[i].jt, f[i].jf, f[i].k);
	abort();
}

static void check_text(const struct sock_filter *f, size_t len,
		       enum c2e_abi abi)
{
	struct sock_filter *back = NULL;
	struct c2e_error err = { 0 };
	size_t text_len = 0, back_len = 0;
	char *text = NULL;
	FILE *fp = open_memstream(&text, &text_len);
	int r;

	if (!fp)
		return;
	r = c2e_disasm_classic_abi(f, len, abi, fp);
	fclose(fp);
	if (!r && (c2e_asm_parse_abi(text, text_len, abi, &back, &back_len, &err) ||
		   back_len != len || memcmp(back, f, len * sizeof(*f)))) {
		fprintf(stderr, "--- disassembly ---\n%s--- end ---\n%s\n", text,
			err.msg);
		fail("disassembly does not assemble back to the same bytes", abi, f, len);
	}
	free(back);
	free(text);
}

/* The registers as given, zeroed, all ones, small values (which meet the
 * programs' constants and X + k in range) and counting bytes. */
static void derive_inputs(const uint8_t *regs, size_t size,
			  uint8_t out[N_INPUTS][C2E_ABI_MAX_SIZE])
{
	size_t i;

	memcpy(out[0], regs, size);
	memset(out[1], 0, size);
	memset(out[2], 0xff, size);
	for (i = 0; i < size; i++) {
		out[3][i] = regs[i] & 0x3f;
		out[4][i] = i + 1;
	}
}

static int load(const struct c2e_ebpf *prog, enum c2e_abi abi,
		const struct sock_filter *f, size_t len)
{
	int fd;

	verifier_log[0] = 0;
	fd = c2e_kernel_load_abi(prog, abi, verifier_log, sizeof(verifier_log));
	if (fd == -EPERM || fd == -ENOSYS) {
		fprintf(stderr, "fuzz_rfc: cannot load BPF (%s): kernel checks off\n",
			strerror(-fd));
		kernel_off = 1;
	} else if (fd < 0) {
		size_t n = strlen(verifier_log);

		fprintf(stderr, "c2e_kernel_load_abi: %s\n%s\n", strerror(-fd),
			verifier_log + (n > 4000 ? n - 4000 : 0));
		c2e_disasm_ebpf(prog->insns, prog->len, stderr);
		fail("the verifier refused our translation", abi, f, len);
	}
	return fd;
}

static void check_run(const struct sock_filter *f, size_t len, enum c2e_abi abi,
		      unsigned int flags, const uint8_t *regs)
{
	static uint8_t inputs[N_INPUTS][C2E_ABI_MAX_SIZE];
	size_t size = c2e_abi_data_size(abi), i;
	struct c2e_ebpf prog = { 0 };
	uint32_t want[N_INPUTS], got;
	int fd = -1, r;

	derive_inputs(regs, size, inputs);
	for (i = 0; i < N_INPUTS; i++) {
		uint8_t *exact = malloc(size);

		if (!exact)
			return;
		memcpy(exact, inputs[i], size);
		want[i] = c2e_interpret_abi(f, len, abi, exact);
		free(exact);
	}
	r = c2e_translate_abi(f, len, abi, flags, &prog);
	if (r == -ENOMEM)
		return;
	if (r)
		fail("c2e_translate_abi refused a valid program", abi, f, len);
	if (kernel_off < 0) {
		const char *e = getenv("SF_FUZZ_NO_KERNEL");

		kernel_off = e && *e == '1';
	}
	if (!kernel_off)
		fd = load(&prog, abi, f, len);
	for (i = 0; fd >= 0 && i < N_INPUTS; i++) {
		if (c2e_kernel_run_abi(fd, abi, inputs[i], &got))
			fail("BPF_PROG_TEST_RUN failed", abi, f, len);
		if (got != want[i]) {
			fprintf(stderr, "input %zu: kernel returned 0x%08x, interpreter 0x%08x\n",
				i, got, want[i]);
			c2e_disasm_ebpf(prog.insns, prog.len, stderr);
			fail("translation and interpreter disagree", abi, f, len);
		}
	}
	if (fd >= 0)
		close(fd);
	c2e_ebpf_free(&prog);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t head[HEAD] = { 0 };
	enum c2e_abi abi;
	struct sock_filter *f;
	struct c2e_error err;
	size_t len = size > HEAD ? (size - HEAD) / sizeof(*f) : 0;
	char buf[300];
	int v;

	memcpy(head, data, size < HEAD ? size : HEAD);
	abi = head[0] & 1 ? C2E_ABI_RFC_I386 : C2E_ABI_RFC_X86_64;
	/* An aligned copy: the fuzzer's buffer need not be. */
	f = malloc(len ? len * sizeof(*f) : 1);
	if (!f)
		return 0;
	if (len)
		memcpy(f, data + HEAD, len * sizeof(*f));

	memset(&err, 0x55, sizeof(err));
	v = c2e_validate_abi(f, len, abi, &err);
	if (v && (v != -EINVAL || !memchr(err.msg, 0, sizeof(err.msg)) ||
		  err.index < -1 || err.index >= (int)len))
		fail("c2e_validate_abi: bad error report", abi, f, len);
	if (v)
		c2e_error_str(&err, buf, sizeof(buf));
	if (v && c2e_validate(f, len, NULL) == 0)
		fail("a filter seccomp(2) accepts is refused", abi, f, len);
	if (len)
		check_text(f, len, abi);
	if (v == 0)
		check_run(f, len, abi, head[0] & 2 ? C2E_EMIT_SEARCH : 0, head + 1);
	free(f);
	return 0;
}

/* ---- seed corpus ------------------------------------------------------- */

static void write_seed(const char *dir, const char *name, uint8_t sel,
		       const struct sock_filter *f, size_t len)
{
	uint8_t head[HEAD] = { sel };
	int i;

	for (i = 1; i < HEAD; i++)
		head[i] = i * 7;
	head[1 + 120] = 39;  /* orig_rax = getpid */
	head[1 + 44] = 4;    /* orig_eax = write (i386) */
	head[1 + 0] = 1;     /* ebx = 1 */
	fuzz_seed_write_head(dir, name, head, sizeof(head), f, len * sizeof(*f));
}

static void write_seeds(const char *dir)
{
	const struct sock_filter seed[] = { /* the 2012 example, i386 */
		STMT(BPF_LD | BPF_W | BPF_IND, 44),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, 173, 10, 0),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, 119, 9, 0),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, 252, 8, 0),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1, 7, 0),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, 3, 1, 0),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, 4, 2, 6),
		STMT(BPF_LD | BPF_W | BPF_IND, 0),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 3, 4),
		STMT(BPF_LD | BPF_W | BPF_IND, 0),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1, 1, 0),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, 2, 0, 1),
		STMT(BPF_LD | BPF_W | BPF_LEN, 0),
		STMT(BPF_RET | BPF_A, 0),
	};
	const struct sock_filter native[] = {
		STMT(BPF_LD | BPF_W | BPF_ABS, 120),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, 39, 0, 4),
		STMT(BPF_LD | BPF_W | BPF_ABS, 113),
		STMT(BPF_MISC | BPF_TAX, 0),
		STMT(BPF_LD | BPF_W | BPF_IND, 3),
		STMT(BPF_RET | BPF_A, 0),
		STMT(BPF_LDX | BPF_W | BPF_LEN, 0),
		STMT(BPF_MISC | BPF_TXA, 0),
		STMT(BPF_RET | BPF_A, 0),
	};

	write_seed(dir, "seed-i386", 1, seed, sizeof(seed) / sizeof(seed[0]));
	write_seed(dir, "native", 0, native, sizeof(native) / sizeof(native[0]));
	write_seed(dir, "native-search", 2, native, sizeof(native) / sizeof(native[0]));
}

FUZZ_SEED_INITIALIZE("fuzz_rfc", write_seeds)
