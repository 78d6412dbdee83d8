#!/bin/bash
# test_merge.sh: `opscope report --format partial` and `opscope merge` (issue 20, point 5).
#   - Equality: for each input directory, a partial per file (as a Slurm array task would
#     make it), merged, gives the very bytes that `opscope report` prints for the files loaded
#     at once, for the mergeable views (files, ranks, operator, kernel, nvprof, step, gpu,
#     gputime, launch, queue, gpumem, userdefined, memcpy, python, module, perf, nvtx, device,
#     overview, model, distributed, advice, samples, flops): text and
#     CSV against `report DIR`, JSON against `report DIR/*` (its "inputs" list names the files given, so
#     the report is given the same files; with `report DIR` only "inputs" differs). Inputs:
#     the synthetic job of tests/tools/gen_ranks.py (4 ranks; also with a missing rank, a
#     duplicate rank, a rank with no steps) and the real multi-rank traces of HTA
#     (trace_filter's ranks 0 and 1; a mix of trace_diff's two traces and nccl_parser_config;
#     the synthetic rank 1 beside HTA's rank 0: clocks that cannot be aligned); for samples,
#     two recordings of tests/programs/sample_abc, the synthetic rec_samples recording and
#     three pprof profiles (gperftools, Go, profile.proto); for flops, the H200 recordings of
#     tests/data/h200 and a mix of a CPU-only trace, an A100, an MI250 and the H200 (the time
#     basis turns to device time once one file has device work; four devices' peaks).
#   - Values: the merged synthetic job still finds rank 2 the straggler by 2 ms in each of its
#     3 steps (gen_ranks.py: compute 12 ms against 10 ms; docs/ranks.md), so the equality is
#     not that of two empty reports; the bad-input notes come through one line each.
#   - Bad partials: cut short, a corrupt field, a newer version, the same partial twice, a
#     trace given as a partial, an empty file: exit 1 with one line naming the file and the
#     byte offset; no crash. A view that is not mergeable asked by name: usage error (2).
# Env (from CTest): OPSCOPE (the CLI), SRC (source root). Data: $SRC/../shared/data.
set -u
: "${OPSCOPE:?}" "${SRC:?}"
. "$SRC/tests/e2e/lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "skip: no $PY"; exit 77; }
GEN=$SRC/tests/tools/gen_ranks.py
HTA=$SRC/../shared/data/kineto/hta
V=files,ranks,operator,kernel,nvprof,step,gpu,gputime,launch,queue,gpumem,userdefined,memcpy,python,module,perf,nvtx,device,overview,model,distributed,advice,samples,flops

# parts DIR OUT: one partial per file of DIR into OUT (a loop standing in for the array)
parts() {
	mkdir -p "$2"
	for f in "$1"/*; do
		"$OPSCOPE" report --format partial -o "$2/$(basename "$f").partial" "$f" || return 1
	done
}

# same NAME DIR [VIEWS]: merge of DIR's per-file partials == report of DIR, in text, CSV and
# JSON, for VIEWS (default: every mergeable view)
same() {
	local name=$1 dir=$2 p=$T/parts_$1 V=${3:-$V}
	parts "$dir" "$p"
	check "$name: a partial per file, exit 0" '[ $? -eq 0 ]'
	# the views named, as the report is given them (a view asked for by name says when it has
	# nothing to show, and the text shows the queue's series only then, in both)
	"$OPSCOPE" merge --views $V "$p"/*.partial >"$T/$name.m.txt"
	"$OPSCOPE" report --views $V "$dir" >"$T/$name.r.txt"
	check "$name: text: merge == report DIR, byte for byte" \
		'cmp -s "$T/$name.m.txt" "$T/$name.r.txt" && [ -s "$T/$name.m.txt" ]'
	"$OPSCOPE" merge "$p"/*.partial >"$T/$name.d.txt" 2>"$T/$name.m.err"
	# without --views: every view, as plain `report DIR` prints; only the overview of files
	# with and without steps is left out, which one line says
	"$OPSCOPE" report "$dir" >"$T/$name.rd.txt"
	check "$name: plain merge == plain report DIR, or one line leaves the overview out" \
		'{ [ ! -s "$T/$name.m.err" ] && cmp -s "$T/$name.d.txt" "$T/$name.rd.txt"; } || { [ "$(wc -l <"$T/$name.m.err")" -eq 1 ] && grep -q "^opscope merge: left out overview: " "$T/$name.m.err"; }'
	"$OPSCOPE" merge -f csv -u us --views $V "$p"/*.partial >"$T/$name.m.csv"
	"$OPSCOPE" report -f csv -u us --views $V "$dir" >"$T/$name.r.csv"
	check "$name: CSV: merge == report DIR" 'cmp -s "$T/$name.m.csv" "$T/$name.r.csv"'
	"$OPSCOPE" merge -f json --views $V "$p"/*.partial >"$T/$name.m.json"
	(LC_ALL=C; "$OPSCOPE" report -f json --views $V "$dir"/*) >"$T/$name.r.json"
	check "$name: JSON: merge == report DIR/*, byte for byte" \
		'cmp -s "$T/$name.m.json" "$T/$name.r.json"'
	# the partials given in another order: the files are ordered by path all the same
	"$OPSCOPE" merge --views $V $(ls "$p"/*.partial | sort -r) >"$T/$name.rev.txt"
	check "$name: partials in reverse order: the same report" \
		'cmp -s "$T/$name.rev.txt" "$T/$name.r.txt"'
}

# q FILE EXPR: a Python expression over a JSON report (t(title) -> its rows)
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
sys.exit(0 if eval(sys.argv[2]) is True else 1)
PYEOF
}

# --- the synthetic job
"$PY" "$GEN" "$T/syn" >/dev/null
same syn "$T/syn"
check "syn: merged: straggler rank 2 by 2 ms, longer compute, in each of 3 steps" \
	'q "$T/syn.m.json" "[(r[\"rank\"], r[\"margin_ns\"], r[\"why\"]) for r in t(\"Rank Steps\") if r[\"level\"] == 0] == [(2, 2000000, \"longer compute\")] * 3"'
check "syn: merged: 4 files, 4 ranks, offsets 0,-1,-2,-3 ms" \
	'q "$T/syn.m.json" "len(t(\"Trace Files\")) == 4 and [r[\"clock_offset_ns\"] for r in t(\"Ranks\")] == [0,-1000000,-2000000,-3000000]"'
check "syn: merged: aten::mm, 12 calls (4 ranks x 3 steps), over the partials" \
	'q "$T/syn.m.json" "[r[\"calls\"] for r in t(\"Operator Summary\") if r[\"name\"] == \"aten::mm\"] == [12]"'
# gen_ranks.py's step: DATA 1000 + 10 us to the kernels, the straggler's compute 12000 us
# (10000 + 20 %), the all-reduce's 500 us after it and 50 us to the step's end: 13560 us on
# every rank (the others wait in the all-reduce); 2 GPU events (the GEMM, the all-reduce)
check "syn: merged: a Step Summary per file, 3 steps of 13.56 ms and 2 GPU events each" \
	'q "$T/syn.m.json" "[[(r[\"total_ns\"], r[\"gpu_events\"]) for r in x[\"rows\"]] for x in d[\"tables\"] if x[\"view\"] == \"step\"] == [[(13560000, 2)] * 4] * 4"'
# GPU time per step: compute is the GEMM (10000 us; the straggler's 12000 us), communication
# the all-reduce from the rank's arrival to 500 us after the straggler's (2500 us; 500 us)
check "syn: merged: GPU Time Breakdown per step, compute and communication by rank" \
	'q "$T/syn.m.json" "[(r[\"device\"], r[\"compute_ns\"], r[\"communication_ns\"]) for x in d[\"tables\"] if x[\"view\"] == \"gputime\" for r in x[\"rows\"] if r[\"step\"] == \"ProfilerStep#1\"] == [(\"GPU0 (file %d)\" % f, 12000000 if f == 2 else 10000000, 500000 if f == 2 else 2500000) for f in range(4)]"'
# GPU utilization per step: kernel busy = the GEMM then the all-reduce, back to back: 10000 +
# 2500 us, the straggler's 12000 + 500 us: 12.5 ms on every rank, 2 kernels
check "syn: merged: GPU Utilization per step, 12.5 ms kernel busy and 2 kernels each" \
	'q "$T/syn.m.json" "[(r[\"device\"], r[\"kernel_busy_ns\"], r[\"kernels\"]) for x in d[\"tables\"] if x[\"title\"] == \"GPU Utilization\" for r in x[\"rows\"] if r[\"step\"] == \"ProfilerStep#1\"] == [(\"GPU0 (file %d)\" % f, 12500000, 2) for f in range(4)]"'
# launches, over the 4 ranks' partials: 12 of each kernel (4 ranks x 3 steps), calls of 5 us;
# the GEMM starts 4 us after its call ends (1010 - 1006), the all-reduce at the rank's arrival,
# 10000 + 1010 - 1018 = 9992 us after (the straggler's 11992): mean (9 x 9992 + 3 x 11992) / 12
# = 10492 us, all 12 over HTA's 100 us cutoff; All: (125904 + 48) / 24 = 5248 us
check "syn: merged: Kernel Launch Statistics summed over the ranks, delays by hand" \
	'q "$T/syn.m.json" "[(r[\"name\"][:10], r[\"count\"], r[\"launch_avg_ns\"], r[\"delay_avg_ns\"], r[\"delay_max_ns\"], r[\"delay_outliers\"]) for x in d[\"tables\"] if x[\"view\"] == \"launch\" for r in x[\"rows\"]] == [(\"ncclKernel\", 12, 5000, 10492000, 11992000, 12), (\"volta_sgem\", 12, 5000, 4000, 4000, 0), (\"All\", 24, 5000, 5248000, 11992000, 12)]"'
# the queue per stream, 3 ops each: the GEMM waits 1010 - 1001 = 9 us from its call's start,
# 3 x 9000 = 27000 op-ns; the all-reduce from the call at 1013 to the rank's arrival at
# 1010 + 10000: 9997 us (the straggler's 11997 us), 3 x: 29991000 (35991000) op-ns
check "syn: merged: Queue Length per stream, integrals by hand" \
	'q "$T/syn.m.json" "[(r[\"device\"], r[\"stream\"], r[\"max\"], r[\"queued_ns\"], r[\"ops\"]) for r in t(\"Queue Length\")] == [(\"GPU0 (file %d)\" % f, \"stream %d\" % s, 1, (27000 if s == 7 else 35991000 if f == 2 else 29991000), 3) for f in range(4) for s in (7, 20)]"'
# partials of older versions are still read; the views they do not carry are left out and
# named on stderr. Version 2 added sv, sr (step), 3 gv, gt, gs (gputime), 4 uv, ut, us, ub
# (gpu), 5 lv, lr (launch), 6 qv, qt, qb (queue), 7 mv, md, ml, mb (gpumem), 8 tv, ti, h
# (userdefined, memcpy, python), 9 mm, mo (module), 10 pv, pt (perf), 11 nxv, nxr, nxd (nvtx),
# the union views' records, ad* (advice), sa* (samples) and fl* (flops): version k is the partial without the records of the later ones.
u="nxv|nxr|nxd|dv|dvc|dvg|di|dih|dig|dic|ov|ovb|ovt|ovi|ovu|ph|phc|ad|adw|adf|adg|ads|adp|ade|adk|sa|saf|sae|fl|flc|flp|flr|flg"
m="mv|md|ml|mb|tv|ti|h|mm|mo|pv|pt|$u"
newer=("sv|sr|gv|gt|gs|uv|ut|us|ub|lv|lr|qv|qt|qb|$m" "gv|gt|gs|uv|ut|us|ub|lv|lr|qv|qt|qb|$m"
	"uv|ut|us|ub|lv|lr|qv|qt|qb|$m" "lv|lr|qv|qt|qb|$m" "qv|qt|qb|$m" "$m" "tv|ti|h|mm|mo|pv|pt|$u"
	"mm|mo|pv|pt|$u" "pv|pt|$u" "$u")
carried=("" ",step" ",step,gputime" ",step,gpu,gputime" ",step,gpu,gputime,launch"
	",step,gpu,gputime,launch,queue" ",step,gpu,gputime,launch,queue,gpumem"
	",step,gpu,gputime,launch,queue,gpumem,userdefined,memcpy,python"
	",step,gpu,gputime,launch,queue,gpumem,userdefined,memcpy,python,module"
	",step,gpu,gputime,launch,queue,gpumem,userdefined,memcpy,python,module,perf")
for k in 1 2 3 4 5 6 7 8 9 10; do
	mkdir -p "$T/v$k"
	for f in "$T/parts_syn"/*.partial; do
		grep -Ev "^(${newer[k - 1]})(	|$)" "$f" | sed "1s/\t11$/\t$k/" >"$T/v$k/$(basename "$f")"
	done
	vk="files,ranks,operator,kernel,nvprof${carried[k - 1]}"
	"$OPSCOPE" report --views "$vk" "$T/syn" >"$T/v$k.r.txt"
	"$OPSCOPE" merge --views "$vk" "$T/v$k"/*.partial >"$T/v$k.txt"
	"$OPSCOPE" merge "$T/v$k"/*.partial >/dev/null 2>"$T/v$k.err"
	check "v$k partials: merged without the views they do not carry, which stderr names" \
		'[ $? -eq 0 ] && cmp -s "$T/v$k.txt" "$T/v$k.r.txt" && grep -q "^opscope merge: left out advice,device,overview,model,distributed,.*: a partial of an older format version does not carry it" "$T/v$k.err" && { [ $k -eq 10 ] || grep -q "perf," "$T/v$k.err"; } && grep -q ",samples,flops" "$T/v$k.err"'
done
check "v10: the left-out line names nvtx, not perf; v9 both" \
	'grep -q ",nvtx," "$T/v10.err" && ! grep -q ",perf," "$T/v10.err" && grep -q ",nvtx,perf," "$T/v9.err"'
check "v1, v3, v5: the left-out line names step, gpu, gputime, launch for v1, gpu for v3" \
	'grep -q "step,perf,gpu,gputime,launch,queue" "$T/v1.err" && grep -q ",perf,gpu,launch,queue," "$T/v3.err" && grep -q ",perf,queue," "$T/v5.err"'
"$OPSCOPE" merge --views flops "$T/v10"/*.partial >"$T/v10f.txt" 2>"$T/v10f.err"
check "v10 partials: --views flops: exit 1, one line" \
	'[ $? -eq 1 ] && [ "$(wc -l <"$T/v10f.err")" -eq 1 ] && grep -q "the flops view: a partial of an older format version does not carry it" "$T/v10f.err"'
"$OPSCOPE" merge --views step "$T/v1"/*.partial >"$T/v1s.txt" 2>"$T/v1s.err"
check "v1 partials: --views step: exit 1, one line" \
	'[ $? -eq 1 ] && [ "$(wc -l <"$T/v1s.err")" -eq 1 ] && grep -q "the step view: a partial of an older format version does not carry it" "$T/v1s.err" && [ ! -s "$T/v1s.txt" ]'
# a directory of partials: every *.partial in it (more partials than a command line holds)
"$OPSCOPE" merge --views $V "$T/parts_syn" >"$T/syn_dir.txt"
check "syn: merge DIR of partials: the same report" 'cmp -s "$T/syn_dir.txt" "$T/syn.r.txt"'
mkdir -p "$T/noparts"
"$OPSCOPE" merge "$T/noparts" >/dev/null 2>"$T/noparts.err"
check "merge of a directory without partials: exit 1, one line" \
	'[ $? -eq 1 ] && [ "$(cat "$T/noparts.err")" = "opscope: $T/noparts: no .partial files in this directory" ]'
# one partial of the whole directory merges to the same report
"$OPSCOPE" report --format partial -o "$T/syn_all.partial" "$T/syn"
"$OPSCOPE" merge --views $V "$T/syn_all.partial" >"$T/syn_all.txt"
check "syn: one partial of the directory: the same report" 'cmp -s "$T/syn_all.txt" "$T/syn.r.txt"'
"$OPSCOPE" merge --views ranks --format json "$T/parts_syn"/*.partial >"$T/syn_ranks.json" 2>"$T/syn_ranks.err"
check "syn: --views ranks: files and ranks tables only, no left-out line" \
	'q "$T/syn_ranks.json" "sorted(set(x[\"view\"] for x in d[\"tables\"])) == [\"files\", \"ranks\"]" && [ ! -s "$T/syn_ranks.err" ]'

# --- Python functions and memory manipulation ranges (no real trace here has them): the
# synthetic job with, around each aten::mm, a python_function "model.py(7): forward" of
# 20 + rank us holding a user_annotation "copy_memcpy_helper" of 10 us, inside module calls
# "nn.Module: Net" (23 + rank us) > "nn.Module: Linear" (21 + rank us); each ProfilerStep
# carries num_samples 32 + rank
cp -r "$T/syn" "$T/py"
"$PY" - "$T/py" <<'PYEOF'
import glob, json, sys
for r, p in enumerate(sorted(glob.glob(sys.argv[1] + "/rank*.json"))):
    d = json.load(open(p))
    ev = d["traceEvents"]
    for st in [e for e in ev if e.get("name", "").startswith("ProfilerStep#")]:
        st.setdefault("args", {})["num_samples"] = 32 + r
    for mm in [e for e in ev if e.get("name") == "aten::mm"]:
        at = {"ph": "X", "pid": mm["pid"], "tid": mm["tid"]}
        ev.append(dict(at, cat="python_function", name="nn.Module: Net", ts=mm["ts"] - 3, dur=23 + r))
        ev.append(dict(at, cat="python_function", name="nn.Module: Linear", ts=mm["ts"] - 2.5, dur=21 + r))
        ev.append(dict(at, cat="python_function", name="model.py(7): forward", ts=mm["ts"] - 2, dur=20 + r))
        ev.append(dict(at, cat="user_annotation", name="copy_memcpy_helper", ts=mm["ts"] - 1, dur=10))
    json.dump(d, open(p, "w"))
PYEOF
same py "$T/py"
# 4 ranks x 3 steps = 12 calls each; CPU 3 x (20 + 21 + 22 + 23) = 258 us, and 12 x 10 us
check "py: merged: Python functions and memory ranges summed over the ranks, by hand" \
	'q "$T/py.m.json" "[(r[\"calls\"], r[\"cpu_total_ns\"]) for r in t(\"PythonFunction Summary\")] == [(12, 258000)] and [(r[\"calls\"], r[\"cpu_total_ns\"]) for r in t(\"Memory Manipulation Summary\")] == [(12, 120000)]"'
# perf: every step 13.56 ms with a 1 ms DataLoader; ips = (3 x (32 + 33 + 34 + 35)) samples /
# (12 x 0.01356 s) = 2470.5, the steps' best 35 / 0.01356 = 2581.12, worst 32 / 0.01356 = 2359.88
check "py: merged: Perf Summary over the ranks' steps, by hand" \
	'q "$T/py.m.json" "[(r[\"name\"], r[\"avg\"], r[\"max\"], r[\"min\"]) for r in t(\"Perf Summary\")] == [(\"reader_cost\", 0.001, 0.001, 0.001), (\"batch_cost\", 0.01356, 0.01356, 0.01356), (\"ips\", 2470.5, 2581.12, 2359.88)]"'
# modules: Net 3 x (23 + 24 + 25 + 26) = 294 us, Linear 3 x (21 + ... + 24) = 270 us under it;
# Net's self 294 - 270 = 24 us
check "py: merged: Module Summary, Net > Linear, self by hand" \
	'q "$T/py.m.json" "[(r[\"name\"], r[\"calls\"], r[\"cpu_total_ns\"], r[\"self_cpu_ns\"]) for r in t(\"Module Summary\")] == [(\"Net\", 12, 294000, 24000), (\"Linear\", 12, 270000, 270000)]"'

# --- bad ranks: a note each, the rest made; merged the same as loaded
mkdir -p "$T/miss" && cp "$T/syn"/rank[013].json "$T/miss/"
same miss "$T/miss"
check "miss: one line: rank 2 missing" \
	'q "$T/miss.m.json" "notes == [\"missing ranks: 3 of world size 4 loaded; not here: 2\"]"'
mkdir -p "$T/dup" && cp "$T/syn"/rank*.json "$T/dup/" && cp "$T/syn/rank1.json" "$T/dup/rank1b.json"
same dup "$T/dup"
check "dup: one line: duplicate rank 1, the first used" \
	'q "$T/dup.m.json" "notes == [\"duplicate rank 1: $T/dup/rank1.json and $T/dup/rank1b.json; the first is used\"]"'
"$PY" "$GEN" "$T/nost" --no-steps-rank 3 >/dev/null
# a file without steps beside files with: the overview is not made (its ranges were tested
# against its own span), the rest is
same nost "$T/nost" "${V/,overview/}"
"$OPSCOPE" merge --views overview "$T/parts_nost"/*.partial >"$T/nost_ov.txt" 2>"$T/nost_ov.err"
check "nost: --views overview: exit 1, one line: some files have ProfileStep ranges, some none" \
	'[ $? -eq 1 ] && [ "$(wc -l <"$T/nost_ov.err")" -eq 1 ] && grep -q "the overview view: some files have ProfileStep ranges and some have none" "$T/nost_ov.err" && [ ! -s "$T/nost_ov.txt" ]'
check "nost: one line: rank 3 has no steps; collectives still compared" \
	'q "$T/nost.m.json" "notes == [\"rank 3 ($T/nost/rank3.json): no steps: no step to compare\"] and len(t(\"Collectives Across Ranks\")) == 3"'

# --- the views of unions across files (device, overview, model, distributed) where the files'
# times overlap: every file without steps (the synthetic job's ProfilerStep ranges taken out),
# and rank 0 again 20 ms later; the recorder's own traces, whose metadata holds the CPU
# utilization per process
mkdir -p "$T/nsteps"
"$PY" - "$T/syn" "$T/nsteps" <<'PYEOF'
import glob, json, sys
for i, p in enumerate(sorted(glob.glob(sys.argv[1] + "/rank*.json"))):
    d = json.load(open(p))
    d["traceEvents"] = [e for e in d["traceEvents"] if not e.get("name", "").startswith("ProfilerStep")]
    json.dump(d, open("%s/r%d.json" % (sys.argv[2], i), "w"))
    if i == 0:
        for e in d["traceEvents"]:
            if isinstance(e.get("ts"), (int, float)):
                e["ts"] += 20000
        json.dump(d, open("%s/r0shift.json" % sys.argv[2], "w"))
PYEOF
same nsteps "$T/nsteps"
mkdir -p "$T/cpu" && cp "$SRC/tests/fuzz-corpus/trace/recorded-v2" "$T/cpu/a.opscope" &&
	cp "$SRC/tests/fuzz-corpus/trace/recorded-v2-zstd" "$T/cpu/b.opscope"
same cpu "$T/cpu"
check "cpu: merged: CPU rows of both recordings' processes, labelled with their pids" \
	'q "$T/cpu.m.json" "[r[\"device\"][:12] for r in t(\"Device Summary\")] == [\"CPU(Process)\"] * 2 + [\"CPU(System) \"] * 2"'

# --- real multi-rank traces
if [ -d "$HTA/trace_filter" ]; then
	same tf "$HTA/trace_filter"
	# one trace twice under two names, and again shifted by 40 % of its first step (243 ms):
	# the unions across files count what overlaps once
	mkdir -p "$T/twice" "$T/shift"
	cp "$HTA/trace_filter/sampled_rank-0.json.gz" "$T/twice/a.json.gz"
	cp "$HTA/trace_filter/sampled_rank-0.json.gz" "$T/twice/b.json.gz"
	same twice "$T/twice"
	"$PY" - "$HTA/trace_filter/sampled_rank-0.json.gz" "$T/shift" <<'PYEOF'
import gzip, json, sys
d = json.load(gzip.open(sys.argv[1]))
json.dump(d, open(sys.argv[2] + "/a.json", "w"))
step = [e for e in d["traceEvents"] if e.get("name", "").startswith("ProfilerStep")][0]
for e in d["traceEvents"]:
    if isinstance(e.get("ts"), (int, float)):
        e["ts"] += step["dur"] * 0.4
json.dump(d, open(sys.argv[2] + "/b.json", "w"))
PYEOF
	same shift "$T/shift"
	# the same trace twice: each union is the one file's, so the merged communication,
	# computation and overlap, the overview's times and distinct Communication ranges, and
	# the phases' CPU times are those of one copy; ranges counted per file (Kernel calls,
	# ProfileStep and phase calls) twice theirs (the 2,308 Kernel calls: 2 x 1,154)
	"$OPSCOPE" report -f json --views overview,model,distributed "$T/twice/a.json.gz" >"$T/one.json"
	"$PY" - "$T/one.json" "$T/twice.m.json" <<'PYEOF' >"$T/twice.cmp"
import json, sys
one, two = (json.load(open(p)) for p in sys.argv[1:3])
def rows(d, title):
    return [x for x in d["tables"] if x["title"] == title][0]["rows"]
ok = rows(one, "Distribution Summary") == rows(two, "Distribution Summary")
o1 = {(r["type"], r["section"]): r for r in rows(one, "Overview Summary")}
o2 = {(r["type"], r["section"]): r for r in rows(two, "Overview Summary")}
ok = ok and o1.keys() == o2.keys() and all(o1[k]["time_ns"] == o2[k]["time_ns"] for k in o1)
ok = ok and o2["Communication", "gpu"]["calls"] == o1["Communication", "gpu"]["calls"]
ok = ok and o2["Kernel", "gpu"]["calls"] == 2 * o1["Kernel", "gpu"]["calls"] > 0
m1 = {r["name"]: r for r in rows(one, "Model Summary")}
m2 = {r["name"]: r for r in rows(two, "Model Summary")}
ok = ok and all(m1[k]["cpu_total_ns"] == m2[k]["cpu_total_ns"] for k in m1)
ok = ok and all(m2[k]["calls"] == 2 * m1[k]["calls"] for k in m1 if k != "Others")
print("same" if ok else "differ")
PYEOF
	check "twice: merged: unions of the one trace, counts per file doubled" \
		'[ "$(cat "$T/twice.cmp")" = same ]'
	check "tf: merged: ranks 0 and 1, 10 collectives matched, 126 ranks missing" \
		'q "$T/tf.m.json" "[r[\"rank\"] for r in t(\"Ranks\")] == [0, 1] and len(t(\"Collectives Across Ranks\")) == 10 and notes == [\"missing ranks: 2 of world size 128 loaded; not here: 2-127\"]"'
	# the operator table's options: no detail rows, another order, the top rows
	"$OPSCOPE" merge --no-op-detail --sort CPUAvg -n 5 --views operator "$T/parts_tf"/*.partial >"$T/tf.op.m" 2>/dev/null
	"$OPSCOPE" report --no-op-detail --sort CPUAvg -n 5 --views operator "$HTA/trace_filter" >"$T/tf.op.r"
	check "tf: --no-op-detail --sort CPUAvg -n 5: merge == report" \
		'cmp -s "$T/tf.op.m" "$T/tf.op.r" && grep -q -- "-Operator Summary-" "$T/tf.op.m"'
	mkdir -p "$T/mix"
	cp "$HTA/trace_diff/control/control.json.gz" "$HTA/trace_diff/test/test.json.gz" \
		"$HTA/nccl_parser_config/nccl_data.json.gz" "$T/mix/"
	same mix "$T/mix"
	# GPU memory records: HTA's df_index_resolver (28k [memory] events) and the TensorBoard
	# plugin's two resnet50 traces of one worker
	TB=$SRC/../shared/data/kineto/tb_plugin/samples/resnet50_num_workers_0
	mkdir -p "$T/mem" && cp "$HTA/df_index_resolver/df_index_resolver.json.gz" "$TB"/*.json.gz "$T/mem/"
	same mem "$T/mem"
	check "mem: merged: GPU Memory rows of every file, largest allocations listed" \
		'q "$T/mem.m.json" "len(set(r[\"device\"].split(\"(\")[1] for r in t(\"GPU Memory\"))) == 3 and len(t(\"GPU Memory: Largest Allocations\")) > 0"'
	mkdir -p "$T/noal" && cp "$HTA/trace_filter/sampled_rank-0.json.gz" "$T/noal/" && cp "$T/syn/rank1.json" "$T/noal/"
	same noal "$T/noal"
	check "noal: one line: clocks cannot be aligned" \
		'q "$T/noal.m.json" "\"rank 1: no collective in common with rank 0: clocks cannot be aligned, compared as recorded\" in notes"'
fi

# --- NVTX ranges (medians and deviations, so the partials carry each name's durations):
# two small traces by hand with equal durations (runs of them) in both, and the Nsight
# Systems exports (profile1 and profile16 share their range names; con_kernel has none)
mkdir -p "$T/nvtx"
"$PY" - "$T/nvtx" <<'PYEOF'
import json, sys
def trace(path, evs):
    json.dump({"traceEvents": [dict(ph="X", cat="Nvtx", name=n, pid=1, tid=1, ts=ts, dur=d,
                                    **({"args": {"domain": dom}} if dom else {}))
                               for n, ts, d, dom in evs]}, open(path, "w"))
trace(sys.argv[1] + "/r0.json", [("step", 0, 5, None), ("step", 10, 5, None),
                                 ("step", 20, 7, None), ("load", 30, 3, "io")])
trace(sys.argv[1] + "/r1.json", [("load", 0, 3, "io"), ("step", 10, 5, None),
                                 ("step", 20, 9, None)])
PYEOF
NS=$SRC/../shared/data/nsys
[ -d "$NS" ] && cp "$NS/concurrent_example/concurrent.s1/profile1.sqlite.gz" \
	"$NS/concurrent_example/concurrent.s16/profile16.sqlite.gz" "$NS/nsys_db/con_kernel.sqlite.gz" "$T/nvtx/"
same nvtx "$T/nvtx"
# step: 5, 5, 7 us and 5, 9 us: total 31 us, median 5 us; mean 6.2 us, squares 3 x 1.44 +
# 0.64 + 7.84 = 12.8, / 4 = 3.2 us^2: deviation 1.78885 us = 1789 ns. io:load: 3 us twice
check "nvtx: merged: durations of both files pooled, medians and deviations by hand" \
	'q "$T/nvtx.m.json" "[(r[\"range\"], r[\"instances\"], r[\"total_ns\"], r[\"med_ns\"], r[\"stddev_ns\"]) for r in t(\"NVTX Range Summary\") if r[\"range\"] in (\"step\", \"io:load\")] == [(\"step\", 5, 31000, 5000, 1789), (\"io:load\", 2, 6000, 3000, 0)]"'
check "nvtx: the hand-made partial holds the run of two 5 us steps as one record" \
	'grep -q "^nxd	5000	2$" "$T/parts_nvtx/r0.json.partial"'
# --- advice: the rules fire on the merged partials as on the report (the equality above
# holds for every input; these say it is not that of empty tables). adv LIST FILE: the
# merged advice's (rule, file's name) pairs, "rule@" for the whole model, in rank order.
adv() {
	"$PY" -c 'import json, sys
rows = [r for t in json.load(open(sys.argv[1]))["tables"] if t["view"] == "advice" for r in t["rows"]]
print(" ".join(r["rule"] + "@" + (r["file"] or "").split("/")[-1] for r in rows))' "$1"
}
check "advice: syn: straggler rank2.json, from the merged rank analysis" \
	'adv "$T/syn.m.json" | grep -q "straggler@rank2.json" && [ "$(adv "$T/syn.m.json" | tr " " "\n" | grep -c "^input_bound@")" -eq 4 ]'
# v10 partials (no ad* records): advice is named on stderr, and asked for it is refused
"$OPSCOPE" merge --views advice "$T/v10"/*.partial >"$T/v10a.txt" 2>"$T/v10a.err"
check "v10 partials: --views advice: exit 1, one line" \
	'[ $? -eq 1 ] && [ "$(wc -l <"$T/v10a.err")" -eq 1 ] && grep -q "the advice view: a partial of an older format version does not carry it" "$T/v10a.err" && [ ! -s "$T/v10a.txt" ]'
"$OPSCOPE" report --format partial --peak "H100 SXM" "$T/syn" >/dev/null 2>"$T/peak.err"
check "report --format partial --peak: usage error (the partial uses the table's peaks)" \
	'[ $? -eq 2 ] && grep -q -- "--peak does not go into a partial" "$T/peak.err"'
if [ -d "$HTA/trace_filter" ]; then
	# tf (above): gpu_idle and exposed_comm on both ranks; mem: tensor cores pooled over the
	# two ResNet-50 traces (no file), tiny kernels, input-bound, the total time of the three
	check "advice: tf: gpu_idle and exposed_comm on both ranks" \
		'[ "$(adv "$T/tf.m.json" | tr " " "\n" | grep -c "^gpu_idle@sampled_rank-\|^exposed_comm@sampled_rank-")" -eq 4 ]'
	check "advice: mem: tensor_cores over every file, input_bound on the ResNet-50 traces" \
		'adv "$T/mem.m.json" | grep -q "^tensor_cores@ " && [ "$(adv "$T/mem.m.json" | tr " " "\n" | grep -c "^input_bound@worker0")" -eq 2 ]'
	# HTA's NCCL trace beside a synthetic rank 1 (clocks not aligned: no straggler): gpu_idle,
	# exposed_comm, first_step_slow, tiny_kernels; ResNet-50 alone: pageable copies (1.1% of
	# its total time; in a directory of several its share of their total is under 1%)
	mkdir -p "$T/nq" "$T/r0"
	cp "$HTA/negative_queue_length_values_check/rank0.json.gz" "$T/syn/rank1.json" "$T/nq/"
	cp "$TB/worker0.1623143089861.pt.trace.json.gz" "$T/r0/"
	same nq "$T/nq"
	same r0 "$T/r0"
	check "advice: nq: gpu_idle, exposed_comm, first_step_slow, tiny_kernels on HTA's rank 0" \
		'[ "$(adv "$T/nq.m.json" | tr " " "\n" | grep -c "^\(gpu_idle\|exposed_comm\|first_step_slow\|tiny_kernels\)@rank0.json.gz")" -eq 4 ]'
	check "advice: r0: pageable_copy and tensor_cores" \
		'adv "$T/r0.m.json" | grep -q "pageable_copy@worker0" && adv "$T/r0.m.json" | grep -q "tensor_cores@"'
fi
# the H200 recordings (our own format and its Kineto export): tiny kernels, tensor-core rows
H200=$SRC/tests/data/h200
if [ -f "$H200/train.opscope" ]; then
	mkdir -p "$T/h200" && cp "$H200/train.opscope" "$H200/cuda.opscope" "$H200/train_kineto.json.gz" "$T/h200/"
	same h200 "$T/h200"
	check "advice: h200: tiny_kernels on the recording and its Kineto export" \
		'adv "$T/h200.m.json" | grep -q "tiny_kernels@train.opscope" && adv "$T/h200.m.json" | grep -q "tiny_kernels@train_kineto.json.gz"'
fi
# a duplicate rank: the second copy gets no finding, in the merge as in the report
mkdir -p "$T/dupa" && cp "$T/syn/rank0.json" "$T/syn/rank1.json" "$T/dupa/" && cp "$T/syn/rank1.json" "$T/dupa/rank9.json"
same dupa "$T/dupa"
check "advice: dupa: no finding on the second copy of rank 1" \
	'! adv "$T/dupa.m.json" | grep -q "@rank9.json" && adv "$T/dupa.m.json" | grep -q "@rank1.json"'

# --- stack samples: pprof profiles of three kinds and the synthetic recording of rec_samples;
# two live recordings of sample_abc (their counts vary from run to run: equality only)
PP=$SRC/../shared/data/pprof
if [ -d "$PP" ] && [ -x "$PROGRAMS/prog_rec_samples" ]; then
	mkdir -p "$T/smp"
	cp "$PP/profile/testdata/cppbench.cpu" "$PP/profile/testdata/go.crc32.cpu" \
		"$PP/internal/report/testdata/sample.cpu" "$T/smp/"
	"$PROGRAMS/prog_rec_samples" "$T/smp/rec.opscope" >/dev/null 2>&1
	same smp "$T/smp"
	# the files' own totals (each report alone): weights 7.12e9 ns (52 samples), 2.11e9
	# (69), 1.76e9 (76) and 206 x 1 (206 samples, 2 truncated): 10990000206, 403, 2
	check "smp: merged: the samples' totals are the files' summed" \
		'q "$T/smp.m.json" "[x[\"totals\"] for x in d[\"tables\"] if x[\"title\"] == \"Samples: Top Functions\"] == [{\"weight\": 10990000206, \"samples\": 403, \"truncated\": 2, \"no_stack\": 0}]"'
fi
if [ -x "$PROGRAMS/prog_sample_abc" ]; then
	mkdir -p "$T/abc"
	for i in 1 2; do
		OPSCOPE_QUIET=1 "$OPSCOPE" record -q -f -o "$T/abc/abc$i.opscope" --sample=499 -- \
			"$PROGRAMS/prog_sample_abc" abc 300 >/dev/null 2>&1
	done
	check "abc: both recordings made" '[ -s "$T/abc/abc1.opscope" ] && [ -s "$T/abc/abc2.opscope" ]'
	same abc "$T/abc"
fi

# --- negative sample weights (pprof -diff_base writes them; the report prints them): three
# hand-made profile.proto files, main -> foo and main -> bar with the weights given; bar sums
# to 3 - 3 - 3 = -3 over the files
mkdir -p "$T/neg"
for spec in a:5,3 b:2,-3 c:5,-3; do
	"$PY" - "$T/neg/${spec%%:*}.pb" "${spec#*:}" <<'PYEOF'
import sys
def varint(n):
    n &= (1 << 64) - 1
    out = b""
    while True:
        b, n = n & 0x7F, n >> 7
        if not n:
            return out + bytes([b])
        out += bytes([b | 0x80])
def ld(f, b): return varint(f << 3 | 2) + varint(len(b)) + b
def vi(f, n): return varint(f << 3) + varint(n)
def packed(f, vals): return ld(f, b"".join(varint(v) for v in vals))
strings = ["", "samples", "count", "main", "foo", "bar"]
foo, bar = (int(x) for x in sys.argv[2].split(","))
p = ld(1, vi(1, 1) + vi(2, 2))                        # sample type: samples/count
p += ld(2, packed(1, [2, 1]) + packed(2, [foo]))      # main -> foo
p += ld(2, packed(1, [3, 1]) + packed(2, [bar]))      # main -> bar
for loc, fn in ((1, 1), (2, 2), (3, 3)):
    p += ld(4, vi(1, loc) + ld(4, vi(1, fn)))         # location -> line -> function
for fn, name in ((1, 3), (2, 4), (3, 5)):
    p += ld(5, vi(1, fn) + vi(2, name))
for s in strings:
    p += ld(6, s.encode())
open(sys.argv[1], "wb").write(p)
PYEOF
done
same neg "$T/neg"
check "neg: merged: bar's weights summed over the files, negative: -3; foo 12" \
	'q "$T/neg.m.json" "sorted((r[\"name\"], r[\"flat\"]) for r in t(\"Samples: Top Functions\")) == [(\"bar\", -3), (\"foo\", 12), (\"main\", 0)]"'

# --- FLOPs: a mix of a CPU-only trace, an A100, an MI250 and the H200 recording (the H200
# recordings alone: the h200 input above)
H2=$SRC/tests/data/h200
if [ -d "$HTA/rank_non_gpu" ]; then
	mkdir -p "$T/fmix"
	cp "$HTA/rank_non_gpu/rank_non_gpu.json.gz" "$HTA/trace_diff/control/control.json.gz" \
		"$HTA/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz" "$H2/train.opscope" "$T/fmix/"
	# (not the overview: rank_non_gpu has no ProfileStep ranges and the others have; merge
	# leaves it out in one line, checked by same)
	same fmix "$T/fmix" "${V/,overview/}"
	# rank_non_gpu and control were traced by processes of one pid (3113936): each file keeps
	# its own metadata, so rank 0 has no world size (its trace gives none) and rank 3 has 8
	check "fmix: each file's metadata its own: rank 0 no world size, rank 3 of 8" \
		'q "$T/fmix.m.json" "[(r[\"rank\"], r[\"world_size\"]) for r in t(\"Ranks\")] == [(0, None), (3, 8)]"'
	# the time basis is device time once one file has device work: the CPU-only file counts
	# its calls' device time (0), so the total is the GPU files' own totals (each report
	# alone): 493925000 (A100) + 149042 (MI250) + 1834922 (H200) = 495908964 ns; each device
	# with peaks once in the ceilings (the MI250 is not in the table)
	check "fmix: merged: device-time basis over the files, each device's ceilings once" \
		'q "$T/fmix.m.json" "[x[\"totals\"][\"operator_time_ns\"] for x in d[\"tables\"] if x[\"title\"] == \"FLOPs by Category\"] == [495908964] and [r[\"device\"] for r in t(\"Roofline Ceilings\")] == [\"NVIDIA A100 SXM4 40GB\", \"NVIDIA H200 SXM 141GB\"]"'
fi

# --- bad partials: one line naming the file and the offset, exit 1
P=$T/parts_syn/rank0.json.partial
bad() { # NAME PATTERN PARTIAL...
	local name=$1 pat=$2
	shift 2
	"$OPSCOPE" merge "$@" >"$T/bad.out" 2>"$T/bad.err"
	check "bad: $name: exit 1, one line: $pat" \
		'[ $? -eq 1 ] && [ "$(wc -l <"$T/bad.err")" -eq 1 ] && grep -q -- "$pat" "$T/bad.err" && [ ! -s "$T/bad.out" ]'
}
size=$(stat -c %s "$P")
head -c $((size - 3)) "$P" >"$T/cut.partial"
bad "cut inside the end record" "cut.partial: offset [0-9]*: truncated" "$T/cut.partial"
grep -v "^end" "$P" >"$T/noend.partial"
bad "no end record" "noend.partial: offset $((size - $(tail -n 1 "$P" | wc -c))): truncated: no end record" "$T/noend.partial"
sed '3s/\t[0-9]*\t/\tx1\t/' "$P" >"$T/corrupt.partial"
off=$(head -n 2 "$P" | wc -c)
bad "a corrupt count" "corrupt.partial: offset $off: field 4: not a count" "$T/corrupt.partial"
sed '1s/\t11$/\t12/' "$P" >"$T/v12.partial"
bad "a newer version" "v12.partial: offset 0: partial format version 12 is newer than this opscope reads (11)" "$T/v12.partial"
bad "the same partial twice" "rank0.json.partial: offset $(head -n 2 "$P" | wc -c): trace $T/syn/rank0.json is also in $P (a partial given twice?)" "$P" "$P"
bad "a trace given as a partial" "rank0.json: offset 0: not an opscope partial" "$T/syn/rank0.json"
: >"$T/empty.partial"
bad "an empty file" "empty.partial: offset 0: empty: not an opscope partial" "$T/empty.partial"
bad "no such file" "nosuch.partial: cannot open" "$T/nosuch.partial"
# a time beyond 2^61 ns (the bound that keeps the merge's sums inside int64; docs/merge.md)
awk -F'\t' 'BEGIN { OFS = "\t" } $1 == "step" && !done { $3 = "4611686018427387904"; done = 1 } { print }' "$P" >"$T/far.partial"
off=$(grep -b -m1 "^step" "$P" | cut -d: -f1)
bad "a time out of bounds" "far.partial: offset $off: field 3: 4611686018427387904 is out of range" "$T/far.partial"
# a step row whose data wait is longer than the step; a step row before its sv record
awk -F'\t' 'BEGIN { OFS = "\t" } $1 == "sr" && !done { $13 = $4 - $3 + 1; done = 1 } { print }' "$P" >"$T/srlong.partial"
off=$(grep -b -m1 "^sr" "$P" | cut -d: -f1)
bad "a step row's part longer than the step" "srlong.partial: offset $off: field 13: [0-9]* is out of range" "$T/srlong.partial"
grep -v "^sv" "$P" >"$T/nosv.partial"
off=$(grep -v "^sv" "$P" | grep -b -m1 "^sr" | cut -d: -f1)
bad "a step row before its sv record" "nosv.partial: offset $off: sr record before the file's sv record" "$T/nosv.partial"
# a GPU time span whose parts do not sum to its length (one ns taken from its compute)
awk -F'\t' 'BEGIN { OFS = "\t" } $1 == "gs" && !done { $5 = $5 - 1; done = 1 } { print }' "$P" >"$T/gsum.partial"
off=$(grep -b -m1 "^gs" "$P" | cut -d: -f1)
bad "GPU time parts that do not sum to the span" "gsum.partial: offset $off: GPU time span: its parts do not sum to its length" "$T/gsum.partial"
# an SM integral that is not a number
awk -F'\t' 'BEGIN { OFS = "\t" } $1 == "us" && !done { $7 = "nan"; done = 1 } { print }' "$P" >"$T/unan.partial"
off=$(grep -b -m1 "^us" "$P" | cut -d: -f1)
bad "an SM integral that is not a number" "unan.partial: offset $off: field 7: not a number in \[0, 2^62\]" "$T/unan.partial"
# more short ops than ops
awk -F'\t' 'BEGIN { OFS = "\t" } $1 == "lr" && !done { $10 = $4 + 1; done = 1 } { print }' "$P" >"$T/lshort.partial"
off=$(grep -b -m1 "^lr" "$P" | cut -d: -f1)
bad "more short launches than launches" "lshort.partial: offset $off: field 10: [0-9]* is out of range" "$T/lshort.partial"
# a queue full for longer than its span
awk -F'\t' 'BEGIN { OFS = "\t" } $1 == "qt" && !done { $11 = $8 - $7 + 1; done = 1 } { print }' "$P" >"$T/qfull.partial"
off=$(grep -b -m1 "^qt" "$P" | cut -d: -f1)
bad "a queue full for longer than its span" "qfull.partial: offset $off: field 11: [0-9]* is out of range" "$T/qfull.partial"
# a peak after the device's last memory record
PM=$T/parts_mem/df_index_resolver.json.gz.partial
if [ -f "$PM" ]; then
	# (Python, not awk: awk's numbers are doubles, and these times need 61 bits)
	"$PY" -c 'import sys
out, done = [], False
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    if f[0] == "md" and not done:
        f[13], done = str(int(f[9]) + 1), True
    out.append("\t".join(f) + "\n")
sys.stdout.write("".join(out))' "$PM" >"$T/mpeak.partial"
	off=$(grep -b -m1 "^md" "$PM" | cut -d: -f1)
	bad "a memory peak after the last record" "mpeak.partial: offset $off: field 14: [0-9]* is out of range" "$T/mpeak.partial"
fi
# a range's longest call longer than its total
PY0=$T/parts_py/rank0.json.partial
awk -F'\t' 'BEGIN { OFS = "\t" } $1 == "h" && !done { $6 = $5 + 1; done = 1 } { print }' "$PY0" >"$T/hmax.partial"
off=$(grep -b -m1 "^h	" "$PY0" | cut -d: -f1)
bad "a range's longest call longer than its total" "hmax.partial: offset $off: field 6: [0-9]* is out of range" "$T/hmax.partial"
# a step's Dataloader time longer than the step
awk -F'\t' 'BEGIN { OFS = "\t" } $1 == "pt" && !done { $2 = $3 + 1; done = 1 } { print }' "$PY0" >"$T/plong.partial"
off=$(grep -b -m1 "^pt" "$PY0" | cut -d: -f1)
bad "a step's Dataloader time longer than the step" "plong.partial: offset $off: field 2: [0-9]* is out of range" "$T/plong.partial"
# NVTX runs out of order, one before its name, a style that is not one
PN=$T/parts_nvtx/r0.json.partial
awk -F'\t' 'BEGIN { OFS = "\t" } $1 == "nxd" && $2 == "7000" { $2 = "4000" } { print }' "$PN" >"$T/nxdesc.partial"
off=$(grep -b "^nxd	7000" "$PN" | cut -d: -f1)
bad "NVTX durations that do not ascend" "nxdesc.partial: offset $off: field 2: durations of a range name must ascend" "$T/nxdesc.partial"
grep -v "^nxr" "$PN" >"$T/nxnor.partial"
off=$(grep -v "^nxr" "$PN" | grep -b -m1 "^nxd" | cut -d: -f1)
bad "an NVTX run before its name" "nxnor.partial: offset $off: nxd record before an nxr record" "$T/nxnor.partial"
awk -F'\t' 'BEGIN { OFS = "\t" } $1 == "nxr" { $4 = "3" } { print }' "$PN" >"$T/nxstyle.partial"
off=$(grep -b -m1 "^nxr" "$PN" | cut -d: -f1)
bad "an NVTX style out of range" "nxstyle.partial: offset $off: field 4: 3 is out of range" "$T/nxstyle.partial"
# a run standing for 2^32 - 4 ranges (a partial's bound is 2^32 a file): merged as one run,
# whatever it stands for (not one entry per range: 64 GiB)
awk -F'\t' 'BEGIN { OFS = "\t" } $1 == "nxd" && $2 == "7000" { $3 = "4294967292" } { print }' "$PN" >"$T/nxbig.partial"
"$OPSCOPE" merge -f json --views nvtx "$T/nxbig.partial" >"$T/nxbig.json" 2>"$T/nxbig.err"
check "NVTX: a run of 2^32 - 4 ranges merges as one: 2^32 - 2 steps, median 7 us" \
	'q "$T/nxbig.json" "[(r[\"instances\"], r[\"med_ns\"]) for r in t(\"NVTX Range Summary\") if r[\"range\"] == \"step\"] == [(4294967294, 7000)]"'
# advice: a data wait longer than the steps' time; an ade record with no list before it
awk -F'\t' 'BEGIN { OFS = "\t" } $1 == "ad" { t = $6 } $1 == "adw" && !done { $3 = t + 1; done = 1 } { print }' "$P" >"$T/adw.partial"
off=$(grep -b -m1 "^adw" "$P" | cut -d: -f1)
bad "advice: a data wait longer than the steps" "adw.partial: offset $off: field 3: [0-9]* is out of range" "$T/adw.partial"
awk -F'\t' '{ print } $1 == "adk" { print "ade\t=x\t1\t1" }' "$P" >"$T/ade.partial"
off=$(($(grep -b -m1 "^adk" "$P" | cut -d: -f1) + $(grep -m1 "^adk" "$P" | wc -c)))
bad "advice: an evidence name after no list" "ade.partial: offset $off: an ade record not after an adg, ads or adp record" "$T/ade.partial"
# samples and flops records: a function's weight beyond 2^62, a pair naming a function not
# read yet, a function before the file's sa record; a peak that is not a number, a row's
# tensor-core time above its kernel time, a row before the file's fl record
PS=$T/parts_smp/cppbench.cpu.partial
if [ -f "$PS" ]; then
	awk -F'\t' 'BEGIN { OFS = "\t" } $1 == "saf" && !done { $6 = "4611686018427387905"; done = 1 } { print }' "$PS" >"$T/saflat.partial"
	off=$(grep -b -m1 "^saf" "$PS" | cut -d: -f1)
	bad "a function's cum beyond 2^62" "saflat.partial: offset $off: field 6: 4611686018427387905 is out of range" "$T/saflat.partial"
	awk -F'\t' 'BEGIN { OFS = "\t" } $1 == "sae" && !done { $3 = 1000000; done = 1 } { print }' "$PS" >"$T/saeidx.partial"
	off=$(grep -b -m1 "^sae" "$PS" | cut -d: -f1)
	bad "a pair naming no function of the file" "saeidx.partial: offset $off: field 3: 1000000 is out of range" "$T/saeidx.partial"
	grep -v "^sa	" "$PS" >"$T/nosa.partial"
	off=$(grep -v "^sa	" "$PS" | grep -b -m1 "^saf" | cut -d: -f1)
	bad "a function before its sa record" "nosa.partial: offset $off: saf record before the file's sa record" "$T/nosa.partial"
fi
PF=$T/parts_h200/train.opscope.partial
if [ -f "$PF" ]; then
	awk -F'\t' 'BEGIN { OFS = "\t" } $1 == "flp" && !done { $5 = "nan"; done = 1 } { print }' "$PF" >"$T/flnan.partial"
	off=$(grep -b -m1 "^flp" "$PF" | cut -d: -f1)
	bad "a peak that is not a number" "flnan.partial: offset $off: field 5: not a number in \[0, 1e30\]" "$T/flnan.partial"
	awk -F'\t' 'BEGIN { OFS = "\t" } $1 == "flr" && !done { $14 = $13 + 1; done = 1 } { print }' "$PF" >"$T/fltc.partial"
	off=$(grep -b -m1 "^flr" "$PF" | cut -d: -f1)
	bad "tensor-core time above the kernel time" "fltc.partial: offset $off: field 14: [0-9]* is out of range" "$T/fltc.partial"
	# every row in one category, each at 2^62 ns with FLOPs and the device's peaks: each row is
	# within its bound, their time at peak summed is not (refused, not wrapped)
	awk -F'\t' 'BEGIN { OFS = "\t" } $1 == "flr" { $7 = 1; $11 = $12 = $13 = "4611686018427387904"; $14 = 0; $16 = 1000000; $17 = 1000; $18 = 0 } { print }' "$PF" >"$T/flsum.partial"
	bad "FLOPs rows whose time at peak sums past 2^63" "flsum.partial: the FLOPs rows' calls or times, summed over the files, exceed 2^63" "$T/flsum.partial"
	grep -v "^fl	" "$PF" >"$T/nofl.partial"
	off=$(grep -v "^fl	" "$PF" | grep -b -m1 "^fl[a-z]" | cut -d: -f1)
	bad "a FLOPs record before its fl record" "nofl.partial: offset $off: fl[a-z] record before the file's fl record" "$T/nofl.partial"
fi
# every prefix of a partial: refused in one line, never a crash (exit 1, not a signal)
ok=1
for cut in 0 1 17 40 100 200 $((size / 2)) $((size - 1)); do
	head -c $cut "$P" >"$T/prefix.partial"
	"$OPSCOPE" merge "$T/prefix.partial" >/dev/null 2>"$T/prefix.err"
	[ $? -eq 1 ] && [ "$(wc -l <"$T/prefix.err")" -eq 1 ] || ok=0
done
check "bad: prefixes of a partial: exit 1 and one line each" '[ $ok -eq 1 ]'
"$OPSCOPE" merge --views kernel,nosuch "$P" >/dev/null 2>"$T/usage.err"
check "merge --views kernel,nosuch: usage error naming the unknown view" \
	'[ $? -eq 2 ] && grep -q "unknown view .nosuch." "$T/usage.err"'
"$OPSCOPE" merge -f html "$P" >/dev/null 2>"$T/html.err"
check "merge -f html: usage error (the page's timeline needs the events)" \
	'[ $? -eq 2 ] && grep -q "format wants text, csv or json" "$T/html.err"'
"$OPSCOPE" report --format partial --views kernel "$T/syn" >/dev/null 2>&1
check "report --format partial --views: usage error" '[ $? -eq 2 ]'
tap_done
