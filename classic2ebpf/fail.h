/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Filling a struct c2e_error, for the library's files. Internal to the
 * library (not installed).
 */
#ifndef C2E_FAIL_H
#define C2E_FAIL_H

#include "c2e.h"

/* Fills *err (when err is not NULL: index, code, line 0, the message) and
 * returns ret, a negative errno. */
int c2e_fail(struct c2e_error *err, int index, uint16_t code, int ret,
	     const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#endif
