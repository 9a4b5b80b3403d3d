"""The sweep window: a campaign from the GUI. The axes are typed as `mmrig sweep` takes them and
checked with the core's own parse functions (mmrig.sweep.campaign); Start runs `mmrig sweep` with the same
arguments in a process of its own (QProcess: the GUI stays responsive, Dask stays out of the GUI's process),
Stop sends it SIGTERM, which the command handles as Ctrl-C (the points done are kept, the campaign is
resumable). The table follows the campaign on disk (FOLDER/points.jsonl, appended at each point's change, and
campaign.json); when it ends, the campaign's on-time figure (FOLDER/figures/on_time.png) is shown."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import QEvent, QProcess, Qt, QTimer, QUrl
from PySide6.QtGui import QColor, QDesktopServices, QPixmap
from PySide6.QtWidgets import (QComboBox, QDialog, QFileDialog, QFormLayout, QGroupBox,
                               QHBoxLayout, QHeaderView, QLabel, QLineEdit, QPlainTextEdit, QPushButton,
                               QSizePolicy, QSpinBox, QSplitter, QTableWidget, QTableWidgetItem,
                               QVBoxLayout)

from mmrig.sweep.campaign import (DISPATCHES, EXIT_CLUSTER_LOST, EXIT_INTERRUPTED, LOADS, Campaign, Plan, SweepError,
                                  parse_choices, parse_distances, parse_rates)
from mmrig.gui.screenfit import fit_to_screen
from mmanalysis.sweepplots import POINTS_FILE, load_campaign
from mmrig.gui.widgets.controls import radio_pair

POLL_MS = 400
BAD_STYLE = "QLineEdit { background: #ffd6d6; border: 1px solid #d00000; }"
COLUMNS = ("point", "state", "events", "on time", "ok / late / early / missed / lost", "valid", "worker")
OUTCOMES = ("ok", "late", "early", "missed", "lost")


def sweep_command() -> list[str]:
    """How to run `mmrig sweep` here: this interpreter, the command line's module (no installed script needed)."""
    return [sys.executable, "-m", "mmrig", "sweep"]


class SweepWindow(QDialog):
    def __init__(self, folder: Path | None = None, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Sweep campaign")
        fit_to_screen(self, 1280, 900)
        self.errors: dict[str, str] = {}           # field name -> the core's message (tests read them)
        self.proc: QProcess | None = None
        self._stop_pending = False
        self._sessions_before: int | None = None
        self.exit_code: int | None = None
        self.doc: dict[str, Any] | None = None
        self._doc_mtime: float | None = None
        self._figure_mtime: float | None = None
        self.log_lines: list[str] = []
        self._build(folder)
        self.validate()
        self._poll = QTimer(self)
        self._poll.setInterval(POLL_MS)
        self._poll.timeout.connect(self.refresh)
        self._poll.start()
        self.refresh()
        if parent is not None:
            parent.installEventFilter(self)     # the main window closing ends a running campaign cleanly

    # ---- building --------------------------------------------------------------------------------
    def _build(self, folder: Path | None) -> None:
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        top = QHBoxLayout()
        lay.addLayout(top)
        top.addWidget(self._build_axes(), 3)
        top.addWidget(self._build_where(folder), 4)
        lay.addLayout(self._build_buttons())
        self.problem = QLabel("")
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet("color: #b00000;")
        self.problem.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.problem.hide()
        lay.addWidget(self.problem)
        lay.addWidget(self._build_results(), 1)
        for w in (self.distance, self.rate, self.dispatch, self.load, self.cluster, self.folder):
            w.textChanged.connect(self.validate)
        for b in (self.lockstep, self.paced, self.use_local, self.use_cluster):
            b.toggled.connect(self.validate)
        self.mode.currentIndexChanged.connect(self.validate)
        self.count.valueChanged.connect(self.validate)
        self._fields = {"distance": self.distance, "rate": self.rate, "dispatch": self.dispatch,
                        "load": self.load, "mode": self.mode, "cluster": self.cluster, "folder": self.folder}
        self._tips = {name: w.toolTip() for name, w in self._fields.items()}

    def _build_axes(self) -> QGroupBox:
        axes = QGroupBox("Axes (as mmrig sweep takes them)")
        form = QFormLayout(axes)
        self.distance = QLineEdit("1..4")
        self.distance.setToolTip("schedule distances, ticks ahead: a range 1..4 or a list 1,2,4")
        self.rate = QLineEdit("tick")
        self.rate.setToolTip("tick, Nticks (tick-aligned) or Xms (the free-running timer), comma-separated")
        self.dispatch = QLineEdit("isr")
        self.dispatch.setToolTip("isr, task or isr,task")
        self.load = QLineEdit("idle")
        self.load.setToolTip(f"PC load conditions: {', '.join(LOADS)}; anything but idle needs paced")
        self.mode = QComboBox()
        self.mode.addItems(["mixed", "verification", "normal"])
        self.count = QSpinBox()
        self.count.setRange(1, 1_000_000)
        self.count.setValue(200)
        self.count.setSuffix(" events per point")
        form.addRow("distance", self.distance)
        form.addRow("rate", self.rate)
        form.addRow("dispatch", self.dispatch)
        form.addRow("load", self.load)
        form.addRow("mode", self.mode)
        form.addRow("count", self.count)
        return axes

    def _build_where(self, folder: Path | None) -> QGroupBox:
        where = QGroupBox("Where the points run")
        wl = QVBoxLayout(where)
        self.lockstep, self.paced, self.bench_group = radio_pair(
            self, "lockstep: points in parallel as Dask tasks",
            "paced: one at a time in the sweep's process (they measure the host)")
        wl.addWidget(self.lockstep)
        wl.addWidget(self.paced)
        self.load_note = QLabel("Lockstep refuses load conditions other than idle: a lockstep point does not "
                                "depend on the host. Choose paced to sweep the PC's load.")
        self.load_note.setWordWrap(True)
        self.load_note.setStyleSheet("color: #555;")
        wl.addWidget(self.load_note)
        row = QHBoxLayout()
        self.use_local, self.use_cluster, self.cluster_group = radio_pair(self, "local cluster, workers",
                                                                          "Dask scheduler")
        self.workers = QSpinBox()
        self.workers.setRange(1, 256)
        self.workers.setValue(2)
        self.cluster = QLineEdit()
        self.cluster.setPlaceholderText("tcp://HOST:PORT")
        row.addWidget(self.use_local)
        row.addWidget(self.workers)
        row.addWidget(self.use_cluster)
        row.addWidget(self.cluster, 1)
        wl.addLayout(row)
        frow = QHBoxLayout()
        frow.addWidget(QLabel("campaign folder"))
        self.folder = QLineEdit(str(folder) if folder else "")
        self.folder.setToolTip("the campaign folder: points/, campaign.json, figures/")
        frow.addWidget(self.folder, 1)
        browse = QPushButton("Browse...")
        browse.clicked.connect(self.browse)
        frow.addWidget(browse)
        wl.addLayout(frow)
        wl.addStretch(1)
        return where

    def _build_buttons(self) -> QHBoxLayout:
        buttons = QHBoxLayout()
        self.start_button = QPushButton("Start")
        self.start_button.clicked.connect(self.start)
        self.stop_button = QPushButton("Stop")
        self.stop_button.clicked.connect(self.stop)
        self.resume_button = QPushButton("Resume")
        self.resume_button.setToolTip("continue the campaign in the folder with its own axes (mmrig sweep --resume)")
        self.resume_button.clicked.connect(self.resume)
        self.report_button = QPushButton("Open report")
        self.report_button.setToolTip("the campaign's on-time figure (figures/on_time.svg; mmrig report has no "
                                      "campaign section yet)")
        self.report_button.clicked.connect(self.open_report)
        self.folder_button = QPushButton("Open folder")
        self.folder_button.clicked.connect(self.open_folder)
        for b in (self.start_button, self.stop_button, self.resume_button, self.report_button, self.folder_button):
            buttons.addWidget(b)
        self.status = QLabel("")
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons.addWidget(self.status, 1)
        return buttons

    def _build_results(self) -> QSplitter:
        """The points' table over the command's log, beside the campaign's on-time figure."""
        split = QSplitter(Qt.Orientation.Horizontal)
        left = QSplitter(Qt.Orientation.Vertical)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setWordWrap(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        left.addWidget(self.table)
        self.log = QPlainTextEdit()
        self.log.setReadOnly(True)
        self.log.setMaximumBlockCount(2000)
        left.addWidget(self.log)
        left.setSizes([500, 160])
        split.addWidget(left)
        self.figure = QLabel("the on-time figure appears here when the campaign ends")
        self.figure.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
        self.figure.setMinimumWidth(420)
        self.figure.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.figure.setStyleSheet("background: white; color: #555;")
        split.addWidget(self.figure)
        split.setSizes([700, 560])
        return split

    # ---- the fields ------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.proc is not None

    def folder_path(self) -> Path | None:
        text = self.folder.text().strip()
        return Path(text).expanduser() if text else None

    def plan(self) -> Plan | None:
        """The plan from the fields, or None; every bad field is in self.errors with the core's message."""
        errors: dict[str, str] = {}
        values: dict[str, Any] = {}

        def check(name: str, fn: Callable[[], Any]) -> None:
            try:
                values[name] = fn()
            except SweepError as exc:
                errors[name] = str(exc)

        check("distance", lambda: parse_distances(self.distance.text()))
        check("rate", lambda: parse_rates(self.rate.text()))
        check("dispatch", lambda: parse_choices(self.dispatch.text(), DISPATCHES, "--dispatch"))
        check("load", lambda: parse_choices(self.load.text(), LOADS, "--load"))
        paced = self.paced.isChecked()
        plan = None
        if "load" not in errors:                 # lockstep and loads, normal mode and paced: the core's word
            try:
                Plan(distance=[1], load=values["load"], mode=self.mode.currentText(), paced=paced)
            except SweepError as exc:
                errors["load" if str(exc).startswith("--load") else "mode"] = str(exc)
        if not errors:
            try:
                plan = Plan(distance=values["distance"], rate=values["rate"], dispatch=values["dispatch"],
                            load=values["load"], mode=self.mode.currentText(), count=self.count.value(),
                            paced=paced)
            except SweepError as exc:
                text = str(exc)
                errors["load" if text.startswith("--load") else "mode" if text.startswith("--mode") else
                       "distance"] = text
        if not paced and self.use_cluster.isChecked():
            addr = self.cluster.text().strip()
            if not addr:
                errors["cluster"] = "--cluster: the Dask scheduler's address, tcp://HOST:PORT"
            elif "://" not in addr or not addr.rsplit(":", 1)[-1].isdigit():
                errors["cluster"] = f"--cluster: {addr!r} is not an address like tcp://HOST:PORT"
        folder = self.folder_path()
        if folder is None:
            errors["folder"] = "--out: choose the campaign folder"
        elif folder.exists() and not folder.is_dir():
            errors["folder"] = f"--out: {folder} exists and is not a folder"
        elif plan is not None and (folder / "campaign.json").exists():
            try:
                Campaign.open(folder, plan)
            except SweepError as exc:
                errors["folder"] = str(exc)
        self.errors = errors
        return None if errors else plan

    def validate(self, *_: Any) -> bool:
        plan = self.plan()
        for name, w in self._fields.items():
            bad = self.errors.get(name)
            w.setStyleSheet(BAD_STYLE.replace("QLineEdit", type(w).__name__) if bad else "")
            w.setToolTip(bad or self._tips[name])
        paced = self.paced.isChecked()
        for w in (self.use_local, self.use_cluster, self.workers, self.cluster):
            w.setEnabled(not paced and not self.running)
        self.workers.setEnabled(not paced and self.use_local.isChecked() and not self.running)
        self.cluster.setEnabled(not paced and self.use_cluster.isChecked() and not self.running)
        self.load_note.setStyleSheet("color: #d00000;" if "load" in self.errors and not paced else "color: #555;")
        self.start_button.setEnabled(plan is not None and not self.running)
        self.problem.setText("\n".join(self.errors.values()))
        self.problem.setVisible(bool(self.errors) and not self.running)
        self.start_button.setToolTip("; ".join(self.errors.values()) if self.errors else
                                     f"runs {len(plan.points())} points: mmrig sweep with these arguments")
        self._update_actions()
        return plan is not None

    def _update_actions(self) -> None:
        folder = self.folder_path()
        has_campaign = bool(folder and (folder / "campaign.json").is_file())
        self.stop_button.setEnabled(self.running)
        self.resume_button.setEnabled(has_campaign and not self.running and
                                      (self.doc or {}).get("status") != "complete")
        self.report_button.setEnabled(bool(folder and (folder / "figures" / "on_time.png").is_file()))
        self.folder_button.setEnabled(bool(folder and folder.is_dir()))
        for w in (self.distance, self.rate, self.dispatch, self.load, self.mode, self.count, self.lockstep,
                  self.paced, self.folder):
            w.setEnabled(not self.running)

    def browse(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Campaign folder", self.folder.text())
        if path:
            self.folder.setText(path)

    def where_args(self, paced: bool) -> list[str]:
        if paced:
            return []
        if self.use_cluster.isChecked():
            return ["--cluster", self.cluster.text().strip()]
        return ["--workers", str(self.workers.value())]

    def arguments(self) -> list[str]:
        """`mmrig sweep`'s arguments for the fields (they validate)."""
        args = ["--distance", self.distance.text().strip(), "--rate", self.rate.text().strip(),
                "--dispatch", self.dispatch.text().strip(), "--load", self.load.text().strip(),
                "--mode", self.mode.currentText(), "--count", str(self.count.value()),
                "--out", str(self.folder_path())]
        if self.paced.isChecked():
            args.append("--paced")
        return args + self.where_args(self.paced.isChecked())

    # ---- running ---------------------------------------------------------------------------------
    def start(self) -> bool:
        if self.running or not self.validate():
            return False
        folder = self.folder_path()
        assert folder is not None                   # (validate says so)
        try:
            # mmrig sweep makes only the campaign folder itself (a mistyped --out is refused, not made); the folders
            # above it are the window's to make, as the main window makes its runs folder: the default one, under
            # the app's data folder, is not there on first use
            folder.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self.say(f"cannot make {folder.parent}: {exc.strerror or exc}")
            return False
        return self._launch(self.arguments())

    def resume(self) -> bool:
        """`mmrig sweep --resume --out FOLDER`: the folder's own axes; lockstep with the panel's workers."""
        folder = self.folder_path()
        if self.running or folder is None or not (folder / "campaign.json").is_file():
            return False
        try:
            paced = bool(json.loads((folder / "campaign.json").read_text())["options"]["paced"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            self.say(f"cannot resume: {folder / 'campaign.json'}: {exc}")
            return False
        return self._launch(["--resume", "--out", str(folder), *self.where_args(paced)])

    def _launch(self, args: list[str]) -> bool:
        cmd = sweep_command() + args
        self.exit_code = None
        self._stop_pending = False
        self._sessions_before = self._sessions(running=False)
        self._figure_mtime = None
        self.figure.setPixmap(QPixmap())
        self.figure.setText("the on-time figure appears here when the campaign ends")
        self.say("$ mmrig sweep " + " ".join(args))
        p = QProcess(self)
        p.setProcessChannelMode(QProcess.ProcessChannelMode.MergedChannels)
        p.readyReadStandardOutput.connect(self._read_output)
        p.finished.connect(self._finished)
        p.errorOccurred.connect(self._error)
        self.proc = p
        p.start(cmd[0], cmd[1:])
        self.status.setText("running...")
        self.validate()
        return True

    def _sessions(self, running: bool = True) -> int | None:
        """How many sessions FOLDER/campaign.json records (read afresh); with `running`, None while it is not
        running one."""
        folder = self.folder_path()
        try:
            doc = json.loads((folder / "campaign.json").read_text()) if folder else {}
        except (OSError, ValueError):
            return None
        return len(doc.get("sessions") or []) if doc.get("status") == "running" or not running else None

    def campaign_running(self) -> bool:
        """The command's campaign has begun (this session is in campaign.json): SIGTERM then ends it as Ctrl-C
        does. Before that (the command starting, the folder being written) a SIGTERM is not an interruption
        the command reports, so Stop waits for it."""
        n = self._sessions()
        return n is not None and n > (self._sessions_before or 0)

    def stop(self) -> None:
        """SIGTERM: the command ends the campaign as Ctrl-C does (points done kept, resumable)."""
        if self.proc is None or self._stop_pending:
            return
        self.say("stopping: the points done are kept (Resume continues)")
        self._stop_pending = True
        self._stop_when_running()

    def _stop_when_running(self) -> None:
        if self.proc is not None and self._stop_pending and self.campaign_running():
            self._stop_pending = False
            self.proc.terminate()

    def say(self, text: str) -> None:
        self.log_lines.append(text)
        self.log.appendPlainText(text)

    def _read_output(self) -> None:
        if self.proc is None:
            return
        data = bytes(self.proc.readAllStandardOutput()).decode(errors="replace")
        for line in data.splitlines():
            if line.strip():
                self.say(line)

    def _error(self, err) -> None:
        if err == QProcess.ProcessError.FailedToStart and self.proc is not None:
            self.say(f"mmrig sweep did not start: {self.proc.errorString()}")
            self.proc = None
            self.status.setText("did not start")
            self.validate()

    def _finished(self, code: int, status) -> None:
        self._read_output()
        self.exit_code = code if status == QProcess.ExitStatus.NormalExit else -1
        self._stop_pending = False
        self.proc = None
        self.refresh()
        doc = self.doc or {}
        totals = doc.get("totals") or {}
        meaning = {0: "", 2: " (bad input: see the log)", 3: " (invalid or failed points)",
                   EXIT_CLUSTER_LOST: " (the Dask cluster was lost: no worker or no scheduler; finished points kept, "
                                      "Resume continues)",
                   EXIT_INTERRUPTED: " (interrupted: Resume continues)",
                   -1: " (the sweep process ended abnormally: see the log; Resume continues)"}.get(self.exit_code, "")
        self.status.setText(f"{doc.get('status', 'ended')}: {totals.get('done', 0)}/{totals.get('points', 0)} "
                            f"points done, {totals.get('invalid', 0)} invalid, {totals.get('failed', 0)} failed; "
                            f"exit {self.exit_code}{meaning}")
        self.validate()

    def end_process(self) -> None:
        """A running campaign is stopped as Stop does (its points kept) and waited for, so neither the command
        nor its Dask workers outlive the window."""
        p = self.proc
        if p is not None:
            for _ in range(200):                # up to 20 s for the campaign to begin (see campaign_running)
                if self.campaign_running() or p.waitForFinished(100):
                    break
            p.terminate()
            if not p.waitForFinished(30000):
                p.kill()
                p.waitForFinished(3000)

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt
        self.end_process()
        self._poll.stop()
        super().closeEvent(event)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt
        if obj is self.parent() and event.type() == QEvent.Type.Close:
            self.end_process()
        return False

    # ---- the campaign on disk --------------------------------------------------------------------
    def refresh(self) -> None:
        """The table from the campaign on disk (when it changed), the figure when there is one. The points come
        from FOLDER/points.jsonl, the record each point's change is appended to at once; campaign.json's own
        points are a snapshot refreshed every few seconds (mmanalysis.sweepplots.load_campaign)."""
        folder = self.folder_path()
        path = folder / "campaign.json" if folder else None
        try:
            mtime = path.stat().st_mtime_ns if path else None
        except OSError:
            mtime = None
        if mtime is not None:
            try:
                mtime = (mtime, (folder / POINTS_FILE).stat().st_mtime_ns)
            except OSError:
                mtime = (mtime, None)           # a campaign from before points.jsonl, or none recorded yet
        if mtime is None:
            if self.doc is not None:
                self.doc, self._doc_mtime = None, None
                self.table.setRowCount(0)
        elif mtime != self._doc_mtime:
            try:
                doc = load_campaign(folder)
            except (OSError, ValueError):
                doc = None                      # written atomically, so only a folder that is not a campaign
            if isinstance(doc, dict):
                self.doc, self._doc_mtime = doc, mtime
                self.fill(doc)
        if not self.running:
            self.show_figure()
        else:
            self._stop_when_running()
        self._update_actions()

    def fill(self, doc: dict[str, Any]) -> None:
        points = doc.get("points") or {}
        self.table.setRowCount(len(points))
        for row, (name, e) in enumerate(points.items()):
            s = e.get("summary") or {}
            o = s.get("outcomes") or {}
            share = s.get("on_time_share")
            state = e.get("state", "")
            valid = "" if state != "done" else ("valid" if e.get("valid") else
                                                f"INVALID: {e.get('invalid_reason') or ''}")
            cells = (name, state if state not in ("failed", "refused") else f"{state}: {e.get('error')}",
                     "" if s.get("events") is None else str(s.get("events")),
                     "" if share is None else f"{100 * share:.1f} %",
                     " / ".join(str(o.get(k, 0)) for k in OUTCOMES) if o else "", valid,
                     str(e.get("worker") or ""))
            for col, text in enumerate(cells):
                item = self.table.item(row, col)
                if item is None:
                    item = QTableWidgetItem()
                    self.table.setItem(row, col, item)
                item.setText(text)
                item.setToolTip(text if col in (0, 1, 5, 6) else "")
                if col in (2, 3, 4):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            colour = {"done": "#d8f5d8" if e.get("valid") else "#ffe2b8", "failed": "#ffd6d6", "refused": "#e4e4e4"}.get(state)
            for col in range(len(COLUMNS)):
                item = self.table.item(row, col)
                item.setBackground(Qt.GlobalColor.transparent if colour is None else _colour(colour))
        done = sum(1 for e in points.values() if e.get("state") == "done")
        if self.running:
            self.status.setText(f"running: {done}/{len(points)} points done")

    def figure_path(self) -> Path | None:
        folder = self.folder_path()
        return folder / "figures" / "on_time.png" if folder else None

    def show_figure(self) -> None:
        path = self.figure_path()
        try:
            mtime = path.stat().st_mtime_ns if path else None
        except OSError:
            mtime = None
        if mtime is None or mtime == self._figure_mtime:
            return
        pix = QPixmap(str(path))
        if pix.isNull():
            return
        self._figure_mtime = mtime
        self._pixmap = pix
        self._scale_figure()

    def has_figure(self) -> bool:
        return self._figure_mtime is not None

    def _scale_figure(self) -> None:
        pix = getattr(self, "_pixmap", None)
        if pix is not None and self._figure_mtime is not None:
            self.figure.setPixmap(pix.scaled(self.figure.size(), Qt.AspectRatioMode.KeepAspectRatio,
                                             Qt.TransformationMode.SmoothTransformation))

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt
        super().resizeEvent(event)
        self._scale_figure()

    # ---- opening ---------------------------------------------------------------------------------
    def open_url(self, path: Path) -> None:
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(path)))

    def open_report(self) -> None:
        folder = self.folder_path()
        if folder is None:
            return
        svg = folder / "figures" / "on_time.svg"
        self.open_url(svg if svg.is_file() else folder / "figures" / "on_time.png")

    def open_folder(self) -> None:
        folder = self.folder_path()
        if folder is not None:
            self.open_url(folder)


def _colour(text: str) -> QColor:
    return QColor(text)

