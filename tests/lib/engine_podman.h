/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The real rootful Podman for engine tests, with every piece of its state
 * in one temporary directory: storage (vfs) at --root and --runroot,
 * --tmpdir, the events file, the locks (lock_type "file", not
 * /dev/shm/libpod_lock), the CNI lock (network_config_dir), runc's state
 * (runc through a wrapper that passes --root: Podman 4.3's cleanup
 * process drops --runtime-flag, and its `runc delete` then looks in
 * /run/runc), and the containers' cgroups under a --cgroup-parent of the
 * test's own, removed at the end.
 *
 * Podman runs in a private mount namespace of the test's process, where
 * /var/lib/containers is out of reach (a tmpfs over it, or /var/lib read
 * only when it does not exist): `podman import` and `podman load` write
 * their blob info cache there whatever --root says (containers/image
 * pkg/blobinfocache: /var/lib/containers/cache for root), and fall back to
 * a memory-only cache when it cannot be made.
 *
 * podman_end() is the check that nothing is left: `podman rm -af`, then
 * no conmon and no process in the test's cgroups, no mount under the
 * directory, none of the host paths Podman writes by default made
 * (/run/runc, /run/libpod, /run/containers, /var/cache/containers,
 * /etc/cni/net.d/cni.lock, /dev/shm/libpod_lock), and the directory and
 * the cgroups removed.
 */
#ifndef SF_TESTS_ENGINE_PODMAN_H
#define SF_TESTS_ENGINE_PODMAN_H

#include <stdbool.h>
#include <stddef.h>

struct podman {
	char dir[64];       /* /tmp/sftest-podman-XXXXXX */
	char bin[64];       /* podman */
	char cgroup[64];    /* the containers' --cgroup-parent, /sftest-podman-PID */
	char hooks[128];    /* dir/hooks.d, the --hooks-dir */
	unsigned int had;   /* which of Podman's default host paths were there */
	char out[16384];    /* the output of the last podman_do() */
};

/* Finds podman, conmon and runc (a SKIP naming the missing one), makes
 * the directory and the configuration, enters the private mount
 * namespace. false with the test skipped or failed. */
bool podman_begin(struct podman *p);

/* `podman GLOBAL-FLAGS args...` (NULL-terminated): its wait status, its
 * stdout and stderr in p->out (logged). */
int podman_do(struct podman *p, const char *const *args);
/* `podman run --rm --network none --cgroup-parent ... opts... image
 * argv...` (opts and argv NULL-terminated; opts may be NULL). */
int podman_run(struct podman *p, const char *const *opts, const char *image,
	       const char *const *argv);

/* Imports the busybox rootfs tarball (oci_rootfs_tar()) as image; a plain
 * container of it tells whether Podman runs containers here at all: a
 * SKIP with Podman's words when it does not. */
bool podman_import_busybox(struct podman *p, const char *image);

/* A file the Makefile stages beside the runner (or $env), read whole into
 * buf; false with the test failed. */
bool podman_staged(const char *name, const char *env, char *buf, size_t size);

/* dir/hooks.d/sfilter.json: the project's hooks.d file (staged beside the
 * runner as sfilter-hooks.json) with @BINDIR@ (hook's directory) and
 * @PROFILEDIR@ filled in, and the hook's environment naming sock: the
 * hook takes its socket from $SFILTER_SOCKET alone (else
 * /run/sfilter/sfilterd.sock), and runc gives a hook only the env of its
 * hooks.d entry. */
bool podman_hooks_d(struct podman *p, const char *hook, const char *profiles,
		    const char *sock);

/* Removes every container and checks that nothing is left (see above);
 * the directory and the cgroups are removed either way. Nothing when
 * podman_begin() made no directory. */
void podman_end(struct podman *p);
#define PODMAN_AUTO struct podman pm __attribute__((cleanup(podman_end))) = { 0 }

#endif
