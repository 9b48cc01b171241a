/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A growing array: room for need elements, the capacity doubled from 16
 * so that appending n elements costs O(n) copies. The lowest layer has
 * it so that every layer above (each includes classic2ebpf) grows its
 * arrays the same way, with the size checked for overflow. Internal
 * (not installed).
 */
#ifndef C2E_GROW_H
#define C2E_GROW_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/* Makes *p (of *cap elements of elem bytes) hold at least need elements:
 * 0, or -ENOMEM with *p and *cap unchanged (still to be freed). */
static inline int c2e_grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t c = *cap ? *cap : 16;
	void *n;

	if (need <= *cap)
		return 0;
	while (c < need) {
		if (c > SIZE_MAX / 2)
			return -ENOMEM;
		c *= 2;
	}
	if (elem && c > SIZE_MAX / elem)
		return -ENOMEM;
	n = realloc(*p, c * elem);
	if (!n)
		return -ENOMEM;
	*p = n;
	*cap = c;
	return 0;
}

/* c2e_grow() on an array arr (any pointer type) and its size_t cap:
 * if (C2E_GROW(v, cap, n + 1)) return -ENOMEM; v[n++] = x; */
#define C2E_GROW(arr, cap, need) ({                                        \
	void *c2e_grow_p_ = (arr);                                         \
	int c2e_grow_r_ = c2e_grow(&c2e_grow_p_, &(cap), (need), sizeof(*(arr))); \
	(arr) = c2e_grow_p_;                                               \
	c2e_grow_r_; })

#endif
