// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kernel layout the chain programs read, from vmlinux BTF: where the
 * syscall registers sit in struct pt_regs, where a task's compat bit is,
 * and, for the 2012 interface's struct user_regs_struct, every register
 * ptrace(PTRACE_GETREGS) shows, the segment selectors and the fs/gs bases
 * the kernel keeps in task_struct.thread.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

/* A member by name, looking through anonymous structs and unions (pt_regs
 * wraps cs and ss in one on newer kernels). Its byte offset goes to *off. */
static const struct btf_member *find_member(const struct btf *btf, int type_id,
					    const char *name, int *off)
{
	const struct btf_type *t = btf__type_by_id(btf, type_id);
	const struct btf_member *m;
	int i, sub;

	if (!t || !(btf_is_struct(t) || btf_is_union(t)))
		return NULL;
	m = btf_members(t);
	for (i = 0; i < btf_vlen(t); i++, m++) {
		const char *mn = btf__name_by_offset(btf, m->name_off);
		int base = btf_member_bit_offset(t, i) / 8;

		if (mn && strcmp(mn, name) == 0) {
			*off = base;
			return m;
		}
		if (!m->name_off) {
			const struct btf_member *in =
				find_member(btf, btf__resolve_type(btf, m->type), name, &sub);

			if (in) {
				*off = base + sub;
				return in;
			}
		}
	}
	return NULL;
}

/* A field of at least min_size bytes: 0 or -ENOENT, said on stderr. */
static int field(const struct btf *btf, int type_id, const char *tname,
		 const char *name, int min_size, int *off)
{
	const struct btf_member *m = find_member(btf, type_id, name, off);

	if (!m || btf__resolve_size(btf, m->type) < min_size) {
		fprintf(stderr, "sfilter: BTF: %s.%s missing or under %d bytes\n",
			tname, name, min_size);
		return -ENOENT;
	}
	return 0;
}

/* struct user_regs_struct's first 21 registers, in its order, by their
 * pt_regs names; cs and ss are 16-bit selectors. */
static const char *const rfc_regs[SF_RFC_PT_REGS] = {
	"r15", "r14", "r13", "r12", "bp", "bx", "r11", "r10", "r9", "r8",
	"ax", "cx", "dx", "si", "di", "orig_ax", "ip", "cs", "flags", "sp", "ss",
};

/* The 2012 layout's sources. Missing ones leave l->rfc_ok false: only
 * 2012-interface filters are refused then. */
static void rfc_layout_read(const struct btf *btf, int regs, int task,
			    struct sf_layout *l)
{
	static const char *const thread[SF_RFC_THREAD] = {
		"fsbase", "gsbase", "ds", "es", "fsindex", "gsindex",
	};
	int i, th, th_off, sub;
	const struct btf_member *m;

	for (i = 0; i < SF_RFC_PT_REGS; i++) {
		int min = i == SF_RFC_CS || i == SF_RFC_SS ? 2 : 8;

		if (field(btf, regs, "pt_regs", rfc_regs[i], min, &l->rfc_reg[i]))
			return;
	}
	m = find_member(btf, task, "thread", &th_off);
	if (!m) {
		fprintf(stderr, "sfilter: BTF: task_struct.thread missing\n");
		return;
	}
	th = btf__resolve_type(btf, m->type);
	for (i = 0; i < SF_RFC_THREAD; i++) {
		/* fsbase, gsbase: unsigned long; the selectors: unsigned short */
		int size = i < 2 ? 8 : 2;

		m = find_member(btf, th, thread[i], &sub);
		if (!m || btf__resolve_size(btf, m->type) != size) {
			fprintf(stderr, "sfilter: BTF: thread_struct.%s missing or not %d bytes\n",
				thread[i], size);
			return;
		}
		l->rfc_thread[i] = th_off + sub;
	}
	l->rfc_ok = true;
}

int sf_layout_read(struct sf_layout *l)
{
	struct btf *btf = btf__load_vmlinux_btf();
	const struct btf_member *m;
	int regs, task, ti_off, st_off, err = 0;

	if (!btf)
		return -errno;
	memset(l, 0, sizeof(*l));
	regs = btf__find_by_name_kind(btf, "pt_regs", BTF_KIND_STRUCT);
	task = btf__find_by_name_kind(btf, "task_struct", BTF_KIND_STRUCT);
	l->sys_enter_btf_id = btf__find_by_name_kind(btf, "btf_trace_sys_enter",
						     BTF_KIND_TYPEDEF);
	if (regs < 0 || task < 0 || l->sys_enter_btf_id < 0) {
		fprintf(stderr, "sfilter: BTF: pt_regs, task_struct or btf_trace_sys_enter missing\n");
		err = -ENOENT;
		goto out;
	}
	if ((err = field(btf, regs, "pt_regs", "di", 8, &l->di)) ||
	    (err = field(btf, regs, "pt_regs", "si", 8, &l->si)) ||
	    (err = field(btf, regs, "pt_regs", "dx", 8, &l->dx)) ||
	    (err = field(btf, regs, "pt_regs", "r10", 8, &l->r10)) ||
	    (err = field(btf, regs, "pt_regs", "r8", 8, &l->r8)) ||
	    (err = field(btf, regs, "pt_regs", "r9", 8, &l->r9)) ||
	    (err = field(btf, regs, "pt_regs", "bx", 8, &l->bx)) ||
	    (err = field(btf, regs, "pt_regs", "cx", 8, &l->cx)) ||
	    (err = field(btf, regs, "pt_regs", "bp", 8, &l->bp)) ||
	    (err = field(btf, regs, "pt_regs", "ip", 8, &l->ip)))
		goto out;
	m = find_member(btf, task, "thread_info", &ti_off);
	if (!m) {
		err = -ENOENT;
		fprintf(stderr, "sfilter: BTF: task_struct.thread_info missing\n");
		goto out;
	}
	m = find_member(btf, btf__resolve_type(btf, m->type), "status", &st_off);
	if (!m || btf__resolve_size(btf, m->type) != 4) {
		err = -ENOENT;
		fprintf(stderr, "sfilter: BTF: thread_info.status missing or not 4 bytes\n");
		goto out;
	}
	l->status = ti_off + st_off;
	rfc_layout_read(btf, regs, task, l);
out:
	btf__free(btf);
	return err;
}
