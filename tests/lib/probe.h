/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Probes of kernel features that tests need, one per feature. The machines
 * the suite runs on differ (docs: ../shared/notes/platform.md): a test
 * asks the kernel rather than assuming, and reports a missing feature as
 * a SKIP naming it, never as a failure and never as a silent pass.
 *
 * Every probe returns
 *    1  the kernel has the feature;
 *    0  the kernel refuses it; why names what is missing;
 *   -1  the probe itself failed (fork, a wrong answer, ...); why says how,
 *       and the caller fails the test (TEST_REQUIRE() in harness.h does
 *       all three).
 * why may be NULL; otherwise it is always filled.
 *
 * No probe depends on the test harness, so tests/lib code that is not a
 * test (kseccomp.c) can ask too.
 */
#ifndef SF_TEST_PROBE_H
#define SF_TEST_PROBE_H

#include <stddef.h>

/* `int $0x80` from this 64-bit task: i386 getpid (20) returns the pid in
 * a forked child. Some kernels kill the caller with SIGSEGV instead, with
 * CONFIG_IA32_EMULATION set. The answer is cached. */
int probe_int80(char *why, size_t size);

/* x32 system calls: syscall(0x40000000 | 39) is getpid. A kernel without
 * x32 answers -ENOSYS, after seccomp and sys_enter have seen the call.
 * The answer is cached. */
int probe_x32(char *why, size_t size);

/* BPF LSM programs run: an lsm/task_prctl program, loaded and attached
 * without the runtime, makes this process's prctl(PR_GET_DUMPABLE) fail
 * with EPERM. A kernel whose bpf LSM is built but not in the active lsm=
 * list loads and attaches such programs and never runs them: 0. */
int probe_bpf_lsm(char *why, size_t size);

/* The cgroup v2 mount point, from /proc/self/mountinfo, into root. */
int probe_cgroup2(char *root, size_t rsize, char *why, size_t size);

/* An unprivileged user namespace: a child that becomes uid 65534 (when
 * root) unshares CLONE_NEWUSER. Distributions can refuse it (Debian's
 * kernel.unprivileged_userns_clone, user.max_user_namespaces 0). */
int probe_unpriv_userns(char *why, size_t size);

/* /sys/kernel/security readable by this process. When the machine has not
 * mounted securityfs, mounts it in a private mount namespace of this
 * process (each test runs in its own): 0 only when that mount is refused. */
int probe_securityfs(char *why, size_t size);

/* A user namespace made by a process of uid 65534: unshare(CLONE_NEWUSER)
 * in a forked child that has become that uid (what a user's container
 * engine does; sysctls such as user.max_user_namespaces or Debian's
 * kernel.unprivileged_userns_clone can refuse it). The answer is cached. */
int probe_userns(char *why, size_t size);

#endif
