#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Builds the example program of the 2012 proposal (Will Drewry's
# Documentation/prctl/seccomp_filter.txt) from the seed patch itself, byte
# for byte, at test time: the project carries no copy of it.
#
#   tests/seed/build-examples.sh PATCH OUTDIR
#
# OUTDIR gets, for x86-64 (example64*) and, where gcc -m32 links, for i386
# (example32*):
#   exampleNN         the example (x86-64: orig_eax -> orig_rax, ebx -> rdi,
#                     and __NR_sigreturn = __NR_rt_sigreturn, which is all
#                     x86-64 lacks; i386: unmodified)
#   exampleNN-getpid  one extra getpid() after the filter is installed
#   exampleNN-fd3     one extra write to fd 3
# and a file SKIP-NN with the reason for a variant that could not be built
# (no patch, no multilib). Exit status 0 unless the patch exists but the
# example in it cannot be found or the 64-bit build fails.
set -eu

patch=$1
out=$2
mkdir -p "$out"
rm -f "$out"/example* "$out"/SKIP-*

if [ ! -r "$patch" ]; then
	echo "$patch: not readable (the seed patch is not in this checkout's parent)" > "$out/SKIP-64"
	cp "$out/SKIP-64" "$out/SKIP-32"
	exit 0
fi

# The example: from its first #include to the end of main(), without the
# patch's leading '+'.
awk '/^\+#include <asm\/unistd.h>/ { on = 1 }
     on && /^\+int main/ { in_main = 1 }
     in_main && /^\+}$/ { print; exit }
     on { print }' "$patch" | sed 's/^+//' > "$out/example.c"
if ! grep -q 'PR_ATTACH_SECCOMP_FILTER\|prctl(36' "$out/example.c" ||
   ! grep -q '^int main' "$out/example.c"; then
	echo "build-examples: no example program found in $patch" >&2
	exit 1
fi

# variant SRC DST CALL: CALL added in main() after the filter is installed
# (the line after main's "return 1;").
variant() {
	awk -v extra="$3" '{ print } /^int main/ { in_main = 1 }
		in_main && /^\t\treturn 1;$/ && !done { print "\t" extra; done = 1 }' \
		"$1" > "$2"
}

sed -e 's/orig_eax/orig_rax/' -e 's/ebx/rdi/' "$out/example.c" > "$out/example64.c"
variant "$out/example64.c" "$out/example64-getpid.c" 'syscall(__NR_getpid);'
variant "$out/example64.c" "$out/example64-fd3.c" 'syscall(__NR_write, 3, payload("x"));'
variant "$out/example.c" "$out/example32-getpid.c" 'syscall(__NR_getpid);'
variant "$out/example.c" "$out/example32-fd3.c" 'syscall(__NR_write, 3, payload("x"));'
cp "$out/example.c" "$out/example32.c"

# The example declares prctl() and syscall() through <unistd.h> only, as
# C compilers of its day allowed.
cflags="-O2 -std=gnu99 -Wno-implicit-function-declaration"
for v in example64 example64-getpid example64-fd3; do
	${CC:-gcc} $cflags -D__NR_sigreturn=__NR_rt_sigreturn "$out/$v.c" -o "$out/$v"
done
if ! echo 'int main(void){return 0;}' | ${CC:-gcc} -m32 -x c - -o "$out/m32-probe" 2>/dev/null; then
	echo "gcc -m32 cannot link (gcc-multilib, libc6-dev-i386 missing)" > "$out/SKIP-32"
	exit 0
fi
rm -f "$out/m32-probe"
for v in example32 example32-getpid example32-fd3; do
	${CC:-gcc} -m32 $cflags "$out/$v.c" -o "$out/$v"
done
