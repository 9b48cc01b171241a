/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libsfclient's administration client: ADMIN_ATTACH (docs/protocol.md),
 * the one place its request is built and its reply read, for this tree's
 * programs (sfctl attach, sfilter-oci-hook). Internal: not in
 * libsfclient.map, so hidden in libsfclient.so like sf_proto_*(), and not
 * installed; the public API stays sfclient.h.
 *
 * Functions return 0 or a negative errno (and set errno), as libbpf's do;
 * a TSYNC conflict is a positive tid, as seccomp(2) returns it.
 */
#ifndef SF_CLIENT_ADMIN_H
#define SF_CLIENT_ADMIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/filter.h> /* struct sock_filter */

#include "proto.h"

/* How an exchange ended. */
struct sf_client_reply {
	/* The daemon answered the request: error, filter and text are its.
	 * When false, nothing was attached and message says what failed on
	 * this side (connecting, sending, reading). */
	bool answered;
	int error;        /* 0, a positive errno, or -tid (a TSYNC conflict) */
	uint32_t filter;  /* the filter attached */
	/* The daemon's "message": the attach note ("filter 7 attached to
	 * ..."), or why it refused; else the local failure. */
	char message[SF_PROTO_MAX_TEXT];
	char text[SF_PROTO_MAX_MSG]; /* the reply's JSON text; "" unanswered */
};

/*
 * ADMIN_ATTACH of insns (n of them) with flags (SF_FLAG_*) on a connection
 * fd that has had the daemon's hello (sf_proto_connect()), to thread tid
 * of the process pidfd names (a pidfd taken before asking, so that a pid
 * reused since is never confined; with SF_FLAG_TSYNC every thread of it),
 * or, with cgroup not NULL, to that cgroup v2 directory (tid 0, pidfd
 * -1). Returns 0 (reply->message: the note), the daemon's refusal as
 * -errno (or a TSYNC tid), or a local failure as -errno: -EMSGSIZE
 * "request too large", the send's errno "send: ...", -ECONNRESET "attach:
 * no reply", -EPROTO "malformed reply from sfilterd".
 */
int sf_client_admin_attach_fd(int fd, pid_t tid, int pidfd, const char *cgroup,
			      const struct sock_filter *insns, size_t n, unsigned int flags,
			      struct sf_client_reply *reply);

/*
 * A connection to the daemon at socket (NULL: $SFILTER_SOCKET, else the
 * default) that has had the hello, for the _fd calls: the fd, or -errno
 * with reply->message saying why (the failures below that come before a
 * send). Several requests may follow one another on it.
 */
int sf_client_connect(const char *socket, struct sf_client_reply *reply);

/*
 * The same over a connection of its own to the daemon at socket (NULL:
 * $SFILTER_SOCKET, else the default), waiting up to 10 s for the hello.
 * Besides the failures above: -EHOSTDOWN "not running (...)", -EPROTO "no
 * hello (...)", or a refused connection's errno "refused the connection:
 * ..." (a limit of the daemon's). Messages name no socket: a caller
 * prefixes "sfilterd at PATH: ".
 */
int sf_client_admin_attach(const char *socket, pid_t tid, int pidfd, const char *cgroup,
			   const struct sock_filter *insns, size_t n, unsigned int flags,
			   struct sf_client_reply *reply);

/*
 * RECORD (SF_RECORD_START or SF_RECORD_TAKE) of filter_id over a
 * connection of its own to the daemon at socket, as
 * sf_client_admin_attach() connects; reply->text holds TAKE's JSON. 0, the
 * daemon's refusal as -errno, or a local failure as -errno.
 */
int sf_client_record(const char *socket, uint32_t op, uint32_t filter_id,
		     struct sf_client_reply *reply);

/*
 * PROFILE: the container seccomp profile (len bytes of JSON) that filter_id
 * was compiled from, for the capability set caps (as libsfprofile reads
 * it), with flags SF_PROFILE_* (EARLY: answered before the compile), over
 * a connection of its own. 0, the daemon's refusal as -errno (EINVAL: it
 * does not compile to that filter's program), or a local failure as
 * -errno.
 */
int sf_client_profile(const char *socket, uint32_t filter_id, const char *caps, uint32_t flags,
		      const char *json, size_t len, struct sf_client_reply *reply);
/* The same on a connection of sf_client_connect()'s. */
int sf_client_profile_fd(int fd, uint32_t filter_id, const char *caps, uint32_t flags,
			 const char *json, size_t len, struct sf_client_reply *reply);

#endif
