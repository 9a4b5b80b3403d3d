#!/usr/bin/env python3
"""A HIL script in a dozen lines: one event scheduled two ticks ahead, its latency as the profiler saw it.

    .venv/bin/python hil/examples/one_event.py                 # on the virtual bench
    .venv/bin/python hil/examples/one_event.py PROFILER EXECUTOR   # on real boards (ports or pyserial URLs)
"""

from __future__ import annotations

import sys
from contextlib import ExitStack

import mmproto as mp
from mmhil import Bench, Rig


def main(argv: list[str]) -> int:
    with ExitStack() as stack:
        if len(argv) == 2:
            rig = stack.enter_context(Rig(argv[0], argv[1]))
        else:
            bench = stack.enter_context(Bench())
            rig = stack.enter_context(Rig.on_bench(bench))
        tb = rig.time_base()                                        # the profiler's clock, from its HELLO
        rig.send("executor", mp.Mode(mode=mp.ExecutorMode.MIXED, dispatch=mp.Dispatch.ISR,
                                     distance=0, period=0, random_ids=0))
        rig.wait_for("executor", mp.Status)
        rig.drain("profiler")
        _, now = rig.wait_for("profiler", mp.Timecode)              # a tick has just begun
        target = now.timecode + 2
        rig.send("executor", mp.Schedule(tag=1, event_id=5, timecode=target))  # two ticks ahead
        _, ack = rig.wait_for("executor", mp.Ack)
        _, result = rig.wait_for("profiler", mp.Result, timeout=1.0)
        latency_us = tb.counts_to_us(tb.latency_counts(target, result))
        print(f"event 5 scheduled for tick {target}, acked at tick {ack.timecode}, "
              f"profiler saw it {latency_us:.3f} us after the tick began")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
