#!/usr/bin/env bash
# bench_cupti.sh: the CUPTI collector's cost (issue 18's targets), against the fake libcupti (a
# test double, tests/doubles/fake_cupti/: no GPU here), in one run. bench/bench_cupti.c makes N
# kernel launches on one thread; the fake times the completion callback around every call
# (complete_ns / complete_records) and the driver times its launch loop. Configurations:
#   bare        the fake with no CUPTI client: no record written (the double's launch floor)
#   walk        a minimal client of the driver's own (4 MiB buffers, walk with
#               cuptiActivityGetNextRecord, nothing else): the double's cost of CUPTI
#   host+walk   the same under `opscope record --no-gpu`, every launch in an operator range:
#               opscope's host range, no collector
#   collector   under `opscope record`: the collector is the client; every launch in an
#               operator range, so an external correlation id is pushed and popped around it
#   collector0  the collector, launches outside any range
# Figures (best of RUNS):
#   collector_ns_per_record   CPU time of the thread in the collector's callback per record
#                             minus the walk client's (the double's cuptiActivityGetNextRecord):
#                             decoding, interning, handing entries to the session's writer.
#                             CPU time, since on a shared machine the wall time in the callback
#                             also counts the time the thread waited for a core (shown too);
#                             _norange: the same from collector0 against walk (no external
#                             correlation records, which are small and cheap to decode)
#   added_launch_ns           launching thread, collector minus host+walk: what the collector
#                             adds per launch over opscope's host range and CUPTI's own work
#   added_launch_ns_norange   collector0 minus walk
# Kineto's post-processing for comparison: ../shared/FINDINGS-performance.md (torch 1.13's
# profiler parse at stop ~20 us/event [L]; key_averages ~44 us/event [3P]).
# Usage: bench/bench_cupti.sh [N] [RUNS]   (builds build/bench like bench/run.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
n=${1:-1000000}
runs=${2:-3}
build=$root/build/bench
[ -x "$build/bench/bench_cupti" ] && [ -x "$build/opscope" ] || {
	cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPSCOPE_TESTS=OFF \
		-DOPSCOPE_BENCH=ON >/dev/null
	cmake --build "$build" -j 2 --target opscope_cli opscope bench_cupti bench_fake_cupti \
		>/dev/null
}
[ -x "$build/bench/bench_cupti" ] || {
	echo "bench_cupti: not built (no cupti.h found at configure time)"
	exit 77
}
export FAKE_CUPTI_PATH=$build/bench/fake_cupti/libcupti.so.13
export OPSCOPE_CUPTI_LIB=$FAKE_CUPTI_PATH
export FAKECUPTI_BENCH=1 # the double times its callbacks, no system call per launch
work=$(mktemp -d /tmp/opscope-bench-cupti.XXXXXX)
trap 'rm -rf "$work"' EXIT
drv=$build/bench/bench_cupti

# best (lowest) launch_ns, complete_ns_per_record (wall) and complete_cpu_ns_per_record of
# RUNS runs of "$@"
best() {
	local name=$1
	shift
	local l=1e30 c=1e30 u=1e30 out
	for ((r = 0; r < runs; r++)); do
		out=$("$@")
		grep -q "dropped 0 " <<<"$out" || {
			echo "bench_cupti: $name dropped records: $out" >&2
			exit 1
		}
		l=$(awk -v a="$l" '/^launch_ns/ {print ($2 < a ? $2 : a)}' <<<"$out")
		c=$(awk -v a="$c" '/^complete_ns_per_record/ {print ($2 < a ? $2 : a)}' <<<"$out")
		u=$(awk -v a="$u" '/^complete_cpu_ns_per_record/ {print ($2 < a ? $2 : a)}' <<<"$out")
		recs=$(awk '/^records/ {print $2}' <<<"$out")
	done
	echo "$name launch_ns $l complete_ns_per_record $c complete_cpu_ns_per_record $u records $recs"
}
rec() { "$build/opscope" record -q -f -o "$work/r.opscope" "$@"; }

echo "launches $n, best of $runs; fake libcupti (test double), no GPU"
{
	best bare "$drv" bare "$n"
	best walk "$drv" walk "$n"
	best host+walk rec --no-gpu -- "$drv" walk "$n" ranges
	best collector rec -- "$drv" inject "$n" ranges
	best collector0 rec -- "$drv" inject "$n"
} | tee "$work/t"
v() { awk -v k="$1" -v f="$2" '$1 == k {for (i = 2; i < NF; i++) if ($i == f) print $(i + 1)}' "$work/t"; }
awk -v cw="$(v host+walk complete_ns_per_record)" -v cc="$(v collector complete_ns_per_record)" \
	-v uw="$(v host+walk complete_cpu_ns_per_record)" \
	-v uc="$(v collector complete_cpu_ns_per_record)" \
	-v u0="$(v walk complete_cpu_ns_per_record)" \
	-v uc0="$(v collector0 complete_cpu_ns_per_record)" \
	-v lw="$(v host+walk launch_ns)" -v lc="$(v collector launch_ns)" \
	-v l0="$(v walk launch_ns)" -v lc0="$(v collector0 launch_ns)" \
	-v lb="$(v bare launch_ns)" 'BEGIN {
	p = uc - uw
	printf "double_walk_cpu_ns_per_record %.1f (wall %.1f)\n", uw, cw
	printf "collector_callback_cpu_ns_per_record %.1f (wall %.1f)\n", uc, cc
	printf "collector_ns_per_record %.1f (cpu; wall %.1f)\n", p, cc - cw
	printf "ratio_collector_over_target_100ns %.2f\n", p / 100
	printf "collector_ns_per_record_norange %.1f (cpu: kernel + API records only)\n", uc0 - u0
	printf "ratio_collector_norange_over_target_100ns %.2f\n", (uc0 - u0) / 100
	printf "ratio_kineto_parse_20us_over_collector %.0f\n", 20000 / p
	printf "ratio_kineto_key_averages_44us_over_collector %.0f\n", 44000 / p
	printf "double_launch_ns %.1f (no client %.1f)\n", l0, lb
	printf "added_launch_ns %.1f\n", lc - lw
	printf "added_launch_ns_norange %.1f\n", lc0 - l0
	printf "ratio_added_launch_over_double_launch %.3f\n", (lc - lw) / l0
}'
