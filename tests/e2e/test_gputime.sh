#!/usr/bin/env bash
# test_gputime.sh: the `gputime` (GPU Time Breakdown), `launch` (Kernel Launch Statistics) and
# `queue` (Queue Length) views of `opscope report`, end to end.
#   1. Real PyTorch/Kineto traces (../shared/data/kineto: V100 resnet50, A100 ns resolution,
#      trace_diff control, an NCCL trace) against an independent checker
#      (tests/oracle/gputime_check.py, Python's standard library): every part of every step,
#      every idle gap count, every launch statistic and every queue number, exactly; the
#      checker first checked against its own self-test.
#   2. The invariant on a trace without steps (HTA's alexnet, with cuda_sync events): the
#      parts of each row sum to its duration.
#   3. The queue's series: in the text report only when views are named; always in CSV.
#   4. Asked for by name on a trace without a GPU: one line saying so, in every format.
# Env (from CTest): OPSCOPE, SRC.
set -u
: "${OPSCOPE:?}" "${SRC:?}"
. "$SRC/tests/e2e/lib.sh"
PY=/usr/bin/python3
CHECK=$SRC/tests/oracle/gputime_check.py
DATA=$SRC/../shared/data/kineto

if [ -x "$PY" ] && [ -d "$DATA" ]; then
	"$PY" "$CHECK" --self-test
	check "checker self-test" '[ $? -eq 0 ]'
	R0=$DATA/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz
	for t in "$R0" "$DATA"/hta/ns_resolution_trace/*.gz \
		"$DATA/hta/trace_diff/control/control.json.gz" \
		"$DATA/hta/nccl_parser_config/nccl_data.json.gz"; do
		"$PY" "$CHECK" --opscope "$OPSCOPE" "$t"
		check "report == checker: ${t#"$DATA"/}" '[ $? -eq 0 ]'
	done
	# the numbers the checker agreed with, written down: resnet50 (0 workers), window,
	# in ms: compute 591.532, memcpy 11.492, memset 0.534, data 355.644, sync 0.734,
	# host 94.547, other 11.070 of 1065.553 (its data loading is on the main thread)
	w=$("$OPSCOPE" report --views gputime -f csv -u us "$R0" | awk -F, '$2 == "Window" {print $13, $15, $16, $17, $18, $19, $20, $4}')
	check "resnet50 window parts (got $w)" \
		'[ "$w" = "591532.000 11492.000 534.000 355644.000 734.000 94547.000 11070.000 1065553.000" ]'
	A=$(ls "$DATA"/hta/critical_path/alexnet/*.gz)
	"$OPSCOPE" report --views gputime -f json "$A" >"$T/alex.json"
	"$PY" - "$T/alex.json" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
rows = [x for t in r["tables"] if t["title"] == "GPU Time Breakdown" for x in t["rows"]]
parts = ("compute", "communication", "memcpy", "memset", "idle_data", "idle_sync",
         "idle_host", "idle_other")
bad = [x for x in rows if sum(x[p + "_ns"] for p in parts) != x["duration_ns"]]
# no ProfilerStep: the whole trace is one step, so one row, the window; its Stream Sync / Context Sync events
# and cudaStreamSynchronize calls make sync gaps
ok = len(rows) == 1 and rows[0]["step"] == "Window" and \
    rows[0]["idle_sync_ns"] > 0 and not bad
print(rows if not ok else "")
sys.exit(0 if ok else 1)
PYEOF
	check "alexnet (no steps): one window, sync gaps, parts sum to the duration" '[ $? -eq 0 ]'
	# the series: hidden in the default text report, shown when a view is named
	"$OPSCOPE" report "$R0" >"$T/all.txt"
	check "default text: breakdown, launch and queue tables" \
		'grep -q "GPU Time Breakdown" "$T/all.txt" && grep -q "Kernel Launch Statistics" "$T/all.txt" &&
		 grep -q -- "-Queue Length-" "$T/all.txt"'
	check "default text: no queue series" '! grep -q "Queue Length over time" "$T/all.txt"'
	"$OPSCOPE" report --views queue "$R0" >"$T/q.txt"
	check "--views queue: the series in text" 'grep -q "Queue Length over time" "$T/q.txt"'
	nb=$("$OPSCOPE" report -f csv "$R0" | awk '/^# Queue Length over time/ {on = 1; next} /^#/ {on = 0} on && /^GPU0,/' | wc -l)
	check "default CSV: the series, 11 buckets of 100 ms (got $nb)" '[ "$nb" -eq 11 ]'
else
	echo "# skipped the real traces: no $PY or no $DATA"
fi

# --- nothing to show, asked for by name
cpu=$T/cpu.json
printf '{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":0,"dur":5}]}' >"$cpu"
out=$("$OPSCOPE" report --views gputime "$cpu" | grep -v '^$' | tail -1)
check "text: '$out'" '[ "$out" = "GPU Time Breakdown: no GPU in the trace" ]'
out=$("$OPSCOPE" report --views launch -f csv "$cpu" | grep -v '^$' | tail -1)
check "csv: '$out'" '[ "$out" = "# Kernel Launch Statistics: no device work launched by a runtime call in the trace" ]'
"$OPSCOPE" report --views gputime,launch,queue -f json "$cpu" >"$T/e.json"
check "json: all three empty" 'grep -q "\"empty\":\"GPU Time Breakdown: no GPU" "$T/e.json" &&
	grep -q "\"empty\":\"Kernel Launch Statistics: no device" "$T/e.json" &&
	grep -q "\"empty\":\"Queue Length: no device" "$T/e.json"'
"$OPSCOPE" report -f json "$cpu" >"$T/all.json"
check "all views: none of the three" '! grep -q "\"view\":\"\(gputime\|launch\|queue\)\"" "$T/all.json"'
tap_done
