// SPDX-License-Identifier: GPL-2.0
/*
 * The empty-program floor for bench/syscall_cost.c: what every syscall of
 * every task pays once anything is attached to tp_btf/sys_enter. sfilter's
 * untracked path is measured against this.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("tp_btf/sys_enter")
int BPF_PROG(bench_floor, struct pt_regs *regs, long id)
{
	return 0;
}
