"""The run's end, once its nodes have wound down and its endpoint has given its verdict: every event judged (the
ones still in flight ended, the rig's faults and the bench's injections named, validity by cause, normal mode's
budget, the summary and the accounting invariant), the sidecar assembled from the run's record, the records of
its inputs written, then its CSV and sidecar (the journal removed once they are, or named when they cannot be).

Given the run's record (runrecord.py), the endpoint's verdict, the run's use of the host and its PC load, and the
collaborators the judgement acts through: the event book (the one way an event ends), the recovery (the nodes'
counters against the ones before the run, by what it saw of them), the journal and the run's progress lines."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..link.endpoint import Verdict
from ..model.event import Event
from ..model.eventstore import EventStore
from ..model.framearrivals import FrameArrivals
from ..model.load import Load
from ..model.phasedload import PhasedLoad
from ..model.reason import Reason
from ..model.result import RunResult
from ..model.tcarrivals import TimecodeArrivals
from ..verdict import injected, profhist
from ..verdict.breaks import break_section
from ..verdict.budget import apply_budget
from ..verdict.crowding import counters_explained, judge_crowding
from ..verdict.export import write_run
from ..verdict.invariant import judged
from ..verdict.journal import Journal
from ..verdict.stats import summarize
from ..verdict.validity import Cause, entered_at, judge_run
from .eventbook import EventBook
from .inputlog import record_run_inputs
from .recovery import Recovery
from .retirement import Retirement
from .runrecord import RunRecord
from .runstate import RunState
from .sidecar import assemble


@dataclass(frozen=True)
class Judgement:
    """What the run's events came to, for its sidecar."""
    measurability: dict[str, Any]     # validity by cause (validity.judge_run)
    summary: dict[str, Any]           # the statistics (stats.summarize), or the profiler's counts of a series
    invariant: dict[str, Any]         # every event made ends in exactly one outcome (invariant.judged)


def mark_unmeasurable(events: Sequence[Event], st: RunState | None, verdict: Verdict, baud: int,
                      crowded: dict[int, Cause] | None = None,
                      retired: Retirement | None = None) -> tuple[dict[str, Any], Reason | None]:
    """Validity by cause over the run's events (validity.judge_run) at the links' rate (`baud` where the run has
    no state): the sidecar's `measurability`, and the run's invalid reason when too many are not measurable.
    `retired`: the events that left memory were judged as they left, or are judged now a chunk at a time (a byte
    record's run: retirement.py); the held ones are judged now."""
    frames = FrameArrivals(st.tc_arrivals, st.tracker.tick_len_s) if st is not None and st.tracker.ready else None
    held = events.held if isinstance(events, EventStore) else list(events)
    later = retired is not None and not retired.judge_now and isinstance(events, EventStore) and events.retired
    figures, why = judge_run(events.changing() if later else [held], len(events), verdict,
                             st.timebase.tick_s if st else 0.0, st.baud if st else baud, crowded, frames,
                             retired.judgement if retired is not None else None)
    return figures, None if why is None else Reason("bench_lag", why)


def judge(r: RunRecord, verdict: Verdict, book: EventBook, recovery: Recovery) -> Judgement:
    """The run's events judged, in order: the endpoint's reasons, FIREs lost to crowding (normal mode), the
    nodes' counters, every event still in flight ended (a run cut short still accounts for each), the faults the
    bench injected, the fault ledger's reasons, validity by cause, normal mode's budget, then the summary and the
    invariant. The run's invalid reasons go into `r.invalid`."""
    cfg, st, events, invalid = r.cfg, r.state, r.events, r.invalid
    # the steps that change events act on the held ones: the retired ones were judged as they left, or are judged
    # by the byte record a chunk at a time (mark_unmeasurable, retirement.py)
    retirement, book.retirement = book.retirement, None    # nothing leaves memory from here: the end may change
    held = events.held if isinstance(events, EventStore) else list(events)
    invalid += verdict.reasons
    crowded = (judge_crowding(events, verdict.record, st.one_fire, st.baud, r.faults)
               if st is not None and cfg.mode == "normal" else {})
    recovery.judge_counters(st, r.node_counters, r.counters_before, counters_explained(crowded))
    for e in held:
        if not e.terminal:
            failed = (st is not None and st.link_failed) or invalid
            book.end(e, "lost", "link_fault") if failed else book.end(e, "missed", "timeout")
    if retirement is not None and verdict.held_by_fault and isinstance(events, EventStore) and events.retired:
        invalid.append(Reason("injected_delay", "the bench's injected delay held back bytes while the run was "
                              f"retiring its ended events ({events.retired} of {len(events)}): the retired ones it "
                              "held cannot be named lost (retirement.py)"))
    injected.attribute(held, verdict.held_by_fault, r.faults, st.rel if st is not None else lambda t: 0.0)
    invalid += r.faults.reasons()
    measurability, bench_lag = mark_unmeasurable(events, st, verdict, r.baud, crowded, retirement)
    if bench_lag is not None:
        invalid.append(bench_lag)
    if cfg.mode == "normal" and st is not None:
        record = verdict.record
        apply_budget(events, st.timebase.tick_s, st.floor.us, st.timebase.tick_counts,
                     None if record is None else (lambda ev: entered_at(record, ev.bytes.sent)),
                     clock=st.profiler_clock)
    summary = summarize(events)
    if st is not None and st.histogram_only and st.series is not None:
        summary, invariant = profhist.counted_summary(st.profiler_hist, st.series.total, book.stop.is_set())
    else:
        invariant = judged(events, st.generator.created if st is not None else 0, summary)
    if not invariant["ok"]:
        invalid.append(Reason("invariant", f"accounting invariant violated: {invariant['error']}"))
    if st is not None and st.profiler_hist is not None and (why := st.profiler_hist.disagreement(events)) is not None:
        invalid.append(Reason("profiler_histogram", why))
    return Judgement(measurability, summary, invariant)


def older_than_record(measurability: dict[str, Any]) -> str | None:
    """The line saying how a long paced run's events older than the bench's record were judged, or None."""
    by_stalls, unjudged = measurability.get("judged_by_stalls") or 0, measurability.get("unjudged") or 0
    if not by_stalls and not unjudged:
        return None
    return (f"{by_stalls:,} events judged by the bench's stalls (older than its 65,536 reads)"
            + (f"\n{unjudged:,} events older than its stalls too: unjudged" if unjudged else ""))


def finish_run(r: RunRecord, verdict: Verdict, cpu: dict[str, Any], load: Load | PhasedLoad | None, book: EventBook,
               recovery: Recovery, journal: Journal | None, say: Callable[[str], None]) -> RunResult:
    """The run judged (`judge`), its sidecar assembled, its inputs recorded and its files written (cfg.out): the
    run's result. A file that cannot be written raises RunNotWritten, naming where the events are (the journal)."""
    cfg, st = r.cfg, r.state
    if book.retirement is not None and book.retirement.failed:
        say(book.retirement.failed)
    j = judge(r, verdict, book, recovery)
    sidecar = assemble(r, verdict, cpu, load, j.measurability, j.summary, j.invariant)
    if st is not None and st.histogram_only and st.profiler_hist is not None:
        sidecar["histogram"] = st.profiler_hist.histogram_section()   # the profiler's cells: the only ones
    if cfg.break_us is not None:
        sidecar["break"] = break_section(book.broke, cfg.break_us)
    if (late := sidecar.get("slack", {}).get("past_due", {}).get("text")) is not None:
        say(late)                             # a miss explained, not left a bare past_due
    if (older := older_than_record(j.measurability)) is not None:
        say(older)
    csv_path = json_path = None
    if cfg.out is not None:
        record_run_inputs(r, verdict, sidecar, cfg.out)      # the run's inputs, for a replay (inputlog.py)
        journal = journal if journal is not None else Journal(cfg.out)
        try:
            csv_path, json_path = write_run(cfg.out, r.events, sidecar)
        except OSError as exc:               # the events stay in the journal: the error says where
            raise journal.failed(exc) from exc
        journal.remove()
    return RunResult(r.events, sidecar, csv_path, json_path, timecodes=st.tc_arrivals if st is not None else TimecodeArrivals())


__all__ = ["Judgement", "finish_run", "judge", "mark_unmeasurable", "older_than_record"]
