"""A profiler's HELLO is checked for sense before a run builds its clock on it: a zero or absurd
timer rate, tick or baud is a clear setup error naming the field, never a ZeroDivisionError."""

from __future__ import annotations

import dataclasses

import pytest

import mmproto as mp
from mmsched.model.config import RunConfig
from mmsched.run.runstate import BadHello, RunState

GOOD = mp.Hello(proto_version=mp.PROTO_VERSION, node_kind=mp.NodeKind.PROFILER, fw_version=256, cpu_hz=16_000_000,
                timer_hz=16_000_000, tick_counts=1_137_778, baud=9600, flags=0, reset_cause=0)


def test_a_sane_hello_builds_the_run_state() -> None:
    st = RunState.after_handshake(RunConfig(), GOOD, 0.0)
    assert st.timebase.tick_s == pytest.approx(0.0711, rel=1e-3)


@pytest.mark.parametrize("field,value", [("timer_hz", 0), ("tick_counts", 0), ("baud", 0), ("cpu_hz", 0),
                                         ("timer_hz", 10), ("baud", 50_000_000), ("tick_counts", 1)])
def test_nonsense_is_refused_naming_the_field(field: str, value: int) -> None:
    bad = dataclasses.replace(GOOD, **{field: value})
    with pytest.raises(BadHello, match=field) as exc:
        RunState.after_handshake(RunConfig(), bad, 0.0)
    assert exc.value.code == "bad_hello"
