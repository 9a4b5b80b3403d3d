"""Why a mixed- or verification-mode event was as late as it was, from the executor's trace (`mmrig explain`,
docs/explain.md): the event's latency split into what the executor met between the start of its tick and its
event edge, in the order it met each, as explain.py does for normal mode's PC (the same Explanation and Part).

The trace (hil/bench/exectrace.h: the bench's record of a run with --trace, or of a replay around the event) gives
the executor's view cycle by cycle: the timecode edge of the event's tick as the executor sees it (the profiler's
port write reaches it within one cycle), the dispatch interrupt's entry and what held it off before it (the core
asleep, another interrupt's handler, a task's code with interrupts masked: an M record, with the functions the
ELF's symbols place its ends in, or the instruction in progress; for a moment inside a tick, first its compare set late
by a late stamp of the tick's edge), then every stretch until its event edge: the
dispatch interrupt's handler, other interrupts, tasks that ran before the timecode task (a load task above it),
the kernel's switch to the timecode task and that task's own path to its port write. The last part is what the
CSV's latency holds beyond the executor's edge to edge: the wires and the profiler's capture. The parts add up to
the latency; a part the trace cannot give is "unknown" with its time.

Cycles are the executor's (tr.cpu_hz), the latency the profiler's counts (the sidecar's timebase.timer_hz).
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from .exectrace import ExecTrace, Masked, Segment, event_edges, model, timecode_edges
from .explain import Explanation, ExplainError, Part, _num, _shares, no_latency

TC_TASK = "tc"                    # the timecode task (executor/port/avr/main.c: "tc")
# the interrupts that start an event's dispatch (exectrace.CATEGORY_OF_VECTOR's "dispatch"): PCINT2 on the tick's
# edge, Timer1's compares at a moment inside a tick (a periodic series) and for ISR dispatch's settled edge
DISPATCH_VECTORS = ("PCINT2", "TIMER1_COMPA", "TIMER1_COMPB", "TIMER1_COMPC")
EXEC_MODES = ("mixed", "verification")
DIGITS = 4                        # a part's us to 4 decimals: one cycle at 16 MHz is 0.0625 us


@dataclass(frozen=True)
class EventCycles:
    """Where the event lies in the trace: its moment as the executor sees it (the tick's timecode edge, plus
    the moment's place in the tick) and its event edge (the strobe toggled with its id)."""

    moment: int
    edge: int
    tick_edge: int
    prev_tick_edge: int | None = None      # the tick's before it, where the trace holds it


def find_event(tr: ExecTrace, scheduled_tc: int, event_id: int, due_cycles: int = 0,
               result_tc: int | None = None) -> EventCycles:
    """The event of tick `scheduled_tc` with id `event_id` in the trace: its tick's edge (the port's 8-bit value
    is the profiler's timecode's low byte), `due_cycles` after it its moment, and the first edge with its id after
    that, which must lie in tick `result_tc` when given (before the edge of the tick after it). Of several edges
    of the tick's 8-bit value (a whole-run trace of more than 256 ticks), the one with such an event edge.
    ExplainError when the trace does not hold them."""
    ticks = timecode_edges(tr)
    cycles = [c for c, _ in ticks]
    mine = [k for k, (_, v) in enumerate(ticks) if v == scheduled_tc % 256]
    if not mine:
        raise ExplainError(f"the executor trace ({tr.path.name}, cycles {tr.start:,} .. {tr.end:,}) holds no edge "
                           f"of tick {scheduled_tc}")
    events = event_edges(tr)
    for k in mine:
        moment = cycles[k] + due_cycles
        # the edge of the tick after the result's (or of the same 8-bit value again): past it, not this event
        limit = cycles[k + 256] if k + 256 < len(cycles) else math.inf
        if result_tc is not None:
            after = k + (result_tc - scheduled_tc) + 1
            limit = cycles[after] if after < len(cycles) else math.inf
        for c, ident in events[bisect.bisect_left([e for e, _ in events], moment):]:
            if c >= limit:
                break
            if ident == event_id:
                return EventCycles(moment, c, cycles[k], cycles[k - 1] if k > 0 else None)
    raise ExplainError(f"the executor trace ({tr.path.name}) holds tick {scheduled_tc}'s edge but no event edge "
                       f"with id {event_id} after it" + (f" in tick {result_tc}" if result_tc is not None else ""))


def _masked_in(tr: ExecTrace, a: int, b: int) -> list[Masked]:
    ends = [m.end for m in tr.masked]
    k = bisect.bisect_right(ends, a)
    return [m for m in tr.masked[k:] if m.since < b]


def _segments(tr: ExecTrace, a: int, b: int) -> list[tuple[int, int, Segment]]:
    """The timeline's segments clipped to [a, b)."""
    segs = model(tr).segments
    k = bisect.bisect_right([s.end for s in segs], a)
    out = []
    for s in segs[k:]:
        if s.start >= b:
            break
        lo, hi = max(s.start, a), min(s.end, b)
        if hi > lo:
            out.append((lo, hi, s))
    return out


def _dispatch_entry(tr: ExecTrace, moment: int, edge: int, due_cycles: int) -> tuple[int, str] | None:
    """The dispatch interrupt taken at or after `moment` and before `edge`: (cycle, vector name). At a tick's edge
    (`due_cycles` 0) PCINT2, else the first of Timer1's compares."""
    want = ("PCINT2",) if not due_cycles else DISPATCH_VECTORS[1:]
    for c, k, arg in tr.records:
        if c < moment or k != "I":
            continue
        if c > edge:
            break
        if tr.vector(arg) in want:
            return c, tr.vector(arg)
    return None


def _pcint_taken(tr: ExecTrace, edge: int, before: int) -> int | None:
    """The cycle PCINT2 was taken at, at or after a tick's `edge` and before `before` (None: not in the trace)."""
    return next((c for c, k, arg in tr.records if k == "I" and edge <= c < before and tr.vector(arg) == "PCINT2"),
                None)


def _stamp_late(tr: ExecTrace, where: EventCycles, due_cycles: int) -> tuple[int, str, float] | None:
    """How late the executor set the compare of a moment `due_cycles` into the event's tick (`where`) through its
    stamps of the ticks' edges, in cycles, in words, and the stamp's own lateness in us (None: less than a count).

    It stamps an edge (edge_t: TCNT1) as the pin change interrupt is taken (executor/port/avr/board.c) and places
    a moment from that stamp, at its phase of the tick's length measured between the last two stamps
    (moment_compare, tick_counts): an edge taken L late sets the compare L late, plus the phase times L less the
    previous edge's lateness (the length stretched). At 1 kHz a moment's own compare handler (38.5 us) over a tick's
    edge held PCINT2 up to 36 us, and the tick's moments went out up to twice that late (docs/long-runs.md).
    Under one count of Timer1 (F_CPU/64: 4 us) the compare's two counts of margin take it in."""
    tick_edge, prev = where.tick_edge, where.prev_tick_edge
    taken = _pcint_taken(tr, tick_edge, where.moment)
    if taken is None:
        return None
    prev_taken = _pcint_taken(tr, prev, tick_edge) if prev is not None else None
    held = taken - tick_edge
    stretch = 0
    if prev is not None and prev_taken is not None:
        stretch = round(due_cycles * (held - (prev_taken - prev)) / (tick_edge - prev))
    late = held + stretch
    if late < round(tr.cpu_hz * 4e-6):
        return None
    isrs = [s.name for _, _, s in _segments(tr, tick_edge, taken) if s.kind == "isr"]
    masked = _masked_in(tr, tick_edge, taken)
    what = (f"interrupt {isrs[0]}'s handler" if isrs else
            f"a critical section ({masked[0].words()})" if masked else "its wake-up and entry")
    words = (f"the compare set late: the executor stamps its tick's edge as PCINT2 is taken, {tr.us(held):.3f} us "
             f"after the edge ({what} held PCINT2 off), and places the moment from that stamp")
    if stretch:
        words += (f" at its phase of the tick's length between its last two stamps, {tr.us(stretch):.3f} us more "
                  f"({tr.us(late):.3f} us in all)")
    return late, words, round(tr.us(held), DIGITS)


class _Parts:
    """Parts by key in the order first met, each a sum of stretches of cycles."""

    def __init__(self, tr: ExecTrace) -> None:
        self.tr = tr
        self.order: list[str] = []
        self.parts: dict[str, Part] = {}
        self.cycles: dict[str, int] = {}

    def add(self, key: str, cycles: int, words: str, detail: dict[str, Any] | None = None) -> Part:
        if cycles <= 0 and key in self.parts:
            return self.parts[key]
        if key not in self.parts:
            self.order.append(key)
            self.parts[key] = Part(key.split("#")[0], words, 0.0, detail=dict(detail or {}))
            self.cycles[key] = 0
        self.cycles[key] += cycles
        p = self.parts[key]
        p.us = self.tr.us(self.cycles[key])
        p.detail["cycles"] = self.cycles[key]
        return p

    def as_list(self) -> list[Part]:
        return [self.parts[k] for k in self.order]


def _entry_parts(acc: _Parts, tr: ExecTrace, a: int, b: int, vector: str) -> None:
    """[a, b): from the moment to the dispatch interrupt's entry, split by what held it off."""
    masked = _masked_in(tr, a, b)
    for lo, hi, s in _segments(tr, a, b):
        if s.kind == "sleep":
            acc.add("exec.entry.asleep", hi - lo, f"the core asleep: its wake-up and {vector}'s entry")
        elif s.kind == "isr":
            acc.add(f"exec.entry.isr#{s.name}", hi - lo, f"interrupt {s.name}'s handler held {vector} off "
                    f"(interrupts do not nest on the AVR)", {"vector": s.name})
        elif s.kind == "halted":
            acc.add("exec.entry.halted", hi - lo, "the core halted")
        else:
            at = lo
            for m in masked:
                mlo, mhi = max(m.since, at), min(m.end, hi)
                if mhi <= mlo:
                    continue
                if mlo > at:
                    acc.add("exec.entry.insn", mlo - at, f"the instruction in progress and {vector}'s entry")
                acc.add(f"exec.entry.masked#{s.name}:{m.pc_from:x}", mhi - mlo,
                        f"a critical section of task {s.name} held {vector} off (interrupts masked in "
                        f"{m.words()}, {tr.us(m.end - m.since):.3f} us in all)",
                        {"task": s.name, "pc_from": f"0x{m.pc_from:05x}", "pc_to": f"0x{m.pc_to:05x}",
                         "function": m.func_from, "function_to": m.func_to,
                         "masked_us": round(tr.us(m.end - m.since), 4)})
                at = mhi
            if hi > at:
                acc.add("exec.entry.insn", hi - at, f"the instruction in progress and {vector}'s entry")


def _after_entry_parts(acc: _Parts, tr: ExecTrace, a: int, b: int, vector: str, irq_id: int | None) -> None:
    """[a, b): from the dispatch interrupt's entry to the event edge, by what ran."""
    restores = _restores(tr, a, b)
    for lo, hi, s in _segments(tr, a, b):
        if s.kind == "isr" and (s.irq == irq_id or (irq_id is None and s.name == vector)):
            acc.add("exec.dispatch_isr", hi - lo, f"the dispatch interrupt {vector}'s handler"
                    + (" to its port write" if hi == b else ""), {"vector": vector})
        elif s.kind == "isr":
            acc.add(f"exec.isr#{s.name}", hi - lo, f"interrupt {s.name}", {"vector": s.name})
        elif s.kind == "sleep":
            acc.add("exec.asleep", hi - lo, "the core asleep")
        elif s.kind == "halted":
            acc.add("exec.halted", hi - lo, "the core halted")
        elif s.name == TC_TASK:
            at = lo
            for r0, r1 in restores:
                rlo, rhi = max(r0, at), min(r1, hi)
                if rhi > rlo:
                    acc.add("exec.switch", rhi - rlo, "the kernel's switch to the timecode task (its context "
                            "restored)")
                    at = rhi
            if hi > at:
                acc.add("exec.tc", hi - at, "the timecode task to its port write"
                        + ("" if restores else " (from the kernel's switch to it: its context's restore "
                                               "included)"))
        else:
            acc.add(f"exec.task#{s.name}", hi - lo, f"task {s.name} ran first", {"task": s.name})


def _restores(tr: ExecTrace, a: int, b: int) -> list[tuple[int, int]]:
    """[S, R -) pairs in [a, b): a switch to the timecode task and the RETI into it (the context's restore)."""
    out = []
    recs = tr.records
    for k, (c, kind, arg) in enumerate(recs):
        if c < a:
            continue
        if c >= b:
            break
        if kind == "S" and tr.task(arg) == TC_TASK and k + 1 < len(recs):
            c2, kind2, arg2 = recs[k + 1]
            if kind2 == "R" and arg2 is None and c2 <= b:
                out.append((c, c2))
    return out


def explain_exec_event(row: dict[str, Any], sidecar: dict[str, Any], tr: ExecTrace | None,
                       run: str = "run") -> Explanation:
    """Event `row` (a CSV row as a dict) of a mixed or verification run with `sidecar`, split by the executor's
    trace `tr` (None: no trace, the whole latency "unknown")."""
    event = int(row["event"])
    latency = _num(row.get("latency_us"))
    if latency is None:
        raise no_latency(row, sidecar)
    mode = str(row.get("mode"))
    if mode not in EXEC_MODES:
        raise ExplainError(f"event {event} is a {mode}-mode event: the executor's explanation is mixed and "
                           f"verification mode's")
    tick = int(row["scheduled_tc"])
    ex = Explanation(run, event, str(row.get("outcome")), latency, tick, [])
    ex.notes += schedule_notes(row)
    if tr is None:
        ex.parts.append(Part("unknown", "unknown (no executor trace: the run with --trace, or its replay "
                                        "around the event)", latency))
        return _shares(ex, DIGITS)
    tb = sidecar.get("timebase") or {}
    timer_hz = int(tb.get("timer_hz") or 16_000_000)
    due = int(_num(row.get("due_counts")) or 0)
    due_cycles = round(due * tr.cpu_hz / timer_hz)
    result_tc = _num(row.get("result_tc"))
    where = find_event(tr, tick, int(row["event_id"]), due_cycles,
                       int(result_tc) if result_tc is not None else None)
    acc = _Parts(tr)
    entry = _dispatch_entry(tr, where.moment, where.edge, due_cycles)
    if entry is None:
        acc.add("unknown", where.edge - where.moment, "unknown (no dispatch interrupt between the moment and the "
                "event edge in the trace)")
    else:
        at, vector = entry
        start = where.moment
        late = _stamp_late(tr, where, due_cycles) if due_cycles else None
        if late is not None:           # the compare could not fire before the moment plus the stamps' lateness
            span = min(late[0], at - start)
            acc.add("exec.entry.late_stamp", span, late[1], {"stamp_late_us": late[2]})
            start += span
        _entry_parts(acc, tr, start, at, vector)
        irq = next((i.id for i in model(tr).interrupts if i.start == at and tr.vector(i.vector) == vector), None)
        _after_entry_parts(acc, tr, at, where.edge, vector, irq)
    ex.parts = acc.as_list()
    executor_us = tr.us(where.edge - where.moment)
    rest = round(latency - executor_us, 4)
    if abs(rest) > 0:
        ex.parts.append(Part("exec.profiler", "the wires and the profiler's capture (the CSV's latency less the "
                             "executor's moment to edge)", rest))
    ex.notes.append(f"the executor's moment to edge {executor_us:.4f} us (trace {tr.path.name}, its tick's edge at "
                    f"cycle {where.tick_edge:,}, the event edge at {where.edge:,}; the trace's resolution "
                    f"{tr.us(1):.4f} us)")
    gap = round(latency - sum(p.us for p in ex.parts), 4)
    if abs(gap) >= 0.01:
        ex.parts.append(Part("unknown", "unknown (the parts do not add up to the latency)", gap))
    return _shares(ex, DIGITS)


def schedule_notes(row: dict[str, Any]) -> list[str]:
    """A mixed event's SCHEDULE from the CSV: when the scheduler made and sent it, the tick and phase the executor
    acknowledged it in, and its slack (how long before its tick began)."""
    if row.get("mode") != "mixed":
        return []
    made, phase = _num(row.get("created_tc")), _num(row.get("created_phase"))
    sent = _num(row.get("sent_s"))
    ack, ack_phase, slack = _num(row.get("ack_tc")), _num(row.get("ack_phase")), _num(row.get("slack_ticks"))
    words = []
    if made is not None:
        words.append(f"made in tick {int(made)}" + (f" at phase {phase:.3f}" if phase is not None else ""))
    if sent is not None:
        words.append(f"sent at {sent:.6f} s of the run")
    if ack is not None:
        words.append(f"taken by the executor in tick {int(ack)}" + (f" at phase {ack_phase:.3f}"
                                                                    if ack_phase is not None else ""))
    if slack is not None:
        words.append(f"{slack:.3f} ticks before its tick began (slack)")
    return [f"its SCHEDULE: {', '.join(words)}"] if words else ["its SCHEDULE: the CSV has no ACK for it"]


def trace_holds(tr: ExecTrace, rows: Iterable[dict[str, Any]]) -> bool:
    """Whether the trace holds every event of `rows` (its tick's edge and its event edge)."""
    try:
        for r in rows:
            result_tc = _num(r.get("result_tc"))
            find_event(tr, int(r["scheduled_tc"]), int(r["event_id"]),
                       result_tc=int(result_tc) if result_tc is not None else None)
    except ExplainError:
        return False
    return True


def default_keep(csv: Path) -> Path:
    """Where a replay's files go without --keep: NAME.replay/ beside the run (as `mmrig replay`)."""
    return csv.with_name(f"{csv.stem}.replay")


def own_trace(csv: Path, meta: dict[str, Any]) -> Path | None:
    """The run's own executor trace (a run with --trace: the sidecar's executor_profile names it), if it is there."""
    name = ((meta.get("executor_profile") or {}).get("files") or {}).get("exectrace")
    path = csv.with_name(Path(str(name)).name) if name else None
    return path if path is not None and path.is_file() else None


def left_traces(csv: Path, meta: dict[str, Any], keep: Path | None = None) -> list[tuple[Path, str]]:
    """The executor traces that may hold events of the run at `csv`, in the order to try them, with the words a
    reader is told: the run's own, then the traces of the whole run and around an event that a replay left in
    `keep` (NAME.replay/ beside the run without it). The own one is there when named; the others may not be."""
    keep = default_keep(csv) if keep is None else keep
    own = own_trace(csv, meta)
    out = [(own, f"the run's own executor trace ({own.name})")] if own is not None else []
    for kind, words in (("replay", "of the whole run"), ("around", "around it")):
        path = keep / f"{csv.stem}.{kind}.exectrace"
        out.append((path, f"the executor trace {words} that a replay left ({path})"))
    return out
