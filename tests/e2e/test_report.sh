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

# --- --top N keeps the Step table's Average row (it was cut with the steps past N)
"$OPSCOPE" report --views step --top 1 "$T/train.opscope" >"$T/top.txt"
check "--top 1: one step and the Average row" \
	'[ "$(grep -c "^ProfileStep#" "$T/top.txt")" -eq 1 ] && grep -q "^Average " "$T/top.txt"'
"$OPSCOPE" report --views step --top 1 --format json "$T/train.opscope" | "$PY" -c '
import json, sys
rows = [t for t in json.load(sys.stdin)["tables"] if t["view"] == "step"][0]["rows"]
assert [r["step"] for r in rows][1:] == ["Average"] and len(rows) == 2, rows
print("ok")' >"$T/py" 2>&1
check "--top 1 in JSON: one step and the Average row" 'grep -qx ok "$T/py" || { cat "$T/py"; false; }'

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
assert [b[0].split(":")[0] for b in blocks] == ["Trace Files", "Operator Summary", "Step Summary"], blocks
for title, lines in blocks:
    rows = list(csv.reader(lines))
    assert all(len(r) == len(rows[0]) for r in rows), title
assert "cpu_total_ms" in list(csv.reader(blocks[1][1]))[0]
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
	check "ResNet-50 Model Summary: ProfileStep GPU 98.59 ms a step, the Step table's kernels" \
		'grep -q "^ProfileStep *6 .*  591.53 / 98.59 / " "$T/r0.txt"'
	check "ResNet-50 Model Summary: the autograd thread's kernels are Backward's" \
		'grep -q "^  Backward *6 " "$T/r0.txt"'
	check "ResNet-50 step trace: Tail 18.84 ms (the optimizer step), GPU Drain 13.38 ms" \
		'grep -q "^Average .* 58.75 *86.62 *18.84 *13.38 *1516" "$T/r0.txt"'
	"$OPSCOPE" report --format json --views kernel "$R0" | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
r = [r for t in d["tables"] if t["view"] == "kernel" for r in t["rows"] if r["display_name"].startswith("void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>")][0]
assert (r["calls"], r["total_ns"], r["max_ns"], r["min_ns"]) == (162, 80756000, 1017000, 323000), r
print("ok")' >"$T/py" 2>&1
	check "ResNet-50: dgrad_engine row exact in JSON" 'grep -qx ok "$T/py" || { cat "$T/py"; false; }'
else
	echo "# ../shared/data not present: ResNet-50 checks skipped"
fi

# --- a report of a JSON trace loads only the arguments its views read (report_arg_keys):
# the same tables as with every argument loaded (OPSCOPE_REPORT_ALL_ARGS=1), on the fuzz
# corpus, on a trace whose steps carry num_samples and kernels their launch links among
# many other arguments, and on every real trace there is
"$PY" - "$T/args.json" <<'EOF'
import json, sys
ev = []
for s in range(3):
    t0 = s * 1000
    ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % s, "pid": 1,
               "tid": 1, "ts": t0, "dur": 900,
               "args": {"num_samples": 32, "External id": s, "note": "x" * s}})
    ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1,
               "ts": t0 + 10, "dur": 500,
               "args": {"Input Dims": [[4, 4], [4, 4]], "Input type": ["float", "float"],
                        "External id": 10 + s, "Ev Idx": s}})
    ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
               "tid": 1, "ts": t0 + 20, "dur": 5,
               "args": {"External id": 10 + s, "cbid": 211, "correlation": 100 + s}})
    ev.append({"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7,
               "ts": t0 + 30, "dur": 200 + s,
               "args": {"queued": 0, "device": 0, "context": 1, "stream": 7,
                        "correlation": 100 + s, "registers per thread": 32,
                        "grid": [1, 1, 1], "est. achieved occupancy %": 12.5}})
json.dump({"traceEvents": ev}, open(sys.argv[1], "w"))
EOF
for f in "$T/args.json" "$SRC"/tests/fuzz-corpus/kineto/*.json $(find "$SRC/../shared/data/kineto" -name "*.json*" 2>/dev/null); do
	"$OPSCOPE" report --format json "$f" >"$T/kept.out" 2>&1
	echo "rc=$?" >>"$T/kept.out"
	OPSCOPE_REPORT_ALL_ARGS=1 "$OPSCOPE" report --format json "$f" >"$T/all.out" 2>&1
	echo "rc=$?" >>"$T/all.out"
	cmp -s "$T/kept.out" "$T/all.out" || echo "# $f: not the same"
done >"$T/args"
check "a report loads only the arguments its views read, and its tables are the same" \
	'[ ! -s "$T/args" ] || { cat "$T/args"; false; }'
check "... there: steps with num_samples make a Perf Summary, and their kernels count" \
	'"$OPSCOPE" report --views perf "$T/args.json" | grep -q -- "-Perf Summary-" && "$OPSCOPE" report --format csv --views step "$T/args.json" | grep -q "^Average,.*,1$"'

# --- hostile names: a Kineto trace whose names hold quotes, backslashes, control characters,
# invalid UTF-8 and a 300+ character kernel name; every format must stay well-formed
"$PY" - "$T/hostile.json" <<'EOF'
import json, sys
long = "void very_long_kernel<" + ", ".join("T%d" % i for i in range(80)) + ">(float*, int)"
assert len(long) > 300
ev = [
    {"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 1000},
    {"ph": "X", "cat": "cpu_op", "name": "HOSTILE_OP", "pid": 1, "tid": 1, "ts": 10, "dur": 500},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 20, "dur": 10, "args": {"correlation": 1}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 1, "tid": 1, "ts": 40, "dur": 10, "args": {"correlation": 2}},
    {"ph": "X", "cat": "user_annotation", "name": "HOSTILE_UD", "pid": 1, "tid": 1, "ts": 600, "dur": 100},
    {"ph": "X", "cat": "kernel", "name": long, "pid": 0, "tid": 7, "ts": 30, "dur": 200, "args": {"correlation": 1, "device": 0, "stream": 7}},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7, "ts": 250, "dur": 20, "args": {"correlation": 2, "device": 0, "stream": 7}},
]
text = json.dumps({"traceEvents": ev}).encode()
# what JSON escapes can say (quote, backslash, controls), and raw invalid UTF-8 bytes
text = text.replace(b"HOSTILE_OP", b'op \\"q\\" \\\\ \\t\\u0001,x\xff\xfe end')
text = text.replace(b"HOSTILE_UD", b'ud\\n\\u001b[31mred\\r,\\"')
open(sys.argv[1], "wb").write(text)
EOF
"$OPSCOPE" report --format json "$T/hostile.json" >"$T/h.json" 2>"$T/err"
check "hostile names: JSON report exit 0" '[ $? -eq 0 ] && [ ! -s "$T/err" ]'
"$PY" - "$T/h.json" <<'EOF' >"$T/py" 2>&1
import json, sys
raw = open(sys.argv[1], "rb").read()
d = json.loads(raw.decode("utf-8"))  # strict UTF-8, strict JSON
assert all(b >= 0x20 or b == 0x0a for b in raw), "raw control byte"
tabs = {t["view"]: t for t in d["tables"]}
op = [r for r in tabs["operator"]["rows"] if r["level"] == 0]
assert op[0]["name"] == 'op "q" \\ \t\x01,x\ufffd\ufffd end', repr(op[0]["name"])
k = tabs["kernel"]["rows"][0]
assert len(k["name"]) > 300 and k["name"].endswith(">(float*, int)"), k["name"]
assert k["display_name"] == k["name"][: -len("(float*, int)")], k["display_name"]
assert (k["calls"], k["total_ns"], k["ratio"]) == (1, 200000, 1.0), k
nv = {(r["section"], r["name"]): r for r in tabs["nvprof"]["rows"]}
assert nv[("gpu", "[CUDA memcpy HtoD]")]["total_ns"] == 20000, nv.keys()
assert nv[("api", "cudaLaunchKernel")]["calls"] == 1
ud = tabs["userdefined"]["rows"][0]
assert ud["name"] == 'ud\n\x1b[31mred\r,"', repr(ud["name"])
ov = tabs["overview"]
assert ov["totals"] == {"total_ns": 1000000, "gpu_busy_ns": 220000}, ov["totals"]
print("ok")
EOF
check "hostile names: JSON is valid UTF-8 and JSON, names round-trip, long kernel row exact" 'grep -qx ok "$T/py" || { cat "$T/py"; false; }'
"$OPSCOPE" report --format csv "$T/hostile.json" >"$T/h.csv"
"$PY" - "$T/h.csv" <<'EOF' >"$T/py" 2>&1
import csv, io, sys
text = open(sys.argv[1], "rb").read().decode("utf-8")
names, blocks = [], 0
rows = list(csv.reader(io.StringIO(text, newline="")))
i = 0
while i < len(rows):
    if not rows[i]:
        i += 1
        continue
    assert rows[i][0].startswith("# "), rows[i]
    header, i, blocks = rows[i + 1], i + 2, blocks + 1
    while i < len(rows) and rows[i]:
        assert len(rows[i]) == len(header), (header, rows[i])
        if "name" in header:
            names.append(rows[i][header.index("name")])
        i += 1
assert blocks >= 5, blocks
assert 'op "q" \\ \t\x01,x\ufffd\ufffd end' in names, names
assert 'ud\n\x1b[31mred\r,"' in names, names
print("ok")
EOF
check "hostile names: CSV blocks parse, rows as wide as headers, names round-trip" 'grep -qx ok "$T/py" || { cat "$T/py"; false; }'
"$OPSCOPE" report -w 40 "$T/hostile.json" >"$T/h.txt"
"$PY" - "$T/h.txt" <<'EOF' >"$T/py" 2>&1
import sys
raw = open(sys.argv[1], "rb").read()
t = raw.decode("utf-8")
assert all(b >= 0x20 or b == 0x0a for b in raw), "raw control byte in text"
assert 'op "q" \\\\ \\t\\x01,x\\xff\\xfe end' in t, "escaped op name"
assert 'ud\\n\\x1b[31mred\\r,"' in t, "escaped user-defined name"
assert "void very_long_kernel<T0, T1, T2, T3,..." in t, "name cut at 40 with ..."
assert "[CUDA memcpy HtoD]" in t
print("ok")
EOF
check "hostile names: text escapes controls and invalid UTF-8, -w cuts long names" 'grep -qx ok "$T/py" || { cat "$T/py"; false; }'

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
printf 'OPSC\0\0\0garbage' >"$T/corrupt.opscope"
"$OPSCOPE" report "$T/corrupt.opscope" >/dev/null 2>"$T/err"
check "corrupt file: 1, one line naming it" '[ $? -eq 1 ] && [ $(wc -l <"$T/err") -eq 1 ] && grep -q "corrupt.opscope" "$T/err"'
"$OPSCOPE" report --time-unit h "$T/train.opscope" >/dev/null 2>"$T/err"
check "bad --time-unit: 2" '[ $? -eq 2 ]'
"$OPSCOPE" report --top 0 "$T/train.opscope" >/dev/null 2>"$T/err"
check "bad --top: 2" '[ $? -eq 2 ]'
"$OPSCOPE" report --width x "$T/train.opscope" >/dev/null 2>"$T/err"
check "bad --width: 2" '[ $? -eq 2 ]'
"$OPSCOPE" report -c name,nme "$T/train.opscope" >/dev/null 2>"$T/err"
check "--columns with a key no table has: 2, naming it" '[ $? -eq 2 ] && grep -q "column .nme." "$T/err"'
"$OPSCOPE" report --bogus "$T/train.opscope" >/dev/null 2>"$T/err"
check "unknown option: 2" '[ $? -eq 2 ]'
"$OPSCOPE" report "$T/train.opscope" "$T/missing.opscope" >/dev/null 2>"$T/err"
check "one missing file among several: 1, one line" '[ $? -eq 1 ] && [ $(wc -l <"$T/err") -eq 1 ]'
"$OPSCOPE" report -o /nonexistent/dir/out.txt "$T/train.opscope" >/dev/null 2>"$T/err"
check "unwritable output: 1" '[ $? -eq 1 ] && grep -q "cannot write" "$T/err"'

tap_done
