#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Fetches Debian's 6.1 cloud kernel once and prints the path of its vmlinuz.
# The package is the newest linux-image-6.1.0-N-cloud-amd64-unsigned the apt
# indexes know (apt-get update first on a fresh machine); it is cached in
# $SF_GUEST_DIR (default build/guest) and never fetched again until that
# folder is removed. SF_GUEST_KERNEL_PKG=NAME pins a package instead.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${SF_GUEST_DIR:-$root/build/guest}
mkdir -p "$dir"

if [[ -e $dir/vmlinuz && -s $dir/kernel.version ]]; then
	echo "$dir/vmlinuz"
	exit 0
fi

exec 9>"$dir/.kernel.lock"
flock 9
if [[ -e $dir/vmlinuz && -s $dir/kernel.version ]]; then
	echo "$dir/vmlinuz"
	exit 0
fi

pick() {
	apt-cache search --names-only \
		'^linux-image-6\.1\.0-[0-9]+-cloud-amd64-unsigned$' 2>/dev/null |
		awk '{ print $1 }' | sort -V | tail -n 1
}

pkg=${SF_GUEST_KERNEL_PKG:-$(pick)}
if [[ -z $pkg ]]; then
	# A fresh machine may have no package indexes yet.
	if [[ $(id -u) != 0 ]]; then
		echo "guest: no linux-image-6.1.0-*-cloud-amd64-unsigned in the apt indexes; run apt-get update as root" >&2
		exit 1
	fi
	echo "guest: apt-get update (no 6.1 cloud kernel in the indexes)" >&2
	apt-get update -q </dev/null >"$dir/apt.log" 2>&1 ||
		{ tail -n 20 "$dir/apt.log" >&2; exit 1; }
	pkg=$(pick)
fi
if [[ -z $pkg ]]; then
	echo "guest: no linux-image-6.1.0-*-cloud-amd64-unsigned package available" >&2
	exit 1
fi
version=$(apt-cache policy "$pkg" | awk '/Candidate:/ { print $2 }')
if [[ -z $version || $version == "(none)" ]]; then
	echo "guest: $pkg has no installation candidate" >&2
	exit 1
fi

echo "guest: fetching $pkg $version" >&2
rm -rf "$dir/pkg" "$dir/kernel"
mkdir -p "$dir/pkg"
# apt-get download writes into the current folder. As root it falls back to
# an unsandboxed download and says so on stderr; that is expected.
(cd "$dir/pkg" && apt-get download -q "$pkg=$version" </dev/null >"$dir/download.log" 2>&1) ||
	{ cat "$dir/download.log" >&2; exit 1; }
deb=$(ls "$dir"/pkg/*.deb)
dpkg-deb -x "$deb" "$dir/kernel"
vmlinuz=$(ls "$dir"/kernel/boot/vmlinuz-* | head -n 1)
[[ -f $vmlinuz ]] || { echo "guest: no vmlinuz in $deb" >&2; exit 1; }
# Only the image is needed: the modules stay out of the initramfs.
ln -sfn "${vmlinuz#"$dir"/}" "$dir/vmlinuz"
echo "$pkg $version" >"$dir/kernel.version"
echo "$dir/vmlinuz"
