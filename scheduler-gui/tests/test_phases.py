"""A run in phases (`mmrig run --phases`, docs/long-runs.md): the plan read from its text (bad text: one line
naming the part and the field), the run's length, which phase a moment belongs to, the contradicting options
refused, the switching on a clock of the test's own, the per-phase figures of the sidecar, and one short paced
run beside the bench (long tier)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from mmsched.model import phasedload
from mmsched.model.config import RunConfig
from mmsched.model.event import Event
from mmsched.model.phasedload import PhasedLoad
from mmsched.model.phaseplan import Phase, PhaseError, PhasePlan, PhaseSpan, phase_of
from mmsched.verdict.phasefigures import format_phases, phase_events, phase_reasons, phases_section
from mmsched.verdict.stats import summarize

MMRIG = [sys.executable, "-m", "mmrig"]


def test_the_issues_example_reads_as_three_phases_of_four_hours() -> None:
    plan = PhasePlan.parse("idle:2h,load=cpu:1h,load=io:1h")
    assert plan.phases == (Phase("idle", "idle", 7200.0), Phase("cpu", "cpu", 3600.0), Phase("io", "disk", 3600.0))
    assert plan.total_s == 14400.0 and plan.starts_s == (0.0, 7200.0, 10800.0)
    assert plan.text == "idle:2h,load=cpu:1h,load=io:1h"


def test_units_and_repeated_conditions() -> None:
    plan = PhasePlan.parse(" idle:90 , cpu:1.5m,load=idle:30min, disk:0.5s ,cpu:2s")
    assert [p.duration_s for p in plan.phases] == [90.0, 90.0, 1800.0, 0.5, 2.0]
    # a word given again is numbered among its namesakes: every phase has a name of its own
    assert [p.name for p in plan.phases] == ["idle", "cpu", "idle#2", "disk", "cpu#2"]
    assert [p.condition for p in plan.phases] == ["idle", "cpu", "idle", "disk", "cpu"]


@pytest.mark.parametrize("text, words", [
    ("", ["no phase given"]),
    ("idle:2h,,cpu:1h", ["part 2 is empty"]),
    ("idle:2h,cpu", ["part 2 ('cpu')", "no duration"]),
    ("idle:2h,load=gpu:1h", ["part 2 ('load=gpu:1h')", "condition 'gpu'", "idle, cpu", "io"]),
    ("idle:2h,exec=cpu:1h", ["part 2 ('exec=cpu:1h')", "field 'exec'"]),
    ("cpu:1x", ["part 1 ('cpu:1x')", "duration '1x' is not a time"]),
    ("cpu:0s", ["part 1 ('cpu:0s')", "duration '0s' must be above 0"]),
    ("idle:1h,cpu:-3s", ["part 2", "duration '-3s'"]),
])
def test_bad_text_names_the_part_and_the_field_in_one_line(text: str, words: list[str]) -> None:
    with pytest.raises(PhaseError) as got:
        PhasePlan.parse(text)
    message = str(got.value)
    assert message.startswith("--phases") and "\n" not in message
    for w in words:
        assert w in message, message


def test_the_plan_places_moments_and_the_switches_as_they_happened_place_events() -> None:
    plan = PhasePlan.parse("idle:10s,cpu:5s")
    assert [plan.planned(t) for t in (-0.1, 0.0, 9.999, 10.0, 14.9, 15.0)] == [None, 0, 0, 1, 1, None]
    spans = [PhaseSpan("idle", "idle", None, 0.0, 10.0001), PhaseSpan("cpu", "cpu", ["stress-ng"], 10.004, None)]
    assert phase_of(0.0, spans) == 0 and phase_of(10.0, spans) == 0
    # inside the switch (the previous condition being stopped, the next started): no phase
    assert phase_of(10.0001, spans) is None and phase_of(10.0039, spans) is None
    assert phase_of(10.004, spans) == 1 and phase_of(1e9, spans) == 1    # the last runs to the run's end


def test_contradicting_options_are_refused_and_the_length_is_the_sum() -> None:
    cfg = RunConfig(count=None, phases="idle:20s,load=cpu:20s")
    assert cfg.duration_s == 40.0 and cfg.load == "idle" and cfg.phases is not None
    assert RunConfig(count=None, duration_s=40.0, phases="idle:20s,cpu:20s").duration_s == 40.0
    for kwargs, words in (({"count": 5}, "--count 5 contradicts --phases"),
                          ({"count": None, "duration_s": 30.0}, "--duration 30 s contradicts --phases"),
                          ({"count": None, "load": "cpu"}, "--load cpu runs one condition")):
        with pytest.raises(ValueError, match=words):
            RunConfig(phases="idle:20s,cpu:20s", **kwargs)
    side = cfg.sidecar(9600, 0.0711)
    assert side["load"] == "phases" and side["phases_text"] == "idle:20s,load=cpu:20s"
    assert side["phases"] == [{"name": "idle", "condition": "idle", "duration_s": 20.0},
                              {"name": "cpu", "condition": "cpu", "duration_s": 20.0}]


@pytest.mark.parametrize("argv, words", [
    (["--phases", "idle:20s,cpu:1x"], "--phases: part 2 ('cpu:1x'): duration '1x'"),
    (["--phases", "idle:20s,cpu:20s", "--count", "10"], "--count 10 contradicts --phases"),
    (["--phases", "idle:20s,cpu:20s", "--duration", "1m"], "--duration 60 s contradicts --phases"),
    (["--phases", "idle:20s,cpu:20s", "--load", "disk"], "--load disk runs one condition"),
    (["--phases", "idle:2s,idle:2s", "--unpaced"], "--phases needs a wall clock"),
])
def test_the_command_line_refuses_in_one_line_with_exit_2(tmp_path: Path, argv: list[str], words: str) -> None:
    p = subprocess.run([*MMRIG, "run", "-o", str(tmp_path / "r"), *argv], capture_output=True, text=True, timeout=120)
    assert p.returncode == 2, p.stderr
    assert p.stderr.count("\n") == 1 and "Traceback" not in p.stderr and words in p.stderr, p.stderr
    assert not (tmp_path / "r.csv").exists()


class Clock:
    """The run's clock, moved by the test."""

    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_the_load_switches_at_each_boundary_of_the_runs_clock(monkeypatch) -> None:
    monkeypatch.setattr(phasedload, "LOOK_S", 0.005)
    clock, said = Clock(), []
    load = PhasedLoad(PhasePlan.parse("idle:2s,idle:3s,idle:1s"), clock, origin=100.0, timeout_s=30,
                      log=said.append).start()
    assert [s.start_s for s in load.spans] == [0.0] and load.spans[0].end_s is None and load.command is None
    clock.t = 101.5
    assert not load._stop.wait(0.05) and len(load.spans) == 1          # not yet at 2 s
    clock.t = 102.25
    for _ in range(400):
        if len(load.spans) == 2:
            break
        load._stop.wait(0.005)
    assert [(s.name, s.start_s, s.end_s) for s in load.spans] == [("idle", 0.0, 2.25), ("idle#2", 2.25, None)]
    clock.t = 104.0
    load.stop()                                   # before the third: the run ended early (the plan is kept apart)
    assert [(s.name, s.start_s, s.end_s) for s in load.spans] == [("idle", 0.0, 2.25), ("idle#2", 2.25, 4.0)]
    load.stop()                                   # twice: nothing more
    assert said[0] == "phase 1/3 idle from 0.000 s: nothing added" and said[1].startswith("phase 2/3 idle#2 from 2.250")


def test_each_switch_is_handed_to_on_switch_as_it_happens(monkeypatch) -> None:
    """on_switch (the run's journal) gets the spans so far once each phase is in place, and the last end at
    stop(): a run killed between two switches has said where each phase began."""
    monkeypatch.setattr(phasedload, "LOOK_S", 0.005)
    clock, got = Clock(), []
    load = PhasedLoad(PhasePlan.parse("idle:2s,idle:3s"), clock, origin=100.0, timeout_s=30,
                      on_switch=got.append).start()
    assert got == [[PhaseSpan("idle", "idle", None, 0.0, None)]]
    clock.t = 102.5
    for _ in range(400):
        if len(got) == 2:
            break
        load._stop.wait(0.005)
    assert got[1] == [PhaseSpan("idle", "idle", None, 0.0, 2.5), PhaseSpan("idle#2", "idle", None, 2.5, None)]
    clock.t = 104.0
    load.stop()
    load.stop()
    assert len(got) == 3 and got[2][1].end_s == 4.0 and got[1][1].end_s is None   # each a copy, not the live list


def test_a_condition_that_cannot_start_is_said_and_makes_the_run_invalid(monkeypatch) -> None:
    from mmsched.model import load as L
    monkeypatch.setattr(L, "unavailable", lambda name: None if name == "idle" else "stress-ng is not installed")
    load = PhasedLoad(PhasePlan.parse("cpu:1s"), Clock(), origin=100.0, timeout_s=30).start()
    load.stop()
    assert load.spans[0].error == "cpu: stress-ng is not installed" and load.spans[0].command is None
    [reason] = phase_reasons(load.spans)
    assert reason.code == "load_unavailable" and "--phases cpu: stress-ng is not installed" in reason.text


def event(k: int, created_at: float, outcome: str = "ok", latency_us: float | None = 10.0) -> Event:
    e = Event(k, k, k % 8, "normal", 1, 10 + k, 9 + k, 0.5, created_at=created_at)
    e.outcome, e.latency_us = outcome, latency_us if outcome in ("ok", "late", "early") else None
    return e


def test_events_go_to_the_phase_the_pc_did_its_part_in_and_a_switchs_to_none() -> None:
    t0 = 50.0
    spans = [PhaseSpan("idle", "idle", None, 0.0, 2.0), PhaseSpan("cpu", "cpu", ["stress-ng"], 2.003, 4.5)]
    made = [0.0, 1.0, 1.9999, 2.0, 2.002, 2.003, 3.0, 4.4, 4.4999]   # (the last phase ends at the run's end)
    events = [event(k, t0 + t, latency_us=float(k)) for k, t in enumerate(made)]
    events[6].outcome, events[6].latency_us = "missed", None
    by, switching = phase_events(spans, events, t0)
    assert [[e.event for e in evs] for evs in by] == [[0, 1, 2], [5, 6, 7, 8]]
    assert switching == [0, 2]            # made at 2.0 and 2.002: in the whole only, said by the phase switched into
    # normal mode: made in the idle phase, its FIRE aimed into the cpu phase (or its switch): the PC's part is there
    aimed = [event(k, t0 + t, latency_us=1.0) for k, t in enumerate((1.0, 1.9, 1.95))]
    aimed[1].fire_at, aimed[2].fire_at = t0 + 2.05, t0 + 2.001
    by, switching = phase_events(spans, aimed, t0)
    assert [[e.event for e in evs] for evs in by] == [[0], [1]] and switching == [0, 1]
    plan = PhasePlan.parse("idle:2s,cpu:2s,idle:1s")
    section = phases_section(plan, spans, events, t0, bin_us=1.0)
    assert [(p["name"], p["events"], p["first_event"], p["last_event"], p["switch_events"]) for p in section] == \
        [("idle", 3, 0, 2, 0), ("cpu", 4, 5, 8, 2), ("idle#2", 0, None, None, 0)]
    assert section[0]["summary"] == summarize(events[0:3]) and section[1]["summary"] == summarize(events[5:9])
    assert section[1]["summary"]["outcomes"]["missed"] == 1 and section[1]["histogram"]["n"] == 3
    assert section[2]["start_s"] is None and section[2]["planned_start_s"] == 4.0     # planned, never reached
    text = format_phases(section)
    assert "2 fell in the switch into it" in text and "not reached" in text and len(text.splitlines()) == 4


@pytest.mark.paced
def test_a_short_paced_normal_run_in_phases(tmp_path: Path) -> None:
    """Two phases beside the paced bench: the sidecar's phases follow one another on the run's clock, near their
    planned boundaries, each with its own figures, which add up to the run's; the report has a row each and
    the whole. Nothing is asserted of how the cpu phase compares with the idle one: that is the host's result."""
    from mmsched.model.load import unavailable
    from mmhil.bench import ensure_built

    if unavailable("cpu"):
        pytest.skip(unavailable("cpu"))
    ensure_built()
    out = tmp_path / "r"
    p = subprocess.run([*MMRIG, "run", "--mode", "normal", "--phases", "idle:4s,load=cpu:4s", "--json", "-o", str(out)],
                       capture_output=True, text=True, timeout=300)
    meta = json.loads(out.with_suffix(".json").read_text())
    assert p.returncode in (0, 3), p.stderr
    if p.returncode == 3:      # a busy host: its bench fell behind; only that may make the run invalid
        assert {r["code"] for r in meta["invalid_reasons"]} == {"bench_lag"}, meta["invalid_reasons"]
    assert "phase 2/2 cpu from" in p.stderr and json.loads(p.stdout)["phases"] == meta["phases"]
    assert meta["config"]["load"] == "phases" and meta["config"]["duration_s"] == 8.0
    idle, cpu = meta["phases"]
    assert (idle["name"], idle["condition"], idle["command"]) == ("idle", "idle", None)
    assert cpu["condition"] == "cpu" and cpu["command"][:2] == ["stress-ng", "--cpu"]
    assert idle["start_s"] == pytest.approx(0.0, abs=0.01) and idle["end_s"] == pytest.approx(4.0, abs=0.5)
    assert idle["end_s"] <= cpu["start_s"] < idle["end_s"] + 1.0 and cpu["end_s"] >= 8.0
    assert idle["events"] > 0 and cpu["events"] > 0
    assert idle["events"] + cpu["events"] + cpu["switch_events"] == meta["summary"]["events"]
    assert cpu["first_event"] == idle["last_event"] + 1 + cpu["switch_events"]
    df = pd.read_csv(out.with_suffix(".csv"))
    for ph in (idle, cpu):
        rows = df[df["event"].between(ph["first_event"], ph["last_event"])]
        assert len(rows) == ph["summary"]["events"] and int(rows["in_stats"].sum()) == ph["summary"]["n"]
    r = subprocess.run([*MMRIG, "report", str(out.with_suffix(".csv")), "--out", str(tmp_path / "rep"),
                        "--no-figures", "--no-trace"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    md = (tmp_path / "rep" / "report.md").read_text().split("## Runs in phases")[1]
    assert "| r | idle | idle |" in md and "| r | cpu | cpu |" in md and "| r | whole | phases |" in md


@pytest.mark.paced
def test_a_paced_kilohertz_series_on_the_profilers_histogram_alone_in_phases(tmp_path: Path) -> None:
    """A series of 1,000 events a second with no event rows (`--no-raw`), in two phases: each phase's figures and
    the worst case over time come from the profiler's own reports (profslices.py), and with the events counted in
    the switch they add up to the run's."""
    from mmsched.model.load import unavailable
    from mmhil.bench import ensure_built

    if unavailable("cpu"):
        pytest.skip(unavailable("cpu"))
    ensure_built()
    out = tmp_path / "h"
    p = subprocess.run([*MMRIG, "run", "--generation", "periodic", "-i", "1ms", "--baud", "115200", "--no-raw",
                        "--phases", "idle:4s,load=cpu:4s", "--maxima-every", "2s", "-o", str(out)],
                       capture_output=True, text=True, timeout=300)
    meta = json.loads(out.with_suffix(".json").read_text())
    assert p.returncode in (0, 3), p.stderr
    if p.returncode == 3:      # a busy host: its bench fell behind; only that may make the run invalid
        assert {r["code"] for r in meta["invalid_reasons"]} <= {"bench_lag"}, meta["invalid_reasons"]
    idle, cpu = meta["phases"]
    assert idle["from"] == cpu["from"] == "profiler reports" and idle["first_event"] is None
    assert idle["summary"]["n"] > 0 and cpu["summary"]["n"] > 0
    assert idle["counted_to_s"] <= idle["end_s"] <= cpu["start_s"] <= cpu["counted_from_s"]
    assert idle["events"] + cpu["switch_events"] + cpu["events"] == meta["summary"]["events"]
    assert idle["summary"]["n"] + cpu["summary"]["n"] <= meta["summary"]["n"]
    assert max(idle["summary"]["max_us"], cpu["summary"]["max_us"]) <= meta["summary"]["max_us"]
    m = meta["maxima"]
    assert m["from"] == "profiler reports" and m["every_s"] == 2.0 and len(m["intervals"]) >= 4
    assert m["n"] == meta["summary"]["n"] == sum(i["count"] for i in m["intervals"])
    assert max(i["max_us"] for i in m["intervals"] if i["count"]) == meta["summary"]["max_us"]
