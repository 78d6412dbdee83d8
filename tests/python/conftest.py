"""pytest setup: the package must come from the build (PYTHONPATH=<build>/python); the CLI
(for `opscope dump`) from $OPSCOPE_CLI when set."""
import os
import shutil

import pytest


@pytest.fixture
def cli():
    path = os.environ.get("OPSCOPE_CLI") or shutil.which("opscope")
    if not path:
        pytest.skip("opscope CLI not found (set OPSCOPE_CLI)")
    return path
