"""The C function profiler: exact cProfile counts read back through pstats, callers, builtins,
threads started later, the table, python -m opscope, PythonFunction ranges."""
import os
import pstats
import subprocess
import sys
import threading

import pytest

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
    return profile_with(fn, True)


def profile_with(fn, builtins):
    p = opscope.FunctionProfiler(builtins=builtins)
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


def many_kinds():
    """Python and C calls, exceptions raised in C and in Python, recursion: several thousand
    calls, so the profile function's event log fills and is counted many times over."""
    for _ in range(20):
        mixed_python()
        try:
            divmod(1, 0)  # an exception out of a C function
        except ZeroDivisionError:
            pass
    return fib(15)


def all_counts(stats):
    """{function: (cc, nc, {caller: (nc, cc)})} of this file's functions and the C functions,
    without the profilers' own (their start and stop, in threading.py and opscope/)."""
    def ours(k):
        if k[0] == "~":
            return any(s in k[2] for s in ("_lsprof", "pyfunc_", "setprofile"))
        return k[0] != HERE

    return {k: (cc, nc, {c: v[:2] for c, v in callers.items() if not ours(c)})
            for k, (cc, nc, tt, ct, callers) in stats.items() if not ours(k)}


def test_counts_what_cprofile_counts_over_many_logs():
    import cProfile

    ref = cProfile.Profile()
    ref.enable()
    many_kinds()
    ref.disable()
    ref.create_stats()
    p = profile(many_kinds)
    got = all_counts(p.stats)
    assert got == all_counts(ref.stats)
    assert got[key(fib)][:2] == (21, 20 * 177 + 1973)  # 20 x fib(10), then fib(15)
    assert got[("~", 0, "<built-in method builtins.divmod>")][:2] == (20, 20)
    assert got[("~", 0, "<built-in method builtins.sorted>")][:2] == (20, 20)
    assert sum(nc for cc, nc, callers in got.values()) * 2 > 5 * 2048  # five logs or more


def test_stats_while_running_count_every_return():
    from opscope import _opscope

    _opscope.pyfunc_start()
    try:
        fib(10)  # 354 events: fewer than a log holds, so only stats can have counted them
        st = _opscope.pyfunc_stats()
    finally:
        _opscope.pyfunc_stop()
        _opscope.pyfunc_clear()
    assert st[key(fib)][:2] == (1, 177)


def loop_of_leaves(n):
    for _ in range(n):
        leaf()


def test_counting_the_log_is_not_charged_to_the_program():
    """Counting a full log takes time inside some call of the program: it must not show in
    that call's times. Each count is made to take 20 ms (a test knob) over a loop that fills
    the log 9 times (4 events per iteration) and runs in a few ms."""
    from opscope import _opscope

    _opscope._pyfunc_test_drain_ns(20_000_000)
    try:
        p = profile(lambda: loop_of_leaves(5000))
    finally:
        _opscope._pyfunc_test_drain_ns(0)
    cc, nc, tt, ct, _ = p.stats[key(loop_of_leaves)]
    assert (cc, nc) == (1, 1)
    assert p.stats[key(leaf)][:2] == (5000, 5000)
    assert ct < 0.090  # 9 counts of 20 ms would be 180 ms


def lost_middle():
    return leaf() + leaf()


def outer_of_lost():
    lost_middle()
    return fib(3)


@pytest.mark.parametrize("builtins", [True, False])
def test_a_call_that_cannot_be_counted_is_lost_with_the_calls_above_it(builtins):
    """When a function's entry cannot be made (no memory; a test knob here), its call and
    every call above it are left out, and the returns still match their calls: the caller
    and what it calls afterwards are counted exactly."""
    from opscope import _opscope

    _opscope._pyfunc_test_refuse(lost_middle.__code__)
    try:
        p = profile_with(outer_of_lost, builtins)
    finally:
        _opscope._pyfunc_test_refuse(None)
    st = p.stats
    assert key(lost_middle) not in st and key(leaf) not in st
    assert not any("builtins.len" in k[2] for k in st)  # called by leaf, above the lost call
    assert st[key(outer_of_lost)][:2] == (1, 1)
    cc, nc, tt, ct, callers = st[key(fib)]
    assert (cc, nc) == (1, 5)
    assert callers[key(outer_of_lost)][:2] == (1, 1) and callers[key(fib)][:2] == (4, 2)


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


@pytest.mark.record
def test_emit_ranges_under_opscope_record(tmp_path, cli, run_record):
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
    run_record(["-q", "-o", str(out), "--", sys.executable, "-c", code], check=True)
    dump = subprocess.run([cli, "dump", str(out)], check=True, capture_output=True,
                          text=True).stdout
    leaf = [line for line in dump.splitlines()
            if " range PythonFunction " in line and "leaf" in line.split()[4]]
    assert len(leaf) == 5, dump[:2000]


@pytest.mark.record
@pytest.mark.parametrize("which", ["", "=python"])
def test_record_python_functions(tmp_path, cli, run_record, which):
    """`opscope record --python-functions -- python script.py`: no code change gives the
    function ranges in the trace and a pstats profile with exact call counts beside it;
    with =python, Python functions only (the frame evaluator)."""
    import glob
    import pstats

    script = tmp_path / "calls.py"
    script.write_text("def leaf(i):\n    return i * 2\n"
                      "def mid(n):\n    return sum(leaf(i) for i in range(n))\n"
                      "for _ in range(3):\n    mid(4)\n")
    out = tmp_path / "f.opscope"
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    run_record(["-q", "--python-functions" + which, "-o", str(out), "--", sys.executable,
                str(script)], check=True, env=env)
    prof = glob.glob(str(tmp_path / "f.*.pstats"))
    assert len(prof) == 1, os.listdir(tmp_path)
    stats = pstats.Stats(prof[0]).stats
    st = {k[2]: v for k, v in stats.items()}
    assert st["mid"][:2] == (3, 3) and st["leaf"][:2] == (12, 12)
    builtin_sum = ("~", 0, "<built-in method builtins.sum>")
    assert (builtin_sum in stats) == (which == "")
    dump = subprocess.run([cli, "dump", str(out)], check=True, capture_output=True,
                          text=True).stdout
    lines = dump.splitlines()
    assert sum(" range PythonFunction leaf " in l for l in lines) == 12
    assert any(" range PythonFunction <built-in method builtins.sum> " in l
               for l in lines) == (which == "")


# builtins=False: Python functions only, through the frame evaluator (PEP 523).

def gen(n):
    for i in range(n):
        yield i


def fails(depth):
    if depth == 0:
        raise ValueError("deep")
    fails(depth - 1)


def catches():
    try:
        yield 1
    except KeyError:
        yield 2


async def coro():
    return 3


class Thing:
    def method(self):
        return 1

    @property
    def prop(self):
        return 2


def mixed_python():
    """Calls of every kind the interpreter evaluates: recursion, generator resumptions, an
    exception through three frames, throw() into a generator, a coroutine, a property, a
    lambda called from C, a comprehension and a class body."""
    fib(10)
    assert list(gen(5)) == [0, 1, 2, 3, 4]
    try:
        fails(3)
    except ValueError:
        pass
    g = catches()
    next(g)
    assert g.throw(KeyError) == 2
    c = coro()
    try:
        c.send(None)
    except StopIteration:
        pass
    t = Thing()
    [t.method() for _ in range(3)]
    sorted([3, 1, 2], key=lambda x: -x)

    class Local:
        pass

    return t.prop


def python_counts(stats):
    """{function: (cc, nc, {Python caller: (nc, cc)})} without C functions and without the
    profilers' own frames."""
    def ours(k):
        return k[0] == "~" or os.sep + "opscope" + os.sep in k[0]

    return {k: (cc, nc, {c: v[:2] for c, v in callers.items() if not ours(c)})
            for k, (cc, nc, tt, ct, callers) in stats.items() if not ours(k)}


def test_without_builtins_counts_what_cprofile_counts():
    import cProfile

    ref = cProfile.Profile(builtins=False)
    ref.enable()
    mixed_python()
    ref.disable()
    ref.create_stats()

    p = opscope.FunctionProfiler(builtins=False)
    with p:
        assert opscope._opscope._pyfunc_evaluator() == "eval"
        assert sys.getprofile() is None  # no profile function: nothing per instruction
        mixed_python()
    assert opscope._opscope._pyfunc_evaluator() is None  # the interpreter's own again

    got = python_counts(p.stats)
    assert got == python_counts(ref.stats)
    assert got[key(fib)][:2] == (1, 177)
    assert got[key(gen)][:2] == (6, 6)  # one call per resumption, as cProfile counts
    assert got[key(fails)][:2] == (1, 4)
    assert got[key(catches)][:2] == (3, 3)  # next, throw, and close() when it is freed
    assert [(c[2], v) for c, v in got[key(Thing.method)][2].items()] == [("<listcomp>", (3, 3))]
    assert not any(k[0] == "~" for k in p.stats)  # no C functions in this mode
    cc, nc, tt, ct, _ = p.stats[key(mixed_python)]
    assert ct >= tt > 0


def test_without_builtins_threads_old_and_new():
    go, done = threading.Event(), threading.Event()

    def waiting():
        go.wait()
        fib(5)
        done.set()

    old = threading.Thread(target=waiting)
    old.start()
    b = threading.Barrier(2)

    def racing():
        b.wait()
        fib(8)

    p = opscope.FunctionProfiler(builtins=False)
    with p:
        go.set()
        assert done.wait(10)
        new = [threading.Thread(target=racing) for _ in range(2)]
        [t.start() for t in new]
        [t.join() for t in new]
        # threads one after another: a thread state freed by one may come back for the next
        for _ in range(4):
            t = threading.Thread(target=fib, args=(4,))
            t.start()
            t.join()
    old.join()
    cc, nc = p.stats[key(fib)][:2]
    # 15 calls on the old thread, 67 on each racing one, 9 on each sequential one; one
    # outermost call per thread: recursion levels are per thread
    assert (nc, cc) == (15 + 2 * 67 + 4 * 9, 1 + 2 + 4)


def test_without_builtins_stop_and_restart_inside_frames():
    first = opscope.FunctionProfiler(builtins=False)
    second = opscope.FunctionProfiler(builtins=False)

    def inner():
        fib(3)
        first.disable()  # inner and outer are open: counted as returning now
        second.enable()
        fib(2)
        # inner returns in the second run; its call was in the first: not counted there

    def outer():
        inner()
        return fib(1)

    first.enable()
    outer()
    second.disable()
    assert first.stats[key(fib)][:2] == (1, 5)
    assert first.stats[key(inner)][:2] == (1, 1)
    assert first.stats[key(outer)][:2] == (1, 1)
    assert second.stats[key(fib)][:2] == (2, 4)  # fib(2) inside inner, fib(1) in outer
    assert key(inner) not in second.stats and key(outer) not in second.stats
    # and the profile-function mode still works after the evaluator was taken out
    assert profile(lambda: fib(4)).stats[key(fib)][:2] == (1, 9)


def test_python_m_opscope_without_builtins(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text("def fib(n):\n    return n if n < 2 else fib(n-1) + fib(n-2)\n"
                      "print(len(str(fib(10))))\n")
    out = str(tmp_path / "prog.prof")
    subprocess.run([sys.executable, "-m", "opscope", "--no-builtins", "-o", out, str(script)],
                   capture_output=True, text=True, check=True)
    st = pstats.Stats(out).stats
    assert st[(str(script), 1, "fib")][:2] == (1, 177)
    assert not any(k[0] == "~" for k in st)


def test_without_builtins_deep_recursion_raises_instead_of_crashing(tmp_path):
    """Each Python call takes C stack in this mode: recursion that a raised recursion limit
    allows must end in RecursionError, not a segfault, in the main thread and in a thread with
    a small stack; the interpreter's depth count must be intact afterwards. In a child
    process, so that a crash fails this test only."""
    script = tmp_path / "deep.py"
    script.write_text(
        "import sys, threading, opscope\n"
        "sys.setrecursionlimit(10**6)\n"
        "def down(n):\n"
        "    return 0 if n == 0 else 1 + down(n - 1)\n"
        "deepest = [0]\n"
        "def probe(n):\n"
        "    deepest[0] = max(deepest[0], n)\n"
        "    probe(n + 1)\n"
        "def attempt(label):\n"
        "    deepest[0] = 0\n"
        "    try:\n"
        "        probe(0)\n"
        "    except RecursionError:\n"
        "        print(label, 'RecursionError at', deepest[0])\n"
        "p = opscope.FunctionProfiler(builtins=False)\n"
        "with p:\n"
        "    attempt('main')\n"
        "    threading.stack_size(1 << 20)\n"
        "    t = threading.Thread(target=attempt, args=('thread',))\n"
        "    t.start(); t.join()\n"
        "    sys.setrecursionlimit(1000)\n"
        "    print('after', down(900))\n"
        "print('calls', p.stats[(__file__, 3, 'down')][:2])\n")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    lines = dict(line.split(" ", 1) for line in r.stdout.splitlines())
    main_depth = int(lines["main"].split()[-1])
    thread_depth = int(lines["thread"].split()[-1])
    assert 1000 < thread_depth < main_depth  # far deeper than the default limit
    assert lines["after"] == "900"  # the depth count was left as it was
    assert lines["calls"] == "(1, 901)"
