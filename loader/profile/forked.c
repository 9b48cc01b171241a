// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * sf_profile_rules_new_forked(): sf_profile_rules_new() in a child
 * process, for a long-lived caller that compiles profiles other users
 * send. libseccomp 2.5.4 (Debian 12's) leaks inside
 * seccomp_rule_add_array() for some rule shapes, after a successful add
 * too: a rule with arguments for i386's socketcall after one for a call
 * it multiplexes leaks 96 bytes per node, and a 64 KiB profile of such
 * rules leaks ~360 KB at each compile, whatever seccomp_release() does.
 * Compiled apart, what leaks dies with the child; the caller gets the
 * filter, its warnings and the rules, packed into a pipe.
 *
 * A compile is a job (sf_profile_job__start()), stepped when its
 * descriptor (an epoll set of the child's pipe and pidfd) is readable or
 * its time is up, so that a caller with an event loop goes on serving
 * others while it runs; sf_profile_rules_new_forked() waits for one.
 *
 * The child compiles, packs and writes; or, when the caller named a
 * helper (sf_profile_set_helper(): sfilterd, which has threads, does),
 * it execs that at once, and the helper reads its input from a memfd,
 * gives up root and does the same (sf_profile_helper_main()).
 */
#define _GNU_SOURCE
#include "pf_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <linux/capability.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

struct pack {
	char *buf;
	size_t len, cap, at;
	bool bad;                   /* out of memory, or read past the end */
};

static void put(struct pack *k, const void *p, size_t n)
{
	if (k->bad)
		return;
	if (k->len + n > k->cap) {
		size_t cap = k->cap ? k->cap : 4096;
		char *b;

		while (cap < k->len + n)
			cap *= 2;
		if (!(b = realloc(k->buf, cap))) {
			k->bad = true;
			return;
		}
		k->buf = b;
		k->cap = cap;
	}
	memcpy(k->buf + k->len, p, n);
	k->len += n;
}

static void put_u64(struct pack *k, uint64_t v)
{
	put(k, &v, sizeof(v));
}

static void put_str(struct pack *k, const char *s)
{
	size_t n = strlen(s);

	put_u64(k, n);
	put(k, s, n);
}

static void get(struct pack *k, void *p, size_t n)
{
	if (k->bad || n > k->len - k->at) {
		k->bad = true;
		memset(p, 0, n);
		return;
	}
	memcpy(p, k->buf + k->at, n);
	k->at += n;
}

static uint64_t get_u64(struct pack *k)
{
	uint64_t v;

	get(k, &v, sizeof(v));
	return v;
}

/* A count of items of size each that the rest of the pack can hold. */
static size_t get_count(struct pack *k, size_t size)
{
	uint64_t n = get_u64(k);

	if (k->bad || n > (k->len - k->at) / (size ? size : 1)) {
		k->bad = true;
		return 0;
	}
	return (size_t)n;
}

static char *get_str(struct pack *k)
{
	size_t n = get_count(k, 1);
	char *s = k->bad ? NULL : malloc(n + 1);

	if (!s) {
		k->bad = true;
		return NULL;
	}
	get(k, s, n);
	s[n] = '\0';
	return s;
}

static void pack_rules(struct pack *k, const struct sf_profile_rules *r)
{
	const struct sf_profile *p = &r->p;
	const struct pf_rec *rec = &r->rec;
	size_t i;

	put_u64(k, p->len);
	put(k, p->insns, p->len * sizeof(*p->insns));
	put_u64(k, p->flags);
	put_u64(k, p->default_action);
	put_u64(k, p->actions);
	put_u64(k, p->n_rules);
	put_u64(k, p->n_gap_rules);
	put_u64(k, p->n_warnings);
	for (i = 0; i < p->n_warnings; i++)
		put_str(k, p->warnings[i]);
	put_u64(k, rec->with_default | rec->caps_cond << 1 | rec->kernel_cond << 2);
	put_u64(k, rec->n_rules);
	for (i = 0; i < rec->n_rules; i++) {
		const struct pf_rule *u = &rec->rules[i];

		put_u64(k, u->entry);
		put_u64(k, u->act);
		put_u64(k, u->as_default);
		put_str(k, u->name);
		put_str(k, u->path);
		put_u64(k, u->n);
		put(k, u->conds, u->n * sizeof(*u->conds));
	}
	put_u64(k, rec->n_arches);
	for (i = 0; i < rec->n_arches; i++) {
		put_str(k, rec->arches[i]);
		put_u64(k, rec->arch_tokens[i]);
	}
}

static void unpack_rules(struct pack *k, struct sf_profile_rules *r)
{
	struct sf_profile *p = &r->p;
	struct pf_rec *rec = &r->rec;
	uint64_t bits;
	size_t i;

	p->len = get_count(k, sizeof(*p->insns));
	if (!k->bad && p->len && !(p->insns = malloc(p->len * sizeof(*p->insns))))
		k->bad = true;
	if (p->insns)
		get(k, p->insns, p->len * sizeof(*p->insns));
	p->flags = (unsigned int)get_u64(k);
	p->default_action = (uint32_t)get_u64(k);
	p->actions = (unsigned int)get_u64(k);
	p->n_rules = (unsigned int)get_u64(k);
	p->n_gap_rules = (unsigned int)get_u64(k);
	i = get_count(k, sizeof(uint64_t));
	if (i && !k->bad && !(p->warnings = calloc(i, sizeof(*p->warnings))))
		k->bad = true;
	for (; p->warnings && p->n_warnings < i && !k->bad; p->n_warnings++)
		p->warnings[p->n_warnings] = get_str(k);
	bits = get_u64(k);
	rec->with_default = bits & 1;
	rec->caps_cond = bits & 2;
	rec->kernel_cond = bits & 4;
	i = get_count(k, 6 * sizeof(uint64_t));
	if (i && !k->bad && !(rec->rules = calloc(i, sizeof(*rec->rules))))
		k->bad = true;
	for (; rec->rules && rec->n_rules < i && !k->bad; rec->n_rules++) {
		struct pf_rule *u = &rec->rules[rec->n_rules];

		u->entry = (size_t)get_u64(k);
		u->act = (uint32_t)get_u64(k);
		u->as_default = get_u64(k);
		u->name = get_str(k);
		u->path = get_str(k);
		u->n = get_count(k, sizeof(*u->conds));
		if (u->n && !k->bad && !(u->conds = calloc(u->n, sizeof(*u->conds))))
			k->bad = true;
		if (u->conds)
			get(k, u->conds, u->n * sizeof(*u->conds));
	}
	i = get_count(k, 2 * sizeof(uint64_t));
	if (i && !k->bad && (!(rec->arches = calloc(i, sizeof(*rec->arches))) ||
			     !(rec->arch_tokens = calloc(i, sizeof(*rec->arch_tokens)))))
		k->bad = true;
	for (; rec->arches && rec->arch_tokens && rec->n_arches < i && !k->bad; rec->n_arches++) {
		rec->arches[rec->n_arches] = get_str(k);
		rec->arch_tokens[rec->n_arches] = (uint32_t)get_u64(k);
	}
	/* A string get_str() could not make is a hole the frees skip. */
	for (i = 0; i < p->n_warnings; i++)
		k->bad |= !p->warnings[i];
	for (i = 0; i < rec->n_rules; i++)
		k->bad |= !rec->rules[i].name || !rec->rules[i].path;
	for (i = 0; i < rec->n_arches; i++)
		k->bad |= !rec->arches[i];
}

static int failed(struct sf_profile_error *err, int e, const char *what);

/* The result (e, err and r's rules) packed and written on fd; the
 * process ends. */
static void __attribute__((noreturn)) send_result(int fd, int64_t e,
						  const struct sf_profile_error *err,
						  const struct sf_profile_rules *r)
{
	struct pack k = { 0 };
	size_t at = 0;
	ssize_t n;

	put_u64(&k, 0); /* the length of what follows */
	put_u64(&k, (uint64_t)e);
	put(&k, err, sizeof(*err));
	if (r)
		pack_rules(&k, r);
	if (k.bad)
		_exit(3);
	*(uint64_t *)k.buf = k.len - sizeof(uint64_t);
	while (at < k.len) {
		n = write(fd, k.buf + at, k.len - at);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(4);
		at += (size_t)n;
	}
	/* _exit: what libseccomp leaked is the kernel's to free, and no
	 * leak checker of a sanitized build reports it. */
	_exit(0);
}

/* The child: compile, pack (the result, the error, the rules) and write. */
static void __attribute__((noreturn)) child(int fd, const char *json, size_t len,
					    const struct sf_profile_opts *opts)
{
	struct sf_profile_error err;
	struct sf_profile_rules *r = NULL;
	int64_t e = sf_profile_rules_new(json, len, opts, &r, &err);

	send_result(fd, e, &err, r);
}

/*
 * The helper: a program the child execs at once, so that it starts as a
 * process of one thread whatever the caller's threads held at the fork
 * (only dup2() and execve() run between the two), with none of the
 * caller's memory or descriptors. It reads its input (the options and the
 * text, packed) from a sealed memfd on fd 0, gives up root's identity,
 * and writes its result on fd 1 as the child above does.
 */
static char *helper_argv[3];

int sf_profile_set_helper(const char *path, const char *arg)
{
	char *p = path ? strdup(path) : NULL, *a = arg ? strdup(arg) : NULL;

	if ((path && !p) || (arg && !a)) {
		free(p);
		free(a);
		return -ENOMEM;
	}
	free(helper_argv[0]);
	free(helper_argv[1]);
	helper_argv[0] = p;
	helper_argv[1] = a;
	return 0;
}

/* The input, packed into a memfd at its start: the fd, or -errno. */
static int pack_input(const char *json, size_t len, const struct sf_profile_opts *opts)
{
	struct pack k = { 0 };
	size_t at = 0;
	ssize_t n;
	int fd, e = 0;

	put_u64(&k, (uint64_t)opts->lenient | (uint64_t)opts->gate << 1 |
		(uint64_t)!!opts->caps << 2 | (uint64_t)!!opts->kernel << 3);
	put_str(&k, opts->caps ? opts->caps : "");
	put_str(&k, opts->kernel ? opts->kernel : "");
	put_u64(&k, len);
	put(&k, json, len);
	if (k.bad)
		return -ENOMEM;
	fd = memfd_create("sf-profile-input", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		e = -errno;
	while (!e && at < k.len) {
		n = write(fd, k.buf + at, k.len - at);
		if (n > 0)
			at += (size_t)n;
		else if (n == 0 || errno != EINTR)
			e = n ? -errno : -EIO;
	}
	if (!e && (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE |
			 F_SEAL_SEAL) < 0 || lseek(fd, 0, SEEK_SET) < 0))
		e = -errno;
	free(k.buf);
	if (e && fd >= 0)
		close(fd);
	return e ? e : fd;
}

/* Root's identity given up: nobody's uid and gid, no groups, no
 * capabilities, no gaining privileges back, not dumpable; and a lower CPU
 * priority. 0 or -errno. */
#define HELPER_NICE 10
#define HELPER_ID   65534 /* nobody, nogroup */

static int drop_privileges(void)
{
	/* Below the caller's priority: its other work goes first. */
	if (setpriority(PRIO_PROCESS, 0, getpriority(PRIO_PROCESS, 0) + HELPER_NICE) < 0)
		return -errno;
	if (geteuid() == 0 &&
	    (setgroups(0, NULL) < 0 || setresgid(HELPER_ID, HELPER_ID, HELPER_ID) < 0 ||
	     setresuid(HELPER_ID, HELPER_ID, HELPER_ID) < 0))
		return -errno;
	/* Capabilities too, for a caller that is not root but holds some
	 * (ambient ones survive the exec). */
	if (syscall(SYS_capset, &(struct __user_cap_header_struct){
			    .version = _LINUX_CAPABILITY_VERSION_3 },
		    (struct __user_cap_data_struct[2]){ { 0 } }) < 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    /* Other processes of nobody's may signal it, never trace it or
	     * read its memory. */
	    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return -errno;
	return 0;
}

int sf_profile_helper_main(void)
{
	struct sf_profile_opts opts = { 0 };
	struct pack k = { 0 };
	struct stat st;
	char *caps = NULL, *kernel = NULL, *json = NULL;
	uint64_t bits;
	size_t len = 0;
	int e;

	if (fstat(STDIN_FILENO, &st) < 0 || st.st_size <= 0 ||
	    !(k.buf = malloc((size_t)st.st_size)) ||
	    pread(STDIN_FILENO, k.buf, (size_t)st.st_size, 0) != st.st_size)
		return 2;
	k.len = k.cap = (size_t)st.st_size;
	bits = get_u64(&k);
	caps = get_str(&k);
	kernel = get_str(&k);
	len = get_count(&k, 1);
	if (!k.bad && (json = malloc(len ? len : 1)))
		get(&k, json, len);
	if (k.bad || !json || k.at != k.len)
		return 2;
	opts.lenient = bits & 1;
	opts.gate = !!(bits & 2);
	opts.caps = bits & 4 ? caps : NULL;
	opts.kernel = bits & 8 ? kernel : NULL;
	close_range(3, ~0U, 0);
	if ((e = drop_privileges()) < 0) {
		struct sf_profile_error err = { 0 };

		failed(&err, e, "giving up root's identity");
		send_result(STDOUT_FILENO, e, &err, NULL);
	}
	child(STDOUT_FILENO, json, len, &opts);
}

static int died(struct sf_profile_error *err, int status)
{
	memset(err, 0, sizeof(*err));
	if (WIFEXITED(status) && !WEXITSTATUS(status))
		snprintf(err->msg, sizeof(err->msg), "the profile's compile (a child process) "
			 "ended before it sent its result");
	else if (WIFSIGNALED(status))
		snprintf(err->msg, sizeof(err->msg), "the profile's compile (a child process) "
			 "was killed by signal %d", WTERMSIG(status));
	else if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		snprintf(err->msg, sizeof(err->msg), "the profile's compile: its helper %s "
			 "could not be run", helper_argv[0] ? helper_argv[0] : "");
	else
		snprintf(err->msg, sizeof(err->msg), "the profile's compile (a child process) "
			 "failed (exit status %d)", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return -ECHILD;
}

/* e (-errno) with what failed said in err. */
static int failed(struct sf_profile_error *err, int e, const char *what)
{
	memset(err, 0, sizeof(*err));
	snprintf(err->msg, sizeof(err->msg), "the profile's compile (a child process): %s: %s",
		 what, strerror(-e));
	return e;
}

/*
 * A child of a process with threads inherits the locks they held at the
 * fork: json-c's parse takes glibc's locale lock (duplocale, newlocale),
 * so a child that compiles as forked while another thread of the caller
 * parsed JSON waits for ever (seen: one fork in ~300 with a thread making
 * locales in a loop); a helper (sf_profile_set_helper()) starts clean.
 * Whatever holds a child up, it is given CHILD_MS, far above the 0.5 s of
 * a 64 KiB profile here, then killed and started once more.
 */
#define CHILD_MS   10000
#define CHILD_RUNS 2

static long long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

struct sf_profile_job {
	char *json;                 /* the caller's, copied: a second run needs it */
	size_t len;
	struct sf_profile_opts opts;
	char *caps, *kernel;        /* opts' strings, copied */
	int epfd;                   /* the caller's: readable when a step has work */
	pid_t pid;                  /* the running child, or 0 */
	int rfd, pidfd;
	int runs;
	long long deadline;
	struct pack k;
};

/*
 * The running child killed, reaped, and its descriptors out of the epoll
 * set and closed: its wait status (its own when it had exited: a zombie
 * takes no signal). Always killed, never waited for as it is: a child
 * that has sent its whole result may still be stopped before its exit by
 * anyone of its uid (the helper's is nobody's), and a wait for it would
 * hold the caller for as long as they liked. Signalled through its pidfd
 * where there is one, so that a caller that reaps its children itself
 * (SIGCHLD ignored) never signals a process that took the pid.
 */
static int reap(struct sf_profile_job *j)
{
	int status = 0;

	if (!j->pid)
		return 0;
	if (j->pidfd >= 0) {
		syscall(SYS_pidfd_send_signal, j->pidfd, SIGKILL, NULL, 0); /* ESRCH: exited */
		epoll_ctl(j->epfd, EPOLL_CTL_DEL, j->pidfd, NULL);
		close(j->pidfd);
	} else {
		kill(j->pid, SIGKILL);
	}
	if (j->rfd >= 0) {
		epoll_ctl(j->epfd, EPOLL_CTL_DEL, j->rfd, NULL);
		close(j->rfd);
	}
	while (waitpid(j->pid, &status, 0) < 0 && errno == EINTR)
		;
	j->pid = 0;
	j->rfd = j->pidfd = -1;
	return status;
}

/* A child forked for j, its pipe and pidfd in j's epoll set: 0 or -errno
 * (said in err). With a helper, the child execs it on its input. */
static int spawn(struct sf_profile_job *j, struct sf_profile_error *err)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int fds[2], in = -1, e;
	pid_t pid;

	free(j->k.buf);
	j->k = (struct pack){ 0 };
	if (helper_argv[0] && (in = pack_input(j->json, j->len, &j->opts)) < 0)
		return failed(err, in, "its input");
	if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0) {
		e = -errno;
		if (in >= 0)
			close(in);
		return failed(err, e, "pipe2");
	}
	pid = fork();
	if (pid < 0) {
		e = -errno;
		if (in >= 0)
			close(in);
		close(fds[0]);
		close(fds[1]);
		return failed(err, e, "fork");
	}
	if (pid == 0 && in >= 0) {
		/* Async-signal-safe calls only, up to the exec: above 2
		 * first, so that neither lands on the other's number. */
		int a = fcntl(in, F_DUPFD_CLOEXEC, 3), b = fcntl(fds[1], F_DUPFD_CLOEXEC, 3);

		if (a < 0 || b < 0 || dup2(a, 0) < 0 || dup2(b, 1) < 0 || fcntl(1, F_SETFL, 0) < 0)
			_exit(126);
		execve(helper_argv[0], helper_argv, environ);
		_exit(127);
	}
	if (pid == 0) {
		close(fds[0]);
		/* The pipe blocks in the child: it has nothing else to do. */
		fcntl(fds[1], F_SETFL, 0);
		child(fds[1], j->json, j->len, &j->opts);
	}
	if (in >= 0)
		close(in);
	close(fds[1]);
	j->pid = pid;
	j->rfd = fds[0];
	j->runs++;
	j->deadline = now_ms() + CHILD_MS;
	j->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (j->pidfd < 0) {
		e = -errno;
		reap(j);
		return failed(err, e, "pidfd_open");
	}
	if (epoll_ctl(j->epfd, EPOLL_CTL_ADD, j->rfd, &ev) < 0 ||
	    epoll_ctl(j->epfd, EPOLL_CTL_ADD, j->pidfd, &ev) < 0) {
		e = -errno;
		reap(j);
		return failed(err, e, "epoll_ctl");
	}
	return 0;
}

/* The caps of the task opts name (caps_pid, 0: the calling thread), as
 * a mask in j's options, taken now: a helper's task is not the caller's.
 * 0 or -EINVAL, said as the compile says it. */
static int caps_of(struct sf_profile_job *j, struct sf_profile_error *err)
{
	uint64_t caps;
	int r = sf_profile_task_caps(j->opts.caps_pid, &caps);

	if (r < 0) {
		memset(err, 0, sizeof(*err));
		snprintf(err->msg, sizeof(err->msg), "capget(%d): %s", (int)j->opts.caps_pid,
			 strerror(-r));
		return -EINVAL;
	}
	if (asprintf(&j->caps, "0x%llx", (unsigned long long)caps) < 0) {
		j->caps = NULL;
		return failed(err, -ENOMEM, "its state");
	}
	j->opts.caps = j->caps;
	return 0;
}

int sf_profile_job__start(const char *json, size_t len, const struct sf_profile_opts *opts,
			  struct sf_profile_job **out, struct sf_profile_error *err)
{
	struct sf_profile_error spare;
	struct sf_profile_job *j;
	int e;

	*out = NULL;
	if (!err)
		err = &spare;
	memset(err, 0, sizeof(*err));
	if (!(j = calloc(1, sizeof(*j))))
		return failed(err, -ENOMEM, "its state");
	j->rfd = j->pidfd = -1;
	j->opts = opts ? *opts : (struct sf_profile_opts){ 0 };
	j->json = malloc(len ? len : 1);
	j->caps = opts && opts->caps ? strdup(opts->caps) : NULL;
	j->kernel = opts && opts->kernel ? strdup(opts->kernel) : NULL;
	j->opts.caps = j->caps;
	j->opts.kernel = j->kernel;
	j->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (!j->json || (opts && opts->caps && !j->caps) || (opts && opts->kernel && !j->kernel))
		e = failed(err, -ENOMEM, "its state");
	else if (!j->caps && (e = caps_of(j, err)) < 0)
		;
	else if (j->epfd < 0)
		e = failed(err, -errno, "epoll_create1");
	else {
		memcpy(j->json, json, len);
		j->len = len;
		e = spawn(j, err);
	}
	if (e) {
		sf_profile_job__free(j);
		return e;
	}
	*out = j;
	return 0;
}

int sf_profile_job__fd(const struct sf_profile_job *j)
{
	return j->epfd;
}

int sf_profile_job__timeout(const struct sf_profile_job *j)
{
	long long left = j->deadline - now_ms();

	return left < 0 ? 0 : left > INT32_MAX ? INT32_MAX : (int)left;
}

/* Whether all the child announced is in k. */
static bool whole(const struct pack *k)
{
	return k->len >= sizeof(uint64_t) && k->len - sizeof(uint64_t) >= *(uint64_t *)k->buf;
}

/* What the pipe holds, into k: 0 (drained, or all announced came), or
 * -errno (-EPIPE: its end, which the child's exit brings). */
static int drain(struct sf_profile_job *j)
{
	char chunk[65536];
	ssize_t n;

	while (!whole(&j->k)) {
		n = read(j->rfd, chunk, sizeof(chunk));
		if (n > 0) {
			put(&j->k, chunk, (size_t)n);
			if (j->k.bad)
				return -ENOMEM;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		return n == 0 ? -EPIPE : -errno;
	}
	return 0;
}

/* The child's whole result, unpacked from k (what became of the child
 * after it does not matter): 0 with *out, or the compile's error, or
 * -errno. */
static int unpack(struct pack *k, struct sf_profile_rules **out, struct sf_profile_error *err)
{
	struct sf_profile_rules *r = NULL;
	int e;

	k->at = sizeof(uint64_t);
	e = (int)(int64_t)get_u64(k);
	get(k, err, sizeof(*err));
	err->path[sizeof(err->path) - 1] = '\0';
	err->msg[sizeof(err->msg) - 1] = '\0';
	if (!k->bad && e)
		return e;
	if (!k->bad && !(r = calloc(1, sizeof(*r))))
		return failed(err, -ENOMEM, "reading its result");
	if (r)
		unpack_rules(k, r);
	if (k->bad || k->at != k->len) {
		sf_profile_rules_close(r);
		memset(err, 0, sizeof(*err));
		snprintf(err->msg, sizeof(err->msg), "the profile's compile (a child process) "
			 "sent back what cannot be read");
		return -EPROTO;
	}
	*out = r;
	return 0;
}

/*
 * Another thread's fork may copy the pipe's writing end into a process
 * that outlives the child, so the reading ends at the length the child
 * announced or at the child's exit (its pidfd), never waiting for the
 * pipe's end of file. The pidfd is looked at before the pipe is drained:
 * what a child wrote before it exited is in the pipe by then.
 */
int sf_profile_job__step(struct sf_profile_job *j, struct sf_profile_rules **out,
			 struct sf_profile_error *err)
{
	struct pollfd pf;
	struct sf_profile_error spare;
	bool exited;
	int e;

	*out = NULL;
	if (!err)
		err = &spare;
	if (!j->pid)
		return failed(err, -ECHILD, "no child runs");
	/* A pidfd stays readable once its process has exited. */
	pf = (struct pollfd){ .fd = j->pidfd, .events = POLLIN };
	exited = poll(&pf, 1, 0) > 0;
	e = drain(j);
	if (!e && whole(&j->k)) {
		reap(j);
		memset(err, 0, sizeof(*err));
		return unpack(&j->k, out, err);
	}
	if (e == -ENOMEM || (e && e != -EPIPE)) {
		reap(j);
		return failed(err, e, "reading its result");
	}
	if (e == -EPIPE || exited)
		return died(err, reap(j));
	if (sf_profile_job__timeout(j) > 0)
		return -EINPROGRESS;
	reap(j);
	if (j->runs < CHILD_RUNS)
		return (e = spawn(j, err)) ? e : -EINPROGRESS;
	return failed(err, -ETIMEDOUT, "no result in 10 s: killed");
}

void sf_profile_job__free(struct sf_profile_job *j)
{
	if (!j)
		return;
	reap(j);
	if (j->epfd >= 0)
		close(j->epfd);
	free(j->k.buf);
	free(j->json);
	free(j->caps);
	free(j->kernel);
	free(j);
}

int sf_profile_rules_new_forked(const char *json, size_t len, const struct sf_profile_opts *opts,
				struct sf_profile_rules **out, struct sf_profile_error *err)
{
	struct sf_profile_error spare;
	struct sf_profile_job *j;
	struct pollfd pf;
	int e;

	if (!err)
		err = &spare;
	if ((e = sf_profile_job__start(json, len, opts, &j, err)) < 0) {
		*out = NULL;
		return e;
	}
	pf = (struct pollfd){ .fd = sf_profile_job__fd(j), .events = POLLIN };
	while ((e = sf_profile_job__step(j, out, err)) == -EINPROGRESS)
		if (poll(&pf, 1, sf_profile_job__timeout(j)) < 0 && errno != EINTR) {
			e = failed(err, -errno, "poll");
			break;
		}
	sf_profile_job__free(j);
	return e;
}
