"""A run's warm-up: a start-up stall found only in a run's first events, marked in grey on a band, kept out
of the axes, the histogram and the CDF, and counted once for every plot's title."""

from __future__ import annotations

import numpy as np


def test_warmup_is_found_only_where_a_start_up_stall_is(normal_with_stall) -> None:
    from mmrig.gui.widgets.warmup import warmup_until

    tick = 71_111.0
    ev, lat, sent = normal_with_stall(first=0)
    assert warmup_until(ev, lat, sent, tick) == 5                    # 295, 236, 177, 118 ms and the 35 ms behind
    ev, lat, sent = normal_with_stall(first=10)
    assert warmup_until(ev, lat, sent, tick) == 15                   # the stall seen here at 1.1 s into a run
    ev, lat, sent = normal_with_stall(first=45)
    assert warmup_until(ev, lat, sent, tick) is None                 # later: the PC's behaviour, never hidden
    calm = np.random.default_rng(1).uniform(100.0, 3000.0, 60)
    assert warmup_until(np.arange(60.0), calm, 0.18 + np.arange(60) * 0.0711, tick) is None


def test_warmup_is_marked_and_kept_out_of_the_axes(qtbot, make_win, tmp_path, shown_plots, normal_with_stall,
                                                  write_normal) -> None:
    plots = shown_plots()
    ev, lat, sent = normal_with_stall(first=0)
    plots.show_arrays([(ev, lat)], warmup=[5])
    qtbot.wait(50)
    assert plots.warm_band.isVisible() and plots.warm_band.getRegion() == (-0.5, 4.5)
    assert "warm-up: 5 events, to 295 ms" in plots.time_plot.getPlotItem().titleLabel.text
    # a title longer than a narrow plot does not widen it past its window (it did: the axis was cut off)
    narrow = shown_plots(300, 400)
    narrow.show_arrays([(ev, lat)], warmup=[5])
    qtbot.wait(50)
    for plot in (narrow.time_plot, narrow.hist_plot, narrow.cdf_plot):      # the plot inside its view, axes whole
        assert plot.getPlotItem().width() <= plot.width() + 1, (plot.getPlotItem().width(), plot.width())
    lo, hi = plots.time_plot.getViewBox().viewRange()[1]
    assert not plots.log_y and hi < 5000, (lo, hi)                     # the axis fits the run, not 295 ms
    assert plots.warm_curves[0].yData.size == 5 and plots.time_curves[0].yData.size == 55
    assert plots.hist_curves[0].yData.sum() == 55 and "−5 warm-up" in plots.cdf_plot.getPlotItem().titleLabel.text
    clo, chi = plots.cdf_plot.getViewBox().viewRange()[0]
    assert chi < 5000, (clo, chi)
    # an opened run with such a start: the window finds and marks it (its sent_s, its timebase's tick)
    win = make_win()
    assert win.open_run(write_normal(tmp_path, "stalled", lat, sent))
    assert win.live.plots.warmup == [5] and win.live.plots.warm_band.isVisible()
    assert win.live.stats.summary["n"] == 60                                 # the statistics are the run's, all of it


def test_the_warmup_count_is_one_figure_in_every_title(shown_plots, normal_with_stall) -> None:
    # a stall that also left events without a latency (missed): the warm-up ends before event 5 but holds only
    # 3 measured events, and the time plot, the histogram and the CDF all say 3 (the time plot said 5 once)
    plots = shown_plots()
    ev, lat, _ = normal_with_stall(first=0)
    measured = (ev < 2) | (ev > 3)                     # events 2 and 3: missed, no latency
    plots.show_arrays([(ev[measured], lat[measured])], warmup=[5])
    assert plots.warmup_events == 3 and plots.warm_curves[0].yData.size == 3
    assert "warm-up: 3 events, to 295 ms" in plots.time_plot.getPlotItem().titleLabel.text
    for plot in (plots.hist_plot, plots.cdf_plot):
        assert "−3 warm-up" in plot.getPlotItem().titleLabel.text
    assert plots.hist_curves[0].yData.sum() == 55
