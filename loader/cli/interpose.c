// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libsfprctl: the interposer sfrun puts in LD_PRELOAD (built for x86-64 and,
 * where the multilib packages are, for i386), so that an unmodified program's
 * filter calls reach sfilterd instead of the kernel.
 *
 * $SFILTER_INTERPOSE (set by sfrun) says what is routed:
 *   prctl    prctl(PR_ATTACH_SECCOMP_FILTER, prog) attaches a filter of the
 *            2012 interface (sf_prctl_attach()). Today's kernels read
 *            option 36 as PR_SET_CHILD_SUBREAPER and return 0: a failed
 *            attach must never reach them, so it returns -1 here. An
 *            argument of 0 or 1 is no program but PR_SET_CHILD_SUBREAPER
 *            as its users call it, and goes to the kernel (whose filter,
 *            from sfrun --prctl, fails option 36 with any other).
 *   seccomp  prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, prog) and libc's
 *            syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, prog)
 *            attach ordinary seccomp_data filters (sf_attach(), the same
 *            flags). A system call made without libc is not seen and still
 *            reaches the kernel, which then enforces that filter itself.
 * Every other call passes through unchanged, and so does every call the
 * client itself makes through syscall() while it attaches (the gate's
 * seccomp(2) among them, loader/client/selfgate.c). The libc functions this needs
 * are resolved before main(), so that nothing here makes a system call of
 * its own once a filter is in force.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sfclient.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#define SF_EXPORT __attribute__((visibility("default")))

#define ROUTE_PRCTL   0x1
#define ROUTE_SECCOMP 0x2

static unsigned int route;
static long (*real_syscall)(long, ...);
/* Set while this thread is inside libsfclient: its own calls are its. */
static __thread int in_client;

__attribute__((constructor)) static void interpose_init(void)
{
	const char *m = getenv("SFILTER_INTERPOSE");

	real_syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	if (!m)
		return;
	if (strstr(m, "prctl"))
		route |= ROUTE_PRCTL;
	if (strstr(m, "seccomp"))
		route |= ROUTE_SECCOMP;
}

/* The system call itself, with libc's syscall() when there is one above
 * us (dlsym found it), else this object's own copy. */
static long pass(long nr, long a, long b, long c, long d, long e, long f)
{
	if (real_syscall)
		return real_syscall(nr, a, b, c, d, e, f);
	errno = ENOSYS;
	return -1;
}

static int client_attach(const struct sock_fprog *prog, unsigned int flags)
{
	int r;

	in_client = 1;
	r = sf_attach(prog, flags);
	in_client = 0;
	return r;
}

static int client_prctl_attach(const struct sock_fprog *prog)
{
	int r;

	in_client = 1;
	r = sf_prctl_attach(prog);
	in_client = 0;
	return r;
}

SF_EXPORT int prctl(int option, ...)
{
	unsigned long a[4];
	va_list ap;
	int i;

	va_start(ap, option);
	for (i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	if (option == PR_ATTACH_SECCOMP_FILTER && (route & ROUTE_PRCTL) && a[0] > 1 &&
	    !in_client)
		return client_prctl_attach((const struct sock_fprog *)a[0]);
	if (option == PR_SET_SECCOMP && a[0] == SECCOMP_MODE_FILTER &&
	    (route & ROUTE_SECCOMP) && !in_client)
		return client_attach((const struct sock_fprog *)a[1], 0);
	return (int)pass(SYS_prctl, option, (long)a[0], (long)a[1], (long)a[2],
			 (long)a[3], 0);
}

SF_EXPORT long syscall(long nr, ...)
{
	long a[6];
	va_list ap;
	int i;

	va_start(ap, nr);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (in_client)
		return pass(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	if (nr == SYS_seccomp && a[0] == SECCOMP_SET_MODE_FILTER &&
	    (route & ROUTE_SECCOMP))
		return client_attach((const struct sock_fprog *)a[2], (unsigned int)a[1]);
	if (nr == SYS_prctl && (route & ROUTE_PRCTL) &&
	    a[0] == PR_ATTACH_SECCOMP_FILTER && (unsigned long)a[1] > 1)
		return client_prctl_attach((const struct sock_fprog *)a[1]);
	return pass(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
