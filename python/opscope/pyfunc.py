"""The function profiler: every Python and C function call counted by a C profile function
(opscope/_pyfunc.c) on every thread, with cProfile's numbers, so that pstats, snakeviz and
gprof2dot read the result; with builtins=False, Python functions only, through a C frame
evaluator that costs far less per call. Python only drives it and formats with the standard
pstats."""

import io
import marshal
import pstats
import sys
import threading

from . import _opscope


def _add(stats, other):
    """Stats.add semantics: sum (cc, nc, tt, ct) and merge the callers tuple-wise."""
    for func, (cc, nc, tt, ct, callers) in other.items():
        if func in stats:
            occ, onc, ott, oct_, ocallers = stats[func]
            merged = dict(ocallers)
            for c, v in callers.items():
                merged[c] = tuple(a + b for a, b in zip(merged[c], v)) if c in merged else v
            stats[func] = (occ + cc, onc + nc, ott + tt, oct_ + ct, merged)
        else:
            stats[func] = (cc, nc, tt, ct, dict(callers))


class FunctionProfiler:
    """Like cProfile.Profile: enable()/disable() (or start()/stop(), or `with`), then
    print_stats(), dump_stats(path), or pstats.Stats(profiler). One runs at a time.

    emit_ranges=True also records each call as a range of category PythonFunction into the
    opscope session that is recording, if any (expensive: for short scoped use).

    builtins=False (cProfile's flag) counts Python functions only: time in C functions stays
    with their Python caller. It records through a frame evaluator (PEP 523) instead of a
    profile function, at a fraction of the cost per call (CPython 3.11)."""

    def __init__(self, emit_ranges=False, builtins=True):
        self.emit_ranges = emit_ranges
        self.builtins = builtins
        self.stats = {}
        self._acc = {}  # accumulated over enable/disable; self.stats is a copy of it
        self._running = False

    def enable(self):
        _opscope.pyfunc_start(emit_ranges=self.emit_ranges, builtins=self.builtins)
        self._running = True
        if self.builtins:  # the frame evaluator reaches new threads by itself
            threading.setprofile(_opscope._thread_installer)

    def disable(self):
        if not self._running:
            return
        if self.builtins:
            threading.setprofile(None)
        _opscope.pyfunc_stop()
        self._running = False
        _add(self._acc, _opscope.pyfunc_stats())
        _opscope.pyfunc_clear()
        self._snapshot()

    def _snapshot(self):
        self.stats = {}
        _add(self.stats, self._acc)

    start = enable
    stop = disable

    def __enter__(self):
        self.enable()
        return self

    def __exit__(self, *exc):
        self.disable()
        return False

    def create_stats(self):
        """For pstats.Stats(self): stops the profiler and sets self.stats, the pstats dict
        (a fresh copy each time: pstats.Stats takes it away)."""
        self.disable()
        self._snapshot()

    def get_stats(self):
        self.create_stats()
        return self.stats

    def _pstats(self, stream=None):
        self.create_stats()
        return pstats.Stats(self, stream=stream or sys.stdout)

    def print_stats(self, sort=-1, *restrictions):
        """cProfile's table; sort as in pstats (-1 stdname, 0 calls, 1 time, 2 cumulative,
        or "tottime", "cumulative", "ncalls", ...)."""
        self._pstats().strip_dirs().sort_stats(sort).print_stats(*restrictions)

    def print_callers(self, sort=-1, *restrictions):
        self._pstats().strip_dirs().sort_stats(sort).print_callers(*restrictions)

    def print_callees(self, sort=-1, *restrictions):
        self._pstats().strip_dirs().sort_stats(sort).print_callees(*restrictions)

    def format_stats(self, sort=-1, *restrictions):
        out = io.StringIO()
        self._pstats(out).strip_dirs().sort_stats(sort).print_stats(*restrictions)
        return out.getvalue()

    def dump_stats(self, path):
        """Write the pstats marshal file (what cProfile -o writes)."""
        self.create_stats()
        with open(path, "wb") as f:
            marshal.dump(self.stats, f)


def profile_functions(emit_ranges=False, builtins=True):
    """A FunctionProfiler to use as `with opscope.profile_functions() as p: ...`."""
    return FunctionProfiler(emit_ranges=emit_ranges, builtins=builtins)


def run(statement, filename=None, sort=-1, globals_=None):
    """cProfile.run: profile exec(statement); dump to filename or print the table."""
    import __main__
    g = globals_ if globals_ is not None else __main__.__dict__
    p = FunctionProfiler()
    try:
        with p:
            exec(statement, g)
    finally:
        if filename is not None:
            p.dump_stats(filename)
        else:
            p.print_stats(sort)
    return p
