#!/bin/bash
# test_sample_api.sh: CPU stack sampling asked for through the C API (issue 17, point 1), not
# `opscope record`: tests/programs/api_profiler_samples.c runs a profiler whose session options
# set sample_hz (two windows of two CPU-burning steps each) and then a wall-clock session that
# only sleeps. Checked with `opscope report --views samples --format json`: each window file
# holds samples, and about as many as its CPU time at that rate allows (a wide floor, no
# times asserted); the sleeping session holds samples too (wall-clock mode sees waits); the
# metadata names the sampler. Env (from CTest): OPSCOPE, PROGRAMS.
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

# samples FILE: the number of samples `opscope report` counts in it (0 when none)
samples() {
	"$OPSCOPE" report --views samples --format json "$1" | "$PY" -c '
import json, sys
for t in json.load(sys.stdin)["tables"]:
    if t["view"] == "samples" and "totals" in t:
        print(t["totals"]["samples"]); break
else:
    print(0)'
}

check "the program ran" "OPSCOPE_QUIET=1 '$PROGRAMS/prog_api_profiler_samples' '$T' 499 >'$T/out' 2>&1"
mapfile -t windows < <(ls "$T"/*_w*.opscope 2>/dev/null)
check "two windows written (${#windows[@]})" "[ ${#windows[@]} -eq 2 ]"
for w in "${windows[@]}"; do
	s=$(samples "$w")
	# two steps of 0.15 s of CPU at 499 Hz: about 150 samples; 40 leaves room for a busy machine
	check "$(basename "$w") holds samples ($s)" "[ '$s' -ge 40 ]"
	check "$(basename "$w") names its sampler" \
		"'$OPSCOPE' info '$w' | grep -q 'sampler.*499 Hz on-CPU'"
done
s=$(samples "$T/wall.opscope")
check "the sleeping wall-clock session holds samples ($s)" "[ '$s' -ge 10 ]"
check "its sampler is the wall-clock one" "'$OPSCOPE' info '$T/wall.opscope' | grep -q 'sampler.*wall-clock'"

echo "1..$n"
[ $fails -eq 0 ]
