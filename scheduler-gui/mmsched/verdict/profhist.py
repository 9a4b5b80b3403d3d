"""The profiler's own histogram of a periodic series (protocol version 6: HIST_ARM, HIST_SUMMARY, HIST_CELLS),
the run's side.

A mixed run on a grid (`--generation periodic`) sends the executor its moments as PERIODIC series (series.py);
an AVR profiler (HELLO flag bit 3) is sent the same moments in one HIST_ARM and joins each executor edge to its
moment itself, as matching.series_result does on the PC: to the event of the edge's id whose moment is the
latest at or before the edge plus SERIES_EARLY_COUNTS. It keeps 1000 cells of 2^cell_shift counts (1 us at
16 MHz) and an overflow cell, min/max/sum and counts per outcome, and reports them, cumulative, every
REPORT_TICKS ticks; at the run's end the PC ends the series (HIST_ARM with count 0) and takes the final full
report. So a kilohertz run's latency figures are computed where the edges are captured, with no RESULT per
event needed on the line.

While the RESULTs still come (the raw flag: `--raw`, and by default where the line carries them), the PC has
both: its own histogram from the events and the profiler's. They must agree cell for cell (the same counts, the same joining rule, a cell is
`counts >> 4` on both sides): `agreement` says whether they do, and where not, by how much. A disagreement is
the rig's fault (a lost RESULT, a join that differs), never the system's under test, and makes the run invalid.

Without them (`--no-raw`, and by default where a RESULT per event does not fit the line: `histogram_only`) the
profiler's figures are the run's: no event rows, the summary and the histogram from its final report
(`run_summary`, `histogram_section`), the accounting invariant over its counts (`accounting`); the executor is
sent quiet series (one FIRED a series) and the next series by the profiler's tick (seriesrun.follow_counted).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable

import mmproto as mp
from mmproto import LinkError

from ..model.event import Event
from .matching import SERIES_EARLY_COUNTS

REPORT_TICKS = 14               # 14 ticks of 71.1 ms: a report about once a second (latmon: one a second)
FINAL_WAIT_S = 1.0              # the final report's frames take 0.3 ms at 115200 baud; the bench's stalls more
CELLS = mp.HistCells.CELLS      # 1000 cells and the overflow cell


def profiler_keeps_histograms(hello: mp.Hello | None) -> bool:
    return hello is not None and bool(hello.flags & mp.HELLO_FLAG_HIST)


class NoHistogram(ValueError):
    """A run that needs the profiler's histogram alone, with a profiler that keeps none (the 8051)."""


def histogram_only(raw: bool | None, hello: mp.Hello | None, line_why: str | None) -> bool:
    """Whether a periodic series runs on the profiler's histogram alone (no RESULT per event): `raw` as the run
    asks (None: RESULTs where the profiler's line carries them, `line_why` None), the profiler's HELLO, and why
    the line cannot carry a RESULT per event (grid.line_problem). Raises NoHistogram (a profiler without one)
    or NoHistogram with `line_why` (RESULTs asked for, or no histogram, on a line that cannot carry them)."""
    keeps = profiler_keeps_histograms(hello)
    if raw is False or (raw is None and line_why is not None):
        if not keeps:
            raise NoHistogram(line_why if raw is None else
                              "--no-raw: this profiler keeps no histogram (the 8051 has no RAM for one): "
                              "every event needs its RESULT")
        return True
    if line_why is not None:
        raise NoHistogram(line_why)
    return False


def cell_shift_for(timer_hz: int) -> int:
    """The shift that makes a cell as near 1 us as a power of two of counts allows (4 at 16 MHz: 1 us exactly)."""
    shift = 0
    while shift < 15 and (2 << shift) * 1_000_000 <= timer_hz:
        shift += 1
    return shift


@dataclass
class ProfilerHistogram:
    """One series' histogram as the profiler reports it: built when the HIST_ARM is sent."""

    arm: mp.HistArm
    timer_hz: int
    tick_counts: int = 0
    cells: list[int] = field(default_factory=lambda: [0] * (CELLS + 1))
    summary: mp.HistSummary | None = None
    reports: int = 0               # HIST_SUMMARY frames taken (the answer to the HIST_ARM included)
    blocks: int = 0                # HIST_CELLS frames taken
    refused: int | None = None     # the profiler's ERROR code, if it refused the HIST_ARM

    @property
    def cell_us(self) -> float:
        return (1 << self.arm.cell_shift) * 1e6 / self.timer_hz

    @property
    def final(self) -> bool:
        return self.summary is not None and bool(self.summary.flags & mp.HistSummary.FLAG_FINAL)

    def take(self, msg: mp.Message) -> bool:
        """A frame of the profiler's report: True if it was one."""
        if isinstance(msg, mp.HistCells):
            if msg.cell % mp.HistCells.BLOCK == 0 and msg.cell <= CELLS:
                for i, c in enumerate(msg.counts):
                    if msg.cell + i <= CELLS:
                        self.cells[msg.cell + i] = c
            self.blocks += 1
            return True
        if isinstance(msg, mp.HistSummary):
            if self.summary is None or msg.report >= self.summary.report or msg.flags & mp.HistSummary.FLAG_FINAL:
                self.summary = msg
            self.reports += 1
            return True
        if isinstance(msg, mp.Error) and msg.ref_type == mp.HistArm.TYPE:
            self.refused = msg.code
            return True
        return False

    def percentile_us(self, q: float) -> float | None:
        """The q-th quantile of the ok and late latencies, nearest rank, as the upper edge of its cell (at most
        the maximum): from 1 us cells a figure can be no finer than its cell, and never lower than the truth."""
        s = self.summary
        if s is None:               # (mid-run a report's cells may lag its summary by the edges of its sending)
            return None
        return cells_percentile_us(self.cells, q, self.cell_us, self.us(s.max))

    def run_summary(self, total: int, not_counted: int) -> dict[str, Any]:
        """The run's `summary` (latstats.run_summary's keys) from the profiler's figures, for a run on its
        histogram alone: min, max and mean exact, percentiles as `percentile_us` gives them, no variance (the
        profiler keeps no sum of squares)."""
        s = self.summary
        ok, late, early, missed = (0, 0, 0, 0) if s is None else (s.ok, s.late, s.early, s.missed)
        n = ok + late
        outcomes = {"ok": ok, "late": late, "early": early, "missed": missed, "lost": 0}
        events = sum(outcomes.values())
        return {"n": n, "mean_us": self.mean_us(), "variance_us2": None, "min_us": self.min_us(),
                "p50_us": self.percentile_us(0.5), "p99_us": self.percentile_us(0.99),
                "p999_us": self.percentile_us(0.999), "max_us": self.us(s.max) if s is not None and n else None,
                "outcomes": outcomes, "events": events, "on_time_share": ok / events if events else None,
                "unmeasurable": 0,
                "from_profiler_histogram": {"series_events": total, "not_counted": not_counted,
                                            "percentiles": "upper edge of the cell", "cell_us": round(self.cell_us, 6)}}

    def histogram_section(self) -> dict[str, Any]:
        """The sidecar's `histogram` (mmanalysis.histogram's keys) from the profiler's cells, for a run on its
        histogram alone; the worst event is the series' index k, its tick from the grid's moment."""
        s = self.summary
        n = sum(self.cells)
        worst = None
        if s is not None and s.ok + s.late:
            worst = {"event": s.worst, "latency_us": self.us(s.max), "outcome": "late" if s.max >= self.arm.late else "ok",
                     "scheduled_tc": self.arm.timecode + (self.arm.first + s.worst * self.arm.period)
                     // max(1, self.tick_counts), "sent_s": None}
        return {"bin_us": round(self.cell_us, 6), "bins": CELLS, "range_us": round(self.cell_us * CELLS, 6), "n": n,
                "counts": self.cells[:CELLS], "overflow": self.cells[CELLS], "underflow": 0, "worst": worst}

    def accounting(self, total: int, stopped: bool) -> tuple[int, str | None]:
        """(events the profiler did not count, why that is a fault or None) for a run on the histogram alone:
        every moment of the series is ok, late, early or missed in the final report; a run stopped early (Ctrl-C)
        leaves the moments after its end uncounted, said, never taken for missed."""
        s = self.summary
        if s is None or not self.final:
            return total, ("the profiler's final report never came: the series' events are not accounted for "
                           f"({self.reports} reports taken)")
        counted = s.ok + s.late + s.early + s.missed
        if counted == total or (stopped and counted < total):
            return total - counted, None
        return total - counted, (f"the profiler counted {counted} events of a series of {total}: the accounting "
                                 "does not add up")

    def us(self, counts: int) -> float:
        return round(counts * 1e6 / self.timer_hz, 4)

    def mean_us(self) -> float | None:
        """The mean of the ok and late latencies from the profiler's exact sum of them; None before any."""
        s = self.summary
        n = 0 if s is None else s.ok + s.late
        return round(s.sum * 1e6 / self.timer_hz / n, 4) if s is not None and n else None

    def min_us(self) -> float | None:
        """The least ok or late latency; None before any (the profiler's minimum is NO_MIN until one)."""
        s = self.summary
        if s is None or not s.ok + s.late or s.min == mp.HistSummary.NO_MIN:
            return None
        return self.us(s.min)

    def disagreement(self, events: Iterable[Event]) -> str | None:
        """Why the run is invalid for the profiler's figures, or None: they differ from the PC's own."""
        a = self.agreement(events)
        if not a["checked"] or a["agrees"]:
            return None
        return (f"the profiler's histogram disagrees with the PC's own from the same edges (outcomes "
                f"{a['profiler']} on the profiler, {a['pc']} on the PC; {a['cells_differing']} cells differ, the first "
                f"cell {a['first_differing_cell']}): a fault of the rig, not of the system under test")

    def section(self, events: Iterable[Event]) -> dict[str, Any]:
        """The sidecar's `profiler_histogram` (docs/data-format.md)."""
        s = self.summary
        measured = None if s is None else s.ok + s.late
        out: dict[str, Any] = {
            "cell_us": round(self.cell_us, 6), "cells": CELLS, "counts": self.cells[:CELLS],
            "overflow": self.cells[CELLS], "reports": self.reports, "blocks": self.blocks,
            "final": self.final, "refused": None if self.refused is None else mp.ErrorCode(self.refused).name,
            "raw": bool(self.arm.flags & mp.HistArm.FLAG_RAW),
            "series": {"first_tc": self.arm.timecode, "first_counts": self.arm.first, "period_counts": self.arm.period,
                       "count": self.arm.count, "late_counts": self.arm.late, "early_counts": self.arm.early},
        }
        if s is not None:
            out.update(ok=s.ok, late=s.late, early=s.early, missed=s.missed, stray=s.stray, n=measured,
                       min_us=self.min_us(), max_us=self.us(s.max) if measured else None, mean_us=self.mean_us(),
                       worst={"event": s.worst, "latency_us": self.us(s.max)} if measured else None,
                       complete=sum(self.cells) == measured)
        out["agreement"] = self.agreement(events)
        return out

    def agreement(self, events: Iterable[Event]) -> dict[str, Any]:
        """The profiler's figures against the PC's own from the RESULTs of the same events (raw runs): the same
        outcome counts, the same cells. `checked` False where the PC had no RESULTs to compare with."""
        s = self.summary
        if s is None or not self.final or not self.arm.flags & mp.HistArm.FLAG_RAW:
            return {"checked": False, "agrees": None, "why": "no final report" if s is None or not self.final
                    else "raw RESULTs off: the profiler's figures are the only ones"}
        width = 1 << self.arm.cell_shift
        pc = [0] * (CELLS + 1)
        outcomes = {"ok": 0, "late": 0, "early": 0}
        for e in events:
            if e.outcome in outcomes:
                outcomes[e.outcome] += 1
            if e.outcome in ("ok", "late") and e.latency_counts is not None:
                pc[min(CELLS, e.latency_counts // width)] += 1
        differ = [i for i in range(CELLS + 1) if pc[i] != self.cells[i]]
        prof = {"ok": s.ok, "late": s.late, "early": s.early}
        agrees = not differ and prof == outcomes
        return {"checked": True, "agrees": agrees, "pc": outcomes, "profiler": prof,
                "cells_differing": len(differ), "first_differing_cell": differ[0] if differ else None}


def cells_percentile_us(cells: list[int], q: float, cell_us: float, max_us: float) -> float | None:
    """The q-th quantile of the latencies counted in `cells` (the 1000 cells and the overflow cell), nearest rank,
    as the upper edge of its cell and at most `max_us`, the maximum (the overflow cell's quantiles are the
    maximum). None for empty cells."""
    n = sum(cells)
    if not n:
        return None
    rank, cum = max(1, math.ceil(q * n)), 0
    for i, c in enumerate(cells):
        cum += c
        if cum >= rank:
            return max_us if i == CELLS else min(max_us, round((i + 1) * cell_us, 4))
    return None


def counted_summary(hist: ProfilerHistogram | None, total: int, stopped: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """A series on the profiler's histogram alone: the run's summary from its final report, and the accounting
    invariant as it holds for counted events (every moment ok, late, early or missed in that report; `stopped`:
    the run was stopped early, its later moments not counted)."""
    if hist is None:
        return run_summary_of_nothing(total), {"ok": False, "error": "the profiler's histogram was never armed "
                                                                      "(its link failed)"}
    not_counted, why = hist.accounting(total, stopped)
    return hist.run_summary(total, not_counted), {"ok": why is None, "error": why}


def run_summary_of_nothing(total: int) -> dict[str, Any]:
    """The summary of a series no profiler counted: every moment `not_counted`."""
    s = ProfilerHistogram(end_message(), 1).run_summary(total, total)
    s["from_profiler_histogram"]["cell_us"] = None
    return s


def format_profiler_histogram(section: dict[str, Any]) -> str:
    """One line for a terminal: the profiler's own figures and whether they agree with the PC's (the sidecar's
    `profiler_histogram`)."""
    if section.get("refused"):
        return f"profiler histogram: refused by the profiler ({section['refused']})"
    if not section.get("final"):
        return (f"profiler histogram: NO final report ({section.get('reports', 0)} reports taken): its figures are "
                "not complete")
    a = section["agreement"]
    agree = ("agrees with the PC's, cell for cell" if a.get("agrees") else
             f"DISAGREES with the PC's ({a.get('cells_differing')} cells)" if a.get("checked") else a.get("why"))
    lat = (f", min {section['min_us']:.3f} mean {section['mean_us']:.3f} max {section['max_us']:.3f} us"
           if section.get("n") else "")
    return (f"profiler histogram: ok/late/early/missed {section['ok']}/{section['late']}/{section['early']}/"
            f"{section['missed']}, stray edges {section['stray']}{lat}; {agree}")


def arm(session: Any, grid: Any, total: int, late_bound_us: float, timer_hz: int,
        event_id: int = 0, raw: bool = True) -> ProfilerHistogram | None:
    """Sends the profiler the grid's first `total` moments as one HIST_ARM (RESULTs kept with `raw`), event 0 with id
    `event_id`; None if the link failed. `session`: anything with `send(node, message)`."""
    tc, first = grid.moment(0)
    msg = mp.HistArm(timecode=tc & 0xFFFFFFFF, first=first, period=grid.interval_counts,
                     count=min(total, 0xFFFFFFFF), late=min(0xFFFFFFFF, round(late_bound_us * timer_hz / 1e6)),
                     early=SERIES_EARLY_COUNTS,         # the PC's own joining rule, to the count
                     event_id=event_id, cell_shift=cell_shift_for(timer_hz), report_ticks=REPORT_TICKS,
                     flags=mp.HistArm.FLAG_RAW if raw else 0)
    try:
        session.send("profiler", msg)
    except LinkError:
        return None
    return ProfilerHistogram(msg, timer_hz, grid.tick_counts)


def end_message() -> mp.HistArm:
    """The HIST_ARM that ends the series and asks for the final full report."""
    return mp.HistArm(timecode=0, first=0, period=0, count=0, late=0, early=0, event_id=0, cell_shift=0,
                      report_ticks=1, flags=0)


__all__ = ["FINAL_WAIT_S", "NoHistogram", "cells_percentile_us", "counted_summary", "REPORT_TICKS", "ProfilerHistogram", "histogram_only", "arm", "cell_shift_for", "end_message",
           "format_profiler_histogram",
           "profiler_keeps_histograms"]
