"""The step profiler: paddle.profiler's Profiler, scheduler, enums, exporters and RecordEvent,
over the C profiler of opscope (opscope_profiler_*). See docs/python.md for the mapping of each
name to paddle.profiler and torch.profiler."""

import enum
import functools
import os
import shutil
import socket
import sys
import warnings

from . import _opscope


class ProfilerState(enum.IntEnum):
    """State of a step (paddle.profiler.ProfilerState; torch's ProfilerAction)."""
    CLOSED = 0
    READY = 1
    RECORD = 2
    RECORD_AND_RETURN = 3


class ProfilerTarget(enum.IntEnum):
    """What to profile. CPU: the host's events (paddle's); CPU_SAMPLING (opscope's): also
    stack samples of every thread, at Profiler(sample_hz=...) (docs/sampling.md). GPU, XPU
    and CUSTOM_DEVICE are not recorded by this build."""
    CPU = 0
    GPU = 1
    XPU = 2
    CUSTOM_DEVICE = 3
    CPU_SAMPLING = 16


class SortedKeys(enum.IntEnum):
    """Sort orders of summary() (paddle.profiler.SortedKeys)."""
    CPUTotal = 0
    CPUAvg = 1
    CPUMax = 2
    CPUMin = 3
    GPUTotal = 4
    GPUAvg = 5
    GPUMax = 6
    GPUMin = 7


class TracerEventType(enum.IntEnum):
    """Event categories; the first fifteen are paddle's TracerEventType values."""
    Operator = 0
    Dataloader = 1
    ProfileStep = 2
    CudaRuntime = 3
    Kernel = 4
    Memcpy = 5
    Memset = 6
    UserDefined = 7
    OperatorInner = 8
    Forward = 9
    Backward = 10
    Optimization = 11
    Communication = 12
    PythonOp = 13
    PythonUserDefined = 14
    PythonFunction = 15


class _Schedule:
    """A make_scheduler() result: callable like paddle's, and passed to C as numbers."""

    def __init__(self, closed, ready, record, repeat, skip_first):
        self.params = (closed, ready, record, repeat, skip_first)
        _opscope.schedule_state(self.params, 0)  # validates

    def __call__(self, step):
        return ProfilerState(_opscope.schedule_state(self.params, step))

    def __repr__(self):
        return ("make_scheduler(closed=%d, ready=%d, record=%d, repeat=%d, skip_first=%d)" %
                self.params)


def make_scheduler(*, closed, ready, record, repeat=0, skip_first=0):
    """paddle.profiler.make_scheduler: a callable step -> ProfilerState."""
    for v in (closed, ready, record, repeat, skip_first):
        if not isinstance(v, int) or v < 0:
            raise ValueError("Invalid profiler scheduler arguments")
    if record <= 0:
        raise ValueError("Invalid profiler scheduler arguments")
    return _Schedule(closed, ready, record, repeat, skip_first)


def _worker_name():
    return "host_%s_pid_%d" % (socket.gethostname(), os.getpid())


def _makedirs(dir_name):
    try:
        os.makedirs(dir_name, exist_ok=True)
    except OSError as e:
        raise RuntimeError("Can not create directory '%s' for saving profiling results." %
                           dir_name) from e


def export_opscope(dir_name, worker_name=None):
    """on_trace_ready handler: keep each window as an .opscope file in dir_name (the windows
    are written there directly)."""
    _makedirs(dir_name)

    def handle(prof):
        path = prof.last_trace
        if worker_name and path:
            dest = os.path.join(dir_name, "%s_w%d.opscope" % (worker_name, prof._windows - 1))
            shutil.move(path, dest)
            prof.last_trace = dest

    handle._opscope_output = dir_name
    return handle


def export_chrome_tracing(dir_name, worker_name=None):
    """on_trace_ready handler (paddle.profiler.export_chrome_tracing): each window is written
    to dir_name as .opscope and converted to Chrome trace JSON next to it, by the exporter
    inside the extension ("<worker>_w<N>.json" for "<worker>_w<N>.opscope")."""
    _makedirs(dir_name)
    keep = export_opscope(dir_name, worker_name)

    def handle(prof):
        keep(prof)
        src = prof.last_trace
        if not src:
            return
        out = os.path.splitext(src)[0] + ".json"
        _opscope.export(src, out, "chrome")
        prof.last_export = out

    handle._opscope_output = dir_name
    return handle


class Profiler:
    """paddle.profiler.Profiler over the C profiler.

    scheduler: None (record every step; one window handed out at stop()), a (start, end)
    tuple (record [start, end)), make_scheduler(...), or any callable step -> ProfilerState.
    on_trace_ready(prof) is called when a window is complete; prof.last_trace is its file.
    """

    def __init__(self, *, targets=None, scheduler=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, timer_only=False,
                 output=None, skip_steps=None, sample_hz=None, sample_mode="cpu",
                 **unsupported):
        self.targets = self._check_targets(targets)
        # CPU_SAMPLING samples every thread's stack in each window, at sample_hz (default 99,
        # as `opscope record --sample`); giving sample_hz alone asks for it too.
        if sample_hz is not None and ProfilerTarget.CPU_SAMPLING not in self.targets:
            self.targets.append(ProfilerTarget.CPU_SAMPLING)
        if ProfilerTarget.CPU_SAMPLING in self.targets:
            sample_hz = 99 if sample_hz is None else int(sample_hz)
            if sample_hz <= 0:
                raise ValueError("sample_hz must be > 0")
        else:
            sample_hz = 0
        if sample_mode not in ("cpu", "wall"):
            raise ValueError("sample_mode must be 'cpu' or 'wall'")
        self.sample_hz = sample_hz
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.timer_only = timer_only
        self.on_trace_ready = on_trace_ready
        self.last_trace = None
        self.last_export = None
        self._windows = 0
        self._torch = False  # this profiler installed the PyTorch capture
        self._driving = False  # counted in torch_hooks.profiler_driven
        for k in unsupported:
            warnings.warn("Profiler option %r is not supported by opscope yet; ignored" % k)
        if profile_memory:
            # accepted for paddle.profiler's signature, but nothing records memory yet: say so
            # rather than hand back a profile that silently lacks it
            warnings.warn("Profiler option 'profile_memory' is not supported by opscope yet; "
                          "no memory events are recorded")
        if output is None and on_trace_ready is not None:
            output = getattr(on_trace_ready, "_opscope_output", None)
        if output is not None and not output.endswith(("/", ".opscope")):
            output = output + "/"
        sched, state_fn = None, None
        if scheduler is None:
            pass
        elif isinstance(scheduler, _Schedule):
            sched = scheduler.params
        elif isinstance(scheduler, (tuple, list)):
            if len(scheduler) != 2 or scheduler[1] <= scheduler[0]:
                raise ValueError("scheduler (start, end) needs end > start")
            sched = _opscope.schedule_from_range(max(int(scheduler[0]), 0), int(scheduler[1]))
        elif callable(scheduler):
            state_fn = scheduler
        else:
            raise TypeError("scheduler must be None, (start, end), or a callable")
        self.scheduler = scheduler
        self._c = _opscope.Profiler(output=output, schedule=sched, state_fn=state_fn,
                                    on_ready=self._ready, timer_only=bool(timer_only),
                                    skip_steps=int(skip_steps or 0), sample_hz=sample_hz,
                                    sample_mode=sample_mode)

    @staticmethod
    def _check_targets(targets):
        if targets is None:
            return [ProfilerTarget.CPU]
        kept = []
        for t in targets:
            t = ProfilerTarget(t)
            if t in (ProfilerTarget.CPU, ProfilerTarget.CPU_SAMPLING):
                ok, why = True, ""
            elif t == ProfilerTarget.GPU:
                why = _opscope.gpu_start()  # "" when the CUPTI collector started
                ok = not why
            else:
                ok, why = False, "no collector"
            if not ok:
                warnings.warn("Profiling %s is not supported in current context (%s)."
                              % (t.name, why))
            elif t not in kept:
                kept.append(t)
        return kept

    def _ready(self, path):
        self._windows += 1
        self.last_trace = path
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _torch_begin(self):
        """With torch imported, record its operators (input shapes and dtypes with
        record_shapes), the Forward and Backward phases and the module hierarchy, like
        torch.profiler would; the steps are this profiler's. Nothing to do when the capture is
        already installed (by `opscope record`, or by hand): then it is left as it is."""
        if self.timer_only or "torch" not in sys.modules or self._driving:
            return
        from . import torch_hooks

        torch_hooks.profiler_driven(+1)
        self._driving = True
        if torch_hooks.installed():
            return
        try:
            torch_hooks.install(shapes=bool(self.record_shapes), phases=True, steps=False)
        except Exception as e:  # never break the program being profiled
            warnings.warn("opscope: PyTorch capture not installed: %s" % e)
            return
        self._torch = True
        self._torch_sync()

    def _torch_sync(self):
        """The operator callback on in windows only: closed steps do not pay for it."""
        if self._torch:
            from . import torch_hooks

            torch_hooks.set_active(_opscope.recording())

    def _torch_end(self):
        if not self._driving:
            return
        from . import torch_hooks

        if self._torch:
            torch_hooks.uninstall()
            self._torch = False
        torch_hooks.profiler_driven(-1)
        self._driving = False

    def start(self):
        self._torch_begin()
        try:
            self._c.start()
        finally:
            self._torch_sync()

    def step(self, num_samples=None):
        try:
            self._c.step(-1 if num_samples is None else int(num_samples))
        finally:
            self._torch_sync()

    def stop(self):
        try:
            self._c.stop()
        finally:
            self._torch_end()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    @property
    def step_num(self):
        return self._c.step_num()

    @property
    def current_state(self):
        return ProfilerState(self._c.state())

    def step_info(self, unit=None):
        """Averages since the previous call: " reader_cost: ... batch_cost: ... ips: ...\""""
        return self._c.step_info(unit)

    def bench_summary(self):
        """The Perf Summary figures (a dict; times in seconds)."""
        return self._c.bench_summary()

    def export(self, path="", format="json"):
        """Write the last window to `path`: format "json" (Chrome) or any opscope exporter."""
        if not self.last_trace:
            return
        fmt = "chrome" if format == "json" else format
        _opscope.export(self.last_trace, path, fmt)

    def summary(self, sorted_by=SortedKeys.CPUTotal, op_detail=True, thread_sep=False,
                time_unit="ms", views=None, file=None):
        """Print the summary tables of the last recorded window (paddle.profiler's summary()),
        made by the same C code as `opscope report`. views: None for all, a view name or a
        list of them ("overview", "model", "operator", "kernel", "step", ...). Returns the
        text too. Under `opscope record` the windows go into the one recording of the
        process, and the summary is that recording's so far."""
        path = self.last_trace or _opscope.recording_path()
        if not path:
            raise RuntimeError("opscope: summary() needs a recorded window (none is complete)")
        if isinstance(views, str):
            views = [views]
        text = _opscope.report(path, ",".join(views) if views else None,
                               SortedKeys(sorted_by).name, bool(op_detail), bool(thread_sep),
                               time_unit, "text")
        print(text, end="", file=file if file is not None else sys.stdout)
        return text


class RecordEvent:
    """A user range (paddle.profiler.RecordEvent, torch.profiler.record_function): a context
    manager, a decorator, or begin()/end(). Records only while a session records."""

    def __init__(self, name, event_type=TracerEventType.PythonUserDefined):
        self.name = name
        self.event_type = TracerEventType(event_type)
        self._token = 0

    def begin(self):
        self._token = _opscope.range_begin(int(self.event_type), self.name)

    def end(self):
        _opscope.range_end(self._token)
        self._token = 0

    def __enter__(self):
        self.begin()
        return self

    def __exit__(self, *exc):
        self.end()
        return False

    def __call__(self, fn):
        name, cat = self.name, int(self.event_type)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            token = _opscope.range_begin(cat, name)
            try:
                return fn(*args, **kwargs)
            finally:
                _opscope.range_end(token)
        return wrapper


def wrap_loader(iterable):
    """Yield from `iterable`, timing each fetch as reader cost of the active profiler (what
    paddle's DataLoader does with its before_reader/after_reader hooks)."""
    it = iter(iterable)
    while True:
        _opscope.reader_begin()
        try:
            item = next(it)
        except StopIteration:
            _opscope.reader_end()
            return
        _opscope.reader_end()
        yield item
