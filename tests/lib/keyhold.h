/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SF_TEST_KEYHOLD_H
#define SF_TEST_KEYHOLD_H

/* Under emulation, keeps the sys_enter/sys_exit tracepoints enabled for
 * the rest of the process (bpf/keyhold.bpf.c says why). Returns 0 or
 * -errno; the caller reports a failure and goes on. */
int keyhold_start(void);

#endif
