// SPDX-License-Identifier: GPL-2.0
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
#include <stdlib.h>
#include <string.h>
#include <linux/audit.h>

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
	memcpy(out->comm, rec->comm, sizeof(out->comm));
	/* What sf_dispatch skips: a stopped runtime, a chain waiting for
	 * exec, no chain. */
	if (__atomic_load_n(&rt->bss->sf_stopped, __ATOMIC_SEQ_CST) || rec->at_exec ||
	    !rec->chain)
		goto out_free;
	chain = rec->chain;
	if (rec->old && reply_recv(sd, rec->armed_fd))
		chain = rec->old;
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
