"""The executor seen from outside: the bench's executor trace (hil/bench/exectrace.h defines the format) read into
one timeline of what the core ran, cycle by cycle, and the figures the source papers take of an RTOS from it: per
task and interrupt the computation time C_i (min/avg/max), period T_i, utilization U_i (its cycles over the trace's
span) and their sum U, and idle time (the ProfileAnalyzer of Prisching and Rinner, "Thread-based analysis of embedded applications"), processor time by
category (Kohout, "Hardware Support for Real-Time Operating Systems", 2002: tick processing, dispatch, serial, load,
idle), and service calls as before/after pairs (the table form of Nordström et al., "Application Specific Real-Time
Microkernel in Hardware"): an interrupt that switches tasks against one that does not (the context switch), and the
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
class Interrupt:
    """One interrupt taken: entry `start`, its own RETI `end` (None: still open when the trace ended, or
    ended by a reset), `exit` the cycle the core left it for a task (its RETI; after a switch, the RETI
    into the incoming task, None when the port switched with RET, as the tick does), `switched` whether the
    kernel switched tasks inside it, `task` the task it interrupted, `before` taken before the trace began
    (an F record: its figures are incomplete)."""

    id: int
    vector: int
    start: int
    task: str
    end: int | None = None
    exit: int | None = None
    switched: bool = False
    before: bool = False


@dataclass(frozen=True)
class Masked:
    """Interrupts masked by code from `since` to `end` (cycles) while one became pending (an M record): the
    instruction at byte address `pc_from` in `func_from` masked them, the one at `pc_to` in `func_to` unmasked
    them, and the pending interrupt was taken after it."""

    since: int
    end: int
    pc_from: int
    func_from: str
    pc_to: int
    func_to: str

    def words(self) -> str:
        where = self.func_from if self.func_from == self.func_to else f"{self.func_from} .. {self.func_to}"
        return f"{where} 0x{self.pc_from:05x}..0x{self.pc_to:05x}"


@dataclass
class ExecTrace:
    path: Path
    cpu_hz: int
    tasks: dict[int, str]                                   # TCB address -> task name
    vectors: dict[int, str]                                 # vector number -> name
    records: list[tuple[int, str, Any]] = field(default_factory=list)   # (cycle, letter, arg): F B S I R Z X E
    wires: list[tuple[int, str, int]] = field(default_factory=list)      # (cycle, wire, level)
    masked: list[Masked] = field(default_factory=list)                   # M records, by their end
    start: int = 0
    end: int = 0
    initial: dict[str, int] = field(default_factory=dict)   # wire levels at the start (absent: 0, the reset level)
    skipped: int = 0                                        # lines of letters this reader does not know
    built_model: "Model | None" = field(default=None, repr=False, compare=False)   # `model(tr)`, built once

    def us(self, cycles: float) -> float:
        return cycles * 1e6 / self.cpu_hz

    def task(self, addr: int) -> str:
        return self.tasks.get(addr, f"0x{addr:04x}")

    def vector(self, v: int) -> str:
        return self.vectors.get(v, f"vector{v}")

    @property
    def switches(self) -> list[tuple[int, int]]:
        """(cycle, TCB address) of every task switch (S records)."""
        return [(c, a) for c, k, a in self.records if k == "S"]

    @property
    def irqs(self) -> list[tuple[int, int, int]]:
        """(entry, its own RETI, vector) of every interrupt taken in the trace and returned from: under
        FreeRTOS's AVR port a span may hold other tasks' time (a switch inside it); `timeline` says what
        ran when."""
        return sorted((i.start, i.end, i.vector) for i in model(self).interrupts if i.end is not None and not i.before)


def read(path: Path | str) -> ExecTrace:
    """Reads a trace (hil/bench/exectrace.h, format 1); ExecTraceError (file:line: why) for anything
    malformed; lines of letters it does not know are skipped, as the format asks (counted in `skipped`)."""
    path = Path(path)
    tr = ExecTrace(path, 0, {}, {})
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
                        tr.cpu_hz = int(w[2])
                    continue
                if kind == "T":
                    tr.tasks[int(w[1], 16)] = task_name(w[2])
                    continue
                if kind == "V":
                    tr.vectors[int(w[1])] = w[2]
                    continue
                if kind == "L":                # a wire's level when the trace began: a state, not a change
                    if w[3] not in ("0", "1"):
                        raise ValueError(w[3])
                    tr.initial[w[2]] = int(w[3])
                    continue
                if kind not in "FBSIRZWXEM" or len(kind) != 1:
                    tr.skipped += 1
                    continue
                cycle = int(w[1])
                if kind == "S":
                    arg: Any = int(w[2], 16)
                elif kind == "I":
                    arg = int(w[2])
                elif kind == "R":
                    arg = None if w[2] == "-" else int(w[2])
                elif kind == "F":
                    arg = (int(w[2]), int(w[3], 16))
                elif kind == "Z":
                    if w[2] not in ("0", "1"):
                        raise ValueError(w[2])
                    arg = w[2] == "1"
                elif kind == "W":
                    if w[3] not in ("0", "1"):
                        raise ValueError(w[3])
                    arg = (w[2], int(w[3]))
                elif kind == "X":
                    arg = w[2]
                elif kind == "M":
                    arg = Masked(int(w[2]), cycle, int(w[3], 16), w[4], int(w[5], 16), w[6])
                    if arg.since > cycle:
                        raise ValueError(w[2])
                else:                          # B, E
                    arg = None
            except (IndexError, ValueError):
                raise ExecTraceError(path, n, f"malformed {kind!r} record: {line.strip()[:60]!r}") from None
            if last is not None and cycle < last:
                raise ExecTraceError(path, n, f"cycle {cycle} goes back (last {last})")
            if last is None:
                tr.start = cycle
            last = cycle
            if kind == "W":
                tr.wires.append((cycle, arg[0], arg[1]))
            elif kind == "M":
                tr.masked.append(arg)
            else:
                if kind == "B":
                    tr.start = cycle
                tr.records.append((cycle, kind, arg))
    if not tr.cpu_hz:
        raise ExecTraceError(path, 1, "no '# cpu_hz N' header")
    tr.end = last if last is not None else 0
    return tr


@dataclass(frozen=True)
class Segment:
    """A stretch of cycles [start, end) in which the core ran one thing: an interrupt's handler (`irq`: the
    Interrupt's id), a task, or nothing (asleep, halted)."""

    start: int
    end: int
    kind: str        # "isr", "task", "sleep" or "halted"
    name: str
    irq: int | None = None


@dataclass
class Model:
    segments: list[Segment]
    interrupts: list[Interrupt]
    stray_returns: int = 0          # RETIs of a vector no open interrupt of the current task had


def model(tr: ExecTrace) -> Model:
    """What the core ran, cycle by cycle, from the records, as FreeRTOS's ATmega port behaves
    (exectrace.h): an interrupt belongs to the task it interrupted; a switch inside it (S) leaves it open
    on that task, and it goes on (its tail, then its own RETI) when that task runs again. So the core runs
    the innermost open interrupt of the current task, else the task; asleep or halted when so. Time from a
    switch on goes to the incoming side (the restore of its context, as tracers that watch the current-task
    pointer count it)."""
    if tr.built_model is not None:
        return tr.built_model
    segs: list[Segment] = []
    irqs: list[Interrupt] = []
    stacks: dict[str, list[Interrupt]] = defaultdict(list)
    current, sleeping, halted, at = "?", False, False, tr.start
    awaiting: Interrupt | None = None        # switched inside it: its exit is the next RETI, if no I/S first
    stray = 0

    def state() -> tuple[str, str, int | None]:
        if halted:
            return "halted", "halted", None
        st = stacks.get(current)
        if st:
            return "isr", tr.vector(st[-1].vector), st[-1].id
        if sleeping:
            return "sleep", SLEEP, None
        return "task", current, None

    def emit(upto: int) -> None:
        if upto <= at:
            return
        kind, name, irq = state()
        if segs and segs[-1].end == at and (segs[-1].kind, segs[-1].name, segs[-1].irq) == (kind, name, irq):
            last = segs[-1]
            segs[-1] = Segment(last.start, upto, kind, name, irq)
        else:
            segs.append(Segment(at, upto, kind, name, irq))

    for c, k, arg in tr.records:
        emit(c)
        at = max(at, c)
        if k == "F":
            v, addr = arg
            i = Interrupt(len(irqs), v, c, tr.task(addr), before=True)
            irqs.append(i)
            stacks[i.task].append(i)
        elif k == "S":
            st = stacks.get(current)
            if st:
                st[-1].switched = True
                awaiting = st[-1]
            else:
                awaiting = None
            current = tr.task(arg)
        elif k == "I":
            i = Interrupt(len(irqs), arg, c, current)
            irqs.append(i)
            stacks[current].append(i)
            awaiting = None
        elif k == "R":
            if awaiting is not None:
                awaiting.exit = c
                awaiting = None
            if arg is not None:
                st = stacks.get(current, [])
                for j in range(len(st) - 1, -1, -1):
                    if st[j].vector == arg:
                        done = st.pop(j)
                        done.end = c
                        if not done.switched:
                            done.exit = c
                        break
                else:
                    stray += 1
        elif k == "Z":
            sleeping = arg
        elif k == "X":
            if arg in ("reset", "watchdog"):
                stacks.clear()
                current, sleeping, halted, awaiting = "?", False, False, None
            else:
                halted = True
    emit(tr.end)
    tr.built_model = Model(segs, irqs, stray)      # a trace is read-only once read: its model never changes
    return tr.built_model


def timeline(tr: ExecTrace) -> list[Segment]:
    """What the core ran, as non-overlapping segments from the trace's start to its end (see `model`)."""
    return model(tr).segments


def _mmm(xs: list[float]) -> dict[str, float | None]:
    if not xs:
        return {"min": None, "avg": None, "max": None}
    return {"min": round(min(xs), 4), "avg": round(statistics.fmean(xs), 4), "max": round(max(xs), 4)}


def instances(tr: ExecTrace, segments: list[Segment] | None = None) -> dict[tuple[str, str], list[tuple[int, int, int]]]:
    """Each task's and interrupt's instances as (start, end, cycles it ran): an interrupt from its entry to its own
    RETI, the cycles its handler ran (a switch inside it leaves out the other tasks' time); a task from the switch to
    it to the switch away, its cycles without the interrupts and sleep inside (Prisching and Rinner's "Thread-based
    analysis of embedded applications" counts an instance's computation time so). Interrupts taken before the trace
    began, or never returned from in it, are left out: their figures are incomplete."""
    m = model(tr)
    segments = m.segments if segments is None else segments
    out: dict[tuple[str, str], list[tuple[int, int, int]]] = defaultdict(list)
    ran: dict[int, int] = defaultdict(int)
    for sg in segments:
        if sg.irq is not None:
            ran[sg.irq] += sg.end - sg.start
    for i in m.interrupts:
        if i.end is not None and not i.before:
            out[("isr", tr.vector(i.vector))].append((i.start, i.end, ran[i.id]))
    switches = tr.switches
    bounds = [c for c, _ in switches] + [tr.end]
    k = 0
    for n, (_, addr) in enumerate(switches):
        a, b = bounds[n], bounds[n + 1]
        if b <= a:
            continue
        name, own = tr.task(addr), 0
        while k < len(segments) and segments[k].end <= a:
            k += 1
        j = k
        while j < len(segments) and segments[j].start < b:
            sg = segments[j]
            if sg.kind == "task" and sg.name == name:
                own += min(sg.end, b) - max(sg.start, a)
            j += 1
        out[("task", name)].append((a, b, own))
    for v in out.values():
        v.sort()
    return out


def profile(tr: ExecTrace) -> dict[str, Any]:
    """The figures of the executor over the trace (the sidecar's `executor_profile`, the report's table).
    Per task and interrupt: instances, C_i min/avg/max (us), T_i min/avg/max (us, between the starts of
    successive instances), and U_i, the cycles it ran over the trace's span (`share`, the same figure); the
    sum U over everything but the idle task, which with the idle share is at most 1 (the segments never
    overlap); idle time (the idle task running, and asleep); processor time by category; the context switch
    and the dispatch as service-call pairs.

    U_i is not C_avg / T_avg: T averages the gaps between instances' starts, one fewer than the instances C
    averages, and a task preempted only now and then (a CPU load: instances from 57 us to 56 ms in a 1.7 s
    trace) weighs its longest, last instance into C but not into T; a user's CPU-loaded run had U_i 1.17 for
    it and U 1.197, more processor than there is."""
    segs = timeline(tr)
    calls = service_calls(tr)
    total = max(tr.end - tr.start, 1)
    rows = []
    for (kind, name), inst in sorted(instances(tr, segs).items(), key=lambda kv: (kv[0][0] != "isr", kv[0][1])):
        c = [tr.us(x[2]) for x in inst]
        starts = [x[0] for x in inst]
        t = [tr.us(b - a) for a, b in zip(starts, starts[1:])]
        cm, tm = _mmm(c), _mmm(t)
        busy = sum(x[2] for x in inst)
        cat = CATEGORY_OF_VECTOR.get(name, "other") if kind == "isr" else CATEGORY_OF_TASK.get(name, "other")
        rows.append({"kind": kind, "name": name, "category": cat, "instances": len(inst), "C_us": cm, "T_us": tm,
                     "U": round(busy / total, 6), "share": round(busy / total, 6)})
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
    return {"cpu_hz": tr.cpu_hz, "cycles": total, "seconds": round(total / tr.cpu_hz, 6),
            "tasks": rows, "U": utilisation({"tasks": rows}),
            "idle": {"share": round((sleep + idle_task) / total, 6), "asleep_share": round(sleep / total, 6),
                     "idle_task_share": round(idle_task / total, 6)},
            "by_category": {c: round(v / total, 6) for c, v in by_cat.items()},
            "service_calls": calls, "context_switch": context_switch(tr, calls),
            "switches": len(tr.switches), "interrupts": sum(not i.before for i in model(tr).interrupts),
            "stray_returns": model(tr).stray_returns, "skipped_lines": tr.skipped}


def utilisation(p: dict[str, Any]) -> float:
    """U of a profile: its rows' shares of the trace's span, summed over all but the idle task. Profiles written
    before U_i was the share (C avg / T avg then: above 1 for a CPU load) carry the share too, so every view
    reads U from here and gets the same figure for old and new sidecars."""
    return round(sum(r["share"] for r in p["tasks"] if not (r["kind"] == "task" and r["name"] == "idle")), 6)


def _pair(name: str, before: list[float], after: list[float], what_before: str, what_after: str) -> dict[str, Any]:
    b = statistics.median(before) if before else None
    a = statistics.median(after) if after else None
    return {"call": name, "before": what_before, "after": what_after,
            "before_us": round(b, 4) if b is not None else None, "after_us": round(a, 4) if a is not None else None,
            "difference_us": round(a - b, 4) if a is not None and b is not None else None,
            "ratio": round(a / b, 4) if a is not None and b else None,
            "n_before": len(before), "n_after": len(after)}


def service_calls(tr: ExecTrace) -> list[dict[str, Any]]:
    """Seed 004's table form, medians in us: per interrupt vector that sometimes switches tasks, the time
    from its entry until the core leaves it for a task, when it returns to the task it interrupted (before)
    and when the kernel switches task inside it (after: to the RETI into the incoming task, the save,
    vTaskSwitchContext and the restore included). The difference is what a context switch costs on this
    port, measured from outside. (A switch the port ends with RET, as the tick's, has no such RETI: it is
    left out.)"""
    by_vec: dict[int, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    for i in model(tr).interrupts:
        if i.exit is not None and not i.before:
            by_vec[i.vector][1 if i.switched else 0].append(tr.us(i.exit - i.start))
    out = []
    for v, (plain, switching) in sorted(by_vec.items()):
        if plain and switching:
            out.append(_pair(f"{tr.vector(v)} interrupt", plain, switching, "returns to the task it interrupted",
                             "switches task (context switch)"))
    return out


# Interrupts whose handler does the same work whether or not the kernel switches inside it: on this executor
# they wake the timecode task (executor/port/avr/board.c: PCINT2 on a timecode edge, Timer1's compares on a
# settled edge or the quiet window), and the switch happens only when that task outranks the one running. So
# their switching and non-switching durations differ by the context switch alone. (USART0_RX switches only at
# a frame's end, which does more; TIMER3_COMPA's non-switching path is an overrun's skip.)
SAME_WORK_VECTORS = ("PCINT2", "TIMER1_COMPA", "TIMER1_COMPB")
MIN_PAIR = 10                 # instances on each side before a median is a figure


def context_switch(tr: ExecTrace, calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The context switch measured from outside: the difference between switching and non-switching
    instances of the SAME_WORK_VECTORS (medians, at least MIN_PAIR of each; their median if several), and
    its restore half exactly: from the store that changes pxCurrentTCB to the RETI into the incoming task.
    `us` is None, with `why`, when no such vector both switched and did not often enough."""
    pairs = [c for c in (service_calls(tr) if calls is None else calls) if c["call"].split()[0] in SAME_WORK_VECTORS
             and c["n_before"] >= MIN_PAIR and c["n_after"] >= MIN_PAIR]
    restore = []
    rec = tr.records
    for k in range(len(rec) - 1):
        if rec[k][1] == "S" and rec[k + 1][1] == "R" and rec[k + 1][2] is None:
            restore.append(rec[k + 1][0] - rec[k][0])
    out: dict[str, Any] = {"us": None, "from": [c["call"] for c in pairs],
                           "restore_us": round(tr.us(statistics.median(restore)), 4) if restore else None,
                           "restore_n": len(restore)}
    if pairs:
        out["us"] = round(statistics.median(c["difference_us"] for c in pairs), 4)
    else:
        out["why"] = (f"no interrupt of {', '.join(SAME_WORK_VECTORS)} both switched and returned to the task it "
                      f"interrupted {MIN_PAIR} times or more in this trace")
    return out


def timecode_edges(tr: ExecTrace, prefix: str = "timecode") -> list[tuple[int, int]]:
    """(cycle, port value) at each change of the timecode port the executor sees (bits named
    timecode0..7; the bits that change together at one cycle make one edge; a record that repeats a level,
    as after a reset, is no edge). A trace begun mid-run records only the bits that change, so when the
    port's levels at its start are not given (`initial`), they are the ones under which the most edges step
    the timecode by exactly one, as the profiler drives it."""
    changes: list[tuple[int, int, int]] = []          # (cycle, bit, level)
    for c, name, level in tr.wires:
        if name.startswith(prefix):
            changes.append((c, int(name[len(prefix):]), level))
    if not changes:
        return []

    def edges(start: int) -> list[tuple[int, int]]:
        v, out = start, []
        for c, bit, level in changes:
            new = (v & ~(1 << bit)) | (level << bit)
            if new == v:
                continue
            v = new
            if out and out[-1][0] == c:
                out[-1] = (c, v)
            else:
                out.append((c, v))
        return out

    known = [f"{prefix}{i}" in tr.initial for i in range(8)]
    if all(known):
        return edges(sum(tr.initial[f"{prefix}{i}"] << i for i in range(8)))
    def steps_of_one(v0: int) -> int:
        e = edges(v0)
        return sum((b - a) % 256 == 1 for (_, a), (_, b) in zip(e, e[1:]))

    return edges(max(range(256), key=steps_of_one))


def event_edges(tr: ExecTrace, strobe: str = "strobe", id_prefix: str = "event_id") -> list[tuple[int, int]]:
    """(cycle, event id) at each event the executor drives: the strobe toggles once per event (either
    edge, docs/hardware.md), written with the id bits in one port write."""
    ids = [tr.initial.get(f"{id_prefix}{i}", 0) for i in range(3)]
    level_now = tr.initial.get(strobe)       # None: not given (a trace begun mid-run): its first record is an edge
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
    """Markdown lines: the per-task table (the columns of Prisching and Rinner's ProfileAnalyzer)."""
    lines = ["| | name | category | instances | C_i min / avg / max (us) | T_i min / avg / max (us) | U_i (of the span) |",
             "|---|---|---|---|---|---|---|"]

    def f(x: float | None, spec: str = ".2f") -> str:
        return "-" if x is None else format(x, spec)

    for r in p["tasks"]:
        c, t = r["C_us"], r["T_us"]
        lines.append(f"| {r['kind']} | {r['name']} | {r['category']} | {r['instances']} | "
                     f"{f(c['min'])} / {f(c['avg'])} / {f(c['max'])} | {f(t['min'], '.0f')} / {f(t['avg'], '.0f')} / "
                     f"{f(t['max'], '.0f')} | {f(r['U'], '.4f')} |")
    lines.append(f"\nU = sum of U_i (cycles run over the trace's span) over all but the idle task: **{p['U']:.4f}**; idle {p['idle']['share']:.1%} "
                 f"of {p['seconds']:.2f} s (asleep {p['idle']['asleep_share']:.1%}); {p['switches']} task switches, "
                 f"{p['interrupts']} interrupts.")
    return lines
