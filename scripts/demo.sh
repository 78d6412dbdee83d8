#!/usr/bin/env bash
# Demo: build opscope, record the example program with no code change to it beyond its
# ranges, and show what was recorded.
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
