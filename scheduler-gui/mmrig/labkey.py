"""`mmrig lab key`: the instructor's answer key of docs/lab.md, every figure computed from runs made for it.

The key runs what its answers need on the virtual bench, through the `mmrig` command line in a subprocess
(mmanalysis must not import the bench or the scheduler: docs/architecture.md, "Import rules"):

- lockstep (`--unpaced`) where the answer must not depend on the host: the executor alone, mixed 1 and 2
  ticks ahead (tick-aligned and free-running generation), and the two executor runs of step 5 (`--trace`);
- paced where the question is about the PC: normal mode, and mixed 2 ticks ahead idle and under heavy load
  (the propagation delay and slack the load can move).

A paced run invalid by bench lag alone (a host stall), or any run that ended in a rig error, is run once
more; an answer whose run is still invalid says so instead of giving figures. `mmrig proto sizes` gives the
SCHEDULE frame's line time. The Markdown written has one section per question (Q1..Q11) and names the
command and the runs it came from, so the key is regenerated whenever the rig changes.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Callable

import numpy as np

from mmanalysis.latstats import measured

from mmrig.experiments import BY_NAME

QUESTIONS = tuple(f"Q{i}" for i in range(1, 12))


@dataclass(frozen=True)
class KeyRun:
    """One run the key makes: its name (the handout's), `mmrig run` options, lockstep or paced."""
    name: str
    options: tuple[str, ...]
    lockstep: bool
    count: int | None = None      # None: the key's --count; step 5's runs are the handout's 60 events

    @classmethod
    def of(cls, experiment: str, lockstep: bool, name: str | None = None) -> "KeyRun":
        """A run of one of the paper's experiments (mmrig.experiments), under its own name unless NAME."""
        return cls(name or experiment, BY_NAME[experiment].run_options(), lockstep)

    def argv(self, out: Path, count: int) -> list[str]:
        n = self.count if self.count is not None else count
        return ["run", *self.options, "--count", str(min(n, count)), "--quiet", "--force", "-o", str(out / self.name),
                *(["--unpaced"] if self.lockstep else [])]


# Lockstep where the answer must not depend on the host, paced where the question is about the PC.
RUNS: tuple[KeyRun, ...] = (
    KeyRun.of("exp1-verification", lockstep=True),
    KeyRun.of("exp2-normal", lockstep=False),
    KeyRun.of("exp3-mixed-1ahead", lockstep=True),
    KeyRun.of("exp3b-mixed-1ahead-free", lockstep=True),
    KeyRun.of("exp4-mixed-2ahead", lockstep=True),
    # experiment 4 paced: the idle side of Q9's heavy load, on the same host as experiment 5
    KeyRun.of("exp4-mixed-2ahead", lockstep=False, name="exp4p-mixed-2ahead-paced"),
    KeyRun.of("exp5-mixed-2ahead-load", lockstep=False),
    # step 5: task dispatch traced, the executor idle and under its own load
    KeyRun("inside-idle", ("--mode", "mixed", "--dispatch", "task", "--trace"), lockstep=True, count=60),
    KeyRun("inside-loaded", ("--mode", "mixed", "--dispatch", "task", "--trace", "--executor-load",
                             "cpu,periodic=10ms/2ms"), lockstep=True, count=60),
)

@dataclass
class Made:
    """A run the key made: its sidecar, its rows (mmanalysis.read_run), and how long it took."""
    run: KeyRun
    meta: dict[str, Any]
    df: Any
    wall_s: float
    tries: int
    command: str

    @property
    def valid(self) -> bool:
        return bool(self.meta.get("valid", True))

    @property
    def summary(self) -> dict[str, Any]:
        return self.meta.get("summary") or {}

    @cached_property
    def summary_row(self) -> dict[str, Any]:
        """The run's stats.summarize row, computed once: several answers read it (Q7, Q8, ...)."""
        from mmanalysis.reader import RunSet
        from mmanalysis.stats import summarize

        return summarize(RunSet(self.df, {self.run.name: self.meta})).iloc[0].to_dict()

    @cached_property
    def link(self):
        """The run's propagation.link_stats, computed once: several answers read it."""
        from mmanalysis.propagation import link_stats

        return link_stats(self.df, self.meta)


@dataclass
class Key:
    runs: dict[str, Made] = field(default_factory=dict)
    proto_sizes: str = ""
    timings: list[tuple[str, float]] = field(default_factory=list)


def mmrig_command() -> list[str]:
    """The `mmrig` command line of this interpreter (works in the checkout and installed alike)."""
    return [sys.executable, "-m", "mmrig"]


LEFT_FILES = (0, 1, 3)     # `mmrig` exit codes after which the run's files are there: 1 a gate (none asked), 3 invalid


def _run(argv: list[str], log: Callable[[str], None] | None, check: bool = True) -> subprocess.CompletedProcess:
    if log:
        log("mmrig " + " ".join(argv))
    r = subprocess.run([*mmrig_command(), *argv], capture_output=True, text=True)
    if check and r.returncode not in LEFT_FILES:
        raise RuntimeError(f"mmrig {' '.join(argv)} failed ({r.returncode}):\n{r.stderr[-2000:]}")
    return r


TRIES = 2     # a run is made at most twice: after a rig error (exit 2), or paced and invalid by bench lag alone


def make_run(run: KeyRun, out: Path, count: int, log: Callable[[str], None] | None = print) -> Made:
    from mmanalysis.reader import read_run

    t0 = time.monotonic()
    argv = run.argv(out, count)
    for attempt in range(1, TRIES + 1):
        r = _run(argv, log, check=attempt == TRIES)   # the last try's rig error raises there
        if r.returncode not in LEFT_FILES:
            # a rig error (the bench did not start or answer in time, e.g. on a machine busy with other work)
            if log:
                log(f"  {run.name}: rig error ({r.returncode}: {r.stderr.strip().splitlines()[-1:]}), running it again")
            continue
        meta = json.loads((out / f"{run.name}.json").read_text())
        codes = {x.get("code") for x in meta.get("invalid_reasons") or []}
        if meta.get("valid", True) or run.lockstep or codes != {"bench_lag"} or attempt == TRIES:
            break
        if log:
            log(f"  {run.name}: invalid by bench lag ({meta.get('invalid_reason')}), running it again")
    data = read_run(out / f"{run.name}.csv")
    return Made(run, meta, data.df, time.monotonic() - t0, attempt, "mmrig " + " ".join(argv))


def make_key(out: Path, count: int = 200, log: Callable[[str], None] | None = print) -> Key:
    out.mkdir(parents=True, exist_ok=True)
    key = Key()
    t0 = time.monotonic()
    key.proto_sizes = _run(["proto", "sizes", "--baud", "9600"], log).stdout
    key.timings.append(("mmrig proto sizes --baud 9600", time.monotonic() - t0))
    for run in RUNS:
        made = make_run(run, out, count, log)
        key.runs[run.name] = made
        key.timings.append((made.command, made.wall_s))
    return key


# --- the figures -------------------------------------------------------------------------------------------


def f(x: Any, spec: str = ".3f") -> str:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return "-"
    return "-" if v != v else format(v, spec)


def schedule_line_ms(proto_sizes: str) -> tuple[int, float]:
    """(wire bytes, ms at 9600 baud) of the SCHEDULE frame, from `mmrig proto sizes --baud 9600`."""
    for line in proto_sizes.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0] == "SCHEDULE":
            return int(cells[3]), float(cells[4])
    raise ValueError("no SCHEDULE line in `mmrig proto sizes`")


def link(made: Made):
    return made.link


def experiment_runs(runs: dict[str, Made]) -> list[Made]:
    """The key's valid runs of the five experiments (not step 5's traced `inside-*` runs)."""
    return [m for m in runs.values() if m.valid and not m.run.name.startswith("inside")]


def summary_row(made: Made) -> dict[str, Any]:
    return made.summary_row


def tail_events(made: Made) -> tuple[int, int, int, float | None, float | None]:
    """From the run's latency histogram (sidecar `histogram`): (tallest bin's count, bins holding 1 or 2
    events, events in them, their lowest and highest bin edge in us). On a linear count axis such a bar is at
    most 2 / tallest of the plot's height; on log counts it is a third of the way up or more."""
    h = made.meta.get("histogram") or {}
    counts = np.asarray(h.get("counts") or [], dtype=float)
    if not len(counts) or counts.max() == 0:
        return 0, 0, 0, None, None
    small = (counts > 0) & (counts <= 2)
    idx = np.flatnonzero(small)
    lo = float(idx[0] * h["bin_us"]) if len(idx) else None
    hi = float((idx[-1] + 1) * h["bin_us"]) if len(idx) else None
    return int(counts.max()), int(small.sum()), int(counts[small].sum()), lo, hi


def reasons(made: Made) -> str:
    if "reason" not in made.df:
        return "-"
    r = made.df.loc[made.df["outcome"].astype(str) != "ok", "reason"].dropna().astype(str).value_counts()
    return ", ".join(f"{k} {v}" for k, v in r.items()) or "none"


def slack_table(made: Made) -> dict[str, int]:
    """The notebook's slack table for one mixed run: every event, missed ones included."""
    df = made.df
    sl = df["slack_ticks"].astype(float)
    cls = np.where(sl.isna(), "no ACK / refused", np.where(sl <= 0, "slack <= 0", "slack > 0"))
    out: dict[str, int] = {}
    for c, o in zip(cls, df["outcome"].astype(str)):
        out[f"{c} / {o}"] = out.get(f"{c} / {o}", 0) + 1
    return out


def invalid_words(made: Made) -> str | None:
    if made.valid:
        return None
    return f"no valid run ({made.run.name}: {made.meta.get('invalid_reason')}): not answered from this run"


def priority_words(made: Made) -> str:
    host = (made.meta.get("bench") or {}).get("host") or {}
    load = made.meta.get("load") or {}
    return (f"bench scheduling {host.get('sched', '?')}, memory locked {host.get('mlock', '?')}, "
            f"bench priority fallback {load.get('bench_priority', '?')}")


# --- the Markdown --------------------------------------------------------------------------------------------


def render(key: Key, command: str, count: int) -> str:
    from mmanalysis.paper import Observed, verdict

    R = key.runs
    L: list[str] = []
    add = L.append
    git = subprocess.run(["git", "describe", "--always", "--dirty", "--tags"], capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parent).stdout.strip() or "?"
    add("# Lab answer key (generated: do not edit by hand)")
    add("")
    add(f"Made by `{command}` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, checkout `{git}`, host "
        f"{platform.node()} ({os.cpu_count()} CPUs, {platform.release()}), {count} events per experiment. Every "
        "figure below is computed from the runs listed at the end; regenerate the key whenever the rig changes. "
        "Lockstep runs give the same figures on any host; paced runs (normal mode, mixed 2 ahead idle and "
        "loaded) measure this PC, so a student's paced figures differ from these (docs/lab-instructor.md, "
        "\"Normal differences\").")
    add("")
    add("Runs: " + "; ".join(f"`{m.run.name}` ({'lockstep' if m.run.lockstep else 'paced'}, "
                              f"{'valid' if m.valid else 'INVALID'})" for m in R.values()))
    add("")

    # Q1
    add("## Q1. Mean and variance against the paper")
    add("")
    add("| experiment | run | n | mean us | var us² | p99 us | max us | paper | verdict |")
    add("|---|---|---|---|---|---|---|---|---|")
    from mmanalysis.latstats import variance_text
    for name in (run.name for run in RUNS if run.name in BY_NAME):    # the paper's experiments, in the key's order
        paper = BY_NAME[name].paper
        m = R[name]
        s = m.summary
        words = invalid_words(m) or verdict(paper, Observed.from_summary(s, m.meta))
        add(f"| {paper.section} {paper.experiment} | `{name}` | {s.get('n')} | {f(s.get('mean_us'))} | "
            f"{variance_text(s.get('variance_us2'))} | {f(s.get('p99_us'))} | {f(s.get('max_us'))} | "
            f"{paper.short} | {words} |")
    add("")
    add("Expected answer: on the bench every mixed and verification mean is far below the paper's and the variance "
        "is 0 (one dispatch path on an exact simulated clock); normal mode is well below the paper's 14.5 ms but "
        "orders of magnitude above mixed mode, with a max far above its mean. For a 1 ms hard deadline the max "
        "(and p99) decide, not the mean: a low mean with one event over 1 ms misses the deadline; a low "
        "variance says little about the single worst event.")
    add("")

    # Q2
    m2 = R["exp2-normal"]
    add("## Q2. Normal mode: where the milliseconds come from")
    add("")
    if invalid_words(m2):
        add(invalid_words(m2))
    else:
        s = m2.summary
        add(f"`exp2-normal` (paced, this PC): mean {f(s.get('mean_us'))} us, p50 {f(s.get('p50_us'))} us, "
            f"p99 {f(s.get('p99_us'))} us, max {f(s.get('max_us'))} us; outcomes {s.get('outcomes')}; "
            f"{priority_words(m2)}.")
        b = m2.meta.get("budget") or {}
        parts = b.get("parts") or {}
        if parts:
            add("")
            add("Latency budget (sidecar `budget`, us): " + "; ".join(
                f"{k.removesuffix('_us')} p50 {f(v.get('p50'), '.1f')}, p99 {f(v.get('p99'), '.1f')}, "
                f"max {f(v.get('max'), '.1f')}" for k, v in parts.items())
                + f". Largest part at p50: `{b.get('largest_p50')}`.")
    add("")
    add("Expected answer: the PC's operating system wakes the firing thread late (`wakeup`: timer slack, the "
        "scheduler, other processes) and the PC only knows when a tick began from a TIMECODE frame that arrived "
        "over the serial line (`est_error`); the write to the line adds `line`. The paper's 14.5 ms came from a "
        "Pentium III under Windows NT firing from a GUI timer (the paper gives no breakdown). A faster PC "
        "shortens the work but not the wake-up lateness or the "
        "uncertainty of the tick start: it does not give a guarantee, only a different distribution.")
    add("")

    # Q3
    add("## Q3. Which comparison differs most")
    add("")
    m4, m4p, m5 = R["exp4-mixed-2ahead"], R["exp4p-mixed-2ahead-paced"], R["exp5-mixed-2ahead-load"]
    m3, m3b = R["exp3-mixed-1ahead"], R["exp3b-mixed-1ahead-free"]
    lines = []
    if m2.valid and m4.valid:
        lines.append(f"normal vs mixed 2 ahead: mean {f(m2.summary.get('mean_us'))} us vs "
                     f"{f(m4.summary.get('mean_us'))} us "
                     f"(x{f((m2.summary.get('mean_us') or 0) / (m4.summary.get('mean_us') or 1), '.0f')}), max "
                     f"{f(m2.summary.get('max_us'))} vs {f(m4.summary.get('max_us'))} us")
    for a in (m3, m3b):
        if a.valid and m4.valid:
            lines.append(f"1 vs 2 ticks ahead ({a.meta['config'].get('generation')}): on time "
                         f"{f(100 * summary_row(a)['ok_share'], '.1f')} % vs "
                         f"{f(100 * summary_row(m4)['ok_share'], '.1f')} %")
    if m4p.valid and m5.valid:
        lines.append(f"idle vs loaded (mixed 2 ahead, paced): mean {f(m4p.summary.get('mean_us'))} us vs "
                     f"{f(m5.summary.get('mean_us'))} us (difference "
                     f"{f((m5.summary.get('mean_us') or 0) - (m4p.summary.get('mean_us') or 0))} us)")
    else:
        lines.append("idle vs loaded: " + (invalid_words(m4p) or invalid_words(m5) or "-"))
    for x in lines:
        add(f"- {x}")
    add("")
    add("Expected answer: normal vs mixed is the largest difference (hundreds of us and a long tail against a "
        "constant microsecond dispatch); 1 vs 2 ahead changes whether events are on time at all when generation is "
        "free-running; idle vs loaded is the smallest (no change of the mixed latency on the bench). The guarantee "
        "comes from the executor firing from its own copy of the timecode; the PC only has to deliver the "
        "SCHEDULE in time.")
    add("")

    # Q4
    add("## Q4. p99 from the CDF")
    add("")
    add("| run | min us | p50 us | p99 us | max us | mean us |")
    add("|---|---|---|---|---|---|")
    for m in experiment_runs(R):
        s = m.summary
        add(f"| `{m.run.name}` | {f(s.get('min_us'))} | {f(s.get('p50_us'))} | {f(s.get('p99_us'))} | "
            f"{f(s.get('max_us'))} | {f(s.get('mean_us'))} |")
    add("")
    add("Expected answer: a log time axis shows microseconds (mixed) and hundreds of microseconds to milliseconds "
        "(normal) on one figure; the max is the event a deadline is judged on, the min the floor of the path; the "
        "mean hides both.")
    add("")

    # Q5
    add("## Q5. What a linear count axis hides")
    add("")
    for m in experiment_runs(R):
        tall, bins, n, lo, hi = tail_events(m)
        bw = (m.meta.get("histogram") or {}).get("bin_us")
        add(f"- `{m.run.name}` ({bw} us bins): tallest bin {tall} events; {bins} bin(s) with only 1 or 2 events, "
            f"{n} event(s) in them" + (f", between {f(lo, '.0f')} and {f(hi, '.0f')} us" if lo is not None else "")
            + f"; max {f(m.summary.get('max_us'))} us (n = {m.summary.get('n')})")
    add("")
    add("Expected answer: the few slow events of normal mode (the tail towards the max) are bars of height 1 or 2 "
        "next to a bin of dozens; on a linear axis they are invisible, on log counts they show. On the bench the "
        "mixed runs have one bin only: nothing to hide.")
    add("")

    # Q6
    add("## Q6. Propagation delay and slack, 1 vs 2 ticks ahead")
    add("")
    tick_ms = float(m4.meta["timebase"]["tick_counts"]) / float(m4.meta["timebase"]["timer_hz"]) * 1e3
    add(f"One tick is {f(tick_ms)} ms.")
    add("")
    for m in (m3b, m3, m4, m4p):
        if not m.valid:
            add(f"- {invalid_words(m)}")
            continue
        ls = link(m)
        add(f"- `{m.run.name}` ({'lockstep' if m.run.lockstep else 'paced'}, generation "
            f"{m.meta['config'].get('generation')}): on time {f(100 * summary_row(m)['ok_share'], '.1f')} %, "
            f"{ls.text()}; reasons of the events not ok: {reasons(m)}")
        add(f"  - slack table (notebook, section 5): {slack_table(m)}")
    sl = (m3b.meta.get("slack") or {})
    if sl:
        add(f"- `exp3b-mixed-1ahead-free`: ok events were created at tick phase "
            f"{f((sl.get('ok') or {}).get('created_phase_min'), '.2f')}.."
            f"{f((sl.get('ok') or {}).get('created_phase_max'), '.2f')}"
            f" (the missed ones late in their tick: the notebook's missed-phase figure)")
    add("")
    add("Expected answer: scheduled 1 tick ahead, an event created at phase p of its tick leaves only (1 - p) of a "
        "tick for the SCHEDULE to reach the executor; with free-running generation p is spread over the tick, so "
        "the events created late in a tick (and every one created after the next tick began but before its "
        "TIMECODE arrived) miss: about half, as in the paper. 2 ticks ahead leaves at least one whole tick: "
        "slack stays positive, nothing is missed. Tick-aligned generation (created right after the TIMECODE) "
        "is not the paper's method and is on time even 1 ahead.")
    add("")

    # Q7
    wire, ms = schedule_line_ms(key.proto_sizes)
    add("## Q7. The SCHEDULE frame on the 9600-baud line")
    add("")
    add(f"`mmrig proto sizes --baud 9600`: SCHEDULE is {wire} bytes on the wire, {f(ms)} ms at 9600 baud.")
    for m in (m4, m4p):
        if m.valid:
            ls = link(m)
            add(f"- `{m.run.name}`: mean propagation {f(ls.prop_mean_ms, '.2f')} ms, of which the line time is "
                f"{f(100 * ms / ls.prop_mean_ms if ls.prop_mean_ms else float('nan'), '.0f')} %")
    add("")
    add("Expected answer: the line time is most of the propagation delay on the bench (the rest: the PC waiting "
        "for its moment to create the event, the executor's ACK); on a loaded or slow PC the scheduling part grows.")
    add("")

    # Q8
    add("## Q8. Jitter")
    add("")
    rows = [(m.run.name, summary_row(m)) for m in experiment_runs(R)]
    rows = [(n, r) for n, r in rows if r.get("jitter_max_us") == r.get("jitter_max_us")]
    if rows:
        jn, jr = max(rows, key=lambda x: x[1]["jitter_max_us"])
        mn, mr = max(rows, key=lambda x: x[1]["mean_us"] if x[1]["mean_us"] == x[1]["mean_us"] else -1)
        add("| run | max jitter us | mean jitter us | mean latency us |")
        add("|---|---|---|---|")
        for n, r in rows:
            add(f"| `{n}` | {f(r['jitter_max_us'])} | {f(r['jitter_mean_us'])} | {f(r['mean_us'])} |")
        add("")
        add(f"Largest max jitter: `{jn}` ({f(jr['jitter_max_us'])} us); largest mean: `{mn}` "
            f"({f(mr['mean_us'])} us){': the same run' if jn == mn else ': a different run'}.")
    add("")
    add("Expected answer: normal mode has the largest jitter. A constant delay (large mean, no jitter) can be "
        "compensated by scheduling earlier; jitter cannot. Whether a large constant latency is acceptable "
        "depends on the deadline: it must still be under it.")
    add("")

    # Q9
    add("## Q9. Heavy PC load")
    add("")
    if m4p.valid and m5.valid:
        l4, l5 = link(m4p), link(m5)
        add(f"- idle (`exp4p-mixed-2ahead-paced`): mean {f(m4p.summary.get('mean_us'))} us; {l4.text()}")
        add(f"- loaded (`exp5-mixed-2ahead-load`): mean {f(m5.summary.get('mean_us'))} us; {l5.text()}; "
            f"{priority_words(m5)}; load: `{' '.join((m5.meta.get('load') or {}).get('command') or [])}`")
        if l4.prop_mean_ms is not None and l5.prop_mean_ms is not None:
            add(f"- the load added {f(l5.prop_mean_ms - l4.prop_mean_ms, '+.2f')} ms to the mean propagation, "
                f"{f((l5.prop_max_ms or 0) - (l4.prop_max_ms or 0), '+.2f')} ms to its max; slack min "
                f"{f(l4.slack_min_ticks)} -> {f(l5.slack_min_ticks)} ticks")
    else:
        add(invalid_words(m4p) or invalid_words(m5) or "-")
    add("")
    add("Expected answer: the executor keeps the timing; the PC's load only delays the SCHEDULE frames. An event "
        "is missed anyway only if the PC delays a SCHEDULE past its tick (more than the slack: a stall of over "
        "a tick), or loses the link.")
    add("")

    # Q10
    add("## Q10. Task dispatch under the executor's own load (step 5)")
    add("")
    for name in ("inside-idle", "inside-loaded"):
        m = R[name]
        lat = measured(m.df)["latency_us"].to_numpy(dtype=float)
        if not len(lat):
            add(f"- `{name}`: no measured event")
            continue
        add(f"- `{name}`: n {len(lat)}, min {f(lat.min(), '.1f')} us, p50 {f(np.median(lat), '.1f')} us, max "
            f"{f(lat.max(), '.1f')} us; under 100 us: {int((lat < 100).sum())}, 100 us..2.1 ms: "
            f"{int(((lat >= 100) & (lat < 2100)).sum())}")
    add("")
    add("Expected answer: a tick edge outside a `load_periodic` bar lets the `tc` task run at once (the spike); "
        "one inside a bar makes it wait until the 2 ms load job ends (the shelf up to 2 ms). ISR dispatch fires "
        "in the interrupt, which preempts any task: no shelf.")
    add("")

    # Q11
    add("## Q11. Context switch and where the idle executor's time goes")
    add("")
    for name in ("inside-idle", "inside-loaded"):
        p = R[name].meta.get("executor_profile") or {}
        if "error" in p or not p:
            add(f"- `{name}`: no executor profile ({p.get('error', 'missing')})")
            continue
        cs = p.get("context_switch") or {}
        cat = p.get("by_category") or {}
        calls = "; ".join(f"{c.get('call')} {f(c.get('before_us'))} -> {f(c.get('after_us'))} us "
                          f"(+{f(c.get('difference_us'))} us)" for c in p.get("service_calls") or [])
        add(f"- `{name}`: context switch "
            + (f"{f(cs.get('us'))} us" if cs.get("us") is not None else f"not measured ({cs.get('why')})")
            + f"; restoring a task {f(cs.get('restore_us'))} us (n {cs.get('restore_n')}); service calls: "
            + (calls or "none") + " (paper: 14.245 us); time by category: "
            + ", ".join(f"{k} {f(100 * v, '.2f')} %" for k, v in cat.items()))
    add("")
    add("Expected answer: compare the context switch with the paper's 14.245 us (same ATmega at 16 MHz: of the "
        "same order); idle, almost all of the executor's time is idle (asleep), tick processing, dispatch and "
        "serial work take a few percent at most.")
    add("")

    add("## Runs and compute time")
    add("")
    add("| command | wall s | tries |")
    add("|---|---|---|")
    tries = {m.command: m.tries for m in R.values()}
    for cmd, s in key.timings:
        add(f"| `{cmd}` | {f(s, '.1f')} | {tries.get(cmd, 1)} |")
    add("")
    return "\n".join(L)


def cmd_lab_key(args: Any) -> int:
    out: Path = args.out
    runs = args.runs or out.with_suffix("").with_name(out.stem + "-runs")
    t0 = time.monotonic()
    log = None if args.quiet else (lambda s: print(s, file=sys.stderr, flush=True))
    try:
        key = make_key(runs, count=args.count, log=log)
    except (RuntimeError, OSError, ValueError) as exc:
        print(f"lab key: {exc}", file=sys.stderr)
        return 2
    command = "mmrig lab key" + (f" --count {args.count}" if args.count != 200 else "")
    text = render(key, command, args.count)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text + "\n")
    print(f"wrote {out} (answer key, Q1-Q11; runs in {runs}; {time.monotonic() - t0:.0f} s)")
    return 0


def add_lab_key_parser(subparsers) -> None:
    """`mmrig lab key`: registered by mmrig.cli beside report and profile."""
    lab = subparsers.add_parser("lab", help="the classroom lab (docs/lab.md): the instructor's answer key")
    sub = lab.add_subparsers(dest="lab_command", required=True)
    p = sub.add_parser("key", help="run what docs/lab.md's questions need on the bench and write the answer key",
                       description="Runs the lab's experiments on the virtual bench (lockstep where the answer must "
                                   "not depend on the host, paced where the question is about the PC) through "
                                   "`mmrig run`, then writes the answer key (Markdown) with every figure computed "
                                   "from those runs. About 2-3 minutes at 200 events.")
    p.add_argument("--out", type=Path, default=Path("lab-key.md"), help="the key (default lab-key.md)")
    p.add_argument("--runs", type=Path, default=None, help="where the runs go (default: OUT's name + -runs)")
    p.add_argument("--count", type=int, default=200, help="events per experiment (default 200; step 5's at most 60)")
    p.add_argument("--quiet", "-q", action="store_true", help="no line per run")
    p.set_defaults(func=cmd_lab_key)
