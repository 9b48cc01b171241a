// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What a profile's conditions are judged against: capability sets (named,
 * or a task's effective set as capget(2) reports it: the kernel vouches
 * for it, where /proc/PID/status is a text anyone may misread), the kernel
 * release, the native architecture; and the line that tells a caller how
 * the running tier enforces the profile.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "pf_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/syscall.h>

static const char *const cap_names[] = {
	"CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "FSETID", "KILL",
	"SETGID", "SETUID", "SETPCAP", "LINUX_IMMUTABLE", "NET_BIND_SERVICE",
	"NET_BROADCAST", "NET_ADMIN", "NET_RAW", "IPC_LOCK", "IPC_OWNER",
	"SYS_MODULE", "SYS_RAWIO", "SYS_CHROOT", "SYS_PTRACE", "SYS_PACCT",
	"SYS_ADMIN", "SYS_BOOT", "SYS_NICE", "SYS_RESOURCE", "SYS_TIME",
	"SYS_TTY_CONFIG", "MKNOD", "LEASE", "AUDIT_WRITE", "AUDIT_CONTROL",
	"SETFCAP", "MAC_OVERRIDE", "MAC_ADMIN", "SYSLOG", "WAKE_ALARM",
	"BLOCK_SUSPEND", "AUDIT_READ", "PERFMON", "BPF", "CHECKPOINT_RESTORE",
};
#define N_CAPS (sizeof(cap_names) / sizeof(cap_names[0]))
_Static_assert(N_CAPS == CAP_LAST_CAP + 1, "every capability of linux/capability.h");

int pf_cap_number(const char *name)
{
	size_t i;

	if (strncasecmp(name, "CAP_", 4) == 0)
		name += 4;
	for (i = 0; i < N_CAPS; i++)
		if (strcasecmp(name, cap_names[i]) == 0)
			return (int)i;
	return -1;
}

int sf_profile_parse_caps(const char *list, uint64_t *caps)
{
	char *copy, *tok, *save = NULL;
	int n, r = 0;

	*caps = 0;
	if (strcasecmp(list, "none") == 0 || !list[0])
		return 0;
	if (strcasecmp(list, "all") == 0) {
		*caps = (1ULL << N_CAPS) - 1;
		return 0;
	}
	if (!strncasecmp(list, "0x", 2)) {
		char *end;

		errno = 0;
		*caps = strtoull(list + 2, &end, 16);
		return end == list + 2 || *end || errno ? -EINVAL : 0;
	}
	copy = strdup(list);
	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		if ((n = pf_cap_number(tok)) < 0) {
			r = -EINVAL;
			break;
		}
		*caps |= 1ULL << n;
	}
	free(copy);
	return r;
}

int sf_profile_task_caps(pid_t tid, uint64_t *caps)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, tid };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d) != 0)
		return -errno;
	*caps = (uint64_t)d[1].effective << 32 | d[0].effective;
	return 0;
}

int pf_kernel_version(const char *s, int *major, int *minor)
{
	char tail;

	/* moby reads "%d.%d" and ignores the rest ("6.1.0-18-amd64"). */
	if (sscanf(s, "%d.%d%c", major, minor, &tail) < 2 || *major < 0 || *minor < 0)
		return -EINVAL;
	return 0;
}

const char *pf_native_arch(void)
{
#if defined(__x86_64__) && defined(__ILP32__)
	return "x32";
#elif defined(__x86_64__)
	return "amd64";
#elif defined(__i386__)
	return "x86";
#elif defined(__aarch64__)
	return "arm64";
#else
	return "unknown";
#endif
}

/* "ERRNO" or "ERRNO, TRAP": the profile's actions the tracepoint tier
 * cannot reproduce. */
static void gap_names(unsigned int actions, char *out, size_t size)
{
	static const struct { unsigned int bit; const char *name; } gaps[] = {
		{ SF_PROFILE_ACT_ERRNO, "ERRNO" }, { SF_PROFILE_ACT_TRAP, "TRAP" },
		{ SF_PROFILE_ACT_TRACE, "TRACE" },
	};
	size_t i, used = 0;

	out[0] = '\0';
	for (i = 0; i < sizeof(gaps) / sizeof(gaps[0]); i++)
		if ((actions & gaps[i].bit) && used < size)
			used += snprintf(out + used, size - used, "%s%s", used ? ", " : "",
					 gaps[i].name);
}

void sf_profile_tier_text(const struct sf_profile *p, const char *note, int fallback_log,
			  char *out, size_t size)
{
	const char *t = note ? strstr(note, "tier ") : NULL;
	char names[32], what[64], tier[32] = "lsm";
	bool dflt = pf_act_bit(p->default_action) & SF_PROFILE_ACT_GAPS;

	out[0] = '\0';
	if (!(p->actions & SF_PROFILE_ACT_GAPS))
		return;
	/* The daemon notes only the tiers that cannot reproduce these
	 * actions; no note means they are reproduced, which lsm does. */
	if (t)
		sscanf(t + 5, "%31[a-z0-9_-]", tier);
	gap_names(p->actions, names, sizeof(names));
	snprintf(what, sizeof(what), "%u syscall%s%s", p->n_gap_rules,
		 p->n_gap_rules == 1 ? "" : "s", dflt ? " and the default" : "");
	if (strcmp(tier, "lsm") != 0)
		snprintf(out, size, "tier %s: the profile's %s rules (%s) %s", tier, names, what,
			 fallback_log ? "log and allow instead (fallback log)" :
			 "kill instead (use --fallback log to log and allow)");
	else
		snprintf(out, size, "tier %s: the profile's %s rules (%s) refuse the operations "
			 "LSM hooks check (ERRNO with its errno); a syscall without an LSM "
			 "hook (getpid, ...) runs", tier, names, what);
}
