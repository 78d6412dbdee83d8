"""opscope.Timer: the Python counterpart of the C API's scoped timers (OPSCOPE_TIMER): per name
count, total, average, max, min, as a context manager, a decorator and start()/stop(); the
table of opscope_timers_print(); the timers written into a recording."""
import subprocess
import time

import pytest

import opscope


@pytest.fixture(autouse=True)
def fresh_timers():
    opscope.timers_reset()
    yield
    opscope.timers_reset()


def test_context_manager_decorator_and_start_stop_add_to_one_timer():
    with opscope.Timer("t_block"):
        time.sleep(0.004)

    @opscope.Timer("t_block")
    def f():
        time.sleep(0.001)
    f()
    t = opscope.Timer("t_block").start()
    time.sleep(0.002)
    ns = t.stop()
    s = opscope.timer_stats("t_block")
    assert s.count == 3
    assert s.max_ns >= 4_000_000 and 1_000_000 <= s.min_ns < 4_000_000
    assert s.min_ns <= ns <= s.max_ns
    assert s.total_ns >= 7_000_000 and s.avg_ns == pytest.approx(s.total_ns / 3)


def test_a_block_that_raises_is_still_timed():
    @opscope.Timer("t_raises")
    def boom():
        raise KeyError("x")
    with pytest.raises(KeyError):
        boom()
    with pytest.raises(ValueError):
        with opscope.Timer("t_raises"):
            raise ValueError
    assert opscope.timer_stats("t_raises").count == 2


def test_unknown_timer_table_and_reset():
    assert opscope.timer_stats("t_never_used") is None
    assert opscope.Timer("t_never_used").stats is None
    with opscope.Timer("t_table"):
        pass
    table = opscope.timers_table()
    assert "Total(ms)" in table and "t_table" in table
    opscope.timers_reset()
    assert "t_table" not in opscope.timers_table()
    with pytest.raises(RuntimeError):
        opscope.Timer("t_table").stop()
    with pytest.raises(ValueError):
        opscope.Timer("")


def test_timers_are_written_into_the_recording(tmp_path, cli):
    path = str(tmp_path / "timers.opscope")
    opscope.session_start(path)
    for _ in range(5):
        with opscope.Timer("t_recorded"):
            time.sleep(0.001)
    opscope.session_stop()
    out = subprocess.run([cli, "info", path], check=True, stdout=subprocess.PIPE,
                         text=True).stdout
    line = [l for l in out.splitlines() if l.strip().startswith("t_recorded")]
    assert line and line[0].split()[1] == "5", out
