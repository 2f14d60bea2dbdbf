"""The pytest side: options, the `ncclfi` fixture and scenario files collected as items.

    pytest -p ncclfi_pytest.plugin --ncclfi-collect scenarios/cpu     each scenario is a test
    def test_mine(ncclfi): ncclfi.assert_passes("my-scenario.json")   a scenario inside a test
"""

import os
import tempfile

import pytest

from ncclfi_pytest.runner import NcclfiError, NcclfiRunner


def pytest_addoption(parser):
    group = parser.getgroup("ncclfi")
    group.addoption("--ncclfi-bin", default=None, help="the ncclfi binary (default: $NCCLFI, else ncclfi on PATH)")
    group.addoption("--ncclfi-out", default=None, help="root of ncclfi's run directories (default: a temporary one)")
    group.addoption(
        "--ncclfi-collect",
        action="store_true",
        default=False,
        help="collect ncclfi scenario files (*.json other than schema.json) as test items",
    )
    group.addoption("--ncclfi-repeat", type=int, default=1, help="run each collected scenario N times")


def _runner(config, tmp_root):
    return NcclfiRunner(config.getoption("ncclfi_bin"), config.getoption("ncclfi_out") or tmp_root)


class NcclfiFixture:
    """What a test gets from the `ncclfi` fixture."""

    def __init__(self, runner):
        self.runner = runner

    def run(self, *paths, **kwargs):
        return self.runner.run(*paths, **kwargs)

    def validate(self, *paths):
        return self.runner.validate(*paths)

    def assert_passes(self, *paths, **kwargs):
        """Runs the scenarios and fails the test, with ncclfi's reasons, unless every verdict passed."""
        result = self.runner.run(*paths, **kwargs)
        if not result.passed:
            pytest.fail("ncclfi: not every verdict passed\n" + result.explain(), pytrace=False)
        return result


@pytest.fixture
def ncclfi(request, tmp_path):
    """Runs ncclfi scenarios: ncclfi.run(path), ncclfi.assert_passes(path), ncclfi.validate(path)."""
    try:
        return NcclfiFixture(_runner(request.config, tmp_path / "ncclfi-runs"))
    except NcclfiError as e:
        pytest.skip(str(e))


def pytest_collect_file(file_path, parent):
    if not parent.config.getoption("ncclfi_collect"):
        return None
    if file_path.suffix != ".json" or file_path.name == "schema.json":
        return None
    return ScenarioFile.from_parent(parent, path=file_path)


class ScenarioFile(pytest.File):
    """One scenario file: one item named after its scenario (an invalid file is one failing item)."""

    def collect(self):
        doc = _runner(self.config, None).validate(self.path)
        for entry in doc.get("files", []):
            name = entry.get("name") or os.path.basename(entry["file"])
            yield ScenarioItem.from_parent(self, name=name, entry=entry)


class ScenarioFailed(Exception):
    pass


class ScenarioItem(pytest.Item):
    def __init__(self, *, entry, **kwargs):
        super().__init__(**kwargs)
        self.entry = entry
        self.add_marker(pytest.mark.ncclfi)

    def runtest(self):
        if not self.entry.get("valid"):
            errors = ["%s: expected %s, got %s" % (e["pointer"], e["expected"], e["found"]) for e in self.entry["errors"]]
            raise ScenarioFailed("invalid scenario %s\n  %s" % (self.entry["file"], "\n  ".join(errors)))
        tmp_root = None if self.config.getoption("ncclfi_out") else tempfile.mkdtemp(prefix="ncclfi-runs-")
        result = _runner(self.config, tmp_root).run(self.entry["file"], repeat=self.config.getoption("ncclfi_repeat"))
        self.user_properties.append(("ncclfi_statuses", ",".join(result.statuses)))
        if result.statuses and all(s == "skipped" for s in result.statuses):
            pytest.skip(result.runs[0].get("skip_reason", "skipped by ncclfi"))
        if not result.passed:
            raise ScenarioFailed(result.explain() or result.stderr.strip())

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, (ScenarioFailed, NcclfiError)):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, 0, "ncclfi scenario: %s" % self.name


def pytest_configure(config):
    config.addinivalue_line("markers", "ncclfi: an ncclfi scenario collected from a scenario file")
