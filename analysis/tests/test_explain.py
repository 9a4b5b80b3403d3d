"""The explanation of a normal-mode event (mmanalysis.explain) against a recorded trace of a planted cause:
`data/explain/report.txt` is `trace-cmd report -t` around one moment of a stand-in firing thread (SCHED_FIFO 80 on
CPU 1) that spinner.py (SCHED_FIFO 90, pinned to CPU 1, 5 ms) held off its CPU (`data/explain/record.py` made it)."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pandas as pd
import pytest

from mmanalysis import explain as ex_mod
from mmanalysis.explain import ExplainError, explain_event, explain_run, format_explanation, select_rows
from mmanalysis.schedtrace import parse_report, policy_words

sys.path.insert(0, str(Path(__file__).resolve().parent))
from explain_fixture import (DATA, recorded_event, recorded_trace, write_normal_run,  # noqa: E402
                             write_traced_normal_run)

SPIN_US = 5000.0          # spinner.py's spin, by its own clock


@pytest.fixture(scope="module")
def fixture() -> dict:
    return recorded_event()


@pytest.fixture(scope="module")
def trace():
    return recorded_trace()


def test_the_report_text_is_read_into_timelines(trace) -> None:
    assert set(trace.cpus) == {0, 1}
    cpu1 = trace.cpus[1]
    assert [w.comm for w in cpu1.who if w.comm == "mmspinner"]
    # the recorded text misses the idle CPU's switch to the spinner: the spinner's first line on CPU 1 says it ran
    assert cpu1.inferred >= 1
    spinner = next(w for w in cpu1.who if w.comm == "mmspinner")
    assert policy_words(spinner.prio) == "rt 90"
    assert any(s.name == "SCHED" for s in cpu1.softirqs)


def test_policy_words() -> None:
    assert policy_words(9) == "rt 90"
    assert policy_words(19) == "rt 80"
    assert policy_words(120) == "nice 0"
    assert policy_words(110) == "nice -10"


def test_the_planted_thread_is_the_largest_part_with_its_spin(fixture, trace) -> None:
    ex = explain_event(fixture["row"], fixture["sidecar"], trace, run="fixture")
    big = ex.largest()
    assert big.key == "wakeup.held"
    assert big.detail["comm"] == "mmspinner" and big.detail["policy"] == "rt 90" and big.detail["cpu"] == 1
    # its run on the CPU, as far as the trace bounds it, holds the 5 ms it spun (1 us: the stamps' resolution)
    assert big.detail["ran_us"] - 1.0 <= SPIN_US + 60.0 and big.detail["ran_max_us"] + 1.0 >= SPIN_US
    assert big.us <= fixture["row"]["wakeup_us"]
    assert ex.cpu == 1


def test_the_parts_add_up_in_the_order_the_event_met_them(fixture, trace) -> None:
    row = fixture["row"]
    ex = explain_event(row, fixture["sidecar"], trace)
    assert math.isclose(sum(p.us for p in ex.parts), row["latency_us"], abs_tol=0.01)
    keys = [p.key for p in ex.parts]
    assert keys[0] == "est_error" and keys[-3:] == ["write", "line", "floor"]
    assert all(k.startswith("wakeup.") for k in keys[1:-3])
    wake = sum(p.us for p in ex.parts if p.key.startswith("wakeup."))
    assert math.isclose(wake, row["wakeup_us"], abs_tol=0.01)
    # the budget's own columns pass through unchanged
    assert {p.key: p.us for p in ex.parts if p.key in ("est_error", "write", "line", "floor")} == \
        {"est_error": row["est_error_us"], "write": row["write_us"], "line": row["line_us"], "floor": row["floor_us"]}
    assert math.isclose(sum(p.share for p in ex.parts), 1.0, abs_tol=0.001)
    # the missed switch is time the trace cannot give to anyone: named unknown, with its time
    unknown = [p for p in ex.parts if p.key == "wakeup.unknown"]
    assert unknown and all(p.us > 0 for p in unknown)


def test_the_paragraph_fits_80_columns(fixture, trace) -> None:
    text = format_explanation(explain_event(fixture["row"], fixture["sidecar"], trace, run="fixture"))
    assert all(len(line) <= 80 for line in text.splitlines())
    assert "mmspinner (pid" in text and "rt 90" in text and "held CPU 1" in text
    assert text.startswith("event 17 of fixture (late,")


def test_without_a_trace_the_wakeup_is_one_part(fixture) -> None:
    ex = explain_event(fixture["row"], fixture["sidecar"], None)
    assert [p.key for p in ex.parts] == ["est_error", "wakeup", "write", "line", "floor"]
    assert any("--trace-host" in n for n in ex.notes)
    assert math.isclose(sum(p.us for p in ex.parts), fixture["row"]["latency_us"], abs_tol=0.01)


def test_a_ring_that_no_longer_holds_the_moment_says_so(fixture, trace) -> None:
    row = dict(fixture["row"], sent_s=fixture["row"]["sent_s"] - 5.0)   # 5 s before the recorded window
    ex = explain_event(row, fixture["sidecar"], trace)
    assert any("no longer held" in n for n in ex.notes)
    assert "wakeup" in [p.key for p in ex.parts]


def test_an_event_without_a_budget_is_unknown_whole(fixture) -> None:
    row = dict(fixture["row"], est_error_us=float("nan"), wakeup_us=float("nan"))
    ex = explain_event(row, fixture["sidecar"], None)
    assert [(p.key, p.us) for p in ex.parts] == [("unknown", row["latency_us"])]


def test_an_event_with_no_latency_or_of_another_mode_is_refused(fixture) -> None:
    with pytest.raises(ExplainError, match="no latency"):
        explain_event(dict(fixture["row"], latency_us=float("nan"), outcome="missed"), fixture["sidecar"], None)
    with pytest.raises(ExplainError, match="normal mode"):
        explain_event(dict(fixture["row"], mode="mixed"), fixture["sidecar"], None)


def test_select_rows() -> None:
    df = pd.DataFrame({"event": [0, 1, 2, 3], "latency_us": [5.0, 9.0, 700.0, 3.0],
                       "outcome": ["ok", "ok", "late", "late"], "measurable": [True, True, False, True]})
    assert select_rows(df, "worst")[0]["event"] == 1           # the unmeasurable event 2 is no figure
    assert [r["event"] for r in select_rows(df, "late")] == [2, 3]
    assert select_rows(df, "2")[0]["event"] == 2
    with pytest.raises(ExplainError, match="no event 9"):
        select_rows(df, "9")
    with pytest.raises(ExplainError, match="a number, worst or late"):
        select_rows(df, "slowest")


def test_explain_run_reads_the_run_and_its_trace(tmp_path, fixture, trace, monkeypatch) -> None:
    csv = write_traced_normal_run(tmp_path, fixture)
    dat = tmp_path / "fx.host.dat"
    read: list[Path] = []
    monkeypatch.setattr(ex_mod, "read_trace", lambda p, keep: read.append(p) or trace)
    [one] = explain_run(csv, 17)
    assert read == [dat]
    assert one.largest().detail["comm"] == "mmspinner"
    # the trace file must be the run's: another one is refused, not read
    dat.write_bytes(b"another file")
    with pytest.raises(ExplainError, match="not this run's trace"):
        explain_run(csv, 17)


def test_mmrig_explain_prints_a_paragraph_and_json(tmp_path, fixture, capsys) -> None:
    from mmrig.cli import main

    csv = write_normal_run(tmp_path, fixture, None)
    assert main(["explain", str(csv), "17"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("event 17 of fx") and all(len(line) <= 80 for line in out.splitlines())
    assert main(["explain", str(csv.with_suffix(".json")), "17", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [p["key"] for p in doc[0]["parts"]] == ["est_error", "wakeup", "write", "line", "floor"]
    assert main(["explain", str(csv), "late"]) == 0
    assert capsys.readouterr().out.startswith("event 17 of fx (late")
    on_time = write_normal_run(tmp_path / "on-time", fixture, None, outcome="ok")
    assert main(["explain", str(on_time), "late"]) == 1
    assert "no late event" in capsys.readouterr().err
    assert main(["explain", str(csv), "99"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mmrig explain: ") and len(err.strip().splitlines()) == 1
    assert main(["explain", str(tmp_path / "none.csv")]) == 2


def test_a_cpu_whose_ring_begins_after_the_moment_leaves_the_wakeup_unsplit(fixture) -> None:
    # trace-cmd -m keeps each CPU's own last stretch: here CPU 1's (the firing thread's) begins after the moment
    # while CPU 0's reaches back; the split would otherwise blame whatever CPU 0 shows
    row, side = fixture["row"], fixture["sidecar"]
    moment = side["run_clock"]["t0_s"] + row["sent_s"] - row["wakeup_us"] / 1e6
    lines = [ln for ln in (DATA / "report.txt").read_text().splitlines()
             if " [001] " not in ln or float(ln.split(" [001] ")[1].split(":")[0]) > moment + 0.001]
    lines.insert(1, "x:   bash-1 [000] %.9f: sched_switch:         bash:1 [120] S ==> swapper/0:0 [120]"
                 % (moment - 0.005))
    ex = explain_event(row, side, parse_report("\n".join(lines)))
    assert any("no longer held CPU 1" in n for n in ex.notes)
    assert [p.key for p in ex.parts] == ["est_error", "wakeup", "write", "line", "floor"]


def test_only_the_events_windows_are_read(fixture) -> None:
    from mmanalysis.schedtrace import windows_keep

    keep = windows_keep([(5.0, 6.0), (1.0, 2.0), (1.5, 3.0)])
    assert [keep(t) for t in (0.5, 1.0, 2.5, 3.0, 3.5, 5.5, 6.5)] == [False, True, True, True, False, True, False]
    row, side = fixture["row"], fixture["sidecar"]
    [(a, b)] = ex_mod.event_windows([row], side)
    text = (DATA / "report.txt").read_text()
    narrow = parse_report(text, windows_keep([(a + ex_mod.MARGIN_S, b - ex_mod.MARGIN_S)]))
    assert narrow.lines == parse_report(text).lines            # every line seen, for each CPU's first time
    assert sum(len(tl.at) for tl in narrow.cpus.values()) < sum(len(tl.at) for tl in parse_report(text).cpus.values())
    assert explain_event(row, side, parse_report(text, windows_keep([(a, b)]))).largest().detail["comm"] == "mmspinner"


def test_an_event_lost_to_a_fault_of_the_rig_says_which_not_the_systems(fixture) -> None:
    # a SCHEDULE or FIRE the bench's injected delay held back: lost, no latency; the explanation names the fault
    row = dict(fixture["row"], outcome="lost", reason="injected_delay", latency_us=float("nan"))
    sidecar = dict(fixture["sidecar"], faults=[{"kind": "injected_delay", "node": "profiler", "at_s": 1.25,
                                                "detail": "the bench's injected delay on the profiler's input held "
                                                          "back the FIRE of 3 events (up to 12.0 ms)", "events": 3}])
    with pytest.raises(ExplainError) as err:
        explain_event(row, sidecar, None)
    said = str(err.value)
    assert said.startswith(f"event {row['event']} has no latency (lost: injected_delay): nothing to split; a fault of "
                           "the rig, not of the system under test: the bench's injected delay")
    assert "(profiler, 1.25 s into the run)" in said
    with pytest.raises(ExplainError, match=r"\(missed: past_due\): nothing to split$"):
        explain_event(dict(row, outcome="missed", reason="past_due"), sidecar, None)
