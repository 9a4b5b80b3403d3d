"""The Rig on a lockstep bench: a HIL script steps virtual time by waiting for frames, so its figures are
the firmware's whatever the host is doing."""

from __future__ import annotations

from pathlib import Path

import mmproto as mp
from mmhil import Bench, Rig


def one_event_two_ahead(rig: Rig) -> tuple[float, float]:
    tb = rig.time_base()
    rig.send("executor", mp.Mode(mode=mp.ExecutorMode.MIXED, dispatch=mp.Dispatch.ISR, distance=0, period=0,
                                 random_ids=0))
    rig.wait_for("executor", mp.Status)
    rig.drain("profiler")
    _, now = rig.wait_for("profiler", mp.Timecode)
    target = now.timecode + 2
    rig.send("executor", mp.Schedule(tag=1, event_id=5, timecode=target))
    _, result = rig.wait_for("profiler", mp.Result, timeout=1.0)
    return tb.counts_to_us(tb.latency_counts(target, result)), rig.now()


def test_a_hil_script_steps_time_and_gets_the_same_answer_twice(tmp_path: Path) -> None:
    answers = []
    for k in range(2):
        with Bench(run_dir=tmp_path / f"run{k}", lockstep=True) as bench, Rig.on_bench(bench) as rig:
            assert rig.stepper is not None and rig.hellos["profiler"].node_kind == mp.NodeKind.PROFILER
            answers.append(one_event_two_ahead(rig))
            before = rig.now()
            rig.advance(0.5)
            assert 0.5 <= rig.now() - before < 0.5001
    (lat0, t0), (lat1, t1) = answers
    assert lat0 == lat1 == 1.375          # 22 cycles of ISR dispatch, on the simulated clock
    assert t0 == t1                       # the same virtual moment: nothing depended on the host
