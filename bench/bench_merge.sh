#!/usr/bin/env bash
# bench/bench_merge.sh: many ranks summarized one file at a time and merged (issue 20, point 5;
# docs/merge.md), against loading them all at once, in one run:
#   - synthetic jobs of N ranks (tests/tools/gen_ranks.py, STEPS steps each, rank 700 or the
#     last the straggler) for N = 128, 256, 512 and RANKS (default 1024): per-rank
#     `opscope report --format partial` (wall time of the whole loop, run one after another as
#     one array task would run them, and the peak RSS of the largest of them), `opscope merge`
#     of the N partials (wall, peak RSS), and `opscope report DIR` (wall, peak RSS), every view
#     (VIEWS=list: those); the merge must print the same bytes as the report (checked here);
#   - Holistic Trace Analysis (facebookresearch/HolisticTraceAnalysis, run with Debian's
#     pandas, as bench_ingest.sh does) on the same 8-rank and 128-rank inputs:
#     TraceAnalysis(trace_dir=...), timed inside its process (its imports left out: this
#     favours it), and its peak RSS (/usr/bin/time %M, whole process).
#
#   bench/bench_merge.sh
#   RANKS=256 STEPS=10 NO_HTA=1 bench/bench_merge.sh     # a quicker run
#
# Env: RANKS (largest job, default 1024), STEPS (default 20), OPSCOPE (a CLI to use instead of
# building build/bench, Release), HTA_SRC (a checkout or bare git dir of HTA; default: the
# fetched mirror), NO_HTA=1. Wall times are whole processes (start, read, analyse, print).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=${BUILD:-$root/build/bench}
ranks=${RANKS:-1024}
steps=${STEPS:-20}
py=/usr/bin/python3
hta_src=${HTA_SRC:-/work/.mirror/facebookresearch+HolisticTraceAnalysis/repo}
work=$(mktemp -d "${TMPDIR:-/tmp}/opscope-merge.XXXXXX")
trap 'rm -rf "$work"' EXIT

if [ -n "${OPSCOPE:-}" ]; then
	opscope=$OPSCOPE
else
	opscope=$build/opscope
	cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPSCOPE_TESTS=OFF \
		-DOPSCOPE_BENCH=ON >"$work/build.log" 2>&1 &&
		cmake --build "$build" -j "$(nproc)" --target opscope_cli >>"$work/build.log" 2>&1 ||
		{ tail -5 "$work/build.log" >&2; exit 1; }
fi
# the views: every one (as plain `report DIR` prints them), or VIEWS=list
views=${VIEWS:-}
vopt=()
[ -n "$views" ] && vopt=(--views "$views")
now() { date +%s.%N; }
secs() { $py -c "import sys; print('%.3f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$1" "$2"; }

echo "# bench_merge: $(nproc) CPUs, load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# opscope: $opscope ($(git -C "$root" rev-parse --short HEAD))"
printf "%-6s %-6s %12s %12s %14s %10s %10s %12s %10s %6s\n" ranks steps "partials s" "per rank ms" \
	"max rank KB" "merge s" "merge KB" "report s" "report KB" same
for n in 128 256 512 "$ranks"; do
	[ "$n" -le "$ranks" ] || continue
	[ -d "$work/job$n" ] && continue
	straggler=$((n > 700 ? 700 : n - 1))
	$py tests/tools/gen_ranks.py "$work/job$n" --ranks "$n" --steps "$steps" \
		--straggler "$straggler" >/dev/null
	mkdir -p "$work/p$n"
	: >"$work/rss$n"
	t0=$(now)
	for f in "$work/job$n"/*; do
		/usr/bin/time -f %M -a -o "$work/rss$n" \
			"$opscope" report --format partial -o "$work/p$n/$(basename "$f").partial" "$f"
	done
	t1=$(now)
	maxrss=$(sort -n "$work/rss$n" | tail -1)
	/usr/bin/time -f "%e %M" -o "$work/mt" "$opscope" merge "${vopt[@]}" "$work/p$n"/*.partial \
		>"$work/m$n.txt" 2>/dev/null
	/usr/bin/time -f "%e %M" -o "$work/rt" "$opscope" report "${vopt[@]}" "$work/job$n" \
		>"$work/r$n.txt"
	same=no
	cmp -s "$work/m$n.txt" "$work/r$n.txt" && same=yes
	tp=$(secs "$t0" "$t1")
	printf "%-6s %-6s %12s %12s %14s %10s %10s %12s %10s %6s\n" "$n" "$steps" "$tp" \
		"$($py -c "print('%.1f' % ($tp * 1000 / $n))")" "$maxrss" \
		$(cat "$work/mt") $(cat "$work/rt") "$same"
done

# ------------------------------------------------------------------ HTA, 8 and 128 ranks
hta=
if [ -z "${NO_HTA:-}" ]; then
	if ! $py -c 'import pandas, plotly, ijson, psutil, yaml' 2>/dev/null; then
		echo "# HTA skipped: Debian's pandas and friends are not installed (scripts/install-deps.sh --bench)"
	elif [ -d "$hta_src/hta" ]; then
		hta=$hta_src
	elif git --git-dir="$hta_src" rev-parse HEAD >/dev/null 2>&1; then
		mkdir -p "$work/hta"
		# the mirror may lack large files outside hta/ (notebooks): git then complains
		# about them after writing hta/, which is all that is needed
		git --git-dir="$hta_src" archive HEAD hta LICENSE 2>/dev/null |
			tar -x -C "$work/hta" 2>/dev/null || true
		[ -d "$work/hta/hta" ] && hta=$work/hta || echo "# HTA skipped: cannot extract it"
	else
		echo "# HTA skipped: no HTA source at $hta_src"
	fi
fi
if [ -n "$hta" ]; then
	cat >"$work/hta_load.py" <<'PY'
import logging, sys, time
from hta.configs.config import logger
logger.setLevel(logging.ERROR)
from hta.trace_analysis import TraceAnalysis
t = time.perf_counter()
a = TraceAnalysis(trace_dir=sys.argv[1])
t = time.perf_counter() - t
print("inner_s %.3f ranks %d" % (t, len(a.t.get_ranks())))
PY
	echo "# HTA $(git --git-dir="$hta_src" rev-parse --short HEAD 2>/dev/null || git -C "$hta_src" rev-parse --short HEAD) beside opscope on the same inputs"
	printf "%-6s %-34s %10s %12s\n" ranks tool "wall s" "peak KB"
	for n in 8 128; do
		d=$work/hta$n
		$py tests/tools/gen_ranks.py "$d" --ranks "$n" --steps "$steps" --straggler $((n - 1)) >/dev/null
		/usr/bin/time -f "%e %M" -o "$work/ht" env PYTHONPATH="$hta" $py "$work/hta_load.py" "$d" \
			>"$work/hta.out" 2>"$work/hta.err" || { tail -3 "$work/hta.err"; continue; }
		read -r _ inner _ nr <"$work/hta.out"
		printf "%-6s %-34s %10s %12s\n" "$n" "HTA TraceAnalysis (inner; $nr ranks)" "$inner" \
			"$(cut -d' ' -f2 "$work/ht")"
		/usr/bin/time -f "%e %M" -o "$work/rt" "$opscope" report "${vopt[@]}" "$d" >/dev/null
		printf "%-6s %-34s %10s %12s\n" "$n" "opscope report DIR" $(cat "$work/rt")
		mkdir -p "$d.p"
		t0=$(now)
		for f in "$d"/*; do
			"$opscope" report --format partial -o "$d.p/$(basename "$f").partial" "$f"
		done
		/usr/bin/time -f "%e %M" -o "$work/mt" "$opscope" merge "${vopt[@]}" "$d.p"/*.partial >/dev/null 2>&1
		t1=$(now)
		printf "%-6s %-34s %10s %12s\n" "$n" "opscope partials + merge (merge KB)" "$(secs "$t0" "$t1")" \
			"$(cut -d' ' -f2 "$work/mt")"
	done
fi
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
