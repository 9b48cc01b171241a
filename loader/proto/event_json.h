/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The event log's format: one JSON object per runtime event (struct
 * sf_event, bpf/sfilter.h), written by sfilterd (--log, docs/protocol.md)
 * and read back by sfctl log / policy-from-log and the tests. Kept out of
 * the runtime, which hands over binary events and links no JSON library.
 */
#ifndef SF_EVENT_JSON_H
#define SF_EVENT_JSON_H

#include <stddef.h>

struct sf_event;

/* One JSON object, no newline (json-c). Returns length or -errno. */
int sf_event_to_json(const struct sf_event *ev, char *buf, size_t size);

/* The name an event gives syscall nr in "syscall": libseccomp's for the
 * event's "arch" ("x86_64", "x32" with the x32 bit in nr, "i386").
 * malloc'd; NULL when libseccomp has none or arch is none of those. */
char *sf_event_syscall_name(const char *arch, int nr);

#endif
