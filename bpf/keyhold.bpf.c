// SPDX-License-Identifier: GPL-2.0-only
/*
 * For the test suite under emulation only (tests/lib/keyhold.c): empty
 * programs that keep the sys_enter and sys_exit tracepoints enabled for the
 * whole run, so their static keys never flip while tests spin in system
 * calls. Under QEMU TCG on 6.1, a flip (text_poke_bp) while another vCPU
 * runs syscalls in a tight loop has livelocked a vCPU at the jump-label
 * site in syscall_trace_enter (a soft lockup, then a panic); each test
 * attaching and detaching sfilter's programs flips them many times a run.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("tp_btf/sys_enter")
int BPF_PROG(keyhold_enter, struct pt_regs *regs, long id)
{
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(keyhold_exit, struct pt_regs *regs, long ret)
{
	return 0;
}
