// SPDX-License-Identifier: GPL-2.0-only
/*
 * The runtime's administration, on whichever kernel the suite
 * runs on: pinned state that survives the death of its owner and is
 * adopted by the next one, complain mode, detach and replace by filter id,
 * and cgroup attach.
 *
 * Victims are forked children that wait on a pipe for a command byte:
 * 'A' getppid, 'B' getuid, 'C' getgid, then report 'y'. A victim that
 * reports nothing and was SIGKILLed died on its syscall.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "victim.h"
#include "progs.h"
#include "runtime.h"
#include "event_json.h"
#include "c2e.h"
#include "cgroup.h"
#include "daemon.h"
#include "sfilter.h"
#include "sfilter.skel.h" /* struct sfilter_bpf__bss: where sf_abi sits */
#include "rtopen.h"

#include <fcntl.h>
#include <stddef.h>
#include <bpf/bpf.h>
#include <sys/mman.h>
#include <signal.h>
#include <stdlib.h>
#include <linux/sched.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static struct sock_filter deny_insns[3][4];

/* Kills on syscall nr, allows the rest (which: one of 3 filters at once). */
static struct sock_fprog deny(int which, int nr)
{
	return progs_kill_on(deny_insns[which], 4, nr);
}

static int attach(struct sf_runtime *rt, pid_t tid, struct sock_fprog p,
		  unsigned int flags, uint32_t *id)
{
	struct c2e_error e;

	return sf_runtime_attach(rt, tid, &p, flags, id, &e);
}

/* ---- restart survival ------------------------------------------------------ */

#define N_VICTIMS 100
#define N_EARLY   10

struct seen {
	struct victim *v;
	int n;
	bool found[N_VICTIMS + 1];
};

static int on_task(void *ctx, const struct sf_task_info *t)
{
	struct seen *s = ctx;
	int i;

	for (i = 0; i < s->n; i++)
		if (s->v[i].pid == t->tid && t->n_filters >= 1)
			s->found[i] = true;
	return 0;
}

TEST(runtime_admin_restart_survival)
{
	struct victim v[N_VICTIMS + 1] = { 0 };
	struct sf_runtime_opts o = { .verbose = getenv("SF_VERBOSE") != NULL };
	struct sf_runtime *rt = NULL;
	char pin[64];
	struct seen seen = { 0 };
	bool adopted = true;
	int i, status, sync[2], n_alive = 0;
	pid_t daemon;
	char c;

	snprintf(pin, sizeof(pin), "/sys/fs/bpf/sfilter-test-%d", getpid());
	sf_runtime_uninstall_dir(pin);
	for (i = 0; i < N_VICTIMS; i++)
		if (!ASSERT_TRUE(victim_start(&v[i]), "victim"))
			goto out;
	if (pipe(sync))
		goto out;
	daemon = fork();
	if (daemon == 0) {
		/* The "daemon": installs, confines, reports, then waits to die. */
		struct sf_runtime *d = NULL;
		bool ad = true;

		close(sync[0]);
		if (sf_runtime_open_pinned(&d, &o, pin, &ad) || ad)
			_exit(1);
		for (i = 0; i < N_VICTIMS; i++)
			if (attach(d, v[i].pid, deny(0, SYS_getppid), 0, NULL))
				_exit(2);
		if (write(sync[1], "k", 1) != 1)
			_exit(3);
		for (;;)
			pause();
	}
	close(sync[1]);
	if (!ASSERT_EQ(read(sync[0], &c, 1), 1, "daemon confined the victims")) {
		waitpid(daemon, &status, 0);
		test_log("daemon exit status %d\n", WEXITSTATUS(status));
		close(sync[0]);
		goto out;
	}
	close(sync[0]);
	kill(daemon, SIGKILL);
	waitpid(daemon, &status, 0);
	ASSERT_TRUE(WIFSIGNALED(status), "daemon SIGKILLed");

	/* Still confined with nobody holding the runtime open. */
	for (i = 0; i < N_VICTIMS; i++)
		if (!ASSERT_EQ(victim_do(&v[i], 'C'), 1, "allowed call after daemon death"))
			goto out;
	for (i = 0; i < N_EARLY; i++)
		ASSERT_EQ(victim_do(&v[i], 'A'), 0, "denied call kills after daemon death");

	/* A new runtime adopts the pins. */
	if (!ASSERT_OK(sf_runtime_open_pinned(&rt, &o, pin, &adopted), "reopen pinned"))
		goto out;
	ASSERT_TRUE(adopted, "adopted");
	seen.v = v;
	seen.n = N_VICTIMS;
	ASSERT_OK(sf_runtime_for_each_task(rt, on_task, &seen), "for_each_task");
	for (i = N_EARLY; i < N_VICTIMS; i++)
		n_alive += seen.found[i];
	ASSERT_EQ(n_alive, N_VICTIMS - N_EARLY, "confined tasks listed after adoption");

	/* A new task, a second filter on an adopted chain. */
	if (ASSERT_TRUE(victim_start(&v[N_VICTIMS]), "new victim")) {
		ASSERT_OK(attach(rt, v[N_VICTIMS].pid, deny(1, SYS_getuid), 0, NULL),
			  "attach after adoption");
		ASSERT_EQ(victim_do(&v[N_VICTIMS], 'C'), 1, "new task allowed call");
		ASSERT_EQ(victim_do(&v[N_VICTIMS], 'B'), 0, "new task denied call");
	}
	ASSERT_OK(attach(rt, v[N_EARLY].pid, deny(1, SYS_getuid), 0, NULL),
		  "second filter on an adopted chain");
	ASSERT_EQ(victim_do(&v[N_EARLY], 'B'), 0, "adopted chain + new filter kills");
	for (i = N_EARLY + 1; i < N_VICTIMS; i++)
		if (!ASSERT_EQ(victim_do(&v[i], 'A'), 0, "denied call kills after restart"))
			break;
	/* close leaves everything attached. */
	sf_runtime_close(rt);
	rt = NULL;
	if (ASSERT_TRUE(victim_start(&v[0]), "victim after close")) {
		struct sf_runtime *r2 = NULL;

		if (ASSERT_OK(sf_runtime_open_pinned(&r2, &o, pin, &adopted), "third open") &&
		    ASSERT_TRUE(adopted, "adopted again")) {
			ASSERT_OK(attach(r2, v[0].pid, deny(0, SYS_getppid), 0, NULL), "attach");
			ASSERT_OK(sf_runtime_uninstall(r2), "uninstall");
			/* Uninstalled: nothing confines anyone. */
			ASSERT_EQ(victim_do(&v[0], 'A'), 1, "unconfined after uninstall");
			sf_runtime_close(r2);
		}
	}
out:
	for (i = 0; i <= N_VICTIMS; i++)
		victim_end(&v[i]);
	sf_runtime_close(rt);
	sf_runtime_uninstall_dir(pin);
}

/* Pins left by another sfilter version are not adopted (driving programs
 * of another layout could loosen a filter): the open fails with EPROTO,
 * and the old programs go on enforcing until they are uninstalled. */
TEST(runtime_admin_pins_of_another_abi_are_refused_and_keep_enforcing)
{
	struct sf_runtime_opts o = { .verbose = getenv("SF_VERBOSE") != NULL };
	struct sf_runtime *rt = NULL;
	struct victim v = { 0 };
	char pin[64], path[128], bin[PATH_MAX], cmd[PATH_MAX + 256];
	bool adopted = true;
	uint32_t *abi;
	void *m;
	int fd;

	snprintf(pin, sizeof(pin), "/sys/fs/bpf/sfilter-abi-%d", getpid());
	sf_runtime_uninstall_dir(pin);
	if (!ASSERT_OK(sf_runtime_open_pinned(&rt, &o, pin, &adopted), "open pinned") ||
	    !ASSERT_TRUE(victim_start(&v), "victim") ||
	    !ASSERT_OK(attach(rt, v.pid, deny(0, SYS_getppid), 0, NULL), "attach"))
		goto out;
	sf_runtime_close(rt);
	rt = NULL;
	/* What an older version's pins look like to this one. */
	snprintf(path, sizeof(path), "%s/map_bss", pin);
	fd = bpf_obj_get(path);
	if (!ASSERT_TRUE(fd >= 0, "pinned .bss"))
		goto out;
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (!ASSERT_TRUE(m != MAP_FAILED, "mmap .bss"))
		goto out;
	abi = (uint32_t *)((char *)m + offsetof(struct sfilter_bpf__bss, sf_abi));
	ASSERT_EQ(*abi, SF_ABI_VERSION, "the loader recorded its ABI");
	*abi = SF_ABI_VERSION - 1;
	munmap(m, 4096);

	ASSERT_EQ(sf_runtime_open_pinned(&rt, &o, pin, &adopted), -EPROTO,
		  "pins of another ABI: not adopted");
	ASSERT_TRUE(rt == NULL, "no runtime");
	ASSERT_EQ(victim_do(&v, 'C'), 1, "allowed call");
	ASSERT_EQ(victim_do(&v, 'A'), 0, "the old programs still enforce");
	/* sfilterd --uninstall still takes them down. */
	if (sfd_find_bin("sfilterd", "SF_SFILTERD", bin, sizeof(bin))) {
		snprintf(cmd, sizeof(cmd), "'%s' --pin-dir %s --socket /nonexistent/s --uninstall "
			 ">/dev/null 2>&1", bin, pin);
		ASSERT_EQ(system(cmd), 0, "sfilterd --uninstall of another ABI's pins");
		ASSERT_TRUE(access(path, F_OK) != 0, "pins removed");
	}
out:
	victim_end(&v);
	sf_runtime_close(rt);
	sf_runtime_uninstall_dir(pin);
}

/* ---- complain mode ---------------------------------------------------------- */

struct evs {
	int n_complain, n_killed;
	uint32_t complain_id;
};

static int on_ev(void *ctx, const struct sf_event *ev)
{
	struct evs *e = ctx;
	char buf[1024];

	if (sf_event_to_json(ev, buf, sizeof(buf)) > 0)
		test_log("event %s\n", buf);
	if (ev->taken == SF_TAKEN_COMPLAIN) {
		e->n_complain++;
		e->complain_id = ev->filter_id;
	} else if (ev->taken == SF_TAKEN_KILLED) {
		e->n_killed++;
	}
	return 0;
}

static void drain(struct sf_runtime *rt, struct evs *e)
{
	int i;

	for (i = 0; i < 5; i++)
		sf_runtime_poll_events(rt, 50, on_ev, e);
}

TEST(runtime_admin_complain_and_detach_replace)
{
	struct sf_runtime *rt = rtopen();
	struct victim v = { 0 }, w = { 0 }, x = { 0 };
	struct evs e = { 0 };
	uint32_t cid = 0, a = 0, b = 0, b2 = 0;
	struct sock_filter *insns = NULL;
	struct sf_filter_info fi;
	struct c2e_error err;
	struct sock_fprog r;

	if (!rt)
		return;
	/* Complain: logged, not enforced; enforcing filters still decide. */
	if (!ASSERT_TRUE(victim_start(&v), "victim"))
		goto out;
	ASSERT_OK(attach(rt, v.pid, deny(0, SYS_getppid), SF_ATTACH_COMPLAIN, &cid),
		  "attach complain");
	ASSERT_EQ(victim_do(&v, 'A'), 1, "complain filter does not kill");
	drain(rt, &e);
	ASSERT_EQ(e.n_complain, 1, "complain events");
	ASSERT_EQ(e.complain_id, cid, "complain event names the filter");
	ASSERT_OK(attach(rt, v.pid, deny(1, SYS_getuid), 0, NULL), "attach enforcing");
	ASSERT_EQ(victim_do(&v, 'A'), 1, "still only complained");
	ASSERT_EQ(victim_do(&v, 'C'), 1, "allowed");
	drain(rt, &e);
	ASSERT_EQ(e.n_complain, 2, "complain events in a mixed chain");
	ASSERT_EQ(victim_do(&v, 'B'), 0, "enforcing filter kills in a mixed chain");
	ASSERT_OK(sf_runtime_filter(rt, cid, &fi, &insns), "sf_runtime_filter");
	ASSERT_EQ(fi.flags & SF_ATTACH_COMPLAIN, SF_ATTACH_COMPLAIN, "complain flag kept");
	ASSERT_EQ(fi.len, 4, "filter length");
	free(insns);
	ASSERT_OK(sf_runtime_set_owner(rt, cid, 1234), "set_owner");
	ASSERT_OK(sf_runtime_filter(rt, cid, &fi, NULL), "filter info");
	ASSERT_EQ(fi.owner, 1234, "owner");

	/* Detach frees a task from one filter and keeps its others. */
	if (!ASSERT_TRUE(victim_start(&w), "victim w"))
		goto out;
	ASSERT_OK(attach(rt, w.pid, deny(0, SYS_getppid), 0, &a), "attach a");
	ASSERT_OK(attach(rt, w.pid, deny(1, SYS_getuid), 0, &b), "attach b");
	ASSERT_NEQ(a, b, "distinct ids");
	ASSERT_OK(sf_runtime_detach(rt, a), "detach a");
	ASSERT_EQ(sf_runtime_detach(rt, a), -ENOENT, "detach a again");
	ASSERT_EQ(victim_do(&w, 'A'), 1, "detached filter no longer kills");
	ASSERT_EQ(victim_do(&w, 'B'), 0, "the other filter still kills");

	/* Replace swaps one filter, in place. */
	if (!ASSERT_TRUE(victim_start(&x), "victim x"))
		goto out;
	ASSERT_OK(attach(rt, x.pid, deny(0, SYS_getppid), 0, &a), "attach a");
	ASSERT_OK(attach(rt, x.pid, deny(1, SYS_getuid), 0, &b2), "attach b");
	r = deny(2, SYS_getgid);
	ASSERT_OK(sf_runtime_replace(rt, b2, &r, &err), "replace b");
	ASSERT_EQ(victim_do(&x, 'B'), 1, "replaced filter no longer kills");
	ASSERT_OK(sf_runtime_filter(rt, b2, &fi, NULL), "replaced id still there");
	ASSERT_EQ(victim_do(&x, 'C'), 0, "the replacement kills");
out:
	victim_end(&v);
	victim_end(&w);
	victim_end(&x);
	sf_runtime_close(rt);
}

/* ---- cgroup ------------------------------------------------------------------ */

/* A replacement that cannot be built (the chain would pass the kernel's
 * 32768-instruction rule) fails whole: the old filter stays in force,
 * and the runtime goes on working. */
TEST(a_replace_that_would_overflow_the_chain_fails_and_keeps_the_old_filter)
{
	static struct sock_filter big[4096], small2[4];
	struct sock_fprog r = progs_kill_on(big, 4096, SYS_getgid);
	struct sf_runtime *rt = rtopen();
	struct victim v = { 0 };
	struct c2e_error err;
	uint32_t small, id;
	int n;

	if (!rt || !ASSERT_TRUE(victim_start(&v), "victim"))
		goto out;
	ASSERT_OK(attach(rt, v.pid, deny(0, SYS_getppid), 0, &small), "attach the small filter");
	for (n = 0; n < 16; n++)
		if (attach(rt, v.pid, progs_kill_on(big, 4096, SYS_getgid), 0, &id))
			break;
	test_log("%d filters of 4096 instructions fit beside the small one\n", n);
	if (!ASSERT_TRUE(n < 16, "the chain filled up"))
		goto out;
	ASSERT_EQ(sf_runtime_replace(rt, small, &r, &err), -ENOMEM,
		  "replacing the small filter by a big one: ENOMEM");
	ASSERT_EQ(victim_do(&v, 'B'), 1, "an allowed call still runs");
	r = progs_kill_on(small2, 4, SYS_getuid);
	ASSERT_OK(sf_runtime_replace(rt, small, &r, &err), "a replacement that fits still works");
	ASSERT_EQ(victim_do(&v, 'A'), 1, "the replaced filter no longer kills");
	ASSERT_EQ(victim_do(&v, 'B'), 0, "the replacement kills");
out:
	victim_end(&v);
	sf_runtime_close(rt);
}

TEST(runtime_admin_cgroup_joiner_confined)
{
	struct sf_runtime *rt = NULL;
	struct victim v = { 0 }, u = { 0 };
	struct sock_fprog p = deny(0, SYS_getppid);
	char cg[512];
	struct c2e_error e;
	uint32_t id = 0;

	if (!tcg_make(cg, sizeof(cg), "sfilter-test"))
		return;
	rt = rtopen();
	if (!rt)
		goto out;
	if (!ASSERT_OK(sf_runtime_attach_cgroup(rt, cg, &p, 0, &id, &e), "attach_cgroup"))
		goto out;
	ASSERT_NEQ(id, 0, "cgroup filter id");
	/* An unconfined process that joins later. */
	if (!ASSERT_TRUE(victim_start(&v), "victim"))
		goto out;
	ASSERT_EQ(victim_do(&v, 'A'), 1, "outside the cgroup: allowed");
	if (!ASSERT_TRUE(tcg_move(cg, v.pid), "move into cgroup"))
		goto out;
	ASSERT_EQ(victim_do(&v, 'A'), 0, "joiner killed on its first denied call");
	/* A confined process that joins later: the queue, resolved by
	 * process_pending (the daemon's poll loop). */
	if (!ASSERT_TRUE(victim_start(&u), "victim u"))
		goto out;
	ASSERT_OK(attach(rt, u.pid, deny(1, SYS_getuid), 0, NULL), "own filter");
	if (!ASSERT_TRUE(tcg_move(cg, u.pid), "move u"))
		goto out;
	ASSERT_TRUE(sf_runtime_process_pending(rt) >= 0, "process_pending");
	ASSERT_EQ(victim_do(&u, 'C'), 1, "allowed");
	ASSERT_EQ(victim_do(&u, 'A'), 0, "confined joiner gets the cgroup filter too");
out:
	victim_end(&v);
	victim_end(&u);
	sf_runtime_close(rt);
	rmdir(cg);
}

TEST(runtime_admin_cgroup_covers_its_subtree)
{
	struct sf_runtime *rt = NULL;
	struct victim in = { 0 }, later = { 0 };
	char cg[512], sub[600];
	uint32_t id = 0;
	struct c2e_error e;

	if (!tcg_make(cg, sizeof(cg), "sfilter-tree"))
		return;
	snprintf(sub, sizeof(sub), "%s/leaf", cg);
	if (!ASSERT_OK(mkdir(sub, 0755) ? -errno : 0, "mkdir sub-cgroup"))
		goto out;
	rt = rtopen();
	if (!rt || !ASSERT_TRUE(victim_start(&in), "victim") ||
	    !ASSERT_TRUE(tcg_move(sub, in.pid), "victim into the sub-cgroup"))
		goto out;
	{
		struct sock_fprog p = deny(0, SYS_getppid);

		if (!ASSERT_OK(sf_runtime_attach_cgroup(rt, cg, &p, 0, &id, &e),
			       "attach to the parent cgroup"))
			goto out;
	}
	ASSERT_EQ(victim_do(&in, 'B'), 1, "a task already in a sub-cgroup: allowed call");
	ASSERT_EQ(victim_do(&in, 'A'), 0, "a task already in a sub-cgroup: killed on the denied call");
	if (!ASSERT_TRUE(victim_start(&later), "victim later"))
		goto out;
	ASSERT_EQ(victim_do(&later, 'A'), 1, "outside: allowed");
	if (!ASSERT_TRUE(tcg_move(sub, later.pid), "join the sub-cgroup"))
		goto out;
	ASSERT_EQ(victim_do(&later, 'A'), 0, "a joiner of a sub-cgroup: killed on its first denied call");
out:
	victim_end(&in);
	victim_end(&later);
	sf_runtime_close(rt);
	rmdir(sub);
	rmdir(cg);
}

/* clone3(CLONE_INTO_CGROUP): the child starts in the cgroup without a
 * migration, the way systemd starts services. */
static pid_t clone_into(int cgfd)
{
	struct clone_args a = { .flags = CLONE_INTO_CGROUP, .exit_signal = SIGCHLD,
				.cgroup = (uint64_t)cgfd };

	return (pid_t)syscall(SYS_clone3, &a, sizeof(a));
}

TEST(runtime_admin_clone_into_an_attached_cgroup_is_confined_from_its_first_call)
{
	struct sf_runtime *rt = NULL;
	struct sock_fprog p = deny(0, SYS_getppid);
	char cg[512];
	struct c2e_error e;
	int cgfd = -1, status;
	pid_t child;

	if (!tcg_make(cg, sizeof(cg), "sfilter-clone"))
		return;
	rt = rtopen();
	if (!rt || !ASSERT_OK(sf_runtime_attach_cgroup(rt, cg, &p, 0, NULL, &e), "attach"))
		goto out;
	cgfd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (!ASSERT_TRUE(cgfd >= 0, "open cgroup"))
		goto out;
	fflush(stdout);
	child = clone_into(cgfd);
	if (child < 0 && (errno == ENOSYS || errno == E2BIG)) {
		test_skip("clone3 with CLONE_INTO_CGROUP: %s", strerror(errno));
		goto out;
	}
	if (child == 0) {
		/* The first system call the child makes. */
		syscall(SYS_getppid);
		_exit(7);
	}
	if (!ASSERT_TRUE(child > 0, "clone3"))
		goto out;
	ASSERT_EQ(waitpid(child, &status, 0), child, "waitpid");
	ASSERT_EQ(WIFSIGNALED(status) ? WTERMSIG(status) : -WEXITSTATUS(status), SIGKILL,
		  "the child was killed on its first call (signal, or -exit status)");
	/* The parent, outside, is untouched. */
	ASSERT_TRUE(syscall(SYS_getppid) > 0, "parent unconfined");
out:
	if (cgfd >= 0)
		close(cgfd);
	sf_runtime_close(rt);
	rmdir(cg);
}

enum nest_order { OUTER_FIRST, INNER_FIRST_THEN_RESTART };

/* A joiner of an inner attached cgroup carries the outer cgroup's filters
 * too, whichever of the two was attached first. Inner first: the runtime
 * that attaches the outer one adopted the inner one from the pins (its
 * record read from the state file, its ancestors not yet read). */
static void nested(enum nest_order order)
{
	struct sf_runtime_opts o = { .verbose = getenv("SF_VERBOSE") != NULL };
	struct sf_runtime *rt = NULL;
	struct victim a = { 0 }, b = { 0 }, old = { 0 };
	struct sock_fprog po = deny(0, SYS_getppid), pi = deny(1, SYS_getuid);
	char outer[512], inner[600], pin[64] = "";
	struct c2e_error e;
	bool adopted = true;

	if (!tcg_make(outer, sizeof(outer), order == OUTER_FIRST ? "sfilter-nest-o" :
		      "sfilter-nest-i"))
		return;
	snprintf(inner, sizeof(inner), "%s/inner", outer);
	if (!ASSERT_OK(mkdir(inner, 0755) ? -errno : 0, "mkdir inner"))
		goto out;
	if (order == INNER_FIRST_THEN_RESTART) {
		snprintf(pin, sizeof(pin), "/sys/fs/bpf/sfilter-test-%d", getpid());
		sf_runtime_uninstall_dir(pin);
		if (!ASSERT_OK(sf_runtime_open_pinned(&rt, &o, pin, &adopted), "open pinned"))
			goto out;
	} else {
		rt = rtopen();
	}
	if (!rt || !ASSERT_TRUE(victim_start(&old), "victim already inside") ||
	    !ASSERT_TRUE(tcg_move(inner, old.pid), "into inner"))
		goto out;
	if (order == OUTER_FIRST) {
		ASSERT_OK(sf_runtime_attach_cgroup(rt, outer, &po, 0, NULL, &e), "attach outer");
		ASSERT_OK(sf_runtime_attach_cgroup(rt, inner, &pi, 0, NULL, &e), "attach inner");
	} else {
		ASSERT_OK(sf_runtime_attach_cgroup(rt, inner, &pi, 0, NULL, &e), "attach inner");
		if (order == INNER_FIRST_THEN_RESTART) {
			sf_runtime_close(rt);
			rt = NULL;
			if (!ASSERT_OK(sf_runtime_open_pinned(&rt, &o, pin, &adopted),
				       "open pinned again") || !ASSERT_TRUE(adopted, "adopted"))
				goto out;
		}
		ASSERT_OK(sf_runtime_attach_cgroup(rt, outer, &po, 0, NULL, &e), "attach outer");
	}
	if (test_failed() || !ASSERT_TRUE(victim_start(&a), "victim a") ||
	    !ASSERT_TRUE(victim_start(&b), "victim b") ||
	    !ASSERT_TRUE(tcg_move(inner, a.pid) && tcg_move(inner, b.pid), "join inner"))
		goto out;
	ASSERT_EQ(victim_do(&a, 'C'), 1, "joiner: getgid allowed");
	ASSERT_EQ(victim_do(&a, 'A'), 0, "joiner of inner: killed by the outer filter");
	ASSERT_EQ(victim_do(&b, 'B'), 0, "joiner of inner: killed by the inner filter");
	ASSERT_EQ(victim_do(&old, 'A'), 0, "a task inside before both attaches: outer filter");
out:
	victim_end(&a);
	victim_end(&b);
	victim_end(&old);
	if (rt && pin[0])
		sf_runtime_uninstall(rt);
	sf_runtime_close(rt);
	if (pin[0])
		sf_runtime_uninstall_dir(pin);
	rmdir(inner);
	rmdir(outer);
}

TEST(runtime_admin_nested_cgroups_outer_attached_first)
{
	nested(OUTER_FIRST);
}

/* The inner one by a runtime that is then closed, the outer one by one
 * that adopted the pins: the inner cgroup's record is the state file's. */
TEST(runtime_admin_nested_cgroups_inner_attached_first_then_adopted_from_the_pins)
{
	nested(INNER_FIRST_THEN_RESTART);
}

/* Each container the OCI hook confines is a cgroup with a chain of its
 * own; containers come and go. A removed cgroup's chain slot is given
 * back: more cgroups than there are slots are attached and removed one
 * after the other, and a task in the last one is confined; then every
 * slot is taken by a cgroup, the cgroups are removed, and an attach to a
 * task finds a slot. */
TEST(runtime_admin_removed_cgroups_give_their_chain_slots_back)
{
	struct sf_runtime *rt = NULL;
	struct victim v = { 0 };
	struct sock_fprog p = deny(0, SYS_getppid);
	char top[512], cg[600] = "";
	struct c2e_error e;
	int i, n, r = 0;

	if (!tcg_make(top, sizeof(top), "sfilter-gone"))
		return;
	rt = rtopen();
	if (!rt)
		goto out;
	for (i = 0; i < SF_MAX_CHAINS + 8 && !r; i++) {
		snprintf(cg, sizeof(cg), "%s/c%d", top, i);
		if (!ASSERT_OK(mkdir(cg, 0755) ? -errno : 0, "mkdir"))
			goto out;
		r = sf_runtime_attach_cgroup(rt, cg, &p, 0, NULL, &e);
		if (i < SF_MAX_CHAINS + 7)
			rmdir(cg);
	}
	test_log("%d cgroups attached and removed in turn; the last attach: %d\n", i, r);
	if (!ASSERT_OK(r, "every attach finds a slot") ||
	    !ASSERT_TRUE(victim_start(&v), "victim") || !ASSERT_TRUE(tcg_move(cg, v.pid), "join"))
		goto out;
	ASSERT_EQ(victim_do(&v, 'A'), 0, "a joiner of the last cgroup is confined");
	victim_end(&v);
	rmdir(cg);
	/* Every slot a live cgroup's, then none: a task's attach. */
	sf_runtime_close(rt);
	rt = rtopen();
	for (n = 0; rt && n < SF_MAX_CHAINS - 1 && !r; n++) {
		snprintf(cg, sizeof(cg), "%s/d%d", top, n);
		if (!ASSERT_OK(mkdir(cg, 0755) ? -errno : 0, "mkdir"))
			break;
		r = sf_runtime_attach_cgroup(rt, cg, &p, 0, NULL, &e);
	}
	test_log("%d cgroups attached at once; the last attach: %d\n", n, r);
	for (i = 0; i < n; i++) {
		snprintf(cg, sizeof(cg), "%s/d%d", top, i);
		rmdir(cg);
	}
	cg[0] = '\0';
	if (!rt || !ASSERT_OK(r, "every slot taken by a cgroup") ||
	    !ASSERT_TRUE(victim_start(&v), "victim"))
		goto out;
	ASSERT_OK(attach(rt, v.pid, deny(1, SYS_getuid), 0, NULL), "then a task's attach");
	ASSERT_EQ(victim_do(&v, 'B'), 0, "and its filter judges");
out:
	victim_end(&v);
	sf_runtime_close(rt);
	if (cg[0])
		rmdir(cg);
	rmdir(top);
}

/* The runtime keeps a cgroup's record by its path and its ancestors'
 * ids for the record's life, and takes a record whose path no longer
 * names it for a removed cgroup: that holds because cgroup2 has no
 * rename (only cgroup v1's kernfs operations have one), so whoever may
 * write an attached cgroup's parent (a rootless engine's user) cannot
 * move it from under its record. */
TEST(cgroup2_refuses_to_rename_a_cgroup_which_the_runtime_relies_on)
{
	char top[512], a[600], a2[600];

	if (!tcg_make(top, sizeof(top), "sfilter-rename"))
		return;
	snprintf(a, sizeof(a), "%s/a", top);
	snprintf(a2, sizeof(a2), "%s/a-renamed", top);
	if (ASSERT_OK(mkdir(a, 0755) ? -errno : 0, "mkdir"))
		ASSERT_EQ(rename(a, a2) ? -errno : 0, -EPERM, "rename within the parent");
	rmdir(a);
	rmdir(a2);
	rmdir(top);
}
