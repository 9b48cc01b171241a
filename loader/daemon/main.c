// SPDX-License-Identifier: GPL-2.0-only
/*
 * sfilterd: loads sfilter's runtime once and serves attach requests
 * (loader/proto/proto.h, docs/protocol.md) on a Unix socket.
 *
 *   sfilterd [--socket PATH] [--foreground] [--log FILE|-|syslog]
 *            [--pin-dir DIR | --no-pin] [--uninstall] [limits]
 *            [--force-tracepoint] [-v]
 *
 * Administration over the same socket (attach to a running process or a
 * cgroup, detach, replace, status, ps, show, log) for uid 0 or the
 * --admin-group; pinned state under SF_PIN_DIR so a restarted daemon
 * adopts every filter; per-uid limits; and a JSON event log to a file,
 * stdout or syslog that SIGHUP reopens.
 *
 * One epoll loop, every socket non-blocking, beside threads that only
 * detach the idle dispatcher, verify new chain programs and fill their
 * action tables (verify.c): a client that stalls, misbehaves or sends
 * costly filters costs the others nothing (what it does not read waits in
 * a bounded queue of its own, connections are limited per uid: conn.c;
 * the kernel's verifier runs off the loop, one attach per uid at a time). Each request is checked the way seccomp(2) checks the
 * caller (attach.c), attached through the runtime, which puts the filter
 * in force before it returns, and only then answered. Who asks, and what
 * it may do, is decided only from what the kernel vouched for when it
 * happened (peer.c). The modules and what each owns: daemon.h.
 *
 * This file: the options, the set-up, the loop, and --uninstall.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>

#define IDLE_SECONDS    30  /* a connection that sends nothing this long is closed */
#define DEFAULT_LOGFILE "/var/log/sfilterd.log"
/* Repeats of a denied or logged call: one event with a count per interval. */
#define REPEAT_DEFAULT_MS 1000
#define REPEAT_MAX_S      3600

struct sfilterd sfd = { .admin_gid = (gid_t)-1,
			.max_programs = 64, .max_insns = 65536, .max_rate = 100,
			.event_rate = SF_EVENT_RATE_DEFAULT,
			.event_burst = SF_EVENT_BURST_DEFAULT,
			.repeat_ns = REPEAT_DEFAULT_MS * 1000000ULL };

/* The loop's descriptors and whether it should end: this file's alone. */
static int epfd = -1, lfd = -1, sigfd = -1, evfd = -1, vfd = -1, gfd = -1;
static bool stop;

/* epoll tags for the fds that are not clients. */
static char tag_listen, tag_signal, tag_events, tag_verify, tag_gate, tag_compile;

/* What the options ask for beyond d's settings. */
struct setup {
	struct sf_runtime_opts opts;
	bool foreground, no_pin, uninstall;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: sfilterd [--socket PATH] [--foreground] [--log FILE|-|syslog]\n"
		"                [--pin-dir DIR | --no-pin] [--uninstall]\n"
		"                [--max-programs-per-uid N] [--max-insns-per-uid N]\n"
		"                [--max-attach-rate N] [--max-conns-per-uid N]\n"
		"                [--max-conns N] [--max-queue-bytes N] [--admin-group NAME]\n"
		"                [--metrics ADDR:PORT]\n"
		"                [--event-rate N] [--event-burst N] [--repeat-interval S]\n"
		"                [--force-tracepoint] [-v]\n"
		"  --socket PATH       serve on PATH (default $%s, else %s)\n"
		"  --foreground        do not detach; events go to stdout unless --log\n"
		"  --log FILE|-|syslog write events as JSON lines to FILE (- = stdout,\n"
		"                      syslog = syslog(3), facility daemon; default in the\n"
		"                      background: %s); SIGHUP reopens it\n"
		"  --pin-dir DIR       pin (and adopt) programs, maps and links in DIR\n"
		"                      (default %s; mounts bpffs at /sys/fs/bpf if none is)\n"
		"  --no-pin            pin nothing, need no bpffs: stopping the daemon\n"
		"                      unconfines everyone\n"
		"  --uninstall         tear down the pinned state (root) and exit\n"
		"  --max-programs-per-uid N  filters a non-admin uid may have (default 64)\n"
		"  --max-insns-per-uid N     their classic instructions (default 65536)\n"
		"  --max-attach-rate N       attach requests per second per non-admin uid\n"
		"                            (default 100, bursts of as many)\n"
		"  --max-conns-per-uid N     connections of one non-admin uid (default %u,\n"
		"                            0: no limit); at it, its longest idle one is closed\n"
		"  --max-conns N             connections in all (default %u; the last\n"
		"                            sixteenth are kept for admins)\n"
		"  --max-queue-bytes N       replies waiting for a client that does not read\n"
		"                            (default %zu); past it, it is closed\n"
		"  --event-rate N            events a second logged for one login user, for\n"
		"                            its denials and kills and for calls only logged\n"
		"                            each (default %u; 0: no budget); the rest are\n"
		"                            counted and said in the log\n"
		"  --event-burst N           as many at once (default %u)\n"
		"  --repeat-interval S       a process's repeats of one denied or logged\n"
		"                            call make one event with a count per S\n"
		"                            seconds (default %g; 0: an event per call)\n"
		"  --admin-group NAME  members may administer too (default: uid 0 only)\n"
		"  --metrics ADDR:PORT serve Prometheus metrics at /metrics (\":PORT\": loopback)\n"
		"  --force-tracepoint  do not use BPF LSM programs even if the kernel allows them\n"
		"  -v, --verbose       libbpf debug output and one line per request on stderr\n"
		"  --help, --version   this text; sfilterd (sfilter) VERSION\n",
		SF_PROTO_SOCKET_ENV, SF_PROTO_DEFAULT_SOCKET, DEFAULT_LOGFILE, SF_PIN_DIR,
		conn_cfg.per_uid, conn_cfg.total, conn_cfg.queue_bytes, SF_EVENT_RATE_DEFAULT,
		SF_EVENT_BURST_DEFAULT, REPEAT_DEFAULT_MS / 1000.0);
}

/* A usage error as every sfilter program says one (the man pages'
 * CONVENTIONS; loader/cli/cli.c, which the daemon's layer may not link):
 * the line, then where the usage is. The caller exits 2. */
static void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("sfilterd: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'sfilterd --help' for more information.\n", stderr);
}

/* Seconds, as a decimal: 0 or -EINVAL after a usage error on stderr. */
static int set_repeat(const char *arg)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (*arg == '\0' || *end || errno || !(v >= 0 && v <= REPEAT_MAX_S)) {
		usage_error("--repeat-interval '%s': seconds from 0 to %d", arg, REPEAT_MAX_S);
		return -EINVAL;
	}
	sfd.repeat_ns = (uint64_t)(v * 1e9 + 0.5);
	return 0;
}

/* ---- options ------------------------------------------------------------ */

/* A group's id from /etc/group (fgetgrent: no NSS in a static binary), or
 * a number. 0 or -ENOENT. */
static int group_id(const char *name, gid_t *gid)
{
	FILE *f = fopen("/etc/group", "re");
	struct group *g;
	char *end;
	unsigned long v;

	while (f && (g = fgetgrent(f)))
		if (strcmp(g->gr_name, name) == 0) {
			*gid = g->gr_gid;
			fclose(f);
			return 0;
		}
	if (f)
		fclose(f);
	v = strtoul(name, &end, 10);
	if (!*name || *end || v >= UINT32_MAX)
		return -ENOENT;
	*gid = (gid_t)v;
	return 0;
}

/* The numeric options (the limits): opt's value from arg. 0, or -EINVAL
 * after a usage error on stderr. */
static int set_number(int opt, const char *arg)
{
	char *end;
	unsigned long v = strtoul(arg, &end, 10);

	if (*arg == '\0' || *end || v > UINT32_MAX) {
		usage_error("bad number '%s'", arg);
		return -EINVAL;
	}
	/* One message may always wait, so a bound below the largest one
	 * would not bound anything. */
	if ((opt == 'C' && v == 0) || (opt == 'Q' && v < SF_PROTO_MAX_MSG) ||
	    (opt == 'B' && v == 0)) {
		usage_error("--%s %lu: at least %u", opt == 'C' ? "max-conns" : opt == 'B' ?
		     "event-burst" : "max-queue-bytes", v, opt == 'Q' ? SF_PROTO_MAX_MSG : 1);
		return -EINVAL;
	}
	if (opt == 'p')
		sfd.max_programs = v;
	else if (opt == 'i')
		sfd.max_insns = v;
	else if (opt == 'r')
		sfd.max_rate = v;
	else if (opt == 'c')
		conn_cfg.per_uid = v;
	else if (opt == 'C')
		conn_cfg.total = v;
	else if (opt == 'E')
		sfd.event_rate = v;
	else if (opt == 'B')
		sfd.event_burst = v;
	else
		conn_cfg.queue_bytes = v;
	return 0;
}

/* The options into d (and conn_cfg) and s. False: exit with *status. */
static bool parse_options(int argc, char **argv, struct setup *s, int *status)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "log", required_argument, NULL, 'l' },
		{ "force-tracepoint", no_argument, NULL, 't' },
		{ "pin-dir", required_argument, NULL, 'P' },
		{ "no-pin", no_argument, NULL, 'N' },
		{ "uninstall", no_argument, NULL, 'U' },
		{ "max-programs-per-uid", required_argument, NULL, 'p' },
		{ "max-insns-per-uid", required_argument, NULL, 'i' },
		{ "max-attach-rate", required_argument, NULL, 'r' },
		{ "max-conns-per-uid", required_argument, NULL, 'c' },
		{ "max-conns", required_argument, NULL, 'C' },
		{ "max-queue-bytes", required_argument, NULL, 'Q' },
		{ "event-rate", required_argument, NULL, 'E' },
		{ "event-burst", required_argument, NULL, 'B' },
		{ "repeat-interval", required_argument, NULL, 'R' },
		{ "admin-group", required_argument, NULL, 'g' },
		{ "metrics", required_argument, NULL, 'M' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	*status = 2;
	sfd.socket_path = sf_proto_socket_path();
	opterr = 0; /* the bad option is named below, in one line */
	while ((opt = getopt_long(argc, argv, ":s:fl:tvh", longopts, NULL)) != -1) {
		switch (opt) {
		case 's': sfd.socket_path = optarg; break;
		case 'f': s->foreground = true; break;
		case 'l': sfd.log_path = optarg; break;
		case 't': s->opts.force_tracepoint = true; break;
		case 'P': sfd.pin_dir = optarg; break;
		case 'N': s->no_pin = true; break;
		case 'U': s->uninstall = true; break;
		case 'p': case 'i': case 'r': case 'c': case 'C': case 'Q': case 'E': case 'B':
			if (set_number(opt, optarg) < 0)
				return false;
			break;
		case 'g':
			if (group_id(optarg, &sfd.admin_gid) < 0) {
				usage_error("--admin-group: no group '%s' in /etc/group", optarg);
				return false;
			}
			break;
		case 'M': sfd.metrics_addr = optarg; break;
		case 'R':
			if (set_repeat(optarg) < 0)
				return false;
			break;
		case 'v': sfd.verbose = s->opts.verbose = true; break;
		case 'h': usage(stdout); *status = 0; return false;
		case 'V':
			printf("sfilterd (sfilter) %s\n", SF_VERSION);
			*status = 0;
			return false;
		case ':':
			usage_error("option '%s' needs an argument", argv[optind - 1]);
			return false;
		default:
			if (optopt && strncmp(argv[optind - 1], "--", 2))
				usage_error("unknown option '-%c'", optopt);
			else
				usage_error("unknown option '%.*s'",
					    (int)strcspn(argv[optind - 1], "="), argv[optind - 1]);
			return false;
		}
	}
	if (optind < argc) {
		usage_error("unexpected argument '%s'", argv[optind]);
		return false;
	}
	if (s->no_pin && sfd.pin_dir) {
		usage_error("--no-pin and --pin-dir exclude each other");
		return false;
	}
	if (!sfd.pin_dir)
		sfd.pin_dir = SF_PIN_DIR;
	return true;
}

/* The daemon leaves its working directory (chdir("/")) but reopens its log
 * on SIGHUP and removes its socket at exit: keep both paths absolute. */
static const char *absolute(const char *path)
{
	char cwd[PATH_MAX], *abs;

	if (!path || path[0] == '/' || strcmp(path, "-") == 0 || !getcwd(cwd, sizeof(cwd)))
		return path;
	if (asprintf(&abs, "%s/%s", cwd, path) < 0)
		return path;
	return abs;
}

/* ---- --uninstall -------------------------------------------------------- */

/* sfilterd --uninstall: adopt the pinned state, tear it down, exit.
 * Refused while a daemon serves the socket (stop it first). The status to
 * exit with. */
static int uninstall(const struct sf_runtime_opts *opts)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct sf_runtime *rt;
	bool adopted = false;
	int fd, r;

	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", sfd.socket_path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0) {
		close(fd);
		diag("a daemon is serving %s: stop it first", sfd.socket_path);
		return 1;
	}
	if (fd >= 0)
		close(fd);
	gate_uninstall();
	/* Opening would load (and mount bpffs) only to tear it down. */
	if (access(sfd.pin_dir, F_OK) && errno == ENOENT) {
		diag("%s does not exist: nothing is pinned", sfd.pin_dir);
		return 0;
	}
	r = sf_runtime_open_pinned(&rt, opts, sfd.pin_dir, &adopted);
	if (r == -EPROTO) {
		/* Another version's pins: removing them is all we can do. */
		r = sf_runtime_uninstall_dir(sfd.pin_dir);
		if (r < 0) {
			diag("uninstall %s: %s", sfd.pin_dir, strerror(-r));
			return 1;
		}
		diag("%s: pinned state of another version torn down; every filter is detached",
		     sfd.pin_dir);
		return 0;
	}
	if (r < 0) {
		diag("cannot open the pinned state in %s: %s", sfd.pin_dir, strerror(-r));
		return 1;
	}
	r = sf_runtime_uninstall(rt);
	sf_runtime_close(rt);
	if (r < 0) {
		diag("uninstall %s: %s", sfd.pin_dir, strerror(-r));
		return 1;
	}
	diag("%s: %s; every filter is detached", sfd.pin_dir,
	     adopted ? "pinned state torn down" : "nothing was pinned");
	return 0;
}

/* ---- set-up ------------------------------------------------------------- */

/* The runtime, pinned under sfd.pin_dir (mounting bpffs if need be) unless
 * --no-pin. 0, or -errno after a line on stderr. */
static int open_runtime(const struct setup *s)
{
	char msg[PATH_MAX + 256];
	int r;

	if (s->no_pin) {
		r = sf_runtime_open(&sfd.rt, &s->opts);
	} else {
		/* Here, not in the runtime's call, so that a failure is one
		 * line that also offers the unpinned way. */
		if ((r = sf_bpffs_ensure(sfd.pin_dir, msg, sizeof(msg))) < 0) {
			diag("%s, or run sfilterd --no-pin", msg);
			return r;
		}
		if (msg[0])
			diag("%s", msg);
		r = sf_runtime_open_pinned(&sfd.rt, &s->opts, sfd.pin_dir, &sfd.adopted);
		sfd.pinned = r == 0;
	}
	sfd.started = time(NULL);
	if (r < 0)
		diag("cannot load the runtime: %s", strerror(-r));
	return r;
}

/* Detaches from the terminal once the socket is ready, so that when the
 * command returns, clients can connect. The parent reports the daemon's
 * pid and exits 0. 0 or -errno. */
static int daemonize(void)
{
	pid_t pid = fork();
	int null;

	if (pid < 0)
		return -errno;
	if (pid > 0) {
		diag("tier %s, serving %s (pid %d)",
		     sf_tier_name(sf_runtime_tier(sfd.rt)), sfd.socket_path, pid);
		_exit(0);
	}
	setsid();
	if (chdir("/") < 0)
		return -errno;
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, 0);
		if (!eventlog_on_stdout())
			dup2(null, 1);
		dup2(null, 2);
		if (null > 2)
			close(null);
	}
	return 0;
}

static int epoll_add(int fd, void *tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = tag };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

/* The epoll set: the listening socket, the signals, the connections'
 * table, the verifier's jobs done, the profiles' compiles, and the
 * runtime's events when they can be polled (without, the loop polls every
 * 100 ms). 0 or -errno after a line on stderr. */
static int watch_fds(const sigset_t *sigs)
{
	int r;

	epfd = epoll_create1(EPOLL_CLOEXEC);
	sigfd = signalfd(-1, sigs, SFD_NONBLOCK | SFD_CLOEXEC);
	evfd = sf_runtime_event_fd(sfd.rt);
	if (epfd < 0 || sigfd < 0 || conn_init(epfd) < 0 ||
	    epoll_add(lfd, &tag_listen) < 0 || epoll_add(sigfd, &tag_signal) < 0) {
		r = -errno;
		diag("epoll: %s", strerror(-r));
		return r;
	}
	if ((vfd = verify_start()) < 0)
		return vfd;
	if (epoll_add(vfd, &tag_verify) < 0) {
		r = -errno;
		diag("epoll: %s", strerror(-r));
		verify_stop();
		return r;
	}
	if (evfd >= 0 && epoll_add(evfd, &tag_events) < 0)
		evfd = -1;
	if ((r = rulecache_init(epfd, &tag_compile)) < 0) {
		diag("the profiles' compiles: epoll: %s", strerror(-r));
		verify_stop();
		return r;
	}
	/* Without the gate the daemon still serves, at the tier's strength. */
	gfd = gate_start();
	if (gfd >= 0 && epoll_add(gfd, &tag_gate) < 0)
		diag("the gate's events: epoll: %s", strerror(errno));
	/* Threads do not survive daemonize()'s fork: the server's starts here. */
	return metrics_start();
}

/* Everything up to serving: the log, the runtime, the socket, the
 * detaching, the epoll set. 0, or -errno after a line on stderr (and
 * nothing left behind for the next daemon to trip on). */
static int set_up(const struct setup *s, sigset_t *sigs)
{
	int r;

	if (!s->foreground && !sfd.log_path)
		sfd.log_path = DEFAULT_LOGFILE;
	if (sfd.log_path && strcmp(sfd.log_path, "syslog") == 0)
		sfd.use_syslog = true;
	sfd.log_path = absolute(sfd.log_path);
	sfd.socket_path = absolute(sfd.socket_path);
	if ((r = eventlog_open()) < 0)
		return r;
	/* Before the runtime opens its maps and programs: the connection
	 * limits, not the descriptor table, decide who is served. */
	conn_raise_nofile();

	/* Signals arrive through a signalfd, in the loop. */
	sigemptyset(sigs);
	sigaddset(sigs, SIGTERM);
	sigaddset(sigs, SIGINT);
	sigaddset(sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	if ((r = open_runtime(s)) < 0)
		return r;
	sf_runtime_set_event_budget(sfd.rt, sfd.event_rate, sfd.event_burst);
	sf_runtime_set_repeat_interval(sfd.rt, sfd.repeat_ns);
	/* The suite's: fork children get no task storage (orphans). */
	if (getenv("SF_TEST_NO_STORAGE"))
		sf_runtime_test_knob(sfd.rt, SF_TEST_NO_STORAGE,
				     (uint32_t)strtoul(getenv("SF_TEST_NO_STORAGE"), NULL, 10));
	/* The suite's: a chain's own program comes that much later after
	 * its stand-in, so that a test sees the stand-in in force. */
	if (getenv("SF_TEST_SETTLE_DELAY_MS"))
		sf_runtime_test_knob(sfd.rt, SF_TEST_SETTLE_DELAY_MS,
				     (uint32_t)strtoul(getenv("SF_TEST_SETTLE_DELAY_MS"), NULL, 10));
	/* The suite's: the gate's judge waits between reading a chain and
	 * acting, so that a test can kill the daemon in between. */
	if (getenv("SF_TEST_GATE_DELAY_US"))
		sf_runtime_test_knob(sfd.rt, SF_TEST_GATE_DELAY_US,
				     (uint32_t)strtoul(getenv("SF_TEST_GATE_DELAY_US"), NULL, 10));
	/* Before any socket: a port taken leaves nothing to remove. */
	if (sfd.metrics_addr && (r = metrics_open(sfd.metrics_addr)) < 0) {
		sf_runtime_close(sfd.rt);
		return r;
	}
	lfd = listen_socket(sfd.socket_path);
	if (lfd < 0) {
		sf_runtime_close(sfd.rt);
		return lfd;
	}
	if (gate_listen() < 0)
		diag("the gate is off: no agent socket");

	/* Detach before the signalfd and the epoll set exist: a signalfd
	 * polled through epoll stays tied to the process that added it. */
	if (s->foreground)
		diag("tier %s%s%s%s, serving %s (pid %d)",
		     sf_tier_name(sf_runtime_tier(sfd.rt)),
		     *sf_runtime_tier_reason(sfd.rt) ? " (" : "", sf_runtime_tier_reason(sfd.rt),
		     *sf_runtime_tier_reason(sfd.rt) ? ")" : "", sfd.socket_path, getpid());
	else if ((r = daemonize()) < 0)
		return r;
	if ((r = watch_fds(sigs)) < 0) {
		unlink(sfd.socket_path);
		sf_runtime_close(sfd.rt);
		return r;
	}
	return 0;
}

/* ---- the loop ----------------------------------------------------------- */

static void read_signals(void)
{
	struct signalfd_siginfo si;

	while (read(sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP)
			eventlog_open();
		else
			stop = true;
	}
}

/* The attaches the verifier has done, then the requests parked behind
 * them whose uid's turn it is now. */
static void answer_verified(void)
{
	verify_ready();
	while (request_resume())
		;
}

/* One event handled: whether it may have loaded a chain (a request, an
 * attach verified, a gate's call judged), for the filler to look at. A
 * connection accepted has not: waking the filler then had it take the
 * runtime's lock as the connection's first request came. */
static bool dispatch(const struct epoll_event *ev)
{
	void *tag = ev->data.ptr;

	if (tag == &tag_listen) {
		peer_accept(lfd);
		return false;
	}
	if (tag == &tag_signal) {
		read_signals();
		return false;
	}
	if (tag == &tag_verify)
		answer_verified();
	else if (tag == &tag_events)
		eventlog_drain();
	else if (tag == &tag_gate)
		gate_ready();
	else if (tag == &tag_compile)
		rulecache_step();
	else if (conn_ready(tag, ev->events))
		request_handle(tag);
	return true;
}

/* Every IDLE_CHECK_SECONDS: once nothing can be judged (the last confined
 * task has exited), the dispatcher and the LSM programs are detached, and
 * every syscall on the machine costs what it costs without sfilter. On a
 * thread of its own, beside the loop: the runtime's lock is held only for
 * the check (one iterator pass), and detaching the LSM programs (a
 * trampoline rewritten per hook: seconds under emulation) must not hold
 * up requests. */
#define IDLE_CHECK_SECONDS 2
static struct {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop, running;
} idle = { .lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER };

static void *idle_loop(void *arg)
{
	struct timespec at;
	int r;

	(void)arg;
	pthread_mutex_lock(&idle.lock);
	while (!idle.stop) {
		clock_gettime(CLOCK_REALTIME, &at);
		at.tv_sec += IDLE_CHECK_SECONDS;
		if (pthread_cond_timedwait(&idle.wake, &idle.lock, &at) != ETIMEDOUT)
			continue;
		pthread_mutex_unlock(&idle.lock);
		r = sf_runtime_idle_check(sfd.rt);
		if (r < 0)
			diag("detaching the idle dispatcher: %s", strerror(-r));
		else if (r > 0 && sfd.verbose)
			diag("nothing to judge: the dispatcher is detached until the next filter");
		pthread_mutex_lock(&idle.lock);
	}
	pthread_mutex_unlock(&idle.lock);
	return NULL;
}

static void idle_start(void)
{
	idle.running = pthread_create(&idle.thread, NULL, idle_loop, NULL) == 0;
	if (!idle.running)
		diag("no idle-check thread: the dispatcher stays attached once attached");
}

static void idle_stop(void)
{
	if (!idle.running)
		return;
	pthread_mutex_lock(&idle.lock);
	idle.stop = true;
	pthread_cond_signal(&idle.wake);
	pthread_mutex_unlock(&idle.lock);
	pthread_join(idle.thread, NULL);
}

static void serve(void)
{
	while (!stop) {
		struct epoll_event evs[64];
		/* Cgroup joins that user space must finish (tasks that
		 * already had a chain, see sf_runtime_process_pending())
		 * wake us through the event ring; the 100 ms timeout bounds
		 * the wait should that wake-up be lost (ring full). */
		int n = epoll_wait(epfd, evs, 64, 100), i;
		bool work = false;

		if (n < 0 && errno != EINTR) {
			diag("epoll_wait: %s", strerror(errno));
			break;
		}
		for (i = 0; i < n; i++)
			work |= dispatch(&evs[i]);
		if (evfd < 0)
			eventlog_drain();
		eventlog_tick(false);
		eventagg_tick(eventlog_drained());
		record_tick();
		metrics_snapshot();
		conn_sweep_idle(IDLE_SECONDS);
		conn_free_closed();
		sf_runtime_process_pending(sfd.rt);
		rulecache_step(); /* the compiles' deadlines */
		/* Deferred action tables and searched forms are made off the
		 * loop (verify.c), so they never delay a reply; a request may
		 * have loaded a chain. */
		if (work)
			verify_tables_due();
	}
}

static void log_start_stop(bool start)
{
	char line[PATH_MAX + 128];

	if (start)
		snprintf(line, sizeof(line), "{\"sfilterd\":\"start\",\"pid\":%d,\"tier\":\"%s\","
			 "\"version\":\"%s\",\"pinned\":%s,\"adopted\":%s}",
			 getpid(), sf_tier_name(sf_runtime_tier(sfd.rt)), SF_VERSION,
			 sfd.pinned ? "true" : "false", sfd.adopted ? "true" : "false");
	else
		snprintf(line, sizeof(line), "{\"sfilterd\":\"stop\",\"pid\":%d,\"pinned\":%s}",
			 getpid(), sfd.pinned ? "true" : "false");
	log_line(line);
	log_flush();
}

int main(int argc, char **argv)
{
	/* Replies do not wait for a new chain's action table (a cache):
	 * a thread of its own fills it (verify.c); nor for the verifier's
	 * check of its searched form: the linear form, checked faster, is
	 * in force first (verify.c swaps). */
	struct setup s = { .opts = { .defer_tables = true, .linear_first = true } };
	sigset_t sigs;
	int status;

	if (rulecache_helper(argc, argv, &status))
		return status;
	if (!parse_options(argc, argv, &s, &status))
		return status;
	if (s.uninstall)
		return uninstall(&s.opts);
	if (set_up(&s, &sigs) < 0)
		return 1;
	log_start_stop(true);
	idle_start();
	serve();
	idle_stop();
	rulecache_stop();
	metrics_stop();
	verify_stop();
	gate_stop();

	eventlog_stop();
	while (conn_count)
		conn_close(conn_list[0]);
	conn_free_closed();
	close(lfd);
	unlink(sfd.socket_path);
	log_start_stop(false);
	/* Pinned: close leaves every filter in force for the next daemon. */
	sf_runtime_close(sfd.rt);
	return 0;
}
