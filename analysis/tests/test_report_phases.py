"""The report of a run in phases (`mmrig run --phases`): one row per phase from its event range in the sidecar,
then the whole run, in report.md, report.html, phases.csv and the terminal's lines; a sidecar whose phase figures
disagree with its CSV is said; a run without phases is reported as before. The run is a generated one
(mmanalysis.synth) given a phases section as the scheduler writes it: a fast, deterministic test."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from mmanalysis import read_runs, synth
from mmanalysis.latstats import measured, summarize_rows
from mmanalysis.phasetable import HEADERS, phase_frame
from mmanalysis.report import headline, report


def phased_run(folder: Path, skew_summary: bool = False) -> Path:
    """A normal-mode run of 60 events in two phases: events 0..29 idle, event 30 made in the switch, 31..59 cpu."""
    stem = folder / "ph"
    synth.write_experiment(folder, "normal-1ahead", count=60, seed=3)
    (folder / "normal-1ahead.csv").rename(stem.with_suffix(".csv"))
    meta = json.loads((folder / "normal-1ahead.json").read_text())
    (folder / "normal-1ahead.json").unlink()
    df = pd.read_csv(stem.with_suffix(".csv"))
    rows = lambda a, b: list(df[df["event"].between(a, b)].itertuples())   # noqa: E731
    idle, cpu = summarize_rows(rows(0, 29)), summarize_rows(rows(31, 59))
    if skew_summary:
        idle["n"] += 1
    meta["name"] = "ph"
    meta["config"]["load"] = "phases"
    meta["phases"] = [
        {"name": "idle", "condition": "idle", "command": None, "planned_start_s": 0.0, "planned_s": 2.0,
         "start_s": 0.0, "end_s": 2.0001, "error": None, "events": 30, "first_event": 0, "last_event": 29,
         "switch_events": 0, "summary": idle, "histogram": None},
        {"name": "cpu", "condition": "cpu", "command": ["stress-ng", "--cpu", "2"], "planned_start_s": 2.0,
         "planned_s": 2.0, "start_s": 2.0042, "end_s": 4.31, "error": None, "events": 29, "first_event": 31,
         "last_event": 59, "switch_events": 1, "summary": cpu, "histogram": None}]
    stem.with_suffix(".json").write_text(json.dumps(meta))
    return stem


def test_a_run_in_phases_gets_a_row_per_phase_and_the_whole(tmp_path: Path) -> None:
    phased_run(tmp_path)
    data = read_runs(tmp_path)
    frame = phase_frame(data, ["ph"])
    assert list(frame.columns) == HEADERS
    assert list(frame["phase"]) == ["idle", "cpu", "whole"] and list(frame["events"]) == [30, 29, 60]
    assert list(frame["switch_events"]) == [0, 1, 1]
    df = measured(data.df)
    idle = df[df["event"].between(0, 29)]
    assert frame.iloc[0]["n"] == len(idle) and frame.iloc[0]["mean_us"] == pytest.approx(idle["latency_us"].mean())
    assert frame.iloc[2]["n"] == len(df)
    paths = report(data, tmp_path / "rep", figures=False)
    md = paths["md"].read_text()
    table = md.split("## Runs in phases")[1].split("\n## ")[0]
    assert "| ph | idle | idle | 0.000 | 2.000 | 30 | 0 |" in table
    assert "| ph | cpu | cpu | 2.004 | 4.310 | 29 | 1 |" in table and "| ph | whole | phases | 0.000 | 4.310 | 60 | 1 |" in table
    assert "disagrees" not in md
    assert "<h2>Runs in phases</h2>" in paths["html"].read_text()
    assert list(pd.read_csv(tmp_path / "rep" / "phases.csv")["phase"]) == ["idle", "cpu", "whole"]
    lines = headline(data, pd.read_csv(paths["comparison"]))
    assert "phases of ph (latency in us):" in lines and any(x.strip().startswith("cpu ") for x in lines)


def test_a_phase_summary_that_disagrees_with_the_csv_is_said(tmp_path: Path) -> None:
    phased_run(tmp_path, skew_summary=True)
    md = report(read_runs(tmp_path), tmp_path / "rep", figures=False)["md"].read_text()
    assert "ph, phase idle: sidecar n=" in md.split("## Sidecar summary disagrees with the CSV")[1]


def test_a_run_without_phases_is_reported_as_before(tmp_path: Path) -> None:
    synth.write_experiment(tmp_path, "normal-1ahead", count=30, seed=3)
    data = read_runs(tmp_path)
    paths = report(data, tmp_path / "rep", figures=False)
    assert "phases" not in paths["md"].read_text().lower() and not (tmp_path / "rep" / "phases.csv").exists()
    assert not any("phases of" in x for x in headline(data, pd.read_csv(paths["comparison"])))


def killed_run(folder: Path) -> Path:
    """The journal of a normal-mode run in phases killed in its second phase (as mmsched.verdict.journal leaves
    it): the sidecar `incomplete`, its phases boundaries only, the second with no end_s, a third never begun.
    Event 29's FIRE was written in the switch, event 40's never."""
    csv_path, json_path = folder / "ph.partial.csv", folder / "ph.partial.json"
    synth.write_experiment(folder, "normal-1ahead", count=60, seed=3)
    df = pd.read_csv(folder / "normal-1ahead.csv")
    (folder / "normal-1ahead.csv").unlink()
    df.loc[df["event"] == 29, "sent_s"] = 2.002
    df.loc[df["event"] == 40, ["sent_s", "outcome", "reason", "latency_us", "latency_counts", "result_tc",
                              "result_counts", "fired_tc"]] = [None, "missed", "timeout", None, None, None, None, None]
    if "in_stats" in df:
        df.loc[df["event"] == 40, "in_stats"] = False
    df.sample(frac=1, random_state=1).to_csv(csv_path, index=False)   # rows in the order they ended
    meta = json.loads((folder / "normal-1ahead.json").read_text())
    (folder / "normal-1ahead.json").unlink()
    for key in ("summary", "csv_sha256", "histogram", "maxima"):
        meta.pop(key, None)
    meta.update({"name": "ph", "incomplete": True, "valid": False, "invalid_reason": "incomplete: killed",
                 "invalid_reasons": [{"code": "incomplete", "text": "incomplete: killed"}]})
    meta["config"]["load"] = "phases"
    meta["phases"] = [
        {"name": "idle", "condition": "idle", "command": None, "planned_start_s": 0.0, "planned_s": 2.0,
         "start_s": 0.0002, "end_s": 2.0001, "error": None},
        {"name": "cpu", "condition": "cpu", "command": ["stress-ng", "--cpu", "2"], "planned_start_s": 2.0,
         "planned_s": 60.0, "start_s": 2.0042, "end_s": None, "error": None},
        {"name": "idle#2", "condition": "idle", "command": None, "planned_start_s": 62.0, "planned_s": 5.0,
         "start_s": None, "end_s": None, "error": None}]
    json_path.write_text(json.dumps(meta))
    return csv_path


def test_a_killed_run_in_phases_gets_its_rows_by_sent_s_and_stays_out_of_the_results(tmp_path: Path) -> None:
    data = read_runs(killed_run(tmp_path))
    [run] = data.runs
    assert data.meta[run]["incomplete"] is True and not data.meta[run]["valid"]
    frame = phase_frame(data, [run])
    df = data.df
    sent = df["sent_s"]
    idle, cpu = df[(sent >= 0.0002) & (sent < 2.0001)], df[sent >= 2.0042]
    assert list(frame["phase"]) == ["idle", "cpu", "idle#2", "whole"]
    assert list(frame["events"]) == [len(idle), len(cpu), 0, 60] and len(idle) + len(cpu) == 58
    assert list(frame["switch_events"]) == [0, 1, 0, 1]            # event 29, written in the switch into cpu
    assert frame.iloc[1]["mean_us"] == pytest.approx(measured(cpu)["latency_us"].mean())
    assert pd.isna(frame.iloc[1]["end_s"]) and pd.isna(frame.iloc[3]["end_s"])     # died in cpu: no end, nor the whole's
    assert frame.iloc[3]["start_s"] == 0.0002

    paths = report(data, tmp_path / "rep", figures=False)          # left out (invalid), its phases still said
    md = paths["md"].read_text()
    assert "## Runs in phases\n" not in md and not (tmp_path / "rep" / "phases.csv").exists()
    part = md.split("## Runs in phases, incomplete (never a result)")[1].split("\n## ")[0]
    assert "sent_s" in part and "never a result" in md
    assert f"| {run} | idle | idle | 0.000 | 2.000 | {len(idle)} | 0 |" in part
    assert f"| {run} | cpu | cpu | 2.004 | - | {len(cpu)} | 1 |" in part
    assert f"| {run} | idle#2 | idle | - | - | 0 |" in part and f"| {run} | whole | phases | 0.000 | - | 60 | 1 |" in part
    assert f"{run}: ended in phase cpu (from 2.004 s; no end_s" in part and f"{sent.max():.3f} s" in part
    assert "Runs in phases, incomplete" in paths["html"].read_text()
    assert "## Runs left out" in md and f"- {run}: invalid: incomplete" in md
    lines = headline(data, pd.read_csv(paths["comparison"]))
    assert any(x.startswith(f"phases of {run} (latency in us, incomplete") for x in lines)
    # --all shows it among the runs, still in its own table of phases, never in phases.csv
    md = report(data, tmp_path / "all", figures=False, include_all=True)["md"].read_text()
    assert "## Runs in phases\n" not in md and "## Runs in phases, incomplete" in md
    assert not (tmp_path / "all" / "phases.csv").exists()


def test_a_run_on_the_profilers_histogram_alone_gets_its_phase_rows_from_its_sidecar(tmp_path: Path) -> None:
    """No event rows (`--no-raw`): the phases' figures are the sidecar's, from the profiler's reports."""
    rows = synth.synthetic_events("mixed", 2, False, 10, seed=3)
    meta = synth.sidecar("h", rows)

    def summary(events: int, n: int, early: int, mean: float, p99: float, top: float) -> dict:
        return {"n": n, "events": events, "mean_us": mean, "variance_us2": None, "min_us": 3.0, "p50_us": 16.0,
                "p99_us": p99, "p999_us": top, "max_us": top,
                "outcomes": {"ok": n, "late": 0, "early": early, "missed": 0, "lost": 0},
                "from_profiler_histogram": {"cell_us": 1.0, "percentiles": "upper edge of the cell"}}
    meta["summary"] = summary(24000, 23934, 66, 14.5, 20.0, 87.0625)
    meta["phases"] = [
        {"name": "idle", "condition": "idle", "start_s": 0.0, "end_s": 12.0, "events": 10823, "switch_events": 0,
         "first_event": None, "last_event": None, "from": "profiler reports",
         "summary": summary(10823, 10823, 0, 14.3, 20.0, 39.7)},
        {"name": "cpu", "condition": "cpu", "start_s": 12.01, "end_s": 24.24, "events": 12177, "switch_events": 1000,
         "first_event": None, "last_event": None, "from": "profiler reports",
         "summary": summary(12177, 12111, 66, 14.8, 56.0, 87.0625)}]
    synth.write_run(tmp_path / "h", rows.iloc[0:0], meta)
    data = read_runs(tmp_path)
    paths = report(data, tmp_path / "rep", figures=False)
    got = pd.read_csv(tmp_path / "rep" / "phases.csv").set_index("phase")
    assert list(got.index) == ["idle", "cpu", "whole"]
    assert (got.loc["cpu", "events"], got.loc["cpu", "early"], got.loc["cpu", "p99_us"]) == (12177, 66, 56.0)
    assert (got.loc["whole", "events"], got.loc["whole", "switch_events"], got.loc["whole", "max_us"]) == \
        (24000, 1000, 87.0625)
    md = paths["md"].read_text()
    assert "the profiler's reports" in md.split("## Runs in phases")[1]
    # no rows: not in the tables that read them (with no run shown, not every run instead)
    assert "## Mixed mode: what the PC's load can change" not in md
    lines = headline(data, pd.DataFrame())
    assert any(line.strip().startswith("cpu") and "events  12177" in line for line in lines), lines
