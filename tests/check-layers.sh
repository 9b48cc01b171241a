#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Checks the code against layers.mk, the one statement of the layers (which
# directory may include which; the Makefile's include paths are made from
# it too):
#
#   layers_mk_is_a_one_way_graph
#       every dependency is a layer listed before the one that names it, and
#       a layer names the dependencies of its dependencies too (their
#       headers include them, so it needs them on its include path)
#   layers_include_only_the_layers_below_them
#       an include in a layer's files reaches only itself, the layers it
#       names and system or generated headers. An include is resolved the
#       way the compiler would for that layer: a path with a slash relative
#       to the including file, a bare name to the one project header of that
#       name (two project headers of one name are refused: the check could
#       not tell them apart)
#   layers_define_what_their_headers_declare
#       every function a layer's headers declare (gcc -aux-info) is defined
#       by that layer's objects (nm over $OUTPUT/obj/DIR/*.o): a declaration
#       in the wrong layer's header lets a file call upwards. Needs the
#       build; SKIP without it. A layer without user-space sources (bpf/)
#       is not checked
#   layers_files_call_only_files_below_them
#       within a layer that names an order (L_ORDER in layers.mk: a header
#       whose first comment lists its files by level, lowest first), every
#       file is in the order and a function one file defines is called
#       (nm) only from files of a higher level. Needs the build; SKIP
#       without it. Static inline functions of the header are not seen
#   developers_md_layers_is_layers_mk
#       DEVELOPERS.md's "Layers" block is what `tests/check-layers.sh
#       --graph` prints
#
# Prints offending items indented, then a PASS/FAIL/SKIP line per check with
# $SF_PREFIX in front (tests/run-all.sh counts them). Exit status 0 or 1.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
prefix=${SF_PREFIX:-}
out=${OUTPUT:-build}
cd "$root"

# --- layers.mk ----------------------------------------------------------------
# `NAME := words` lines only; the Makefile includes the same file.
declare -A MK=()
while IFS= read -r line; do
	if [[ $line =~ ^([A-Za-z0-9_]+)[[:space:]]*:=[[:space:]]*(.*)$ ]]; then
		val=${BASH_REMATCH[2]}
		MK[${BASH_REMATCH[1]}]=${val%"${val##*[![:space:]]}"}
	fi
done < layers.mk

read -r -a LAYERS <<< "${MK[LAYERS]}"
declare -A DIR_OF=() ALLOWED=() POS=()
i=0
for l in "${LAYERS[@]}"; do
	DIR_OF[$l]=${MK[${l}_DIR]:-}
	POS[$l]=$i
	i=$((i + 1))
done
for l in "${LAYERS[@]}"; do
	a=""
	for dep in ${MK[${l}_DEPS]:-}; do
		a+=" ${DIR_OF[$dep]:-?$dep}"
	done
	ALLOWED[${DIR_OF[$l]}]=${a# }
done

# The block of DEVELOPERS.md's "Layers" section: a line a layer, bottom-up.
graph() {
	local l dep deps
	for l in "${LAYERS[@]}"; do
		deps=""
		for dep in ${MK[${l}_DEPS]:-}; do
			deps+=", ${DIR_OF[$dep]}"
		done
		printf '%-18s%s%s\n' "${DIR_OF[$l]}/" "${MK[${l}_ABOUT]:-}" \
			"${deps:+ -> ${deps#, }}"
	done
}

if [[ ${1:-} == --graph ]]; then
	graph
	exit 0
fi

status=0
# report NAME ITEM...: FAIL with the items, or PASS.
report() {
	local name=$1
	shift
	if [[ $# -eq 0 ]]; then
		echo "${prefix}PASS $name"
		return
	fi
	printf '    %s\n' "$@"
	echo "${prefix}FAIL $name: $# offending"
	status=1
}

# --- layers_mk_is_a_one_way_graph -----------------------------------------------
bad=()
for l in "${LAYERS[@]}"; do
	[[ -n ${DIR_OF[$l]} && -d ${DIR_OF[$l]} ]] ||
		bad+=("$l: no directory ${DIR_OF[$l]:-(none)}")
	for dep in ${MK[${l}_DEPS]:-}; do
		if [[ -z ${POS[$dep]:-} ]]; then
			bad+=("$l depends on $dep, which is no layer")
			continue
		fi
		((POS[$dep] < POS[$l])) || bad+=("$l depends on $dep, listed after it")
		for dd in ${MK[${dep}_DEPS]:-}; do
			[[ " ${MK[${l}_DEPS]} " == *" $dd "* ]] ||
				bad+=("$l depends on $dep, which depends on $dd: $l must list $dd")
		done
	done
done
report layers_mk_is_a_one_way_graph "${bad[@]+"${bad[@]}"}"

# --- layers_include_only_the_layers_below_them ------------------------------------
# The layer of a path in REPLY: the longest layer directory it is under; ""
# for none (no subshell: it runs for every include).
layer_of() {
	local p=$1 k
	REPLY=""
	for k in "${!ALLOWED[@]}"; do
		if [[ $p == "$k"/* && ${#k} -gt ${#REPLY} ]]; then
			REPLY=$k
		fi
	done
}

dirs=()
for l in "${LAYERS[@]}"; do
	dirs+=("${DIR_OF[$l]}")
done

declare -A HEADER=()
bad=()
while IFS= read -r h; do
	b=$(basename "$h")
	if [[ -n ${HEADER[$b]:-} ]]; then
		bad+=("two project headers named $b: ${HEADER[$b]} and $h")
	else
		HEADER[$b]=$h
	fi
done < <(find "${dirs[@]}" -name '*.h' | LC_ALL=C sort)

# Every source of loader/ is in a layer.
while IFS= read -r f; do
	bad+=("$f is in loader/ but in none of its layers")
done < <(find loader -maxdepth 1 -type f \( -name '*.c' -o -name '*.h' \) | LC_ALL=C sort)

while IFS= read -r f; do
	layer_of "$f"
	from=$REPLY
	[[ -n $from ]] || continue
	while IFS= read -r inc; do
		if [[ $inc == */* ]]; then
			target=$(realpath -m --relative-to="$root" "$(dirname "$f")/$inc")
		else
			target=${HEADER[$inc]:-}
		fi
		# Generated headers (the skeletons, sf_version.h) and system headers.
		[[ -n $target && -e $target ]] || continue
		layer_of "$target"
		to=$REPLY
		[[ -n $to && $to != "$from" ]] || continue
		if [[ " ${ALLOWED[$from]} " != *" $to "* ]]; then
			bad+=("$f -> $target ($from may not include $to)")
		fi
	done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
done < <(find "${dirs[@]}" \( -name '*.c' -o -name '*.h' \) | LC_ALL=C sort)
report layers_include_only_the_layers_below_them "${bad[@]+"${bad[@]}"}"

# --- layers_define_what_their_headers_declare --------------------------------------
# The objects of a layer's user-space sources (none for bpf/); status 1
# when one is missing (no build).
layer_objs() {
	local dir=$1 c o objs=()
	for c in "$dir"/*.c; do
		[[ -e $c && $c != *.bpf.c ]] || continue
		# The interposer's sources are built as PIC objects only.
		o=$out/obj/${c%.c}.o
		[[ -e $o ]] || o=$out/obj/${c%.c}.pic.o
		[[ -e $o ]] || return 1
		objs+=("$o")
	done
	printf '%s\n' "${objs[@]+"${objs[@]}"}"
}

name=layers_define_what_their_headers_declare
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=()
skip=""
for l in "${LAYERS[@]}"; do
	dir=${DIR_OF[$l]}
	if ! objs=$(layer_objs "$dir"); then
		skip="no objects of $dir in $out/obj (run make first)"
		break
	fi
	[[ -n $objs ]] || continue
	mapfile -t objs <<< "$objs"
	nm -g --defined-only "${objs[@]}" 2>/dev/null |
		awk 'NF == 3 && $2 ~ /[TWi]/ { print $3 }' | LC_ALL=C sort -u > "$tmp/defined"
	inc=(-I"$dir")
	for dep in ${MK[${l}_DEPS]:-}; do
		inc+=(-I"${DIR_OF[$dep]}")
	done
	inc+=(-I"$out/include")
	: > "$tmp/declared"
	for h in "$dir"/*.h; do
		[[ -e $h ]] || continue
		if ! gcc -fsyntax-only -D_GNU_SOURCE -aux-info "$tmp/aux" "${inc[@]}" -x c "$h" 2> "$tmp/err"; then
			bad+=("$h does not compile alone: $(head -1 "$tmp/err")")
			continue
		fi
		# "/* FILE:LINE:NC */ extern T name (args);": C is a declaration,
		# F a definition (a static inline function, nothing to link).
		awk -v h="$h" '
			$2 ~ "^" h ":[0-9]+:.C$" {
				s = $0; sub(/ \(.*/, "", s)
				n = split(s, w, /[ *]+/)
				print h ": " w[n]
			}' "$tmp/aux" >> "$tmp/declared"
	done
	while IFS= read -r d; do
		fn=${d##*: }
		grep -qxF "$fn" "$tmp/defined" ||
			bad+=("$d is declared there, defined by no file of $dir")
	done < "$tmp/declared"
done
if [[ -n $skip ]]; then
	echo "${prefix}SKIP $name: $skip"
else
	report "$name" "${bad[@]+"${bad[@]}"}"
fi

# --- layers_files_call_only_files_below_them --------------------------------------
name=layers_files_call_only_files_below_them
bad=()
skip=""
for l in "${LAYERS[@]}"; do
	order=${MK[${l}_ORDER]:-}
	[[ -n $order ]] || continue
	dir=${DIR_OF[$l]}
	# "file level" pairs from the header's first comment (the one opened
	# by a line "/*" alone: the licence line is one before it).
	declare -A LEVEL=()
	while read -r f lv; do
		LEVEL[$f]=$lv
	done < <(awk '/^\/\*$/ { on = 1; next } on && /\*\// { exit }
		on && match($0, /^ \*[ \t]+([0-9]+[ \t]+)?[a-z0-9_]+\.c[ \t]/) {
			s = substr($0, 3); n = split(s, w, /[ \t]+/); i = 1
			while (w[i] == "") i++
			if (w[i] ~ /^[0-9]+$/) { lv = w[i]; i++ }
			print w[i], lv
		}' "$order")
	for c in "$dir"/*.c; do
		[[ -n ${LEVEL[$(basename "$c")]:-} ]] ||
			bad+=("$c is not in the order of $order")
	done
	if ! objs=$(layer_objs "$dir"); then
		skip="no objects of $dir in $out/obj (run make first)"
		unset LEVEL
		break
	fi
	mapfile -t objs <<< "$objs"
	: > "$tmp/def"
	: > "$tmp/use"
	for o in "${objs[@]}"; do
		f=$(basename "${o%%.*}").c
		nm -g --defined-only "$o" | awk -v f="$f" 'NF == 3 && $2 ~ /[TW]/ { print $3, f }' >> "$tmp/def"
		nm -u "$o" | awk -v f="$f" '{ print $NF, f }' >> "$tmp/use"
	done
	while read -r sym user definer; do
		[[ $user != "$definer" ]] || continue
		lu=${LEVEL[$user]:-} ld=${LEVEL[$definer]:-}
		[[ -n $lu && -n $ld ]] || continue
		((ld < lu)) ||
			bad+=("$dir/$user (level $lu) calls $sym() of $definer (level $ld)")
	done < <(LC_ALL=C join <(LC_ALL=C sort "$tmp/use") <(LC_ALL=C sort "$tmp/def"))
	unset LEVEL
done
if [[ -n $skip ]]; then
	echo "${prefix}SKIP $name: $skip"
else
	report "$name" "${bad[@]+"${bad[@]}"}"
fi

# --- developers_md_layers_is_layers_mk ---------------------------------------------
# The first fenced block of the section "## Layers".
awk '/^## /{ in_sec = ($0 == "## Layers") } in_sec && /^```/{ n++; next }
     in_sec && n == 1' DEVELOPERS.md > "$tmp/doc"
graph > "$tmp/graph"
bad=()
if ! diff -u "$tmp/graph" "$tmp/doc" > "$tmp/diff"; then
	mapfile -t bad < <(tail -n +3 "$tmp/diff")
	bad=("DEVELOPERS.md's Layers block differs from tests/check-layers.sh --graph (-: layers.mk, +: the file):"
	     "${bad[@]}")
fi
report developers_md_layers_is_layers_mk "${bad[@]+"${bad[@]}"}"

exit $status
