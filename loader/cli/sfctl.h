/* SPDX-License-Identifier: GPL-2.0-only */
/* Shared by sfctl's files: sfctl.c (the connection, administration, main),
 * sfctl_status.c (status, ps, show), sfctl_policy.c (policy-from-log) and
 * sfctl_profile.c (compile, attach --profile). */
#ifndef SF_SFCTL_H
#define SF_SFCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/filter.h>

struct json_object;
struct sock_filter;

#define AUDIT_X86_64 0xc000003eU
#define AUDIT_I386   0x40000003U

#include "cli.h" /* cli_json: --json */

extern const char *sfctl_sock_path; /* --socket, else $SFILTER_SOCKET, else the default */
/* --lenient: a profile read as runc reads it (sfctl_profile.c) */
extern bool sfctl_profile_lenient;

/* The connection to sfilterd (sfctl.c): connect (exit 3 when it cannot),
 * send one request, read one reply (false at end of file; exit 3 on a
 * malformed one). A reply's text as JSON (a text that is not becomes
 * {"message": text}); sfctl_refused() prints a refusal and exits 1. */
struct sfctl_reply {
	int error;
	uint32_t id, flags;
	const char *text;
	const void *data;
	uint32_t data_len;
};
int sfctl_connect_daemon(void);
void sfctl_send_req(int fd, void *msg, uint16_t type, uint32_t len);
bool sfctl_recv_reply(int fd, struct sfctl_reply *r);
struct json_object *sfctl_parse_text(const char *text);
void sfctl_refused(const char *what, const struct sfctl_reply *r) __attribute__((noreturn));

/* sfctl status, ps, show PID [--hits] (sfctl_status.c): exit status. */
int cmd_status(void);
int cmd_ps(void);
int cmd_show(pid_t pid, bool hits);
/* Every task of a (multi-reply) PS or SHOW in one array; *last is the
 * reply that ended the list (SHOW's filters follow it while it has MORE). */
struct json_object *sfctl_read_tasks(int fd, const char *what, struct sfctl_reply *last);

/* Prints "sfctl: ..." (with --json, {"error": "..."} on stdout) and exits
 * with code. */
void sfctl_die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
const char *sfctl_get_str(struct json_object *o, const char *key);
int64_t sfctl_get_int(struct json_object *o, const char *key, int64_t dflt);
void sfctl_print_json(struct json_object *o);

/* LOG: fn gets every event the daemon keeps (with follow, every new one). */
typedef void (*event_fn)(void *ctx, const char *line);
void sfctl_read_log(bool follow, event_fn fn, void *ctx);
/* The same from a log file (log; "-": stdin), or the daemon (NULL). */
void sfctl_read_events(const char *log, event_fn fn, void *ctx);
/* The calls an event stands for, into *n: its "count" (sfilterd folds a
 * process's repeats of a call into one event with a count; 0 when another
 * event counted them), else one. False when "count" is not a count. */
bool sfctl_event_count(struct json_object *o, uint64_t *n);

/* sfctl log --summary (sfctl_logsum.c): the calls of each process,
 * syscall and outcome, most first. Exit status. */
int cmd_log_summary(const char *log);

/* struct learned_call: an (arch, syscall) pair policy-from-log saw (learned.h). */
#include "learned.h"
/* policy-from-log --format oci (sfctl_oci.c): the profile to PREFIX.json
 * (NULL: stdout). Exit status. */
int policy_oci(const struct learned_call *s, size_t n, size_t events, const char *dflt,
	       const char *prefix);

/* Which events policy-from-log learns from: all (pid 0), or those of one
 * process that had pid: the log's events say which process (its start)
 * and image (its exec id) made each call, and as which uid; the others
 * narrow it down to one process. */
struct policy_pick {
	long filter;     /* the events of this filter alone (0: any): a
			    container's, whose filter is its cgroup's */
	long pid;
	bool uid_set, start_set, exec_set;
	uint32_t uid;
	uint64_t start, exec_id;
};
/* sfctl policy-from-log: exit status. format: "classic" (PREFIX.s and
 * PREFIX.bpf) or "oci" (PREFIX.json, an OCI seccomp profile). */
int cmd_policy(const char *log, const struct policy_pick *pick, const char *dflt,
	       const char *prefix, const char *format);

/* sfctl show --hits (sfctl_hits.c): f, a SHOW filter reply, gets "rets":
 * every ret of its program (insns, len; abi: enum c2e_abi) with its count
 * from the reply's "hits"; hits_print() lists them. */
void hits_annotate(struct json_object *f, const struct sock_filter *insns, size_t len,
		   int abi);
void hits_print(struct json_object *f);

/* ADMIN_ATTACH of a classic filter to pid (or cgroup); prints the
 * daemon's message and copies it to note (when not NULL), the filter's id
 * to *filter (when not NULL); exit status. */
int attach_insns(pid_t pid, const char *cgroup, const struct sock_filter *insns, size_t n,
		 uint32_t flags, char *note, size_t nsz, uint32_t *filter);

/* sfctl compile and attach --profile: exit status. */
int cmd_compile(const char *profile, const char *caps, const char *out);
/* sfctl compile --gate: the gate's JSON to out (NULL: stdout), its
 * listenerPath the agent socket of the daemon at socket. */
int cmd_compile_gate(const char *profile, const char *caps, const char *out,
		     const char *socket);
int cmd_attach_profile(pid_t pid, const char *cgroup, const char *profile, const char *caps,
		       uint32_t flags);

/* sfctl diff [--subset] [--caps LIST] A B (sfctl_diff.c): argv[0] is
 * "diff"; it reads its own options. Exit status. */
int cmd_diff(int argc, char **argv);
/* sfctl explain --profile JSON (--nr NAME [--args ...] | --log [FILE])
 * (sfctl_explain.c): argv[0] is "explain"; it reads its own options. */
int cmd_explain(int argc, char **argv);

#endif
