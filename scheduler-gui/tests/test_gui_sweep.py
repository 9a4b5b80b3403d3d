"""The sweep window: its fields checked by the core's parse functions, a tiny lockstep campaign
started from the panel (`mmrig sweep` in a process of its own) followed to the end, its table and figure,
and a campaign stopped half-way that Resume completes. Screenshot: build/screenshots/sweep.png."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "build" / "screenshots"


@pytest.fixture
def make_sweep(qtbot, tmp_path):
    from mmrig.gui.sweep import SweepWindow

    made = []

    def make(folder: Path | None = None):
        w = SweepWindow(folder or tmp_path / "camp")
        qtbot.addWidget(w)
        w.resize(1400, 900)
        w.show()
        made.append(w)
        return w
    yield make
    for w in made:
        if w.proc is not None:
            w.proc.kill()
            w.proc.waitForFinished(5000)


def tiny(w, count: int = 20, distance: str = "1..2") -> None:
    w.distance.setText(distance)
    w.rate.setText("tick")
    w.dispatch.setText("isr")
    w.load.setText("idle")
    w.count.setValue(count)
    w.lockstep.setChecked(True)
    w.use_local.setChecked(True)
    w.workers.setValue(2)


def test_fields_validate_with_the_core_messages(make_sweep) -> None:
    from mmrig.sweep.campaign import SweepError, parse_distances

    w = make_sweep()
    tiny(w)
    assert w.start_button.isEnabled() and not w.errors
    w.distance.setText("4..1")
    with pytest.raises(SweepError) as exc:
        parse_distances("4..1")
    assert w.errors == {"distance": str(exc.value)}
    assert not w.start_button.isEnabled()
    assert w.distance.toolTip() == str(exc.value) and "#ffd6d6" in w.distance.styleSheet()
    assert w.problem.isVisible() and w.problem.text() == str(exc.value)
    w.load.setText("cpu")                                   # checked even while the distance is bad
    assert "lockstep point does not depend on the host" in w.errors["load"] and "distance" in w.errors
    w.load.setText("idle")
    w.distance.setText("1..2")
    assert w.start_button.isEnabled() and w.distance.styleSheet() == "" and not w.problem.isVisible()
    w.rate.setText("fast")
    assert w.errors["rate"].startswith("--rate: 'fast'") and not w.start_button.isEnabled()
    w.rate.setText("tick,2ticks")
    w.dispatch.setText("isr,dma")
    assert "unknown value 'dma'" in w.errors["dispatch"]
    w.dispatch.setText("isr")
    # lockstep refuses load conditions: the load field says so, paced accepts them
    w.load.setText("idle,cpu")
    assert "lockstep point does not depend on the host" in w.errors["load"] and not w.start_button.isEnabled()
    assert "refuses load conditions" in w.load_note.text()
    w.paced.setChecked(True)
    assert "load" not in w.errors and w.start_button.isEnabled()
    assert "--paced" in w.arguments() and "--workers" not in w.arguments()
    w.lockstep.setChecked(True)
    w.load.setText("idle")
    w.use_cluster.setChecked(True)
    assert "cluster" in w.errors
    w.cluster.setText("tcp://127.0.0.1:8786")
    assert "cluster" not in w.errors
    w.mode.setCurrentText("normal")
    assert "add --paced" in w.errors["mode"] and not w.start_button.isEnabled()
    w.mode.setCurrentText("mixed")
    assert w.arguments()[-2:] == ["--cluster", "tcp://127.0.0.1:8786"]
    w.folder.setText("")
    assert "folder" in w.errors and not w.start_button.isEnabled()


def test_a_folder_holding_another_campaign_is_refused(make_sweep, tmp_path) -> None:
    from mmrig.sweep.campaign import Campaign, Plan

    folder = tmp_path / "other"
    Campaign.open(folder, Plan(distance=[3], count=5)).save()
    w = make_sweep(folder)
    tiny(w)
    assert "holds a campaign with other axes" in w.errors["folder"] and not w.start_button.isEnabled()
    assert w.resume_button.isEnabled()                     # ... which Resume continues
    assert w.table.rowCount() == 1 and w.table.item(0, 1).text() == "pending"


def test_menu_opens_the_sweep_window(make_win) -> None:
    win = make_win()
    win.menus.sweep_action.trigger()
    w = win.sweep_window
    assert w.isVisible() and w.folder.text().endswith("sweep")
    win.menus.sweep_action.trigger()
    assert win.sweep_window is w
    w.close()


def rows(w) -> dict[str, list[str]]:
    return {w.table.item(r, 0).text(): [w.table.item(r, c).text() for c in range(w.table.columnCount())]
            for r in range(w.table.rowCount())}


def test_a_tiny_lockstep_sweep_runs_from_the_panel(make_sweep, qtbot, tmp_path) -> None:
    # in a folder whose parent is not there yet, as the window's default (the app's data folder/campaigns/sweep)
    # is on first use: the window makes it, mmrig sweep makes only the last component
    camp = tmp_path / "campaigns" / "camp"
    w = make_sweep(camp)
    tiny(w)
    assert w.start()
    assert w.running and not w.start_button.isEnabled() and w.stop_button.isEnabled()
    assert not w.distance.isEnabled()
    qtbot.waitUntil(lambda: not w.running, timeout=180_000)
    assert w.exit_code == 0, "\n".join(w.log_lines)
    got = rows(w)
    assert set(got) == {"d1-rtick-isr-idle", "d2-rtick-isr-idle"}
    for r in got.values():
        assert r[1] == "done" and r[2] == "20" and r[3].endswith("%") and r[5] == "valid", r
        assert sum(int(x) for x in r[4].split(" / ")) == 20
    assert w.status.text().startswith("complete: 2/2 points done"), w.status.text()
    assert any(line.startswith("[2/2]") for line in w.log_lines)
    assert w.has_figure() and not w.figure.pixmap().isNull()
    assert w.report_button.isEnabled() and w.folder_button.isEnabled() and not w.resume_button.isEnabled()
    opened = []
    w.open_url = opened.append
    w.open_report()
    w.open_folder()
    assert opened == [camp / "figures" / "on_time.svg", camp]
    # what it looks like
    SHOTS.mkdir(parents=True, exist_ok=True)
    qtbot.wait(200)
    img = w.grab().toImage()
    assert img.save(str(SHOTS / "sweep.png"))


@pytest.mark.long    # a sweep from the panel stopped and resumed, two clusters: 14-15 s
def test_stop_keeps_the_points_and_resume_completes(make_sweep, qtbot, tmp_path) -> None:
    folder = tmp_path / "stopped"
    w = make_sweep(folder)
    tiny(w, count=20, distance="1..6")
    w.workers.setValue(1)
    assert w.start()

    def one_done() -> bool:
        return w.doc is not None and any(e.get("state") == "done" for e in w.doc["points"].values())
    qtbot.waitUntil(one_done, timeout=180_000)
    w.stop()
    qtbot.waitUntil(lambda: not w.running, timeout=60_000)
    doc = json.loads((folder / "campaign.json").read_text())
    done = [n for n, e in doc["points"].items() if e["state"] == "done"]
    if len(done) == 6:
        pytest.skip("the campaign ended before Stop reached it")
    assert w.exit_code == 130 and doc["status"] == "interrupted", "\n".join(w.log_lines)
    assert "interrupted" in w.status.text() and w.resume_button.isEnabled()
    assert w.resume()
    qtbot.waitUntil(lambda: not w.running, timeout=180_000)
    assert w.exit_code == 0, "\n".join(w.log_lines)
    doc = json.loads((folder / "campaign.json").read_text())
    assert doc["status"] == "complete" and all(e["state"] == "done" for e in doc["points"].values())
    assert any(f"{len(done)} of 6 points already complete" in line for line in w.log_lines)
    assert all(r[1] == "done" for r in rows(w).values())


def test_closing_the_main_window_stops_a_running_campaign(make_win, qtbot, tmp_path) -> None:
    win = make_win()
    folder = tmp_path / "closed"
    w = win.open_sweep(folder)
    tiny(w, count=20, distance="1..8")
    w.workers.setValue(1)
    assert w.start()
    qtbot.waitUntil(lambda: (folder / "campaign.json").is_file(), timeout=60_000)
    win.close()
    assert w.proc is None and w.exit_code == 130, "\n".join(w.log_lines)
    assert json.loads((folder / "campaign.json").read_text())["status"] == "interrupted"


def test_stop_right_after_start_waits_for_the_campaign_then_interrupts_it(make_sweep, qtbot, tmp_path) -> None:
    folder = tmp_path / "early"
    w = make_sweep(folder)
    tiny(w, count=20, distance="1..8")
    w.workers.setValue(1)
    assert w.start()
    w.stop()                                  # the command is still starting: SIGTERM goes once the campaign runs
    qtbot.waitUntil(lambda: not w.running, timeout=60_000)
    assert w.exit_code == 130, "\n".join(w.log_lines)
    doc = json.loads((folder / "campaign.json").read_text())
    assert doc["status"] == "interrupted" and w.resume_button.isEnabled()


def test_the_table_follows_the_points_record_ahead_of_the_snapshot(make_sweep, tmp_path) -> None:
    """campaign.json's points are a snapshot refreshed every few seconds; points.jsonl has each point's change at
    once: the window shows a point done as soon as its line is there, and an ended sweep's exit 4 (the cluster
    lost) in words."""
    folder = tmp_path / "camp"
    folder.mkdir()
    (folder / "campaign.json").write_text(json.dumps({"format": "mmrig-campaign", "version": 2, "points": {
        "d1-rtick-isr-idle": {"values": {"distance": 1}, "state": "pending", "runs": 0}}}))
    done = {"name": "d1-rtick-isr-idle", "distance": 1, "state": "done", "runs": 1, "valid": True, "events": 20,
            "on_time_share": 1.0, "ok": 20, "late": 0, "early": 0, "missed": 0, "lost": 0}
    (folder / "points.jsonl").write_text(json.dumps(done) + "\n")
    w = make_sweep(folder)
    w.refresh()
    r = rows(w)["d1-rtick-isr-idle"]
    assert r[1] == "done" and r[2] == "20" and r[5] == "valid", r
    from PySide6.QtCore import QProcess

    w._finished(4, QProcess.ExitStatus.NormalExit)
    assert "exit 4 (the Dask cluster was lost" in w.status.text(), w.status.text()
