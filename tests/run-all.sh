#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# `make test`: the suite on the host, the fuzzers for a short while on the
# host, and, at the same time, the suite again inside Debian's 6.1 kernel
# (tests/guest/run.sh, two guests sharing the tests), whose lines come
# after the host's.
# Prints every per-test line ("host: PASS x", "guest-6.1: SKIP y: why"),
# then the bypass suite's total of each kernel ("# host: bypass: N cases,
# ..."; the per-case lines are in each part's output) and, last, one line
# summing all of them: "N passed, N failed, N skipped".
#
#   tests/run-all.sh [build/fuzz/NAME...]
#
# Environment: FUZZ_SHORT_SECONDS (default 15) per fuzzer; SF_NO_GUEST=1
# leaves the guest out (reported as a SKIP, for quick local runs only);
# SF_TESTS=GLOB[,GLOB...] runs only the tests whose names match, on both
# kernels (sftest -t), for work on one feature; CI never sets it.
# A guest that does not boot, or a run without its closing line, is a FAIL.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
sftest=build/tests/sftest
guest_prefix="guest-6.1: "

passed=0 failed=0 skipped=0
# Each failed test with the lines it printed, repeated at the end: CI shows
# only the tail of a long run, and a FAIL line alone says too little.
failures=()
# The bypass suite's total line of each part, repeated at the end too.
bypass_totals=()

# The index of the last 12 of run_part's detail lines.
tail_from() {
	local n=${#detail[@]}
	echo $((n > 12 ? n - 12 : 0))
}

# run_part LABEL HAS_CLOSING_LINE COMMAND...
# Streams COMMAND's output without its closing line and adds its results to
# the totals: the closing line's figures when there is one (it is the
# runner's own count, immune to console noise), else the per-test lines.
run_part() {
	local label=$1 has_closing=$2
	shift 2
	local line rc=255 closed=0 p=0 f=0 s=0 cp=0 cf=0 cs=0 start=${PART_START:-$SECONDS}
	local re_close='^([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped$'
	local detail=()

	while IFS= read -r line; do
		if [[ $line =~ ^SF-RUN-ALL-RC\ ([0-9]+)$ ]]; then
			rc=${BASH_REMATCH[1]}
			continue
		fi
		if [[ $has_closing == 1 && $line =~ $re_close ]]; then
			closed=1
			cp=${BASH_REMATCH[1]} cf=${BASH_REMATCH[2]} cs=${BASH_REMATCH[3]}
			continue
		fi
		printf '%s\n' "$line"
		[[ $line == "# ${label}bypass: "*" cases, "* ]] && bypass_totals+=("$line")
		case $line in
		"${label}PASS "*) p=$((p + 1)) detail=() ;;
		"${label}FAIL "*)
			f=$((f + 1))
			failures+=("$line" ${detail[@]+"${detail[@]:$(tail_from)}"})
			detail=()
			;;
		"${label}SKIP "*) s=$((s + 1)) detail=() ;;
		*) detail+=("$line") ;;
		esac
	done < <("$@" 2>&1 </dev/null; echo "SF-RUN-ALL-RC $?")

	if [[ $closed == 1 ]]; then
		p=$cp f=$cf s=$cs
	elif [[ $has_closing == 1 ]]; then
		if [[ $((p + f + s)) == 0 ]]; then
			echo "${label}FAIL boot"
		else
			echo "${label}FAIL run (no closing line, exit status $rc)"
		fi
		f=$((f + 1))
		failures+=("${label}FAIL run: no closing line, exit status $rc" ${detail[@]+"${detail[@]:$(tail_from)}"})
	fi
	if [[ $rc != 0 && $f == 0 ]]; then
		echo "${label}FAIL run (exit status $rc)"
		f=$((f + 1))
		failures+=("${label}FAIL run: exit status $rc")
	fi
	echo "# ${label}$p passed, $f failed, $s skipped in $((SECONDS - start))s"
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
}

if [[ ! -x $sftest ]]; then
	echo "$sftest missing: run make first" >&2
	exit 2
fi

# No mounts here: the product mounts bpffs itself where none is (a test
# checks that on a view without it), and tests that need another
# filesystem mount it in a private namespace of their own.

# The 2012 proposal's example, built from the seed patch for this run
# (tests/test_rfc2012_seed.c; a missing patch is its SKIP).
# The seed sits beside the checkout (../shared/seeds), or in this
# workplace's shared directory when the checkout is elsewhere.
seed_patch=${SF_SEED_PATCH:-}
for d in "$root/../shared/seeds" /work/shared/seeds; do
	[[ -z $seed_patch && -r $d/002-patch-documentation-prctl-seccomp-filter.patch ]] &&
		seed_patch=$d/002-patch-documentation-prctl-seccomp-filter.patch
done
if ! tests/seed/build-examples.sh \
	"${seed_patch:-$root/../shared/seeds/002-patch-documentation-prctl-seccomp-filter.patch}" \
	build/seed; then
	echo "host: FAIL seed-examples"
	failed=$((failed + 1))
	failures+=("host: FAIL seed-examples: tests/seed/build-examples.sh failed")
fi

only=()
[[ -n ${SF_TESTS:-} ]] && only=(-t "$SF_TESTS")

kill_tree() {
	local c
	for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do
		kill_tree "$c"
	done
	kill "$1" 2>/dev/null
}

guest_pids=()
if [[ ${SF_NO_GUEST:-0} == 1 ]]; then
	echo "${guest_prefix}SKIP boot: SF_NO_GUEST=1"
	skipped=$((skipped + 1))
else
	# The tests look for these beside the runner (/sf in the guest), and
	# tests/test_demo.c for the demo in /sf/demo.
	extra=()
	for bin in build/classic2ebpf build/sfilterd build/sfrun build/sfctl build/sfilterd-asan \
		   build/libsfprctl.so build/libsfprctl32.so build/tests/sf-*; do
		[[ -e $bin ]] && extra+=(-f "$bin")
	done
	# sfrun needs a dynamically linked shell, and the guest's is busybox.
	extra+=(-f /bin/bash:/bin/bash)
	# take_seccomp_* runs Debian's bubblewrap, with its libraries.
	[[ -x /usr/bin/bwrap ]] && extra+=(-f /usr/bin/bwrap:/usr/bin/bwrap)
	# tests/test_containers.c runs the hook under Debian's runc and crun.
	[[ -e build/sfilter-oci-hook ]] && extra+=(-f build/sfilter-oci-hook)
	# tests/test_runc_wrap.c runs sfilter-runc under runc too.
	[[ -e build/sfilter-runc ]] && extra+=(-f build/sfilter-runc)
	for rt in /usr/sbin/runc /usr/bin/crun; do
		[[ -x $rt ]] && extra+=(-f "$rt:$rt")
	done
	# tests/test_profile*.c read Podman's default profile where it lives
	# (package golang-github-containers-common).
	[[ -r /usr/share/containers/seccomp.json ]] &&
		extra+=(-f /usr/share/containers/seccomp.json:/usr/share/containers/seccomp.json)
	# and Docker's (golang-github-docker-docker-dev), which tests diff against.
	docker_profile=/usr/share/gocode/src/github.com/docker/docker/profiles/seccomp/default.json
	[[ -r $docker_profile ]] && extra+=(-f "$docker_profile:$docker_profile")
	for f in build/seed/example32* build/seed/example64* build/seed/SKIP-*; do
		[[ -e $f && $f != *.c ]] && extra+=(-f "$f:/sf/seed/${f##*/}")
	done
	for f in demo/demo.sh demo/*.s; do
		extra+=(-f "$f:/sf/$f")
	done
	# The guest's tests run in two guests, each on a share of them (sftest
	# -s): an emulated CPU keeps one core busy, and one guest alone took
	# ~1,900-2,600 s, near or past its budget. The first starts now,
	# beside the host's part on the other core; the second once the
	# host's tests are done and that core is free, so it takes the
	# smaller share. Their output is shown once both are done.
	mkdir -p build/guest
	# start_guest N SHARDS: guest N (1 or 2) on sftest -s SHARDS.
	start_guest() {
		local out=build/guest/run-all.$1.out
		guest_start[$1]=$SECONDS
		( SF_GUEST_LOG=build/guest/console.$1.log \
		  tests/guest/run.sh ${extra[@]+"${extra[@]}"} "$sftest" ${only[@]+"${only[@]}"} \
			-s "$2" -p "$guest_prefix" >"$out" 2>&1 </dev/null
		  echo $? >"$out.rc" ) &
		guest_pids+=($!)
	}
	guest_start=()
	start_guest 1 0,1,2/5
	# A run that is stopped takes its guests with it.
	trap 'for p in "${guest_pids[@]}"; do kill_tree "$p"; done' EXIT
fi

# Guest N's output, as if it had run here, its status as its own.
guest_replay() {
	cat "build/guest/run-all.$1.out"
	return "$(cat "build/guest/run-all.$1.out.rc" 2>/dev/null || echo 255)"
}


run_part "host: " 0 env SF_PREFIX="host: " tests/check-layers.sh
# Debian's python3 on purpose: python3-yaml (DEB_PKGS) is installed for it,
# not for whatever python3 comes first on PATH.
run_part "host: " 0 env SF_PREFIX="host: " /usr/bin/python3 tests/check-dist.py
run_part "host: " 0 env SF_PREFIX="host: " /usr/bin/python3 tests/check-docs.py
# What `make install` stages for a package, built in a directory of its own.
run_part "host: " 0 env SF_PREFIX="host: " tests/check-install.sh
run_part "host: " 1 "$sftest" ${only[@]+"${only[@]}"} -p "host: "
[[ ${#guest_pids[@]} -gt 0 ]] && start_guest 2 3,4/5

if [[ $# -gt 0 ]]; then
	run_part "host: " 0 env SF_PREFIX="host: " \
		tests/run-fuzz.sh "${FUZZ_SHORT_SECONDS:-15}" "$@"
fi

if [[ ${#guest_pids[@]} -gt 0 ]]; then
	wait "${guest_pids[@]}"
	trap - EXIT
	for n in 1 2; do
		PART_START=${guest_start[$n]} run_part "$guest_prefix" 1 guest_replay "$n"
	done
fi

if [[ ${#failures[@]} -gt 0 ]]; then
	echo "# failed tests, with the last lines each printed:"
	printf '#   %s\n' "${failures[@]}"
fi
if [[ ${#bypass_totals[@]} -gt 0 ]]; then
	printf '%s\n' "${bypass_totals[@]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[[ $failed == 0 ]]
