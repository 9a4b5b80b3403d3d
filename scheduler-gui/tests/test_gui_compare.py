"""The compare window against the paper: a bench run beside a normal run on log axes, the paper's means as
reference lines inside every axis, none made up for a run the paper has no mean for."""

from __future__ import annotations

import numpy as np


def test_compare_puts_a_bench_run_beside_a_normal_run_on_log_axes_with_the_papers_means(make_win, tmp_path,
                                                                                        synthetic_run) -> None:
    from mmanalysis.report import PAPER

    mixed = synthetic_run(tmp_path, [1.375] * 50, "mixed-bench", "mixed", 2)
    normal = synthetic_run(tmp_path, np.linspace(150_000.0, 300_000.0, 50).tolist(), "normal-bench", "normal", 2)
    cmp = make_win().compare(mixed, normal)
    paper = {p.key: p.mean_us for p in PAPER}
    assert [r.key for r in cmp.paper] == ["mixed2", "normal"]
    assert sorted(us for _, us, _ in cmp.plots.references) == sorted([paper["mixed2"], paper["normal"]])
    assert cmp.plots.log_y                                              # 1.375 us beside 300 ms: decades
    lines = [item for _, kind, item, _ in cmp.plots._ref_items if kind == "line"]
    assert len(lines) == 6                                              # two means on each of the three plots
    assert {round(10 ** line.value(), 3) for line in lines} == {paper["mixed2"], paper["normal"]}
    labels = {line.label.toPlainText() for line in lines if getattr(line, "label", None) is not None}
    assert labels == {"paper 7.4 mixed2: 43 us", "paper 7.3 normal: 14465 us"}, labels
    cmp.resize(1280, 800)
    cmp.show()
    from PySide6.QtWidgets import QApplication
    for _ in range(5):
        QApplication.processEvents()
    # every run and every reference inside the axes
    lo, hi = cmp.plots.time_plot.getViewBox().viewRange()[1]
    assert lo <= np.log10(1.375) and hi >= np.log10(300_000) and hi - lo < 7, (lo, hi)
    clo, chi = cmp.plots.cdf_plot.getViewBox().viewRange()[0]
    assert clo <= np.log10(1.375) and chi >= np.log10(300_000), (clo, chi)
    # the CDF per load condition has them too, inside its axis
    assert [r.key for r in cmp.load_cdf.refs] == ["mixed2", "normal"]
    llo, lhi = cmp.load_cdf.getViewBox().viewRange()[0]
    assert llo <= np.log10(43.0) <= lhi and llo <= np.log10(14465.0) <= lhi
    # a run the paper has no mean for (mixed 1 tick ahead): no line is made up
    one = synthetic_run(tmp_path, [1.375] * 5, "mixed1", "mixed", 1)
    assert make_win().compare(one, one).plots.references == []
