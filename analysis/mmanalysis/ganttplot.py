"""The executor's run as a Gantt chart for the report (the ProfileAnalyzer view of Prisching and Rinner,
"Thread-based analysis of embedded applications"), drawn with matplotlib (no pyplot, no Qt: the GUI's gantt.py
draws the same rows interactively).

One row per interrupt vector and per task (interrupts on top, in vector order; tasks by priority, idle last
with its sleep drawn paler), a bar per stretch of cycles the core ran it (mmanalysis.exectrace.timeline: an
interrupt's handler without the task time a switch inside it leaves open, a task without the interrupts
inside it), coloured by category (exectrace.CATEGORY_OF_*). The top row marks the wires: the timecode
edges (a dashed line across every row: the ticks) and each event edge the executor drove (a triangle).

Two panels, as ProfileAnalyzer's overview and zoom: the whole trace above, and below a zoom on the event
with the longest dispatch (timecode edge to event edge), where single interrupts and the context switch
can be read. Zoomed out, bars closer together than a pixel are drawn as one (the figure is a few hundred
pixels wide; a minute-long trace has hundreds of thousands of segments), so the figure takes the same
time whatever the trace's length.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from . import canvas
from . import exectrace as et

# The executor's task priorities, highest first (executor/port/avr/main.c: tc at configMAX_PRIORITIES - 1, serial
# below it, the status LED task above idle; exload.py: the periodic load above tc, the CPU load below every other
# task); the GUI's gantt.py takes its rows' order, colours and categories from here. Tasks not named come after
# these, by name; idle is always last.
TASK_PRIORITY = ("load_periodic", "tc", "serial", "status", "led", "load_cpu")
CATEGORY_COLOURS = {"tick": "#8e6bbf", "dispatch": "#d62728", "serial": "#1f77b4", "load": "#ff7f0e",
                    "status": "#2ca02c", "other": "#8c564b", "idle": "#7f7f7f", "sleep": "#cfcfcf"}
TICK_COLOUR = "#3b7dd8"
EVENT_COLOUR = "#c0392b"
PINS = "tick / event"
BAR = 0.72                       # of a row's height
PIXELS = 1600                    # the overview's resolution: bars closer than total / PIXELS merge


@dataclass
class GanttRow:
    label: str                   # "isr PCINT2", "task tc" (the Perfetto trace's track names)
    kind: str                    # "isr" or "task"
    layers: list[tuple[str, np.ndarray, np.ndarray]]   # (category, start ms, end ms), sorted, non-overlapping


@dataclass
class GanttData:
    rows: list[GanttRow]
    total_ms: float
    tick_ms: np.ndarray
    event_ms: np.ndarray
    worst: tuple[float, float] | None      # (tick edge ms, event edge ms) of the longest dispatch


def category_of(kind: str, name: str) -> str:
    if kind == "sleep":
        return "sleep"
    if kind == "isr":
        return et.CATEGORY_OF_VECTOR.get(name, "other")
    return et.CATEGORY_OF_TASK.get(name, "other")


def gantt_data(tr: et.ExecTrace, segments: Sequence[et.Segment] | None = None) -> GanttData:
    """TR's rows (ms from the trace's start), its tick and event edges, and its longest dispatch."""
    segs = et.timeline(tr) if segments is None else segments
    scale = 1000.0 / tr.cpu_hz

    def arr(pairs: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
        a = np.asarray(pairs, dtype=float).reshape(-1, 2)
        return (a[:, 0] - tr.start) * scale, (a[:, 1] - tr.start) * scale

    spans: dict[tuple[str, str], list[tuple[int, int]]] = defaultdict(list)
    for s in segs:
        if s.kind in ("isr", "task", "sleep"):
            spans[(s.kind, s.name)].append((s.start, s.end))
    number = {n: v for v, n in tr.vectors.items()}
    rows = [GanttRow(f"isr {n}", "isr", [(category_of("isr", n), *arr(spans[("isr", n)]))])
            for n in sorted({n for k, n in spans if k == "isr"}, key=lambda n: (number.get(n, 1 << 16), n))]
    rank = {n: i for i, n in enumerate(TASK_PRIORITY)}
    tasks = sorted({n for k, n in spans if k == "task" and n != "idle"}, key=lambda n: (n not in rank, rank.get(n, 0), n))
    rows += [GanttRow(f"task {n}", "task", [(category_of("task", n), *arr(spans[("task", n)]))]) for n in tasks]
    if ("task", "idle") in spans or ("sleep", et.SLEEP) in spans:
        layers = []
        if ("sleep", et.SLEEP) in spans:
            layers.append(("sleep", *arr(spans[("sleep", et.SLEEP)])))
        if ("task", "idle") in spans:
            layers.append(("idle", *arr(spans[("task", "idle")])))
        rows.append(GanttRow("task idle", "task", layers))
    ticks = [c for c, _ in et.timecode_edges(tr)]
    events = [c for c, _ in et.event_edges(tr)]
    worst, longest = None, -1
    for c in events:                     # as exectrace.dispatch_delays: from the last timecode edge before it
        i = bisect.bisect_right(ticks, c) - 1
        if i >= 0 and c - ticks[i] > longest:
            longest, worst = c - ticks[i], ((ticks[i] - tr.start) * scale, (c - tr.start) * scale)
    return GanttData(rows, (tr.end - tr.start) * scale, (np.asarray(ticks, dtype=float) - tr.start) * scale,
                     (np.asarray(events, dtype=float) - tr.start) * scale, worst)


def merge_close(start: np.ndarray, end: np.ndarray, gap: float) -> tuple[np.ndarray, np.ndarray]:
    """Bars closer than GAP to the next as one bar (from the first's start to the last's end)."""
    if start.size < 2 or gap <= 0:
        return start, end
    breaks = np.flatnonzero(start[1:] - end[:-1] >= gap)
    return start[np.r_[0, breaks + 1]], end[np.r_[breaks, start.size - 1]]


def _draw(ax, g: GanttData, x0: float, x1: float, resolution: float) -> None:
    n = len(g.rows)
    ys = {r.label: n - i for i, r in enumerate(g.rows)}      # top to bottom; the pins row above them (n + 1)
    for row in g.rows:
        y = ys[row.label]
        for cat, s, e in row.layers:
            keep = (e >= x0) & (s <= x1)
            s, e = merge_close(s[keep], e[keep], resolution)
            if not s.size:
                continue
            w = np.maximum(e - s, resolution)                  # at least a pixel: a 3 us interrupt stays visible
            coll = ax.broken_barh(np.column_stack([s, w]), (y - BAR / 2, BAR), facecolors=CATEGORY_COLOURS[cat],
                                  edgecolor="none", label=cat)
            coll.set_gid(f"row:{row.label}")
    t = g.tick_ms[(g.tick_ms >= x0) & (g.tick_ms <= x1)]
    if t.size:
        step = max(1, int(np.ceil(t.size / 200)))             # at most 200 tick lines: they would fill the panel
        ax.vlines(t[::step], 0.4, n + 1.5, colors=TICK_COLOUR, linestyles="--", lw=0.7, gid="ticks")
    ev = g.event_ms[(g.event_ms >= x0) & (g.event_ms <= x1)]
    if ev.size:
        ax.plot(ev, np.full(ev.size, n + 1.0), "v", color=EVENT_COLOUR, ms=5, gid="events")
    ax.set_yticks([n + 1, *ys.values()], [PINS, *ys.keys()], fontsize=7)
    ax.set_ylim(0.4, n + 1.6)
    ax.set_xlim(x0, x1)
    ax.grid(True, axis="x", alpha=0.3)


def gantt(tr: et.ExecTrace, title: str = "", zoom_ms: float | None = None) -> Figure:
    """The overview and the zoom on the longest dispatch (ZOOM_MS wide: default a tenth of the trace, at
    most 4 ms, at least three times the dispatch itself)."""
    g = gantt_data(tr)
    n = len(g.rows)
    height = 0.28 * (n + 1) + 1.0
    fig = Figure(figsize=(10, 2 * height + 0.6))
    top, bottom = fig.subplots(2, 1)
    total = max(g.total_ms, 1e-9)
    _draw(top, g, 0.0, total, total / PIXELS)
    top.set_title(f"{title + ': ' if title else ''}what the executor ran, the whole trace ({total:.2f} ms)",
                  fontsize=9)
    top.set_xlabel("time since the trace began (ms)", fontsize=8)
    if g.worst is not None:
        tick, event = g.worst
        span = event - tick
        width = zoom_ms if zoom_ms is not None else max(min(total / 10, 4.0), 3 * span, 0.05)
        x0 = max(tick - (width - span) / 3, 0.0)
        x1 = min(x0 + width, total)
        top.axvspan(x0, x1, color="0.85", zorder=0, gid="zoom")
        _draw(bottom, g, x0, x1, (x1 - x0) / PIXELS)
        bottom.annotate("", (event, n + 1.35), (tick, n + 1.35),
                        arrowprops=dict(arrowstyle="<->", color=EVENT_COLOUR, lw=0.8))
        bottom.set_title(f"zoom (shaded above) on the longest dispatch: {span * 1000:.2f} us from the timecode "
                         f"edge at {tick:.3f} ms to the event edge", fontsize=9)
    else:
        x1 = min(zoom_ms or total / 10, total)
        _draw(bottom, g, 0.0, x1, x1 / PIXELS)
        bottom.set_title("zoom on the trace's start (no event edge in it)", fontsize=9)
    bottom.set_xlabel("time since the trace began (ms)", fontsize=8)
    handles = {}
    for ax in (top, bottom):
        for h, lb in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lb, h)
    handles["timecode edge (tick)"] = Line2D([], [], ls="--", color=TICK_COLOUR, lw=0.7)
    handles["event edge the executor drove"] = Line2D([], [], ls="", marker="v", color=EVENT_COLOUR)
    fig.legend(list(handles.values()), list(handles.keys()), loc="lower center", ncol=min(len(handles), 5), fontsize=7,
               bbox_to_anchor=(0.5, 0.0), frameon=False)
    fig.tight_layout(rect=(0, 0.5 / fig.get_size_inches()[1], 1, 1))
    return canvas.fit(fig)


def trace_path(meta: dict[str, Any]) -> Path | None:
    """A traced run's .exectrace file (the sidecar's executor_profile.files.exectrace, beside its CSV), if
    the sidecar names one and it is there."""
    prof = meta.get("executor_profile")
    name = ((prof or {}).get("files") or {}).get("exectrace") if isinstance(prof, dict) else None
    if not name or not meta.get("_csv"):
        return None
    p = Path(name)
    p = p if p.is_absolute() else Path(meta["_csv"]).parent / p
    return p if p.is_file() else None


__all__ = ["CATEGORY_COLOURS", "GanttData", "GanttRow", "TASK_PRIORITY", "gantt", "gantt_data", "merge_close",
           "trace_path"]
