"""PyTorch training recorded with no code change.

``install()`` (called by ``opscope record`` through ``opscope_boot/sitecustomize.py`` once the
program imports torch, or by hand) records into the session that is running:

- every operator, backward function and ``record_function`` label through the C++ observer
  ``libopscope_torch.so`` (a global RecordFunction callback: name, sequence number, input
  shapes and dtypes); torch's own labels give the Dataloader (``enumerate(DataLoader)...``)
  and Optimization (``Optimizer.step#...``, ``Optimizer.zero_grad#...``) phases;
- Forward: the outermost ``nn.Module`` call of each thread, and the module hierarchy (one range
  per module call, named after the module's class), by a C wrapper of ``nn.Module.__call__``;
- Backward: ``torch.autograd.backward`` (``loss.backward()`` goes through it);
- a ProfileStep per batch: each ``next()`` on a DataLoader iterator ends the step before it
  (with its batch size as ``num_samples``) and begins the next; the end of the data ends the
  last step of the epoch. Not while an ``opscope.Profiler`` runs: its ``step()`` makes the
  steps.

``opscope.Profiler`` installs the capture itself when the program has imported torch (its
``record_shapes`` chooses shapes), without the DataLoader steps, and switches the operator
callback on only in its windows: operators of closed steps run without RecordFunction's cost,
as under torch.profiler. At ``stop()`` it uninstalls what it installed.
"""
import ctypes
import os
import threading

from . import _opscope
from .profiler import TracerEventType

CAT_BACKWARD = int(TracerEventType.Backward)  # the category's number, defined once there

_lock = threading.Lock()
_installed = False
_observer = None
_undo = []  # what uninstall() calls, last installed first
_profilers = 0  # running opscope.Profiler objects: they drive the steps


def profiler_driven(delta):
    """A Profiler started (+1) or stopped (-1): while one runs, its step() makes the steps
    and DataLoader batches do not (two step counts would split every step in two)."""
    global _profilers
    with _lock:
        _profilers = max(_profilers + delta, 0)


def _batch_size(batch):
    """The number of samples of a batch: the first dimension of its first tensor."""
    seen = 0
    while isinstance(batch, (list, tuple)) and batch and seen < 4:
        batch, seen = batch[0], seen + 1
    if isinstance(batch, dict) and batch:
        batch = next(iter(batch.values()))
    shape = getattr(batch, "shape", None)
    return int(shape[0]) if shape is not None and len(shape) else -1


def _install_steps(torch):
    from torch.utils.data import dataloader

    base = dataloader._BaseDataLoaderIter
    orig = base.__next__
    state = {"last": None}

    def __next__(self):
        if _profilers:
            return orig(self)
        # the batch fetched now starts a step: the previous one ends with its sample count;
        # when the data runs out, the step ends and none begins
        last = state["last"]
        state["last"] = None
        n = -1 if last is None else last
        try:
            at_end = self._num_yielded >= len(self)
        except (TypeError, AttributeError):  # an iterable dataset: its length is unknown
            at_end = False
        if at_end:
            _opscope.step_end(n)
        else:
            _opscope.step(n)
        try:
            batch = orig(self)
        except StopIteration:
            if not at_end:
                _opscope.step_end(-1)
            raise
        state["last"] = _batch_size(batch)
        return batch

    base.__next__ = __next__
    _undo.append(lambda: setattr(base, "__next__", orig))


def _install_modules(torch):
    # a C wrapper in place of Module.__call__ (_modules.c): global forward hooks would send
    # every module call down the slow path of Module._call_impl
    module = torch.nn.Module
    orig = module.__call__
    module.__call__ = _opscope.ModuleCall(orig)
    _undo.append(lambda: setattr(module, "__call__", orig))


def _install_backward(torch):
    orig = torch.autograd.backward

    def backward(*args, **kwargs):
        token = _opscope.range_begin(CAT_BACKWARD, "backward")
        try:
            return orig(*args, **kwargs)
        finally:
            _opscope.range_end(token)

    torch.autograd.backward = backward
    _undo.append(lambda: setattr(torch.autograd, "backward", orig))


def observer_path():
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "libopscope_torch.so")


def install(shapes=True, phases=True, steps=True):
    """Record PyTorch operators (and, with phases, the Forward and Backward phases and the
    module hierarchy; with steps too, a ProfileStep per DataLoader batch). Returns True when
    the operator observer is active. A second call changes nothing."""
    global _installed, _observer
    with _lock:
        if _installed:
            return _observer is not None
        import torch

        path = observer_path()
        if os.path.exists(path):
            lib = ctypes.CDLL(path)
            lib.opscope_torch_enable.argtypes = [ctypes.c_void_p, ctypes.c_int]
            lib.opscope_torch_set_active.argtypes = [ctypes.c_int]
            lib.opscope_torch_ops.restype = ctypes.c_uint64
            lib.opscope_torch_idle_calls.restype = ctypes.c_uint64
            lib.opscope_torch_cache_misses.restype = ctypes.c_uint64
            if lib.opscope_torch_enable(_opscope.torch_api(), 1 if shapes else 0) == 0:
                _observer = lib
        if phases:
            if steps:
                _install_steps(torch)
            _install_modules(torch)
            _install_backward(torch)
        _installed = True
        return _observer is not None


def installed():
    """True between install() and uninstall()."""
    return _installed


def set_active(on):
    """Switch the operator observer's callback off or on in torch (the Profiler's windows):
    off, operators run without RecordFunction's cost."""
    with _lock:
        if _observer is not None:
            _observer.opscope_torch_set_active(1 if on else 0)


def uninstall():
    """Undo install(): the observer off, torch's functions and hooks as they were."""
    global _installed, _observer
    with _lock:
        if _observer is not None:
            _observer.opscope_torch_disable()
        while _undo:
            _undo.pop()()
        _installed, _observer = False, None


def ops_seen():
    """Operators recorded by the observer so far (0 without it)."""
    return int(_observer.opscope_torch_ops()) if _observer is not None else 0


def idle_calls():
    """Operator callbacks that ran while nothing recorded, so far (0 without the observer)."""
    return int(_observer.opscope_torch_idle_calls()) if _observer is not None else 0


def cache_misses():
    """Operator names interned and input lists formatted by the observer so far (0 without
    it): after a training loop's first step, its operators find both in the caches."""
    return int(_observer.opscope_torch_cache_misses()) if _observer is not None else 0
