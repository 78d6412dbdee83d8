#!/usr/bin/env bash
# bench/bench_ingest.sh: how fast `opscope report` reads PyTorch profiler (Kineto) JSON, side by
# side in one run with
#   - a plain Python baseline: /usr/bin/python3, json.load + a dict aggregation of the kernel
#     table (name -> calls, total);
#   - Holistic Trace Analysis (facebookresearch/HolisticTraceAnalysis, public source, run with
#     Debian's pandas): TraceAnalysis(trace_dir=...), its whole trace load;
# on the real traces of shared/data/kineto (decompressed to a temp dir; opscope also on the
# .gz) and on a synthetic trace of $SIZE from bench/gen_kineto. Reports MB/s of JSON text
# (uncompressed bytes / 1e6 / s), events/s, wall time, peak RSS (/usr/bin/time %M), and
# writes bench/results.json (merging with the keys other benchmarks wrote).
#
#   bench/bench_ingest.sh
#   SIZE=200M REPEAT=1 bench/bench_ingest.sh       # a quicker run
#
# Env: SIZE (synthetic trace, default 1G), REPEAT (runs per measure, best wall kept, default 3;
# the peers run once on the synthetic trace), OPSCOPE (a CLI to use instead of building
# build/bench), HTA_SRC (a checkout or bare git dir of HTA; default: the fetched mirror),
# DATA (default ../shared/data/kineto), NO_HTA=1, NO_GZ_SYNTH=1 (skip gzip of the synthetic),
# RESULTS (the JSON file to merge into, default bench/results.json).
#
# opscope is timed as a whole process (start, read, analyse, print); the peers are timed
# inside their process, from just before the load to just after it, leaving out the
# interpreter's start and their imports (0.5 s for HTA): the comparison favours them.
# HTA's code is extracted to the temp dir and never copied into the repository.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=${BUILD:-$root/build/bench}
size=${SIZE:-1G}
repeat=${REPEAT:-3}
data=${DATA:-$root/../shared/data/kineto}
hta_src=${HTA_SRC:-/work/.mirror/facebookresearch+HolisticTraceAnalysis/repo}
py=/usr/bin/python3
work=$(mktemp -d "${TMPDIR:-/tmp}/opscope-ingest.XXXXXX")
trap 'rm -rf "$work"' EXIT

if ! { [ -x /usr/bin/time ] && $py -c 'import pandas, plotly, ijson, psutil, yaml' 2>/dev/null; }; then
	scripts/install-deps.sh --bench
fi

# ------------------------------------------------------------------ build
gen=
if [ -n "${OPSCOPE:-}" ]; then
	opscope=$OPSCOPE
	cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPSCOPE_TESTS=OFF \
		-DOPSCOPE_BENCH=ON >/dev/null 2>&1 &&
		cmake --build "$build" --target gen_kineto >/dev/null 2>&1 && gen=$build/bench/gen_kineto
else
	opscope=$build/opscope
	if cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPSCOPE_TESTS=OFF \
		-DOPSCOPE_BENCH=ON >"$work/build.log" 2>&1 &&
		cmake --build "$build" -j "$(nproc)" --target opscope_cli gen_kineto >>"$work/build.log" 2>&1; then
		gen=$build/bench/gen_kineto
	else
		echo "bench_ingest: the build failed (last lines below); opscope is skipped" >&2
		tail -5 "$work/build.log" >&2
		opscope=
	fi
fi
if [ -z "$gen" ]; then
	cc -std=c11 -O2 -o "$work/gen_kineto" bench/gen_kineto.c
	gen=$work/gen_kineto
fi
have_report=0
if [ -n "$opscope" ] && "$opscope" report --help >/dev/null 2>&1; then
	have_report=1
else
	echo "bench_ingest: SKIP opscope: '${opscope:-opscope} report' is not available (not built yet?);" \
		"measuring the Python baseline and HTA only" >&2
fi

# ------------------------------------------------------------------ inputs
# label|path (relative to $data)
inputs=(
	"resnet50_w0|tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"
	"resnet50_w4|tb_plugin/samples/resnet50_num_workers_4/worker0.1623212756351.pt.trace.json.gz"
	"ns_resolution|hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"
	"nccl|hta/nccl_parser_config/nccl_data.json.gz"
	"amd_mi250|hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz"
	"trace_filter_r0|hta/trace_filter/sampled_rank-0.json.gz"
	"mtia|hta/mtia_trace_single_rank/mtia_rank_0.json.gz"
)
mkdir -p "$work/plain" "$work/gz"
labels=()
if [ -d "$data" ]; then
	for e in "${inputs[@]}"; do
		label=${e%%|*}
		src=$data/${e#*|}
		[ -f "$src" ] || { echo "bench_ingest: missing $src, skipped" >&2; continue; }
		gzip -dc "$src" >"$work/plain/$label.json"
		cp "$src" "$work/gz/$label.json.gz"
		labels+=("$label")
	done
else
	echo "bench_ingest: no data folder $data: synthetic trace only" >&2
fi
echo "== synthetic trace: gen_kineto $size"
"$gen" "$size" "$work/plain/synthetic.json" | tee "$work/gen.txt"
labels+=(synthetic)
if [ -z "${NO_GZ_SYNTH:-}" ]; then
	gzip -6 -c "$work/plain/synthetic.json" >"$work/gz/synthetic.json.gz"
fi

# ------------------------------------------------------------------ measuring
# rows: label tool wall_s peak_rss_kb inner_s events status
rows=$work/rows.tsv
: >"$rows"

# measure LABEL TOOL REPS CMD...: best wall of REPS runs, peak RSS of that run; a peer's
# stdout may carry "inner_s X" and "events N"
measure() {
	local label=$1 tool=$2 reps=$3
	shift 3
	local best= rss= inner= events= i t0 t1 w
	for ((i = 0; i < reps; i++)); do
		t0=$(date +%s%N)
		if ! /usr/bin/time -f %M -o "$work/rss" "$@" >"$work/out" 2>"$work/err"; then
			printf '%s\t%s\t\t\t\t\t%s\n' "$label" "$tool" \
				"failed: $(tail -c 300 "$work/err" | tr '\t\n' '  ')" >>"$rows"
			echo "  $tool on $label: FAILED (see results)" >&2
			return 0
		fi
		t1=$(date +%s%N)
		w=$(((t1 - t0) / 1000))
		if [ -z "$best" ] || [ "$w" -lt "$best" ]; then
			best=$w
			rss=$(tail -1 "$work/rss")
			case $tool in
			opscope*) ;;
			*)
				inner=$(awk '$1=="inner_s"{print $2}' "$work/out")
				events=$(awk '$1=="events"{print $2}' "$work/out")
				;;
			esac
		fi
	done
	printf '%s\t%s\t%s\t%s\t%s\t%s\tok\n' "$label" "$tool" "$((best / 1000000)).$(printf %06d $((best % 1000000)))" \
		"$rss" "$inner" "$events" >>"$rows"
	echo "  $tool on $label: $((best / 1000)) ms, $rss KB"
}

cat >"$work/pyjson.py" <<'PY'
import json, sys, time
t = time.perf_counter()
with open(sys.argv[1], "rb") as f:
    doc = json.load(f)
events = doc["traceEvents"] if isinstance(doc, dict) else doc
table = {}
for ev in events:
    if ev.get("ph") == "X" and ev.get("cat") in ("kernel", "Kernel"):
        row = table.get(ev["name"])
        if row is None:
            table[ev["name"]] = row = [0, 0.0]
        row[0] += 1
        row[1] += ev.get("dur", 0)
t = time.perf_counter() - t
print("inner_s %.6f" % t)
print("events %d" % len(events))
print("kernel_names %d" % len(table))
PY

cat >"$work/hta_load.py" <<'PY'
import logging, sys, time
from hta.configs.config import logger
logger.setLevel(logging.ERROR)
from hta.trace_analysis import TraceAnalysis
t = time.perf_counter()
a = TraceAnalysis(trace_dir=sys.argv[1])
t = time.perf_counter() - t
df = a.t.get_trace(0)
print("inner_s %.6f" % t)
print("rows %d" % len(df))
PY

hta=
hta_commit=
if [ -z "${NO_HTA:-}" ]; then
	if [ -d "$hta_src/hta" ]; then
		hta=$hta_src
		hta_commit=$(git -C "$hta_src" rev-parse HEAD 2>/dev/null || echo unknown)
	elif git --git-dir="$hta_src" rev-parse HEAD >/dev/null 2>&1; then
		mkdir -p "$work/hta"
		git --git-dir="$hta_src" archive HEAD hta LICENSE | tar -x -C "$work/hta"
		hta=$work/hta
		hta_commit=$(git --git-dir="$hta_src" rev-parse HEAD)
	else
		echo "bench_ingest: no HTA source at $hta_src (fetch facebookresearch/HolisticTraceAnalysis): HTA skipped" >&2
	fi
fi

for label in "${labels[@]}"; do
	f=$work/plain/$label.json
	reps=$repeat
	peer_reps=$repeat
	[ "$label" = synthetic ] && peer_reps=1
	echo "== $label ($(stat -c %s "$f") bytes)"
	if [ $have_report = 1 ]; then
		measure "$label" opscope_text "$reps" "$opscope" report "$f"
		measure "$label" opscope_json "$reps" "$opscope" report --format json "$f"
		# the same report with every argument loaded (a report keeps only those its
		# views read: docs/import-kineto.md), which is also what info/export/dump load
		measure "$label" opscope_json_all_args "$reps" env OPSCOPE_REPORT_ALL_ARGS=1 \
			"$opscope" report --format json "$f"
		[ -f "$work/gz/$label.json.gz" ] &&
			measure "$label" opscope_json_gz "$reps" "$opscope" report --format json "$work/gz/$label.json.gz"
		if [ "$label" = synthetic ]; then
			"$opscope" report --format json --views kernel,overview "$f" >"$work/synthetic.report.json" ||
				echo "  opscope report --views kernel,overview failed on the synthetic trace" >&2
		fi
	fi
	measure "$label" python_json "$peer_reps" $py "$work/pyjson.py" "$f"
	if [ -n "$hta" ]; then
		mkdir -p "$work/hta_dirs/$label"
		ln -sf "$f" "$work/hta_dirs/$label/$label.json"
		PYTHONPATH=$hta measure "$label" hta "$peer_reps" $py "$work/hta_load.py" "$work/hta_dirs/$label"
	fi
done

# ------------------------------------------------------------------ results
$py - "$rows" "$work" "${RESULTS:-$root/bench/results.json}" "$have_report" "$hta_commit" "$repeat" "$size" <<'PY'
import json, os, platform, sys
rows_path, work, out, have_report, hta_commit, repeat, size = sys.argv[1:]
have_report = have_report == "1"
gen = dict(zip(*[iter(open(os.path.join(work, "gen.txt")).read().split())] * 2))
details = {}
for line in open(rows_path):
    label, tool, wall, rss, inner, events, status = line.rstrip("\n").split("\t")
    d = details.setdefault(label, {})
    f = os.path.join(work, "plain", label + ".json")
    d["json_bytes"] = os.path.getsize(f)
    gz = os.path.join(work, "gz", label + ".json.gz")
    if os.path.exists(gz):
        d["gz_bytes"] = os.path.getsize(gz)
    if events:
        d["events"] = int(events)
    if label == "synthetic":
        d["events"] = int(gen["events"])
    if status != "ok":
        d[tool] = {"error": status}
        continue
    secs = float(inner) if inner else float(wall)
    d[tool] = {"wall_s": round(float(wall), 4), "timed_s": round(secs, 4),
               "peak_rss_kb": int(rss),
               "mb_per_s": round(d["json_bytes"] / 1e6 / secs, 1) if secs > 0 else None,
               "peak_rss_over_input": round(int(rss) * 1024 / d["json_bytes"], 3)}
for d in details.values():  # events/s once every row has its count
    for tool, m in d.items():
        if isinstance(m, dict) and "timed_s" in m and d.get("events") and m["timed_s"] > 0:
            m["events_per_s"] = round(d["events"] / m["timed_s"])

def agg(tool, labels):
    b = t = 0
    for l in labels:
        m = details.get(l, {}).get(tool)
        if not m or "timed_s" not in m:
            return None
        b += details[l]["json_bytes"]
        t += m["timed_s"]
    return round(b / 1e6 / t, 1) if t else None

real = [l for l in details if l != "synthetic"]
syn = details.get("synthetic", {})
def syn_fig(tool, key):
    m = syn.get(tool)
    return m.get(key) if isinstance(m, dict) else None

data = json.load(open(out)) if os.path.exists(out) else {}
new = {
    "python_json_mb_per_s": syn_fig("python_json", "mb_per_s"),
    "hta_mb_per_s": syn_fig("hta", "mb_per_s"),
}
if have_report:
    new["json_ingest_mb_per_s"] = syn_fig("opscope_json", "mb_per_s")
    new["json_ingest_events_per_s"] = syn_fig("opscope_json", "events_per_s")
    new["report_peak_rss_over_input"] = syn_fig("opscope_json", "peak_rss_over_input")
    new["json_ingest_all_args_mb_per_s"] = syn_fig("opscope_json_all_args", "mb_per_s")
    # the report's kernel table against the generator's own totals
    try:
        rep = json.load(open(os.path.join(work, "synthetic.report.json")))
        kt = [t for t in rep["tables"] if t["view"] == "kernel"][0]
        calls = sum(r["calls"] for r in kt["rows"])
        total = sum(r["total_ns"] for r in kt["rows"])
        ok = calls == int(gen["kernels"]) and total == int(gen["kernel_total_ns"])
        syn["report_check"] = "ok" if ok else "MISMATCH: report %d calls %d ns, generator %s calls %s ns" % (
            calls, total, gen["kernels"], gen["kernel_total_ns"])
    except Exception as e:  # noqa: BLE001 - reported, not fatal
        syn["report_check"] = "could not check: %r" % (e,)
ratios = data.get("ingest_ratios", {})
def ratio(a, b):
    return round(a / b, 2) if a and b else None
if have_report:
    ratios = {"opscope_json_over_python": ratio(new.get("json_ingest_mb_per_s"), new["python_json_mb_per_s"]),
              "opscope_json_over_hta": ratio(new.get("json_ingest_mb_per_s"), new["hta_mb_per_s"])}
data.update({k: v for k, v in new.items()})
data["ingest_ratios"] = ratios
data["ingest_real_traces_mb_per_s"] = {t: agg(t, real) for t in
                                       ("opscope_text", "opscope_json", "opscope_json_all_args",
                                        "opscope_json_gz", "python_json", "hta")
                                       if agg(t, real) is not None}
data["ingest_details"] = details
try:
    import pandas
    pv = pandas.__version__
except Exception:  # noqa: BLE001
    pv = None
data["ingest_env"] = {"python": platform.python_version(), "pandas": pv, "hta_commit": hta_commit or None,
                      "repeat": int(repeat), "synthetic_size": size,
                      "opscope_measured": have_report,
                      "timing": "opscope: whole process; peers: inside the process, load only"}
json.dump(data, open(out, "w"), indent=2)
open(out, "a").write("\n")

tools = ("opscope_text", "opscope_json", "opscope_json_all_args", "opscope_json_gz", "python_json",
         "hta")
print("\n%-16s %11s %9s | %s" % ("trace", "JSON bytes", "events",
                                   " | ".join("%-24s" % t for t in tools)))
print("%-16s %11s %9s | %s" % ("", "", "", " | ".join("%-24s" % "MB/s   s   RSS/input" for t in tools)))
for label, d in details.items():
    cells = []
    for t in tools:
        m = d.get(t)
        if m is None:
            cells.append("%-24s" % "-")
        elif "error" in m:
            cells.append("%-24s" % "failed")
        else:
            cells.append("%-24s" % ("%7.1f %7.3f %6.2f" % (m["mb_per_s"], m["timed_s"], m["peak_rss_over_input"])))
    print("%-16s %11d %9s | %s" % (label, d["json_bytes"], d.get("events", "?"), " | ".join(cells)))
print()
for k in ("json_ingest_mb_per_s", "json_ingest_all_args_mb_per_s", "json_ingest_events_per_s",
          "report_peak_rss_over_input",
          "python_json_mb_per_s", "hta_mb_per_s"):
    print("%-30s %s" % (k, data.get(k)))
print("%-30s %s" % ("ingest_ratios", data["ingest_ratios"]))
print("%-30s %s" % ("real traces MB/s", data["ingest_real_traces_mb_per_s"]))
if "report_check" in syn:
    print("%-30s %s" % ("synthetic report check", syn["report_check"]))
for label, d in details.items():
    for t, m in d.items():
        if isinstance(m, dict) and "error" in m:
            print("FAILED %s on %s: %s" % (t, label, m["error"]))
PY
