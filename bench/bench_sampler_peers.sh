#!/bin/bash
# bench_sampler_peers.sh: stack sampling of a CPU-bound Python + native workload (issue 17's
# targets), opscope side by side with its peers in one run, at the same rate HZ:
#   - plain (no profiler),
#   - the floor: a do-nothing SIGPROF handler signalled by a perf_event task-clock event at
#     HZ, the mechanism opscope's sampler uses in a Python process (bench/floor_sigprof.c,
#     preloaded; interrupt + signal delivery, nothing else), and the same handler on
#     ITIMER_PROF (gperftools' timer, which ticks at the kernel's HZ: fewer signals),
#   - `opscope record` without sampling (the runtime alone, with its Python and torch capture),
#   - `opscope record --sample=HZ` (perf_event) and with OPSCOPE_SAMPLE_MECH=timer (SIGPROF),
#   - `perf record -F HZ -g --call-graph dwarf` (Debian's linux-perf),
#   - gperftools' CPUPROFILE (libprofiler preloaded, CPUPROFILE_FREQUENCY=HZ),
#   - Austin, when it supports this Python (Debian's 1.0.1 does not read 3.11: it says so).
# The workload is bench/sampler_workload.py (pure Python, numpy, torch when it imports). Each
# row: the best of ROUNDS runs of the process tree's CPU time (user + sys, the profiler's own
# processes and threads included), samples taken, and the overhead over plain as a ratio of
# the floor's overhead. Then, for opscope: how many samples carry a complete stack; and the
# time to a report of the samples: `opscope report --views samples` (symbolizing) against
# `perf report --stdio` of perf's recording (unwinding + symbolizing).
# Last, the known-shares program (tests/programs/sample_abc.c built without frame pointers,
# from $PROGRAMS, default BUILD_DIR/tests) recorded by opscope and by `perf record --all-user
# -g` at once, in one run: the flat shares of a, b and c by each (of all the samples of the
# program's process, and among a, b and c alone, the program's known split), over a run long
# enough (20,000 iterations, about 5,000 samples each) that sampling noise (a share of 70% over
# n samples moves by sqrt(0.21 / n)) stays well under the 2 points compared.
# Usage: [PROGRAMS=DIR] bench/bench_sampler_peers.sh BUILD_DIR [HZ=1000] [ITERS=1500] [ROUNDS=3]
set -eu
B=${1:?usage: bench_sampler_peers.sh BUILD_DIR [HZ] [ITERS] [ROUNDS]}
export PROGRAMS=${PROGRAMS:-$B/tests}
HZ=${2:-1000} ITERS=${3:-1500} ROUNDS=${4:-3}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/opscope-sampler-peers.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -shared -fPIC -o "$tmp/floor.so" "$here/floor_sigprof.c"
exec /usr/bin/python3 - "$B" "$HZ" "$ITERS" "$ROUNDS" "$tmp" "$here/sampler_workload.py" <<'PYEOF'
import json, os, resource, shutil, subprocess, sys, time
b, hz, iters, rounds, tmp, workload = sys.argv[1:7]
rounds = int(rounds)
opscope = f'{b}/opscope'
py = ['/usr/bin/python3', workload, iters]
profiler = '/usr/lib/x86_64-linux-gnu/libprofiler.so.0'

def samples_opscope(path):
    out = subprocess.run([opscope, 'info', path], capture_output=True, text=True).stdout
    for l in out.splitlines():
        if l.startswith('samples:'):
            return int(l.split()[1])
    return 0

def samples_perf(path):
    out = subprocess.run(['perf', 'report', '-D', '-i', path], capture_output=True, text=True).stdout
    return out.count('PERF_RECORD_SAMPLE(')

def measure(name, cmd, env, out, count):
    best = None
    for r in range(rounds):
        for f in (out,):
            if f and os.path.exists(f):
                os.unlink(f)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        p = subprocess.run(cmd, env={**os.environ, **env}, capture_output=True, text=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if p.returncode != 0:
            return (name, None, f'failed: {p.stderr.strip().splitlines()[-1] if p.stderr.strip() else p.returncode}')
        t = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if best is None or t < best[0]:
            n = count(p) if count else 0
            best = (t, n)
    return (name, best[0], best[1])

rows = []
rows.append(measure('plain', py, {}, None, None))
floor_count = lambda p: int([l for l in p.stderr.splitlines() if l.startswith('floor signals')][-1].split()[-1])
rows.append(measure(f'floor: do-nothing SIGPROF, perf_event signals at {hz} Hz (the floor)', py,
                    {'LD_PRELOAD': f'{tmp}/floor.so', 'FLOOR_HZ': hz, 'FLOOR_MECH': 'perf'}, None,
                    floor_count))
rows.append(measure(f'do-nothing SIGPROF, ITIMER_PROF at {hz} Hz (ticks at HZ)', py,
                    {'LD_PRELOAD': f'{tmp}/floor.so', 'FLOOR_HZ': hz}, None, floor_count))
ot = f'{tmp}/t.opscope'
rows.append(measure('opscope record, no sampling (the runtime and its Python capture)',
                    [opscope, 'record', '-q', '-f', '-o', ot, '--'] + py, {}, ot, None))
rec = [opscope, 'record', '-q', '-f', '-o', ot, f'--sample={hz}', '--'] + py
rows.append(measure(f'opscope record --sample={hz} (perf_event)', rec, {}, ot,
                    lambda p: samples_opscope(ot)))
shutil.copy(ot, f'{tmp}/keep.opscope')
rows.append(measure(f'opscope record --sample={hz} (SIGPROF timers)', rec,
                    {'OPSCOPE_SAMPLE_MECH': 'timer'}, ot, lambda p: samples_opscope(ot)))
pd = f'{tmp}/perf.data'
if shutil.which('perf'):
    rows.append(measure(f'perf record -F {hz} -g --call-graph dwarf', ['perf', 'record', '-q', '-F', hz, '-g',
                        '--call-graph', 'dwarf', '-o', pd, '--'] + py, {}, pd, lambda p: samples_perf(pd)))
gp = f'{tmp}/gperf.prof'
if os.path.exists(profiler):
    rows.append(measure(f'gperftools CPUPROFILE, {hz} Hz', py,
                        {'LD_PRELOAD': profiler, 'CPUPROFILE': gp, 'CPUPROFILE_FREQUENCY': hz}, gp,
                        lambda p: samples_opscope(gp)))
if shutil.which('austin'):
    interval = str(max(1, 1000000 // int(hz)))
    rows.append(measure(f'austin -i {interval}us', ['austin', '-i', interval, '-o', f'{tmp}/a.austin'] + py,
                        {}, f'{tmp}/a.austin', lambda p: sum(1 for _ in open(f'{tmp}/a.austin'))))

plain = rows[0][1]
floor = rows[1][1] - plain
# The floor's overhead is often inside the noise of a shared machine (below 0: "-"), so each
# row also gives its overhead per sample taken.
print(f'| run | CPU s (best of {rounds}) | x plain | overhead / floor overhead | samples | us per sample over plain |')
print('|---|---|---|---|---|---|')
for name, t, n in rows:
    if t is None:
        print(f'| {name} | - | - | - | {n} | - |')
        continue
    over = f'{(t - plain) / floor:.2f}' if floor > 0 else '-'
    per = f'{(t - plain) / n * 1e6:.0f}' if n else '-'
    print(f'| {name} | {t:.3f} | {t / plain:.3f} | {over} | {n} | {per} |')

# opscope's stacks: complete (not truncated) share, from the report's JSON totals
rep = json.loads(subprocess.run([opscope, 'report', '--views', 'samples', '--format', 'json',
                                 f'{tmp}/keep.opscope'], capture_output=True, text=True).stdout)
for t in rep['tables']:
    if t['view'] == 'samples' and 'totals' in t:
        tot = t['totals']
        print(f"\nopscope perf_event run: {tot['samples']} samples, {tot['truncated']} truncated: "
              f"{100.0 * (tot['samples'] - tot['truncated']) / max(tot['samples'], 1):.2f}% complete")
        break

def timed(cmd):
    s = time.monotonic()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - s
if os.path.exists(pd):
    n_ops, n_perf = samples_opscope(f'{tmp}/keep.opscope'), samples_perf(pd)
    t_ops = min(timed([opscope, 'report', '--views', 'samples', f'{tmp}/keep.opscope']) for _ in range(rounds))
    t_perf = min(timed(['perf', 'report', '--stdio', '-i', pd]) for _ in range(rounds))
    print(f'report of the samples: opscope {t_ops:.3f} s ({n_ops} samples), perf report {t_perf:.3f} s '
          f'({n_perf} samples); per sample {t_ops / max(n_ops, 1) * 1e6:.0f} us vs '
          f'{t_perf / max(n_perf, 1) * 1e6:.0f} us: {t_ops / max(n_ops, 1) / (t_perf / max(n_perf, 1)):.3f}x')

# The known shares, opscope and perf on the same run
prog = os.path.join(os.environ['PROGRAMS'], 'prog_sample_abc_nofp')
if shutil.which('perf') and os.path.exists(prog):
    sd, so = f'{tmp}/same.data', f'{tmp}/same.opscope'
    subprocess.run(['perf', 'record', '-q', '--all-user', '-F', hz, '-g', '-o', sd, '--', opscope, 'record',
                    '-q', '-f', '-o', so, f'--sample={hz}', '--', prog, 'abc', '20000'],
                   capture_output=True)
    out = subprocess.run(['perf', 'report', '-i', sd, '--stdio', '--no-children', '--comm', 'prog_sample_abc',
                          '--percentage', 'relative', '--sort', 'sym', '-g', 'none'],
                         capture_output=True, text=True).stdout
    theirs = {}
    for l in out.splitlines():
        f = l.split()
        if len(f) == 3 and f[0].endswith('%') and f[1] == '[.]':
            theirs[f[2]] = float(f[0][:-1])
    rep = json.loads(subprocess.run([opscope, 'report', '--views', 'samples', '--format', 'json', so],
                                    capture_output=True, text=True).stdout)
    ours = {}
    for t in rep['tables']:
        if t['view'] == 'samples' and 'rows' in t:
            ours = {r['name']: 100.0 * r['flat_ratio'] for r in t['rows']}
            break
    print('\nknown shares, one run of prog_sample_abc_nofp recorded by both at once (flat %):')
    print('| function | perf | opscope | difference | perf, among a/b/c | opscope, among a/b/c | difference |')
    print('|---|---|---|---|---|---|---|')
    pt = sum(theirs.get(k, 0) for k in 'abc')
    ot = sum(ours.get(k, 0) for k in 'abc')
    for k in 'cba':
        p, o = theirs.get(k, 0), ours.get(k, 0)
        pa, oa = 100 * p / pt if pt else 0, 100 * o / ot if ot else 0
        print(f'| {k} | {p:.2f} | {o:.2f} | {o - p:+.2f} | {pa:.2f} | {oa:.2f} | {oa - pa:+.2f} |')
PYEOF
