// SPDX-License-Identifier: GPL-2.0-only
/*
 * sfilterd against a hostile local user. Every decision is made from what
 * the kernel vouched for when a request was sent, never from what /proc
 * says when it is handled:
 *   - requests queued by uid 65534, which then execs a setuid-root
 *     program, are still uid 65534's (the review's exact scenario);
 *   - a self-attach sent before the execve of a setuid-root program never
 *     lands on that program;
 *   - an attach by pid never confines a process that reused the pid;
 *   - a request sent before the daemon's hello is refused;
 *   - admin is uid 0 at send time, or the --admin-group.
 * The daemon is stopped (SIGSTOP) while the attacker prepares, which is
 * what a second connection that never reads its replies achieved.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "daemon.h"
#include "progs.h"
#include "runtime.h"
#include "sfclient.h"
#include "suid.h"
#include "client.h"
#include "proto.h"

#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

SFD_TIER_INDEPENDENT


/* Waits until the daemon's stderr holds needle count times. */
static bool err_has(const struct sfd *dm, const char *needle, int count)
{
	int tries = test_is_emulated() ? 600 : 100;

	while (tries--) {
		char buf[65536];
		int fd = open(dm->err, O_RDONLY | O_CLOEXEC), seen = 0;
		ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
		const char *p = buf;

		if (fd >= 0)
			close(fd);
		if (n > 0) {
			buf[n] = '\0';
			while ((p = strstr(p, needle))) {
				seen++;
				p++;
			}
		}
		if (seen >= count)
			return true;
		usleep(50000);
	}
	return false;
}

/* Becomes nobody, connects (hello included) and keeps the connection across
 * execve, as an attacker would; then tells the test (on ready) and waits
 * for its go, so that the daemon is stopped only once the attacker holds a
 * greeted connection and has dropped root. -1 on failure. */
static int attacker_connect(const char *sock, int ready, int go)
{
	char c = 'c';
	int fd;

	if (!suid_become_nobody())
		return -1;
	fd = sfd_connect(sock);
	if (fd < 0)
		return -1;
	fcntl(fd, F_SETFD, 0);
	if (write(ready, &c, 1) != 1 || read(go, &c, 1) != 1)
		return -1;
	return fd;
}

/* The test's side of attacker_connect(): waits for the attacker's
 * connection, stops the daemon, lets the attacker go on. */
static bool stop_daemon_once_connected(struct sfd *dm, int ready, int go)
{
	char c;

	if (!ASSERT_EQ(read(ready, &c, 1), 1, "the attacker is connected, as uid 65534"))
		return false;
	if (!sfd_pause(dm))
		return false;
	return ASSERT_EQ(write(go, "g", 1), 1, "let the attacker queue its requests");
}

/* The test's side of the setuid scene: the daemon stopped once the
 * attacker (holding hold's read end) is connected, the attacker seen to
 * run the setuid image, then the daemon let go on the queued requests. */
static bool setuid_scene(struct sfd *dm, int conn, int qgo, int hold, pid_t attacker)
{
	if (!stop_daemon_once_connected(dm, conn, qgo))
		return false;
	close(hold);
	ASSERT_NEQ(suid_wait_privileged(attacker), 0, "the attacker runs a privileged image");
	return sfd_resume(dm);
}

static int send_msg(int fd, void *msg, uint16_t type, uint32_t len, uint32_t rid)
{
	sf_proto_header(msg, type, len, rid);
	return sf_proto_send(fd, &(struct iovec){ msg, len }, 1, NULL, 0);
}

static struct sock_filter kill_getppid[4], kill_read[4];

/* ---- the review's scenario ------------------------------------------------ */

TEST(queued_detaches_stay_the_users_after_it_execs_a_setuid_program)
{
	static const char *const verbose[] = { "-v", NULL };
	struct sock_fprog prog = progs_kill_on(kill_getppid, 4, SYS_getppid);
	char dir[64], copy[128], c;
	int status, ready[2], hold[2], go[2], conn[2], qgo[2];
	pid_t victim, attacker;
	SFD_AUTO;

	if (!sfd_start_for_users(&dm, verbose) || !suid_copy(dir, sizeof(dir), copy, sizeof(copy)))
		return;
	/* Root confines a root process (filter 1). */
	if (!ASSERT_OK(pipe(ready), "pipe") || !ASSERT_OK(pipe(go), "pipe") ||
	    !ASSERT_OK(pipe(hold), "pipe") || !ASSERT_OK(pipe(conn), "pipe") ||
	    !ASSERT_OK(pipe(qgo), "pipe"))
		goto out;
	fflush(stdout);
	victim = fork();
	if (victim == 0) {
		if (sf_attach(&prog, 0) || write(ready[1], "v", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(1);
		syscall(SYS_getppid);
		_exit(0);
	}
	ASSERT_EQ(read(ready[0], &c, 1), 1, "root's process confined");
	/* uid 65534 queues DETACHes of filters 1..3 while the daemon is
	 * busy, then execs a setuid-root program that waits. */
	attacker = fork();
	if (attacker == 0) {
		struct sf_id_req req = { 0 };
		uint32_t id;
		int fd;

		close(hold[1]);
		fd = attacker_connect(dm.sock, conn[1], qgo[0]);
		if (fd < 0)
			_exit(11);
		for (id = 1; id <= 3; id++) {
			req.id = id;
			if (send_msg(fd, &req, SF_MSG_DETACH, sizeof(req), id))
				_exit(12);
		}
		dup2(hold[0], 0);
		execl(copy, copy, "--hold", (char *)NULL);
		_exit(13);
	}
	if (!setuid_scene(&dm, conn[0], qgo[1], hold[0], attacker))
		goto out;
	ASSERT_TRUE(err_has(&dm, "type 5: Operation not permitted", 3),
		    "all three DETACHes refused (EPERM)");
	ASSERT_FALSE(sfd_file_has(dm.log, "\"sfilterd\":\"detach\""), "nothing was detached");
	ASSERT_TRUE(sfd_ps_lists(dm.sock, victim, 0), "root's process still confined");
	ASSERT_EQ(write(go[1], "g", 1), 1, "release the victim");
	waitpid(victim, &status, 0);
	ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
		    "root's filter still kills");
	close(hold[1]);
	waitpid(attacker, &status, 0);
out:
	suid_rm_copy(dir, copy);
}

/* A user without no_new_privs asks for a filter on itself, then execs a
 * setuid-root program: seccomp(2)'s no_new_privs rule exists to stop
 * exactly this. The request must never land on the new image. */
TEST(a_self_attach_never_lands_on_a_setuid_program_executed_after_asking)
{
	static const char *const verbose[] = { "-v", NULL };
	struct sock_fprog prog = progs_kill_on(kill_read, 4, SYS_read);
	char dir[64], copy[128];
	int status, hold[2], conn[2], qgo[2];
	pid_t attacker;
	SFD_AUTO;

	if (!sfd_start_for_users(&dm, verbose) || !suid_copy(dir, sizeof(dir), copy, sizeof(copy)))
		return;
	if (!ASSERT_OK(pipe(hold), "pipe") || !ASSERT_OK(pipe(conn), "pipe") ||
	    !ASSERT_OK(pipe(qgo), "pipe"))
		goto out;
	fflush(stdout);
	attacker = fork();
	if (attacker == 0) {
		union {
			struct sf_attach_req r;
			char b[SF_PROTO_ATTACH_REQ_SIZE + 4 * 8];
		} m = { 0 };
		int fd;

		close(hold[1]);
		fd = attacker_connect(dm.sock, conn[1], qgo[0]);
		if (fd < 0)
			_exit(11);
		m.r.tid = 0;
		m.r.reply_fd = fd;
		m.r.n_insns = prog.len;
		memcpy(m.r.insns, prog.filter, prog.len * 8);
		if (send_msg(fd, &m, SF_MSG_ATTACH, sizeof(m), 1))
			_exit(12);
		dup2(hold[0], 0);
		execl(copy, copy, "--hold", (char *)NULL);
		_exit(13);
	}
	if (!setuid_scene(&dm, conn[0], qgo[1], hold[0], attacker))
		goto out;
	ASSERT_TRUE(err_has(&dm, "has executed another program since it connected", 1),
		    "the attach was refused (EPERM)");
	ASSERT_FALSE(sfd_ps_lists(dm.sock, attacker, 0), "the setuid program is not confined");
	/* Its read() is what the filter would have killed. */
	close(hold[1]);
	waitpid(attacker, &status, 0);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		    "the setuid program read its stdin and exited normally");
out:
	suid_rm_copy(dir, copy);
}

/* The client library refuses this itself (seccomp(2)'s order of errors);
 * a client that speaks the protocol directly meets the same rule in the
 * daemon. Exit codes: 0 = refused with EACCES; else the step that failed. */
static int raw_attach_without_nnp(const char *sock, struct sock_fprog prog)
{
	union {
		struct sf_attach_req r;
		char b[SF_PROTO_ATTACH_REQ_SIZE + 4 * 8];
	} m = { 0 };
	char reply[SF_PROTO_MAX_MSG];
	ssize_t n;
	int fd;

	if (!suid_become_nobody())
		return 10;
	fd = sfd_connect(sock);
	if (fd < 0)
		return 11;
	m.r.reply_fd = fd;
	m.r.n_insns = prog.len;
	memcpy(m.r.insns, prog.filter, prog.len * 8);
	if (send_msg(fd, &m, SF_MSG_ATTACH, sizeof(m), 1))
		return 12;
	n = recv(fd, reply, sizeof(reply), 0);
	if (n <= 0 || sf_proto_check_reply(reply, n) != 0)
		return 13;
	if (((struct sf_reply *)reply)->error != EACCES)
		return 14;
	/* Nothing was attached: the call the filter kills runs. */
	return syscall(SYS_getppid) > 0 ? 0 : 15;
}

TEST(a_self_attach_without_no_new_privs_is_refused_by_the_daemon_too)
{
	struct sock_fprog prog = progs_kill_on(kill_getppid, 4, SYS_getppid);
	int status;
	pid_t p;
	SFD_AUTO;

	if (!sfd_start_for_users(&dm, NULL))
		return;
	fflush(stdout);
	p = fork();
	if (p == 0)
		_exit(raw_attach_without_nnp(dm.sock, prog));
	waitpid(p, &status, 0);
	ASSERT_TRUE(WIFEXITED(status), "the sender lives on");
	ASSERT_EQ(WEXITSTATUS(status), 0, "EACCES and nothing attached (step that failed)");
}

/* ---- pid reuse ------------------------------------------------------------ */

/* Forks a child with pid want (through ns_last_pid), which waits for a byte
 * on go, then calls getppid and exits 0. 0 when no attempt got the pid. */
static pid_t fork_with_pid(pid_t want, int go)
{
	int attempt;

	for (attempt = 0; attempt < 200; attempt++) {
		char v[32];
		int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);
		pid_t p;

		if (fd < 0)
			return 0;
		snprintf(v, sizeof(v), "%d", want - 1);
		if (write(fd, v, strlen(v)) < 0) {
			close(fd);
			return 0;
		}
		close(fd);
		p = fork();
		if (p == 0) {
			char c;

			if (read(go, &c, 1) != 1)
				_exit(20);
			syscall(SYS_getppid);
			_exit(0);
		}
		if (p == want)
			return p;
		kill(p, SIGKILL);
		waitpid(p, NULL, 0);
	}
	return 0;
}

TEST(an_attach_by_pid_never_confines_a_process_that_reused_the_pid)
{
	struct sock_fprog prog = progs_kill_on(kill_getppid, 4, SYS_getppid);
	union {
		struct sf_admin_attach_req r;
		char b[SF_PROTO_ADMIN_ATTACH_SIZE + 4 * 8];
	} m = { 0 };
	char reply[SF_PROTO_MAX_MSG];
	int go[2], status, fd, pidfd;
	pid_t target, reuser;
	ssize_t n;
	SFD_AUTO;

	if (access("/proc/sys/kernel/ns_last_pid", W_OK)) {
		test_skip("no writable /proc/sys/kernel/ns_last_pid (CONFIG_CHECKPOINT_RESTORE)");
		return;
	}
	if (!sfd_start_for_users(&dm, NULL) || !ASSERT_OK(pipe(go), "pipe"))
		return;
	fflush(stdout);
	target = fork();
	if (target == 0) {
		pause();
		_exit(0);
	}
	pidfd = (int)syscall(SYS_pidfd_open, target, 0);
	fd = sfd_connect(dm.sock);
	if (!ASSERT_TRUE(pidfd >= 0 && fd >= 0, "pidfd and connection"))
		return;
	/* The request names the target by its pidfd; the daemon reads it
	 * only after the target is gone and its pid is someone else's. */
	if (!sfd_pause(&dm))
		return;
	m.r.pid = target;
	m.r.n_insns = prog.len;
	memcpy(m.r.insns, prog.filter, prog.len * 8);
	sf_proto_header(&m.r.hdr, SF_MSG_ADMIN_ATTACH, sizeof(m), 1);
	ASSERT_OK(sf_proto_send(fd, &(struct iovec){ &m, sizeof(m) }, 1, &pidfd, 1),
		  "send the attach with its pidfd");
	kill(target, SIGKILL);
	waitpid(target, NULL, 0);
	reuser = fork_with_pid(target, go[0]);
	if (!reuser) {
		kill(dm.pid, SIGCONT);
		test_skip("could not get pid %d again through ns_last_pid", target);
		return;
	}
	sfd_resume(&dm);
	n = recv(fd, reply, sizeof(reply), 0);
	if (ASSERT_GE(n, SF_PROTO_GREPLY_SIZE, "a reply"))
		ASSERT_EQ(((struct sf_reply *)reply)->error, ESRCH, "refused: ESRCH");
	ASSERT_FALSE(sfd_ps_lists(dm.sock, reuser, 0), "the new process is not confined");
	ASSERT_EQ(write(go[1], "g", 1), 1, "release the new process");
	waitpid(reuser, &status, 0);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		    "its getppid() ran and it exited normally");
	close(pidfd);
	close(fd);
}

/* ---- the hello and who is admin -------------------------------------------- */

TEST(a_request_sent_before_the_hello_is_refused_and_the_connection_closed)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct sf_msg_hdr h;
	char buf[SF_PROTO_MAX_MSG];
	int fd;
	ssize_t n;
	SFD_AUTO;

	if (!sfd_start_for_users(&dm, NULL))
		return;
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%.*s",
		 (int)sizeof(addr.sun_path) - 1, dm.sock);
	if (!sfd_pause(&dm))
		return;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (!ASSERT_OK(connect(fd, (struct sockaddr *)&addr, sizeof(addr)), "connect"))
		return;
	sf_proto_header(&h, SF_MSG_STATUS, sizeof(h), 1);
	ASSERT_EQ(send(fd, &h, sizeof(h), 0), sizeof(h), "a status request at once");
	sfd_resume(&dm);
	n = recv(fd, buf, sizeof(buf), 0);
	if (n < 0)
		test_log("recv: %s\n", strerror(errno));
	if (ASSERT_TRUE(n > 0 && sf_proto_check_reply(buf, n) == 0, "an error reply")) {
		char why[SF_PROTO_MAX_TEXT];

		ASSERT_EQ(((struct sf_reply *)buf)->error, EPROTO, "EPROTO");
		sf_proto_reply_message((struct sf_reply *)buf, why, sizeof(why));
		ASSERT_TRUE(strstr(why, "before the daemon's hello") != NULL,
			    "the message says why");
	}
	ASSERT_EQ(recv(fd, buf, sizeof(buf), 0), 0, "then the connection is closed");
	close(fd);
}

/* 1: admin, 0: not, -1: error. After connecting as whoever the process
 * is, drop_to (if not -1) becomes its uid before the request is sent. */
static int is_admin_after(const char *sock, uid_t drop_to)
{
	struct sf_msg_hdr h;
	char buf[SF_PROTO_MAX_MSG];
	int fd = sfd_connect(sock);
	ssize_t n;

	if (fd < 0)
		return -1;
	if (drop_to != (uid_t)-1 && setresuid(drop_to, drop_to, drop_to))
		return -1;
	if (send_msg(fd, &h, SF_MSG_STATUS, sizeof(h), 1))
		return -1;
	n = recv(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	if (n < (ssize_t)SF_PROTO_GREPLY_SIZE)
		return -1;
	buf[n] = '\0';
	return strstr(((struct sf_reply *)buf)->text, "\"admin\":true") ? 1 :
	       strstr(((struct sf_reply *)buf)->text, "\"admin\":false") ? 0 : -1;
}

/* In a child: groups, gid, uid, then the answer of is_admin_after(). */
static int admin_as(const char *sock, gid_t group, gid_t gid, uid_t uid, uid_t drop_to)
{
	int status;
	pid_t p;

	fflush(stdout);
	p = fork();
	if (p == 0) {
		if (setgroups(group != (gid_t)-1, &group) || setgid(gid) || setuid(uid))
			_exit(3);
		_exit(is_admin_after(sock, drop_to) + 1);
	}
	waitpid(p, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) - 1 : -1;
}

TEST(admin_is_uid_0_or_the_admin_group_when_the_request_is_sent)
{
	static const char *const group[] = { "--admin-group", "4242", NULL };
	SFD_AUTO;

	if (!sfd_start_for_users(&dm, group))
		return;
	ASSERT_EQ(admin_as(dm.sock, -1, 0, 0, -1), 1, "root");
	ASSERT_EQ(admin_as(dm.sock, -1, 1000, 1000, -1), 0, "an ordinary user");
	ASSERT_EQ(admin_as(dm.sock, 4242, 1000, 1000, -1), 1,
		  "a user with the admin group among its groups");
	ASSERT_EQ(admin_as(dm.sock, -1, 4242, 1000, -1), 1, "a user whose gid is the admin group");
	ASSERT_EQ(admin_as(dm.sock, -1, 0, 0, 1000), 0,
		  "root that connected, then became uid 1000 before sending");
	ASSERT_EQ(admin_as(dm.sock, 4242, 0, 0, 1001), 0,
		  "a process with the admin group that became another uid before sending");
}
