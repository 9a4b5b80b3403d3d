"""A mixed run started from the window on the bench: every event on time or named as the rig's, even when the
run's process stops for 5 ticks mid-run (the TIMECODEs of those ticks wait, as a busy start once made them)."""

from __future__ import annotations

import pytest


@pytest.mark.paced
def test_mixed_run_from_the_gui_has_every_event_on_time(make_win, qtbot, bench) -> None:
    # a timecode ~5 ticks stale makes a burst of past-due events: in a mixed run two ticks ahead, marked valid,
    # the first 5 events were missed (past_due), created from one (created_phase 4.83, 3.84, 2.94, ...) at a busy
    # start. The runner waits for the inbox to be empty before making an event; here the run's process is
    # stopped for 5 ticks mid-run, so the TIMECODEs of those ticks wait, as they did there, every time.
    import os
    import signal
    import time

    from PySide6.QtCore import Qt

    win = make_win()
    win.run_settings.set_mode("mixed")
    win.run_settings.distance.setValue(2)
    win.run_settings.rate.setValue(0)
    win.run_settings.length.setValue(60)
    qtbot.mouseClick(win.start_button, Qt.MouseButton.LeftButton)
    assert win.running
    worker = win.worker
    qtbot.waitUntil(lambda: win.model.rowCount() >= 20 or not win.running, timeout=60000)
    assert win.running and worker.child is not None and worker.child.pid is not None
    os.kill(worker.child.pid, signal.SIGSTOP)
    try:
        time.sleep(5 * 0.0711)
    finally:
        os.kill(worker.child.pid, signal.SIGCONT)
    qtbot.waitUntil(lambda: not win.running, timeout=90000)
    assert win.result is not None, win.problems
    events = win.result.events
    assert len(events) == 60
    # on time, or (a host that also starved the run's process after the stop) not measurable, named as the rig's:
    # never a miss blamed on the executor. One exception the stop itself makes: an event made on time from the
    # newest TIMECODE (created_phase < 1) whose SCHEDULE the stop held past its tick's start is missed past_due,
    # measurable, a result about the PC (CI saw event 20, made at phase 0.16, so); at most the SCHEDULEs in flight
    # two ticks ahead, and never one made from a stale TIMECODE (the burst this test guards against)
    held = [e.event for e in events if e.outcome == "missed" and e.reason == "past_due" and e.measurable
            and e.created_phase is not None and e.created_phase < 1.0]
    assert len(held) <= 3, held
    bad = [(e.event, e.outcome, e.reason, e.created_phase) for e in events
           if e.outcome != "ok" and e.measurable and e.event not in held]
    assert not bad, (bad, win.result.sidecar.get("invalid_reason"))
    # two ticks ahead of the timecode each was made from: none from a stale one in a burst after the stop
    assert all(e.scheduled_tc - e.created_tc == 2 for e in events)
    measured_ok = sum(1 for e in events if e.outcome == "ok" and e.measurable)
    assert win.live.stats.summary["n"] == measured_ok
