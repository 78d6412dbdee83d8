#!/usr/bin/env bash
# test_record_output.sh: `opscope record -o PATH` where the trace cannot be written (a missing
# or unwritable directory) fails before the program starts: one line naming the path and the
# reason, exit 1, nothing left behind. What worked stays: a new directory output (made with
# its parents), -f over an existing file, the refusal of an existing one without -f; -f
# refuses to replace anything but a file or a link.
# Env (from CTest): OPSCOPE (the CLI).
set -u
: "${OPSCOPE:?}"
. "$(dirname "$0")/lib.sh"

ran() { [ -e "$T/marker" ]; }

"$OPSCOPE" record -o "$T/nodir/x.opscope" -- touch "$T/marker" 2>"$T/err"
check "missing directory: exit 1" '[ $? -eq 1 ]'
check "missing directory: the program did not run" '! ran'
check "missing directory: one line naming the path and the reason" '[ $(wc -l <"$T/err") -eq 1 ] &&
	grep -qxF "opscope: record: cannot write $T/nodir/x.opscope: No such file or directory" "$T/err"'
check "missing directory: nothing created" '[ ! -e "$T/nodir" ]'

touch "$T/file"
"$OPSCOPE" record -o "$T/file/x.opscope" -- touch "$T/marker" 2>"$T/err"
check "a file as directory: exit 1, not run, one line" '[ $? -eq 1 ] && ! ran &&
	[ $(wc -l <"$T/err") -eq 1 ] && grep -q "cannot write .*file/x.opscope: Not a directory" "$T/err"'
"$OPSCOPE" record -o "$T/file/" -- touch "$T/marker" 2>"$T/err"
check "a file as directory output: exit 1, not run, one line" '[ $? -eq 1 ] && ! ran &&
	[ $(wc -l <"$T/err") -eq 1 ] && grep -q "cannot write .*file/: Not a directory" "$T/err"'

if [ "$(id -u)" -ne 0 ]; then # root writes anywhere
	mkdir "$T/ro" && chmod 555 "$T/ro"
	"$OPSCOPE" record -o "$T/ro/x.opscope" -- touch "$T/marker" 2>"$T/err"
	check "read-only directory: exit 1, not run, one line" '[ $? -eq 1 ] && ! ran &&
		[ $(wc -l <"$T/err") -eq 1 ] && grep -q "Permission denied" "$T/err"'
	"$OPSCOPE" record -o "$T/ro/sub/" -- touch "$T/marker" 2>"$T/err"
	check "directory output in a read-only one: exit 1, not run" '[ $? -eq 1 ] && ! ran'
	chmod 755 "$T/ro"
fi

# what worked before still does
"$OPSCOPE" record -q -o "$T/new/sub/" -- touch "$T/marker"
check "a new directory output is made with its parents" '[ $? -eq 0 ] && ran &&
	ls "$T"/new/sub/touch.*.opscope >/dev/null'
rm -f "$T/marker"
"$OPSCOPE" record -q -o "$T/x.opscope" -- /bin/true
check "a writable path records" '[ $? -eq 0 ] && [ -s "$T/x.opscope" ]'
"$OPSCOPE" record -q -o "$T/x.opscope" -- touch "$T/marker" 2>"$T/err"
check "an existing file without -f: exit 1, not run" '[ $? -eq 1 ] && ! ran && grep -q "exists (use -f" "$T/err"'
"$OPSCOPE" record -q -f -o "$T/x.opscope" -- touch "$T/marker"
check "-f overwrites it" '[ $? -eq 0 ] && ran && [ -s "$T/x.opscope" ]'
# -f replaces a trace, never something else: a FIFO stands in for /dev/null, which -f
# removed when run as root
rm -f "$T/marker"
mkfifo "$T/fifo"
"$OPSCOPE" record -q -f -o "$T/fifo" -- touch "$T/marker" 2>"$T/err"
check "-f over a FIFO: exit 1, not run, the FIFO kept" '[ $? -eq 1 ] && ! ran && [ -p "$T/fifo" ] &&
	[ $(wc -l <"$T/err") -eq 1 ]'
"$OPSCOPE" record -q -o "$T/y.opscope" -- "$T/no-such-program" 2>/dev/null
check "a program that cannot run: 127, no file left behind" '[ $? -eq 127 ] && [ ! -e "$T/y.opscope" ]'

tap_done
