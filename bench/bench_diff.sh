#!/usr/bin/env bash
# bench_diff.sh: the time of `opscope diff A B` on two synthetic Kineto traces of $SIZE
# (bench/gen_kineto, seeds 1 and 2) next to one `opscope report A`, same build, same run, and
# their ratio. Issue 20's target: on 1 GiB traces the diff takes under twice one report (it
# loads two traces, so 2.0 is what loading alone costs).
#
#   bench/bench_diff.sh                      # SIZE=1G, best of REPEAT=3
#   SIZE=200M REPEAT=1 bench/bench_diff.sh   # a quicker run
#
# Env: SIZE (default 1G), REPEAT (runs per measure, best wall kept, default 3), OPSCOPE (a CLI
# to use instead of building build/bench), BUILD (default build/bench).
# Each command is timed as a whole process (start, load, analyse, print to /dev/null).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=${BUILD:-$root/build/bench}
size=${SIZE:-1G}
repeat=${REPEAT:-3}
work=$(mktemp -d "${TMPDIR:-/tmp}/opscope-diff.XXXXXX")
trap 'rm -rf "$work"' EXIT

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPSCOPE_TESTS=OFF \
	-DOPSCOPE_BENCH=ON >"$work/build.log" 2>&1 || { tail -5 "$work/build.log" >&2; exit 1; }
targets=gen_kineto
[ -n "${OPSCOPE:-}" ] || targets="$targets opscope_cli"
# shellcheck disable=SC2086
cmake --build "$build" -j "$(nproc)" --target $targets >>"$work/build.log" 2>&1 ||
	{ tail -5 "$work/build.log" >&2; exit 1; }
opscope=${OPSCOPE:-$build/opscope}

"$build/bench/gen_kineto" "$size" "$work/a.json" --seed 1 >/dev/null
"$build/bench/gen_kineto" "$size" "$work/b.json" --seed 2 >/dev/null

# best wall time in seconds of REPEAT runs of "$@"
best() {
	local b= t0 t1 t
	for _ in $(seq "$repeat"); do
		t0=$(date +%s.%N)
		"$@" >/dev/null
		t1=$(date +%s.%N)
		t=$(echo "$t1 - $t0" | bc -l)
		if [ -z "$b" ] || [ "$(echo "$t < $b" | bc -l)" -eq 1 ]; then b=$t; fi
	done
	printf '%.3f' "$b"
}

rep=$(best "$opscope" report "$work/a.json")
dif=$(best "$opscope" diff "$work/a.json" "$work/b.json")
bytes=$(stat -c %s "$work/a.json")
ratio=$(echo "$dif / $rep" | bc -l)
printf 'bench_diff: SIZE=%s (%d bytes each) cpus=%d best of %d\n' "$size" "$bytes" "$(nproc)" "$repeat"
printf '  report A      %8.3f s\n' "$rep"
printf '  diff A B      %8.3f s\n' "$dif"
printf '  ratio         %8.2f  (target < 2.00)\n' "$ratio"
