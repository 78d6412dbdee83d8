"""pytest setup: the package must come from the build (PYTHONPATH=<build>/python); the CLI
(for `opscope dump`) from $OPSCOPE_CLI when set. Tests marked `record` run programs under
`opscope record`, which preloads libopscope: scripts/test.sh leaves them out of its run of the
sanitized extension (the ASan runtime has to come first in LD_PRELOAD there)."""
import os
import shutil

import pytest


@pytest.fixture
def cli():
    path = os.environ.get("OPSCOPE_CLI") or shutil.which("opscope")
    if not path:
        pytest.skip("opscope CLI not found (set OPSCOPE_CLI)")
    return path


def pytest_configure(config):
    config.addinivalue_line("markers", "record: runs a program under `opscope record`")
