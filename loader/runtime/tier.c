// SPDX-License-Identifier: GPL-2.0-only
/*
 * Which enforcement tier this kernel allows, decided by what BPF LSM
 * programs do here, not by whether they load. With the bpf LSM built but
 * left out of the active lsm= list, LSM programs load and attach and then
 * never run: a runtime that took that for the lsm tier would promise
 * refused side effects that never happen. securityfs (whose lsm file lists
 * the active LSMs) is not needed, nor trusted, for this.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>

#define INSN(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), \
						  .src_reg = (s), .off = (o), .imm = (i) })

/*
 * An LSM program on task_prctl that refuses this process's prctl() with
 * EPERM and has no opinion (0) on anyone else's, attached for as long as
 * one prctl(PR_GET_DUMPABLE) takes. true: LSM programs run here; false:
 * they do not, or could not be tried (why says which): the tracepoint tier,
 * which promises less.
 */
bool sf_rt_lsm_programs_run(const struct btf *vmlinux, char *why, size_t size)
{
	const struct bpf_insn insns[] = {
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_current_pid_tgid),
		INSN(BPF_ALU64 | BPF_RSH | BPF_K, BPF_REG_0, 0, 0, 32),
		INSN(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_0, 0, 2, getpid()),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, -EPERM),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	int id, fd, link, r, err;

	id = vmlinux ? btf__find_by_name_kind(vmlinux, "bpf_lsm_task_prctl", BTF_KIND_FUNC) : -1;
	if (id < 0) {
		snprintf(why, size, "the kernel has no BPF LSM hooks (CONFIG_BPF_LSM)");
		return false;
	}
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = BPF_LSM_MAC,
		    .attach_btf_id = id);
	fd = bpf_prog_load(BPF_PROG_TYPE_LSM, "sf_lsm_probe", "GPL", insns,
			   sizeof(insns) / sizeof(insns[0]), &o);
	if (fd < 0) {
		snprintf(why, size, "BPF LSM programs refused at load (%s)", strerror(errno));
		return false;
	}
	link = bpf_link_create(fd, 0, BPF_LSM_MAC, NULL);
	err = errno;
	close(fd);
	if (link < 0) {
		snprintf(why, size, "BPF LSM programs refused at attach (%s)", strerror(err));
		return false;
	}
	r = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
	err = errno;
	close(link);
	if (r < 0 && err == EPERM)
		return true;
	snprintf(why, size, "BPF LSM programs attach but never run "
		 "(the bpf LSM is not in the kernel's active lsm= list)");
	return false;
}

/* Whether an fexit program on fn loads and attaches here (BPF trampolines:
 * some kernels refuse them, as they refuse LSM programs). */
bool sf_rt_fexit_attaches(const struct btf *vmlinux, const char *fn)
{
	const struct bpf_insn insns[] = {
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	int id = vmlinux ? btf__find_by_name_kind(vmlinux, fn, BTF_KIND_FUNC) : -1;
	int fd, link;

	if (id < 0)
		return false;
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = BPF_TRACE_FEXIT,
		    .attach_btf_id = id);
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "sf_fexit_probe", "GPL", insns,
			   sizeof(insns) / sizeof(insns[0]), &o);
	if (fd < 0)
		return false;
	link = bpf_link_create(fd, 0, BPF_TRACE_FEXIT, NULL);
	close(fd);
	if (link < 0)
		return false;
	close(link);
	return true;
}
