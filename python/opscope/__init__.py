"""opscope for Python: paddle.profiler's step profiler (Profiler, make_scheduler, RecordEvent,
exporters, timer-only benchmark) and a C function profiler with cProfile's output, over the
opscope C runtime carried by the extension module opscope._opscope. See docs/python.md."""

from . import _opscope
from .profiler import (Profiler, ProfilerState, ProfilerTarget, RecordEvent, SortedKeys,
                       TracerEventType, export_chrome_tracing, export_opscope, make_scheduler,
                       wrap_loader)
from .pyfunc import FunctionProfiler, profile_functions, run
from .timer import Timer, TimerStats, timer_stats, timers_reset, timers_table

__version__ = _opscope.__version__

# The plain C API, for use without a Profiler.
session_start = _opscope.session_start
session_stop = _opscope.session_stop
session_active = _opscope.session_active
step = _opscope.step
reader_begin = _opscope.reader_begin
reader_end = _opscope.reader_end
read_ranges = _opscope.read_ranges
export = _opscope.export

__all__ = [
    "Profiler", "ProfilerState", "ProfilerTarget", "RecordEvent", "SortedKeys",
    "TracerEventType", "export_chrome_tracing", "export_opscope", "make_scheduler",
    "wrap_loader", "FunctionProfiler", "profile_functions", "run", "session_start",
    "session_stop", "session_active", "step", "reader_begin", "reader_end", "read_ranges",
    "export", "Timer", "TimerStats", "timer_stats", "timers_table", "timers_reset",
]
