#!/usr/bin/env bash
# test_nsys.sh: Nsight Systems SQLite exports end to end (docs/import-nsys.md): the three
# files of ../shared/data/nsys give the kernel counts and summed kernel times of oracle 4
# (../shared/data/README.md) in the JSON Kernel view, gzip'd and plain alike; the GPU views
# (nvprof's GPU activities and API calls, Kernel, Overview, Device, NVTX) are not empty; kernels
# are tied to the runtime calls that launched them (launch flows); `info` says which
# schema variant was read (2022.1's, an older and a newer layout) and shows device properties
# and a user name that is not UTF-8, escaped; a directory skips a SQLite file that is not an
# export; a SQLite file that is not an nsys export, a corrupt one and a truncated gzip give
# one line naming the file, exit 1.
# Env: OPSCOPE (the CLI), SRC (repository root).
set -u
: "${OPSCOPE:?}" "${SRC:?}"
. "$(dirname "$0")/lib.sh"
D=$SRC/../shared/data/nsys
C=$SRC/tests/fuzz-corpus/nsys
PY=/usr/bin/python3
[ -x $PY ] || PY=python3

# JSON report on stdin -> "kernels total_ns" of the Kernel view
kernel_sum() {
	$PY -c 'import json, sys
d = json.load(sys.stdin)
rows = [r for t in d["tables"] if t["view"] == "kernel" for r in t["rows"]]
print(sum(r["calls"] for r in rows), sum(r["total_ns"] for r in rows))'
}
# JSON report on stdin -> the views with at least one row, comma-separated
nonempty() {
	$PY -c 'import json, sys
d = json.load(sys.stdin)
print(",".join(sorted({t["view"] for t in d["tables"] if t["rows"]})))'
}

if [ -d "$D" ]; then
	while read -r f kernels sum; do
		b=$(basename "$f")
		got=$("$OPSCOPE" report --format json --views kernel "$D/$f" | kernel_sum)
		check "$b: $kernels kernels, $sum ns (oracle 4)" '[ "$got" = "$kernels $sum" ]'
		zcat "$D/$f" >"$T/${b%.gz}"
		got=$("$OPSCOPE" report --format json --views kernel "$T/${b%.gz}" | kernel_sum)
		check "${b%.gz} (plain): the same" '[ "$got" = "$kernels $sum" ]'
	done <<'LIST'
concurrent_example/concurrent.s1/profile1.sqlite.gz 12 48000028
concurrent_example/concurrent.s16/profile16.sqlite.gz 12 895646803
nsys_db/con_kernel.sqlite.gz 9 271711594
LIST
	p1=$D/concurrent_example/concurrent.s1/profile1.sqlite.gz
	views=$("$OPSCOPE" report --format json "$p1" | nonempty)
	check "profile1: device, files, gpu, gputime, kernel, launch, nvprof, nvtx, overview, queue have rows ($views)" \
		'[ "$views" = "device,files,gpu,gputime,kernel,launch,nvprof,nvtx,overview,queue" ]'
	"$OPSCOPE" report --views nvprof "$p1" >"$T/nvprof" 2>&1
	check "profile1: nvprof's GPU activities and API calls" \
		'grep -q "GPU activities:.*test2(double" "$T/nvprof" && grep -q "API calls:.*cudaStreamCreate$" "$T/nvprof" && grep -q "\[CUDA memcpy HtoD\]" "$T/nvprof" && grep -q "\[CUDA memset\]" "$T/nvprof"'
	"$OPSCOPE" info "$D/nsys_db/con_kernel.sqlite.gz" >"$T/info" 2>&1
	check "con_kernel info: exit 0, format nsys-sqlite" '[ $? -eq 0 ] && grep -q "^format: *nsys-sqlite (imported)" "$T/info"'
	check "con_kernel info: the variant read (schema 2.9.1, EXPORT_META_DATA, the tables)" \
		'grep -q "nsys.variant *nsys-sqlite schema 2.9.1, metadata EXPORT_META_DATA; read: RUNTIME KERNEL MEMCPY MEMSET SYNCHRONIZATION TARGET_INFO_GPU" "$T/info"'
	check "con_kernel info: the CUDA device alone, with its properties" \
		'grep -q "device.0.name *GeForce GTX 1060 with Max-Q Design" "$T/info" && grep -q "device.0.numSms *10$" "$T/info" && ! grep -q "Intel" "$T/info"'
	check "con_kernel info: a Windows-1252 user name kept, escaped" 'grep -q "nsys.user *Alexander Gei\\\\xe1$" "$T/info"'
	# 7 kernels, 10 copies and 1 memset of con_kernel have their runtime call in the file
	check "con_kernel: 18 launch flows" 'grep -q " 18 flows," "$T/info"'
	"$OPSCOPE" export -q -f chrome -o "$T/ck.json" "$D/nsys_db/con_kernel.sqlite.gz"
	check "con_kernel: the Chrome export parses, user name included" \
		'$PY -c "import json, sys; d = json.load(open(sys.argv[1])); assert \"Gei\" in json.dumps(d)" "$T/ck.json"'
else
	echo "# no $D: the oracles are skipped"
fi

# the seed corpus: launches tied to kernels in the event tree (Operator-less: nvprof's API
# calls list the launches; the Kernel view's kernels all have a launch)
"$OPSCOPE" info "$C/small.sqlite" >"$T/small.info" 2>&1
check "small: 3 kernels, 8 launch flows, 1 unclosed NVTX range, a mark" \
	'grep -q "^  Kernel *3$" "$T/small.info" && grep -q " 8 flows," "$T/small.info" && grep -q "(1 unclosed), 1 instants" "$T/small.info"'
"$OPSCOPE" info "$C/oldschema.sqlite" >"$T/old.info" 2>&1
check "oldschema (no textId, domainId, demangledName, metadata): read, variant said" \
	'[ $? -eq 0 ] && grep -q "schema unknown, no export metadata; read: RUNTIME KERNEL MEMCPY MEMSET SYNCHRONIZATION NVTX(text)$" "$T/old.info"'
"$OPSCOPE" info "$C/newschema.sqlite" >"$T/new.info" 2>&1
check "newschema (META_DATA_EXPORT, DRIVER, TARGET_INFO_CUDA_DEVICE): read, variant said" \
	'[ $? -eq 0 ] && grep -q "schema 2.9.1, metadata META_DATA_EXPORT; read: RUNTIME DRIVER KERNEL MEMCPY MEMSET SYNCHRONIZATION NVTX(text+textId, domains) TARGET_INFO_CUDA_DEVICE$" "$T/new.info"'
check "newschema: driver calls, the CUDA device's columns" \
	'grep -q "^  CudaDriver *3$" "$T/new.info" && grep -q "device.0.name *Test GPU$" "$T/new.info" && grep -q "device.0.totalGlobalMem 1024$" "$T/new.info"'
"$OPSCOPE" dump "$C/newschema.sqlite" >"$T/new.dump" 2>&1
check "newschema: a memory kind named by ENUM_CUDA_MEM_KIND" 'grep -q "range Memset Memset (Future Kind) " "$T/new.dump"'
mkdir -p "$T/dir"
cp "$C/notnsys.sqlite" "$C/small.sqlite" "$T/dir/"
(cd "$T" && "$OPSCOPE" report --views files dir) >"$T/dir.txt" 2>&1
check "a directory: the nsys export read, a SQLite file that is not one skipped" \
	'[ $? -eq 0 ] && grep -q "^dir/small.sqlite  *nsys-sqlite  *28 " "$T/dir.txt" && ! grep -q notnsys "$T/dir.txt"'
"$OPSCOPE" report --format json --views nvprof "$C/names.sqlite" >"$T/names.json"
check "names: a kernel name that is not UTF-8 gives valid JSON" '$PY -c "import json, sys; json.load(open(sys.argv[1]))" "$T/names.json"'
check "names: an NCCL kernel, a name without a version suffix" \
	'grep -q "ncclAllReduceKernel" "$T/names.json" && grep -q "\"cudaDeviceSynchronize\"" "$T/names.json"'

# bad input: one line naming the file, exit 1, no crash
bad() { # NAME FILE PATTERN
	bad_file=$2 bad_what=$3
	"$OPSCOPE" report "$bad_file" >/dev/null 2>"$T/err"
	bad_rc=$?
	check "$1: exit 1, one line naming the file: $3" \
		'[ $bad_rc -eq 1 ] && [ "$(wc -l <"$T/err")" = 1 ] && grep -qF "opscope: $bad_file: " "$T/err" && grep -qF "$bad_what" "$T/err"'
}
bad "a SQLite file that is not an nsys export" "$C/notnsys.sqlite" "not an Nsight Systems export: no StringIds table (tables: t)"
bad "a corrupt database" "$C/corrupt.sqlite" "malformed"
bad "a database header alone" "$C/header-only.sqlite" "malformed"
bad "a truncated gzip" "$C/truncated.sqlite.gz" "offset 2000: gzip data is truncated"
"$OPSCOPE" export -q -f sqlite -o "$T/ours.sqlite" "$C/small.sqlite"
bad "our own SQLite export" "$T/ours.sqlite" "not an Nsight Systems export"
tap_done
