#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make demo`: sfilterd end to end, on a private socket, log and pin dir.
#   1. confine /bin/sh with demo/policy.s through sfrun: the shell runs,
#      mkdir kills it, and the kill is a JSON line in the log;
#   2. complain mode on a process that is already running (sfctl attach
#      --pid --complain): its would-be denials are logged, nothing is
#      enforced; then record everything (replace with demo/learn.s) and turn
#      the log into a policy (sfctl policy-from-log);
#   3. stop the daemon cleanly and tear down its pinned state.
#
#   demo/demo.sh [path/to/build/classic2ebpf]   (root: it loads BPF programs)
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$(dirname "${1:-$here/../build/classic2ebpf}")" && pwd)
sfilterd=$build/sfilterd sfctl=$build/sfctl sfrun=$build/sfrun
[[ $(id -u) == 0 ]] || { echo "make demo needs root (it loads BPF programs)"; exit 1; }

tmp=$(mktemp -d /tmp/sfilter-demo.XXXXXX)
export SFILTER_SOCKET=$tmp/sfilterd.sock
log=$tmp/events.jsonl pin=/sys/fs/bpf/sfilter-demo-$$
daemon= looper=
cleanup() {
	[[ -n $looper ]] && kill "$looper" 2>/dev/null
	if [[ -n $daemon ]]; then kill -TERM "$daemon" 2>/dev/null; wait "$daemon" 2>/dev/null; fi
	"$sfilterd" --uninstall --pin-dir "$pin" --socket "$SFILTER_SOCKET" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }
say() { printf '\n== %s\n' "$*"; }

say "start sfilterd (private socket, log and pin dir)"
"$sfilterd" --foreground --socket "$SFILTER_SOCKET" --log "$log" --pin-dir "$pin" \
	2>"$tmp/sfilterd.err" &
daemon=$!
for _ in $(seq 100); do [[ -S $SFILTER_SOCKET ]] && break; sleep 0.05; done
[[ -S $SFILTER_SOCKET ]] || { cat "$tmp/sfilterd.err"; exit 1; }
step "$sfctl" status

say "1. a shell confined by demo/policy.s (echo and ls allowed; mkdir is not)"
step "$sfrun" --filter "$here/policy.s" -- /bin/sh -c \
	'echo "hello from a confined shell"; ls / >/dev/null && echo "ls works"; exec mkdir "$0/forbidden"' "$tmp"
echo "exit status $? (137 = SIGKILL); $tmp/forbidden $( [[ -e $tmp/forbidden ]] &&
	echo "exists (tracepoint tier: the kill lands after the syscall ran)" ||
	echo "does not exist")"
sleep 0.3
say "the kill, as the daemon logged it"
grep '"syscall":"mkdir' "$log" | tail -1

say "2. complain mode on a running process"
/bin/sh -c 'while :; do mkdir -p "$0/d"; rmdir "$0/d"; ls "$0" >/dev/null; sleep 0.2; done' "$tmp" &
looper=$!
sleep 0.2
out=$("$sfctl" --json attach --pid "$looper" --all-threads --complain --filter "$here/policy.s")
rc=$?
echo "$out" | grep -E '"(message|filter)"'
id=$(echo "$out" | sed -n 's/.*"filter": *\([0-9]*\).*/\1/p' | head -1)
if [[ $rc == 0 && -n $id ]]; then
	sleep 1
	step "$sfctl" show "$looper"
	say "would-be denials (the process is still running: $(kill -0 $looper 2>/dev/null && echo yes || echo no))"
	"$sfctl" log | grep '"taken":"complain"' | grep -E '"syscall":"(mkdir|rmdir)' | head -3
	say "record every syscall: replace filter $id with demo/learn.s (complain stays)"
	step "$sfctl" replace "$id" --filter "$here/learn.s"
	sleep 1.5
	step "$sfctl" policy-from-log --pid "$looper" -o "$tmp/learned"
	head -12 "$tmp/learned.s"; echo "   ..."
	step "$build/classic2ebpf" check "$tmp/learned.bpf"
	step "$sfctl" detach "$id"
else
	echo "(complain mode unavailable here: see the message above)"
fi
kill "$looper" 2>/dev/null; wait "$looper" 2>/dev/null; looper=

say "3. stop sfilterd"
kill -TERM "$daemon"; wait "$daemon"; echo "sfilterd exited with status $?"; daemon=
tail -1 "$log"
