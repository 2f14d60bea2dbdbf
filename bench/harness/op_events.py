#!/usr/bin/env python3
"""A stand-in rank that writes many events fast: `start`, COUNT timed `op` events (seq 0..COUNT-1, the
shape of the op trace) and `done` (verified), to $NCCLFI_EVENTS, in the events contract. It measures
what a long run costs the harness that reads them (bench/harness/history_memory.sh and the robustness
test of the harness's memory).
   op_events.py COUNT"""
import os
import sys
import time

count = int(sys.argv[1])
rank = int(os.environ.get("NCCLFI_RANK", "0"))
attempt = int(os.environ.get("NCCLFI_ATTEMPT", "0"))
pid = os.getpid()
head = f'"rank":{rank},"pid":{pid},"host":"bench","source":"workload","attempt":{attempt}'


def line(event, extra=""):
    t = time.time_ns()
    return f'{{"ts_ns":{t},"mono_ns":{time.monotonic_ns()},{head},"event":"{event}"{extra}}}\n'


with open(os.environ["NCCLFI_EVENTS"], "a", buffering=1 << 20) as out:
    out.write(line("start"))
    t, m = time.time_ns(), time.monotonic_ns()
    batch = []
    for seq in range(count):
        batch.append(f'{{"ts_ns":{t + seq},"mono_ns":{m + seq},{head},"event":"op","op":"allreduce",'
                     f'"bytes":1048576,"seq":{seq},"dur_us":{100 + seq % 7}.5}}\n')
        if len(batch) == 4096:
            out.write("".join(batch))
            batch.clear()
    out.write("".join(batch))
    out.write(line("done", ',"verified":true,"seconds":1.0'))
