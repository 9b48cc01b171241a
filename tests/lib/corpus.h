/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A corpus of realistic seccomp filters, shared by the benches, the tests
 * and the fuzz seed generator: what libseccomp emits for the policies
 * people actually write (allowlists, denylists, argument rules, x86_64 +
 * x86 + x32 multi-arch, a container runtime's default profile), plus a few
 * hand-written filters that stress particular conversions.
 *
 * Every filter is a complete classic program that seccomp(2) accepts.
 * Building needs libseccomp (link -lseccomp).
 */
#ifndef SF_TESTS_CORPUS_H
#define SF_TESTS_CORPUS_H

#include <stddef.h>
#include <linux/filter.h>

struct corpus_filter {
	char name[48];
	char origin[16];          /* "libseccomp" or "hand" */
	struct sock_filter *insns; /* malloc'd */
	size_t len;
};

struct corpus {
	struct corpus_filter *filters;
	size_t n;
};

/* Builds the whole corpus. 0 or -errno (the filter that failed to build
 * is named on stderr). Free with corpus_free() in either case. */
int corpus_build(struct corpus *c);
void corpus_free(struct corpus *c);

/* Exports a libseccomp context as raw classic instructions (through a
 * memfd and seccomp_export_bpf()). *out is malloc'd. 0 or -errno. The
 * context is a scmp_filter_ctx; void * keeps seccomp.h out of this header. */
int corpus_export(void *scmp_ctx, struct sock_filter **out, size_t *len);

#endif
