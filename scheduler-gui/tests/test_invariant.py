"""The accounting invariant (mmsched.verdict.invariant): every event created ends in exactly one row, and each kind of
violation is caught."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mmsched.verdict.invariant import InvariantViolation, check_invariant
from mmsched.verdict.stats import summarize

sys.path.insert(0, str(Path(__file__).parent))
from fake_events import ev, finished  # noqa: E402


def test_invariant_catches_every_kind_of_violation() -> None:
    evs = finished(4)
    check_invariant(evs, 4, summarize(evs))
    with pytest.raises(InvariantViolation, match="created"):
        check_invariant(evs, 5)
    open_ = finished(3) + [ev(3)]
    with pytest.raises(InvariantViolation, match="no terminal outcome"):
        check_invariant(open_, 4)
    bad = finished(2)
    bad[1].reason = "timeout"
    with pytest.raises(InvariantViolation, match="reason"):
        check_invariant(bad, 2)
    dup = finished(2)
    dup[1].event = 0
    with pytest.raises(InvariantViolation, match="creation order"):
        check_invariant(dup, 2)
