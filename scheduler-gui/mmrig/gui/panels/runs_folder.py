"""The runs folder: where new runs auto-save (shown under the plots, changeable, kept in the settings), and the
file dialogs that choose runs on disk to open, compare, profile or export to, each starting in the folder last
used."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QSettings, QStandardPaths, Signal
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QPushButton, QWidget

from mmrig.gui.widgets.controls import ElidedLabel

RUNS_ENV = "MMRIG_GUI_RUNS"  # a runs folder for this session (tests, scripts): before the saved setting
# A run is NAME.csv with its sidecar NAME.json beside it: every dialog that chooses runs offers both and each
# view takes either file for the run (the compare window asked for the CSV, the profile window for the JSON)
RUN_FILES = "mmrig runs (*.csv *.json)"


def default_runs_dir() -> Path:
    """Where runs auto-save unless the user chose a folder: the per-user application data folder
    (QStandardPaths.AppDataLocation, e.g. ~/.local/share/mmrig/scheduler on Linux) / runs, never the folder the
    app happened to be started from."""
    base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.GenericDataLocation)
    return Path(base or Path.home() / ".local" / "share") / "mmrig" / "scheduler" / "runs"


class RunsFolderPanel(QWidget):
    """The folder label and its Change... button. `runs_dir`: the caller's folder (tests), else $MMRIG_GUI_RUNS,
    else the folder the user chose (saved), else the per-user data folder. `message`: a line for the log."""

    message = Signal(str)

    def __init__(self, settings: QSettings, runs_dir: Path | None = None, parent=None) -> None:
        super().__init__(parent)
        self.settings = settings
        env = os.environ.get(RUNS_ENV)
        saved = settings.value("runs_dir")
        self.runs_dir = (Path(runs_dir) if runs_dir else Path(env) if env else Path(str(saved)) if saved
                         else default_runs_dir())
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        self.runs_label = ElidedLabel()
        self.runs_label.setObjectName("runs_dir")
        self.runs_button = QPushButton("Change...")
        self.runs_button.setToolTip("Choose the folder new runs are saved to (File > Runs folder...)")
        self.runs_button.clicked.connect(self.choose_runs_dir)
        row.addWidget(self.runs_label, 1)
        row.addWidget(self.runs_button)
        self.show_runs_dir()

    def show_runs_dir(self) -> None:
        self.runs_label.setText(f"runs saved to: {self.runs_dir}")
        self.runs_label.setToolTip(str(self.runs_dir))

    def set_runs_dir(self, folder: Path) -> None:
        """New runs auto-save into FOLDER from now on (kept in the settings)."""
        self.runs_dir = Path(folder)
        self.settings.setValue("runs_dir", str(self.runs_dir))
        self.show_runs_dir()
        self.message.emit(f"runs saved to {self.runs_dir}")

    def choose_runs_dir(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Save runs to", str(self.runs_dir))
        if folder:
            self.set_runs_dir(Path(folder))

    # ---- runs on disk: the file dialogs --------------------------------------------------------------------
    def last_dir(self) -> str:
        """Where the file dialogs start: the folder last chosen in one, else the runs folder."""
        return str(self.settings.value("last_dir", str(self.runs_dir)))

    def remember(self, path: str | Path) -> None:
        self.settings.setValue("last_dir", str(Path(path).parent))

    def ask_export_path(self, name: str) -> Path | None:
        """Where to export the run NAME (its CSV; the JSON goes beside it), or None."""
        path, _ = QFileDialog.getSaveFileName(self, "Export run", str(Path(self.last_dir()) / f"{name}.csv"),
                                              "CSV (*.csv)")
        return Path(path) if path else None

    def ask_run(self) -> Path | None:
        """A run to open, or None."""
        path, _ = QFileDialog.getOpenFileName(self, "Open run", self.last_dir(), RUN_FILES)
        if not path:
            return None
        self.remember(path)
        return Path(path)

    def ask_runs_to_compare(self) -> list[Path]:
        paths, _ = QFileDialog.getOpenFileNames(self, "Choose two runs", self.last_dir(), RUN_FILES)
        if paths:
            self.remember(paths[0])
        return [Path(p) for p in paths]

    def ask_sidecars(self) -> list[Path]:
        """Runs (NAME.csv or its sidecar NAME.json, where the profile is) whose executor profiles to show."""
        paths, _ = QFileDialog.getOpenFileNames(self, "Executor profile: choose 1 to 4 runs", self.last_dir(),
                                                RUN_FILES)
        if paths:
            self.remember(paths[0])
        return [Path(p) for p in paths]
