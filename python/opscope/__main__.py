"""python -m opscope [-o out.prof] [-s sort] [--no-builtins] [-m module | script.py] [args...]:
run a program under the function profiler, like python -m cProfile. --no-builtins counts Python
functions only, at a fraction of the cost per call (FunctionProfiler(builtins=False))."""

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
    ap.add_argument("-m", dest="module", action="store_true", help="run a library module")
    ap.add_argument("target", help="script (or module with -m)")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    opts = ap.parse_args(argv)

    sys.argv[:] = [opts.target] + opts.args
    if opts.module:
        run = lambda: runpy.run_module(opts.target, run_name="__main__", alter_sys=True)
    else:
        path = os.path.abspath(opts.target)
        sys.path.insert(0, os.path.dirname(path))
        run = lambda: runpy.run_path(path, run_name="__main__")

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


if __name__ == "__main__":
    main()
