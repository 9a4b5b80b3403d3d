"""The latency axes: tick labels with their unit that never run together, log when the data span decades
(automatic, or forced from View > Latency axis, kept in the settings)."""

from __future__ import annotations

import numpy as np


def label_rects(axis) -> list:
    """The tick labels `axis` would draw now: (rect, text), from its own draw specs."""
    from PySide6.QtGui import QImage, QPainter

    img = QImage(16, 16, QImage.Format.Format_ARGB32)
    p = QPainter(img)
    try:
        specs = axis.generateDrawSpecs(p)
    finally:
        p.end()
    return [(r, t) for r, _, t in (specs[2] if specs else [])]


def apart(rects: list, gap: float = 4.0) -> bool:
    """No two labels closer than `gap` px (pyqtgraph's '100000' and '200000' 1 px apart read '100000200000')."""
    rs = [r.adjusted(-gap / 2, -gap / 2, gap / 2, gap / 2) for r, _ in rects]
    return not any(a.intersects(b) for i, a in enumerate(rs) for b in rs[i + 1:])


def test_histogram_and_cdf_tick_labels_never_run_together(qtbot, shown_plots) -> None:
    import pyqtgraph as pg

    lat = np.r_[np.linspace(120_000.0, 300_000.0, 60), [0.0]]        # 0 .. 300 ms: "100000200000" before
    x = np.arange(lat.size, dtype=float)
    # what the issue saw: pyqtgraph's own axis at this width puts labels on top of each other
    plain = pg.PlotWidget()
    qtbot.addWidget(plain)
    plain.resize(190, 200)
    plain.setVisible(True)
    plain.plot(lat, np.ones_like(lat))
    qtbot.wait(50)
    assert not apart(label_rects(plain.getAxis("bottom")))
    # ours, as narrow, linear on purpose
    plots = shown_plots(380, 420)
    plots.set_axis_mode("linear")
    plots.show_arrays([(x, lat)])
    qtbot.wait(50)
    for plot, side in ((plots.hist_plot, "bottom"), (plots.cdf_plot, "bottom"), (plots.time_plot, "left")):
        rects = label_rects(plot.getAxis(side))
        assert len(rects) >= 2, rects
        assert apart(rects), [t for _, t in rects]
        assert all(t == "0" or t.endswith((" us", " ms", " s")) for _, t in rects), [t for _, t in rects]
    assert any(t.endswith(" ms") for _, t in label_rects(plots.hist_plot.getAxis("bottom")))
    # and on log axes
    plots.set_axis_mode("log")
    plots.show_arrays([(np.arange(60.0), np.r_[np.full(30, 1.375), np.geomspace(10, 300_000, 30)])])
    qtbot.wait(50)
    for plot, side in ((plots.hist_plot, "bottom"), (plots.cdf_plot, "bottom"), (plots.time_plot, "left")):
        rects = label_rects(plot.getAxis(side))
        assert len(rects) >= 2 and apart(rects), [t for _, t in rects]


def test_latency_tick_words() -> None:
    from mmrig.gui.widgets.latency_axis import latency_tick, latency_ticks

    assert latency_ticks([0.0, 100_000.0, 200_000.0, 300_000.0], 100_000.0) == ["0", "100 ms", "200 ms", "300 ms"]
    assert latency_ticks([0.0, 500.0, 1000.0, 1500.0], 500.0) == ["0", "0.5 ms", "1.0 ms", "1.5 ms"]
    assert latency_ticks([1.37, 1.38], 0.01) == ["1.37 us", "1.38 us"]
    assert [latency_tick(v) for v in (1.0, 20.0, 1000.0, 300_000.0, 2e6)] == ["1 us", "20 us", "1 ms", "300 ms", "2 s"]


def test_latency_axes_go_log_when_the_data_span_decades(qtbot, make_win, tmp_path, shown_plots) -> None:
    plots = shown_plots()
    x = np.arange(20, dtype=float)
    assert plots.axis_mode == "auto"
    plots.show_arrays([(x, np.r_[np.full(10, 1.375), np.full(10, 300_000.0)])])
    assert plots.log_y and plots.time_plot.getPlotItem().ctrl.logYCheck.isChecked()
    assert plots.cdf_plot.getPlotItem().ctrl.logXCheck.isChecked() and plots.hist_plot.getPlotItem().ctrl.logXCheck.isChecked()
    qtbot.wait(50)
    lo, hi = plots.time_plot.getViewBox().viewRange()[1]               # log10 of us
    assert lo <= np.log10(1.375) and hi >= np.log10(300_000) and hi - lo < 7, (lo, hi)
    plots.show_arrays([(x, np.linspace(100.0, 3000.0, 20))])            # 30x: one decade and a half, linear
    assert not plots.log_y
    plots.set_axis_mode("log")                                          # switchable
    plots.show_arrays([(x, np.linspace(100.0, 3000.0, 20))])
    assert plots.log_y
    plots.set_axis_mode("linear")
    plots.show_arrays([(x, np.r_[np.full(10, 1.375), np.full(10, 300_000.0)])])
    assert not plots.log_y
    # the window: automatic by default, a menu of three, kept in the settings
    ini = tmp_path / "axes.ini"
    win = make_win(ini)
    assert win.live.plots.axis_mode == "auto" and win.menus.axis_actions["auto"].isChecked()
    win.menus.axis_actions["linear"].trigger()
    assert win.live.plots.axis_mode == "linear"
    win.close()
    assert make_win(ini).live.plots.axis_mode == "linear"


def test_a_log_axis_zoomed_out_past_any_latency_labels_what_it_can(qtbot) -> None:
    # A log axis whose view range ran to 10^400 (the view's auto range while a run's first latencies came in)
    # raised OverflowError in every paint, shown on screen as Qt's exception dialog text: labels beyond any
    # number are left out instead.
    from mmrig.gui.widgets.latency_axis import LatencyAxis

    axis = LatencyAxis("bottom")
    axis.setLogMode(True)
    labels = axis.tickStrings([1.0, 2.0, 400.0], 1.0, 1.0)
    assert labels[:2] == ["10 us", "100 us"] and labels[2] == ""
