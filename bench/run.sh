#!/usr/bin/env bash
# bench/run.sh: every benchmark of the recording core, side by side with its peers, in one
# run. Threads are not pinned: each tool's own background thread (our writer, Tracy's
# worker) runs on the other core, as it would in a real program. Prints a table and writes bench/results.json (merging with keys other benchmarks wrote).
#
#   bench/run.sh                 # Tracy from $TRACY_SRC (a checkout or a bare git dir)
#
# Peers are built outside the repository (in a temp dir) from their public source; none of
# their code is committed. Without TRACY_SRC the Tracy figure is reported as null.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=$root/build/bench
work=$(mktemp -d /tmp/opscope-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
py=/usr/bin/python3

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPSCOPE_TESTS=OFF \
	-DOPSCOPE_BENCH=ON >/dev/null
cmake --build "$build" -j "$(nproc)" >/dev/null

results=$work/results.txt
: >"$results"
run() { "$@" | tee -a "$results"; }

echo "== host ranges"
run "$build/bench/bench_record" pairs
run "$build/bench/bench_record" pairs2

echo "== Tracy (peer)"
tracy_src=${TRACY_SRC:-/work/.mirror/wolfpld+tracy/repo}
if [ -d "$tracy_src/public" ]; then
	tsrc=$tracy_src
elif [ -d "$tracy_src" ] && git --git-dir="$tracy_src" rev-parse HEAD >/dev/null 2>&1; then
	mkdir -p "$work/tracy"
	(git --git-dir="$tracy_src" archive HEAD public 2>/dev/null || true) | tar -x -C "$work/tracy"
	tsrc=$work/tracy
	[ -f "$tsrc/public/TracyClient.cpp" ] || tsrc=
else
	tsrc=
fi
if [ -n "$tsrc" ]; then
	g++ -O2 -std=c++17 -DTRACY_ENABLE -I"$tsrc/public" -c "$tsrc/public/TracyClient.cpp" \
		-o "$work/TracyClient.o"
	gcc -O2 -DTRACY_ENABLE -I"$tsrc/public" bench/bench_tracy.c "$work/TracyClient.o" \
		-o "$work/bench_tracy" -lstdc++ -lpthread -ldl
	run "$work/bench_tracy"
else
	echo "tracy_pair_ns null" | tee -a "$results"
fi

echo "== NVTX push/pop"
if [ -x "$build/bench/bench_nvtx" ]; then
	run "$build/bench/bench_nvtx" nvtx_notool_pair_ns
	NVTX_INJECTION64_PATH=$build/libopscope.so OPSCOPE_AUTOSTART=1 \
		OPSCOPE_OUTPUT=$work/nvtx.opscope OPSCOPE_BUFFER_MB=512 \
		"$build/bench/bench_nvtx" nvtx_pair_ns | tee -a "$results"
	"$build/opscope" info "$work/nvtx.opscope" | grep -iE 'events|drop' | head -5 || true
else
	echo "nvtx_pair_ns null" | tee -a "$results"
fi

echo "== bytes per event (2 M events, 200 names, nesting 1-4, 0-2 us apart)"
for mode in none zstd; do
	"$build/bench/bench_record" stream "$work/stream_$mode.opscope" "$mode" >"$work/stream_$mode.txt"
	ev=$(awk '$1=="events"{print $2}' "$work/stream_$mode.txt")
	by=$(awk '$1=="bytes"{print $2}' "$work/stream_$mode.txt")
	key=bytes_per_event_raw
	[ "$mode" = zstd ] && key=bytes_per_event_zstd
	echo "$key $($py -c "print(round($by/$ev, 3))")" | tee -a "$results"
done

echo "== Chrome JSON export of the same stream"
t0=$(date +%s.%N)
"$build/opscope" export "$work/stream_none.opscope" --format chrome -o "$work/stream.json"
t1=$(date +%s.%N)
ev=$(awk '$1=="events"{print $2}' "$work/stream_none.txt")
js=$(stat -c %s "$work/stream.json")
echo "chrome_json_bytes_per_event $($py -c "print(round($js/$ev, 1))")" | tee -a "$results"
echo "export_chrome_mb_per_s $($py -c "print(round($js/1e6/($t1-$t0), 1))")" | tee -a "$results"

echo "== loading the same stream into the model (in process, one core)"
"$build/bench/bench_load" "$work/stream_none.opscope" 30 | grep native_load | tee -a "$results"

echo "== writer (encode + write, 4 M events)"
run "$build/bench/bench_record" writer

$py - "$results" "$root/bench/results.json" <<'PY'
import json, os, platform, sys
vals = {}
for line in open(sys.argv[1]):
    parts = line.split()
    if len(parts) == 2:
        k, v = parts
        vals[k] = None if v == "null" else float(v)
vals["writer_events_per_s"] = vals.get("writer_events_per_s_zstd")
out = sys.argv[2]
data = json.load(open(out)) if os.path.exists(out) else {}
data.update(vals)
cs = open("/sys/devices/system/clocksource/clocksource0/current_clocksource").read().strip()
data["machine"] = {"cpu": [l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                           if l.startswith("model name")][0],
                   "cores": os.cpu_count(), "kernel": platform.release(), "clocksource": cs}
f, r = vals.get("floor_pair_ns"), vals.get("range_pair_ns")
t = vals.get("tracy_pair_ns")
data["ratios"] = {
    "range_over_floor": round(r / f, 3) if f and r else None,
    "range_over_tracy": round(r / t, 3) if t and r else None,
    "nvtx_over_floor": round(vals["nvtx_pair_ns"] / f, 3) if vals.get("nvtx_pair_ns") and f else None,
}
json.dump(data, open(out, "w"), indent=2, sort_keys=True)
print("\n%-32s %s" % ("key", "value"))
for k in sorted(vals):
    print("%-32s %s" % (k, vals[k]))
for k, v in data["ratios"].items():
    print("%-32s %s" % (k, v))
PY
