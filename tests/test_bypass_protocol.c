// SPDX-License-Identifier: GPL-2.0-only
/*
 * Bypass attempts through sfilterd's protocol, by a local user (uid 65534,
 * no_new_privs) against a sentinel (a root process confined by root: kill
 * on getppid) and a victim (a root process with no filter). One iteration
 * is one abusive exchange:
 *   - an oversized datagram, a truncated one, n_insns that does not match,
 *     random bytes, an empty datagram (the daemon hangs up);
 *   - interleaved requests: several sent before any reply is read, on one
 *     connection and across two;
 *   - file descriptors (SCM_RIGHTS: pipes, /dev/null, the victim's pidfd)
 *     with an attach aimed at the victim (where the kernel refuses them
 *     at the send, SO_PASSRIGHTS, 6.16+, that refusal is the answer);
 *   - administration it may not do: DETACH and REPLACE of the sentinel's
 *     filter, ADMIN_ATTACH of the victim with its pidfd;
 *   - spoofed SCM_CREDENTIALS (uid 0, or the sentinel's pid): the kernel
 *     refuses the send (EPERM), and were it not to, the daemon refuses;
 *   - an attach of the victim's thread, and a request sent by a child on
 *     the connection its parent made;
 *   - a request sent before the daemon's hello.
 * After each, the daemon still serves (STATUS on the connection, or a new
 * one, answers and says "admin":false), the sentinel's child dies on
 * getppid (else an escape) and the victim's child lives through it (else
 * a wrongful kill).
 */
#define _GNU_SOURCE
#include "harness.h"
#include "bypass.h"
#include "daemon.h"
#include "progs.h"
#include "sfclient.h"
#include "suid.h"
#include "client.h"
#include "proto.h"

#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

SFD_TIER_INDEPENDENT

static struct sock_filter kill_getppid[4];
static const struct sock_filter allow_all[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };

struct board {
	struct bp_tally t;
	volatile int refused_sends;  /* spoofed credentials the kernel refused */
	volatile int refused_rights; /* descriptors the kernel refused to send */
};

static struct board *B;
static const char *sock_path;
static pid_t sentinel_pid, victim_pid;
static uint32_t sentinel_id;
static struct bp_prober sentinel, victim;

/* The sentinel confines itself through sfilterd, as root, and reports its
 * filter's id. */
static int sentinel_setup(struct bp_prober_board *b)
{
	struct sock_fprog prog = progs_kill_on(kill_getppid, 4, SYS_getppid);
	const char *m;

	if (sf_attach(&prog, 0))
		return 1;
	m = strstr(sf_last_error(), "filter ");
	b->value = m ? atol(m + 7) : 0;
	return 0;
}

/* ---- messages -------------------------------------------------------------- */

static union {
	struct sf_msg_hdr h;
	struct sf_attach_req attach;
	struct sf_admin_attach_req admin;
	struct sf_id_req id;
	struct sf_replace_req replace;
	char b[SF_PROTO_MAX_MSG + 8192];
} m;

/* Sends len bytes of m with fds (SCM_RIGHTS) and, when cred is not NULL,
 * those credentials instead of the kernel's own. 0 or -errno. */
static int send_raw(int fd, size_t len, const int *fds, int nfds, const struct ucred *cred)
{
	char cbuf[CMSG_SPACE(8 * sizeof(int)) + CMSG_SPACE(sizeof(struct ucred))];
	struct iovec iov = { m.b, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	size_t clen = 0;

	memset(cbuf, 0, sizeof(cbuf));
	mh.msg_control = cbuf;
	mh.msg_controllen = sizeof(cbuf);
	cm = CMSG_FIRSTHDR(&mh);
	if (nfds) {
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, nfds * sizeof(int));
		clen += CMSG_SPACE(nfds * sizeof(int));
		cm = CMSG_NXTHDR(&mh, cm);
	}
	if (cred) {
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_CREDENTIALS;
		cm->cmsg_len = CMSG_LEN(sizeof(*cred));
		memcpy(CMSG_DATA(cm), cred, sizeof(*cred));
		clen += CMSG_SPACE(sizeof(*cred));
	}
	mh.msg_controllen = clen;
	if (!clen)
		mh.msg_control = NULL;
	return sendmsg(fd, &mh, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

/* A well-formed message of type with body (after the header) of len bytes
 * already in m; sent with the sender's own credentials. */
static int send_msg(int fd, uint16_t type, size_t len)
{
	sf_proto_header(&m.h, type, (uint32_t)len, 7);
	return sf_proto_send(fd, &(struct iovec){ m.b, len }, 1, NULL, 0);
}

/* The next reply's error; 0 for a hello; -1000 when the daemon hung up,
 * -1001 when no reply came, -1002 when what came is not a reply. Its text
 * into text (optional). */
static int reply(int fd, char *text, size_t size)
{
	static char in[SF_PROTO_MAX_MSG + 8];
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct sf_reply *r = (struct sf_reply *)in;
	ssize_t n;

	if (poll(&p, 1, 10000 * (test_is_emulated() ? 10 : 1)) != 1)
		return -1001;
	n = recv(fd, in, sizeof(in), 0);
	if (n <= 0)
		return -1000;
	if (n == SF_PROTO_HELLO_SIZE && r->hdr.type == SF_MSG_HELLO)
		return 0;
	if (sf_proto_check_reply(in, n) != 0)
		return -1002;
	if (text)
		snprintf(text, size, "%.*s", (int)size - 1, r->text);
	return r->error;
}

static size_t attach_msg(pid_t tid, const struct sock_filter *insns, uint32_t n)
{
	memset(&m.attach, 0, sizeof(m.attach));
	m.attach.tid = tid;
	m.attach.reply_fd = -1;
	m.attach.n_insns = n;
	memcpy(m.attach.insns, insns, n * 8);
	return SF_PROTO_ATTACH_REQ_SIZE + n * 8;
}

static size_t id_msg(uint32_t id)
{
	memset(&m.id, 0, sizeof(m.id));
	m.id.id = id;
	return SF_PROTO_ID_REQ_SIZE;
}

static size_t replace_msg(uint32_t id)
{
	memset(&m.replace, 0, sizeof(m.replace));
	m.replace.filter_id = id;
	m.replace.n_insns = 1;
	memcpy(m.replace.insns, allow_all, 8);
	return SF_PROTO_REPLACE_REQ_SIZE + 8;
}

static size_t admin_attach_msg(pid_t pid)
{
	struct sock_fprog p = progs_kill_on(kill_getppid, 4, SYS_getppid);

	memset(&m.admin, 0, sizeof(m.admin));
	m.admin.pid = pid;
	m.admin.n_insns = p.len;
	memcpy(m.admin.insns, p.filter, p.len * 8);
	return SF_PROTO_ADMIN_ATTACH_SIZE + p.len * 8;
}

/* ---- the attacker ---------------------------------------------------------- */

enum abuse {
	A_OVERSIZED, A_TRUNCATED, A_N_INSNS, A_GARBAGE, A_EMPTY, A_INTERLEAVED,
	A_INTERLEAVED_TWO, A_RIGHTS, A_DETACH, A_REPLACE, A_ADMIN_ATTACH, A_SPOOF,
	A_OTHER_TID, A_OTHER_PROCESS, A_BEFORE_HELLO, N_ABUSES
};

static const char *const abuse_name[N_ABUSES] = {
	"oversized datagram", "truncated datagram", "n_insns not matching", "random bytes",
	"empty datagram", "interleaved requests", "interleaved on two connections",
	"SCM_RIGHTS junk", "DETACH of the sentinel's filter", "REPLACE of the sentinel's filter",
	"ADMIN_ATTACH of the victim", "spoofed SCM_CREDENTIALS", "attach of the victim's thread",
	"request from another process", "request before the hello",
};

/* Asserts a refusal: a reply with an error, or a hang-up when hangup_ok. */
static void refused(int err, bool hangup_ok, enum abuse a)
{
	char m2[128];

	snprintf(m2, sizeof(m2), "%s: refused (reply error %d)", abuse_name[a], err);
	if (err == -1000 && hangup_ok)
		return;
	ASSERT_TRUE(err > 0, m2);
}

/* Sends a request on a connection that has not waited for the hello. */
static int before_hello(void)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0), err = -1000;

	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", sock_path);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0 &&
	    send_msg(fd, SF_MSG_DETACH, id_msg(sentinel_id)) == 0) {
		/* The hello, if it came first; then the refusal or a hang-up. */
		err = reply(fd, NULL, 0);
		if (err == 0)
			err = reply(fd, NULL, 0);
	}
	if (fd >= 0)
		close(fd);
	return err;
}

static const uint16_t garbage_types[] = {
	SF_MSG_ATTACH, SF_MSG_ADMIN_ATTACH, SF_MSG_DETACH, SF_MSG_REPLACE, 0,
	2 /* version 2's ATTACH reply, reserved */, SF_MSG_REPLY, SF_MSG_HELLO, 12, 0xffff,
};

/* A send with descriptors, err: true when it went, false when the kernel
 * refused it because the daemon takes none from this user (SO_PASSRIGHTS,
 * 6.16+: EPERM); any other error fails the test. */
static bool sent_or_refused_rights(int err)
{
	if (err == -EPERM) {
		B->refused_rights++;
		return false;
	}
	return ASSERT_OK(err, "send");
}

static void abuse(int *conn, enum abuse a, unsigned int *seed)
{
	static const struct ucred spoofs[] = { { 0, 0, 0 }, { 0, 0, 0 }, { 1, SUID_NOBODY, SUID_NOBODY } };
	int fd = *conn, err, i, p[2], fds[4], nfds = 0;
	struct ucred cred;
	size_t len;
	pid_t c;

	switch (a) {
	case A_OVERSIZED:
		len = attach_msg(victim_pid, kill_getppid, 4);
		memset(m.b + len, 0x20, SF_PROTO_MAX_MSG + 4096 - len);
		sf_proto_header(&m.h, SF_MSG_ATTACH, SF_PROTO_MAX_MSG + 4096, 1);
		if (send_raw(fd, SF_PROTO_MAX_MSG + 4096, NULL, 0, NULL) == 0)
			refused(reply(fd, NULL, 0), false, a);
		break;
	case A_TRUNCATED:
		len = attach_msg(victim_pid, kill_getppid, 4);
		sf_proto_header(&m.h, SF_MSG_ATTACH, (uint32_t)len, 1);
		if (ASSERT_OK(send_raw(fd, len - 1 - rand_r(seed) % (len - 1), NULL, 0, NULL), "send"))
			refused(reply(fd, NULL, 0), false, a);
		break;
	case A_N_INSNS:
		len = attach_msg(victim_pid, kill_getppid, 4);
		m.attach.n_insns = 5;
		if (ASSERT_OK(send_msg(fd, SF_MSG_ATTACH, len), "send"))
			refused(reply(fd, NULL, 0), false, a);
		break;
	case A_GARBAGE:
		len = 1 + rand_r(seed) % 300;
		for (i = 0; i < (int)len; i++)
			m.b[i] = (char)rand_r(seed);
		/* Sometimes behind a valid header: of a request this user
		 * may not make, or of no request at all (STATUS, PS and LOG
		 * would be answered, LOG with a stream). */
		if (rand_r(seed) % 2 && len >= SF_PROTO_HDR_SIZE)
			sf_proto_header(&m.h, garbage_types[rand_r(seed) % ARRAY_SIZE(garbage_types)],
					(uint32_t)len, 1);
		if (ASSERT_OK(send_raw(fd, len, NULL, 0, NULL), "send"))
			refused(reply(fd, NULL, 0), false, a);
		break;
	case A_EMPTY:
		if (ASSERT_OK(send_raw(fd, 0, NULL, 0, NULL), "send"))
			ASSERT_EQ(reply(fd, NULL, 0), -1000, "an empty datagram: the daemon hangs up");
		break;
	case A_INTERLEAVED:
		/* Three requests before any reply, then the replies in order. */
		if (ASSERT_OK(send_msg(fd, SF_MSG_DETACH, id_msg(sentinel_id)), "send") &&
		    ASSERT_OK(send_msg(fd, SF_MSG_ADMIN_ATTACH, admin_attach_msg(victim_pid)), "send") &&
		    ASSERT_OK(send_msg(fd, SF_MSG_REPLACE, replace_msg(sentinel_id)), "send"))
			for (i = 0; i < 3; i++)
				refused(reply(fd, NULL, 0), false, a);
		break;
	case A_INTERLEAVED_TWO:
		c = sfd_connect(sock_path);
		if (!ASSERT_TRUE(c >= 0, "a second connection"))
			break;
		if (ASSERT_OK(send_msg(fd, SF_MSG_REPLACE, replace_msg(sentinel_id)), "send") &&
		    ASSERT_OK(send_msg(c, SF_MSG_DETACH, id_msg(sentinel_id)), "send") &&
		    ASSERT_OK(send_msg(fd, SF_MSG_ATTACH, attach_msg(victim_pid, kill_getppid, 4)),
			      "send")) {
			refused(reply(c, NULL, 0), false, a);
			refused(reply(fd, NULL, 0), false, a);
			refused(reply(fd, NULL, 0), false, a);
		}
		close(c);
		break;
	case A_RIGHTS:
		if (!ASSERT_OK(pipe(p), "pipe"))
			break;
		fds[nfds++] = p[0];
		fds[nfds++] = p[1];
		fds[nfds] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		nfds += fds[nfds] >= 0;
		fds[nfds] = (int)syscall(SYS_pidfd_open, victim_pid, 0);
		nfds += fds[nfds] >= 0;
		len = attach_msg(victim_pid, kill_getppid, 4);
		sf_proto_header(&m.h, SF_MSG_ATTACH, (uint32_t)len, 1);
		if (sent_or_refused_rights(send_raw(fd, len, fds, nfds, NULL)))
			refused(reply(fd, NULL, 0), false, a);
		for (i = 0; i < nfds; i++)
			close(fds[i]);
		break;
	case A_DETACH:
		if (ASSERT_OK(send_msg(fd, SF_MSG_DETACH, id_msg(sentinel_id)), "send"))
			refused(reply(fd, NULL, 0), false, a);
		break;
	case A_REPLACE:
		if (ASSERT_OK(send_msg(fd, SF_MSG_REPLACE, replace_msg(sentinel_id)), "send"))
			refused(reply(fd, NULL, 0), false, a);
		break;
	case A_ADMIN_ATTACH:
		fds[0] = (int)syscall(SYS_pidfd_open, victim_pid, 0);
		len = admin_attach_msg(victim_pid);
		sf_proto_header(&m.h, SF_MSG_ADMIN_ATTACH, (uint32_t)len, 1);
		if (ASSERT_TRUE(fds[0] >= 0, "the victim's pidfd") &&
		    sent_or_refused_rights(send_raw(fd, len, fds, 1, NULL)))
			refused(reply(fd, NULL, 0), false, a);
		if (fds[0] >= 0)
			close(fds[0]);
		break;
	case A_SPOOF:
		/* uid 0 with our own pid or the sentinel's; our uid with
		 * init's pid. */
		cred = spoofs[rand_r(seed) % ARRAY_SIZE(spoofs)];
		if (!cred.pid)
			cred.pid = rand_r(seed) % 2 ? sentinel_pid : getpid();
		len = id_msg(sentinel_id);
		sf_proto_header(&m.h, SF_MSG_DETACH, (uint32_t)len, 1);
		err = send_raw(fd, len, NULL, 0, &cred);
		if (err == -EPERM) {
			B->refused_sends++;
			break;
		}
		ASSERT_EQ(err, -EPERM, "the kernel refuses spoofed credentials");
		if (err == 0)
			refused(reply(fd, NULL, 0), false, a);
		break;
	case A_OTHER_TID:
		if (ASSERT_OK(send_msg(fd, SF_MSG_ATTACH, attach_msg(victim_pid, kill_getppid, 4)),
			      "send"))
			refused(reply(fd, NULL, 0), false, a);
		break;
	case A_OTHER_PROCESS:
		fflush(stdout);
		c = fork();
		if (c == 0)
			_exit(send_msg(fd, SF_MSG_ATTACH, attach_msg(victim_pid, kill_getppid, 4)) ?
			      1 : 0);
		if (ASSERT_EQ(bp_wait(c, 10), 0, "the child sent its request"))
			refused(reply(fd, NULL, 0), false, a);
		break;
	case A_BEFORE_HELLO:
		refused(before_hello(), true, a);
		break;
	default:
		break;
	}
}

/* The daemon still serves this user, and not as admin. */
static bool still_serving(int *conn)
{
	char text[SF_PROTO_MAX_TEXT + 4096];
	int err, tries;

	for (tries = 0; tries < 2; tries++) {
		if (*conn < 0)
			*conn = sfd_connect(sock_path);
		if (!ASSERT_TRUE(*conn >= 0, "a new connection is greeted"))
			return false;
		err = send_msg(*conn, SF_MSG_STATUS, SF_PROTO_HDR_SIZE);
		if (!err && (err = reply(*conn, text, sizeof(text))) == 0)
			return ASSERT_TRUE(strstr(text, "\"admin\":false") != NULL,
					   "STATUS: not admin");
		/* It hung up on us, as it may after abuse: once more anew. */
		close(*conn);
		*conn = -1;
	}
	return ASSERT_EQ(err, 0, "STATUS answered");
}

static void attacker(long n)
{
	unsigned int seed = 11;
	int conn = -1;
	long i;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (!suid_become_nobody() || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		_exit(10);
	conn = sfd_connect(sock_path);
	for (i = 0; i < n && !test_failed(); i++) {
		enum abuse a = (enum abuse)(i % N_ABUSES);
		int s, v;
		struct bp_flags f = { 1, 0 };
		char what[128];

		if (conn < 0 && !still_serving(&conn))
			break;
		abuse(&conn, a, &seed);
		if (!still_serving(&conn))
			break;
		s = bp_prober_probe(&sentinel, SYS_getppid);
		v = bp_prober_probe(&victim, SYS_getppid);
		snprintf(what, sizeof(what), "iteration %ld (%s)", i, abuse_name[a]);
		f.survived = s != -1 && WIFEXITED(s);
		if (bp_judge_denied(s, &f) != BP_KILLED) {
			strncat(what, ": the sentinel's child", sizeof(what) - strlen(what) - 1);
			bp_count(&B->t, bp_judge_denied(s, &f), s, what);
		} else {
			strncat(what, ": the victim's child", sizeof(what) - strlen(what) - 1);
			bp_count(&B->t, bp_judge_allowed(v), v, what);
		}
	}
	_exit(0);
}

TEST(bypass_protocol_abuse_by_a_local_user_attaches_and_detaches_nothing)
{
	static const char *const args[] = { "--max-attach-rate", "0", NULL };
	long n = bp_iterations(1000, 45);
	double t0 = bp_now();
	pid_t a;
	int st;
	SFD_AUTO;

	if (!test_need_root("to become another user"))
		return;
	B = bp_shared(sizeof(*B));
	dm.args = args;
	if (!B || !sfd_start_sfilterd(&dm, false))
		return;
	sock_path = dm.sock;
	if (!bp_prober_start(&sentinel, sentinel_setup) || !bp_prober_start(&victim, NULL))
		goto out;
	/* Its first probe also says the setup went well. */
	st = bp_prober_probe(&sentinel, SYS_getppid);
	if (!ASSERT_TRUE(st != -1 && WIFSIGNALED(st), "the sentinel is confined") ||
	    !ASSERT_NEQ(sentinel.b->value, 0, "the sentinel's filter id"))
		goto out;
	sentinel_pid = sentinel.pid;
	victim_pid = victim.pid;
	sentinel_id = (uint32_t)sentinel.b->value;
	fflush(stdout);
	a = fork();
	if (a == 0)
		attacker(n);
	st = bp_wait(a, 600);
	ASSERT_TRUE(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "the attacker ran to its end");
	test_log("%d spoofed sends refused by the kernel\n", B->refused_sends);
	test_log("%d sends of descriptors refused by the kernel (SO_PASSRIGHTS)\n",
		 B->refused_rights);
	ASSERT_TRUE(sfd_ps_lists(dm.sock, sentinel_pid, sentinel_id),
		    "PS: the sentinel still has its filter");
	ASSERT_FALSE(sfd_ps_lists(dm.sock, victim_pid, 0), "PS: the victim has none");
	bp_report("protocol-abuse", "one abusive exchange with sfilterd by uid 65534 (15 kinds), "
		  "then the sentinel's and the victim's calls", &B->t, bp_now() - t0);
out:
	bp_prober_end(&sentinel, NULL);
	bp_prober_end(&victim, NULL);
}
