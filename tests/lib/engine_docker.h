/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A private Docker for tests: Debian's dockerd with every directory of its
 * own under one temporary directory (data-root, exec-root, its socket,
 * pidfile, daemon.json, the trust key, the CLI's config), started with no
 * networking of its own (--iptables=false --bridge=none) and its own
 * managed containerd (dockerd starts one under exec-root when given
 * none), and stopped with nothing left: no process that names the
 * directory, no mount under it, no file of it.
 *
 * dockerd and containerd's shims write outside any directory they are
 * given (the shims' sockets in /run/containerd/s, dockerd's /run/docker):
 * so the test's process first takes a private mount namespace with an
 * empty tmpfs on /run, and they write there, seen by no one else and gone
 * with the namespace.
 */
#ifndef SF_TESTS_ENGINE_DOCKER_H
#define SF_TESTS_ENGINE_DOCKER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct dockerd {
	char dir[64];          /* /tmp/sftest-docker-XXXXXX */
	char dockerd[256], docker[256];
	char host[160];        /* unix://DIR/docker.sock */
	char exec_root[128], log[128];
	pid_t pid;             /* dockerd; 0: not running */
	pid_t containerd;      /* the containerd it started */
};

/* dockerd and the docker CLI: false with the test skipped ("dockerd is not
 * installed") when either is missing. */
bool dockerd_find(struct dockerd *d);
/* The private mount namespace (tmpfs on /run), the directory, daemon.json
 * (its text: a JSON object's members, without the braces: "runtimes":
 * {...}; NULL for none) and dockerd, until the API answers. false with the
 * test skipped, in dockerd's own words, when dockerd cannot start; failed
 * for anything else. */
bool dockerd_start(struct dockerd *d, const char *daemon_json);
/* `docker -H HOST args...` (NULL-terminated): its wait status, its stdout
 * and stderr into out. */
int docker(struct dockerd *d, const char *const *args, int timeout_s, char *out, size_t size);
/* `docker import` of a rootfs tarball as image name. */
bool docker_import(struct dockerd *d, const char *tar, const char *name);
/* Stops dockerd with SIGTERM and checks that the stop was clean: dockerd
 * and its containerd gone, no process whose command line names the
 * directory (a shim, a container's), no mount under it; then removes it.
 * True when all of that held. */
bool dockerd_stop(struct dockerd *d);
/* Whatever is left, killed and unmounted, and the directory removed:
 * the cleanup of a test that stopped half way (dockerd_stop() first). */
void dockerd_cleanup(struct dockerd *d);
#define DOCKERD_AUTO struct dockerd dk __attribute__((cleanup(dockerd_cleanup))) = { 0 }

#endif
