// SPDX-License-Identifier: GPL-2.0-only
/*
 * How long our translation is next to the kernel's own conversion, for the
 * realistic corpus (tests/lib/corpus.c): per filter, the classic length,
 * the kernel's eBPF length (c2e_kernel_insn_count(), the number seccomp
 * sums against 32768), our test-frame eBPF length (c2e_translate()) and
 * our body alone (c2e_emit_body(), what a chain pays per filter), with
 * ratios to the kernel's count.
 *
 * Usage: insn_count [-m]     -m: print a Markdown table
 * Links every tests/lib source (the corpus) and -lseccomp.
 */
#include "c2e.h"
#include "corpus.h"
#include "bench_util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	size_t i, sum_classic = 0;
	long sum_kernel = 0, sum_ours = 0, sum_body = 0;
	int markdown = 0, opt, err, failed = 0;
	struct corpus c;

	while ((opt = getopt(argc, argv, "m")) != -1) {
		if (opt != 'm') {
			fprintf(stderr, "usage: %s [-m]\n", argv[0]);
			return 2;
		}
		markdown = 1;
	}
	err = corpus_build(&c);
	if (err) {
		fprintf(stderr, "corpus_build: %s\n", strerror(-err));
		corpus_free(&c);
		return 1;
	}
	if (markdown)
		bench_md_head("filter | origin | classic | kernel eBPF | ours (test frame) | "
			      "ours/kernel | body only | body/kernel", 2);
	else
		printf("%-26s %-10s %7s %11s %9s %7s %9s %7s\n", "filter", "origin",
		       "classic", "kernel-eBPF", "ours", "ratio", "body", "ratio");
	for (i = 0; i < c.n; i++) {
		const struct corpus_filter *f = &c.filters[i];
		struct c2e_ebpf prog = { 0 }, body = { 0 };
		int kcount = c2e_kernel_insn_count(f->insns, f->len);
		int terr = c2e_translate(f->insns, f->len, &prog);
		int berr = c2e_emit_body(f->insns, f->len, 8, &body);

		if (kcount < 0 || terr || berr) {
			fprintf(stderr, "%s: kcount %d, translate %d, body %d\n",
				f->name, kcount, terr, berr);
			failed = 1;
		} else {
			double r = (double)prog.len / kcount;
			double rb = (double)body.len / kcount;

			if (markdown)
				printf("| %s | %s | %zu | %d | %zu | %.2f | %zu | %.2f |\n",
				       f->name, f->origin, f->len, kcount,
				       prog.len, r, body.len, rb);
			else
				printf("%-26s %-10s %7zu %11d %9zu %7.2f %9zu %7.2f\n",
				       f->name, f->origin, f->len, kcount,
				       prog.len, r, body.len, rb);
			sum_classic += f->len;
			sum_kernel += kcount;
			sum_ours += prog.len;
			sum_body += body.len;
		}
		c2e_ebpf_free(&prog);
		c2e_ebpf_free(&body);
	}
	if (sum_kernel) {
		if (markdown)
			printf("| **total** | | %zu | %ld | %ld | %.2f | %ld | %.2f |\n",
			       sum_classic, sum_kernel, sum_ours,
			       (double)sum_ours / sum_kernel, sum_body,
			       (double)sum_body / sum_kernel);
		else
			printf("%-26s %-10s %7zu %11ld %9ld %7.2f %9ld %7.2f\n",
			       "total", "", sum_classic, sum_kernel, sum_ours,
			       (double)sum_ours / sum_kernel, sum_body,
			       (double)sum_body / sum_kernel);
	}
	corpus_free(&c);
	return failed;
}
