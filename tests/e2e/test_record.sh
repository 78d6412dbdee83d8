#!/usr/bin/env bash
# test_record.sh: `opscope record` end to end on real programs, read back with info/dump.
# Environment (set by CTest): OPSCOPE (the CLI), PROGRAMS (directory of prog_* binaries).
set -euo pipefail
: "${OPSCOPE:?}" "${PROGRAMS:?}"
tmp=$(mktemp -d /tmp/opscope-e2e-record.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*"
	exit 1
}
count_ranges() { # FILE NAME
	"$OPSCOPE" dump "$1" | awk -v n="$2" '$3 == "range" && $5 == n' | wc -l
}

echo "# C API ranges from 4 threads, recorded with no code change"
"$OPSCOPE" record -q -o "$tmp/threads.opscope" -- "$PROGRAMS/prog_api_threads" 4 10000
[ "$(count_ranges "$tmp/threads.opscope" work)" -eq 40000 ] || fail "work ranges"
[ "$(count_ranges "$tmp/threads.opscope" outer)" -eq 4000 ] || fail "outer ranges"
info=$("$OPSCOPE" info "$tmp/threads.opscope")
echo "$info" | grep -q "^status: *complete" || fail "status: $info"
echo "$info" | grep -q "^drops: *0 events lost" || fail "drops"
for i in 0 1 2 3; do
	echo "$info" | grep -q "worker-$i" || fail "thread name worker-$i"
done
# nesting: every "work" range is inside an "outer" range (depth 1)
bad=$("$OPSCOPE" dump "$tmp/threads.opscope" | awk '$5 == "work" && $7 != "depth=1"' | wc -l)
[ "$bad" -eq 0 ] || fail "$bad work ranges not at depth 1"

echo "# exit status is the command's; an existing -o needs -f"
set +e
"$OPSCOPE" record -q -o "$tmp/false.opscope" -- sh -c 'exit 3'
rc=$?
"$OPSCOPE" record -q -o "$tmp/false.opscope" -- true 2>"$tmp/err"
rc2=$?
"$OPSCOPE" record -q -o "$tmp/x.opscope" -- /nonexistent/program 2>"$tmp/err127"
rc3=$?
set -e
[ "$rc" -eq 3 ] || fail "exit status $rc"
[ "$rc2" -eq 1 ] && grep -q "exists" "$tmp/err" || fail "overwrite without -f: $rc2"
[ "$rc3" -eq 127 ] || fail "missing program: $rc3"
"$OPSCOPE" record -q -f -o "$tmp/false.opscope" -- true

echo "# SIGKILL midway: the file is readable up to its last flush"
"$OPSCOPE" record -q --flush-ms 20 -o "$tmp/killed.opscope" -- \
	"$PROGRAMS/prog_api_forever" 100000 >"$tmp/killed.out" &
rec=$!
for _ in $(seq 100); do
	grep -q recorded "$tmp/killed.out" 2>/dev/null && break
	sleep 0.1
done
grep -q recorded "$tmp/killed.out" || fail "program did not start"
sleep 0.3 # more than the flush interval: the first 100000 ranges are in the file
child=$(pgrep -P "$rec")
kill -KILL "$child"
set +e
wait "$rec"
rc=$?
set -e
[ "$rc" -eq 137 ] || fail "killed exit status $rc"
info=$("$OPSCOPE" info "$tmp/killed.opscope")
echo "$info" | grep -q "INCOMPLETE: no END record" || fail "killed file not marked incomplete"
n=$(count_ranges "$tmp/killed.opscope" tick)
[ "$n" -ge 100000 ] || fail "only $n ranges survived SIGKILL"
echo "#   $n ranges survived"

echo "# abort(): the handler finishes the file, the process still dies of SIGABRT"
set +e
"$OPSCOPE" record -q -o "$tmp/abort.opscope" -- "$PROGRAMS/prog_api_forever" 5000 abort
rc=$?
set -e
[ "$rc" -eq 134 ] || fail "abort exit status $rc"
info=$("$OPSCOPE" info "$tmp/abort.opscope")
echo "$info" | grep -q "^status: *complete" || fail "aborted file not complete"
echo "$info" | grep -q "terminated_by_signal *6" || fail "no terminated_by_signal"
[ "$(count_ranges "$tmp/abort.opscope" tick)" -ge 4999 ] || fail "abort lost ranges"

echo "# fork, _exit and exec: one file per process"
mkdir -p "$tmp/tree"
# Under ASan (GCC 12's libasan) a fork while another thread holds the sanitizer's allocator
# lock leaves the child deadlocked in that lock (seen about once in 130 runs: the child's
# new writer thread blocks in libasan's calloc; glibc's own malloc is fork-safe). So the run
# gets a time limit and up to three more tries, and says when it needed them (on a loaded
# 2-core machine, session 11 saw it hang in 1 run of 4 to 10: the child's writer blocked in
# libasan's allocator lock inside free()).
for try in 1 2 3 4; do
	rm -f "$tmp"/tree/*
	if timeout -s KILL 30 "$OPSCOPE" record -q -o "$tmp/tree/run.opscope" -- "$PROGRAMS/prog_api_fork"; then
		break
	fi
	pkill -KILL -f "$PROGRAMS/prog_api_fork" 2>/dev/null || true # none left is fine (set -e)
	echo "#   try $try timed out (a sanitizer fork deadlock?)"
	[ "$try" -eq 4 ] && fail "prog_api_fork under record did not finish in 4 tries"
done
[ "$(count_ranges "$tmp/tree/run.opscope" parent)" -eq 100 ] || fail "parent file"
files=$(ls "$tmp/tree" | grep -c '^run\.[0-9]*\.opscope$')
[ "$files" -eq 2 ] || fail "expected 2 child files, got $files: $(ls "$tmp/tree")"
child=0
execd=0
for f in "$tmp"/tree/run.[0-9]*.opscope; do
	[ "$(count_ranges "$f" child)" -eq 200 ] && child=1
	[ "$(count_ranges "$f" exec)" -eq 300 ] && execd=1
	# no process writes another's events
	[ "$(count_ranges "$f" parent)" -eq 0 ] || fail "$f holds parent ranges"
done
[ "$child" -eq 1 ] && [ "$execd" -eq 1 ] || fail "child/exec files"

echo "# processes that record nothing leave no file (only the first process always has one)"
mkdir -p "$tmp/quiet"
"$OPSCOPE" record -q -o "$tmp/quiet/run.opscope" -- sh -c '/bin/true; /bin/true; exit 0'
[ "$(ls "$tmp/quiet" | wc -l)" -eq 1 ] || fail "empty child files: $(ls "$tmp/quiet")"

echo "# a directory output: one file per process, named by program and pid"
mkdir -p "$tmp/dir"
"$OPSCOPE" record -q -o "$tmp/dir/" -- "$PROGRAMS/prog_api_threads" 2 100
ls "$tmp/dir" | grep -q '^prog_api_threads\.[0-9]*\.opscope$' || fail "dir output: $(ls "$tmp/dir")"

echo "# usage errors exit 2 with one line"
set +e
"$OPSCOPE" record -q 2>"$tmp/e1"
r1=$?
"$OPSCOPE" record --buffer-size x -- true 2>"$tmp/e2"
r2=$?
"$OPSCOPE" recrod 2>"$tmp/e3"
r3=$?
set -e
[ "$r1" -eq 2 ] && [ "$r2" -eq 2 ] && [ "$r3" -eq 2 ] || fail "usage exit codes $r1 $r2 $r3"
grep -q "Did you mean 'record'" "$tmp/e3" || fail "no suggestion: $(cat "$tmp/e3")"
"$OPSCOPE" record --help | grep -q "usage: opscope record" || fail "record --help"
echo "ok"
