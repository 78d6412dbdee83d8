#!/bin/bash
# test_cli_tools.sh: the trace tools of the CLI (info, dump, export, help, errors) on the
# deterministic sample trace of tests/tracebuild.c (written by $PROGRAMS/make_trace), with
# exact times thanks to its fake clock. The Chrome export is checked by Python's JSON parser:
# structure, proper nesting per thread, flow pairs, metadata, escaped hostile names.
# Env (from CTest): OPSCOPE (the CLI), PROGRAMS (tests build dir), SRC (source root).
set -u
: "${OPSCOPE:?}" "${PROGRAMS:?}"
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "skip: no $PY"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
fail() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
check() { if eval "$2"; then ok "$1"; else fail "$1"; fi; }

"$PROGRAMS/make_trace" "$T/s.opscope" || { echo "make_trace failed"; exit 1; }
"$PROGRAMS/make_trace" "$T/z.opscope" --zstd
"$PROGRAMS/make_trace" "$T/k.opscope" --no-end

# --- global options and command dispatch ---
"$OPSCOPE" --help >"$T/out" 2>"$T/err"
check "--help exits 0 and lists commands" '[ $? -eq 0 ] && grep -q "^  export " "$T/out" && grep -q "^  record " "$T/out"'
"$OPSCOPE" --version >"$T/out"
check "--version" '[ $? -eq 0 ] && grep -q "^opscope [0-9]" "$T/out"'
"$OPSCOPE" >"$T/out" 2>"$T/err"
check "no command: usage error 2" '[ $? -eq 2 ] && grep -q usage "$T/err"'
"$OPSCOPE" recrod 2>"$T/err"
check "typo gets a suggestion, exit 2" '[ $? -eq 2 ] && grep -qx "opscope: '"'"'recrod'"'"' is not a command. Did you mean '"'"'record'"'"'?" "$T/err"'
"$OPSCOPE" xyzzyplugh 2>"$T/err"
check "unknown command without suggestion" '[ $? -eq 2 ] && grep -q "is not a command" "$T/err"'
for cmd in info dump export; do
	"$OPSCOPE" help $cmd >"$T/h1"
	r1=$?
	"$OPSCOPE" $cmd --help >"$T/h2"
	r2=$?
	check "help $cmd == $cmd --help" '[ $r1 -eq 0 ] && [ $r2 -eq 0 ] && cmp -s "$T/h1" "$T/h2" && grep -q "usage: opscope $cmd" "$T/h1"'
	"$OPSCOPE" $cmd --no-such-option "$T/s.opscope" >"$T/out" 2>"$T/err"
	check "$cmd: bad option is exit 2 with a hint" '[ $? -eq 2 ] && grep -qx "try '"'"'opscope $cmd --help'"'"'" "$T/err" && [ $(wc -l <"$T/err") -eq 2 ]'
	"$OPSCOPE" $cmd >"$T/out" 2>"$T/err"
	check "$cmd: no file is exit 2" '[ $? -eq 2 ]'
done

# --- info ---
"$OPSCOPE" info "$T/s.opscope" >"$T/info"
check "info exits 0" '[ $? -eq 0 ]'
check "info: complete" 'grep -q "^status:     complete" "$T/info"'
check "info: events by kind" 'grep -q "^events:     20 encoded, BEGIN 5, END 4, INSTANT 1, COUNTER 1, ARG 4" "$T/info"'
check "info: threads" 'grep -Eq "^ +0 +100 +100 +14 +0  main \(main\)$" "$T/info" && grep -Eq "^ +1 +100 +101 +6 +5  worker$" "$T/info"'
check "info: drops" 'grep -q "^drops:      5 events lost" "$T/info"'
check "info: time span" 'grep -q "^time span:  1000 .. 2500 ns (CLOCK_MONOTONIC), 1.500 us" "$T/info"'
check "info: metadata" 'grep -Eq "^  program +train$" "$T/info"'
check "info: categories" 'grep -Eq "^  Operator +2$" "$T/info"'
"$OPSCOPE" info "$T/k.opscope" >"$T/info"
check "info: killed recording reported" '[ $? -eq 0 ] && grep -q "INCOMPLETE: no END record" "$T/info"'
size=$(stat -c %s "$T/s.opscope")
head -c $((size - 7)) "$T/s.opscope" >"$T/cut.opscope"
"$OPSCOPE" info "$T/cut.opscope" >"$T/info"
check "info: torn tail reported" '[ $? -eq 0 ] && grep -q "INCOMPLETE" "$T/info" && grep -q "bytes after it discarded" "$T/info" && grep -q "exceeds file" "$T/info"'
"$OPSCOPE" info "$T/z.opscope" >"$T/info"
check "info: zstd trace" '[ $? -eq 0 ] && grep -q "features: zstd" "$T/info" && grep -q "20 encoded" "$T/info"'
printf 'not a trace at all, no no' >"$T/bad.opscope"
"$OPSCOPE" info "$T/bad.opscope" >"$T/out" 2>"$T/err"
check "info: garbage is exit 1 with file and offset" '[ $? -eq 1 ] && grep -qx "opscope: $T/bad.opscope: offset 0: not a trace (neither an .opscope file nor JSON)" "$T/err"'
"$OPSCOPE" info "$T/missing.opscope" >"$T/out" 2>"$T/err"
check "info: missing file is exit 1" '[ $? -eq 1 ] && grep -q "cannot open" "$T/err"'

# --- dump ---
"$OPSCOPE" dump "$T/s.opscope" >"$T/dump"
check "dump exits 0" '[ $? -eq 0 ]'
check "dump: nested range with args" 'grep -qx "         200 0 range Operator conv2d dur=100 depth=2 {shape=\"\[1,3,224,224\]\" count=-3 idx=7}" "$T/dump"'
check "dump: control chars escaped" 'grep -qF "instant UserDefined q \"d\"\n\x01bad\xff" "$T/dump"'
check "dump: no raw control bytes" '! LC_ALL=C grep -q "[[:cntrl:]]" <(tr -d "\n" <"$T/dump")'
check "dump: unclosed and async" 'grep -q "range Dataloader load dur=700 depth=0 unclosed" "$T/dump" && grep -q "a100 async Nvtx nvtx range dur=150" "$T/dump"'
"$OPSCOPE" dump --sort time "$T/s.opscope" >"$T/dump2"
check "dump --sort time is time-sorted" '[ $? -eq 0 ] && grep -v "^#" "$T/dump2" | awk "{print \$1}" | sort -n -c'
"$OPSCOPE" dump --track 1 "$T/s.opscope" >"$T/dump3"
check "dump --track 1" '[ $(grep -c " 1 " "$T/dump3") -eq 4 ] && ! grep -q " 0 range" "$T/dump3"'
"$OPSCOPE" dump --sort bogus "$T/s.opscope" 2>/dev/null
check "dump --sort bogus is exit 2" '[ $? -eq 2 ]'

# --- export ---
"$OPSCOPE" export "$T/s.opscope" 2>"$T/err"
check "export: default output FILE.json" '[ $? -eq 0 ] && [ -s "$T/s.json" ] && grep -q "wrote $T/s.json" "$T/err"'
"$OPSCOPE" export "$T/s.opscope" -o - >"$T/stdout.json"
check "export -o - writes stdout, same bytes" '[ $? -eq 0 ] && cmp -s "$T/s.json" "$T/stdout.json"'
"$OPSCOPE" export --format nope "$T/s.opscope" 2>"$T/err"
check "export: unknown format is exit 2" '[ $? -eq 2 ] && grep -q "unknown format" "$T/err"'
"$OPSCOPE" export -q "$T/cut.opscope" -o "$T/cut.json" 2>"$T/err"
check "export of a torn file works quietly" '[ $? -eq 0 ] && [ -s "$T/cut.json" ] && [ ! -s "$T/err" ]'
"$OPSCOPE" export -q "$T/z.opscope" -o "$T/z.json"
check "export of the zstd trace equals the plain one" 'cmp -s "$T/z.json" "$T/s.json"'
"$OPSCOPE" export -q "$T/bad.opscope" -o "$T/bad.json" 2>/dev/null
check "export of garbage: exit 1, no output left" '[ $? -eq 1 ] && [ ! -e "$T/bad.json" ] && [ -z "$(ls "$T" | grep tmp)" ]'

cat >"$T/check.py" <<'PYEOF'
import json, sys
from collections import defaultdict
doc = json.load(open(sys.argv[1], encoding="utf-8"))
ev = doc["traceEvents"]
assert doc["displayTimeUnit"] == "ns"
assert "otherData" in doc
names = {}
spans = defaultdict(list)
flows = defaultdict(dict)
asyncs = defaultdict(dict)
for e in ev:
    ph = e["ph"]
    assert isinstance(e["pid"], int) and isinstance(e["tid"], int), e
    if ph == "M":
        assert e["name"] in ("process_name", "thread_name", "process_labels"), e
        names[(e["name"], e["pid"], e["tid"])] = e["args"]
    elif ph == "X":
        for k in ("name", "ph", "ts", "dur", "pid", "tid", "cat"):
            assert k in e, (k, e)
        assert e["dur"] >= 0
        spans[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"], e["name"]))
    elif ph in ("s", "f"):
        assert e["cat"] == "flow" and e["name"] == "flow"
        if ph == "f":
            assert e["bp"] == "e"
        flows[e["id"]][ph] = e
    elif ph in ("b", "e"):
        asyncs[e["id"]][ph] = e
    elif ph == "i":
        assert e["s"] == "t"
    elif ph == "C":
        assert all(isinstance(v, (int, float)) for v in e["args"].values())
    else:
        raise AssertionError("unexpected phase " + ph)
# proper nesting per thread: no partial overlap
for key, ss in spans.items():
    ss.sort(key=lambda s: (s[0], -s[1]))
    stack = []
    for s, t, n in ss:
        while stack and stack[-1] <= s:
            stack.pop()
        assert not stack or t <= stack[-1] + 1e-9, ("partial overlap", key, n)
        stack.append(t)
for i, f in flows.items():
    assert set(f) == {"s", "f"}, ("unpaired flow", i)
for i, a in asyncs.items():
    assert set(a) == {"b", "e"} and a["b"]["name"] == a["e"]["name"], ("unpaired async", i)
    assert a["e"]["ts"] >= a["b"]["ts"]
# every thread with events has a name
for (pid, tid) in spans:
    assert ("thread_name", pid, tid) in names, (pid, tid)
    assert ("process_name", pid, 0) in names, pid
mode = sys.argv[2] if len(sys.argv) > 2 else ""
if mode == "sample":
    assert names[("process_name", 100, 0)]["name"] == "train"
    assert names[("thread_name", 100, 100)]["name"] == "main"
    xs = {e["name"]: e for e in ev if e["ph"] == "X" and e["tid"] == 100}
    assert xs["conv2d"]["args"] == {"shape": "[1,3,224,224]", "count": -3, "idx": 7}
    step = xs["step"]
    assert step["ts"] == 1.0 and step["dur"] == 1.0, step
    odd = [e for e in ev if e["ph"] == "i" and e["cat"] == "UserDefined"][0]
    assert odd["name"] == 'q "d"\n\x01bad\ufffd', repr(odd["name"])
    assert len(flows) == 1 and len(asyncs) == 1
    assert doc["otherData"]["dropped_events"] == 5
print("json ok:", len(ev), "events")
PYEOF
$PY "$T/check.py" "$T/s.json" sample >"$T/py" 2>&1
check "chrome JSON parses, nests, pairs flows, escapes names" '[ $? -eq 0 ]' || true
cat "$T/py"
$PY "$T/check.py" "$T/cut.json" >"$T/py" 2>&1
check "chrome JSON of a torn trace is valid too" '[ $? -eq 0 ]'
cat "$T/py"

# format 1 and format 2 of the same events read the same: every event, range, argument and
# anomaly count (long records: the loader's fast loops run on them)
"$PROGRAMS/make_trace" "$T/l1.opscope" --long
"$PROGRAMS/make_trace" "$T/l2.opscope" --long --v2
"$OPSCOPE" dump "$T/l1.opscope" | grep -v "^# incomplete" >"$T/d1"
"$OPSCOPE" dump "$T/l2.opscope" | grep -v "^# incomplete" >"$T/d2"
check "format 1 and 2 dump the same events" '[ -s "$T/d1" ] && cmp -s "$T/d1" "$T/d2"'
"$OPSCOPE" info "$T/l1.opscope" | tail -n +3 >"$T/i1"
"$OPSCOPE" info "$T/l2.opscope" | tail -n +3 >"$T/i2"
check "format 1 and 2 give the same info" 'grep -q "ARG 464" "$T/i1" && cmp -s "$T/i1" "$T/i2"'
"$OPSCOPE" info "$T/l2.opscope" | sed -n 2p >"$T/out"
check "format 2 file says so" 'grep -q "version 2 (readable by version 2 and newer)" "$T/out"'

# every fuzz seed exports to valid JSON or fails cleanly with exit 1
if [ -n "${SRC:-}" ] && [ -d "$SRC/tests/fuzz-corpus/trace" ]; then
	bad=0
	for f in "$SRC"/tests/fuzz-corpus/trace/*; do
		"$OPSCOPE" export -q "$f" -o "$T/c.json" 2>/dev/null
		rc=$?
		if [ $rc -eq 0 ]; then
			$PY "$T/check.py" "$T/c.json" >/dev/null 2>&1 || { bad=1; echo "# invalid JSON from $f"; }
		elif [ $rc -ne 1 ]; then
			bad=1
			echo "# exit $rc on $f"
		fi
		rm -f "$T/c.json"
	done
	check "corpus files export to valid JSON or exit 1" '[ $bad -eq 0 ]'
fi

# the options that shape a table, shared by report, merge and diff (cli_table_option):
# each bad value is a usage error (2) naming its command and the option
for cmd in report merge diff; do
	for bad in "-n 0|--top wants a positive number" "--width 2|--width wants a number >= 4" \
		"-u parsec|--time-unit wants s, ms, us or ns"; do
		"$OPSCOPE" $cmd ${bad%%|*} x y >/dev/null 2>"$T/err"
		check "$cmd ${bad%%|*}: usage error" \
			'[ $? -eq 2 ] && grep -qx "opscope $cmd: ${bad#*|}" "$T/err"'
	done
done

echo "1..$n"
echo "$((n - fails)) passed, $fails failed"
[ $fails -eq 0 ]
