/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libsfclient: attach sfilter filters through sfilterd, the way seccomp(2)
 * attaches classic seccomp filters.
 *
 *   struct sock_fprog prog = { .len = n, .filter = insns };
 *   prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
 *   if (sf_attach(&prog, 0) != 0)
 *           err(1, "sf_attach: %s", sf_last_error());
 *
 * The filter is in force for the calling thread (every thread with
 * SF_ATTACH_TSYNC) when sf_attach() returns 0. Link with -lsfclient
 * (pkg-config sfclient). The daemon is found at $SFILTER_SOCKET, else
 * /run/sfilter/sfilterd.sock. Thread-safe: a process keeps one connection
 * (not across fork or execve), used by one call at a time; sf_last_error()
 * is per thread.
 */
#ifndef SF_CLIENT_H
#define SF_CLIENT_H

#include <linux/filter.h> /* struct sock_fprog, struct sock_filter */

#ifdef __cplusplus
extern "C" {
#endif

/* Attach flags: SF_ATTACH_TSYNC (every thread), SF_ATTACH_LOG (log all but
 * ALLOW), SF_ATTACH_FALLBACK_LOG (an action the running kernel's tier
 * cannot reproduce logs the event and allows the call instead of killing)
 * and SF_ATTACH_KNOWN_FLAGS, from the header installed beside this one,
 * where sfilter itself reads them. */
#include "sfilter_flags.h"

/*
 * Appends prog to the calling thread's sfilter chain (with SF_ATTACH_TSYNC,
 * to every thread of the process, with seccomp's ancestor rule).
 *
 * Returns 0, or -1 with errno set as seccomp(2) would set it:
 *   EINVAL     unknown flags, prog->len 0 or above 4096, or a filter
 *              seccomp(2) would refuse (sf_last_error() names the
 *              instruction, its opcode and the rule)
 *   EFAULT     prog or prog->filter is NULL
 *   EACCES     the calling thread has neither no_new_privs
 *              (prctl(PR_SET_NO_NEW_PRIVS)) nor CAP_SYS_ADMIN
 *   ENOMEM     the chain would exceed the kernel's 32768-instruction rule
 *   ESRCH      the daemon could not find the calling thread
 *   EHOSTDOWN  sfilterd is not running (no socket, connection refused, or
 *              the daemon went away before replying). seccomp(2) never
 *              returns EHOSTDOWN, so this always means "no daemon".
 *   EPROTO     the daemon's reply was malformed (a version mismatch)
 *   EAGAIN     a limit of the daemon's (sfilterd(8)): the caller's uid has
 *              too many connections open, none of them idle, or the daemon
 *              as many as it serves (sf_last_error() says which), or the
 *              uid's attach rate. Nothing was attached; later may succeed.
 *   ENOSPC     the uid's filters or instructions in force are at the
 *              daemon's limit
 * With SF_ATTACH_TSYNC, like seccomp(2), a positive return value is the
 * tid of a thread that could not be synchronized; nothing was attached.
 *
 * The gate. The first sf_attach() of a process first installs a kernel
 * seccomp filter built from prog (the gate: ALLOW where prog allows or
 * logs, SECCOMP_RET_USER_NOTIF elsewhere) and hands its listener to
 * sfilterd's agent socket ($SFILTER_SOCKET with ".agent"), so that sfilterd
 * judges the calls prog does not allow before they run: ERRNO is exact on
 * every tier. It needs a thread of its own for a moment (made before the
 * gate, which does not cover it) and a connection to the agent socket; no
 * agent socket, no gate. The kernel allows one listener per filter chain,
 * so there is none for a later attach of the process (or of its children,
 * or under a container runtime's agent, or a program that uses USER_NOTIF
 * itself): such an attach still succeeds, and the calls only its filter
 * denies are judged by the tier alone. SFILTER_GATE=0 in the environment
 * turns the gate off. The note in sf_last_error() ends with
 * "gate: installed" or "gate: not installed: <why>; ...".
 * If the agent refuses the listener after the gate is in (one of its
 * limits), the gate cannot be taken out again: the filter is still
 * attached (failing the call would report nothing in force while the
 * gate is), and the calls prog denies fail with ENOSYS in the kernel,
 * never run, whatever its action; the note says "gate: installed, but
 * ...: calls the filter denies fail with ENOSYS".
 */
int sf_attach(const struct sock_fprog *prog, unsigned int flags);

/*
 * The 2012 interface (Will Drewry's PR_ATTACH_SECCOMP_FILTER proposal):
 * prog runs over the calling thread's struct user_regs_struct at each
 * syscall entry (the layout of this program's ABI: x86-64, or i386 for a
 * 32-bit build), with the number in orig_rax/orig_eax; returning the
 * layout's size (LD W LEN) allows the call, any other value kills the
 * process. A call through the other ABI is killed. execve fails while the
 * thread has such a filter, unless each was attached with CAP_SYS_ADMIN.
 * No no_new_privs is needed.
 *
 * The running kernel reads option 36 as PR_SET_CHILD_SUBREAPER and
 * returns 0: a program that calls prctl(36, prog) itself runs unconfined
 * unless sfrun --prctl interposes (sfrun(1)). Call this instead.
 *
 * Returns 0, or -1 with errno: EINVAL for an invalid program (sf_last_error()
 * names the instruction and the rule) or length, EFAULT, and the daemon's
 * errors as for sf_attach().
 */
#ifndef PR_ATTACH_SECCOMP_FILTER
#define PR_ATTACH_SECCOMP_FILTER 36
#endif
int sf_prctl_attach(const struct sock_fprog *prog);

/*
 * A container seccomp profile: the OCI runtime-spec's linux.seccomp object,
 * or a Docker (moby) or Podman seccomp.json (archMap, includes/excludes),
 * compiled by libseccomp into a classic filter and attached by sf_attach()
 * with flags and the profile's own flags (SECCOMP_FILTER_FLAG_TSYNC,
 * SECCOMP_FILTER_FLAG_LOG). Caps conditions are judged against the calling
 * thread's effective capabilities, minKernel against uname(); unknown
 * syscall names are skipped, as runc skips them. See sfctl(8) for the
 * fields.
 *
 * Returns what sf_attach() returns; besides its errors, -1 with errno
 * EINVAL for a profile in error (sf_last_error() names the file and the
 * JSON path: "p.json: syscalls[3].action: unknown action ...") and the
 * errno of reading the file (ENOENT, EACCES, ...).
 */
int sf_attach_profile(const char *path, unsigned int flags);

/*
 * The reason for the calling thread's last failed sf_attach(): the
 * daemon's message (e.g. "insn 3 (code 0x0025): ...") or a local one.
 * After a success, the daemon's note: "filter 7 attached to thread 1234",
 * followed on a weaker tier by the actions in the filter that the tier
 * cannot reproduce and what they do instead. Valid until this thread's
 * next sf_attach().
 */
const char *sf_last_error(void);

#ifdef __cplusplus
}
#endif
#endif /* SF_CLIENT_H */
