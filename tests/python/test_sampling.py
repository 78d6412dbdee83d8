"""CPU stack sampling from Python (docs/sampling.md): `python -m opscope --sample`, the
Profiler's CPU_SAMPLING target and session_start(sample_hz=...). Each test reads the samples
back through the report's JSON, as a user's script would."""
import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

import opscope
from opscope import ProfilerTarget, _opscope


def samples_of(path):
    """(number of samples, their total weight) in a trace; (0, 0) when it has none (the view
    then says so, without totals)."""
    report = json.loads(_opscope.report(str(path), views="samples", format="json"))
    for table in report["tables"]:
        if table["view"] == "samples" and "totals" in table:
            return table["totals"]["samples"], table["totals"]["weight"]
    return 0, 0


def function_row(path, name):
    """The samples view's row of function `name` (flat, cum, ...), or None."""
    report = json.loads(_opscope.report(str(path), views="samples", format="json"))
    for table in report["tables"]:
        if table["view"] == "samples":
            for row in table["rows"]:
                if row["name"] == name:
                    return row
    return None


def burn(seconds_of_cpu):
    """Spend about that much CPU time in Python."""
    end = time.process_time() + seconds_of_cpu
    s = 0
    while time.process_time() < end:
        for i in range(10000):
            s += i * i
    return s

SCRIPT = textwrap.dedent("""
    import time
    def hot():
        end = time.process_time() + 0.4
        s = 0
        while time.process_time() < end:
            for i in range(10000):
                s += i * i
        return s
    hot()
    print("script done")
""")


def run_module(args, tmp_path):
    env = dict(os.environ, OPSCOPE_QUIET="1")
    return subprocess.run([sys.executable, "-m", "opscope", *args], cwd=tmp_path, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=300)


@pytest.mark.parametrize("form", [["--sample=499"], ["--sample"]])
def test_python_m_opscope_sample(tmp_path, form):
    script = tmp_path / "prog.py"
    script.write_text(SCRIPT)
    trace = tmp_path / "prog.opscope"
    r = run_module([*form, "-o", str(trace), str(script)], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "script done" in r.stdout  # the program ran, with its own output
    assert "Samples: Top Functions" in r.stdout  # then the samples view of its trace
    assert str(trace) in r.stderr
    n, weight = samples_of(trace)
    # 0.4 s of CPU: about 200 samples at 499 Hz, about 40 at the default 99 Hz
    assert n >= (50 if form == ["--sample=499"] else 10), r.stdout
    assert weight >= n
    # the script's Python function is a frame of the stacks (CPython 3.11: pystack.c), on
    # most of the samples' stacks (cum); the rest is start-up and import
    if sys.version_info[:2] == (3, 11):
        hot = function_row(trace, "hot")
        assert hot is not None, r.stdout
        assert hot["cum"] >= weight // 2, (hot, weight)


def test_python_m_opscope_sample_bad_rate(tmp_path):
    r = run_module(["--sample=0", str(tmp_path / "none.py")], tmp_path)
    assert r.returncode != 0
    assert "--sample needs a rate > 0" in r.stderr


def test_profiler_cpu_sampling_target(tmp_path):
    prof = opscope.Profiler(targets=[ProfilerTarget.CPU, ProfilerTarget.CPU_SAMPLING],
                            sample_hz=499, scheduler=(1, 3), output=str(tmp_path) + "/")
    with prof:
        for _ in range(4):
            burn(0.15)
            prof.step()
    assert prof.last_trace and os.path.exists(prof.last_trace)
    n, _ = samples_of(prof.last_trace)
    assert n >= 40  # steps 1 and 2: 0.3 s of CPU at 499 Hz, about 150


def test_profiler_without_sampling_target_has_no_samples(tmp_path):
    prof = opscope.Profiler(scheduler=(0, 1), output=str(tmp_path) + "/")
    with prof:
        burn(0.1)
        prof.step()
    assert samples_of(prof.last_trace) == (0, 0)


def test_profiler_sampling_options_checked():
    with pytest.raises(ValueError):
        opscope.Profiler(sample_hz=0)
    with pytest.raises(ValueError):
        opscope.Profiler(sample_hz=99, sample_mode="idle")


def test_session_start_samples_wall_mode(tmp_path):
    path = _opscope.session_start(output=str(tmp_path / "w.opscope"), sample_hz=199,
                                  sample_mode="wall")
    try:
        time.sleep(0.3)  # waiting: wall-clock mode samples it anyway
    finally:
        _opscope.session_stop()
    n, _ = samples_of(path)
    assert n >= 10  # 0.3 s at 199 Hz: about 60 for this thread
