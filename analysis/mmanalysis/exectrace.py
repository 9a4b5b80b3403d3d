"""The executor seen from outside (issue 19): the bench's executor trace (hil/bench/exectrace.h defines the
format) read into one timeline of what the core ran, cycle by cycle, and the figures the seeds take of an
RTOS from it: per task and interrupt the computation time C_i (min/avg/max), period T_i, utilization
U = sum(C_i/T_i) and idle time (seed 002's ProfileAnalyzer), processor time by category (seed 001:
tick processing, dispatch, serial, load, idle), and service calls as before/after pairs (seed 004's table
form): an interrupt that switches tasks against one that does not (the context switch), and the
executor's dispatch from the timecode edge it sees to the event edge it drives.

Nothing here needs the firmware's cooperation: the bench records writes to FreeRTOS's `pxCurrentTCB`,
interrupt entry and return, sleep, and the wired pins, each at its executor cycle.
"""

from __future__ import annotations

import bisect
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

FORMAT_LINE = "# mmbench executor trace 1"

# Which part of the executor each task and vector belongs to (executor/port/avr: the FreeRTOS tick is
# TIMER0_COMPA on this port; Timer1's compares wake the timecode task and guard the ISR dispatch;
# USART0 carries the serial link). Anything not named here is "other".
CATEGORY_OF_VECTOR = {"TIMER0_COMPA": "tick", "WDT": "tick", "PCINT2": "dispatch", "TIMER1_COMPA": "dispatch",
                      "TIMER1_COMPB": "dispatch", "USART0_RX": "serial", "USART0_UDRE": "serial",
                      "USART0_TX": "serial", "TIMER3_COMPA": "load", "TIMER4_COMPA": "load",
                      "TIMER5_COMPA": "load"}
CATEGORY_OF_TASK = {"tc": "dispatch", "serial": "serial", "status": "status", "led": "status",
                    "load_cpu": "load", "load_periodic": "load", "idle": "idle"}
CATEGORIES = ("tick", "dispatch", "serial", "load", "status", "other", "idle")
SLEEP = "sleep"


class ExecTraceError(ValueError):
    """A trace that cannot be read: names the file and line."""

    def __init__(self, path: Path | str, line: int, why: str) -> None:
        super().__init__(f"{path}:{line}: {why}")


def task_name(symbol: str) -> str:
    """`tcb_tc` -> `tc`; the idle task's buffer (any symbol with "idle" in it) -> `idle`."""
    if "idle" in symbol.lower():
        return "idle"
    return symbol[4:] if symbol.startswith("tcb_") else symbol


@dataclass
class ExecTrace:
    path: Path
    cpu_hz: int
    tasks: dict[int, str]                                   # TCB address -> task name
    vectors: dict[int, str]                                 # vector number -> name
    switches: list[tuple[int, int]] = field(default_factory=list)        # (cycle, TCB address)
    irqs: list[tuple[int, int, int]] = field(default_factory=list)       # (entry, return, vector)
    sleeps: list[tuple[int, int]] = field(default_factory=list)          # (asleep, awake)
    wires: list[tuple[int, str, int]] = field(default_factory=list)      # (cycle, wire, level)
    start: int = 0
    end: int = 0
    initial: dict[str, int] = field(default_factory=dict)   # wire levels at the start (absent: 0, the reset level)

    def us(self, cycles: float) -> float:
        return cycles * 1e6 / self.cpu_hz

    def task(self, addr: int) -> str:
        return self.tasks.get(addr, f"0x{addr:04x}")

    def vector(self, v: int) -> str:
        return self.vectors.get(v, f"vector{v}")


def read(path: Path | str) -> ExecTrace:
    """Reads a trace; ExecTraceError (file:line: why) for anything malformed. An interrupt or sleep still
    open at the end is closed at the last cycle seen."""
    path = Path(path)
    cpu_hz = 0
    tasks: dict[int, str] = {}
    vectors: dict[int, str] = {}
    tr = ExecTrace(path, 0, tasks, vectors)
    open_irq: list[tuple[int, int]] = []
    asleep: int | None = None
    last = None
    with path.open(encoding="ascii", errors="replace") as f:
        first = f.readline().rstrip("\n")
        if first != FORMAT_LINE:
            raise ExecTraceError(path, 1, f"not an executor trace (first line {first[:40]!r}, expected {FORMAT_LINE!r})")
        for n, line in enumerate(f, start=2):
            w = line.split()
            if not w:
                continue
            kind = w[0]
            try:
                if kind == "#":
                    if len(w) >= 3 and w[1] == "cpu_hz":
                        cpu_hz = int(w[2])
                    continue
                if kind == "T":
                    tasks[int(w[1], 16)] = task_name(w[2])
                    continue
                if kind == "V":
                    vectors[int(w[1])] = w[2]
                    continue
                cycle = int(w[1])
            except (IndexError, ValueError):
                raise ExecTraceError(path, n, f"malformed {kind!r} record: {line.strip()[:60]!r}") from None
            if last is None:
                tr.start = cycle
            elif cycle < last:
                raise ExecTraceError(path, n, f"cycle {cycle} goes back (last {last})")
            last = cycle
            try:
                if kind == "S":
                    tr.switches.append((cycle, int(w[2], 16)))
                elif kind == "I":
                    open_irq.append((cycle, int(w[2])))
                elif kind == "R":
                    v = int(w[2])
                    if not open_irq or open_irq[-1][1] != v:
                        raise ExecTraceError(path, n, f"return from vector {v} that is not the one running "
                                                      f"({open_irq[-1][1] if open_irq else 'none'})")
                    entry, _ = open_irq.pop()
                    tr.irqs.append((entry, cycle, v))
                elif kind == "Z":
                    if w[2] == "1" and asleep is None:
                        asleep = cycle
                    elif w[2] == "0" and asleep is not None:
                        tr.sleeps.append((asleep, cycle))
                        asleep = None
                elif kind == "W":
                    tr.wires.append((cycle, w[2], int(w[3])))
                else:
                    raise ExecTraceError(path, n, f"unknown record {kind!r}")
            except ExecTraceError:
                raise
            except (IndexError, ValueError):
                raise ExecTraceError(path, n, f"malformed {kind!r} record: {line.strip()[:60]!r}") from None
    if not cpu_hz:
        raise ExecTraceError(path, 1, "no '# cpu_hz N' header")
    tr.cpu_hz = cpu_hz
    tr.end = last if last is not None else 0
    for entry, v in open_irq:
        tr.irqs.append((entry, tr.end, v))
    if asleep is not None:
        tr.sleeps.append((asleep, tr.end))
    tr.irqs.sort()
    return tr


@dataclass(frozen=True)
class Segment:
    """A stretch of cycles [start, end) in which the core ran one thing: an interrupt, a task, or slept."""

    start: int
    end: int
    kind: str        # "isr", "task" or "sleep"
    name: str


def timeline(tr: ExecTrace) -> list[Segment]:
    """What the core ran, as non-overlapping segments from the first record to the last. Interrupts take
    precedence over the task they interrupted; sleep happens in whatever task was current (the idle
    task). Before the first switch the task is unknown ("?")."""
    marks: list[tuple[int, int, str, Any]] = []          # (cycle, order, what, arg): returns before entries
    for c, addr in tr.switches:
        marks.append((c, 1, "S", addr))
    for a, b, v in tr.irqs:
        marks.append((a, 2, "I", v))
        marks.append((b, 0, "R", v))
    for a, b in tr.sleeps:
        marks.append((a, 2, "Z1", None))
        marks.append((b, 0, "Z0", None))
    marks.sort(key=lambda m: (m[0], m[1]))
    out: list[Segment] = []
    task, stack, sleeping, at = "?", [], False, tr.start

    def emit(upto: int) -> None:
        if upto <= at:
            return
        if stack:
            seg = Segment(at, upto, "isr", tr.vector(stack[-1]))
        elif sleeping:
            seg = Segment(at, upto, "sleep", SLEEP)
        else:
            seg = Segment(at, upto, "task", task)
        if out and out[-1].kind == seg.kind and out[-1].name == seg.name and out[-1].end == seg.start:
            out[-1] = Segment(out[-1].start, seg.end, seg.kind, seg.name)
        else:
            out.append(seg)

    for c, _, what, arg in marks:
        emit(c)
        at = max(at, c)
        if what == "S":
            task = tr.task(arg)
        elif what == "I":
            stack.append(arg)
        elif what == "R":
            if stack:
                stack.pop()
        elif what == "Z1":
            sleeping = True
        else:
            sleeping = False
    emit(tr.end)
    return out


def _mmm(xs: list[float]) -> dict[str, float | None]:
    if not xs:
        return {"min": None, "avg": None, "max": None}
    return {"min": round(min(xs), 4), "avg": round(statistics.fmean(xs), 4), "max": round(max(xs), 4)}


def instances(tr: ExecTrace, segments: list[Segment]) -> dict[tuple[str, str], list[tuple[int, int, int]]]:
    """Each task's and interrupt's instances as (start, end, cycles it ran): an interrupt from entry to
    return; a task from the switch to it to the switch away, its cycles without the interrupts and sleep
    inside (seed 002 counts an instance's computation time so)."""
    out: dict[tuple[str, str], list[tuple[int, int, int]]] = defaultdict(list)
    for a, b, v in tr.irqs:
        out[("isr", tr.vector(v))].append((a, b, b - a))
    bounds = [c for c, _ in tr.switches] + [tr.end]
    names = [tr.task(addr) for _, addr in tr.switches]
    k = 0
    for i, name in enumerate(names):
        a, b = bounds[i], bounds[i + 1]
        if b <= a:
            continue
        ran = 0
        while k < len(segments) and segments[k].end <= a:
            k += 1
        j = k
        while j < len(segments) and segments[j].start < b:
            s = segments[j]
            if s.kind == "task":
                ran += min(s.end, b) - max(s.start, a)
            j += 1
        out[("task", name)].append((a, b, ran))
    return out


def profile(tr: ExecTrace) -> dict[str, Any]:
    """The figures of the executor over the trace (the sidecar's `executor_profile`, the report's table).
    Per task and interrupt: instances, C_i min/avg/max (us), T_i min/avg/max (us, between the starts of
    successive instances), U_i = C_avg / T_avg, and its measured share of the trace's cycles; the sum U
    over everything but the idle task; idle time (the idle task running, and asleep); processor time by
    category; the context switch and the dispatch as service-call pairs."""
    segs = timeline(tr)
    total = max(tr.end - tr.start, 1)
    rows = []
    for (kind, name), inst in sorted(instances(tr, segs).items(), key=lambda kv: (kv[0][0] != "isr", kv[0][1])):
        c = [tr.us(x[2]) for x in inst]
        starts = [x[0] for x in inst]
        t = [tr.us(b - a) for a, b in zip(starts, starts[1:])]
        cm, tm = _mmm(c), _mmm(t)
        busy = sum(x[2] for x in inst)
        u = (cm["avg"] / tm["avg"]) if cm["avg"] is not None and tm["avg"] else None
        cat = CATEGORY_OF_VECTOR.get(name, "other") if kind == "isr" else CATEGORY_OF_TASK.get(name, "other")
        rows.append({"kind": kind, "name": name, "category": cat, "instances": len(inst), "C_us": cm, "T_us": tm,
                     "U": round(u, 6) if u is not None else None, "share": round(busy / total, 6)})
    by_cat = {c: 0 for c in CATEGORIES}
    for s in segs:
        if s.kind == "sleep":
            by_cat["idle"] += s.end - s.start
        elif s.kind == "isr":
            by_cat[CATEGORY_OF_VECTOR.get(s.name, "other")] += s.end - s.start
        else:
            by_cat[CATEGORY_OF_TASK.get(s.name, "other")] += s.end - s.start
    sleep = sum(s.end - s.start for s in segs if s.kind == "sleep")
    idle_task = sum(s.end - s.start for s in segs if s.kind == "task" and s.name == "idle")
    u_sum = sum(r["U"] for r in rows if r["U"] is not None and not (r["kind"] == "task" and r["name"] == "idle"))
    return {"cpu_hz": tr.cpu_hz, "cycles": total, "seconds": round(total / tr.cpu_hz, 6),
            "tasks": rows, "U": round(u_sum, 6),
            "idle": {"share": round((sleep + idle_task) / total, 6), "asleep_share": round(sleep / total, 6),
                     "idle_task_share": round(idle_task / total, 6)},
            "by_category": {c: round(v / total, 6) for c, v in by_cat.items()},
            "service_calls": service_calls(tr),
            "switches": len(tr.switches), "interrupts": len(tr.irqs)}


def _pair(name: str, before: list[float], after: list[float], what_before: str, what_after: str) -> dict[str, Any]:
    b = statistics.median(before) if before else None
    a = statistics.median(after) if after else None
    return {"call": name, "before": what_before, "after": what_after,
            "before_us": round(b, 4) if b is not None else None, "after_us": round(a, 4) if a is not None else None,
            "difference_us": round(a - b, 4) if a is not None and b is not None else None,
            "ratio": round(a / b, 4) if a is not None and b else None,
            "n_before": len(before), "n_after": len(after)}


def service_calls(tr: ExecTrace) -> list[dict[str, Any]]:
    """Seed 004's table form, medians in us: per interrupt vector that sometimes switches tasks, its
    duration without a switch (before) and with one (after): the difference is what a context switch
    costs on this port (save, vTaskSwitchContext, restore), measured from outside."""
    sw = [c for c, _ in tr.switches]
    by_vec: dict[int, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    for a, b, v in tr.irqs:
        i = bisect.bisect_left(sw, a)
        switched = i < len(sw) and sw[i] <= b
        by_vec[v][1 if switched else 0].append(tr.us(b - a))
    out = []
    for v, (plain, switching) in sorted(by_vec.items()):
        if plain and switching:
            out.append(_pair(f"{tr.vector(v)} interrupt", plain, switching, "returns to the task it interrupted",
                             "switches task (context switch)"))
    return out


def timecode_edges(tr: ExecTrace, prefix: str = "timecode") -> list[tuple[int, int]]:
    """(cycle, port value) at each change of the timecode port the executor sees (bits named
    timecode0..7; the bits that change together at one cycle make one edge)."""
    bits = [tr.initial.get(f"{prefix}{i}", 0) for i in range(8)]
    out: list[tuple[int, int]] = []
    for c, name, level in tr.wires:
        if not name.startswith(prefix):
            continue
        k = int(name[len(prefix):])
        bits[k] = level
        v = sum(b << i for i, b in enumerate(bits))
        if out and out[-1][0] == c:
            out[-1] = (c, v)
        else:
            out.append((c, v))
    return out


def event_edges(tr: ExecTrace, strobe: str = "strobe", id_prefix: str = "event_id") -> list[tuple[int, int]]:
    """(cycle, event id) at each event the executor drives: the strobe toggles once per event (either
    edge, docs/hardware.md), written with the id bits in one port write."""
    ids = [tr.initial.get(f"{id_prefix}{i}", 0) for i in range(3)]
    level_now = tr.initial.get(strobe, 0)    # out of reset 0; a record of the level it has is no edge
    out = []
    for c, name, level in tr.wires:
        if name.startswith(id_prefix):
            ids[int(name[len(id_prefix):])] = level
        elif name == strobe and level != level_now:
            out.append((c, ids[0] | ids[1] << 1 | ids[2] << 2))
            level_now = level
    return out


def extended_ticks(tr: ExecTrace, scheduled: Iterable[int] = ()) -> list[tuple[int, int]]:
    """(cycle, extended timecode) of each timecode edge: the 8-bit port values unwrapped (each edge
    moves the timecode on by (new - old) mod 256), then placed by whole wraps so that they meet the run's
    scheduled timecodes best (the profiler drives the low 8 bits of its extended timecode). Without a
    run, the first edge keeps its 8-bit value."""
    edges = timecode_edges(tr)
    if not edges:
        return []
    ext, out = edges[0][1], [(edges[0][0], edges[0][1])]
    for (_, a), (c, b) in zip(edges, edges[1:]):
        ext += (b - a) % 256
        out.append((c, ext))
    wanted = set(scheduled)
    if wanted:
        lo = min(wanted) - out[0][1]
        best = max(range(lo // 256 - 2, lo // 256 + 3),
                   key=lambda k: sum((t + 256 * k) in wanted for _, t in out))
        out = [(c, t + 256 * best) for c, t in out]
    return out


def dispatch_delays(tr: ExecTrace) -> list[float]:
    """For each event edge, the us from the last timecode edge before it: the executor's dispatch as the
    wires show it (the figure mixed mode measures, here without the profiler's part)."""
    tc = [c for c, _ in timecode_edges(tr)]
    out = []
    for c, _ in event_edges(tr):
        i = bisect.bisect_right(tc, c) - 1
        if i >= 0:
            out.append(tr.us(c - tc[i]))
    return out


def profile_table(p: dict[str, Any]) -> list[str]:
    """Markdown lines: the per-task table (seed 002's columns)."""
    lines = ["| | name | category | instances | C_i min / avg / max (us) | T_i min / avg / max (us) | U_i = C/T | share |",
             "|---|---|---|---|---|---|---|---|"]

    def f(x: float | None, spec: str = ".2f") -> str:
        return "-" if x is None else format(x, spec)

    for r in p["tasks"]:
        c, t = r["C_us"], r["T_us"]
        lines.append(f"| {r['kind']} | {r['name']} | {r['category']} | {r['instances']} | "
                     f"{f(c['min'])} / {f(c['avg'])} / {f(c['max'])} | {f(t['min'], '.0f')} / {f(t['avg'], '.0f')} / "
                     f"{f(t['max'], '.0f')} | {f(r['U'], '.4f')} | {r['share']:.4f} |")
    lines.append(f"\nU = sum(C_i/T_i) over all but the idle task: **{p['U']:.4f}**; idle {p['idle']['share']:.1%} "
                 f"of {p['seconds']:.2f} s (asleep {p['idle']['asleep_share']:.1%}); {p['switches']} task switches, "
                 f"{p['interrupts']} interrupts.")
    return lines
