"""A series on the profiler's histogram alone cut in time (mmsched.verdict.profslices): the phases and the worst
case over time from the profiler's cumulative reports. One layer: the reports are made here as the profiler
sends them (cumulative cells, counts, sum, min and max); a real run in phases on the histogram alone is in
test_series_runs.py."""

from __future__ import annotations

import mmproto as mp
from mmsched.model.phaseplan import PhasePlan, PhaseSpan
from mmsched.verdict.profhist import CELLS, ProfilerHistogram
from mmsched.verdict.profslices import HISTORY, HistogramSlices

ARM = mp.HistArm(timecode=10, first=0, period=16_000, count=10_000, late=16_000, early=1600, event_id=0,
                 cell_shift=4, report_ticks=14, flags=0)
US = 16                                  # counts a microsecond at 16 MHz: a cell is 1 us


class Profiler:
    """What the profiler's reports say, cumulative: latencies added as its edges come."""

    def __init__(self) -> None:
        self.hist = ProfilerHistogram(ARM, 16_000_000)
        self.cells = [0] * (CELLS + 1)
        self.ok = self.early = self.sum = self.max = self.report_no = 0
        self.min = mp.HistSummary.NO_MIN
        self.worst = 0
        self.k = 0

    def edges(self, *latencies_us: float, early: int = 0) -> None:
        for us in latencies_us:
            counts = round(us * US)
            self.cells[min(CELLS, counts // US)] += 1
            self.ok += 1
            self.sum += counts
            if counts > self.max:
                self.max, self.worst = counts, self.k
            self.min = min(self.min, counts)
            self.k += 1
        self.early += early

    def report(self, slices: HistogramSlices, t_s: float) -> None:
        """The report as it arrives: its cells, then its summary."""
        self.report_no += 1
        for first in range(0, CELLS + 1, mp.HistCells.BLOCK):
            block = self.cells[first:first + mp.HistCells.BLOCK]
            self.hist.take(mp.HistCells(self.report_no, first, *(block + [0] * (mp.HistCells.BLOCK - len(block)))))
        self.hist.take(mp.HistSummary(self.report_no, mp.HistSummary.FLAG_ARMED, self.ok, 0, self.early, 0, 0,
                                      self.min, self.max, self.worst, self.sum & 0xFFFFFFFF, self.sum >> 32, 1))
        slices.report(self.hist, t_s)


def test_each_interval_counts_what_came_between_the_reports_at_its_edges() -> None:
    p, slices = Profiler(), HistogramSlices(every_s=10.0)
    p.edges(5.0, 6.0, 30.2)
    p.report(slices, 4.0)
    p.edges(7.0)
    p.report(slices, 10.5)            # the first report at or after 10 s: the first interval ends here
    p.edges(8.0, 9.0)
    p.report(slices, 15.0)
    p.edges(12.3)
    p.report(slices, 21.0)            # the last interval: to the last report
    m = slices.maxima_section(p.hist)
    assert m["from"] == "profiler reports" and m["n"] == 7 and m["every_s"] == 10.0
    first, second = m["intervals"]     # (the third, [20, 30), counted nothing: the intervals end at the last count)
    assert (first["count"], first["max_us"], first["max_exact"], first["max_event"]) == (4, 30.1875, True, 2)
    assert (first["counted_from_s"], first["counted_to_s"]) == (0.0, 10.5)
    # the run's maximum did not rise in the second: its highest cell's upper edge, at or above the truth (12.3)
    assert (second["count"], second["max_us"], second["max_exact"], second["max_event"]) == (3, 13.0, False, None)
    assert second["p99_us"] == 13.0 and (second["counted_from_s"], second["counted_to_s"]) == (10.5, 21.0)
    # 12.3 us came before the report of 21 s, the first at or after 20 s: in the second
    p.edges(14.0)
    p.report(slices, 30.5)
    third = slices.maxima_section(p.hist)["intervals"][2]
    assert (third["start_s"], third["count"], third["max_us"]) == (20.0, 1, 15.0)


def test_a_phase_runs_between_the_reports_inside_it_and_the_switch_is_in_the_whole_only() -> None:
    plan = PhasePlan.parse("idle:10s,load=cpu:10s")
    spans: list[PhaseSpan] = [PhaseSpan("idle", "idle", None, 0.0, None)]
    p, slices = Profiler(), HistogramSlices(every_s=300.0, spans=spans)
    p.edges(5.0, 5.0)
    p.report(slices, 4.0)
    p.edges(6.0)
    p.report(slices, 9.0)                                   # the last report before the switch
    spans[0] = PhaseSpan("idle", "idle", None, 0.0, 10.0)   # (the phase thread: the switch begins at 10 s ...)
    spans.append(PhaseSpan("cpu", "cpu", ["stress-ng"], 10.02, None))   # (... and cpu is in place at 10.02 s)
    p.edges(7.0, 8.0)                                       # counted in the report across the switch
    p.report(slices, 10.5)
    p.edges(20.0, 21.0, 40.0, early=1)
    p.report(slices, 19.8)
    p.edges(22.0)
    p.report(slices, 20.4)                                  # the final report, after the run's end
    spans[1] = PhaseSpan("cpu", "cpu", ["stress-ng"], 10.02, 20.1)
    idle, cpu = slices.phases_section(plan, p.hist)
    assert idle["summary"]["n"] == 3 and idle["summary"]["max_us"] == 6.0 and idle["switch_events"] == 0
    assert (idle["counted_from_s"], idle["counted_to_s"]) == (0.0, 9.0)
    assert cpu["switch_events"] == 2                        # 7 and 8 us: neither condition in place for all of them
    s = cpu["summary"]
    assert (s["n"], s["outcomes"]["early"], s["max_us"], s["mean_us"]) == (4, 1, 40.0, 25.75)
    assert s["from_profiler_histogram"]["max_exact"] and cpu["histogram"]["n"] == 4
    assert (cpu["counted_from_s"], cpu["counted_to_s"]) == (10.5, 20.4)
    assert cpu["first_event"] is None and cpu["from"] == "profiler reports"
    # the phases and the switch add up to the whole
    assert idle["summary"]["events"] + cpu["switch_events"] + s["events"] == p.ok + p.early


def test_a_phase_never_reached_is_planned_and_empty() -> None:
    plan = PhasePlan.parse("idle:10s,load=cpu:10s")
    p, slices = Profiler(), HistogramSlices(every_s=300.0, spans=[PhaseSpan("idle", "idle", None, 0.0, 3.0)])
    p.edges(5.0)
    p.report(slices, 2.0)
    idle, cpu = slices.phases_section(plan, p.hist)
    assert idle["summary"]["n"] == 1 and cpu["start_s"] is None and cpu["summary"]["n"] == 0


def test_the_run_keeps_a_few_reports_and_two_per_edge_whatever_its_length() -> None:
    p, slices = Profiler(), HistogramSlices(every_s=60.0)
    for second in range(1, 3601):                           # an hour, a report a second
        p.edges(5.0)
        p.report(slices, float(second))
    assert len(slices.history) == HISTORY and len(slices.edges) == 60 and not slices.pending
    m = slices.maxima_section(p.hist)
    assert len(m["intervals"]) == 60 and all(i["count"] == 60 for i in m["intervals"][1:])
    assert m["n"] == 3600 and m["late_edges"] == 0


def test_a_switch_marked_after_its_report_before_left_the_history_is_counted() -> None:
    """A phase thread's span seen only HISTORY reports after its switch (the run's thread held up): the stretch
    begins at the oldest report kept, and the maxima say so (late_edges)."""
    spans: list[PhaseSpan] = [PhaseSpan("idle", "idle", None, 0.0, 1.5)]
    p, slices = Profiler(), HistogramSlices(every_s=300.0)
    for second in range(1, HISTORY + 4):
        p.edges(5.0)
        p.report(slices, float(second))
    slices.spans = spans                   # seen now, HISTORY + 2 reports after its end
    p.report(slices, float(HISTORY + 4))
    assert slices.late_edges == 1 and slices.maxima_section(p.hist)["late_edges"] == 1
