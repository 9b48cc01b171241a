/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The container a process runs in, as docker, crictl and podman name it,
 * from the text of its /proc/PID/cgroup: the "container" field of PS and
 * SHOW (docs/protocol.md). Written by sfilterd, checked by the tests; kept
 * here, beside the other formats both ends share, because the daemon's own
 * layer is linked into no test. Display only: nothing decides by it.
 */
#ifndef SF_CONTAINER_ID_H
#define SF_CONTAINER_ID_H

#include <stdbool.h>

/* A runc container id: 64 lowercase hex digits (a sha256). */
#define SF_CONTAINER_ID_LEN 64

/*
 * The id of the container whose cgroup text (the whole of a /proc/PID/cgroup,
 * NUL-terminated) places its process in, into id (64 digits and a NUL);
 * false, id "", when it names none. The v2 line ("0::/...") first; when it
 * names no container, the v1 lines, name=systemd first, then the others in
 * their order. In a path, the deepest component that is an id, bare or as
 * a runtime names its cgroup: docker-, cri-containerd-, crio-, libpod-,
 * containerd- before it, ".scope" after it; conmon's scopes are no
 * container.
 */
bool sf_container_id(const char *cgroup_text, char id[SF_CONTAINER_ID_LEN + 1]);

#endif
