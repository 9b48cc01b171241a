// SPDX-License-Identifier: GPL-2.0-only
/*
 * Protocol fuzzing, the bounded run in `make test`: random and
 * mutated requests sent to sfilterd built with ASan and UBSan
 * (build/sfilterd-asan, dynamically linked: tests/guest/run.sh copies its
 * shared libraries into the guest, so it runs on both kernels).
 *
 * Four forked workers (two as uid 65534, two as root) send, for
 * SF_TEST_FUZZ_SECONDS (default 30; 15 under emulation): valid templates
 * of every request type (ATTACH, ADMIN_ATTACH, DETACH, REPLACE, STATUS,
 * PS, SHOW, LOG, PROFILE), truncated, bit-flipped, with fields overwritten, grown
 * past SF_PROTO_MAX_MSG, or plain random bytes, sometimes with file
 * descriptors attached (SCM_RIGHTS), over several connections that are
 * read, left unread, or closed at random. Root workers' administration is
 * aimed only at a sacrificial process and nonexistent cgroups, and never
 * at the sentinel's filter id, so that any change to the sentinel is the
 * daemon's fault.
 *
 * Afterwards: the daemon is alive; answers a valid request correctly (an
 * invalid filter: EINVAL with the validator's text; STATUS); its ASan and
 * UBSan logs are empty (also after a SIGTERM stop, with leak checking);
 * its non-BPF descriptors (/proc/PID/fd: sockets, pipes, files) are back
 * to the baseline; and the sentinel, a task confined before the run, is
 * still listed with its filter id and still dies by SIGKILL on getppid.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "daemon.h"
#include "c2e.h"
#include "proto.h"
#include "sfclient.h"
#include "sockfilter.h"
#include "progs.h"
#include "fdpass.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

SFD_TIER_INDEPENDENT

static const struct sock_filter bad_prog[] = {
	STMT(BPF_LD | BPF_W | BPF_ABS, 3),
	STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

static uint64_t rng;
static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)rng;
}
#define RND(n) (rnd() % (n))

struct fuzz_ctx { bool root; pid_t victim; uint32_t sentinel_id; };

/* A filter body: mostly harmless (allow, or allow with a log), sometimes
 * random instructions. */
static uint32_t fill_insns(struct sock_filter *f, uint32_t max)
{
	uint32_t n = 1 + RND(max < 8 ? max : 8), i;

	for (i = 0; i + 1 < n; i++)
		f[i] = RND(4) ? STMT(BPF_LD | BPF_W | BPF_ABS, 4 * RND(16))
			      : (struct sock_filter){ (uint16_t)rnd(), (uint8_t)rnd(),
						      (uint8_t)rnd(), rnd() };
	f[n - 1] = STMT(BPF_RET | BPF_K, RND(8) ? SECCOMP_RET_ALLOW : SECCOMP_RET_LOG);
	return n;
}

/* A valid request of a random type into buf; returns its length. */
static size_t template(char *buf, const struct fuzz_ctx *fc)
{
	static const uint16_t types[] = { 1, 3, 5, 6, 7, 8, 9, 10, 13, 2, 4, 11, 0 };
	struct sf_msg_hdr *h = (void *)buf;
	uint16_t type = types[RND(sizeof(types) / sizeof(types[0]))];
	size_t len = SF_PROTO_HDR_SIZE;

	memset(buf, 0, 64);
	switch (type) {
	case SF_MSG_ATTACH: {
		struct sf_attach_req *r = (void *)buf;

		r->flags = RND(4) ? 0 : RND(2) ? SF_ATTACH_FALLBACK_LOG : rnd();
		r->tid = RND(2) ? (int32_t)syscall(SYS_gettid) : RND(3) ? 0 : (int32_t)rnd();
		r->n_insns = fill_insns(r->insns, 8);
		len = SF_PROTO_ATTACH_REQ_SIZE + r->n_insns * 8;
		break;
	}
	case SF_MSG_ADMIN_ATTACH: {
		struct sf_admin_attach_req *r = (void *)buf;
		static const char *const paths[] = { "/sys/fs/cgroup/sftest-fuzz-none",
						     "relative", "/x", "" };
		const char *p = paths[RND(4)];

		r->flags = RND(3) ? 0x200 * RND(2) : rnd();
		r->n_insns = fill_insns(r->insns, 8);
		if (RND(2)) {
			r->path_len = strlen(p) + 1;
			memcpy((char *)r->insns + r->n_insns * 8, p, r->path_len);
			r->pid = RND(4) ? 0 : fc->victim;
		} else {
			r->pid = RND(4) ? fc->victim : (int32_t)rnd();
		}
		len = SF_PROTO_ADMIN_ATTACH_SIZE + r->n_insns * 8 + r->path_len;
		break;
	}
	case SF_MSG_DETACH:
	case SF_MSG_SHOW:
		((struct sf_id_req *)buf)->id = RND(2) ? RND(64) :
			type == SF_MSG_SHOW ? (uint32_t)getpid() : rnd();
		len = SF_PROTO_ID_REQ_SIZE;
		break;
	case SF_MSG_REPLACE: {
		struct sf_replace_req *r = (void *)buf;

		r->filter_id = RND(2) ? RND(64) : rnd();
		r->n_insns = fill_insns(r->insns, 8);
		len = SF_PROTO_REPLACE_REQ_SIZE + r->n_insns * 8;
		break;
	}
	case SF_MSG_LOG:
		((struct sf_log_req *)buf)->flags = RND(4) ? 0 : RND(2) ? SF_LOG_FOLLOW : rnd();
		len = SF_PROTO_LOG_REQ_SIZE;
		break;
	case SF_MSG_PROFILE: {
		/* Compiled in a child while the connection waits, is closed
		 * or sends more: a filter's own (0: the next), another's, or
		 * none; answered before the compile or after. */
		static const char *const texts[] = {
			"{\"defaultAction\":\"SCMP_ACT_ALLOW\"}",
			"{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"syscalls\":[{\"names\":"
			"[\"getppid\"],\"action\":\"SCMP_ACT_ALLOW\"}]}",
			"{\"defaultAction\":",
			"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"nmaes\":[]}]}",
		};
		struct sf_profile_req *r = (void *)buf;
		const char *t = texts[RND(4)], *caps = RND(2) ? "none" : "all";

		r->filter_id = RND(2) ? 0 : RND(64);
		r->flags = RND(4) ? RND(4) : rnd();
		r->caps_len = (uint32_t)strlen(caps) + 1;
		r->json_len = (uint32_t)strlen(t);
		memcpy(r->data, caps, r->caps_len);
		memcpy(r->data + r->caps_len, t, r->json_len);
		len = SF_PROTO_PROFILE_REQ_SIZE + r->caps_len + r->json_len;
		break;
	}
	default:
		break;
	}
	*h = (struct sf_msg_hdr){ SF_PROTO_MAGIC, SF_PROTO_VERSION, type, (uint32_t)len, rnd() };
	return len;
}

/* Root workers may administer only the victim and nonexistent cgroups, and
 * never touch the sentinel's filter. */
static void sanitize(char *buf, size_t len, const struct fuzz_ctx *fc)
{
	struct sf_msg_hdr *h = (void *)buf;

	if (!fc->root || len < SF_PROTO_HDR_SIZE)
		return;
	if (h->type == SF_MSG_ADMIN_ATTACH && len >= SF_PROTO_ADMIN_ATTACH_SIZE) {
		struct sf_admin_attach_req *r = (void *)buf;

		if (r->pid > 0)
			r->pid = fc->victim;
		if ((uint64_t)r->n_insns * 8 + r->path_len == len - SF_PROTO_ADMIN_ATTACH_SIZE &&
		    r->path_len) {
			char *p = (char *)r->insns + (size_t)r->n_insns * 8;

			for (uint32_t i = 0; i < r->path_len; i++)
				if (p[i])
					p[i] = 'q';
			p[0] = r->path_len >= 3 ? '/' : 'q';
		}
	} else if ((h->type == SF_MSG_DETACH || h->type == SF_MSG_REPLACE ||
		    h->type == SF_MSG_PROFILE) && len >= SF_PROTO_ID_REQ_SIZE) {
		struct sf_id_req *r = (void *)buf;

		if (r->id == fc->sentinel_id)
			r->id = 0x7ffffff0;
	}
}

static size_t mutate(char *buf, size_t len, size_t cap)
{
	size_t i, n;

	switch (RND(8)) {
	case 0: /* as is */
		break;
	case 1: /* truncated */
		len = len ? RND(len) : 0;
		if (RND(2) && len >= SF_PROTO_HDR_SIZE)
			((struct sf_msg_hdr *)buf)->length = len;
		break;
	case 2: /* bit flips */
		for (n = 1 + RND(8); n && len; n--)
			buf[RND(len)] ^= 1 << RND(8);
		break;
	case 3: /* a field overwritten: one of the first 40 bytes */
		if (len >= 4) {
			uint32_t v = RND(2) ? rnd() : RND(3) ? 0 : 0xffffffff;

			i = RND(len - 3 < 40 ? len - 3 : 40) & ~3UL;
			memcpy(buf + i, &v, 4);
		}
		break;
	case 4: /* grown, sometimes past SF_PROTO_MAX_MSG */
		n = RND(4) ? RND(64) : SF_PROTO_MAX_MSG - len + RND(5000);
		if (len + n > cap)
			n = cap - len;
		for (i = 0; i < n; i++)
			buf[len + i] = RND(2) ? 0 : (char)rnd();
		len += n;
		if (RND(2) && len >= SF_PROTO_HDR_SIZE)
			((struct sf_msg_hdr *)buf)->length = len;
		break;
	case 5: /* random bytes, sometimes behind a valid header */
		n = RND(200);
		for (i = RND(2) ? SF_PROTO_HDR_SIZE : 0; i < n; i++)
			buf[i] = (char)rnd();
		len = n;
		if (len >= SF_PROTO_HDR_SIZE)
			((struct sf_msg_hdr *)buf)->length = len;
		break;
	case 6: /* n_insns / path_len / id fields wrong */
		if (len >= 28) {
			uint32_t v = RND(2) ? rnd() : RND(5000);

			memcpy(buf + 16 + 4 * RND(3), &v, 4);
		}
		break;
	default: /* header fields */
		if (len >= SF_PROTO_HDR_SIZE) {
			struct sf_msg_hdr *h = (void *)buf;

			switch (RND(4)) {
			case 0: h->version = RND(2) ? 0 : (uint16_t)rnd(); break;
			case 1: h->type = RND(16); break;
			case 2: h->magic ^= 1u << RND(32); break;
			default: h->length = rnd(); break;
			}
		}
	}
	return len;
}

static void drain(int fd, int ms, long *replies)
{
	static char in[SF_PROTO_MAX_MSG + 8];
	struct pollfd p = { .fd = fd, .events = POLLIN };

	while (poll(&p, 1, ms) == 1 && (p.revents & POLLIN)) {
		if (recv(fd, in, sizeof(in), MSG_DONTWAIT) <= 0)
			return;
		(*replies)++;
		ms = 5;
	}
}

/* Exit status: 0, or the step that failed. Stats go to rep. */
static int worker(const char *sock, struct fuzz_ctx fc, time_t deadline, int rep,
		  uint64_t seed)
{
	static union { struct sf_msg_hdr h; char b[SF_PROTO_MAX_MSG + 8192]; } m;
	int conns[4] = { -1, -1, -1, -1 }, devnull = open("/dev/null", O_RDONLY);
	long sent = 0, replies = 0;

	rng = seed | 1;
	if (!fc.root && (setgid(65534) || setuid(65534)))
		return 20;
	if (!fc.root && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return 21;
	while (time(NULL) < deadline) {
		char cbuf[CMSG_SPACE(4 * sizeof(int))];
		struct iovec iov;
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
		int c = RND(4), fds[4], nfds = 0, pfd[2] = { -1, -1 };
		size_t len;

		if (conns[c] < 0 && (conns[c] = sfd_connect(sock)) < 0)
			return 22; /* the daemon stopped accepting */
		len = template(m.b, &fc);
		len = mutate(m.b, len, sizeof(m.b));
		sanitize(m.b, len, &fc);
		iov = (struct iovec){ m.b, len };
		if (RND(8) == 0) {
			if (pipe(pfd) == 0) {
				fds[nfds++] = pfd[0];
				fds[nfds++] = pfd[1];
			}
			if (devnull >= 0 && RND(2))
				fds[nfds++] = devnull;
			if (nfds)
				fdpass_rights(&mh, cbuf, fds, nfds);
		}
		if (len == 0) {
			/* an empty datagram reads as EOF: the daemon closes */
			iov.iov_len = 0;
		}
		if (sendmsg(conns[c], &mh, MSG_NOSIGNAL | MSG_DONTWAIT) >= 0)
			sent++;
		if (pfd[0] >= 0) {
			close(pfd[0]);
			close(pfd[1]);
		}
		switch (RND(10)) {
		case 0: /* hang up without reading */
			close(conns[c]);
			conns[c] = -1;
			break;
		case 1: /* leave it unread for now */
			break;
		default:
			drain(conns[c], 200, &replies);
		}
		if (len == 0) {
			close(conns[c]);
			conns[c] = -1;
		}
	}
	{
		long st[2] = { sent, replies };

		if (write(rep, st, sizeof(st)) != sizeof(st))
			return 23;
	}
	return 0;
}

static int count_asan_logs(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "asan", 4) || !strncmp(e->d_name, "ubsan", 5)) {
			char path[512];

			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			printf("    sanitizer log %s:\n", path);
			fflush(stdout);
			snprintf(path, sizeof(path), "head -c 6000 %s/%s", dir, e->d_name);
			if (system(path)) { /* diagnostics only */ }
			n++;
		}
	closedir(d);
	return n;
}

TEST(daemon_protocol_fuzz_asan)
{
	static char *env[3];
	static char asan_env[256], ubsan_env[256];
	int seconds = test_is_emulated() ? 8 : 30, go[2] = { -1, -1 }, rep[2] = { -1, -1 };
	int i, st, base_plain, base_all, plain = -1;
	pid_t sentinel = 0, victim = 0, workers[4] = { 0 };
	uint32_t sentinel_id = 0;
	char base_list[2048], list[2048];
	long totals[2] = { 0, 0 };
	const char *e = getenv("SF_TEST_FUZZ_SECONDS");
	SFD_AUTO;

	if (e && atoi(e) > 0)
		seconds = atoi(e);
	if (!test_need_root(NULL))
		return;
	if (!sfd_find_bin("sfilterd-asan", "SF_SFILTERD_ASAN", dm.bin, sizeof(dm.bin))) {
		test_skip("no ASan daemon: build/sfilterd-asan beside the runner");
		return;
	}
	/* A dynamic binary: a guest started without its libraries has no
	 * loader for it. */
	if (access("/lib64/ld-linux-x86-64.so.2", X_OK) != 0 &&
	    access("/lib/ld-linux-aarch64.so.1", X_OK) != 0) {
		test_skip("ASan daemon: no dynamic loader here");
		return;
	}
	if (!sfd_start(&dm, true)) /* makes dm.dir; the env is set below */
		return;
	/* Restart it with sanitizer logs in the private dir. */
	sfd_signal(&dm, SIGTERM);
	snprintf(asan_env, sizeof(asan_env),
		 "ASAN_OPTIONS=log_path=%s/asan:detect_leaks=1:abort_on_error=0", dm.dir);
	snprintf(ubsan_env, sizeof(ubsan_env),
		 "UBSAN_OPTIONS=log_path=%s/ubsan:print_stacktrace=1:halt_on_error=1", dm.dir);
	env[0] = asan_env;
	env[1] = ubsan_env;
	env[2] = NULL;
	dm.env = env;
	if (!sfd_restart(&dm))
		return;

	/* The sentinel: confined before the run, waiting on go. */
	if (!ASSERT_OK(pipe(go), "pipe") || !ASSERT_OK(pipe(rep), "pipe"))
		goto out;
	fflush(stdout);
	sentinel = fork();
	if (sentinel == 0) {
		struct sock_fprog prog = { 4, (struct sock_filter *)progs_kill_getppid };
		const char *m;
		uint32_t id;
		char c;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(go[1]);
		close(rep[0]);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || sf_attach(&prog, 0) != 0)
			_exit(1);
		m = strstr(sf_last_error(), "filter ");
		id = m ? (uint32_t)atoi(m + 7) : 0;
		if (write(rep[1], &id, sizeof(id)) != sizeof(id))
			_exit(2);
		close(rep[1]); /* the parent reads rep to its end later */
		while (read(go[0], &c, 1) < 0 && errno == EINTR)
			;
		syscall(SYS_getppid);
		_exit(3);
	}
	close(go[0]);
	go[0] = -1;
	if (!ASSERT_EQ(read(rep[0], &sentinel_id, sizeof(sentinel_id)), sizeof(sentinel_id),
		       "sentinel attached") || !ASSERT_NEQ(sentinel_id, 0, "sentinel filter id"))
		goto out;
	/* The victim: root workers' administration lands here. Never reaped
	 * before the end, so its pid cannot be reused. */
	victim = fork();
	if (victim == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(rep[0]);
		close(rep[1]);
		close(go[1]);
		for (;;)
			pause();
	}
	{
		struct sf_msg_hdr h;

		ASSERT_EQ(sfd_request(dm.sock, &h, SF_MSG_STATUS, sizeof(h), NULL, NULL), 0,
			  "STATUS before the run");
	}
	usleep(100000);
	base_plain = sfd_count_plain_fds(dm.pid, base_list, sizeof(base_list));
	base_all = sfd_count_fds(dm.pid);
	test_log("baseline: %d descriptors, %d not BPF:%s\n", base_all, base_plain, base_list);

	/* The run */
	{
		time_t deadline = time(NULL) + seconds;
		struct fuzz_ctx fc = { false, victim, sentinel_id };

		fflush(stdout);
		for (i = 0; i < 4; i++) {
			workers[i] = fork();
			if (workers[i] == 0) {
				prctl(PR_SET_PDEATHSIG, SIGKILL);
				close(go[1]);
				close(rep[0]);
				fc.root = i >= 2;
				_exit(worker(dm.sock, fc, deadline, rep[1],
					     (uint64_t)time(NULL) * 2654435761u + i * 7919 + getpid()));
			}
		}
		/* A worker whose own fuzzed filter killed it is replaced. */
		while (time(NULL) < deadline) {
			for (i = 0; i < 4; i++) {
				if (workers[i] <= 0 || waitpid(workers[i], &st, WNOHANG) != workers[i])
					continue;
				if (WIFEXITED(st) && WEXITSTATUS(st) == 22)
					test_fail(__FILE__, __LINE__, "worker: the daemon stopped accepting");
				workers[i] = fork();
				if (workers[i] == 0) {
					prctl(PR_SET_PDEATHSIG, SIGKILL);
					close(go[1]);
					close(rep[0]);
					fc.root = i >= 2;
					_exit(worker(dm.sock, fc, deadline, rep[1],
						     (uint64_t)time(NULL) * 40503u + i + getpid()));
				}
			}
			usleep(50000);
		}
		for (i = 0; i < 4; i++) {
			if (workers[i] > 0 && waitpid(workers[i], &st, 0) == workers[i] &&
			    WIFEXITED(st) && WEXITSTATUS(st) != 0)
				test_log("worker %d exited %d\n", i, WEXITSTATUS(st));
			workers[i] = 0;
		}
		close(rep[1]);
		rep[1] = -1;
		for (;;) {
			long s[2];

			if (read(rep[0], s, sizeof(s)) != sizeof(s))
				break;
			totals[0] += s[0];
			totals[1] += s[1];
		}
		test_log("%d s: %ld messages sent, %ld replies read\n", seconds, totals[0], totals[1]);
		/* That the fuzzer got on at all, not how fast: emulated, on
		 * a busy machine, a run of the same seconds sends a few
		 * hundred. */
		ASSERT_GE(totals[0], test_is_emulated() ? 250 : 1000, "messages sent");
	}

	/* Afterwards */
	if (!ASSERT_EQ(waitpid(dm.pid, &st, WNOHANG), 0, "the ASan daemon is alive")) {
		dm.pid = 0;
		count_asan_logs(dm.dir);
		goto out;
	}
	/* In a child: sf_attach() keeps its connection for the life of the
	 * process, which would count against the daemon's baseline. */
	if (fork() == 0) {
		struct sock_filter f[2];
		struct sock_fprog prog = { 2, f };
		struct c2e_error cerr;
		char expect[256];

		memcpy(f, bad_prog, sizeof(f));
		errno = 0;
		ASSERT_EQ(sf_attach(&prog, 0), -1, "an invalid filter after the run");
		ASSERT_EQ(errno, EINVAL, "answered EINVAL");
		c2e_validate(f, 2, &cerr);
		ASSERT_STREQ(sf_last_error(), c2e_error_str(&cerr, expect, sizeof(expect)),
			     "with the validator's message");
		_exit(0);
	}
	wait(NULL);
	{
		static char status[SF_PROTO_MAX_MSG];
		const char *pc;
		long long misses = -1;

		ASSERT_EQ(sfd_status(&dm, status), 0, "STATUS after the run");
		pc = strstr(status, "\"profile_cache\"");
		if (pc && strstr(pc, "\"misses\":"))
			misses = strtoll(strstr(pc, "\"misses\":") + 9, NULL, 10);
		test_log("%.120s\n", pc ? pc : "(no profile_cache)");
		/* That profiles reached the compile, as for messages above
		 * (emulated, a run may send too few to be sure of one). */
		if (!test_is_emulated())
			ASSERT_GE(misses, 1, "profiles compiled during the run");
	}
	ASSERT_TRUE(sfd_ps_lists(dm.sock, sentinel, sentinel_id),
		    "the sentinel is still listed with its filter id");
	/* The daemon handles the last hang-ups. The baseline may hold a
	 * client's connection (socket and pidfd) that the daemon has closed
	 * since, as idle: fewer is fine, more is a leak. */
	for (i = 0; i < 150; i++) {
		plain = sfd_count_plain_fds(dm.pid, list, sizeof(list));
		if (plain <= base_plain)
			break;
		usleep(20000);
	}
	test_log("after: %d descriptors, %d not BPF:%s\n", sfd_count_fds(dm.pid), plain, list);
	ASSERT_TRUE(plain <= base_plain,
		    "the daemon's sockets, pipes and files are back to the baseline, or fewer");
	ASSERT_EQ(count_asan_logs(dm.dir), 0, "no ASan/UBSan report while running");

	/* The sentinel is still confined. */
	close(go[1]);
	go[1] = -1;
	if (ASSERT_EQ(waitpid(sentinel, &st, 0), sentinel, "waitpid sentinel")) {
		ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
			    "the sentinel still dies by SIGKILL on getppid");
		sentinel = 0;
	}

	/* A clean stop, with leak checking at exit. */
	st = sfd_signal(&dm, SIGTERM);
	ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the ASan daemon exits 0 on SIGTERM");
	ASSERT_EQ(count_asan_logs(dm.dir), 0, "no ASan/LSan/UBSan report at exit");
out:
	for (i = 0; i < 4; i++)
		if (workers[i] > 0) {
			kill(workers[i], SIGKILL);
			waitpid(workers[i], NULL, 0);
		}
	if (sentinel > 0) {
		kill(sentinel, SIGKILL);
		waitpid(sentinel, NULL, 0);
	}
	if (victim > 0) {
		kill(victim, SIGKILL);
		waitpid(victim, NULL, 0);
	}
	for (i = 0; i < 2; i++) {
		if (go[i] >= 0)
			close(go[i]);
		if (rep[i] >= 0)
			close(rep[i]);
	}
}
