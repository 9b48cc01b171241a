// SPDX-License-Identifier: GPL-2.0-only
/* The bypass suite's common ground (bypass.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bypass.h"
#include "harness.h"
#include "runtime.h"
#include "c2e.h"
#include "wstatus.h"

#include <fcntl.h>
#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

long bp_iterations(long host, long guest)
{
	return test_is_emulated() ? guest : host;
}

enum bp_fate bp_judge_denied(int status, const struct bp_flags *f)
{
	if (f->survived)
		return BP_ESCAPE;
	if (!f->reached)
		/* Gone before its denied call: killed for an allowed one
		 * (whatever the signal, the task made no other call). */
		return status == -1 || WIFSIGNALED(status) ? BP_WRONGFUL : BP_OTHER;
	/* A task that reached the call and never came back from it died
	 * there; with its status, it must be our SIGKILL. */
	return status == -1 || wstatus_killed_by(status, SIGKILL) ? BP_KILLED : BP_OTHER;
}

enum bp_fate bp_judge_allowed(int status)
{
	if (wstatus_exited_ok(status))
		return BP_LIVED;
	return wstatus_killed_by(status, SIGKILL) ? BP_WRONGFUL : BP_OTHER;
}

/* Bad outcomes printed per tally; the counts say how many there were. */
#define MAX_PRINTED 20

void bp_count(struct bp_tally *t, enum bp_fate fate, int status, const char *what)
{
	bool print = t->escapes + t->wrongful_kills < MAX_PRINTED;
	char b[64];

	t->iterations++;
	switch (fate) {
	case BP_KILLED:
	case BP_LIVED:
		return;
	case BP_ESCAPE:
		t->escapes++;
		if (print)
			printf("    ESCAPE: %s: the denied call ran and the task lived on (%s)\n",
			       what, wstatus_str(status, b, sizeof(b)));
		return;
	case BP_WRONGFUL:
		t->wrongful_kills++;
		if (print)
			printf("    WRONGFUL KILL: %s: killed, its calls allowed (%s)\n",
			       what, wstatus_str(status, b, sizeof(b)));
		return;
	case BP_OTHER:
		test_fail(__FILE__, __LINE__, "%s: ended otherwise: %s", what,
			  wstatus_str(status, b, sizeof(b)));
	}
}

void bp_tally_add(struct bp_tally *to, const struct bp_tally *from)
{
	to->iterations += from->iterations;
	to->escapes += from->escapes;
	to->wrongful_kills += from->wrongful_kills;
}

void bp_report(const char *case_name, const char *iteration, const struct bp_tally *t,
	       double seconds)
{
	char m[160];

	test_log("%s: %ld iterations (%s) in %.1f s, %ld escapes, %ld wrongful kills\n",
		 case_name, t->iterations, iteration, seconds, t->escapes, t->wrongful_kills);
	test_bypass_count(case_name, iteration, t->iterations, t->escapes, t->wrongful_kills);
	snprintf(m, sizeof(m), "%s: escapes", case_name);
	ASSERT_EQ(t->escapes, 0, m);
	snprintf(m, sizeof(m), "%s: wrongful kills", case_name);
	ASSERT_EQ(t->wrongful_kills, 0, m);
}

void *bp_shared(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		test_fail(__FILE__, __LINE__, "mmap %zu shared bytes: %s", size, strerror(errno));
		return NULL;
	}
	return p;
}

int bp_probe(int nr)
{
	int st = -1;
	pid_t c = vfork();

	if (c == 0) {
		syscall(nr);
		_exit(0);
	}
	if (c > 0)
		waitpid(c, &st, 0);
	return st;
}

static void prober_body(struct bp_prober_board *b, int cmd, int rep)
{
	struct bp_flags f = { 1, 0 };
	int nr, st, j = 0;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	fcntl(cmd, F_SETFL, O_NONBLOCK);
	for (;;) {
		if (b->probing && b->budget > 0) {
			b->idle = 0;
			b->budget--;
			/* Spread over the change, not all at its start. */
			usleep(500);
			if (j++ % 2) {
				st = bp_probe(SYS_getppid);
				f.survived = st != -1 && WIFEXITED(st);
				bp_count(&b->t, bp_judge_denied(st, &f), st,
					 "a prober's child on the denied call, during a change");
			} else {
				st = bp_probe(SYS_getgid);
				bp_count(&b->t, bp_judge_allowed(st), st,
					 "a prober's child on an allowed call, during a change");
			}
			continue;
		}
		b->idle = 1;
		if (read(cmd, &nr, sizeof(nr)) != sizeof(nr)) {
			if (errno != EAGAIN)
				_exit(0);
			sched_yield();
			continue;
		}
		st = bp_probe(nr);
		if (write(rep, &st, sizeof(st)) != sizeof(st))
			_exit(2);
	}
}

bool bp_prober_start(struct bp_prober *p, int (*setup)(struct bp_prober_board *b))
{
	int cmd[2], rep[2];

	p->pid = 0;
	p->b = bp_shared(sizeof(*p->b));
	if (!p->b || !ASSERT_OK(pipe2(cmd, O_CLOEXEC), "pipe") ||
	    !ASSERT_OK(pipe2(rep, O_CLOEXEC), "pipe"))
		return false;
	fflush(stdout);
	p->pid = fork();
	if (p->pid == 0) {
		close(cmd[1]);
		close(rep[0]);
		if (setup && setup(p->b))
			_exit(1);
		prober_body(p->b, cmd[0], rep[1]);
	}
	close(cmd[0]);
	close(rep[1]);
	p->cmd = cmd[1];
	p->rep = rep[0];
	return ASSERT_TRUE(p->pid > 0, "fork a prober");
}

bool bp_prober_auto(struct bp_prober *p, bool on)
{
	p->b->budget = 16;
	if (on)
		p->b->idle = 0;
	p->b->probing = on;
	return on || ASSERT_TRUE(bp_spin_until(&p->b->idle, 1, 10), "the prober stopped");
}

int bp_prober_probe(struct bp_prober *p, int nr)
{
	int st = -1;

	if (write(p->cmd, &nr, sizeof(nr)) != sizeof(nr) ||
	    read(p->rep, &st, sizeof(st)) != sizeof(st))
		test_fail(__FILE__, __LINE__, "the prober (pid %d) did not answer", p->pid);
	return st;
}

void bp_prober_end(struct bp_prober *p, struct bp_tally *t)
{
	if (p->pid <= 0)
		return;
	close(p->cmd);
	close(p->rep);
	kill(p->pid, SIGKILL);
	waitpid(p->pid, NULL, 0);
	p->pid = 0;
	if (t)
		bp_tally_add(t, &p->b->t);
	munmap(p->b, sizeof(*p->b));
	p->b = NULL;
}

double bp_now(void)
{
	return test_now_s();
}

/* Where a hung process's threads are: what each waits in, to read in the
 * failure (observation only). */
static void say_where(pid_t pid)
{
	char path[320], sc[128], wchan[64];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	while (d && (e = readdir(d))) {
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		sc[0] = wchan[0] = '\0';
		snprintf(path, sizeof(path), "/proc/%d/task/%s/syscall", pid, e->d_name);
		if ((f = fopen(path, "r"))) {
			if (!fgets(sc, sizeof(sc), f))
				sc[0] = '\0';
			fclose(f);
		}
		snprintf(path, sizeof(path), "/proc/%d/task/%s/wchan", pid, e->d_name);
		if ((f = fopen(path, "r"))) {
			if (!fgets(wchan, sizeof(wchan), f))
				wchan[0] = '\0';
			fclose(f);
		}
		sc[strcspn(sc, "\n")] = '\0';
		test_log("    thread %s: syscall %s; waits in %s\n", e->d_name, sc, wchan);
	}
	if (d)
		closedir(d);
}

int bp_wait(pid_t pid, double timeout_s)
{
	double end = bp_now() + timeout_s * (test_is_emulated() ? 10 : 1);
	int st, spins = 0;

	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG | __WALL);

		if (r == pid)
			return st;
		if (r < 0) {
			test_fail(__FILE__, __LINE__, "waitpid %d: %s", pid, strerror(errno));
			return -1;
		}
		if (bp_now() > end) {
			test_fail(__FILE__, __LINE__, "process %d hung; killed", pid);
			say_where(pid);
			kill(pid, SIGKILL);
			waitpid(pid, &st, __WALL);
			return -1;
		}
		/* Most waits end within microseconds: yield first, sleep later. */
		if (spins++ < 200)
			sched_yield();
		else
			usleep(200);
	}
}

bool bp_spin_until(volatile int *flag, int value, double timeout_s)
{
	double end = bp_now() + timeout_s * (test_is_emulated() ? 10 : 1);

	while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) < value) {
		if (bp_now() > end)
			return false;
		sched_yield();
	}
	return true;
}

struct sf_runtime *bp_runtime_open(bool force_tracepoint)
{
	struct sf_runtime_opts opts = { .force_tracepoint = force_tracepoint,
					.verbose = getenv("SF_VERBOSE") != NULL };
	struct sf_runtime *rt = NULL;
	int err = sf_runtime_open(&rt, &opts);

	if (err == -EPERM || err == -ENOSYS) {
		test_skip("sf_runtime_open: %s: this kernel refuses tp_btf/sys_enter "
			  "programs or task storage (needs root, BTF, BPF tracing)",
			  strerror(-err));
		return NULL;
	}
	if (!ASSERT_OK(err, "sf_runtime_open"))
		return NULL;
	test_log("runtime tier: %s\n", sf_tier_name(sf_runtime_tier(rt)));
	return rt;
}

int bp_attach(struct sf_runtime *rt, pid_t tid, const struct sock_fprog *prog,
	      unsigned int flags, unsigned int *filter_id, bool quiet)
{
	struct c2e_error e;
	uint32_t id = 0;
	int err;

	memset(&e, 0, sizeof(e));
	err = sf_runtime_attach(rt, tid, prog, flags, &id, &e);
	if (err && !quiet) {
		char buf[256];

		test_fail(__FILE__, __LINE__, "sf_runtime_attach(tid %d, %u insns, flags 0x%x): "
			  "%d (%s) %s", tid, prog->len, flags, err, strerror(err < 0 ? -err : 0),
			  c2e_error_str(&e, buf, sizeof(buf)));
	}
	if (filter_id)
		*filter_id = id;
	return err;
}

__asm__(
	".text\n"
	".globl bp_clone3_run\n"
	".type bp_clone3_run, @function\n"
	"bp_clone3_run:\n"
	"	pushq %rbx\n"
	"	movq %rdx, %rbx\n"   /* fn: callee-saved, kept across the syscall */
	"	movl $435, %eax\n"   /* __NR_clone3 */
	"	syscall\n"
	"	testq %rax, %rax\n"
	"	jnz 1f\n"
	"	subq $256, %rsp\n"   /* clear of whatever the parent's frame holds */
	"	andq $-16, %rsp\n"
	"	call *%rbx\n"
	"	ud2\n"
	"1:	popq %rbx\n"
	"	ret\n"
	".size bp_clone3_run, .-bp_clone3_run\n"
	".previous\n");

long bp_denied_call(void)
{
	return syscall(SYS_getppid);
}

long bp_allowed_call(void)
{
	return syscall(SYS_getgid);
}
