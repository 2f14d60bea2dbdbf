"""Runs the ncclfi binary and reads its JSON documents (docs/cli.md, "Machine output")."""

import json
import os
import shutil
import subprocess


class NcclfiError(Exception):
    """ncclfi could not do what was asked: bad input (exit 2) or a harness error (exit 3)."""


class SuiteResult:
    """The summary.json of one `ncclfi run --json`, with the exit status."""

    def __init__(self, summary, exit_status, stderr):
        self.summary = summary
        self.exit_status = exit_status
        self.stderr = stderr

    @property
    def runs(self):
        return self.summary.get("runs", [])

    @property
    def statuses(self):
        return [r["status"] for r in self.runs]

    @property
    def passed(self):
        """True when every run passed or was skipped (ncclfi's exit status 0)."""
        return self.exit_status == 0

    def explain(self):
        """Why the runs that did not pass did not: one paragraph per run."""
        lines = []
        for run in self.runs:
            if run["status"] in ("pass", "skipped"):
                continue
            lines.append("%s: %s" % (run["scenario"], run["status"]))
            lines.append("  expected: %s" % run.get("expected", "?"))
            lines.append("  observed: %s" % run.get("observed", "?"))
            for reason in run.get("reasons", []):
                lines.append("  " + reason)
            if run.get("harness_error"):
                lines.append("  harness error: " + run["harness_error"])
            if run.get("run_dir"):
                lines.append("  report: %s/verdict.json" % run["run_dir"])
        return "\n".join(lines)


def resolve_binary(given=None):
    """The ncclfi binary to call, as an absolute path: `given` (--ncclfi-bin), else $NCCLFI, else ncclfi on
    PATH. A value that cannot be ncclfi raises NcclfiError naming where the value came from, so a typo in
    NCCLFI reads as one instead of as a FileNotFoundError deep in a test."""
    if given:
        source, value = "--ncclfi-bin", str(given)
    elif os.environ.get("NCCLFI"):
        source, value = "NCCLFI", os.environ["NCCLFI"]
    else:
        value = shutil.which("ncclfi")
        if not value:
            raise NcclfiError("no ncclfi binary: give --ncclfi-bin, set NCCLFI or put ncclfi on PATH")
        source = "PATH"
    path = os.path.abspath(value) if os.sep in value else shutil.which(value) or os.path.abspath(value)
    named = "%s=%s" % (source, value) if source != "PATH" else "ncclfi on PATH (%s)" % value
    if os.path.isdir(path):
        raise NcclfiError("%s is a directory: it must name the ncclfi binary (say build/bin/ncclfi)" % named)
    if not os.path.isfile(path):
        raise NcclfiError("%s: no such file (the ncclfi binary, say build/bin/ncclfi or /usr/bin/ncclfi)" % named)
    if not os.access(path, os.X_OK):
        raise NcclfiError("%s is not executable" % named)
    # One cheap call proves it is ncclfi before any test relies on its JSON.
    try:
        proc = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
        first = (proc.stdout.splitlines() or [""])[0]
    except (OSError, subprocess.TimeoutExpired) as e:
        raise NcclfiError("%s cannot be run: %s" % (named, e))
    if proc.returncode != 0 or not first.startswith("ncclfi "):
        raise NcclfiError("%s is not ncclfi: `%s --version` printed %r" % (named, value, first or proc.stderr.strip()))
    return path


class NcclfiRunner:
    """Calls one ncclfi binary; every result comes from its --json output."""

    def __init__(self, binary=None, out_root=None):
        self.binary = resolve_binary(binary)
        self.out_root = out_root

    def _call(self, args, timeout=None):
        proc = subprocess.run([self.binary] + args, capture_output=True, text=True, timeout=timeout)
        return proc

    def _json(self, proc, what):
        try:
            return json.loads(proc.stdout)
        except ValueError:
            raise NcclfiError("ncclfi %s printed no JSON (exit %d): %s" % (what, proc.returncode, proc.stderr.strip()))

    def validate(self, *paths):
        """The `ncclfi validate --json` document: {"files": [...], "valid": n, "invalid": m}."""
        proc = self._call(["validate", "--json"] + [str(p) for p in paths])
        return self._json(proc, "validate")

    def run(self, *paths, filters=(), repeat=1, extra_args=(), timeout=None):
        """Runs scenarios (files or directories) and returns their SuiteResult.

        Raises NcclfiError for bad input (exit 2) and harness errors (exit 3) without a summary."""
        args = ["run"] + [str(p) for p in paths] + ["--json", "-q"]
        if self.out_root:
            args += ["--out", str(self.out_root)]
        for f in filters:
            args += ["--filter", f]
        if repeat != 1:
            args += ["--repeat", str(repeat)]
        args += list(extra_args)
        proc = self._call(args, timeout=timeout)
        if proc.returncode == 2:
            raise NcclfiError("ncclfi run: bad input: " + proc.stderr.strip())
        return SuiteResult(self._json(proc, "run"), proc.returncode, proc.stderr)
