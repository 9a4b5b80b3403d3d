from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mma_helpers import edit_line  # noqa: E402

from mmanalysis import SchemaError, read_runs, synth  # noqa: E402
from mmanalysis.schema import COLUMN_NAMES  # noqa: E402


@pytest.fixture
def one_run(tmp_path) -> Path:
    csv, _ = synth.write_experiment(tmp_path, "mixed-1ahead", count=40, seed=1)
    return csv


def test_one_run_typed(one_run):
    data = read_runs(one_run)
    df = data.df
    assert list(data.meta) == ["mixed-1ahead"]
    assert len(df) == 40 and list(df.columns[:1]) == ["run"]
    assert list(df.columns[1:1 + len(COLUMN_NAMES)]) == list(COLUMN_NAMES)
    for c in ("event", "ack_tc", "latency_counts", "result_tc", "fired_tc"):
        assert str(df[c].dtype) == "Int64", c
    assert isinstance(df["outcome"].dtype, pd.CategoricalDtype)
    assert list(df["outcome"].cat.categories) == ["ok", "late", "early", "missed", "lost"]
    # gaps stay gaps: the lost and missed rows have no latency
    gone = df["outcome"].isin(["missed", "lost"])
    assert gone.any() and df.loc[gone, "latency_counts"].isna().all()
    assert df["latency_ticks"].iloc[0] == pytest.approx(df["latency_counts"].iloc[0] / synth.TICK_COUNTS)
    assert data.meta["mixed-1ahead"]["timebase"]["tick_counts"] == synth.TICK_COUNTS


def test_json_path_and_directory(experiments_dir):
    one = read_runs(experiments_dir / "normal-1ahead.json")
    assert one.runs == ["normal-1ahead"]
    allruns = read_runs(experiments_dir)
    assert sorted(allruns.runs) == sorted(synth.EXPERIMENTS)
    assert len(allruns.df) == 5 * 200
    assert allruns.df.groupby("run", observed=True).size().eq(200).all()
    assert str(allruns.df["latency_counts"].dtype) == "Int64"


def test_directory_without_runs(tmp_path):
    (tmp_path / "notes.csv").write_text("a,b\n1,2\n")  # no sidecar: not a run
    with pytest.raises(FileNotFoundError, match="no runs"):
        read_runs(tmp_path)


def _err(path) -> SchemaError:
    with pytest.raises(SchemaError) as exc:
        read_runs(path)
    return exc.value


def test_non_numeric_latency_names_file_line_column(one_run):
    edit_line(one_run, 17, "latency_us", "fast")
    e = _err(one_run)
    assert (Path(e.file).name, e.line, e.column) == ("mixed-1ahead.csv", 17, "latency_us")
    assert "mixed-1ahead.csv, line 17, column 'latency_us'" in str(e) and "fast" in str(e)


def test_missing_column(one_run):
    df = pd.read_csv(one_run).drop(columns=["slack_ticks"])
    df.to_csv(one_run, index=False)
    e = _err(one_run)
    assert (e.line, e.column) == (1, "slack_ticks") and "missing" in str(e)


def test_unknown_outcome(one_run):
    edit_line(one_run, 9, "outcome", "sortof")
    e = _err(one_run)
    assert (e.line, e.column) == (9, "outcome") and "sortof" in str(e)


def test_unknown_mode_and_reason(one_run):
    edit_line(one_run, 5, "mode", "turbo")
    assert (_err(one_run).line, _err(one_run).column) == (5, "mode")


def test_non_integer_in_int_column(one_run):
    edit_line(one_run, 12, "ack_tc", "100.5")
    e = _err(one_run)
    assert (e.line, e.column) == (12, "ack_tc") and "integer" in str(e)


def test_empty_required_value(one_run):
    edit_line(one_run, 4, "scheduled_tc", "")
    e = _err(one_run)
    assert (e.line, e.column) == (4, "scheduled_tc")


def test_ok_row_needs_latency_and_no_reason(one_run):
    edit_line(one_run, 3, "latency_us", "")
    assert (_err(one_run).line, _err(one_run).column) == (3, "latency_us")


def test_non_ok_row_needs_reason(tmp_path):
    csv, _ = synth.write_experiment(tmp_path, "mixed-1ahead", count=40, seed=1)
    df = pd.read_csv(csv)
    line = int(np.flatnonzero(df["outcome"] == "lost")[0]) + 2
    edit_line(csv, line, "reason", "")
    e = _err(csv)
    assert (e.line, e.column) == (line, "reason")


def test_duplicate_event(one_run):
    edit_line(one_run, 6, "event", "0")
    e = _err(one_run)
    assert (e.line, e.column) == (6, "event") and "twice" in str(e)


def test_ragged_row(one_run):
    lines = one_run.read_text().splitlines()
    lines[20] += ",extra"
    one_run.write_text("\n".join(lines) + "\n")
    e = _err(one_run)
    assert e.line == 21 and "mixed-1ahead.csv" in str(e)


def test_sidecar_errors(one_run):
    js = one_run.with_suffix(".json")
    meta = json.loads(js.read_text())
    js.write_text(json.dumps(dict(meta, timebase={"timer_hz": 16e6})))
    e = _err(one_run)
    assert Path(e.file).name == "mixed-1ahead.json" and e.column == "timebase.tick_counts"
    js.write_text(json.dumps(dict(meta, format_version=99)))
    assert _err(one_run).column == "format_version"
    js.write_text('{\n "format": "mmrig-run",\n oops\n}')
    e = _err(one_run)
    assert Path(e.file).name == "mixed-1ahead.json" and e.line == 3
    js.unlink()
    assert "sidecar missing" in str(_err(one_run))


def test_same_name_twice_is_told_apart(tmp_path):
    synth.write_experiment(tmp_path / "a", "mixed-2ahead", count=10)
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    data = read_runs(tmp_path)
    assert len(data.runs) == 2 and len(set(data.runs)) == 2 and len(data.df) == 20


def test_a_version_1_run_reads_as_measurable(one_run):
    # version 1 (before per-event validity) had no measurable/stall_us columns: nothing was known of stalls
    js = one_run.with_suffix(".json")
    js.write_text(json.dumps(dict(json.loads(js.read_text()), format_version=1)))
    df = pd.read_csv(one_run).drop(columns=["measurable", "stall_us"])
    df.to_csv(one_run, index=False)
    data = read_runs(one_run)
    assert data.df["measurable"].all() and data.df["stall_us"].isna().all()


def test_measurable_must_be_true_or_false(one_run):
    df = pd.read_csv(one_run)
    df["measurable"] = df["measurable"].astype(object)
    df.loc[3, "measurable"] = "maybe"
    df.to_csv(one_run, index=False)
    e = _err(one_run)
    assert e.column == "measurable" and e.line == 5



def _as_version(csv, version: int) -> None:
    """The synthetic run (version 2) rewritten as `version` with every column of that version but due_counts."""
    js = csv.with_suffix(".json")
    js.write_text(json.dumps(dict(json.loads(js.read_text()), format_version=version)))
    df = pd.read_csv(csv)
    for col in ("est_error_us", "wakeup_us", "line_us", "floor_us"):
        df[col] = float("nan")
    df.to_csv(csv, index=False)


def test_a_version_3_run_reads_every_event_as_due_at_its_tick_start(one_run):
    # before the schedule grid (version 4) every event was due at the start of its tick
    _as_version(one_run, 3)
    data = read_runs(one_run)
    assert (data.df["due_counts"] == 0).all() and str(data.df["due_counts"].dtype) == "Int64"


def test_a_version_4_run_without_due_counts_names_the_column(one_run):
    _as_version(one_run, 4)
    e = _err(one_run)
    assert e.column == "due_counts" and e.line == 1


def test_a_version_5_run_reads_in_stats_from_outcome_and_measurable(one_run):
    # before in_stats (version 6) a row was in the summary's figures when ok or late and measurable: read so
    _as_version(one_run, 5)
    df = pd.read_csv(one_run)
    df["due_counts"], df["write_us"] = 0, float("nan")
    df["measurable"] = [i % 7 != 3 for i in range(len(df))]
    df.to_csv(one_run, index=False)
    assert "in_stats" not in df
    got = read_runs(one_run).df
    want = got["outcome"].isin(["ok", "late"]) & got["measurable"]
    assert got["in_stats"].dtype == bool and got["in_stats"].tolist() == want.tolist()
    assert 0 < want.sum() < len(got)


def test_in_stats_that_disagrees_with_outcome_and_measurable_names_the_line(one_run):
    _as_version(one_run, 6)
    df = pd.read_csv(one_run)
    df["due_counts"], df["write_us"] = 0, float("nan")
    df["in_stats"] = df["outcome"].isin(["ok", "late"]) & df["measurable"]
    df.to_csv(one_run, index=False)
    assert read_runs(one_run).df["in_stats"].tolist() == df["in_stats"].tolist()      # as written: read
    row = int(df.index[df["outcome"] != "ok"][0])
    df.loc[row, "in_stats"] = True                   # a missed or early row cannot be in the figures
    df.to_csv(one_run, index=False)
    e = _err(one_run)
    assert e.column == "in_stats" and e.line == row + 2
