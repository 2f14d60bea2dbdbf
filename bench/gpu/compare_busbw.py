#!/usr/bin/env python3
"""ncclfi-workload's bus bandwidth against nccl-tests' on the same sizes (a performance budget).

  compare_busbw.py LOG DIR   LOG: ncclfi-workload's rank-0 table; DIR/nccl-tests-<test>.txt: nccl-tests
                             result rows. Prints each pair; exits 1 when ours is more than 5% below
                             theirs at 128 MiB or more.
"""
import os
import sys


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


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(64)
    cmd_compare_busbw(sys.argv[1], sys.argv[2])
