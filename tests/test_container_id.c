// SPDX-License-Identifier: GPL-2.0-only
/*
 * The container column of sfctl ps and show.
 *
 * - sf_container_id() (loader/proto/container_id.c) reads the id docker,
 *   crictl and podman show from /proc/PID/cgroup texts of the shapes each
 *   runtime makes: docker's cgroupfs and systemd drivers, the kubelet's
 *   (containerd, CRI-O), podman's; conmon's scopes beside a container are
 *   not it; on a hybrid host the v1 lines stand in for a v2 line that names
 *   none; only 64 lowercase hex digits are an id.
 * - End to end: a process in a cgroup named docker-<id>.scope, confined by
 *   sfctl attach --pid, is listed by sfctl --json ps with its container's
 *   whole id, and by sfctl ps with the id's first 12 digits under
 *   CONTAINER; a process in no container has no "container" field and "-".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "daemon.h"
#include "cgroup.h"
#include "c2e.h"
#include "container_id.h"

#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <linux/seccomp.h>
#include <sys/stat.h>
#include <sys/wait.h>

SFD_TIER_INDEPENDENT

#define DOCKER "d548c5b83fa61d8e3bd86ad42a7ffea9b7c86e3f9d8095c1577d3e1270bb9420"
#define CRI    "3dd15efbff4406c10bdd4d3a5bdf9a0ef3e28e8598cad6250d8fbb589c059af5"
#define CRIO   "c64064614423cb790e88b3e5492ff5ccf673b25ae823089f7a60c65cda24d809"
#define PODMAN "2f259bab93aaaaa2542ba43ef33eb990d0999ee1b9924b557b7be53c0b7a1bb9"
#define OUTER  "560e3e12b1e0dafa161e62fb3327ad65c98b7cd53849b17c627e8d3e1d419d6a"
#define INNER  "33bf6fbd7cd8379785a21e233d8e09f824e7bab459168a96312c1c882c1d7e1f"
/* The kubelet's pod slices: the pod's uid, systemd-escaped. */
#define POD_SLICE "/kubepods.slice/kubepods-burstable.slice/" \
		  "kubepods-burstable-pod6b1f0f7e_2c5a_4f57_9a43_c1d2e3f4a5b6.slice"

static const struct {
	const char *name, *text, *want; /* want NULL: no container */
} cases[] = {
	{ "docker, cgroupfs driver, v1",
	  "12:pids:/docker/" DOCKER "\n10:rdma:/\n4:memory:/docker/" DOCKER "\n"
	  "1:name=systemd:/docker/" DOCKER "\n", DOCKER },
	{ "docker, systemd driver, v2", "0::/system.slice/docker-" DOCKER ".scope\n", DOCKER },
	{ "containerd, kubelet systemd driver, v2",
	  "0::" POD_SLICE "/cri-containerd-" CRI ".scope\n", CRI },
	{ "containerd, kubelet cgroupfs driver",
	  "0::/kubepods/burstable/pod6b1f0f7e-2c5a-4f57-9a43-c1d2e3f4a5b6/" CRI "\n", CRI },
	{ "containerd, systemd driver, no kubelet",
	  "0::/system.slice/containerd-" CRI ".scope\n", CRI },
	{ "cri-o, kubelet systemd driver", "0::" POD_SLICE "/crio-" CRIO ".scope\n", CRIO },
	{ "cri-o's conmon beside it", "0::" POD_SLICE "/crio-conmon-" CRIO ".scope\n", NULL },
	{ "cri-o's conmon, cgroupfs driver",
	  "0::/kubepods/burstable/pod6b1f0f7e-2c5a-4f57-9a43-c1d2e3f4a5b6/crio-conmon-" CRIO "\n",
	  NULL },
	{ "podman, crun's sub-cgroup",
	  "0::/machine.slice/libpod-" PODMAN ".scope/container\n", PODMAN },
	{ "podman's conmon beside it", "0::/machine.slice/libpod-conmon-" PODMAN ".scope\n", NULL },
	{ "rootless podman",
	  "0::/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" PODMAN ".scope\n",
	  PODMAN },
	{ "hybrid: v2 at the root, name=systemd names it",
	  "11:cpu,cpuacct:/\n1:name=systemd:/system.slice/docker-" DOCKER ".scope\n0::/\n", DOCKER },
	{ "hybrid: v2 names the shim's unit",
	  "12:net_cls,net_prio:/docker/" DOCKER "\n1:name=systemd:/docker/" DOCKER "\n"
	  "0::/system.slice/containerd.service\n", DOCKER },
	{ "hybrid: name=systemd before the other v1 lines",
	  "4:memory:/docker/" OUTER "\n1:name=systemd:/docker/" INNER "\n0::/\n", INNER },
	{ "hybrid: name=systemd at the root, a controller names it",
	  "4:memory:/docker/" DOCKER "\n1:name=systemd:/\n0::/\n", DOCKER },
	{ "v2 before v1", "1:name=systemd:/docker/" OUTER "\n0::/docker/" DOCKER "\n", DOCKER },
	{ "nested (minikube): the innermost",
	  "0::/docker/" OUTER POD_SLICE "/crio-" INNER ".scope\n", INNER },
	{ "a sub-cgroup below the container",
	  "0::/kubepods/besteffort/pod6b1f0f7e-2c5a-4f57-9a43-c1d2e3f4a5b6/" CRI "/kube-proxy\n",
	  CRI },
	{ "runc's slice:prefix:name taken as a path",
	  "5:pids:/system.slice/containerd.service/kubepods-besteffort-"
	  "pod6b1f0f7e_2c5a_4f57_9a43_c1d2e3f4a5b6.slice:cri-containerd:" CRI "\n", CRI },
	{ "no newline at the end", "0::/docker/" DOCKER, DOCKER },
	{ "a login session", "0::/user.slice/user-1000.slice/session-3.scope\n", NULL },
	{ "a service", "0::/system.slice/containerd.service\n", NULL },
	{ "the root", "0::/\n", NULL },
	{ "63 hex digits",
	  "0::/docker/d548c5b83fa61d8e3bd86ad42a7ffea9b7c86e3f9d8095c1577d3e1270bb942\n", NULL },
	{ "65 hex digits", "0::/docker/" DOCKER "0\n", NULL },
	{ "uppercase hex",
	  "0::/docker/D548C5B83FA61D8E3BD86AD42A7FFEA9B7C86E3F9D8095C1577D3E1270BB9420\n", NULL },
	{ "an unknown runtime's prefix", "0::/machine.slice/lxc-" DOCKER ".scope\n", NULL },
	{ "a prefix and nothing", "0::/system.slice/docker-.scope\n", NULL },
	{ "empty", "", NULL },
	{ "not a cgroup file", "garbage\n:\n0:/docker/" DOCKER "\n", NULL },
};

TEST(container_id_from_proc_cgroup)
{
	char id[SF_CONTAINER_ID_LEN + 1];
	size_t i;
	bool found;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(id, 'x', sizeof(id));
		found = sf_container_id(cases[i].text, id);
		ASSERT_EQ(found, cases[i].want != NULL, cases[i].name);
		ASSERT_STREQ(id, cases[i].want ? cases[i].want : "", cases[i].name);
	}
}

/* ---- end to end --------------------------------------------------------- */

#define E2E_ID "8a1e4b7c2d9f03e6b5a47c18d2e9f0a3b6c4d7e1f8a2b5c9d0e3f6a1b4c7d8e2"

static const struct sock_filter allow_all[] = {
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

/* A child that waits until hold's write end closes. */
static pid_t holder(int hold[2])
{
	pid_t pid;
	char c;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(hold[1]);
		while (read(hold[0], &c, 1) > 0)
			;
		_exit(0);
	}
	return pid;
}

/* sfctl ARGS... against dm's socket: its exit status (0 ok), stdout in out. */
static int sfctl_run(const char *sfctl, const struct sfd *dm, const char *a, const char *b,
		     const char *c, const char *d, const char *e, char *out, size_t size)
{
	const char *argv[] = { sfctl, "--socket", dm->sock, a, b, c, d, e, NULL };
	int st = sfd_run(argv, true, test_is_emulated() ? 120 : 30, out, size);

	test_log("sfctl %s %s %s %s %s -> 0x%x:\n%s", a, b ? b : "", c ? c : "", d ? d : "",
		 e ? e : "", st, out);
	return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* What the daemon should say of pid's container: the parser's reading of
 * its cgroup file, into want ("" for none; the suite may itself run in a
 * container). */
static void expected_container(pid_t pid, char want[SF_CONTAINER_ID_LEN + 1])
{
	char path[64], text[16384];
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, text, sizeof(text) - 1);
		close(fd);
	}
	text[n > 0 ? n : 0] = '\0';
	sf_container_id(text, want);
}

/* The "container" of pid's task in sfctl --json ps's output ("" when the
 * field is absent, NULL when pid is not listed). */
static const char *json_container(struct json_object *ps, pid_t pid)
{
	struct json_object *tasks, *t, *v;
	size_t i;

	if (!json_object_object_get_ex(ps, "tasks", &tasks))
		return NULL;
	for (i = 0; i < json_object_array_length(tasks); i++) {
		t = json_object_array_get_idx(tasks, i);
		if (json_object_object_get_ex(t, "tgid", &v) && json_object_get_int(v) == pid)
			return json_object_object_get_ex(t, "container", &v) ?
			       json_object_get_string(v) : "";
	}
	return NULL;
}

/* The column under CONTAINER in pid's line of sfctl ps's table, into col;
 * false when the header or the line is missing. */
static bool text_container(const char *table, pid_t pid, char *col, size_t size)
{
	const char *hdr = strstr(table, "CONTAINER"), *line;
	size_t at, len;
	int tid, tgid;

	if (!hdr)
		return false;
	at = (size_t)(hdr - table);
	for (line = strchr(table, '\n'); line; line = strchr(line, '\n')) {
		line++;
		if (sscanf(line, "%d %d", &tid, &tgid) != 2 || tgid != pid)
			continue;
		if (strlen(line) <= at)
			return false;
		len = strcspn(line + at, " \n");
		snprintf(col, size, "%.*s", (int)len, line + at);
		return true;
	}
	return false;
}

/* pid's container as sfctl --json ps and sfctl ps show it, against want. */
static void check_listed(const char *json, const char *table, pid_t pid, const char *want,
			 const char *who)
{
	struct json_object *ps = json_tokener_parse(json);
	char col[80] = "", short_id[13];
	const char *got = json_container(ps, pid);

	test_log("%s (pid %d): want \"%s\"\n", who, pid, want);
	ASSERT_TRUE(got != NULL, "sfctl --json ps lists it");
	ASSERT_STREQ(got, want, "--json: the whole id, or no field");
	snprintf(short_id, sizeof(short_id), "%s", *want ? want : "-");
	ASSERT_TRUE(text_container(table, pid, col, sizeof(col)),
		    "sfctl ps: a row, its id under CONTAINER");
	ASSERT_STREQ(col, short_id, "sfctl ps: the first 12 digits, or -");
	json_object_put(ps);
}

TEST(container_of_a_confined_task_in_sfctl_ps)
{
	static char json[1 << 16], table[1 << 16];
	char sfctl[PATH_MAX], top[512], leaf[640], file[160], pid_s[2][16];
	char want[SF_CONTAINER_ID_LEN + 1];
	int hold[2], st, i;
	pid_t kids[2] = { 0, 0 };
	SFD_AUTO;

	if (!test_need_root("sfctl attach --pid, cgroups"))
		return;
	if (!sfd_need_bin("sfctl", "SF_SFCTL", sfctl, sizeof(sfctl)))
		return;
	if (!sfd_start_sfilterd(&dm, false) || !tcg_make(top, sizeof(top), "sfilter-container"))
		return;
	snprintf(leaf, sizeof(leaf), "%s/docker-%s.scope", top, E2E_ID);
	snprintf(file, sizeof(file), "%s/allow.bpf", dm.dir);
	if (!ASSERT_OK(mkdir(leaf, 0755) ? -errno : 0, "mkdir docker-<id>.scope") ||
	    !ASSERT_OK(c2e_save_raw(file, allow_all, 1), "save filter") ||
	    !ASSERT_OK(pipe(hold), "pipe"))
		goto out;
	for (i = 0; i < 2; i++) {
		kids[i] = holder(hold);
		snprintf(pid_s[i], sizeof(pid_s[i]), "%d", kids[i]);
	}
	close(hold[0]);
	if (!ASSERT_TRUE(kids[0] > 0 && kids[1] > 0, "fork") ||
	    !ASSERT_TRUE(tcg_move(leaf, kids[0]), "the first child into docker-<id>.scope"))
		goto release;
	for (i = 0; i < 2; i++)
		ASSERT_EQ(sfctl_run(sfctl, &dm, "attach", "--pid", pid_s[i], "--filter", file,
				    json, sizeof(json)), 0, "sfctl attach --pid");
	ASSERT_EQ(sfctl_run(sfctl, &dm, "--json", "ps", NULL, NULL, NULL, json, sizeof(json)), 0,
		  "sfctl --json ps");
	ASSERT_EQ(sfctl_run(sfctl, &dm, "ps", NULL, NULL, NULL, NULL, table, sizeof(table)), 0,
		  "sfctl ps");
	check_listed(json, table, kids[0], E2E_ID, "in docker-<id>.scope");
	expected_container(kids[1], want);
	check_listed(json, table, kids[1], want, "in the suite's own cgroup");
release:
	close(hold[1]);
	for (i = 0; i < 2; i++)
		if (kids[i] > 0)
			waitpid(kids[i], &st, 0);
out:
	rmdir(leaf);
	rmdir(top);
}
