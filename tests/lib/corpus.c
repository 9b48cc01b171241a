// SPDX-License-Identifier: GPL-2.0-only
/*
 * The realistic-filter corpus (see corpus.h). The libseccomp policies are
 * written the way their users write them; the hand-written filters cover
 * shapes libseccomp never emits (binary search trees, scratch memory,
 * division, immediates with the top bit set, maximal length).
 */
#define _GNU_SOURCE
#include "corpus.h"
#include "sockfilter.h"
#include "grow.h"
#include "harness.h"

#include <errno.h>
#include <linux/audit.h>
#include <seccomp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* libseccomp's SCMP_A0(op, datum) leaves datum_b to the compiler's zero. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define RET_ALLOW 0x7fff0000U
#define RET_KILL  0x80000000U
#define RET_EPERM 0x00050001U

int corpus_export(void *scmp_ctx, struct sock_filter **out, size_t *len)
{
	struct stat st;
	int fd, err;

	*out = NULL;
	*len = 0;
	fd = memfd_create("sfilter-corpus", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = seccomp_export_bpf((scmp_filter_ctx)scmp_ctx, fd);
	if (err) {
		close(fd);
		return err < 0 ? err : -EINVAL;
	}
	if (fstat(fd, &st) < 0 || st.st_size <= 0 ||
	    st.st_size % sizeof(struct sock_filter)) {
		err = -errno ? -errno : -EINVAL;
		close(fd);
		return err ? err : -EINVAL;
	}
	*out = malloc(st.st_size);
	if (!*out) {
		close(fd);
		return -ENOMEM;
	}
	if (pread(fd, *out, st.st_size, 0) != st.st_size) {
		free(*out);
		*out = NULL;
		close(fd);
		return -EIO;
	}
	close(fd);
	*len = st.st_size / sizeof(struct sock_filter);
	return 0;
}

static int add(struct corpus *c, const char *origin, struct sock_filter *insns,
	       size_t len, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* Takes ownership of insns. */
static int add(struct corpus *c, const char *origin, struct sock_filter *insns,
	       size_t len, const char *fmt, ...)
{
	struct corpus_filter *f;
	va_list ap;

	f = realloc(c->filters, (c->n + 1) * sizeof(*f));
	if (!f) {
		free(insns);
		return -ENOMEM;
	}
	c->filters = f;
	f = &c->filters[c->n++];
	memset(f, 0, sizeof(*f));
	va_start(ap, fmt);
	vsnprintf(f->name, sizeof(f->name), fmt, ap);
	va_end(ap);
	snprintf(f->origin, sizeof(f->origin), "%s", origin);
	f->insns = insns;
	f->len = len;
	return 0;
}

/* A typical small network daemon's allowlist. */
static const char *const daemon_syscalls[] = {
	"read", "write", "openat", "close", "fstat", "newfstatat", "lseek",
	"mmap", "mprotect", "munmap", "brk", "rt_sigaction",
	"rt_sigprocmask", "rt_sigreturn", "ioctl", "pread64", "pwrite64",
	"readv", "writev", "access", "pipe2", "poll", "ppoll",
	"epoll_create1", "epoll_ctl", "epoll_wait", "epoll_pwait", "dup",
	"dup3", "nanosleep", "clock_nanosleep", "getpid", "socket",
	"connect", "accept4", "sendto", "recvfrom", "sendmsg", "recvmsg",
	"shutdown", "bind", "listen", "getsockname", "setsockopt",
	"getsockopt", "fcntl", "futex", "exit", "exit_group",
	"clock_gettime",
};

/* What Docker's default profile (and runc/containerd, which copy it)
 * refuses outright; everything else on the arch is allowed, and clone,
 * clone3, personality and socket get argument rules. */
static const char *const container_denied[] = {
	"acct", "add_key", "bpf", "clock_adjtime", "clock_settime", "clone",
	"clone3", "create_module", "delete_module", "finit_module",
	"get_kernel_syms", "get_mempolicy", "init_module", "ioperm", "iopl",
	"kcmp", "kexec_file_load", "kexec_load", "keyctl", "lookup_dcookie",
	"mbind", "mount", "move_mount", "move_pages", "name_to_handle_at",
	"nfsservctl", "open_by_handle_at", "open_tree", "fsopen", "fsmount",
	"fsconfig", "fspick", "perf_event_open", "personality", "pivot_root",
	"process_vm_readv", "process_vm_writev", "ptrace", "query_module",
	"quotactl", "reboot", "request_key", "set_mempolicy", "setns",
	"settimeofday", "socket", "stime", "swapon", "swapoff", "sysfs",
	"_sysctl", "umount", "umount2", "unshare", "uselib", "userfaultfd",
	"ustat", "vm86", "vm86old", "pidfd_getfd", "quotactl_fd",
	"mount_setattr", "fanotify_init", "lookup_dcookie", "syslog",
	"vhangup",
};

static int name_in(const char *name, const char *const *list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(name, list[i]) == 0)
			return 1;
	return 0;
}

/* Adds ALLOW rules for up to max x86_64 syscalls (lowest numbers first)
 * that are not in deny; returns how many were added. */
static int allow_native_range(scmp_filter_ctx ctx, int max,
			      const char *const *deny, size_t ndeny)
{
	int nr, added = 0;

	for (nr = 0; nr < 1024 && added < max; nr++) {
		char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr);

		if (!name)
			continue;
		if (!name_in(name, deny, ndeny) &&
		    seccomp_rule_add(ctx, SCMP_ACT_ALLOW,
				     seccomp_syscall_resolve_name(name), 0) == 0)
			added++;
		free(name);
	}
	return added;
}

static int allow_names(scmp_filter_ctx ctx, const char *const *names, size_t n)
{
	size_t i;
	int added = 0;

	for (i = 0; i < n; i++) {
		int nr = seccomp_syscall_resolve_name(names[i]);

		if (nr != __NR_SCMP_ERROR &&
		    seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0) == 0)
			added++;
	}
	return added;
}

static int finish(struct corpus *c, scmp_filter_ctx ctx, const char *name)
{
	struct sock_filter *insns;
	size_t len;
	int err = corpus_export(ctx, &insns, &len);

	seccomp_release(ctx);
	if (err) {
		fprintf(stderr, "corpus: %s: export failed: %s\n", name,
			strerror(-err));
		return err;
	}
	return add(c, "libseccomp", insns, len, "%s", name);
}

static int build_allowlist(struct corpus *c, int n, int binary_tree)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	char name[48];

	if (!ctx)
		return -ENOMEM;
	if (binary_tree)
		seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (n <= (int)ARRAY_SIZE(daemon_syscalls))
		allow_names(ctx, daemon_syscalls, n);
	else
		allow_native_range(ctx, n, NULL, 0);
	snprintf(name, sizeof(name), "allow%d%s", n, binary_tree ? "-tree" : "");
	return finish(c, ctx, name);
}

static int build_denylist(struct corpus *c)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	size_t i;

	if (!ctx)
		return -ENOMEM;
	for (i = 0; i < ARRAY_SIZE(container_denied); i++) {
		int nr = seccomp_syscall_resolve_name(container_denied[i]);

		if (nr != __NR_SCMP_ERROR)
			seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
	}
	return finish(c, ctx, "deny-container-set");
}

/* Argument rules as hardened services write them: socket families,
 * ioctl requests, no PROT_EXEC, read-only opens, 64-bit comparisons. */
static int build_args(struct corpus *c)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	static const int families[] = { 1 /* AF_UNIX */, 2 /* AF_INET */,
					10 /* AF_INET6 */, 16 /* AF_NETLINK */ };
	static const unsigned long ioctls[] = { 0x5401 /* TCGETS */,
		0x541b /* FIONREAD */, 0x5421 /* FIONBIO */, 0x5413 /* TIOCGWINSZ */ };
	static const int fcntls[] = { 1, 2, 3, 4 }; /* F_GETFD..F_SETFL */
	size_t i;

	if (!ctx)
		return -ENOMEM;
	allow_names(ctx, daemon_syscalls, 20);
	for (i = 0; i < ARRAY_SIZE(families); i++)
		seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
				 SCMP_A0(SCMP_CMP_EQ, families[i]));
	for (i = 0; i < ARRAY_SIZE(ioctls); i++)
		seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
				 SCMP_A1(SCMP_CMP_EQ, ioctls[i]));
	for (i = 0; i < ARRAY_SIZE(fcntls); i++)
		seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(fcntl), 1,
				 SCMP_A1(SCMP_CMP_EQ, fcntls[i]));
	seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1,
			 SCMP_A2(SCMP_CMP_MASKED_EQ, 4 /* PROT_EXEC */, 0));
	seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 1,
			 SCMP_A2(SCMP_CMP_MASKED_EQ, 4, 0));
	seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(open), 1,
			 SCMP_A1(SCMP_CMP_MASKED_EQ, 3 /* O_ACCMODE */, 0));
	seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(kill), 2,
			 SCMP_A0(SCMP_CMP_GT, 0), SCMP_A1(SCMP_CMP_EQ, 0));
	seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1,
			 SCMP_A0(SCMP_CMP_EQ, 15 /* PR_SET_NAME */));
	seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1,
			 SCMP_A0(SCMP_CMP_EQ, 16 /* PR_GET_NAME */));
	seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(lseek), 1,
			 SCMP_A1(SCMP_CMP_LT, 0x100000000ULL));
	seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ftruncate), 1,
			 SCMP_A1(SCMP_CMP_LE, 0x7fffffffffffULL));
	seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(fallocate), 1,
			 SCMP_A2(SCMP_CMP_GE, 0x1000));
	seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(madvise), 1,
			 SCMP_A2(SCMP_CMP_NE, 10 /* MADV_DONTFORK */));
	seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
			 SCMP_A0(SCMP_CMP_MASKED_EQ, 0x7e020000, 0));
	seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(ptrace), 0);
	seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(execve), 1,
			 SCMP_A2(SCMP_CMP_NE, 0));
	return finish(c, ctx, "args-hardened-service");
}

static int build_multiarch(struct corpus *c)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);

	if (!ctx)
		return -ENOMEM;
	seccomp_arch_add(ctx, SCMP_ARCH_X86);
	seccomp_arch_add(ctx, SCMP_ARCH_X32);
	allow_native_range(ctx, 100, NULL, 0);
	return finish(c, ctx, "allow100-x86_64+x86+x32");
}

static int build_container(struct corpus *c, int binary_tree)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	static const unsigned long personas[] = { 0x0, 0x8, 0x20000, 0x20008,
						  0xffffffff };
	size_t i;

	if (!ctx)
		return -ENOMEM;
	if (binary_tree)
		seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	seccomp_arch_add(ctx, SCMP_ARCH_X86);
	seccomp_arch_add(ctx, SCMP_ARCH_X32);
	allow_native_range(ctx, 1024, container_denied,
			   ARRAY_SIZE(container_denied));
	for (i = 0; i < ARRAY_SIZE(personas); i++)
		seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(personality), 1,
				 SCMP_A0(SCMP_CMP_EQ, personas[i]));
	/* No new namespaces: CLONE_NEWNS|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET|NEWCGROUP. */
	seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
			 SCMP_A0(SCMP_CMP_MASKED_EQ, 0x7e020000, 0));
	seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
			 SCMP_A0(SCMP_CMP_NE, 40 /* AF_VSOCK */));
	return finish(c, ctx, binary_tree ? "container-default-tree" :
					    "container-default");
}

/* ---- hand-written filters ---------------------------------------------- */

struct buf {
	struct sock_filter *p;
	size_t n, cap;
	int oom;
};

static void put(struct buf *b, struct sock_filter f)
{
	if (C2E_GROW(b->p, b->cap, b->n + 1)) {
		b->oom = 1;
		return;
	}
	b->p[b->n++] = f;
}

static int add_buf(struct corpus *c, struct buf *b, const char *name)
{
	if (b->oom) {
		free(b->p);
		return -ENOMEM;
	}
	return add(c, "hand", b->p, b->n, "%s", name);
}

#define LD_NR   STMT(BPF_LD | BPF_W | BPF_ABS, 0)
#define LD_ARCH STMT(BPF_LD | BPF_W | BPF_ABS, 4)
#define ARG_LO(i) (16 + 8 * (i))
#define ARG_HI(i) (20 + 8 * (i))

/* The kernel's samples/seccomp style: arch check, then a JEQ per call. */
static int hand_linear(struct corpus *c)
{
	static const uint32_t nrs[] = { 0, 1, 3, 9, 10, 11, 12, 60, 231, 202 };
	struct buf b = { 0 };
	size_t i;

	put(&b, LD_ARCH);
	put(&b, JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0));
	put(&b, STMT(BPF_RET | BPF_K, RET_KILL));
	put(&b, LD_NR);
	for (i = 0; i < ARRAY_SIZE(nrs); i++) {
		put(&b, JUMP(BPF_JMP | BPF_JEQ | BPF_K, nrs[i], 0, 1));
		put(&b, STMT(BPF_RET | BPF_K, RET_ALLOW));
	}
	put(&b, STMT(BPF_RET | BPF_K, RET_EPERM));
	return add_buf(c, &b, "hand-linear-10");
}

/* A balanced JGE search tree over 128 syscall numbers, leaves JEQ. */
static void tree(struct buf *b, const uint32_t *nrs, size_t n)
{
	size_t at, mid;

	if (n <= 2) {
		size_t i;

		for (i = 0; i < n; i++) {
			put(b, JUMP(BPF_JMP | BPF_JEQ | BPF_K, nrs[i], 0, 1));
			put(b, STMT(BPF_RET | BPF_K, RET_ALLOW));
		}
		put(b, STMT(BPF_RET | BPF_K, RET_EPERM));
		return;
	}
	mid = n / 2;
	at = b->n;
	put(b, JUMP(BPF_JMP | BPF_JGE | BPF_K, nrs[mid], 0, 0));
	tree(b, nrs, mid);
	if (!b->oom) {
		size_t skip = b->n - at - 1;

		/* Jump offsets are 8 bits; keep subtrees small enough. */
		b->p[at].jt = skip > 255 ? 255 : (uint8_t)skip;
	}
	tree(b, nrs + mid, n - mid);
}

static int hand_tree(struct corpus *c)
{
	uint32_t nrs[96];
	struct buf b = { 0 };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(nrs); i++)
		nrs[i] = (uint32_t)(i * 3 + (i & 1));
	put(&b, LD_ARCH);
	put(&b, JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0));
	put(&b, STMT(BPF_RET | BPF_K, RET_KILL));
	put(&b, LD_NR);
	tree(&b, nrs, ARRAY_SIZE(nrs));
	return add_buf(c, &b, "hand-bst-96");
}

/* Scratch memory and ALU: combine both halves of three arguments. */
static int hand_scratch_alu(struct corpus *c)
{
	struct buf b = { 0 };
	int i;

	for (i = 0; i < 3; i++) {
		put(&b, STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(i)));
		put(&b, STMT(BPF_ST, 2 * i));
		put(&b, STMT(BPF_LD | BPF_W | BPF_ABS, ARG_HI(i)));
		put(&b, STMT(BPF_ST, 2 * i + 1));
	}
	put(&b, STMT(BPF_LD | BPF_IMM, 0));
	for (i = 0; i < 6; i++) {
		put(&b, STMT(BPF_LDX | BPF_MEM, i));
		put(&b, STMT(BPF_ALU | BPF_XOR | BPF_X, 0));
		put(&b, STMT(BPF_ALU | BPF_LSH | BPF_K, 1));
		put(&b, STMT(BPF_ALU | BPF_ADD | BPF_K, 0x9e3779b9));
		put(&b, STMT(BPF_ALU | BPF_MUL | BPF_K, 31));
	}
	put(&b, STMT(BPF_ALU | BPF_AND | BPF_K, 0xffff));
	put(&b, STMT(BPF_ALU | BPF_OR | BPF_K, 0x00050000));
	put(&b, STMT(BPF_MISC | BPF_TAX, 0));
	put(&b, STMT(BPF_LD | BPF_W | BPF_ABS, 0));
	put(&b, JUMP(BPF_JMP | BPF_JGT | BPF_K, 400, 0, 1));
	put(&b, STMT(BPF_RET | BPF_K, RET_ALLOW));
	put(&b, STMT(BPF_MISC | BPF_TXA, 0));
	put(&b, STMT(BPF_RET | BPF_A, 0));
	return add_buf(c, &b, "hand-scratch-alu");
}

/* Flag checks: JSET with immediates whose top bit is set, two-way. */
static int hand_flags(struct corpus *c)
{
	struct buf b = { 0 };
	int i;

	for (i = 0; i < 32; i++) {
		put(&b, STMT(BPF_LD | BPF_W | BPF_ABS, ARG_HI(i % 6)));
		put(&b, JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x80000000U >> (i % 4), 1, 2));
		put(&b, STMT(BPF_RET | BPF_K, 0x00030000U | i));
		put(&b, JUMP(BPF_JMP | BPF_JGE | BPF_K, 0xfffff000U, 0, 1));
		put(&b, STMT(BPF_RET | BPF_K, RET_EPERM));
	}
	put(&b, STMT(BPF_RET | BPF_K, RET_ALLOW));
	return add_buf(c, &b, "hand-jset-negk");
}

/* Division by X, with X sometimes zero (the filter then returns 0). */
static int hand_div(struct corpus *c)
{
	struct buf b = { 0 };
	int i;

	put(&b, STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(0)));
	for (i = 0; i < 64; i++) {
		put(&b, STMT(BPF_LDX | BPF_IMM, i % 5));
		put(&b, STMT(BPF_ALU | BPF_DIV | BPF_X, 0));
		put(&b, STMT(BPF_ALU | BPF_ADD | BPF_K, 12345));
	}
	put(&b, STMT(BPF_RET | BPF_A, 0));
	return add_buf(c, &b, "hand-div-x");
}

/* The longest filters there are: 4096 instructions. */
static int hand_max_ret(struct corpus *c)
{
	struct buf b = { 0 };
	int i;

	for (i = 0; i < 4096; i++)
		put(&b, STMT(BPF_RET | BPF_K, RET_ALLOW));
	return add_buf(c, &b, "hand-4096-ret");
}

static int hand_max_jeq(struct corpus *c)
{
	struct buf b = { 0 };
	int i;

	put(&b, LD_NR);
	for (i = 0; i < 2047; i++) {
		put(&b, JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1000 + i, 0, 1));
		put(&b, STMT(BPF_RET | BPF_K, RET_ALLOW));
	}
	put(&b, STMT(BPF_RET | BPF_K, RET_EPERM));
	return add_buf(c, &b, "hand-4096-jeq");
}

int corpus_build(struct corpus *c)
{
	int err = 0;

	c->filters = NULL;
	c->n = 0;
	err = err ?: add(c, "hand", calloc(1, sizeof(struct sock_filter)), 1,
			 "allow-all");
	if (!err)
		c->filters[0].insns[0] = STMT(BPF_RET | BPF_K, RET_ALLOW);
	err = err ?: build_allowlist(c, 50, 0);
	err = err ?: build_allowlist(c, 300, 0);
	err = err ?: build_allowlist(c, 300, 1);
	err = err ?: build_denylist(c);
	err = err ?: build_args(c);
	err = err ?: build_multiarch(c);
	err = err ?: build_container(c, 0);
	err = err ?: build_container(c, 1);
	err = err ?: hand_linear(c);
	err = err ?: hand_tree(c);
	err = err ?: hand_scratch_alu(c);
	err = err ?: hand_flags(c);
	err = err ?: hand_div(c);
	err = err ?: hand_max_ret(c);
	err = err ?: hand_max_jeq(c);
	return err;
}

void corpus_free(struct corpus *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		free(c->filters[i].insns);
	free(c->filters);
	c->filters = NULL;
	c->n = 0;
}
