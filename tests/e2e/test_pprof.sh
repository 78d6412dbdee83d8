#!/usr/bin/env bash
# test_pprof.sh: the pprof family end to end: every CPU profile of pprof's test data
# (../shared/data/pprof) imported with its totals (../shared/data/README.md), exported as
# gzip'd profile.proto and read by the real reader, `go tool pprof` (-top and -traces equal
# to what it prints for the original file), exported again from our own export (the same
# bytes), and as folded stacks (their weights sum to the total); malformed files give one line
# naming the file and an offset, exit 1; `opscope report` shows the Trace Files table.
# Env: OPSCOPE (the CLI), SRC (repository root).
set -u
: "${OPSCOPE:?}" "${SRC:?}"
. "$(dirname "$0")/lib.sh"
D=$SRC/../shared/data/pprof
[ -d "$D" ] || { echo "skip: no $D"; exit 77; }
export HOME=$T # go tool pprof keeps nothing of ours

# file  samples  total of the last value column (ns)
cpu_files="profile/testdata/cppbench.cpu 52 7120000000
profile/testdata/go.crc32.cpu 69 2110000000
profile/testdata/gobench.cpu 206 3050000000
internal/report/testdata/sample.cpu 76 1760000000
internal/proftest/testdata/large.cpu 20430 -"
have_go=1
command -v go >/dev/null && go tool pprof -h >/dev/null 2>&1 || have_go=0
[ $have_go -eq 1 ] || echo "# go tool pprof not found (scripts/install-deps.sh installs golang-go): its checks are skipped"
while read -r f samples total; do
	b=$(basename "$f")
	"$OPSCOPE" info "$D/$f" >"$T/$b.info"
	check "$b: imported, $samples samples" '[ $? -eq 0 ] && grep -q "^events: *$samples encoded" "$T/$b.info"'
	"$OPSCOPE" export -q -f pprof -o "$T/$b.pb.gz" "$D/$f"
	check "$b: exported as pprof (gzip)" '[ $? -eq 0 ] && [ "$(head -c2 "$T/$b.pb.gz" | od -An -tx1 | tr -d " ")" = 1f8b ]'
	"$OPSCOPE" export -q -f pprof -o "$T/$b.again.pb.gz" "$T/$b.pb.gz"
	check "$b: our export imported and exported again: the same bytes" 'cmp -s "$T/$b.pb.gz" "$T/$b.again.pb.gz"'
	"$OPSCOPE" export -q -f folded -o "$T/$b.folded" "$D/$f"
	sum=$(awk '{s += $NF} END {printf "%.0f", s}' "$T/$b.folded")
	if [ "$total" != - ]; then
		check "$b: folded weights sum to $total ns" '[ "$sum" = "$total" ]'
	fi
	check "$b: folded lines are 'frames weight', no empty frame" '! grep -qvE "^[^;]+(;[^;]+)* [0-9]+$" "$T/$b.folded"'
	if [ $have_go -eq 1 ]; then
		for v in top traces; do
			go tool pprof -symbolize=none -$v -nodecount=1000000 "$D/$f" 2>/dev/null | grep -v '^File:' >"$T/$b.orig.$v"
			go tool pprof -symbolize=none -$v -nodecount=1000000 "$T/$b.pb.gz" 2>/dev/null | grep -v '^File:' >"$T/$b.ours.$v"
			check "$b: go tool pprof -$v of our export equals its -$v of the original" '[ -s "$T/$b.ours.$v" ] && cmp -s "$T/$b.orig.$v" "$T/$b.ours.$v"'
		done
		if [ "$total" != - ]; then
			# -raw merges samples with equal stacks: their sum is what must agree
			ns=$(go tool pprof -raw "$T/$b.pb.gz" 2>/dev/null | awk '/^Samples:/ {s = 1; getline; next} /^Locations/ {s = 0} s && /:/ {t += $2} END {printf "%.0f", t}')
			check "$b: go tool pprof -raw reads $total ns" '[ "$ns" = "$total" ]'
		fi
	fi
done <<<"$cpu_files"

# the Trace Files table of an imported profile
"$OPSCOPE" report "$D/profile/testdata/cppbench.cpu" >"$T/report" 2>&1
check "report on a gperftools profile: exit 0, Trace Files" '[ $? -eq 0 ] && grep -q "Trace Files" "$T/report" && grep -q "gperftools-cpu  52 " "$T/report"'
"$OPSCOPE" report "$D/internal/report/testdata/sample.cpu" >"$T/report" 2>&1
check "report on a profile.proto: exit 0, Trace Files" '[ $? -eq 0 ] && grep -q "pprof  *76 " "$T/report"'
# unsymbolized addresses stay apart in the samples view, named as pprof names them:
# go tool pprof -top -addresses gives 0x42ed43 5.42s 76.12%, 0x42ef13 0.67s 9.41%
"$OPSCOPE" report --views samples --format csv "$D/profile/testdata/cppbench.cpu" >"$T/addr.csv" 2>&1
check "samples view: unnamed addresses apart, as go tool pprof -top -addresses" 'grep -q "^0x42ed43,5420000000,0.76" "$T/addr.csv" && grep -q "^0x42ef13,670000000,0.09" "$T/addr.csv"'

# malformed files: one line naming the file and an offset, exit 1
bad() { # NAME FILE EXPECTED-TEXT
	bad_file=$2 bad_text=$3
	"$OPSCOPE" report "$bad_file" >/dev/null 2>"$T/err"
	check "$1: exit 1, one line: $3" '[ $? -eq 1 ] && [ $(wc -l <"$T/err") -eq 1 ] && grep -qF "$bad_file: offset " "$T/err" && grep -qF "$bad_text" "$T/err"'
}
S=$T/sample.pb
gzip -dc "$D/internal/report/testdata/sample.cpu" >"$S"
head -c 1000 "$S" >"$T/trunc.pb"
bad "truncated protobuf" "$T/trunc.pb" "runs past the end"
printf '\x32\x00\x0a\x02\x08\x00\x12\x02\x18\x05' >"$T/wire.pb"
bad "wrong wire type" "$T/wire.pb" "offset 8: Sample field 3: wire type varint, expected length-delimited"
printf '\x32\x00\x0a\x02\x08\x00\x32\xff\xff\xff\xff\x0f' >"$T/huge.pb"
bad "huge length" "$T/huge.pb" "length runs past the end of the message"
head -c 900 "$D/internal/report/testdata/sample.cpu" >"$T/trunc.pb.gz"
bad "truncated gzip" "$T/trunc.pb.gz" "gzip data is truncated"
head -c 100 "$D/profile/testdata/cppbench.cpu" >"$T/trunc.prof"
bad "truncated legacy profile" "$T/trunc.prof" "runs past the end of the file"
printf '\0\0\0\0\3\0\0\0\1\0\0\0\x10\x27\0\0\0\0\0\0' >"$T/java.prof"
bad "Java legacy CPU profile" "$T/java.prof" "legacy Java CPU profiles are not supported yet"
bad "legacy heap profile" "$D/profile/testdata/cppbench.heap" "legacy heap profiles are not supported yet"
bad "legacy contention profile" "$D/profile/testdata/cppbench.contention" "legacy contention profiles are not supported yet"
tap_done
