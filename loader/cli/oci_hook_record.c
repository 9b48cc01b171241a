// SPDX-License-Identifier: GPL-2.0-only
/*
 * io.sfilter.record: a container run with nothing enforced, whose calls
 * become a profile when it stops.
 *
 * At createRuntime the hook attaches a complain filter that would kill
 * every call (so that each is counted, none refused), made the
 * recording's own by a random constant, to the container's cgroup, asks sfilterd to record what that filter judges (SF_MSG_RECORD,
 * from the kernel's counters: every call, whatever the log's budget
 * dropped), and leaves the filter id in the record directory, in
 * ".sfilter-ID.json" (ID: the container's id). At poststop (state
 * "stopped") it takes the recording and writes the profile: the calls
 * seen allowed, anything else refused with EPERM, as
 * `sfctl policy-from-log --format oci` writes one (learned.c); with
 * io.sfilter.record-merge=true, what the file allowed before is allowed
 * still. The file is replaced whole (a new file renamed over it), never
 * followed through a symbolic link, and only ever in the record
 * directory: an annotation is a file name, not a path.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "oci_hook.h"
#include "admin.h"
#include "learned.h"
#include "c2e.h"
#include "grow.h"
#include "sfilter.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <json-c/json.h>
#include <seccomp.h>

/* A container id as a file name: runc's ids are letters, digits and
 * "_+-.", which names none of the hook's own files. */
static void state_name(const char *id, char *out, size_t size)
{
	const char *p;

	for (p = id; p && *p; p++)
		if (!(*p >= 'a' && *p <= 'z') && !(*p >= 'A' && *p <= 'Z') &&
		    !(*p >= '0' && *p <= '9') && !strchr("_+-.", *p))
			break;
	if (!id || !*id || *p || p - id > 128)
		hook_fail("%s: the container's id is not one a file can be named by", ANN_RECORD);
	snprintf(out, size, ".sfilter-%s.json", id);
}

/* The record directory, made (with its parents, mode 0750) when it is not
 * there yet. */
static int open_dir(const char *dir)
{
	int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	char path[PATH_MAX], *p;

	if (fd < 0 && errno == ENOENT && strlen(dir) < sizeof(path)) {
		snprintf(path, sizeof(path), "%s", dir);
		for (p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
			*p = '\0';
			if (mkdir(path, 0750) && errno != EEXIST)
				break;
			*p = '/';
		}
		if (!p && (!mkdir(path, 0750) || errno == EEXIST))
			fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	}

	if (fd < 0)
		hook_fail("%s: the record directory %s: %s", ANN_RECORD, dir, strerror(errno));
	return fd;
}

/* text to name in dir, replacing it whole: a new file renamed over it. */
static void put_file(int dir, const char *dirpath, const char *name, const char *text)
{
	char tmp[300];
	size_t len = strlen(text);
	int fd;

	snprintf(tmp, sizeof(tmp), ".%s.new", name);
	fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len || write(fd, "\n", 1) != 1 ||
	    fsync(fd) || close(fd) || renameat(dir, tmp, dir, name))
		hook_fail("%s: %s/%s: %s", ANN_RECORD, dirpath, name, strerror(errno));
}

void hook_record_start(const char *id, const char *cgroup, const struct oci_ask *ask,
		       const char *dirpath, bool verbose)
{
	/* Identical programs share a filter id, and a recording is a filter's:
	 * a jump to the next instruction on a random constant makes this one
	 * the recording's own. */
	struct sock_filter kill_all[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
	struct hook_policy p = { .insns = kill_all, .len = 3 };
	struct sf_client_reply *rep = malloc(sizeof(*rep));
	struct json_object *o = json_object_new_object();
	char name[200];
	uint32_t filter;
	int dir, r;

	if (!rep || !o)
		hook_fail("%s", strerror(ENOMEM));
	if (getrandom(&kill_all[1].k, sizeof(kill_all[1].k), 0) != sizeof(kill_all[1].k))
		hook_fail("%s: getrandom: %s", ANN_RECORD, strerror(errno));
	state_name(id, name, sizeof(name));
	dir = open_dir(dirpath);
	filter = hook_attach(id, cgroup, &p, SF_FLAG_COMPLAIN | ask->flags, verbose, NULL);
	r = sf_client_record(NULL, SF_RECORD_START, filter, rep);
	if (r < 0)
		hook_fail("%s: sfilterd: %s%s%s", ANN_RECORD, strerror(-r),
			  rep->message[0] ? ": " : "", rep->message);
	json_object_object_add(o, "filter", json_object_new_int64(filter));
	json_object_object_add(o, "name", json_object_new_string(ask->record));
	json_object_object_add(o, "merge", json_object_new_boolean(ask->record_merge));
	put_file(dir, dirpath, name, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	close(dir);
	free(rep);
}

/* libseccomp's token of a profile's architecture name, or 0. */
static uint32_t arch_token(const char *name)
{
	if (!name)
		return 0;
	if (!strcmp(name, "SCMP_ARCH_X86_64"))
		return SCMP_ARCH_X86_64;
	if (!strcmp(name, "SCMP_ARCH_X86"))
		return SCMP_ARCH_X86;
	if (!strcmp(name, "SCMP_ARCH_X32"))
		return SCMP_ARCH_X32;
	return 0;
}

/* What a file of the record directory allowed, as pairs, into *s (n of
 * them, cap room): its architectures' numbers of each name its
 * SCMP_ACT_ALLOW rules list. A file that is not there adds nothing. */
static void add_old(int dir, const char *dirpath, const char *name, struct learned_call **s,
		    size_t *n, size_t *cap)
{
	struct json_object *old, *arches, *rules;
	char *text;
	size_t len, i, k, j;
	int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT)
		return;
	if (fd < 0)
		hook_fail("%s: %s/%s: %s", ANN_RECORD_MERGE, dirpath, name, strerror(errno));
	if (oci_read_fd(fd, OCI_PROFILE_MAX, &text, &len) < 0)
		hook_fail("%s: %s/%s: unreadable", ANN_RECORD_MERGE, dirpath, name);
	close(fd);
	old = json_tokener_parse(text);
	free(text);
	if (!old || !json_object_object_get_ex(old, "architectures", &arches) ||
	    !json_object_object_get_ex(old, "syscalls", &rules) ||
	    !json_object_is_type(arches, json_type_array) ||
	    !json_object_is_type(rules, json_type_array))
		hook_fail("%s: %s/%s: not a profile this hook wrote", ANN_RECORD_MERGE, dirpath,
			  name);
	for (i = 0; i < json_object_array_length(rules); i++) {
		struct json_object *r = json_object_array_get_idx(rules, i), *act, *names;

		if (!json_object_object_get_ex(r, "action", &act) ||
		    strcmp(json_object_get_string(act), "SCMP_ACT_ALLOW") ||
		    !json_object_object_get_ex(r, "names", &names))
			continue;
		for (k = 0; k < json_object_array_length(names); k++)
			for (j = 0; j < json_object_array_length(arches); j++) {
				const char *a = json_object_get_string(
					json_object_array_get_idx(arches, j));
				uint32_t token = arch_token(a);
				int nr;

				if (!token)
					continue;
				nr = seccomp_syscall_resolve_name_arch(token, json_object_get_string(
					json_object_array_get_idx(names, k)));
				if (nr < 0)
					continue;
				if (token == SCMP_ARCH_X32)
					nr |= (int)C2E_X32_SYSCALL_BIT;
				if (C2E_GROW(*s, *cap, *n + 1))
					hook_fail("%s", strerror(ENOMEM));
				(*s)[(*n)++] = (struct learned_call){
					.arch = token == SCMP_ARCH_X86 ? C2E_AUDIT_ARCH_I386 :
						C2E_AUDIT_ARCH_X86_64, .nr = nr };
			}
	}
	json_object_put(old);
}

int hook_record_finish(const char *id, const char *dirpath)
{
	static const char *const arches[] = { "x86_64", "i386", "x32" };
	struct json_object *st, *v, *got, *list;
	struct sf_client_reply *rep;
	struct learned_call *s = NULL;
	size_t n = 0, cap = 0, unnamed, i, a;
	char name[200], *text;
	const char *file;
	uint32_t filter;
	bool merge;
	int dir, fd, r;

	state_name(id, name, sizeof(name));
	dir = open_dir(dirpath);
	fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		close(dir);
		return 0; /* not a recording */
	}
	if (fd < 0 || oci_read_fd(fd, 4096, &text, &i) < 0)
		hook_fail("%s: %s/%s: %s", ANN_RECORD, dirpath, name, strerror(errno));
	close(fd);
	st = json_tokener_parse(text);
	free(text);
	if (!st || !json_object_object_get_ex(st, "filter", &v) ||
	    !(filter = (uint32_t)json_object_get_int64(v)) ||
	    !json_object_object_get_ex(st, "name", &v) || !(file = json_object_get_string(v)))
		hook_fail("%s: %s/%s: not the hook's", ANN_RECORD, dirpath, name);
	merge = json_object_object_get_ex(st, "merge", &v) && json_object_get_boolean(v);
	rep = malloc(sizeof(*rep));
	if (!rep)
		hook_fail("%s", strerror(ENOMEM));
	r = sf_client_record(NULL, SF_RECORD_TAKE, filter, rep);
	if (r < 0)
		hook_fail("%s: sfilterd: %s%s%s", ANN_RECORD, strerror(-r),
			  rep->message[0] ? ": " : "", rep->message);
	got = json_tokener_parse(rep->text);
	for (a = 0; got && a < 3; a++) {
		if (!json_object_object_get_ex(got, "arches", &v) ||
		    !json_object_object_get_ex(v, arches[a], &list))
			continue;
		for (i = 0; i < json_object_array_length(list); i++) {
			int nr = json_object_get_int(json_object_array_get_idx(list, i));

			if (C2E_GROW(s, cap, n + 1))
				hook_fail("%s", strerror(ENOMEM));
			s[n++] = (struct learned_call){ .arch = a == 1 ? C2E_AUDIT_ARCH_I386 :
							     C2E_AUDIT_ARCH_X86_64,
						.nr = a == 2 ? nr | (int)C2E_X32_SYSCALL_BIT : nr };
		}
	}
	if (merge)
		add_old(dir, dirpath, file, &s, &n, &cap);
	v = learned_profile(s, n, SECCOMP_RET_ERRNO | EPERM, &unnamed);
	if (!v)
		hook_fail("%s: %s", ANN_RECORD, strerror(errno));
	put_file(dir, dirpath, file, json_object_to_json_string_ext(v, JSON_C_TO_STRING_PRETTY |
			JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE));
	unlinkat(dir, name, 0);
	json_object_put(v);
	json_object_put(got);
	json_object_put(st);
	free(s);
	free(rep);
	close(dir);
	return 0;
}
