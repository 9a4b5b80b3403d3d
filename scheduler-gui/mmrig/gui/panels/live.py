"""The live view of a run (or of an opened one): the timecode and the event LEDs, the banner, normal mode's
latency budget, the event table beside the latency plots, and the statistics panel and the progress bar, which
the window places elsewhere. It redraws the plots and statistics from the event model on a timer of its own."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (QHBoxLayout, QHeaderView, QLabel, QSplitter, QStyle, QTableView, QVBoxLayout,
                               QWidget)

from mmsched.verdict.budget import format_budget
from mmrig.gui.model import NCOLS, EventModel
from mmrig.gui.widgets.explanation import HEIGHT as EXPLANATION_HEIGHT, ExplanationPane
from mmrig.gui.widgets.leds import Leds
from mmrig.gui.widgets.plots import Plots
from mmrig.gui.widgets.progress import RunProgress
from mmrig.gui.widgets.stats import StatsPanel
from mmrig.gui.widgets.timecode import TimecodeDisplay

REDRAW_MS = 60      # live redraw tick; LIVE_PARTS take turns, so each is redrawn every 4 * 60 ms
LIVE_PARTS = ("time", "hist", "cdf", "stats")
PROBLEM_STYLE = "background:#fdecea;color:#611a15;padding:4px;border:1px solid #e6a39c;"
NOTICE_STYLE = "background:#fff4e5;color:#663c00;padding:4px;"


class LivePanel(QWidget):
    """`tick_us`: the profiler's tick now (the warm-up is found in ticks). `running`: a run goes (the progress
    follows the model). `summary`: an opened run's own summary, shown instead of one computed from its rows;
    `viewing`: an opened run is shown, so the live tick leaves the statistics alone."""

    def __init__(self, model: EventModel, tick_us: Callable[[], float], parent=None) -> None:
        super().__init__(parent)
        self.model = model
        self.tick_us = tick_us
        self.running = False
        self.viewing = False
        self.summary: dict[str, Any] | None = None
        self.follow = True
        self._drawn_revision = -1
        self._round: list[str] = []              # live redraw: parts still to draw in this round
        self._round_resets = 0
        # the events ended and created as the statistics last counted them: the progress bar and its text show these
        # too, so the three never disagree in one frame (the statistics are redrawn once a round, the progress's
        # clock every tick)
        self._counts = (0, 0)
        self._points: list = []
        self._warm: list = []
        self._build()
        self.model.rowsInserted.connect(self._follow)
        # a new run, an opened one or a run's final rows: the explained event's row is gone, and so is the pane
        self.model.modelReset.connect(self.explanation.clear_event)
        # a banner or budget shown above the table (often at a run's end) makes it shorter: following, the last
        # rows stay in view
        self.live_rows = False                  # the rows are a run's (live, or just ended), not an opened run's
        self.table.verticalScrollBar().rangeChanged.connect(self._follow_live)
        # plots and statistics: one of the four per tick, in turn, so each updates at ~4 Hz and no single pass
        # of the event loop repaints all three plots at once
        self._redraw = QTimer(self)
        self._redraw.setInterval(REDRAW_MS)
        self._redraw.timeout.connect(self.redraw)
        self._redraw.start()

    def _build(self) -> None:
        col = QVBoxLayout(self)
        col.setContentsMargins(0, 0, 0, 0)
        top = QHBoxLayout()
        self.timecode = TimecodeDisplay()
        top.addWidget(self.timecode, 2)
        ledbox = QVBoxLayout()
        ledbox.addWidget(QLabel("event LEDs (profiler)"))
        self.leds = Leds()
        ledbox.addWidget(self.leds)
        top.addLayout(ledbox, 1)
        col.addLayout(top)
        self.banner = QLabel("")
        self.banner.setWordWrap(True)
        self.banner.hide()
        col.addWidget(self.banner)
        # normal mode's latency budget (budget.py) of the last run or the opened one, hidden otherwise; above the
        # stretching plots, so it never makes the window taller
        self.budget_label = QLabel()
        self.budget_label.setWordWrap(True)
        self.budget_label.setObjectName("budget")
        self.budget_label.setStyleSheet("background:#eef5fb;padding:3px;")
        self.budget_label.hide()
        col.addWidget(self.budget_label)
        self.split = QSplitter(Qt.Orientation.Horizontal)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(20)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)   # uniform rows
        self.table.setAlternatingRowColors(True)
        self.table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)   # an event is a row (explained)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.horizontalHeader().setStretchLastSection(True)
        # each column as wide as its header's lines or a typical cell, whichever is wider (scheduled tc: "82 +12.345
        # ms" on a grid), so the last, the outcome, keeps room beside the plots at 1280 x 800 with no horizontal
        # scrolling
        fm = self.table.fontMetrics()
        pad = 2 * (self.table.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin) + 1) + 2   # the cell's margins
        for c, sample in enumerate(("00000", "0", "000 +00.000 ms", "000.000", "00000", "00000", "00000.000")):
            lines = str(self.model.headerData(c, Qt.Orientation.Horizontal)).split("\n")
            self.table.setColumnWidth(c, max([fm.horizontalAdvance(sample)] + [fm.horizontalAdvance(t) + 4 for t in lines])
                                      + pad)
        # the outcome stretches into what is left, down to its own width ("ok, stalled"): the size the stretched last
        # section keeps as its least (left at Qt's 100 px, the table scrolled sideways beside the plots)
        self.table.setColumnWidth(7, fm.horizontalAdvance("ok, stalled") + pad + 4)
        self.table.setMinimumWidth(300)
        self._pad = pad
        # a long run's numbers outgrow the typical cells (event 149999, sent 3600.123 s, tick 12345 +1.250 ms: shown
        # as "149..." after 100,000 events): a column widens to its newest row's text, never narrows while it runs
        self.model.rowsInserted.connect(self._fit_columns)
        self.split.addWidget(self.table)
        self.plots = Plots()
        self.split.addWidget(self.plots)
        self.split.setSizes([520, 380])
        # the selected event's explanation under the table and plots (hidden until an event is selected); the user
        # may drag the handle between them
        self.explanation = ExplanationPane()
        self.table_split = QSplitter(Qt.Orientation.Vertical)
        self.table_split.addWidget(self.split)
        self.table_split.addWidget(self.explanation)
        self.table_split.setCollapsible(0, False)
        col.addWidget(self.table_split, 1)
        # placed by the window: the statistics under the settings, the progress under the table
        self.stats = StatsPanel()
        self.progress = RunProgress()

    # ---- what is shown -------------------------------------------------------------------------------------
    def open_explanation(self) -> None:
        """The explanation pane in view, at its own height the first time (the table and plots keep the rest)."""
        if not self.explanation.isVisible() or self.table_split.sizes()[1] == 0:
            total = sum(self.table_split.sizes())
            self.explanation.show()
            self.table_split.setSizes([max(total - EXPLANATION_HEIGHT, 1), EXPLANATION_HEIGHT])

    def start_live(self, count: int | None, duration_s: float | None) -> None:
        """A run starts: live statistics, an empty table, the progress from zero."""
        self.viewing = False
        self.summary = None
        self.show_budget(None)          # the last normal run's budget is not this run's
        self.live_rows = True
        self.stats.setTitle("Statistics (live)")
        self.model.clear()
        self.progress.start(count, duration_s)
        self._counts = (0, 0)
        self.timecode.reset()
        self.plots.set_series(1)

    def show_opened(self, name: str, summary: dict[str, Any] | None) -> None:
        """An opened run: its rows are in the model; its own summary, if it has one, is what the statistics say."""
        self.viewing = True
        self.live_rows = False
        self.summary = summary
        self.plots.set_series(1)
        self.stats.setTitle(f"Statistics: {name}")

    def show_budget(self, sidecar: dict[str, Any] | None) -> None:
        """Normal mode: why its events were as late as they were (the sidecar's budget), else nothing."""
        budget = (sidecar or {}).get("budget")
        if not budget:
            self.budget_label.hide()
            self.budget_label.clear()
            return
        self.budget_label.setText("Latency budget: " + format_budget(budget))
        self.budget_label.show()

    def show_banner(self, html: str, style: str = PROBLEM_STYLE) -> None:
        self.banner.setText(html)
        self.banner.setStyleSheet(style)
        self.banner.show()

    def hide_banner(self) -> None:
        self.banner.hide()

    def ended(self) -> int:
        """Events of the run that have ended (an outcome)."""
        _, code = self.model.arrays()
        return int(np.count_nonzero(code >= 0))

    def update_progress(self) -> None:
        if self.running:
            self.progress.update_counts(*self._counts)

    def _count(self, code: np.ndarray) -> None:
        """The counts the statistics were drawn from (`code`: the model's outcome codes), for the progress."""
        self._counts = (int(np.count_nonzero(code >= 0)), int(code.size))
        self.update_progress()

    def _fit_columns(self, *_: Any) -> None:
        fm, last = self.table.fontMetrics(), self.model.rowCount() - 1
        for c in range(NCOLS - 1):                 # (the outcome, the last, stretches into what is left)
            text = self.model.data(self.model.index(last, c)) or ""
            if (w := fm.horizontalAdvance(text) + self._pad) > self.table.columnWidth(c):
                self.table.setColumnWidth(c, w)

    def _follow(self, *_: Any) -> None:
        if self.follow:
            self.table.scrollToBottom()

    def _follow_live(self, *_: Any) -> None:
        if self.live_rows:
            self._follow()

    def follow_to_end(self) -> None:
        """The run ended and its final rows replaced the live ones (a model reset, which scrolls the table to its
        top and inserts no rows): "Follow newest event" shows the last of them."""
        self._follow()

    def set_follow(self, on: bool) -> None:
        self.follow = on

    def set_axis_mode(self, mode: str, redraw: bool = True) -> None:
        """auto, log or linear latency axes."""
        self.plots.set_axis_mode(mode)
        if redraw:
            self.redraw(force=True)

    def redraw(self, force: bool = False) -> None:
        """force: everything now (a finished or opened run, the axis switched). Otherwise the live tick: when
        the model moved, start a round over LIVE_PARTS, one part per tick."""
        self.update_progress()
        if force:
            self._round = []
            self._drawn_revision = self.model.revision
            self._warm = [self.model.warmup(self.tick_us())]
            self.plots.show_arrays([self.model.latency_points()], warmup=self._warm)
            if self.viewing and self.summary:
                self.stats.show_summary(self.summary)
            else:      # every event's arrays (the table holds a run of hours' newest rows only): summarize's numbers
                lat, code = self.model.arrays()
                self.stats.show_arrays(lat, code, self.model.unmeasurable())
            self._count(self.model.arrays()[1])
            return
        if self._round and self._round_resets != self.model.resets:
            self._round = []                               # the model was cleared or replaced mid-round
        if not self._round:
            if self.model.revision == self._drawn_revision:
                return
            self._drawn_revision = self.model.revision
            self._round = list(LIVE_PARTS)
            self._round_resets = self.model.resets
            self._points = [self.model.latency_points()]
            self._warm = [self.model.warmup(self.tick_us())]
        part = self._round.pop(0)
        if part == "stats":
            lat, code = self.model.arrays()
            if not self.viewing:
                self.stats.show_arrays(lat, code, self.model.unmeasurable())
            self._count(code)
        else:
            self.plots.show_arrays(self._points, parts=(part,), warmup=self._warm)
