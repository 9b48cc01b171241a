// SPDX-License-Identifier: GPL-2.0-only
/* Helpers every bench shares; see bench_util.h. */
#define _GNU_SOURCE
#include "bench_util.h"
#include "proto.h"

#include <bpf/bpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void bench_build_f300(struct sock_filter f[BENCH_F300_LEN])
{
	int i = 0, nr;

	f[i++] = BENCH_LD(0);
	for (nr = 0; nr < 300; nr++) {
		if (nr == BENCH_NR_GETPPID)
			continue;
		f[i++] = BENCH_JEQ(nr, 0, 1);
		f[i++] = BENCH_RET(BENCH_RET_ALLOW);
	}
	f[i++] = BENCH_JEQ(BENCH_NR_GETPPID, 0, 3);
	f[i++] = BENCH_LD(16);
	f[i++] = BENCH_JEQ(0, 0, 1); /* BENCH_F300_K_INDEX */
	f[i++] = BENCH_RET(BENCH_RET_ALLOW);
	f[i++] = BENCH_RET(BENCH_RET_KILL);
}

double bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int bench_round_opts_flag(int argc, char **argv, const char *what, int *rounds, long *n,
			  int *verbose, char flag, const char *flag_usage, int *flag_set)
{
	char spec[8] = "r:n:v";
	int opt;

	if (flag)
		spec[5] = flag;
	while ((opt = getopt(argc, argv, spec)) != -1) {
		if (opt == 'r') {
			*rounds = atoi(optarg);
		} else if (opt == 'n') {
			*n = atol(optarg);
		} else if (opt == 'v') {
			if (verbose)
				*verbose = 1;
		} else if (flag && opt == flag) {
			*flag_set = 1;
		} else {
			fprintf(stderr, "usage: %s [-r ROUNDS] [-n %s] [-v]%s%s\n", argv[0], what,
				flag ? " " : "", flag ? flag_usage : "");
			return -EINVAL;
		}
	}
	return 0;
}

int bench_round_opts(int argc, char **argv, const char *what, int *rounds, long *n,
		     int *verbose)
{
	return bench_round_opts_flag(argc, argv, what, rounds, n, verbose, 0, NULL, NULL);
}

bool bench_emulated(void)
{
	const char *emu = getenv("SF_EMULATED");

	return emu && *emu == '1';
}

/* ---- statistics ------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The valid samples of v, sorted, into a new array; *m their count. NULL
 * when there are none (or no memory: a figure is then missing, not wrong). */
static double *sorted_valid(const double *v, int n, int *m)
{
	double *s = malloc((n > 0 ? n : 1) * sizeof(*s));
	int i;

	*m = 0;
	if (!s)
		return NULL;
	for (i = 0; i < n; i++)
		if (v[i] > 0)
			s[(*m)++] = v[i];
	if (!*m) {
		free(s);
		return NULL;
	}
	qsort(s, *m, sizeof(*s), cmp_double);
	return s;
}

double bench_pct(const double *v, int n, double q)
{
	int m, idx;
	double *s = sorted_valid(v, n, &m), r;

	if (!s)
		return -1;
	idx = (int)(q * m + 0.999999) - 1;
	r = s[idx < 0 ? 0 : idx >= m ? m - 1 : idx];
	free(s);
	return r;
}

double bench_median(const double *v, int n)
{
	int m;
	double *s = sorted_valid(v, n, &m), r;

	if (!s)
		return -1;
	r = m & 1 ? s[m / 2] : (s[m / 2 - 1] + s[m / 2]) / 2;
	free(s);
	return r;
}

double bench_best(const double *v, int n)
{
	double b = -1;
	int i;

	for (i = 0; i < n; i++)
		if (v[i] > 0 && (b < 0 || v[i] < b))
			b = v[i];
	return b;
}

int bench_valid(const double *v, int n)
{
	int i, m = 0;

	for (i = 0; i < n; i++)
		m += v[i] > 0;
	return m;
}

/* x[i] / y[i] into a new array (-1 where either failed); NULL on no memory. */
static double *ratios(const double *x, const double *y, int n)
{
	double *q = malloc((n > 0 ? n : 1) * sizeof(*q));
	int i;

	if (q)
		for (i = 0; i < n; i++)
			q[i] = x[i] > 0 && y[i] > 0 ? x[i] / y[i] : -1;
	return q;
}

double bench_paired_p50(const double *x, const double *y, int n)
{
	double *q = ratios(x, y, n), r;

	if (!q)
		return -1;
	r = bench_pct(q, n, 0.5);
	free(q);
	return r;
}

double bench_paired_median(const double *x, const double *y, int n)
{
	double *q = ratios(x, y, n), r;

	if (!q)
		return -1;
	r = bench_median(q, n);
	free(q);
	return r;
}

double bench_paired_diff_median(const double *x, const double *y, int n)
{
	double *d = malloc((n > 0 ? n : 1) * sizeof(*d)), r = 0;
	int i, m = 0;

	if (!d)
		return 0;
	for (i = 0; i < n; i++)
		if (x[i] > 0 && y[i] > 0)
			d[m++] = x[i] - y[i];
	if (m) {
		qsort(d, m, sizeof(*d), cmp_double);
		r = m & 1 ? d[m / 2] : (d[m / 2 - 1] + d[m / 2]) / 2;
	}
	free(d);
	return r;
}

int bench_drop_rounds(const int *tainted, int rounds, double *v, int n_series, int stride)
{
	int r, s, n = 0;

	for (r = 0; r < rounds; r++)
		n += tainted[r] != 0;
	if (n == rounds)
		return 0;
	for (r = 0; r < rounds; r++)
		for (s = 0; tainted[r] && s < n_series; s++)
			v[s * stride + r] = -1;
	return n;
}

void bench_taint_warning(const int *tainted, int rounds, int dropped, const char *what)
{
	int r, n = 0;

	for (r = 0; r < rounds; r++)
		n += tainted[r] != 0;
	if (dropped)
		printf("warning: other users' raw/BTF tracepoint links were attached in %d of "
		       "%d rounds: those rounds are not counted\n", dropped, rounds);
	else if (n)
		printf("warning: other users' raw/BTF tracepoint links were attached in every "
		       "round: %s are tainted\n", what);
}

const char *bench_verdict(double v, double goal)
{
	return v < 0 ? "n/a" : v <= goal ? "met" : "missed";
}

int bench_profile(const char *prog, const char *file, const char *caps, struct sf_profile *p)
{
	struct sf_profile_opts o = { .caps = caps };
	struct sf_profile_error e;
	int err = sf_profile_compile_file(file, &o, p, &e);

	if (err)
		fprintf(stderr, "%s: %s: %s\n", prog, file, err == -EINVAL ? e.msg : strerror(-err));
	return err;
}

int bench_podman_profile(const char *prog, struct sf_profile *p)
{
	return bench_profile(prog, BENCH_PODMAN_PROFILE, BENCH_PODMAN_CAPS, p);
}

/* ---- a private sfilterd ------------------------------------------------------- */

int bench_daemon_find(struct bench_daemon *dm)
{
	static const char *const rel[] = { "../sfilterd", "sfilterd" };
	char self[PATH_MAX], *dir;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	size_t i;

	if (dm->bin[0])
		return 0;
	if (n >= 0) {
		self[n] = '\0';
		dir = dirname(self);
		for (i = 0; i < BENCH_ARRAY_SIZE(rel); i++) {
			snprintf(dm->bin, sizeof(dm->bin), "%s/%s", dir, rel[i]);
			if (access(dm->bin, X_OK) == 0)
				return 0;
		}
	}
	dm->bin[0] = '\0';
	fprintf(stderr, "%s: no sfilterd beside this binary (../sfilterd or ./sfilterd); "
		"use -d PATH\n", program_invocation_short_name);
	return -ENOENT;
}

static bool daemon_connectable(const struct bench_daemon *dm)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	bool ok;

	if (fd < 0)
		return false;
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", dm->sock);
	ok = connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0;
	close(fd);
	return ok;
}

int bench_daemon_start(struct bench_daemon *dm, double timeout_s)
{
	const char *argv[20] = { dm->bin, "--socket", dm->sock, "--foreground", "--log", "-" };
	double t0 = bench_now_ns();
	int argc = 6, i, st;

	snprintf(dm->dir, sizeof(dm->dir), "/tmp/sf-bench.XXXXXX");
	if (!mkdtemp(dm->dir))
		return -errno;
	/* mkdtemp() makes it 0700: benches that attach as other uids
	 * (verify_flood) must reach the socket. */
	if (chmod(dm->dir, 0755))
		return -errno;
	snprintf(dm->sock, sizeof(dm->sock), "%s/sfilterd.sock", dm->dir);
	snprintf(dm->log, sizeof(dm->log), "%s/sfilterd.log", dm->dir);
	setenv("SFILTER_SOCKET", dm->sock, 1);
	if (dm->pin_dir[0]) {
		argv[argc++] = "--pin-dir";
		argv[argc++] = dm->pin_dir;
	} else {
		argv[argc++] = "--no-pin";
	}
	for (i = 0; dm->args && dm->args[i] && i < 8; i++)
		argv[argc++] = dm->args[i];
	fflush(stdout);
	dm->pid = fork();
	if (dm->pid < 0)
		return -errno;
	if (dm->pid == 0) {
		int fd = open(dm->log, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execv(dm->bin, (char *const *)argv);
		_exit(127);
	}
	while ((bench_now_ns() - t0) / 1e9 < timeout_s) {
		if (waitpid(dm->pid, &st, WNOHANG) == dm->pid) {
			dm->pid = -1;
			return -ECHILD;
		}
		if (daemon_connectable(dm))
			return 0;
		usleep(10000);
	}
	return -ETIMEDOUT;
}

/* Pinned: what the daemon left in force (pins, state file), torn down. */
static void daemon_uninstall(const struct bench_daemon *dm)
{
	pid_t pid;
	int st;

	if (!dm->pin_dir[0] || access(dm->pin_dir, F_OK))
		return;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd >= 0)
			dup2(fd, 2);
		execl(dm->bin, dm->bin, "--uninstall", "--pin-dir", dm->pin_dir, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, &st, 0);
	if (pid < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fprintf(stderr, "%s: %s --uninstall --pin-dir %s failed\n",
			program_invocation_short_name, dm->bin, dm->pin_dir);
}

/* The profiles sfilter-runc and the hook kept beside the socket
 * (loader/cli/profile_cache.h): plain files, none of them a directory. */
static void remove_compiled(const char *dir)
{
	char path[sizeof(((struct bench_daemon *)0)->dir) + 16];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "%s/compiled", dir);
	if (!(d = opendir(path)))
		return;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' || (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")))
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
	rmdir(path);
}

void bench_daemon_stop(struct bench_daemon *dm)
{
	char gate[sizeof(dm->sock) + 8];
	int st;

	if (dm->pid > 0) {
		kill(dm->pid, SIGTERM);
		waitpid(dm->pid, &st, 0);
		dm->pid = -1;
	}
	daemon_uninstall(dm);
	unlink(dm->sock);
	unlink(dm->log);
	/* The gate's records, which a daemon leaves for its successor. */
	snprintf(gate, sizeof(gate), "%s.gate", dm->sock);
	unlink(gate);
	remove_compiled(dm->dir);
	rmdir(dm->dir);
}

void bench_daemon_tier(const struct bench_daemon *dm, char *out, size_t size)
{
	FILE *f = fopen(dm->log, "r");
	char line[512], *p;

	snprintf(out, size, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if ((p = strstr(line, "tier "))) {
			p += 5;
			p[strcspn(p, " ,\n")] = '\0';
			snprintf(out, size, "%s", p);
			break;
		}
	fclose(f);
}

/* ---- a seccomp agent of the bench's own ------------------------------------------ */

struct bench_agent_listener {
	struct bench_agent *a;
	struct bench_agent_listener *next;
	pthread_t thread;
	int fd;
	bool stop, done;
};

/* Only there to interrupt a listener's thread blocked in its RECV: no
 * SA_RESTART, so that the ioctl returns EINTR. */
static void agent_wake(int sig)
{
	(void)sig;
}

static void *agent_listener_loop(void *arg)
{
	struct bench_agent_listener *l = arg;
	struct seccomp_notif_sizes sizes = { 0 };
	struct seccomp_notif *n;
	struct seccomp_notif_resp *r;

	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0)
		sizes = (struct seccomp_notif_sizes){ sizeof(*n), sizeof(*r), 0 };
	n = calloc(1, sizes.seccomp_notif > sizeof(*n) ? sizes.seccomp_notif : sizeof(*n));
	r = calloc(1, sizes.seccomp_notif_resp > sizeof(*r) ? sizes.seccomp_notif_resp :
	      sizeof(*r));
	while (n && r && !__atomic_load_n(&l->stop, __ATOMIC_ACQUIRE)) {
		memset(n, 0, sizeof(*n));
		if (ioctl(l->fd, SECCOMP_IOCTL_NOTIF_RECV, n) < 0) {
			/* ENOENT: the task was interrupted or died first. */
			if (errno == EINTR || errno == ENOENT)
				continue;
			break;
		}
		memset(r, 0, sizeof(*r));
		r->id = n->id;
		if (l->a->answer)
			l->a->answer(l->a->arg, n, r);
		else
			r->error = -EPERM;
		ioctl(l->fd, SECCOMP_IOCTL_NOTIF_SEND, r);
		__atomic_add_fetch(&l->a->notified, 1, __ATOMIC_RELAXED);
	}
	free(n);
	free(r);
	__atomic_store_n(&l->done, true, __ATOMIC_RELEASE);
	return NULL;
}

/* One connection: gatehand_send()'s message (JSON, the listener by
 * SCM_RIGHTS, end of file), answered as sfilterd's agent socket would. */
static void agent_take(struct bench_agent *a, int c)
{
	static const char ok[] = "{\"error\":0,\"message\":\"held by the bench\"}\n";
	static const char no[] = "{\"error\":1,\"message\":\"no listener kept\"}\n";
	char buf[1024], cbuf[CMSG_SPACE(4 * sizeof(int))] __attribute__((aligned(8)));
	struct bench_agent_listener *l;
	int fd = -1;
	ssize_t m;

	do {
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
				     .msg_controllen = sizeof(cbuf) };
		struct cmsghdr *cm;

		m = recvmsg(c, &mh, MSG_CMSG_CLOEXEC);
		for (cm = m >= 0 ? CMSG_FIRSTHDR(&mh) : NULL; cm; cm = CMSG_NXTHDR(&mh, cm)) {
			int *fds = (int *)CMSG_DATA(cm);
			size_t i, k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
				continue;
			for (i = 0; i < k; i++) {
				if (fd < 0)
					fd = fds[i];
				else
					close(fds[i]);
			}
		}
	} while (m > 0);
	l = fd >= 0 ? calloc(1, sizeof(*l)) : NULL;
	if (l) {
		l->a = a;
		l->fd = fd;
		if (pthread_create(&l->thread, NULL, agent_listener_loop, l)) {
			free(l);
			l = NULL;
		}
	}
	if (!l) {
		if (fd >= 0)
			close(fd);
		(void)!write(c, no, sizeof(no) - 1);
		return;
	}
	pthread_mutex_lock(&a->lock);
	l->next = a->listeners;
	a->listeners = l;
	pthread_mutex_unlock(&a->lock);
	__atomic_add_fetch(&a->held, 1, __ATOMIC_RELEASE);
	(void)!write(c, ok, sizeof(ok) - 1);
}

static void *agent_accept_loop(void *arg)
{
	struct bench_agent *a = arg;
	int c;

	/* shutdown() of the socket ends accept() with EINVAL. */
	while ((c = accept4(a->fd, NULL, NULL, SOCK_CLOEXEC)) >= 0 || errno == EINTR) {
		if (c < 0)
			continue;
		/* The ready byte sfilterd's agent socket sends first, which
		 * gatehand_send() waits for before it sends. */
		(void)!send(c, (char[]){ SF_PROTO_AGENT_READY }, 1, MSG_NOSIGNAL);
		agent_take(a, c);
		close(c);
	}
	return NULL;
}

int bench_agent_start(struct bench_agent *a, const char *dir)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct sigaction sa = { .sa_handler = agent_wake };
	int err;

	a->held = a->notified = 0;
	a->listeners = NULL;
	pthread_mutex_init(&a->lock, NULL);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	snprintf(a->path, sizeof(a->path), "%s/agent.sock", dir);
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", a->path);
	a->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (a->fd < 0)
		return -errno;
	unlink(a->path);
	if (bind(a->fd, (struct sockaddr *)&addr, sizeof(addr)) || listen(a->fd, 64))
		goto fail;
	err = pthread_create(&a->thread, NULL, agent_accept_loop, a);
	if (err) {
		errno = err;
		goto fail;
	}
	return 0;
fail:
	err = -errno;
	close(a->fd);
	a->fd = -1;
	return err;
}

int bench_agent_wait(struct bench_agent *a, unsigned long n, double timeout_s)
{
	double t0 = bench_now_ns();

	while (__atomic_load_n(&a->held, __ATOMIC_ACQUIRE) < n) {
		if ((bench_now_ns() - t0) / 1e9 > timeout_s)
			return -ETIMEDOUT;
		usleep(200);
	}
	return 0;
}

void bench_agent_release(struct bench_agent *a)
{
	struct bench_agent_listener *l, *next;

	pthread_mutex_lock(&a->lock);
	l = a->listeners;
	a->listeners = NULL;
	pthread_mutex_unlock(&a->lock);
	for (; l; l = next) {
		next = l->next;
		__atomic_store_n(&l->stop, true, __ATOMIC_RELEASE);
		/* Again until it is out: a signal that came just before its
		 * ioctl blocked would be lost. */
		while (!__atomic_load_n(&l->done, __ATOMIC_ACQUIRE)) {
			pthread_kill(l->thread, SIGUSR1);
			usleep(1000);
		}
		pthread_join(l->thread, NULL);
		close(l->fd);
		free(l);
	}
}

void bench_agent_stop(struct bench_agent *a)
{
	bench_agent_release(a);
	if (a->fd < 0)
		return;
	shutdown(a->fd, SHUT_RDWR);
	pthread_join(a->thread, NULL);
	close(a->fd);
	a->fd = -1;
	unlink(a->path);
}

/* ---- Markdown ---------------------------------------------------------------------- */

void bench_md_head(const char *cols, int nleft)
{
	const char *p;
	int ncols = 1, i;

	for (p = cols; *p; p++)
		ncols += *p == '|';
	printf("| %s |\n|", cols);
	for (i = 0; i < ncols; i++)
		printf(nleft < 0 || i < nleft ? "---|" : "---:|");
	printf("\n");
}

/* ---- workers ----------------------------------------------------------------------- */

int bench_worker_start(struct bench_worker *w, const char *prog, const char *name,
		       void (*loop)(int cmd, int resp, const void *arg),
		       const void *arg)
{
	int c[2], r[2], err;

	w->prog = prog;
	w->name = name;
	w->dead = false;
	if (pipe(c))
		return -errno;
	if (pipe(r)) {
		err = -errno;
		close(c[0]);
		close(c[1]);
		return err;
	}
	/* Or the child would print the parent's buffered output again. */
	fflush(stdout);
	w->pid = fork();
	if (w->pid < 0) {
		err = -errno;
		close(c[0]);
		close(c[1]);
		close(r[0]);
		close(r[1]);
		return err;
	}
	if (w->pid == 0) {
		close(c[1]);
		close(r[0]);
		loop(c[0], r[1], arg);
		_exit(0);
	}
	close(c[0]);
	close(r[1]);
	w->cmd = c[1];
	w->resp = r[0];
	return 0;
}

int bench_worker_call(struct bench_worker *w, const void *req, size_t req_size,
		      void *resp, size_t resp_size)
{
	size_t got = 0;
	ssize_t k;
	int st;

	if (w->dead)
		return -EPIPE;
	if (write(w->cmd, req, req_size) != (ssize_t)req_size)
		goto dead;
	/* A large answer (task_lifecycle's samples) may come in pieces. */
	while (got < resp_size) {
		k = read(w->resp, (char *)resp + got, resp_size - got);
		if (k <= 0)
			goto dead;
		got += k;
	}
	return 0;
dead:
	w->dead = true;
	waitpid(w->pid, &st, 0);
	fprintf(stderr, "%s: worker %s died (%s %d)\n", w->prog, w->name,
		WIFSIGNALED(st) ? "signal" : "exit",
		WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	return -EPIPE;
}

void bench_worker_stop(struct bench_worker *w, const void *req, size_t req_size)
{
	int st;

	if (w->dead)
		return;
	if (write(w->cmd, req, req_size) < 0)
		kill(w->pid, SIGKILL);
	waitpid(w->pid, &st, 0);
}
