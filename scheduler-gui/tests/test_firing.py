"""Normal mode's firing thread (mmsched.run.firing.Firer) on its own: it writes each event at its moment, and never
two writes closer than the line's gap (the RESULT each FIRE makes on the profiler's line)."""

from __future__ import annotations

import threading
import time

from mmsched.model.event import Event
from mmsched.run.firing import Firer


def event(i: int) -> Event:
    return Event(i, i + 1, i % 8, "normal", 1, 10, 9, 0.0)


def fire_all(firer: Firer, ats: list[float], ended: list[float] | None = None) -> list[float]:
    """Every write's moment (and, into `ended`, when each send returned: the firer keeps its gap from there)."""
    written: list[float] = []
    done = threading.Event()

    def send(ev: Event, wire: bytes) -> None:
        written.append(time.monotonic())
        if ended is not None:
            ended.append(time.monotonic())
        if len(written) == len(ats):
            done.set()

    firer.send = send
    firer.start()
    for i, at in enumerate(ats):
        firer.add(event(i), at, b"\x00")
    assert done.wait(10.0), written
    firer.stop()
    return written


def test_events_that_came_due_together_go_out_a_line_gap_apart() -> None:
    # ten events whose moments all passed (a stall of the scheduler): without the gap they left back to back
    now = time.monotonic()
    firer = Firer(lambda e, w: None, min_gap_s=0.002)
    written = fire_all(firer, [now - 0.05 + 0.001 * i for i in range(10)])
    gaps = [b - a for a, b in zip(written, written[1:])]
    # (the send stamps a little after the wait); each write after the first waited out the gap unless the host
    # held the firing thread past it by itself (a busy machine): how many waited is the host's, not the rig's
    assert min(gaps) >= 0.002 - 100e-6 and firer.fired == 10 and firer.held <= 9


def test_an_event_is_held_only_when_the_write_before_it_ended_inside_its_gap() -> None:
    # two events 10 ms apart, five times: the second is held only if the first's write ended less than the gap
    # before the second's moment (a wake-up late by 8 ms, which a busy host may give: then it must be held), and
    # neither goes out before its moment
    for _ in range(5):
        now = time.monotonic() + 0.02
        ats = [now, now + 0.010]
        ended: list[float] = []
        firer = Firer(lambda e, w: None, min_gap_s=0.002)
        written = fire_all(firer, ats, ended)
        assert all(w >= at for w, at in zip(written, ats))
        if firer.held:
            # (`ended` is stamped as the send returns, a few instructions before the firer takes its gap from there)
            assert firer.held == 1 and ended[0] + 0.002 > ats[1], (ended, ats)
            assert written[1] >= ended[0] + 0.002 - 100e-6      # (the send stamps a little after the wait)
