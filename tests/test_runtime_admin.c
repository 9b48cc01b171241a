// SPDX-License-Identifier: GPL-2.0
/*
 * The runtime's administration (issue 4), on whichever kernel the suite
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
#include "runtime.h"
#include "c2e.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

struct victim {
	pid_t pid;
	int go, report;
};

static void victim_body(int go, int rep)
{
	char c;

	while (read(go, &c, 1) == 1) {
		if (c == 'A')
			syscall(SYS_getppid);
		else if (c == 'B')
			syscall(SYS_getuid);
		else if (c == 'C')
			syscall(SYS_getgid);
		if (write(rep, "y", 1) != 1)
			_exit(98);
	}
	_exit(0);
}

static bool victim_start(struct victim *v)
{
	int go[2], rep[2];

	if (pipe(go) || pipe(rep))
		return false;
	v->pid = fork();
	if (v->pid < 0)
		return false;
	if (v->pid == 0) {
		close(go[1]);
		close(rep[0]);
		victim_body(go[0], rep[1]);
	}
	close(go[0]);
	close(rep[1]);
	v->go = go[1];
	v->report = rep[0];
	return true;
}

/* 1: the victim ran the syscall and answered; 0: it died by SIGKILL;
 * -1: something else. */
static int victim_do(struct victim *v, char cmd)
{
	char c;
	int status;

	if (v->pid <= 0)
		return -1;
	if (write(v->go, &cmd, 1) != 1)
		return -1;
	if (read(v->report, &c, 1) == 1)
		return 1;
	close(v->go);
	close(v->report);
	waitpid(v->pid, &status, 0);
	v->pid = 0;
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL ? 0 : -1;
}

static void victim_end(struct victim *v)
{
	int status;

	if (v->pid <= 0)
		return;
	close(v->go);
	close(v->report);
	kill(v->pid, SIGKILL);
	waitpid(v->pid, &status, 0);
	v->pid = 0;
}

static struct sock_filter deny_insns[3][4];

/* Kills on syscall nr, allows the rest. */
static struct sock_fprog deny(int which, int nr)
{
	struct sock_filter *f = deny_insns[which];

	f[0] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0);
	f[1] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1);
	f[2] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0x80000000U);
	f[3] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0x7fff0000U);
	return (struct sock_fprog){ 4, f };
}

static int attach(struct sf_runtime *rt, pid_t tid, struct sock_fprog p,
		  unsigned int flags, uint32_t *id)
{
	struct c2e_error e;

	return sf_runtime_attach(rt, tid, &p, flags, id, &e);
}

static struct sf_runtime *open_plain(void)
{
	struct sf_runtime *rt = NULL;
	struct sf_runtime_opts o = { .verbose = getenv("SF_VERBOSE") != NULL };

	if (!ASSERT_OK(sf_runtime_open(&rt, &o), "sf_runtime_open"))
		return NULL;
	return rt;
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
	struct sf_runtime *rt = open_plain();
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

static bool cgroup2_root(char *out, size_t size)
{
	char line[512], dev[128], dir[256], type[64];
	FILE *f = fopen("/proc/mounts", "r");
	bool found = false;

	if (f) {
		while (!found && fgets(line, sizeof(line), f))
			if (sscanf(line, "%127s %255s %63s", dev, dir, type) == 3 &&
			    !strcmp(type, "cgroup2")) {
				snprintf(out, size, "%s", dir);
				found = true;
			}
		fclose(f);
	}
	if (found || test_is_emulated() == 0)
		return found;
	/* The guest: mount it ourselves. */
	mkdir("/sys/fs/cgroup", 0755);
	if (mount("none", "/sys/fs/cgroup", "cgroup2", 0, NULL))
		return false;
	snprintf(out, size, "/sys/fs/cgroup");
	return true;
}

TEST(runtime_admin_cgroup_joiner_confined)
{
	struct sf_runtime *rt = NULL;
	struct victim v = { 0 }, u = { 0 };
	struct sock_fprog p = deny(0, SYS_getppid);
	char root[256], cg[512], procs[600], pid[32];
	struct c2e_error e;
	uint32_t id = 0;
	int fd;

	if (!cgroup2_root(root, sizeof(root))) {
		test_skip("cgroup v2 not mounted");
		return;
	}
	snprintf(cg, sizeof(cg), "%s/sfilter-test-%d", root, getpid());
	if (!ASSERT_OK(mkdir(cg, 0755) ? -errno : 0, "mkdir cgroup"))
		return;
	rt = open_plain();
	if (!rt)
		goto out;
	if (!ASSERT_OK(sf_runtime_attach_cgroup(rt, cg, &p, 0, &id, &e), "attach_cgroup"))
		goto out;
	ASSERT_NEQ(id, 0, "cgroup filter id");
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
	/* An unconfined process that joins later. */
	if (!ASSERT_TRUE(victim_start(&v), "victim"))
		goto out;
	ASSERT_EQ(victim_do(&v, 'A'), 1, "outside the cgroup: allowed");
	fd = open(procs, O_WRONLY);
	snprintf(pid, sizeof(pid), "%d", v.pid);
	if (!ASSERT_TRUE(fd >= 0 && write(fd, pid, strlen(pid)) > 0, "move into cgroup"))
		goto out;
	close(fd);
	ASSERT_EQ(victim_do(&v, 'A'), 0, "joiner killed on its first denied call");
	/* A confined process that joins later: the queue, resolved by
	 * process_pending (the daemon's poll loop). */
	if (!ASSERT_TRUE(victim_start(&u), "victim u"))
		goto out;
	ASSERT_OK(attach(rt, u.pid, deny(1, SYS_getuid), 0, NULL), "own filter");
	fd = open(procs, O_WRONLY);
	snprintf(pid, sizeof(pid), "%d", u.pid);
	if (!ASSERT_TRUE(fd >= 0 && write(fd, pid, strlen(pid)) > 0, "move u"))
		goto out;
	close(fd);
	ASSERT_TRUE(sf_runtime_process_pending(rt) >= 0, "process_pending");
	ASSERT_EQ(victim_do(&u, 'C'), 1, "allowed");
	ASSERT_EQ(victim_do(&u, 'A'), 0, "confined joiner gets the cgroup filter too");
out:
	victim_end(&v);
	victim_end(&u);
	sf_runtime_close(rt);
	rmdir(cg);
}
