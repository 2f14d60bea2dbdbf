"""Which ncclfi the plugin calls: none, or a wrong one, stops a session that needs it with a usage error
naming the value, never a skip (a suite that skipped everything would pass) nor a traceback."""

import os

import pytest
from helpers import scenario, write

USES_FIXTURE = """
def test_mine(ncclfi):
    ncclfi.validate("whatever.json")
"""


@pytest.fixture
def no_ncclfi_anywhere(pytester, monkeypatch):
    monkeypatch.delenv("NCCLFI", raising=False)
    monkeypatch.setenv("PATH", str(pytester.mkdir("empty-bin")))  # /usr/bin may hold an installed ncclfi


def run_plain(pytester, *args):
    """pytest with the plugin and no --ncclfi-bin: the binary comes from $NCCLFI or PATH."""
    return pytester.runpytest_subprocess("-p", "ncclfi_pytest.plugin", *args)


def test_a_missing_binary_fails_a_session_using_the_fixture(pytester, no_ncclfi_anywhere):
    pytester.makepyfile(test_mine=USES_FIXTURE)
    result = run_plain(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ncclfi: no ncclfi binary: give --ncclfi-bin, set NCCLFI or put ncclfi on PATH*"])
    assert "skipped" not in result.stdout.str()


def test_a_missing_binary_fails_a_collecting_session(pytester, no_ncclfi_anywhere):
    write(pytester.mkdir("scen"), "ok", scenario("passes-clean", "exit 0"))
    result = run_plain(pytester, "--ncclfi-collect", "scen")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ncclfi: no ncclfi binary*"])


def test_a_session_that_does_not_use_ncclfi_needs_no_binary(pytester, no_ncclfi_anywhere):
    # pip installs the plugin for every pytest run: it must not break projects that never call ncclfi.
    pytester.makepyfile(test_other="def test_other():\n    assert True\n")
    run_plain(pytester).assert_outcomes(passed=1)


def not_executable(tmp):
    path = tmp / "ncclfi-not-executable"
    path.write_text("#!/bin/sh\n")
    return str(path), "is not executable"


def not_ncclfi(tmp):
    path = tmp / "ncclfi-impostor"
    path.write_text("#!/bin/sh\necho impostor 1.0\n")
    path.chmod(0o755)
    return str(path), "is not ncclfi: `%s --version` printed 'impostor 1.0'" % path


@pytest.mark.parametrize(
    "make_value",
    [
        lambda tmp: ("/nonexistent/ncclfi", ": no such file (the ncclfi binary"),
        lambda tmp: (str(tmp), "is a directory: it must name the ncclfi binary"),
        not_executable,
        not_ncclfi,
    ],
    ids=["missing-file", "directory", "not-executable", "not-ncclfi"],
)
def test_a_wrong_NCCLFI_is_a_clear_usage_error(pytester, monkeypatch, make_value):
    value, why = make_value(pytester.mkdir("values"))
    monkeypatch.setenv("NCCLFI", value)
    pytester.makepyfile(test_mine=USES_FIXTURE)
    result = run_plain(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: ncclfi: NCCLFI=%s*" % value])
    assert why in result.stderr.str()
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_a_relative_NCCLFI_is_found_from_the_working_directory(pytester, monkeypatch):
    monkeypatch.setenv("NCCLFI", os.path.relpath(os.environ["NCCLFI"], str(pytester.path)))
    pytester.makepyfile(test_mine="def test_mine(ncclfi):\n    assert ncclfi.runner.binary.startswith('/')\n")
    run_plain(pytester).assert_outcomes(passed=1)
