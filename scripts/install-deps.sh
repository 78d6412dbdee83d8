#!/usr/bin/env bash
# Installs what opscope needs to build and test on Debian 12, from Debian's archive only.
# Safe to run again: apt-get skips what is installed. Runs apt through sudo when not root.
set -euo pipefail

packages=(cmake ninja-build gcc clang clang-format libclang-rt-14-dev libzstd-dev zstd
	zlib1g-dev libsqlite3-dev sqlite3 python3 pkg-config python3-dev python3-pytest time
	python3-torch libtorch-dev python3-sklearn g++ python3-pip python3-setuptools python3-wheel
	golang-go google-perftools libdw-dev binutils chromium nodejs)
# (libdw-dev: symbolizing native frames, optional; binutils: addr2line, the tests' oracle)
# (PyTorch 1.13 and its headers: the operator observer and the tests of torch capture; pip,
# setuptools and wheel: `pip install .` offline, tests/e2e/test_pip.sh; golang-go and
# google-perftools: `go tool pprof` and google-pprof, the real readers of the pprof export,
# tests/e2e/test_pprof.sh; chromium and nodejs: the HTML report's browser test,
# tests/e2e/test_html_browser.sh, which drives chromium headless over the DevTools protocol
# from node with no npm package)
# --bench: what bench/bench_ingest.sh's peer, Holistic Trace Analysis, imports (Debian's pandas),
# and yappi, a peer of bench/bench_pyfunc.py
[ "${1:-}" != --bench ] || packages+=(python3-pandas python3-numpy python3-plotly python3-ijson python3-psutil python3-networkx python3-yaml python3-yappi)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "install-deps: all packages present"
	exit 0
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
if ! $sudo apt-get install -y --no-install-recommends "${missing[@]}"; then
	$sudo apt-get update
	$sudo apt-get install -y --no-install-recommends "${missing[@]}"
fi
