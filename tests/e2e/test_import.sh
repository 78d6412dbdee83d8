#!/usr/bin/env bash
# test_import.sh: the Chrome-JSON / Kineto importer through the CLI: what a synthetic trace
# becomes in the model (categories, exact ns times, baseTimeNanoseconds, args, flows, B/E,
# counters, names), gzip and plain give the same model, a tiny read window (every value
# crossing a refill) gives the same model, directories merge files, malformed input gives one
# line with file and offset and exit 1, and the HTA assertions of ../shared/data/README.md.
# Env: OPSCOPE (the CLI), SRC (repository root).
set -u
: "${OPSCOPE:?}" "${SRC:?}"
. "$(dirname "$0")/lib.sh"
C="$SRC/tests/fuzz-corpus/kineto"
DATA="$SRC/../shared/data"

# --- what the synthetic trace becomes
"$OPSCOPE" dump --absolute "$C/full.json" >"$T/full.txt" 2>"$T/err"
check "full.json loads" '[ $? -eq 0 ] && [ ! -s "$T/err" ]'
# ts 1010 µs + baseTimeNanoseconds 1.7e18 -> 1700000000001010000 ns exactly
check "times: µs to ns exactly, plus baseTimeNanoseconds" \
	'grep -q "^1700000000001010000 0 range Operator aten::mm dur=100000 depth=1" "$T/full.txt"'
check "3 decimals are kept (1000.5 µs, 500.25 µs)" \
	'grep -q "^1700000000001000500 0 range ProfileStep ProfilerStep#1 dur=500250 depth=0" "$T/full.txt"'
check "array, bool, null and float args" \
	'grep "aten::mm" "$T/full.txt" | grep -q "Input Dims=\[\[2,3\],\[3,4\]\] Input type=\[\"float\",\"float\"\] flag=true none=null f=1500"'
check "kernel on the device track, correlation kept" \
	'grep -q "gpu0:7 range Kernel void gemm<float, 128>(float\*) dur=50001 depth=0 {correlation=7 grid=\[1,2,3\]}" "$T/full.txt"'
"$OPSCOPE" info "$C/full.json" >"$T/full.info"
check "info: an imported trace's times are its own clock, not CLOCK_MONOTONIC" \
	'grep -q "^time span: .*(the imported trace.s clock)" "$T/full.info" && ! grep -q CLOCK_MONOTONIC "$T/full.info"'
check "NCCL kernel is Communication" 'grep -q "gpu0:8 range Communication ncclKernel_AllReduce" "$T/full.txt"'
check "memcpy" 'grep -q "gpu0:7 range Memcpy Memcpy HtoD dur=5000" "$T/full.txt"'
check "runtime call" 'grep -q "0 range CudaRuntime cudaLaunchKernel dur=10000 depth=2 {correlation=7}" "$T/full.txt"'
check "launch flow from the runtime call to the kernel" \
	'grep -q "^1700000000001020000 0 flow_out - id=7 to=gpu0:7" "$T/full.txt" && grep -q "^1700000000001040000 gpu0:7 flow_in - id=7 from=0" "$T/full.txt"'
check "memory instant" 'grep -q "instant Memory \[memory\] {Bytes=64}" "$T/full.txt"'
check "one counter series per argument" \
	'grep -q "counter - mem.used value=10" "$T/full.txt" && grep -q "counter - mem.free value=2.5" "$T/full.txt"'
check "B/E pair on string pid/tid" 'grep -q "range UserDefined b dur=300000 depth=0" "$T/full.txt"'
"$OPSCOPE" info "$C/full.json" >"$T/info" 2>&1
check "info: format, thread name, device metadata, distributed info" \
	'grep -q "format:     chrome-json (imported)" "$T/info" && grep -q " 11 .*main$" "$T/info" && grep -q "device.0.name    GPU \"0\"" "$T/info" && grep -q "distributed.world_size 2" "$T/info"'

# --- same model whatever the framing
gzip -c "$C/full.json" >"$T/full.json.gz"
"$OPSCOPE" dump "$T/full.json.gz" >"$T/gz.txt"
"$OPSCOPE" dump "$C/full.json" >"$T/plain.txt"
check "gzip and plain give the same events" 'cmp -s "$T/gz.txt" "$T/plain.txt"'
"$OPSCOPE" dump "$C/compact.json" >"$T/compact.txt"
check "whitespace does not matter" 'cmp -s "$T/compact.txt" "$T/plain.txt"'
OPSCOPE_JSON_WINDOW=1 "$OPSCOPE" dump "$T/full.json.gz" >"$T/w1.txt"
OPSCOPE_JSON_WINDOW=13 "$OPSCOPE" dump "$C/full.json" >"$T/w13.txt"
check "a 1-byte and a 13-byte window give the same events" \
	'cmp -s "$T/w1.txt" "$T/plain.txt" && cmp -s "$T/w13.txt" "$T/plain.txt"'
OPSCOPE_IMPORT_THREADS=1 OPSCOPE_JSON_WINDOW=7 "$OPSCOPE" dump "$C/full.json" >"$T/th.txt"
check "parsing in a thread of its own gives the same events" 'cmp -s "$T/th.txt" "$T/plain.txt"'
# many small events: batches fill up inside a window, and escaped strings and multi-line
# arrays (unescaped into a batch's scratch) must outlive the window they came from
awk 'BEGIN {
	printf "{\"traceEvents\": [\n"
	for (i = 0; i < 60000; i++)
		printf "%s{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op\\u0041%d\", \"pid\": 1, \"tid\": %d, \"ts\": %d.5, \"dur\": 1, \"args\": {\"k\": \"v\\n%d\", \"dims\": [[%d,\n 2]]}}\n", i ? "," : "", i % 97, i % 3, i, i, i
	printf "]}\n"
}' >"$T/many.json"
OPSCOPE_IMPORT_THREADS=0 "$OPSCOPE" dump "$T/many.json" >"$T/many0.txt"
OPSCOPE_IMPORT_THREADS=1 "$OPSCOPE" dump "$T/many.json" >"$T/many1.txt"
OPSCOPE_IMPORT_THREADS=1 OPSCOPE_JSON_WINDOW=100000 "$OPSCOPE" dump "$T/many.json" >"$T/many2.txt"
check "60,000 small events: the same with the parser in a thread, with full batches and windows" \
	'[ $(grep -c "range Operator opA" "$T/many0.txt") -eq 60000 ] && grep -qF "opA53 dur=1000 depth=0 {k=\"v\\n59999\" dims=[[59999,2]]}" "$T/many0.txt" && cmp -s "$T/many0.txt" "$T/many1.txt" && cmp -s "$T/many0.txt" "$T/many2.txt"'
# 2,000 flows open at once, closed in a scrambled order, twice with the same ids: every end
# finds its other end however the open-flow map's probe chains were shifted by closings
awk 'BEGIN {
	printf "{\"traceEvents\": [\n"
	printf "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"host\", \"pid\": 1, \"tid\": 1, \"ts\": 0, \"dur\": 1000000},\n"
	printf "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 0, \"dur\": 1000000}"
	for (r = 0; r < 2; r++) {
		for (i = 0; i < 2000; i++)
			printf ",\n{\"ph\": \"s\", \"id\": %d, \"pid\": 1, \"tid\": 1, \"ts\": %d, \"cat\": \"ac2g\", \"name\": \"ac2g\"}", i, r * 100000 + i
		for (i = 0; i < 2000; i++)
			printf ",\n{\"ph\": \"f\", \"id\": %d, \"pid\": 0, \"tid\": 7, \"ts\": %d, \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"}", (i * 7919) % 2000, r * 100000 + 50000 + i
	}
	printf "\n]}\n"
}' >"$T/flows.json"
"$OPSCOPE" dump "$T/flows.json" >"$T/flows.txt"
check "4,000 flows, each with both ends, the second use of an id a flow of its own" \
	'[ $(grep -c "flow_out - id=[0-9]* to=gpu0:7$" "$T/flows.txt") -eq 4000 ] && [ $(grep -c "flow_in - id=[0-9]* from=0$" "$T/flows.txt") -eq 4000 ] && grep -q "^ *51886000 gpu0:7 flow_in - id=1234 from=0$" "$T/flows.txt" && grep -q "^ *151886000 gpu0:7 flow_in - id=1234 from=0$" "$T/flows.txt"'
# chunks of a text in one piece parsed on several threads, on speculation: the same events,
# errors and offsets as one parser, wherever the chunks are cut (OPSCOPE_IMPORT_CHUNK bytes)
# (small.json: 100,000 short events, so that a chunk parsed on speculation fills the batches
# it may hold and stops, and the in-order parse takes the rest of the chunk)
awk 'BEGIN { printf "["; for (i = 0; i < 100000; i++) printf "%s{\"ph\":\"i\",\"ts\":%d,\"pid\":1,\"tid\":1,\"name\":\"a\"}", i ? "," : "", i; print "]" }' >"$T/small.json"
for f in "$C"/*.json "$T/many.json" "$T/small.json"; do
	OPSCOPE_IMPORT_THREADS=0 "$OPSCOPE" dump "$f" >"$T/s.out" 2>&1
	echo "rc=$?" >>"$T/s.out"
	case "$f" in
	*small.json) sizes="1500000 2000000" ;;
	*many.json) sizes="1000 100000" ;;
	*) sizes="1 7 300 4096" ;;
	esac
	for ch in $sizes; do
		OPSCOPE_JSON_MMAP=1 OPSCOPE_IMPORT_CHUNK=$ch "$OPSCOPE" dump "$f" >"$T/p.out" 2>&1
		echo "rc=$?" >>"$T/p.out"
		cmp -s "$T/s.out" "$T/p.out" || echo "# $(basename "$f"), chunks of $ch bytes: not the same"
	done
done >"$T/par"
check "chunks parsed in parallel give what one parser gives, on every corpus file and cut" \
	'[ ! -s "$T/par" ] || { cat "$T/par"; false; }'
OPSCOPE_IMPORT_THREADS=1 "$OPSCOPE" info "$C/truncated.json" >/dev/null 2>"$T/err"
check "an error in the parser thread is reported the same way" \
	'[ $? -eq 1 ] && grep -q "offset 894: unexpected end of input" "$T/err"'
"$OPSCOPE" dump "$C/bom.json" >"$T/out" 2>&1
check "a UTF-8 byte order mark is skipped" '[ $? -eq 0 ] && grep -q "instant UserDefined a" "$T/out"'
"$OPSCOPE" dump "$C/bare_array.json" >"$T/out" 2>&1
check "the bare-array form loads" '[ $? -eq 0 ] && grep -q "range Kernel void gemm" "$T/out"'
"$OPSCOPE" dump "$C/invalid_utf8.json" >"$T/out" 2>&1
name_pat='range UserDefined k\xff\xfe\xc3('
json_pat='j=["\\ufffd"]' # the canonical JSON text holds \ufffd; dump escapes the backslash
check "invalid UTF-8 loads and is escaped on output" \
	'[ $? -eq 0 ] && grep -qF "$name_pat" "$T/out" && grep -qF "$json_pat" "$T/out"'
"$OPSCOPE" dump "$C/escapes.json" >"$T/out" 2>&1
check "escapes: quotes, newline, \\u, surrogate pairs, lone surrogate" \
	'[ $? -eq 0 ] && grep -q "a\"b\\\\\\\\c\\\\né😀�" "$T/out"'

# --- a directory: one file per process
mkdir "$T/dir"
cp "$C/full.json" "$T/dir/rank0.json"
cp "$C/escapes.json" "$T/dir/rank1.json"
echo "not a trace" >"$T/dir/README"
"$OPSCOPE" info "$T/dir" >"$T/info" 2>&1
check "a directory loads every trace in it" '[ $? -eq 0 ] && grep -q "rank0.json" "$T/info" && grep -q "rank1.json" "$T/info"'

# --- malformed input: one line naming the file and the offset, exit 1, no crash
bad() { # NAME FILE EXPECTED-MESSAGE (check's eval sees these locals)
	local file=$2 msg=$3 rc
	"$OPSCOPE" info "$file" >"$T/out" 2>"$T/err"
	rc=$?
	check "malformed: $1" '[ $rc -eq 1 ] && [ $(wc -l <"$T/err") -eq 1 ] && grep -q "^opscope: $file: offset [0-9]*\( (uncompressed)\)\?: $msg" "$T/err"'
}
bad "truncated" "$C/truncated.json" "unexpected end of input (truncated?)"
bad "ts of the wrong type" "$C/wrong_types.json" '"ts" must be a number'
bad "ph of the wrong type" "$C/wrong_types2.json" '"ph" must be a string'
bad "huge time" "$C/huge_numbers.json" "time out of range"
# a step at -4.7e18 ns whose kernel runs at +4.7e18 ns: each time fits int64 ns, the step
# stretched to its kernel (9.4e18 ns) does not; before the bound the step table showed
# -9046744073709546616 ns. Refused at the first time (the bound is 2^61 ns from 0)
bad "times spanning more than int64" "$C/time_span.json" "time out of range: beyond 2^61 ns"
bad "deep nesting" "$C/deep_nesting.json" "nesting too deep"
bad "bad escape" "$C/bad_escape.json" "bad escape in a string"
bad "control character" "$C/control_char.json" "control character in a string"
bad "trailing garbage" "$C/trailing_garbage.json" "unexpected data after the end"
bad "trailing comma" "$C/trailing_comma.json" "a trace event must be an object"
head -c 300 "$T/full.json.gz" >"$T/cut.json.gz"
bad "truncated gzip" "$T/cut.json.gz" "gzip data is truncated"
printf '' >"$T/empty.json"
bad "empty file" "$T/empty.json" "empty file, not a trace"
"$OPSCOPE" info "$C/huge_args.json" >/dev/null 2>&1
check "huge numbers in args are fine" '[ $? -eq 0 ]'
"$OPSCOPE" info "$C/not_a_trace.json" >"$T/out" 2>"$T/err"
check "a JSON object without traceEvents is not a trace" \
	'[ $? -eq 1 ] && grep -q "not a trace: a JSON object without \"traceEvents\"" "$T/err"'

# --- HTA's assertions on real traces (../shared/data/README.md)
if [ -d "$DATA/kineto/hta" ]; then
	H="$DATA/kineto/hta"
	"$OPSCOPE" dump --category Communication "$H/nccl_parser_config/nccl_data.json.gz" >"$T/nccl"
	check "HTA: 21 NCCL kernels" '[ $(grep -c "range Communication ncclKernel" "$T/nccl") -eq 21 ]'
	longest=$(grep "range Communication ncclKernel" "$T/nccl" | awk '{for (i = 1; i <= NF; i++) if ($i ~ /^dur=/) print substr($i, 5), NR}' | sort -n | tail -1 | cut -d' ' -f2)
	grep "range Communication ncclKernel" "$T/nccl" | sed -n "${longest}p" >"$T/longest"
	check "HTA: the longest is an AllReduce of 2049000 elements on ranks [0, 1]" \
		'grep -q "ncclKernel_AllReduce" "$T/longest" && grep -q "In msg nelems=2049000 Out msg nelems=2049000" "$T/longest" && grep -q "Process Group Ranks=\"\[0, 1\]\"" "$T/longest"'
	"$OPSCOPE" dump --absolute --from 1682725898237042000 --to 1682725898240570000 \
		"$H/trace_filter/sampled_rank-0.json.gz" >"$T/window"
	check "HTA: 93 complete events inside [1682725898237042, 1682725898240570] µs" \
		'[ $(grep -c " range " "$T/window") -eq 93 ]'
	# the same window as dump prints times by default: relative to the first event
	first=$("$OPSCOPE" dump --absolute --sort time "$H/trace_filter/sampled_rank-0.json.gz" |
		awk '!/^#/ { print $1; exit }')
	"$OPSCOPE" dump --from $((1682725898237042000 - first)) --to $((1682725898240570000 - first)) \
		"$H/trace_filter/sampled_rank-0.json.gz" >"$T/window2"
	check "dump --from/--to without --absolute take the relative times dump prints" \
		'[ $(grep -c " range " "$T/window2") -eq 93 ] && [ "$(cut -d" " -f2- "$T/window")" != "" ] &&
		[ "$(awk "{\$1 = \"\"} 1" "$T/window")" = "$(awk "{\$1 = \"\"} 1" "$T/window2")" ]'
	"$OPSCOPE" dump --category UserDefined --sort time "$H/cupti_profiler/benchmark_result_924719_1679055439_trace.json.gz" | grep "^ *[0-9]* gpu" >"$T/cupti"
	check "HTA: 77 CUPTI profiler ranges; the 6th is fft2d_r2c_32x32 with fadd = 86114304" \
		'[ $(wc -l <"$T/cupti") -eq 77 ] && sed -n 6p "$T/cupti" | grep -q "fft2d_r2c_32x32.*smsp__sass_thread_inst_executed_op_fadd_pred_on.sum=86114304"'
	for f in $(find "$DATA/kineto" -name '*.json.gz' -o -name '*.json' | sort); do
		"$OPSCOPE" info "$f" >/dev/null 2>"$T/err"
		rc=$?
		case "$f" in
		*execution_trace/*_et.json.gz | *memory_timeline.raw.gz) ;; # not traces: an error is right
		*) [ $rc -eq 0 ] || echo "# $f: $(cat "$T/err")" ;;
		esac
		[ $rc -le 1 ] || echo "# $f: exit $rc"
	done >"$T/real"
	check "every real trace under ../shared/data/kineto loads" '[ ! -s "$T/real" ] || { cat "$T/real"; false; }'
	m=$H/mtia_trace_single_rank/mtia_rank_0.json.gz
	OPSCOPE_IMPORT_THREADS=0 "$OPSCOPE" dump "$m" | md5sum >"$T/sync.md5"
	OPSCOPE_IMPORT_THREADS=1 OPSCOPE_JSON_WINDOW=4000 "$OPSCOPE" dump "$m" | md5sum >"$T/thr.md5"
	check "a real trace: threaded with a small window = single-threaded" 'cmp -s "$T/sync.md5" "$T/thr.md5"'
else
	echo "# ../shared/data not present: HTA checks skipped"
fi

tap_done
