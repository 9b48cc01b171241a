// SPDX-License-Identifier: GPL-2.0-only
/*
 * Translation throughput, in classic instructions per second, over the
 * realistic corpus (tests/lib/corpus.c). For each filter and mode the work
 * is repeated in 5 rounds of at least -t seconds each (default 0.2 s, so
 * at least 1 s per figure) and the best round is reported: the best round
 * is the one least disturbed by the shared machine.
 *
 * Modes:
 *   validate     c2e_validate() alone
 *   translate    c2e_translate() (it validates internally first)
 *   val+xlat     c2e_validate() then c2e_translate(), as a caller that
 *                wants the error message does it
 * "all" runs the whole corpus once per iteration: the rate for a mix
 * weighted by filter length.
 *
 * Goal: >= 5 million classic instructions per second for translate.
 * Usage: translate_speed [-t SECONDS_PER_ROUND] [-m]   (-m: Markdown)
 * Links every tests/lib source (the corpus) and -lseccomp.
 */
#include "c2e.h"
#include "corpus.h"
#include "bench_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ROUNDS 5

enum mode { M_VALIDATE, M_TRANSLATE, M_BOTH, M_COUNT };
static const char *const mode_names[M_COUNT] = { "validate", "translate",
						  "val+xlat" };

static struct c2e_ebpf out;
static volatile long sink;

static int run_once(enum mode m, const struct corpus_filter *f)
{
	int err = 0;

	if (m == M_VALIDATE || m == M_BOTH)
		err = c2e_validate(f->insns, f->len, NULL);
	if (!err && (m == M_TRANSLATE || m == M_BOTH))
		err = c2e_translate(f->insns, f->len, &out);
	sink += out.len;
	return err;
}

/* Best rate (classic insns/s) over ROUNDS rounds of >= round_s seconds.
 * f == NULL: every filter of the corpus per iteration. */
static double measure(enum mode m, const struct corpus *c,
		      const struct corpus_filter *f, double round_s)
{
	double best = 0;
	size_t per_iter = 0, i;
	int r;

	if (f)
		per_iter = f->len;
	else
		for (i = 0; i < c->n; i++)
			per_iter += c->filters[i].len;
	for (r = 0; r < ROUNDS; r++) {
		double t0 = bench_now_ns(), t;
		long iters = 0;

		do {
			if (f) {
				if (run_once(m, f))
					return -1;
			} else {
				for (i = 0; i < c->n; i++)
					if (run_once(m, &c->filters[i]))
						return -1;
			}
			iters++;
		} while ((t = (bench_now_ns() - t0) / 1e9) < round_s);
		if (per_iter * (double)iters / t > best)
			best = per_iter * (double)iters / t;
	}
	return best;
}

int main(int argc, char **argv)
{
	double round_s = 0.2, rate[M_COUNT];
	int markdown = 0, opt, err, m;
	struct corpus c;
	size_t i;

	while ((opt = getopt(argc, argv, "t:m")) != -1) {
		switch (opt) {
		case 't':
			round_s = atof(optarg);
			break;
		case 'm':
			markdown = 1;
			break;
		default:
			fprintf(stderr, "usage: %s [-t SECONDS_PER_ROUND] [-m]\n", argv[0]);
			return 2;
		}
	}
	err = corpus_build(&c);
	if (err) {
		fprintf(stderr, "corpus_build: %s\n", strerror(-err));
		corpus_free(&c);
		return 1;
	}
	printf("# best of %d rounds of >= %.2f s; million classic insns/s\n",
	       ROUNDS, round_s);
	if (markdown)
		bench_md_head("filter | classic | validate | translate | validate+translate", 1);
	else
		printf("%-26s %7s %9s %9s %9s\n", "filter", "classic",
		       mode_names[0], mode_names[1], mode_names[2]);
	for (i = 0; i <= c.n; i++) {
		const struct corpus_filter *f = i < c.n ? &c.filters[i] : NULL;
		size_t len = 0, j;

		for (m = 0; m < M_COUNT; m++) {
			rate[m] = measure(m, &c, f, round_s);
			if (rate[m] < 0) {
				fprintf(stderr, "%s: %s failed\n",
					f ? f->name : "all", mode_names[m]);
				corpus_free(&c);
				return 1;
			}
		}
		if (f)
			len = f->len;
		else
			for (j = 0; j < c.n; j++)
				len += c.filters[j].len;
		if (markdown)
			printf("| %s%s%s | %zu | %.1f | %.1f | %.1f |\n",
			       f ? "" : "**", f ? f->name : "all (corpus mix)",
			       f ? "" : "**", len, rate[0] / 1e6, rate[1] / 1e6,
			       rate[2] / 1e6);
		else
			printf("%-26s %7zu %9.1f %9.1f %9.1f\n",
			       f ? f->name : "all (corpus mix)", len,
			       rate[0] / 1e6, rate[1] / 1e6, rate[2] / 1e6);
	}
	c2e_ebpf_free(&out);
	corpus_free(&c);
	return 0;
}
