"""sampler_interleave.py: the per-sample cost of opscope's sampler against the floor, in one
process, phases interleaved (issue 17's overhead target; bench_sampler_interleave.sh runs it).

Whole runs of bench_sampler_peers.sh cannot show a difference of a few microseconds a sample:
on this shared VM the same plain run's CPU time moves by 10-20% from one run to the next,
while the floor (the interrupt and signal of a do-nothing SIGPROF handler at 1 kHz) is a few
percent and opscope's own work a fraction of that. Here one Python process runs the workload's
loop (bench/sampler_workload.py: pure Python, numpy, torch) in short phases, in a shuffled
order within each cycle, many cycles:
  - none: nothing samples;
  - floor: bench/floor_sigprof.c's perf_event task-clock event on this thread signals a
    do-nothing SIGPROF handler at HZ (floor_enable / floor_disable, through ctypes), the
    mechanism opscope's sampler uses in a Python process;
  - session: an opscope session that does not sample (its writer thread alone);
  - opscope: an opscope session sampling every thread at HZ (_opscope.session_start with
    sample_hz; the file written to a temporary directory), Python frames included.
Each phase first runs WARM iterations unmeasured (the start of a session, its first samples),
then ITERS measured ones: the CPU time of the whole process (every thread: opscope's sampler
and writer threads included) per iteration. Slow drifts of the machine fall on all three
phases of a cycle alike; the cost of each over `none` is averaged over the cycles (mean and
a 95% interval from the cycles' spread). Both samplers count this thread's CPU time with the
same task-clock period, so they take the same number of samples per iteration: the ratio of
their costs is the ratio of their costs per sample. Samples per iteration are the floor's
signals over its measured iterations.

Usage: /usr/bin/python3 bench/sampler_interleave.py PYTHON_BUILD FLOOR_SO [HZ] [CYCLES]
       [ITERS] [WARM]
PYTHON_BUILD: a build tree of the extension (its python/ directory holds opscope/_opscope.so).
"""
import ctypes
import math
import os
import random
import sys
import tempfile
import time

build, floor_so = sys.argv[1], sys.argv[2]
hz = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
cycles = int(sys.argv[4]) if len(sys.argv) > 4 else 60
iters = int(sys.argv[5]) if len(sys.argv) > 5 else 60
warm = int(sys.argv[6]) if len(sys.argv) > 6 else 10

sys.path.insert(0, os.path.join(build, 'python'))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ['OPSCOPE_QUIET'] = '1'
from opscope import _opscope  # noqa: E402
import sampler_workload as w  # noqa: E402

floor = ctypes.CDLL(floor_so)
floor.floor_enable.argtypes = [ctypes.c_long]
floor.floor_signals.restype = ctypes.c_ulong

rng = w.np.random.default_rng(0)
a, b = rng.standard_normal((96, 96)), rng.standard_normal((96, 96))
values = list(range(3000))
x = wt = None
if w.torch is not None:
    w.torch.manual_seed(0)
    w.torch.set_num_threads(1)
    x, wt = w.torch.randn(128, 128), w.torch.randn(128, 128)


def step():
    t = w.py_loss(values) + w.np_step(a, b)
    if w.torch is not None:
        t += w.torch_step(x, wt)
    return t


tmp = tempfile.mkdtemp(prefix='opscope-interleave-')
trace = os.path.join(tmp, 'phase.opscope')


def phase(kind):
    """Run one phase; its measured CPU seconds per iteration, and the floor's signals."""
    if kind == 'floor':
        if floor.floor_enable(hz) != 0:
            sys.exit('sampler_interleave: perf_event refused the floor')
    elif kind == 'opscope':
        _opscope.session_start(output=trace, sample_hz=hz)
    elif kind == 'session':
        _opscope.session_start(output=trace)
    for _ in range(warm):
        step()
    s0 = floor.floor_signals()
    c0 = time.process_time()
    for _ in range(iters):
        step()
    c1 = time.process_time()
    signals = floor.floor_signals() - s0
    if kind == 'floor':
        floor.floor_disable()
    elif kind in ('opscope', 'session'):
        _opscope.session_stop()
    return (c1 - c0) / iters, signals


# The imports' and first sessions' costs out of the way: a session first (its SIGPROF
# handler stays installed), then the loop for a while.
phase('opscope')
for _ in range(3 * iters):
    step()

kinds = ['none', 'floor', 'session', 'opscope']
cost = {k: [] for k in kinds + ['sampling', 'excess']}
signals = []
for c in range(cycles):
    order = kinds[:]
    random.Random(c).shuffle(order)
    per = {}
    for k in order:
        per[k], sig = phase(k)
        if k == 'floor':
            signals.append(sig / iters)
    for k in ('floor', 'session', 'opscope'):
        cost[k].append(per[k] - per['none'])
    cost['sampling'].append(per['opscope'] - per['session'])
    cost['excess'].append(per['opscope'] - per['floor'])
    cost['none'].append(per['none'])


def mean_ci(v):
    m = sum(v) / len(v)
    sd = math.sqrt(sum((e - m) ** 2 for e in v) / (len(v) - 1)) if len(v) > 1 else 0.0
    return m, 1.96 * sd / math.sqrt(len(v))


base, base_ci = mean_ci(cost['none'])
spi = sum(signals) / len(signals)  # samples per iteration
print(f'{cycles} cycles of four phases, {iters} measured iterations each (after {warm}), '
      f'HZ={hz}; plain iteration {base * 1e3:.3f} ms of CPU (+-{base_ci * 1e3:.3f}); '
      f'{spi:.2f} samples an iteration')
print()
print('| phase | CPU over plain, per iteration | per sample | x floor |')
print('|---|---|---|---|')
fm, fci = mean_ci(cost['floor'])
rows = {'floor': 'floor: do-nothing SIGPROF, perf_event signals',
        'session': 'opscope session, no sampling',
        'opscope': 'opscope session sampling',
        'sampling': 'opscope\'s sampling alone (sampling - session)'}
for k in ('floor', 'session', 'opscope', 'sampling'):
    m, ci = mean_ci(cost[k])
    ratio = m / fm if fm > 0 else float('nan')
    # the ratio's interval from the two means' intervals (first order)
    rci = abs(ratio) * math.sqrt((ci / m) ** 2 + (fci / fm) ** 2) if m and fm else 0.0
    print(f'| {rows[k]} | {m * 1e6:.1f} us (+-{ci * 1e6:.1f}) | {m / spi * 1e6:.1f} us '
          f'(+-{ci / spi * 1e6:.1f}) | {ratio:.2f} (+-{rci:.2f}) |')
# opscope over the floor, paired within each cycle (the plain phase does not enter it):
# the target's ratio as 1 + that / the floor's cost.
m, ci = mean_ci(cost['excess'])
print()
print(f'opscope sampling over the floor, paired per cycle: {m * 1e6:.1f} us an iteration '
      f'(+-{ci * 1e6:.1f}), {m / spi * 1e6:.1f} us a sample (+-{ci / spi * 1e6:.1f}); '
      f'x floor {1 + m / fm:.2f} (+-{ci / fm:.2f} from the pairs alone)')
for f in os.listdir(tmp):
    os.unlink(os.path.join(tmp, f))
os.rmdir(tmp)
