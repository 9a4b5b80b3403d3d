"""The executor load's `rx` part as the run sends it (exload.py): NOP frames to the executor at the rate asked,
which it decodes and drops: receive interrupts and serial-task work on the line the SCHEDULE frames share."""

from __future__ import annotations

import mmproto as mp

from .runstate import RunState
from ..link.session import Session
from ..model.tally import Tally


def send_due_nop(st: RunState, rate: float, session: Session, tally: Tally, now: float) -> None:
    """A NOP to the executor every 1/`rate` s (--executor-load rx=N) while events are made; when it is sent is
    the run state's `next_nop_at`. After a stall of the run, one NOP, no burst."""
    if not rate or now < st.next_nop_at or not session.has("executor"):
        return
    session.send("executor", mp.Nop(fill=0))
    tally.count("nops_sent")
    st.next_nop_at += 1.0 / rate
    if st.next_nop_at < now:
        st.next_nop_at = now + 1.0 / rate
