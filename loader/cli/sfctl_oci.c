// SPDX-License-Identifier: GPL-2.0-only
/*
 * sfctl policy-from-log --format oci: the (arch, syscall) pairs seen as an
 * OCI seccomp profile (learned.c), "defaultAction" from --default.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sfctl.h"
#include "c2e.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include <seccomp.h>

int policy_oci(const struct learned_call *s, size_t n, size_t events, const char *dflt,
	       const char *prefix)
{
	struct json_object *o;
	const char *text;
	char path[4096];
	uint32_t ret;
	size_t unnamed;
	FILE *f;

	if (c2e_parse_action(dflt, &ret) < 0)
		sfctl_die(2, "--default %s: not an action", dflt);
	o = learned_profile(s, n, ret, &unnamed);
	if (!o && errno == EINVAL)
		sfctl_die(2, "--default: no OCI action for 0x%08x", ret);
	if (!o)
		sfctl_die(1, "out of memory");
	if (unnamed)
		fprintf(stderr, "sfctl: %zu syscall numbers have no name on their arch; "
			"not in the profile\n", unnamed);
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
					      JSON_C_TO_STRING_SPACED |
					      JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!prefix) {
		puts(text);
	} else {
		snprintf(path, sizeof(path), "%s.json", prefix);
		f = fopen(path, "we");
		if (!f || fputs(text, f) < 0 || fputc('\n', f) < 0 || fclose(f) != 0)
			sfctl_die(1, "%s: %s", path, strerror(errno));
		if (cli_json)
			printf("{ \"events\": %zu, \"oci\": \"%s\" }\n", events, path);
		else
			printf("%zu syscalls from %zu events: %s (OCI seccomp profile)\n",
			       n, events, path);
	}
	json_object_put(o);
	return 0;
}
