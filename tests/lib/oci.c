// SPDX-License-Identifier: GPL-2.0-only
#define _GNU_SOURCE
#include "oci.h"
#include "harness.h"
#include "daemon.h"

#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <json-c/json.h>

#define RAMFS_MAGIC 0x858458f6
#define TMPFS_MAGIC 0x01021994

/* The applets the tests' commands use, as links to busybox. */
static const char *const applets[] = { "sh", "echo", "uname", "sleep", "cat", "true",
				       "touch", "test", "[", "ls", "sync", NULL };

bool oci_find_runtime(const char *name, char *out, size_t size)
{
	static const char *const dirs[] = { "/usr/sbin", "/usr/bin", "/sbin", "/bin",
					    "/usr/local/sbin", "/usr/local/bin", NULL };
	size_t i;

	for (i = 0; dirs[i]; i++) {
		snprintf(out, size, "%s/%s", dirs[i], name);
		if (access(out, X_OK) == 0)
			return true;
	}
	return false;
}

/* Whether the ELF file at path has no program interpreter. */
static bool is_static_elf(const char *path)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	bool ok = false;
	int fd = open(path, O_RDONLY | O_CLOEXEC), i;

	if (fd < 0)
		return false;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64)
		goto out;
	ok = true;
	for (i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize)) !=
		    sizeof(ph)) {
			ok = false;
			break;
		}
		if (ph.p_type == PT_INTERP)
			ok = false;
	}
out:
	close(fd);
	return ok;
}

bool oci_find_busybox(char *out, size_t size, char *why, size_t wsize)
{
	static const char *const paths[] = { "/bin/busybox", "/usr/bin/busybox", NULL };
	size_t i;

	for (i = 0; paths[i]; i++) {
		if (access(paths[i], X_OK))
			continue;
		if (!is_static_elf(paths[i])) {
			snprintf(why, wsize, "%s is not static (install busybox-static)", paths[i]);
			return false;
		}
		snprintf(out, size, "%s", paths[i]);
		return true;
	}
	snprintf(why, wsize, "no busybox (install busybox-static)");
	return false;
}

static bool copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC), out;
	ssize_t n;
	bool ok = true;

	if (in < 0)
		return false;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (out < 0) {
		close(in);
		return false;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			ok = false;
	close(in);
	close(out);
	return ok && n == 0;
}

static bool make_rootfs(struct oci_bundle *b, const char *busybox)
{
	static const char *const dirs[] = { "rootfs", "rootfs/bin", "rootfs/proc", "rootfs/dev",
					    "rootfs/sys", "rootfs/tmp", "rootfs/sync", "sync",
					    "state", NULL };
	char p[512];
	size_t i;

	for (i = 0; dirs[i]; i++) {
		snprintf(p, sizeof(p), "%s/%s", b->dir, dirs[i]);
		if (!ASSERT_OK(mkdir(p, 0755), p))
			return false;
	}
	snprintf(p, sizeof(p), "%s/rootfs/bin/busybox", b->dir);
	if (!ASSERT_TRUE(copy_file(busybox, p), "copy busybox into the rootfs"))
		return false;
	for (i = 0; applets[i]; i++) {
		snprintf(p, sizeof(p), "%s/rootfs/bin/%s", b->dir, applets[i]);
		if (!ASSERT_OK(symlink("busybox", p), p))
			return false;
	}
	return true;
}

bool oci_rootfs_tar(const char *dir, const char *busybox, char *tar, size_t size)
{
	struct oci_bundle b = {};
	char p[600];
	int st;

	snprintf(b.dir, sizeof(b.dir), "%s", dir);
	if (!make_rootfs(&b, busybox))
		return false;
	snprintf(tar, size, "%s/rootfs.tar", dir);
	snprintf(p, sizeof(p), "%s/rootfs", dir);
	{
		const char *const argv[] = { "/bin/tar", "-C", p, "-cf", tar, ".", NULL };
		char out[1024];

		st = sfd_run(argv, true, 60, out, sizeof(out));
		if (!ASSERT_EQ(st, 0, "tar of the busybox rootfs"))
			fprintf(stderr, "%s\n", out);
	}
	return st == 0;
}

static char *config_path(const struct oci_bundle *b, char *p, size_t size)
{
	snprintf(p, size, "%s/config.json", b->dir);
	return p;
}

static struct json_object *config_read(const struct oci_bundle *b)
{
	char p[512];
	struct json_object *c = json_object_from_file(config_path(b, p, sizeof(p)));

	ASSERT_TRUE(c != NULL, "config.json parses");
	return c;
}

static bool config_write(const struct oci_bundle *b, struct json_object *c)
{
	char p[512];
	bool ok = json_object_to_file_ext(config_path(b, p, sizeof(p)), c,
					  JSON_C_TO_STRING_PRETTY) == 0;

	json_object_put(c);
	return ASSERT_TRUE(ok, "config.json written");
}

/* The object at key in o, made when missing. */
static struct json_object *child(struct json_object *o, const char *key, json_type type)
{
	struct json_object *v;

	if (json_object_object_get_ex(o, key, &v) && json_object_is_type(v, type))
		return v;
	v = type == json_type_array ? json_object_new_array() : json_object_new_object();
	json_object_object_add(o, key, v);
	return v;
}

static struct json_object *strings(const char *const *s)
{
	struct json_object *a = json_object_new_array();

	for (; s && *s; s++)
		json_object_array_add(a, json_object_new_string(*s));
	return a;
}

/* process.args, no terminal, and the /sync bind. */
static bool config_setup(struct oci_bundle *b, const char *const *argv)
{
	struct json_object *c = config_read(b), *proc, *mount, *opts;
	char src[512];

	if (!c)
		return false;
	proc = child(c, "process", json_type_object);
	json_object_object_add(proc, "terminal", json_object_new_boolean(0));
	json_object_object_add(proc, "args", strings(argv));
	snprintf(src, sizeof(src), "%s/sync", b->dir);
	mount = json_object_new_object();
	json_object_object_add(mount, "destination", json_object_new_string("/sync"));
	json_object_object_add(mount, "type", json_object_new_string("bind"));
	json_object_object_add(mount, "source", json_object_new_string(src));
	opts = strings((const char *const[]){ "rbind", "rw", NULL });
	json_object_object_add(mount, "options", opts);
	json_object_array_add(child(c, "mounts", json_type_array), mount);
	return config_write(b, c);
}

/* Whether / is the initramfs, where pivot_root(2) is refused. */
static bool root_is_initramfs(void)
{
	struct statfs s;

	return statfs("/", &s) == 0 && (s.f_type == RAMFS_MAGIC || s.f_type == TMPFS_MAGIC);
}

bool oci_bundle_make(struct oci_bundle *b, const char *runtime, const char *busybox,
		     const char *const *argv)
{
	static int n;
	const char *spec[] = { runtime, "spec", "--bundle", b->dir, NULL };
	char out[4096];
	int st;

	memset(b, 0, sizeof(*b));
	snprintf(b->dir, sizeof(b->dir), "/tmp/sftest-oci-XXXXXX");
	if (!ASSERT_TRUE(mkdtemp(b->dir) != NULL, "mkdtemp"))
		return false;
	snprintf(b->runtime, sizeof(b->runtime), "%s", runtime);
	snprintf(b->id, sizeof(b->id), "sftest-%d-%d", (int)getpid(), n++);
	b->no_pivot = root_is_initramfs();
	if (!make_rootfs(b, busybox))
		return false;
	spec[3] = b->dir;
	st = sfd_run(spec, true, 60, out, sizeof(out));
	if (!ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0, "runtime spec")) {
		test_log("%s spec: %s\n", runtime, out);
		return false;
	}
	return config_setup(b, argv);
}

bool oci_annotate(struct oci_bundle *b, const char *key, const char *value)
{
	struct json_object *c = config_read(b), *a;

	if (!c)
		return false;
	a = child(c, "annotations", json_type_object);
	if (value)
		json_object_object_add(a, key, json_object_new_string(value));
	else
		json_object_object_del(a, key);
	return config_write(b, c);
}

bool oci_set_seccomp(struct oci_bundle *b, const char *path)
{
	struct json_object *c = config_read(b), *sec = json_object_from_file(path);

	if (!c || !sec) {
		if (c)
			json_object_put(c);
		if (sec)
			json_object_put(sec);
		return ASSERT_TRUE(false, "linux.seccomp from the file");
	}
	json_object_object_add(child(c, "linux", json_type_object), "seccomp", sec);
	return config_write(b, c);
}

bool oci_add_hook(struct oci_bundle *b, const char *hook, const char *const *args,
		  const char *const *env)
{
	return oci_add_hook_at(b, "createRuntime", hook, args, env);
}

bool oci_add_hook_at(struct oci_bundle *b, const char *stage, const char *hook,
		     const char *const *args, const char *const *env)
{
	struct json_object *c = config_read(b), *h, *a;

	if (!c)
		return false;
	h = json_object_new_object();
	json_object_object_add(h, "path", json_object_new_string(hook));
	a = strings((const char *const[]){ "sfilter-oci-hook", NULL });
	for (; args && *args; args++)
		json_object_array_add(a, json_object_new_string(*args));
	json_object_object_add(h, "args", a);
	json_object_object_add(h, "env", strings(env));
	json_object_object_add(h, "timeout", json_object_new_int(120));
	json_object_array_add(child(child(c, "hooks", json_type_object), stage,
				    json_type_array), h);
	return config_write(b, c);
}

bool oci_write_file(struct oci_bundle *b, const char *name, const char *text,
		    char *out, size_t size)
{
	FILE *f;

	snprintf(out, size, "%s/%s", b->dir, name);
	f = fopen(out, "w");
	if (!ASSERT_TRUE(f != NULL, out))
		return false;
	fputs(text, f);
	return ASSERT_OK(fclose(f), out);
}

pid_t oci_run_start(struct oci_bundle *b)
{
	char state[300], log[300];
	pid_t pid;

	snprintf(state, sizeof(state), "%s/state", b->dir);
	snprintf(log, sizeof(log), "%s/out.txt", b->dir);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR), fd = open(log, O_WRONLY | O_CREAT | O_TRUNC,
							       0644);
		const char *argv[10];
		int n = 0;

		setpgid(0, 0);
		dup2(null, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		argv[n++] = b->runtime;
		argv[n++] = "--root";
		argv[n++] = state;
		argv[n++] = "run";
		if (b->no_pivot)
			argv[n++] = "--no-pivot";
		argv[n++] = "--bundle";
		argv[n++] = b->dir;
		argv[n++] = b->id;
		argv[n] = NULL;
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	return pid;
}

static void read_out(const struct oci_bundle *b, char *out, size_t size)
{
	char log[300];
	FILE *f;
	size_t n = 0;

	snprintf(log, sizeof(log), "%s/out.txt", b->dir);
	f = fopen(log, "r");
	if (f) {
		n = fread(out, 1, size - 1, f);
		fclose(f);
	}
	out[n] = '\0';
}

int oci_run_wait(struct oci_bundle *b, pid_t pid, int timeout_s, char *out, size_t size)
{
	int status = -1, ms = 0;

	while (pid > 0 && waitpid(pid, &status, WNOHANG) == 0) {
		if (ms >= timeout_s * 1000) {
			test_fail(__FILE__, __LINE__, "%s run still running after %d s",
				  b->runtime, timeout_s);
			kill(-pid, SIGKILL);
			waitpid(pid, &status, 0);
			break;
		}
		usleep(20000);
		ms += 20;
	}
	read_out(b, out, size);
	return status;
}

int oci_run(struct oci_bundle *b, int timeout_s, char *out, size_t size)
{
	return oci_run_wait(b, oci_run_start(b), timeout_s, out, size);
}

int oci_exec(struct oci_bundle *b, const char *const *argv, int timeout_s, char *out,
	     size_t size)
{
	const char *av[32];
	char state[300];
	int n = 0;

	snprintf(state, sizeof(state), "%s/state", b->dir);
	av[n++] = b->runtime;
	av[n++] = "--root";
	av[n++] = state;
	av[n++] = "exec";
	av[n++] = b->id;
	for (; *argv && n < 31; argv++)
		av[n++] = *argv;
	av[n] = NULL;
	return sfd_run(av, true, timeout_s, out, size);
}

void oci_bundle_remove(struct oci_bundle *b)
{
	char state[300], cmd[700];
	const char *del[] = { b->runtime, "--root", state, "delete", "--force", b->id, NULL };
	char out[1024];

	if (!b->dir[0])
		return;
	snprintf(state, sizeof(state), "%s/state", b->dir);
	if (b->runtime[0])
		sfd_run(del, true, 30, out, sizeof(out));
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", b->dir);
	if (system(cmd) != 0)
		test_log("could not remove %s\n", b->dir);
	b->dir[0] = '\0';
}
