// SPDX-License-Identifier: GPL-2.0-only
/*
 * ATTACH: sf_attach() of libsfclient, a process putting a filter on its
 * own threads through the daemon. The request is checked the way
 * seccomp(2) checks its caller (flags, length, then the caller's
 * no_new_privs or CAP_SYS_ADMIN and the program), with the per-uid limits
 * of a non-admin sender; it applies only to a thread of the very process
 * that connected, that has not exec'd since the hello, all judged by the
 * runtime in the step that applies it, which puts the filter in force
 * before the reply is sent.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "daemon.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The checks before the runtime is asked, in seccomp_set_mode_filter()'s
 * order: flags, length, then who asks and the program. *admin: whether
 * the sender may administer (then no per-uid limit applies). */
static int check_request(const struct client *c, const struct ucred *sender,
			 const struct sf_attach_req *req, bool *admin, char *msg, size_t msz)
{
	struct sock_fprog prog;
	struct c2e_error cerr;
	char ebuf[256];

	if ((req->flags & ~(uint32_t)SF_PROTO_ATTACH_FLAGS) || !SF_FLAGS_RFC_OK(req->flags)) {
		snprintf(msg, msz, "unknown flags 0x%x", req->flags);
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
	prog = (struct sock_fprog){ .len = (unsigned short)req->n_insns,
				    .filter = (struct sock_filter *)req->insns };
	if (sf_runtime_filter_check(&prog, req->flags, &cerr) < 0) {
		snprintf(msg, msz, "%s", c2e_error_str(&cerr, ebuf, sizeof(ebuf)));
		return EINVAL;
	}
	*admin = peer_is_admin(c, sender);
	if (!*admin)
		return limits_check(c, req->n_insns, msg, msz);
	return 0;
}

/* Why the runtime refused (its -errno r) to attach to thread tid of c's
 * process; the reply's error. */
static int explain_refusal(int r, const struct client *c, pid_t tid, uint32_t flags,
			   const struct c2e_error *cerr, char *msg, size_t msz)
{
	char ebuf[256];

	switch (-r) {
	case EINVAL:
		snprintf(msg, msz, "%s", cerr->msg[0] ?
			 c2e_error_str(cerr, ebuf, sizeof(ebuf)) :
			 "invalid filter or flags");
		break;
	case ENOMEM:
		snprintf(msg, msz, "the chain would exceed %d instructions "
			 "(the kernel's MAX_INSNS_PER_PATH)", C2E_MAX_CHAIN_INSNS);
		break;
	case ESRCH:
		snprintf(msg, msz, "thread %d is not a live thread of process %d",
			 tid, c->pid);
		break;
	case EACCES:
		snprintf(msg, msz, "thread %d has neither no_new_privs nor CAP_SYS_ADMIN "
			 "(prctl(PR_SET_NO_NEW_PRIVS, 1) first%s)", tid,
			 flags & SF_ATTACH_TSYNC ? "; with TSYNC, on every thread" : "");
		break;
	case EPERM:
		snprintf(msg, msz, "process %d has executed another program since it "
			 "connected: the request came from the image it replaced%s", c->pid,
			 flags & SF_ATTACH_RFC_EXEC ? "; or thread lacks CAP_SYS_ADMIN, "
			 "which a filter inheritable across exec needs" : "");
		break;
	default:
		snprintf(msg, msz, "attach failed: %s", strerror(-r));
	}
	return -r;
}

/* What became of the attach of req by uid to thread tid of c's process
 * (the runtime's r and *id): the reply's error and message; on success
 * the filter is counted and owned. */
static int attach_result(const struct client *c, uid_t uid, bool admin,
			 const struct sf_attach_req *req, pid_t tid, int r, uint32_t id,
			 const struct c2e_error *cerr, char *msg, size_t msz)
{
	char note[256];

	if (r == 0)
		sfd.n_armed++;
	if (r > 0) {
		snprintf(msg, msz, "TSYNC: thread %d has a filter chain that is not "
			 "an ancestor of thread %d's", r, tid);
		return -r;
	}
	if (r < 0)
		return explain_refusal(r, c, tid, req->flags, cerr, msg, msz);
	sf_runtime_set_owner(sfd.rt, id, uid);
	if (!admin)
		limits_account(id, c, req->n_insns);
	rules_attached(uid, req->insns, req->n_insns, id);
	tier_note(req->insns, req->n_insns, req->flags, note, sizeof(note));
	snprintf(msg, msz, "filter %u attached to thread %d; %s%s", id, tid, note,
		 gate_registered(c->pid) ? "; gated: what its gate sends up is refused before "
		 "it runs, as the filter says" : "");
	return 0;
}

static void span_add(enum attach_span s, uint64_t ns)
{
	sfd.spans[s].n++;
	sfd.spans[s].ns += ns;
}

void attach_spans_add(const struct attach_timing *tm)
{
	uint64_t now = metrics_now_ns();
	int i;

	span_add(AS_VALIDATE, tm->validate_ns);
	for (i = 0; i < SF_SPANS; i++)
		if (tm->rt.n[i])
			span_add((enum attach_span)(AS_RUNTIME + i), tm->rt.ns[i]);
	if (tm->handed_off)
		span_add(AS_HANDOFF, tm->handoff_ns);
	span_add(AS_REPLY, now - tm->reply_t0);
	span_add(AS_TOTAL, now - tm->t0);
}

/* A job done (verify.c): answered as request.c answers an ATTACH. */
static void attach_done(struct verify_job *j)
{
	const struct sf_attach_req *req = (const void *)j->req;
	char msg[SF_PROTO_MAX_TEXT] = "";
	uint64_t now = metrics_now_ns();
	int error;

	/* Waiting for the verifier's thread, and for the loop to see it done. */
	j->tm.handoff_ns = (j->started_ns - j->submitted_ns) + (now - j->ended_ns);
	j->tm.handed_off = true;
	j->tm.reply_t0 = now;
	error = attach_result(j->c, j->uid, j->admin, req, j->tg.tid, j->r, j->id,
			      &j->cerr, msg, sizeof(msg));
	metrics_attach(MK_SELF, error, j->t0_ns);

	if (sfd.verbose)
		diag("pid %d uid %u request %u: %s%s%s", j->c->pid, j->uid, j->rid,
		     error > 0 ? strerror(error) : error < 0 ? "TSYNC conflict" : "ok",
		     msg[0] ? ": " : "", msg);
	reply_attach(j->c, j->rid, error, error ? 0 : j->id, msg);
	if (!error)
		attach_spans_add(&j->tm);
}

/* A settle job, after an attach that may have left its chain on a
 * stand-in: its program is loaded on the verifier's thread. The user's
 * attaches of loaded chains go on meanwhile; its new ones are not stood
 * in but verified in its turn, so that one user's stand-ins cost others
 * at most one verification more than its attaches did. */
static void settle_done(struct verify_job *j)
{
	if (j->r < 0 && sfd.verbose)
		diag("pid %d request %u: a chain stays on its stand-in: %s", j->c->pid, j->rid,
		     strerror(-j->r));
}

static void settle_submit(struct client *c, uid_t uid, const struct sf_attach_req *req)
{
	struct verify_job *j = verify_job_new(&req->hdr);

	if (!j)
		return; /* the filler's then, which settles them too */
	*j = (struct verify_job){ .c = c, .uid = uid, .rid = req->hdr.request_id,
				  .done = settle_done, .settle = true };
	verify_submit(j);
}

int attach_request(struct client *c, const struct ucred *sender,
		   struct sf_attach_req *req, struct attach_timing *tm,
		   uint32_t *filter_id, char *msg, size_t msz)
{
	struct sock_fprog prog = { .len = (unsigned short)req->n_insns,
				   .filter = req->insns };
	bool stood_in = false;
	struct sf_target tg = { .process = &c->ident, .self = true,
				.reply_fd = req->reply_fd, .spans = &tm->rt,
				.stood_in = &stood_in };
	/* Validated once, by check_request(). */
	unsigned int flags = (req->flags & ~(uint32_t)SF_FLAG_GATED) | SF_ATTACH_ARM |
			     SF_ATTACH_CHECKED;
	struct verify_job *j;
	struct c2e_error cerr;
	uint64_t t0 = tm->t0;
	bool admin = false;
	int r;

	r = check_request(c, sender, req, &admin, msg, msz);
	tm->validate_ns = metrics_now_ns() - t0;
	if (r != 0) {
		if (r != REPLY_LATER)
			metrics_attach(MK_SELF, r, t0);
		return r;
	}
	/* The thread, its privilege and the image it runs are checked by
	 * the runtime in the step that applies the filter (struct
	 * sf_target); the chain is armed: the caller's recv of this reply
	 * on reply_fd is its last call under the old one. A chain that is
	 * not loaded yet is loaded off the loop (verify.c). */
	tg.tid = req->tid ? req->tid : c->pid;
	/* The sender says its gate is this filter's, and the agent socket
	 * has its listener from the same process (both by SO_PEERCRED): a
	 * new chain may go on a stand-in (standin.c). A false claim leaves
	 * only its own filter to its gate for a while. */
	if ((req->flags & SF_FLAG_GATED) && gate_registered(c->pid) &&
	    !verify_settling(&c->login))
		flags |= SF_ATTACH_STANDIN;
	memset(&cerr, 0, sizeof(cerr));
	r = sf_runtime_attach_to(sfd.rt, &tg, &prog, flags | SF_ATTACH_LOADED, filter_id, &cerr);
	if (r != -EINPROGRESS) {
		tm->reply_t0 = metrics_now_ns();
		r = attach_result(c, sender->uid, admin, req, tg.tid, r, *filter_id, &cerr,
				  msg, msz);
		metrics_attach(MK_SELF, r, t0);
		if (r == 0 && stood_in)
			settle_submit(c, sender->uid, req);
		return r;
	}
	if (!(j = verify_job_new(&req->hdr))) {
		snprintf(msg, msz, "out of memory");
		metrics_attach(MK_SELF, ENOMEM, t0);
		return ENOMEM;
	}
	req = (struct sf_attach_req *)j->req;
	*j = (struct verify_job){ .c = c, .uid = sender->uid, .rid = req->hdr.request_id,
				  .admin = admin, .done = attach_done, .tg = tg,
				  .ident = c->ident, .flags = flags,
				  .prog = { prog.len, req->insns }, .t0_ns = t0, .tm = *tm };
	j->tg.spans = &j->tm.rt; /* the job's own: tm is the caller's, on its stack */
	j->tg.stood_in = NULL;    /* and so is stood_in: a verified chain has none */
	verify_submit(j);
	return REPLY_LATER;
}
