"""Why a normal-mode event was as late as it was (`mmrig explain`, docs/explain.md), in the order the event met each
cause, as rtla timerlat's auto-analysis does for its thread: the tick estimate's error, the firing thread's wake-up
(split by the PC's scheduler trace, NAME.host.dat: the threads that held its CPU between the moment and the
wake-up, hard IRQs and softirqs in between, the CPU idle until the timer woke the thread, the thread's own path),
the write call, the line and the profiler's floor. The parts add up to the latency. Each comes from recorded data
only (the CSV's budget columns, the host trace); what the data cannot split is a part named "unknown" with its time.

Times: the run's clock is CLOCK_MONOTONIC (the sidecar's `run_clock.t0_s` is its value at `sent_s` 0), the trace's
clock is trace-cmd's `mono`, the same clock: the FIRE's write is at t0 + sent_s, its moment `wakeup_us` before.
"""

from __future__ import annotations

import hashlib
import math
import textwrap
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .schedtrace import (CpuTimeline, SchedTrace, Span, Thread, TraceError, policy_words, read_trace,
                         windows_keep)
from .schema import FAULT_REASONS, MEASURED


class ExplainError(Exception):
    """Nothing can be explained (no such event, no budget, an unreadable file): one line."""


@dataclass
class Part:
    """One cause of an event's latency: `key` (est_error, wakeup.held, wakeup.irq, wakeup.softirq, wakeup.idle,
    wakeup.own, wakeup.unknown, write, line, floor, unknown), its words, its time (us) and its share of the latency."""

    key: str
    words: str
    us: float
    share: float = 0.0
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass
class Explanation:
    run: str
    event: int
    outcome: str
    latency_us: float
    scheduled_tc: int
    parts: list[Part]
    notes: list[str] = field(default_factory=list)
    cpu: int | None = None           # the firing thread's CPU when it wrote
    moment_mono_s: float | None = None

    def largest(self) -> Part:
        return max(self.parts, key=lambda p: p.us)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# sent_s and run_clock.t0_s are written to 1 us: where the write lies on the trace's clock is known to that
STAMP_US = 1.0
# the budget's columns in the order an event meets them, and their words (mmsched.verdict.budget)
BEFORE_WAKEUP = (("est_error_us", "est_error", "tick estimate's error"),)
AFTER_WAKEUP = (("write_us", "write", "write call"), ("line_us", "line", "line"),
                ("floor_us", "floor", "profiler's floor"))


def _num(value: Any) -> float | None:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


def _overlap(spans: list[Span], a: float, b: float) -> tuple[float, dict[str, float], float | None]:
    """The time `spans` cover inside [a, b], by name, and where the first begins."""
    total, names, first = 0.0, {}, None
    for s in spans:
        if s.start >= b:
            break
        o = min(s.end, b) - max(s.start, a)
        if o > 0:
            total += o
            names[s.name] = names.get(s.name, 0.0) + o
            first = max(s.start, a) if first is None else first
    return total, names, first


def _names(names: dict[str, float]) -> str:
    return ", ".join(f"{n} {us * 1e6:.1f} us" for n, us in sorted(names.items(), key=lambda x: -x[1]))


def wakeup_parts(tr: SchedTrace, tid: int, moment: float, wrote: float, steal: dict[str, float]) \
        -> tuple[list[tuple[float, Part]], int | None, list[str]]:
    """The firing thread `tid`'s wake-up, from `moment` to its write `wrote` (CLOCK_MONOTONIC seconds), split by
    what ran on the CPU it wrote from: (first seen, part) in time order, that CPU, notes. Parts with no data are
    left to the caller's "unknown"."""
    notes: list[str] = []
    begins = min((tl.first for tl in tr.cpus.values() if tl.first is not None), default=math.inf)
    if begins > moment:
        return [], None, [f"the trace's ring no longer held the moment (it begins {begins - moment:.3f} s after "
                          f"it): the trace keeps each CPU's last --trace-host-kb"]
    runs = [r for r in tr.runs_of(tid) if r[0] <= wrote + STAMP_US / 1e6]
    if not runs:
        return [], None, [f"the trace never shows the firing thread (tid {tid}) switched in before the write"]
    cpu = runs[-1][1]
    tl = tr.cpus[cpu]
    wakes = [w for w in tr.wakes.get(tid, []) if moment - 0.0002 <= w.at <= wrote]
    # each CPU keeps its own last stretch (trace-cmd -m is per CPU): the CPU it wrote from and those it was woken to
    # must reach back to the moment (an idle CPU's first event may come later: only these are judged)
    late = [((tr.cpus[c].first if c in tr.cpus else None) or math.inf, c) for c in {cpu, *(w.target for w in wakes)}]
    late = [(first - moment, c) for first, c in late if first > moment]
    if late:
        gap, lost = max(late)
        return [], None, [f"the trace's ring no longer held CPU {lost} at the moment (its data begins "
                          f"{gap:.3f} s after it): the trace keeps each CPU's last --trace-host-kb"]
    pieces = tl.segments(moment, wrote)
    if not pieces or pieces[-1][2] is None or pieces[-1][2].pid != tid:
        return [], None, [f"the trace does not show the firing thread (tid {tid}) on a CPU at its write (a switch "
                          f"the trace missed)"]
    # the wake-up that led to the write: the last waking of the thread before its last switch-in; before it the
    # thread was asleep (its timer not yet fired, or set later), after it waiting for the CPU
    last_in = max((x for x, _ in runs if x >= moment), default=None)
    woke_at = [w for w in wakes if last_in is None or w.at <= last_in + STAMP_US / 1e6]
    woke = woke_at[-1] if woke_at else None
    edge = woke.at if woke is not None else moment
    acc: dict[str, tuple[float, Part]] = {}
    for a, b, th in pieces:
        for lo, hi in ((a, min(b, edge)), (max(a, edge), b)):
            if hi > lo:
                _classify(acc, tl, lo, hi, th, tid, asleep=hi <= edge)
    if woke is not None:
        notes.append(f"the firing thread was woken {(woke.at - moment) * 1e6:+.1f} us from the moment, on CPU "
                     f"{woke.cpu} while {woke.by} ran there (its own wake-up call, or the timer's interrupt on it); "
                     f"it wrote from CPU {cpu}")
    if (s := steal.get(f"cpu{cpu}")) is not None:
        notes.append(f"steal on CPU {cpu} over the run: {s * 1e3:.0f} ms (/proc/stat at the run's start and end): time "
                     f"the hypervisor took, which the trace shows only as time inside the parts above")
    for _, p in acc.values():
        p.detail.pop("_runs", None)
    return sorted(acc.values(), key=lambda x: x[0]), cpu, notes


def bench_stalls_in(sidecar: dict[str, Any], a: float, b: float) -> list[tuple[float, float, float]]:
    """The stalls the paced bench recorded (the sidecar's `bench.stalls`: virtual seconds from its wall start, the
    catch-up included, and the largest lag in us) that overlap [a, b] on CLOCK_MONOTONIC, as (start, end, lag_us);
    none on boards."""
    bench = sidecar.get("bench") or {}
    ws = _num(bench.get("wall_start_s"))
    if ws is None:
        return []
    out = []
    for v0, v1, lag in bench.get("stalls") or []:
        start, end = ws + float(v0), ws + float(v1)
        if start < b and end > a:
            out.append((start, end, float(lag)))
    return out


def stall_note(stalls: list[tuple[float, float, float]], moment: float, wrote: float, trace: SchedTrace | None,
               cpu: int | None) -> str:
    """What a bench stall inside the wake-up says. The simulation runs at SCHED_FIFO: where the trace shows it as the
    firing thread's CPU's task while it fell behind wall time, that CPU did not run the guest then."""
    spans = "; ".join(f"from {(s - moment) * 1e6:+.0f} to {(e - moment) * 1e6:+.0f} us from the moment, {lag:.0f} us "
                      f"behind wall time at worst" for s, e, lag in stalls)
    text = f"the bench recorded a stall in this wake-up ({spans}): its simulation fell behind wall time"
    if trace is None or cpu is None or cpu not in trace.cpus:
        return text + " (with --trace-host the trace says whether it still had its CPU)"
    ran = sum(b - a for s, e, _ in stalls
              for a, b, th in trace.cpus[cpu].segments(max(s, moment), min(e, wrote))
              if th is not None and th.comm.startswith("mmbench"))
    if ran <= 0:
        return text + f" while the trace shows other tasks on CPU {cpu}"
    return (text + f", though the trace shows it as CPU {cpu}'s task for {ran * 1e6:.0f} us of it: that CPU did not "
            f"run the guest then (time the hypervisor or the host took, which /proc/stat's steal counts only in 10 ms "
            f"ticks). A thread asleep on a timer is woken only when the CPU runs again; the bench, shown as the "
            f"CPU's task, held no one")


def _add(acc: dict[str, tuple[float, Part]], key: str, first: float, us: float, words: str,
         detail: dict[str, Any] | None = None) -> Part:
    if key not in acc:
        acc[key] = (first, Part(key.split("#")[0], words, 0.0, detail=detail or {}))
    acc[key][1].us += us
    return acc[key][1]


def _by_name(part: Part, names: dict[str, float]) -> None:
    d = part.detail.setdefault("by_name_us", {})
    for n, sec in names.items():
        d[n] = round(d.get(n, 0.0) + sec * 1e6, 3)


def _classify(acc: dict[str, tuple[float, Part]], tl: CpuTimeline, a: float, b: float, th: Thread | None, tid: int,
              asleep: bool) -> None:
    """[a, b] of the firing thread's CPU into `acc`: IRQs and softirqs by name; the rest by who ran: the firing
    thread itself, nobody (idle), nobody the trace names (a missed switch), or another thread, which held the CPU
    only once the firing thread was woken (`asleep`: before that, it ran while the thread slept)."""
    cpu = tl.cpu
    irq_s, irq_names, irq_first = _overlap(tl.irqs, a, b)
    soft_s, soft_names, soft_first = _overlap(tl.softirqs, a, b)
    if irq_s > 0:
        _by_name(_add(acc, "wakeup.irq", irq_first or a, irq_s * 1e6, "hard IRQs", {"cpu": cpu}), irq_names)
    if soft_s > 0:
        _by_name(_add(acc, "wakeup.softirq", soft_first or a, soft_s * 1e6, "softirqs", {"cpu": cpu}), soft_names)
    rest_us = max(0.0, (b - a) - irq_s - soft_s) * 1e6
    if th is None:
        _add(acc, "wakeup.unknown", a, rest_us, "unknown (a context switch the trace missed lies here)")
    elif th.pid == tid:
        _add(acc, "wakeup.own", a, rest_us, "the firing thread's own path to its write")
    elif asleep:
        p = _add(acc, "wakeup.asleep", a, rest_us, "the firing thread asleep past its moment until woken (its timer "
                 f"late, or set later: a FIRE held for the line); CPU {cpu} meanwhile", {"cpu": cpu})
        _by_name(p, {"idle" if th.idle else th.words(): rest_us / 1e6})
    elif th.idle:
        _add(acc, "wakeup.idle", a, rest_us, f"CPU {cpu} idle after the wake-up (the switch to the thread)")
    else:
        p = _add(acc, f"wakeup.held#{th.pid}", a, rest_us, f"{th.words()} held CPU {cpu}",
                 {"pid": th.pid, "comm": th.comm, "prio": th.prio, "cpu": cpu, "policy": policy_words(th.prio),
                  "ran_us": None, "runs": 0, "work": {}})
        run = tl.run_around((a + b) / 2)
        if run is not None and run not in p.detail.setdefault("_runs", set()):
            # its whole runs on the CPU, from its switch-in to its switch-out (also outside the window): at least,
            # and at most where a switch the trace missed leaves its start or end open
            p.detail["_runs"].add(run)
            p.detail["ran_us"] = round((p.detail["ran_us"] or 0.0) + run[0] * 1e6, 3)
            p.detail["ran_max_us"] = round((p.detail.get("ran_max_us") or 0.0) + run[1] * 1e6, 3)
            p.detail["runs"] = len(p.detail["_runs"])
        _, works, _ = _overlap(tl.works, a, b)
        for n, sec in works.items():
            p.detail["work"][n] = round(p.detail["work"].get(n, 0.0) + sec * 1e6, 3)


def explain_event(row: dict[str, Any], sidecar: dict[str, Any], trace: SchedTrace | None,
                  run: str = "run") -> Explanation:
    """Event `row` (a CSV row as a dict) of a run with `sidecar`, its wake-up split by `trace` where there is one."""
    event = int(row["event"])
    latency = _num(row.get("latency_us"))
    if latency is None:
        raise no_latency(row, sidecar)
    if row.get("mode") != "normal":
        raise ExplainError(f"event {event} is a {row.get('mode')}-mode event: the explanation is normal mode's")
    ex = Explanation(run, event, str(row.get("outcome")), latency, int(row["scheduled_tc"]), [])
    wakeup = _num(row.get("wakeup_us"))
    if wakeup is None or _num(row.get("est_error_us")) is None:
        ex.parts.append(Part("unknown", "unknown (the event has no budget: no FIRE stamp or reference)", latency))
        return _shares(ex)
    for col, key, words in BEFORE_WAKEUP:
        ex.parts.append(Part(key, words, _num(row[col]) or 0.0))
    split: list[tuple[float, Part]] = []
    t0 = (sidecar.get("run_clock") or {}).get("t0_s")
    sent = _num(row.get("sent_s"))
    tid = (sidecar.get("cpu") or {}).get("firer_tid")
    if trace is None:
        ex.notes.append("no host trace (run with --trace-host): the wake-up is not split")
    elif t0 is None or sent is None or tid is None:
        ex.notes.append("the sidecar does not place the run on CLOCK_MONOTONIC (no run_clock) or names no firing "
                        "thread: the wake-up is not split")
    else:
        wrote = float(t0) + sent
        ex.moment_mono_s = round(wrote - wakeup / 1e6, 6)
        steal = (sidecar.get("host_trace") or {}).get("steal_s") or {}
        split, ex.cpu, notes = wakeup_parts(trace, int(tid), ex.moment_mono_s, wrote, steal)
        ex.notes += notes
    if t0 is not None and sent is not None:
        wrote = float(t0) + sent
        moment = wrote - wakeup / 1e6
        if stalls := bench_stalls_in(sidecar, moment, wrote):
            ex.notes.append(stall_note(stalls, moment, wrote, trace, ex.cpu))
    known = 0.0
    for _, p in split:
        p.us = round(p.us, 3)
        known += p.us
        ex.parts.append(p)
    rest = round(wakeup - known, 3)
    if not split:
        ex.parts.append(Part("wakeup", "wake-up (not split)", wakeup))
    elif abs(rest) > STAMP_US:
        ex.parts.append(Part("wakeup.unknown", "unknown part of the wake-up", rest))
    elif rest:
        # the write's place on the trace's clock is t0_s + sent_s, each to 1 us: the split is good to that
        ex.parts.append(Part("wakeup.rounding", "the run's 1 us stamps' rounding", rest))
    for col, key, words in AFTER_WAKEUP:
        ex.parts.append(Part(key, words, _num(row.get(col)) or 0.0))
    gap = round(latency - sum(p.us for p in ex.parts), 3)
    if abs(gap) >= 0.01:
        ex.parts.append(Part("unknown", "unknown (the budget's parts do not add up to the latency)", gap))
    return _shares(ex)


def no_latency(row: dict[str, Any], sidecar: dict[str, Any]) -> ExplainError:
    """Why event `row` has no latency to split, in one line: its outcome and reason, and where its reason is a fault
    of the rig, that fault as the sidecar records it (the bench's injected delay that held its frame back, a link
    that went away...): the rig's doing, never the system under test's."""
    event, outcome, reason = int(row["event"]), str(row.get("outcome")), row.get("reason")
    reason = None if reason is None or (isinstance(reason, float) and math.isnan(reason)) else str(reason)
    text = f"event {event} has no latency ({outcome}{': ' + reason if reason else ''}): nothing to split"
    if reason in FAULT_REASONS:
        fault = next((f for f in sidecar.get("faults") or [] if f.get("kind") == reason), None)
        text += "; a fault of the rig, not of the system under test" + (
            f": {fault.get('detail')} ({fault.get('node')}, {fault.get('at_s')} s into the run)" if fault else "")
    return ExplainError(text)


def _shares(ex: Explanation, digits: int = 3) -> Explanation:
    """Each part's share of the latency; its time rounded to `digits` decimals of a us (the executor's trace
    resolves 0.0625 us: 4)."""
    for p in ex.parts:
        p.us = round(p.us, digits)
        p.share = round(p.us / ex.latency_us, 4) if ex.latency_us else 0.0
    return ex


def part_words(p: Part) -> str:
    text = f"{p.words} {p.us:.1f} us ({p.share * 100:.1f}%)"
    if p.key == "wakeup.held" and p.detail.get("ran_us") is not None:
        runs = p.detail.get("runs", 1)
        span = f"{p.detail['ran_us']:.1f} us"
        if p.detail.get("ran_max_us", 0.0) - p.detail["ran_us"] >= 1.0:
            span = f"{p.detail['ran_us']:.1f} to {p.detail['ran_max_us']:.1f} us"
        text += f", its run on it {span}" if runs == 1 else f", its {runs} runs on it {span} in all"
        if p.detail.get("work"):
            text += " doing " + _names({k: v / 1e6 for k, v in p.detail["work"].items()})
    elif p.key in ("wakeup.irq", "wakeup.softirq", "wakeup.asleep") and p.detail.get("by_name_us"):
        text += ": " + _names({k: v / 1e6 for k, v in p.detail["by_name_us"].items()})
    return text


def format_explanation(ex: Explanation, width: int = 80) -> str:
    """One paragraph, `width` columns: the event, then each part in the order the event met it, then the notes."""
    head = (f"event {ex.event} of {ex.run} ({ex.outcome}, {ex.latency_us:.1f} us, tick {ex.scheduled_tc}); "
            f"largest: {ex.largest().words}.")
    # (a rounding under 0.05 us stays in the JSON; in words it would read "-0.0 us")
    body = "; ".join(part_words(p) for p in ex.parts if p.key != "wakeup.rounding" or abs(p.us) >= 0.05) + "."
    notes = " ".join(n[0].upper() + n[1:] + "." for n in ex.notes)
    return textwrap.fill(" ".join(x for x in (head, body, notes) if x), width=width)


def check_trace_file(path: Path, section: dict[str, Any]) -> None:
    """The trace file is the one the sidecar recorded (its size and SHA-256), else ExplainError."""
    data = path.read_bytes()
    if section.get("size") is not None and len(data) != section["size"]:
        raise ExplainError(f"{path} has {len(data)} bytes, the sidecar says {section['size']}: not this run's trace")
    if section.get("sha256") and hashlib.sha256(data).hexdigest() != section["sha256"]:
        raise ExplainError(f"{path}'s SHA-256 is not the sidecar's: not this run's trace, or damaged")


def select_rows(df: Any, which: str) -> list[dict[str, Any]]:
    """The events `which` names: a number, `worst` (the measured event with the largest latency) or `late`."""
    if which == "worst":
        m = df[df["outcome"].isin(MEASURED) & df["measurable"]]
        if m.empty:
            raise ExplainError("the run has no measured event")
        return [m.loc[m["latency_us"].idxmax()].to_dict()]
    if which == "late":
        return [r for _, r in df[df["outcome"] == "late"].iterrows()]
    try:
        n = int(which)
    except ValueError:
        raise ExplainError(f"EVENT is a number, worst or late, not {which!r}") from None
    rows = df[df["event"] == n]
    if rows.empty:
        raise ExplainError(f"the run has no event {n}")
    return [rows.iloc[0].to_dict()]


# around each event's window the trace is read this much more: a thread that held the CPU is measured over its
# whole run up to this long, and a missed switch at the window's edge is bounded
MARGIN_S = 0.05


def event_windows(rows: list[dict[str, Any]], meta: dict[str, Any]) -> list[tuple[float, float]]:
    """Where the events' moments and writes lie on CLOCK_MONOTONIC, widened by MARGIN_S."""
    t0 = (meta.get("run_clock") or {}).get("t0_s")
    out = []
    for r in rows:
        sent, wake = _num(r.get("sent_s")), _num(r.get("wakeup_us")) or 0.0
        if t0 is not None and sent is not None:
            wrote = float(t0) + sent
            out.append((wrote - wake / 1e6 - MARGIN_S, wrote + MARGIN_S))
    return out


def read_one_run(csv_path: Path | str) -> tuple[Any, dict[str, Any], str]:
    """The run at `csv_path` (NAME.csv or NAME.json) to explain: its rows (a DataFrame), its sidecar (with `_csv`)
    and its name; ExplainError (one line) if it cannot be read."""
    from .reader import read_run
    from .schema import SchemaError

    try:
        rs = read_run(Path(csv_path))
    except (OSError, SchemaError, ValueError, KeyError) as exc:
        raise ExplainError(f"cannot read the run {csv_path}: {exc}") from None
    name = rs.runs[0]
    return rs.df, rs.meta[name], name


def explain_run(csv_path: Path | str, which: str | int, use_trace: bool = True) -> list[Explanation]:
    """The events `which` names of the run at `csv_path`, each explained; the run's host trace (its sidecar's
    `host_trace.file`, beside the CSV) read once, with trace-cmd."""
    df, meta, name = read_one_run(csv_path)
    rows = select_rows(df, str(which))
    trace = None
    section = meta.get("host_trace") or {}
    if use_trace and section.get("file"):
        path = Path(meta["_csv"]).parent / section["file"]
        try:
            check_trace_file(path, section)
            trace = read_trace(path, windows_keep(event_windows(rows, meta)))
        except (OSError, TraceError) as exc:
            raise ExplainError(str(exc)) from None
    return [explain_event(r, meta, trace, run=name) for r in rows]
