/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libsfprofile: container seccomp profiles (the OCI runtime-spec's
 * linux.seccomp object, with moby's and containers/common's extensions)
 * compiled to a classic seccomp filter by libseccomp, the way runc and
 * crun compile them.
 *
 *   struct sf_profile p;
 *   struct sf_profile_error e;
 *   if (sf_profile_compile_file("seccomp.json", NULL, &p, &e) < 0)
 *           errx(1, "%s", e.msg);   // "syscalls[12].args[0].op: unknown op ..."
 *   ... p.insns, p.len ...
 *   sf_profile_free(&p);
 *
 * The filter is exactly what seccomp_export_bpf() writes. Functions return
 * 0 or a negative errno (-EINVAL for a profile in error: e.msg names the
 * JSON path); nothing is produced when there is any error.
 *
 * What a profile's entries are judged against, as moby does it:
 *   includes/excludes.caps     the capabilities of the task that receives
 *                              the filter: its effective set, as capget(2)
 *                              reports it for opts->caps_pid (0: the
 *                              calling thread), unless opts->caps names
 *                              them ("CAP_SYS_ADMIN,CAP_NET_RAW", "all",
 *                              "none"); includes needs every listed cap,
 *                              excludes skips the entry on any of them
 *   includes/excludes.arches   the native architecture in moby's naming
 *                              ("amd64" on x86-64, "x86" on i386)
 *   includes/excludes.minKernel  uname()'s release (major.minor), unless
 *                              opts->kernel gives one
 * Unknown syscall names are skipped with a warning (as runc does).
 *
 * A profile is read strictly: a key none of the formats defines
 * (sf_profile_keys()), a key given twice in one object, an integer out of
 * range (2^64 or more, negative, a fraction, a string) and an empty
 * "names" are errors naming the JSON path ("syscalls[3].nmaes: unknown
 * key; did you mean \"names\"?"). opts->lenient reads it as runc does
 * instead: unknown keys are ignored and a repeated key's last value is
 * taken, each with a warning; numbers out of range are errors still (runc
 * refuses them too).
 */
#ifndef SF_PROFILE_H
#define SF_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/filter.h> /* struct sock_filter */
#include <linux/seccomp.h> /* struct seccomp_data */

#ifdef __cplusplus
extern "C" {
#endif

struct sf_profile_opts {
	const char *caps;    /* NULL: capget() of caps_pid */
	pid_t caps_pid;      /* 0: the calling thread */
	const char *kernel;  /* "5.10"; NULL: uname()'s release */
	/* Read the profile as a runtime reads a gate (sf_profile_gate()'s
	 * output): SCMP_ACT_NOTIFY and listenerPath are taken, not refused.
	 * Such a filter is for the kernel, never for an sfilter chain. */
	int gate;
	/* Unknown keys and repeated keys: a warning each, not an error. */
	int lenient;
};

/*
 * Every key a profile may hold, where, which format defines it, and what
 * sfilter does with it (the man page prints this table). object is
 * "(profile)", "syscalls[]", "syscalls[].args[]", "syscalls[].includes",
 * "syscalls[].excludes" or "archMap[]".
 */
struct sf_profile_key {
	const char *object;
	const char *key;
	const char *from;   /* "runtime-spec, moby, containers/common" */
	const char *use;    /* "used: ..." or "accepted, ignored: ..." */
};
/* The table and its length. */
const struct sf_profile_key *sf_profile_keys(size_t *n);

/* The profile's "flags", as seccomp(2)'s flag values; sfilter's
 * SF_ATTACH_TSYNC and SF_ATTACH_LOG are these. */
#define SF_PROFILE_FLAG_TSYNC 0x1  /* SECCOMP_FILTER_FLAG_TSYNC */
#define SF_PROFILE_FLAG_LOG   0x2  /* SECCOMP_FILTER_FLAG_LOG */

/* Which actions the filter may return (struct sf_profile.actions). */
enum sf_profile_act {
	SF_PROFILE_ACT_KILL_PROCESS = 1 << 0,
	SF_PROFILE_ACT_KILL_THREAD  = 1 << 1,
	SF_PROFILE_ACT_TRAP         = 1 << 2,
	SF_PROFILE_ACT_ERRNO        = 1 << 3,
	SF_PROFILE_ACT_TRACE        = 1 << 4,
	SF_PROFILE_ACT_LOG          = 1 << 5,
	SF_PROFILE_ACT_ALLOW        = 1 << 6,
	SF_PROFILE_ACT_NOTIFY       = 1 << 7,  /* a gate's only (opts->gate) */
};
/* The actions the tracepoint tier cannot reproduce (its fallback). */
#define SF_PROFILE_ACT_GAPS (SF_PROFILE_ACT_TRAP | SF_PROFILE_ACT_ERRNO | SF_PROFILE_ACT_TRACE)

struct sf_profile {
	struct sock_filter *insns;  /* what seccomp_export_bpf() wrote */
	size_t len;
	unsigned int flags;         /* SF_PROFILE_FLAG_* */
	uint32_t default_action;    /* SECCOMP_RET_* | data */
	unsigned int actions;       /* SF_PROFILE_ACT_*: the default's and the rules' */
	unsigned int n_rules;       /* syscall names with a rule in the filter */
	unsigned int n_gap_rules;   /* of them, with an action of SF_PROFILE_ACT_GAPS */
	char **warnings;            /* "syscalls[3].names[1]: unknown syscall ..." */
	size_t n_warnings;
};

struct sf_profile_error {
	char path[96];   /* "syscalls[12].args[0].op", "" for the document */
	char msg[320];   /* "PATH: why" */
};

int sf_profile_compile(const char *json, size_t len, const struct sf_profile_opts *opts,
		       struct sf_profile *out, struct sf_profile_error *err);
/* The same from the file at path ("-": stdin). */
int sf_profile_compile_file(const char *path, const struct sf_profile_opts *opts,
			    struct sf_profile *out, struct sf_profile_error *err);
void sf_profile_free(struct sf_profile *p);

/*
 * Everything a compilation of a profile depends on besides its text, as
 * one line (into buf, size bytes): libsfprofile's and libseccomp's
 * versions, libseccomp's API level, the native architecture, the caps
 * and the kernel release opts give (as the compile judges them: "all"
 * and its mask are one), lenient and gate. One text compiled with one
 * line makes one filter, so a cache of compiled profiles is keyed by the
 * two. opts->caps must name the set (a task's effective set may change
 * under a key): -EINVAL without, or for caps or a kernel the compile
 * refuses; -ENOSPC when buf is short. The line's length, or -errno.
 */
#define SF_PROFILE_INPUTS_MAX 256
int sf_profile_inputs(const struct sf_profile_opts *opts, char *buf, size_t size);

/*
 * The gate of a profile for a container runtime (runc, crun): the OCI
 * linux.seccomp object that makes the kernel pass exactly the calls the
 * profile allows or logs (for the caps and kernel of opts, as
 * sf_profile_compile() judges them) and send the others to the seccomp
 * agent at listener_path, listenerMetadata "sfilter-gate". Because runc
 * refuses SCMP_ACT_NOTIFY as the default action and on write, a denied
 * call the gate cannot name keeps the profile's own verdict in the kernel:
 *   - a profile whose default allows or logs: default SCMP_ACT_ALLOW, every
 *     other rule SCMP_ACT_NOTIFY;
 *   - otherwise the profile's default stays; ALLOW and LOG rules become
 *     SCMP_ACT_ALLOW, every other rule SCMP_ACT_NOTIFY, and so does every
 *     syscall libseccomp names on the filter's architectures that no rule
 *     names; what stays with the default is a call of no name, a call that
 *     none of its rules' conditions match, and socketcall and ipc (their
 *     rules are libseccomp's translation of others);
 *   - write keeps the profile's action in the kernel.
 * The result has no includes/excludes (a runtime ignores them: they are
 * the engine's), no archMap (its architectures are listed) and the
 * profile's flags. It is checked by compiling it with libseccomp.
 * 0, or -EINVAL with err naming the JSON path, or -errno.
 */
struct sf_profile_gate {
	char *json;               /* the object, pretty-printed, with a newline */
	size_t len;               /* its filter's instructions, as libseccomp makes it */
	unsigned int n_notify;    /* syscall names the gate notifies (all arches) */
	char **warnings;          /* the profile's, and what the gate could not keep */
	size_t n_warnings;
	/* The profile's own filter, compiled on the way (what
	 * sf_profile_compile() makes of it for opts). */
	struct sf_profile profile;
};
int sf_profile_gate(const char *json, size_t len, const struct sf_profile_opts *opts,
		    const char *listener_path, struct sf_profile_gate *out,
		    struct sf_profile_error *err);
int sf_profile_gate_file(const char *path, const struct sf_profile_opts *opts,
			 const char *listener_path, struct sf_profile_gate *out,
			 struct sf_profile_error *err);
void sf_profile_gate_free(struct sf_profile_gate *g);

/*
 * Which rule of a profile decides a call (sfctl explain).
 * sf_profile_rules_open() compiles the profile at path as
 * sf_profile_compile() does (for opts' caps and kernel) and keeps its
 * rules. sf_profile_rules_explain() takes the call's verdict (seen: what
 * an event saw; NULL: the filter's, from classic2ebpf's reference
 * interpreter) and names the rule that gives it: the first entry of
 * "syscalls", in the file's order, that applies (includes, excludes),
 * names the call's syscall on its architecture, has the verdict's action
 * and whose conditions the arguments meet (unchecked when !args_known: a
 * repeat event has none); a rule whose action is the default's is named
 * too (as_default: libseccomp is never given it). Else "defaultAction"
 * when the verdict is the default's. Anything else (exact false: an
 * architecture the profile does not list, or a call libseccomp makes
 * rules of itself, as i386's socketcall) is said, never guessed.
 */
struct sf_profile_rules;
struct sf_profile_why {
	uint32_t verdict;       /* SECCOMP_RET_* | data */
	long entry;             /* syscalls[entry]; -1: none (defaultAction) */
	char path[40];          /* "syscalls[12]", "defaultAction", or "" */
	char name_path[64];     /* the name it matched: "syscalls[12].names[3]" */
	char syscall[40];       /* the call's name on its architecture, or "" */
	char action[48];        /* as the profile writes it: "SCMP_ACT_ERRNO(1)" */
	char conds[320];        /* the rule's conditions, "" for none:
				   "args index 0 SCMP_CMP_MASKED_EQ 0x7e020000 0x0" */
	bool exact;             /* a rule or the default gives the verdict */
	bool as_default;        /* the rule's action is the default's */
	bool args_unknown;      /* its conditions were not checked */
};
int sf_profile_rules_open(const char *path, const struct sf_profile_opts *opts,
			  struct sf_profile_rules **out, struct sf_profile_error *err);
/* The same from the profile's text (len bytes at json). */
int sf_profile_rules_new(const char *json, size_t len, const struct sf_profile_opts *opts,
			 struct sf_profile_rules **out, struct sf_profile_error *err);
/* The same in a child process, for a caller that lives long and compiles
 * what others send: what libseccomp leaks on some rules (2.5.4 does,
 * ~360 KB for a 64 KiB profile) dies with the child. The child's heap
 * starts cold: a compile so costs more (see sf_profile_set_helper()). A
 * child that gives no result in 10 s is killed and started once more. */
int sf_profile_rules_new_forked(const char *json, size_t len, const struct sf_profile_opts *opts,
				struct sf_profile_rules **out, struct sf_profile_error *err);
/*
 * The same as a job, for a caller with an event loop: _start() forks the
 * child (0 or -errno, said in err); the loop waits for _fd() to be
 * readable, or for _timeout() milliseconds, and then calls _step(): 0
 * with *out, the compile's error (as sf_profile_rules_new()), another
 * -errno said in err, or -EINPROGRESS while the child runs. _free() kills
 * a child still running. A child is given 10 s, then killed and forked
 * once more (a second -ETIMEDOUT ends the job).
 */
struct sf_profile_job;
/*
 * A helper for the forked compiles: the child execs path (arg its one
 * argument; path NULL: none, the child compiles as forked), a program
 * that calls sf_profile_helper_main() and exits with what it returns. A
 * child of a caller with threads then starts clean of the locks they held
 * at the fork (a child that compiles as forked may wait on one), and of the caller's memory and descriptors (all but stderr);
 * the helper gives up root's identity (uid and gid 65534, no groups, no
 * capabilities, no new privileges, not dumpable) and runs 10 below the
 * caller's priority before it reads the profile. 0 or -ENOMEM.
 */
int sf_profile_set_helper(const char *path, const char *arg);
int sf_profile_helper_main(void);
int sf_profile_job__start(const char *json, size_t len, const struct sf_profile_opts *opts,
			  struct sf_profile_job **out, struct sf_profile_error *err);
int sf_profile_job__fd(const struct sf_profile_job *job);
int sf_profile_job__timeout(const struct sf_profile_job *job);
int sf_profile_job__step(struct sf_profile_job *job, struct sf_profile_rules **out,
			 struct sf_profile_error *err);
void sf_profile_job__free(struct sf_profile_job *job);
/* w as the JSON object events and sfctl carry as "rule" into buf (size
 * bytes): {"path", "name", "action", "conditions", "as_default",
 * "conditions_unchecked"} ("path" null, with "why", when !w->exact). The
 * length, or -ENOSPC. */
int sf_profile_why_json(const struct sf_profile_why *w, char *buf, size_t size);
int sf_profile_rules_explain(const struct sf_profile_rules *r, const struct seccomp_data *call,
			     const uint32_t *seen, bool args_known, struct sf_profile_why *out);
/* The compiled filter (what sf_profile_compile() makes). */
const struct sf_profile *sf_profile_rules_filter(const struct sf_profile_rules *r);
void sf_profile_rules_close(struct sf_profile_rules *r);

/* The capability set a caps option names ("all", "none", a comma list
 * of CAP_ names, case-insensitive, "CAP_" optional, or the set as a hex
 * mask, "0x1fffffffff"): 0 or -EINVAL. */
int sf_profile_parse_caps(const char *list, uint64_t *caps);
/* The effective set of task tid (0: the calling thread): 0 or -errno. */
int sf_profile_task_caps(pid_t tid, uint64_t *caps);

/*
 * One line on how the running tier enforces the profile's ERRNO, TRAP and
 * TRACE rules, for a caller that has attached it: tier is the daemon's
 * (its attach note names the tracepoint tier; an attach without a note
 * ran on a tier that reproduces them, lsm). "" when the profile has none.
 */
void sf_profile_tier_text(const struct sf_profile *p, const char *note, int fallback_log,
			  char *out, size_t size);

#ifdef __cplusplus
}
#endif
#endif /* SF_PROFILE_H */
