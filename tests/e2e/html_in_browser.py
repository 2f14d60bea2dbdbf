#!/usr/bin/env python3
"""html_in_browser.py NCCLFI CHROMIUM: report.html in a real browser (headless Chromium from Debian).

A small job with a proc-layer kill runs through ncclfi; its report.html is loaded with #zoom and the DOM
Chromium dumps after the page's script ran is checked: the script finished (data-ncclfi-ready) without
an error (no data-ncclfi-error), the timeline was zoomed to the fault window (its viewBox is the range
in data-zoom), and the elements are where they should be: a fault window over the killed rank's lane,
each rank's detection above its exit, an attempt label, the axis counted from the first injection.
"""

import json
import os
import subprocess
import sys
import tempfile
from html.parser import HTMLParser


def fail(message):
    print("FAIL " + message)
    sys.exit(1)


class Elements(HTMLParser):
    def __init__(self):
        super().__init__()
        self.found = []
        self.texts = []

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.texts.append(data)

    def all(self, tag, cls=None):
        return [a for t, a in self.found if t == tag and (cls is None or cls in a.get("class", "").split())]


def main():
    ncclfi, chromium = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="ncclfi-html-") as tmp:
        scenario = {
            "name": "html-kill-one",
            "summary": "rank 1 is killed; the others' watchdogs fire",
            # Rank 1 is killed; the others' watchdogs give up on it (exit 3) a moment later.
            "workload": {"command": ["/bin/sh", "-c", "[ $RANK = 1 ] && sleep 5; sleep 1; exit 3"], "ranks": 3},
            "launcher": {"kind": "command"},
            "baseline": False,
            "deadline_s": 10,
            "grace_s": 1,
            "faults": [{"id": "crash", "layer": "proc", "kind": "kill", "params": {"signal": "SIGKILL"},
                        "target": {"ranks": [1]}, "trigger": {"after_ms": 300}}],
            "expect": {"outcome": "detected", "detected_by": ["workload_watchdog"]},
        }
        path = os.path.join(tmp, "s.json")
        with open(path, "w") as f:
            json.dump(scenario, f)
        run = subprocess.run([ncclfi, "run", path, "--out", os.path.join(tmp, "runs"), "-q",
                              "--html", os.path.join(tmp, "report.html")], capture_output=True, text=True)
        if run.returncode not in (0, 1):
            fail("ncclfi run exited %d: %s" % (run.returncode, run.stderr))
        dom = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + tmp + "/profile",
                              "--virtual-time-budget=5000", "--dump-dom", "file://" + tmp + "/report.html#zoom"],
                             capture_output=True, text=True, timeout=120)
        if dom.returncode != 0 or "<html" not in dom.stdout:
            fail("chromium exited %d: %s" % (dom.returncode, dom.stderr[-2000:]))
        page = Elements()
        page.feed(dom.stdout)

        html = page.all("html")[0]
        if html.get("data-ncclfi-ready") != "1":
            fail("the page's script did not finish (no data-ncclfi-ready on <html>)")
        if "data-ncclfi-error" in html:
            fail("the page's script failed: " + html["data-ncclfi-error"])

        svgs = page.all("svg", "timeline")
        if len(svgs) != 1:
            fail("expected one timeline, found %d" % len(svgs))
        svg = svgs[0]
        z0, z1 = (float(v) for v in svg["data-zoom"].split())
        box = [float(v) for v in svg["viewbox" if "viewbox" in svg else "viewBox"].split()]
        if svg.get("data-zoomed") != "1" or abs(box[0] - z0) > 0.5 or abs(box[0] + box[2] - z1) > 0.5:
            fail("#zoom did not zoom to the fault window: viewBox %s, data-zoom %s" % (box, svg["data-zoom"]))
        if svg.get("data-zero") != "first-injection":
            fail("the axis does not count from the first injection: " + svg.get("data-zero", "?"))

        windows = page.all("rect", "fault-window")
        if [w.get("data-fault-id") for w in windows] != ["crash"]:
            fail("expected the fault window of 'crash': %s" % windows)
        window = windows[0]
        if float(window["data-start-s"]) != 0.0:
            fail("the fault window does not start at 0 s: " + window["data-start-s"])
        if not (z0 <= float(window["x"]) and float(window["x"]) + float(window["width"]) <= z1):
            fail("the zoom range does not hold the fault window")
        lane_of_1 = [t for t in page.texts if t == "rank 1"]
        if not lane_of_1:
            fail("no lane for rank 1")

        exits = {int(e["data-rank"]): float(e["y"]) for e in page.all("rect", "exit")}
        if sorted(exits) != [0, 1, 2]:
            fail("expected an exit per rank: %s" % exits)
        for d in page.all("path", "detection"):
            rank = int(d["data-rank"])
            if rank in exits and not float(d["data-y"]) + 10 < exits[rank]:
                fail("rank %d: the detection (y %s) is not above the exit (y %s)" % (rank, d["data-y"], exits[rank]))
        if not page.all("path", "detection"):
            fail("no detection drawn")
        if "attempt 1" not in page.texts:
            fail("the attempt is not labelled")
        if not any("s from the first injection" in t for t in page.texts):
            fail("the axis is not labelled")
        print("PASS: report.html ran its script in Chromium, zoomed to the fault window, elements in place")


if __name__ == "__main__":
    main()
