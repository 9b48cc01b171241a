// SPDX-License-Identifier: GPL-2.0-only
/*
 * sfilterd against a user whose filters are costly to load. A new chain
 * program is verified by the kernel as it is loaded (tens of milliseconds
 * for 4,096 instructions on the host), and its action table analysed (up
 * to seconds): neither may make anyone else wait.
 *   - uid 65534 attaches unique 4,096-instruction filters as fast as its
 *     attach rate allows, half of them costly to verify (a ladder of
 *     compares), half costly to analyse (branches on every argument);
 *     meanwhile root's STATUS and uid 65533's sf_attach() of a
 *     small filter keep their p99 within the bound of test_daemon_dos.c
 *     (100 ms on the host, 2 s in the emulated guest);
 *   - a uid's attaches that go off the loop one at a time still meet its
 *     limits exactly: eight at once, by eight processes, of a uid allowed
 *     three filters, give three filters and five ENOSPC;
 *   - an admin's cgroup attach (a container's hook) of a filter never
 *     loaded is verified off the loop too: STATUS sent meanwhile is
 *     answered, again and again, before the attach is.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "daemon.h"
#include "sfclient.h"
#include "proto.h"
#include "flood.h"
#include "admin.h"
#include "cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

SFD_TIER_INDEPENDENT

#define FLOOD_UID  65534
#define OTHER_UID  65533
#define TRIES      100

static double bound_ms(void)
{
	return test_is_emulated() ? 2000 : 100;
}

/* uid OTHER_UID's timed attach of a small filter; -1 (logged) on failure. */
static double small_attach_ms(struct flood_probe *r)
{
	if (flood_probe_attach(r, OTHER_UID) < 0)
		test_log("uid %d's sf_attach: %s: %s\n", OTHER_UID, strerror(r->err), r->msg);
	return r->ms;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* p50/p99/max of the n times, and p99 against the bound. */
static void check_p99(const char *what, double *ms, int n)
{
	int r99 = (99 * n + 99) / 100;
	char name[160];

	qsort(ms, n, sizeof(*ms), by_value);
	test_log("%s, %d tries under the flood: p50 %.1f ms, p99 %.1f ms, max %.1f ms (%s)\n",
		 what, n, ms[(n + 1) / 2 - 1], ms[r99 - 1], ms[n - 1], test_kernel_name());
	snprintf(name, sizeof(name), "%s: p99 %.1f ms within %.0f ms", what, ms[r99 - 1],
		 bound_ms());
	ASSERT_TRUE(ms[r99 - 1] <= bound_ms(), name);
}

TEST(unique_large_filters_of_one_uid_delay_neither_an_admins_status_nor_another_uids_attach)
{
	int senders = test_is_emulated() ? 4 : FLOOD_SENDERS, i;
	static double status_ms[TRIES], attach_ms[TRIES];
	struct flood_probe *other;
	struct flood *fl;
	SFD_AUTO;

	/* The default limits: the flood runs at the default attach rate. */
	if (!sfd_start_for_users(&dm, NULL))
		return;
	other = mmap(NULL, sizeof(*other), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		     -1, 0);
	if (!ASSERT_TRUE(other != MAP_FAILED, "shared report"))
		return;
	fl = flood_start(senders, FLOOD_UID);
	if (!ASSERT_TRUE(fl != NULL, "the flood starts"))
		goto out;
	/* The flood is on once its first filters are in. */
	for (i = 0; i < (test_is_emulated() ? 1200 : 200) &&
		    __atomic_load_n(&fl->attached, __ATOMIC_RELAXED) < 2; i++)
		usleep(50000);
	if (!ASSERT_GE(fl->attached, 2, "uid 65534's large filters are being attached"))
		goto out;
	test_log("%d senders of uid %d attach unique %d-instruction filters; %d tries each\n",
		 fl->n, FLOOD_UID, FLOOD_INSNS, TRIES);
	for (i = 0; i < TRIES; i++) {
		struct sf_msg_hdr h;
		double t0 = test_now_ms();
		int err = sfd_request(dm.sock, &h, SF_MSG_STATUS, sizeof(h), NULL, NULL);

		status_ms[i] = test_now_ms() - t0;
		if (!ASSERT_EQ(err, 0, "root's STATUS is answered"))
			goto out;
		attach_ms[i] = small_attach_ms(other);
		if (!ASSERT_TRUE(attach_ms[i] >= 0, "uid 65533's sf_attach() succeeds"))
			goto out;
		/* Spread over seconds: the flood fills the 255 chain slots
		 * and makes the daemon free them on the way. */
		usleep(test_is_emulated() ? 0 : 50000);
	}
	test_log("meanwhile uid %d: %u large filters attached, %u refused by its rate, "
		 "%u failed%s%s\n", FLOOD_UID, fl->attached, fl->refused, fl->failed,
		 fl->failed ? ": " : "", fl->failed ? strerror(fl->last_errno) : "");
	ASSERT_EQ(fl->failed, 0, "no large filter failed but for the rate");
	check_p99("STATUS (root)", status_ms, TRIES);
	check_p99("sf_attach() of 1 instruction (uid 65533)", attach_ms, TRIES);
out:
	flood_stop(fl);
	munmap(other, sizeof(*other));
}

/* As uid 65534: attaches a filter of its own (distinct by k), reports the
 * errno (0: attached) on rep and holds it until killed. */
static void holder(uint32_t k, int go, int rep)
{
	struct sock_filter f[3] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x10000000u + k, 0, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog p = { 3, f };
	char c;
	int e = 0;

	if (!flood_become(FLOOD_UID) || read(go, &c, 1) != 1)
		_exit(1);
	if (sf_attach(&p, 0))
		e = errno;
	if (write(rep, &e, sizeof(e)) != sizeof(e))
		_exit(1);
	pause();
	_exit(0);
}

TEST(a_uids_attaches_verified_one_at_a_time_still_meet_its_limit_exactly)
{
	static const char *const args[] = { "--max-programs-per-uid", "3",
					    "--max-attach-rate", "0", NULL };
	int go[2], rep[2], i, e, ok = 0, nospc = 0, other = 0;
	pid_t kids[8];
	SFD_AUTO;

	if (!sfd_start_for_users(&dm, args))
		return;
	if (!ASSERT_OK(pipe(go), "pipe") || !ASSERT_OK(pipe(rep), "pipe"))
		return;
	for (i = 0; i < 8; i++) {
		fflush(stdout);
		kids[i] = fork();
		if (kids[i] == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			holder((uint32_t)i, go[0], rep[1]);
		}
	}
	/* All at once: the daemon has all eight before it answers one. */
	ASSERT_EQ(write(go[1], "xxxxxxxx", 8), 8, "go");
	for (i = 0; i < 8; i++) {
		if (read(rep[0], &e, sizeof(e)) != sizeof(e))
			break;
		if (e == 0)
			ok++;
		else if (e == ENOSPC)
			nospc++;
		else
			other++;
	}
	test_log("8 attaches of distinct filters at once, limit 3: %d attached, %d ENOSPC, "
		 "%d other\n", ok, nospc, other);
	ASSERT_EQ(ok, 3, "three attached");
	ASSERT_EQ(nospc, 5, "five refused: the limit");
	for (i = 0; i < 8; i++)
		if (kids[i] > 0) {
			kill(kids[i], SIGKILL);
			waitpid(kids[i], NULL, 0);
		}
	close(go[0]);
	close(go[1]);
	close(rep[0]);
	close(rep[1]);
}

/* One ADMIN_ATTACH to a cgroup, on a thread: its reply and when it came. */
struct cg_attach {
	int fd;
	const char *cgroup;
	struct sock_fprog prog;
	struct sf_client_reply reply;
	int r;
	double end_ms;
	int done;
};

static void *cg_attach_run(void *arg)
{
	struct cg_attach *a = arg;

	a->r = sf_client_admin_attach_fd(a->fd, 0, -1, a->cgroup, a->prog.filter, a->prog.len,
					 0, &a->reply);
	a->end_ms = test_now_ms();
	__atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

TEST(an_admins_cgroup_attach_of_a_filter_never_loaded_is_verified_off_the_loop)
{
	static struct sock_filter f[FLOOD_INSNS];
	struct cg_attach a = { 0 };
	double t0, worst = 0, took;
	int statuses = 0;
	char cg[256];
	pthread_t t;
	SFD_AUTO;

	if (!tcg_make(cg, sizeof(cg), "sfverify-cg"))
		return;
	if (!sfd_start_sfilterd(&dm, false))
		goto out;
	/* Costly to verify: every branch a path for the verifier. The
	 * connection greeted first, so that the request comes at once. */
	a = (struct cg_attach){ .fd = sf_client_connect(dm.sock, &a.reply), .cgroup = cg,
				.prog = flood_filter(f, 0) };
	if (!ASSERT_GE(a.fd, 0, "connect"))
		goto out;
	t0 = test_now_ms();
	if (!ASSERT_OK(pthread_create(&t, NULL, cg_attach_run, &a), "start the attach"))
		goto out;
	while (!__atomic_load_n(&a.done, __ATOMIC_ACQUIRE)) {
		struct sf_msg_hdr h;
		double s0 = test_now_ms();

		if (!ASSERT_EQ(sfd_request(dm.sock, &h, SF_MSG_STATUS, sizeof(h), NULL, NULL), 0,
			       "STATUS is answered"))
			break;
		/* Only those sent while the attach was still unanswered. */
		if (!__atomic_load_n(&a.done, __ATOMIC_ACQUIRE)) {
			statuses++;
			if (test_now_ms() - s0 > worst)
				worst = test_now_ms() - s0;
		}
	}
	pthread_join(t, NULL);
	close(a.fd);
	took = a.end_ms - t0;
	test_log("cgroup attach of a %u-instruction filter never loaded: %.1f ms; %d STATUS "
		 "answered meanwhile, the slowest in %.1f ms\n", a.prog.len, took, statuses,
		 worst);
	if (!ASSERT_EQ(a.r, 0, "the cgroup attach succeeds"))
		test_log("%s\n", a.reply.message);
	ASSERT_TRUE(strstr(a.reply.message, "attached to cgroup") != NULL,
		    "the reply names the cgroup");
	/* On the loop, a STATUS sent during the verification waits for the
	 * rest of it: one at most would be answered meanwhile. */
	ASSERT_GE(statuses, 3, "STATUS was answered while the attach was verified");
out:
	sfd_stop(&dm);
	rmdir(cg);
}
