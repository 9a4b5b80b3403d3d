"""The profiler's histogram, the run's side (mmsched.verdict.profhist): its reports taken frame by frame, its figures
against the PC's own from the same events, its sidecar section and terminal line. One layer: the frames are
made here; the profiler that sends them is tested in profiler-fw/tests and end to end in test_series_runs.py."""

from __future__ import annotations

import mmproto as mp
import pytest
from mmsched.model.event import Event
from mmsched.verdict.profhist import ProfilerHistogram, cell_shift_for, end_message, format_profiler_histogram

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


def test_a_run_takes_the_histogram_alone_only_where_it_must_or_is_told() -> None:
    from mmsched.verdict.profhist import NoHistogram, histogram_only
    avr = mp.Hello(mp.PROTO_VERSION, mp.NodeKind.PROFILER, 0x0200, 16_000_000, 16_000_000, 1_137_778, 115200,
                   mp.HELLO_FLAG_CAPTURE | mp.HELLO_FLAG_HIST, 2)
    i8051 = mp.Hello(mp.PROTO_VERSION, mp.NodeKind.PROFILER, 0x0100, 11_059_200, 921_600, 65_536, 115200,
                     mp.HELLO_FLAG_POLLED | mp.HELLO_FLAG_8051, 0)
    line = "--rate 1 ms is 1,000 events a second, but at 115200 baud the profiler's line carries 569"
    assert histogram_only(None, avr, None) is False            # the line carries RESULTs: keep them
    assert histogram_only(None, avr, line) is True             # it does not: the histogram alone
    assert histogram_only(False, avr, None) is True            # --no-raw
    assert histogram_only(True, avr, None) is False            # --raw
    for raw, hello, why in ((True, avr, line), (None, i8051, line), (False, i8051, None)):
        with pytest.raises(NoHistogram):
            histogram_only(raw, hello, why)


def test_a_counted_runs_summary_comes_from_the_cells_and_accounts_for_every_moment() -> None:
    h = ProfilerHistogram(mp.HistArm(10, 0, 16_000, 5, 16_000, 1600, 0, 4, 14, 0), 16_000_000, 1_137_778)
    h.take(cells(1, 8, 90, 9, 0, 0, 0, 0, 0, 1))        # 90 in cell 8, 9 in cell 9, 1 in cell 15
    h.take(summary(1, mp.HistSummary.FLAG_FINAL, 100, 0, 2, 3, 130, 250, 100 * 140))
    s = h.run_summary(105, 0)
    assert s["outcomes"] == {"ok": 100, "late": 0, "early": 2, "missed": 3, "lost": 0} and s["events"] == 105
    assert s["n"] == 100 and s["min_us"] == 8.125 and s["max_us"] == 15.625 and s["mean_us"] == 8.75
    assert (s["p50_us"], s["p99_us"], s["p999_us"]) == (9.0, 10.0, 15.625)   # cell edges, the last at most max
    assert s["variance_us2"] is None
    assert h.accounting(105, stopped=False) == (0, None)
    left, why = h.accounting(110, stopped=False)
    assert left == 5 and "does not add up" in why
    assert h.accounting(110, stopped=True) == (5, None)      # Ctrl-C: the moments after the end, not counted
    hs = h.histogram_section()
    assert hs["n"] == 100 and hs["counts"][8] == 90 and hs["worst"]["event"] == 3 and hs["worst"]["scheduled_tc"] == 10


def test_without_the_final_report_a_counted_run_is_not_accounted_for() -> None:
    h = ProfilerHistogram(mp.HistArm(10, 0, 16_000, 5, 16_000, 1600, 0, 4, 14, 0), 16_000_000, 1_137_778)
    h.take(summary(2, mp.HistSummary.FLAG_ARMED, 3, 0, 0, 0, 130, 250, 600))
    left, why = h.accounting(5, stopped=False)
    assert left == 5 and "final report never came" in why


def test_a_series_whose_histogram_was_never_armed_is_not_accounted_for() -> None:
    from mmsched.verdict.profhist import counted_summary
    summary, invariant = counted_summary(None, 5, stopped=False)
    assert not invariant["ok"] and "never armed" in invariant["error"]
    assert summary["events"] == 0 and summary["from_profiler_histogram"]["not_counted"] == 5


def test_the_mean_and_minimum_are_none_until_an_event_is_measured_and_the_progress_line_shows_them() -> None:
    """One rule for the histogram's mean and minimum, used by the sidecar, the run's summary and the progress
    line: before any ok or late event the profiler's minimum is NO_MIN, never a figure."""
    import io

    from mmrig.progress import ProgressLine

    h = ProfilerHistogram(ARM, 16_000_000)
    assert h.mean_us() is None and h.min_us() is None
    h.take(summary(0, mp.HistSummary.FLAG_ARMED, 0, 0, 1, 0, mp.HistSummary.NO_MIN, 0, 0))
    assert h.mean_us() is None and h.min_us() is None and h.section([])["min_us"] is None
    h.take(summary(1, mp.HistSummary.FLAG_FINAL, 2, 1, 1, 1, 37, 16_100, 37 + 63 + 16_100))
    assert h.mean_us() == round(16_200 / 16 / 3, 4) and h.min_us() == 2.3125
    s = h.run_summary(5, 0)
    assert (s["mean_us"], s["min_us"]) == (h.mean_us(), h.min_us())
    p = ProgressLine(io.StringIO(), 5, lambda: "", name="r")
    p.observer("profiler_report", h)
    assert (p._avg, p._low) == (h.mean_us(), h.min_us())
