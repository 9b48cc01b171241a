/* SPDX-License-Identifier: LGPL-2.1-or-later */
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
#include <linux/audit.h>   /* AUDIT_ARCH_* */
#include <asm/unistd.h>    /* __X32_SYSCALL_BIT */

#ifdef __cplusplus
extern "C" {
#endif

/* Limits the kernel enforces (include/uapi/linux/filter.h, kernel/seccomp.c). */
#define C2E_MAX_INSNS        BPF_MAXINSNS    /* 4096 */
#define C2E_MEMWORDS         BPF_MEMWORDS    /* scratch slots M[0..15] */
#define C2E_DATA_SIZE        64     /* sizeof(struct seccomp_data) */
#define C2E_MAX_CHAIN_INSNS  32768  /* MAX_INSNS_PER_PATH */
#define C2E_CHAIN_PENALTY    4      /* per attached filter, in the chain sum */
/* The least the kernel's conversion of a filter can be (c2e_kernel_insn_count()
 * of a lone "ret a"), so the most filters one chain can hold. */
#define C2E_MIN_KERNEL_INSNS 4
#define C2E_MAX_CHAIN_FILTERS (C2E_MAX_CHAIN_INSNS / (C2E_MIN_KERNEL_INSNS + C2E_CHAIN_PENALTY))

/* Audit architectures a filter sees in seccomp_data.arch on x86, and the
 * x32 bit of seccomp_data.nr: the UAPI's values, as uint32_t. */
#define C2E_AUDIT_ARCH_X86_64 ((uint32_t)AUDIT_ARCH_X86_64)
#define C2E_AUDIT_ARCH_I386   ((uint32_t)AUDIT_ARCH_I386)
#define C2E_X32_SYSCALL_BIT   ((uint32_t)__X32_SYSCALL_BIT)

/* Actions: the top 16 bits of a filter's return value. */
#define C2E_RET_ACTION_FULL  ((uint32_t)SECCOMP_RET_ACTION_FULL)
#define C2E_RET_DATA         ((uint32_t)SECCOMP_RET_DATA)
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

/* The actions whose 16 data bits (SECCOMP_RET_DATA) the kernel acts on:
 * the errno, TRAP's si_errno, the tracer's message. Every other action's
 * data is ignored. */
#define C2E_DATA_ACTIONS SECCOMP_RET_ERRNO, SECCOMP_RET_TRAP, SECCOMP_RET_TRACE
/* 1 when action (ret & SECCOMP_RET_ACTION_FULL) is one of them. */
int c2e_action_has_data(uint32_t action);

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
/* Appends one instruction (the rest of it zero), growing the program: the
 * one emitter of the library and of the frames callers build around its
 * bodies. 0 or -ENOMEM. */
int c2e_ebpf_emit(struct c2e_ebpf *out, uint8_t code, uint8_t dst,
		  uint8_t src, int16_t off, int32_t imm);

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
/*
 * C2E_EMIT_RET_INDEX: on exit w1 also holds the classic index of the "ret"
 * that returned (len for the implicit "return 0" of a division by zero or
 * a failed load), so a frame can count rules or name the one that
 * decided; r1 joins the clobber list. Identical rets are then kept apart
 * (not merged), which costs a few instructions. Without it the output is
 * unchanged and r1 untouched.
 */
#define C2E_EMIT_RET_INDEX 0x2
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
int c2e_translate_chain_flags(const struct sock_fprog *chain, size_t n,
			      unsigned int flags, struct c2e_ebpf *out);

/*
 * The fold of c2e_translate_chain() and of any frame that runs bodies
 * newest first: the kernel's stacking rule (c2e_stack_combine()) in eBPF.
 * On entry w0 is the verdict of the body just run and the 32-bit word at
 * r10 + rank_off the rank (the action, signed) of the best verdict so far.
 * When w0's action ranks strictly lower, the word takes w1 = its rank and
 * the n_keep instructions of keep run (they record the new best: w9 = w0,
 * who decided); otherwise they are skipped. keep jumps nowhere. Clobbers
 * r1 and r2. 0, -EINVAL (keep too long) or -ENOMEM.
 */
int c2e_emit_fold(struct c2e_ebpf *out, int16_t rank_off,
		  const struct bpf_insn *keep, size_t n_keep);

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
 * a truncated raw file or bad text. Does not validate. "-" is stdin. */
int c2e_load_file(const char *path, struct sock_filter **out, size_t *len,
		  struct c2e_error *err);
/* Writes raw bytes to path ("-": stdout). */
int c2e_save_raw(const char *path, const struct sock_filter *insns,
		 size_t len);

/* ---- a second filter ABI: the 2012 proposal (rfc.c) ---------------------
 * Will Drewry's PR_ATTACH_SECCOMP_FILTER RFC (January 2012) ran classic BPF
 * over the task's struct user_regs_struct as PTRACE_GETREGS shows it just
 * after syscall entry, the number in orig_rax / orig_eax. Returning exactly
 * the data's size allows the call; any other value blocks it.
 *
 * An RFC filter may use what a seccomp filter may, plus LD W IND
 * (A = u32 at X + k). Loads are native-endian at any byte offset; LEN is the
 * layout's size. A constant load past the end is refused at validation; an
 * IND load past the end (X + k computed in 32 bits, a wrap counting as past
 * the end) stops the filter with 0 (blocked), classic BPF's failed load.
 *
 * Every *_abi function with C2E_ABI_SECCOMP is the seccomp_data function of
 * the same name; the RFC cases are the additions.
 */
enum c2e_abi {
	C2E_ABI_SECCOMP = 0,    /* struct seccomp_data, 64 bytes */
	C2E_ABI_RFC_X86_64 = 1, /* native x86-64 user_regs_struct, 27 x 8 */
	C2E_ABI_RFC_I386 = 2,   /* compat i386 user_regs_struct, 17 x 4 */
};
#define C2E_RFC_X86_64_SIZE 216
#define C2E_RFC_I386_SIZE   68
#define C2E_ABI_MAX_SIZE    C2E_RFC_X86_64_SIZE

/* 64, 216 or 68; 0 for an unknown abi. */
size_t c2e_abi_data_size(enum c2e_abi abi);
/* "seccomp", "rfc2012", "rfc2012-i386"; NULL for an unknown abi. */
const char *c2e_abi_name(enum c2e_abi abi);
/* The inverse of c2e_abi_name(); also "rfc2012-x86_64". 0 or -EINVAL. */
int c2e_abi_parse(const char *name, enum c2e_abi *abi);

/* c2e_validate() for an ABI. 0 or -EINVAL with *err filled. */
int c2e_validate_abi(const struct sock_filter *insns, size_t len,
		     enum c2e_abi abi, struct c2e_error *err);
/* c2e_interpret() for an ABI, over c2e_abi_data_size(abi) bytes at data.
 * Returns the filter's raw 32-bit return value. */
uint32_t c2e_interpret_abi(const struct sock_filter *insns, size_t len,
			   enum c2e_abi abi, const void *data);
/* The seccomp verdict of an RFC filter's raw return: SECCOMP_RET_ALLOW when
 * raw is the layout's size, else SECCOMP_RET_KILL_PROCESS (a block ranks as
 * a kill when stacked with seccomp_data filters). For C2E_ABI_SECCOMP, raw
 * is already a verdict and is returned as it is. */
uint32_t c2e_rfc_verdict(enum c2e_abi abi, uint32_t raw);

/*
 * The body for an ABI: the contract of c2e_emit_body_flags() except that
 * r6 points to c2e_abi_data_size(abi) readable bytes (stack, map value, or
 * any memory whose 4-byte-aligned words the verifier lets the body read;
 * the base must be 4-byte aligned) and w0 is the filter's RAW return (the
 * caller maps it with c2e_rfc_verdict()). Unaligned loads are assembled
 * from byte loads, because the verifier refuses unaligned stack access;
 * for that the body briefly keeps X in the scratch area's free words and
 * uses r8, which it restores: the clobber list stays r0, r7, r8.
 */
int c2e_emit_body_abi(const struct sock_filter *insns, size_t len,
		      enum c2e_abi abi, int scratch_off, unsigned int flags,
		      struct c2e_ebpf *out);

/*
 * The RFC test frame: a BPF_PROG_TYPE_SOCKET_FILTER program that copies the
 * registers from its packet to the stack (bpf_skb_load_bytes()), points r6
 * at them and runs the body: the strictest frame for alignment. Its return
 * value is the raw return. c2e_kernel_load_abi() loads it;
 * c2e_kernel_run_abi() runs it once over c2e_abi_data_size(abi) bytes.
 * For C2E_ABI_SECCOMP these are c2e_translate_flags(), c2e_kernel_load()
 * and c2e_kernel_run().
 */
int c2e_translate_abi(const struct sock_filter *insns, size_t len,
		      enum c2e_abi abi, unsigned int flags,
		      struct c2e_ebpf *out);
int c2e_kernel_load_abi(const struct c2e_ebpf *prog, enum c2e_abi abi,
			char *log, size_t log_size);
int c2e_kernel_run_abi(int prog_fd, enum c2e_abi abi, const void *data,
		       uint32_t *ret);

/* user_regs_struct fields: the byte offset of a field name ("orig_rax",
 * "ebx"; case-insensitive) or -ENOENT; the name of the field starting at
 * off, or NULL. Fields are 8 bytes (x86-64) or 4 bytes (i386). The seccomp
 * ABI has no register names here (-ENOENT / NULL). */
int c2e_rfc_reg_offset(enum c2e_abi abi, const char *name);
const char *c2e_rfc_reg_name(enum c2e_abi abi, unsigned int off);
/* The field holding the syscall number: orig_rax (120) or orig_eax (44). */
int c2e_rfc_nr_offset(enum c2e_abi abi);

/* The seccomp_data twin of a 2012 filter (rfc_map.c): a seccomp filter
 * whose verdict, for every call of the filter's own arch, is
 * c2e_rfc_verdict() of the 2012 filter's; ALLOW for other arches (their
 * arguments are in other registers). Exists when the filter reads only
 * the number (orig_rax's low word, orig_eax), the instruction pointer and
 * the six argument registers, by constant loads, and never divides by X.
 * 0, or -EOPNOTSUPP naming the instruction that has no twin, or -EINVAL
 * for an invalid filter. */
int c2e_rfc_to_seccomp(enum c2e_abi abi, const struct sock_filter *in, size_t len,
		       struct sock_filter **out, size_t *out_len, struct c2e_error *err);

/* The text form for an ABI. RFC listings show constant loads by field,
 * "ld [orig_rax]", and indirect loads by offset with the field as a
 * comment, "ld [x+120]  ; orig_rax"; unnamed offsets print as numbers.
 * c2e_asm_parse_abi() reads that back to the same bytes and also takes a
 * field name wherever a load offset goes ("ld [x+orig_eax]"); the
 * seccomp_data names (nr, arch, args[i]) belong to C2E_ABI_SECCOMP only. */
int c2e_disasm_classic_abi(const struct sock_filter *insns, size_t len,
			   enum c2e_abi abi, FILE *out);
int c2e_asm_parse_abi(const char *text, size_t text_len, enum c2e_abi abi,
		      struct sock_filter **out, size_t *len,
		      struct c2e_error *err);
/* c2e_load_file() whose text form is read for abi. */
int c2e_load_file_abi(const char *path, enum c2e_abi abi,
		      struct sock_filter **out, size_t *len,
		      struct c2e_error *err);
/* The same over a file's size bytes at buf, read by the caller (who may
 * need to open it its own way). */
int c2e_load_buf_abi(const char *buf, size_t size, enum c2e_abi abi,
		     struct sock_filter **out, size_t *len, struct c2e_error *err);

/* Constant verdicts: c2e_const_verdict() knows seccomp_data only. A chain
 * with an RFC filter in it is to be treated as non-constant for that
 * filter (its verdict depends on registers the analysis does not model);
 * there is no c2e_const_verdict_abi(). */

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

/* ---- differences between two chains (diff.c, diff_class.c) ---------------
 * Where two chains (attach order, as above; n may be 0: no filter, every
 * call allowed) give different verdicts, for every (arch, nr) of x86: the
 * numbers 0..1023 of x86_64, i386 and x32 (the x32 bit set), and every
 * constant k either chain compares with (k and k + 1, filed under x32 when
 * k has the bit): where nr is only compared with constants, as libseccomp
 * compiles it, these are one number of every class of numbers.
 *
 * Verdicts are compared as the kernel acts on them (c2e_verdict_canon()).
 * Where a number's verdict depends on its arguments, each seccomp_data word
 * the filters test splits into the classes of the predicates on it: raw
 * compares with constants give intervals, masked compares (and, jset) give
 * the outcomes over the masks' bits; one value of every class, on the
 * product of the tested words, is run through the interpreter (both
 * chains). A word that goes through other arithmetic, or a product too big
 * to run whole, is sampled (boundaries and random values) and the number is
 * then "sampled, not proven": its regions are real differences but others
 * may exist.
 */
/* The verdict as the kernel acts on it: the action (an unknown one is
 * KILL_PROCESS), with its data only for ERRNO (capped at 4095, as
 * seccomp does), TRAP and TRACE. */
uint32_t c2e_verdict_canon(uint32_t ret);
/* 1 when the call runs: ALLOW or LOG. */
int c2e_verdict_allows(uint32_t ret);

/* seccomp_data's words, 4 bytes each: 0 nr, 1 arch, 2-3 the instruction
 * pointer (low, high), 4 + 2i and 5 + 2i args[i] (low, high). */
#define C2E_DIFF_WORDS 16
/* "nr", "arch", "ip", "ip.hi", "args[2]" (the low 32 bits), "args[2].hi". */
const char *c2e_diff_word_name(unsigned int word, char *buf, size_t size);

struct c2e_diff_region {
	uint32_t arch;              /* C2E_AUDIT_ARCH_* */
	uint32_t nr;                /* as seccomp_data.nr (x32 bit included) */
	uint32_t a, b;              /* the two verdicts (c2e_verdict_canon()) */
	struct seccomp_data witness;/* one call of the region */
	uint16_t words;             /* bit i: the region constrains word i */
	int sampled;                /* this number was sampled, not proven */
	char where[480];            /* "args[0] & 0x7e020000 != 0 && args[0].hi == 0";
				       "" for every call of the number */
};
struct c2e_diff_number {
	uint32_t arch, nr;
};
struct c2e_diff {
	struct c2e_diff_region *regions;   /* by arch (x86_64, i386, x32), nr */
	size_t n;
	/* Numbers where no difference was found but that were sampled. */
	struct c2e_diff_number *unproven;
	size_t n_unproven;
	size_t numbers;     /* (arch, nr) pairs compared */
	size_t differ;      /* of them, with a difference */
	size_t with_args;   /* of those, where the arguments decide */
	size_t classed;     /* numbers not constant on both sides: run on the
			       classes of their arguments */
	size_t points;      /* seccomp_data run through both chains */
};
/* Fills *out (c2e_diff_free() it, also after an error). 0, or -EINVAL with
 * *err filled for an invalid filter ("A filter 1: insn ..."), -ENOMEM. */
int c2e_diff_chains(const struct sock_fprog *a, size_t na,
		    const struct sock_fprog *b, size_t nb,
		    struct c2e_diff *out, struct c2e_error *err);
void c2e_diff_free(struct c2e_diff *d);
/* ---- end differences ---- */

/* ---- the gate (gate.c) -------------------------------------------------
 * One classic seccomp filter for a chain (attach order, as above) that
 * returns SECCOMP_RET_ALLOW wherever the chain's stacked action is ALLOW or
 * LOG, and SECCOMP_RET_USER_NOTIF everywhere else, for a supervisor to
 * judge. c2e_gate_len() is the length of its linear form (the filters end
 * to end), or -EINVAL past BPF_MAXINSNS: whether a gate can be built;
 * c2e_gate_build() validates every filter, builds the gate into a malloc'd
 * *out and validates it. 0 or -errno, with *err filled: -EOPNOTSUPP for a
 * filter that divides by X (a zero X would kill in the kernel). Where it
 * fits and costs seccomp(2) less to install, the gate built is the
 * searched form (gate_tree.c): a binary search on nr that answers every
 * number whose verdict the arguments do not decide, and sends the others
 * to the instructions that decide them.
 */
int c2e_gate_len(const struct sock_fprog *chain, size_t n, struct c2e_error *err);
int c2e_gate_build(const struct sock_fprog *chain, size_t n,
		   struct sock_filter **out, size_t *out_len, struct c2e_error *err);
/* Which form c2e_gate_build_as() builds: the cheaper for seccomp(2) to
 * install (what c2e_gate_build() builds), the filters end to end, or the
 * searched form wherever it fits (the last two for tests and benches). */
enum c2e_gate_form { C2E_GATE_BEST, C2E_GATE_LINEAR, C2E_GATE_SEARCH };
int c2e_gate_build_as(const struct sock_fprog *chain, size_t n, enum c2e_gate_form form,
		      struct sock_filter **out, size_t *out_len, struct c2e_error *err);

#ifdef __cplusplus
}
#endif
#endif /* C2E_H */
