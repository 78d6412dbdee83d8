#!/usr/bin/env bash
# test_nvtx.sh: an NVTX-annotated C program (CUDA toolkit nvtx3 headers, nothing of opscope
# linked) recorded with no code change: every range, mark, argument and name must be there.
# Skipped (77) when the toolkit's headers were not found at build time.
set -euo pipefail
: "${OPSCOPE:?}" "${PROGRAMS:?}" "${OPSCOPE_LIB:?}"
app=$PROGRAMS/prog_nvtx_app
[ -x "$app" ] || {
	echo "skip: no NVTX headers at build time"
	exit 77
}
tmp=$(mktemp -d /tmp/opscope-e2e-nvtx.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*"
	exit 1
}
threads=4
iters=2000

echo "# the program alone"
"$app" "$threads" "$iters"

echo "# recorded by opscope record"
"$OPSCOPE" record -q -o "$tmp/nvtx.opscope" -- "$app" "$threads" "$iters"
"$OPSCOPE" dump "$tmp/nvtx.opscope" >"$tmp/dump"
info=$("$OPSCOPE" info "$tmp/nvtx.opscope")
echo "$info" | grep -q "^status: *complete" || fail "incomplete"
echo "$info" | grep -q "^drops: *0 events lost" || fail "drops"
for i in $(seq 0 $((threads - 1))); do
	track=$(echo "$info" | awk -v n="nvtx-worker-$i" '$6 == n {print $1}')
	[ -n "$track" ] || fail "no thread nvtx-worker-$i"
	steps=$(awk -v t="$track" '$2 == t && $3 == "range" && $5 == "step" && $7 == "depth=0"' "$tmp/dump" | wc -l)
	inner=$(awk -v t="$track" '$2 == t && $3 == "range" && $5 == "inner" && $7 == "depth=1"' "$tmp/dump" | wc -l)
	marks=$(awk -v t="$track" '$2 == t && $3 == "instant" && $5 == "mark"' "$tmp/dump" | wc -l)
	[ "$steps" -eq "$iters" ] || fail "worker $i: $steps step ranges"
	[ "$inner" -eq "$iters" ] || fail "worker $i: $inner inner ranges"
	[ "$marks" -eq $(((iters + 99) / 100)) ] || fail "worker $i: $marks marks"
done
# attributes of PushEx: color, named category, typed payload (the i-th inner has payload i)
grep -q 'inner .*{color=4278255360 category=1 category_name="compute" payload=1999}' "$tmp/dump" ||
	fail "inner attributes"
grep -q 'registered-range .*{domain="mydomain"}' "$tmp/dump" || fail "domain + registered string"
grep -q ' range Nvtx wide-é ' "$tmp/dump" || fail "wide string"
[ "$(grep -c ' async .*cross-thread' "$tmp/dump")" -eq 1 ] || fail "start/end range"
for t in 'typed-u64 {payload=1000000000000000}' 'typed-i64 {payload=-42}' \
	'typed-f64 {payload=0.25}' 'typed-u32 {payload=7}' 'typed-i32 {payload=-7}' \
	'typed-f32 {payload=1.5}'; do
	grep -qF "$t" "$tmp/dump" || fail "payload $t"
done
total=$(awk '$3 == "range" && ($5 == "step" || $5 == "inner")' "$tmp/dump" | wc -l)
[ "$total" -eq $((2 * threads * iters)) ] || fail "total ranges $total"

echo "# the NVTX table (nsys stats' nvtx_sum): per domain and name, push/pop and start/end"
"$OPSCOPE" report --views nvtx -f csv "$tmp/nvtx.opscope" >"$tmp/nvtx.csv"
grep -q '^ratio,total_ms,instances,avg_ms,med_ms,min_ms,max_ms,stddev_ms,style,range,domain,name$' \
	"$tmp/nvtx.csv" || fail "nvtx table header: $(head -3 "$tmp/nvtx.csv")"
grep -Eq "^[0-9.]+,[0-9.]+,$((threads * iters)),.*,PushPop,step,,step$" "$tmp/nvtx.csv" ||
	fail "nvtx table: step row"
grep -Eq "^[0-9.]+,[0-9.]+,$((threads * iters)),.*,PushPop,inner,,inner$" "$tmp/nvtx.csv" ||
	fail "nvtx table: inner row"
grep -Eq ',1,.*,PushPop,mydomain:registered-range,mydomain,registered-range$' "$tmp/nvtx.csv" ||
	fail "nvtx table: a range of a domain"
grep -Eq ',1,.*,StartEnd,cross-thread,,cross-thread$' "$tmp/nvtx.csv" ||
	fail "nvtx table: a start/end range"
# Time (%) adds up to 100 % of the NVTX ranges' time
awk -F, 'NR > 2 && NF > 1 { s += $1 } END { exit !(s > 0.999 && s < 1.001) }' "$tmp/nvtx.csv" ||
	fail "nvtx table: ratios do not add up to 1"
"$OPSCOPE" report "$tmp/nvtx.opscope" | grep -q "NVTX Range Summary" || fail "nvtx table by default"

echo "# through NVTX_INJECTION64_PATH alone (no preload): the library starts when NVTX loads it"
NVTX_INJECTION64_PATH=$OPSCOPE_LIB OPSCOPE_AUTOSTART=1 OPSCOPE_OUTPUT=$tmp/inject.opscope \
	"$app" 2 500
n=$("$OPSCOPE" dump "$tmp/inject.opscope" | awk '$3 == "range" && $5 == "step"' | wc -l)
[ "$n" -eq 1000 ] || fail "injection only: $n step ranges"

echo "# --no-nvtx leaves NVTX alone"
"$OPSCOPE" record -q --no-nvtx -o "$tmp/off.opscope" -- "$app" 2 100
n=$("$OPSCOPE" dump "$tmp/off.opscope" | grep -c ' Nvtx ' || true)
[ "$n" -eq 0 ] || fail "--no-nvtx recorded $n NVTX events"
echo "ok"
