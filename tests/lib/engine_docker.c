// SPDX-License-Identifier: GPL-2.0-only
/* A private Docker for tests (engine_docker.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "engine_docker.h"
#include "harness.h"
#include "daemon.h"
#include "mountns.h"
#include "oci.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

static int patience(void)
{
	return test_is_emulated() ? 600 : 60;
}

bool dockerd_find(struct dockerd *d)
{
	if (!oci_find_runtime("dockerd", d->dockerd, sizeof(d->dockerd))) {
		test_skip("dockerd is not installed");
		return false;
	}
	if (!oci_find_runtime("docker", d->docker, sizeof(d->docker))) {
		test_skip("the docker CLI is not installed");
		return false;
	}
	return true;
}

static bool write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!ASSERT_TRUE(f != NULL, path))
		return false;
	fputs(text, f);
	return ASSERT_OK(fclose(f), path);
}

/* Whether a Unix socket at path accepts a connection. */
static bool answers(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool ok;

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

/* dockerd's last words: its log's last line, the message of it when it
 * is logrus's ("unable to configure the Docker daemon with file ...",
 * "failed to start daemon: ..."). */
static void last_words(const struct dockerd *d, char *out, size_t size)
{
	char line[400];
	FILE *f = fopen(d->log, "r");

	snprintf(out, size, "exited without a word");
	while (f && fgets(line, sizeof(line), f)) {
		char *m = strstr(line, "msg=\""), *text = line;

		line[strcspn(line, "\n")] = '\0';
		if (!line[0])
			continue;
		if (m) {
			text = m + 5;
			text[strcspn(text, "\"")] = '\0';
		}
		snprintf(out, size, "%s", text);
	}
	if (f)
		fclose(f);
}

static pid_t read_pid(const char *path)
{
	FILE *f = fopen(path, "r");
	int pid = 0;

	if (f) {
		if (fscanf(f, "%d", &pid) != 1)
			pid = 0;
		fclose(f);
	}
	return (pid_t)pid;
}

/* /proc/PID/cmdline with its NULs as blanks. */
static bool cmdline(pid_t pid, char *out, size_t size)
{
	char p[64];
	ssize_t n, i;
	int fd;

	snprintf(p, sizeof(p), "/proc/%d/cmdline", (int)pid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, out, size - 1);
	close(fd);
	if (n <= 0)
		return false;
	for (i = 0; i < n; i++)
		out[i] = out[i] ? out[i] : ' ';
	out[n] = '\0';
	return true;
}

/* The parent of pid, from /proc/PID/stat; 0 when it is gone. */
static pid_t parent_of(pid_t pid)
{
	long long ppid = sfd_proc_stat(pid, 4);

	return ppid > 0 ? (pid_t)ppid : 0;
}

/* The dockerd-managed containerd: its own, under exec-root, dockerd's
 * child; the host's /run/containerd/containerd.sock is never used. */
static bool own_containerd(struct dockerd *d)
{
	char p[200], cmd[1024];

	snprintf(p, sizeof(p), "%s/containerd/containerd.pid", d->exec_root);
	d->containerd = read_pid(p);
	if (!ASSERT_TRUE(d->containerd > 0, "dockerd started a containerd of its own"))
		return false;
	snprintf(p, sizeof(p), "%s/containerd/containerd.sock", d->exec_root);
	test_log("containerd %d, socket %s\n", (int)d->containerd, p);
	return ASSERT_EQ(parent_of(d->containerd), d->pid, "containerd is dockerd's child") &&
	       ASSERT_TRUE(cmdline(d->containerd, cmd, sizeof(cmd)) &&
			   strstr(cmd, d->exec_root) != NULL,
			   "containerd's configuration is under exec-root") &&
	       ASSERT_TRUE(answers(p), "its socket is under exec-root");
}

/* Whether the API serves: `docker version` of the server. */
static bool ready(struct dockerd *d)
{
	const char *args[] = { "version", "--format", "{{.Server.Version}}", NULL };
	char out[1024];
	int st = docker(d, args, patience(), out, sizeof(out));

	if (st == 0)
		test_log("dockerd %s", out);
	return st == 0;
}

static void exec_dockerd(const struct dockerd *d, const char *config, const char *pidfile,
			 const char *data, const char *host)
{
	int null = open("/dev/null", O_RDONLY), log = open(d->log, O_WRONLY | O_CREAT |
							     O_TRUNC | O_APPEND, 0644);
	char *const argv[] = { (char *)d->dockerd, "--config-file", (char *)config,
			       "--data-root", (char *)data, "--exec-root",
			       (char *)d->exec_root, "-H", (char *)host, "--pidfile",
			       (char *)pidfile, "--iptables=false", "--bridge=none", NULL };

	dup2(null, 0);
	dup2(log, 1);
	dup2(log, 2);
	execv(argv[0], argv);
	_exit(127);
}

bool dockerd_start(struct dockerd *d, const char *daemon_json)
{
	char config[128], pidfile[128], data[128], cli[128], sock[128], json[4096], why[512];
	int status, ms;

	if (!mntns_private() ||
	    !ASSERT_OK(mount("tmpfs", "/run", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755"),
		       "an empty tmpfs on /run in the private mount namespace"))
		return false;
	snprintf(d->dir, sizeof(d->dir), "/tmp/sftest-docker-XXXXXX");
	if (!ASSERT_TRUE(mkdtemp(d->dir) != NULL, "mkdtemp")) {
		d->dir[0] = '\0';
		return false;
	}
	snprintf(config, sizeof(config), "%s/daemon.json", d->dir);
	snprintf(pidfile, sizeof(pidfile), "%s/docker.pid", d->dir);
	snprintf(data, sizeof(data), "%s/data", d->dir);
	snprintf(d->exec_root, sizeof(d->exec_root), "%s/exec", d->dir);
	snprintf(cli, sizeof(cli), "%s/cli", d->dir);
	snprintf(sock, sizeof(sock), "%s/docker.sock", d->dir);
	snprintf(d->host, sizeof(d->host), "unix://%s", sock);
	snprintf(d->log, sizeof(d->log), "%s/dockerd.log", d->dir);
	/* The trust key goes to /etc/docker/key.json unless named. */
	snprintf(json, sizeof(json), "{\"deprecated-key-path\": \"%s/key.json\"%s%s}\n", d->dir,
		 daemon_json ? ", " : "", daemon_json ? daemon_json : "");
	if (!ASSERT_OK(mkdir(cli, 0700), "mkdir cli") || !write_text(config, json) ||
	    !ASSERT_OK(setenv("DOCKER_CONFIG", cli, 1), "DOCKER_CONFIG"))
		return false;
	fflush(stdout);
	d->pid = fork();
	if (d->pid == 0)
		exec_dockerd(d, config, pidfile, data, d->host);
	if (!ASSERT_TRUE(d->pid > 0, "fork dockerd"))
		return false;
	for (ms = 0; ms < patience() * 1000; ms += 50) {
		if (waitpid(d->pid, &status, WNOHANG) == d->pid) {
			d->pid = 0;
			last_words(d, why, sizeof(why));
			test_skip("dockerd: %s", why);
			return false;
		}
		/* dockerd listens before it serves: the request waits. */
		if (answers(sock) && ready(d))
			return own_containerd(d);
		usleep(50000);
	}
	test_fail(__FILE__, __LINE__, "dockerd did not answer on %s in %d s", sock, patience());
	return false;
}

int docker(struct dockerd *d, const char *const *args, int timeout_s, char *out, size_t size)
{
	const char *argv[40];
	size_t n = 0;

	argv[n++] = d->docker;
	argv[n++] = "-H";
	argv[n++] = d->host;
	for (; *args && n < sizeof(argv) / sizeof(argv[0]) - 1; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	return sfd_run(argv, true, timeout_s, out, size);
}

bool docker_import(struct dockerd *d, const char *tar, const char *name)
{
	const char *args[] = { "import", tar, name, NULL };
	char out[2048];
	int st = docker(d, args, patience(), out, sizeof(out));

	if (!ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0, "docker import"))
		test_log("docker import: %s\n", out);
	return st == 0;
}

/* The processes (not this one) whose command line names dir: into list,
 * their count. */
static int naming(const char *dir, pid_t *list, int max)
{
	DIR *p = opendir("/proc");
	struct dirent *e;
	char cmd[4096];
	int n = 0;

	while (p && (e = readdir(p))) {
		pid_t pid = (pid_t)atoi(e->d_name);

		if (pid <= 0 || pid == getpid() || !cmdline(pid, cmd, sizeof(cmd)) ||
		    !strstr(cmd, dir))
			continue;
		if (n < max)
			list[n] = pid;
		n++;
		test_log("left: %d %s\n", (int)pid, cmd);
	}
	if (p)
		closedir(p);
	return n;
}

/* The mount points under dir, deepest last (mountinfo's order), into
 * list; their count. */
static int mounts_under(const char *dir, char list[][256], int max)
{
	char line[4096], point[256];
	size_t len = strlen(dir);
	FILE *f = fopen("/proc/self/mountinfo", "r");
	int n = 0;

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*s %*s %*s %*s %255s", point) != 1 ||
		    strncmp(point, dir, len) || (point[len] && point[len] != '/'))
			continue;
		if (n < max)
			memcpy(list[n], point, sizeof(point));
		n++;
	}
	if (f)
		fclose(f);
	return n;
}

static bool gone(pid_t pid, int timeout_ms)
{
	char p[64];
	int ms;

	snprintf(p, sizeof(p), "/proc/%d", (int)pid);
	for (ms = 0; ms < timeout_ms && access(p, F_OK) == 0; ms += 50)
		usleep(50000);
	return access(p, F_OK) != 0;
}

static void remove_dir(struct dockerd *d)
{
	const char *argv[] = { "/bin/rm", "-rf", d->dir, NULL };
	char out[1024];

	if (d->dir[0] && sfd_run(argv, true, patience(), out, sizeof(out)) != 0)
		test_log("rm -rf %s: %s\n", d->dir, out);
	d->dir[0] = '\0';
}

bool dockerd_stop(struct dockerd *d)
{
	const char *ps[] = { "ps", "-aq", NULL };
	char out[4096], points[8][256];
	pid_t left[16];
	int status = -1, ms, st;
	bool ok;

	if (!d->pid)
		return true;
	st = docker(d, ps, patience(), out, sizeof(out));
	ok = ASSERT_EQ(st, 0, "docker ps -aq") &&
	     ASSERT_STREQ(out, "", "no container is left before the stop");
	kill(d->pid, SIGTERM);
	for (ms = 0; ms < patience() * 1000; ms += 50) {
		if (waitpid(d->pid, &status, WNOHANG) == d->pid)
			break;
		usleep(50000);
	}
	ok = ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			 "dockerd exits 0 on SIGTERM") && ok;
	if (WIFEXITED(status) || WIFSIGNALED(status))
		d->pid = 0;
	ok = ASSERT_TRUE(gone(d->containerd, 10000), "its containerd is gone") && ok;
	ok = ASSERT_EQ(naming(d->dir, left, 16), 0,
		       "no process names the directory (shims, containers)") && ok;
	ok = ASSERT_EQ(mounts_under(d->dir, points, 8), 0, "no mount is left under it") && ok;
	if (ok)
		remove_dir(d);
	return ok;
}

/* The containers, removed while dockerd still answers: their processes
 * then end as Docker ends them, their shims with them. */
static void remove_containers(struct dockerd *d)
{
	const char *ps[] = { "ps", "-aq", NULL };
	const char *rm[40] = { "rm", "-f" };
	char out[4096], *id, *save;
	int n = 2;

	if (docker(d, ps, 30, out, sizeof(out)) != 0)
		return;
	for (id = strtok_r(out, "\n", &save); id && n < 39; id = strtok_r(NULL, "\n", &save))
		rm[n++] = id;
	if (n > 2)
		docker(d, rm, 60, out, sizeof(out));
}

/* The processes naming dir and their children (a container's first
 * process is its shim's): killed. */
static void kill_left(const char *dir)
{
	pid_t left[64];
	DIR *p;
	struct dirent *e;
	int n = naming(dir, left, 64), i;

	n = n < 64 ? n : 64;
	p = opendir("/proc");
	while (p && (e = readdir(p))) {
		pid_t pid = (pid_t)atoi(e->d_name), pp = pid > 0 ? parent_of(pid) : 0;

		for (i = 0; pp > 0 && i < n; i++)
			if (pp == left[i])
				kill(pid, SIGKILL);
	}
	if (p)
		closedir(p);
	for (i = 0; i < n; i++)
		kill(left[i], SIGKILL);
}

void dockerd_cleanup(struct dockerd *d)
{
	char points[64][256];
	int i, n, round, ms;

	if (d->pid > 0) {
		remove_containers(d);
		kill(d->pid, SIGTERM);
		for (ms = 0; ms < 20000 && waitpid(d->pid, NULL, WNOHANG) == 0; ms += 50)
			usleep(50000);
		if (ms >= 20000) {
			kill(d->pid, SIGKILL);
			waitpid(d->pid, NULL, 0);
		}
		d->pid = 0;
	}
	if (!d->dir[0])
		return;
	if (d->containerd > 0 && !gone(d->containerd, 0))
		kill(d->containerd, SIGKILL);
	kill_left(d->dir);
	/* Only this test's namespace has them; inner ones first. */
	for (round = 0; round < 16 && (n = mounts_under(d->dir, points, 64)) > 0; round++)
		for (i = (n < 64 ? n : 64) - 1; i >= 0; i--)
			umount2(points[i], MNT_DETACH);
	remove_dir(d);
}
