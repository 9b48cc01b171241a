/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The attach flags a program may give sf_attach(): the one place their
 * values are set. Self-contained (plain macros, no includes), because
 * every side reads it: the BPF programs (after vmlinux.h) and the runtime
 * through bpf/sfilter.h, the protocol, and the public sfclient.h, which is
 * installed with it. The low bits are seccomp(2)'s own
 * (SECCOMP_FILTER_FLAG_*, asserted in loader/runtime/chain_emit.c); the
 * wire numbers them the same (docs/protocol.md).
 */
#ifndef SF_SFILTER_FLAGS_H
#define SF_SFILTER_FLAGS_H

#define SF_ATTACH_TSYNC        0x1   /* SECCOMP_FILTER_FLAG_TSYNC: every thread */
#define SF_ATTACH_LOG          0x2   /* SECCOMP_FILTER_FLAG_LOG: log all but ALLOW */
/* sfilter's own: an action the running kernel's tier cannot reproduce
 * (ERRNO, TRAP, TRACE, USER_NOTIF on the tracepoint tier) logs the event
 * and allows the call, instead of the default, killing (fail closed). */
#define SF_ATTACH_FALLBACK_LOG 0x100
#define SF_ATTACH_KNOWN_FLAGS  (SF_ATTACH_TSYNC | SF_ATTACH_LOG | SF_ATTACH_FALLBACK_LOG)

#endif
