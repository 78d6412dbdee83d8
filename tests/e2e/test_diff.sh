#!/usr/bin/env bash
# test_diff.sh: `opscope diff` through the CLI on real pairs of Kineto traces (HTA's
# trace_diff control/test and trace_compare base/test, given as directories), a trace against
# itself, two step ranges of the ResNet-50 trace, --fail-if rules that fire (exit 3) and do
# not (exit 0), a malformed rule (exit 2), a missing file (exit 1), and the three formats.
# Numbers are checked against an independent reading of the traces in Python (json + gzip).
# Env: OPSCOPE (the CLI), SRC (repository root).
set -u
: "${OPSCOPE:?}" "${SRC:?}"
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "skip: no $PY"; exit 77; }
DATA=$SRC/../shared/data/kineto
[ -d "$DATA/hta/trace_diff" ] || { echo "skip: no $DATA/hta/trace_diff"; exit 77; }
CTL=$DATA/hta/trace_diff/control
TST=$DATA/hta/trace_diff/test
R0=$DATA/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz

# --- trace_diff: control against test (directories of one rank each)
"$OPSCOPE" diff -f json "$CTL" "$TST" >"$T/d.json" 2>"$T/err"
check "control vs test: exit 0 without rules, nothing on stderr" '[ $? -eq 0 ] && [ ! -s "$T/err" ]'
# The top changed kernel: its calls and total duration on both sides, read from the traces
# (every "X" event of cat "kernel" by name, dur in us), and the order by |change|
"$PY" - "$T/d.json" "$CTL"/*.json.gz "$TST"/*.json.gz <<'EOF' >"$T/py" 2>&1
import collections, gzip, json, sys
d = json.load(open(sys.argv[1]))
t = d["tables"][0]
assert t["view"] == "diff", t["view"]
rows = t["rows"]
def kernels(path):
    k = collections.defaultdict(lambda: [0, 0.0])
    for e in json.load(gzip.open(path))["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") == "kernel":
            k[e["name"]][0] += 1
            k[e["name"]][1] += e["dur"]
    return k
a, b = kernels(sys.argv[2]), kernels(sys.argv[3])
top = max(set(a) | set(b), key=lambda n: abs(b[n][1] - a[n][1]))
kr = [r for r in rows if r["kind"] == "kernel"]
r = kr[0]
assert r["name"] == top, (r["name"], top)
assert r["calls_a"] == a[top][0] and r["calls_b"] == b[top][0], (r, a[top], b[top])
assert abs(r["time_a_ns"] - a[top][1] * 1000) < 1 and abs(r["time_b_ns"] - b[top][1] * 1000) < 1, r
assert r["change_ns"] == r["time_b_ns"] - r["time_a_ns"] and r["time"] == "GPU"
assert r["status"] == ("added" if a[top][0] == 0 else "both"), r
ch = [abs(x["change_ns"]) for x in rows]
assert ch == sorted(ch, reverse=True), "not sorted by |change|"
kinds = {x["kind"] for x in rows}
assert {"step", "phase", "op", "kernel", "user"} <= kinds, kinds
st = [x for x in rows if x["kind"] == "step"][0]
assert st["steps_a"] == 6 and st["steps_b"] == 6 and st["calls_a"] == 6, st
print("ok", top[:40], r["calls_a"], r["calls_b"], r["time_b_ns"])
EOF
check "control vs test: top kernel's calls and time as the traces say; sorted by |change|" \
	'grep -q "^ok" "$T/py" || { cat "$T/py"; false; }'

# --- --fail-if: a rule that fires, one that does not
"$OPSCOPE" diff "$CTL" "$TST" --fail-if 'kernel:* > +10%' >/dev/null 2>"$T/err"
check "kernel:* > +10%: fires, exit 3" '[ $? -eq 3 ]'
check "the fired rule is one line on stderr naming it and its rows" \
	'[ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "^opscope diff: rule .kernel:\* > +10%. fired: kernel " "$T/err"'
"$OPSCOPE" diff "$CTL" "$TST" --fail-if 'step > +5%' --fail-if 'op:aten::item > +2ms' \
	--fail-if 'step < -50%' >/dev/null 2>"$T/err"
check "step > +5% and op:aten::item > +2ms fire, step < -50% does not: two lines" \
	'[ $? -eq 3 ] && [ "$(wc -l <"$T/err")" -eq 2 ] && grep -q "rule .step > +5%. fired: step ProfileStep +60" "$T/err" && ! grep -q "step < -50%" "$T/err"'
"$OPSCOPE" diff "$CTL" "$TST" --fail-if 'step < -50%' --fail-if 'phase:Nothing > +1ns' \
	>/dev/null 2>"$T/err"
check "rules that do not fire: exit 0, stderr empty" '[ $? -eq 0 ] && [ ! -s "$T/err" ]'
# aten::_to_copy: +152 % in total but within the steps' noise: held back by the noise check
"$OPSCOPE" diff "$CTL" "$TST" --fail-if 'op:aten::_to_copy > +100%' >/dev/null 2>"$T/err"
check "a change within noise does not fire" '[ $? -eq 0 ]'
"$OPSCOPE" diff "$CTL" "$TST" --fail-if 'op:aten::_to_copy > +100%' --no-noise-check \
	>/dev/null 2>"$T/err"
check "... and fires with --no-noise-check" '[ $? -eq 3 ] && grep -q "within noise" "$T/err"'

# --- a trace against itself: no change, no rule fires
"$OPSCOPE" diff -f csv "$TST" "$TST" --fail-if 'step > +0%' --fail-if 'kernel:* > +0ns' \
	--fail-if 'op:* < -0ns' >"$T/self.csv" 2>"$T/err"
check "itself: exit 0, stderr empty" '[ $? -eq 0 ] && [ ! -s "$T/err" ]'
"$PY" - "$T/self.csv" <<'EOF' >"$T/py" 2>&1
import csv, sys
lines = [l for l in open(sys.argv[1]) if not l.startswith("#") and l.strip()]
rows = list(csv.DictReader(lines))
assert len(rows) > 100, len(rows)
for r in rows:
    assert r["change_ms"] in ("0.000000", "-0.000000"), r
    assert r["calls_a"] == r["calls_b"] and r["status"] == "both", r
    assert r["noise"] in ("within", "-"), r
print("ok", len(rows))
EOF
check "itself: every row unchanged, on both sides (CSV)" 'grep -q "^ok" "$T/py" || { cat "$T/py"; false; }'

# --- trace_compare: base against test (different step counts: said in one line)
"$OPSCOPE" diff -f json "$DATA/hta/trace_compare/base" "$DATA/hta/trace_compare/test" \
	>"$T/c.json" 2>"$T/err"
check "trace_compare: exit 0, a note that the step counts differ" \
	'[ $? -eq 0 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "A has 2 steps, B 1" "$T/err"'
"$PY" - "$T/c.json" "$DATA/hta/trace_compare" <<'EOF' >"$T/py" 2>&1
import collections, gzip, json, sys
rows = json.load(open(sys.argv[1]))["tables"][0]["rows"]
def ops(path):
    k = collections.Counter()
    for e in json.load(gzip.open(path))["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") == "cpu_op":
            k[e["name"]] += 1
    return k
a = ops(sys.argv[2] + "/base/base.json.gz")
b = ops(sys.argv[2] + "/test/test.json.gz")
got = {r["name"]: (r["calls_a"], r["calls_b"], r["status"]) for r in rows if r["kind"] == "op"}
for n in set(a) | set(b):
    want = (a[n], b[n], "added" if not a[n] else "removed" if not b[n] else "both")
    assert got.get(n) == want, (n, got.get(n), want)
assert len(got) == len(set(a) | set(b)), (len(got), len(set(a) | set(b)))
print("ok", len(got))
EOF
check "trace_compare: every operator's calls and status as the traces say" \
	'grep -q "^ok" "$T/py" || { cat "$T/py"; false; }'

# --- two step ranges of one trace (ResNet-50: ProfilerStep#5..#10 are steps 0..5)
"$OPSCOPE" diff -f json "$R0" --steps 0-2 --vs 3-5 >"$T/r.json" 2>"$T/err"
check "steps 0-2 vs 3-5: exit 0, stderr empty" '[ $? -eq 0 ] && [ ! -s "$T/err" ]'
"$PY" - "$T/r.json" "$R0" <<'EOF' >"$T/py" 2>&1
import gzip, json, sys
d = json.load(open(sys.argv[1]))
assert d["inputs"][0].endswith("(steps 0-2)") and d["inputs"][1].endswith("(steps 3-5)"), d["inputs"]
rows = d["tables"][0]["rows"]
ev = [e for e in json.load(gzip.open(sys.argv[2]))["traceEvents"] if e.get("ph") == "X"]
steps = sorted((e["ts"], e["ts"] + e["dur"]) for e in ev if e["name"].startswith("ProfilerStep#"))
assert len(steps) == 6, steps
def side(lo, hi, name):  # calls and ns of cpu_op `name` starting in steps lo..hi
    sp = steps[lo:hi + 1]
    xs = [e["dur"] for e in ev if e.get("cat") in ("cpu_op", "Operator") and e["name"] == name
          and any(s <= e["ts"] < t for s, t in sp)]
    return len(xs), sum(xs) * 1000
for name in ("aten::conv2d", "aten::add_", "aten::to"):
    r = [x for x in rows if x["kind"] == "op" and x["name"] == name][0]
    ca, ta = side(0, 2, name)
    cb, tb = side(3, 5, name)
    assert (r["calls_a"], r["calls_b"]) == (ca, cb), (name, r, ca, cb)
    assert abs(r["time_a_ns"] - ta) < 1 and abs(r["time_b_ns"] - tb) < 1, (name, r, ta, tb)
    assert r["steps_a"] == 3 and r["steps_b"] == 3, r
st = [x for x in rows if x["kind"] == "step"][0]
assert st["calls_a"] == 3 and st["calls_b"] == 3, st
print("ok")
EOF
check "step ranges: calls and time of three operators per range as the trace says" \
	'grep -q "^ok" "$T/py" || { cat "$T/py"; false; }'
"$OPSCOPE" diff "$R0" --steps 0-2 --vs 4-9 >/dev/null 2>"$T/err"
check "a step range the trace does not have: exit 1, one line" \
	'[ $? -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "has 6 steps: steps 4-9" "$T/err"'
"$OPSCOPE" diff "$R0" >/dev/null 2>"$T/err"
check "one trace without two ranges: usage error" '[ $? -eq 2 ]'

# --- errors: a malformed rule, a missing file
"$OPSCOPE" diff "$CTL" "$TST" --fail-if 'kernal:* > +10%' >/dev/null 2>"$T/err"
check "malformed rule: exit 2, one line naming it" \
	'[ $? -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "bad rule .kernal:\* > +10%." "$T/err"'
"$OPSCOPE" diff "$CTL" "$TST" --fail-if 'step > 5' >/dev/null 2>"$T/err"
check "a rule without a unit: exit 2" '[ $? -eq 2 ] && grep -q "no unit" "$T/err"'
"$OPSCOPE" diff "$CTL" "$T/missing.json" >/dev/null 2>"$T/err"
check "missing file: exit 1, one line naming it" \
	'[ $? -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "missing.json" "$T/err"'

# --- text, --top, --columns, --by-shape
"$OPSCOPE" diff --top 3 -u us "$CTL" "$TST" >"$T/d.txt"
check "text: --top 3 gives three rows, in us" \
	'grep -q -- "-Diff Summary-" "$T/d.txt" && grep -q "^Time unit: us" "$T/d.txt" && [ "$(grep -cE "^(step|phase|op|module|kernel|nvtx|user) " "$T/d.txt")" -eq 3 ]'
"$OPSCOPE" diff -f csv -c kind,name,change_ns,change -n 2 "$CTL" "$TST" >"$T/c.csv"
check "-c kind,name,change_ns,change: those columns" 'grep -qx "kind,name,change_ms,change" "$T/c.csv"'
"$OPSCOPE" diff -c nosuch "$CTL" "$TST" >/dev/null 2>"$T/err"
check "-c with an unknown column: usage error" '[ $? -eq 2 ] && grep -q "nosuch" "$T/err"'
"$OPSCOPE" diff --by-shape -f json "$CTL" "$TST" >"$T/s.json"
"$PY" - "$T/s.json" <<'EOF' >"$T/py" 2>&1
import json, sys
rows = json.load(open(sys.argv[1]))["tables"][0]["rows"]
mm = [r for r in rows if r["kind"] == "op" and r["name"] == "aten::mm"]
assert len(mm) > 1 and all(r["input_dims"].startswith("[") for r in mm), mm[:3]
print("ok")
EOF
check "--by-shape: aten::mm rows per input shape" 'grep -q "^ok" "$T/py" || { cat "$T/py"; false; }'

tap_done
