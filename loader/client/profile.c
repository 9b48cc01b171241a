// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * sf_attach_profile(): a container seccomp profile (OCI linux.seccomp,
 * moby's or Podman's seccomp.json) compiled by libsfprofile and attached
 * by sf_attach(). Its caps conditions are judged against the calling
 * thread's effective set: the thread that receives the filter.
 * Kept out of libsfprctl (the interposer has no use for JSON).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sfclient.h"
#include "profile.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define SF_EXPORT __attribute__((visibility("default")))

_Static_assert(SF_PROFILE_FLAG_TSYNC == SF_ATTACH_TSYNC &&
	       SF_PROFILE_FLAG_LOG == SF_ATTACH_LOG,
	       "a profile's flags are seccomp(2)'s, as sf_attach()'s low bits");

/* sfclient.c's sf_last_error() buffer: a profile that does not compile
 * fails here, before sf_attach(), and says why there. */
char *sf_client_error_buf(size_t *size);

SF_EXPORT int sf_attach_profile(const char *path, unsigned int flags)
{
	struct sf_profile_opts opts = { .caps_pid = 0 };
	struct sf_profile_error err;
	struct sf_profile p;
	struct sock_fprog prog;
	size_t size;
	char *buf;
	int r, e;

	if (!path) {
		buf = sf_client_error_buf(&size);
		snprintf(buf, size, "path is NULL");
		errno = EFAULT;
		return -1;
	}
	r = sf_profile_compile_file(path, &opts, &p, &err);
	if (r < 0) {
		buf = sf_client_error_buf(&size);
		snprintf(buf, size, "%s: %s", path, err.msg);
		errno = -r;
		return -1;
	}
	prog.len = (unsigned short)p.len;
	prog.filter = p.insns;
	r = sf_attach(&prog, flags | p.flags);
	e = errno;
	sf_profile_free(&p);
	errno = e;
	return r;
}
