#!/bin/bash
# bench_unwind.sh: what the sampler's .eh_frame unwinding (src/record/unwind.c) costs per
# sample, on a Python workload: Debian's /usr/bin/python3 (no frame pointers) running
# tests/programs/sample_loops.py (a pure-Python loop, then a numpy loop) under
# `opscope record --sample=HZ`, through perf_event (unwound in the sampler thread from the
# stack copies) and through the SIGPROF timers (unwound in the handler). Each run prints the
# recorder's own `unwind` line (OPSCOPE_UNWIND_STATS=1): walks, frames, truncated walks, the
# cache's hit rate, the mean time of a walk and of the walks that only hit the cache, timed
# around unwind_walk with the trace clock.
# Usage: bench/bench_unwind.sh BUILD_DIR [HZ=999] [ROUNDS=3]
set -eu
B=${1:?usage: bench_unwind.sh BUILD_DIR [HZ] [ROUNDS]}
HZ=${2:-999} ROUNDS=${3:-3}
SRC=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
for mech in perf timer; do
	for r in $(seq "$ROUNDS"); do
		OPSCOPE_SAMPLE_MECH=$mech OPSCOPE_UNWIND_STATS=1 "$B/opscope" record -f \
			-o "$T/u.opscope" --sample="$HZ" -- /usr/bin/python3 \
			"$SRC/tests/programs/sample_loops.py" 2>&1 >/dev/null |
			sed -n "s/^opscope: unwind: /$mech: /p"
	done
done
