"""A campaign's figures (`mmrig sweep`, docs/campaigns.md), matplotlib without pyplot as plots.py.

- on_time: the share of events on time (ok / events) against schedule distance, one line per rate, baud,
  dispatch path (and load condition when there are several), the minimum safe distance of each line marked:
  the smallest distance at which every event was on time, and at every larger distance too.
- highest_clean_rates: for each baud, distance, dispatch path and load, the highest event rate the rig
  carried with nothing lost: every event on time, none skipped by the generator, the run valid, at that
  rate and every slower one of the campaign.

Read from the campaign folder: FOLDER/campaign.json (the axes and options, the sessions, the status) and
FOLDER/points.jsonl, the points' record: one JSON line per point each time its state changed (appended by
`mmrig sweep`, the last line of a point is its state), flat, so that `points_table` reads it into pandas in one
call. A campaign of format version 1 (every point inside campaign.json, no points.jsonl) is read as it was.
Nothing here knows how the points were run.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from . import canvas
from .plots import save
from .schema import NOMINAL_TICK_S


# The campaign folder's names and format, defined here for both its writer (mmrig.sweep, which may import
# mmanalysis) and its readers (this module, the GUI): mmanalysis never imports mmrig.
CAMPAIGN_FILE = "campaign.json"
CAMPAIGN_FORMAT = "mmrig-campaign"
POINTS_FILE = "points.jsonl"
OUTCOME_KEYS = ("ok", "late", "early", "missed", "lost")
SUMMARY_KEYS = ("events", "on_time_share", "n", "mean_us", "p50_us", "p99_us", "max_us", "unmeasurable")
VALUE_KEYS = ("distance", "rate", "baud", "dispatch", "load")
ENTRY_KEYS = ("state", "runs", "error", "valid", "invalid_reason", "worker", "mmrig_version", "started", "ended",
              "wall_s", "skipped", "virtual_s")


def record_of(name: str, entry: dict[str, Any]) -> dict[str, Any]:
    """A point's entry (campaign.json's shape: values, summary with outcomes, files) as one flat line of
    points.jsonl: the axes' values, the state, the run's counts and figures as columns of their own."""
    s = entry.get("summary") or {}
    o = s.get("outcomes") or {}
    files = entry.get("files") or {}
    rec: dict[str, Any] = {"name": name, **{k: (entry.get("values") or {}).get(k) for k in VALUE_KEYS}}
    rec.update({k: entry.get(k) for k in ENTRY_KEYS})
    rec.update(run_baud=entry.get("baud"), csv=files.get("csv"), json=files.get("json"))
    rec.update({k: s.get(k) for k in SUMMARY_KEYS})
    rec.update({k: (o.get(k) if o else None) for k in OUTCOME_KEYS})
    return rec


def entry_of(rec: dict[str, Any]) -> dict[str, Any]:
    """A line of points.jsonl back in campaign.json's shape (what `series`, `highest_clean_rates` and the GUI read)."""
    entry: dict[str, Any] = {"values": {k: rec.get(k) for k in VALUE_KEYS}}
    entry.update({k: rec.get(k) for k in ENTRY_KEYS})
    entry["runs"] = int(rec.get("runs") or 0)
    if rec.get("state") == "done":
        entry.update(baud=rec.get("run_baud"), files={"csv": rec.get("csv"), "json": rec.get("json")},
                     summary={**{k: rec.get(k) for k in SUMMARY_KEYS},
                              "outcomes": {k: rec.get(k) or 0 for k in OUTCOME_KEYS}})
    return entry


def _complete_lines(path: Path) -> str:
    """points.jsonl's text up to its last whole line (a line being appended, or one a crash cut, is left out)."""
    try:
        text = path.read_bytes().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return ""
    return text[:text.rfind("\n") + 1]


def read_point_records(folder: Path | str) -> dict[str, dict[str, Any]]:
    """FOLDER/points.jsonl as {point name: its last line}; a line that is not a JSON object (cut short by a crash)
    is skipped."""
    out: dict[str, dict[str, Any]] = {}
    for line in _complete_lines(Path(folder) / POINTS_FILE).splitlines():
        try:
            rec = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(rec, dict) and isinstance(rec.get("name"), str):
            out[rec["name"]] = rec
    return out


def points_table(folder: Path | str):
    """FOLDER/points.jsonl as a pandas DataFrame, one row per point (its last line), read in one call: the
    figure's inputs as a table (columns: name, the axes, state, runs, valid, events, ok .. lost, on_time_share,
    p50_us .. max_us, worker, ...). An older campaign (no points.jsonl) gives its campaign.json's points."""
    import io

    import pandas as pd

    folder = Path(folder)
    text = _complete_lines(folder / POINTS_FILE)
    if not text and not (folder / POINTS_FILE).exists():
        doc = load_campaign(folder)
        return pd.DataFrame([record_of(n, e) for n, e in (doc.get("points") or {}).items()])
    df = pd.read_json(io.StringIO(text), lines=True) if text.strip() else pd.DataFrame(columns=["name"])
    return df.drop_duplicates("name", keep="last").reset_index(drop=True)


def load_campaign(folder: Path | str) -> dict[str, Any]:
    """The campaign's sidecar with every point's entry: campaign.json, its points taken from points.jsonl (the
    record) where there is one (campaign.json's own `points` is a snapshot, refreshed every few seconds during a run).
    OSError if it cannot be read; ValueError, naming the file, if it is not JSON or not a campaign."""
    folder = Path(folder)
    path = folder / CAMPAIGN_FILE
    for p in (path, folder / POINTS_FILE):       # a FIFO planted there would block the read forever
        if os.path.lexists(p) and not stat.S_ISREG(os.stat(p).st_mode):
            raise ValueError(f"{p}: a FIFO, a device or a socket holds the name, not a file: refused")
    try:
        doc = json.loads(path.read_text())
    except (ValueError, RecursionError) as exc:                # not UTF-8, not JSON, nested past the stack
        raise ValueError(f"{path}: not a readable campaign ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != CAMPAIGN_FORMAT:
        fmt = doc.get("format") if isinstance(doc, dict) else None
        raise ValueError(f"{path} is not an mmrig campaign (format {fmt!r})")
    points = dict(doc.get("points") or {})
    if (folder / POINTS_FILE).exists():
        for name, rec in read_point_records(folder).items():
            points[name] = entry_of(rec)
    doc["points"] = points
    return doc


def series(doc: dict[str, Any]) -> dict[tuple, list[tuple[int, float, bool]]]:
    """(rate, baud, dispatch, load) -> [(distance, on-time share, valid)] of the points that ran, by distance."""
    out: dict[tuple, list[tuple[int, float, bool]]] = {}
    for entry in doc.get("points", {}).values():
        s = entry.get("summary") or {}
        if entry.get("state") != "done" or s.get("on_time_share") is None:
            continue
        v = entry["values"]
        key = (v["rate"], v.get("baud") or entry.get("baud"), v["dispatch"], v["load"])
        out.setdefault(key, []).append((int(v["distance"]), float(s["on_time_share"]), bool(entry.get("valid"))))
    axes = doc.get("axes") or {}

    def order(key: tuple) -> tuple:   # the campaign's own order of each axis (tick before 2ticks before 50ms)
        return tuple((axes.get(a) or []).index(v) if v in (axes.get(a) or []) else 99
                     for a, v in zip(("rate", "baud", "dispatch", "load"), key)) + tuple(map(str, key))
    return {k: sorted(pts) for k, pts in sorted(out.items(), key=lambda kv: order(kv[0]))}


def min_safe_distance(points: list[tuple[int, float, bool]]) -> int | None:
    """The smallest distance whose point and every larger one's are valid and 100 % on time (None if the
    largest is not)."""
    safe = None
    for d, share, valid in sorted(points, reverse=True):
        if not (valid and share >= 1.0):
            break
        safe = d
    return safe


def events_per_s(rate: str) -> float:
    """A campaign's rate token ('tick', '2ticks', '50ms', '3.3ms') as events per second asked for."""
    if rate == "tick":
        return 1 / NOMINAL_TICK_S
    if rate.endswith("ticks"):
        return 1 / (int(rate[:-5]) * NOMINAL_TICK_S)
    return 1000.0 / float(rate[:-2])


@dataclass(frozen=True)
class CleanRate:
    per_s: float | None          # the highest rate carried clean (None: not even the slowest)
    rate: str | None             # its token
    next_rate: str | None        # the first faster rate that was not clean, and why
    why: str | None


def clean(entry: dict[str, Any]) -> str | None:
    """Why a point is not clean (every event on time, nothing skipped, valid), or None if it is."""
    s = entry.get("summary") or {}
    if entry.get("state") == "refused":            # never run: the scheduler refuses it (the line's budget)
        return f"refused, not run: {entry.get('error')}"
    if not entry.get("valid"):
        return f"invalid: {entry.get('invalid_reason')}"
    if (s.get("on_time_share") or 0) < 1.0:
        o = s.get("outcomes") or {}
        return "not all on time: " + ", ".join(f"{k} {v}" for k, v in o.items() if k != "ok" and v)
    if entry.get("skipped"):
        return f"{entry['skipped']} events not created (ids or the in-flight cap exhausted)"
    return None


def highest_clean_rates(doc: dict[str, Any]) -> dict[tuple, CleanRate]:
    """(baud, distance, dispatch, load) -> the highest rate carried clean at it and every slower rate of the
    campaign, and the first faster one that was not (a rate where nothing ran breaks the chain)."""
    groups: dict[tuple, list[tuple[float, str, dict[str, Any]]]] = {}
    for entry in doc.get("points", {}).values():
        if entry.get("state") not in ("done", "refused"):
            continue
        v = entry["values"]
        key = (v.get("baud") or entry.get("baud"), int(v["distance"]), v["dispatch"], v["load"])
        groups.setdefault(key, []).append((events_per_s(v["rate"]), v["rate"], entry))
    out = {}
    for key, pts in sorted(groups.items(), key=lambda kv: tuple(map(str, kv[0]))):
        best: tuple[float, str] | None = None
        stop: tuple[str, str] | None = None
        for per_s, rate, entry in sorted(pts, key=lambda t: t[0]):
            why = clean(entry)
            if why:
                stop = (rate, why)
                break
            best = (per_s, rate)
        out[key] = CleanRate(best[0] if best else None, best[1] if best else None,
                             stop[0] if stop else None, stop[1] if stop else None)
    return out


def on_time(doc_or_folder: dict[str, Any] | Path | str) -> Figure:
    doc = doc_or_folder if isinstance(doc_or_folder, dict) else load_campaign(doc_or_folder)
    lines = series(doc)
    loads = {k[3] for k in lines}
    fig = Figure(figsize=(8, 4.2))
    ax = fig.subplots()
    distances: set[int] = set()
    for i, (key, pts) in enumerate(lines.items()):
        rate, baud, dispatch, load = key
        label = f"rate {rate}, {baud} baud, {dispatch}" + (f", {load}" if len(loads) > 1 else "")
        safe = min_safe_distance(pts)
        label += f"  (safe from {safe} ahead)" if safe is not None else "  (no safe distance)"
        d = [p[0] for p in pts]
        y = [100 * p[1] for p in pts]
        distances.update(d)
        off = (i - (len(lines) - 1) / 2) * 0.03    # lines that coincide stay visible side by side
        color = f"C{i % 10}"
        ax.plot([x + off for x in d], y, "-", lw=1.4, color=color, label=label)
        ax.plot([x + off for x, p in zip(d, pts) if p[2]], [v for v, p in zip(y, pts) if p[2]], "o", ms=5,
                color=color)
        bad = [(x + off, v) for x, v, p in zip(d, y, pts) if not p[2]]
        if bad:
            ax.plot(*zip(*bad), "x", ms=8, color=color)
        if safe is not None:
            ax.plot([safe + off], [100], marker="*", ms=16, mfc="none", mec=color, mew=1.6)
    if any(not p[2] for pts in lines.values() for p in pts):
        ax.plot([], [], "kx", label="invalid run (kept, not a result)")
    ax.plot([], [], "k*", mfc="none", ms=12, label="minimum safe distance (100 % from here on)")
    ax.set_xticks(sorted(distances) or [1])
    ax.set_ylim(-3, 105)
    ax.set_xlabel("schedule distance (ticks ahead)")
    ax.set_ylabel("on time (ok / events, %)")
    o = doc.get("options", {})
    ax.set_title(f"on-time share against distance: campaign {doc.get('name')}, {o.get('count')} events a point, "
                 f"{'paced' if o.get('paced') else 'lockstep'}", fontsize=10)
    ax.grid(True, alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, loc="lower right")
    return canvas.fit(fig)


def write_figures(folder: Path | str) -> list[Path]:
    """FOLDER/figures/on_time.png and .svg from the campaign in FOLDER (load_campaign)."""
    folder = Path(folder)
    return save(on_time(folder), folder / "figures", "on_time")
