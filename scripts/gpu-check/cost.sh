#!/usr/bin/env bash
# cost.sh: what recording costs on a real GPU, beside torch.profiler (docs/gpu.md, "On an
# H200"). Runs scripts/gpu-check/train.py --steps STEPS --warmup 10 in ROUNDS interleaved
# rounds of five variants, each a separate process: plain, `opscope record`, `opscope record
# --no-torch` (CUPTI only), `opscope record --no-gpu` (operators only) and torch.profiler; then
# prints per variant the median loop time with each round's, its ratio to plain, the median
# set-up time train.py reports and the median process wall time.
# Usage: OPSCOPE=path/to/opscope PY=python3 scripts/gpu-check/cost.sh  (ROUNDS=3, STEPS=2000)
# The opscope build must have the Python extension (built with OPSCOPE_PYTHON=ON) for the
# operator variants to record operators.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${OPSCOPE:?set OPSCOPE to the opscope binary}"
py=${PY:-python3}
rounds=${ROUNDS:-3}
steps=${STEPS:-2000}
work=$(mktemp -d /tmp/opscope-gpu-cost.XXXXXX)
trap 'rm -rf "$work"' EXIT
T=("$here/train.py" --steps "$steps" --warmup 10)
run() { # NAME CMD...: prints NAME SETUP_MS LOOP_MS WALL_S
	local name=$1 t0 t1 out
	shift
	t0=$(date +%s.%N)
	out=$("$@" 2>/dev/null | grep '^train:') || { echo "cost: $name failed" >&2; return 1; }
	t1=$(date +%s.%N)
	echo "$name $(awk '{print $3, $(NF-1)}' <<<"$out") $(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')"
}
for ((r = 1; r <= rounds; r++)); do
	run plain "$py" "${T[@]}"
	run opscope "$OPSCOPE" record -q -f -o "$work/v.opscope" -- "$py" "${T[@]}"
	run opscope_cupti_only "$OPSCOPE" record -q -f --no-torch -o "$work/v.opscope" -- "$py" "${T[@]}"
	run opscope_no_gpu "$OPSCOPE" record -q -f --no-gpu -o "$work/v.opscope" -- "$py" "${T[@]}"
	run torch_profiler "$py" "${T[@]}" --profile "$work/k.json"
done | tee "$work/rounds"
"$py" - "$work/rounds" <<'PY'
import statistics as st, sys
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    rows.setdefault(f[0], []).append((float(f[1]), float(f[2]), float(f[3])))
p = st.median(r[1] for r in rows["plain"])
for k, v in rows.items():
    loops = [r[1] for r in v]
    print("%-20s loop %7.1f ms (%s) %.3fx  setup %7.1f ms  wall %.2f s" % (
        k, st.median(loops), " ".join("%.0f" % x for x in loops), st.median(loops) / p,
        st.median(r[0] for r in v), st.median(r[2] for r in v)))
PY
