/* SPDX-License-Identifier: GPL-2.0-only */
/* The runtime as most runtime tests open it. */
#ifndef SF_TEST_RTOPEN_H
#define SF_TEST_RTOPEN_H

struct sf_runtime;

/* sf_runtime_open() with the default options, verbose when SF_VERBOSE is
 * set; NULL with the test failed when it cannot be opened. */
struct sf_runtime *rtopen(void);

#endif
