// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Loading and running translated code in the kernel, through the test frame:
 * a BPF_PROG_TYPE_RAW_TRACEPOINT program whose context is the 64-byte
 * struct seccomp_data, run once per input with BPF_PROG_TEST_RUN.
 *
 * Raw tracepoint programs are used because bpf_prog_test_run_raw_tp() copies
 * an arbitrary ctx_in of up to MAX_BPF_FUNC_ARGS * 8 = 96 bytes and the
 * verifier lets the program read it with aligned u32 loads
 * (bpf_tracing_ctx_access()), which is exactly what a classic LD W ABS of
 * seccomp_data becomes.
 */
#include "c2e.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <bpf/bpf.h>

/* kernel/bpf/log.c bpf_vlog_init(): a log buffer below 128 bytes or above
 * UINT_MAX >> 2 makes the load fail with EINVAL whatever the program. */
#define LOG_MIN 128
#define LOG_MAX (UINT_MAX >> 2)

int c2e_kernel_load(const struct c2e_ebpf *prog, char *log, size_t log_size)
{
	return c2e_kernel_load_abi(prog, C2E_ABI_SECCOMP, log, log_size);
}

int c2e_kernel_load_abi(const struct c2e_ebpf *prog, enum c2e_abi abi,
			char *log, size_t log_size)
{
	/* The RFC test frame is a socket filter (see c2e_translate_abi()). */
	enum bpf_prog_type type = abi == C2E_ABI_SECCOMP ?
				  BPF_PROG_TYPE_RAW_TRACEPOINT :
				  BPF_PROG_TYPE_SOCKET_FILTER;
	LIBBPF_OPTS(bpf_prog_load_opts, opts);
	int fd, err;

	if (log && log_size)
		log[0] = '\0';
	if (!prog || !prog->insns || !prog->len)
		return -EINVAL;

	/* The fast path asks for no log: with log_level 0 and no buffer the
	 * verifier does not format anything. libbpf would retry by itself
	 * only when a buffer is passed, so the retry below is ours. */
	fd = bpf_prog_load(type, NULL, "GPL",
			   prog->insns, prog->len, &opts);
	if (fd >= 0)
		return fd;
	err = fd;
	if (!log || log_size < LOG_MIN)
		return err;

	opts.log_buf = log;
	opts.log_size = log_size > LOG_MAX ? LOG_MAX : (uint32_t)log_size;
	opts.log_level = 1;
	fd = bpf_prog_load(type, NULL, "GPL",
			   prog->insns, prog->len, &opts);
	log[log_size - 1] = '\0';
	/* A retry can only differ by a transient condition; keep the first
	 * error (a full log makes the kernel answer ENOSPC instead). */
	return fd >= 0 ? fd : err;
}

int c2e_kernel_run(int prog_fd, const struct seccomp_data *data,
		   uint32_t *ret)
{
	/* bpf_prog_test_run_raw_tp() refuses repeat, duration, data_in/out
	 * and ctx_out: only the context goes in, only retval comes back. */
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		    .ctx_in = data,
		    .ctx_size_in = C2E_DATA_SIZE);
	int err;

	err = bpf_prog_test_run_opts(prog_fd, &opts);
	if (err)
		return err < 0 ? err : -EINVAL;
	if (ret)
		*ret = opts.retval;
	return 0;
}

/* The Ethernet header bpf_prog_test_run_skb() strips before the program
 * sees the packet. */
#define RFC_PACKET_HEAD 14

int c2e_kernel_run_abi(int prog_fd, enum c2e_abi abi, const void *data,
		       uint32_t *ret)
{
	unsigned char pkt[RFC_PACKET_HEAD + C2E_ABI_MAX_SIZE] = { 0 };
	size_t size = c2e_abi_data_size(abi);
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = pkt);
	int err;

	if (abi == C2E_ABI_SECCOMP)
		return c2e_kernel_run(prog_fd, data, ret);
	if (!size)
		return -EINVAL;
	memcpy(pkt + RFC_PACKET_HEAD, data, size);
	opts.data_size_in = RFC_PACKET_HEAD + size;
	err = bpf_prog_test_run_opts(prog_fd, &opts);
	if (err)
		return err < 0 ? err : -EINVAL;
	if (ret)
		*ret = opts.retval;
	return 0;
}
