// SPDX-License-Identifier: GPL-2.0-only
#include "keyhold.h"
#include "keyhold.skel.h"

#include <errno.h>

int keyhold_start(void)
{
	/* Kept for the life of the runner: its links go with the process. */
	static struct keyhold_bpf *skel;

	if (skel)
		return 0;
	skel = keyhold_bpf__open_and_load();
	if (!skel)
		return -errno;
	if (keyhold_bpf__attach(skel)) {
		keyhold_bpf__destroy(skel);
		skel = NULL;
		return -errno;
	}
	return 0;
}
