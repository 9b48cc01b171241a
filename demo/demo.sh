#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# `make demo`: sfilterd end to end, on a private socket, log and pin dir.
#   1. confine /bin/sh with demo/policy.s through sfrun: the shell runs,
#      mkdir kills it, and the kill is a JSON line in the log;
#   2. complain mode on a process that is already running (sfctl attach
#      --pid --complain): its would-be denials are logged, nothing is
#      enforced; then record everything (replace with demo/learn.s) and turn
#      the log into a policy (sfctl policy-from-log);
#   3. stop the daemon cleanly and tear down its pinned state.
# Where no bpf filesystem is mounted, sfilterd mounts one and says so.
#
#   demo/demo.sh [path/to/build/classic2ebpf]   (root: it loads BPF programs)
#
# POSIX sh: the suite runs it under busybox ash in the 6.1 guest as well as
# under dash (tests/test_demo.c). Exits 1 when a step did not show what it
# should, so that a broken demo fails `make test`.
set -u

here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$(dirname "${1:-$here/../build/classic2ebpf}")" && pwd)
sfilterd=$build/sfilterd sfctl=$build/sfctl sfrun=$build/sfrun
[ "$(id -u)" = 0 ] || { echo "make demo needs root (it loads BPF programs)"; exit 1; }

tmp=$(mktemp -d /tmp/sfilter-demo.XXXXXX) || exit 1
SFILTER_SOCKET=$tmp/sfilterd.sock
export SFILTER_SOCKET
log=$tmp/events.jsonl pin=/sys/fs/bpf/sfilter-demo-$$
daemon= looper= failed=0
cleanup() {
	[ -n "$looper" ] && kill "$looper" 2>/dev/null
	if [ -n "$daemon" ]; then kill -TERM "$daemon" 2>/dev/null; wait "$daemon" 2>/dev/null; fi
	[ -e "$pin" ] && "$sfilterd" --uninstall --pin-dir "$pin" --socket "$SFILTER_SOCKET" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
# dash and ash run the EXIT trap on exit, not on a deadly signal.
trap 'exit 130' INT TERM

bold= plain=
if [ -t 1 ]; then bold=$(printf '\033[1m') plain=$(printf '\033[0m'); fi
step() { printf '\n%s$ %s%s\n' "$bold" "$*" "$plain"; "$@"; }
say() { printf '\n== %s\n' "$*"; }
fail() { echo "demo: FAILED: $*"; failed=$((failed + 1)); }
# wait_for SECONDS COMMAND...: until COMMAND succeeds. The limits are for
# the emulated guest, where everything is 10-50 times slower.
wait_for() {
	n=$(($1 * 10))
	shift
	while [ "$n" -gt 0 ]; do
		"$@" && return 0
		sleep 0.1
		n=$((n - 1))
	done
	"$@"
}
up_or_gone() { [ -S "$SFILTER_SOCKET" ] || ! kill -0 "$daemon" 2>/dev/null; }
killed_logged() { grep '"syscall":"mkdir"' "$log" 2>/dev/null | grep -q '"taken":"killed"'; }
complained() {
	"$sfctl" log | grep '"taken":"complain"' | grep -Eq '"syscall":"(mkdir|rmdir)"'
}
# wait4 is allowed by policy.s: logged once learn.s is in its place.
learning() { "$sfctl" log | grep "\"pid\":$looper," | grep -q '"syscall":"wait4"'; }

say "start sfilterd (private socket, log and pin dir $pin)"
"$sfilterd" --foreground --socket "$SFILTER_SOCKET" --log "$log" --pin-dir "$pin" \
	2>"$tmp/sfilterd.err" &
daemon=$!
wait_for 300 up_or_gone
if [ ! -S "$SFILTER_SOCKET" ]; then
	cat "$tmp/sfilterd.err"
	wait "$daemon"
	echo "sfilterd exited with status $?"
	daemon=
	exit 1
fi
step "$sfctl" status || fail "sfctl status"
say "what sfilterd said on stderr"
cat "$tmp/sfilterd.err"

say "1. a shell confined by demo/policy.s (echo and ls allowed; mkdir is not)"
step "$sfrun" --filter "$here/policy.s" -- /bin/sh -c \
	'echo "hello from a confined shell"; ls / >/dev/null && echo "ls works"; exec mkdir "$0/forbidden"' "$tmp"
rc=$?
if [ -e "$tmp/forbidden" ]; then
	what="exists (tracepoint tier: the kill lands after the syscall ran)"
else
	what="does not exist"
fi
echo "exit status $rc (137 = SIGKILL); $tmp/forbidden $what"
[ "$rc" = 137 ] || fail "the confined shell exited with status $rc, not 137"
say "the kill, as the daemon logged it"
wait_for 60 killed_logged || fail "no kill of mkdir in the daemon's log"
grep '"syscall":"mkdir"' "$log" | tail -1

say "2. complain mode on a running process"
/bin/sh -c 'while :; do mkdir -p "$0/d"; rmdir "$0/d"; ls "$0" >/dev/null; sleep 0.2; done' "$tmp" &
looper=$!
sleep 0.2
out=$("$sfctl" --json attach --pid "$looper" --tsync --complain --filter "$here/policy.s")
rc=$?
echo "$out" | grep -E '"(message|filter)"'
id=$(echo "$out" | sed -n 's/.*"filter": *\([0-9]*\).*/\1/p' | head -1)
if [ "$rc" = 0 ] && [ -n "$id" ]; then
	wait_for 60 complained || fail "no would-be denial logged in complain mode"
	step "$sfctl" show "$looper" || fail "sfctl show"
	alive=no
	kill -0 "$looper" 2>/dev/null && alive=yes
	say "would-be denials (the process is still running: $alive)"
	[ "$alive" = yes ] || fail "the process in complain mode is gone"
	"$sfctl" log | grep '"taken":"complain"' | grep -E '"syscall":"(mkdir|rmdir)' | head -3
	say "record every syscall: replace filter $id with demo/learn.s (complain stays)"
	step "$sfctl" replace "$id" --filter "$here/learn.s" || fail "sfctl replace"
	wait_for 60 learning || fail "no event recorded through demo/learn.s"
	sleep 1
	step "$sfctl" policy-from-log --pid "$looper" -o "$tmp/learned" || fail "sfctl policy-from-log"
	head -12 "$tmp/learned.s"
	echo "   ..."
	step "$build/classic2ebpf" check "$tmp/learned.bpf" || fail "the learned policy is not valid"
	step "$sfctl" detach "$id" || fail "sfctl detach"
else
	fail "sfctl attach --complain (exit status $rc)"
fi
kill "$looper" 2>/dev/null
wait "$looper" 2>/dev/null
looper=

say "3. stop sfilterd, then tear down its pinned state"
kill -TERM "$daemon"
wait "$daemon"
rc=$?
daemon=
echo "sfilterd exited with status $rc"
[ "$rc" = 0 ] || fail "sfilterd exited with status $rc on SIGTERM"
tail -1 "$log"
step "$sfilterd" --uninstall --pin-dir "$pin" --socket "$SFILTER_SOCKET" ||
	fail "sfilterd --uninstall"
[ -e "$pin" ] && fail "$pin is still there after --uninstall"

if [ "$failed" != 0 ]; then
	echo
	echo "demo: $failed step(s) did not show what they should (see FAILED above)"
	exit 1
fi
exit 0
