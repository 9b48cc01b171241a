// SPDX-License-Identifier: GPL-2.0-only
/* The runtime as most runtime tests open it (rtopen.h). */
#include "rtopen.h"
#include "harness.h"
#include "runtime.h"

#include <stdlib.h>

struct sf_runtime *rtopen(void)
{
	struct sf_runtime *rt = NULL;
	struct sf_runtime_opts o = { .verbose = getenv("SF_VERBOSE") != NULL };

	if (!ASSERT_OK(sf_runtime_open(&rt, &o), "sf_runtime_open"))
		return NULL;
	return rt;
}
