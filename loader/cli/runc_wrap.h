/* SPDX-License-Identifier: GPL-2.0-only */
/* Shared by sfilter-runc's files: runc_wrap.c (its options, runc's
 * command line, failing, exec) and runc_wrap_config.c (config.json: what
 * the container asks, the hook, the gate, the rewrite). */
#ifndef SF_RUNC_WRAP_H
#define SF_RUNC_WRAP_H

#include <stdbool.h>

#define WRAP_NAME "sfilter-runc"
#define WRAP_DEFAULT_RUNC "/usr/bin/runc"

/* Where the gate goes (--sfilter-gate). */
enum wrap_gate {
	WRAP_GATE_AUTO,     /* where the container's kernel filter is free for it */
	WRAP_GATE_OFF,      /* never: the hook alone, as on a hooks.d runtime */
	WRAP_GATE_REQUIRE,  /* always, or the container is refused */
};

struct wrap {
	/* The wrapper's options (--sfilter-*). */
	const char *runc;         /* the real runtime */
	const char *hook;         /* sfilter-oci-hook, as config.json names it */
	const char *profile_dir;  /* the hook's --profile-dir */
	const char *socket;       /* sfilterd's socket (NULL: the client's default) */
	int hook_timeout;         /* seconds, in the hook's entry */
	enum wrap_gate gate;
	/* The annotations the options stand for (NULL: not given). */
	const char *profile, *take, *mode, *arm;
	/* runc's global --log and --log-format, for the error line. */
	const char *log, *log_format;
	char err[512];            /* an option's error, the first */
};

/* Prints "sfilter-runc: ..." as one line on stderr and, when runc was
 * given --log, as runc's own error line in that file (containerd shows
 * the last one to whoever created the container); exits 1. */
void wrap_fail(const struct wrap *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

/*
 * The bundle's config.json for a container runc is about to create: when
 * the container asks for sfilter (its io.sfilter.* annotations, or the
 * options standing for them), rewritten by rename to run
 * sfilter-oci-hook at createRuntime and, where it can be, with the
 * profile's gate as its linux.seccomp. Returns when runc may go on (the
 * container asked for nothing, or is ready); fails through wrap_fail().
 */
/* restore: a container that asks is refused (its checkpoint holds
 * neither its cgroup's filter nor a gate's listener). */
void wrap_config(const struct wrap *w, const char *bundle, bool restore);

#endif
