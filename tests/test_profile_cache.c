// SPDX-License-Identifier: GPL-2.0-only
/*
 * sfilterd's compiled profiles (rulecache.c), through PROFILE requests
 * and STATUS's "profile_cache": a profile is compiled once for one text,
 * caps set and reading, and again when any of them differs; a hit is
 * still held to the filter's program; a user keeps at most 8, and another
 * user's requests push out none of them. And PROFILE's early answer
 * (SF_PROFILE_EARLY): given before the compile, a failure said in the
 * daemon's log.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "daemon.h"
#include "profile.h"
#include "admin.h"

#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <json-c/json.h>

/* PROFILE requests and their checks, whatever the tier enforces. */
SFD_TIER_INDEPENDENT

#define LOGGED_P "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[" \
	"{\"names\":[\"getppid\"],\"action\":\"SCMP_ACT_LOG\"}]}"
#define OTHER_P "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[" \
	"{\"names\":[\"getppid\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":1}]}"

/* A child that waits, with LOGGED_P's program attached to it by an admin:
 * the filter's id, 0 on failure. */
static uint32_t attach_logged(const struct sfd *dm, pid_t *child)
{
	struct sf_profile_opts opts = { .caps = "none" };
	struct sf_client_reply *rep = malloc(sizeof(*rep));
	struct sf_profile_error err;
	struct sf_profile p;
	uint32_t id = 0;
	int pidfd, r;

	if (!ASSERT_OK_PTR(rep, "malloc") ||
	    !ASSERT_OK(sf_profile_compile(LOGGED_P, strlen(LOGGED_P), &opts, &p, &err), err.msg))
		goto out;
	fflush(stdout);
	*child = fork();
	if (*child == 0) {
		pause();
		_exit(0);
	}
	pidfd = (int)syscall(SYS_pidfd_open, *child, 0);
	r = sf_client_admin_attach(dm->sock, *child, pidfd, NULL, p.insns, p.len, 0, rep);
	if (ASSERT_OK(r, rep->message))
		id = rep->filter;
	close(pidfd);
	sf_profile_free(&p);
out:
	free(rep);
	return id;
}

static void end_child(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

/* STATUS's profile_cache.KEY, or -1. */
static long long cache_stat(const struct sfd *dm, const char *key)
{
	static char text[65536];
	struct json_object *o, *c, *v;
	long long n = -1;

	if (sfd_status(dm, text) != 0 || !(o = json_tokener_parse(text)))
		return -1;
	if (json_object_object_get_ex(o, "profile_cache", &c) &&
	    json_object_object_get_ex(c, key, &v))
		n = json_object_get_int64(v);
	json_object_put(o);
	return n;
}

/* PROFILE of text for filter id: the request's return. */
static int give(const struct sfd *dm, uint32_t id, const char *caps, uint32_t flags,
		const char *text)
{
	struct sf_client_reply *rep = malloc(sizeof(*rep));
	int r = rep ? sf_client_profile(dm->sock, id, caps, flags, text, strlen(text), rep) :
		      -ENOMEM;

	if (rep && r)
		test_log("PROFILE %u: %s\n", id, rep->message);
	free(rep);
	return r;
}

/* LOGGED_P with n blanks after it: the same profile, another text. */
static const char *spaced(char *buf, size_t size, int n)
{
	snprintf(buf, size, "%s%*s", LOGGED_P, n, "");
	return buf;
}

TEST(the_daemon_compiles_a_profile_once_per_text_caps_and_reading)
{
	pid_t child = -1;
	uint32_t id;
	SFD_AUTO;

	if (!sfd_start_for_users(&dm, NULL) || !(id = attach_logged(&dm, &child)))
		goto out;
	ASSERT_EQ(give(&dm, id, "none", 0, LOGGED_P), 0, "the filter's profile is taken");
	ASSERT_EQ(give(&dm, id, "none", 0, LOGGED_P), 0, "and again");
	ASSERT_EQ(cache_stat(&dm, "misses"), 1, "compiled once");
	ASSERT_EQ(cache_stat(&dm, "hits"), 1, "then found");
	/* "0x0" is the set "none" names: the compile judges sets, not words. */
	ASSERT_EQ(give(&dm, id, "0x0", 0, LOGGED_P), 0, "caps 0x0");
	ASSERT_EQ(cache_stat(&dm, "hits"), 2, "caps 0x0 is caps none");
	ASSERT_EQ(give(&dm, id, "all", 0, LOGGED_P), 0, "caps all");
	ASSERT_EQ(give(&dm, id, "none", SF_PROFILE_LENIENT, LOGGED_P), 0, "lenient");
	ASSERT_EQ(give(&dm, id, "none", 0, LOGGED_P " "), 0, "a blank more");
	ASSERT_EQ(cache_stat(&dm, "misses"), 4, "other caps, reading or text: compiled again");
	ASSERT_EQ(cache_stat(&dm, "entries"), 4, "each kept");
	/* A profile found is held to the filter's program as one compiled. */
	ASSERT_EQ(give(&dm, id, "none", 0, OTHER_P), -EINVAL, "another profile is refused");
	ASSERT_EQ(give(&dm, id, "none", 0, OTHER_P), -EINVAL, "and refused when found");
	ASSERT_EQ(cache_stat(&dm, "hits"), 3, "the second one found");
out:
	end_child(child);
}

TEST(the_daemon_keeps_at_most_8_profiles_per_user_and_another_user_pushes_out_none)
{
	char buf[256];
	pid_t child = -1, user;
	uint32_t id;
	int i, st;
	SFD_AUTO;

	if (!sfd_start_for_users(&dm, NULL) || !(id = attach_logged(&dm, &child)))
		goto out;
	for (i = 0; i < 10; i++)
		if (!ASSERT_EQ(give(&dm, id, "none", 0, spaced(buf, sizeof(buf), i)), 0, buf))
			goto out;
	ASSERT_EQ(cache_stat(&dm, "entries"), 8, "root's 10 profiles: 8 kept");
	ASSERT_EQ(give(&dm, id, "none", 0, spaced(buf, sizeof(buf), 9)), 0, "the last again");
	ASSERT_EQ(cache_stat(&dm, "hits"), 1, "the last is kept");
	ASSERT_EQ(give(&dm, id, "none", 0, spaced(buf, sizeof(buf), 0)), 0, "the first again");
	ASSERT_EQ(cache_stat(&dm, "misses"), 11, "the first was pushed out");
	/* Another user: four profiles for its next filter (filter 0). */
	fflush(stdout);
	user = fork();
	if (user == 0) {
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(2);
		for (i = 20; i < 24; i++)
			if (give(&dm, 0, "none", 0, spaced(buf, sizeof(buf), i)))
				_exit(3);
		_exit(0);
	}
	ASSERT_TRUE(user > 0 && waitpid(user, &st, 0) == user && WIFEXITED(st) &&
		    WEXITSTATUS(st) == 0, "uid 65534's four profiles taken");
	ASSERT_EQ(cache_stat(&dm, "entries"), 12, "kept beside root's 8");
	for (i = 3; i <= 10; i++)
		give(&dm, id, "none", 0, spaced(buf, sizeof(buf), i % 10));
	ASSERT_EQ(cache_stat(&dm, "misses"), 15, "root's 8 all found (uid 65534's 4 compiled)");
out:
	end_child(child);
}

TEST(an_early_answered_profile_that_fails_is_said_in_the_daemons_log)
{
	pid_t child = -1;
	uint32_t id;
	SFD_AUTO;

	if (!sfd_start_for_users(&dm, NULL) || !(id = attach_logged(&dm, &child)))
		goto out;
	ASSERT_EQ(give(&dm, id, "none", SF_PROFILE_EARLY, OTHER_P), 0,
		  "answered before the compile");
	ASSERT_TRUE(sfd_log_wait(&dm, "\"sfilterd\":\"profile\""), "a line in the log");
	ASSERT_TRUE(sfd_file_has(dm.log, "compiles to another program"), "saying why");
	ASSERT_EQ(give(&dm, id, "none", SF_PROFILE_EARLY, LOGGED_P), 0, "the filter's own");
	ASSERT_EQ(sfd_log_count(&dm, "\"sfilterd\":\"profile\""), 1, "taken, said nowhere");
	/* What is checked before the answer still refuses. */
	ASSERT_EQ(give(&dm, id + 100, "none", SF_PROFILE_EARLY, LOGGED_P), -ENOENT,
		  "a filter that is not there");
	ASSERT_EQ(give(&dm, 0, "none", SF_PROFILE_EARLY, LOGGED_P), -EINVAL,
		  "filter 0 (the next attach) is answered after its compile only");
out:
	end_child(child);
}
