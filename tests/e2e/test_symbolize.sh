#!/bin/bash
# test_symbolize.sh: native frames symbolized at load time (src/formats/symbolize, issue 17
# point 3). tests/programs/rec_symbolize.c records samples whose frames are addresses in
# itself (its real mapping and build-id); what `opscope dump` and `report --views samples`
# show is compared with binutils' addr2line -f -i on the same addresses (the oracle): the
# function, file:line, and the inlined chain sym_outer -> sym_inner -> sym_probe. Then the
# binary is replaced by another build (build-id mismatch) and deleted (missing binary): the
# frames keep their module+0xOFFSET names and `info` says why. Env (from CTest): OPSCOPE,
# PROGRAMS.
set -u
: "${OPSCOPE:?}" "${PROGRAMS:?}"
command -v addr2line >/dev/null || { echo "skip: no addr2line (binutils)"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
fail() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
check() { if eval "$2"; then ok "$1"; else fail "$1"; fi; }

# a copy of the program, so that it can be replaced and deleted
cp "$PROGRAMS/prog_rec_symbolize" "$T/prog"
"$T/prog" "$T/s.opscope" >"$T/out" 2>&1
check "rec_symbolize records" '[ $? -eq 0 ] && [ -s "$T/s.opscope" ]'
cat "$T/out"
probe=$(awk '$1 == "probe" {print $2}' "$T/out")
call=$(awk '$1 == "call" {print $2}' "$T/out")

if "$OPSCOPE" info "$T/s.opscope" | grep -q "built without libdw"; then
	echo "skip: opscope built without libdw"
	exit 77
fi

# The oracle: addr2line's function and file:line per location, innermost first, as
# FUNCTION@FILE:LINE joined by ';' outermost first (dump's stack= form).
oracle() {
	addr2line -f -i -e "$T/prog" "$1" | paste - - | awk -F'\t' '{print $1 "@" $2}' |
		sed 's/ (discriminator [0-9]*)//' | tac | paste -sd';'
}
want="$(oracle "$call");$(oracle "$probe")"
echo "# addr2line: $want"
check "addr2line sees the inlined chain" '[ "$(oracle "$call" | tr ";" "\n" | wc -l)" -eq 2 ]'

"$OPSCOPE" dump "$T/s.opscope" >"$T/dump"
got=$(awk '$3 == "sample" {sub(/^stack=/, "", $NF); print $NF; exit}' "$T/dump")
echo "# opscope:   $got"
check "dump: the stack equals addr2line's (function@file:line, inlines expanded)" '[ "$got" = "$want" ]'
check "dump: sym_outer -> sym_inner -> sym_probe" '[[ "$got" == sym_outer@*\;sym_inner@*\;sym_probe@* ]]'
check "dump: 5 samples, innermost sym_probe" '[ "$(grep -c " sample - sym_probe weight=1 " "$T/dump")" -eq 5 ]'

"$OPSCOPE" info "$T/s.opscope" >"$T/info"
check "info: 2 of 2 native frames symbolized, 1 inlined frame added" \
	'grep -qx "symbols:    2 of 2 native frames symbolized (2 with file:line, 1 inlined frames added)" "$T/info"'
check "info: 3 model frames" 'grep -q "5 stack samples (0 truncated), 3 stacks, 3 frames" "$T/info"'

"$OPSCOPE" report --views samples -f json "$T/s.opscope" >"$T/r.json"
check "report json: the functions by name, with their source file" "/usr/bin/python3 - \"\$T/r.json\" \"$PROGRAMS\" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
top = [t for t in d['tables'] if t['title'] == 'Samples: Top Functions'][0]
rows = {r['name']: r for r in top['rows']}
assert set(rows) == {'sym_probe', 'sym_inner', 'sym_outer'}, rows
assert rows['sym_probe']['flat'] == 5 and rows['sym_outer']['cum'] == 5
assert all(r['file'].endswith('tests/programs/rec_symbolize.c') for r in rows.values())
EOF"

# --no-symbolize and OPSCOPE_NO_SYMBOLIZE: addresses only, and info says so
"$OPSCOPE" dump --no-symbolize "$T/s.opscope" >"$T/dump0"
check "--no-symbolize: frames stay prog+0xOFFSET" 'grep -q " sample - prog+0x[0-9a-f]* weight=1 stack=prog+0x[0-9a-f]*;prog+0x[0-9a-f]*$" "$T/dump0"'
OPSCOPE_NO_SYMBOLIZE=1 "$OPSCOPE" info "$T/s.opscope" >"$T/info0"
check "OPSCOPE_NO_SYMBOLIZE: info says skipped" 'grep -q "^symbols:    2 native frames not symbolized: skipped" "$T/info0"'

# another build at the recorded path: the build-id differs, no wrong names
cp "$PROGRAMS/prog_rec_samples" "$T/prog"
"$OPSCOPE" info "$T/s.opscope" >"$T/info1"
check "build-id mismatch: detected and said" 'grep -qx "symbols:    0 of 2 native frames symbolized (0 with file:line, 0 inlined frames added); not: 2 build-id mismatch" "$T/info1"'
"$OPSCOPE" dump "$T/s.opscope" >"$T/dump1"
check "build-id mismatch: addresses kept" 'grep -q " sample - prog+0x[0-9a-f]* weight=1 stack=prog+0x[0-9a-f]*;prog+0x[0-9a-f]*$" "$T/dump1"'

# the binary deleted
rm -f "$T/prog"
"$OPSCOPE" info "$T/s.opscope" >"$T/info2"
check "missing binary: said" 'grep -qx "symbols:    0 of 2 native frames symbolized (0 with file:line, 0 inlined frames added); not: 2 binary missing" "$T/info2"'
"$OPSCOPE" report --views samples -f json "$T/s.opscope" >"$T/r2.json"
check "missing binary: report keeps module+0xOFFSET" 'grep -q "\"name\":\"prog+0x" "$T/r2.json"'

echo "1..$n"
[ "$fails" -eq 0 ]
