#!/usr/bin/env python3
"""Small readers of ncclfi event logs and workload output for the GPU check scripts (python3 only).

  events.py count FILE EVENT            lines whose event is EVENT
  events.py field FILE EVENT KEY        KEY of each EVENT line, ordered by rank, space-separated
  events.py hang-timing DIR TIMEOUT_S   when each rank exited after the hang began (DIR/end0, DIR/end1)
  events.py ddp-timeline FILE           start/resume/checkpoint/nan/done events, relative to the first
  events.py compare-busbw LOG DIR       our busbw (LOG) against nccl-tests' (DIR/nccl-tests-*.txt)
"""
import json
import os
import sys


def load(path):
    records = []
    if not os.path.exists(path):
        return records
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                records.append(json.loads(line))
    return records


def cmd_count(path, event):
    print(sum(1 for r in load(path) if r.get("event") == event))


def cmd_field(path, event, key):
    rows = sorted((r for r in load(path) if r.get("event") == event), key=lambda r: (r.get("rank", -1), r["ts_ns"]))
    print(" ".join(str(r.get(key)) for r in rows))


def cmd_hang_timing(directory, timeout_s):
    timeout_ms = float(timeout_s) * 1000.0
    records = load(os.path.join(directory, "events.jsonl"))
    injects = [r for r in records if r.get("event") == "inject"]
    fired = [r for r in records if r.get("event") == "watchdog_fired"]
    if injects:
        t0, origin = min(r["ts_ns"] for r in injects), "inject event"
    elif fired:
        t0, origin = min(r["ts_ns"] - int(r["waited_ms"] * 1e6) for r in fired), "watchdog wait start"
    else:
        print("no inject or watchdog_fired event")
        return
    parts, late = [], False
    for rank in (0, 1):
        end_path = os.path.join(directory, "end%d" % rank)
        if not os.path.exists(end_path):
            parts.append("rank %d: no exit" % rank)
            late = True
            continue
        with open(end_path) as f:
            exit_ms = (int(f.read().strip()) - t0) / 1e6
        mine = [r for r in fired if r.get("rank") == rank]
        fired_ms = (mine[0]["ts_ns"] - t0) / 1e6 if mine else float("nan")
        aborts = [r for r in records if r.get("event") == "abort" and r.get("rank") == rank]
        abort_ms = aborts[0].get("abort_ms") if aborts else None
        parts.append("rank %d: watchdog fired %.0f ms, exited %.0f ms after the hang (ncclCommAbort %s ms)" %
                     (rank, fired_ms, exit_ms, "%.1f" % abort_ms if abort_ms is not None else "n/a"))
        late = late or not mine or exit_ms > timeout_ms + 1000.0
    print("%s (from the %s; limit %.0f ms): %s" % ("late" if late else "within", origin, timeout_ms + 1000.0,
                                                  "; ".join(parts)))


def cmd_ddp_timeline(path):
    records = load(path)
    if not records:
        print("    (no events)")
        return
    t0 = min(r["ts_ns"] for r in records)
    last_step = {}
    for r in records:
        if r.get("event") == "op":
            last_step[(r.get("pid"), r.get("rank"))] = r.get("seq")
    for r in sorted(records, key=lambda r: r["ts_ns"]):
        if r.get("event") in ("start", "resume", "checkpoint", "nan_detected", "done", "exit", "inject"):
            extra = {k: r[k] for k in ("iter", "attempt", "verified", "final_loss", "code", "fault_id", "step")
                     if k in r}
            print("    %8.3f s  rank %s pid %s  %-12s %s" % ((r["ts_ns"] - t0) / 1e9, r.get("rank"), r.get("pid"),
                                                          r["event"], json.dumps(extra)))
    for (pid, rank), step in sorted(last_step.items(), key=lambda kv: kv[0][0]):
        print("    rank %s pid %s: last completed step %s" % (rank, pid, step))


def parse_our_table(path):
    figures = {}
    with open(path) as f:
        for line in f:
            cols = line.split()
            if len(cols) >= 10 and not line.startswith("#") and cols[1].isdigit():
                figures[(cols[0], int(cols[1]))] = float(cols[8])
    return figures


def cmd_compare_busbw(log, directory):
    ours = parse_our_table(log)
    names = {"all_reduce": "all_reduce", "all_gather": "all_gather", "reduce_scatter": "reduce_scatter",
             "broadcast": "broadcast", "alltoall": "all_to_all", "sendrecv": "sendrecv"}
    worst_ok = True
    for test, op in names.items():
        path = os.path.join(directory, "nccl-tests-%s.txt" % test)
        if not os.path.exists(path):
            continue
        with open(path) as f:
            for line in f:
                cols = line.split()
                if len(cols) < 8 or not cols[0].isdigit():
                    continue
                size = int(cols[0])
                theirs = float(cols[7])  # out-of-place busbw
                mine = ours.get((op, size))
                if mine is None:
                    continue
                ratio = mine / theirs if theirs > 0 else float("nan")
                print("    %-15s %12d B  ours %8.2f GB/s  nccl-tests %8.2f GB/s  ratio %.3f" %
                      (op, size, mine, theirs, ratio))
                if size >= 128 << 20 and ratio < 0.95:
                    worst_ok = False
    sys.exit(0 if worst_ok else 1)


def main(argv):
    commands = {"count": cmd_count, "field": cmd_field, "hang-timing": cmd_hang_timing,
                "ddp-timeline": cmd_ddp_timeline, "compare-busbw": cmd_compare_busbw}
    if len(argv) < 2 or argv[1] not in commands:
        print(__doc__, file=sys.stderr)
        return 64
    commands[argv[1]](*argv[2:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
