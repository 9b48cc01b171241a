// SPDX-License-Identifier: GPL-2.0-only
/*
 * sfctl diff as a CI pipeline and an admin run it: --subset's exit status
 * on a widening, a narrowing and an identical pair; a profile against the
 * filter it compiles to; bad input refused with one line and exit 2; and
 * pid:PID, the chain a private sfilterd enforces on a running process,
 * against the files attached to it.
 */
#include "harness.h"
#include "c2e.h"
#include "daemon.h"
#include "profile.h"
#include "proto.h"
#include "sockfilter.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>

SFD_TIER_INDEPENDENT

#define LD_NR  STMT(BPF_LD | BPF_W | BPF_ABS, 0)
#define LD_ARCH STMT(BPF_LD | BPF_W | BPF_ABS, 4)
#define LD_A2  STMT(BPF_LD | BPF_W | BPF_ABS, 32)
#define ALLOW  STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define EPERM_ STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM)

/* x86_64 only (other arches killed), then the number in A. */
#define HEAD LD_ARCH, JUMP(BPF_JMP | BPF_JEQ | BPF_K, C2E_AUDIT_ARCH_X86_64, 1, 0), \
	STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS), LD_NR
/* openat allowed where test (on args[2]'s low half) jumps 1; EPERM for
 * the rest. */
#define OPENAT(test) JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 0, 2), LD_A2, test, \
	EPERM_, ALLOW
#define GETPPID JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getppid, 4, 0)

/* getppid, and openat with flags == 0, allowed; everything else EPERM. */
static const struct sock_filter base[] = {
	HEAD, GETPPID, OPENAT(JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0)),
};
/* The same, openat allowed for flags <= 1 too: a widening. */
static const struct sock_filter wide[] = {
	HEAD, GETPPID, OPENAT(JUMP(BPF_JMP | BPF_JGT | BPF_K, 1, 0, 1)),
};
/* The base without getppid: a narrowing. */
static const struct sock_filter narrow[] = {
	HEAD, OPENAT(JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0)),
};

/* ERRNO for getpid when args[0] + 1 == 5: arithmetic the diff cannot
 * class, so it samples (and finds args[0] == 4 among its boundaries). */
static const char alu[] =
	"ld nr\njeq #39, L2, L1\nL2:\nld args[0]\nadd #1\njeq #5, L3, L1\nL3:\n"
	"ret #0x00050001\nL1:\nret #0x7fff0000\n";

static const char profile[] =
	"{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"defaultErrnoRet\":1,"
	"\"architectures\":[\"SCMP_ARCH_X86_64\"],\"syscalls\":["
	"{\"names\":[\"read\",\"write\"],\"action\":\"SCMP_ACT_ALLOW\"},"
	"{\"names\":[\"personality\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":"
	"[{\"index\":0,\"value\":8,\"op\":\"SCMP_CMP_EQ\"}]}]}";

/* A case: sfctl's arguments ("@X": the file X in the test's directory),
 * the exit status, and what stdout and stderr hold. */
static const struct diff_case {
	const char *name;
	const char *args[8];
	int status;
	const char *out, *err;
} cases[] = {
	{ "widening", { "diff", "--subset", "@base.bpf", "@wide.bpf" }, 1,
	  "witness: arch 0xc000003e nr 0x101 args [0, 0, 0x1,", NULL },
	{ "widening_json", { "--json", "diff", "--subset", "@base.bpf", "@wide.bpf" }, 1,
	  "\"subset\": false", NULL },
	{ "narrowed_back", { "diff", "--subset", "@wide.bpf", "@base.bpf" }, 0,
	  "subset: B allows nothing that A refuses", NULL },
	{ "narrowing", { "diff", "--subset", "@base.bpf", "@narrow.bpf" }, 0, "subset:", NULL },
	{ "narrowing_reversed", { "diff", "--subset", "@narrow.bpf", "@base.bpf" }, 1,
	  "x86_64 getppid (110): A=ERRNO(1) B=ALLOW", NULL },
	{ "identical", { "diff", "@base.bpf", "@base.s" }, 0,
	  "\n0 of ", NULL },
	{ "differ", { "diff", "@base.bpf", "@wide.bpf" }, 1,
	  "x86_64 openat (257): args[2] == 0x1: A=ERRNO(1) B=ALLOW", NULL },
	{ "profile_and_its_filter", { "diff", "@p.json", "@p.bpf" }, 0, "0 of", NULL },
	{ "profile_against_base", { "diff", "--subset", "@base.bpf", "@p.json" }, 1,
	  "personality (135): args[0] == 0x8 && args[0].hi == 0: A=ERRNO(1) B=ALLOW", NULL },
	{ "sampled", { "diff", "@all.s", "@alu.s" }, 1,
	  "x86_64 getpid (39): some calls: A=ALLOW B=ERRNO(1)  (sampled, not proven)", NULL },
	{ "subset_not_proven", { "diff", "--subset", "@all.s", "@alu.s" }, 4,
	  "subset not proven", NULL },
	{ "missing_file", { "diff", "@base.bpf", "@nothing.bpf" }, 2, "",
	  "nothing.bpf: No such file or directory" },
	{ "one_operand", { "diff", "@base.bpf" }, 2, "", "two policies" },
	{ "bad_profile", { "diff", "@bad.json", "@base.bpf" }, 2, "", "bad.json:" },
	{ "bad_filter", { "diff", "@base.bpf", "@bad.s" }, 2, "", "bad.s: line 1" },
	{ "no_daemon", { "--socket", "@none.sock", "diff", "pid:1", "@base.bpf" }, 3, "",
	  "none.sock" },
};

static bool write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!ASSERT_OK_PTR(f, path))
		return false;
	fputs(text, f);
	return ASSERT_OK(fclose(f), path);
}

/* The files of the cases in dir. */
static bool make_files(const char *dir)
{
	struct sf_profile_opts opts = { .caps = "none" };
	struct sf_profile_error perr;
	struct sf_profile p;
	char path[PATH_MAX];
	FILE *f;
	bool ok;

#define SAVE(name, insns) (snprintf(path, sizeof(path), "%s/" name, dir), \
	ASSERT_OK(c2e_save_raw(path, insns, ARRAY_SIZE(insns)), name))
	if (!SAVE("base.bpf", base) || !SAVE("wide.bpf", wide) || !SAVE("narrow.bpf", narrow))
		return false;
#undef SAVE
	snprintf(path, sizeof(path), "%s/base.s", dir);
	f = fopen(path, "w");
	if (!ASSERT_OK_PTR(f, path))
		return false;
	c2e_disasm_classic(base, ARRAY_SIZE(base), f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/p.json", dir);
	if (!write_file(path, profile))
		return false;
	if (!ASSERT_OK(sf_profile_compile(profile, strlen(profile), &opts, &p, &perr), perr.msg))
		return false;
	snprintf(path, sizeof(path), "%s/p.bpf", dir);
	ok = ASSERT_OK(c2e_save_raw(path, p.insns, p.len), "p.bpf");
	sf_profile_free(&p);
	snprintf(path, sizeof(path), "%s/bad.json", dir);
	ok = ok && write_file(path, "{\"defaultAction\": \"SCMP_ACT_NOPE\"}");
	snprintf(path, sizeof(path), "%s/alu.s", dir);
	ok = ok && write_file(path, alu);
	snprintf(path, sizeof(path), "%s/all.s", dir);
	ok = ok && write_file(path, "ret #0x7fff0000\n");
	snprintf(path, sizeof(path), "%s/bad.s", dir);
	return ok && write_file(path, "jeqq #1\n");
}

/* Runs sfctl with a case's arguments; 0 or the exit status (-1: no exit). */
static int run_case(const char *sfctl, const char *dir, const char *const *args, char *out,
		    size_t osz, char *err, size_t esz)
{
	char paths[8][PATH_MAX];
	const char *argv[10] = { sfctl };
	struct sfd_io io = { .out = out, .out_size = osz, .err = err, .err_size = esz };
	int i, st;

	for (i = 0; i < 8 && args[i]; i++) {
		if (args[i][0] == '@') {
			snprintf(paths[i], sizeof(paths[i]), "%s/%s", dir, args[i] + 1);
			argv[i + 1] = paths[i];
		} else {
			argv[i + 1] = args[i];
		}
	}
	argv[i + 1] = NULL;
	st = sfd_run_io(argv, &io, 60);
	return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Every file in dir, and dir. */
static void remove_dir(const char *dir)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		test_log("could not remove %s\n", dir);
}

TEST(sfctl_diff_exit_status_says_whether_b_widens_a)
{
	char sfctl[PATH_MAX], dir[] = "/tmp/sf-diff-XXXXXX";
	static char out[65536], err[4096];
	size_t i;

	if (!sfd_need_bin("sfctl", "SF_SFCTL", sfctl, sizeof(sfctl)))
		return;
	if (!ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp"))
		return;
	if (make_files(dir)) {
		for (i = 0; i < ARRAY_SIZE(cases); i++) {
			const struct diff_case *c = &cases[i];
			int st = run_case(sfctl, dir, c->args, out, sizeof(out), err, sizeof(err));

			test_log("%s: exit %d\n%s%s", c->name, st, out, err);
			ASSERT_EQ(st, c->status, c->name);
			ASSERT_TRUE(strstr(out, c->out) != NULL, c->name);
			if (c->err) {
				ASSERT_TRUE(strstr(err, c->err) != NULL, c->name);
				/* One clear line (a usage error: and the hint). */
				ASSERT_TRUE(sfd_error_lines(err, "sfctl", NULL), c->name);
			}
		}
	}
	remove_dir(dir);
}

/* sfctl with args; its exit status, stdout in out. */
static int sfctl_run(const char *sfctl, const char *sock, const char *a1, const char *a2,
		     const char *a3, const char *a4, char *out, size_t size)
{
	const char *argv[] = { sfctl, "--socket", sock, a1, a2, a3, a4, NULL };
	char err[2048];
	struct sfd_io io = { .out = out, .out_size = size, .err = err, .err_size = sizeof(err) };
	int st = sfd_run_io(argv, &io, 60);

	test_log("sfctl %s %s %s %s -> %d\n%s%s", a1, a2, a3 ? a3 : "", a4 ? a4 : "", st, out,
		 err);
	return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* sfctl attach --pid victim --filter file, as an admin does. */
static void attach(const char *sfctl, const char *sock, pid_t victim, const char *file)
{
	char pid[32], msg[2048];
	const char *argv[] = { sfctl, "--socket", sock, "attach", "--pid", pid, "--filter",
			       file, NULL };

	snprintf(pid, sizeof(pid), "%d", (int)victim);
	ASSERT_EQ(sfd_run(argv, true, 60, msg, sizeof(msg)), 0, msg);
}

TEST(sfctl_diff_pid_is_the_chain_sfilterd_enforces)
{
	char sfctl[PATH_MAX], dir[sizeof(((struct sfd *)0)->dir)], file[PATH_MAX], wfile[PATH_MAX];
	char pid[32];
	static char out[65536];
	int go[2], status;
	pid_t victim;
	SFD_AUTO_STOP;

	if (!test_need_root("sfctl attach --pid"))
		return;
	if (!sfd_need_bin("sfctl", "SF_SFCTL", sfctl, sizeof(sfctl)))
		return;
	if (!sfd_start_sfilterd(&dm, false))
		return;
	snprintf(dir, sizeof(dir), "%s", dm.dir);
	snprintf(file, sizeof(file), "%s/base.bpf", dir);
	snprintf(wfile, sizeof(wfile), "%s/wide.bpf", dir);
	if (!ASSERT_OK(c2e_save_raw(file, base, ARRAY_SIZE(base)), "base") ||
	    !ASSERT_OK(c2e_save_raw(wfile, wide, ARRAY_SIZE(wide)), "wide") ||
	    !ASSERT_OK(pipe(go), "pipe"))
		return;
	fflush(stdout);
	victim = fork();
	if (victim == 0) {
		char c;

		close(go[1]);
		_exit(read(go[0], &c, 1) == 1 ? 0 : 1);
	}
	close(go[0]);
	snprintf(pid, sizeof(pid), "pid:%d", (int)victim);
	/* Not confined yet: refused with the reason. */
	ASSERT_EQ(sfctl_run(sfctl, dm.sock, "diff", pid, file, NULL, out, sizeof(out)), 2,
		  "an unconfined pid is refused as bad input");
	attach(sfctl, dm.sock, victim, file);
	ASSERT_EQ(sfctl_run(sfctl, dm.sock, "diff", pid, file, NULL, out, sizeof(out)), 0,
		  "the chain is the file attached");
	ASSERT_TRUE(strstr(out, "1 enforcing filters") != NULL, "A is the thread's chain");
	ASSERT_EQ(sfctl_run(sfctl, dm.sock, "diff", "--subset", pid, wfile, out, sizeof(out)),
		  1, "the wider file widens the running chain");
	ASSERT_TRUE(strstr(out, "openat (257): args[2] == 0x1") != NULL, out);
	/* A second filter on top: the fold is what the kernel runs, so
	 * the wider one changes nothing. */
	attach(sfctl, dm.sock, victim, wfile);
	ASSERT_EQ(sfctl_run(sfctl, dm.sock, "--json", "diff", pid, file, out, sizeof(out)), 0,
		  "base then wide folds to base");
	ASSERT_TRUE(strstr(out, "\"thread ") && strstr(out, "2 enforcing filters"), out);
	ASSERT_EQ(write(go[1], "x", 1), 1, "release the victim");
	close(go[1]);
	ASSERT_EQ(waitpid(victim, &status, 0), victim, "waitpid");
}
