/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by sfctl's files: sfctl.c (the connection, the commands, main),
 * sfctl_policy.c (policy-from-log) and sfctl_profile.c (compile, attach
 * --profile). */
#ifndef SF_SFCTL_H
#define SF_SFCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/filter.h>

struct json_object;

#define AUDIT_X86_64 0xc000003eU
#define AUDIT_I386   0x40000003U

extern bool json_out; /* --json */

/* Prints "sfctl: ..." and exits with code. */
void die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
const char *get_str(struct json_object *o, const char *key);
int64_t get_int(struct json_object *o, const char *key, int64_t dflt);
void print_json(struct json_object *o);

/* LOG: fn gets every event the daemon keeps (with follow, every new one). */
typedef void (*event_fn)(void *ctx, const char *line);
void read_log(bool follow, event_fn fn, void *ctx);

/* sfctl policy-from-log: exit status. */
int cmd_policy(const char *log, long pid, const char *dflt, const char *prefix);

/* ADMIN_ATTACH of a classic filter to pid (or cgroup); prints the
 * daemon's message and copies it to note (when not NULL); exit status. */
int attach_insns(pid_t pid, const char *cgroup, const struct sock_filter *insns, size_t n,
		 uint32_t flags, char *note, size_t nsz);

/* sfctl compile and attach --profile: exit status. */
int cmd_compile(const char *profile, const char *caps, const char *out);
int cmd_attach_profile(pid_t pid, const char *cgroup, const char *profile, const char *caps,
		       uint32_t flags);

#endif
