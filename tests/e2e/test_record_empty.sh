#!/usr/bin/env bash
# test_record_empty.sh: `opscope record` of a program that recorded nothing (no opscope or NVTX
# instrumentation, or a Python program without opscope's package) says why it may be so and
# what to do, in two lines after the summary; the exit status stays the program's; a
# recording with events, or -q, prints no such hint.
# Env (from CTest): OPSCOPE (the CLI), PROGRAMS (tests build dir).
set -u
: "${OPSCOPE:?}" "${PROGRAMS:?}"
. "$(dirname "$0")/lib.sh"
dir=$(cd "$(dirname "$OPSCOPE")" && pwd -P)

"$OPSCOPE" record -o "$T/true.opscope" -- /bin/true 2>"$T/err"
check "record -- /bin/true: exit 0" '[ $? -eq 0 ]'
check "summary, then a hint in two lines" '[ $(wc -l <"$T/err") -eq 3 ] &&
	grep -q "true.opscope: 0 events" "$T/err" &&
	grep -q "^opscope: nothing recorded: /bin/true ran no opscope instrumentation" "$T/err"'
check "the hint says what to do and where the options are" 'grep -q -- "-lopscope" "$T/err" &&
	grep -q NVTX "$T/err" && grep -q "opscope record --help" "$T/err"'
if [ -r "$dir/python/opscope_boot/sitecustomize.py" ]; then
	check "Python package found: how Python programs are recorded" \
		'grep -q "^opscope: Python programs are recorded once they import torch" "$T/err" &&
		grep -q -- "--python-functions" "$T/err"'
else
	check "Python package not found: where it was looked for" \
		'grep -q "^opscope: Python programs: .*package is not next to this tool" "$T/err" &&
		grep -qE "\\($dir/python[,)]" "$T/err"'
fi

"$OPSCOPE" record -o "$T/exit3.opscope" -- sh -c 'exit 3' 2>"$T/err"
check "the program's exit status stays (3), hint given" '[ $? -eq 3 ] && grep -q "nothing recorded" "$T/err"'

"$OPSCOPE" record -q -o "$T/quiet.opscope" -- /bin/true 2>"$T/err"
check "-q: nothing printed" '[ $? -eq 0 ] && [ ! -s "$T/err" ]'

"$OPSCOPE" record -o "$T/api.opscope" -- "$PROGRAMS/prog_api_threads" 1 10 2>"$T/err"
check "a recording with events: no hint" '[ $? -eq 0 ] && grep -q "api.opscope: [1-9][0-9]* events" "$T/err" &&
	! grep -q "nothing recorded" "$T/err" && [ $(wc -l <"$T/err") -eq 1 ]'

# the first process records nothing, the one it starts does: not a silent recording
"$OPSCOPE" record -o "$T/tree.opscope" -- sh -c "\"$PROGRAMS/prog_api_threads\" 1 10; true" 2>"$T/err"
check "events in a child process only: no hint" '[ $? -eq 0 ] && [ $(wc -l <"$T/err") -eq 2 ] &&
	! grep -q "nothing recorded" "$T/err"'

tap_done
