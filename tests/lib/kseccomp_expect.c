// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the real kernel seccomp is expected to do (see kseccomp.h): the
 * harmless calls and their unfiltered outcomes, which ABIs this kernel
 * runs, and the outcome each filter verdict predicts.
 *
 * Kernel facts this file relies on (kernel/seccomp.c, the same in 6.1 and
 * 6.18):
 *  - seccomp_init_siginfo(): si_call_addr is the user IP after the syscall
 *    instruction, si_errno the filter's data, si_syscall sd->nr, si_arch
 *    the audit arch.
 *  - __seccomp_filter(): ERRNO caps data at MAX_ERRNO; TRACE without a
 *    tracer and USER_NOTIF without a listener return -ENOSYS; KILL_THREAD,
 *    KILL_PROCESS and unknown actions end the (single-threaded) process
 *    with SIGSYS.
 */
#include "kseccomp.h"
#include "probe.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <linux/audit.h>
#include <asm/unistd.h>

#define X32_BIT ((uint32_t)__X32_SYSCALL_BIT)

static const struct ksec_call harmless[] = {
	{ KSEC_ABI_X86_64, 39, { 0 } },   /* getpid */
	{ KSEC_ABI_X86_64, 110, { 0 } },  /* getppid */
	{ KSEC_ABI_X86_64, 102, { 0 } },  /* getuid */
	{ KSEC_ABI_X86_64, 104, { 0 } },  /* getgid */
	{ KSEC_ABI_X86_64, 107, { 0 } },  /* geteuid */
	{ KSEC_ABI_X86_64, 108, { 0 } },  /* getegid */
	{ KSEC_ABI_X86_64, 186, { 0 } },  /* gettid */
	{ KSEC_ABI_X86_64, 24, { 0 } },   /* sched_yield */
	{ KSEC_ABI_X86_64, 111, { 0 } },  /* getpgrp */
	{ KSEC_ABI_I386, 20, { 0 } },     /* getpid */
	{ KSEC_ABI_I386, 64, { 0 } },     /* getppid */
	{ KSEC_ABI_I386, 224, { 0 } },    /* gettid */
	{ KSEC_ABI_I386, 158, { 0 } },    /* sched_yield */
	{ KSEC_ABI_I386, 199, { 0 } },    /* getuid32 */
	{ KSEC_ABI_I386, 200, { 0 } },    /* getgid32 */
	{ KSEC_ABI_X32, 39 | X32_BIT, { 0 } },  /* getpid */
	{ KSEC_ABI_X32, 110 | X32_BIT, { 0 } }, /* getppid */
};
#define N_HARMLESS (sizeof(harmless) / sizeof(harmless[0]))

const struct ksec_call *ksec_harmless(size_t *n)
{
	*n = N_HARMLESS;
	return harmless;
}

static struct {
	int ready;
	struct ksec_outcome out[N_HARMLESS];
} base;

static int harmless_index(const struct ksec_call *c)
{
	size_t i;

	for (i = 0; i < N_HARMLESS; i++)
		if (harmless[i].abi == c->abi && harmless[i].nr == c->nr)
			return i;
	return -1;
}

const char *ksec_abi_name(enum ksec_abi abi)
{
	static const char *const names[] = { "x86_64", "i386", "x32" };

	return (unsigned int)abi < 3 ? names[abi] : "unknown-abi";
}

int ksec_abi_runs(enum ksec_abi abi, char *why, size_t size)
{
	if (abi == KSEC_ABI_I386)
		return probe_int80(why, size);
	/* x32 counts even where the kernel answers -ENOSYS: seccomp has
	 * run the filter on the call by then. */
	if (why && size)
		snprintf(why, size, "%s calls run", ksec_abi_name(abi));
	return 1;
}

/* The unfiltered calls, each issued only where the kernel takes its ABI:
 * int $0x80 where it is refused would just record a SIGSEGV. */
static int observe_baseline(void)
{
	struct ksec_call calls[N_HARMLESS];
	struct ksec_outcome out[N_HARMLESS];
	size_t i, n = 0;
	char why[160];
	int err;

	for (i = 0; i < N_HARMLESS; i++)
		if (ksec_abi_runs(harmless[i].abi, why, sizeof(why)) == 1)
			calls[n++] = harmless[i];
	err = ksec_observe(NULL, 0, calls, n, out);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		struct ksec_outcome *o = &base.out[harmless_index(&calls[i])];

		*o = out[i];
		/* getpid/gettid answer the calling child's own pid, which
		 * differs between children. */
		o->ret_is_pid = o->kind == KSEC_RETURNED && o->ret == o->pid;
	}
	base.ready = 1;
	return 0;
}

int ksec_baseline(const struct ksec_call *c, struct ksec_outcome *out)
{
	int i = harmless_index(c), err;

	if (i < 0)
		return -EINVAL;
	if (!base.ready) {
		err = observe_baseline();
		if (err)
			return err;
	}
	*out = base.out[i];
	return 0;
}

int ksec_runnable(const struct ksec_call *c, char *why, size_t size)
{
	struct ksec_outcome o;
	char buf[200], obuf[200];
	int r = ksec_abi_runs(c->abi, why, size), err;

	if (r != 1)
		return r;
	err = ksec_baseline(c, &o);
	if (err) {
		snprintf(why, size, "baseline of the harmless calls: %s", strerror(-err));
		return -1;
	}
	if (o.kind != KSEC_RETURNED) {
		snprintf(why, size, "unfiltered %s: %s", ksec_call_str(c, buf, sizeof(buf)),
			 ksec_outcome_str(&o, obuf, sizeof(obuf)));
		return -1;
	}
	return 1;
}

void ksec_predict(uint32_t ret, const struct ksec_call *c,
		  const struct ksec_outcome *baseline,
		  struct ksec_outcome *e)
{
	uint32_t data = ret & SECCOMP_RET_DATA;

	memset(e, 0, sizeof(*e));
	switch (ret & SECCOMP_RET_ACTION_FULL) {
	case SECCOMP_RET_ALLOW:
	case SECCOMP_RET_LOG:
		*e = *baseline;
		break;
	case SECCOMP_RET_ERRNO:
		e->kind = KSEC_RETURNED;
		e->ret = -(long)(data > 4095 ? 4095 : data);
		break;
	case SECCOMP_RET_TRAP:
		e->kind = KSEC_TRAPPED;
		e->trap_errno = data;
		e->trap_syscall = (int)c->nr;
		e->trap_arch = c->abi == KSEC_ABI_I386 ? AUDIT_ARCH_I386 : AUDIT_ARCH_X86_64;
		e->trap_addr = ksec_ip(c->abi);
		break;
	case SECCOMP_RET_TRACE:
	case SECCOMP_RET_USER_NOTIF:
		e->kind = KSEC_RETURNED;
		e->ret = -ENOSYS;
		break;
	default: /* KILL_PROCESS, KILL_THREAD, and actions the kernel lacks */
		e->kind = KSEC_KILLED;
		e->signo = SIGSYS;
	}
}

bool ksec_matches(const struct ksec_outcome *o, const struct ksec_outcome *e)
{
	if (o->kind != e->kind)
		return false;
	switch (e->kind) {
	case KSEC_RETURNED:
		return e->ret_is_pid ? o->ret == o->pid : o->ret == e->ret;
	case KSEC_TRAPPED:
		return o->trap_errno == e->trap_errno &&
		       o->trap_syscall == e->trap_syscall &&
		       o->trap_arch == e->trap_arch &&
		       o->trap_addr == e->trap_addr;
	case KSEC_KILLED:
		return o->signo == e->signo;
	default:
		return true;
	}
}

const char *ksec_outcome_str(const struct ksec_outcome *o, char *buf,
			     size_t size)
{
	switch (o->kind) {
	case KSEC_RETURNED:
		if (o->ret_is_pid)
			snprintf(buf, size, "returned the caller's pid");
		else
			snprintf(buf, size, "returned %ld", o->ret);
		break;
	case KSEC_TRAPPED:
		snprintf(buf, size,
			 "SIGSYS trap (si_errno %d, si_syscall %d, si_arch 0x%x, addr 0x%llx)",
			 o->trap_errno, o->trap_syscall, o->trap_arch,
			 (unsigned long long)o->trap_addr);
		break;
	case KSEC_KILLED:
		snprintf(buf, size, "killed by signal %d%s", o->signo,
			 o->signo == SIGSYS ? " (SIGSYS)" : "");
		break;
	case KSEC_HUNG:
		snprintf(buf, size, "hung (killed after a timeout)");
		break;
	default:
		snprintf(buf, size, "not run");
	}
	return buf;
}

const char *ksec_call_str(const struct ksec_call *c, char *buf, size_t size)
{
	snprintf(buf, size,
		 "%s nr %u (0x%x) args 0x%llx 0x%llx 0x%llx 0x%llx 0x%llx 0x%llx",
		 ksec_abi_name(c->abi), c->nr & ~(c->abi == KSEC_ABI_X32 ? X32_BIT : 0),
		 c->nr, (unsigned long long)c->args[0],
		 (unsigned long long)c->args[1], (unsigned long long)c->args[2],
		 (unsigned long long)c->args[3], (unsigned long long)c->args[4],
		 (unsigned long long)c->args[5]);
	return buf;
}
