#!/bin/bash
# test_samples.sh: CPU stack samples end to end (issue 17, storage and report): the record
# stage's sample store (tests/programs/rec_samples.c records a->b->c stacks of known counts on
# two threads from a sampler thread), the trace records (info, dump), malformed sample
# records (one line naming the file and offset, exit 1), `report --views samples` in every
# format and with --under, and the Chrome export's stackFrames/samples checked by Python's
# JSON parser. Env (from CTest): OPSCOPE, PROGRAMS.
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

# --- recording through record/samples.h ---
"$PROGRAMS/prog_rec_samples" "$T/r.opscope" >"$T/out" 2>&1
check "rec_samples records" '[ $? -eq 0 ] && [ -s "$T/r.opscope" ]'
cat "$T/out"
"$OPSCOPE" info "$T/r.opscope" >"$T/info"
check "info: version 4, needs a reader of version 3" 'grep -q "version 4 (readable by version 3 and newer)" "$T/info"'
check "info: 206 samples, 2 truncated, 9 stacks, 4 frames" 'grep -qx "samples:    206 stack samples (2 truncated), 9 stacks, 4 frames" "$T/info"'
check "info: the sampled threads are the workers' tracks" '[ "$(grep -c "worker-[01]" "$T/info")" -eq 2 ] && grep -q "threads:    2 tracks" "$T/info"'
"$OPSCOPE" dump "$T/r.opscope" >"$T/dump"
leaf() { grep -c " sample - $1 weight=1 .*stack=$2\$" "$T/dump"; }
check "dump: 120 samples main@main.py:7;a;b;c (a Python frame with its file and line)" '[ "$(leaf libsynth.so+0x1300 "main@main.py:7;libsynth.so+0x1100;libsynth.so+0x1200;libsynth.so+0x1300")" -eq 120 ]'
check "dump: 60 samples main;a;b" '[ "$(leaf libsynth.so+0x1200 "main@main.py:7;libsynth.so+0x1100;libsynth.so+0x1200")" -eq 60 ]'
check "dump: 20 samples main;a" '[ "$(leaf libsynth.so+0x1100 "main@main.py:7;libsynth.so+0x1100")" -eq 20 ]'
check "dump: 4 samples a;a;a" '[ "$(leaf libsynth.so+0x1100 "libsynth.so+0x1100;libsynth.so+0x1100;libsynth.so+0x1100")" -eq 4 ]'
check "dump: 2 truncated samples b;c" '[ "$(grep -c " truncated stack=libsynth.so+0x1200;libsynth.so+0x1300$" "$T/dump")" -eq 2 ]'
check "dump: the 120 deepest samples lie inside aten::conv2d" "$PY - \"\$T/dump\" <<'EOF'
import sys
ranges, inside = {}, 0
rows = [l.split() for l in open(sys.argv[1]) if not l.startswith('#')]
for r in rows:
    if r[2] == 'range':
        ranges[r[1]] = (int(r[0]), int(r[0]) + int(r[5].split('=')[1]))
for r in rows:
    if r[2] == 'sample' and r[-1].endswith('+0x1300') and 'truncated' not in r:
        a, b = ranges[r[1]]
        inside += a <= int(r[0]) <= b
sys.exit(0 if inside == 120 else 1)
EOF"

# --- report --views samples ---
"$OPSCOPE" report --views samples -f json "$T/r.opscope" >"$T/r.json"
check "report json: flat, cum, shares of the recorded shape" "$PY - \"\$T/r.json\" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
tabs = [t for t in d['tables'] if t['view'] == 'samples']
top, tree = tabs
rows = {r['name']: r for r in top['rows']}
a, b, c, m = (rows['libsynth.so+0x1100'], rows['libsynth.so+0x1200'],
              rows['libsynth.so+0x1300'], rows['main'])
assert [r['name'] for r in top['rows']][:3] == ['libsynth.so+0x1300', 'libsynth.so+0x1200',
                                               'libsynth.so+0x1100']
assert (c['flat'], b['flat'], a['flat'], m['flat']) == (122, 60, 24, 0), rows
assert (c['cum'], b['cum'], a['cum'], m['cum']) == (122, 182, 204, 200), rows
assert abs(c['flat_ratio'] - 122 / 206) < 1e-6 and abs(top['rows'][-1]['sum_ratio'] - 1) < 1e-6
assert m['file'] == 'main.py'
assert top['totals']['samples'] == 206 and top['totals']['truncated'] == 2
# the tree: c's only caller is b, with all of c's cum
i = [k for k, r in enumerate(tree['rows']) if r['name'] == 'libsynth.so+0x1300' and r['role'] == 'self'][0]
assert tree['rows'][i + 1]['role'] == 'caller' and tree['rows'][i + 1]['cum'] == 122
EOF"
"$OPSCOPE" report --views samples --under aten::conv2d -f csv "$T/r.opscope" >"$T/u.csv"
check "report --under aten::conv2d: only the 120 samples taken inside it" "$PY - \"\$T/u.csv\" <<'EOF'
import csv, sys
text = open(sys.argv[1]).read()
sec = text.split('# Samples: Top Functions\n')[1].split('\n\n')[0]
rows = list(csv.DictReader(sec.splitlines()))
got = {r['name']: (int(r['flat']), int(r['cum'])) for r in rows}
assert got == {'libsynth.so+0x1300': (120, 120), 'libsynth.so+0x1200': (0, 120),
               'libsynth.so+0x1100': (0, 120), 'main': (0, 120)}, got
EOF"
"$OPSCOPE" report --views samples --top 1 "$T/r.opscope" >"$T/top1"
check "report --top 1: one function per table, callers kept" '[ "$(grep -c "^libsynth.so+0x1300 " "$T/top1")" -eq 2 ] && ! grep -q "^main " "$T/top1" && grep -q "^  libsynth.so+0x1200 *caller" "$T/top1"'
"$OPSCOPE" report --views samples --under no-such-range "$T/r.opscope" >"$T/out"
check "report --under a name no range has: says so" 'grep -q "Samples: no stack samples in the trace (with --under: none inside such a range)" "$T/out"'
"$PROGRAMS/make_trace" "$T/plain.opscope"
"$OPSCOPE" report "$T/plain.opscope" >"$T/out"
check "report of a trace without samples has no samples table" '! grep -q "Samples:" "$T/out"'

# --- Chrome / Perfetto export: stackFrames + samples, read by Python's JSON parser ---
"$OPSCOPE" export -q "$T/r.opscope" -o "$T/r.chrome.json"
check "chrome export: stackFrames and samples of the recorded shape" "$PY - \"\$T/r.chrome.json\" <<'EOF'
import collections, json, sys
d = json.load(open(sys.argv[1]))
frames, samples = d['stackFrames'], d['samples']
assert len(samples) == 206, len(samples)
def stack(sf):
    out = []
    while sf is not None:
        f = frames[str(sf)]
        out.append(f['name'])
        sf = f.get('parent')
    return ';'.join(reversed(out))
got = collections.Counter(stack(s['sf']) for s in samples)
a, b, c = 'libsynth.so+0x1100', 'libsynth.so+0x1200', 'libsynth.so+0x1300'
want = {f'main;{a};{b};{c}': 120, f'main;{a};{b}': 60, f'main;{a}': 20, f'{a};{a};{a}': 4,
        f'{b};{c}': 2}
assert got == want, got
assert frames['0'] == {'name': 'main', 'category': 'main.py'}, frames['0']
assert all(f['category'] == 'libsynth.so' for k, f in frames.items() if k != '0')
tids = {e['tid'] for e in d['traceEvents'] if e.get('ph') == 'X'}
assert {s['tid'] for s in samples} == tids and len(tids) == 2
assert all(s['weight'] == 1 and isinstance(s['ts'], float) for s in samples)
EOF"
"$PROGRAMS/make_trace" "$T/s.opscope" --stacks
"$OPSCOPE" export -q "$T/s.opscope" -o "$T/s.chrome.json"
check "chrome export: a sample without a stack is left out, ts in us, weights kept" "$PY - \"\$T/s.chrome.json\" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
s = d['samples']
assert len(s) == 15, len(s)
assert s[0]['ts'] == 1.1 and s[0]['sf'] == 3, s[0]
assert [x['weight'] for x in s if x['tid'] == 101] == [5, 1]
assert d['stackFrames']['5'] == {'name': '0x999', 'category': ''}
EOF"
"$OPSCOPE" export -q "$T/plain.opscope" -o "$T/plain.json"
check "chrome export of a trace without samples has neither key" "$PY -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(\"samples\" in d or \"stackFrames\" in d)' \"\$T/plain.json\""

# --- the tracebuild stacks trace and its defects ---
"$PROGRAMS/make_trace" "$T/s.opscope" --stacks
"$OPSCOPE" dump "$T/s.opscope" >"$T/dump"
check "dump: a symbolized native frame keeps its name" 'grep -q " sample - gemm weight=5 stack=main@train.py:3;libtorch.so+0x1100;libtorch.so+0x1200;gemm$" "$T/dump"'
check "dump: a frame in no mapping shows its address" 'grep -q " sample - 0x999 weight=1 stack=0x999$" "$T/dump"'
for d in bad-stack:"sample 14: unknown stack 6" bad-mapping:"frame 2: unknown mapping 1" \
	bad-parent:"stack 3: parent 3 is not an earlier stack" bad-frame:"stack 4: unknown frame 5" \
	short-entries:"MAPPINGS entries of 24 bytes, expected at least 32" \
	cut-table:"SAMPLES count 16 of 32 bytes does not fill the payload (511 bytes)" \
	gap-ids:"FRAMES first id 3, expected 2"; do
	name=${d%%:*}
	msg=${d#*:}
	"$PROGRAMS/make_trace" "$T/$name.opscope" --stacks="$name"
	for cmd in info dump "report --views samples" "export -o $T/x.json"; do
		# shellcheck disable=SC2086 # cmd is words on purpose
		"$OPSCOPE" $cmd "$T/$name.opscope" >"$T/out" 2>"$T/err"
		rc=$?
		check "$name: $cmd exits 1 with one line naming file and offset" \
			'[ $rc -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "$T/$name.opscope: offset [0-9]*: $msg" "$T/err"'
	done
done
"$PROGRAMS/make_trace" "$T/v2.opscope" --stacks=v2-header
"$OPSCOPE" info "$T/v2.opscope" >"$T/out"
check "sample records in a file whose header says version 2 are read" 'grep -q "^samples:    16 stack samples (1 truncated), 6 stacks, 5 frames" "$T/out"'

echo "$n tests, $fails failed"
[ $fails -eq 0 ]
