"""The scheduler's main window (the paper's Figure 3 in today's form), composed of panels: connection and run
settings on the left with Start / Stop and the statistics under them; the live view (timecode, LEDs, table and
plots) on the right, with the progress and the runs folder under it and the log at the bottom; the menus. The
window wires their signals, runs an experiment through a RunWorker in a thread of its own, and opens,
exports and compares runs on disk."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QSettings, Qt, QThread, QTimer
from PySide6.QtWidgets import (QFrame, QHBoxLayout, QMainWindow, QMessageBox, QPlainTextEdit, QPushButton, QScrollArea,
                               QVBoxLayout, QWidget)

from mmsched.model.config import RunConfig
from mmsched.model.eventstore import EventStore
from mmsched.link.endpoint import Endpoint
from mmsched.verdict.export import write_run
from mmsched.model.result import RunResult

from mmrig.gui.explainer import Explainer
from mmrig.gui.feed import EventFeed
from mmrig.gui.menus import Menus
from mmrig.gui.model import EventModel
from mmrig.gui.panels.connection import ConnectionPanel
from mmrig.gui.panels.live import NOTICE_STYLE, LivePanel
from mmrig.gui.panels.run_settings import RunSettingsPanel
from mmrig.gui.panels.runs_folder import RunsFolderPanel
from mmrig.gui.replayaction import SHOW_MS, WINDOW_MS, ReplayWorker, Traced, why_not
from mmrig.gui.rows import load_run
from mmrig.gui.screenfit import fit_to_screen
from mmrig.gui.worker import Problem, RunWorker, explain, start_in_thread

LEFT_WIDTH = 360    # the left column's panels


class MainWindow(QMainWindow):
    def __init__(self, settings: QSettings | None = None, runs_dir: Path | None = None) -> None:
        super().__init__()
        self.settings = settings or QSettings("mmrig", "scheduler")
        self.setWindowTitle("mmrig scheduler")
        self.model = EventModel(self)
        self.feed: EventFeed | None = None
        self.worker: RunWorker | None = None
        self.thread: QThread | None = None
        self.result: RunResult | None = None
        self.viewing: str | None = None          # the opened run's name, None while a run (or nothing) shows
        self.viewing_json: Path | None = None
        self.replay_worker: ReplayWorker | None = None      # a replay with trace around an event (replayaction.py)
        self.viewing_sidecar: dict[str, Any] | None = None
        self._fitted_shown = False               # fitted to the screen again once shown, its frame known (showEvent)
        self.problems: list[Problem] = []       # every message shown (tests read them)
        self.quiet = False                      # tests: no modal dialogs, messages go to the log and the banner
        self.connection = ConnectionPanel()
        self.run_settings = RunSettingsPanel()
        self.live = LivePanel(self.model, self.tick_us)
        self.live.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.live.table.customContextMenuRequested.connect(self.event_menu)
        # the selected event's explanation, in a thread of its own (it may read the run's host trace: seconds)
        self.explainer = Explainer(self)
        self.explain_ticket = 0
        self.explainer.explained.connect(self.explained)
        self.explainer.failed.connect(self.explain_failed)
        self.explainer.reading.connect(self.explain_reading)
        self.live.table.selectionModel().selectionChanged.connect(self.explain_selected)
        self.runs_folder = RunsFolderPanel(self.settings, runs_dir)
        self._build()
        self.menus = Menus(self)
        self._wire()
        self.restore_settings()
        self.run_settings.on_mode_changed()
        self.connection.refresh_ports()

    # ---- building --------------------------------------------------------------------------------
    def _build(self) -> None:
        central = QWidget()
        root = QHBoxLayout(central)
        root.setContentsMargins(6, 6, 6, 6)
        # the left column scrolls when the screen is shorter than its panels (a 1280 x 800 laptop less its desktop
        # panel): the window's height is the screen's, never the column's
        left_host = QWidget()
        left = QVBoxLayout(left_host)
        left.setContentsMargins(0, 0, 0, 0)
        self.left_scroll = QScrollArea()
        self.left_scroll.setWidget(left_host)
        self.left_scroll.setWidgetResizable(True)
        self.left_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.left_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.left_scroll.setFixedWidth(LEFT_WIDTH + self.left_scroll.verticalScrollBar().sizeHint().width() + 2)
        root.addWidget(self.left_scroll, 0)
        left.addWidget(self.connection)
        left.addWidget(self.run_settings)
        buttons = QHBoxLayout()
        self.start_button = QPushButton("Start  (Ctrl+R)")
        self.stop_button = QPushButton("Stop  (Esc)")
        self.stop_button.setEnabled(False)
        self.start_button.setStyleSheet("font-weight:bold;padding:6px;")
        self.stop_button.setStyleSheet("padding:6px;")
        buttons.addWidget(self.start_button)
        buttons.addWidget(self.stop_button)
        left.addLayout(buttons)
        left.addWidget(self.live.stats)
        left.addStretch(1)
        for w in (self.connection, self.run_settings, self.live.stats):
            w.setFixedWidth(LEFT_WIDTH)
        right = QVBoxLayout()
        root.addLayout(right, 1)
        right.addWidget(self.live, 1)
        # one row under the table and plots: the run's progress (left), where runs are saved (right); in this
        # column, whose plots stretch, so the window keeps its 1280 x 800
        info = QHBoxLayout()
        info.setContentsMargins(0, 0, 0, 0)
        info.addWidget(self.live.progress, 3)
        info.addWidget(self.runs_folder, 2)
        right.addLayout(info)
        self.log_view = QPlainTextEdit()
        self.log_view.setReadOnly(True)
        self.log_view.setMaximumBlockCount(2000)
        self.log_view.setFixedHeight(70)
        # the newest line in view: a long line wraps when the view lays it out, after appendPlainText returned,
        # and the range grows then (a 150-character "done: ... files" line sat half below the view)
        self.log_view.verticalScrollBar().rangeChanged.connect(lambda lo, hi: self.log_view.verticalScrollBar()
                                                               .setValue(hi))
        right.addWidget(self.log_view)
        self.setCentralWidget(central)

    def _wire(self) -> None:
        c, s, m = self.connection, self.run_settings, self.menus
        s.mode_changed.connect(c.set_mode)
        c.bench_changed.connect(s.set_traceable)
        c.tick_changed.connect(s.set_tick_ms)
        c.timer_hz_changed.connect(self.set_timer_hz)
        c.message.connect(self.say)
        c.problem.connect(self.show_problem)
        c.probe_button.clicked.connect(self.probe)
        self.runs_folder.message.connect(self.say)
        self.start_button.clicked.connect(self.start_run)
        self.stop_button.clicked.connect(self.stop_run)
        m.export_action.triggered.connect(self.export_dialog)
        m.open_action.triggered.connect(self.open_dialog)
        m.compare_action.triggered.connect(self.compare_dialog)
        m.runs_action.triggered.connect(self.runs_folder.choose_runs_dir)
        m.quit_action.triggered.connect(self.close)
        m.start_action.triggered.connect(self.start_run)
        m.stop_action.triggered.connect(self.stop_run)
        for mode, action in m.mode_actions.items():
            action.triggered.connect(lambda _on=False, mode=mode: s.set_mode(mode))
        m.refresh_action.triggered.connect(c.refresh_ports)
        for mode, action in m.axis_actions.items():
            action.triggered.connect(lambda _on=False, mode=mode: self.set_axis_mode(mode))
        m.follow_action.triggered.connect(self.live.set_follow)
        m.profile_action.triggered.connect(self.profile_dialog)
        m.sweep_action.triggered.connect(lambda: self.open_sweep())

    # ---- settings --------------------------------------------------------------------------------
    def restore_settings(self) -> None:
        s = self.settings
        self.run_settings.restore(s)
        self.connection.restore(s)
        # "true" / "false": the log switch this menu once was (false was its default: now automatic)
        axis = {"true": "log", "false": "auto"}.get(str(s.value("log_axis", "auto")).lower(),
                                                    str(s.value("log_axis", "auto")))
        self.set_axis_mode(axis if axis in self.menus.axis_actions else "auto", redraw=False)
        geo = s.value("geometry")
        if isinstance(geo, QByteArray) and self.restoreGeometry(geo):
            fit_to_screen(self, self.width(), self.height())    # saved on a larger screen: this one's size
        else:
            fit_to_screen(self, 1280, 800)
        self.run_settings.update_labels()
        self.connection.on_connection_changed()

    def save_settings(self) -> None:
        s = self.settings
        self.run_settings.save(s)
        self.connection.save(s)
        s.setValue("log_axis", {"log": "true", "linear": "linear"}.get(self.live.plots.axis_mode, "auto"))
        s.setValue("geometry", self.saveGeometry())
        s.sync()

    def showEvent(self, event) -> None:  # noqa: N802 - Qt
        """Once shown, the window's frame (the title bar a window manager adds, 25 px or so) is known: fitted again
        with it, so a restored geometry that fitted the screen without its frame does not end below the screen's
        edge (the left column then scrolls and the statistics are cut)."""
        super().showEvent(event)
        if not self._fitted_shown:
            self._fitted_shown = True
            QTimer.singleShot(0, lambda: fit_to_screen(self, self.width(), self.height()))

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt
        self.save_settings()
        if self.worker is not None:
            self.worker.stop()
        if self.thread is not None:
            self.thread.quit()
            self.thread.wait(15000)
        self.explainer.stop()
        super().closeEvent(event)

    # ---- state -------------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.worker is not None

    def tick_us(self) -> float:
        """The profiler's tick: the viewed run's timebase, else the last HELLO's, else the default."""
        tb = (self.viewing_sidecar or {}).get("timebase") if self.viewing is not None else None
        if self.result is not None:
            tb = (self.result.sidecar or {}).get("timebase") or tb
        if tb and tb.get("timer_hz"):
            return 1e6 * tb["tick_counts"] / tb["timer_hz"]
        return 1000.0 * self.run_settings.tick_ms

    def config(self) -> RunConfig:
        return self.run_settings.config(on_bench=self.connection.on_bench())

    def endpoint(self) -> Endpoint:
        return self.connection.endpoint()

    def set_timer_hz(self, hz: float) -> None:
        """The profiler's counter rate, for the table's moments inside ticks (rows added after it use it)."""
        self.model.timer_hz = hz

    def set_axis_mode(self, mode: str, redraw: bool = True) -> None:
        """auto, log or linear latency axes (View > Latency axis)."""
        self.live.set_axis_mode(mode, redraw)
        self.menus.axis_actions[mode].setChecked(True)

    def probe(self) -> None:
        try:
            endpoint, cfg = self.endpoint(), self.config()
        except ValueError as exc:
            self.show_problem(Problem("Invalid settings", str(exc)))
            return
        self.connection.probe(endpoint, cfg)

    # ---- messages ------------------------------------------------------------------------------------
    def say(self, text: str) -> None:
        self.log_view.appendPlainText(f"{time.strftime('%H:%M:%S')}  {text}")
        bar = self.log_view.verticalScrollBar()     # the newest line in view (and as it wraps: __init__)
        bar.setValue(bar.maximum())

    def show_problem(self, p: Problem, modal: bool = True) -> None:
        self.problems.append(p)
        self.say(f"{p.title}: {p.text}")
        self.live.show_banner(f"<b>{p.title}</b>: {p.text}")
        if modal and not self.quiet:
            box = QMessageBox(QMessageBox.Icon.Warning, p.title, p.text, QMessageBox.StandardButton.Ok, self)
            if p.details and p.details != p.text:
                box.setDetailedText(p.details)
            box.exec()

    # ---- running -------------------------------------------------------------------------------------
    def attach_feed(self, feed: EventFeed) -> None:
        """The one path from the core into the view (runs and the benchmark use it)."""
        self.feed = feed
        feed.batch.connect(self.model.apply)
        feed.timecode.connect(self.live.timecode.set_timecode)
        feed.fired.connect(self.live.leds.light)
        feed.phase.connect(lambda ph: self.say(f"run: {ph}"))
        feed.tick_fit.connect(lambda fit: self.live.progress.set_fit(*fit))

    def start_run(self) -> None:
        if self.running:
            return
        try:
            cfg = self.config()
            endpoint = self.endpoint()
        except ValueError as exc:
            self.show_problem(Problem("Invalid settings", str(exc)))
            return
        cfg.out = self.runs_folder.runs_dir / cfg.name
        try:       # the runs folder (the app's own data folder by default): a run's files make no folder
            self.runs_folder.runs_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self.show_problem(Problem("Cannot save runs", f"{self.runs_folder.runs_dir}: {exc.strerror or exc}"))
            return
        self.save_settings()
        self.live.hide_banner()
        self.result = None
        self.viewing = None
        self.live.start_live(cfg.count, cfg.duration_s)
        self.attach_feed(EventFeed())
        assert self.feed is not None
        self.worker = RunWorker(cfg, endpoint, self.feed)
        self.worker.log.connect(self.say)
        self.worker.health.connect(self.connection.show_health)
        self.worker.finished.connect(self.on_finished)
        self.worker.failed.connect(self.on_failed)
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
        self.stop_button.setEnabled(on)
        self.menus.set_running(on)
        self.connection.set_running(on)
        self.run_settings.set_running(on)
        self.live.running = on

    def _end_thread(self) -> None:
        if self.thread is not None:
            self.thread.quit()
            self.thread.wait(5000)
        self.thread = None
        self.worker = None
        self.set_running(False)

    def on_finished(self, result: RunResult) -> None:
        self.result = result
        self.set_timer_hz(float(((result.sidecar or {}).get("timebase") or {}).get("timer_hz") or self.model.timer_hz))
        self._end_thread()
        self.live.timecode.reset()          # no line is live any more: the last run's timecode is not the nodes' now
        self.live.progress.finish(len(result.events))
        self.live.stats.setTitle(f"Statistics: {(result.sidecar or {}).get('name') or 'last run'}")
        # the view ends on the core's own final events (the same the CSV has)
        self.model.end_on(result.events)
        self.live.follow_to_end()
        self.live.redraw(force=True)
        s = result.summary
        self.live.show_budget(result.sidecar)
        self.say(f"done: {s['events']} events, ok {s['outcomes']['ok']}; files {result.csv_path}")
        prof = (result.sidecar or {}).get("executor_profile")
        if prof:
            self.say(f"executor traced: U = {prof.get('U', 0):.4f}, idle {100 * (prof.get('idle') or {}).get('share', 0):.1f} %"
                     f" over {prof.get('seconds', 0):.2f} s: View > Executor profile (Ctrl+P)")
        if not result.valid:
            reasons = result.sidecar.get("invalid_reasons") or [{"code": None, "text": result.sidecar["invalid_reason"]}]
            # a host stall is this machine's, not the user's doing: said in the banner, no dialog
            self.show_problem(explain(reasons[0]), modal=set(result.reasons) != {"bench_lag"})

    def on_failed(self, p: Problem) -> None:
        self._end_thread()
        self.live.timecode.reset()
        self.live.progress.finish(self.live.ended())
        self.live.progress.label.setText(f"run failed: {p.title}")
        self.show_problem(p)

    # ---- runs on disk ------------------------------------------------------------------------------------
    def export_to(self, path: Path) -> tuple[Path, Path]:
        """Writes the last run's CSV + JSON (the core's writer, the core's events) to `path`."""
        if self.result is None:
            raise ValueError("no finished run to export")
        events = self.result.events
        # a long run's result holds its newest events only (mmrig.child.sent_result): its CSV is the run's own
        tail = isinstance(events, EventStore) and not events.whole and self.result.csv_path is not None
        return write_run(Path(path), events, self.result.sidecar, csv_from=self.result.csv_path if tail else None)

    def export_dialog(self) -> None:
        if self.result is None:
            self.show_problem(Problem("Nothing to export", "Run an experiment first (an opened run is already on disk)."))
            return
        path = self.runs_folder.ask_export_path(self.result.sidecar["name"])
        if path is None:
            return
        try:
            csv_path, json_path = self.export_to(path)
        except OSError as exc:
            self.show_problem(Problem("Export failed", f"Cannot write {path}: {exc.strerror or exc}"))
            return
        self.runs_folder.remember(path)
        self.say(f"exported {csv_path} and {json_path}")

    def open_run(self, path: Path) -> bool:
        try:
            rows, sidecar, name = load_run(path)
        except (ValueError, OSError) as exc:
            self.show_problem(Problem("Cannot open run", str(exc)))
            return False
        self.result = None
        self.set_timer_hz(float(((sidecar or {}).get("timebase") or {}).get("timer_hz") or self.model.timer_hz))
        self.viewing = name
        self.viewing_json = Path(path).with_suffix(".json")
        self.viewing_sidecar = sidecar
        self.model.set_rows(rows)
        self.live.show_opened(name, (sidecar or {}).get("summary"))
        self.live.show_budget(sidecar)
        self.live.redraw(force=True)
        if sidecar and not sidecar.get("valid", True):
            self.live.show_banner(f"<b>Viewing an invalid run</b>: {sidecar.get('invalid_reason')}", NOTICE_STYLE)
        self.say(f"opened {name}: {len(rows)} events")
        return True

    def open_dialog(self) -> None:
        path = self.runs_folder.ask_run()
        if path is not None:
            self.open_run(path)

    def compare_dialog(self) -> None:
        paths = self.runs_folder.ask_runs_to_compare()
        if len(paths) != 2:
            if paths:
                self.show_problem(Problem("Compare", "Choose exactly two runs (Ctrl-click the second)."))
            return
        self.compare(paths[0], paths[1])

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

    # ---- the executor profile ------------------------------------------------------------------------------
    def profile_dialog(self) -> None:
        """The last run's executor profile if it was traced (or the opened run's), else OUT.json files to choose."""
        from mmrig.gui.profile import ProfileRun

        if self.result is not None and (self.result.sidecar or {}).get("executor_profile"):
            self.open_profile([ProfileRun.from_result(self.result)])
            return
        sidecar = self.viewing_sidecar if self.viewing is not None else None
        if sidecar and sidecar.get("executor_profile") and self.viewing_json is not None:
            self.open_profile([ProfileRun(self.viewing, sidecar, self.viewing_json.parent)])
            return
        paths = self.runs_folder.ask_sidecars()
        if paths:
            self.profile_runs(paths)

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

    # ---- the selected event's explanation (explainer.py) -----------------------------------------------------
    def explain_selected(self, *_: Any) -> None:
        """The table's selection moved: the current row's event explained (nothing for a selection cleared)."""
        table = self.live.table
        row = table.currentIndex().row()
        if row < 0 or not table.selectionModel().isRowSelected(row) or row >= len(self.model.rows):
            return
        self.explain_event(int(self.model.rows[row].event))

    def explain_event(self, event: int) -> bool:
        """EVENT of the run in view explained in the pane under the table (False: it cannot be yet, and why is
        there instead)."""
        pane = self.live.explanation
        self.live.open_explanation()
        self.explain_ticket = -1                 # an answer still coming for an earlier event is not shown
        if self.running:
            pane.show_message(event, "the run is still going: its events are explained once it has ended")
            return False
        csv = self.viewed_csv()
        if csv is None or not csv.is_file():
            pane.show_message(event, "the run is not on disk: open it (File > Open run) to have its events explained")
            return False
        pane.show_waiting(event)
        self.explain_ticket = self.explainer.request(csv, event)
        return True

    def explained(self, ticket: int, item) -> None:
        if ticket == self.explain_ticket:
            self.live.explanation.show_item(item)

    def explain_failed(self, ticket: int, text: str) -> None:
        if ticket == self.explain_ticket:
            self.live.explanation.show_message(self.live.explanation.event, f"cannot be explained: {text}")

    def explain_reading(self, ticket: int, what: str) -> None:
        if ticket == self.explain_ticket and self.live.explanation.event is not None:
            self.live.explanation.show_waiting(self.live.explanation.event, what)

    # ---- replay with trace around an event (replayaction.py) -----------------------------------------------
    def viewed_csv(self) -> Path | None:
        if self.result is not None and getattr(self.result, "csv_path", None):
            return Path(self.result.csv_path)
        return self.viewing_json.with_suffix(".csv") if self.viewing_json is not None else None

    def viewed_sidecar(self) -> dict | None:
        return self.result.sidecar if self.result is not None else self.viewing_sidecar

    def event_menu(self, pos) -> None:
        """The table's context menu: the event under the pointer replayed with the executor traced around it."""
        from PySide6.QtWidgets import QMenu

        index = self.live.table.indexAt(pos)
        if not index.isValid() or index.row() >= len(self.model.rows):
            return
        event = int(self.model.rows[index.row()].event)
        menu = QMenu(self)
        act = menu.addAction(f"Replay with trace around event {event}")
        why = why_not(self.viewed_sidecar(), self.viewed_csv())
        act.setEnabled(why is None and self.replay_worker is None)
        act.setToolTip(why or "computed again on the bench from the run's record of its inputs (docs/replay.md)")
        menu.setToolTipsVisible(True)
        act.triggered.connect(lambda: self.replay_around(event))
        menu.popup(self.live.table.viewport().mapToGlobal(pos))

    def replay_around(self, event: int) -> bool:
        """Starts the replay of the viewed run traced around EVENT; the profile window opens when it is done."""
        csv = self.viewed_csv()
        why = why_not(self.viewed_sidecar(), csv)
        if why is not None or csv is None:
            self.say(f"replay: {why}")
            return False
        self.replay_worker = ReplayWorker(csv, event, self)
        self.replay_worker.done.connect(self.replay_done)
        self.replay_worker.failed.connect(self.replay_failed)
        self.replay_worker.finished.connect(self.replay_finished)
        self.say(f"replaying {csv.stem} with the executor traced around event {event} ...")
        self.replay_worker.start()
        return True

    def replay_done(self, traced: Traced) -> None:
        from mmrig.gui.profile import ProfileRun

        self.say(traced.said)
        sidecar = dict(self.viewed_sidecar() or {}, executor_profile=traced.profile)
        w = self.open_profile([ProfileRun(f"{traced.name} around event {traced.event}", sidecar, traced.folder,
                                          traced.trace)])
        w.gantt.set_x_range(WINDOW_MS - SHOW_MS[0], WINDOW_MS + SHOW_MS[1])   # the event's moment

    def replay_failed(self, text: str) -> None:
        self.say(text)

    def replay_finished(self) -> None:
        self.replay_worker = None

    def open_profile(self, runs):
        from mmrig.gui.profile import ProfileWindow

        w = ProfileWindow(runs, self)
        w.show()
        self.profile_window = w
        return w

    # ---- a sweep campaign ----------------------------------------------------------------------------------
    def open_sweep(self, folder: Path | None = None):
        """The sweep window: a campaign's axes, `mmrig sweep` in a process of its own, its points as they end."""
        from mmrig.gui.sweep import SweepWindow

        w = getattr(self, "sweep_window", None)
        if w is not None and w.isVisible():
            w.raise_()
            w.activateWindow()
            return w
        w = SweepWindow(folder or self.runs_folder.runs_dir.parent / "campaigns" / "sweep", self)
        w.show()
        self.sweep_window = w
        return w
