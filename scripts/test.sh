#!/usr/bin/env bash
# The whole test suite, as CI runs it: dependencies, formatting check, then
#   1. the ASan+UBSan build with every unit, e2e and fuzz-replay test, and the pytest suite on
#      the sanitized extension (less the tests that run `opscope record`);
#   2. the TSan build with the tests of buffers, writer, timers and the loader's read-ahead thread,
#      the JSON importer's two threads and the report's views run side by side;
#   3. clang's ASan+UBSan build with the unit tests and the fuzz-corpus replay;
#   4. the Python extension in build/python (no sanitizers) and its pytest suite (label python),
#      and the install tests (label install: cmake --install, pip install).
# Usage: scripts/test.sh   (from anywhere; builds under build/asan, build/tsan, build/clang)
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh

echo "== format check (clang-format 14)"
mapfile -t sources < <(git ls-files '*.c' '*.h' 2>/dev/null || find src include tests fuzz -name '*.[ch]')
clang-format --dry-run --Werror "${sources[@]}"

jobs=$(nproc)

echo "== ASan + UBSan build and tests (the Python extension too: its pytest run preloads ASan)"
cmake --preset asan -DOPSCOPE_PYTHON=ON -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
cmake --build build/asan -j "$jobs"
(cd build/asan && ctest --output-on-failure -j "$jobs")

echo "== TSan build and tests of the recording core"
cmake --preset tsan >/dev/null
cmake --build build/tsan -j "$jobs"
(cd build/tsan && TSAN_OPTIONS="halt_on_error=1 die_after_fork=0" ctest --output-on-failure -L unit \
	-R 'record|drops|timers|profiler|nvtx|test_report|test_analyze|test_model|test_sampler')
# the JSON importer's parser thread (OPSCOPE_IMPORT_THREADS=1 in the test) and the report's
# views in parallel (report_run_views) under TSan
(cd build/tsan && TSAN_OPTIONS="halt_on_error=1" ctest --output-on-failure \
	-R 'e2e_test_(import|report)')

echo "== clang ASan + UBSan build: unit tests and the fuzz corpus"
# clang's UBSan checks what GCC's does not (pointer arithmetic on NULL, for one: a fuzzer
# finding). The e2e tests stay with the GCC build: a preloaded libopscope.so needs GCC's
# shared ASan runtime.
cmake --preset clang >/dev/null
cmake --build build/clang -j "$jobs"
(cd build/clang && ctest --output-on-failure -j "$jobs" -L 'unit|fuzz')

echo "== Python extension (no sanitizers: the interpreter cannot preload ASan) and pytest"
cmake -S . -B build/python -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPSCOPE_WERROR=ON \
	-DOPSCOPE_PYTHON=ON -DOPSCOPE_TESTS=ON -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
cmake --build build/python -j "$jobs" --target opscope_python opscope_cli
# and the install tests (label install) with everything: cmake --install of this build, its
# Python package recorded by the installed `opscope record`, and `pip install .`
(cd build/python && ctest --output-on-failure -L 'python|install')

echo "== all tests passed"
