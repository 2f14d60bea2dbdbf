"""Scenario files in YAML, paths relative to the test file, a line per scenario as it starts and ends,
and skips that are ncclfi's own."""

from helpers import run_inner, scenario, write

YAML_SCENARIO = """\
name: {name}
summary: pytest plugin test in YAML
tags: [pytest]
workload:
  command: [/bin/sh, -c, "{shell}"]
  ranks: 1
launcher: {{kind: command}}
baseline: false
deadline_s: 20
grace_s: 1
expect: {{outcome: clean}}
"""


def test_yaml_scenarios_are_collected_as_items(pytester):
    scen = pytester.mkdir("scen")
    (scen / "ok.yaml").write_text(YAML_SCENARIO.format(name="yaml-passes", shell="exit 0"))
    (scen / "bad.yml").write_text(YAML_SCENARIO.format(name="yml-exits-three", shell="exit 3"))
    result = run_inner(pytester, "--ncclfi-collect", "-v", str(scen))
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*bad.yml::yml-exits-three FAILED*"])
    result.stdout.fnmatch_lines(["*ok.yaml::yaml-passes PASSED*"])


def test_fixture_paths_are_relative_to_the_test_file(pytester):
    suite = pytester.mkdir("suite")
    (suite / "scen").mkdir()
    write(suite / "scen", "ok", scenario("beside-the-test", "exit 0"))
    suite.joinpath("test_rel.py").write_text(
        "def test_rel(ncclfi):\n"
        "    assert ncclfi.validate('scen/ok.json')['valid'] == 1\n"
        "    assert ncclfi.assert_passes('scen/ok.json').statuses == ['pass']\n"
    )
    # pytest starts in the folder above: scen/ok.json is no path from there.
    run_inner(pytester, "suite").assert_outcomes(passed=1)


def test_each_scenario_prints_a_line_as_it_starts_and_its_verdict_as_it_ends(pytester):
    scen = pytester.mkdir("scen")
    write(scen, "a", scenario("first-passes", "exit 0"))
    write(scen, "b", scenario("second-fails", "exit 3"))
    result = run_inner(pytester, "--ncclfi-collect", str(scen))  # output captured: the lines still show
    result.stdout.fnmatch_lines(
        [
            "ncclfi: start first-passes (scen/a.json)",
            "ncclfi: first-passes pass (expected clean, observed clean)",
            "ncclfi: start second-fails (scen/b.json)",
            "ncclfi: second-fails fail (expected clean, observed *)",
            "*1 failed, 1 passed*",
        ]
    )


def test_the_fixture_prints_the_same_lines(pytester):
    write(pytester.mkdir("scen"), "ok", scenario("fixture-passes", "exit 0"))
    pytester.makepyfile(test_mine="def test_mine(ncclfi):\n    ncclfi.assert_passes('scen/ok.json')\n")
    result = run_inner(pytester)
    result.stdout.fnmatch_lines(["ncclfi: start scen/ok.json", "ncclfi: fixture-passes pass (*)", "*1 passed*"])


def test_a_scenario_ncclfi_skips_is_skipped_with_ncclfis_reason(pytester, monkeypatch):
    monkeypatch.delenv("NCCLFI_PYTEST_NEVER_SET", raising=False)
    doc = scenario("needs-a-variable", "exit 0")
    doc["requires"] = {"env": ["NCCLFI_PYTEST_NEVER_SET"]}
    write(pytester.mkdir("scen"), "needs", doc)
    result = run_inner(pytester, "--ncclfi-collect", "-rs", "scen")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["ncclfi: needs-a-variable skipped (needs $NCCLFI_PYTEST_NEVER_SET)", "SKIPPED*needs $NCCLFI_PYTEST_NEVER_SET*"])
