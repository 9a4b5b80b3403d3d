"""The scheduler's main window (the paper's Figure 3 in today's form)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import QByteArray, QSettings, QStandardPaths, Qt, QThread, QTimer
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import (QButtonGroup, QCheckBox, QComboBox, QFileDialog, QFormLayout, QGridLayout,
                               QGroupBox, QHBoxLayout, QHeaderView, QLabel, QLineEdit, QMainWindow, QMessageBox,
                               QPlainTextEdit, QPushButton, QRadioButton, QSlider, QSpinBox, QSplitter,
                               QTableView, QVBoxLayout, QWidget)

from mmanalysis.schema import NOMINAL_TICK_S

from mmsched.budget import format_budget
from mmsched.config import MODES, RunConfig
from mmsched.exload import ExecutorLoad
from mmsched.load import CONDITION_WORDS, CONDITIONS, condition as load_condition, unavailable as load_unavailable
from mmsched.export import write_run
from mmsched.result import RunResult
from mmsched.endpoint import Endpoint

from mmrig.endpoints import Target, choose_endpoint
from mmrig.gui.feed import EventFeed
from mmrig.gui.model import EventModel
from mmrig.gui.rows import Row, load_run
from mmrig.gui.widgets.controls import ElidedLabel, radio_pair
from mmrig.gui.widgets.leds import Leds
from mmrig.gui.widgets.load import LoadIndicator
from mmrig.gui.widgets.plots import Plots
from mmrig.gui.widgets.progress import RunProgress
from mmrig.gui.widgets.stats import StatsPanel
from mmrig.gui.widgets.timecode import TimecodeDisplay
from mmrig.gui.worker import Problem, ProbeWorker, RunWorker, explain, start_in_thread

RATE_STEP_MS = 10   # the rate slider: 0 = one event per tick, else value * 10 ms
DEFAULT_TICK_MS = 1000.0 * NOMINAL_TICK_S    # the profiler's tick as built, until a HELLO says otherwise
RUNS_ENV = "MMRIG_GUI_RUNS"  # a runs folder for this session (tests, scripts): before the saved setting


def default_runs_dir() -> Path:
    """Where runs auto-save unless the user chose a folder: the per-user application data folder
    (QStandardPaths.AppDataLocation, e.g. ~/.local/share/mmrig/scheduler on Linux) / runs, never the folder the
    app happened to be started from."""
    base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.GenericDataLocation)
    return Path(base or Path.home() / ".local" / "share") / "mmrig" / "scheduler" / "runs"


def rate_words(value: int, tick_ms: float = DEFAULT_TICK_MS) -> tuple[str, str]:
    """The rate slider's label and tooltip for its value: 0 is not "0 ms" but one event at every tick."""
    if value == 0:
        return (f"schedule rate: every tick ({tick_ms:.1f} ms)",
                f"0 (leftmost): one event at every tick of the profiler ({tick_ms:.2f} ms per tick), created right "
                f"after its TIMECODE. Move right for one event every {RATE_STEP_MS} ms .. "
                f"{200 * RATE_STEP_MS} ms instead.")
    ms = value * RATE_STEP_MS
    per_tick = tick_ms / ms
    return (f"schedule rate: every {ms} ms",
            f"one event every {ms} ms ({per_tick:.2g} per tick of {tick_ms:.1f} ms). "
            f"All the way left (0): one event at every tick.")
REDRAW_MS = 60      # live redraw tick; LIVE_PARTS take turns, so each is redrawn every 4 * 60 ms
LIVE_PARTS = ("time", "hist", "cdf", "stats")


def list_serial_ports() -> list[tuple[str, str]]:
    from mmsched.boards import list_ports   # the one listing, `mmrig boards`' too

    return [(p.device, p.description) for p in list_ports()]


class MainWindow(QMainWindow):
    def __init__(self, settings: QSettings | None = None, runs_dir: Path | None = None) -> None:
        super().__init__()
        self.settings = settings or QSettings("mmrig", "scheduler")
        # runs auto-save here: the caller's folder (tests), else $MMRIG_GUI_RUNS, else the folder the user chose
        # (saved), else the per-user data folder; shown in the status bar, File > Runs folder... changes it
        env = os.environ.get(RUNS_ENV)
        saved = self.settings.value("runs_dir")
        self.runs_dir = (Path(runs_dir) if runs_dir else Path(env) if env else Path(str(saved)) if saved
                         else default_runs_dir())
        self.tick_ms = DEFAULT_TICK_MS
        self.setWindowTitle("mmrig scheduler")
        self.model = EventModel(self)
        self.feed: EventFeed | None = None
        self.worker: RunWorker | None = None
        self.thread: QThread | None = None
        self.result: RunResult | None = None
        self.viewing: str | None = None
        self.problems: list[Problem] = []       # every message shown (tests read them)
        self.quiet = False                      # tests: no modal dialogs, messages go to the log and the banner
        self._drawn_revision = -1
        self._round: list[str] = []              # live redraw: parts still to draw in this round
        self._round_resets = 0
        self._points: list = []
        self._build()
        self._actions()
        self.restore_settings()
        self.on_mode_changed()
        self.refresh_ports()
        # Live plots and statistics: one of the four per tick, in turn, so each updates at ~4 Hz and no
        # single pass of the event loop repaints all three plots at once.
        self._redraw = QTimer(self)
        self._redraw.setInterval(REDRAW_MS)
        self._redraw.timeout.connect(self.redraw)
        self._redraw.start()

    # ---- building --------------------------------------------------------------------------------
    def _build(self) -> None:
        central = QWidget()
        root = QHBoxLayout(central)
        root.setContentsMargins(6, 6, 6, 6)
        left = QVBoxLayout()
        root.addLayout(left, 0)

        # connection
        conn = QGroupBox("Connection")
        cl = QGridLayout(conn)
        self.conn_bench, self.conn_serial, self.conn_group = radio_pair(self, "virtual bench", "serial ports")
        cl.addWidget(self.conn_bench, 0, 0)
        cl.addWidget(self.conn_serial, 0, 1)
        self.profiler_port = QComboBox()
        self.executor_port = QComboBox()
        for c in (self.profiler_port, self.executor_port):
            c.setEditable(True)
            c.setMinimumWidth(150)
        cl.addWidget(QLabel("profiler"), 1, 0)
        cl.addWidget(self.profiler_port, 1, 1)
        cl.addWidget(QLabel("executor"), 2, 0)
        cl.addWidget(self.executor_port, 2, 1)
        self.refresh_button = QPushButton("Refresh ports")
        self.probe_button = QPushButton("Connect / identify")
        cl.addWidget(self.refresh_button, 3, 0)
        cl.addWidget(self.probe_button, 3, 1)
        self.reset_on_open = QCheckBox("Opening a port resets the board (Arduino)")
        self.reset_on_open.setChecked(True)
        self.reset_on_open.setToolTip("An Arduino's USB port resets the board when it is opened, and its bootloader "
                                      "waits 0.8 s: the scheduler listens for the board's own HELLO first instead of "
                                      "asking at once (a byte then keeps it in the bootloader). Uncheck for an adapter "
                                      "that does not reset the board (docs/hardware.md).")
        cl.addWidget(self.reset_on_open, 5, 0, 1, 2)
        self.profiler_kind = QComboBox()
        self.profiler_kind.addItem("AVR (ATmega2560, input capture)", "avr")
        self.profiler_kind.addItem("8051 (87C51, polled: the paper's)", "8051")
        self.profiler_kind_tip = ("The bench's profiler: the ATmega2560 image, or the paper's 87C51 image on ucsim's "
                                  "8051 core, whose polled event input adds up to 684 us to each stamp "
                                  "(docs/bench.md)")
        self.profiler_kind.setToolTip(self.profiler_kind_tip)
        # on the bench the profiler row chooses its image, with boards its port (on_connection_changed shows one)
        cl.addWidget(self.profiler_kind, 1, 1)
        self.health_label = QLabel("not connected")
        self.health_label.setWordWrap(True)
        self.health_label.setTextFormat(Qt.TextFormat.RichText)
        self.health_label.setMinimumHeight(70)
        self.health_label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        cl.addWidget(self.health_label, 4, 0, 1, 2)
        left.addWidget(conn)
        self.conn_bench.toggled.connect(self.on_connection_changed)
        self.refresh_button.clicked.connect(self.refresh_ports)
        self.probe_button.clicked.connect(self.probe)

        # experiment
        exp = QGroupBox("Experiment")
        form = QFormLayout(exp)
        form.setVerticalSpacing(4)
        self.mode_buttons: dict[str, QRadioButton] = {}
        modes = QHBoxLayout()
        self.mode_group = QButtonGroup(self)
        for m, text in (("mixed", "&Mixed"), ("normal", "&Normal"), ("verification", "&Verification")):
            b = QRadioButton(text)
            self.mode_buttons[m] = b
            self.mode_group.addButton(b)
            modes.addWidget(b)
            b.toggled.connect(self.on_mode_changed)
        self.mode_buttons["mixed"].setChecked(True)
        form.addRow(modes)
        self.distance = QSlider(Qt.Orientation.Horizontal)
        self.distance.setRange(1, 64)
        self.distance.setValue(2)
        self.distance_label = QLabel()
        form.addRow(self.distance_label, self.distance)
        self.rate = QSlider(Qt.Orientation.Horizontal)
        self.rate.setRange(0, 200)
        self.rate_label = QLabel()
        form.addRow(self.rate_label, self.rate)
        self.accuracy = QSlider(Qt.Orientation.Horizontal)
        self.accuracy.setRange(0, 100)
        self.accuracy_label = QLabel()
        form.addRow(self.accuracy_label, self.accuracy)
        # normal mode: the run (and its firing thread) normally runs in a process of its own, away from the
        # GUI's interpreter lock; checked, it runs inside the GUI's process as it once did (issue 16)
        self.fire_in_gui = QCheckBox("Fire from the GUI process")
        self.fire_in_gui.setToolTip("Normal mode: run the experiment, and the thread that fires the FIRE frames, "
                                    "inside the GUI's process, sharing the interpreter with the live plots. "
                                    "Unchecked (the default), the run has a process of its own, as on the "
                                    "command line.")
        # normal mode: aim each FIRE by the clock servo (the profiler's own stamps) instead of TIMECODE
        # arrivals alone, the paper's way (docs/normal-mode.md)
        self.discipline = QCheckBox("Disciplined clock")
        self.discipline.setToolTip("Normal mode: the PC places tick starts from the profiler's stamps of its "
                                   "FIREs (a PTP-like servo) instead of from TIMECODE arrivals alone. Unchecked: "
                                   "the paper's naive PC (experiment 2).")
        normal_opts = QHBoxLayout()     # one row: the window keeps its height (the screenshots' 1280 x 800)
        normal_opts.setContentsMargins(0, 0, 0, 0)
        normal_opts.addWidget(self.discipline)
        normal_opts.addWidget(self.fire_in_gui)
        form.addRow(normal_opts)
        self.random_ids = QCheckBox("randomize event id")
        self.ids_row = QHBoxLayout()          # the trace box joins it below (one row: the window keeps its height)
        self.ids_row.setContentsMargins(0, 0, 0, 0)
        self.ids_row.addWidget(self.random_ids)
        form.addRow(self.ids_row)
        length = QHBoxLayout()
        self.length = QSpinBox()
        self.length.setRange(1, 1_000_000)
        self.length.setValue(200)
        self.length_unit = QComboBox()
        self.length_unit.addItems(["events", "seconds"])
        length.addWidget(self.length)
        length.addWidget(self.length_unit)
        form.addRow("run length", length)
        self.generation = QComboBox()
        self.generation.addItems(["aligned", "free"])
        self.dispatch = QComboBox()
        self.dispatch.addItems(["isr", "task"])
        gen_row = QHBoxLayout()               # generation and dispatch share a row (issue 19 added one below)
        gen_row.setContentsMargins(0, 0, 0, 0)
        gen_row.addWidget(QLabel("generation"))
        gen_row.addWidget(self.generation, 1)
        gen_row.addSpacing(8)
        dispatch_label = QLabel("executor dispatch")
        gen_row.addWidget(dispatch_label)
        gen_row.addWidget(self.dispatch, 1)
        form.addRow(gen_row)
        # issue 19: what the executor does besides firing (mmsched.exload), and the bench's trace of it
        self.executor_load = QLineEdit()
        self.executor_load.setPlaceholderText("none, or cpu,periodic=10ms/2ms,rx=20")
        self.executor_load.setClearButtonEnabled(True)
        self.executor_load_tip = ("The executor's load besides firing: cpu (a task below all others that never "
                                  "blocks), periodic=PERIOD/EXEC (a task above dispatch, released every PERIOD, "
                                  "computing EXEC), rx=N (N frames/s it decodes and drops). Not in normal mode.")
        self.executor_load.setToolTip(self.executor_load_tip)
        self.executor_load_error: str | None = None
        self.executor_load.textChanged.connect(self.check_executor_load)
        self.trace = QCheckBox("trace the executor")
        self.trace_tip = ("The bench records what the executor runs (NAME.exectrace, .perfetto-trace, .vcd) and "
                          "the sidecar gets its profile: View > Executor profile.")
        self.trace.setToolTip(self.trace_tip)
        self.ids_row.addWidget(self.trace)
        exload_row = QHBoxLayout()
        exload_row.setContentsMargins(0, 0, 0, 0)
        exload_row.addWidget(QLabel("executor load"))
        exload_row.addSpacing(4)
        exload_row.addWidget(self.executor_load, 1)
        form.addRow(exload_row)
        # the PC's load condition (mmsched.load: stress-ng, paper 7.5, seeds/003's conditions); a condition this
        # machine cannot run is a disabled entry whose tooltip says why
        self.load = QComboBox()
        self.load.addItems(list(CONDITIONS))
        self.load.setToolTip("PC load during the run (stress-ng): " + "; ".join(
            f"{c}: {w}" for c, w in CONDITION_WORDS.items()))
        self.load_indicator = LoadIndicator()
        form.addRow("PC load", self.load)
        form.addRow("load", self.load_indicator)
        self.update_load_conditions()
        left.addWidget(exp)
        for s in (self.distance, self.rate, self.accuracy):
            s.valueChanged.connect(self.update_labels)
        self.load.currentTextChanged.connect(lambda name: self.load_indicator.set_state(name != "idle", self.running))

        buttons = QHBoxLayout()
        self.start_button = QPushButton("Start  (Ctrl+R)")
        self.stop_button = QPushButton("Stop  (Esc)")
        self.stop_button.setEnabled(False)
        self.start_button.setStyleSheet("font-weight:bold;padding:6px;")
        self.stop_button.setStyleSheet("padding:6px;")
        buttons.addWidget(self.start_button)
        buttons.addWidget(self.stop_button)
        left.addLayout(buttons)
        self.start_button.clicked.connect(self.start_run)
        self.stop_button.clicked.connect(self.stop_run)
        self.stats = StatsPanel()
        left.addWidget(self.stats)
        left.addStretch(1)
        for i in range(left.count()):
            w = left.itemAt(i).widget()
            if w is not None:
                w.setFixedWidth(360)

        # right side
        right = QVBoxLayout()
        root.addLayout(right, 1)
        top = QHBoxLayout()
        self.timecode = TimecodeDisplay()
        top.addWidget(self.timecode, 2)
        ledbox = QVBoxLayout()
        ledbox.addWidget(QLabel("event LEDs (profiler)"))
        self.leds = Leds()
        ledbox.addWidget(self.leds)
        top.addLayout(ledbox, 1)
        right.addLayout(top)
        self.banner = QLabel("")
        self.banner.setWordWrap(True)
        self.banner.hide()
        right.addWidget(self.banner)
        # normal mode's latency budget (budget.py) of the last run or the opened one, hidden otherwise; on this
        # side, above the stretching plots, so it never makes the window taller
        self.budget_label = QLabel()
        self.budget_label.setWordWrap(True)
        self.budget_label.setObjectName("budget")
        self.budget_label.setStyleSheet("background:#eef5fb;padding:3px;")
        self.budget_label.hide()
        right.addWidget(self.budget_label)
        split = QSplitter(Qt.Orientation.Horizontal)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(20)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)   # uniform rows
        self.table.setAlternatingRowColors(True)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.horizontalHeader().setStretchLastSection(True)
        for col, w in enumerate((44, 24, 84, 58, 64, 58, 92)):
            self.table.setColumnWidth(col, w)
        self.table.setMinimumWidth(300)
        split.addWidget(self.table)
        self.plots = Plots()
        split.addWidget(self.plots)
        split.setSizes([520, 380])
        self.split = split
        right.addWidget(split, 1)
        # one row under the table and plots: the run's progress (left), where runs are saved (right); in this
        # column, whose plots stretch, so the window keeps its 1280 x 800
        info = QHBoxLayout()
        info.setContentsMargins(0, 0, 0, 0)
        self.progress = RunProgress()
        info.addWidget(self.progress, 3)
        self.runs_label = ElidedLabel()
        self.runs_label.setObjectName("runs_dir")
        self.runs_button = QPushButton("Change...")
        self.runs_button.setToolTip("Choose the folder new runs are saved to (File > Runs folder...)")
        self.runs_button.clicked.connect(self.choose_runs_dir)
        info.addWidget(self.runs_label, 2)
        info.addWidget(self.runs_button)
        right.addLayout(info)
        self.log_view = QPlainTextEdit()
        self.log_view.setReadOnly(True)
        self.log_view.setMaximumBlockCount(2000)
        self.log_view.setFixedHeight(70)
        right.addWidget(self.log_view)
        self.setCentralWidget(central)
        self.show_runs_dir()
        self.model.rowsInserted.connect(self._follow)
        self.follow = True

    def _actions(self) -> None:
        m = self.menuBar()
        f = m.addMenu("&File")
        run = m.addMenu("&Run")
        view = m.addMenu("&View")

        def act(menu, text, key, slot, checkable=False) -> QAction:
            a = QAction(text, self)
            if key:
                a.setShortcut(QKeySequence(key))
            a.setCheckable(checkable)
            a.triggered.connect(slot)
            menu.addAction(a)
            self.addAction(a)
            return a

        self.export_action = act(f, "&Export CSV + JSON...", "Ctrl+E", self.export_dialog)
        self.open_action = act(f, "&Open run...", "Ctrl+O", self.open_dialog)
        self.compare_action = act(f, "&Compare two runs...", "Ctrl+K", self.compare_dialog)
        self.runs_action = act(f, "&Runs folder...", None, self.choose_runs_dir)
        f.addSeparator()
        act(f, "&Quit", "Ctrl+Q", self.close)
        self.start_action = act(run, "&Start", "Ctrl+R", self.start_run)
        self.stop_action = act(run, "S&top", "Esc", self.stop_run)
        act(run, "Mode: mixed", "Alt+1", lambda: self.set_mode("mixed"))
        act(run, "Mode: normal", "Alt+2", lambda: self.set_mode("normal"))
        act(run, "Mode: verification", "Alt+3", lambda: self.set_mode("verification"))
        act(run, "Refresh serial ports", "F5", self.refresh_ports)
        # latency axes: automatic (log when the data span decades: the default), or forced log / linear
        axes = view.addMenu("Latency &axis")
        self.axis_group = QActionGroup(self)
        self.axis_actions: dict[str, QAction] = {}
        for mode, text, key in (("auto", "&Automatic (log when the data span decades)", "Ctrl+Shift+L"),
                                ("log", "&Log", "Ctrl+L"), ("linear", "Li&near", None)):
            a = act(axes, text, key, lambda _on=False, m=mode: self.set_axis_mode(m), checkable=True)
            self.axis_group.addAction(a)
            self.axis_actions[mode] = a
        self.log_action = self.axis_actions["log"]
        self.follow_action = act(view, "&Follow newest event", "Ctrl+F", self.toggle_follow, checkable=True)
        self.follow_action.setChecked(True)
        view.addSeparator()
        self.profile_action = act(view, "Executor &profile...", "Ctrl+P", self.profile_dialog)
        self.sweep_action = act(view, "S&weep campaign...", "Ctrl+Shift+W", lambda: self.open_sweep())

    # ---- settings --------------------------------------------------------------------------------
    def restore_settings(self) -> None:
        s = self.settings
        mode = str(s.value("mode", "mixed"))
        if mode in MODES:
            self.mode_buttons[mode].setChecked(True)
        self.distance.setValue(int(s.value("distance", 2)))
        self.rate.setValue(int(s.value("rate", 0)))
        self.accuracy.setValue(int(s.value("accuracy", 0)))
        self.fire_in_gui.setChecked(str(s.value("firing_process", "own")) == "gui")
        self.discipline.setChecked(str(s.value("discipline", "false")).lower() == "true")
        self.random_ids.setChecked(str(s.value("random_ids", "false")).lower() == "true")
        self.length.setValue(int(s.value("length", 200)))
        self.length_unit.setCurrentText(str(s.value("length_unit", "events")))
        self.generation.setCurrentText(str(s.value("generation", "aligned")))
        self.dispatch.setCurrentText(str(s.value("dispatch", "isr")))
        self.set_load_condition(str(s.value("load", "idle")))
        self.executor_load.setText(str(s.value("executor_load", "")))
        self.trace.setChecked(str(s.value("trace", "false")).lower() == "true")
        (self.conn_serial if s.value("connection", "bench") == "serial" else self.conn_bench).setChecked(True)
        self.profiler_port.setEditText(str(s.value("profiler_port", "")))
        self.executor_port.setEditText(str(s.value("executor_port", "")))
        self.reset_on_open.setChecked(str(s.value("reset_on_open", "true")).lower() == "true")
        kind = self.profiler_kind.findData(str(s.value("profiler_kind", "avr")))
        self.profiler_kind.setCurrentIndex(kind if kind >= 0 and self.has_8051() else 0)
        # "true" / "false": the log switch this menu once was (false was its default: now automatic)
        axis = {"true": "log", "false": "auto"}.get(str(s.value("log_axis", "auto")).lower(),
                                                    str(s.value("log_axis", "auto")))
        self.set_axis_mode(axis if axis in self.axis_actions else "auto", redraw=False)
        geo = s.value("geometry")
        if isinstance(geo, QByteArray):
            self.restoreGeometry(geo)
        else:
            self.resize(1280, 800)
        self.update_labels()
        self.on_connection_changed()

    def save_settings(self) -> None:
        s = self.settings
        s.setValue("mode", self.mode())
        s.setValue("distance", self.distance.value())
        s.setValue("rate", self.rate.value())
        s.setValue("accuracy", self.accuracy.value())
        s.setValue("firing_process", "gui" if self.fire_in_gui.isChecked() else "own")
        s.setValue("discipline", self.discipline.isChecked())
        s.setValue("random_ids", self.random_ids.isChecked())
        s.setValue("length", self.length.value())
        s.setValue("length_unit", self.length_unit.currentText())
        s.setValue("generation", self.generation.currentText())
        s.setValue("dispatch", self.dispatch.currentText())
        s.setValue("load", self.load.currentText())
        s.setValue("executor_load", self.executor_load.text())
        s.setValue("trace", self.trace.isChecked())
        s.setValue("connection", "serial" if self.conn_serial.isChecked() else "bench")
        s.setValue("profiler_port", self.profiler_port.currentText())
        s.setValue("executor_port", self.executor_port.currentText())
        s.setValue("reset_on_open", self.reset_on_open.isChecked())
        s.setValue("profiler_kind", self.profiler_kind.currentData())
        s.setValue("log_axis", {"log": "true", "linear": "linear"}.get(self.plots.axis_mode, "auto"))
        s.setValue("geometry", self.saveGeometry())
        s.sync()

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt
        self.save_settings()
        if self.worker is not None:
            self.worker.stop()
        if self.thread is not None:
            self.thread.quit()
            self.thread.wait(15000)
        super().closeEvent(event)

    # ---- state -------------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.worker is not None

    def mode(self) -> str:
        for m, b in self.mode_buttons.items():
            if b.isChecked():
                return m
        return "mixed"

    def set_mode(self, mode: str) -> None:
        self.mode_buttons[mode].setChecked(True)

    def rate_ms(self) -> float | None:
        v = self.rate.value()
        return None if v == 0 else float(v * RATE_STEP_MS)

    def tick_us(self) -> float:
        """The profiler's tick: the viewed run's timebase, else the last HELLO's, else the default."""
        tb = (getattr(self, "viewing_sidecar", None) or {}).get("timebase") if self.viewing is not None else None
        if self.result is not None:
            tb = (self.result.sidecar or {}).get("timebase") or tb
        if tb and tb.get("timer_hz"):
            return 1e6 * tb["tick_counts"] / tb["timer_hz"]
        return 1000.0 * self.tick_ms

    def update_labels(self) -> None:
        self.distance_label.setText(f"schedule distance: {self.distance.value()} ticks")
        text, tip = rate_words(self.rate.value(), self.tick_ms)
        self.rate_label.setText(text)
        self.rate_label.setToolTip(tip)
        self.rate.setToolTip(tip)
        a = self.accuracy.value()
        self.accuracy_label.setText(f"accuracy: {a}" + (" (sleep)" if a == 0 else " (busy-wait)" if a == 100 else ""))

    def on_mode_changed(self, *_: Any) -> None:
        if not hasattr(self, "generation"):       # still building
            return
        normal = self.mode() == "normal"
        self.accuracy.setEnabled(normal)
        self.accuracy_label.setEnabled(normal)
        self.fire_in_gui.setEnabled(normal)
        self.discipline.setEnabled(normal)
        self.distance.setMinimum(0 if normal else 1)
        verification = self.mode() == "verification"
        self.generation.setEnabled(not verification)
        self.executor_port.setEnabled(self.conn_serial.isChecked() and not normal)
        self.executor_load.setEnabled(not normal)
        self.check_executor_load()

    def on_connection_changed(self, *_: Any) -> None:
        if not hasattr(self, "refresh_button"):
            return
        serial_on = self.conn_serial.isChecked()
        self.profiler_port.setEnabled(serial_on)
        self.executor_port.setEnabled(serial_on and self.mode() != "normal")
        self.refresh_button.setEnabled(serial_on)
        self.reset_on_open.setEnabled(serial_on)
        self.reset_on_open.setVisible(serial_on)
        self.profiler_kind.setEnabled(not serial_on and self.has_8051())
        self.profiler_kind.setVisible(not serial_on)
        self.profiler_port.setVisible(serial_on)
        self.trace.setEnabled(not serial_on)
        self.trace.setToolTip("Only the virtual bench can trace the executor (boards on serial ports cannot)"
                              if serial_on else self.trace_tip)

    def has_8051(self) -> bool:
        """Whether the bench program has the 8051 core (tools/ucsim.sh built it); the box says why not."""
        from mmhil.bench import HAS_8051   # the GUI is an entry point: it may know the bench

        if not HAS_8051:
            self.profiler_kind.setToolTip(self.profiler_kind_tip + ". Not here: ucsim's 8051 core is not built "
                                          "(tools/ucsim.sh, which make setup runs)")
        return HAS_8051

    def refresh_ports(self) -> None:
        try:
            ports = list_serial_ports()
        except Exception as exc:  # noqa: BLE001
            self.say(f"cannot list serial ports: {exc}")
            ports = []
        for combo in (self.profiler_port, self.executor_port):
            text = combo.currentText()
            combo.clear()
            for dev, desc in ports:
                combo.addItem(dev, desc)
                combo.setItemData(combo.count() - 1, desc, Qt.ItemDataRole.ToolTipRole)
            combo.setEditText(text)
        self.say(f"serial ports: {', '.join(d for d, _ in ports) or 'none found'}")

    def config(self) -> RunConfig:
        count = duration = None
        if self.length_unit.currentText() == "events":
            count = self.length.value()
        else:
            duration = float(self.length.value())
        return RunConfig(mode=self.mode(), distance=self.distance.value(), rate_ms=self.rate_ms(), count=count,
                         duration_s=duration, random_ids=self.random_ids.isChecked(),
                         generation=self.generation.currentText(), accuracy=self.accuracy.value(),
                         dispatch=self.dispatch.currentText(), load=self.load.currentText(),
                         firing_process=self.firing_process(),
                         discipline=self.mode() == "normal" and self.discipline.isChecked(),
                         executor_load=self.executor_load_value(),
                         trace=self.trace.isChecked() and self.conn_bench.isChecked(),
                         name=f"gui-{self.mode()}-{time.strftime('%Y%m%d-%H%M%S')}")

    def executor_load_value(self) -> ExecutorLoad:
        """The field's load (none in normal mode, where the field is off); ValueError with the parser's
        message for a text it refuses."""
        if self.mode() == "normal":
            return ExecutorLoad()
        return ExecutorLoad.parse(self.executor_load.text())

    def check_executor_load(self, *_: Any) -> bool:
        """Marks the field red, the parser's message as its tooltip, while its text is refused."""
        try:
            self.executor_load_value()
        except ValueError as exc:
            self.executor_load_error = str(exc)
            self.executor_load.setStyleSheet("QLineEdit { background:#fdecea; border:1px solid #c0392b; }")
            self.executor_load.setToolTip(str(exc))
            return False
        self.executor_load_error = None
        self.executor_load.setStyleSheet("")
        self.executor_load.setToolTip(self.executor_load_tip)
        return True

    def firing_process(self) -> str:
        """"gui" only for a normal-mode run with the box checked: every other run has a process of its own."""
        return "gui" if self.mode() == "normal" and self.fire_in_gui.isChecked() else "own"

    def endpoint(self) -> Endpoint:
        """The bench or the boards, as the connection radio buttons say (the GUI is an entry point: it
        chooses; the core runs against either)."""
        if self.conn_bench.isChecked():
            return choose_endpoint(Target(profiler_kind=self.profiler_kind.currentData()))   # the paced bench
        prof = self.profiler_port.currentText().strip() or None
        exe = self.executor_port.currentText().strip() or None
        if prof is None:
            raise ValueError("choose the profiler's serial port (or the virtual bench)")
        if exe is None and self.mode() != "normal":
            raise ValueError(f"{self.mode()} mode needs the executor's serial port too")
        return choose_endpoint(Target.of(prof, exe, reset_on_open=self.reset_on_open.isChecked()))

    # ---- where runs go ------------------------------------------------------------------------------
    def show_runs_dir(self) -> None:
        self.runs_label.setText(f"runs saved to: {self.runs_dir}")
        self.runs_label.setToolTip(str(self.runs_dir))

    def set_runs_dir(self, folder: Path) -> None:
        """New runs auto-save into FOLDER from now on (kept in the settings)."""
        self.runs_dir = Path(folder)
        self.settings.setValue("runs_dir", str(self.runs_dir))
        self.show_runs_dir()
        self.say(f"runs saved to {self.runs_dir}")

    def choose_runs_dir(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Save runs to", str(self.runs_dir))
        if folder:
            self.set_runs_dir(Path(folder))

    # ---- messages ------------------------------------------------------------------------------------
    def say(self, text: str) -> None:
        self.log_view.appendPlainText(f"{time.strftime('%H:%M:%S')}  {text}")
        bar = self.log_view.verticalScrollBar()     # the newest line in view (a wrapped long one left it below)
        bar.setValue(bar.maximum())

    def show_problem(self, p: Problem, modal: bool = True) -> None:
        self.problems.append(p)
        self.say(f"{p.title}: {p.text}")
        self.banner.setText(f"<b>{p.title}</b>: {p.text}")
        self.banner.setStyleSheet("background:#fdecea;color:#611a15;padding:4px;border:1px solid #e6a39c;")
        self.banner.show()
        if modal and not self.quiet:
            box = QMessageBox(QMessageBox.Icon.Warning, p.title, p.text, QMessageBox.StandardButton.Ok, self)
            if p.details and p.details != p.text:
                box.setDetailedText(p.details)
            box.exec()

    def hide_banner(self) -> None:
        self.banner.hide()

    # ---- running -------------------------------------------------------------------------------------
    def attach_feed(self, feed: EventFeed) -> None:
        """The one path from the core into the view (runs and the benchmark use it)."""
        self.feed = feed
        feed.batch.connect(self.model.apply)
        feed.timecode.connect(self.timecode.set_timecode)
        feed.fired.connect(self.leds.light)
        feed.phase.connect(lambda ph: self.say(f"run: {ph}"))

    def start_run(self) -> None:
        if self.running:
            return
        try:
            cfg = self.config()
            endpoint = self.endpoint()
        except ValueError as exc:
            self.show_problem(Problem("Invalid settings", str(exc)))
            return
        cfg.out = self.runs_dir / cfg.name
        self.save_settings()
        self.hide_banner()
        self.result = None
        self.viewing = None
        self.stats.setTitle("Statistics (live)")
        self.model.clear()
        self.progress.start(cfg.count, cfg.duration_s)
        self.timecode.reset()
        self.plots.set_series(1)
        self.attach_feed(EventFeed())
        assert self.feed is not None
        self.worker = RunWorker(cfg, endpoint, self.feed)
        self.worker.log.connect(self.say)
        self.worker.health.connect(self.show_health)
        self.worker.finished.connect(self.on_finished)
        self.worker.failed.connect(self.on_failed)
        self.last_config = cfg
        self.say(f"start: {cfg.mode}, distance {cfg.distance}, rate {cfg.rate_ms or 'tick'}, "
                 f"{cfg.count or cfg.duration_s} {'events' if cfg.count else 's'}, "
                 f"{'random' if cfg.random_ids else 'sequential'} ids, load {cfg.load}"
                 f", executor load {cfg.executor_load}{', traced' if cfg.trace else ''}"
                 f" on {endpoint.kind}, "
                 f"{'in the GUI process' if cfg.firing_process == 'gui' else 'in a process of its own'}")
        self.set_running(True)
        self.thread = start_in_thread(self.worker)

    def stop_run(self) -> None:
        if self.worker is not None:
            self.worker.stop()
            self.say("stop requested: no new events; waiting for those in flight")
            self.stop_button.setEnabled(False)

    def set_running(self, on: bool) -> None:
        self.start_button.setEnabled(not on)
        self.start_action.setEnabled(not on)
        self.stop_button.setEnabled(on)
        for w in (self.conn_bench, self.conn_serial, self.probe_button, *self.mode_buttons.values(), self.distance,
                  self.rate, self.random_ids, self.length, self.length_unit, self.generation, self.dispatch,
                  self.load, self.open_action, self.compare_action, self.export_action, self.executor_load,
                  self.trace):
            w.setEnabled(not on)
        if not on:
            self.update_load_conditions()
            self.on_mode_changed()
            self.on_connection_changed()
        else:
            self.accuracy.setEnabled(False)
            self.fire_in_gui.setEnabled(False)
            self.discipline.setEnabled(False)
        self.load_indicator.set_state(self.load.currentText() != "idle", on)

    def update_load_conditions(self) -> None:
        """Disables the conditions this machine cannot run (stress-ng missing, no network namespace), with
        why in their tooltip; falls back to idle if the chosen one is among them."""
        model = self.load.model()
        for i, name in enumerate(CONDITIONS):
            problem = load_unavailable(name)
            item = model.item(i)
            item.setEnabled(problem is None)
            item.setToolTip(problem or CONDITION_WORDS[name])
        if not model.item(self.load.currentIndex()).isEnabled():
            self.load.setCurrentText("idle")

    def set_load_condition(self, value: str) -> None:
        """A saved setting: a condition's name, or the checkbox's old "true"/"false" (all / idle)."""
        text = {"true": True, "false": False}.get(value.lower(), value)
        try:
            name = load_condition(text)
        except ValueError:
            name = "idle"
        i = CONDITIONS.index(name)
        self.load.setCurrentIndex(i if self.load.model().item(i).isEnabled() else 0)

    def _end_thread(self) -> None:
        if self.thread is not None:
            self.thread.quit()
            self.thread.wait(5000)
        self.thread = None
        self.worker = None
        self.set_running(False)

    def update_progress(self) -> None:
        if self.running:
            _, code = self.model.arrays()
            self.progress.update_counts(int(np.count_nonzero(code >= 0)), int(code.size))

    def on_finished(self, result: RunResult) -> None:
        self.result = result
        self._end_thread()
        self.progress.finish(len(result.events))
        self.stats.setTitle(f"Statistics: {(result.sidecar or {}).get('name') or 'last run'}")
        # the view ends on the core's own final events (the same the CSV has)
        self.model.set_rows([Row.of(e) for e in result.events])
        self.redraw(force=True)
        s = result.summary
        self.show_budget(result.sidecar)
        self.say(f"done: {s['events']} events, ok {s['outcomes']['ok']}; files {result.csv_path}")
        prof = (result.sidecar or {}).get("executor_profile")
        if prof:
            self.say(f"executor traced: U = {prof.get('U', 0):.4f}, idle {100 * (prof.get('idle') or {}).get('share', 0):.1f} %"
                     f" over {prof.get('seconds', 0):.2f} s: View > Executor profile (Ctrl+P)")
        if not result.valid:
            reasons = result.sidecar.get("invalid_reasons") or [{"code": None, "text": result.sidecar["invalid_reason"]}]
            # a host stall is this machine's, not the user's doing: said in the banner, no dialog
            self.show_problem(explain(reasons[0]), modal=set(result.reasons) != {"bench_lag"})

    def show_budget(self, sidecar: dict[str, Any] | None) -> None:
        """Normal mode: why its events were as late as they were (the sidecar's budget), else nothing."""
        budget = (sidecar or {}).get("budget")
        if not budget:
            self.budget_label.hide()
            return
        self.budget_label.setText("Latency budget: " + format_budget(budget))
        self.budget_label.show()

    def on_failed(self, p: Problem) -> None:
        self._end_thread()
        _, code = self.model.arrays()
        self.progress.finish(int(np.count_nonzero(code >= 0)))
        self.progress.label.setText(f"run failed: {p.title}")
        self.show_problem(p)

    def show_health(self, h: dict[str, Any]) -> None:
        lines = []
        for name, n in h.get("nodes", {}).items():
            hello = n.get("hello")
            if name == "profiler" and hello and hello.get("timer_hz"):
                self.tick_ms = 1000.0 * hello["tick_counts"] / hello["timer_hz"]
                self.update_labels()
            ident = (f"fw {hello['fw_version']}, proto {hello['proto_version']}, {hello['cpu_hz'] / 1e6:g} MHz, "
                     f"tick {hello['tick_counts']}/{hello['timer_hz']} s, {hello['baud']} Bd") if hello else "no HELLO"
            err = n.get("errors", 0) + n.get("seq_lost", 0)
            state = f"<span style='color:#c0392b'>GONE: {n['vanished']}</span>" if n.get("vanished") else ""
            lines.append(f"<b>{name}</b>: {ident}<br>&nbsp;&nbsp;in {n['bytes_in']} B / {n['frames_in']} frames, "
                         f"out {n['frames_out']} frames, errors <b>{err}</b> {state}")
        b = h.get("bench")
        if b:
            bad = b.get("exceeded") or 0
            lines.append(f"<b>bench</b>: lag max {b.get('lag_max_us') or 0:.0f} us (bound {b.get('bound_us') or 0:.0f}), "
                         f"p99 {b.get('lag_p99_us') or 0:.0f} us" + (f", <span style='color:#c0392b'>{bad} over</span>" if bad else ""))
        self.health_label.setText("<br>".join(lines) or "no nodes")
        self.last_health = h

    def probe(self) -> None:
        try:
            endpoint, cfg = self.endpoint(), self.config()
        except ValueError as exc:
            self.show_problem(Problem("Invalid settings", str(exc)))
            return
        self.health_label.setText("connecting...")
        self.probe_button.setEnabled(False)
        self._probe = ProbeWorker(endpoint, cfg)
        self._probe_thread = QThread()
        self._probe.moveToThread(self._probe_thread)
        self._probe_thread.started.connect(self._probe.run)
        self._probe.done.connect(self._probe_done)
        self._probe.failed.connect(self._probe_failed)
        self._probe_thread.start()

    def _probe_finish(self) -> None:
        self._probe_thread.quit()
        self._probe_thread.wait(5000)
        self.probe_button.setEnabled(True)

    def _probe_done(self, h: dict[str, Any]) -> None:
        self._probe_finish()
        self.show_health(h)
        self.say("connected: " + ", ".join(f"{n} says HELLO" for n, v in h["nodes"].items() if v.get("hello")))

    def _probe_failed(self, p: Problem) -> None:
        self._probe_finish()
        self.health_label.setText(f"<span style='color:#c0392b'>{p.title}</span>")
        self.show_problem(p)

    # ---- views -----------------------------------------------------------------------------------------
    def _follow(self, *_: Any) -> None:
        if self.follow:
            self.table.scrollToBottom()

    def toggle_follow(self, on: bool) -> None:
        self.follow = on

    def toggle_log(self, on: bool) -> None:
        self.set_axis_mode("log" if on else "auto")

    def set_axis_mode(self, mode: str, redraw: bool = True) -> None:
        """auto, log or linear latency axes (View > Latency axis)."""
        self.plots.set_axis_mode(mode)
        self.axis_actions[mode].setChecked(True)
        if redraw:
            self.redraw(force=True)

    def redraw(self, force: bool = False) -> None:
        """force: everything now (a finished or opened run, the log switch). Otherwise the live tick: when
        the model moved, start a round over LIVE_PARTS, one part per tick."""
        self.update_progress()
        if force:
            self._round = []
            self._drawn_revision = self.model.revision
            self._warm = [self.model.warmup(self.tick_us())]
            self.plots.show_arrays([self.model.latency_points()], warmup=self._warm)
            summary = getattr(self, "viewing_summary", None) if self.viewing is not None else None
            if summary:
                self.stats.show_summary(summary)
            else:
                self.stats.show_rows(self.model.rows)      # the core's own summarize
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
            if self.viewing is None:
                self.stats.show_arrays(*self.model.arrays(), self.model.unmeasurable())
        else:
            self.plots.show_arrays(self._points, parts=(part,), warmup=self._warm)

    # ---- files -------------------------------------------------------------------------------------------
    def export_to(self, path: Path) -> tuple[Path, Path]:
        """Writes the last run's CSV + JSON (the core's writer, the core's events) to `path`."""
        if self.result is None:
            raise ValueError("no finished run to export")
        return write_run(Path(path), self.result.events, self.result.sidecar)

    def export_dialog(self) -> None:
        if self.result is None:
            self.show_problem(Problem("Nothing to export", "Run an experiment first (an opened run is already on disk)."))
            return
        start = str(self.settings.value("last_dir", str(self.runs_dir)))
        path, _ = QFileDialog.getSaveFileName(self, "Export run", str(Path(start) / f"{self.result.sidecar['name']}.csv"),
                                              "CSV (*.csv)")
        if not path:
            return
        try:
            csv_path, json_path = self.export_to(Path(path))
        except OSError as exc:
            self.show_problem(Problem("Export failed", f"Cannot write {path}: {exc.strerror or exc}"))
            return
        self.settings.setValue("last_dir", str(Path(path).parent))
        self.say(f"exported {csv_path} and {json_path}")

    def open_run(self, path: Path) -> bool:
        try:
            rows, sidecar, name = load_run(path)
        except (ValueError, OSError) as exc:
            self.show_problem(Problem("Cannot open run", str(exc)))
            return False
        self.result = None
        self.viewing = name
        self.viewing_json = Path(path).with_suffix(".json")
        self.viewing_sidecar = sidecar
        self.model.set_rows(rows)
        self.plots.set_series(1)
        self.viewing_summary = (sidecar or {}).get("summary")
        self.show_budget(sidecar)
        self.stats.setTitle(f"Statistics: {name}")
        self.redraw(force=True)
        if sidecar and not sidecar.get("valid", True):
            self.banner.setText(f"<b>Viewing an invalid run</b>: {sidecar.get('invalid_reason')}")
            self.banner.setStyleSheet("background:#fff4e5;color:#663c00;padding:4px;")
            self.banner.show()
        self.say(f"opened {name}: {len(rows)} events")
        return True

    def open_dialog(self) -> None:
        start = str(self.settings.value("last_dir", str(self.runs_dir)))
        path, _ = QFileDialog.getOpenFileName(self, "Open run", start, "mmrig runs (*.csv *.json)")
        if path:
            self.settings.setValue("last_dir", str(Path(path).parent))
            self.open_run(Path(path))

    def compare_dialog(self) -> None:
        start = str(self.settings.value("last_dir", str(self.runs_dir)))
        paths, _ = QFileDialog.getOpenFileNames(self, "Choose two runs", start, "mmrig runs (*.csv)")
        if len(paths) != 2:
            if paths:
                self.show_problem(Problem("Compare", "Choose exactly two runs (Ctrl-click the second)."))
            return
        self.compare(Path(paths[0]), Path(paths[1]))

    def compare(self, a: Path, b: Path):
        from mmrig.gui.compare import CompareWindow

        try:
            w = CompareWindow(a, b, self)
        except (ValueError, OSError) as exc:
            self.show_problem(Problem("Cannot compare", str(exc)))
            return None
        w.show()
        self.compare_window = w
        return w

    # ---- the executor profile (issue 19) ------------------------------------------------------------------
    def profile_dialog(self) -> None:
        """The last run's executor profile if it was traced (or the opened run's), else OUT.json files to choose."""
        from mmrig.gui.profile import ProfileRun

        if self.result is not None and (self.result.sidecar or {}).get("executor_profile"):
            self.open_profile([ProfileRun.from_result(self.result)])
            return
        sidecar = getattr(self, "viewing_sidecar", None) if self.viewing is not None else None
        if sidecar and sidecar.get("executor_profile"):
            self.open_profile([ProfileRun(self.viewing, sidecar, self.viewing_json.parent)])
            return
        start = str(self.settings.value("last_dir", str(self.runs_dir)))
        paths, _ = QFileDialog.getOpenFileNames(self, "Executor profile: choose 1 to 4 runs", start,
                                                "run sidecars (*.json)")
        if paths:
            self.settings.setValue("last_dir", str(Path(paths[0]).parent))
            self.profile_runs([Path(p) for p in paths])

    def profile_runs(self, paths: list[Path]):
        """The profile window for runs on disk (their OUT.json); None, with a message, if none can be read."""
        from mmrig.gui.profile import MAX_RUNS, ProfileRun

        runs, bad = [], []
        for p in paths[:MAX_RUNS]:
            try:
                runs.append(ProfileRun.from_json(p))
            except ValueError as exc:
                bad.append(str(exc))
        if bad:
            self.show_problem(Problem("Cannot open run", "; ".join(bad)), modal=not runs)
        if len(paths) > MAX_RUNS:
            self.say(f"executor profile: the first {MAX_RUNS} of {len(paths)} runs")
        return self.open_profile(runs) if runs else None

    def open_profile(self, runs):
        from mmrig.gui.profile import ProfileWindow

        w = ProfileWindow(runs, self)
        w.show()
        self.profile_window = w
        return w

    # ---- a sweep campaign (issue 20) -----------------------------------------------------------------------
    def open_sweep(self, folder: Path | None = None):
        """The sweep window: a campaign's axes, `mmrig sweep` in a process of its own, its points as they end."""
        from mmrig.gui.sweep import SweepWindow

        w = getattr(self, "sweep_window", None)
        if w is not None and w.isVisible():
            w.raise_()
            w.activateWindow()
            return w
        w = SweepWindow(folder or self.runs_dir.parent / "campaigns" / "sweep", self)
        w.show()
        self.sweep_window = w
        return w
