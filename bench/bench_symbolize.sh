#!/bin/bash
# bench_symbolize.sh: symbolizing N distinct addresses of a large library (libtorch_cpu, else
# libpython3.11) with opscope (the .opscope loader's libdw symbolizer, `opscope info`) and
# with binutils' addr2line -f -i on the same addresses, best of 3 each; prints both and the
# ratio. The addresses are N function symbols (nm -D, picked with a fixed seed) plus 4 bytes.
# Usage: bench/bench_symbolize.sh [BUILD_DIR] [N]   (BUILD_DIR built with -DOPSCOPE_BENCH=ON)
set -euo pipefail
B=${1:-build/bench}
N=${2:-5000}
LIB=/usr/lib/x86_64-linux-gnu/libtorch_cpu.so
[ -e "$LIB" ] || LIB=/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0
LIB=$(readlink -f "$LIB")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
bid=$(readelf -n "$LIB" | awk '/Build ID/ {print $3}')
# N function addresses (ELF vaddrs) and their file offsets through the executable segment
nm -D --defined-only "$LIB" | awk '$2 ~ /^[Tt]$/ {print $1}' | sort -u |
	/usr/bin/python3 -c "
import random, subprocess, sys
vaddrs = [int(l, 16) for l in sys.stdin]
random.seed(17)
pick = sorted(random.sample(vaddrs, min($N, len(vaddrs))))
loads = []
for l in subprocess.run(['readelf', '-lW', '$LIB'], capture_output=True, text=True).stdout.splitlines():
    f = l.split()
    if f and f[0] == 'LOAD':
        loads.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))
with open('$T/vaddrs', 'w') as va, open('$T/offsets', 'w') as of:
    for v in pick:
        v += 4
        for off, vaddr, filesz in loads:
            if vaddr <= v < vaddr + filesz:
                va.write('%x\n' % v); of.write('%x\n' % (v - vaddr + off)); break
"
n=$(wc -l <"$T/vaddrs")
"$B/bench/bench_symbolize" "$T/t.opscope" "$LIB" "$bid" <"$T/offsets"
best() { # best wall seconds of 3 runs of "$@"
	local b=""
	for _ in 1 2 3; do
		local s e
		s=$(date +%s.%N)
		"$@" >/dev/null
		e=$(date +%s.%N)
		b=$(echo "$s $e ${b:-1e9}" | awk '{d = $2 - $1; print (d < $3 ? d : $3)}')
	done
	echo "$b"
}
"$B/opscope" info "$T/t.opscope" | grep '^symbols:'
t_ops=$(best "$B/opscope" info "$T/t.opscope")
t_off=$(best "$B/opscope" info --no-symbolize "$T/t.opscope")
t_a2l=$(best addr2line -f -i -e "$LIB" @"$T/vaddrs")
echo "library: $LIB ($n addresses)"
echo "opscope info (load + symbolize): $t_ops s; with --no-symbolize: $t_off s"
echo "addr2line -f -i:                 $t_a2l s"
echo "$t_ops $t_a2l" | awk '{printf "ratio opscope / addr2line: %.3f\n", $1 / $2}'
