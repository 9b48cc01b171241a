// SPDX-License-Identifier: GPL-2.0-only
/*
 * sf-threads: threads started the way glibc (2.34 and later) starts them:
 * pthread_create() calls clone3(2) first and falls back to clone(2) when
 * clone3 fails with ENOSYS, which is what Docker's default seccomp profile
 * answers for clone3 (moby profiles/seccomp/default.json). A runtime that
 * turns that ERRNO into a kill kills every threaded program.
 *
 * Prints what a bare clone3 got (errno 38, ENOSYS, from such a profile;
 * EINVAL from a kernel that judged it, its size being too small), then
 * how many of its threads ran; exits 0 when all did. Linked statically
 * with glibc (Makefile), so that it runs in a busybox rootfs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/syscall.h>

#define THREADS 4

static void *run(void *ran)
{
	*(int *)ran = 1;
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];
	int ran[THREADS] = { 0 }, n = 0, i;
	long r = syscall(SYS_clone3, NULL, 0);

	printf("clone3: %s %d\n", r < 0 ? "errno" : "returned", r < 0 ? errno : (int)r);
	for (i = 0; i < THREADS; i++) {
		if (pthread_create(&t[i], NULL, run, &ran[i])) {
			perror("pthread_create");
			return 1;
		}
	}
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < THREADS; i++)
		n += ran[i];
	printf("threads: %d of %d ran\n", n, THREADS);
	return n == THREADS ? 0 : 1;
}
