#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Runs each libFuzzer binary for SECONDS and prints one line per fuzzer,
# "PASS fuzz-NAME" or "FAIL fuzz-NAME" (after $SF_PREFIX), so that
# tests/run-all.sh can count them as tests.
#
#   tests/run-fuzz.sh SECONDS build/fuzz/NAME...
#
# The corpus of NAME lives in build/fuzz/corpus-NAME and grows across runs; an
# empty one is first seeded by running the fuzzer with SF_FUZZ_SEED_DIR set
# (fuzzers that ignore it just run no input). A crash leaves its input in
# build/fuzz/NAME-crash-* and fails. Full output: build/fuzz/NAME.log.
set -uo pipefail

# Leaks that are a dependency's, not ours (each said in the file).
export LSAN_OPTIONS=${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$(cd "$(dirname "$0")/.." && pwd)/fuzz/lsan.supp

[[ $# -ge 1 ]] || { echo "usage: $0 SECONDS FUZZER..." >&2; exit 2; }
seconds=$1
shift
prefix=${SF_PREFIX:-}
failed=0

for fuzzer in "$@"; do
	name=$(basename "$fuzzer")
	out=$(dirname "$fuzzer")
	corpus=$out/corpus-$name
	log=$out/$name.log
	mkdir -p "$corpus"
	if [[ -z $(ls -A "$corpus") ]]; then
		SF_FUZZ_SEED_DIR=$corpus "$fuzzer" -runs=0 -artifact_prefix="$out/$name-" \
			"$corpus" >"$log" 2>&1 </dev/null
	fi
	echo "# fuzz-$name: ${seconds}s, corpus $(ls "$corpus" | wc -l) inputs" >&2
	"$fuzzer" -max_total_time="$seconds" -timeout=120 -print_final_stats=1 \
		-artifact_prefix="$out/$name-" "$corpus" >"$log" 2>&1 </dev/null
	rc=$?
	execs=$(awk '/stat::number_of_executed_units:/ { print $2 }' "$log")
	if [[ $rc == 0 ]]; then
		echo "# fuzz-$name: ${execs:-?} runs, corpus $(ls "$corpus" | wc -l) inputs" >&2
		echo "${prefix}PASS fuzz-$name"
	else
		echo "    fuzzer exited with $rc; last lines of $log:"
		grep -v -e '^#[0-9]' -e '^ *#[0-9]* 0x' -e '^INFO:' -e 'NEW_FUNC' \
			"$log" | head -n 60 | sed 's/^/    /'
		echo "${prefix}FAIL fuzz-$name"
		failed=1
	fi
done
exit "$failed"
