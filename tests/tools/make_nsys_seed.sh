#!/usr/bin/env bash
# make_nsys_seed.sh: make the seed corpus of fuzz/fuzz_nsys.c (tests/fuzz-corpus/nsys/) from
# a real Nsight Systems export: a few rows of each table the importer reads, in the same
# schema (nsys 2022.1, schema 2.9.1), with small pages so each file stays a few KB. Run once;
# the outputs are committed (tests/e2e/test_golden.sh reads small.sqlite too).
# Usage: make_nsys_seed.sh PROFILE.sqlite.gz OUTDIR   (needs the sqlite3 shell)
set -eu
src=$1
out=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
zcat "$src" >"$tmp/src.sqlite"
tables="StringIds EXPORT_META_DATA TARGET_INFO_GPU ThreadNames PROCESSES CUPTI_ACTIVITY_KIND_RUNTIME
CUPTI_ACTIVITY_KIND_KERNEL CUPTI_ACTIVITY_KIND_MEMCPY CUPTI_ACTIVITY_KIND_MEMSET
CUPTI_ACTIVITY_KIND_SYNCHRONIZATION NVTX_EVENTS"
make_db() { # NAME SQL-AFTER-COPY
	rm -f "$out/$1"
	{
		echo "PRAGMA page_size = 512;"
		for t in $tables; do
			sqlite3 "$tmp/src.sqlite" "SELECT sql || ';' FROM sqlite_master WHERE type = 'table' AND name = '$t'"
		done
		echo "ATTACH '$tmp/src.sqlite' AS s;"
		# the rows: 3 kernels, the runtime calls that launched them and the first copies,
		# memsets, synchronizations and NVTX events, the strings they name, one GPU
		cat <<'SQL'
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM s.CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start LIMIT 3;
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY SELECT * FROM s.CUPTI_ACTIVITY_KIND_MEMCPY ORDER BY start LIMIT 3;
INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET SELECT * FROM s.CUPTI_ACTIVITY_KIND_MEMSET ORDER BY start LIMIT 2;
INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION SELECT * FROM s.CUPTI_ACTIVITY_KIND_SYNCHRONIZATION ORDER BY start LIMIT 2;
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME SELECT * FROM s.CUPTI_ACTIVITY_KIND_RUNTIME WHERE correlationId IN
  (SELECT correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL UNION SELECT correlationId FROM CUPTI_ACTIVITY_KIND_MEMCPY
   UNION SELECT correlationId FROM CUPTI_ACTIVITY_KIND_MEMSET UNION SELECT correlationId FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
INSERT INTO NVTX_EVENTS SELECT * FROM s.NVTX_EVENTS ORDER BY start LIMIT 6;
-- a start/end range, a mark, and a push/pop range nsys saw no end of
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) SELECT start + 10, end - 10, 60, 'startend', globalTid, 0 FROM NVTX_EVENTS WHERE eventType = 59 LIMIT 1;
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) SELECT start + 20, NULL, 34, 'mark', globalTid, 0 FROM NVTX_EVENTS WHERE eventType = 59 LIMIT 1;
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) SELECT max(end) - 5, NULL, 59, 'open', globalTid, 0 FROM NVTX_EVENTS WHERE eventType = 59;
INSERT INTO ThreadNames SELECT * FROM s.ThreadNames;
INSERT INTO PROCESSES SELECT * FROM s.PROCESSES WHERE globalPid IN (SELECT globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL);
INSERT INTO TARGET_INFO_GPU SELECT * FROM s.TARGET_INFO_GPU;
INSERT INTO EXPORT_META_DATA SELECT * FROM s.EXPORT_META_DATA WHERE name IN
  ('EXPORT_PRODUCT_VERSION', 'EXPORT_SCHEMA_VERSION', 'EXPORT_PLATFORM', 'EXPORT_USER');
INSERT INTO StringIds SELECT * FROM s.StringIds WHERE id IN
  (SELECT nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME UNION SELECT demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL
   UNION SELECT shortName FROM CUPTI_ACTIVITY_KIND_KERNEL UNION SELECT nameId FROM ThreadNames);
DETACH s;
SQL
		echo "$3"
		echo "VACUUM;"
	} | sqlite3 "$out/$1"
}
# small.sqlite: the rows as they are (a goldens input too)
make_db small.sqlite "" ""
# names.sqlite: a kernel name that is not UTF-8 (Windows-1252 bytes, as nsys writes a user
# name), an NCCL kernel, a runtime name without a version suffix
make_db names.sqlite "" "INSERT INTO StringIds VALUES (900001, CAST(X'6B65726E656C5F47656994' AS TEXT)), (900002, 'ncclAllReduceKernel'), (900003, 'cudaDeviceSynchronize');
UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET demangledName = 900001 WHERE rowid = 1;
UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET demangledName = 900002 WHERE rowid = 2;
UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET nameId = 900003 WHERE rowid = 1;"
# oldschema.sqlite: an older layout: no StringIds text for NVTX (text inline only), kernels
# named by shortName alone, no ThreadNames, no TARGET_INFO_GPU, no export metadata
make_db oldschema.sqlite "" "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN demangledName;
ALTER TABLE NVTX_EVENTS DROP COLUMN textId; ALTER TABLE NVTX_EVENTS DROP COLUMN domainId;
DROP TABLE ThreadNames; DROP TABLE TARGET_INFO_GPU; DROP TABLE EXPORT_META_DATA;"
# newschema.sqlite: the other names and tables nsys versions use: META_DATA_EXPORT, driver
# calls, ENUM_* labels, TARGET_INFO_CUDA_DEVICE in place of TARGET_INFO_GPU (its columns as
# the importer takes them: every one, by cudaId), a memory kind past the built-in ones
make_db newschema.sqlite "" "ALTER TABLE EXPORT_META_DATA RENAME TO META_DATA_EXPORT;
CREATE TABLE CUPTI_ACTIVITY_KIND_DRIVER AS SELECT * FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE 0;
INSERT INTO StringIds VALUES (900010, 'cuLaunchKernel');
INSERT INTO CUPTI_ACTIVITY_KIND_DRIVER SELECT start + 1, end - 1, eventClass, globalTid, correlationId + 100000, 900010, returnValue, callchainId FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE nameId IN (SELECT id FROM StringIds WHERE value LIKE 'cudaLaunchKernel%');
CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER PRIMARY KEY, name TEXT, label TEXT);
INSERT INTO ENUM_CUDA_MEM_KIND VALUES (9, 'CUDA_MEMOPR_MEMORY_KIND_FUTURE', 'Future Kind');
UPDATE CUPTI_ACTIVITY_KIND_MEMSET SET memKind = 9;
CREATE TABLE TARGET_INFO_CUDA_DEVICE (cudaId INTEGER, name TEXT, totalGlobalMem INTEGER);
INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (0, 'Test GPU', 1024);
DROP TABLE TARGET_INFO_GPU;"
gzip -9 -n -c "$out/small.sqlite" >"$out/small.sqlite.gz"
