// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The 2012 proposal's ABI: the two user_regs_struct layouts an RFC filter
 * reads, their field names, and its verdict rule (return the data's size
 * to allow). The layouts are written out here rather than taken from
 * <sys/user.h> because the i386 one must be known on an x86-64 build, and
 * the test of the seed builds its own i386 struct to check these offsets.
 */
#include "c2e.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

/* glibc <sys/user.h> struct user_regs_struct, x86-64: 27 x 8 bytes. */
static const char *const x86_64_regs[] = {
	"r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8",
	"rax", "rcx", "rdx", "rsi", "rdi", "orig_rax", "rip", "cs", "eflags",
	"rsp", "ss", "fs_base", "gs_base", "ds", "es", "fs", "gs",
};

/* The same struct on i386: 17 x 4 bytes. */
static const char *const i386_regs[] = {
	"ebx", "ecx", "edx", "esi", "edi", "ebp", "eax", "xds", "xes", "xfs",
	"xgs", "orig_eax", "eip", "xcs", "eflags", "esp", "xss",
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

_Static_assert(ARRAY_SIZE(x86_64_regs) * 8 == C2E_RFC_X86_64_SIZE,
	       "x86-64 user_regs_struct is 27 x 8 bytes");
_Static_assert(ARRAY_SIZE(i386_regs) * 4 == C2E_RFC_I386_SIZE,
	       "i386 user_regs_struct is 17 x 4 bytes");

static const struct {
	const char *name;
	size_t size;
	const char *const *regs;
	unsigned int reg_size;
} abis[] = {
	[C2E_ABI_SECCOMP] = { "seccomp", C2E_DATA_SIZE, NULL, 0 },
	[C2E_ABI_RFC_X86_64] = { "rfc2012", C2E_RFC_X86_64_SIZE, x86_64_regs, 8 },
	[C2E_ABI_RFC_I386] = { "rfc2012-i386", C2E_RFC_I386_SIZE, i386_regs, 4 },
};

static bool known(enum c2e_abi abi)
{
	return (unsigned int)abi < ARRAY_SIZE(abis);
}

size_t c2e_abi_data_size(enum c2e_abi abi)
{
	return known(abi) ? abis[abi].size : 0;
}

const char *c2e_abi_name(enum c2e_abi abi)
{
	return known(abi) ? abis[abi].name : NULL;
}

int c2e_abi_parse(const char *name, enum c2e_abi *abi)
{
	unsigned int i;

	if (!strcasecmp(name, "rfc2012-x86_64")) {
		*abi = C2E_ABI_RFC_X86_64;
		return 0;
	}
	for (i = 0; i < ARRAY_SIZE(abis); i++) {
		if (!strcasecmp(name, abis[i].name)) {
			*abi = i;
			return 0;
		}
	}
	return -EINVAL;
}

uint32_t c2e_rfc_verdict(enum c2e_abi abi, uint32_t raw)
{
	if (abi == C2E_ABI_SECCOMP)
		return raw;
	/* The proposal: "To allow a system call, the size of the data must
	 * be returned. At present, all other return values result in the
	 * system call being blocked." */
	return raw == c2e_abi_data_size(abi) ? SECCOMP_RET_ALLOW :
	       SECCOMP_RET_KILL_PROCESS;
}

int c2e_rfc_reg_offset(enum c2e_abi abi, const char *name)
{
	size_t i, n;

	if (!known(abi) || !abis[abi].regs)
		return -ENOENT;
	n = abis[abi].size / abis[abi].reg_size;
	for (i = 0; i < n; i++)
		if (!strcasecmp(name, abis[abi].regs[i]))
			return i * abis[abi].reg_size;
	return -ENOENT;
}

const char *c2e_rfc_reg_name(enum c2e_abi abi, unsigned int off)
{
	if (!known(abi) || !abis[abi].regs || off % abis[abi].reg_size ||
	    off >= abis[abi].size)
		return NULL;
	return abis[abi].regs[off / abis[abi].reg_size];
}

int c2e_rfc_nr_offset(enum c2e_abi abi)
{
	return c2e_rfc_reg_offset(abi, abi == C2E_ABI_RFC_I386 ? "orig_eax" :
					       "orig_rax");
}
