/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A profile learned from the calls seen (learned.c): for sfctl
 * policy-from-log --format oci and sfilter-oci-hook's recordings.
 */
#ifndef SF_LEARNED_H
#define SF_LEARNED_H

#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

/* An (arch, syscall) pair seen: AUDIT_ARCH_*, the number as the filter
 * sees it (x32 bit included), its name ("x32 " first; policy-from-log's),
 * and the calls it stands for. */
struct learned_call { uint32_t arch; int32_t nr; char name[48]; uint64_t calls; };

/*
 * The OCI seccomp profile allowing every name seen (n pairs at s), with
 * dflt (SECCOMP_RET_* | data) as its default, as a json-c object; NULL
 * with errno EINVAL when OCI has no action for dflt, or ENOMEM.
 * *unnamed: pairs left out, libseccomp having no name for the number.
 */
struct json_object *learned_profile(const struct learned_call *s, size_t n, uint32_t dflt,
				    size_t *unnamed);

#endif
