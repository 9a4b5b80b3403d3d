"""A series on the profiler's histogram alone, cut in time: each phase's figures and the worst case over time
from the profiler's own cumulative reports (profhist.py), for runs that keep no event rows.

The AVR profiler reports its histogram every REPORT_TICKS ticks (about once a second): its 1,000 cells, the
counts per outcome, the exact sum, minimum and maximum, all since the series began. Two reports bound a stretch of
the run, and what it counted in between is the difference: its cells (so its percentiles, as the run's own are
given: the upper edge of the cell), its counts and its mean exactly. Its maximum is exact where the run's maximum
rose inside it (that event is in the stretch), else the upper edge of its highest cell that grew, never below the
truth and at most a cell (1 us) above it; `max_exact` says which. The same for the minimum.

So a run on the histogram alone (hours at 1 kHz, `--no-raw`: nothing kept per event, memory flat) has its phases
apart and its maxima over time like a run with rows, with one difference a reader must know: a stretch begins and
ends at the arrival of a report, not at an event's moment. A stretch of the worst case over time runs from the
first report that arrived at or after its start to the first at or after its end: events up to one report
interval (about a second) before an interval's edge may be counted in the next. A phase runs from the first report
after its condition was in place to the last report before the switch away from it began: the events counted in
between (those of the switch, and up to a report's worth on either side of it) are in the whole run only, as the
phase's `switch_events`, never in a phase whose condition was not in place for all of them.

The run keeps the last few reports (HISTORY) and, for each edge it will need, the report before and after it:
a few KB each, a few dozen edges a day at 5-minute intervals; nothing grows with the events.
"""

from __future__ import annotations

import math
from array import array
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import mmproto as mp

from ..model.phaseplan import PhasePlan, PhaseSpan
from .profhist import CELLS, ProfilerHistogram, cells_percentile_us

HISTORY = 8                      # reports kept back (about 8 s): a phase's switch is marked within one report


@dataclass(frozen=True)
class Report:
    """One cumulative report of the profiler's, as it arrived (`t_s`: seconds since generation began)."""

    t_s: float
    cells: array                 # 'Q': the 1000 cells and the overflow cell, counts since the series began
    ok: int
    late: int
    early: int
    missed: int
    sum: int                     # the ok and late latencies' sum, in profiler counts
    max: int
    min: int                     # mp.HistSummary.NO_MIN before any
    worst: int                   # the series index of the event that set `max`

    @classmethod
    def of(cls, hist: ProfilerHistogram, t_s: float) -> "Report":
        s = hist.summary
        assert s is not None
        return cls(t_s, array("Q", hist.cells), s.ok, s.late, s.early, s.missed, s.sum, s.max, s.min, s.worst)

    @classmethod
    def empty(cls) -> "Report":
        """Before the first report: nothing counted (at the series' start, generation's)."""
        return cls(0.0, array("Q", [0] * (CELLS + 1)), 0, 0, 0, 0, 0, 0, mp.HistSummary.NO_MIN, 0)

    @property
    def counted(self) -> int:
        return self.ok + self.late + self.early + self.missed


@dataclass
class HistogramSlices:
    """The profiler's reports kept at the edges a run on its histogram alone needs: every `every_s` (the worst
    case over time) and each phase's switch (its spans as they happen: phasedload.py appends to the list given)."""

    every_s: float
    spans: Sequence[PhaseSpan] | None = None
    history: deque[Report] = field(default_factory=lambda: deque(maxlen=HISTORY))
    edges: dict[float, tuple[Report, Report]] = field(default_factory=dict)   # edge -> (last before, first at/after)
    pending: list[float] = field(default_factory=list)
    last: Report = field(default_factory=Report.empty)
    late_edges: int = 0          # edges whose report before had left the history: bounded by the oldest kept
    _next_interval: int = 1

    def report(self, hist: ProfilerHistogram, t_s: float) -> bool:
        """A report of the profiler's (its HIST_SUMMARY, the cells before it taken) arrived at `t_s`: True if it
        passed an edge (an interval's end, a phase's switch), when a journal takes the figures so far."""
        if hist.summary is None:
            return False
        self.last = Report.of(hist, t_s)
        self.history.append(self.last)
        self._mark_edges()
        return self._resolve()

    def _mark_edges(self) -> None:
        """The edges known so far: the intervals' up to the newest report, the phases' switches as they have
        happened (each is marked at the first report after it, and its report before is still in the history)."""
        seen = set(self.edges) | set(self.pending)
        while self._next_interval * self.every_s <= self.last.t_s:
            self.pending.append(self._next_interval * self.every_s)
            self._next_interval += 1
        for s in list(self.spans or ()):                 # (the phase thread appends: a copy)
            for t in (s.start_s, s.end_s):
                if t is not None and t > 0 and t not in seen:
                    self.pending.append(t)
                    seen.add(t)

    def _resolve(self) -> bool:
        passed = [e for e in self.pending if self.last.t_s >= e]
        for edge in passed:
            after = next(r for r in self.history if r.t_s >= edge)
            before = [r for r in self.history if r.t_s < edge]
            if not before and len(self.history) == self.history.maxlen:
                self.late_edges += 1
            self.edges[edge] = (before[-1] if before else self._before_history(), after)
            self.pending.remove(edge)
        return bool(passed)

    def _before_history(self) -> Report:
        # the edge lies before every report kept: the first report of all (the series' start) if none has left
        return Report.empty() if len(self.history) < (self.history.maxlen or 0) else self.history[0]

    def after(self, edge: float) -> Report:
        """The first report at or after `edge` (the last one where none came after it: the run ended)."""
        return self.edges[edge][1] if edge in self.edges else self.last

    def before(self, edge: float) -> Report:
        """The last report before `edge` (the last one where none came after it)."""
        return self.edges[edge][0] if edge in self.edges else self.last

    # ---- the sidecar's sections ---------------------------------------------------------------
    def maxima_section(self, hist: ProfilerHistogram) -> dict[str, Any]:
        """The sidecar's `maxima` (mmanalysis.maxima's keys) from the reports: interval k from the first report at
        or after k * every_s to the first at or after its end (the final report for the last)."""
        out: dict[str, Any] = {"clock": "run", "first_tc": None, "t0_run_s": None, "run_tick_s": None,
                               "from": "profiler reports", "every_s": self.every_s, "n": 0, "intervals": [],
                               "late_edges": self.late_edges}
        if self.last.counted == 0:
            return out
        k_last = max(0, math.ceil(self.last.t_s / self.every_s) - 1)
        for k in range(k_last + 1):
            a = Report.empty() if k == 0 else self.after(k * self.every_s)
            b = self.last if k == k_last else self.after((k + 1) * self.every_s)
            f = stretch(a, b, hist)
            out["n"] += f["n"]
            out["intervals"].append({
                "start_s": round(k * self.every_s, 6), "end_s": round((k + 1) * self.every_s, 6), "count": f["n"],
                "max_us": f["max_us"], "p99_us": f["p99_us"], "max_event": f["max_event"],
                "max_exact": f["max_exact"], "counted_from_s": a.t_s, "counted_to_s": b.t_s})
        while out["intervals"] and not out["intervals"][-1]["count"]:
            out["intervals"].pop()     # (the final report comes after the run's end: as rows', to the last count)
        return out

    def phases_section(self, plan: PhasePlan, hist: ProfilerHistogram) -> list[dict[str, Any]]:
        """The sidecar's `phases` (phasefigures.phases_section's keys) from the reports: a phase from the first
        report after its condition was in place to the last before the switch away from it began (the final
        report for the last phase); what was counted between those is its `switch_events`."""
        spans = list(self.spans or ())
        out = []
        for k, s in enumerate(spans):
            a = Report.empty() if k == 0 else self.after(s.start_s)
            last = k == len(spans) - 1
            b = self.last if last or s.end_s is None else self.before(s.end_s)
            if b.t_s < a.t_s:                # no report inside the phase at all
                b = a
            prev_end = Report.empty() if k == 0 else self.before(spans[k - 1].end_s or s.start_s)
            f = stretch(a, b, hist)
            out.append({"name": s.name, "condition": s.condition, "command": s.command,
                        "planned_start_s": plan.starts_s[k], "planned_s": plan.phases[k].duration_s,
                        "start_s": s.start_s, "end_s": s.end_s, "error": s.error,
                        "events": f["summary"]["events"], "first_event": None, "last_event": None,
                        "switch_events": max(0, a.counted - prev_end.counted), "from": "profiler reports",
                        "counted_from_s": a.t_s, "counted_to_s": b.t_s,
                        "summary": f["summary"], "histogram": f["histogram"]})
        for k in range(len(spans), len(plan.phases)):       # a phase the run never reached
            p = plan.phases[k]
            f = stretch(self.last, self.last, hist)
            out.append({"name": p.name, "condition": p.condition, "command": None, "planned_start_s": plan.starts_s[k],
                        "planned_s": p.duration_s, "start_s": None, "end_s": None, "error": None, "events": 0,
                        "first_event": None, "last_event": None, "switch_events": 0, "from": "profiler reports",
                        "counted_from_s": None, "counted_to_s": None,
                        "summary": f["summary"], "histogram": f["histogram"]})
        return out


def stretch(a: Report, b: Report, hist: ProfilerHistogram) -> dict[str, Any]:
    """What the profiler counted between reports `a` and `b`: its summary (profhist.run_summary's keys), its
    histogram (histogram_section's), and the figures the maxima need."""
    cells = [y - x for x, y in zip(a.cells, b.cells)]
    ok, late, early, missed = b.ok - a.ok, b.late - a.late, b.early - a.early, b.missed - a.missed
    n = ok + late
    grown = [i for i, c in enumerate(cells) if c]
    max_exact = b.max > a.max                     # the run's maximum rose in the stretch: its event is in it
    if not n or not grown:
        max_us = None
    elif max_exact or grown[-1] == CELLS:         # (in the overflow: no finer than the run's maximum)
        max_us = hist.us(b.max)
    else:
        max_us = min(hist.us(b.max), round((grown[-1] + 1) * hist.cell_us, 4))
    min_exact = b.min != mp.HistSummary.NO_MIN and (a.min == mp.HistSummary.NO_MIN or b.min < a.min)
    if not n or not grown:
        min_us = None
    elif min_exact:
        min_us = hist.us(b.min)
    else:
        min_us = max(hist.us(b.min), round(grown[0] * hist.cell_us, 4))

    def q(p: float) -> float | None:
        return cells_percentile_us(cells, p, hist.cell_us, hist.us(b.max)) if n else None
    outcomes = {"ok": ok, "late": late, "early": early, "missed": missed, "lost": 0}
    events = sum(outcomes.values())
    summary = {"n": n, "mean_us": round((b.sum - a.sum) * 1e6 / hist.timer_hz / n, 4) if n else None,
               "variance_us2": None, "min_us": min_us, "p50_us": q(0.5), "p99_us": q(0.99), "p999_us": q(0.999),
               "max_us": max_us, "outcomes": outcomes, "events": events,
               "on_time_share": ok / events if events else None, "unmeasurable": 0,
               "from_profiler_histogram": {"percentiles": "upper edge of the cell", "cell_us": round(hist.cell_us, 6),
                                           "max_exact": max_exact, "min_exact": min_exact}}
    histogram = {"bin_us": round(hist.cell_us, 6), "bins": CELLS, "range_us": round(hist.cell_us * CELLS, 6),
                 "n": sum(cells), "counts": cells[:CELLS], "overflow": cells[CELLS], "underflow": 0,
                 "worst": {"event": b.worst, "latency_us": max_us} if max_exact and n else None}
    return {"n": n, "max_us": max_us, "max_exact": max_exact if n else None,
            "p99_us": q(0.99), "max_event": b.worst if max_exact and n else None,
            "summary": summary, "histogram": histogram}


__all__ = ["HISTORY", "HistogramSlices", "Report", "stretch"]
