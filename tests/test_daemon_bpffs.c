// SPDX-License-Identifier: GPL-2.0-only
/*
 * Pins need a bpf filesystem, and machines without systemd mount none at
 * boot. The runtime mounts one at /sys/fs/bpf when the pin dir is below it
 * (sf_bpffs_ensure()), sfilterd says so in one line, and where mounting
 * is impossible sfilterd exits 1 with one line saying what to do, while
 * --no-pin still serves.
 *
 * Every test works in a private mount namespace of its own process
 * (tests/lib/mountns), with the bpffs at /sys/fs/bpf detached there: the
 * host's and the guest's mounts are never touched.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "daemon.h"
#include "mountns.h"
#include "runtime.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/stat.h>

SFD_TIER_INDEPENDENT

#define MOUNTED_LINE "mounted a bpf filesystem at /sys/fs/bpf (none was mounted)"

static int timeout_s(void)
{
	return test_is_emulated() ? 600 : 60;
}

/* Lines of text that contain needle (every line when needle is ""). */
static int lines_with(const char *text, const char *needle)
{
	const char *p = text, *end;
	int n = 0;

	for (; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, '\n');
		if (memmem(p, end - p, needle, strlen(needle)))
			n++;
	}
	return n;
}

static void read_text(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, size - 1) : -1;

	buf[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
}

/* Entries of dir whose names start with prefix. */
static int entries(const char *dir, const char *prefix)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
	closedir(d);
	return n;
}

/* The runtime itself, as tests and benches use it: sf_bpffs_ensure()
 * mounts bpffs below /sys/fs/bpf only, and sf_runtime_open_pinned() says
 * so in one line when it was the one to mount. */
TEST(runtime_mounts_bpffs_where_none_is_mounted)
{
	char msg[512], pin[192], parent[128], tmp[] = "/tmp/sftest-bpffs-XXXXXX", elsewhere[64];
	struct sf_runtime_opts o = { 0 };
	struct sf_runtime *rt = NULL;
	static char err[65536];
	int saved, fd, r;
	bool adopted = true;
	ssize_t n;

	if (!mntns_without_bpffs())
		return;
	snprintf(parent, sizeof(parent), "/sys/fs/bpf/sftest-%d/a", getpid());
	/* Its basename names the state dir in /run: unique too. */
	snprintf(pin, sizeof(pin), "%s/sfilter-bpffs-%d", parent, getpid());
	r = sf_bpffs_ensure(pin, msg, sizeof(msg));
	ASSERT_OK(r, "sf_bpffs_ensure with no bpffs");
	ASSERT_STREQ(msg, MOUNTED_LINE, "it says what it mounted");
	ASSERT_TRUE(mntns_is_bpffs("/sys/fs/bpf"), "/sys/fs/bpf is bpffs now");
	ASSERT_TRUE(mntns_is_bpffs(parent), "the pin dir's parent was made, on bpffs");
	ASSERT_EQ(access(pin, F_OK), -1, "the pin dir itself is left to the pinning");
	r = sf_bpffs_ensure(pin, msg, sizeof(msg));
	ASSERT_OK(r, "sf_bpffs_ensure with bpffs");
	ASSERT_STREQ(msg, "", "nothing to say the second time");

	/* Anywhere else nothing is mounted over what is there. */
	if (ASSERT_OK_PTR(mkdtemp(tmp), "mkdtemp")) {
		snprintf(elsewhere, sizeof(elsewhere), "%s/pins", tmp);
		r = sf_bpffs_ensure(elsewhere, msg, sizeof(msg));
		test_log("%s: %d, %s\n", elsewhere, r, msg);
		ASSERT_TRUE(r < 0, "a pin dir outside /sys/fs/bpf, not on bpffs: refused");
		ASSERT_TRUE(strstr(msg, tmp) && strstr(msg, "is not on a bpf filesystem") &&
			    strstr(msg, "mount -t bpf bpf"), "the message names the dir and the mount");
		ASSERT_FALSE(mntns_is_bpffs(tmp), "nothing mounted there");
		rmdir(tmp);
	}

	/* sf_runtime_open_pinned() on a machine without bpffs: one line. */
	if (!mntns_detach_bpffs())
		return;
	fd = memfd_create("stderr", 0);
	if (!ASSERT_TRUE(fd >= 0, "memfd"))
		return;
	fflush(stderr);
	saved = dup(2);
	dup2(fd, 2);
	r = sf_runtime_open_pinned(&rt, &o, pin, &adopted);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, err, sizeof(err) - 1, 0);
	err[n > 0 ? n : 0] = '\0';
	close(fd);
	test_log("stderr of sf_runtime_open_pinned:\n%s", err);
	if (ASSERT_OK(r, "sf_runtime_open_pinned with no bpffs")) {
		ASSERT_FALSE(adopted, "a fresh install");
		ASSERT_EQ(lines_with(err, "sfilter: " MOUNTED_LINE), 1,
			  "one 'sfilter: mounted ...' line on stderr");
		ASSERT_EQ(entries(pin, "installed"), 1, "the install's marker is pinned");
		ASSERT_EQ(entries(pin, "link_sf_fork"), 1, "the fork hook's link is pinned");
		ASSERT_EQ(entries(pin, "link_sf_dispatch"), 0,
			  "no dispatcher while nothing is confined");
		ASSERT_OK(sf_runtime_uninstall(rt), "uninstall");
		sf_runtime_close(rt);
	}
}

/* sfilterd on a machine without bpffs: mounts it, says so in one line,
 * serves, and pins. */
TEST(daemon_mounts_bpffs_where_none_is_mounted)
{
	static char out[65536];
	char link[160];
	const char *argv[] = { NULL, "--socket", "/nonexistent/s.sock", "--pin-dir", NULL,
			       "--uninstall", NULL };
	int st;
	SFD_AUTO_STOP;

	if (!mntns_without_bpffs())
		return;
	if (!sfd_find_bin("sfilterd", "SF_SFILTERD", dm.bin, sizeof(dm.bin))) {
		test_skip("no sfilterd at ../sfilterd or ./sfilterd beside the test runner");
		return;
	}

	/* Nothing can be pinned without bpffs: uninstall says so, mounts
	 * nothing, and succeeds. */
	snprintf(link, sizeof(link), "/sys/fs/bpf/sfilter-test-%d", getpid());
	argv[0] = dm.bin;
	argv[4] = link;
	st = sfd_run(argv, true, timeout_s(), out, sizeof(out));
	test_log("--uninstall: status 0x%x: %s", st, out);
	ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0, "--uninstall without bpffs exits 0");
	ASSERT_EQ(lines_with(out, ""), 1, "in one line");
	ASSERT_TRUE(strstr(out, "nothing is pinned") != NULL, "saying nothing is pinned");
	ASSERT_FALSE(mntns_is_bpffs("/sys/fs/bpf"), "--uninstall mounts nothing");

	if (!sfd_start(&dm, true))
		return;
	ASSERT_TRUE(mntns_is_bpffs("/sys/fs/bpf"), "sfilterd mounted bpffs at /sys/fs/bpf");
	read_text(dm.err, out, sizeof(out));
	test_log("sfilterd's stderr:\n%s", out);
	ASSERT_EQ(lines_with(out, "sfilterd: " MOUNTED_LINE), 1,
		  "one line of sfilterd says it mounted bpffs");
	ASSERT_EQ(lines_with(out, "bpf filesystem"), 1,
		  "and no other line about it (the runtime found bpffs mounted)");
	sfd_attach_confines("a task that attached through this sfilterd dies on getppid");
	snprintf(link, sizeof(link), "%s/installed", dm.pin);
	ASSERT_OK(access(link, F_OK), "the install's marker is pinned");
	ASSERT_TRUE(entries(dm.pin, "prog_") > 0 && entries(dm.pin, "map_") > 0,
		    "programs and maps are pinned");
}

/* Where no bpffs can be mounted (no /sys/fs/bpf here), sfilterd exits 1
 * with one line naming both ways out. */
TEST(daemon_says_what_to_do_when_bpffs_cannot_be_mounted)
{
	static char out[65536];
	char dir[] = "/tmp/sftest-bpffs-XXXXXX", sock[64], log[64], pin[64], bin[PATH_MAX];
	const char *argv[] = { bin, "--foreground", "--socket", sock, "--log", log,
			       "--pin-dir", pin, NULL };
	int st;

	if (!mntns_without_sys_fs_bpf())
		return;
	if (!sfd_find_bin("sfilterd", "SF_SFILTERD", bin, sizeof(bin))) {
		test_skip("no sfilterd at ../sfilterd or ./sfilterd beside the test runner");
		return;
	}
	if (!ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp"))
		return;
	snprintf(sock, sizeof(sock), "%s/s.sock", dir);
	snprintf(log, sizeof(log), "%s/events.jsonl", dir);
	snprintf(pin, sizeof(pin), "/sys/fs/bpf/sfilter-test-%d", getpid());
	st = sfd_run(argv, false, timeout_s(), out, sizeof(out));
	test_log("status 0x%x, stderr:\n%s", st, out);
	ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1, "sfilterd exits 1");
	ASSERT_EQ(lines_with(out, ""), 1, "exactly one line on stderr");
	ASSERT_TRUE(strstr(out, "`mount -t bpf bpf /sys/fs/bpf`") != NULL,
		    "it names the mount to run");
	ASSERT_TRUE(strstr(out, "--no-pin") != NULL, "and --no-pin");
	ASSERT_EQ(access(sock, F_OK), -1, "it never served");
	unlink(log);
	rmdir(dir);
}

/* The same machine: --no-pin needs no bpffs and serves. */
TEST(daemon_no_pin_serves_where_bpffs_cannot_be_mounted)
{
	SFD_AUTO_STOP;

	if (!mntns_without_sys_fs_bpf())
		return;
	if (!sfd_start_sfilterd(&dm, false))
		return;
	sfd_attach_confines("a task that attached through sfilterd --no-pin dies on getppid");
	ASSERT_FALSE(sfd_file_has(dm.err, "bpf filesystem"), "--no-pin says nothing of bpffs");
	ASSERT_EQ(access("/sys/fs/bpf", F_OK), -1, "and made no /sys/fs/bpf");
}
