#!/usr/bin/env bash
# test_gpu_check.sh: scripts/gpu-check.sh (the check on a real GPU, docs/gpu.md) in CI, where
# there is no GPU: its CUDA program must compile with nvcc, and the script must then skip in
# one line with exit 77. On a machine with a GPU it runs the whole check (exit 0 = it passed).
# Skipped (77) where nvcc is not installed.
set -euo pipefail
: "${SRC:?}" "${OPSCOPE:?}"
command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] || {
	echo "skip: no nvcc"
	exit 77
}
rc=0
out=$(OPSCOPE=$OPSCOPE bash "$SRC/scripts/gpu-check.sh" 2>&1) || rc=$?
echo "$out"
case $rc in
0) exit 0 ;;
77)
	[ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || { echo "FAIL: skip is not one line"; exit 1; }
	grep -q '^gpu-check: skip: no usable GPU here (.*); gpu_check.cu compiled with ' <<<"$out" ||
		{ echo "FAIL: skipped without compiling the CUDA program"; exit 1; }
	echo "compiled; no GPU: skipped as it should"
	exit 0
	;;
*)
	echo "FAIL: gpu-check.sh exit $rc"
	exit 1
	;;
esac
