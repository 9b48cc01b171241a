// SPDX-License-Identifier: GPL-2.0-only
/*
 * sfctl diff's cost and what it finds, on Podman's default profile
 * against Docker's (each compiled for its engine's default caps): how
 * many (arch, syscall) numbers differ, how many of them by their
 * arguments, how many regions and calls run, and the time c2e_diff_chains()
 * takes, both ways round, interleaved over -r rounds (median and best).
 *
 * Usage: diff_speed [-r ROUNDS] [DOCKER_PROFILE]   (default: where Debian's
 * golang-github-docker-docker-dev installs it)
 */
#include "c2e.h"
#include "bench_util.h"

#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_ROUNDS 1000

/* Numbers (regions come grouped by number) where one side allows and the
 * other refuses; widen: only where b allows. */
static size_t numbers_where(const struct c2e_diff *d, int widen)
{
	size_t i, n = 0;

	for (i = 0; i < d->n; i++) {
		const struct c2e_diff_region *r = &d->regions[i];
		int a = c2e_verdict_allows(r->a), b = c2e_verdict_allows(r->b);

		if (a == b || (widen && !b))
			continue;
		if (i && d->regions[i - 1].arch == r->arch && d->regions[i - 1].nr == r->nr &&
		    c2e_verdict_allows(d->regions[i - 1].a) !=
		    c2e_verdict_allows(d->regions[i - 1].b))
			continue;
		n++;
	}
	return n;
}

/* Numbers that differ and that libseccomp names on their arch. */
static size_t named(const struct c2e_diff *d)
{
	size_t i, n = 0;

	for (i = 0; i < d->n; i++) {
		const struct c2e_diff_region *r = &d->regions[i];
		uint32_t arch = r->arch == C2E_AUDIT_ARCH_I386 ? SCMP_ARCH_X86 :
				r->nr & C2E_X32_SYSCALL_BIT ? SCMP_ARCH_X32 : SCMP_ARCH_X86_64;
		char *name;

		if (i && d->regions[i - 1].arch == r->arch && d->regions[i - 1].nr == r->nr)
			continue;
		name = seccomp_syscall_resolve_num_arch(arch, (int)r->nr);
		n += name != NULL;
		free(name);
	}
	return n;
}

int main(int argc, char **argv)
{
	static double t_pd[MAX_ROUNDS], t_dp[MAX_ROUNDS];
	const char *docker = BENCH_DOCKER_PROFILE;
	struct sf_profile pod, dock;
	struct sock_fprog p, d;
	struct c2e_diff pd, dp;
	int rounds = 20, opt, i;
	double t0;

	while ((opt = getopt(argc, argv, "r:")) != -1) {
		if (opt != 'r' || (rounds = atoi(optarg)) < 1 || rounds > MAX_ROUNDS) {
			fprintf(stderr, "usage: diff_speed [-r ROUNDS (1..%d)] [DOCKER_PROFILE]\n",
				MAX_ROUNDS);
			return 2;
		}
	}
	if (optind < argc)
		docker = argv[optind];
	if (bench_podman_profile("diff_speed", &pod) ||
	    bench_profile("diff_speed", docker, BENCH_DOCKER_CAPS, &dock))
		return 1;
	p = (struct sock_fprog){ (unsigned short)pod.len, pod.insns };
	d = (struct sock_fprog){ (unsigned short)dock.len, dock.insns };
	for (i = 0; i < rounds; i++) {
		t0 = bench_now_ns();
		if (c2e_diff_chains(&p, 1, &d, 1, &pd, NULL))
			return 1;
		t_pd[i] = bench_now_ns() - t0;
		t0 = bench_now_ns();
		if (c2e_diff_chains(&d, 1, &p, 1, &dp, NULL))
			return 1;
		t_dp[i] = bench_now_ns() - t0;
		if (i + 1 < rounds) {
			c2e_diff_free(&pd);
			c2e_diff_free(&dp);
		}
	}
	printf("A = Podman (%s, %zu insns), B = Docker (%s, %zu insns)\n",
	       BENCH_PODMAN_PROFILE, pod.len, docker, dock.len);
	printf("| figure | A vs B |\n|---|---|\n");
	printf("| (arch, nr) numbers compared | %zu |\n", pd.numbers);
	printf("| numbers that differ | %zu |\n", pd.differ);
	printf("| of them, named syscalls (libseccomp) | %zu |\n", named(&pd));
	printf("| of them, where one allows and the other refuses | %zu |\n",
	       numbers_where(&pd, 0));
	printf("| of them, B allows what A refuses (--subset A B fails) | %zu |\n",
	       numbers_where(&pd, 1));
	printf("| of them, A allows what B refuses (--subset B A fails) | %zu |\n",
	       numbers_where(&dp, 1));
	printf("| numbers that differ by their arguments (regions) | %zu |\n", pd.with_args);
	printf("| numbers run on argument classes (not constant on both sides) | %zu |\n",
	       pd.classed);
	printf("| regions | %zu |\n", pd.n);
	printf("| numbers sampled, not proven | %zu |\n", pd.n_unproven);
	printf("| calls run through both chains | %zu |\n", pd.points);
	printf("| time, A vs B, median (best) of %d | %.1f ms (%.1f ms) |\n", rounds,
	       bench_median(t_pd, rounds) / 1e6, bench_best(t_pd, rounds) / 1e6);
	printf("| time, B vs A, median (best) of %d | %.1f ms (%.1f ms) |\n", rounds,
	       bench_median(t_dp, rounds) / 1e6, bench_best(t_dp, rounds) / 1e6);
	c2e_diff_free(&pd);
	c2e_diff_free(&dp);
	sf_profile_free(&pod);
	sf_profile_free(&dock);
	return 0;
}
