"""Named PC load conditions in the analysis: old sidecars (config.load a bool) read as all / idle,
groups by the condition's name, and the per-condition latency CDF (in the form of Liu et al., "Implementing
Hybrid Operating Systems with Two-Level Hardware Interrupts")."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from mmanalysis import plots, read_runs, synth
from mmanalysis.report import comparison, report
from mmanalysis.schema import LOAD_CONDITIONS, load_condition
from mmanalysis.stats import summarize


def write(out: Path, name: str, mode: str, distance: int, load, loaded_model: bool, seed: int) -> None:
    rows = synth.synthetic_events(mode, distance, loaded_model, 120, seed)
    meta = synth.sidecar(name, rows, load=loaded_model)
    meta["config"]["load"] = load                      # a name (this version) or a bool (the older sidecars)
    synth.write_run(out / name, rows, meta)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("loads")
    for i, cond in enumerate(LOAD_CONDITIONS):
        write(d, f"normal-{cond}", "normal", 1, cond, cond != "idle", 10 + i)
    for i, cond in enumerate(("idle", "cpu", "heavy")):
        write(d, f"mixed-{cond}", "mixed", 2, cond, cond != "idle", 20 + i)
    write(d, "mixed-old-true", "mixed", 2, True, True, 30)       # before named loads: a bool
    write(d, "mixed-old-false", "mixed", 2, False, False, 31)
    return d


def test_load_condition_of_a_sidecar() -> None:
    assert [load_condition(v) for v in (True, False, None, "cpu", "later")] == ["heavy", "idle", "idle", "cpu", "later"]


def test_old_sidecars_read_as_heavy_and_idle(runs) -> None:
    data = read_runs(runs)
    by_run = data.df.groupby("run", observed=True)["load"].first().astype(str)
    assert by_run["mixed-old-true"] == "heavy" and by_run["mixed-old-false"] == "idle"   # what the switch ran
    assert list(data.df["load"].cat.categories) == list(LOAD_CONDITIONS)
    per_run = summarize(data).set_index("run")
    assert per_run.loc["mixed-old-true", "load"] == "heavy" and per_run.loc["normal-disk", "load"] == "disk"


def test_groups_by_condition_name(runs) -> None:
    g = summarize(read_runs(runs), by="group")
    keys = [(m, d, str(c)) for m, d, c in zip(g["mode"], g["distance"], g["load"])]
    assert keys == [("mixed", 2, "idle"), ("mixed", 2, "cpu"), ("mixed", 2, "heavy"),
                    *[("normal", 1, c) for c in LOAD_CONDITIONS]]
    mixed_heavy = g[(g["mode"] == "mixed") & (g["load"] == "heavy")].iloc[0]
    assert mixed_heavy["events"] == 240                # the run named heavy and the old true one, pooled


def test_paper_rows_match_by_condition(runs) -> None:
    comp = comparison(read_runs(runs)).set_index("section")
    loaded = comp.loc["7.5"]
    assert set(loaded["runs"].split(", ")) == {"mixed-heavy", "mixed-old-true"}   # the paper's heavy load
    idle2 = comp[comp["experiment"] == "mixed, 2 ticks ahead"].iloc[0]
    assert set(idle2["runs"].split(", ")) == {"mixed-idle", "mixed-old-false"}


def test_load_cdf_one_line_per_condition_labels_apart(runs, tmp_path) -> None:
    data = read_runs(runs)
    groups = plots.load_cdf_panels(data)
    normal, mixed = ("normal", 1, "", ""), ("mixed", 2, "aligned", "")
    assert list(groups) == [normal, mixed]
    assert list(groups[normal]) == list(LOAD_CONDITIONS) and list(groups[mixed]) == ["idle", "cpu", "heavy"]
    for conds in groups.values():
        for lat in conds.values():
            assert np.all(np.diff(lat) >= 0) and lat[0] > 0
    fig = plots.load_cdf(data)
    paths = plots.save(fig, tmp_path, "load-cdf")
    assert all(p.stat().st_size > 0 for p in paths)
    axes = fig.get_axes()
    assert len(axes) == 2 and all(ax.get_xscale() == "log" for ax in axes)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    for ax, conds in zip(axes, groups.values()):
        lines = [ln for ln in ax.get_lines() if ln.get_label() and not ln.get_label().startswith("_")]
        assert [ln.get_label().split(" ")[0] for ln in lines] == list(conds)        # one line per condition
        labels = [t for t in ax.texts if t.get_text().startswith(("min ", "max "))]
        assert len(labels) == 2 * len(conds)
        for cond, lat in conds.items():
            texts = {t.get_text() for t in labels}
            assert f"min {plots.us_text(lat[0])} us" in texts and f"max {plots.us_text(lat[-1])} us" in texts
        from matplotlib.text import Text
        boxes = [Text.get_window_extent(t, renderer) for t in labels]     # the text, not its leader line
        assert all(b.height > 5 for b in boxes)
        for a, b in itertools.combinations(boxes, 2):
            assert not a.overlaps(b), "two min/max labels overlap"


@pytest.mark.long    # a whole report of the load runs, every figure: 15-18 s
def test_report_lists_the_load_cdf(runs, tmp_path) -> None:
    out = report(runs, tmp_path / "rep")
    md = out["md"].read_text()
    assert "figures/load-cdf.png" in md and (tmp_path / "rep" / "figures" / "load-cdf.png").stat().st_size > 0
    groups = (tmp_path / "rep" / "summary-groups.csv").read_text()
    assert ",network," in groups and ",True," not in groups
    assert json.loads((runs / "mixed-old-true.json").read_text())["config"]["load"] is True   # left as it was
