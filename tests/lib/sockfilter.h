/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Classic BPF instructions as values: the kernel's BPF_STMT/BPF_JUMP are
 * bare brace initialisers, usable only in a declaration; cast to struct
 * sock_filter they can also be assigned, passed and put in compound
 * literals, which is how the tests and fuzzers build their programs.
 */
#ifndef SF_TEST_SOCKFILTER_H
#define SF_TEST_SOCKFILTER_H

#include <linux/filter.h>

#define STMT(code, k)         ((struct sock_filter)BPF_STMT(code, k))
#define JUMP(code, k, jt, jf) ((struct sock_filter)BPF_JUMP(code, k, jt, jf))

#endif
