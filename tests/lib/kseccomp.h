/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Probes of the REAL kernel seccomp, the oracle the translator is held to.
 *
 * Validity: ksec_validates() asks seccomp(2) itself whether it accepts a
 * program, without forking per program. One long-lived child fills its
 * filter chain up to the kernel's instruction budget with ALLOW filters;
 * from then on every VALID filter it tries to add fails with ENOMEM
 * (seccomp_attach_filter(): the chain would exceed MAX_INSNS_PER_PATH)
 * while every INVALID one fails with EINVAL first (seccomp_set_mode_filter()
 * prepares, and so validates, the filter before it attaches it). Nothing is
 * ever installed, so the child serves programs for as long as it lives.
 *
 * Behaviour: ksec_observe() installs a chain in a forked child and issues
 * "harmless" system calls through x86_64 `syscall`, i386 `int $0x80` and
 * x32, recording what happened with no other system call in between.
 */
#ifndef SF_TESTS_KSECCOMP_H
#define SF_TESTS_KSECCOMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

/* ---- validity ------------------------------------------------------------
 * 1 when seccomp(2) accepts the program, 0 when it refuses it (EINVAL),
 * or a negative errno when the probe itself failed: -EPROTO when the kernel
 * answered anything but EINVAL/ENOMEM (the answer is kept in
 * ksec_validator_last_errno(); 0 would mean a filter got installed).
 * Starts the serving child on first use; it checks the trick works (a
 * known-valid program gives ENOMEM, a known-invalid one EINVAL) before
 * serving. len may be 0 or above 4096.
 */
int ksec_validator_start(void);
int ksec_validates(const struct sock_filter *insns, size_t len);
int ksec_validator_last_errno(void);
/* How many filters the serving child holds and their summed budget. */
void ksec_validator_fill(int *filters, int *budget);
void ksec_validator_stop(void);

/* ---- behaviour ------------------------------------------------------------ */
enum ksec_abi {
	KSEC_ABI_X86_64,
	KSEC_ABI_I386,  /* int $0x80 from this 64-bit process */
	KSEC_ABI_X32,   /* syscall with nr | 0x40000000 */
};

struct ksec_call {
	enum ksec_abi abi;
	uint32_t nr;       /* what the filter sees: x32 numbers include the bit */
	uint64_t args[6];  /* i386 calls pass (and the filter sees) the low 32 bits */
};

enum ksec_kind {
	KSEC_NOT_RUN = 0,
	KSEC_RETURNED,     /* the call returned ret */
	KSEC_TRAPPED,      /* SIGSYS delivered to the handler */
	KSEC_KILLED,       /* the process died by signal signo */
	KSEC_HUNG,         /* killed by the parent after a timeout */
};

struct ksec_outcome {
	enum ksec_kind kind;
	long ret;          /* RETURNED: i386 results sign-extended from 32 bits */
	bool ret_is_pid;   /* expected outcomes: ret is "the calling child's pid" */
	int pid;           /* the child that made the call */
	int signo;         /* KILLED */
	int trap_errno;    /* TRAPPED: si_errno, si_syscall, si_arch, si_call_addr */
	int trap_syscall;
	uint32_t trap_arch;
	uint64_t trap_addr;
};

/* The stubs every call goes through: syscall number nr (the whole rax:
 * x32 numbers with their bit, values above 32 bits as they are; int $0x80
 * takes eax) and args[6] (int $0x80: their low 32 bits), nothing else in
 * between. The call's return value. */
long ksec_stub_syscall64(long nr, const uint64_t *args);
long ksec_stub_int80(long nr, const uint64_t *args);
/* The user IP right after the syscall / int $0x80 instruction of the
 * stubs: what seccomp_data.instruction_pointer holds for their calls. */
uint64_t ksec_ip(enum ksec_abi abi);
/* The struct seccomp_data a filter sees for the call. */
void ksec_call_data(const struct ksec_call *c, struct seccomp_data *d);

/* The calls that may really run: getpid, getppid, getuid, ... (any args). */
const struct ksec_call *ksec_harmless(size_t *n);

/*
 * Installs chain[0..n) (oldest first; n may be 0) in a forked child with
 * no_new_privs and issues every call, filling out[i]. A death ends that
 * child; a new one continues from the next call. 0 or -errno (-E2BIG when
 * a filter other than the newest is too long to be wrapped, see .c).
 */
int ksec_observe(const struct sock_fprog *chain, size_t n,
		 const struct ksec_call *calls, size_t ncalls,
		 struct ksec_outcome *out);

const char *ksec_abi_name(enum ksec_abi abi);
/* Whether the kernel runs calls of this ABI, answered as tests/lib/probe.h
 * does (1, 0 refused with why naming the feature, -1 the probe failed).
 * x86_64 and x32 always run: x32 may answer -ENOSYS, which still counts,
 * the filter runs before that answer. i386 needs int $0x80, which some
 * kernels refuse to 64-bit tasks. */
int ksec_abi_runs(enum ksec_abi abi, char *why, size_t size);

/* The unfiltered outcome of the call's (abi, nr), cached. 0 or -errno.
 * KSEC_NOT_RUN for a call whose ABI the kernel refuses. */
int ksec_baseline(const struct ksec_call *c, struct ksec_outcome *out);
/* Whether the real kernel may be given the call: 1 when its ABI runs and
 * its baseline returned normally; 0 when the kernel refuses its ABI; -1
 * when the ABI probe or the baseline failed otherwise. why says which. */
int ksec_runnable(const struct ksec_call *c, char *why, size_t size);

/*
 * What the kernel does with filter return value ret for call c, given the
 * call's baseline: ALLOW/LOG run it, ERRNO(d) returns -min(d, 4095),
 * TRAP(d) delivers SIGSYS with si_errno d, TRACE and USER_NOTIF return
 * -ENOSYS (no tracer, no listener), KILL_* and unknown actions kill by
 * SIGSYS.
 */
void ksec_predict(uint32_t ret, const struct ksec_call *c,
		  const struct ksec_outcome *baseline,
		  struct ksec_outcome *expected);
bool ksec_matches(const struct ksec_outcome *observed,
		  const struct ksec_outcome *expected);
const char *ksec_outcome_str(const struct ksec_outcome *o, char *buf,
			     size_t size);
const char *ksec_call_str(const struct ksec_call *c, char *buf, size_t size);

#endif
