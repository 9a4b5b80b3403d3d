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


LATE_STAMP = """# mmbench executor trace 1
# cpu_hz 16000000
# node executor
T 0100 tcb_tc
T 0200 xIdleTaskTCB.2692
V 11 PCINT2
V 17 TIMER1_COMPC
B 0
S 0 0200
Z 0 1
""" + "".join(f"L 0 timecode{b} 0\n" for b in range(8)) + """L 0 event_id0 0
L 0 event_id1 0
L 0 event_id2 0
L 0 strobe 0
Z 1590 0
I 1590 17
W 1600 timecode0 1
R 2206 17
I 2206 11
R 2300 11
Z 2300 1
Z 10206 0
I 10206 17
W 10298 event_id0 1
W 10300 strobe 1
R 10320 17
Z 10320 1
E 12000
"""


def test_a_moment_whose_tick_edge_was_stamped_late_is_late_by_the_stamp_not_the_wake_up(tmp_path: Path) -> None:
    """A moment 500 us into tick 1 (8,000 cycles): the previous moment's compare handler (TIMER1_COMPC, 38.5 us)
    ran over the tick's edge at 1600, PCINT2 was taken 606 cycles late, and the executor placed the moment from
    that stamp: its compare fired 606 cycles after the moment, the core asleep all the while. The wait is the late
    stamp's, named with what held PCINT2 off, not the core's wake-up."""
    path = tmp_path / "late-stamp.exectrace"
    path.write_text(LATE_STAMP)
    tr = et.read(path)
    ex = explain_exec_event(row(0, 1, 1, 701, due_counts=8000), SIDECAR, tr)
    assert [(p.key, p.detail.get("cycles")) for p in ex.parts] == [
        ("exec.entry.late_stamp", 606), ("exec.dispatch_isr", 94), ("exec.profiler", None)]
    late = ex.parts[0]
    assert late.detail["stamp_late_us"] == 37.875 and "interrupt TIMER1_COMPC's handler held PCINT2 off" in late.words
    assert ex.largest().key == "exec.entry.late_stamp"
    assert sum(p.us for p in ex.parts) == pytest.approx(701 / 16)
    # the tick's edge taken at once: the same wait is the core's (a compare cannot be early by its stamp)
    prompt = LATE_STAMP.replace("Z 1590 0\nI 1590 17\nW 1600 timecode0 1\nR 2206 17\nI 2206 11\nR 2300 11\n"
                                "Z 2300 1\n",
                                "W 1600 timecode0 1\nZ 1604 0\nI 1604 11\nR 1700 11\nZ 1700 1\n")
    assert prompt != LATE_STAMP
    path.write_text(prompt)
    ex = explain_exec_event(row(0, 1, 1, 701, due_counts=8000), SIDECAR, et.read(path))
    assert [p.key for p in ex.parts][:2] == ["exec.entry.asleep", "exec.dispatch_isr"]


def test_a_late_stamp_stretches_the_ticks_length_too_and_its_later_moments_are_later_still(tmp_path: Path) -> None:
    """Tick 1's edge (1600) taken at once, tick 2's (115,377, a tick of 113,777 cycles later) 606 cycles late: the
    executor measures tick 2 longer by 602 cycles, so a moment 100,000 cycles (0.879 of it) into tick 2 is placed
    606 + 529 cycles late."""
    head, _, _ = LATE_STAMP.partition("Z 1590 0\n")
    path = tmp_path / "stretched.exectrace"
    path.write_text(head + """W 1600 timecode0 1
Z 1604 0
I 1604 11
R 1700 11
Z 1700 1
Z 115367 0
I 115367 17
W 115377 timecode0 0
W 115377 timecode1 1
R 115983 17
I 115983 11
R 116077 11
Z 116077 1
Z 216512 0
I 216512 17
W 216604 event_id0 1
W 216606 strobe 1
R 216626 17
Z 216626 1
E 230000
""")
    ex = explain_exec_event(row(0, 2, 1, 1230, due_counts=100_000), SIDECAR, et.read(path))
    assert [(p.key, p.detail.get("cycles")) for p in ex.parts] == [
        ("exec.entry.late_stamp", 606 + 529), ("exec.dispatch_isr", 94), ("exec.profiler", None)]
    assert ex.parts[0].detail["stamp_late_us"] == 37.875 and "33.062 us more (70.938 us in all)" in ex.parts[0].words
