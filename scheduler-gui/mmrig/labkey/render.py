"""The lab key's Markdown (mmrig.labkey): a header naming the command, the checkout and the runs, one section
per question of docs/lab.md (Q1..Q11: the figures from the runs, then the expected answer), and the runs'
compute time."""

from __future__ import annotations

import os
import platform
import subprocess
import time
from pathlib import Path
from typing import Callable

import numpy as np

from mmanalysis.latstats import measured, variance_text
from mmanalysis.paper import Observed, verdict

from mmrig.experiments import BY_NAME
from mmrig.labkey.figures import (experiment_runs, f, invalid_words, priority_words, reasons, schedule_line_ms,
                                  slack_table, tail_events)
from mmrig.labkey.runs import RUNS, Key, Made

def section(title: str, body: list[str], expected: str) -> list[str]:
    """One question's section: its title, the figures (BODY's lines), the expected answer."""
    return [f"## {title}", "", *body, "", f"Expected answer: {expected}", ""]


def lockstep_or_paced(m: Made) -> str:
    return "lockstep" if m.run.lockstep else "paced"


def header(key: Key, command: str, count: int) -> list[str]:
    git = subprocess.run(["git", "describe", "--always", "--dirty", "--tags"], capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parent).stdout.strip() or "?"
    return ["# Lab answer key (generated: do not edit by hand)", "",
            f"Made by `{command}` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, checkout `{git}`, host "
            f"{platform.node()} ({os.cpu_count()} CPUs, {platform.release()}), {count} events per experiment. Every "
            "figure below is computed from the runs listed at the end; regenerate the key whenever the rig changes. "
            "Lockstep runs give the same figures on any host; paced runs (normal mode, mixed 2 ahead idle and "
            "loaded) measure this PC, so a student's paced figures differ from these (docs/lab-instructor.md, "
            "\"Normal differences\").", "",
            "Runs: " + "; ".join(f"`{m.run.name}` ({lockstep_or_paced(m)}, {'valid' if m.valid else 'INVALID'})"
                                 for m in key.runs.values()), ""]


def q1_mean_and_variance(key: Key) -> list[str]:
    body = ["| experiment | run | n | mean us | var us² | p99 us | max us | paper | verdict |",
            "|---|---|---|---|---|---|---|---|---|"]
    for name in (run.name for run in RUNS if run.name in BY_NAME):    # the paper's experiments, in the key's order
        paper = BY_NAME[name].paper
        m = key.runs[name]
        s = m.summary
        words = invalid_words(m) or verdict(paper, Observed.from_summary(s, m.meta))
        body.append(f"| {paper.section} {paper.experiment} | `{name}` | {s.get('n')} | {f(s.get('mean_us'))} | "
                    f"{variance_text(s.get('variance_us2'))} | {f(s.get('p99_us'))} | {f(s.get('max_us'))} | "
                    f"{paper.short} | {words} |")
    return section("Q1. Mean and variance against the paper", body,
                   "on the bench every mixed and verification mean is far below the paper's and the variance "
                   "is 0 (one dispatch path on an exact simulated clock); normal mode is well below the paper's 14.5 "
                   "ms but orders of magnitude above mixed mode, with a max far above its mean. For a 1 ms hard "
                   "deadline the max (and p99) decide, not the mean: a low mean with one event over 1 ms misses the "
                   "deadline; a low variance says little about the single worst event.")


def q2_normal_mode(key: Key) -> list[str]:
    m2 = key.runs["exp2-normal"]
    body: list[str] = []
    if invalid_words(m2):
        body.append(invalid_words(m2))
    else:
        s = m2.summary
        body.append(f"`exp2-normal` (paced, this PC): mean {f(s.get('mean_us'))} us, p50 {f(s.get('p50_us'))} us, "
                    f"p99 {f(s.get('p99_us'))} us, max {f(s.get('max_us'))} us; outcomes {s.get('outcomes')}; "
                    f"{priority_words(m2)}.")
        b = m2.meta.get("budget") or {}
        parts = b.get("parts") or {}
        if parts:
            body += ["", "Latency budget (sidecar `budget`, us): " + "; ".join(
                f"{k.removesuffix('_us')} p50 {f(v.get('p50'), '.1f')}, p99 {f(v.get('p99'), '.1f')}, "
                f"max {f(v.get('max'), '.1f')}" for k, v in parts.items())
                + f". Largest part at p50: `{b.get('largest_p50')}`."]
    return section("Q2. Normal mode: where the milliseconds come from", body,
                   "the PC's operating system wakes the firing thread late (`wakeup`: timer slack, the "
                   "scheduler, other processes) and the PC only knows when a tick began from a TIMECODE frame that "
                   "arrived over the serial line (`est_error`); the write to the line adds `line`. The paper's 14.5 "
                   "ms came from a Pentium III under Windows NT firing from a GUI timer (the paper gives no "
                   "breakdown). A faster PC shortens the work but not the wake-up lateness or the uncertainty of the "
                   "tick start: it does not give a guarantee, only a different distribution.")


def q3_largest_difference(key: Key) -> list[str]:
    R = key.runs
    m2, m4, m4p, m5 = R["exp2-normal"], R["exp4-mixed-2ahead"], R["exp4p-mixed-2ahead-paced"], R["exp5-mixed-2ahead-load"]
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
                         f"{f(100 * a.summary_row['ok_share'], '.1f')} % vs "
                         f"{f(100 * m4.summary_row['ok_share'], '.1f')} %")
    if m4p.valid and m5.valid:
        lines.append(f"idle vs loaded (mixed 2 ahead, paced): mean {f(m4p.summary.get('mean_us'))} us vs "
                     f"{f(m5.summary.get('mean_us'))} us (difference "
                     f"{f((m5.summary.get('mean_us') or 0) - (m4p.summary.get('mean_us') or 0))} us)")
    else:
        lines.append("idle vs loaded: " + (invalid_words(m4p) or invalid_words(m5) or "-"))
    return section("Q3. Which comparison differs most", [f"- {x}" for x in lines],
                   "normal vs mixed is the largest difference (hundreds of us and a long tail against a "
                   "constant microsecond dispatch); 1 vs 2 ahead changes whether events are on time at all when "
                   "generation is free-running; idle vs loaded is the smallest (no change of the mixed latency on "
                   "the bench). The guarantee comes from the executor firing from its own copy of the timecode; the "
                   "PC only has to deliver the SCHEDULE in time.")


def q4_p99_from_the_cdf(key: Key) -> list[str]:
    body = ["| run | min us | p50 us | p99 us | max us | mean us |", "|---|---|---|---|---|---|"]
    for m in experiment_runs(key.runs):
        s = m.summary
        body.append(f"| `{m.run.name}` | {f(s.get('min_us'))} | {f(s.get('p50_us'))} | {f(s.get('p99_us'))} | "
                    f"{f(s.get('max_us'))} | {f(s.get('mean_us'))} |")
    return section("Q4. p99 from the CDF", body,
                   "a log time axis shows microseconds (mixed) and hundreds of microseconds to milliseconds "
                   "(normal) on one figure; the max is the event a deadline is judged on, the min the floor of the "
                   "path; the mean hides both.")


def q5_linear_count_axis(key: Key) -> list[str]:
    body = []
    for m in experiment_runs(key.runs):
        tall, bins, n, lo, hi = tail_events(m)
        bw = (m.meta.get("histogram") or {}).get("bin_us")
        body.append(f"- `{m.run.name}` ({bw} us bins): tallest bin {tall} events; {bins} bin(s) with only 1 or 2 "
                    f"events, {n} event(s) in them"
                    + (f", between {f(lo, '.0f')} and {f(hi, '.0f')} us" if lo is not None else "")
                    + f"; max {f(m.summary.get('max_us'))} us (n = {m.summary.get('n')})")
    return section("Q5. What a linear count axis hides", body,
                   "the few slow events of normal mode (the tail towards the max) are bars of height 1 or 2 "
                   "next to a bin of dozens; on a linear axis they are invisible, on log counts they show. On the "
                   "bench the mixed runs have one bin only: nothing to hide.")


def q6_propagation_and_slack(key: Key) -> list[str]:
    R = key.runs
    m3, m3b, m4, m4p = R["exp3-mixed-1ahead"], R["exp3b-mixed-1ahead-free"], R["exp4-mixed-2ahead"], \
        R["exp4p-mixed-2ahead-paced"]
    tick_ms = float(m4.meta["timebase"]["tick_counts"]) / float(m4.meta["timebase"]["timer_hz"]) * 1e3
    body = [f"One tick is {f(tick_ms)} ms.", ""]
    for m in (m3b, m3, m4, m4p):
        if not m.valid:
            body.append(f"- {invalid_words(m)}")
            continue
        body.append(f"- `{m.run.name}` ({lockstep_or_paced(m)}, generation "
                    f"{m.meta['config'].get('generation')}): on time {f(100 * m.summary_row['ok_share'], '.1f')} %, "
                    f"{m.link.text()}; reasons of the events not ok: {reasons(m)}")
        body.append(f"  - slack table (notebook, section 5): {slack_table(m)}")
    sl = (m3b.meta.get("slack") or {})
    if sl:
        body.append(f"- `exp3b-mixed-1ahead-free`: ok events were created at tick phase "
                    f"{f((sl.get('ok') or {}).get('created_phase_min'), '.2f')}.."
                    f"{f((sl.get('ok') or {}).get('created_phase_max'), '.2f')}"
                    f" (the missed ones late in their tick: the notebook's missed-phase figure)")
    return section("Q6. Propagation delay and slack, 1 vs 2 ticks ahead", body,
                   "scheduled 1 tick ahead, an event created at phase p of its tick leaves only (1 - p) of a "
                   "tick for the SCHEDULE to reach the executor; with free-running generation p is spread over the "
                   "tick, so the events created late in a tick (and every one created after the next tick began but "
                   "before its TIMECODE arrived) miss: about half, as in the paper. 2 ticks ahead leaves at least "
                   "one whole tick: slack stays positive, nothing is missed. Tick-aligned generation (created right "
                   "after the TIMECODE) is not the paper's method and is on time even 1 ahead.")


def q7_schedule_on_the_line(key: Key) -> list[str]:
    wire, ms = schedule_line_ms(key.proto_sizes)
    body = [f"`mmrig proto sizes --baud 9600`: SCHEDULE is {wire} bytes on the wire, {f(ms)} ms at 9600 baud."]
    for m in (key.runs["exp4-mixed-2ahead"], key.runs["exp4p-mixed-2ahead-paced"]):
        if m.valid:
            ls = m.link
            body.append(f"- `{m.run.name}`: mean propagation {f(ls.prop_mean_ms, '.2f')} ms, of which the line "
                        f"time is {f(100 * ms / ls.prop_mean_ms if ls.prop_mean_ms else float('nan'), '.0f')} %")
    return section("Q7. The SCHEDULE frame on the 9600-baud line", body,
                   "the line time is most of the propagation delay on the bench (the rest: the PC waiting "
                   "for its moment to create the event, the executor's ACK); on a loaded or slow PC the scheduling "
                   "part grows.")


def q8_jitter(key: Key) -> list[str]:
    rows = [(m.run.name, m.summary_row) for m in experiment_runs(key.runs)]
    rows = [(n, r) for n, r in rows if r.get("jitter_max_us") == r.get("jitter_max_us")]
    body = []
    if rows:
        jn, jr = max(rows, key=lambda x: x[1]["jitter_max_us"])
        mn, mr = max(rows, key=lambda x: x[1]["mean_us"] if x[1]["mean_us"] == x[1]["mean_us"] else -1)
        body += ["| run | max jitter us | mean jitter us | mean latency us |", "|---|---|---|---|"]
        body += [f"| `{n}` | {f(r['jitter_max_us'])} | {f(r['jitter_mean_us'])} | {f(r['mean_us'])} |"
                 for n, r in rows]
        body += ["", f"Largest max jitter: `{jn}` ({f(jr['jitter_max_us'])} us); largest mean: `{mn}` "
                     f"({f(mr['mean_us'])} us){': the same run' if jn == mn else ': a different run'}."]
    return section("Q8. Jitter", body,
                   "normal mode has the largest jitter. A constant delay (large mean, no jitter) can be "
                   "compensated by scheduling earlier; jitter cannot. Whether a large constant latency is "
                   "acceptable depends on the deadline: it must still be under it.")


def q9_heavy_pc_load(key: Key) -> list[str]:
    m4p, m5 = key.runs["exp4p-mixed-2ahead-paced"], key.runs["exp5-mixed-2ahead-load"]
    if m4p.valid and m5.valid:
        l4, l5 = m4p.link, m5.link
        body = [f"- idle (`exp4p-mixed-2ahead-paced`): mean {f(m4p.summary.get('mean_us'))} us; {l4.text()}",
                f"- loaded (`exp5-mixed-2ahead-load`): mean {f(m5.summary.get('mean_us'))} us; {l5.text()}; "
                f"{priority_words(m5)}; load: `{' '.join((m5.meta.get('load') or {}).get('command') or [])}`"]
        if l4.prop_mean_ms is not None and l5.prop_mean_ms is not None:
            body.append(f"- the load added {f(l5.prop_mean_ms - l4.prop_mean_ms, '+.2f')} ms to the mean "
                        f"propagation, {f((l5.prop_max_ms or 0) - (l4.prop_max_ms or 0), '+.2f')} ms to its max; "
                        f"slack min {f(l4.slack_min_ticks)} -> {f(l5.slack_min_ticks)} ticks")
    else:
        body = [invalid_words(m4p) or invalid_words(m5) or "-"]
    return section("Q9. Heavy PC load", body,
                   "the executor keeps the timing; the PC's load only delays the SCHEDULE frames. An event "
                   "is missed anyway only if the PC delays a SCHEDULE past its tick (more than the slack: a stall "
                   "of over a tick), or loses the link.")


def q10_task_dispatch_under_load(key: Key) -> list[str]:
    body = []
    for name in ("inside-idle", "inside-loaded"):
        lat = measured(key.runs[name].df)["latency_us"].to_numpy(dtype=float)
        if not len(lat):
            body.append(f"- `{name}`: no measured event")
            continue
        body.append(f"- `{name}`: n {len(lat)}, min {f(lat.min(), '.1f')} us, p50 {f(np.median(lat), '.1f')} us, "
                    f"max {f(lat.max(), '.1f')} us; under 100 us: {int((lat < 100).sum())}, 100 us..2.1 ms: "
                    f"{int(((lat >= 100) & (lat < 2100)).sum())}")
    return section("Q10. Task dispatch under the executor's own load (step 5)", body,
                   "a tick edge outside a `load_periodic` bar lets the `tc` task run at once (the spike); "
                   "one inside a bar makes it wait until the 2 ms load job ends (the shelf up to 2 ms). ISR "
                   "dispatch fires in the interrupt, which preempts any task: no shelf.")


def q11_context_switch(key: Key) -> list[str]:
    body = []
    for name in ("inside-idle", "inside-loaded"):
        p = key.runs[name].meta.get("executor_profile") or {}
        if "error" in p or not p:
            body.append(f"- `{name}`: no executor profile ({p.get('error', 'missing')})")
            continue
        cs = p.get("context_switch") or {}
        cat = p.get("by_category") or {}
        calls = "; ".join(f"{c.get('call')} {f(c.get('before_us'))} -> {f(c.get('after_us'))} us "
                          f"(+{f(c.get('difference_us'))} us)" for c in p.get("service_calls") or [])
        body.append(f"- `{name}`: context switch "
                    + (f"{f(cs.get('us'))} us" if cs.get("us") is not None else f"not measured ({cs.get('why')})")
                    + f"; restoring a task {f(cs.get('restore_us'))} us (n {cs.get('restore_n')}); service calls: "
                    + (calls or "none") + " (paper: 14.245 us); time by category: "
                    + ", ".join(f"{k} {f(100 * v, '.2f')} %" for k, v in cat.items()))
    return section("Q11. Context switch and where the idle executor's time goes", body,
                   "compare the context switch with the paper's 14.245 us (same ATmega at 16 MHz: of the "
                   "same order); idle, almost all of the executor's time is idle (asleep), tick processing, "
                   "dispatch and serial work take a few percent at most.")


SECTIONS: tuple[Callable[[Key], list[str]], ...] = (
    q1_mean_and_variance, q2_normal_mode, q3_largest_difference, q4_p99_from_the_cdf, q5_linear_count_axis,
    q6_propagation_and_slack, q7_schedule_on_the_line, q8_jitter, q9_heavy_pc_load, q10_task_dispatch_under_load,
    q11_context_switch)
QUESTIONS = tuple(f"Q{i}" for i in range(1, len(SECTIONS) + 1))     # the handout's questions, one section each


def compute_time(key: Key) -> list[str]:
    tries = {m.command: m.tries for m in key.runs.values()}
    return (["## Runs and compute time", "", "| command | wall s | tries |", "|---|---|---|"]
            + [f"| `{cmd}` | {f(s, '.1f')} | {tries.get(cmd, 1)} |" for cmd, s in key.timings] + [""])


def render(key: Key, command: str, count: int) -> str:
    """The whole key: the header, a section per question (QUESTIONS, in order), the runs' compute time."""
    lines = header(key, command, count)
    for question in SECTIONS:
        lines += question(key)
    return "\n".join(lines + compute_time(key))
