// SPDX-License-Identifier: GPL-2.0-only
/*
 * Smoke tests of the environment the suite runs in: the facts every other
 * test relies on, checked first so a broken guest or host shows up as one
 * clear line rather than as many confusing ones.
 */
#include "harness.h"
#include "probe.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* CO-RE needs the kernel's BTF; both the 6.18 host and the 6.1 guest have it. */
TEST(smoke_kernel_has_btf)
{
	struct stat st;

	if (stat("/sys/kernel/btf/vmlinux", &st) != 0) {
		test_skip("no /sys/kernel/btf/vmlinux (%s)", strerror(errno));
		return;
	}
	ASSERT_GE(st.st_size, 1024, "vmlinux BTF size");
}

/* The guest boots with lsm=...,bpf; the runtime's deny path needs it listed.
 * Where the machine has not mounted securityfs, the probe mounts it in this
 * test's own mount namespace. */
TEST(smoke_bpf_lsm_listed)
{
	char buf[512] = "", why[256];
	FILE *f;

	if (!TEST_REQUIRE(probe_securityfs(why, sizeof(why)), NULL, why))
		return;
	test_log("%s\n", why);
	f = fopen("/sys/kernel/security/lsm", "r");
	if (!ASSERT_OK_PTR(f, "open /sys/kernel/security/lsm"))
		return;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	test_log("lsm=%s\n", buf);
	if (!strstr(buf, "bpf"))
		test_skip("BPF LSM not active: lsm=%s", buf);
}
