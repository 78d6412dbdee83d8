#!/bin/bash
# test_ranks.sh: `opscope report DIR --views ranks` (issue 20, point 4) end to end.
#   - Synthetic ranks (tests/tools/gen_ranks.py): 4 ranks whose clocks are off by r ms, rank 2's
#     compute 20 % longer (12 ms against 10 ms) in each of 3 steps. Hand-worked: offsets
#     0, -1, -2, -3 ms; every step's straggler is rank 2, by 2 ms (the others waited 2 ms at the
#     all-reduce), for longer compute (+2 ms); the all-reduce moves 2^20 floats = 4194304
#     bytes, transfer 0.5 ms (rank 2's duration), wait = mean(2.5,2.5,0.5,2.5) - 0.5 = 1.5 ms,
#     bus bandwidth 4194304 B / 500000 ns x 2(4-1)/4 = 12.582912 GB/s (JSON: 6 digits).
#   - Real traces: HTA's trace_filter (ranks 0 and 1 of a world of 128): both ranks found,
#     a one-line note for the 126 missing ranks, rank 1 aligned by the SendRecv kernels.
#   - Bad input: duplicate ranks, a missing rank, mismatched world sizes, a rank with no
#     steps, ranks with no collective in common: one line each, exit 0, the other tables
#     still made; one rank: the view is empty (asked by name: one line says so).
# Env (from CTest): OPSCOPE (the CLI), SRC (source root). Data: $SRC/../shared/data.
set -u
: "${OPSCOPE:?}" "${SRC:?}"
. "$SRC/tests/e2e/lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "skip: no $PY"; exit 77; }
GEN=$SRC/tests/tools/gen_ranks.py
HTA=$SRC/../shared/data/kineto/hta

# q FILE EXPR: evaluate a Python expression over the JSON report (t(title) -> its rows)
q() {
	"$PY" - "$1" "$2" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
def t(title):
    for x in d["tables"]:
        if x.get("title") == title:
            return x.get("rows", [])
    return None
notes = [r["note"] for r in (t("Rank Notes") or [])]
v = eval(sys.argv[2])

sys.exit(0 if v is True else 1)
PYEOF
}

# --- synthetic straggler
"$PY" "$GEN" "$T/syn" >/dev/null
"$OPSCOPE" report --views ranks --format json "$T/syn" >"$T/syn.json" 2>"$T/syn.err"
check "synthetic: exit 0" '[ $? -eq 0 ]'
check "synthetic: ranks 0-3, hosts node-0/node-1" \
	'q "$T/syn.json" "[(r[\"rank\"], r[\"host\"]) for r in t(\"Ranks\")] == [(0,\"node-0\"),(1,\"node-0\"),(2,\"node-1\"),(3,\"node-1\")]"'
check "synthetic: clock offsets 0,-1,-2,-3 ms, aligned" \
	'q "$T/syn.json" "[(r[\"clock_offset_ns\"], r[\"aligned\"]) for r in t(\"Ranks\")] == [(0,\"ref\"),(-1000000,\"yes\"),(-2000000,\"yes\"),(-3000000,\"yes\")]"'
check "synthetic: straggler rank 2 by 2 ms, longer compute +2 ms, every step" \
	'q "$T/syn.json" "[(r[\"rank\"], r[\"margin_ns\"], r[\"why\"], r[\"compute_ns\"]) for r in t(\"Rank Steps\") if r[\"level\"] == 0] == [(2, 2000000, \"longer compute\", 2000000)] * 3"'
check "synthetic: per-rank cells (rank 2: compute 12 ms, no wait; others wait 2 ms)" \
	'q "$T/syn.json" "[(r[\"compute_ns\"], r[\"collective_wait_ns\"], r[\"data_wait_ns\"]) for r in t(\"Rank Steps\")[1:5]] == [(10000000,2000000,1000000)]*2 + [(12000000,0,1000000),(10000000,2000000,1000000)]"'
check "synthetic: collectives: bytes, RING LL, transfer, wait, spread, last, busbw" \
	'q "$T/syn.json" "all((r[\"op\"], r[\"algorithm\"], r[\"bytes\"], r[\"transfer_ns\"], r[\"wait_ns\"], r[\"arrival_spread_ns\"], r[\"last_rank\"], round(r[\"busbw_gbps\"], 4)) == (\"allreduce\", \"RING LL\", 4194304, 500000, 1500000, 2000000, 2, 12.5829) for r in t(\"Collectives Across Ranks\")) and len(t(\"Collectives Across Ranks\")) == 3"'
check "synthetic: no notes" 'q "$T/syn.json" "t(\"Rank Notes\") is None"'
"$OPSCOPE" report --views ranks "$T/syn" >"$T/syn.txt"
check "synthetic text: rank 2 starred" 'grep -q "rank 2 \*" "$T/syn.txt"'

# --- the straggler moved: rank 1, 50 % slower -> by 5 ms
"$PY" "$GEN" "$T/syn1" --straggler 1 --slow 50 >/dev/null
"$OPSCOPE" report --views ranks --format json "$T/syn1" >"$T/syn1.json"
check "straggler rank 1 by 5 ms" \
	'q "$T/syn1.json" "[(r[\"rank\"], r[\"margin_ns\"]) for r in t(\"Rank Steps\") if r[\"level\"] == 0] == [(1, 5000000)] * 3"'

# --- real multi-rank traces
if [ -d "$HTA/trace_filter" ]; then
	"$OPSCOPE" report --views ranks --format json "$HTA/trace_filter" >"$T/tf.json" 2>"$T/tf.err"
	check "trace_filter: exit 0" '[ $? -eq 0 ]'
	check "trace_filter: ranks 0 and 1, world 128, 10 collectives each, rank 1 aligned" \
		'q "$T/tf.json" "[(r[\"rank\"], r[\"world_size\"], r[\"collectives\"]) for r in t(\"Ranks\")] == [(0,128,10),(1,128,10)] and t(\"Ranks\")[1][\"aligned\"] == \"yes\""'
	check "trace_filter: one note: ranks 2-127 missing" \
		'q "$T/tf.json" "notes == [\"missing ranks: 2 of world size 128 loaded; not here: 2-127\"]"'
	check "trace_filter: 2 steps compared, 10 collectives matched, SendRecv RING SIMPLE" \
		'q "$T/tf.json" "len([r for r in t(\"Rank Steps\") if r[\"level\"] == 0]) == 2 and len(t(\"Collectives Across Ranks\")) == 10 and all(r[\"algorithm\"] == \"RING SIMPLE\" and r[\"op\"] == \"sendrecv\" for r in t(\"Collectives Across Ranks\"))"'
	# the default report on the same directory still makes the other tables
	"$OPSCOPE" report "$HTA/trace_filter" >"$T/tf.txt" 2>&1
	check "trace_filter: default report has Ranks and Kernel tables" \
		'[ $? -eq 0 ] && grep -q -- "-Ranks-" "$T/tf.txt" && grep -q -- "-Kernel Summary-" "$T/tf.txt"'
fi
if [ -f "$HTA/nccl_parser_config/nccl_data.json.gz" ]; then
	"$OPSCOPE" report --views ranks "$HTA/nccl_parser_config" >"$T/one.txt" 2>&1
	check "one rank, asked by name: one line says so" \
		'[ $? -eq 0 ] && grep -q "^Ranks: fewer than two ranks" "$T/one.txt"'
	"$OPSCOPE" report "$HTA/nccl_parser_config" >"$T/one_all.txt" 2>&1
	check "one rank, default report: no Ranks table" \
		'[ $? -eq 0 ] && ! grep -q -- "-Ranks-" "$T/one_all.txt"'
fi

# --- bad input: one line each, exit 0, the other tables made
mkdir -p "$T/dup" && cp "$T/syn"/rank*.json "$T/dup/" && cp "$T/syn/rank1.json" "$T/dup/rank1b.json"
"$OPSCOPE" report --views ranks,kernel --format json "$T/dup" >"$T/dup.json" 2>"$T/dup.err"
check "duplicate rank: exit 0, one note, kernel table made" \
	'[ $? -eq 0 ] && q "$T/dup.json" "notes == [\"duplicate rank 1: $T/dup/rank1.json and $T/dup/rank1b.json; the first is used\"] and t(\"Kernel Summary\") is not None and len(t(\"Ranks\")) == 4"'
# the second copy of rank 1 (file 2) counts once in the per-rank views and in diff too
"$OPSCOPE" report --views advice,gputime --format json "$T/dup" >"$T/dupv.json"
check "duplicate rank: advice has no finding on the copy, gputime no row of file 2" \
	'q "$T/dupv.json" "all(r[\"file\"] != \"$T/dup/rank1b.json\" for r in t(\"Advice\")) and len(t(\"Advice\")) > 0 and not any(\"(file 2)\" in r[\"device\"] for r in t(\"GPU Time Breakdown\")) and any(\"(file 3)\" in r[\"device\"] for r in t(\"GPU Time Breakdown\"))"'
"$OPSCOPE" diff --format json "$T/syn" "$T/dup" >"$T/dupd.json" 2>"$T/dupd.err"
check "duplicate rank: diff keeps the first copy, says so in one line, every row unchanged" \
	'[ $? -eq 0 ] && [ "$(cat "$T/dupd.err")" = "opscope diff: note: duplicate rank 1: $T/dup/rank1.json and $T/dup/rank1b.json; the first is used" ] && q "$T/dupd.json" "len(d[\"tables\"][0][\"rows\"]) > 0 and all(r[\"calls_a\"] == r[\"calls_b\"] and r[\"time_a_ns\"] == r[\"time_b_ns\"] for r in d[\"tables\"][0][\"rows\"])"'
mkdir -p "$T/miss" && cp "$T/syn"/rank[013].json "$T/miss/"
"$OPSCOPE" report --views ranks,kernel --format json "$T/miss" >"$T/miss.json"
check "missing rank 2: exit 0, one note, steps still compared" \
	'[ $? -eq 0 ] && q "$T/miss.json" "notes == [\"missing ranks: 3 of world size 4 loaded; not here: 2\"] and len([r for r in t(\"Rank Steps\") if r[\"level\"] == 0]) == 3 and t(\"Kernel Summary\") is not None"'
"$PY" "$GEN" "$T/ws" --ranks 2 >/dev/null && "$PY" "$GEN" "$T/ws8" --ranks 3 --world 8 >/dev/null
cp "$T/ws8/rank2.json" "$T/ws/"
"$OPSCOPE" report --views ranks --format json "$T/ws" >"$T/ws.json"
check "world sizes disagree: one line" \
	'[ $? -eq 0 ] && q "$T/ws.json" "\"world sizes disagree: rank 0 says 2, rank 2 says 8\" in notes"'
"$PY" "$GEN" "$T/nost" --no-steps-rank 3 >/dev/null
"$OPSCOPE" report --views ranks,kernel --format json "$T/nost" >"$T/nost.json"
check "a rank with no steps: one line, collectives still compared" \
	'[ $? -eq 0 ] && q "$T/nost.json" "notes == [\"rank 3 ($T/nost/rank3.json): no steps: no step to compare\"] and t(\"Rank Steps\") is None and len(t(\"Collectives Across Ranks\")) == 3"'
# no collective in common: rank 1 of the synthetic job beside HTA's rank 1 renamed rank 0
if [ -f "$HTA/trace_filter/sampled_rank-0.json.gz" ]; then
	mkdir -p "$T/noal" && cp "$HTA/trace_filter/sampled_rank-0.json.gz" "$T/noal/" && cp "$T/syn/rank1.json" "$T/noal/"
	"$OPSCOPE" report --views ranks --format json "$T/noal" >"$T/noal.json"
	check "no common collective: clocks cannot be aligned, one line" \
		'[ $? -eq 0 ] && q "$T/noal.json" "\"rank 1: no collective in common with rank 0: clocks cannot be aligned, compared as recorded\" in notes and t(\"Ranks\")[1][\"aligned\"] == \"no\""'
fi
tap_done
