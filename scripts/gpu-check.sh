#!/usr/bin/env bash
# gpu-check.sh: opscope's GPU collector on a real GPU (issue 18, point 6; docs/gpu.md
# "Checking on a real GPU"). It builds scripts/gpu-check/gpu_check.cu with nvcc (kernels on two
# streams, copies both ways, a memset, cudaMalloc/cudaFree, NVTX ranges) and records it with
# `opscope record`; where torch with CUDA imports, it records scripts/gpu-check/train.py (a
# small training loop) too. Where Nsight Systems (nsys) is installed it records the CUDA
# program with it as well (exported to SQLite), and where torch imports it records the loop
# with torch.profiler (Kineto JSON); then it compares, through `opscope report --views kernel
# --format json` on both traces: kernel counts equal, total kernel time within TOL percent
# (default 1). The recordings are separate runs of the same fixed work. With torch, it also
# times STEPS (default 500) steps of the loop plain, under `opscope record` and under
# torch.profiler, and prints each tool's cost as a ratio to the plain run.
# Without a usable GPU it compiles the program (a check of its own), says so in one line and
# exits 77 (skip). Exit 1: a build error, a failed recording or a mismatch.
# Usage: scripts/gpu-check.sh   (env: OPSCOPE=path of the opscope binary, NVCC, TOL, KEEP=1
# keeps the work folder, KEEPDIR=DIR copies the traces there, ITERS: iterations of the CUDA
# program, default 200, PY: the Python that imports torch, default /usr/bin/python3)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
tol=${TOL:-1}
iters=${ITERS:-200}
py=${PY:-/usr/bin/python3}
[ -x "$py" ] || py=python3
steps=${STEPS:-500}
fail() {
	echo "gpu-check: FAIL: $*"
	exit 1
}

nvcc=${NVCC:-$(command -v nvcc || true)}
[ -n "$nvcc" ] || [ ! -x /usr/local/cuda/bin/nvcc ] || nvcc=/usr/local/cuda/bin/nvcc
[ -n "$nvcc" ] || {
	echo "gpu-check: skip: nvcc not found (set NVCC)"
	exit 77
}
work=$(mktemp -d /tmp/opscope-gpu-check.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
bin=$work/gpu_check
"$nvcc" -O2 -lineinfo -o "$bin" "$root/scripts/gpu-check/gpu_check.cu" >"$work/nvcc.log" 2>&1 ||
	fail "nvcc: $(head -c 2000 "$work/nvcc.log")"

if ! probe=$("$bin" --probe 2>&1); then
	echo "gpu-check: skip: no usable GPU here ($probe); gpu_check.cu compiled with $nvcc"
	exit 77
fi
echo "gpu-check: GPU: $probe"

opscope=${OPSCOPE:-}
if [ -z "$opscope" ]; then
	for b in build/dev build/release build/bench build/asan; do
		[ -x "$root/$b/opscope" ] && opscope=$root/$b/opscope && break
	done
fi
[ -n "$opscope" ] && [ -x "$opscope" ] || fail "no opscope binary (build it, or set OPSCOPE)"

# kernel count and total kernel time (ns) of a trace, as opscope reports them
kernels() {
	"$opscope" report --views kernel --format json "$1" | "$py" -c '
import json, sys
n = t = 0
for table in json.load(sys.stdin)["tables"]:
    if table["view"] == "kernel":
        for r in table["rows"]:
            n += r["calls"]
            t += r["total_ns"]
print(n, t)'
}

# compare WHAT OPSCOPE_TRACE OTHER_NAME OTHER_TRACE
status=0
compare() {
	local an at bn bt
	read -r an at < <(kernels "$2")
	read -r bn bt < <(kernels "$4")
	local verdict
	verdict=$(awk -v an="$an" -v at="$at" -v bn="$bn" -v bt="$bt" -v tol="$tol" 'BEGIN {
		d = bt ? 100 * (at - bt) / bt : 100
		ok = an == bn && an > 0 && d <= tol && d >= -tol
		printf "%s kernels opscope %d %s %d; kernel time opscope %.3f ms, %.3f ms (%+.2f%%)",
			ok ? "ok" : "MISMATCH", an, "'"$3"'", bn, at / 1e6, bt / 1e6, d }')
	echo "gpu-check: $1: $verdict"
	case $verdict in ok*) ;; *) status=1 ;; esac
}

echo "gpu-check: recording the CUDA program ($iters iterations) with opscope"
"$opscope" record -q -f -o "$work/cuda.opscope" -- "$bin" "$iters" >"$work/cuda.out" ||
	fail "opscope record of gpu_check"
want=$(awk '/^gpu_check: kernels/ {print $3}' "$work/cuda.out")
read -r got _ < <(kernels "$work/cuda.opscope")
[ "$got" = "$want" ] || { echo "gpu-check: CUDA program: opscope saw $got kernels, the program made $want"; status=1; }
echo "gpu-check: CUDA program: $got kernels recorded, $want made"
"$opscope" report --views nvprof "$work/cuda.opscope" | head -40

if command -v nsys >/dev/null; then
	nsys profile -q --trace=cuda,nvtx -f true -o "$work/cuda_nsys" "$bin" "$iters" >/dev/null ||
		fail "nsys profile"
	nsys export -q -f true --type sqlite -o "$work/cuda_nsys.sqlite" "$work/cuda_nsys.nsys-rep" ||
		fail "nsys export"
	compare "CUDA program vs nsys" "$work/cuda.opscope" nsys "$work/cuda_nsys.sqlite"
else
	echo "gpu-check: nsys not found: no Nsight comparison"
fi

if "$py" -c 'import torch, sys; sys.exit(not torch.cuda.is_available())' 2>/dev/null; then
	echo "gpu-check: recording the training loop with opscope and with torch.profiler"
	"$opscope" record -q -f -o "$work/train.opscope" -- "$py" "$root/scripts/gpu-check/train.py" ||
		fail "opscope record of train.py"
	"$py" "$root/scripts/gpu-check/train.py" --profile "$work/train_kineto.json" >/dev/null ||
		fail "torch.profiler run of train.py"
	compare "training loop vs torch.profiler" "$work/train.opscope" torch.profiler \
		"$work/train_kineto.json"
	# the loop's wall time, as train.py prints it: "train: loss L, N steps in T ms"
	loop_ms() { awk '/^train:/ {print $(NF-1)}' "$1"; }
	"$py" "$root/scripts/gpu-check/train.py" --steps "$steps" --warmup 10 >"$work/plain.out" ||
		fail "plain run of train.py"
	"$opscope" record -q -f -o "$work/train_long.opscope" -- "$py" \
		"$root/scripts/gpu-check/train.py" --steps "$steps" --warmup 10 >"$work/opscope.out" ||
		fail "opscope record of train.py --steps $steps"
	"$py" "$root/scripts/gpu-check/train.py" --steps "$steps" --warmup 10 --profile \
		"$work/train_long_kineto.json" >"$work/kineto.out" || fail "torch.profiler run, $steps steps"
	awk -v p="$(loop_ms "$work/plain.out")" -v o="$(loop_ms "$work/opscope.out")" \
		-v k="$(loop_ms "$work/kineto.out")" -v n="$steps" 'BEGIN {
		printf "gpu-check: %d steps: plain %.1f ms, opscope %.1f ms (%.3fx), torch.profiler %.1f ms (%.3fx)\n",
			n, p, o, o / p, k, k / p }'
else
	echo "gpu-check: torch with CUDA not importable: no training loop"
fi
if [ -n "${KEEPDIR:-}" ]; then
	mkdir -p "$KEEPDIR"
	for f in "$work"/*.opscope "$work"/*.json "$work"/*.sqlite; do
		[ -f "$f" ] && cp "$f" "$KEEPDIR/"
	done
fi
exit $status
