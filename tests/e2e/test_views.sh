#!/usr/bin/env bash
# test_views.sh: every kind of range a user records has its table (issue 16, points 12 and 13):
# the C API's UserDefined ranges, Python functions and the nn.Module hierarchy of a Kineto
# trace, a view asked for with nothing to show (one line, exit 0, in every format), and the
# operator table grouped by input shapes on a small trace and on the real ResNet-50 trace
# (checked against the raw JSON). The NVTX table is checked on a recording in test_nvtx.sh.
set -u
: "${OPSCOPE:?}" "${PROGRAMS:?}" "${SRC:?}"
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3

# --- the C API's UserDefined ranges: 2 threads x 100 iterations, an "outer" range every 10
"$OPSCOPE" record -q -o "$T/api.opscope" -- "$PROGRAMS/prog_api_threads" 2 100
check "record the C API program" '[ $? -eq 0 ]'
"$OPSCOPE" report --views userdefined -f csv "$T/api.opscope" >"$T/ud.csv"
check "report --views userdefined exits 0" '[ $? -eq 0 ]'
check "the C API's UserDefined ranges have their table" \
	'grep -q "^# UserDefined Summary" "$T/ud.csv" && grep -q "^outer,20," "$T/ud.csv"'
"$OPSCOPE" report "$T/api.opscope" >"$T/all.txt"
check "and the default report shows it" 'grep -q "UserDefined Summary" "$T/all.txt"'

# --- a view asked for with nothing to show: one line in text, an empty table in CSV and JSON
"$OPSCOPE" report --views module,python "$T/api.opscope" >"$T/empty.txt"
check "an empty view asked for exits 0" '[ $? -eq 0 ]'
check "text: one line says so" \
	'grep -qx "Module: no nn.Module calls in the trace" "$T/empty.txt" &&
	 grep -qx "PythonFunction: no ranges of this kind in the trace" "$T/empty.txt"'
"$OPSCOPE" report --views module -f csv "$T/api.opscope" >"$T/empty.csv"
check "CSV: the title and the line as comments" \
	'grep -A1 "^# Module Summary$" "$T/empty.csv" | grep -qx "# Module: no nn.Module calls in the trace"'
"$OPSCOPE" report --views module -f json "$T/api.opscope" >"$T/empty.json"
check "JSON: an empty table with the same meaning" "$PY -c '
import json, sys
t = [t for t in json.load(open(\"$T/empty.json\"))[\"tables\"] if t[\"view\"] == \"module\"]
sys.exit(not (len(t) == 1 and t[0][\"rows\"] == [] and t[0][\"empty\"].startswith(\"Module: \")))'"
"$OPSCOPE" report "$T/api.opscope" >"$T/all.txt"
check "views not asked for by name stay silent" '! grep -q "no nn.Module calls" "$T/all.txt"'

# --- a Kineto trace with Python functions, module calls, a user annotation, shapes
cat >"$T/py.json" <<'EOF'
{"traceEvents":[
 {"ph":"X","cat":"python_function","name":"train.py(10): main","pid":1,"tid":1,"ts":0,"dur":1000},
 {"ph":"X","cat":"python_function","name":"nn.Module: Net_0","pid":1,"tid":1,"ts":100,"dur":500},
 {"ph":"X","cat":"python_function","name":"nn.Module: Linear_0","pid":1,"tid":1,"ts":150,"dur":200},
 {"ph":"X","cat":"cpu_op","name":"aten::linear","pid":1,"tid":1,"ts":160,"dur":100,"args":{"Input Dims":[[8,4],[2,4],[2]]}},
 {"ph":"X","cat":"python_function","name":"nn.Module: Linear_1","pid":1,"tid":1,"ts":400,"dur":100},
 {"ph":"X","cat":"cpu_op","name":"aten::linear","pid":1,"tid":1,"ts":410,"dur":50,"args":{"Input Dims":[[8,2],[1,2],[1]]}},
 {"ph":"X","cat":"user_annotation","name":"my_region","pid":1,"tid":1,"ts":650,"dur":200},
 {"ph":"X","cat":"python_function","name":"helper","pid":1,"tid":1,"ts":655,"dur":10},
 {"ph":"X","cat":"cpu_op","name":"aten::linear","pid":1,"tid":1,"ts":700,"dur":60,"args":{"Input Dims":[[8,4],[2,4],[2]]}}
]}
EOF
"$OPSCOPE" report --views python -u us -f csv "$T/py.json" >"$T/py.csv"
check "Python functions: total and self time (main: 1000 - 500 - 200)" \
	'grep -q "^train.py(10): main,1,1000.000,1000.000,1000.000,1000.000,1.000000,300.000," "$T/py.csv"'
check "module calls are not in the Python function table" '! grep -q "nn.Module" "$T/py.csv"'
"$OPSCOPE" report --views module -u us -f csv "$T/py.json" >"$T/mod.csv"
check "modules: a tree with levels, total and self time, the class without its prefix" \
	'grep -q "^0,Net_0,1,500.000,500.000,500.000,500.000,0.500000,200.000," "$T/mod.csv" &&
	 grep -q "^1,Linear_0,1,200.000,.*,200.000," "$T/mod.csv" &&
	 grep -q "^1,Linear_1,1,100.000," "$T/mod.csv"'
"$OPSCOPE" report --views module "$T/py.json" >"$T/mod.txt"
check "text indents the child modules" 'grep -q "^  Linear_0 " "$T/mod.txt"'
"$OPSCOPE" report --views userdefined -f csv "$T/py.json" >"$T/pyud.csv"
check "user annotations are UserDefined, module calls are not" \
	'grep -q "^my_region,1," "$T/pyud.csv" && ! grep -q "nn.Module" "$T/pyud.csv"'

# --- operators by input shapes, in every format
for f in text csv json; do
	"$OPSCOPE" report --views operator --group-by input-shape -u us -f $f "$T/py.json" >"$T/op.$f"
	check "--group-by input-shape ($f) exits 0" '[ $? -eq 0 ]'
done
check "text: an Input Shapes column, a row per shape" \
	'grep -q "Input Shapes" "$T/op.text" && [ "$(grep -c "^aten::linear " "$T/op.text")" -eq 2 ]'
check "CSV: by name and shapes" \
	'grep -q "^name,input_shapes,calls," "$T/op.csv" &&
	 grep -q "^aten::linear,\"\[\[8,4\],\[2,4\],\[2\]\]\",2,160.000," "$T/op.csv" &&
	 grep -q "^aten::linear,\"\[\[8,2\],\[1,2\],\[1\]\]\",1,50.000," "$T/op.csv"'
check "JSON: input_shapes of each row" "$PY -c '
import json, sys
t = [t for t in json.load(open(\"$T/op.json\"))[\"tables\"] if t[\"view\"] == \"operator\"][0]
got = sorted((r[\"input_shapes\"], r[\"calls\"]) for r in t[\"rows\"] if r.get(\"level\", 0) == 0)
sys.exit(got != [(\"[[8,2],[1,2],[1]]\", 1), (\"[[8,4],[2,4],[2]]\", 2)])'"
"$OPSCOPE" report --views operator -f csv "$T/py.json" >"$T/op-name.csv"
check "without it: one row per name, no shapes column" \
	'! grep -q input_shapes "$T/op-name.csv" && [ "$(grep -c "^aten::linear," "$T/op-name.csv")" -eq 1 ]'
"$OPSCOPE" report --group-by size "$T/py.json" >/dev/null 2>"$T/err"
check "--group-by with a bad key: usage error" '[ $? -eq 2 ] && grep -q "group-by" "$T/err"'

# --- the real ResNet-50 trace (Kineto, "Input Dims" on every operator): each (name, shapes)
# row agrees with the raw JSON's cpu_op events
R50=$SRC/../shared/data/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz
if [ -f "$R50" ]; then
	"$OPSCOPE" report --views operator --group-by input-shape --no-op-detail -u us -f json \
		"$R50" >"$T/r50.json"
	check "ResNet-50 by input shapes" '[ $? -eq 0 ]'
	check "ResNet-50: every aten:: row's calls and CPU total as in the raw JSON" "$PY - '$R50' '$T/r50.json' <<'EOF'
import gzip, json, sys
from collections import defaultdict
raw = json.load(gzip.open(sys.argv[1]))
want = defaultdict(lambda: [0, 0.0])
for e in raw['traceEvents']:
    if e.get('ph') == 'X' and e.get('cat') == 'Operator' and e['name'].startswith('aten::'):
        k = (e['name'], json.dumps(e.get('args', {}).get('Input Dims')))
        want[k][0] += 1
        want[k][1] += e['dur']
t = [t for t in json.load(open(sys.argv[2]))['tables'] if t['view'] == 'operator'][0]
got = {(r['name'], r['input_shapes']): (r['calls'], r['cpu_total_ns'] / 1000)
       for r in t['rows'] if r['name'].startswith('aten::')}
bad = [k for k in want if k not in got or got[k][0] != want[k][0] or abs(got[k][1] - want[k][1]) > 0.01]
print('# %d (name, shapes) rows, %d wrong' % (len(want), len(bad)))
names = {k[0] for k in want}
sys.exit(bool(bad) or len(got) != len(want) or len(want) <= len(names))
EOF"
else
	echo "# skip: no ResNet-50 trace in ../shared/data"
fi
tap_done
