// SPDX-License-Identifier: GPL-2.0-only
/*
 * The gate's judge: a call that a task's kernel seccomp filter (its gate)
 * sent up to sfilterd, decided with the task's chain as it stands, by the
 * reference interpreter over the notification's seccomp_data. The
 * dispatcher would decide the same call the same way at its sys_enter;
 * it never sees a call the gate refuses, since seccomp runs first
 * (syscall_trace_enter()) and a refused call is skipped.
 */
#define _GNU_SOURCE
#include "internal.h"
#include "sfilter.skel.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/audit.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

/* The recv that brings sf_attach()'s reply, on the armed socket: the BPF
 * side's reply_recv(), over seccomp_data. */
static bool reply_recv(const struct seccomp_data *sd, int fd)
{
	if (sd->arch == AUDIT_ARCH_I386)
		return (sd->nr == SF_NR_I386_RECVFROM || sd->nr == SF_NR_I386_RECVMSG) &&
		       (int32_t)sd->args[0] == fd;
	return sd->arch == AUDIT_ARCH_X86_64 &&
	       (sd->nr == SF_NR_RECVFROM || sd->nr == SF_NR_RECVMSG) &&
	       (int32_t)sd->args[0] == fd;
}

/* The enforced fold of chain n over sd, newest first as the kernel runs
 * them (c2e_stack_eval()), keeping which filter decided. */
static int fold(const struct sf_node *n, const struct seccomp_data *sd,
		struct sf_judgement *out)
{
	const struct sf_node *w;

	out->ret = SECCOMP_RET_ALLOW;
	for (w = n; w; w = w->parent) {
		struct sock_filter *twin = NULL;
		const struct sock_filter *insns = w->insns;
		size_t len = w->len;
		uint32_t r, best;

		if (w->flags & (SF_FLAG_COMPLAIN | SF_FLAG_SHADOW))
			continue;
		if (w->flags & SF_FLAG_RFC2012) {
			enum c2e_abi abi = (enum c2e_abi)SF_FLAGS_ABI(w->flags);

			if (c2e_rfc_to_seccomp(abi, w->insns, w->len, &twin, &len, NULL))
				return -EOPNOTSUPP;
			insns = twin;
		}
		r = c2e_interpret(insns, len, sd);
		free(twin);
		best = c2e_stack_combine(out->ret, r);
		if (best != out->ret) {
			out->ret = best;
			out->filter_id = w->id;
			out->flags = w->flags;
		}
	}
	return 0;
}

int sf_runtime_judge(struct sf_runtime *rt, pid_t tid, const struct seccomp_data *sd,
		     struct sf_judgement *out)
{
	struct sf_rt_recs r;
	const struct sf_iter_rec *rec = NULL;
	struct sf_node *n;
	uint32_t chain;
	size_t i;
	int err;

	memset(out, 0, sizeof(*out));
	out->ret = SECCOMP_RET_ALLOW;
	out->exact = true;
	pthread_mutex_lock(&rt->lock);
	err = sf_rt_iter_find(rt, tid, &r);
	if (err)
		goto out;
	for (i = 0; i < r.n; i++)
		if (r.r[i].tid == (uint32_t)tid)
			rec = &r.r[i];
	if (!rec) {
		err = -ESRCH;
		goto out_free;
	}
	out->tgid = (pid_t)rec->tgid;
	out->leader_start = rec->leader_start;
	out->leader_boot = rec->leader_boot;
	out->exec_id = rec->exec_id;
	out->euid = rec->euid;
	out->uid = rec->uid;
	out->account = rec->account;
	memcpy(out->comm, rec->comm, sizeof(out->comm));
	/* What sf_dispatch skips: a stopped runtime, a chain waiting for
	 * exec, no chain. */
	out->chainless = !rec->chain;
	if (__atomic_load_n(&rt->bss->sf_stopped, __ATOMIC_SEQ_CST) || rec->at_exec ||
	    !rec->chain)
		goto out_free;
	chain = rec->chain;
	if (rec->armed_fd >= 0 && reply_recv(sd, rec->armed_fd)) {
		/* The reply's recv runs under the chain before the arm: none,
		 * for a first attach. */
		chain = rec->old;
		if (!chain)
			goto out_free;
	}
	n = chain < SF_MAX_CHAINS ? rt->slots[chain] : NULL;
	if (!n || fold(n, sd, out)) {
		out->ret = SECCOMP_RET_ALLOW;
		out->filter_id = 0;
		out->flags = 0;
		out->exact = false;
	}
out_free:
	free(r.r);
out:
	pthread_mutex_unlock(&rt->lock);
	return err;
}

/* ---- answering a notification --------------------------------------------- */

static struct seccomp_notif_sizes sizes;
static pthread_once_t sizes_once = PTHREAD_ONCE_INIT;

static void get_sizes(void)
{
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0)
		memset(&sizes, 0, sizeof(sizes));
	if (sizes.seccomp_notif < sizeof(struct seccomp_notif))
		sizes.seccomp_notif = sizeof(struct seccomp_notif);
	if (sizes.seccomp_notif_resp < sizeof(struct seccomp_notif_resp))
		sizes.seccomp_notif_resp = sizeof(struct seccomp_notif_resp);
}

static bool id_valid(int fd, uint64_t id)
{
	return ioctl(fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

static int answer(int fd, uint64_t id, int64_t val, int32_t error, uint32_t flags)
{
	struct seccomp_notif_resp *r = calloc(1, sizes.seccomp_notif_resp);
	int err = 0;

	if (!r)
		return -ENOMEM;
	r->id = id;
	r->val = val;
	r->error = error;
	r->flags = flags;
	if (ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, r) < 0)
		err = -errno;
	free(r);
	return err;
}

/* SIGSYS blocked or ignored by thread tid: the kernel's force_sig() would
 * then kill the process rather than run a handler. A status that cannot
 * be read counts as refused (fail closed: the process is killed). */
static bool sigsys_refused(pid_t tid)
{
	char path[64], line[256];
	unsigned long long mask;
	bool refused;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "re");
	if (!f)
		return true;
	refused = false;
	while (fgets(line, sizeof(line), f))
		if ((sscanf(line, "SigBlk: %llx", &mask) == 1 ||
		     sscanf(line, "SigIgn: %llx", &mask) == 1) &&
		    (mask & (1ULL << (SIGSYS - 1))))
			refused = true;
	fclose(f);
	return refused;
}

/* SIGKILL to process tgid while notification id is still the calling
 * task's: its process then cannot have been replaced under the pid. The
 * call never runs: the task dies in its wait. */
static bool kill_process(int fd, uint64_t id, pid_t tgid)
{
	int pfd = (int)syscall(SYS_pidfd_open, tgid, 0);
	bool done = false;

	if (pfd < 0)
		return false;
	if (id_valid(fd, id))
		done = syscall(SYS_pidfd_send_signal, pfd, SIGKILL, NULL, 0) == 0;
	close(pfd);
	return done;
}

/* SIGSYS to thread tid as force_sig_seccomp() fills it, but for si_code:
 * only the kernel may send a positive one (a sender from another process
 * gets EPERM in do_rt_tgsigqueueinfo()). */
static void send_sigsys(pid_t tgid, pid_t tid, const struct seccomp_data *sd, uint32_t ret)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	si.si_signo = SIGSYS;
	si.si_code = SI_QUEUE;
	si.si_errno = (int)(ret & SECCOMP_RET_DATA);
	si.si_call_addr = (void *)(uintptr_t)sd->instruction_pointer;
	si.si_syscall = sd->nr;
	si.si_arch = sd->arch;
	syscall(SYS_rt_tgsigqueueinfo, tgid, tid, SIGSYS, &si);
}

static int deny(int fd, uint64_t id, int e, struct sf_gate_outcome *out)
{
	out->taken = answer(fd, id, 0, -e, 0) ? SF_GATE_GONE : SF_GATE_DENIED;
	out->err = e;
	return 0;
}

int sf_runtime_gate_call_of(const void *buf, size_t size, struct sf_gate_call *call)
{
	struct seccomp_notif n;

	if (size < sizeof(n))
		return -ENOENT;
	memcpy(&n, buf, sizeof(n));
	if (!n.id && !n.pid)
		return -ENOENT;
	call->id = n.id;
	call->tid = (pid_t)n.pid;
	call->data = n.data;
	return 0;
}

int sf_runtime_gate_recv(int fd, void *buf, size_t size, struct sf_gate_call *call)
{
	void *n = buf;
	int r = 0;

	pthread_once(&sizes_once, get_sizes);
	if (!buf || size < sizes.seccomp_notif) {
		n = calloc(1, sizes.seccomp_notif);
		if (!n)
			return -ENOMEM;
	}
	/* NOTIF_RECV refuses a buffer that is not zeroed; a record of a
	 * call it did not fill must hold none either. */
	if (buf)
		memset(buf, 0, size);
	if (n != buf)
		memset(n, 0, sizes.seccomp_notif);
	if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, n) < 0)
		r = errno == EINTR ? -ENOENT : -errno;
	if (!r && n != buf && buf && size >= sizeof(struct seccomp_notif))
		memcpy(buf, n, sizeof(struct seccomp_notif));
	if (!r)
		r = sf_runtime_gate_call_of(n, sizes.seccomp_notif, call) ? -EPROTO : 0;
	if (n != buf)
		free(n);
	return r;
}

int sf_runtime_gate_answer(struct sf_runtime *rt, int fd, bool killable,
			   struct sf_gate_outcome *out)
{
	struct sf_gate_call call;
	int r = sf_runtime_gate_recv(fd, NULL, 0, &call);

	if (r) {
		memset(out, 0, sizeof(*out));
		return r;
	}
	return sf_runtime_gate_decide(rt, fd, killable, &call, out);
}

/* Whether a task the judge cannot find may be a fork child whose storage
 * is still to come (sf_orphans) while some chain is on a stand-in. */
static bool orphan_on_standin(struct sf_runtime *rt)
{
	if (!__atomic_load_n(&rt->bss->sf_orphans_pending, __ATOMIC_SEQ_CST))
		return false;
	return sf_runtime_standins(rt) > 0;
}

int sf_runtime_gate_decide(struct sf_runtime *rt, int fd, bool killable,
			   const struct sf_gate_call *call, struct sf_gate_outcome *out)
{
	struct sf_judgement *j = &out->j;
	uint64_t id = call->id;
	uint32_t delay;
	int r;

	pthread_once(&sizes_once, get_sizes);
	memset(out, 0, sizeof(*out));
	out->tid = call->tid;
	out->data = call->data;
	r = out->tid ? sf_runtime_judge(rt, out->tid, &out->data, j) : -ESRCH;
	if ((r == -ESRCH || (!r && j->chainless)) && orphan_on_standin(rt)) {
		/* A fork child with no storage yet takes its chain at its
		 * first sys_enter, after this: its parent's, which may be on
		 * a stand-in that does not run the filter this gate sent the
		 * call up for. Any task the gate covers without a chain may
		 * be one while orphans are pending: refused (ENOSYS, as with
		 * no listener), stricter than the filter, never looser. */
		if (!id_valid(fd, id)) {
			out->taken = SF_GATE_GONE;
			return 0;
		}
		return deny(fd, id, ENOSYS, out);
	}
	if (r || !j->exact) {
		/* Not this judge's to decide (a task outside our view, a chain
		 * it cannot run): the dispatcher judges the call at its
		 * sys_enter, as it would without a gate. */
		out->taken = answer(fd, id, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE) ?
			     SF_GATE_GONE : SF_GATE_UNJUDGED;
		return 0;
	}
	delay = __atomic_load_n(&rt->test_gate_delay_us, __ATOMIC_SEQ_CST);
	if (delay)
		usleep(delay);
	/* The task might have died and its tid been reused while its chain
	 * was read: answer only while the notification is still its own. */
	if (!id_valid(fd, id)) {
		out->taken = SF_GATE_GONE;
		return 0;
	}
	switch (c2e_effective_action(j->ret)) {
	case SECCOMP_RET_ALLOW:
	case SECCOMP_RET_LOG: /* logged by the dispatcher as the call enters */
		out->taken = answer(fd, id, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE) ?
			     SF_GATE_GONE : SF_GATE_CONTINUED;
		return 0;
	case SECCOMP_RET_ERRNO: /* __seccomp_filter() caps it at MAX_ERRNO */
		return deny(fd, id, (int)((j->ret & SECCOMP_RET_DATA) > C2E_MAX_ERRNO ?
					  C2E_MAX_ERRNO : (j->ret & SECCOMP_RET_DATA)), out);
	case SECCOMP_RET_TRACE:
	case SECCOMP_RET_USER_NOTIF:
		/* No tracer, no listener of the chain's own: ENOSYS, as the
		 * kernel answers then. */
		return deny(fd, id, ENOSYS, out);
	case SECCOMP_RET_TRAP:
		if (!sigsys_refused(out->tid)) {
			/* syscall_rollback() leaves the call's number as its
			 * return value. A task that waits killably keeps
			 * waiting with SIGSYS pending, and takes it as the
			 * call returns; one that does not would be woken by
			 * it and restart the call, so it gets it after. */
			if (killable && id_valid(fd, id))
				send_sigsys(j->tgid, out->tid, &out->data, j->ret);
			if (answer(fd, id, out->data.nr, 0, 0)) {
				out->taken = SF_GATE_GONE;
				return 0;
			}
			if (!killable)
				send_sigsys(j->tgid, out->tid, &out->data, j->ret);
			out->taken = SF_GATE_TRAPPED;
			return 0;
		}
		/* force_sig() of a blocked or ignored SIGSYS kills. */
		/* fallthrough */
	default:
		/* KILL_PROCESS, KILL_THREAD (no thread alone can be killed
		 * from outside: its process is), unknown actions. */
		if (kill_process(fd, id, j->tgid)) {
			out->taken = SF_GATE_KILLED;
			return 0;
		}
		/* Gone, or not ours to kill: the call never runs either way. */
		return deny(fd, id, ENOSYS, out);
	}
}

bool sf_runtime_gate_event(const struct sf_gate_outcome *o, struct sf_event *ev)
{
	const struct sf_judgement *j = &o->j;
	struct timespec ts;

	memset(ev, 0, sizeof(*ev));
	switch (o->taken) {
	case SF_GATE_DENIED:
		ev->taken = SF_TAKEN_DENIED;
		ev->err = (uint16_t)o->err;
		break;
	case SF_GATE_TRAPPED:
		ev->taken = SF_TAKEN_TRAPPED;
		ev->signal = SIGSYS;
		break;
	case SF_GATE_KILLED:
		ev->taken = SF_TAKEN_KILLED;
		ev->signal = SIGKILL;
		break;
	default:
		return false;
	}
	clock_gettime(CLOCK_BOOTTIME, &ts);
	ev->time_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	ev->pid = (uint32_t)j->tgid;
	ev->tid = (uint32_t)o->tid;
	memcpy(ev->comm, j->comm, sizeof(ev->comm));
	ev->nr = o->data.nr;
	ev->arch = o->data.arch;
	memcpy(ev->args, o->data.args, sizeof(ev->args));
	ev->ip = o->data.instruction_pointer;
	ev->ret = j->ret;
	ev->filter_id = j->filter_id;
	ev->tier = SF_BPF_TIER_GATE;
	ev->flags = (uint16_t)j->flags;
	ev->uid = j->uid;
	ev->enforced = j->ret;
	ev->insn = SF_INSN_NONE;
	ev->account = j->account;
	ev->start_ns = j->leader_boot;
	ev->exec_id = j->exec_id;
	return true;
}
