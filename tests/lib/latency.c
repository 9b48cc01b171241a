// SPDX-License-Identifier: GPL-2.0-only
#include "latency.h"

#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void lat_sort(double *ms, int n)
{
	qsort(ms, (size_t)n, sizeof(*ms), cmp_double);
}

double lat_pct(const double *ms, int n, int p)
{
	int rank = (p * n + 99) / 100;

	return ms[rank > 0 ? rank - 1 : 0];
}
