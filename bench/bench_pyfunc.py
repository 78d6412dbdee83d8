"""Added cost per function call of the opscope function profiler, next to cProfile, yappi and
the floor (a C profile function that does nothing: what CPython 3.11 charges for having any
profile function at all). Not a test.

Usage: PYTHONPATH=build/python/python /usr/bin/python3 bench/bench_pyfunc.py [--runs N]
       [--write bench/results.json]
The clock floor is the floor plus one clock read per event (what any profiler that times
calls pays on top of the floor); opscope's bookkeeping is its added time over that.
Workloads: recursive fib(25) (Python calls only) and a mixed mini-suite (methods, builtins,
comprehensions, dict/list work). added_ns_per_call = (best profiled - best plain) / calls,
calls = Python + C calls counted by the opscope profiler in the same workload. The
*_nobuiltins tools (opscope's frame evaluator, cProfile's builtins=False) count Python
functions only, so their calls are the Python calls (the same as all calls for fib); their
ratios are of added time on the same workload."""
import argparse
import cProfile
import json
import os
import sys
import time

import opscope
from opscope import _opscope

try:
    import yappi
except ImportError:  # Debian: apt-get install python3-yappi
    yappi = None


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


class Vec:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def add(self, o):
        return Vec(self.x + o.x, self.y + o.y)

    def norm2(self):
        return self.x * self.x + self.y * self.y


def mixed():
    acc = Vec(0, 0)
    d = {}
    out = []
    for i in range(4000):
        acc = acc.add(Vec(i, -i))
        d[i % 97] = d.get(i % 97, 0) + 1
        out.append(abs(acc.norm2()) % 7)
        if len(out) > 50:
            out = sorted(out)[:10]
    return sum(d.values()) + len(out) + max(out)


WORKLOADS = {"fib": lambda: fib(25), "mixed": lambda: [mixed() for _ in range(5)]}


def timed(fn, runs):
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter_ns()
        fn()
        best = min(best, time.perf_counter_ns() - t0)
    return best


def plain(work):
    return work


def with_noop(work, read_clock=False):
    def run():
        _opscope.noop_hook_start(read_clock=read_clock)
        try:
            work()
        finally:
            _opscope.noop_hook_stop()
    return run


def with_clock_noop(work):
    return with_noop(work, read_clock=True)


def with_opscope(work):
    def run():
        p = opscope.FunctionProfiler()
        with p:
            work()
    return run


def with_opscope_nobuiltins(work):
    def run():
        p = opscope.FunctionProfiler(builtins=False)
        with p:
            work()
    return run


def with_cprofile(work, builtins=True):
    def run():
        p = cProfile.Profile(builtins=builtins)
        p.enable()
        work()
        p.disable()
    return run


def with_cprofile_nobuiltins(work):
    return with_cprofile(work, builtins=False)


def with_yappi(work):
    def run():
        yappi.set_clock_type("wall")
        yappi.start(builtins=True)
        work()
        yappi.stop()
        yappi.clear_stats()
    return run


def calls_of(work, builtins=True):
    p = opscope.FunctionProfiler(builtins=builtins)
    with p:
        work()
    return sum(v[1] for k, v in p.stats.items() if "opscope" not in k[0] + str(k[2]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--write", help="merge the figures into this results.json")
    a = ap.parse_args()
    tools = {"pyhook_floor": with_noop, "pyhook_clock_floor": with_clock_noop,
             "pyfunc": with_opscope, "cprofile": with_cprofile}
    if yappi:
        tools["yappi"] = with_yappi
    tools["pyfunc_nobuiltins"] = with_opscope_nobuiltins
    tools["cprofile_nobuiltins"] = with_cprofile_nobuiltins
    res = {}
    added = {}
    for wname, work in WORKLOADS.items():
        calls = calls_of(work)
        py_calls = calls_of(work, builtins=False)
        fns = {"plain": work}
        fns.update({t: wrap(work) for t, wrap in tools.items()})
        best = dict.fromkeys(fns, float("inf"))
        for _ in range(a.runs):  # rounds interleave the tools, so drift hits all alike
            for name, fn in fns.items():
                best[name] = min(best[name], timed(fn, 1))
        base = best["plain"]
        row = {"calls": calls, "python_calls": py_calls, "plain_ms": base / 1e6}
        added[wname] = {t: best[t] - base for t in tools}
        for tname in tools:
            n = py_calls if tname.endswith("_nobuiltins") else calls
            row[tname + "_added_ns_per_call"] = round((best[tname] - base) / n, 1)
        res[wname] = row
        print(wname, json.dumps(row))
    figures = {}
    for tname in tools:
        k = tname + "_added_ns_per_call"
        figures[k] = {w: res[w][k] for w in res}
    # the name for the floor (the same figure)
    figures["pyhook_floor_ns_per_call"] = figures["pyhook_floor_added_ns_per_call"]
    figures["pyfunc_vs_cprofile"] = {
        w: round(res[w]["pyfunc_added_ns_per_call"] / res[w]["cprofile_added_ns_per_call"], 3)
        for w in res}
    figures["pyfunc_vs_floor"] = {
        w: round(res[w]["pyfunc_added_ns_per_call"] / res[w]["pyhook_floor_added_ns_per_call"], 3)
        for w in res}
    # what opscope adds over a hook that only reads the clock (its bookkeeping), and that
    # hook over the floor (the clock reads every timing profiler makes)
    figures["pyfunc_bookkeeping_ns_per_call"] = {
        w: round((added[w]["pyfunc"] - added[w]["pyhook_clock_floor"]) / res[w]["calls"], 1)
        for w in res}
    figures["pyhook_clock_floor_vs_floor"] = {
        w: round(added[w]["pyhook_clock_floor"] / added[w]["pyhook_floor"], 3) for w in res}
    figures["pyfunc_nobuiltins_vs_floor"] = {
        w: round(added[w]["pyfunc_nobuiltins"] / added[w]["pyhook_floor"], 3) for w in res}
    figures["pyfunc_nobuiltins_vs_cprofile_nobuiltins"] = {
        w: round(added[w]["pyfunc_nobuiltins"] / added[w]["cprofile_nobuiltins"], 3)
        for w in res}
    figures["pyfunc_bench_env"] = {"python": sys.version.split()[0], "runs": a.runs,
                                   "calls": {w: res[w]["calls"] for w in res},
                                   "python_calls": {w: res[w]["python_calls"] for w in res}}
    print(json.dumps(figures, indent=1))
    if a.write:
        # read-modify-write at the end: other benchmarks share this file
        data = {}
        if os.path.exists(a.write):
            with open(a.write) as f:
                data = json.load(f)
        data.update(figures)
        with open(a.write + ".tmp", "w") as f:
            json.dump(data, f, indent=2)
            f.write("\n")
        os.replace(a.write + ".tmp", a.write)


if __name__ == "__main__":
    main()
