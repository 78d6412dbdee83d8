#!/bin/bash
# bench_sampler_peers.sh: stack sampling of a CPU-bound Python + native workload (issue 17's
# targets), opscope side by side with its peers, at the same rate HZ, in interleaved rounds:
# each round runs every configuration once, in this order, and the script repeats the round
# ROUNDS times, so that a shared machine's slow minutes fall on all of them alike:
#   - plain (no profiler),
#   - the floor: a do-nothing SIGPROF handler signalled by a perf_event task-clock event at
#     HZ, the mechanism opscope's sampler uses in a Python process (bench/floor_sigprof.c,
#     preloaded; interrupt + signal delivery, nothing else),
#   - `opscope record --no-torch --no-gpu` (the runtime alone, no sampling),
#   - `opscope record --no-torch --no-gpu --sample=HZ` (the runtime and the sampler: what the
#     peers do, stacks of every thread with Python frames),
#   - `opscope record --sample=HZ` (the defaults: PyTorch operators captured too),
#   - `perf record -F HZ -g --call-graph dwarf` (Debian's linux-perf),
#   - gperftools' CPUPROFILE (libprofiler preloaded, CPUPROFILE_FREQUENCY=HZ; its ITIMER_PROF
#     ticks with the kernel's HZ, 250 here, so it takes fewer samples than asked),
#   - Austin, when it is installed and supports this Python.
# The workload is bench/sampler_workload.py (pure Python, numpy, torch when it imports). A run's
# cost is its CPU time (user + sys of the process tree, from wait4: the profiler's own
# processes and threads included), not its wall time, which the other jobs of a shared machine
# move far more. Each row: the median CPU time and its spread (min-max) over the rounds; the
# median over rounds of the overhead over that round's plain run; that as a ratio of the
# floor's; and the median overhead per sample taken (samples counted by each tool: opscope's
# `sampler_cost` line, perf's "(N samples)", gperftools' "interrupts", the floor's count).
# For opscope it also gives the medians of its own per-stage figures (sampler_cost metadata:
# time in the signal handler per sample, the sampler thread's CPU per sample).
# Then, for opscope: how many samples carry a complete stack; and the time to a report of the
# samples: `opscope report --views samples` (symbolizing) against `perf report --stdio` of
# perf's recording (unwinding + symbolizing).
# Last, the known-shares program (tests/programs/sample_abc.c built without frame pointers,
# from $PROGRAMS, default BUILD_DIR/tests) recorded by opscope and by `perf record --all-user
# -g` at once, in one run: the flat shares of a, b and c by each (of all the samples of the
# program's process, and among a, b and c alone, the program's known split), over a run long
# enough (20,000 iterations, about 5,000 samples each) that sampling noise (a share of 70% over
# n samples moves by sqrt(0.21 / n)) stays well under the 2 points compared.
# Usage: [PROGRAMS=DIR] [ONLY=name,...] bench/bench_sampler_peers.sh BUILD_DIR [HZ=1000]
#        [ITERS=1500] [ROUNDS=5]
# ONLY: the rounds run only these configurations (plain and floor always): ops-runtime,
# ops-sample, ops-full, ops-base, perf, gperftools, austin; SHARES=0 skips the known-shares
# part; BASE=DIR adds a row for the opscope of another build (before and after a change).
set -eu
B=${1:?usage: bench_sampler_peers.sh BUILD_DIR [HZ] [ITERS] [ROUNDS]}
export PROGRAMS=${PROGRAMS:-$B/tests}
HZ=${2:-1000} ITERS=${3:-1500} ROUNDS=${4:-5}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/opscope-sampler-peers.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -shared -fPIC -o "$tmp/floor.so" "$here/floor_sigprof.c"
exec /usr/bin/python3 - "$B" "$HZ" "$ITERS" "$ROUNDS" "$tmp" "$here/sampler_workload.py" <<'PYEOF'
import json, os, re, shutil, statistics, subprocess, sys, time
b, hz, iters, rounds, tmp, workload = sys.argv[1:7]
rounds = int(rounds)
opscope = f'{b}/opscope'
py = ['/usr/bin/python3', workload, iters]
profiler = '/usr/lib/x86_64-linux-gnu/libprofiler.so.0'
only = [x for x in os.environ.get('ONLY', '').split(',') if x]

def last_int(pattern, text):
    m = re.findall(pattern, text)
    return int(m[-1]) if m else 0

def samples_perf(path):
    out = subprocess.run(['perf', 'report', '-D', '-i', path], capture_output=True, text=True).stdout
    return out.count('PERF_RECORD_SAMPLE(')

ot = f'{tmp}/t.opscope'
pd = f'{tmp}/perf.data'
gp = f'{tmp}/gperf.prof'
ops = [opscope, 'record', '-q', '-f', '-o', ot]
ops_env = {'OPSCOPE_UNWIND_STATS': '1'}
def ops_count(err):
    return last_int(r'sampler_cost: (\d+) samples', err)
def ops_stages(err):
    m = re.findall(r'handler (\d+) ns a sample .*sampler thread (\d+) ns', err)
    return (int(m[-1][0]), int(m[-1][1])) if m else None
# (key, row name, command, environment, file to remove before a run, samples from stderr)
configs = [
    ('plain', 'plain', py, {}, None, None),
    ('floor', f'floor: do-nothing SIGPROF, perf_event signals at {hz} Hz', py,
     {'LD_PRELOAD': f'{tmp}/floor.so', 'FLOOR_HZ': hz, 'FLOOR_MECH': 'perf'}, None,
     lambda e: last_int(r'floor signals (\d+)', e)),
    ('ops-runtime', 'opscope record --no-torch --no-gpu (runtime, no sampling)',
     ops + ['--no-torch', '--no-gpu', '--'] + py, {}, ot, None),
    ('ops-sample', f'opscope record --no-torch --no-gpu --sample={hz}',
     ops + ['--no-torch', '--no-gpu', f'--sample={hz}', '--'] + py, ops_env, ot, ops_count),
    ('ops-full', f'opscope record --sample={hz} (PyTorch operators too)',
     ops + [f'--sample={hz}', '--'] + py, ops_env, ot, ops_count),
]
base = os.environ.get('BASE')
if base:  # another build of opscope, to compare before and after in the same rounds
    bt = f'{tmp}/base.opscope'
    configs.append(('ops-base', f'BASE ({base}) record --no-torch --no-gpu --sample={hz}',
                    [f'{base}/opscope', 'record', '-q', '-f', '-o', bt, '--no-torch', '--no-gpu',
                     f'--sample={hz}', '--'] + py, {}, bt,
                    lambda e: last_int(r'samples: +(\d+) stack samples', subprocess.run(
                        [f'{base}/opscope', 'info', bt], capture_output=True, text=True).stdout)))
if shutil.which('perf'):
    configs.append(('perf', f'perf record -F {hz} -g --call-graph dwarf',
                    ['perf', 'record', '-F', hz, '-g', '--call-graph', 'dwarf', '-o', pd, '--'] + py,
                    {}, pd, lambda e: last_int(r'\((\d+) samples\)', e)))
if os.path.exists(profiler):
    configs.append(('gperftools', f'gperftools CPUPROFILE, {hz} Hz (ITIMER_PROF)', py,
                    {'LD_PRELOAD': profiler, 'CPUPROFILE': gp, 'CPUPROFILE_FREQUENCY': hz}, gp,
                    lambda e: last_int(r'interrupts/evictions/bytes = (\d+)/', e)))
if shutil.which('austin'):
    interval = str(max(1, 1000000 // int(hz)))
    configs.append(('austin', f'austin -i {interval}us', ['austin', '-i', interval, '-o',
                    f'{tmp}/a.austin'] + py, {}, f'{tmp}/a.austin',
                    lambda e: sum(1 for _ in open(f'{tmp}/a.austin'))))
if only:
    configs = [c for c in configs if c[0] in ('plain', 'floor') or c[0] in only]

def run(cmd, env, out):
    if out and os.path.exists(out):
        os.unlink(out)
    p = subprocess.Popen(cmd, env={**os.environ, **env}, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return ru.ru_utime + ru.ru_stime, p.returncode, err

cpu = {c[0]: [] for c in configs}
count = {c[0]: [] for c in configs}
stages = {c[0]: [] for c in configs}
failed = {}
for r in range(rounds):
    for key, name, cmd, env, out, counter in configs:
        if key in failed:
            continue
        t, rc, err = run(cmd, env, out)
        if rc != 0:
            failed[key] = err.strip().splitlines()[-1] if err.strip() else f'exit {rc}'
            continue
        cpu[key].append(t)
        count[key].append(counter(err) if counter else 0)
        st = ops_stages(err) if key.startswith('ops-') else None
        if st:
            stages[key].append(st)
        if key == 'ops-full':
            shutil.copy(ot, f'{tmp}/keep.opscope')

with open('/proc/loadavg') as f:
    load = ' '.join(f.read().split()[:3])
print(f'{rounds} interleaved rounds, HZ={hz}, ITERS={iters}; load average at the end: {load}\n')
print('| run | CPU s, median (min-max) | overhead over plain, median | x floor overhead | samples, median | us per sample over plain, median (min-max) |')
print('|---|---|---|---|---|---|')
plain = cpu['plain']
def over(key):
    return [t - p for t, p in zip(cpu[key], plain)]
floor_over = statistics.median(over('floor')) if cpu.get('floor') else 0
for key, name, *_ in configs:
    if key in failed and not cpu[key]:
        print(f'| {name} | - | - | - | - | failed: {failed[key]} |')
        continue
    o = over(key)
    med = statistics.median(o)
    ratio = f'{med / floor_over:.2f}' if floor_over > 0 and key != 'plain' else '-'
    per = [d / n * 1e6 for d, n in zip(o, count[key]) if n]
    per_s = f'{statistics.median(per):.0f} ({min(per):.0f} to {max(per):.0f})' if per else '-'
    n_s = f'{statistics.median(count[key]):.0f}' if any(count[key]) else '-'
    print(f'| {name} | {statistics.median(cpu[key]):.3f} ({min(cpu[key]):.3f}-{max(cpu[key]):.3f}) '
          f'| {med:+.3f} | {ratio} | {n_s} | {per_s} |')
for key in ('ops-sample', 'ops-full'):
    if stages.get(key):
        h = statistics.median(s[0] for s in stages[key])
        th = statistics.median(s[1] for s in stages[key])
        print(f'\n{key}: in the signal handler {h / 1000:.1f} us a sample, sampler thread '
              f'{th / 1000:.1f} us of CPU a sample (medians of the runs\' sampler_cost lines)')

if os.environ.get('SHARES') == '0' or not os.path.exists(f'{tmp}/keep.opscope'):
    sys.exit(0)

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
    n_ops, n_perf = count['ops-full'][-1], samples_perf(pd)
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
