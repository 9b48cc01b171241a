#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Checks that the include edges between the product's layers flow one way:
#
#   classic2ebpf -> bpf -> loader/runtime -> loader/proto -> loader/daemon,
#   loader/client -> loader/cli
#   classic2ebpf -> loader/profile -> loader/client, loader/cli,
#                                     loader/daemon (it compiles the profile
#                                     a filter came from, SF_MSG_PROFILE)
#
# Each layer may include only the layers listed for it in ALLOWED below
# (and itself, and system headers). An include is resolved the way the
# compiler would for that layer: a path with a slash relative to the
# including file, a bare name to the one project header of that name (two
# project headers of one name are refused: the check could not tell them
# apart). Prints one line per offending edge and a PASS/FAIL line with
# $SF_PREFIX in front (tests/run-all.sh counts it). Exit status 0 or 1.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
prefix=${SF_PREFIX:-}
name=layers_include_only_the_layers_below_them
cd "$root"

declare -A ALLOWED=(
	[classic2ebpf]=""
	[bpf]=""
	[loader/runtime]="classic2ebpf bpf"
	[loader/proto]="bpf classic2ebpf"
	[loader/profile]="classic2ebpf"
	[loader/client]="loader/proto loader/profile classic2ebpf bpf"
	[loader/daemon]="loader/runtime loader/proto loader/profile classic2ebpf bpf"
	[loader/cli]="loader/client loader/profile loader/proto classic2ebpf bpf"
)

# The layer of a path: the longest ALLOWED key it is under; "" for none.
layer_of() {
	local p=$1 best="" k
	for k in "${!ALLOWED[@]}"; do
		if [[ $p == "$k"/* && ${#k} -gt ${#best} ]]; then
			best=$k
		fi
	done
	printf '%s' "$best"
}

declare -A HEADER=()
dups=()
while IFS= read -r h; do
	b=$(basename "$h")
	if [[ -n ${HEADER[$b]:-} ]]; then
		dups+=("$b: ${HEADER[$b]} and $h")
	else
		HEADER[$b]=$h
	fi
done < <(find classic2ebpf bpf loader -name '*.h' -not -path '*/build/*' | LC_ALL=C sort)

bad=()
for d in "${dups[@]+"${dups[@]}"}"; do
	bad+=("two project headers named $d")
done

# Every source of loader/ is in a layer.
while IFS= read -r f; do
	bad+=("$f is in loader/ but in none of its layers")
done < <(find loader -maxdepth 1 -type f \( -name '*.c' -o -name '*.h' \) | LC_ALL=C sort)

while IFS= read -r f; do
	from=$(layer_of "$f")
	[[ -n $from ]] || continue
	while IFS= read -r inc; do
		if [[ $inc == */* ]]; then
			target=$(realpath -m --relative-to="$root" "$(dirname "$f")/$inc")
		else
			target=${HEADER[$inc]:-}
		fi
		# Generated headers (the skeleton) and system headers.
		[[ -n $target && -e $target ]] || continue
		to=$(layer_of "$target")
		[[ -n $to && $to != "$from" ]] || continue
		if [[ " ${ALLOWED[$from]} " != *" $to "* ]]; then
			bad+=("$f -> $target ($from may not include $to)")
		fi
	done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
done < <(find classic2ebpf bpf loader \( -name '*.c' -o -name '*.h' \) -not -path '*/build/*' |
	 LC_ALL=C sort)

if [[ ${#bad[@]} -eq 0 ]]; then
	echo "${prefix}PASS $name"
	exit 0
fi
printf '    layering: %s\n' "${bad[@]}"
echo "${prefix}FAIL $name"
exit 1
