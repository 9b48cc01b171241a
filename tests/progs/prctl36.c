// SPDX-License-Identifier: GPL-2.0-only
/*
 * sf-prctl36: a program that asks for a 2012-interface filter the way one
 * that never met libsfprctl does (statically linked, or run with
 * LD_PRELOAD removed): prctl(36, &prog) straight to the kernel, which
 * reads option 36 as PR_SET_CHILD_SUBREAPER and, unguarded, returns 0: the
 * program would believe itself confined. Then PR_SET_CHILD_SUBREAPER as
 * its users call it, prctl(36, 1), which must still work.
 * Exit status: 0 when the first call failed with EINVAL and the second
 * worked; 1 when the first returned 0 (unconfined, unaware); 2 for another
 * error of the first; 3 when the second failed. Built with -nostdlib
 * -static (Makefile).
 */
struct sock_filter { unsigned short code; unsigned char jt, jf; unsigned int k; };
struct sock_fprog { unsigned short len; struct sock_filter *filter; };

static long sys2(long nr, long a, long b)
{
	long r;

	__asm__ volatile("syscall" : "=a"(r) : "a"(nr), "D"(a), "S"(b)
			 : "rcx", "r11", "memory");
	return r;
}

static struct sock_filter allow = { 0x06, 0, 0, 0x7fff0000 }; /* RET ALLOW */
static struct sock_fprog prog = { 1, &allow };

__attribute__((noreturn)) void _start(void)
{
	long r = sys2(157 /* prctl */, 36, (long)&prog), code;

	code = r == 0 ? 1 : r != -22 /* EINVAL */ ? 2 :
	       sys2(157, 36 /* PR_SET_CHILD_SUBREAPER */, 1) != 0 ? 3 : 0;
	for (;;)
		__asm__ volatile("syscall" : : "a"(231 /* exit_group */), "D"(code)
				 : "rcx", "r11", "memory");
}
