"""The report's figures as a paper needs them: a histogram in fixed bins with its overflow, identical runs
both visible; a CDF of many runs without a pile of labels; load CDFs that never pool two experiments and
draw no empty panel; captions that say what a figure shows; a run table that fits the page; the executor's
Gantt chart of a traced run."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from mmanalysis import exectrace, ganttplot, measured, plots, read_runs, synth
from mmanalysis.report import PAGE_WIDTH_PX, RUN_HTML_HEADERS, RUN_HTML_LABELS, report

TRACE = Path(__file__).parent / "data" / "handmade.exectrace"


def write(folder: Path, name: str, mode: str = "mixed", distance: int = 2, load: str = "idle",
          generation: str = "aligned", count: int = 200, seed: int = 1) -> Path:
    rows = synth.synthetic_events(mode, distance, load != "idle", count, seed=seed)
    meta = synth.sidecar(name, rows, load=load != "idle")
    meta["config"]["load"] = load
    meta["config"]["generation"] = generation
    return synth.write_run(folder / name, rows, meta)[0]


def run_stairs(ax) -> dict[str, object]:
    return {a.get_gid()[4:]: a for a in ax.patches if (a.get_gid() or "").startswith("run:")}


def overflow_bars(ax) -> dict[str, object]:
    return {a.get_gid()[9:]: a for a in ax.patches if (a.get_gid() or "").startswith("overflow:")}


@pytest.mark.parametrize("width", [1.0, 2.5])
def test_histogram_bins_are_exactly_the_stated_width(tmp_path: Path, width: float) -> None:
    write(tmp_path, "a", seed=1)
    write(tmp_path, "b", seed=2)
    data = read_runs(tmp_path)
    fig = plots.histogram(data, bin_us=width)
    ax = fig.axes[0]
    for run, st in run_stairs(ax).items():
        edges = st.get_data().edges
        assert np.allclose(np.diff(edges), width, rtol=0, atol=1e-9), run
        shift = edges[0]                               # a run's outline may sit inside its first bin, never past it
        assert 0 <= shift < width
    assert f"bins of {width:g} us from 0" in ax.get_xlabel()


def test_overflow_bin_counts_the_events_past_the_stated_limit(tmp_path: Path) -> None:
    write(tmp_path, "a", seed=1)
    data = read_runs(tmp_path)
    lat = measured(data.df)["latency_us"].to_numpy(dtype=float)
    limit = 60.0
    expected = int((lat >= limit).sum())
    assert 0 < expected < len(lat)                     # the test means something: some past it, most not
    fig = plots.histogram(data, bin_us=1.0, max_us=limit)
    ax = fig.axes[0]
    (bar,) = overflow_bars(ax).values()
    assert bar.get_data().values[0] == expected
    drawn = run_stairs(ax)["a"].get_data().values
    assert np.where(drawn >= 1, drawn, 0).sum() == len(lat) - expected   # the bins hold the rest (empty: 0.8)
    label = next(t.get_text() for t in ax.texts if t.get_gid() == "overflow-label")
    assert f"overflow: {expected} \u2265 60 us" in label


def test_default_limit_is_a_round_percentile(tmp_path: Path) -> None:
    bins, limit = plots.hist_range(np.array([1.375] * 50), 1.0)
    assert (bins, limit) == (2, 2.0)                   # the bench's constant latency: bins [0, 1) and [1, 2)
    bins, limit = plots.hist_range(np.arange(1, 1001, dtype=float), 1.0)
    assert limit == 1000 and bins == 1000


def test_two_identical_runs_both_appear(tmp_path: Path) -> None:
    csv = write(tmp_path, "first", seed=4)
    shutil.copy(csv, tmp_path / "second.csv")
    meta = json.loads(csv.with_suffix(".json").read_text())
    meta["name"] = "second"
    (tmp_path / "second.json").write_text(json.dumps(meta))
    data = read_runs(tmp_path)
    ax = plots.histogram(data).axes[0]
    stairs = run_stairs(ax)
    assert set(stairs) == {"first", "second"}
    a, b = stairs["first"], stairs["second"]
    assert np.array_equal(a.get_data().values, b.get_data().values)      # the same counts...
    assert (a.get_data().values > 1).any() and (b.get_data().values > 1).any()
    # ...drawn so both show: another line style, a thinner line on top, a fraction of a bin apart
    assert a.get_linestyle() != b.get_linestyle() and b.get_linewidth() < a.get_linewidth()
    assert not np.array_equal(a.get_data().edges, b.get_data().edges)
    labels = ax.get_legend_handles_labels()[1]
    assert any(lb.startswith("second") and "same counts as first" in lb for lb in labels)


def test_cdf_of_many_runs_keeps_its_labels_bounded(tmp_path: Path) -> None:
    for i in range(28):
        write(tmp_path, f"run{i:02d}", seed=i)
    data = read_runs(tmp_path)
    fig = plots.cdf(data)
    ax = fig.axes[0]
    assert len(ax.texts) <= 2 * plots.CDF_LABELLED_RUNS
    labels = ax.get_legend_handles_labels()[1]
    lat = measured(data.df[data.df["run"] == "run07"])["latency_us"]
    entry = next(lb for lb in labels if lb.startswith("run07"))
    assert f"min {plots.us_text(lat.min())} us" in entry and f"max {plots.us_text(lat.max())} us" in entry
    few = plots.cdf(data, ["run00", "run01"])            # few runs: labelled beside their dots, as before
    assert len(few.axes[0].texts) == 4


def test_load_cdf_keeps_aligned_and_free_running_apart(tmp_path: Path) -> None:
    write(tmp_path, "aligned-idle", distance=1, generation="aligned", seed=1)
    write(tmp_path, "aligned-heavy", distance=1, load="heavy", generation="aligned", seed=2)
    write(tmp_path, "free-idle", distance=1, generation="free", seed=3)
    write(tmp_path, "free-heavy", distance=1, load="heavy", generation="free", seed=4)
    write(tmp_path, "two-ahead-idle", distance=2, seed=5)      # one condition only: no panel of its own
    data = read_runs(tmp_path)
    panels = plots.load_cdf_panels(data)
    assert list(panels) == [("mixed", 1, "aligned", ""), ("mixed", 1, "free", ""), ("mixed", 2, "aligned", "")]
    for key, conds in panels.items():
        runs = [r for r in data.runs if plots.experiment_key(data.meta[r]) == key]
        pooled = np.sort(np.concatenate([measured(data.df[data.df["run"] == r])["latency_us"].to_numpy(float)
                                         for r in runs]))
        assert np.array_equal(np.sort(np.concatenate(list(conds.values()))), pooled[pooled > 0])
    fig = plots.load_cdf(data)
    assert len(fig.axes) == 2
    titles = [ax.get_title() for ax in fig.axes]
    assert "tick-aligned" in titles[0] and "free-running" in titles[1]
    for ax in fig.axes:                                 # no empty panel: each has its lines
        assert len([ln for ln in ax.get_lines() if not ln.get_label().startswith("_")]) == 2


def test_no_empty_figure_is_written(tmp_path: Path) -> None:
    write(tmp_path, "normal-only", mode="normal", distance=1, seed=1)
    data = read_runs(tmp_path)
    figs = plots.all_figures(data, tmp_path / "figs", workers=1)
    assert "load-cdf" not in figs and "slack" not in figs and "missed-phase" not in figs
    assert {"cdf", "histogram", "compare", "timeline-normal-only"} <= set(figs)


def test_captions_say_what_each_figure_shows(tmp_path: Path) -> None:
    write(tmp_path, "mixed-idle", seed=1)
    write(tmp_path, "mixed-heavy", load="heavy", seed=2)
    paths = report(read_runs(tmp_path), tmp_path / "rep")
    page = paths["html"].read_text()
    caps = re.findall(r"<figcaption>(.*?)</figcaption>", page)
    figures = sorted(p.stem for p in (tmp_path / "rep" / "figures").glob("*.png"))
    assert len(caps) == len(figures) >= 6
    for cap in caps:
        assert len(cap.split()) >= 8 and cap.endswith(".") and cap not in figures   # a sentence, not a name
    md = paths["md"].read_text()
    for name in figures:
        assert f"![{plots.caption(name)}](figures/{name}.png)" in md
        assert plots.caption(name) in md


def test_html_run_table_fits_the_page(tmp_path: Path) -> None:
    write(tmp_path, "exp3b-mixed-1ahead-free-heavy-long-name", distance=1, load="heavy", generation="free")
    paths = report(read_runs(tmp_path), tmp_path / "rep", figures=False)
    page = paths["html"].read_text()
    assert f"max-width:{PAGE_WIDTH_PX}px" in page and PAGE_WIDTH_PX <= 1280 - 40
    assert ".wide{max-width:100%;overflow-x:auto}" in page
    tables = re.findall(r"<div class='wide'><table>.*?</table></div>", page, flags=re.S)
    assert len(tables) == page.count("<table>")            # every table in a box that cannot widen the page
    runs = next(t for t in tables if "ok / late / early / missed / lost" in t)
    heads = re.findall(r"<th>(.*?)</th>", runs)
    assert len(heads) == len(RUN_HTML_HEADERS)
    # by construction: at 12 px sans-serif a character is at most ~7.5 px; a heading wraps at its longest
    # word, a cell does not wrap; 8 px of padding and border a column. Well under the page.
    cells = [re.findall(r"<td>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", runs.split("<tbody>")[1])]
    widths = []
    for i, h in enumerate(heads):
        longest_word = max(len(w) for w in h.split())
        longest_cell = max(len(r[i]) if i else min(len(r[i]), 16) for r in cells)   # the run's name wraps at 16em
        widths.append(7.5 * max(longest_word, longest_cell) + 8)
    assert sum(widths) <= PAGE_WIDTH_PX, f"run table about {sum(widths):.0f} px"
    assert {RUN_HTML_LABELS.get(h, h) for h in RUN_HTML_HEADERS} == set(heads)


def traced_run(folder: Path) -> Path:
    """A synthetic run with the hand-made executor trace beside it, as `mmrig run --trace` leaves one: the
    sidecar's executor_profile naming the .exectrace file."""
    csv = write(folder, "traced", seed=1)
    shutil.copy(TRACE, folder / "traced.exectrace")
    meta = json.loads(csv.with_suffix(".json").read_text())
    prof = exectrace.profile(exectrace.read(folder / "traced.exectrace"))
    meta["executor_profile"] = json.loads(json.dumps(dict(prof, files={"exectrace": "traced.exectrace"})))
    csv.with_suffix(".json").write_text(json.dumps(meta))
    return csv


def test_gantt_has_one_bar_row_per_task_and_interrupt(tmp_path: Path) -> None:
    tr = exectrace.read(TRACE)
    expected = {f"{s.kind} {s.name}" for s in exectrace.timeline(tr) if s.kind in ("isr", "task")}
    assert expected == {"isr PCINT2", "isr TIMER0_COMPA", "task tc", "task idle"}
    fig = ganttplot.gantt(tr, "handmade")
    overview, zoom = fig.axes[:2]
    rows = {c.get_gid()[4:] for c in overview.collections if (c.get_gid() or "").startswith("row:")}
    assert rows == expected
    assert [t.get_text() for t in overview.get_yticklabels()] == [ganttplot.PINS, "isr PCINT2", "isr TIMER0_COMPA",
                                                                 "task tc", "task idle"]
    # the zoom is on the longest dispatch: the timecode edge at cycle 1600 (0.1 ms), its event edge at 1790
    lo, hi = zoom.get_xlim()
    assert lo <= 0.1 < 1790 / 16000 <= hi and hi - lo < 0.5
    assert "11.88 us" in zoom.get_title() or "11.87 us" in zoom.get_title()


def test_report_draws_the_gantt_of_a_traced_run(tmp_path: Path) -> None:
    traced_run(tmp_path)
    write(tmp_path, "untraced", seed=2)
    paths = report(read_runs(tmp_path), tmp_path / "rep")
    figures = tmp_path / "rep" / "figures"
    assert (figures / "gantt-traced.png").stat().st_size > 5000 and (figures / "gantt-traced.svg").is_file()
    assert not list(figures.glob("gantt-untraced*"))
    assert plots.caption("gantt-traced") in paths["html"].read_text()


def test_report_options_for_the_histogram(tmp_path: Path) -> None:
    import argparse

    from mmanalysis.cli import add_report_parser

    parser = argparse.ArgumentParser()
    add_report_parser(parser.add_subparsers())
    args = parser.parse_args(["report", "x", "--bin-us", "2.5", "--hist-max-us", "300"])
    assert (args.bin_us, args.hist_max_us) == (2.5, 300.0)
    with pytest.raises(SystemExit):
        parser.parse_args(["report", "x", "--bin-us", "0"])


def test_a_figure_file_name_is_its_prefix_and_the_name_made_safe_and_its_caption_reads_it_back() -> None:
    stem = plots.figure_stem(plots.TIMELINE_PREFIX, "../run 1")
    assert stem == "timeline-.._run_1" and "/" not in stem
    assert plots.caption(stem).startswith("Latency over time of run .._run_1:")
    on_time = plots.figure_stem(plots.ON_TIME_PREFIX, "camp")
    assert on_time == "on-time-camp" and plots.caption(on_time) == "On-time share against distance, campaign camp."


def test_runs_whose_ranges_are_ten_times_apart_get_a_panel_each(tmp_path: Path) -> None:
    """Three runs at the bench's constant 1.375 us and one that reached 1,273 us: on one 0-1000 us axis the three
    filled its first pixel. Apart, each panel's axis fits its own runs."""
    for i, name in enumerate(("isr-a", "isr-b", "isr-c", "slow")):
        rows = synth.synthetic_events("mixed", 2, False, 60, seed=i)
        meas = rows["outcome"].isin(["ok", "late"])
        if name == "slow":
            lat = np.linspace(120.0, 1273.0, int(meas.sum()))
            rows.loc[meas, "latency_us"] = lat
            rows.loc[meas, "outcome"] = np.where(lat >= 1000, "late", "ok")
            rows.loc[meas, "reason"] = np.where(lat >= 1000, "late", None)
        else:
            rows.loc[meas, "latency_us"] = 1.375
        rows["latency_counts"] = (rows["latency_us"] * synth.TIMER_HZ / 1e6).round().astype("Int64")
        synth.write_run(tmp_path / name, rows, synth.sidecar(name, rows))
    data = read_runs(tmp_path)
    panels = plots.histogram_panels(data)
    assert [sorted(members) for _, members in panels] == [["isr-a", "isr-b", "isr-c"], ["slow"]]
    fig = plots.histogram(data)
    assert len(fig.axes) == 2
    fast, slow = fig.axes
    assert set(run_stairs(fast)) == {"isr-a", "isr-b", "isr-c"} and set(run_stairs(slow)) == {"slow"}
    assert fast.get_xlim()[1] <= 10              # 1.375 us is a third of the axis, not its first pixel
    assert slow.get_xlim()[1] >= 1000
    assert "runs up to 1.375 us" in fast.get_title() and "runs up to 1273 us" in slow.get_title()
    fig.canvas.draw()
    for ax in fig.axes:                         # counts as plain numbers, more than the one decade mark
        labels = [t.get_text() for t in ax.get_yticklabels(which="both") if t.get_text()]
        assert len(labels) >= 2 and all(lb.replace(".", "").isdigit() for lb in labels), labels
    two = plots.histogram(read_runs([tmp_path / "isr-a.csv", tmp_path / "isr-b.csv"]))
    assert len(two.axes) == 1 and "runs up to" not in two.axes[0].get_title()   # alike: one panel
