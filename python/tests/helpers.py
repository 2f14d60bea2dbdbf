"""What the plugin's tests share: small shell scenarios (the command launcher) and an inner pytest."""

import json
import os

NCCLFI = os.environ["NCCLFI"]  # conftest.py stops the session without it


def scenario(name, shell, outcome="clean"):
    return {
        "name": name,
        "summary": "pytest plugin test",
        "tags": ["pytest"],
        "workload": {"command": ["/bin/sh", "-c", shell], "ranks": 1},
        "launcher": {"kind": "command"},
        "baseline": False,
        "deadline_s": 20,
        "grace_s": 1,
        "expect": {"outcome": outcome},
    }


def write(dirpath, name, doc):
    path = dirpath / (name + ".json")
    path.write_text(json.dumps(doc))
    return path


def run_inner(pytester, *args):
    """pytest in a subprocess with the plugin, given the binary and a run directory root."""
    out = pytester.path / "ncclfi-runs"
    return pytester.runpytest_subprocess("-p", "ncclfi_pytest.plugin", "--ncclfi-bin", NCCLFI, "--ncclfi-out", str(out), *args)
