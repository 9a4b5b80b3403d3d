"""The main window's menus and their keyboard shortcuts: File, Run, View. Only the actions: the window connects
what each one does."""

from __future__ import annotations

from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu

MODES = ("mixed", "normal", "verification")
# latency axes: automatic (log when the data span decades: the default), or forced log / linear
AXES = (("auto", "&Automatic (log when the data span decades)", "Ctrl+Shift+L"), ("log", "&Log", "Ctrl+L"),
        ("linear", "Li&near", None))


class Menus:
    """The menu bar of `window`; each action is also the window's, so its shortcut works anywhere in it."""

    def __init__(self, window: QMainWindow) -> None:
        self.window = window
        bar = window.menuBar()
        f = bar.addMenu("&File")
        run = bar.addMenu("&Run")
        view = bar.addMenu("&View")
        self.export_action = self._act(f, "&Export CSV + JSON...", "Ctrl+E")
        self.open_action = self._act(f, "&Open run...", "Ctrl+O")
        self.compare_action = self._act(f, "&Compare two runs...", "Ctrl+K")
        self.runs_action = self._act(f, "&Runs folder...", None)
        f.addSeparator()
        self.quit_action = self._act(f, "&Quit", "Ctrl+Q")
        self.start_action = self._act(run, "&Start", "Ctrl+R")
        self.stop_action = self._act(run, "S&top", "Esc")
        self.mode_actions = {m: self._act(run, f"Mode: {m}", f"Alt+{i}") for i, m in enumerate(MODES, 1)}
        self.refresh_action = self._act(run, "Refresh serial ports", "F5")
        axes = view.addMenu("Latency &axis")
        self.axis_group = QActionGroup(window)
        self.axis_actions: dict[str, QAction] = {}
        for mode, text, key in AXES:
            a = self._act(axes, text, key, checkable=True)
            self.axis_group.addAction(a)
            self.axis_actions[mode] = a
        self.follow_action = self._act(view, "&Follow newest event", "Ctrl+F", checkable=True)
        self.follow_action.setChecked(True)
        view.addSeparator()
        self.profile_action = self._act(view, "Executor &profile...", "Ctrl+P")
        self.sweep_action = self._act(view, "S&weep campaign...", "Ctrl+Shift+W")

    def _act(self, menu: QMenu, text: str, key: str | None, checkable: bool = False) -> QAction:
        a = QAction(text, self.window)
        if key:
            a.setShortcut(QKeySequence(key))
        a.setCheckable(checkable)
        menu.addAction(a)
        self.window.addAction(a)
        return a

    def set_running(self, on: bool) -> None:
        """While a run goes: no new start, no file to open, compare or export."""
        for a in (self.start_action, self.open_action, self.compare_action, self.export_action):
            a.setEnabled(not on)
