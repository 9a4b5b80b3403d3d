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
