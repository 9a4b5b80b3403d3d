#!/usr/bin/env python3
"""A HIL script in a few lines: one event scheduled two ticks ahead, its latency as the profiler saw it.

    .venv/bin/python hil/examples/one_event.py                 # on the virtual bench
    .venv/bin/python hil/examples/one_event.py PROFILER EXECUTOR   # on real boards (ports or pyserial URLs)

The same in a pytest test is `rig.schedule(5, ticks_ahead=2)` with the `rig` fixture (docs/hil.md).
"""

from __future__ import annotations

import sys
from contextlib import ExitStack

from mmhil import Bench, Rig, RigError


def main(argv: list[str]) -> int:
    with ExitStack() as stack:
        try:
            if len(argv) == 2:
                rig = stack.enter_context(Rig(argv[0], argv[1]))
            else:
                bench = stack.enter_context(Bench())
                rig = stack.enter_context(Rig.on_bench(bench))
        except RigError as exc:
            print(f"one_event: {exc}", file=sys.stderr)
            return 2
        ev = rig.schedule(5, ticks_ahead=2, dispatch="isr")       # MODE, SCHEDULE, ACK, RESULT, FIRED
        if ev.latency_us is None:
            print(f"event 5: {ev.outcome} ({ev.reason})")
            return 1
        print(f"event 5 scheduled for tick {ev.scheduled_tc}, acked at tick {ev.ack_tc}, "
              f"profiler saw it {ev.latency_us:.3f} us after the tick began ({ev.outcome})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
