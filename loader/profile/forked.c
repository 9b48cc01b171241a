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
 * The child only compiles, packs and writes: malloc, json-c and
 * libseccomp, which take no lock of the caller's, so a caller with other
 * threads may fork it. Another thread's fork may copy the pipe's writing
 * end into a process that outlives the child, so the reading ends at the
 * length the child announced or at the child's exit (its pidfd), never
 * waiting for the pipe's end of file.
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

/* The child: compile, pack (the result, the error, the rules) and write. */
static void __attribute__((noreturn)) child(int fd, const char *json, size_t len,
					    const struct sf_profile_opts *opts)
{
	struct sf_profile_error err;
	struct sf_profile_rules *r = NULL;
	struct pack k = { 0 };
	int64_t e = sf_profile_rules_new(json, len, opts, &r, &err);
	size_t at = 0;
	ssize_t n;

	put_u64(&k, 0); /* the length of what follows */
	put_u64(&k, (uint64_t)e);
	put(&k, &err, sizeof(err));
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
	_exit(0);
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
	else
		snprintf(err->msg, sizeof(err->msg), "the profile's compile (a child process) "
			 "failed (exit status %d)", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return -ECHILD;
}

/* e (-errno) with what failed said in err. */
static int failed(struct sf_profile_error *err, int e, const char *what)
{
	snprintf(err->msg, sizeof(err->msg), "the profile's compile (a child process): %s: %s",
		 what, strerror(-e));
	return e;
}

/*
 * A child of a process with threads inherits the locks they held at the
 * fork: json-c's parse takes glibc's locale lock (duplocale, newlocale),
 * so a child forked while another thread of sfilterd parsed JSON waits
 * for ever (seen: one fork in ~300 with a thread making locales in a
 * loop). The child is given CHILD_MS, far above the 0.5 s of a 64 KiB
 * profile here, then killed and forked once more.
 */
#define CHILD_MS 10000

static long long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* What the child wrote, into k: 0 when all it announced came (the pipe
 * drained once its pidfd says it exited), -ETIMEDOUT past CHILD_MS, else
 * -errno. */
static int read_child(int rfd, int pidfd, struct pack *k)
{
	struct pollfd pf[2] = { { .fd = rfd, .events = POLLIN }, { .fd = pidfd, .events = POLLIN } };
	long long end = now_ms() + CHILD_MS;
	char chunk[65536];
	bool exited = false;
	ssize_t n;
	int r;

	for (;;) {
		if (k->len >= sizeof(uint64_t) &&
		    k->len - sizeof(uint64_t) >= *(uint64_t *)k->buf)
			return 0;
		n = read(rfd, chunk, sizeof(chunk));
		if (n > 0) {
			put(k, chunk, (size_t)n);
			if (k->bad)
				return -ENOMEM;
			continue;
		}
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			return n == 0 ? -EPIPE : -errno;
		if (n < 0 && errno == EINTR)
			continue;
		if (exited)
			return -EPIPE;  /* it exited, and all it wrote is read */
		r = poll(pf, 2, (int)(end > now_ms() ? end - now_ms() : 0));
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r == 0)
			return -ETIMEDOUT;
		exited = r > 0 && pf[1].revents != 0;
	}
}

/* One child: its wait status and what it wrote (k), 0 or -errno. */
static int run_child(const char *json, size_t len, const struct sf_profile_opts *opts,
		     struct pack *k, int *status, struct sf_profile_error *err)
{
	int fds[2], pidfd, e;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return failed(err, -errno, "pipe2");
	pid = fork();
	if (pid < 0) {
		e = -errno;
		close(fds[0]);
		close(fds[1]);
		return failed(err, e, "fork");
	}
	if (pid == 0) {
		close(fds[0]);
		child(fds[1], json, len, opts);
	}
	close(fds[1]);
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0 || fcntl(fds[0], F_SETFL, O_NONBLOCK) < 0)
		e = -errno;
	else
		e = read_child(fds[0], pidfd, k);
	if (e)
		kill(pid, SIGKILL);
	if (pidfd >= 0)
		close(pidfd);
	close(fds[0]);
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
	if (pidfd < 0)
		return failed(err, e, "pidfd_open");
	if (e == -ENOMEM || e == -ETIMEDOUT)
		return failed(err, e, e == -ENOMEM ? "reading its result" :
			      "no result in 10 s: killed");
	return e || !WIFEXITED(*status) || WEXITSTATUS(*status) ? died(err, *status) : 0;
}

int sf_profile_rules_new_forked(const char *json, size_t len, const struct sf_profile_opts *opts,
				struct sf_profile_rules **out, struct sf_profile_error *err)
{
	struct sf_profile_error spare;
	struct sf_profile_rules *r;
	struct pack k = { 0 };
	int status = 0, e, tries;

	*out = NULL;
	if (!err)
		err = &spare;
	memset(err, 0, sizeof(*err));
	for (tries = 0; tries < 2; tries++) {
		free(k.buf);
		k = (struct pack){ 0 };
		e = run_child(json, len, opts, &k, &status, err);
		if (e != -ETIMEDOUT)
			break;
	}
	if (e) {
		free(k.buf);
		return e;
	}
	k.at = sizeof(uint64_t);
	e = (int)(int64_t)get_u64(&k);
	get(&k, err, sizeof(*err));
	err->path[sizeof(err->path) - 1] = '\0';
	err->msg[sizeof(err->msg) - 1] = '\0';
	if (k.bad || e) {
		free(k.buf);
		return k.bad ? died(err, status) : e;
	}
	if (!(r = calloc(1, sizeof(*r)))) {
		free(k.buf);
		return -ENOMEM;
	}
	unpack_rules(&k, r);
	e = k.bad || k.at != k.len ? -EPROTO : 0;
	free(k.buf);
	if (e) {
		sf_profile_rules_close(r);
		snprintf(err->msg, sizeof(err->msg), "the profile's compile (a child process) "
			 "sent back what cannot be read");
		return e;
	}
	*out = r;
	return 0;
}
