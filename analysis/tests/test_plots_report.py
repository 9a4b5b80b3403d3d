from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mma_helpers import edit_line  # noqa: E402

from mmanalysis import read_runs, plots, synth
from mmanalysis.cli import add_report_parser
from mmanalysis.report import PAPER, comparison, report


@pytest.fixture(scope="module")
def data(experiments_dir):
    return read_runs(experiments_dir)


@pytest.mark.parametrize("name", ["timeline", "histogram", "cdf", "compare", "slack", "missed_phase"])
def test_each_plot_writes_png_and_svg(data, tmp_path, name):
    fig = plots.timeline(data, "mixed-1ahead") if name == "timeline" else getattr(plots, name)(data)
    png, svg = plots.save(fig, tmp_path, name)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
    assert "<svg" in svg.read_text()[:2000] and svg.stat().st_size > 5000


def test_cdf_marks_min_and_max(data):
    fig = plots.cdf(data, ["mixed-2ahead"])
    texts = [t.get_text() for t in fig.axes[0].texts]
    lat = data.df.query("run == 'mixed-2ahead' and outcome in ['ok', 'late'] and measurable")["latency_us"]
    assert f"min {plots.us_text(lat.min())} us" in texts and f"max {plots.us_text(lat.max())} us" in texts
    # the synthetic mixed run spans 17..~400 us with the paper's 43 us line: over a decade, so a log axis
    assert fig.axes[0].get_xscale() == ("log" if lat.max() / lat.min() >= 20 else "linear")


def test_slack_plot_without_mixed_runs(experiments_dir, tmp_path):
    fig = plots.slack(read_runs(experiments_dir / "normal-1ahead.csv"))
    assert any("no mixed-mode run" in t.get_text() for t in fig.axes[0].texts)


def test_paper_numbers_and_units():
    by = {p.key: p for p in PAPER}
    assert by["executor"].mean_us == 39.1 and by["executor"].var_us2 == pytest.approx(4809)
    assert by["executor"].short == "39.1 us, var 4,809 us²"
    assert by["normal"].mean_us == 14465 and by["normal"].var_us2 == pytest.approx(36.52e6)
    assert by["mixed2"].mean_us == 43.0 and by["mixed2"].var_us2 == pytest.approx(378)
    assert by["loaded"].mean_us == 47.03 and by["loaded"].var_us2 == pytest.approx(1035)


def test_comparison_rows_match_runs(data, experiments_dir):
    comp = comparison(data).set_index("experiment")
    row = comp.loc["mixed, 2 ticks ahead"]
    csv = pd.read_csv(experiments_dir / "mixed-2ahead.csv")
    lat = csv[csv["outcome"].isin(["ok", "late"])]["latency_us"]
    assert row["runs"] == "mixed-2ahead"
    assert row["mean (us)"] == pytest.approx(lat.mean()) and row["var (us²)"] == pytest.approx(lat.var())
    normal = comp.loc["normal mode (PC fires), 1 tick ahead"]
    assert normal["verdict"].startswith(("mean and variance lower", "not lower"))
    one = comp.loc["mixed, 1 tick ahead"]      # synthetic runs are tick-aligned: not the paper's method
    assert "on time, not the paper's method" in one["verdict"] and "better" not in one["verdict"]


def test_verdict_follows_the_numbers(tmp_path):
    rows = synth.synthetic_events("mixed", 2, False, 100, seed=5)
    ok = rows["outcome"] == "ok"
    rows.loc[ok, "latency_us"] = 500.0  # far above the paper's 43 us
    rows.loc[ok, "latency_counts"] = 8000
    synth.write_run(tmp_path / "slow", rows, synth.sidecar("slow", rows))
    comp = comparison(read_runs(tmp_path)).set_index("experiment")
    assert comp.loc["mixed, 2 ticks ahead", "verdict"].startswith("not lower than the paper's: mean")
    assert comp.loc["executor only (verification)", "verdict"] == "no run"


def test_report_files(experiments_dir, tmp_path):
    rows = synth.synthetic_events("mixed", 2, False, 20, seed=1)
    shutil_dir = tmp_path / "runs"
    synth.write_experiments(shutil_dir, count=60)
    synth.write_run(shutil_dir / "lagged", rows, synth.sidecar("lagged", rows, valid=False))
    out = report(shutil_dir, tmp_path / "rep")
    md, page = out["md"].read_text(), out["html"].read_text()
    assert "SYNTHETIC DATA" in md and "SYNTHETIC DATA" in page
    table = md.split("## Against the paper (section 7)")[1].split("What the paper reports")[0]
    lines = [l for l in table.splitlines() if l.startswith("| 7.")]
    assert [l.split(" | ")[0] for l in lines] == ["| 7.2", "| 7.3", "| 7.4", "| 7.4", "| 7.5"]
    assert "| 39.1 | 4,809 us² |" in lines[0] and "| 14,465 | 36,520,000 us² |" in lines[1]
    assert "lagged" not in table and "Runs left out" in md and "lagged: invalid: synthetic: marked invalid" in md
    assert "lagged" not in md.split("## Runs shown")[1].split("## Runs left out")[0]
    figs = re.findall(r"!\[[^\]]*\]\(figures/([^)]+)\)", md)
    assert "cdf.png" in figs and all((tmp_path / "rep" / "figures" / f).stat().st_size > 0 for f in figs)
    assert "<table>" in page and "figures/cdf.svg" in page
    assert pd.read_csv(out["summary"])["run"].tolist().count("lagged") == 1


@pytest.mark.long    # a whole report into planted links, every figure: 10-12 s
def test_report_files_never_written_through_a_planted_link(tmp_path):
    """A report into a folder where someone planted links under its files' names: each link is replaced by
    the report's own file, the file it pointed to unchanged."""
    import os

    synth.write_experiments(tmp_path / "runs", count=30)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    rep = tmp_path / "rep"
    (rep / "figures").mkdir(parents=True)
    names = ["report.md", "report.html", "summary.csv", "comparison.csv", "figures/cdf.png", "figures/cdf.svg"]
    for name in names:
        (rep / name).symlink_to(victim)
        if os.getuid() == 0:
            os.lchown(rep / name, 65534, 65534)
    report(tmp_path / "runs", rep)
    assert victim.read_text() == "precious\n"
    assert [n for n in names if (rep / n).is_symlink()] == []


def test_report_flags_sidecar_disagreement(tmp_path):
    csv, js = synth.write_experiment(tmp_path, "mixed-2ahead", count=30)
    meta = json.loads(js.read_text())
    meta["summary"]["n"] += 1
    js.write_text(json.dumps(meta))
    out = report(tmp_path, tmp_path / "rep", figures=False)
    assert "sidecar summary n=" in out["md"].read_text()


def test_add_report_parser_into_another_cli(experiments_dir, tmp_path):
    parser = argparse.ArgumentParser(prog="mmrig")
    add_report_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["report", str(experiments_dir / "mixed-2ahead.csv"), "--out", str(tmp_path), "--no-figures"])
    assert args.func(args) == 0 and (tmp_path / "report.html").exists()


def test_python_m_mmanalysis(experiments_dir, tmp_path):
    r = subprocess.run([sys.executable, "-m", "mmanalysis", "report", str(experiments_dir), "--out", str(tmp_path),
                        "--no-figures"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "7.2 executor only (verification):" in r.stdout and (tmp_path / "report.md").exists()
    assert len(r.stdout.splitlines()) <= 12 and "| section |" not in r.stdout   # a summary, not the table
    bad = tmp_path / "bad"
    synth.write_experiment(bad, "mixed-2ahead", count=30)
    edit_line(bad / "mixed-2ahead.csv", 17, "outcome", "maybe")
    r = subprocess.run([sys.executable, "-m", "mmanalysis", "summary", str(bad)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2 and "line 17, column 'outcome'" in r.stderr


def test_bench_script_prints_figures():
    script = Path(__file__).resolve().parents[1] / "perf" / "perf_summary.py"
    r = subprocess.run([sys.executable, str(script), "20000"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    figs = json.loads(r.stdout)
    assert {f["name"] for f in figs} >= {"analysis summary per run", "analysis summary per group"}
    for f in figs:
        assert set(f) == {"name", "unit", "median", "max", "runs", "note"} and 0 < f["median"] <= f["max"]


def test_a_run_without_events_is_reported_not_dropped(tmp_path):
    rows = synth.synthetic_events("mixed", 2, False, 0)
    synth.write_run(tmp_path / "runs" / "empty", rows, synth.sidecar("empty", rows))
    synth.write_experiment(tmp_path / "runs", "normal-1ahead", count=10)
    out = report(tmp_path / "runs", tmp_path / "rep")
    per_run = pd.read_csv(out["summary"]).set_index("run")
    assert per_run.loc["empty", "events"] == 0 and per_run.loc["normal-1ahead", "events"] == 10
    assert "no events in these runs" in out["md"].read_text()
    assert (tmp_path / "rep" / "figures" / "timeline-empty.png").stat().st_size > 0


def test_slack_plot_draws_refused_events_on_the_zero_line(tmp_path):
    rows = synth.synthetic_events("mixed", 1, False, 30, seed=4)
    refused = rows.index[rows["outcome"] == "ok"][:3]
    rows.loc[refused, ["outcome", "reason"]] = ["missed", "past_due"]
    rows.loc[refused, ["ack_phase", "slack_ticks", "latency_us"]] = float("nan")
    for c in ("ack_tc",):
        rows[c] = rows[c].astype("Int64")
    rows.loc[refused, "ack_tc"] = rows.loc[refused, "scheduled_tc"]
    for c in ("fired_tc", "result_tc", "result_counts", "latency_counts"):
        rows.loc[refused, c] = pd.NA
    synth.write_run(tmp_path / "r", rows, synth.sidecar("r", rows))
    fig = plots.slack(read_runs(tmp_path / "r.csv"))
    ax2 = fig.axes[1]
    crosses = [l for l in ax2.lines if l.get_marker() == plots.OUTCOME_MARKERS["missed"] and len(l.get_xdata())]
    at = {round(float(x), 6): float(y) for l in crosses for x, y in zip(l.get_xdata(), l.get_ydata())}
    for phase in rows.loc[refused, "created_phase"]:   # at the phase they were created at, no slack: the zero line
        assert at[round(float(phase), 6)] == 0.0
    assert any("missed: no slack left" in t.get_text() for t in ax2.get_legend().get_texts())


def test_report_leaves_set_aside_attempts_out_unless_asked(tmp_path):
    runs = tmp_path / "runs"
    synth.write_experiment(runs, "mixed-2ahead", count=30)
    rows = synth.synthetic_events("mixed", 2, False, 30, seed=9)
    synth.write_run(runs / "mixed-2ahead.attempt1", rows, synth.sidecar("mixed-2ahead.attempt1", rows, valid=False))
    md = report(runs, tmp_path / "rep", figures=False)["md"].read_text()
    shown = md.split("## Runs shown")[1].split("## Runs left out")[0]
    assert "mixed-2ahead.attempt1" not in shown
    assert "- mixed-2ahead.attempt1: set-aside attempt of mixed-2ahead; invalid:" in md
    md_all = report(runs, tmp_path / "rep-all", figures=False, include_all=True)["md"].read_text()
    assert "mixed-2ahead.attempt1" in md_all.split("## Runs shown")[1].split("## Against")[0]
    comp = md_all.split("## Against the paper (section 7)")[1].split("What the paper reports")[0]
    assert "attempt1" not in comp                  # the comparison never takes an invalid run


def test_a_schedule_grid_run_is_not_compared_with_the_papers_normal_mode(tmp_path):
    """The paper fired one event at the start of a tick; a normal run at 1 ms (moments inside ticks) is another
    experiment: it stays in the run table and out of the comparison."""
    rows = synth.synthetic_events("normal", 1, False, 50, seed=3)
    grid = synth.sidecar("grid", rows)
    grid["config"].update(rate="ms", rate_ms=1.0)
    synth.write_run(tmp_path / "grid", rows, grid)
    tick = synth.sidecar("tick", rows)
    tick["config"].update(rate="ms", rate_ms=150.0)          # slower than a tick: events at tick starts still
    synth.write_run(tmp_path / "tick", rows, tick)
    comp = comparison(read_runs(tmp_path)).set_index("experiment")
    assert comp.loc["normal mode (PC fires), 1 tick ahead", "runs"] == "tick"
