#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# What a distribution's package gets from `make install`: stages
# `make install DESTDIR=STAGE PREFIX=/usr LIBDIR=/usr/lib/<multiarch>` in a
# build directory of its own (the tree's build/ is left as it is: the guest
# copies its binaries while this runs), then checks the stage as a packager
# would: a program built against the staged header through pkg-config, shared
# and static, runs; libsfclient.a and libsfclient.so show only the public API
# (sfclient.h's functions); the .so's soname chain; the .pc's prefix; the man
# pages' version; sfrun's interposer directory; and `make uninstall` with the
# same variables leaves no file behind.
#
# One line per check, $SF_PREFIX in front (tests/run-all.sh counts them):
# "PASS name", "FAIL name: why" (the reasons on lines above it), or
# "SKIP name: why". Exit status 0, or 1 when a check failed.
#
#   tests/check-install.sh            (after nothing: it builds what it installs)
#
# Environment: SF_KEEP_STAGE=1 keeps the temporary directory and says where.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
prefix=${SF_PREFIX:-}
failed=0

pass() { echo "${prefix}PASS $1"; }
fail() { echo "${prefix}FAIL $1: $2"; failed=1; }
skip() { echo "${prefix}SKIP $1: $2"; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sf-check-install.XXXXXX")
if [[ ${SF_KEEP_STAGE:-0} == 1 ]]; then
	echo "# stage kept in $tmp"
else
	trap 'rm -rf "$tmp"' EXIT
fi

cc=${CC:-cc}
multiarch=$($cc -print-multiarch 2>/dev/null || true)
libdir=/usr/lib${multiarch:+/$multiarch}
stage=$tmp/stage
make_vars=(OUTPUT="$tmp/build" DESTDIR="$stage" PREFIX=/usr LIBDIR="$libdir")
jobs=$(nproc 2>/dev/null || echo 2)
# Run by `make test`: the stage's build is its own, not a sub-make of that
# one (its variables, its jobserver).
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES

# --- install ------------------------------------------------------------------
# A distribution builds offline and unprivileged: nothing install would
# run from an empty build directory may be apt-get.
if make -n "${make_vars[@]}" install 2>&1 | grep -q 'apt-get'; then
	fail make_install_runs_no_apt_get "make -n install from an empty build names apt-get"
else
	pass make_install_runs_no_apt_get
fi
if ! make -j"$jobs" "${make_vars[@]}" install >"$tmp/install.log" 2>&1; then
	tail -20 "$tmp/install.log"
	fail make_install_stages_a_package_offline "make install failed"
	exit 1
fi
pass make_install_stages_a_package_offline
# Built for the install alone: no test runner, no bench.
if [[ -e $tmp/build/tests/sftest || -d $tmp/build/bench ]]; then
	fail make_install_builds_only_what_it_installs "tests or benches were built"
else
	pass make_install_builds_only_what_it_installs
fi

lib=$stage$libdir
header=$stage/usr/include/sfclient.h
pc=$lib/pkgconfig/sfclient.pc
# The public API: the functions sfclient.h declares.
public=$(sed -n 's/^[a-z].*[ *]\(sf_[a-z0-9_]*\)(.*/\1/p' "$header" | LC_ALL=C sort -u)
if [[ -z $public ]]; then
	fail sfclient_h_declares_the_public_api "no sf_* function declared in $header"
fi

# --- the .pc ------------------------------------------------------------------
if grep -qx 'prefix=/usr' "$pc" && grep -qx "libdir=$libdir" "$pc"; then
	pass sfclient_pc_names_the_prefix_installed_to
else
	grep -E '^(prefix|libdir)=' "$pc" || true
	fail sfclient_pc_names_the_prefix_installed_to "$pc does not say prefix=/usr, libdir=$libdir"
fi

# --- the soname chain ---------------------------------------------------------
version=$(cat VERSION)
soname=$(readelf -d "$lib/libsfclient.so.$version" 2>/dev/null |
	 sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
if [[ -f $lib/libsfclient.so.$version && ! -L $lib/libsfclient.so.$version &&
      $(readlink "$lib/libsfclient.so.0") == "libsfclient.so.$version" &&
      $(readlink "$lib/libsfclient.so") == libsfclient.so.0 && $soname == libsfclient.so.0 ]]; then
	pass libsfclient_so_has_its_soname_chain
else
	ls -l "$lib"/libsfclient.so* || true
	fail libsfclient_so_has_its_soname_chain "want libsfclient.so -> .so.0 -> .so.$version (a file, SONAME libsfclient.so.0; it is '$soname')"
fi

# --- only the public API is global ------------------------------------------------
a_syms=$(nm -g --defined-only "$lib/libsfclient.a" | awk 'NF == 3 { print $3 }' | LC_ALL=C sort -u)
so_syms=$(nm -D --defined-only "$lib/libsfclient.so.$version" |
	  awk 'NF == 3 && $2 != "A" { sub(/@.*/, "", $3); print $3 }' | LC_ALL=C sort -u)
for kind in a so; do
	syms=$a_syms
	[[ $kind == so ]] && syms=$so_syms
	if [[ -n $public && $syms == "$public" ]]; then
		pass "libsfclient_${kind}_exports_only_the_public_api"
	else
		diff <(echo "$public") <(echo "$syms") | sed 's/^/# /' || true
		fail "libsfclient_${kind}_exports_only_the_public_api" "libsfclient.$kind's global symbols are not sfclient.h's functions (< header, > library)"
	fi
done

# --- a program against the stage, through pkg-config ----------------------------------
cat >"$tmp/prog.c" <<'EOF'
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sfclient.h>

/* Error paths only: they need no daemon and attach nothing. */
int main(void)
{
	if (sf_attach(NULL, 0) != -1 || errno != EFAULT) {
		fprintf(stderr, "sf_attach(NULL) did not fail with EFAULT\n");
		return 1;
	}
	if (!sf_last_error() || !strstr(sf_last_error(), "NULL")) {
		fprintf(stderr, "sf_last_error(): %s\n", sf_last_error() ? sf_last_error() : "(null)");
		return 1;
	}
	/* Pulls the profile compiler, libseccomp and json-c into the link. */
	if (sf_attach_profile(NULL, 0) != -1) {
		fprintf(stderr, "sf_attach_profile(NULL) did not fail\n");
		return 1;
	}
	puts("ok");
	return 0;
}
EOF
if ! command -v pkg-config >/dev/null; then
	skip a_program_links_shared_through_pkg_config "no pkg-config"
	skip a_program_links_static_through_pkg_config "no pkg-config"
else
	export PKG_CONFIG_SYSROOT_DIR=$stage PKG_CONFIG_LIBDIR=$lib/pkgconfig
	unset PKG_CONFIG_PATH
	for kind in shared static; do
		if [[ $kind == shared ]]; then
			flags=$(pkg-config --cflags --libs sfclient)
			link=()
		else
			flags=$(pkg-config --static --cflags --libs sfclient)
			link=(-static)
		fi
		# shellcheck disable=SC2086 # pkg-config's words
		if ! $cc "${link[@]}" -o "$tmp/prog-$kind" "$tmp/prog.c" $flags >"$tmp/cc.log" 2>&1; then
			sed 's/^/# /' "$tmp/cc.log"
			fail "a_program_links_${kind}_through_pkg_config" "$cc ${link[*]} prog.c $flags failed"
			continue
		fi
		out=$(LD_LIBRARY_PATH=$lib "$tmp/prog-$kind" 2>&1) || true
		if [[ $kind == shared ]] &&
		   ! LD_LIBRARY_PATH=$lib ldd "$tmp/prog-$kind" | grep -q "libsfclient.so.0 => $lib/"; then
			fail "a_program_links_${kind}_through_pkg_config" "the program does not load the staged libsfclient.so.0"
		elif [[ $out != ok ]]; then
			echo "# $out"
			fail "a_program_links_${kind}_through_pkg_config" "the program did not run"
		else
			pass "a_program_links_${kind}_through_pkg_config"
		fi
	done
fi

# --- man pages: this version, no template left ------------------------------------
if grep -l '@[A-Z_]*@' "$stage"/usr/share/man/man*/* >/dev/null 2>&1; then
	fail man_pages_carry_the_version "a placeholder is left in $(grep -l '@[A-Z_]*@' "$stage"/usr/share/man/man*/* | tr '\n' ' ')"
elif grep -L "^\\.TH .*\"sfilter $version\"" "$stage"/usr/share/man/man*/* | grep -q .; then
	fail man_pages_carry_the_version "a .TH line does not say sfilter $version"
else
	pass man_pages_carry_the_version
fi

# --- sfrun looks for its interposers where they were installed ------------------------
if [[ -f $lib/sfilter/libsfprctl.so ]] && grep -aqF "$libdir/sfilter" "$stage/usr/bin/sfrun"; then
	pass sfrun_finds_its_interposers_in_libdir
else
	fail sfrun_finds_its_interposers_in_libdir "sfrun does not name $libdir/sfilter, or libsfprctl.so is not there"
fi

# --- uninstall -------------------------------------------------------------------
if ! make "${make_vars[@]}" uninstall >"$tmp/uninstall.log" 2>&1; then
	tail -20 "$tmp/uninstall.log"
	fail make_uninstall_leaves_nothing "make uninstall failed"
else
	left=$(find "$stage" ! -type d)
	if [[ -z $left ]]; then
		pass make_uninstall_leaves_nothing
	else
		echo "$left" | sed 's/^/# left: /'
		fail make_uninstall_leaves_nothing "files left in the stage"
	fi
fi

exit $failed
