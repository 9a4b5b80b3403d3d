"""Outcome rules (docs/data-format.md, SPEC.md section 7): a RESULT joined to an event makes it ok,
late or early; a refusal or silence makes it missed; a loss we can see makes it lost."""

from __future__ import annotations

from mmproto import ErrorCode, Result, TimeBase

from ..model.event import Event

REFUSAL_REASONS = {ErrorCode.PAST_DUE: "past_due", ErrorCode.DUPLICATE: "duplicate",
                   ErrorCode.LIST_FULL: "list_full", ErrorCode.BAD_VALUE: "bad_value",
                   ErrorCode.BAD_MODE: "bad_value"}


def apply_result(event: Event, result: Result, timebase: TimeBase, late_bound_us: float) -> None:
    """Fills the RESULT columns and ends the event ok / late / early."""
    counts = timebase.latency_counts(event.scheduled_tc, result, event.due_counts)
    event.result_tc = result.timecode
    event.result_counts = result.counts
    event.latency_counts = counts
    event.latency_us = timebase.counts_to_us(counts)
    if counts < 0:
        event.finish("early", "early")
    elif event.latency_us >= late_bound_us:
        event.finish("late", "late")
    else:
        event.finish("ok", None)


def refusal_reason(code: int) -> str:
    try:
        return REFUSAL_REASONS[ErrorCode(code)]
    except (ValueError, KeyError):
        return "bad_value"


def silent_outcome(frames_lost_since_creation: int, answered: bool = True, loss_reports_since_creation: int = 0
                   ) -> tuple[str, str]:
    """An event whose deadline passed with no RESULT: lost if a frame that could have told us was lost (a
    sequence gap since the event was created), lost if the profiler reported results it lost since then
    (losses.py: a RESULT's lost-before flag, or its COUNTERS), lost if the node never answered the request
    that made it (a SCHEDULE with no ACK or ERROR: the request or its answer was lost on the line, so the
    event was never shown to be in the executor's hands), else missed."""
    if frames_lost_since_creation > 0:
        return "lost", "seq_gap"
    if loss_reports_since_creation > 0:
        return "lost", "result_lost"
    if not answered:
        return "lost", "no_answer"
    return "missed", "timeout"
