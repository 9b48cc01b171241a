/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The runtime, from user space: loads and attaches sfilter's BPF programs,
 * compiles filter chains to eBPF, gives tasks their chains, and reads the
 * event ring buffer. sfilterd is its only long-lived user; tests and
 * benchmarks use it directly.
 *
 * Conventions: prefix sf_runtime_ / SF_; 0 or -errno.
 */
#ifndef SF_RUNTIME_H
#define SF_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/filter.h>

#include "sfilter.h" /* bpf/sfilter.h: types shared with the BPF side */

/* How strongly the running kernel lets us enforce (see README). */
enum sf_tier {
	SF_TIER_TRACEPOINT, /* tp_btf/sys_enter + bpf_send_signal only */
	SF_TIER_LSM,        /* plus BPF LSM hooks that refuse side effects */
};

/* Attach flags. The low bits are seccomp(2)'s own. */
#define SF_ATTACH_TSYNC        0x1   /* SECCOMP_FILTER_FLAG_TSYNC */
#define SF_ATTACH_LOG          0x2   /* SECCOMP_FILTER_FLAG_LOG */
/* sfilter's own: what to do with an action this tier cannot reproduce
 * (ERRNO, TRAP, TRACE, USER_NOTIF on the tracepoint tier). Default: kill,
 * which fails closed; with this flag: log the event and allow the call. */
#define SF_ATTACH_FALLBACK_LOG 0x100
#define SF_ATTACH_KNOWN_FLAGS  (SF_ATTACH_TSYNC | SF_ATTACH_LOG | SF_ATTACH_FALLBACK_LOG)

struct sf_runtime;

struct sf_runtime_opts {
	bool verbose;          /* libbpf debug output on stderr */
	bool force_tracepoint; /* do not use LSM programs even if allowed */
};

int sf_runtime_open(struct sf_runtime **out, const struct sf_runtime_opts *opts);
/* Detaches everything: confined tasks are unconfined afterwards. */
void sf_runtime_close(struct sf_runtime *rt);

enum sf_tier sf_runtime_tier(const struct sf_runtime *rt);
const char *sf_tier_name(enum sf_tier tier); /* "tracepoint", "lsm" */

/*
 * Appends a validated copy of prog to thread tid's chain, effective from
 * that thread's next syscall and before this call returns. With
 * SF_ATTACH_TSYNC, to every thread of tid's thread group, with the
 * kernel's ancestor rule. Returns 0 and the new filter's id, or:
 *   -EINVAL  invalid filter (err, if not NULL, says where) or bad flags
 *   -ENOMEM  the chain would exceed the kernel's 32768-instruction rule
 *   -ESRCH   no such thread
 *   > 0      TSYNC only: the tid of the first thread whose chain is not
 *            an ancestor of the caller's (as seccomp(2) reports it)
 * The caller (sfilterd) decides who may attach; this function does not.
 */
struct c2e_error;
int sf_runtime_attach(struct sf_runtime *rt, pid_t tid,
		      const struct sock_fprog *prog, unsigned int flags,
		      uint32_t *filter_id, struct c2e_error *err);

/* Events (struct sf_event in bpf/sfilter.h): every deny and every LOG. */
typedef int (*sf_event_fn)(void *ctx, const struct sf_event *ev);
int sf_runtime_event_fd(const struct sf_runtime *rt);
int sf_runtime_poll_events(struct sf_runtime *rt, int timeout_ms,
			   sf_event_fn fn, void *ctx);
/* One JSON object, no newline (json-c). Returns length or -errno. */
int sf_event_to_json(const struct sf_event *ev, char *buf, size_t size);

/* ---- administration (issue 4) ------------------------------------------
 * The daemon decides who may call these (root / CAP_SYS_ADMIN only).
 */

/* Verdicts are computed and logged as events; nothing is enforced. */
#define SF_ATTACH_COMPLAIN     0x200
#define SF_ATTACH_ADMIN_FLAGS  (SF_ATTACH_KNOWN_FLAGS | SF_ATTACH_COMPLAIN)

/*
 * Pinned state. With opts->pin_dir set (sfilterd uses SF_PIN_DIR), open
 * adopts what an earlier runtime pinned there (programs, maps, links and
 * the chain/filter records) instead of loading anew, so a SIGKILLed daemon
 * can be restarted without any confined task ever being unconfined, and
 * close leaves everything attached. sf_runtime_uninstall() tears it down.
 */
#define SF_PIN_DIR "/sys/fs/bpf/sfilter"
int sf_runtime_open_pinned(struct sf_runtime **out,
			   const struct sf_runtime_opts *opts,
			   const char *pin_dir, bool *adopted);
int sf_runtime_uninstall(struct sf_runtime *rt);

/* Every task in the cgroup (v2 path) now, and every task that joins later,
 * before its first syscall after joining. */
int sf_runtime_attach_cgroup(struct sf_runtime *rt, const char *cgroup_path,
			     const struct sock_fprog *prog, unsigned int flags,
			     uint32_t *filter_id, struct c2e_error *err);

/* Removes (detach) or swaps (replace) one attached filter everywhere it is
 * in force, atomically per task. -ENOENT for an unknown id. */
int sf_runtime_detach(struct sf_runtime *rt, uint32_t filter_id);
int sf_runtime_replace(struct sf_runtime *rt, uint32_t filter_id,
		       const struct sock_fprog *prog, struct c2e_error *err);

/* Introspection for sfctl. */
struct sf_filter_info {
	uint32_t id;
	uint32_t flags;            /* SF_ATTACH_* it was attached with */
	uid_t owner;               /* uid that attached it (set by the daemon) */
	uint32_t len;              /* classic instructions */
};
struct sf_task_info {
	pid_t tid, tgid;
	uid_t uid;
	char comm[16];
	uint32_t n_filters;        /* chain length, oldest first below */
	uint32_t filter_ids[64];   /* first 64 */
};
typedef int (*sf_task_fn)(void *ctx, const struct sf_task_info *t);
int sf_runtime_for_each_task(struct sf_runtime *rt, sf_task_fn fn, void *ctx);
/* Copies filter id's program (malloc'd *out; free it). */
int sf_runtime_filter(struct sf_runtime *rt, uint32_t filter_id,
		      struct sf_filter_info *info, struct sock_filter **out);
int sf_runtime_set_owner(struct sf_runtime *rt, uint32_t filter_id, uid_t owner);

#endif
