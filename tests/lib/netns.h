/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Private network namespaces for tests that listen on TCP: the test's own
 * process (the runner forks one per test) unshares, so that its ports
 * meet nobody else's (other tests, other users of the machine) and its
 * addresses are its own to add; the namespace ends with the test. The
 * guest's /init leaves the machine's loopback down: here it is up.
 */
#ifndef SF_TEST_NETNS_H
#define SF_TEST_NETNS_H

#include <stddef.h>

/*
 * unshare(CLONE_NEWNET), then the new namespace's loopback up. Returns as
 * tests/lib/probe.h's probes do, for TEST_REQUIRE(): 1 done; 0 the
 * kernel refused the namespace (why says so); -1 the namespace is there
 * but its loopback would not come up.
 */
int netns_private_loopback(char *why, size_t size);
/* Adds the IPv4 address addr (dotted) as an alias of the loopback
 * ("lo:N"), so that a test has a local address outside 127.0.0.0/8, as
 * an interface's would be. 0 or -errno. */
int netns_add_lo_alias(int n, const char *addr);

#endif
