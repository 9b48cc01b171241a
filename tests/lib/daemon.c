// SPDX-License-Identifier: GPL-2.0-only
/* Private sfilterd instances for tests (daemon.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "daemon.h"
#include "harness.h"
#include "client.h"
#include "progs.h"
#include "proto.h"
#include "sfclient.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/uio.h>
#include <sys/wait.h>

static const char *tier_free[32];

void sfd_tier_independent(const char *file)
{
	size_t i;

	for (i = 0; i < sizeof(tier_free) / sizeof(tier_free[0]); i++)
		if (!tier_free[i]) {
			tier_free[i] = file;
			return;
		}
}

/* Whether this test's daemons may skip the LSM programs (see daemon.h). */
static bool tier_free_test(void)
{
	const char *file = test_current_file();
	size_t i;

	if (!test_is_emulated())
		return false;
	for (i = 0; i < sizeof(tier_free) / sizeof(tier_free[0]) && tier_free[i]; i++)
		if (!strcmp(tier_free[i], file))
			return true;
	return false;
}

/* NAME beside the runner (or $ENV), accessible with mode. */
static bool find_beside(const char *name, const char *env, int mode, char *out, size_t size)
{
	const char *e = env ? getenv(env) : NULL;
	char exe[PATH_MAX], *d;
	ssize_t n;

	if (e && *e) {
		snprintf(out, size, "%s", e);
		return access(out, mode) == 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return false;
	exe[n] = '\0';
	d = dirname(exe);
	snprintf(out, size, "%.*s/../%s", (int)(size / 2), d, name);
	if (access(out, mode) == 0)
		return true;
	snprintf(out, size, "%.*s/%s", (int)(size / 2), d, name);
	return access(out, mode) == 0;
}

bool sfd_find_bin(const char *name, const char *env, char *out, size_t size)
{
	return find_beside(name, env, X_OK, out, size);
}

bool sfd_need_bin(const char *name, const char *env, char *out, size_t size)
{
	if (sfd_find_bin(name, env, out, size))
		return true;
	test_skip("no %s beside the test runner", name);
	return false;
}

bool sfd_find_file(const char *name, const char *env, char *out, size_t size)
{
	return find_beside(name, env, R_OK, out, size);
}

bool sfd_find_test_prog(const char *name, char *out, size_t size)
{
	if (sfd_find_bin(name, NULL, out, size))
		return true;
	test_fail(__FILE__, __LINE__, "no %s beside the runner (make build/tests/%s)", name, name);
	return false;
}

int sfd_connect(const char *sock)
{
	int fd = sf_proto_connect(sock, test_is_emulated() ? 120000 : 20000, NULL, 0);

	return fd < 0 ? -1 : fd;
}

static void show_file(const char *path)
{
	char buf[4096];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	printf("    %s:\n%s\n", path, buf);
}

/* The listener a socket-activated daemon is handed (dm->activated). */
static int listener(const char *sock)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	size_t len = strlen(sock) + 1;
	int fd;

	if (len > sizeof(addr.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(addr.sun_path, sock, len);
	unlink(sock); /* a restart: the last daemon's listener is gone */
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd >= 0 && (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
			listen(fd, 16) < 0)) {
		close(fd);
		return -1;
	}
	return fd;
}

static bool launch(struct sfd *dm)
{
	int wait_ms = test_is_emulated() ? 240000 : 30000, waited, status, fd;
	const char *argv[24];
	int n = 0, lfd = -1, i;

	argv[n++] = "sfilterd";
	argv[n++] = "--socket";
	argv[n++] = dm->sock;
	argv[n++] = "--foreground";
	argv[n++] = "--log";
	argv[n++] = dm->log;
	if (dm->pin[0]) {
		argv[n++] = "--pin-dir";
		argv[n++] = dm->pin;
	} else {
		argv[n++] = "--no-pin";
	}
	for (i = 0; dm->args && dm->args[i] && i < 8; i++)
		argv[n++] = dm->args[i];
	if (tier_free_test())
		argv[n++] = "--force-tracepoint";
	argv[n] = NULL;
	if (dm->activated) {
		lfd = listener(dm->sock);
		if (lfd < 0) {
			test_fail(__FILE__, __LINE__, "listen on %s: %s", dm->sock,
				  strerror(errno));
			return false;
		}
	}
	fflush(stdout);
	dm->pid = fork();
	if (dm->pid == 0) {
		int e = open(dm->err, O_WRONLY | O_CREAT | O_APPEND, 0644);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (e >= 0) {
			dup2(e, 1);
			dup2(e, 2);
		}
		if (lfd >= 0) {
			char pid[16];

			/* dup2() onto itself would leave close-on-exec set. */
			if (lfd == 3)
				fcntl(3, F_SETFD, 0);
			else
				dup2(lfd, 3);
			snprintf(pid, sizeof(pid), "%d", getpid());
			setenv("LISTEN_PID", pid, 1);
			setenv("LISTEN_FDS", "1", 1);
		}
		for (char *const *v = dm->env; v && *v; v++)
			putenv(*v);
		execv(dm->bin, (char *const *)argv);
		_exit(127);
	}
	if (lfd >= 0)
		close(lfd); /* the daemon holds the only listener: it goes with it */
	if (!ASSERT_TRUE(dm->pid > 0, "fork sfilterd")) {
		dm->pid = 0;
		return false;
	}
	for (waited = 0; waited < wait_ms; waited += 20) {
		fd = sfd_connect(dm->sock);
		if (fd >= 0) {
			close(fd);
			setenv(SF_PROTO_SOCKET_ENV, dm->sock, 1);
			return true;
		}
		if (waitpid(dm->pid, &status, WNOHANG) == dm->pid) {
			dm->pid = 0;
			test_fail(__FILE__, __LINE__, "sfilterd exited at start-up (status 0x%x)",
				  status);
			show_file(dm->err);
			return false;
		}
		usleep(20000);
	}
	test_fail(__FILE__, __LINE__, "sfilterd did not listen on %s within %d ms",
		  dm->sock, wait_ms);
	show_file(dm->err);
	return false;
}

bool sfd_start(struct sfd *dm, bool pin)
{
	strcpy(dm->dir, "/tmp/sftest-sfd-XXXXXX");
	if (!mkdtemp(dm->dir)) {
		dm->dir[0] = '\0';
		test_fail(__FILE__, __LINE__, "mkdtemp: %s", strerror(errno));
		return false;
	}
	chmod(dm->dir, 0755); /* non-root clients reach the socket */
	snprintf(dm->sock, sizeof(dm->sock), "%s/s.sock", dm->dir);
	snprintf(dm->log, sizeof(dm->log), "%s/events.jsonl", dm->dir);
	snprintf(dm->err, sizeof(dm->err), "%s/stderr", dm->dir);
	dm->pin[0] = '\0';
	if (pin) {
		struct stat st;

		snprintf(dm->pin, sizeof(dm->pin), "/sys/fs/bpf/sfilter-test-%d", getpid());
		/* Left over by a test that could not clean up: never adopt it. */
		if (stat(dm->pin, &st) == 0) {
			char cmd[PATH_MAX + 512];

			snprintf(cmd, sizeof(cmd), "'%s' --socket %s --pin-dir %s --uninstall "
				 ">/dev/null 2>&1; rm -rf %s", dm->bin, dm->sock, dm->pin, dm->pin);
			if (system(cmd)) { /* best effort */ }
		}
	}
	return launch(dm);
}

bool sfd_start_sfilterd(struct sfd *dm, bool pin)
{
	if (!sfd_find_bin("sfilterd", "SF_SFILTERD", dm->bin, sizeof(dm->bin))) {
		test_skip("no sfilterd at ../sfilterd or ./sfilterd beside the test runner");
		return false;
	}
	return sfd_start(dm, pin);
}

bool sfd_start_for_users(struct sfd *dm, const char *const *args)
{
	if (!test_need_root("to become other users"))
		return false;
	dm->args = args;
	return sfd_start_sfilterd(dm, false);
}

bool sfd_restart(struct sfd *dm)
{
	return launch(dm);
}

int sfd_signal(struct sfd *dm, int sig)
{
	int status = -1;

	if (dm->pid <= 0)
		return -1;
	kill(dm->pid, sig);
	if (waitpid(dm->pid, &status, 0) != dm->pid)
		status = -1;
	dm->pid = 0;
	dm->exit_status = status;
	return status;
}

bool sfd_pause(struct sfd *dm)
{
	int tries = test_is_emulated() ? 3000 : 500;
	siginfo_t si;

	if (!ASSERT_OK(kill(dm->pid, SIGSTOP), "stop the daemon"))
		return false;
	/* WSTOPPED reports the stop to the parent once it has happened;
	 * WNOWAIT leaves it to be reported again. */
	while (tries--) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)dm->pid, &si, WSTOPPED | WNOHANG | WNOWAIT) == 0 &&
		    si.si_pid == dm->pid && si.si_code == CLD_STOPPED)
			return true;
		usleep(2000);
	}
	test_fail(__FILE__, __LINE__, "sfilterd (pid %d) did not stop", dm->pid);
	return false;
}

bool sfd_resume(struct sfd *dm)
{
	return ASSERT_OK(kill(dm->pid, SIGCONT), "continue the daemon");
}

bool sfd_stop(struct sfd *dm)
{
	bool exited, removed;
	int status;

	if (dm->pid <= 0)
		return true;
	status = sfd_signal(dm, SIGTERM);
	if (!ASSERT_NEQ(status, -1, "waitpid sfilterd"))
		return false;
	exited = ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			     "sfilterd exits 0 on SIGTERM");
	removed = ASSERT_EQ(access(dm->sock, F_OK), -1, "socket removed on exit");
	return exited && removed;
}

void sfd_stop_cleanup(struct sfd *dm)
{
	sfd_stop(dm);
	sfd_cleanup(dm);
}

void sfd_cleanup(struct sfd *dm)
{
	char cmd[PATH_MAX + 512];
	int i, status;

	if (dm->pid > 0) {
		kill(dm->pid, SIGTERM);
		for (i = 0; i < 500 && waitpid(dm->pid, &status, WNOHANG) == 0; i++)
			usleep(20000);
		if (i == 500) {
			kill(dm->pid, SIGKILL);
			waitpid(dm->pid, &status, 0);
		}
		dm->pid = 0;
	}
	if (dm->pin[0] && dm->bin[0]) {
		snprintf(cmd, sizeof(cmd), "'%s' --socket %s --pin-dir %s --uninstall >>%s 2>&1",
			 dm->bin, dm->sock, dm->pin, dm->dir[0] ? dm->err : "/dev/null");
		if (system(cmd) != 0)
			test_fail(__FILE__, __LINE__, "sfilterd --pin-dir %s --uninstall failed",
				  dm->pin);
		/* Whatever uninstall left (it removes what it pinned). */
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dm->pin);
		if (system(cmd)) { /* best effort */ }
		dm->pin[0] = '\0';
	}
	if (dm->dir[0]) {
		if (test_failed())
			show_file(dm->err);
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dm->dir);
		if (system(cmd)) { /* best effort */ }
		dm->dir[0] = '\0';
	}
	unsetenv(SF_PROTO_SOCKET_ENV);
}

int sfd_sweep_stale_pins(void)
{
	char bin[PATH_MAX], dir[PATH_MAX], cmd[3 * PATH_MAX + 64];
	struct dirent *e;
	int swept = 0;
	DIR *d;

	if (geteuid() != 0 || !sfd_find_bin("sfilterd", "SF_SFILTERD", bin, sizeof(bin)) ||
	    !(d = opendir("/sys/fs/bpf")))
		return 0;
	while ((e = readdir(d))) {
		const char *num = strrchr(e->d_name, '-');
		char *end;
		long pid;

		if (strncmp(e->d_name, "sfilter-test-", 13) || !num)
			continue;
		pid = strtol(num + 1, &end, 10);
		if (*end || pid <= 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(dir, sizeof(dir), "/sys/fs/bpf/%s", e->d_name);
		snprintf(cmd, sizeof(cmd), "'%s' --pin-dir '%s' --uninstall >/dev/null 2>&1; "
			 "rm -rf '%s'", bin, dir, dir);
		if (system(cmd) == 0)
			swept++;
	}
	closedir(d);
	return swept;
}

/* Runs argv in a process group of its own with in, out and err as its
 * stdin, stdout and stderr (-1: /dev/null); the wait status. */
static int run_fds(const char *const argv[], int in, int out, int err, int timeout_s)
{
	int status = -1, ms = 0;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		setpgid(0, 0);
		dup2(in >= 0 ? in : null, 0);
		dup2(out >= 0 ? out : null, 1);
		dup2(err >= 0 ? err : null, 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	if (!ASSERT_TRUE(pid > 0, "fork"))
		return -1;
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (ms >= timeout_s * 1000) {
			test_fail(__FILE__, __LINE__, "%s still running after %d s", argv[0],
				  timeout_s);
			/* SIGTERM first: a script's traps clean up. */
			kill(-pid, SIGTERM);
			usleep(2000000);
			kill(-pid, SIGKILL);
			waitpid(pid, &status, 0);
			break;
		}
		usleep(50000);
		ms += 50;
	}
	return status;
}

/* What was written to the memfd fd, into buf (cut to size); closes fd. */
static void read_back(int fd, char *buf, size_t size)
{
	size_t got = 0;
	ssize_t n;

	if (fd < 0)
		return;
	lseek(fd, 0, SEEK_SET);
	while (size && got < size - 1 && (n = read(fd, buf + got, size - 1 - got)) > 0)
		got += n;
	if (size)
		buf[got] = '\0';
	close(fd);
}

int sfd_run(const char *const argv[], bool with_stdout, int timeout_s,
	    char *out, size_t size)
{
	int fd = memfd_create("sfd_run", MFD_CLOEXEC), status;

	if (size)
		out[0] = '\0';
	if (!ASSERT_TRUE(fd >= 0, "memfd_create"))
		return -1;
	status = run_fds(argv, -1, with_stdout ? fd : -1, fd, timeout_s);
	read_back(fd, out, size);
	return status;
}

int sfd_run_io(const char *const argv[], const struct sfd_io *io, int timeout_s)
{
	int in = io->in ? memfd_create("sfd_in", MFD_CLOEXEC) : -1;
	int out = io->out_size ? memfd_create("sfd_out", MFD_CLOEXEC) : -1;
	int err = io->err_size ? memfd_create("sfd_err", MFD_CLOEXEC) : -1;
	int status = -1;

	if (ASSERT_TRUE(!(io->in && in < 0) && !(io->out_size && out < 0) &&
			!(io->err_size && err < 0), "memfd_create") &&
	    ASSERT_TRUE(!io->in || write(in, io->in, io->in_len) == (ssize_t)io->in_len,
			"stdin written")) {
		if (in >= 0)
			lseek(in, 0, SEEK_SET);
		status = run_fds(argv, in, out, err, timeout_s);
	}
	if (in >= 0)
		close(in);
	read_back(out, io->out, io->out_size);
	read_back(err, io->err, io->err_size);
	return status;
}

long long sfd_proc_stat(pid_t pid, int n)
{
	char path[64], buf[1024], *p;
	long long v = LLONG_MIN;
	int i;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "r")))
		return LLONG_MIN;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	/* Field 3 (the state) follows the parenthesis. */
	for (i = 3; p && i <= n; i++) {
		p += strspn(p + 1, " ") + 1;
		if (i == n)
			sscanf(p, "%lld", &v);
		p = strchr(p, ' ');
	}
	return v;
}

bool sfd_proc_status(pid_t pid, const char *key, char *line, size_t size)
{
	char path[64];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	while (f && !found && fgets(line, (int)size, f))
		found = !strncmp(line, key, strlen(key));
	if (f)
		fclose(f);
	if (found)
		line[strcspn(line, "\n")] = '\0';
	return found;
}

int sfd_count_fds(pid_t pid)
{
	char path[64];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

int sfd_count_plain_fds(pid_t pid, char *list, size_t size)
{
	char dir[64], path[384], target[256];
	struct dirent *e;
	int n = 0;
	size_t off = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
	if (!(d = opendir(dir)))
		return -1;
	list[0] = '\0';
	while ((e = readdir(d))) {
		ssize_t k;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		k = readlink(path, target, sizeof(target) - 1);
		if (k < 0)
			continue;
		target[k] = '\0';
		if (strstr(target, "bpf"))
			continue;
		n++;
		if (off < size)
			off += snprintf(list + off, size - off, " %s=%s", e->d_name, target);
	}
	closedir(d);
	return n;
}

int sfd_request(const char *sock, void *msg, uint16_t type, uint32_t len,
		void (*each)(void *, const struct sf_reply *, const char *), void *ctx)
{
	static char buf[SF_PROTO_MAX_MSG + 8];
	struct sf_msg_hdr *h = msg;
	struct sf_reply *r = (struct sf_reply *)buf;
	struct pollfd p;
	int fd = sfd_connect(sock), err = -1000;
	ssize_t n;

	if (fd < 0)
		return -1000 - errno;
	sf_proto_header(h, type, len, 42);
	if (sf_proto_send(fd, &(struct iovec){ msg, len }, 1, NULL, 0) < 0) {
		err = -1000 - errno;
		close(fd);
		return err;
	}
	for (;;) {
		p = (struct pollfd){ .fd = fd, .events = POLLIN };
		if (poll(&p, 1, test_is_emulated() ? 120000 : 20000) != 1)
			break;
		n = recv(fd, buf, sizeof(buf), 0);
		if (n <= 0 || sf_proto_check_reply(buf, n) != 0)
			break;
		if (err == -1000)
			err = r->error;
		if (each)
			each(ctx, r, r->text);
		if (!(r->flags & SF_REPLY_MORE))
			break;
	}
	close(fd);
	return err;
}

struct ps_find { pid_t tid; uint32_t id; bool found; };

static void ps_find_each(void *ctx, const struct sf_reply *r, const char *text)
{
	struct ps_find *f = ctx;
	char needle[32];
	const char *p = text, *end, *fl;

	(void)r;
	snprintf(needle, sizeof(needle), "\"tid\":%d,", f->tid);
	while ((p = strstr(p, needle))) {
		/* the task's object ends at its filters array's ']' */
		fl = strstr(p, "\"filters\":[");
		end = fl ? strchr(fl, ']') : NULL;
		if (fl && end) {
			if (f->id == 0) {
				f->found = end > fl + 11;
			} else {
				for (const char *q = fl + 11; q < end; ) {
					char *e2;
					unsigned long v = strtoul(q, &e2, 10);

					if (e2 == q)
						break;
					if (v == f->id)
						f->found = true;
					q = e2 + (*e2 == ',');
				}
			}
		}
		p++;
	}
}

static void keep_status(void *ctx, const struct sf_reply *r, const char *text)
{
	(void)r;
	snprintf(ctx, SF_PROTO_MAX_MSG, "%s", text);
}

int sfd_status(const struct sfd *dm, char *out)
{
	struct sf_msg_hdr h;

	out[0] = '\0';
	return sfd_request(dm->sock, &h, SF_MSG_STATUS, sizeof(h), keep_status, out);
}

long long sfd_status_drops(const char *status, unsigned int uid, const char *field)
{
	const char *by = strstr(status, "\"events_dropped_by_uid\"");
	const char *e, *end, *f;
	char key[48];

	snprintf(key, sizeof(key), "{\"uid\":%u,", uid);
	e = by ? strstr(by, key) : NULL;
	if (!e)
		return -1;
	end = strchr(e, '}');
	snprintf(key, sizeof(key), "\"%s\":", field);
	f = strstr(e, key);
	return f && (!end || f < end) ? strtoll(f + strlen(key), NULL, 10) : -1;
}

bool sfd_ps_lists(const char *sock, pid_t tid, uint32_t id)
{
	struct sf_msg_hdr h;
	struct ps_find f = { tid, id, false };

	if (sfd_request(sock, &h, SF_MSG_PS, sizeof(h), ps_find_each, &f) != 0)
		return false;
	return f.found;
}

struct ps_task { pid_t tid; char *out; size_t size; bool found; };

static void ps_task_each(void *ctx, const struct sf_reply *r, const char *text)
{
	struct ps_task *f = ctx;
	char needle[32];
	const char *p, *fl, *end;

	(void)r;
	snprintf(needle, sizeof(needle), "\"tid\":%d,", f->tid);
	p = strstr(text, needle);
	fl = p ? strstr(p, "\"filters\":[") : NULL;
	end = fl ? strchr(fl, '}') : NULL;
	if (!end || f->found)
		return;
	snprintf(f->out, f->size, "%.*s", (int)(end + 1 - p), p);
	f->found = true;
}

bool sfd_ps_task(const char *sock, pid_t tid, char *out, size_t size)
{
	struct sf_msg_hdr h;
	struct ps_task f = { tid, out, size, false };

	out[0] = '\0';
	if (sfd_request(sock, &h, SF_MSG_PS, sizeof(h), ps_task_each, &f) != 0)
		return false;
	return f.found;
}

bool sfd_error_lines(const char *err, const char *prog, const char *help)
{
	const char *nl = strchr(err, '\n');
	char hint[256];

	if (!nl || nl == err)
		return false;
	if (!nl[1])
		return true;
	snprintf(hint, sizeof(hint), "Try '%s %s' for more information.\n", prog,
		 help ? help : "--help");
	return !strcmp(nl + 1, hint);
}

bool sfd_file_has(const char *path, const char *needle)
{
	static char buf[65536];
	size_t keep = 0, nlen = strlen(needle);
	bool found = false;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || nlen >= sizeof(buf) / 2) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	/* Block by block; each keeps the last block's tail, so that a
	 * needle across two blocks is seen too. */
	while (!found && (n = read(fd, buf + keep, sizeof(buf) - 1 - keep)) > 0) {
		size_t have = keep + n;

		buf[have] = '\0';
		found = strstr(buf, needle) != NULL;
		keep = have < nlen ? have : nlen;
		memmove(buf, buf + have - keep, keep);
	}
	close(fd);
	return found;
}

int sfd_log_count(const struct sfd *dm, const char *needle)
{
	char *buf = NULL, *p;
	size_t len = 0;
	int n = 0;
	FILE *f = fopen(dm->log, "r");

	if (f && getdelim(&buf, &len, '\0', f) > 0)
		for (p = buf; (p = strstr(p, needle)); p++)
			n++;
	if (f)
		fclose(f);
	free(buf);
	return n;
}

bool sfd_log_wait(const struct sfd *dm, const char *needle)
{
	int i, polls = test_is_emulated() ? 1500 : 250;

	for (i = 0; i < polls && !sfd_file_has(dm->log, needle); i++)
		usleep(20000);
	return sfd_file_has(dm->log, needle);
}

bool sfd_attach_confines(const char *what)
{
	int st = 0;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct sock_fprog prog = { 4, (struct sock_filter *)progs_kill_getppid };

		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || sf_attach(&prog, 0) != 0) {
			printf("    sf_attach: %s\n", sf_last_error());
			_exit(10);
		}
		if (syscall(SYS_getpid) != getpid())
			_exit(11);
		syscall(SYS_getppid);
		_exit(12);
	}
	if (!ASSERT_TRUE(pid > 0, "fork") || !ASSERT_EQ(waitpid(pid, &st, 0), pid, "waitpid"))
		return false;
	test_log("%s: wait status 0x%x\n", what, st);
	return ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, what);
}
