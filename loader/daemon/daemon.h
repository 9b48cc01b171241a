/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sfilterd's modules, the state they share and the calls between them.
 *
 *   main.c        options, set-up, the epoll loop, --uninstall
 *   request.c     one datagram: received, checked, handed to its handler,
 *                 answered
 *   attach.c      ATTACH (a process's own threads, through libsfclient)
 *   admin.c       ADMIN_ATTACH, DETACH, REPLACE
 *   verify.c      attaches that need a new chain program, whose load the
 *                 kernel verifies, done on a thread of their own, one
 *                 per uid at a time; the deferred action tables
 *   introspect.c  STATUS, PS, SHOW, LOG
 *   container.c   the container a task's process runs in (PS, SHOW)
 *   record.c      recordings (SF_MSG_RECORD): which calls a filter judged
 *   peer.c        who asks: the hello, the pidfd's identity, credentials
 *                 and descriptors that came along, the admin decision
 *   limits.c      per-login-user accounting of non-admin filters, the
 *                 attach rate, the chain slots kept for admins
 *   reply.c       what replies are built with (JSON, messages, notes)
 *   conn.c        connections: limits, bounded output queues (conn.h)
 *   gate.c        the gate: the agent socket that takes seccomp listeners,
 *                 and the judge of the calls they send up, on a thread of
 *                 its own; with gate_agent.c (the agent socket's
 *                 connections, the listeners held) and gate_hold.c (the
 *                 gate across restarts), one module over gate_internal.h
 *                 whose files call each other
 *   holder.c      the listener holder, the daemon's end (holder.h);
 *                 holder_proc.c, its process
 *   listen.c      the listening sockets: systemd's, or bound here
 *   closer.c      descriptors nobody asked for, closed off the loop
 *   eventlog.c    what the daemon says: the JSON event log (reopened on
 *                 SIGHUP), the events kept for LOG, lines on stderr
 *   rules.c       the profiles filters were compiled from (SF_MSG_PROFILE):
 *                 the rule an event's filter decided it by
 *   rulecache.c   profiles compiled, kept by their inputs for the next
 *                 request with the same ones
 *   login.c       a connection's login user (struct login, conn.h)
 *   metrics.c     --metrics: what the others count, rendered on the HTTP
 *                 server's thread; metrics_hits.c, counted filters' rule
 *                 hits, read by the loop; http.c and http_wire.c, the HTTP
 *                 server (http.h), which include nothing of the daemon's
 *   eventagg.c    counted events: the calls each event stands for
 *
 * A file calls only the files below it, but that every file may log
 * (eventlog.c, eventagg.c's events included), eventlog.c streams events to
 * followers through conn.c, and metrics_hits.c gathers a task walk's
 * filter ids with limits.c's id_list_add_task().
 *
 * Errors: a call that takes (msg, msz) decides a reply, and returns that
 * reply's error as the protocol carries it (docs/protocol.md): 0, a
 * positive errno, or for a TSYNC conflict the negated id of the thread in
 * the way, with msg saying why; or REPLY_LATER when the request went off
 * the loop (verify.c, rules.c), whose answer is sent then. Every other call that
 * can fail returns 0 or -errno.
 */
#ifndef SF_DAEMON_H
#define SF_DAEMON_H

#include "runtime.h"
#include "proto.h"
#include "container_id.h"
#include "c2e.h"
#include "conn.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <linux/seccomp.h>
#include <sys/socket.h>
#include <sys/types.h>

struct json_object;

#include "sf_version.h"

/* Not an error: the request is answered later (see Errors above). */
#define REPLY_LATER INT_MIN

/*
 * Requests carry SF_ATTACH_* flags as docs/protocol.md numbers them; the
 * daemon hands them to the runtime unchanged, and the runtime to the BPF
 * side, so all three must agree, and with seccomp(2) for the flags that
 * are its own. The wire's numbers are the contract with clients: the
 * daemon holds the runtime's values to them rather than to the client
 * library's header, which it does not include.
 */
_Static_assert(SF_ATTACH_TSYNC == 0x1 && SF_ATTACH_TSYNC == SECCOMP_FILTER_FLAG_TSYNC,
	       "SF_ATTACH_TSYNC is the wire's 0x1, seccomp's TSYNC");
_Static_assert(SF_ATTACH_LOG == 0x2 && SF_ATTACH_LOG == SECCOMP_FILTER_FLAG_LOG &&
	       SF_ATTACH_LOG == SF_FLAG_LOG, "SF_ATTACH_LOG is the wire's 0x2, seccomp's LOG");
_Static_assert(SF_ATTACH_FALLBACK_LOG == 0x100 && SF_ATTACH_FALLBACK_LOG == SF_FLAG_FALLBACK_LOG,
	       "SF_ATTACH_FALLBACK_LOG is the wire's 0x100");
_Static_assert(SF_ATTACH_COMPLAIN == 0x200 && SF_ATTACH_COMPLAIN == SF_FLAG_COMPLAIN,
	       "SF_ATTACH_COMPLAIN is the wire's 0x200");
_Static_assert(SF_ATTACH_SHADOW == 0x2000 && SF_ATTACH_SHADOW == SF_FLAG_SHADOW &&
	       SF_ATTACH_COUNT == 0x4000 && SF_ATTACH_COUNT == SF_FLAG_COUNT,
	       "SF_ATTACH_SHADOW and SF_ATTACH_COUNT are the wire's 0x2000 and 0x4000");
_Static_assert((SF_ATTACH_ARM & SF_ATTACH_ADMIN_FLAGS) == 0,
	       "SF_ATTACH_ARM is the daemon's own, never a flag a request may carry");

/*
 * STATUS's attach_spans: where the ATTACHes put in force spent their time,
 * step by step, so that the gap to seccomp(2) can be put where it is. Each
 * step a count (of attaches it ran in: a step no attach needed stays 0)
 * and a sum of CLOCK_MONOTONIC nanoseconds: the daemon's checks
 * (validate), the runtime's steps (enum sf_span, from AS_RUNTIME on), the
 * way to the verifier's thread and back for a new chain (handoff), the
 * reply (the result recorded, built and sent) and the whole, from the
 * request read to its reply sent (total: the steps plus what falls
 * between them).
 */
enum attach_span {
	AS_VALIDATE,
	AS_RUNTIME,
	AS_HANDOFF = AS_RUNTIME + SF_SPANS,
	AS_REPLY,
	AS_TOTAL,
	AS_COUNT
};

/* One ATTACH's steps as they are timed (attach_spans_add()). */
struct attach_timing {
	uint64_t t0;          /* the request read (metrics_now_ns()) */
	uint64_t validate_ns;
	uint64_t handoff_ns;
	bool handed_off;      /* a new chain: loaded on the verifier's thread */
	uint64_t reply_t0;    /* when its answer began */
	struct sf_spans rt;   /* the runtime's (struct sf_target's spans) */
};

/*
 * The daemon's state: one instance, sfd (defined in main.c, declared
 * below), for the loop's thread (the idle check's and verify.c's threads
 * read sfd.rt, sfd.verbose only). Each group
 * says which file writes it; every other file only reads it. State that
 * only one file uses is static in that file (the log's FILE and the kept
 * events: eventlog.c; the accounts: limits.c; the receive buffer:
 * request.c; the loop's descriptors: main.c). The connection limits are
 * conn.h's conn_cfg: main.c sets them from the options, conn.c lowers
 * conn_cfg.total at set-up when descriptors are short.
 */
struct sfilterd {
	/* main.c, from the options, before the loop; fixed afterwards. */
	const char *socket_path;
	const char *log_path;   /* NULL or "-": stdout */
	bool use_syslog;        /* --log syslog */
	const char *pin_dir;
	bool verbose;
	gid_t admin_gid;        /* --admin-group, or (gid_t)-1 */
	/* per-uid limits (non-admin peers only) */
	uint32_t max_programs, max_insns, max_rate;
	/* every account's event budget (0: none) */
	uint32_t event_rate, event_burst;
	uint64_t repeat_ns;     /* --repeat-interval (0: no folding) */
	const char *metrics_addr; /* --metrics, or NULL */

	/* main.c, at set-up: the runtime, open for the daemon's life. */
	struct sf_runtime *rt;
	bool pinned, adopted;
	time_t started;

	/* Counters for STATUS, one writer each. */
	uint64_t n_events;      /* eventlog.c: events logged */
	uint64_t n_armed;       /* attach.c: sf_attach()es put in force (each
				 * armed for its caller) */
	struct { uint64_t n, ns; } spans[AS_COUNT]; /* attach.c: attach_spans */
};

/* ---- main.c ------------------------------------------------------------- */

extern struct sfilterd sfd;

/* ---- metrics.c ---------------------------------------------------------- */

/* --metrics: binds (before detaching, so a taken port is the caller's one
 * line and exit status), serves (after, on a thread of its own), and takes
 * the loop's snapshot each turn. */
int metrics_open(const char *addr);
int metrics_start(void);
void metrics_snapshot(void);
void metrics_stop(void);
/* What asked for an attach, as the requests are made: ATTACH (a
 * process's own threads), ADMIN_ATTACH by pidfd or to a cgroup (sfctl,
 * the OCI hook, sfilter-runc), a listener handed to the agent socket. */
enum metrics_kind { MK_SELF, MK_PID, MK_CGROUP, MK_GATE, MK_KINDS };
/* An attach answered: its reply's error (0: attached) and when it came
 * (metrics_now_ns(); 0: counted, not timed). Any thread. */
uint64_t metrics_now_ns(void);
void metrics_attach(enum metrics_kind kind, int error, uint64_t t0_ns);
/* The kind of an ADMIN_ATTACH request of n bytes. */
enum metrics_kind metrics_admin_kind(const void *req, size_t n);
/* A gated call answered, received at t0_ns. */
void metrics_gate(uint64_t t0_ns);
/* The gate's thread: the cgroup v2 id of thread tid, while its call is
 * pending (0: unknown, or --metrics off); and an event the gate made for
 * a call of a task of that cgroup, counted before any budget. */
uint64_t metrics_cgroup_of(pid_t tid);
void metrics_gate_event(uint64_t cgroup, const struct sf_event *ev);
/* Filter id was attached with SF_ATTACH_COUNT (the loop). */
void metrics_counted(uint32_t id);

/* ---- metrics_hits.c ----------------------------------------------------- */

/* Per-rule hits of counted filters for metrics.c: filter id to follow, a
 * turn of the loop (refreshes a bounded part of the snapshot), the
 * snapshot rendered (any thread), everything freed at the stop. */
void metrics_hits_track(uint32_t id);
void metrics_hits_tick(uint64_t now_ms);
void metrics_hits_render(FILE *f);
void metrics_hits_stop(void);

/* ---- listen.c ----------------------------------------------------------- */

/* The socket to serve: systemd's (socket activation), or path, bound here
 * with mode 0666 (its directory made if need be). The descriptor, or
 * -errno after a line on stderr. */
int listen_socket(const char *path);
/* The agent socket (docs/protocol.md, "The gate"): SOCK_STREAM, bound at
 * path with mode 0666; descriptors may come with messages. The
 * descriptor, or -errno after a line on stderr. */
int agent_socket(const char *path);

/* ---- request.c ---------------------------------------------------------- */

/* Reads and answers one datagram from c. */
void request_handle(struct client *c);
/* Handles the next request parked behind its uid's attach (verify.c) as
 * if it had just come; false when none can go now. */
bool request_resume(void);

/* ---- attach.c ----------------------------------------------------------- */

/* ATTACH: req, from c, to one of c's own threads; *filter_id on success.
 * tm: its t0 set by the caller, its steps timed here (and by the
 * verifier's job). */
int attach_request(struct client *c, const struct ucred *sender,
		   struct sf_attach_req *req, struct attach_timing *tm,
		   uint32_t *filter_id, char *msg, size_t msz);
/* After the reply of an ATTACH put in force: its steps added to
 * sfd.spans, the reply's and the whole's ending now. */
void attach_spans_add(const struct attach_timing *tm);

/* ---- admin.c ------------------------------------------------------------ */

/* ADMIN_ATTACH, DETACH, REPLACE (req, n bytes, from c) by uid `by`, who
 * may; pidfd: the descriptor the request carried, or -1. *id: the filter;
 * o: the reply's fields. */
int admin_request(struct client *c, uint32_t type, void *req, size_t n, uid_t by, int pidfd,
		  uint32_t *id, struct json_object *o, char *msg, size_t msz);
/* A line in the log for an administration done. */
void admin_record(uint32_t type, const struct client *c, uid_t by, const char *msg);

/* ---- verify.c ----------------------------------------------------------- */

/* An attach whose runtime call (sf_runtime_attach_to()) would load a new
 * chain program, made on the verifier's thread. attach.c and admin.c fill
 * in everything above r; done, on the loop, answers it. */
struct verify_job {
	struct verify_job *next;
	struct client *c;            /* held (conn_hold()) until answered */
	uid_t uid;                   /* whose turn it takes: the sender's */
	uint32_t rid;
	bool admin;                  /* the sender may administer */
	void (*done)(struct verify_job *j);
	struct sf_target tg;         /* tg.process: &ident */
	struct sf_identity ident;
	struct sock_fprog prog;      /* its filter is in req */
	const char *cgroup;          /* an ADMIN_ATTACH's cgroup path (in req), or NULL */
	bool settle;                 /* no attach: the chains on a stand-in get
					their programs (sf_runtime_settle_standins()) */
	unsigned int flags;
	int r;                       /* the call's return, *id, *err */
	uint32_t id;
	struct c2e_error cerr;
	uint64_t t0_ns;              /* when the request came (metrics_attach()) */
	struct attach_timing tm;     /* ATTACH's steps (tg.spans: &tm.rt) */
	/* verify.c: submitted, taken by the verifier, made (an ATTACH's
	 * handoff step). */
	uint64_t submitted_ns, started_ns, ended_ns;
	uint64_t req[];              /* the request as received (hdr.length) */
};

/* Starts the verifier's and the tables' threads: the eventfd that says a
 * job is done (verify_ready()), or -errno after a line on stderr. */
int verify_start(void);
/* Stops them; jobs not made are answered ECANCELED, parked requests
 * dropped. */
void verify_stop(void);
/* A job with a copy of req (req->length bytes); NULL: ENOMEM. */
struct verify_job *verify_job_new(const struct sf_msg_hdr *req);
/* Queues j (taking it) and holds its connection. */
void verify_submit(struct verify_job *j);
/* Whether login's user has a settle job under way (no stand-in for it
 * meanwhile: its new filters wait for the verifier, in its turn). */
bool verify_settling(const struct login *login);
struct ancillary;
/* Parks the request of n bytes from c (anc's descriptor taken), received
 * with msg_flags, when its uid has a job: 0, else -EAGAIN (handle it now)
 * or -ENOMEM. */
int verify_park(struct client *c, struct ancillary *anc, const void *bytes, size_t n,
		int msg_flags);
/* On the loop, when the eventfd is readable: answers the jobs done. */
void verify_ready(void);
/* The oldest parked request of a uid that has no job now, into anc,
 * bytes (size bytes: room for any request), *n and *msg_flags: its
 * connection (released), or NULL when none is left. */
struct client *verify_unpark(struct ancillary *anc, void *bytes, size_t size, size_t *n,
			     int *msg_flags);
/* A chain may have been loaded: the tables' thread looks for what it left
 * for later (its action table, its searched form). */
void verify_tables_due(void);

/* ---- introspect.c ------------------------------------------------------- */

/* STATUS, PS, SHOW, LOG (req, n bytes). 0: answered (admin: the sender may
 * see everything); else the error the caller answers with. */
int introspect_request(struct client *c, uint32_t rid, uint32_t type, const void *req,
		       size_t n, bool admin, char *msg, size_t msz);

/* ---- container.c -------------------------------------------------------- */

/* The container of process tgid, from /proc/<tgid>/cgroup (display only):
 * true with its 64-digit id in id, else false and id "". */
bool container_of(pid_t tgid, char id[SF_CONTAINER_ID_LEN + 1]);

/* ---- peer.c ------------------------------------------------------------- */

#ifndef SO_PASSRIGHTS
#define SO_PASSRIGHTS 83 /* Linux 6.16 */
#endif

/* The descriptors one message can carry (SCM_MAX_FD, scm_fp_copy()). A
 * message is always received with room for all of them: the kernel drops
 * those that find none, and that drop can be their last close. */
#define FDS_PER_MSG 253

/* What a message's ancillary data brought: the sender's credentials, as
 * the kernel checked them when it was sent, and its descriptors: a first
 * one that is a pidfd is kept open (ADMIN_ATTACH's), every other went to
 * the closer (closer.c), never closed on the loop. */
struct ancillary {
	struct ucred cred;
	bool have_cred;
	int fd;     /* the first descriptor if a pidfd, or -1; the caller
		       closes it (a pidfd's close never waits) */
	int nfds;   /* how many came */
};

/* Accepts, identifies and greets the connections waiting on lfd (a
 * bounded number a call). */
void peer_accept(int lfd);
/* Fills a from c's message mh; a descriptor it does not keep goes to the
 * closer, counted against c's login user. */
void peer_scan_cmsgs(const struct client *c, struct msghdr *mh, struct ancillary *a);
/* After a message that brought descriptors: false, and why, when c's
 * login user has left too many with the closer (its connections are then
 * to be closed). */
bool peer_fds_within_bound(const struct client *c, char *why, size_t size);
/* Whether the sender of a request may administer. */
bool peer_is_admin(const struct client *c, const struct ucred *sender);
/* The checks every request but ATTACH passes first: its descriptors, its
 * credentials, its sender, and for needs_admin the sender's privilege.
 * *admin: whether the sender may administer. */
int peer_check_request(const struct client *c, const struct ancillary *anc, uint32_t type,
		       bool needs_admin, bool *admin, char *msg, size_t msz);

/* ---- limits.c ----------------------------------------------------------- */

/* 0, EAGAIN (rate) or ENOSPC (programs, instructions, the chain slots
 * kept for admins) for one more filter of n_insns instructions by a
 * non-admin sender on c. Only c's login user is affected, but that the
 * last chain slots are for admins alone. */
int limits_check(const struct client *c, uint32_t n_insns, char *msg, size_t msz);
/* Filter id, attached for a non-admin on c, counts against its login
 * user's limits (once, however often it is attached). */
void limits_account(uint32_t id, const struct client *c, uint32_t len);
/* Filter id is gone, or has len instructions now. */
void limits_forget(uint32_t id);
void limits_resize(uint32_t id, uint32_t len);

/* The filter ids of tasks (sf_runtime_for_each_task()'s callback, with a
 * struct id_list as its ctx), duplicates and all. */
struct id_list { uint32_t *ids; size_t n, cap; };
int id_list_add_task(void *ctx, const struct sf_task_info *t);

/* ---- reply.c ------------------------------------------------------------ */

/* vsnprintf into msg. */
void set_msg(char *msg, size_t msz, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* o as one line of JSON, owned by o. */
const char *jstr(struct json_object *o);
/* A reply whose text is {"error": errno, "message": msg} (and whatever the
 * caller added to o; NULL: nothing). Takes o. */
void reply_json(struct client *c, uint32_t rid, int error, uint32_t id, uint32_t flags,
		struct json_object *o, const char *msg);
/* ATTACH's reply, and any request's that failed before its type was
 * known: {"filter": filter_id, "message": msg} on success, else
 * {"error": error, "message": msg}; filter_id in the id field. */
void reply_attach(struct client *c, uint32_t rid, int error, uint32_t filter_id,
		  const char *msg);
/* SF_ATTACH_* flags as ["tsync", "log", ...]. */
struct json_object *flags_json(uint32_t flags);
/* A runtime call's -errno r as the reply's error, with its message. */
int runtime_err(int r, const struct c2e_error *cerr, char *msg, size_t msz);
/* For the reply's note, starting "tier NAME": on the tracepoint tier, the
 * actions a filter may return that the tier cannot reproduce and what they
 * do instead, or for a 2012-interface filter how execve fails. */
void tier_note(const struct sock_filter *insns, uint32_t n_insns, uint32_t flags,
	       char *out, size_t size);

/* ---- closer.c ----------------------------------------------------------- */

/* Descriptors of one login user's that may wait at the closer: past it,
 * conn.c refuses its new connections and closes those it has. */
#define CLOSER_PER_LOGIN 64
/* In all: past it, a connection whose next message carries descriptors is
 * closed without reading it. */
#define CLOSER_MAX 1024

/* Closes fd on the closer's thread, counted against who until it is
 * closed; never waits. */
void closer_take(int fd, const struct login *who);
/* How many of who's, or of everyone's, have not been closed yet. */
unsigned int closer_pending(const struct login *who);
unsigned int closer_total(void);

/* ---- login.c ------------------------------------------------------------ */

/* The login user of the process pidfd names (cred: SO_PEERCRED at
 * connect). 0, or -errno (out then holds cred's uid alone). */
int login_of(int pidfd, const struct ucred *cred, struct login *out);
bool login_eq(const struct login *a, const struct login *b);
/* l for a message: "uid U", or how the connection's uid comes under l. */
const char *login_name(const struct login *l, uid_t uid, char *buf, size_t size);

/* ---- gate.c ------------------------------------------------------------- */

/* Binds the agent socket (<socket>.agent), before the daemon detaches.
 * 0, or -errno after a line on stderr. */
int gate_listen(void);
/* Starts the gate's thread (after detaching): the eventfd that says
 * events wait for the log (gate_ready()), or -errno. */
int gate_start(void);
/* On the loop: logs the events the gate made. */
void gate_ready(void);
/* Stops the thread and closes the daemon's listeners (the holder keeps
 * its copies); unlinks the agent socket. */
void gate_stop(void);
/* For STATUS. */
struct json_object *gate_status_json(void);
/* How many listeners the gate holds now. */
uint64_t gate_held(void);
/* Whether process tgid handed in its own gate's listener (SO_PEERCRED of
 * the agent connection; for the attach note). Any thread. */
bool gate_registered(pid_t tgid);
/* sfilterd --uninstall: the holder, if one serves <socket>.holder, lets
 * its listeners go (their gates' calls then fail with ENOSYS) and exits;
 * the records file is removed. */
void gate_uninstall(void);

/* ---- eventlog.c --------------------------------------------------------- */

/* A line on stderr, "sfilterd: " first. */
void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* (Re)opens the log at sfd.log_path, or syslog. 0 or -errno (said on
 * stderr); on failure the log open before stays. */
int eventlog_open(void);
/* Whether the log goes to stdout (which a daemon in the background then
 * keeps). */
bool eventlog_on_stdout(void);
/* A line in the log (not yet flushed). */
void log_line(const char *line);
void log_flush(void);
/* Logs the events the runtime has ready, a bounded number of them, keeps
 * them for LOG and streams them to the followers. True when more may be
 * ready (the loop comes back at once: the ring buffer's descriptor stays
 * readable). */
bool eventlog_drain(void);
/* Every turn of the loop: once the kernel has counted dropped events, a
 * line per account that lost any since the last lines, at once the first
 * time, then at most every few seconds (or now, with now_or_never: at
 * the stop). */
void eventlog_tick(bool now_or_never);
/* An event the daemon made (the gate's): logged, kept and streamed as
 * the BPF side's are. */
void eventlog_event(const struct sf_event *ev);
/* At the stop: the events the ring buffer holds, and the last lines on
 * dropped events. */
void eventlog_stop(void);
/* The accounts that lost events, for STATUS: an admin's every one (the
 * most first, at most 64), anyone else's only its own uid. A JSON array. */
struct json_object *eventlog_drops_json(bool admin, uid_t uid);
/* Sends c the kept events it may see (an admin all, others their uid's),
 * oldest first, each with SF_REPLY_MORE; how many went before c's queue
 * refused one. */
size_t eventlog_replay(struct client *c, uint32_t request_id, bool admin);
/* Whether the last eventlog_drain() left nothing in the ring. */
bool eventlog_drained(void);

/* ---- rules.c: the profiles filters came from (SF_MSG_PROFILE) ----------- */

/* SF_MSG_PROFILE (n bytes at req, request rid) from uid on c (an admin,
 * or not: then for a filter uid attached, and within the rate of c's
 * login user): *id the filter. 0 or a positive errno with msg; or, for
 * SF_PROFILE_EARLY once the filter is found, REPLY_LATER: answered before
 * the compile, whose failure is logged. */
int rules_request(const void *req, size_t n, struct client *c, uint32_t rid, uid_t uid,
		  bool admin, uint32_t *id, char *msg, size_t msz);
/* After uid attached insns (n of them) as filter_id: a profile uid gave
 * for that program before the attach (filter id 0) becomes the filter's. */
void rules_attached(uid_t uid, const struct sock_filter *insns, size_t n, uint32_t filter_id);
/* An event's line (buf, NUL-terminated, a JSON object) given "rule" when
 * its filter came from a profile: the line's new length, or its old one
 * when nothing is added (or it would not fit in size). */
int rules_annotate(const struct sf_event *ev, char *buf, int len, size_t size);

/* ---- rulecache.c: profiles compiled, kept for the next request ---------- */

struct compiled;
struct sf_profile_opts;
struct sf_profile_error;
struct sf_profile_rules;
struct rulecache_stats {
	uint64_t hits, misses;
	unsigned int entries;
	unsigned int compiling;      /* children under way */
};
/* A compile's end, for the request that waits for it: c a reference
 * (compiled_put() it), or NULL with r (-errno) and err. */
typedef void (*rulecache_done_fn)(void *arg, struct compiled *c, int r,
				  const struct sf_profile_error *err);
/* Whether argv runs sfilterd as the compiles' helper, and then *status,
 * its exit status. */
bool rulecache_helper(int argc, char **argv, int *status);
/* The inner epoll set of compiles under way, in the loop's (epfd) as tag:
 * 0 or -errno. */
int rulecache_init(int epfd, void *tag);
/* The profile (json, len bytes) compiled for opts: the cache's entry of
 * who's with the same inputs at once (a reference: compiled_put() it);
 * or NULL with *r -EINPROGRESS: a child compiles it (or already did for
 * who), and done(arg, ...) is called from rulecache_step(), the entry
 * kept (counted against who); or NULL with *r (-errno) and err. limited
 * (not an admin): one compile of who's at a time, few of all users'. */
struct compiled *rulecache_compile(const struct login *who, bool limited,
				   const struct sf_profile_opts *opts, const char *json,
				   size_t len, struct sf_profile_error *err, int *r,
				   rulecache_done_fn done, void *arg);
/* The compiles stepped: on the tag's readiness, and at each turn of the
 * loop (their deadlines). */
void rulecache_step(void);
/* Compiles under way killed, their requests told -ECANCELED. */
void rulecache_stop(void);
struct compiled *compiled_get(struct compiled *c);
void compiled_put(struct compiled *c);
const struct sf_profile_rules *compiled_rules(const struct compiled *c);
/* For STATUS. */
struct rulecache_stats rulecache_stats(void);

/* ---- record.c: recordings (SF_MSG_RECORD) ------------------------------- */

/* SF_MSG_RECORD (n bytes at req): *id the filter; TAKE fills o. 0 or a
 * positive errno with msg. */
int record_request(const void *req, size_t n, uint32_t *id, struct json_object *o, char *msg,
		   size_t msz);
/* Each turn of the loop: at most once a second, while any recording runs,
 * the kernel's counters read into them. */
void record_tick(void);

/* ---- eventagg.c: counted events (folded in the kernel) ------------------ */

/* The calls ev stands for (sf_event.count): its key's total less what the
 * key's earlier events carried; 0 for an event that is not folded. */
uint32_t eventagg_count(const struct sf_event *ev);
/* Each turn of the loop: once a key's interval is over with calls that no
 * event carried, a repeat event for them. drained: the ring is empty. */
void eventagg_tick(bool drained);
/* At stop: a repeat event for every key's calls that no event carried. */
void eventagg_stop(void);
/* Repeat events made. */
uint64_t eventagg_repeats(void);
/* The gate's thread, for each event it makes: false when the call only
 * counts (a repeat within the interval); else ev carries its key's total. */
bool eventagg_gate_fold(struct sf_event *ev);
/* Calls counted with no event of their own: the kernel's and the gate's. */
uint64_t eventagg_folded(void);

#endif /* SF_DAEMON_H */
