"""A mixed event's latency split by the executor's trace (mmanalysis.explainexec), on a hand-made trace whose every
part is known (data/explain-exec.exectrace, 16 cycles a microsecond):

- tick 1 (edge at 1600): the periodic load task (above the timecode task) runs with interrupts masked from 1500 to
  1640 (an M record); PCINT2 is taken at 1644 and returns to it at 1944; it runs until the kernel switches to the
  timecode task at 3000 (a task's yield: no RETI), which drives the event edge (id 1) at 3152;
- tick 2 (edge at 17600): the core asleep, woken at 17604 by PCINT2, which switches to the timecode task at 17700
  and RETIs into it at 17760 (its context's restore); the edge (id 0) at 17790."""

from __future__ import annotations

from pathlib import Path

import pytest

from mmanalysis import exectrace as et
from mmanalysis.explain import ExplainError, format_explanation
from mmanalysis.explainexec import explain_exec_event, trace_holds

TRACE = Path(__file__).parent / "data" / "explain-exec.exectrace"
SIDECAR = {"timebase": {"timer_hz": 16_000_000, "tick_counts": 1_137_778}}


def row(event: int, tick: int, event_id: int, counts: int, **more) -> dict:
    return {"event": event, "mode": "mixed", "scheduled_tc": tick, "event_id": event_id, "due_counts": 0,
            "result_tc": tick, "latency_counts": counts, "latency_us": counts / 16, "outcome": "ok",
            "created_tc": tick - 2, "created_phase": 0.25, "sent_s": 1.5, "ack_tc": tick - 2, "ack_phase": 0.5,
            "slack_ticks": 1.5, **more}


@pytest.fixture()
def trace() -> et.ExecTrace:
    return et.read(TRACE)


def test_the_masked_span_is_read(trace: et.ExecTrace) -> None:
    assert trace.masked == [et.Masked(1500, 1640, 0x1000, "load_periodic_task", 0x1020, "load_periodic_task")]
    assert trace.skipped == 0


def test_a_load_task_and_a_critical_section_each_in_the_order_the_event_met_them(trace: et.ExecTrace) -> None:
    ex = explain_exec_event(row(0, 1, 1, 1553), SIDECAR, trace, run="hand")
    got = [(p.key, p.detail.get("cycles"), round(p.us, 4)) for p in ex.parts]
    assert got == [("exec.entry.masked", 40, 2.5), ("exec.entry.insn", 4, 0.25), ("exec.dispatch_isr", 300, 18.75),
                   ("exec.task", 1056, 66.0), ("exec.tc", 152, 9.5), ("exec.profiler", None, 0.0625)]
    masked = ex.parts[0]
    assert masked.detail["function"] == "load_periodic_task" and masked.detail["pc_from"] == "0x01000"
    assert masked.detail["task"] == "load_periodic" and masked.detail["masked_us"] == 8.75
    assert ex.largest().key == "exec.task" and ex.largest().detail["task"] == "load_periodic"
    assert sum(p.us for p in ex.parts) == pytest.approx(ex.latency_us, abs=1e-9)
    text = " ".join(format_explanation(ex).split())
    assert "largest: task load_periodic ran first" in text and "load_periodic_task 0x01000..0x01020" in text
    assert "Its SCHEDULE: made in tick -1" in text and "1.500 ticks before its tick began (slack)" in text


def test_an_asleep_core_and_the_kernels_switch_inside_the_interrupt(trace: et.ExecTrace) -> None:
    ex = explain_exec_event(row(1, 2, 0, 190), SIDECAR, trace)
    assert [(p.key, p.detail.get("cycles")) for p in ex.parts] == [
        ("exec.entry.asleep", 4), ("exec.dispatch_isr", 96), ("exec.switch", 60), ("exec.tc", 30)]
    assert sum(p.us for p in ex.parts) == pytest.approx(190 / 16)


def test_what_the_trace_cannot_give_is_unknown_never_guessed(trace: et.ExecTrace) -> None:
    ex = explain_exec_event(row(0, 1, 1, 1553), SIDECAR, None)
    assert [(p.key, p.us) for p in ex.parts] == [("unknown", 1553 / 16)]
    with pytest.raises(ExplainError, match="no edge of tick 9"):
        explain_exec_event(row(2, 9, 1, 600), SIDECAR, trace)
    with pytest.raises(ExplainError, match="no event edge with id 5"):
        explain_exec_event(row(2, 1, 5, 600), SIDECAR, trace)
    assert trace_holds(trace, [row(0, 1, 1, 1553), row(1, 2, 0, 190)])
    assert not trace_holds(trace, [row(2, 9, 1, 600)])


def test_normal_mode_and_events_without_a_latency_are_not_its_to_explain(trace: et.ExecTrace) -> None:
    with pytest.raises(ExplainError, match="normal-mode event"):
        explain_exec_event(row(0, 1, 1, 1553, mode="normal"), SIDECAR, trace)
    with pytest.raises(ExplainError, match="no latency"):
        explain_exec_event(row(0, 1, 1, 1553, latency_us=None, outcome="missed"), SIDECAR, trace)
