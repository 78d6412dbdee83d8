#!/usr/bin/env bash
# test_exec.sh: exec() under `opscope record`. A process that records and then replaces itself
# with exec keeps its pid: every image's events must reach a file of its own, finished before
# the exec, and no image may overwrite another's file (issue 16, point 6).
# Environment (set by CTest): OPSCOPE (the CLI), PROGRAMS (directory of prog_* binaries).
set -euo pipefail
: "${OPSCOPE:?}" "${PROGRAMS:?}"
tmp=$(mktemp -d /tmp/opscope-e2e-exec.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*"
	exit 1
}
count_ranges() { # FILE NAME
	"$OPSCOPE" dump "$1" | awk -v n="$2" '$3 == "range" && $5 == n' | wc -l
}
# The ranges named NAME over every file of DIR.
total_ranges() { # DIR NAME
	local n=0 f
	for f in "$1"/*.opscope; do
		n=$((n + $(count_ranges "$f" "$2")))
	done
	echo "$n"
}
# Every range prog_api_exec records is in exactly one file of DIR, and every file is complete.
check_images() { # DIR
	local name want got f
	for name in image0:100 after_failed_exec:50 image1:200 thread:70 image2:300 after_vfork:10; do
		want=${name#*:}
		got=$(total_ranges "$1" "${name%:*}")
		[ "$got" -eq "$want" ] || fail "$1: ${name%:*}: $got ranges over the files, want $want ($(ls "$1"))"
	done
	for f in "$1"/*.opscope; do
		"$OPSCOPE" info "$f" | grep -q "^status: *complete" || fail "$f is not complete"
	done
}

echo "# one pid, three images and a failed exec: four files, nothing lost or overwritten"
mkdir "$tmp/run"
"$OPSCOPE" record -o "$tmp/run/run.opscope" -- "$PROGRAMS/prog_api_exec" 2>"$tmp/run.err" ||
	fail "prog_api_exec: $(cat "$tmp/run.err")"
check_images "$tmp/run"
# the first image keeps the name the user chose; the others get the pid, then a sequence
[ "$(count_ranges "$tmp/run/run.opscope" image0)" -eq 100 ] || fail "run.opscope lacks image0"
[ "$(count_ranges "$tmp/run/run.opscope" image1)" -eq 0 ] || fail "run.opscope holds image1"
pid=$("$OPSCOPE" info "$tmp/run/run.opscope" | awk '$1 == "pid:" { print $2 }')
[ -n "$pid" ] || fail "no pid in info"
want="run.$pid.1.opscope run.$pid.2.opscope run.$pid.opscope run.opscope"
[ "$(ls "$tmp/run" | sort | tr '\n' ' ')" = "$want " ] || fail "files: $(ls "$tmp/run"), want $want"
[ "$(count_ranges "$tmp/run/run.$pid.opscope" after_failed_exec)" -eq 50 ] ||
	fail "the failed exec's recording did not go on into run.$pid.opscope"
[ "$(count_ranges "$tmp/run/run.$pid.1.opscope" thread)" -eq 70 ] ||
	fail "the other thread's ranges are not in image 1's file"
# metadata "exec": what the image exec'd when its file was finished
"$OPSCOPE" info "$tmp/run/run.opscope" | grep -q "^  exec  */nonexistent/opscope-no-such-program$" ||
	fail "run.opscope does not say it ended in the failed exec"
"$OPSCOPE" info "$tmp/run/run.$pid.opscope" | grep -q "^  exec  *$PROGRAMS/prog_api_exec$" ||
	fail "run.$pid.opscope does not say it ended in exec"
# record's summary names every file; a report of the directory reads every file
[ "$(grep -c "^opscope: $tmp/run/run[.0-9]*opscope: " "$tmp/run.err")" -eq 4 ] ||
	fail "record's summary: $(cat "$tmp/run.err")"
report=$("$OPSCOPE" report --views files --format csv -c file,events "$tmp/run")
for f in run.opscope "run.$pid.opscope" "run.$pid.1.opscope" "run.$pid.2.opscope"; do
	echo "$report" | grep -q "/$f,[1-9]" || fail "report DIR leaves out $f: $report"
done

echo "# a directory output: every image gets <program>.<pid>[.N].opscope"
mkdir "$tmp/dir"
"$OPSCOPE" record -q -o "$tmp/dir/" -- "$PROGRAMS/prog_api_exec"
check_images "$tmp/dir"
[ "$(ls "$tmp/dir" | grep -cE '^prog_api_exec\.[0-9]+(\.[1-3])?\.opscope$')" -eq 4 ] ||
	fail "dir output: $(ls "$tmp/dir")"

echo "# a wrapper that records nothing and execs the program leaves the name to it"
mkdir "$tmp/wrap"
"$OPSCOPE" record -q -o "$tmp/wrap/run.opscope" -- env OPSCOPE_TEST=1 \
	"$PROGRAMS/prog_api_threads" 2 100
[ "$(ls "$tmp/wrap")" = "run.opscope" ] || fail "wrapper: $(ls "$tmp/wrap")"
[ "$(count_ranges "$tmp/wrap/run.opscope" work)" -eq 200 ] || fail "wrapper: work ranges"
mkdir "$tmp/wrapdir"
"$OPSCOPE" record -q -o "$tmp/wrapdir/" -- env "$PROGRAMS/prog_api_threads" 2 100
[ "$(ls "$tmp/wrapdir" | grep -c .)" -eq 1 ] || fail "wrapper, directory: $(ls "$tmp/wrapdir")"
ls "$tmp/wrapdir" | grep -q '^prog_api_threads\.[0-9]*\.opscope$' ||
	fail "wrapper, directory: $(ls "$tmp/wrapdir")"

echo "# ... and when what it execs never loads the runtime, record says there is no file"
mkdir "$tmp/none"
"$OPSCOPE" record -o "$tmp/none/run.opscope" -- env -u LD_PRELOAD true 2>"$tmp/none.err"
[ -z "$(ls "$tmp/none")" ] || fail "no runtime: $(ls "$tmp/none")"
grep -q "^opscope: no trace file was written" "$tmp/none.err" || fail "no runtime: $(cat "$tmp/none.err")"
echo "ok"
