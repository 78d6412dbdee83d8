#!/usr/bin/env bash
# bench_nsys.sh: the Nsight Systems SQLite importer (src/formats/nsys) against reading the same
# tables through Python's sqlite3, in one run, on one input (issue 18's target: events per
# second, as a ratio).
#
# The input is ../shared/data/nsys/.../profile1.sqlite.gz (335 events) grown by doubling: each
# round appends a copy of every event table's rows shifted past the previous ones in time and
# in correlation id, so launches still find their kernels; ROUNDS=12 gives 1.37 M events.
#   opscope: bench_load (the import into the model in process: SQLite reads, strings, tracks,
#            nesting, flows; best of RUNS)
#   python:  /usr/bin/python3: StringIds into a dict, then every row of the same tables with
#            the same columns, names resolved through the dict, kept in lists (best of RUNS)
# Events are the rows of the kernel, memcpy, memset, synchronization, runtime and NVTX
# range/mark tables: what the importer turns into ranges and instants.
# Usage: bench/bench_nsys.sh [ROUNDS] [RUNS]   (builds build/bench like bench/run.sh;
# KEEP=1 keeps the grown database in /tmp/opscope-bench-nsys.*, for perf)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
rounds=${1:-12}
runs=${2:-5}
build=$root/build/bench
py=/usr/bin/python3
src=$root/../shared/data/nsys/concurrent_example/concurrent.s1/profile1.sqlite.gz
work=$(mktemp -d /tmp/opscope-bench-nsys.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
[ -x "$build/bench/bench_load" ] || {
	cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPSCOPE_TESTS=OFF \
		-DOPSCOPE_BENCH=ON >/dev/null
	cmake --build "$build" -j 2 --target bench_load >/dev/null
}

db=$work/big.sqlite
zcat "$src" >"$db"
{
	for t in KERNEL MEMCPY MEMSET SYNCHRONIZATION RUNTIME; do
		echo "CREATE TEMP TABLE x_$t AS SELECT * FROM CUPTI_ACTIVITY_KIND_$t;"
	done
	echo "CREATE TEMP TABLE x_NVTX AS SELECT * FROM NVTX_EVENTS WHERE eventType != 75;"
	span=1000000000 corr=1000000
	for ((i = 0; i < rounds; i++)); do
		for t in KERNEL MEMCPY MEMSET SYNCHRONIZATION RUNTIME; do
			echo "UPDATE x_$t SET start = start + $span, end = end + $span, correlationId = correlationId + $corr;"
			echo "INSERT INTO CUPTI_ACTIVITY_KIND_$t SELECT * FROM x_$t;"
			echo "DELETE FROM x_$t; INSERT INTO x_$t SELECT * FROM CUPTI_ACTIVITY_KIND_$t;"
		done
		echo "UPDATE x_NVTX SET start = start + $span, end = end + $span;"
		echo "INSERT INTO NVTX_EVENTS SELECT * FROM x_NVTX;"
		echo "DELETE FROM x_NVTX; INSERT INTO x_NVTX SELECT * FROM NVTX_EVENTS WHERE eventType != 75;"
		span=$((span * 2)) corr=$((corr * 2))
	done
	echo "VACUUM;"
} | sqlite3 "$db"

cat >"$work/read.py" <<'PY'
import sqlite3, sys, time
path, runs = sys.argv[1], int(sys.argv[2])
dev = "start, end, deviceId, contextId, streamId, correlationId, globalPid"
queries = [
    "SELECT start, end, globalTid, correlationId, nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME",
    "SELECT " + dev + ", demangledName, gridX, gridY, gridZ, blockX, blockY, blockZ,"
    " registersPerThread, staticSharedMemory, dynamicSharedMemory FROM CUPTI_ACTIVITY_KIND_KERNEL",
    "SELECT " + dev + ", bytes, copyKind, srcKind, dstKind FROM CUPTI_ACTIVITY_KIND_MEMCPY",
    "SELECT " + dev + ", bytes, memKind, value FROM CUPTI_ACTIVITY_KIND_MEMSET",
    "SELECT " + dev + ", syncType FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
    "SELECT start, end, eventType, text, textId, domainId, globalTid FROM NVTX_EVENTS"
    " WHERE eventType IN (34, 59, 60)",
]
best, events = 1e30, 0
for _ in range(runs):
    t0 = time.perf_counter()
    db = sqlite3.connect("file:" + path + "?mode=ro", uri=True)
    db.text_factory = bytes  # StringIds may hold bytes that are not UTF-8
    strings = dict(db.execute("SELECT id, value FROM StringIds"))
    rows = []
    for q in queries:
        for r in db.execute(q):
            # the name through the strings, as the importer interns it
            rows.append((r, strings.get(r[4] if "nameId" in q else r[7] if "demangled" in q else None)))
    db.close()
    dt = time.perf_counter() - t0
    best, events = min(best, dt), len(rows)
print(f"python_events {events}")
print(f"python_events_per_s {events / best:.0f}")
PY

ours=$("$build/bench/bench_load" "$db" "$runs")
theirs=$($py "$work/read.py" "$db" "$runs")
e_ours=$(echo "$ours" | awk '/native_load_events_per_s/ {print $2}')
e_py=$(echo "$theirs" | awk '/python_events_per_s/ {print $2}')
n_py=$(echo "$theirs" | awk '/python_events / {print $2}')
n_ours=$("$build/opscope" info "$db" | awk '/^events:/ {print $2}')
echo "input_bytes $(stat -c %s "$db")"
echo "events $n_ours (python rows $n_py)"
echo "opscope_import_events_per_s $e_ours"
echo "python_sqlite3_rows_per_s $e_py"
awk -v a="$e_ours" -v b="$e_py" 'BEGIN { printf "ratio_opscope_over_python %.2f\n", a / b }'
