"""The executor profile in the GUI: the Gantt chart of a trace, the profile window's tables from
a run's sidecar (one or several runs side by side), the executor-load and trace fields of the main window,
and a screenshot of the profile window with a realistic trace. No bench here: traces are made by hand (the
analysis test's pattern) or by `synthetic_trace`, a small simulation of the executor's tasks and interrupts
in the bench's trace format."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "build" / "screenshots"

# analysis/tests/test_exectrace.py's hand-made trace (16 MHz: 16 cycles a us), read from its file
TRACE = (ROOT / "analysis" / "tests" / "data" / "handmade.exectrace").read_text()
PERIOD = 20000      # the pattern's cycles (its E record is left out of the copies)


def repeated_trace(reps: int) -> str:
    """TRACE `reps` times end to end (each copy shifted by PERIOD cycles): a long trace of known figures."""
    head, body = [], []
    for line in TRACE.splitlines():
        w = line.split()
        if w[0] in ("B", "E"):
            continue                                  # one trace: no begin or end marks between the copies
        (head if w[0] in ("#", "T", "V") else body).append(w)
    out = [" ".join(w) for w in head]
    for k in range(reps):
        off = k * PERIOD
        for w in body:
            if k and w[0] == "S" and w[1] == "0":
                continue                              # the copy before ends in idle already
            out.append(" ".join([w[0], str(int(w[1]) + off), *w[2:]]))
    return "\n".join(out) + "\n"


# ---- a realistic trace: the executor's tasks and interrupts, simulated -----------------------------------------
TASKS = {"load_periodic": (0x0140, 6), "tc": (0x0100, 5), "serial": (0x0180, 4), "led": (0x01C0, 2),
         "load_cpu": (0x01E0, 1), "idle": (0x0200, 0)}
VECTORS = {11: "PCINT2", 17: "TIMER1_COMPA", 21: "TIMER0_COMPA", 25: "USART0_RX", 32: "TIMER3_COMPA"}


def synthetic_trace(ms: float = 300.0, *, periodic: tuple[int, int] | None = None, rx_per_s: float = 0.0,
                    cpu: bool = False, hz: int = 16_000_000, tick_us: float = 71_111.0) -> str:
    """A trace as the bench would write it for an executor at `hz`: the FreeRTOS tick (TIMER0_COMPA, 125 Hz,
    the LED task every 500 ms), a timecode edge every `tick_us` (PCINT2 wakes the timecode task, which
    drives the event strobe), and the executor load of exload.py: `periodic` (PERIOD_US, EXEC_US) released
    by TIMER3_COMPA, `rx_per_s` 7-byte frames (one USART0_RX per byte, the last wakes the serial task),
    `cpu` a task below all others that never blocks (the core never sleeps). Tasks are preempted by
    priority; an interrupt that wakes a higher task switches to it before returning."""
    us = hz // 1_000_000
    end = int(ms * 1000 * us)
    arrivals: list[tuple[int, int, int, int, tuple[str, int] | None]] = []   # (cycle, vector, plain, switching, release)
    for k, c in enumerate(range(0, end, 8000 * us)):
        arrivals.append((c + 37, 21, 150, 290, ("led", 900) if k % 25 == 24 else None))
    tc_edges = [int(round(i * tick_us * us)) + 11 * us for i in range(1, int(ms * 1000 / tick_us) + 1)]
    for c in tc_edges:
        if c < end:
            arrivals.append((c + 4, 11, 60, 156, ("tc", 1600)))
    if periodic:
        period, exec_ = periodic
        for c in range(5000 * us, end, period * us):
            arrivals.append((c, 32, 70, 190, ("load_periodic", exec_ * us)))
    if rx_per_s:
        gap = int(hz / rx_per_s)
        for c in range(3000 * us + 123, end, gap):
            for b in range(7):
                arrivals.append((c + b * 1042 * us, 25, 45, 170, ("serial", 700) if b == 6 else None))
    arrivals.sort()
    recs: list[tuple[int, str]] = []
    ready: dict[str, int] = {"idle": 1 << 62}
    if cpu:
        ready["load_cpu"] = 1 << 62
    cur, t, asleep, strobes = "idle", 0, False, 0

    def top() -> str:
        return max(ready, key=lambda n: TASKS[n][1])

    tails: dict[str, list[int]] = {}                  # a task switched away inside these interrupts

    def switch(at: int, name: str, tails_at: int | None = None) -> None:
        nonlocal cur, strobes
        cur = name
        recs.append((at, f"S {at} {TASKS[name][0]:04x}"))
        for k, v in enumerate(reversed(tails.pop(name, []))):     # it resumes in their tails: their RETIs
            c = (tails_at if tails_at is not None else at) + 20 * (k + 1)
            recs.append((c, f"R {c} {v}"))
        if name == "tc":                              # the timecode task drives the event's id and strobe
            eid = strobes % 8
            strobes += 1
            for bit in range(3):
                recs.append((at + 170, f"W {at + 170} event_id{bit} {(eid >> bit) & 1}"))
            recs.append((at + 180, f"W {at + 180} strobe 1"))
            recs.append((at + 290, f"W {at + 290} strobe 0"))

    switch(0, "idle")
    port = 0
    tc_set = set(c + 4 for c in tc_edges)
    for when, vec, plain, switching, release in arrivals:
        when = max(when, t)
        while t < when:                               # the tasks run until the interrupt
            h = top()
            if h != cur:
                switch(t, h)
            if cur == "idle":
                if not asleep and t + 40 < when:
                    recs.append((t + 40, f"Z {t + 40} 1"))
                    asleep = True
                t = when
                break
            run = min(ready[cur], when - t)
            t += run
            ready[cur] -= run
            if ready[cur] == 0:
                del ready[cur]
        if when in tc_set:                            # the timecode port changes 4 cycles before PCINT2
            new = (port + 1) & 0xFF
            for bit in range(8):
                if (new ^ port) >> bit & 1:
                    recs.append((when - 4, f"W {when - 4} timecode{bit} {(new >> bit) & 1}"))
            port = new
        if asleep:
            recs.append((when, f"Z {when} 0"))
            asleep = False
        recs.append((when, f"I {when} {vec}"))
        if release:
            name, work = release
            ready[name] = ready.get(name, 0) + work
        h = top()
        if TASKS[h][1] > TASKS[cur][1]:
            tails.setdefault(cur, []).append(vec)
            t = when + switching
            recs.append((t, f"R {t} -"))             # the RETI into the incoming task (FreeRTOS's port)
            switch(when + switching - 60, h, tails_at=t)
        else:
            t = when + plain
            recs.append((t, f"R {t} {vec}"))
    if asleep:
        recs.append((max(t, end), f"Z {max(t, end)} 0"))
    recs.sort(key=lambda r: r[0])
    head = ["# mmbench executor trace 1", f"# cpu_hz {hz}", "# node executor"]
    head += [f"T {a:04x} {'xIdleTaskTCBBuffer' if n == 'idle' else 'tcb_' + n}" for n, (a, _) in TASKS.items()]
    head += [f"V {v} {n}" for v, n in VECTORS.items()]
    return "\n".join(head + [r for _, r in recs]) + "\n"


# ---- fixtures ---------------------------------------------------------------------------------------------------
def write_trace(path: Path, text: str):
    from mmanalysis import exectrace as et

    path.write_text(text)
    return et.read(path)


def write_run(folder: Path, name: str, trace_text: str | None, load: str = "none", **extra) -> Path:
    """OUT.json as a traced run leaves it (the bench's contract): executor_profile is exactly
    exectrace.profile(trace) plus the files, named relative to the JSON's folder. No trace: no profile."""
    from mmanalysis import exectrace as et

    folder.mkdir(parents=True, exist_ok=True)
    sidecar = {"format": "mmrig-run", "format_version": 1, "name": name, "valid": True,
               "config": {"mode": "mixed", "dispatch": "isr", "executor_load_text": load,
                          "trace": trace_text is not None}}
    if trace_text is not None:
        tr = write_trace(folder / f"{name}.exectrace", trace_text)
        prof = et.profile(tr)
        prof["files"] = {"exectrace": f"{name}.exectrace", "perfetto": f"{name}.perfetto-trace", "vcd": f"{name}.vcd"}
        sidecar["executor_profile"] = prof
    sidecar.update(extra)
    p = folder / f"{name}.json"
    p.write_text(json.dumps(sidecar))
    return p


# ---- the Gantt chart ----------------------------------------------------------------------------------------------
def test_gantt_rows_and_bars_of_the_hand_made_trace(qtbot, tmp_path) -> None:
    from PySide6.QtCore import QPoint, QPointF

    from mmrig.gui.gantt import GanttWidget

    tr = write_trace(tmp_path / "run.exectrace", TRACE)
    g = GanttWidget()
    qtbot.addWidget(g)
    g.resize(900, 360)
    g.show()
    data = g.set_trace(tr)
    # the wires on top, interrupts by vector, then tasks, idle last (its sleep shaded in the same row)
    assert g.row_names() == ["tick / event", "isr PCINT2", "isr TIMER0_COMPA", "task tc", "task idle"]
    ms = 1000 / 16_000_000
    # an interrupt's bars are when its handler ran: to the switch, then its tail when idle comes back
    assert g.bars("isr PCINT2") == [pytest.approx((1604 * ms, 1700 * ms)), pytest.approx((3360 * ms, 3380 * ms)),
                                   pytest.approx((10000 * ms, 10050 * ms)), pytest.approx((17604 * ms, 17700 * ms)),
                                   pytest.approx((19360 * ms, 19380 * ms))]
    # tc ran from the switch to it (its context's restore included) to the switch away
    assert g.bars("task tc") == [pytest.approx((1700 * ms, 3360 * ms)), pytest.approx((17700 * ms, 19360 * ms))]
    idle = data.rows[data.row_index("task idle")]
    assert [layer.what for layer in idle.layers] == ["sleep", "task"]
    assert sum(float((la.end_ms - la.start_ms).sum()) for la in idle.layers if la.what == "sleep") == \
        pytest.approx(((1604 - 100) + (10000 - 3400) + (16000 - 10060) + (17604 - 16170) + (20000 - 19400)) * ms)
    assert list(data.tick_ms) == pytest.approx([1600 * ms, 17600 * ms]) and list(data.tick_value) == [1, 2]
    assert list(data.event_ms) == pytest.approx([1790 * ms, 17790 * ms]) and list(data.event_id) == [1, 0]   # either strobe edge
    assert g.x_range() == pytest.approx((0.0, 20000 * ms))
    qtbot.wait(50)
    g.grab()
    assert g.item.last_mode == "exact" and g.item.last_rects >= 3 + 1 + 2
    tip = g.item.describe_at(1650 * ms, data.row_index("isr PCINT2"))
    assert "isr PCINT2 (dispatch)" in tip and "cycles 1604 .. 1700: 96 cycles = 6.00 us" in tip
    assert "port reads 2" in g.item.describe_at(17600 * ms, 0, px=0.001)
    assert g.item.describe_at(5000 * ms, data.row_index("task tc")) == ""
    # the mouse over a bar: its tooltip says what ran, from when to when (the cycles too)
    qtbot.waitExposed(g)
    vb = g.plot.getViewBox()
    scene_pos = vb.mapViewToScene(QPointF(2500 * ms, data.row_index("task tc")))
    at = g.plot.mapFromScene(scene_pos)
    moves = [0]

    def hovered() -> bool:
        # a single synthetic move can go unseen (beside stress-ng --cpu 2 one produced no hover in 30 s):
        # move again, a pixel either way, until the item is hovered; what the tooltip says is the same
        if "task tc (dispatch)" in g.item.toolTip():
            return True
        moves[0] += 1
        qtbot.mouseMove(g.plot.viewport(), at + QPoint(moves[0] % 2, 0))
        return False

    qtbot.waitUntil(hovered, timeout=60000)
    assert "cycles 1700 .. 3360: 1660 cycles = 103.75 us" in g.item.toolTip()


def test_gantt_zooms_and_pans_x_only(qtbot, tmp_path) -> None:
    from PySide6.QtCore import QPoint, QPointF, Qt
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QApplication

    from mmrig.gui.gantt import GanttWidget

    g = GanttWidget()
    qtbot.addWidget(g)
    g.resize(900, 360)
    g.show()
    g.set_trace(write_trace(tmp_path / "run.exectrace", TRACE))
    qtbot.waitExposed(g)
    vb = g.plot.getViewBox()
    full, rows = g.x_range(), vb.viewRange()[1]
    qtbot.mouseClick(g.zoom_in_button, Qt.MouseButton.LeftButton)
    a, b = g.x_range()
    assert b - a == pytest.approx((full[1] - full[0]) / 2) and vb.viewRange()[1] == pytest.approx(rows)
    # the mouse wheel over the chart zooms time, never the rows
    view = g.plot.viewport()
    centre = QPointF(view.width() / 2, view.height() / 2)
    ev = QWheelEvent(centre, view.mapToGlobal(centre), QPoint(), QPoint(0, 240), Qt.MouseButton.NoButton,
                     Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(view, ev)
    a2, b2 = g.x_range()
    assert b2 - a2 < (b - a) * 0.9 and vb.viewRange()[1] == pytest.approx(rows)
    g.set_x_range(0.5, 0.6)
    assert g.x_range() == pytest.approx((0.5, 0.6)) and "0.500 .. 0.600 ms" in g.span_label.text()
    qtbot.mouseClick(g.fit_button, Qt.MouseButton.LeftButton)
    assert g.x_range() == pytest.approx(full)


@pytest.mark.long    # a long trace drawn zoomed out and in: 16 s
def test_gantt_of_a_long_trace_is_binned_zoomed_out_and_exact_zoomed_in(qtbot, tmp_path) -> None:
    # how long it takes is perf/perf_gui_gantt.py's figure, not an assertion here (a loaded host took 36.9 s)
    from mmanalysis import exectrace as et
    from mmrig.gui.gantt import GanttData, GanttWidget

    tr = write_trace(tmp_path / "long.exectrace", repeated_trace(20_000))      # 25 s of the pattern
    segs = et.timeline(tr)
    assert len(segs) > 300_000
    g = GanttWidget()
    qtbot.addWidget(g)
    g.resize(1200, 400)
    g.show()
    g.set_data(GanttData.from_trace(tr, segs))
    g.grab()                                          # the first paint, zoomed out: occupancy per pixel
    assert g.item.last_mode == "binned" and g.item.last_rects < 6 * 1200
    assert len(g.bars("isr PCINT2")) == 5 * 20_000         # each switching one runs in two pieces
    g.set_x_range(1000.0, 1002.0)                    # two of the pattern's 1.25 ms: each bar as it is
    g.grab()
    assert g.item.last_mode == "exact"


def test_profile_window_fills_the_tables_and_shows_runs_side_by_side(qtbot, tmp_path) -> None:
    from mmrig.gui.profile import ProfileRun, ProfileWindow

    a = write_run(tmp_path / "a", "idle-exec", TRACE)
    b = write_run(tmp_path / "b", "loaded-exec", synthetic_trace(120, periodic=(10_000, 2_000), rx_per_s=20),
                  load="periodic=10000/2000,rx=20")
    w = ProfileWindow([ProfileRun.from_json(a), ProfileRun.from_json(b.with_suffix(".csv"))])
    qtbot.addWidget(w)
    w.show()
    assert [p.run.name for p in w.panels] == ["idle-exec", "loaded-exec"]
    assert w.panels[0].x() < w.panels[1].x()          # side by side
    rows = w.panels[0].task_rows()
    assert [r[:4] for r in rows] == [["isr", "PCINT2", "dispatch", "3"], ["isr", "TIMER0_COMPA", "tick", "1"],
                                     ["task", "idle", "idle", "3"], ["task", "tc", "dispatch", "2"]]
    tc = rows[3]
    assert tc[4:7] == ["103.75", "103.75", "103.75"] and tc[8] == "1 000" and tc[10] == "0.1660"   # U_i: 3320 of 20000 cycles
    side = json.loads(a.read_text())["executor_profile"]
    assert f"{side['U']:.4f}" in w.panels[0].summary.text() and "idle " in w.panels[0].summary.text()
    cats = w.panels[0].categories
    assert [cats.horizontalHeaderItem(c).text() for c in range(cats.columnCount())] == list(side["by_category"])
    assert cats.item(0, 0).text() == f"{100 * side['by_category']['tick']:.2f} %"
    svc = w.panels[0].services
    assert svc.rowCount() == 1 and svc.item(0, 0).text() == "PCINT2 interrupt"
    assert [svc.item(0, c).text() for c in range(1, 5)] == ["3.12", "9.75", "6.62", "3.12"]
    loaded = {r[1]: r for r in w.panels[1].task_rows()}
    assert {"load_periodic", "serial", "USART0_RX", "TIMER3_COMPA"} <= set(loaded)
    assert "periodic=10000/2000,rx=20" in w.panels[1].config_label.text()
    # the chart: the first run's, then the second's
    assert w.gantt.row_names()[:2] == ["tick / event", "isr PCINT2"]
    w.gantt.set_x_range(0.1, 0.3)
    w.run_combo.setCurrentIndex(1)
    assert "task load_periodic" in w.gantt.row_names() and w.gantt.message_text() is None
    assert w.gantt.x_range() == pytest.approx((0.1, 0.3))     # the same stretch of the other run
    w.gantt.fit()
    w.run_combo.setCurrentIndex(0)
    assert w.gantt.x_range() == pytest.approx((0.0, 1.25))    # the whole of each when not zoomed


def test_a_run_without_a_profile_says_it_was_not_traced(qtbot, tmp_path) -> None:
    from mmrig.gui.profile import ProfileRun, ProfileWindow

    w = ProfileWindow([ProfileRun.from_json(write_run(tmp_path, "plain", None)),
                       ProfileRun.from_json(write_run(tmp_path, "traced", TRACE))])
    qtbot.addWidget(w)
    w.show()
    first = w.panels[0]
    assert first.tasks is None and first.summary.objectName() == "not_traced"
    assert "not traced" in first.summary.text() and "--trace" in first.summary.text()
    assert w.run_combo.currentIndex() == 1 and w.gantt.message_text() is None    # the traced one is shown
    w.run_combo.setCurrentIndex(0)
    assert "not traced" in w.gantt.message_text()


def test_a_bad_or_missing_trace_is_one_message(qtbot, tmp_path) -> None:
    from mmrig.gui.profile import ProfileRun, ProfileWindow

    bad = write_run(tmp_path, "bad", TRACE)
    (tmp_path / "bad.exectrace").write_text(TRACE.replace("R 1760 -", "R 1760 x"))
    gone = write_run(tmp_path / "g", "gone", TRACE)
    (tmp_path / "g" / "gone.exectrace").unlink()
    w = ProfileWindow([ProfileRun.from_json(bad), ProfileRun.from_json(gone)])
    qtbot.addWidget(w)
    w.show()
    msg = w.gantt.message_text()
    assert msg.startswith("Cannot read the executor trace of bad:") and "malformed 'R' record" in msg
    assert w.panels[0].tasks is not None and w.panels[0].tasks.rowCount() == 4    # the sidecar's figures stay
    w.run_combo.setCurrentIndex(1)
    assert "The executor trace of gone is missing" in w.gantt.message_text()
    empty = write_run(tmp_path / "e", "empty", TRACE)
    (tmp_path / "e" / "empty.exectrace").write_text("\n".join(TRACE.splitlines()[:2]) + "\n")
    w.add_run(ProfileRun.from_json(empty))
    w.run_combo.setCurrentIndex(2)
    assert "has no records" in w.gantt.message_text()
    assert len(w.messages) == 2 and not any("Traceback" in m for m in w.messages)
    assert w.add_paths([tmp_path / "nothing.json"]) == 0 and "no such file" in w.messages[-1]


# ---- the main window's fields and the menu -----------------------------------------------------------------------
def test_executor_load_field_and_trace_box_reach_the_run_config(make_win, qtbot, tmp_path) -> None:
    from PySide6.QtCore import Qt

    from mmsched.model.exload import ExecutorLoad

    ini = tmp_path / "keep.ini"
    win = make_win(ini)
    assert win.run_settings.executor_load.placeholderText() == "none, or cpu,periodic=10ms/2ms,rx=20"
    assert win.config().executor_load == ExecutorLoad() and win.config().trace is False
    win.run_settings.executor_load.setFocus()
    qtbot.keyClicks(win.run_settings.executor_load, "cpu,gpu")
    assert win.run_settings.executor_load_error and "'gpu' is not cpu" in win.run_settings.executor_load.toolTip()
    assert "c0392b" in win.run_settings.executor_load.styleSheet()
    win.start_run()                                           # blocked, with the parser's message
    assert not win.running and win.problems[-1].title == "Invalid settings"
    assert "'gpu' is not cpu, periodic=PERIOD/EXEC or rx=N" in win.problems[-1].text
    win.run_settings.executor_load.setText("cpu,periodic=10ms/2ms,rx=20")
    assert win.run_settings.executor_load_error is None and win.run_settings.executor_load.styleSheet() == ""
    qtbot.mouseClick(win.run_settings.trace, Qt.MouseButton.LeftButton)
    cfg = win.config()
    assert cfg.executor_load == ExecutorLoad(cpu=True, period_us=10_000, exec_us=2_000, rx_per_s=20.0)
    assert cfg.trace is True
    win.run_settings.set_mode("normal")                                    # no executor in normal mode: the field is off
    assert not win.run_settings.executor_load.isEnabled() and win.config().executor_load.none
    win.run_settings.set_mode("mixed")
    win.connection.conn_serial.setChecked(True)                          # boards cannot be traced
    assert not win.run_settings.trace.isEnabled() and "virtual bench" in win.run_settings.trace.toolTip() and win.config().trace is False
    win.connection.conn_bench.setChecked(True)
    assert win.run_settings.trace.isEnabled() and win.config().trace is True
    win.close()
    again = make_win(ini)
    assert again.run_settings.executor_load.text() == "cpu,periodic=10ms/2ms,rx=20" and again.run_settings.trace.isChecked()
    assert again.config().executor_load.period_us == 10_000


def test_profile_menu_opens_the_last_traced_run(make_win, tmp_path) -> None:
    from mmrig.gui.profile import ProfileWindow
    from mmsched.model.result import RunResult

    win = make_win()
    titles = [a.text() for m in win.menuBar().actions() for a in m.menu().actions()]
    assert "Executor &profile..." in titles
    j = write_run(tmp_path, "last", TRACE, summary={"events": 0, "outcomes": {o: 0 for o in
                                                      ("ok", "late", "early", "missed", "lost")}})
    win.on_finished(RunResult([], json.loads(j.read_text()), j.with_suffix(".csv"), j))   # a traced run ends
    assert "executor traced: U = 0.1" in win.log_view.toPlainText() and "Executor profile" in win.log_view.toPlainText()
    win.menus.profile_action.trigger()
    w = win.profile_window
    assert isinstance(w, ProfileWindow) and [r.name for r in w.runs] == ["last"]
    assert w.gantt.row_names()[-1] == "task idle"
    w.close()
    # runs chosen on disk: the unreadable one said, the rest shown
    w2 = win.profile_runs([j, tmp_path / "nope.json"])
    assert [r.name for r in w2.runs] == ["last"] and win.problems[-1].title == "Cannot open run"


def test_gui_modules_stay_out_of_the_core() -> None:
    import subprocess
    code = ("import sys, mmanalysis.exectrace, mmsched.model.config, mmsched.model.exload, mmsched.model.result; "
            "print([m for m in sys.modules if m.startswith(('PySide6', 'pyqtgraph'))])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# ---- what it looks like ------------------------------------------------------------------------------------------
def test_screenshot_of_the_profile_window(qtbot, tmp_path) -> None:
    from mmrig.gui.profile import ProfileRun, ProfileWindow

    SHOTS.mkdir(parents=True, exist_ok=True)
    idle = write_run(tmp_path, "idle-executor", synthetic_trace(500))
    loaded = write_run(tmp_path, "loaded-executor", synthetic_trace(500, periodic=(10_000, 2_000), rx_per_s=20, cpu=True),
                       load="cpu,periodic=10000/2000,rx=20")
    w = ProfileWindow([ProfileRun.from_json(idle), ProfileRun.from_json(loaded)])
    qtbot.addWidget(w)
    w.resize(1500, 950)
    w.show()
    qtbot.waitExposed(w)
    w.run_combo.setCurrentIndex(1)
    w.gantt.set_x_range(60.0, 100.0)                  # around the first timecode edge: 40 ms of the loaded run
    qtbot.wait(200)
    img = w.grab().toImage()
    path = SHOTS / "profile.png"
    assert img.save(str(path))
    colours = {img.pixel(x, y) for x in range(0, img.width(), 12) for y in range(0, img.height(), 12)}
    assert len(colours) > 20
    # the other run, the whole trace: zoomed out, each row drawn as its occupancy per pixel column
    w.run_combo.setCurrentIndex(0)
    assert w.gantt.x_range() == pytest.approx((60.0, 100.0))        # the same stretch, of the idle executor
    w.gantt.fit()
    qtbot.wait(200)
    assert w.gantt.x_range() == pytest.approx((0.0, w.gantt.data.total_ms)) and w.gantt.data.total_ms > 490
    assert w.grab().toImage().save(str(SHOTS / "profile_whole_trace.png"))
