// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probes of the real kernel seccomp (see kseccomp.h).
 *
 * Kernel facts this file relies on (kernel/seccomp.c, the same in 6.1 and
 * 6.18):
 *  - seccomp_set_mode_filter() calls seccomp_prepare_user_filter() (length,
 *    bpf_check_classic(), seccomp_check_filter(), conversion) before it
 *    takes any lock, and only then seccomp_attach_filter(), whose first
 *    check is the chain budget: new->prog->len plus, for every attached
 *    filter, prog->len + 4 must not exceed MAX_INSNS_PER_PATH (32768),
 *    else -ENOMEM. prog->len is the converted (eBPF) length: 3 prologue
 *    insns plus 2 per RET K, so n x RET ALLOW costs 3 + 2n.
 *  - populate_seccomp_data(): instruction_pointer = KSTK_EIP(task), the
 *    user IP after the syscall instruction; seccomp_init_siginfo() puts the
 *    same value in si_call_addr, the filter's data in si_errno, sd->nr in
 *    si_syscall and the audit arch in si_arch.
 *
 * What the kernel is expected to do with each call, and the calls that
 * may run at all, are in kseccomp_expect.c.
 */
#define _GNU_SOURCE
#include "kseccomp.h"
#include "sockfilter.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <linux/audit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_INSNS_PER_PATH 32768
#define MAX_PROBE_LEN      65535  /* sock_fprog.len is an unsigned short */

/* ---- the syscall stubs ---------------------------------------------------
 * Top-level asm so each label exists exactly once: the address right after
 * the syscall instruction is what the filter sees as instruction_pointer.
 * Both take (long nr, const uint64_t args[6]).
 */
__asm__(
	".text\n"
	".globl ksec_stub_syscall64\n"
	".type ksec_stub_syscall64, @function\n"
	"ksec_stub_syscall64:\n"
	"	movq %rdi, %rax\n"
	"	movq %rsi, %r11\n"
	"	movq 0(%r11), %rdi\n"
	"	movq 8(%r11), %rsi\n"
	"	movq 16(%r11), %rdx\n"
	"	movq 24(%r11), %r10\n"
	"	movq 32(%r11), %r8\n"
	"	movq 40(%r11), %r9\n"
	"	syscall\n"
	".globl ksec_ip_syscall64\n"
	"ksec_ip_syscall64:\n"
	"	ret\n"
	".size ksec_stub_syscall64, .-ksec_stub_syscall64\n"
	"\n"
	".globl ksec_stub_int80\n"
	".type ksec_stub_int80, @function\n"
	"ksec_stub_int80:\n"
	"	pushq %rbx\n"
	"	pushq %rbp\n"
	"	movq %rdi, %rax\n"
	"	movq %rsi, %r11\n"
	/* 32-bit moves zero the upper halves: the compat entry then sees
	 * (and the filter gets) exactly the 32-bit values. */
	"	movl 0(%r11), %ebx\n"
	"	movl 8(%r11), %ecx\n"
	"	movl 16(%r11), %edx\n"
	"	movl 24(%r11), %esi\n"
	"	movl 32(%r11), %edi\n"
	"	movl 40(%r11), %ebp\n"
	"	int $0x80\n"
	".globl ksec_ip_int80\n"
	"ksec_ip_int80:\n"
	"	movslq %eax, %rax\n"
	"	popq %rbp\n"
	"	popq %rbx\n"
	"	ret\n"
	".size ksec_stub_int80, .-ksec_stub_int80\n"
	".previous\n");

extern const char ksec_ip_syscall64[], ksec_ip_int80[];

uint64_t ksec_ip(enum ksec_abi abi)
{
	return abi == KSEC_ABI_I386 ? (uint64_t)(uintptr_t)ksec_ip_int80
				    : (uint64_t)(uintptr_t)ksec_ip_syscall64;
}

void ksec_call_data(const struct ksec_call *c, struct seccomp_data *d)
{
	int i;

	memset(d, 0, sizeof(*d));
	d->nr = (int)c->nr;
	d->arch = c->abi == KSEC_ABI_I386 ? AUDIT_ARCH_I386 : AUDIT_ARCH_X86_64;
	d->instruction_pointer = ksec_ip(c->abi);
	for (i = 0; i < 6; i++)
		d->args[i] = c->abi == KSEC_ABI_I386 ? (uint32_t)c->args[i]
						     : c->args[i];
}

static long issue(const struct ksec_call *c)
{
	if (c->abi == KSEC_ABI_I386)
		return ksec_stub_int80(c->nr, c->args);
	return ksec_stub_syscall64(c->nr, c->args);
}

static void exit_now(int code)
{
	uint64_t args[6] = { (uint64_t)code };

	/* exit_group through the stub; a filter may refuse it, so fall
	 * back to a fault, which needs no system call at all. */
	ksec_stub_syscall64(231, args);
	__builtin_trap();
}

static int emulated(void)
{
	const char *e = getenv("SF_EMULATED");

	return e && *e == '1';
}

static int install(const struct sock_filter *insns, size_t len)
{
	struct sock_fprog prog = {
		.len = (unsigned short)len,
		.filter = (struct sock_filter *)insns,
	};

	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) ? errno : 0;
}

/* ---- validity ------------------------------------------------------------ */

struct vshared {
	uint32_t len;
	struct sock_filter insns[MAX_PROBE_LEN];
};

static struct {
	pid_t pid;
	int req, resp;          /* parent's ends of the two pipes */
	struct vshared *sh;
	int last_errno;
	int filters, budget;
} v = { .pid = -1, .req = -1, .resp = -1 };

static int write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -EPIPE;
		p += w;
		n -= w;
	}
	return 0;
}

static int read_all(int fd, void *buf, size_t n)
{
	char *p = buf;

	while (n) {
		ssize_t r = read(fd, p, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -EPIPE;
		p += r;
		n -= r;
	}
	return 0;
}

/* n x RET ALLOW: 3 + 2n converted instructions. */
static int install_allow(size_t n)
{
	static struct sock_filter allow[4096];
	size_t i;

	for (i = 0; i < n; i++)
		allow[i] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	return install(allow, n);
}

/*
 * Fills the chain so that attached + 4 per filter lies in
 * [32768 - 4, 32768 + 4]: then even the shortest valid filter (a single
 * RET, 5 converted insns) no longer fits. The arithmetic is checked rather
 * than trusted: an attach that the formula says fits but fails shrinks the
 * next try, and single-RET filters top the chain up until one is refused.
 */
static int fill_budget(int *filters, int *budget)
{
	int used = 0, n, err, guard;

	*filters = 0;
	for (guard = 0; guard < 16; guard++) {
		n = (MAX_INSNS_PER_PATH - used - 3) / 2;
		if (n > 4096)
			n = 4096;
		if (n < 1)
			break;
		err = install_allow(n);
		while (err == ENOMEM && n > 1)
			err = install_allow(--n);
		if (err == ENOMEM)
			break;
		if (err)
			return -err;
		used += 3 + 2 * n + 4;
		(*filters)++;
	}
	for (guard = 0; guard < 8192; guard++) {
		err = install_allow(1);
		if (err == ENOMEM)
			break;
		if (err)
			return -err;
		used += 5 + 4;
		(*filters)++;
	}
	*budget = used;
	return err == ENOMEM ? 0 : -EPROTO;
}

static void validator_child(int req, int resp, struct vshared *sh)
{
	static const struct sock_filter known_valid[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 39, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	static const struct sock_filter known_invalid[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),
		BPF_STMT(BPF_JMP | BPF_JA, 1), /* lands past the end */
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	int status[3] = { 0, 0, 0 }, err;
	char c;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		status[0] = -errno;
		goto report;
	}
	status[0] = fill_budget(&status[1], &status[2]);
	if (status[0])
		goto report;
	/* The trick, checked: valid -> ENOMEM, invalid -> EINVAL. */
	err = install(known_valid, 4);
	if (err != ENOMEM) {
		status[0] = err ? -EPROTO : -EEXIST;
		goto report;
	}
	err = install(known_invalid, 3);
	if (err != EINVAL)
		status[0] = -EPROTO;
report:
	if (write_all(resp, status, sizeof(status)) || status[0])
		_exit(1);
	for (;;) {
		if (read_all(req, &c, 1))
			_exit(0);
		err = install(sh->insns, sh->len);
		if (write_all(resp, &err, sizeof(err)) || err == 0)
			_exit(err ? 1 : 2); /* 0: a filter got installed */
	}
}

int ksec_validator_start(void)
{
	int to_child[2], to_parent[2], status[3];
	pid_t pid;

	if (v.pid > 0)
		return 0;
	if (!v.sh) {
		v.sh = mmap(NULL, sizeof(*v.sh), PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (v.sh == MAP_FAILED) {
			v.sh = NULL;
			return -errno;
		}
	}
	if (pipe2(to_child, O_CLOEXEC))
		return -errno;
	if (pipe2(to_parent, O_CLOEXEC)) {
		close(to_child[0]);
		close(to_child[1]);
		return -errno;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		close(to_child[1]);
		close(to_parent[0]);
		validator_child(to_child[0], to_parent[1], v.sh);
		_exit(0);
	}
	close(to_child[0]);
	close(to_parent[1]);
	v.pid = pid;
	v.req = to_child[1];
	v.resp = to_parent[0];
	if (read_all(v.resp, status, sizeof(status)) || status[0]) {
		int err = status[0] ? status[0] : -EPIPE;

		ksec_validator_stop();
		return err;
	}
	v.filters = status[1];
	v.budget = status[2];
	return 0;
}

void ksec_validator_stop(void)
{
	if (v.pid > 0) {
		close(v.req);
		close(v.resp);
		kill(v.pid, SIGKILL);
		waitpid(v.pid, NULL, 0);
	}
	v.pid = -1;
	v.req = v.resp = -1;
}

void ksec_validator_fill(int *filters, int *budget)
{
	*filters = v.filters;
	*budget = v.budget;
}

int ksec_validator_last_errno(void)
{
	return v.last_errno;
}

int ksec_validates(const struct sock_filter *insns, size_t len)
{
	int err, answer;
	char c = 'v';

	if (len > MAX_PROBE_LEN)
		return -E2BIG;
	err = ksec_validator_start();
	if (err)
		return err;
	v.sh->len = len;
	memcpy(v.sh->insns, insns, len * sizeof(*insns));
	if (write_all(v.req, &c, 1) || read_all(v.resp, &answer, sizeof(answer))) {
		ksec_validator_stop();
		return -EPIPE;
	}
	v.last_errno = answer;
	if (answer == ENOMEM)
		return 1;
	if (answer == EINVAL)
		return 0;
	ksec_validator_stop(); /* it exits after an unexpected answer */
	return -EPROTO;
}

/* ---- behaviour ----------------------------------------------------------- */

struct oshared {
	volatile int next;         /* the call in progress */
	volatile int done;
	volatile int install_err;
	struct ksec_outcome out[];
};

/* The observing child's state; globals so the SIGSYS handler reaches them. */
static struct oshared *g_sh;
static const struct ksec_call *g_calls;
static int g_ncalls;
static void *g_jb[5];

static void sigsys_handler(int sig, siginfo_t *si, void *uc)
{
	struct ksec_outcome *o;

	(void)sig;
	(void)uc;
	if (g_sh->done || g_sh->next >= g_ncalls)
		__builtin_trap(); /* the final exit_group was trapped */
	o = &g_sh->out[g_sh->next];
	o->kind = KSEC_TRAPPED;
	o->trap_errno = si->si_errno;
	o->trap_syscall = si->si_syscall;
	o->trap_arch = si->si_arch;
	o->trap_addr = (uint64_t)(uintptr_t)si->si_call_addr;
	/* No rt_sigreturn and no sigprocmask (the filter may refuse both):
	 * SA_NODEFER left the mask untouched, so jump straight out. */
	__builtin_longjmp(g_jb, 1);
}

/* Filters other than the newest must let the next seccomp(2) through, or
 * the chain could not be installed in order. This prefix allows exactly
 * x86_64 seccomp(2) and leaves every other input to the original program
 * (with A = 0 again, and the same one-pass scratch state: none). */
#define WRAP_LEN 6
static void wrap(struct sock_filter *dst, const struct sock_fprog *f)
{
	dst[0] = STMT(BPF_LD | BPF_W | BPF_ABS, 0);
	dst[1] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_seccomp, 0, 3);
	dst[2] = STMT(BPF_LD | BPF_W | BPF_ABS, 4);
	dst[3] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 1);
	dst[4] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	dst[5] = STMT(BPF_LD | BPF_IMM, 0);
	memcpy(dst + WRAP_LEN, f->filter, f->len * sizeof(*dst));
}

static __attribute__((noinline)) void observe_child(
	const struct sock_fprog *chain, size_t n, struct sock_filter **wrapped)
{
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = sigsys_handler;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* A seccomp kill dumps core (do_coredump()); not dumpable means no
	 * core file lands in the working directory. */
	prctl(PR_SET_DUMPABLE, 0);
	if (sigaction(SIGSYS, &sa, NULL)) {
		g_sh->install_err = errno;
		exit_now(1);
	}
	if (n && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		g_sh->install_err = errno;
		exit_now(1);
	}
	for (i = 0; i < n; i++) {
		int err = i + 1 < n ? install(wrapped[i], chain[i].len + WRAP_LEN)
				    : install(chain[i].filter, chain[i].len);

		if (err) {
			g_sh->install_err = err;
			exit_now(1);
		}
	}
	/* From here on: no system call but the ones under test. */
	while (g_sh->next < g_ncalls) {
		if (__builtin_setjmp(g_jb) == 0) {
			int at = g_sh->next;
			long r = issue(&g_calls[at]);

			g_sh->out[at].kind = KSEC_RETURNED;
			g_sh->out[at].ret = r;
		}
		g_sh->next = g_sh->next + 1;
	}
	g_sh->done = 1;
	exit_now(0);
}

/* Waits for pid for at most timeout_ms; 1 when it timed out. */
static int wait_child(pid_t pid, int timeout_ms, int *status)
{
	int pfd = syscall(SYS_pidfd_open, pid, 0), r;

	if (pfd >= 0) {
		struct pollfd p = { .fd = pfd, .events = POLLIN };

		do
			r = poll(&p, 1, timeout_ms);
		while (r < 0 && errno == EINTR);
		close(pfd);
		if (r == 0) {
			kill(pid, SIGKILL);
			waitpid(pid, status, 0);
			return 1;
		}
	}
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
	return 0;
}

int ksec_observe(const struct sock_fprog *chain, size_t n,
		 const struct ksec_call *calls, size_t ncalls,
		 struct ksec_outcome *out)
{
	struct sock_filter **wrapped = NULL;
	int timeout_ms = emulated() ? 600000 : 60000;
	size_t map_size, i, start = 0;
	struct oshared *sh;
	int err = 0;

	if (!ncalls)
		return 0;
	map_size = sizeof(*sh) + ncalls * sizeof(sh->out[0]);
	sh = mmap(NULL, map_size, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return -errno;
	memset(sh, 0, map_size);
	if (n > 1) {
		wrapped = calloc(n, sizeof(*wrapped));
		if (!wrapped) {
			err = -ENOMEM;
			goto out;
		}
		for (i = 0; i + 1 < n; i++) {
			if (chain[i].len + WRAP_LEN > 4096) {
				err = -E2BIG;
				goto out;
			}
			wrapped[i] = malloc((chain[i].len + WRAP_LEN) * sizeof(**wrapped));
			if (!wrapped[i]) {
				err = -ENOMEM;
				goto out;
			}
			wrap(wrapped[i], &chain[i]);
		}
	}
	while (start < ncalls) {
		int status = 0, hung;
		pid_t pid;

		sh->next = start;
		sh->done = 0;
		sh->install_err = 0;
		fflush(NULL);
		pid = fork();
		if (pid < 0) {
			err = -errno;
			goto out;
		}
		if (pid == 0) {
			g_sh = sh;
			g_calls = calls;
			g_ncalls = ncalls;
			observe_child(chain, n, wrapped);
			_exit(0);
		}
		hung = wait_child(pid, timeout_ms, &status);
		if (sh->install_err) {
			err = -sh->install_err;
			goto out;
		}
		for (i = start; i < ncalls && i <= (size_t)sh->next; i++)
			sh->out[i].pid = pid;
		if (sh->done)
			break;
		if ((size_t)sh->next >= ncalls) { /* died after the last call */
			break;
		}
		i = sh->next;
		if (hung) {
			sh->out[i].kind = KSEC_HUNG;
		} else if (WIFSIGNALED(status)) {
			sh->out[i].kind = KSEC_KILLED;
			sh->out[i].signo = WTERMSIG(status);
		} else {
			/* exited without finishing: should not happen */
			err = -ECHILD;
			goto out;
		}
		start = i + 1;
	}
	memcpy(out, sh->out, ncalls * sizeof(*out));
out:
	if (wrapped) {
		for (i = 0; i < n; i++)
			free(wrapped[i]);
		free(wrapped);
	}
	munmap(sh, map_size);
	return err;
}
