"""An event's outcome from its RESULT or its refusal (mmsched.verdict.outcome): ok, late, early, refused, silent."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import mmproto as mp
from mmsched.verdict.outcome import apply_result, refusal_reason, silent_outcome

sys.path.insert(0, str(Path(__file__).parent))
from fake_events import TB, ev  # noqa: E402


def test_outcome_rules() -> None:
    e = ev(0, tc=10)
    apply_result(e, mp.Result(0, 0, 0, 10, 22), TB, 1000.0)
    assert (e.outcome, e.reason, e.latency_counts, e.latency_us) == ("ok", None, 22, 1.375)
    late = ev(1, tc=10)
    apply_result(late, mp.Result(0, 0, 0, 10, 16_000), TB, 1000.0)      # exactly 1 ms: late
    assert (late.outcome, late.reason) == ("late", "late")
    early = ev(2, tc=10)
    apply_result(early, mp.Result(0, 0, 0, 9, 1_137_000), TB, 1000.0)
    assert (early.outcome, early.reason) == ("early", "early") and early.latency_counts == -778
    assert refusal_reason(mp.ErrorCode.PAST_DUE) == "past_due" and refusal_reason(mp.ErrorCode.LIST_FULL) == "list_full"
    assert silent_outcome(0) == ("missed", "timeout") and silent_outcome(2) == ("lost", "seq_gap")
    with pytest.raises(AssertionError):
        e.finish("missed", "timeout")                                      # one terminal outcome only
