// SPDX-License-Identifier: GPL-2.0-only
/*
 * `make demo` as a test, so that a broken demo fails the suite:
 * `sh demo/demo.sh classic2ebpf` on a machine that has bpffs mounted and on
 * one that has none (the demo's sfilterd mounts it), each in a private
 * mount namespace (tests/lib/mountns). It must exit 0 and show what it
 * promises: the confined shell killed on mkdir (137), the kill as a JSON
 * line, complain-mode lines, the learned policy, the teardown.
 *
 * demo.sh, its .s files and the binaries are found beside the runner:
 * build/tests/sftest finds ../../demo/demo.sh and ../classic2ebpf (with
 * sfilterd, sfctl, sfrun beside it); in the guest /sf/sftest finds
 * /sf/demo/demo.sh and /sf/classic2ebpf (tests/run-all.sh puts them there).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "daemon.h"
#include "mountns.h"

#include <dirent.h>
#include <limits.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/wait.h>

/* A line of text with both a and b on it. */
static bool line_has(const char *text, const char *a, const char *b)
{
	const char *p, *end;

	for (p = text; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, '\n');
		if (memmem(p, end - p, a, strlen(a)) && memmem(p, end - p, b, strlen(b)))
			return true;
	}
	return false;
}

/* Pin dirs the demo left under /sys/fs/bpf. */
static int demo_pins(void)
{
	struct dirent *e;
	DIR *d = opendir("/sys/fs/bpf");
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strncmp(e->d_name, "sfilter-demo-", 13) == 0;
	closedir(d);
	return n;
}

static void run_demo(bool bpffs_mounted)
{
	static char out[1 << 20];
	char demo[PATH_MAX], c2e[PATH_MAX];
	const char *argv[] = { "/bin/sh", demo, c2e, NULL };
	int st, pins_before;

	if (!sfd_find_bin("demo/demo.sh", "SF_DEMO", demo, sizeof(demo)) &&
	    !sfd_find_bin("../demo/demo.sh", NULL, demo, sizeof(demo))) {
		test_skip("no demo/demo.sh beside the test runner (../../demo or ./demo)");
		return;
	}
	if (!sfd_need_bin("classic2ebpf", "SF_CLASSIC2EBPF", c2e, sizeof(c2e)))
		return;
	if (!mntns_without_bpffs())
		return;
	/* A fresh instance: the demo finds one mounted, and the pins of
	 * other runs stay out of its way. */
	if (bpffs_mounted &&
	    !ASSERT_OK(mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700"), "mount bpffs"))
		return;
	pins_before = demo_pins();

	st = sfd_run(argv, true, test_is_emulated() ? 1500 : 180, out, sizeof(out));
	test_log("sh %s %s: wait status 0x%x\n%s", demo, c2e, st, out);
	if (!ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the demo exits 0"))
		printf("%s", out);
	if (bpffs_mounted)
		ASSERT_FALSE(strstr(out, "mounted a bpf filesystem"), "no mount where bpffs is");
	else
		ASSERT_TRUE(line_has(out, "sfilterd: ", "mounted a bpf filesystem at /sys/fs/bpf"),
			    "sfilterd says it mounted bpffs");
	ASSERT_TRUE(strstr(out, "\nhello from a confined shell\nls works\n") != NULL,
		    "the confined shell runs echo and ls");
	ASSERT_TRUE(strstr(out, "exit status 137 ") != NULL, "then is killed (137)");
	ASSERT_TRUE(line_has(out, "\"syscall\":\"mkdir\"", "\"taken\":\"killed\""),
		    "the kill of mkdir, as a JSON line of the daemon's log");
	ASSERT_TRUE(line_has(out, "\"taken\":\"complain\"", "\"syscall\":\"mkdir\"") ||
		    line_has(out, "\"taken\":\"complain\"", "\"syscall\":\"rmdir\""),
		    "would-be denials in complain mode");
	ASSERT_TRUE(line_has(out, " syscalls from ", "instructions, valid)"),
		    "sfctl policy-from-log wrote a valid policy");
	ASSERT_TRUE(strstr(out, "learned.bpf: valid") != NULL, "classic2ebpf check accepts it");
	ASSERT_TRUE(strstr(out, "sfilterd exited with status 0") != NULL, "a clean stop");
	ASSERT_TRUE(strstr(out, "pinned state torn down") != NULL, "its pins torn down");
	ASSERT_EQ(demo_pins(), pins_before, "no pin dir of the demo left");
	ASSERT_FALSE(strstr(out, "demo: FAILED"), "no step of the demo failed");
}

TEST(demo_runs_where_bpffs_is_mounted)
{
	run_demo(true);
}

TEST(demo_runs_where_no_bpffs_is_mounted)
{
	run_demo(false);
}
