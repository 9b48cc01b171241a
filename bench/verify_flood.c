// SPDX-License-Identifier: GPL-2.0-only
/*
 * What one uid's flood of costly filters costs everyone else: root's STATUS
 * round trip and another uid's sf_attach() of a one-instruction filter,
 * each with and without the flood, in alternating phases, through a
 * private sfilterd with the default limits (so the flood runs at the
 * default attach rate, 100 a second).
 *
 * The flood is tests/lib/flood.h's: 8 senders (4 emulated) of uid 65534,
 * each forking a child per filter that attaches a unique 4,096-instruction
 * filter and exits; half the filters are costly to verify, half costly to
 * analyse for the action table. Every round runs a quiet phase, then a
 * flood phase (the flood started, and running before the first sample),
 * n samples of each measure per phase, the two measures alternating.
 *
 * The flood phase starts once the flood's first filters are in and one
 * more second has spent the uid's burst (the rate's bucket holds a
 * second's worth), so that the samples see the flood at its steady rate.
 * Samples are 20 ms apart. After the flood is stopped the next quiet
 * phase waits until the daemon answers STATUS within 10 ms three times
 * in a row (at most 60 s): the time that took is the flood's tail (work
 * the daemon still does for it), reported as "settle".
 *
 * STATUS: connect (with the daemon's hello), the request, every reply
 * read; as root. Attach: sf_attach() timed inside a forked child of uid
 * 65533 (no_new_privs); the same filter every time, so that it is a
 * loaded chain unless the daemon has evicted it. Reported: p50/p90/p99
 * per measure and phase, the flood's attach count, and the ratio of the
 * flood's p50 and p99 to the quiet ones.
 *
 * Compare two daemons by running it twice: -d OLD_SFILTERD, -d NEW. -p runs
 * the daemon pinned (a private --pin-dir, its state file in /run) as
 * sfilterd runs by default, rather than --no-pin.
 *
 * -k profiles floods with profiles instead (flood_start_profiles()): uid
 * 65534's senders send unique ~64 KiB profiles, refused at their last
 * entry once compiled, as fast as PROFILE's limits let them (2 a second
 * per user; a sender told EAGAIN waits 100 ms).
 *
 * Usage: verify_flood [-r ROUNDS] [-n SAMPLES] [-d SFILTERD] [-k filters|profiles] [-p] [-v]
 * (root)
 */
#define _GNU_SOURCE
#include "sfclient.h"
#include "client.h"
#include "proto.h"
#include "flood.h"
#include "bench_util.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/seccomp.h>

#define FLOOD_UID 65534
#define OTHER_UID 65533
#define MAX_SAMPLES 4000

enum { M_STATUS, M_ATTACH, M_COUNT };
enum { P_QUIET, P_FLOOD, P_COUNT };
static const char *const mnames[M_COUNT] = { "STATUS (root)", "sf_attach, 1 insn (uid 65533)" };
static const char *const pnames[P_COUNT] = { "quiet", "flood" };
static double samples[M_COUNT][P_COUNT][MAX_SAMPLES];
static struct bench_daemon dm = { .pid = -1 };

/* One STATUS round trip, in us; -1 on failure. */
static double status_us(void)
{
	static char buf[SF_PROTO_MAX_MSG + 8];
	struct sf_reply *r = (struct sf_reply *)buf;
	struct sf_msg_hdr h;
	double t0 = bench_now_ns(), us = -1;
	int fd = sf_proto_connect(dm.sock, 60000, NULL, 0);

	if (fd < 0)
		return -1;
	sf_proto_header(&h, SF_MSG_STATUS, sizeof(h), 1);
	if (sf_proto_send(fd, &(struct iovec){ &h, sizeof(h) }, 1, NULL, 0) == 0) {
		for (;;) {
			ssize_t n = recv(fd, buf, sizeof(buf), 0);

			if (n <= 0 || sf_proto_check_reply(buf, n) != 0 || r->error)
				break;
			if (!(r->flags & SF_REPLY_MORE)) {
				us = (bench_now_ns() - t0) / 1e3;
				break;
			}
		}
	}
	close(fd);
	return us;
}

/* One sf_attach() by uid OTHER_UID in a child, in us; -1 on failure. */
static double attach_us(struct flood_probe *shared)
{
	if (flood_probe_attach(shared, OTHER_UID) < 0) {
		fprintf(stderr, "verify_flood: uid %d's sf_attach: %s\n", OTHER_UID, shared->msg);
		return -1;
	}
	return shared->ms * 1e3;
}

/* n samples of each measure into [m][phase][at..at+n). */
static int measure(int phase, int at, int n, struct flood_probe *shared)
{
	int i, failed = 0;

	for (i = 0; i < n; i++) {
		samples[M_STATUS][phase][at + i] = status_us();
		samples[M_ATTACH][phase][at + i] = attach_us(shared);
		failed += samples[M_STATUS][phase][at + i] < 0;
		failed += samples[M_ATTACH][phase][at + i] < 0;
		usleep(20000);
	}
	return failed;
}

/* Seconds until STATUS is answered within 10 ms three times in a row
 * (at most 60). */
static double settle(void)
{
	double t0 = bench_now_ns(), us;
	int fast = 0;

	while (fast < 3 && (bench_now_ns() - t0) / 1e9 < 60) {
		us = status_us();
		fast = us >= 0 && us < 10000 ? fast + 1 : 0;
		usleep(50000);
	}
	return (bench_now_ns() - t0) / 1e9;
}

int main(int argc, char **argv)
{
	bool emulated = bench_emulated();
	int rounds = emulated ? 2 : 6, n = emulated ? 10 : 30, verbose = 0, r, m, p, failed = 0;
	uint32_t attached = 0, refused = 0, other_failed = 0;
	struct flood_probe *shared;
	double flood_s = 0, settle_s, settle_max = 0;
	int last_errno = 0;
	char tier[32];
	struct utsname uts;
	bool profiles = false;
	int opt, err;

	while ((opt = getopt(argc, argv, "r:n:d:k:pv")) != -1) {
		switch (opt) {
		case 'r': rounds = atoi(optarg); break;
		case 'n': n = atoi(optarg); break;
		case 'd': snprintf(dm.bin, sizeof(dm.bin), "%s", optarg); break;
		case 'k':
			profiles = !strcmp(optarg, "profiles");
			if (!profiles && strcmp(optarg, "filters")) {
				fprintf(stderr, "verify_flood: -k filters or -k profiles, not %s\n",
					optarg);
				return 2;
			}
			break;
		case 'p':
			/* bpffs refuses names with a dot. */
			snprintf(dm.pin_dir, sizeof(dm.pin_dir), "/sys/fs/bpf/sf-verify-flood-%d",
				 (int)getpid());
			break;
		case 'v': verbose = 1; break;
		default:
			fprintf(stderr, "usage: %s [-r ROUNDS] [-n SAMPLES] [-d SFILTERD] "
				"[-k filters|profiles] [-p] [-v]\n", argv[0]);
			return 2;
		}
	}
	if (rounds < 1 || n < 1 || rounds * n > MAX_SAMPLES) {
		fprintf(stderr, "verify_flood: ROUNDS x SAMPLES in 1..%d\n", MAX_SAMPLES);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	uname(&uts);
	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		      -1, 0);
	if (shared == MAP_FAILED || bench_daemon_find(&dm))
		return 1;
	bench_bare_check("verify_flood");
	err = bench_daemon_start(&dm, emulated ? 120 : 30);
	if (err) {
		fprintf(stderr, "verify_flood: start %s: %s (log in %s)\n", dm.bin,
			strerror(-err), dm.log);
		bench_daemon_stop(&dm);
		return 1;
	}
	attach_us(shared); /* loads the small filter's chain, not counted */

	for (r = 0; r < rounds; r++) {
		struct flood *fl;
		double t0;
		int i;

		failed += measure(P_QUIET, r * n, n, shared);
		fl = profiles ? flood_start_profiles(emulated ? 2 : 4, FLOOD_UID) :
			flood_start(emulated ? 4 : FLOOD_SENDERS, FLOOD_UID);
		if (!fl) {
			fprintf(stderr, "verify_flood: the flood does not start: %s\n",
				strerror(errno));
			break;
		}
		t0 = bench_now_ns(); /* the flood's rate: over the whole phase */
		for (i = 0; i < 2400 && __atomic_load_n(&fl->attached, __ATOMIC_RELAXED) < 2; i++)
			usleep(50000);
		sleep(1);
		failed += measure(P_FLOOD, r * n, n, shared);
		flood_s += (bench_now_ns() - t0) / 1e9;
		attached += fl->attached;
		refused += fl->refused;
		other_failed += fl->failed;
		if (fl->failed)
			last_errno = fl->last_errno;
		flood_stop(fl);
		/* What the flood left the daemon to do ends before the next
		 * quiet phase. */
		settle_s = settle();
		if (settle_s > settle_max)
			settle_max = settle_s;
		if (verbose)
			printf("round %d: so far the flood attached %u, refused %u (rate), failed %u; "
			       "settled in %.1f s\n", r, attached, refused, other_failed, settle_s);
	}

	bench_daemon_tier(&dm, tier, sizeof(tier));
	printf("\n# others' latency under one uid's flood of unique %s, "
	       "kernel %s%s, daemon %s (tier %s, %s), %d rounds x %d samples per phase\n",
	       profiles ? "~64 KiB profiles" : "4,096-instruction filters", uts.release, emulated ? BENCH_EMULATED_NOTE : "", dm.bin, tier,
	       dm.pin_dir[0] ? "pinned" : "--no-pin",
	       rounds, n);
	printf("\nthe flood: %u %s in %.1f s of flood phases (%.1f/s), %u refused "
	       "by the rate, %u failed otherwise%s%s; after it, STATUS within 10 ms again "
	       "in %.1f s at most\n\n", attached,
	       profiles ? "profiles compiled" : "filters attached", flood_s, flood_s > 0 ? attached / flood_s : 0,
	       refused, other_failed, other_failed ? ": " : "",
	       other_failed ? strerror(last_errno) : "", settle_max);
	bench_md_head("measure | phase | n | p50 ms | p90 ms | p99 ms | max ms", 2);
	for (m = 0; m < M_COUNT; m++)
		for (p = 0; p < P_COUNT; p++) {
			const double *v = samples[m][p];
			int k = rounds * n;

			printf("| %s | %s | %d | %.2f | %.2f | %.2f | %.2f |\n", mnames[m], pnames[p],
			       bench_valid(v, k), bench_pct(v, k, 0.5) / 1e3,
			       bench_pct(v, k, 0.9) / 1e3, bench_pct(v, k, 0.99) / 1e3,
			       bench_pct(v, k, 1) / 1e3);
		}
	printf("\n");
	bench_md_head("measure | flood / quiet, p50 | flood / quiet, p99", 1);
	for (m = 0; m < M_COUNT; m++) {
		const double *q = samples[m][P_QUIET], *f = samples[m][P_FLOOD];
		int k = rounds * n;

		printf("| %s | %.2f | %.2f |\n", mnames[m],
		       bench_pct(f, k, 0.5) / bench_pct(q, k, 0.5),
		       bench_pct(f, k, 0.99) / bench_pct(q, k, 0.99));
	}
	if (failed)
		printf("\nwarning: %d samples failed (see stderr); they are left out\n", failed);
	bench_daemon_stop(&dm);
	return 0;
}
