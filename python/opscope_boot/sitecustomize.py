"""Started by Python when ``opscope record`` put this directory first on PYTHONPATH: once the
program imports torch, its training is recorded with no code change (opscope.torch_hooks;
OPSCOPE_TORCH=0 turns it off), and with ``record --python-functions`` (OPSCOPE_PYFUNC=1, or
=python for Python functions only) every function call is a range and a cProfile-style
profile is written at exit, next to the trace (``<trace stem>.<pid>.pstats``). The
sitecustomize this one hides (Debian has one) still runs. From an installed opscope,
OPSCOPE_PYTHON_DIR names the directory of the package, appended to sys.path when the
interpreter does not search it already."""
import importlib.machinery
import importlib.util
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))


def _chain():
    for d in sys.path:
        if os.path.abspath(d or ".") == _here:
            continue
        spec = importlib.machinery.PathFinder.find_spec("sitecustomize", [d or "."])
        if spec and spec.loader:
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return


class _TorchWatcher:
    """A meta-path finder that lets torch import normally, then installs the hooks."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec("torch")
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        orig = loader.exec_module

        def exec_module(module):
            orig(module)
            try:
                from opscope import torch_hooks

                torch_hooks.install()
            except Exception as e:  # never break the program being recorded
                print("opscope: PyTorch capture not installed: %s" % e, file=sys.stderr)

        loader.exec_module = exec_module
        return spec


def _start_functions():
    import atexit

    import opscope

    builtins = os.environ.get("OPSCOPE_PYFUNC") != "python"
    prof = opscope.profile_functions(emit_ranges=True, builtins=builtins)
    prof.enable()
    out = os.environ.get("OPSCOPE_OUTPUT", "python")
    stem = out if out.endswith("/") else (out[:-8] if out.endswith(".opscope") else out) + "."
    path = (stem + "python." if out.endswith("/") else stem) + "%d.pstats" % os.getpid()

    def done():
        prof.disable()
        try:
            prof.dump_stats(path)
        except OSError as e:
            print("opscope: cannot write %s: %s" % (path, e), file=sys.stderr)

    atexit.register(done)


def _package_dir():
    d = os.environ.get("OPSCOPE_PYTHON_DIR")
    if d and os.path.realpath(d) not in {os.path.realpath(p or ".") for p in sys.path}:
        sys.path.append(d)


try:
    _package_dir()
    _chain()
    if os.environ.get("OPSCOPE_PYFUNC") in ("1", "python"):
        _start_functions()
finally:
    if os.environ.get("OPSCOPE_TORCH", "1") != "0" and "torch" not in sys.modules:
        sys.meta_path.insert(0, _TorchWatcher())
