"""The profiler's histogram, the run's side (mmsched.profhist): its reports taken frame by frame, its figures
against the PC's own from the same events, its sidecar section and terminal line. One layer: the frames are
made here; the profiler that sends them is tested in profiler-fw/tests and end to end in test_series_runs.py."""

from __future__ import annotations

import mmproto as mp
from mmsched.event import Event
from mmsched.profhist import ProfilerHistogram, cell_shift_for, end_message, format_profiler_histogram

ARM = mp.HistArm(timecode=10, first=0, period=16_000, count=5, late=16_000, early=1600, event_id=0, cell_shift=4,
                 report_ticks=14, flags=mp.HistArm.FLAG_RAW)


def event(k: int, outcome: str, counts: int | None) -> Event:
    e = Event(k, k + 1, k & 7, "mixed", 0, 10, 10, 0.0)
    e.outcome, e.latency_counts = outcome, counts
    return e


def summary(report: int, flags: int, ok: int, late: int, early: int, missed: int, lo: int, hi: int,
            total: int) -> mp.HistSummary:
    return mp.HistSummary(report, flags, ok, late, early, missed, 0, lo, hi, 3, total & 0xFFFFFFFF, total >> 32, 1)


def cells(report: int, cell: int, *counts: int) -> mp.HistCells:
    c = list(counts) + [0] * (8 - len(counts))
    return mp.HistCells(report, cell, *c)


def test_a_cell_is_one_microsecond_where_the_timer_allows() -> None:
    assert cell_shift_for(16_000_000) == 4          # 16 counts: 1 us exactly (the ATmega2560)
    assert cell_shift_for(921_600) == 0             # the 8051's count, 1.085 us, is the finest it has


def test_the_final_report_agrees_with_the_same_events_cell_for_cell() -> None:
    h = ProfilerHistogram(ARM, 16_000_000)
    assert h.take(summary(0, mp.HistSummary.FLAG_ARMED, 0, 0, 0, 0, mp.HistSummary.NO_MIN, 0, 0))
    assert h.take(cells(1, 0, 0, 0, 1, 1))           # cells 2 and 3: 37 and 63 counts
    assert h.take(cells(1, 1000, 1))                 # the overflow cell: a late event of 16,100 counts
    assert h.take(summary(1, mp.HistSummary.FLAG_FINAL, 2, 1, 1, 1, 37, 16_100, 37 + 63 + 16_100))
    assert not h.take(mp.Timecode(5))
    events = [event(0, "ok", 37), event(1, "ok", 63), event(2, "late", 16_100), event(3, "early", -20),
              event(4, "missed", None)]
    s = h.section(events)
    assert s["final"] and s["complete"] and s["n"] == 3 and s["overflow"] == 1
    assert s["counts"][2] == 1 and s["counts"][3] == 1 and sum(s["counts"]) == 2
    assert s["min_us"] == 2.3125 and s["max_us"] == 1006.25 and s["mean_us"] == round(16_200 / 16 / 3, 4)
    assert s["agreement"] == {"checked": True, "agrees": True, "pc": {"ok": 2, "late": 1, "early": 1},
                              "profiler": {"ok": 2, "late": 1, "early": 1}, "cells_differing": 0,
                              "first_differing_cell": None}
    assert h.disagreement(events) is None
    assert "agrees with the PC's, cell for cell" in format_profiler_histogram(s)


def test_a_cell_the_pc_counts_otherwise_makes_the_run_invalid_as_the_rigs_fault() -> None:
    h = ProfilerHistogram(ARM, 16_000_000)
    h.take(cells(1, 0, 0, 0, 2))
    h.take(summary(1, mp.HistSummary.FLAG_FINAL, 2, 0, 0, 0, 37, 40, 77))
    events = [event(0, "ok", 37), event(1, "ok", 50)]          # 50 counts: cell 3, not 2
    a = h.section(events)["agreement"]
    assert a["checked"] and not a["agrees"] and a["cells_differing"] == 2 and a["first_differing_cell"] == 2
    why = h.disagreement(events)
    assert why is not None and "fault of the rig" in why


def test_without_a_final_report_nothing_is_compared_and_the_line_says_so() -> None:
    h = ProfilerHistogram(ARM, 16_000_000)
    h.take(summary(3, mp.HistSummary.FLAG_ARMED, 9, 0, 0, 0, 40, 90, 500))
    s = h.section([event(0, "ok", 40)])
    assert not s["final"] and s["agreement"]["checked"] is False and h.disagreement([]) is None
    assert "NO final report" in format_profiler_histogram(s)


def test_a_refusal_is_kept_and_the_end_message_ends_the_series() -> None:
    h = ProfilerHistogram(ARM, 16_000_000)
    assert h.take(mp.Error(mp.ErrorCode.BAD_VALUE, mp.HistArm.TYPE, 0, 0))
    assert h.section([])["refused"] == "BAD_VALUE"
    assert end_message().count == 0
