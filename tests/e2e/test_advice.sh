#!/bin/bash
# test_advice.sh: `opscope report --views advice` (issue 20, point 1) end to end on real
# Kineto traces of ../shared/data/kineto, asserting which rules fire and which stay silent:
#   - ResNet-50 with 0 DataLoader workers: input-bound (33.4% of the step time in
#     DataLoader, the TensorBoard plugin's own recommendation in
#     tb_plugin/test/result_check_file.txt), tensor cores unused (the plugin: "Kernels with
#     68% time are launched by Tensor Cores eligible operators"), tiny kernels, pageable
#     copies; with 4 workers: not input-bound, tensor cores still.
#   - HTA's NCCL trace (negative_queue_length_values_check): exposed communication, a slow
#     first step, GPU idle, tiny kernels; HTA's cuda_event_sync trace: a synchronization in the
#     step; a CPU-only trace: no GPU rule.
#   - Findings ranked by time at stake; text has the table first after Trace Files with the
#     evidence and change lines; CSV one row per finding.
# Env (from CTest): OPSCOPE (the CLI), SRC (source root). Data: $SRC/../shared/data.
set -u
: "${OPSCOPE:?}" "${SRC:?}"
. "$SRC/tests/e2e/lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "skip: no $PY"; exit 77; }
DATA=$SRC/../shared/data/kineto
[ -d "$DATA" ] || { echo "skip: no $DATA"; exit 77; }

# rules FILE: the fired rules in rank order, one line ("input_bound tensor_cores ..."), and
# "sorted" when the time at stake never grows down the ranks
rules() {
	"$OPSCOPE" report --views advice -f json "$1" >"$T/a.json" || return 1
	"$PY" - "$T/a.json" <<'PYEOF'
import json, sys
rows = [r for t in json.load(open(sys.argv[1]))["tables"] if t["view"] == "advice"
        for r in t["rows"]]
print(" ".join(r["rule"] for r in rows))
stake = [r["at_stake_ns"] for r in rows]
ok = stake == sorted(stake, reverse=True) and [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
keys = {"rule", "title", "file", "at_stake_ns", "share", "steps", "measured", "threshold",
        "base_ns", "start_ns", "end_ns", "finding", "evidence", "change"}
ok = ok and all(keys <= set(r) and r["finding"] and r["change"] for r in rows)
print("sorted" if ok else "unsorted")
PYEOF
}
has() { # WORDS RULE
	case " $1 " in *" $2 "*) return 0 ;; esac
	return 1
}

R0=$(ls "$DATA"/tb_plugin/samples/resnet50_num_workers_0/*.gz | head -1)
R4=$(ls "$DATA"/tb_plugin/samples/resnet50_num_workers_4/*.gz | head -1)
out=$(rules "$R0")
check "resnet-50, 0 workers: runs" '[ $? -eq 0 ]'
r0=$(echo "$out" | sed -n 1p)
check "resnet-50, 0 workers: ranked, every field" '[ "$(echo "$out" | tail -1)" = sorted ]'
for r in input_bound tensor_cores tiny_kernels pageable_copy; do
	check "resnet-50, 0 workers: $r fires" 'has "$r0" $r'
done
for r in gpu_idle sync_in_step exposed_comm first_step_slow; do
	check "resnet-50, 0 workers: $r silent" '! has "$r0" $r'
done
# the share the TensorBoard plugin prints for this trace: "33.4% of the step time is in
# DataLoader"
"$OPSCOPE" report --views advice -f json "$R0" | "$PY" -c '
import json, sys
r = [r for t in json.load(sys.stdin)["tables"] if t["view"] == "advice" for r in t["rows"] if r["rule"] == "input_bound"][0]
print("%.1f %d" % (100 * r["measured"], r["steps"]))' >"$T/ib.txt"
check "resnet-50, 0 workers: 33.4% data wait in 6 of 6 steps (the plugin's figure)" 'grep -qx "33.4 6" "$T/ib.txt"'

out=$(rules "$R4")
r4=$(echo "$out" | sed -n 1p)
check "resnet-50, 4 workers: input_bound silent" '! has "$r4" input_bound'
check "resnet-50, 4 workers: tensor_cores fires" 'has "$r4" tensor_cores'

N=$DATA/hta/negative_queue_length_values_check/rank0.json.gz
out=$(rules "$N")
rn=$(echo "$out" | sed -n 1p)
check "nccl trace: ranked" '[ "$(echo "$out" | tail -1)" = sorted ]'
for r in exposed_comm first_step_slow gpu_idle tiny_kernels; do
	check "nccl trace: $r fires" 'has "$rn" $r'
done
check "nccl trace: input_bound silent" '! has "$rn" input_bound'

S=$DATA/hta/critical_path/cuda_event_sync/event_sync_trace.json.gz
rs=$(rules "$S" | sed -n 1p)
check "event-sync trace: sync_in_step fires" 'has "$rs" sync_in_step'

C=$(ls "$DATA"/hta/cpu_only/*.gz | head -1)
rc=$(rules "$C" | sed -n 1p)
for r in gpu_idle sync_in_step pageable_copy tiny_kernels tensor_cores; do
	check "cpu-only trace: $r silent" '! has "$rc" $r'
done

# --- text: first after Trace Files, with the detail lines; CSV: one row per finding
"$OPSCOPE" report "$R0" >"$T/all.txt" 2>&1
check "default report: runs" '[ $? -eq 0 ]'
check "default report: Advice is the table after Trace Files" \
	'[ "$(grep -o -- "-\(Trace Files\|Advice\|Device Summary\|Overview Summary\)-" "$T/all.txt" | head -2 | tr -d - | tr "\n" ,)" = "Trace Files,Advice," ]'
check "text: evidence and change lines" 'grep -q "evidence: 6 of 6 steps above 5%" "$T/all.txt" && grep -q "try: load data in parallel" "$T/all.txt"'
"$OPSCOPE" report --views advice -f csv "$R0" >"$T/a.csv"
check "csv: a header and one row per finding (4)" '[ "$(grep -c "^[0-9]*,\(input_bound\|tensor_cores\|tiny_kernels\|pageable_copy\)," "$T/a.csv")" -eq 4 ] && ! grep -q "evidence: " "$T/a.csv"'
"$OPSCOPE" report --views advice "$C" >"$T/none.txt" 2>&1
check "asked for by name with nothing: says so" 'grep -q "Advice: no rule fired on this trace" "$T/none.txt"'
tap_done
