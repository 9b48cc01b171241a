/* SPDX-License-Identifier: GPL-2.0 */
/*
 * classic2ebpf: kernel-exact classic seccomp filters, translated to eBPF.
 *
 * A classic seccomp filter is a struct sock_fprog over struct seccomp_data.
 * This library validates such a program exactly as Linux's seccomp(2) does,
 * runs it in a reference interpreter, translates it to eBPF that the kernel
 * verifier accepts, counts what the kernel's own converter would emit, and
 * reads and writes a text assembly form.
 *
 * Conventions: every exported name starts with c2e_ / C2E_; functions return
 * 0 (or a count) on success and a negative errno on failure.
 */
#ifndef C2E_H
#define C2E_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/bpf.h>     /* struct bpf_insn */
#include <linux/filter.h>  /* struct sock_filter, struct sock_fprog */
#include <linux/seccomp.h> /* struct seccomp_data, SECCOMP_RET_* */

#ifdef __cplusplus
extern "C" {
#endif

/* Limits the kernel enforces (include/uapi/linux/filter.h, kernel/seccomp.c). */
#define C2E_MAX_INSNS        4096   /* BPF_MAXINSNS */
#define C2E_MEMWORDS         16     /* BPF_MEMWORDS: scratch slots M[0..15] */
#define C2E_DATA_SIZE        64     /* sizeof(struct seccomp_data) */
#define C2E_MAX_CHAIN_INSNS  32768  /* MAX_INSNS_PER_PATH */
#define C2E_CHAIN_PENALTY    4      /* per attached filter, in the chain sum */

/* Audit architectures a filter sees in seccomp_data.arch on x86. */
#define C2E_AUDIT_ARCH_X86_64 0xc000003eU
#define C2E_AUDIT_ARCH_I386   0x40000003U
#define C2E_X32_SYSCALL_BIT   0x40000000U

/* Actions: the top 16 bits of a filter's return value. */
#define C2E_RET_ACTION_FULL  0xffff0000U
#define C2E_RET_DATA         0x0000ffffU
#define C2E_MAX_ERRNO        4095

/*
 * A precise error: which instruction (index into the program, or -1 when the
 * problem is the program as a whole), its opcode, and the rule it breaks.
 * For text input, line is the 1-based source line (0 when not applicable).
 */
struct c2e_error {
	int index;
	uint16_t code;
	int line;
	char msg[200];
};

/* Formats "insn 12 (code 0x0015): jump target out of range" or
 * "line 7: unknown mnemonic 'jeqq'" into buf. Returns buf. */
const char *c2e_error_str(const struct c2e_error *err, char *buf, size_t size);

/* ---- validation (validate.c) -------------------------------------------
 * Accepts exactly what seccomp(2) accepts: bpf_check_classic() plus
 * seccomp_check_filter() plus the kernel's one-pass scratch memory check.
 * Returns 0 or -EINVAL with *err filled (err may be NULL).
 */
int c2e_validate(const struct sock_filter *insns, size_t len,
		 struct c2e_error *err);

/* ---- reference interpreter (interp.c) ----------------------------------
 * Runs a program that c2e_validate() accepted, as the kernel's classic
 * interpreter would: A = X = 0, 32-bit arithmetic, DIV by X == 0 returns 0,
 * shifts by X modulo 32. Returns the filter's 32-bit return value.
 */
uint32_t c2e_interpret(const struct sock_filter *insns, size_t len,
		       const struct seccomp_data *data);

/* ---- actions and stacking (interp.c) -----------------------------------
 * A chain is an array of filters in attach order: chain[0] is the oldest,
 * chain[n-1] the newest. The kernel runs them newest first, starting from
 * SECCOMP_RET_ALLOW, and keeps a result only when its action is strictly
 * lower as a signed 32-bit value: the lowest action wins and on a tie the
 * newest filter's full value (with its data) is kept.
 */
uint32_t c2e_stack_combine(uint32_t best_so_far, uint32_t newer_result);
uint32_t c2e_stack_eval(const struct sock_fprog *chain, size_t n,
			const struct seccomp_data *data);

/* The action the kernel takes for a return value: the top 16 bits when they
 * name a known action, else SECCOMP_RET_KILL_PROCESS. */
uint32_t c2e_effective_action(uint32_t ret);
/* "ALLOW", "ERRNO", ... for a known action value, NULL otherwise. */
const char *c2e_action_name(uint32_t action);
/* "0x00050001 ERRNO(1)", "0x7fff0000 ALLOW", "0x00010000 KILL_PROCESS"
 * (an unknown action prints as the action the kernel takes). */
const char *c2e_verdict_str(uint32_t ret, char *buf, size_t size);
/* Parses "ALLOW", "KILL", "KILL_PROCESS", "KILL_THREAD", "TRAP(3)",
 * "ERRNO(1)", "TRACE(7)", "USER_NOTIF", "LOG", or a number. 0 or -EINVAL. */
int c2e_parse_action(const char *text, uint32_t *ret);

/* ---- translation to eBPF (translate.c) ---------------------------------
 * A growable eBPF program. Free with c2e_ebpf_free().
 */
struct c2e_ebpf {
	struct bpf_insn *insns;
	size_t len;
	size_t cap;
};
void c2e_ebpf_free(struct c2e_ebpf *prog);

/*
 * The body contract, so the same translation runs in more than one frame:
 *   on entry  r6 points to the 64-byte struct seccomp_data (a context
 *             pointer in the test frame, a map value at run time);
 *             the C2E_SCRATCH_BYTES below r10 - scratch_off are free for
 *             M[0..15];
 *   on exit   control falls through past the body with w0 = the filter's
 *             return value (upper 32 bits zero);
 *   clobbers  r0, r7, r8 and the scratch area. r6 and r9 are preserved;
 *             r1-r5 are untouched.
 * Unreachable classic instructions (the verifier refuses dead code) are
 * not emitted. scratch_off is a positive multiple of 8 with
 * scratch_off + C2E_SCRATCH_BYTES <= 512. The program is validated first
 * (-EINVAL when c2e_validate() refuses it).
 */
#define C2E_SCRATCH_BYTES 128
int c2e_emit_body(const struct sock_filter *insns, size_t len,
		  int scratch_off, struct c2e_ebpf *out);

/*
 * Options for the body. C2E_EMIT_SEARCH lowers runs of "jeq #k" on A (a
 * linear allowlist) into a binary search: fewer instructions executed,
 * more emitted. The runtime uses it; the default keeps the output small.
 */
#define C2E_EMIT_SEARCH 0x1
int c2e_emit_body_flags(const struct sock_filter *insns, size_t len,
			int scratch_off, unsigned int flags,
			struct c2e_ebpf *out);

/*
 * The test frame: a whole program (r6 = r1; body; exit) to load as
 * BPF_PROG_TYPE_RAW_TRACEPOINT and run with BPF_PROG_TEST_RUN, the 64-byte
 * seccomp_data as its context. Returns the filter's raw return value.
 */
int c2e_translate(const struct sock_filter *insns, size_t len,
		  struct c2e_ebpf *out);
int c2e_translate_flags(const struct sock_filter *insns, size_t len,
			unsigned int flags, struct c2e_ebpf *out);

/*
 * A whole chain compiled into one test-frame program that returns what the
 * kernel would act on (c2e_stack_eval()): every body runs, newest first,
 * folded with the kernel's precedence rule. No tail calls, so chain depth
 * is limited only by the kernel's 32768-instruction rule.
 */
int c2e_translate_chain(const struct sock_fprog *chain, size_t n,
			struct c2e_ebpf *out);

/* ---- the kernel's own conversion length (kcount.c) ---------------------
 * How many eBPF instructions net/core/filter.c's bpf_convert_filter() emits
 * for this (valid) seccomp program: the length seccomp sums to enforce
 * C2E_MAX_CHAIN_INSNS. Returns the count or a negative errno.
 */
int c2e_kernel_insn_count(const struct sock_filter *insns, size_t len);

/* ---- running translated code in the kernel (kernel_run.c) --------------
 * Loads a test-frame program as BPF_PROG_TYPE_RAW_TRACEPOINT. Returns a
 * program fd or -errno; on failure the verifier log (if any) goes to log.
 */
int c2e_kernel_load(const struct c2e_ebpf *prog, char *log, size_t log_size);
/* Runs a loaded program once over data through BPF_PROG_TEST_RUN. */
int c2e_kernel_run(int prog_fd, const struct seccomp_data *data,
		   uint32_t *ret);

/* ---- text form and files (asm.c, disasm.c, fileio.c) -------------------
 * The text assembly form is what c2e_disasm_classic() prints; it reads back
 * to the same bytes. *out is malloc'd; free() it.
 */
int c2e_asm_parse(const char *text, size_t text_len, struct sock_filter **out,
		  size_t *len, struct c2e_error *err);
int c2e_disasm_classic(const struct sock_filter *insns, size_t len, FILE *out);
int c2e_disasm_ebpf(const struct bpf_insn *insns, size_t len, FILE *out);

/* Loads a filter file: raw struct sock_filter[] bytes (what libseccomp's
 * seccomp_export_bpf() writes) or the text form; a NUL byte means raw.
 * Errors: -ENOENT/-EACCES/... for the file, -EINVAL with *err filled for
 * a truncated raw file or bad text. Does not validate. */
int c2e_load_file(const char *path, struct sock_filter **out, size_t *len,
		  struct c2e_error *err);
/* Writes raw bytes to path. */
int c2e_save_raw(const char *path, const struct sock_filter *insns,
		 size_t len);

/* ---- constant verdicts (consttable.c; used by the runtime) ----------------
 * Is the chain's verdict for (arch, nr) the same whatever the arguments and
 * the instruction pointer are? Returns 1 with *ret set when it is provably
 * constant, 0 when it is not or the analysis gives up (never a wrong 1).
 * The kernel's action cache asks this for ALLOW only; this covers every
 * action. The filters must be valid (c2e_validate()).
 */
int c2e_const_verdict(const struct sock_fprog *chain, size_t n,
		      uint32_t arch, int nr, uint32_t *ret);
/* The same, and constant in which filter decides: *winner is the index
 * into chain of the filter whose value the fold keeps, n when none does
 * (every filter returned ALLOW). */
int c2e_const_verdict_winner(const struct sock_fprog *chain, size_t n,
			     uint32_t arch, int nr, uint32_t *ret,
			     size_t *winner);
/* ---- end constant verdicts ---- */

#ifdef __cplusplus
}
#endif
#endif /* C2E_H */
