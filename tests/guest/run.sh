#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Runs a static binary inside Debian's 6.1 cloud kernel under qemu (TCG: KVM
# hangs on these machines) and exits with the binary's exit status.
#
#   tests/guest/run.sh [options] BINARY [ARGS...]
#
#   -f SRC[:DEST]   also put file SRC into the guest at DEST (default
#                   /sf/BASENAME); repeatable. A dynamically linked SRC
#                   brings its shared libraries (ldd) at the same paths
#   -e VAR=VALUE    set an environment variable for BINARY; repeatable
#   -t SECONDS      give up after SECONDS (default $SF_GUEST_TIMEOUT or 2100)
#
# The binary runs as root in /tmp with proc, sysfs, devtmpfs, bpffs,
# securityfs, tracefs, debugfs, cgroup2 and a tmpfs /tmp mounted, and
# SF_EMULATED=1 set. Its output (stdout and stderr, through the serial
# console) streams to stdout as it comes; one "guest: kernel ..., lsm=..."
# line goes to stderr. The whole console is kept in $SF_GUEST_LOG (default
# build/guest/console.log).
#
# Exit status: the binary's, or 124 when the time ran out, or 125 when the
# guest never reported an exit status (did not boot, or the binary crashed
# the kernel); these two also print a "guest: ..." line on stderr.
#
# A soft lockup panics the guest (the run ends at once, status 125, with the
# last console lines) rather than stalling until the timeout. The console
# shows kernel warnings (loglevel 5: a lockup's backtrace, a WARN), not
# notices; SF_GUEST_APPEND adds kernel parameters.
#
# SF_GUEST_SHELL=1 gives an interactive busybox shell instead of running
# BINARY (which is still copied to /sf).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
dir=${SF_GUEST_DIR:-$root/build/guest}
# make test has 40 minutes: the build takes up to 5, and the guest runs
# beside the host's part (tests/run-all.sh), so it may take the rest.
timeout_s=${SF_GUEST_TIMEOUT:-2100}
log=${SF_GUEST_LOG:-$dir/console.log}
files=()
envs=()

usage() {
	sed -n '5,14p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

while getopts "f:e:t:h" opt; do
	case $opt in
	f) files+=("$OPTARG") ;;
	e) envs+=("$OPTARG") ;;
	t) timeout_s=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[[ $# -ge 1 ]] || usage
bin=$1
shift
[[ -f $bin && -x $bin ]] || { echo "guest: $bin: not an executable file" >&2; exit 2; }
if readelf -lW "$bin" 2>/dev/null | grep -q 'Requesting program interpreter'; then
	echo "guest: $bin is dynamically linked; the guest has no shared libraries (link with -static)" >&2
	exit 2
fi

vmlinuz=$("$here/kernel.sh")
mkdir -p "$dir" "$(dirname "$log")"
work=$(mktemp -d "$dir/work.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Single quotes survive any argument in a POSIX shell.
quote() {
	local s=${1//\'/\'\\\'\'}
	printf "'%s'" "$s"
}

# --- the initramfs -----------------------------------------------------------
rootfs=$work/root
mkdir -p "$rootfs"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,run,etc,sf}
cp /bin/busybox "$rootfs/bin/busybox"
for applet in $(/bin/busybox --list-full); do
	[[ -e $rootfs/$applet ]] || ln -s /bin/busybox "$rootfs/$applet"
done
# The kernel opens /dev/console for init before devtmpfs is mounted.
mknod -m 600 "$rootfs/dev/console" c 5 1 2>/dev/null || true
mknod -m 666 "$rootfs/dev/null" c 1 3 2>/dev/null || true
install -m 755 "$here/init" "$rootfs/init"
name=$(basename "$bin")
install -m 755 "$bin" "$rootfs/sf/$name"
# A dynamically linked extra file (the ASan build of sfilterd, the seed
# examples, the interposer) brings its
# shared libraries and the loader, at the host's paths. BINARY itself must
# be static: the guest is for the kernel, not for our libraries.
# A 32-bit file (ldd cannot run it where the host refuses i386 programs)
# brings its interpreter and NEEDED libraries from the multilib directories.
copy_libs32() {
	local lib d interp
	interp=$(readelf -lW "$1" | sed -n 's/.*program interpreter: \([^]]*\)].*/\1/p')
	if [[ -n $interp && ! -e $rootfs$interp ]]; then
		mkdir -p "$rootfs$(dirname "$interp")"
		cp -L "$interp" "$rootfs$interp"
	fi
	for lib in $(readelf -dW "$1" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p'); do
		for d in /lib32 /usr/lib32 /lib/i386-linux-gnu /usr/lib/i386-linux-gnu; do
			[[ -e $d/$lib ]] || continue
			[[ -e $rootfs$d/$lib ]] || { mkdir -p "$rootfs$d"; cp -L "$d/$lib" "$rootfs$d/$lib"; }
			break
		done
	done
}
copy_libs() {
	local lib
	readelf -lW "$1" 2>/dev/null | grep -q 'Requesting program interpreter' || return 0
	if readelf -hW "$1" | grep -q 'Class:.*ELF32'; then
		copy_libs32 "$1"
		return 0
	fi
	while read -r lib; do
		[[ -e $lib && ! -e $rootfs$lib ]] || continue
		mkdir -p "$rootfs$(dirname "$lib")"
		cp -L "$lib" "$rootfs$lib"
	done < <(ldd "$1" | grep -o '/[^ ]*')
}
for f in ${files[@]+"${files[@]}"}; do
	src=${f%%:*}
	dest=/sf/$(basename "$src")
	[[ $f == *:* ]] && dest=${f#*:}
	mkdir -p "$rootfs$(dirname "$dest")"
	cp -a "$src" "$rootfs$dest"
	copy_libs "$src"
done
{
	for e in ${envs[@]+"${envs[@]}"}; do
		printf 'export %s\n' "$(quote "$e")"
	done
	if [[ ${SF_GUEST_SHELL:-0} == 1 ]]; then
		echo 'setsid cttyhack sh -l'
	else
		printf 'exec %s' "$(quote "/sf/$name")"
		for a in "$@"; do
			printf ' %s' "$(quote "$a")"
		done
		printf '\n'
	fi
} >"$rootfs/sf/cmd"
(cd "$rootfs" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) |
	gzip -1 >"$work/initramfs.cpio.gz"

# --- the machine -------------------------------------------------------------
# One vCPU: under TCG a vCPU that runs a call site while another patches it
# (an LSM trampoline's attach or detach, a static key) can livelock until
# the soft-lockup watchdog panics the guest (seen at bpf_lsm_socket_create
# while the host was busy). With one vCPU nothing runs beside the patcher,
# TCG needs one host thread, and the guest runs no slower (measured: 5%
# faster per test). True parallelism is the host run's to test.
qemu=(qemu-system-x86_64 -accel tcg -cpu max -m 1536 -smp 1
      -nographic -no-reboot -net none
      -kernel "$vmlinuz" -initrd "$work/initramfs.cpio.gz"
      -append "console=ttyS0 loglevel=5 panic=-1 softlockup_panic=1 lsm=lockdown,capability,landlock,yama,apparmor,bpf${SF_GUEST_APPEND:+ $SF_GUEST_APPEND}")

if [[ ${SF_GUEST_SHELL:-0} == 1 ]]; then
	exec "${qemu[@]}"
fi

# The serial console carries CR LF; lines between the markers are the
# binary's output and stream as they come. The firmware leaves escape
# sequences in front of the first lines, so the markers before START are
# matched anywhere in a line.
rcfile=$work/rc
stream() {
	local line on=0
	: >"$log"
	while IFS= read -r line || [[ -n $line ]]; do
		line=${line%$'\r'}
		printf '%s\n' "$line" >>"$log"
		if [[ $on == 0 ]]; then
			case $line in
			*SF-GUEST-INFO\ *) echo "guest: ${line#*SF-GUEST-INFO }" >&2 ;;
			*SF-GUEST-START) on=1 ;;
			esac
		elif [[ $line =~ ^SF-GUEST-EXIT\ ([0-9]+)$ ]]; then
			echo "${BASH_REMATCH[1]}" >"$rcfile"
			on=0
		else
			printf '%s\n' "$line"
		fi
	done
}
set +e
timeout -k 10 "$timeout_s" "${qemu[@]}" </dev/null 2>&1 | stream
status=("${PIPESTATUS[@]}")
set -e

if [[ -s $rcfile ]]; then
	exit "$(cat "$rcfile")"
fi
if [[ ${status[0]} == 124 || ${status[0]} == 137 ]]; then
	echo "guest: timed out after ${timeout_s}s (console: $log)" >&2
	exit 124
fi
echo "guest: no exit status from the guest (qemu exit ${status[0]}); last console lines:" >&2
tail -n 40 "$log" | sed 's/^/guest:   /' >&2
exit 125
