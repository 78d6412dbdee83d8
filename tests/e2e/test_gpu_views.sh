#!/usr/bin/env bash
# test_gpu_views.sh: the `gpu` (GPU Utilization) and `gpumem` (GPU Memory) views of `opscope
# report`, end to end.
#   1. Real PyTorch/Kineto traces (V100 and A100, ../shared/data/kineto) against an independent
#      checker (tests/oracle/gpu_check.py, Python's standard library): every busy time, count,
#      SM integral and memory number; the checker itself first checked against its self-test
#      and the TensorBoard plugin's own expected utilization series, and the window rows
#      against the plugin's published GPU Utilization / Est. SM Efficiency of its samples.
#   2. Our own recordings through the fake libcupti (a test double, no GPU): allocations of
#      known sizes inside known operators (cuda_fake_app --allocs), and utilization numbers
#      that must agree with the kernel table.
#   3. Asked for by name on a trace without a GPU: one line saying so, in every format.
# Env (from CTest): OPSCOPE, SRC, PROGRAMS.
set -u
: "${OPSCOPE:?}" "${SRC:?}"
. "$SRC/tests/e2e/lib.sh"
PY=/usr/bin/python3
CHECK=$SRC/tests/oracle/gpu_check.py
DATA=$SRC/../shared/data/kineto

if [ -x "$PY" ] && [ -d "$DATA" ]; then
	"$PY" "$CHECK" --self-test
	check "checker self-test" '[ $? -eq 0 ]'
	"$PY" "$CHECK" --tb-expected "$DATA/tb_plugin/test/gpu_metrics_input.json" \
		"$DATA/tb_plugin/test/gpu_metrics_expected.json"
	check "checker == the TensorBoard plugin's expected utilization buckets" '[ $? -eq 0 ]'
	# published with the plugin's samples (tb_plugin/test/result_check_file.txt): GPU
	# Utilization 55.51 %, Est. SM Efficiency 54.68 % (0 workers); 70.27 %, 69.22 % (4)
	R0=$DATA/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz
	R4=$DATA/tb_plugin/samples/resnet50_num_workers_4/worker0.1623212756351.pt.trace.json.gz
	w0=$("$OPSCOPE" report --views gpu -f csv "$R0" | awk -F, '$2 == "Window" {print $5, $7}')
	check "resnet50, 0 workers: window 55.51 % / 54.68 % (got $w0)" '[ "$w0" = "0.555141 0.546790" ]'
	w4=$("$OPSCOPE" report --views gpu -f csv "$R4" | awk -F, '$2 == "Window" {print $5, $7}')
	check "resnet50, 4 workers: window 70.27 % / 69.22 % (got $w4)" '[ "$w4" = "0.702703 0.692250" ]'
	for t in "$R0" "$DATA/hta/df_index_resolver/df_index_resolver.json.gz" \
		"$DATA/hta/trace_diff/control/control.json.gz" \
		"$DATA"/hta/ns_resolution_trace/*.gz "$DATA/hta/nccl_parser_config/nccl_data.json.gz"; do
		"$PY" "$CHECK" --opscope "$OPSCOPE" "$t"
		check "report == checker: ${t#"$DATA"/}" '[ $? -eq 0 ]'
	done
	# the memory numbers the checker agreed with, written down (df_index_resolver: 26770
	# CUDA records of the file's 28010 [memory] events, all freed)
	"$OPSCOPE" report --views gpumem -f csv "$DATA/hta/df_index_resolver/df_index_resolver.json.gz" >"$T/m.csv"
	check "df_index_resolver: 13385 allocations and frees, peak 6629508096 bytes" \
		'grep -q "^GPU1,13385,13385,52469120000,52469120000,4096614400,4096614400,6629508096,[0-9.]*,0,0,Total Allocated$" "$T/m.csv"'
else
	echo "# skipped the real traces: no $PY or no $DATA"
fi

# --- our recordings, through the fake libcupti
app=${PROGRAMS:-}/prog_cuda_fake_app
fake=${PROGRAMS:-}/fake_cupti/libcupti.so.13
if [ -x "$app" ] && [ -f "$fake" ] && [ -x "$PY" ]; then
	OPSCOPE_CUPTI_LIB=$fake "$OPSCOPE" record -q -o "$T/a.opscope" -- "$app" --allocs 2 50 >/dev/null
	check "recorded the fake CUDA program" '[ $? -eq 0 ]'
	"$OPSCOPE" report -f json --views gpu,gpumem,kernel "$T/a.opscope" >"$T/a.json"
	check "report of it" '[ $? -eq 0 ]'
	# thread t works on device t % 2: per device 50 gemm + 50 relu kernels, one stream, so
	# no two overlap and each device's busy time is the sum of its kernels; grid 64x2x1 =
	# 128 blocks on 108 SMs: every kernel is worth 1, so SM busy = kernel busy
	"$PY" - "$T/a.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
rows = lambda title: [x for t in r["tables"] if t["title"] == title for x in t["rows"]]
util, series = rows("GPU Utilization"), rows("GPU Utilization over time")
kern = sum(x["total_ns"] for x in rows("Kernel Summary"))
bad = []
if [x["device"] + "/" + x["step"] for x in util] != ["GPU0/Window", "GPU1/Window"]:
    bad.append("rows %r" % [(x["device"], x["step"]) for x in util])
if sum(x["kernel_busy_ns"] for x in util) != kern:
    bad.append("kernel busy %d != kernel table %d" % (sum(x["kernel_busy_ns"] for x in util), kern))
for x in util:
    if x["kernels"] != 100 or abs(x["sm_busy_ns"] - x["kernel_busy_ns"]) > 1 or \
            x["device_busy_ns"] <= x["kernel_busy_ns"]:
        bad.append("row %r" % x)
    b = [y for y in series if y["device"] == x["device"]]
    if not 0 < len(b) <= 100 or sum(y["duration_ns"] for y in b) != x["duration_ns"] or \
            sum(y["kernel_busy_ns"] for y in b) != x["kernel_busy_ns"] or \
            sum(y["kernels"] for y in b) != 100:
        bad.append("buckets of %s" % x["device"])
print("\n".join(bad))
sys.exit(1 if bad else 0)
EOF
	check "gpu: 100 kernels per device, busy = kernel table, SM = kernel busy, buckets add up" '[ $? -eq 0 ]'
	# 1 MiB on each device at start (outside any range: launched by "", JSON's empty text),
	# freed at the end; --allocs: aten::empty 2 MiB (dev 0,
	# freed after the workers) and 3 MiB (dev 1, never freed), aten::zeros 4 MiB (dev 0,
	# never freed). Device 0: 3 allocations (7 MiB), 2 frees (3 MiB), peak 7 MiB, 4 MiB
	# left; device 1: 2 allocations (4 MiB), 1 free (1 MiB), peak 4 MiB, 3 MiB left.
	"$PY" - "$T/a.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
rows = lambda title: [x for t in r["tables"] if t["title"] == title for x in t["rows"]]
M = 1 << 20
want = {"GPU0": (3, 2, 7 * M, 3 * M, 0, 4 * M, 7 * M, 1, 4 * M),
        "GPU1": (2, 1, 4 * M, 1 * M, 0, 3 * M, 4 * M, 1, 3 * M)}
keys = ("allocations", "frees", "allocated_bytes", "freed_bytes", "start_bytes", "end_bytes",
        "peak_bytes", "never_freed", "never_freed_bytes")
bad = []
for x in rows("GPU Memory"):
    got = tuple(x[k] for k in keys)
    if got != want.get(x["device"]):
        bad.append("%s: %r, want %r" % (x["device"], got, want.get(x["device"])))
big = [(x["device"], x["bytes"], x["freed"], x["launched_by"]) for x in rows("GPU Memory: Largest Allocations")]
if big != [("GPU0", 4 * M, "no", "aten::zeros"), ("GPU0", 2 * M, "yes", "aten::empty"),
           ("GPU0", M, "yes", ""), ("GPU1", 3 * M, "no", "aten::empty"), ("GPU1", M, "yes", "")]:
    bad.append("largest: %r" % big)
leaks = [(x["device"], x["bytes"], x["launched_by"]) for x in rows("GPU Memory: Never Freed")]
if leaks != [("GPU0", 4 * M, "aten::zeros"), ("GPU1", 3 * M, "aten::empty")]:
    bad.append("never freed: %r" % leaks)
for d, peak, end in (("GPU0", 7 * M, 4 * M), ("GPU1", 4 * M, 3 * M)):
    s = [x for x in rows("GPU Memory over time") if x["device"] == d]
    if not s or max(x["max_bytes"] for x in s) != peak or s[-1]["end_bytes"] != end or \
            s[0]["start_ns"] != 0:
        bad.append("series of %s" % d)
print("\n".join(bad))
sys.exit(1 if bad else 0)
EOF
	check "gpumem: counts, bytes, peak, largest with launching operators, never freed, series" '[ $? -eq 0 ]'
else
	echo "# skipped the recordings: no fake libcupti (no cupti.h at build time) or no $PY"
fi

# --- nothing to show, asked for by name
cpu=$T/cpu.json
printf '{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":0,"dur":5}]}' >"$cpu"
out=$("$OPSCOPE" report --views gpu "$cpu" | grep -v '^$' | tail -1)
check "text: '$out'" '[ "$out" = "GPU Utilization: no GPU in the trace" ]'
out=$("$OPSCOPE" report --views gpumem -f csv "$cpu" | grep -v '^$' | tail -1)
check "csv: '$out'" '[ "$out" = "# GPU Memory: no GPU allocation records in the trace" ]'
"$OPSCOPE" report --views gpu,gpumem -f json "$cpu" >"$T/e.json"
check "json: both empty" 'grep -q "\"empty\":\"GPU Utilization: no GPU in the trace\"" "$T/e.json" &&
	grep -q "\"empty\":\"GPU Memory: no GPU allocation records in the trace\"" "$T/e.json"'
# not asked for by name: no table at all
"$OPSCOPE" report -f json "$cpu" >"$T/all.json"
check "all views: no gpu table" '! grep -q "\"view\":\"gpu" "$T/all.json"'
tap_done
