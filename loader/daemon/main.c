// SPDX-License-Identifier: GPL-2.0
/*
 * sfilterd: loads sfilter's runtime once and serves attach requests
 * (loader/proto.h, docs/protocol.md) on a Unix socket.
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
 * One thread, one epoll loop, every socket non-blocking: a client that
 * stalls or misbehaves costs the others nothing (what it does not read
 * waits in a bounded queue of its own, and connections are limited per
 * uid: conn.c). Each request is checked
 * the way seccomp(2) checks the caller (flags, length, the caller's
 * no_new_privs or CAP_SYS_ADMIN, the program), attached through the
 * runtime, which puts the filter in force before it returns, and only then
 * answered.
 *
 * Who asks, and what it may do, is decided only from what the kernel
 * vouched for when it happened, never from /proc read later:
 *   - the connecting process (SO_PEERCRED, SO_PEERGROUPS at connect),
 *     pinned by a pidfd taken at accept (SO_PEERPIDFD from Linux 6.5;
 *     pidfd_open() before), and identified then by the runtime (tgid,
 *     leader start time, exec id) before the daemon sends its hello: a
 *     connection on which a request arrived before the hello is refused;
 *   - each request's credentials (SCM_CREDENTIALS, checked by the kernel
 *     at send time): admin is uid 0 then, or the --admin-group; a request
 *     sent by another process than the one that connected is refused;
 *   - a self-attach applies only to a thread of that very process, with
 *     no_new_privs or CAP_SYS_ADMIN, that has not exec'd since the hello,
 *     all judged by the runtime in the step that applies it;
 *   - an admin's attach by pid carries a pidfd taken by the client.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
/* sfclient.h first: runtime.h then redefines SF_ATTACH_*, and the compiler
 * warns if the client's values ever drift from the runtime's. */
#include "sfclient.h"
#include "runtime.h"
#include "proto.h"
#include "event_json.h"
#include "conn.h"
#include "c2e.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <json-c/json.h>
#include <syslog.h>
#include <grp.h>

#define IDLE_SECONDS    30  /* a connection that sends nothing this long is closed */
#define DEFAULT_LOGFILE "/var/log/sfilterd.log"

static struct {
	struct sf_runtime *rt;
	const char *socket_path;
	const char *log_path;   /* NULL or "-": stdout */
	FILE *log;
	bool verbose;
	int epfd, lfd, sigfd, evfd;
	bool stop;
	bool use_syslog;
	bool pinned, adopted;
	const char *pin_dir;
	time_t started;
	uint64_t n_events;
	/* sf_attach()es put in force (each is armed for its caller). */
	uint64_t n_armed;
	/* per-uid limits (non-admin peers only) */
	uint32_t max_programs, max_insns, max_rate;
	gid_t admin_gid;        /* --admin-group, or (gid_t)-1 */
} d = { .admin_gid = (gid_t)-1, .epfd = -1, .lfd = -1, .sigfd = -1, .evfd = -1,
	.max_programs = 64, .max_insns = 65536, .max_rate = 100 };

#define SFILTERD_VERSION "0.1.0"

/* Filters the daemon attached for non-admin peers, for the per-uid limits.
 * An entry whose filter is no longer in any task's chain is dropped when a
 * uid reaches a limit (refresh_accounts()). */
struct acct_filter { uint32_t id; uid_t uid; uint32_t len; };
static struct acct_filter *accts;
static size_t n_acct, cap_acct;
/* Token buckets for the attach rate, one per uid seen. */
struct rate { uid_t uid; double tokens; struct timespec last; };
static struct rate rates[1024];
static size_t n_rates;

/* The last events, for LOG without --follow and for a follower's backlog.
 * uid: the real uid of the task that made the call. */
#define RING_EVENTS 512
struct ring_ev { uid_t uid; char *json; };
static struct ring_ev ring[RING_EVENTS];
static size_t ring_next;

/* epoll tags for the fds that are not clients. */
static char tag_listen, tag_signal, tag_events;

/* The one receive buffer: one request is handled at a time. One byte more
 * than the largest message so an oversized one is seen as such. */
static union {
	struct sf_msg_hdr hdr;
	struct sf_attach_req attach;
	char bytes[SF_PROTO_MAX_MSG + 8];
} rbuf;

void diag(const char *fmt, ...)
{
	va_list ap;

	fputs("sfilterd: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: sfilterd [--socket PATH] [--foreground] [--log FILE|-|syslog]\n"
		"                [--pin-dir DIR | --no-pin] [--uninstall]\n"
		"                [--max-programs-per-uid N] [--max-insns-per-uid N]\n"
		"                [--max-attach-rate N] [--max-conns-per-uid N]\n"
		"                [--max-conns N] [--max-queue-bytes N] [--admin-group NAME]\n"
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
		"                            0: none); at it, its longest idle one is closed\n"
		"  --max-conns N             connections in all (default %u; the last\n"
		"                            sixteenth are kept for admins)\n"
		"  --max-queue-bytes N       replies waiting for a client that does not read\n"
		"                            (default %zu); past it, it is closed\n"
		"  --admin-group NAME  members may administer too (default: uid 0 only)\n"
		"  --force-tracepoint  do not use BPF LSM programs even if the kernel allows them\n"
		"  -v, --verbose       libbpf debug output and one line per request on stderr\n",
		SF_PROTO_SOCKET_ENV, SF_PROTO_DEFAULT_SOCKET, DEFAULT_LOGFILE, SF_PIN_DIR,
		conn_cfg.per_uid, conn_cfg.total, conn_cfg.queue_bytes);
}

/* ---- the event log ------------------------------------------------------ */

static int open_log(void)
{
	FILE *f;

	if (d.use_syslog) {
		closelog();
		openlog("sfilterd", LOG_PID | LOG_NDELAY, LOG_DAEMON);
		return 0;
	}
	if (!d.log_path || strcmp(d.log_path, "-") == 0) {
		d.log = stdout;
		return 0;
	}
	f = fopen(d.log_path, "ae");
	if (!f) {
		diag("%s: %s", d.log_path, strerror(errno));
		return -1;
	}
	setvbuf(f, NULL, _IOLBF, 0);
	if (d.log && d.log != stdout)
		fclose(d.log);
	d.log = f;
	return 0;
}

void log_line(const char *line)
{
	if (d.use_syslog)
		syslog(LOG_NOTICE, "%s", line);
	else if (d.log)
		fprintf(d.log, "%s\n", line);
}

void log_flush(void)
{
	if (!d.use_syslog && d.log)
		fflush(d.log);
}

static int log_event(void *ctx, const struct sf_event *ev)
{
	char buf[2048];
	int n = sf_event_to_json(ev, buf, sizeof(buf)), i;
	struct ring_ev *r;
	uid_t uid;

	(void)ctx;
	if (n <= 0)
		return 0;
	d.n_events++;
	log_line(buf);
	/* Whose event it is: the task's real uid at the call, recorded by
	 * the BPF side (a killed task is gone by now, and a filter's owner
	 * is not its user: identical filters share an id). */
	uid = ev->uid;
	r = &ring[ring_next++ % RING_EVENTS];
	free(r->json);
	r->json = strdup(buf);
	r->uid = uid;
	/* Downwards: a follower closed here takes the last one's place. */
	for (i = conn_count - 1; i >= 0; i--) {
		struct client *c = conn_list[i];

		if (!c->follow || (!c->follow_admin && c->uid != uid))
			continue;
		/* Through the follower's queue: one that does not keep up
		 * is closed once its queue is over the bound, one that has
		 * gone at once; neither costs the others any time. */
		conn_greply(c, 0, 0, 0, SF_REPLY_MORE, buf, NULL, 0);
	}
	return 0;
}

static void drain_events(void)
{
	sf_runtime_poll_events(d.rt, 0, log_event, NULL);
	log_flush();
}

/* ---- facts about the requester ------------------------------------------ */

static bool pidfd_alive(int pidfd)
{
	return pidfd >= 0 &&
	       syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0;
}

/* On the tracepoint tier, the actions a filter may return that the tier
 * cannot reproduce, for the reply's note ("" when none). */
static void fallback_note(const struct sock_filter *insns, uint32_t n_insns,
			  char *out, size_t size)
{
	static const struct { uint32_t action; const char *name; } gaps[] = {
		{ SECCOMP_RET_ERRNO, "ERRNO" }, { SECCOMP_RET_TRAP, "TRAP" },
		{ SECCOMP_RET_TRACE, "TRACE" }, { SECCOMP_RET_USER_NOTIF, "USER_NOTIF" },
	};
	bool seen[4] = { false }, ret_a = false;
	size_t used = 0, i, g;

	out[0] = '\0';
	if (sf_runtime_tier(d.rt) != SF_TIER_TRACEPOINT)
		return;
	for (i = 0; i < n_insns; i++) {
		const struct sock_filter *f = &insns[i];

		if (BPF_CLASS(f->code) != BPF_RET)
			continue;
		if (BPF_RVAL(f->code) == BPF_A) {
			ret_a = true;
			continue;
		}
		for (g = 0; g < 4; g++)
			if ((f->k & SECCOMP_RET_ACTION_FULL) == gaps[g].action)
				seen[g] = true;
	}
	for (g = 0; g < 4; g++)
		if (seen[g] && used < size)
			used += snprintf(out + used, size - used, "%s%s",
					 used ? ", " : "", gaps[g].name);
	if (ret_a && used < size)
		used += snprintf(out + used, size - used, "%sRET A (any action)",
				 used ? ", " : "");
}

/* ---- privilege and limits ----------------------------------------------- */

/* Administration needs uid 0 when the request was sent (its kernel-checked
 * SCM_CREDENTIALS: the client sends its effective ids), or the admin
 * group: as the request's gid, or among the groups the process had when
 * it connected (SO_PEERGROUPS) if it is still the uid that connected. */
static bool sender_is_admin(const struct client *c, const struct ucred *sender)
{
	if (sender->uid == 0)
		return true;
	if (d.admin_gid == (gid_t)-1)
		return false;
	return sender->gid == d.admin_gid ||
	       (c->in_admin_group && sender->uid == c->uid);
}

static void account(uint32_t id, uid_t uid, uint32_t len)
{
	size_t i;

	for (i = 0; i < n_acct; i++)
		if (accts[i].id == id)
			return; /* deduplicated: the same filter counts once */
	if (n_acct == cap_acct) {
		size_t cap = cap_acct ? 2 * cap_acct : 64;
		struct acct_filter *a = realloc(accts, cap * sizeof(*a));

		if (!a)
			return;
		accts = a;
		cap_acct = cap;
	}
	accts[n_acct++] = (struct acct_filter){ id, uid, len };
}

static void unaccount(uint32_t id)
{
	size_t i;

	for (i = 0; i < n_acct; i++)
		if (accts[i].id == id) {
			accts[i] = accts[--n_acct];
			return;
		}
}

struct live_ids { uint32_t *ids; size_t n, cap; };

static int collect_ids(void *ctx, const struct sf_task_info *t)
{
	struct live_ids *l = ctx;
	uint32_t i, n = t->n_filters < 64 ? t->n_filters : 64;

	for (i = 0; i < n; i++) {
		if (l->n == l->cap) {
			size_t cap = l->cap ? 2 * l->cap : 256;
			uint32_t *p = realloc(l->ids, cap * sizeof(*p));

			if (!p)
				return -ENOMEM;
			l->ids = p;
			l->cap = cap;
		}
		l->ids[l->n++] = t->filter_ids[i];
	}
	return 0;
}

/* Forgets filters no task uses any more (their tasks exited). */
static void refresh_accounts(void)
{
	struct live_ids l = { 0 };
	size_t i, j;

	if (sf_runtime_for_each_task(d.rt, collect_ids, &l) < 0) {
		free(l.ids);
		return;
	}
	for (i = 0; i < n_acct;) {
		for (j = 0; j < l.n && l.ids[j] != accts[i].id; j++)
			;
		if (j == l.n)
			accts[i] = accts[--n_acct];
		else
			i++;
	}
	free(l.ids);
}

static void usage_of(uid_t uid, uint32_t *progs, uint64_t *insns)
{
	size_t i;

	*progs = 0;
	*insns = 0;
	for (i = 0; i < n_acct; i++)
		if (accts[i].uid == uid) {
			(*progs)++;
			*insns += accts[i].len;
		}
}

/* 0, EAGAIN (rate) or ENOSPC (programs, instructions). Only the asking uid
 * is affected. */
static int check_limits(uid_t uid, uint32_t n_insns, char *msg, size_t msz)
{
	struct timespec now;
	struct rate *rt = NULL;
	uint32_t progs;
	uint64_t insns;
	size_t i;

	clock_gettime(CLOCK_MONOTONIC, &now);
	for (i = 0; i < n_rates; i++)
		if (rates[i].uid == uid)
			rt = &rates[i];
	if (!rt && n_rates < sizeof(rates) / sizeof(rates[0])) {
		rt = &rates[n_rates++];
		*rt = (struct rate){ uid, d.max_rate, now };
	}
	if (rt && d.max_rate) {
		double dt = (now.tv_sec - rt->last.tv_sec) +
			    (now.tv_nsec - rt->last.tv_nsec) / 1e9;

		rt->tokens += dt * d.max_rate;
		if (rt->tokens > d.max_rate)
			rt->tokens = d.max_rate;
		rt->last = now;
		if (rt->tokens < 1) {
			snprintf(msg, msz, "uid %u: more than %u attach requests per second",
				 uid, d.max_rate);
			return EAGAIN;
		}
		rt->tokens -= 1;
	}
	usage_of(uid, &progs, &insns);
	if (progs + 1 > d.max_programs || insns + n_insns > d.max_insns) {
		refresh_accounts();
		usage_of(uid, &progs, &insns);
	}
	if (progs + 1 > d.max_programs) {
		snprintf(msg, msz, "uid %u already has %u filters (limit %u)",
			 uid, progs, d.max_programs);
		return ENOSPC;
	}
	if (insns + n_insns > d.max_insns) {
		snprintf(msg, msz, "uid %u: %" PRIu64 " + %u instructions exceed the limit of %u",
			 uid, insns, n_insns, d.max_insns);
		return ENOSPC;
	}
	return 0;
}

/* ---- requests ----------------------------------------------------------- */

/* Returns the reply's error (0, a positive errno, or -tid for TSYNC) and
 * fills msg. seccomp_set_mode_filter()'s order: flags, length, then the
 * caller's privilege and the program. */
static int do_attach(struct client *c, const struct ucred *sender,
		     struct sf_attach_req *req, uint32_t *filter_id,
		     char *msg, size_t msz)
{
	struct sock_fprog prog = { .len = (unsigned short)req->n_insns,
				   .filter = req->insns };
	struct sf_target tg = { .process = &c->ident, .self = true,
				.reply_fd = req->reply_fd };
	struct c2e_error cerr;
	char note[128], ebuf[256];
	bool admin;
	int r;

	if (req->flags & ~(uint32_t)SF_ATTACH_KNOWN_FLAGS) {
		snprintf(msg, msz, "unknown flags 0x%x",
			 req->flags & ~(uint32_t)SF_ATTACH_KNOWN_FLAGS);
		return EINVAL;
	}
	if (req->n_insns == 0 || req->n_insns > C2E_MAX_INSNS) {
		snprintf(msg, msz, "program length %u: must be 1 to %d instructions",
			 req->n_insns, C2E_MAX_INSNS);
		return EINVAL;
	}
	if (sender->pid != c->pid) {
		snprintf(msg, msz, "request sent by pid %d on a connection made by pid %d: "
			 "a process may only attach to its own threads",
			 sender->pid, c->pid);
		return EACCES;
	}
	if (c2e_validate(req->insns, req->n_insns, &cerr) < 0) {
		snprintf(msg, msz, "%s", c2e_error_str(&cerr, ebuf, sizeof(ebuf)));
		return EINVAL;
	}
	admin = sender_is_admin(c, sender);
	if (!admin && (r = check_limits(sender->uid, req->n_insns, msg, msz)) != 0)
		return r;

	/* The thread, its privilege and the image it runs are checked by
	 * the runtime in the step that applies the filter (struct
	 * sf_target); the chain is armed: the caller's recv of this reply
	 * on reply_fd is its last call under the old one. */
	tg.tid = req->tid ? req->tid : c->pid;
	memset(&cerr, 0, sizeof(cerr));
	r = sf_runtime_attach_to(d.rt, &tg, &prog, req->flags | SF_ATTACH_ARM,
				 filter_id, &cerr);
	if (r == 0)
		d.n_armed++;
	if (r > 0) {
		snprintf(msg, msz, "TSYNC: thread %d has a filter chain that is not "
			 "an ancestor of thread %d's", r, tg.tid);
		return -r;
	}
	if (r < 0) {
		switch (-r) {
		case EINVAL:
			snprintf(msg, msz, "%s", cerr.msg[0] ?
				 c2e_error_str(&cerr, ebuf, sizeof(ebuf)) :
				 "invalid filter or flags");
			break;
		case ENOMEM:
			snprintf(msg, msz, "the chain would exceed %d instructions "
				 "(the kernel's MAX_INSNS_PER_PATH)", C2E_MAX_CHAIN_INSNS);
			break;
		case ESRCH:
			snprintf(msg, msz, "thread %d is not a live thread of process %d",
				 tg.tid, c->pid);
			break;
		case EACCES:
			snprintf(msg, msz, "thread %d has neither no_new_privs nor CAP_SYS_ADMIN "
				 "(prctl(PR_SET_NO_NEW_PRIVS, 1) first%s)", tg.tid,
				 req->flags & SF_ATTACH_TSYNC ? "; with TSYNC, on every thread" : "");
			break;
		case EPERM:
			snprintf(msg, msz, "process %d has executed another program since it "
				 "connected: the request came from the image it replaced", c->pid);
			break;
		default:
			snprintf(msg, msz, "attach failed: %s", strerror(-r));
		}
		return -r;
	}
	sf_runtime_set_owner(d.rt, *filter_id, sender->uid);
	if (!admin)
		account(*filter_id, sender->uid, req->n_insns);
	fallback_note(req->insns, req->n_insns, note, sizeof(note));
	if (note[0])
		snprintf(msg, msz, "filter %u attached to thread %d; tier %s cannot "
			 "reproduce %s: %s", *filter_id, tg.tid,
			 sf_tier_name(sf_runtime_tier(d.rt)), note,
			 req->flags & SF_ATTACH_FALLBACK_LOG ?
			 "they log and allow (fallback log)" :
			 "they kill (fallback kill)");
	else
		snprintf(msg, msz, "filter %u attached to thread %d", *filter_id, tg.tid);
	return 0;
}

/* What a message's ancillary data brought: the sender's credentials, as
 * the kernel checked them when it was sent, and its descriptors: the first
 * is kept open (ADMIN_ATTACH's pidfd), the others are closed at once. */
struct ancillary {
	struct ucred cred;
	bool have_cred;
	int fd;     /* the first descriptor, or -1; the caller closes it */
	int nfds;   /* how many came */
};

static void scan_cmsgs(struct msghdr *mh, struct ancillary *a)
{
	struct cmsghdr *cm;

	for (cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET)
			continue;
		if (cm->cmsg_type == SCM_RIGHTS) {
			size_t n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int), i;
			int fd;

			for (i = 0; i < n; i++) {
				memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
				if (a->fd < 0)
					a->fd = fd;
				else
					close(fd);
				a->nfds++;
			}
		} else if (cm->cmsg_type == SCM_CREDENTIALS &&
			   cm->cmsg_len >= CMSG_LEN(sizeof(struct ucred))) {
			memcpy(&a->cred, CMSG_DATA(cm), sizeof(a->cred));
			a->have_cred = true;
		}
	}
}

/* ---- administration and introspection --------------------------------- */

static void set_msg(char *msg, size_t msz, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set_msg(char *msg, size_t msz, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, msz, fmt, ap);
	va_end(ap);
}

static const char *jstr(struct json_object *o)
{
	return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
}

/* A reply whose text is {"error": errno, "message": msg} (and whatever the
 * caller added to o). Takes o. */
static void reply_json(struct client *c, uint32_t rid, int error, uint32_t id,
		       uint32_t flags, struct json_object *o, const char *msg)
{
	if (!o)
		o = json_object_new_object();
	if (error)
		json_object_object_add(o, "error", json_object_new_int(error));
	if (msg && msg[0])
		json_object_object_add(o, "message", json_object_new_string(msg));
	conn_greply(c, rid, error, id, flags, jstr(o), NULL, 0);
	json_object_put(o);
}

static struct json_object *flags_json(uint32_t flags)
{
	struct json_object *a = json_object_new_array();

	if (flags & SF_ATTACH_TSYNC)
		json_object_array_add(a, json_object_new_string("tsync"));
	if (flags & SF_ATTACH_LOG)
		json_object_array_add(a, json_object_new_string("log"));
	if (flags & SF_ATTACH_FALLBACK_LOG)
		json_object_array_add(a, json_object_new_string("fallback-log"));
	if (flags & SF_ATTACH_COMPLAIN)
		json_object_array_add(a, json_object_new_string("complain"));
	return a;
}

static int validate_msg(const struct sock_filter *insns, uint32_t n, char *msg, size_t msz)
{
	struct c2e_error cerr;
	char ebuf[256];

	if (n == 0 || n > C2E_MAX_INSNS) {
		set_msg(msg, msz, "program length %u: must be 1 to %d instructions",
			n, C2E_MAX_INSNS);
		return EINVAL;
	}
	if (c2e_validate(insns, n, &cerr) < 0) {
		set_msg(msg, msz, "%s", c2e_error_str(&cerr, ebuf, sizeof(ebuf)));
		return EINVAL;
	}
	return 0;
}

static int runtime_err(int r, const struct c2e_error *cerr, char *msg, size_t msz)
{
	char ebuf[256];

	switch (-r) {
	case EINVAL:
		set_msg(msg, msz, "%s", cerr->msg[0] ?
			c2e_error_str(cerr, ebuf, sizeof(ebuf)) : "invalid filter, flags or target");
		break;
	case ENOMEM:
		set_msg(msg, msz, "the chain would exceed %d instructions", C2E_MAX_CHAIN_INSNS);
		break;
	case ENOENT:
		set_msg(msg, msz, "no such filter or path");
		break;
	case ESRCH:
		set_msg(msg, msz, "no such process or thread");
		break;
	case ENOSYS:
		set_msg(msg, msz, "this runtime does not implement it yet");
		break;
	default:
		set_msg(msg, msz, "%s", strerror(-r));
	}
	return -r;
}

static int admin_attach(uid_t by, size_t n, int pidfd, uint32_t *id, struct json_object *o,
			char *msg, size_t msz)
{
	struct sf_admin_attach_req *req = (void *)rbuf.bytes;
	struct sf_identity ident;
	struct sf_target tg = { .process = &ident, .reply_fd = -1 };
	struct sock_fprog prog;
	struct c2e_error cerr;
	const char *path = NULL;
	char note[128], target[300];
	int r;

	r = sf_proto_check_admin_attach(req, n, SF_ATTACH_ADMIN_FLAGS, &path, msg, msz);
	if (r)
		return r;
	if ((r = validate_msg(req->insns, req->n_insns, msg, msz)) != 0)
		return r;
	if (path && pidfd >= 0) {
		set_msg(msg, msz, "a cgroup attach carries no descriptor");
		return EINVAL;
	}
	if (!path) {
		/* The process as the client's pidfd names it: a pid reused
		 * since the client looked is never confined by mistake. */
		if (pidfd < 0) {
			set_msg(msg, msz, "an attach by pid carries a pidfd of the process "
				"(SCM_RIGHTS; protocol version %u)", SF_PROTO_VERSION);
			return EINVAL;
		}
		r = sf_runtime_identify(d.rt, pidfd, &ident);
		if (r == -ESRCH) {
			set_msg(msg, msz, "the process of pid %d has exited", req->pid);
			return ESRCH;
		}
		if (r < 0) {
			set_msg(msg, msz, "the descriptor is not a pidfd (%s)", strerror(-r));
			return EINVAL;
		}
		tg.tid = req->pid;
	}
	prog.len = (unsigned short)req->n_insns;
	prog.filter = req->insns;
	memset(&cerr, 0, sizeof(cerr));
	if (path)
		r = sf_runtime_attach_cgroup(d.rt, path, &prog, req->flags, id, &cerr);
	else
		r = sf_runtime_attach_to(d.rt, &tg, &prog, req->flags, id, &cerr);
	if (r == -ESRCH && !path) {
		set_msg(msg, msz, "thread %d is not a live thread of process %d",
			req->pid, ident.tgid);
		return ESRCH;
	}
	if (r > 0) {
		set_msg(msg, msz, "TSYNC: thread %d has a filter chain that is not an "
			"ancestor of thread %d's", r, req->pid);
		return -r;
	}
	if (r < 0)
		return runtime_err(r, &cerr, msg, msz);
	sf_runtime_set_owner(d.rt, *id, by);
	json_object_object_add(o, "filter", json_object_new_int64(*id));
	if (path)
		json_object_object_add(o, "cgroup", json_object_new_string(path));
	else
		json_object_object_add(o, "pid", json_object_new_int(req->pid));
	json_object_object_add(o, "flags", flags_json(req->flags));
	fallback_note(req->insns, req->n_insns, note, sizeof(note));
	if (path)
		snprintf(target, sizeof(target), "cgroup %s", path);
	else
		snprintf(target, sizeof(target), "%s %d", req->flags & SF_ATTACH_TSYNC ?
			 "every thread of process" : "thread", req->pid);
	if (req->flags & SF_ATTACH_COMPLAIN)
		set_msg(msg, msz, "filter %u attached to %s (complain: logged, not enforced)",
			*id, target);
	else if (note[0])
		set_msg(msg, msz, "filter %u attached to %s; tier %s cannot reproduce %s: %s",
			*id, target, sf_tier_name(sf_runtime_tier(d.rt)), note,
			req->flags & SF_ATTACH_FALLBACK_LOG ? "they log and allow" : "they kill");
	else
		set_msg(msg, msz, "filter %u attached to %s", *id, target);
	return 0;
}

static int admin_detach_replace(size_t n, int type, uint32_t *id,
				char *msg, size_t msz)
{
	struct c2e_error cerr;
	int r;

	if (type == SF_MSG_DETACH) {
		struct sf_id_req *req = (void *)rbuf.bytes;

		if (n != SF_PROTO_ID_REQ_SIZE) {
			set_msg(msg, msz, "a detach request is %u bytes, not %zu", SF_PROTO_ID_REQ_SIZE, n);
			return EPROTO;
		}
		*id = req->id;
		r = sf_runtime_detach(d.rt, req->id);
		if (r < 0)
			return runtime_err(r, &(struct c2e_error){ 0 }, msg, msz);
		unaccount(req->id);
		set_msg(msg, msz, "filter %u detached", req->id);
	} else {
		struct sf_replace_req *req = (void *)rbuf.bytes;
		struct sock_fprog prog;

		if ((r = sf_proto_check_replace(req, n, msg, msz)) != 0)
			return r;
		*id = req->filter_id;
		if ((r = validate_msg(req->insns, req->n_insns, msg, msz)) != 0)
			return r;
		prog.len = (unsigned short)req->n_insns;
		prog.filter = req->insns;
		memset(&cerr, 0, sizeof(cerr));
		r = sf_runtime_replace(d.rt, req->filter_id, &prog, &cerr);
		if (r < 0)
			return runtime_err(r, &cerr, msg, msz);
		for (size_t i = 0; i < n_acct; i++)
			if (accts[i].id == req->filter_id)
				accts[i].len = req->n_insns;
		set_msg(msg, msz, "filter %u replaced (%u instructions)", req->filter_id,
			req->n_insns);
	}
	return 0;
}

struct task_list { struct sf_task_info *t; size_t n, cap; };

static int collect_tasks(void *ctx, const struct sf_task_info *t)
{
	struct task_list *l = ctx;

	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct sf_task_info *p = realloc(l->t, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		l->t = p;
		l->cap = cap;
	}
	l->t[l->n++] = *t;
	return 0;
}

static struct json_object *task_json(const struct sf_task_info *t)
{
	struct json_object *o = json_object_new_object(), *ids = json_object_new_array();
	char comm[17];
	uint32_t i, n = t->n_filters < 64 ? t->n_filters : 64;

	memcpy(comm, t->comm, 16);
	comm[16] = '\0';
	json_object_object_add(o, "tid", json_object_new_int(t->tid));
	json_object_object_add(o, "tgid", json_object_new_int(t->tgid));
	json_object_object_add(o, "uid", json_object_new_int64(t->uid));
	json_object_object_add(o, "comm", json_object_new_string(comm));
	json_object_object_add(o, "n_filters", json_object_new_int64(t->n_filters));
	for (i = 0; i < n; i++)
		json_object_array_add(ids, json_object_new_int64(t->filter_ids[i]));
	json_object_object_add(o, "filters", ids);
	return o;
}

static void do_status(struct client *c, uint32_t rid, bool admin)
{
	struct json_object *o = json_object_new_object();
	struct task_list l = { 0 };
	struct live_ids ids = { 0 };
	size_t i, j, distinct = 0;
	int r;

	json_object_object_add(o, "daemon", json_object_new_string("sfilterd"));
	json_object_object_add(o, "version", json_object_new_string(SFILTERD_VERSION));
	json_object_object_add(o, "protocol", json_object_new_int(SF_PROTO_VERSION));
	json_object_object_add(o, "pid", json_object_new_int(getpid()));
	json_object_object_add(o, "tier", json_object_new_string(sf_tier_name(sf_runtime_tier(d.rt))));
	json_object_object_add(o, "tier_reason", json_object_new_string(sf_runtime_tier_reason(d.rt)));
	json_object_object_add(o, "pinned", json_object_new_boolean(d.pinned));
	if (d.pinned)
		json_object_object_add(o, "pin_dir", json_object_new_string(d.pin_dir));
	json_object_object_add(o, "adopted", json_object_new_boolean(d.adopted));
	json_object_object_add(o, "uptime_s", json_object_new_int64(time(NULL) - d.started));
	json_object_object_add(o, "clients", json_object_new_int(conn_count));
	json_object_object_add(o, "events", json_object_new_int64(d.n_events));
	{
		struct json_object *a = json_object_new_object();

		json_object_object_add(a, "armed", json_object_new_int64(d.n_armed));
		json_object_object_add(o, "sf_attach", a);
	}
	{
		struct json_object *k = json_object_new_object();
		struct sf_counters cnt;

		sf_runtime_counters(d.rt, &cnt);
		json_object_object_add(k, "events_dropped", json_object_new_int64(cnt.events_dropped));
		json_object_object_add(k, "fork_failed", json_object_new_int64(cnt.fork_failed));
		json_object_object_add(k, "orphans_killed", json_object_new_int64(cnt.orphans_killed));
		json_object_object_add(k, "tailcall_failed", json_object_new_int64(cnt.tailcall_failed));
		json_object_object_add(k, "cgroup_join_failed", json_object_new_int64(cnt.cg_failed));
		json_object_object_add(o, "kernel_counters", k);
	}
	json_object_object_add(o, "admin", json_object_new_boolean(admin));
	r = sf_runtime_for_each_task(d.rt, collect_tasks, &l);
	if (r == 0) {
		for (i = 0; i < l.n; i++)
			collect_ids(&ids, &l.t[i]);
		for (i = 0; i < ids.n; i++) {
			for (j = 0; j < i && ids.ids[j] != ids.ids[i]; j++)
				;
			distinct += j == i;
		}
		json_object_object_add(o, "tasks", json_object_new_int64(l.n));
		json_object_object_add(o, "filters", json_object_new_int64(distinct));
	} else {
		json_object_object_add(o, "tasks", NULL);
		json_object_object_add(o, "filters", NULL);
	}
	{
		struct json_object *lim = json_object_new_object();

		json_object_object_add(lim, "programs_per_uid", json_object_new_int64(d.max_programs));
		json_object_object_add(lim, "insns_per_uid", json_object_new_int64(d.max_insns));
		json_object_object_add(lim, "attach_rate", json_object_new_int64(d.max_rate));
		json_object_object_add(lim, "conns_per_uid", json_object_new_int64(conn_cfg.per_uid));
		json_object_object_add(lim, "conns", json_object_new_int64(conn_cfg.total));
		json_object_object_add(lim, "queue_bytes", json_object_new_int64(conn_cfg.queue_bytes));
		json_object_object_add(o, "limits", lim);
	}
	{
		struct json_object *k = json_object_new_object();

		json_object_object_add(k, "refused", json_object_new_int64(conn_stats.refused));
		json_object_object_add(k, "evicted", json_object_new_int64(conn_stats.evicted));
		json_object_object_add(k, "overflowed", json_object_new_int64(conn_stats.overflowed));
		json_object_object_add(o, "connections", k);
	}
	free(l.t);
	free(ids.ids);
	reply_json(c, rid, 0, 0, 0, o, r < 0 ? "task list unavailable" : NULL);
}

/* PS and SHOW: tasks in chunks of at most ~48 KiB of JSON, each
 * {"tasks":[...]} with SF_REPLY_MORE but the last. */
static void do_ps(struct client *c, uint32_t rid, bool admin, pid_t only)
{
	struct task_list l = { 0 };
	struct json_object *o = NULL, *arr = NULL;
	size_t i, shown = 0, bytes = 0;
	char msg[128];
	int r = sf_runtime_for_each_task(d.rt, collect_tasks, &l);

	if (r < 0) {
		runtime_err(r, &(struct c2e_error){ 0 }, msg, sizeof(msg));
		reply_json(c, rid, -r, 0, 0, NULL, msg);
		return;
	}
	for (i = 0; i <= l.n; i++) {
		if (!o) {
			o = json_object_new_object();
			arr = json_object_new_array();
			json_object_object_add(o, "tasks", arr);
			bytes = 0;
		}
		if (i < l.n) {
			struct sf_task_info *t = &l.t[i];

			if (only && t->tgid != only && t->tid != only)
				continue;
			if (!admin && t->uid != c->uid)
				continue;
			json_object_array_add(arr, task_json(t));
			bytes += 200 + 12 * (t->n_filters < 64 ? t->n_filters : 64);
			shown++;
			if (bytes < 48 * 1024)
				continue;
			reply_json(c, rid, 0, 0, SF_REPLY_MORE, o, NULL);
			o = NULL;
			continue;
		}
		json_object_object_add(o, "total", json_object_new_int64(shown));
		reply_json(c, rid, 0, 0, only ? SF_REPLY_MORE : 0, o, NULL);
	}
	if (only) {
		/* Then each distinct filter of those tasks: info as text, the
		 * classic program as data. */
		uint32_t seen[256];
		size_t n_seen = 0, k;
		uint32_t f;

		for (i = 0; i < l.n; i++) {
			struct sf_task_info *t = &l.t[i];

			if ((t->tgid != only && t->tid != only) || (!admin && t->uid != c->uid))
				continue;
			for (f = 0; f < t->n_filters && f < 64; f++) {
				for (k = 0; k < n_seen && seen[k] != t->filter_ids[f]; k++)
					;
				if (k == n_seen && n_seen < 256)
					seen[n_seen++] = t->filter_ids[f];
			}
		}
		for (k = 0; k < n_seen; k++) {
			struct sf_filter_info info;
			struct sock_filter *insns = NULL;
			struct json_object *fo = json_object_new_object();

			json_object_object_add(fo, "filter", json_object_new_int64(seen[k]));
			r = sf_runtime_filter(d.rt, seen[k], &info, &insns);
			if (r == 0) {
				json_object_object_add(fo, "flags", flags_json(info.flags));
				json_object_object_add(fo, "owner", json_object_new_int64(info.owner));
				json_object_object_add(fo, "len", json_object_new_int64(info.len));
			} else {
				json_object_object_add(fo, "unavailable",
						       json_object_new_string(strerror(-r)));
			}
			conn_greply(c, rid, 0, seen[k], k + 1 < n_seen ? SF_REPLY_MORE : 0,
				    jstr(fo), insns, r == 0 && insns ? info.len * 8 : 0);
			json_object_put(fo);
			free(insns);
		}
		if (!n_seen)
			reply_json(c, rid, 0, 0, 0, NULL, NULL);
	}
	free(l.t);
}

static void do_log(struct client *c, uint32_t rid, bool admin, uint32_t flags)
{
	size_t i, sent = 0;
	char buf[64];

	for (i = 0; i < RING_EVENTS; i++) {
		struct ring_ev *r = &ring[(ring_next + i) % RING_EVENTS];

		if (!r->json || (!admin && r->uid != c->uid))
			continue;
		if (!conn_greply(c, rid, 0, 0, SF_REPLY_MORE, r->json, NULL, 0))
			break;
		sent++;
	}
	if (flags & SF_LOG_FOLLOW) {
		c->follow = true;
		c->follow_admin = admin;
		return;
	}
	snprintf(buf, sizeof(buf), "{\"events\":%zu}", sent);
	conn_greply(c, rid, 0, 0, 0, buf, NULL, 0);
}

/* Every request type but ATTACH. */
static void handle_admin(struct client *c, const struct ancillary *anc, size_t n)
{
	uint32_t rid = rbuf.hdr.request_id, id = 0, type = rbuf.hdr.type;
	struct json_object *o = json_object_new_object();
	const struct ucred *sender = &anc->cred;
	char msg[SF_PROTO_MAX_TEXT] = "";
	bool admin, needs_admin = type == SF_MSG_ADMIN_ATTACH ||
		type == SF_MSG_DETACH || type == SF_MSG_REPLACE;
	int error = 0;

	if (anc->nfds && !(type == SF_MSG_ADMIN_ATTACH && anc->nfds == 1)) {
		set_msg(msg, sizeof(msg), "%d file descriptor(s) attached: not accepted, closed",
			anc->nfds);
		error = EINVAL;
	} else if (!anc->have_cred) {
		set_msg(msg, sizeof(msg), "no credentials with the request");
		error = EACCES;
	} else if (sender->pid != c->pid) {
		set_msg(msg, sizeof(msg), "request sent by pid %d on a connection made by pid %d",
			sender->pid, c->pid);
		error = EACCES;
	} else if (!pidfd_alive(c->pidfd)) {
		set_msg(msg, sizeof(msg), "process %d is gone", c->pid);
		error = ESRCH;
	}
	admin = !error && sender_is_admin(c, sender);
	if (!error && needs_admin && !admin) {
		set_msg(msg, sizeof(msg), "administration needs uid 0%s when the request is "
			"sent (this one: pid %d uid %u)",
			d.admin_gid != (gid_t)-1 ? " or the admin group" : "", c->pid, sender->uid);
		error = EPERM;
	}
	if (!error) {
		switch (type) {
		case SF_MSG_ADMIN_ATTACH:
			error = admin_attach(sender->uid, n, anc->fd, &id, o, msg, sizeof(msg));
			break;
		case SF_MSG_DETACH:
		case SF_MSG_REPLACE:
			error = admin_detach_replace(n, type, &id, msg, sizeof(msg));
			if (!error)
				json_object_object_add(o, "filter", json_object_new_int64(id));
			break;
		case SF_MSG_STATUS:
			if (n != SF_PROTO_HDR_SIZE) {
				set_msg(msg, sizeof(msg), "a status request is the header only");
				error = EPROTO;
				break;
			}
			json_object_put(o);
			do_status(c, rid, admin);
			return;
		case SF_MSG_PS:
		case SF_MSG_SHOW:
			if (n != (type == SF_MSG_PS ? SF_PROTO_HDR_SIZE : SF_PROTO_ID_REQ_SIZE)) {
				set_msg(msg, sizeof(msg), "malformed %s request",
					type == SF_MSG_PS ? "ps" : "show");
				error = EPROTO;
				break;
			}
			if (type == SF_MSG_SHOW) {
				uint32_t pid = ((struct sf_id_req *)rbuf.bytes)->id;

				if (pid == 0 || pid > INT32_MAX) {
					set_msg(msg, sizeof(msg), "no process %u", pid);
					error = ESRCH;
					break;
				}
				json_object_put(o);
				do_ps(c, rid, admin, pid);
				return;
			}
			json_object_put(o);
			do_ps(c, rid, admin, 0);
			return;
		case SF_MSG_LOG:
			if (n != SF_PROTO_LOG_REQ_SIZE ||
			    (((struct sf_log_req *)rbuf.bytes)->flags & ~(uint32_t)SF_LOG_FOLLOW)) {
				set_msg(msg, sizeof(msg), "malformed log request");
				error = n != SF_PROTO_LOG_REQ_SIZE ? EPROTO : EINVAL;
				break;
			}
			json_object_put(o);
			do_log(c, rid, admin, ((struct sf_log_req *)rbuf.bytes)->flags);
			return;
		}
	}
	if (d.verbose || (needs_admin && !error))
		diag("pid %d uid %u request %u type %u: %s%s%s", c->pid, sender->uid, rid, type,
		     error ? strerror(error > 0 ? error : EBUSY) : "ok", msg[0] ? ": " : "", msg);
	if (needs_admin && !error) {
		/* Administration is recorded in the log too. */
		char line[SF_PROTO_MAX_TEXT + 128];
		struct json_object *a = json_object_new_object();

		json_object_object_add(a, "sfilterd", json_object_new_string(
			type == SF_MSG_ADMIN_ATTACH ? "attach" :
			type == SF_MSG_DETACH ? "detach" : "replace"));
		json_object_object_add(a, "by_uid", json_object_new_int64(sender->uid));
		json_object_object_add(a, "by_pid", json_object_new_int(c->pid));
		json_object_object_add(a, "message", json_object_new_string(msg));
		snprintf(line, sizeof(line), "%s", jstr(a));
		json_object_put(a);
		log_line(line);
		log_flush();
	}
	reply_json(c, rid, error, id, 0, o, msg);
}

/* Handles one datagram from c (level-triggered epoll brings us back for
 * the next one, so one busy client cannot starve the others). */
static void handle_client(struct client *c)
{
	char cbuf[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(253 * sizeof(int))];
	struct iovec iov = { rbuf.bytes, sizeof(rbuf.bytes) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct ancillary anc = { .fd = -1 };
	uint32_t request_id = 0, filter_id = 0;
	char msg[SF_PROTO_MAX_TEXT];
	int error, nfds;
	ssize_t n;

	n = recvmsg(c->fd, &mh, MSG_DONTWAIT | MSG_TRUNC | MSG_CMSG_CLOEXEC);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	/* Descriptors arrive even with an empty datagram: take them first. */
	if (n >= 0)
		scan_cmsgs(&mh, &anc);
	nfds = anc.nfds;
	if (n <= 0) { /* EOF (or an empty datagram, which looks the same) */
		if (anc.fd >= 0)
			close(anc.fd);
		conn_close(c);
		return;
	}
	c->last = time(NULL);
	if ((size_t)n >= SF_PROTO_HDR_SIZE)
		request_id = rbuf.hdr.request_id;

	msg[0] = '\0';
	if ((error = sf_proto_check_header(rbuf.bytes, n, mh.msg_flags & MSG_TRUNC,
					   msg, sizeof(msg))) != 0) {
		/* answered below */
	} else if (sf_proto_is_admin_type(rbuf.hdr.type) && !(mh.msg_flags & MSG_CTRUNC)) {
		handle_admin(c, &anc, n);
		if (anc.fd >= 0)
			close(anc.fd);
		return;
	} else if (rbuf.hdr.type != SF_MSG_ATTACH) {
		snprintf(msg, sizeof(msg), "unknown message type %u", rbuf.hdr.type);
		error = EPROTO;
	} else if ((error = sf_proto_check_attach(rbuf.bytes, n, msg, sizeof(msg))) != 0) {
		/* answered below */
	} else if (nfds) {
		snprintf(msg, sizeof(msg), "%d file descriptor(s) attached: not accepted, closed",
			 nfds);
		error = EINVAL;
	} else if (mh.msg_flags & MSG_CTRUNC) {
		snprintf(msg, sizeof(msg), "too much ancillary data");
		error = EINVAL;
	} else if (!anc.have_cred) {
		snprintf(msg, sizeof(msg), "no credentials with the request");
		error = EACCES;
	} else {
		error = do_attach(c, &anc.cred, &rbuf.attach, &filter_id, msg, sizeof(msg));
	}
	if (anc.fd >= 0)
		close(anc.fd);
	if (nfds && error != EINVAL)
		/* Said even when another error came first. */
		snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg),
			 "; %d file descriptor(s) closed", nfds);

	if (d.verbose)
		diag("pid %d uid %u request %u: %s%s%s", c->pid, c->uid, request_id,
		     error > 0 ? strerror(error) : error < 0 ? "TSYNC conflict" : "ok",
		     msg[0] ? ": " : "", msg);
	conn_reply(c, request_id, error, filter_id, msg);
}

/*
 * Identifies the peer's process (through its pidfd: tgid, leader start
 * time, and the exec id a self-attach is held to), then sends the hello.
 * Anything the peer sent before the hello it sent before the daemon knew
 * which program image it runs, maybe from the image it has replaced since
 * (queued requests, then execve of a setuid program): such a connection is
 * answered EPROTO and closed. False: close the connection.
 */
static bool greet(struct client *c)
{
	struct sf_hello h = { .hdr = { SF_PROTO_MAGIC, SF_PROTO_VERSION, SF_MSG_HELLO,
				       SF_PROTO_HELLO_SIZE, 0 } };
	char probe;
	int r;

	if (c->pidfd < 0)
		return false;
	r = sf_runtime_identify(d.rt, c->pidfd, &c->ident);
	if (r < 0) {
		if (d.verbose)
			diag("pid %d: cannot identify the process: %s", c->pid, strerror(-r));
		return false;
	}
	if (recv(c->fd, &probe, 1, MSG_PEEK | MSG_DONTWAIT) >= 0) {
		if (d.verbose)
			diag("pid %d uid %u: sent before the hello: refused", c->pid, c->uid);
		conn_discard(c->fd);
		conn_reply(c, 0, EPROTO, 0, "request sent before the daemon's hello "
			   "(protocol version 2: wait for SF_MSG_HELLO first)");
		return false;
	}
	if (errno != EAGAIN && errno != EWOULDBLOCK)
		return false;
	h.daemon_pid = (uint32_t)getpid();
	return conn_send(c, &h, sizeof(h), NULL, 0);
}

/* At most this many connections a turn of the loop: a flood of them takes
 * its turn with the requests that wait, instead of going before them all. */
#define ACCEPTS_PER_TURN 64

static void accept_clients(void)
{
	struct client *c;
	int i;

	for (i = 0; i < ACCEPTS_PER_TURN && (c = conn_accept(d.lfd)); i++)
		if (!greet(c))
			conn_close(c);
}

/* ---- set-up ------------------------------------------------------------- */

static int mkdir_p(const char *dir)
{
	char buf[PATH_MAX], *p;

	if (snprintf(buf, sizeof(buf), "%s", dir) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/*
 * systemd socket activation (sd_listen_fds(3), by its environment
 * protocol): LISTEN_PID is us and LISTEN_FDS >= 1 means fd 3 is our
 * listening socket, already bound with the unit's mode. Returns it, or -1.
 */
static int activated_socket(void)
{
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
	int fd = 3, one = 1, type = 0;
	socklen_t len = sizeof(type);

	if (!pid || !fds || atoi(pid) != getpid() || atoi(fds) < 1)
		return -1;
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 ||
	    type != SOCK_SEQPACKET) {
		diag("socket activation: fd 3 is not a SOCK_SEQPACKET socket");
		return -1;
	}
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one));
	return fd;
}

static int make_socket(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	char dir[PATH_MAX], *slash;
	struct stat stt;
	int fd, one = 1;

	fd = activated_socket();
	if (fd >= 0)
		return fd;

	if (strlen(path) >= sizeof(addr.sun_path)) {
		diag("socket path too long: %s", path);
		return -1;
	}
	strcpy(addr.sun_path, path);
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir_p(dir) < 0) {
			diag("mkdir -p %s: %s", dir, strerror(errno));
			return -1;
		}
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		diag("socket: %s", strerror(errno));
		return -1;
	}
	/* A socket file left by a daemon that died is replaced; a live
	 * daemon's is not. */
	if (lstat(path, &stt) == 0) {
		int probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

		if (!S_ISSOCK(stt.st_mode)) {
			diag("%s exists and is not a socket", path);
			goto fail;
		}
		if (probe >= 0 && connect(probe, (struct sockaddr *)&addr, sizeof(addr)) == 0) {
			close(probe);
			diag("another sfilterd is serving %s", path);
			goto fail;
		}
		if (probe >= 0)
			close(probe);
		unlink(path);
	}
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		diag("bind %s: %s", path, strerror(errno));
		goto fail;
	}
	/* Anyone may ask; what a request may do is decided per request. */
	if (chmod(path, 0666) < 0 || listen(fd, 128) < 0) {
		diag("%s: %s", path, strerror(errno));
		unlink(path);
		goto fail;
	}
	setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one));
	return fd;
fail:
	close(fd);
	return -1;
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

static int epoll_add(int fd, void *tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = tag };

	return epoll_ctl(d.epfd, EPOLL_CTL_ADD, fd, &ev);
}

/* Detaches from the terminal once the socket is ready, so that when the
 * command returns, clients can connect. The parent reports the daemon's
 * pid and exits 0. */
static int daemonize(void)
{
	pid_t pid = fork();
	int null;

	if (pid < 0)
		return -1;
	if (pid > 0) {
		diag("tier %s, serving %s (pid %d)",
		     sf_tier_name(sf_runtime_tier(d.rt)), d.socket_path, pid);
		_exit(0);
	}
	setsid();
	if (chdir("/") < 0)
		return -1;
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, 0);
		if (d.log != stdout)
			dup2(null, 1);
		dup2(null, 2);
		if (null > 2)
			close(null);
	}
	return 0;
}

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

/* sfilterd --uninstall: adopt the pinned state, tear it down, exit.
 * Refused while a daemon serves the socket (stop it first). */
static int do_uninstall(const struct sf_runtime_opts *opts)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct sf_runtime *rt;
	bool adopted = false;
	int fd, r;

	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", d.socket_path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0) {
		close(fd);
		diag("a daemon is serving %s: stop it first", d.socket_path);
		return 1;
	}
	if (fd >= 0)
		close(fd);
	/* Opening would load (and mount bpffs) only to tear it down. */
	if (access(d.pin_dir, F_OK) && errno == ENOENT) {
		diag("%s does not exist: nothing is pinned", d.pin_dir);
		return 0;
	}
	r = sf_runtime_open_pinned(&rt, opts, d.pin_dir, &adopted);
	if (r == -EPROTO) {
		/* Another version's pins: removing them is all we can do. */
		r = sf_runtime_uninstall_dir(d.pin_dir);
		if (r < 0) {
			diag("uninstall %s: %s", d.pin_dir, strerror(-r));
			return 1;
		}
		diag("%s: pinned state of another version torn down; every filter is detached",
		     d.pin_dir);
		return 0;
	}
	if (r < 0) {
		diag("cannot open the pinned state in %s: %s", d.pin_dir, strerror(-r));
		return 1;
	}
	r = sf_runtime_uninstall(rt);
	sf_runtime_close(rt);
	if (r < 0) {
		diag("uninstall %s: %s", d.pin_dir, strerror(-r));
		return 1;
	}
	diag("%s: %s; every filter is detached", d.pin_dir,
	     adopted ? "pinned state torn down" : "nothing was pinned");
	return 0;
}

int main(int argc, char **argv)
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
		{ "admin-group", required_argument, NULL, 'g' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	/* Replies do not wait for a new chain's action table (a cache):
	 * the loop fills it once the replies are out. */
	struct sf_runtime_opts opts = { .defer_tables = true };
	bool foreground = false, no_pin = false, uninstall = false;
	const char *env = getenv(SF_PROTO_SOCKET_ENV);
	sigset_t sigs;
	int opt, r, i;

	d.socket_path = env && *env ? env : SF_PROTO_DEFAULT_SOCKET;
	while ((opt = getopt_long(argc, argv, "s:fl:tvh", longopts, NULL)) != -1) {
		switch (opt) {
		case 's': d.socket_path = optarg; break;
		case 'f': foreground = true; break;
		case 'l': d.log_path = optarg; break;
		case 't': opts.force_tracepoint = true; break;
		case 'P': d.pin_dir = optarg; break;
		case 'N': no_pin = true; break;
		case 'U': uninstall = true; break;
		case 'p': case 'i': case 'r': case 'c': case 'C': case 'Q': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);

			if (*optarg == '\0' || *end || v > UINT32_MAX) {
				diag("bad number '%s'", optarg);
				return 2;
			}
			/* One message may always wait, so a bound below the
			 * largest one would not bound anything. */
			if ((opt == 'C' && v == 0) || (opt == 'Q' && v < SF_PROTO_MAX_MSG)) {
				diag("--%s %lu: at least %u", opt == 'C' ? "max-conns" :
				     "max-queue-bytes", v, opt == 'C' ? 1 : SF_PROTO_MAX_MSG);
				return 2;
			}
			if (opt == 'p')
				d.max_programs = v;
			else if (opt == 'i')
				d.max_insns = v;
			else if (opt == 'r')
				d.max_rate = v;
			else if (opt == 'c')
				conn_cfg.per_uid = v;
			else if (opt == 'C')
				conn_cfg.total = v;
			else
				conn_cfg.queue_bytes = v;
			break;
		}
		case 'g':
			if (group_id(optarg, &d.admin_gid) < 0) {
				diag("--admin-group: no group '%s' in /etc/group", optarg);
				return 2;
			}
			break;
		case 'v': d.verbose = opts.verbose = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		diag("unexpected argument '%s'", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (no_pin && d.pin_dir) {
		diag("--no-pin and --pin-dir exclude each other");
		return 2;
	}
	if (!d.pin_dir)
		d.pin_dir = SF_PIN_DIR;
	if (uninstall)
		return do_uninstall(&opts);
	if (!foreground && !d.log_path)
		d.log_path = DEFAULT_LOGFILE;
	if (d.log_path && strcmp(d.log_path, "syslog") == 0)
		d.use_syslog = true;
	d.log_path = absolute(d.log_path);
	d.socket_path = absolute(d.socket_path);
	if (open_log() < 0)
		return 1;
	conn_cfg.admin_gid = d.admin_gid;
	conn_cfg.verbose = d.verbose;
	/* Before the runtime opens its maps and programs: the connection
	 * limits, not the descriptor table, decide who is served. */
	conn_raise_nofile();

	/* Signals arrive through a signalfd, in the loop. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (no_pin) {
		r = sf_runtime_open(&d.rt, &opts);
	} else {
		char msg[PATH_MAX + 256];

		/* Here, not in the runtime's call, so that a failure is one
		 * line that also offers the unpinned way. */
		if (sf_bpffs_ensure(d.pin_dir, msg, sizeof(msg)) < 0) {
			diag("%s, or run sfilterd --no-pin", msg);
			return 1;
		}
		if (msg[0])
			diag("%s", msg);
		r = sf_runtime_open_pinned(&d.rt, &opts, d.pin_dir, &d.adopted);
		d.pinned = r == 0;
	}
	d.started = time(NULL);
	if (r < 0) {
		diag("cannot load the runtime: %s", strerror(-r));
		return 1;
	}
	d.lfd = make_socket(d.socket_path);
	if (d.lfd < 0) {
		sf_runtime_close(d.rt);
		return 1;
	}
	/* Detach before the signalfd and the epoll set exist: a signalfd
	 * polled through epoll stays tied to the process that added it. */
	if (foreground)
		diag("tier %s%s%s%s, serving %s (pid %d)",
		     sf_tier_name(sf_runtime_tier(d.rt)),
		     *sf_runtime_tier_reason(d.rt) ? " (" : "", sf_runtime_tier_reason(d.rt),
		     *sf_runtime_tier_reason(d.rt) ? ")" : "", d.socket_path, getpid());
	else if (daemonize() < 0)
		return 1;
	d.epfd = epoll_create1(EPOLL_CLOEXEC);
	d.sigfd = signalfd(-1, &sigs, SFD_NONBLOCK | SFD_CLOEXEC);
	d.evfd = sf_runtime_event_fd(d.rt);
	if (d.epfd < 0 || d.sigfd < 0 || conn_init(d.epfd) < 0 ||
	    epoll_add(d.lfd, &tag_listen) < 0 || epoll_add(d.sigfd, &tag_signal) < 0) {
		diag("epoll: %s", strerror(errno));
		unlink(d.socket_path);
		sf_runtime_close(d.rt);
		return 1;
	}
	/* Without a pollable event fd, the loop polls every 100 ms. */
	if (d.evfd >= 0 && epoll_add(d.evfd, &tag_events) < 0)
		d.evfd = -1;
	{
		char line[PATH_MAX + 128];

		snprintf(line, sizeof(line), "{\"sfilterd\":\"start\",\"pid\":%d,\"tier\":\"%s\","
			 "\"version\":\"%s\",\"pinned\":%s,\"adopted\":%s}",
			 getpid(), sf_tier_name(sf_runtime_tier(d.rt)), SFILTERD_VERSION,
			 d.pinned ? "true" : "false", d.adopted ? "true" : "false");
		log_line(line);
		log_flush();
	}

	bool tables_pending = true;

	while (!d.stop) {
		struct epoll_event evs[64];
		/* Cgroup joins that user space must finish (tasks that
		 * already had a chain, see sf_runtime_process_pending())
		 * wake us through the event ring; the 100 ms timeout bounds
		 * the wait should that wake-up be lost (ring full). */
		int n = epoll_wait(d.epfd, evs, 64, tables_pending ? 1 : 100);

		if (n < 0 && errno != EINTR) {
			diag("epoll_wait: %s", strerror(errno));
			break;
		}
		for (i = 0; i < n; i++) {
			void *tag = evs[i].data.ptr;

			if (tag == &tag_listen) {
				accept_clients();
			} else if (tag == &tag_events) {
				drain_events();
			} else if (tag == &tag_signal) {
				struct signalfd_siginfo si;

				while (read(d.sigfd, &si, sizeof(si)) == sizeof(si)) {
					if (si.ssi_signo == SIGHUP)
						open_log();
					else
						d.stop = true;
				}
			} else if (conn_ready(tag, evs[i].events)) {
				handle_client(tag);
			}
		}
		if (d.evfd < 0)
			drain_events();
		conn_sweep_idle(IDLE_SECONDS);
		conn_free_closed();
		sf_runtime_process_pending(d.rt);
		/* Deferred action tables are filled when no request waits,
		 * one chain at a time, so they never delay a reply. */
		if (n == 0)
			tables_pending = sf_runtime_fill_tables(d.rt, 1) > 0;
		else
			tables_pending = true; /* a request may have made one */
	}

	drain_events();
	while (conn_count)
		conn_close(conn_list[0]);
	conn_free_closed();
	close(d.lfd);
	unlink(d.socket_path);
	{
		char line[128];

		snprintf(line, sizeof(line), "{\"sfilterd\":\"stop\",\"pid\":%d,\"pinned\":%s}",
			 getpid(), d.pinned ? "true" : "false");
		log_line(line);
		log_flush();
	}
	/* Pinned: close leaves every filter in force for the next daemon. */
	sf_runtime_close(d.rt);
	return 0;
}
