"""The run settings panel ("Experiment"): the paper's sliders (schedule distance, schedule rate, accuracy),
the mode, randomize id, run length, generation and dispatch, the executor's load and trace, the PC's load
condition. It makes the run's RunConfig; the connection it runs on is the connection panel's."""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtWidgets import (QButtonGroup, QCheckBox, QComboBox, QFormLayout, QGroupBox, QHBoxLayout, QLabel,
                               QLineEdit, QRadioButton, QSlider, QSpinBox)

from mmanalysis.schema import NOMINAL_TICK_S

from mmsched.model.config import MODES, RunConfig
from mmsched.model.grid import line_limit_per_s, line_problem, wants_grid
from mmsched.model.exload import ExecutorLoad
from mmsched.model.load import CONDITION_WORDS, CONDITIONS, condition as load_condition, unavailable as load_unavailable
from mmrig.gui.widgets.load import LoadIndicator

# The rate slider's positions: 0 is one event per tick; 1..9 are 1..9 ms (normal mode's schedule grid, events
# due at moments inside ticks: mmsched/model/grid.py); 10..209 are 10..2000 ms in steps of 10.
FINE_MS = 9
RATE_STEP_MS = 10
RATE_MAX_MS = 2000
RATE_POSITIONS = FINE_MS + RATE_MAX_MS // RATE_STEP_MS
# mixed (aligned or free generation) and verification: the executor's list fires at tick starts; below this only
# normal mode and mixed mode's periodic generation (the executor fires a PERIODIC series inside ticks)
MIXED_MIN_MS = 10
LINK_RATES = (9600, 19200, 38400, 57600, 115200, 250000, 500000, 1000000)
DEFAULT_TICK_MS = 1000.0 * NOMINAL_TICK_S    # the profiler's tick as built, until a HELLO says otherwise


def rate_ms_at(position: int) -> float | None:
    """The interval a slider position stands for (None: one event per tick)."""
    if position <= 0:
        return None
    if position <= FINE_MS:
        return float(position)
    return float((position - FINE_MS) * RATE_STEP_MS)


def rate_position(ms: float | None) -> int:
    """The slider position nearest an interval (None or 0: one event per tick)."""
    if not ms:
        return 0
    if ms < RATE_STEP_MS:
        return max(1, min(FINE_MS, round(ms)))
    return FINE_MS + max(1, min(RATE_MAX_MS // RATE_STEP_MS, round(ms / RATE_STEP_MS)))


def rate_words(position: int, tick_ms: float = DEFAULT_TICK_MS) -> tuple[str, str]:
    """The rate slider's label and tooltip for a position: 0 is not "0 ms" but one event at every tick."""
    ms = rate_ms_at(position)
    if ms is None:
        return (f"schedule rate: every tick ({tick_ms:.1f} ms)",
                f"0 (leftmost): one event at every tick of the profiler ({tick_ms:.2f} ms per tick), created right "
                f"after its TIMECODE. Move right for one event every 1 ms .. {RATE_MAX_MS} ms instead "
                f"(below {MIXED_MIN_MS} ms: normal mode, or mixed with periodic generation).")
    per_s = 1000.0 / ms
    grid = (" Normal mode below a tick: events due at moments inside ticks (a schedule grid), each with a RESULT "
            "on the profiler's line: the link rate must carry them.") if ms < tick_ms else ""
    return (f"schedule rate: every {ms:g} ms" + (f" ({per_s:,.0f}/s)" if ms < RATE_STEP_MS else ""),
            f"one event every {ms:g} ms ({tick_ms / ms:.2g} per tick of {tick_ms:.1f} ms, {per_s:,.0f} a second)."
            f"{grid} All the way left (0): one event at every tick.")


def link_words(rate_ms: float | None, baud: int | None, mode: str, generation: str = "aligned") -> tuple[str, str, bool]:
    """What the profiler's line carries at the chosen link rate (a short label and its tooltip), and whether
    the chosen rate exceeds it (a normal-mode grid needs a RESULT per event: mmsched/model/grid.py). None: the
    nodes' rate as built (9600)."""
    rate = baud or 9600
    fires = mode == "normal"                # a FIRE in per event too (grid.event_busy_s)
    limit = line_limit_per_s(rate, fires=fires)
    built = " (the nodes' rate as built)" if baud is None else ""
    over = (rate_ms is not None and wants_grid(mode, rate_ms / 1000.0, NOMINAL_TICK_S, generation)
            and line_problem(rate_ms / 1000.0, rate, fires=fires) is not None)
    tip = (f"At {rate} baud{built} the profiler and its line carry {limit:,.0f} events a second with a RESULT "
           f"each (mmsched/model/grid.py, docs/kilohertz.md).")
    if over:
        assert rate_ms is not None
        return (f"carries {limit:,.0f}/s, not {1000.0 / rate_ms:,.0f}",
                tip + f" The rate asks for {1000.0 / rate_ms:,.0f}: choose a faster link rate.", True)
    return f"carries {limit:,.0f} events/s", tip, False


def _row(*items: Any) -> QHBoxLayout:
    """One form row of several fields (the window keeps its height: the screenshots' 1280 x 800)."""
    row = QHBoxLayout()
    row.setContentsMargins(0, 0, 0, 0)
    for item in items:
        if isinstance(item, int):
            row.addSpacing(item)
        elif isinstance(item, tuple):
            row.addWidget(*item)
        else:
            row.addWidget(item)
    return row


class RunSettingsPanel(QGroupBox):
    """What the next run does. `mode_changed` tells the connection panel (normal mode needs no executor port)."""

    mode_changed = Signal(str)

    EXECUTOR_LOAD_TIP = ("The executor's load besides firing: cpu (a task below all others that never blocks), "
                         "periodic=PERIOD/EXEC (a task above dispatch, released every PERIOD, computing EXEC), "
                         "rx=N (N frames/s it decodes and drops). Not in normal mode.")
    TRACE_TIP = ("The bench records what the executor runs (NAME.exectrace, .perfetto-trace, .vcd) and the sidecar "
                 "gets its profile: View > Executor profile.")

    def __init__(self, parent=None) -> None:
        super().__init__("Experiment", parent)
        self.tick_ms = DEFAULT_TICK_MS
        self.traceable = True          # the bench can trace the executor; boards on serial ports cannot
        self.running = False
        self.executor_load_error: str | None = None
        form = QFormLayout(self)
        form.setVerticalSpacing(4)
        self._build_mode_and_sliders(form)
        self._build_options(form)
        self._build_loads(form)
        for s in (self.distance, self.rate, self.accuracy):
            s.valueChanged.connect(self.update_labels)
        self.baud.currentIndexChanged.connect(self.update_labels)
        self.generation.currentTextChanged.connect(self.keep_rate_in_mode)
        self.generation.currentTextChanged.connect(self.update_labels)
        self.rate.valueChanged.connect(self.keep_rate_in_mode)
        for b in self.mode_buttons.values():
            b.toggled.connect(self.on_mode_changed)
        self.executor_load.textChanged.connect(self.check_executor_load)
        self.load.currentTextChanged.connect(lambda name: self.load_indicator.set_state(name != "idle", self.running))

    # ---- building --------------------------------------------------------------------------------------
    def _build_mode_and_sliders(self, form: QFormLayout) -> None:
        self.mode_buttons: dict[str, QRadioButton] = {}
        modes = QHBoxLayout()
        self.mode_group = QButtonGroup(self)
        for m, text in (("mixed", "&Mixed"), ("normal", "&Normal"), ("verification", "&Verification")):
            b = QRadioButton(text)
            self.mode_buttons[m] = b
            self.mode_group.addButton(b)
            modes.addWidget(b)
        self.mode_buttons["mixed"].setChecked(True)
        form.addRow(modes)
        self.distance = QSlider(Qt.Orientation.Horizontal)
        self.distance.setRange(1, 64)
        self.distance.setValue(2)
        self.distance_label = QLabel()
        form.addRow(self.distance_label, self.distance)
        self.rate = QSlider(Qt.Orientation.Horizontal)
        self.rate.setRange(0, RATE_POSITIONS)
        self.rate_label = QLabel()
        form.addRow(self.rate_label, self.rate)
        # the links' rate for the run (BAUD after the handshake): what the profiler's line carries, said beside it
        self.baud = QComboBox()
        self.baud.addItem("as built", None)
        for b in LINK_RATES:
            self.baud.addItem(f"{b} Bd", b)
        self.baud.setToolTip("The links' rate for the run: the PC asks both nodes for it after the handshake "
                             "(BAUD). As built: the nodes' own rate (9600 on the bench).")
        self.link_label = QLabel()
        self.link_label.setObjectName("link")
        form.addRow(_row(QLabel("link rate"), 4, (self.baud, 0), 6, (self.link_label, 1)))
        self.accuracy = QSlider(Qt.Orientation.Horizontal)
        self.accuracy.setRange(0, 100)
        self.accuracy_label = QLabel()
        form.addRow(self.accuracy_label, self.accuracy)

    def _build_options(self, form: QFormLayout) -> None:
        # normal mode: the run (and its firing thread) normally runs in a process of its own, away from the
        # GUI's interpreter lock; checked, it runs inside the GUI's process
        self.fire_in_gui = QCheckBox("GUI process")
        self.fire_in_gui.setToolTip("Normal mode, fire from the GUI process: run the experiment, and the thread that "
                                    "fires the FIRE frames, "
                                    "inside the GUI's process, sharing the interpreter with the live plots. "
                                    "Unchecked (the default), the run has a process of its own, as on the "
                                    "command line.")
        # normal mode: aim each FIRE by the clock servo (the profiler's own stamps) instead of TIMECODE
        # arrivals alone, the paper's way (docs/normal-mode.md)
        self.discipline = QCheckBox("Disciplined")
        self.discipline.setToolTip("Normal mode, a disciplined clock: the PC places tick starts from the profiler's "
                                   "stamps of its "
                                   "FIREs (a PTP-like servo) instead of from TIMECODE arrivals alone. Unchecked: "
                                   "the paper's naive PC (experiment 2).")
        # normal mode: what writes each FIRE, the native thread (cyclictest's way, the default) or a Python thread
        self.fire_python = QCheckBox("Python thread")
        self.fire_python.setToolTip("Normal mode, fire from a Python thread: each FIRE written by a Python thread, "
                                    "which waits for the "
                                    "interpreter's lock before it writes: what a Python application of your own "
                                    "would get. Unchecked (the default), a C thread sleeps to each moment and "
                                    "writes, as cyclictest's thread does (docs/normal-mode.md).")
        form.addRow(_row(self.discipline, self.fire_in_gui, self.fire_python))
        self.random_ids = QCheckBox("randomize event id")
        self.trace = QCheckBox("trace the executor")
        self.trace.setToolTip(self.TRACE_TIP)
        form.addRow(_row(self.random_ids, self.trace))
        self.length = QSpinBox()
        self.length.setRange(1, 1_000_000)
        self.length.setValue(200)
        self.length_unit = QComboBox()
        self.length_unit.addItems(["events", "seconds"])
        # a row of its own across the form: in the field column (narrowed by the sliders' long labels) the unit
        # showed as "event"
        self.length_unit.setMinimumWidth(self.length_unit.sizeHint().width())
        form.addRow(_row(QLabel("run length"), 4, (self.length, 1), self.length_unit))
        self.generation = QComboBox()
        self.generation.addItems(["aligned", "free", "periodic"])
        self.generation.setToolTip("Mixed mode: aligned, an event made right after each TIMECODE (a SCHEDULE each); "
                                   "free, a timer at the rate (the paper's); periodic, the whole schedule sent to the "
                                   "executor in PERIODIC frames, its moments inside ticks (1 ms and more, with a "
                                   "fast link rate)")
        self.dispatch = QComboBox()
        self.dispatch.addItems(["isr", "task"])
        form.addRow(_row(QLabel("generation"), (self.generation, 1), 8, QLabel("executor dispatch"),
                         (self.dispatch, 1)))

    def _build_loads(self, form: QFormLayout) -> None:
        # what the executor does besides firing (mmsched.model.exload)
        self.executor_load = QLineEdit()
        self.executor_load.setPlaceholderText("none, or cpu,periodic=10ms/2ms,rx=20")
        self.executor_load.setClearButtonEnabled(True)
        self.executor_load.setToolTip(self.EXECUTOR_LOAD_TIP)
        form.addRow(_row(QLabel("executor load"), 4, (self.executor_load, 1)))
        # the PC's load condition (mmsched.model.load: stress-ng, paper 7.5); a condition this machine cannot run is
        # a disabled entry whose tooltip says why
        self.load = QComboBox()
        self.load.addItems(list(CONDITIONS))
        self.load.setToolTip("PC load during the run (stress-ng): " + "; ".join(
            f"{c}: {w}" for c, w in CONDITION_WORDS.items()))
        self.load_indicator = LoadIndicator()
        # the condition and its indicator on one row: the window keeps its 1280 x 800 with the link rate's row
        form.addRow("PC load", _row((self.load, 1), 6, self.load_indicator))
        self.update_load_conditions()

    # ---- settings kept between starts --------------------------------------------------------------------
    def restore(self, s: QSettings) -> None:
        mode = str(s.value("mode", "mixed"))
        if mode in MODES:
            self.mode_buttons[mode].setChecked(True)
        self.distance.setValue(int(s.value("distance", 2)))
        # "rate_ms": the interval itself; "rate": the slider of 10 ms steps it replaced (kept settings still read)
        kept = s.value("rate_ms")
        self.rate.setValue(rate_position(float(kept) if kept not in (None, "") else 10.0 * int(s.value("rate", 0))))
        i = self.baud.findData(int(s.value("baud", 0)) or None)
        self.baud.setCurrentIndex(max(0, i))
        self.accuracy.setValue(int(s.value("accuracy", 0)))
        self.fire_in_gui.setChecked(str(s.value("firing_process", "own")) == "gui")
        self.fire_python.setChecked(str(s.value("firing", "native")) == "python")
        self.discipline.setChecked(str(s.value("discipline", "false")).lower() == "true")
        self.random_ids.setChecked(str(s.value("random_ids", "false")).lower() == "true")
        self.length.setValue(int(s.value("length", 200)))
        self.length_unit.setCurrentText(str(s.value("length_unit", "events")))
        self.generation.setCurrentText(str(s.value("generation", "aligned")))
        self.dispatch.setCurrentText(str(s.value("dispatch", "isr")))
        self.set_load_condition(str(s.value("load", "idle")))
        self.executor_load.setText(str(s.value("executor_load", "")))
        self.trace.setChecked(str(s.value("trace", "false")).lower() == "true")

    def save(self, s: QSettings) -> None:
        s.setValue("mode", self.mode())
        s.setValue("distance", self.distance.value())
        s.setValue("rate_ms", self.rate_ms() or 0)
        s.setValue("baud", self.baud.currentData() or 0)
        s.setValue("accuracy", self.accuracy.value())
        s.setValue("firing_process", "gui" if self.fire_in_gui.isChecked() else "own")
        s.setValue("firing", "python" if self.fire_python.isChecked() else "native")
        s.setValue("discipline", self.discipline.isChecked())
        s.setValue("random_ids", self.random_ids.isChecked())
        s.setValue("length", self.length.value())
        s.setValue("length_unit", self.length_unit.currentText())
        s.setValue("generation", self.generation.currentText())
        s.setValue("dispatch", self.dispatch.currentText())
        s.setValue("load", self.load.currentText())
        s.setValue("executor_load", self.executor_load.text())
        s.setValue("trace", self.trace.isChecked())

    # ---- state -------------------------------------------------------------------------------------------
    def mode(self) -> str:
        for m, b in self.mode_buttons.items():
            if b.isChecked():
                return m
        return "mixed"

    def set_mode(self, mode: str) -> None:
        self.mode_buttons[mode].setChecked(True)

    def rate_ms(self) -> float | None:
        return rate_ms_at(self.rate.value())

    def set_rate_ms(self, ms: float | None) -> None:
        self.rate.setValue(rate_position(ms))

    def link_baud(self) -> int | None:
        """The link rate chosen (None: the nodes' own)."""
        return self.baud.currentData()

    def set_tick_ms(self, tick_ms: float) -> None:
        """The profiler's tick as its HELLO said: the rate slider's words follow it."""
        self.tick_ms = tick_ms
        self.update_labels()

    def update_labels(self) -> None:
        self.distance_label.setText(f"schedule distance: {self.distance.value()} ticks")
        text, tip = rate_words(self.rate.value(), self.tick_ms)
        self.rate_label.setText(text)
        self.rate_label.setToolTip(tip)
        self.rate.setToolTip(tip)
        text, link_tip, over = link_words(self.rate_ms(), self.link_baud(), self.mode(), self.generation.currentText())
        self.link_label.setText(text)
        self.link_label.setToolTip(link_tip)
        self.link_label.setStyleSheet("color:#c0392b;" if over else "")
        a = self.accuracy.value()
        self.accuracy_label.setText(f"accuracy: {a}" + (" (sleep)" if a == 0 else " (busy-wait)" if a == 100 else ""))

    def on_mode_changed(self, *_: Any) -> None:
        normal = self.mode() == "normal"
        self.accuracy.setEnabled(normal)
        self.accuracy_label.setEnabled(normal)
        self.fire_in_gui.setEnabled(normal)
        self.fire_python.setEnabled(normal)
        self.discipline.setEnabled(normal)
        self.distance.setMinimum(0 if normal else 1)
        self.keep_rate_in_mode()
        self.update_labels()
        self.generation.setEnabled(self.mode() != "verification")
        self.executor_load.setEnabled(not normal)
        self.check_executor_load()
        self.mode_changed.emit(self.mode())

    def keep_rate_in_mode(self, *_: Any) -> None:
        """Below MIXED_MIN_MS only where events are due at moments inside ticks: normal mode (the PC fires them)
        and mixed mode's periodic generation (the executor fires a PERIODIC series); otherwise the executor's
        list fires at tick starts."""
        low = rate_position(MIXED_MIN_MS)
        inside = self.mode() == "normal" or (self.mode() == "mixed" and self.generation.currentText() == "periodic")
        if not inside and 0 < self.rate.value() < low:
            self.rate.setValue(low)

    def set_traceable(self, on: bool) -> None:
        """Only the virtual bench can trace the executor: the box is off, and says why, on serial ports."""
        self.traceable = on
        self.trace.setEnabled(on)
        self.trace.setToolTip(self.TRACE_TIP if on else
                              "Only the virtual bench can trace the executor (boards on serial ports cannot)")

    def set_running(self, on: bool) -> None:
        """While a run goes the settings are fixed; after it each is as its mode and connection allow."""
        self.running = on
        for w in (*self.mode_buttons.values(), self.distance, self.rate, self.baud, self.random_ids, self.length,
                  self.length_unit, self.generation, self.dispatch, self.load, self.executor_load, self.trace):
            w.setEnabled(not on)
        if not on:
            self.update_load_conditions()
            self.on_mode_changed()
            self.trace.setEnabled(self.traceable)
        else:
            self.accuracy.setEnabled(False)
            self.fire_in_gui.setEnabled(False)
            self.fire_python.setEnabled(False)
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

    # ---- the run's config ----------------------------------------------------------------------------------
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
        self.executor_load.setToolTip(self.EXECUTOR_LOAD_TIP)
        return True

    def firing_process(self) -> str:
        """"gui" only for a normal-mode run with the box checked: every other run has a process of its own."""
        return "gui" if self.mode() == "normal" and self.fire_in_gui.isChecked() else "own"

    def config(self, on_bench: bool) -> RunConfig:
        """The run these settings describe; `on_bench`: the connection is the virtual bench (which alone traces).
        ValueError for an executor load the parser refuses."""
        count = duration = None
        if self.length_unit.currentText() == "events":
            count = self.length.value()
        else:
            duration = float(self.length.value())
        return RunConfig(mode=self.mode(), distance=self.distance.value(), rate_ms=self.rate_ms(), count=count,
                         duration_s=duration, random_ids=self.random_ids.isChecked(),
                         generation=self.generation.currentText(),
                         # the window's table and live histogram are per event: a RESULT each (the command line's
                         # --no-raw runs on the profiler's histogram alone)
                         raw=True if self.generation.currentText() == "periodic" else None,
                         accuracy=self.accuracy.value(),
                         dispatch=self.dispatch.currentText(), load=self.load.currentText(),
                         firing_process=self.firing_process(),
                         firing="python" if self.fire_python.isChecked() else "native",
                         discipline=self.mode() == "normal" and self.discipline.isChecked(),
                         executor_load=self.executor_load_value(),
                         trace=self.trace.isChecked() and on_bench, baud=self.link_baud(),
                         name=f"gui-{self.mode()}-{time.strftime('%Y%m%d-%H%M%S')}")
