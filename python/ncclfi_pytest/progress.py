"""One line per scenario on pytest's terminal as it starts and as it ends: a scenario takes seconds to
minutes, and pytest alone shows nothing until the item's verdict."""

import contextlib


def write(config, line):
    """Writes `line` to the terminal now, even while the test's output is being captured (the way pytest's
    live logging does it); without a terminal reporter (-p no:terminal) nothing is written."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        return
    capture = config.pluginmanager.get_plugin("capturemanager")
    with capture.global_and_fixture_disabled() if capture else contextlib.nullcontext():
        reporter.write_line(line)


def started(config, what):
    write(config, "ncclfi: start %s" % what)


def verdicts(config, result):
    """One line per run of a finished `ncclfi run`: its scenario, its status and why."""
    for run in result.runs:
        if run["status"] == "skipped":
            why = run.get("skip_reason", "")
        else:
            why = "expected %s, observed %s" % (run.get("expected", "?"), run.get("observed", "?"))
        write(config, "ncclfi: %s %s (%s)" % (run["scenario"], run["status"], why))
    if not result.runs:
        write(config, "ncclfi: no verdict (exit %d): %s" % (result.exit_status, result.stderr.strip()))
