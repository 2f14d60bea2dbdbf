"""`pip install` of the plugin from its source folder: pytest then loads it through its pytest11 entry
point, with no -p and no PYTHONPATH. The folder is copied first and made read-only, as the Debian
package's /usr/share/ncclfi/python is for a user: the build must write nothing beside the sources."""

import os
import shutil
import subprocess
import sys

from helpers import NCCLFI, scenario, write

SOURCE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def read_only_copy(dest):
    shutil.copytree(SOURCE, dest, ignore=shutil.ignore_patterns("__pycache__", "tests"))
    for root, dirs, files in os.walk(dest):
        for name in files + dirs:
            os.chmod(os.path.join(root, name), 0o555 if name in dirs else 0o444)
    os.chmod(dest, 0o555)


def test_pip_installs_the_plugin_from_its_source_folder(pytester):
    src, venv = pytester.path / "src", pytester.path / "venv"
    read_only_copy(src)
    # The system's pytest and build backend (Debian: python3-pytest, python3-hatchling), offline.
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    pip = subprocess.run(
        [python, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps", "--no-index", str(src)],
        env=env, capture_output=True, text=True)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    os.chmod(src, 0o755)
    assert sorted(os.listdir(src)) == ["ncclfi_pytest", "pyproject.toml"]  # nothing written beside the sources

    write(pytester.mkdir("scen"), "ok", scenario("installed-plugin", "exit 0"))
    run = subprocess.run(
        [python, "-m", "pytest", "-p", "no:cacheprovider", "--ncclfi-bin", NCCLFI, "--ncclfi-collect", "-v", "scen"],
        env=env, cwd=str(pytester.path), capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "scen/ok.json::installed-plugin PASSED" in run.stdout
    assert str(venv) in subprocess.run([python, "-c", "import ncclfi_pytest; print(ncclfi_pytest.__file__)"],
                                       env=env, capture_output=True, text=True).stdout
