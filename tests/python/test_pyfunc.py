"""The C function profiler: exact cProfile counts read back through pstats, callers, builtins,
threads started later, the table, python -m opscope, PythonFunction ranges."""
import os
import pstats
import subprocess
import sys
import threading

import opscope

HERE = os.path.abspath(__file__)


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def leaf():
    return len("abc")


def caller_one():
    return leaf()


def caller_two():
    leaf()
    return leaf()


def key(fn):
    return (HERE, fn.__code__.co_firstlineno, fn.__name__)


def profile(fn):
    p = opscope.FunctionProfiler()
    with p:
        fn()
    return p


def test_counts_read_back_by_pstats(tmp_path):
    def work():
        fib(10)
        caller_one()
        caller_two()

    p = profile(work)
    path = str(tmp_path / "out.prof")
    p.dump_stats(path)
    st = pstats.Stats(path).stats
    cc, nc, tt, ct, callers = st[key(fib)]
    assert (nc, cc) == (177, 1)
    assert ct >= tt > 0
    # (nc, cc) along the recursive edge: primitive = the 2 calls made by the outermost fib
    assert callers[key(fib)][:2] == (176, 2)  # what cProfile gives too
    cc, nc, tt, ct, callers = st[key(leaf)]
    assert (nc, cc) == (3, 3)
    assert callers[key(caller_one)][:2] == (1, 1)
    assert callers[key(caller_two)][:2] == (2, 2)
    ln = ("~", 0, "<built-in method builtins.len>")
    assert st[ln][:2] == (3, 3)
    assert st[ln][4][key(leaf)][:2] == (3, 3)


def test_pstats_from_object_and_table(capsys):
    p = profile(lambda: fib(6))
    s = pstats.Stats(p)
    assert s.stats[key(fib)][1] == 25
    p.print_stats("cumulative")
    out = capsys.readouterr().out
    assert "function calls (" in out and "primitive calls) in" in out
    assert "ncalls  tottime  percall  cumtime  percall filename:lineno(function)" in out
    assert "25/1" in out
    p.print_callers()
    p.print_callees()
    out = capsys.readouterr().out
    assert "was called by..." in out and "called..." in out


def test_threads_started_after_enable():
    seen = threading.Event()

    def body():
        fib(7)
        seen.set()

    p = opscope.FunctionProfiler()
    with p:
        t = threading.Thread(target=body)
        t.start()
        t.join()
    assert seen.is_set()
    assert p.stats[key(fib)][1] == 41  # calls of fib(7)


def test_existing_thread_is_captured():
    go, done = threading.Event(), threading.Event()

    def body():
        go.wait()
        fib(5)
        done.set()

    t = threading.Thread(target=body)
    t.start()
    p = opscope.FunctionProfiler()
    with p:
        go.set()
        done.wait(10)
    t.join()
    assert p.stats[key(fib)][1] == 15


def test_per_thread_recursion_not_mixed():
    b = threading.Barrier(2)

    def body():
        b.wait()
        fib(8)

    p = opscope.FunctionProfiler()
    with p:
        ts = [threading.Thread(target=body) for _ in range(2)]
        [t.start() for t in ts]
        [t.join() for t in ts]
    cc, nc = p.stats[key(fib)][:2]
    assert (nc, cc) == (2 * 67, 2)


def test_accumulates_like_cprofile():
    p = opscope.FunctionProfiler()
    with p:
        fib(3)
    with p:
        fib(3)
    assert p.stats[key(fib)][:2] == (2, 10)


def test_ranges_into_session(tmp_path):
    out = str(tmp_path / "f.opscope")
    opscope.session_start(out)
    with opscope.profile_functions(emit_ranges=True):
        fib(4)
    opscope.session_stop()
    names = [r[0] for r in opscope.read_ranges(out) if r[1] == "PythonFunction"]
    assert sum(1 for n in names if n.startswith("fib ")) == 9


def test_python_m_opscope(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text("import sys\n"
                      "def fib(n):\n    return n if n < 2 else fib(n-1) + fib(n-2)\n"
                      "fib(10)\nprint('args', sys.argv[1:])\n")
    out = str(tmp_path / "prog.prof")
    env = dict(os.environ)
    r = subprocess.run([sys.executable, "-m", "opscope", "-o", out, str(script), "x", "y"],
                       capture_output=True, text=True, env=env, check=True)
    assert "args ['x', 'y']" in r.stdout
    st = pstats.Stats(out).stats
    k = (str(script), 2, "fib")
    assert st[k][:2] == (1, 177)
    r = subprocess.run([sys.executable, "-m", "opscope", "-s", "tottime", str(script)],
                       capture_output=True, text=True, env=env, check=True)
    assert "177/1" in r.stdout and "Ordered by: internal time" in r.stdout


def test_noop_floor_hook():
    opscope._opscope.noop_hook_start()
    try:
        assert fib(5) == 5
    finally:
        opscope._opscope.noop_hook_stop()
    assert sys.getprofile() is None


def test_emit_ranges_under_opscope_record(tmp_path, cli):
    """With emit_ranges, calls become PythonFunction ranges in the recording's file when the
    script runs under `opscope record` (the preloaded runtime records them)."""
    out = tmp_path / "pyfunc.opscope"
    code = (
        "import opscope\n"
        "def leaf():\n"
        "    return 1\n"
        "with opscope.profile_functions(emit_ranges=True):\n"
        "    for i in range(5):\n"
        "        leaf()\n"
    )
    subprocess.run([cli, "record", "-q", "-o", str(out), "--", sys.executable, "-c", code],
                   check=True)
    dump = subprocess.run([cli, "dump", str(out)], check=True, capture_output=True,
                          text=True).stdout
    leaf = [line for line in dump.splitlines()
            if " range PythonFunction " in line and "leaf" in line.split()[4]]
    assert len(leaf) == 5, dump[:2000]


def test_record_python_functions(tmp_path, cli):
    """`opscope record --python-functions -- python script.py`: no code change gives the
    function ranges in the trace and a pstats profile with exact call counts beside it."""
    import glob
    import pstats

    script = tmp_path / "calls.py"
    script.write_text("def leaf(i):\n    return i * 2\n"
                      "def mid(n):\n    return sum(leaf(i) for i in range(n))\n"
                      "for _ in range(3):\n    mid(4)\n")
    out = tmp_path / "f.opscope"
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    subprocess.run([cli, "record", "-q", "--python-functions", "-o", str(out), "--",
                    sys.executable, str(script)], check=True, env=env)
    prof = glob.glob(str(tmp_path / "f.*.pstats"))
    assert len(prof) == 1, os.listdir(tmp_path)
    st = {k[2]: v for k, v in pstats.Stats(prof[0]).stats.items()}
    assert st["mid"][:2] == (3, 3) and st["leaf"][:2] == (12, 12)
    dump = subprocess.run([cli, "dump", str(out)], check=True, capture_output=True,
                          text=True).stdout
    assert sum(" range PythonFunction leaf " in l for l in dump.splitlines()) == 12
