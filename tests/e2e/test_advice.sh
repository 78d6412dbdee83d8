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
#   - A straggler rank: the synthetic 4-rank job of tests/tools/gen_ranks.py (rank 2's compute
#     20% longer: 12 ms against 10 ms) fires naming rank 2: last by 2 ms in each of 3 steps
#     (the others' ready time 2 ms earlier), 2 / 13.56 ms = 14.7% of its step, 6 ms at stake,
#     longer compute. Balanced (--slow 0), and 3% slower (margin 0.3 ms = 2.5% of 11.86 ms,
#     under 5%): silent. HTA's trace_filter pair: rank 1 last in step 551, rank 0 in 552, one
#     each: silent. A single rank: silent (no rule above fires it).
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

# --- straggler rank (multi-rank directories)
GEN=$SRC/tests/tools/gen_ranks.py
"$PY" "$GEN" "$T/syn" >/dev/null && "$PY" "$GEN" "$T/bal" --slow 0 >/dev/null &&
	"$PY" "$GEN" "$T/s3" --slow 3 >/dev/null
check "gen_ranks: three jobs made" '[ $? -eq 0 ]'
out=$(rules "$T/syn")
check "4 ranks, rank 2 slower: ranked" '[ "$(echo "$out" | tail -1)" = sorted ]'
check "4 ranks, rank 2 slower: straggler fires" 'has "$(echo "$out" | sed -n 1p)" straggler'
"$OPSCOPE" report --views advice -f json "$T/syn" | "$PY" -c '
import json, sys
r = [r for t in json.load(sys.stdin)["tables"] if t["view"] == "advice" for r in t["rows"] if r["rule"] == "straggler"]
for x in r:
    print(x["file"].rsplit("/", 1)[-1], x["at_stake_ns"], x["steps"], "%.1f" % (100 * x["measured"]))
    print(x["finding"])
    print(x["evidence"])
    print(x["change"])' >"$T/st.txt"
check "straggler: one finding, rank2.json, 6 ms at stake, 3 steps, 14.7%" '[ "$(sed -n 1p "$T/st.txt")" = "rank2.json 6000000 3 14.7" ] && [ "$(grep -c "^rank" "$T/st.txt")" -eq 2 ]'
check "straggler: names rank 2 on node-1, 3 of 3 steps, 6.00 ms waited" \
	'grep -qx "rank 2 on node-1 ended last in 3 of 3 steps, by 2.00 ms on average (14.7% of its step): the other ranks waited 6.00 ms for it" "$T/st.txt"'
check "straggler: evidence: the steps and the cause (longer compute, +2 ms)" \
	'grep -q "^steps (margin): ProfilerStep#0 (2.00 ms), ProfilerStep#1 (2.00 ms), ProfilerStep#2 (2.00 ms); why: longer compute in 3 (2.00 ms more" "$T/st.txt"'
check "straggler: the change for longer compute" 'grep -q "^balance the work" "$T/st.txt"'
check "4 ranks, balanced: straggler silent" '! has "$(rules "$T/bal" | sed -n 1p)" straggler'
check "4 ranks, rank 2 3% slower (2.5% of the step): straggler silent" '! has "$(rules "$T/s3" | sed -n 1p)" straggler'
mkdir -p "$T/one" && cp "$T/syn/rank2.json" "$T/one/"
check "rank 2 alone: straggler silent" '! has "$(rules "$T/one" | sed -n 1p)" straggler'
TF=$DATA/hta/trace_filter
if [ -d "$TF" ]; then
	check "trace_filter (ranks take turns, one step each): straggler silent" '! has "$(rules "$TF" | sed -n 1p)" straggler'
fi

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
