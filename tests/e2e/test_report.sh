#!/usr/bin/env bash
# test_report.sh: `opscope report` through the CLI: every view on a recorded training loop
# (tests/programs via examples/train_loop.c) and on the real ResNet-50 V100 trace (its
# dgrad_engine row and step times against ../shared/data/README.md), the three formats
# (JSON and CSV parsed by Python), the options, and the errors.
# Env: OPSCOPE (the CLI), OPSCOPE_LIB, PROGRAMS (tests build dir), SRC (repository root).
set -u
: "${OPSCOPE:?}" "${SRC:?}" "${PROGRAMS:?}"
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "skip: no $PY"; exit 77; }
BIN=$(dirname "$PROGRAMS")
TRAIN=$BIN/example_train_loop
R0=$SRC/../shared/data/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz

# --- a recorded CPU training loop (steps with num_samples, the four phases, operators)
"$OPSCOPE" record -o "$T/train.opscope" -- "$TRAIN" >/dev/null 2>&1
check "record the example training loop" '[ $? -eq 0 ] && [ -s "$T/train.opscope" ]'
"$OPSCOPE" report "$T/train.opscope" >"$T/train.txt" 2>"$T/err"
check "text report: exit 0, nothing on stderr" '[ $? -eq 0 ] && [ ! -s "$T/err" ]'
check "text report: device, overview, model, operator, step and perf tables" \
	'grep -q -- "-Device Summary-" "$T/train.txt" && grep -q -- "-Overview Summary-" "$T/train.txt" && grep -q -- "-Model Summary-" "$T/train.txt" && grep -q -- "-Operator Summary-" "$T/train.txt" && grep -q -- "-Step Summary-" "$T/train.txt" && grep -q -- "-Perf Summary-" "$T/train.txt"'
check "model table: the four phases and Others" \
	'grep -q "^  Dataloader " "$T/train.txt" && grep -q "^  Forward " "$T/train.txt" && grep -q "^  Backward " "$T/train.txt" && grep -q "^  Optimization " "$T/train.txt" && grep -q "^  Others " "$T/train.txt"'
check "device table: the process and system CPU utilization recorded by the session" \
	'grep -q "^CPU(Process) " "$T/train.txt" && grep -q "^CPU(System) " "$T/train.txt"'
"$OPSCOPE" report --format json "$T/train.opscope" >"$T/train.json"
"$PY" - "$T/train.json" <<'EOF' >"$T/py" 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
assert d["opscope_report"] == 1 and d["time_unit"] == "ns", d.keys()
views = [t["view"] for t in d["tables"]]
for v in ("overview", "model", "operator", "step", "perf"):
    assert v in views, (v, views)
model = next(t for t in d["tables"] if t["view"] == "model")
rows = {r["name"]: r for r in model["rows"]}
step = rows["ProfileStep"]
phases = sum(rows[p]["cpu_total_ns"] for p in ("Dataloader", "Forward", "Backward", "Optimization"))
# Others = total - the phases, exactly
assert rows["Others"]["cpu_total_ns"] == step["cpu_total_ns"] - phases, rows["Others"]
assert rows["Others"]["cpu_avg_ns"] is None
ov = next(t for t in d["tables"] if t["view"] == "overview")
assert ov["totals"]["total_ns"] == step["cpu_total_ns"]
ops = next(t for t in d["tables"] if t["view"] == "operator")
lin = [r for r in ops["rows"] if r["name"] == "linear"][0]
assert lin["calls"] == 3 * rows["Forward"]["calls"], lin
perf = next(t for t in d["tables"] if t["view"] == "perf")
ips = [r for r in perf["rows"] if r["name"] == "ips"][0]
assert ips["unit"] == "samples/s" and ips["min"] <= ips["avg"] <= ips["max"], ips
print("ok")
EOF
check "JSON: parses; Others = total - phases; operator calls; perf rows" 'grep -qx ok "$T/py" || { cat "$T/py"; false; }'
"$OPSCOPE" report --format csv --views operator,step "$T/train.opscope" >"$T/train.csv"
"$PY" - "$T/train.csv" <<'EOF' >"$T/py" 2>&1
import csv, sys
blocks, cur = [], None
for line in open(sys.argv[1], newline=""):
    if line.startswith("# "):
        cur = [line[2:].strip(), []]
        blocks.append(cur)
    elif line.strip():
        cur[1].append(line)
assert [b[0].split(":")[0] for b in blocks] == ["Operator Summary", "Step Summary"], blocks
for title, lines in blocks:
    rows = list(csv.reader(lines))
    assert all(len(r) == len(rows[0]) for r in rows), title
assert "cpu_total_ms" in list(csv.reader(blocks[0][1]))[0]
print("ok")
EOF
check "CSV: a block per table, every row as wide as its header, unit in the keys" 'grep -qx ok "$T/py" || { cat "$T/py"; false; }'
"$OPSCOPE" report --views operator --no-op-detail --sort Calls --time-unit us -c name,calls -n 1 "$T/train.opscope" >"$T/few.txt"
check "options: one view, one row, chosen columns, unit" \
	'grep -q "Time unit: us" "$T/few.txt" && [ $(grep -c "^linear " "$T/few.txt") -eq 1 ] && ! grep -q "CPU Total" "$T/few.txt" && ! grep -q -- "-Model Summary-" "$T/few.txt"'
"$OPSCOPE" report --views operator --thread-sep -o "$T/out.txt" "$T/train.opscope"
check "--thread-sep and -o" '[ $? -eq 0 ] && grep -q "Thread: [0-9]* (pid [0-9]*)" "$T/out.txt"'

# --- the ResNet-50 V100 trace (../shared/data/README.md)
if [ -f "$R0" ]; then
	"$OPSCOPE" report "$R0" >"$T/r0.txt" 2>"$T/err"
	check "ResNet-50: every table prints" \
		'[ $? -eq 0 ] && for t in Device Overview Model Operator Kernel Step; do grep -q -- "-$t Summary-" "$T/r0.txt" || exit 1; done; grep -q "GPU activities:" "$T/r0.txt"'
	check "ResNet-50: the dgrad_engine row (162 calls, 80.76 ms, max 1.02, min 0.32)" \
		'grep -q "^void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false> *162 *80.76 / 0.50 / 1.02 / 0.32 / " "$T/r0.txt"'
	check "ResNet-50: average step 177.59 ms with 98.59 ms of kernels" \
		'grep -q "^Average *177.59 *98.59 " "$T/r0.txt"'
	"$OPSCOPE" report --format json --views kernel "$R0" | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
r = [r for r in d["tables"][0]["rows"] if r["display_name"].startswith("void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>")][0]
assert (r["calls"], r["total_ns"], r["max_ns"], r["min_ns"]) == (162, 80756000, 1017000, 323000), r
print("ok")' >"$T/py" 2>&1
	check "ResNet-50: dgrad_engine row exact in JSON" 'grep -qx ok "$T/py" || { cat "$T/py"; false; }'
else
	echo "# ../shared/data not present: ResNet-50 checks skipped"
fi

# --- errors
"$OPSCOPE" report --sort Nope "$T/train.opscope" >/dev/null 2>"$T/err"
check "bad --sort: usage error 2" '[ $? -eq 2 ] && grep -q "sort wants" "$T/err"'
"$OPSCOPE" report --views nope "$T/train.opscope" >/dev/null 2>"$T/err"
check "bad --views: usage error 2 naming the view" '[ $? -eq 2 ] && grep -q "unknown view .nope." "$T/err"'
"$OPSCOPE" report --format xml "$T/train.opscope" >/dev/null 2>"$T/err"
check "bad --format: 2" '[ $? -eq 2 ]'
"$OPSCOPE" report >/dev/null 2>"$T/err"
check "no input: 2" '[ $? -eq 2 ]'
"$OPSCOPE" report "$T/missing.json" >/dev/null 2>"$T/err"
check "missing file: 1, one line" '[ $? -eq 1 ] && [ $(wc -l <"$T/err") -eq 1 ] && grep -q "missing.json: cannot open" "$T/err"'
printf '{"traceEvents":[{"ph":"X","ts":' >"$T/cut.json"
"$OPSCOPE" report "$T/cut.json" >/dev/null 2>"$T/err"
check "truncated JSON: 1, one line with the offset" '[ $? -eq 1 ] && [ $(wc -l <"$T/err") -eq 1 ] && grep -q "cut.json: offset [0-9]*: " "$T/err"'
"$OPSCOPE" report -o /nonexistent/dir/out.txt "$T/train.opscope" >/dev/null 2>"$T/err"
check "unwritable output: 1" '[ $? -eq 1 ] && grep -q "cannot write" "$T/err"'

tap_done
