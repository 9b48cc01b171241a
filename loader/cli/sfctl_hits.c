// SPDX-License-Identifier: GPL-2.0-only
/*
 * sfctl show --hits: a counted filter's per-rule hit counts (the daemon's
 * SHOW reply "hits": [{"insn", "count"}], the rets taken at least once)
 * set beside each ret instruction of the program, so that a rule never
 * taken shows as 0.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sfctl.h"
#include "c2e.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

/* The count the reply gives ret index i (0 when absent). */
static int64_t hits_of(struct json_object *hits, size_t i)
{
	size_t k;

	for (k = 0; k < json_object_array_length(hits); k++) {
		struct json_object *h = json_object_array_get_idx(hits, k);

		if (sfctl_get_int(h, "insn", -1) == (int64_t)i)
			return sfctl_get_int(h, "count", 0);
	}
	return 0;
}

/* One instruction as the text form writes it, without its tab. */
static char *insn_text(const struct sock_filter *insn, enum c2e_abi abi)
{
	char *buf = NULL, *p;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return NULL;
	c2e_disasm_classic_abi(insn, 1, abi, m);
	fclose(m);
	for (p = buf; p && *p; p++)
		if (*p == '\n')
			*p = 0;
	return buf;
}

void hits_annotate(struct json_object *f, const struct sock_filter *insns, size_t len,
		   int abi)
{
	struct json_object *hits, *rets;
	size_t i;

	if (!json_object_object_get_ex(f, "hits", &hits) || !hits)
		return;
	rets = json_object_new_array();
	for (i = 0; i <= len; i++) {
		struct json_object *r;
		int64_t n = hits_of(hits, i);
		char *text;

		if (i == len && !n)
			break; /* no implicit return 0 taken */
		if (i < len && BPF_CLASS(insns[i].code) != BPF_RET)
			continue;
		text = i < len ? insn_text(&insns[i], (enum c2e_abi)abi) : NULL;
		r = json_object_new_object();
		json_object_object_add(r, "insn", json_object_new_int64((int64_t)i));
		json_object_object_add(r, "rule", json_object_new_string(
			text ? text + strspn(text, "\t ") : "(return 0: division by zero or failed load)"));
		json_object_object_add(r, "count", json_object_new_int64(n));
		json_object_array_add(rets, r);
		free(text);
	}
	json_object_object_add(f, "rets", rets);
}

void hits_print(struct json_object *f)
{
	struct json_object *rets;
	size_t i;

	if (!json_object_object_get_ex(f, "rets", &rets) || !rets) {
		printf("  (not counted: attach with --count)\n");
		return;
	}
	printf("  hits per rule%s:\n", sfctl_get_int(f, "hits_truncated", 0) ? " (truncated)" : "");
	for (i = 0; i < json_object_array_length(rets); i++) {
		struct json_object *r = json_object_array_get_idx(rets, i);

		printf("  %5" PRId64 ": %-32s %12" PRId64 "\n", sfctl_get_int(r, "insn", 0),
		       sfctl_get_str(r, "rule"), sfctl_get_int(r, "count", 0));
	}
}
