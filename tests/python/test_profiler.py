"""The step profiler: scheduler states (SPEC-seeds 1.2-1.4 worked examples), on_trace_ready
timing, windows and files, RecordEvent ranges, timer-only numbers."""
import os
import subprocess
import time

import pytest

import opscope
from opscope import ProfilerState as S


def states(sched, n):
    return [sched(i) for i in range(n)]


def windows(fn, n):
    """[first, last] step of each recorded window of a state function."""
    out, start = [], None
    for i in range(n):
        s = fn(i)
        if s in (S.RECORD, S.RECORD_AND_RETURN) and start is None:
            start = i
        if s == S.RECORD_AND_RETURN:
            out.append([start, i])
            start = None
    return out


def test_make_scheduler_repeat1():
    sch = opscope.make_scheduler(closed=1, ready=1, record=4, repeat=1)
    assert states(sch, 8) == [S.CLOSED, S.READY, S.RECORD, S.RECORD, S.RECORD,
                              S.RECORD_AND_RETURN, S.CLOSED, S.CLOSED]


def test_make_scheduler_skip_first():
    sch = opscope.make_scheduler(closed=1, ready=1, record=4, skip_first=1)
    assert windows(sch, 20) == [[3, 6], [9, 12], [15, 18]]


def test_make_scheduler_repeat3():
    sch = opscope.make_scheduler(closed=1, ready=1, record=3, repeat=3)
    assert [i for i in range(30) if sch(i) == S.READY] == [1, 6, 11]
    assert windows(sch, 30) == [[2, 4], [7, 9], [12, 14]]


def test_make_scheduler_invalid():
    with pytest.raises(ValueError):
        opscope.make_scheduler(closed=1, ready=1, record=0)
    with pytest.raises(ValueError):
        opscope.make_scheduler(closed=-1, ready=1, record=1)


def run_loop(n, **kw):
    log = []

    def ready(prof):
        log.append(("ready", prof.step_num, prof.last_trace))

    prof = opscope.Profiler(on_trace_ready=ready, **kw)
    prof.start()
    for i in range(n):
        log.append((i, prof.current_state))
        with opscope.RecordEvent("work"):
            pass
        prof.step()
    prof.stop()
    return log


def test_tuple_scheduler_and_ready_timing(tmp_path):
    log = run_loop(10, scheduler=(2, 5), output=str(tmp_path) + "/")
    st = [e[1] for e in log if e[0] != "ready"]
    assert st == [S.CLOSED, S.READY, S.RECORD, S.RECORD, S.RECORD_AND_RETURN] + [S.CLOSED] * 5
    ready = [e for e in log if e[0] == "ready"]
    assert len(ready) == 1
    # fired inside the step() that ends iteration 4: right after (4, R&R), step_num 5
    idx = log.index(ready[0])
    assert log[idx - 1] == (4, S.RECORD_AND_RETURN) and ready[0][1] == 5
    assert os.path.exists(ready[0][2]) and ready[0][2].startswith(str(tmp_path))
    names = [r[0] for r in opscope.read_ranges(ready[0][2])]
    assert names.count("work") == 3
    assert [n for n in names if n.startswith("ProfileStep")] == [
        "ProfileStep#2", "ProfileStep#3", "ProfileStep#4"]


def test_callable_scheduler_from_python(tmp_path):
    calls = []

    def sched(step):
        calls.append(step)
        return S.RECORD_AND_RETURN if step == 1 else S.CLOSED

    log = run_loop(4, scheduler=sched, output=str(tmp_path) + "/")
    assert 0 in calls and 3 in calls
    ready = [e for e in log if e[0] == "ready"]
    assert len(ready) == 1 and ready[0][1] == 2


def test_scheduler_exception_propagates(tmp_path):
    def sched(step):
        if step == 2:
            raise KeyError("boom")
        return S.CLOSED

    prof = opscope.Profiler(scheduler=sched, output=str(tmp_path) + "/")
    prof.start()
    prof.step()
    with pytest.raises(KeyError):
        prof.step()
    prof.stop()


def test_default_scheduler_one_window_at_stop(tmp_path):
    log = run_loop(3, output=str(tmp_path) + "/")
    ready = [e for e in log if e[0] == "ready"]
    assert len(ready) == 1 and ready[0][1] == 3  # handed out by stop()


def test_export_chrome_tracing(tmp_path):
    d = str(tmp_path / "chrome")
    handler = opscope.export_chrome_tracing(d)
    assert os.path.isdir(d)  # created eagerly, like paddle
    with opscope.Profiler(scheduler=(1, 3), on_trace_ready=handler) as prof:
        for _ in range(4):
            with opscope.RecordEvent("fwd", opscope.TracerEventType.Forward):
                pass
            prof.step()
    import json
    files = sorted(os.listdir(d))
    assert any(f.endswith(".opscope") for f in files)
    js = [f for f in files if f.endswith(".json")]
    assert len(js) == 1
    doc = json.load(open(os.path.join(d, js[0])))
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    assert any(e.get("name") == "fwd" for e in events)


def test_record_event_forms_and_dump(tmp_path, cli):
    out = str(tmp_path / "run.opscope")
    opscope.session_start(out)

    @opscope.RecordEvent("decorated")
    def f():
        return 7

    assert f() == 7
    ev = opscope.RecordEvent("manual", opscope.TracerEventType.Dataloader)
    ev.begin()
    ev.end()
    with opscope.RecordEvent("ctx"):
        pass
    opscope.session_stop()
    ranges = {(r[0], r[1]) for r in opscope.read_ranges(out)}
    assert {("decorated", "PythonUserDefined"), ("manual", "Dataloader"),
            ("ctx", "PythonUserDefined")} <= ranges
    dump = subprocess.run([cli, "dump", out], capture_output=True, text=True, check=True)
    for name in ("decorated", "manual", "ctx"):
        assert name in dump.stdout


def test_record_event_outside_session_is_noop():
    ev = opscope.RecordEvent("nothing")
    ev.begin()
    ev.end()  # must not end a range of a session that started later
    assert not opscope.session_active()


def test_timer_only_reader_cost(tmp_path, capfd):
    sleep_reader, sleep_step = 0.004, 0.002
    prof = opscope.Profiler(timer_only=True, skip_steps=-1, output=str(tmp_path / "no") + "/")

    def loader():
        for i in range(12):
            time.sleep(sleep_reader)
            yield i

    prof.start()
    infos = []
    for _ in opscope.wrap_loader(loader()):
        time.sleep(sleep_step)
        prof.step(num_samples=8)
        infos.append(prof.step_info("images"))
    prof.stop()
    s = prof.bench_summary()
    assert s["steps"] == 12
    # bounds that hold however loaded the machine is (no wall-clock upper bounds): a sleep
    # lasts at least its time, a batch holds its reader wait, and the average of per-step
    # rates is at least the rate of the average batch (1/x is convex)
    assert s["reader_avg_s"] >= 0.8 * sleep_reader
    batch = sleep_reader + sleep_step
    assert s["batch_avg_s"] >= 0.8 * batch
    assert s["batch_avg_s"] >= s["reader_avg_s"]
    assert s["samples_mode"]
    assert 8 / s["batch_avg_s"] * 0.99 <= s["ips_avg"] <= 8 / (0.8 * batch) * 1.01
    assert "reader_cost" in infos[-1] and "images/s" in infos[-1]
    assert not os.path.exists(str(tmp_path / "no"))  # timer_only writes no files
    assert "Perf Summary" in capfd.readouterr().out


def test_targets_gpu_warns(monkeypatch):
    # no CUPTI to be had: GPU is dropped with a warning (a real libcupti without a driver
    # says the same, with CUPTI's error)
    monkeypatch.setenv("OPSCOPE_CUPTI_LIB", "/nonexistent/libcupti.so.13")
    with pytest.warns(UserWarning, match="not supported"):
        p = opscope.Profiler(targets=[opscope.ProfilerTarget.CPU, opscope.ProfilerTarget.GPU],
                             timer_only=True)
    assert p.targets == [opscope.ProfilerTarget.CPU]


def test_targets_gpu_with_cupti(tmp_path):
    """ProfilerTarget.GPU starts the CUPTI collector: here the fake libcupti (a test double,
    tests/doubles/fake_cupti/), in a child process (the collector is process-wide)."""
    import subprocess
    import sys

    cli = os.environ.get("OPSCOPE_CLI", "")
    fake = os.path.join(os.path.dirname(cli), "tests", "fake_cupti", "libcupti.so.13")
    if not cli or not os.path.exists(fake):
        pytest.skip("no fake libcupti in this build (no cupti.h)")
    code = ("import warnings, opscope\n"
            "warnings.simplefilter('error')\n"
            "p = opscope.Profiler(targets=[opscope.ProfilerTarget.CPU, "
            "opscope.ProfilerTarget.GPU], timer_only=True)\n"
            "print([t.name for t in p.targets])\n")
    env = dict(os.environ, OPSCOPE_CUPTI_LIB=fake)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['CPU', 'GPU']"


def test_summary_without_a_window():
    p = opscope.Profiler(timer_only=True)
    with pytest.raises(RuntimeError):
        p.summary()


@pytest.mark.record
def test_opscope_record_sees_python_ranges(tmp_path, cli, run_record):
    """Under `opscope record` the preloaded runtime records; RecordEvent must reach its file
    (the module forwards to it instead of its own copy)."""
    import sys

    out = tmp_path / "rec.opscope"
    code = (
        "import opscope\n"
        "assert opscope._opscope.PRELOADED_RUNTIME == 1\n"
        "for i in range(7):\n"
        "    with opscope.RecordEvent('py-range'):\n"
        "        pass\n"
    )
    env = dict(os.environ)
    run_record(["-q", "-o", str(out), "--", sys.executable, "-c", code], check=True, env=env)
    dump = subprocess.run([cli, "dump", str(out)], check=True, capture_output=True,
                          text=True).stdout
    assert sum(1 for line in dump.splitlines()
               if line.split()[2:3] == ["range"] and line.split()[4:5] == ["py-range"]) == 7


@pytest.mark.record
def test_profiler_windows_under_opscope_record(tmp_path, cli, run_record):
    """Under `opscope record` the whole process is one recording: a Profiler in the script
    marks its steps in that file (ProfileStep ranges with the step's RecordEvents inside),
    writes no window files of its own, says so once, and summary() reports the recording."""
    import sys

    out = tmp_path / "rec.opscope"
    windows = tmp_path / "windows"
    code = (
        "import time, opscope\n"
        "p = opscope.Profiler(scheduler=(1, 3), on_trace_ready=opscope.export_opscope(%r))\n"
        "p.start()\n"
        "for i in range(4):\n"
        "    with opscope.RecordEvent('work'):\n"
        "        time.sleep(0.002)\n"
        "    p.step(num_samples=4)\n"
        "p.stop()\n"
        "p.summary(views='userdefined')\n" % str(windows)
    )
    r = run_record(["-q", "-o", str(out), "--", sys.executable, "-c", code], check=True,
                   capture_output=True, text=True)
    assert "already recording" in r.stderr
    assert not windows.exists() or not os.listdir(windows)
    row = [l for l in r.stdout.splitlines() if l.startswith("work ")]
    assert row and row[0].split()[1] == "4", r.stdout
    dump = subprocess.run([cli, "dump", str(out)], check=True, capture_output=True,
                          text=True).stdout.splitlines()
    # four steps ended by step(num_samples=4); a fifth runs from the last step() to stop()
    steps = [l for l in dump if " range ProfileStep " in l]
    work = [l for l in dump if " range PythonUserDefined work " in l]
    assert len(steps) == 5 and sum("num_samples=4" in l for l in steps) == 4
    assert len(work) == 4
    assert all(l.split("depth=")[1].split()[0] == "1" for l in work)


def test_summary_prints_the_report_tables(tmp_path, capsys):
    """summary() prints the tables of the last window through the C report code: a user range
    of known length, steps with num_samples (the Perf Summary)."""
    import time

    import opscope

    p = opscope.Profiler(on_trace_ready=opscope.export_opscope(str(tmp_path)))
    p.start()
    for _ in range(3):
        with opscope.RecordEvent("work"):
            time.sleep(0.01)
        p.step(num_samples=8)
    p.stop()
    text = p.summary(views=["overview", "userdefined", "perf"], sorted_by=opscope.SortedKeys.CPUMin)
    assert capsys.readouterr().out == text
    assert "-Overview Summary-" in text and "-Perf Summary-" in text
    assert "-Model Summary-" not in text  # only the views asked for
    row = [l for l in text.splitlines() if l.startswith("work ")][0]
    calls, total = row.split()[1], float(row.split()[2])
    # three sleeps of at least 10 ms, in ms; no upper bound: a loaded machine may take longer
    assert calls == "3" and total >= 30.0
    ips = [l for l in text.splitlines() if l.startswith("ips ")][0]
    assert 0 < float(ips.split()[1]) < 8 / 0.01  # a step is at least one sleep
    with pytest.raises(ValueError):
        p.summary(time_unit="hours")


def test_profile_memory_warns_until_memory_is_recorded(tmp_path):
    # accepted silently, it handed back a profile without memory and no word of it
    with pytest.warns(UserWarning, match="profile_memory"):
        opscope.Profiler(profile_memory=True, output=str(tmp_path) + "/")
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opscope.Profiler(profile_memory=False, output=str(tmp_path) + "/")
