"""The PySide6 app against the real virtual bench: sliders into the run's config, start / stop, live data
through the feed, export, open / compare, error messages, settings; screenshots under Xvfb.
Paced bench runs may come back invalid only for bench lag (a shared machine); the data is checked anyway."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "build" / "screenshots"


pytestmark = pytest.mark.usefixtures("bench")     # most of these run on the virtual bench


def lag_only(win) -> None:
    """A run is valid, or invalid only because the paced bench lagged (shared machine)."""
    sc = win.result.sidecar
    assert sc["valid"] or [r["code"] for r in sc["invalid_reasons"]] == ["bench_lag"], sc["invalid_reason"]
    assert {p.title for p in win.problems} <= {"Bench fell behind"}, win.problems


def run_to_end(qtbot, win, timeout_ms: int = 60000, timecodes: list | None = None) -> list:
    """Starts a run from the window and waits for its end: the feed's batches, and into `timecodes` the timecodes
    the view was shown on the way (the display is cleared when the run ends)."""
    from PySide6.QtCore import Qt

    batches: list = []
    qtbot.mouseClick(win.start_button, Qt.MouseButton.LeftButton)
    assert win.running and win.feed is not None
    win.feed.batch.connect(batches.append)
    if timecodes is not None:
        win.feed.timecode.connect(timecodes.append)
    qtbot.waitUntil(lambda: not win.running, timeout=timeout_ms)
    return batches


def test_core_never_imports_qt() -> None:
    import subprocess
    code = ("import sys, mmrig.cli, mmsched.run.runner, mmsched.link.session, mmsched.verdict.stats, mmsched.verdict.export, mmrig.demo, "
            "mmrig.child; "
            "print([m for m in sys.modules if m.startswith(('PySide6', 'pyqtgraph'))])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_sliders_reach_the_run_config(make_win, qtbot) -> None:
    from PySide6.QtCore import Qt

    win = make_win()
    win.run_settings.distance.setFocus()
    for _ in range(3):
        qtbot.keyClick(win.run_settings.distance, Qt.Key.Key_Right)          # 2 -> 5 ticks
    win.run_settings.set_rate_ms(150)
    qtbot.keyClick(win.run_settings.random_ids, Qt.Key.Key_Space)
    assert not win.run_settings.accuracy.isEnabled()                          # accuracy: normal mode only
    cfg = win.config()
    assert (cfg.mode, cfg.distance, cfg.rate_ms, cfg.random_ids) == ("mixed", 5, 150.0, True)
    qtbot.mouseClick(win.run_settings.mode_buttons["normal"], Qt.MouseButton.LeftButton)
    assert win.run_settings.accuracy.isEnabled()
    win.run_settings.accuracy.setValue(80)
    win.run_settings.length_unit.setCurrentText("seconds")
    win.run_settings.length.setValue(7)
    cfg = win.config()
    assert (cfg.mode, cfg.accuracy, cfg.count, cfg.duration_s) == ("normal", 80, None, 7.0)
    assert "5 ticks" in win.run_settings.distance_label.text() and "150 ms" in win.run_settings.rate_label.text()


@pytest.mark.paced
def test_mixed_run_live_and_export(make_win, qtbot, tmp_path) -> None:
    win = make_win()
    win.run_settings.distance.setValue(3)
    win.run_settings.length.setValue(20)
    timecodes: list = []
    batches = run_to_end(qtbot, win, timecodes=timecodes)
    lag_only(win)
    # live: the feed delivered snapshots while the run went on, the timecode and the LEDs moved
    live = [r for b in batches for r in b]
    ok_events = {e.event for e in win.result.events if e.outcome == "ok"}
    # the bench loses no frame (a lost one was the CRC race of mmproto, fixed): every event on time
    assert len(ok_events) == 20, [(e.outcome, e.reason) for e in win.result.events]
    assert {r.event for r in live if r.outcome == "ok"} == ok_events
    assert timecodes and max(timecodes) >= 20
    assert win.live.timecode.value is None          # the run over, its last timecode is not the nodes' now
    assert sum(win.live.leds.counts) == len(ok_events)
    assert win.model.rowCount() == 20
    assert win.live.stats.summary["outcomes"]["ok"] == len(ok_events)
    # export: the CSV is the core's, with the slider's distance in the data; into a folder that is there (a write
    # makes no folder on the way: the dialog's problem box says so, naming it)
    with pytest.raises(FileNotFoundError, match="no such folder: .*export"):
        win.export_to(tmp_path / "export" / "mixed")
    assert not (tmp_path / "export").exists()
    (tmp_path / "export").mkdir()
    csv_path, json_path = win.export_to(tmp_path / "export" / "mixed")
    df = pd.read_csv(csv_path)
    assert len(df) == 20 and df["event"].tolist() == list(range(20))
    ok = df[df["outcome"] == "ok"]
    assert set(ok["event"]) == ok_events
    assert ((ok["latency_us"] >= 0) & (ok["latency_us"] < 10)).all()
    assert (df["scheduled_tc"] - df["created_tc"] == 3).all()
    import json
    side = json.loads(json_path.read_text())
    assert side["config"]["distance"] == 3 and side["summary"]["outcomes"]["ok"] == len(ok_events)
    # health: both nodes said HELLO, bytes flowed
    h = win.connection.last_health["nodes"]
    assert h["profiler"]["hello"]["node_kind"] == 1 and h["executor"]["hello"]["node_kind"] == 2
    assert h["profiler"]["bytes_in"] > 0


@pytest.mark.paced
def test_stop_ends_a_run_early(make_win, qtbot) -> None:
    from PySide6.QtCore import Qt

    win = make_win()
    win.run_settings.length.setValue(500)
    qtbot.mouseClick(win.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: win.model.rowCount() >= 5 or not win.running, timeout=30000)
    assert win.running, (win.problems, win.log_view.toPlainText())
    win.activateWindow()
    qtbot.waitUntil(win.isActiveWindow, timeout=30000)
    qtbot.keyClick(win, Qt.Key.Key_Escape)                     # the Stop shortcut
    qtbot.waitUntil(lambda: not win.running, timeout=30000)
    ev = win.result.events
    assert 5 <= len(ev) < 100 and all(e.terminal for e in ev)
    assert win.result.sidecar["counters"]["scheduler"]["stopped_early"] == 1
    assert win.start_button.isEnabled() and not win.stop_button.isEnabled()


@pytest.mark.paced
def test_bench_killed_mid_run_is_a_clear_message(make_win, qtbot) -> None:
    win = make_win()
    win.run_settings.length.setValue(300)
    win.start_run()
    qtbot.waitUntil(lambda: win.model.rowCount() >= 3, timeout=30000)
    os.killpg(win.worker.identity["bench_pid"], signal.SIGKILL)
    qtbot.waitUntil(lambda: not win.running, timeout=30000)
    assert [p.title for p in win.problems] == ["Connection lost"], win.problems
    assert "Traceback" not in win.log_view.toPlainText()
    assert win.live.banner.isVisible()
    o = win.result.summary["outcomes"]
    assert o["lost"] >= 1 and sum(o.values()) == len(win.result.events)


def test_missing_port_and_version_mismatch_messages(make_win, qtbot) -> None:
    from mmsched.model.reason import Reason
    from mmrig.gui.worker import explain

    win = make_win()
    win.connection.conn_serial.setChecked(True)
    win.connection.profiler_port.setEditText("/dev/mmrig-no-such-port")
    win.connection.executor_port.setEditText("/dev/mmrig-no-such-port-2")
    win.start_run()
    qtbot.waitUntil(lambda: not win.running, timeout=60000)
    assert [p.title for p in win.problems] == ["Serial port error"]
    assert "mmrig-no-such-port" in win.problems[0].text
    win.connection.executor_port.setEditText("")
    win.start_run()                                             # mixed needs both ports: said, not run
    assert win.problems[-1].title == "Invalid settings" and not win.running
    assert explain(Reason("protocol_version", "session: profiler: speaks protocol version 9, we speak 1")).title \
        == "Version mismatch"


def test_settings_survive_a_restart(make_win, tmp_path) -> None:
    ini = tmp_path / "keep.ini"
    win = make_win(ini)
    win.run_settings.set_mode("normal")
    win.run_settings.distance.setValue(7)
    win.run_settings.accuracy.setValue(55)
    win.run_settings.random_ids.setChecked(True)
    win.set_axis_mode("log")                                      # View > Latency axis > Log
    win.run_settings.fire_in_gui.setChecked(True)
    win.close()
    again = make_win(ini)
    cfg = again.config()
    assert (cfg.mode, cfg.distance, cfg.accuracy, cfg.random_ids) == ("normal", 7, 55, True)
    assert again.run_settings.fire_in_gui.isChecked() and cfg.firing_process == "gui"
    assert again.live.plots.log_y


@pytest.mark.paced
def test_a_run_with_the_papers_8051_profiler_from_the_window(make_win, qtbot, tmp_path) -> None:
    """The bench's profiler chosen in the window; the run's sidecar says the 8051 ran, its LEDs light
    from its RESULTs, and its latencies are the polled input's (tens of us), not the AVR's 1.375 us."""
    from mmhil.bench import HAS_8051

    if not HAS_8051:
        pytest.skip("ucsim's 8051 core is not built here (tools/ucsim.sh)")
    ini = tmp_path / "kind.ini"
    win = make_win(ini)
    assert win.connection.profiler_kind.isEnabled()
    win.connection.profiler_kind.setCurrentIndex(win.connection.profiler_kind.findData("8051"))
    win.run_settings.length.setValue(12)
    run_to_end(qtbot, win)
    lag_only(win)
    SHOTS.mkdir(parents=True, exist_ok=True)
    qtbot.wait(300)
    assert win.grab().save(str(SHOTS / "gui_8051.png"))           # looked at: the 8051's latencies, its LEDs
    assert win.result.sidecar["target"]["profiler_kind"] == "8051"
    assert win.result.sidecar["nodes"]["profiler"]["cpu_hz"] == 11_059_200
    ok = [e for e in win.result.events if e.outcome == "ok"]
    assert len(ok) == 12 and sum(win.live.leds.counts) == 12
    lat = sorted(e.latency_us for e in ok)
    assert lat[len(lat) // 2] > 5.0                              # the poll's delay (median ~30 us), not 1.375 us
    win.close()
    assert make_win(ini).connection.profiler_kind.currentData() == "8051"


def test_serial_ports_listen_first_unless_told_the_board_does_not_reset(make_win, tmp_path) -> None:
    """An Arduino's port resets the board when opened; the boards' endpoint listens for its boot HELLO.
    The box says so, is for serial ports only, and is kept."""
    ini = tmp_path / "reset.ini"
    win = make_win(ini)
    assert not win.connection.reset_on_open.isEnabled()                    # the bench: nothing to say
    win.connection.conn_serial.setChecked(True)
    win.run_settings.set_mode("normal")
    win.connection.profiler_port.setEditText("/dev/ttyACM0")
    assert win.connection.reset_on_open.isEnabled() and win.endpoint().reset_on_open is True
    win.connection.reset_on_open.setChecked(False)
    assert win.endpoint().reset_on_open is False
    SHOTS.mkdir(parents=True, exist_ok=True)
    assert win.grab().save(str(SHOTS / "gui_serial_ports.png"))   # looked at: the box under the ports
    win.close()
    assert make_win(ini).connection.reset_on_open.isChecked() is False


def test_the_benchs_usb_line_is_chosen_in_the_connection_panel_and_kept(make_win, tmp_path) -> None:
    """The bench's line model (docs/usb-serial.md): a box on the bench's row, not on the boards' (they have the
    adapter they have); the run's endpoint gets it, and it is kept between starts."""
    from mmhil.linemodel import LineModel

    ini = tmp_path / "line.ini"
    win = make_win(ini)
    box = win.connection.line_model
    assert box.isEnabled() and box.currentData() == "ideal"
    assert [box.itemData(i) for i in range(box.count())] == ["ideal", "ftdi:latency=16", "ftdi:latency=1", "cdc-16u2"]
    box.setCurrentIndex(box.findData("ftdi:latency=16"))
    assert win.endpoint().line_model == LineModel("ftdi", 16)
    win.connection.conn_serial.setChecked(True)
    assert not box.isVisible() and not box.isEnabled()
    win.connection.conn_bench.setChecked(True)
    win.close()
    assert make_win(ini).connection.line_model.currentData() == "ftdi:latency=16"


def test_load_combo_conditions_settings_and_missing_stress_ng(make_win, tmp_path, monkeypatch) -> None:
    from PySide6.QtCore import QSettings

    from mmsched.model import load as L

    ini = tmp_path / "load.ini"
    win = make_win(ini)
    assert [win.run_settings.load.itemText(i) for i in range(win.run_settings.load.count())] == list(L.CONDITIONS)
    win.run_settings.load.setCurrentText("disk")
    assert win.config().load == "disk" and "armed" in win.run_settings.load_indicator.text()
    win.close()
    assert make_win(ini).run_settings.load.currentText() == "disk"                # kept as the condition's name
    old = tmp_path / "old.ini"                                       # the checkbox's setting: true / false
    QSettings(str(old), QSettings.Format.IniFormat).setValue("load", True)
    assert make_win(old).run_settings.load.currentText() == "heavy"               # what the checkbox ran
    # no stress-ng: every condition but idle is a disabled entry that says why; a saved one falls back to idle
    monkeypatch.setenv("PATH", "/nonexistent")
    w = make_win(ini)
    model = w.run_settings.load.model()
    assert model.item(0).isEnabled() and w.run_settings.load.currentText() == "idle"
    for i in range(1, len(L.CONDITIONS)):
        assert not model.item(i).isEnabled() and "stress-ng is not installed" in model.item(i).toolTip()


def test_open_and_compare_runs(make_win, tmp_path, synthetic_run) -> None:
    a = synthetic_run(tmp_path, [1.0, 2.0, 3.0, 4.0], "a")
    b = synthetic_run(tmp_path, [1500.0, 20.0, 30.0], "b")
    win = make_win()
    assert win.open_run(a)
    assert win.model.rowCount() == 4 and win.live.stats.labels["max_us"].text() == "4.000 us"
    assert not win.open_run(tmp_path / "nothing.csv") and win.problems[-1].title == "Cannot open run"
    cmp = win.compare(a, b)
    assert [p.summary["n"] for p in cmp.panels] == [4, 3]
    assert cmp.panels[1].summary["outcomes"]["late"] == 1
    assert len(cmp.plots.cdf_curves) == 2
    # their CDF per load condition: these runs' sidecars have no load, so one idle line, pooled
    assert list(cmp.load_cdf.lines) == ["idle"] and len(cmp.load_cdf.labels) == 2
    assert sorted(lb.toPlainText() for lb in cmp.load_cdf.labels) == ["max 1500 us", "min 1 us"]


def test_compare_shows_a_cdf_per_load_condition(make_win, tmp_path, synthetic_run) -> None:
    import json

    a = synthetic_run(tmp_path, [40.0, 55.0, 60.0, 80.0], "idle-run")
    b = synthetic_run(tmp_path, [90.0, 200.0, 350.0], "cpu-run")
    js = b.with_suffix(".json")
    meta = json.loads(js.read_text())
    meta["config"]["load"] = "cpu"
    js.write_text(json.dumps(meta))
    cmp = make_win().compare(a, b)
    assert list(cmp.load_cdf.lines) == ["idle", "cpu"]
    assert {lb.toPlainText() for lb in cmp.load_cdf.labels} == {"min 40 us", "max 80 us", "min 90 us", "max 350 us"}


def test_compare_of_campaign_points_shows_the_campaign_on_time_figure(make_win, tmp_path, synthetic_run) -> None:
    import json
    import shutil

    folder = tmp_path / "camp"
    (folder / "points").mkdir(parents=True)
    points = {}
    for d, share, valid in ((1, 0.655, True), (2, 1.0, True), (3, 1.0, False), (4, 1.0, True)):
        name = f"d{d}-r50ms-isr-idle"
        csv = synthetic_run(tmp_path, [1.375] * 4, name)
        for suffix in (".csv", ".json"):
            shutil.move(csv.with_suffix(suffix), folder / "points" / f"{name}{suffix}")
        points[name] = {"values": {"distance": d, "rate": "50ms", "baud": None, "dispatch": "isr", "load": "idle"},
                        "state": "done", "valid": valid, "baud": 9600, "summary": {"on_time_share": share}}
    (folder / "campaign.json").write_text(json.dumps({"format": "mmrig-campaign", "name": "camp", "points": points,
                                                      "axes": {"rate": ["50ms"]}, "options": {"count": 4}}))
    cmp = make_win().compare(folder / "points/d1-r50ms-isr-idle.csv", folder / "points/d2-r50ms-isr-idle.csv")
    assert len(cmp.on_time) == 1
    plot = cmp.on_time[0]
    # d3 is invalid: not safe from 2; safe from 4, the largest
    assert plot.safe == {"50ms, 9600 Bd, isr": 4} and sorted(plot.ringed) == ["d1-r50ms-isr-idle", "d2-r50ms-isr-idle"]
    # runs that are no campaign's points: no such panel
    a = synthetic_run(tmp_path, [1.0, 2.0], "lone")
    assert make_win().compare(a, a).on_time == []


def test_model_takes_thousands_of_rows_in_chunks(qapp) -> None:
    from mmrig.gui.model import CHUNK, EventModel
    from mmrig.gui.rows import Row

    m = EventModel()
    inserts: list[tuple[int, int]] = []
    m.rowsInserted.connect(lambda _p, first, last: inserts.append((first, last)))
    rows = [Row(i, i % 8, i + 2, i, None, None, None, None, None, None, None) for i in range(5000)]
    m.apply(rows[1:])                       # event 0 not there yet: nothing may be inserted
    assert m.rowCount() == 0
    m.apply(rows[:1])
    assert m.rowCount() == 5000 and len(inserts) == -(-5000 // CHUNK)
    m.apply([rows[42]._replace(outcome="ok", latency_us=1.5)])
    assert m.data(m.index(42, 6)) == "1.500" and m.data(m.index(42, 7)) == "ok"


def test_model_keeps_the_newest_rows_and_every_events_arrays(qapp, monkeypatch) -> None:
    """A run of hours: the table keeps the newest ROWS_KEPT rows (the oldest leave its top a chunk at a time), the
    plots' arrays every event; a late change to an event that left the table (the run's end judging it) reaches
    the arrays."""
    import mmrig.gui.model as model
    from mmrig.gui.rows import Row

    monkeypatch.setattr(model, "ROWS_KEPT", 1000)
    m = model.EventModel()
    removed: list[tuple[int, int]] = []
    m.rowsRemoved.connect(lambda _p, first, last: removed.append((first, last)))
    rows = [Row(i, i % 8, i + 2, i, None, None, None, None, 10.0 + i % 7, "ok", None) for i in range(3000)]
    for k in range(0, 3000, 100):
        m.apply(rows[k:k + 100])
    assert m.count == 3000 and 1000 <= m.rowCount() < 1000 + model.CHUNK and removed and removed[0][0] == 0
    assert m.rows[0].event == m.first and m.data(m.index(m.rowCount() - 1, 0)) == "2999"
    lat, code = m.arrays()
    assert len(lat) == 3000 and lat[5] == 15.0 and (code == model.OUTCOME_CODE["ok"]).all()
    m.apply([rows[5]._replace(outcome="lost", latency_us=None)])          # left the table: its arrays only
    assert np.isnan(m.arrays()[0][5]) and m.arrays()[1][5] == model.OUTCOME_CODE["lost"] and m.count == 3000
    m.set_rows(rows)
    assert (m.first, m.rowCount(), m.count, m.data(m.index(0, 0))) == (2000, 1000, 3000, "2000")


def test_an_events_led_lights_once_and_the_feed_remembers_only_the_recent_ones(qapp) -> None:
    """A run's own process sends each row again at its end (its final rows): no LED lights twice, and what the
    feed keeps to know that stays bounded over a run of hours."""
    from mmrig.gui.feed import LIT_KEPT, EventFeed
    from mmrig.gui.rows import Row

    feed = EventFeed()
    lit: list[int] = []
    feed.fired.connect(lit.append)
    rows = [Row(i, i % 8, i + 2, i, None, i + 1, i + 2, i + 2, 10.0, "ok", None) for i in range(5 * LIT_KEPT)]
    for k in range(0, len(rows), 500):
        feed.deliver(rows[k:k + 500])
    feed.deliver(rows)                                   # the final rows
    assert len(lit) == len(rows) and len(feed._lit) <= 2 * LIT_KEPT


def test_a_finished_run_of_hours_is_summarised_over_every_event_not_the_tables_rows(make_win, monkeypatch) -> None:
    import mmrig.gui.model as model
    from mmrig.gui.rows import Row

    monkeypatch.setattr(model, "ROWS_KEPT", 1000)
    win = make_win()
    win.model.apply([Row(i, i % 8, i + 2, i, 36000 + i / 1000, None, None, None, 10.0 + i % 7, "ok", None)
                     for i in range(3000)])                      # (ten hours in: sent 36000.000 s and on)
    win.live.redraw(force=True)
    assert win.model.rowCount() < 3000 and win.live.stats.summary["n"] == 3000
    assert win.live.stats.summary["max_us"] == 16.0
    shown = win.live.table.fontMetrics().horizontalAdvance("36002.999")
    assert win.live.table.columnWidth(3) > shown          # the newest row's moment shows whole, not "3600..."


def test_plots_frame_identical_latencies_after_a_wide_run(qtbot) -> None:
    # pyqtgraph keeps the previous span for zero-spread data: 1.375 us values after a run up to 3.3 ms
    # were drawn as a flat line at the middle of +-1600 us
    import numpy as np
    from mmrig.gui.widgets.plots import Plots

    plots = Plots()
    qtbot.addWidget(plots)
    plots.resize(600, 400)
    plots.setVisible(True)                    # (Plots.show draws series)
    x = np.arange(15.0)
    plots.show_arrays([(x, np.r_[np.full(14, 500.0), 3345.0])])
    qtbot.wait(50)
    plots.set_series(1)                       # what a new run does
    plots.show_arrays([(x, np.full(15, 1.375))])
    qtbot.wait(50)
    lo, hi = plots.time_plot.getViewBox().viewRange()[1]
    assert lo < 1.375 < hi and hi - lo < 5, (lo, hi)
    clo, chi = plots.cdf_plot.getViewBox().viewRange()[0]
    assert clo < 1.375 < chi and chi - clo < 5, (clo, chi)
    plots.show_arrays([(x, np.linspace(1.0, 40.0, 15))])   # spread again: auto-range is back
    qtbot.wait(50)
    lo, hi = plots.time_plot.getViewBox().viewRange()[1]
    assert lo <= 1.0 and hi >= 40.0 and hi - lo < 100, (lo, hi)


@pytest.mark.paced
def test_heavy_load_switch_runs_stress_ng_and_shows_it(make_win, qtbot) -> None:
    # the paper's section 7.5 from the GUI: the switch arms the load, the indicator says it is on while the
    # run goes, the core starts and stops stress-ng, and the data says so
    from PySide6.QtCore import Qt

    win = make_win()
    win.run_settings.set_mode("mixed")
    win.run_settings.length.setValue(12)
    assert win.run_settings.load.currentText() == "idle" and "no load" in win.run_settings.load_indicator.text()
    win.run_settings.load.setCurrentText("cpu")
    assert "armed" in win.run_settings.load_indicator.text()
    before = set(running_stress())                       # other users' stress-ng (a shared machine) stay out
    seen: dict[int, tuple[str, int]] = {}
    qtbot.mouseClick(win.start_button, Qt.MouseButton.LeftButton)
    assert win.running and "HEAVY LOAD ON" in win.run_settings.load_indicator.text()

    def ended() -> bool:
        seen.update({pid: v for pid, v in running_stress().items() if pid not in before})
        return not win.running
    qtbot.waitUntil(ended, timeout=60000)
    lag_only(win)
    load = win.result.sidecar["load"]
    assert win.result.sidecar["config"]["load"] == "cpu" and load["condition"] == "cpu"
    assert load["command"][:3] == ["stress-ng", "--cpu", str(os.cpu_count() or 2)]
    assert "armed" in win.run_settings.load_indicator.text()
    # every event on time, or (a host busier still: fresh-check beside a CPU hog and the load itself) not
    # measurable for a reason the run names: never a miss blamed on the executor
    assert len(win.result.events) == 12
    assert all(e.outcome == "ok" for e in win.result.events if e.measurable), \
        [(e.event, e.outcome, e.reason, e.stall_us) for e in win.result.events]
    # the run's stress-ng: the new one with the command its sidecar records, leader of a session of its own
    ours = {pid for pid, (cmd, session) in seen.items() if cmd == " ".join(load["command"]) and session == pid}
    assert ours, seen
    left = {pid: cmd for pid, (cmd, session) in running_stress().items() if session in ours}
    assert left == {}                                     # stopped, workers too


def running_stress() -> dict[int, tuple[str, int]]:
    """Live stress-ng processes, pid -> (command line, session id), read from /proc (a minimal Debian has no
    procps, so no pgrep). stress-ng renames its workers "stress-ng-cpu" and so on; they keep its session."""
    found = {}
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            stat = (proc / "stat").read_text()
        except OSError:          # the process ended while we looked
            continue
        first = argv[0].decode(errors="replace").split(" ")[0] if argv else ""
        fields = stat.rsplit(")", 1)[1].split()
        if first and Path(first).name.startswith("stress-ng") and fields[0] != "Z":
            found[int(proc.name)] = (" ".join(a.decode(errors="replace") for a in argv if a), int(fields[3]))
    return found


# ---- where a run goes: a process of its own, or the GUI's on purpose --------------------------------------------
def test_rows_from_the_run_process_are_the_views_rows() -> None:
    import pickle

    from mmrig.child import Row as ChildRow
    from mmsched.model.event import Event
    from mmrig.gui.rows import Row

    assert Row is ChildRow                                   # one definition, Qt-free, both sides use
    ev = Event(3, 4, 5, "normal", 2, 102, 100, 0.25, sent_s=1.5, result_tc=102, latency_us=612.5)
    ev.finish("ok", None)
    row = Row.of(ev)
    assert (row.event, row.event_id, row.latency_us, row.outcome, row.measurable) == (3, 5, 612.5, "ok", True)
    assert pickle.loads(pickle.dumps(row)) == row             # as the run process sends it


@pytest.mark.paced
def test_normal_run_in_a_process_of_its_own(make_win, qtbot, tmp_path) -> None:
    import json

    from PySide6.QtCore import Qt

    win = make_win()
    win.run_settings.set_mode("normal")
    win.run_settings.length.setValue(15)
    win.run_settings.accuracy.setValue(100)
    assert win.run_settings.fire_in_gui.isEnabled() and not win.run_settings.fire_in_gui.isChecked()     # the default: its own process
    assert win.config().firing_process == "own"
    assert win.run_settings.discipline.isEnabled() and not win.config().discipline          # the paper's naive PC by default
    win.run_settings.discipline.setChecked(True)
    batches: list = []
    timecodes: list = []
    qtbot.mouseClick(win.start_button, Qt.MouseButton.LeftButton)
    worker = win.worker
    assert worker is not None and worker.runner is None and worker.child is not None
    win.feed.batch.connect(batches.append)
    win.feed.timecode.connect(timecodes.append)
    assert not win.run_settings.fire_in_gui.isEnabled()                                      # fixed while it runs
    qtbot.waitUntil(lambda: worker.child.pid is not None, timeout=30000)
    assert worker.child.pid != os.getpid()
    qtbot.waitUntil(lambda: not win.running, timeout=60000)
    lag_only(win)
    assert worker.child.started["qt"] == [] and worker.child.process.exitcode == 0   # no Qt there, ended well
    # the result came back: the core's events, the table full, live rows and timecodes on the way
    res = win.result
    assert res is not None and len(res.events) == 15
    assert win.model.rowCount() == 15
    measured = {e.event for e in res.events if e.outcome in ("ok", "late")}
    # every FIRE stamped (a disciplined FIRE may land before its tick on a noisy host: early, still stamped)
    assert sum(e.latency_us is not None for e in res.events) >= 14, [(e.outcome, e.reason) for e in res.events]
    assert {r.event for b in batches for r in b} == set(range(15))
    assert {r.event for b in batches for r in b if r.outcome in ("ok", "late")} == measured
    stamped = sum(e.latency_us is not None for e in res.events)
    assert timecodes and win.live.timecode.value is None and sum(win.live.leds.counts) == stamped
    assert win.connection.last_health["nodes"]["profiler"]["bytes_in"] > 0
    assert win.live.stats.summary["n"] == res.summary["n"]
    # the files the run's process wrote, with where it ran in the config
    assert res.csv_path.exists() and res.json_path.exists()
    df = pd.read_csv(res.csv_path)
    assert len(df) == 15 and set(df.loc[df["outcome"].isin(["ok", "late"]), "event"]) == measured
    side = json.loads(res.json_path.read_text())
    assert side["config"]["firing_process"] == "own" and side["config"]["mode"] == "normal"
    assert side["config"]["accuracy"] == 100
    assert "in a process of its own" in win.log_view.toPlainText()
    # disciplined, and the run's latency budget shown beside the statistics (docs/normal-mode.md)
    assert side["config"]["discipline"] is True and side["budget"]["target"] == "disciplined"
    assert win.live.budget_label.isVisible() and "budget (disciplined target" in win.live.budget_label.text()
    assert "floor " in win.live.budget_label.text()


@pytest.mark.paced
def test_normal_run_fired_from_the_gui_process(make_win, qtbot) -> None:
    import json

    win = make_win()
    win.run_settings.set_mode("mixed")
    win.run_settings.fire_in_gui.setChecked(True)
    assert not win.run_settings.fire_in_gui.isEnabled() and win.config().firing_process == "own"   # normal mode's option
    win.run_settings.set_mode("normal")
    win.run_settings.length.setValue(10)
    assert win.config().firing_process == "gui"
    batches = run_to_end(qtbot, win)
    lag_only(win)
    res = win.result
    assert len(res.events) == 10 and win.model.rowCount() == 10 and batches
    side = json.loads(res.json_path.read_text())
    assert side["config"]["firing_process"] == "gui"
    assert "in the GUI process" in win.log_view.toPlainText()


@pytest.mark.paced
def test_run_process_killed_is_a_clear_message(make_win, qtbot) -> None:
    win = make_win()
    win.run_settings.length.setValue(300)
    win.start_run()
    worker = win.worker
    qtbot.waitUntil(lambda: win.model.rowCount() >= 3, timeout=30000)
    bench = worker.identity["bench_pid"]
    os.kill(worker.child.pid, signal.SIGKILL)
    qtbot.waitUntil(lambda: not win.running, timeout=30000)
    assert [p.title for p in win.problems] == ["Run process ended"], win.problems
    text = win.problems[0].text
    assert "SIGKILL" in text and "no files yet" in text and str(bench) in text, text
    assert "Traceback" not in win.log_view.toPlainText()
    assert win.live.banner.isVisible() and win.result is None
    assert win.model.rowCount() >= 3                        # what it reported stays in view
    assert win.start_button.isEnabled()
    qtbot.waitUntil(lambda: not alive(bench), timeout=30000)  # its bench did not outlive it


def alive(pid: int) -> bool:
    """A process that exists and is no zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
