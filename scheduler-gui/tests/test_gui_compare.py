"""The compare window against the paper: a bench run beside a normal run on log axes, the paper's means as
reference lines inside every axis, labelled at the axis edge and in the legend (not over the data), none made up
for a run the paper has no mean for; CDF curves told apart by colour; the same run files asked for as the profile
window asks for."""

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
    assert sorted(r.us for r in cmp.plots.references) == sorted([paper["mixed2"], paper["normal"]])
    assert cmp.plots.log_y                                              # 1.375 us beside 300 ms: decades
    lines = [item for _, kind, item, _ in cmp.plots._ref_items if kind == "line"]
    assert len(lines) == 6                                              # two means on each of the three plots
    assert {round(10 ** line.value(), 3) for line in lines} == {paper["mixed2"], paper["normal"]}
    labels = {line.toolTip() for line in lines}                       # the whole label: on the line's tooltip
    assert labels == {"paper 7.4 mixed2: 43 us", "paper 7.3 normal: 14465 us"}, labels
    # at the axis edge, the name without the figure; on the small CDF's top axis, the section alone
    assert [(r.tick, r.short) for r in cmp.plots.references] == [("paper 7.4 mixed2", "7.4"),
                                                                 ("paper 7.3 normal", "7.3")]
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


def test_the_paper_labels_stand_at_the_axis_edge_and_in_the_legend_not_on_the_data(make_win, tmp_path,
                                                                                  synthetic_run) -> None:
    import pyqtgraph as pg

    mixed = synthetic_run(tmp_path, [1.375] * 50, "mixed-bench", "mixed", 2)
    normal = synthetic_run(tmp_path, np.linspace(150_000.0, 300_000.0, 50).tolist(), "normal-bench", "normal", 2)
    cmp = make_win().compare(mixed, normal)
    want = {"paper 7.4 mixed2: 43 us", "paper 7.3 normal: 14465 us"}
    # inside the plots' views only the dashed lines: a label there lay across the runs' points and curves
    for view in (cmp.plots.time_plot, cmp.plots.hist_plot, cmp.plots.cdf_plot, cmp.load_cdf):
        lines = [i for i in view.getViewBox().childGroup.childItems() if isinstance(i, pg.InfiniteLine)]
        assert len(lines) == 2 and all(getattr(line, "label", None) is None for line in lines), view
    # the time plot's labels are ticks of its right axis, the CDF's of its top axis, at the lines' heights
    for plot, side in ((cmp.plots.time_plot, "right"), (cmp.plots.cdf_plot, "top")):
        axis = plot.getAxis(side)
        assert axis.isVisible()
        ticks = dict((text, pos) for pos, text in axis._tickLevels[0])
        names = {"right": ("paper 7.4 mixed2", "paper 7.3 normal"), "top": ("7.4", "7.3")}[side]
        assert set(ticks) == set(names), ticks
        assert ticks[names[0]] == np.log10(43.0)                             # log axes: view coordinates
    # the CDF per load condition names them in its legend
    names = {label.text for _, label in cmp.load_cdf.plotItem.legend.items}
    assert want <= names, names


def test_the_compare_cdf_curves_have_colours_of_their_own_and_a_legend(make_win, tmp_path, synthetic_run) -> None:
    a = synthetic_run(tmp_path, np.linspace(40.0, 80.0, 30).tolist(), "mixed-idle", "mixed", 2)
    b = synthetic_run(tmp_path, np.linspace(900.0, 3000.0, 30).tolist(), "normal-idle", "normal", 2)
    cmp = make_win().compare(a, b)
    assert len(cmp.load_cdf.lines) == 2                      # both idle: one line each for mixed and normal
    colours = {name: line.opts["pen"].color().name() for name, line in cmp.load_cdf.lines.items()}
    # they were both black; now each its run's colour in the rest of the window: A blue, B red
    assert colours == {"idle (mixed d=2 aligned)": "#1f77b4", "idle (normal d=2)": "#d62728"}, colours
    names = {label.text for _, label in cmp.load_cdf.plotItem.legend.items}
    assert {"idle (mixed d=2 aligned) (n=30)", "idle (normal d=2) (n=30)"} <= names, names


def test_compare_and_profile_ask_for_the_same_run_files_and_take_either(make_win, tmp_path, synthetic_run,
                                                                        monkeypatch) -> None:
    from PySide6.QtWidgets import QFileDialog

    from mmrig.gui.profile import ProfileWindow

    a = synthetic_run(tmp_path, [40.0, 50.0, 60.0], "run-a")
    b = synthetic_run(tmp_path, [45.0, 55.0, 65.0], "run-b")
    asked: dict[str, str] = {}
    chosen: list[str] = []

    def many(parent, caption, folder, filters):
        asked[caption] = filters
        return chosen, filters

    def one(parent, caption, folder, filters):
        asked[caption] = filters
        return (chosen[0] if chosen else ""), filters

    monkeypatch.setattr(QFileDialog, "getOpenFileNames", staticmethod(many))
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(one))
    win = make_win()
    chosen[:] = [str(a.with_suffix(".json")), str(b)]          # a run's sidecar and another's CSV
    win.compare_dialog()
    assert win.compare_window.windowTitle() == "compare: run-a vs run-b"
    win.profile_dialog()                                      # not traced: asks for runs, takes them all the same
    assert [r.name for r in win.profile_window.runs] == ["run-a", "run-b"]
    pw = ProfileWindow([])
    chosen[:] = [str(a)]
    pw.add_dialog()
    assert [r.name for r in pw.runs] == ["run-a"]
    win.open_dialog()
    assert len(set(asked.values())) == 1, asked               # one kind of file, whichever window asks
    assert "*.csv" in next(iter(asked.values())) and "*.json" in next(iter(asked.values()))


def test_the_compare_cdf_keeps_aligned_and_free_running_runs_apart(make_win, tmp_path, synthetic_run) -> None:
    """Tick-aligned and free-running 1-ahead runs are two experiments (the report's load CDF keeps them in panels
    of their own): two idle lines, never one pooled line."""
    import json

    a = synthetic_run(tmp_path, np.linspace(40.0, 80.0, 30).tolist(), "aligned", "mixed", 1)
    b = synthetic_run(tmp_path, np.linspace(40.0, 90.0, 30).tolist(), "free", "mixed", 1)
    side = b.with_suffix(".json")
    meta = json.loads(side.read_text())
    meta["config"]["generation"] = "free"
    side.write_text(json.dumps(meta))
    cmp = make_win().compare(a, b)
    assert set(cmp.load_cdf.lines) == {"idle (mixed d=1 aligned)", "idle (mixed d=1 free)"}, set(cmp.load_cdf.lines)
