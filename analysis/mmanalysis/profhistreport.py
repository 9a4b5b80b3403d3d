"""The report's table of the profilers' own histograms: for each run of a periodic series on an AVR profiler
(protocol 6, the sidecar's `profiler_histogram`: docs/data-format.md), what the profiler counted and measured
itself, and whether it agrees with the PC's figures from the same edges, cell for cell."""

from __future__ import annotations

from typing import Any, Mapping

HEADERS = ["run", "cell us", "ok", "late", "early", "missed", "stray", "min us", "mean us", "max us", "final",
           "same cells as the PC's"]

WORDS = ("The AVR profiler joins each executor edge of a periodic series to its moment itself and keeps 1 us "
         "cells, min/mean/max and the outcomes, reported once a second and at the end (SPEC.md HIST_ARM). While the "
         "RESULTs still come the PC checks every cell against its own; a run where they differ is invalid, a fault "
         "of the rig. `missed` is the profiler's own count (a moment whose window closed with no edge). A run on the "
         "histogram alone (--no-raw) has no event rows: its figures are here only.")


def _agrees(ph: Mapping[str, Any]) -> str:
    a = ph.get("agreement") or {}
    if not a.get("checked"):
        return f"not checked: {a.get('why')}"
    return "yes" if a.get("agrees") else f"NO: {a.get('cells_differing')} cells differ"


def counted_runs(meta: Mapping[str, Mapping[str, Any]]) -> set[str]:
    """The runs measured by the profiler's histogram alone (`mmrig run --no-raw`): no event rows, their figures
    the sidecar's summary and this table's, never the run table's or the figures' (which read rows)."""
    return {r for r, m in meta.items() if ((m or {}).get("summary") or {}).get("from_profiler_histogram")}


def rows(meta: Mapping[str, Mapping[str, Any]], runs: list[str]) -> list[list[Any]]:
    out = []
    for r in runs:
        ph = (meta.get(r) or {}).get("profiler_histogram")
        if not ph:
            continue
        out.append([r, ph.get("cell_us"), ph.get("ok"), ph.get("late"), ph.get("early"), ph.get("missed"),
                    ph.get("stray"), ph.get("min_us"), ph.get("mean_us"), ph.get("max_us"),
                    "yes" if ph.get("final") else "NO", _agrees(ph)])
    return out


__all__ = ["HEADERS", "WORDS", "counted_runs", "rows"]
