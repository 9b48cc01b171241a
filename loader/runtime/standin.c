// SPDX-License-Identifier: GPL-2.0-only
/*
 * A new chain's stand-in. The kernel's verifier takes milliseconds for a
 * large filter, longer than seccomp(2) takes to install it; a self-attach
 * that has gated its filter need not wait for it. A gated task has in its
 * kernel seccomp stack a filter built from the new one that passes in the
 * kernel only the calls the filter allows for every argument, and sends
 * every other call up to sfilterd, whose judge runs the task's chain, the
 * classic filters, with the reference interpreter (judge.c). So for such a
 * task the new filter is enforced before any program of it exists, and
 * what the chain's program must still do is the rest of the chain: the
 * parent's filters, which the parent's program runs.
 *
 * The node gets its slot at once, with the parent's program in it (or, for
 * a first filter, one that allows every call), and the attach goes on; its
 * own program is loaded later (sf_runtime_settle_standins(), off the reply
 * path) and swapped in by one PROG_ARRAY update. What makes that exact:
 *
 *   - Only a gated ATTACH gives a task a chain on its stand-in, and the
 *     gate goes wherever the chain goes (fork, exec, TSYNC: both are the
 *     kernel's and the runtime's inheritance of the same task).
 *   - Every other attach (another process's, a cgroup's, an admin's)
 *     finds the node not loaded (sf_rt_node_loaded()) and loads its
 *     program first, which settles it for everyone.
 *   - The parent's program is the parent's own: a parent on its stand-in
 *     is not stood in for (a task given the parent by a plain attach
 *     since it settled may have no gate for it).
 *   - The judge must decide every call the gate sends up: no filter of the
 *     chain is a 2012 one (registers seccomp_data lacks: the judge would
 *     leave it to the program), and the new filter neither logs (its LOG
 *     action, SECCOMP_FILTER_FLAG_LOG: the dispatcher's to write) nor
 *     counts, shadows or complains (the program's to do).
 *   - The state file records the stand-in: an adopting runtime settles it
 *     too and never takes it for loaded.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <linux/seccomp.h>

/* Whether the judge decides every call node's gate sends up, and node's
 * program adds nothing to that while the gate holds. */
static bool standin_ok(const struct sf_node *node)
{
	const struct sf_node *w;
	size_t i;

	if (node->flags & (SF_FLAG_LOG | SF_FLAG_COUNT | SF_FLAG_SHADOW | SF_FLAG_COMPLAIN |
			   SF_FLAG_AT_EXEC))
		return false;
	if (node->parent && !sf_rt_node_loaded(node->parent))
		return false;
	for (w = node; w; w = w->parent)
		if (w->flags & SF_FLAG_RFC2012)
			return false;
	for (i = 0; i < node->len; i++) {
		const struct sock_filter *f = &node->insns[i];

		if (BPF_CLASS(f->code) != BPF_RET)
			continue;
		/* RET A may be anything, LOG included. */
		if (BPF_RVAL(f->code) != BPF_K ||
		    (f->k & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_LOG)
			return false;
	}
	return true;
}

/* A program of a chain that allows every call, loaded once. */
static int allow_fd(struct sf_runtime *rt)
{
	static const struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sf_chain_filter cf = { &allow, 1, 0, 0, 0 };
	struct sf_chain_maps maps = { rt->fd_tasks, rt->fd_progs, rt->fd_hits };
	struct c2e_ebpf prog = { 0 };
	int fd;

	if (rt->standin_allow_fd > 0)
		return rt->standin_allow_fd;
	fd = sf_chain_emit(&rt->layout, &cf, 1, &maps, false, &prog);
	if (!fd)
		fd = sf_chain_load(&rt->layout, &prog, rt->verbose);
	c2e_ebpf_free(&prog);
	if (fd > 0)
		rt->standin_allow_fd = fd;
	return fd < 0 ? fd : fd > 0 ? fd : -EINVAL;
}

/* The program in slot (an adopted runtime has no fd of its own): a new
 * fd, or -errno. */
static int slot_prog_fd(struct sf_runtime *rt, int slot)
{
	uint32_t key = (uint32_t)slot, id = 0;
	int fd;

	if (bpf_map_lookup_elem(rt->fd_progs, &key, &id))
		return -errno;
	fd = bpf_prog_get_fd_by_id(id);
	return fd < 0 ? -errno : fd;
}

int sf_rt_standin_install(struct sf_runtime *rt, struct sf_node *node)
{
	struct sf_chain_build b = SF_CHAIN_BUILD_INIT;
	int fd, err;

	if (node->slot || node->dead || !standin_ok(node))
		return -EAGAIN;
	fd = node->parent ? slot_prog_fd(rt, node->parent->slot) : allow_fd(rt);
	if (fd < 0)
		return fd;
	/* The install as for the chain's own program, its table deferred
	 * (computed from the classic filters: the same for either program),
	 * with the stand-in's fd, which the slot keeps, not the node. */
	b.node = node;
	b.prog_fd = node->parent ? fd : dup(fd);
	b.search = false;
	b.standin = true;
	if (b.prog_fd < 0)
		return -errno;
	err = sf_rt_build_install(rt, &b);
	if (b.prog_fd >= 0)
		close(b.prog_fd);
	return err;
}

void sf_rt_standin_close(struct sf_runtime *rt)
{
	if (rt->standin_allow_fd > 0)
		close(rt->standin_allow_fd);
	rt->standin_allow_fd = 0;
}

/* The next chain on its stand-in that no other thread is settling and
 * the kernel has not refused, its build begun and marked: 1, 0, or
 * -errno. */
static int next_standin(struct sf_runtime *rt, struct sf_chain_build *b)
{
	int i;

	for (i = 1; i < SF_MAX_CHAINS; i++) {
		struct sf_node *n = rt->slots[i];

		if (!n || !n->standin || n->dead || n->slot != i || n->settling ||
		    n->settle_failed)
			continue;
		n->settling = true;
		return sf_rt_build_begin(rt, n, b) ?: 1;
	}
	return 0;
}

int sf_runtime_settle_standins(struct sf_runtime *rt)
{
	uint32_t delay = __atomic_load_n(&rt->test_settle_delay_ms, __ATOMIC_SEQ_CST);
	int settled = 0, stale = 0, first_err = 0;

	if (delay)
		usleep(delay * 1000);
	while (stale < 4) {
		struct sf_chain_build b = SF_CHAIN_BUILD_INIT;
		struct sf_node *node;
		int found, nice, err;

		nice = sf_rt_lock_unniced(rt);
		found = next_standin(rt, &b);
		node = b.node;
		if (found < 0 && node)
			node->settling = false;
		sf_rt_unlock_reniced(rt, nice);
		if (found <= 0) {
			sf_rt_build_free(&b);
			if (found < 0 && !first_err)
				first_err = found;
			break;
		}
		/* b keeps the node from the reaper (rt->building) until freed. */
		err = sf_rt_build_run(rt, &b);
		nice = sf_rt_lock_unniced(rt);
		if (!err)
			err = sf_rt_build_install(rt, &b);
		node->settling = false;
		if (err && err != -ESTALE) {
			node->settle_failed = true;
			fprintf(stderr, "sfilter: chain of filter %u: its program was not loaded "
				"(%s); its stand-in stays, the gate and the judge enforcing the "
				"filter\n", node->id, strerror(-err));
		}
		sf_rt_unlock_reniced(rt, nice);
		sf_rt_build_free(&b);
		if (err == -ESTALE) {
			stale++;
		} else if (err) {
			if (!first_err)
				first_err = err;
		} else {
			settled++;
		}
	}
	return first_err ? first_err : settled;
}

int sf_runtime_standins(struct sf_runtime *rt)
{
	int i, n = 0;

	pthread_mutex_lock(&rt->lock);
	for (i = 1; i < SF_MAX_CHAINS; i++)
		n += rt->slots[i] && rt->slots[i]->standin && rt->slots[i]->slot == i;
	pthread_mutex_unlock(&rt->lock);
	return n;
}
