"""The report's "The worst events, explained": each run's worst measured events by latency (runexplainer.py), one
line each, the largest part of its latency first with its time and share, then the next parts briefly; a run
without a host trace says so once under its heading; an event the explanation does not give (a mode it does not
explain yet) is listed with its reason."""

from __future__ import annotations

from typing import Callable

from .reader import RunSet
from .explain import Explanation
from .runexplainer import WORST, RunExplainer, WorstEvents, one_line

HEADING = "The worst events, explained"
WORDS = (f"Each run's {WORST} worst measured events (ok and late, measurable) by latency, worst first, one line each: "
         "the largest part of the event's latency with its time and its share, then the next parts by size, briefly. "
         "The parts add up to the latency, in the order the event met them: the tick estimate's error, the firing "
         "thread's wake-up (split by the PC's scheduler trace where the run recorded one, mmrig run --trace-host: "
         "the threads that held its CPU, IRQs, softirqs, the thread's own path), the write call, the line and the "
         "profiler's floor. 'mmrig explain RUN EVENT' prints one event's whole explanation (docs/explain.md).")


def worst_events(data: RunSet, runs: list[str], use_trace: bool = True) -> list[WorstEvents]:
    """RUNS' worst events, explained, in RUNS' order (each run's host trace read once, around its worst)."""
    return [RunExplainer(data.df[data.df["run"] == r], data.meta[r], r, use_trace).worst(WORST) for r in runs]


def section(worst: list[WorstEvents], heading: Callable[[str, int], str], para: Callable[[str], str],
            bullets: Callable[[list[str]], str]) -> list[str]:
    """The section in whatever markup `heading`, `para` and `bullets` write (the report's Markdown or HTML); empty
    when there is no run."""
    if not worst:
        return []
    out = [heading(HEADING, 2), para(WORDS)]
    for w in worst:
        shown = len(w.items)
        out.append(heading(f"{w.run}: its {shown} worst of {w.measured} measured events" if shown
                           else f"{w.run}: no measured event", 3))
        # (said where it matters: an event explained, or the executor's trace that every event needs; not the host
        # trace to a run whose events are all refused)
        if w.trace_note and (w.side == "executor" or any(isinstance(i, Explanation) for i in w.items)):
            out.append(para(w.trace_note[0].upper() + w.trace_note[1:] + "."))
        if shown:
            out.append(bullets([one_line(item) for item in w.items]))
    return out


__all__ = ["HEADING", "WORDS", "section", "worst_events"]
