#!/bin/bash
# test_kineto_oracle.sh: `opscope report --format json` on real PyTorch/Kineto traces against
# an independent checker (tests/oracle/kineto_check.py, Python standard library only): for each
# trace, every kernel name's calls and total_ns (and max/min) and the GPU busy time (union of
# kernel/memcpy/memset intervals) must be equal to the nanosecond.
# The checker is first checked itself: its self-test, and its kernel rows against the numbers
# published with the data (shared/data/README.md, oracle 1 and 2).
# Env (from CTest): OPSCOPE (the CLI), SRC (source root). Data: $SRC/../shared/data.
set -u
: "${OPSCOPE:?}" "${SRC:?}"
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "skip: no $PY"; exit 77; }
DATA=$SRC/../shared/data/kineto
[ -d "$DATA" ] || { echo "skip: no data folder $DATA"; exit 77; }
CHECK=$SRC/tests/oracle/kineto_check.py
fails=0
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
fail() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }

# --- the checker itself
if "$PY" "$CHECK" --self-test; then ok "checker self-test"; else fail "checker self-test"; fi
dgrad='void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(int, int, int, float const*, int, float const*, int, float*, kernel_grad_params, unsigned long long, int, unsigned long long, int, float, int, int, int)'
R0=$DATA/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz
R4=$DATA/tb_plugin/samples/resnet50_num_workers_4/worker0.1623212756351.pt.trace.json.gz
if "$PY" "$CHECK" --expect-kernel "$dgrad" 162 80756 "$R0"; then ok "checker: dgrad row, 0 workers"; else fail "checker: dgrad row, 0 workers"; fi
if "$PY" "$CHECK" --expect-kernel "$dgrad" 180 86855 "$R4"; then ok "checker: dgrad row, 4 workers"; else fail "checker: dgrad row, 4 workers"; fi

# --- opscope against the checker
traces=("$R0" "$R4"
	"$DATA"/hta/ns_resolution_trace/*.gz
	"$DATA"/hta/nccl_parser_config/nccl_data.json.gz
	"$DATA"/hta/amd_trace/*.gz
	"$DATA"/hta/trace_filter/sampled_rank-0.json.gz
	"$DATA"/hta/mtia_trace_single_rank/mtia_rank_0.json.gz)
for t in "${traces[@]}"; do
	name=${t#"$DATA"/}
	if [ ! -f "$t" ]; then
		fail "$name: missing"
		continue
	fi
	if "$PY" "$CHECK" --opscope "$OPSCOPE" "$t"; then ok "report == oracle: $name"; else fail "report == oracle: $name"; fi
done
# the same trace decompressed: the importer must not depend on gzip
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
gzip -dc "$R0" >"$T/r0.json"
if "$PY" "$CHECK" --opscope "$OPSCOPE" "$T/r0.json"; then ok "report == oracle: plain JSON"; else fail "report == oracle: plain JSON"; fi

echo "1..$n"
[ $fails -eq 0 ]
