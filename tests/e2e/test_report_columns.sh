#!/usr/bin/env bash
# test_report_columns.sh: `report --columns` shows the columns in the order asked for, the
# same in text, CSV and JSON; and CSV cells that a spreadsheet would run as formulas (names
# starting with = + - @, a tab or CR) are written as text with a ' first, while names that are
# plain numbers stay numbers. CSV and JSON are read by Python's csv and json modules.
# Env: OPSCOPE (the CLI).
set -u
: "${OPSCOPE:?}"
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "skip: no $PY"; exit 77; }

# operators whose names a spreadsheet would take for formulas, and two that are numbers
cat >"$T/ops.json" <<'EOF'
{"traceEvents":[
{"ph":"X","cat":"cpu_op","name":"=1+2","pid":1,"tid":1,"ts":0,"dur":10},
{"ph":"X","cat":"cpu_op","name":"-1.5","pid":1,"tid":1,"ts":20,"dur":10},
{"ph":"X","cat":"cpu_op","name":"@SUM(A1)","pid":1,"tid":1,"ts":40,"dur":10},
{"ph":"X","cat":"cpu_op","name":"+cmd|' /C calc'!A0","pid":1,"tid":1,"ts":60,"dur":10},
{"ph":"X","cat":"cpu_op","name":"\tTAB","pid":1,"tid":1,"ts":80,"dur":10},
{"ph":"X","cat":"cpu_op","name":"\rCR","pid":1,"tid":1,"ts":100,"dur":10},
{"ph":"X","cat":"cpu_op","name":"-2+3","pid":1,"tid":1,"ts":120,"dur":10},
{"ph":"X","cat":"cpu_op","name":"+7","pid":1,"tid":1,"ts":140,"dur":10},
{"ph":"X","cat":"cpu_op","name":"plain","pid":1,"tid":1,"ts":160,"dur":10}
]}
EOF

# --- the requested column order, in every format
cols=calls,cpu,name
"$OPSCOPE" report --views operator -c $cols "$T/ops.json" >"$T/cols.txt"
check "text: the header in the order asked for (Calls, CPU, Name)" \
	'grep -Eq "^Calls +CPU Total / Avg / Max / Min / Ratio\(%\) +Name *$" "$T/cols.txt"'
"$OPSCOPE" report --views operator -c $cols -f csv "$T/ops.json" >"$T/cols.csv"
"$OPSCOPE" report --views operator -c $cols -f json "$T/ops.json" >"$T/cols.json"
"$PY" - "$T/cols.csv" "$T/cols.json" <<'PYEOF' >"$T/py" 2>&1
import csv, json, sys
want = ["calls", "cpu_total_ms", "cpu_avg_ms", "cpu_max_ms", "cpu_min_ms", "cpu_ratio", "name"]
blocks = open(sys.argv[1], newline="").read().split("\n\n")
op = [b for b in blocks if b.startswith("# Operator Summary")][0]
rows = list(csv.reader(op.splitlines()[1:]))
assert rows[0] == want, rows[0]
assert all(len(r) == len(want) for r in rows), rows
tables = json.load(open(sys.argv[2]))["tables"]
jrows = [t for t in tables if t["view"] == "operator"][0]["rows"]
jwant = [k.replace("_ms", "_ns") for k in want]
assert all(list(r.keys()) == jwant for r in jrows), list(jrows[0].keys())
print("ok")
PYEOF
check "CSV and JSON: the columns in the order asked for" 'grep -qx ok "$T/py" || { cat "$T/py"; false; }'
"$OPSCOPE" report --views operator -c calls,name,calls -f csv "$T/ops.json" >"$T/twice.csv"
check "a key named twice is shown once, at its first place" \
	'grep -qx "calls,name" "$T/twice.csv"'
"$OPSCOPE" report --views operator -f csv "$T/ops.json" >"$T/all.csv"
check "no --columns: the table's own order" \
	'grep -q "^name,calls,cpu_total_ms," "$T/all.csv"'

# --- formulas are not run; numbers stay numbers
"$PY" - "$T/all.csv" <<'PYEOF' >"$T/py" 2>&1
import csv, sys
text = open(sys.argv[1], newline="").read()
op = [b for b in text.split("\n\n") if b.startswith("# Operator Summary")][0]
rows = list(csv.DictReader(op.split("\n", 1)[1].splitlines(keepends=True)))
names = {r["name"] for r in rows}
guarded = {"'=1+2", "'@SUM(A1)", "'+cmd|' /C calc'!A0", "'\tTAB", "'\rCR", "'-2+3"}
assert guarded <= names, names
assert {"-1.5", "+7", "plain"} <= names, names
# no cell of the block starts with a formula character, but the numbers
for r in rows:
    v = r["name"]
    assert v[:1] not in ("=", "+", "-", "@", "\t", "\r") or v in ("-1.5", "+7"), v
# the numbers are written bare, as numbers, not quoted text
lines = op.splitlines()
assert any(l.startswith("-1.5,") for l in lines), lines
assert any(l.startswith("+7,") for l in lines), lines
float("-1.5")
print("ok")
PYEOF
check "CSV: formula-like names get a ' first, numbers stay bare" 'grep -qx ok "$T/py" || { cat "$T/py"; false; }'
"$OPSCOPE" report --views operator "$T/ops.json" >"$T/all.txt"
check "text keeps the names as they are" 'grep -q "^=1+2 " "$T/all.txt" && grep -q "^-2+3 " "$T/all.txt"'

tap_done
