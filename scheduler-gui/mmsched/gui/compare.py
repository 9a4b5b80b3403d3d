"""Two earlier runs side by side: their statistics and their latency plots overlaid (blue: A, red: B)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QVBoxLayout

from ..load import condition
from .rows import load_run
from .widgets import Plots, StatsPanel


def load_name(value: object) -> str:
    """The run's load condition (a sidecar from before named loads has true/false: all/idle)."""
    try:
        return condition(value)
    except ValueError:
        return str(value)


class CompareWindow(QDialog):
    def __init__(self, a: Path, b: Path, parent=None) -> None:
        super().__init__(parent)
        self.runs = [load_run(a), load_run(b)]
        names = [r[2] for r in self.runs]
        self.setWindowTitle(f"compare: {names[0]} vs {names[1]}")
        self.resize(1100, 700)
        lay = QVBoxLayout(self)
        top = QHBoxLayout()
        self.panels: list[StatsPanel] = []
        for (rows, sidecar, name), colour in zip(self.runs, Plots.COLOURS):
            panel = StatsPanel(name)
            panel.setStyleSheet(f"QGroupBox {{ color: {colour}; font-weight: bold; }}")
            summary = (sidecar or {}).get("summary")
            if summary:
                panel.show_summary(summary)
            else:
                panel.show_rows(rows)
            cfg = (sidecar or {}).get("config") or {}
            col = QVBoxLayout()
            col.addWidget(panel)
            col.addWidget(QLabel(f"mode {cfg.get('mode', '?')}, distance {cfg.get('distance', '?')}, "
                                 f"load {load_name(cfg.get('load'))}, "
                                 f"{'valid' if (sidecar or {}).get('valid', True) else 'INVALID'}"))
            top.addLayout(col)
            self.panels.append(panel)
        lay.addLayout(top)
        self.plots = Plots()
        self.plots.show([r[0] for r in self.runs])
        lay.addWidget(self.plots, 1)
