// SPDX-License-Identifier: GPL-2.0-only
/*
 * The 2012 interface enforced by the runtime, on real tasks: what a filter
 * sees (the registers ptrace shows at that very syscall entry), loads past
 * the layout, the ABI recorded at attach, the exec rule, and stacking with
 * seccomp_data filters. Each expected verdict is the reference
 * interpreter's (c2e_interpret_abi()) for the same registers.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "c2e.h"
#include "kseccomp.h"
#include "probe.h"
#include "runtime.h"
#include "bypass.h"
#include "wstatus.h"
#include "sockfilter.h"

#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NR_GETPPID 110
#define RFC_SIZE   C2E_RFC_X86_64_SIZE
#define OFF(reg)   ((uint32_t)offsetof(struct user_regs_struct, reg))
#define RFC        SF_ATTACH_RFC2012

/* The argument under which the exec'd test binary runs the exec probe. */
#define RFC_EXEC_PROBE_ARG "--sf-rfc-exec-probe"

/* What a child reports through shared memory (no system call needed). */
struct report {
	atomic_long step;
	atomic_long ret;
};
static struct report *R;

struct kid {
	pid_t pid;
	int go;
};

static void drop_cap_sys_admin(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d) == 0) {
		d[CAP_SYS_ADMIN / 32].effective &= ~(1U << (CAP_SYS_ADMIN % 32));
		syscall(SYS_capset, &h, d);
	}
}

/* Set: the next child drops CAP_SYS_ADMIN before it waits to be released,
 * so that an attach to it is judged without the capability. */
static bool kid_drop_first;

static bool kid_start(struct kid *k, void (*fn)(long), long arg)
{
	int p[2];
	char b;

	if (!R) {
		R = mmap(NULL, sizeof(*R), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (!ASSERT_TRUE(R != MAP_FAILED, "mmap"))
			return false;
	}
	atomic_store(&R->step, 0);
	atomic_store(&R->ret, 0);
	if (!ASSERT_OK(pipe2(p, O_CLOEXEC), "pipe"))
		return false;
	fflush(stdout);
	k->pid = fork();
	if (k->pid == 0) {
		close(p[1]);
		if (kid_drop_first)
			drop_cap_sys_admin();
		while (read(p[0], &b, 1) < 0 && errno == EINTR)
			;
		fn(arg);
		_exit(0);
	}
	close(p[0]);
	k->go = p[1];
	return ASSERT_GE(k->pid, 1, "fork");
}

/* Releases the child and returns its wait status (-1: it hung). */
static int kid_finish(struct kid *k)
{
	time_t end = time(NULL) + 60 * (test_kernel_name()[0] == 'g' ? 10 : 1);
	int st;

	if (k->go >= 0 && write(k->go, "g", 1) != 1)
		test_fail(__FILE__, __LINE__, "release: %s", strerror(errno));
	close(k->go);
	k->go = -1;
	while (waitpid(k->pid, &st, WNOHANG) == 0) {
		if (time(NULL) > end) {
			kill(k->pid, SIGKILL);
			waitpid(k->pid, &st, 0);
			test_fail(__FILE__, __LINE__, "child %d hung", k->pid);
			return -1;
		}
		usleep(1000);
	}
	return st;
}

static bool attach(struct sf_runtime *rt, pid_t tid, const struct sock_filter *f,
		   size_t len, unsigned int flags, uint32_t *id)
{
	struct sock_fprog p = { .len = (unsigned short)len, .filter = (struct sock_filter *)f };
	struct c2e_error e = { 0 };
	uint32_t dummy;
	char buf[256];
	int err = sf_runtime_attach(rt, tid, &p, flags, id ? id : &dummy, &e);

	if (err)
		test_fail(__FILE__, __LINE__, "attach (flags 0x%x): %s %s", flags,
			  strerror(-err), c2e_error_str(&e, buf, sizeof(buf)));
	return err == 0;
}

static long getppid_with(uint64_t a0)
{
	uint64_t a[6] = { a0, 0x1111, 0x2222, 0x3333, 0x4444, 0x5555 };

	return ksec_stub_syscall64(NR_GETPPID, a);
}

/* ---- the registers ------------------------------------------------------ */

static void stop_then_getppid(long arg)
{
	(void)arg;
	ptrace(PTRACE_TRACEME, 0, 0, 0);
	raise(SIGSTOP);
	getppid_with(0xfeed);
	atomic_store(&R->step, 1);
	getppid_with(0xbeef);
	atomic_store(&R->step, 2);
}

/* A filter that allows getppid only when all 27 registers are exactly
 * regs, and every other call. */
static size_t exact_regs_filter(const struct user_regs_struct *regs,
				struct sock_filter *f)
{
	const uint32_t *w = (const uint32_t *)regs;
	size_t n = 0, i, words = sizeof(*regs) / 4;

	f[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, OFF(orig_rax));
	f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_GETPPID, 0, (uint8_t)(2 * words + 1));
	for (i = 0; i < words; i++) {
		f[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t)(4 * i));
		f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, w[i], 0,
			      (uint8_t)(2 * (words - i - 1) + 1));
	}
	f[n++] = STMT(BPF_LD | BPF_W | BPF_LEN, 0);
	f[n++] = STMT(BPF_RET | BPF_A, 0);
	return n;
}

TEST(rfc2012_filters_see_the_registers_ptrace_shows_at_that_syscall_entry)
{
	struct sock_filter f[2 * 54 + 8];
	struct user_regs_struct regs, other;
	struct sf_runtime *rt = bp_runtime_open(false);
	struct kid k;
	size_t n;
	int st;

	if (!rt)
		return;
	if (!kid_start(&k, stop_then_getppid, 0))
		goto out;
	close(k.go); /* the child runs on to its SIGSTOP */
	k.go = -1;
	if (!ASSERT_EQ(waitpid(k.pid, &st, 0), k.pid, "waitpid") ||
	    !ASSERT_TRUE(WIFSTOPPED(st), "child stopped"))
		goto out;
	/* To the entry of its first getppid: the ptrace stop comes before
	 * the tracepoint, so the filter judges this very call. */
	for (;;) {
		if (ptrace(PTRACE_SYSCALL, k.pid, 0, 0) || waitpid(k.pid, &st, 0) != k.pid ||
		    !WIFSTOPPED(st)) {
			test_fail(__FILE__, __LINE__, "ptrace to getppid: %s", strerror(errno));
			goto out;
		}
		if (ptrace(PTRACE_GETREGS, k.pid, 0, &regs) == 0 &&
		    regs.orig_rax == NR_GETPPID && regs.rdi == 0xfeed)
			break;
	}
	n = exact_regs_filter(&regs, f);
	other = regs;
	other.rdi = 0xbeef;
	ASSERT_EQ(c2e_interpret_abi(f, n, C2E_ABI_RFC_X86_64, &regs), RFC_SIZE,
		  "the interpreter allows the captured registers");
	ASSERT_NEQ(c2e_interpret_abi(f, n, C2E_ABI_RFC_X86_64, &other), RFC_SIZE,
		   "and blocks them with another rdi");
	test_log("captured rax=%llx cs=%llx ss=%llx fs_base=%llx ds=%llx\n",
		 regs.rax, regs.cs, regs.ss, regs.fs_base, regs.ds);
	if (!attach(rt, k.pid, f, n, RFC, NULL)) {
		kill(k.pid, SIGKILL);
		goto out;
	}
	ptrace(PTRACE_DETACH, k.pid, 0, 0);
	st = kid_finish(&k);
	ASSERT_EQ(atomic_load(&R->step), 1, "the call with the captured registers ran");
	ASSERT_TRUE(wstatus_killed_by(st, SIGKILL), "the next one (rdi changed) was blocked");
out:
	sf_runtime_close(rt);
}

/* ---- loads past the layout ---------------------------------------------- */

static void getppid_then_mark(long arg)
{
	atomic_store(&R->ret, getppid_with((uint64_t)arg));
	atomic_store(&R->step, 1);
}

TEST(rfc2012_indirect_loads_past_the_216_bytes_block_and_len_is_the_layout_size)
{
	static const struct { uint32_t x, k; } cases[] = {
		{ 0, 212 }, { 0, 213 }, { 212, 0 }, { 100, 113 }, { 1, 3 },
		{ 0xffffffffu, 5 }, { 0xfffffffcu, 0 }, { 216, 0 }, { 0, 0xffffffffu },
	};
	struct sf_runtime *rt = bp_runtime_open(false);
	struct user_regs_struct regs = { .orig_rax = NR_GETPPID };
	size_t i;

	if (!rt)
		return;
	for (i = 0; i < ARRAY_SIZE(cases) && !test_failed(); i++) {
		struct sock_filter f[] = {
			STMT(BPF_LD | BPF_W | BPF_ABS, OFF(orig_rax)),
			JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_GETPPID, 0, 2),
			STMT(BPF_LDX | BPF_W | BPF_IMM, cases[i].x),
			STMT(BPF_LD | BPF_W | BPF_IND, cases[i].k),
			STMT(BPF_LD | BPF_W | BPF_LEN, 0),
			STMT(BPF_RET | BPF_A, 0),
		};
		bool allow = c2e_interpret_abi(f, ARRAY_SIZE(f), C2E_ABI_RFC_X86_64,
					       &regs) == RFC_SIZE;
		char what[96];
		struct kid k;
		int st;

		if (!kid_start(&k, getppid_then_mark, 0))
			break;
		if (!attach(rt, k.pid, f, ARRAY_SIZE(f), RFC, NULL)) {
			kill(k.pid, SIGKILL);
			kid_finish(&k);
			break;
		}
		st = kid_finish(&k);
		snprintf(what, sizeof(what), "ld [x+%u] with x=%u: %s", cases[i].k,
			 cases[i].x, allow ? "allowed" : "blocked");
		if (allow)
			ASSERT_TRUE(wstatus_exited_ok(st) && atomic_load(&R->step) == 1, what);
		else
			ASSERT_TRUE(wstatus_killed_by(st, SIGKILL) &&
				    atomic_load(&R->step) == 0, what);
	}
	sf_runtime_close(rt);
}

/* ---- the ABI recorded at attach ----------------------------------------- */

static const struct sock_filter allow_all[] = {
	STMT(BPF_LD | BPF_W | BPF_LEN, 0),
	STMT(BPF_RET | BPF_A, 0),
};

static void int80_getpid(long arg)
{
	uint64_t a[6] = { 0 };

	(void)arg;
	atomic_store(&R->ret, ksec_stub_int80(20, a));
	atomic_store(&R->step, 1);
}

TEST(rfc2012_calls_through_the_other_abi_than_at_attach_are_blocked)
{
	struct sf_runtime *rt = bp_runtime_open(false);
	char why[160];
	struct kid k;
	int st;

	if (!rt)
		return;
	/* i386 recorded, an x86-64 call: its very first call dies. */
	if (kid_start(&k, getppid_then_mark, 0) &&
	    attach(rt, k.pid, allow_all, 2, RFC | SF_ATTACH_RFC_I386, NULL)) {
		st = kid_finish(&k);
		ASSERT_TRUE(wstatus_killed_by(st, SIGKILL) && atomic_load(&R->step) == 0,
			    "an x86-64 call under an i386 filter is blocked");
	}
	/* x86-64 recorded, an int $0x80 call. */
	if (TEST_REQUIRE(probe_int80(why, sizeof(why)), "int80", why) &&
	    kid_start(&k, int80_getpid, 0) && attach(rt, k.pid, allow_all, 2, RFC, NULL)) {
		st = kid_finish(&k);
		ASSERT_TRUE(wstatus_killed_by(st, SIGKILL) && atomic_load(&R->step) == 0,
			    "an int $0x80 call under an x86-64 filter is blocked");
	}
	sf_runtime_close(rt);
}

/* ---- exec ---------------------------------------------------------------- */

/* The exec'd half: "sftest RFC_EXEC_PROBE_ARG": one allowed call reported
 * by exit status 0 would follow the blocked getppid(0xdead). */
__attribute__((constructor)) static void rfc_exec_probe(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], RFC_EXEC_PROBE_ARG) != 0)
		return;
	getppid_with(0xdead);
	_exit(7);
}


static void exec_probe_child(long arg)
{
	(void)arg;
	atomic_store(&R->step, 1);
	execl("/proc/self/exe", "sftest-rfc-exec-probe", RFC_EXEC_PROBE_ARG, (char *)NULL);
	atomic_store(&R->ret, -errno);
	atomic_store(&R->step, 2);
}

/* A self-attach as sfilterd makes it for PR_ATTACH_SECCOMP_FILTER: judged
 * against the child's own credentials in the step that applies it. */
static int self_attach(struct sf_runtime *rt, pid_t pid, const struct sock_filter *f,
		       size_t len, unsigned int flags)
{
	struct sock_fprog p = { .len = (unsigned short)len, .filter = (struct sock_filter *)f };
	struct sf_identity who;
	struct sf_target tg = { .tid = pid, .process = &who, .self = true, .reply_fd = -1 };
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0), err;
	uint32_t id;

	if (pfd < 0)
		return -errno;
	err = sf_runtime_identify(rt, pfd, &who);
	close(pfd);
	if (err == -EOPNOTSUPP) { /* before 6.1: no pidfd iterator */
		tg.process = NULL;
		err = 0;
	}
	return err ? err : sf_runtime_attach_to(rt, &tg, &p, flags, &id, NULL);
}

static void killed_on_getppid(struct sock_filter *f)
{
	f[0] = STMT(BPF_LD | BPF_W | BPF_ABS, OFF(orig_rax));
	f[1] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_GETPPID, 0, 2);
	f[2] = STMT(BPF_LD | BPF_W | BPF_ABS, OFF(rdi));
	f[3] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xdead, 1, 0);
	f[4] = STMT(BPF_LD | BPF_W | BPF_LEN, 0);
	f[5] = STMT(BPF_RET | BPF_A, 0);
}

TEST(rfc2012_execve_fails_unless_each_filter_was_attached_with_cap_sys_admin)
{
	struct sf_runtime *rt = bp_runtime_open(false);
	struct sock_filter f[6];
	bool lsm;
	struct kid k;
	int st, err;

	if (!rt)
		return;
	lsm = sf_runtime_tier(rt) == SF_TIER_LSM;
	killed_on_getppid(f);

	/* Without CAP_SYS_ADMIN: exec refused (lsm: EPERM; else killed). */
	kid_drop_first = true;
	if (kid_start(&k, exec_probe_child, 0)) {
		usleep(50000); /* the child drops the capability before it waits */
		err = self_attach(rt, k.pid, f, 6, RFC);
		ASSERT_OK(err, "an unprivileged task attaches a 2012 filter without no_new_privs");
		st = kid_finish(&k);
		if (lsm)
			ASSERT_TRUE(wstatus_exited_ok(st) && atomic_load(&R->ret) == -EPERM,
				    "lsm tier: execve fails with EPERM");
		else
			ASSERT_TRUE(wstatus_killed_by(st, SIGKILL) && atomic_load(&R->step) == 1,
				    "tracepoint tier: execve is blocked by killing");
	}
	kid_drop_first = false;
	/* With CAP_SYS_ADMIN, marked: exec runs and the filter goes with it. */
	if (kid_start(&k, exec_probe_child, 0)) {
		err = self_attach(rt, k.pid, f, 6, RFC | SF_ATTACH_RFC_EXEC);
		ASSERT_OK(err, "a task with CAP_SYS_ADMIN attaches an inheritable one");
		st = kid_finish(&k);
		ASSERT_TRUE(wstatus_killed_by(st, SIGKILL), "the exec'd image is still filtered");
	}
	sf_runtime_close(rt);
}

TEST(rfc2012_inheritable_filters_need_cap_sys_admin_in_the_attaching_task)
{
	struct sf_runtime *rt = bp_runtime_open(false);
	struct kid k;
	int err;

	if (!rt)
		return;
	/* The capability goes before the attach: fork a child that drops
	 * it at once and then waits. */
	fflush(stdout);
	k.pid = fork();
	if (k.pid == 0) {
		drop_cap_sys_admin();
		pause();
		_exit(0);
	}
	usleep(50000);
	err = self_attach(rt, k.pid, allow_all, 2, RFC | SF_ATTACH_RFC_EXEC);
	ASSERT_EQ(err, -EPERM, "RFC_EXEC without CAP_SYS_ADMIN is refused");
	err = self_attach(rt, k.pid, allow_all, 2, RFC);
	ASSERT_OK(err, "without the mark it is attached");
	kill(k.pid, SIGKILL);
	waitpid(k.pid, NULL, 0);
	sf_runtime_close(rt);
}

/* ---- stacking -------------------------------------------------------------- */

TEST(rfc2012_stacked_with_seccomp_filters_every_filter_must_allow_and_a_block_is_kill_process)
{
	static const struct sock_filter log_getppid[] = {
		STMT(BPF_LD | BPF_W | BPF_ABS, 0),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_GETPPID, 0, 1),
		STMT(BPF_RET | BPF_K, SECCOMP_RET_LOG),
		STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	static const struct sock_filter trap_getppid[] = {
		STMT(BPF_LD | BPF_W | BPF_ABS, 0),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_GETPPID, 0, 1),
		STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sf_runtime *rt = bp_runtime_open(false);
	struct sock_filter block[6];
	struct kid k;
	int st;

	if (!rt)
		return;
	killed_on_getppid(block);
	/* RFC allows, seccomp logs: the call runs. */
	if (kid_start(&k, getppid_then_mark, 0) &&
	    attach(rt, k.pid, allow_all, 2, RFC, NULL) &&
	    attach(rt, k.pid, log_getppid, 4, 0, NULL)) {
		st = kid_finish(&k);
		ASSERT_TRUE(wstatus_exited_ok(st) && atomic_load(&R->step) == 1,
			    "RFC allow + seccomp LOG: the call runs");
	}
	/* seccomp allows, RFC blocks: killed. */
	if (kid_start(&k, getppid_then_mark, 0xdead) &&
	    attach(rt, k.pid, log_getppid, 4, 0, NULL) &&
	    attach(rt, k.pid, block, 6, RFC, NULL)) {
		st = kid_finish(&k);
		ASSERT_TRUE(wstatus_killed_by(st, SIGKILL) && atomic_load(&R->step) == 0,
			    "seccomp LOG + RFC block: killed");
	}
	/* A block outranks TRAP in either order: SIGKILL, never SIGSYS. */
	if (kid_start(&k, getppid_then_mark, 0xdead) &&
	    attach(rt, k.pid, block, 6, RFC, NULL) &&
	    attach(rt, k.pid, trap_getppid, 4, 0, NULL)) {
		st = kid_finish(&k);
		ASSERT_TRUE(wstatus_killed_by(st, SIGKILL),
			    "RFC block under a newer TRAP: SIGKILL (KILL_PROCESS ranks first)");
	}
	sf_runtime_close(rt);
}
