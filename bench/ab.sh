#!/usr/bin/env bash
# bench/ab.sh: two commits of opscope side by side in one run, for changes that must cost
# nothing (a refactoring, a move of code between files). Each commit is built (Release) in
# a temporary worktree; then, ROUNDS times, the two builds take turns on every measure:
#
#   range_pair_ns, floor_pair_ns   bench_record pairs: a begin/end pair of the C API, and two
#                                  clock reads (run.sh's figures)
#   load_opscope_s                 bench_load on a 2 M-event .opscope stream (best of 5 in
#                                  process): the reader and the loader
#   report_kineto_s, json_s        opscope report (text, --format json) on a synthetic Kineto
#                                  trace of $SIZE: the JSON importer, the analyses, the views
#   report_real_s                  opscope report on every real Kineto trace of shared/data
#   export_chrome_s                opscope export -f chrome of the .opscope stream
#
# and prints, per measure, the best of each build and new/old. Times are wall seconds of
# the whole process unless said otherwise.
#
#   bench/ab.sh OLD [NEW]    # NEW defaults to HEAD; e.g. bench/ab.sh 4cd7fca
#   ROUNDS=5 SIZE=200M bench/ab.sh main~3
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
old=${1:?usage: bench/ab.sh OLD [NEW]}
new=${2:-HEAD}
rounds=${ROUNDS:-5}
size=${SIZE:-200M}
data=${DATA:-$root/../shared/data/kineto}
work=$(mktemp -d "${TMPDIR:-/tmp}/opscope-ab.XXXXXX")
cleanup() {
	for side in old new; do
		git -C "$root" worktree remove --force "$work/$side" 2>/dev/null || true
	done
	rm -rf "$work"
}
trap cleanup EXIT

for side in old new; do
	ref=$old
	[ $side = new ] && ref=$new
	git -C "$root" worktree add -q --detach "$work/$side" "$ref"
	echo "== build $side ($(git -C "$root" rev-parse --short "$ref"))"
	cmake -S "$work/$side" -B "$work/$side/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
		-DOPSCOPE_TESTS=OFF -DOPSCOPE_BENCH=ON >/dev/null
	cmake --build "$work/$side/build" -j "$(nproc)" >/dev/null
done

echo "== inputs"
"$work/new/build/bench/gen_kineto" "$size" "$work/synth.json" >/dev/null
"$work/new/build/bench/bench_record" stream "$work/stream.opscope" none >/dev/null
mapfile -t real < <(find "$data" -name '*.json' -o -name '*.json.gz' 2>/dev/null | LC_ALL=C sort)
echo "synthetic $(du -h "$work/synth.json" | cut -f1), stream $(du -h "$work/stream.opscope" | cut -f1), ${#real[@]} real traces"

wall() { # COMMAND...: wall seconds of the command, its output thrown away
	local t0 t1
	t0=$(date +%s.%N)
	"$@" >/dev/null 2>&1
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", b - a }'
}
report_real() {
	local f
	for f in "${real[@]}"; do "$1" report "$f"; done
}

: >"$work/samples"
for r in $(seq "$rounds"); do
	for side in old new; do
		b=$work/$side/build
		{
			"$b/bench/bench_record" pairs | awk -v s=$side '$1 ~ /^(range|floor)_pair_ns$/ { print s, $1, $2 }'
			echo "$side load_opscope_s $("$b/bench/bench_load" "$work/stream.opscope" 5 |
				awk '$1 == "mb_per_s" { print 1 / $2 }')"
			echo "$side report_kineto_s $(wall "$b/opscope" report "$work/synth.json")"
			echo "$side report_kineto_json_s $(wall "$b/opscope" report --format json "$work/synth.json")"
			echo "$side report_real_s $(wall report_real "$b/opscope")"
			echo "$side export_chrome_s $(wall "$b/opscope" export -q -f chrome -o "$work/x.json" "$work/stream.opscope")"
		} >>"$work/samples"
	done
	echo "round $r of $rounds done"
done

# load_opscope_s is seconds per MB (the inverse of bench_load's best MB/s): smaller is better,
# like every other measure here.
echo
printf '%-24s %12s %12s %9s\n' measure old new new/old
awk '{ k = $2; v = $3 + 0; if (!((($1, k) in best)) || v < best[$1, k]) best[$1, k] = v; keys[k] = 1 }
	END { for (k in keys) printf "%-24s %12.6g %12.6g %9.3f\n", k, best["old", k], best["new", k],
		best["new", k] / best["old", k] }' "$work/samples" | sort
