"""Where runs are saved: a per-user folder (never the folder the app was started from), shown, changeable,
kept; the environment's folder first."""

from __future__ import annotations


def test_runs_folder_is_per_user_shown_and_changeable(qtbot, tmp_path, monkeypatch) -> None:
    from PySide6.QtCore import QSettings

    from mmrig.gui.panels.runs_folder import RUNS_ENV
    from mmrig.gui.window import MainWindow

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv(RUNS_ENV, raising=False)
    cwd = tmp_path / "started-here"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    ini = str(tmp_path / "s.ini")

    def make() -> MainWindow:
        w = MainWindow(QSettings(ini, QSettings.Format.IniFormat))
        w.quiet = True
        qtbot.addWidget(w)
        return w

    win = make()
    # not ./results/gui of wherever the app was started: the user's data folder
    assert win.runs_folder.runs_dir == tmp_path / "xdg" / "mmrig" / "scheduler" / "runs", win.runs_folder.runs_dir
    assert cwd not in win.runs_folder.runs_dir.parents
    assert str(win.runs_folder.runs_dir) in win.runs_folder.runs_label.text()
    assert win.config().name.startswith("gui-")
    # changed: shown, kept for the next start
    win.runs_folder.set_runs_dir(tmp_path / "mine")
    assert str(tmp_path / "mine") in win.runs_folder.runs_label.text()
    win.close()
    assert make().runs_folder.runs_dir == tmp_path / "mine"
    # the environment variable (tests, scripts) comes first
    monkeypatch.setenv(RUNS_ENV, str(tmp_path / "env-runs"))
    assert make().runs_folder.runs_dir == tmp_path / "env-runs"
