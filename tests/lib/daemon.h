/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Private sfilterd instances for tests: a temporary directory holding the
 * socket, the event log and the daemon's stderr, and a private pin
 * directory /sys/fs/bpf/sfilter-test-<pid> that sfd_cleanup() tears down
 * with `sfilterd --pin-dir DIR --uninstall`, whatever became of the test.
 *
 * Binaries are found beside the test runner (../NAME from
 * build/tests/sftest, or ./NAME beside it in the guest); an environment
 * variable overrides (SF_SFILTERD, SF_SFCTL, SF_SFILTERD_ASAN, SF_OCI_HOOK).
 */
#ifndef SF_TEST_DAEMON_H
#define SF_TEST_DAEMON_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct sfd {
	pid_t pid;              /* 0: not running */
	char bin[PATH_MAX];
	char dir[64];           /* /tmp/sftest-sfd-XXXXXX */
	char sock[128], log[128], err[128];
	char pin[96];           /* private pin dir; "" = --no-pin */
	char *const *env;       /* extra NAME=VALUE for the daemon, or NULL */
	const char *const *args;/* extra arguments (NULL-terminated, at most 8) */
	bool activated;         /* socket activation: see sfd_start() */
	int exit_status;        /* wait status of the last stop */
};

/*
 * A test file whose daemons judge nothing that differs between the tiers
 * (the protocol, limits, credentials, the CLIs' output) says so with
 * SFD_TIER_INDEPENDENT at file scope. Under emulation its daemons then run
 * on the tracepoint tier: an lsm-tier runtime costs ~10 s there to load
 * and tear down (55 BPF LSM links, attached and detached one at a time),
 * and the lsm tier is tested by the files that enforce.
 */
void sfd_tier_independent(const char *file);
#define SFD_TIER_INDEPENDENT \
	static void __attribute__((constructor)) sfd_tier_independent_file(void) \
	{ sfd_tier_independent(__FILE__); }

/* Finds NAME beside the runner (or $ENV); false when absent. */
bool sfd_find_bin(const char *name, const char *env, char *out, size_t size);
/* The same, with the test skipped ("no NAME beside the test runner") when
 * NAME is absent: most tests of a program cannot run without it. */
bool sfd_need_bin(const char *name, const char *env, char *out, size_t size);
/* The same for a file that is read, not run (the image archive, a
 * hooks.d file the Makefile stages). */
bool sfd_find_file(const char *name, const char *env, char *out, size_t size);
/* One of tests/progs' images (build/tests/sf-NAME, /sf in the guest) beside
 * the runner, or false with the test failed. */
bool sfd_find_test_prog(const char *name, char *out, size_t size);
/* Connects and waits for the daemon's hello (sf_proto_connect()); -1 on
 * failure. */
int sfd_connect(const char *sock);
/* Makes the directories and starts the daemon (dm->bin must be set):
 * pinned under /sys/fs/bpf/sfilter-test-<pid> when pin, else --no-pin.
 * Points SFILTER_SOCKET at it. Fails the test and returns false when it
 * does not listen.
 * With dm->activated, sfd_start() binds and listens on the socket itself
 * and hands it over as fd 3 with LISTEN_PID and LISTEN_FDS, as systemd's
 * socket activation does; the socket then listens before the daemon runs,
 * so whether the daemon serves it is for the test to see. */
bool sfd_start(struct sfd *dm, bool pin);
/* sfd_start() of the sfilterd beside the runner ($SF_SFILTERD); skips the
 * test and returns false when there is none. */
bool sfd_start_sfilterd(struct sfd *dm, bool pin);
/* For a test that becomes other users: sfd_start_sfilterd() unpinned,
 * with args (NULL-terminated, or NULL); skips the test and returns false
 * unless it runs as root. */
bool sfd_start_for_users(struct sfd *dm, const char *const *args);
/* Starts it again on the same socket, log and pin dir. */
bool sfd_restart(struct sfd *dm);
/* Sends sig and reaps it; returns the wait status (-1 if not running). */
int sfd_signal(struct sfd *dm, int sig);
/* Stops it with SIGSTOP and returns once it is stopped (a signal is
 * delivered later than kill() returns); true when it is. */
bool sfd_pause(struct sfd *dm);
/* Continues it after sfd_pause(); true when the signal was sent. */
bool sfd_resume(struct sfd *dm);
/* Stops it (SIGTERM, then SIGKILL), uninstalls the pin dir, removes the
 * temporary directory; prints the daemon's stderr when the test failed. */
void sfd_cleanup(struct sfd *dm);
#define SFD_AUTO struct sfd dm __attribute__((cleanup(sfd_cleanup))) = { 0 }
/* Uninstalls and removes the pin directories /sys/fs/bpf/sfilter-test-*
 * whose last number, the pid of the test that made them, names no live
 * process: a runner killed before its teardown leaves its dispatcher on
 * sys_enter, which every system call of the machine then pays for (and
 * every later benchmark with it). Root only; how many it removed. */
int sfd_sweep_stale_pins(void);
/* Stops it with SIGTERM and checks that the stop is clean: the daemon
 * exits 0 and has removed its socket. True when it was, or when it was not
 * running. */
bool sfd_stop(struct sfd *dm);
/* sfd_stop(), then sfd_cleanup(). */
void sfd_stop_cleanup(struct sfd *dm);
/* SFD_AUTO whose teardown checks the clean stop first: every test with it
 * also specifies how the daemon ends. */
#define SFD_AUTO_STOP struct sfd dm __attribute__((cleanup(sfd_stop_cleanup))) = { 0 }

/* Whether err, a program's stderr, is one line, or (a usage error) one
 * line and the hint "Try 'PROG --help' for more information." (help: the
 * option, "--help" when NULL). */
bool sfd_error_lines(const char *err, const char *prog, const char *help);

/* Whether the file at path contains needle (which has no NUL bytes before
 * it: the event log and stderr are text). */
bool sfd_file_has(const char *path, const char *needle);
/* How many times the daemon's event log holds needle now. */
int sfd_log_count(const struct sfd *dm, const char *needle);
/* Waits until the daemon's event log holds needle: 5 s, 30 s under
 * emulation. */
bool sfd_log_wait(const struct sfd *dm, const char *needle);

/* Runs argv[0] (a path) in a process group of its own, stdin from
 * /dev/null, and collects its stderr (and its stdout, interleaved, when
 * with_stdout; else stdout goes to /dev/null) into out. After timeout_s
 * seconds the group gets SIGTERM, then SIGKILL, and the test fails.
 * Returns the wait status, or -1 when it could not run. */
int sfd_run(const char *const argv[], bool with_stdout, int timeout_s,
	    char *out, size_t size);

/* sfd_run() with stdin from in (in_len bytes; NULL: /dev/null), and
 * stdout and stderr apart, each into its buffer (cut to its size, NUL-
 * terminated; size 0: /dev/null). */
struct sfd_io {
	const char *in;
	size_t in_len;
	char *out;
	size_t out_size;
	char *err;
	size_t err_size;
};
int sfd_run_io(const char *const argv[], const struct sfd_io *io, int timeout_s);

/* Field n of /proc/PID/stat, numbered as proc(5) has them (4: ppid, 19:
 * nice), read past the command's closing parenthesis; LLONG_MIN when the
 * process or the field is not there. */
long long sfd_proc_stat(pid_t pid, int n);
/* The line of /proc/PID/status that starts with key ("Uid:"), into line
 * (size bytes, its newline cut): whether there is one. */
bool sfd_proc_status(pid_t pid, const char *key, char *line, size_t size);
/* Counts the open descriptors of pid (/proc/PID/fd); -1 on error. */
int sfd_count_fds(pid_t pid);
/* The same for those that are not BPF objects (sockets, pipes, files:
 * loaded filters legitimately hold BPF ones), listed as " FD=TARGET..."
 * into list (size bytes). */
int sfd_count_plain_fds(pid_t pid, char *list, size_t size);

/*
 * One raw request on a fresh connection: fills the header (request_id
 * 42) and reads SF_MSG_REPLY messages until one without SF_REPLY_MORE,
 * calling each(ctx, reply, text) for every one. Returns the first reply's
 * error, or -1000 - errno when the exchange itself failed.
 */
struct sf_reply;
int sfd_request(const char *sock, void *msg, uint16_t type, uint32_t len,
		void (*each)(void *ctx, const struct sf_reply *r, const char *text),
		void *ctx);

/* STATUS, as root: the reply's text into out (SF_PROTO_MAX_MSG bytes).
 * What sfd_request() returns. */
int sfd_status(const struct sfd *dm, char *out);
/* In a STATUS text, the number after "field": in uid's entry of
 * "events_dropped_by_uid" ("budget", "ring", "enforced"); -1 when uid has
 * no entry. */
long long sfd_status_drops(const char *status, unsigned int uid, const char *field);

/* A child that attaches kill-on-getppid through sf_attach() (to the
 * daemon SFILTER_SOCKET names) and calls getppid: SIGKILL, asserted as
 * what, shows the daemon served the attach and the filter is in force. */
bool sfd_attach_confines(const char *what);

/* Whether tid is listed by PS with filter id (id 0: with any filter). */
bool sfd_ps_lists(const char *sock, pid_t tid, uint32_t id);
/* PS's object for tid (from its "tid" to its closing brace) into out:
 * false when PS does not list tid. */
bool sfd_ps_task(const char *sock, pid_t tid, char *out, size_t size);

#endif
