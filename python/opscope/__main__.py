"""python -m opscope [-o out.prof] [-s sort] [--no-builtins] [-m module | script.py] [args...]:
run a program under the function profiler, like python -m cProfile. --no-builtins counts Python
functions only, at a fraction of the cost per call (FunctionProfiler(builtins=False)).

python -m opscope --sample[=HZ] [--sample-mode cpu|wall] [-o trace.opscope] script.py ...:
sample the stacks of every thread instead (docs/sampling.md), record them into a trace file
and print its samples view (top functions, callers and callees)."""

import argparse
import os
import runpy
import sys

from .pyfunc import FunctionProfiler


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="python -m opscope",
        usage="python -m opscope [-o output_file] [-s sort] [--no-builtins] "
              "[-m module | scriptfile] [arg] ...")
    ap.add_argument("-o", "--outfile", help="write the pstats file here instead of printing")
    ap.add_argument("-s", "--sort", default=-1,
                    help="sort order of the table (pstats keys: tottime, cumulative, ...)")
    ap.add_argument("--no-builtins", dest="builtins", action="store_false",
                    help="Python functions only: time in C functions stays with their caller")
    ap.add_argument("--sample", nargs="?", const=99, type=int, metavar="HZ",
                    help="sample stacks at HZ (default 99) into a trace instead of profiling "
                    "every call; -o names the trace")
    ap.add_argument("--sample-mode", choices=("cpu", "wall"), default="cpu",
                    help="with --sample: on-CPU time (default) or wall-clock, waits included")
    ap.add_argument("-m", dest="module", action="store_true", help="run a library module")
    ap.add_argument("target", help="script (or module with -m)")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    opts = ap.parse_args(_bare_sample(sys.argv[1:] if argv is None else list(argv)))

    sys.argv[:] = [opts.target] + opts.args
    if opts.module:
        run = lambda: runpy.run_module(opts.target, run_name="__main__", alter_sys=True)
    else:
        path = os.path.abspath(opts.target)
        sys.path.insert(0, os.path.dirname(path))
        run = lambda: runpy.run_path(path, run_name="__main__")

    if opts.sample is not None:
        return _sample(opts, run)

    prof = FunctionProfiler(builtins=opts.builtins)
    try:
        with prof:
            run()
    except SystemExit:
        pass
    finally:
        if opts.outfile:
            prof.dump_stats(opts.outfile)
        else:
            sort = opts.sort
            try:
                sort = int(sort)
            except ValueError:
                pass
            prof.print_stats(sort)


def _bare_sample(argv):
    """`--sample script.py`: a bare --sample is the default rate, not a rate named script.py
    (argparse would take the script for the optional value)."""
    out = list(argv)
    takes_value = {"-o", "--outfile", "-s", "--sort", "--sample-mode"}
    i = 0
    while i < len(out):
        a = out[i]
        if a == "--sample":
            out[i] = "--sample=99"
        elif a in takes_value:
            i += 1
        elif not a.startswith("-") or a == "-m":
            break  # the script (or -m module): what follows is the program's
        i += 1
    return out


def _sample(opts, run):
    """Run under a session that samples stacks; then print the samples view of its file."""
    from . import _opscope

    if opts.sample <= 0:
        sys.exit("python -m opscope: --sample needs a rate > 0")
    path = _opscope.session_start(output=opts.outfile, sample_hz=opts.sample,
                                  sample_mode=opts.sample_mode)
    try:
        run()
    except SystemExit:
        pass
    finally:
        _opscope.session_stop()
        sys.stdout.write(_opscope.report(path, views="samples"))
        sys.stderr.write("opscope: trace written to %s\n" % path)


if __name__ == "__main__":
    main()
