// SPDX-License-Identifier: GPL-2.0-only
/*
 * sf-first-call: an image whose first system call is getppid(), with no C
 * library to make others before it. Exits with the errno getppid()
 * returned (0 when it succeeded), so that a filter which fails getppid()
 * with a chosen errno shows that it judged the image's very first call.
 * Built with -nostdlib -static (Makefile).
 */
static long sys0(long nr)
{
	long r;

	__asm__ volatile("syscall" : "=a"(r) : "a"(nr) : "rcx", "r11", "memory");
	return r;
}

__attribute__((noreturn)) void _start(void)
{
	long r = sys0(110 /* getppid */);
	long code = r < 0 ? -r : 0;

	for (;;)
		__asm__ volatile("syscall" : : "a"(231 /* exit_group */), "D"(code)
				 : "rcx", "r11", "memory");
}
