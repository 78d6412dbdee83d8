#!/usr/bin/env bash
# Demo: build opscope, record the example C program and a PyTorch training with no code
# change, and show what was recorded and where the time went.
# Usage: scripts/demo.sh   (builds under build/release)
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build build/release -j "$(nproc)"

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "== opscope record -o $out/demo.opscope -- build/release/example_record_demo"
build/release/opscope record -f -o "$out/demo.opscope" -- build/release/example_record_demo
echo
echo "== opscope info"
build/release/opscope info "$out/demo.opscope"
echo
echo "== opscope dump (first 25 events)"
build/release/opscope dump "$out/demo.opscope" | head -n 25
echo
build/release/opscope export "$out/demo.opscope" --format chrome -o "$out/demo.json"
echo "== chrome trace: $(wc -c <"$out/demo.json") bytes (load it in https://ui.perfetto.dev)"
echo
echo "== opscope report (Model Summary, top operators)"
build/release/opscope report --views overview,operator --top 8 "$out/demo.opscope"

# PyTorch training on scikit-learn's digits, recorded with no code change (the Python package
# and the operator observer live in the build tree of the extension: build/python)
cmake -S . -B build/python -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPSCOPE_PYTHON=ON \
	-DOPSCOPE_TESTS=OFF -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
cmake --build build/python -j "$(nproc)" --target opscope_python opscope_cli >/dev/null
echo
echo "== opscope record -o $out/digits.opscope -- /usr/bin/python3 examples/pytorch_train.py"
build/python/opscope record -f -o "$out/digits.opscope" -- /usr/bin/python3 examples/pytorch_train.py
echo
echo "== opscope report --views model,operator --top 10"
build/python/opscope report --views model,operator --top 10 -w 50 "$out/digits.opscope"
