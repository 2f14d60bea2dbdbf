#!/usr/bin/env python3
"""Runs the commands the documentation shows, as written (label docs).

Every fenced code block of README.md and docs/*.md that holds a command starting with `ncclfi `,
`build/bin/ncclfi ` or `scripts/` (after any VAR=value prefix) is a script: its lines run in order, in one
scratch directory per block that looks like the source tree (scenarios/, workloads/, python/, scripts/
and build/ linked in; `ncclfi` on PATH is the build's), so a line may use what an earlier line made. A
line fails the test when it exits other than it should (0 unless EXPECTED_EXIT says otherwise). Lines
that cannot run on a CPU-only host in a few seconds are skipped, each for the reason in SKIPS; the skips
are printed. Paths under /srv/ (the docs' example of a course machine) are moved into the scratch
directory. A block whose first line is a `$ ` prompt is a transcript (a command and its output) and is
not run: the test of that command compares the output.

  doc_commands.py --source SRC --build BUILD [--list]
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

# A documented command starts so (after VAR=value words).
COMMAND = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_]*=\S+\s+)*(?:ncclfi|build/bin/ncclfi|scripts/\S+)(?:\s|$)")

# (pattern searched in the line, why it is not run here). The first that matches wins.
SKIPS = [
    (r"^scripts/(run|setup|test|bench|honesty|gpu-check)\b",
     "sets up packages and builds before running: minutes (CI runs scripts/test itself)"),
    (r"scripts/cluster-local|scenarios/multihost",
     "needs root and a three-host namespace cluster (the multihost label runs it)"),
    (r"\brun scenarios/cpu/?(\s|$)|--ncclfi-collect scenarios/cpu",
     "the whole CPU catalogue: minutes (the e2e label runs each of its scenarios)"),
    (r"templates/torch-job|torchrun|\btimeouts\b",
     "needs PyTorch and the reader's training script (GPU host)"),
    (r"train\.py|my_nccl_job", "the reader's own job"),
    (r"/path/to/", "the reader's own files"),
    (r"drill-flapping-link\.json(?!.*--dry-run)",
     "a real drill of a minute or more (the drills label runs each drill)"),
    (r"runs/drill-flapping-link/latest", "acts on the drill of the line above, which is not run here"),
    (r"^ibstat\b|scenarios/ib/|runs/ib-port-failover",
     "needs a GPU host with NCCL 2.29.7 or newer and two InfiniBand ports (no CI host has them)"),
    (r"\bsudo\b|LOGIN\b", "a class's lab service under a grader account, with students as other accounts (the e2e "
     "LabServe tests run the service and its students)"),
    (r"\bscore runs\b", "scores the runs of the catalogue run above, which is not run here (the score label "
     "runs it on the catalogue and the lab variants)"),
]

# Lines whose documented outcome is not exit 0: the pattern, the statuses that are right.
EXPECTED_EXIT = [
    (r"\blab answer\b", {0, 1}),  # graded: 0 right, 1 wrong, both as documented
    (r"\blab debrief\b(?!.*--key-dir)", {0, 2}),  # the student's: 0 once the answer is final, 2 before
]


def logical_lines(text):
    """(line number, line) of each fenced block, continuation lines joined; None between blocks."""
    inside = False
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        if stripped.startswith("```"):
            inside = not inside
            yield None
        elif inside:
            start, line = i + 1, stripped
            while line.endswith("\\") and i + 1 < len(lines):
                i += 1
                line = line[:-1].rstrip() + " " + lines[i].strip()
            yield start, line
        i += 1


def blocks(path):
    """The blocks of `path` that hold a documented command: lists of (line number, line)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    found, block = [], []
    for item in logical_lines(text):
        if item is None:
            # A transcript (its first line a `$ ` prompt, then what the command printed) shows output;
            # the test of that command compares the output itself.
            transcript = bool(block) and block[0][1].startswith("$ ")
            if not transcript and any(COMMAND.match(line) for _, line in block):
                found.append(block)
            block = []
        elif item[1] and not item[1].startswith("#"):
            block.append(item)
    return found


def scratch_tree(source, build):
    """A directory that looks like the source tree, with build/ the build being tested."""
    work = tempfile.mkdtemp(prefix="ncclfi-doc-")
    for name in ("scenarios", "workloads", "python", "scripts", "docs"):
        os.symlink(os.path.join(source, name), os.path.join(work, name))
    os.symlink(build, os.path.join(work, "build"))
    return work


def reason_to_skip(line):
    for pattern, why in SKIPS:
        if re.search(pattern, line):
            return why
    return None


def expected_exit(line):
    for pattern, statuses in EXPECTED_EXIT:
        if re.search(pattern, line):
            return statuses
    return {0}


def run_block(where, block, source, build):
    """Runs one block's lines in order; returns (failures, skips)."""
    work = scratch_tree(source, build)
    env = dict(os.environ, PATH=os.path.join(build, "bin") + os.pathsep + os.environ.get("PATH", ""),
               NO_COLOR="1")
    exports, failures, skips = [], [], []
    try:
        for number, line in block:
            line = line.replace("/srv/", work + "/srv/")
            ref = f"{where}:{number}: {line}"
            why = reason_to_skip(line)
            if why:
                skips.append(f"{ref}\n    skipped: {why}")
                continue
            if line.startswith("export "):
                exports.append(line)
            script = "set -o pipefail\n" + "\n".join(exports) + "\n" + line + "\n"
            started = time.monotonic()
            r = subprocess.run(["bash", "-c", script], cwd=work, env=env, capture_output=True, text=True,
                               timeout=120)
            took = time.monotonic() - started
            print(f"  {took:5.1f}s exit {r.returncode}  {ref}", flush=True)
            if r.returncode not in expected_exit(line):
                failures.append(f"{ref}\n    exit {r.returncode}\n{r.stdout[-1500:]}{r.stderr[-1500:]}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return failures, skips


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source", required=True)
    parser.add_argument("--build", required=True)
    parser.add_argument("--list", action="store_true", help="print the commands and their skips only")
    args = parser.parse_args()
    source, build = os.path.abspath(args.source), os.path.abspath(args.build)
    files = [os.path.join(source, "README.md")] + sorted(glob.glob(os.path.join(source, "docs", "*.md")))
    failures, skips, ran = [], [], 0
    for path in files:
        where = os.path.relpath(path, source)
        for block in blocks(path):
            if args.list:
                for number, line in block:
                    print(f"{where}:{number}: {line}  [{reason_to_skip(line) or 'runs'}]")
                continue
            f, s = run_block(where, block, source, build)
            failures += f
            skips += s
            ran += 1
    if args.list:
        return 0
    print(f"\n{ran} blocks run; {len(skips)} lines skipped:")
    for s in skips:
        print("  " + s)
    if failures:
        print(f"\n{len(failures)} documented command(s) fail as written:")
        for f in failures:
            print("  " + f)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
