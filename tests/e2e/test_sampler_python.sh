#!/bin/bash
# test_sampler_python.sh: Python frames in the sampler's stacks (issue 17 point 2; pystack.c,
# merged into the native stacks in sampler.c). tests/programs/sample_py.py (main -> a -> b ->
# c spinning on one line, then numpy matrix products on one line, while a thread "pyworker"
# runs worker -> d) is recorded with `opscope record --sample` by Debian's python3 (CPython
# 3.11) through perf_event's signals (the default) and the SIGPROF timers. Checked in `opscope
# dump`'s stacks: the Python frames a, b, c in call order with c's hot line, under <module>
# and main, with the interpreter's native frames outside them and the stack complete down to
# _start; d on the worker thread down to clone3; numpy's native frames beneath np_part's hot
# line; each sample's Python frames agree with the file's lines (taken from the file, not
# hard-coded). OPSCOPE_SAMPLE_MECH=perf (native only) gives no Python frame and says so in
# the metadata. Env (from CTest): OPSCOPE, SRC.
set -u
: "${OPSCOPE:?}" "${SRC:?}"
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "skip: no $PY"; exit 77; }
"$PY" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' || { echo "skip: $PY is not CPython 3.11"; exit 77; }
PROG=$SRC/tests/programs/sample_py.py
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
fail() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
check() { if eval "$2"; then ok "$1"; else fail "$1"; fi; }

# shape DUMP: checks the stacks; prints "name value" lines the shell checks read
shape() {
	"$PY" - "$1" "$PROG" <<'PYEOF'
import re, sys
dump, prog = sys.argv[1], sys.argv[2]
lines = open(prog).read().split('\n')
hot = {tag: i + 1 for i, l in enumerate(lines) for tag in ('HOT_C', 'HOT_NP', 'HOT_D') if '# ' + tag in l}
defs = {m.group(1): i + 1 for i, l in enumerate(lines) for m in [re.match(r'def (\w+)\(', l)] if m}
total = main_c = ordered = complete_c = worker_d = complete_d = np_s = np_native = 0
bad_line = 0
for l in open(dump):
    if ' sample ' not in l or 'stack=' not in l:
        continue
    total += 1
    frames = l.rsplit('stack=', 1)[1].strip().split(';')
    py = [(f.split('@')[0], int(f.rsplit(':', 1)[1])) for f in frames if '@' + prog + ':' in f]
    # every Python frame of the program sits on a line of its function (after its def)
    for name, line in py:
        if name in defs and line < defs[name]:
            bad_line += 1
    names = [p[0] for p in py]
    if 'c' in names:
        main_c += 1
        if names[:5] == ['<module>', 'main', 'a', 'b', 'c'] and py[4][1] == hot['HOT_C']:
            ordered += 1
        # the interpreter's native frames outside the Python ones, down to _start
        first_py = next(i for i, f in enumerate(frames) if '@' + prog + ':' in f)
        if frames[0].split('@')[0] == '_start' and first_py > 1:
            complete_c += 1
    if 'd' in names:
        worker_d += 1
        if frames[0].split('@')[0] in ('clone3', '__clone3', 'clone', '__clone') and \
                names[:2] == ['worker', 'd']:
            complete_d += 1
    if 'np_part' in names and py[-1] == ('np_part', hot['HOT_NP']):
        np_s += 1
        # beneath the hot line: native frames (numpy, BLAS), no more Python
        at = max(i for i, f in enumerate(frames) if f.startswith('np_part@'))
        if at + 1 < len(frames):
            np_native += 1
print('total', total)
print('c', main_c, ordered, complete_c)
print('d', worker_d, complete_d)
print('np', np_s, np_native)
print('badline', bad_line)
PYEOF
}

has_numpy=0
"$PY" -c 'import numpy' 2>/dev/null && has_numpy=1
for mech in default timer; do
	env=()
	[ $mech = timer ] && env=(OPSCOPE_SAMPLE_MECH=timer)
	env "${env[@]}" OPSCOPE_QUIET=1 "$OPSCOPE" record -q -f -o "$T/$mech.opscope" --sample=499 -- "$PY" "$PROG" 2 >/dev/null 2>&1
	check "$mech: recorded" '[ -s "$T/$mech.opscope" ]'
	check "$mech: the metadata says Python frames are read" \
		"'$OPSCOPE' info '$T/$mech.opscope' | grep -q 'sampler .*with Python frames (CPython 3.11)'"
	"$OPSCOPE" dump "$T/$mech.opscope" >"$T/$mech.dump"
	shape "$T/$mech.dump" >"$T/$mech.shape"
	cat "$T/$mech.shape" | sed 's/^/# /'
	read -r _ total < <(grep '^total' "$T/$mech.shape")
	read -r _ cs ordered complete < <(grep '^c ' "$T/$mech.shape")
	read -r _ ds dcomplete < <(grep '^d ' "$T/$mech.shape")
	read -r _ nps npnative < <(grep '^np ' "$T/$mech.shape")
	read -r _ badline < <(grep '^badline' "$T/$mech.shape")
	check "$mech: samples in c ($cs of $total)" '[ "$cs" -ge 20 ]'
	# 99%: the issue's share of complete stacks
	check "$mech: c's samples read <module>;main;a;b;c at the hot line ($ordered of $cs)" \
		'[ $((ordered * 100)) -ge $((cs * 99)) ]'
	check "$mech: and reach _start through the interpreter's frames ($complete of $cs)" \
		'[ $((complete * 100)) -ge $((cs * 99)) ]'
	check "$mech: the worker thread's d, down to clone3 ($dcomplete of $ds)" \
		'[ "$ds" -ge 5 ] && [ $((dcomplete * 100)) -ge $((ds * 99)) ]'
	check "$mech: no Python frame on a line before its function" '[ "$badline" -eq 0 ]'
	if [ $has_numpy -eq 1 ]; then
		check "$mech: numpy's native frames under np_part's hot line ($npnative of $nps)" \
			'[ "$nps" -ge 10 ] && [ $((npnative * 100)) -ge $((nps * 90)) ]'
	fi
done

# native only: no Python frame, and the metadata does not claim them
OPSCOPE_SAMPLE_MECH=perf OPSCOPE_QUIET=1 "$OPSCOPE" record -q -f -o "$T/perf.opscope" --sample=499 -- "$PY" "$PROG" >/dev/null 2>&1
"$OPSCOPE" info "$T/perf.opscope" >"$T/perf.info"
if grep -q 'sampler .*perf_event' "$T/perf.info"; then
	check "OPSCOPE_SAMPLE_MECH=perf: native frames only, as the metadata says" \
		'! grep -q "with Python frames" "$T/perf.info" && ! "$OPSCOPE" dump "$T/perf.opscope" | grep -q "@$PROG:"'
fi

echo "1..$n"
[ $fails -eq 0 ]
