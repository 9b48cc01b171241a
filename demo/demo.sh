#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make demo`: the translator on demo/example.s, a small x86_64 allowlist.
# Checks it the way seccomp(2) would, lists the classic program next to the
# eBPF it becomes, and runs a few syscalls through both the kernel (the
# translation loaded and run with BPF_PROG_TEST_RUN) and the reference
# interpreter, which must agree.
#
#   demo/demo.sh [path/to/classic2ebpf]
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
c2e=${1:-$here/../build/classic2ebpf}
filter=$here/example.s
rel=${filter#"$PWD"/}

step() { printf '\n$ %s\n' "$*"; "$@"; }

echo "== the filter ($rel)"
cat "$filter"

echo
echo "== check, dump"
step "$c2e" check "$rel"
step "$c2e" dump "$rel"

echo
echo "== run: syscall -> kernel verdict | interpreter verdict"
disagree=0
while read -r what nr arch; do
	k=$("$c2e" run "$rel" --nr "$nr" --arch "$arch" --engine kernel)
	i=$("$c2e" run "$rel" --nr "$nr" --arch "$arch" --engine interp)
	mark=
	[[ $k == "$i" ]] || { mark="  <-- engines disagree"; disagree=1; }
	printf '  %-26s %-24s | %s%s\n' "$what" "$k" "$i" "$mark"
done <<'INPUTS'
getpid(x86_64)             39  x86_64
write(x86_64)              1   x86_64
exit_group(x86_64)         231 x86_64
open(x86_64)               2   x86_64
ptrace(x86_64)             101 x86_64
getpid(i386)               20  i386
INPUTS
exit "$disagree"
