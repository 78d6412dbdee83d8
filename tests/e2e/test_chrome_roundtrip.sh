#!/usr/bin/env bash
# test_chrome_roundtrip.sh: our Chrome export read back by our importer gives the same report
# (every table but Trace Files, in JSON; Overview, Model and Step in text too) as the trace it
# came from: the generator's traces, a recorded training loop, Kineto traces. What the export
# writes, checked with Python's json: process names from the program, GPU processes and
# streams named, NVTX colours as a "cname" next to their exact ARGB, floats in their shortest
# round-trip form. Paddle's Chrome JSON (tests/fuzz-corpus/kineto/paddle.json, written after
# paddle/fluid/platform/profiler/chrometracing_logger.cc): its categories are ours again.
# Env: OPSCOPE (the CLI), SRC (repository root), PROGRAMS (tests build dir).
set -u
: "${OPSCOPE:?}" "${SRC:?}" "${PROGRAMS:?}"
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "skip: no $PY"; exit 77; }
BIN=$(dirname "$PROGRAMS")
C=$SRC/tests/fuzz-corpus/kineto
R0=$SRC/../shared/data/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz

# The tables of two JSON reports, Trace Files aside (its format, event and loss counts are
# those of the file read), compared one by one; the advice view's findings name the file they
# come from, which differs by design.
cat >"$T/same.py" <<'PYEOF'
import json, sys
def tables(p):
    t = {(t["view"], t.get("group", "")): t
         for t in json.load(open(p))["tables"] if t["view"] != "files"}
    for r in t.get(("advice", ""), {}).get("rows", []):
        r.pop("file", None)
    return t
a, b = tables(sys.argv[1]), tables(sys.argv[2])
assert a.keys() == b.keys(), (sorted(a), sorted(b))
for k in a:
    assert a[k] == b[k], (k, a[k]["rows"][:3], b[k]["rows"][:3])
views = {k[0] for k in a}
for v in sys.argv[3:]:
    assert v in views, (v, views)
print("ok")
PYEOF

# Text tables from the first one after Trace Files.
tables_after_files() {
	awk '/-Trace Files-/ {skip = 1} skip && /^$/ {blank++} blank >= 2 && !/-Trace Files-/ {print}' "$1" |
		sed '1,/^$/{/^$/d}'
}

roundtrip() { # NAME TRACE [VIEW...]: export, read back, compare the reports
	local name=$1 trace=$2
	shift 2
	"$OPSCOPE" export -q -f chrome -o "$T/$name.json" "$trace" &&
		"$OPSCOPE" report -f json "$trace" >"$T/$name.a.json" &&
		"$OPSCOPE" report -f json "$T/$name.json" >"$T/$name.b.json" &&
		"$PY" "$T/same.py" "$T/$name.a.json" "$T/$name.b.json" "$@" >"$T/py" 2>&1
	check "round trip $name: the same tables${*:+ (with $*)}" \
		'grep -qx ok "$T/py" || { tail -3 "$T/py"; false; }'
}

# --- the generator's traces and a recorded training loop
"$PROGRAMS/make_trace" "$T/sample.opscope"
"$PROGRAMS/make_trace" "$T/noend.opscope" --no-end
"$PROGRAMS/make_trace" "$T/v2.opscope" --v2
"$PROGRAMS/make_trace" "$T/long.opscope" --long
roundtrip sample "$T/sample.opscope" overview model step operator nvtx
roundtrip noend "$T/noend.opscope" overview model step
roundtrip v2 "$T/v2.opscope" overview model step
roundtrip long "$T/long.opscope" overview
"$OPSCOPE" record -q -o "$T/train.opscope" -- "$BIN/example_train_loop" >/dev/null 2>&1
roundtrip train "$T/train.opscope" device overview model step operator
# NVTX push/pop and start/end (async) ranges, when the toolkit's headers were there
if [ -x "$PROGRAMS/prog_nvtx_app" ]; then
	"$OPSCOPE" record -q -o "$T/nvtx.opscope" -- "$PROGRAMS/prog_nvtx_app" 2 50 >/dev/null
	roundtrip nvtx "$T/nvtx.opscope" nvtx
fi
for f in sample train; do
	"$OPSCOPE" report --views overview,model,step "$T/$f.opscope" >"$T/$f.a.txt"
	"$OPSCOPE" report --views overview,model,step "$T/$f.json" >"$T/$f.b.txt"
done
tables_after_files "$T/train.a.txt" >"$T/train.a.tables"
tables_after_files "$T/train.b.txt" >"$T/train.b.tables"
check "text: the Overview, Model and Step tables of the train loop read back are the same" \
	'grep -q -- "-Model Summary-" "$T/train.a.tables" && grep -q -- "-Step Summary-" "$T/train.a.tables" && cmp -s "$T/train.a.tables" "$T/train.b.tables"'
tables_after_files "$T/sample.b.txt" >"$T/sample.b.tables"
check "sample read back: ProfileStep, Forward and Dataloader rows in the Model table" \
	'grep -Eq "^ProfileStep +1 " "$T/sample.b.tables" && grep -Eq "^  Forward +1 " "$T/sample.b.tables" && grep -Eq "^  Dataloader +1 " "$T/sample.b.tables"'
"$OPSCOPE" dump "$T/long.opscope" | awk '$3 == "range" {print $4, $5}' | sort >"$T/long.a.dump"
"$OPSCOPE" dump "$T/long.json" | awk '$3 == "range" {print $4, $5}' | sort >"$T/long.b.dump"
check "long: every range keeps its category (Kernel and Memset on host threads too)" \
	'grep -q "^Kernel " "$T/long.a.dump" && cmp -s "$T/long.a.dump" "$T/long.b.dump"'
"$OPSCOPE" info "$T/long.json" >"$T/long.info"
"$OPSCOPE" info "$T/long.opscope" >"$T/long.oinfo"
check "long: unclosed ranges stay unclosed (a flag, not an argument)" \
	'grep "^model:" "$T/long.oinfo" | grep -o "([0-9]* unclosed)" >"$T/u" && grep -qF "$(cat "$T/u")" "$T/long.info" && ! grep -q "([0]* unclosed)" "$T/u"'

# --- Kineto traces: device queues stay device queues
roundtrip full "$C/full.json" overview kernel
[ -f "$R0" ] && roundtrip resnet50 "$R0" overview model step kernel operator

# --- what the export writes
"$OPSCOPE" export -q -o "$T/full.chrome.json" "$C/full.json"
cat >"$T/fl.json" <<'EOF'
{"traceEvents":[
{"ph":"X","cat":"cpu_op","name":"op","pid":5,"tid":5,"ts":1,"dur":2,"args":{"x":0.07407400000000001,"y":0.30000000000000004,"z":0.5}},
{"ph":"X","cat":"Nvtx","name":"green","pid":5,"tid":5,"ts":4,"dur":1,"args":{"color":4278255360}},
{"ph":"X","cat":"Nvtx","name":"red","pid":5,"tid":5,"ts":6,"dur":1,"args":{"color":4294901760}},
{"ph":"C","name":"ratio","pid":5,"tid":5,"ts":8,"args":{"v":0.07407399999999999}}
]}
EOF
"$OPSCOPE" export -q -o "$T/fl.chrome.json" "$T/fl.json"
"$OPSCOPE" export -q -o "$T/sample.chrome.json" "$T/sample.opscope"
cat >"$T/export.py" <<'PYEOF'
import json, sys
what, full_p, fl_p, sample_p = sys.argv[1:5]
def events(p):
    return json.load(open(p))["traceEvents"]
def names(ev, kind):
    return {(e["pid"], e["tid"]): e["args"]["name"] for e in ev
            if e["ph"] == "M" and e["name"] == kind}
fl = events(fl_p)
op = [e for e in fl if e.get("name") == "op"][0]
if what == "names":
    full = events(full_p)
    procs = names(full, "process_name")
    assert procs[(10, 0)] == "python", procs         # the trace's own process name
    assert not any(v.startswith("process ") for v in procs.values()), procs
    assert names(events(sample_p), "process_name")[(100, 0)] == "train"
elif what == "gpu":
    full = events(full_p)
    procs, threads = names(full, "process_name"), names(full, "thread_name")
    assert procs[(0, 0)] == "GPU 0", procs           # the device, named
    assert threads[(0, 7)] == "stream 7" and threads[(0, 8)] == "stream 8", threads
    kinds = {(e["pid"], e["tid"]): e["args"].get("opscope_track") for e in full
             if e["ph"] == "M" and e["name"] == "thread_name"}
    assert kinds[(0, 7)] == "device" and kinds[(10, 11)] == "thread", kinds
elif what == "colors":
    green = [e for e in fl if e.get("name") == "green"][0]
    red = [e for e in fl if e.get("name") == "red"][0]
    assert green["args"]["color"] == 0xFF00FF00 and red["args"]["color"] == 0xFFFF0000
    assert green["cname"] == "cq_build_attempt_passed", green   # (103, 218, 35)
    assert red["cname"] == "terrible", red                      # (180, 0, 0)
    assert "cname" not in op
elif what == "floats":
    text = open(fl_p).read()
    import math
    above, below = math.nextafter(0.074074, 1), math.nextafter(0.074074, 0)
    assert op["args"]["x"] == above and op["args"]["y"] == 0.1 + 0.2, op
    # 16 digits where 16 are enough (%.17g wrote 0.074074000000000015), 17 where needed
    assert '"x":0.07407400000000001,' in text and '"y":0.30000000000000004,' in text, text
    assert '"value":0.07407399999999999}' in text, text
    assert "0.074074000000000015" not in text and "0.074073999999999987" not in text
    assert [e for e in fl if e["ph"] == "C"][0]["args"]["value"] == below
print("ok")
PYEOF
for w in names gpu colors floats; do
	"$PY" "$T/export.py" $w "$T/full.chrome.json" "$T/fl.chrome.json" "$T/sample.chrome.json" >"$T/py.$w" 2>&1
done
check "export: processes named by their program (not \"process <pid>\")" \
	'grep -qx ok "$T/py.names" || { cat "$T/py.names"; false; }'
check "export: GPU processes and stream threads named, marked as device queues" \
	'grep -qx ok "$T/py.gpu" || { cat "$T/py.gpu"; false; }'
check "export: NVTX colours as the nearest cname, the exact ARGB kept in args" \
	'grep -qx ok "$T/py.colors" || { cat "$T/py.colors"; false; }'
check "export: floats in their shortest round-trip form" \
	'grep -qx ok "$T/py.floats" || { cat "$T/py.floats"; false; }'

# --- Paddle's Chrome JSON
P=$C/paddle.json
"$OPSCOPE" dump "$P" >"$T/paddle.dump"
check "Paddle: every type is our category of the same name" \
	'(for c in "ProfileStep ProfileStep#0" "Dataloader Dataloader" "Forward Forward" "Backward Backward" "Optimization Optimization Step" "PythonOp linear" "PythonUserDefined my_region" "Operator matmul dygraph" "OperatorInner matmul compute" "OperatorInner matmul kernel launch" "CudaRuntime cudaLaunchKernel" "Communication c_allreduce_sum" "UserDefined GradientClip"; do grep -q " range $c dur=" "$T/paddle.dump" || { echo "# missing: $c"; exit 1; }; done)'
check "Paddle: kernels and copies on the device's stream; [memory] a Memory instant" \
	'grep -q " gpu0:7 range Kernel volta_sgemm_128x64_nn dur=60000 " "$T/paddle.dump" && grep -q " gpu0:7 range Memcpy Memcpy DtoH dur=10000 " "$T/paddle.dump" && grep -q " instant Memory \[memory\]" "$T/paddle.dump"'
check "Paddle: the [1.000 ms] in its names is gone" '! grep -q " ms\]\| us\]" "$T/paddle.dump"'
"$OPSCOPE" report -f json "$P" >"$T/paddle.report.json"
"$PY" - "$T/paddle.report.json" <<'PYEOF' >"$T/py" 2>&1
import json, sys
t = {x["view"]: x for x in json.load(open(sys.argv[1]))["tables"]}
model = [r["name"] for r in t["model"]["rows"]]
assert model[:5] == ["ProfileStep", "Dataloader", "Forward", "Backward", "Optimization"], model
step = t["step"]["rows"][0]
assert step["step"] == "ProfileStep#0" and step["total_ns"] == 1000000, step
op = [r for r in t["operator"]["rows"] if r["name"] == "matmul dygraph"][0]
assert op["gpu_total_ns"] == 60000, op      # its kernel, by Paddle's "correlation id"
print("ok")
PYEOF
check "Paddle: Model and Step tables, the kernel under its operator" \
	'grep -qx ok "$T/py" || { cat "$T/py"; false; }'

# two files traced by one pid (the H200 recording under two names): the export's process
# object for that pid holds each metadata key once (metadata is per file; JSON keys unique)
H2=$SRC/tests/data/h200
mkdir -p "$T/twopid" && cp "$H2/train.opscope" "$T/twopid/a.opscope" && cp "$H2/train.opscope" "$T/twopid/b.opscope"
"$OPSCOPE" export -q -f chrome -o "$T/twopid.json" "$T/twopid"
check "export of two files of one pid: no key twice in any object" \
	'"$PY" -c "import json, sys
def pairs(kv):
    if len({k for k, _ in kv}) != len(kv):
        sys.exit(1)
    return dict(kv)
d = json.load(open(sys.argv[1]), object_pairs_hook=pairs)
sys.exit(0 if d[\"otherData\"][\"processes\"] else 1)" "$T/twopid.json"'
tap_done
