#!/usr/bin/env python3
"""Runs a command and watches it and its descendants from /proc while it runs.

    proc_watch.py [--interval S] [--runs-dir DIR] [--tmp-glob PATTERN] -- COMMAND...

Every INTERVAL seconds (default 0.05) it samples the command's own process (the harness): its CPU time
(utime + stime of the process itself, not of its children), open descriptors and resident memory, the
number of its living descendants, the number of entries under --tmp-glob and the number of run
directories under --runs-dir (one per finished or running scenario). At the end it prints one
name=value line per figure, and writes every sample as a JSON line to $PROC_WATCH_SAMPLES when set.

  wall_s                wall time of the command
  harness_cpu_s         the command's own CPU time at its last sample (at most INTERVAL before its exit)
  total_cpu_s           CPU time of the command and every descendant it reaped (wait4's rusage)
  harness_cpu_share     harness_cpu_s / total_cpu_s
  harness_cores         harness_cpu_s / wall_s (cores the harness kept busy on average)
  peak_descendants      most living descendants seen at once
  first_/last_...       fds, rss_mb, descendants, tmp_entries at the first sample after the first run
                        directory appeared and at the last sample (the soak's start and end)
  early_/late_min_...   the least fds, rss_mb, descendants, tmp_entries over the first and the last tenth
                        of the samples after the first run directory appeared
  all_gone_ns           wall time (ns) of the first sample after the peak with no living descendant
  exit_ns               wall time (ns) when the command's exit was seen
"""
import glob
import json
import os
import sys
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


def stat_fields(pid):
    with open(f"/proc/{pid}/stat") as f:
        text = f.read()
    # The command name may hold spaces and parentheses: fields start after the last ')'.
    return text[text.rindex(")") + 2:].split()


def children_map():
    """ppid -> [pid] for every process on the host."""
    kids = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            ppid = int(stat_fields(int(name))[1])
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(name))
    return kids


def descendants(root):
    kids = children_map()
    todo, seen = [root], 0
    while todo:
        for child in kids.get(todo.pop(), []):
            seen += 1
            todo.append(child)
    return seen


def sample(pid, runs_dir, tmp_glob):
    fields = stat_fields(pid)
    cpu = (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime: the process itself
    with open(f"/proc/{pid}/statm") as f:
        rss_mb = int(f.read().split()[1]) * PAGE / 1048576
    return {
        "ts_ns": time.time_ns(),
        "cpu_s": cpu,
        "fds": len(os.listdir(f"/proc/{pid}/fd")),
        "rss_mb": round(rss_mb, 1),
        "descendants": descendants(pid),
        "tmp_entries": len(glob.glob(tmp_glob)) if tmp_glob else 0,
        "runs": len([d for d in glob.glob(os.path.join(runs_dir, "*", "2*")) if "/suites/" not in d])
        if runs_dir else 0,
    }


def main(argv):
    interval, runs_dir, tmp_glob = 0.05, None, None
    while argv and argv[0] != "--":
        flag, value, argv = argv[0], argv[1], argv[2:]
        if flag == "--interval":
            interval = float(value)
        elif flag == "--runs-dir":
            runs_dir = value
        elif flag == "--tmp-glob":
            tmp_glob = value
        else:
            sys.exit(f"proc_watch: unknown option {flag}")
    if not argv[1:]:
        sys.exit("usage: proc_watch.py [--interval S] [--runs-dir DIR] [--tmp-glob PATTERN] -- COMMAND...")
    command = argv[1:]
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.execvp(command[0], command)
    samples = []
    sink = open(os.environ["PROC_WATCH_SAMPLES"], "w") if os.environ.get("PROC_WATCH_SAMPLES") else None
    status, usage = None, None
    while status is None:
        done, st, ru = os.wait4(pid, os.WNOHANG)
        if done == pid:
            status, usage, exit_ns = st, ru, time.time_ns()
            break
        try:
            s = sample(pid, runs_dir, tmp_glob)
        except (OSError, ValueError, IndexError):
            s = None  # exiting between the wait and the read
        if s:
            samples.append(s)
            if sink:
                sink.write(json.dumps(s) + "\n")
        time.sleep(interval)
    wall = time.monotonic() - start
    total = usage.ru_utime + usage.ru_stime
    last = samples[-1] if samples else {"cpu_s": 0.0}
    print(f"exit_status={os.waitstatus_to_exitcode(status)}")
    print(f"exit_ns={exit_ns}")
    print(f"wall_s={wall:.2f}")
    print(f"harness_cpu_s={last['cpu_s']:.2f}")
    print(f"total_cpu_s={total:.2f}")
    print(f"harness_cpu_share={last['cpu_s'] / total if total > 0 else 0:.3f}")
    print(f"harness_cores={last['cpu_s'] / wall:.3f}")
    if not samples:
        return 0
    peak = max(range(len(samples)), key=lambda i: samples[i]["descendants"])
    print(f"peak_descendants={samples[peak]['descendants']}")
    gone = next((s for s in samples[peak:] if s["descendants"] == 0), None)
    print(f"all_gone_ns={gone['ts_ns'] if gone else 0}")
    first = next((s for s in samples if s["runs"] >= 1), samples[0])
    for name, s in (("first", first), ("last", samples[-1])):
        for key in ("runs", "fds", "rss_mb", "descendants", "tmp_entries"):
            print(f"{name}_{key}={s[key]}")
    # Between two scenarios the harness holds only what it keeps: the least of each figure over the
    # first and the last tenth of the samples compares like with like (a leak raises the late floor).
    busy = [s for s in samples if s["runs"] >= 1] or samples
    tenth = max(1, len(busy) // 10)
    for name, window in (("early", busy[:tenth]), ("late", busy[-tenth:])):
        for key in ("fds", "rss_mb", "descendants", "tmp_entries"):
            print(f"{name}_min_{key}={min(s[key] for s in window)}")
    print(f"peak_rss_mb={max(s['rss_mb'] for s in samples)}")
    print(f"peak_fds={max(s['fds'] for s in samples)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
