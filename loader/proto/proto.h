/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The wire protocol between libsfclient and sfilterd (docs/protocol.md).
 *
 * Transport: a SOCK_SEQPACKET Unix socket, by default
 * SF_PROTO_DEFAULT_SOCKET (SFILTER_SOCKET in the environment overrides it).
 * One datagram is one message; a message is at most SF_PROTO_MAX_MSG bytes.
 * Every message starts with struct sf_msg_hdr; all fields are in host byte
 * order (the peers share a kernel).
 *
 * A connection starts with the daemon's SF_MSG_HELLO: a client waits for
 * it, and only then sends requests (the daemon refuses a connection on
 * which anything arrived before its hello: it could have been sent by the
 * image the process replaced since). A connection over one of the daemon's
 * connection limits gets, in place of the hello, an SF_MSG_REPLY
 * with request_id 0, error EAGAIN and the reason, and is closed. Then the
 * client sends one request and reads the replies carrying the same
 * request_id, one request at a time; the daemon reads no further request
 * from a connection while replies to it wait to be read.
 * Every request carries the sender's credentials (SCM_CREDENTIALS: the
 * kernel checks them when the message is sent); sf_proto_send() attaches
 * pid, effective uid and effective gid. What a request may do is decided
 * from those: uid 0 (or the daemon's --admin-group) at send time is admin.
 *
 * Version 2 added the hello, the per-message credentials, reply_fd in the
 * attach request and a pidfd (SCM_RIGHTS) with ADMIN_ATTACH by pid.
 * Version 3 has one reply format: every answer of the daemon, ATTACH's and
 * a refusal in place of the hello included, is an SF_MSG_REPLY (struct
 * sf_reply) whose text is a JSON object, so that a client reads replies
 * one way (loader/client/reply.c).
 * Every request the daemon cannot parse (truncated,
 * oversized, wrong magic or version, unknown type, n_insns that does not
 * match the length, file descriptors attached) is answered with an
 * SF_MSG_REPLY whose error says why; the connection stays usable.
 *
 * Errors in a reply, in the order the daemon checks them:
 *   EMSGSIZE  the datagram (or hdr.length) exceeds SF_PROTO_MAX_MSG
 *   EPROTO    shorter than the header, hdr.length != the datagram's size,
 *             wrong magic, wrong version, unknown type, body shorter than
 *             struct sf_attach_req, n_insns * 8 != the rest of the message
 *   EINVAL    file descriptors (SCM_RIGHTS) attached: closed, refused
 *   EINVAL    unknown flags, n_insns 0 or above BPF_MAXINSNS
 *   EACCES    the request came from another process than the one that
 *             connected
 *   EINVAL    a filter seccomp(2) would refuse (message: the validator's
 *             "insn N (code 0x....): rule")
 *   ESRCH     tid is not a live thread of the sender's process, or the
 *             process exited before the attach completed
 *   EACCES    the target thread has neither no_new_privs nor CAP_SYS_ADMIN
 *   EPERM     the process has executed a new program since it connected
 *   ENOMEM    the chain would exceed the kernel's 32768-instruction rule
 *   < 0       TSYNC only: -error is the tid of the first thread whose chain
 *             is not an ancestor of the caller's (seccomp(2) returns it)
 */
#ifndef SF_PROTO_H
#define SF_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/filter.h> /* struct sock_filter */

#include "sfilter.h" /* bpf/sfilter.h: the attach flags' values */

/* The flags an ATTACH request may carry, and an ADMIN_ATTACH. */
#define SF_PROTO_ATTACH_FLAGS (SF_FLAGS_SELF | SF_FLAGS_RFC | SF_FLAG_GATED)
#define SF_PROTO_ADMIN_FLAGS  SF_FLAGS_ADMIN

#define SF_PROTO_MAGIC          0x544c4653U /* "SFLT" in memory (little endian) */
#define SF_PROTO_VERSION        3
#define SF_PROTO_MAX_MSG        65536
#define SF_PROTO_DEFAULT_SOCKET "/run/sfilter/sfilterd.sock"
#define SF_PROTO_SOCKET_ENV     "SFILTER_SOCKET"
/*
 * The agent socket (docs/protocol.md, "The gate"): where a seccomp
 * listener is handed to sfilterd, by runc or crun as an OCI seccomp agent
 * (linux.seccomp.listenerPath) or by libsfclient after it installs a
 * gate. Its path is the main socket's with SF_PROTO_AGENT_SUFFIX. A
 * SOCK_STREAM connection carries one message: the runtime-spec's
 * ContainerProcessState JSON with the listener by SCM_RIGHTS (the first
 * descriptor; fds[] names it "seccompFd"), then the sender's end of file;
 * the daemon answers one line, {"error": errno, "message": "..."}, and
 * closes. runc closes without reading the answer.
 */
#define SF_PROTO_AGENT_SUFFIX   ".agent"
/* The byte the agent sends as soon as it takes a connection within its
 * limits: a client that installs a gate first waits for it (one that is
 * refused is closed without it), so that it never installs a gate whose
 * listener no one would take. runc and crun never read it. */
#define SF_PROTO_AGENT_READY    'R'
#define SF_PROTO_AGENT_MAX_MSG  65536 /* the JSON, whole */
#define SF_PROTO_AGENT_FD_NAME  "seccompFd"
/* The metadata libsfclient sends (runc sends listenerMetadata). */
#define SF_PROTO_AGENT_SELF     "sfilter-self"
/* In the metadata: the filter was installed with
 * SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV ("sfilter-self killable"), so
 * that a TRAP's SIGSYS can be sent before the answer. */
#define SF_PROTO_AGENT_KILLABLE "killable"
/* The longest "message" a reply carries, NUL included, before its JSON
 * escapes. */
#define SF_PROTO_MAX_TEXT       512

enum sf_msg_type {
	/* Every request is answered by one or more SF_MSG_REPLY messages
	 * (struct sf_reply); all but the last carry SF_REPLY_MORE. */
	SF_MSG_ATTACH       = 1, /* client -> daemon: struct sf_attach_req */
	/* 2 was version 2's ATTACH reply: reserved, never reused, so that
	 * no peer of another version reads one message as another. */
	/* Administration and introspection. */
	SF_MSG_ADMIN_ATTACH = 3, /* admin: struct sf_admin_attach_req */
	SF_MSG_REPLY        = 4, /* daemon -> client: struct sf_reply */
	SF_MSG_DETACH       = 5, /* admin: struct sf_id_req */
	SF_MSG_REPLACE      = 6, /* admin: struct sf_replace_req */
	SF_MSG_STATUS       = 7, /* anyone: the header only */
	SF_MSG_PS           = 8, /* anyone (non-admins see their own uid's tasks) */
	SF_MSG_SHOW         = 9, /* struct sf_id_req (id = pid); same rule as PS */
	SF_MSG_LOG          = 10,/* struct sf_log_req; events of one's own uid
				  * unless admin */
	SF_MSG_HELLO        = 11,/* daemon -> client, first: struct sf_hello */
	SF_MSG_RECORD       = 12,/* admin: struct sf_record_req */
	SF_MSG_PROFILE      = 13,/* admin: struct sf_profile_req */
};

struct sf_msg_hdr {
	uint32_t magic;      /* SF_PROTO_MAGIC */
	uint16_t version;    /* SF_PROTO_VERSION */
	uint16_t type;       /* enum sf_msg_type */
	uint32_t length;     /* the whole message, header included */
	uint32_t request_id; /* chosen by the client, echoed in the reply */
};

/* The daemon's first message on a connection. */
struct sf_hello {
	struct sf_msg_hdr hdr;  /* request_id 0 */
	uint32_t daemon_pid;
	uint32_t flags;         /* 0 */
};

struct sf_attach_req {
	struct sf_msg_hdr hdr;
	uint32_t flags;     /* SF_ATTACH_* (loader/runtime/runtime.h, sfclient.h) */
	int32_t tid;        /* the thread to filter: the sender's own thread
			     * (sfclient sends gettid()); 0 = the sender's
			     * thread-group leader */
	int32_t reply_fd;   /* the sender's fd of this connection: its recv
			     * of the reply is its last call under the old
			     * chain (-1: every later call runs under the new) */
	uint32_t n_insns;   /* 1..BPF_MAXINSNS for a valid filter */
	struct sock_filter insns[]; /* n_insns * 8 bytes, nothing after */
};

/* ---- administration and introspection ---------------------------- */

/* SF_MSG_ADMIN_ATTACH flags: SF_ATTACH_* of loader/runtime/runtime.h, including
 * SF_ATTACH_COMPLAIN (0x200), SF_ATTACH_SHADOW (0x2000) and SF_ATTACH_COUNT
 * (0x4000); SF_ATTACH_TSYNC means "every thread of pid".
 * With path_len > 0 the target is the cgroup (v2) at path, and pid must
 * be 0. Otherwise the message carries one descriptor (SCM_RIGHTS): a
 * pidfd of pid's process, taken by the client, so that a pid reused since
 * is never confined by mistake. */
struct sf_admin_attach_req {
	struct sf_msg_hdr hdr;
	uint32_t flags;
	int32_t pid;        /* a tid; with SF_ATTACH_TSYNC its whole process */
	uint32_t n_insns;   /* 1..BPF_MAXINSNS */
	uint32_t path_len;  /* bytes of cgroup path after insns, NUL included; 0 = none */
	struct sock_filter insns[]; /* n_insns, then char path[path_len] */
};

/* SF_MSG_DETACH (id = filter id), SF_MSG_SHOW (id = pid). */
struct sf_id_req {
	struct sf_msg_hdr hdr;
	uint32_t id;
};

struct sf_replace_req {
	struct sf_msg_hdr hdr;
	uint32_t filter_id;
	uint32_t n_insns;   /* 1..BPF_MAXINSNS */
	struct sock_filter insns[];
};

/* SF_MSG_RECORD: the calls a filter judged, recorded by the daemon from
 * its counters (every call a complain filter logs, before any budget).
 * START begins a recording of filter_id; TAKE answers what it recorded,
 * {"filter": ID, "arches": {"x86_64": [nr, ...], "i386": [...], "x32":
 * [...]}, "other": N} (numbers of 1024 and above counted in "other"), and
 * ends it. */
#define SF_RECORD_START 1
#define SF_RECORD_TAKE  2
struct sf_record_req {
	struct sf_msg_hdr hdr;
	uint32_t op;        /* SF_RECORD_* */
	uint32_t filter_id;
};

/* SF_MSG_PROFILE: the container seccomp profile filter_id was compiled
 * from (as libsfprofile compiles it, for the capability set caps: "none",
 * "all", names, or a hex mask), so that each of the filter's events names
 * the profile's rule that decided it ("rule"). The daemon compiles it and
 * takes it only when it gives the filter's program exactly. */
#define SF_PROFILE_LENIENT 0x1  /* read as runc reads it (sf_profile_opts) */
/* Answered once the filter is found the asker's, before the compile: a
 * profile that fails is said in the daemon's log, not in the answer. For
 * a caller that waits on nothing but the answer (a container's start). */
#define SF_PROFILE_EARLY   0x2
struct sf_profile_req {
	struct sf_msg_hdr hdr;
	uint32_t filter_id;
	uint32_t flags;     /* SF_PROFILE_* */
	uint32_t caps_len;  /* bytes of caps, NUL included */
	uint32_t json_len;  /* bytes of the profile after it */
	char data[];        /* caps, then the profile's text */
};

#define SF_LOG_FOLLOW 0x1   /* keep the connection and stream new events */
struct sf_log_req {
	struct sf_msg_hdr hdr;
	uint32_t flags;     /* SF_LOG_FOLLOW */
};

/*
 * SF_MSG_REPLY, the one answer to every request: hdr, then fixed fields,
 * then a NUL-terminated JSON object (text), then data_len bytes of binary
 * data (SHOW: the filter's struct sock_filter[]). text occupies
 * [32, hdr.length - data_len). A failure's text is {"error": N,
 * "message": "why"}; ATTACH's success is {"filter": ID, "message":
 * "note"} (sf_last_error() is the message).
 */
#define SF_REPLY_MORE 0x1   /* more replies to the same request follow */
struct sf_reply {
	struct sf_msg_hdr hdr;
	int32_t error;      /* 0 or a positive errno (TSYNC: -tid) */
	uint32_t id;        /* ATTACH/ADMIN_ATTACH/REPLACE: the filter id */
	uint32_t flags;     /* SF_REPLY_MORE */
	uint32_t data_len;
	char text[];
};

#define SF_PROTO_HDR_SIZE        ((uint32_t)sizeof(struct sf_msg_hdr))
#define SF_PROTO_ATTACH_REQ_SIZE ((uint32_t)sizeof(struct sf_attach_req))

_Static_assert(sizeof(struct sf_msg_hdr) == 16, "header is 16 bytes");
_Static_assert(sizeof(struct sf_attach_req) == 32, "attach request is 32 bytes + insns");
_Static_assert(sizeof(struct sf_hello) == 24, "hello is 24 bytes");
#define SF_PROTO_ADMIN_ATTACH_SIZE ((uint32_t)sizeof(struct sf_admin_attach_req))
#define SF_PROTO_ID_REQ_SIZE       ((uint32_t)sizeof(struct sf_id_req))
#define SF_PROTO_REPLACE_REQ_SIZE  ((uint32_t)sizeof(struct sf_replace_req))
#define SF_PROTO_LOG_REQ_SIZE      ((uint32_t)sizeof(struct sf_log_req))
#define SF_PROTO_RECORD_REQ_SIZE   ((uint32_t)sizeof(struct sf_record_req))
#define SF_PROTO_PROFILE_REQ_SIZE  ((uint32_t)sizeof(struct sf_profile_req))
#define SF_PROTO_GREPLY_SIZE       ((uint32_t)sizeof(struct sf_reply))
/* The longest reply that carries only "error", "filter" and "message":
 * ATTACH's, any request's that failed its checks, a refusal in place of
 * the hello. The message is cut at SF_PROTO_MAX_TEXT; JSON escapes each
 * byte in at most 6 ("\u001f"); 64 hold the rest of the object. */
#define SF_PROTO_MAX_NOTE_REPLY    (SF_PROTO_GREPLY_SIZE + 6 * SF_PROTO_MAX_TEXT + 64)
_Static_assert(sizeof(struct sf_admin_attach_req) == 32, "admin attach is 32 bytes + insns + path");
_Static_assert(sizeof(struct sf_id_req) == 20, "id request is 20 bytes");
_Static_assert(sizeof(struct sf_replace_req) == 24, "replace is 24 bytes + insns");
_Static_assert(sizeof(struct sf_log_req) == 20, "log request is 20 bytes");
_Static_assert(sizeof(struct sf_reply) == 32, "reply is 32 bytes + text + data");
_Static_assert(sizeof(struct sock_filter) == 8, "sock_filter is 8 bytes");
_Static_assert(32 + BPF_MAXINSNS * sizeof(struct sock_filter) <= SF_PROTO_MAX_MSG,
	       "largest filter fits");
#define SF_PROTO_HELLO_SIZE ((uint32_t)sizeof(struct sf_hello))

/*
 * Request checks (loader/proto/checks.c), shared by sfilterd and the in-process
 * fuzzer (fuzz/fuzz_proto.c). Each returns 0 or -errno (the error the
 * reply carries, negated), with the reason in msg.
 */
int sf_proto_check_header(const void *buf, size_t n, bool truncated, char *msg, size_t msz);
bool sf_proto_is_admin_type(uint32_t type);
int sf_proto_check_attach(const void *buf, size_t n, char *msg, size_t msz);
int sf_proto_check_admin_attach(const void *buf, size_t n, uint32_t known_flags,
				const char **path, char *msg, size_t msz);
int sf_proto_check_replace(const void *buf, size_t n, char *msg, size_t msz);

/* ---- the agent socket (loader/proto/framing.c) ---- */
/* socket_path's agent socket into out: 0, or -ENAMETOOLONG past
 * size or sun_path. */
int sf_proto_agent_path(const char *socket_path, char *out, size_t size);
/* The socket sfilterd serves and its clients reach when no --socket is
 * given: $SF_PROTO_SOCKET_ENV when set and not empty, else
 * SF_PROTO_DEFAULT_SOCKET. The one reading of that environment, so that
 * the daemon and every client agree on it. */
const char *sf_proto_socket_path(void);
/* ---- framing, both ends (loader/proto/framing.c) ---- */
/* Fills the header for a message of length len. */
void sf_proto_header(struct sf_msg_hdr *h, uint16_t type, uint32_t len, uint32_t request_id);
/* Appends one SOL_SOCKET control message (SCM_CREDENTIALS, SCM_RIGHTS) of
 * len bytes to mh's control buffer, which must have room for it (its
 * CMSG_SPACE) after mh->msg_controllen, and be aligned for a cmsghdr.
 * The daemon's replies use it too. */
struct msghdr;
void sf_proto_add_cmsg(struct msghdr *mh, int type, const void *data, size_t len);

#endif /* SF_PROTO_H */
