#!/bin/bash
# bench_sampler_interleave.sh: opscope's sampler against the floor (a do-nothing SIGPROF
# handler signalled by perf_event at the same rate) in one Python process, short phases
# interleaved over many cycles (bench/sampler_interleave.py says how and why): issue 17's
# overhead target, where whole runs (bench_sampler_peers.sh) move more than the difference.
# Usage: bench/bench_sampler_interleave.sh PYTHON_BUILD [HZ=1000] [CYCLES=200] [ITERS=60]
#        [WARM=15]
# PYTHON_BUILD: a build of the extension (cmake -DOPSCOPE_PYTHON=ON, target opscope_python),
# e.g. build/python as scripts/test.sh makes it.
set -eu
B=${1:?usage: bench_sampler_interleave.sh PYTHON_BUILD [HZ] [CYCLES] [ITERS] [WARM]}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/opscope-interleave.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -shared -fPIC -o "$tmp/floor.so" "$here/floor_sigprof.c"
/usr/bin/python3 "$here/sampler_interleave.py" "$B" "$tmp/floor.so" "${2:-1000}" "${3:-200}" \
	"${4:-60}" "${5:-15}"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
