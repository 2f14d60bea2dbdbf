"""The plugin's own tests: a real ncclfi ($NCCLFI) runs small shell scenarios (the command launcher)."""

import pytest
from helpers import run_inner, scenario, write


def test_scenario_files_are_collected_as_items(pytester):
    scen = pytester.mkdir("scen")
    write(scen, "ok", scenario("passes-clean", "exit 0"))
    write(scen, "bad", scenario("exits-three", "exit 3"))
    (scen / "schema.json").write_text("{}")  # never a scenario
    result = run_inner(pytester, "--ncclfi-collect", "-v", str(scen))
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*bad.json::exits-three FAILED*"])
    result.stdout.fnmatch_lines(["*ok.json::passes-clean PASSED*"])
    # The failure says why, in ncclfi's words, and where the run's report is.
    result.stdout.fnmatch_lines(["*exits-three: fail*", "*expected: clean*", "*report: */verdict.json*"])


def test_an_invalid_scenario_is_a_failing_item_naming_the_pointer(pytester):
    scen = pytester.mkdir("scen")
    doc = scenario("broken", "exit 0")
    doc["workload"]["ranks"] = "two"
    write(scen, "broken", doc)
    result = run_inner(pytester, "--ncclfi-collect", str(scen))
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*invalid scenario*", "*/workload/ranks: expected*"])


def test_without_the_option_json_files_are_not_collected(pytester):
    scen = pytester.mkdir("scen")
    write(scen, "ok", scenario("passes-clean", "exit 0"))
    result = run_inner(pytester, str(scen))
    result.assert_outcomes()
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED


def test_the_fixture_runs_a_scenario_and_asserts_its_verdict(pytester):
    scen = pytester.mkdir("scen")
    good = write(scen, "good", scenario("fixture-good", "exit 0"))
    bad = write(scen, "bad", scenario("fixture-bad", "exit 3"))
    pytester.makepyfile(
        test_mine="""
        def test_good(ncclfi):
            result = ncclfi.assert_passes(%r)
            assert result.statuses == ["pass"]
            assert result.summary["runs"][0]["outcome"] == "clean"

        def test_bad(ncclfi):
            ncclfi.assert_passes(%r)

        def test_bad_inspected(ncclfi):
            result = ncclfi.run(%r, repeat=2)
            assert not result.passed
            assert result.statuses == ["fail", "fail"]
            assert result.summary["pass_rates"][0]["passed"] == 0
        """
        % (str(good), str(bad), str(bad))
    )
    result = run_inner(pytester, "-v")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*test_bad FAILED*", "*fixture-bad: fail*"])


def test_bad_input_raises_with_ncclfis_message(pytester):
    pytester.makepyfile(
        test_input="""
        import pytest
        from ncclfi_pytest import NcclfiError

        def test_missing(ncclfi):
            with pytest.raises(NcclfiError, match="bad input"):
                ncclfi.run("/nonexistent/scenario.json")
        """
    )
    run_inner(pytester).assert_outcomes(passed=1)
