"""The statistics panel: a run's summary, the same numbers its JSON sidecar carries."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from PySide6.QtWidgets import QFormLayout, QGroupBox, QLabel

from mmanalysis import variance_text
from mmanalysis.latstats import run_summary

from mmsched.model.event import OUTCOMES
from mmsched.verdict.stats import summarize
from mmrig.gui.rows import Row

# (label, summary key, format): a format string, or a function (the variance: mmanalysis.variance_text, the
# one way every view of the project shows a variance: us², 4 significant digits, grouped)
STAT_FIELDS = (("n (ok+late)", "n", "{:d}"), ("mean", "mean_us", "{:.3f} us"), ("variance", "variance_us2", variance_text),
               ("min", "min_us", "{:.3f} us"), ("p50", "p50_us", "{:.3f} us"), ("p99", "p99_us", "{:.3f} us"),
               ("p99.9", "p999_us", "{:.3f} us"), ("max", "max_us", "{:.3f} us"))


class StatsPanel(QGroupBox):
    """The run's summary (mmsched.verdict.stats.summarize, the same numbers the JSON sidecar carries)."""

    def __init__(self, title: str = "Statistics", parent=None) -> None:
        super().__init__(title, parent)
        form = QFormLayout(self)
        form.setContentsMargins(8, 4, 8, 4)
        form.setVerticalSpacing(1)
        self.labels: dict[str, QLabel] = {}
        for text, key, _ in STAT_FIELDS:
            self.labels[key] = QLabel("-")
            form.addRow(text, self.labels[key])
        self.labels["outcomes"] = QLabel("-")
        form.addRow("ok/late/early/missed/lost", self.labels["outcomes"])
        self.labels["on_time_share"] = QLabel("-")
        form.addRow("on time", self.labels["on_time_share"])
        self.labels["unmeasurable"] = QLabel("-")
        form.addRow("not measurable", self.labels["unmeasurable"])
        self.summary: dict[str, Any] | None = None

    def show_rows(self, rows: Sequence[Row]) -> dict[str, Any]:
        done = [r for r in rows if r.outcome is not None]
        s = summarize(done)   # type: ignore[arg-type] - Row has the fields summarize reads
        self.show_summary(s, pending=len(rows) - len(done))
        return s

    def show_arrays(self, lat: np.ndarray, code: np.ndarray, unmeasurable: int = 0) -> dict[str, Any]:
        """show_rows from the model's per-event arrays (latency or NaN, outcome code or -1): the same numbers
        as summarize over the finished rows, computed in numpy instead of a walk over the row list."""
        counts = np.bincount(code[code >= 0].astype(np.intp), minlength=len(OUTCOMES))
        done = int(counts.sum())
        lat_ok = lat[(code == OUTCOMES.index("ok")) | (code == OUTCOMES.index("late"))]
        lat_ok = lat_ok[~np.isnan(lat_ok)]        # NaN: not measurable (the model keeps no latency for them)
        s = run_summary(lat_ok, {o: int(counts[i]) for i, o in enumerate(OUTCOMES)}, unmeasurable)
        self.show_summary(s, pending=int(code.size) - done)
        return s

    def show_summary(self, s: dict[str, Any], pending: int = 0) -> None:
        self.summary = s
        for _, key, fmt in STAT_FIELDS:
            v = s.get(key)
            self.labels[key].setText("-" if v is None else fmt(v) if callable(fmt) else fmt.format(v))
        o = s.get("outcomes", {})
        text = "/".join(str(o.get(k, 0)) for k in ("ok", "late", "early", "missed", "lost"))
        self.labels["outcomes"].setText(text + (f"  (+{pending} pending)" if pending else ""))
        share = s.get("on_time_share")
        self.labels["on_time_share"].setText("-" if share is None else f"{100 * share:.1f} %")
        self.labels["unmeasurable"].setText(f"{s.get('unmeasurable') or 0} (host stall: left out)")
