#!/usr/bin/env bash
# test_cupti.sh: the CUPTI GPU collector end to end, against the fake libcupti (a test
# double: tests/doubles/fake_cupti/, the real CUDA 13 record layouts; no GPU here). The fake
# CUDA program (tests/programs/cuda_fake_app.c) plays libcuda: it dlopens
# CUDA_INJECTION64_PATH (set by `opscope record`) and calls InitializeInjection, then makes
# kernels, copies, memsets, syncs and allocations on two devices and several streams from
# four threads, inside NVTX and C API operator ranges. The reports must show exactly the
# counts and bytes the program made, kernels under the operators that launched them, the
# devices' properties, drops, and degrade with a warning when CUPTI cannot be used.
# Skipped (77) where the toolkit's cupti.h was not found at build time.
set -euo pipefail
: "${OPSCOPE:?}" "${PROGRAMS:?}"
app=$PROGRAMS/prog_cuda_fake_app
fake=$PROGRAMS/fake_cupti/libcupti.so.13
[ -x "$app" ] && [ -f "$fake" ] || {
	echo "skip: no cupti.h at build time"
	exit 77
}
tmp=$(mktemp -d /tmp/opscope-e2e-cupti.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*"
	exit 1
}
export OPSCOPE_CUPTI_LIB=$fake
T=4 I=500
n=$((T * I))

echo "# recorded with no code change; 512-byte buffers: thousands of them"
OPSCOPE_CUPTI_BUFFER_BYTES=512 "$OPSCOPE" record -q -o "$tmp/a.opscope" -- "$app" $T $I \
	>"$tmp/a.out" 2>"$tmp/a.err"
cat "$tmp/a.out"
[ ! -s "$tmp/a.err" ] || fail "stderr: $(cat "$tmp/a.err")"
read -r _ buffers _ ooo _ worker _ poisoned < <(sed -n 's/^fake: records [0-9]* dropped [0-9]* \(buffers [0-9]*\) \(out_of_order [0-9]*\) \(on_worker [0-9]*\) \(names_poisoned [0-9]*\)$/\1 \2 \3 \4/p' "$tmp/a.out")
[ "${buffers:-0}" -ge 1000 ] || fail "only ${buffers:-0} buffers completed before exit"
[ "${ooo:-0}" -gt 0 ] && [ "${worker:-0}" -gt 0 ] && [ "${poisoned:-0}" -gt 0 ] ||
	fail "fake: out of order ${ooo:-0}, on its thread ${worker:-0}, names freed ${poisoned:-0}"

grep -qx 'late subscriber: ok' "$tmp/a.out" || fail "CUPTI's subscriber slot not given back"
# NVTX chained to the fake's NVTX hooks (as to libcupti's): every push and pop reached both
grep -qx "fake nvtx: push $n pop $n" "$tmp/a.out" || fail "NVTX chaining: $(grep nvtx "$tmp/a.out")"

"$OPSCOPE" report --views nvprof -f csv "$tmp/a.opscope" >"$tmp/nvprof.csv"
row() { # section name -> calls
	awk -F, -v s="$1" -v n="$2" '$1 == s && $8 == n {print $4}' "$tmp/nvprof.csv"
}
for k in "gpu gemm_kernel $n" "gpu relu_kernel $n" "gpu [CUDA memcpy HtoD] $n" \
	"gpu [CUDA memcpy DtoH] $n" "gpu [CUDA memset] $n" "gpu [CUDA memcpy PtoP] 1" \
	"api cudaLaunchKernel $((2 * n))" "api cudaMemcpyAsync $((2 * n))" \
	"api cudaMemsetAsync $n" "api cudaStreamSynchronize $n" "api cudaMalloc 2" \
	"api cudaFree 2"; do
	set -- $k
	want=${*: -1}
	name=${k#* }
	name=${name% *}
	got=$(row "$1" "$name")
	[ "$got" = "$want" ] || fail "nvprof: $1 $name: '$got' calls, want $want"
done
grep -q '^gpu,.*,dropped_kernel$' "$tmp/nvprof.csv" && fail "a kernel that was never made"
echo "nvprof: every count as made"

# kernel times: gemm 1000 units, relu 500 (clock units of the fake): the ratio is 2
"$OPSCOPE" report --views kernel -f csv "$tmp/a.opscope" >"$tmp/kernel.csv"
awk -F, '$1 == "gemm_kernel" {g = $3; gc = $2} $1 == "relu_kernel" {r = $3; rc = $2}
	END {exit !(gc == '$n' && rc == '$n' && r > 0 && g / r > 1.99 && g / r < 2.01)}' \
	"$tmp/kernel.csv" || fail "kernel view: $(cat "$tmp/kernel.csv")"

# bytes, grid, block, registers from the records (dump: one line per range)
"$OPSCOPE" dump "$tmp/a.opscope" >"$tmp/dump"
[ "$(grep -c ' range Memcpy Memcpy HtoD (Pageable -> Device) .*bytes=4096 ' "$tmp/dump")" -eq $n ] ||
	fail "HtoD copies of 4096 bytes"
[ "$(grep -c ' range Memcpy Memcpy DtoH (Device -> Pinned) .*bytes=1024 ' "$tmp/dump")" -eq $n ] ||
	fail "DtoH copies of 1024 bytes"
[ "$(grep -c ' range Memset Memset (Device) .*bytes=512' "$tmp/dump")" -eq $n ] || fail "memsets"
[ "$(grep -c ' range Kernel gemm_kernel .*grid=\[64, 2, 1\] block=\[256, 1, 1\] registers per thread=32 shared memory=4096}' "$tmp/dump")" -eq $n ] ||
	fail "gemm kernels with grid, block, registers, shared memory"
# names copied before the fake freed them: no other kernel name
[ "$(grep -c ' range Kernel ' "$tmp/dump")" -eq $((2 * n)) ] || fail "kernel ranges"
# device and stream tracks: devices 0 and 1, streams 7..10 (thread t on device t%2)
for d in gpu0:7 gpu1:8 gpu0:9 gpu1:10; do
	[ "$(grep -c " $d range Kernel " "$tmp/dump")" -eq $((2 * I)) ] || fail "kernels on $d"
done
# allocations: the running total per device back to 0
grep -q ' instant Memory \[memory\] .*Total Allocated=0' "$tmp/dump" || fail "allocation records"

echo "# kernels under the host ranges that launched them"
"$OPSCOPE" report --views operator -f csv "$tmp/a.opscope" >"$tmp/op.csv"
grep -q "^0,aten::mm,$n," "$tmp/op.csv" && grep -q "^1,gemm_kernel,$n," "$tmp/op.csv" &&
	grep -q "^0,aten::relu,$n," "$tmp/op.csv" && grep -q "^1,relu_kernel,$n," "$tmp/op.csv" ||
	fail "operator view: $(cat "$tmp/op.csv")"
# external correlation: every gemm kernel carries the id of an aten::mm range
awk '$5 == "aten::mm" && match($0, /external_id=[0-9]+/) {mm[substr($0, RSTART + 12, RLENGTH - 12)] = 1}
	$4 == "Kernel" && $5 == "gemm_kernel" && match($0, /External id=[0-9]+/) {
		k++; if (substr($0, RSTART + 12, RLENGTH - 12) in mm) ok++ }
	END {exit !(k == '$n' && ok == k)}' "$tmp/dump" || fail "external ids of gemm kernels"
echo "external ids: every gemm kernel maps to its aten::mm"

echo "# device properties, clock, flows"
"$OPSCOPE" info "$tmp/a.opscope" >"$tmp/info"
grep -q '^  gpu.0.name  *Fake GPU 0$' "$tmp/info" && grep -q '^  gpu.1.sm_count  *108$' "$tmp/info" &&
	grep -q '^  gpu.0.compute_capability 8.0$' "$tmp/info" || fail "device properties"
grep -q '^  gpu.clock  *opscope ticks (CUPTI timestamp callback)$' "$tmp/info" || fail "clock"
grep -q '^  gpu.overhead_records 1$' "$tmp/info" || fail "overhead"
"$OPSCOPE" export -f chrome -o "$tmp/a.json" "$tmp/a.opscope" 2>/dev/null
flows=$(grep -o '"ph":"f"' "$tmp/a.json" | wc -l)
# a flow per launched item: 2 kernels, 2 copies, a memset, a sync per iteration; the peer copy
[ "$flows" -eq $((6 * n + 1)) ] || fail "chrome export: $flows flows"

echo "# CUPTI's clock when the timestamp callback is refused: offset pair, ns durations"
"$OPSCOPE" record -q -o "$tmp/b.opscope" -- "$app" --no-clock 2 100 >/dev/null
"$OPSCOPE" info "$tmp/b.opscope" | grep -q '^  gpu.clock  *CUPTI clock mapped at start' ||
	fail "clock metadata without the callback"
# 200 gemm kernels of 1000 ns: 0.2 ms within 2 %. Each duration is rounded through the tick
# map (single kernels read 768 to 1024 ns); the sum was 1.06 % low in 1 of 16 runs beside
# other tests (0.197888 ms), so 1 % was too tight. A unit error (ticks, us) is 1000x off.
"$OPSCOPE" report --views kernel -f csv "$tmp/b.opscope" >"$tmp/b.csv"
awk -F, '$1 == "gemm_kernel" {exit !($2 == 200 && $3 > 0.196 && $3 < 0.204)} ' "$tmp/b.csv" ||
	fail "kernel time in ns without the callback: $(grep -c . "$tmp/b.csv") lines, $(grep gemm "$tmp/b.csv")"

echo "# dropped records counted and shown like every loss"
"$OPSCOPE" record -q -o "$tmp/c.opscope" -- "$app" --drops 10 1 10 >/dev/null
"$OPSCOPE" report --views files -f csv "$tmp/c.opscope" | grep -q '^[^,]*,opscope,[0-9]*,10,' ||
	fail "drops: $("$OPSCOPE" report --views files -f csv "$tmp/c.opscope")"

echo "# another CUPTI subscriber: one warning, activities only, host data intact"
"$OPSCOPE" record -q -o "$tmp/d.opscope" -- "$app" --foreign-subscriber 1 10 >/dev/null 2>"$tmp/d.err"
[ "$(wc -l <"$tmp/d.err")" -eq 1 ] && grep -q 'another tool is subscribed' "$tmp/d.err" ||
	fail "warning: $(cat "$tmp/d.err")"
"$OPSCOPE" info "$tmp/d.opscope" | grep -q '^  gpu.mode  *activity-only' || fail "mode"
"$OPSCOPE" report --views kernel -f csv "$tmp/d.opscope" | grep -q '^gemm_kernel,10,' ||
	fail "kernels in activity-only mode"

echo "# no CUPTI, a CUPTI of another version: one warning, host recording intact"
FAKE_CUPTI_PATH=$fake OPSCOPE_CUPTI_LIB=$tmp/none/libcupti.so.13 "$OPSCOPE" record -q \
	-o "$tmp/e.opscope" -- "$app" 1 10 >/dev/null 2>"$tmp/e.err"
[ "$(wc -l <"$tmp/e.err")" -eq 1 ] && grep -q 'cannot load CUPTI' "$tmp/e.err" ||
	fail "no CUPTI: $(cat "$tmp/e.err")"
"$OPSCOPE" report --views nvtx -f csv "$tmp/e.opscope" | grep -q ',10,.*PushPop,iter,,iter$' ||
	fail "NVTX ranges without CUPTI"
FAKECUPTI_VERSION=120000 "$OPSCOPE" record -q -o "$tmp/f.opscope" -- "$app" 1 10 >/dev/null \
	2>"$tmp/f.err"
[ "$(wc -l <"$tmp/f.err")" -eq 1 ] && grep -q 'CUPTI API version 120000' "$tmp/f.err" ||
	fail "wrong version: $(cat "$tmp/f.err")"
"$OPSCOPE" report --views nvprof -f csv "$tmp/f.opscope" | grep -q 'no GPU activities' ||
	fail "wrong version: GPU data anyway"

echo "# --no-gpu: nothing of the GPU"
"$OPSCOPE" record -q --no-gpu -o "$tmp/g.opscope" -- "$app" 1 10 >/dev/null
"$OPSCOPE" report --views nvprof -f csv "$tmp/g.opscope" | grep -q 'no GPU activities' ||
	fail "--no-gpu"
echo "# OPSCOPE_CUPTI_SKIP: the kinds named are not enabled (kernels always are), and said so"
OPSCOPE_CUPTI_SKIP=runtime,driver,memset,kernel "$OPSCOPE" record -q -o "$tmp/s.opscope" -- \
	"$app" 1 10 >/dev/null
"$OPSCOPE" info "$tmp/s.opscope" | grep -q '^  gpu.skipped_kinds  *memset,runtime,driver$' ||
	fail "skipped kinds: $("$OPSCOPE" info "$tmp/s.opscope" | grep gpu.)"
"$OPSCOPE" report --views nvprof -f csv "$tmp/s.opscope" >"$tmp/s.csv"
grep -q '^api,' "$tmp/s.csv" && fail "runtime calls recorded though skipped"
grep -q '^gpu,.*,\[CUDA memset\]$' "$tmp/s.csv" && fail "memsets recorded though skipped"
grep -q '^gpu,.*,10,.*,gemm_kernel$' "$tmp/s.csv" && grep -q '^gpu,.*,\[CUDA memcpy HtoD\]$' "$tmp/s.csv" ||
	fail "kernels and copies with skips: $(cat "$tmp/s.csv")"
echo "# NVTX chaining: slots the inner tool left alone are not called (they spin forever)"
if [ -x "$PROGRAMS/prog_nvtx_app" ]; then
	timeout 120 "$OPSCOPE" record -q -o "$tmp/n.opscope" -- "$PROGRAMS/prog_nvtx_app" 2 200 \
		>/dev/null || fail "nvtx_app chained to the fake: exit $?"
	"$OPSCOPE" report --views nvtx -f csv "$tmp/n.opscope" | grep -q ',400,.*,PushPop,inner,,inner$' ||
		fail "nvtx_app's ranges with chaining"
fi

echo "# the C API: the profiler's GPU target starts the collector (no injection)"
prof=$PROGRAMS/prog_cuda_fake_profiler
"$prof" "$tmp/p/" 20 >"$tmp/p.out" 2>"$tmp/p.err"
[ ! -s "$tmp/p.err" ] || fail "profiler: $(cat "$tmp/p.err")"
"$OPSCOPE" report --views operator -f csv "$tmp"/p/*.opscope >"$tmp/p.csv"
grep -q '^0,op_a,20,' "$tmp/p.csv" && grep -q '^1,step_kernel_a,20,' "$tmp/p.csv" &&
	grep -q '^1,step_kernel_b,20,' "$tmp/p.csv" || fail "profiler window: $(cat "$tmp/p.csv")"
FAKE_CUPTI_PATH=$fake OPSCOPE_CUPTI_LIB=$tmp/none/libcupti.so.13 "$prof" "$tmp/q/" 5 \
	>/dev/null 2>"$tmp/q.err"
grep -q 'Profiling GPU is not supported' "$tmp/q.err" || fail "profiler: $(cat "$tmp/q.err")"
"$OPSCOPE" report --views operator -f csv "$tmp"/q/*.opscope | grep -Eq '^(0,)?op_a,5,' ||
	fail "profiler without CUPTI: host ranges"
echo "PASS"
