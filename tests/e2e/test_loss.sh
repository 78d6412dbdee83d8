#!/usr/bin/env bash
# test_loss.sh: loss is never hidden. Every report, in every format and whatever --views asks
# for, has the Trace Files table: per file the events, the events dropped, the bytes of a torn
# tail and whether the file ended cleanly (with why not). Checked on the generator's traces:
# one that dropped events, one without END, one cut in the middle of a record; and on a
# Kineto trace that lost nothing.
# Env: OPSCOPE (the CLI), PROGRAMS (tests build dir, for make_trace), SRC (repository root).
set -u
: "${OPSCOPE:?}" "${PROGRAMS:?}" "${SRC:?}"
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3

"$PROGRAMS/make_trace" "$T/drop.opscope"
"$PROGRAMS/make_trace" "$T/noend.opscope" --no-end
"$PROGRAMS/make_trace" "$T/long.opscope" --long
size=$(stat -c %s "$T/long.opscope")
head -c $((size / 2)) "$T/long.opscope" >"$T/torn.opscope"
cd "$T" || exit 1 # short relative names: the File column is cut past 30 characters

out=$("$OPSCOPE" report --views kernel drop.opscope)
check "text: the files table whatever --views asks for" 'echo "$out" | grep -q "Trace Files"'
check "text: the events dropped" 'echo "$out" | grep -qE "drop.opscope +opscope +20 +5 +20.00 +0 +complete"'
check "text: a warning when events were lost" 'echo "$out" | grep -q "^Events were lost"'
out=$("$OPSCOPE" report --views step noend.opscope)
check "text: a file without END is INCOMPLETE, with why" \
	'echo "$out" | grep -q "INCOMPLETE  no END record: the recording did not stop cleanly"'
out=$("$OPSCOPE" report --views overview torn.opscope)
check "text: the bytes of a torn tail" 'echo "$out" | grep -qE "torn.opscope +opscope .* [1-9][0-9]* +INCOMPLETE"'

"$OPSCOPE" report --format json --views kernel torn.opscope >"$T/r.json"
check "json: fields for every kind of loss" '$PY - "$T/r.json" <<PYEOF
import json, sys
t = [t for t in json.load(open(sys.argv[1]))["tables"] if t["view"] == "files"]
assert len(t) == 1, t
r = t[0]["rows"][0]
assert r["file"].endswith("torn.opscope"), r
assert r["torn_tail_bytes"] > 0 and r["status"] == "INCOMPLETE", r
assert set(r) >= {"events", "dropped", "dropped_ratio", "torn_tail_bytes", "incomplete_reason"}, r
PYEOF'
"$OPSCOPE" report --format csv --views model drop.opscope >"$T/r.csv"
check "csv: the files table with its dropped events" 'grep -q "^# Trace Files" "$T/r.csv" &&
	grep -q "drop.opscope,opscope,20,5,0.200000,0,complete," "$T/r.csv"'

out=$("$OPSCOPE" report "$SRC/tests/fuzz-corpus/kineto/full.json")
check "a file that lost nothing says so" 'echo "$out" | grep -q "Every event recorded was read"'
tap_done
