"""The pytest side: options, the `ncclfi` fixture and scenario files collected as items.

    pytest -p ncclfi_pytest.plugin --ncclfi-collect scenarios/cpu     each scenario is a test
    def test_mine(ncclfi): ncclfi.assert_passes("my-scenario.json")   a scenario inside a test

A session that uses ncclfi (a collected scenario, a test asking for the fixture) stops with a usage error
when the ncclfi binary is missing or wrong: skipping would let a suite pass that ran nothing. The only
skips are ncclfi's own (a scenario this host cannot run, with ncclfi's reason).
"""

import os
import tempfile

import pytest

from ncclfi_pytest import progress
from ncclfi_pytest.runner import NcclfiError, NcclfiRunner, resolve_binary

# What `ncclfi run` reads from a directory (schema.json aside).
SCENARIO_SUFFIXES = (".json", ".yaml", ".yml")
_BINARY = pytest.StashKey[str]()


def pytest_addoption(parser):
    group = parser.getgroup("ncclfi")
    group.addoption("--ncclfi-bin", default=None, help="the ncclfi binary (default: $NCCLFI, else ncclfi on PATH)")
    group.addoption("--ncclfi-out", default=None, help="root of ncclfi's run directories (default: a temporary one)")
    group.addoption(
        "--ncclfi-collect",
        action="store_true",
        default=False,
        help="collect ncclfi scenario files (*.json other than schema.json, *.yaml, *.yml) as test items",
    )
    group.addoption("--ncclfi-repeat", type=int, default=1, help="run each collected scenario N times")


def pytest_configure(config):
    config.addinivalue_line("markers", "ncclfi: an ncclfi scenario collected from a scenario file")


def _binary(config):
    """The session's ncclfi binary, found once; none, or a wrong one, is a usage error."""
    if _BINARY not in config.stash:
        try:
            config.stash[_BINARY] = resolve_binary(config.getoption("ncclfi_bin"))
        except NcclfiError as e:
            raise pytest.UsageError("ncclfi: %s" % e)
    return config.stash[_BINARY]


def pytest_sessionstart(session):
    if session.config.getoption("ncclfi_collect"):
        _binary(session.config)


def pytest_collection_modifyitems(session, config, items):
    if any(isinstance(i, ScenarioItem) or "ncclfi" in getattr(i, "fixturenames", ()) for i in items):
        _binary(config)


def _runner(config, tmp_root):
    return NcclfiRunner(_binary(config), config.getoption("ncclfi_out") or tmp_root)


class NcclfiFixture:
    """What a test gets from the `ncclfi` fixture. Relative scenario paths are relative to the test's file,
    so a test finds the scenarios beside it from whatever directory pytest is started in."""

    def __init__(self, runner, config, base_dir):
        self.runner = runner
        self.config = config
        self.base_dir = base_dir

    def _paths(self, paths):
        return [os.path.join(self.base_dir, os.fspath(p)) for p in paths]

    def run(self, *paths, **kwargs):
        paths = self._paths(paths)
        progress.started(self.config, " ".join(os.path.relpath(p) for p in paths))
        result = self.runner.run(*paths, **kwargs)
        progress.verdicts(self.config, result)
        return result

    def validate(self, *paths):
        return self.runner.validate(*self._paths(paths))

    def assert_passes(self, *paths, **kwargs):
        """Runs the scenarios and fails the test, with ncclfi's reasons, unless every verdict passed."""
        result = self.run(*paths, **kwargs)
        if not result.passed:
            pytest.fail("ncclfi: not every verdict passed\n" + result.explain(), pytrace=False)
        return result


@pytest.fixture
def ncclfi(request, tmp_path):
    """Runs ncclfi scenarios: ncclfi.run(path), ncclfi.assert_passes(path), ncclfi.validate(path)."""
    return NcclfiFixture(_runner(request.config, tmp_path / "ncclfi-runs"), request.config, request.path.parent)


def pytest_collect_file(file_path, parent):
    if not parent.config.getoption("ncclfi_collect"):
        return None
    if file_path.suffix not in SCENARIO_SUFFIXES or file_path.name == "schema.json":
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
        progress.started(self.config, "%s (%s)" % (self.name, os.path.relpath(self.entry["file"])))
        result = _runner(self.config, tmp_root).run(self.entry["file"], repeat=self.config.getoption("ncclfi_repeat"))
        progress.verdicts(self.config, result)
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
