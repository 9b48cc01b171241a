// SPDX-License-Identifier: GPL-2.0-only
/* The real rootful Podman for engine tests (engine_podman.h). */
#define _GNU_SOURCE
#include "engine_podman.h"
#include "daemon.h"
#include "harness.h"
#include "mountns.h"
#include "oci.h"

#include <dirent.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <json-c/json.h>

/* Where Podman 4.3 and runc write when not told otherwise (the state
 * directories, the runtime's root, the short-name cache, the CNI lock, the
 * SHM locks). */
static const char *const host_paths[] = {
	"/run/runc", "/run/libpod", "/run/containers", "/var/cache/containers",
	"/etc/cni/net.d/cni.lock", "/dev/shm/libpod_lock", NULL
};

static unsigned int host_paths_there(void)
{
	unsigned int had = 0, i;

	for (i = 0; host_paths[i]; i++)
		if (access(host_paths[i], F_OK) == 0)
			had |= 1u << i;
	return had;
}

static int patience(void)
{
	return test_is_emulated() ? 600 : 120;
}

static bool write_text(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	if (!ASSERT_TRUE(f != NULL, path))
		return false;
	fputs(text, f);
	if (!ASSERT_OK(fclose(f), path))
		return false;
	return ASSERT_OK(chmod(path, mode), path);
}

/* containers.conf, storage.conf and the runc wrapper, all in p->dir. */
static bool write_config(struct podman *p, const char *runc)
{
	char path[128], text[2048];
	const char *d = p->dir;

	snprintf(path, sizeof(path), "%s/containers.conf", d);
	/* The default ulimits exceed this sandbox's hard limits (nofile
	 * 20000), and a container whose rlimits cannot be set never starts;
	 * crun refuses hybrid cgroups: runc. */
	snprintf(text, sizeof(text),
		 "[containers]\n"
		 "default_ulimits = [\"nofile=1024:1024\", \"nproc=1024:1024\"]\n"
		 "[network]\n"
		 "network_config_dir = \"%s/cni\"\n"
		 "[engine]\n"
		 "cgroup_manager = \"cgroupfs\"\n"
		 "events_logger = \"file\"\n"
		 "runtime = \"runc\"\n"
		 "lock_type = \"file\"\n"
		 "image_copy_tmp_dir = \"%s/tmp\"\n"
		 "[engine.runtimes]\n"
		 "runc = [\"%s/runc\"]\n", d, d, d);
	if (!write_text(path, text, 0644) || setenv("CONTAINERS_CONF", path, 1))
		return false;
	snprintf(path, sizeof(path), "%s/storage.conf", d);
	snprintf(text, sizeof(text),
		 "[storage]\n"
		 "driver = \"vfs\"\n"
		 "graphroot = \"%s/root\"\n"
		 "runroot = \"%s/runroot\"\n", d, d);
	if (!write_text(path, text, 0644) || setenv("CONTAINERS_STORAGE_CONF", path, 1))
		return false;
	snprintf(path, sizeof(path), "%s/runc", d);
	snprintf(text, sizeof(text), "#!/bin/sh\nexec %s --root %s/runc-state \"$@\"\n", runc, d);
	return write_text(path, text, 0755);
}

/* Out of reach of Podman in this mount namespace: see engine_podman.h. */
static bool hide_var_lib_containers(void)
{
	struct stat st;

	if (stat("/var/lib/containers", &st) == 0)
		return ASSERT_OK(mount("tmpfs", "/var/lib/containers", "tmpfs", 0,
				       "size=16m,mode=0700"), "tmpfs over /var/lib/containers");
	return ASSERT_OK(mount("/var/lib", "/var/lib", NULL, MS_BIND, NULL), "bind /var/lib") &&
	       ASSERT_OK(mount(NULL, "/var/lib", NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL),
			 "/var/lib read-only");
}

bool podman_begin(struct podman *p)
{
	static const char *const subdirs[] = { "tmp", "cni", "hooks.d", "runc-state", NULL };
	char runc[256], conmon[256], path[128];
	size_t i;

	if (!oci_find_runtime("podman", p->bin, sizeof(p->bin))) {
		test_skip("podman not installed");
		return false;
	}
	if (!oci_find_runtime("conmon", conmon, sizeof(conmon))) {
		test_skip("conmon not installed (Podman's container monitor)");
		return false;
	}
	if (!oci_find_runtime("runc", runc, sizeof(runc))) {
		test_skip("runc not installed");
		return false;
	}
	p->had = host_paths_there();
	if (!mntns_private() || !hide_var_lib_containers())
		return false;
	snprintf(p->dir, sizeof(p->dir), "/tmp/sftest-podman-XXXXXX");
	if (!ASSERT_TRUE(mkdtemp(p->dir) != NULL, "mkdtemp")) {
		p->dir[0] = '\0';
		return false;
	}
	for (i = 0; subdirs[i]; i++) {
		snprintf(path, sizeof(path), "%s/%s", p->dir, subdirs[i]);
		if (!ASSERT_OK(mkdir(path, 0755), path))
			return false;
	}
	snprintf(p->hooks, sizeof(p->hooks), "%s/hooks.d", p->dir);
	snprintf(p->cgroup, sizeof(p->cgroup), "/sftest-podman-%d", (int)getpid());
	snprintf(path, sizeof(path), "%s/tmp", p->dir);
	/* A remote Podman would run none of this here. */
	unsetenv("CONTAINER_HOST");
	unsetenv("CONTAINER_CONNECTION");
	return !setenv("TMPDIR", path, 1) && write_config(p, runc);
}

int podman_do(struct podman *p, const char *const *args)
{
	char root[96], runroot[96], tmp[96], cmd[512] = "";
	const char *argv[64];
	size_t n = 0, off = 0;
	int st;

	snprintf(root, sizeof(root), "%s/root", p->dir);
	snprintf(runroot, sizeof(runroot), "%s/runroot", p->dir);
	snprintf(tmp, sizeof(tmp), "%s/tmp", p->dir);
	{
		const char *const global[] = {
			p->bin, "--root", root, "--runroot", runroot, "--tmpdir", tmp,
			"--storage-driver", "vfs", "--cgroup-manager", "cgroupfs",
			"--events-backend", "file", "--runtime", "runc", "--hooks-dir", p->hooks,
			NULL };

		for (; global[n]; n++)
			argv[n] = global[n];
	}
	for (; *args && n < 63; args++) {
		argv[n++] = *args;
		if (off < sizeof(cmd))
			off += snprintf(cmd + off, sizeof(cmd) - off, " %s", *args);
	}
	argv[n] = NULL;
	st = sfd_run(argv, true, patience(), p->out, sizeof(p->out));
	test_log("podman%s: status 0x%x\n%s", cmd, st, p->out);
	return st;
}

int podman_run(struct podman *p, const char *const *opts, const char *image,
	       const char *const *argv)
{
	const char *args[64];
	size_t n = 0;

	args[n++] = "run";
	args[n++] = "--network";
	args[n++] = "none";
	args[n++] = "--cgroup-parent";
	args[n++] = p->cgroup;
	for (; opts && *opts && n < 40; opts++)
		args[n++] = *opts;
	args[n++] = image;
	for (; *argv && n < 63; argv++)
		args[n++] = *argv;
	args[n] = NULL;
	return podman_do(p, args);
}

/* The line of Podman's output that says why, for a SKIP. */
static const char *why_line(const char *out, char *buf, size_t size)
{
	const char *e = strstr(out, "Error: ");

	if (!e)
		e = out;
	snprintf(buf, size, "%.*s", (int)strcspn(e, "\n"), e);
	return buf;
}

bool podman_import_busybox(struct podman *p, const char *image)
{
	static const char *const t[] = { "true", NULL };
	char busybox[256], why[256], dir[96], tar[160];
	int st;

	if (!oci_find_busybox(busybox, sizeof(busybox), why, sizeof(why))) {
		test_skip("%s", why);
		return false;
	}
	snprintf(dir, sizeof(dir), "%s/busybox", p->dir);
	if (!ASSERT_OK(mkdir(dir, 0755), dir) || !oci_rootfs_tar(dir, busybox, tar, sizeof(tar)))
		return false;
	st = podman_do(p, (const char *const[]){ "import", "--quiet", tar, image, NULL });
	if (!ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0, "podman import of the rootfs"))
		return false;
	st = podman_run(p, (const char *const[]){ "--rm", NULL }, image, t);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return true;
	test_skip("podman cannot run a container here: %s", why_line(p->out, why, sizeof(why)));
	return false;
}

/* text with every from replaced by to, into out. */
static bool replace_all(const char *text, const char *from, const char *to, char *out,
			size_t size)
{
	size_t off = 0, fl = strlen(from);
	const char *s;

	while ((s = strstr(text, from))) {
		off += snprintf(out + off, off < size ? size - off : 0, "%.*s%s",
				(int)(s - text), text, to);
		text = s + fl;
	}
	off += snprintf(out + off, off < size ? size - off : 0, "%s", text);
	return ASSERT_TRUE(off < size, "the hooks.d file fits");
}

bool podman_staged(const char *name, const char *env, char *buf, size_t size)
{
	char path[PATH_MAX];
	size_t n;
	FILE *f;

	if (!sfd_find_file(name, env, path, sizeof(path))) {
		test_fail(__FILE__, __LINE__, "no %s beside the test runner (the Makefile "
			  "stages it)", name);
		return false;
	}
	f = fopen(path, "r");
	if (!ASSERT_TRUE(f != NULL, path))
		return false;
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = '\0';
	return ASSERT_TRUE(n < size - 1, "the staged file fits");
}

bool podman_hooks_d(struct podman *p, const char *hook, const char *profiles,
		    const char *sock)
{
	char bindir[PATH_MAX], raw[4096], a[4096], b[4096], env[200], out[160];
	struct json_object *doc, *h, *e;
	bool ok;

	if (!podman_staged("sfilter-hooks.json", "SF_HOOKS_JSON", raw, sizeof(raw)))
		return false;
	if (!ASSERT_TRUE(realpath(hook, bindir) != NULL, "the hook's path"))
		return false;
	dirname(bindir);
	if (!replace_all(raw, "@BINDIR@", bindir, a, sizeof(a)) ||
	    !replace_all(a, "@PROFILEDIR@", profiles, b, sizeof(b)))
		return false;
	doc = json_tokener_parse(b);
	if (!ASSERT_TRUE(doc && json_object_object_get_ex(doc, "hook", &h), "hooks.d JSON")) {
		json_object_put(doc);
		return false;
	}
	snprintf(env, sizeof(env), "SFILTER_SOCKET=%s", sock);
	e = json_object_new_array();
	json_object_array_add(e, json_object_new_string(env));
	json_object_object_add(h, "env", e);
	snprintf(out, sizeof(out), "%s/sfilter.json", p->hooks);
	ok = json_object_to_file_ext(out, doc, JSON_C_TO_STRING_PRETTY) == 0;
	test_log("%s:\n%s\n", out, json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY));
	json_object_put(doc);
	return ASSERT_TRUE(ok, "hooks.d file written");
}

/* ---- what is left --------------------------------------------------------- */

/* Whether pid's command line holds needle (arguments joined by spaces). */
static bool cmdline_has(const char *pid, const char *needle)
{
	char path[64], buf[4096];
	ssize_t n, i;
	int fd;

	snprintf(path, sizeof(path), "/proc/%.20s/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	for (i = 0; i < n; i++)
		if (!buf[i])
			buf[i] = ' ';
	buf[n] = '\0';
	return strstr(buf, needle) != NULL;
}

/* Processes whose command line names the directory (conmon, a stuck
 * podman or runc), listed into out and killed: a test that failed leaves
 * nothing running either. */
static int processes_naming(const char *dir, char *out, size_t size)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	size_t off = 0;
	int n = 0;

	out[0] = '\0';
	while (d && (e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9' || !cmdline_has(e->d_name, dir))
			continue;
		n++;
		if (off < size)
			off += snprintf(out + off, size - off, " %s", e->d_name);
		kill(atoi(e->d_name), SIGKILL);
	}
	if (d)
		closedir(d);
	return n;
}

/* Mount points under dir in this namespace, listed into out and
 * detached, so that removing dir removes nothing beyond it. */
static int mounts_under(const char *dir, char *out, size_t size)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char line[1024], mnt[512];
	size_t off = 0, dl = strlen(dir);
	int n = 0;

	out[0] = '\0';
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*s %*s %*s %*s %511s", mnt) != 1 || strncmp(mnt, dir, dl) ||
		    (mnt[dl] && mnt[dl] != '/'))
			continue;
		n++;
		if (off < size)
			off += snprintf(out + off, size - off, " %s", mnt);
		umount2(mnt, MNT_DETACH);
	}
	if (f)
		fclose(f);
	return n;
}

/* Removes the cgroup directory path and those below it, bottom up; the
 * number of processes found in them. */
static int cgroup_remove(const char *path)
{
	char sub[PATH_MAX], procs[PATH_MAX + 16], line[32];
	struct dirent *e;
	DIR *d = opendir(path);
	FILE *f;
	int n = 0, tries;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (e->d_type == DT_DIR && e->d_name[0] != '.') {
			snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
			n += cgroup_remove(sub);
		}
	closedir(d);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", path);
	f = fopen(procs, "r");
	while (f && fgets(line, sizeof(line), f)) {
		kill(atoi(line), SIGKILL);
		n++;
	}
	if (f)
		fclose(f);
	/* A killed process leaves its cgroup a moment after the signal. */
	for (tries = 0; rmdir(path) && errno == EBUSY && tries < 100; tries++)
		usleep(10000);
	if (access(path, F_OK) == 0)
		test_log("rmdir %s: %s\n", path, strerror(errno));
	return n;
}

/* The cgroup-parent in every cgroup hierarchy (v1 controllers, the named
 * systemd one, cgroup2), removed; the processes that were in it. */
static int cgroups_remove(const char *parent)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char line[1024], mnt[512], type[64], path[PATH_MAX];
	int n = 0;

	while (f && fgets(line, sizeof(line), f)) {
		const char *dash = strstr(line, " - ");

		if (!dash || sscanf(line, "%*s %*s %*s %*s %511s", mnt) != 1 ||
		    sscanf(dash + 3, "%63s", type) != 1 ||
		    (strcmp(type, "cgroup") && strcmp(type, "cgroup2")))
			continue;
		snprintf(path, sizeof(path), "%s%s", mnt, parent);
		n += cgroup_remove(path);
	}
	if (f)
		fclose(f);
	return n;
}

void podman_end(struct podman *p)
{
	char list[1024], cmd[128];
	unsigned int made, i;
	int st;

	if (!p->dir[0])
		return;
	st = podman_do(p, (const char *const[]){ "rm", "--all", "--force", "--time", "5", NULL });
	ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0, "podman rm -af");
	ASSERT_EQ(processes_naming(p->dir, list, sizeof(list)), 0,
		  "no conmon, podman or runc left");
	if (list[0])
		test_log("left:%s\n", list);
	ASSERT_EQ(cgroups_remove(p->cgroup), 0, "no process left in the containers' cgroups");
	ASSERT_EQ(mounts_under(p->dir, list, sizeof(list)), 0, "no mount left under the directory");
	if (list[0])
		test_log("mounted:%s\n", list);
	made = host_paths_there() & ~p->had;
	for (i = 0; host_paths[i]; i++)
		if (made & (1u << i))
			test_fail(__FILE__, __LINE__, "Podman made %s", host_paths[i]);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", p->dir);
	ASSERT_OK(system(cmd), "remove the directory");
	p->dir[0] = '\0';
}
