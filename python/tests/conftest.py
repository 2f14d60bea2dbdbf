import os

import pytest

pytest_plugins = ["pytester"]


def pytest_configure(config):
    # The plugin's tests run a real ncclfi: without one they would prove nothing, so they do not skip.
    if not os.environ.get("NCCLFI"):
        raise pytest.UsageError("set NCCLFI to the ncclfi binary (ctest's python label does)")
