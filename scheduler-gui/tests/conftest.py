"""Fixtures the GUI test modules share: the display (a private Xvfb, started once a session), the bench built,
a main window maker, a shown Plots widget, and runs written to disk as the core writes them."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from gui_display import start_xvfb  # noqa: E402

TICK_US = 71_111.0      # the nominal tick (the timebase below: 1,137,778 counts at 16 MHz)
TIMEBASE = {"timer_hz": 16_000_000, "tick_counts": 1_137_778}


@pytest.fixture(autouse=True)
def gui_thread_gc(request):
    """A test with a Qt event loop collects Python's garbage in the GUI thread only, as the app does
    (mmrig.gui.gcpolicy); the other tests of the process keep the automatic collector."""
    if "qtbot" not in request.fixturenames:
        yield
        return
    from mmrig.gui.gcpolicy import gui_thread_gc as start

    policy = start()
    yield
    policy.stop()


@pytest.fixture(scope="session")
def display():
    """The Xvfb the GUI tests draw on, or None (Qt's offscreen platform, said loudly). Xvfb ends with this
    process (PDEATHSIG): Qt keeps its X connection until the interpreter exits, and an X server killed under
    it would make Qt exit the test process with status 1."""
    yield start_xvfb()


@pytest.fixture(scope="session")
def qapp_args(display):   # pytest-qt builds its QApplication after this: the display exists by then
    return ["mmgui-tests"]


@pytest.fixture(scope="session")
def bench() -> None:
    """The virtual bench built (tests that run on it)."""
    from mmhil.bench import ensure_built
    ensure_built()


@pytest.fixture
def make_win(qtbot, tmp_path):
    from PySide6.QtCore import QSettings

    from mmrig.gui.window import MainWindow

    made = []

    def make(ini: Path | None = None):
        w = MainWindow(QSettings(str(ini or tmp_path / "settings.ini"), QSettings.Format.IniFormat),
                       runs_dir=tmp_path / "runs")
        w.quiet = True
        qtbot.addWidget(w)
        w.resize(1280, 800)
        w.show()
        made.append(w)
        return w
    yield make
    for w in made:
        if w.worker is not None:
            w.worker.stop()
            qtbot.waitUntil(lambda: w.worker is None, timeout=30000)


@pytest.fixture
def shown_plots(qtbot):
    """make(w, h): a Plots widget of its own, shown at w x h."""
    from mmrig.gui.widgets.plots import Plots

    def make(w: int = 560, h: int = 420) -> Plots:
        plots = Plots()
        qtbot.addWidget(plots)
        plots.resize(w, h)
        plots.setVisible(True)
        return plots
    return make


def _synthetic_run(path: Path, latencies: list[float], name: str, mode: str = "mixed", distance: int = 2) -> Path:
    from mmsched.model.event import Event
    from mmsched.verdict.export import write_run
    from mmsched.verdict.stats import summarize

    evs = []
    for i, lat in enumerate(latencies):
        e = Event(i, i, i % 8, mode, distance, 100 + i, 98 + i, 0.1, latency_us=lat, result_tc=100 + i)
        e.finish("ok" if lat < 1000 else "late", None if lat < 1000 else "late")
        evs.append(e)
    write_run(path / name, evs, {"format": "mmrig-run", "format_version": 1, "name": name, "valid": True,
                                 "summary": summarize(evs), "config": {"mode": mode, "distance": distance},
                                 "timebase": TIMEBASE})
    return path / f"{name}.csv"


@pytest.fixture
def synthetic_run():
    """(folder, latencies, name, mode="mixed", distance=2) -> NAME.csv: a run of those latencies on disk (ok
    under 1 ms, late above), as the core writes runs."""
    return _synthetic_run


def _normal_with_stall(tick_us: float = TICK_US, first: int = 0, n: int = 60) -> tuple:
    rng = np.random.default_rng(3)
    event = np.arange(n, dtype=float)
    lat = rng.uniform(150.0, 2500.0, n)
    sent = 0.18 + event * tick_us / 1e6 + lat / 1e6
    stall_end = sent[first] + 0.295
    for k, e in enumerate(range(first, first + 5)):
        lat[e] = 295_000.0 - k * 59_000.0 if k < 4 else 35_000.0
        sent[e] = stall_end + 0.002 * k
    return event, lat, sent


@pytest.fixture
def normal_with_stall():
    """(tick_us, first=0, n=60) -> (event, latency us, sent s): a normal-mode run whose firing path stalled
    for ~4 ticks at event FIRST, the backlog then sent back to back (295, 236, 177, 118 ms, then 35 ms)."""
    return _normal_with_stall


def _write_normal(folder: Path, name: str, lat: np.ndarray, sent: np.ndarray) -> Path:
    from mmsched.model.event import Event
    from mmsched.verdict.export import write_run
    from mmsched.verdict.stats import summarize

    evs = []
    for i in range(lat.size):
        e = Event(i, i, i % 8, "normal", 2, 12 + i, 10 + i, 0.15, sent_s=float(sent[i]), result_tc=12 + i,
                  latency_us=float(lat[i]))
        e.finish("ok" if lat[i] < 1000 else "late", None if lat[i] < 1000 else "late")
        evs.append(e)
    write_run(folder / name, evs, {"format": "mmrig-run", "format_version": 1, "name": name, "valid": True,
                                   "summary": summarize(evs), "config": {"mode": "normal", "distance": 2},
                                   "timebase": TIMEBASE})
    return folder / f"{name}.csv"


@pytest.fixture
def write_normal():
    """(folder, name, latencies, sent) -> NAME.csv: a normal-mode run on disk with these latencies and send
    times, as the core writes runs."""
    return _write_normal
