#!/usr/bin/env python3
"""reports_in_browser.py NCCLFI SOURCE_DIR {drill|timeouts}: ncclfi's HTML reports in headless Chromium.

Each case makes a real report, loads it in Debian's headless Chromium and checks the DOM the browser
dumps after the page's script ran. The drill case runs the flapping-link drill (with one baseline before
it) and a short kill with an expected detection band into one report.html, opened with ?layout-check so
the page measures its own texts (getBBox): every window and every stall of the three flaps is drawn, the
axis starts at the faulted attempt, the band is there, the header has its facts, and no text sticks out
of its picture. The timeouts case runs a small `ncclfi timeouts` matrix: no cell a finding names is
green, the settings show inline, short steps read in ms, and every cell links to its trials.
Exits 77 (SKIPPED) where Chromium is missing.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser

SKIPPED = 77


def fail(message):
    print("FAIL " + message)
    sys.exit(1)


class Dom(HTMLParser):
    """The dumped DOM as (tag, attributes, text inside) for each element; enough to assert on."""

    def __init__(self):
        super().__init__()
        self.elements, self.open = [], []

    def handle_starttag(self, tag, attrs):
        element = {"tag": tag, "attrs": dict(attrs), "text": ""}
        self.elements.append(element)
        if tag not in ("br", "meta", "input", "img", "line", "path", "circle", "rect", "polyline"):
            self.open.append(element)

    def handle_startendtag(self, tag, attrs):
        self.elements.append({"tag": tag, "attrs": dict(attrs), "text": ""})

    def handle_endtag(self, tag):
        while self.open:
            if self.open.pop()["tag"] == tag:
                break

    def handle_data(self, data):
        for element in self.open:
            element["text"] += data

    def all(self, tag, cls=None):
        return [e for e in self.elements
                if e["tag"] == tag and (cls is None or cls in e["attrs"].get("class", "").split())]


def chromium():
    for name in (os.environ.get("NCCLFI_CHROMIUM", ""), "chromium", "chromium-browser"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def load(browser, url, tmp):
    dom = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + tmp + "/profile",
                          "--window-size=1200,900", "--virtual-time-budget=5000", "--dump-dom", url],
                         capture_output=True, text=True, timeout=120)
    if dom.returncode != 0 or "<html" not in dom.stdout:
        fail("chromium exited %d: %s" % (dom.returncode, dom.stderr[-2000:]))
    page = Dom()
    page.feed(dom.stdout)
    return page


def run(cmd, timeout):
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if done.returncode not in (0, 1):
        fail("%s exited %d: %s" % (" ".join(cmd[:2]), done.returncode, done.stderr[-3000:]))
    return done


def check_page_ran(page):
    html = page.all("html")[0]["attrs"]
    if html.get("data-ncclfi-ready") != "1":
        fail("the page's script did not finish (no data-ncclfi-ready on <html>)")
    if "data-ncclfi-error" in html:
        fail("the page's script failed: " + html["data-ncclfi-error"])
    return html


def check_layout(page, html):
    """No text sticks out of its picture, as the browser measured it (ncclfiLayoutCheck)."""
    if int(html.get("data-layout-texts", "0")) < 10:
        fail("the page measured no texts (?layout-check did not run): %s" % html.get("data-layout-texts"))
    over = [(e["text"].strip(), e["attrs"]["data-overflow"]) for e in page.all("text") if "data-overflow" in e["attrs"]]
    if html.get("data-layout-overflow") != "0" or over:
        fail("texts stick out of their timeline (text, x y width height): %s" % over)


def check_header(svg_header, want):
    for key, value in want.items():
        got = svg_header["attrs"].get("data-" + key)
        if (value.match(got or "") is None) if hasattr(value, "match") else got != value:
            fail("header %s is %r, expected %r" % (key, got, getattr(value, "pattern", value)))


def timelines_by_scenario(page):
    """Each run's header and SVG, in page order: every run draws one of each."""
    headers, svgs = page.all("div", "timeline-header"), page.all("svg", "timeline")
    if len(headers) != 2 or len(svgs) != 2:
        fail("expected two run headers and two timelines, found %d and %d" % (len(headers), len(svgs)))
    return headers, svgs


def within(svg_id, page, tag, cls):
    """The elements of one timeline: the parser keeps document order, an SVG's marks follow it."""
    out, inside = [], False
    for e in page.elements:
        if e["tag"] == "svg":
            inside = e["attrs"].get("id") == svg_id
        elif inside and e["tag"] == tag and cls in e["attrs"].get("class", "").split():
            out.append(e)
    return out


def check_flapping_drill(page, header, svg):
    if svg["attrs"].get("width") != "100%" or "viewbox" not in svg["attrs"]:
        fail("the timeline does not scale to the page (width 100%% and a viewBox): %s" % svg["attrs"])
    check_header(header, {"ranks": "4", "attempts": "1", "injections": "3", "detections": "0",
                          "date": re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$"), "host": re.compile(r"\S"),
                          "version": re.compile(r"^ncclfi \d+\.\d+")})
    windows = within(svg["attrs"]["id"], page, "rect", "fault-window")
    if sorted(w["attrs"]["data-window"] for w in windows) != ["1", "2", "3"]:
        fail("expected the three windows of the flap drawn: %s" % [w["attrs"] for w in windows])
    # The axis starts at the faulted attempt's launch, moments before the first injection, not at the
    # baseline that ran before it: the first window opens at the left of the plot.
    start = float(svg["attrs"].get("data-start-s", "-999"))
    if not -2.0 < start <= 0.0:
        fail("the timeline starts %.3f s from the first injection, not at the faulted attempt" % start)
    stalls = [(float(s["attrs"]["data-start-s"]), float(s["attrs"]["data-end-s"]))
              for s in within(svg["attrs"]["id"], page, "circle", "stall") if s["attrs"]["data-rank"] == "1"]
    for w in windows:
        w0, w1 = float(w["attrs"]["data-start-s"]), float(w["attrs"]["data-end-s"])
        if not any(s0 < w1 + 0.5 and s1 > w0 for s0, s1 in stalls):
            fail("window %s (%.2f to %.2f s): no stall of rank 1 drawn in it; stalls %s"
                 % (w["attrs"]["data-window"], w0, w1, stalls))


def check_band(page, header, svg):
    check_header(header, {"ranks": "3", "injections": "1"})
    bands = within(svg["attrs"]["id"], page, "rect", "expected-detection")
    if len(bands) != 1:
        fail("expected one expected-detection band, found %d" % len(bands))
    band = bands[0]["attrs"]
    if (band.get("data-min-s"), band.get("data-max-s")) != ("0.500", "3.000"):
        fail("the band is not detection_s [0.5, 3]: %s" % band)
    if not float(band["width"]) > 10:
        fail("the band is not drawn wide: %s" % band)


def drill_case(ncclfi, source, browser, tmp):
    with open(os.path.join(source, "scenarios", "drills", "drill-flapping-link.json")) as f:
        drill = json.load(f)
    drill["baseline_runs"] = 1  # one baseline before the faulted run: time the axis must leave out
    kill = {
        "name": "html-kill-band", "summary": "rank 1 is killed; the others give up on it",
        "workload": {"command": ["/bin/sh", "-c", "[ $RANK = 1 ] && sleep 5; sleep 1; exit 3"], "ranks": 3},
        "launcher": {"kind": "command"}, "baseline": False, "deadline_s": 10, "grace_s": 1,
        "faults": [{"id": "crash", "layer": "proc", "kind": "kill", "params": {"signal": "SIGKILL"},
                    "target": {"ranks": [1]}, "trigger": {"after_ms": 300}}],
        "expect": {"outcome": "detected", "detection_s": {"min": 0.5, "max": 3}},
    }
    os.makedirs(tmp + "/s")
    for s in (drill, kill):
        with open("%s/s/%s.json" % (tmp, s["name"]), "w") as f:
            json.dump(s, f)
    run([ncclfi, "run", tmp + "/s", "--out", tmp + "/runs", "-q", "--html", tmp + "/report.html"], 400)
    page = load(browser, "file://" + tmp + "/report.html?layout-check", tmp)
    html = check_page_ran(page)
    check_layout(page, html)
    headers, svgs = timelines_by_scenario(page)
    runs = sorted(zip(headers, svgs), key=lambda hs: hs[0]["attrs"].get("data-ranks", ""))  # the kill has 3
    check_band(page, *runs[0])
    check_flapping_drill(page, *runs[1])
    print("PASS: report.html in Chromium: the three flaps' windows and stalls, the axis from the faulted "
          "attempt, the expected detection band, the header, no text out of its picture")


# Two ranks in step through files (as tests/e2e/timeouts_test.cc); a watchdog, the setting under test,
# notices a silent peer after MY_WATCHDOG_S and either ends the job (exit 3) or only reports it and waits on
# (MY_WATCHDOG_EXIT=0): detected, but left running, which the findings name.
JOB = r"""import os, sys, time
sys.path.insert(0, sys.argv[1])
import ncclfi_events as nfe
rank, run = int(os.environ["RANK"]), sys.argv[2]
watchdog = float(os.environ.get("MY_WATCHDOG_S", "0"))
ends = os.environ.get("MY_WATCHDOG_EXIT", "1") == "1"
nfe.start()
def mark(step):
    with open("%s/step-%d.tmp" % (run, rank), "w") as f: f.write(str(step))
    os.replace("%s/step-%d.tmp" % (run, rank), "%s/step-%d" % (run, rank))
def peer_step():
    try:
        with open("%s/step-%d" % (run, 1 - rank)) as f: return int(f.read() or -1)
    except (OSError, ValueError): return -1
for step in range(30):
    with nfe.step(step):
        time.sleep(0.03)
        mark(step)
        waited, told = time.monotonic(), False
        while peer_step() < step:
            if watchdog and not told and time.monotonic() - waited > watchdog:
                if ends:
                    nfe.exit(3, "watchdog"); sys.exit(3)
                nfe.event("watchdog_fired", waited_s=watchdog); told = True
            time.sleep(0.01)
nfe.exit(0)
"""


def check_matrix(page, out_dir):
    cells = page.all("td")
    if not cells:
        fail("no cells in the matrix")
    findings = [li["text"] for li in page.all("li")]
    left = [f for f in findings if "watchdog-report-only" in f and "nothing ended the job" in f]
    if not left:
        fail("the findings do not name the setting that leaves the job running: %s" % findings)
    problems = [td for td in cells if td["attrs"].get("data-finding") == "1"]
    if not any("still running" in td["text"] for td in problems):
        fail("the cell left running is not marked as a finding: %s" % [(td["attrs"], td["text"]) for td in cells])
    for td in problems:
        if "ok" in td["attrs"].get("class", "").split():
            fail("a cell the findings name is green: %s %r" % (td["attrs"], td["text"]))
    settings = [th["text"] for th in page.all("th")]
    if not any("MY_WATCHDOG_S=1" in t and "watchdog-1s" in t for t in settings):
        fail("the settings are not shown inline: %s" % settings)
    healthy = [p["text"] for p in page.all("p") if p["attrs"].get("id") == "healthy"][0]
    if " ms" not in healthy or "0.00 s" in healthy:
        fail("short steps are not in milliseconds: %r" % healthy)
    links = [a["attrs"]["href"] for a in page.all("a", "trial")]
    if len(links) != len(cells):
        fail("expected one trial link per cell (one trial each): %d links, %d cells" % (len(links), len(cells)))
    for href in links:
        if href.startswith("/") or "://" in href:
            fail("a trial link is not relative: " + href)
        if not os.path.isfile(os.path.join(out_dir, href, "verdict.json")):
            fail("a trial link does not lead to a run directory: " + href)


def timeouts_case(ncclfi, source, browser, tmp):
    with open(tmp + "/job.py", "w") as f:
        f.write(JOB)
    scenario = {"name": "file-sync-job", "summary": "two ranks in step through files",
                "params": {"job": tmp + "/job.py"},
                "workload": {"command": ["python3", "{param:job}", source + "/workloads/torch", "{run_dir}"],
                             "ranks": 2},
                "deadline_s": 30, "grace_s": 1, "expect": {"outcome": "clean"}}
    settings = {"settings": [
        {"name": "watchdog-1s", "summary": "ends the job", "env": {"MY_WATCHDOG_S": "1"}},
        {"name": "watchdog-report-only", "summary": "reports, never ends",
         "env": {"MY_WATCHDOG_S": "1", "MY_WATCHDOG_EXIT": "0"}}]}
    with open(tmp + "/s.json", "w") as f:
        json.dump(scenario, f)
    with open(tmp + "/settings.json", "w") as f:
        json.dump(settings, f)
    run([ncclfi, "timeouts", tmp + "/s.json", "--settings", tmp + "/settings.json", "--fault", "dead_rank",
         "--trials", "1", "--healthy-trials", "1", "--deadline-s", "6", "--out", tmp + "/runs",
         "--json", tmp + "/t.json"], 300)
    with open(tmp + "/t.json") as f:
        out_dir = json.load(f)["out_dir"]
    page = load(browser, "file://" + out_dir + "/timeouts.html", tmp)
    check_matrix(page, out_dir)
    print("PASS: timeouts.html in Chromium: findings never green, settings inline, steps in ms, trial links")


def main():
    ncclfi, source, case = sys.argv[1], sys.argv[2], sys.argv[3]
    browser = chromium()
    if browser is None:
        print("SKIPPED: chromium is not installed (scripts/setup installs it)")
        sys.exit(SKIPPED)
    with tempfile.TemporaryDirectory(prefix="ncclfi-html-") as tmp:
        {"drill": drill_case, "timeouts": timeouts_case}[case](ncclfi, source, browser, tmp)


if __name__ == "__main__":
    main()
