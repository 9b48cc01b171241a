// SPDX-License-Identifier: GPL-2.0-only
/* Probes of kernel features (see probe.h). */
#define _GNU_SOURCE
#include "probe.h"

#include <errno.h>
#include <grp.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>

#define I386_GETPID       20
#define SECURITYFS_MAGIC  0x73636673
#define SECURITYFS_DIR    "/sys/kernel/security"
#define ENOTSUPP_         524 /* the kernel's internal ENOTSUPP */

static int answer(int r, char *why, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int answer(int r, char *why, size_t size, const char *fmt, ...)
{
	va_list ap;

	if (why && size) {
		va_start(ap, fmt);
		vsnprintf(why, size, fmt, ap);
		va_end(ap);
	}
	return r;
}

/* A probe whose answer cannot change while the process lives. */
struct cached {
	int r;            /* 0 until first asked, then the answer + 2 */
	char why[160];
};

static int cached_answer(const struct cached *c, char *why, size_t size)
{
	return answer(c->r - 2, why, size, "%s", c->why);
}

static void cache(struct cached *c, int r)
{
	/* A failed probe is asked again: its reason may be transient. */
	if (r >= 0)
		c->r = r + 2;
}

/* ---- int $0x80 -------------------------------------------------------- */

static long int80_getpid(void)
{
	long ret;

	/* The compat entry does not preserve r8-r11 for a 64-bit caller. */
	__asm__ volatile("int $0x80" : "=a"(ret) : "a"((long)I386_GETPID)
			 : "memory", "r8", "r9", "r10", "r11");
	return ret;
}

int probe_int80(char *why, size_t size)
{
	static struct cached c;
	long got = 0;
	int p[2], status, r;
	pid_t pid;

	if (c.r)
		return cached_answer(&c, why, size);
	if (pipe(p))
		return answer(-1, why, size, "int $0x80 probe: pipe: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		r = errno;
		close(p[0]);
		close(p[1]);
		return answer(-1, why, size, "int $0x80 probe: fork: %s", strerror(r));
	}
	if (pid == 0) {
		/* The expected SIGSEGV must not leave a core file behind. */
		prctl(PR_SET_DUMPABLE, 0);
		got = int80_getpid();
		if (write(p[1], &got, sizeof(got)) != sizeof(got))
			_exit(2);
		_exit(got == getpid() ? 0 : 1);
	}
	close(p[1]);
	if (read(p[0], &got, sizeof(got)) != sizeof(got))
		got = 0;
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return answer(-1, why, size, "int $0x80 probe: waitpid: %s",
				      strerror(errno));
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV)
		r = answer(0, c.why, sizeof(c.why),
			   "int $0x80 from a 64-bit task is refused by this kernel (SIGSEGV)");
	else if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		r = answer(1, c.why, sizeof(c.why), "int $0x80 from a 64-bit task works");
	else if (WIFEXITED(status) && WEXITSTATUS(status) == 1)
		r = answer(-1, c.why, sizeof(c.why),
			   "int $0x80 getpid (i386 20) returned %ld, not the caller's pid %d",
			   got, pid);
	else
		r = answer(-1, c.why, sizeof(c.why),
			   "int $0x80 probe child ended with wait status 0x%x", status);
	cache(&c, r);
	return answer(r, why, size, "%s", c.why);
}

/* ---- x32 ----------------------------------------------------------------- */

int probe_x32(char *why, size_t size)
{
	static struct cached c;
	long got;
	int r;

	if (c.r)
		return cached_answer(&c, why, size);
	errno = 0;
	got = syscall(__X32_SYSCALL_BIT | SYS_getpid);
	if (got == getpid())
		r = answer(1, c.why, sizeof(c.why), "x32 system calls work");
	else if (got == -1 && errno == ENOSYS)
		r = answer(0, c.why, sizeof(c.why),
			   "x32 syscalls disabled on this kernel (ENOSYS)");
	else
		r = answer(-1, c.why, sizeof(c.why),
			   "x32 getpid (0x%x) returned %ld (%s), not the pid %d",
			   __X32_SYSCALL_BIT | SYS_getpid, got, strerror(errno), getpid());
	cache(&c, r);
	return answer(r, why, size, "%s", c.why);
}

/* ---- unprivileged user namespaces --------------------------------------- */

int probe_unpriv_userns(char *why, size_t size)
{
	int st = -1;
	pid_t p = fork();

	if (p == 0) {
		if (getuid() == 0 && (setgroups(0, NULL) || setgid(65534) || setuid(65534)))
			_exit(2);
		_exit(unshare(CLONE_NEWUSER) ? (errno == EPERM || errno == ENOSPC ||
						errno == EINVAL ? 1 : 3) : 0);
	}
	if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st))
		return answer(-1, why, size, "fork or wait for the user namespace probe");
	switch (WEXITSTATUS(st)) {
	case 0:
		return answer(1, why, size, "unprivileged user namespaces");
	case 1:
		return answer(0, why, size, "unprivileged user namespaces are refused here");
	default:
		return answer(-1, why, size, "user namespace probe: step %d failed",
			      WEXITSTATUS(st));
	}
}

/* ---- BPF LSM ----------------------------------------------------------- */

static const char *errno_str(int err)
{
	return err == ENOTSUPP_ ? "ENOTSUPP" : strerror(err);
}

/* The last line of a verifier log: what the kernel objected to. */
static const char *log_tail(char *log)
{
	char *end = log + strlen(log), *start;

	while (end > log && end[-1] == '\n')
		*--end = '\0';
	start = strrchr(log, '\n');
	return start ? start + 1 : log;
}

int probe_bpf_lsm(char *why, size_t size)
{
	/*
	 * r0 = bpf_get_current_pid_tgid() >> 32;
	 * return r0 == this tgid ? -EPERM : 0;
	 * LSM programs run in modify-return mode: 0 is "no opinion", so
	 * every other process is left alone.
	 */
	struct bpf_insn insns[] = {
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_get_current_pid_tgid },
		{ .code = BPF_ALU64 | BPF_RSH | BPF_K, .dst_reg = BPF_REG_0, .imm = 32 },
		{ .code = BPF_JMP | BPF_JNE | BPF_K, .dst_reg = BPF_REG_0, .off = 2,
		  .imm = getpid() },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = -EPERM },
		{ .code = BPF_JMP | BPF_EXIT },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	const char *hook = "bpf_lsm_task_prctl";
	char log[4096] = "";
	struct btf *btf;
	int id, fd, link, err, got;

	btf = btf__load_vmlinux_btf();
	if (!btf)
		return answer(0, why, size, "BPF LSM programs: no kernel BTF (%s)",
			      strerror(errno));
	id = btf__find_by_name_kind(btf, hook, BTF_KIND_FUNC);
	btf__free(btf);
	if (id < 0)
		return answer(0, why, size, "BPF LSM programs: no BTF function %s "
			      "(kernel without CONFIG_BPF_LSM)", hook);

	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = BPF_LSM_MAC,
		    .attach_btf_id = id, .log_buf = log, .log_size = sizeof(log));
	fd = bpf_prog_load(BPF_PROG_TYPE_LSM, "sf_probe_lsm", "GPL", insns,
			   sizeof(insns) / sizeof(insns[0]), &o);
	if (fd < 0) {
		err = errno;
		if (err == ENOMEM || err == EFAULT || err == EBADF)
			return answer(-1, why, size, "BPF LSM probe: load: %s",
				      strerror(err));
		return answer(0, why, size, "BPF LSM programs are refused by this "
			      "kernel: load of lsm/task_prctl: %s%s%s", errno_str(err),
			      *log ? "; " : "", log_tail(log));
	}
	link = bpf_link_create(fd, 0, BPF_LSM_MAC, NULL);
	err = errno;
	close(fd);
	if (link < 0)
		return answer(0, why, size, "BPF LSM programs are refused by this "
			      "kernel: attach of lsm/task_prctl: %s", errno_str(err));
	errno = 0;
	got = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
	err = errno;
	close(link);
	if (got == -1 && err == EPERM)
		return answer(1, why, size, "BPF LSM programs run");
	if (got >= 0)
		return answer(0, why, size, "BPF LSM programs attach but do not run: "
			      "bpf is not in the active lsm= list");
	return answer(-1, why, size, "BPF LSM probe: prctl(PR_GET_DUMPABLE) "
		      "under lsm/task_prctl failed with %s, not EPERM", strerror(err));
}

/* ---- cgroup v2 ------------------------------------------------------- */

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
}

int probe_cgroup2(char *root, size_t rsize, char *why, size_t size)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char *line = NULL, *sep, dir[4096], type[64];
	size_t cap = 0;
	int r = 0;

	if (!f)
		return answer(-1, why, size, "cgroup2 probe: /proc/self/mountinfo: %s",
			      strerror(errno));
	/* "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE ..." */
	while (!r && getline(&line, &cap, f) > 0) {
		sep = strstr(line, " - ");
		if (!sep || sscanf(sep + 3, "%63s", type) != 1 || strcmp(type, "cgroup2") ||
		    sscanf(line, "%*s %*s %*s %*s %4095s", dir) != 1)
			continue;
		unescape(dir);
		if (strlen(dir) >= rsize) {
			r = answer(-1, why, size, "cgroup2 mount point too long: %s", dir);
		} else {
			strcpy(root, dir);
			r = answer(1, why, size, "cgroup v2 at %s", root);
		}
	}
	free(line);
	fclose(f);
	if (!r)
		r = answer(0, why, size, "cgroup v2 not mounted "
			   "(no cgroup2 in /proc/self/mountinfo)");
	return r;
}

/* ---- securityfs -------------------------------------------------------- */

static int securityfs_mounted(void)
{
	struct statfs s;

	return statfs(SECURITYFS_DIR, &s) == 0 &&
	       (unsigned long)s.f_type == SECURITYFS_MAGIC;
}

int probe_securityfs(char *why, size_t size)
{
	int err;

	if (securityfs_mounted())
		return answer(1, why, size, "securityfs mounted");
	if (unshare(CLONE_NEWNS)) {
		err = errno;
		if (err == EPERM)
			return answer(0, why, size, "securityfs not mounted, and no "
				      "private mount namespace to mount it (EPERM)");
		return answer(-1, why, size, "securityfs probe: unshare(CLONE_NEWNS): %s",
			      strerror(err));
	}
	/* Nothing mounted from here on may reach the machine's namespace. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return answer(-1, why, size, "securityfs probe: making / private: %s",
			      strerror(errno));
	if (mount("securityfs", SECURITYFS_DIR, "securityfs", 0, NULL)) {
		err = errno;
		if (err == ENODEV || err == ENOENT || err == EPERM || err == EACCES)
			return answer(0, why, size, "securityfs cannot be mounted on "
				      SECURITYFS_DIR ": %s", strerror(err));
		return answer(-1, why, size, "securityfs probe: mount: %s", strerror(err));
	}
	if (!securityfs_mounted())
		return answer(-1, why, size, "securityfs probe: mounted, but "
			      SECURITYFS_DIR " is not securityfs");
	return answer(1, why, size, "securityfs mounted in a private mount namespace");
}

int probe_userns(char *why, size_t size)
{
	static struct cached c;
	int status, r;
	pid_t pid;

	if (c.r)
		return cached_answer(&c, why, size);
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return answer(-1, why, size, "user namespace probe: fork: %s", strerror(errno));
	if (pid == 0) {
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(255);
		_exit(unshare(CLONE_NEWUSER) ? errno : 0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) == 255)
		return answer(-1, why, size, "user namespace probe: the child failed (0x%x)",
			      status);
	r = WEXITSTATUS(status);
	if (r == 0)
		r = answer(1, c.why, sizeof(c.why), "uid 65534 makes user namespaces");
	else if (r == EPERM || r == ENOSPC || r == EACCES)
		r = answer(0, c.why, sizeof(c.why), "user namespaces of an unprivileged uid are "
			   "refused (%s)", strerror(r));
	else
		return answer(-1, why, size, "user namespace probe: unshare: %s", strerror(r));
	cache(&c, r);
	return cached_answer(&c, why, size);
}
