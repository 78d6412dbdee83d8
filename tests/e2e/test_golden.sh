#!/usr/bin/env bash
# test_golden.sh: the CLI's outputs compared byte for byte with committed ones
# (tests/golden/<case>/<output>), so that moving code around can be shown to change nothing.
#
# Inputs, all deterministic (a fake clock, no wall time, no host names): the traces of the
# generator tests/tools/make_trace (sample, sample without END, format v2, long records) and
# the well-formed Kineto/Chrome JSON traces of the fuzz corpus, and a small Nsight Systems
# SQLite export (tests/fuzz-corpus/nsys/small.sqlite). For each: `info`, `dump` (by
# track and by time), `report` as text (also in ns, per thread, by GPU time), CSV and JSON, the Chrome export, and the SQLite export
# as the sqlite3 shell's `.dump`. A difference prints the first lines of a unified diff.
#
# OPSCOPE_GOLDEN_UPDATE=1 writes the outputs instead of comparing (then review `git diff`).
# Env: OPSCOPE (the CLI), SRC (repository root), PROGRAMS (tests build dir, for make_trace).
set -u
: "${OPSCOPE:?}" "${SRC:?}" "${PROGRAMS:?}"
. "$(dirname "$0")/lib.sh"
command -v sqlite3 >/dev/null || { echo "skip: no sqlite3 shell"; exit 77; }
G=$SRC/tests/golden
update=${OPSCOPE_GOLDEN_UPDATE:-0}

# Inputs live in $T/in under fixed names, and every command runs from there with a relative
# path, so that no output depends on where the test runs.
mkdir -p "$T/in"
"$PROGRAMS/make_trace" "$T/in/sample.opscope" || exit 1
"$PROGRAMS/make_trace" "$T/in/noend.opscope" --no-end || exit 1
"$PROGRAMS/make_trace" "$T/in/v2.opscope" --v2 || exit 1
"$PROGRAMS/make_trace" "$T/in/long.opscope" --long || exit 1
for f in full compact escapes spans_and_flows bom ns_resolution string_ids; do
	[ -f "$SRC/tests/fuzz-corpus/kineto/$f.json" ] && cp "$SRC/tests/fuzz-corpus/kineto/$f.json" "$T/in/$f.json"
done
# an Nsight Systems SQLite export (a few rows of a real one: tests/tools/make_nsys_seed.sh)
cp "$SRC/tests/fuzz-corpus/nsys/small.sqlite" "$T/in/nsys_small.sqlite"

# One output: run the command (in $T/in), keep stdout, the exit status and
# stderr, compare or write.
golden() { # CASE OUTPUT COMMAND...
	local case=$1 out=$2
	shift 2
	local got="$T/out/$case/$out"
	mkdir -p "$T/out/$case"
	(cd "$T/in" && "$@") >"$got" 2>"$T/err"
	echo "exit $?" >>"$got"
	[ -s "$T/err" ] && { echo "stderr:"; cat "$T/err"; } >>"$got"
	if [ "$update" = 1 ]; then
		mkdir -p "$G/$case"
		cp "$got" "$G/$case/$out"
		check "$case/$out written" true
		return
	fi
	if cmp -s "$G/$case/$out" "$got"; then
		check "$case/$out" true
	else
		check "$case/$out is as committed" false
		diff -u "$G/$case/$out" "$got" | head -n 40 | sed 's/^/#   /'
	fi
}

sqlite_dump() { # TRACE: the SQLite export as SQL text
	"$OPSCOPE" export -q -f sqlite -o "$T/db.sqlite" "$1" && sqlite3 "$T/db.sqlite" .dump
	local rc=$?
	rm -f "$T/db.sqlite"
	return $rc
}

for path in "$T"/in/*; do
	f=${path##*/}
	c=${f%.*}
	golden "$c" info "$OPSCOPE" info "$f"
	golden "$c" dump "$OPSCOPE" dump "$f"
	golden "$c" dump-time "$OPSCOPE" dump --sort time "$f"
	golden "$c" report.txt "$OPSCOPE" report "$f"
	golden "$c" report-detail.txt "$OPSCOPE" report --no-op-detail --thread-sep --sort GPUTotal --time-unit ns --top 3 "$f"
	golden "$c" report.csv "$OPSCOPE" report --format csv "$f"
	golden "$c" report.json "$OPSCOPE" report --format json "$f"
	golden "$c" chrome.json "$OPSCOPE" export -q -f chrome -o - "$f"
	golden "$c" sqlite.sql sqlite_dump "$f"
done
# A directory of traces (one process per file), as `report DIR` merges them.
mkdir -p "$T/in/dir"
cp "$T/in/sample.opscope" "$T/in/long.opscope" "$T/in/dir/"
golden dir report.txt "$OPSCOPE" report dir
golden dir report.json "$OPSCOPE" report --format json dir
golden dir info "$OPSCOPE" info dir
golden dir info-slash "$OPSCOPE" info dir/ # no "dir//sample.opscope"

# The check itself: a one-character change to a committed output is caught.
if [ "$update" != 1 ]; then
	cp "$G/sample/report.txt" "$T/changed"
	sed -i '5s/./#/' "$T/changed"
	(cd "$T/in" && "$OPSCOPE" report sample.opscope) >"$T/now"
	echo "exit $?" >>"$T/now"
	check "a one-character change is caught" '! cmp -s "$T/changed" "$T/now"'
fi
tap_done
