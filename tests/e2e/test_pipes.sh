#!/usr/bin/env bash
# test_pipes.sh: output into a pipe whose reader goes away (`opscope dump t | head`) ends
# quietly with status 0, not with SIGPIPE's 141 that `set -o pipefail` (scripts/demo.sh)
# turns into a failure; a real write error (/dev/full) is one line naming it and status 1; a
# program run by `opscope record` still dies of SIGPIPE as it would unrecorded.
# Env (from CTest): OPSCOPE (the CLI), PROGRAMS (tests build dir).
set -u
set -o pipefail
: "${OPSCOPE:?}" "${PROGRAMS:?}"
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "skip: no $PY"; exit 77; }

"$PROGRAMS/make_trace" "$T/t.opscope" || { echo "make_trace failed"; exit 1; }
"$PROGRAMS/make_trace" "$T/big.opscope" --long
B=$T/big.opscope

# CMD...: run with stdout a pipe already closed at its reading end, so that the first write
# meets a gone reader whatever the timing; exit status, 128+N when killed by signal N.
closed_pipe() {
	"$PY" -c '
import os, subprocess, sys
r, w = os.pipe()
os.close(r)
rc = subprocess.call(sys.argv[1:], stdout=w)
sys.exit(rc if rc >= 0 else 128 - rc)' "$@"
}

# --- `| head -n 1` under pipefail: each output is larger than the pipe's buffer (64 KiB)
# and the 8 KiB head reads at most, so the command is still writing when head exits
"$OPSCOPE" dump "$B" 2>"$T/err" | head -n 1 >/dev/null
check "dump big | head -n 1: exit 0, nothing on stderr" '[ $? -eq 0 ] && [ ! -s "$T/err" ]'
"$OPSCOPE" report "$B" "$B" "$B" "$B" 2>"$T/err" | head -n 1 >/dev/null
check "report | head -n 1: exit 0, nothing on stderr" '[ $? -eq 0 ] && [ ! -s "$T/err" ]'
"$OPSCOPE" export -f chrome -o - "$B" 2>"$T/err" | head -n 1 >/dev/null
check "export -f chrome -o - | head -n 1: exit 0, nothing on stderr" '[ $? -eq 0 ] && [ ! -s "$T/err" ]'
check "those outputs are larger than 72 KiB" '[ $("$OPSCOPE" dump "$B" | wc -c) -gt 73728 ] &&
	[ $("$OPSCOPE" report "$B" "$B" "$B" "$B" | wc -c) -gt 73728 ] &&
	[ $("$OPSCOPE" export -o - "$B" | wc -c) -gt 73728 ]'

# --- every command that writes to stdout, into a pipe closed before it starts
while IFS= read -r args; do
	# shellcheck disable=SC2086 # word splitting of the arguments is wanted
	closed_pipe "$OPSCOPE" $args 2>"$T/err"
	check "closed pipe: opscope $args: exit 0, nothing on stderr" '[ $? -eq 0 ] && [ ! -s "$T/err" ]'
done <<EOF
dump $B
dump $T/t.opscope
report $B
export -f chrome -o - $B
info $B
--help
--version
help dump
help
report --help
record --help
EOF
closed_pipe "$OPSCOPE" info "$B" "$T/missing.opscope" 2>"$T/err"
check "closed pipe and an unreadable file: still exit 1 for the file" '[ $? -eq 1 ] && grep -q missing "$T/err"'

# --- a write error that is not a gone reader: one line naming it, exit 1
while IFS= read -r args; do
	# shellcheck disable=SC2086
	"$OPSCOPE" $args >/dev/full 2>"$T/err"
	check "opscope $args >/dev/full: exit 1, one line naming the error" '[ $? -eq 1 ] &&
		[ $(wc -l <"$T/err") -eq 1 ] && grep -q "No space left on device" "$T/err"'
done <<EOF
dump $T/t.opscope
dump $B
report $B
export -o - $B
info $T/t.opscope
--help
--version
help dump
EOF

# --- a recorded program keeps the SIGPIPE disposition it would have had unrecorded (an
# ignored signal stays ignored across exec: opscope must not pass its own on)
prog='yes | head -n 1 >/dev/null; exit ${PIPESTATUS[0]}'
bash -c "$prog"
plain=$?
"$OPSCOPE" record -q -o "$T/yes.opscope" -- bash -c "$prog"
check "recorded: a writer to a closed pipe ends as unrecorded ($plain)" '[ $? -eq $plain ]'
set +o pipefail
yes | head -n 1 >/dev/null
plain=${PIPESTATUS[0]}
"$OPSCOPE" record -q -o "$T/yes2.opscope" -- yes | head -n 1 >/dev/null
rec=${PIPESTATUS[0]}
check "record -- yes | head: record's status is yes's as unrecorded ($plain)" '[ $rec -eq $plain ]'
set -o pipefail

tap_done
