"""Many events of one run explained with its host trace read once (mmanalysis.runexplainer), on the recorded
explanation fixture (explain_fixture.py: a synthetic normal run whose event 17 is the recorded planted cause, its
trace handed to whoever reads the run's stand-in trace file)."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

from mmanalysis import runexplainer
from mmanalysis.explain import ExplainError, Explanation
from mmanalysis.runexplainer import WORST, Refused, RunExplainer, one_line

sys.path.insert(0, str(Path(__file__).resolve().parent))
from explain_fixture import EVENT, recorded_event, recorded_trace, write_normal_run, write_traced_normal_run  # noqa: E402


@pytest.fixture(scope="module")
def fixture() -> dict:
    return recorded_event()


@pytest.fixture
def reads(monkeypatch) -> list[Path]:
    """The trace files read (each read gives the recorded trace)."""
    read: list[Path] = []
    trace = recorded_trace()
    monkeypatch.setattr(runexplainer, "read_trace", lambda path, keep: read.append(path) or trace)
    return read


def test_the_worst_are_the_measured_events_by_latency_and_the_trace_is_read_once(tmp_path, fixture, reads) -> None:
    w = RunExplainer.open(write_traced_normal_run(tmp_path, fixture)).worst()
    assert reads == [tmp_path / "fx.host.dat"] and w.trace_note is None
    assert w.measured == 19                   # event 6 missed: no figure
    lats = [i.latency_us for i in w.items]
    assert len(lats) == WORST and lats == sorted(lats, reverse=True)
    all_of_them = RunExplainer.open(write_traced_normal_run(tmp_path, fixture)).worst(50)
    assert len(all_of_them.items) == 19 and EVENT in [i.event for i in all_of_them.items]


def test_one_line_the_largest_part_first_with_its_share_then_the_next_briefly(tmp_path, fixture, reads) -> None:
    ex = RunExplainer.open(write_traced_normal_run(tmp_path, fixture)).explain(EVENT)
    assert isinstance(ex, Explanation)
    line = one_line(ex)
    assert "\n" not in line
    head, rest = line.split("; then ", 1)
    assert head.startswith("event 17 (late, 4448.2 us): mmspinner (pid 3341, rt 90) held CPU 1 4368.3 us (98.2%)")
    nxt = sorted((p for p in ex.parts if p is not ex.largest() and abs(p.us) >= 0.05), key=lambda p: -p.us)
    # the next three by size, each in a few words with its time, then the rest summed
    assert rest.startswith(", ".join(f"{runexplainer.part_label(p)} {p.us:.1f} us" for p in nxt[:3]))
    assert rest.endswith(f"{len(nxt) - 3} more {sum(p.us for p in nxt[3:]):.1f} us")
    assert one_line(ex, run=True).startswith("fx event 17 (late")


def test_a_wakeup_the_trace_does_not_reach_says_why_in_its_line(tmp_path, fixture, reads) -> None:
    rx = RunExplainer.open(write_traced_normal_run(tmp_path, fixture))
    rx.read_trace_for([])
    row = rx.df[rx.df["event"] == EVENT].iloc[0].to_dict()
    line = one_line(rx.explain_row(dict(row, sent_s=row["sent_s"] - 5.0)))    # 5 s before the recorded window
    assert "wake-up (not split) 4393.0 us (98.8%)" in line
    assert line.endswith(" (wake-up not split: the trace's ring no longer held the moment (it begins 4.990 s after "
                         "it))"), line


def test_explaining_one_event_after_another_reads_the_trace_once(tmp_path, fixture, reads) -> None:
    rx = RunExplainer.open(write_traced_normal_run(tmp_path, fixture))
    assert rx.explain(EVENT).largest().detail["comm"] == "mmspinner"
    assert isinstance(rx.explain(3), Explanation)
    assert len(reads) == 1
    with pytest.raises(ExplainError, match="no event 99"):
        rx.explain(99)


def test_without_a_host_trace_the_run_says_so_once_and_no_line_repeats_it(tmp_path, fixture, reads) -> None:
    w = RunExplainer.open(write_normal_run(tmp_path, fixture, None)).worst(50)
    assert reads == [] and "no host trace" in (w.trace_note or "") and "--trace-host" in w.trace_note
    line = one_line(next(i for i in w.items if i.event == EVENT))
    assert line.startswith("event 17 (late, 4448.2 us): wake-up (not split) 4393.0 us (98.8%); then ")
    assert "trace" not in line


def test_a_trace_that_is_not_the_runs_is_said_once_and_the_budget_explained(tmp_path, fixture, reads) -> None:
    csv = write_traced_normal_run(tmp_path, fixture)
    (tmp_path / "fx.host.dat").write_bytes(b"another file")
    rx = RunExplainer.open(csv)
    ex = rx.explain(EVENT)
    assert reads == [] and "could not be read" in (rx.trace_note or "") and "not this run's trace" in rx.trace_note
    assert [p.key for p in ex.parts] == ["est_error", "wakeup", "write", "line", "floor"]
    # the event's own note no longer tells a traced run to use --trace-host: the run's reason instead
    assert rx.trace_note in ex.notes and not any("--trace-host)" in n for n in ex.notes)


def test_an_event_without_a_latency_is_refused_with_its_reason(tmp_path, fixture) -> None:
    rx = RunExplainer.open(write_normal_run(tmp_path, fixture, None))
    missed = rx.explain(6)
    assert isinstance(missed, Refused) and one_line(missed).startswith("event 6 (missed): not explained: event 6 has "
                                                                       "no latency")


EXEC_TRACE = Path(__file__).parent / "data" / "explain-exec.exectrace"   # test_explainexec.py's hand-made trace


def mixed_run(tmp_path: Path, with_trace: bool) -> RunExplainer:
    """A mixed run of two events the hand-made executor trace holds, its trace beside it (a run with --trace) or not."""
    rows = [{"event": 0, "mode": "mixed", "scheduled_tc": 1, "event_id": 1, "due_counts": 0, "result_tc": 1,
             "latency_counts": 1553, "latency_us": 1553 / 16, "outcome": "ok", "created_tc": -1,
             "created_phase": 0.25, "sent_s": 1.5, "ack_tc": -1, "ack_phase": 0.5, "slack_ticks": 1.5,
             "measurable": True, "in_stats": True}]
    if with_trace:
        (tmp_path / "m.exectrace").write_bytes(EXEC_TRACE.read_bytes())
    meta = {"_csv": str(tmp_path / "m.csv"), "timebase": {"timer_hz": 16_000_000, "tick_counts": 1_137_778},
            "executor_profile": {"files": {"exectrace": "m.exectrace"}}}
    return RunExplainer(pd.DataFrame(rows), meta, "m")


def test_a_mixed_event_is_explained_from_the_executors_trace_beside_the_run(tmp_path) -> None:
    worst = mixed_run(tmp_path, with_trace=True).worst()
    [ex] = worst.items
    assert not isinstance(ex, Refused) and worst.trace_note is None
    assert ex.largest().key == "exec.task" and ex.largest().detail["task"] == "load_periodic"
    assert any(n.startswith("from the run's own executor trace (m.exectrace)") for n in ex.notes)
    assert one_line(ex).startswith("event 0 (ok, 97.1 us): ")


def test_a_mixed_run_without_an_executor_trace_says_so_once_and_lists_its_events(tmp_path) -> None:
    worst = mixed_run(tmp_path, with_trace=False).worst()
    [item] = worst.items
    assert isinstance(item, Refused) and "no executor trace on disk holds it" in item.why
    assert "mmrig explain RUN worst" in (worst.trace_note or "")


def test_an_unreadable_run_is_one_line(tmp_path) -> None:
    with pytest.raises(ExplainError, match="cannot read the run"):
        RunExplainer.open(tmp_path / "none.csv")
