// SPDX-License-Identifier: GPL-2.0-only
/*
 * The classic2ebpf command line, run as a separate process: every
 * subcommand's output lines and exit status, and one case per error class
 * (exit 2: unknown flag, missing argument, unreadable file, truncated file,
 * bad text, bad number; exit 1: a filter seccomp(2) would refuse).
 *
 * The binary is found next to this runner: ../classic2ebpf from
 * build/tests/sftest, or ./classic2ebpf beside it (the guest initramfs).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create */
#endif
#include "harness.h"
#include "daemon.h"
#include "c2e.h"
#include "sockfilter.h"

#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

static char cli_path[PATH_MAX];
static char dir[64];

/* Beside the runner: build/ on the host, /sf/ in the guest. */
static bool find_cli(void)
{
	return sfd_find_bin("classic2ebpf", NULL, cli_path, sizeof(cli_path));
}

static int rm_entry(const char *p, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	return remove(p);
}

/* Removes the scratch folder when the test function returns. */
static void cleanup_dir(int *unused)
{
	(void)unused;
	if (dir[0])
		nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

#define SCRATCH int scratch_ __attribute__((cleanup(cleanup_dir), unused)) = 0

/* Sets up the binary and a scratch folder; skips the test when absent. */
static bool setup(void)
{
	if (!find_cli()) {
		test_skip("no classic2ebpf binary at ../classic2ebpf or ./classic2ebpf beside the test runner");
		return false;
	}
	strcpy(dir, "/tmp/sftest-cli-XXXXXX");
	if (!ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp"))
		return false;
	return true;
}

static const char *path(const char *name)
{
	static char bufs[4][PATH_MAX];
	static int next;
	char *p = bufs[next++ % 4];

	snprintf(p, PATH_MAX, "%s/%s", dir, name);
	return p;
}

static bool write_file(const char *name, const void *data, size_t size)
{
	int fd = open(path(name), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	bool ok;

	if (fd < 0)
		return false;
	ok = write(fd, data, size) == (ssize_t)size;
	close(fd);
	return ASSERT_TRUE(ok, name);
}

static bool write_text(const char *name, const char *text)
{
	return write_file(name, text, strlen(text));
}

struct result {
	int status; /* exit status, or -1 when killed */
	char out[1 << 16];
	char err[1 << 12];
};

static void slurp(int fd, char *buf, size_t size)
{
	ssize_t n;
	size_t got = 0;

	lseek(fd, 0, SEEK_SET);
	while (got < size - 1 && (n = read(fd, buf + got, size - 1 - got)) > 0)
		got += n;
	buf[got] = '\0';
	close(fd);
}

/* Runs classic2ebpf with the NULL-terminated arguments; stdin from
 * stdin_text when not NULL. */
static bool run_cli(struct result *r, const char *stdin_text, ...)
{
	const char *argv[32];
	int out = memfd_create("out", 0), err = memfd_create("err", 0);
	int in = -1, n = 0, status;
	va_list ap;
	pid_t pid;

	argv[n++] = "classic2ebpf";
	va_start(ap, stdin_text);
	while (n < 31 && (argv[n] = va_arg(ap, const char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	if (stdin_text) {
		in = memfd_create("in", 0);
		if (in < 0 || write(in, stdin_text, strlen(stdin_text)) < 0)
			return false;
		lseek(in, 0, SEEK_SET);
	}
	if (!ASSERT_TRUE(out >= 0 && err >= 0, "memfd"))
		return false;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		dup2(out, 1);
		dup2(err, 2);
		if (in >= 0)
			dup2(in, 0);
		execv(cli_path, (char *const *)argv);
		_exit(127);
	}
	if (in >= 0)
		close(in);
	if (!ASSERT_TRUE(pid > 0, "fork") || waitpid(pid, &status, 0) < 0)
		return false;
	r->status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	slurp(out, r->out, sizeof(r->out));
	slurp(err, r->err, sizeof(r->err));
	test_log("exit %d\nstdout:\n%sstderr:\n%s", r->status, r->out, r->err);
	return true;
}

/* Exit status and exact stdout / stderr (NULL: not checked). */
static bool expect(const struct result *r, int status, const char *out,
		   const char *err, const char *what)
{
	bool ok = ASSERT_EQ(r->status, status, what);

	if (out)
		ok &= ASSERT_STREQ(r->out, out, what);
	if (err)
		ok &= ASSERT_STREQ(r->err, err, what);
	return ok;
}

/* The second line of a usage error (the command line itself wrong). */
#define USAGE_HINT "Try 'classic2ebpf --help' for more information.\n"

static const char allowlist_text[] =
	"; getpid and read allowed, write ERRNO(13), the rest KILL_PROCESS\n"
	"\tld arch\n"
	"\tjeq #AUDIT_ARCH_X86_64, ok\n"
	"\tret KILL_PROCESS\n"
	"ok:\tld nr\n"
	"\tjeq #__NR_getpid, allow\n"
	"\tjeq #__NR_read, allow\n"
	"\tjeq #__NR_write, deny\n"
	"\tret TRAP(5)\n"
	"allow:\tret ALLOW\n"
	"deny:\tret ERRNO(13)\n";

static const char allowlist_listing[] =
	"\tld arch\n"
	"\tjeq #0xc000003e, L3      ; AUDIT_ARCH_X86_64\n"
	"\tret KILL_PROCESS\n"
	"L3:\n"
	"\tld nr\n"
	"\tjeq #39, L8              ; getpid\n"
	"\tjeq #0, L8               ; read\n"
	"\tjeq #1, L9               ; write\n"
	"\tret TRAP(5)\n"
	"L8:\n"
	"\tret ALLOW\n"
	"L9:\n"
	"\tret ERRNO(13)\n";

/* Assembles allowlist_text into allow.bpf. */
static bool make_allowlist(struct result *r)
{
	return write_text("allow.s", allowlist_text) &&
	       run_cli(r, NULL, "asm", path("allow.s"), "-o", path("allow.bpf"),
		       NULL) &&
	       expect(r, 0, "", "", "asm");
}

TEST(cli_help)
{
	SCRATCH;
	static struct result r;

	if (!setup())
		return;
	if (run_cli(&r, NULL, "--help", NULL) && expect(&r, 0, NULL, "", "--help"))
		ASSERT_TRUE(!strncmp(r.out, "usage: classic2ebpf", 19), "usage");
	if (run_cli(&r, NULL, "run", "--help", NULL))
		expect(&r, 0, NULL, "", "run --help");
	ASSERT_TRUE(strstr(r.out, "line-aligned") != NULL,
		    "usage says batch output stays line-aligned");
}

TEST(cli_asm_disasm_check)
{
	SCRATCH;
	static struct result r;
	struct sock_filter *f = NULL;
	struct c2e_error e = { 0 };
	size_t len = 0;

	if (!setup() || !make_allowlist(&r))
		return;
	/* The raw file is what the library reads, 10 instructions. */
	if (ASSERT_OK(c2e_load_file(path("allow.bpf"), &f, &len, &e), "load"))
		ASSERT_EQ(len, 10, "raw length");
	free(f);
	if (run_cli(&r, NULL, "disasm", path("allow.bpf"), NULL))
		expect(&r, 0, allowlist_listing, "", "disasm");
	/* disasm reads text too, and its output reads back. */
	write_text("listing.s", allowlist_listing);
	if (run_cli(&r, NULL, "disasm", path("listing.s"), NULL))
		expect(&r, 0, allowlist_listing, "", "disasm of the listing");
	if (run_cli(&r, NULL, "check", path("allow.bpf"), NULL)) {
		char want[PATH_MAX + 64];

		snprintf(want, sizeof(want), "%s: valid, 10 instructions\n",
			 path("allow.bpf"));
		expect(&r, 0, want, "", "check");
	}
}

TEST(cli_check_invalid_exits_1)
{
	SCRATCH;
	static const char text[] = "ld #1\nmod #3\nret a\n";
	struct sock_filter f[] = {
		STMT(BPF_LD | BPF_IMM, 1),
		STMT(BPF_ALU | BPF_MOD | BPF_K, 3),
		STMT(BPF_RET | BPF_A, 0),
	};
	static struct result r;
	struct c2e_error e = { 0 };
	char want[600], ebuf[300];

	if (!setup())
		return;
	ASSERT_EQ(c2e_validate(f, 3, &e), -EINVAL, "library refuses mod");
	c2e_error_str(&e, ebuf, sizeof(ebuf));
	write_text("mod.s", text);
	/* asm writes it anyway, with a warning. */
	if (run_cli(&r, NULL, "asm", path("mod.s"), "-o", path("mod.bpf"), NULL)) {
		snprintf(want, sizeof(want),
			 "classic2ebpf: warning: %s: seccomp(2) would refuse it: %s\n",
			 path("mod.s"), ebuf);
		expect(&r, 0, "", want, "asm of an invalid filter");
	}
	snprintf(want, sizeof(want), "classic2ebpf: %s: %s\n", path("mod.bpf"),
		 ebuf);
	if (run_cli(&r, NULL, "check", path("mod.bpf"), NULL))
		expect(&r, 1, "", want, "check");
	/* disasm still shows it. */
	if (run_cli(&r, NULL, "disasm", path("mod.bpf"), NULL))
		expect(&r, 0, "\tld #1\n\tmod #3\n\tret a\n", "", "disasm");
	/* dump lists the classic code, then refuses. */
	if (run_cli(&r, NULL, "dump", path("mod.bpf"), NULL))
		expect(&r, 1, NULL, want, "dump");
	/* run validates every file of the stack first. */
	if (make_allowlist(&r) &&
	    run_cli(&r, NULL, "run", path("allow.bpf"), path("mod.bpf"),
		    "--nr", "39", NULL))
		expect(&r, 1, "", want, "run");
}

TEST(cli_dump)
{
	SCRATCH;
	static struct result r;
	struct sock_filter *f = NULL;
	struct c2e_ebpf prog = { 0 };
	struct c2e_error e = { 0 };
	char want[600];
	size_t len = 0;
	int kcount;

	if (!setup() || !make_allowlist(&r))
		return;
	if (!ASSERT_OK(c2e_load_file(path("allow.bpf"), &f, &len, &e), "load") ||
	    !ASSERT_OK(c2e_translate(f, len, &prog), "translate"))
		return;
	kcount = c2e_kernel_insn_count(f, len);
	if (!run_cli(&r, NULL, "dump", path("allow.bpf"), NULL) ||
	    !expect(&r, 0, NULL, "", "dump"))
		return;
	snprintf(want, sizeof(want), "; %s: 10 classic instructions\n%s",
		 path("allow.bpf"), allowlist_listing);
	ASSERT_TRUE(!strncmp(r.out, want, strlen(want)), "classic part first");
	snprintf(want, sizeof(want), "; eBPF test frame: %zu instructions\n"
		 "   0: (bf) r6 = r1\n", prog.len);
	ASSERT_TRUE(strstr(r.out, want) != NULL, "eBPF part");
	snprintf(want, sizeof(want), "; counts: classic 10, ours %zu, kernel %d\n",
		 prog.len, kcount);
	ASSERT_TRUE(strlen(r.out) > strlen(want) &&
		    !strcmp(r.out + strlen(r.out) - strlen(want), want),
		    "counts line last");
	c2e_ebpf_free(&prog);
	free(f);
}

TEST(cli_run_single)
{
	SCRATCH;
	static const struct {
		const char *nr, *arch, *engine, *want;
	} cases[] = {
		{ "39", NULL, NULL, "0x7fff0000 ALLOW\n" },
		{ "getpid", NULL, "interp", "0x7fff0000 ALLOW\n" },
		{ "0x27", "c000003e", "kernel", "0x7fff0000 ALLOW\n" },
		{ "__NR_write", NULL, NULL, "0x0005000d ERRNO(13)\n" },
		{ "SYS_write", NULL, "interp", "0x0005000d ERRNO(13)\n" },
		{ "0", NULL, NULL, "0x7fff0000 ALLOW\n" },
		{ "2", "x86_64", NULL, "0x00030005 TRAP(5)\n" },
		{ "-1", NULL, NULL, "0x00030005 TRAP(5)\n" },
		{ "20", "0x40000003", NULL, "0x80000000 KILL_PROCESS\n" },
		{ "getpid", "i386", "interp", "0x80000000 KILL_PROCESS\n" },
	};
	static struct result r;
	size_t i;

	if (!setup() || !make_allowlist(&r))
		return;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *argv[12];
		int n = 0;

		argv[n++] = "run";
		argv[n++] = path("allow.bpf");
		argv[n++] = "--nr";
		argv[n++] = cases[i].nr;
		if (cases[i].arch) {
			argv[n++] = "--arch";
			argv[n++] = cases[i].arch;
		}
		if (cases[i].engine) {
			argv[n++] = "--engine";
			argv[n++] = cases[i].engine;
		}
		while (n < 12)
			argv[n++] = NULL;
		if (run_cli(&r, NULL, argv[0], argv[1], argv[2], argv[3],
			    argv[4], argv[5], argv[6], argv[7], NULL))
			expect(&r, 0, cases[i].want, "", cases[i].nr);
	}
}

/* Arguments, ip and a stack: the newest file's lower action wins, ties
 * keep the newest's data. */
TEST(cli_run_stack_args_ip)
{
	SCRATCH;
	static const char args_text[] =
		"\tld args[1]\n"
		"\tjeq #7, seven\n"
		"\tld args[1].hi\n"
		"\tjeq #1, high\n"
		"\tld ip\n"
		"\tjeq #0x1000, atip\n"
		"\tret ALLOW\n"
		"seven:\tret ERRNO(7)\n"
		"high:\tret ERRNO(8)\n"
		"atip:\tret LOG\n";
	static const struct {
		const char *args, *ip, *want;
	} cases[] = {
		{ "0,7", NULL, "0x00050007 ERRNO(7)\n" },
		{ "0,0x100000000", NULL, "0x00050008 ERRNO(8)\n" },
		{ "1,2,3,4,5,6", "1000", "0x7ffc0000 LOG\n" },
		{ "0", "0x1000", "0x7ffc0000 LOG\n" },
		{ "0,-1", NULL, "0x7fff0000 ALLOW\n" },
	};
	static struct result r;
	size_t i, e;

	if (!setup() || !make_allowlist(&r) || !write_text("args.s", args_text))
		return;
	for (e = 0; e < 2; e++) {
		const char *engine = e ? "interp" : "kernel";

		for (i = 0; i < ARRAY_SIZE(cases); i++) {
			if (cases[i].ip ?
			    run_cli(&r, NULL, "run", path("args.s"), "--nr", "39",
				    "--args", cases[i].args, "--ip", cases[i].ip,
				    "--engine", engine, NULL) :
			    run_cli(&r, NULL, "run", path("args.s"), "--nr", "39",
				    "--args", cases[i].args, "--engine", engine,
				    NULL))
				expect(&r, 0, cases[i].want, "", cases[i].args);
		}
		/* Stack: allowlist (older) says ERRNO(13) for write, args.s
		 * (newer) ERRNO(7): same action, the newest's data is kept. */
		if (run_cli(&r, NULL, "run", path("allow.bpf"), path("args.s"),
			    "--nr", "write", "--args", "0,7", "--engine", engine,
			    NULL))
			expect(&r, 0, "0x00050007 ERRNO(7)\n", "", "tie");
		if (run_cli(&r, NULL, "run", path("args.s"), path("allow.bpf"),
			    "--nr", "write", "--args", "0,7", "--engine", engine,
			    NULL))
			expect(&r, 0, "0x0005000d ERRNO(13)\n", "", "tie, other order");
		/* TRAP is lower than LOG whichever is newer. */
		if (run_cli(&r, NULL, "run", path("args.s"), path("allow.bpf"),
			    "--nr", "2", "--ip", "1000", "--engine", engine, NULL))
			expect(&r, 0, "0x00030005 TRAP(5)\n", "", "lowest wins");
	}
}

TEST(cli_run_batch)
{
	SCRATCH;
	static const char tsv[] =
		"27\tc000003e\t0\t0\t0\t0\t0\t0\t0\n"
		"# a comment\n"
		"\n"
		"0x1 0xc000003e\n"
		"2\n"
		"14\t40000003\n"
		"ffffffff\tc000003e\t1000\t0\t7\n"
		"27\tc000003e\t1000\t0\t7\n";
	static const char want[] =
		"0x7fff0000 ALLOW\n"
		"\n"
		"\n"
		"0x0005000d ERRNO(13)\n"
		"0x00030005 TRAP(5)\n"
		"0x80000000 KILL_PROCESS\n"
		"0x00030005 TRAP(5)\n"
		"0x00050007 ERRNO(7)\n";
	static struct result r;
	static const char args_text[] =
		"\tld args[1]\n\tjeq #7, seven\n\tret ALLOW\nseven:\tret ERRNO(7)\n";

	if (!setup() || !make_allowlist(&r) || !write_text("in.tsv", tsv) ||
	    !write_text("args.s", args_text))
		return;
	if (run_cli(&r, NULL, "run", path("allow.bpf"), path("args.s"),
		    "--inputs", path("in.tsv"), NULL))
		expect(&r, 0, want, "", "batch, kernel");
	if (run_cli(&r, NULL, "run", path("allow.bpf"), path("args.s"),
		    "--inputs", path("in.tsv"), "--engine", "interp", NULL))
		expect(&r, 0, want, "", "batch, interp");
	if (run_cli(&r, tsv, "run", path("allow.bpf"), path("args.s"),
		    "--inputs", "-", NULL))
		expect(&r, 0, want, "", "batch from stdin");
}

/* One case per error class: exact one-line message, exit 2. */
TEST(cli_usage_errors_exit_2)
{
	SCRATCH;
	static char raw13[13] = { 0x06 };
	static struct result r;
	char want[PATH_MAX + 200];

	if (!setup() || !make_allowlist(&r) ||
	    !write_file("trunc.bpf", raw13, sizeof(raw13)) ||
	    !write_text("bad.s", "\tld nr\n\tjeq #1, nowhere\n\tret a\n") ||
	    !write_text("bad.tsv", "27\n1\tzz\n") ||
	    !write_text("empty", ""))
		return;

#define ERR(status, msg, ...) do {                                     \
		if (run_cli(&r, NULL, __VA_ARGS__, NULL))                  \
			expect(&r, status, "", msg, msg);                  \
	} while (0)
/* A usage error: its line, then the --help hint. */
#define HINT "\n" USAGE_HINT

	if (run_cli(&r, NULL, NULL))
		expect(&r, 2, "", "classic2ebpf: missing COMMAND" HINT, "no command");
	ERR(2, "classic2ebpf: unknown command 'frob'" HINT, "frob");
	ERR(2, "classic2ebpf: unknown option '--bogus'" HINT,
	    "run", path("allow.bpf"), "--bogus");
	ERR(2, "classic2ebpf: unknown option '-z'" HINT,
	    "check", "-z", path("allow.bpf"));
	ERR(2, "classic2ebpf: option '--nr' needs an argument" HINT,
	    "run", path("allow.bpf"), "--nr");
	ERR(2, "classic2ebpf: option '-o' needs an argument" HINT,
	    "asm", path("allow.s"), "-o");
	ERR(2, "classic2ebpf: check: missing FILE" HINT, "check");
	ERR(2, "classic2ebpf: disasm takes one FILE, got 2" HINT, "disasm",
	    path("allow.bpf"), path("allow.bpf"));
	ERR(2, "classic2ebpf: asm: missing -o OUTPUT" HINT, "asm", path("allow.s"));
	ERR(2, "classic2ebpf: run: missing FILE" HINT, "run", "--nr", "1");
	ERR(2, "classic2ebpf: run: missing --nr N or --inputs TSV" HINT, "run",
	    path("allow.bpf"));
	ERR(2, "classic2ebpf: run: --nr and --inputs exclude each other" HINT, "run",
	    path("allow.bpf"), "--nr", "1", "--inputs", path("bad.tsv"));
	ERR(2, "classic2ebpf: --nr is an option of run, not of check" HINT, "check",
	    path("allow.bpf"), "--nr", "1");
	ERR(2, "classic2ebpf: -o is an option of asm, not of disasm" HINT, "disasm",
	    path("allow.bpf"), "-o", path("x"));
	ERR(2, "classic2ebpf: bad --engine 'jit' (kernel or interp)" HINT, "run",
	    path("allow.bpf"), "--nr", "1", "--engine", "jit");

	/* Files. */
	snprintf(want, sizeof(want), "classic2ebpf: %s: No such file or directory\n",
		 path("missing.bpf"));
	ERR(2, want, "check", path("missing.bpf"));
	snprintf(want, sizeof(want),
		 "classic2ebpf: %s: file is 13 bytes, not a multiple of 8 (struct sock_filter)\n",
		 path("trunc.bpf"));
	ERR(2, want, "check", path("trunc.bpf"));
	ERR(2, want, "run", path("allow.bpf"), path("trunc.bpf"), "--nr", "1");
	snprintf(want, sizeof(want), "classic2ebpf: %s: file is empty\n",
		 path("empty"));
	ERR(2, want, "disasm", path("empty"));
	snprintf(want, sizeof(want), "classic2ebpf: %s: line 2: undefined label 'nowhere'\n",
		 path("bad.s"));
	ERR(2, want, "check", path("bad.s"));
	ERR(2, want, "asm", path("bad.s"), "-o", path("bad.bpf"));

	/* Numbers. */
	ERR(2, "classic2ebpf: bad --nr '12x' (a number or a syscall name)" HINT,
	    "run", path("allow.bpf"), "--nr", "12x");
	ERR(2, "classic2ebpf: unknown syscall 'nosuchcall' for arch 0xc000003e" HINT,
	    "run", path("allow.bpf"), "--nr", "nosuchcall");
	ERR(2, "classic2ebpf: bad --nr '4294967296' (a number or a syscall name)" HINT,
	    "run", path("allow.bpf"), "--nr", "4294967296");
	ERR(2, "classic2ebpf: bad --arch 'arm' (hex, x86_64 or i386)" HINT,
	    "run", path("allow.bpf"), "--nr", "1", "--arch", "arm");
	ERR(2, "classic2ebpf: bad --ip 'g' (hex)" HINT,
	    "run", path("allow.bpf"), "--nr", "1", "--ip", "g");
	ERR(2, "classic2ebpf: bad number 'x' in --args" HINT,
	    "run", path("allow.bpf"), "--nr", "1", "--args", "1,x");
	ERR(2, "classic2ebpf: --args takes at most 6 values: '1,2,3,4,5,6,7'" HINT,
	    "run", path("allow.bpf"), "--nr", "1", "--args", "1,2,3,4,5,6,7");
	ERR(2, "classic2ebpf: --args '1,,2': value 2 is empty" HINT,
	    "run", path("allow.bpf"), "--nr", "1", "--args", "1,,2");
	ERR(2, "classic2ebpf: --args '1,': value 2 is empty" HINT,
	    "run", path("allow.bpf"), "--nr", "1", "--args", "1,");
	snprintf(want, sizeof(want), "classic2ebpf: %s:2: bad number 'zz' in field 2\n",
		 path("bad.tsv"));
	ERR(2, want, "run", path("allow.bpf"), "--inputs", path("bad.tsv"));
#undef HINT
#undef ERR
}

/* The seed's example in the text form, i386 registers by name. */
static const char rfc_seed_text[] =
	"; Documentation/prctl/seccomp_filter.txt (2012), i386\n"
	"\tld [x+orig_eax]\n"
	"\tjeq #173, ok\t; rt_sigreturn\n"
	"\tjeq #119, ok\t; sigreturn\n"
	"\tjeq #252, ok\t; exit_group\n"
	"\tjeq #1, ok\t; exit\n"
	"\tjeq #3, rd\t; read\n"
	"\tjeq #4, wr, deny\t; write\n"
	"rd:\tld [x+ebx]\n"
	"\tjeq #0, ok, deny\n"
	"wr:\tld [x+ebx]\n"
	"\tjeq #1, ok\n"
	"\tjeq #2, ok, deny\n"
	"ok:\tld #len\n"
	"deny:\tret a\n";

static const char rfc_seed_listing[] =
	"\tld [x+44]                ; orig_eax\n"
	"\tjeq #173, L12\n"
	"\tjeq #119, L12\n"
	"\tjeq #252, L12\n"
	"\tjeq #1, L12\n"
	"\tjeq #3, L7\n"
	"\tjeq #4, L9, L13\n"
	"L7:\n"
	"\tld [x+0]                 ; ebx\n"
	"\tjeq #0, L12, L13\n"
	"L9:\n"
	"\tld [x+0]                 ; ebx\n"
	"\tjeq #1, L12\n"
	"\tjeq #2, L12, L13\n"
	"L12:\n"
	"\tld #len\n"
	"L13:\n"
	"\tret a\n";

TEST(cli_rfc2012_checks_lists_and_runs_the_seed_example)
{
	SCRATCH;
	static const struct {
		const char *regs, *engine, *want;
	} cases[] = {
		{ "orig_eax=3,ebx=0", NULL, "0x7fff0000 ALLOW (returned 68)\n" },
		{ "orig_eax=4,ebx=2", "interp", "0x7fff0000 ALLOW (returned 68)\n" },
		{ "orig_eax=4,ebx=3", NULL, "0x80000000 KILL_PROCESS (returned 3)\n" },
		{ "orig_eax=0x14", "interp", "0x80000000 KILL_PROCESS (returned 20)\n" },
		{ "orig_eax=252,ebx=-1", NULL, "0x7fff0000 ALLOW (returned 68)\n" },
	};
	static struct result r;
	char want[600];
	size_t i;

	if (!setup() || !write_text("seed.s", rfc_seed_text))
		return;
	if (run_cli(&r, NULL, "asm", "--compat", path("seed.s"), "-o",
		    path("seed.bpf"), NULL))
		expect(&r, 0, "", "", "asm --compat");
	snprintf(want, sizeof(want), "%s: valid, 14 instructions\n", path("seed.bpf"));
	if (run_cli(&r, NULL, "check", "--abi", "rfc2012-i386", path("seed.bpf"), NULL))
		expect(&r, 0, want, "", "check --abi rfc2012-i386");
	if (run_cli(&r, NULL, "disasm", "--compat", path("seed.bpf"), NULL))
		expect(&r, 0, rfc_seed_listing, "", "disasm --compat");
	/* The listing reads back to the same bytes. */
	if (write_text("seed2.s", rfc_seed_listing) &&
	    run_cli(&r, NULL, "asm", "--compat", path("seed2.s"), "-o",
		    path("seed2.bpf"), NULL) &&
	    run_cli(&r, NULL, "disasm", "--compat", path("seed2.bpf"), NULL))
		expect(&r, 0, rfc_seed_listing, "", "round trip");
	/* As a seccomp_data filter it is refused: indirect loads. */
	snprintf(want, sizeof(want),
		 "classic2ebpf: %s: insn 0 (code 0x0040): indirect loads are not allowed in seccomp filters\n",
		 path("seed.bpf"));
	if (run_cli(&r, NULL, "check", path("seed.bpf"), NULL))
		expect(&r, 1, "", want, "check as seccomp");
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		if (cases[i].engine ?
		    run_cli(&r, NULL, "run", "--compat", path("seed.bpf"), "--regs",
			    cases[i].regs, "--engine", cases[i].engine, NULL) :
		    run_cli(&r, NULL, "run", "--compat", path("seed.bpf"), "--regs",
			    cases[i].regs, NULL))
			expect(&r, 0, cases[i].want, "", cases[i].regs);
	}
	/* --nr names resolve for i386: write is 4 there. */
	if (run_cli(&r, NULL, "run", "--compat", path("seed.bpf"), "--nr", "write",
		    "--regs", "ebx=1", NULL))
		expect(&r, 0, "0x7fff0000 ALLOW (returned 68)\n", "", "--nr write");
}

TEST(cli_rfc2012_native_layout_names_bounds_and_usage_errors)
{
	SCRATCH;
	static const char text[] =
		"\tld [orig_rax]\n"
		"\tjeq #39, len\n"
		"\tldx #rdi\n"
		"\tld [x+4]\n"
		"\tret a\n"
		"len:\tld #len\n"
		"\tret a\n";
	static const char listing[] =
		"\tld [orig_rax]\n"
		"\tjeq #39, L5              ; getpid\n"
		"\tldx #112\n"
		"\tld [x+4]\n"
		"\tret a\n"
		"L5:\n"
		"\tld #len\n"
		"\tret a\n";
	static struct result r;
	char want[600];

	if (!setup() || !write_text("n.s", text) ||
	    !write_text("far.s", "ld [213]\nret a\n"))
		return;
	if (run_cli(&r, NULL, "asm", "--abi", "rfc2012", path("n.s"), "-o",
		    path("n.bpf"), NULL))
		expect(&r, 0, "", "", "asm");
	if (run_cli(&r, NULL, "disasm", "--abi", "rfc2012", path("n.bpf"), NULL))
		expect(&r, 0, listing, "", "disasm");
	if (run_cli(&r, NULL, "run", "--abi", "rfc2012", path("n.bpf"), "--nr",
		    "getpid", NULL))
		expect(&r, 0, "0x7fff0000 ALLOW (returned 216)\n", "", "getpid");
	/* The high half of rdi. */
	if (run_cli(&r, NULL, "run", "--abi", "rfc2012", path("n.bpf"), "--regs",
		    "rdi=0x1234567800000000", NULL))
		expect(&r, 0, "0x80000000 KILL_PROCESS (returned 305419896)\n", "",
		       "rdi high word");
	/* Two filters stack: one block is enough. */
	if (run_cli(&r, NULL, "run", "--abi", "rfc2012", path("n.bpf"), path("n.bpf"),
		    "--regs", "orig_rax=39", NULL))
		expect(&r, 0, "0x7fff0000 ALLOW (returned 216, 216)\n", "", "stack");
	snprintf(want, sizeof(want),
		 "classic2ebpf: %s: insn 0 (code 0x0020): load beyond the 216-byte user_regs_struct: [213] reads bytes 213..216 (the last word starts at 212)\n",
		 path("far.s"));
	if (run_cli(&r, NULL, "check", "--abi", "rfc2012", path("far.s"), NULL))
		expect(&r, 1, "", want, "load beyond the end");
	if (run_cli(&r, NULL, "run", "--abi", "rfc2012", path("n.bpf"), "--regs",
		    "ebx=1", NULL))
		expect(&r, 2, "", "classic2ebpf: unknown register 'ebx' for rfc2012\n"
		       USAGE_HINT,
		       "i386 name in the native layout");
	if (run_cli(&r, NULL, "run", "--abi", "rfc2012", path("n.bpf"), "--args",
		    "1", NULL))
		expect(&r, 2, "", "classic2ebpf: --args is for seccomp_data filters, not rfc2012 (use --regs)\n"
		       USAGE_HINT,
		       "--args");
	if (run_cli(&r, NULL, "run", path("n.bpf"), "--regs", "rdi=1", NULL))
		expect(&r, 2, "", "classic2ebpf: --regs is for the RFC ABIs (--abi rfc2012 or --compat)\n"
		       USAGE_HINT,
		       "--regs without an RFC ABI");
	if (run_cli(&r, NULL, "check", "--abi", "rfc1918", path("n.bpf"), NULL))
		expect(&r, 2, "", "classic2ebpf: bad --abi 'rfc1918' (seccomp, rfc2012 or rfc2012-i386)\n"
		       USAGE_HINT,
		       "bad --abi");
}
