"""Scoped timers for Python, the counterpart of the C API's OPSCOPE_TIMER: per name the count,
total, average, max and min of the timed blocks, with or without a recording session. A Python
timer and a C timer of the same name are one timer (under `opscope record`, the preloaded
runtime's), and opscope.timers_table() prints them all as opscope_timers_print() does."""

import functools
import time
from collections import namedtuple

from . import _opscope

TimerStats = namedtuple("TimerStats", "count total_ns avg_ns max_ns min_ns")


class Timer:
    """Times a block (`with Timer("load"):`), a function (`@Timer("step")`), or the span
    between start() and stop(). Samples are added to the named timer when each ends."""

    def __init__(self, name):
        if not isinstance(name, str) or not name:
            raise ValueError("Timer needs a non-empty name")
        self.name = name
        self._start = None

    def start(self):
        self._start = time.perf_counter_ns()
        return self

    def stop(self):
        """End the sample begun by start(); returns its duration in ns."""
        if self._start is None:
            raise RuntimeError("Timer %r stopped without start()" % self.name)
        ns = time.perf_counter_ns() - self._start
        self._start = None
        _opscope.timer_add(self.name, ns)
        return ns

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    def __call__(self, fn):
        name = self.name

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            t0 = time.perf_counter_ns()
            try:
                return fn(*args, **kwargs)
            finally:
                _opscope.timer_add(name, time.perf_counter_ns() - t0)
        return wrapper

    @property
    def stats(self):
        """This timer's TimerStats, or None before its first sample."""
        return timer_stats(self.name)


def timer_stats(name):
    """The TimerStats of the timer `name` (C or Python), or None if it was never used."""
    t = _opscope.timer_get(name)
    return None if t is None else TimerStats(*t)


def timers_table():
    """Every timer with samples, as a table (ms) sorted by total time: what the C API's
    opscope_timers_print() prints."""
    return _opscope.timers_table()


def timers_reset():
    """Zero every timer."""
    _opscope.timers_reset()
