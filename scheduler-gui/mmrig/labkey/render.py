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
from mmanalysis.paper import ABOUT_HALF, DESIGN_WORDS, PAPER, PAPER_EXECUTOR_LOAD, Observed, PaperRow, design, verdict

from mmrig.experiments import BY_NAME
from mmrig.labkey.figures import (experiment_runs, f, filled_bins, histogram, missing_experiment_runs,
                                  no_valid_run, priority_words, reasons, schedule_line_ms, slack_table, tail_events,
                                  valid)
from mmrig.labkey.runs import RUNS, Key, Made

def section(title: str, body: list[str], expected: str | list[str]) -> list[str]:
    """One question's section: its title, the figures (BODY's lines), the expected answer (one paragraph, or
    one sentence a line). Every expected answer is computed from the figures above it, never typed."""
    if isinstance(expected, list):
        expected = " ".join(x for x in expected if x)
    return [f"## {title}", "", *body, "", f"Expected answer: {expected}", ""]


def lockstep_or_paced(m: Made) -> str:
    return "lockstep" if m.run.lockstep else "paced"


def code(name: str) -> str:
    return f"`{name}`"


def names(ms: list[str]) -> str:
    """`a`, `b` and `c`."""
    ms = [code(m) for m in ms]
    return ms[0] if len(ms) == 1 else ", ".join(ms[:-1]) + " and " + ms[-1] if ms else "none"


def header(key: Key, command: str, count: int) -> list[str]:
    git = subprocess.run(["git", "describe", "--always", "--dirty", "--tags"], capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parent).stdout.strip() or "?"
    paced = [r.name for r in RUNS if not r.lockstep]
    runs = [f"`{r.name}` ({'lockstep' if r.lockstep else 'paced'}, "
            f"{'NOT MADE' if r.name not in key.runs else 'valid' if key.runs[r.name].valid else 'INVALID'})"
            for r in RUNS]
    missing = missing_experiment_runs(key.runs)
    return ["# Lab answer key (generated: do not edit by hand)", "",
            f"Made by `{command}` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, checkout `{git}`, host "
            f"{platform.node()} ({os.cpu_count()} CPUs, {platform.release()}), {count} events per experiment. Every "
            "figure below is computed from the runs listed here, and every expected answer from those figures; "
            "regenerate the key whenever the rig changes.", "",
            f"Lockstep runs give the same figures on any host. Paced runs ({names(paced)}) measure this PC, as the "
            "students' paced runs measure theirs, so a student's paced figures differ from these (docs/lab-instructor.md, "
            "\"Differences between groups that are normal\"). `exp3b-mixed-1ahead-free` is paced as the students run "
            "it: its share on time depends on where the PC's free-running timer falls in the tick and on how late "
            "the PC sends. The experiments compared with the paper run the paper's executor design (task "
            f"dispatch, executor load `{PAPER_EXECUTOR_LOAD}`); `exp1i` and `exp4i` are ours (ISR dispatch, the same "
            "load).", "",
            f"Scheduling: {key.scheduling}.", "",
            "Runs: " + "; ".join(runs), ""] + \
        ([f"**No valid run of {names(missing)}**: the answers that need them say so instead of giving figures.", ""]
         if missing else [])


# ---- Q1 -------------------------------------------------------------------------------------------------

def paper_row(m: Made) -> PaperRow | None:
    """The paper's row a run is judged against: its experiment's, or for ours (ISR) the row its config matches."""
    ex = BY_NAME.get(m.run.name)
    if ex is not None and ex.paper is not None:
        return ex.paper
    cfg = m.meta.get("config") or {}
    return next((p for p in PAPER if p.match(cfg)), None)


def design_text(m: Made) -> str:
    cfg = m.meta.get("config") or {}
    return "no executor (the PC fires)" if cfg.get("mode") == "normal" else DESIGN_WORDS[design(cfg)]


Q1_RUNS = tuple(r.name for r in RUNS if r.name in BY_NAME)     # the paper's experiments and ours, in RUNS' order


def q1_mean_and_variance(key: Key) -> list[str]:
    body = ["| experiment | run | design | n | mean us | var us² | p99 us | max us | paper | verdict |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    lower, not_lower, share, ours, over, under, absent = [], [], [], [], [], [], []
    for name in Q1_RUNS:
        ex = BY_NAME[name]
        m = valid(key, name)
        if m is None:
            body.append(f"| {ex.title} | `{name}` | | | | | | | {ex.paper_text} | no valid run |")
            absent.append(no_valid_run(key, name, f"its row (`{name}`)"))
            continue
        s, p = m.summary, paper_row(m)
        obs = Observed.from_summary(s, m.meta)
        words = verdict(p, obs) if p is not None else "-"
        body.append(f"| {ex.title} | `{name}` | {design_text(m)} | {s.get('n')} | {f(s.get('mean_us'))} | "
                    f"{variance_text(s.get('variance_us2'))} | {f(s.get('p99_us'))} | {f(s.get('max_us'))} | "
                    f"{ex.paper_text} | {words} |")
        mean, var, mx = s.get("mean_us"), s.get("variance_us2"), s.get("max_us")
        fig = f"`{name}` (mean {f(mean)} us, var {variance_text(var)})"
        if ex.paper is None:
            ours.append(fig)
        elif ex.paper.mean_us is None:
            share.append(f"`{name}` {f(100 * (obs.ok_share or 0), '.1f')} % on time")
        elif mean is not None and var is not None:
            (lower if mean < ex.paper.mean_us and var < ex.paper.var_us2 else not_lower).append(
                fig + ("" if mean < ex.paper.mean_us and var < ex.paper.var_us2 else
                       f" against the paper's {ex.paper.short}"))
        if mx is not None and mean is not None:
            (over if mx >= 1000 else under).append((name, mean, mx))
    said = []
    if lower:
        said.append("Mean and variance lower than the paper's: " + "; ".join(lower) + ".")
    if not_lower:
        said.append("Not lower in mean or variance: " + "; ".join(not_lower) + ".")
    if share:
        said.append("The paper gives no mean 1 tick ahead, only \"about half\" on time: " + "; ".join(share) + ".")
    if ours:
        said.append("Ours (ISR dispatch), not compared with the paper: " + "; ".join(ours) + ".")
    if over:
        said.append("For a 1 ms hard deadline the max decides: " + "; ".join(
            f"`{n}` has its max at {f(mx)} us" + (f" with a mean of only {f(mean)} us" if mean < 1000 else "")
            for n, mean, mx in over) + ", so it misses the deadline whatever its mean and variance"
            + (f"; every other valid run's max is under 1 ms ({names([n for n, _, _ in under])})." if under else "."))
    elif under:
        said.append(f"Every valid run's max is under 1 ms here ({names([n for n, _, _ in under])}): that, not the "
                    "mean or the variance, is what meets a 1 ms hard deadline.")
    said.append("Neither the mean nor the variance bounds the single worst event: a low mean with one event over "
                "1 ms misses the deadline, and the max and p99 show it.")
    return section("Q1. Mean and variance against the paper", body, said + absent)


# ---- Q2 -------------------------------------------------------------------------------------------------

BUDGET_WORDS = {"est_error": "the PC's estimate of when the tick began (from a TIMECODE frame that came over the "
                             "serial line)", "wakeup": "the operating system waking the firing thread late",
                "line": "the write to the serial line", "floor": "the frame's fixed line time"}


def q2_normal_mode(key: Key) -> list[str]:
    m2 = valid(key, "exp2-normal")
    if m2 is None:
        return section("Q2. Normal mode: where the milliseconds come from", [],
                       no_valid_run(key, "exp2-normal"))
    s = m2.summary
    body = [f"`exp2-normal` ({lockstep_or_paced(m2)}, this PC): mean {f(s.get('mean_us'))} us, p50 "
            f"{f(s.get('p50_us'))} us, p99 {f(s.get('p99_us'))} us, max {f(s.get('max_us'))} us; outcomes "
            f"{s.get('outcomes')}; {priority_words(m2)}."]
    b = m2.meta.get("budget") or {}
    parts = b.get("parts") or {}
    said = [f"`exp2-normal`'s latency is {f(s.get('mean_us'))} us on average, {f(s.get('max_us'))} us at worst."]
    if parts:
        body += ["", "Latency budget (sidecar `budget`, us): " + "; ".join(
            f"{k.removesuffix('_us')} p50 {f(v.get('p50'), '.1f')}, p99 {f(v.get('p99'), '.1f')}, "
            f"max {f(v.get('max'), '.1f')}" for k, v in parts.items())
            + f". Largest part at p50: `{b.get('largest_p50')}`."]

        def largest(stat: str) -> str:
            k = max(parts, key=lambda k: float(parts[k].get(stat) or 0))
            return k.removesuffix("_us")
        p50, p99 = largest("p50"), largest("p99")
        said.append(f"The largest part of the budget at p50 is `{p50}` ({BUDGET_WORDS.get(p50, p50)}), at p99 "
                    f"`{p99}` ({BUDGET_WORDS.get(p99, p99)}).")
    else:
        said.append("The run has no latency budget, so this key cannot say which part is largest.")
    said.append("A faster PC shortens the work but neither the operating system's wake-up lateness nor the "
                "uncertainty about when a tick began: it gives a different distribution, not a guarantee. The "
                "paper's 14.5 ms came from a Pentium III under Windows NT firing from a GUI timer (it gives no "
                "breakdown).")
    return section("Q2. Normal mode: where the milliseconds come from", body, said)


# ---- Q3 -------------------------------------------------------------------------------------------------

Q3_COMPARISONS = (("normal vs mixed 2 ahead", "exp2-normal", "exp4-mixed-2ahead"),
                  ("1 vs 2 ticks ahead, free-running (the paper's method)", "exp3b-mixed-1ahead-free",
                   "exp4-mixed-2ahead"),
                  ("1 vs 2 ticks ahead, tick-aligned", "exp3-mixed-1ahead", "exp4-mixed-2ahead"),
                  ("idle vs loaded (mixed 2 ahead, both paced)", "exp4p-mixed-2ahead-paced", "exp5-mixed-2ahead-load"))
SAME_RATIO, SAME_POINTS = 1.05, 1.0     # "no difference": means within 5 %, on-time shares within 1 point


def q3_largest_difference(key: Key) -> list[str]:
    body, absent, rows = [], [], []
    for what, a, b in Q3_COMPARISONS:
        ma, mb = valid(key, a), valid(key, b)
        if ma is None or mb is None:
            for n, m in ((a, ma), (b, mb)):
                if m is None:
                    absent.append(no_valid_run(key, n, f"the comparison {what}"))
            body.append(f"- {what}: no valid run of " + names([n for n, m in ((a, ma), (b, mb)) if m is None]))
            continue
        xa, xb = ma.summary_row["mean_us"], mb.summary_row["mean_us"]
        sa, sb = 100 * ma.summary_row["ok_share"], 100 * mb.summary_row["ok_share"]
        ratio = max(xa, xb) / min(xa, xb) if min(xa, xb) > 0 else float("inf")
        points = abs(sa - sb)
        rows.append((what, ratio, points))
        body.append(f"- {what}: `{a}` mean {f(xa)} us, on time {f(sa, '.1f')} %; `{b}` mean {f(xb)} us, on time "
                    f"{f(sb, '.1f')} % (means x{f(ratio, '.2f')} apart, on time {f(points, '.1f')} points apart)")
    said = []
    if len(rows) == 1:
        what, ratio, points = rows[0]
        said.append(f"Only one comparison has valid runs in this key, {what} (means x{f(ratio, '.2f')} apart, on "
                    f"time {f(points, '.1f')} points apart): it cannot rank the comparisons; the students' runs do.")
    elif rows:
        by_ratio = max(rows, key=lambda r: r[1])
        by_points = max(rows, key=lambda r: r[2])
        same = [r for r in rows if r[1] < SAME_RATIO and r[2] < SAME_POINTS]
        smallest = same or [min(rows, key=lambda r: (r[2], r[1]))]
        said.append(f"Largest difference in latency: {by_ratio[0]} (means x{f(by_ratio[1], '.1f')} apart)."
                    if by_ratio[1] >= SAME_RATIO else "No comparison changes the mean latency by 5 % or more.")
        said.append(f"Largest difference in events on time: {by_points[0]} ({f(by_points[2], '.1f')} points)."
                    if by_points[2] >= SAME_POINTS else "No comparison changes the share on time by a point or more.")
        said.append(("No difference (means within 5 %, on time within 1 point): " if same else "Smallest: ")
                    + "; ".join(f"{r[0]} (x{f(r[1], '.2f')}, {f(r[2], '.1f')} points)" for r in smallest) + ".")
        normal_largest = by_ratio[0] == Q3_COMPARISONS[0][0] and by_ratio[1] >= SAME_RATIO
        load_smallest = any(r[0] == Q3_COMPARISONS[3][0] for r in smallest)
        if normal_largest and load_smallest:
            said.append("So the timing comes from the executor firing from its own copy of the timecode, whatever "
                        "the PC's load; the PC only has to deliver the SCHEDULE in time, which is what 1 vs 2 ticks "
                        "ahead decides.")
        elif len(rows) == len(Q3_COMPARISONS):
            said.append("These figures do not show normal vs mixed as the largest and idle vs loaded as the "
                        "smallest difference: check the runs before using this key as a reference.")
        else:
            said.append("Without every comparison this key cannot rank them all; the students' runs complete it.")
    return section("Q3. Which comparison differs most", body, said + absent)


# ---- Q4 -------------------------------------------------------------------------------------------------

def q4_p99_from_the_cdf(key: Key) -> list[str]:
    body = ["| run | min us | p50 us | p99 us | max us | mean us |", "|---|---|---|---|---|---|"]
    ms = experiment_runs(key.runs)
    for m in ms:
        s = m.summary
        body.append(f"| `{m.run.name}` | {f(s.get('min_us'))} | {f(s.get('p50_us'))} | {f(s.get('p99_us'))} | "
                    f"{f(s.get('max_us'))} | {f(s.get('mean_us'))} |")
    ms = [m for m in ms if m.summary.get("p99_us") is not None and m.summary.get("max_us") is not None]
    said = []
    if ms:
        said.append("99 % of the events lie below: " + "; ".join(
            f"`{m.run.name}` {f(m.summary['p99_us'])} us" for m in ms) + ".")
        lo = min(ms, key=lambda m: m.summary["min_us"])
        hi = max(ms, key=lambda m: m.summary["max_us"])
        span = hi.summary["max_us"] / lo.summary["min_us"] if lo.summary["min_us"] > 0 else float("inf")
        said.append(f"The latencies run from {f(lo.summary['min_us'])} us (`{lo.run.name}`'s min) to "
                    f"{f(hi.summary['max_us'])} us (`{hi.run.name}`'s max), a factor of {f(span, '.0f')}: "
                    + ("a log time axis shows both ends on one figure." if span >= 10 else
                       "less than ten, so a linear axis would do for these runs; a log axis still shows them."))
        tail = max(ms, key=lambda m: m.summary["max_us"] / m.summary["mean_us"] if m.summary["mean_us"] else 0)
        t = tail.summary
        said.append(f"The marked max is the event a deadline is judged on and the min the floor of the path, which "
                    f"the mean hides: the longest tail against its mean is `{tail.run.name}`'s (max {f(t['max_us'])} "
                    f"us against a mean of {f(t['mean_us'])} us).")
    else:
        said.append("no valid run of any experiment: this question cannot be answered from this key; the students' "
                    "own runs answer it.")
    return section("Q4. p99 from the CDF", body, said)


# ---- Q5 -------------------------------------------------------------------------------------------------

def q5_linear_count_axis(key: Key) -> list[str]:
    body, rare, one_bin, clean = [], [], [], []
    for m in experiment_runs(key.runs):
        tall, bins, n, lo, hi = tail_events(m)
        h = histogram(m)
        over = int(h.get("overflow") or 0)
        body.append(f"- `{m.run.name}` ({h.get('bin_us')} us bins): tallest bin {tall} events; {bins} bin(s) with "
                    f"only 1 or 2 events, {n} event(s) in them"
                    + (f", between {f(lo, '.0f')} and {f(hi, '.0f')} us" if lo is not None else "")
                    + (f"; {over} beyond the histogram's {f(h.get('range_us'), '.0f')} us" if over else "")
                    + f"; max {f(m.summary.get('max_us'))} us (n = {m.summary.get('n')})")
        if bins:
            rare.append(f"`{m.run.name}`: {n} event(s) between {f(lo, '.0f')} and {f(hi, '.0f')} us, in bars of at "
                        f"most {f(200 / tall, '.1f')} % of the tallest ({tall} events)")
        elif filled_bins(m) <= 1:
            one_bin.append(m.run.name)
        else:
            clean.append(m.run.name)
    said = []
    if rare:
        said.append("On a linear count axis these rare events are bars of height 1 or 2 beside the tallest bin, "
                    "next to invisible; on log counts they show: " + "; ".join(rare) + ".")
    else:
        said.append("No valid run of this key has a bin of only 1 or 2 events: a linear count axis hides nothing "
                    "here, and a student's run with such bins (normal mode's tail, a rare slow dispatch) is where "
                    "log counts matter.")
    if one_bin:
        said.append(f"Nothing to hide in {names(one_bin)}, where every event falls in one bin.")
    if clean:
        said.append(f"No bin of 1 or 2 events in {names(clean)}.")
    return section("Q5. What a linear count axis hides", body, said)


# ---- Q6 -------------------------------------------------------------------------------------------------

def q6_propagation_and_slack(key: Key) -> list[str]:
    R = key.runs
    order = ("exp3b-mixed-1ahead-free", "exp3-mixed-1ahead", "exp4-mixed-2ahead", "exp4p-mixed-2ahead-paced")
    tick = next((m for m in (R.get(n) for n in order) if m is not None), None)
    body = []
    if tick is not None:
        tb = tick.meta["timebase"]
        body += [f"One tick is {f(float(tb['tick_counts']) / float(tb['timer_hz']) * 1e3)} ms.", ""]
    for name in order:
        m = valid(key, name)
        if m is None:
            body.append(f"- no valid run of `{name}`")
            continue
        body.append(f"- `{m.run.name}` ({lockstep_or_paced(m)}, generation "
                    f"{m.meta['config'].get('generation')}): on time {f(100 * m.summary_row['ok_share'], '.1f')} %, "
                    f"{m.link.text()}; reasons of the events not ok: {reasons(m)}")
        body.append(f"  - slack table (notebook, section 5): {slack_table(m)}")
    said = []
    m3b, m4 = valid(key, order[0]), valid(key, order[2])
    if m3b is None:
        said.append(no_valid_run(key, order[0], "the 1-tick-ahead, free-running part (the paper's \"about half\")"))
    else:
        share, ls = m3b.summary_row["ok_share"], m3b.link
        lo, hi = ABOUT_HALF
        said.append(f"`{order[0]}` was on time for {f(100 * share, '.1f')} % of its events, "
                    + ("which reproduces the paper's \"about half\"" if lo <= share <= hi else
                       f"which does not reproduce the paper's \"about half\" ({lo:.0%}-{hi:.0%})")
                    + f"; missed {ls.missed} of {ls.events} (reasons: {reasons(m3b)}).")
        sl = (m3b.meta.get("slack") or {}).get("ok") or {}
        if sl.get("created_phase_max") is not None:
            body.append(f"- `{order[0]}`: ok events were created at tick phase "
                        f"{f(sl.get('created_phase_min'), '.2f')}..{f(sl.get('created_phase_max'), '.2f')} (the "
                        "missed ones late in their tick: the notebook's missed-phase figure)")
            said.append(f"Its events on time were created at tick phase {f(sl.get('created_phase_min'), '.2f')}.."
                        f"{f(sl.get('created_phase_max'), '.2f')}: scheduled 1 tick ahead, an event created at phase "
                        "p leaves (1 - p) of a tick for the SCHEDULE, and free-running generation spreads p over the "
                        "tick, so those created late in it miss.")
        else:
            said.append("Scheduled 1 tick ahead, an event created at phase p of its tick leaves (1 - p) of a tick for "
                        "the SCHEDULE; free-running generation spreads p over the tick, so those created late miss.")
    if m4 is None:
        said.append(no_valid_run(key, order[2], "the 2-ticks-ahead part"))
    else:
        ls = m4.link
        if ls.missed == 0 and (ls.slack_min_ticks is None or ls.slack_min_ticks > 0):
            said.append(f"2 ticks ahead (`{order[2]}`) nothing was missed: slack min {f(ls.slack_min_ticks)} ticks, "
                        "at least one whole tick for the SCHEDULE.")
        else:
            said.append(f"2 ticks ahead (`{order[2]}`) still missed {ls.missed} of {ls.events} (slack min "
                        f"{f(ls.slack_min_ticks)} ticks; reasons: {reasons(m4)}): this key does not show 2 ahead "
                        "fixing it; check the run.")
    m3 = valid(key, order[1])
    if m3 is not None:
        said.append(f"Tick-aligned generation (`{order[1]}`, ours: created right after the TIMECODE) was on time "
                    f"{f(100 * m3.summary_row['ok_share'], '.1f')} % even 1 ahead: it is not the paper's method.")
    return section("Q6. Propagation delay and slack, 1 vs 2 ticks ahead", body, said)


# ---- Q7 -------------------------------------------------------------------------------------------------

def q7_schedule_on_the_line(key: Key) -> list[str]:
    wire, ms = schedule_line_ms(key.proto_sizes)
    body = [f"`mmrig proto sizes --baud 9600`: SCHEDULE is {wire} bytes on the wire, {f(ms)} ms at 9600 baud."]
    said, shares = [f"A SCHEDULE frame is {wire} bytes, {f(ms)} ms on the 9600-baud line."], []
    for name in ("exp4-mixed-2ahead", "exp4p-mixed-2ahead-paced"):
        m = valid(key, name)
        if m is None or not m.link.prop_mean_ms:
            body.append(f"- no valid run of `{name}`")
            continue
        share = 100 * ms / m.link.prop_mean_ms
        shares.append((name, share))
        body.append(f"- `{name}` ({lockstep_or_paced(m)}): mean propagation {f(m.link.prop_mean_ms, '.2f')} ms, of "
                    f"which the line time is {f(share, '.0f')} %")
    for name, share in shares:
        said.append(f"In `{name}` the line time is {f(share, '.0f')} % of the mean propagation delay: "
                    + ("the line is the bigger part, the PC's scheduling (waiting for its moment, sending) the rest."
                       if share >= 50 else "the PC's scheduling is the bigger part."))
    if not shares:
        said.append(no_valid_run(key, "exp4-mixed-2ahead", "its second part (line time or scheduling)"))
    return section("Q7. The SCHEDULE frame on the 9600-baud line", body, said)


# ---- Q8 -------------------------------------------------------------------------------------------------

def jitter_rows(key: Key) -> list[tuple[str, dict]]:
    """(run, summarize row) of every valid experiment run with a jitter figure: Q8's table."""
    rows = [(m.run.name, m.summary_row) for m in experiment_runs(key.runs)]
    return [(n, r) for n, r in rows if r.get("jitter_max_us") == r.get("jitter_max_us")]


def q8_jitter(key: Key) -> list[str]:
    rows = jitter_rows(key)
    body, said = [], []
    if not rows:
        return section("Q8. Jitter", body, "no valid run of any experiment: this question cannot be answered from "
                                           "this key; the students' own runs answer it.")
    jn, jr = max(rows, key=lambda x: x[1]["jitter_max_us"])
    mn, mr = max(rows, key=lambda x: x[1]["mean_us"] if x[1]["mean_us"] == x[1]["mean_us"] else -1)
    body += ["| run | mode | max jitter us | mean jitter us | mean latency us |", "|---|---|---|---|---|"]
    body += [f"| `{n}` | {key.runs[n].meta['config'].get('mode')} | {f(r['jitter_max_us'])} | "
             f"{f(r['jitter_mean_us'])} | {f(r['mean_us'])} |" for n, r in rows]
    mode = key.runs[jn].meta["config"].get("mode")
    said.append(f"The largest maximum jitter is `{jn}`'s ({mode} mode, {f(jr['jitter_max_us'])} us); the largest "
                f"mean latency is `{mn}`'s ({f(mr['mean_us'])} us)"
                + (", the same run." if jn == mn else ", a different run."))
    if valid(key, "exp2-normal") is None:
        said.append(no_valid_run(key, "exp2-normal", "how normal mode's jitter compares"))
    steady = [(n, r) for n, r in rows if r["jitter_max_us"] < 0.25 * r["mean_us"]]
    if steady:
        n, r = max(steady, key=lambda x: x[1]["mean_us"])
        said.append(f"Yes, a mean latency can be large against its jitter: `{n}` has a mean of {f(r['mean_us'])} us "
                    f"and a max jitter of {f(r['jitter_max_us'])} us, under a quarter of it (the largest such mean in "
                    "this table).")
    else:
        said.append("No run of this key has a max jitter under a quarter of its mean.")
    said.append("A constant delay can be compensated by scheduling earlier; jitter cannot. Whether a large constant "
                "latency is acceptable depends on the deadline: it must still be under it.")
    return section("Q8. Jitter", body, said)


# ---- Q9 -------------------------------------------------------------------------------------------------

def q9_heavy_pc_load(key: Key) -> list[str]:
    idle, loaded = "exp4p-mixed-2ahead-paced", "exp5-mixed-2ahead-load"
    m4p, m5 = valid(key, idle), valid(key, loaded)
    if m4p is None or m5 is None:
        return section("Q9. Heavy PC load", [f"- no valid run of `{n}`" for n, m in ((idle, m4p), (loaded, m5))
                                             if m is None],
                       [no_valid_run(key, n) for n, m in ((idle, m4p), (loaded, m5)) if m is None])
    l4, l5 = m4p.link, m5.link
    x4, x5 = m4p.summary.get("mean_us"), m5.summary.get("mean_us")
    body = [f"- idle (`{idle}`): mean {f(x4)} us; {l4.text()}",
            f"- loaded (`{loaded}`): mean {f(x5)} us; {l5.text()}; {priority_words(m5)}; load: "
            f"`{' '.join((m5.meta.get('load') or {}).get('command') or [])}`"]
    said = []
    if x4 is not None and x5 is not None:
        said.append(f"Under load the mixed latency's mean moved by {f(x5 - x4, '+.3f')} us ({f(x4)} -> {f(x5)} us).")
    if l4.prop_mean_ms is not None and l5.prop_mean_ms is not None:
        d = f"{f(l5.prop_mean_ms - l4.prop_mean_ms, '+.2f')} ms to the mean propagation, " \
            f"{f((l5.prop_max_ms or 0) - (l4.prop_max_ms or 0), '+.2f')} ms to its max; slack min " \
            f"{f(l4.slack_min_ticks)} -> {f(l5.slack_min_ticks)} ticks"
        body.append(f"- the load added {d}")
        said.append(f"The load added {d}.")
    if l5.missed == 0:
        said.append("Nothing was missed under load: the executor keeps the timing, the PC's load only delays the "
                    "SCHEDULE frames, within the slack.")
    else:
        said.append(f"Under load {l5.missed} of {l5.events} events were missed (reasons: {reasons(m5)}): the PC "
                    "delayed their SCHEDULE past their tick.")
    tb = m5.meta["timebase"]
    tick_ms = float(tb["tick_counts"]) / float(tb["timer_hz"]) * 1e3
    if l5.slack_min_ticks is not None:
        said.append(f"An event is missed only if the PC delays a SCHEDULE by more than its slack (here at least "
                    f"{f(l5.slack_min_ticks * tick_ms, '.1f')} ms under load), or loses the link.")
    return section("Q9. Heavy PC load", body, said)


# ---- Q10 ------------------------------------------------------------------------------------------------

SPIKE_US, SHELF_US = 100.0, 2100.0


def q10_task_dispatch_under_load(key: Key) -> list[str]:
    body, said, counts = [], [], {}
    for name in ("inside-idle", "inside-loaded"):
        m = valid(key, name)
        if m is None:
            body.append(f"- no valid run of `{name}`")
            said.append(no_valid_run(key, name))
            continue
        lat = measured(m.df)["latency_us"].to_numpy(dtype=float)
        if not len(lat):
            body.append(f"- `{name}`: no measured event")
            continue
        spike, shelf = int((lat < SPIKE_US).sum()), int(((lat >= SPIKE_US) & (lat < SHELF_US)).sum())
        counts[name] = (len(lat), spike, shelf, float(np.median(lat[lat < SPIKE_US])) if spike else None,
                        float(lat.max()))
        body.append(f"- `{name}`: n {len(lat)}, min {f(lat.min(), '.1f')} us, p50 {f(np.median(lat), '.1f')} us, "
                    f"max {f(lat.max(), '.1f')} us; under 100 us: {spike}, 100 us..2.1 ms: {shelf}")
    if "inside-loaded" in counts:
        n, spike, shelf, p50, mx = counts["inside-loaded"]
        if shelf:
            said.append(f"`inside-loaded`: {spike} of {n} events in the spike (p50 {f(p50, '.1f')} us) and {shelf} on "
                        f"the shelf up to {f(mx, '.0f')} us. A tick edge outside a `load_periodic` bar lets the `tc` "
                        "task run at once (the spike); one inside a bar makes it wait until the 2 ms load job ends "
                        "(the shelf).")
        else:
            said.append(f"`inside-loaded` shows no shelf ({spike} of {n} events under 100 us, max {f(mx, '.0f')} us): "
                        "no tick edge of this run fell inside a `load_periodic` bar; check the run.")
    if "inside-idle" in counts:
        n, spike, shelf, p50, mx = counts["inside-idle"]
        said.append(f"Idle (`inside-idle`), {spike} of {n} events are in the spike" + (
            f" (p50 {f(p50, '.1f')} us)." if p50 is not None else "."))
    said.append("ISR dispatch fires in the interrupt, which preempts any task: it would show no shelf.")
    return section("Q10. Task dispatch under the executor's own load (step 5)", body, said)


# ---- Q11 ------------------------------------------------------------------------------------------------

PAPER_CONTEXT_SWITCH_US = 14.245


def q11_context_switch(key: Key) -> list[str]:
    body, said, switch = [], [], None
    for name in ("inside-idle", "inside-loaded"):
        m = valid(key, name)
        if m is None:
            body.append(f"- no valid run of `{name}`")
            said.append(no_valid_run(key, name))
            continue
        p = m.meta.get("executor_profile") or {}
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
                    + (calls or "none") + f" (paper: {PAPER_CONTEXT_SWITCH_US} us); time by category: "
                    + ", ".join(f"{k} {f(100 * v, '.2f')} %" for k, v in cat.items()))
        if cs.get("us") is not None and switch is None:
            switch = (name, float(cs["us"]))
        if name == "inside-idle" and cat:
            work = {k: v for k, v in cat.items() if k in ("tick", "dispatch", "serial")}
            rest = max(cat, key=cat.get)
            said.append(f"Idle (`{name}`), tick processing, dispatch and serial work take "
                        + ", ".join(f"{k} {f(100 * v, '.2f')} %" for k, v in work.items())
                        + f" of the executor's time; the largest category is `{rest}` ({f(100 * cat[rest], '.2f')} %).")
    if switch is not None:
        n, us = switch
        said.insert(0, f"The context switch is {f(us)} us (`{n}`), {f(us / PAPER_CONTEXT_SWITCH_US, '.2f')} times the "
                       f"paper's {PAPER_CONTEXT_SWITCH_US} us" + (": of the same order, the same ATmega at 16 MHz."
                                                                 if 0.5 <= us / PAPER_CONTEXT_SWITCH_US <= 2 else "."))
    elif not said:
        said.append("no executor profile in this key's runs: this question cannot be answered from this key; the "
                    "students' `mmrig profile inside/loaded.exectrace` answers it.")
    return section("Q11. Context switch and where the idle executor's time goes", body, said)


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
