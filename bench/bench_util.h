/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers every bench shares, so that two benches that report "p50" or
 * "median paired ratio" compute it the same way: the clock, the statistics
 * over samples (a sample <= 0 is a failed one and never counts), the worker
 * processes that run a measurement when told, the hand-written classic
 * filters, and the Markdown table heads.
 *
 * bench/bench_util.c is linked into every bench; it is not a bench itself.
 * Functions return 0 or a negative errno unless they say otherwise.
 */
#ifndef SF_BENCH_UTIL_H
#define SF_BENCH_UTIL_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/filter.h>

#include "profile.h"

#define BENCH_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- classic filters ------------------------------------------------------ */

#define BENCH_STMT(code, k)         ((struct sock_filter)BPF_STMT(code, k))
#define BENCH_JUMP(code, k, jt, jf) ((struct sock_filter)BPF_JUMP(code, k, jt, jf))
#define BENCH_LD(off)        BENCH_STMT(BPF_LD | BPF_W | BPF_ABS, off)
#define BENCH_JEQ(k, jt, jf) BENCH_JUMP(BPF_JMP | BPF_JEQ | BPF_K, k, jt, jf)
#define BENCH_RET(k)         BENCH_STMT(BPF_RET | BPF_K, k)

#define BENCH_RET_KILL  0x80000000U /* SECCOMP_RET_KILL_PROCESS */
#define BENCH_RET_ALLOW 0x7fff0000U /* SECCOMP_RET_ALLOW */
#define BENCH_AUDIT_ARCH_X86_64 0xc000003eU
#define BENCH_NR_GETPPID 110

/*
 * The 300-rule allowlist of docs/runtime-benchmarks.md: `ld nr; (jeq nr_i,
 * 0, 1; ret ALLOW) x 299` for nr_i 0..299 but getppid, then the 300th rule,
 * getppid with args[0] == K -> ALLOW; default KILL (604 insns). The last
 * rule checks an argument so that no action cache can skip the filter. K
 * is 0 as built; f[BENCH_F300_K_INDEX].k changes it.
 */
#define BENCH_F300_LEN (1 + 299 * 2 + 4 + 1)
#define BENCH_F300_K_INDEX (1 + 299 * 2 + 2)
void bench_build_f300(struct sock_filter f[BENCH_F300_LEN]);

/* Podman's default container profile (Debian's golang-github-containers-
 * common), and the capabilities Podman gives a container by default
 * (default_capabilities in /usr/share/containers/containers.conf): the
 * set the profile's includes/excludes.caps are judged against, as for a
 * container started with no --cap-add. */
#define BENCH_PODMAN_PROFILE "/usr/share/containers/seccomp.json"
#define BENCH_PODMAN_CAPS "CHOWN,DAC_OVERRIDE,FOWNER,FSETID,KILL,NET_BIND_SERVICE," \
			  "SETFCAP,SETGID,SETPCAP,SETUID,SYS_CHROOT"
/* Compiles BENCH_PODMAN_PROFILE for BENCH_PODMAN_CAPS and this kernel into
 * *p (sf_profile_free() it); on failure prints why, prefixed with prog. */
int bench_podman_profile(const char *prog, struct sf_profile *p);
/* Docker's default profile (moby's profiles/seccomp/default.json, which
 * Debian ships only in the source package golang-github-docker-docker-dev,
 * here), and the capabilities Docker gives a container by default (moby's
 * oci/caps/defaults.go). */
#define BENCH_DOCKER_PROFILE "/usr/share/gocode/src/github.com/docker/docker/profiles/seccomp/default.json"
#define BENCH_DOCKER_CAPS "CHOWN,DAC_OVERRIDE,FSETID,FOWNER,MKNOD,NET_RAW,SETGID,SETUID," \
			  "SETFCAP,SETPCAP,NET_BIND_SERVICE,SYS_CHROOT,KILL,AUDIT_WRITE"
/* Compiles the profile in file for caps and this kernel, as
 * bench_podman_profile() does. */
int bench_profile(const char *prog, const char *file, const char *caps, struct sf_profile *p);

/* ---- time, options, environment ----------------------------------------------- */

/* CLOCK_MONOTONIC in ns: a vDSO read, no system call, so that it can be
 * taken inside a filtered child without the filter allowing more. */
double bench_now_ns(void);

/* The options of a bench that runs interleaved rounds: -r ROUNDS, -n COUNT
 * (per variant per round; what names it in the usage line: "CALLS"), -v
 * (verbose may be NULL: -v then is accepted and ignored). An option not
 * given leaves its default. 0, or -EINVAL after printing the usage line. */
int bench_round_opts(int argc, char **argv, const char *what, int *rounds, long *n,
		     int *verbose);
/* The same with one more flag of the bench's own: -FLAG sets *flag_set to
 * 1; flag_usage is its part of the usage line ("[-c]"). */
int bench_round_opts_flag(int argc, char **argv, const char *what, int *rounds, long *n,
			  int *verbose, char flag, const char *flag_usage, int *flag_set);

/* SF_EMULATED=1: the guest runs under TCG, where only ratios mean anything.
 * Titles then carry BENCH_EMULATED_NOTE. */
bool bench_emulated(void);
#define BENCH_EMULATED_NOTE " (emulated: TCG, ratios only)"

/* ---- statistics over the samples v[0..n) that are > 0 --------------------------
 * Each returns -1 when no sample is valid. v is never modified. */

/* Nearest-rank percentile, q in 0..1 (0: the minimum). */
double bench_pct(const double *v, int n, double q);
/* The median proper: the mean of the middle two for an even count (not
 * bench_pct(v, n, 0.5), which takes the lower one). */
double bench_median(const double *v, int n);
/* The smallest valid sample. */
double bench_best(const double *v, int n);
/* How many samples are valid (a count, never -1). */
int bench_valid(const double *v, int n);

/* Paired ratios: x[i] / y[i] per round i (-1 where either failed), so that
 * drift of a shared machine between rounds cancels out. _p50 reduces them
 * with bench_pct(, 0.5), _median with bench_median(). */
double bench_paired_p50(const double *x, const double *y, int n);
double bench_paired_median(const double *x, const double *y, int n);
/* The median over rounds of x[i] - y[i] where both are valid: a difference
 * may be negative, which the statistics above would drop. 0 when no round
 * has both. */
double bench_paired_diff_median(const double *x, const double *y, int n);

/* Drops the rounds r with tainted[r] != 0 (another user's programs were
 * attached) from n_series series of samples, series s's round r at
 * v[s * stride + r]: every series alike, so that pairs stay pairs. Unless
 * every round is tainted: then nothing is dropped. Returns how many
 * rounds were dropped. */
int bench_drop_rounds(const int *tainted, int rounds, double *v, int n_series, int stride);
/* The warning line, if any round was tainted: those rounds were dropped
 * (dropped: what bench_drop_rounds() returned), or every round was and
 * the variants named by what ("none and seccomp") are tainted. */
void bench_taint_warning(const int *tainted, int rounds, int dropped, const char *what);

/* "met", "missed", or "n/a" for a failed figure v: is v <= goal. */
const char *bench_verdict(double v, double goal);

/* ---- other BPF users ----------------------------------------------------------
 * Links of another runtime (a test's leftover pins, another user's tracer)
 * would slow a variant that should run with nothing attached and flatter
 * sfilter against it: a bench counts them and warns. */
enum bench_link_kind {
	BENCH_LINK_TP,  /* raw/BTF tracepoint links: on sys_enter or sys_exit,
			   they send every task through the syscall slow path */
	BENCH_LINK_LSM, /* BPF LSM links */
};
/* How many links of that kind the kernel has now; their ids into ids[0..max)
 * (ids may be NULL). */
int bench_links(enum bench_link_kind kind, uint32_t *ids, int max);
/* How many tracepoint links there are now that are none of own[0..n_own)
 * and not skip (0: none). */
int bench_foreign_tp_links(const uint32_t *own, int n_own, uint32_t skip);
/* At a bench's start, before it attaches anything: how many tracepoint
 * and LSM links exist, with a warning on stdout when any do (the figures
 * then are not bare). */
int bench_bare_check(const char *prog);

struct json_object;
/* The linux.seccomp object moby makes of the profile file for a container
 * with caps ("CHOWN,KILL"): defaultAction, defaultErrnoRet, flags, the
 * native archMap entry's architectures, the entries whose includes and
 * excludes the container meets (caps, amd64, minKernel against this
 * kernel) with their names, action, args and errnoRet; no engine-only
 * keys. NULL when the file does not parse. (bench_moby.c) */
struct json_object *bench_moby_seccomp(const char *profile, const char *caps);
/* Returns once none of the links ids[0..n) exists any more (the kernel
 * drops a link after its last reference, maybe from a workqueue), or
 * after about 2 s. */
void bench_wait_links_gone(const uint32_t *ids, int n);

/* ---- a private sfilterd ---------------------------------------------------------
 * `sfilterd --foreground --no-pin` (or `--pin-dir pin_dir`) `--log -` on a
 * socket in a fresh temporary directory, its output in a log there, and
 * SFILTER_SOCKET pointing at it: nothing outside the bench is touched.
 */
struct bench_daemon {
	char bin[PATH_MAX];     /* the sfilterd ("": beside the bench) */
	char pin_dir[PATH_MAX]; /* "": --no-pin */
	const char *const *args;/* more arguments, NULL-terminated (at most 8), or NULL */
	char dir[40], sock[108], log[PATH_MAX];
	pid_t pid;              /* -1: not running */
};
/* An empty dm->bin from beside this binary (../sfilterd from build/bench/,
 * or ./sfilterd, which is how it sits in /sf/ in the guest). 0, or -ENOENT
 * after a line on stderr. */
int bench_daemon_find(struct bench_daemon *dm);
/* Starts it and waits until it serves its socket (timeout_s). 0 or -errno. */
int bench_daemon_start(struct bench_daemon *dm, double timeout_s);
/* Stops it, tears down what it pinned, removes its directory. */
void bench_daemon_stop(struct bench_daemon *dm);
/* Its tier, as its log says ("unknown" until it does). */
void bench_daemon_tier(const struct bench_daemon *dm, char *out, size_t size);

/* ---- a seccomp agent of the bench's own -----------------------------------------
 * What holds a gate's listener when sfilterd does not: a child installs its
 * gate with gatehand_install() (tests/lib/gatehand.h) and hands the
 * listener to the agent socket at a->path, as it would to sfilterd's; the
 * agent keeps it and answers each notification on a thread of that
 * listener's own, blocked in SECCOMP_IOCTL_NOTIF_RECV (no poll, no epoll:
 * the least a supervisor can do, so the kernel's round trip is what is
 * left). a->answer(a->arg, notif, resp) fills resp's val, error and flags;
 * NULL answers -EPERM at once, judging nothing.
 */
struct seccomp_notif;
struct seccomp_notif_resp;
struct bench_agent_listener;
struct bench_agent {
	void (*answer)(void *arg, const struct seccomp_notif *n, struct seccomp_notif_resp *r);
	void *arg;
	char path[108];
	unsigned long held, notified; /* listeners taken, notifications answered
					 (read them with __atomic_load_n) */
	int fd;                       /* the agent socket */
	pthread_t thread;
	pthread_mutex_t lock;
	struct bench_agent_listener *listeners;
};
/* Binds the agent socket in dir (path "dir/agent.sock") and starts the
 * thread that takes listeners. 0 or -errno. */
int bench_agent_start(struct bench_agent *a, const char *dir);
/* Returns 0 once a->held >= n, -ETIMEDOUT after timeout_s. */
int bench_agent_wait(struct bench_agent *a, unsigned long n, double timeout_s);
/* Stops every listener's thread and closes the listeners: a task still
 * under one of those gates then gets ENOSYS for a call it sends up
 * (seccomp_do_user_notification()), so release after its last run. */
void bench_agent_release(struct bench_agent *a);
/* bench_agent_release(), and the agent socket closed and removed. */
void bench_agent_stop(struct bench_agent *a);

/* ---- Markdown ------------------------------------------------------------------
 * Prints the head of a table, "| cols |" and its rule: cols is "a | b | c"
 * ("a | b |": the last column has no name); the first nleft columns are
 * plain ("---"), the rest right-aligned ("---:"); nleft < 0: every column
 * plain. */
void bench_md_head(const char *cols, int nleft);

/* ---- workers --------------------------------------------------------------------
 * A worker is a forked child that waits for a request on one pipe, measures,
 * and answers on another: what it measures sits in a process of its own
 * (its own seccomp filter, its own runtime chain), apart from the parent
 * that opens and closes the runtime around it.
 */
struct bench_worker {
	const char *prog, *name; /* "syscall_cost", "sf-16": for messages */
	pid_t pid;
	int cmd, resp; /* the parent's ends: requests out, answers in */
	bool dead;
};

/* Forks a worker that runs loop(cmd, resp, arg) on its ends of the pipes;
 * loop must not return (it _exit()s). */
int bench_worker_start(struct bench_worker *w, const char *prog, const char *name,
		       void (*loop)(int cmd, int resp, const void *arg),
		       const void *arg);
/* Sends req and reads exactly resp_size bytes of answer. A worker that
 * does not answer is reaped, reported on stderr ("PROG: worker NAME died
 * (signal 9)") and marked dead: this and every later call return -EPIPE. */
int bench_worker_call(struct bench_worker *w, const void *req, size_t req_size,
		      void *resp, size_t resp_size);
/* Sends the worker's stop request (killing it if that cannot be sent) and
 * reaps it; nothing for a dead one. */
void bench_worker_stop(struct bench_worker *w, const void *req, size_t req_size);

#endif /* SF_BENCH_UTIL_H */
