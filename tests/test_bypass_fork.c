// SPDX-License-Identifier: GPL-2.0-only
/*
 * Bypass attempts through every way a confined process makes a child:
 * fork; vfork; clone(CLONE_VM | CLONE_VFORK) on a stack of its own;
 * clone3 plain, with CLONE_PIDFD | CLONE_CLEAR_SIGHAND, with CLONE_VM |
 * CLONE_VFORK on the parent's stack, and with CLONE_PARENT (the child is
 * the test's, not the confined process's); vfork from a second thread;
 * and vfork + execve of a program that makes the call after its own
 * start-up. One iteration: one child, which makes allowed calls and then
 * the denied one; it must die there and not before. The confined process
 * makes its children in batches, each batch under a fresh attach, and at
 * the end of a batch makes the denied call itself.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "bypass.h"
#include "progs.h"
#include "runtime.h"

#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXEC_PROBE_ARG "--sf-bypass-exec-probe"
#define STACK_SIZE (64 * 1024)

enum method {
	M_FORK, M_VFORK, M_CLONE_VM_VFORK, M_CLONE3, M_CLONE3_PIDFD, M_CLONE3_VM_VFORK,
	M_CLONE_PARENT, M_VFORK_FROM_THREAD, M_VFORK_EXEC, N_METHODS
};

static const char *const method_name[N_METHODS] = {
	"fork", "vfork", "clone(CLONE_VM|CLONE_VFORK)", "clone3",
	"clone3(CLONE_PIDFD|CLONE_CLEAR_SIGHAND)", "clone3(CLONE_VM|CLONE_VFORK)",
	"clone3(CLONE_PARENT)", "vfork from a second thread", "vfork + execve",
};

struct board {
	struct bp_tally t;       /* the confined process's children */
	struct bp_flags child;   /* the child of the current iteration */
	struct bp_flags self;    /* the confined process itself */
	volatile int strays[64]; /* CLONE_PARENT children: the test reaps them */
	volatile int n_strays;
};

static struct board *B;

/* The child's part: allowed calls, then the denied one. Never returns. */
static void child_body(void)
{
	bp_allowed_call();
	syscall(SYS_getuid);
	B->child.reached = 1;
	bp_denied_call();
	B->child.survived = 1;
	syscall(SYS_exit_group, 0);
	__builtin_unreachable();
}

static int child_fn(void *arg)
{
	(void)arg;
	child_body();
	return 0;
}

static char exe_fd_arg[16];

/* posix_spawn's way: vfork, then execve of a program (this runner) that
 * reports on a pipe, since it shares no memory with us any more. */
static void exec_child(void)
{
	execl("/proc/self/exe", "sftest-bypass-probe", EXEC_PROBE_ARG, exe_fd_arg, (char *)NULL);
	syscall(SYS_exit_group, 127);
}

/* The exec'd probe: "r" before the denied call, "s" after it. */
__attribute__((constructor)) static void exec_probe(int argc, char **argv)
{
	int fd;

	if (argc < 3 || strcmp(argv[1], EXEC_PROBE_ARG) != 0)
		return;
	fd = atoi(argv[2]);
	bp_allowed_call();
	if (write(fd, "r", 1) != 1)
		_exit(3);
	bp_denied_call();
	if (write(fd, "s", 1) != 1)
		_exit(3);
	_exit(0);
}

static void *vfork_thread(void *arg)
{
	pid_t *out = arg;

	*out = vfork();
	if (*out == 0)
		child_body();
	return NULL;
}

/* Makes one child by method m; its pid (in *pidfd a pidfd for
 * CLONE_PARENT, whose child this process cannot wait for), or -1. */
static pid_t make_child(enum method m, char *stack, int *pidfd)
{
	struct clone_args a = { .exit_signal = SIGCHLD };
	pthread_t th;
	pid_t pid = -1;

	switch (m) {
	case M_FORK:
		pid = fork();
		if (pid == 0)
			child_body();
		return pid;
	case M_VFORK:
		pid = vfork();
		if (pid == 0)
			child_body();
		return pid;
	case M_CLONE_VM_VFORK:
		return clone(child_fn, stack + STACK_SIZE, CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
	case M_CLONE3:
		return (pid_t)bp_clone3_run(&a, sizeof(a), child_body);
	case M_CLONE3_PIDFD:
		a.flags = CLONE_PIDFD | CLONE_CLEAR_SIGHAND;
		a.pidfd = (uint64_t)(uintptr_t)pidfd;
		pid = (pid_t)bp_clone3_run(&a, sizeof(a), child_body);
		if (pid > 0)
			close(*pidfd);
		*pidfd = -1;
		return pid;
	case M_CLONE3_VM_VFORK:
		a.flags = CLONE_VM | CLONE_VFORK;
		return (pid_t)bp_clone3_run(&a, sizeof(a), child_body);
	case M_CLONE_PARENT:
		a.flags = CLONE_PARENT | CLONE_PIDFD;
		a.exit_signal = 0; /* CLONE_PARENT takes this process's own */
		a.pidfd = (uint64_t)(uintptr_t)pidfd;
		return (pid_t)bp_clone3_run(&a, sizeof(a), child_body);
	case M_VFORK_FROM_THREAD:
		if (pthread_create(&th, NULL, vfork_thread, &pid))
			return -1;
		pthread_join(th, NULL);
		return pid;
	case M_VFORK_EXEC:
		pid = vfork();
		if (pid == 0)
			exec_child();
		return pid;
	default:
		return -1;
	}
}

/* The exec'd probe's flags, from its pipe. */
static void read_probe(int fd, struct bp_flags *f)
{
	char c;

	while (read(fd, &c, 1) == 1) {
		if (c == 'r')
			f->reached = 1;
		else if (c == 's')
			f->survived = 1;
	}
}

/* The confined process: n children, then its own denied call. */
static void confined(int go, int n, int first)
{
	char *stack = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	char c, what[96];
	int i;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (stack == MAP_FAILED || read(go, &c, 1) != 1)
		_exit(90);
	for (i = first; i < first + n && !test_failed(); i++) {
		enum method m = i % N_METHODS;
		int pidfd = -1, st = -1, p[2] = { -1, -1 };
		pid_t pid;

		memset((void *)&B->child, 0, sizeof(B->child));
		if (m == M_VFORK_EXEC) {
			if (pipe2(p, O_CLOEXEC) || fcntl(p[1], F_SETFD, 0))
				_exit(91);
			snprintf(exe_fd_arg, sizeof(exe_fd_arg), "%d", p[1]);
		}
		errno = 0;
		pid = make_child(m, stack, &pidfd);
		if (pid < 0) {
			/* The clone3 stub answers -errno, the libc calls -1. */
			test_fail(__FILE__, __LINE__, "%s: %s", method_name[m],
				  strerror(pid < -1 ? -pid : errno));
			break;
		}
		if (m == M_CLONE_PARENT) {
			struct pollfd pf = { .fd = pidfd, .events = POLLIN };

			/* Readable once the child has exited; the test reaps it. */
			if (poll(&pf, 1, 10000 * (test_is_emulated() ? 10 : 1)) != 1)
				test_fail(__FILE__, __LINE__, "CLONE_PARENT child %d hung", pid);
			close(pidfd);
			if (B->n_strays < 64)
				B->strays[B->n_strays++] = pid;
		} else {
			st = bp_wait(pid, 10);
		}
		if (m == M_VFORK_EXEC) {
			close(p[1]);
			read_probe(p[0], (struct bp_flags *)&B->child);
			close(p[0]);
		}
		snprintf(what, sizeof(what), "child %d by %s", i, method_name[m]);
		bp_count(&B->t, bp_judge_denied(st, &B->child), st, what);
	}
	B->self.reached = 1;
	bp_denied_call();
	B->self.survived = 1;
	_exit(0);
}

static struct sock_filter kill_getppid[4];

TEST(bypass_children_made_by_fork_vfork_clone_and_clone3_die_on_the_denied_call)
{
	struct sock_fprog prog = progs_kill_on(kill_getppid, 4, SYS_getppid);
	long n = bp_iterations(1000, 45), batch = bp_iterations(100, 45), done;
	struct sf_runtime *rt = bp_runtime_open(false);
	struct bp_tally own = { 0 };
	double t0 = bp_now();

	B = bp_shared(sizeof(*B));
	if (!rt || !B)
		goto out;
	for (done = 0; done < n && !test_failed(); done += batch) {
		int go[2], st, i;
		pid_t c;

		B->n_strays = 0;
		memset((void *)&B->self, 0, sizeof(B->self));
		if (!ASSERT_OK(pipe2(go, O_CLOEXEC), "pipe"))
			break;
		fflush(stdout);
		c = fork();
		if (c == 0) {
			close(go[1]);
			confined(go[0], (int)batch, (int)done);
		}
		close(go[0]);
		if (!ASSERT_TRUE(c > 0, "fork") ||
		    bp_attach(rt, c, &prog, 0, NULL, false) ||
		    !ASSERT_EQ(write(go[1], "g", 1), 1, "release the confined process")) {
			close(go[1]);
			if (c > 0) {
				kill(c, SIGKILL);
				waitpid(c, NULL, 0);
			}
			break;
		}
		close(go[1]);
		st = bp_wait(c, 60);
		for (i = 0; i < B->n_strays; i++)
			waitpid(B->strays[i], NULL, 0);
		bp_count(&own, bp_judge_denied(st, &B->self), st, "the confined process itself");
	}
	B->t.iterations += own.iterations;
	B->t.escapes += own.escapes;
	B->t.wrongful_kills += own.wrongful_kills;
	bp_report("fork-vfork-clone3", "a confined process's child, made one of 9 ways, "
		  "makes the denied call; so does each batch's parent",
		  &B->t, bp_now() - t0);
out:
	sf_runtime_close(rt);
}
