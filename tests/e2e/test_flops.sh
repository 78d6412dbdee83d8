#!/bin/bash
# test_flops.sh: `opscope report --views flops` (issue 19) end to end.
#   - On real PyTorch traces (ResNet-50 on a V100, HTA's trace_diff pair from a V100 and an
#     A100, an MTIA trace with "Concrete Inputs"): every GEMM and convolution row's calls and
#     FLOPs equal an independent checker's (tests/oracle/flops_check.py, Python standard
#     library only, its own code), and the device is found in the peak table.
#   - Bad input: shapes that do not parse, negative and absurd dimensions, unknown dtypes are
#     listed as "no model" with a reason, never a crash or a number; hostile names come out
#     escaped; a trace with no shapes says so; a malformed --peak is a one-line error, exit 2.
#   - CPU-only traces: CPU time, no peak unless --peak gives one; -c picks columns.
# Env (from CTest): OPSCOPE (the CLI), SRC (source root). Data: $SRC/../shared/data.
set -u
: "${OPSCOPE:?}" "${SRC:?}"
. "$SRC/tests/e2e/lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "skip: no $PY"; exit 77; }
DATA=$SRC/../shared/data/kineto
CHECK=$SRC/tests/oracle/flops_check.py

# --- the checker itself, then opscope against it on the real traces
"$PY" "$CHECK" --self-test >"$T/self.log" 2>&1
check "checker self-test" '[ $? -eq 0 ]'
if [ -d "$DATA" ]; then
	for t in "$DATA"/tb_plugin/samples/resnet50_num_workers_0/*.gz \
		"$DATA"/tb_plugin/samples/resnet50_num_workers_4/*.gz \
		"$DATA"/hta/trace_diff/*/*.json.gz \
		"$DATA"/hta/mtia_trace_single_rank/mtia_rank_0.json.gz; do
		"$PY" "$CHECK" --opscope "$OPSCOPE" "$t" >"$T/cmp.log" 2>&1
		check "flops == checker: ${t#"$DATA"/}" '[ $? -eq 0 ] || { tail -20 "$T/cmp.log"; false; }'
	done
	R0=$(ls "$DATA"/tb_plugin/samples/resnet50_num_workers_0/*.gz | head -1)
	"$OPSCOPE" report --views flops -f json "$R0" >"$T/r0.json"
	check "resnet-50: json" '[ $? -eq 0 ]'
	"$PY" - "$T/r0.json" >"$T/r0.txt" <<'EOF'
import json, sys
tables = [t for t in json.load(open(sys.argv[1]))["tables"] if t["view"] == "flops"]
rows = tables[0]["rows"]
cats = {r["category"] for r in rows}
conv = [r for r in rows if r["category"] == "convolution"]
print("cats", sorted(cats))
print("devices", sorted({r["device"] for r in rows if r["device"]}))
print("conv_fwd", sum(r["calls"] for r in conv if r["direction"] == "fwd"))
print("conv_bwd", sum(r["calls"] for r in conv if r["direction"] == "bwd"))
print("peak", all(r["peak_flops_ratio"] is not None for r in conv))
print("titles", [t["title"] for t in tables])
cat = [t for t in tables if t["title"] == "FLOPs by Category"][0]["rows"]
print("roof_ok", all(r["roofline_ratio"] is None or r["roofline_ratio"] <= 1 for r in cat))
print("over", sum(r["roofline_ratio"] is not None and r["roofline_ratio"] > 1 for r in rows) > 0)
EOF
	check "resnet-50: every forward convolution modelled (318)" 'grep -qx "conv_fwd 318" "$T/r0.txt"'
	# backward: cuDNN's parts, 318 weight gradients and 312 input gradients (none for the
	# first layer, whose input is the image)
	check "resnet-50: every backward convolution part modelled (630)" 'grep -qx "conv_bwd 630" "$T/r0.txt"'
	check "resnet-50: the V100 found in the peak table" 'grep -q "Tesla V100-DGXS-32GB" "$T/r0.txt" && grep -qx "peak True" "$T/r0.txt"'
	check "resnet-50: category roll-up and ceilings" 'grep -q "FLOPs by Category" "$T/r0.txt" && grep -q "Roofline Ceilings" "$T/r0.txt"'
	# Winograd convolutions beat the direct count's roofline; their categories stay <= 100%
	check "resnet-50: rows over the roofline, categories at most 100%" 'grep -qx "over True" "$T/r0.txt" && grep -qx "roof_ok True" "$T/r0.txt"'
fi

# --- bad shapes, hostile names, no shapes
"$PY" - "$T" <<'EOF'
import json, sys
d = sys.argv[1]
def op(name, ts, dims, types, **more):
    args = {"Input Dims": dims, "Input type": types}
    args.update(more)
    return {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": 10,
            "args": args}
ev = [
    op("aten::mm", 0, [[2, 3], [3, 5]], ["float", "float"]),
    op("aten::mm", 20, [[-3, 4], [4, 5]], ["float", "float"]),
    op("aten::mm", 40, [[99999999999, 99999999999], [99999999999, 5]], ["float", "float"]),
    op("aten::mm", 60, "[[2, 3], [3", ["float", "float"]),
    op("aten::mm", 80, [[2, 3], [3, 5]], ["float", "complex<unknown>"]),
    op("aten::mm", 100, [[2, 3], [3]], ["float", "float"]),
    op("evil</script><b>\u001b[31m\"x", 120, [[2]], ["float"]),
]
json.dump({"traceEvents": ev}, open(d + "/bad.json", "w"))
noshape = [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0,
            "dur": 10, "args": {}}]
json.dump({"traceEvents": noshape}, open(d + "/noshape.json", "w"))
EOF
"$OPSCOPE" report --views flops -f json "$T/bad.json" >"$T/bad.out" 2>"$T/bad.err"
check "malformed shapes: exit 0" '[ $? -eq 0 ]'
"$PY" - "$T/bad.out" >"$T/bad.txt" <<'EOF'
import json, sys
tables = {t["title"]: t for t in json.load(open(sys.argv[1]))["tables"]}
rows = tables["FLOPs per Operator"]["rows"]
print("modelled", [(r["name"], r["calls"], r["flops"]) for r in rows])
gaps = tables["Operators with no FLOPs Model"]["rows"]
print("gaps", sum(g["calls"] for g in gaps))
print("names", sorted({g["name"] for g in gaps}))
EOF
check "malformed shapes: only the good call is modelled, 60 FLOPs" "grep -qx \"modelled \\[('aten::mm', 1, 60)\\]\" \"\$T/bad.txt\""
check "malformed shapes: the six others listed with a reason" 'grep -qx "gaps 6" "$T/bad.txt"'
check "hostile name kept as data in JSON" 'grep -q "evil</script><b>" "$T/bad.txt"'
"$OPSCOPE" report --views flops "$T/bad.json" >"$T/bad.text"
check "hostile name escaped in text (no raw ESC)" '! grep -q $'"'"'\x1b'"'"' "$T/bad.text"'
"$OPSCOPE" report --views flops "$T/noshape.json" >"$T/noshape.out"
check "no shapes: said in one line" 'grep -q "FLOPs: no operators with input shapes" "$T/noshape.out"'

# --- --peak: a table name, numbers by hand, bad text
"$OPSCOPE" report --views flops --peak 'fp32=1G,bw=1G' -f json "$T/bad.json" >"$T/peak.json"
check "--peak by hand on a CPU trace: a share of peak" \
	'"$PY" -c "import json,sys; t=json.load(open(sys.argv[1]))[\"tables\"][1][\"rows\"][0]; sys.exit(t[\"peak_flops_ratio\"] is None)" "$T/peak.json"'
"$OPSCOPE" report --views flops --peak 'fp32=abc' "$T/bad.json" >/dev/null 2>"$T/peak.err"
rc=$?
check "--peak malformed: exit 2, one line" '[ $rc -eq 2 ] && [ "$(wc -l <"$T/peak.err")" -le 2 ] && grep -q fp32 "$T/peak.err"'
"$OPSCOPE" report --views flops -c name,calls,gflops -f csv "$T/bad.json" >"$T/cols.csv"
check "-c picks the columns" 'grep -A1 "^# FLOPs per Operator" "$T/cols.csv" | tail -1 | grep -qx "name,calls,gflops"'

tap_done
