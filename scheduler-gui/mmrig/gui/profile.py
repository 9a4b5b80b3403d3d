"""The executor profile window (after the ProfileAnalyzer of Prisching and Rinner, "Thread-based analysis of embedded
applications"): the Gantt chart of a traced run on top, and below it, one column per run (one to four, side by side),
the figures the run's sidecar carries in `executor_profile` (mmanalysis.exectrace.profile): per task and interrupt
C_i and T_i (min / avg / max), U_i, its share of the trace's span; U, their sum, and the idle time; processor time
by category (Kohout, "Hardware Support for Real-Time Operating Systems", 2002); and the service calls as before/after
pairs (the table of Nordström et al., "Application Specific Real-Time Microkernel in Hardware": the context switch).

A run that was not traced gets one line saying so; a trace file that is missing or cannot be read gets one
message where the chart would be; neither is an exception the user sees."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QDialog, QFileDialog, QGroupBox, QHBoxLayout,
                               QLabel, QPushButton, QScrollArea, QSizePolicy, QSplitter,
                               QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from mmanalysis import exectrace as et

from mmrig.gui.gantt import CATEGORY_COLOURS, GanttData, GanttWidget
from mmrig.gui.panels.runs_folder import RUN_FILES
from mmrig.gui.screenfit import fit_to_screen

MAX_RUNS = 4
NOT_TRACED = ("not traced: this run has no executor profile. Run it on the virtual bench with --trace "
              "(in the GUI: \"trace the executor\") to record one.")


@dataclass
class ProfileRun:
    """A run as the profile window sees it: its sidecar and where the sidecar's file names are relative to."""

    name: str
    sidecar: dict[str, Any]
    folder: Path | None
    trace: Path | None = None          # the executor trace, when known apart from the sidecar (RunResult.exec_trace)

    @property
    def profile(self) -> dict[str, Any] | None:
        p = self.sidecar.get("executor_profile")
        return p if isinstance(p, dict) and p.get("tasks") is not None else None

    @property
    def load_text(self) -> str:
        cfg = self.sidecar.get("config") or {}
        text = cfg.get("executor_load_text")
        if text is None and isinstance(cfg.get("executor_load"), dict):
            el = cfg["executor_load"]
            parts = (["cpu"] if el.get("cpu") else []) + \
                    ([f"periodic={el['period_us']}/{el['exec_us']}"] if el.get("period_us") else []) + \
                    ([f"rx={el['rx_per_s']:g}"] if el.get("rx_per_s") else [])
            text = ",".join(parts) or "none"
        return str(text or "none")

    def trace_file(self) -> Path | None:
        """The .exectrace file: RunResult's, else the sidecar's `executor_profile.files.exectrace` beside
        the JSON; None if neither names one."""
        if self.trace is not None:
            return Path(self.trace)
        files = (self.profile or {}).get("files") or {}
        name = files.get("exectrace")
        if not name:
            return None
        p = Path(name)
        return p if p.is_absolute() or self.folder is None else self.folder / p

    @classmethod
    def from_json(cls, path: Path | str) -> "ProfileRun":
        """OUT.json (or OUT.csv: its sidecar beside it). ValueError naming the file if it is not a run's sidecar."""
        p = Path(path)
        if p.suffix != ".json":
            p = p.with_suffix(".json")
        try:
            sidecar = json.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ValueError(f"{p}: no such file (a run's sidecar, OUT.json, is written beside OUT.csv)") from None
        except OSError as exc:
            raise ValueError(f"{p}: cannot read it ({exc.strerror or exc})") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(f"{p}: not a run's JSON sidecar ({exc})") from None
        if not isinstance(sidecar, dict):
            raise ValueError(f"{p}: not a run's JSON sidecar (not an object)")
        return cls(str(sidecar.get("name") or p.stem), sidecar, p.parent)

    @classmethod
    def from_result(cls, result: Any) -> "ProfileRun":
        """A finished run (mmsched.model.result.RunResult) straight from memory."""
        folder = Path(result.json_path).parent if getattr(result, "json_path", None) else None
        return cls(result.name, result.sidecar, folder, getattr(result, "exec_trace", None))


def _f(x: float | None, digits: int = 2) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _us(x: float | None) -> str:
    """A time in us: two decimals below 100 us, whole microseconds above."""
    if x is None:
        return "-"
    return f"{x:.2f}" if abs(x) < 100 else f"{x:,.0f}".replace(",", " ")


def _pct(x: float | None, digits: int = 2) -> str:
    return "-" if x is None else f"{100 * x:.{digits}f} %"


def _item(text: str, align_right: bool = True, tip: str | None = None) -> QTableWidgetItem:
    it = QTableWidgetItem(text)
    it.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
    if align_right:
        it.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    if tip:
        it.setToolTip(tip)
    return it


def _table(headers: list[str], tips: list[str] | None = None) -> QTableWidget:
    t = QTableWidget(0, len(headers))
    t.setHorizontalHeaderLabels(headers)
    if tips:
        for i, tip in enumerate(tips):
            t.horizontalHeaderItem(i).setToolTip(tip)
    t.verticalHeader().setVisible(False)
    t.verticalHeader().setDefaultSectionSize(20)
    t.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    t.setAlternatingRowColors(True)
    t.setWordWrap(False)
    t.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    t.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    return t


def _fit(t: QTableWidget) -> None:
    """No inner scrolling: the table is as tall as its rows and at least as wide as its columns (the run's
    column, or the window's scroll area, gives the room)."""
    t.resizeColumnsToContents()
    hh = t.horizontalHeader()
    h = hh.sizeHint().height() + sum(t.rowHeight(r) for r in range(t.rowCount())) + 2 * t.frameWidth()
    t.setFixedHeight(h + 2)
    t.setFixedWidth(hh.length() + 2 * t.frameWidth() + 2)


class CategoryBar(QWidget):
    """Processor time by category (Kohout's thesis, "Hardware Support for Real-Time Operating Systems") as one
    stacked bar, in the Gantt's colours."""

    def __init__(self, shares: dict[str, float], parent=None) -> None:
        super().__init__(parent)
        self.shares = shares
        self.setFixedHeight(16)
        self.setMinimumWidth(120)
        self.setToolTip("  ".join(f"{c} {_pct(v)}" for c, v in shares.items()))

    def paintEvent(self, _event) -> None:  # noqa: N802 - Qt
        from PySide6.QtGui import QPainter

        p = QPainter(self)
        x, w = 0.0, self.width()
        total = sum(v for v in self.shares.values() if v) or 1.0
        for c, v in self.shares.items():
            if not v:
                continue
            width = w * v / total
            p.fillRect(int(round(x)), 0, max(1, int(round(x + width)) - int(round(x))), self.height(),
                       QColor(CATEGORY_COLOURS.get(c, "#888888")))
            x += width
        p.setPen(QColor("#666666"))
        p.drawRect(0, 0, w - 1, self.height() - 1)
        p.end()


TASK_COLUMNS = ["kind", "name", "category", "n", "C min", "C avg", "C max", "T min", "T avg", "T max", "U_i",
                "share"]
TASK_TIPS = ["isr: an interrupt vector, from entry to return; task: a FreeRTOS task, from the switch to it "
             "to the switch away", "vector or task",
             "which part of the executor it belongs to (Kohout's categories)",
             "instances in the trace", "computation time C_i, least (us): a task's instance leaves out the "
             "interrupts and sleep inside it", "computation time C_i, average (us)", "computation time C_i, most (us)",
             "period T_i, least (us): between the starts of successive instances", "period T_i, average (us)",
             "period T_i, most (us)", "utilization U_i: the cycles it ran over the trace's span",
             "measured share of the trace's processor time"]
SERVICE_COLUMNS = ["call", "before (us)", "after (us)", "difference (us)", "ratio", "n before / after"]


class RunPanel(QGroupBox):
    """One run's column: its load, the task table, U and idle, time by category, service calls."""

    def __init__(self, run: ProfileRun, colour: str, parent=None) -> None:
        super().__init__(run.name, parent)
        self.run = run
        self.setStyleSheet(f"QGroupBox {{ font-weight: bold; color: {colour}; }} "
                           f"QGroupBox QLabel, QGroupBox QTableWidget {{ font-weight: normal; color: black; }}")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 8, 6, 6)
        lay.setSpacing(4)
        cfg = run.sidecar.get("config") or {}
        self.config_label = QLabel(f"executor load <b>{run.load_text}</b> · mode {cfg.get('mode', '?')} · "
                                   f"dispatch {cfg.get('dispatch', '?')} · "
                                   f"{'valid' if run.sidecar.get('valid', True) else 'INVALID'}")
        lay.addWidget(self.config_label)
        self.tasks: QTableWidget | None = None
        self.categories: QTableWidget | None = None
        self.services: QTableWidget | None = None
        p = run.profile
        if p is None:
            self.summary = QLabel(f"<b>{run.name}</b> was {NOT_TRACED}")
            self.summary.setObjectName("not_traced")
            self.summary.setWordWrap(True)
            self.summary.setStyleSheet("background:#f3f3f3;color:#444;padding:8px;")
            lay.addWidget(self.summary)
            lay.addStretch(1)
            return
        idle = p.get("idle") or {}
        mhz = (p.get("cpu_hz") or 0) / 1e6
        self.summary = QLabel(
            f"<b>U = &Sigma; C<sub>i</sub>/T<sub>i</sub> = {_f(p.get('U'), 4)}</b> (all but the idle task) &nbsp;·&nbsp; "
            f"<b>idle {_pct(idle.get('share'))}</b> (asleep {_pct(idle.get('asleep_share'))}, idle task "
            f"{_pct(idle.get('idle_task_share'))})<br>{_f(p.get('seconds'), 3)} s at {mhz:g} MHz, "
            f"{p.get('switches', '-')} task switches, {p.get('interrupts', '-')} interrupts")
        self.summary.setObjectName("summary")
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.summary.setWordWrap(True)
        lay.addWidget(self.summary)

        self.tasks = _table(TASK_COLUMNS, TASK_TIPS)
        for r in p["tasks"]:
            c, t = r.get("C_us") or {}, r.get("T_us") or {}
            row = self.tasks.rowCount()
            self.tasks.insertRow(row)
            cat = r.get("category", "other")
            cells = [_item(r.get("kind", "?"), False), _item(str(r.get("name")), False), _item(cat, False),
                     _item(str(r.get("instances", "-"))), _item(_f(c.get("min"))), _item(_f(c.get("avg"))),
                     _item(_f(c.get("max"))), _item(_us(t.get("min"))), _item(_us(t.get("avg"))),
                     _item(_us(t.get("max"))), _item(_f(r.get("U"), 4)), _item(_pct(r.get("share")))]
            cells[2].setData(Qt.ItemDataRole.DecorationRole, QColor(CATEGORY_COLOURS.get(cat, "#888888")))
            for col, it in enumerate(cells):
                self.tasks.setItem(row, col, it)
        _fit(self.tasks)
        lay.addWidget(self.tasks, 0, Qt.AlignmentFlag.AlignLeft)

        # processor time by category (Kohout, "Hardware Support for Real-Time Operating Systems"): one stacked
        # bar and its figures, a column per category
        cats = p.get("by_category") or {}
        order = [c for c in list(et.CATEGORIES) + list(cats) if c in cats]
        order = list(dict.fromkeys(order))
        lay.addWidget(QLabel("Processor time by category"))
        self.category_bar = CategoryBar({c: cats[c] for c in order})
        lay.addWidget(self.category_bar, 0, Qt.AlignmentFlag.AlignLeft)
        self.categories = _table(order, [f"share of the trace's cycles spent in {c}" for c in order])
        for col, cat in enumerate(order):
            self.categories.horizontalHeaderItem(col).setData(Qt.ItemDataRole.DecorationRole,
                                                             QColor(CATEGORY_COLOURS.get(cat, "#888888")))
        if order:
            self.categories.insertRow(0)
            for col, cat in enumerate(order):
                self.categories.setItem(0, col, _item(_pct(cats[cat])))
        _fit(self.categories)
        self.category_bar.setFixedWidth(self.categories.width())
        lay.addWidget(self.categories, 0, Qt.AlignmentFlag.AlignLeft)

        svc = QVBoxLayout()
        lay.addWidget(QLabel("Service calls: interrupt without and with a task switch (medians)"))
        calls = p.get("service_calls") or []
        self.services = _table(SERVICE_COLUMNS, ["the service call (Nordström et al.'s form)",
                                                 "median duration, before", "median duration, after",
                                                 "after - before", "after / before", "instances measured"])
        for s in calls:
            row = self.services.rowCount()
            self.services.insertRow(row)
            for col, it in enumerate([_item(str(s.get("call")), False),
                                      _item(_f(s.get("before_us")), tip=s.get("before")),
                                      _item(_f(s.get("after_us")), tip=s.get("after")),
                                      _item(_f(s.get("difference_us"))), _item(_f(s.get("ratio"))),
                                      _item(f"{s.get('n_before', '-')} / {s.get('n_after', '-')}")]):
                self.services.setItem(row, col, it)
        _fit(self.services)
        svc.addWidget(self.services, 0, Qt.AlignmentFlag.AlignLeft)
        whats = sorted({(s.get("before"), s.get("after")) for s in calls})
        note = "; ".join(f"before: {b}, after: {a}" for b, a in whats) if whats else \
            "no interrupt in this trace both switched tasks and returned without switching: no context-switch pair"
        self.services_note = QLabel(note)
        self.services_note.setWordWrap(True)
        self.services_note.setStyleSheet("color:#555;")
        svc.addWidget(self.services_note)
        # the context switch (exectrace.context_switch), beside the paper's section 7.1 figure
        cs = p.get("context_switch") or {}
        if cs:
            ours = (f"<b>{cs['us']:.2f} us</b> (from {', '.join(cs.get('from') or [])})" if cs.get("us") is not None
                    else f"not measured: {cs.get('why', 'no same-work pairs')}")
            restore = f"{cs['restore_us']:.3f} us" if cs.get("restore_us") is not None else "-"
            self.context_switch = QLabel(f"Context switch: {ours}; its restore half (pxCurrentTCB store to the RETI) "
                                         f"{restore}. The paper's RTK (section 7.1): 14.245 us, 6.41 us without the FPU.")
            self.context_switch.setWordWrap(True)
            svc.addWidget(self.context_switch)
        lay.addLayout(svc)
        lay.addStretch(1)

    def task_rows(self) -> list[list[str]]:
        """The task table as text, row by row (tests)."""
        t = self.tasks
        if t is None:
            return []
        return [[t.item(r, c).text() for c in range(t.columnCount())] for r in range(t.rowCount())]


PANEL_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd")


class WrapScroll(QScrollArea):
    """A scroll area whose widget gets the height its word-wrapped lines need at the area's width. QScrollArea
    sizes its widget by the minimum size hint, which leaves height-for-width out: the runs' columns were squeezed
    to it and their last table clipped, with no scroll bar to reach it."""

    def fit_height(self) -> None:
        w = self.widget()
        if w is None or w.layout() is None:
            return
        width = max(self.viewport().width(), w.minimumSizeHint().width())
        need = w.layout().totalHeightForWidth(width)
        if need > 0:
            w.setMinimumHeight(need)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt
        super().resizeEvent(event)
        self.fit_height()


class ProfileWindow(QDialog):
    def __init__(self, runs: list[ProfileRun], parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Executor profile")
        fit_to_screen(self, 1500, 950)         # room for four runs side by side; no more than the screen has
        self.runs: list[ProfileRun] = []
        self.panels: list[RunPanel] = []
        self.messages: list[str] = []              # what the window said (tests read them)
        self._gantt_cache: dict[int, GanttData | str] = {}
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        top = QHBoxLayout()
        top.addWidget(QLabel("Gantt chart of"))
        self.run_combo = QComboBox()
        self.run_combo.setMinimumWidth(320)
        self.run_combo.currentIndexChanged.connect(self.show_gantt)
        top.addWidget(self.run_combo)
        self.add_button = QPushButton("Add runs...")
        self.add_button.setAutoDefault(False)
        self.add_button.setToolTip(f"Compare up to {MAX_RUNS} runs side by side (NAME.csv or NAME.json)")
        self.add_button.clicked.connect(self.add_dialog)
        top.addWidget(self.add_button)
        self.status = QLabel("")
        self.status.setWordWrap(True)
        top.addWidget(self.status, 1)
        lay.addLayout(top)
        split = QSplitter(Qt.Orientation.Vertical)
        self.gantt = GanttWidget()
        self.gantt.setMinimumHeight(220)
        split.addWidget(self.gantt)
        self.columns_host = QWidget()
        self.columns = QHBoxLayout(self.columns_host)
        self.columns.setContentsMargins(0, 0, 0, 0)
        scroll = WrapScroll()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.columns_host)
        split.addWidget(scroll)
        self.columns_scroll = scroll
        split.setStretchFactor(0, 4)
        split.setStretchFactor(1, 5)
        split.setSizes([400, 500])
        self.split = split
        lay.addWidget(split, 1)
        for r in runs:
            self.add_run(r)

    # ---- runs ------------------------------------------------------------------------------------------
    def say(self, text: str) -> None:
        self.messages.append(text)
        self.status.setText(text)

    def add_run(self, run: ProfileRun) -> RunPanel | None:
        if len(self.runs) >= MAX_RUNS:
            self.say(f"At most {MAX_RUNS} runs side by side: {run.name} not added.")
            return None
        colour = PANEL_COLOURS[len(self.runs) % len(PANEL_COLOURS)]
        self.runs.append(run)
        panel = RunPanel(run, colour)
        panel.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self.panels.append(panel)
        self.columns.addWidget(panel, 1)
        self.columns_scroll.fit_height()
        self.run_combo.addItem(f"{run.name}  (load {run.load_text})" + ("" if run.profile else "  - not traced"))
        self.setWindowTitle("Executor profile: " + " vs ".join(r.name for r in self.runs))
        if len(self.runs) == 1 or (self.run_combo.currentIndex() >= 0 and
                                   self.runs[self.run_combo.currentIndex()].profile is None and run.profile):
            self.run_combo.setCurrentIndex(len(self.runs) - 1)
        return panel

    def add_paths(self, paths: list[Path | str]) -> int:
        """Adds runs from their OUT.json files; says what could not be read. Returns how many were added."""
        added = 0
        for path in paths:
            try:
                run = ProfileRun.from_json(path)
            except ValueError as exc:
                self.say(f"Cannot open {Path(path).name}: {exc}")
                continue
            added += self.add_run(run) is not None
        return added

    def add_dialog(self) -> None:
        start = str(self.runs[-1].folder) if self.runs and self.runs[-1].folder else ""
        paths, _ = QFileDialog.getOpenFileNames(self, "Add runs to compare", start, RUN_FILES)
        if paths:
            self.add_paths(paths)

    # ---- the chart -------------------------------------------------------------------------------------
    def gantt_data(self, i: int) -> GanttData | str:
        """Run i's chart, or the message to show instead (read once, kept)."""
        if i in self._gantt_cache:
            return self._gantt_cache[i]
        run = self.runs[i]
        if run.profile is None:
            out: GanttData | str = f"{run.name} was {NOT_TRACED}"
        else:
            path = run.trace_file()
            if path is None:
                out = (f"{run.name}: the sidecar has an executor profile but names no trace file "
                       f"(executor_profile.files.exectrace): the tables below are all there is.")
            else:
                try:
                    out = GanttData.from_trace(et.read(path))
                except et.ExecTraceError as exc:
                    out = f"Cannot read the executor trace of {run.name}: {exc}"
                except FileNotFoundError:
                    out = (f"The executor trace of {run.name} is missing: {path} (keep NAME.exectrace beside "
                           f"NAME.json when moving a run).")
                except OSError as exc:
                    out = f"Cannot read the executor trace of {run.name}: {path}: {exc.strerror or exc}"
        self._gantt_cache[i] = out
        return out

    def show_gantt(self, i: int) -> None:
        if not 0 <= i < len(self.runs):
            return
        from PySide6.QtWidgets import QApplication

        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            data = self.gantt_data(i)
        finally:
            QApplication.restoreOverrideCursor()
        if isinstance(data, str):
            self.gantt.show_message(data)           # said once, where the chart would be
            self.status.setText("")
            if self.runs[i].profile is not None:
                self.messages.append(data)
        else:
            # a zoomed-in view stays where it was when switching runs: the same stretch of two runs compared
            old = self.gantt.data
            a, b = self.gantt.x_range() if old is not None and self.gantt.message_text() is None else (0.0, 0.0)
            zoomed = old is not None and b - a < old.total_ms * 0.999
            self.gantt.set_data(data)
            if zoomed and a < data.total_ms:
                self.gantt.set_x_range(a, min(b, data.total_ms))
            self.status.setText(f"{self.runs[i].name}: {data.segments} segments, "
                                f"{data.total_ms / 1000:.3f} s of the executor")
