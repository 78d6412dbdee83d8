"""pytest setup: the package must come from the build (PYTHONPATH=<build>/python); the CLI
(for `opscope dump`) from $OPSCOPE_CLI when set. Tests marked `record` run programs under
`opscope record`, which preloads libopscope: scripts/test.sh leaves them out of its run of the
sanitized extension (the ASan runtime has to come first in LD_PRELOAD there)."""
import os
import shutil
import signal
import subprocess

import pytest


@pytest.fixture
def cli():
    path = os.environ.get("OPSCOPE_CLI") or shutil.which("opscope")
    if not path:
        pytest.skip("opscope CLI not found (set OPSCOPE_CLI)")
    return path


def run_in_group(args, timeout=300, check=False, capture_output=False, **kw):
    """subprocess.run in a session of its own: at the timeout the whole group is killed, the
    program under `opscope record` included (killing `opscope record` alone, as
    subprocess.run does, would leave that program running)."""
    if capture_output:
        kw.update(stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    with subprocess.Popen(args, start_new_session=True, **kw) as p:
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            raise
    r = subprocess.CompletedProcess(args, p.returncode, out, err)
    if check:
        r.check_returncode()
    return r


@pytest.fixture
def run_record(cli):
    """run_record([options..., "--", program...], **subprocess.run's keywords): `opscope
    record` with them, its whole process group killed at the timeout (300 s)."""
    return lambda args, **kw: run_in_group([cli, "record", *args], **kw)


def pytest_configure(config):
    config.addinivalue_line("markers", "record: runs a program under `opscope record`")
