// SPDX-License-Identifier: GPL-2.0-only
/*
 * Administration: ADMIN_ATTACH (to a running process, named by a pidfd the
 * client took, or to a cgroup), DETACH and REPLACE, for senders that
 * request.c has found may administer (peer.c); each one done is a line in
 * the log.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "daemon.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>

/* The length, and the program for the ABI of flags; replace passes
 * check_prog false: the filter it replaces decides the ABI, which the
 * runtime knows. */
static int validate_msg(const struct sock_filter *insns, uint32_t n, uint32_t flags,
			bool check_prog, char *msg, size_t msz)
{
	struct sock_fprog prog;
	struct c2e_error cerr;
	char ebuf[256];

	if (n == 0 || n > C2E_MAX_INSNS) {
		set_msg(msg, msz, "program length %u: must be 1 to %d instructions",
			n, C2E_MAX_INSNS);
		return EINVAL;
	}
	prog = (struct sock_fprog){ .len = (unsigned short)n, .filter = (struct sock_filter *)insns };
	if (check_prog && sf_runtime_filter_check(&prog, flags, &cerr) < 0) {
		set_msg(msg, msz, "%s", c2e_error_str(&cerr, ebuf, sizeof(ebuf)));
		return EINVAL;
	}
	return 0;
}

/* An attach by pid: the process as the client's pidfd names it, so that a
 * pid reused since the client looked is never confined by mistake. A
 * cgroup attach (path) carries no descriptor. */
static int admin_target(const struct sf_admin_attach_req *req, const char *path, int pidfd,
			struct sf_identity *ident, char *msg, size_t msz)
{
	int r;

	if (path) {
		if (pidfd >= 0) {
			set_msg(msg, msz, "a cgroup attach carries no descriptor");
			return EINVAL;
		}
		return 0;
	}
	if (pidfd < 0) {
		set_msg(msg, msz, "an attach by pid carries a pidfd of the process "
			"(SCM_RIGHTS; protocol version %u)", SF_PROTO_VERSION);
		return EINVAL;
	}
	r = sf_runtime_identify(sfd.rt, pidfd, ident);
	if (r == -ESRCH) {
		set_msg(msg, msz, "the process of pid %d has exited", req->pid);
		return ESRCH;
	}
	if (r < 0) {
		set_msg(msg, msz, "the descriptor is not a pidfd (%s)", strerror(-r));
		return EINVAL;
	}
	return 0;
}

/* The reply to an attach done: its fields in o, its message in msg. */
static void describe_attach(const struct sf_admin_attach_req *req, const char *path,
			    uint32_t id, struct json_object *o, char *msg, size_t msz)
{
	char note[256], target[300];

	json_object_object_add(o, "filter", json_object_new_int64(id));
	if (path)
		json_object_object_add(o, "cgroup", json_object_new_string(path));
	else
		json_object_object_add(o, "pid", json_object_new_int(req->pid));
	json_object_object_add(o, "flags", flags_json(req->flags));
	tier_note(req->insns, req->n_insns, req->flags, note, sizeof(note));
	if (path)
		snprintf(target, sizeof(target), "cgroup %s%s", path,
			 req->flags & SF_ATTACH_AT_EXEC ?
			 ", judging each task that has no filter from its next execve" : "");
	else
		snprintf(target, sizeof(target), "%s %d%s", req->flags & SF_ATTACH_TSYNC ?
			 "every thread of process" : "thread", req->pid,
			 req->flags & SF_ATTACH_AT_EXEC ? ", judging from its next execve" : "");
	if (req->flags & (SF_ATTACH_COMPLAIN | SF_ATTACH_SHADOW))
		set_msg(msg, msz, "filter %u attached to %s (%s: logged, not enforced); %s",
			id, target, req->flags & SF_ATTACH_SHADOW ? "shadow" : "complain", note);
	else
		set_msg(msg, msz, "filter %u attached to %s; %s", id, target, note);
}

/* What became of the attach of req (to path, or to a thread of process
 * tgid) by uid `by` (the runtime's r and id): the reply's error; on
 * success the owner set, o's fields and msg. */
static int attach_result(const struct sf_admin_attach_req *req, const char *path, pid_t tgid,
			 int r, uint32_t id, const struct c2e_error *cerr, uid_t by,
			 struct json_object *o, char *msg, size_t msz)
{
	if (r == -ESRCH && !path) {
		set_msg(msg, msz, "thread %d is not a live thread of process %d",
			req->pid, tgid);
		return ESRCH;
	}
	if (r > 0) {
		set_msg(msg, msz, "TSYNC: thread %d has a filter chain that is not an "
			"ancestor of thread %d's", r, req->pid);
		return -r;
	}
	if (r == -EBUSY && !path) {
		set_msg(msg, msz, req->flags & SF_ATTACH_AT_EXEC ?
			"thread %d already runs under filters that judge it: arming at "
			"exec would suspend them until then; attach without it" :
			"thread %d's filters wait for its next execve: attach with arm at "
			"exec too, or after that exec", req->pid);
		return EBUSY;
	}
	if (r < 0)
		return runtime_err(r, cerr, msg, msz);
	sf_runtime_set_owner(sfd.rt, id, by);
	describe_attach(req, path, id, o, msg, msz);
	return 0;
}

/* A job done (verify.c): answered as request.c answers administration. */
static void attach_done(struct verify_job *j)
{
	const struct sf_admin_attach_req *req = (const void *)j->req;
	struct json_object *o = json_object_new_object();
	char msg[SF_PROTO_MAX_TEXT] = "";
	int error = attach_result(req, j->cgroup, j->ident.tgid, j->r, j->id, &j->cerr, j->uid,
				  o, msg, sizeof(msg));

	if (sfd.verbose || !error)
		diag("pid %d uid %u request %u type %u: %s%s%s", j->c->pid, j->uid, j->rid,
		     SF_MSG_ADMIN_ATTACH, error ? strerror(error > 0 ? error : EBUSY) : "ok",
		     msg[0] ? ": " : "", msg);
	if (!error)
		admin_record(SF_MSG_ADMIN_ATTACH, j->c, j->uid, msg);
	metrics_attach(j->cgroup ? MK_CGROUP : MK_PID, error, j->t0_ns);
	if (!error && (req->flags & SF_ATTACH_COUNT))
		metrics_counted(j->id);
	reply_json(j->c, j->rid, error, error ? 0 : j->id, 0, o, msg);
}

static int attach_now(struct client *c, struct sf_admin_attach_req *req, size_t n,
		      uid_t by, int pidfd, uint32_t *id, struct json_object *o,
		      char *msg, size_t msz, uint64_t t0)
{
	struct sf_identity ident = { 0 };
	struct sf_target tg = { .process = &ident, .reply_fd = -1 };
	struct verify_job *j;
	struct sock_fprog prog;
	struct c2e_error cerr;
	const char *path = NULL;
	unsigned int flags;
	int r;

	r = -sf_proto_check_admin_attach(req, n, SF_ATTACH_ADMIN_FLAGS, &path, msg, msz);
	if (r)
		return r;
	if ((r = validate_msg(req->insns, req->n_insns, req->flags, true, msg, msz)) != 0)
		return r;
	if ((r = admin_target(req, path, pidfd, &ident, msg, msz)) != 0)
		return r;
	tg.tid = req->pid;
	prog.len = (unsigned short)req->n_insns;
	prog.filter = req->insns;
	memset(&cerr, 0, sizeof(cerr));
	/* Validated once, by validate_msg(). */
	flags = req->flags | SF_ATTACH_CHECKED;
	if (path)
		r = sf_runtime_attach_cgroup(sfd.rt, path, &prog, flags | SF_ATTACH_LOADED,
					     id, &cerr);
	else
		r = sf_runtime_attach_to(sfd.rt, &tg, &prog, flags | SF_ATTACH_LOADED, id,
					 &cerr);
	if (r != -EINPROGRESS)
		return attach_result(req, path, ident.tgid, r, *id, &cerr, by, o, msg, msz);
	/* A chain that is not loaded yet is loaded off the loop (verify.c). */
	if (!(j = verify_job_new(&req->hdr))) {
		set_msg(msg, msz, "out of memory");
		return ENOMEM;
	}
	/* The job's copy of the request: the path's place in it. */
	if (path)
		path = (const char *)j->req + (path - (const char *)req);
	req = (struct sf_admin_attach_req *)j->req;
	*j = (struct verify_job){ .c = c, .uid = by, .rid = req->hdr.request_id, .admin = true,
				  .done = attach_done, .tg = tg, .ident = ident,
				  .flags = flags, .prog = { prog.len, req->insns },
				  .cgroup = path, .t0_ns = t0 };
	verify_submit(j);
	return REPLY_LATER;
}

/* An attach answered now is counted here, one answered by the verifier's
 * job in attach_done(). */
static int admin_attach(struct client *c, struct sf_admin_attach_req *req, size_t n,
			uid_t by, int pidfd, uint32_t *id, struct json_object *o,
			char *msg, size_t msz)
{
	uint64_t t0 = metrics_now_ns();
	int r = attach_now(c, req, n, by, pidfd, id, o, msg, msz, t0);

	if (r != REPLY_LATER) {
		metrics_attach(metrics_admin_kind(req, n), r, t0);
		if (!r && (req->flags & SF_ATTACH_COUNT))
			metrics_counted(*id);
	}
	return r;
}

static int admin_detach(const struct sf_id_req *req, size_t n, uint32_t *id,
			char *msg, size_t msz)
{
	int r;

	if (n != SF_PROTO_ID_REQ_SIZE) {
		set_msg(msg, msz, "a detach request is %u bytes, not %zu", SF_PROTO_ID_REQ_SIZE, n);
		return EPROTO;
	}
	*id = req->id;
	r = sf_runtime_detach(sfd.rt, req->id);
	if (r < 0)
		return runtime_err(r, &(struct c2e_error){ 0 }, msg, msz);
	limits_forget(req->id);
	set_msg(msg, msz, "filter %u detached", req->id);
	return 0;
}

static int admin_replace(struct sf_replace_req *req, size_t n, uint32_t *id,
			 char *msg, size_t msz)
{
	struct sock_fprog prog;
	struct c2e_error cerr;
	int r;

	if ((r = -sf_proto_check_replace(req, n, msg, msz)) != 0)
		return r;
	*id = req->filter_id;
	if ((r = validate_msg(req->insns, req->n_insns, 0, false, msg, msz)) != 0)
		return r;
	prog.len = (unsigned short)req->n_insns;
	prog.filter = req->insns;
	memset(&cerr, 0, sizeof(cerr));
	r = sf_runtime_replace(sfd.rt, req->filter_id, &prog, &cerr);
	if (r < 0)
		return runtime_err(r, &cerr, msg, msz);
	limits_resize(req->filter_id, req->n_insns);
	metrics_counted(req->filter_id); /* its rets changed, if it counts */
	set_msg(msg, msz, "filter %u replaced (%u instructions)%s%s%s", req->filter_id,
		req->n_insns, gate_held() ? "; gated tasks: a call their gate passes in the "
		"kernel (built from the filters they had when it was installed) is judged at "
		"tier " : "", gate_held() ? sf_tier_name(sf_runtime_tier(sfd.rt)) : "",
		gate_held() ? ", the others exactly" : "");
	return 0;
}

int admin_request(struct client *c, uint32_t type, void *req, size_t n, uid_t by, int pidfd,
		  uint32_t *id, struct json_object *o, char *msg, size_t msz)
{
	int r;

	switch (type) {
	case SF_MSG_ADMIN_ATTACH:
		return admin_attach(c, req, n, by, pidfd, id, o, msg, msz);
	case SF_MSG_DETACH:
		r = admin_detach(req, n, id, msg, msz);
		break;
	case SF_MSG_REPLACE:
		r = admin_replace(req, n, id, msg, msz);
		break;
	case SF_MSG_RECORD:
		r = record_request(req, n, id, o, msg, msz);
		break;
	default:
		set_msg(msg, msz, "unknown message type %u", type);
		return EPROTO;
	}
	if (!r)
		json_object_object_add(o, "filter", json_object_new_int64(*id));
	return r;
}

void admin_record(uint32_t type, const struct client *c, uid_t by, const char *msg)
{
	char line[SF_PROTO_MAX_TEXT + 128];
	struct json_object *a = json_object_new_object();

	json_object_object_add(a, "sfilterd", json_object_new_string(
		type == SF_MSG_ADMIN_ATTACH ? "attach" : type == SF_MSG_DETACH ? "detach" :
		type == SF_MSG_RECORD ? "record" : "replace"));
	json_object_object_add(a, "by_uid", json_object_new_int64(by));
	json_object_object_add(a, "by_pid", json_object_new_int(c->pid));
	json_object_object_add(a, "message", json_object_new_string(msg));
	snprintf(line, sizeof(line), "%s", jstr(a));
	json_object_put(a);
	log_line(line);
	log_flush();
}
