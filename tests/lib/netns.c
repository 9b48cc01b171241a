// SPDX-License-Identifier: GPL-2.0-only
/* Private network namespaces for tests (netns.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "netns.h"

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

int netns_private_loopback(char *why, size_t size)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int s, r = -1;

	if (unshare(CLONE_NEWNET)) {
		if (why)
			snprintf(why, size, "no network namespace of its own: %s",
				 strerror(errno));
		return 0;
	}
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s >= 0 && ioctl(s, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(s, SIOCSIFFLAGS, &ifr) == 0)
			r = 1;
	}
	if (r < 0 && why)
		snprintf(why, size, "the new namespace's loopback stays down: %s",
			 strerror(errno));
	if (s >= 0)
		close(s);
	return r;
}

int netns_add_lo_alias(int n, const char *addr)
{
	struct ifreq ifr = { 0 };
	struct sockaddr_in *in = (struct sockaddr_in *)&ifr.ifr_addr;
	int s, r = 0;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo:%d", n);
	in->sin_family = AF_INET;
	if (inet_pton(AF_INET, addr, &in->sin_addr) != 1)
		return -EINVAL;
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	/* devinet_ioctl(): SIOCSIFADDR on "lo:N" adds an address labelled
	 * so, beside 127.0.0.1. */
	if (ioctl(s, SIOCSIFADDR, &ifr))
		r = -errno;
	close(s);
	return r;
}
