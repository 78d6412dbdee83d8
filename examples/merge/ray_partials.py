#!/usr/bin/env python3
"""ray_partials.py: the partial summary of every trace file of a directory, one Ray task per
file, then `opscope merge` of them (docs/merge.md). Without Ray installed it maps with
multiprocessing.Pool instead (the same function, on this machine's CPUs), so the example can
be tried anywhere.

  python3 examples/merge/ray_partials.py TRACE_DIR PARTIAL_DIR > report.txt
  OPSCOPE=build/dev/opscope python3 examples/merge/ray_partials.py ...
"""
import os
import subprocess
import sys

OPSCOPE = os.environ.get("OPSCOPE", "opscope")


def partial(args):
    """One file's partial: run where the file is; returns the partial's path."""
    trace, out_dir = args
    out = os.path.join(out_dir, os.path.basename(trace) + ".partial")
    subprocess.run([OPSCOPE, "report", "--format", "partial", "-o", out, trace], check=True)
    return out


def main():
    trace_dir, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    jobs = [(os.path.join(trace_dir, f), out_dir) for f in sorted(os.listdir(trace_dir))]
    try:
        import ray
    except ImportError:
        ray = None
    if ray is not None:
        ray.init()
        task = ray.remote(partial)
        parts = ray.get([task.remote(j) for j in jobs])
    else:
        import multiprocessing
        with multiprocessing.Pool() as pool:
            parts = pool.map(partial, jobs)
    # the merge reads only the partials: small, bounded by names and steps, not events
    sys.exit(subprocess.run([OPSCOPE, "merge", *parts]).returncode)


if __name__ == "__main__":
    main()
