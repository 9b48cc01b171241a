/* SPDX-License-Identifier: GPL-2.0-only */
/* Latencies the "stalls no one" tests collect: sorted, and read by rank. */
#ifndef SF_TESTS_LATENCY_H
#define SF_TESTS_LATENCY_H

/* Sorts n times, smallest first. */
void lat_sort(double *ms, int n);
/* The nearest-rank percentile p of n sorted times. */
double lat_pct(const double *ms, int n, int p);

#endif
