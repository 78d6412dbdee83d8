#!/bin/bash
# test_gperftools_export.sh: `opscope export --format gperftools` (src/formats/pprof/
# legacy_export.c), the legacy CPU profile Debian's google-pprof reads, checked by the real
# readers: gperftools' own legacy profiles from ../shared/data/pprof imported and exported
# again read the same in `go tool pprof -top` (every node, flat and cum); a recording of
# tests/programs/sample_abc exported reads in google-pprof (which symbolizes it from the
# binary) with the same flat sample counts for a, b and c as `opscope report` gives for the
# recording; the synthetic samples of rec_samples (a Python frame over native ones) keep
# every sample and lose only the Python frame. Env (from CTest): OPSCOPE, PROGRAMS, SRC.
set -u
: "${OPSCOPE:?}" "${PROGRAMS:?}" "${SRC:?}"
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "skip: no $PY"; exit 77; }
D=$SRC/../shared/data/pprof
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export HOME=$T # go tool pprof keeps nothing of ours
fails=0
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
fail() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
check() { if eval "$2"; then ok "$1"; else fail "$1"; fi; }
have_go=1
command -v go >/dev/null && go tool pprof -h >/dev/null 2>&1 || have_go=0
[ $have_go -eq 1 ] || echo "# go tool pprof not found: its checks are skipped"

# samples_json FILE: "total SAMPLES WEIGHT" of the samples view, then "name flat" per row
samples_json() {
	"$OPSCOPE" report --views samples --format json "$1" | "$PY" -c '
import json, sys
for t in json.load(sys.stdin)["tables"]:
    if t["view"] == "samples" and "totals" in t:
        print("total", t["totals"]["samples"], t["totals"]["weight"])
        for r in t["rows"]:
            print(r["name"], r["flat"])
        break'
}

# 1. gperftools' legacy profiles: imported, exported again, read the same by go tool pprof
if [ -d "$D" ] && [ $have_go -eq 1 ]; then
	for f in cppbench.cpu gobench.cpu go.crc32.cpu; do
		src=$D/profile/testdata/$f
		"$OPSCOPE" export -q -f gperftools -o "$T/$f.prof" "$src"
		check "$f: exported (exit 0)" '[ $? -eq 0 ] && [ -s "$T/$f.prof" ]'
		go tool pprof -symbolize=none -top -nodecount=1000000 "$src" 2>/dev/null | grep -v '^File:' >"$T/$f.orig"
		go tool pprof -symbolize=none -top -nodecount=1000000 "$T/$f.prof" 2>/dev/null | grep -v '^File:' >"$T/$f.ours"
		check "$f: go tool pprof -top of our export equals its -top of the original" \
			'[ -s "$T/$f.ours" ] && cmp -s "$T/$f.orig" "$T/$f.ours"'
	done
fi

# 2. a recording, read by google-pprof with the binary
P=$PROGRAMS/prog_sample_abc
OPSCOPE_QUIET=1 "$OPSCOPE" record -q -f -o "$T/abc.opscope" --sample=499 -- "$P" abc 1500 >/dev/null 2>&1
check "sample_abc recorded" '[ -s "$T/abc.opscope" ]'
"$OPSCOPE" export -q -f gperftools -o "$T/abc.prof" "$T/abc.opscope"
check "the recording exported" '[ $? -eq 0 ] && [ -s "$T/abc.prof" ]'
samples_json "$T/abc.opscope" >"$T/abc.ours"
# the count of samples survives the round trip through our own importer, which reads each
# distinct stack as one sample weighing count x period (499 Hz: 2004 us, in whole us)
samples_json "$T/abc.prof" >"$T/abc.back"
abc_n=$(awk 'NR == 1 {print $2}' "$T/abc.ours")
check "imported back: $abc_n samples x 2004 us" \
	'[ -n "$abc_n" ] && [ "$(awk "NR == 1 {print \$3}" "$T/abc.back")" = $((abc_n * 2004000)) ]'
if command -v google-pprof >/dev/null && grep -q '^c [0-9]' "$T/abc.ours"; then
	google-pprof --text "$P" "$T/abc.prof" >"$T/abc.gp" 2>/dev/null
	for fn in a b c; do
		ours=$(awk -v f=$fn 'NR > 1 && $1 == f {print $2}' "$T/abc.ours")
		theirs=$(awk -v f=$fn '$6 == f {print $1}' "$T/abc.gp")
		check "google-pprof: $fn flat $theirs samples, opscope report $ours" \
			'[ -n "$ours" ] && [ "$ours" = "$theirs" ]'
	done
else
	echo "# google-pprof or symbolized names missing: google-pprof checks skipped"
fi
if [ $have_go -eq 1 ]; then
	go tool pprof -top "$P" "$T/abc.prof" >"$T/abc.go" 2>/dev/null
	check "go tool pprof -top reads it, c on top" \
		'awk "/flat%/ {getline; print \$6; exit}" "$T/abc.go" | grep -qx c'
fi

# 3. Python frames are left out, every sample kept (rec_samples: 206 samples, "main" the
#    Python frame, a/b/c native)
"$PROGRAMS/prog_rec_samples" "$T/rec.opscope" >/dev/null 2>&1
"$OPSCOPE" export -q -f gperftools -o "$T/rec.prof" "$T/rec.opscope"
samples_json "$T/rec.prof" >"$T/rec.back"
# no sampler rate in that trace: gperftools' default period, 10 ms
check "rec_samples: 206 samples exported and read back" \
	'[ "$(awk "NR == 1 {print \$3}" "$T/rec.back")" = 2060000000 ]'
"$OPSCOPE" export -q -f folded -o "$T/rec.folded" "$T/rec.prof"
check "rec_samples: no Python frame in the export, native frames kept" \
	'! grep -q "main" "$T/rec.folded" && [ "$(awk "{s += \$NF} END {print s}" "$T/rec.folded")" -gt 0 ]'

echo "1..$n"
[ $fails -eq 0 ]
