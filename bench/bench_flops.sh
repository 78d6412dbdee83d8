#!/usr/bin/env bash
# bench/bench_flops.sh: what the flops view adds to `opscope report` (issue 19's target: at most
# 10% on the 1 GiB synthetic trace). One trace from bench/gen_kineto (ResNet-50-like operators
# with "Input Dims", "Input type" and sequence numbers), then, alternating so that the machine's
# drift falls on both alike, REPEAT runs each of
#   base:  opscope report --views <every view but flops and advice>  (the advisor runs the
#          flops analysis too: it is left out of both)
#   flops: opscope report --views <the same>,flops
#   alone: opscope report --views flops                   (the view by itself)
# wall time of the whole process (load, analyse, print to /dev/null), best of each kept, and
# the ratio flops / base. Peak RSS of each, from /usr/bin/time.
#
#   bench/bench_flops.sh                 # SIZE=1G, REPEAT=5
#   SIZE=200M REPEAT=3 bench/bench_flops.sh
#
# Env: SIZE (default 1G), REPEAT (default 5), BUILD (default build/bench), OPSCOPE (a CLI to use
# instead of the one built here).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-$PWD/build/bench}
size=${SIZE:-1G}
repeat=${REPEAT:-5}
work=$(mktemp -d "${TMPDIR:-/tmp}/opscope-flops.XXXXXX")
trap 'rm -rf "$work"' EXIT

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPSCOPE_TESTS=OFF \
	-DOPSCOPE_BENCH=ON >"$work/build.log" 2>&1
cmake --build "$build" -j "$(nproc)" --target opscope_cli gen_kineto >>"$work/build.log" 2>&1
opscope=${OPSCOPE:-$build/opscope}
trace=$work/synthetic.json
"$build/bench/gen_kineto" "$size" "$trace"
bytes=$(stat -c %s "$trace")

views=$("$opscope" report --help | awk '/--views/{on=1; next} /--sort/{on=0} on {print $1}' |
	grep -v -e '^flops$' -e '^advice$' | paste -sd, -)

# run NAME ARGS...: one timed run; appends "wall rss" to $work/NAME
run() {
	local name=$1
	shift
	/usr/bin/time -f '%e %M' -o "$work/t" "$opscope" report "$@" "$trace" >/dev/null
	cat "$work/t" >>"$work/$name"
}
for ((i = 0; i < repeat; i++)); do
	run base --views "$views"
	run flops --views "$views,flops"
	run alone --views flops
done
best() { sort -n "$work/$1" | head -1; }
read -r base_s base_kb < <(best base)
read -r flops_s flops_kb < <(best flops)
read -r alone_s alone_kb < <(best alone)
ratio=$(awk -v a="$flops_s" -v b="$base_s" 'BEGIN { printf "%.3f", a / b }')
echo "trace: $size synthetic ($bytes bytes), $repeat alternating runs each, best wall time"
printf '%-44s %8s s  %8s MB RSS\n' "report, every view but flops, advice (base)" "$base_s" "$((base_kb / 1024))"
printf '%-44s %8s s  %8s MB RSS\n' "report, the same and flops" "$flops_s" "$((flops_kb / 1024))"
printf '%-44s %8s s  %8s MB RSS\n' "report --views flops alone" "$alone_s" "$((alone_kb / 1024))"
echo "flops / base: ${ratio}x (target: at most 1.10x)"
