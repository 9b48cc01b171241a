// SPDX-License-Identifier: GPL-2.0-only
/*
 * Podman, for real: the rootful Podman of the distribution, all of its
 * state in a temporary directory (tests/lib/engine_podman.h), runs the
 * project's hooks.d file from --hooks-dir, and so sfilter-oci-hook, on
 * containers annotated io.sfilter.profile; passes a profile's gate
 * (sfctl compile --gate) on to runc with its listenerPath; and runs the
 * DaemonSet's image (make image) as the DaemonSet runs it: its init
 * container's script (the manifest's own) installs the hook, the hooks.d
 * file and the profiles on a stand-in node directory, and its sfilterd
 * confines processes of the host and, through that installed hook, other
 * containers. What a user of Podman sees is what is
 * checked: the workload's output, `podman run`'s exit status (137 for a
 * workload the filter killed, 126 or 127 for a container whose hook
 * failed, by the words of the hook's line), and
 * that nothing is left when Podman is done.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "daemon.h"
#include "engine_podman.h"
#include "victim.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <json-c/json.h>

#define BUSYBOX "localhost/sftest-busybox:latest"

#define DENY_SYNC \
	"{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"sync\"], " \
	"\"action\": \"SCMP_ACT_KILL_PROCESS\"}]}\n"
#define BROKEN \
	"{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"uname\"], " \
	"\"action\": \"SCMP_ACT_NOPE\"}]}\n"
#define DENY_GETGID \
	"{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"getgid\"], " \
	"\"action\": \"SCMP_ACT_KILL_PROCESS\"}]}\n"
#define ERRNO_MKDIR \
	"{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"mkdir\", " \
	"\"mkdirat\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 13}]}\n"

static bool exited(int st, int code)
{
	return st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == code;
}

/* dir/name of text; its path into out. */
static bool put_file(const char *dir, const char *name, const char *text, char *out,
		     size_t size)
{
	FILE *f;

	snprintf(out, size, "%s/%s", dir, name);
	f = fopen(out, "w");
	if (!ASSERT_TRUE(f != NULL, out))
		return false;
	fputs(text, f);
	return ASSERT_OK(fclose(f), out);
}

/* p->dir/name made; its path into out. */
static bool subdir(const struct podman *p, const char *name, char *out, size_t size)
{
	snprintf(out, size, "%s/%s", p->dir, name);
	return ASSERT_OK(mkdir(out, 0755) && errno != EEXIST ? -errno : 0, out);
}

/* After podman_begin(): sfilterd, the profiles (dir/profiles:
 * deny-sync.json, deny-getgid.json, broken.json, errno-mkdir.json), the hooks.d file naming
 * sock (NULL: sfilterd's), and the busybox image. false with a SKIP or a
 * FAIL. */
static bool setup(struct podman *p, struct sfd *dm, const char *sock, char *profiles,
		  size_t size)
{
	char hook[PATH_MAX], path[PATH_MAX];

	if (!sock && !sfd_start_sfilterd(dm, false))
		return false;
	if (!sfd_find_bin("sfilter-oci-hook", "SF_OCI_HOOK", hook, sizeof(hook))) {
		test_fail(__FILE__, __LINE__, "no sfilter-oci-hook beside the test runner");
		return false;
	}
	return subdir(p, "profiles", profiles, size) &&
	       put_file(profiles, "deny-sync.json", DENY_SYNC, path, sizeof(path)) &&
	       put_file(profiles, "deny-getgid.json", DENY_GETGID, path, sizeof(path)) &&
	       put_file(profiles, "broken.json", BROKEN, path, sizeof(path)) &&
	       put_file(profiles, "errno-mkdir.json", ERRNO_MKDIR, path, sizeof(path)) &&
	       podman_hooks_d(p, hook, profiles, sock ? sock : dm->sock) &&
	       podman_import_busybox(p, BUSYBOX);
}

static int count(const char *s, const char *needle)
{
	int n = 0;

	for (; (s = strstr(s, needle)); s++)
		n++;
	return n;
}

TEST(podman_runs_the_hook_from_hooks_d_on_annotated_containers_and_leaves_others_alone)
{
	static const char *const echo_ok[] = { "sh", "-c", "echo ok", NULL };
	static const char *const do_sync[] = { "sync", NULL };
	static const char *const mark[] = { "sh", "-c", "touch /sync/ran; echo ran", NULL };
	SFD_AUTO;
	PODMAN_AUTO;
	char profiles[128], sync_dir[128], vol[300], ran[160], attached[96];
	int st;

	if (!podman_begin(&pm) || !setup(&pm, &dm, NULL, profiles, sizeof(profiles)) ||
	    !subdir(&pm, "sync", sync_dir, sizeof(sync_dir)))
		return;
	snprintf(vol, sizeof(vol), "%s:/sync", sync_dir);

	test_log("-- an allowed command runs, confined by the container's cgroup\n");
	st = podman_run(&pm, (const char *const[]){ "--rm", "--annotation",
		"io.sfilter.profile=deny-sync.json", NULL }, BUSYBOX, echo_ok);
	if (ASSERT_TRUE(exited(st, 0), "podman run of echo ok exits 0"))
		ASSERT_TRUE(strstr(pm.out, "ok\n") != NULL, "the workload printed ok");
	/* sfilterd's line for the hook's attach names the container's cgroup,
	 * under the test's --cgroup-parent: Podman ran the hook. */
	snprintf(attached, sizeof(attached), "%.60s\\/libpod-", pm.cgroup + 1);
	ASSERT_TRUE(sfd_log_wait(&dm, attached), "the hook attached the container's cgroup");

	test_log("-- a denied call: 137, what the tracepoint tier gives without the gate\n");
	st = podman_run(&pm, (const char *const[]){ "--rm", "--annotation",
		"io.sfilter.profile=deny-sync.json", NULL }, BUSYBOX, do_sync);
	ASSERT_TRUE(exited(st, 137), "podman run reports 137 for the denied sync");
	ASSERT_TRUE(sfd_log_wait(&dm, "\"syscall\":\"sync\""), "the kill is in sfilterd's log");

	test_log("-- a broken profile stops the container before it starts\n");
	st = podman_run(&pm, (const char *const[]){ "--rm", "-v", vol, "--annotation",
		"io.sfilter.profile=broken.json", NULL }, BUSYBOX, mark);
	ASSERT_FALSE(exited(st, 0), "podman run fails");
	ASSERT_EQ(count(pm.out, "sfilter-oci-hook: "), 1, "one line of the hook's");
	ASSERT_TRUE(strstr(pm.out, "broken.json: syscalls[0].action") != NULL,
		    "it names the profile and where it is wrong");
	snprintf(ran, sizeof(ran), "%s/ran", sync_dir);
	ASSERT_TRUE(access(ran, F_OK) != 0, "the workload never ran");
	st = podman_do(&pm, (const char *const[]){ "ps", "--all", "--quiet", NULL });
	ASSERT_TRUE(exited(st, 0) && pm.out[0] == '\0', "no container is left");

	test_log("-- a missing profile stops it too\n");
	st = podman_run(&pm, (const char *const[]){ "--rm", "-v", vol, "--annotation",
		"io.sfilter.profile=missing.json", NULL }, BUSYBOX, mark);
	ASSERT_FALSE(exited(st, 0), "podman run fails");
	ASSERT_EQ(count(pm.out, "sfilter-oci-hook: "), 1, "one line of the hook's");
	ASSERT_TRUE(strstr(pm.out, "missing.json") != NULL, "it names the profile");
	ASSERT_TRUE(access(ran, F_OK) != 0, "the workload never ran");

	test_log("-- a container without the annotation is left alone\n");
	st = podman_run(&pm, (const char *const[]){ "--rm", NULL }, BUSYBOX, do_sync);
	ASSERT_TRUE(exited(st, 0), "sync runs in a container that asks for no profile");
}

/* linux.seccomp.listenerPath of the container's config.json, as Podman
 * wrote it for runc, into out ("" when there is none). */
static bool listener_path(struct podman *p, const char *name, char *out, size_t size)
{
	struct json_object *c, *o;
	char path[PATH_MAX];
	int st;

	out[0] = '\0';
	st = podman_do(p, (const char *const[]){ "inspect", "--format", "{{.OCIConfigPath}}",
		name, NULL });
	if (!ASSERT_TRUE(exited(st, 0), "podman inspect"))
		return false;
	snprintf(path, sizeof(path), "%.*s", (int)strcspn(p->out, "\n"), p->out);
	c = json_object_from_file(path);
	if (!ASSERT_TRUE(c != NULL, "the container's config.json"))
		return false;
	if (json_object_object_get_ex(c, "linux", &o) && json_object_object_get_ex(o, "seccomp", &o) &&
	    json_object_object_get_ex(o, "listenerPath", &o))
		snprintf(out, size, "%s", json_object_get_string(o));
	json_object_put(c);
	return true;
}

TEST(podman_passes_the_gates_listener_path_on_so_a_denied_call_gets_the_profiles_errno)
{
	static const char *const mk[] = { "sh", "-c", "mkdir /sync/made; echo status $?", NULL };
	SFD_AUTO;
	PODMAN_AUTO;
	char profiles[128], sync_dir[128], vol[300], sfctl[PATH_MAX], prof[256], gate[160],
		opt[200], agent[200], have[200], made[160], out[4096];
	int st;

	if (!podman_begin(&pm) || !setup(&pm, &dm, NULL, profiles, sizeof(profiles)) ||
	    !subdir(&pm, "sync", sync_dir, sizeof(sync_dir)))
		return;
	if (!sfd_find_bin("sfctl", "SF_SFCTL", sfctl, sizeof(sfctl))) {
		test_fail(__FILE__, __LINE__, "no sfctl beside the test runner");
		return;
	}
	snprintf(prof, sizeof(prof), "%s/errno-mkdir.json", profiles);
	snprintf(gate, sizeof(gate), "%s/gate.json", pm.dir);
	st = sfd_run((const char *const[]){ sfctl, "--socket", dm.sock, "compile", "--profile",
		prof, "--gate", "-o", gate, NULL }, true, 60, out, sizeof(out));
	if (!ASSERT_TRUE(exited(st, 0), "sfctl compile --gate"))
		return;
	snprintf(vol, sizeof(vol), "%s:/sync", sync_dir);
	snprintf(opt, sizeof(opt), "seccomp=%s", gate);
	st = podman_do(&pm, (const char *const[]){ "create", "--name", "gated", "--network", "none",
		"--cgroup-parent", pm.cgroup, "-v", vol, "--annotation",
		"io.sfilter.profile=errno-mkdir.json", "--security-opt", opt, BUSYBOX, mk[0], mk[1],
		mk[2], NULL });
	if (!ASSERT_TRUE(exited(st, 0), "podman create with the gate as its seccomp profile"))
		return;
	/* podman init writes config.json (and runs runc create, the hook
	 * with it): what Podman made of the profile, before anything runs. */
	st = podman_do(&pm, (const char *const[]){ "init", "gated", NULL });
	if (!ASSERT_TRUE(exited(st, 0), "podman init") ||
	    !listener_path(&pm, "gated", have, sizeof(have)))
		return;
	snprintf(agent, sizeof(agent), "%s.agent", dm.sock);
	if (!have[0]) {
		test_skip("this Podman drops listenerPath from --security-opt seccomp= "
			  "(none in the container's config.json)");
		return;
	}
	ASSERT_STREQ(have, agent, "config.json's listenerPath is sfilterd's agent socket");
	st = podman_do(&pm, (const char *const[]){ "start", "--attach", "gated", NULL });
	ASSERT_TRUE(exited(st, 0), "the gated workload is not killed");
	ASSERT_TRUE(strstr(pm.out, "status 1") != NULL, "mkdir failed");
	ASSERT_TRUE(strstr(pm.out, "Permission denied") != NULL, "with EACCES, the profile's errno");
	snprintf(made, sizeof(made), "%s/made", sync_dir);
	ASSERT_TRUE(access(made, F_OK) != 0, "the directory was never made");
	ASSERT_TRUE(sfd_log_wait(&dm, "\"tier\":\"gate\""), "the refusal is logged as the gate's");
}

/* The image's name from `podman load`'s "Loaded image: NAME". */
static bool load_image(struct podman *p, const char *archive, char *name, size_t size)
{
	const char *l;
	int st = podman_do(p, (const char *const[]){ "load", "--input", archive, NULL });

	if (!ASSERT_TRUE(exited(st, 0), "podman load of the image archive"))
		return false;
	l = strstr(p->out, "Loaded image: ");
	if (!ASSERT_TRUE(l != NULL, "podman load names the image"))
		return false;
	l += strlen("Loaded image: ");
	snprintf(name, size, "%.*s", (int)strcspn(l, "\n"), l);
	return true;
}

/* The sizes the report gives, and the version label against the tag. */
static void image_facts(struct podman *p, const char *archive, const char *name)
{
	const char *tag = strrchr(name, ':');
	struct stat st;
	int s;

	s = podman_do(p, (const char *const[]){ "image", "inspect", "--format",
		"{{.Size}} {{index .Labels \"org.opencontainers.image.version\"}}", name, NULL });
	if (ASSERT_TRUE(exited(s, 0), "podman image inspect") && tag)
		ASSERT_TRUE(strstr(p->out, tag + 1) != NULL, "the version label is the tag's");
	if (stat(archive, &st) == 0)
		test_log("image %s: %.*s bytes unpacked (Size), archive %lld bytes\n", name,
			 (int)strcspn(p->out, " "), p->out, (long long)st.st_size);
}

/* Waits for sfilterd in the container to answer on sock. */
static bool answers(const char *sock)
{
	int i, fd;

	for (i = 0; i < 1500; i++) {
		if (access(sock, F_OK) == 0 && (fd = sfd_connect(sock)) >= 0) {
			close(fd);
			return true;
		}
		usleep(20000);
	}
	return false;
}

struct ds {
	char bpf[128], run[128], sock[160], profiles[200], image[128];
	char nofile[48], v_bpf[200], v_run[200], v_prof[240];
	char node[128];         /* stands for the node's / in the init container */
};

/* `podman run -d` of the image as the DaemonSet's sfilterd container: the
 * same command, privileged, the host's pids, the manifest's mounts at the
 * manifest's paths; a private bpffs in place of the host's /sys/fs/bpf
 * (the pins go to its sfilter/, the manifest's default pin directory) and
 * a temporary directory in place of /run/sfilter. */
static bool ds_start(struct podman *p, struct ds *d)
{
	static const char *const cmd[] = { "/usr/local/bin/sfilterd", "--foreground", "--log", "-",
					   NULL };
	struct rlimit rl;
	int st;

	getrlimit(RLIMIT_NOFILE, &rl);
	/* As many descriptors as this machine allows: at 1024, sfilterd
	 * serves one connection at a time. A --ulimit replaces every default
	 * one: nproc again. */
	snprintf(d->nofile, sizeof(d->nofile), "nofile=%llu:%llu",
		 (unsigned long long)rl.rlim_max, (unsigned long long)rl.rlim_max);
	snprintf(d->v_bpf, sizeof(d->v_bpf), "%s:/sys/fs/bpf:rshared", d->bpf);
	snprintf(d->v_run, sizeof(d->v_run), "%s:/run/sfilter", d->run);
	snprintf(d->v_prof, sizeof(d->v_prof), "%s:/etc/sfilter/profiles:ro", d->profiles);
	st = podman_run(p, (const char *const[]){ "--detach", "--name", "sfilterd", "--privileged",
		"--pid", "host", "--ulimit", d->nofile, "--ulimit", "nproc=1024:1024",
		"-v", d->v_bpf,
		"-v", "/sys/kernel/security:/sys/kernel/security:ro",
		"-v", "/sys/kernel/btf:/sys/kernel/btf:ro",
		"-v", d->v_run,
		"-v", "/sys/fs/cgroup:/sys/fs/cgroup:ro",
		"-v", d->v_prof, NULL }, d->image, cmd);
	if (!ASSERT_TRUE(exited(st, 0), "podman run -d of the DaemonSet's sfilterd"))
		return false;
	if (answers(d->sock))
		return true;
	podman_do(p, (const char *const[]){ "logs", "sfilterd", NULL });
	test_fail(__FILE__, __LINE__, "sfilterd in the container does not answer on %s", d->sock);
	return false;
}

/* `podman exec sfilterd argv...`: its wait status. */
static int ds_exec(struct podman *p, const char *const *argv)
{
	const char *args[16] = { "exec", "sfilterd" };
	size_t n = 2;

	for (; *argv && n < 15; argv++)
		args[n++] = *argv;
	args[n] = NULL;
	return podman_do(p, args);
}

/* Waits for the container's log (sfilterd's stdout) to hold needle. */
static bool ds_log_has(struct podman *p, const char *needle)
{
	int i;

	for (i = 0; i < 50; i++) {
		podman_do(p, (const char *const[]){ "logs", "sfilterd", NULL });
		if (strstr(p->out, needle))
			return true;
		usleep(100000);
	}
	return false;
}

/* Whether the files at a and b hold the same bytes. */
static bool same_bytes(const char *a, const char *b)
{
	char ba[65536], bb[65536];
	FILE *fa = fopen(a, "r"), *fb = fopen(b, "r");
	size_t na, nb;
	bool same = fa && fb;

	while (same) {
		na = fread(ba, 1, sizeof(ba), fa);
		nb = fread(bb, 1, sizeof(bb), fb);
		same = na == nb && !memcmp(ba, bb, na);
		if (!na)
			break;
	}
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return same;
}

/* Whether dir holds a file whose name starts with a dot (a half-done copy
 * of the init script's). */
static bool has_dot_file(const char *dir)
{
	char cmd[300], out[256];
	int st;

	snprintf(cmd, sizeof(cmd), "%s", dir);
	st = sfd_run((const char *const[]){ "/bin/ls", "-A", cmd, NULL }, true, 30, out,
		     sizeof(out));
	return st != 0 || out[0] == '.' || strstr(out, "\n.");
}

/* The DaemonSet's init container, its script taken from the manifest
 * (tests/check-dist.py --init-script): the image's hook, the hooks.d file
 * and the ConfigMap's profiles (here dir/profiles) go onto the "node"
 * (dir/node), each where the manifest's hostPath volumes put them. Then
 * the sfilterd container reads the node's profiles, and the hooks.d file
 * names the hook the init container installed, as on a node. */
static bool ds_install(struct podman *p, struct ds *d)
{
	static const char *const dirs[] = { "usr/local/bin", "etc/containers/oci/hooks.d",
					    "etc/sfilter/profiles", NULL };
	char script[8192], v[3][300], cm[240], path[300], want[300];
	char hook[200], hooks_d[200], profiles[200];
	struct json_object *a, *b;
	const char *argv[] = { "/bin/sh", "-ec", script, NULL };
	size_t i;
	int st;

	if (!podman_staged("sfilter-init.sh", "SF_INIT_SH", script, sizeof(script)))
		return false;
	snprintf(d->node, sizeof(d->node), "%s/node", p->dir);
	for (i = 0; dirs[i]; i++) {
		snprintf(path, sizeof(path), "mkdir -p '%s/%s'", d->node, dirs[i]);
		if (!ASSERT_OK(system(path), path))
			return false;
		snprintf(v[i], sizeof(v[i]), "%s/%s:/host/%s", d->node, dirs[i], dirs[i]);
	}
	snprintf(cm, sizeof(cm), "%s:/profiles:ro", d->profiles);
	st = podman_run(p, (const char *const[]){ "--rm", "-v", v[0], "-v", v[1], "-v", v[2],
		"-v", cm, NULL }, d->image, argv);
	if (!ASSERT_TRUE(exited(st, 0), "the init container's script exits 0"))
		return false;
	snprintf(hook, sizeof(hook), "%.120s/usr/local/bin/sfilter-oci-hook", d->node);
	snprintf(hooks_d, sizeof(hooks_d), "%.120s/etc/containers/oci/hooks.d", d->node);
	snprintf(profiles, sizeof(profiles), "%.120s/etc/sfilter/profiles", d->node);
	st = podman_do(p, (const char *const[]){ "image", "mount", d->image, NULL });
	if (ASSERT_TRUE(exited(st, 0), "podman image mount")) {
		snprintf(path, sizeof(path), "%.*s/usr/local/bin/sfilter-oci-hook",
			 (int)strcspn(p->out, "\n"), p->out);
		ASSERT_TRUE(access(hook, X_OK) == 0 && same_bytes(hook, path),
			    "the hook on the node is the image's");
		podman_do(p, (const char *const[]){ "image", "unmount", d->image, NULL });
	}
	snprintf(path, sizeof(path), "%s/deny-sync.json", profiles);
	snprintf(want, sizeof(want), "%s/deny-sync.json", d->profiles);
	ASSERT_TRUE(same_bytes(path, want), "the ConfigMap's profiles are on the node");
	/* The manifest's copy of the hooks.d file against the image's, both
	 * made from dist/oci-hooks.d/sfilter.json. */
	st = podman_run(p, (const char *const[]){ "--rm", NULL }, d->image, (const char *const[]){
		"cat", "/usr/local/share/sfilter/oci-hooks.d/sfilter.json", NULL });
	snprintf(path, sizeof(path), "%s/sfilter.json", hooks_d);
	a = json_object_from_file(path);
	b = exited(st, 0) ? json_tokener_parse(p->out) : NULL;
	ASSERT_TRUE(a && b && json_object_equal(a, b),
		    "the hooks.d file on the node is the one the image carries");
	json_object_put(a);
	json_object_put(b);
	for (i = 0; dirs[i]; i++) {
		snprintf(path, sizeof(path), "%s/%s", d->node, dirs[i]);
		ASSERT_FALSE(has_dot_file(path), "no half-done copy is left");
	}
	snprintf(d->profiles, sizeof(d->profiles), "%s", profiles);
	return podman_hooks_d(p, hook, profiles, d->sock);
}

/* A process of the host (the test's victim, outside any container)
 * confined through the container's sfilterd, as `kubectl exec ... sfctl
 * attach` does: a getgid its child makes is judged and killed (the child
 * inherits the filter; the process itself goes on), then the filter is
 * detached, and the process lives on, its children's getgid running. */
static void confine_and_release(struct podman *p, struct victim *v)
{
	char pid[16], id[16];
	const char *a;
	int st;

	snprintf(pid, sizeof(pid), "%d", (int)v->pid);
	ASSERT_EQ(victim_child_do(v, 'C'), 1, "before: its child's getgid runs");
	st = ds_exec(p, (const char *const[]){ "sfctl", "attach", "--pid", pid, "--profile",
		"/etc/sfilter/profiles/deny-getgid.json", NULL });
	a = strstr(p->out, "filter ");
	if (!ASSERT_TRUE(exited(st, 0) && a, "sfctl attach --pid of a host process, in the pod"))
		return;
	snprintf(id, sizeof(id), "%.*s", (int)strspn(a + 7, "0123456789"), a + 7);
	ASSERT_EQ(victim_child_do(v, 'C'), 0, "confined: its child's getgid is judged and killed");
	ASSERT_EQ(victim_do(v, 'A'), 1, "and the process lives on, its getppid allowed");
	ASSERT_TRUE(ds_log_has(p, "\"syscall\":\"getgid\""), "the kill is in the pod's log");
	st = ds_exec(p, (const char *const[]){ "sfctl", "detach", id, NULL });
	ASSERT_TRUE(exited(st, 0), "sfctl detach");
	ASSERT_EQ(victim_do(v, 'C'), 1, "released: it lives on, its own getgid runs");
	ASSERT_EQ(victim_child_do(v, 'C'), 1, "and so does its child's");
}

/* The hook on the host reaching the container's sfilterd through the
 * socket's directory, as the DaemonSet's hook does: sfilterd attaches the
 * container's cgroup by its host path, under the read-only /sys/fs/cgroup. */
static void hook_through_the_pod(struct podman *p)
{
	static const char *const do_sync[] = { "sync", NULL };
	int st = podman_run(p, (const char *const[]){ "--rm", "--annotation",
		"io.sfilter.profile=deny-sync.json", NULL }, BUSYBOX, do_sync);

	ASSERT_TRUE(exited(st, 137), "a container annotated deny-sync.json: its sync exits 137");
}

/* podman stop: sfilterd exits 0 on SIGTERM, and an annotated container
 * then never starts; the image's own `sfilterd --uninstall` tears the pins
 * down, as on a node that drops sfilter. */
static void ds_stop(struct podman *p, struct ds *d)
{
	static const char *const uninstall[] = { "sfilterd", "--uninstall", NULL };
	char pins[160];
	int st;

	st = podman_do(p, (const char *const[]){ "stop", "--time", "10", "sfilterd", NULL });
	ASSERT_TRUE(exited(st, 0), "podman stop");
	st = podman_do(p, (const char *const[]){ "inspect", "--format", "{{.State.ExitCode}}",
		"sfilterd", NULL });
	ASSERT_TRUE(exited(st, 0) && !strcmp(p->out, "0\n"), "sfilterd exited 0 on SIGTERM");
	ASSERT_TRUE(ds_log_has(p, "\"sfilterd\":\"stop\""), "its stop line is logged");
	/* As between a rolling update's old pod and its new one. */
	st = podman_run(p, (const char *const[]){ "--rm", "--annotation",
		"io.sfilter.profile=deny-sync.json", NULL }, BUSYBOX,
		(const char *const[]){ "echo", "ran", NULL });
	ASSERT_FALSE(exited(st, 0), "with sfilterd stopped, an annotated container fails");
	ASSERT_TRUE(strstr(p->out, "sfilter-oci-hook: ") && !strstr(p->out, "ran\n"),
		    "the hook says why, and the workload never ran");
	snprintf(d->v_bpf, sizeof(d->v_bpf), "%s:/sys/fs/bpf", d->bpf);
	st = podman_run(p, (const char *const[]){ "--rm", "--privileged", "-v", d->v_bpf,
		"-v", d->v_run, NULL }, d->image, uninstall);
	ASSERT_TRUE(exited(st, 0), "sfilterd --uninstall from the image");
	snprintf(pins, sizeof(pins), "%s/sfilter", d->bpf);
	ASSERT_TRUE(access(pins, F_OK) != 0, "no pins are left");
}

TEST(podman_runs_the_daemonset_image_whose_sfilterd_confines_and_releases_a_host_process)
{
	SFD_AUTO;
	PODMAN_AUTO;
	struct victim v __attribute__((cleanup(victim_end))) = { 0 };
	struct ds d = { 0 };
	char archive[PATH_MAX], pinned[160];
	bool host_pins = access("/sys/fs/bpf/sfilter", F_OK) == 0;

	if (!podman_begin(&pm))
		return;
	if (!sfd_find_file("sfilter-image.tar", "SF_IMAGE", archive, sizeof(archive))) {
		test_skip("no sfilter-image.tar beside the runner's directory: make image "
			  "(needs buildah)");
		return;
	}
	if (!subdir(&pm, "bpf", d.bpf, sizeof(d.bpf)) ||
	    !subdir(&pm, "run", d.run, sizeof(d.run)))
		return;
	snprintf(d.sock, sizeof(d.sock), "%s/sfilterd.sock", d.run);
	/* Its own instance: nothing the container pins is the host's. */
	if (!ASSERT_OK(mount("bpf", d.bpf, "bpf", 0, NULL), "mount a private bpffs") ||
	    !ASSERT_OK(mount(NULL, d.bpf, NULL, MS_SHARED, NULL), "shared, for rshared"))
		return;
	if (!setup(&pm, &dm, d.sock, d.profiles, sizeof(d.profiles)) ||
	    !load_image(&pm, archive, d.image, sizeof(d.image)))
		goto out;
	image_facts(&pm, archive, d.image);
	test_log("-- the init container installs the hook, the hooks.d file, the profiles\n");
	if (!ds_install(&pm, &d) || !ds_start(&pm, &d))
		goto out;
	test_log("-- the readiness probe: sfctl status answers, pinned in the private bpffs\n");
	ASSERT_TRUE(exited(ds_exec(&pm, (const char *const[]){ "/usr/local/bin/sfctl", "status",
		NULL }), 0), "sfctl status in the container exits 0");
	snprintf(pinned, sizeof(pinned), "%s/sfilter", d.bpf);
	ASSERT_TRUE(access(pinned, F_OK) == 0, "the pins are in the private bpffs");
	test_log("-- a host process confined, judged and released\n");
	if (ASSERT_TRUE(victim_start(&v), "start the host process"))
		confine_and_release(&pm, &v);
	test_log("-- the hook the init container installed reaches the pod's sfilterd\n");
	hook_through_the_pod(&pm);
	ds_stop(&pm, &d);
out:
	podman_do(&pm, (const char *const[]){ "rm", "--all", "--force", NULL });
	umount2(d.bpf, MNT_DETACH);
	ASSERT_EQ(access("/sys/fs/bpf/sfilter", F_OK) == 0, host_pins,
		  "the host's /sys/fs/bpf/sfilter is as it was");
}
