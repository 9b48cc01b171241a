// SPDX-License-Identifier: GPL-2.0-only
/*
 * The empty-program floor for bench/syscall_cost.c: what every syscall of
 * every task pays once anything is attached to tp_btf/sys_enter. sfilter's
 * untracked path is measured against this. bench_floor_tail adds one tail
 * call through a PROG_ARRAY with a key the verifier cannot know (as
 * sfilter's dispatcher makes into a chain): what generating one dispatcher
 * per chain, without the tail call, could save at most.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u32);
} bench_progs SEC(".maps");

/* Set by user space; a variable, so that the JIT emits an indirect tail
 * call, not a patched direct jump. */
__u32 bench_slot;

SEC("tp_btf/sys_enter")
int BPF_PROG(bench_floor, struct pt_regs *regs, long id)
{
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(bench_floor_tail, struct pt_regs *regs, long id)
{
	bpf_tail_call(ctx, &bench_progs, bench_slot);
	return 0;
}

/* Reached by tail call only. */
SEC("tp_btf/sys_enter")
int BPF_PROG(bench_tail_target, struct pt_regs *regs, long id)
{
	return 0;
}
