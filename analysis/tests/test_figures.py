"""Every figure of mmanalysis.plots, rendered from real bench runs (`mmrig run --unpaced`: the bench's
constant 1.375 us latencies, missed events of a free-running 1-tick-ahead run) and from the synthetic
experiments (normal mode's milliseconds beside mixed mode's microseconds), checked for what a reader needs:

- the latency axis covers the data it draws (and the paper's reference lines) and is not 100x wider than
  that; a range of equal values is drawn on a narrow axis around the value;
- no two text boxes overlap: annotations, tick labels, legends of one axes; annotations stay inside their axes;
- one colour per run, none shared between runs (artists of a run carry gid "run:NAME").
"""

from __future__ import annotations

import subprocess
import sys
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_hex
from matplotlib.text import Text

from mmanalysis import measured, plots, read_runs
from mmanalysis.propagation import propagation_ms


@pytest.fixture(scope="module")
def bench_dir(tmp_path_factory) -> Path:
    from mmhil.bench import ensure_built

    ensure_built()
    out = tmp_path_factory.mktemp("bench-figs")
    for name, args in (("verification", ["--mode", "verification", "--distance", "1"]),
                       ("mixed-1ahead-free", ["--mode", "mixed", "--distance", "1", "--generation", "free",
                                              "--rate", "97"]),
                       ("mixed-2ahead", ["--mode", "mixed", "--distance", "2"])):
        r = subprocess.run([sys.executable, "-m", "mmrig", "run", *args, "--count", "30", "--unpaced",
                            "--out", str(out / name)], capture_output=True, text=True, timeout=180)
        assert r.returncode == 0, f"mmrig run {name} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    return out


@pytest.fixture(params=["bench", "synthetic"])
def data(request, experiments_dir):
    d = request.getfixturevalue("bench_dir") if request.param == "bench" else experiments_dir
    return read_runs(d)


def latencies(data, runs) -> np.ndarray:
    df = measured(data.df)
    return df.loc[df["run"].isin(runs), "latency_us"].to_numpy(dtype=float)


def refs(fig, axis: str) -> list[float]:
    """Values of the reference artists (gid ref:...) along AXIS."""
    out = []
    for ax in fig.axes:
        for line in ax.lines:
            if (line.get_gid() or "").startswith("ref:"):
                out += list(np.asarray(line.get_xdata() if axis == "x" else line.get_ydata(), dtype=float))
    return out


def check_axis(ax, axis: str, values) -> None:
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    assert len(v), "nothing drawn"
    lo, hi = (ax.get_xlim() if axis == "x" else ax.get_ylim())
    vmin, vmax = float(v.min()), float(v.max())
    assert lo <= vmin and hi >= vmax, f"axis {lo}..{hi} does not cover the data {vmin}..{vmax}"
    scale = ax.get_xscale() if axis == "x" else ax.get_yscale()
    if scale == "log":
        assert hi / lo <= 100 * (vmax / vmin), f"log axis {lo}..{hi} for data {vmin}..{vmax}"
        assert vmax / vmin >= 10, f"a log axis for data within one decade ({vmin}..{vmax})"
    elif vmax > vmin:
        assert hi - lo <= 100 * (vmax - vmin), f"axis {lo}..{hi} for data {vmin}..{vmax}"
    else:                                      # equal values: a narrow axis around them, not a decade or 0..x
        assert hi - lo <= 0.25 * abs(vmin) + 0.05, f"axis {lo}..{hi} for the one value {vmin}"


def text_boxes(fig, ax) -> list[tuple[str, object]]:
    boxes = []
    r = fig.canvas.get_renderer()
    for t in ax.texts:            # an annotation's own box, without its leader line (Text's, not Annotation's)
        if t.get_visible() and t.get_text():
            boxes.append((f"text {t.get_text()!r}", Text.get_window_extent(t, r)))
    for which, labels, lim, i in (("x", ax.get_xticklabels(), ax.get_xlim(), 0), ("y", ax.get_yticklabels(), ax.get_ylim(), 1)):
        lo, hi = min(lim), max(lim)
        for t in labels:                       # the labels drawn: of ticks inside the axis' range
            if t.get_visible() and t.get_text() and lo <= t.get_position()[i] <= hi:
                boxes.append((f"{which} tick {t.get_text()!r}", t.get_window_extent(r)))
    leg = ax.get_legend()
    if leg is not None:
        boxes.append(("legend", leg.get_window_extent(r)))
    return boxes


def check_no_overlap(fig) -> None:
    FigureCanvasAgg(fig)
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    for ax in fig.axes:
        frame = ax.get_window_extent(r).expanded(1.0, 1.0).padded(2)
        for t in ax.texts:                     # a label stays inside its axes (not over the tick labels)
            if t.get_visible() and t.get_text():
                b = Text.get_window_extent(t, r)
                assert frame.x0 <= b.x0 and b.x1 <= frame.x1 and frame.y0 <= b.y0 and b.y1 <= frame.y1, \
                    f"text {t.get_text()!r} leaves its axes {ax.get_title()!r}"
        boxes = text_boxes(fig, ax)
        for (na, a), (nb, b) in combinations(boxes, 2):
            a2, b2 = a.shrunk(0.98, 0.9), b.shrunk(0.98, 0.9)      # touching is not overlapping
            assert not a2.overlaps(b2), f"{na} overlaps {nb} in {ax.get_title()!r}"


def check_run_colours(fig) -> None:
    colours: dict[str, set[str]] = {}
    for ax in fig.axes:
        for art in [*ax.lines, *ax.patches]:
            gid = art.get_gid() or ""
            if gid.startswith("run:"):
                c = art.get_color() if hasattr(art, "get_color") else art.get_edgecolor()
                colours.setdefault(gid[4:], set()).add(to_hex(c, keep_alpha=False))
    for run, cs in colours.items():
        assert len(cs) == 1, f"{run} drawn in {cs}"
    flat = [next(iter(cs)) for cs in colours.values()]
    assert len(set(flat)) == len(flat), f"runs share a colour: {colours}"


def test_cdf(data):
    runs = plots._runs(data, None)
    fig = plots.cdf(data, runs)
    check_no_overlap(fig)
    check_run_colours(fig)
    check_axis(fig.axes[0], "x", [*latencies(data, runs), *refs(fig, "x")])


def test_histogram(data):
    """One panel per kind of latency (the executor's, the PC's); each panel's axis runs from 0 over its fixed
    bins to the overflow bin, and the data up to the limit is inside it."""
    runs = plots._runs(data, None)
    fig = plots.histogram(data, runs)
    check_no_overlap(fig)
    check_run_colours(fig)
    families = {plots._family(data, r) for r in runs if len(latencies(data, [r]))}
    panels = plots.histogram_panels(data, runs)
    assert len(fig.axes) == len(panels) >= len(families)      # a kind of latency each, more where ranges differ
    assert {plots._family(data, r) for _, members in panels for r in members} == families
    for _, members in panels:                                 # a panel's runs: ranges within 10x of one another
        tops = [np.percentile(latencies(data, [r]), plots.HIST_QUANTILE) for r in members]
        assert max(tops) <= plots.PANEL_RANGE_RATIO * min(tops)
    for ax in fig.axes:
        members = [r for r in runs if any(a.get_gid() == f"run:{r}" for a in ax.patches)]
        lat = latencies(data, members)
        over = [a for a in ax.patches if (a.get_gid() or "").startswith("overflow:")]
        limit = min(a.get_data().edges[0] for a in over)          # the overflow bin starts past the limit
        lo, hi = ax.get_xlim()
        assert lo == 0 and hi > limit and lat[lat < limit].max() <= hi


def test_compare(data):
    runs = plots._runs(data, None)
    fig = plots.compare(data, runs)
    check_no_overlap(fig)
    check_run_colours(fig)
    check_axis(fig.axes[0], "y", [*latencies(data, runs), *refs(fig, "y")])
    assert len(fig.axes) == 1 and fig.get_size_inches()[0] <= 1.6 * len(runs) + 2


def test_load_cdf(data):
    """Each panel (one experiment under two load conditions or more) on an axis fitted to its own data."""
    fig = plots.load_cdf(data)
    check_no_overlap(fig)
    panels = {k: v for k, v in plots.load_cdf_panels(data).items() if len(v) >= 2}
    if not panels:                               # nothing compares loads (all_figures leaves the figure out)
        assert len(fig.axes) == 1 and fig.axes[0].texts
        return
    assert len(fig.axes) == len(panels)
    for ax, conds in zip(fig.axes, panels.values()):
        check_axis(ax, "x", np.concatenate(list(conds.values())))


def test_timelines(data):
    for run in plots._runs(data, None):
        fig = plots.timeline(data, run)
        check_no_overlap(fig)
        lat = latencies(data, [run])
        if len(lat):
            check_axis(fig.axes[0], "y", [*lat, *refs(fig, "y")])


def test_slack_and_missed_phase(data):
    runs = plots._mixed_runs(data, None)
    assert runs
    fig = plots.slack(data)
    check_no_overlap(fig)
    check_run_colours(fig)
    prop = np.concatenate([propagation_ms(data.df[data.df["run"] == r], plots._tick_s(data, r)) for r in runs])
    check_axis(fig.axes[0], "x", prop)
    missed = int((data.df.loc[data.df["run"].isin(runs), "outcome"] == "missed").sum())
    crosses = sum(len(line.get_xdata()) for line in fig.axes[1].lines
                  if line.get_marker() == plots.OUTCOME_MARKERS["missed"] and (line.get_gid() or "").startswith("run:"))
    assert crosses >= missed > 0              # every missed event is drawn (both data sets have some)
    fig = plots.missed_phase(data)
    check_no_overlap(fig)
    bars = sum(p.get_height() for ax in fig.axes for p in ax.patches if to_hex(p.get_facecolor()) == to_hex("tab:red"))
    assert bars == missed


def test_colours_stay_unique_past_ten_runs(experiments_dir, tmp_path):
    import shutil

    for i in range(3):     # 15 runs: tab10 would repeat
        for p in experiments_dir.glob("*"):
            shutil.copy(p, tmp_path / f"{p.stem}-{i}{p.suffix}")
    many = read_runs(tmp_path)
    assert len(many.runs) == 15
    colours = plots.run_colors(many)
    assert len({to_hex(c) for c in colours.values()}) == 15


def drawn_texts(fig) -> list[tuple[str, object]]:
    """Every text the figure draws (titles, labels, tick labels, annotations, legend entries), each with its
    window extent, and every legend's frame: caught as the Agg renderer draws them, so only what is drawn."""
    FigureCanvasAgg(fig)
    renderer = fig.canvas.get_renderer()
    seen: list[Text] = []
    draw_text = renderer.draw_text

    def record(gc, x, y, s, prop, angle, ismath=False, mtext=None):
        if mtext is not None and s.strip():
            seen.append(mtext)
        return draw_text(gc, x, y, s, prop, angle, ismath=ismath, mtext=mtext)

    renderer.draw_text = record
    try:
        fig.draw(renderer)
    finally:
        renderer.draw_text = draw_text
    boxes = [(f"text {t.get_text()!r}", Text.get_window_extent(t, renderer)) for t in seen]
    legends = [lg for lg in [*(ax.get_legend() for ax in fig.axes), *fig.legends] if lg is not None]
    return boxes + [(f"legend {i}", lg.get_window_extent(renderer)) for i, lg in enumerate(legends)]


def check_inside_canvas(fig, name: str) -> None:
    boxes = drawn_texts(fig)
    assert any(what.startswith("text") for what, _ in boxes), f"{name}: no text drawn"
    page = fig.bbox
    for what, b in boxes:
        assert page.x0 - 0.5 <= b.x0 and b.x1 <= page.x1 + 0.5 and page.y0 - 0.5 <= b.y0 and b.y1 <= page.y1 + 0.5, \
            f"{name}: {what} at {b.extents} leaves the figure's canvas {page.extents}"


def every_figure(data):
    """(name, figure) for every figure the report draws from DATA."""
    runs = plots._runs(data, None)
    yield "cdf", plots.cdf(data, runs)
    yield "histogram", plots.histogram(data, runs)
    yield "compare", plots.compare(data, runs)
    yield "load-cdf", plots.load_cdf(data, runs)
    if plots._mixed_runs(data, runs):
        yield "slack", plots.slack(data, runs)
        yield "missed-phase", plots.missed_phase(data, runs)
    for run in runs:
        yield f"timeline-{run}", plots.timeline(data, run)


def test_every_text_and_legend_lies_inside_the_figure(data):
    """The legends beside their axes and every label are inside the figure's own canvas (Agg), so nothing is cut
    at the PNG's edge: the CDF's legend lost the end of its widest entry there."""
    for name, fig in every_figure(data):
        check_inside_canvas(fig, name)


def test_the_png_is_the_whole_canvas(experiments_dir, tmp_path):
    from PIL import Image

    data = read_runs(experiments_dir)
    fig = plots.cdf(data)
    (png,) = plots.save(fig, tmp_path, "cdf", ("png",))
    w, h = Image.open(png).size
    assert abs(w - fig.bbox.width) <= 1 and abs(h - fig.bbox.height) <= 1       # (savefig rounds down)
    check_inside_canvas(fig, "cdf as saved")


def test_the_gantt_chart_keeps_its_legend_inside(tmp_path):
    from mmanalysis import exectrace, ganttplot

    tr = exectrace.read(Path(__file__).parent / "data" / "handmade.exectrace")
    check_inside_canvas(ganttplot.gantt(tr, "handmade"), "gantt")


def test_slack_marks_each_outcome_in_a_shape_and_colour_of_its_own(data):
    """The slack panel's markers: one shape and one colour per outcome (never two outcomes alike in either),
    the run in the marker's outline; the legend's outcome entries show the same markers."""
    markers, colours = plots.OUTCOME_MARKERS, plots.COLORS
    assert len(set(markers.values())) == len(markers) and len({to_hex(colours[o]) for o in markers}) == len(markers)
    fig = plots.slack(data)
    ax = fig.axes[1]
    runs = plots._mixed_runs(data, None)
    drawn: dict[str, int] = {}
    for line in ax.lines:
        gid = line.get_gid() or ""
        if not gid.startswith("run:") or not len(line.get_xdata()):
            continue
        run = gid[4:]
        (outcome,) = [o for o in markers if line.get_marker() == markers[o]]
        assert to_hex(line.get_markerfacecolor()) == to_hex(colours[outcome]), (run, outcome)
        assert to_hex(line.get_markeredgecolor()) == to_hex(plots.run_colors(data)[run]), (run, outcome)
        drawn[outcome] = drawn.get(outcome, 0) + len(line.get_xdata())
    df = data.df[data.df["run"].isin(runs)]
    want = {o: int(((df["outcome"] == o) & (df["slack_ticks"].notna() | df["outcome"].isin(["missed", "lost"]))).sum())
            for o in markers}
    assert drawn == {o: k for o, k in want.items() if k}
    assert {"ok", "missed"} <= set(drawn)                 # both data sets have both
    entries = {(line.get_gid() or "")[8:]: line for line in ax.lines if (line.get_gid() or "").startswith("outcome:")}
    assert set(entries) == set(drawn)
    for o, line in entries.items():
        assert line.get_marker() == markers[o] and to_hex(line.get_markerfacecolor()) == to_hex(colours[o])
        assert any(label.startswith(o) for label in ax.get_legend_handles_labels()[1])


def test_timelines_mark_each_outcome_as_the_slack_figure_does(data):
    """ok and late were both dots, missed and lost both down-triangles: each outcome's marker is its own."""
    for run in plots._runs(data, None):
        seen = set()
        for line in plots.timeline(data, run).axes[0].lines:
            outcome = line.get_label().split(" (")[0]         # "late (3)"; not "late bound (1000 us)"
            if outcome in plots.OUTCOME_MARKERS:
                assert line.get_marker() == plots.OUTCOME_MARKERS[outcome], (run, outcome)
                assert to_hex(line.get_color()) == to_hex(plots.COLORS[outcome]), (run, outcome)
                seen.add(outcome)
        assert "ok" in seen, run
