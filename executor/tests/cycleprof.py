"""Cycle profile of the dispatch paths: where the cycles between a timecode edge and the event edge go.

    python tests/cycleprof.py [task|isr] [N]

Runs the image alone in the bench (one-node mode) with --itrace, schedules N events (default 20) two ticks
ahead on the chosen dispatch path, and for each edge that fired an event attributes every executed
instruction (its cycles: the gap to the next traced instruction) from the edge to the PORTC write
to the function that holds its address (avr-nm). Prints mean cycles per function and per event,
in order of first execution, and how many of them ran with interrupts disabled. A diagnostic tool,
not a test.
"""

from __future__ import annotations

import bisect
import collections
import os
import subprocess
import sys

import mmproto as mp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simrun import ELF, TICK, run_bench, stimulus  # noqa: E402


def symbols():
    out = subprocess.run(["avr-nm", "-n", "-S", str(ELF)], check=True, capture_output=True, text=True).stdout
    addrs, names = [], []
    for line in out.splitlines():
        p = line.split()
        # functions only: weak absolute symbols such as __stack (0x21ff) would swallow code above them
        if len(p) >= 3 and p[-2] in "tT":
            addrs.append(int(p[0], 16))
            names.append(p[-1])
    return addrs, names


def main() -> None:
    path = sys.argv[1] if len(sys.argv) > 1 else "task"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    dispatch = 1 if path == "task" else 0
    mode = mp.Mode(mode=mp.ExecutorMode.MIXED, dispatch=dispatch, distance=0, period=0, random_ids=0)
    script = [(int(0.3 * TICK), mode.wire(0))]
    for j in range(1, n + 1):
        script.append((j * TICK + TICK // 3, mp.Schedule(tag=100 + j, event_id=j % 8, timecode=j + 2).wire(j & 0xFF)))
    cycles = (n + 4) * TICK
    out = run_bench(stimulus(script, cycles), cycles, ["--itrace", "2000"]).splitlines()
    addrs, names = symbols()
    k_edges = [int(l.split()[1]) for l in out if l.startswith("K ") and l.split()[1] != "0"]
    c_edges = [int(l.split()[1]) for l in out if l.startswith("C ")][1:]
    trace = []
    for l in out:
        if l.startswith("P "):
            _, c, pc, i = l.split()
            trace.append((int(c), int(pc, 16), int(i)))
    cycles = [t[0] for t in trace]
    per_fn: dict[str, int] = collections.OrderedDict()
    cli_total, events, lat = 0, 0, []
    for ce in c_edges:
        k = max(e for e in k_edges if e <= ce)
        lat.append(ce - k)
        lo, hi = bisect.bisect_left(cycles, k), bisect.bisect_left(cycles, ce)
        for (c, pc, i), nxt in zip(trace[lo:hi], trace[lo + 1:hi + 1]):
            fn = names[bisect.bisect_right(addrs, pc) - 1] if pc >= addrs[0] else "?"
            per_fn[fn] = per_fn.get(fn, 0) + (nxt[0] - c)
            cli_total += (nxt[0] - c) if not i else 0
        events += 1
    print(f"{path} path, {events} events, latency mean {sum(lat) / len(lat):.1f} cycles "
          f"({sum(lat) / len(lat) / 16:.2f} us), min {min(lat)}, max {max(lat)}")
    for fn, cyc in per_fn.items():
        print(f"  {cyc / events:7.1f}  {fn}")
    print(f"  {cli_total / events:7.1f}  of which with interrupts disabled (I=0)")


if __name__ == "__main__":
    main()
