#!/bin/bash
# bench_sampler.sh: the CPU stack sampler's overhead (issue 17), side by side in one run:
# tests/programs/sample_abc (two threads of a CPU-bound a->b->c loop, frame pointers) run
#   - plain (no opscope),
#   - with a do-nothing SIGPROF handler on per-thread CPU-time timers at HZ (the floor of any
#     signal-based sampler: timer interrupt + signal delivery),
#   - under `opscope record --sample=HZ` through perf_event (when the kernel allows it),
#   - under `opscope record --sample=HZ` through the SIGPROF fallback (OPSCOPE_SAMPLE_MECH=timer),
#   - under `opscope record` without --sample (the runtime alone),
# each the best of ROUNDS runs of the process tree's CPU time (user + sys, children included,
# so the sampler and writer threads count), with the samples each got.
# Usage: bench/bench_sampler.sh BUILD_DIR [HZ=1000] [ITERS=6000] [ROUNDS=5]
set -eu
B=${1:?usage: bench_sampler.sh BUILD_DIR [HZ] [ITERS] [ROUNDS]}
HZ=${2:-1000} ITERS=${3:-6000} ROUNDS=${4:-5}
exec /usr/bin/python3 - "$B" "$HZ" "$ITERS" "$ROUNDS" <<'PYEOF'
import os, resource, subprocess, sys, tempfile
b, hz, iters, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
prog, opscope = f'{b}/tests/prog_sample_abc', f'{b}/opscope'
tmp = tempfile.mkdtemp()
def cpu(cmd, env):
    best, samples = None, ''
    for r in range(rounds):
        out = f'{tmp}/t{r}.opscope'
        c = [x.replace('@OUT', out) for x in cmd]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        p = subprocess.run(c, env={**os.environ, **env}, capture_output=True, text=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        assert p.returncode == 0, p.stderr
        t = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if best is None or t < best:
            best = t
            samples = ''
            for l in p.stderr.splitlines():
                if l.startswith('floor signals'):
                    samples = l.split()[-1] + ' signals'
            if os.path.exists(out):
                info = subprocess.run([opscope, 'info', out], capture_output=True, text=True).stdout
                for l in info.splitlines():
                    if l.startswith('samples:'):
                        samples = l.split()[1] + ' samples'
        if os.path.exists(out):
            os.unlink(out)
    return best, samples
rec = [opscope, 'record', '-q', '-f', '-o', '@OUT']
rows = [('plain', [prog, 'abc', iters], {}),
        (f'do-nothing SIGPROF handler, CPU timers at {hz} Hz (floor)', [prog, 'abc', iters],
         {'SAMPLE_ABC_FLOOR_HZ': hz}),
        ('opscope record, no sampling', rec + ['--', prog, 'abc', iters], {}),
        (f'opscope record --sample={hz} (perf_event)', rec + [f'--sample={hz}', '--', prog, 'abc', iters], {}),
        (f'opscope record --sample={hz} (SIGPROF fallback)', rec + [f'--sample={hz}', '--', prog, 'abc', iters],
         {'OPSCOPE_SAMPLE_MECH': 'timer'})]
res = [(n, *cpu(c, e)) for n, c, e in rows]
base = res[0][1]
floor = res[1][1]
print(f'| run | CPU s (best of {rounds}) | x plain | x floor | samples | us per sample over plain |')
print('|---|---|---|---|---|---|')
for n, t, s in res:
    k = int(s.split()[0]) if s else 0
    per = f'{(t - base) / k * 1e6:.1f}' if k else ''
    print(f'| {n} | {t:.3f} | {t / base:.3f} | {t / floor:.3f} | {s} | {per} |')
PYEOF
