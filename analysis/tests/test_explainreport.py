"""The report's "The worst events, explained" (mmanalysis.explainreport, in mmanalysis.report's Markdown and HTML):
each run's 10 worst events one line each, the largest part first; a run without a host trace says so once; the
events the explanation does not give are listed with their reason. On the recorded explanation fixture
(explain_fixture.py), beside a synthetic mixed run."""

from __future__ import annotations

import html
import sys
from pathlib import Path

import pytest

from mmanalysis import runexplainer, synth
from mmanalysis.explainreport import HEADING
from mmanalysis.reader import read_runs
from mmanalysis.report import report

sys.path.insert(0, str(Path(__file__).resolve().parent))
from explain_fixture import EVENT, recorded_event, recorded_trace, write_normal_run, write_traced_normal_run  # noqa: E402


@pytest.fixture(scope="module")
def fixture() -> dict:
    return recorded_event()


@pytest.fixture
def runs(tmp_path, fixture, monkeypatch):
    """A traced normal run and an untraced one (event 17 the worst of each: the others' synthetic latencies scaled
    down in memory) and a mixed one, read; and the trace files read."""
    folder = tmp_path / "runs"
    write_traced_normal_run(folder, fixture, name="traced")
    write_normal_run(folder, fixture, None, name="untraced")
    rows = synth.synthetic_events("mixed", 2, False, 12, seed=2)
    synth.write_run(folder / "mixed", rows, synth.sidecar("mixed", rows))
    data = read_runs(folder)
    others = (data.df["run"] != "mixed") & (data.df["event"] != EVENT)
    data.df.loc[others, "latency_us"] = data.df.loc[others, "latency_us"] / 10
    read: list[Path] = []
    trace = recorded_trace()
    monkeypatch.setattr(runexplainer, "read_trace", lambda path, keep: read.append(path) or trace)
    return data, read


def section(md: str) -> dict[str, list[str]]:
    """The Markdown section's lines by run (its ### heading's run name), and the words under the ## heading."""
    text = md.split(f"## {HEADING}\n", 1)[1].split("\n## ", 1)[0]
    out: dict[str, list[str]] = {}
    for block in text.split("\n### ")[1:]:
        head, *body = block.strip().splitlines()
        out[head.split(":")[0]] = [line for line in body if line]
    return out


def test_each_runs_worst_events_one_line_each_the_largest_part_first(runs, tmp_path) -> None:
    data, read = runs
    paths = report(data, tmp_path / "rep", figures=False)
    by_run = section(paths["md"].read_text())
    assert list(by_run) == sorted(by_run) == ["mixed", "traced", "untraced"]
    traced = by_run["traced"]
    assert read == [tmp_path / "runs" / "traced.host.dat"]            # once, for the run's ten
    assert len(traced) == 10 and all(line.startswith("- event ") for line in traced)
    assert traced[0].startswith("- event 17 (late, 4448.2 us): mmspinner (pid 3341, rt 90) held CPU 1 4368.3 us "
                                "(98.2%); then ")
    lats = [float(line.split(", ", 1)[1].split(" us)")[0]) for line in traced]
    assert lats == sorted(lats, reverse=True)


def test_a_run_without_a_host_trace_says_so_once_under_its_heading(runs, tmp_path) -> None:
    data, _ = runs
    lines = section(report(data, tmp_path / "rep", figures=False)["md"].read_text())["untraced"]
    assert lines[0].startswith("No host trace (the run was made without --trace-host)")
    assert len(lines) == 11 and sum("trace" in line for line in lines) == 1
    assert any(line.startswith("- event 17 (late, 4448.2 us): wake-up (not split) 4393.0 us (98.8%)") for line in lines)


def test_events_the_explanation_does_not_give_are_listed_with_their_reason(runs, tmp_path) -> None:
    data, _ = runs
    lines = section(report(data, tmp_path / "rep", figures=False)["md"].read_text())["mixed"]
    # no executor trace beside the synthetic mixed run: said once under its heading, each event listed with why
    assert len(lines) == 11 and sum("mmrig explain RUN worst" in line for line in lines) == 1
    assert sum("not explained: " in line and "no executor trace on disk holds it" in line for line in lines) == 10


def test_the_html_has_the_same_lines(runs, tmp_path) -> None:
    data, _ = runs
    paths = report(data, tmp_path / "rep", figures=False)
    page = paths["html"].read_text()
    assert f"<h2>{HEADING}</h2>" in page and "<h3>traced: its 10 worst of 19 measured events</h3>" in page
    md_lines = [line[2:] for line in section(paths["md"].read_text())["traced"]]
    assert all(f"<li>{html.escape(line)}</li>" in page for line in md_lines)


def test_runs_left_out_of_the_report_are_left_out_of_the_section_too(runs, tmp_path) -> None:
    data, read = runs
    for meta in data.meta.values():
        meta.update(valid=False, invalid_reason="a stand-in reason")
    assert f"## {HEADING}" not in report(data, tmp_path / "rep", figures=False)["md"].read_text() and read == []
    assert list(section(report(data, tmp_path / "all", figures=False, include_all=True)["md"].read_text())) == \
        ["mixed", "traced", "untraced"]


def test_without_the_host_traces_nothing_is_read(runs, tmp_path) -> None:
    data, read = runs
    lines = section(report(data, tmp_path / "rep", figures=False, host_trace=False)["md"].read_text())["traced"]
    assert read == [] and lines[0].startswith("The host trace left out")


def test_mmrig_report_no_trace(tmp_path, fixture, monkeypatch) -> None:
    from mmrig.cli import main

    write_traced_normal_run(tmp_path / "runs", fixture, name="traced")
    monkeypatch.setattr(runexplainer, "read_trace", lambda path, keep: pytest.fail("the trace was read"))
    assert main(["report", str(tmp_path / "runs"), "--out", str(tmp_path / "rep"), "--no-figures", "--no-trace"]) == 0
    lines = section((tmp_path / "rep" / "report.md").read_text())["traced"]
    assert lines[0].startswith("The host trace left out: each wake-up is one part")


@pytest.mark.paced
def test_a_traced_bench_runs_worst_events_are_split_by_its_trace(tmp_path) -> None:
    from explain_fixture import last_event_with_a_wakeup, record_traced_normal_run
    from mmanalysis.explain import explain_run

    csv = record_traced_normal_run(tmp_path / "runs" / "traced")
    # (include_all: a run the busy host made invalid is shown, marked, and its worst events explained all the same)
    lines = section(report(csv, tmp_path / "rep", figures=False, include_all=True)["md"].read_text())["traced"]
    assert len(lines) == 10 and all(line.startswith("- event ") for line in lines), lines
    # every worst wake-up is split by what ran, but where the trace's ring no longer held its moment: the ring keeps
    # each CPU's last --trace-host-kb, how many seconds that is the host's business (a busy one writes 7 MB a
    # second a CPU: docs/explain.md), and the line says so; any other reason is the rig's fault
    unsplit = [line for line in lines if "wake-up (not split)" in line]
    assert all("(wake-up not split: the trace's ring no longer held" in line for line in unsplit), "\n".join(unsplit)
    assert all("%); then " in line for line in lines), "\n".join(lines)
    # and the run's last event, whose moment the ring holds whatever the host did, is split by what ran
    (ex,) = explain_run(csv, last_event_with_a_wakeup(csv))
    keys = [p.key for p in ex.parts]
    assert "wakeup" not in keys and any(k.startswith("wakeup.") for k in keys), (keys, ex.notes)
