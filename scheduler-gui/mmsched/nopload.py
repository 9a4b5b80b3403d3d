"""The executor load's `rx` part as the run sends it (exload.py): NOP frames to the executor at the rate asked,
which it decodes and drops: receive interrupts and serial-task work on the line the SCHEDULE frames share."""

from __future__ import annotations

import mmproto as mp

from .runface import RunFace


def send_due_nop(r: RunFace, now: float) -> None:
    """A NOP to the executor every 1/N s (--executor-load rx=N) while events are made. After a stall of the run,
    one NOP, no burst."""
    st, rate = r.state, r.cfg.executor_load.rx_per_s
    assert st is not None
    if not rate or now < st.next_nop_at or not r.session.has("executor"):
        return
    r.session.send("executor", mp.Nop(fill=0))
    r.count("nops_sent")
    st.next_nop_at += 1.0 / rate
    if st.next_nop_at < now:
        st.next_nop_at = now + 1.0 / rate
