"""The report's worst case over time and long-term histogram (mmanalysis.worstcase): the steps are the sidecar's
maxima (or the CSV's, for a run written before them), a run's phases shaded by their times, a run of one interval
said on the figure, and every measured latency in 1 us bins on a log count axis; both drawn among the report's
figures, as PNG files of a sane size."""

from __future__ import annotations

from pathlib import Path

import matplotlib.image as mpimg
import numpy as np
import pytest
from matplotlib.patches import StepPatch

from mmanalysis import measured, plots, read_runs, synth, worstcase
from mmanalysis.maxima import maxima_of_rows
from mmanalysis.report import report


def write(folder: Path, name: str, count: int = 400, seed: int = 1, mode: str = "mixed",
          maxima_every_s: float | None = None, phases: list[dict] | None = None) -> Path:
    rows = synth.synthetic_events(mode, 2 if mode == "mixed" else 1, False, count, seed=seed)
    meta = synth.sidecar(name, rows)
    tb = meta["timebase"]
    if maxima_every_s is not None:     # as the scheduler writes it: on the run's clock, its first tick at 0.2 s
        meta["maxima"] = maxima_of_rows(rows.itertuples(), maxima_every_s, tb["tick_counts"] / tb["timer_hz"],
                                        tb["timer_hz"], t0_run_s=0.2)
    if phases is not None:
        meta["phases"] = phases
    return synth.write_run(folder / name, rows, meta)[0]


def steps(ax, run: str) -> list:
    return [a for a in ax.get_children() if a.get_gid() == f"run:{run}" and isinstance(a, StepPatch)]


def test_the_steps_are_the_sidecars_maxima_and_the_phases_are_shaded(tmp_path: Path) -> None:
    phases = [{"name": "idle", "start_s": 0.0, "end_s": 10.0}, {"name": "load=cpu", "start_s": 10.0, "end_s": 28.6}]
    write(tmp_path, "long", maxima_every_s=2.0, phases=phases)     # 400 ticks: 28.4 s, 15 intervals
    data = read_runs(tmp_path)
    m = data.meta["long"]["maxima"]
    ax = worstcase.worst_over_time(data, "long").axes[0]
    top, p99 = steps(ax, "long")
    assert np.allclose(np.nan_to_num(top.get_data().values, nan=-1),
                       [-1 if i["max_us"] is None else i["max_us"] for i in m["intervals"]])
    assert np.allclose(np.nan_to_num(p99.get_data().values, nan=-1),
                       [-1 if i["p99_us"] is None else i["p99_us"] for i in m["intervals"]])
    assert np.allclose(top.get_data().edges, [0.0] + [i["end_s"] for i in m["intervals"]])
    assert len(m["intervals"]) == 15 and ax.get_xlim()[1] == pytest.approx(30.0)
    assert max(ax.get_ylim()) >= max(i["max_us"] for i in m["intervals"] if i["count"])
    bands = {a.get_gid(): a for a in ax.patches if (a.get_gid() or "").startswith("phase:")}
    assert set(bands) == {"phase:idle", "phase:load=cpu"}
    cpu = bands["phase:load=cpu"]
    assert (cpu.get_x(), cpu.get_x() + cpu.get_width()) == pytest.approx((10.0, 28.6))
    assert not [t for t in ax.texts if t.get_gid() == "note:one-interval"]
    assert "time since generation started" in ax.get_xlabel() and "intervals of 2 s" in ax.get_xlabel()


def test_a_run_written_before_the_maxima_gets_them_from_its_csv_and_one_interval_is_said(tmp_path: Path) -> None:
    write(tmp_path, "short", count=100)
    data = read_runs(tmp_path)
    assert "maxima" not in data.meta["short"]
    m = worstcase.run_maxima(data, "short")
    assert m["clock"] == "first tick" and m["every_s"] == 300.0 and len(m["intervals"]) == 1
    assert m["intervals"][0]["max_us"] == round(float(measured(data.df)["latency_us"].max()), 3)
    ax = worstcase.worst_over_time(data, "short").axes[0]
    (note,) = [t for t in ax.texts if t.get_gid() == "note:one-interval"]
    assert "one interval" in note.get_text() and "5 min" in note.get_text()
    assert "time since the first scheduled tick" in ax.get_xlabel()


@pytest.mark.parametrize("mode", ["mixed", "normal"])
def test_the_long_term_histogram_has_1_us_bins_to_the_maximum_on_log_counts(tmp_path: Path, mode: str) -> None:
    write(tmp_path, "r", mode=mode)
    data = read_runs(tmp_path)
    values = measured(data.df)["latency_us"].to_numpy()
    ax = worstcase.long_term_histogram(data, "r").axes[0]
    (st,) = steps(ax, "r")
    edges, counts = st.get_data().edges, st.get_data().values
    assert np.allclose(np.diff(edges), 1.0) and edges[0] == 0 and edges[-1] > values.max() >= edges[-2]
    assert counts[counts >= 1].sum() == len(values)        # (empty bins drawn at 0.8, under the first decade)
    assert ax.get_yscale() == "log"


def test_the_report_draws_both_for_every_run_with_measured_events(tmp_path: Path) -> None:
    write(tmp_path, "one", maxima_every_s=5.0)
    write(tmp_path, "two", seed=2)
    paths = report(read_runs(tmp_path), tmp_path / "rep")
    figs = tmp_path / "rep" / "figures"
    for run in ("one", "two"):
        for prefix in (plots.WORST_PREFIX, plots.LONG_TERM_PREFIX):
            png = figs / f"{plots.figure_stem(prefix, run)}.png"
            height, width = mpimg.imread(png).shape[:2]
            assert 800 <= width <= 1400 and 300 <= height <= 500, (png.name, width, height)
    md = paths["md"].read_text()
    assert "The worst case over time of run one" in md and "Long-term latency histogram of run two" in md


def write_counted(folder: Path, name: str) -> None:
    """A run on the profiler's histogram alone (mmrig run --no-raw): no event rows; its summary, its 1 us cells
    and its maxima from the profiler's reports in the sidecar, as the scheduler writes them (profslices.py)."""
    rows = synth.synthetic_events("mixed", 2, False, 10, seed=3)
    meta = synth.sidecar(name, rows)
    counts = [0] * 1000
    counts[14], counts[15], counts[40] = 500, 300, 2
    meta["summary"] = {**meta["summary"], "n": 803, "max_us": 1200.5,
                       "from_profiler_histogram": {"cell_us": 1.0, "percentiles": "upper edge of the cell"}}
    meta["histogram"] = {"bin_us": 1.0, "bins": 1000, "range_us": 1000.0, "n": 803, "counts": counts,
                         "overflow": 1, "underflow": 0, "worst": None}
    meta["maxima"] = {"clock": "run", "first_tc": None, "t0_run_s": None, "run_tick_s": None,
                      "from": "profiler reports", "every_s": 5.0, "n": 803, "intervals": [
                          {"start_s": 0.0, "end_s": 5.0, "count": 500, "max_us": 16.0, "p99_us": 16.0,
                           "max_event": None, "max_exact": False, "counted_from_s": 0.0, "counted_to_s": 5.02},
                          {"start_s": 5.0, "end_s": 10.0, "count": 303, "max_us": 1200.5, "p99_us": 41.0,
                           "max_event": 777, "max_exact": True, "counted_from_s": 5.02, "counted_to_s": 9.4}]}
    synth.write_run(folder / name, rows.iloc[0:0], meta)


def test_a_run_on_the_profilers_histogram_alone_gets_both_from_its_sidecar(tmp_path: Path) -> None:
    write_counted(tmp_path, "h")
    data = read_runs(tmp_path)
    ax = worstcase.worst_over_time(data, "h").axes[0]
    top, _p99 = steps(ax, "h")
    assert list(top.get_data().values) == [16.0, 1200.5] and "between its reports" in ax.get_title()
    ax = worstcase.long_term_histogram(data, "h").axes[0]
    (st,) = steps(ax, "h")
    counts = st.get_data().values
    assert len(counts) == 41 and counts[14] == 500 and counts[40] == 2      # the cells up to the highest one held
    assert "n=803" in ax.get_title() and any("1 past 1,000 us" in t.get_text() or "1 past 1000 us" in t.get_text()
                                             for t in ax.texts)
    report(data, tmp_path / "rep")
    for prefix in (plots.WORST_PREFIX, plots.LONG_TERM_PREFIX):
        assert (tmp_path / "rep" / "figures" / f"{plots.figure_stem(prefix, 'h')}.png").exists()
