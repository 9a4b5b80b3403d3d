"""The PC's scheduler trace (`mmrig run --trace-host`, NAME.host.dat) as `trace-cmd report` prints it, read into
one timeline per CPU: who ran (sched_switch), who was woken where (sched_waking, sched_wakeup), hard IRQ handlers,
softirqs and workqueue items as spans. Only trace-cmd reads the binary file (`report_text`); this reads its text.

A line of `trace-cmd report -t` (3.1): `[INSTANCE:] COMM-PID [CPU] SECONDS.NANOS: EVENT: FIELDS`.
"""

from __future__ import annotations

import bisect
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

LINE = re.compile(r"^(?:\S+:)?\s*(?P<comm>.*?)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s+(?:\S+\s+)?"
                  r"(?P<ts>\d+\.\d+):\s+(?P<event>\w+):\s*(?P<rest>.*)$")
SWITCH = re.compile(r"^(?P<pcomm>.*):(?P<ppid>\d+) \[(?P<pprio>-?\d+)\] (?P<state>\S+) ==> "
                    r"(?P<ncomm>.*):(?P<npid>\d+) \[(?P<nprio>-?\d+)\]$")
WAKING = re.compile(r"comm=(?P<comm>.*) pid=(?P<pid>\d+) prio=(?P<prio>-?\d+) target_cpu=(?P<cpu>\d+)")
WAKEUP = re.compile(r"^(?P<comm>.*):(?P<pid>\d+) \[(?P<prio>-?\d+)\] (?:success=\d+ )?CPU:(?P<cpu>\d+)")
IRQ_ENTRY = re.compile(r"irq=(?P<irq>\d+) name=(?P<name>\S+)")
IRQ_EXIT = re.compile(r"irq=(?P<irq>\d+)")
SOFTIRQ = re.compile(r"vec=(?P<vec>\d+) \[action=(?P<name>\w+)\]")
WORK = re.compile(r"work struct (?P<work>0x[0-9a-f]+): function (?P<fn>\S+)")


class TraceError(Exception):
    """The host trace cannot be read: one line."""


UNKNOWN_PRIO = -1000       # a thread the trace shows running before any event gave its priority


def policy_words(prio: int) -> str:
    """The kernel's priority as sched_switch prints it, in a user's words: below 100 a real-time thread (FIFO or
    RR, which the trace does not tell apart) at 99 - prio, else a normal one at nice prio - 120."""
    if prio == UNKNOWN_PRIO:
        return "priority unknown"
    if prio < 0:
        return "deadline"
    if prio < 100:
        return f"rt {99 - prio}"
    return f"nice {prio - 120}"


@dataclass(frozen=True)
class Thread:
    pid: int
    comm: str
    prio: int

    @property
    def idle(self) -> bool:
        return self.pid == 0

    def words(self) -> str:
        return f"{self.comm} (pid {self.pid}, {policy_words(self.prio)})"


@dataclass(frozen=True)
class Span:
    """An IRQ handler, a softirq or a work item on one CPU, from its entry to its exit."""

    start: float
    end: float
    name: str


@dataclass
class CpuTimeline:
    """One CPU: who ran on it from when (`at`, `who`), and its spans, each sorted by time.

    A change is a sched_switch, or inferred where a line's own task (its COMM-PID) is not the one the last switch
    put there: the trace misses a few switches (678 of 485,354 lines of a 1 kHz run on the 2-vCPU VM), and then
    the change happened somewhere after the CPU's line before (`since`) and at the latest at the line (`at`)."""

    cpu: int
    first: float | None = None
    last: float | None = None
    at: list[float] = field(default_factory=list)
    since: list[float] = field(default_factory=list)
    who: list[Thread] = field(default_factory=list)
    inferred: int = 0
    irqs: list[Span] = field(default_factory=list)
    softirqs: list[Span] = field(default_factory=list)
    works: list[Span] = field(default_factory=list)

    def change(self, at: float, since: float, who: Thread) -> None:
        self.at.append(at)
        self.since.append(since)
        self.who.append(who)

    def segments(self, a: float, b: float) -> list[tuple[float, float, Thread | None]]:
        """[a, b] as (start, end, thread) pieces; None where the trace does not say who ran (before the CPU's first
        change, or between a missed switch's bounds)."""
        out: list[tuple[float, float, Thread | None]] = []
        i = bisect.bisect_right(self.at, a)
        cur: Thread | None = self.who[i - 1] if i > 0 else None
        t = a
        while i < len(self.at) and self.since[i] < b:
            if self.since[i] > t:
                out.append((t, self.since[i], cur))
                t = self.since[i]
            if self.at[i] > t:
                out.append((t, min(self.at[i], b), None))
                t = min(self.at[i], b)
            cur = self.who[i]
            i += 1
        if b > t:
            out.append((t, b, cur))
        return out

    def run_around(self, t: float) -> tuple[float, float] | None:
        """How long the thread on the CPU at `t` ran there without a switch, in seconds: at least (from its change
        to the next one's `since`) and at most (from its change's `since` to the next one's `at`); None where the
        trace has no change before or after `t`."""
        i = bisect.bisect_right(self.at, t)
        if i == 0 or i >= len(self.at):
            return None
        return self.since[i] - self.at[i - 1], self.at[i] - self.since[i - 1]


@dataclass
class Wake:
    at: float
    cpu: int          # the CPU that woke it
    target: int       # the CPU it was to run on
    kind: str         # sched_waking or sched_wakeup
    by: str = ""      # the task on the waking CPU (a thread that woke it, or the one an interrupt came in on)


@dataclass
class SchedTrace:
    cpus: dict[int, CpuTimeline] = field(default_factory=dict)
    wakes: dict[int, list[Wake]] = field(default_factory=dict)
    lines: int = 0
    skipped: int = 0

    def cpu(self, n: int) -> CpuTimeline:
        return self.cpus.setdefault(n, CpuTimeline(n))

    def runs_of(self, pid: int) -> list[tuple[float, int]]:
        """(time, CPU) of every change to `pid`, in time order."""
        out = [(tl.at[k], tl.cpu) for tl in self.cpus.values() for k, th in enumerate(tl.who) if th.pid == pid]
        return sorted(out)


def parse_report(text: str | Iterable[str], keep: Callable[[float], bool] | None = None) -> SchedTrace:
    """`trace-cmd report -t`'s text (or its lines) as a SchedTrace. Lines of other events, and the file's header
    lines, are skipped and counted; an entry with no exit (the ring began or ended inside it) is left out. With
    `keep`, only the lines at times it keeps are read into the timelines (each CPU's `first` is over every line):
    a 1 kHz run's trace is a million lines, and an explanation needs the stretches around its events."""
    tr = SchedTrace()
    lines = text.splitlines() if isinstance(text, str) else text
    open_irq: dict[tuple[int, int], tuple[float, str]] = {}
    open_soft: dict[tuple[int, int], tuple[float, str]] = {}
    open_work: dict[tuple[int, str], tuple[float, str]] = {}
    prio: dict[int, int] = {0: 120}
    for line in lines:
        m = LINE.match(line)
        if m is None:
            tr.skipped += 1
            continue
        tr.lines += 1
        cpu, ts, ev, rest = int(m["cpu"]), float(m["ts"]), m["event"], m["rest"]
        tl = tr.cpu(cpu)
        if keep is not None and not keep(ts):
            if tl.first is None:
                tl.first = ts
            continue
        pid = int(m["pid"])
        if not tl.who or tl.who[-1].pid != pid:       # a switch the trace missed (or the CPU's first line)
            tl.change(ts, tl.last if tl.last is not None else ts, Thread(pid, m["comm"], prio.get(pid, UNKNOWN_PRIO)))
            tl.inferred += tl.last is not None
        if tl.first is None:
            tl.first = ts
        tl.last = ts
        if ev == "sched_switch" and (s := SWITCH.match(rest)):
            prio[int(s["ppid"])] = int(s["pprio"])
            prio[int(s["npid"])] = int(s["nprio"])
            tl.change(ts, ts, Thread(int(s["npid"]), s["ncomm"], int(s["nprio"])))
        elif ev in ("sched_waking", "sched_wakeup") and (w := (WAKING if ev == "sched_waking" else WAKEUP).search(rest)):
            prio[int(w["pid"])] = int(w["prio"])
            tr.wakes.setdefault(int(w["pid"]), []).append(Wake(ts, cpu, int(w["cpu"]), ev, f"{m['comm']} (pid {pid})"))
        elif ev == "irq_handler_entry" and (i := IRQ_ENTRY.search(rest)):
            open_irq[(cpu, int(i["irq"]))] = (ts, f"irq {i['irq']} {i['name']}")
        elif ev == "irq_handler_exit" and (i := IRQ_EXIT.search(rest)):
            if (o := open_irq.pop((cpu, int(i["irq"])), None)) is not None:
                tl.irqs.append(Span(o[0], ts, o[1]))
        elif ev == "softirq_entry" and (v := SOFTIRQ.search(rest)):
            open_soft[(cpu, int(v["vec"]))] = (ts, v["name"])
        elif ev == "softirq_exit" and (v := SOFTIRQ.search(rest)):
            if (o := open_soft.pop((cpu, int(v["vec"])), None)) is not None:
                tl.softirqs.append(Span(o[0], ts, o[1]))
        elif ev == "workqueue_execute_start" and (k := WORK.search(rest)):
            open_work[(cpu, k["work"])] = (ts, k["fn"])
        elif ev == "workqueue_execute_end" and (k := WORK.search(rest)):
            if (o := open_work.pop((cpu, k["work"]), None)) is not None:
                tl.works.append(Span(o[0], ts, o[1]))
    # trace-cmd report merges the CPUs in time order; each CPU's own list is in order already
    for tl in tr.cpus.values():
        for spans in (tl.irqs, tl.softirqs, tl.works):
            spans.sort(key=lambda s: s.start)
    return tr


def windows_keep(windows: list[tuple[float, float]]) -> Callable[[float], bool]:
    """`keep` for parse_report: the times inside any of `windows` ((start, end) pairs)."""
    merged: list[list[float]] = []
    for a, b in sorted(windows):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    starts = [w[0] for w in merged]

    def keep(t: float) -> bool:
        i = bisect.bisect_right(starts, t)
        return i > 0 and t <= merged[i - 1][1]
    return keep


def read_trace(path: Path, keep: Callable[[float], bool] | None = None) -> SchedTrace:
    """A trace file read through `trace-cmd report -t` (nanosecond timestamps), the one reader of its binary
    format, its lines read as they come (TraceError: one line)."""
    if shutil.which("trace-cmd") is None:
        raise TraceError("trace-cmd is not installed (Debian: apt-get install trace-cmd): it reads the host trace")
    with subprocess.Popen(["trace-cmd", "report", "-t", "-i", str(path)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, errors="replace") as proc:
        assert proc.stdout is not None and proc.stderr is not None
        tr = parse_report(proc.stdout, keep)
        err = proc.stderr.read()
    if proc.returncode != 0:
        raise TraceError(f"trace-cmd report {path}: {' '.join(err.split())[:200] or 'failed'}")
    return tr
