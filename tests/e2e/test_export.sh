#!/usr/bin/env bash
# test_export.sh: `opscope export` of imported and recorded traces: SQLite queried with the
# sqlite3 shell (event counts equal to `opscope info`'s), Chrome JSON re-emitted from a
# Kineto trace and split into parts under a size limit (each part valid JSON with the
# metadata, each under the limit, together exactly the events of the whole export), errors.
# Env: OPSCOPE (the CLI), SRC (repository root), PROGRAMS (tests build dir).
set -u
: "${OPSCOPE:?}" "${SRC:?}"
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "skip: no $PY"; exit 77; }
command -v sqlite3 >/dev/null || { echo "skip: no sqlite3 shell"; exit 77; }
C=$SRC/tests/fuzz-corpus/kineto
R0=$SRC/../shared/data/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz
[ -f "$R0" ] || R0=$C/full.json

# --- SQLite
"$OPSCOPE" export -q -f sqlite -o "$T/t.sqlite" "$R0"
check "sqlite export" '[ $? -eq 0 ] && [ -s "$T/t.sqlite" ]'
ranges=$("$OPSCOPE" info "$R0" | sed -n 's/^model: *\([0-9]*\) ranges (0 unclosed), \([0-9]*\) instants, \([0-9]*\) counter.*/\1 \2 \3/p')
got=$(sqlite3 "$T/t.sqlite" "select (select count(*) from events where kind='range') || ' ' || (select count(*) from events where kind='instant') || ' ' || (select count(*) from events where kind='counter')")
check "sqlite: as many ranges, instants, counters as opscope info counts ($ranges)" '[ -n "$ranges" ] && [ "$got" = "$ranges" ]'
flows=$("$OPSCOPE" info "$R0" | sed -n 's/.* \([0-9]*\) flows.*/\1/p')
check "sqlite: every flow" '[ "$(sqlite3 "$T/t.sqlite" "select count(*) from flows")" = "$flows" ]'
k=$(sqlite3 "$T/t.sqlite" "select count(*) from events_named e join args_named a on a.event_id = e.id where e.category = 'Kernel' and a.key = 'correlation'")
check "sqlite: kernels keep their correlation ids" '[ "$k" -gt 0 ] && [ "$k" = "$(sqlite3 "$T/t.sqlite" "select count(*) from events where category = '"'"'Kernel'"'"'")" ]'
"$OPSCOPE" export -f sqlite -o - "$R0" >/dev/null 2>"$T/err"
check "sqlite to stdout is refused with a clear line" '[ $? -eq 1 ] && grep -q "needs a file" "$T/err"'
"$OPSCOPE" export -f sqlite -o /nonexistent/dir/x.sqlite "$R0" >/dev/null 2>"$T/err"
check "sqlite to an unwritable place: exit 1, one line" '[ $? -eq 1 ] && [ $(wc -l <"$T/err") -eq 1 ]'

# --- Chrome, whole and in parts
"$OPSCOPE" export -q --max-part-size 0 -o "$T/whole.json" "$R0"
check "chrome export of an imported trace" '[ $? -eq 0 ] && [ -s "$T/whole.json" ]'
# a limit that forces parts: 600 kB on the real trace, 60 % of the whole on the small fallback
whole=$(stat -c %s "$T/whole.json")
limit=614400
[ "$whole" -gt $((limit * 2)) ] || limit=$((whole * 6 / 10))
"$OPSCOPE" export --max-part-size "$limit" -o "$T/split.json" "$R0" 2>"$T/err"
check "split: several parts, each announced" '[ $? -eq 0 ] && [ ! -e "$T/split.json" ] && [ $(grep -c "wrote .*split.part[0-9]*.json" "$T/err") -ge 2 ]'
"$PY" - "$T" "$limit" <<'PYEOF' >"$T/py" 2>&1
import glob, json, os, sys
t = sys.argv[1]
whole = json.load(open(os.path.join(t, "whole.json")))["traceEvents"]
parts = sorted(glob.glob(os.path.join(t, "split.part*.json")),
               key=lambda p: int(p.rsplit("part", 1)[1].split(".")[0]))
key = lambda e: json.dumps(e, sort_keys=True)
meta = sorted(key(e) for e in whole if e["ph"] == "M")
union = []
last_end = None
for p in parts:
    assert os.path.getsize(p) <= int(sys.argv[2]), (p, os.path.getsize(p))
    ev = json.load(open(p))["traceEvents"]
    assert sorted(key(e) for e in ev if e["ph"] == "M") == meta, p   # every part opens alone
    ts = [e["ts"] for e in ev if e["ph"] in ("X", "i", "C")]
    if ts and last_end is not None:
        assert min(ts) >= last_end, (p, min(ts), last_end)           # parts follow in time
    if ts:
        last_end = max(ts)
    union += [key(e) for e in ev if e["ph"] != "M"]
assert sorted(union) == sorted(key(e) for e in whole if e["ph"] != "M"), "parts != whole"
print("ok", len(parts))
PYEOF
check "split: parts under the limit, metadata in each, in time order, union = whole" 'grep -q "^ok" "$T/py" || { cat "$T/py"; false; }'
"$OPSCOPE" export --max-part-size 12x "$R0" >/dev/null 2>&1
check "bad --max-part-size: usage error" '[ $? -eq 2 ]'

tap_done
